"""Telling clients that a list changed, whatever their protocol era; the server class.

Handshake-era (2024-11-05 ... 2025-11-25) connections get ``notifications/*/list_changed`` on
their standalone channel (stdio, or the HTTP GET stream); 2026-07-28 clients get an event on
the SDK's subscription bus, delivered to their ``subscriptions/listen`` streams. The tools
(`server`) and the pass-through capabilities (`passthrough`) notify through one
`ChangeNotifier`.

Everything toolfind sends a client on its own (list changes, relayed log messages, progress,
resource updates) goes through that client's `Outbox`: a bounded queue drained by one task, so
that a client that does not read its stream costs at most ``OUTBOX_LIMIT`` queued messages, never
a backend's or another client's progress. What overflows is dropped and counted, and the client
is told how many it missed once it reads again.
"""

from __future__ import annotations

import logging
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
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


#: Messages queued for one client at most; more are dropped (counted) until it reads again.
OUTBOX_LIMIT = 256
#: Seconds one send to a client may block before that message is given up (a client that
#: stopped reading): the queue behind it moves on.
SEND_TIMEOUT = 30.0

Send = Callable[[], Awaitable[None]]


class Outbox:
    """One client's queue of messages toolfind sends it on its own, drained by one task.

    `put` never blocks: at ``limit`` queued messages the new one is dropped and counted. Once
    the queue has drained, a client that missed messages gets one ``notifications/message``
    (logger ``toolfind``) saying how many; a client that reads never misses any.
    """

    def __init__(self, connection: Connection | None, limit: int = OUTBOX_LIMIT) -> None:
        self._connection = weakref.ref(connection) if connection is not None else None
        self.limit = limit
        self.queue: deque[Send] = deque()
        self.dropped = 0
        self.dropped_total = 0
        self._wake = anyio.Event()

    def put(self, send: Send) -> bool:
        """Queue ``send``; False (and counted) when the queue is full."""
        if len(self.queue) >= self.limit:
            self.dropped += 1
            self.dropped_total += 1
            if self.dropped_total in (1, 1000, 100_000):
                logger.warning(
                    "a client is not reading what toolfind sends it: %d message(s) dropped so far",
                    self.dropped_total,
                )
            return False
        self.queue.append(send)
        self._wake.set()
        return True

    async def run(self) -> None:
        """Send what is queued, in order, until cancelled (the connection closed)."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            while self.queue:
                await self._send(self.queue.popleft())
                if not self.queue and self.dropped:
                    await self._send(self._notice())

    async def flush(self) -> None:
        """Send what is queued now, in this task (no drain task is running)."""
        while self.queue:
            await self._send(self.queue.popleft())

    async def _send(self, send: Send) -> None:
        await _send_bounded(send)

    def _notice(self) -> Send:
        count, self.dropped = self.dropped, 0
        connection = self._connection() if self._connection is not None else None

        async def send() -> None:
            if connection is not None:
                await connection.notify(
                    "notifications/message",
                    {
                        "level": "warning",
                        "logger": "toolfind",
                        "data": f"toolfind dropped {count} message(s) to this client: "
                        "it did not read them in time",
                    },
                )

        return send


class RequestOutbox:
    """What toolfind sends on one client request's own stream (its progress, the log messages
    it caused), in order and bounded, sent before the request's answer (`settled`).

    No task of its own: the first sender sends what queues up behind it; others queue (at
    most ``limit``, then dropped and counted) and return at once.
    """

    def __init__(self, limit: int = OUTBOX_LIMIT) -> None:
        self.limit = limit
        self.queue: deque[Send] = deque()
        self.dropped = 0
        self._draining = False
        self._idle: anyio.Event | None = None

    async def send(self, send: Send) -> None:
        if self._draining:
            if len(self.queue) >= self.limit:
                self.dropped += 1
            else:
                self.queue.append(send)
            return
        self._draining = True
        self._idle = anyio.Event()
        try:
            await _send_bounded(send)
            while self.queue:
                await _send_bounded(self.queue.popleft())
        finally:
            self._draining = False
            self._idle.set()

    async def settled(self, timeout: float = SEND_TIMEOUT) -> None:
        """Wait (up to ``timeout``) until what was queued has been sent."""
        if self._draining and self._idle is not None:
            with anyio.move_on_after(timeout):
                await self._idle.wait()


async def _send_bounded(send: Send) -> None:
    with anyio.move_on_after(SEND_TIMEOUT):
        try:
            await send()
        except Exception as exc:  # a closed stream or a gone client: best effort
            logger.debug("sending to a client failed: %s", exc)


class Outboxes:
    """Every client's `Outbox`, by connection, drained in the server's task group.

    The task group lives as long as the server runs (`running`, the server's lifespan); when
    none runs (a handler driven outside a server), messages are sent at once instead.
    """

    def __init__(self, limit: int = OUTBOX_LIMIT) -> None:
        self.limit = limit
        self._boxes: weakref.WeakKeyDictionary[Connection, Outbox] = weakref.WeakKeyDictionary()
        self._tg: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[anyio.abc.TaskGroup]:
        async with anyio.create_task_group() as tg:
            self._tg = tg
            try:
                yield tg
            finally:
                self._tg = None
                tg.cancel_scope.cancel()

    @property
    def task_group(self) -> anyio.abc.TaskGroup | None:
        return self._tg

    def of(self, connection: Connection) -> Outbox:
        box = self._boxes.get(connection)
        if box is None:
            box = self._boxes[connection] = Outbox(connection, self.limit)
            if self._tg is not None:
                scope = anyio.CancelScope()

                async def drain() -> None:
                    with scope:
                        await box.run()

                self._tg.start_soon(drain)
                connection.exit_stack.callback(scope.cancel)
        return box

    async def send(self, connection: Connection | None, send: Send) -> None:
        """Queue ``send`` for ``connection`` (at once without a task group or a connection)."""
        if connection is None or self._tg is None:
            try:
                await send()
            except Exception as exc:
                logger.debug("sending to a client failed: %s", exc)
            return
        self.of(connection).put(send)

    def notify(self, connection: Connection, method: str, params: Any) -> Send:
        """A queued ``connection.notify(method, params)``."""

        async def send() -> None:
            await connection.notify(method, params)

        return send


class ToolfindServer(Server[Any]):
    """The SDK's low-level Server, advertising ``tools.listChanged`` on every transport.

    The streamable-HTTP session manager and the in-memory test transport call
    ``create_initialization_options()`` without arguments; the base class would then
    advertise ``listChanged: false`` to handshake-era clients.
    """

    #: Set by `server.Discovery`: the backends' instructions, added to toolfind's own.
    backend_instructions: Callable[[], str] = staticmethod(lambda: "")

    @property
    def instructions(self) -> str | None:
        """toolfind's instructions plus the connected backends' (read at each initialize)."""
        own = self._own_instructions
        extra = self.backend_instructions()
        return (own or "") + extra if own or extra else None

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        self._own_instructions = value

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
        self.outboxes = Outboxes()
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

    async def changed(self, event: ServerEvent, method: str, only: object = None) -> None:
        """``event`` to 2026-07-28 listeners, ``method`` to every handshake-era connection
        (a ``*/list_changed`` only to those that have asked for that list); with ``only`` (a
        connection), to that connection alone."""
        if only is None:
            await self.bus.publish(event)
        listed = _LISTED_BY.get(method)
        asked = self._listed.get(listed, weakref.WeakSet()) if listed else None
        for connection in list(self._connections):
            if only is not None and connection is not only:
                continue
            if asked is None or connection in asked:
                await self.outboxes.send(connection, self.outboxes.notify(connection, method, None))

    async def publish(self, event: ServerEvent) -> None:
        await self.bus.publish(event)

    def connections(self) -> list[Connection]:
        """The handshake-era connections open now."""
        return list(self._connections)
