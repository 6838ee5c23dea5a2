"""`BackendPool`: the backend MCP servers connected, restarted when they fail, calls forwarded.

It fills the `toolfind.serve.backend_seam.Backends` seam (the contract is there). The MCP SDK
and anyio are imported only when the pool starts.
"""

from __future__ import annotations

import json
import logging
import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from toolfind.errors import BackendError, ConfigError, UsageError
from toolfind.models import Tool
from toolfind.output.wire import clean_text
from toolfind.serve.backend_seam import Backends, BackendStatus, NoBackends
from toolfind.serve.backend_tools import Listed, assign_names, check_tool, to_tool
from toolfind.serve.servers_config import ServerSpec, load_servers, safe_name

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from mcp.client.session import IncomingMessage
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.dispatcher import ProgressFnT as ProgressFn
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp.shared.message import SessionMessage
    from mcp_types import CallToolResult

__all__ = ["BackendPool", "Relay", "make_backends"]

logger = logging.getLogger("toolfind.serve.backends")

#: Receives a backend's notifications (None: the backend just connected); see `set_relay`.
Relay = Callable[[str, Any], "Awaitable[None]"]

#: A tools/list that paginates longer than this is cut short (a server that never stops).
MAX_PAGES = 100
MAX_TOOLS_PER_SERVER = 10_000
#: The first failed restart waits this long before the next attempt; doubling up to the max.
BACKOFF_INITIAL = 1.0
BACKOFF_MAX = 60.0
#: After a call times out, a ping this long decides whether the backend still answers at all.
PING_TIMEOUT = 5.0


def make_backends(
    servers: Sequence[Path],
    *,
    environ: Mapping[str, str] | None = None,
    separator: str = "__",
    reserved_names: Collection[str] = (),
    call_timeout: float = 60.0,
) -> Backends:
    """The backends named by ``--servers`` files; `NoBackends` when there are none.

    Raises:
        ConfigError: a servers file cannot be read or declares an invalid server, or the
            separator is not made of ``[A-Za-z0-9_-]``.
    """
    if not servers:
        return NoBackends()
    specs = load_servers(servers, environ)
    return BackendPool(
        specs, separator=separator, reserved_names=reserved_names, call_timeout=call_timeout
    )


def _describe(exc: BaseException) -> str:
    """One line for why a backend failed, from an exception (or the first in a group)."""
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


class _Attempt:
    """One connection attempt to a backend, from spawn to exit."""

    def __init__(self) -> None:
        import anyio

        self.scope = anyio.CancelScope()
        self.ready = anyio.Event()
        self.closed = anyio.Event()
        self.changed = anyio.Event()
        self.dispatcher: JSONRPCDispatcher[Any] | None = None
        self.version = ""
        self.capabilities: Any = None  # the backend's ServerCapabilities once initialized
        self.settled = False
        self.reason: str | None = None


class _Backend:
    def __init__(self, spec: ServerSpec) -> None:
        import anyio

        self.spec = spec
        self.lock = anyio.Lock()
        self.current: _Attempt | None = None
        self.live: _Attempt | None = None
        self.listed: tuple[Listed, ...] = ()
        self.reason = "not started"
        self.failures = 0
        self.retry_at = 0.0
        self.logged: set[str] = set()

    @property
    def name(self) -> str:
        return self.spec.name

    def redact(self, text: str) -> str:
        for secret in self.spec.secrets:
            text = text.replace(secret, "***")
        return text

    def warn_once(self, message: str) -> None:
        if message not in self.logged:
            self.logged.add(message)
            logger.warning("%s", message)


class _WatchedReadStream:
    """A transport's read stream that sets the attempt's ``closed`` (and wakes its ``changed``
    waiter) when the dispatcher closes it.

    The dispatcher iterates inside ``async with`` the stream, so EOF, an error and a
    cancellation all end in `aclose`; the rest (iteration, ``last_context``) is the inner
    stream's.
    """

    def __init__(self, inner: ReadStream[SessionMessage | Exception], attempt: _Attempt) -> None:
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


