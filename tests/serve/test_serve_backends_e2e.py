"""serve-mcp in front of real backend processes, as a host uses it: never blocked by a backend.

Each test runs ``python -m toolfind serve-mcp`` as a subprocess, driven by the SDK's client,
in front of ``fixtures/backends/lifecycle_server.py`` run in several modes (stuck, crashing
until a file exists, gated by a file, printing a banner). Nothing sleeps: the tests wait for
``list_changed`` notifications, replies and files, each within a timeout; "does not wait
for a backend" is shown by a backend that cannot start until the test lets it.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.backends.support import wait_for_state
from tests.helpers import BACKENDS
from tests.serve.support import (
    INITIALIZE,
    ListChanged,
    Log,
    Records,
    gone_within,
    http_server,
    server_env,
    stdio_serving,
    structured,
    text_of,
)
from toolfind.backends.config import ServerSpec
from toolfind.backends.pool import BackendPool
from toolfind.errors import BackendError
from toolfind.serve.main import make_backends
from toolfind.serve.options import ServeOptions

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

LIFECYCLE = BACKENDS / "lifecycle_server.py"
START = 90.0  # cold starts import the MCP SDK in several processes on two busy cores
WAIT = 60.0
FAST_RETRY = ("--retry-initial", "0.05", "--retry-max", "0.2")


def server(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(LIFECYCLE), *args]}


def write_servers(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@asynccontextmanager
async def serving(work: Path, *args: str) -> AsyncIterator[tuple[Client, ListChanged, Log]]:
    """serve-mcp over stdio with ``args``; yields the client, its notifications and its
    stderr."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolfind", "serve-mcp", "--poll-interval", "0.1", *args],
        env={**server_env(work), "PATH": os.environ.get("PATH", "")},
        cwd=str(work),
    )
    changes = ListChanged()
    read, write = os.pipe()
    log = Log(os.fdopen(read, "rb"))
    with os.fdopen(write, "w", encoding="utf-8") as errlog, anyio.fail_after(START + WAIT):
        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", message_handler=changes
        ) as client:
            yield client, changes, log


async def categories(client: Client) -> dict[str, dict[str, Any]]:
    record = structured(await client.call_tool("proxy_tool_categories", {}))
    return {c["name"]: c for c in record["categories"]}


async def until(
    client: Client, changes: ListChanged, check: Callable[[dict[str, dict[str, Any]]], bool]
) -> dict[str, dict[str, Any]]:
    """Wait (for notifications) until ``check`` holds of the categories."""
    with anyio.fail_after(WAIT):
        while True:
            seen = changes.count
            found = await categories(client)
            if check(found):
                return found
            await changes.after(seen)


async def test_serving_starts_at_once_whatever_the_backends_do_and_they_join_later(
    tmp_path: Path,
) -> None:
    gate, fixed = tmp_path / "gate", tmp_path / "fixed"
    servers = write_servers(
        tmp_path / "servers.json",
        {
            "slow": server("--gate", str(gate)),
            "stuck": server("--stuck"),
            # Fails at once (before Python starts) until the file exists.
            "flaky": {
                "command": "sh",
                "args": ["-c", f"test -e {fixed} || exit 3; exec {sys.executable} {LIFECYCLE}"],
            },
            "good": server("--banner"),
        },
    )
    retry = ("--retry-initial", "5", "--retry-max", "5")
    async with serving(tmp_path, "--servers", str(servers), *retry) as (client, changes, log):
        # Answered while 'slow' cannot start yet: serving did not wait for it.
        listed = await client.list_tools()
        assert "proxy_search_tools" in [t.name for t in listed.tools]
        found = await categories(client)
        assert found["slow"]["state"] == "connecting" and found["slow"]["available"] is False

        # The shipped demo catalogs are not served next to backends: only the backends.
        found = await until(client, changes, lambda c: c.get("good", {}).get("state") == "ready")
        assert set(found) == {"slow", "stuck", "flaky", "good"}
        assert found["good"]["tool_count"] == 4 and found["good"]["available"] is True
        assert found["stuck"]["available"] is False  # connecting, for 30 s per attempt
        await log.wait(
            "server 'flaky' (stdio: sh) is unavailable: exited with status 3", timeout=WAIT
        )
        flaky = (await categories(client))["flaky"]
        assert flaky["state"] == "retrying" and flaky["detail"] == "exited with status 3"

        # A crashed backend is retried: once its cause is fixed, its tools join.
        fixed.write_text("", encoding="utf-8")
        await until(client, changes, lambda c: c["flaky"]["state"] == "ready")
        assert text_of(await client.call_tool("flaky__echo", {"text": "back"})) == "back"

        gate.write_text("", encoding="utf-8")
        await until(client, changes, lambda c: c["slow"]["state"] == "ready")
        hits = structured(await client.call_tool("proxy_search_tools", {"query": "echo text"}))
        assert {h["name"] for h in hits["hits"]} >= {"slow__echo", "good__echo", "flaky__echo"}
        assert all(h["callable"] is True for h in hits["hits"])
        assert "stuck__echo" not in {h["name"] for h in hits["hits"]}

        # A stdout banner is one warning line, never the SDK's traceback.
        assert text_of(await client.call_tool("good__echo", {"text": "hi"})) == "hi"
    stderr = log.text
    assert "Traceback" not in stderr
    assert stderr.count("server 'good' wrote a line that is not JSON-RPC on stdout") == 1


