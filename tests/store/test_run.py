"""store.run: the one way every front end opens a run's index, decides the semantic signal
and says what was skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import write
from toolfind.errors import NothingLoaded
from toolfind.store.run import (
    open_recorded,
    open_recorded_segment,
    open_run_index,
    semantic_wanted,
)
from toolfind.store.segment import skipped_line

HALF_BAD = [
    {"name": "good_tool", "description": "A good tool."},
    {"name": "bad_tool", "description": "Bad parameters.", "parameters": 5},
]


@pytest.mark.parametrize("configured", [None, True, False])
def test_the_command_line_is_lexical_unless_asked_whatever_the_config(
    configured: bool | None,
) -> None:
    assert semantic_wanted(None, configured, cli=True) is False
    assert semantic_wanted(False, configured, cli=True) is False
    assert semantic_wanted(True, configured, cli=True) is True


@pytest.mark.parametrize("configured", [None, True, False])
def test_the_api_and_serve_follow_the_argument_then_the_config(configured: bool | None) -> None:
    assert semantic_wanted(None, configured, cli=False) is configured  # None: if installed
    for asked in (True, False):
        assert semantic_wanted(asked, configured, cli=False) is asked


def test_skipped_entries_are_said_once_through_warn_unless_reported_elsewhere(
    tmp_path: Path,
) -> None:
    catalog = str(write(tmp_path / "half.json", HALF_BAD))
    said: list[str] = []
    loaded = open_run_index([catalog], cli=True, warn=said.append)
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
    open_run_index([catalog], semantic=False)  # the API's way: nothing recorded
    assert open_recorded([catalog], said.append) is None and said == []
    first = open_run_index([catalog], cli=True, warn=said.append)
    recorded = open_recorded([catalog], said.append)
    assert recorded is not None and recorded.key == first.key
    seg = open_recorded_segment([catalog], said.append)
    assert seg is not None and seg.tool_count == 1
    seg.fh.close()
    assert said[0] == said[1] == said[2]  # the same line, loaded, recorded or read in place


def test_a_run_without_a_tool_is_an_error_on_the_command_line_only(tmp_path: Path) -> None:
    catalog = str(write(tmp_path / "empty.json", []))
    with pytest.raises(NothingLoaded, match="0 tools loaded from .*empty.json"):
        open_run_index([catalog], cli=True)
    assert len(open_run_index([catalog], semantic=False).index.tools) == 0
    assert open_recorded([catalog], print) is None  # recorded, but nothing to answer from
