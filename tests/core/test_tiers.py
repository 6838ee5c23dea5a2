"""toolfind.core.tiers: which postings an impact tier holds."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.test_search import postings, synthetic_tools, with_tiers
from toolfind.core import tiers
from toolfind.store.index import SearchIndex


@settings(max_examples=200, deadline=None)
@given(lists=postings(), min_postings=st.sampled_from([1, 4, 16]))
def test_a_tier_holds_the_postings_at_or_above_its_cut(
    lists: list[list[tuple[int, float]]], min_postings: int
) -> None:
    for (docs, impacts, tier, _), given_list in zip(
        with_tiers(lists, min_postings), lists, strict=True
    ):
        assert len(docs) == len(given_list)
        if tier is None:
            continue
        positions, cut = tier
        assert len(docs) >= min_postings and 2 * len(positions) < len(docs) and cut > 0.0
        assert list(positions) == sorted(set(positions))
        inside = set(positions)
        for i, impact in enumerate(impacts):
            assert (impact >= cut) == (i in inside)


def test_numpy_finds_the_same_tiers() -> None:
    np = pytest.importorskip("numpy")
    from array import array

    rng = random.Random(3)
    sizes = [rng.choice([1, 30, 200, 900]) for _ in range(60)]
    impacts = array("d", [rng.choice([0.5, 1.0, rng.uniform(0.1, 9)]) for _ in range(sum(sizes))])
    offsets = [0]
    for size in sizes:
        offsets.append(offsets[-1] + size)
    pure = tiers.build(offsets, impacts, min_postings=100)
    fast = tiers.build(offsets, impacts, np, min_postings=100)
    assert pure[1] and pure == fast


def test_an_index_whose_tiers_point_outside_their_column_fails_its_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tiers, "MIN_POSTINGS", 32)
    tiered_index = SearchIndex.build(synthetic_tools(200))
    assert tiered_index._tier_of
    tiered_index.check()
    term, (start, _, cut) = next(iter(tiered_index._tier_of.items()))
    broken = SearchIndex.__new__(SearchIndex)
    for slot in SearchIndex.__slots__:
        setattr(broken, slot, getattr(tiered_index, slot))
    broken._tier_of = {term: (start, len(tiered_index._tiers) + 1, cut)}
    with pytest.raises(ValueError, match="disagree"):
        broken.check()
