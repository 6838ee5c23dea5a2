"""serve-mcp's own prompt and resource, list cursors, URI naming, allowed hosts and HTTP limits
(in memory, or against a uvicorn server in this process)."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from typer.testing import CliRunner

from tests.serve.test_serve import FakeBackends, make_server
from toolfind.cli.app import app
from toolfind.errors import ConfigError
from toolfind.models import Source, Tool
from toolfind.serve.options import HttpAddress, allowed_from_config
from toolfind.serve.passthrough.common import PAGE_SIZE, backend_uri, exposed_uri, page
from toolfind.serve.passthrough.prompts import OWN_PROMPT
from toolfind.serve.passthrough.resources import OWN_URI
from toolfind.serve.transports.http import security_settings
from toolfind.serve.transports.http_limits import RateLimit, limited_protocol

pytestmark = pytest.mark.anyio

CATALOG = {
    "namespace": "files",
    "tools": [
        {"name": "read_file", "description": "Read the contents of a text file. More text."},
        {"name": "compress_file", "description": "Compress a file into an archive.", "defer": True},
        {"name": "hash_file", "description": "Hash a file with SHA-256.", "defer": True},
    ],
}


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "catalogs"
    directory.mkdir()
    (directory / "files.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    return directory


@pytest.fixture
async def client(catalog_dir: Path) -> AsyncIterator[Client]:
    server, _, _ = make_server([catalog_dir])
    async with Client(server, mode="legacy") as c:
        yield c


# -- cursors and names -------------------------------------------------------------------------


def test_pages_follow_their_cursors_to_the_end() -> None:
    items = list(range(2 * PAGE_SIZE + 3))
    seen: list[int] = []
    cursor: str | None = None
    pages = 0
    while True:
        chunk, cursor = page(items, cursor, "tools")
        seen.extend(chunk)
        pages += 1
        if cursor is None:
            break
    assert seen == items and pages == 3


@pytest.mark.parametrize("cursor", ["junk", "", "dG9vbHM6MA==", "cHJvbXB0czox", "dG9vbHM6OTk5"])
def test_a_cursor_not_given_out_for_this_list_is_invalid_params(cursor: str) -> None:
    # "tools:0" (never given out), "prompts:1" (another list's), "tools:999" (past the end)
    with pytest.raises(MCPError) as raised:
        page(list(range(10)), cursor, "tools")
    assert raised.value.code == -32602


@pytest.mark.parametrize(
    "uri", ["file:///tmp/a%2Fb.txt", "note://{name}", "https://x.example/a?b=c#d", "urn:isbn:1"]
)
def test_backend_uris_round_trip_verbatim(uri: str) -> None:
    exposed = exposed_uri("my-server_2", uri)
    assert exposed == f"toolfind://my-server_2/{uri}"
    assert backend_uri(exposed) == ("my-server_2", uri)


@pytest.mark.parametrize("uri", [OWN_URI, "toolfind://", "toolfind://server", "file:///x"])
def test_uris_that_are_not_a_backend_s_do_not_route(uri: str) -> None:
    assert backend_uri(uri) is None


# -- toolfind's own prompt and resource, capabilities -------------------------------------------


async def test_without_backends_the_capabilities_are_what_toolfind_itself_serves(
    client: Client,
) -> None:
    caps = client.server_capabilities
    assert caps.resources is not None and caps.prompts is not None and caps.logging is not None
    assert caps.completions is None  # nothing to complete without backends
    resources = await client.list_resources()
    assert [r.uri for r in resources.resources] == [OWN_URI]
    assert (await client.list_resource_templates()).resource_templates == []
    assert [p.name for p in (await client.list_prompts()).prompts] == [OWN_PROMPT]


async def test_the_deferred_summaries_resource_and_prompt_are_the_cli_s_lines(
    client: Client, catalog_dir: Path
) -> None:
    markdown = CliRunner().invoke(
        app, ["summaries", "--deferred", "--format", "markdown", "-c", str(catalog_dir)]
    )
    assert markdown.exit_code == 0
    read = await client.read_resource(OWN_URI)
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text == markdown.stdout
    assert content.text == (
        "- **files/compress_file**: Compress a file into an archive.\n"
        "- **files/hash_file**: Hash a file with SHA-256.\n"
    )
    prompt = await client.get_prompt(OWN_PROMPT)
    block = prompt.messages[0].content
    assert isinstance(block, types.TextContent) and block.text == markdown.stdout
    every = await client.get_prompt(OWN_PROMPT, {"all": "true"})
    block = every.messages[0].content
    assert isinstance(block, types.TextContent) and "read_file" in block.text


async def test_an_unknown_resource_or_prompt_is_a_protocol_error_naming_the_fix(
    client: Client,
) -> None:
    with pytest.raises(MCPError) as unknown:
        await client.read_resource("toolfind://nobody/file:///x")
    assert unknown.value.code == -32002 and "resources/list" in unknown.value.message
    with pytest.raises(MCPError) as prompt:
        await client.get_prompt("nobody__greet")
    assert prompt.value.code == -32602 and "prompts/list" in prompt.value.message


async def test_tools_list_pages_with_opaque_cursors(catalog_dir: Path) -> None:
    backends = FakeBackends()
    backends._tools = [
        Tool(
            name=f"weather__t{i:03}",
            description=f"Tool {i}.",
            namespace="weather",
            source=Source(file="mcp://weather"),
        )
        for i in range(2 * PAGE_SIZE + 10)
    ]
    server, _, _ = make_server([catalog_dir], backends, exposure="direct")
    async with Client(server, mode="legacy") as c:
        names: list[str] = []
        cursor: str | None = None
        while True:
            result = await c.list_tools(cursor=cursor)
            assert len(result.tools) <= PAGE_SIZE
            names.extend(t.name for t in result.tools)
            cursor = result.next_cursor
            if cursor is None:
                break
        assert len(names) == 5 + 2 * PAGE_SIZE + 10
        assert len(set(names)) == len(names)
        with pytest.raises(MCPError) as bad:
            await c.list_tools(cursor="bm9wZQ==")
        assert bad.value.code == -32602


async def test_set_level_is_answered(client: Client) -> None:
    import warnings

    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        assert isinstance(await client.set_logging_level("debug"), types.EmptyResult)


# -- allowed hosts and origins -----------------------------------------------------------------


def test_allowed_hosts_add_names_on_any_port_and_exact_host_ports() -> None:
    settings = security_settings(
        HttpAddress("0.0.0.0", 8765),
        ("mybox.lan", "192.168.1.20:8765"),
        ("https://app.example.com",),
    )
    assert {"mybox.lan", "mybox.lan:*", "192.168.1.20:8765"} <= set(settings.allowed_hosts)
    assert "192.168.1.20:*" not in settings.allowed_hosts
    assert "https://app.example.com" in settings.allowed_origins
    assert "http://mybox.lan:*" in settings.allowed_origins


def test_allowed_hosts_come_from_toml_and_the_command_line() -> None:
    table = {"allowed_hosts": ["a.lan"], "allowed_origins": "https://x.example"}
    hosts, origins = allowed_from_config(table, "toolfind.toml", ["b.lan", "a.lan"], [])
    assert hosts == ("a.lan", "b.lan") and origins == ("https://x.example",)
    with pytest.raises(ConfigError) as bad:
        allowed_from_config({"allowed_hosts": [3]}, "toolfind.toml", [], [])
    assert str(bad.value) == "toolfind.toml: serve.allowed_hosts: must be a list of strings"
    with pytest.raises(ConfigError) as origin:
        allowed_from_config({"allowed_origins": ["app.example"]}, "toolfind.toml", [], [])
    assert str(origin.value).startswith("toolfind.toml: serve.allowed_origins: --allowed-origin")


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--allowed-host", "http://x.lan"), ("--allowed-host", "*"), ("--allowed-origin", "x.lan")],
)
def test_a_malformed_allowed_host_or_origin_is_one_error_line(
    catalog_dir: Path, flag: str, value: str
) -> None:
    result = CliRunner().invoke(
        app, ["serve-mcp", "-c", str(catalog_dir), "--http", "0", flag, value]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {flag} {value!r}: give")
    assert len(result.stderr.strip().splitlines()) == 1


# -- HTTP limits -------------------------------------------------------------------------------


def test_rate_limit_passes_a_burst_then_counts_what_it_left_out() -> None:
    now = [0.0]
    limit = RateLimit(burst=2, window=60, clock=lambda: now[0])

    def record(host: str) -> logging.LogRecord:
        return logging.LogRecord(
            "mcp", logging.WARNING, "x", 1, f"Invalid Host header: {host}", None, None
        )

    passed = [limit.filter(record(f"h{i}")) for i in range(5)]
    assert passed == [True, True, False, False, False]
    now[0] = 61.0
    later = record("h9")
    assert limit.filter(later)
    assert later.msg == "Invalid Host header: h9 (3 more like this not logged)"
    other = logging.LogRecord("mcp", logging.WARNING, "x", 1, "something else", None, None)
    assert limit.filter(other)
    own = logging.LogRecord("toolfind.serve", logging.WARNING, "x", 1, "%s", ("a",), None)
    assert all(limit.filter(own) for _ in range(10))  # toolfind's own lines are deduplicated


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


async def _closed(stream: anyio.abc.SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    with anyio.fail_after(10):
        try:
            async for chunk in stream:
                received += chunk
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            pass
    await stream.aclose()
    return received


@asynccontextmanager
async def limited_server(
    cap: int, header_timeout: float, body_timeout: float
) -> AsyncIterator[int]:
    """uvicorn with the limits in this process; yields its port."""
    import uvicorn

    sock = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(
        _hello,
        http=limited_protocol(cap, header_timeout, body_timeout),
        log_config=None,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        # The socket listens already: connections wait in its backlog until uvicorn accepts.
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        yield sock.getsockname()[1]
        server.should_exit = True


async def test_requests_slower_than_the_read_timeouts_are_closed() -> None:
    async with limited_server(10, 0.3, 0.3) as port:
        silent = await anyio.connect_tcp("127.0.0.1", port)
        partial = await anyio.connect_tcp("127.0.0.1", port)
        await partial.send(b"POST / HTTP/1.1\r\nHost: x\r\n")
        body = await anyio.connect_tcp("127.0.0.1", port)
        await body.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        assert await _closed(silent) == b""
        assert await _closed(partial) == b""
        assert await _closed(body) == b""
        ok = await anyio.connect_tcp("127.0.0.1", port)
        await ok.send(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = await _closed(ok)
        assert answer.startswith(b"HTTP/1.1 200") and b"hello" in answer


async def test_at_the_cap_half_open_requests_make_room_and_busy_ones_refuse() -> None:
    # Timeouts far beyond the test's waits: every close here is the cap's doing.
    async with limited_server(2, 60, 60) as port:
        silent = await anyio.connect_tcp("127.0.0.1", port)
        partial = await anyio.connect_tcp("127.0.0.1", port)
        await partial.send(b"POST / HTTP/1.1\r\nHost: x\r\n")
        ok = await anyio.connect_tcp("127.0.0.1", port)
        await ok.send(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert await _closed(silent) == b""  # the oldest half-open one made room
        answer = await _closed(ok)
        assert answer.startswith(b"HTTP/1.1 200") and b"hello" in answer
        bodies = []
        for _ in range(2):  # past their headers: not evicted
            body = await anyio.connect_tcp("127.0.0.1", port)
            await body.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            bodies.append(body)
        assert await _closed(partial) == b""
        excess = await anyio.connect_tcp("127.0.0.1", port)
        assert (await _closed(excess)).startswith(b"HTTP/1.1 503")
        for body in bodies:
            await body.aclose()
