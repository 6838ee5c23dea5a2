"""Serving one client over stdio, on stdin and stdout as asyncio pipes (no thread per line).

Under stdio nothing but the protocol reaches stdout: while serving, fd 1 points at stderr
(the SDK's ``stdio_server`` does it, and so does `claimed_pipes`), and every log line goes to
stderr.

The SDK reads stdin and writes stdout through ``anyio.wrap_file``: every line read, every
write and every flush is a hop to a worker thread and back. On a busy machine each hop waits
to be scheduled, and a ``proxy_search_tools`` round trip was mostly those waits. When both
are pipes or sockets (as MCP hosts start servers), `claimed_pipes` reads and writes them on the
event loop instead, and does what the SDK's own claim does: while serving, fd 0 reads
``/dev/null`` and fd 1 writes to stderr, so a stray ``print`` or a child process never
corrupts the protocol; both are restored afterwards. Anything else (a file, a terminal, a
non-asyncio loop): None, and the SDK's default is used.
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


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


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


class PipeWriter:
    """``write`` and ``flush`` as the SDK's stdout writer calls them."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def claimed_pipes() -> AsyncIterator[tuple[Any, Any] | None]:
    """(stdin lines, stdout writer) on the event loop, or None when they are not pipes."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        yield None
        return
    if not (_is_pipe(0) and _is_pipe(1)):
        yield None
        return
    import fcntl

    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    saved_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    saved_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=MAX_LINE, loop=loop)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop),
            os.fdopen(wire_in, "rb", buffering=0),
        )
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.streams.FlowControlMixin(loop=loop),
            os.fdopen(wire_out, "wb", buffering=0),
        )
        transports.append(write_transport)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        yield PipeLines(reader), PipeWriter(writer)
    finally:
        for transport in transports:
            transport.close()
        for fd, saved in ((0, saved_in), (1, saved_out)):
            with suppress(OSError):
                os.dup2(saved, fd)
            with suppress(OSError):
                os.close(saved)
