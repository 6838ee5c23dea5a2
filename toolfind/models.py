"""The data toolfind works with: frozen dataclasses, no I/O, no third-party imports.

The classes are ``@dataclass(frozen=True, slots=True)`` in every observable way, declared with
:func:`_frozen_dataclass` so as not to import :mod:`dataclasses` (which compiles its methods
from source on each import): each class writes its ``__init__`` out, compiled into the ``.pyc``.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Iterator, Mapping
from operator import attrgetter

from toolfind.shapes import ANNOTATION_TAGS as ANNOTATION_TAGS
from toolfind.shapes import all_tags

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal, TypeVar, dataclass_transform

    Severity = Literal["error", "warning"]
    MatchKind = Literal["exact", "ranked"]
    _T = TypeVar("_T")
else:  # typing costs more to import than this whole module: only the type checker reads it

    def dataclass_transform(**_options: object) -> Any:
        return lambda decorator: decorator


#: The searchable fields of a tool, in a fixed order (indexes, weights and JSON use it).
FIELDS: tuple[str, ...] = ("name", "namespace", "description", "params", "tags", "search_hint")


#: Assigns a field in ``__init__`` despite the frozen ``__setattr__``, as dataclasses does.
_set = object.__setattr__


class _Factory:
    """The default of an ``__init__`` parameter whose field has a ``default_factory``: "not
    given, call ``make``" (never one mutable default shared by every instance)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def __repr__(self) -> str:
        return "<factory>"  # how dataclasses shows such a default in the signature


def _field(*, compare: bool = True, repr: bool = True) -> Any:
    """``dataclasses.field`` for a :func:`_frozen_dataclass` (the options the models use)."""
    return {"compare": compare, "repr": repr}


def _defaults(model: Any, specs: Mapping[str, Any]) -> None:
    """Give ``model`` the default of each field of ``specs`` (fields added to its class since
    it was pickled)."""
    for name, spec in specs.items():
        if "default" in spec:
            default = spec["default"]
            _set(model, name, default.make() if isinstance(default, _Factory) else default)


@dataclass_transform(frozen_default=True, field_specifiers=(_field,))
def _frozen_dataclass(cls: type[_T]) -> type[_T]:
    """``@dataclass(frozen=True, slots=True)`` for a class that writes its own ``__init__``
    (the fields in order with their defaults, a :class:`_Factory` for a ``default_factory``):
    the defaults are read from that ``__init__``, the other options from a field's ``_field``.
    Every model compares and hashes two fields or more, so ``attrgetter`` gives their tuple.
    """
    own = cls.__dict__
    names = tuple(own["__annotations__"])
    defaults = own["__init__"].__defaults__ or ()
    specs = {name: own.get(name) or _field() for name in names}
    for name, default in zip(names[len(names) - len(defaults) :], defaults, strict=True):
        specs[name]["default"] = default
    body = {k: v for k, v in own.items() if k not in specs and k not in ("__dict__", "__weakref__")}
    body["__slots__"] = names
    metaclass: Any = type(cls)
    new: Any = metaclass(cls.__name__, cls.__bases__, body)
    new.__qualname__ = cls.__qualname__
    compared = attrgetter(*[n for n, s in specs.items() if s["compare"]])  # and hashed
    shown = tuple(n for n, s in specs.items() if s["repr"])
    fixed = frozenset(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    def __hash__(self: Any) -> int:
        return hash(compared(self))

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        values = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({values})"

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is new or name in fixed:
            raise _frozen(f"cannot assign to field {name!r}")
        super(new, self).__setattr__(name, value)  # a subclass's own slot

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is new or name in fixed:
            raise _frozen(f"cannot delete field {name!r}")
        super(new, self).__delattr__(name)

    def __getstate__(self: Any) -> list[Any]:
        return [getattr(self, name) for name in names]

    def __setstate__(self: Any, state: list[Any]) -> None:
        for name, value in zip(names, state, strict=False):  # as dataclasses does
            _set(self, name, value)
        _defaults(self, {name: specs[name] for name in names[len(state) :]})

    methods = (__eq__, __hash__, __repr__, __setattr__, __delattr__, __getstate__, __setstate__)
    for method in methods:
        method.__qualname__ = f"{new.__qualname__}.{method.__name__}"
        setattr(new, method.__name__, method)
    type.__setattr__(new, "__match_args__", names)
    new.__dataclass_fields__ = _DataclassInfo(new, specs, "__dataclass_fields__")
    new.__dataclass_params__ = _DataclassInfo(new, specs, "__dataclass_params__")
    made: type[_T] = new
    return made


def _frozen(message: str) -> Exception:
    """``dataclasses.FrozenInstanceError(message)`` (the module is imported on this error only)."""
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)


