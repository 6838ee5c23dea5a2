"""How a request's words are read, against the shipped catalogs and the real MCP captures:
synonyms by the words written (not stems), typo correction that never rewrites a real word
and shows words, recent history read as a log, undo as the opposite of making."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import FIXTURES, SHIPPED
from toolfind import catalog
from toolfind.core import search, typos
from toolfind.core.analysis import capitalised
from toolfind.models import SearchResult
from toolfind.store.index import SearchIndex

CAPTURES = FIXTURES / "mcp"


@cache
def shipped() -> SearchIndex:
    """The shipped catalogs and the real MCP captures, pooled."""
    return SearchIndex.build(catalog.load([SHIPPED, CAPTURES]).tools)


@cache
def git_server() -> SearchIndex:
    return SearchIndex.build(catalog.load([CAPTURES / "mcp-server-git.json"]).tools)


def names(result: SearchResult, n: int = 3) -> list[str]:
    return [h.tool.name for h in result.hits[:n]]


def test_a_word_that_shares_a_stem_with_a_synonym_does_not_take_its_meaning() -> None:
    # "terminal" and "terminate" stem alike; the kill | terminate | stop process group must
    # not make a request to run a command in a terminal a request to kill a process.
    result = shipped().search("run ls -la in the terminal", 5)
    assert names(result, 1) != ["kill_process"]
    matched = search.run(shipped(), "run ls -la in the terminal", 5).matched
    assert not [m for m in matched if m[3] == search.SYNONYM and m[1] == "terminal"]
    # The word of the group itself still means it, inflected too.
    assert names(shipped().search("terminate the process"), 1) == ["kill_process"]
    assert names(shipped().search("terminated processes"), 1) == ["kill_process"]


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("book a flight to Paris", "paris"),  # a name the request capitalises
        ("post a message in the #general channel", "general"),  # "generat" is generate's stem
    ],
)
def test_a_real_word_is_never_corrected_and_a_name_is_never_a_typo(query: str, word: str) -> None:
    result = shipped().search(query)
    assert word not in dict(result.corrections)
    assert word in result.unmatched_terms


def test_a_slip_is_still_corrected_and_shown_as_a_word_never_a_stem() -> None:
    result = shipped().search("send an emial")
    assert dict(result.corrections) == {"emial": "email"}
    assert names(result, 1) == ["send_email"]
    for query in ("serch the web", "compres this file", "delte the file"):
        shown = dict(shipped().search(query).corrections)
        assert shown and all(typos.is_english(word) for word in shown.values()), (query, shown)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(typos.edits("general") + typos.edits("message"))))
def test_a_correction_never_replaces_a_common_english_word_with_another(word: str) -> None:
    """Whatever one edit of a word a request holds: when that is itself a common English
    word, it is either found as written or left as it is, never read as another English word."""
    found = search.run(shipped(), f"post a {word}", 5)
    for asked, shown in found.corrections.items():
        assert not (typos.is_english(asked) and typos.is_english(shown)), (asked, shown)


def test_capitalised_words_after_the_first_are_names() -> None:
    assert capitalised("Book a flight to Paris") == {"paris"}
    assert capitalised("Serch notion") == frozenset()  # the first word of a sentence


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("text Anna that I'm late", ["text", "anna", "late"]),  # no "m"
        ("what’s on Bob's calendar", ["bob", "calendar"]),  # a curly apostrophe too
        ("don't delete it, we'll see", ["delete", "see"]),
        ("O'Brien's notes", ["o", "brien", "notes"]),  # an apostrophe in a name separates
    ],
)
def test_a_contraction_leaves_no_one_letter_word_behind(query: str, words: list[str]) -> None:
    from toolfind.core.analysis import query_terms

    assert [word for _, word in query_terms(query)] == words


def test_im_is_not_a_word_no_tool_mentions() -> None:
    result = shipped().search("text Anna that I'm late")
    assert "m" not in result.unmatched_terms and "anna" in result.unmatched_terms


@pytest.mark.parametrize("query", ["show me the last five commits", "show me the last 5 commits"])
def test_the_last_few_commits_is_a_log_not_a_blame_or_a_show(query: str) -> None:
    assert names(shipped().search(query), 1) == ["git_log"]


def test_a_count_of_time_or_lines_is_not_read_as_a_count_of_the_latest_things() -> None:
    from toolfind.core.analysis import query_terms

    assert [w for _, w in query_terms("show the last 5 commits")] == ["show", "commits"]
    for query in ("the last 6 hours of metrics", "the last 50 lines of app.log"):
        assert "last" in [w for _, w in query_terms(query)]


def test_undo_means_the_opposite_of_making_the_thing() -> None:
    # mcp-server-git has no revert: undoing a commit is not committing.
    assert names(git_server().search("undo my last commit"), 1) == ["git_reset"]
    assert names(shipped().search("undo my last commit"), 1) == ["git_revert"]


def test_similar_shares_what_tools_do_not_their_servers_name_numbers_or_one_letter_words() -> None:
    index = shipped()
    for name in ("server-filesystem/read_text_file", "mcp-server-git/git_log", "files/read_file"):
        for found in index.similar(name):
            shared = set(found.shared_terms)
            assert not shared & {"n", "64", "mcp", "server", "mcp_server_git", "server_filesystem"}
            assert all(len(word) > 1 for word in shared), (name, found.shared_terms)
    # Reading a file is like reading a file, not like encoding base64 text.
    assert index.similar("files/read_file")[0].tool.name == "read_file"


def test_no_tool_mentions_says_when_the_hits_were_found_by_meaning() -> None:
    from toolfind.cli.commands import search_notes

    assert search_notes(["cab", "airport"], {}) == ["No tool mentions: cab, airport"]
    assert search_notes(["cab"], {"emial": "email"}, by_meaning=True) == [
        "Read emial as email",
        "No tool mentions: cab (the hits were found by meaning)",
    ]


def test_a_stop_word_counts_as_half_of_a_tools_name_and_never_alone() -> None:
    from toolfind.core.analysis import query_stop_words

    assert names(shipped().search("is 97 prime"), 1) == ["is_prime"]
    assert query_stop_words("is 97 prime") == ["is"]
    assert query_stop_words("is it") == []  # a query of stop words only keeps them anyway
    matched = search.run(shipped(), "is 97 prime", 5).matched
    assert ("is_prime", "is prime", 1.0, search.AS_WRITTEN, "is_prime") in matched
    assert "is" not in {m[0] for m in matched}


def test_similar_to_reading_a_file_is_not_encoding_base64_in_the_shipped_catalogs() -> None:
    index = SearchIndex.build(catalog.load([SHIPPED]).tools)
    assert index.similar("files/read_file")[0].tool.name != "encode_text"
