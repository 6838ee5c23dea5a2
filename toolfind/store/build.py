"""Building an index: each tool's analysed fields, the postings, and their impacts.

:func:`gather` reads the tools once: :class:`Analysed` turns the enabled ones into per-term
postings of (tool, tf-vector) pairs, :class:`Metadata` keeps the rest of each tool; :func:`weigh` computes every
posting's BM25F(+) impact (:mod:`toolfind.core.bm25f`; with numpy for large catalogs, bit for
bit the same) and the impact tiers. :class:`~toolfind.store.index.SearchIndex` lays them out.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate, chain, repeat
from operator import mul

from toolfind.core import actions, analysis, bm25f, synonyms, tiers
from toolfind.errors import ConfigError
from toolfind.models import FIELDS, ScoringParams, Tool
from toolfind.semantic import text_key, tool_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Nested parameter schemas deeper than this are not indexed; neither are more nodes than
#: _MAX_PARAM_NODES per tool (a hostile schema must not make indexing slow).
_MAX_PARAM_DEPTH = 6
_MAX_PARAM_NODES = 2000
_TOP_TAGS = 5
#: A build (or re-weighting) of this many postings computes impacts with numpy if installed:
#: it saves more than importing numpy costs.
BUILD_VECTOR_MIN = 200_000

#: Bits of the per-tool flags column; the others hold the tool's action class
#: (:func:`toolfind.core.actions.tool_class`).
ENABLED, DEFERRED = 1, 2


def expansions(known: Callable[[str], bool], extra: Sequence[Sequence[str]] = ()) -> synonyms.Table:
    """The synonym table of an index whose vocabulary ``known`` tells: the shipped table
    (:mod:`toolfind.core.synonyms`) and the user's groups ``extra`` (``[synonyms]``), each
    member keyed by its words as a query reads them."""
    every = [*synonyms.groups(), *extra]
    return synonyms.build(every, analysis.query_terms, known)


_NAMESPACE = FIELDS.index("namespace")
#: ``similar`` names a shared term when it adds at least this share of the score.
SHARED_SHARE = 0.05
#: ``similar`` weighs a term of the tool's name this much more: what a tool does is in its
#: name (measured on tools that answer the same requests, docs/ranking.md).
SIMILAR_NAME = 1.5


def similar_term(term: str, tf: Sequence[int]) -> bool:
    """Whether a tool's ``term`` (its count per field ``tf``) says what the tool does, for
    :meth:`~toolfind.store.index.SearchIndex.similar`: not a word of one letter or a number (``n``, ``64``), nor
    one only its namespace holds (``mcp``, ``server``: tools of one server are not alike for
    sharing its name)."""
    if len(term) < 2 or any(part.isdigit() for part in term.split("_")):
        return False
    return any(count for fi, count in enumerate(tf) if fi != _NAMESPACE)


def _param_texts(schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(identifiers, prose) of a parameters schema: property names and enum values, then
    descriptions and titles, depth first, nested properties and array items included."""
    idents: list[str] = []
    prose: list[str] = []
    _walk(schema, 0, idents, prose, [_MAX_PARAM_NODES])
    return idents, prose


def _walk(node: Any, depth: int, idents: list[str], prose: list[str], budget: list[int]) -> None:
    """:func:`_param_texts`' walk. (A module function: a closure calling itself is a cycle,
    which a build, the collector paused, would keep with all it holds, per tool.)"""
    if budget[0] <= 0 or not (type(node) is dict or isinstance(node, Mapping)):
        return
    budget[0] -= 1
    get = node.get
    for key in ("title", "description"):
        text = get(key)
        if type(text) is str:
            prose.append(text)
    enum = get("enum")
    if type(enum) is list:
        idents.extend(str(v) for v in enum if isinstance(v, str | int | float))
    if depth >= _MAX_PARAM_DEPTH:
        return
    props = get("properties")
    if props and (type(props) is dict or isinstance(props, Mapping)):
        for name, sub in props.items():
            idents.append(str(name))
            _walk(sub, depth + 1, idents, prose, budget)
    for key in _NESTED:
        sub = get(key)
        if sub:
            if type(sub) is list:
                for item in sub:
                    _walk(item, depth + 1, idents, prose, budget)
            else:
                _walk(sub, depth + 1, idents, prose, budget)


