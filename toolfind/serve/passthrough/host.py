"""What backends ask of the host, relayed: sampling, elicitation and roots.

A backend connected directly to a host may ask it for an LLM completion
(``sampling/createMessage``), for input from the user (``elicitation/create``, form or URL
mode) or for its workspace roots (``roots/list``). Behind toolfind the backend asks toolfind,
on the session it was called on, and toolfind asks the client that session serves, and only
it (a backend speaks only to the client it serves):

- during a client's request at that session (a tool call, a prompt, a read...), the client of
  that request, on that request's own stream (over HTTP, its POST's response stream); a
  2026-07-28 client, which takes no server-to-client requests, gets it as an
  ``input_required`` result of its tool call (`MultiRoundTrip`);
- outside any request: roots from the client the session serves (over HTTP the client whose
  own session it is; under stdio the host), never from another; sampling and elicitation
  are refused, as the specification asks servers to send them only while serving a request;
- a session shared by several clients (a ``shared`` server over HTTP, a 2026-07-28 client's
  call) asks only the client whose request is in flight there, and refuses when requests of
  several clients able to answer are;
- a client that lacks the capability never gets the request: the backend gets an error saying
  so, at once.

Capabilities declared to backends (`HostCapabilities`): a client's own session declares that
client's (what it said in ``initialize``), so that a backend offers it what it would offer it
directly. Under stdio the shared sessions declare the host's, taken from its ``initialize``
(their handshakes wait for it). Over HTTP the shared sessions, which list the tools for every
client, declare everything toolfind can relay (sampling, elicitation in both modes, roots with
``listChanged``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from pydantic import BaseModel, ConfigDict, ValidationError

from toolfind.backends.seam import Lane
from toolfind.serve.notifier import ChangeNotifier
from toolfind.serve.passthrough.common import Caller, Gateway, distinct_clients

logger = logging.getLogger("toolfind.serve")

SAMPLING, ELICITATION, ROOTS = "sampling/createMessage", "elicitation/create", "roots/list"
#: The server-to-client requests toolfind relays, and the capability each needs.
RELAYED: Mapping[str, str] = {SAMPLING: "sampling", ELICITATION: "elicitation", ROOTS: "roots"}
#: Seconds a backend starting under stdio waits for the host's ``initialize``, to declare its
#: capabilities (a host sends it as soon as it has started toolfind).
HOST_WAIT = 5.0
#: URL elicitations remembered at once (to send their completion to their client).
MAX_ELICITATIONS = 1000
#: Seconds a request outside any client request may wait for its answer (a client that
#: never reads its stream must not hold the backend's request for ever).
OUTSIDE_TIMEOUT = 300.0
#: What toolfind can relay, declared to backends when clients differ (HTTP).
EVERYTHING = types.ClientCapabilities(
    sampling=types.SamplingCapability(),
    elicitation=types.ElicitationCapability(
        form=types.FormElicitationCapability(), url=types.UrlElicitationCapability()
    ),
    roots=types.RootsCapability(list_changed=True),
)


class _Raw(BaseModel):
    """A client's answer, kept as sent (its keys are relayed to the backend unchanged)."""

    model_config = ConfigDict(extra="allow")


def relayable(caps: types.ClientCapabilities | None) -> types.ClientCapabilities:
    """The part of a client's capabilities toolfind can relay to a backend."""
    if caps is None:
        return types.ClientCapabilities()
    return types.ClientCapabilities(
        sampling=caps.sampling, elicitation=caps.elicitation, roots=caps.roots
    )


def missing(caps: types.ClientCapabilities | None, method: str, params: Mapping[str, Any]) -> str:
    """What a client lacks to answer ``method`` with ``params`` ("" when nothing)."""
    caps = caps or types.ClientCapabilities()
    if method == SAMPLING:
        if caps.sampling is None:
            return "sampling"
        if (params.get("tools") or params.get("toolChoice")) and caps.sampling.tools is None:
            return "sampling with tools"
        return ""
    if method == ELICITATION:
        if caps.elicitation is None:
            return "elicitation"
        mode = params.get("mode") or "form"
        elicitation = caps.elicitation
        if mode == "url" and elicitation.url is None:
            return "URL elicitation"
        # An empty elicitation capability means form mode (2025-06-18).
        if mode == "form" and elicitation.form is None and elicitation.url is not None:
            return "form elicitation"
        return ""
    if method == ROOTS:
        return "roots" if caps.roots is None else ""
    return method


