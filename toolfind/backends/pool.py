"""`BackendPool`: the backend MCP servers connected, restarted when they fail, calls forwarded.

It fills the `toolfind.backends.seam.Backends` seam (the contract is there). Every
backend has a supervisor task that keeps its shared session: it connects in the background
(serving never waits for a backend), and after a failure it retries with a capped exponential
backoff. Each client's own sessions (over HTTP) are `toolfind.backends.clients`'. One
connection's pieces (transports, events, one-line reasons) are in `toolfind.backends.link`,
the session over it in `toolfind.backends.session`. The MCP SDK and anyio are imported only
when the pool starts.
"""

from __future__ import annotations

import json
import logging
import math
import signal
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from toolfind.backends import defaults
from toolfind.backends.clients import ClientSessions
from toolfind.backends.config import ServerSpec, check_separator
from toolfind.backends.failures import request_failure, too_large
from toolfind.backends.link import (
    CONNECTING,
    FAILED,
    READY,
    RETRYING,
    Attempt,
    Backend,
    describe,
    read_all,
    result_size,
    same_server,
)
from toolfind.backends.seam import (
    NOT_STARTED,
    AskHost,
    BackendStatus,
    Declare,
    Lane,
    Progress,
    Relay,
)
from toolfind.backends.session import Ask, open_session, raw_request, receiver
from toolfind.backends.tools import Listed, assign_names, needs_task, read_tools, to_tool
from toolfind.backends.watchdog import ProcessGroups
from toolfind.config import parse_size
from toolfind.errors import BackendError, ConfigError
from toolfind.models import Tool

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = ["BackendPool"]

