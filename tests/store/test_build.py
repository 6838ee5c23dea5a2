"""toolfind.store.build: the analysed fields of a tool, and impacts computed alike with numpy."""

from __future__ import annotations

import gc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.store.test_index import TOOLS
from toolfind.models import FIELDS, FieldWeights, ScoringParams, Tool
from toolfind.store import build
from toolfind.store.build import field_terms
from toolfind.store.index import SearchIndex


def test_field_terms_cover_every_field() -> None:
    terms = dict(zip(FIELDS, field_terms(TOOLS[2]), strict=True))
    assert "compress_files" in terms["name"]
    assert terms["namespace"] == ["file"]
    assert "level" in terms["params"] and "gzip" in terms["params"]
    assert "archiv" in terms["tags"]
    assert terms["search_hint"] == ["shrink", "squash", "pack"]
    # The tags MCP annotations imply filter and decide action agreement: they are not words.
    assert TOOLS[0].all_tags == ("filesystem", "read-only")
    assert field_terms(TOOLS[0])[FIELDS.index("tags")] == ["filesystem"]


def test_analysing_a_tool_leaves_no_cyclic_garbage() -> None:
    """A build runs with the collector paused: a cycle per tool would stay until the end."""
    gc.collect()
    gc.disable()
    try:
        for tool in TOOLS:
            field_terms(tool)
        assert gc.collect() == 0
    finally:
        gc.enable()


@settings(max_examples=40, deadline=None)
@given(
    weights=st.tuples(*[st.sampled_from([0.0, 0.25, 1.0, 3.0]) for _ in FIELDS]),
    k1=st.sampled_from([0.0, 0.9, 5.0]),
    b=st.sampled_from([0.0, 0.4, 1.0]),
    delta=st.sampled_from([0.0, 0.5]),
    extra=st.lists(
        st.lists(st.sampled_from(["file", "zip", "mail", "web"]), max_size=8), max_size=12
    ),
)
def test_numpy_computes_the_same_impacts_to_the_bit(
    weights: tuple[float, ...], k1: float, b: float, delta: float, extra: list[list[str]]
) -> None:
    """The build's impact pass with numpy (large catalogs) against the pure-Python one."""
    np = pytest.importorskip("numpy")
    tools = [*TOOLS, *(Tool(name=f"x{i}", description=" ".join(w)) for i, w in enumerate(extra))]
    params = ScoringParams(
        weights=FieldWeights(**dict(zip(FIELDS, weights, strict=True))),
        k1=k1,
        default_b=b,
        b=(("description", 1.0 - b),),
        delta=delta,
    )
    saved = build.BUILD_VECTOR_MIN, build._SLICE
    try:
        build.BUILD_VECTOR_MIN = 10**12
        pure = SearchIndex.build(tools, params)
        build.BUILD_VECTOR_MIN, build._SLICE = 0, 7  # impacts multiplied 7 postings at a time
        fast = SearchIndex.build(tools, params)
        used = build.numpy() is np and build._weigh_vectorized(
            np, fast, params, {"_weights": fast._weights}
        )
        reweighted = pure.with_params(params)
    finally:
        build.BUILD_VECTOR_MIN, build._SLICE = saved
    for got in (fast, reweighted):
        for column in ("_imp", "_max", "_idf", "_idocs", "_ioffsets"):
            assert bytes(getattr(got, column)) == bytes(getattr(pure, column)), column
        assert (got._idocs is got._docs) == (pure._idocs is pure._docs)
    # all weights positive: every posting counts, and numpy did the work
    assert used or any(w == 0.0 for w in weights) or fast._idocs is not fast._docs
