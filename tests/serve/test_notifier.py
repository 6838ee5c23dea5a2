"""Each client's outbox (`serve.notifier`): a client that does not read costs a bounded queue,
then hears what it missed; a request's own stream sends in order and drops what overflows."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server.connection import Connection

from toolfind.serve.notifier import Outboxes, RequestOutbox

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
        with anyio.fail_after(30):
            await stalled.arrived.wait()
        assert len(box.queue) < 50  # one is being sent, the rest wait
        assert box.dropped == 5000 - 50
        stalled.released.set()
        with anyio.fail_after(30):
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
        with anyio.fail_after(30):
            await box.settled()
    assert sent == [0, 1, 2, 3]
    assert box.dropped == 6
