"""`BackendPool`: the backend MCP servers connected, restarted when they fail, calls forwarded.

It fills the `toolfind.backends.seam.Backends` seam (the contract is there). Every
backend has a supervisor task: it connects in the background (serving never waits for a
backend), and after a failure it retries with a capped exponential backoff. One connection's
pieces (transports, events, one-line reasons) are in `toolfind.backends.link`. The MCP
SDK and anyio are imported only when the pool starts.
"""

from __future__ import annotations

import json
import logging
import math
import signal
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from toolfind.backends import defaults
from toolfind.backends.config import ServerSpec, check_separator
from toolfind.backends.failures import request_failure, too_large
from toolfind.backends.link import (
    CONNECTING,
    FAILED,
    READY,
    RETRYING,
    AskHost,
    Attempt,
    Backend,
    HostCapabilities,
    WatchedReadStream,
    backend_session,
    describe,
    initialize,
    no_host,
    open_transport,
    read_all,
    result_size,
    same_server,
)
from toolfind.backends.seam import NOT_STARTED, BackendStatus
from toolfind.backends.stdio import MessageTooLarge
from toolfind.backends.tools import Listed, assign_names, read_tools, to_tool
from toolfind.backends.watchdog import ProcessGroups
from toolfind.config import parse_size
from toolfind.errors import BackendError, ConfigError
from toolfind.models import Tool
from toolfind.output.render import human_size

if TYPE_CHECKING:
    from mcp.client.session import IncomingMessage
    from mcp.shared.dispatcher import ProgressFnT as ProgressFn
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
    from mcp_types import CallToolResult

__all__ = ["BackendPool", "Relay"]

logger = logging.getLogger("toolfind.backends")

#: Receives a backend's notifications (None: the backend just connected); see `set_relay`.
Relay = Callable[[str, Any], "Awaitable[None]"]

#: After this many failed starts in a row the supervisor gives up until a call or an edit.
MAX_ATTEMPTS = 10
#: After a call times out, a ping this long decides whether the backend still answers at all.
PING_TIMEOUT = 5.0
#: A backend's tools/call result larger than this (about, as text) is refused, not relayed.
MAX_RESULT_BYTES = parse_size(defaults.MAX_RESULT_SIZE)
#: A stdio backend's message longer than this (or the result limit, if larger) is not even
#: read: the connection is dropped and restarted (a tools/list may be larger than a result).
MIN_MESSAGE_LIMIT = 32 * 1024 * 1024


