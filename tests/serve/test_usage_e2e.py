"""serve-mcp learns from use, end to end: ``python -m toolfind serve-mcp`` in front of a real
MCP server, driven by the SDK's client. A search, then a call of a tool it returned, is one
record of the usage store (the request redacted, never the call's arguments or result); a
call of a tool no search returned is none. Each step waits on its reply, never on time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve.support import structured, text_of
from tests.serve.test_serve_backends_e2e import server, serving, until, write_servers
from toolfind.store.usage import Store

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]


async def test_a_call_of_a_tool_a_search_returned_is_evidence_and_no_other_call_is(
    tmp_path: Path,
) -> None:
    servers = write_servers(tmp_path / "servers.json", {"other": server()})
    store = Store(str(tmp_path / "state"))
    async with serving(tmp_path, "--servers", str(servers)) as (client, changes, _):
        await until(client, changes, lambda c: c.get("other", {}).get("state") == "ready")
        secret = "https://alice:hunter2@example.com/feed"
        # No search yet: a call is no evidence.
        await client.call_tool("proxy_call_tool", {"name": "other__echo", "arguments": {}})
        found = structured(
            await client.call_tool(
                "proxy_search_tools", {"query": f"echo the text back from {secret}"}
            )
        )
        names = [hit["name"] for hit in found["hits"]]
        assert "other__echo" in names and "other__image" not in names
        await client.call_tool("other__image", {})  # not returned by the search
        assert store.read() == []
        said = await client.call_tool(
            "proxy_call_tool",
            {"name": "other__echo", "arguments": {"text": "private-argument"}},
        )
        assert text_of(said) == "private-argument"
        (kept,) = store.read()
        assert (kept.namespace, kept.tool, kept.rank) == (
            "other",
            "other__echo",
            names.index("other__echo") + 1,
        )
        assert kept.request.startswith("echo the text back from https://") and kept.session
        # The search led to one call: calling the tool again by its own name adds nothing.
        await client.call_tool("other__echo", {"text": "again"})
        assert len(store.read()) == 1
    stored = Path(store.path).read_text(encoding="utf-8")
    assert "hunter2" not in stored and "private-argument" not in stored
    assert "again" not in stored
