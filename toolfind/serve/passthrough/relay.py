"""The pass-through capabilities put together: their handlers registered on the server, each
backend notification relayed to the capability it concerns (with the session it came from),
and each backend request for the host (sampling, elicitation, roots) relayed to the client it
is for (`host`, `rounds`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from toolfind.backends.seam import Backends, Lane
from toolfind.serve.notifier import ChangeNotifier, connection_of
from toolfind.serve.passthrough.common import CALLER, Gateway, exposed_uri, track_caller
from toolfind.serve.passthrough.completions import Completions
from toolfind.serve.passthrough.host import ELICITATION, HostRequests
from toolfind.serve.passthrough.logs import Logs
from toolfind.serve.passthrough.prompts import Prompts
from toolfind.serve.passthrough.resources import Resources
from toolfind.serve.passthrough.rounds import MultiRoundTrip
from toolfind.serve.state import LiveIndex

if TYPE_CHECKING:
    from mcp.server import Server

logger = logging.getLogger("toolfind.serve")


class Passthrough:
    """Resources, prompts, completions and log messages of the backends, and the relay."""

    def __init__(
        self,
        live: LiveIndex,
        notifier: ChangeNotifier,
        backends: Backends,
        separator: str,
        *,
        single_client: bool = True,
    ) -> None:
        self.notifier = notifier
        self.gateway = Gateway(backends, single_client=single_client)
        self.resources = Resources(live, notifier, self.gateway)
        self.prompts = Prompts(live, notifier, self.gateway, separator)
        self.logs = Logs(notifier, self.gateway)
        self.completions = Completions(self.gateway, self.prompts)
        self.host = HostRequests(notifier, self.gateway, single_client)
        self.rounds = MultiRoundTrip()
        self.rounds.task_group = lambda: notifier.outboxes.task_group
        self.host.modern = self.rounds
        self.exposed_result = self.resources.exposed_result
        self.listen_handler = self.resources.listen_handler
        backends.set_relay(self.relay)
        backends.set_host(self.host.capabilities.for_backends, self.host.ask)

    def register(self, server: Server[Any]) -> None:
        """Add the handlers (and so the capabilities) this server really has."""
        for capability in (self.resources, self.prompts, self.logs, self.completions):
            capability.register(server)
        server.middleware.append(track_caller)
        server.middleware.append(self.host.capabilities.middleware)
        if self.gateway.active:
            server.add_notification_handler(
                "notifications/roots/list_changed",
                types.NotificationParams,
                self.on_roots_changed,
            )

    def passed_on(self, server: str, lane: Lane, error: MCPError) -> MCPError:
        """A backend's JSON-RPC error to a request of the current caller, passed on whole
        (code, message, data): the resource URIs in its data named as a client sees them, and
        a URL-elicitation-required error's elicitations (-32042, the URL to open in its data)
        noted as this client's, so their completion reaches it."""
        data = error.data
        if error.code == types.URL_ELICITATION_REQUIRED and isinstance(data, dict):
            caller = CALLER.get()
            connection = caller.connection if caller is not None else None
            for item in data.get("elicitations") or ():
                if isinstance(item, dict):
                    self.host.remember_urls(server, lane, ELICITATION, item, connection)
        if server in self.gateway.servers_with("resources"):
            data = _exposed_uris(server, data)
        return MCPError(error.code, error.message, data)

    async def on_roots_changed(self, ctx: Any, params: Any) -> None:
        """A client's roots changed: tell the sessions that serve it (they ask again): its
        own, and under stdio the shared ones."""
        connection = connection_of(ctx)
        upstream = self.gateway.upstream
        method = "notifications/roots/list_changed"
        if connection is not None:
            for server in upstream.sessions_of(connection):
                await upstream.notify(server, method, None, lane=connection)
        if self.gateway.single_client:
            for server in self.gateway.servers_connected():
                await upstream.notify(server, method, None)

    async def relay(self, server: str, message: Any, lane: Lane) -> None:
        """A notification from the session of ``lane`` at backend ``server`` (None: it just
        connected) passed on to the clients it concerns."""
        if message is None:
            caps = self.gateway.capabilities_of(server)
            if getattr(caps, "resources", None) is not None:
                if lane is None:
                    await self.resources.list_changed()
                await self.resources.reconnected(server, lane)
            if getattr(caps, "prompts", None) is not None and lane is None:
                await self.prompts.list_changed()
            if getattr(caps, "logging", None) is not None:
                await self.logs.connected(server, lane)
        elif isinstance(message, types.ResourceListChangedNotification):
            await self.resources.list_changed(lane)
        elif isinstance(message, types.PromptListChangedNotification):
            await self.prompts.list_changed(lane)
        elif isinstance(message, types.ResourceUpdatedNotification):
            await self.resources.updated(exposed_uri(server, message.params.uri), lane)
        elif isinstance(message, types.LoggingMessageNotification):
            await self.logs.log(server, message.params, lane)
        elif isinstance(message, types.ElicitCompleteNotification):
            await self.host.elicitation_complete(server, message.params, lane)


def _exposed_uris(server: str, value: Any) -> Any:
    """``value`` (JSON) with each ``uri`` string named as a client sees it."""
    if isinstance(value, list):
        return [_exposed_uris(server, item) for item in value]
    if isinstance(value, dict):
        return {
            key: exposed_uri(server, item)
            if key == "uri" and isinstance(item, str)
            else _exposed_uris(server, item)
            for key, item in value.items()
        }
    return value
