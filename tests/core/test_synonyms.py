"""toolfind.core.synonyms: groups matched by the words a person wrote, stored once per group."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfind.core import synonyms
from toolfind.core.analysis import _stem, query_terms


def shipped(known: set[str] | None = None) -> synonyms.Table:
    return synonyms.build(
        synonyms.groups(), query_terms, (lambda t: True) if known is None else known.__contains__
    )


@pytest.mark.parametrize(
    ("word", "member"),
    [
        ("terminated", "terminate"),
        ("folders", "folder"),
        ("repositories", "repository"),
        ("deleting", "delete"),
        ("listing", "list"),
        ("change", "changes"),  # both inflect one word: the member says "changes"
        ("changed", "changes"),
        ("setting", "settings"),
        ("emails", "email"),
    ],
)
def test_an_inflected_word_is_read_as_the_member_it_inflects(word: str, member: str) -> None:
    assert shipped().member_word(word) == member


@pytest.mark.parametrize("word", ["terminal", "terminals", "news", "set", "currently", "general"])
def test_a_word_that_only_shares_a_stem_with_a_member_is_not_that_member(word: str) -> None:
    # Snowball stems "terminal" and "terminate" alike, "set" and "settings" alike.
    table = shipped()
    assert table.member_word(word) == word and table.terms(word) is None


def test_a_phrase_is_matched_as_consecutive_words_and_expands_to_the_groups_terms() -> None:
    table = shipped()
    pairs = query_terms("open a pull request")
    words, own = [w for _, w in pairs], [t for t, _ in pairs]
    expanded = table.expand(words, own)
    assert ("pr", 1, 2) in expanded
    assert not {"open", "pull", "request"} & {term for term, _, _ in expanded}  # never again


def test_only_terms_some_tool_has_are_searched_and_a_group_with_none_is_left_out() -> None:
    table = shipped({"directori", "pr"})
    assert table.terms("folder") == ("directori",)
    assert table.terms("k8s") is None and table.terms("kubernetes") is None


def test_a_table_survives_its_plain_form_and_refuses_any_other_shape() -> None:
    table = shipped()
    again = synonyms.Table.from_plain(pickle.loads(pickle.dumps(table.plain())))
    assert again.plain() == table.plain() and again.member_word("folders") == "folder"
    for bad in (None, (), ({}, (), frozenset()), ([], (), {}), {"a": ("b",)}):
        with pytest.raises(ValueError, match="synonym table"):
            synonyms.Table.from_plain(bad)


def test_a_query_searches_at_most_max_expansions_terms_of_a_huge_group() -> None:
    words = [f"w{i}x" for i in range(3 * synonyms.MAX_EXPANSIONS)]
    table = synonyms.build([("big", *words)], query_terms, lambda t: True)
    assert len(table.expand(["big"], ["big"])) == synonyms.MAX_EXPANSIONS


def letters(i: int) -> str:
    """``i`` spelt in letters (a word the analyser keeps whole)."""
    return "".join("abcdefghij"[int(d)] for d in str(i))


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 400), k=st.integers(1, 4))
def test_a_group_is_stored_once_so_a_table_grows_linearly_with_its_words(n: int, k: int) -> None:
    """Each member is one key holding one group id; the group's terms are held once: what is
    stored is at most a few entries per declared word, for any group size (a pairwise
    expansion would hold n * (n - 1))."""
    groups = [tuple(f"{letters(g)}x{letters(i)}" for i in range(n)) for g in range(k)]
    keys, targets, words = synonyms.build(groups, query_terms, lambda t: True).plain()
    declared = n * k
    assert len(keys) == declared and sum(map(len, keys.values())) == declared
    assert sum(map(len, targets)) <= declared  # (two words may share a stem)
    assert len(words) <= 8 * declared


@settings(max_examples=200, deadline=None)
@given(word=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12))
def test_a_word_is_only_ever_read_as_a_member_with_its_own_stem(word: str) -> None:
    member = shipped().member_word(word)
    assert member == word or _stem(member) == _stem(word)
