"""serve-mcp in front of two real backends named so that one must move: URIs name the server.

Backend ``notes`` has the name of a catalog namespace, so its tools move to another namespace;
a second backend is really named ``notes-mcp``. Every URI ``notes`` returns (a tool's
resource link, a prompt's embedded resource, a read's contents) names ``toolfind://notes/``
and reads back from ``notes``, never from ``notes-mcp``; the two are reported apart. And a
subscription survives ``notes`` crashing and being restarted
(tests/fixtures/backends/rich_server.py ``--mortal``).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.helpers import BACKENDS
from tests.serve.support import server_env, structured, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

RICH = BACKENDS / "rich_server.py"
START = 90.0
WAIT = 30.0


class Updates:
    """``notifications/resources/updated`` received, with a way to wait for the next one."""

    def __init__(self) -> None:
        self.uris: list[str] = []
        self._event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)
            self._event.set()
            self._event = anyio.Event()

    async def after(self, count: int) -> list[str]:
        with anyio.fail_after(WAIT):
            while len(self.uris) <= count:
                await self._event.wait()
        return self.uris[count:]


def params(tmp_path: Path) -> StdioServerParameters:
    catalog = tmp_path / "notes.json"
    catalog.write_text(
        json.dumps(
            {"namespace": "notes", "tools": [{"name": "jot", "description": "Jot a note."}]}
        ),
        encoding="utf-8",
    )
    rich = {"command": sys.executable, "args": [str(RICH), "--mortal"]}
    servers = tmp_path / "servers.json"
    servers.write_text(
        json.dumps({"mcpServers": {"notes": rich, "notes-mcp": rich}}), encoding="utf-8"
    )
    return StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "toolfind", "serve-mcp", "-c", str(catalog), "--servers", str(servers)),
            *("--backend-wait", str(START)),
        ],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )


async def test_uris_name_the_server_that_returned_them_even_when_it_moved(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(START + 4 * WAIT):
        async with Client(params(tmp_path), mode="legacy") as client:
            await client.list_tools()  # waited for both backends (--backend-wait)
            await client.call_tool("notes__note", {"name": "hello", "text": "from notes"})
            await client.call_tool("notes-mcp__note", {"name": "hello", "text": "from notes-mcp"})

            linked = await client.call_tool("notes__link", {"name": "hello"})
            link = linked.content[1]
            assert isinstance(link, types.ResourceLink)
            assert link.uri == "toolfind://notes/note://hello"
            read = await client.read_resource(link.uri)
            assert isinstance(read.contents[0], types.TextResourceContents)
            assert read.contents[0].uri == "toolfind://notes/note://hello"
            assert read.contents[0].text == "from notes"

            prompt = await client.get_prompt("notes__greet", {"name": "Ann", "note": "hello"})
            embedded = prompt.messages[1].content
            assert isinstance(embedded, types.EmbeddedResource)
            assert embedded.resource.uri == "toolfind://notes/note://hello"

            # Each backend in a namespace of its own, each with its state.
            found = structured(await client.call_tool("proxy_tool_categories", {}))
            states = {c["name"]: c.get("state") for c in found["categories"]}
            assert states == {"notes": None, "notes-mcp": "ready", "notes-mcp2": "ready"}
            tools = structured(
                await client.call_tool("proxy_search_tools", {"query": "link note", "limit": 20})
            )
            by_name = {h["name"]: h["namespace"] for h in tools["hits"]}
            assert by_name["notes__link"] == "notes-mcp2"
            assert by_name["notes-mcp__link"] == "notes-mcp"


async def test_a_subscription_survives_its_backend_crashing_and_restarting(
    tmp_path: Path,
) -> None:
    updates = Updates()
    uri = "toolfind://notes/note://hello"
    with anyio.fail_after(START + 4 * WAIT):
        async with Client(params(tmp_path), mode="legacy", message_handler=updates) as client:
            await client.list_tools()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.subscribe_resource(uri)
            await client.call_tool("notes__note", {"name": "hello", "text": "one"})
            assert await updates.after(0) == [uri]

            died = await client.call_tool("notes__die", {})
            assert died.is_error and "exited with status 3" in text_of(died)
            # Restarted at once and subscribed again: its subscribers are told the resource
            # may have changed (a fresh process), then hear of every change as before.
            assert await updates.after(1) == [uri]
            await client.call_tool("notes__note", {"name": "hello", "text": "two"})
            assert await updates.after(2) == [uri]
            read = await client.read_resource(uri)
            assert isinstance(read.contents[0], types.TextResourceContents)
            assert read.contents[0].text == "two"
