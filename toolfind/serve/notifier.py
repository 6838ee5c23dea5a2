"""Telling clients that a list changed, whatever their protocol era; the server class.

Handshake-era (2024-11-05 ... 2025-11-25) connections get ``notifications/*/list_changed`` on
their standalone channel (stdio, or the HTTP GET stream); 2026-07-28 clients get an event on
the SDK's subscription bus, delivered to their ``subscriptions/listen`` streams. The tools
(`server`) and the pass-through capabilities (`passthrough`) notify through one
`ChangeNotifier`.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ServerEvent,
    ToolsListChanged,
)

logger = logging.getLogger("toolfind.serve")


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    """The connection a request came on. SDK 2.3 gives handlers no public handle on their
    Connection; the per-request ServerSession holds it."""
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


class ToolfindServer(Server[Any]):
    """The SDK's low-level Server, advertising ``tools.listChanged`` on every transport.

    The streamable-HTTP session manager and the in-memory test transport call
    ``create_initialization_options()`` without arguments; the base class would then
    advertise ``listChanged: false`` to handshake-era clients.
    """

    def create_initialization_options(
        self, notification_options: NotificationOptions | None = None, *args: Any, **kwargs: Any
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(
            tools_changed=True, prompts_changed=True, resources_changed=True
        )
        return super().create_initialization_options(options, *args, **kwargs)


#: The list a ``list_changed`` notification invalidates.
_LISTED_BY = {
    "notifications/tools/list_changed": "tools/list",
    "notifications/prompts/list_changed": "prompts/list",
    "notifications/resources/list_changed": "resources/list",
}
_LIST_OF = frozenset(_LISTED_BY.values())


class ChangeNotifier:
    """Tells every connected client that the tool list changed, whatever its protocol era.

    Handshake-era connections are remembered when their ``notifications/initialized``
    arrives (a server middleware) and forgotten when they close. A ``list_changed`` goes
    only to connections that have asked for that list: one that never asked has no list to
    refresh, and a simple client reading one reply per request is not surprised by a
    notification (backends join after start, so such changes are common early on).
    """

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen_handler = ListenHandler(self.bus)
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        #: Connections by the list they have asked for (``tools/list``, ``prompts/list``...).
        self._listed: dict[str, weakref.WeakSet[Connection]] = {}
        self.sent = 0

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method in _LIST_OF:
            connection = connection_of(ctx)
            if connection is not None:
                self._listed.setdefault(ctx.method, weakref.WeakSet()).add(connection)
        result = await call_next(ctx)
        if ctx.method != "notifications/initialized":
            return result
        # Weak references plus the connection's exit stack mean a closed connection is never
        # notified and never kept alive.
        connection = connection_of(ctx)
        if connection is not None:
            self._connections.add(connection)
            connection.exit_stack.callback(self._connections.discard, connection)
        else:
            logger.debug("cannot track this connection for list_changed notifications")
        return result

    async def tools_changed(self) -> None:
        self.sent += 1
        await self.changed(ToolsListChanged(), "notifications/tools/list_changed")

    async def changed(self, event: ServerEvent, method: str) -> None:
        """``event`` to 2026-07-28 listeners, ``method`` to every handshake-era connection
        (a ``*/list_changed`` only to those that have asked for that list)."""
        await self.bus.publish(event)
        listed = _LISTED_BY.get(method)
        asked = self._listed.get(listed, weakref.WeakSet()) if listed else None
        for connection in list(self._connections):
            if asked is None or connection in asked:
                await connection.notify(method, None)  # best effort: never raises

    async def publish(self, event: ServerEvent) -> None:
        await self.bus.publish(event)

    def connections(self) -> list[Connection]:
        """The handshake-era connections open now."""
        return list(self._connections)
