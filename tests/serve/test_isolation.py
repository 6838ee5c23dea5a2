"""What keeps serve-mcp's clients apart and its memory bounded: per-client outboxes, the
routing of a backend's requests for the host, and the HTTP connection cap's evictions.

The end-to-end side (two HTTP clients in front of a real server) is in
``test_everything_e2e.py``; these tests drive the parts directly, each wait on an event within
a timeout.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError

from toolfind.backends.seam import NoBackends
from toolfind.serve.notifier import ChangeNotifier, Outboxes, RequestOutbox
from toolfind.serve.passthrough.common import CALLER, Caller, Gateway
from toolfind.serve.passthrough.host import EVERYTHING, HostCapabilities, HostRequests, missing
from toolfind.serve.transports.http import BearerTokenGate
from toolfind.serve.transports.http_limits import limited_protocol

pytestmark = pytest.mark.anyio


class Stalled:
    """A client's stream that nobody reads: every send waits until `release`."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []
        self.released = anyio.Event()
        self.arrived = anyio.Event()

    async def notify(self, method: str, params: Any, opts: Any = None) -> None:
        self.arrived.set()
        await self.released.wait()
        self.sent.append((method, params))

    async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
        raise AssertionError("no request expected")


async def test_a_client_that_does_not_read_costs_a_bounded_queue_then_hears_what_it_missed() -> (
    None
):
    stalled = Stalled()
    connection = Connection(stalled, protocol_version="2025-11-25")
    outboxes = Outboxes(limit=50)
    async with outboxes.running():
        for i in range(5000):
            notice = outboxes.notify(connection, "notifications/message", {"data": i})
            await outboxes.send(connection, notice)
        box = outboxes.of(connection)
        with anyio.fail_after(10):
            await stalled.arrived.wait()
        assert len(box.queue) < 50  # one is being sent, the rest wait
        assert box.dropped == 5000 - 50
        stalled.released.set()
        with anyio.fail_after(10):
            await anyio.wait_all_tasks_blocked()  # the queue drained
    sent = [params for _, params in stalled.sent]
    assert [p["data"] for p in sent[:50]] == list(range(50))
    assert sent[50]["logger"] == "toolfind"
    assert "dropped 4950 message(s)" in sent[50]["data"]


async def test_a_request_stream_sends_in_order_and_drops_what_overflows() -> None:
    gate = anyio.Event()
    sent: list[int] = []

    def sender(i: int) -> Any:
        async def send() -> None:
            if i == 0:
                await gate.wait()
            sent.append(i)

        return send

    box = RequestOutbox(limit=3)
    async with anyio.create_task_group() as tg:
        tg.start_soon(box.send, sender(0))
        await anyio.wait_all_tasks_blocked()
        for i in range(1, 10):
            await box.send(sender(i))  # queued (three) or dropped: never waits
        gate.set()
        with anyio.fail_after(10):
            await box.settled()
    assert sent == [0, 1, 2, 3]
    assert box.dropped == 6


def caller(caps: types.ClientCapabilities | None, modern: bool = False) -> Caller:
    session = SimpleNamespace(client_capabilities=caps, can_send_request=not modern)
    return Caller(SimpleNamespace(session=session, request_id=1), SimpleNamespace())


async def test_a_backend_request_goes_only_to_a_caller_that_can_answer_it() -> None:
    gateway = Gateway(NoBackends(), single_client=False)
    host = HostRequests(ChangeNotifier(), gateway, single_client=False)
    sampling = types.ClientCapabilities(sampling=types.SamplingCapability())
    for callers, expected in (
        ([caller(None)], "toolfind's client does not support sampling"),
        (
            [caller(None), caller(None)],
            "none of toolfind's clients with requests at it supports sampling",
        ),
        ([caller(sampling), caller(sampling)], "cannot tell which of its 2 clients"),
    ):
        gateway.in_flight[("s", None)] = callers
        with pytest.raises(MCPError) as refused:
            await host.ask("s", "sampling/createMessage", {"messages": [], "maxTokens": 5}, None)
        assert expected in refused.value.error.message
        assert refused.value.error.code == types.INVALID_REQUEST


@pytest.mark.parametrize("lane", [None, "a client's own session"])
async def test_sampling_or_elicitation_outside_any_request_is_refused_never_relayed(
    lane: Any,
) -> None:
    gateway = Gateway(NoBackends(), single_client=lane is None)
    host = HostRequests(ChangeNotifier(), gateway, single_client=lane is None)
    for method, params in (
        ("sampling/createMessage", {"messages": [], "maxTokens": 5}),
        ("elicitation/create", {"mode": "url", "url": "https://x.example", "elicitationId": "1"}),
    ):
        with pytest.raises(MCPError) as refused:
            await host.ask("s", method, params, lane)
        assert "only while it serves a request" in refused.value.error.message


