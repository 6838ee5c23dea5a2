"""serve-mcp as a subprocess in front of a real backend with a tool, resources and a prompt
(tests/fixtures/backends/rich_server.py): everything it offers is usable through toolfind,
over stdio and streamable HTTP."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.helpers import BACKENDS
from tests.serve.support import ACCEPT, INITIALIZE, Seen, http_server, server_env

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

RICH = BACKENDS / "rich_server.py"
START_TIMEOUT = 30
EVENT_TIMEOUT = 15

CATALOG = {
    "namespace": "files",
    "tools": [
        {"name": "read_file", "description": "Read the contents of a text file."},
        {"name": "compress_file", "description": "Compress a file into an archive.", "defer": True},
    ],
}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    catalogs = tmp_path / "catalogs"
    catalogs.mkdir()
    (catalogs / "files.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    servers = tmp_path / "servers.json"
    servers.write_text(
        json.dumps({"mcpServers": {"rich": {"command": sys.executable, "args": [str(RICH)]}}}),
        encoding="utf-8",
    )
    return catalogs, servers


@contextmanager
def legacy_api() -> Iterator[None]:
    """The handshake era's subscribe and setLevel, which the SDK marks deprecated for 2026-07-28."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield


def text_of(content: Any) -> str:
    assert isinstance(content, types.TextContent)
    return content.text


async def exercise(client: Client) -> None:
    """List, read, get, complete and call through toolfind, with progress."""
    # Backends connect in the background; a request routed to one waits for it to be up, so
    # the read comes first and the lists below then see the backend's resources and prompts.
    first = await client.read_resource("toolfind://rich/note://hello")
    assert isinstance(first.contents[0], types.TextResourceContents)
    resources = await client.list_resources()
    uris = [r.uri for r in resources.resources]
    assert uris == ["toolfind:deferred-tools", "toolfind://rich/note://hello"]
    templates = await client.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == [
        "toolfind://rich/note://{name}"
    ]
    read = await client.read_resource("toolfind://rich/note://hello")
    assert read.contents[0].uri == "toolfind://rich/note://hello"
    assert isinstance(read.contents[0], types.TextResourceContents)
    assert read.contents[0].text == "Hello, world."
    own = await client.read_resource("toolfind:deferred-tools")
    assert isinstance(own.contents[0], types.TextResourceContents)
    assert own.contents[0].text == "- **files/compress_file**: Compress a file into an archive.\n"
    with pytest.raises(MCPError) as missing:
        await client.read_resource("toolfind://rich/note://nothing")
    assert missing.value.code == -32002

    prompts = await client.list_prompts()
    assert [p.name for p in prompts.prompts] == ["deferred_tool_summaries", "rich__greet"]
    greeting = await client.get_prompt("rich__greet", {"name": "Ann"})
    assert text_of(greeting.messages[0].content) == "Say hello to Ann."
    summaries = await client.get_prompt("deferred_tool_summaries")
    assert "compress_file" in text_of(summaries.messages[0].content)

    completed = await client.complete(
        types.PromptReference(name="rich__greet"), {"name": "name", "value": "al"}
    )
    assert completed.completion.values == ["albert", "alice"]
    completed = await client.complete(
        types.ResourceTemplateReference(uri="toolfind://rich/note://{name}"),
        {"name": "name", "value": "he"},
    )
    assert completed.completion.values == ["hello"]

    steps: list[tuple[float, float | None, str | None]] = []
    three = anyio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        steps.append((value, total, message))
        if len(steps) == 3:
            three.set()

    result = await client.call_tool("rich__count", {"steps": 3}, progress_callback=progress)
    assert text_of(result.content[0]) == "counted 3"
    with anyio.fail_after(EVENT_TIMEOUT):
        await three.wait()
    assert steps == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    linked = await client.call_tool("rich__link", {"name": "hello"})
    link = linked.content[1]
    assert isinstance(link, types.ResourceLink)
    assert link.uri == "toolfind://rich/note://hello"
    assert (await client.read_resource(link.uri)).contents[0].uri == link.uri
    via_meta = await client.call_tool(
        "proxy_call_tool", {"name": "rich/count", "arguments": {"steps": 1}}
    )
    assert text_of(via_meta.content[0]) == "counted 1"

    for method in ("tools", "prompts"):
        with pytest.raises(MCPError) as bad:
            if method == "tools":
                await client.list_tools(cursor="not-a-cursor")
            else:
                await client.list_prompts(cursor="not-a-cursor")
        assert bad.value.code == -32602


