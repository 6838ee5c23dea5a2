"""serve-mcp runs on asyncio (``anyio.run``'s default): so do its tests. A catalog directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.serve.support import FILES, GIT, write_catalog


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    """``files`` and ``git`` (4 tools, one deferred) in a directory of their own."""
    write_catalog(tmp_path / "catalogs", "files", FILES)
    write_catalog(tmp_path / "catalogs", "git", GIT)
    return tmp_path / "catalogs"
