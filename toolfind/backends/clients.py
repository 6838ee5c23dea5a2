"""The sessions of one client: over HTTP each client gets a session of its own at each backend.

A backend keeps state per session (the roots it was given, its log level, subscriptions, a
resource a tool made "for this session"), and it asks the host things (sampling, elicitation,
roots) on the session it was called on. So that one client of serve-mcp's never sees another's
state nor answers another's questions, each client's requests to a backend go to a session of
that client's own, started with its first request there: a process of its own for a stdio
backend, an upstream session for an HTTP one. A server entry with ``shared`` is one session
for every client (`ClientSessions.lane`).

Bounds: at most ``max_sessions`` (a servers entry's key) at once per backend, beyond which a
request of a new client is refused with a line saying so; a session no request has used for
``idle`` seconds is stopped (the next request starts a fresh one); a client that goes away has
its sessions stopped (`forget`). The MCP SDK and anyio are imported when sessions start.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from toolfind.backends import defaults
from toolfind.backends.link import Attempt, Backend
from toolfind.errors import BackendError

__all__ = ["ClientSessions"]

logger = logging.getLogger("toolfind.backends")

#: Runs one client session for its whole life (the pool's): connect, serve, close.
RunSession = Callable[[Backend, Attempt], Awaitable[None]]
#: The session being set up in this task (its requests go through before it is ready).
_SETTING_UP: ContextVar[Attempt | None] = ContextVar("toolfind_setting_up", default=None)


class ClientSessions:
    """Each client's own sessions at the pool's backends (see the module).

    ``enabled`` is false under stdio (one client: it uses the shared sessions).
    """

    def __init__(
        self,
        run: RunSession,
        backends: Callable[[], list[Backend]],
        *,
        enabled: bool,
        start_timeout: float,
        idle: float = defaults.SESSION_IDLE,
    ) -> None:
        self._run = run
        self._backends = backends
        self.enabled = enabled
        self.start_timeout = start_timeout
        self.idle = idle
        self._tg: Any = None

    def start(self, tg: Any) -> None:
        """Run the sessions (and the reaper of idle ones) in ``tg``, the pool's task group."""
        self._tg = tg
        if self.enabled:
            tg.start_soon(self._reap)

    def lane(self, backend: Backend | None, client: object | None, *, start: bool) -> object:
        """``client`` when its requests to ``backend`` go to a session of its own (one it has,
        or, with ``start``, one it may start), else None: the shared session."""
        if not self.enabled or client is None or backend is None or backend.spec.shared:
            return None
        return client if start or client in backend.sessions else None

    async def session(self, backend: Backend, client: object) -> Attempt:
        """``client``'s connected session at ``backend``, started if it has none.

        Raises:
            BackendError: the backend already runs its most sessions, or this one did not
                start (in time).
        """
        import anyio

        found = backend.sessions.get(client)
        if found is not None and found is _SETTING_UP.get():
            return found
        if found is None or found.closed.is_set():
            if backend.removed:
                raise BackendError(f"server {backend.name!r} was removed from the servers file")
            limit = backend.spec.max_sessions
            if len(backend.sessions) >= limit:
                raise BackendError(
                    f"server {backend.name!r} already runs {limit} sessions, one per client, "
                    f"its most (max_sessions in {backend.spec.origin}): try again when a client "
                    "has left, or raise max_sessions"
                )
            found = backend.sessions[client] = Attempt(client)
            self._tg.start_soon(self._run, backend, found)
        found.used = anyio.current_time()
        with anyio.move_on_after(self.start_timeout):
            await found.ready.wait()
        if not found.ready.is_set():
            found.reason = f"did not start within {self.start_timeout:g} s"
            found.scope.cancel()
        if found.dispatcher is None or found.closed.is_set():
            why = found.reason or "its session ended"
            raise BackendError(f"server {backend.name!r} is unavailable to this client: {why}")
        return found

    @contextmanager
    def setting_up(self, attempt: Attempt) -> Iterator[None]:
        """Meanwhile, this task's requests to ``attempt`` go through before it is ready."""
        token = _SETTING_UP.set(attempt)
        try:
            yield
        finally:
            _SETTING_UP.reset(token)

    def ended(self, backend: Backend, attempt: Attempt) -> None:
        """``attempt`` (a client's session) has ended: the next request starts another."""
        if backend.sessions.get(attempt.lane) is attempt:
            del backend.sessions[attempt.lane]

    def forget(self, client: object) -> None:
        for backend in self._backends():
            found = backend.sessions.pop(client, None)
            if found is not None:
                found.scope.cancel()

    def stop_all(self, backend: Backend) -> None:
        """Stop every client's session of ``backend`` (removed or changed)."""
        for found in list(backend.sessions.values()):
            found.scope.cancel()
        backend.sessions.clear()

    def sessions_of(self, client: object) -> list[str]:
        return [
            b.name
            for b in self._backends()
            if (found := b.sessions.get(client)) is not None and not found.closed.is_set()
        ]

    async def _reap(self) -> None:
        """Stop the sessions no request has used for ``idle`` seconds, until cancelled."""
        import anyio

        while True:
            await anyio.sleep(min(60.0, self.idle / 4))
            now = anyio.current_time()
            for backend in self._backends():
                for client, found in list(backend.sessions.items()):
                    if now - found.used > self.idle:
                        logger.info(
                            "server %r: a client's session idle for %g s; stopping it",
                            backend.name,
                            self.idle,
                        )
                        backend.sessions.pop(client, None)
                        found.scope.cancel()
