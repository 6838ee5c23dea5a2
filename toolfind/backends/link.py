"""One connection to a backend MCP server: its transport, its attempt's events, what it sent.

What `toolfind.backends.pool.BackendPool` needs below the pool: opening a stdio, SSE or
streamable-HTTP transport (each bounded to the pool's message size), the events of one
connection attempt, describing why a backend failed in one line (with a crashed process's
exit status), bounding the size of what it answers, and keeping a backend's stdout banner
from printing the SDK's traceback. The session over a transport and its handshake are in
`toolfind.backends.session`. The MCP SDK and anyio are imported lazily.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from toolfind.backends.config import ServerSpec
from toolfind.backends.redact import redact
from toolfind.backends.seam import NOT_STARTED, Lane
from toolfind.backends.tools import Listed
from toolfind.errors import BackendError

if TYPE_CHECKING:
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

__all__ = [
    "Attempt",
    "Backend",
    "describe",
    "exit_text",
    "open_transport",
    "read_all",
    "result_size",
    "same_server",
]

#: A backend's states, as ``tool_categories`` shows them.
CONNECTING, READY, RETRYING, FAILED = "connecting", "ready", "retrying", "failed"

#: Where a backend's one-time warnings are logged (the pool's logger).
logger = logging.getLogger("toolfind.backends")

#: The SDK's stdio client logs this with a traceback for every stdout line that is not
#: JSON-RPC (a start-up banner, a stray print); the pool says it once, in one line.
_PARSE_FAILURE = "Failed to parse JSONRPC message from server"


class _QuietParseFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _PARSE_FAILURE


def quiet_sdk_parse_failures() -> None:
    """Drop the SDK's traceback for a non-JSON stdout line (the pool warns once instead)."""
    log = logging.getLogger("mcp.client.stdio")
    if not any(isinstance(f, _QuietParseFailures) for f in log.filters):
        log.addFilter(_QuietParseFailures())


def describe(exc: BaseException) -> str:
    """One line for why a backend failed, from an exception (or the first in a group),
    redacted (`redact`: whatever library wrote it, it may name the URL, a header or an
    argument)."""
    lines = _reason(exc).strip().splitlines()
    return redact(lines[0] if lines else type(exc).__name__)


def _reason(exc: BaseException) -> str:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, OSError):
        return f"cannot start: {exc.strerror or exc}"
    if isinstance(exc, MCPError):
        return "connection closed" if exc.code == CONNECTION_CLOSED else exc.message
    if isinstance(exc, BackendError):
        return exc.message
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def exit_text(status: int) -> str:
    """How a backend process ended, from its exit status (negative: the signal that killed it)."""
    if status >= 0:
        return f"exited with status {status}"
    try:
        name = f" ({signal.Signals(-status).name})"
    except ValueError:
        name = ""
    return f"killed by signal {-status}{name}"


def result_size(value: Any, limit: int) -> int:
    """About how many bytes ``value`` (parsed JSON) takes as text, counting up to ``limit``.

    Strings count their length, other scalars a few bytes; the walk stops as soon as the
    count passes ``limit``, so a huge answer costs no more than it takes to see it is huge.
    """
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2
            for key, inner in item.items():
                total += len(key) + 4
                stack.append(inner)
        elif isinstance(item, list):
            total += 2
            stack.extend(item)
        else:
            total += 8
    return total


class Attempt:
    """One connection attempt to a backend, from spawn to exit: of its shared session, or of
    the session of one client (``lane``)."""

    def __init__(self, lane: Lane = None) -> None:
        import anyio

        self.lane = lane
        #: When a request last used it (`anyio.current_time`): idle sessions are stopped.
        self.used = anyio.current_time()
        self.scope = anyio.CancelScope()
        self.ready = anyio.Event()
        self.closed = anyio.Event()
        #: Set once the pool has recorded the attempt's end (after ``closed``).
        self.down = anyio.Event()
        self.changed = anyio.Event()
        self.dispatcher: JSONRPCDispatcher[Any] | None = None
        self.version = ""
        self.capabilities: Any = None  # the backend's ServerCapabilities once initialized
        self.instructions: str | None = None  # what the backend's initialize result says
        self.settled = False
        self.reason: str | None = None
        self.up_at = 0.0
        #: Set when the backend wrote a message over the transport's limit.
        self.too_large = False
        #: A stdio backend's exit status, when its process ended by itself (not stopped by us).
        self.exit_status: int | None = None

    def ended(self, what: str) -> str:
        """``what`` (e.g. "closed the connection"), or how the process ended when it did."""
        return what if self.exit_status is None else exit_text(self.exit_status)


