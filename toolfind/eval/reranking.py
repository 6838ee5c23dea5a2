"""The rerank stage's settings measured on labelled queries: its weight and depth.

``toolfind eval`` reports the settings in use, ``toolfind tune --rerank`` learns them here,
and ``benchmarks/quality.py`` reports the curves. Each query's candidates (the first stage's
at the deepest depth tried, and the tools closest in meaning) and their cosines to the query
are computed once (:meth:`toolfind.store.index.SearchIndex.rerank_pool`); every (weight,
depth) is then :func:`toolfind.store.ranking.order` of those numbers, exactly what a search
with those settings returns: the grid costs one query embedding per query, not one per
setting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfind.errors import ModelError
from toolfind.eval.evaluate import CUTOFF, METRICS, Metrics, metric_name, query_metrics
from toolfind.eval.queries import JudgedQuery

if TYPE_CHECKING:
    from toolfind.store.index import SearchIndex
    from toolfind.store.ranking import Pool

#: Weights and depths ``tune --rerank`` tries.
WEIGHTS: tuple[float, ...] = (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
DEPTHS: tuple[int, ...] = (10, 20, 30, 50, 100)


@dataclass(frozen=True, slots=True)
class Candidates:
    """One query's candidates for the stage (a :class:`toolfind.store.ranking.Pool`) and the
    index's order of ties."""

    query: JudgedQuery
    pool: Pool
    tie_key: Callable[[int], Any]


def candidates(
    index: SearchIndex,
    queries: Sequence[JudgedQuery],
    depth: int,
    vectors: Mapping[str, Any] | None = None,
) -> list[Candidates]:
    """Each query's candidates at ``depth`` (the first stage of ``index``, with the
    semantic signal when one is attached, and the tools closest in meaning) and their
    cosines, by the stage attached to ``index`` (the queries embedded in batches first,
    unless their ``vectors`` are given)."""
    attached = index.reranker
    assert attached is not None, "the rerank stage must be attached"
    stage = attached.with_settings(depth=depth)
    if vectors is None:
        vectors = stage.embed_queries([q.query for q in queries])
    out = []
    for q in queries:
        staged = index.rerank_pool(
            q.query, max(CUTOFF, depth), signal=index.semantic, stage=stage, known=vectors
        )
        if staged.pool is None:  # the model failed (said once): there is nothing to measure
            raise ModelError(f"the reranker's model {stage.model.name} failed")
        out.append(Candidates(q, staged.pool, index.tie_key))
    return out


def ranked(found: Candidates, weight: float, depth: int) -> list[int]:
    """The doc ids a search would return (top 10) with the stage at ``weight`` and ``depth``
    (:func:`toolfind.store.ranking.order`). ``found`` must hold the first stage's top
    ``max(10, depth)`` where it has them."""
    from toolfind.store.ranking import order

    exact, rest, _ = order(found.pool, weight, depth, found.tie_key)
    return [e[0] for e in (*exact, *rest)][:CUTOFF]


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