class _DataclassInfo:
    """``__dataclass_fields__`` and ``__dataclass_params__``, made by :mod:`dataclasses` from a
    stand-in class on first access, then stored on the class in place of this descriptor."""

    def __init__(self, cls: type, specs: dict[str, dict[str, Any]], name: str) -> None:
        self.cls = cls
        self.specs = specs
        self.name = name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        import dataclasses

        cls = self.cls
        body: dict[str, Any] = {
            "__annotations__": cls.__dict__["__annotations__"],
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
        }
        for name, spec in self.specs.items():
            options = dict(spec)
            if type(options.get("default")) is _Factory:
                options["default_factory"] = options.pop("default").make
            body[name] = dataclasses.field(**options)
        stand_in: Any = dataclasses.dataclass(frozen=True, init=False, repr=False, eq=False)(
            type(cls.__name__, (), body)
        )
        type.__setattr__(cls, "__dataclass_fields__", stand_in.__dataclass_fields__)
        type.__setattr__(cls, "__dataclass_params__", stand_in.__dataclass_params__)
        return getattr(cls, self.name)


def _empty_schema() -> dict[str, Any]:
    """A tool's parameters when its catalog gives none: an object schema without properties."""
    return {"type": "object", "properties": {}}


_EMPTY_SCHEMA: Any = _Factory(_empty_schema)
_NEW_DICT: Any = _Factory(dict)
_DEFAULT_B: tuple[tuple[str, float], ...] = (("tags", 0.25),)


def qualified_name(namespace: str, name: str) -> str:
    """``namespace/name``, or the bare name when there is no namespace."""
    return f"{namespace}/{name}" if namespace else name


@_frozen_dataclass
class Source:
    """Where a tool came from: the catalog file and the JSON pointer of its entry."""

    file: str
    pointer: str
    line: int | None

    def __init__(self, file: str, pointer: str = "", line: int | None = None) -> None:
        _set(self, "file", file)
        _set(self, "pointer", pointer)
        _set(self, "line", line)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}#{self.pointer}" if self.pointer else where


#: Abbreviations whose period never ends a sentence, lower-cased, without their last period.
_ABBREVIATIONS = frozenset("e.g eg i.e ie vs cf approx incl esp viz et al".split())


def first_sentence(text: str) -> str:
    """The first sentence of ``text``'s first line: up to the first period followed by a
    space that ends a sentence. A period does not end one after an abbreviation (``e.g.``,
    ``i.e.``, ``vs.``) or before a lower-case word
    (``etc. and``); one inside a word or number (``v1.2``, ``3.5``, ``.tar.gz``) is never
    followed by a space."""
    line = text.strip().split("\n", 1)[0].strip()
    at = line.find(". ")
    while at >= 0:
        if not line[at + 2 : at + 3].islower():
            # The word before the period (abbreviations are short: look 8 characters back).
            word = line[max(0, at - 8) : at].rpartition(" ")[2].lstrip("([{\"'").lower()
            if word not in _ABBREVIATIONS:
                return line[: at + 1]
        at = line.find(". ", at + 2)
    return line


@_frozen_dataclass
class Tool:
    """One tool, whatever format it was written in.

    ``parameters`` is a JSON Schema object. ``tags`` are the tags the catalog gave it;
    ``all_tags`` adds the tags its MCP annotations imply. ``original`` is the entry exactly
    as read, kept so a tool can be written back out without losing unknown keys.
    """

    name: str
    description: str
    parameters: Mapping[str, Any]
    namespace: str
    tags: tuple[str, ...]
    search_hint: str
    defer: bool
    enabled: bool
    annotations: Mapping[str, Any]
    aliases: tuple[str, ...]
    title: str | None
    output_schema: Mapping[str, Any] | None
    source: Source | None = _field(compare=False)
    original: Mapping[str, Any] | None = _field(compare=False, repr=False)

    def __init__(
        self,
        name: str,
        description: str = "",
        parameters: Mapping[str, Any] = _EMPTY_SCHEMA,
        namespace: str = "",
        tags: tuple[str, ...] = (),
        search_hint: str = "",
        defer: bool = False,
        enabled: bool = True,
        annotations: Mapping[str, Any] = _NEW_DICT,
        aliases: tuple[str, ...] = (),
        title: str | None = None,
        output_schema: Mapping[str, Any] | None = None,
        source: Source | None = None,
        original: Mapping[str, Any] | None = None,
    ) -> None:
        _set(self, "name", name)
        _set(self, "description", description)
        _set(self, "parameters", _empty_schema() if parameters is _EMPTY_SCHEMA else parameters)
        _set(self, "namespace", namespace)
        _set(self, "tags", tags)
        _set(self, "search_hint", search_hint)
        _set(self, "defer", defer)
        _set(self, "enabled", enabled)
        _set(self, "annotations", {} if annotations is _NEW_DICT else annotations)
        _set(self, "aliases", aliases)
        _set(self, "title", title)
        _set(self, "output_schema", output_schema)
        _set(self, "source", source)
        _set(self, "original", original)

    @property
    def all_tags(self) -> tuple[str, ...]:
        """The catalog's tags then the annotation tags, without repeats, in order."""
        return all_tags(self.tags, self.annotations)

    @property
    def qualified_name(self) -> str:
        """``namespace/name``, or the bare name when the tool has no namespace."""
        return qualified_name(self.namespace, self.name)

    @property
    def summary(self) -> str:
        """The first sentence of the description's first line (:func:`first_sentence`)."""
        return first_sentence(self.description)


