"""The search index: analysed tools, their BM25F(+) impacts, and every question asked of them.

Layout: flat columns (see :mod:`toolfind.store.columns`: arrays while building, memoryviews over
the cache file once loaded, so a loaded index costs what its queries read) and a few small
builtins:

* ``_terms`` holds every term, sorted: a term's id is its position (found by binary search).
* Postings are flat, term-major arrays (CSR): the postings of term ``t`` sit at
  ``_offsets[t]:_offsets[t + 1]`` in ``_docs`` (ascending tool ids) and ``_pairs``. A pair is
  one tool with one per-field term-frequency vector (``_pair_doc``, ``_pair_vec``, an id into
  ``_tfvecs``, the distinct vectors: a few hundred small tuples); a tool's terms share a few
  pairs, so recomputing impacts for new parameters costs per pair, then one pass per posting.
* ``_lengths[f][doc]`` is the analysed length of field ``f``; ``_avg[f]`` its mean over the
  tools where the field is not empty.
* Per tool: ``_names`` (a string table), ``_flags`` (enabled, deferred), ``_ns_ids`` (into
  ``_namespaces``), ``_rank_of`` (position by name, for ties); ``_keys`` and ``_tag_ids`` map
  name keys and tag keys to tool ids. ``tools`` is a tuple once built and a lazily decoded
  :class:`~toolfind.store.columns.ToolTable` once loaded. Categories are counted at build time.
* For the current :class:`ScoringParams`, ``_imp`` holds each posting's impact (see
  :mod:`toolfind.core.bm25f`), aligned with ``_idocs``/``_ioffsets`` (the same arrays as the
  structural ones unless a zero weight leaves postings with no impact, which are dropped).

Disabled tools keep their doc id (their position in ``tools``) but get no postings, so they
count in no statistic and no search can return them; ``resolve`` still finds them.

A search scores a tool by adding its impacts over the query's distinct terms in query order,
starting from the first term's impact (``0.0 + x``); any other reader of :meth:`impacts` that
adds the same floats in the same order gets bit-identical scores.
"""

from __future__ import annotations

import heapq
import sys
from array import array
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import accumulate, chain, repeat
from operator import mul

from toolfind.core import analysis, bm25f, tiers
from toolfind.errors import AmbiguousName, ConfigError, ToolNotFound
from toolfind.models import (
    FIELDS,
    Category,
    Hit,
    ScoringParams,
    SearchResult,
    Similar,
    TermContribution,
    Tool,
    qualified_name,
)
from toolfind.store.columns import KeyedIds, StringTable, ToolTable, column, pack, unpack

# typing costs a warm command a good part of its start-up: only the type checker reads it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, overload


__all__ = ["INDEX_FORMAT", "SearchIndex", "field_terms"]

#: Version of the pickled layout; bump it whenever the slots or their meaning change.
INDEX_FORMAT = 3

#: Nested parameter schemas deeper than this are not indexed; neither are more nodes than
#: _MAX_PARAM_NODES per tool (a hostile schema must not make indexing slow).
_MAX_PARAM_DEPTH = 6
_MAX_PARAM_NODES = 2000
_TOP_TAGS = 5
#: Queries reading at least this many postings use MaxScore pruning (see _rank_pruned).
_PRUNE_MIN_POSTINGS = 1024
_PRUNE_MARGIN = 1.0 - 1e-9
#: With :meth:`SearchIndex.accelerate`, queries reading at least this many postings use numpy.
_VECTOR_MIN_POSTINGS = 512
#: A build (or re-weighting) of this many postings computes impacts with numpy if installed:
#: it saves more than importing numpy costs.
_BUILD_VECTOR_MIN = 200_000
#: A query over this many postings is scored with numpy even in a one-shot process, if numpy
#: is installed: importing it costs about what adding up 300k postings in Python does.
_IMPORT_PAYS_BACK = 1_000_000

_NAME, _NAMESPACE, _DESCRIPTION, _PARAMS, _TAGS, _HINT = range(len(FIELDS))


