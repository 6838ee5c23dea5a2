"""The backend client runs on asyncio (``anyio.run``'s default): so do its tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"
