"""Shared fixtures: every test gets its own cache directory, working directory and home
(so no test reads the real user-wide config, ~/.config/toolfind/toolfind.toml)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the cache at a fresh directory, HOME and XDG_CONFIG_HOME at fresh ones, clear
    toolfind's variables, work in tmp_path."""
    cache = tmp_path / "_cache"
    monkeypatch.setenv("TOOLFIND_CACHE_DIR", str(cache))
    for name in ("TOOLFIND_CATALOGS", "TOOLFIND_CONFIG", "TOOLFIND_TOKEN", "TOOLFIND_NO_FASTPATH"):
        monkeypatch.delenv(name, raising=False)
    npm_cache = os.environ.get("npm_config_cache") or os.path.expanduser("~/.npm")
    if os.path.isdir(npm_cache):  # npx finds the packages it has already fetched
        monkeypatch.setenv("npm_config_cache", npm_cache)
    home = tmp_path / "_home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return cache
