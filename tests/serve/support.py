"""What the serve tests share: two small catalogs, reading tool results, waiting for
``tools/list_changed`` and for log lines (in process, or a subprocess's stderr), a backend
layer in memory and serve-mcp's server over it, and serve-mcp in a subprocess."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers import REPO, write
from toolfind.backends.seam import BackendStatus, NoBackends
from toolfind.errors import BackendError
from toolfind.models import Source, Tool
from toolfind.serve.notifier import ToolfindServer
from toolfind.serve.options import ServeOptions
from toolfind.serve.server import Discovery
from toolfind.serve.state import LiveIndex

#: The params of an ``initialize`` request, as a raw client sends them.
HELLO: dict[str, Any] = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"},
}
#: A raw client's ``initialize`` request (id 1).
INITIALIZE: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
#: The headers of a raw streamable-HTTP POST.
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def rpc_messages(response: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages in an HTTP response's body (an httpx response), whether plain JSON
    or server-sent events."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        return [
            json.loads(line[5:])
            for line in response.text.splitlines()
            if line.startswith("data:") and line[5:].strip()
        ]
    if response.content and response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        return body if isinstance(body, list) else [body]
    return []


FILES = {
    "namespace": "files",
    "tags": ["filesystem"],
    "tools": [
        {
            "name": "read_file",
            "description": "Read the contents of a text file from disk.",
            "tags": ["read"],
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "File to read."}},
                "required": ["path"],
            },
        },
        {
            "name": "compress_file",
            "description": "Compress a file into a gzip or zip archive.",
            "defer": True,
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "File to compress."}},
                "required": ["path"],
            },
        },
    ],
}
GIT = {
    "namespace": "git",
    "tags": ["vcs"],
    "tools": [
        {
            "name": "git_commit",
            "description": "Record staged changes in the repository with a commit message.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string", "description": "Commit message."}},
            },
        },
        {
            "name": "git_log",
            "description": "Show the commit history of the repository.",
            "parameters": {"type": "object", "properties": {}},
        },
    ],
}


def write_catalog(directory: Path, name: str, document: Any) -> Path:
    return write(directory / f"{name}.json", document)


def text_of(result: Any) -> str:
    """The text of a tool result's first content block."""
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def structured(result: types.CallToolResult) -> dict[str, Any]:
    """A meta-tool's record: its structured content, which its text repeats as JSON."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    assert json.loads(text_of(result)) == result.structured_content
    return result.structured_content


def error_text(result: types.CallToolResult) -> str:
    """The message of a tool error (``isError``, text only)."""
    assert result.is_error, result.content
    assert result.structured_content is None
    return text_of(result)


class ListChanged:
    """A client's message handler counting ``tools/list_changed`` notifications."""

    def __init__(self) -> None:
        self.count = 0
        self._event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self._event.set()
            self._event = anyio.Event()

    async def after(self, count: int) -> None:
        """Return once more than ``count`` have arrived."""
        while self.count <= count:
            await self._event.wait()


class Seen:
    """Records notifications, log messages or anything else a client is handed; ``wait``
    returns the first that matches, once it has arrived (within ``timeout``)."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._changed = anyio.Event()

    async def __call__(self, item: Any) -> None:
        self.items.append(item)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait(self, predicate: Any, timeout: float = 60.0) -> Any:
        with anyio.fail_after(timeout):
            while True:
                for item in self.items:
                    if predicate(item):
                        return item
                await self._changed.wait()

    def count(self, predicate: Any) -> int:
        return sum(1 for item in self.items if predicate(item))

    async def wait_count(self, predicate: Any, count: int, timeout: float = 60.0) -> None:
        """Return once ``count`` matching items have arrived."""
        with anyio.fail_after(timeout):
            while self.count(predicate) < count:
                await self._changed.wait()


class Records(logging.Handler):
    """Log lines, with a way to wait for one."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []
        self.waiters: list[tuple[str, anyio.Event]] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        self.messages.append(message)
        for text, event in self.waiters:
            if text in message:
                event.set()

    async def wait_for(self, text: str) -> None:
        if any(text in m for m in self.messages):
            return
        event = anyio.Event()
        self.waiters.append((text, event))
        await event.wait()

    def count(self, text: str) -> int:
        return sum(text in m for m in self.messages)


