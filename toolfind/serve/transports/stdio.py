"""Serving one client over stdio, on stdin and stdout read and written on the event loop.

Under stdio nothing but the protocol reaches stdout: while serving, fd 1 points at stderr
(the SDK's ``stdio_server`` does it, and so does `claimed_pipes`), and every log line goes to
stderr.

The SDK reads stdin and writes stdout through ``anyio.wrap_file``: every line read, every
write and every flush is a hop to a worker thread and back. On a busy machine each hop waits
to be scheduled, and a ``proxy_search_tools`` round trip was mostly those waits. Worse, a read
blocked in a worker thread cannot be cancelled: on a terminal (or with stdout to a file, which
sent the SDK's path there) SIGTERM and Ctrl-C were ignored until a line arrived. So
`claimed_pipes` reads and writes every kind of stdin and stdout on the event loop: pipes and
sockets as asyncio pipes; a terminal through a descriptor of its own, opened anew so that its
non-blocking mode never reaches the shell or the backends sharing the terminal; a regular file
or a device such as ``/dev/null`` (which never block) directly. It does what the SDK's own
claim does: while serving, fd 0 reads ``/dev/null`` and fd 1 writes to stderr, so a stray
``print`` or a child process never corrupts the protocol; both are restored afterwards.
Anything else (no asyncio loop, no ``fcntl``): None, and the SDK's default is used.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server

logger = logging.getLogger("toolfind.serve")


async def run_stdio(server: Server[Any]) -> None:
    """Serve one client over stdin/stdout until it closes stdin."""
    from mcp.server.stdio import stdio_server

    try:
        async with claimed_pipes() as pipes:
            stdin, stdout = pipes if pipes is not None else (None, None)
            async with stdio_server(stdin, stdout) as (read_stream, write_stream):
                # No initialization options: the runner builds them when `initialize` arrives,
                # with the instructions of the backends connected by then.
                await server.run(read_stream, write_stream, None)  # type: ignore[arg-type]
    except* (BrokenPipeError, ConnectionResetError):
        # The client went away while we were writing to it: nobody is left to answer.
        logger.info("the client closed its end of stdout; stopping")


#: A line longer than this is skipped whole (the SDK would answer a parse error); the
#: hardening tests send 20 MB lines.
MAX_LINE = 64 * 1024 * 1024


#: What `claimed_pipes` reads a file in.
_CHUNK = 1 << 16


def _kind(fd: int) -> str | None:
    """``pipe`` (a FIFO or a socket), ``tty``, ``file`` (a regular file or another character
    device, such as /dev/null), or None for anything else."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "pipe"
    if stat.S_ISCHR(mode) and os.isatty(fd):
        return "tty"
    if stat.S_ISREG(mode) or stat.S_ISCHR(mode):
        return "file"
    return None


class PipeLines:
    """The lines of a pipe, decoded as UTF-8 (errors replaced), as ``async for`` gives them."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                if not exc.partial:
                    raise StopAsyncIteration from None
                line = exc.partial
            except asyncio.LimitOverrunError as exc:
                await self._skip_line(exc.consumed)
                continue
            return line.decode("utf-8", errors="replace")

    async def _skip_line(self, consumed: int) -> None:
        await self._reader.readexactly(consumed)
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return


class FileLines:
    """The lines of a file or a device that never blocks (read directly, a chunk at a time,
    letting the loop run between chunks), as `PipeLines` gives them."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._eof = False
        self._skipping = False

    def __aiter__(self) -> FileLines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                if self._skipping:
                    self._skipping = False
                    continue
                return line.decode("utf-8", errors="replace")
            if self._eof:
                if not self._buffer or self._skipping:
                    raise StopAsyncIteration
                line = bytes(self._buffer)
                self._buffer.clear()
                return line.decode("utf-8", errors="replace")
            if len(self._buffer) > MAX_LINE:
                self._buffer.clear()
                self._skipping = True
            await asyncio.sleep(0)
            chunk = os.read(self._fd, _CHUNK)
            if chunk:
                self._buffer += chunk
            else:
                self._eof = True


class FileWriter:
    """``write`` and ``flush`` to a file or a device (a write there does not wait)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        while data:
            data = data[os.write(self._fd, data) :]

    async def flush(self) -> None:
        return None


class PipeWriter:
    """``write`` and ``flush`` as the SDK's stdout writer calls them."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _wire(fd: int, kind: str, flags: int) -> int:
    """A descriptor of its own to serve the wire on, for fd 0 or 1 of ``kind``.

    A terminal is opened anew (``O_NONBLOCK`` on the descriptor the shell, stderr and the
    backends share would make their writes fail with EAGAIN); pipes and files are duplicated.
    Raises OSError (a terminal without a name)."""
    import fcntl

    if kind == "tty":
        return os.open(os.ttyname(fd), flags | os.O_NOCTTY | os.O_CLOEXEC)
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)


@asynccontextmanager
async def claimed_pipes() -> AsyncIterator[tuple[Any, Any] | None]:
    """(stdin lines, stdout writer) served on the event loop, or None when they cannot be."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        yield None
        return
    kinds = (_kind(0), _kind(1))
    if os.name != "posix" or kinds[0] is None or kinds[1] is None:
        yield None
        return
    import fcntl

    try:
        wire_in = _wire(0, kinds[0], os.O_RDONLY)
    except OSError:
        yield None
        return
    try:
        wire_out = _wire(1, kinds[1], os.O_WRONLY)
    except OSError:
        os.close(wire_in)
        yield None
        return
    saved_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    saved_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    transports: list[asyncio.BaseTransport] = []
    own: list[int] = []
    try:
        lines: Any
        if kinds[0] == "file":
            own.append(wire_in)
            lines = FileLines(wire_in)
        else:
            reader = asyncio.StreamReader(limit=MAX_LINE, loop=loop)
            read_transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
                os.fdopen(wire_in, "rb", buffering=0),
            )
            transports.append(read_transport)
            lines = PipeLines(reader)
        out: Any
        if kinds[1] == "file":
            own.append(wire_out)
            out = FileWriter(wire_out)
        else:
            write_transport, protocol = await loop.connect_write_pipe(
                lambda: asyncio.streams.FlowControlMixin(loop=loop),
                os.fdopen(wire_out, "wb", buffering=0),
            )
            transports.append(write_transport)
            out = PipeWriter(asyncio.StreamWriter(write_transport, protocol, None, loop))
        yield lines, out
    finally:
        for transport in transports:
            transport.close()
        for fd in own:
            with suppress(OSError):
                os.close(fd)
        for fd, saved in ((0, saved_in), (1, saved_out)):
            with suppress(OSError):
                os.dup2(saved, fd)
            with suppress(OSError):
                os.close(saved)
