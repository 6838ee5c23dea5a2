"""The rerank stage's settings measured on labelled queries: its weight and depth.

``toolfind eval`` reports the settings in use, ``toolfind tune --rerank`` learns them here,
and ``benchmarks/quality.py`` reports the curves. Each query's first-stage candidates (at the
deepest depth tried) and their cosines to the query are computed once
(:meth:`toolfind.store.rerank.Reranker.cosines`); every (weight, depth) is then a re-sort of
those numbers by :func:`toolfind.core.fusion.rerank`, exactly what a search with those
settings returns: the grid costs one query embedding per query, not one per setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfind.core import fusion
from toolfind.eval.evaluate import CUTOFF, METRICS, Metrics, metric_name, query_metrics
from toolfind.eval.queries import JudgedQuery

if TYPE_CHECKING:
    from toolfind.store.index import SearchIndex

#: Weights and depths ``tune --rerank`` tries.
WEIGHTS: tuple[float, ...] = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
DEPTHS: tuple[int, ...] = (10, 20, 30, 50, 100)


@dataclass(frozen=True, slots=True)
class Candidates:
    """One query's first-stage candidates: (doc, score, exact) best first, and each one's
    cosine to the query."""

    query: JudgedQuery
    docs: tuple[int, ...]
    scores: tuple[float, ...]
    exact: int  # how many of the first are exact-name hits
    cosines: tuple[float, ...]


def candidates(
    index: SearchIndex,
    queries: Sequence[JudgedQuery],
    depth: int,
    vectors: Mapping[str, Any] | None = None,
) -> list[Candidates]:
    """Each query's first ``depth`` first-stage candidates (``index``'s ranking without the
    rerank stage) and their cosines, by the stage attached to ``index`` (the queries
    embedded in batches first, unless their ``vectors`` are given)."""
    stage = index.reranker
    assert stage is not None, "the rerank stage must be attached"
    doc_of = {id(tool): i for i, tool in enumerate(index.tools)}
    if vectors is None:
        vectors = stage.embed_queries([q.query for q in queries])
    out = []
    for q in queries:
        hits = index.search(q.query, depth, rerank=False).hits
        docs = tuple(doc_of[id(h.tool)] for h in hits)
        cosines = tuple(stage.cosines(q.query, docs, vectors[q.query])) if docs else ()
        out.append(
            Candidates(
                q,
                docs,
                tuple(h.score for h in hits),
                sum(1 for h in hits if h.match == "exact"),
                cosines,
            )
        )
    return out


def ranked(found: Candidates, weight: float, depth: int) -> list[int]:
    """The doc ids a search would return (top 10) with the stage at ``weight`` and ``depth``:
    exact hits first in their order, then the first ``depth`` others by the mixed score,
    then the rest in the first stage's order (``Reranker.run``). ``found`` must hold the
    first stage's top ``max(10, depth)`` where it has them."""
    n = min(found.exact + depth, len(found.docs))
    if n == 0:
        return []
    weight = fusion.rerank_weight(weight, found.query.query)
    mixed, _ = fusion.rerank(found.scores[:n], found.cosines[:n], weight)
    head = list(found.docs[: found.exact])
    reranked = sorted(range(found.exact, n), key=lambda i: -mixed[i][0])
    tail = list(found.docs[n:])
    return (head + [found.docs[i] for i in reranked] + tail)[:CUTOFF]


def metrics(found: Sequence[Candidates], weight: float, depth: int) -> Metrics:
    """Mean metrics of the top 10 of every query at ``weight`` and ``depth``."""
    return Metrics.mean(
        [query_metrics(ranked(c, weight, depth), set(c.query.relevant_ids)) for c in found]
    )


def grid(
    found: Sequence[Candidates],
    *,
    metric: str = "ndcg@10",
    weights: Sequence[float] = WEIGHTS,
    depths: Sequence[int] = DEPTHS,
) -> list[tuple[float, int, float]]:
    """``metric`` at every (weight, depth): (weight, depth, value) triples."""
    k = METRICS.index(metric_name(metric))
    return [(w, d, metrics(found, w, d).values()[k]) for d in depths for w in weights]


def holdout_loss(
    held: Sequence[Candidates],
    chosen: tuple[float, int],
    in_use: tuple[float, int],
    metric: str = "ndcg@10",
) -> str:
    """Why the ``chosen`` (weight, depth) must not be written ("" when it may): it scores
    ``metric`` worse on the ``held``-out queries' candidates than the (weight, depth) ``in_use``,
    as :func:`toolfind.eval.evaluate.holdout_loss` rules for the first stage."""
    values = holdout(held, chosen, in_use, metric)
    if values is None or values[1] >= values[0] - 1e-12:
        return ""
    old, new = values
    return (
        f"the chosen rerank weight {chosen[0]:g} and depth {chosen[1]} score {metric}"
        f" {100 * new:.2f}% on the {len(held)} held-out queries, below the {100 * old:.2f}% of"
        f" the weight {in_use[0]:g} and depth {in_use[1]} in use"
    )


def holdout(
    held: Sequence[Candidates],
    chosen: tuple[float, int],
    in_use: tuple[float, int],
    metric: str = "ndcg@10",
) -> tuple[float, float] | None:
    """``metric`` on the ``held``-out queries' candidates with the (weight, depth) ``in_use``,
    then with the ``chosen`` one; None when nothing is held out."""
    if not held:
        return None
    k = METRICS.index(metric_name(metric))
    return metrics(held, *in_use).values()[k], metrics(held, *chosen).values()[k]


def best(points: Sequence[tuple[float, int, float]]) -> tuple[float, int]:
    """The (weight, depth) with the best value; ties go to the smaller depth, then the
    smaller weight (the cheaper and the closer to the first stage)."""
    weight, depth, _ = min(points, key=lambda p: (-round(p[2], 12), p[1], p[0]))
    return weight, depth
