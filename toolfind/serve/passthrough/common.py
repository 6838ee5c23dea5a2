"""What the pass-through capabilities share: list cursors, exposed URIs, the progress of a
forwarded call, and the backends as seen from here (`Gateway`).

A resource URI is ``toolfind://<server>/<the backend's URI, verbatim>``, ``<server>`` being the
backend's server name (never the namespace its tools may have been moved to). The backend's
URI is kept byte for byte after the prefix, so it round-trips without any table or escaping: a
resource template's variables expand exactly as they would at the backend, and a URI read
that was never listed (one built from a template) still routes. Server names are made of
``[A-Za-z0-9_-]``, valid in a URI's authority. toolfind's own resources have no authority
(``toolfind:deferred-tools``), so they never meet a server's name.

Progress: the caller's ``progressToken`` on a forwarded tool call becomes a progress callback
on the backend request (`PROGRESS`), so the backend's progress notifications reach the caller.

Sessions and callers: over HTTP each client's requests to a backend go to a session of that
client's own (its *lane*, `backends.seam`), so what the backend keeps and asks belongs to that
client alone; under stdio (one client) and for a ``shared`` server they go to the backend's
shared session. Every client request runs with its `Caller` in `CALLER` (set by
`track_caller`, a server middleware), and every request forwarded to a backend is counted in
flight at that backend's session (`Gateway.calling`) until it ends: what the session sends
meanwhile (log messages, requests for sampling, elicitation or roots) goes back on that
request's own stream.
"""

from __future__ import annotations

import base64
import logging
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from toolfind.backends.seam import Backends, Lane, NoBackends, Progress
from toolfind.errors import BackendError
from toolfind.output.text import clean_text
from toolfind.serve.notifier import RequestOutbox, connection_of

logger = logging.getLogger("toolfind.serve")

#: Items per page of every list toolfind answers (tools, resources, templates, prompts).
PAGE_SIZE = 100
URI_PREFIX = "toolfind://"
#: How long one backend may take to answer a list request made for a client's list.
LIST_TIMEOUT = 10.0
#: What the descriptions of backends' prompts and resources are cut at (tool entries are
#: bounded by the catalog rules).
MAX_DESCRIPTION = 4000

#: The current tools/call's progress reporter, set only when the caller sent a progressToken.
PROGRESS: ContextVar[Progress | None] = ContextVar("toolfind_progress", default=None)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(eq=False)
class Caller:
    """One client request being served: where anything it causes at a backend goes back to.

    ``connection`` is the client's connection (None when the transport gives none: then the
    request is a client of its own); ``session`` the request-scoped session (its sends ride the
    request's own stream: over HTTP, the POST's response stream).
    """

    ctx: Any
    connection: Any
    #: What goes back on this request's own stream, sent before its answer.
    outbox: RequestOutbox = field(default_factory=RequestOutbox)

    @property
    def session(self) -> Any:
        return self.ctx.session

    @property
    def request_id(self) -> Any:
        return self.ctx.request_id

    @property
    def client(self) -> object:
        """What identifies the client: its connection, or this request when it has none."""
        return self.connection if self.connection is not None else self

    @property
    def capabilities(self) -> types.ClientCapabilities | None:
        caps = getattr(self.connection, "client_capabilities", None)
        if caps is None:
            caps = getattr(self.session, "client_capabilities", None)
        return caps if isinstance(caps, types.ClientCapabilities) else None

    @property
    def modern(self) -> bool:
        """A 2026-07-28 client: no server-to-client requests outside ``input_required``."""
        return not bool(getattr(self.session, "can_send_request", False))


#: The client request this task serves (None outside one).
CALLER: ContextVar[Caller | None] = ContextVar("toolfind_caller", default=None)