def _param_texts(schema: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(identifiers, prose) of a parameters schema: property names and enum values, then
    descriptions and titles, depth first, nested properties and array items included."""
    idents: list[str] = []
    prose: list[str] = []
    budget = [_MAX_PARAM_NODES]

    def walk(node: Any, depth: int) -> None:
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
                walk(sub, depth + 1)
        for key in _NESTED:
            sub = get(key)
            if sub:
                if type(sub) is list:
                    for item in sub:
                        walk(item, depth + 1)
                else:
                    walk(sub, depth + 1)

    walk(schema, 0)
    return idents, prose


_NESTED = ("items", "additionalProperties", "anyOf", "oneOf", "allOf")


def field_terms(tool: Tool) -> tuple[list[str], ...]:
    """The analysed terms of each of a tool's fields, in :data:`~toolfind.models.FIELDS` order.

    name: the name and aliases; namespace; description: the title and description;
    params: parameter names and enum values (identifiers) and their descriptions, nested
    properties included; tags: ``all_tags`` (annotation tags included); search_hint.
    """
    return _field_terms(tool, tool.all_tags)


def _field_terms(tool: Tool, tags: Sequence[str]) -> tuple[list[str], ...]:
    """:func:`field_terms`, given the tool's ``all_tags`` (computed once per build)."""
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


#: Bits per field in a packed term-frequency vector (field f at bits f*_TF_BITS...).
_TF_BITS = 32
_TF_MASK = (1 << _TF_BITS) - 1


def _posting_list() -> array[int]:
    return array("Q")


class _Analysed:
    """What :func:`_analyse` gathers, before it is laid out flat."""

    def __init__(self, n_docs: int) -> None:
        # term -> its postings in tool order, each ``pair | tool << 32`` (a (tool, tf vector)
        # pair and its tool, as one machine word). Machine words, not Python ints: laying
        # the postings out flat (:meth:`postings`) is then a byte copy, where reading
        # half a million scattered int objects cost a 10k build a tenth of its time.
        self.pair_lists: defaultdict[str, array[int]] = defaultdict(_posting_list)
        self.vec_ids: dict[int, int] = {}  # packed per-field tf vector -> vector id
        self.pair_vec: list[int] = []
        self.pair_doc: list[int] = []
        self.lengths = tuple(array("I", bytes(4 * n_docs)) for _ in FIELDS)

    def postings(self, terms: Sequence[str]) -> tuple[array[int], array[int], array[int]]:
        """For ``terms`` in order, their postings laid end to end: pair ids, tool ids, and
        the offsets where each term's postings start (one more than there are terms)."""
        lists = list(map(self.pair_lists.__getitem__, terms))
        words = memoryview(b"".join(lists)).cast("I")  # per posting: two 32-bit halves
        low, high = (0, 1) if sys.byteorder == "little" else (1, 0)
        pairs, docs = array("I"), array("i")
        pairs.frombytes(words[low::2].tobytes())
        docs.frombytes(words[high::2].tobytes())
        return pairs, docs, array("i", accumulate(map(len, lists), initial=0))

    def tf_vectors(self) -> tuple[tuple[int, ...], ...]:
        """The distinct per-field tf vectors, unpacked, by vector id."""
        return tuple(
            tuple((packed >> (fi * _TF_BITS)) & _TF_MASK for fi in range(len(FIELDS)))
            for packed in self.vec_ids
        )


def _analyse(tools: Sequence[Tool], tags: Sequence[Sequence[str]]) -> _Analysed:
    """Analyse the enabled tools (``tags[doc]``: tool doc's ``all_tags``) into per-term
    postings of (tool, tf-vector) pairs.

    A pair is one tool with one per-field term-frequency vector; a tool's terms share a few
    pairs (most occur once, in one field), so scoring work per parameter set is per pair.
    While counting, a tf vector is one int holding each field's count in its own 32 bits.
    """
    out = _Analysed(len(tools))
    pair_lists, vec_ids = out.pair_lists, out.vec_ids
    pair_vec, pair_doc = out.pair_vec, out.pair_doc
    units = [1 << (fi * _TF_BITS) for fi in range(len(FIELDS))]
    for doc, tool in enumerate(tools):
        if not tool.enabled:
            continue
        tool_bits = doc << 32
        counts: dict[str, int] = {}
        get = counts.get
        for fi, terms in enumerate(_field_terms(tool, tags[doc])):
            if terms:
                out.lengths[fi][doc] = len(terms)
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
                pair_doc.append(doc)
            pair_lists[term].append(posting)
    return out


#: :func:`_at_or_above_kth` estimates its cut-off from every this-many-th total.
_SAMPLE_STRIDE = 16


def _at_or_above_kth(np: Any, totals: Any, k: int) -> tuple[Any, Any]:
    """The positions and values of the nonzero ``totals`` at or above the k-th largest (all
    the nonzero ones when fewer than k are), ties included, in ascending position order.

    Partitioning all the totals (one per tool) would cost more than the rest of a query, so
    the cut-off is found in two steps: the k-th largest of a strided sample is a lower bound
    of the k-th largest of all (a sample has no more values above any bound than the whole),
    so the totals at or above it hold the top k; the exact k-th largest is then taken among
    those few.
    """
    sample = totals[::_SAMPLE_STRIDE]
    floor = np.partition(sample, len(sample) - k)[len(sample) - k] if k < len(sample) else 0.0
    # nonzero() of a boolean mask, not of the floats: a tenth of the time.
    found = (totals >= floor if floor > 0.0 else totals > 0.0).nonzero()[0]
    values = totals[found]
    if len(found) > k:
        kth = np.partition(values, len(values) - k)[len(values) - k]
        above = values >= kth
        found, values = found[above], values[above]
    return found, values


_NO_NUMPY: list[bool] = []  # holds True once importing numpy failed: not tried again


def _numpy() -> Any:
    """numpy if it is installed, else None (a failed import is not retried)."""
    if _NO_NUMPY:
        return None
    try:
        import numpy
    except ImportError:
        _NO_NUMPY.append(True)
        return None
    return numpy


def _raise_mmap_threshold(n_docs: int) -> None:
    """Let the arrays of a numpy query come from the heap, not from fresh memory maps.

    glibc's malloc serves a block at or over its mmap threshold (128 KiB at first) with a new
    mapping, whose pages the kernel faults in and zeroes on every use: a query's arrays (a
    total per tool, the postings read) are that size, and mapping them cost a 100k-tool query
    2.5 ms where the arithmetic takes 0.4. Freeing a mapped block raises the threshold to its
    size (glibc's dynamic threshold, up to 32 MiB), so one block larger than those arrays,
    allocated and freed here, keeps them on the heap. Elsewhere it is one allocation, freed.
    """
    block = bytes(min(max(4 << 20, 64 * n_docs), 31 << 20))  # calloc: no page is touched
    del block


def _check_params(params: ScoringParams) -> None:
    """Raise ConfigError for settings BM25F cannot use."""
    for field_name, weight in params.weights.as_dict().items():
        if not weight >= 0.0 or weight == float("inf"):
            raise ConfigError(f"weight of field {field_name!r} must be a number >= 0, not {weight}")
    if not params.k1 >= 0.0 or params.k1 == float("inf"):
        raise ConfigError(f"k1 must be a number >= 0, not {params.k1}")
    if not params.delta >= 0.0 or params.delta == float("inf"):
        raise ConfigError(f"delta must be a number >= 0, not {params.delta}")
    for field_name, b in (("default", params.default_b), *params.b):
        if field_name != "default" and field_name not in FIELDS:
            raise ConfigError(f"unknown field {field_name!r} in b; fields: {', '.join(FIELDS)}")
        if not 0.0 <= b <= 1.0:
            raise ConfigError(f"b of field {field_name!r} must be between 0 and 1, not {b}")


def _key_of(value: str) -> str:
    return analysis.name_key(value)


class _NamespaceKeys(Sequence[str]):
    """``namespace_keys[doc]`` for :func:`analysis.lookup_name`, from the namespace column."""

    __slots__ = ("ids", "keys")

    def __init__(self, ids: Sequence[int], keys: Sequence[str]) -> None:
        self.ids = ids
        self.keys = keys

    def __len__(self) -> int:
        return len(self.ids)

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, doc: int) -> str: ...
        @overload
        def __getitem__(self, doc: slice) -> list[str]: ...

    def __getitem__(self, doc: int | slice) -> str | list[str]:
        if isinstance(doc, slice):
            return [self[i] for i in range(*doc.indices(len(self)))]
        return self.keys[self.ids[doc]]


#: Bits of the per-tool flags column.
_ENABLED, _DEFERRED = 1, 2

