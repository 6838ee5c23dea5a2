"""What the backend client's tests share: waiting for a backend's state, on its own events."""

from __future__ import annotations

from toolfind.backends.pool import BackendPool


async def wait_for_state(pool: BackendPool, name: str, *states: str) -> None:
    """Return once the backend ``name`` of ``pool`` is in one of ``states`` (woken by each of
    its state changes, never by time)."""
    backend = next(b for b in pool._backends if b.name == name)
    while backend.state not in states:
        await backend.notice.wait()
