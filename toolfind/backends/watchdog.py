"""No backend process outlives serve-mcp: the registry of their process groups, and a watchdog.

Every stdio backend runs in a session and process group of its own (the MCP SDK starts it
so; its group id is its pid), so one signal reaches it and everything it started (``uvx``
and ``npx`` run the real server as a child). `ProcessGroups` is the pool's registry of those
groups: on SIGTERM or Ctrl-C serve-mcp signals them all at once instead of waiting out each
backend's grace period (`ProcessGroups.signal_all`).

A process killed with SIGKILL runs no code at all, so the registry is mirrored to a
**watchdog**: a small process (this file run as a script by the same Python, ``-I -S``, the
standard library only) started with the first backend. serve-mcp writes ``+PGID`` and
``-PGID`` lines to its stdin. When that pipe ends (serve-mcp exited, crashed or was killed),
the watchdog gives the groups still registered `GRACE` seconds to leave on their closed
stdin (as MCP's shutdown asks), then sends them SIGTERM, and SIGKILL `GRACE` seconds later.

Why a process and not ``PR_SET_PDEATHSIG``: that flag exists on Linux only, reaches only the
direct child (a wrapper's server, ``uvx``'s or ``npx``'s, would stay behind), fires when the
*thread* that spawned the child exits, not the process, and cannot escalate from SIGTERM to
SIGKILL. The watchdog works wherever process groups do, costs one small process per
serve-mcp (about 10 MB, idle on a blocking read) and nothing per backend. Windows: the SDK
puts each backend in a Job Object that is closed with serve-mcp; no watchdog is started.

Nothing here is imported at module level beyond the standard library: the script must run
without toolfind's dependencies (``-S`` skips site-packages).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

__all__ = ["GRACE", "ProcessGroups", "group_alive"]

#: Seconds the watchdog gives orphaned backends at each step (closed stdin, then SIGTERM).
GRACE = 2.0
_POLL = 0.05
#: Watchdogs whose pipe was closed while they were still running (see `ProcessGroups.close`).
_LINGERING: list[Any] = []


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a member (signal 0 probes it)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member we may not signal (or an unreaped zombie): not proven gone
    return True


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


class ProcessGroups:
    """The process groups of the backends running now, mirrored to a watchdog process.

    ``watch`` False keeps the registry without a watchdog (a platform without process
    groups, a frozen executable). The watchdog is started with the first group.
    """

    def __init__(self, *, watch: bool = True) -> None:
        self._groups: set[int] = set()
        self._watch = watch and os.name == "posix" and not getattr(sys, "frozen", False)
        self._pipe: int | None = None
        self._process: Any = None

    def __len__(self) -> int:
        return len(self._groups)

    def add(self, pgid: int) -> None:
        self._groups.add(pgid)
        self._tell(f"+{pgid}\n")

    def discard(self, pgid: int) -> None:
        """Forget ``pgid`` (its group is gone): a later group may reuse the number."""
        self._groups.discard(pgid)
        self._tell(f"-{pgid}\n")

    def signal_all(self, signum: int) -> int:
        """Send ``signum`` to every registered group; how many there were."""
        for pgid in list(self._groups):
            _signal_group(pgid, signum)
        return len(self._groups)

    def close(self) -> None:
        """Close the watchdog's pipe: it exits at once when no group is left registered (and
        stops the ones that are). Idempotent."""
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        if self._process:
            import subprocess

            try:  # with no group left it leaves at once: reap it
                self._process.wait(timeout=0 if self._groups else 1.0)
            except subprocess.TimeoutExpired:
                # It is stopping groups left behind: keep it referenced (reaped by a later
                # close) rather than reported as a leak.
                _LINGERING.append(self._process)
        self._process = None
        _LINGERING[:] = [p for p in _LINGERING if p.poll() is None]

    def _tell(self, line: str) -> None:
        if not self._watch:
            return
        if self._pipe is None and self._process is None:
            self._start()
        if self._pipe is None:
            return
        try:
            os.write(self._pipe, line.encode("ascii"))
        except OSError:  # the watchdog is gone: the registry still serves signal_all
            os.close(self._pipe)
            self._pipe = None

    def _start(self) -> None:
        import subprocess

        read, write = os.pipe()  # both ends close-on-exec: no backend inherits them
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__)],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,  # a terminal's Ctrl-C or hang-up does not reach it
            )
        except OSError:
            os.close(write)
            self._process = False  # never try again
            return
        finally:
            os.close(read)
        self._pipe = write


def watch(stream: int = 0, grace: float = GRACE) -> None:
    """The watchdog's body: read ``+PGID``/``-PGID`` lines until the pipe ends, then stop
    the groups still registered (closed stdin first, then SIGTERM, then SIGKILL)."""
    groups: set[int] = set()
    pending = b""
    while True:
        try:
            data = os.read(stream, 4096)
        except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for old Pythons
            continue
        if not data:
            break
        *lines, pending = (pending + data).split(b"\n")
        for line in lines:
            sign, number = line[:1], line[1:]
            if number.isdigit() and int(number) > 1:
                (groups.add if sign == b"+" else groups.discard)(int(number))
    for signum in (None, signal.SIGTERM, signal.SIGKILL):
        if signum is not None:
            for pgid in groups:
                _signal_group(pgid, signum)
        if signum == signal.SIGKILL:
            return
        deadline = time.monotonic() + grace
        while True:
            groups = {pgid for pgid in groups if group_alive(pgid)}
            if not groups:
                return
            if time.monotonic() >= deadline:
                break
            time.sleep(_POLL)


if __name__ == "__main__":
    # SIGINT from a terminal must not end the watch early (it runs in a session of its own,
    # so only a deliberate signal reaches it; the default handlers are fine for the rest).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch()
