"""Measure and tune ranking against labelled queries: eval, tune and findability lint.

Pure: no I/O, no printing; the CLI loads the queries and renders the returned report.

Metrics are the usual tool-retrieval ones over the top 10 hits ``search`` returns (exact-name
hits first, as a user sees them), averaged over queries:

- ``mrr@10``: reciprocal rank of the first relevant hit, 0 when none is in the top 10;
- ``recall@k``: the fraction of a query's relevant tools in its top k (k = 1, 5, 10);
- ``ndcg@10``: binary-relevance NDCG (Jarvelin and Kekalainen, "Cumulated gain-based
  evaluation of IR techniques", TOIS 2002) with gain 1/log2(rank + 1); the ideal DCG puts
  min(|relevant|, 10) relevant tools first.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import astuple, dataclass, replace
from typing import TYPE_CHECKING, Literal

from toolfind.errors import ConfigError, UsageError
from toolfind.eval.queries import JudgedQuery, LabelledQuery, resolve_queries
from toolfind.models import FIELDS, Finding, ScoringParams, Tool

if TYPE_CHECKING:
    from toolfind.store.index import SearchIndex

#: Metric names in display order (the keys of ``Metrics.as_dict``).
METRICS: tuple[str, ...] = ("mrr@10", "recall@1", "recall@5", "recall@10", "ndcg@10")
#: Short labels for tables.
METRIC_LABELS = dict(zip(METRICS, ("MRR@10", "R@1", "R@5", "R@10", "NDCG@10"), strict=True))
#: Names a metric may be given by (case-folded): its own, its label, ``mrr`` and ``ndcg``.
_ALIASES: dict[str, str] = {
    **{m: m for m in METRICS},
    **{label.casefold(): m for m, label in METRIC_LABELS.items()},
    "mrr": "mrr@10",
    "ndcg": "ndcg@10",
}
CUTOFF = 10

#: Log-scale grid for field weights (0 switches a field off).
WEIGHT_GRID: tuple[float, ...] = (0.0, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: b stops at 0.9: at b = 1 an empty field's length norm is 0, which bm25f.field_scale divides by.
B_GRID: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 0.9)
K1_GRID: tuple[float, ...] = (0.3, 0.6, 0.9, 1.2, 1.5, 2.0, 3.0, 5.0)
DELTA_GRID: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0)

#: Called as ``progress(done, total)`` while a long run advances.
Progress = Callable[[int, int], None]


# --- metrics ---------------------------------------------------------------------------


def reciprocal_rank(ranked: Sequence[int], relevant: Collection[int], k: int = CUTOFF) -> float:
    """1/rank of the first relevant item in the top ``k``, else 0."""
    for rank, doc in enumerate(ranked[:k], 1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


def recall_at(ranked: Sequence[int], relevant: Collection[int], k: int) -> float:
    """The fraction of ``relevant`` found in the top ``k`` (0 when nothing is relevant)."""
    if not relevant:
        return 0.0
    return sum(1 for doc in set(ranked[:k]) if doc in relevant) / len(relevant)


def ndcg_at(ranked: Sequence[int], relevant: Collection[int], k: int = CUTOFF) -> float:
    """Binary-relevance NDCG@k; the ideal DCG ranks min(|relevant|, k) relevant items first."""
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    if ideal == 0.0:
        return 0.0
    seen: set[int] = set()
    dcg = 0.0
    for i, doc in enumerate(ranked[:k]):
        if doc in relevant and doc not in seen:
            seen.add(doc)
            dcg += 1.0 / math.log2(i + 2)
    return dcg / ideal


def query_metrics(ranked: Sequence[int], relevant: Collection[int]) -> tuple[float, ...]:
    """The values of ``METRICS`` for one ranked list, in that order."""
    recalls = (recall_at(ranked, relevant, k) for k in (1, 5, 10))
    return (reciprocal_rank(ranked, relevant), *recalls, ndcg_at(ranked, relevant))


@dataclass(frozen=True, slots=True)
class Metrics:
    """Mean metrics over ``count`` queries, each in 0..1."""

    mrr_at_10: float = 0.0
    recall_at_1: float = 0.0
    recall_at_5: float = 0.0
    recall_at_10: float = 0.0
    ndcg_at_10: float = 0.0
    count: int = 0

    @classmethod
    def mean(cls, rows: Sequence[Sequence[float]]) -> Metrics:
        """Average per-query metric rows (each in ``METRICS`` order)."""
        if not rows:
            return cls()
        n = len(rows)
        mrr, r1, r5, r10, ndcg = (math.fsum(row[i] for row in rows) / n for i in range(5))
        return cls(mrr, r1, r5, r10, ndcg, count=n)

    def as_dict(self) -> dict[str, float]:
        return dict(zip(METRICS, self.values(), strict=True))

    def values(self) -> tuple[float, ...]:
        """The means in ``METRICS`` order: every field but the last, ``count``."""
        return astuple(self)[:-1]

    def get(self, metric: str) -> float:
        """The value of a metric by any accepted name (``NDCG@10``, ``r@5``...)."""
        return self.as_dict()[metric_name(metric)]


def metric_name(text: str) -> str:
    """The canonical name of a metric (``r@5`` = ``recall@5``). Raises ``ConfigError``."""
    key = text.strip().casefold()
    if key not in _ALIASES:
        raise UsageError(f"unknown metric {text!r}; use one of {', '.join(METRICS)}")
    return _ALIASES[key]


# --- fail-under ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Threshold:
    """A ``--fail-under`` gate: ``metric`` must be at least ``minimum``."""

    metric: str
    minimum: float

    def __str__(self) -> str:
        return f"{self.metric}={100 * self.minimum:g}%"


def parse_threshold(text: str) -> Threshold:
    """Parse ``ndcg@10=80`` or ``ndcg@10=80%``: a percentage, the unit ``eval`` prints. A
    number up to 1 is read as a fraction (``ndcg@10=0.8`` is 80%, as before percentages).
    Raises ``ConfigError`` with the expected form."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise UsageError(f"--fail-under {text!r}: expected METRIC=PERCENT, e.g. ndcg@10=80")
    metric = metric_name(name)
    number = value.strip().removesuffix("%")
    try:
        minimum = float(number)
    except ValueError:
        raise UsageError(f"--fail-under {text!r}: {value.strip()!r} is not a number") from None
    if not 0.0 <= minimum <= 100.0 or math.isnan(minimum):
        raise UsageError(f"--fail-under {text!r}: the value must be a percentage, 0 to 100")
    if minimum > 1.0 or value.strip().endswith("%"):
        minimum /= 100.0
    return Threshold(metric, minimum)


