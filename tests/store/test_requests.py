"""Requests as people write them, against real catalogs: the shipped ones and the real MCP
servers' captures of tests/fixtures (a destroying tool never first for a benign request,
synonyms and typos found, and no confident match when nothing fits)."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import FIXTURES, SHIPPED
from toolfind import catalog
from toolfind.core import actions, confidence
from toolfind.core.analysis import split_identifier
from toolfind.models import SearchResult
from toolfind.store.index import SearchIndex

#: The real MCP servers' tools/list captures (time, git, everything, fetch, filesystem,
#: memory, sequential thinking), and GitHub's and Bitbucket's.
CAPTURES = FIXTURES / "mcp"
MORE = FIXTURES / "mcp-more"


@cache
def index_of(*paths: str) -> SearchIndex:
    return SearchIndex.build(catalog.load([FIXTURES.parent.parent / p for p in paths]).tools)


def captures() -> SearchIndex:
    return index_of("tests/fixtures/mcp")


def top(result: SearchResult, n: int = 1) -> list[str]:
    return [h.tool.qualified_name for h in result.hits[:n]]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("remember a fact", {"server-memory/add_observations", "server-memory/create_entities"}),
        ("store this observation for later", {"server-memory/add_observations"}),
        ("make a folder", {"server-filesystem/create_directory"}),
        ("download a web page", {"mcp-server-fetch/fetch"}),
        ("delete the entity Bob", {"server-memory/delete_entities"}),
        ("delete the relation between Alice and Acme", {"server-memory/delete_relations"}),
    ],
)
def test_requests_against_the_mcp_captures_find_the_tool_that_does_it(
    query: str, first: set[str]
) -> None:
    assert top(captures().search(query))[0] in first


def test_remembering_never_puts_a_deleting_tool_first() -> None:
    for query in ("remember a fact", "store this observation for later", "note that Bob likes tea"):
        hits = captures().search(query, 3).hits
        assert hits and not hits[0].tool.name.startswith("delete"), (query, top(hits_of(hits)))


def hits_of(hits: tuple[object, ...]) -> SearchResult:
    return SearchResult("", hits)  # type: ignore[arg-type]


def test_a_pr_on_github_is_a_pull_request() -> None:
    index = index_of("tests/fixtures/mcp", "tests/fixtures/mcp-more/server-github.json")
    assert top(index.search("open a PR on github")) == ["server-github/create_pull_request"]
    assert top(index.search("merge the PR")) == ["server-github/merge_pull_request"]


def test_typos_are_read_as_the_words_they_stand_for_and_say_so() -> None:
    found = captures().search("serch notoin")
    assert found.corrections == (("serch", "search"),)
    assert found.unmatched_terms == ("notoin",)  # no Notion server here: said plainly
    assert "search" in found.hits[0].tool.name
    shipped = index_of("catalogs")
    weather = shipped.search("whats teh wether")
    assert weather.corrections == (("wether", "weather"),) and weather.unmatched_terms == ()
    assert weather.hits[0].tool.namespace == "weather"
    # Two neighbours swapped, in a short word and a long one, are read back too.
    swapped = index_of("tests/fixtures/mcp-more/bitbucket.json").search("lsit teh pull reqeusts")
    assert dict(swapped.corrections) == {"lsit": "list", "reqeusts": "requests"}
    assert all("pull" in name or "pr" in name for name in top(swapped, 3))


def test_a_request_nothing_answers_is_not_a_confident_match() -> None:
    # The captures hold no weather tool: the only word that matches is "going".
    rain = captures().search("is it going to rain in Oslo")
    assert all(h.confidence < confidence.CONFIDENT for h in rain.hits)
    assert confidence.no_confident_match(max(h.confidence for h in rain.hits))
    # Where a tool does it, it is.
    fetch = captures().search("fetch this web page as markdown")
    assert fetch.hits[0].tool.name == "fetch"
    assert fetch.hits[0].confidence >= confidence.CONFIDENT
    assert confidence.no_confident_match(fetch.hits[0].confidence) == ""


def test_the_readme_calendar_example_lists_the_events() -> None:
    shipped = index_of("catalogs")
    assert top(shipped.search("what is on my calendar tomorrow")) == ["calendar/list_events"]


# -- the safety property -------------------------------------------------------------------


@cache
def everything() -> SearchIndex:
    return index_of("catalogs", "tests/fixtures/mcp", "tests/fixtures/mcp-more")


def _objects() -> list[str]:
    """The words naming what the destroying tools act on ("relations", "branch", "bucket")."""
    index = everything()
    found: set[str] = set()
    for doc, tool in enumerate(index.tools):
        if index.action(doc) & actions.DESTROYS:
            for part, _ in split_identifier(tool.name):
                word = part.lower()
                if len(word) > 2 and word not in actions._VERBS | actions._DESTROY_VERBS:
                    found.add(word)
    return sorted(found)


BENIGN = [
    "show the",
    "list the",
    "read the",
    "get the",
    "find the",
    "what is the",
    "check the",
    "remember the",
    "add a",
    "create a",
    "save the",
    "update the",
    "open the",
]


@settings(max_examples=150, deadline=None)
@given(verb=st.sampled_from(BENIGN), thing=st.sampled_from(_objects()))
def test_a_benign_request_never_puts_a_destroying_tool_first(verb: str, thing: str) -> None:
    """Over the shipped catalogs and the MCP captures (SHIPPED, CAPTURES, MORE): a request to
    read, list, show, remember, make or change the very thing a destroying tool acts on ranks
    a tool that does not destroy it first."""
    assert SHIPPED.is_dir() and CAPTURES.is_dir() and MORE.is_dir()
    index = everything()
    result = index.search(f"{verb} {thing}", 1)
    if result.hits:
        first = index.tools.index(result.hits[0].tool)
        assert not index.action(first) & actions.DESTROYS, (verb, thing, top(result))
