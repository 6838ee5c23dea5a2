"""The stages of one search over a :class:`~toolfind.store.index.SearchIndex`, before it says
how sure each hit is: the first stage (BM25F with typos, synonyms and action agreement, or
fused with the semantic signal), then, with the rerank stage, its candidates and the tools
closest in meaning over the whole catalog (:meth:`toolfind.store.rerank.Reranker.pool`:
``ToolVectors.nearest`` over the stored vectors), re-scored by the reranker's model
(:func:`order`).

One home for the order of the stages: ``SearchIndex.search``, ``eval``/``tune``
(:mod:`toolfind.eval.reranking`) and ``benchmarks/calibrate.py`` all rank through here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from toolfind.core import confidence
from toolfind.core import search as searching

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from toolfind.models import TermContribution
    from toolfind.store.index import SearchIndex
    from toolfind.store.rerank import Reranker
    from toolfind.store.vectors import SemanticSignal

    Keep = Callable[[int], bool] | None


class FirstStage:
    """:func:`first_stage`'s answer: what the first stage found, its exact and ranked
    entries ``(doc, score, semantic part)`` (scores on the fused scale when the rerank stage
    follows), the ``scale`` of a BM25F contribution in them, the semantic signal's cosines
    ``sims`` (when it ran) and the rerank stage's ``pool`` (when it runs)."""

    __slots__ = ("exact", "found", "pool", "ranked", "scale", "sims")

    def __init__(
        self,
        found: searching.Found,
        exact: list[tuple[int, float, float]],
        ranked: list[tuple[int, float, float]],
        scale: float,
        sims: Similarity | None,
    ) -> None:
        self.found, self.exact, self.ranked, self.scale = found, exact, ranked, scale
        self.sims = sims
        self.pool: Pool | None = None


class Pool:
    """One request's candidates for the rerank stage (:meth:`Reranker.pool`): the tools it
    names (``exact``), the first stage's ranked ones (``ranked``, best first) and the tools
    closest in meaning over the catalog (``near``, closest first, the named ones left out),
    each ``(tool id, first-stage score on the fused scale, semantic part, cosine)``; the
    first stage's ranked entries past the stage's depth (``tail``, ``(tool id, score,
    semantic part)``, not embedded); ``best`` the greatest cosine among the candidates, and
    ``nearest`` the catalog's two tools closest to the request ``(tool id, cosine)`` (the
    confidence's ``cosgap``)."""

    __slots__ = ("best", "exact", "near", "nearest", "query", "ranked", "tail")

    def __init__(
        self,
        query: str,
        exact: list[tuple[int, float, float, float]],
        ranked: list[tuple[int, float, float, float]],
        near: list[tuple[int, float, float, float]],
        nearest: list[tuple[int, float]],
        tail: Sequence[tuple[int, float, float]] = (),
    ) -> None:
        self.query, self.exact, self.ranked, self.near = query, exact, ranked, near
        self.nearest, self.tail = nearest, list(tail)
        self.best = max((e[3] for e in (*exact, *ranked, *near)), default=0.0)


def order(
    pool: Pool, weight: float, depth: int, tie_key: Callable[[int], Any]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], tuple[float, float]]:
    """The stage's answer for ``pool`` at ``weight`` and ``depth`` (what a search returns,
    and what ``eval``/``tune`` measure): the exact hits first in their order, then the first
    ``depth`` ranked candidates and the tools closest in meaning by
    :func:`toolfind.core.fusion.blend` (ties by ``tie_key``), then the ranked ones past the
    depth in their order, below them. Each entry ``(doc, score, first-stage semantic part,
    meaning part, cosine or None)``; and the mix (the factor that turns a first-stage score
    into its share of the final one, the weight used for this request:
    :func:`toolfind.core.fusion.rerank_weight`)."""
    from toolfind.core import fusion

    w = fusion.rerank_weight(weight, pool.query)
    head = pool.ranked[:depth]
    taken = {e[0] for e in head}
    near = [e for e in pool.near if e[0] not in taken][: fusion.NEAREST]
    scored_near = {e[0] for e in near}
    scored = [*pool.exact, *head, *near]
    mixed = fusion.blend([e[1] for e in scored], [e[3] for e in scored], pool.best, w)
    factor = 1.0 - w
    entries = [
        (e[0], final, e[2], part, e[3]) for e, (final, part) in zip(scored, mixed, strict=True)
    ]
    exact = entries[: len(pool.exact)]
    rest = entries[len(pool.exact) :]
    rest.sort(key=lambda e: (-e[1], tie_key(e[0])))
    past = [e for e in (*pool.ranked[depth:], *pool.tail) if e[0] not in scored_near]
    tail = [(e[0], e[1] * factor, e[2], 0.0, None) for e in past]
    return exact, rest + tail, (factor, w)


def rank(
    index: SearchIndex,
    query: str,
    limit: int,
    keep: Keep = None,
    min_score: float | None = None,
    signal: SemanticSignal | None = None,
    stage: Reranker | None = None,
) -> confidence.Ranking:
    """At most ``limit`` hits of ``query``: the first stage (fused with the semantic
    ``signal`` when given), then the rerank ``stage`` when given (when its model fails
    meanwhile, the stage turns itself off and the first stage answers); each hit ``(doc,
    score, semantic part, meaning part, cosine or None)``, with what its confidence needs."""
    first = first_stage(index, query, limit, keep, min_score, signal, stage)
    found, scale, pool = first.found, first.scale, first.pool
    if stage is not None and pool is None:
        return rank(index, query, limit, keep, min_score, signal)
    if stage is None or pool is None:
        exact = [(*e, 0.0, None) for e in first.exact]
        ranked = [(*e, 0.0, None) for e in first.ranked]
        sims = None if first.sims is None else [first.sims[e[0]] for e in ranked]
        return confidence.Ranking(found, exact, ranked, scale, (0.0, 0.0), sims, None)
    exact, ranked, mix = order(pool, stage.weight, stage.depth, index.tie_key)
    if min_score is not None:
        ranked = [e for e in ranked if e[1] >= min_score]
    exact = exact[:limit]
    ranked = ranked[: max(0, limit - len(exact))]
    cosines = [0.0 if e[4] is None else e[4] for e in ranked]
    sims = None if first.sims is None else [first.sims[e[0]] for e in ranked]
    return confidence.Ranking(found, exact, ranked, scale, mix, sims, cosines, pool.nearest)