def check_thresholds(metrics: Metrics, thresholds: Sequence[Threshold]) -> list[str]:
    """One line per threshold the metrics fall short of (empty when all pass), in percent."""
    return [
        f"{t.metric} is {100 * metrics.get(t.metric):.2f}%, below the required {100 * t.minimum:g}%"
        for t in thresholds
        if metrics.get(t.metric) < t.minimum
    ]


# --- eval ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """How one labelled query fared: its top hits and where each relevant tool ranked."""

    query: JudgedQuery
    top: tuple[int, ...]
    ranks: tuple[int | None, ...]
    """1-based rank of each of ``query.relevant_ids`` within the searched depth, or None."""
    values: tuple[float, ...]

    @property
    def metrics(self) -> dict[str, float]:
        return dict(zip(METRICS, self.values, strict=True))


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The outcome of ``evaluate``: metrics overall and per split, and where ranking fails."""

    params: ScoringParams
    overall: Metrics
    splits: dict[str, Metrics]
    outcomes: tuple[QueryOutcome, ...]
    worst: tuple[QueryOutcome, ...]
    unretrieved: tuple[Tool, ...]
    """Enabled tools in no query's top 10."""
    missed: tuple[Tool, ...]
    """Tools labelled relevant by some query that none of those queries finds in its top 10."""
    depth: int = CUTOFF
    failures: tuple[str, ...] = ()


