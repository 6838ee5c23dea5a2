"""What backends offer besides tools, passed through: resources, prompts, completions and log
messages, with their change notifications; toolfind's own deferred-summaries prompt and
resource; opaque list cursors.

Names, chosen so that each exposed name leads back to exactly one backend:

- a prompt is ``<server><separator><prompt>``, made valid for hosts by the same
  `backend_tools.assign_names` as tools (``time__convert``);
- a resource URI is ``toolfind://<server>/<the backend's URI, verbatim>``. The backend's URI
  is kept byte for byte after the prefix, so it round-trips without any table or escaping: a
  resource template's variables expand exactly as they would at the backend, and a URI read
  that was never listed (one built from a template) still routes. Server names are made of
  ``[A-Za-z0-9_-]``, valid in a URI's authority. toolfind's own resources have no authority
  (``toolfind:deferred-tools``), so they never meet a server's name.

Progress: the caller's ``progressToken`` on a forwarded tool call becomes a progress callback
on the backend request (`PROGRESS`), so the backend's progress notifications reach the caller.

Logging: ``logging/setLevel`` sets the level per client connection (``warning`` until a client
sets one) and is forwarded to the backends that declare logging; a backend's
``notifications/message`` reaches each handshake-era client whose level it meets, with
``logger`` set to ``<server>`` or ``<server>/<its logger>``. (2026-07-28 removed
connection-wide logging: those clients opt in per request, which forwarded calls do not relay.)
"""

from __future__ import annotations

import base64
import logging
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.subscriptions import PromptsListChanged, ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from toolfind.errors import BackendError
from toolfind.output.tool_formats import summaries_text
from toolfind.output.wire import clean_text
from toolfind.serve.backends.tools import MAX_DESCRIPTION, assign_names
from toolfind.serve.state import LiveIndex, Snapshot

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from toolfind.serve.server import ChangeNotifier, ToolfindServer

__all__ = [
    "OWN_PROMPT",
    "OWN_URI",
    "PAGE_SIZE",
    "PROGRESS",
    "Passthrough",
    "backend_uri",
    "exposed_uri",
    "page",
]

logger = logging.getLogger("toolfind.serve")

#: Items per page of every list toolfind answers (tools, resources, templates, prompts).
PAGE_SIZE = 100
#: toolfind's own prompt and resource: the deferred tools' one-line summaries.
OWN_PROMPT = "deferred_tool_summaries"
OWN_URI = "toolfind:deferred-tools"
URI_PREFIX = "toolfind://"
#: Until a client sends logging/setLevel, backend log messages from this level up reach it.
DEFAULT_LOG_LEVEL = "warning"
#: How long one backend may take to answer a list request made for a client's list.
LIST_TIMEOUT = 10.0
RESOURCE_NOT_FOUND = -32002

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

ProgressFn = Callable[[float, "float | None", "str | None"], Awaitable[None]]
#: The current tools/call's progress reporter, set only when the caller sent a progressToken.
PROGRESS: ContextVar[ProgressFn | None] = ContextVar("toolfind_progress", default=None)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@runtime_checkable
class Upstream(Protocol):
    """The backend pool as seen from here (`backends.BackendPool` fills it)."""

    def capabilities(self) -> Mapping[str, Any]: ...

    async def request(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None,
        on_progress: Any = None,
    ) -> dict[str, Any]: ...

    def set_relay(self, relay: Callable[[str, Any], Awaitable[None]]) -> None: ...

    def status(self) -> Mapping[str, Any]: ...


# -- cursors and names -------------------------------------------------------------------------


def page(items: Sequence[T], cursor: str | None, kind: str) -> tuple[list[T], str | None]:
    """One page of ``items`` from an opaque cursor, and the next page's cursor (None at the end).

    Raises:
        MCPError: -32602 for a cursor this server did not give out for ``kind``.
    """
    start = 0
    if cursor is not None:
        try:
            text = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
            label, _, offset = text.partition(":")
            start = int(offset)
        except (ValueError, UnicodeError):
            label, start = "", -1
        if label != kind or not 0 < start <= len(items) or not offset.isdigit():
            raise MCPError(types.INVALID_PARAMS, f"Invalid cursor for {kind}/list: {cursor!r}")
    end = start + PAGE_SIZE
    following = None
    if end < len(items):
        following = base64.urlsafe_b64encode(f"{kind}:{end}".encode("ascii")).decode("ascii")
    return list(items[start:end]), following


