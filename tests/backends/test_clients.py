"""Each client's own sessions at a backend (``backends.clients``): a process per client for a
stdio backend, bounded, stopped when the client goes; one shared session for a ``shared``
server. A real pool over real stdio processes (``fixtures/backends/rogue_server.py``); every
wait is on an event (a reply, a process's end), within a timeout."""

from __future__ import annotations

import sys
from dataclasses import replace

import anyio
import pytest

from tests.helpers import BACKENDS
from tests.serve.support import gone_within, text_of
from toolfind.backends.config import ServerSpec
from toolfind.backends.pool import BackendPool
from toolfind.errors import BackendError

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

WAIT = 60.0
SPEC = ServerSpec(
    name="notes",
    transport="stdio",
    command=sys.executable,
    args=(str(BACKENDS / "rogue_server.py"), "notes", "notes"),
)


async def pid(pool: BackendPool, lane: object) -> int:
    result = await pool.call("notes__pid", {}, lane=lane)
    return int(text_of(result))


async def test_each_client_gets_a_process_of_its_own_and_loses_it_when_it_goes() -> None:
    one, two = object(), object()
    with anyio.fail_after(WAIT):
        async with BackendPool([SPEC], per_client=True) as pool:
            await pool.wait_settled()
            assert pool.lane("notes", one, start=False) is None  # no session yet: shared
            assert pool.lane("notes", one, start=True) is one
            shared, first, second = (
                await pid(pool, None),
                await pid(pool, one),
                await pid(pool, two),
            )
            assert len({shared, first, second}) == 3
            assert await pid(pool, one) == first  # the same session for its next request
            assert pool.lane("notes", one, start=False) is one
            assert pool.sessions_of(one) == ["notes"]
            pool.forget(one)
            assert await anyio.to_thread.run_sync(gone_within, first, 30)
            assert pool.sessions_of(one) == []
            assert await pid(pool, two) == second
            assert await pid(pool, one) not in (first, second)  # a fresh one


async def test_the_sessions_of_a_backend_are_bounded_with_a_clear_error() -> None:
    one, two = object(), object()
    with anyio.fail_after(WAIT):
        async with BackendPool([replace(SPEC, max_sessions=1)], per_client=True) as pool:
            await pool.wait_settled()
            await pid(pool, one)
            with pytest.raises(BackendError) as refused:
                await pid(pool, two)
            assert str(refused.value) == (
                "server 'notes' already runs 1 sessions, one per client, its most "
                "(max_sessions in ): try again when a client has left, or raise max_sessions"
            )
            pool.forget(one)
            await pid(pool, two)  # room again


async def test_a_shared_server_and_a_single_client_pool_use_the_shared_session() -> None:
    client = object()
    with anyio.fail_after(WAIT):
        async with BackendPool([replace(SPEC, shared=True)], per_client=True) as pool:
            await pool.wait_settled()
            assert pool.lane("notes", client, start=True) is None
        async with BackendPool([SPEC]) as pool:  # under stdio: one client, the host
            await pool.wait_settled()
            assert pool.lane("notes", client, start=True) is None


async def test_a_removed_server_stops_its_clients_sessions() -> None:
    client = object()
    with anyio.fail_after(WAIT):
        async with BackendPool([SPEC], per_client=True) as pool:
            await pool.wait_settled()
            own = await pid(pool, client)
            pool.update([])
            assert await anyio.to_thread.run_sync(gone_within, own, 30)
            assert pool.sessions_of(client) == []
