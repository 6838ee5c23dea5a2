"""Shared fixtures: every test gets its own cache directory and working directory."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the cache at a fresh directory, clear toolfind's variables, work in tmp_path."""
    cache = tmp_path / "_cache"
    monkeypatch.setenv("TOOLFIND_CACHE_DIR", str(cache))
    for name in ("TOOLFIND_CATALOGS", "TOOLFIND_CONFIG", "TOOLFIND_TOKEN", "TOOLFIND_NO_FASTPATH"):
        monkeypatch.delenv(name, raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return cache