_NESTED = ("items", "additionalProperties", "anyOf", "oneOf", "allOf")


def field_terms(tool: Tool) -> tuple[list[str], ...]:
    """The analysed terms of each of a tool's fields, in :data:`~toolfind.models.FIELDS` order.

    name: the name and aliases; namespace; description: the title and description;
    params: parameter names and enum values (identifiers) and their descriptions, nested
    properties included; tags: the catalog's tags; search_hint.

    The tags MCP annotations imply (``read-only``, ``destructive``, ``open-world``) are not
    words of the tool: they filter (``--tag``) and decide action agreement
    (:mod:`toolfind.core.actions`), but as text they matched requests that say "open" or
    "read" (measured: mcp-open MRR@10 +0.9 without them, docs/ranking.md).
    """
    tags = tool.tags
    ident, prose = analysis.analyze_identifier, analysis.analyze_prose
    name = ident(" ".join((tool.name, *tool.aliases)) if tool.aliases else tool.name)
    description = prose(f"{tool.title} {tool.description}" if tool.title else tool.description)
    param_idents, param_prose = _param_texts(tool.parameters)
    params = ident(" ".join(param_idents)) + prose(" ".join(param_prose))
    return (
        name,
        ident(tool.namespace),
        description,
        params,
        ident(" ".join(tags)) if tags else [],
        prose(tool.search_hint),
    )


def field_words(tool: Tool) -> dict[str, str]:
    """Each term of the tool's fields (:func:`field_terms`) with the word it comes from, as
    written in the tool (:func:`toolfind.core.analysis.term_words`): what people are shown."""
    param_idents, param_prose = _param_texts(tool.parameters)
    return analysis.term_words(
        (
            tool.name,
            *tool.aliases,
            tool.namespace,
            tool.title or "",
            tool.description,
            *param_idents,
            *param_prose,
            *tool.tags,
            tool.search_hint,
        )
    )


#: Bits per field in a packed term-frequency vector (field f at bits f*_TF_BITS...).
_TF_BITS = 32
_TF_MASK = (1 << _TF_BITS) - 1


class Analysed:
    """What :meth:`add` gathers of the enabled tools, before it is laid out flat: per-term
    postings of (tool, tf-vector) pairs.

    A tool's terms share a few pairs (most occur once, in one field), so scoring work per
    parameter set is per pair. While counting, a tf vector is one int holding each field's
    count in its own 32 bits.
    """

    def __init__(self, n_docs: int) -> None:
        # term -> its postings in tool order, each ``pair | tool << 32`` in one machine word:
        # laying them out flat (:meth:`postings`) is then a byte copy, not an int per posting.
        self.pair_lists: defaultdict[str, array[int]] = defaultdict(lambda: array("Q"))
        self.vec_ids: dict[int, int] = {}  # packed per-field tf vector -> vector id
        # machine words, not lists of ints (an int object per pair: 30 MB at 100k tools)
        self.pair_vec = array("I")
        self.pair_doc = array("i")
        self.lengths = tuple(array("I", bytes(4 * n_docs)) for _ in FIELDS)
        self._units = [1 << (fi * _TF_BITS) for fi in range(len(FIELDS))]

    def add(self, doc: int, tool: Tool) -> None:
        """Analyse tool ``doc`` into the postings."""
        pair_lists, vec_ids, pair_vec = self.pair_lists, self.vec_ids, self.pair_vec
        tool_bits = doc << 32
        counts: dict[str, int] = {}
        get = counts.get
        units = self._units
        for fi, terms in enumerate(field_terms(tool)):
            if terms:
                self.lengths[fi][doc] = len(terms)
                unit = units[fi]
                for term in terms:
                    counts[term] = get(term, 0) + unit
        doc_pairs: dict[int, int] = {}
        for term, packed in counts.items():
            posting = doc_pairs.get(packed)
            if posting is None:
                vid = vec_ids.get(packed)
                if vid is None:
                    vid = vec_ids[packed] = len(vec_ids)
                posting = doc_pairs[packed] = len(pair_vec) | tool_bits
                pair_vec.append(vid)
                self.pair_doc.append(doc)
            pair_lists[term].append(posting)

    def postings(self, terms: Sequence[str]) -> tuple[array[int], array[int], array[int]]:
        """For ``terms`` in order, their postings laid end to end: pair ids, tool ids, and
        the offsets where each term's postings start (one more than there are terms). The
        per-term lists are let go as they are laid out."""
        lists = list(map(self.pair_lists.__getitem__, terms))
        self.pair_lists.clear()
        offsets = array("i", accumulate(map(len, lists), initial=0))
        joined = b"".join(lists)
        del lists
        words = memoryview(joined).cast("I")  # per posting: two 32-bit halves
        low, high = (0, 1) if sys.byteorder == "little" else (1, 0)
        pairs, docs = array("I"), array("i")
        pairs.frombytes(words[low::2].tobytes())
        docs.frombytes(words[high::2].tobytes())
        return pairs, docs, offsets

    def tf_vectors(self) -> tuple[tuple[int, ...], ...]:
        """The distinct per-field tf vectors, unpacked, by vector id."""
        return tuple(
            tuple((packed >> (fi * _TF_BITS)) & _TF_MASK for fi in range(len(FIELDS)))
            for packed in self.vec_ids
        )


