"""Servers files: Claude Desktop, Claude Code, VS Code and Cursor shapes, variables, entries
skipped with one line each (never the whole file), toolfind's own entry recognised, and the
servers ``toolfind.toml`` names (never from a file another user may have written)."""

from __future__ import annotations

import json
import logging
import os
import pwd
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.helpers import BACKENDS, run_main, write
from tests.serve.support import server_env, structured
from toolfind.backends.config import ServerSpec, Skipped, load_servers, safe_name, starts_toolfind
from toolfind.backends.redact import redact
from toolfind.errors import ConfigError
from toolfind.userfiles import user_config

TIMEOUT = 60


def one(path: Path, environ: dict[str, str] | None = None) -> ServerSpec:
    (spec,) = load_servers([path], environ or {})
    return spec


def error_of(path: Path, environ: dict[str, str] | None = None) -> str:
    """The error of a file that cannot be read as a whole."""
    with pytest.raises(ConfigError) as info:
        load_servers([path], environ or {})
    return str(info.value)


def skipped_of(path: Path, environ: dict[str, str] | None = None) -> str:
    """The one line an entry that cannot be served is skipped with (the file's only entry)."""
    skipped: list[Skipped] = []
    assert load_servers([path], environ or {}, skipped=skipped) == []
    (skip,) = skipped
    return str(skip)


def test_claude_desktop_entry_is_a_stdio_server(tmp_path: Path) -> None:
    path = write(
        tmp_path / "claude_desktop_config.json",
        {
            "mcpServers": {
                "filesystem": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                    "env": {"DEBUG": "1"},
                }
            },
            "globalShortcut": "Ctrl+Space",
        },
    )
    spec = one(path)
    assert spec.name == "filesystem"
    assert spec.transport == "stdio"
    assert spec.command == "npx"
    assert spec.args == ("-y", "@modelcontextprotocol/server-filesystem", "/tmp")
    assert dict(spec.env) == {"DEBUG": "1"}
    assert spec.url is None and not spec.disabled
    assert spec.origin == f"{path}: mcpServers.filesystem"


def test_claude_code_types_pick_the_transport(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "local": {"type": "stdio", "command": "srv"},
                "remote": {
                    "type": "http",
                    "url": "https://api.example.com/mcp",
                    "headers": {"X-Key": "k"},
                },
                "legacy": {"type": "sse", "url": "http://127.0.0.1:9000/sse"},
            }
        },
    )
    specs = {s.name: s for s in load_servers([path], {})}
    assert specs["local"].transport == "stdio"
    assert specs["remote"].transport == "http"
    assert dict(specs["remote"].headers) == {"X-Key": "k"}
    assert specs["legacy"].transport == "sse"
    assert specs["legacy"].url == "http://127.0.0.1:9000/sse"


def test_cursor_url_without_type_is_streamable_http(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".cursor" / "mcp.json", {"mcpServers": {"web": {"url": "https://x.example/mcp"}}}
    )
    spec = one(path)
    assert spec.transport == "http"
    assert spec.url == "https://x.example/mcp"


def test_claude_code_variables_expand_with_defaults(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "api": {
                    "type": "http",
                    "url": "${API_BASE_URL:-https://api.example.com}/mcp",
                    "headers": {"Authorization": "Bearer ${API_KEY}"},
                },
                "tool": {
                    "command": "${HOME}/bin/tool",
                    "args": ["--port", "${PORT:-8080}"],
                    "env": {"TOKEN": "${TOKEN}", "EMPTY_DEFAULT": "${UNSET:-}"},
                },
            }
        },
    )
    environ = {"API_KEY": "s3cret", "HOME": "/home/u", "TOKEN": "t0ken"}
    specs = {s.name: s for s in load_servers([path], environ)}
    assert specs["api"].url == "https://api.example.com/mcp"
    assert dict(specs["api"].headers) == {"Authorization": "Bearer s3cret"}
    assert specs["tool"].command == "/home/u/bin/tool"
    assert specs["tool"].args == ("--port", "8080")
    assert dict(specs["tool"].env) == {"TOKEN": "t0ken", "EMPTY_DEFAULT": ""}


def test_a_set_variable_wins_over_its_default(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json", {"mcpServers": {"a": {"command": "x", "args": ["${PORT:-8080}"]}}}
    )
    assert one(path, {"PORT": "9999"}).args == ("9999",)


