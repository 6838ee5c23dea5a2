"""serve-mcp's recorder of what it learns from use (toolfind/serve/usage.py): a search, then
the first call of a tool it returned in the same session within the window, is one record;
nothing else is; a session's records are capped. The clock is the recorder's own (given)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.serve.support import make_server
from toolfind.core.learning import SESSION_TOOL_CAP
from toolfind.models import Signals, Tool
from toolfind.serve.usage import WINDOW, Recorder
from toolfind.store.usage import Store

pytestmark = pytest.mark.anyio

FORECAST = Tool(name="forecast", namespace="weather", description="Get the weather forecast.")
ALERTS = Tool(name="alerts", namespace="weather", description="List severe weather alerts.")
RECORD = {
    "hits": [
        {"name": "alerts", "namespace": "weather"},
        {"name": "forecast", "namespace": "weather"},
    ]
}


class Client:
    """A client connection (the recorder follows sessions by reference)."""


def recorder(tmp_path: Path) -> tuple[Recorder, list[float], Store]:
    now = [1000.0]
    store = Store(str(tmp_path / "state"))
    return Recorder(store, clock=lambda: now[0]), now, store


async def test_the_first_call_of_a_returned_tool_in_the_session_is_one_record(
    tmp_path: Path,
) -> None:
    rec, now, store = recorder(tmp_path)
    me, other = Client(), Client()
    rec.searched(me, "will it  rain\n in oslo", RECORD)
    await rec.called(other, FORECAST)  # another session's search is not this one's
    assert store.read() == []
    await rec.called(me, FORECAST)
    await rec.called(me, FORECAST)  # the search led to one call
    (kept,) = store.read()
    assert (kept.request, kept.namespace, kept.tool, kept.rank) == (
        "will it rain in oslo",
        "weather",
        "forecast",
        2,
    )
    rec.searched(me, "weather alerts", RECORD)
    now[0] += WINDOW + 1
    await rec.called(me, ALERTS)  # too late: no evidence
    await rec.called(me, Tool(name="forecast", namespace="elsewhere"))  # not returned
    assert len(store.read()) == 1


async def test_a_session_counts_at_most_its_cap_for_one_tool(tmp_path: Path) -> None:
    rec, _, store = recorder(tmp_path)
    me = Client()
    for _ in range(SESSION_TOOL_CAP + 3):
        rec.searched(me, "rain in oslo", RECORD)
        await rec.called(me, FORECAST)
    assert len(store.read()) == SESSION_TOOL_CAP


def test_learn_off_records_nothing(catalog_dir: Path) -> None:
    on: Any = make_server([catalog_dir])[2]
    off: Any = make_server([catalog_dir], signals=replace(Signals(), learn=False))[2]
    assert on.usage is not None and off.usage is None