def gather(
    tools: Iterable[Tool], n_docs: int, progress: Callable[[int, int], object] | None = None
) -> tuple[Metadata, Analysed]:
    """One pass over the ``n_docs`` tools: each one's metadata, and the enabled ones'
    analysed terms. Each tool is let go once read (``tools`` may decode them one by one).
    ``progress``, if given, is called with (tools read, ``n_docs``) every thousand tools
    and at the end."""
    meta, analysed = Metadata(), Analysed(n_docs)
    add_meta, add_terms = meta.add, analysed.add
    for doc, tool in enumerate(tools):
        add_meta(doc, tool)
        if tool.enabled:
            add_terms(doc, tool)
        if progress is not None and doc % 1000 == 999:
            progress(doc + 1, n_docs)
    if progress is not None and n_docs % 1000:
        progress(n_docs, n_docs)
    return meta, analysed


_NO_NUMPY: list[bool] = []  # holds True once importing numpy failed: not tried again


def numpy() -> Any:
    """numpy if it is installed, else None (a failed import is not retried)."""
    if _NO_NUMPY:
        return None
    try:
        import numpy
    except ImportError:
        _NO_NUMPY.append(True)
        return None
    return numpy


def check_params(params: ScoringParams) -> None:
    """Raise ConfigError for settings BM25F cannot use."""
    for field_name, weight in params.weights.as_dict().items():
        if not weight >= 0.0 or weight == float("inf"):
            raise ConfigError(f"weight of field {field_name!r} must be a number >= 0, not {weight}")
    for name, value in (("k1", params.k1), ("delta", params.delta)):
        if not value >= 0.0 or value == float("inf"):
            raise ConfigError(f"{name} must be a number >= 0, not {value}")
    for field_name, b in (("default", params.default_b), *params.b):
        if field_name != "default" and field_name not in FIELDS:
            raise ConfigError(f"unknown field {field_name!r} in b; fields: {', '.join(FIELDS)}")
        if not 0.0 <= b <= 1.0:
            raise ConfigError(f"b of field {field_name!r} must be between 0 and 1, not {b}")


