"""BackendPool against a backend that misbehaves on request (tests/fixtures/backends/faulty_server.py).

Crash mid-call, a call that hangs, a process that freezes, a stderr flood, a tool list that
changes, malformed tools, a tool named like a meta-tool, a backend that cannot restart, and a
command that does not exist. One pool for the module; the tests run in file order and the
destructive ones come last. Nothing sleeps: waits are on events, each within a timeout. Calls
get a bound only a hang reaches (`WAIT`); the tests of a call that never answers shorten it
for that call alone (`short_calls`), so a loaded machine never turns an answer into a timeout.
"""

from __future__ import annotations

import logging
import re
import shlex
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

import anyio
import pytest

from tests.helpers import BACKENDS
from tests.serve.support import Records, text_of
from toolfind.backends.config import ServerSpec
from toolfind.backends.pool import BackendPool
from toolfind.errors import BackendError

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = BACKENDS / "faulty_server.py"
WAIT = 20.0
#: The call timeout of the calls that never answer.
SHORT = 1.0


@dataclass
class Changes:
    listener_calls: int = 0
    event: anyio.Event = field(default_factory=anyio.Event)

    def listener(self) -> None:
        self.listener_calls += 1
        self.event.set()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="module")
def records() -> Iterator[Records]:
    handler = Records()
    log = logging.getLogger("toolfind.backends")
    log.addHandler(handler)
    level = log.level
    log.setLevel(logging.DEBUG)
    yield handler
    log.removeHandler(handler)
    log.setLevel(level)


@pytest.fixture(scope="module")
def changes() -> Changes:
    return Changes()


@pytest.fixture(scope="module")
def errlog(workdir: Path) -> Iterator[TextIO]:
    with open(workdir / "stderr.log", "w", encoding="utf-8") as handle:
        yield handle


def faulty(name: str, *args: str) -> ServerSpec:
    return ServerSpec(
        name=name, transport="stdio", command=sys.executable, args=(str(SERVER), *args)
    )


@pytest.fixture(scope="module")
async def pool(
    workdir: Path, records: Records, changes: Changes, errlog: TextIO
) -> AsyncIterator[BackendPool]:
    once_marker = workdir / "once.marker"
    # Starts once; a restart finds the marker and exits at once, before Python even starts.
    once = ServerSpec(
        name="once",
        transport="stdio",
        command="sh",
        args=(
            "-c",
            f"test -e {shlex.quote(str(once_marker))} && exit 4; "
            f"exec {shlex.quote(sys.executable)} {shlex.quote(str(SERVER))} --marker {shlex.quote(str(once_marker))}",
        ),
    )
    specs = [
        replace(
            faulty("faulty", "--marker", str(workdir / "faulty.marker")), env={"DECLARED": "yes"}
        ),
        faulty("frozen"),
        once,
        ServerSpec(name="missing", transport="stdio", command=str(workdir / "no-such-server")),
    ]
    backends = BackendPool(
        specs,
        reserved_names={"faulty__search_tools"},
        start_timeout=WAIT,
        call_timeout=WAIT,
        errlog=errlog,
    )
    backends.set_listener(changes.listener)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOOLFIND_PARENT_ONLY", "must not leak")
        async with backends:
            await backends.wait_settled()
            yield backends


async def test_malformed_tools_are_dropped_with_a_warning_and_the_rest_kept(
    pool: BackendPool, records: Records
) -> None:
    names = {t.name for t in pool.tools() if t.namespace == "faulty"}
    assert {"faulty__echo", "faulty__crash", "faulty__hang", "faulty__add_tool"} <= names
    assert not any("broken" in n or "string_schema" in n for n in names)
    assert (
        records.count("server 'faulty': tool 'broken_schema' dropped: inputSchema is not an object")
        == 1
    )
    assert (
        records.count(
            """server 'faulty': tool 'string_schema' dropped: inputSchema does not have "type": "object\""""
        )
        == 1
    )
    assert records.count("server 'faulty': tool #11 dropped: has no name") == 1


async def test_every_page_of_tools_list_is_read(pool: BackendPool) -> None:
    # 9 tools in pages of 3: the last page comes after two nextCursor hops.
    assert sum(t.namespace == "faulty" for t in pool.tools()) == 9


@contextmanager
def short_calls(pool: BackendPool) -> Iterator[None]:
    """Calls made inside time out after `SHORT` seconds."""
    pool.call_timeout = SHORT
    try:
        yield
    finally:
        pool.call_timeout = WAIT


async def test_a_backend_tool_named_like_a_meta_tool_gets_another_name(
    pool: BackendPool, records: Records
) -> None:
    assert not pool.serves("faulty__search_tools")
    assert pool.route("faulty__search_tools_2") == ("faulty", "search_tools")
    assert records.count("is taken by the meta-tool 'faulty__search_tools'") == 1
    result = await pool.call("faulty__search_tools_2", {"query": "q"})
    assert text_of(result) == "backend search for q"


async def test_a_result_comes_back_unchanged(pool: BackendPool) -> None:
    result = await pool.call("faulty__echo", {"text": "héllo"})
    assert result.model_dump(by_alias=True, exclude_none=True) == {
        "content": [{"type": "text", "text": "héllo"}],
        "structuredContent": {"echo": "héllo"},
        "isError": False,
        "resultType": "complete",
    }