@_frozen_dataclass
class FieldWeights:
    """BM25F weight of each field (a tool's term frequency in a field is multiplied by it).

    Its fields are :data:`FIELDS`, in that order."""

    # Chosen by coordinate ascent on seal-tools dev, metatool and mcp-open together
    # (benchmarks/tune_open.py; docs/ranking.md, "How the defaults were chosen").
    name: float
    namespace: float
    description: float
    params: float
    tags: float
    search_hint: float

    def __init__(
        self,
        name: float = 2.0,
        namespace: float = 2.0,
        description: float = 1.0,
        params: float = 0.5,
        tags: float = 0.25,
        search_hint: float = 1.0,
    ) -> None:
        _set(self, "name", name)
        _set(self, "namespace", namespace)
        _set(self, "description", description)
        _set(self, "params", params)
        _set(self, "tags", tags)
        _set(self, "search_hint", search_hint)

    def as_dict(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in FIELDS}

    def with_overrides(self, overrides: Mapping[str, float]) -> FieldWeights:
        """A copy with some weights replaced. Raises ``KeyError`` naming an unknown field."""
        for key in overrides:
            if key not in FIELDS:
                raise KeyError(key)
        values = {name: getattr(self, name) for name in FIELDS}
        return FieldWeights(**(values | {k: float(v) for k, v in overrides.items()}))


_NEW_WEIGHTS: Any = _Factory(FieldWeights)


@_frozen_dataclass
class ScoringParams:
    """Everything that changes scores but not the analysed index: weights, k1, b, delta.

    ``b`` maps a field to its length-normalisation strength; fields not in it use
    ``default_b``.
    """

    weights: FieldWeights
    k1: float
    default_b: float
    b: tuple[tuple[str, float], ...]
    delta: float
    #: The user's synonym groups (``[synonyms]`` in toolfind.toml), beside the shipped table.
    synonyms: tuple[tuple[str, ...], ...]
    #: Namespaces whose tools are all deferred (``defer_namespaces`` in toolfind.toml).
    deferred: tuple[str, ...]

    def __init__(
        self,
        weights: FieldWeights = _NEW_WEIGHTS,
        k1: float = 3.0,
        default_b: float = 0.75,
        b: tuple[tuple[str, float], ...] = _DEFAULT_B,
        delta: float = 0.5,
        synonyms: tuple[tuple[str, ...], ...] = (),
        deferred: tuple[str, ...] = (),
    ) -> None:
        _set(self, "weights", FieldWeights() if weights is _NEW_WEIGHTS else weights)
        _set(self, "k1", k1)
        _set(self, "default_b", default_b)
        _set(self, "b", b)
        _set(self, "delta", delta)
        _set(self, "synonyms", synonyms)
        _set(self, "deferred", deferred)

    def b_for(self, field_name: str) -> float:
        return dict(self.b).get(field_name, self.default_b)

    def fingerprint(self) -> str:
        """A stable text naming these settings, part of the cache key."""
        w = ",".join(f"{k}={v!r}" for k, v in self.weights.as_dict().items())
        bs = ",".join(f"{k}={self.b_for(k)!r}" for k in FIELDS)
        text = f"w[{w}] k1={self.k1!r} b[{bs}] delta={self.delta!r}"
        if self.synonyms:
            text += f" synonyms={self.synonyms!r}"
        if self.deferred:
            text += f" deferred={self.deferred!r}"
        return text


