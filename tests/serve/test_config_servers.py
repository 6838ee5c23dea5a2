"""The servers toolfind.toml names, as serve-mcp and catalog pull read them: the same rule for
both (``config.servers_for``), and never from a file another user may have written: a
toolfind.toml owned by ``nobody`` above the working directory (issue 24's repro) does not make
either start its command. Real processes, real backends."""

from __future__ import annotations

import json
import os
import pwd
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.helpers import BACKENDS, run_main, write
from tests.serve.support import server_env, structured
from toolfind.userfiles import user_config

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TIMEOUT = 60


def test_catalog_pull_reads_the_servers_toolfind_toml_names() -> None:
    write(
        Path("mcp.json"),
        {
            "mcpServers": {
                "faulty": {"command": sys.executable, "args": [str(BACKENDS / "faulty_server.py")]}
            }
        },
    )
    write(Path("toolfind.toml"), 'servers = ["mcp.json"]\n')
    done = run_main("catalog", "pull", "--json")
    assert done.returncode == 0, done.stderr
    (pulled,) = json.loads(done.stdout)
    assert pulled["server"] == "faulty" and pulled["status"] == "written"
    assert json.loads(Path("catalogs/faulty.json").read_text(encoding="utf-8"))["tools"]
    os.remove("toolfind.toml")
    done = run_main("catalog", "pull")
    assert done.returncode == 2
    assert "no servers to pull: give --servers FILE, or set servers in toolfind.toml" in done.stderr


def planted(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Issue 24's repro: a sticky, world-writable directory holding a toolfind.toml and the
    servers file it names, both owned by nobody, whose one server writes ``marker`` when
    started; returns (the config, a working directory below it, the marker)."""
    try:
        nobody = pwd.getpwnam("nobody").pw_uid
    except KeyError:
        pytest.skip("no user 'nobody' here")
    if os.getuid() != 0:
        pytest.skip("giving files to another user (nobody) needs root")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    marker = tmp_path / "ran"
    command = f"open({str(marker)!r}, 'w').write('ran')"
    servers = write(
        shared / "evil.json",
        {"mcpServers": {"helper": {"command": sys.executable, "args": ["-c", command]}}},
    )
    config = write(shared / "toolfind.toml", 'servers = ["evil.json"]\n')
    for path in (servers, config):
        os.chown(path, nobody, -1)
    work = shared / "work"
    work.mkdir()
    return config, work, marker


def test_catalog_pull_never_runs_a_command_another_users_config_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, work, marker = planted(tmp_path)
    monkeypatch.chdir(work)
    done = run_main("catalog", "pull")
    assert done.returncode == 2 and not marker.exists()
    assert f"Warning: ignoring {config}: it is owned by nobody" in done.stderr
    # Trusted on purpose (--config, and the servers file's directory in safe_directories):
    # the same command runs, so the refusal above is what kept it from running.
    write(Path(user_config(os.environ)), f'safe_directories = ["{config.parent}"]\n')
    done = run_main("--config", str(config), "catalog", "pull")
    assert marker.read_text(encoding="utf-8") == "ran", done.stderr


@pytest.mark.anyio
async def test_serve_mcp_never_runs_a_command_another_users_config_names(
    tmp_path: Path,
) -> None:
    config, work, marker = planted(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        # The first tools/list waits for backends still starting: had the config's server
        # been started, it would have written the marker before the answer.
        args=["-m", "toolfind", "serve-mcp", "--backend-wait", "30"],
        env={**server_env(tmp_path), "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"]},
        cwd=str(work),
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params, mode="legacy") as client:
            await client.list_tools()
            categories = structured(await client.call_tool("proxy_tool_categories", {}))
    assert not marker.exists()
    assert "helper" not in {c["name"] for c in categories["categories"]}