@asynccontextmanager
async def open_transport(
    spec: ServerSpec,
    *,
    timeout: float,
    errlog: TextIO | None,
    max_line: int,
    attempt: Attempt | None = None,
    groups: Any = None,
) -> AsyncIterator[Any]:
    """The (read, write) streams of ``spec``'s transport, every message capped at ``max_line``
    characters (bytes over HTTP).

    A stdio server's stderr goes to ``errlog`` (default ``sys.stderr``); a longer line is a
    `stdio.MessageTooLarge`; its exit status, when it exits by itself, is recorded on
    ``attempt``; its process group is registered in ``groups`` (`watchdog.ProcessGroups`)
    while it runs. Over HTTP an SSE event or a JSON body over the cap fails that one request
    (`http_limits`), never the connection.
    """
    if spec.transport == "stdio":
        from toolfind.backends.stdio import Launch, bounded_stdio_client

        def exited(status: int) -> None:
            if attempt is not None:
                attempt.exit_status = status

        launch = Launch(spec.command or "", spec.args, spec.env, spec.cwd)
        async with bounded_stdio_client(
            launch, errlog=errlog, max_line=max_line, on_exit=exited, groups=groups
        ) as streams:
            quiet_sdk_parse_failures()
            yield streams
    elif spec.transport == "sse":
        from mcp.client.sse import sse_client

        _bound_legacy_sse()
        token = _SSE_EVENT_LIMIT.set(max_line)
        try:
            async with sse_client(
                spec.url or "",
                headers=dict(spec.headers),
                timeout=timeout,
                httpx_client_factory=_capped_client_factory(max_line),
            ) as streams:
                yield streams
        finally:
            _SSE_EVENT_LIMIT.reset(token)
    else:
        from mcp.client.streamable_http import streamable_http_client

        async with (
            _capped_client_factory(max_line)(headers=dict(spec.headers)) as client,
            streamable_http_client(
                spec.url or "", http_client=client, max_sse_event_size=max_line
            ) as streams,
        ):
            yield streams


#: The SSE event limit of the legacy SSE transport opened in this context (`_bound_legacy_sse`).
_SSE_EVENT_LIMIT: ContextVar[int | None] = ContextVar("toolfind_sse_event_limit", default=None)


def _bound_legacy_sse() -> None:
    """Make the SDK's legacy ``sse_client`` read events up to the pool's message size.

    Its event reader is opened with a fixed 1 MiB limit (``sse_within_origin``'s default) and
    no way to pass another, so a 2 MB tool list could never connect. The SDK module's name is
    wrapped once to take the limit from `_SSE_EVENT_LIMIT`, set by `open_transport` around
    the ``sse_client`` it opens (outside that, the SDK's own limit).
    """
    import mcp.client.sse as sdk_sse

    original: Any = getattr(sdk_sse, "sse_within_origin", None)
    if original is None or getattr(original, "toolfind_bounded", False):
        return

    def sse_within_origin(client: Any, url: Any, **kwargs: Any) -> Any:
        limit = _SSE_EVENT_LIMIT.get()
        if limit is not None:
            kwargs["max_event_size"] = limit
        return original(client, url, **kwargs)

    sse_within_origin.toolfind_bounded = True  # type: ignore[attr-defined]
    setattr(sdk_sse, "sse_within_origin", sse_within_origin)  # noqa: B010 - not exported


#: What the SDK's error says when an answer was over the size limits (`oversized`).
_TOO_LARGE = "toolfind: a response body over the size limit"
_SSE_TOO_LARGE = "byte limit"


def oversized(message: str) -> bool:
    """Whether an HTTP backend's request failed because its answer was over the limit: a JSON
    body (`_capped_client_factory`) or an SSE event (the SDK's reader) too large."""
    return _TOO_LARGE in message or ("SSE" in message and _SSE_TOO_LARGE in message)