async def exercise_notifications(client: Client, seen: Seen, logs: Seen) -> None:
    """Subscriptions, list changes and log messages relayed (handshake-era clients)."""
    # Subscriptions and list changes are relayed, under the exposed URI.
    with legacy_api():
        await client.subscribe_resource("toolfind://rich/note://hello")
    await client.call_tool("rich__note", {"name": "hello", "text": "changed"})
    updated = await seen.wait(lambda m: isinstance(m, types.ResourceUpdatedNotification))
    assert updated.params.uri == "toolfind://rich/note://hello"
    await seen.wait(lambda m: isinstance(m, types.ResourceListChangedNotification))
    read = await client.read_resource("toolfind://rich/note://hello")
    assert isinstance(read.contents[0], types.TextResourceContents)
    assert read.contents[0].text == "changed"
    await client.call_tool("rich__add_prompt", {"name": "farewell"})
    await seen.wait(lambda m: isinstance(m, types.PromptListChangedNotification))
    names = [p.name for p in (await client.list_prompts()).prompts]
    assert "rich__farewell" in names

    # Log messages: at the level the client set, named after the backend.
    await client.call_tool("rich__log", {"level": "info", "text": "quiet"})
    with legacy_api():
        await client.set_logging_level("debug")
    await client.call_tool("rich__log", {"level": "debug", "text": "loud"})
    message = await logs.wait(lambda p: p.data == "loud")
    assert message.level == "debug" and message.logger == "rich/notes"
    assert all(p.data != "quiet" for p in logs.items)


async def exercise_listen(client: Client) -> None:
    """2026-07-28: a listen stream naming a backend resource hears of its updates and of the
    backends' list changes."""
    uri = "toolfind://rich/note://hello"
    async with client.listen(
        resources_list_changed=True, prompts_list_changed=True, resource_subscriptions=[uri]
    ) as subscription:
        events = subscription.__aiter__()
        await client.call_tool("rich__note", {"name": "hello", "text": "changed"})
        kinds: dict[str, Any] = {}
        with anyio.fail_after(EVENT_TIMEOUT):
            while not {"ResourceUpdated", "ResourcesListChanged"} <= set(kinds):
                event = await events.__anext__()
                kinds[type(event).__name__] = event
        assert kinds["ResourceUpdated"].uri == uri
        await client.call_tool("rich__add_prompt", {"name": "farewell"})
        with anyio.fail_after(EVENT_TIMEOUT):
            while type(event := await events.__anext__()).__name__ != "PromptsListChanged":
                pass


async def test_stdio_passes_everything_the_backend_offers_through(
    tmp_path: Path, setup: tuple[Path, Path]
) -> None:
    catalogs, servers = setup
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolfind", "serve-mcp", "-c", str(catalogs), "--servers", str(servers)],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )
    seen = Seen()
    logs = Seen()
    with anyio.fail_after(START_TIMEOUT + 6 * EVENT_TIMEOUT):
        async with Client(
            params, mode="legacy", message_handler=seen, logging_callback=logs
        ) as client:
            caps = client.server_capabilities
            assert caps.resources is not None and caps.resources.subscribe is True
            assert caps.resources.list_changed is True
            assert caps.prompts is not None and caps.prompts.list_changed is True
            assert caps.completions is not None and caps.logging is not None
            await exercise(client)

            await exercise_notifications(client, seen, logs)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_http_passes_everything_the_backend_offers_through(
    tmp_path: Path, setup: tuple[Path, Path], mode: str
) -> None:
    catalogs, servers = setup
    seen = Seen()
    logs = Seen()
    async with http_server(tmp_path, "-c", str(catalogs), "--servers", str(servers)) as url:
        with anyio.fail_after(START_TIMEOUT + 6 * EVENT_TIMEOUT):
            async with Client(
                url,
                mode=mode,  # type: ignore[arg-type]
                message_handler=seen,
                logging_callback=logs,
            ) as client:
                await exercise(client)
                if mode == "legacy":
                    await exercise_notifications(client, seen, logs)
                else:
                    await exercise_listen(client)