def evaluate(
    index: SearchIndex,
    queries: Sequence[JudgedQuery],
    *,
    params: ScoringParams | None = None,
    worst: int = 10,
    depth: int = 100,
    metric: str = "ndcg@10",
    thresholds: Sequence[Threshold] = (),
    progress: Progress | None = None,
) -> EvalReport:
    """Run every labelled query through ``index.search`` and measure the ranking.

    ``depth`` is how far down relevant tools are looked for (ranks below it are None);
    ``worst`` queries are those lowest on ``metric``.
    """
    key = metric_name(metric)
    if params is not None and params != index.params:
        index = index.with_params(params)
    doc_of = _doc_ids(index)
    limit = max(depth, CUTOFF)
    outcomes = []
    for n, q in enumerate(queries, 1):
        ranked = _ranked(index, q.query, limit, doc_of)
        relevant = set(q.relevant_ids)
        position = {doc: r for r, doc in enumerate(ranked, 1)}
        ranks = tuple(position.get(doc) for doc in q.relevant_ids)
        outcomes.append(
            QueryOutcome(q, tuple(ranked[:CUTOFF]), ranks, query_metrics(ranked, relevant))
        )
        if progress is not None:
            progress(n, len(queries))
    overall = Metrics.mean([o.values for o in outcomes])
    by_split: dict[str, list[tuple[float, ...]]] = {}
    for o in outcomes:
        if o.query.split:
            by_split.setdefault(o.query.split, []).append(o.values)
    splits = {name: Metrics.mean(rows) for name, rows in by_split.items()}
    k = METRICS.index(key)
    ordered = sorted(outcomes, key=lambda o: (o.values[k], o.values[0], o.query.labelled.entry))
    retrieved = {doc for o in outcomes for doc in o.top}
    labelled = {doc for o in outcomes for doc in o.query.relevant_ids}
    found = {doc for o in outcomes for doc in o.query.relevant_ids if doc in o.top}
    return EvalReport(
        params=index.params,
        overall=overall,
        splits=splits,
        outcomes=tuple(outcomes),
        worst=tuple(o for o in ordered if o.values[k] < 1.0)[:worst],
        unretrieved=tuple(t for i, t in enumerate(index.tools) if t.enabled and i not in retrieved),
        missed=tuple(index.tools[i] for i in sorted(labelled - found)),
        depth=limit,
        failures=tuple(check_thresholds(overall, thresholds)),
    )


def _doc_ids(index: SearchIndex) -> dict[int, int]:
    return {id(tool): i for i, tool in enumerate(index.tools)}


def _ranked(index: SearchIndex, query: str, limit: int, doc_of: Mapping[int, int]) -> list[int]:
    """Doc ids of the hits for a query, in order (``with_params`` copies share the tool
    objects, so a hit's tool is found by identity)."""
    return [doc_of[id(hit.tool)] for hit in index.search(query, limit).hits]


def mean_metrics(index: SearchIndex, queries: Sequence[JudgedQuery]) -> Metrics:
    """Mean metrics of the top 10 for ``queries`` (the fast path ``tune`` runs each trial)."""
    doc_of = _doc_ids(index)
    rows = [
        query_metrics(_ranked(index, q.query, CUTOFF, doc_of), set(q.relevant_ids)) for q in queries
    ]
    return Metrics.mean(rows)


# --- tune ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TuneStep:
    """One accepted change during tuning: the setting, its new value, the train metric after."""

    setting: str
    value: float
    score: float


@dataclass(frozen=True, slots=True)
class FusionTune:
    """The fusion weight of the semantic signal ``tune --semantic`` learned: the weight in use
    before, the one learned on the training queries, the metric there, and the fused ranking's
    held-out metrics with the settings before (and the weight before) and after."""

    before: float
    weight: float
    train: float
    holdout_before: Metrics | None
    holdout_after: Metrics | None


