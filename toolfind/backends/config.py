"""Backend MCP servers, read from the config files MCP hosts already use.

* Claude Desktop ``claude_desktop_config.json`` and Cursor ``mcp.json``:
  ``{"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}``;
* Claude Code ``.mcp.json``: the same, plus ``"type": "stdio" | "http" | "sse"``;
* VS Code ``.vscode/mcp.json``: ``{"servers": {"name": {"type", ...}}, "inputs": [...]}``
  (``type`` required; comments and trailing commas allowed), or a ``settings.json``
  holding ``{"mcp": {"servers": {...}}}``.

``${VAR}``, ``${VAR:-default}``, ``${env:VAR}``, ``${userHome}`` and ``${workspaceFolder}``
are expanded in ``command``, ``args``, ``env``, ``url``, ``headers`` and ``cwd``;
``${input:...}`` (a VS Code prompt) is refused with a message saying what to write instead. Unknown keys are ignored, as the hosts ignore them. toolfind
adds two optional keys per server: ``allow`` and ``deny``, glob patterns over the backend's
own tool names. No heavy imports: the CLI validates a servers file without the MCP SDK.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from toolfind.errors import ConfigError, UsageError

#: A servers file's key made safe for tool names and file stems: ``shapes.host_safe``.
from toolfind.shapes import host_safe as safe_name

__all__ = [
    "ServerSpec",
    "Transport",
    "check_separator",
    "load_servers",
    "read_servers_file",
    "safe_name",
]

logger = logging.getLogger("toolfind.serve")

Transport = Literal["stdio", "http", "sse"]

#: ``type`` values the hosts write, mapped to the transport toolfind uses.
_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "sse": "sse",
}

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_separator(separator: str) -> str:
    """``separator`` if `safe_name` keeps it as it is; else a UsageError."""
    if not separator or safe_name(separator) != separator:
        raise UsageError(f"--separator {separator!r}: use letters, digits, _ or -")
    return separator


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One backend MCP server as a servers file declares it (variables already expanded).

    ``name`` is the file's key made safe for tool names and file stems (``safe_name``);
    it is the namespace of the server's tools. ``env``, ``headers``, ``args`` and ``url``
    may hold secrets: they are left out of ``repr``, never logged (`describe` is safe), and
    made known to `toolfind.backends.redact` as the spec is made.
    """

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = field(default=(), repr=False)
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    disabled: bool = False
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    origin: str = ""

    def __post_init__(self) -> None:
        # Whatever text a library makes of this server (an HTTP error naming its URL), the
        # one redaction knows its secrets from now on.
        from toolfind.backends.redact import remember

        remember(self)

    def allows(self, tool_name: str) -> bool:
        """Whether the backend tool ``tool_name`` may be listed, found and called.

        ``deny`` wins over ``allow``; an empty ``allow`` allows every tool.
        """
        if any(fnmatchcase(tool_name, pattern) for pattern in self.deny):
            return False
        return not self.allow or any(fnmatchcase(tool_name, pattern) for pattern in self.allow)

    def describe(self) -> str:
        """Where the server runs, without arguments, env or headers (they may hold secrets),
        and a URL as its origin alone (`redact.show_url`: a key may be in its path)."""
        if self.transport == "stdio":
            return f"stdio: {Path(self.command or '').name}"
        from toolfind.backends.redact import show_url

        return f"{self.transport}: {show_url(self.url or '')}"


def load_servers(
    paths: Sequence[Path], environ: Mapping[str, str] | None = None
) -> list[ServerSpec]:
    """Read every servers file in order; a server name defined twice keeps its first definition
    (the later one is logged). ``environ`` supplies ``${VAR}`` values (default ``os.environ``).

    Raises ConfigError (file, JSON path, and the fix) for an unreadable file or invalid entry.
    """
    env = os.environ if environ is None else environ
    seen: dict[str, ServerSpec] = {}
    for path in paths:
        for spec in read_servers_file(Path(path), env):
            first = seen.setdefault(spec.name, spec)
            if first is not spec:
                logger.warning(
                    "%s: server %r is already defined in %s; the first definition wins",
                    spec.origin,
                    spec.name,
                    first.origin,
                )
    return list(seen.values())


