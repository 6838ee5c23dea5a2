"""Ranking metrics, fail-under gates, eval reports, tuning and findability lint."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pytest

from toolfind.errors import ConfigError, ToolfindError
from toolfind.eval.evaluate import (
    Metrics,
    Threshold,
    check_thresholds,
    evaluate,
    findability,
    findability_findings,
    indistinct_pairs,
    metric_name,
    ndcg_at,
    parse_threshold,
    query_metrics,
    recall_at,
    reciprocal_rank,
    split_queries,
    tune,
)
from toolfind.eval.queries import JudgedQuery, LabelledQuery, parse_queries, resolve_queries
from toolfind.models import FieldWeights, Hit, ScoringParams, SearchResult, Similar, Source, Tool
from toolfind.store.index import SearchIndex

# --- metrics against hand-computed values ------------------------------------------------

RANKED = [5, 1, 7, 2, 9]
RELEVANT = {1, 2, 3}


def test_reciprocal_rank_is_one_over_first_relevant_rank() -> None:
    assert reciprocal_rank(RANKED, RELEVANT) == 0.5
    assert reciprocal_rank([1], RELEVANT) == 1.0
    assert reciprocal_rank([9, 8], RELEVANT) == 0.0


def test_reciprocal_rank_ignores_hits_below_the_cutoff() -> None:
    assert reciprocal_rank([0] * 10 + [1], RELEVANT) == 0.0
    assert reciprocal_rank([0] * 9 + [1], RELEVANT) == 0.1


def test_recall_is_the_fraction_of_relevant_found_in_the_top_k() -> None:
    assert recall_at(RANKED, RELEVANT, 1) == 0.0
    assert recall_at(RANKED, RELEVANT, 2) == pytest.approx(1 / 3)
    assert recall_at(RANKED, RELEVANT, 5) == pytest.approx(2 / 3)
    assert recall_at(RANKED, set(), 5) == 0.0


def test_ndcg_matches_the_hand_computed_value() -> None:
    # DCG = 1/log2(3) + 1/log2(5) (ranks 2 and 4); ideal DCG = 1 + 1/log2(3) + 1/log2(4).
    assert ndcg_at(RANKED, RELEVANT) == pytest.approx(1.0616063116448505 / 2.1309297535714574)
    assert ndcg_at(RANKED, RELEVANT) == pytest.approx(0.498189, abs=1e-6)


def test_ndcg_ideal_counts_at_most_ten_relevant_tools() -> None:
    relevant = set(range(12))
    assert ndcg_at(list(range(10)), relevant) == pytest.approx(1.0)
    assert ndcg_at([], relevant) == 0.0
    assert ndcg_at([1, 2], set()) == 0.0


def test_perfect_ranking_scores_one_everywhere_but_recall_at_one() -> None:
    assert query_metrics([1, 2, 3], RELEVANT) == pytest.approx((1.0, 1 / 3, 1.0, 1.0, 1.0))


def test_metrics_mean_averages_each_metric_over_queries() -> None:
    m = Metrics.mean([(1.0, 1.0, 1.0, 1.0, 1.0), (0.0, 0.0, 0.5, 0.5, 0.25)])
    assert m == Metrics(0.5, 0.5, 0.75, 0.75, 0.625, count=2)
    assert m.get("NDCG@10") == 0.625 and m.get("r@5") == 0.75
    assert Metrics.mean([]) == Metrics()


# --- fail-under -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ndcg@10=0.8", Threshold("ndcg@10", 0.8)),
        ("NDCG@10=0.8", Threshold("ndcg@10", 0.8)),
        (" MRR@10 = 1 ", Threshold("mrr@10", 1.0)),
        ("R@5=0", Threshold("recall@5", 0.0)),
        ("recall@10=.95", Threshold("recall@10", 0.95)),
        ("mrr=0.5", Threshold("mrr@10", 0.5)),
        ("ndcg@10=80", Threshold("ndcg@10", 0.8)),
        ("ndcg@10=80%", Threshold("ndcg@10", 0.8)),
        ("ndcg@10=1%", Threshold("ndcg@10", 0.01)),
        ("ndcg@10=100", Threshold("ndcg@10", 1.0)),
    ],
)
def test_fail_under_parses_metric_names_case_insensitively(text: str, expected: Threshold) -> None:
    assert parse_threshold(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndcg@10", "--fail-under 'ndcg@10': expected METRIC=PERCENT, e.g. ndcg@10=80"),
        ("=0.5", "--fail-under '=0.5': expected METRIC=PERCENT, e.g. ndcg@10=80"),
        ("ndcg@10=high", "--fail-under 'ndcg@10=high': 'high' is not a number"),
        ("ndcg@10=180", "--fail-under 'ndcg@10=180': the value must be a percentage, 0 to 100"),
        ("ndcg@10=nan", "--fail-under 'ndcg@10=nan': the value must be a percentage, 0 to 100"),
        (
            "map@10=0.5",
            "unknown metric 'map@10'; use one of mrr@10, recall@1, recall@5, recall@10, ndcg@10",
        ),
    ],
)
def test_bad_fail_under_is_a_config_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_threshold(text)
    assert str(info.value) == message


def test_check_thresholds_lists_each_shortfall() -> None:
    m = Metrics(0.9, 0.4, 0.8, 0.85, 0.7, count=3)
    gates = [
        parse_threshold("ndcg@10=0.8"),
        parse_threshold("mrr@10=0.9"),
        parse_threshold("R@1=0.5"),
    ]
    assert check_thresholds(m, gates) == [
        "ndcg@10 is 70.00%, below the required 80%",
        "recall@1 is 40.00%, below the required 50%",
    ]


def test_metric_name_rejects_unknown_metrics() -> None:
    assert metric_name(" Recall@1 ") == "recall@1"
    with pytest.raises(ConfigError):
        metric_name("precision@3")


# --- eval over a canned index ------------------------------------------------------------


class CannedIndex:
    """An index whose rankings are fixed per query: tests evaluation, not scoring."""

    def __init__(self, tools: Sequence[Tool], rankings: Mapping[str, Sequence[int]]) -> None:
        self.tools = tuple(tools)
        self.params = ScoringParams()
        self.rankings = rankings

    def search(self, query: str, limit: int = 10) -> SearchResult:
        docs = self.rankings.get(query, ())[:limit]
        return SearchResult(
            query, tuple(Hit(self.tools[d], 1.0 / (i + 1)) for i, d in enumerate(docs))
        )

    def with_params(self, params: ScoringParams) -> CannedIndex:
        return self

    def resolve(self, name: str) -> Tool:
        return next(t for t in self.tools if t.name == name)

    def similar(self, name: str, limit: int = 5) -> list[Similar]:
        return []

    def impacts(self) -> Mapping[str, tuple[Sequence[int], Sequence[float]]]:
        return {}


CANNED_TOOLS = [Tool(f"t{i}", source=Source("cat.yaml", f"/tools/{i}", i + 1)) for i in range(6)]


def judged(
    qid: str, query: str, relevant: Sequence[int], split: str = "", entry: int = 1
) -> JudgedQuery:
    names = tuple(f"t{i}" for i in relevant)
    return JudgedQuery(LabelledQuery(query, names, qid, split, entry), tuple(relevant))


def test_evaluate_reports_overall_and_per_split_metrics() -> None:
    index = CannedIndex(CANNED_TOOLS, {"a": [0, 1], "b": [2, 0], "c": [5]})
    queries = [
        judged("qa", "a", [0], "train", 1),
        judged("qb", "b", [0], "train", 2),
        judged("qc", "c", [3, 4], "test", 3),
    ]
    report = evaluate(index, queries)
    assert report.splits["train"] == Metrics(
        0.75, 0.5, 1.0, 1.0, (1 + 1 / math.log2(3)) / 2, count=2
    )
    assert report.splits["test"] == Metrics(count=1)
    assert report.overall.count == 3
    assert report.overall.mrr_at_10 == pytest.approx(0.5)
    # Worst first (lowest NDCG@10), perfect queries left out.
    assert [o.query.id for o in report.worst] == ["qc", "qb"]
    assert report.worst[1].ranks == (2,)
    assert report.worst[0].ranks == (None, None)
    assert [t.name for t in report.unretrieved] == ["t3", "t4"]
    assert [t.name for t in report.missed] == ["t3", "t4"]


def test_evaluate_returns_fail_under_failures() -> None:
    index = CannedIndex(CANNED_TOOLS, {"a": [1, 0]})
    report = evaluate(index, [judged("q", "a", [0])], thresholds=[parse_threshold("mrr@10=0.6")])
    assert report.failures == ("mrr@10 is 50.00%, below the required 60%",)


def test_evaluate_reports_progress_per_query() -> None:
    calls: list[tuple[int, int]] = []
    index = CannedIndex(CANNED_TOOLS, {})
    evaluate(
        index,
        [judged("1", "a", [0]), judged("2", "b", [1])],
        progress=lambda d, t: calls.append((d, t)),
    )
    assert calls == [(1, 2), (2, 2)]


def test_findability_names_missed_and_unfound_tools_with_suggestions() -> None:
    index = CannedIndex(CANNED_TOOLS, {"a": [0, 1], "c": [5] + [1] * 0})
    issues = findability(index, [judged("qa", "a", [0]), judged("qc", "c", [3])])
    kinds = [(i.kind, i.tools[0].name) for i in issues]
    assert kinds == [("missed", "t3"), ("unfound", "t2"), ("unfound", "t4")]
    assert (
        issues[0].message
        == "t3: no labelled query finds it in the top 10 (best: is not in the top 100 for 'c')"
    )
    assert "search_hint" in issues[0].suggestion


def test_findability_findings_are_warnings_at_the_tools_source() -> None:
    index = CannedIndex(CANNED_TOOLS, {"a": [0, 1, 2, 3, 4, 5]})
    findings = findability_findings(
        index, parse_queries('[{"query": "a", "relevant": ["t0"]}]', fmt="json")
    )
    assert findings == []
    index = CannedIndex(CANNED_TOOLS, {"a": [0, 1, 2, 3, 4]})
    [finding] = findability_findings(
        index, parse_queries('[{"query": "a", "relevant": ["t0"]}]', fmt="json")
    )
    assert (finding.file, finding.line, finding.path, finding.severity) == (
        "cat.yaml",
        6,
        "/tools/5",
        "warning",
    )
    assert finding.message.startswith(
        "t5: no labelled query retrieves it in the top 10: add a labelled query"
    )


# --- splitting ---------------------------------------------------------------------------


def many(n: int, split: str = "") -> list[JudgedQuery]:
    return [judged(str(i), f"q{i}", [0], split, i) for i in range(n)]


def test_split_by_field_trains_on_the_named_split() -> None:
    queries = many(3, "dev") + many(2, "test")
    train, held = split_queries(queries, train_split="dev")
    assert len(train) == 3 and {q.split for q in held} == {"test"}


def test_split_without_a_train_split_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"no query is in split 'train' \(splits: dev, test\)"):
        split_queries(many(3, "dev") + many(2, "test"))


def test_random_holdout_is_seeded_and_disjoint() -> None:
    queries = many(20)
    train, held = split_queries(queries, holdout=0.3, seed=7)
    assert len(held) == 6 and len(train) == 14
    assert {q.id for q in train}.isdisjoint(q.id for q in held)
    assert split_queries(queries, holdout=0.3, seed=7) == (train, held)
    assert split_queries(queries, holdout=0.3, seed=8) != (train, held)


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.5, 2.0])
def test_holdout_outside_zero_one_is_an_error(fraction: float) -> None:
    with pytest.raises(ConfigError, match="use a fraction between 0 and 1"):
        split_queries(many(5), holdout=fraction)


# --- tune on a real index over a small synthetic catalog ------------------------------------

VERBS = [
    "get",
    "list",
    "create",
    "delete",
    "update",
    "search",
    "send",
    "compress",
    "convert",
    "sync",
]
NOUNS = ["file", "email", "event", "invoice", "user", "repo", "image", "report", "ticket", "backup"]
PARAM = {
    "type": "object",
    "properties": {
        "target": {
            "type": "string",
            "description": "the file email event invoice user repo image report",
        },
        "mode": {
            "type": "string",
            "description": "get list create delete update search send convert",
        },
    },
}


def synthetic_catalog() -> list[Tool]:
    """Names say what a tool does; descriptions and parameters are noisy on purpose."""
    tools = []
    for i, verb in enumerate(VERBS):
        for j, noun in enumerate(NOUNS):
            decoy_v = VERBS[(i + 3) % len(VERBS)]
            decoy_n = NOUNS[(j + 7) % len(NOUNS)]
            tools.append(
                Tool(
                    name=f"{verb}_{noun}",
                    description=f"Works with {decoy_n} records to {decoy_v} them, {decoy_v} again and {decoy_n}.",
                    parameters=PARAM,
                    namespace="ops",
                )
            )
    return tools


def synthetic_queries() -> list[LabelledQuery]:
    out = []
    for n, (i, j) in enumerate(
        (i, j) for i in range(len(VERBS)) for j in range(len(NOUNS)) if (i + j) % 3 == 0
    ):
        out.append(
            LabelledQuery(
                f"{VERBS[i]} the {NOUNS[j]}", (f"{VERBS[i]}_{NOUNS[j]}",), f"q{n}", entry=n + 1
            )
        )
    return out


@pytest.fixture(scope="module")
def synthetic() -> tuple[SearchIndex, list[JudgedQuery]]:
    # Start from deliberately bad settings: the noisy description outweighs the name.
    params = ScoringParams(weights=FieldWeights(name=0.125, description=8.0, params=8.0), k1=1.5)
    index = SearchIndex.build(synthetic_catalog(), params)
    return index, resolve_queries(index, synthetic_queries())


def test_tune_improves_the_train_metric(synthetic: tuple[SearchIndex, list[JudgedQuery]]) -> None:
    index, queries = synthetic
    report = tune(index, queries, holdout=0.3, seed=1, rounds=2)
    assert report.train_after.ndcg_at_10 > report.train_before.ndcg_at_10
    assert report.holdout_after is not None and report.holdout_before is not None
    assert report.holdout_after.ndcg_at_10 >= report.holdout_before.ndcg_at_10
    assert report.train_size + report.holdout_size == len(queries)
    assert report.steps and report.steps[-1].score == pytest.approx(report.train_after.ndcg_at_10)
    weights = report.params.weights.as_dict()
    assert weights["name"] / max(weights.values()) > 0.125 / 8.0


def test_tune_is_deterministic_for_a_seed(synthetic: tuple[SearchIndex, list[JudgedQuery]]) -> None:
    index, queries = synthetic
    calls: list[tuple[int, int]] = []
    first = tune(
        index, queries, holdout=0.3, seed=3, rounds=1, progress=lambda d, t: calls.append((d, t))
    )
    again = tune(index, queries, holdout=0.3, seed=3, rounds=1)
    assert first == again
    assert calls[-1][0] == calls[-1][1] and len(calls) > 10


def test_tune_leaves_fields_no_tool_uses_alone(
    synthetic: tuple[SearchIndex, list[JudgedQuery]],
) -> None:
    index, queries = synthetic
    report = tune(index, queries, holdout=0.3, seed=1, rounds=1)
    assert not any(s.setting.endswith(("tags", "search_hint")) for s in report.steps)
    assert report.params.weights.search_hint == report.before.weights.search_hint


def test_tune_rejects_an_unknown_metric(synthetic: tuple[SearchIndex, list[JudgedQuery]]) -> None:
    index, queries = synthetic
    with pytest.raises(ToolfindError, match="unknown metric 'map'"):
        tune(index, queries, metric="map")


def test_twin_tools_are_reported_as_indistinct() -> None:
    twins = [
        Tool("fetch_weather", "Get the weather forecast for a city.", namespace="a"),
        Tool("get_weather", "Get the weather forecast for a city.", namespace="b"),
        Tool("send_email", "Send an email message to a recipient.", namespace="a"),
        Tool("compress_file", "Compress a file into a zip archive.", namespace="a"),
    ]
    issues = indistinct_pairs(SearchIndex.build(twins))
    assert [(i.kind, [t.name for t in i.tools]) for i in issues] == [
        ("indistinct", ["fetch_weather", "get_weather"])
    ]
    assert issues[0].message == (
        "a/fetch_weather and b/get_weather are described 100% alike; only their names tell them apart"
    )
    assert "sharpen both descriptions" in issues[0].suggestion


def test_findability_findings_on_a_real_index_flag_a_missed_tool_and_twins() -> None:
    tools = [
        Tool("fetch_weather", "Get the weather forecast for a city.", namespace="a"),
        Tool("get_weather", "Get the weather forecast for a city.", namespace="b"),
        Tool("send_email", "Send an email message to a recipient.", namespace="a"),
        Tool("compress_file", "Compress a file into a zip archive.", namespace="a"),
    ]
    labelled = parse_queries(
        '[{"query": "zip up my folder", "relevant": ["compress_file"]},'
        ' {"query": "ping my boss", "relevant": ["a/send_email"]}]',
        file="q.json",
        fmt="json",
    )
    messages = [
        f.message for f in findability_findings(SearchIndex.build(tools), labelled, file="q.json")
    ]
    assert messages[0].startswith(
        "a/send_email: no labelled query finds it in the top 10 (best: is not in the top 100 for 'ping my boss')"
    )
    assert any(
        m.startswith("a/fetch_weather and b/get_weather are described 100% alike") for m in messages
    )
    assert not any(m.startswith("a/compress_file") for m in messages)


def test_findability_findings_reject_an_unknown_relevant_name() -> None:
    labelled = parse_queries(
        '[{"query": "x", "relevant": ["sendmail"]}]', file="q.json", fmt="json"
    )
    with pytest.raises(
        ToolfindError, match=r"^q.json:1: entry 1: relevant\[0\]: No tool named 'sendmail'"
    ):
        findability_findings(SearchIndex.build([Tool("send_email", "Send mail.")]), labelled)


def test_evaluate_puts_the_tool_a_query_names_first() -> None:
    tools = [
        Tool("read_file", "Read a file."),
        Tool("read_many_files", "Read file file file files."),
    ]
    index = SearchIndex.build(tools)
    queries = resolve_queries(
        index, parse_queries('[{"query": "read_file", "relevant": ["read_file"]}]', fmt="json")
    )
    assert evaluate(index, queries).overall.mrr_at_10 == 1.0
