"""toolfind.core.search: one search over any postings source; every strategy (impact tiers,
MaxScore, numpy) gives the full scan's answer, bit for bit."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from toolfind.cli import fast as fastpath
from toolfind.cli.app import app
from toolfind.core import bm25f, search, synonyms, tiers, typos
from toolfind.models import Tool
from toolfind.store.index import SearchIndex

runner = CliRunner()


def scan(terms: Sequence[search.TermPostings]) -> dict[int, float]:
    """Every tool's score from every posting, in query order: the reference."""
    scores: dict[int, float] = {}
    for docs, impacts, *_ in terms:
        for doc, impact in zip(docs, impacts, strict=True):
            scores[doc] = scores[doc] + impact if doc in scores else impact
    return scores


def with_tiers(
    lists: Sequence[Sequence[tuple[int, float]]], min_postings: int
) -> list[search.TermPostings]:
    """Per term, its postings (sorted by tool) and the tier ``tiers.build`` gives it."""
    docs = [[d for d, _ in sorted(p)] for p in lists]
    impacts = [[s for _, s in sorted(p)] for p in lists]
    offsets = [0]
    for d in docs:
        offsets.append(offsets[-1] + len(d))
    positions, tier_of = tiers.build(
        offsets, [s for i in impacts for s in i], min_postings=min_postings
    )
    out: list[search.TermPostings] = []
    for t in range(len(lists)):
        tier = tier_of.get(t)
        found = None if tier is None else (positions[tier[0] : tier[1]], tier[2])
        out.append((docs[t], impacts[t], found, max(impacts[t])))
    return out


def top_with_ties(scores: dict[int, float], k: int) -> dict[int, float]:
    if len(scores) <= k:
        return dict(scores)
    kth = sorted(scores.values(), reverse=True)[k - 1]
    return {d: s for d, s in scores.items() if s >= kth}


impact_values = st.one_of(
    st.sampled_from([0.5, 1.0, 1.25, 2.0, 3.5]),  # ties, as BM25 gives equal fields
    st.floats(min_value=0.001, max_value=20.0, allow_nan=False, allow_infinity=False),
)


@st.composite
def postings(draw: Any) -> list[list[tuple[int, float]]]:
    n_docs = draw(st.integers(min_value=5, max_value=150))
    lists = []
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        docs = draw(st.sets(st.integers(min_value=0, max_value=n_docs - 1), min_size=1))
        lists.append([(d, draw(impact_values)) for d in sorted(docs)])
    return lists


@settings(max_examples=300, deadline=None)
@given(
    lists=postings(),
    k=st.integers(min_value=1, max_value=12),
    skip=st.sets(st.integers(min_value=0, max_value=150), max_size=5),
    modulus=st.sampled_from([0, 2, 3]),
    min_postings=st.sampled_from([1, 4, 16]),
)
def test_the_candidates_hold_the_exact_top_k_and_its_ties(
    lists: list[list[tuple[int, float]]],
    k: int,
    skip: set[int],
    modulus: int,
    min_postings: int,
) -> None:
    terms = with_tiers(lists, min_postings)
    keep = None if not modulus else (lambda d: d % modulus != 0)
    found = search.top_candidates(terms, k, skip, keep)
    if found is None:
        return  # the caller scans: nothing to check
    everything = scan(terms)
    eligible = {d: s for d, s in everything.items() if d not in skip and (not keep or keep(d))}
    for doc, score in top_with_ties(eligible, k).items():
        assert found.get(doc) == score  # bit for bit
    for doc, score in found.items():
        assert doc in eligible and score == eligible[doc]


