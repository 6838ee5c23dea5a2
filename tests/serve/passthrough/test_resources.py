"""Resources passed through (`serve.passthrough.resources`): what subscriptions hold is
bounded (a refused subscription leaves nothing, a client holds at most a bounded number, a
huge URI is refused before anything), and a client's subscriptions go when it does. In memory,
with a backend layer in memory that serves subscribable resources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.serve.support import Subscribable, make_server
from toolfind.serve.passthrough import resources

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def held(server_side: Any) -> tuple[dict[str, Any], dict[Any, Any]]:
    found: resources.Resources = server_side.passthrough.resources
    return found._subscribers, found._held


async def test_refused_subscriptions_leave_nothing_behind(catalog_dir: Path) -> None:
    server, _, discovery = make_server([catalog_dir], Subscribable())
    async with Client(server, mode="legacy") as client:
        for i in range(100):
            with pytest.raises(MCPError) as refused:
                await client.subscribe_resource(f"toolfind://nobody/{i}")
            assert refused.value.error.code == resources.RESOURCE_NOT_FOUND
        with pytest.raises(MCPError) as too_long:
            await client.subscribe_resource("toolfind://weather/" + "x" * resources.MAX_URI)
        assert too_long.value.error.code == types.INVALID_PARAMS
        assert len(too_long.value.error.message) < 200
        assert held(discovery) == ({}, {})


async def test_a_client_holds_a_bounded_number_of_subscriptions_freed_as_it_leaves(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resources, "MAX_SUBSCRIPTIONS", 3)
    backends = Subscribable()
    server, _, discovery = make_server([catalog_dir], backends)
    async with Client(server, mode="legacy") as client:
        for name in "abc":
            await client.subscribe_resource(f"toolfind://weather/note://{name}")
        await client.subscribe_resource("toolfind://weather/note://a")  # held already: fine
        with pytest.raises(MCPError) as full:
            await client.subscribe_resource("toolfind://weather/note://d")
        assert "at most 3 resource subscriptions per client" in full.value.error.message
        await client.unsubscribe_resource("toolfind://weather/note://b")
        await client.subscribe_resource("toolfind://weather/note://d")  # room again
        subscribers, _ = held(discovery)
        assert sorted(subscribers) == [f"toolfind://weather/note://{n}" for n in "acd"]
    assert held(discovery) == ({}, {})  # the client left: nothing kept for it
    assert [m for m, _ in backends.requests].count("resources/subscribe") == 4
    assert [m for m, _ in backends.requests].count("resources/unsubscribe") == 4
