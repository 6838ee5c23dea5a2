"""Servers files: Claude Desktop, Claude Code, VS Code and Cursor shapes, variables, errors."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write
from toolfind.backends.config import ServerSpec, load_servers, safe_name
from toolfind.backends.redact import redact
from toolfind.errors import ConfigError


def one(path: Path, environ: dict[str, str] | None = None) -> ServerSpec:
    (spec,) = load_servers([path], environ or {})
    return spec


def error_of(path: Path, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_servers([path], environ or {})
    return str(info.value)


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


def test_a_missing_variable_without_default_is_one_clear_error(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".mcp.json",
        {"mcpServers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "${GITHUB_TOKEN}"}}}},
    )
    assert error_of(path) == (
        f"{path}: mcpServers.gh.env.TOKEN: ${{GITHUB_TOKEN}} is not set; "
        "set GITHUB_TOKEN in the environment or write ${GITHUB_TOKEN:-default}"
    )


def test_vscode_servers_need_a_type(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".vscode" / "mcp.json",
        {"servers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}},
    )
    assert error_of(path) == (
        f'{path}: servers.git.type: required in VS Code\'s "servers"; '
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


def test_vscode_input_variables_are_refused_with_the_fix(tmp_path: Path) -> None:
    path = write(
        tmp_path / ".vscode" / "mcp.json",
        {
            "inputs": [{"type": "promptString", "id": "api-key", "password": True}],
            "servers": {
                "perplexity": {
                    "type": "stdio",
                    "command": "npx",
                    "env": {"API_KEY": "${input:api-key}"},
                }
            },
        },
    )
    assert error_of(path) == (
        f"{path}: servers.perplexity.env.API_KEY: ${{input:api-key}} asks the VS Code user for a value, "
        "which toolfind cannot do; write the value, or ${env:NAME} and set NAME in the environment"
    )


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


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            {"other": 1},
            'no servers found; expected {"mcpServers": {...}} (Claude Desktop, Claude Code, Cursor) or {"servers": {...}} (VS Code .vscode/mcp.json)',
        ),
        (
            [1, 2],
            'no servers found; expected {"mcpServers": {...}} (Claude Desktop, Claude Code, Cursor) or {"servers": {...}} (VS Code .vscode/mcp.json)',
        ),
        ({"mcpServers": []}, "mcpServers: must be an object mapping server names to servers"),
        ({"mcpServers": {"a": "npx"}}, "mcpServers.a: must be an object with a command or a url"),
        (
            {"mcpServers": {"a": {}}},
            "mcpServers.a: needs a command (stdio server) or a url (HTTP server)",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "url": "http://y"}}},
            'mcpServers.a: has both command and url; add "type": "stdio", "http" or "sse"',
        ),
        (
            {"mcpServers": {"a": {"type": "ws", "url": "ws://y"}}},
            'mcpServers.a.type: unknown type \'ws\'; use "stdio", "http" or "sse"',
        ),
        (
            {"mcpServers": {"a": {"type": "http"}}},
            "mcpServers.a.url: required: an http server needs its URL",
        ),
        (
            {"mcpServers": {"a": {"url": "ftp://y"}}},
            "mcpServers.a.url: must start with http:// or https://",
        ),
        (
            {"mcpServers": {"a": {"command": ""}}},
            "mcpServers.a.command: must be a non-empty string",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "args": "-v"}}},
            "mcpServers.a.args: must be a list of strings",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "args": [1]}}},
            "mcpServers.a.args[0]: must be a string",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "env": {"A": None}}}},
            "mcpServers.a.env.A: must be a string",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "disabled": "yes"}}},
            "mcpServers.a.disabled: must be true or false",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "deny": [1]}}},
            'mcpServers.a.deny: must be a list of glob patterns such as ["git_*"]',
        ),
        (
            {"mcpServers": {"a": {"command": "${command:run}"}}},
            "mcpServers.a.command: unsupported variable ${command:run}; use ${NAME}, ${NAME:-default} or ${env:NAME}",
        ),
    ],
)
def test_invalid_entries_give_one_line_naming_file_and_path(
    tmp_path: Path, doc: Any, message: str
) -> None:
    path = write(tmp_path / "servers.json", doc)
    assert error_of(path) == f"{path}: {message}"


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
