"""First contact: the first lists and searches wait, bounded, for backends still connecting.

Through the SDK's in-memory client, with a backend layer in memory whose one server connects
when the test says so (or never). The bound's semantics are tested, not its timing: a list
waits for a backend that connects, returns without one that never does, and once the bound
has passed nothing waits; the search tool and its results say how many are connecting.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.serve.support import structured
from toolfind.backends.seam import NOT_STARTED, BackendStatus, NoBackends
from toolfind.models import Source, Tool
from toolfind.serve.options import ServeOptions
from toolfind.serve.server import Discovery
from toolfind.serve.state import LiveIndex

pytestmark = pytest.mark.anyio

WAIT = 30.0
PING = Tool(
    name="late__ping",
    description="Answer pong from the late server.",
    namespace="late",
    aliases=("ping",),
    source=Source(file="mcp://late"),
)


class Arriving(NoBackends):
    """Backends in memory: one server, ``late``, connecting until `connect` is called."""

    def __init__(self) -> None:
        self.up = anyio.Event()
        self.listener: Callable[[], None] | None = None
        self._tools: list[Tool] = []

    def connect(self) -> None:
        self._tools = [PING]
        self.up.set()
        assert self.listener is not None
        self.listener()

    def tools(self) -> Sequence[Tool]:
        return tuple(self._tools)

    def serves(self, name: str) -> bool:
        return any(t.name == name for t in self._tools)

    def route(self, name: str) -> tuple[str, str] | None:
        return ("late", "ping") if self.serves(name) else None

    async def call(
        self, name: str, arguments: Mapping[str, Any], progress: Any = None, *, lane: Any = None
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text="pong")])

    def status(self) -> Mapping[str, BackendStatus]:
        if self.up.is_set():
            return {"late": BackendStatus("late", True, 1, state="ready")}
        return {"late": BackendStatus("late", False, 0, detail=NOT_STARTED, state="connecting")}

    async def wait_settled(self) -> None:
        await self.up.wait()

    def set_listener(self, listener: Callable[[], None]) -> None:
        self.listener = listener


def serving(tmp_path: Path, backends: Arriving, backend_wait: float) -> Any:
    catalog = tmp_path / "c.json"
    catalog.write_text('[{"name": "noop", "description": "Nothing at all."}]', encoding="utf-8")
    options = replace(
        ServeOptions(catalogs=(catalog,), watch=False),
        exposure="direct",
        backend_wait=backend_wait,
    )
    live = LiveIndex(
        options.catalogs, params=options.params, filters=options.filters, backends=backends
    )
    backends.set_listener(live.backends_changed)
    live.load()
    return Client(Discovery(live, options, backends).build_server(), mode="legacy")


def described(listed: types.ListToolsResult) -> str:
    search = next(t for t in listed.tools if t.name == "proxy_search_tools")
    return search.description or ""


async def test_the_first_tools_list_waits_for_a_backend_that_is_connecting(tmp_path: Path) -> None:
    backends = Arriving()
    async with serving(tmp_path, backends, backend_wait=WAIT) as client:
        listed: list[types.ListToolsResult] = []

        async def first_list() -> None:
            listed.append(await client.list_tools())

        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as tg:
                tg.start_soon(first_list)
                await anyio.wait_all_tasks_blocked()
                assert not listed  # still waiting for 'late'
                backends.connect()
        names = [t.name for t in listed[0].tools]
        assert "late__ping" in names  # a host that lists once sees it
        assert "still connecting" not in described(listed[0])
        found = structured(await client.call_tool("proxy_search_tools", {"query": "pong"}))
        assert [h["name"] for h in found["hits"]] == ["late__ping"]
        assert "backends_connecting" not in found


async def test_a_backend_that_never_connects_costs_at_most_the_bound(tmp_path: Path) -> None:
    backends = Arriving()
    async with serving(tmp_path, backends, backend_wait=0.3) as client:
        with anyio.fail_after(WAIT):
            listed = await client.list_tools()  # returns: the bound has passed
            assert "late__ping" not in [t.name for t in listed.tools]
            assert "1 more MCP server is still connecting" in described(listed)
            found = structured(await client.call_tool("proxy_search_tools", {"query": "pong"}))
            assert found["backends_connecting"] == 1 and found["hits"] == []
            # It connects later: the lists follow (list_changed), nothing waits any more.
            backends.connect()
            categories = structured(await client.call_tool("proxy_tool_categories", {}))
            late = next(c for c in categories["categories"] if c["name"] == "late")
            assert late["state"] == "ready"


async def test_backend_wait_0_never_waits(tmp_path: Path) -> None:
    backends = Arriving()
    async with serving(tmp_path, backends, backend_wait=0) as client:
        with anyio.fail_after(WAIT):
            listed = await client.list_tools()
        assert "late__ping" not in [t.name for t in listed.tools]
        assert "still connecting" in described(listed)
