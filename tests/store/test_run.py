"""store.run: the one way every front end opens a run's index, decides the signals beyond
BM25F and says what was skipped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import run_main, write
from toolfind import config
from toolfind.config import for_run
from toolfind.errors import ConfigError, NothingLoaded
from toolfind.models import Signals
from toolfind.store.run import (
    by_words,
    open_recorded,
    open_recorded_segment,
    open_run_index,
    wanted,
)
from toolfind.store.segment import skipped_line

HALF_BAD = [
    {"name": "good_tool", "description": "A good tool."},
    {"name": "bad_tool", "description": "Bad parameters.", "parameters": 5},
]


@pytest.mark.parametrize("switch", [None, True, False])
def test_an_unset_switch_is_off_in_a_one_shot_process_and_auto_elsewhere(
    switch: bool | None,
) -> None:
    assert wanted(switch, one_shot=False) is switch  # None: on where installed
    assert wanted(switch, one_shot=True) is (False if switch is None else switch)


def test_the_warm_path_ranks_only_what_words_alone_rank() -> None:
    off = {"semantic": None, "rerank": None}
    assert by_words({}, off)
    assert by_words({"semantic_weight": 0.5}, off)  # a weight turns nothing on
    assert not by_words({"rerank": True}, off)
    assert by_words({"rerank": True}, {"semantic": None, "rerank": False})  # --no-rerank
    assert not by_words({}, {"semantic": True, "rerank": None})


def test_skipped_entries_are_said_once_through_warn_unless_reported_elsewhere(
    tmp_path: Path,
) -> None:
    catalog = str(write(tmp_path / "half.json", HALF_BAD))
    said: list[str] = []
    loaded = open_run_index([catalog], one_shot=True, remember=True, warn=said.append)
    assert len(loaded.index.tools) == 1 and len(loaded.findings) == 1
    assert said == [skipped_line(loaded.findings[0])]
    assert said[0].startswith("Warning: skipped ") and "[1].parameters" in said[0]
    quiet: list[str] = []
    open_run_index([catalog], warn=quiet.append, report_skipped=False)
    assert quiet == []


def test_the_warm_readings_answer_only_what_a_command_line_run_recorded(tmp_path: Path) -> None:
    catalog = str(write(tmp_path / "half.json", HALF_BAD))
    said: list[str] = []
    assert open_recorded([catalog], said.append) is None
    assert open_recorded_segment([catalog], said.append) is None
    open_run_index([catalog])  # the API's way: nothing recorded
    assert open_recorded([catalog], said.append) is None and said == []
    first = open_run_index([catalog], one_shot=True, remember=True, warn=said.append)
    recorded = open_recorded([catalog], said.append)
    assert recorded is not None and recorded.key == first.key
    seg = open_recorded_segment([catalog], said.append)
    assert seg is not None and seg.tool_count == 1
    seg.fh.close()
    assert said[0] == said[1] == said[2]  # the same line, loaded, recorded or read in place


def test_a_run_without_a_tool_is_an_error_on_the_command_line_only(tmp_path: Path) -> None:
    catalog = str(write(tmp_path / "empty.json", []))
    with pytest.raises(NothingLoaded, match="0 tools loaded from .*empty.json"):
        open_run_index([catalog], need_tools=True)
    assert len(open_run_index([catalog]).index.tools) == 0
    assert open_recorded([catalog], print) is None  # recorded, but nothing to answer from


def _user_config(text: str) -> None:
    write(Path(os.environ["XDG_CONFIG_HOME"]) / "toolfind" / "toolfind.toml", text)


def test_signals_resolve_flags_then_environment_then_project_then_user_then_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert for_run().signals == Signals()
    _user_config("rerank = false\nrerank_weight = 0.2\nrerank_depth = 30\nsemantic_weight = 0.1\n")
    write(Path("toolfind.toml"), "rerank_weight = 0.4\nsemantic = false\n")
    assert for_run().signals == Signals(False, 0.1, False, 0.4, 30)
    monkeypatch.setenv("TOOLFIND_RERANK", "true")
    monkeypatch.setenv("TOOLFIND_SEMANTIC", "auto")  # back to the front end's default
    assert for_run().signals == Signals(None, 0.1, True, 0.4, 30)
    asked = {"rerank": False, "rerank_depth": 7, "semantic_weight": None}
    assert for_run(signals=asked).signals == Signals(None, 0.1, False, 0.4, 7)
    # What the manifest keeps: the environment's and the files' settings, not the flags'.
    assert for_run(signals=asked).configured == {
        "semantic_weight": 0.1,
        "rerank": True,
        "rerank_weight": 0.4,
        "rerank_depth": 30,
    }


@pytest.mark.parametrize(
    ("asked", "message"),
    [
        ({"semantic_weight": 1.5}, "semantic_weight must be a number from 0 to 1, not 1.5"),
        ({"rerank_weight": float("nan")}, "rerank_weight must be a number from 0 to 1, not nan"),
        ({"rerank_depth": 0}, "rerank_depth must be a whole number from 1 to 1000, not 0"),
        ({"rerank": "yes"}, "rerank must be true or false"),
    ],
)
def test_a_signal_setting_out_of_range_is_one_config_error_wherever_it_is_given(
    asked: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        for_run(signals=asked)
    assert str(raised.value) == message


def test_a_switch_variable_that_is_not_a_switch_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLFIND_SEMANTIC", "maybe")
    with pytest.raises(ConfigError, match="TOOLFIND_SEMANTIC='maybe': use true, false or auto"):
        for_run()


def test_a_recorded_run_takes_its_signals_from_the_manifest_not_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = str(write(tmp_path / "c.json", [{"name": "alpha", "description": "An alpha."}]))
    write(Path("toolfind.toml"), "rerank = false\nrerank_weight = 0.3\nsemantic_weight = 0.2\n")
    cli = {"one_shot": True, "remember": True, "need_tools": True}
    first = open_run_index([catalog], signals={"semantic": False}, **cli)
    assert first.signals == Signals(False, 0.2, False, 0.3)

    def unread(*args: object, **kwargs: object) -> None:
        raise AssertionError("the config was read again")

    monkeypatch.setattr(config, "load_config", unread)
    again = open_run_index([catalog], signals={"semantic": False}, **cli)
    assert again.key == first.key and again.signals == first.signals
    assert open_run_index([catalog], **cli).signals == Signals(False, 0.2, False, 0.3)


def test_the_command_line_honours_the_configs_switches_and_the_warm_path_declines(
    tmp_path: Path,
) -> None:
    catalog = str(write(tmp_path / "c.json", [{"name": "alpha", "description": "An alpha."}]))
    write(Path("toolfind.toml"), "rerank = true\n")
    # Recorded by a run that turned the reranker off: a run without the flag must not be
    # answered by words alone, warm or not (no model here: the one line saying how to get it).
    assert run_main("search", "alpha", "-c", catalog, "--no-rerank", "--json").returncode == 0
    done = run_main("search", "alpha", "-c", catalog, "--json")
    assert done.returncode == 1 and "toolfind model fetch" in done.stderr
    assert run_main("list", "-c", catalog, "--json").returncode == 0  # list does not rank
    warm = run_main("search", "alpha", "-c", catalog, "--no-rerank", "--json")
    assert warm.returncode == 0 and json.loads(warm.stdout)["hits"][0]["name"] == "alpha"


def test_toolfind_config_says_where_each_signal_setting_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(Path("toolfind.toml"), "rerank_depth = 20\n")
    monkeypatch.setenv("TOOLFIND_RERANK", "false")
    rows = {s.key: s for s in config.explain()[0]}
    assert (rows["rerank"].value, rows["rerank"].source) == (False, "environment")
    assert rows["rerank"].origin == "TOOLFIND_RERANK"
    assert (rows["rerank_depth"].value, rows["rerank_depth"].source) == (20, "project")
    assert (rows["semantic_weight"].value, rows["semantic_weight"].source) == (0.3, "default")