class Log:
    """A process's stderr, read by a thread so the pipe never fills, with a way to wait."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.lines: list[str] = []
        self.closed = False
        self._cond = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[bytes]) -> None:
        with stream:
            for raw in iter(stream.readline, b""):
                with self._cond:
                    self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
                    self._cond.notify_all()
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def mark(self) -> int:
        return len(self.lines)

    def wait_closed(self, timeout: float = 30.0) -> None:
        """Return once every writer has closed the stream (its process and children ended)."""
        with self._cond:
            assert self._cond.wait_for(lambda: self.closed, timeout), "stderr still open"

    def wait_for(self, text: str | tuple[str, ...], since: int = 0, timeout: float = 30.0) -> str:
        """The first line from ``since`` on containing ``text`` (or one of several); fails
        after ``timeout``."""
        position = since
        found: list[str] = []
        texts = (text,) if isinstance(text, str) else text

        def seen() -> bool:
            nonlocal position
            while position < len(self.lines):
                if any(t in self.lines[position] for t in texts):
                    found.append(self.lines[position])
                    return True
                position += 1
            return self.closed

        with self._cond:
            self._cond.wait_for(seen, timeout)
        assert found, f"no stderr line with {text!r} within {timeout} s: {self.lines[-20:]}"
        return found[0]

    def position(self, text: str, since: int = 0, timeout: float = 30.0) -> int:
        """The index of the first line from ``since`` on containing ``text``."""
        line = self.wait_for(text, since, timeout)
        return self.lines.index(line, since)

    def wait_ready(self, servers: list[str], timeout: float = 90.0) -> None:
        """Backends connect in the background: wait until each is up and the index holds the
        tools of each that has some (a rebuild that began before the last one came up logs
        its line after it, without that server: the line names the servers it holds)."""
        lines = [self.wait_for(f"server {name!r} (stdio: ", 0, timeout) for name in servers]
        wanted = {
            n for n, line in zip(servers, lines, strict=True) if not line.endswith(": 0 tools")
        }
        position = 0
        while True:
            line = self.wait_for("index rebuilt (", position, timeout)
            held = line.partition("tools of servers: ")[2].rstrip(")").split(", ")
            if wanted <= set(held) or not wanted:
                return
            position = self.lines.index(line, position) + 1

    async def wait(self, text: str | tuple[str, ...], since: int = 0, timeout: float = 30.0) -> str:
        wait = partial(self.wait_for, text, since, timeout)
        return await anyio.to_thread.run_sync(wait, abandon_on_cancel=True)

    @property
    def text(self) -> str:
        with self._cond:
            return "\n".join(self.lines)

    def count(self, text: str) -> int:
        return sum(text in line for line in self.lines)

    def tracebacks(self, since: int = 0) -> list[str]:
        """The lines from ``since`` on that start a traceback."""
        return [line for line in self.lines[since:] if "Traceback" in line]


def server_env(tmp_path: Path) -> dict[str, str]:
    """A serve-mcp subprocess's environment: its own cache, this checkout's toolfind."""
    return {
        "TOOLFIND_CACHE_DIR": str(tmp_path / "cache"),
        "TOOLFIND_STATE_DIR": str(tmp_path / "state"),  # what it learns: never the user's
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p),
        "PYTHONWARNINGS": "ignore",
    }


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a serve-mcp subprocess: close its stdin (a stdio server's cue to leave), then
    SIGTERM, and SIGKILL after 15 s."""
    if process.stdin is not None and not process.stdin.closed:
        process.stdin.close()
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def http_serving(tmp_path: Path, *args: str, timeout: float = 90.0) -> Iterator[tuple[str, Log]]:
    """``toolfind serve-mcp --http 127.0.0.1:0 ARGS`` in a subprocess: its URL once it listens,
    and its stderr (read on, every line kept: waiting for a backend's line is waiting on an
    event); stopped at the end."""
    command = [sys.executable, "-m", "toolfind", "serve-mcp", "--http", "127.0.0.1:0", *args]
    process = subprocess.Popen(
        command,
        env={**os.environ, **server_env(tmp_path)},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    log = Log(process.stderr)
    try:
        line = log.wait_for("listening on ", timeout=timeout)
        yield line.split("listening on ", 1)[1].strip(), log
    finally:
        stop(process)


@asynccontextmanager
async def stdio_serving(work: Path, *args: str, **client: Any) -> AsyncIterator[tuple[Client, Log]]:
    """``toolfind serve-mcp ARGS`` over stdio, driven by the SDK's client (``client`` are its
    keyword arguments): the client, and serve-mcp's stderr (every line kept)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolfind", "serve-mcp", *args],
        env={**server_env(work), "PATH": os.environ.get("PATH", "")},
        cwd=str(work),
    )
    read, write = os.pipe()
    log = Log(os.fdopen(read, "rb"))
    with os.fdopen(write, "w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", **client) as c:
            yield c, log


@asynccontextmanager
async def http_server(
    tmp_path: Path, *args: str, bind: str = "127.0.0.1:0", timeout: float = 90.0
) -> AsyncIterator[str]:
    """``toolfind serve-mcp --http BIND ARGS`` in a subprocess: its URL once it listens (within
    ``timeout``: a cold start imports the MCP SDK on busy cores); stopped at the end."""
    command = [sys.executable, "-m", "toolfind", "serve-mcp", "--http", bind, *args]
    env = {**os.environ, **server_env(tmp_path)}
    async with await anyio.open_process(command, env=env, cwd=tmp_path) as process:
        assert process.stderr is not None
        stderr = BufferedByteReceiveStream(process.stderr)
        url = ""
        try:
            with anyio.fail_after(timeout):
                while not url:
                    line = (await stderr.receive_until(b"\n", 65536)).decode()
                    if "listening on " in line:
                        url = line.split("listening on ", 1)[1].strip()
            yield url
        finally:
            process.terminate()
            with anyio.move_on_after(15):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


def gone_within(pid: int, seconds: float) -> bool:
    """Whether process ``pid`` (any process, not only a child) has exited within ``seconds``,
    waiting on a pidfd (Linux; no polling)."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], seconds)
        return bool(readable)
    finally:
        os.close(fd)


class FakeBackends(NoBackends):
    """A backend layer in memory: one server 'weather' with two tools."""

    def __init__(self, *, hang: bool = False, fail: bool = False) -> None:
        self.hang = hang
        self.fail = fail
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.listener: Callable[[], None] | None = None
        self._tools = [
            Tool(
                name="weather__forecast",
                description="Get the weather forecast for a city.",
                namespace="weather",
                parameters={"type": "object", "properties": {"city": {"type": "string"}}},
                aliases=("forecast",),
                source=Source(file="mcp://weather"),
            ),
            Tool(
                name="weather__alerts",
                description="List severe weather alerts for a region.",
                namespace="weather",
                tags=("alerts",),
                aliases=("alerts",),
                source=Source(file="mcp://weather"),
            ),
        ]

    def tools(self) -> Sequence[Tool]:
        return tuple(self._tools)

    def serves(self, name: str) -> bool:
        return any(t.name == name for t in self._tools)

    def route(self, name: str) -> tuple[str, str] | None:
        found = next((t for t in self._tools if t.name == name), None)
        return None if found is None else ("weather", found.aliases[0] if found.aliases else name)

    async def call(
        self, name: str, arguments: Mapping[str, Any], progress: Any = None, *, lane: Any = None
    ) -> types.CallToolResult:
        self.calls.append((name, dict(arguments)))
        if self.hang:
            await anyio.sleep_forever()
        if self.fail:
            raise BackendError("weather exited with status 1")
        return types.CallToolResult(
            content=[types.TextContent(text=f"sunny in {arguments.get('city')}")]
        )

    def status(self) -> Mapping[str, BackendStatus]:
        return {"weather": BackendStatus("weather", True, len(self._tools), state="ready")}

    def set_listener(self, listener: Callable[[], None]) -> None:
        self.listener = listener


def make_server(
    catalogs: Sequence[Path], backends: Any = None, **overrides: Any
) -> tuple[ToolfindServer, LiveIndex, Discovery]:
    options = replace(ServeOptions(catalogs=tuple(catalogs), watch=False), **overrides)
    active = backends if backends is not None else NoBackends()
    live = LiveIndex(
        options.catalogs, params=options.params, filters=options.filters, backends=active
    )
    live.load()
    discovery = Discovery(live, options, active)
    return discovery.build_server(), live, discovery


class Subscribable(FakeBackends):
    """'weather' also serves resources one can subscribe to; its requests are recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[tuple[str, Any]] = []

    def capabilities(self) -> Mapping[str, Any]:
        caps = types.ResourcesCapability(subscribe=True)
        return {"weather": types.ServerCapabilities(resources=caps)}

    async def request(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None,
        progress: Any = None,
        *,
        lane: Any = None,
    ) -> dict[str, Any]:
        self.requests.append((method, dict(params or {})))
        return {}