#: Slots holding one column each (an array when built, a memoryview when loaded).
_COLUMNS = (
    "_docs",
    "_flags",
    "_idf",
    "_idocs",
    "_imp",
    "_ioffsets",
    "_max",
    "_ns_ids",
    "_offsets",
    "_pair_doc",
    "_pair_vec",
    "_pairs",
    "_rank_of",
    "_tiers",
)


class SearchIndex:
    """BM25F(+) index over a sequence of tools; see the module docstring for the layout."""

    __slots__ = (
        "_accelerated",
        "_aliases",
        "_avg",
        "_categories",
        "_docs",
        "_flags",
        "_idf",
        "_idocs",
        "_imp",
        "_ioffsets",
        "_keys",
        "_lengths",
        "_max",
        "_n",
        "_names",
        "_namespaces",
        "_ns_ids",
        "_ns_keys",
        "_offsets",
        "_pair_doc",
        "_pair_vec",
        "_pairs",
        "_rank_of",
        "_tag_ids",
        "_terms",
        "_tfvecs",
        "_tier_of",
        "_tiers",
        "_vec",
        "_weights",
        "format",
        "params",
        "settings",
        "tools",
    )

    tools: Sequence[Tool]
    params: ScoringParams
    format: int
    settings: str
    _terms: StringTable
    _offsets: Sequence[int]
    _docs: Sequence[int]
    _pairs: Sequence[int]
    _pair_vec: Sequence[int]
    _pair_doc: Sequence[int]
    _rank_of: Sequence[int]
    _tfvecs: tuple[tuple[int, ...], ...]
    _lengths: tuple[Sequence[int], ...]
    _avg: tuple[float, ...]
    _n: int
    _keys: KeyedIds
    _tag_ids: KeyedIds
    _names: StringTable
    _namespaces: tuple[str, ...]
    _ns_keys: tuple[str, ...]
    _ns_ids: Sequence[int]
    _flags: Sequence[int]
    _categories: tuple[tuple[str, int, int, tuple[str, ...]], ...]
    _aliases: dict[int, tuple[str, ...]]
    _idf: Sequence[float]
    _imp: Sequence[float]
    _max: Sequence[float]
    _idocs: Sequence[int]
    _ioffsets: Sequence[int]
    _tiers: Sequence[int]
    _tier_of: dict[int, tuple[int, int, float]]
    _weights: tuple[float, ...]
    _accelerated: bool
    _vec: tuple[Any, Any, Any] | None

    # ------------------------------------------------------------------ building

    @classmethod
    def build(cls, tools: Sequence[Tool], params: ScoringParams | None = None) -> SearchIndex:
        """Analyse every enabled tool and compute impacts for ``params`` (defaults if None).

        Raises ConfigError when ``params`` holds a negative weight, k1 or delta, or a b
        outside [0, 1] or for an unknown field.
        """
        params = ScoringParams() if params is None else params
        _check_params(params)
        self = cls.__new__(cls)
        self.tools = tools = tuple(tools)
        self.format = INDEX_FORMAT
        self.settings = analysis.SETTINGS
        meta = _Metadata(tools)
        analysed = _analyse(tools, meta.tags)
        terms = sorted(analysed.pair_lists)
        self._terms = StringTable.of(terms)
        self._pairs, self._docs, self._offsets = analysed.postings(terms)
        self._pair_vec = column("I", analysed.pair_vec)
        self._pair_doc = column("i", analysed.pair_doc)
        self._tfvecs = analysed.tf_vectors()
        self._lengths = lengths = analysed.lengths
        avg = []
        for field_lengths in lengths:
            used = [x for x in field_lengths if x]
            avg.append(sum(used) / len(used) if used else 0.0)
        self._avg = tuple(avg)
        self._n = meta.n_enabled
        self._flags = column("B", meta.flags)
        self._names = StringTable.of(meta.names)
        # Ties break by (name, namespace): a tool's position in that order, compared as an int.
        names, namespaces = meta.names, meta.namespaces
        by_name = sorted(range(len(tools)), key=lambda d: (names[d], namespaces[d], d))
        self._rank_of = column("i", bytes(4 * len(by_name)))
        for position, doc in enumerate(by_name):
            self._rank_of[doc] = position
        self._namespaces = tuple(sorted(set(namespaces)))
        ns_ids = {ns: i for i, ns in enumerate(self._namespaces)}
        self._ns_ids = column("I", map(ns_ids.__getitem__, namespaces))
        self._ns_keys = tuple(_key_of(ns) for ns in self._namespaces)
        self._keys = KeyedIds.of(meta.keys)
        self._tag_ids = KeyedIds.of(meta.tag_ids)
        self._aliases = meta.aliases
        self._categories = meta.categories()
        self._accelerated = False
        self._apply(params)
        return self

    # ------------------------------------------------------------------ pickling

    def __getstate__(self) -> dict[str, Any]:
        """The slots, columns packed for pickle (out of band with protocol 5: see
        :mod:`toolfind.store.columns`), tools as a :class:`ToolTable`."""
        state: dict[str, Any] = {}
        for slot in SearchIndex.__slots__:
            value = getattr(self, slot)
            if slot in _COLUMNS:
                value = pack(value)
            elif slot == "_lengths":
                value = tuple(pack(c) for c in value)
            elif slot == "tools" and not isinstance(value, ToolTable):
                value = ToolTable.of(value)
            elif slot in ("_accelerated", "_vec"):
                continue  # a choice of this process, not part of the index
            state[slot] = value
        # Without zero weights the impact postings are the structural ones: store them once.
        if self._idocs is self._docs:
            state["_idocs"] = None
        if self._ioffsets is self._offsets:
            state["_ioffsets"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._accelerated, self._vec = False, None
        for slot in SearchIndex.__slots__:
            if slot in ("_accelerated", "_vec"):
                continue
            value = state[slot]
            if slot == "_lengths":
                value = tuple(unpack(c) for c in value)
            setattr(self, slot, unpack(value))
        if state["_idocs"] is None:
            self._idocs = self._docs
        if state["_ioffsets"] is None:
            self._ioffsets = self._offsets

    def check(self) -> None:
        """Raise ValueError unless the columns agree in length (a cheap sanity check of an
        index read from disk; see :mod:`toolfind.store.cache`)."""
        n = len(self.tools)
        per_tool = (self._flags, self._rank_of, self._names, self._ns_ids, *self._lengths)
        n_terms = len(self._terms)
        if (
            self.format != INDEX_FORMAT
            or any(len(c) != n for c in per_tool)
            or len(self._lengths) != len(FIELDS)
            or len(self._offsets) != n_terms + 1
            or len(self._ioffsets) != n_terms + 1
            or len(self._idf) != n_terms
            or len(self._max) != n_terms
            or self._offsets[-1] != len(self._docs)
            or len(self._docs) != len(self._pairs)
            or self._ioffsets[-1] != len(self._idocs)
            or len(self._idocs) != len(self._imp)
            or len(self._pair_vec) != len(self._pair_doc)
            or any(
                not (0 <= t < n_terms and 0 <= a <= b <= len(self._tiers))
                for t, (a, b, _) in self._tier_of.items()
            )
        ):
            raise ValueError("the index's columns disagree")

    def with_params(self, params: ScoringParams) -> SearchIndex:
        """The same analysed tools scored with other parameters (no re-analysis).

        Raises ConfigError like :meth:`build`.
        """
        _check_params(params)
        other = SearchIndex.__new__(SearchIndex)
        for slot in SearchIndex.__slots__:
            setattr(other, slot, getattr(self, slot))
        other._apply(params)
        return other

    def _scales(self, fi: int, weight: float, b: float) -> list[float]:
        avg = self._avg[fi]
        return [bm25f.field_scale(weight, length, avg, b) for length in self._lengths[fi]]

    def _apply(self, params: ScoringParams) -> None:
        """Compute every posting's impact for ``params`` (the only per-params work)."""
        self.params = params
        self._vec = None
        eff = bm25f.effective_weights(params.weights.as_dict())
        self._weights = tuple(eff[f] for f in FIELDS)
        np = _numpy() if len(self._docs) >= _BUILD_VECTOR_MIN else None
        if np is not None and self._apply_vectorized(np, params):
            return
        docs, offsets = self._docs, self._offsets
        pair_vec, pair_doc = list(self._pair_vec), list(self._pair_doc)
        pseudo: list[float] | None = None  # per pair, bm25f.pseudo_tf's sum in field order
        for fi, field_name in enumerate(FIELDS):
            tab = [vec[fi] for vec in self._tfvecs]
            if self._weights[fi] <= 0.0 or not any(tab):
                continue
            scales = self._scales(fi, self._weights[fi], params.b_for(field_name))
            if pseudo is None:
                pseudo = [tab[v] * scales[d] for v, d in zip(pair_vec, pair_doc, strict=True)]
            else:
                pseudo = [
                    t + tab[v] * scales[d]
                    for t, v, d in zip(pseudo, pair_vec, pair_doc, strict=True)
                ]
        sat = bm25f.saturations(pseudo or [0.0] * len(pair_vec), params.k1, params.delta)
        idocs: Sequence[int]
        ioffsets: Sequence[int]
        ipairs: Sequence[int]
        if 0.0 in sat:
            # Some postings lie only in zero-weight fields: for these settings those tools do
            # not contain the term (no posting, not counted in df).
            kept_docs, kept_offsets, kept_pairs = array("i"), array("i", [0]), array("I")
            for t in range(len(offsets) - 1):
                a, b = offsets[t], offsets[t + 1]
                for d, p in zip(docs[a:b], self._pairs[a:b], strict=True):
                    if sat[p] > 0.0:
                        kept_docs.append(d)
                        kept_pairs.append(p)
                kept_offsets.append(len(kept_docs))
            idocs, ioffsets, ipairs = kept_docs, kept_offsets, kept_pairs
        else:
            idocs, ioffsets, ipairs = docs, offsets, self._pairs
        n_terms = len(ioffsets) - 1
        idf = array(
            "d", [bm25f.idf(ioffsets[t + 1] - ioffsets[t], self._n) for t in range(n_terms)]
        )
        counts = [ioffsets[t + 1] - ioffsets[t] for t in range(n_terms)]
        idf_per_posting = chain.from_iterable(map(repeat, idf, counts))
        # bm25f.impact's arithmetic: idf * saturation, bit for bit.
        self._imp = array("d", map(mul, idf_per_posting, map(sat.__getitem__, ipairs)))
        self._idf, self._idocs, self._ioffsets = idf, idocs, ioffsets
        imp = self._imp
        self._max = array(
            "d",
            [max(imp[ioffsets[t] : ioffsets[t + 1]], default=0.0) for t in range(n_terms)],
        )
        self._build_tiers(None)

    def _build_tiers(self, np: Any) -> None:
        """The impact tiers of the long posting lists (see :mod:`toolfind.core.tiers`)."""
        self._tiers, self._tier_of = tiers.build(self._ioffsets, self._imp, np)

    def _apply_vectorized(self, np: Any, params: ScoringParams) -> bool:
        """:meth:`_apply` with numpy, bit for bit: the same IEEE operations on each value in
        the same order (idf keeps Python's ``math.log``). Returns False, having changed
        nothing, when some posting lies only in zero-weight fields (the pure path drops
        those postings)."""
        pair_vec = np.frombuffer(self._pair_vec, dtype=np.uintc)
        pair_doc = np.frombuffer(self._pair_doc, dtype=np.intc)
        tfvecs = np.array(self._tfvecs, dtype=np.float64).reshape(-1, len(FIELDS))
        pseudo = None
        for fi, field_name in enumerate(FIELDS):
            tab = tfvecs[:, fi]
            weight = self._weights[fi]
            if weight <= 0.0 or not tab.any():
                continue
            lengths = np.frombuffer(self._lengths[fi], dtype=np.uintc).astype(np.float64)
            avg, b = self._avg[fi], params.b_for(field_name)
            # bm25f.field_scale: weight / (1 - b + b * length / avg), or weight / 1.0; and 0
            # where that is 0 (an empty field with b = 1)
            norm = (1.0 - b) + (b * lengths) / avg if avg > 0.0 else np.ones_like(lengths)
            scales = np.zeros_like(norm)
            np.divide(weight, norm, out=scales, where=norm != 0.0)
            term = tab[pair_vec] * scales[pair_doc]
            pseudo = term if pseudo is None else pseudo + term
        if pseudo is None or not (pseudo > 0.0).all():
            return False
        k1, delta = params.k1, params.delta
        sat = (k1 + 1.0) * pseudo / (k1 + pseudo) + delta  # bm25f.saturations
        offsets = np.frombuffer(self._offsets, dtype=np.intc)
        counts = np.diff(offsets)
        if not len(counts) or not (counts > 0).all():
            return False
        idf = array("d", [bm25f.idf(c, self._n) for c in counts.tolist()])
        imp = np.repeat(np.frombuffer(idf, dtype=np.float64), counts)
        imp *= sat[np.frombuffer(self._pairs, dtype=np.uintc)]  # idf * saturation
        self._imp = array("d", imp.tobytes())
        self._max = array("d", np.maximum.reduceat(imp, offsets[:-1]).tobytes())
        self._idf, self._idocs, self._ioffsets = idf, self._docs, self._offsets
        self._build_tiers(np)
        return True

    # ------------------------------------------------------------------ views for the segment

    def impacts(self) -> dict[str, tuple[Sequence[int], Sequence[float]]]:
        """Per term with at least one posting: ascending tool ids and the impact in each."""
        out: dict[str, tuple[Sequence[int], Sequence[float]]] = {}
        off = self._ioffsets
        for t, term in enumerate(self._terms):
            a, b = off[t], off[t + 1]
            if b > a:
                out[term] = (self._idocs[a:b], self._imp[a:b])
        return out

    def name_keys(self) -> dict[str, list[int]]:
        """:func:`analysis.name_key` of every name and alias -> tool ids (ascending).

        With ``[t.name for t in tools]`` and the namespace keys this is all
        :func:`analysis.lookup_name` needs to apply ``show``'s rules.
        """
        return {k: list(v) for k, v in self._keys.pairs()}

    def __len__(self) -> int:
        return len(self.tools)

    # ------------------------------------------------------------------ names

    def exact_ids(self, query: str) -> list[int]:
        """Ids of the tools ``query`` names by ``show``'s rules (disabled ones included)."""
        ns_keys = _NamespaceKeys(self._ns_ids, self._ns_keys)
        return analysis.lookup_name(query, self._keys, self._names, ns_keys)

    def resolve(self, name: str) -> Tool:
        """The one tool ``name`` names: exact name, then name key or alias, then ``ns/tool``.

        Raises AmbiguousName (listing ``namespace/name`` candidates) when several tools
        answer, ToolNotFound with close names as suggestions when none does.
        """
        return self.tools[self._resolve_id(name)]

    get = resolve

    def _resolve_id(self, name: str) -> int:
        ids = self.exact_ids(name)
        if len(ids) == 1:
            return ids[0]
        if ids:
            raise AmbiguousName(name, sorted(self.tools[i].qualified_name for i in ids))
        raise ToolNotFound(name, self._suggest(name))

    def _suggest(self, name: str) -> list[str]:
        import difflib  # only on the error path

        pool: dict[str, str] = {}
        namespaces, ns_ids, aliases = self._namespaces, self._ns_ids, self._aliases
        for doc, tool_name in enumerate(self._names):
            qualified = qualified_name(namespaces[ns_ids[doc]], tool_name)
            for spelling in (tool_name, qualified, *aliases.get(doc, ())):
                pool.setdefault(spelling.casefold(), spelling)
        wanted = name.casefold()
        close = difflib.get_close_matches(wanted, list(pool), n=3, cutoff=0.6)
        return [pool[c] for c in close]

    # ------------------------------------------------------------------ search

    def _matching_terms(self, terms: Sequence[str]) -> tuple[list[tuple[str, int]], list[str]]:
        matched: list[tuple[str, int]] = []
        unmatched: list[str] = []
        off = self._ioffsets
        for term in terms:
            t = self._terms.find(term)
            if t is not None and off[t + 1] > off[t]:
                matched.append((term, t))
            else:
                unmatched.append(term)
        return matched, unmatched

    def _accumulate(
        self, term_ids: Sequence[int], weights: Sequence[float] | None = None
    ) -> dict[int, float]:
        """Scores of every tool matching a term: impacts (times ``weights``, one per term)
        added in the order of ``term_ids``."""
        acc: dict[int, float] = {}
        for j, t in enumerate(term_ids):
            a, b = self._ioffsets[t], self._ioffsets[t + 1]
            tiers.add_into(acc, self._idocs[a:b], self._weighted(a, b, weights, j))
        return acc

    def _weighted(self, a: int, b: int, weights: Sequence[float] | None, j: int) -> Iterable[float]:
        """Impacts a..b, times ``weights[j]`` if weights are given."""
        if weights is None:
            return self._imp[a:b]
        return map(mul, repeat(weights[j]), self._imp[a:b])

    def _filter(self, namespace: str | None, tags: Sequence[str]) -> Any:
        """A predicate on tool ids for the namespace and tag filters, or None for no filter."""
        ns_key = _key_of(namespace) if namespace is not None else None
        tag_keys = {_key_of(t) for t in tags} - {""}
        if ns_key is None and not tag_keys:
            return None
        ns_ids = self._ns_ids
        wanted_ns = {i for i, key in enumerate(self._ns_keys) if key == ns_key}
        tagged: set[int] | None = None
        for key in tag_keys:
            docs = set(self._tag_ids.get(key, ()))
            tagged = docs if tagged is None else tagged & docs

        def keep(doc: int) -> bool:
            if ns_key is not None and ns_ids[doc] not in wanted_ns:
                return False
            return tagged is None or doc in tagged

        return keep

    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        namespace: str | None = None,
        tags: Sequence[str] | None = (),
        min_score: float | None = None,
        explain: bool = False,
    ) -> SearchResult:
        """The tools best matching ``query``: named tools first (``match="exact"``, by
        namespace then name), then the rest by (-score, name, namespace); at most ``limit``.

        ``namespace`` keeps tools of that namespace, ``tags`` tools carrying every tag given
        (both compared by :func:`analysis.name_key`); ``min_score`` drops ranked hits scoring
        less (a named tool is always kept). ``explain`` fills each hit's ``explanation``.
        When no query term occurs in any enabled tool there are no hits at all.
        ``unmatched_terms`` lists the query's words found in no tool, as written (case-folded,
        not stemmed; see :func:`analysis.unmatched_words`).
        """
        pairs = analysis.query_terms(query)
        matched, _ = self._matching_terms([term for term, _ in pairs])
        unmatched = analysis.unmatched_words(pairs, {term for term, _ in matched})
        if not matched or limit <= 0:
            return SearchResult(query, (), unmatched)
        tag_list = [tags] if isinstance(tags, str) else list(tags or ())
        keep = self._filter(namespace, tag_list)
        tools, flags = self.tools, self._flags
        exact = [
            i for i in self.exact_ids(query) if flags[i] & _ENABLED and (keep is None or keep(i))
        ]
        exact.sort(key=lambda i: (tools[i].namespace, tools[i].name))
        exact = exact[:limit]
        ids = [t for _, t in matched]
        hits = [(i, self._score(i, ids), "exact") for i in exact]
        ranked = self._rank(ids, limit - len(exact), keep, min_score, set(exact))
        hits += [(i, s, "ranked") for i, s in ranked]
        return SearchResult(
            query,
            tuple(
                Hit(
                    tools[i],
                    score,
                    "exact" if kind == "exact" else "ranked",
                    self._explain(i, matched) if explain else (),
                )
                for i, score, kind in hits
            ),
            unmatched,
        )

    def _posting(self, doc: int, t: int) -> int:
        """Where tool ``doc``'s impact for term ``t`` is in the impact columns, or -1."""
        a, b = self._ioffsets[t], self._ioffsets[t + 1]
        j = bisect_left(self._idocs, doc, a, b)
        return j if j < b and self._idocs[j] == doc else -1

    def _score(self, doc: int, term_ids: Sequence[int]) -> float:
        """One tool's score, its impacts added in the order of ``term_ids`` (0.0 if none)."""
        score: float | None = None
        for t in term_ids:
            j = self._posting(doc, t)
            if j >= 0:
                score = self._imp[j] if score is None else score + self._imp[j]
        return 0.0 if score is None else score

    def _rank(
        self,
        term_ids: Sequence[int],
        k: int,
        keep: Any,
        min_score: float | None,
        skip: set[int],
        weights: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """The k best tools for the terms (in the order given), except ``skip``: see
        :meth:`_top`. ``weights`` (one per term, for :meth:`similar`) multiply each term's
        impacts; every strategy adds the same products in the same order."""
        if k <= 0 or not term_ids:
            return []
        off = self._ioffsets
        sizes = [off[t + 1] - off[t] for t in term_ids]
        total = sum(sizes)
        if total >= _IMPORT_PAYS_BACK and not self._accelerated:
            self.accelerate()  # even one such query pays numpy's import back, if installed
        if self._accelerated and total >= _VECTOR_MIN_POSTINGS:
            return self._rank_vectorized(term_ids, k, keep, min_score, skip, weights)
        if weights is None and any(t in self._tier_of for t in term_ids):
            found = tiers.top_candidates(self._tiered_postings(term_ids), k, skip, keep)
            if found is not None:
                return self._top(found, k, None, min_score)
        if len(term_ids) > 1 and total >= _PRUNE_MIN_POSTINGS:
            return self._rank_pruned(term_ids, sizes, k, keep, min_score, skip, weights)
        acc = self._accumulate(term_ids, weights)
        for doc in skip:
            acc.pop(doc, None)
        return self._top(acc, k, keep, min_score)

    def _tiered_postings(self, term_ids: Sequence[int]) -> list[tiers.TermPostings]:
        """Each term's postings and tier, as :func:`tiers.top_candidates` reads them."""
        off, idocs, imp, positions = self._ioffsets, self._idocs, self._imp, self._tiers
        out: list[tiers.TermPostings] = []
        for t in term_ids:
            a, b = off[t], off[t + 1]
            tier = self._tier_of.get(t)
            if tier is None:
                out.append((idocs[a:b], imp[a:b], None))
            else:
                start, end, cut = tier
                out.append((idocs[a:b], imp[a:b], (positions[start:end], cut)))
        return out

    def _rank_vectorized(
        self,
        term_ids: Sequence[int],
        k: int,
        keep: Any,
        min_score: float | None,
        skip: set[int],
        weights: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """:meth:`_rank` with numpy (see :meth:`accelerate`), bit for bit the same.

        ``bincount`` adds each posting's impact into its tool's total in array order, and the
        postings are laid out in query order, so every total is the same sequence of float
        additions as :meth:`_accumulate`'s. Impacts are positive, so the tools with a nonzero
        total are exactly the matching ones. Only those tied with or above the k-th best
        (after the filters) reach :meth:`_top`, which breaks the ties by name.
        """
        np, docs, impacts = self._vectors()
        off = self._ioffsets
        spans = [(off[t], off[t + 1]) for t in term_ids]
        if weights is None:
            parts = [impacts[a:b] for a, b in spans]
        else:  # the same IEEE products as weight * impact in Python
            parts = [impacts[a:b] * w for (a, b), w in zip(spans, weights, strict=True)]
        totals = np.bincount(
            np.concatenate([docs[a:b] for a, b in spans]), weights=np.concatenate(parts)
        )
        if skip:
            ids = [doc for doc in skip if doc < len(totals)]
            totals[ids] = 0.0
        if keep is not None:
            found = (totals > 0.0).nonzero()[0]
            kept = np.fromiter(map(keep, found.tolist()), dtype=bool, count=len(found))
            totals[found[~kept]] = 0.0
        found, scores = _at_or_above_kth(np, totals, k)
        if min_score is not None:
            above = scores >= min_score
            found, scores = found[above], scores[above]
        return self._top(dict(zip(found.tolist(), scores.tolist(), strict=True)), k)

    def _vectors(self) -> tuple[Any, Any, Any]:
        """numpy, and the impact postings as numpy arrays (views, not copies), made once."""
        if self._vec is None:
            import numpy as np

            columns: tuple[Any, Any] = (self._idocs, self._imp)
            docs = np.frombuffer(columns[0], dtype=np.intc)
            impacts = np.frombuffer(columns[1], dtype=np.float64)
            self._vec = (np, docs, impacts)
        return self._vec

    def accelerate(self) -> bool:
        """Score queries over many postings with numpy from now on, if it is installed
        (``pip install 'toolfind[fast]'``); returns whether it is.

        Worth it in a process that answers many queries (the Python API, ``serve-mcp``):
        importing numpy costs about twice Python's start-up, once; then a query over tens of
        thousands of postings takes a fraction of a millisecond instead of several. Results
        are bit for bit those of the pure-Python path. The command line does not call this:
        one query per process would not pay the import back, except a query over a million
        postings or more, which calls this itself.
        """
        if _numpy() is None:
            return False
        if not self._accelerated:
            _raise_mmap_threshold(len(self.tools))
        self._accelerated = True
        return True

    def _rank_pruned(
        self,
        term_ids: Sequence[int],
        sizes: Sequence[int],
        k: int,
        keep: Any,
        min_score: float | None,
        skip: set[int],
        weights: Sequence[float] | None = None,
    ) -> list[tuple[int, float]]:
        """:meth:`_rank` without scanning the postings of terms that cannot change the top k.

        MaxScore (Turtle and Flood, 1995) in the given term order: after each term, if the
        k-th best partial score (a lower bound of the k-th best final score, impacts being
        positive) exceeds the sum of the largest impacts of the terms still to come, no tool
        that has not matched yet can reach the top k, nor can a tool whose partial score plus
        that sum stays below it. The remaining terms then only update the surviving
        candidates (:meth:`_update_survivors`), still in term order, so scores are bit for bit
        those of a full scan. A relative margin of 1e-9 keeps float rounding on the safe side.

        ``weights`` (one per term, for :meth:`similar`) multiply each term's impacts.
        """
        off, idocs, maxes = self._ioffsets, self._idocs, self._max
        if weights is None:
            bounds = [maxes[t] for t in term_ids]
        else:
            bounds = [w * maxes[t] for w, t in zip(weights, term_ids, strict=True)]
        rest = [0.0] * (len(term_ids) + 1)  # rest[j]: the most terms j... can add to a score
        later = [0] * (len(term_ids) + 1)
        for j in range(len(term_ids) - 1, -1, -1):
            rest[j] = rest[j + 1] + bounds[j]
            later[j] = later[j + 1] + sizes[j]
        acc: dict[int, float] = {}
        for j, t in enumerate(term_ids):
            a, b = off[t], off[t + 1]
            tiers.add_into(acc, idocs[a:b], self._weighted(a, b, weights, j))
            if j + 1 == len(term_ids) or later[j + 1] <= len(acc):
                continue  # checking would cost more than the scan it could save
            theta = self._kth(acc, k, keep, skip)
            if theta is None or rest[j + 1] >= theta * _PRUNE_MARGIN:
                continue
            floor = theta * _PRUNE_MARGIN - rest[j + 1]
            survivors = {
                d: score
                for d, score in acc.items()
                if score >= floor and d not in skip and (keep is None or keep(d))
            }
            if len(survivors) * 3 > later[j + 1]:
                continue  # as many candidates as postings left: scanning is cheaper
            for j2 in range(j + 1, len(term_ids)):
                weight = None if weights is None else weights[j2]
                self._update_survivors(survivors, term_ids[j2], weight)
                if len(survivors) > k:  # the k-th best partial score has grown: prune again
                    theta = heapq.nlargest(k, survivors.values())[-1]
                    floor = theta * _PRUNE_MARGIN - rest[j2 + 1]
                    survivors = {d: score for d, score in survivors.items() if score >= floor}
            return self._top(survivors, k, None, min_score)
        for doc in skip:
            acc.pop(doc, None)
        return self._top(acc, k, keep, min_score)

    def _update_survivors(self, survivors: dict[int, float], t: int, weight: float | None) -> None:
        """Add term ``t``'s impact (times ``weight``) to each survivor it occurs in: by binary
        search per survivor, or, for a term with few postings, by one pass over them."""
        off, idocs, imp = self._ioffsets, self._idocs, self._imp
        a, b = off[t], off[t + 1]
        if b - a <= 4 * len(survivors):
            for i in range(a, b):
                d = idocs[i]
                if d in survivors:
                    survivors[d] += imp[i] if weight is None else weight * imp[i]
            return
        for d in survivors:
            i = bisect_left(idocs, d, a, b)
            if i < b and idocs[i] == d:
                survivors[d] += imp[i] if weight is None else weight * imp[i]

    def _kth(self, acc: dict[int, float], k: int, keep: Any, skip: set[int]) -> float | None:
        """The k-th largest score of ``acc`` among the tools that may be returned, if any."""
        scores: Collection[float]
        if keep is None and not skip:
            scores = acc.values()
        else:
            scores = [s for d, s in acc.items() if d not in skip and (keep is None or keep(d))]
        if len(scores) < k:
            return None
        return heapq.nlargest(k, scores)[-1]

    def _top(
        self,
        acc: dict[int, float],
        k: int,
        keep: Any = None,
        min_score: float | None = None,
    ) -> list[tuple[int, float]]:
        """The k best (doc, score) of ``acc`` that pass the filters, ties by name, namespace."""
        if k <= 0:
            return []
        if keep is not None or min_score is not None:
            acc = {
                d: s
                for d, s in acc.items()
                if (keep is None or keep(d)) and (min_score is None or s >= min_score)
            }
        if len(acc) <= k:
            items = list(acc.items())
        else:
            # Every tool tied with the k-th score stays in, so that names decide the ties.
            threshold = heapq.nlargest(k, acc.values())[-1]
            items = [(d, s) for d, s in acc.items() if s >= threshold]
        rank = self._rank_of
        items.sort(key=lambda ds: (-ds[1], rank[ds[0]]))
        return items[:k]

    def _doc_scales(self, doc: int) -> list[float]:
        params = self.params
        return [
            bm25f.field_scale(w, self._lengths[fi][doc], self._avg[fi], params.b_for(f))
            if w > 0.0
            else 0.0
            for fi, (f, w) in enumerate(zip(FIELDS, self._weights, strict=True))
        ]

    def _explain(
        self, doc: int, matched: Sequence[tuple[str, int]]
    ) -> tuple[TermContribution, ...]:
        """Each matched term's share of the hit's score, split across the fields it occurs in.

        A term's impact ``idf * ((k1+1) tf~ / (k1 + tf~) + delta)`` is divided among its
        fields in proportion to their parts ``tf_f * w_f / B_f`` of ``tf~``, so idf, the
        saturation and the BM25+ delta are all attributed pro rata: the contributions of a
        hit add up to its score (up to float rounding).
        """
        scales = self._doc_scales(doc)
        out: list[TermContribution] = []
        for term, t in matched:
            j = self._posting(doc, t)
            if j < 0:
                continue
            p = bisect_left(self._docs, doc, self._offsets[t], self._offsets[t + 1])
            vec = self._tfvecs[self._pair_vec[self._pairs[p]]]
            total = bm25f.pseudo_tf(vec, scales)
            for fi, field_name in enumerate(FIELDS):
                tf = vec[fi]
                if not tf or scales[fi] <= 0.0:
                    continue
                out.append(
                    TermContribution(
                        term=term,
                        field=field_name,
                        tf=float(tf),
                        idf=self._idf[t],
                        length_norm=bm25f.length_norm(
                            self._lengths[fi][doc], self._avg[fi], self.params.b_for(field_name)
                        ),
                        weight=self._weights[fi],
                        score=self._imp[j] * (tf * scales[fi]) / total,
                    )
                )
        return tuple(out)

    # ------------------------------------------------------------------ similar, browse

    def similar(self, name: str, limit: int = 5) -> list[Similar]:
        """Tools sharing weighted terms with the tool ``name`` names (itself excluded).

        The tool's own terms form the query, each weighted by its saturated pseudo term
        frequency in the tool, ``(k1+1) tf~ / (k1 + tf~)``; another tool scores the sum of
        weight x impact over the terms they share, added in order of the most a term can
        add (weight x its largest impact, descending; then by term), which lets MaxScore
        pruning skip most postings of common words. ``shared_terms`` lists those terms, most
        contributing first. Raises like :meth:`resolve`.
        """
        doc = self._resolve_id(name)
        fields = field_terms(self.tools[doc])
        vecs: dict[str, list[int]] = {}
        for fi, terms in enumerate(fields):
            for term in terms:
                vecs.setdefault(term, [0] * len(FIELDS))[fi] += 1
        params = self.params
        scales = [
            bm25f.field_scale(w, len(fields[fi]), self._avg[fi], params.b_for(f))
            if w > 0.0
            else 0.0
            for fi, (f, w) in enumerate(zip(FIELDS, self._weights, strict=True))
        ]
        off = self._ioffsets
        k1 = params.k1
        # (-(weight x largest impact), term, weight, term id): the terms that can add the most
        # come first, so that pruning can skip the long postings of common words.
        order: list[tuple[float, str, float, int]] = []
        for term in vecs:
            t = self._terms.find(term)
            tf = bm25f.pseudo_tf(vecs[term], scales)
            if t is None or tf <= 0.0 or off[t + 1] <= off[t]:
                continue
            weight = bm25f.saturate(tf, k1, 0.0)
            order.append((-(weight * self._max[t]), term, weight, t))
        order.sort()
        term_ids = [t for *_, t in order]
        weights = [weight for _, _, weight, _ in order]
        top = self._rank(term_ids, limit, None, None, {doc}, weights)
        out = []
        for d, score in top:
            parts = []
            for _, term, weight, t in order:
                j = self._posting(d, t)
                if j >= 0:
                    parts.append((weight * self._imp[j], term))
            parts.sort(key=lambda ct: (-ct[0], ct[1]))
            out.append(Similar(self.tools[d], score, tuple(term for _, term in parts)))
        return out

    def categories(self) -> list[Category]:
        """Namespaces of the enabled tools, by name: tool and deferred counts, top 5 tags
        (most common first, ties by tag)."""
        return [Category(*row) for row in self._categories]

    def listed(
        self,
        namespace: str | None = None,
        tags: Sequence[str] = (),
        deferred: bool | None = None,
    ) -> list[Tool]:
        """Enabled tools in catalog order (``list``): of exactly this namespace, carrying
        every tag given (annotation tags count), deferred or not (None: either)."""
        wanted = set(tags)
        return [
            t
            for t in self.tools
            if t.enabled
            and (namespace is None or t.namespace == namespace)
            and (deferred is None or t.defer == deferred)
            and (not wanted or wanted <= set(t.all_tags))  # all_tags costs: only when asked
        ]

    def summaries(self, deferred: bool | None = True) -> list[Tool]:
        """Enabled tools in catalog order: only deferred ones (True), all (None), or only
        the ones not deferred (False)."""
        tools = self.tools
        want = None if deferred is None else (_DEFERRED if deferred else 0)
        return [
            tools[doc]
            for doc, flags in enumerate(self._flags)
            if flags & _ENABLED and (want is None or flags & _DEFERRED == want)
        ]


class _Metadata:
    """What a build needs of each tool besides its terms, gathered in one pass."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.names: list[str] = []
        self.namespaces: list[str] = []
        self.flags: list[int] = []
        self.tags: list[tuple[str, ...]] = []
        self.aliases: dict[int, tuple[str, ...]] = {}
        self.keys: dict[str, list[int]] = {}
        self.tag_ids: dict[str, list[int]] = {}
        self.n_enabled = 0
        # namespace -> [tools, deferred, tag counts] over the enabled tools
        self._counts: dict[str, tuple[list[int], Counter[str]]] = {}
        key_of = analysis.name_key
        for doc, tool in enumerate(tools):
            name, namespace, aliases, enabled = (
                tool.name,
                tool.namespace,
                tool.aliases,
                tool.enabled,
            )
            tags = tool.all_tags
            self.names.append(name)
            self.namespaces.append(namespace)
            self.tags.append(tags)
            self.flags.append(enabled * _ENABLED | tool.defer * _DEFERRED)
            if aliases:
                self.aliases[doc] = aliases
                spellings = {key_of(spelling) for spelling in (name, *aliases)} - {""}
            else:
                spellings = {key_of(name)} - {""}
            for key in spellings:
                self.keys.setdefault(key, []).append(doc)
            if tags:
                for key in {key_of(tag) for tag in tags} - {""}:
                    self.tag_ids.setdefault(key, []).append(doc)
            if enabled:
                self.n_enabled += 1
                counts = self._counts.get(namespace)
                if counts is None:
                    counts = self._counts[namespace] = ([0, 0], Counter())
                counts[0][0] += 1
                counts[0][1] += tool.defer
                if tags:
                    counts[1].update(tags)

    def categories(self) -> tuple[tuple[str, int, int, tuple[str, ...]], ...]:
        """Per namespace of the enabled tools, by name: tool count, deferred count, top tags."""
        out = []
        for ns in sorted(self._counts):
            (n, deferred), tag_counts = self._counts[ns]
            top = sorted(tag_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:_TOP_TAGS]
            out.append((ns, n, deferred, tuple(t for t, _ in top)))
        return tuple(out)