def read_servers_file(path: Path, environ: Mapping[str, str]) -> list[ServerSpec]:
    """The servers one file declares, in file order. Raises ConfigError."""
    doc = _parse(path)
    if not isinstance(doc, dict):
        raise ConfigError(_NOT_A_SERVERS_FILE, file=str(path))
    if isinstance(doc.get("mcpServers"), dict):
        key, servers, vscode = "mcpServers", doc["mcpServers"], False
    elif isinstance(doc.get("servers"), dict):
        key, servers, vscode = "servers", doc["servers"], True
    elif isinstance(doc.get("mcp"), dict) and isinstance(doc["mcp"].get("servers"), dict):
        key, servers, vscode = "mcp.servers", doc["mcp"]["servers"], True
    else:
        for candidate in ("mcpServers", "servers"):
            if candidate in doc:
                raise ConfigError(
                    "must be an object mapping server names to servers",
                    file=str(path),
                    path=candidate,
                )
        raise ConfigError(_NOT_A_SERVERS_FILE, file=str(path))
    reader = _EntryReader(path, environ, vscode=vscode)
    return [reader.read(f"{key}.{name}", name, entry) for name, entry in servers.items()]


_NOT_A_SERVERS_FILE = (
    'no servers found; expected {"mcpServers": {...}} (Claude Desktop, Claude Code, Cursor) '
    'or {"servers": {...}} (VS Code .vscode/mcp.json)'
)