async def test_http_listens_at_once_and_a_slow_backend_joins_with_list_changed(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    servers = write_servers(tmp_path / "servers.json", {"slow": server("--gate", str(gate))})
    args = ("--servers", str(servers), "--exposure", "direct", "--poll-interval", "0.1")
    async with http_server(tmp_path, *args) as url:
        with anyio.fail_after(START):
            async with Client(url) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert "slow__echo" not in names  # listed before the backend could start
                async with client.listen(tools_list_changed=True) as subscription:
                    gate.write_text("", encoding="utf-8")
                    await subscription.__aiter__().__anext__()
                names = [t.name for t in (await client.list_tools()).tools]
                assert "slow__echo" in names
                echoed = await client.call_tool("slow__echo", {"text": "over http"})
                assert echoed.structured_content == {"echo": "over http"}


async def test_the_servers_file_is_watched_and_a_catalog_namespace_never_merges_with_a_backend(
    tmp_path: Path,
) -> None:
    catalog = tmp_path / "good.json"
    catalog.write_text(
        json.dumps(
            {
                "namespace": "good",
                "tools": [{"name": "echo", "description": "Echo the text back (catalog only)."}],
            }
        ),
        encoding="utf-8",
    )
    servers = write_servers(tmp_path / "servers.json", {"good": server()})
    async with serving(tmp_path, "--servers", str(servers), "-c", str(catalog)) as (
        client,
        changes,
        log,
    ):
        found = await until(
            client, changes, lambda c: c.get("good-mcp", {}).get("state") == "ready"
        )
        assert found["good"]["tool_count"] == 1 and "state" not in found["good"]
        assert found["good-mcp"]["tool_count"] == 4

        # A catalog-only tool is not callable; the error names the callable one.
        hits = structured(await client.call_tool("proxy_search_tools", {"query": "echo"}))
        callable_of = {(h["namespace"], h["name"]): h["callable"] for h in hits["hits"]}
        assert callable_of[("good", "echo")] is False
        assert callable_of[("good-mcp", "good__echo")] is True
        refused = await client.call_tool("proxy_call_tool", {"name": "echo", "arguments": {}})
        assert refused.is_error and text_of(refused).startswith("No backend serves 'good/echo'")
        assert text_of(refused).endswith("Did you mean 'good__echo'?")
        unknown = await client.call_tool("proxy_call_tool", {"name": "ecko", "arguments": {}})
        assert text_of(unknown) == "No tool named 'ecko'. Did you mean 'good__echo'?"

        # Added while serving: started, its tools join.
        write_servers(servers, {"good": server(), "more": server("--name", "extra")})
        await until(client, changes, lambda c: c.get("more", {}).get("state") == "ready")
        ran = await client.call_tool("proxy_call_tool", {"name": "more/extra", "arguments": {}})
        assert text_of(ran) == "ran extra on lifecycle"

        seen = changes.count
        write_servers(servers, {"good": server()})  # removed: stopped, its tools leave
        await changes.after(seen)
        found = await until(client, changes, lambda c: "more" not in c)
        assert "more__extra" not in {t.name for t in (await client.list_tools()).tools}
    stderr = log.text
    assert stderr.count("has the name of a catalog namespace") == 1
    assert "server 'more' removed; stopping it" in stderr
    assert "Traceback" not in stderr


async def test_calls_route_exactly_and_arguments_are_checked_before_forwarding(
    tmp_path: Path,
) -> None:
    servers = write_servers(
        tmp_path / "servers.json",
        {
            "evil": server("--name", "a__b", "--server", "evil"),
            "evil__a": server("--name", "b", "--server", "evil__a"),
            "other": server("--name", "b", "--server", "other"),
        },
    )
    args = ("--servers", str(servers), "--max-result-size", "1MiB")
    async with serving(tmp_path, *args) as (client, changes, _):
        await until(client, changes, lambda c: all(s["state"] == "ready" for s in c.values()))

        async def call(name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
            return await client.call_tool(
                "proxy_call_tool", {"name": name, "arguments": arguments or {}}
            )

        assert text_of(await call("evil__a/b")) == "ran b on evil__a"
        assert text_of(await call("evil__a:b")) == "ran b on evil__a"
        assert text_of(await call("evil/a__b")) == "ran a__b on evil"
        assert text_of(await call("evil__a__b_2")) == "ran b on evil__a"
        ambiguous = await call("b")
        assert ambiguous.is_error
        assert text_of(ambiguous) == (
            "'b' is ambiguous: it matches evil__a/evil__a__b_2, other/other__b. "
            "Use one of these names."
        )
        near = await call("EVIL__A__B")  # a loose spelling never runs a tool
        assert text_of(near) == "No tool named 'EVIL__A__B'. Did you mean 'evil__a__b'?"

        # Arguments are checked against the input schema, naming the JSON path.
        wrong = await call("other__typed", {"count": "three"})
        assert wrong.is_error
        assert text_of(wrong).startswith(
            "Invalid arguments for 'other__typed' at $.count: 'three' is not of type 'integer'."
        )
        deep = await client.call_tool("other__typed", {"count": 1, "options": {"depth": "x"}})
        assert deep.is_error and "at $.options.depth:" in text_of(deep)
        missing = await call("other__typed", {})
        assert "'count' is a required property" in text_of(missing)
        good = await call("other__typed", {"count": 3, "label": "ok"})
        assert json.loads(text_of(good)) == {"count": 3, "label": "ok"}

        # A content-only result is passed on as it is: no structuredContent copy.
        image = await call("other__image")
        assert image.structured_content is None and not image.is_error
        assert isinstance(image.content[0], types.ImageContent)
        # A result over --max-result-size is a clear tool error, not relayed.
        huge = await call("other__big", {"bytes": 3 * 1024 * 1024})
        assert huge.is_error
        assert text_of(huge).startswith(
            "'other__big' failed: server 'other' answered 'big' with more than 1 MiB"
        )
        assert text_of(await call("other__echo", {"text": "after"})) == "after"


async def test_argument_checks_can_be_turned_off(tmp_path: Path) -> None:
    servers = write_servers(tmp_path / "servers.json", {"other": server()})
    args = ("--servers", str(servers), "--no-validate-arguments")
    async with serving(tmp_path, *args) as (client, changes, _):
        await until(client, changes, lambda c: c["other"]["state"] == "ready")
        sent = await client.call_tool(
            "proxy_call_tool", {"name": "other__typed", "arguments": {"count": "three"}}
        )
        assert json.loads(text_of(sent)) == {"count": "three"}  # forwarded as it was


async def test_a_backend_that_keeps_failing_is_given_up_then_restarted_by_an_edit(
    tmp_path: Path,
) -> None:
    fixed = tmp_path / "fixed"
    spec = ServerSpec(  # fails at once, before Python starts, until the file exists
        name="flaky",
        transport="stdio",
        command="sh",
        args=("-c", f"test -e {fixed} || exit 3; exec {sys.executable} {LIFECYCLE}"),
    )
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog, anyio.fail_after(WAIT):
        async with BackendPool(
            [spec], backoff_initial=0.01, backoff_max=0.02, max_attempts=3, errlog=errlog
        ) as pool:
            await wait_for_state(pool, "flaky", "failed")
            status = pool.status()["flaky"]
            assert not status.available and status.detail == "exited with status 3"
            assert not pool.serves("flaky__echo")  # never listed: it never started
            fixed.write_text("", encoding="utf-8")
            pool.update([replace(spec, args=(*spec.args[:-1], f"{spec.args[-1]} --banner"))])
            await wait_for_state(pool, "flaky", "ready")
            assert pool.serves("flaky__echo")


async def test_a_broken_servers_file_edit_keeps_the_servers_running(tmp_path: Path) -> None:
    servers = write_servers(tmp_path / "servers.json", {"one": server()})
    records = Records()
    log = logging.getLogger("toolfind.backends")
    log.addHandler(records)
    try:
        with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog:
            pool = make_backends(ServeOptions(servers=(servers,)), environ={}, errlog=errlog)
            assert isinstance(pool, BackendPool)
            with anyio.fail_after(WAIT):
                async with pool, anyio.create_task_group() as tg:
                    tg.start_soon(pool.watch_servers, 0.05)
                    await wait_for_state(pool, "one", "ready")
                    # An entry broken by an edit: skipped, and its server keeps running.
                    servers.write_text('{"mcpServers": {"one": {}}}', encoding="utf-8")
                    await records.wait_for("server 'one' skipped")
                    assert pool.status()["one"].state == "ready"
                    # A file broken as a whole: the change is ignored.
                    servers.write_text('{"mcpServers": ', encoding="utf-8")
                    await records.wait_for("servers file change ignored")
                    assert pool.status()["one"].state == "ready"
                    write_servers(servers, {"two": server()})
                    await records.wait_for("server 'one' removed; stopping it")
                    assert set(pool.status()) == {"two"}
                    await wait_for_state(pool, "two", "ready")
                    tg.cancel_scope.cancel()
    finally:
        log.removeHandler(records)
    (skipped,) = [m for m in records.messages if "server 'one' skipped" in m]
    assert skipped.endswith(
        "mcpServers.one: server 'one' skipped: needs a command (stdio server) or a url (HTTP server)"
    )
    (ignored,) = [m for m in records.messages if "servers file change ignored" in m]
    assert "invalid JSON" in ignored


async def test_an_answer_over_the_limits_is_a_clear_error_and_the_backend_keeps_serving(
    tmp_path: Path,
) -> None:
    spec = ServerSpec(name="b", transport="stdio", command=sys.executable, args=(str(LIFECYCLE),))
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog, anyio.fail_after(WAIT):
        async with BackendPool(
            [spec], max_result_bytes=1024, max_message_bytes=64 * 1024, errlog=errlog
        ) as pool:
            await wait_for_state(pool, "b", "ready")
            with pytest.raises(
                BackendError, match=r"^server 'b' answered 'big' with more than 1 KiB; "
            ):
                await pool.call("b__big", {"bytes": 10_000})
            assert pool.status()["b"].state == "ready"  # parsed, refused, still connected
            with pytest.raises(
                BackendError,
                match=r"^server 'b' answered 'big' with far more than 1 KiB; .* dropped the "
                "connection and restarts the server: ask for less$",
            ):
                await pool.call("b__big", {"bytes": 1_000_000})  # never read whole
            echoed = await pool.call("b__echo", {"text": "after"})
            assert echoed.structured_content == {"echo": "after"}


async def test_backend_wait_lets_the_first_tools_list_include_backends_that_connect_in_time(
    tmp_path: Path,
) -> None:
    # A client that lists once and ignores list_changed (a one-shot script, the Inspector's
    # CLI) sees the backend's tools in its first list when it asks serve-mcp to wait.
    servers = write_servers(tmp_path / "servers.json", {"good": server()})
    args = ("--servers", str(servers), "--exposure", "direct", "--backend-wait", str(WAIT))
    async with serving(tmp_path, *args) as (client, _, _):
        first = await client.list_tools()
        names = [t.name for t in first.tools]
        assert "good__echo" in names, names


async def test_catalogs_given_with_c_are_served_beside_backends_even_the_shipped_ones(
    tmp_path: Path,
) -> None:
    # Only the shipped demo *fallback* is dropped when backends are configured: naming the
    # shipped directory with -c (in a checkout, ./catalogs is that directory) keeps it.
    from toolfind.config import packaged_catalogs

    servers = write_servers(tmp_path / "servers.json", {"good": server()})
    args = ("-c", str(packaged_catalogs()), "--servers", str(servers))
    async with serving(tmp_path, *args) as (client, _, _):
        await client.list_tools()
        found = structured(await client.call_tool("proxy_search_tools", {"query": "merge pdfs"}))
        assert found["hits"][0]["name"] == "merge_pdfs"


STUBBORN = """
import os, sys, threading
from mcp.server.mcpserver import MCPServer
server = MCPServer("stubborn")

@server.tool()
def ping() -> str:
    "Answer pong."
    return "pong"

with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
server.run()
threading.Event().wait()  # ignores its closed stdin: only a signal ends it
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfd_open (Linux)")
async def test_sigterm_stops_every_backend_even_one_that_ignores_its_closed_stdin(
    tmp_path: Path,
) -> None:
    import signal

    script = tmp_path / "stubborn.py"
    script.write_text(STUBBORN, encoding="utf-8")
    pid_file = tmp_path / "backend.pid"
    servers = write_servers(
        tmp_path / "servers.json",
        {"stubborn": {"command": sys.executable, "args": [str(script), str(pid_file)]}},
    )
    command = [
        *(sys.executable, "-m", "toolfind", "serve-mcp", "--servers", str(servers)),
        *("--backend-wait", str(WAIT)),
    ]
    env = {**os.environ, **server_env(tmp_path)}
    async with await anyio.open_process(command, env=env, cwd=tmp_path) as process:
        assert process.stdin is not None and process.stdout is not None
        out = BufferedByteReceiveStream(process.stdout)
        requests = [
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        for message in requests:
            await process.stdin.send((json.dumps(message) + "\n").encode())
        with anyio.fail_after(START + WAIT):
            while json.loads(await out.receive_until(b"\n", 1 << 24)).get("id") != 2:
                pass  # the list waited for the backend (--backend-wait): it is up
        backend = int(pid_file.read_text(encoding="utf-8"))
        process.send_signal(signal.SIGTERM)
        with anyio.fail_after(WAIT):
            await process.wait()
    assert await anyio.to_thread.run_sync(gone_within, backend, WAIT), "backend outlived toolfind"


def nested_gateways(work: Path) -> list[int]:
    """The serve-mcp processes running in ``work`` that a serve-mcp started (its backends
    carry the marker in their environment)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            environ = (proc / "environ").read_bytes().split(b"\0")
            command = (proc / "cmdline").read_bytes()
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        marked = any(item.startswith(b"TOOLFIND_SERVE_MCP=") for item in environ)
        if marked and b"serve-mcp" in command and cwd == str(work):
            found.append(int(proc.name))
    return found


async def test_a_host_config_listing_toolfind_itself_is_served_without_recursion(
    tmp_path: Path,
) -> None:
    """toolfind's own entry, directly (its command) and through a script (the environment
    marker stops it): each skipped with a warning, the other server served, and no second
    serve-mcp left running."""
    servers = tmp_path / "claude_desktop_config.json"
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(
        "import os, sys\n"
        f"os.execv(sys.executable, [sys.executable, '-m', 'toolfind', 'serve-mcp', "
        f"'--servers', {str(servers)!r}])\n",
        encoding="utf-8",
    )
    rogue = [str(BACKENDS / "rogue_server.py"), "notes", "notes"]
    itself = ["-m", "toolfind", "serve-mcp", "--servers", str(servers)]
    write_servers(
        servers,
        {
            "toolfind": {"command": sys.executable, "args": itself},
            "wrapped": {"command": "sh", "args": ["-c", f"exec {sys.executable} {wrapper}"]},
            "notes": {"command": sys.executable, "args": rogue},
        },
    )
    args = ("--servers", str(servers), "--backend-wait", "60")
    async with stdio_serving(tmp_path, *args) as (client, log):
        with anyio.fail_after(START):
            assert text_of(await client.call_tool("notes__pid", {})).isdigit()
            await log.wait("server 'wrapped' skipped: it starts toolfind serve-mcp itself")
            categories = structured(await client.call_tool("proxy_tool_categories", {}))
            states = {c["name"]: c.get("state") for c in categories["categories"]}
            assert states["wrapped"] == "failed" and "toolfind" not in states
            for nested in nested_gateways(tmp_path):
                assert await anyio.to_thread.run_sync(gone_within, nested, WAIT)
    assert log.count("mcpServers.toolfind: server 'toolfind' skipped: it starts toolfind") == 1
    assert log.count("does not run as a backend of toolfind serve-mcp") == 1


async def test_a_vscode_config_with_an_input_variable_starts_and_skips_that_entry(
    tmp_path: Path,
) -> None:
    servers = tmp_path / ".vscode" / "mcp.json"
    servers.parent.mkdir()
    rogue = [str(BACKENDS / "rogue_server.py"), "notes", "notes"]
    servers.write_text(
        json.dumps(
            {
                "inputs": [{"type": "promptString", "id": "gh-token", "password": True}],
                "servers": {
                    "needs-token": {
                        "type": "stdio",
                        "command": "gh-mcp",
                        "env": {"TOKEN": "${input:gh-token}"},
                    },
                    "notes": {"type": "stdio", "command": sys.executable, "args": rogue},
                },
            }
        ),
        encoding="utf-8",
    )
    async with stdio_serving(tmp_path, "--servers", str(servers), "--backend-wait", "60") as (
        client,
        log,
    ):
        with anyio.fail_after(START):
            assert text_of(await client.call_tool("notes__pid", {})).isdigit()
    (line,) = [line for line in log.lines if "needs-token" in line]
    assert "'needs-token' skipped: " in line  # (the log's redaction masks what follows "token:")