#: The default weights and depth of the signals beyond BM25F (:class:`Signals`), chosen on the
#: open labelled sets (docs/SEMANTIC.md).
SEMANTIC_WEIGHT = 0.3
RERANK_WEIGHT = 0.4
RERANK_DEPTH = 50
#: The largest ``rerank_depth``: each candidate is embedded once, so a deeper stage costs
#: more only while vectors are missing.
MAX_RERANK_DEPTH = 1000


@_frozen_dataclass
class Signals:
    """The ranking signals beyond BM25F and their settings: one value from the settings
    (``config.for_run``, where they are bounded) to the index (``store.run``).

    A switch (``semantic``, ``rerank``) is True (on; an error when what it needs is
    missing), False (off) or None (on where it is installed: see ``config.wanted``).
    ``semantic_weight`` is the fusion weight of the semantic signal (0..1); the reranker
    re-scores the first stage's top ``rerank_depth`` candidates (1..1000) at
    ``rerank_weight`` (0..1). ``learn`` adds what toolfind learned from use (``store.learned``):
    it needs nothing installed, so it is on (True, the default) or off. A new signal adds its
    switch and settings here."""

    semantic: bool | None
    semantic_weight: float
    rerank: bool | None
    rerank_weight: float
    rerank_depth: int
    learn: bool

    def __init__(
        self,
        semantic: bool | None = None,
        semantic_weight: float = SEMANTIC_WEIGHT,
        rerank: bool | None = None,
        rerank_weight: float = RERANK_WEIGHT,
        rerank_depth: int = RERANK_DEPTH,
        learn: bool = True,
    ) -> None:
        _set(self, "semantic", semantic)
        _set(self, "semantic_weight", semantic_weight)
        _set(self, "rerank", rerank)
        _set(self, "rerank_weight", rerank_weight)
        _set(self, "rerank_depth", rerank_depth)
        _set(self, "learn", learn)

    def settings(self) -> dict[str, Any]:
        """Every setting by name (the keys of ``toolfind.toml``)."""
        return {name: getattr(self, name) for name in SIGNAL_SETTINGS}

    def changed(self, **settings: Any) -> Signals:
        """A copy with ``settings`` (names of :meth:`settings`) changed."""
        return Signals(**(self.settings() | settings))


#: The names of :class:`Signals`' settings, in order (the keys of ``toolfind.toml``).
SIGNAL_SETTINGS: tuple[str, ...] = tuple(Signals.__annotations__)
#: The switches among them.
SIGNAL_SWITCHES = ("semantic", "rerank")
#: Signals with every switch off: BM25F alone (``eval`` and ``tune`` judge the words, never
#: what was learned from the very requests they may be judging).
LEXICAL = Signals(semantic=False, rerank=False, learn=False)


@_frozen_dataclass
class Hit:
    """One search result. ``match`` is ``exact`` when the query named the tool.
    ``similarity`` is the reranker's cosine similarity of the query and the tool (-1..1,
    all-MiniLM-L6-v2's vectors), None when no reranker scored the hit."""

    tool: Tool
    score: float
    match: MatchKind
    explanation: tuple[TermContribution, ...]
    #: How sure toolfind is that the hit is what the query asks for, 0..1 (calibrated:
    #: ``toolfind.core.confidence``; at 0.5 or more it is right about 4 times in 5).
    confidence: float
    #: The reranker's cosine (see above), None when no reranker scored the hit.
    similarity: float | None

    def __init__(
        self,
        tool: Tool,
        score: float,
        match: MatchKind = "ranked",
        explanation: tuple[TermContribution, ...] = (),
        confidence: float = 0.0,
        similarity: float | None = None,
    ) -> None:
        _set(self, "tool", tool)
        _set(self, "score", score)
        _set(self, "match", match)
        _set(self, "explanation", explanation)
        _set(self, "confidence", confidence)
        _set(self, "similarity", similarity)

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def namespace(self) -> str:
        return self.tool.namespace


@_frozen_dataclass
class TermContribution:
    """How much one query term in one field added to a hit's score (for ``--explain``)."""

    term: str
    field: str
    tf: float
    idf: float
    length_norm: float
    weight: float
    score: float
    #: The query's word this term answers: ``term`` itself, or the word a typo's correction
    #: or a synonym stood for (``term`` "shuffle", ``query_word`` "shufle").
    query_word: str

    def __init__(
        self,
        term: str,
        field: str,
        tf: float,
        idf: float,
        length_norm: float,
        weight: float,
        score: float,
        query_word: str = "",
    ) -> None:
        _set(self, "term", term)
        _set(self, "field", field)
        _set(self, "tf", tf)
        _set(self, "idf", idf)
        _set(self, "length_norm", length_norm)
        _set(self, "weight", weight)
        _set(self, "score", score)
        _set(self, "query_word", query_word or term)


