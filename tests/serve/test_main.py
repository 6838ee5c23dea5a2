"""Running serve-mcp (`serve.main`): it quits promptly however a host or a person stops it, and no
backend outlives it; a serve-mcp started by serve-mcp refuses to serve; the backends its
options name.

Each test runs ``python -m toolfind serve-mcp`` as a subprocess in front of three backends: one
that leaves when its stdin closes (``lifecycle_server.py``), one that ignores its closed stdin
(``stubborn_server.py``), and one that ignores SIGTERM too, run by a shell that does not
``exec`` it (so it is a child of the backend, as ``uvx``'s and ``npx``'s servers are). Before
quitting, the test notes every process descended from serve-mcp; after, it waits on each
one's pid (a pidfd) with a deadline: all must be gone. Nothing sleeps.

The quit sequences: a host that closes stdin, then sends SIGTERM two seconds later and
SIGKILL two more seconds later (the MCP Python SDK's client, used as it is); SIGTERM alone,
over stdio and over HTTP; Ctrl-C (SIGINT; exit status 130); and SIGKILL of serve-mcp itself
(its watchdog stops the backends). And SIGTERM or Ctrl-C stop serve-mcp whatever its stdin and
stdout are: pipes, /dev/null, a file, a terminal.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers import BACKENDS
from tests.serve.support import INITIALIZE, Log, gone_within, server_env, write_catalog
from toolfind.backends.pool import BackendPool
from toolfind.backends.seam import NoBackends
from toolfind.serve.main import make_backends
from toolfind.serve.options import ServeOptions

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waits on pidfds (Linux)"),
]

START = 90.0  # cold starts import the MCP SDK in several processes on two busy cores
WAIT = 60.0
LIFECYCLE = BACKENDS / "lifecycle_server.py"
STUBBORN = BACKENDS / "stubborn_server.py"


def write_backends(work: Path) -> Path:
    """The three backends' servers file (see the module docstring)."""
    deaf = f"{sys.executable} {STUBBORN} {work / 'deaf.pid'} --ignore-term; true"
    servers = {
        "good": {"command": sys.executable, "args": [str(LIFECYCLE)]},
        "stubborn": {"command": sys.executable, "args": [str(STUBBORN), str(work / "s.pid")]},
        "deaf": {"command": "sh", "args": ["-c", deaf]},
    }
    path = work / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def descendants(pid: int) -> set[int]:
    """Every process descended from ``pid`` now (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def command(work: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "toolfind", "serve-mcp", "--poll-interval", "0.1", *args]


def env(work: Path) -> dict[str, str]:
    return {**os.environ, **server_env(work)}


async def all_gone(pids: set[int]) -> None:
    for pid in pids:
        gone = await anyio.to_thread.run_sync(gone_within, pid, WAIT)
        assert gone, f"process {pid} outlived serve-mcp"


async def backends_up(work: Path, tree: set[int]) -> None:
    """The stubborn backends wrote their pids, and they are serve-mcp's descendants."""
    for name in ("s.pid", "deaf.pid"):
        pid = int((work / name).read_text(encoding="utf-8"))
        assert pid in tree, (name, pid, tree)


@asynccontextmanager
async def stdio_serving(work: Path) -> AsyncIterator[tuple[Process, set[int]]]:
    """serve-mcp over stdio, its first tools/list answered with every backend up; yields the
    process and its descendants."""
    servers = write_backends(work)
    args = ("--servers", str(servers), "--backend-wait", str(START))
    async with await anyio.open_process(command(work, *args), env=env(work), cwd=work) as process:
        assert process.stdin is not None and process.stdout is not None
        out = BufferedByteReceiveStream(process.stdout)
        for message in (
            INITIALIZE,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            await process.stdin.send((json.dumps(message) + "\n").encode())
        with anyio.fail_after(START + WAIT):
            while True:
                reply = json.loads(await out.receive_until(b"\n", 1 << 24))
                if reply.get("id") == 2:
                    break
        names = {tool["name"] for tool in reply["result"]["tools"]}
        assert "proxy_search_tools" in names
        tree = descendants(process.pid)
        await backends_up(work, tree)
        yield process, tree


async def test_a_host_closing_stdin_then_terminating_leaves_no_backend_behind(
    tmp_path: Path,
) -> None:
    # The MCP Python SDK's stdio client: close stdin, SIGTERM 2 s later, SIGKILL 2 s later.
    servers = write_backends(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=command(tmp_path, "--servers", str(servers), "--backend-wait", str(START))[1:],
        env={**server_env(tmp_path), "PATH": os.environ.get("PATH", "")},
        cwd=str(tmp_path),
    )
    before = set(os.listdir("/proc"))
    with (
        open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog,
        anyio.fail_after(START + WAIT),
    ):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            await client.list_tools()  # waited for the backends (--backend-wait)
            ours = [
                int(p)
                for p in set(os.listdir("/proc")) - before
                if p.isdigit() and str(servers) in _cmdline(int(p))
            ]
            assert len(ours) == 1, ours
            tree = descendants(ours[0])
            await backends_up(tmp_path, tree)
    await all_gone({ours[0], *tree})


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGTERM, 0), (signal.SIGINT, 130), (signal.SIGKILL, -signal.SIGKILL)],
    ids=["sigterm", "ctrl-c", "sigkill"],
)
async def test_a_signal_stops_serve_mcp_and_every_backend_over_stdio(
    tmp_path: Path, signum: int, status: int
) -> None:
    # SIGKILL runs no code in serve-mcp: its watchdog stops the backends (closed stdin,
    # then SIGTERM, then SIGKILL to each backend's process group).
    async with stdio_serving(tmp_path) as (process, tree):
        process.send_signal(signum)
        with anyio.fail_after(WAIT):
            assert await process.wait() == status
    await all_gone(tree)


