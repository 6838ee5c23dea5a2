"""The `Backends` seam where real MCP servers plug in behind serve-mcp, and its status type.

`Backends` is the whole contract: serve-mcp calls every member plainly, and `NoBackends`
(a catalog-only server) answers each as "nothing". Imported with `serve.main`, before serving
starts: no MCP SDK or anyio at module level.

Sessions. Each backend has one session of toolfind's own (the *shared* one): its tools are
the index, its instructions and capabilities what toolfind declares. Under stdio serve-mcp has
one client, the host, and every request goes to that session. Over HTTP every client gets a
session of its own at each backend it uses (its *lane*: `Backends.lane`), started with its
first request there, so that what a backend keeps per session (roots, log level,
subscriptions, resources a tool made) belongs to that client alone; a server entry with
``shared`` keeps one session for every client. A lane is named by the client it serves (an
opaque object, its connection); None is the shared session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

from toolfind.errors import BackendError
from toolfind.models import Tool

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = [
    "NOT_STARTED",
    "AskHost",
    "BackendStatus",
    "Backends",
    "Declare",
    "Lane",
    "NoBackends",
    "Progress",
    "Relay",
]

#: The ``detail`` of a backend whose first attempt has not ended yet.
NOT_STARTED = "not started"

#: Which session of a backend: the client it serves, or None for toolfind's shared one.
Lane = object | None
#: ``relay(server, notification, lane)``: a backend's notification (None: that session just
#: connected), from the session of ``lane``.
Relay = Callable[[str, Any, Lane], Awaitable[None]]
#: ``ask(server, method, params, lane)``: a backend's request for the host (sampling,
#: elicitation, roots) from the session of ``lane``; the host's answer, or an MCPError.
AskHost = Callable[[str, str, "Mapping[str, Any] | None", Lane], Awaitable[dict[str, Any]]]
#: ``declare(lane)``: the client capabilities (a ``ClientCapabilities``) to declare in the
#: handshake of the session of ``lane``.
Declare = Callable[[Lane], Awaitable[Any]]


class Progress(Protocol):
    """Awaited for each progress notification of a forwarded request."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None: ...


@dataclass(frozen=True, slots=True)
class BackendStatus:
    """How one backend is doing: ``available`` false means calls to it fail until it restarts.

    ``state`` is ``connecting`` (its first attempt is under way), ``ready``, ``retrying``
    (it failed or crashed: waiting out a backoff, or attempting again) or ``failed`` (retries
    given up until a call or an edit of its servers file); ``detail`` is the last error while
    not ready ("exited with status 1", "command not found: ...").
    """

    name: str
    available: bool
    tool_count: int = 0
    detail: str = ""
    state: str = ""