@dataclass(frozen=True, slots=True)
class TuneReport:
    """What ``tune`` chose, and train / held-out metrics before and after."""

    metric: str
    before: ScoringParams
    params: ScoringParams
    train_before: Metrics
    train_after: Metrics
    holdout_before: Metrics | None
    holdout_after: Metrics | None
    train_size: int
    holdout_size: int
    trials: int
    steps: tuple[TuneStep, ...] = ()
    #: With the semantic signal: the fusion weight learned (:func:`tune_fusion`).
    fusion: FusionTune | None = None


def holdout_loss(report: TuneReport) -> str:
    """Why the settings ``tune`` chose must not be written ("" when they may): they score
    worse on the held-out queries than the settings in use (the lexical ranking, and with
    the semantic signal the fused one too), on the metric tuned."""
    key = report.metric
    pairs = [("", report.holdout_before, report.holdout_after)]
    if report.fusion is not None:
        pairs.append(
            (
                " fused with the semantic signal",
                report.fusion.holdout_before,
                report.fusion.holdout_after,
            )
        )
    for what, before, after in pairs:
        if before is None or after is None:
            continue
        old, new = before.get(key), after.get(key)
        if new < old - 1e-12:
            return (
                f"the chosen settings score {key} {100 * new:.2f}% on the"
                f" {report.holdout_size} held-out queries{what}, below the"
                f" {100 * old:.2f}% of the settings in use"
            )
    return ""


def split_queries(
    queries: Sequence[JudgedQuery],
    *,
    holdout: float | None = None,
    train_split: str | None = None,
    seed: int = 0,
) -> tuple[list[JudgedQuery], list[JudgedQuery]]:
    """Divide queries into (train, held-out).

    With ``holdout`` (a fraction in (0, 1)): a seeded random split. Otherwise ``train_split``
    (default ``train``) trains and every other split is held out; queries without any
    ``split`` get a seeded random 30 % held out. Raises ``ConfigError``.
    """
    if not queries:
        raise ConfigError("no labelled queries to tune on")
    if holdout is None and train_split is None and not any(q.split for q in queries):
        holdout = 0.3
    if holdout is not None:
        if not 0.0 < holdout < 1.0:
            raise UsageError(f"--holdout {holdout:g}: use a fraction between 0 and 1, e.g. 0.3")
        order = list(range(len(queries)))
        random.Random(seed).shuffle(order)
        n_held = min(max(round(len(queries) * holdout), 1), len(queries) - 1)
        held = set(order[:n_held])
        return (
            [q for i, q in enumerate(queries) if i not in held],
            [q for i, q in enumerate(queries) if i in held],
        )
    name = train_split or "train"
    train = [q for q in queries if q.split == name]
    if not train:
        splits = sorted({q.split for q in queries if q.split})
        raise UsageError(
            f"no query is in split {name!r} (splits: {', '.join(splits)}); "
            "name the training split or use a random holdout, e.g. --holdout 0.3"
        )
    return train, [q for q in queries if q.split != name]


