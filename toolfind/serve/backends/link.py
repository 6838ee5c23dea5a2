"""One connection to a backend MCP server: its transport, its attempt's events, what it sent.

What `toolfind.serve.backends.pool.BackendPool` needs below the pool: opening a stdio, SSE or
streamable-HTTP transport, the client session and its handshake (the capabilities declared to
the backend, its requests for the host relayed), the events of one connection attempt,
describing why a backend failed in one line, bounding the size of what it answers, and keeping
a backend's stdout banner from printing the SDK's traceback. The MCP SDK and anyio are imported
lazily.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from toolfind.errors import BackendError
from toolfind.serve.backends.config import ServerSpec
from toolfind.serve.backends.redact import redact
from toolfind.serve.backends.seam import NOT_STARTED
from toolfind.serve.backends.tools import Listed

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
    "initialize",
    "open_transport",
    "read_all",
    "result_size",
    "same_server",
]

#: A backend's states, as ``tool_categories`` shows them.
CONNECTING, READY, RETRYING, FAILED = "connecting", "ready", "retrying", "failed"

#: Where a backend's one-time warnings are logged (the pool's logger).
logger = logging.getLogger("toolfind.serve.backends")

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

    from toolfind import __version__

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

    from toolfind import __version__

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
    spec: ServerSpec, *, timeout: float, errlog: TextIO | None, max_line: int
) -> AsyncIterator[Any]:
    """The (read, write) streams of ``spec``'s transport; a stdio server's stderr goes to
    ``errlog`` (default ``sys.stderr``) and its messages are capped at ``max_line``
    characters (`stdio.MessageTooLarge`)."""
    if spec.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters

        from toolfind.serve.backends.stdio import bounded_stdio_client

        quiet_sdk_parse_failures()
        params = StdioServerParameters(
            command=spec.command or "",
            args=list(spec.args),
            env=dict(spec.env) or None,
            cwd=spec.cwd,
        )
        async with bounded_stdio_client(params, errlog=errlog, max_line=max_line) as streams:
            yield streams
    elif spec.transport == "sse":
        from mcp.client.sse import sse_client

        async with sse_client(
            spec.url or "", headers=dict(spec.headers), timeout=timeout
        ) as streams:
            yield streams
    else:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with (
            create_mcp_http_client(headers=dict(spec.headers)) as client,
            streamable_http_client(spec.url or "", http_client=client) as streams,
        ):
            yield streams


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


def read_all(paths: Sequence[Path]) -> tuple[bytes | None, ...]:
    """Each file's bytes (None when unreadable): what the servers watcher compares."""
    texts: list[bytes | None] = []
    for path in paths:
        try:
            texts.append(Path(path).read_bytes())
        except OSError:
            texts.append(None)
    return tuple(texts)
