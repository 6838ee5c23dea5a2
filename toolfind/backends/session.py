"""One session to a backend: the SDK's client session over a transport, and its handshake.

The same for toolfind's shared session of a backend and for a client's own (`open_session`):
the transport of `toolfind.backends.link`, the SDK's ``ClientSession`` over it, whose
requests for the host (sampling, elicitation, roots) are relayed through the pool's ``ask``,
and the handshake that declares what the session's client can answer. The MCP SDK is
imported only when a session opens.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any, Self, TextIO

from toolfind.backends.config import ServerSpec
from toolfind.backends.link import Attempt, Backend, describe, open_transport
from toolfind.backends.seam import Lane, Progress
from toolfind.backends.stdio import MessageTooLarge
from toolfind.errors import BackendError
from toolfind.output.render import human_size

if TYPE_CHECKING:
    from mcp.client.session import ClientSession, MessageHandlerFnT
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp.shared.message import SessionMessage

__all__ = [
    "Ask",
    "WatchedReadStream",
    "backend_session",
    "initialize",
    "open_session",
    "raw_request",
    "receiver",
]

logger = logging.getLogger("toolfind.backends")

#: Relays one session's request for the host (method, params) and returns the host's answer;
#: raises MCPError when no client can answer.
Ask = Callable[[str, "Mapping[str, Any] | None"], Awaitable[dict[str, Any]]]


@asynccontextmanager
async def open_session(
    spec: ServerSpec,
    attempt: Attempt,
    *,
    timeout: float,
    errlog: TextIO | None,
    max_line: int,
    groups: Any,
    on_message: MessageHandlerFnT,
    ask: Ask,
    declare: Callable[[], Awaitable[Any]],
) -> AsyncIterator[None]:
    """``spec``'s transport and a session over it, through the handshake: ``attempt`` holds
    the dispatcher, the protocol version, the backend's capabilities and instructions when
    this yields; the session closes on leaving. ``declare()`` gives the client capabilities
    the handshake declares (awaited once the transport is open: a stdio backend's process
    starts first). Raises what the transport or the handshake raise."""
    async with AsyncExitStack() as stack:
        read, write = await stack.enter_async_context(
            open_transport(
                spec,
                timeout=timeout,
                errlog=errlog,
                max_line=max_line,
                attempt=attempt,
                groups=groups,
            )
        )
        from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

        dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
            WatchedReadStream(read, attempt), write
        )
        session = backend_session(dispatcher, on_message, ask)
        await stack.enter_async_context(session)
        result = await initialize(session, await declare())
        attempt.dispatcher = dispatcher
        attempt.version = result.protocol_version
        attempt.capabilities = result.capabilities
        attempt.instructions = result.instructions
        yield


async def raw_request(
    attempt: Attempt,
    method: str,
    params: Mapping[str, Any] | None,
    timeout: float,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """A raw request on ``attempt``'s session: the SDK's typed calls would reject a whole
    tools/list for one bad tool and revalidate call results, where a proxy must pass them on
    as sent. Raises the SDK's MCPError, or anyio's stream errors when the session is gone."""
    from mcp.shared.dispatcher import CallOptions
    from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

    assert attempt.dispatcher is not None
    opts: CallOptions = {
        "timeout": timeout,
        "headers": {MCP_PROTOCOL_VERSION_HEADER: attempt.version},
    }
    if progress is not None:
        opts["on_progress"] = progress
    return await attempt.dispatcher.send_raw_request(method, params, opts)


def receiver(
    backend: Backend,
    attempt: Attempt,
    relay: Callable[[str, Any, Lane], Awaitable[None]],
    lost: Callable[[Backend, Attempt, str], None],
) -> MessageHandlerFnT:
    """What a session does with each message a backend sends of its own accord: a tools
    change wakes the shared session's re-read, a message over the limit loses the connection
    (``lost``), a line that is not JSON-RPC is warned about once, a notification is passed to
    ``relay(server, notification, lane)``."""
    from mcp_types import ToolListChangedNotification
    from pydantic import ValidationError

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            attempt.changed.set()
        elif isinstance(message, MessageTooLarge):
            attempt.too_large = True
            lost(backend, attempt, f"sent a message over {human_size(message.limit, exact=True)}")
        elif isinstance(message, ValidationError | ValueError):
            backend.warn_once(
                f"server {backend.name!r} wrote a line that is not JSON-RPC on stdout "
                "(ignored): stdout is for protocol messages; a banner or log belongs on stderr"
            )
        elif not isinstance(message, Exception):
            await relay(backend.name, message, attempt.lane)
        else:
            described = backend.redact(describe(message))
            logger.debug("server %r: transport error: %s", backend.name, described)

    return on_message


def backend_session(
    dispatcher: JSONRPCDispatcher[Any], on_message: MessageHandlerFnT, ask: Ask | None
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