logger = logging.getLogger("toolfind.backends")

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

    With ``per_client`` (serve-mcp over HTTP) each client's requests go to sessions of its
    own (`clients.ClientSessions`), stopped after ``session_idle`` seconds unused.

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
        per_client: bool = False,
        session_idle: float = defaults.SESSION_IDLE,
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
        self._declare: Declare | None = None
        self._ask_host: AskHost | None = None
        self._backends: list[Backend] = []
        self._clients = ClientSessions(
            self._run_client,
            lambda: self._backends,
            enabled=per_client,
            start_timeout=start_timeout,
            idle=session_idle,
        )
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
        #: The exposed names of the tools that must run as MCP tasks (not relayed).
        self._tasks: frozenset[str] = frozenset()
        self._counts: Counter[str] = Counter()  # tools by server
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
        """Before `__aenter__`: start no backend until `release` (the seam says why)."""
        self._held = True

    def expect_host(self) -> None:
        """Before `__aenter__`: processes start at once, handshakes wait for `set_host`."""
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
        self._clients.start(self._tg)
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
        that failed for good (a call to it still tries that backend once more), nor one that
        must run as a task."""
        found = self._routes.get(name)
        return found is not None and found[0].state != FAILED and name not in self._tasks

    def route(self, name: str) -> tuple[str, str] | None:
        """The (server, backend tool name) behind an exposed name, or None."""
        found = self._routes.get(name)
        return (found[0].name, found[1]) if found else None

    def status(self) -> Mapping[str, BackendStatus]:
        counts = self._counts
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

    def update(self, specs: Sequence[ServerSpec], keep: Collection[str] = ()) -> None:
        """Serve ``specs`` from now on: start the new servers, stop the removed ones, restart
        the changed ones; the others, and those named in ``keep`` (an entry that cannot be
        read now), keep running untouched."""
        old = {b.name: b for b in self._backends}
        named = {s.name for s in specs}
        still = [old[name].spec for name in keep if name in old and name not in named]
        wanted = [s for s in (*specs, *still) if not s.disabled]
        serving: list[Backend] = []
        for spec in wanted:
            if any(b.name == spec.name for b in serving):
                continue
            backend = old.get(spec.name)
            if backend is not None and same_server(backend.spec, spec):
                serving.append(backend)
                continue
            verb = "changed; restarting it" if backend is not None else "added; starting it"
            logger.warning("server %r %s", spec.name, verb)
            fresh = Backend(spec)
            serving.append(fresh)
            if self._started and not self._closing:
                fresh.prepare()
                self._tg.start_soon(self._supervise, fresh)
        for backend in self._backends:
            if not any(b is backend for b in serving):
                if not any(s.name == backend.name for s in wanted):
                    logger.warning("server %r removed; stopping it", backend.name)
                else:
                    backend.replaced = True
                self._remove(backend)
        self._backends = serving
        self._recompute()

    def _remove(self, backend: Backend) -> None:
        self._clients.stop_all(backend)
        backend.removed = True
        backend.reason = "removed from the servers file"
        if backend.scope is not None:
            backend.scope.cancel()
            backend.set_state(FAILED)
        if backend.current is not None:
            backend.current.scope.cancel()

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        progress: Progress | None = None,
        *,
        lane: Lane = None,
    ) -> CallToolResult:
        """Forward a call under the backend's own tool name, on the session of ``lane``; the
        result comes back unchanged. ``progress`` receives the backend's progress
        notifications for the call.

        Raises:
            BackendError: no backend serves ``name``; the backend is down (and could not be
                restarted), exited or was removed during the call, did not answer within
                ``call_timeout``, sent a result that is not a CallToolResult, or one larger
                than ``max_result_bytes``.
            MCPError: the backend answered with a JSON-RPC error (redacted, otherwise whole).
        """
        from mcp_types import CallToolResult
        from pydantic import ValidationError

        found = self._routes.get(name)
        if found is None:
            raise BackendError(f"No backend serves {name!r}.")
        backend, original = found
        attempt = await self._session(backend, lane)
        params = {"name": original, "arguments": dict(arguments)}
        raw = await self._send(backend, attempt, "tools/call", params, original, progress)
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
        self._relay = relay

    def set_host(self, declare: Declare, ask: AskHost) -> None:
        self._declare = declare
        self._ask_host = ask
        if self._host_known is not None:
            self._host_known.set()

    def _asker(self, server: str, lane: Lane) -> Ask:
        async def ask(method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
            from mcp.shared.exceptions import MCPError

            if self._ask_host is None:
                raise MCPError(-32600, f"toolfind has no client to relay {method} to")
            return await self._ask_host(server, method, params, lane)

        return ask

    def _declaring(self, lane: Lane) -> Callable[[], Awaitable[Any]]:
        async def declared() -> Any:
            if lane is None:
                await self._host_known.wait()
            if self._declare is None:
                from mcp_types import ClientCapabilities

                return ClientCapabilities()
            return await self._declare(lane)

        return declared

    def instructions(self) -> dict[str, str]:
        """Each connected backend's ``instructions``, by server name (those that sent some)."""
        return {
            b.name: b.live.instructions
            for b in self._backends
            if b.live is not None and b.live.instructions
        }

    def lane(self, server: str, client: object | None, *, start: bool) -> Lane:
        return self._clients.lane(self._named(server), client, start=start)

    def sessions_of(self, client: object) -> list[str]:
        return self._clients.sessions_of(client)

    def forget(self, client: object) -> None:
        self._clients.forget(client)

    def _named(self, server: str) -> Backend | None:
        return next((b for b in self._backends if b.name == server), None)

    async def notify(
        self, server: str, method: str, params: Mapping[str, Any] | None, *, lane: Lane = None
    ) -> None:
        """Send a notification to the session of ``lane`` when it is connected (best effort)."""
        backend = self._named(server)
        if backend is None:
            return
        live = backend.live if lane is None else backend.sessions.get(lane)
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
        progress: Progress | None = None,
        *,
        lane: Lane = None,
    ) -> dict[str, Any]:
        """A raw request to one backend, on the session of ``lane`` (started if needed),
        within ``call_timeout``.

        Raises:
            BackendError: no such server; it is down, exited, was removed, did not answer
                in time, or ``lane``'s session cannot be started.
            MCPError: the backend answered with a JSON-RPC error (passed on as sent).
        """
        backend = self._named(server)
        if backend is None:
            raise BackendError(f"No backend server named {server!r}.")
        attempt = await self._session(backend, lane)
        return await self._send(backend, attempt, method, params, None, progress)

    async def _session(self, backend: Backend, lane: Lane) -> Attempt:
        """The connected session of ``lane`` (its own, or the shared one for None)."""
        if lane is None:
            return await self._ensure(backend)
        return await self._clients.session(backend, lane)

    async def _send(
        self,
        backend: Backend,
        attempt: Attempt,
        method: str,
        params: Mapping[str, Any] | None,
        tool: str | None,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """A request to a connected session; each way it can fail becomes one error, and what
        it calls for (a ping, a restart): `failures.request_failure`. ``tool`` names the
        backend tool of a ``tools/call``."""
        import anyio
        from mcp.shared.exceptions import MCPError

        failed: MCPError | None
        try:
            return await raw_request(attempt, method, params, self.call_timeout, progress)
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

    async def _relay_safely(self, server: str, message: Any, lane: Lane = None) -> None:
        if self._relay is None:
            return
        try:
            await self._relay(server, message, lane)
        except Exception:  # a relay's bug must not stop the backend's task
            logger.exception("relaying a notification from server %r failed", server)

    async def _probe(self, backend: Backend, attempt: Attempt) -> None:
        """After a timed-out call: stop the backend if it does not even answer a ping."""
        import anyio
        from mcp.shared.exceptions import MCPError

        timeout = min(PING_TIMEOUT, self.call_timeout)
        try:
            await raw_request(attempt, "ping", None, timeout)
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
        if backend.itself:
            raise BackendError(f"server {backend.name!r} is not served: {backend.reason}")
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
        """Own the shared session for its whole life: connect, list, watch for changes, close."""
        reason = "exited"
        try:
            with attempt.scope:
                async with self._open(backend, attempt):
                    listed = await self._list_tools(backend, attempt)
                    self._up(backend, attempt, listed)
                    await self._watch(backend, attempt)
        except Exception as exc:  # the boundary of one backend: whatever it does, the pool goes on
            reason = describe(exc)
            if defaults.RECURSION in reason:  # what it answered counts, not how it then exited
                attempt.reason = reason
        if attempt.scope.cancelled_caught and attempt.reason is None:
            reason = "stopped"
        elif attempt.exit_status is not None:
            reason = attempt.ended(reason)  # it exited by itself: say how
        self._down(backend, attempt, attempt.reason or reason)  # _down redacts

    async def _run_client(self, backend: Backend, attempt: Attempt) -> None:
        """Own one client's session for its whole life: connect, serve until it closes (or is
        stopped: the client left, it was idle, the backend was removed), then forget it."""
        reason = "exited"
        try:
            with attempt.scope:
                async with self._open(backend, attempt):
                    # What the client asked of its sessions (a log level, subscriptions) is
                    # given before its first request goes through (`clients.setting_up`).
                    with self._clients.setting_up(attempt):
                        await self._relay_safely(backend.name, None, attempt.lane)
                    attempt.ready.set()
                    await attempt.closed.wait()
        except Exception as exc:  # one client's session: whatever it does, the pool goes on
            reason = describe(exc)
        finally:
            if attempt.reason is None:
                attempt.reason = backend.redact(attempt.ended(reason))
            attempt.settled = True
            attempt.ready.set()
            attempt.closed.set()
            attempt.down.set()
            self._clients.ended(backend, attempt)

    def _open(self, backend: Backend, attempt: Attempt) -> Any:
        """The session of ``attempt`` (`session.open_session`), with this pool's limits."""
        return open_session(
            backend.spec,
            attempt,
            timeout=self.start_timeout,
            errlog=self._errlog,
            max_line=self.max_message_bytes,
            groups=self.groups,
            on_message=receiver(backend, attempt, self._relay_safely, self._lost),
            ask=self._asker(backend.name, attempt.lane),
            declare=self._declaring(attempt.lane),
        )

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
            lambda params: raw_request(attempt, "tools/list", params, self.start_timeout),
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
            self._tg.start_soon(self._relay_safely, backend.name, None, None)

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
        if defaults.RECURSION in reason:
            self._itself(backend)
            return
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

    def _itself(self, backend: Backend) -> None:
        """``backend`` started a serve-mcp that refused to run as a backend of serve-mcp
        (`defaults.GATEWAY_ENV`): not started again, not even by a call or an edit."""
        backend.itself = True
        backend.reason = "it starts toolfind serve-mcp itself, which never serves itself"
        backend.set_state(FAILED)
        self._recompute()
        logger.warning(
            "%s: server %r skipped: %s (through its command: a script or wrapper)",
            backend.spec.origin,
            backend.name,
            backend.reason,
        )

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
        self._tools = tuple(
            to_tool(backend.name, name, item, defer=backend.spec.defer)
            for name, backend, item in exposed
        )
        self._routes = {name: (backend, item.name) for name, backend, item in exposed}
        self._tasks = frozenset(t.name for t in self._tools if needs_task(t))
        self._counts = Counter(t.namespace for t in self._tools)
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

        await follow(self.servers_files, self.servers_text, self.environ, self.update, interval)
