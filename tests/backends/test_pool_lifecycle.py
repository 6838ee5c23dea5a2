"""BackendPool: what a backend's life looks like from outside, and the words for it.

A backend that failed for good is not callable (nor listed directly) until it is back; a
crash says how the process ended; a retry is ``retrying``, never ``connecting``; a call in
flight to a server removed or changed in the servers file says so; the servers-file watcher
never blocks on a FIFO or a device and says so once. Real backend processes
(tests/fixtures/backends/faulty_server.py); nothing sleeps: waits are on events and states,
each within a timeout.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import anyio
import pytest

from tests.backends.support import wait_for_state
from tests.helpers import BACKENDS
from tests.serve.support import Records, text_of
from toolfind.backends.config import ServerSpec, load_servers
from toolfind.backends.pool import BackendPool
from toolfind.errors import BackendError

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

FAULTY = BACKENDS / "faulty_server.py"
WAIT = 60.0


@pytest.fixture
def records() -> Iterator[Records]:
    handler = Records()
    log = logging.getLogger("toolfind.backends")
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.DEBUG)
    yield handler
    log.removeHandler(handler)
    log.setLevel(level)


@pytest.fixture
def errlog(tmp_path: Path) -> Iterator[TextIO]:
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as handle:
        yield handle


def faulty(name: str, *args: str) -> ServerSpec:
    return ServerSpec(
        name=name, transport="stdio", command=sys.executable, args=(str(FAULTY), *args)
    )


def restarts_fail_while(marker: Path) -> ServerSpec:
    """Starts once; while ``marker`` exists a start exits with status 4 before Python runs."""
    run = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAULTY))}"
    script = f"test -e {shlex.quote(str(marker))} && exit 4; touch {shlex.quote(str(marker))}; exec {run}"
    return ServerSpec(name="once", transport="stdio", command="sh", args=("-c", script))


async def test_a_backend_that_failed_for_good_is_not_callable_until_it_is_back(
    tmp_path: Path, errlog: TextIO
) -> None:
    marker = tmp_path / "started"
    changes: list[int] = []
    pool = BackendPool(
        [restarts_fail_while(marker)],
        backoff_initial=0.01,
        backoff_max=0.02,
        max_attempts=2,
        errlog=errlog,
    )
    with anyio.fail_after(WAIT):
        async with pool:
            await pool.wait_settled()
            pool.set_listener(lambda: changes.append(1))
            assert pool.serves("once__echo")
            with pytest.raises(BackendError, match="exited with status 3 during the call"):
                await pool.call("once__crash", {})
            await wait_for_state(pool, "once", "failed")
            status = pool.status()["once"]
            assert (status.available, status.detail) == (False, "exited with status 4")
            # Not callable, so not listed directly nor "callable" in search; the listener
            # ran, so clients are told (list_changed). Still known by name.
            assert not pool.serves("once__echo") and changes
            assert pool.route("once__echo") == ("once", "echo")
            assert "once__echo" in {t.name for t in pool.tools()}
            # Once it can start again, a call tries it once more and it is back.
            marker.unlink()
            seen = len(changes)
            assert text_of(await pool.call("once__echo", {"text": "back"})) == "back"
            assert pool.serves("once__echo") and pool.status()["once"].state == "ready"
            assert len(changes) > seen


async def test_a_backend_killed_from_outside_is_retrying_with_the_signal_that_killed_it(
    tmp_path: Path, errlog: TextIO, records: Records
) -> None:
    marker = tmp_path / "pids"
    async with BackendPool([faulty("k", "--marker", str(marker))], errlog=errlog) as pool:
        with anyio.fail_after(WAIT):
            await pool.wait_settled()
            first = int(marker.read_text(encoding="utf-8").split()[0])
            os.kill(first, signal.SIGKILL)
            await records.wait_for("server 'k' became unavailable: killed by signal 9 (SIGKILL)")
            assert pool.status()["k"].state in ("retrying", "ready")  # never "connecting" again
            await wait_for_state(pool, "k", "ready")
            assert text_of(await pool.call("k__echo", {"text": "again"})) == "again"


async def test_a_retry_under_way_is_retrying_with_the_last_error(
    tmp_path: Path, errlog: TextIO
) -> None:
    gate, up = tmp_path / "gate", tmp_path / "up"
    os.mkfifo(up)
    # Fails with status 5 until the gate exists; then says so through the FIFO and starts,
    # but answers nothing until the file "open" exists.
    lifecycle = BACKENDS / "lifecycle_server.py"
    script = (
        f"test -e {shlex.quote(str(gate))} || exit 5; echo up > {shlex.quote(str(up))}; "
        f"exec {shlex.quote(sys.executable)} {shlex.quote(str(lifecycle))} "
        f"--gate {shlex.quote(str(tmp_path / 'open'))}"
    )
    spec = ServerSpec(name="r", transport="stdio", command="sh", args=("-c", script))
    pool = BackendPool(
        [spec], backoff_initial=0.01, backoff_max=0.02, max_attempts=0, errlog=errlog
    )
    async with pool:
        with anyio.fail_after(WAIT):
            await pool.wait_settled()
            assert pool.status()["r"].detail == "exited with status 5"
            gate.write_text("", encoding="utf-8")
            await anyio.to_thread.run_sync(up.read_text, abandon_on_cancel=True)  # an attempt is up
            status = pool.status()["r"]
            assert (status.state, status.detail) == ("retrying", "exited with status 5")
            (tmp_path / "open").write_text("", encoding="utf-8")
            await wait_for_state(pool, "r", "ready")


def write_servers(path: Path, names: list[str], *extra: str) -> Path:
    servers = {name: {"command": sys.executable, "args": [str(FAULTY), *extra]} for name in names}
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ("remove", r"^server 'a' was removed from the servers file during the call$"),
        (
            "change",
            r"^server 'a' was changed in the servers file during the call; it is being "
            r"restarted with its new settings$",
        ),
    ],
)
async def test_a_call_in_flight_to_a_server_removed_or_changed_says_so(
    tmp_path: Path, errlog: TextIO, edit: str, expected: str
) -> None:
    servers = write_servers(tmp_path / "servers.json", ["a", "b"])
    pool = BackendPool(load_servers([servers]), servers_files=[servers], errlog=errlog)
    async with pool:
        with anyio.fail_after(WAIT):
            await pool.wait_settled()
            failure: list[BaseException] = []

            async def call() -> None:
                try:
                    await pool.call("a__hang", {})
                except BackendError as exc:
                    failure.append(exc)

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await anyio.wait_all_tasks_blocked()
                names = ["b"] if edit == "remove" else ["a", "b"]
                extra = () if edit == "remove" else ("--page-size", "4")
                pool.update(load_servers([write_servers(servers, names, *extra)]))
            assert len(failure) == 1
            assert_message(str(failure[0]), expected)


def assert_message(message: str, pattern: str) -> None:
    import re

    assert re.match(pattern, message), message


async def test_the_servers_watcher_ignores_a_fifo_or_a_device_in_one_line_and_keeps_serving(
    tmp_path: Path, errlog: TextIO, records: Records
) -> None:
    servers = write_servers(tmp_path / "servers.json", ["a"])
    pool = BackendPool(load_servers([servers]), servers_files=[servers], errlog=errlog)
    async with pool, anyio.create_task_group() as tg:
        tg.start_soon(pool.watch_servers, 0.05)
        with anyio.fail_after(WAIT):
            await pool.wait_settled()
            os.mkfifo(tmp_path / "fifo")  # nobody ever writes to it: reading it would block
            os.replace(tmp_path / "fifo", servers)
            await records.wait_for("servers file change ignored")
            # The event loop was never held: the pool still answers.
            assert text_of(await pool.call("a__echo", {"text": "still"})) == "still"
            (tmp_path / "zero").symlink_to("/dev/zero")  # endless: never read whole
            os.replace(tmp_path / "zero", servers)
            await records.wait_for("(a device)")
            assert text_of(await pool.call("a__echo", {"text": "here"})) == "here"
        tg.cancel_scope.cancel()
    ignored = [m for m in records.messages if "servers file change ignored" in m]
    assert len(ignored) == 2, ignored  # one line each, not one per poll
    assert "FIFO" in ignored[0] and str(servers) in ignored[0]
    assert pool.status()["a"].state == "ready"