def test_an_entry_with_a_missing_variable_is_skipped_with_one_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {"mcpServers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "${GITHUB_TOKEN}"}}}},
    )
    assert skipped_of(path) == (
        f"{path}: mcpServers.gh: server 'gh' skipped: env.TOKEN: ${{GITHUB_TOKEN}} is not set; "
        "set GITHUB_TOKEN in the environment or write ${GITHUB_TOKEN:-default}"
    )


def test_vscode_servers_need_a_type(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".vscode" / "mcp.json",
        {"servers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}},
    )
    assert skipped_of(path) == (
        f"{path}: servers.git: server 'git' skipped: type: required in VS Code's \"servers\"; "
        'add "type": "stdio" (or "http", "sse")'
    )


def test_vscode_file_with_comments_trailing_commas_and_env_variables(tmp_path: Path) -> None:
    text = """{
      // Servers for this workspace
      "inputs": [],
      "servers": {
        "git": {
          "type": "stdio",
          "command": "uvx",
          "args": ["mcp-server-git", "--repository", "${workspaceFolder}"], /* the repo */
          "env": {"HOME_DIR": "${userHome}", "LANG": "${env:LANG}", "URL": "http://a//b"},
        },
        "api": {"type": "http", "url": "https://example.com/mcp",},
      },
    }"""
    path = write(tmp_path / "proj" / ".vscode" / "mcp.json", text)
    specs = {s.name: s for s in load_servers([path], {"HOME": "/home/u", "LANG": "C.UTF-8"})}
    workspace = str((tmp_path / "proj").resolve())
    assert specs["git"].args == ("mcp-server-git", "--repository", workspace)
    assert dict(specs["git"].env) == {
        "HOME_DIR": "/home/u",
        "LANG": "C.UTF-8",
        "URL": "http://a//b",
    }
    assert specs["api"].transport == "http"


def test_a_vscode_input_variable_skips_that_entry_only_with_the_fix(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(
        tmp_path / ".vscode" / "mcp.json",
        {
            "inputs": [{"type": "promptString", "id": "api-key", "password": True}],
            "servers": {
                "perplexity": {
                    "type": "stdio",
                    "command": "npx",
                    "env": {"API_KEY": "${input:api-key}"},
                },
                "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
            },
        },
    )
    skipped: list[Skipped] = []
    with caplog.at_level(logging.WARNING):
        specs = load_servers([path], {}, skipped=skipped)
    assert [s.name for s in specs] == ["time"]
    assert [str(skip) for skip in skipped] == [
        f"{path}: servers.perplexity: server 'perplexity' skipped: env.API_KEY: "
        "${input:api-key} asks the VS Code user for a value, which toolfind cannot do; write "
        "the value there, or ${env:NAME} and set NAME in the environment"
    ]
    # One log line says so (the log's redaction may mask what follows a key's name).
    (line,) = [r.getMessage() for r in caplog.records]
    assert line.startswith(f"{path}: servers.perplexity: server 'perplexity' skipped: ")


def test_vscode_settings_json_mcp_servers_are_read(tmp_path: Path) -> None:
    path = write(
        tmp_path / "settings.json",
        {"editor.fontSize": 12, "mcp": {"servers": {"t": {"type": "stdio", "command": "t"}}}},
    )
    assert one(path).name == "t"


def test_vscode_env_file_is_read_and_env_overrides_it(tmp_path: Path) -> None:
    write(tmp_path / ".env", "# secrets\nexport A=1\nB='two words'\nC=3\n")
    path = write(
        tmp_path / ".vscode" / "mcp.json",
        {
            "servers": {
                "s": {
                    "type": "stdio",
                    "command": "s",
                    "envFile": "${workspaceFolder}/.env",
                    "env": {"C": "env"},
                }
            }
        },
    )
    assert dict(one(path).env) == {"A": "1", "B": "two words", "C": "env"}


def test_a_disabled_entry_that_cannot_be_read_is_skipped_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {"mcpServers": {"off": {"command": "${NOT_SET}", "disabled": True}}},
    )
    with caplog.at_level(logging.WARNING):
        assert load_servers([path], {}) == []
    assert caplog.text == ""


def test_cwd_disabled_and_unknown_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "off": {"command": "x", "disabled": True, "autoApprove": ["a"], "timeout": 60},
                "here": {"command": "y", "cwd": "sub/dir"},
            }
        },
    )
    specs = {s.name: s for s in load_servers([path], {})}
    assert specs["off"].disabled is True
    assert specs["here"].cwd == str(tmp_path.resolve() / "sub" / "dir")


