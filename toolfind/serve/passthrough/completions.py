"""Completions passed through: argument completion for a backend's prompt or resource
template, forwarded to that backend; ``true``/``false`` for toolfind's own prompt."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types

from toolfind.serve.passthrough.common import Gateway, backend_uri
from toolfind.serve.passthrough.prompts import OWN_PROMPT, Prompts

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext


class Completions:
    """``completion/complete``, offered only when serve-mcp has backends."""

    def __init__(self, gateway: Gateway, prompts: Prompts) -> None:
        self.gateway = gateway
        self.prompts = prompts

    def register(self, server: Server[Any]) -> None:
        if self.gateway.active:
            server.add_request_handler(
                "completion/complete", types.CompleteRequestParams, self.on_complete
            )

    async def on_complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        empty = types.CompleteResult(completion=types.Completion(values=[]))
        ref: dict[str, Any]
        if isinstance(params.ref, types.PromptReference):
            if params.ref.name == OWN_PROMPT:
                values = [v for v in ("true", "false") if v.startswith(params.argument.value)]
                return types.CompleteResult(completion=types.Completion(values=values))
            server, original = await self.prompts.route(params.ref.name)
            ref = {"type": "ref/prompt", "name": original}
        else:
            routed = backend_uri(params.ref.uri)
            if routed is None:
                return empty
            server, original = routed
            ref = {"type": "ref/resource", "uri": original}
        if server not in self.gateway.servers_with("completions"):
            return empty
        forwarded: dict[str, Any] = {
            "ref": ref,
            "argument": params.argument.model_dump(by_alias=True, exclude_none=True),
        }
        if params.context is not None:
            forwarded["context"] = params.context.model_dump(by_alias=True, exclude_none=True)
        raw = await self.gateway.forward(server, "completion/complete", forwarded, start=False)
        result = self.gateway.valid(types.CompleteResult, raw, server)
        return result if result is not None else empty
