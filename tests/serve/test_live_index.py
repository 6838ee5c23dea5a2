"""The live index over catalogs and backends: reloads that keep what is good, namespaces apart.

A backend layer in memory whose tools and states the test changes; real catalog files.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from tests.helpers import write
from toolfind.backends.seam import BackendStatus
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