def test_allow_and_deny_globs(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "git": {"command": "g", "allow": ["git_*"], "deny": ["git_reset", "git_commit*"]}
            }
        },
    )
    spec = one(path)
    assert spec.allows("git_status")
    assert not spec.allows("git_reset")
    assert not spec.allows("git_commit_all")
    assert not spec.allows("status")


def test_a_server_name_is_made_safe_for_tool_names(tmp_path: Path) -> None:
    path = write(tmp_path / ".mcp.json", {"mcpServers": {"My Server.v2": {"command": "x"}}})
    assert one(path).name == "My_Server_v2"
    assert safe_name("") == "_"


def test_the_first_definition_of_a_name_wins_and_the_duplicate_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = write(tmp_path / "a.json", {"mcpServers": {"git": {"command": "first"}}})
    second = write(
        tmp_path / "b.json",
        {"mcpServers": {"git": {"command": "second"}, "time": {"command": "t"}}},
    )
    with caplog.at_level(logging.WARNING):
        specs = load_servers([first, second], {})
    assert [(s.name, s.command) for s in specs] == [("git", "first"), ("time", "t")]
    assert (
        f"{second}: mcpServers.git: server 'git' is already defined in {first}: mcpServers.git"
        in caplog.text
    )


_NO_SERVERS = (
    'no servers found; expected {"mcpServers": {...}} (Claude Desktop, Claude Code, Cursor) or '
    '{"servers": {...}} (VS Code .vscode/mcp.json)'
)


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"other": 1}, _NO_SERVERS),
        ([1, 2], _NO_SERVERS),
        ({"mcpServers": []}, "mcpServers: must be an object mapping server names to servers"),
    ],
)
def test_a_file_with_no_servers_object_is_one_error(tmp_path: Path, doc: Any, message: str) -> None:
    path = write(tmp_path / "servers.json", doc)
    assert error_of(path) == f"{path}: {message}"


@pytest.mark.parametrize(
    ("entry", "reason"),
    [
        ("npx", "must be an object with a command or a url"),
        ({}, "needs a command (stdio server) or a url (HTTP server)"),
        (
            {"command": "x", "url": "http://y"},
            'has both command and url; add "type": "stdio", "http" or "sse"',
        ),
        (
            {"type": "ws", "url": "ws://y"},
            'type: unknown type \'ws\'; use "stdio", "http" or "sse"',
        ),
        ({"type": "http"}, "url: required: an http server needs its URL"),
        ({"url": "ftp://y"}, "url: must start with http:// or https://"),
        ({"command": ""}, "command: must be a non-empty string"),
        ({"command": "x", "args": "-v"}, "args: must be a list of strings"),
        ({"command": "x", "args": [1]}, "args[0]: must be a string"),
        ({"command": "x", "env": {"A": None}}, "env.A: must be a string"),
        ({"command": "x", "disabled": "yes"}, "disabled: must be true or false"),
        ({"command": "x", "defer": 1}, "defer: must be true or false"),
        ({"command": "x", "shared": "no"}, "shared: must be true or false"),
        (
            {"command": "x", "max_sessions": 0},
            "max_sessions: must be a whole number from 1 to 10000",
        ),
        ({"command": "x", "deny": [1]}, 'deny: must be a list of glob patterns such as ["git_*"]'),
        (
            {"command": "${command:run}"},
            "command: unsupported variable ${command:run}; use ${NAME}, ${NAME:-default} or "
            "${env:NAME}",
        ),
    ],
)
def test_an_invalid_entry_is_skipped_with_one_line_naming_file_entry_and_fix(
    tmp_path: Path, entry: Any, reason: str
) -> None:
    path = write(tmp_path / "servers.json", {"mcpServers": {"a": entry}})
    assert skipped_of(path) == f"{path}: mcpServers.a: server 'a' skipped: {reason}"