def test_tiers_decide_a_query_whose_best_tools_stand_out() -> None:
    rng = random.Random(7)
    lists = [
        [(d, (9.0 if d % 97 == 0 else 0.0) + rng.uniform(0.1, 1.0)) for d in range(0, 5000, s)]
        for s in (1, 2, 3)
    ]
    terms = with_tiers(lists, 64)
    assert all(tier is not None for _, _, tier, _ in terms)
    found = search.top_candidates(terms, 10)
    assert found is not None
    assert len(found) < 200  # a few candidates, not the 5000 tools a scan adds up
    assert top_with_ties(found, 10) == top_with_ties(scan(terms), 10)


def test_a_query_the_tiers_cannot_decide_is_left_to_a_scan() -> None:
    flat = [[(d, 1.0 + (d % 2) * 1e-3) for d in range(400)] for _ in range(2)]
    terms = with_tiers(flat, 16)
    # The tier holds the tools at 1.001, and the rest (at 1.0) could tie with the 10th best
    # of them if the tiers missed them: that is for a scan to settle.
    assert search.top_candidates(terms, 300) is None
    assert search.top_candidates(terms, 0) is None


# ----------------------------------------------------------------------------- pruning

WORDS = ["file", "text", "zip", "mail", "web", "page", "read", "send", "list", "sort", "find"]


#: How a ranked list may be computed: a full scan, MaxScore over doc-ordered postings, numpy.
STRATEGIES = ["maxscore", "numpy"]


@contextmanager
def strategy(index: SearchIndex, name: str | None) -> Iterator[None]:
    """Force one ranking strategy (None: the full scan) for any number of postings."""
    saved = (search.PRUNE_MIN_POSTINGS, search.VECTOR_MIN_POSTINGS)
    try:
        search.PRUNE_MIN_POSTINGS = 10**9 if name is None else 0
        search.VECTOR_MIN_POSTINGS = 0 if name == "numpy" else 10**9
        if name == "numpy":
            assert index.accelerate()
        yield
    finally:
        search.PRUNE_MIN_POSTINGS, search.VECTOR_MIN_POSTINGS = saved


@settings(max_examples=80, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=1, max_size=60
    ),
    query=st.lists(st.sampled_from([*WORDS, "t3"]), min_size=1, max_size=4),
    limit=st.integers(1, 12),
    namespace=st.sampled_from([None, "even"]),
    min_score=st.sampled_from([None, 2.0]),
    name=st.sampled_from(STRATEGIES),
)
def test_pruned_ranking_equals_the_full_scan(
    docs: list[list[str]],
    query: list[str],
    limit: int,
    namespace: str | None,
    min_score: float | None,
    name: str,
) -> None:
    tools = [
        Tool(name=f"t{i}", namespace="even" if i % 2 == 0 else "odd", description=" ".join(d))
        for i, d in enumerate(docs)
    ]
    index = SearchIndex.build(tools)
    text = " ".join(query)
    kwargs = {"namespace": namespace, "min_score": min_score}
    with strategy(index, None):
        full = index.search(text, limit, **kwargs)  # type: ignore[arg-type]
    with strategy(index, name):
        pruned = index.search(text, limit, **kwargs)  # type: ignore[arg-type]
    assert pruned == full


@pytest.mark.parametrize("name", STRATEGIES)
@pytest.mark.parametrize("tied", [0, 200])
def test_pruning_skips_common_terms_yet_ranks_like_the_full_scan(tied: int, name: str) -> None:
    tools = [Tool(name=f"common{i:03d}", description="alpha beta gamma") for i in range(300)]
    tools += [Tool(name=f"rare{i}", description="alpha zebra " + "beta " * i) for i in range(6)]
    tools += [Tool(name=f"same{i:03d}", description="zebra kappa") for i in range(tied)]
    index = SearchIndex.build(tools)
    for query in ("zebra alpha beta", "alpha zebra", "beta gamma zebra alpha", "zebra kappa"):
        for limit in (1, 3, 6, 10):
            with strategy(index, None):
                full = index.search(query, limit)
            with strategy(index, name):
                pruned = index.search(query, limit)
            assert pruned == full


