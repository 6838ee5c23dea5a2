"""Log messages passed through: a backend's ``notifications/message`` to each client whose
level it meets, and the clients' ``logging/setLevel`` to the backends.

The level is per client connection (``warning`` until a client sets one); backends that
declare logging are asked for the most verbose level any client wants. A message reaches a
handshake-era client with ``logger`` set to ``<server>`` or ``<server>/<its logger>``.
(2026-07-28 removed connection-wide logging: those clients opt in per request, which
forwarded calls do not relay.)
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError

from toolfind.serve.notifier import ChangeNotifier, connection_of
from toolfind.serve.passthrough.common import Gateway

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
        for connection in self.notifier.connections():
            if _level_at_least(params.level, self._levels.get(connection, DEFAULT_LOG_LEVEL)):
                await connection.notify("notifications/message", payload)