def test_the_other_entries_of_a_file_are_served_beside_a_skipped_one(tmp_path: Path) -> None:
    path = write(
        tmp_path / "servers.json",
        {"mcpServers": {"bad": {"command": ""}, "good": {"command": "g"}}},
    )
    assert [s.name for s in load_servers([path], {})] == ["good"]


def test_toolfind_keys_defer_shared_and_max_sessions(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "plain": {"command": "p"},
                "tuned": {"command": "t", "defer": True, "shared": True, "max_sessions": 3},
            }
        },
    )
    plain, tuned = load_servers([path], {})
    assert (plain.defer, plain.shared, plain.max_sessions) == (False, False, 32)
    assert (tuned.defer, tuned.shared, tuned.max_sessions) == (True, True, 3)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("toolfind", ["serve-mcp"]),
        ("/home/u/.venv/bin/toolfind", ["serve-mcp", "--servers", "claude.json"]),
        ("python3", ["-m", "toolfind", "serve-mcp"]),
        ("uvx", ["--from", "toolfind[semantic]", "toolfind", "serve-mcp"]),
        ("pipx", ["run", "toolfind==0.9", "serve-mcp"]),
        ("sh", ["-c", "exec toolfind serve-mcp --catalog /c"]),
        ("C:\\tools\\toolfind.exe", ["serve-mcp"]),
    ],
)
def test_an_entry_that_starts_toolfinds_own_gateway_is_recognised(
    command: str, args: list[str]
) -> None:
    assert starts_toolfind(command, args)


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("uvx", ["mcp-server-time"]),
        ("npx", ["toolfind-like", "serve-mcp"]),
        ("toolfind", ["search", "compress"]),
    ],
)
def test_other_commands_are_not_toolfind(command: str, args: list[str]) -> None:
    assert not starts_toolfind(command, args)


def test_a_pasted_host_config_listing_toolfind_skips_that_entry_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(
        tmp_path / "claude_desktop_config.json",
        {
            "mcpServers": {
                "toolfind": {"command": "toolfind", "args": ["serve-mcp", "--servers", "x"]},
                "time": {"command": "uvx", "args": ["mcp-server-time"]},
            }
        },
    )
    with caplog.at_level(logging.WARNING):
        assert [s.name for s in load_servers([path], {})] == ["time"]
    assert f"{path}: mcpServers.toolfind: server 'toolfind' skipped: it starts toolfind " in (
        caplog.text
    )


def test_env_numbers_are_taken_as_strings(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.json", {"mcpServers": {"a": {"command": "x", "env": {"PORT": 8080}}}}
    )
    assert dict(one(path).env) == {"PORT": "8080"}


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path / "s.json", '{\n  "mcpServers": {\n    "a": {"command": "x"}\n  \n')
    assert error_of(path).startswith(f"{path}:5: invalid JSON: ")


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    assert (
        error_of(tmp_path / "nope.json")
        == f"{tmp_path / 'nope.json'}: cannot read: No such file or directory"
    )


def test_secrets_stay_out_of_repr_and_description(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.json",
        {
            "mcpServers": {
                "a": {
                    "command": "/opt/bin/srv",
                    "args": ["--token", "argsecret"],
                    "env": {"KEY": "envsecret"},
                },
                "b": {
                    "url": "https://user:pw@host.example/mcp?key=querysecret",
                    "headers": {"Authorization": "Bearer hdrsecret"},
                },
            }
        },
    )
    a, b = load_servers([path], {})
    shown = repr(a) + repr(b) + a.describe() + b.describe()
    for secret in ("envsecret", "hdrsecret", "querysecret", "pw@"):
        assert secret not in shown
    assert a.describe() == "stdio: srv"
    assert b.describe() == "http: https://host.example"  # a key may be in the path
    # Declaring them made them known to the one redaction (toolfind.backends.redact).
    said = "argv --token argsecret env envsecret header Bearer hdrsecret key querysecret"
    assert redact(said) == "argv --token *** env *** header *** key ***"


# -- the servers toolfind.toml names, as serve-mcp and catalog pull read them ---------------


@pytest.mark.e2e
@pytest.mark.slow
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
    """A sticky, world-writable directory holding a toolfind.toml and the
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


@pytest.mark.e2e
@pytest.mark.slow
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


@pytest.mark.e2e
@pytest.mark.slow
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
