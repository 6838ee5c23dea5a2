"""toolfind.core.learning: the words of requests that led to a tool count for it, bounded, with
a minimum of evidence, fading with age; and the one search adds them exactly (the top k with
the learned signal is the top k of every tool's boosted score)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.test_search import FakeSource
from toolfind.core import learning, search

DAY = 86_400.0


class Evidence:
    """Compiled evidence given directly (``core.learning.Postings``)."""

    def __init__(self, table: dict[str, tuple[list[int], list[float]]]) -> None:
        self.table = table

    def postings(self, term: str) -> tuple[Sequence[int], Sequence[float]] | None:
        return self.table.get(term)

    def current(self) -> Evidence:
        return self


def test_a_record_weighs_half_after_the_half_life_and_a_future_one_counts_as_new() -> None:
    assert learning.decay(0) == 1.0
    assert math.isclose(learning.decay(learning.HALF_LIFE_DAYS * DAY), 0.5)
    assert math.isclose(learning.decay(2 * learning.HALF_LIFE_DAYS * DAY), 0.25)
    assert learning.decay(-DAY) == 1.0


def test_one_request_teaches_nothing_two_teach_the_words_they_share() -> None:
    one = learning.impacts([(["rain", "oslo"], 0, 1.0)], tools=50)
    assert one == {}
    two = learning.impacts([(["rain", "oslo"], 0, 1.0), (["rain", "paris"], 0, 1.0)], tools=50)
    assert list(two) == ["rain"] and two["rain"][0] == [0]


def test_old_evidence_fades_below_the_minimum_and_counts_no_more() -> None:
    fresh = [(["rain"], 0, 1.0), (["rain"], 0, 1.0)]
    assert learning.impacts(fresh, tools=10)
    half = learning.decay(learning.HALF_LIFE_DAYS * DAY)
    assert learning.impacts([(["rain"], 0, half), (["rain"], 0, half)], tools=10) == {}


def test_a_long_request_gives_each_word_less_than_a_short_one() -> None:
    short = learning.impacts([(["rain", "oslo"], 0, 1.0)] * 2, tools=50)
    words = ["rain", *(f"w{i}" for i in range(11))]
    long = learning.impacts([(words, 0, 1.0)] * 2, tools=50)
    assert long["rain"][1][0] < short["rain"][1][0]


@settings(max_examples=60, deadline=None)
@given(
    uses=st.integers(min_value=2, max_value=500), tools=st.integers(min_value=1, max_value=10_000)
)
def test_what_a_word_adds_saturates_under_its_bound_however_often_it_was_used(
    uses: int, tools: int
) -> None:
    found = learning.impacts([(["rain"], 0, 1.0)] * uses, tools=tools)
    impact = found["rain"][1][0]
    idf = math.log(1.0 + (max(tools, 1) - 1 + 0.5) / 1.5)
    assert 0.0 < impact < idf * (learning.K1 + 1.0)


def test_a_word_that_led_to_many_tools_adds_less_than_one_that_led_to_one() -> None:
    evidence: list[tuple[Sequence[str], int, float]] = []
    for doc in range(20):
        evidence += [(["find", f"topic{doc}"], doc, 1.0)] * 2
    found = learning.impacts(evidence, tools=40)
    assert found["find"][1][0] < found["topic3"][1][0]


def test_sessions_count_a_few_times_per_tool_and_imported_records_always() -> None:
    records = [("s1", 0)] * 10 + [("s1", 1)] * 3 + [("", 0)] * 10
    kept = learning.capped(records)
    assert kept[:10] == [True] * learning.SESSION_TOOL_CAP + [False] * (
        10 - learning.SESSION_TOOL_CAP
    )
    assert kept[10:13] == [True] * 3 and all(kept[13:])
    flood = learning.capped(("s2", doc) for doc in range(200))
    assert sum(flood) == learning.SESSION_CAP


def test_boosts_add_only_the_words_the_request_holds() -> None:
    evidence = Evidence({"rain": ([1], [2.0]), "email": ([2], [3.0])})
    added, known = learning.boosts(evidence, ["rain", "tomorrow"])
    assert added == {1: learning.WEIGHT * 2.0} and known == ["rain"]
    assert learning.boosts(evidence, ["compress"]) == ({}, [])


class Learning(FakeSource):
    def __init__(self, evidence: Evidence, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.learned = evidence


def test_the_search_adds_the_learned_score_and_finds_tools_by_words_they_lack() -> None:
    lists = {"weather": [(0, 3.0), (1, 2.5)], "rain": []}
    impact = 1.0 / learning.WEIGHT  # the learned signal adds 1.0 to tool 1
    evidence = Evidence({"rain": ([1], [impact])})
    source = Learning(evidence, lists, ["forecast", "weather_now", "mail"])
    found = search.run(source, "weather rain", 3)
    assert found.ranked == [(1, 2.5 + learning.WEIGHT * impact), (0, 3.0)]
    assert found.learned == {1: learning.WEIGHT * impact}
    assert found.unmatched == ()  # a word that led to a tool was not found nowhere
    only = search.run(source, "rain", 3)  # no catalog word at all: the evidence alone
    assert only.ranked == [(1, learning.WEIGHT * impact)]
    assert search.run(FakeSource(lists, source.names), "rain", 3).ranked == []


def test_a_disabled_or_filtered_tool_gets_nothing_from_its_evidence() -> None:
    evidence = Evidence({"rain": ([0, 1], [2.0, 1.0])})
    source = Learning(evidence, {"weather": [(1, 1.0)]}, ["a", "b"])  # 0 is disabled:
    source.disabled.add(0)  # an index gives it no postings, nor does its evidence count
    assert [d for d, _ in search.run(source, "weather rain", 5).ranked] == [1]
    assert search.run(source, "rain", 5, keep=lambda d: d != 1).ranked == []


@settings(max_examples=150, deadline=None)
@given(
    lexical=st.dictionaries(
        st.integers(0, 59), st.floats(0.1, 10.0, allow_nan=False), min_size=1, max_size=60
    ),
    learned=st.dictionaries(
        st.integers(0, 59), st.floats(0.1, 20.0, allow_nan=False), min_size=1, max_size=30
    ),
    k=st.integers(1, 12),
)
def test_the_top_k_with_learning_is_the_top_k_of_every_tools_boosted_score(
    lexical: dict[int, float], learned: dict[int, float], k: int
) -> None:
    names = [f"t{i:02d}" for i in range(60)]
    source = Learning(
        Evidence({"rain": (sorted(learned), [learned[d] for d in sorted(learned)])}),
        {"word": sorted(lexical.items())},
        names,
    )
    found = search.run(source, "word rain", k)
    boost = {d: learning.WEIGHT * b for d, b in learned.items()}
    every = {d: lexical.get(d, 0.0) + boost.get(d, 0.0) for d in {*lexical, *learned}}
    expected = sorted(every.items(), key=lambda ds: (-ds[1], names[ds[0]]))[:k]
    assert [d for d, _ in found.ranked] == [d for d, _ in expected]
    for (_, got), (_, want) in zip(found.ranked, expected, strict=True):
        assert math.isclose(got, want, rel_tol=1e-12)
