"""Your own synonyms (``[synonyms]`` in toolfind.toml) through the real CLI and its cache."""

from __future__ import annotations

import json
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
