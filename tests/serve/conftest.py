"""serve-mcp runs on asyncio (``anyio.run``'s default): so do its tests. A catalog directory,
and a client of serve-mcp's server over it (in memory)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from tests.serve.support import FILES, GIT, make_server, write_catalog


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    """``files`` and ``git`` (4 tools, one deferred) in a directory of their own."""
    write_catalog(tmp_path / "catalogs", "files", FILES)
    write_catalog(tmp_path / "catalogs", "git", GIT)
    return tmp_path / "catalogs"


@pytest.fixture
async def client(catalog_dir: Path) -> AsyncIterator[Client]:
    """An in-memory client of serve-mcp over ``catalog_dir`` (no backends)."""
    server, _, _ = make_server([catalog_dir])
    async with Client(server, mode="legacy") as c:
        yield c
