"""Backend MCP servers, read from the config files MCP hosts already use.

* Claude Desktop ``claude_desktop_config.json`` and Cursor ``mcp.json``:
  ``{"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}``;
* Claude Code ``.mcp.json``: the same, plus ``"type": "stdio" | "http" | "sse"``;
* VS Code ``.vscode/mcp.json``: ``{"servers": {"name": {"type", ...}}, "inputs": [...]}``
  (``type`` required; comments and trailing commas allowed), or a ``settings.json``
  holding ``{"mcp": {"servers": {...}}}``.

``${VAR}``, ``${VAR:-default}``, ``${env:VAR}``, ``${userHome}`` and ``${workspaceFolder}``
are expanded in ``command``, ``args``, ``env``, ``url``, ``headers`` and ``cwd``. Unknown keys
are ignored, as the hosts ignore them. toolfind adds optional keys per server: ``allow`` and
``deny`` (glob patterns over the backend's own tool names), ``defer`` (its tools are
deferred), ``shared`` (one session for every client) and ``max_sessions``.

A host's whole config can be given as it is: an entry toolfind cannot use (``${input:...}``,
which VS Code asks its user for; a variable that is not set; a malformed entry) is skipped
with one warning line naming it and why, and so is an entry that starts toolfind's own
gateway (`starts_toolfind`): the others are served. No heavy imports: the CLI validates a
servers file without the MCP SDK.
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

from toolfind.backends import defaults
from toolfind.errors import ConfigError, UsageError

#: A servers file's key made safe for tool names and file stems: ``shapes.host_safe``.
from toolfind.shapes import host_safe as safe_name

__all__ = [
    "ServerSpec",
    "Skipped",
    "Transport",
    "check_separator",
    "load_servers",
    "read_servers_file",
    "safe_name",
    "starts_toolfind",
]

logger = logging.getLogger("toolfind.backends")

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
    #: Its tools are deferred (``defer`` in its entry).
    defer: bool = False
    #: One session for every client over HTTP, rather than one per client (``shared``).
    shared: bool = False
    #: Sessions it runs at most at once, one per client (``max_sessions``).
    max_sessions: int = defaults.MAX_SESSIONS

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


@dataclass(frozen=True, slots=True)
class Skipped:
    """A server entry not served: its name (as a `ServerSpec` would have it), where it is
    written (``file: mcpServers.name``) and why, in words that say the fix."""

    name: str
    origin: str
    reason: str

    def __str__(self) -> str:
        return f"{self.origin}: server {self.name!r} skipped: {self.reason}"


def load_servers(
    paths: Sequence[Path],
    environ: Mapping[str, str] | None = None,
    *,
    skipped: list[Skipped] | None = None,
) -> list[ServerSpec]:
    """Read every servers file in order; a server name defined twice keeps its first definition
    (the later one is logged). ``environ`` supplies ``${VAR}`` values (default ``os.environ``).
    An entry that cannot be served is logged in one line and left out (and added to
    ``skipped`` when a list is given).

    Raises ConfigError (file, JSON path, and the fix) for a file that cannot be read at all or
    holds no servers object.
    """
    env = os.environ if environ is None else environ
    seen: dict[str, ServerSpec] = {}
    for path in paths:
        for spec in read_servers_file(Path(path), env, skipped=skipped):
            first = seen.setdefault(spec.name, spec)
            if first is not spec:
                logger.warning(
                    "%s: server %r is already defined in %s; the first definition wins",
                    spec.origin,
                    spec.name,
                    first.origin,
                )
    return list(seen.values())


def read_servers_file(
    path: Path, environ: Mapping[str, str], *, skipped: list[Skipped] | None = None
) -> list[ServerSpec]:
    """The servers one file declares, in file order; each entry that cannot be served logged
    (and added to ``skipped``). Raises ConfigError for the file as a whole."""
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
    specs = []
    for name, entry in servers.items():
        where = f"{key}.{name}"
        try:
            spec = reader.read(where, name, entry)
            if spec.transport == "stdio" and starts_toolfind(spec.command or "", spec.args):
                raise reader.error(where, _SELF)
        except ConfigError as exc:
            skip = Skipped(safe_name(name), f"{path}: {where}", _reason(exc, where))
            off = isinstance(entry, dict) and entry.get("disabled") is True
            logger.log(logging.INFO if off else logging.WARNING, "%s", skip)
            if skipped is not None:
                skipped.append(skip)
            continue
        specs.append(spec)
    return specs


_SELF = (
    "it starts toolfind serve-mcp, this gateway itself; toolfind never serves itself (list "
    "the other servers only, or ignore this line)"
)


def _reason(exc: ConfigError, where: str) -> str:
    """The error's words, with the place inside the entry when it is deeper than the entry."""
    inner = (exc.path or "").removeprefix(where).lstrip(".")
    return f"{inner}: {exc.message}" if inner else exc.message


def starts_toolfind(command: str, args: Sequence[str]) -> bool:
    """Whether a stdio server's command line runs ``toolfind serve-mcp``: directly, through
    ``python -m``, ``uvx``/``pipx run``, or a shell's ``-c`` text (its words are looked at).
    A gateway started through a chain this cannot see (a script) is stopped by the
    environment marker (`defaults.GATEWAY_ENV`) instead."""
    words = [word for part in (command, *args) for word in part.split()]
    names = [re.split(r"[/\\]", word)[-1].lower() for word in words]
    if "serve-mcp" not in names:
        return False
    before = names[: names.index("serve-mcp")]
    return any(re.fullmatch(r"toolfind(?:\.exe)?(?:[@=\[<>~].*)?", name) for name in before)


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
        flags = {
            key: self._flag(f"{where}.{key}", entry.get(key, False))
            for key in ("disabled", "defer", "shared")
        }
        return ServerSpec(
            name=safe_name(key),
            transport=transport,
            command=command,
            args=self._strings_list(f"{where}.args", entry.get("args")),
            env=env,
            cwd=cwd,
            url=url,
            headers=headers,
            allow=self._globs(f"{where}.allow", entry.get("allow")),
            deny=self._globs(f"{where}.deny", entry.get("deny")),
            origin=f"{self.path}: {where}",
            max_sessions=self._count(f"{where}.max_sessions", entry.get("max_sessions")),
            **flags,
        )

    def _flag(self, where: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.error(where, "must be true or false")
        return value

    def _count(self, where: str, value: Any) -> int:
        if value is None:
            return defaults.MAX_SESSIONS
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10_000:
            raise self.error(where, "must be a whole number from 1 to 10000")
        return value

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
                "write the value there, or ${env:NAME} and set NAME in the environment",
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