class BackendPool:
    """Backend MCP servers, connected through the SDK's client, behind one set of tools.

    Entering the pool starts a supervisor per enabled server and returns at once: each
    backend connects in the background (each attempt within ``start_timeout``) and its tools
    join when it is up (the listener runs). A failed start is retried after
    ``backoff_initial`` seconds, doubling up to ``backoff_max``; after ``max_attempts``
    failures in a row (0: never) the backend is ``failed`` until a call needs it or `update`
    changes it. A backend that exits after running is restarted at once (a backoff again if
    it keeps crashing). After a call times out, a ping decides whether the backend still
    answers; if not, it is stopped and restarted.

    Tools are exposed as `tools.assign_names` says (``reserved_names`` are the
    meta-tools'). Tools the ``allow``/``deny`` globs exclude, and malformed tools (logged
    once), are neither listed nor callable. A backend's ``tools/list_changed`` re-reads its
    tools; when the exposed tools change, the listener runs.

    Enter and leave it from the same task (``async with BackendPool(...) as pool``).
    """

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        *,
        separator: str = defaults.SEPARATOR,
        reserved_names: Collection[str] = (),
        start_timeout: float = defaults.START_TIMEOUT,
        call_timeout: float = defaults.CALL_TIMEOUT,
        errlog: TextIO | None = None,
        backoff_initial: float = defaults.RETRY_INITIAL,
        backoff_max: float = defaults.RETRY_MAX,
        max_attempts: int = MAX_ATTEMPTS,
        max_result_bytes: int = MAX_RESULT_BYTES,
        max_message_bytes: int | None = None,
        servers_files: Sequence[Path] = (),
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.separator = check_separator(separator)
        self.reserved_names = frozenset(reserved_names)
        self.start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = max(backoff_max, backoff_initial)
        self.max_attempts = max_attempts
        self.max_result_bytes = max_result_bytes
        self.max_message_bytes = max_message_bytes or max(
            MIN_MESSAGE_LIMIT, max_result_bytes + (1 << 20)
        )
        self.servers_files = tuple(servers_files)
        self.environ = environ
        self.servers_text = read_all(self.servers_files)
        #: The running stdio backends' process groups (mirrored to a watchdog process).
        self.groups = ProcessGroups()
        self._errlog = errlog
        self._listener: Callable[[], None] | None = None
        self._relay: Relay | None = None
        self._host_capabilities: HostCapabilities | None = None
        self._ask_host: Callable[[str, str, Mapping[str, Any] | None], Awaitable[dict[str, Any]]]
        self._ask_host = no_host
        self._backends: list[Backend] = []
        for spec in specs:
            if spec.disabled:
                logger.info("%s: server %r is disabled; not starting it", spec.origin, spec.name)
            elif any(b.name == spec.name for b in self._backends):
                raise ConfigError(
                    f"{spec.origin}: server name {spec.name!r} is used twice; rename one"
                )
            else:
                self._backends.append(Backend(spec))
        self._tools: tuple[Tool, ...] = ()
        self._routes: dict[str, tuple[Backend, str]] = {}
        self._key: list[tuple[str, str]] = []
        self._tg: Any = None
        self._started = False
        self._closing = False
        #: Set by `hurry`: toolfind is quitting; a backend that ends is not restarted.
        self._quitting = False
        self._go: Any = None
        self._held = False
        #: Set once the host's capabilities are known (`set_host`), when `expect_host` asked
        #: backends to wait for them before their handshake.
        self._host_known: Any = None
        self._expects_host = False

    def hold(self) -> None:
        """Enter without starting the backends until `release` (before `__aenter__`):
        serve-mcp answers its first ``tools/list`` before backend processes compete with
        it for the CPU."""
        self._held = True

    def expect_host(self) -> None:
        """Before `__aenter__`: a server will `set_host`; backends may start their processes
        at once, but wait for it before their handshake, which declares the host's
        capabilities (a backend registers its sampling or roots tools only when told)."""
        self._expects_host = True

    def release(self) -> None:
        """Let held backends start (idempotent)."""
        if self._go is not None:
            self._go.set()

    async def __aenter__(self) -> Self:
        """Start every backend's supervisor; returns at once (see `wait_settled`)."""
        import anyio

        self._go = anyio.Event()
        if not self._held:
            self._go.set()
        self._host_known = anyio.Event()
        if not self._expects_host:
            self._host_known.set()
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._started = True
        for backend in self._backends:
            backend.prepare()
            self._tg.start_soon(self._supervise, backend)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def wait_settled(self) -> None:
        """Wait until no backend is connecting for the first time: each is up, or its first
        attempt failed (it is retrying, or failed for good)."""
        for backend in list(self._backends):
            while backend.first_contact:
                await backend.notice.wait()

    async def wait_for_state(self, name: str, *states: str) -> None:
        """Wait until the backend ``name`` is in one of ``states``."""
        backend = next(b for b in self._backends if b.name == name)
        while backend.state not in states:
            await backend.notice.wait()

    async def aclose(self) -> None:
        """Stop every backend (each server process is closed, then terminated if it lingers)."""
        if self._tg is None or self._closing:
            return
        self._closing = True
        self._tg.cancel_scope.cancel()
        # Shield the group's own scope (a new one would break LIFO exit) so a pending outer
        # cancellation cannot cut the server processes' shutdown short.
        self._tg.cancel_scope.shield = True
        try:
            await self._tg.__aexit__(None, None, None)
        finally:
            self.groups.close()

    def hurry(self, *, kill: bool = False) -> int:
        """Stop every backend process now (SIGTERM to its process group; SIGKILL with
        ``kill``) rather than waiting out the grace they get on their closed stdin: toolfind
        itself was told to quit: no backend is restarted from now on. Returns how many
        groups were signalled."""
        self._quitting = True
        return self.groups.signal_all(signal.SIGKILL if kill else signal.SIGTERM)

    def tools(self) -> Sequence[Tool]:
        return self._tools

    def serves(self, name: str) -> bool:
        """Whether ``name`` is a backend tool that can be called now: not one of a backend
        that failed for good (a call to it still tries that backend once more)."""
        found = self._routes.get(name)
        return found is not None and found[0].state != FAILED

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
                detail="" if b.live is not None else b.redact(b.reason),
                state=b.state,
            )
            for b in self._backends
        }

    def set_listener(self, listener: Callable[[], None]) -> None:
        self._listener = listener

    def update(self, specs: Sequence[ServerSpec]) -> None:
        """Serve ``specs`` from now on: start the new servers, stop the removed ones, restart
        the changed ones; the others keep running untouched."""
        wanted = [s for s in specs if not s.disabled]
        old = {b.name: b for b in self._backends}
        keep: list[Backend] = []
        for spec in wanted:
            if any(b.name == spec.name for b in keep):
                continue
            backend = old.get(spec.name)
            if backend is not None and same_server(backend.spec, spec):
                keep.append(backend)
                continue
            verb = "changed; restarting it" if backend is not None else "added; starting it"
            logger.warning("server %r %s", spec.name, verb)
            fresh = Backend(spec)
            keep.append(fresh)
            if self._started and not self._closing:
                fresh.prepare()
                self._tg.start_soon(self._supervise, fresh)
        kept = {id(b) for b in keep}
        for backend in self._backends:
            if id(backend) not in kept:
                if not any(s.name == backend.name for s in wanted):
                    logger.warning("server %r removed; stopping it", backend.name)
                else:
                    backend.replaced = True
                self._remove(backend)
        self._backends = keep
        self._recompute()

    def _remove(self, backend: Backend) -> None:
        backend.removed = True
        backend.reason = "removed from the servers file"
        if backend.scope is not None:
            backend.scope.cancel()
            backend.set_state(FAILED)
        if backend.current is not None:
            backend.current.scope.cancel()

    async def call(
        self, name: str, arguments: Mapping[str, Any], on_progress: ProgressFn | None = None
    ) -> CallToolResult:
        """Forward a call under the backend's own tool name; the result comes back unchanged.
        ``on_progress`` receives the backend's progress notifications for the call.

        Raises:
            BackendError: no backend serves ``name``; the backend is down (and could not be
                restarted), exited or was removed during the call, did not answer within
                ``call_timeout``, answered with a JSON-RPC error, sent a result that is not a
                CallToolResult, or one larger than ``max_result_bytes``.
        """
        from mcp_types import CallToolResult
        from pydantic import ValidationError

        found = self._routes.get(name)
        if found is None:
            raise BackendError(f"No backend serves {name!r}.")
        backend, original = found
        attempt = await self._ensure(backend)
        params = {"name": original, "arguments": dict(arguments)}
        raw = await self._send(backend, attempt, "tools/call", params, original, on_progress)
        if result_size(raw, self.max_result_bytes) > self.max_result_bytes:
            raise too_large(backend.name, repr(original), self.max_result_bytes, dropped=False)
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

    def set_host(
        self,
        capabilities: HostCapabilities,
        ask: Callable[[str, str, Mapping[str, Any] | None], Awaitable[dict[str, Any]]],
    ) -> None:
        """Declare ``await capabilities()`` to each backend as toolfind's client capabilities,
        and relay its requests for the host through ``ask(server, method, params)``."""
        self._host_capabilities = capabilities
        self._ask_host = ask
        if self._host_known is not None:
            self._host_known.set()

    def _asker(self, server: str) -> AskHost:
        return lambda method, params: self._ask_host(server, method, params)

    def instructions(self) -> dict[str, str]:
        """Each connected backend's ``instructions``, by server name (those that sent some)."""
        return {
            b.name: b.live.instructions
            for b in self._backends
            if b.live is not None and b.live.instructions
        }

    async def notify(self, server: str, method: str, params: Mapping[str, Any] | None) -> None:
        """Send a notification to one connected backend (best effort)."""
        backend = next((b for b in self._backends if b.name == server), None)
        live = backend.live if backend is not None else None
        if live is not None and live.dispatcher is not None and not live.closed.is_set():
            from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER as VERSION

            try:
                await live.dispatcher.notify(method, params, {"headers": {VERSION: live.version}})
            except Exception as exc:  # a closing connection: nothing to tell
                logger.debug("server %r: %s not sent: %s", server, method, describe(exc))

    async def request(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None,
        on_progress: ProgressFn | None = None,
    ) -> dict[str, Any]:
        """A raw request to one backend (started if needed), within ``call_timeout``.

        Raises:
            BackendError: no such server; it is down, exited, was removed or did not answer
                in time.
            MCPError: the backend answered with a JSON-RPC error (passed on as sent).
        """
        backend = next((b for b in self._backends if b.name == server), None)
        if backend is None:
            raise BackendError(f"No backend server named {server!r}.")
        attempt = await self._ensure(backend)
        return await self._send(backend, attempt, method, params, None, on_progress)

    async def _send(
        self,
        backend: Backend,
        attempt: Attempt,
        method: str,
        params: Mapping[str, Any] | None,
        tool: str | None,
        on_progress: ProgressFn | None = None,
    ) -> dict[str, Any]:
        """A request to a connected backend; each way it can fail becomes one error, and what
        it calls for (a ping, a restart): `failures.request_failure`. ``tool`` names the
        backend tool of a ``tools/call``."""
        import anyio
        from mcp.shared.exceptions import MCPError

        failed: MCPError | None
        try:
            return await self._request(attempt, method, params, self.call_timeout, on_progress)
        except MCPError as exc:
            failed = exc
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            failed = None
        failure = request_failure(
            backend, attempt, method, tool, failed, self.call_timeout, self.max_result_bytes
        )
        if failure.lost is not None:
            self._lost(backend, attempt, failure.lost)
        elif failure.probe:
            self._tg.start_soon(self._probe, backend, attempt)
        raise failure.error from None

    async def _relay_safely(self, server: str, message: Any) -> None:
        if self._relay is None:
            return
        try:
            await self._relay(server, message)
        except Exception:  # a relay's bug must not stop the backend's task
            logger.exception("relaying a notification from server %r failed", server)

    async def _request(
        self,
        attempt: Attempt,
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

    async def _probe(self, backend: Backend, attempt: Attempt) -> None:
        """After a timed-out call: stop the backend if it does not even answer a ping."""
        import anyio
        from mcp.shared.exceptions import MCPError

        timeout = min(PING_TIMEOUT, self.call_timeout)
        try:
            await self._request(attempt, "ping", None, timeout)
        except (MCPError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            reason = f"stopped answering (no reply to a ping within {timeout:g} s)"
            self._lost(backend, attempt, reason)

    def _lost(self, backend: Backend, attempt: Attempt, reason: str) -> None:
        if attempt.reason is None:
            attempt.reason = reason
        attempt.scope.cancel()
        self._down(backend, attempt, attempt.reason)

    async def _ensure(self, backend: Backend) -> Attempt:
        """The backend's live connection; waits for an attempt under way, or starts one for a
        backend held at start, crashed, or failed for good (tried once more). Raises
        BackendError while it backs off after failed starts, or when the attempt fails."""
        import anyio

        live = backend.live
        if live is not None and not live.closed.is_set():
            return live
        if backend.removed:
            raise BackendError(f"server {backend.name!r} was removed from the servers file")
        attempting = backend.attempting
        if not attempting and backend.state == RETRYING and not backend.crashed:
            wait = max(1, math.ceil(backend.retry_at - anyio.current_time()))
            raise BackendError(
                f"server {backend.name!r} is unavailable ({backend.reason}); "
                f"toolfind retries it in {wait} s"
            )
        self.release()
        target = backend.attempts + (0 if attempting else 1)
        if not attempting and backend.state in (RETRYING, FAILED):
            backend.wake.set()  # a crashed or failed backend is retried for a call at once
        with anyio.move_on_after(self.start_timeout + PING_TIMEOUT):
            while not backend.removed:
                live = backend.live
                if live is not None and not live.closed.is_set():
                    return live
                if backend.attempts >= target and not backend.attempting:
                    break
                await backend.notice.wait()
        raise BackendError(f"server {backend.name!r} is unavailable: {backend.reason}")

    async def _supervise(self, backend: Backend) -> None:
        """Keep one backend connected: attempt, wait for its end, back off, again."""
        import anyio

        with backend.scope:
            await self._go.wait()
            while True:
                if self._quitting:
                    await anyio.sleep_forever()  # until the pool closes: no more attempts
                if backend.state == FAILED:
                    await backend.wake.wait()
                else:
                    with anyio.move_on_at(backend.retry_at):
                        await backend.wake.wait()
                backend.wake = anyio.Event()
                attempt = Attempt()
                backend.current = attempt
                backend.attempts += 1
                # Connecting the first time; retrying after any failure (with its last error).
                backend.set_state(CONNECTING if backend.reason == NOT_STARTED else RETRYING)
                self._tg.start_soon(self._run, backend, attempt)
                with anyio.move_on_after(self.start_timeout):
                    await attempt.ready.wait()
                if not attempt.ready.is_set():
                    self._lost(backend, attempt, f"did not start within {self.start_timeout:g} s")
                await attempt.down.wait()

    async def _run(self, backend: Backend, attempt: Attempt) -> None:
        """Own one connection for its whole life: connect, list, watch for changes, close.
        (The SDK is imported once the transport is open: a stdio backend starts first.)"""

        reason = "exited"
        try:
            with attempt.scope:
                async with AsyncExitStack() as stack:
                    read, write = await stack.enter_async_context(
                        open_transport(
                            backend.spec,
                            timeout=self.start_timeout,
                            errlog=self._errlog,
                            max_line=self.max_message_bytes,
                            attempt=attempt,
                            groups=self.groups,
                        )
                    )
                    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
                    from mcp_types import ClientCapabilities, ToolListChangedNotification
                    from pydantic import ValidationError

                    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(
                        WatchedReadStream(read, attempt), write
                    )

                    async def on_message(message: IncomingMessage) -> None:
                        if isinstance(message, ToolListChangedNotification):
                            attempt.changed.set()
                        elif isinstance(message, MessageTooLarge):
                            attempt.too_large = True
                            limit = human_size(message.limit, exact=True)
                            self._lost(backend, attempt, f"sent a message over {limit}")
                        elif isinstance(message, ValidationError | ValueError):
                            backend.warn_once(
                                f"server {backend.name!r} wrote a line that is not JSON-RPC on "
                                "stdout (ignored): stdout is for protocol messages; a banner "
                                "or log belongs on stderr"
                            )
                        elif not isinstance(message, Exception):
                            await self._relay_safely(backend.name, message)
                        else:
                            described = backend.redact(describe(message))
                            logger.debug("server %r: transport error: %s", backend.name, described)

                    session = backend_session(dispatcher, on_message, self._asker(backend.name))
                    await stack.enter_async_context(session)
                    await self._host_known.wait()
                    host = self._host_capabilities
                    declared = await host() if host is not None else ClientCapabilities()
                    result = await initialize(session, declared)
                    attempt.dispatcher = dispatcher
                    attempt.version = result.protocol_version
                    attempt.capabilities = result.capabilities
                    attempt.instructions = result.instructions
                    listed = await self._list_tools(backend, attempt)
                    self._up(backend, attempt, listed)
                    await self._watch(backend, attempt)
        except Exception as exc:  # the boundary of one backend: whatever it does, the pool goes on
            reason = describe(exc)
        if attempt.scope.cancelled_caught and attempt.reason is None:
            reason = "stopped"
        elif attempt.exit_status is not None:
            reason = attempt.ended(reason)  # it exited by itself: say how
        self._down(backend, attempt, attempt.reason or reason)  # _down redacts

    async def _watch(self, backend: Backend, attempt: Attempt) -> None:
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
                    "server %r: could not re-read its tools: %s", backend.name, describe(exc)
                )
                continue
            backend.listed = listed
            self._recompute()

    async def _list_tools(self, backend: Backend, attempt: Attempt) -> tuple[Listed, ...]:
        """The whole tools/list (`tools.read_tools`), its problems logged once."""
        return await read_tools(
            lambda params: self._request(attempt, "tools/list", params, self.start_timeout),
            lambda problem: backend.warn_once(f"server {backend.name!r}: {problem}"),
        )

    def _up(self, backend: Backend, attempt: Attempt, listed: tuple[Listed, ...]) -> None:
        import anyio

        attempt.ready.set()
        if attempt.settled or attempt is not backend.current or self._closing or backend.removed:
            return
        if backend.reason != NOT_STARTED:
            logger.warning("server %r is available again", backend.name)
        backend.live = attempt
        attempt.up_at = anyio.current_time()
        backend.retry_at = 0.0
        backend.reason = ""
        backend.listed = listed
        backend.set_state(READY)
        self._recompute()
        logger.info("server %r (%s): %d tools", backend.name, backend.spec.describe(), len(listed))
        if self._relay is not None:
            self._tg.start_soon(self._relay_safely, backend.name, None)

    def _down(self, backend: Backend, attempt: Attempt, reason: str) -> None:
        """An attempt ended (or never started): schedule the next one, by the backoff rule."""
        import anyio

        attempt.ready.set()
        attempt.closed.set()
        if attempt.settled:
            return
        attempt.settled = True
        attempt.down.set()
        if attempt is not backend.current or self._closing or self._quitting or backend.removed:
            return
        was_up = backend.live is attempt
        backend.crashed = was_up
        backend.live = None
        reason = backend.redact(reason)
        previous = backend.reason
        backend.reason = reason
        if previous == NOT_STARTED:
            self._recompute()  # its first contact ended: one backend fewer connecting
        now = anyio.current_time()
        if was_up and now - attempt.up_at >= self.backoff_max:
            backend.failures = 0  # it ran for a good while: this is not a crash loop
        # A backend that ran restarts at once; a crash loop or a failed start backs off.
        delay = 0.0 if was_up and backend.failures == 0 else self._backoff(backend.failures)
        backend.failures += 1
        if self.max_attempts and backend.failures >= self.max_attempts and not was_up:
            backend.set_state(FAILED)
            self._recompute()  # its tools are no longer callable, nor listed directly
            logger.warning(
                "server %r (%s) is unavailable: %s; gave up after %d attempts in a row "
                "(the next call to it, or an edit of its servers file, tries again)",
                backend.name,
                backend.spec.describe(),
                reason,
                backend.failures,
            )
            return
        backend.retry_at = now + delay
        backend.set_state(RETRYING)
        then = "restarting it" if delay == 0 else f"retrying in {delay:g} s"
        if was_up:
            logger.warning("server %r became unavailable: %s; %s", backend.name, reason, then)
        elif reason != previous:
            logger.warning(
                "server %r (%s) is unavailable: %s; %s",
                backend.name,
                backend.spec.describe(),
                reason,
                then,
            )
        else:
            logger.debug("server %r is still unavailable: %s; %s", backend.name, reason, then)

    def _backoff(self, failures: int) -> float:
        """The wait before the next attempt after ``failures`` earlier failures in a row."""
        return float(min(self.backoff_max, self.backoff_initial * 2 ** min(failures, 60)))

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
        # What the clients see also depends on which backends failed for good (their tools
        # are not callable) and how many are still connecting (the search tool says it).
        key.append(("", repr(sorted(b.name for b in self._backends if b.state == FAILED))))
        key.append(("", repr(sorted(b.name for b in self._backends if b.first_contact))))
        if key != self._key:
            self._key = key
            if self._started and not self._closing and self._listener is not None:
                try:
                    self._listener()
                except Exception:  # a listener's bug must not stop the backend's task
                    logger.exception("the tools-changed listener failed")

    async def watch_servers(self, interval: float) -> None:
        """Follow the servers files until cancelled (`watch.follow`)."""
        from toolfind.backends.watch import follow

        await follow(self, interval)