def tune(
    index: SearchIndex,
    queries: Sequence[JudgedQuery],
    *,
    metric: str = "ndcg@10",
    holdout: float | None = None,
    train_split: str | None = None,
    seed: int = 0,
    rounds: int = 3,
    tune_delta: bool = True,
    progress: Progress | None = None,
) -> TuneReport:
    """Choose field weights, per-field b, k1 (and delta) that maximise ``metric`` on training queries.

    Coordinate ascent (as in Metzler and Croft, "Linear feature-based models for information
    retrieval", 2007): for each setting in a fixed order, try every value of its grid with
    the others held, keep the best strictly better one; repeat for up to ``rounds`` rounds or
    until a round changes nothing. Every trial reuses the analysed index through
    ``index.with_params``. Fields no tool uses are left alone. Deterministic: ``seed`` only
    draws the random holdout. Raises ``ConfigError``.
    """
    key = metric_name(metric)
    k = METRICS.index(key)
    train, held = split_queries(queries, holdout=holdout, train_split=train_split, seed=seed)
    before = index.params
    coords = _coordinates(index.tools, tune_delta=tune_delta)
    total = sum(len(grid) for _, grid in coords) * rounds
    done = 0
    cache: dict[ScoringParams, float] = {}

    def score(params: ScoringParams) -> float:
        if params not in cache:
            trial = index if params == index.params else index.with_params(params)
            cache[params] = mean_metrics(trial, train).values()[k]
        return cache[params]

    best = before
    best_score = score(best)
    steps: list[TuneStep] = []
    for _ in range(rounds):
        changed = False
        for setting, grid in coords:
            for value in grid:
                candidate = _with_setting(best, setting, value)
                done += 1
                if candidate != best:
                    s = score(candidate)
                    if s > best_score + 1e-12:
                        best, best_score, changed = candidate, s, True
                        steps.append(TuneStep(setting, value, s))
                if progress is not None:
                    progress(done, total)
        if not changed:
            break
    if progress is not None:
        progress(total, total)
    tuned = index.with_params(best) if best != before else index
    return TuneReport(
        metric=key,
        before=before,
        params=best,
        train_before=mean_metrics(index, train),
        train_after=mean_metrics(tuned, train),
        holdout_before=mean_metrics(index, held) if held else None,
        holdout_after=mean_metrics(tuned, held) if held else None,
        train_size=len(train),
        holdout_size=len(held),
        trials=len(cache),
        steps=tuple(steps),
    )


def tune_fusion(
    report: TuneReport,
    index: SearchIndex,
    tuned: SearchIndex,
    queries: Sequence[JudgedQuery],
    *,
    holdout: float | None = None,
    train_split: str | None = None,
    seed: int = 0,
) -> TuneReport:
    """``report`` with the fusion weight learned on its training queries (``tuned``: the index
    with the chosen settings and the semantic signal on; ``index`` the one with the settings
    in use and its signal), and both fused rankings measured on the held-out queries."""
    train, held = split_queries(queries, holdout=holdout, train_split=train_split, seed=seed)
    curve = fusion_curve(tuned, train, metric=report.metric)
    weight = best_fusion_weight([curve])
    assert index.semantic is not None, "tuning the fusion weight needs the semantic signal on"
    before = index.semantic.weight
    fusion = FusionTune(
        before=before,
        weight=weight,
        train=dict(curve)[weight],
        holdout_before=mean_metrics(with_fusion_weight(index, before), held) if held else None,
        holdout_after=mean_metrics(with_fusion_weight(tuned, weight), held) if held else None,
    )
    return replace(report, fusion=fusion)


#: Fusion weights of the semantic signal that ``tune`` tries (0: lexical only).
FUSION_GRID: tuple[float, ...] = (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7)


def with_fusion_weight(index: SearchIndex, weight: float) -> SearchIndex:
    """A copy of ``index`` (a SearchIndex with the semantic signal on) fusing at ``weight``."""
    signal = index.semantic
    assert signal is not None, "tuning the fusion weight needs the semantic signal on"
    trial = index.with_params(index.params)
    trial.use_semantic(signal.with_weight(weight))
    return trial


def fusion_curve(
    index: SearchIndex,
    queries: Sequence[JudgedQuery],
    *,
    metric: str = "ndcg@10",
    grid: Sequence[float] = FUSION_GRID,
    progress: Progress | None = None,
) -> list[tuple[float, float]]:
    """``metric`` of ``queries`` at each fusion weight of ``grid``: (weight, value) pairs.

    ``index`` must have the semantic signal on (``SearchIndex.use_semantic``)."""
    k = METRICS.index(metric_name(metric))
    out = []
    for n, weight in enumerate(grid, 1):
        out.append((weight, mean_metrics(with_fusion_weight(index, weight), queries).values()[k]))
        if progress is not None:
            progress(n, len(grid))
    return out