@settings(max_examples=150, deadline=None)
@given(
    totals=st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.25, 7.0]), max_size=400),
    k=st.integers(1, 40),
)
def test_the_numpy_cut_off_keeps_exactly_the_totals_tied_with_or_above_the_kth(
    totals: list[float], k: int
) -> None:
    """The sampled cut-off of _rank_vectorized against its definition: every nonzero total
    at or above the k-th largest (all nonzero ones when fewer than k are), in position order."""
    np = pytest.importorskip("numpy")
    nonzero = sorted((t for t in totals if t > 0.0), reverse=True)
    kth = nonzero[k - 1] if len(nonzero) >= k else 0.0
    expected = [i for i, t in enumerate(totals) if t > 0.0 and t >= kth]
    found, values = search._at_or_above_kth(np, np.array(totals, dtype=float), k)
    assert found.tolist() == expected
    assert values.tolist() == [totals[i] for i in expected]


# -------------------------------------------------------------------- through the index

VOCABULARY = [f"w{i}" for i in range(40)]


def synthetic_tools(n: int, seed: int = 11) -> list[Tool]:
    """Tools whose words follow a skewed law: common words occur in most tools, with
    impacts that vary with description length and field, as in a real catalog."""
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) for i in range(len(VOCABULARY))]
    tools = []
    for i in range(n):
        words = rng.choices(VOCABULARY, weights, k=rng.randint(3, 25))
        name_words = rng.choices(VOCABULARY, weights, k=2)
        tools.append(
            Tool(
                name=f"{'_'.join(name_words)}_{i}",
                namespace=f"ns{i % 3}",
                description=" ".join(words) + ".",
                tags=(f"t{i % 4}",),
            )
        )
    return tools


@pytest.fixture(scope="module")
def tiered_index() -> SearchIndex:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tiers, "MIN_POSTINGS", 32)
        index = SearchIndex.build(synthetic_tools(500))
    assert index._tier_of  # the common words have tiers
    return index


def test_the_index_answers_alike_with_tiers_and_by_scanning(
    tiered_index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    queries = [" ".join(rng.choices(VOCABULARY[:12], k=rng.randint(1, 4))) for _ in range(60)]
    queries += ["w0_w1_7", "w0 w1_w2"]
    cases: list[tuple[str, dict[str, Any]]] = []
    for q in queries:
        cases.append((q, {"limit": rng.randint(1, 15)}))
    for q in queries[:20]:
        cases.append((q, {"namespace": "ns1"}))
        cases.append((q, {"tags": ["t2"], "limit": 5}))
        cases.append((q, {"min_score": 2.0}))
    decided = []
    real = search.top_candidates

    def spy(*args: Any, **kwargs: Any) -> dict[int, float] | None:
        found = real(*args, **kwargs)
        decided.append(found is not None)
        return found

    monkeypatch.setattr(search, "top_candidates", spy)
    with_tiers_used = [tiered_index.search(q, **kw) for q, kw in cases]
    assert sum(decided) >= 10, (sum(decided), len(decided))  # the tiers answered some
    monkeypatch.setattr(search, "top_candidates", lambda *a, **k: None)
    assert [tiered_index.search(q, **kw) for q, kw in cases] == with_tiers_used


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from(VOCABULARY[:15]), min_size=1, max_size=4),
    limit=st.integers(min_value=1, max_value=12),
)
def test_the_fast_path_reads_the_same_tiers_from_the_index_file(
    tiered_catalog: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    words: list[str],
    limit: int,
) -> None:
    args = ["search", " ".join(words), "-c", tiered_catalog, "--json", "-k", str(limit)]
    with monkeypatch.context() as mp:
        mp.setattr(search, "top_candidates", lambda *a, **k: None)  # scan
        scanned = runner.invoke(app, args)
    assert scanned.exit_code == 0, scanned.stderr
    assert runner.invoke(app, args).stdout == scanned.stdout  # the index, with tiers
    capsys.readouterr()
    assert fastpath.run(args) == 0  # the fast path, with tiers read from the file
    assert capsys.readouterr().out == scanned.stdout