async def test_a_tool_error_keeps_is_error(pool: BackendPool) -> None:
    result = await pool.call("faulty__fail", {"message": "bad input"})
    assert result.is_error is True
    assert text_of(result) == "bad input"


async def test_a_call_that_hangs_times_out_and_the_backend_keeps_serving(pool: BackendPool) -> None:
    with (
        short_calls(pool),
        pytest.raises(BackendError, match=r"^server 'faulty' did not answer 'hang' within 1 s$"),
    ):
        await pool.call("faulty__hang", {})
    assert text_of(await pool.call("faulty__echo", {"text": "still here"})) == "still here"
    assert pool.status()["faulty"].available


async def test_a_stderr_flood_does_not_block_the_backend(
    pool: BackendPool, workdir: Path, errlog: TextIO
) -> None:
    assert text_of(await pool.call("faulty__shout", {"lines": 20_000})) == "done"
    assert text_of(await pool.call("faulty__echo", {"text": "after"})) == "after"
    errlog.flush()
    assert (workdir / "stderr.log").read_text(encoding="utf-8").count("shouting line") >= 20_000


async def test_list_changed_rereads_the_tools_and_tells_the_listeners(
    pool: BackendPool, changes: Changes
) -> None:
    changes.event = anyio.Event()  # backends joining at start ran the listener already
    calls = changes.listener_calls
    await pool.call("faulty__add_tool", {"name": "added_1"})
    with anyio.fail_after(WAIT):
        await changes.event.wait()
    assert pool.serves("faulty__added_1")
    assert changes.listener_calls == calls + 1
    # the fixture answers unknown tools with a tool error: it passes through as such
    result = await pool.call("faulty__added_1", {})
    assert result.is_error is True and text_of(result) == "unknown tool added_1"


async def test_a_backend_gets_its_declared_env_over_a_safe_default_not_the_parent_env(
    pool: BackendPool,
) -> None:
    assert text_of(await pool.call("faulty__env", {"name": "DECLARED"})) == "yes"
    assert text_of(await pool.call("faulty__env", {"name": "TOOLFIND_PARENT_ONLY"})) == ""
    assert text_of(await pool.call("faulty__env", {"name": "PATH"})) != ""


async def test_an_unknown_name_is_a_backend_error(pool: BackendPool) -> None:
    with pytest.raises(BackendError, match=r"^No backend serves 'faulty__nope'\.$"):
        await pool.call("faulty__nope", {})


async def test_a_missing_command_is_reported_once_and_marked_unavailable(
    pool: BackendPool, records: Records
) -> None:
    status = pool.status()["missing"]
    assert not status.available
    assert status.detail.startswith("command not found: ")
    assert (
        records.count("server 'missing' (stdio: no-such-server) is unavailable: command not found")
        == 1
    )


async def test_a_crash_mid_call_is_a_backend_error_and_the_next_call_restarts_it(
    pool: BackendPool, workdir: Path, records: Records
) -> None:
    marker = workdir / "faulty.marker"
    starts = len(marker.read_text(encoding="utf-8").split())
    crashed = "server 'faulty' became unavailable: exited with status 3 during a call to 'crash'"
    back = "server 'faulty' is available again"
    before = records.count(crashed), records.count(back)
    with pytest.raises(
        BackendError,
        match=r"^server 'faulty' exited with status 3 during the call; it is being restarted$",
    ):
        await pool.call("faulty__crash", {})
    status = pool.status()["faulty"]
    assert status.state == "retrying"  # not "connecting": it failed, and says how
    assert not status.available
    assert status.detail == "exited with status 3 during a call to 'crash'"
    assert pool.serves("faulty__echo")  # its tools stay listed while it is down
    assert text_of(await pool.call("faulty__echo", {"text": "back"})) == "back"
    assert pool.status()["faulty"].available
    assert len(marker.read_text(encoding="utf-8").split()) == starts + 1  # restarted once
    assert (records.count(crashed), records.count(back)) == (before[0] + 1, before[1] + 1)


async def test_a_backend_that_stops_answering_is_stopped_and_marked_unavailable(
    pool: BackendPool, records: Records
) -> None:
    with short_calls(pool), pytest.raises(BackendError, match="did not answer 'freeze' within 1 s"):
        await pool.call("frozen__freeze", {})
    with anyio.fail_after(WAIT):
        await records.wait_for("server 'frozen' became unavailable: stopped answering")
    status = pool.status()["frozen"]
    assert not status.available
    # Within SHORT or PING_TIMEOUT: whether the ping started before `short_calls` ended.
    assert re.fullmatch(r"stopped answering \(no reply to a ping within \d+ s\)", status.detail)
    assert pool.status()["faulty"].available  # every other backend keeps working


async def test_a_backend_that_cannot_restart_backs_off(pool: BackendPool) -> None:
    assert text_of(await pool.call("once__echo", {"text": "1"})) == "1"
    with pytest.raises(BackendError, match="exited with status 3 during the call"):
        await pool.call("once__crash", {})
    with pytest.raises(BackendError, match=r"^server 'once' is unavailable: exited with status 4$"):
        await pool.call("once__echo", {"text": "2"})
    with pytest.raises(
        BackendError, match=r"^server 'once' is unavailable \(.*\); toolfind retries it in \d+ s$"
    ):
        await pool.call("once__echo", {"text": "3"})
    assert not pool.status()["once"].available