async def test_roots_outside_any_request_come_only_from_the_client_the_session_serves() -> None:
    shared = Gateway(NoBackends(), single_client=False)
    host = HostRequests(ChangeNotifier(), shared, single_client=False)
    with pytest.raises(MCPError) as refused:
        await host.ask("s", "roots/list", None, None)
    assert "shared by toolfind's clients" in refused.value.error.message
    asked: list[str] = []

    class Own:
        client_capabilities = types.ClientCapabilities(roots=types.RootsCapability())

        async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
            asked.append(method)
            return {"roots": [{"uri": "file:///own"}]}

    own = Connection(Own(), protocol_version="2025-11-25")
    own.client_capabilities = Own.client_capabilities
    answer = await host.ask("s", "roots/list", None, own)
    assert answer["roots"] == [{"uri": "file:///own"}]
    assert asked == ["roots/list"]


async def test_only_the_callers_own_requests_count_in_flight_at_a_backend() -> None:
    gateway = Gateway(NoBackends(), single_client=False)
    one, two = caller(None), caller(None)
    token = CALLER.set(one)
    try:
        with gateway.calling("a", None):
            assert gateway.callers_at("a", None) == [one]
            CALLER.set(two)
            with gateway.calling("a", None), gateway.calling("b", None):
                assert gateway.callers_at("a", None) == [one, two]
                assert gateway.callers_at("b", None) == [two]
            with gateway.calling("a", two):  # its own session: counted apart
                assert gateway.callers_at("a", None) == [one]
                assert gateway.callers_at("a", two) == [two]
            assert gateway.callers_at("a", None) == [one]
    finally:
        CALLER.reset(token)
    assert gateway.in_flight == {}


def test_what_each_capability_allows() -> None:
    form_only = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    url_only = types.ClientCapabilities(
        elicitation=types.ElicitationCapability(url=types.UrlElicitationCapability())
    )
    assert missing(form_only, "elicitation/create", {"message": "m"}) == ""
    assert missing(form_only, "elicitation/create", {"mode": "url"}) == "URL elicitation"
    assert missing(url_only, "elicitation/create", {"mode": "url"}) == ""
    assert missing(url_only, "elicitation/create", {}) == "form elicitation"
    plain = types.ClientCapabilities(sampling=types.SamplingCapability())
    assert missing(plain, "sampling/createMessage", {"tools": [{}]}) == "sampling with tools"
    assert missing(EVERYTHING, "roots/list", {}) == ""


async def test_backends_are_told_the_hosts_capabilities_under_stdio_and_all_over_http() -> None:
    http = HostCapabilities(single_client=False)
    assert await http.for_backends(None) == EVERYTHING
    own = SimpleNamespace(
        client_capabilities=types.ClientCapabilities(sampling=types.SamplingCapability())
    )
    assert await http.for_backends(own) == types.ClientCapabilities(
        sampling=types.SamplingCapability()
    )
    stdio = HostCapabilities(single_client=True)
    declared = types.ClientCapabilities(
        roots=types.RootsCapability(list_changed=False), experimental={"x": {}}
    )
    async with anyio.create_task_group() as tg:
        got: list[types.ClientCapabilities] = []

        async def ask() -> None:
            got.append(await stdio.for_backends(None))

        tg.start_soon(ask)
        await anyio.wait_all_tasks_blocked()
        assert got == []  # waits for the host's initialize
        stdio.saw_initialize({"capabilities": declared.model_dump(by_alias=True)})
    assert got == [types.ClientCapabilities(roots=types.RootsCapability(list_changed=False))]


# -- HTTP: the connection cap makes room from idle connections; a refused one is closed --------


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


@asynccontextmanager
async def serving(app: Any, cap: int) -> AsyncIterator[int]:
    import uvicorn

    sock = socket.create_server(("127.0.0.1", 0))
    config = uvicorn.Config(
        app, http=limited_protocol(cap, 60, 60), log_config=None, lifespan="off"
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        yield sock.getsockname()[1]
        server.should_exit = True


async def _answer(stream: Any) -> bytes:
    received = b""
    with anyio.fail_after(10):
        while b"hello" not in received and b"unauthorized" not in received:
            received += await stream.receive()
    return received


async def _until_closed(stream: Any) -> bytes:
    received = b""
    with anyio.fail_after(10):
        try:
            async for chunk in stream:
                received += chunk
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            pass
    return received


async def test_at_the_cap_the_longest_idle_keep_alive_connection_makes_room() -> None:
    request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    async with serving(_hello, 2) as port:
        idle = []
        for _ in range(2):
            stream = await anyio.connect_tcp("127.0.0.1", port)
            await stream.send(request)
            assert (await _answer(stream)).startswith(b"HTTP/1.1 200")
            idle.append(stream)
        fresh = await anyio.connect_tcp("127.0.0.1", port)
        await fresh.send(request)
        assert (await _answer(fresh)).startswith(b"HTTP/1.1 200")
        assert await _until_closed(idle[0]) == b""  # the one idle longest
        await idle[1].send(request)  # the other still serves
        assert (await _answer(idle[1])).startswith(b"HTTP/1.1 200")
        for stream in (*idle, fresh):
            await stream.aclose()


async def test_a_request_refused_for_its_token_does_not_keep_its_connection() -> None:
    async with serving(BearerTokenGate(_hello, "s3cret"), 10) as port:
        stream = await anyio.connect_tcp("127.0.0.1", port)
        await stream.send(b"GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")  # keep-alive, no token
        answer = await _until_closed(stream)
        await stream.aclose()
        assert answer.startswith(b"HTTP/1.1 401")
        assert b"connection: close" in answer.lower()