@pytest.fixture
def tiered_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A catalog whose cached index has tiers (built with a low threshold)."""
    monkeypatch.setattr(tiers, "MIN_POSTINGS", 32)
    path = tmp_path / "many.json"
    tools = [
        {"name": t.name, "description": t.description, "namespace": t.namespace}
        for t in synthetic_tools(400)
    ]
    path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    done = runner.invoke(app, ["search", "w0", "-c", str(path), "--json"])
    assert done.exit_code == 0, done.stderr
    return str(path)


# -------------------------------------------------------------------- run, over any source


class FakeSource:
    """Postings given directly: a search source with no index behind it."""

    def __init__(
        self,
        postings: dict[str, list[tuple[int, float]]],
        names: list[str],
        synonyms: dict[str, tuple[str, ...]] | None = None,
        actions: dict[int, int] | None = None,
    ) -> None:
        self.lists = postings
        self.names = names
        self.disabled: set[int] = set()
        self.synonyms = synonyms or {}
        self.actions = actions or {}

    def synonym_table(self) -> synonyms.Table:
        keys = {key: (i,) for i, key in enumerate(self.synonyms)}  # a word -> its group's terms
        return synonyms.Table(keys, tuple(self.synonyms.values()))

    def action(self, doc: int) -> int:
        return self.actions.get(doc, 0)

    def postings(self, term: str) -> search.TermPostings | None:
        found = self.lists.get(term)
        if not found:
            return None
        return ([d for d, _ in found], [s for _, s in found], None, max(s for _, s in found))

    def known(self, terms: list[str]) -> list[str]:
        return [term for term in terms if term in self.lists]

    def named(self, query: str) -> list[int]:
        return [d for d, name in enumerate(self.names) if name == query]

    def enabled(self, doc: int) -> bool:
        return doc not in self.disabled

    def exact_key(self, doc: int) -> tuple[str, str]:
        return ("", self.names[doc])

    def tie_key(self, doc: int) -> tuple[str, int]:
        return (self.names[doc], doc)

    def numpy(self, postings: int) -> None:
        return None


def hits_of(found: search.Found) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    return found.exact, found.ranked


def test_run_puts_named_tools_first_then_ranks_by_score_then_tie_key() -> None:
    source = FakeSource(
        {"zip": [(0, 1.0), (1, 2.0), (2, 2.0), (3, 0.5)], "file": [(3, 4.0)]},
        ["d", "c", "b", "zip"],
    )
    found = search.run(source, "zip", 3)
    assert (found.matched, found.unmatched) == ([("zip", "zip", 1.0, "word", "zip")], ())
    assert found.exact == [(3, 0.5)]
    assert found.ranked == [(2, 2.0), (1, 2.0)]  # tied: by tie_key, b before c
    found = search.run(source, "zip file", 10)
    assert found.ranked[0] == (3, 4.5) and found.exact == []
    assert search.run(source, "zip", 10, min_score=1.5).ranked == [(2, 2.0), (1, 2.0)]
    odd = search.run(source, "zip", 10, keep=lambda d: d % 2 == 1)
    assert hits_of(odd) == ([(3, 0.5)], [(1, 2.0)])  # the filter applies to both kinds of hit
    assert search.run(source, "zip", 10, keep=lambda d: d != 3).exact == []


def test_a_typo_matches_the_term_one_edit_away_at_a_discount_below_an_exact_match() -> None:
    source = FakeSource({"email": [(0, 2.0), (1, 1.0)], "send": [(1, 3.0)]}, ["a", "b"])
    found = search.run(source, "emial", 5)
    factor = bm25f.TYPO_DISCOUNT
    assert 0.0 < factor < 1.0
    # The word was read as "email": it is matched (not a word found nowhere), and says so.
    assert found.matched == [("email", "emial", factor, "typo", "email")]
    assert found.unmatched == () and found.corrections == {"emial": "email"}
    assert found.ranked == [(0, factor * 2.0), (1, factor * 1.0)]
    assert search.run(source, "email", 5).ranked == [(0, 2.0), (1, 1.0)]  # exact: full score
    # A query that has the right spelling too does not count the term twice.
    assert search.run(source, "emial email", 5).ranked == [(0, 2.0), (1, 1.0)]
    # Two edits, or a word shorter than four letters, match nothing; four letters, a swap or a
    # vowel left out only.
    for word in ("eamli", "sed", "sand", "snd"):
        nothing = search.run(source, word, 5)
        assert (nothing.matched, nothing.unmatched, hits_of(nothing)) == ([], (word,), ([], []))
    assert search.run(source, "sned", 5).ranked == [(1, factor * 3.0)]
    assert search.run(source, "emil", 5).ranked == [(0, factor * 2.0), (1, factor * 1.0)]


def test_typo_lookups_are_bounded_in_word_length_and_in_words_per_query() -> None:
    long_word = "emailx" + "q" * (typos.MAX_LENGTH - 6)  # one letter too many, and long
    source = FakeSource({"emailq": [(0, 1.0)], long_word[:-1]: [(1, 1.0)]}, ["a", "b"])
    assert search.run(source, long_word, 5).ranked == [(1, bm25f.TYPO_DISCOUNT)]
    assert search.run(source, long_word + "q", 5).ranked == []  # over MAX_LENGTH: not a typo
    assert search.run(source, "x" * 1_000_000, 5).ranked == []  # and cheap: no candidates made
    # Only the first MAX_CORRECTIONS words found nowhere are looked up.
    words = [f"bl{c}rkz" for c in "abcdefghijklmnop"]
    source = FakeSource({w[:-1]: [(i, 1.0)] for i, w in enumerate(words)}, list(words))
    matched = search.run(source, " ".join(words), 20).matched
    assert [m[1] for m in matched] == words[: search.MAX_CORRECTIONS]


def test_a_typo_the_stemmer_mangles_is_corrected_from_the_word_as_written() -> None:
    # "compres" stems to "compr", three edits from "compress"; the word is one edit from it.
    source = FakeSource({"compress": [(0, 2.0)]}, ["a"])
    assert search.run(source, "compres", 5).matched == [
        ("compress", "compres", bm25f.TYPO_DISCOUNT, "typo", "compress")
    ]
    # A correction is shown as a word, not as the stem it was matched by: "shuffl" is
    # "shuffle" (the one edit of "shufle" that stems to it).
    source = FakeSource({"shuffl": [(0, 2.0)]}, ["a"])
    assert search.run(source, "shufle", 5).corrections == {"shufle": "shuffle"}


def test_a_synonym_is_searched_at_a_discount_and_never_above_the_word_itself() -> None:
    from toolfind.core import synonyms

    table = {"folder": ("directori",), "pull request": ("pr",)}
    source = FakeSource(
        {"directori": [(0, 2.0)], "folder": [(1, 1.5)], "pr": [(2, 3.0)], "pull": [(3, 1.0)],
         "request": [(3, 1.0)]},
        ["mkdir", "folders", "create_pr", "pull_it"],
        synonyms=table,
    )  # fmt: skip
    found = search.run(source, "make a folder", 5)
    assert found.ranked == [(1, 1.5), (0, synonyms.DISCOUNT * 2.0)]
    assert ("directori", "folder", synonyms.DISCOUNT, "synonym", "directori") in found.matched
    # A phrase expands as consecutive words; the words themselves still count fully.
    assert search.run(source, "open a pull request", 5).ranked == [
        (3, 2.0),
        (2, synonyms.DISCOUNT * 3.0),
    ]
    # A word found nowhere that is a synonym is not a word found nowhere.
    source.synonyms = {"dir": ("directori",)}
    found = search.run(source, "dir", 5)
    assert found.unmatched == () and found.ranked == [(0, synonyms.DISCOUNT * 2.0)]


def test_action_agreement_puts_a_destroying_tool_first_only_when_asked_to_remove() -> None:
    from toolfind.core import actions

    source = FakeSource(
        {"relat": [(0, 2.0), (1, 1.9)], "delet": [(0, 1.0)]},
        ["delete_relations", "create_relations"],
        actions={0: actions.DESTROYS, 1: actions.CREATES},
    )
    assert [d for d, _ in search.run(source, "relations", 2).ranked] == [1, 0]
    assert [d for d, _ in search.run(source, "delete relations", 2).ranked] == [0, 1]
    # The pool widens until the answer is exact: the last tool here was outside the top 1.
    source = FakeSource(
        {"x": [(0, 3.0), (1, 2.9), (2, 2.5)]},
        ["a", "b", "c"],
        actions={0: actions.DESTROYS, 1: actions.DESTROYS},
    )
    assert search.run(source, "x", 1).ranked == [(2, 2.5)]


def test_a_typo_picks_the_candidate_found_in_most_tools_then_the_first_by_name() -> None:
    postings = {"carts": [(0, 1.0)], "cares": [(1, 1.0), (2, 1.0)], "cores": [(3, 1.0), (4, 1.0)]}
    source = FakeSource(postings, ["a", "b", "c", "d", "e"])
    fix = typos.correct("carxs", source.known, source.postings)
    assert fix is not None and fix[0] == "cares"  # in 2 tools, carts in 1
    fix = typos.correct("cxres", source.known, source.postings)
    assert fix is not None and fix[0] == "cares"  # cares, cores tie: by name


@given(word=st.text(alphabet="abcdef", min_size=1, max_size=8))
def test_edits_are_exactly_the_strings_one_damerau_levenshtein_edit_away(word: str) -> None:
    found = set(typos.edits(word))
    assert word not in found
    for other in found:
        assert _osa_distance(word, other) == 1
    for other in {word[:i] + word[i + 1 :] for i in range(len(word))} - {word}:
        assert other in found  # every deletion


def _osa_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein (optimal string alignment) distance, the textbook table."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_run_never_returns_a_disabled_tool_and_reports_words_found_nowhere() -> None:
    # A disabled tool has no postings (it is not indexed), but the query may name it.
    source = FakeSource({"zip": [(1, 2.0)]}, ["zip", "other"])
    source.disabled = {0}
    assert hits_of(search.run(source, "zip", 5)) == ([], [(1, 2.0)])
    nothing = search.run(source, "xyzzy", 5)
    assert (nothing.matched, nothing.unmatched, hits_of(nothing)) == ([], ("xyzzy",), ([], []))
    assert hits_of(search.run(source, "zip", 0)) == ([], [])


def test_a_score_adds_the_impacts_in_query_order_from_the_first() -> None:
    terms = [([1, 4], [0.1, 0.2], None, None), ([4], [0.7], None, None), ([2], [1.0], None, None)]
    assert search.score_of(4, terms) == 0.2 + 0.7
    assert search.score_of(3, terms) == 0.0
    assert search.accumulate(terms) == {1: 0.1, 4: 0.2 + 0.7, 2: 1.0}


def test_top_keeps_every_tool_tied_with_the_kth_until_the_tie_key_decides() -> None:
    scores = {5: 1.0, 3: 2.0, 9: 2.0, 1: 2.0, 7: 0.5}
    assert search.top(scores, 2, lambda d: d) == [(1, 2.0), (3, 2.0)]
    assert search.top(scores, 2, lambda d: -d) == [(9, 2.0), (3, 2.0)]
    assert search.top(scores, 9, lambda d: d, min_score=1.0) == [
        (1, 2.0),
        (3, 2.0),
        (9, 2.0),
        (5, 1.0),
    ]
    assert search.top(scores, 0, lambda d: d) == []