def _typed_request(method: str, params: Mapping[str, Any]) -> Any:
    """The SDK's request model for a relayed request (it checks the backend's params)."""
    model: Any = {
        SAMPLING: types.CreateMessageRequest,
        ELICITATION: types.ElicitRequest,
        ROOTS: types.ListRootsRequest,
    }[method]
    payload: dict[str, Any] = {"method": method}
    if params:
        payload["params"] = dict(params)
    return model.model_validate(payload, by_name=False)


def _refuse(message: str) -> MCPError:
    return MCPError(types.INVALID_REQUEST, message)


class HostCapabilities:
    """The client capabilities declared to backends (see the module's docstring)."""

    def __init__(self, single_client: bool) -> None:
        self.single_client = single_client
        self._host: types.ClientCapabilities | None = None
        self._seen = anyio.Event()

    def saw(self, caps: types.ClientCapabilities | None) -> None:
        """A client's capabilities (its ``initialize``; the first one counts)."""
        if self._host is None and caps is not None:
            self._host = relayable(caps)
            self._seen.set()

    def saw_initialize(self, params: Mapping[str, Any] | None) -> None:
        """The capabilities an ``initialize`` request declares (ignored when malformed: the
        SDK refuses the request itself)."""
        try:
            caps = types.ClientCapabilities.model_validate(
                (params or {}).get("capabilities", {}), by_name=False
            )
        except ValidationError:
            return
        self.saw(caps)

    async def for_backends(self, lane: Lane) -> types.ClientCapabilities:
        if lane is not None:
            caps = getattr(lane, "client_capabilities", None)
            return relayable(caps if isinstance(caps, types.ClientCapabilities) else None)
        if not self.single_client:
            return EVERYTHING
        with anyio.move_on_after(HOST_WAIT):
            await self._seen.wait()
        return self._host or types.ClientCapabilities()

    async def middleware(self, ctx: Any, call_next: Any) -> Any:
        """Server middleware: note the capabilities of the host's ``initialize`` (or of its
        first request: a 2026-07-28 client declares them on every request)."""
        if self._host is None:
            if ctx.method == "initialize":
                self.saw_initialize(ctx.params)
            else:
                caps = getattr(ctx.session, "client_capabilities", None)
                self.saw(caps if isinstance(caps, types.ClientCapabilities) else None)
        return await call_next(ctx)


