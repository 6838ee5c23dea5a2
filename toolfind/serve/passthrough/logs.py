"""Log messages passed through: a backend's ``notifications/message`` to each client whose
level it meets, and the clients' ``logging/setLevel`` to the backends.

The level is per client connection (``warning`` until a client sets one). A client's own
sessions (over HTTP) are given that client's level; the shared sessions the most verbose level
any client wants. A message reaches a client with ``logger`` set to ``<server>`` or
``<server>/<its logger>``.

Whose message it is: a message from a client's own session is that client's (on the stream of
its request in flight there, if any; else on its connection, as a direct connection would get
it). A message from a shared session sent while client requests are in flight there goes to
the client of those requests only, on the request's own stream (a 2026-07-28 client gets it
there when its request opted in to that level); requests of several clients in flight: it
cannot be attributed, and is dropped rather than shown to a client it may not concern. A
shared session's message outside any request reaches the client only under stdio (the host).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.connection import Connection, allowed_log_levels
from mcp.shared.exceptions import MCPError

from toolfind.backends.seam import Lane
from toolfind.errors import BackendError
from toolfind.serve.notifier import ChangeNotifier, connection_of
from toolfind.serve.passthrough.common import Caller, Gateway, distinct_clients

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext

logger = logging.getLogger("toolfind.serve")

#: Until a client sends logging/setLevel, backend log messages from this level up reach it.
DEFAULT_LOG_LEVEL = "warning"

LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


def _level_at_least(level: str, floor: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(floor) if level in LEVELS else True


class Logs:
    """``logging/setLevel``, and the backends' log messages relayed by level."""

    def __init__(self, notifier: ChangeNotifier, gateway: Gateway) -> None:
        self.notifier = notifier
        self.gateway = gateway
        self._levels: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()

    def register(self, server: Server[Any]) -> None:
        server.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self.on_set_level
        )

    async def on_set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        connection = connection_of(ctx)
        if connection is not None:
            self._levels[connection] = params.level
            for server in self.gateway.upstream.sessions_of(connection):
                await self._set(server, params.level, connection)
        await self._backend_levels()
        return types.EmptyResult()

    async def connected(self, server: str, lane: Lane) -> None:
        """A session of a backend that logs just connected: give it the level its client
        (``lane``) has asked for, or for a shared session the most verbose one asked for."""
        if isinstance(lane, Connection):
            level = self._levels.get(lane)
            if level is not None:
                await self._set(server, level, lane)
        elif self._levels:
            await self._backend_levels([server])

    def _lowest_level(self) -> str:
        levels = [self._levels.get(c, DEFAULT_LOG_LEVEL) for c in self.notifier.connections()]
        return min(levels or [DEFAULT_LOG_LEVEL], key=LEVELS.index)

    async def _backend_levels(self, servers: Sequence[str] | None = None) -> None:
        """Ask the shared sessions of backends that log for what the most verbose client
        wants."""
        level = self._lowest_level()
        for server in self.gateway.servers_with("logging") if servers is None else servers:
            await self._set(server, level, None)

    async def _set(self, server: str, level: str, lane: Lane) -> None:
        try:
            await self.gateway.upstream.request(
                server, "logging/setLevel", {"level": level}, lane=lane
            )
        except (MCPError, BackendError) as exc:
            logger.debug("server %r: logging/setLevel failed: %s", server, exc)

    async def log(
        self, server: str, params: types.LoggingMessageNotificationParams, lane: Lane
    ) -> None:
        name = server if not params.logger else f"{server}/{params.logger}"
        payload = {"level": params.level, "logger": name, "data": params.data}
        callers = distinct_clients(self.gateway.callers_at(server, lane))
        if len(callers) == 1:
            caller = callers[0]
            if caller.connection is None or self._wants(caller.connection, params.level):
                await caller.outbox.send(_on_request_stream(caller, payload))
            return
        target = lane if isinstance(lane, Connection) else None
        if lane is None and not callers and self.gateway.single_client:
            connections = self.notifier.connections()
            target = connections[0] if len(connections) == 1 else None
        if target is None:
            logger.debug("server %r: a log message not attributable to one client", server)
            return
        if self._wants(target, params.level):
            outboxes = self.notifier.outboxes
            notice = outboxes.notify(target, "notifications/message", payload)
            await outboxes.send(target, notice)

    def _wants(self, connection: Connection, level: str) -> bool:
        return _level_at_least(level, self._levels.get(connection, DEFAULT_LOG_LEVEL))


def _on_request_stream(caller: Caller, payload: dict[str, Any]) -> Any:
    """Send ``payload`` on the caller's request stream, if its request may get that level (a
    2026-07-28 request opts in to a level in its ``_meta``; earlier eras take every level)."""

    async def send() -> None:
        allowed = allowed_log_levels(caller.session.protocol_version, caller.ctx.meta)
        if payload["level"] not in allowed:
            return
        notification = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams.model_validate(payload)
        )
        await caller.session.send_notification(notification, caller.request_id)

    return send
