"""Your own synonyms (``[synonyms]`` in toolfind.toml) through the real CLI and its cache."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers import invoke, write

CATALOG = """\
tools:
  - name: schedule_daily_meeting
    namespace: team
    description: Put the team's daily meeting in everyone's calendar.
  - name: book_room
    namespace: team
    description: Reserve a meeting room for an hour.
"""


def test_a_users_synonym_group_finds_a_tool_and_changing_it_rebuilds_the_cached_index() -> None:
    write(Path("team.yaml"), CATALOG)
    code, out, _ = invoke("search", "standup", "-c", "team.yaml", "--json")
    assert code == 0 and json.loads(out)["hits"] == []  # no tool says "standup"
    write(Path("toolfind.toml"), '[synonyms]\nstandup = "daily meeting"\n')
    code, out, err = invoke("search", "standup", "-c", "team.yaml", "--json")
    document = json.loads(out)
    assert code == 0 and document["hits"][0]["name"] == "schedule_daily_meeting", err
    assert document["unmatched_terms"] == [] and "No tool mentions" not in err
    code, out, _ = invoke("config", "--json", "-c", "team.yaml")
    rows = {row["key"]: row for row in json.loads(out)["settings"]}
    assert rows["synonyms.standup"]["value"] == ["daily meeting"]
    assert rows["synonyms.standup"]["source"] == "project"


def test_a_bad_synonym_group_is_one_line_naming_the_file_and_the_key() -> None:
    write(Path("team.yaml"), CATALOG)
    write(Path("toolfind.toml"), "[synonyms]\nstandup = 3\n")
    code, out, err = invoke("search", "standup", "-c", "team.yaml")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "toolfind.toml" in err and "synonyms.standup" in err and "Traceback" not in err


def test_a_synonym_table_over_the_bound_is_one_line_naming_the_file_and_the_key() -> None:
    from toolfind.core.synonyms import MAX_WORDS

    write(Path("team.yaml"), CATALOG)
    words = json.dumps([f"w{i}x" for i in range(MAX_WORDS)])
    write(Path("toolfind.toml"), f'[synonyms]\nstandup = "daily meeting"\nbig = {words}\n')
    code, out, err = invoke("search", "standup", "-c", "team.yaml")
    assert code == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "toolfind.toml" in err and "synonyms.big" in err and f"{MAX_WORDS:,}" in err


def test_a_large_synonym_group_is_cached_once_not_pairwise() -> None:
    """A group of a few thousand words costs a cache file of the same order as the catalog's
    own index, not the square of the group."""
    n = 3000
    write(Path("big.json"), [{"name": f"t{i}", "description": f"does w{i}x"} for i in range(n)])
    code, _, err = invoke("search", "w1x", "-c", "big.json", "--json")
    assert code == 0, err
    plain = sum(p.stat().st_size for p in Path(os.environ["TOOLFIND_CACHE_DIR"]).rglob("*"))
    write(Path("toolfind.toml"), "[synonyms]\nbig = " + json.dumps([f"w{i}x" for i in range(n)]))
    code, out, err = invoke("search", "big", "-c", "big.json", "--json")
    assert code == 0 and json.loads(out)["hits"], err
    grown = sum(p.stat().st_size for p in Path(os.environ["TOOLFIND_CACHE_DIR"]).rglob("*"))
    assert grown - plain < 2 * plain  # pairwise, the group alone would be 9 million entries


def test_with_the_semantic_signal_the_words_no_tool_mentions_do_not_contradict_its_hits() -> None:
    import pytest

    pytest.importorskip("wordllama")
    write(
        Path("ride.json"),
        [
            {"name": "order_ride", "description": "Order a taxi or rideshare pickup."},
            {"name": "get_stock_quote", "description": "Get the latest stock quote."},
        ],
    )
    code, out, err = invoke("search", "get me a cab to the airport", "-c", "ride.json")
    assert code == 0 and "No tool mentions: cab, airport\n" in err
    code, out, err = invoke(
        "search", "get me a cab to the airport", "-c", "ride.json", "--semantic", "--json"
    )
    assert code == 0 and json.loads(out)["hits"][0]["name"] == "order_ride", err
    assert "No tool mentions: cab, airport (the hits were found by meaning)" in err
