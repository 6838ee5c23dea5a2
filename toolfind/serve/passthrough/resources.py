"""Resources passed through: every backend's, named by exposed URIs (`common.exposed_uri`),
read, subscribed to and updated through toolfind; plus toolfind's own deferred-tools resource.

A subscription is made on the session the client's requests go to (`common.Gateway.lane`):
over HTTP its own, so its updates reach it alone, whatever another client subscribes, toggles
or unsubscribes; at a shared session it is counted per URI: the first client subscribes at
the backend, the last one to leave (or close its connection) unsubscribes there. When a
session connects again (a restart), every URI of it that its clients still hold is subscribed
again and they are told it may have changed. What is held is bounded: a URI longer than
`MAX_URI` is refused, a client holds at most `MAX_SUBSCRIPTIONS`, and a refused subscription
leaves nothing behind. A forwarded tool's result and a prompt's messages name resources by
exposed URIs too (`common.Gateway.exposed_blocks`), so a client can read what they link.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.shared.exceptions import MCPError

from toolfind.backends.seam import Lane
from toolfind.output.tool_formats import NO_DEFERRED, summaries_text
from toolfind.serve.notifier import ChangeNotifier, connection_of
from toolfind.serve.passthrough.common import (
    URI_PREFIX,
    Gateway,
    backend_uri,
    cleaned,
    exposed_uri,
    page,
)
from toolfind.serve.state import LiveIndex, Snapshot

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext

logger = logging.getLogger("toolfind.serve")
_Listed = TypeVar("_Listed", types.Resource, types.ResourceTemplate)

#: toolfind's own resource: the deferred tools' one-line summaries.
OWN_URI = "toolfind:deferred-tools"
RESOURCE_NOT_FOUND = -32002
#: A longer URI is refused before anything else (never kept, never echoed whole).
MAX_URI = 16 * 1024
#: Resources one client may be subscribed to at once.
MAX_SUBSCRIPTIONS = 1000


class Resources:
    """The ``resources/*`` handlers, subscriptions, and exposed URIs in content blocks."""

    def __init__(self, live: LiveIndex, notifier: ChangeNotifier, gateway: Gateway) -> None:
        self.live = live
        self.notifier = notifier
        self.gateway = gateway
        #: URI -> each subscribed connection and the session (lane) it subscribed on.
        self._subscribers: dict[str, dict[Connection, Lane]] = {}
        #: Each subscribed connection's URIs (emptied when it closes).
        self._held: dict[Connection, set[str]] = {}
        #: Subscriptions held at the shared sessions, by URI (2026-07-28 listeners included).
        self._backend_refs: Counter[str] = Counter()
        live.on_swap(self._swapped)

    def register(self, server: Server[Any]) -> None:
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

    async def list_changed(self, lane: Lane = None) -> None:
        """The list changed: for every client, or only for the client of ``lane`` (what its
        own session lists)."""
        await self.notifier.changed(
            ResourcesListChanged(), "notifications/resources/list_changed", lane
        )

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
        listed = await self._listed("resources/list", "resources", "uri", types.Resource)
        items, cursor = page(
            [self._own_resource(), *listed], params.cursor if params else None, "resources"
        )
        return types.ListResourcesResult(resources=items, next_cursor=cursor)

    async def on_list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        listed = await self._listed(
            "resources/templates/list", "resourceTemplates", "uriTemplate", types.ResourceTemplate
        )
        items, cursor = page(listed, params.cursor if params else None, "resourceTemplates")
        return types.ListResourceTemplatesResult(resource_templates=items, next_cursor=cursor)

    async def _listed(
        self, method: str, field: str, key: str, kind: type[_Listed]
    ) -> list[_Listed]:
        """Every backend's ``field`` entries of ``method`` (once the first contact settled),
        cleaned, their ``key`` (a URI or URI template) exposed under the backend's name, those
        that are not a valid ``kind`` left out (said once)."""
        await self.gateway.settle()
        listed: list[_Listed] = []
        for server, entry in await self.gateway.gather("resources", method, field):
            if isinstance(entry, dict) and isinstance(entry.get(key), str):
                entry = cleaned(entry) | {key: exposed_uri(server, entry[key])}
            item = self.gateway.valid(kind, entry, server)
            if item is not None:
                listed.append(item)
        return listed

    def _route_uri(self, uri: str) -> tuple[str, str]:
        _check_length(uri)
        routed = backend_uri(uri)
        if routed is None or (
            routed[0] not in self.gateway.servers_with("resources")
            and routed[0] not in self.gateway.connecting()
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
            deferred = self.live.snapshot.index.summaries(deferred=True)
            text = summaries_text(deferred, markdown=True) if deferred else NO_DEFERRED + "\n"
            return types.ReadResourceResult(
                contents=[
                    types.TextResourceContents(uri=OWN_URI, mime_type="text/markdown", text=text)
                ]
            )
        server, original = self._route_uri(params.uri)
        raw = await self.gateway.forward(server, "resources/read", {"uri": original})
        contents = raw.get("contents")
        if isinstance(contents, list):
            raw["contents"] = [
                item | {"uri": exposed_uri(server, item["uri"])}
                if isinstance(item, dict) and isinstance(item.get("uri"), str)
                else item
                for item in contents
            ]
        result = self.gateway.valid(types.ReadResourceResult, raw, server)
        if result is None:
            raise MCPError(
                types.INTERNAL_ERROR, f"server {server!r} sent an invalid resources/read result"
            )
        return result

    async def on_subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        connection = connection_of(ctx)
        _check_length(params.uri)
        if connection is None or connection in self._subscribers.get(params.uri, {}):
            return types.EmptyResult()
        held = self._held.get(connection)
        if held is not None and len(held) >= MAX_SUBSCRIPTIONS:
            raise MCPError(
                types.INVALID_PARAMS,
                f"toolfind holds at most {MAX_SUBSCRIPTIONS} resource subscriptions per client: "
                "unsubscribe from some first",
            )
        lane = None if params.uri == OWN_URI else await self._acquire(params.uri)
        if held is None:
            held = self._held[connection] = set()
            connection.exit_stack.push_async_callback(self._leave, connection)
        held.add(params.uri)
        self._subscribers.setdefault(params.uri, {})[connection] = lane
        return types.EmptyResult()

    async def on_unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        connection = connection_of(ctx)
        if connection is not None:
            await self._drop(params.uri, connection)
        return types.EmptyResult()

    async def _leave(self, connection: Connection) -> None:
        """A connection closed: drop each of its subscriptions."""
        for uri in list(self._held.get(connection, ())):
            await self._drop(uri, connection)
        self._held.pop(connection, None)

    async def _drop(self, uri: str, connection: Connection) -> None:
        subscribers = self._subscribers.get(uri)
        if subscribers is None or connection not in subscribers:
            return
        lane = subscribers.pop(connection)
        if not subscribers:
            del self._subscribers[uri]
        self._held.get(connection, set()).discard(uri)
        if uri != OWN_URI:
            await self._release(uri, lane)

    async def _acquire(self, uri: str) -> Lane:
        """Subscribe at ``uri``'s backend, on the session the current request goes to (the
        first subscriber only, at a shared session); returns that session's lane."""
        server, original = self._route_uri(uri)
        caps = self.gateway.capabilities_of(server)
        if caps is None and server in self.gateway.connecting():
            await self.gateway.settle()  # what it supports is known once it is up
            caps = self.gateway.capabilities_of(server)
        # Still down (caps None): forwarding starts it, or says why it is unavailable.
        if caps is not None and not getattr(caps.resources, "subscribe", False):
            raise MCPError(
                types.INVALID_PARAMS, f"server {server!r} does not support resource subscriptions"
            )
        lane = self.gateway.lane(server)
        if lane is not None or self._backend_refs[uri] == 0:
            await self.gateway.forward_on(server, lane, "resources/subscribe", {"uri": original})
        if lane is None:
            self._backend_refs[uri] += 1
        return lane

    async def _release(self, uri: str, lane: Lane) -> None:
        routed = backend_uri(uri)
        if routed is None:
            return
        if lane is None:
            if self._backend_refs[uri] <= 0:
                return
            self._backend_refs[uri] -= 1
            if self._backend_refs[uri] > 0:
                return
            del self._backend_refs[uri]
        elif routed[0] not in self.gateway.upstream.sessions_of(lane):
            return  # its session is gone: nothing left to undo
        try:
            params = {"uri": routed[1]}
            await self.gateway.forward_on(routed[0], lane, "resources/unsubscribe", params)
        except MCPError as exc:  # the backend may be gone: nothing left to undo
            logger.debug("server %r: resources/unsubscribe failed: %s", routed[0], exc)

    def listen_handler(
        self, inner: Callable[[Any, types.SubscriptionsListenRequestParams], Awaitable[Any]]
    ) -> Callable[[Any, types.SubscriptionsListenRequestParams], Awaitable[Any]]:
        """``subscriptions/listen`` (2026-07-28) with the backend resources it names subscribed
        at their backends for as long as the stream lasts."""

        async def listen(ctx: Any, params: types.SubscriptionsListenRequestParams) -> Any:
            held: list[tuple[str, Lane]] = []
            try:
                for uri in params.notifications.resource_subscriptions or ():
                    try:
                        held.append((uri, await self._acquire(uri)))
                    except MCPError as exc:
                        logger.info("listen: %s", exc.message[:200])
                        continue
                return await inner(ctx, params)
            finally:
                with anyio.CancelScope(shield=True):
                    for uri, lane in held:
                        await self._release(uri, lane)

        return listen

    async def reconnected(self, server: str, lane: Lane) -> None:
        """A session of backend ``server`` connected (again): subscribe it to every URI of
        ``server`` its clients hold there, and tell them it may have changed (a restarted
        backend starts afresh). A URI it refuses now is logged; its subscribers keep their
        subscription here and can subscribe again later."""
        if isinstance(lane, Connection):
            held = sorted(self._held.get(lane, ()))
        else:
            held = [uri for uri, count in self._backend_refs.items() if count > 0]
        for uri in held:
            routed = backend_uri(uri)
            if routed is None or routed[0] != server:
                continue
            try:
                params = {"uri": routed[1]}
                await self.gateway.forward_on(server, lane, "resources/subscribe", params)
            except MCPError as exc:
                logger.warning(
                    "server %r: could not subscribe again to %r after it reconnected: %s",
                    server,
                    routed[1],
                    exc.message,
                )
                continue
            await self.updated(uri, lane)

    async def updated(self, uri: str, lane: Lane) -> None:
        """``uri`` changed, says the session of ``lane``: tell the clients subscribed to it
        there."""
        if lane is None:
            await self.notifier.publish(ResourceUpdated(uri=uri))
        outboxes = self.notifier.outboxes
        for connection, held in list(self._subscribers.get(uri, {}).items()):
            if held is lane:
                notice = outboxes.notify(
                    connection, "notifications/resources/updated", {"uri": uri}
                )
                await outboxes.send(connection, notice)

    async def _swapped(self, old: Snapshot, new: Snapshot) -> None:
        def lines(snapshot: Snapshot) -> list[tuple[str, str]]:
            return [(t.name, t.summary) for t in snapshot.index.summaries(deferred=True)]

        if lines(old) != lines(new):
            await self.updated(OWN_URI, None)

    def exposed_result(self, server: str, result: types.CallToolResult) -> types.CallToolResult:
        """A forwarded tool's result, its resource links readable through toolfind."""
        linked = (types.ResourceLink, types.EmbeddedResource)
        if not any(isinstance(block, linked) for block in result.content):
            return result
        blocks = self.gateway.exposed_blocks(server, result.content)
        return result.model_copy(update={"content": blocks})


def _check_length(uri: str) -> None:
    """Refuse a URI longer than `MAX_URI` (its start only is echoed)."""
    if len(uri) > MAX_URI:
        raise MCPError(
            types.INVALID_PARAMS,
            f"URI too long ({len(uri)} characters; at most {MAX_URI}): {uri[:60]!r}...",
        )
