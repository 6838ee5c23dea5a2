"""The stdio transport to a backend, with a bounded, linear line reader.

The MCP SDK's ``stdio_client`` joins a long line by repeated string concatenation (a 50 MB
answer took 50 s to read) and has no size limit (its parsed copies took hundreds of MB).
This is the same transport (the SDK's own process start and shutdown) with a reader that
joins a line once and, past ``max_line`` characters, drops it and reports `MessageTooLarge`
instead. It also reports how a backend that closed its stdout ended (its exit status, before
the session sees the connection close), registers its process group with the pool's
`watchdog.ProcessGroups` while it runs, and after the SDK's shutdown stops whatever is left
in that group. When the SDK's private helpers are not there (another SDK version), the SDK's
own ``stdio_client`` is used, unbounded.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

from toolfind.backends.defaults import GATEWAY_ENV

__all__ = ["Launch", "LineSplitter", "MessageTooLarge", "bounded_stdio_client", "environment"]

logger = logging.getLogger("toolfind.backends")

#: Seconds a backend that closed its stdout has to exit before its session is told the
#: connection closed (so that the reason names its exit status).
EXIT_WAIT = 1.0
_EXIT_POLL = 0.01


class MessageTooLarge(Exception):
    """A backend wrote a message longer than the transport accepts (it was dropped)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"a message longer than {limit} characters")
        self.limit = limit


class LineSplitter:
    """Text chunks to whole lines, each joined once; a line longer than ``limit`` is
    dropped and a `MessageTooLarge` comes in its place (as soon as it passes the limit)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._parts: list[str] = []
        self._size = 0
        self._skipping = False

    def feed(self, chunk: str) -> list[str | MessageTooLarge]:
        out: list[str | MessageTooLarge] = []
        start = 0
        while True:
            end = chunk.find("\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if not self._skipping:
                self._parts.append(piece)
                self._size += len(piece)
                if self._size > self.limit:
                    self._parts, self._size, self._skipping = [], 0, True
                    out.append(MessageTooLarge(self.limit))
            if end < 0:
                return out
            start = end + 1
            if self._skipping:
                self._skipping = False
            else:
                out.append("".join(self._parts))
                self._parts, self._size = [], 0


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start a stdio backend: its command line, declared ``env`` and working directory."""

    command: str
    args: Sequence[str]
    env: Mapping[str, str]
    cwd: str | None = None
    encoding: str = "utf-8"
    errors: str = "strict"


#: What a stdio backend inherits of toolfind's environment, under its declared ``env`` (POSIX):
#: the MCP SDK's choice (``DEFAULT_INHERITED_ENV_VARS``), written here because backends start
#: before the SDK is imported. A value that is a shell function (``() {...``) is not passed.
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")


def environment(declared: Mapping[str, str]) -> dict[str, str]:
    """A POSIX backend's whole environment: `INHERITED` from toolfind's, then ``declared``,
    then the marker that tells a serve-mcp it would be its own backend (`defaults.GATEWAY_ENV`)."""
    inherited = {k: v for k in INHERITED if (v := os.environ.get(k)) and not v.startswith("()")}
    return inherited | dict(declared) | {GATEWAY_ENV: str(os.getpid())}


@asynccontextmanager
async def bounded_stdio_client(
    launch: Launch,
    *,
    errlog: TextIO | None,
    max_line: int,
    on_exit: Callable[[int], None] | None = None,
    groups: Any = None,
) -> AsyncIterator[Any]:
    """``mcp.client.stdio.stdio_client`` for ``launch`` with lines capped at ``max_line``.

    On POSIX the process starts (in a session of its own, as the SDK starts it) before the
    MCP SDK is imported: at serve-mcp's start the backends' own start-up then runs while
    toolfind imports the SDK (a second or more on a busy machine), not after.
    ``on_exit(status)`` learns the exit status of a backend that ended by itself (not one
    this transport stopped). ``groups`` (`watchdog.ProcessGroups`) holds the backend's process
    group while any of it runs.
    """
    import anyio
    import anyio.lowlevel

    process = await _start(launch, errlog, groups)
    from mcp.client import stdio as sdk

    helpers = _sdk_helpers(sdk)
    if helpers is None:  # another SDK version: its own client, unbounded
        async with _sdk_client(sdk, launch, process, groups, errlog) as streams:
            yield streams
        return
    # As in the SDK: no awaits between the spawn and the task group.
    pipes = _Pipes(launch, process, helpers, max_line=max_line, on_exit=on_exit, groups=groups)
    async with anyio.create_task_group() as tg:
        tg.start_soon(pipes.read_stdout)
        tg.start_soon(pipes.write_stdin)
        try:
            yield pipes.read_stream, pipes.write_stream
        finally:
            pipes.shutting_down = True
            with anyio.CancelScope(shield=True):
                await pipes.shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


