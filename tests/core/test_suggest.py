"""toolfind.core.suggest: the "did you mean" of a name no tool has, from a few candidates, is
the answer a ranking of every spelling gives (the oracle below), from the index and from the
index file alike, and reads a small part of a large index file."""

from __future__ import annotations

import io
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import FIXTURES, SHIPPED
from toolfind import catalog
from toolfind.core import suggest
from toolfind.models import Tool, qualified_name
from toolfind.store import cache, segment
from toolfind.store.index import SearchIndex


def every_spelling(index: SearchIndex, wanted: str) -> list[str]:
    """The oracle: every tool's name, qualified name and aliases ranked by ``suggest.close``
    (an alias offers the tool's name, qualified when another tool has the same name)."""
    names = [index.spellings(doc)[0] for doc in range(index.tool_count)]
    shared = {name for name, count in Counter(names).items() if count > 1}
    pool: dict[str, str] = {}
    for doc in range(index.tool_count):
        name, namespace, aliases = index.spellings(doc)
        qualified = qualified_name(namespace, name)
        pool.setdefault(name.casefold(), name)
        pool.setdefault(qualified.casefold(), qualified)
        for alias in aliases:
            pool.setdefault(alias.casefold(), qualified if name in shared else name)
    return suggest.close(wanted, pool)


def one_edit(rng: random.Random, name: str) -> str:
    """``name`` with one letter left out, added, changed, or two swapped."""
    i = rng.randrange(len(name))
    letter = rng.choice("abcdefghijklmnopqrstuvwxyz")
    kind = rng.choice("dist")
    if kind == "d" and len(name) > 1:
        return name[:i] + name[i + 1 :]
    if kind == "t" and i + 1 < len(name):
        return name[:i] + name[i + 1] + name[i] + name[i + 2 :]
    if kind == "s":
        return name[:i] + letter + name[i + 1 :]
    return name[:i] + letter + name[i:]


VERBS = "get list create update delete search read write send fetch sync archive export".split()
NOUNS = "file folder user invoice order email event calendar bucket commit branch issue".split()


def generated(n: int, seed: int = 3) -> list[Tool]:
    """``n`` tools named as large catalogs name them (``verb_qualifier_noun_i``)."""
    rng = random.Random(seed)
    quals = "remote local shared archived pending daily public".split()
    return [
        Tool(
            name=f"{rng.choice(VERBS)}_{rng.choice(quals)}_{rng.choice(NOUNS)}_{i}",
            description=f"{rng.choice(VERBS).capitalize()} a {rng.choice(NOUNS)}.",
            namespace=f"ns{i % 3}",
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def real() -> SearchIndex:
    """The shipped catalogs, the real MCP captures and 2,000 generated tools."""
    tools = catalog.load([SHIPPED, FIXTURES / "mcp"]).tools
    return SearchIndex.build([*tools, *generated(2000)])


def test_a_typo_of_a_name_is_answered_as_ranking_every_spelling_answers_it(
    real: SearchIndex,
) -> None:
    assert real.tool_count > 10 * suggest.ALL  # candidates, not every tool
    rng = random.Random(5)
    checked = 0
    for doc in rng.sample(range(real.tool_count), 150):
        name, namespace, _ = real.spellings(doc)
        for wanted in (one_edit(rng, name), one_edit(rng, qualified_name(namespace, name))):
            if real.exact_ids(wanted):
                continue  # the edit made another tool's name (or the same name key)
            # The first is the one an error names ("Did you mean ...?").
            assert suggest.suggestions(real, wanted)[:1] == every_spelling(real, wanted)[:1]
            checked += 1
    assert checked > 250


def test_the_typod_tool_comes_first(real: SearchIndex) -> None:
    for wanted, first in [
        ("raed_file", "read_file"),
        ("git_craete_branch", "git_create_branch"),
        ("mcp-server-git/git_stauts", "mcp-server-git/git_status"),
        ("xead_file", "read_file"),  # the first letter: the names' ends find it
        ("get_remote_file_branch_ship", None),
    ]:
        found = suggest.suggestions(real, wanted)
        assert found[:1] == ([first] if first else every_spelling(real, wanted)[:1])


def test_the_index_file_suggests_what_the_index_suggests(real: SearchIndex) -> None:
    payload = {"index": real, "findings": [], "format": 0, "key": "", "files": []}
    data = b"".join(bytes(chunk) for chunk in cache._index_file_parts(payload))
    seg = segment.Segment(io.BytesIO(data), len(data))
    rng = random.Random(8)
    for doc in rng.sample(range(real.tool_count), 40):
        wanted = one_edit(rng, real.spellings(doc)[0])
        assert suggest.suggestions(seg, wanted) == suggest.suggestions(real, wanted)


def test_a_suggestion_reads_a_small_part_of_a_large_index_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = SearchIndex.build(generated(20_000))
    payload = {"index": index, "findings": [], "format": 0, "key": "", "files": []}
    data = b"".join(bytes(chunk) for chunk in cache._index_file_parts(payload))
    seg = segment.Segment(io.BytesIO(data), len(data))
    read: Counter[str] = Counter()
    reader = seg._bytes

    def counted(name: str, i: int, j: int) -> bytes:
        found = reader(name, i, j)
        read[name] += len(found)
        return found

    monkeypatch.setattr(seg, "_bytes", counted)
    name = index.spellings(12_345)[0]
    wanted = name[:5] + name[6:]
    assert suggest.suggestions(seg, wanted)[0] == name
    # The vocabulary is read whole when a word is a typo, as by any warm search; of the
    # rest (postings, names, records), a small part.
    vocabulary = sum(n for column, n in read.items() if column.startswith("terms."))
    assert sum(read.values()) - vocabulary < len(data) / 50


tool_names = st.from_regex(r"[a-z]{1,4}(_[a-z]{1,4}){0,2}", fullmatch=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(tool_names, min_size=1, max_size=suggest.ALL, unique=True),
    aliases=st.lists(tool_names, max_size=4),
    wanted=st.text("abcdefg_/", min_size=1, max_size=12),
)
def test_a_small_catalog_ranks_every_spelling(
    names: list[str], aliases: list[str], wanted: str
) -> None:
    tools: list[Any] = [
        Tool(name=name, namespace="ab"[i % 2], aliases=tuple(aliases) if i == 0 else ())
        for i, name in enumerate(names)
    ]
    index = SearchIndex.build(tools)
    assert suggest.suggestions(index, wanted) == every_spelling(index, wanted)


def test_a_close_alias_offers_the_tools_own_name_qualified_when_shared() -> None:
    tools = [
        Tool(name="fetch_page", namespace="web", aliases=("download_url",)),
        Tool(name="fetch_page", namespace="cache"),
        Tool(name="read_file", namespace="files", aliases=("cat_file",)),
        *generated(300),
    ]
    index = SearchIndex.build(tools)
    assert suggest.suggestions(index, "download_ur")[0] == "web/fetch_page"
    assert suggest.suggestions(index, "cat_fil")[0] == "read_file"
    assert suggest.suggestions(index, "zzzzzzzzzzzz") == []