class BackendPool:
    """Backend MCP servers, connected through the SDK's client, behind one set of tools.

    Every enabled server starts concurrently on ``__aenter__`` (each within
    ``start_timeout``); one that fails is logged once and marked unavailable, never raised.
    Tools are exposed as `backend_tools.assign_names` says (``reserved_names`` are the
    meta-tools'). Tools the ``allow``/``deny`` globs exclude, and malformed tools (logged
    once), are neither listed nor callable. A backend's ``tools/list_changed`` re-reads its
    tools; when the exposed tools change, the listener runs.

    A backend that exits is restarted on the next call that needs it: at once if it had been
    running, otherwise after an exponential backoff. After a call times out, a ping decides
    whether the backend still answers; if not, it is stopped until next needed.

    Enter and leave it from the same task (``async with BackendPool(...) as pool``).
    """

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        *,
        separator: str = "__",
        reserved_names: Collection[str] = (),
        start_timeout: float = 30.0,
        call_timeout: float = 60.0,
        errlog: TextIO | None = None,
    ) -> None:
        if not separator or safe_name(separator) != separator:
            raise UsageError(f"--separator {separator!r}: use letters, digits, _ or -")
        self.separator = separator
        self.reserved_names = frozenset(reserved_names)
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self._errlog = errlog
        self._listener: Callable[[], None] | None = None
        self._relay: Relay | None = None
        self._backends: list[_Backend] = []
        for spec in specs:
            if spec.disabled:
                logger.info("%s: server %r is disabled; not starting it", spec.origin, spec.name)
            elif any(b.name == spec.name for b in self._backends):
                raise ConfigError(
                    f"{spec.origin}: server name {spec.name!r} is used twice; rename one"
                )
            else:
                self._backends.append(_Backend(spec))
        self._tools: tuple[Tool, ...] = ()
        self._routes: dict[str, tuple[_Backend, str]] = {}
        self._key: list[tuple[str, str]] = []
        self._tg: Any = None
        self._started = False
        self._closing = False

    async def __aenter__(self) -> Self:
        """Start every backend concurrently; returns when each is up or has failed."""
        import anyio

        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        try:
            async with anyio.create_task_group() as starters:
                for backend in self._backends:
                    starters.start_soon(self._start, backend)  # no call can race: unlocked
        except BaseException:  # cancelled (Ctrl-C) while starting: stop what started, then go
            await self.aclose()
            raise
        self._started = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every backend (each server process is closed, then terminated if it lingers)."""
        if self._tg is None or self._closing:
            return
        self._closing = True
        self._tg.cancel_scope.cancel()
        # Shield the group's own scope (a new one would break LIFO exit) so a pending outer
        # cancellation cannot cut the server processes' shutdown short.
        self._tg.cancel_scope.shield = True
        await self._tg.__aexit__(None, None, None)

    def tools(self) -> Sequence[Tool]:
        return self._tools

    def serves(self, name: str) -> bool:
        return name in self._routes

    def route(self, name: str) -> tuple[str, str] | None:
        """The (server, backend tool name) behind an exposed name, or None."""
        found = self._routes.get(name)
        return (found[0].name, found[1]) if found else None

    def status(self) -> Mapping[str, BackendStatus]:
        counts = Counter(tool.namespace for tool in self._tools)
        return {
            b.name: BackendStatus(
                name=b.name,
                available=b.live is not None,
                tool_count=counts[b.name],
                detail="" if b.live is not None else b.reason,
            )
            for b in self._backends
        }

    def set_listener(self, listener: Callable[[], None]) -> None:
        self._listener = listener

    async def call(
        self, name: str, arguments: Mapping[str, Any], on_progress: ProgressFn | None = None
    ) -> CallToolResult:
        """Forward a call under the backend's own tool name; the result comes back unchanged.
        ``on_progress`` receives the backend's progress notifications for the call.

        Raises:
            BackendError: no backend serves ``name``; the backend is down (and could not be
                restarted), exited during the call, did not answer within ``call_timeout``,
                answered with a JSON-RPC error, or sent a result that is not a CallToolResult.
        """
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolResult
        from pydantic import ValidationError

        found = self._routes.get(name)
        if found is None:
            raise BackendError(f"No backend serves {name!r}.")
        backend, original = found
        attempt = await self._ensure(backend)
        params = {"name": original, "arguments": dict(arguments)}
        try:
            raw = await self._request(attempt, "tools/call", params, self.call_timeout, on_progress)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                self._tg.start_soon(self._probe, backend, attempt)
                raise BackendError(
                    f"server {backend.name!r} did not answer {original!r} within {self.call_timeout:g} s"
                ) from None
            if exc.code == CONNECTION_CLOSED or attempt.closed.is_set():
                self._lost(backend, attempt, f"exited during a call to {original!r}")
                raise BackendError(
                    f"server {backend.name!r} exited during the call; it is restarted on the next call"
                ) from None
            raise BackendError(
                f"server {backend.name!r} refused the call: {backend.redact(exc.message)}"
            ) from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._lost(backend, attempt, "connection closed")
            raise BackendError(
                f"server {backend.name!r} is not connected; it is restarted on the next call"
            ) from None
        try:
            return CallToolResult.model_validate(raw, by_name=False)
        except ValidationError:
            raise BackendError(
                f"server {backend.name!r} sent a tools/call result that is not valid MCP"
            ) from None

    def capabilities(self) -> dict[str, Any]:
        """Each connected backend's declared ``ServerCapabilities``, by server name."""
        return {
            b.name: b.live.capabilities
            for b in self._backends
            if b.live is not None and b.live.capabilities is not None
        }

    def set_relay(self, relay: Relay) -> None:
        """Await ``relay(server, notification)`` for every notification a backend sends
        other than ``tools/list_changed``, and ``relay(server, None)`` when one connects."""
        self._relay = relay

    async def request(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None,
        on_progress: ProgressFn | None = None,
    ) -> dict[str, Any]:
        """A raw request to one backend (started if needed), within ``call_timeout``.

        Raises:
            BackendError: no such server; it is down, exited or did not answer in time.
            MCPError: the backend answered with a JSON-RPC error (passed on as sent).
        """
        import anyio
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        backend = next((b for b in self._backends if b.name == server), None)
        if backend is None:
            raise BackendError(f"No backend server named {server!r}.")
        attempt = await self._ensure(backend)
        try:
            return await self._request(attempt, method, params, self.call_timeout, on_progress)
        except MCPError as exc:
            if exc.code == REQUEST_TIMEOUT:
                raise BackendError(
                    f"server {server!r} did not answer {method} within {self.call_timeout:g} s"
                ) from None
            if exc.code == CONNECTION_CLOSED or attempt.closed.is_set():
                self._lost(backend, attempt, f"exited during {method}")
                raise BackendError(f"server {server!r} exited during {method}") from None
            raise MCPError(exc.code, backend.redact(exc.message), exc.data) from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self._lost(backend, attempt, "connection closed")
            raise BackendError(f"server {server!r} is not connected") from None

    async def _relay_safely(self, server: str, message: Any) -> None:
        if self._relay is None:
            return
        try:
            await self._relay(server, message)
        except Exception:  # a relay's bug must not stop the backend's task
            logger.exception("relaying a notification from server %r failed", server)

    async def _request(
        self,
        attempt: _Attempt,
        method: str,
        params: Mapping[str, Any] | None,
        timeout: float,
        on_progress: ProgressFn | None = None,
    ) -> dict[str, Any]:
        """A raw request: the SDK's typed calls would reject a whole tools/list for one bad tool
        and revalidate call results, where a proxy must pass them on as sent."""
        from mcp.shared.dispatcher import CallOptions
        from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

        assert attempt.dispatcher is not None
        opts: CallOptions = {
            "timeout": timeout,
            "headers": {MCP_PROTOCOL_VERSION_HEADER: attempt.version},
        }
        if on_progress is not None:
            opts["on_progress"] = on_progress
        return await attempt.dispatcher.send_raw_request(method, params, opts)

    async def _probe(self, backend: _Backend, attempt: _Attempt) -> None:
        """After a timed-out call: stop the backend if it does not even answer a ping."""
        from mcp.shared.exceptions import MCPError

        timeout = min(PING_TIMEOUT, self.call_timeout)
        try:
            await self._request(attempt, "ping", None, timeout)
        except MCPError:
            reason = f"stopped answering (no reply to a ping within {timeout:g} s)"
            self._lost(backend, attempt, reason)

    def _lost(self, backend: _Backend, attempt: _Attempt, reason: str) -> None:
        if attempt.reason is None:
            attempt.reason = reason
        attempt.scope.cancel()
        self._down(backend, attempt, attempt.reason)

    async def _ensure(self, backend: _Backend) -> _Attempt:
        import anyio

        live = backend.live
        if live is not None and not live.closed.is_set():
            return live
        async with backend.lock:
            live = backend.live
            if live is not None and not live.closed.is_set():
                return live
            wait = backend.retry_at - anyio.current_time()
            if wait > 0:
                raise BackendError(
                    f"server {backend.name!r} is unavailable ({backend.reason}); "
                    f"toolfind retries it in {wait:.0f} s"
                )
            await self._start(backend)
            if backend.live is None:
                raise BackendError(f"server {backend.name!r} is unavailable: {backend.reason}")
            return backend.live

    async def _start(self, backend: _Backend) -> None:
        import anyio

        attempt = _Attempt()
        backend.current = attempt
        self._tg.start_soon(self._run, backend, attempt)
        with anyio.move_on_after(self.start_timeout):
            await attempt.ready.wait()
        if not attempt.ready.is_set():
            self._lost(backend, attempt, f"did not start within {self.start_timeout:g} s")

    async def _run(self, backend: _Backend, attempt: _Attempt) -> None:
        """Own one connection for its whole life: connect, list, watch for changes, close."""
        from mcp.client.session import ClientSession
        from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
        from mcp_types import Implementation, ToolListChangedNotification

        from toolfind import __version__

        reason = "exited"
        try:
            with attempt.scope:
                async with AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(self._transport(backend.spec))
                    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                        _WatchedReadStream(read, attempt), write
                    )

                    async def on_message(message: IncomingMessage) -> None:
                        if isinstance(message, ToolListChangedNotification):
                            attempt.changed.set()
                        elif not isinstance(message, Exception):
                            await self._relay_safely(backend.name, message)
                        else:
                            described = backend.redact(_describe(message))
                            logger.debug("server %r: transport error: %s", backend.name, described)

                    session = ClientSession(
                        dispatcher=dispatcher,
                        message_handler=on_message,
                        client_info=Implementation(name="toolfind", version=__version__),
                    )
                    await stack.enter_async_context(session)
                    result = await session.initialize()
                    attempt.dispatcher = dispatcher
                    attempt.version = result.protocol_version
                    attempt.capabilities = result.capabilities
                    listed = await self._list_tools(backend, attempt)
                    self._up(backend, attempt, listed)
                    await self._watch(backend, attempt)
        except Exception as exc:  # the boundary of one backend: whatever it does, the pool goes on
            reason = _describe(exc)
        if attempt.scope.cancelled_caught and attempt.reason is None:
            reason = "stopped"
        self._down(backend, attempt, attempt.reason or reason)  # _down redacts

    @asynccontextmanager
    async def _transport(self, spec: ServerSpec) -> AsyncIterator[Any]:
        if spec.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=spec.command or "",
                args=list(spec.args),
                env=dict(spec.env) or None,
                cwd=spec.cwd,
            )
            async with stdio_client(params, errlog=self._errlog or sys.stderr) as streams:
                yield streams
        elif spec.transport == "sse":
            from mcp.client.sse import sse_client

            async with sse_client(
                spec.url or "", headers=dict(spec.headers), timeout=self.start_timeout
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

    async def _watch(self, backend: _Backend, attempt: _Attempt) -> None:
        """Until the backend's side closes: re-read its tools whenever it says they changed."""
        import anyio
        from mcp.shared.exceptions import MCPError

        while True:
            await attempt.changed.wait()  # the read stream's end sets it too
            if attempt.closed.is_set():
                return
            # A fresh event before re-reading: a change announced meanwhile is not lost.
            attempt.changed = anyio.Event()
            try:
                with anyio.fail_after(self.start_timeout):
                    listed = await self._list_tools(backend, attempt)
            except (MCPError, BackendError, TimeoutError) as exc:
                logger.warning(
                    "server %r: could not re-read its tools: %s", backend.name, _describe(exc)
                )
                continue
            backend.listed = listed
            self._recompute()

    async def _list_tools(self, backend: _Backend, attempt: _Attempt) -> tuple[Listed, ...]:
        """The whole tools/list (every page), each tool checked on its own."""
        entries: list[Any] = []
        cursor: Any = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            raw = await self._request(
                attempt, "tools/list", {"cursor": cursor} if cursor else None, self.start_timeout
            )
            page = raw.get("tools")
            if not isinstance(page, list):
                raise BackendError("its tools/list result has no list of tools")
            entries.extend(page)
            cursor = raw.get("nextCursor")
            if cursor is None or len(entries) >= MAX_TOOLS_PER_SERVER:
                break
            if not isinstance(cursor, str) or cursor in seen:
                backend.warn_once(
                    f"server {backend.name!r}: tools/list repeats a cursor; read the pages before it only"
                )
                break
            seen.add(cursor)
        else:
            backend.warn_once(
                f"server {backend.name!r}: tools/list has more than {MAX_PAGES} pages; read the first {MAX_PAGES}"
            )
        if len(entries) > MAX_TOOLS_PER_SERVER:
            backend.warn_once(
                f"server {backend.name!r}: lists more than {MAX_TOOLS_PER_SERVER} tools; kept the first {MAX_TOOLS_PER_SERVER}"
            )
            del entries[MAX_TOOLS_PER_SERVER:]
        listed: list[Listed] = []
        names: set[str] = set()
        for position, entry in enumerate(entries):
            problem = check_tool(entry)
            label = entry.get("name") if isinstance(entry, dict) else None
            label = repr(clean_text(label, 80)) if isinstance(label, str) else f"#{position}"
            if problem is None and entry["name"] in names:
                problem = "repeats the name of an earlier tool"
            if problem is not None:
                backend.warn_once(f"server {backend.name!r}: tool {label} dropped: {problem}")
                continue
            names.add(entry["name"])
            listed.append(Listed(entry["name"], entry, position))
        return tuple(listed)

    def _up(self, backend: _Backend, attempt: _Attempt, listed: tuple[Listed, ...]) -> None:
        attempt.ready.set()
        if attempt.settled or attempt is not backend.current or self._closing:
            return
        if backend.reason != "not started":
            logger.warning("server %r is available again", backend.name)
        backend.live = attempt
        backend.failures = 0
        backend.retry_at = 0.0
        backend.reason = ""
        backend.listed = listed
        self._recompute()
        logger.info("server %r (%s): %d tools", backend.name, backend.spec.describe(), len(listed))
        if self._relay is not None:
            self._tg.start_soon(self._relay_safely, backend.name, None)

    def _down(self, backend: _Backend, attempt: _Attempt, reason: str) -> None:
        import anyio

        attempt.ready.set()
        attempt.closed.set()
        if attempt.settled:
            return
        attempt.settled = True
        if attempt is not backend.current or self._closing:
            return
        was_up = backend.live is attempt
        backend.live = None
        reason = backend.redact(reason)
        previous = backend.reason
        backend.reason = reason
        now = anyio.current_time()
        if was_up:
            # It ran before: the next call restarts it at once.
            backend.failures = 0
            backend.retry_at = now
            logger.warning(
                "server %r became unavailable: %s; it is restarted when next needed",
                backend.name,
                reason,
            )
            return
        backend.failures += 1
        backend.retry_at = now + min(BACKOFF_MAX, BACKOFF_INITIAL * 2 ** (backend.failures - 1))
        if reason != previous:
            logger.warning(
                "server %r (%s) is unavailable: %s", backend.name, backend.spec.describe(), reason
            )
        else:
            logger.debug("server %r is still unavailable: %s", backend.name, reason)

    def _recompute(self) -> None:
        """Assign exposed names over every backend's tools; tell the listeners on a change."""
        allowed = [
            (backend, item)
            for backend in self._backends
            for item in backend.listed
            if backend.spec.allows(item.name)
        ]
        pairs = [(backend.name, item.name) for backend, item in allowed]
        names, renames = assign_names(pairs, self.separator, self.reserved_names)
        by_name = {b.name: b for b in self._backends}
        for (server, _tool), message in renames.items():
            by_name[server].warn_once(message)
        exposed = [(names[(backend.name, item.name)], backend, item) for backend, item in allowed]
        self._tools = tuple(to_tool(backend.name, name, item) for name, backend, item in exposed)
        self._routes = {name: (backend, item.name) for name, backend, item in exposed}
        key = [(t.name, json.dumps(t.original, sort_keys=True, default=str)) for t in self._tools]
        if key != self._key:
            self._key = key
            if self._started and not self._closing and self._listener is not None:
                try:
                    self._listener()
                except Exception:  # a listener's bug must not stop the backend's task
                    logger.exception("the tools-changed listener failed")