class Backends(Protocol):
    """Live MCP servers whose tools serve-mcp indexes and whose calls it forwards.

    An async context manager that starts every backend in the background (entering returns
    at once; tools join later through the listener) and stops them; serve-mcp enters it
    once, before the first client connects, and leaves it from the same task.
    """

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    # -- before entering ----------------------------------------------------------------

    def hold(self) -> None:
        """Enter without starting the backends until `release` (serve-mcp answers its first
        ``tools/list`` before backend processes compete with it for the CPU)."""

    def expect_host(self) -> None:
        """A server will `set_host`: each shared session's handshake waits for it, since it
        declares what the host can answer (a backend offers its sampling or roots tools only
        to a host that can)."""

    def release(self) -> None:
        """Let backends held back at start connect now (idempotent)."""

    def set_listener(self, listener: Callable[[], None]) -> None:
        """Run ``listener`` (on the event loop) when any backend's tools change; serve-mcp
        then re-reads ``tools()``, rebuilds the index off the request path and notifies."""

    def set_relay(self, relay: Relay) -> None:
        """Await ``relay`` for every notification a backend sends other than
        ``tools/list_changed``, and with None when a session connects."""

    def set_host(self, declare: Declare, ask: AskHost) -> None:
        """Declare ``await declare(lane)`` in each session's handshake, and relay the requests
        a backend makes of the host through ``ask``."""

    # -- the tools ------------------------------------------------------------------------

    def tools(self) -> Sequence[Tool]:
        """A cheap snapshot of every tool, kept current by the backends' own tasks.

        Each Tool's ``name`` is the exposed (namespaced, sanitised) name, ``namespace`` the
        server name, ``source`` is ``Source(file="mcp://<server>")``, ``aliases`` holds the
        backend's own name and ``original`` the entry as sent. A backend that crashed keeps
        its last tools listed (``status`` says it is unavailable); calling one restarts it.
        """

    def serves(self, name: str) -> bool:
        """Whether a call to the exposed tool ``name`` can be forwarded to a backend now:
        false for a tool of a backend that failed for good, and for a tool that must run
        as an MCP task (toolfind does not relay tasks): not callable, not listed."""

    def route(self, name: str) -> tuple[str, str] | None:
        """(server, the backend's own tool name) behind the exposed tool ``name``, even while
        that backend is down; None for a name no backend has."""

    def status(self) -> Mapping[str, BackendStatus]:
        """Each backend by server name."""

    async def wait_settled(self) -> None:
        """Return once no backend is connecting for the first time (each is up, or its
        first attempt failed)."""

    def capabilities(self) -> Mapping[str, Any]:
        """Each connected backend's ``ServerCapabilities`` (of its shared session), by name."""

    def instructions(self) -> Mapping[str, str]:
        """Each connected backend's ``instructions``, by server name (those that sent some)."""

    # -- requests -------------------------------------------------------------------------

    def lane(self, server: str, client: object | None, *, start: bool) -> Lane:
        """The session of ``server`` a request of ``client`` goes to: ``client`` when it has
        (or, with ``start``, may start) one of its own there, else None (the shared one)."""

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        progress: Progress | None = None,
        *,
        lane: Lane = None,
    ) -> CallToolResult:
        """Forward a call by exposed name, on the session of ``lane``; the backend's
        ``CallToolResult`` comes back unchanged. ``progress`` is awaited for each progress
        notification.

        Raises:
            BackendError: the backend is down, crashed, timed out or answered too much;
                serve-mcp makes that a tool error.
            MCPError: the backend answered with a JSON-RPC error: passed on whole.
        """

    async def request(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None,
        progress: Progress | None = None,
        *,
        lane: Lane = None,
    ) -> dict[str, Any]:
        """A raw request to one backend, on the session of ``lane`` (started if needed).

        Raises:
            BackendError: no such server; it is down, exited, was removed, did not answer
                in time, or ``lane``'s session cannot be started (the bound is reached).
            MCPError: the backend answered with a JSON-RPC error (passed on as sent).
        """

    async def notify(
        self, server: str, method: str, params: Mapping[str, Any] | None, *, lane: Lane = None
    ) -> None:
        """Send a notification to the session of ``lane`` when it is connected (best effort)."""

    def sessions_of(self, client: object) -> list[str]:
        """The servers where ``client`` has a session of its own now."""

    def forget(self, client: object) -> None:
        """``client`` went away: stop the sessions it had (idempotent)."""

    # -- quitting -------------------------------------------------------------------------

    def hurry(self, *, kill: bool = False) -> int:
        """Stop every backend process now (SIGTERM; SIGKILL with ``kill``) rather than
        waiting out the grace they get on a closed stdin; nothing restarts from now on.
        Returns how many process groups were signalled."""

    async def watch_servers(self, interval: float) -> None:
        """Follow the servers files every ``interval`` seconds until cancelled."""


class NoBackends:
    """The backends of a catalog-only server: none. Every catalog tool is search-only."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def hold(self) -> None:
        return None

    def expect_host(self) -> None:
        return None

    def release(self) -> None:
        return None

    def set_listener(self, listener: Callable[[], None]) -> None:
        return None

    def set_relay(self, relay: Relay) -> None:
        return None

    def set_host(self, declare: Declare, ask: AskHost) -> None:
        return None

    def tools(self) -> Sequence[Tool]:
        return ()

    def serves(self, name: str) -> bool:
        return False

    def route(self, name: str) -> tuple[str, str] | None:
        return None

    def status(self) -> Mapping[str, BackendStatus]:
        return {}

    async def wait_settled(self) -> None:
        return None

    def capabilities(self) -> Mapping[str, Any]:
        return {}

    def instructions(self) -> Mapping[str, str]:
        return {}

    def lane(self, server: str, client: object | None, *, start: bool) -> Lane:
        return None

    async def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        progress: Progress | None = None,
        *,
        lane: Lane = None,
    ) -> CallToolResult:
        raise BackendError(f"No backend serves {name!r}.")

    async def request(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None,
        progress: Progress | None = None,
        *,
        lane: Lane = None,
    ) -> dict[str, Any]:
        raise BackendError(f"No backend server named {server!r}.")

    async def notify(
        self, server: str, method: str, params: Mapping[str, Any] | None, *, lane: Lane = None
    ) -> None:
        return None

    def sessions_of(self, client: object) -> list[str]:
        return []

    def forget(self, client: object) -> None:
        return None

    def hurry(self, *, kill: bool = False) -> int:
        return 0

    async def watch_servers(self, interval: float) -> None:
        return None
