"""The MCP side of serve-mcp: a low-level SDK `Server` whose tool list follows the index.

Low-level (not MCPServer) because the tool list is data that changes at run time.
``tools/list`` returns the meta-tools (plus, with ``exposure=direct``, every callable
non-deferred tool). Everything a model can fix comes back as ``isError: true`` with a message
that says how, never as a JSON-RPC error.

When the tool list changes, clients of both protocol eras are told (`notifier`).

Instructions: toolfind's own, followed by each connected backend's (under its server name,
cleaned and cut at ``MAX_INSTRUCTIONS`` characters: they go to a model). A client gets them in
its ``initialize`` result, so it sees the instructions of the backends connected by then: the
first ``initialize`` waits for the backends (`Discovery.settle`), as the first lists do; MCP
has no way to update instructions later, so a backend that connects afterwards reaches only
the clients that initialise after it (over HTTP), and its tools still join through
``list_changed``.

First contact: the wait for backends (``--backend-wait``) counts from the first request a
client makes, not from serve-mcp's start, so the time serve-mcp itself takes to start on a busy
machine never eats into it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from toolfind.backends.redact import redact
from toolfind.backends.seam import NOT_STARTED, Backends
from toolfind.backends.tools import needs_task, origin
from toolfind.errors import BackendError
from toolfind.models import Tool
from toolfind.output.encode import dumps
from toolfind.output.text import clean_text, render_path
from toolfind.output.tool_formats import tool_to_format
from toolfind.serve import meta, usage
from toolfind.serve.arguments import ArgumentChecker
from toolfind.serve.guard import Guard
from toolfind.serve.notifier import ChangeNotifier, ToolfindServer
from toolfind.serve.options import ServeOptions, tool_allowed
from toolfind.serve.passthrough.common import CALLER, PROGRESS, page
from toolfind.serve.passthrough.relay import Passthrough
from toolfind.serve.state import LiveIndex, Snapshot
from toolfind.version import __version__

logger = logging.getLogger("toolfind.serve")

#: Seconds past ``call_timeout`` before a backend call is abandoned here: the pool itself
#: times the call out after ``call_timeout``, then may ping (PING_TIMEOUT, 5 s) and restart
#: the backend; this bound only catches a pool that never returns.
POOL_SLACK = 35.0
#: Seconds a call to an unknown name waits for backends that are still starting.
ARRIVAL_WAIT = 10.0
#: Characters of one backend's instructions passed on (each is cut there).
MAX_INSTRUCTIONS = 4000


@dataclass(frozen=True, slots=True)
class Listing:
    """What ``tools/list`` returns for one snapshot, with a key to compare listings by."""

    tools: tuple[types.Tool, ...]
    meta: Mapping[str, meta.MetaTool]
    direct: Mapping[str, Tool]
    key: str
    generation: int


class Discovery:
    """The handlers behind the low-level Server: listing, calls, and change notification."""

    def __init__(self, live: LiveIndex, options: ServeOptions, backends: Backends) -> None:
        self.live = live
        self.options = options
        self.backends = backends
        self.notifier = ChangeNotifier()
        self.passthrough = Passthrough(
            live, self.notifier, backends, options.separator, single_client=options.http is None
        )
        self.checker = ArgumentChecker() if options.validate_arguments else None
        #: How a result names a tool's catalog file: no local path reaches a model.
        self.place = meta.catalog_place(live.catalogs)
        self._listing: Listing | None = None
        #: Until when (``time.monotonic()``) lists, searches and the first initialize wait for
        #: backends connecting for the first time: ``--backend-wait`` from the first request.
        self.first_contact_until: float | None = None
        self._settled = False
        #: The SDK server `build_server` made.
        self.server: ToolfindServer | None = None
        self.passthrough.gateway.settle = self.settle
        live.on_swap(self._swapped)
        #: What serve-mcp learns from use: each search and the call it led to (serve.usage).
        self.usage = usage.recorder(learn=options.signals.learn)

    def listing(self) -> Listing:
        snapshot = self.live.snapshot
        if self._listing is None or self._listing.generation != snapshot.generation:
            self._listing = self._build_listing(snapshot)
        return self._listing

    def _build_listing(self, snapshot: Snapshot) -> Listing:
        index = snapshot.index
        categories = index.categories()
        total = sum(c.tool_count for c in categories)
        metas = meta.meta_tools(
            self.options.meta_prefix,
            [c.name for c in categories],
            total,
            snapshot.backends_connecting,
        )
        by_name = {m.name: m for m in metas}
        listed = [_meta_to_mcp(m) for m in metas]
        direct: dict[str, Tool] = {}
        if self.options.exposure == "direct":
            for tool in index.tools:
                if tool.defer or tool.name in by_name or tool.name in direct:
                    continue
                if tool_allowed(self.options.filters, tool) and self.backends.serves(tool.name):
                    direct[tool.name] = tool
            listed.extend(
                types.Tool.model_validate(tool_to_format(t, "mcp"), by_name=False)
                for t in direct.values()
            )
        key = json.dumps(
            [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed]
        )
        return Listing(tuple(listed), by_name, direct, key, snapshot.generation)

    async def _swapped(self, old: Snapshot, new: Snapshot) -> None:
        if self._listing is not None and self._listing.generation == old.generation:
            before = self._listing.key
        else:
            before = self._build_listing(old).key
        after = self.listing().key
        if before != after:
            logger.info("tool list changed; notifying clients")
            await self.notifier.tools_changed()

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        listing = self.listing()
        if name in listing.meta:
            return listing.meta[name].input_schema
        tool = listing.direct.get(name)
        return tool.parameters if tool is not None else None

    async def on_list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await self.settle()
        tools, cursor = page(self.listing().tools, params.cursor if params else None, "tools")
        self.backends.release()  # the first list is answered: backends may start now
        return types.ListToolsResult(tools=tools, next_cursor=cursor)

    async def settle(self) -> None:
        """First contact: a list or a search (and the first ``initialize``) waits for the
        backends still connecting until each is up or has failed once, or ``--backend-wait``
        (counted from the first request) has passed, whichever comes first; so a host that
        lists once sees every backend that starts in time, and a stuck one costs at most the
        bound. Until then each also takes in the backend changes already announced (the
        rebuild under way). Later requests never wait: they are answered from the index
        there is, and backend changes reach clients with ``list_changed``."""
        if self._settled:
            return
        if self.first_contact_until is None:
            self.first_contact_until = time.monotonic() + self.options.backend_wait
        remaining = self.first_contact_until - time.monotonic()
        if remaining > 0:
            self.backends.release()
            with anyio.move_on_after(remaining):
                await self.backends.wait_settled()
                self._settled = True
        else:
            self._settled = True
        await self.live.catch_up()

    async def _first_contact(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """Server middleware: start the first-contact clock at the first request, and hold a
        first ``initialize`` until the backends are settled, having noted what the host can
        answer (their handshakes declare it); every ``initialize`` answers with the
        instructions of the backends connected by then (a transport may have built its
        answer's options before)."""
        if self.first_contact_until is None:
            self.first_contact_until = time.monotonic() + self.options.backend_wait
        if ctx.method != "initialize":
            return await call_next(ctx)
        if not self._settled and self.passthrough.gateway.active:
            self.passthrough.host.capabilities.saw_initialize(ctx.params)
            await self.settle()
        result = await call_next(ctx)
        if isinstance(result, dict) and self.server is not None:
            result = {k: v for k, v in result.items() if k != "instructions"}
            if self.server.instructions:
                result["instructions"] = self.server.instructions
        return result

    async def on_call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        meta_ = ctx.meta or {}
        wants_progress = "progress_token" in meta_ or "progressToken" in meta_
        PROGRESS.set(self._progress_of(ctx) if wants_progress else None)
        caller = CALLER.get()
        metatool = self.listing().meta.get(params.name)
        forwarded = metatool is None or metatool.key == meta.CALL  # what a backend may ask in
        if caller is not None and caller.modern and self.passthrough.gateway.active and forwarded:
            # A 2026-07-28 client: a backend's requests for input come back as input_required.
            return await self.passthrough.rounds.call(  # type: ignore[return-value]
                caller,
                params.request_state,
                params.input_responses,
                lambda: self._call_result(params.name, params.arguments),
            )
        return await self._call_result(params.name, params.arguments)

    async def _call_result(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        try:
            return await self.call(name, arguments)
        except meta.ToolCallError as exc:  # toolfind's words, maybe quoting a backend's: redacted
            text = redact(str(exc))
            return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)

    def _progress_of(self, ctx: ServerRequestContext[Any, Any]) -> Any:
        """The caller's progress reporter, queued on its request's outbox (a client that does
        not read never holds up the backend's messages)."""
        caller = CALLER.get()

        async def report(progress: float, total: float | None, message: str | None) -> None:
            async def send() -> None:
                await ctx.session.report_progress(progress, total, message)

            if caller is None:
                await send()
            else:
                await caller.outbox.send(send)

        return report

    async def call(self, name: str, arguments: Mapping[str, Any] | None) -> types.CallToolResult:
        """Run a meta-tool or forward a tool. Raises ToolCallError for what a model can fix."""
        listing = self.listing()
        index = self.live.snapshot.index
        metatool = listing.meta.get(name)
        if metatool is None:
            return await self.forward(await self._resolve_call(name), arguments)
        args = meta.checked_arguments(metatool, arguments)
        if metatool.key in (meta.CATEGORIES, meta.SEARCH):
            await self.settle()
            index = self.live.snapshot.index
        if metatool.key == meta.CATEGORIES:
            return record_result(meta.categories(index, self._status()))
        if metatool.key == meta.SEARCH:
            connecting = sum(s.state == "connecting" for s in self.backends.status().values())
            search = partial(meta.search, index, args, self.backends.serves, connecting, self.place)
            record = await self.live.search(index, search)
            if self.usage is not None and (caller := CALLER.get()) is not None:
                self.usage.searched(caller.client, args["query"], record)  # serve.usage
            return record_result(record)
        if metatool.key != meta.CALL:
            return record_result(meta.HANDLERS[metatool.key](index, args))
        target: str = args["name"]
        if target in listing.meta:
            raise meta.ToolCallError(
                f"{target!r} is a meta-tool: call it directly, not through {name}."
            )
        return await self.forward(await self._resolve_call(target), args.get("arguments") or {})

    async def _resolve_call(self, name: str) -> Tool:
        """The tool a call names. A name not found while a backend's first attempt is under
        way waits (up to ARRIVAL_WAIT) for the backends, then looks again: a host may call a
        tool it knows as soon as it has connected. A name that the index resolves to another
        backend tool than the backends' names now route it to (a backend connected and took a
        name, the rebuild is under way) is looked up again once the index has caught up: a
        call never runs a tool other than the one its name means now."""
        serves = self.backends.serves
        try:
            tool = meta.resolve(self.live.snapshot.index, name, serves=serves)
        except meta.ToolCallError:
            arriving = any(s.detail == NOT_STARTED for s in self.backends.status().values())
            if not arriving:
                raise
            self.backends.release()
            with anyio.move_on_after(ARRIVAL_WAIT):
                await self.backends.wait_settled()
            await self.live.catch_up()
            return meta.resolve(self.live.snapshot.index, name, serves=serves)
        made = origin(tool)
        if made is None or self.backends.route(tool.name) in (None, made):
            return tool
        await self.live.catch_up()
        tool = meta.resolve(self.live.snapshot.index, name, serves=serves)
        made = origin(tool)
        if made is not None and self.backends.route(tool.name) not in (None, made):
            raise meta.ToolCallError(
                f"The tools of server {made[0]!r} are changing; "
                f"search again ({self.options.meta_prefix}{meta.SEARCH}) and call the name "
                "it gives."
            )
        return tool

    def _status(self) -> dict[str, Any]:
        """The backends' status by the namespace of their tools (see `LiveIndex._apart`)."""
        return {self.live.namespace_of(n): s for n, s in self.backends.status().items()}

    async def forward(
        self, tool: Tool, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        """Call ``tool`` through its backend, on the caller's session there, within the call
        timeout. A JSON-RPC error the backend answers passes on whole (`passed_on`)."""
        if not tool_allowed(self.options.filters, tool):  # the index holds none; kept as a guard
            raise meta.ToolCallError(f"No tool named {tool.name!r}.")
        route = self.backends.route(tool.name)
        if route is None:
            raise meta.ToolCallError(self._catalog_only(tool))
        if needs_task(tool):
            raise meta.ToolCallError(
                f"{tool.name!r} runs only as an MCP task (its execution.taskSupport is "
                "'required'), and toolfind does not relay tasks: call it from a host connected "
                f"to server {route[0]!r} directly."
            )
        if self.usage is not None and (caller := CALLER.get()) is not None:
            await self.usage.called(caller.client, tool)  # a call of a tool a search returned
        if self.checker is not None:
            problem = await self.checker.check(tool, arguments or {})
            if problem is not None:
                raise meta.ToolCallError(
                    f"Invalid arguments for {tool.name!r} at {problem}. Fix them to match its "
                    f"input schema ({self.options.meta_prefix}{meta.GET} shows it); "
                    "nothing was sent to the tool."
                )
        timeout = self.options.call_timeout
        gateway = self.passthrough.gateway
        lane = gateway.lane(route[0])
        try:
            with anyio.fail_after(timeout + POOL_SLACK), gateway.calling(route[0], lane):
                result = await self.backends.call(
                    tool.name, dict(arguments or {}), PROGRESS.get(), lane=lane
                )
        except TimeoutError:
            raise meta.ToolCallError(
                f"{tool.qualified_name!r} did not answer within {timeout:g} s; try again later."
            ) from None
        except BackendError as exc:
            raise meta.ToolCallError(f"{tool.name!r} failed: {exc}") from None
        except MCPError as exc:
            raise self.passthrough.passed_on(route[0], lane, exc) from None
        return self.passthrough.exposed_result(route[0], result)  # the server, not the namespace

    def _catalog_only(self, tool: Tool) -> str:
        where = (
            "" if tool.source is None else f" (from {render_path(self.place(tool.source.file))})"
        )
        index = self.live.snapshot.index
        close = meta.callable_suggestions(index, tool.name, self.backends.serves)
        hint = (
            f" Did you mean {close[0]!r}?"
            if close
            else " Pick a tool served by a connected MCP server."
        )
        return (
            f"No backend serves {tool.qualified_name!r}{where}: it is in a catalog only, so "
            f"toolfind can find and describe it but not run it.{hint}"
        )

    def build_server(self) -> ToolfindServer:
        server = ToolfindServer(
            self.options.server_name,
            version=__version__,
            title="toolfind",
            instructions=(
                f"Use {self.options.meta_prefix}{meta.SEARCH} to find the right tool for a task, "
                f"then {self.options.meta_prefix}{meta.CALL} to run it."
            ),
            get_tool_input_schema=self.input_schema,
            on_list_tools=self.on_list_tools,
            on_call_tool=self.on_call_tool,
            lifespan=self._lifespan,
        )
        server.backend_instructions = self.backend_instructions
        self.passthrough.register(server)
        server.add_request_handler(
            "subscriptions/listen",
            types.SubscriptionsListenRequestParams,
            self.passthrough.listen_handler(self.notifier.listen_handler),
        )
        server.middleware.append(self.notifier)
        server.middleware.insert(0, self._first_contact)
        self.server = server
        server.middleware.insert(0, Guard())  # outermost: it sees every answer and error
        return server

    @asynccontextmanager
    async def _lifespan(self, server: Any) -> AsyncIterator[dict[str, Any]]:
        """While the server runs: the task group of the clients' outboxes and of 2026-07-28
        clients' tool calls."""
        async with self.notifier.outboxes.running():
            yield {}

    def backend_instructions(self) -> str:
        """The connected backends' instructions, each under its server name (see above)."""
        texts = self.backends.instructions()
        parts = [
            f"## {name} (its tools: {name}{self.options.separator}<tool>)\n"
            + clean_text(text.strip(), MAX_INSTRUCTIONS)
            for name, text in texts.items()
            if isinstance(text, str) and text.strip()
        ]
        if not parts:
            return ""
        return "\n\nInstructions of the MCP servers behind toolfind:\n\n" + "\n\n".join(parts)


def record_result(record: Mapping[str, Any]) -> types.CallToolResult:
    """A meta-tool's record as structured content plus the same JSON as text."""
    text = dumps(record, compact=True)
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=dict(record), is_error=False
    )


def _meta_to_mcp(tool: meta.MetaTool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=dict(tool.input_schema),
        output_schema=None if tool.output_schema is None else dict(tool.output_schema),
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=tool.read_only,
            idempotent_hint=tool.read_only,
            open_world_hint=not tool.read_only,
        ),
    )
