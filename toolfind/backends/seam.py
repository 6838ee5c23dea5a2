"""The `Backends` seam where real MCP servers plug in behind serve-mcp, and its status type.

The contract for implementers is in `Backends`. Imported with `serve.main`, before serving
starts: no MCP SDK or anyio at module level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

from toolfind.errors import BackendError
from toolfind.models import Tool

if TYPE_CHECKING:
    from mcp_types import CallToolResult

__all__ = ["NOT_STARTED", "BackendStatus", "Backends", "NoBackends"]

#: The ``detail`` of a backend whose first attempt has not ended yet.
NOT_STARTED = "not started"


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

    def tools(self) -> Sequence[Tool]:
        """A cheap snapshot of every tool, kept current by the backends' own tasks.

        Each Tool's ``name`` is the exposed (namespaced, sanitised) name, ``namespace`` the
        server name, ``source`` is ``Source(file="mcp://<server>")``, ``aliases`` holds the
        backend's own name and ``original`` the entry as sent. A backend that crashed keeps
        its last tools listed (``status`` says it is unavailable); calling one restarts it.
        """

    def serves(self, name: str) -> bool:
        """Whether a call to the exposed tool ``name`` can be forwarded to a backend now
        (false for a tool of a backend that failed for good: not callable, not listed)."""

    def route(self, name: str) -> tuple[str, str] | None:
        """(server, the backend's own tool name) behind the exposed tool ``name``, even while
        that backend is down; None for a name no backend has."""

    async def call(
        self, name: str, arguments: Mapping[str, Any], on_progress: Any = None
    ) -> CallToolResult:
        """Forward a call by exposed name; the backend's ``CallToolResult`` comes back unchanged.
        ``on_progress(progress, total, message)`` is awaited for each progress notification.

        Raises BackendError when the backend is down, crashed, timed out or refused;
        serve-mcp makes that a tool error, never a protocol error.
        """

    def status(self) -> Mapping[str, BackendStatus]:
        """Each backend by server name."""

    async def wait_settled(self) -> None:
        """Return once no backend is connecting for the first time (each is up, or its
        first attempt failed)."""

    def release(self) -> None:
        """Let backends held back at start connect now (idempotent; see `BackendPool.hold`)."""

    def set_listener(self, listener: Callable[[], None]) -> None:
        """Run ``listener`` (on the event loop) when any backend's tools change; serve-mcp
        then re-reads ``tools()``, rebuilds the index off the request path and notifies."""


class NoBackends:
    """The backends of a catalog-only server: none. Every catalog tool is search-only."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def tools(self) -> Sequence[Tool]:
        return ()

    def serves(self, name: str) -> bool:
        return False

    def route(self, name: str) -> tuple[str, str] | None:
        return None

    async def call(
        self, name: str, arguments: Mapping[str, Any], on_progress: Any = None
    ) -> CallToolResult:
        raise BackendError(f"No backend serves {name!r}.")

    def status(self) -> Mapping[str, BackendStatus]:
        return {}

    async def wait_settled(self) -> None:
        return None

    def release(self) -> None:
        return None

    def set_listener(self, listener: Callable[[], None]) -> None:
        return None