def _parse(path: Path) -> Any:
    from toolfind.userfiles import FileProblem, read_capped

    try:
        text = read_capped(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 (byte {exc.start})", file=str(path)) from None
    except FileProblem as exc:
        raise ConfigError(exc.message, file=str(path)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as first:
        # VS Code's mcp.json is JSON with comments and trailing commas.
        try:
            return json.loads(_strip_jsonc(text))
        except json.JSONDecodeError:
            from toolfind.catalog.parse import json_error

            raise ConfigError(
                json_error(first),
                file=str(path),
                line=first.lineno,
            ) from None


#: A string (kept), a comment (its newlines kept, so line numbers hold) or a trailing comma.
_JSONC = re.compile(r'"(?:\\.|[^"\\])*"?|//[^\n]*|/\*(?:.*?\*/|.*)|,(?=[ \t\r\n]*[}\]])', re.S)


def _strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas as plain JSON; line numbers are kept."""

    def replace(match: re.Match[str]) -> str:
        found = match.group()
        if found[0] == '"':
            return found
        return " " if found == "," else "\n" * found.count("\n")

    return _JSONC.sub(replace, text)


class _EntryReader:
    """Turns one server entry into a ServerSpec, with errors naming the file and JSON path."""

    def __init__(self, path: Path, environ: Mapping[str, str], *, vscode: bool) -> None:
        self.path = path
        self.environ = environ
        self.vscode = vscode
        parent = path.resolve().parent
        # `${workspaceFolder}` and relative `cwd` mean the project, not its .vscode folder.
        self.workspace = parent.parent if parent.name in (".vscode", ".cursor") else parent

    def error(self, where: str, message: str) -> ConfigError:
        return ConfigError(message, file=str(self.path), path=where)

    def read(self, where: str, key: str, entry: Any) -> ServerSpec:
        if not isinstance(entry, dict):
            raise self.error(where, "must be an object with a command or a url")
        transport = self._transport(where, entry)
        if transport == "stdio":
            command = self._string(
                f"{where}.command", entry.get("command"), required="a stdio server runs a command"
            )
            url = None
            headers: dict[str, str] = {}
        else:
            command = None
            url = self._string(
                f"{where}.url", entry.get("url"), required=f"an {transport} server needs its URL"
            )
            if not url.startswith(("http://", "https://")):
                raise self.error(f"{where}.url", "must start with http:// or https://")
            headers = self._strings_map(f"{where}.headers", entry.get("headers"))
        env = {}
        if entry.get("envFile") is not None:
            env = self._env_file(f"{where}.envFile", entry["envFile"])
        env.update(self._strings_map(f"{where}.env", entry.get("env")))
        cwd = None
        if entry.get("cwd") is not None:
            cwd = str(self.workspace / self._string(f"{where}.cwd", entry["cwd"]))
        disabled = entry.get("disabled", False)
        if not isinstance(disabled, bool):
            raise self.error(f"{where}.disabled", "must be true or false")
        return ServerSpec(
            name=safe_name(key),
            transport=transport,
            command=command,
            args=self._strings_list(f"{where}.args", entry.get("args")),
            env=env,
            cwd=cwd,
            url=url,
            headers=headers,
            disabled=disabled,
            allow=self._globs(f"{where}.allow", entry.get("allow")),
            deny=self._globs(f"{where}.deny", entry.get("deny")),
            origin=f"{self.path}: {where}",
        )

    def _transport(self, where: str, entry: Mapping[str, Any]) -> Transport:
        declared = entry.get("type")
        if declared is None:
            if self.vscode:
                raise self.error(
                    f"{where}.type",
                    'required in VS Code\'s "servers"; add "type": "stdio" (or "http", "sse")',
                )
            if "command" in entry and "url" in entry:
                raise self.error(
                    where, 'has both command and url; add "type": "stdio", "http" or "sse"'
                )
            if "command" in entry:
                return "stdio"
            if "url" in entry:
                return "http"
            raise self.error(where, "needs a command (stdio server) or a url (HTTP server)")
        transport = _TYPES.get(declared.lower()) if isinstance(declared, str) else None
        if transport is None:
            raise self.error(
                f"{where}.type", f'unknown type {declared!r}; use "stdio", "http" or "sse"'
            )
        return transport

    def _string(self, where: str, value: Any, *, required: str = "") -> str:
        if value is None and required:
            raise self.error(where, f"required: {required}")
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.error(
                where, "must be a non-empty string" if required else "must be a string"
            )
        return _VARIABLE.sub(lambda match: self._variable(where, match.group(1)), value)

    def _strings_list(self, where: str, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.error(where, "must be a list of strings")
        return tuple(self._string(f"{where}[{i}]", item) for i, item in enumerate(value))

    def _strings_map(self, where: str, value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(where, "must be an object of string values")
        result = {}
        for name, item in value.items():
            if isinstance(item, int | float) and not isinstance(item, bool):
                item = str(item)
            result[str(name)] = self._string(f"{where}.{name}", item)
        return result

    def _env_file(self, where: str, value: Any) -> dict[str, str]:
        """VS Code's ``envFile``: ``KEY=VALUE`` lines, ``#`` comments, optional quotes."""
        path = self.workspace / self._string(where, value, required="the path of a .env file")
        from toolfind.userfiles import FileProblem, read_capped

        try:
            lines = read_capped(path).decode("utf-8").splitlines()
        except (FileProblem, UnicodeDecodeError) as exc:
            raise self.error(where, f"cannot read {path}: {exc}") from None
        env = {}
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            name, _, val = line.removeprefix("export ").partition("=")
            val = val.strip()
            if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
                val = val[1:-1]
            env[name.strip()] = val
        return env

    def _globs(self, where: str, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(where, 'must be a list of glob patterns such as ["git_*"]')
        return tuple(value)

    def _variable(self, where: str, inner: str) -> str:
        if inner.startswith("input:"):
            raise self.error(
                where,
                f"${{{inner}}} asks the VS Code user for a value, which toolfind cannot do; "
                "write the value, or ${env:NAME} and set NAME in the environment",
            )
        if inner.startswith("env:"):
            return self.environ.get(inner[4:], "")
        if inner == "workspaceFolder":
            return str(self.workspace)
        if inner == "userHome":
            return self.environ.get("HOME") or str(Path.home())
        name, sep, default = inner.partition(":-")
        if not _IDENTIFIER.fullmatch(name):
            raise self.error(
                where,
                f"unsupported variable ${{{inner}}}; use ${{NAME}}, ${{NAME:-default}} or ${{env:NAME}}",
            )
        value = self.environ.get(name)
        if sep and not value:
            return default
        if value is not None:
            return value
        raise self.error(
            where,
            f"${{{name}}} is not set; set {name} in the environment or write ${{{name}:-default}}",
        )