class HostRequests:
    """Relays a backend's sampling, elicitation and roots requests to the right client."""

    def __init__(self, notifier: ChangeNotifier, gateway: Gateway, single_client: bool) -> None:
        self.notifier = notifier
        self.gateway = gateway
        self.capabilities = HostCapabilities(single_client)
        #: Set by `MultiRoundTrip`: relays a request to a 2026-07-28 caller.
        self.modern: Any = None
        #: Which client a URL elicitation went to, by (server, lane, elicitation id): its
        #: completion comes from that session only, and goes to that client only.
        self._elicitations: dict[tuple[str, Lane, str], Any] = {}

    async def ask(
        self, server: str, method: str, params: Mapping[str, Any] | None, lane: Lane
    ) -> dict[str, Any]:
        """Relay ``method`` from the session of ``lane`` at backend ``server`` to the client
        it is for, and return its answer.

        Raises:
            MCPError: no client can answer (the backend is told why), or the client's error.
        """
        if method not in RELAYED:
            raise MCPError(types.METHOD_NOT_FOUND, f"toolfind does not relay {method}")
        params = dict(params or {})
        callers = self.gateway.callers_at(server, lane)
        if callers:
            caller = self._caller_for(server, method, params, callers)
            if caller.modern:
                if self.modern is None:
                    raise _refuse(f"toolfind cannot relay {method} to a 2026-07-28 client here")
                return dict(await self.modern.ask(caller, method, params))
            self.remember_urls(server, lane, method, params, caller.connection)
            return await self._ask_caller(caller, method, params)
        return await self._outside(server, method, params, lane)

    def _caller_for(
        self, server: str, method: str, params: Mapping[str, Any], callers: list[Caller]
    ) -> Caller:
        clients = distinct_clients(callers)
        able = [c for c in clients if not missing(c.capabilities, method, params)]
        if len(able) == 1:
            return able[0]
        if not able:
            lacks = missing(clients[0].capabilities, method, params)
            who = (
                f"toolfind's client does not support {lacks}"
                if len(clients) == 1
                else f"none of toolfind's clients with requests at it supports {lacks}"
            )
            raise _refuse(
                f"{who}, so toolfind cannot relay {method} from server {server!r} "
                "(a client declares what it supports when it connects)"
            )
        raise _refuse(
            f"toolfind cannot tell which of its {len(able)} clients with requests in flight at "
            f"server {server!r} this {method} is for, so it relays it to none"
        )

    async def _ask_caller(
        self, caller: Caller, method: str, params: Mapping[str, Any]
    ) -> dict[str, Any]:
        """On the caller's own request stream."""
        request = _typed_request(method, params)
        metadata = ServerMessageMetadata(related_request_id=caller.request_id)
        try:
            result = await caller.session.send_request(request, _Raw, metadata=metadata)
        except ValidationError as exc:
            raise MCPError(
                types.INTERNAL_ERROR, f"the client's answer is not valid: {exc}"
            ) from None
        return dict(result.model_dump(by_alias=True))

    async def _outside(
        self, server: str, method: str, params: Mapping[str, Any], lane: Lane
    ) -> dict[str, Any]:
        """Outside any request: roots from the one client the session serves, else refused."""
        if method != ROOTS:
            raise _refuse(
                f"toolfind relays {method} from server {server!r} only while it serves a "
                "request of the client (a tool call, a prompt, a read), never on its own"
            )
        connection = lane if isinstance(lane, Connection) else None
        if lane is None and self.gateway.single_client:
            connections = self.notifier.connections()
            connection = connections[0] if len(connections) == 1 else None
        if connection is None:
            raise _refuse(
                f"server {server!r} is shared by toolfind's clients, so toolfind gives it the "
                f"roots of none of them outside their requests"
            )
        lacks = missing(getattr(connection, "client_capabilities", None), method, params)
        if lacks:
            raise _refuse(
                f"toolfind's client does not support {lacks}, so toolfind cannot relay "
                f"{method} from server {server!r}"
            )
        try:
            with anyio.fail_after(OUTSIDE_TIMEOUT):
                request = _typed_request(method, params)
                result = await connection.send_request(request, result_type=_Raw)
        except TimeoutError:
            raise _refuse(
                f"the client did not answer {method} within {OUTSIDE_TIMEOUT:g} s"
            ) from None
        except ValidationError as exc:
            raise MCPError(
                types.INTERNAL_ERROR, f"the client's answer is not valid: {exc}"
            ) from None
        return dict(result.model_dump(by_alias=True))

    def remember_urls(
        self, server: str, lane: Lane, method: str, params: Mapping[str, Any], connection: Any
    ) -> None:
        """Note which client a URL elicitation of the session of ``lane`` at ``server`` went
        to (``elicitation/create`` params, or an item of a -32042 error's ``elicitations``)."""
        elicitation = params.get("elicitationId")
        if method == ELICITATION and isinstance(elicitation, str) and connection is not None:
            if len(self._elicitations) >= MAX_ELICITATIONS:
                self._elicitations.pop(next(iter(self._elicitations)))
            self._elicitations[(server, lane, elicitation)] = connection

    async def elicitation_complete(
        self, server: str, params: types.ElicitCompleteNotificationParams, lane: Lane
    ) -> None:
        """A URL elicitation finished out of band: tell the client it was sent to, when the
        session that asked says so (another backend's word for it is not taken)."""
        connection = self._elicitations.pop((server, lane, params.elicitation_id), None)
        if connection is not None:
            payload = params.model_dump(by_alias=True, exclude_none=True)
            outboxes = self.notifier.outboxes
            await outboxes.send(
                connection,
                outboxes.notify(connection, "notifications/elicitation/complete", payload),
            )
