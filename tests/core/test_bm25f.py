"""BM25F(+) maths: the pure functions, and the index's scores against a textbook oracle."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfind.core import bm25f, synonyms
from toolfind.core.analysis import analyze_prose, analyze_query
from toolfind.models import FIELDS, FieldWeights, ScoringParams, Tool
from toolfind.store.index import SearchIndex

DESCRIPTIONS = [
    "Compress files into a zip archive",
    "Extract a zip archive into a folder",
    "Read the contents of a text file",
    "Write text to a file, creating the file when it is missing",
    "Send an email message to a recipient",
    "Search the web for pages matching a query",
    "List the files in a folder, newest files first",
    "Convert a temperature between celsius and fahrenheit",
    "Translate text between languages",
    "Count the words of a text file and report the count",
]
QUERIES = ["zip file", "text file", "files folder", "email", "count words text", "celsius"]

ONLY_DESCRIPTION = FieldWeights(
    name=0.0, namespace=0.0, description=1.0, params=0.0, tags=0.0, search_hint=0.0
)


def textbook_bm25_plus(
    docs: list[list[str]], query: list[str], k1: float, b: float, delta: float
) -> list[float]:
    """Okapi BM25 with the BM25+ lower bound, as in the papers, independent of toolfind:

    score(D, Q) = sum over q in Q present in D of
        idf(q) * ( tf(q, D) * (k1 + 1) / (tf(q, D) + k1 * (1 - b + b * |D| / avgdl)) + delta )
    with idf(q) = ln(1 + (N - n(q) + 0.5) / (n(q) + 0.5)).
    """
    n_docs = len(docs)
    avgdl = sum(len(d) for d in docs) / n_docs
    counts = [Counter(d) for d in docs]
    scores = []
    for doc, tf in zip(docs, counts, strict=True):
        score = 0.0
        for q in query:
            if tf[q] == 0:
                continue
            n_q = sum(1 for c in counts if c[q])
            idf = math.log(1 + (n_docs - n_q + 0.5) / (n_q + 0.5))
            norm = k1 * (1 - b + b * len(doc) / avgdl)
            score += idf * (tf[q] * (k1 + 1) / (tf[q] + norm) + delta)
        scores.append(score)
    return scores


def description_tools(descriptions: list[str]) -> list[Tool]:
    # Names share no word with the descriptions; their field has weight 0 anyway.
    return [Tool(name=f"tool{i}", description=d) for i, d in enumerate(descriptions)]


@pytest.mark.parametrize(
    ("k1", "b", "delta"), [(1.5, 0.75, 1.0), (1.2, 0.75, 0.0), (0.9, 0.4, 0.5), (2.0, 1.0, 1.0)]
)
@pytest.mark.parametrize("query", QUERIES)
def test_one_field_with_weight_one_scores_equal_textbook_bm25_plus(
    query: str, k1: float, b: float, delta: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(synonyms, "TABLE", "")  # the query's own terms only (no "zip": compress)
    params = ScoringParams(weights=ONLY_DESCRIPTION, k1=k1, default_b=b, b=(), delta=delta)
    index = SearchIndex.build(description_tools(DESCRIPTIONS), params)
    docs = [analyze_prose(d) for d in DESCRIPTIONS]
    expected = textbook_bm25_plus(docs, analyze_query(query), k1, b, delta)
    hits = index.search(query, limit=len(DESCRIPTIONS)).hits
    got = {int(h.name.removeprefix("tool")): h.score for h in hits}
    for i, want in enumerate(expected):
        assert got.get(i, 0.0) == pytest.approx(want, rel=1e-12, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "omega"]), min_size=1),
        min_size=1,
        max_size=8,
    ),
    # "sigma" is in no tool and more than one edit from every word (no typo match).
    query=st.lists(st.sampled_from(["alpha", "beta", "gamma", "sigma"]), min_size=1, max_size=3),
    k1=st.floats(0.0, 3.0),
    b=st.floats(0.0, 1.0),
)
def test_oracle_holds_for_random_collections(
    docs: list[list[str]], query: list[str], k1: float, b: float
) -> None:
    params = ScoringParams(weights=ONLY_DESCRIPTION, k1=k1, default_b=b, b=(), delta=1.0)
    index = SearchIndex.build(description_tools([" ".join(d) for d in docs]), params)
    text = " ".join(query)
    expected = textbook_bm25_plus(docs, analyze_query(text), k1, b, 1.0)
    got = {int(h.name.removeprefix("tool")): h.score for h in index.search(text, 100).hits}
    for i, want in enumerate(expected):
        assert got.get(i, 0.0) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_idf_is_lucene_non_negative_form() -> None:
    assert bm25f.idf(1, 10) == pytest.approx(math.log(1 + 9.5 / 1.5))
    assert bm25f.idf(10, 10) > 0.0
    assert bm25f.idf(1, 10) > bm25f.idf(5, 10) > bm25f.idf(10, 10)


def test_length_norm_is_one_at_average_length_and_without_b() -> None:
    assert bm25f.length_norm(7, 7.0, 0.75) == 1.0
    assert bm25f.length_norm(20, 7.0, 0.0) == 1.0
    assert bm25f.length_norm(14, 7.0, 1.0) == 2.0
    assert bm25f.length_norm(3, 0.0, 0.75) == 1.0


def test_pseudo_tf_sums_weighted_normalised_field_frequencies() -> None:
    scales = [bm25f.field_scale(3.0, 2, 4.0, 0.5), bm25f.field_scale(1.0, 8, 4.0, 0.5)]
    assert scales == [3.0 / 0.75, 1.0 / 1.5]
    assert bm25f.pseudo_tf([1, 2], scales) == 1 * 4.0 + 2 * (1.0 / 1.5)
    assert bm25f.pseudo_tf([0, 0], scales) == 0.0


def test_impact_is_zero_without_occurrence_and_at_least_idf_times_delta_with_one() -> None:
    assert bm25f.impact(0.0, 2.0, 1.2, 1.0) == 0.0
    assert bm25f.impact(1e-9, 2.0, 1.2, 1.0) >= 2.0 * 1.0
    assert bm25f.impact(1.0, 2.0, 1.2, 0.0) == pytest.approx(2.0)  # (k1+1)*1/(k1+1) = 1


@given(
    tf=st.floats(0.0, 1e6),
    idf=st.floats(0.0, 20.0),
    k1=st.floats(0.0, 5.0),
    delta=st.floats(0.0, 2.0),
)
def test_bulk_saturations_give_the_same_floats_as_impact(
    tf: float, idf: float, k1: float, delta: float
) -> None:
    assert idf * bm25f.saturations([tf], k1, [delta])[0] == bm25f.impact(tf, idf, k1, delta)


@given(
    st.dictionaries(
        st.sampled_from(["a", "b", "c"]),
        st.one_of(st.just(0.0), st.floats(1e-6, 100.0)),  # not subnormal: x * 0.01 must stay > 0
        min_size=1,
    ),
    st.floats(0.01, 100.0),
)
def test_effective_weights_ignore_a_common_factor(weights: dict[str, float], factor: float) -> None:
    scaled = {k: v * factor for k, v in weights.items()}
    eff, eff_scaled = bm25f.effective_weights(weights), bm25f.effective_weights(scaled)
    for key in weights:
        assert eff_scaled[key] == pytest.approx(eff[key], rel=1e-12)
    assert max(eff.values()) in (0.0, 1.0)


def test_an_empty_field_with_b_of_one_has_scale_zero() -> None:
    assert bm25f.field_scale(2.0, 0, 5.0, 1.0) == 0.0
    assert bm25f.field_scale(2.0, 5, 5.0, 1.0) == 2.0


@given(
    tfs=st.lists(st.integers(0, 3), min_size=6, max_size=6),
    weights=st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6),
    delta=st.floats(0.0, 2.0),
)
def test_the_floor_is_delta_times_the_weight_of_the_strongest_field_matched(
    tfs: list[int], weights: list[float], delta: float
) -> None:
    low = bm25f.floor(tfs, weights, delta)
    matched = [w for tf, w in zip(tfs, weights, strict=True) if tf]
    assert low == delta * max(matched, default=0.0)
    assert 0.0 <= low <= delta
    # More weight on a matched field never lowers the floor; an unmatched field never counts.
    for f, tf in enumerate(tfs):
        heavier = [*weights[:f], 1.0, *weights[f + 1 :]]
        assert bm25f.floor(tfs, heavier, delta) == (delta if tf else low)


@settings(max_examples=30, deadline=None)
@given(field=st.sampled_from(["name", "description", "params"]), weight=st.floats(0.05, 1.0))
def test_a_match_in_a_light_field_gets_only_that_fields_share_of_the_floor(
    field: str, weight: float
) -> None:
    weights = FieldWeights(
        **{"name": 1.0, "description": 1.0, "params": 1.0, "tags": 0.0} | {field: weight}
    )
    params = ScoringParams(weights=weights, k1=1.2, delta=1.0)
    tools = [
        Tool(name="alpha_tool", description="beta gamma."),
        Tool(
            name="other",
            description="gamma.",
            parameters={"type": "object", "properties": {"x": {"description": "alpha beta"}}},
        ),
    ]
    index = SearchIndex.build(tools, params)
    for hit in index.search("alpha beta gamma", 5, explain=True).hits:
        for part in hit.explanation:
            # impact share of a one-field match: idf * (saturation + delta * w_f / w_max)
            w = index._weights[FIELDS.index(part.field)]
            tf = part.tf * w / part.length_norm
            expected = part.idf * ((1.2 + 1.0) * tf / (1.2 + tf) + 1.0 * w)
            assert part.score == pytest.approx(expected)