def exposed_uri(server: str, uri: str) -> str:
    """The URI (or URI template) a client sees for ``uri`` of backend ``server``."""
    return f"{URI_PREFIX}{server}/{uri}"


def backend_uri(uri: str) -> tuple[str, str] | None:
    """(server, the backend's URI) behind an exposed URI, or None when it is not one."""
    if not uri.startswith(URI_PREFIX):
        return None
    server, slash, original = uri[len(URI_PREFIX) :].partition("/")
    if not server or not slash or not original:
        return None
    return server, original


def _level_at_least(level: str, floor: str) -> bool:
    return LEVELS.index(level) >= LEVELS.index(floor) if level in LEVELS else True


def _cleaned(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A backend's list entry with its free text made safe like a tool description."""
    out = dict(entry)
    for key, limit in (("description", MAX_DESCRIPTION), ("title", 200)):
        if isinstance(out.get(key), str):
            out[key] = clean_text(out[key], limit)
    return out


def _connection(ctx: ServerRequestContext[Any, Any]) -> Connection | None:
    # SDK 2.3 gives handlers no public handle on their Connection (see server.ChangeNotifier).
    connection = getattr(ctx.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None


# -- the handlers ------------------------------------------------------------------------------


async def _nothing() -> None:
    return None


class Passthrough:
    """The resource, prompt, completion and logging handlers, and the backends' relay."""

    def __init__(
        self,
        live: LiveIndex,
        notifier: ChangeNotifier,
        backends: object,
        separator: str = "__",
    ) -> None:
        self.live = live
        self.notifier = notifier
        self.upstream = backends if isinstance(backends, Upstream) else None
        self.separator = separator
        self._levels: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()
        self._subscribers: dict[str, weakref.WeakSet[Connection]] = {}
        self._backend_refs: Counter[str] = Counter()
        self._prompt_routes: dict[str, tuple[str, str]] = {}
        #: Awaited before a list (serve-mcp's --backend-wait; set by `server.Discovery`).
        self.settle: Callable[[], Awaitable[None]] = _nothing
        if self.upstream is not None:
            self.upstream.set_relay(self.relay)
        live.on_swap(self._swapped)

    def register(self, server: ToolfindServer) -> None:
        """Add the handlers (and so the capabilities) this server really has."""
        server.add_request_handler(
            "resources/list", types.PaginatedRequestParams, self.on_list_resources
        )
        server.add_request_handler(
            "resources/templates/list", types.PaginatedRequestParams, self.on_list_templates
        )
        server.add_request_handler(
            "resources/read", types.ReadResourceRequestParams, self.on_read_resource
        )
        server.add_request_handler(
            "resources/subscribe", types.SubscribeRequestParams, self.on_subscribe
        )
        server.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, self.on_unsubscribe
        )
        server.add_request_handler(
            "prompts/list", types.PaginatedRequestParams, self.on_list_prompts
        )
        server.add_request_handler("prompts/get", types.GetPromptRequestParams, self.on_get_prompt)
        server.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self.on_set_level
        )
        if self.upstream is not None:
            server.add_request_handler(
                "completion/complete", types.CompleteRequestParams, self.on_complete
            )

    # -- gathering from backends ---------------------------------------------------------------

    def _servers_with(self, capability: str) -> list[str]:
        if self.upstream is None:
            return []
        return [
            name
            for name, caps in self.upstream.capabilities().items()
            if getattr(caps, capability, None) is not None
        ]

    async def _gather(self, capability: str, method: str, key: str) -> list[tuple[str, Any]]:
        """Every entry of ``method`` from every connected backend declaring ``capability``, all
        pages, in server order; a backend that fails or is slow is left out (logged)."""
        servers = self._servers_with(capability)
        found: dict[str, list[Any]] = {}

        async def one(server: str) -> None:
            assert self.upstream is not None
            entries: list[Any] = []
            cursor: Any = None
            seen: set[str] = set()
            try:
                with anyio.fail_after(LIST_TIMEOUT):
                    for _ in range(100):
                        raw = await self.upstream.request(
                            server, method, {"cursor": cursor} if cursor else None
                        )
                        batch = raw.get(key)
                        if isinstance(batch, list):
                            entries.extend(batch)
                        cursor = raw.get("nextCursor")
                        if not isinstance(cursor, str) or cursor in seen:
                            break
                        seen.add(cursor)
            except (BackendError, MCPError, TimeoutError) as exc:
                logger.warning("server %r: %s failed: %s", server, method, exc)
            found[server] = entries

        async with anyio.create_task_group() as tg:
            for server in servers:
                tg.start_soon(one, server)
        return [(server, entry) for server in servers for entry in found[server]]

    async def _forward(self, server: str, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        assert self.upstream is not None
        try:
            return await self.upstream.request(server, method, params, PROGRESS.get())
        except BackendError as exc:
            raise MCPError(types.INTERNAL_ERROR, str(exc)) from None

    @staticmethod
    def _valid(model: type[M], entry: Any, server: str) -> M | None:
        try:
            return model.model_validate(entry, by_name=False)
        except ValidationError:
            logger.warning("server %r: dropped a malformed %s", server, model.__name__)
            return None

    # -- resources -----------------------------------------------------------------------------

    def _own_resource(self) -> types.Resource:
        count = len(self.live.snapshot.index.summaries(deferred=True))
        return types.Resource(
            uri=OWN_URI,
            name="deferred-tools",
            title="Deferred tools",
            description=(
                f"One line per deferred tool ({count}): name and summary, for a system prompt. "
                "Search for a tool to get its full definition."
            ),
            mime_type="text/markdown",
        )

    async def on_list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        await self.settle()
        listed = [self._own_resource()]
        for server, entry in await self._gather("resources", "resources/list", "resources"):
            if isinstance(entry, dict) and isinstance(entry.get("uri"), str):
                entry = _cleaned(entry) | {"uri": exposed_uri(server, entry["uri"])}
            resource = self._valid(types.Resource, entry, server)
            if resource is not None:
                listed.append(resource)
        items, cursor = page(listed, params.cursor if params else None, "resources")
        return types.ListResourcesResult(resources=items, next_cursor=cursor)

    async def on_list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        await self.settle()
        listed: list[types.ResourceTemplate] = []
        gathered = await self._gather("resources", "resources/templates/list", "resourceTemplates")
        for server, entry in gathered:
            if isinstance(entry, dict) and isinstance(entry.get("uriTemplate"), str):
                entry = _cleaned(entry) | {"uriTemplate": exposed_uri(server, entry["uriTemplate"])}
            template = self._valid(types.ResourceTemplate, entry, server)
            if template is not None:
                listed.append(template)
        items, cursor = page(listed, params.cursor if params else None, "resourceTemplates")
        return types.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)

    def _connecting(self) -> set[str]:
        """Backends whose first connection is still under way: what they offer is not known
        yet, and a request routed to one waits for it (`BackendPool.request`)."""
        if self.upstream is None:
            return set()
        return {n for n, s in self.upstream.status().items() if s.state == "connecting"}

    def _route_uri(self, uri: str) -> tuple[str, str]:
        routed = backend_uri(uri)
        if routed is None or (
            routed[0] not in self._servers_with("resources") and routed[0] not in self._connecting()
        ):
            raise MCPError(
                RESOURCE_NOT_FOUND,
                f"Resource not found: {uri!r} (toolfind serves {OWN_URI} and backend resources "
                f"as {URI_PREFIX}<server>/<uri>; list them with resources/list)",
                {"uri": uri},
            )
        return routed

    async def on_read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri == OWN_URI:
            text = summaries_text(self.live.snapshot.index.summaries(deferred=True), markdown=True)
            return types.ReadResourceResult(
                contents=[
                    types.TextResourceContents(uri=OWN_URI, mime_type="text/markdown", text=text)
                ]
            )
        server, original = self._route_uri(params.uri)
        raw = await self._forward(server, "resources/read", {"uri": original})
        contents = raw.get("contents")
        if isinstance(contents, list):
            raw["contents"] = [
                item | {"uri": exposed_uri(server, item["uri"])}
                if isinstance(item, dict) and isinstance(item.get("uri"), str)
                else item
                for item in contents
            ]
        result = self._valid(types.ReadResourceResult, raw, server)
        if result is None:
            raise MCPError(
                types.INTERNAL_ERROR, f"server {server!r} sent an invalid resources/read result"
            )
        return result

    async def on_subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        connection = _connection(ctx)
        subscribers = self._subscribers.setdefault(params.uri, weakref.WeakSet())
        if connection is not None and connection not in subscribers:
            await self._acquire(params.uri)
            subscribers.add(connection)
            connection.exit_stack.push_async_callback(self._drop, params.uri, connection)
        return types.EmptyResult()

    async def on_unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        connection = _connection(ctx)
        if connection is not None:
            await self._drop(params.uri, connection)
        return types.EmptyResult()

    async def _drop(self, uri: str, connection: Connection) -> None:
        subscribers = self._subscribers.get(uri)
        if subscribers is not None and connection in subscribers:
            subscribers.discard(connection)
            await self._release(uri)

    async def _acquire(self, uri: str) -> None:
        """Count one more subscriber of ``uri``; the first subscribes at its backend."""
        if uri == OWN_URI:
            return
        server, original = self._route_uri(uri)
        caps = self.upstream.capabilities().get(server) if self.upstream else None
        if not getattr(getattr(caps, "resources", None), "subscribe", False):
            raise MCPError(
                types.INVALID_PARAMS, f"server {server!r} does not support resource subscriptions"
            )
        if self._backend_refs[uri] == 0:
            await self._forward(server, "resources/subscribe", {"uri": original})
        self._backend_refs[uri] += 1

    async def _release(self, uri: str) -> None:
        if uri == OWN_URI or self._backend_refs[uri] <= 0:
            return
        self._backend_refs[uri] -= 1
        routed = backend_uri(uri)
        if self._backend_refs[uri] == 0 and routed is not None:
            del self._backend_refs[uri]
            try:
                await self._forward(routed[0], "resources/unsubscribe", {"uri": routed[1]})
            except MCPError as exc:  # the backend may be gone: nothing left to undo
                logger.debug("server %r: resources/unsubscribe failed: %s", routed[0], exc)

    def listen_handler(
        self, inner: Callable[[Any, types.SubscriptionsListenRequestParams], Awaitable[Any]]
    ) -> Callable[[Any, types.SubscriptionsListenRequestParams], Awaitable[Any]]:
        """``subscriptions/listen`` (2026-07-28) with the backend resources it names subscribed
        at their backends for as long as the stream lasts."""

        async def listen(ctx: Any, params: types.SubscriptionsListenRequestParams) -> Any:
            held: list[str] = []
            try:
                for uri in params.notifications.resource_subscriptions or ():
                    try:
                        await self._acquire(uri)
                    except MCPError as exc:
                        logger.info("listen: %s", exc.message)
                        continue
                    held.append(uri)
                return await inner(ctx, params)
            finally:
                with anyio.CancelScope(shield=True):
                    for uri in held:
                        await self._release(uri)

        return listen

    async def _updated(self, uri: str) -> None:
        await self.notifier.publish(ResourceUpdated(uri=uri))
        for connection in list(self._subscribers.get(uri, ())):
            await connection.send_resource_updated(uri)

    async def _swapped(self, old: Snapshot, new: Snapshot) -> None:
        def lines(snapshot: Snapshot) -> list[tuple[str, str]]:
            return [(t.name, t.summary) for t in snapshot.index.summaries(deferred=True)]

        if lines(old) != lines(new):
            await self._updated(OWN_URI)

    def exposed(self, server: str, blocks: Sequence[Any]) -> list[Any]:
        """Content blocks (a tool's result, a prompt's messages' content) with their resource
        links and embedded resources named by exposed URIs, when ``server`` serves resources,
        so that a client can read them through toolfind."""
        if server not in self._servers_with("resources"):
            return list(blocks)
        out: list[Any] = []
        for block in blocks:
            if isinstance(block, types.ResourceLink):
                block = block.model_copy(update={"uri": exposed_uri(server, block.uri)})
            elif isinstance(block, types.EmbeddedResource):
                inner = block.resource.model_copy(
                    update={"uri": exposed_uri(server, block.resource.uri)}
                )
                block = block.model_copy(update={"resource": inner})
            out.append(block)
        return out

    def exposed_result(self, server: str, result: types.CallToolResult) -> types.CallToolResult:
        """A forwarded tool's result, its resource links readable through toolfind."""
        linked = (types.ResourceLink, types.EmbeddedResource)
        if not any(isinstance(block, linked) for block in result.content):
            return result
        return result.model_copy(update={"content": self.exposed(server, result.content)})

    # -- prompts -------------------------------------------------------------------------------

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
        gathered = await self._gather("prompts", "prompts/list", "prompts")
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
            prompt = self._valid(types.Prompt, _cleaned(entry) | {"name": exposed}, server)
            if prompt is not None and exposed not in routes:
                routes[exposed] = (server, entry["name"])
                listed.append(prompt)
        self._prompt_routes = routes
        return listed

    async def on_list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        await self.settle()
        listed = [self._own_prompt(), *await self._backend_prompts()]
        items, cursor = page(listed, params.cursor if params else None, "prompts")
        return types.ListPromptsResult(prompts=items, next_cursor=cursor)

    async def _prompt_route(self, name: str) -> tuple[str, str]:
        if name not in self._prompt_routes:
            await self.settle()
            await self._backend_prompts()
        route = self._prompt_routes.get(name)
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
        server, original = await self._prompt_route(params.name)
        forwarded: dict[str, Any] = {"name": original}
        if params.arguments is not None:
            forwarded["arguments"] = params.arguments
        raw = await self._forward(server, "prompts/get", forwarded)
        result = self._valid(types.GetPromptResult, raw, server)
        if result is None:
            raise MCPError(
                types.INTERNAL_ERROR, f"server {server!r} sent an invalid prompts/get result"
            )
        return result

    # -- completions ---------------------------------------------------------------------------

    async def on_complete(
        self, ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        empty = types.CompleteResult(completion=types.Completion(values=[]))
        ref: dict[str, Any]
        if isinstance(params.ref, types.PromptReference):
            if params.ref.name == OWN_PROMPT:
                values = [v for v in ("true", "false") if v.startswith(params.argument.value)]
                return types.CompleteResult(completion=types.Completion(values=values))
            server, original = await self._prompt_route(params.ref.name)
            ref = {"type": "ref/prompt", "name": original}
        else:
            routed = backend_uri(params.ref.uri)
            if routed is None:
                return empty
            server, original = routed
            ref = {"type": "ref/resource", "uri": original}
        if server not in self._servers_with("completions"):
            return empty
        forwarded: dict[str, Any] = {
            "ref": ref,
            "argument": params.argument.model_dump(by_alias=True, exclude_none=True),
        }
        if params.context is not None:
            forwarded["context"] = params.context.model_dump(by_alias=True, exclude_none=True)
        raw = await self._forward(server, "completion/complete", forwarded)
        result = self._valid(types.CompleteResult, raw, server)
        return result if result is not None else empty

    # -- logging -------------------------------------------------------------------------------

    async def on_set_level(
        self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        connection = _connection(ctx)
        if connection is not None:
            self._levels[connection] = params.level
        await self._backend_levels()
        return types.EmptyResult()

    def _lowest_level(self) -> str:
        levels = [self._levels.get(c, DEFAULT_LOG_LEVEL) for c in self.notifier.connections()]
        return min(levels or [DEFAULT_LOG_LEVEL], key=LEVELS.index)

    async def _backend_levels(self, servers: Sequence[str] | None = None) -> None:
        """Ask backends that log for what the most verbose client wants."""
        level = self._lowest_level()
        for server in self._servers_with("logging") if servers is None else servers:
            try:
                await self._forward(server, "logging/setLevel", {"level": level})
            except MCPError as exc:
                logger.debug("server %r: logging/setLevel failed: %s", server, exc)

    async def _log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        name = server if not params.logger else f"{server}/{params.logger}"
        payload = {"level": params.level, "logger": name, "data": params.data}
        for connection in self.notifier.connections():
            if _level_at_least(params.level, self._levels.get(connection, DEFAULT_LOG_LEVEL)):
                await connection.notify("notifications/message", payload)

    # -- the relay -----------------------------------------------------------------------------

    async def relay(self, server: str, message: Any) -> None:
        """A backend's notification (None: it just connected) passed on to the clients."""
        if message is None:
            caps = self.upstream.capabilities().get(server) if self.upstream else None
            if getattr(caps, "resources", None) is not None:
                await self.notifier.changed(
                    ResourcesListChanged(), "notifications/resources/list_changed"
                )
            if getattr(caps, "prompts", None) is not None:
                await self.notifier.changed(
                    PromptsListChanged(), "notifications/prompts/list_changed"
                )
            if getattr(caps, "logging", None) is not None and self._levels:
                await self._backend_levels([server])
        elif isinstance(message, types.ResourceListChangedNotification):
            await self.notifier.changed(
                ResourcesListChanged(), "notifications/resources/list_changed"
            )
        elif isinstance(message, types.PromptListChangedNotification):
            await self.notifier.changed(PromptsListChanged(), "notifications/prompts/list_changed")
        elif isinstance(message, types.ResourceUpdatedNotification):
            await self._updated(exposed_uri(server, message.params.uri))
        elif isinstance(message, types.LoggingMessageNotification):
            await self._log(server, message.params)
