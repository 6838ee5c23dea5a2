"""The data toolfind works with: frozen dataclasses, no I/O.

Every module passes these around; nothing here reads files, prints or imports a
third-party package, so importing it costs nothing on the hot path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

#: The searchable fields of a tool, in a fixed order (indexes, weights and JSON use it).
FIELDS: tuple[str, ...] = ("name", "namespace", "description", "params", "tags", "search_hint")

#: MCP tool annotations (hints) and the tag each one adds when it is true.
ANNOTATION_TAGS: dict[str, str] = {
    "readOnlyHint": "read-only",
    "destructiveHint": "destructive",
    "idempotentHint": "idempotent",
    "openWorldHint": "open-world",
}

Severity = Literal["error", "warning"]
MatchKind = Literal["exact", "ranked"]


@dataclass(frozen=True, slots=True)
class Source:
    """Where a tool came from: the catalog file and the JSON pointer of its entry."""

    file: str
    pointer: str = ""
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}#{self.pointer}" if self.pointer else where


@dataclass(frozen=True, slots=True)
class Tool:
    """One tool, whatever format it was written in.

    ``parameters`` is a JSON Schema object. ``tags`` are the tags the catalog gave it;
    ``all_tags`` adds the tags its MCP annotations imply. ``original`` is the entry exactly
    as read, kept so a tool can be written back out without losing unknown keys.
    """

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}}
    )
    namespace: str = ""
    tags: tuple[str, ...] = ()
    search_hint: str = ""
    defer: bool = False
    enabled: bool = True
    annotations: Mapping[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    title: str | None = None
    output_schema: Mapping[str, Any] | None = None
    source: Source | None = field(default=None, compare=False)
    original: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def annotation_tags(self) -> tuple[str, ...]:
        """Tags implied by the MCP annotations that are true (``read-only``, ...)."""
        return tuple(
            tag for hint, tag in ANNOTATION_TAGS.items() if self.annotations.get(hint) is True
        )

    @property
    def all_tags(self) -> tuple[str, ...]:
        """The catalog's tags then the annotation tags, without repeats, in order."""
        return tuple(dict.fromkeys((*self.tags, *self.annotation_tags)))

    @property
    def qualified_name(self) -> str:
        """``namespace/name``, or the bare name when the tool has no namespace."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def summary(self) -> str:
        """The first sentence: the text before the first ``.`` on the description's first line."""
        first_line = self.description.strip().split("\n", 1)[0].strip()
        head, dot, _ = first_line.partition(". ")
        if dot:
            return head + "."
        return first_line


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """BM25F weight of each field (a tool's term frequency in a field is multiplied by it)."""

    # Chosen by `toolfind tune` on seal-tools `dev` only (README, "How the defaults were chosen").
    name: float = 4.0
    namespace: float = 1.0
    description: float = 2.0
    params: float = 0.25
    tags: float = 0.5
    search_hint: float = 2.0

    def as_dict(self) -> dict[str, float]:
        return {f.name: float(getattr(self, f.name)) for f in fields(self)}

    def with_overrides(self, overrides: Mapping[str, float]) -> FieldWeights:
        """A copy with some weights replaced. Raises ``KeyError`` naming an unknown field."""
        for key in overrides:
            if key not in FIELDS:
                raise KeyError(key)
        return replace(self, **{k: float(v) for k, v in overrides.items()})


@dataclass(frozen=True, slots=True)
class ScoringParams:
    """Everything that changes scores but not the analysed index: weights, k1, b, delta.

    ``b`` maps a field to its length-normalisation strength; fields not in it use
    ``default_b``.
    """

    weights: FieldWeights = field(default_factory=FieldWeights)
    k1: float = 5.0
    default_b: float = 0.75
    b: tuple[tuple[str, float], ...] = (("description", 0.9), ("name", 0.5), ("params", 0.9))
    delta: float = 0.5

    def b_for(self, field_name: str) -> float:
        return dict(self.b).get(field_name, self.default_b)

    def fingerprint(self) -> str:
        """A stable text naming these settings, part of the cache key."""
        w = ",".join(f"{k}={v!r}" for k, v in self.weights.as_dict().items())
        bs = ",".join(f"{k}={self.b_for(k)!r}" for k in FIELDS)
        return f"w[{w}] k1={self.k1!r} b[{bs}] delta={self.delta!r}"


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result. ``match`` is ``exact`` when the query named the tool."""

    tool: Tool
    score: float
    match: MatchKind = "ranked"
    explanation: tuple[TermContribution, ...] = ()

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def namespace(self) -> str:
        return self.tool.namespace


@dataclass(frozen=True, slots=True)
class TermContribution:
    """How much one query term in one field added to a hit's score (for ``--explain``)."""

    term: str
    field: str
    tf: float
    idf: float
    length_norm: float
    weight: float
    score: float


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Hits for a query and the query terms that occur in no tool at all."""

    query: str
    hits: tuple[Hit, ...]
    unmatched_terms: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, position: int) -> Hit:
        return self.hits[position]


@dataclass(frozen=True, slots=True)
class Similar:
    """A tool related to another, with the terms they share that explain it."""

    tool: Tool
    score: float
    shared_terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Category:
    """A namespace: how many tools it has, how many are deferred, its commonest tags."""

    name: str
    tool_count: int
    deferred_count: int
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem found in a catalog: an error skips the entry, a warning is a lint."""

    file: str
    line: int | None
    path: str
    severity: Severity
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class LoadResult:
    """Tools read from catalogs, plus what was skipped or worth a warning."""

    tools: tuple[Tool, ...]
    findings: tuple[Finding, ...] = ()
    files: tuple[str, ...] = ()

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.severity == "error")
