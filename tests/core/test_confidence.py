"""toolfind.core.confidence: absolute features, never rising down a list, never sure of junk."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfind.core import confidence
from toolfind.core import search as searching
from toolfind.models import Tool
from toolfind.store.index import SearchIndex

TOOLS = [
    Tool("get_current_time", "Get the current time in a time zone.", namespace="time"),
    Tool("convert_time", "Convert a time between time zones.", namespace="time"),
    Tool("read_file", "Read a file from disk and return its text.", namespace="files"),
    Tool("write_file", "Write text to a file, replacing it.", namespace="files"),
    Tool("list_directory", "List the files in a directory.", namespace="files"),
    Tool("send_message", "Post a message to a Slack channel.", namespace="slack"),
    Tool("create_issue", "Open an issue in a GitHub repository.", namespace="github"),
    Tool("search_issues", "Search issues of a GitHub repository.", namespace="github"),
]
INDEX = SearchIndex.build(TOOLS)
WORDS = "time zone file read write list directory message slack issue github search get the a in".split()


def _confidences(query: str, **signals: object) -> list[float]:
    found = searching.run(INDEX, query, 10)
    return confidence.of_hits(found, found.ranked, exact=len(found.exact), **signals)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([*WORDS, "jazz", "mongo", "zzzz", "tokyo"]), max_size=8),
    st.lists(st.floats(-1, 1), min_size=10, max_size=10),
)
def test_confidence_never_rises_down_a_list(words: list[str], cosines: list[float]) -> None:
    query = " ".join(words)
    found = searching.run(INDEX, query, 10)
    n = len(found.ranked)
    for signals in (
        {},
        {"sims": cosines[:n]},
        {"cosines": cosines[:n], "nearest": [(0, 0.9), (1, 0.5)]},
    ):
        sure = confidence.of_hits(found, found.ranked, exact=len(found.exact), **signals)  # type: ignore[arg-type]
        assert all(0.0 <= c <= 1.0 for c in sure)
        assert all(a >= b for a, b in pairwise(sure))


def test_a_hits_features_do_not_depend_on_the_other_candidates() -> None:
    found = searching.run(INDEX, "read a file from disk", 10)
    docs = [d for d, _ in found.ranked]
    together = confidence.features(found, docs)
    for i, doc in enumerate(docs):
        assert confidence.features(found, [doc]) == [together[i]]  # alone: the same evidence


def test_a_lone_weak_candidate_is_not_confident() -> None:
    # "play some jazz" against time, files, slack and github: no word matches; with the
    # model, the closest tool is far and barely closer than the next.
    assert _confidences("play some jazz") == []
    found = searching.run(INDEX, "play some jazz", 10)
    far = confidence.features(found, [1], cosines=[0.08], nearest=[(1, 0.08), (0, 0.07)])
    assert confidence.probability(far[0], confidence.MODELS["meaning"]) < confidence.CONFIDENT
    # A single matching word of a longer request (the only candidate) is not enough.
    lone = _confidences("post my holiday photos from Tokyo to the message board")
    assert lone and lone[0] < confidence.CONFIDENT


def test_the_meaning_model_weighs_the_cosine_and_its_margin_over_the_catalog() -> None:
    found = searching.run(INDEX, "what time is it in tokyo", 10)
    model = confidence.MODELS["meaning"]
    near, far, tied = (
        confidence.features(found, [0], cosines=[c], nearest=n)[0]
        for c, n in (
            (0.7, [(0, 0.7), (1, 0.4)]),
            (0.2, [(0, 0.2), (1, 0.1)]),
            (0.7, [(0, 0.7), (1, 0.7)]),
        )
    )
    assert confidence.probability(near, model) > confidence.probability(far, model)
    assert confidence.probability(near, model) > confidence.probability(tied, model)
    assert confidence.model_for(semantic=False, meaning=True) is model
    assert confidence.model_for(semantic=True, meaning=True) is model
    assert confidence.model_for(semantic=True, meaning=False) is confidence.MODELS["semantic"]


def test_a_named_tool_is_certain() -> None:
    assert _confidences("read_file")[0] == confidence.EXACT


@pytest.mark.parametrize(
    "query",
    ["", "   ", "😀🎉", "日本語で検索", "\udcff\udcfe read", "file " * 200_000, "zzzz qqqq"],
)
def test_bad_queries_never_crash_confidence(query: str) -> None:
    sure = _confidences(query)
    assert all(0.0 <= c <= 1.0 for c in sure)


def test_no_confident_match_says_what_to_do() -> None:
    assert confidence.no_confident_match(0.9) == ""
    assert "the best hit's confidence is 0.20" in confidence.no_confident_match(0.2)
    assert "no tool matches" in confidence.no_confident_match(None)
