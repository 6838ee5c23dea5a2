"""Prompts passed through: every backend's, plus toolfind's own deferred-summaries prompt.

A backend's prompt is exposed as ``<server><separator><prompt>``, made valid for hosts by the
same `backends.tools.assign_names` as tools (``time__convert``), so that each exposed name
leads back to exactly one backend.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.server.subscriptions import PromptsListChanged
from mcp.shared.exceptions import MCPError

from toolfind.backends.seam import Lane
from toolfind.backends.tools import assign_names
from toolfind.output.tool_formats import summaries_text
from toolfind.serve.notifier import ChangeNotifier
from toolfind.serve.passthrough.common import Gateway, cleaned, page
from toolfind.serve.state import LiveIndex

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext

#: toolfind's own prompt: the deferred tools' one-line summaries.
OWN_PROMPT = "deferred_tool_summaries"


class Prompts:
    """``prompts/list`` and ``prompts/get``, and which backend prompt an exposed name is."""

    def __init__(
        self, live: LiveIndex, notifier: ChangeNotifier, gateway: Gateway, separator: str
    ) -> None:
        self.live = live
        self.notifier = notifier
        self.gateway = gateway
        self.separator = separator
        self._routes: dict[str, tuple[str, str]] = {}

    def register(self, server: Server[Any]) -> None:
        server.add_request_handler(
            "prompts/list", types.PaginatedRequestParams, self.on_list_prompts
        )
        server.add_request_handler("prompts/get", types.GetPromptRequestParams, self.on_get_prompt)

    async def list_changed(self, lane: Lane = None) -> None:
        """The list changed: for every client, or only for the client of ``lane`` (what its
        own session lists)."""
        await self.notifier.changed(
            PromptsListChanged(), "notifications/prompts/list_changed", lane
        )

    def _own_prompt(self) -> types.Prompt:
        return types.Prompt(
            name=OWN_PROMPT,
            title="Deferred tool summaries",
            description=(
                "One line per deferred tool (name and summary) to put in a system prompt; "
                "with all=true, every tool."
            ),
            arguments=[
                types.PromptArgument(
                    name="all", description="true: every tool, not only the deferred ones"
                )
            ],
        )

    async def _backend_prompts(self) -> list[types.Prompt]:
        gathered = await self.gateway.gather("prompts", "prompts/list", "prompts")
        pairs = [
            (server, entry["name"])
            for server, entry in gathered
            if isinstance(entry, dict) and isinstance(entry.get("name"), str)
        ]
        names, _ = assign_names(pairs, self.separator, (OWN_PROMPT,))
        listed: list[types.Prompt] = []
        routes: dict[str, tuple[str, str]] = {}
        for server, entry in gathered:
            if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)):
                continue
            exposed = names[(server, entry["name"])]
            prompt = self.gateway.valid(types.Prompt, cleaned(entry) | {"name": exposed}, server)
            if prompt is not None and exposed not in routes:
                routes[exposed] = (server, entry["name"])
                listed.append(prompt)
        self._routes = routes
        return listed

    async def on_list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        await self.gateway.settle()
        listed = [self._own_prompt(), *await self._backend_prompts()]
        items, cursor = page(listed, params.cursor if params else None, "prompts")
        return types.ListPromptsResult(prompts=items, next_cursor=cursor)

    async def route(self, name: str) -> tuple[str, str]:
        """(server, the backend's prompt name) behind an exposed prompt name.

        Raises:
            MCPError: -32602 when no backend prompt has that name.
        """
        if name not in self._routes:
            await self.gateway.settle()
            await self._backend_prompts()
        route = self._routes.get(name)
        if route is None:
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown prompt {name!r}; list them with prompts/list"
            )
        return route

    async def on_get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name == OWN_PROMPT:
            every = (params.arguments or {}).get("all", "").strip().lower() in ("true", "1", "yes")
            index = self.live.snapshot.index
            text = summaries_text(index.summaries(deferred=None if every else True), markdown=True)
            return types.GetPromptResult(
                description="Tools available through toolfind's search (name: summary)",
                messages=[
                    types.PromptMessage(
                        role="user", content=types.TextContent(text=text or "(no tools)")
                    )
                ],
            )
        server, original = await self.route(params.name)
        forwarded: dict[str, Any] = {"name": original}
        if params.arguments is not None:
            forwarded["arguments"] = params.arguments
        raw = await self.gateway.forward(server, "prompts/get", forwarded)
        result = self.gateway.valid(types.GetPromptResult, raw, server)
        if result is None:
            raise MCPError(
                types.INTERNAL_ERROR, f"server {server!r} sent an invalid prompts/get result"
            )
        messages = [  # embedded resources and links named as everywhere else
            m.model_copy(update={"content": self.gateway.exposed_blocks(server, [m.content])[0]})
            for m in result.messages
        ]
        return result.model_copy(update={"messages": messages})