class Metadata:
    """What a build needs of each tool besides its terms (:meth:`add`, tool by tool)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self.names: list[str] = []
        self.namespaces: list[str] = []
        self.flags: list[int] = []
        self.tags: list[tuple[str, ...]] = []
        self.aliases: dict[int, tuple[str, ...]] = {}
        self.keys: dict[str, list[int]] = {}
        self.tag_ids: dict[str, list[int]] = {}
        #: Each tool's text key in the vector store (``semantic.text_key``; zeros: disabled).
        self.text_keys = bytearray()
        self.n_enabled = 0
        # namespace -> [tools, deferred, tag counts] over the enabled tools
        self._counts: dict[str, tuple[list[int], Counter[str]]] = {}
        for doc, tool in enumerate(tools):
            self.add(doc, tool)

    def add(self, doc: int, tool: Tool) -> tuple[str, ...]:
        """Note tool ``doc`` (the next one); returns its ``all_tags``."""
        key_of = analysis.name_key
        name, namespace, aliases, tags = tool.name, tool.namespace, tool.aliases, tool.all_tags
        enabled = tool.enabled
        self.names.append(name)
        self.namespaces.append(namespace)
        self.tags.append(tags)
        action = actions.tool_class(name, tool.annotations, tags)
        self.flags.append(enabled * ENABLED | tool.defer * DEFERRED | action)
        if aliases:
            self.aliases[doc] = aliases
        for key in {key_of(spelling) for spelling in (name, *aliases)} - {""}:
            self.keys.setdefault(key, []).append(doc)
        if tags:
            for key in {key_of(tag) for tag in tags} - {""}:
                self.tag_ids.setdefault(key, []).append(doc)
        text = tool_text(name, namespace, tool.description, tool.title) if enabled else ""
        self.text_keys += text_key(text) if enabled else bytes(16)
        if enabled:
            self.n_enabled += 1
            counts = self._counts.get(namespace)
            if counts is None:
                counts = self._counts[namespace] = ([0, 0], Counter())
            counts[0][0] += 1
            counts[0][1] += tool.defer
            if tags:
                counts[1].update(tags)
        return tags

    def categories(self) -> tuple[tuple[str, int, int, tuple[str, ...]], ...]:
        """Per namespace of the enabled tools, by name: tool count, deferred count, top tags."""
        out = []
        for ns in sorted(self._counts):
            (n, deferred), tag_counts = self._counts[ns]
            top = sorted(tag_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:_TOP_TAGS]
            out.append((ns, n, deferred, tuple(t for t, _ in top)))
        return tuple(out)


def weigh(s: Any, params: ScoringParams) -> dict[str, Any]:
    """Every posting's impact for ``params`` (the only per-params work), from the structural
    columns of ``s`` (a SearchIndex): the new values of its slots ``_weights``, ``_idf``,
    ``_imp``, ``_idocs``/``_ioffsets`` (postings with no impact dropped), ``_max`` and the
    impact tiers."""
    eff = bm25f.effective_weights(params.weights.as_dict())
    out: dict[str, Any] = {"_weights": tuple(eff[f] for f in FIELDS)}
    np = numpy() if len(s._docs) >= BUILD_VECTOR_MIN else None
    if np is None or not _weigh_vectorized(np, s, params, out):
        np = None
        _weigh(s, params, out)
    out["_tiers"], out["_tier_of"] = tiers.build(out["_ioffsets"], out["_imp"], np)
    return out


def _floors(tfvecs: Sequence[Sequence[int]], weights: Sequence[float], delta: float) -> list[float]:
    """:func:`bm25f.floor` of each distinct tf vector (a pair's floor is its vector's)."""
    return [bm25f.floor(vec, weights, delta) for vec in tfvecs]


def _weigh(s: Any, params: ScoringParams, out: dict[str, Any]) -> None:
    docs, offsets = s._docs, s._offsets
    pair_vec, pair_doc = list(s._pair_vec), list(s._pair_doc)
    pseudo: list[float] | None = None  # per pair, bm25f.pseudo_tf's sum in field order
    for fi, field_name in enumerate(FIELDS):
        tab = [vec[fi] for vec in s._tfvecs]
        weight = out["_weights"][fi]
        if weight <= 0.0 or not any(tab):
            continue
        scales = bm25f.field_scales(weight, s._lengths[fi], s._avg[fi], params.b_for(field_name))
        if pseudo is None:
            pseudo = [tab[v] * scales[d] for v, d in zip(pair_vec, pair_doc, strict=True)]
        else:
            pseudo = [
                t + tab[v] * scales[d] for t, v, d in zip(pseudo, pair_vec, pair_doc, strict=True)
            ]
    floors = _floors(s._tfvecs, out["_weights"], params.delta)
    sat = bm25f.saturations(
        pseudo or [0.0] * len(pair_vec), params.k1, list(map(floors.__getitem__, pair_vec))
    )
    idocs: Sequence[int]
    ioffsets: Sequence[int]
    ipairs: Sequence[int]
    if 0.0 in sat:
        # Some postings lie only in zero-weight fields: for these settings those tools do
        # not contain the term (no posting, not counted in df).
        kept_docs, kept_offsets, kept_pairs = array("i"), array("i", [0]), array("I")
        for t in range(len(offsets) - 1):
            a, b = offsets[t], offsets[t + 1]
            for d, p in zip(docs[a:b], s._pairs[a:b], strict=True):
                if sat[p] > 0.0:
                    kept_docs.append(d)
                    kept_pairs.append(p)
            kept_offsets.append(len(kept_docs))
        idocs, ioffsets, ipairs = kept_docs, kept_offsets, kept_pairs
    else:
        idocs, ioffsets, ipairs = docs, offsets, s._pairs
    n_terms = len(ioffsets) - 1
    counts = [ioffsets[t + 1] - ioffsets[t] for t in range(n_terms)]
    idf = array("d", [bm25f.idf(c, s._n) for c in counts])
    idf_per_posting = chain.from_iterable(map(repeat, idf, counts))
    # bm25f.impact's arithmetic: idf * saturation, bit for bit.
    imp = array("d", map(mul, idf_per_posting, map(sat.__getitem__, ipairs)))
    out.update(_idf=idf, _idocs=idocs, _ioffsets=ioffsets, _imp=imp)
    out["_max"] = array(
        "d", [max(imp[ioffsets[t] : ioffsets[t + 1]], default=0.0) for t in range(n_terms)]
    )


#: Postings multiplied at once by :func:`_weigh_vectorized` (8 MiB of temporaries).
_SLICE = 1 << 20


def _weigh_vectorized(np: Any, s: Any, params: ScoringParams, out: dict[str, Any]) -> bool:
    """:func:`_weigh` with numpy, bit for bit: the same IEEE operations on each value in the
    same order (idf keeps Python's ``math.log``). Returns False, having changed nothing, when
    some posting lies only in zero-weight fields (the pure path drops those postings)."""
    pair_vec = np.frombuffer(s._pair_vec, dtype=np.uintc)
    pair_doc = np.frombuffer(s._pair_doc, dtype=np.intc)
    tfvecs = np.array(s._tfvecs, dtype=np.float64).reshape(-1, len(FIELDS))
    pseudo = None
    for fi, field_name in enumerate(FIELDS):
        tab = tfvecs[:, fi]
        weight = out["_weights"][fi]
        if weight <= 0.0 or not tab.any():
            continue
        lengths = np.frombuffer(s._lengths[fi], dtype=np.uintc).astype(np.float64)
        scales = bm25f.field_scales(weight, lengths, s._avg[fi], params.b_for(field_name), np)
        term = tab[pair_vec] * scales[pair_doc]
        pseudo = term if pseudo is None else pseudo + term
    if pseudo is None or not (pseudo > 0.0).all():
        return False
    floors = np.array(_floors(s._tfvecs, out["_weights"], params.delta), dtype=np.float64)
    sat = bm25f.saturations(pseudo, params.k1, floors[pair_vec], np)
    offsets = np.frombuffer(s._offsets, dtype=np.intc)
    counts = np.diff(offsets)
    if not len(counts) or not (counts > 0).all():
        return False
    idf = array("d", [bm25f.idf(c, s._n) for c in counts.tolist()])
    imp = np.repeat(np.frombuffer(idf, dtype=np.float64), counts)
    pairs = np.frombuffer(s._pairs, dtype=np.uintc)
    for a in range(0, len(imp), _SLICE):  # in slices: no other posting-sized array at once
        imp[a : a + _SLICE] *= sat[pairs[a : a + _SLICE]]  # bm25f.impact: idf * saturation
    out["_max"] = array("d", np.maximum.reduceat(imp, offsets[:-1]).tobytes())
    out["_imp"] = array("d")
    out["_imp"].frombytes(memoryview(imp).cast("B"))  # one copy (tobytes() then array(): two)
    out.update(_idf=idf, _idocs=s._docs, _ioffsets=s._offsets)
    return True
