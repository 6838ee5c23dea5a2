"""BackendPool over real third-party MCP servers from PyPI: mcp-server-time and mcp-server-git.

One pool for the module (each server takes about two seconds to start); the tests only read
from it or call read-only tools.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TextIO

import pytest

from toolfind.backends.config import ServerSpec
from toolfind.backends.pool import BackendPool
from toolfind.errors import BackendError, ConfigError

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HOST_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def console_script(name: str, module: str) -> tuple[str, tuple[str, ...]]:
    """The installed console script next to this Python, else ``python -m module``."""
    script = Path(sys.executable).parent / name
    if script.exists():
        return str(script), ()
    return sys.executable, ("-m", module)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("repo")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "T")
    (repo / "README.md").write_text("hello\n", encoding="utf-8")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "first")
    (repo / "new.txt").write_text("untracked\n", encoding="utf-8")
    return repo


@pytest.fixture(scope="module")
def errlog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TextIO]:
    with open(tmp_path_factory.mktemp("logs") / "stderr.log", "w", encoding="utf-8") as handle:
        yield handle


@pytest.fixture(scope="module")
async def pool(repo: Path, errlog: TextIO) -> AsyncIterator[BackendPool]:
    time_cmd, time_args = console_script("mcp-server-time", "mcp_server_time")
    git_cmd, git_args = console_script("mcp-server-git", "mcp_server_git")
    specs = [
        ServerSpec(
            name="time",
            transport="stdio",
            command=time_cmd,
            args=(*time_args, "--local-timezone", "UTC"),
        ),
        ServerSpec(
            name="git",
            transport="stdio",
            command=git_cmd,
            args=(*git_args, "--repository", str(repo)),
            deny=("git_commit", "git_reset*"),
        ),
        ServerSpec(name="off", transport="stdio", command="never-run", disabled=True),
    ]
    async with BackendPool(specs, errlog=errlog, start_timeout=30, call_timeout=30) as started:
        await started.wait_settled()
        yield started


async def test_real_servers_start_and_expose_namespaced_tools(pool: BackendPool) -> None:
    names = {t.name for t in pool.tools()}
    assert {
        "time__get_current_time",
        "time__convert_time",
        "git__git_status",
        "git__git_log",
    } <= names
    assert all(HOST_NAME.match(name) for name in names)
    tool = next(t for t in pool.tools() if t.name == "time__get_current_time")
    assert tool.namespace == "time"
    assert tool.aliases == ("get_current_time",)
    assert tool.source is not None and tool.source.file == "mcp://time"
    assert tool.original is not None and tool.original["name"] == "get_current_time"
    assert tool.parameters["type"] == "object"
    assert pool.route("time__get_current_time") == ("time", "get_current_time")


async def test_annotations_are_kept_and_become_tags(pool: BackendPool) -> None:
    status = next(t for t in pool.tools() if t.name == "git__git_status")
    assert status.annotations["readOnlyHint"] is True
    assert "read-only" in status.all_tags


async def test_status_reports_every_enabled_server_with_its_tool_count(pool: BackendPool) -> None:
    status = pool.status()
    assert set(status) == {"time", "git"}
    assert status["time"].available and status["time"].tool_count == 2
    assert status["git"].available and status["git"].detail == ""


async def test_get_current_time_is_forwarded_and_its_result_comes_back_unchanged(
    pool: BackendPool,
) -> None:
    result = await pool.call("time__get_current_time", {"timezone": "UTC"})
    assert result.is_error is False
    assert isinstance(result.structured_content, dict)
    assert result.structured_content["timezone"] == "UTC"
    assert json.loads(result.content[0].text) == result.structured_content  # type: ignore[union-attr]


async def test_a_backend_tool_error_comes_back_as_is_error(pool: BackendPool) -> None:
    result = await pool.call("time__get_current_time", {"timezone": "Not/AZone"})
    assert result.is_error is True
    assert "Not/AZone" in result.content[0].text  # type: ignore[union-attr]


async def test_git_status_answers_what_git_itself_says(pool: BackendPool, repo: Path) -> None:
    result = await pool.call("git__git_status", {"repo_path": str(repo)})
    assert result.is_error is False
    assert result.content[0].text == "Repository status:\n" + git(repo, "status").rstrip("\n")  # type: ignore[union-attr]


async def test_denied_tools_are_neither_listed_nor_callable(pool: BackendPool, repo: Path) -> None:
    names = {t.name for t in pool.tools()}
    assert "git__git_commit" not in names and "git__git_reset" not in names
    assert not pool.serves("git__git_commit")
    with pytest.raises(BackendError, match="No backend serves 'git__git_commit'"):
        await pool.call("git__git_commit", {"repo_path": str(repo), "message": "x"})


def test_a_separator_outside_host_names_is_refused() -> None:
    with pytest.raises(ConfigError, match="--separator '/': use letters, digits, _ or -"):
        BackendPool([], separator="/")


def test_two_servers_with_one_name_are_refused() -> None:
    spec = ServerSpec(name="a", transport="stdio", command="x", origin="f.json: mcpServers.a")
    with pytest.raises(ConfigError, match="server name 'a' is used twice"):
        BackendPool([spec, spec])