def best_fusion_weight(
    curves: Sequence[Sequence[tuple[float, float]]],
    guard: Sequence[tuple[float, float]] | None = None,
) -> float:
    """The weight with the best mean over several sets' curves (each from
    :func:`fusion_curve` over the same grid); ties go to the smaller weight. With ``guard``
    (a curve that includes weight 0), only weights that keep it at least at its weight-0
    value are chosen: no loss on that set (e.g. lexical queries)."""
    totals: dict[float, float] = {}
    for curve in curves:
        for weight, value in curve:
            totals[weight] = totals.get(weight, 0.0) + value
    allowed = set(totals)
    if guard is not None:
        values = dict(guard)
        base = values.get(0.0)
        if base is not None:
            allowed = {w for w in allowed if values.get(w, base) >= base - 1e-12}
    return min(allowed, key=lambda w: (-totals[w], w))


#: Whether a tool has text in a field (``name`` always has).
_HAS_FIELD: dict[str, Callable[[Tool], object]] = {
    "name": lambda t: True,
    "namespace": lambda t: t.namespace,
    "description": lambda t: t.description.strip(),
    "params": lambda t: t.parameters.get("properties"),
    "tags": lambda t: t.all_tags,
    "search_hint": lambda t: t.search_hint.strip(),
}


def _coordinates(tools: Sequence[Tool], *, tune_delta: bool) -> list[tuple[str, tuple[float, ...]]]:
    used = [f for f in FIELDS if any(map(_HAS_FIELD[f], tools))]
    coords = [(f"weight.{f}", WEIGHT_GRID) for f in used]
    coords += [(f"b.{f}", B_GRID) for f in used]
    coords.append(("k1", K1_GRID))
    if tune_delta:
        coords.append(("delta", DELTA_GRID))
    return coords


def _with_setting(params: ScoringParams, setting: str, value: float) -> ScoringParams:
    """A copy of ``params`` with one setting (``weight.F``, ``b.F``, ``k1``, ``delta``) changed."""
    kind, _, name = setting.partition(".")
    if kind == "weight":
        return replace(params, weights=params.weights.with_overrides({name: value}))
    if kind == "b":
        bs = {f: params.b_for(f) for f in FIELDS} | {name: value}
        return replace(params, b=tuple((f, bs[f]) for f in FIELDS if bs[f] != params.default_b))
    if kind == "k1":
        return replace(params, k1=value)
    return replace(params, delta=value)


# --- findability lint ------------------------------------------------------------------

FindabilityKind = Literal["missed", "unfound", "indistinct"]


@dataclass(frozen=True, slots=True)
class FindabilityIssue:
    """A tool (or pair) that labelled queries cannot find or ranking cannot separate."""

    kind: FindabilityKind
    tools: tuple[Tool, ...]
    message: str
    suggestion: str


def findability(
    index: SearchIndex,
    queries: Sequence[JudgedQuery],
    *,
    min_similarity: float = 0.9,
    neighbours: int = 3,
    report: EvalReport | None = None,
) -> list[FindabilityIssue]:
    """Lint a catalog against labelled queries (``validate --queries``).

    Reports (1) tools labelled relevant that none of their queries finds in the top 10
    (``missed``, with their best rank), (2) enabled tools no labelled query retrieves in its
    top 10 at all (``unfound``), and (3) pairs of tools that are each other's nearest
    ``similar`` neighbours and whose BM25F term-impact vectors have cosine similarity of at
    least ``min_similarity`` (``indistinct``): any query scores them almost alike.
    """
    if report is None:
        report = evaluate(index, queries, worst=0)
    issues: list[FindabilityIssue] = []
    missed_ids = {id(t) for t in report.missed}
    best: dict[int, tuple[int | None, str]] = {}  # doc -> its best rank, for the first query
    for o in report.outcomes:
        for doc, rank in zip(o.query.relevant_ids, o.ranks, strict=True):
            if doc not in best or (rank or math.inf) < (best[doc][0] or math.inf):
                best[doc] = (rank, o.query.query)
    doc_of = _doc_ids(index)
    for tool in report.missed:
        rank, text = best[doc_of[id(tool)]]
        where = f"ranks {rank}" if rank is not None else f"is not in the top {report.depth}"
        issues.append(
            FindabilityIssue(
                "missed",
                (tool,),
                f"{tool.qualified_name}: no labelled query finds it in the top 10 (best: {where} for {text!r})",
                "add a search_hint with the words those queries use, or sharpen the description",
            )
        )
    issues += [
        FindabilityIssue(
            "unfound",
            (tool,),
            f"{tool.qualified_name}: no labelled query retrieves it in the top 10",
            "add a labelled query for it, and a search_hint with the words users would say",
        )
        for tool in report.unretrieved
        if id(tool) not in missed_ids
    ]
    issues.extend(indistinct_pairs(index, min_similarity=min_similarity, neighbours=neighbours))
    return issues