async def track_caller(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Server middleware: run each client request with its `Caller` in `CALLER`."""
    if ctx.request_id is None or ctx.method == "initialize":
        return await call_next(ctx)
    caller = Caller(ctx, connection_of(ctx))
    token = CALLER.set(caller)
    try:
        result = await call_next(ctx)
        await caller.outbox.settled()  # its progress and log messages before its answer
        return result
    finally:
        CALLER.reset(token)


def distinct_clients(callers: Sequence[Caller]) -> list[Caller]:
    """The last caller of each distinct client, in order of first appearance."""
    last: dict[int, Caller] = {}
    for caller in callers:
        last[id(caller.client)] = caller
    return list(last.values())


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


def own_uri(server: str, uri: str, everything: bool) -> str:
    """A URI from backend ``server`` as a client sees it: exposed under ``server``'s name when
    ``everything`` (it serves resources) or when the URI is one of toolfind's
    (``toolfind:...``, as another backend's would be), else as the backend wrote it."""
    if everything or uri.startswith(URI_PREFIX.partition(":")[0] + ":"):
        return exposed_uri(server, uri)
    return uri


def backend_uri(uri: str) -> tuple[str, str] | None:
    """(server, the backend's URI) behind an exposed URI, or None when it is not one."""
    if not uri.startswith(URI_PREFIX):
        return None
    server, slash, original = uri[len(URI_PREFIX) :].partition("/")
    if not server or not slash or not original:
        return None
    return server, original


def cleaned(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A backend's list entry with its free text made safe like a tool description."""
    out = dict(entry)
    for key, limit in (("description", MAX_DESCRIPTION), ("title", 200)):
        if isinstance(out.get(key), str):
            out[key] = clean_text(out[key], limit)
    return out


async def _nothing() -> None:
    return None


#: A session of a backend, as `Gateway` counts requests in flight: (server, lane).
Session = tuple[str, Lane]


class Gateway:
    """The backends as the capabilities use them: whose session a request goes to, what each
    backend declares, every page of a list from every backend, one request forwarded."""

    def __init__(self, backends: Backends, *, single_client: bool) -> None:
        self.upstream = backends
        #: Whether there are backends at all: anything but `NoBackends` itself (a subclass
        #: serves something).
        self.active = type(backends) is not NoBackends
        #: Under stdio: one client, the host, which every shared session serves.
        self.single_client = single_client
        #: Awaited before a list (serve-mcp's --backend-wait; set by `server.Discovery`).
        self.settle: Callable[[], Awaitable[None]] = _nothing
        #: The client requests in flight at each backend session (see `calling`).
        self.in_flight: dict[Session, list[Caller]] = {}
        #: Clients whose sessions are stopped when their connection closes.
        self._tracked: weakref.WeakSet[Connection] = weakref.WeakSet()

    def lane(self, server: str, *, start: bool = True) -> Lane:
        """The session of ``server`` the current request (`CALLER`) goes to: its client's own
        (one it has, or with ``start`` one it may start now), else the shared one (None). A
        2026-07-28 client has no session to keep (each request stands alone): shared."""
        caller = CALLER.get()
        client = None if caller is None or caller.modern else caller.connection
        lane = self.upstream.lane(server, client, start=start)
        if isinstance(lane, Connection) and lane not in self._tracked:
            self._tracked.add(lane)
            lane.exit_stack.callback(self.upstream.forget, lane)
        return lane

    @contextmanager
    def calling(self, server: str, lane: Lane) -> Iterator[None]:
        """Count the current client request (`CALLER`) in flight at ``server``'s session of
        ``lane`` meanwhile."""
        caller = CALLER.get()
        if caller is None:
            yield
            return
        key = (server, lane)
        callers = self.in_flight.setdefault(key, [])
        callers.append(caller)
        try:
            yield
        finally:
            callers.remove(caller)
            if not callers:
                del self.in_flight[key]

    def callers_at(self, server: str, lane: Lane) -> list[Caller]:
        """The client requests in flight at ``server``'s session of ``lane``, oldest first."""
        return list(self.in_flight.get((server, lane), ()))

    def capabilities_of(self, server: str) -> Any:
        """The ServerCapabilities ``server`` declared, or None."""
        return self.upstream.capabilities().get(server)

    def servers_connected(self) -> list[str]:
        return list(self.upstream.capabilities())

    def servers_with(self, capability: str) -> list[str]:
        return [
            name
            for name, caps in self.upstream.capabilities().items()
            if getattr(caps, capability, None) is not None
        ]

    def connecting(self) -> set[str]:
        """Backends not up now (connecting the first time, or retrying after a crash): what
        they offer is not known, and a request routed to one waits for it or says why it is
        unavailable (`BackendPool.request`), rather than "not found"."""
        return {
            n for n, s in self.upstream.status().items() if s.state in ("connecting", "retrying")
        }

    async def gather(self, capability: str, method: str, key: str) -> list[tuple[str, Any]]:
        """Every entry of ``method`` from every connected backend declaring ``capability``, all
        pages, in server order, from the caller's own session where it has one (else the
        shared one: a list starts no session); a backend that fails or is slow is left out
        (logged)."""
        servers = self.servers_with(capability)
        found: dict[str, list[Any]] = {}

        async def one(server: str) -> None:
            entries: list[Any] = []
            cursor: Any = None
            seen: set[str] = set()
            lane = self.lane(server, start=False)
            try:
                with anyio.fail_after(LIST_TIMEOUT), self.calling(server, lane):
                    for _ in range(100):
                        raw = await self.upstream.request(
                            server, method, {"cursor": cursor} if cursor else None, lane=lane
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

    async def forward(
        self, server: str, method: str, params: Mapping[str, Any], *, start: bool = True
    ) -> dict[str, Any]:
        """``method`` forwarded to the caller's session of ``server`` (`lane`); the backend's
        JSON-RPC error passes on whole, toolfind's own (it is down...) is an internal error."""
        return await self.forward_on(server, self.lane(server, start=start), method, params)

    async def forward_on(
        self, server: str, lane: Lane, method: str, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        """`forward` to the session of ``lane``."""
        try:
            with self.calling(server, lane):
                return await self.upstream.request(
                    server, method, params, PROGRESS.get(), lane=lane
                )
        except BackendError as exc:
            raise MCPError(types.INTERNAL_ERROR, str(exc)) from None

    def exposed_blocks(self, server: str, blocks: Sequence[Any]) -> list[Any]:
        """Content blocks from backend ``server`` (a tool's result, a prompt's messages) with
        their resource links and embedded resources named by exposed URIs, so that a client
        reads them through toolfind. Only when ``server`` serves resources: otherwise no
        resource of it can be read through MCP at all, and its URI (``file://``,
        ``https://``...) is left for the host as the backend wrote it, unless it is one of
        toolfind's (``toolfind:...``): a backend never speaks for another backend's resource
        (`own_uri`)."""
        everything = server in self.servers_with("resources")
        out: list[Any] = []
        for block in blocks:
            if isinstance(block, types.ResourceLink):
                uri = own_uri(server, block.uri, everything)
                if uri is not block.uri:
                    block = block.model_copy(update={"uri": uri})
            elif isinstance(block, types.EmbeddedResource):
                uri = own_uri(server, block.resource.uri, everything)
                if uri is not block.resource.uri:
                    inner = block.resource.model_copy(update={"uri": uri})
                    block = block.model_copy(update={"resource": inner})
            out.append(block)
        return out

    @staticmethod
    def valid(model: type[M], entry: Any, server: str) -> M | None:
        try:
            return model.model_validate(entry, by_name=False)
        except ValidationError:
            logger.warning("server %r: dropped a malformed %s", server, model.__name__)
            return None
