"""HTTP limits in front of everything else: read timeouts, a connection cap, rate-limited logs.

uvicorn times out only idle keep-alive connections: a client that opens connections and never
finishes a request's headers holds a file descriptor each for ever, before any token or Host
check can run. `limited_protocol` gives uvicorn an HTTP protocol (its own h11 one) that

- holds at most ``max_connections`` at once: at the cap, a new connection replaces the one
  that has been sending its request headers the longest (half-open requests are what an
  attacker holds; a client sends its headers at once), else the one idle longest between
  requests (keep-alive), and is refused (``503``, then closed) when every connection is busy
  with a request; all before reading a byte of it, so no authentication work is spent on it;
- closes a connection whose request headers have not all arrived ``header_timeout`` seconds
  after its first byte (or after it connected), and one whose body has not all arrived
  ``body_timeout`` seconds after its headers.

`RateLimit` keeps a flood (one warning per refused request) from filling the disk: each
message template is logged at most ``burst`` times a ``window``; the next one that passes says
how many were left out.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import time
from collections.abc import Callable

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from toolfind.serve import defaults

logger = logging.getLogger("toolfind.serve.http")

_REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: 20\r\n\r\ntoo many connections"
)


#: Connections accepted in one go when the listening socket is readable (uvicorn's ``backlog``,
#: which asyncio uses as its accept batch): each holds a descriptor until it is refused.
ACCEPT_BATCH = 32


class Listener(socket.socket):
    """A listening socket whose kernel queue of connections waiting to be accepted stays
    ``queue`` deep, whatever backlog its user asks for.

    asyncio passes one number both to ``listen()`` and as its accept batch (uvicorn's
    ``backlog``), and the batch stays small for the descriptor budget (`ACCEPT_BATCH`). A
    queue that shallow overflows when many clients connect at once while the server is busy
    (a thousand searches from 20 hosts): Linux then drops handshakes, and a client whose
    request already went out reads a reset. Queued connections cost the kernel, not this
    process's descriptors; the kernel caps the depth at ``net.core.somaxconn``.
    """

    queue = 128

    def listen(self, backlog: int = 0, /) -> None:
        super().listen(max(backlog, self.queue))


def listener(sock: socket.socket, queue: int) -> Listener:
    """``sock`` (bound, not yet accepting) as a `Listener` with a queue ``queue`` deep."""
    listening = Listener(sock.family, sock.type, sock.proto, fileno=sock.detach())
    listening.queue = queue
    listening.listen()
    return listening


def connection_cap(wanted: int) -> int:
    """``wanted``, lowered so that the connections, one accept batch and what else the
    process holds (catalogs, the cache, backends and their pipes: 64 and half of the rest)
    stay within this process's file-descriptor limit."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):  # pragma: no cover - every POSIX system answers
        return wanted
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, (soft - 64) // 2 - ACCEPT_BATCH))


class LimitedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a connection cap and header/body read timeouts."""

    max_connections = defaults.MAX_CONNECTIONS
    header_timeout = defaults.HEADER_TIMEOUT
    body_timeout = defaults.BODY_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None
    _what: str | None = None
    _refused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if len(self.connections) >= self.max_connections and not self._evict_one():
            self._refused = True
            logger.warning(
                "refused a connection: the limit of %d open connections is reached",
                self.max_connections,
            )
            assert isinstance(transport, asyncio.WriteTransport)
            transport.write(_REFUSED)
            transport.close()
            return
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm(self.header_timeout, "headers")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if not self._refused:
            super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._deadline is None and self.conn.their_state is h11.IDLE:
            self._arm(self.header_timeout, "headers")  # the first byte of a new request
        super().data_received(data)
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self._what != "body":
                self._arm(self.body_timeout, "body")
        elif state is not h11.IDLE:  # DONE, MUST_CLOSE, ERROR...: all of it arrived
            self._disarm()

    def _evict_one(self) -> bool:
        """At the cap: make room by closing the connection that has been sending its request
        headers the longest (a client that sends them at once never is that one), else the
        one idle longest between requests (keep-alive: a client reconnects when it needs to;
        a refused request's connection is closed at once, see `http.BearerTokenGate`)."""
        oldest: H11Protocol
        waiting = [
            c
            for c in self.connections
            if isinstance(c, LimitedH11Protocol) and c._what == "headers" and c._deadline
        ]
        if waiting:
            oldest = min(waiting, key=lambda c: c._deadline.when() if c._deadline else 0.0)
            what = "the one waiting longest for its request headers"
        else:
            idle = [
                c
                for c in self.connections
                if isinstance(c, H11Protocol) and c.timeout_keep_alive_task is not None
            ]
            if not idle:
                return False
            oldest = min(idle, key=_idle_since)
            what = "the one idle longest"
        logger.warning("at the limit of %d open connections: closed %s", self.max_connections, what)
        if isinstance(oldest, LimitedH11Protocol):
            oldest._disarm()
        if oldest.transport is not None:
            oldest.transport.close()
        self.connections.discard(oldest)  # its connection_lost comes later
        return True

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        self._what = what
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._what = None

    def _expired(self) -> None:
        what, self._deadline, self._what = self._what, None, None
        if self.transport is None or self.transport.is_closing():
            return
        client = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
        logger.warning(
            "closed the connection from %s: its request %s did not arrive in time", client, what
        )
        self.transport.close()


def _idle_since(connection: H11Protocol) -> float:
    task = connection.timeout_keep_alive_task
    return task.when() if task is not None else 0.0


def limited_protocol(
    max_connections: int, header_timeout: float, body_timeout: float
) -> type[asyncio.Protocol]:
    """`LimitedH11Protocol` with these limits (uvicorn takes a protocol class)."""
    limits = {
        "max_connections": max_connections,
        "header_timeout": header_timeout,
        "body_timeout": body_timeout,
    }
    return type("LimitedH11Protocol", (LimitedH11Protocol,), limits)


class RateLimit(logging.Filter):
    """Passes each message template at most ``burst`` times a ``window`` seconds.

    Applies to this module's lines and to other libraries' (uvicorn, asyncio, the SDK); the rest
    of toolfind's lines are few by design (a backend's warnings are logged once each).
    """

    def __init__(
        self, burst: int = 5, window: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.burst = burst
        self.window = window
        self._clock = clock
        self._seen: dict[tuple[str, str], list[float]] = {}
        self._dropped: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("toolfind") and record.name != logger.name:
            return True
        # A message formatted before logging (the SDK's f"Invalid Host header: {host}") is
        # keyed by its text up to the first colon; otherwise every request is its own template.
        text = str(record.msg)
        key = (record.name, text if record.args else text.split(":", 1)[0])
        now = self._clock()
        times = self._seen.setdefault(key, [])
        while times and now - times[0] > self.window:
            times.pop(0)
        if len(times) >= self.burst:
            self._dropped[key] = self._dropped.get(key, 0) + 1
            return False
        times.append(now)
        dropped = self._dropped.pop(key, 0)
        if dropped:
            record.msg = f"{record.msg} ({dropped} more like this not logged)"
        if len(self._seen) > 1000:  # f-string messages: every one is its own template
            self._seen = {k: v for k, v in self._seen.items() if v and now - v[-1] <= self.window}
        return True


class ClientLeft(logging.Filter):
    """A record logged because a client went away while its request was being read is one
    line at info level, not an error with a traceback (the mark of a bug).

    Hosts cancel calls and networks drop, and the read timeouts above close slow requests:
    starlette then raises ``ClientDisconnect`` from the body read, which the SDK (``Error
    handling POST request``) and uvicorn (``Exception in ASGI application``) log at error
    level with the traceback. A handler's filter (before redaction flattens the traceback);
    below ``level`` the line is dropped, as the logger would have dropped an info line.
    """

    MESSAGE = "a client left before its request was read"

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.exc_info or not _client_left(record.exc_info[1]):
            return True
        if self.level > logging.INFO:
            return False
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        record.msg, record.args = self.MESSAGE, ()
        record.exc_info = record.exc_text = None
        return True


def _client_left(exc: BaseException | None) -> bool:
    """Whether ``exc`` is starlette's ``ClientDisconnect``, alone or as every leaf of an
    exception group (a task group inside the SDK). Known by name: starlette is imported only
    when serving HTTP, and this runs for every logged exception."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_client_left(inner) for inner in exc.exceptions)
    kind = type(exc)
    return kind.__name__ == "ClientDisconnect" and kind.__module__.startswith("starlette.")
