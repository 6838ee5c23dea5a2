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

Callers: every client request runs with its `Caller` in `CALLER` (set by `track_caller`, a server
middleware), and every request forwarded to a backend is counted in flight at that backend
(`Gateway.calling`) until it ends. What a backend sends while requests are in flight (log
messages, requests for sampling, elicitation or roots) goes to the clients of those requests
only: backends are shared by every client, and this is how one client's traffic is kept from
another.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

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

ProgressFn = Callable[[float, "float | None", "str | None"], Awaitable[None]]
#: The current tools/call's progress reporter, set only when the caller sent a progressToken.
PROGRESS: ContextVar[ProgressFn | None] = ContextVar("toolfind_progress", default=None)

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


@runtime_checkable
class Upstream(Protocol):
    """The backend pool as seen from here (`backends.pool.BackendPool` fills it)."""

    def capabilities(self) -> Mapping[str, Any]: ...

    async def request(
        self,
        server: str,
        method: str,
        params: Mapping[str, Any] | None,
        on_progress: Any = None,
    ) -> dict[str, Any]: ...

    def set_relay(self, relay: Callable[[str, Any], Awaitable[None]]) -> None: ...

    def set_host(
        self,
        capabilities: Callable[[], Awaitable[Any]],
        ask: Callable[[str, str, Mapping[str, Any] | None], Awaitable[dict[str, Any]]],
    ) -> None: ...

    def status(self) -> Mapping[str, Any]: ...


async def _nothing() -> None:
    return None


class Gateway:
    """The backends as the capabilities use them: what each declares, every page of a list
    from every backend, one request forwarded. ``upstream`` is None without backends."""

    def __init__(self, backends: object) -> None:
        self.upstream = backends if isinstance(backends, Upstream) else None
        #: Awaited before a list (serve-mcp's --backend-wait; set by `server.Discovery`).
        self.settle: Callable[[], Awaitable[None]] = _nothing
        #: The client requests in flight at each backend (see `calling`).
        self.in_flight: dict[str, list[Caller]] = {}

    @contextmanager
    def calling(self, server: str) -> Iterator[None]:
        """Count the current client request (`CALLER`) in flight at ``server`` meanwhile."""
        caller = CALLER.get()
        if caller is None:
            yield
            return
        callers = self.in_flight.setdefault(server, [])
        callers.append(caller)
        try:
            yield
        finally:
            callers.remove(caller)
            if not callers:
                del self.in_flight[server]

    def callers_at(self, server: str) -> list[Caller]:
        """The client requests in flight at ``server`` now, oldest first."""
        return list(self.in_flight.get(server, ()))

    def capabilities_of(self, server: str) -> Any:
        """The ServerCapabilities ``server`` declared, or None."""
        return self.upstream.capabilities().get(server) if self.upstream else None

    def servers_connected(self) -> list[str]:
        return list(self.upstream.capabilities()) if self.upstream else []

    def servers_with(self, capability: str) -> list[str]:
        if self.upstream is None:
            return []
        return [
            name
            for name, caps in self.upstream.capabilities().items()
            if getattr(caps, capability, None) is not None
        ]

    def connecting(self) -> set[str]:
        """Backends not up now (connecting the first time, or retrying after a crash): what
        they offer is not known, and a request routed to one waits for it or says why it is
        unavailable (`BackendPool.request`), rather than "not found"."""
        if self.upstream is None:
            return set()
        return {
            n for n, s in self.upstream.status().items() if s.state in ("connecting", "retrying")
        }

    async def gather(self, capability: str, method: str, key: str) -> list[tuple[str, Any]]:
        """Every entry of ``method`` from every connected backend declaring ``capability``, all
        pages, in server order; a backend that fails or is slow is left out (logged)."""
        servers = self.servers_with(capability)
        found: dict[str, list[Any]] = {}

        async def one(server: str) -> None:
            assert self.upstream is not None
            entries: list[Any] = []
            cursor: Any = None
            seen: set[str] = set()
            try:
                with anyio.fail_after(LIST_TIMEOUT), self.calling(server):
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

    async def forward(self, server: str, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        assert self.upstream is not None
        try:
            with self.calling(server):
                return await self.upstream.request(server, method, params, PROGRESS.get())
        except BackendError as exc:
            raise MCPError(types.INTERNAL_ERROR, str(exc)) from None

    def exposed_blocks(self, server: str, blocks: Sequence[Any]) -> list[Any]:
        """Content blocks from backend ``server`` (a tool's result, a prompt's messages) with
        their resource links and embedded resources named by exposed URIs, so that a client
        reads them through toolfind. Only when ``server`` serves resources: otherwise no
        resource of it can be read through MCP at all, and its URI (``file://``,
        ``https://``...) is left for the host as the backend wrote it."""
        if server not in self.servers_with("resources"):
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

    @staticmethod
    def valid(model: type[M], entry: Any, server: str) -> M | None:
        try:
            return model.model_validate(entry, by_name=False)
        except ValidationError:
            logger.warning("server %r: dropped a malformed %s", server, model.__name__)
            return None