@_frozen_dataclass
class SearchResult:
    """Hits for a query and the query terms that occur in no tool at all."""

    query: str
    hits: tuple[Hit, ...]
    unmatched_terms: tuple[str, ...]
    #: Query words read as others (typos): each word and the word it was read as.
    corrections: tuple[tuple[str, str], ...]
    #: The ranking stages that ran, in order: ``lexical`` (BM25F, always), ``semantic`` (the
    #: semantic signal fused in), ``rerank`` (the reranker re-scored the top candidates).
    stages: tuple[str, ...]

    def __init__(
        self,
        query: str,
        hits: tuple[Hit, ...],
        unmatched_terms: tuple[str, ...] = (),
        corrections: tuple[tuple[str, str], ...] = (),
        stages: tuple[str, ...] = ("lexical",),
    ) -> None:
        _set(self, "query", query)
        _set(self, "hits", hits)
        _set(self, "unmatched_terms", unmatched_terms)
        _set(self, "corrections", corrections)
        _set(self, "stages", stages)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, position: int) -> Hit:
        return self.hits[position]


@_frozen_dataclass
class Similar:
    """A tool related to another, with the terms they share that explain it."""

    tool: Tool
    score: float
    shared_terms: tuple[str, ...]

    def __init__(self, tool: Tool, score: float, shared_terms: tuple[str, ...]) -> None:
        _set(self, "tool", tool)
        _set(self, "score", score)
        _set(self, "shared_terms", shared_terms)


@_frozen_dataclass
class Category:
    """A namespace: how many tools it has, how many are deferred, its commonest tags."""

    name: str
    tool_count: int
    deferred_count: int
    tags: tuple[str, ...]

    def __init__(
        self, name: str, tool_count: int, deferred_count: int, tags: tuple[str, ...]
    ) -> None:
        _set(self, "name", name)
        _set(self, "tool_count", tool_count)
        _set(self, "deferred_count", deferred_count)
        _set(self, "tags", tags)


@_frozen_dataclass
class Finding:
    """One problem found in a catalog: an error skips the entry, a warning is a lint.

    ``rule`` names the check that found it (``validate --ignore RULE`` switches a warning's
    rule off): the lint rules' ids, ``duplicate-tool``, ``builtin-tool`` and ``findability-*``
    for the other warnings, ``invalid`` for every error."""

    file: str
    line: int | None
    path: str
    severity: Severity
    message: str
    rule: str

    def __init__(
        self,
        file: str,
        line: int | None,
        path: str,
        severity: Severity,
        message: str,
        rule: str = "",
    ) -> None:
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "path", path)
        _set(self, "severity", severity)
        _set(self, "message", message)
        _set(self, "rule", rule or ("invalid" if severity == "error" else "warning"))

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


@_frozen_dataclass
class LoadResult:
    """Tools read from catalogs, plus what was skipped or worth a warning. ``oversized``
    holds the findings (among ``findings``) of the files skipped for their size."""

    tools: tuple[Tool, ...]
    findings: tuple[Finding, ...]
    files: tuple[str, ...]
    oversized: tuple[Finding, ...]

    def __init__(
        self,
        tools: tuple[Tool, ...],
        findings: tuple[Finding, ...] = (),
        files: tuple[str, ...] = (),
        oversized: tuple[Finding, ...] = (),
    ) -> None:
        _set(self, "tools", tools)
        _set(self, "findings", findings)
        _set(self, "files", files)
        _set(self, "oversized", oversized)

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")

    @property
    def skipped(self) -> tuple[Finding, ...]:
        """The findings of what was not loaded: every error (a bad entry or file), and the
        warnings of :data:`SKIPPED_RULES` (a built-in tool without a schema, a duplicate, a
        path that is not a readable file). What a command that loads catalogs says on stderr;
        lint warnings are ``validate``'s."""
        skipped = (f for f in self.findings if f.severity == "error" or f.rule in SKIPPED_RULES)
        # Once each: a path given and also found in a directory given is one thing skipped.
        return tuple({str(f): f for f in skipped}.values())


#: The warnings' rules of something a load skipped (the other warnings are lint: the tool is
#: loaded all the same).
SKIPPED_RULES = frozenset({"builtin-tool", "duplicate-tool", "unreadable-path", "not-a-file"})
