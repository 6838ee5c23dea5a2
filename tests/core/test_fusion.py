"""toolfind.core.fusion: the rerank stage's mix, the request as read, the weight by length."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolfind.core import fusion


def test_blend_mixes_the_first_stage_score_with_the_cosine_over_the_catalog_best() -> None:
    mixed = fusion.blend([1.0, 0.2, 0.0], [0.3, 0.6, -0.1], 0.6, 0.4)
    # (1 - w) * first + w * max(0, cos) / best
    assert [m for m, _ in mixed] == pytest.approx([0.6 + 0.2, 0.12 + 0.4, 0.0])
    assert [p for _, p in mixed] == pytest.approx([0.2, 0.4, 0.0])


def test_a_lone_candidate_is_not_stretched_to_the_top() -> None:
    # Its weak first-stage score stays weak; only the cosine's share over the catalog's
    # best counts, and a catalog with no close tool (best cosine 0) adds nothing.
    [(alone, part)] = fusion.blend([0.1], [0.05], 0.05, 0.4)
    assert alone == pytest.approx(0.06 + 0.4) and part == pytest.approx(0.4)
    assert fusion.blend([0.1], [0.0], 0.0, 0.4) == [(pytest.approx(0.06), 0.0)]


def test_blend_refuses_a_weight_outside_0_1() -> None:
    with pytest.raises(ValueError, match="rerank weight"):
        fusion.blend([1.0], [0.1], 0.1, 1.5)


@given(
    st.lists(st.tuples(st.floats(0, 1), st.floats(-1, 1)), min_size=1, max_size=20),
    st.floats(0, 1),
)
def test_blended_scores_stay_in_0_1_and_rise_with_each_part(
    pairs: list[tuple[float, float]], weight: float
) -> None:
    first = [f for f, _ in pairs]
    cos = [c for _, c in pairs]
    best = max(cos)
    mixed = fusion.blend(first, cos, best, weight)
    assert all(-1e-12 <= m <= 1.0 + 1e-12 for m, _ in mixed)
    order = sorted(range(len(pairs)), key=lambda i: (first[i], cos[i]))
    for a, b in pairwise(order):
        if first[a] <= first[b] and cos[a] <= cos[b]:
            assert mixed[a][0] <= mixed[b][0] + 1e-12


def test_lexical_share_puts_bm25f_on_the_fused_scale() -> None:
    assert fusion.lexical_share(3.0, 6.0, 1.0) == pytest.approx(0.5)
    assert fusion.lexical_share(3.0, 6.0, 0.5) == pytest.approx(0.125)  # coverage squared
    assert fusion.lexical_share(3.0, 0.0, 1.0) == 0.0


def test_as_read_replaces_the_words_read_as_others_and_keeps_the_rest() -> None:
    assert fusion.as_read("Lsit my gitea repos, pls", {"lsit": "list"}) == (
        "list my gitea repos, pls"
    )
    assert fusion.as_read("send an emial to ana", {"emial": "email"}) == "send an email to ana"
    assert fusion.as_read("emial_x emial", {"emial": "email"}) == "emial_x email"  # whole words
    assert fusion.as_read("nothing to fix", {}) == "nothing to fix"


@pytest.mark.parametrize("query", ["", "😀🎉", "\udcff\udcfe bad bytes", "word " * 200_000])
def test_as_read_takes_any_query(query: str) -> None:
    assert fusion.as_read(query, {"word": "world"}).count("world") == query.count("word ")


def test_long_requests_get_a_smaller_rerank_weight() -> None:
    assert fusion.rerank_weight(0.5, "make a folder") == 0.5
    assert fusion.rerank_weight(0.5, " ".join(["word"] * 12)) == 0.5
    assert fusion.rerank_weight(0.5, " ".join(["word"] * 24)) == pytest.approx(0.25)
    assert fusion.rerank_weight(0.5, "") == 0.5
