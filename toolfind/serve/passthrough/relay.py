"""The pass-through capabilities put together: their handlers registered on the server, each
backend notification relayed to the capability it concerns, and each backend request for the
host (sampling, elicitation, roots) relayed to the client it is for (`host`, `rounds`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import mcp_types as types

from toolfind.serve.notifier import ChangeNotifier
from toolfind.serve.passthrough.common import Gateway, exposed_uri, track_caller
from toolfind.serve.passthrough.completions import Completions
from toolfind.serve.passthrough.host import HostRequests
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
        backends: object,
        separator: str,
        *,
        single_client: bool = True,
    ) -> None:
        self.notifier = notifier
        self.gateway = Gateway(backends)
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
        upstream = self.gateway.upstream
        if upstream is not None:
            upstream.set_relay(self.relay)
            set_host = getattr(upstream, "set_host", None)
            if set_host is not None:
                set_host(self.host.capabilities.for_backends, self.host.ask)

    def register(self, server: Server[Any]) -> None:
        """Add the handlers (and so the capabilities) this server really has."""
        for capability in (self.resources, self.prompts, self.logs, self.completions):
            capability.register(server)
        server.middleware.append(track_caller)
        server.middleware.append(self.host.capabilities.middleware)
        if self.gateway.upstream is not None:
            server.add_notification_handler(
                "notifications/roots/list_changed",
                types.NotificationParams,
                self.on_roots_changed,
            )

    async def on_roots_changed(self, ctx: Any, params: Any) -> None:
        """A client's roots changed: tell the backends (they ask for them again)."""
        notify = getattr(self.gateway.upstream, "notify", None)
        if notify is None:
            return
        for server in self.gateway.servers_connected():
            await notify(server, "notifications/roots/list_changed", None)

    async def relay(self, server: str, message: Any) -> None:
        """A backend's notification (None: it just connected) passed on to the clients."""
        if message is None:
            caps = self.gateway.capabilities_of(server)
            if getattr(caps, "resources", None) is not None:
                await self.resources.list_changed()
                await self.resources.reconnected(server)
            if getattr(caps, "prompts", None) is not None:
                await self.prompts.list_changed()
            if getattr(caps, "logging", None) is not None:
                await self.logs.connected(server)
        elif isinstance(message, types.ResourceListChangedNotification):
            await self.resources.list_changed()
        elif isinstance(message, types.PromptListChangedNotification):
            await self.prompts.list_changed()
        elif isinstance(message, types.ResourceUpdatedNotification):
            await self.resources.updated(exposed_uri(server, message.params.uri))
        elif isinstance(message, types.LoggingMessageNotification):
            await self.logs.log(server, message.params)
        elif isinstance(message, types.ElicitCompleteNotification):
            await self.host.elicitation_complete(message.params)