def indistinct_pairs(
    index: SearchIndex, *, min_similarity: float = 0.9, neighbours: int = 3
) -> list[FindabilityIssue]:
    """Pairs of enabled tools that are mutual ``similar`` neighbours and describe themselves alike.

    "Alike" is the cosine similarity of their idf-weighted term vectors over the prose a
    request matches (description, parameters, tags, search hint; names left out, since a
    request rarely spells a name) reaching ``min_similarity``: a natural-language query then
    scores both almost the same, and which comes first is decided by their names alone.
    """
    doc_of = _doc_ids(index)
    near: dict[int, set[int]] = {}
    for i, tool in enumerate(index.tools):
        if tool.enabled:
            sims = index.similar(tool.qualified_name, neighbours)
            near[i] = {doc_of[id(s.tool)] for s in sims if id(s.tool) in doc_of}
    pairs = [
        (a, b) for a in sorted(near) for b in sorted(near[a]) if a < b and a in near.get(b, ())
    ]
    if not pairs:
        return []
    from toolfind.core.bm25f import idf as idf_of

    n = sum(1 for t in index.tools if t.enabled)
    idf = {term: idf_of(len(docs), n) for term, (docs, _) in index.impacts().items()}
    vectors = {doc: _content_vector(index.tools[doc], idf) for pair in pairs for doc in pair}
    issues = []
    for a, b in pairs:
        va, vb = vectors[a], vectors[b]
        cos = _cosine(va, vb)
        if cos < min_similarity:
            continue
        ta, tb = index.tools[a], index.tools[b]
        only = sorted(set(va) ^ set(vb))[:5]
        tells = f"only {', '.join(repr(t) for t in only) or 'their names'} tell them apart"
        issues.append(
            FindabilityIssue(
                "indistinct",
                (ta, tb),
                f"{ta.qualified_name} and {tb.qualified_name} are described {cos:.0%} alike; {tells}",
                "sharpen both descriptions, or add a search_hint saying when to use each",
            )
        )
    return issues


def _content_vector(tool: Tool, idf: Mapping[str, float]) -> dict[str, float]:
    from toolfind.store.build import field_terms

    counts: dict[str, float] = {}
    for name, terms in zip(FIELDS, field_terms(tool), strict=True):
        if name in ("name", "namespace"):
            continue
        for term in terms:
            counts[term] = counts.get(term, 0.0) + 1.0
    return {term: tf * idf.get(term, 0.0) for term, tf in counts.items()}


def _cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    dot = math.fsum(v * b[t] for t, v in a.items() if t in b)
    na = math.sqrt(math.fsum(v * v for v in a.values()))
    nb = math.sqrt(math.fsum(v * v for v in b.values()))
    return dot / (na * nb) if na and nb else 0.0


def findability_findings(
    index: SearchIndex,
    queries: Sequence[LabelledQuery],
    *,
    file: str = "",
    min_similarity: float = 0.9,
) -> list[Finding]:
    """``findability`` as lint warnings for ``validate --queries``, one ``Finding`` each, at
    the tool's catalog entry (or the queries ``file`` for a tool without a source).

    Raises ``ToolfindError`` naming the entry for a relevant name that matches no tool.
    """
    judged = resolve_queries(index, queries)
    out = []
    for issue in findability(index, judged, min_similarity=min_similarity):
        source = issue.tools[0].source
        where = (source.file, source.line, source.pointer) if source else (file, None, "")
        message = f"{issue.message}: {issue.suggestion}"
        out.append(Finding(*where, "warning", message, f"findability-{issue.kind}"))
    return out