class _QuietTooLarge(logging.Filter):
    """Drop the SDK's traceback for a JSON answer refused for its size (`oversized`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return exc is None or _TOO_LARGE not in str(exc)


def _capped_client_factory(limit: int) -> Any:
    """The SDK's HTTP client factory, with response bodies other than event streams over
    ``limit`` bytes (decoded) failing that request only.

    The SDK reads a JSON answer whole (``response.aread()``) without a limit; here every
    response's ``aiter_bytes`` (what ``aread`` and the SSE reader read) counts what it
    yields. A body past the limit raises a ``StreamError``, which the SDK turns into an error
    answer to that one request. Event streams are left to the SDK's per-event limit (their
    total is unbounded by design: a GET stream lasts as long as the session).
    """
    import httpx2
    from mcp.shared._httpx_utils import create_mcp_http_client

    class TooLarge(httpx2.StreamError):
        pass

    async def cap(response: Any) -> None:
        if response.headers.get("content-type", "").lower().startswith("text/event-stream"):
            return
        inner = response.aiter_bytes

        async def aiter_bytes(chunk_size: int | None = None) -> AsyncIterator[bytes]:
            total = 0
            async for chunk in inner(chunk_size):
                total += len(chunk)
                if total > limit:
                    raise TooLarge(f"{_TOO_LARGE} ({limit} bytes)")
                yield chunk

        response.aiter_bytes = aiter_bytes

    log = logging.getLogger("mcp.client.streamable_http")
    if not any(isinstance(f, _QuietTooLarge) for f in log.filters):
        log.addFilter(_QuietTooLarge())  # the pool says it, in one line, to the caller

    def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> Any:
        client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks["response"].append(cap)
        return client

    return factory


class Backend:
    """One configured backend server: its declaration, state and current attempt."""

    def __init__(self, spec: ServerSpec) -> None:
        self.spec = spec
        self.current: Attempt | None = None
        self.live: Attempt | None = None
        self.listed: tuple[Listed, ...] = ()
        self.state = CONNECTING
        self.reason = NOT_STARTED
        self.failures = 0
        self.retry_at = 0.0
        #: Whether the last attempt had been up (a crash), not a failed start.
        self.crashed = False
        self.logged: set[str] = set()
        self.removed = False
        #: Removed because its declaration changed: a fresh Backend takes its place.
        self.replaced = False
        #: It started toolfind serve-mcp itself (`pool.BackendPool._itself`): never again.
        self.itself = False
        #: Attempts started so far (`BackendPool._ensure` waits for the next one to end).
        self.attempts = 0
        #: The sessions of each client that has one of its own here (`clients.ClientSessions`).
        self.sessions: dict[object, Attempt] = {}
        # Made by `prepare`, on the event loop (a pool may be built before one runs).
        self.scope: Any = None
        self.wake: Any = None
        self.notice: Any = None

    def prepare(self) -> None:
        import anyio

        self.scope = anyio.CancelScope()
        self.wake = anyio.Event()
        self.notice = anyio.Event()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def first_contact(self) -> bool:
        """Whether its first attempt has not ended yet: what it serves is not known at all."""
        return self.reason == NOT_STARTED and not self.removed

    @property
    def attempting(self) -> bool:
        """Whether an attempt is under way (started, not ended)."""
        return self.current is not None and not self.current.settled

    def set_state(self, state: str) -> None:
        """Change the state and wake whoever waits for a change (calls, `wait_settled`)."""
        import anyio

        self.state = state
        self.notice.set()
        self.notice = anyio.Event()

    def redact(self, text: str) -> str:
        """``text`` as it may be shown: `redact` (this server's secrets are known to it)."""
        return redact(text)

    def warn_once(self, message: str) -> None:
        if message not in self.logged:
            self.logged.add(message)
            logger.warning("%s", message)


def same_server(a: ServerSpec, b: ServerSpec) -> bool:
    """Whether two declarations run the same server (where they were written aside)."""
    return replace(a, origin="") == replace(b, origin="")


def read_all(paths: Sequence[Path]) -> tuple[bytes | str | None, ...]:
    """Each servers file's bytes, None when missing, or why it cannot be read (a FIFO, a
    device, a file over the input limit...): what the servers watcher compares. Opened
    without blocking and read with a cap (`userfiles.read_capped`): call it off the event
    loop."""
    from toolfind.userfiles import FileProblem, read_capped

    texts: list[bytes | str | None] = []
    for path in paths:
        try:
            texts.append(read_capped(path))
        except FileProblem as exc:
            texts.append(None if exc.missing else f"{path}: {exc}")
    return tuple(texts)