async def test_a_lan_client_is_accepted_by_an_allowed_host_name_and_others_refused(
    tmp_path: Path, setup: tuple[Path, Path]
) -> None:
    catalogs, _ = setup
    args = ("-c", str(catalogs), "--token", "s3cret", "--allowed-host", "mybox.lan")
    async with http_server(tmp_path, *args, bind="0.0.0.0:0") as url:
        port = url.rsplit(":", 1)[1].removesuffix("/mcp")
        local = f"http://127.0.0.1:{port}/mcp"
        body = INITIALIZE
        headers = {**ACCEPT, "Authorization": "Bearer s3cret"}
        async with httpx2.AsyncClient() as http:
            allowed = await http.post(
                local, json=body, headers={**headers, "Host": f"mybox.lan:{port}"}
            )
            assert allowed.status_code == 200
            other = await http.post(
                local, json=body, headers={**headers, "Host": f"other.lan:{port}"}
            )
            assert other.status_code == 421
            origin = await http.post(
                local,
                json=body,
                headers={
                    **headers,
                    "Host": f"mybox.lan:{port}",
                    "Origin": f"http://mybox.lan:{port}",
                },
            )
            assert origin.status_code == 200


async def test_http_clients_see_only_what_their_own_requests_caused(
    tmp_path: Path, setup: tuple[Path, Path]
) -> None:
    """Each client has its own session at the backend: a log message a call causes goes to its
    caller only, and so do a resource update and a list change its own session makes."""
    catalogs, servers = setup
    a_seen, a_logs, b_seen, b_logs = Seen(), Seen(), Seen(), Seen()
    args = ("-c", str(catalogs), "--servers", str(servers), "--backend-wait", "30")
    async with http_server(tmp_path, *args) as url:
        with anyio.fail_after(START_TIMEOUT + 6 * EVENT_TIMEOUT):
            async with (
                Client(url, mode="legacy", message_handler=a_seen, logging_callback=a_logs) as a,
                Client(url, mode="legacy", message_handler=b_seen, logging_callback=b_logs) as b,
            ):
                await a.list_tools()  # waits for the backend (--backend-wait)
                await a.list_resources()  # so that each is told when that list changes
                await b.list_resources()
                with legacy_api():
                    await a.set_logging_level("debug")
                    await b.set_logging_level("debug")
                    await a.subscribe_resource("toolfind://rich/note://hello")
                await a.call_tool("rich__log", {"level": "debug", "text": "for a"})
                await a_logs.wait(lambda p: p.data == "for a")
                await a.call_tool("rich__note", {"name": "hello", "text": "changed"})
                await a_seen.wait(lambda m: isinstance(m, types.ResourceUpdatedNotification))
                await a_seen.wait(lambda m: isinstance(m, types.ResourceListChangedNotification))
                await b.call_tool("rich__log", {"level": "debug", "text": "for b"})
                await b_logs.wait(lambda p: p.data == "for b")
                assert [p.data for p in b_logs.items] == ["for b"]
                assert [p.data for p in a_logs.items] == ["for a"]
                # What A's own session did reached A only (B has heard from the server since).
                for kind in (
                    types.ResourceUpdatedNotification,
                    types.ResourceListChangedNotification,
                ):
                    assert not any(isinstance(m, kind) for m in b_seen.items)