def first_stage(
    index: SearchIndex,
    query: str,
    limit: int,
    keep: Keep = None,
    min_score: float | None = None,
    signal: SemanticSignal | None = None,
    stage: Reranker | None = None,
    known: Mapping[str, Any] | None = None,
) -> FirstStage:
    """The first stage's hits (at least the rerank ``stage``'s depth of them when it runs,
    ``min_score`` then left to the end) and, with the stage, its pool of candidates
    (``known``: request vectors embedded beforehand, by text; None when the stage's model
    failed: the stage is then off). Before the stage, BM25F
    scores are put on the fused scale (:func:`toolfind.core.fusion.lexical_share`), so that a
    request whose words the catalog mostly lacks leans on meaning."""
    first_limit, first_min = (
        (limit, min_score) if stage is None else (max(limit, stage.depth), None)
    )
    exact: list[tuple[int, float, float]]
    ranked: list[tuple[int, float, float]]
    if signal is None:
        found = searching.run(index, query, first_limit, keep=keep, min_score=first_min)
        exact = [(d, score, 0.0) for d, score in found.exact]
        ranked = [(d, score, 0.0) for d, score in found.ranked]
        scale = 1.0
    else:
        found, exact, ranked, scale, cosines = signal.run(
            index, query, first_limit, keep, first_min
        )
    sims = None if signal is None else Similarity(signal, query, cosines)
    staged = FirstStage(found, exact, ranked, scale, sims)
    if stage is None:
        return staged
    from toolfind.core import fusion  # only with the stage: the warm path never imports it

    best = max((score for _, score in (*found.exact, *found.ranked)), default=0.0)
    covered = fusion.term_coverage(found.matched, found.words)
    agree = found.agree

    def lexical(doc: int) -> float:
        score = searching.score_of(doc, found.postings)
        return score * agree(doc) if agree is not None else score

    if sims is None:
        share = fusion.lexical_share(1.0, best, covered)
        staged.exact = exact = [(d, score * share, 0.0) for d, score, _ in exact]
        staged.ranked = ranked = [(d, score * share, 0.0) for d, score, _ in ranked]
        staged.scale = share

        def first(doc: int) -> tuple[float, float]:
            return lexical(doc) * share, 0.0

    else:
        similarity = sims

        def first(doc: int) -> tuple[float, float]:
            factor = agree(doc) if agree is not None else 1.0
            return similarity.first(lexical(doc), best, doc, covered, factor)

    staged.pool = stage.pool(query, found.corrections, exact, ranked, first, keep, known)
    return staged


class Similarity:
    """The semantic signal's cosine of a request and any tool of the index (one product
    with every tool's vector: the signal's own when it ran, ``cosines``, else on first use),
    and a tool's first-stage score by it."""

    __slots__ = ("_query", "_range", "_signal", "_sims")

    def __init__(self, signal: SemanticSignal, query: str, cosines: Any = None) -> None:
        self._signal, self._query = signal, query
        self._sims: Any = None
        self._range = (0.0, 0.0)
        if cosines is not None:
            self._keep(cosines)

    def _keep(self, sims: Any) -> None:
        self._sims = sims
        if len(sims):
            self._range = (float(sims.min()), float(sims.max()))

    def _all(self) -> Any:
        if self._sims is None:
            self._keep(self._signal.cosines(self._query))
        return self._sims

    def __getitem__(self, doc: int) -> float:
        return float(self._all()[doc])

    def first(
        self, lexical: float, best: float, doc: int, coverage: float, agree: float
    ) -> tuple[float, float]:
        """Tool ``doc``'s fused first-stage (score, semantic part), as the signal scores its
        candidates (:func:`toolfind.core.fusion.mix`): ``lexical`` its BM25F score (agreed),
        ``best`` the best one, ``agree`` its action-agreement factor."""
        from toolfind.core import fusion

        sim = self[doc]
        lo, hi = self._range
        fused, part = fusion.mix(lexical, best, sim, lo, hi, self._signal.weight, coverage)
        return fused - part * (1.0 - agree), part * agree


def explained(
    lexical: tuple[TermContribution, ...],
    scale: float,
    semantic: float,
    signal: SemanticSignal | None,
) -> tuple[TermContribution, ...]:
    """A hit's first-stage explanation on the fused scale: with the semantic ``signal``, its
    own (:meth:`~toolfind.store.vectors.SemanticSignal.explained`: the rows scaled, its
    ``(meaning)`` row holding the ``semantic`` share); without it (the rerank stage over
    BM25F), each BM25F contribution times ``scale``, its share of the first-stage score."""
    if signal is not None:
        return signal.explained(lexical, scale, semantic)
    from toolfind.models import TermContribution

    return tuple(
        TermContribution(
            c.term, c.field, c.tf, c.idf, c.length_norm, c.weight, c.score * scale, c.query_word
        )
        for c in lexical
    )
