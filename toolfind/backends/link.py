"""One connection to a backend MCP server: its transport, its attempt's events, what it sent.

What `toolfind.backends.pool.BackendPool` needs below the pool: opening a stdio, SSE or
streamable-HTTP transport (each bounded to the pool's message size), the client session and
its handshake (the capabilities declared to the backend, its requests for the host relayed),
the events of one connection attempt, describing why a backend failed in one line (with a
crashed process's exit status), bounding the size of what it answers, and keeping a backend's
stdout banner from printing the SDK's traceback. The MCP SDK and anyio are imported lazily.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from toolfind.backends.config import ServerSpec
from toolfind.backends.redact import redact
from toolfind.backends.seam import NOT_STARTED
from toolfind.backends.tools import Listed
from toolfind.errors import BackendError

if TYPE_CHECKING:
    from mcp.client.session import ClientSession, MessageHandlerFnT
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp.shared.message import SessionMessage

__all__ = [
    "Attempt",
    "AskHost",
    "Backend",
    "WatchedReadStream",
    "backend_session",
    "describe",
    "exit_text",
    "initialize",
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


#: Relays a backend's request for the host (method, params) and returns the host's answer;
#: raises MCPError when no client can answer.
AskHost = Callable[[str, "Mapping[str, Any] | None"], Awaitable[dict[str, Any]]]
#: The client capabilities to declare to a backend.
HostCapabilities = Callable[[], Awaitable[Any]]


async def no_host(server: str, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The relay before serve-mcp sets one: nothing to relay to."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_REQUEST

    raise MCPError(INVALID_REQUEST, f"toolfind has no client to relay {method} to")


def backend_session(
    dispatcher: JSONRPCDispatcher[Any], on_message: MessageHandlerFnT, ask: AskHost | None
) -> ClientSession:
    """The SDK's client session over ``dispatcher``, whose sampling, elicitation and roots
    requests are relayed through ``ask`` (refused without one)."""
    import mcp_types as types
    from mcp.client.session import ClientRequestContext, ClientSession
    from mcp.shared.exceptions import MCPError
    from pydantic import BaseModel, ValidationError

    from toolfind.version import __version__

    async def relay(method: str, params: BaseModel | None, result: Any) -> Any:
        if ask is None:
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"{method} not supported")
        raw = (
            None
            if params is None
            else params.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        try:
            answer = await ask(method, raw)
            return result.model_validate(answer, by_name=False)
        except MCPError as exc:
            return exc.error
        except ValidationError:
            return types.ErrorData(
                code=types.INTERNAL_ERROR, message=f"the host's answer to {method} is not valid"
            )
        except Exception as exc:  # the client went away, a transport failed...
            return types.ErrorData(
                code=types.INTERNAL_ERROR, message=f"{method} failed: {describe(exc)}"
            )

    async def sampling(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData:
        tools = params.tools is not None or params.tool_choice is not None
        kind = types.CreateMessageResultWithTools if tools else types.CreateMessageResult
        answer: Any = await relay("sampling/createMessage", params, kind)
        return answer  # type: ignore[no-any-return]

    async def elicitation(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        answer: Any = await relay("elicitation/create", params, types.ElicitResult)
        return answer  # type: ignore[no-any-return]

    async def roots(context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        answer: Any = await relay("roots/list", None, types.ListRootsResult)
        return answer  # type: ignore[no-any-return]

    return ClientSession(
        dispatcher=dispatcher,
        message_handler=on_message,
        client_info=types.Implementation(name="toolfind", version=__version__),
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
    )


async def initialize(session: ClientSession, capabilities: Any) -> Any:
    """The handshake, declaring ``capabilities`` (a ClientCapabilities): what the host can
    answer, so that a backend offers through toolfind what it would offer the host."""
    import mcp_types as types
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    from toolfind.version import __version__

    request = types.InitializeRequest(
        params=types.InitializeRequestParams(
            protocol_version=LATEST_HANDSHAKE_VERSION,
            capabilities=capabilities,
            client_info=types.Implementation(name="toolfind", version=__version__),
        )
    )
    result = await session.send_request(request, types.InitializeResult)
    if result.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        raise BackendError(
            f"it answered with an unsupported protocol version ({result.protocol_version})"
        )
    session.adopt(result)
    await session.send_notification(types.InitializedNotification())
    return result


class Attempt:
    """One connection attempt to a backend, from spawn to exit."""

    def __init__(self) -> None:
        import anyio

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


class WatchedReadStream:
    """A transport's read stream that sets the attempt's ``closed`` (and wakes its ``changed``
    waiter) when the dispatcher closes it.

    The dispatcher iterates inside ``async with`` the stream, so EOF, an error and a
    cancellation all end in `aclose`; the rest (iteration, ``last_context``) is the inner
    stream's.
    """

    def __init__(self, inner: ReadStream[SessionMessage | Exception], attempt: Attempt) -> None:
        self._inner = inner
        self._attempt = attempt

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __aiter__(self) -> ReadStream[SessionMessage | Exception]:
        return self._inner.__aiter__()

    async def aclose(self) -> None:
        self._attempt.closed.set()
        self._attempt.changed.set()
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


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
        #: Attempts started so far (`BackendPool._ensure` waits for the next one to end).
        self.attempts = 0
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