async def test_sigterm_stops_serve_mcp_and_every_backend_over_http(tmp_path: Path) -> None:
    servers = write_backends(tmp_path)
    args = ("--http", "127.0.0.1:0", "--servers", str(servers), "--log-level", "info")
    process = subprocess.Popen(
        command(tmp_path, *args),
        env=env(tmp_path),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        log = Log(process.stderr)
        await log.wait("listening on ", timeout=START)
        await anyio.to_thread.run_sync(log.wait_ready, ["good", "stubborn", "deaf"], START)
        tree = descendants(process.pid)
        await backends_up(tmp_path, tree)
        process.send_signal(signal.SIGTERM)
        assert await anyio.to_thread.run_sync(gone_within, process.pid, WAIT)
        assert process.wait() == 0  # not uvicorn's re-raised SIGTERM (-15): backends stopped first
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    await all_gone(tree)
    assert "Traceback" not in log.text


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    return write_catalog(tmp_path, "tools", [{"name": "noop", "description": "Nothing."}])


@pytest.fixture
def terminal() -> Iterator[int]:
    controller, device = pty.openpty()
    yield device
    os.close(device)
    os.close(controller)


def _stdio(kind: str, tmp_path: Path, terminal: int) -> tuple[Any, Any]:
    if kind == "pipes":
        return subprocess.PIPE, subprocess.PIPE
    if kind == "stdout /dev/null":
        return subprocess.PIPE, subprocess.DEVNULL
    if kind == "stdout a file":
        return subprocess.PIPE, open(tmp_path / "out.txt", "wb")  # noqa: SIM115 - closed below
    return terminal, terminal  # a terminal, as when a person runs it


@pytest.mark.parametrize("kind", ["pipes", "stdout /dev/null", "stdout a file", "a terminal"])
@pytest.mark.parametrize(
    ("signum", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)], ids=["sigterm", "ctrl-c"]
)
async def test_a_signal_stops_stdio_serving_whatever_stdin_and_stdout_are(
    tmp_path: Path, catalog: Path, terminal: int, kind: str, signum: int, status: int
) -> None:
    stdin, stdout = _stdio(kind, tmp_path, terminal)
    process = subprocess.Popen(
        command(tmp_path, "-c", str(catalog), "--log-level", "info"),
        env=env(tmp_path),
        cwd=tmp_path,
        stdin=stdin,
        stdout=stdout,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stderr is not None
        log = Log(process.stderr)
        # On a terminal one line says what it waits for and how to stop it; elsewhere,
        # an info line (a host's log).
        ready = "press Ctrl-C to stop" if kind == "a terminal" else "serving MCP on stdio"
        await log.wait(ready, timeout=START)
        process.send_signal(signum)
        assert await anyio.to_thread.run_sync(gone_within, process.pid, WAIT), kind
        assert process.wait() == status
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()
        if hasattr(stdout, "close"):
            stdout.close()
    assert log.count("press Ctrl-C to stop") == (1 if kind == "a terminal" else 0)
    assert "Traceback" not in log.text


async def test_make_backends_without_servers_files_is_no_backends() -> None:
    assert isinstance(make_backends(ServeOptions()), NoBackends)


def test_make_backends_reads_servers_files(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps({"mcpServers": {"t": {"command": "x"}, "u": {"url": "https://u.example/mcp"}}}),
        encoding="utf-8",
    )
    backends = make_backends(ServeOptions(servers=(path,)), environ={})
    assert isinstance(backends, BackendPool)
    assert set(backends.status()) == {"t", "u"}
    assert not backends.status()["t"].available
