"""The search index: analysed tools, their BM25F(+) impacts, and every question asked of them.

Layout: flat columns (:mod:`toolfind.store.columns`) and a few small builtins:

* ``_terms`` holds every term, sorted; a term's id is its position.
* Postings are flat, term-major arrays (CSR): term ``t``'s sit at ``_offsets[t]:_offsets[t + 1]``
  in ``_docs`` (ascending tool ids) and ``_pairs``. A pair is one tool with one per-field
  term-frequency vector (``_pair_doc``, ``_pair_vec`` into ``_tfvecs``, the distinct vectors),
  so re-weighting costs per pair, then one pass per posting.
* ``_lengths[f][doc]`` is field ``f``'s analysed length; ``_avg[f]`` its mean over the tools
  where the field is not empty.
* Per tool: ``_names``, ``_flags`` (enabled, deferred), ``_ns_ids`` (into ``_namespaces``),
  ``_rank_of`` (position by name, for ties); ``_keys`` and ``_tag_ids`` map name and tag keys
  to tool ids. ``tools`` is a tuple once built, a lazily decoded ``ToolTable`` once loaded.
* For the current :class:`ScoringParams`, ``_imp`` holds each posting's impact, aligned with
  ``_idocs``/``_ioffsets`` (the structural arrays unless a zero weight drops postings).

Disabled tools keep their doc id but get no postings: they count in no statistic and no search
returns them; ``resolve`` still finds them. The index is built by :mod:`toolfind.store.build`
and is a postings source for :mod:`toolfind.core.search` (:meth:`SearchIndex.postings` and
the methods after it).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence

from toolfind.core import analysis, bm25f, confidence, filters, suggest
from toolfind.core import search as searching
from toolfind.core.synonyms import Table as SynonymTable
from toolfind.errors import AmbiguousName, ModelUnavailable, SemanticUnavailable, ToolNotFound
from toolfind.models import (
    FIELDS,
    Category,
    Hit,
    ScoringParams,
    SearchResult,
    Similar,
    TermContribution,
    Tool,
)
from toolfind.store import build as builder
from toolfind.store.build import field_terms
from toolfind.store.columns import KeyedIds, StringTable, ToolTable, pack, unpack

# typing costs a warm command a good part of its start-up: only the type checker reads it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from toolfind.core.search import Matched, TermPostings
    from toolfind.models import MatchKind
    from toolfind.store.rerank import Reranker
    from toolfind.store.vectors import SemanticSignal


#: Version of the pickled layout; bump it whenever the slots or their meaning change.
INDEX_FORMAT = 6

#: A query over this many postings is scored with numpy even in a one-shot process, if numpy
#: is installed: importing it costs about what adding up 300k postings in Python does.
_IMPORT_PAYS_BACK = 1_000_000


#: ``similar`` searches with at most this many of the tool's terms, those that can add the
#: most (docs/ARCHITECTURE.md, "The measurements behind the smaller tricks").
SIMILAR_TERMS = 24

#: ``similar`` reads at most this many postings: the strongest terms are taken in order while
#: their postings fit (a term that would pass it is left out, a rarer one after it may still
#: fit): its weighted terms have no tiers to skip by, so every posting read is added up.
SIMILAR_POSTINGS = 32_768

#: Slots holding one column each (an array when built, a memoryview when loaded).
_COLUMNS = frozenset(
    "_docs _flags _idf _idocs _imp _ioffsets _max _ns_ids _offsets _pair_doc _pair_vec _pairs "
    "_rank_of _text_keys _tiers _key_ends".split()
)
#: Slots that are a choice of this process, not part of the index.
_TRANSIENT = ("_accelerated", "_rerank", "_semantic", "_views", "_vocab")


class SearchIndex:
    """BM25F(+) index over a sequence of tools; see the module docstring for the layout."""

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
    _key_ends: Sequence[int]
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
    _expansions: SynonymTable
    _accelerated: bool
    _text_keys: Sequence[int]  # each tool's 16-byte key in the vector store (zeros: disabled)
    _semantic: SemanticSignal | None
    _rerank: Reranker | None
    _views: tuple[memoryview, memoryview, memoryview] | None
    _vocab: frozenset[str] | None
    __slots__ = tuple(sorted(__annotations__))  # every attribute annotated above

    @classmethod
    def build(
        cls,
        tools: Sequence[Tool],
        params: ScoringParams | None = None,
        *,
        progress: Callable[[int, int], object] | None = None,
    ) -> SearchIndex:
        """Analyse every enabled tool and compute impacts for ``params`` (defaults if None).
        ``tools`` may be a :class:`ToolTable`, which the index keeps (decoding each tool on use).
        ``progress``, if given, is called with (tools analysed, tools) as the analysis goes.

        Raises ConfigError when ``params`` holds a negative weight, k1 or delta, or a b
        outside [0, 1] or for an unknown field.
        """
        params = ScoringParams() if params is None else params
        builder.check_params(params)
        self = cls.__new__(cls)
        # A ToolTable (the marshalled tools) is read one tool at a time, none kept: a build
        # then never holds every tool's objects (cache.load_index builds from one).
        self.tools = tools = tools if isinstance(tools, ToolTable) else tuple(tools)
        self.format = INDEX_FORMAT
        self.settings = analysis.SETTINGS
        every = tools.each(range(len(tools))) if isinstance(tools, ToolTable) else tools
        meta, analysed = builder.gather(every, len(tools), progress)
        terms = sorted(analysed.pair_lists)
        self._terms = StringTable.of(terms)
        self._pairs, self._docs, self._offsets = analysed.postings(terms)
        del terms
        self._pair_vec = analysed.pair_vec
        self._pair_doc = analysed.pair_doc
        self._tfvecs = analysed.tf_vectors()
        self._lengths = lengths = analysed.lengths
        avg = []
        for field_lengths in lengths:
            used = [x for x in field_lengths if x]
            avg.append(sum(used) / len(used) if used else 0.0)
        self._avg = tuple(avg)
        self._n = meta.n_enabled
        self._flags = array("B", meta.flags)
        self._text_keys = bytes(meta.text_keys)
        self._names = StringTable.of(meta.names)
        # Ties break by (name, namespace): a tool's position in that order, compared as an int.
        names, namespaces = meta.names, meta.namespaces
        by_name = sorted(range(len(tools)), key=lambda d: (names[d], namespaces[d], d))
        self._rank_of = array("i", bytes(4 * len(by_name)))
        for position, doc in enumerate(by_name):
            self._rank_of[doc] = position
        self._namespaces = tuple(sorted(set(namespaces)))
        ns_ids = {ns: i for i, ns in enumerate(self._namespaces)}
        self._ns_ids = array("I", map(ns_ids.__getitem__, namespaces))
        self._ns_keys = tuple(map(analysis.name_key, self._namespaces))
        self._keys = KeyedIds.of(meta.keys)
        self._key_ends = array("i", suggest.by_ends(sorted(meta.keys)))
        self._tag_ids = KeyedIds.of(meta.tag_ids)
        self._aliases = meta.aliases
        self._categories = meta.categories()
        self._accelerated = False
        self._semantic = None
        self._rerank = None
        self._vocab = None
        self._apply(params)
        return self

    def __getstate__(self) -> dict[str, Any]:
        """The slots, columns packed for pickle, tools as a :class:`ToolTable`."""
        state = {slot: getattr(self, slot) for slot in self.__slots__ if slot not in _TRANSIENT}
        for slot in _COLUMNS:
            state[slot] = pack(state[slot])
        state["_lengths"] = tuple(map(pack, self._lengths))
        if not isinstance(self.tools, ToolTable):
            state["tools"] = ToolTable.of(self.tools)
        state["_expansions"] = self._expansions.plain()  # plain containers: no class to allow
        # Without zero weights the impact postings are the structural ones: store them once.
        if self._idocs is self._docs:
            state["_idocs"] = None
        if self._ioffsets is self._offsets:
            state["_ioffsets"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._accelerated, self._views, self._semantic, self._vocab = False, None, None, None
        self._rerank = None
        for slot in self.__slots__:
            if slot not in _TRANSIENT:
                setattr(self, slot, unpack(state[slot]))
        self._lengths = tuple(map(unpack, self._lengths))
        self._expansions = SynonymTable.from_plain(self._expansions)
        if state["_idocs"] is None:
            self._idocs = self._docs
        if state["_ioffsets"] is None:
            self._ioffsets = self._offsets

    def check(self) -> None:
        """Raise ValueError unless the columns agree in length (an index read from disk)."""
        n = len(self.tools)
        per_tool = (self._flags, self._rank_of, self._names, self._ns_ids, *self._lengths)
        n_terms = len(self._terms)
        if (
            self.format != INDEX_FORMAT
            or any(len(c) != n for c in per_tool)
            or len(self._lengths) != len(FIELDS)
            or len(self._text_keys) != 16 * n
            or len(self._offsets) != n_terms + 1
            or len(self._ioffsets) != n_terms + 1
            or len(self._idf) != n_terms
            or len(self._max) != n_terms
            or self._offsets[-1] != len(self._docs)
            or len(self._docs) != len(self._pairs)
            or self._ioffsets[-1] != len(self._idocs)
            or len(self._idocs) != len(self._imp)
            or len(self._pair_vec) != len(self._pair_doc)
            or len(self._key_ends) != len(self._keys)
            or any(
                not (0 <= t < n_terms and 0 <= a <= b <= len(self._tiers))
                for t, (a, b, _) in self._tier_of.items()
            )
        ):
            raise ValueError("the index's columns disagree")

    def with_params(self, params: ScoringParams) -> SearchIndex:
        """The same analysed tools scored with other parameters; raises like :meth:`build`."""
        builder.check_params(params)
        other = SearchIndex.__new__(SearchIndex)
        for slot in SearchIndex.__slots__:
            setattr(other, slot, getattr(self, slot))
        other._apply(params)
        return other

    def _apply(self, params: ScoringParams) -> None:
        """Compute every posting's impact for ``params`` (:func:`toolfind.store.build.weigh`)
        and the synonym expansions (the shipped table and ``params.synonyms``) of the terms
        some tool has."""
        self.params = params
        self._views = None
        for slot, value in builder.weigh(self, params).items():
            setattr(self, slot, value)
        off = self._ioffsets
        terms = self._terms

        def known(term: str) -> bool:
            t = terms.find(term)
            return t is not None and off[t + 1] > off[t]

        self._expansions = builder.expansions(known, params.synonyms)

    def impacts(self) -> dict[str, tuple[Sequence[int], Sequence[float]]]:
        """Per term with at least one posting: ascending tool ids and the impact in each."""
        out: dict[str, tuple[Sequence[int], Sequence[float]]] = {}
        off = self._ioffsets
        for t, term in enumerate(self._terms):
            a, b = off[t], off[t + 1]
            if b > a:
                out[term] = (self._idocs[a:b], self._imp[a:b])
        return out

    def __len__(self) -> int:
        return len(self.tools)

    def exact_ids(self, query: str) -> list[int]:
        """Ids of the tools ``query`` names by ``show``'s rules (disabled ones included)."""
        ns_ids, ns_keys, keys = self._ns_ids, self._ns_keys, self._keys
        return analysis.lookup_name(
            query,
            lambda key: keys.get(key, ()),
            self._names.__getitem__,
            lambda d: ns_keys[ns_ids[d]],
        )

    def ids_with_key(self, key: str) -> Sequence[int]:
        """Ids of the tools whose name or an alias has the `analysis.name_key` ``key``."""
        return self._keys.get(key, ())

    def resolve(self, name: str) -> Tool:
        """The one tool ``name`` names: exact name, then name key or alias, then ``ns/tool``.

        Raises AmbiguousName (listing ``namespace/name`` candidates) when several tools
        answer, ToolNotFound with close names as suggestions when none does.
        """
        return self.tools[self._resolve_id(name)]

    def _resolve_id(self, name: str) -> int:
        ids = self.exact_ids(name)
        if len(ids) == 1:
            return ids[0]
        if ids:
            raise AmbiguousName(name, sorted(self.tools[i].qualified_name for i in ids))
        raise ToolNotFound(name, self._suggest(name))

    get = resolve

    def _suggest(self, name: str) -> list[str]:
        return suggest.suggestions(self, name)

    # What ``core.suggest`` asks of an index (``suggest.Names``): the tools, disabled ones
    # too; the name keys in sorted order, and their positions in the order of their ends.

    @property
    def tool_count(self) -> int:
        return len(self._names)

    def key_count(self) -> int:
        return len(self._keys)

    def key_at(self, i: int) -> str:
        return self._keys.key_at(i)

    def ids_between(self, i: int, j: int) -> Sequence[int]:
        return self._keys.ids_between(i, j)

    def key_end_at(self, i: int) -> int:
        return int(self._key_ends[i])

    def spellings(self, doc: int) -> tuple[str, str, Sequence[str]]:
        return self._names[doc], self._namespaces[self._ns_ids[doc]], self._aliases.get(doc, ())

    def unknown_filters(self, namespace: str | None, tags: Sequence[str] = ()) -> str:
        """One line naming a ``--namespace`` or ``--tag`` that no tool has (namespaces and
        tags compare as the filters do), with close names; "" when every one is known."""
        problems = []
        if namespace is not None and analysis.name_key(namespace) not in self._ns_keys:
            close = analysis.close_names(namespace, self._namespaces)
            problems.append(_unknown("namespace", namespace, close))
        for tag in tags:
            key = analysis.name_key(tag)
            if not key or self._tag_ids.get(key):
                continue
            keys = analysis.close_names(key, self._tag_ids)
            close = [self._tag_of(k) for k in keys]
            problems.append(_unknown("tag", tag, close))
        return "; ".join(problems)

    def vocabulary(self) -> dict[str, tuple[str, ...]]:
        """The namespaces and the tags (as tools spell them, the annotations' included) of
        the index, sorted: what the shell completes ``--namespace`` and ``--tag`` with (the
        index file keeps them for it, ``segment.directory``)."""
        tags = {self._tag_of(key) for key in self._tag_ids}
        return {"namespace": self._namespaces, "tag": tuple(sorted(tags))}

    def _tag_of(self, key: str) -> str:
        """The tag as a tool of the index spells it, for a tag key."""
        tool = self.tools[self._tag_ids[key][0]]
        return next((t for t in tool.all_tags if analysis.name_key(t) == key), key)

    def _filter(self, namespace: str | None, tags: Sequence[str] | None) -> Any:
        """A predicate on tool ids for ``--namespace`` and ``--tag`` (one tag: a string), by
        the rule of :mod:`toolfind.core.filters`; None for no filter."""
        ns_ids, ns_keys = self._ns_ids, self._ns_keys
        tag_list = [tags] if isinstance(tags, str) else list(tags or ())
        return filters.options_rule(namespace, tag_list).over_ids(
            lambda doc: ns_keys[ns_ids[doc]], lambda key: self._tag_ids.get(key, ())
        )

    def search(
        self,
        query: str,
        limit: int = 10,
        *,
        namespace: str | None = None,
        tags: Sequence[str] | None = (),
        min_score: float | None = None,
        min_confidence: float | None = None,
        explain: bool = False,
        semantic: bool | None = None,
        rerank: bool | None = None,
    ) -> SearchResult:
        """The tools best matching ``query``: named tools first (``match="exact"``, by
        namespace then name), then the rest by (-score, name, namespace); at most ``limit``.

        ``namespace`` and ``tags`` filter by :mod:`toolfind.core.filters`' rule; ``min_score``
        drops ranked hits scoring less, ``min_confidence`` hits less sure (each hit's
        ``confidence``: :mod:`toolfind.core.confidence`); ``explain`` fills each hit's
        ``explanation``. With the semantic signal attached (:meth:`use_semantic`) and
        ``semantic`` not False, scores are fused (:mod:`toolfind.core.fusion`, in [0, 1]);
        ``semantic=True`` without it raises SemanticUnavailable. With the rerank stage
        attached (:meth:`use_reranker`) and ``rerank`` not False, the first stage's top
        candidates are re-scored (:mod:`toolfind.store.rerank`; each hit's ``similarity`` is
        the reranker's cosine); ``rerank=True`` without it raises ModelUnavailable. See
        :func:`toolfind.core.search.run` for the rest.
        """
        keep = self._filter(namespace, tags)
        stage = self._rerank if rerank is not False else None
        if stage is not None and not stage.ready():  # said once; the first stage answers
            stage = None
        elif rerank and stage is None:
            from toolfind.semantic.models import fetch_hint

            raise ModelUnavailable(fetch_hint())
        signal = self._semantic if semantic is not False else None
        if semantic and signal is None:
            from toolfind.semantic import INSTALL_HINT

            raise SemanticUnavailable(INSTALL_HINT)
        staged = self.ranking(
            query,
            confidence.probe(limit),
            keep=keep,
            min_score=min_score,
            signal=signal,
            stage=stage,
        )
        found, scale, mix = staged.found, staged.scale, staged.mix
        term_ids = []
        if explain:
            term_ids = [(m, t) for m in found.matched if (t := self._terms.find(m[0])) is not None]

        def hit(
            match: MatchKind,
            doc: int,
            score: float,
            part: float,
            context: float,
            similarity: float | None,
            sure: float,
        ) -> Hit:
            explanation: tuple[TermContribution, ...] = ()
            if explain:
                share = 1.0 if found.agree is None or match == "exact" else found.agree(doc)
                explanation = self._explain(doc, term_ids, share)
                if signal is not None:
                    explanation = signal.explained(explanation, scale, part)
                if stage is not None:
                    explanation = stage.explained(explanation, mix, context, similarity or 0.0)
            return Hit(self.tools[doc], score, match, explanation, sure, similarity)

        made = confidence.finish(staged.exact, staged.ranked, staged.confidences(), limit, hit)
        if min_confidence is not None:
            made = [h for h in made if h.confidence >= min_confidence]
        corrections = tuple(found.corrections.items())
        ran = {"semantic": staged.semantic is not None, "rerank": staged.cosines is not None}
        stages = ("lexical", *(name for name, on in ran.items() if on))
        return SearchResult(query, tuple(made), found.unmatched, corrections, stages)

    def why(self, query: str, name: str) -> tuple[Tool, list[str], tuple[TermContribution, ...]]:
        """``search --why``: :meth:`resolve`'s tool, the query's words, its BM25F explain rows."""
        doc, found = self._resolve_id(name), searching.run(self, query, 0)
        terms = [(m, t) for m in found.matched if (t := self._terms.find(m[0])) is not None]
        share = found.agree(doc) if found.agree else 1.0
        return self.tools[doc], list(found.words), self._explain(doc, terms, share)

    def ranking(
        self,
        query: str,
        limit: int,
        *,
        keep: Callable[[int], bool] | None = None,
        min_score: float | None = None,
        signal: SemanticSignal | None = None,
        stage: Reranker | None = None,
    ) -> confidence.Ranking:
        """What :meth:`search` ranks before it says how sure each hit is and cuts: at most
        ``limit`` hits of ``query``, by the first stage (BM25F with typos, synonyms and action
        agreement, or fused with the semantic ``signal``), then re-scored by the rerank
        ``stage`` when given (which takes its candidates from the first stage and cuts
        itself). ``benchmarks/calibrate.py`` fits the confidence models on it."""
        first_limit, first_min = (
            (limit, min_score) if stage is None else (max(limit, stage.depth), None)
        )
        exact: Sequence[tuple[Any, ...]]
        ranked: Sequence[tuple[Any, ...]]
        if signal is None:
            found = searching.run(self, query, first_limit, keep=keep, min_score=first_min)
            exact = [(d, score, 0.0) for d, score in found.exact]
            ranked = [(d, score, 0.0) for d, score in found.ranked]
            scale = 1.0
        else:
            found, exact, ranked, scale = signal.run(self, query, first_limit, keep, first_min)
        sims: dict[int, float] = {}
        if signal is not None:  # each first-stage hit's similarity, before a reranker reorders
            sims = dict(zip([e[0] for e in ranked], signal.similarities(ranked), strict=True))
        mix, cosines = (0.0, 0.0), None
        if stage is not None:
            reranked = stage.run(self, query, exact, ranked, limit, min_score)
            if reranked is None:  # the model failed: off now, the first stage answers
                return self.ranking(query, limit, keep=keep, min_score=min_score, signal=signal)
            exact, ranked, mix = reranked
            cosines = [0.0 if e[4] is None else e[4] for e in ranked]
        else:
            exact = [(*e, 0.0, None) for e in exact]
            ranked = [(*e, 0.0, None) for e in ranked]
        semantic = None if signal is None else [sims.get(e[0], 0.0) for e in ranked]
        return confidence.Ranking(found, exact, ranked, scale, mix, semantic, cosines)

    def use_semantic(self, signal: SemanticSignal | None) -> None:
        """Fuse the semantic signal (over this index's tools) into every search from now on;
        None turns it off."""
        self._semantic = signal

    @property
    def semantic(self) -> SemanticSignal | None:
        return self._semantic

    def use_reranker(self, stage: Reranker | None) -> None:
        """Re-score every search's top candidates with ``stage`` from now on; None: off."""
        self._rerank = stage

    @property
    def reranker(self) -> Reranker | None:
        return self._rerank

    def text_key(self, doc: int) -> bytes:
        """Tool ``doc``'s key in the vector store (``store.vectors``): its text's."""
        return bytes(self._text_keys[16 * doc : 16 * doc + 16])

    def postings(self, term: str) -> TermPostings | None:
        """The term's postings for :func:`toolfind.core.search.run` (views, not copies)."""
        t = self._terms.find(term)
        if t is None:
            return None
        return self._postings_at(t)

    def known(self, terms: list[str]) -> frozenset[str]:
        """Those of ``terms`` in the vocabulary (a typo's candidates): a set intersection, the
        set made on the first typo lookup (a process answering many queries pays once)."""
        vocab = self._vocab
        if vocab is None:
            vocab = self._vocab = frozenset(self._terms)
        return vocab.intersection(terms)

    def _postings_at(self, t: int) -> TermPostings | None:
        a, b = self._ioffsets[t], self._ioffsets[t + 1]
        if b <= a:
            return None
        views = self._views
        if views is None:
            views = self._views = (
                memoryview(self._idocs),  # type: ignore[arg-type]
                memoryview(self._imp),  # type: ignore[arg-type]
                memoryview(self._tiers),  # type: ignore[arg-type]
            )
        tier = self._tier_of.get(t)
        return (
            views[0][a:b],
            views[1][a:b],
            None if tier is None else (views[2][tier[0] : tier[1]], tier[2]),
            self._max[t],
        )

    named = exact_ids

    def synonym_table(self) -> SynonymTable:
        """The synonym groups a query's words are looked up in (:mod:`toolfind.core.synonyms`)."""
        return self._expansions

    def enabled(self, doc: int) -> bool:
        return bool(self._flags[doc] & builder.ENABLED)

    def action(self, doc: int) -> int:
        """The tool's action class (:func:`toolfind.core.actions.tool_class`'s bits)."""
        return int(self._flags[doc])

    def exact_key(self, doc: int) -> tuple[str, str]:
        """(namespace, name): the order of exact hits."""
        return self._namespaces[self._ns_ids[doc]], self._names[doc]

    def tie_key(self, doc: int) -> int:
        """The tool's position by (name, namespace, id): the order of tied scores."""
        return self._rank_of[doc]

    def numpy(self, postings: int) -> Any:
        """numpy once :meth:`accelerate` turned it on (a query over ``_IMPORT_PAYS_BACK``
        postings does so itself), else None."""
        if postings >= _IMPORT_PAYS_BACK and not self._accelerated:
            self.accelerate()
        return builder.numpy() if self._accelerated else None

    def _posting(self, doc: int, t: int) -> int:
        """Where tool ``doc``'s impact for term ``t`` is in the impact columns, or -1."""
        a, b = self._ioffsets[t], self._ioffsets[t + 1]
        j = bisect_left(self._idocs, doc, a, b)
        return j if j < b and self._idocs[j] == doc else -1

    def accelerate(self) -> bool:
        """Score queries over many postings with numpy from now on, if it is installed
        (``pip install 'toolfind[fast]'``); returns whether it is. Results are bit for bit
        the pure-Python path's. Worth it in a process that answers many queries (the API,
        ``serve-mcp``): the import costs about twice Python's start-up, once."""
        if builder.numpy() is None:
            return False
        if not self._accelerated:
            # Freeing one mapped block larger than a query's arrays raises glibc's mmap
            # threshold to its size: those arrays then come from the heap, not from fresh,
            # page-faulted maps per query. (calloc: no page of the block is touched.)
            bytes(min(max(4 << 20, 64 * len(self.tools)), 31 << 20))
        self._accelerated = True
        return True

    def _scales(self, lengths: Sequence[int]) -> list[float]:
        """Per field, :func:`bm25f.field_scale` of a tool with these field lengths."""
        b_for, avg = self.params.b_for, self._avg
        return [
            bm25f.field_scale(w, lengths[fi], avg[fi], b_for(f)) if w > 0.0 else 0.0
            for fi, (f, w) in enumerate(zip(FIELDS, self._weights, strict=True))
        ]

    def _explain(
        self, doc: int, matched: Sequence[tuple[Matched, int]], share: float = 1.0
    ) -> tuple[TermContribution, ...]:
        """Each matched term's share of the hit's score, split across its fields in
        proportion to their parts ``tf_f * w_f / B_f`` of ``tf~``, times ``share`` (the
        tool's action-agreement factor): the contributions of a hit add up to its score (up
        to float rounding). A term is shown as the query's word, or, for a typo or a synonym,
        as the word of the tool it stood for ("email" for "emial"), ``query_word`` saying
        which query word it answers."""
        scales = self._scales([column[doc] for column in self._lengths])
        out: list[TermContribution] = []
        tool_words: dict[str, str] | None = None
        for (term, asked, factor, how, _), t in matched:
            j = self._posting(doc, t)
            if j < 0:
                continue
            word = asked
            if how != searching.AS_WRITTEN:
                if tool_words is None:
                    tool_words = builder.field_words(self.tools[doc])
                word = tool_words.get(term, term)
            p = bisect_left(self._docs, doc, self._offsets[t], self._offsets[t + 1])
            vec = self._tfvecs[self._pair_vec[self._pairs[p]]]
            total = bm25f.pseudo_tf(vec, scales)
            for fi, field_name in enumerate(FIELDS):
                tf = vec[fi]
                if not tf or scales[fi] <= 0.0:
                    continue
                out.append(
                    TermContribution(
                        term=word,
                        field=field_name,
                        tf=float(tf),
                        idf=self._idf[t],
                        length_norm=bm25f.length_norm(
                            self._lengths[fi][doc], self._avg[fi], self.params.b_for(field_name)
                        ),
                        # The weight as the user set it (``_weights`` are rescaled).
                        weight=getattr(self.params.weights, field_name),
                        score=share * factor * self._imp[j] * (tf * scales[fi]) / total,
                        query_word=asked,
                    )
                )
        return tuple(out)

    def similar(self, name: str, limit: int = 5) -> list[Similar]:
        """Tools sharing weighted terms with the tool ``name`` names (itself excluded).

        The tool's own terms form the query, each weighted by its saturated pseudo term
        frequency in the tool, ``(k1+1) tf~ / (k1 + tf~)`` (its own fields' weights count
        there: a word of a parameter description weighs less than a word of the name), times
        ``build.SIMILAR_NAME`` for a term of its name, leaving out the terms ``build.similar_term``
        refuses; only the :data:`SIMILAR_TERMS` that can add the most (weight x largest impact) are
        kept, their postings within :data:`SIMILAR_POSTINGS`: a tool with long parameter
        descriptions would otherwise search for every common word it holds; another tool scores the sum of weight x impact over the terms
        they share. ``shared_terms`` lists those terms as words written in the tool
        (``directory``, not the stem ``directori``), most contributing first, each adding at
        least ``build.SHARED_SHARE`` of the score (the first always). Raises like
        :meth:`resolve`.
        """
        doc = self._resolve_id(name)
        fields = field_terms(self.tools[doc])
        vecs: dict[str, list[int]] = {}
        for fi, terms in enumerate(fields):
            for term in terms:
                vecs.setdefault(term, [0] * len(FIELDS))[fi] += 1
        scales = self._scales([len(terms) for terms in fields])
        off = self._ioffsets
        k1 = self.params.k1
        # (-(weight x largest impact), term, weight, term id): the terms that can add the most
        # come first, so that pruning can skip the long postings of common words.
        order: list[tuple[float, str, float, int]] = []
        for term in vecs:
            if not builder.similar_term(term, vecs[term]):
                continue
            t = self._terms.find(term)
            tf = bm25f.pseudo_tf(vecs[term], scales)
            if t is None or tf <= 0.0 or off[t + 1] <= off[t]:
                continue
            weight = bm25f.saturate(tf, k1, 0.0) * (builder.SIMILAR_NAME if vecs[term][0] else 1.0)
            order.append((-(weight * self._max[t]), term, weight, t))
        order.sort()
        chosen: list[tuple[float, str, float, int]] = []
        read = 0
        for entry in order:
            n = off[entry[3] + 1] - off[entry[3]]
            if chosen and read + n > SIMILAR_POSTINGS:
                continue  # a common word past the budget: a rarer term may still fit
            chosen.append(entry)
            read += n
            if len(chosen) == SIMILAR_TERMS:
                break
        order = chosen
        postings = [p for *_, t in order if (p := self._postings_at(t)) is not None]
        weights = [weight for _, _, weight, _ in order]
        top = searching.rank(self, postings, limit, skip=(doc,), weights=weights)
        out = []
        words: dict[str, str] | None = None  # the tool's terms as written in it
        for d, score in top:
            parts = []
            for _, term, weight, t in order:
                j = self._posting(d, t)
                if j >= 0:
                    parts.append((weight * self._imp[j], term))
            parts.sort(key=lambda ct: (-ct[0], ct[1]))
            # the terms that make the likeness, not the common words that add a trifle
            parts = [part for part in parts if part[0] >= builder.SHARED_SHARE * score] or parts[:1]
            if words is None:
                words = builder.field_words(self.tools[doc])
            shown = (words.get(term, term) for _, term in parts)
            out.append(Similar(self.tools[d], score, tuple(dict.fromkeys(shown))))
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
        """Enabled tools in catalog order (``list``): of this namespace, carrying every tag
        given (the rule of :mod:`toolfind.core.filters`), deferred or not (None: either)."""
        return [self.tools[doc] for doc in self._listed_ids(namespace, tags, deferred)]

    def stream(
        self,
        namespace: str | None = None,
        tags: Sequence[str] = (),
        deferred: bool | None = None,
    ) -> Iterator[Tool]:
        """:meth:`listed`'s tools one at a time, for a command that prints them: a loaded
        index decodes each from its file and keeps none (``list --json`` over 100k tools
        holds one tool at a time, not 100k)."""
        ids = self._listed_ids(namespace, tags, deferred)
        tools = self.tools
        if isinstance(tools, ToolTable):
            return tools.each(ids)
        return map(tools.__getitem__, ids)

    def _listed_ids(
        self, namespace: str | None, tags: Sequence[str], deferred: bool | None
    ) -> list[int]:
        keep = self._filter(namespace, tags)
        want = None if deferred is None else (builder.DEFERRED if deferred else 0)
        return [
            doc
            for doc, flags in enumerate(self._flags)
            if flags & builder.ENABLED
            and (want is None or flags & builder.DEFERRED == want)
            and (keep is None or keep(doc))
        ]

    def summaries(self, deferred: bool | None = True) -> list[Tool]:
        """Enabled tools in catalog order: only deferred ones (True), all (None), or only
        the ones not deferred (False)."""
        return self.listed(deferred=deferred)


def _unknown(kind: str, value: str, close: Sequence[str]) -> str:
    suggestion = f" (did you mean {', '.join(map(repr, close))}?)" if close else ""
    return f"no tool has the {kind} {value!r}{suggestion}"
