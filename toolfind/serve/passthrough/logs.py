"""Log messages passed through: a backend's ``notifications/message`` to each client whose
level it meets, and the clients' ``logging/setLevel`` to the backends.

The level is per client connection (``warning`` until a client sets one); backends that
declare logging are asked for the most verbose level any client wants. A message reaches a
client with ``logger`` set to ``<server>`` or ``<server>/<its logger>``.

Whose message it is: backends are shared by every client, so a message sent while client
requests are in flight at that backend goes to the client of those requests only, on the
request's own stream (a 2026-07-28 client gets it there when its request opted in to that
level). Requests of several clients in flight: it cannot be attributed, and is dropped rather
than shown to a client it may not concern. A message outside any request reaches the clients
only when one is connected (under stdio, always the host): with several, it is nobody's.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.connection import Connection, allowed_log_levels
from mcp.shared.exceptions import MCPError

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
        #: Messages that could not be attributed to one client, and were not relayed.
        self.unattributed = 0

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
        await self._backend_levels()
        return types.EmptyResult()

    async def connected(self, server: str) -> None:
        """A backend that logs just connected: give it the level clients have asked for."""
        if self._levels:
            await self._backend_levels([server])

    def _lowest_level(self) -> str:
        levels = [self._levels.get(c, DEFAULT_LOG_LEVEL) for c in self.notifier.connections()]
        return min(levels or [DEFAULT_LOG_LEVEL], key=LEVELS.index)

    async def _backend_levels(self, servers: Sequence[str] | None = None) -> None:
        """Ask backends that log for what the most verbose client wants."""
        level = self._lowest_level()
        for server in self.gateway.servers_with("logging") if servers is None else servers:
            try:
                await self.gateway.forward(server, "logging/setLevel", {"level": level})
            except MCPError as exc:
                logger.debug("server %r: logging/setLevel failed: %s", server, exc)

    async def log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        name = server if not params.logger else f"{server}/{params.logger}"
        payload = {"level": params.level, "logger": name, "data": params.data}
        callers = distinct_clients(self.gateway.callers_at(server))
        outboxes = self.notifier.outboxes
        if len(callers) == 1:
            caller = callers[0]
            if caller.connection is None or _level_at_least(
                params.level, self._levels.get(caller.connection, DEFAULT_LOG_LEVEL)
            ):
                await caller.outbox.send(_on_request_stream(caller, payload))
            return
        connections = self.notifier.connections()
        if callers or len(connections) > 1:
            self.unattributed += 1
            logger.debug("server %r: a log message not attributable to one client", server)
            return
        for connection in connections:
            if _level_at_least(params.level, self._levels.get(connection, DEFAULT_LOG_LEVEL)):
                await outboxes.send(
                    connection, outboxes.notify(connection, "notifications/message", payload)
                )


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
