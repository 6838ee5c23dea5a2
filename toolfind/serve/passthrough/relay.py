"""The pass-through capabilities put together: their handlers registered on the server, and
each backend notification relayed to the capability it concerns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types

from toolfind.serve.notifier import ChangeNotifier
from toolfind.serve.passthrough.common import Gateway, exposed_uri
from toolfind.serve.passthrough.completions import Completions
from toolfind.serve.passthrough.logs import Logs
from toolfind.serve.passthrough.prompts import Prompts
from toolfind.serve.passthrough.resources import Resources
from toolfind.serve.state import LiveIndex

if TYPE_CHECKING:
    from mcp.server import Server


class Passthrough:
    """Resources, prompts, completions and log messages of the backends, and the relay."""

    def __init__(
        self,
        live: LiveIndex,
        notifier: ChangeNotifier,
        backends: object,
        separator: str,
    ) -> None:
        self.gateway = Gateway(backends)
        self.resources = Resources(live, notifier, self.gateway)
        self.prompts = Prompts(live, notifier, self.gateway, separator)
        self.logs = Logs(notifier, self.gateway)
        self.completions = Completions(self.gateway, self.prompts)
        self.exposed_result = self.resources.exposed_result
        self.listen_handler = self.resources.listen_handler
        if self.gateway.upstream is not None:
            self.gateway.upstream.set_relay(self.relay)

    def register(self, server: Server[Any]) -> None:
        """Add the handlers (and so the capabilities) this server really has."""
        for capability in (self.resources, self.prompts, self.logs, self.completions):
            capability.register(server)

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