class _Pipes:
    """One backend process's stdin and stdout as the session's streams (the SDK's recipe,
    with `LineSplitter` reading stdout), and their shutdown."""

    def __init__(
        self,
        launch: Launch,
        process: Any,
        helpers: tuple[Any, ...],
        *,
        max_line: int,
        on_exit: Callable[[int], None] | None,
        groups: Any,
    ) -> None:
        import anyio
        from mcp.shared.message import SessionMessage

        self.launch, self.process, self.max_line = launch, process, max_line
        self.on_exit, self.groups = on_exit, groups
        _, _, self.stop, self.drain, self.aclose_all, self.parse_line, self.flush_timeout = helpers
        self.read_writer, self.read_stream = anyio.create_memory_object_stream[
            SessionMessage | Exception
        ](0)
        self.write_stream, self.write_reader = anyio.create_memory_object_stream[SessionMessage](0)
        self.shutting_down = False
        self.writer_done = anyio.Event()

    async def read_stdout(self) -> None:
        import anyio
        from anyio.streams.text import TextReceiveStream

        process, launch = self.process, self.launch
        assert process.stdout is not None
        stdout = TextReceiveStream(process.stdout, encoding=launch.encoding, errors=launch.errors)
        try:
            async with self.read_writer:
                try:
                    lines = LineSplitter(self.max_line)
                    async for chunk in stdout:
                        for line in lines.feed(chunk):
                            message = line if isinstance(line, Exception) else self.parse_line(line)
                            await self.read_writer.send(message)
                    await self._report_exit()
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return  # the session is gone
                finally:
                    await self.drain(process)
        except anyio.ClosedResourceError:
            pass
        except (anyio.BrokenResourceError, ConnectionError) as exc:
            if not self.shutting_down:  # the session sees the read stream close
                logger.debug("reading a backend's stdout failed: %s", exc)

    async def write_stdin(self) -> None:
        import anyio

        process, launch = self.process, self.launch
        assert process.stdin is not None
        try:
            async with self.write_reader:
                async for session_message in self.write_reader:
                    json = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    data = (json + "\n").encode(encoding=launch.encoding, errors=launch.errors)
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # Its stdin broke: it exited, most likely; say how (unless this is our stop).
            await self._report_exit()
            await self.read_writer.aclose()
        finally:
            self.writer_done.set()

    async def _report_exit(self) -> None:
        await _report_exit(self.process, self.on_exit, 0 if self.shutting_down else EXIT_WAIT)

    async def shutdown(self) -> None:
        import anyio
        import anyio.lowlevel

        await _report_exit(self.process, self.on_exit, 0)  # it ended by itself before this stop?
        self.read_stream.close()
        self.write_stream.close()
        with anyio.move_on_after(self.flush_timeout):
            await self.writer_done.wait()
        await self.stop(self.process)
        await _stop_group(self.process, self.groups)
        streams = (self.read_stream, self.write_stream, self.read_writer, self.write_reader)
        await self.aclose_all(*streams)
        await anyio.lowlevel.checkpoint()


async def _start(launch: Launch, errlog: TextIO | None, groups: Any) -> Any:
    """The backend's process: on POSIX started as the SDK starts it (a session of its own)
    without importing the SDK, and registered in ``groups``; on Windows by the SDK (its
    executable lookup, a Job Object). None when the SDK lacks the helpers (`_sdk_client`)."""
    import anyio

    if sys.platform == "win32":
        from mcp.client import stdio as sdk

        helpers = _sdk_helpers(sdk)
        if helpers is None:
            return None
        executable, spawn = helpers[0], helpers[1]
        return await spawn(
            command=await executable(launch.command),
            args=list(launch.args),
            env=sdk.get_default_environment() | dict(launch.env) | {GATEWAY_ENV: str(os.getpid())},
            errlog=errlog or sys.stderr,
            cwd=launch.cwd,
        )
    process = await anyio.open_process(
        [launch.command, *launch.args],
        env=environment(launch.env),
        stderr=errlog or sys.stderr,
        cwd=launch.cwd,
        start_new_session=True,
    )
    _register(process, groups)
    return process


@asynccontextmanager
async def _sdk_client(
    sdk: Any, launch: Launch, process: Any, groups: Any, errlog: TextIO | None
) -> AsyncIterator[Any]:
    """The SDK's own ``stdio_client`` (another SDK version), after stopping ``process``."""
    if process is not None:
        await _stop_group(process, groups)
    params = sdk.StdioServerParameters(
        command=launch.command,
        args=list(launch.args),
        env=dict(launch.env) | {GATEWAY_ENV: str(os.getpid())},
        cwd=launch.cwd,
    )
    async with sdk.stdio_client(params, errlog=errlog or sys.stderr) as streams:
        yield streams


def _sdk_helpers(sdk: Any) -> tuple[Any, ...] | None:
    """The SDK's private stdio helpers this transport reuses, or None (another SDK version)."""
    try:
        return (
            sdk._get_executable_command,
            sdk._create_platform_compatible_process,
            sdk._stop_server_process,
            sdk._drain_stdout,
            sdk._aclose_all,
            sdk._parse_line,
            sdk._WRITER_FLUSH_TIMEOUT,
        )
    except AttributeError:
        return None


def _register(process: Any, groups: Any) -> None:
    """Hold the backend's process group in ``groups`` (its own session: the group id is its
    pid) until `_stop_group`."""
    if groups is not None and sys.platform != "win32":
        groups.add(int(process.pid))


async def _report_exit(process: Any, on_exit: Callable[[int], None] | None, wait: float) -> None:
    """The backend closed a pipe: ``on_exit(status)`` once it exits, if it does within
    ``wait`` seconds. Polls ``returncode`` as the SDK does: ``process.wait()`` would also
    wait for the end of pipes a child of the backend may still hold."""
    import anyio

    if on_exit is None:
        return
    with anyio.move_on_after(wait):
        while process.returncode is None:
            await anyio.sleep(_EXIT_POLL)
    if process.returncode is not None:
        on_exit(int(process.returncode))


async def _stop_group(process: Any, groups: Any) -> None:
    """After the SDK stopped the backend: stop what is left of its process group (a child
    that outlived it), then forget the group."""
    from toolfind.backends.watchdog import group_alive

    if groups is None or sys.platform == "win32":
        return
    pgid = int(process.pid)
    if group_alive(pgid):
        from mcp.os.posix.utilities import terminate_posix_process_tree

        await terminate_posix_process_tree(process, 2.0)
    if not group_alive(pgid):
        groups.discard(pgid)
