"""The live index over catalogs and backends: reloads that keep what is good, namespaces apart.

A backend layer in memory whose tools and states the test changes; real catalog files.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.helpers import write
from tests.serve.support import (
    GIT,
    FakeBackends,
    ListChanged,
    make_server,
    structured,
    write_catalog,
)
from toolfind.backends.seam import BackendStatus, NoBackends
from toolfind.config import Filters
from toolfind.models import ScoringParams, Source, Tool
from toolfind.serve.state import LiveIndex

pytestmark = pytest.mark.anyio


def backend_tool(server: str, name: str) -> Tool:
    return Tool(
        name=f"{server}__{name}",
        description=f"The {name} tool of {server}.",
        namespace=server,
        aliases=(name,),
        source=Source(file=f"mcp://{server}"),
    )


class Servers:
    """Backends in memory: their tools and states as the test sets them."""

    def __init__(self, **states: str) -> None:
        self.states = dict(states)
        self.listed: list[Tool] = []
        self.listener: Callable[[], None] | None = None

    def tools(self) -> Sequence[Tool]:
        return tuple(self.listed)

    def status(self) -> Mapping[str, BackendStatus]:
        return {
            name: BackendStatus(name, state == "ready", state=state)
            for name, state in self.states.items()
        }

    def serves(self, name: str) -> bool:
        return any(t.name == name for t in self.listed)

    def set_listener(self, listener: Callable[[], None]) -> None:
        self.listener = listener


def live_over(catalog: Path, servers: Servers) -> LiveIndex:
    live = LiveIndex(
        [catalog], params=ScoringParams(), filters=Filters(), backends=servers, use_cache=False
    )
    servers.set_listener(live.backends_changed)
    live.load()
    return live


GOOD = '[{"name": "noop", "description": "Nothing at all."}]'


async def test_a_broken_catalog_edit_in_the_same_poll_keeps_the_backends_new_tools(
    tmp_path: Path,
) -> None:
    catalog = write(tmp_path / "c.json", GOOD)
    servers = Servers(g="ready")
    servers.listed = [backend_tool("g", "grow")]
    live = live_over(catalog, servers)
    write(catalog, GOOD[:-1] + ',{"name": "half')  # an editor's half-written save
    servers.listed.append(backend_tool("g", "zebra_painter"))
    live.backends_changed()
    assert live.catalogs_changed()
    assert await live.reload(catalogs_changed=True)
    names = {t.name for t in live.snapshot.index.tools}
    assert names == {"noop", "g__grow", "g__zebra_painter"}  # old catalog, new backend tools
    assert not await live.reload(catalogs_changed=True)  # the broken edit alone: nothing to do


async def test_a_backend_state_change_swaps_the_snapshot_without_rebuilding(
    tmp_path: Path,
) -> None:
    servers = Servers(a="connecting", b="connecting")
    live = live_over(write(tmp_path / "c.json", GOOD), servers)
    first = live.snapshot
    assert first.backends_connecting == 2
    servers.states["b"] = "retrying"  # its first attempt failed: no tools changed
    live.backends_changed()
    assert await live.reload(catalogs_changed=False)
    second = live.snapshot
    assert second.index is first.index and second.generation == first.generation + 1
    assert second.backends_connecting == 1


@pytest.mark.parametrize(
    ("servers", "expected"),
    [
        ({"files": "ready"}, {"files": "files-mcp"}),
        # A real server named files-mcp keeps its name; the moved one takes the next free one.
        (
            {"files": "ready", "files-mcp": "ready"},
            {"files": "files-mcp2", "files-mcp": "files-mcp"},
        ),
        # Also when the real one is declared first, or has no tools yet.
        (
            {"files-mcp": "connecting", "files": "failed"},
            {"files": "files-mcp2", "files-mcp": "files-mcp"},
        ),
        (
            {"files": "ready", "files-mcp": "ready", "files-mcp2": "ready"},
            {"files": "files-mcp3", "files-mcp": "files-mcp", "files-mcp2": "files-mcp2"},
        ),
    ],
)
def test_a_moved_backend_never_shares_a_namespace_with_another(
    tmp_path: Path, servers: dict[str, str], expected: dict[str, str]
) -> None:
    catalog = write(
        tmp_path / "files.json",
        {"namespace": "files", "tools": [{"name": "ls", "description": "List."}]},
    )
    backends = Servers(**servers)
    backends.listed = [backend_tool(name, "read_file") for name in servers]
    live = live_over(catalog, backends)
    assert {name: live.namespace_of(name) for name in servers} == expected
    namespaces = sorted(c.name for c in live.snapshot.index.categories())
    assert namespaces == sorted({"files", *expected.values()})


def test_namespace_of_a_server_without_tools_is_the_one_it_will_get(tmp_path: Path) -> None:
    catalog = write(
        tmp_path / "files.json",
        {"namespace": "files", "tools": [{"name": "ls", "description": "List."}]},
    )
    backends = Servers(files="retrying", **{"files-mcp": "ready"})
    backends.listed = [backend_tool("files-mcp", "read_file")]
    live = live_over(catalog, backends)
    assert live.namespace_of("files") == "files-mcp2"
    assert live.namespace_of("files-mcp") == "files-mcp"


async def test_catalog_edit_notifies_handshake_era_clients(catalog_dir: Path) -> None:
    server, live, _ = make_server([catalog_dir])
    seen = ListChanged()
    async with Client(server, mode="legacy", message_handler=seen) as c:
        await c.list_tools()
        extra = {
            **GIT,
            "tools": [*GIT["tools"], {"name": "git_push", "description": "Push commits."}],
        }
        write_catalog(catalog_dir, "git", extra)
        assert await live.reload()
        with anyio.fail_after(30):
            await seen.after(0)
        search = (await c.list_tools()).tools[0]
        assert search.description is not None and "5 tools" in search.description


async def test_catalog_edit_notifies_subscription_era_listeners(catalog_dir: Path) -> None:
    server, live, _ = make_server([catalog_dir])
    async with Client(server) as c, c.listen(tools_list_changed=True) as subscription:
        write_catalog(
            catalog_dir, "extra", {"namespace": "extra", "tools": [{"name": "ping_host"}]}
        )
        assert await live.reload()
        with anyio.fail_after(30):
            event = await subscription.__aiter__().__anext__()
        assert type(event).__name__ == "ToolsListChanged"


async def test_an_edit_that_leaves_the_listing_alone_sends_nothing(catalog_dir: Path) -> None:
    server, live, discovery = make_server([catalog_dir])
    async with Client(server, mode="legacy") as c:
        await c.list_tools()
        edited = {
            **GIT,
            "tools": [{**GIT["tools"][0], "description": "Commit staged work."}, GIT["tools"][1]],
        }
        write_catalog(catalog_dir, "git", edited)
        assert await live.reload()
        record = structured(await c.call_tool("proxy_search_tools", {"query": "staged work"}))
        assert record["hits"][0]["name"] == "git_commit"
    assert discovery.notifier.sent == 0


async def test_a_broken_edit_keeps_the_last_good_index_and_logs_one_line(
    catalog_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server, live, _ = make_server([catalog_dir])
    (catalog_dir / "git.json").write_text('{"namespace": "git", "tools": [', encoding="utf-8")
    with caplog.at_level(logging.ERROR, logger="toolfind.serve"):
        assert not await live.reload()
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "git.json" in lines[0] and "last good index" in lines[0]
    async with Client(server, mode="legacy") as c:
        record = structured(await c.call_tool("proxy_search_tools", {"query": "commit"}))
    assert record["hits"][0]["name"] == "git_commit"


async def test_the_watcher_rebuilds_when_a_catalog_file_changes(catalog_dir: Path) -> None:
    _, live, _ = make_server([catalog_dir])
    swapped = anyio.Event()

    async def on_swap(old: Any, new: Any) -> None:
        swapped.set()

    live.on_swap(on_swap)
    async with anyio.create_task_group() as tg:
        tg.start_soon(live.watch, 0.05)
        write_catalog(
            catalog_dir, "extra", {"namespace": "extra", "tools": [{"name": "ping_host"}]}
        )
        with anyio.fail_after(30):
            await swapped.wait()
        tg.cancel_scope.cancel()
    assert live.snapshot.generation == 2


async def test_a_backend_change_rebuilds_the_index(catalog_dir: Path) -> None:
    backends = FakeBackends()
    _, live, _ = make_server([catalog_dir], backends)
    swapped = anyio.Event()

    async def on_swap(old: Any, new: Any) -> None:
        swapped.set()

    live.on_swap(on_swap)
    async with anyio.create_task_group() as tg:
        tg.start_soon(live.watch, 60)
        backends._tools.pop()
        live.backends_changed()
        with anyio.fail_after(30):
            await swapped.wait()
        tg.cancel_scope.cancel()
    assert [t.name for t in live.snapshot.index.tools if t.namespace == "weather"] == [
        "weather__forecast"
    ]


def test_serve_mcp_sees_an_edit_that_keeps_size_mtime_and_inode_and_ignores_a_swap_file() -> None:
    Path("cats").mkdir()
    Path("cats/cat.json").write_text(
        json.dumps([{"name": "alpha_tool", "description": "launch the rocket now"}]),
        encoding="utf-8",
    )
    live = LiveIndex(
        [Path("cats")], params=ScoringParams(), filters=Filters(), backends=NoBackends()
    )
    live.load()
    assert not live.catalogs_changed()
    Path("cats/.cat.json.swp").write_text("x", encoding="utf-8")
    assert not live.catalogs_changed()  # the directory changed; no catalog file did
    assert not live.catalogs_changed()
    old = os.stat("cats/cat.json")
    Path("cats/cat.json").write_text(
        json.dumps([{"name": "omega_tool", "description": "launch the rocket now"}]),
        encoding="utf-8",
    )  # same size
    os.utime("cats/cat.json", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert live.catalogs_changed()
