"""``search --why TOOL`` (``toolfind.store.why``): where a tool ranks for a request and why
not higher, through the CLI on real catalogs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.helpers import invoke, run_main, write
from toolfind.output.schemas import WHY_SCHEMA

CATALOG = """\
namespace: git
tools:
  - name: git_blame
    description: Show what revision and author last modified each line of a file.
  - name: git_log
    description: List commits in reverse chronological order.
  - name: git_commit
    description: Record changes to the repository as a new commit.
  - name: old_tool
    enabled: false
    description: Show the last commits, the old way.
"""


@pytest.fixture
def catalog(tmp_path: Path) -> str:
    return str(write(tmp_path / "cat" / "git.yaml", CATALOG))


def why(catalog: str, *args: str) -> dict[str, Any]:
    """``search ARGS --json``; a ``--why`` record is checked against its schema."""
    code, out, err = invoke("search", *args, "-c", catalog, "--json")
    assert code == 0, err
    record: dict[str, Any] = json.loads(out)
    if "--why" in args:
        jsonschema.validate(record, WHY_SCHEMA)
    return record


def test_why_says_the_rank_the_missing_words_and_each_part_against_the_first_hit(
    catalog: str,
) -> None:
    record = why(catalog, "show the last commits", "--why", "git_log")
    first = record["first"]
    assert (first["name"], record["name"]) == ("git_blame", "git_log")
    hits = why(catalog, "show the last commits")["hits"]
    assert record["rank"] == 1 + [h["name"] for h in hits].index("git_log") > 1
    assert (record["score"], record["confidence"]) == (
        hits[record["rank"] - 1]["score"],
        hits[record["rank"] - 1]["confidence"],
    )
    assert record["depth"] == 100
    assert record["lacks"] == ["show", "last"]  # what git_blame has and git_log has not
    words = {w["word"]: (w["score"], w["first"]) for w in record["words"]}
    assert list(words) == ["show", "last", "commits"]
    assert words["show"][0] == 0 < words["show"][1] and words["last"][0] == 0 < words["last"][1]
    assert words["commits"][0] > 0
    assert sum(w[0] for w in words.values()) == pytest.approx(record["score"], abs=1e-5)
    signals = {s["signal"]: s for s in record["signals"]}
    assert sum(s["score"] for s in signals.values()) == pytest.approx(record["score"], abs=1e-5)
    assert sum(s["first"] for s in signals.values()) == pytest.approx(first["score"], abs=1e-5)
    assert sum(s["share"] for s in signals.values()) == pytest.approx(1.0, abs=0.01)
    assert list(signals) == ["description"]  # only descriptions hold the query's words
    assert signals["description"]["share"] == signals["description"]["first_share"] == 1.0


def test_why_of_the_first_hit_and_of_a_tool_beyond_the_depth(catalog: str, tmp_path: Path) -> None:
    first = why(catalog, "record my changes", "--why", "git_commit")
    assert first["rank"] == 1 and first["first"]["name"] == "git_commit"
    assert first["lacks"] == []  # "my" is a stop word
    many = [f"- name: tool_{i}\n  description: Record changes {i}.\n" for i in range(120)]
    big = str(write(tmp_path / "big.yaml", "".join(many)))
    beyond = why(big, "record changes", "-c", catalog, "--why", "git_log")
    assert (beyond["rank"], beyond["score"], beyond["confidence"]) == (None, None, None)
    assert beyond["lacks"] == ["record", "changes"]


def test_why_takes_any_spelling_and_suggests_on_a_miss(catalog: str) -> None:
    spellings = ("git/git_log", "git__git_log", "git:git_log", "GIT_LOG", "git.git-log")
    ranks = {why(catalog, "commits", "--why", name)["rank"] for name in spellings}
    assert len(ranks) == 1
    code, out, err = invoke("search", "commits", "--why", "git_lgo", "-c", catalog)
    assert (code, out) == (1, "")
    assert err == "Error: No tool named 'git_lgo'. Did you mean 'git_log'?\n"


def test_why_for_a_person_reads_as_sentences_and_two_tables(catalog: str) -> None:
    for _ in range(2):  # cold, then warm
        done = run_main("search", "show the last commits", "--why", "git_log", "-c", catalog)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert (
            lines[0].startswith("git/git_log ranks 3rd for 'show the last commits' (confidence ")
            and "; the first hit is git/git_blame (confidence " in lines[0]
        )
        assert lines[1] == "Query words it lacks: show, last"
        assert "┃ word    ┃ git/git_log ┃ git/git_blame ┃" in lines
        assert any(line.startswith("┃ signal ") for line in lines)
        assert any(line.startswith("│ total ") for line in lines)


def test_why_says_when_a_tool_cannot_rank(catalog: str) -> None:
    code, out, err = invoke("search", "show the last commits", "--why", "old_tool", "-c", catalog)
    assert code == 0 and "git/old_tool is not in the top 100" in out
    assert "Note: git/old_tool is disabled: search never returns it" in err
    code, out, err = invoke(
        "search", "commits", "--why", "git_log", "--namespace", "web", "-c", catalog
    )
    assert code == 0 and "Note: --namespace or --tag leaves git/git_log out" in err


@pytest.mark.parametrize(
    ("extra", "clash"),
    [
        (["--explain"], "--explain"),
        (["--fields", "name"], "--fields"),
        (["--format", "csv"], "--format csv"),
        (["--schema"], "--schema"),
    ],
)
def test_why_refuses_options_that_do_not_apply(catalog: str, extra: list[str], clash: str) -> None:
    code, out, err = invoke("search", "commits", "--why", "git_log", *extra, "-c", catalog)
    assert (code, out) == (2, "")
    assert f"--why explains one tool's place: {clash} does not apply" in err


def test_fail_empty_with_why_fails_when_the_tool_is_not_ranked(catalog: str) -> None:
    ranked = invoke("search", "commits", "--why", "git_log", "--fail-empty", "-c", catalog)
    assert ranked[0] == 0
    missing = invoke("search", "author", "--why", "git_log", "--fail-empty", "-c", catalog)
    assert missing[0] == 1
