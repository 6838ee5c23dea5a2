"""HTTP limits (`serve.transports.http_limits`): log lines rate-limited, slow requests closed,
the connection cap making room; against a uvicorn server in this process."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from toolfind.serve.transports.http import BearerTokenGate
from toolfind.serve.transports.http_limits import ClientLeft, RateLimit, limited_protocol

pytestmark = pytest.mark.anyio


def test_rate_limit_passes_a_burst_then_counts_what_it_left_out() -> None:
    now = [0.0]
    limit = RateLimit(burst=2, window=60, clock=lambda: now[0])

    def record(host: str) -> logging.LogRecord:
        return logging.LogRecord(
            "mcp", logging.WARNING, "x", 1, f"Invalid Host header: {host}", None, None
        )

    passed = [limit.filter(record(f"h{i}")) for i in range(5)]
    assert passed == [True, True, False, False, False]
    now[0] = 61.0
    later = record("h9")
    assert limit.filter(later)
    assert later.msg == "Invalid Host header: h9 (3 more like this not logged)"
    other = logging.LogRecord("mcp", logging.WARNING, "x", 1, "something else", None, None)
    assert limit.filter(other)
    own = logging.LogRecord("toolfind.serve", logging.WARNING, "x", 1, "%s", ("a",), None)
    assert all(limit.filter(own) for _ in range(10))  # toolfind's own lines are deduplicated


def test_a_client_leaving_mid_request_is_an_info_line_without_a_traceback() -> None:
    from starlette.requests import ClientDisconnect

    def record(exc: BaseException, level: int = logging.ERROR) -> logging.LogRecord:
        try:
            raise exc
        except BaseException as raised:
            info = (type(raised), raised, raised.__traceback__)
        return logging.LogRecord("mcp", level, "x", 1, "Error handling %s", ("POST",), info)

    shown = ClientLeft(logging.INFO)
    for exc in (ClientDisconnect(), ExceptionGroup("tasks", [ClientDisconnect()] * 2)):
        left = record(exc)
        assert shown.filter(left)
        assert (left.levelname, left.getMessage(), left.exc_info) == (
            "INFO",
            "a client left before its request was read",
            None,
        )
        assert not ClientLeft(logging.WARNING).filter(record(exc))  # an info line, not shown
    for exc in (ValueError("a bug"), ExceptionGroup("tasks", [ClientDisconnect(), KeyError()])):
        bug = record(exc)
        assert shown.filter(bug) and ClientLeft(logging.WARNING).filter(bug)
        assert bug.levelname == "ERROR" and bug.exc_info is not None
    plain = logging.LogRecord("mcp", logging.ERROR, "x", 1, "no exception", None, None)
    assert ClientLeft(logging.WARNING).filter(plain) and plain.levelname == "ERROR"


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


async def _closed(stream: anyio.abc.SocketStream) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    with anyio.fail_after(30):
        try:
            async for chunk in stream:
                received += chunk
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
            pass
    await stream.aclose()
    return received


@asynccontextmanager
async def limited_server(
    cap: int, header_timeout: float, body_timeout: float
) -> AsyncIterator[tuple[int, Any]]:
    """uvicorn with the limits in this process; yields its port and its protocol class (whose
    limits a test may change for the connections that follow)."""
    import uvicorn

    sock = socket.create_server(("127.0.0.1", 0))
    protocol = limited_protocol(cap, header_timeout, body_timeout)
    config = uvicorn.Config(
        _hello,
        http=protocol,
        log_config=None,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        # The socket listens already: connections wait in its backlog until uvicorn accepts.
        tg.start_soon(lambda: server.serve(sockets=[sock]))
        yield sock.getsockname()[1], protocol
        server.should_exit = True


async def test_requests_slower_than_the_read_timeouts_are_closed() -> None:
    async with limited_server(10, 0.3, 0.3) as (port, protocol):
        silent = await anyio.connect_tcp("127.0.0.1", port)
        partial = await anyio.connect_tcp("127.0.0.1", port)
        await partial.send(b"POST / HTTP/1.1\r\nHost: x\r\n")
        body = await anyio.connect_tcp("127.0.0.1", port)
        await body.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        assert await _closed(silent) == b""
        assert await _closed(partial) == b""
        assert await _closed(body) == b""
        # The server still serves; with timeouts a busy machine cannot reach (this process
        # could be paused 0.3 s between the client's connect and its request).
        protocol.header_timeout = protocol.body_timeout = 60
        ok = await anyio.connect_tcp("127.0.0.1", port)
        await ok.send(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = await _closed(ok)
        assert answer.startswith(b"HTTP/1.1 200") and b"hello" in answer


async def test_at_the_cap_half_open_requests_make_room_and_busy_ones_refuse() -> None:
    # Timeouts far beyond the test's waits: every close here is the cap's doing.
    async with limited_server(2, 60, 60) as (port, _):
        silent = await anyio.connect_tcp("127.0.0.1", port)
        partial = await anyio.connect_tcp("127.0.0.1", port)
        await partial.send(b"POST / HTTP/1.1\r\nHost: x\r\n")
        ok = await anyio.connect_tcp("127.0.0.1", port)
        await ok.send(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert await _closed(silent) == b""  # the oldest half-open one made room
        answer = await _closed(ok)
        assert answer.startswith(b"HTTP/1.1 200") and b"hello" in answer
        bodies = []
        for _ in range(2):  # past their headers: not evicted
            body = await anyio.connect_tcp("127.0.0.1", port)
            await body.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            bodies.append(body)
        assert await _closed(partial) == b""
        excess = await anyio.connect_tcp("127.0.0.1", port)
        assert (await _closed(excess)).startswith(b"HTTP/1.1 503")
        for body in bodies:
            await body.aclose()


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
    with anyio.fail_after(30):
        while b"hello" not in received and b"unauthorized" not in received:
            received += await stream.receive()
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
        assert await _closed(idle[0]) == b""  # the one idle longest
        await idle[1].send(request)  # the other still serves
        assert (await _answer(idle[1])).startswith(b"HTTP/1.1 200")
        for stream in (*idle, fresh):
            await stream.aclose()


async def test_a_request_refused_for_its_token_does_not_keep_its_connection() -> None:
    async with serving(BearerTokenGate(_hello, "s3cret"), 10) as port:
        stream = await anyio.connect_tcp("127.0.0.1", port)
        await stream.send(b"GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n")  # keep-alive, no token
        answer = await _closed(stream)
        assert answer.startswith(b"HTTP/1.1 401")
        assert b"connection: close" in answer.lower()
