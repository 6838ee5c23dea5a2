"""What `toolfind serve-mcp` is asked to do: options, the HTTP address, the tool filter.

Nothing here imports the MCP SDK: the CLI builds a `ServeOptions` cheaply.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from toolfind.config import DEFAULT_MAX_FILE_SIZE, Filters
from toolfind.errors import ConfigError
from toolfind.models import ScoringParams, Tool

Exposure = Literal["direct", "search"]
EXPOSURES: tuple[Exposure, ...] = ("direct", "search")
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error", "critical")
TOKEN_ENV = "TOOLFIND_TOKEN"
DEFAULT_HOST = "127.0.0.1"

#: Characters a meta-tool prefix may use. MCP hosts accept ``^[a-zA-Z0-9_-]{1,64}$`` only;
#: ``/``, ``.`` and ``:`` are allowed so ``--meta-prefix proxy/`` gives the exact names
#: some hosts (and the MCP Inspector) accept.
_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/.:")
_MAX_PREFIX = 40


@dataclass(frozen=True, slots=True)
class HttpAddress:
    """Where streamable HTTP listens. ``port`` 0 asks the OS for a free port."""

    host: str = DEFAULT_HOST
    port: int = 8000

    @property
    def is_loopback(self) -> bool:
        """True when only this machine can connect (127.0.0.0/8, ::1 or ``localhost``)."""
        if self.host.lower() == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def url(self, port: int | None = None) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}/mcp"


def parse_http_address(text: str) -> HttpAddress:
    """Parse ``[HOST:]PORT`` (``8080``, ``0.0.0.0:8080``, ``[::1]:8080``).

    Raises:
        ConfigError: the text is not a port or ``HOST:PORT`` with a port in 0-65535.
    """
    raw = text.strip()
    host, port_text = DEFAULT_HOST, raw
    if raw.startswith("["):
        inside, bracket, rest = raw[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise ConfigError(
                f"--http {text!r}: write an IPv6 host as [HOST]:PORT, e.g. [::1]:8080"
            )
        host, port_text = inside, rest[1:]
    elif ":" in raw:
        host, _, port_text = raw.rpartition(":")
    if not host:
        raise ConfigError(
            f"--http {text!r}: the host before ':' is empty; give [HOST:]PORT, e.g. 8080"
        )
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ConfigError(f"--http {text!r}: the port must be a number from 0 to 65535, e.g. 8080")
    return HttpAddress(host=host, port=int(port_text))


def tool_allowed(filters: Filters, tool: Tool) -> bool:
    """The one predicate deciding what is listed, what search returns and what may be called:
    an enabled tool that ``filters`` allows (the rule of :mod:`toolfind.core.filters`)."""
    return tool.enabled and filters.allows(tool.namespace, tool.all_tags)


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """Everything `toolfind serve-mcp` needs; ``token`` falls back to ``$TOOLFIND_TOKEN``.

    ``catalogs`` are resolved paths (files or directories), watched while serving;
    ``servers`` are backend config files (``mcp.json`` and the like).
    """

    catalogs: tuple[Path, ...] = ()
    exposure: Exposure = "search"
    meta_prefix: str = "proxy_"
    http: HttpAddress | None = None
    token: str | None = None
    log_level: str = "warning"
    params: ScoringParams = field(default_factory=ScoringParams)
    filters: Filters = field(default_factory=Filters)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    servers: tuple[Path, ...] = ()
    separator: str = "__"
    call_timeout: float = 60.0
    watch: bool = True
    poll_interval: float = 1.0
    allowed_hosts: tuple[str, ...] = ()
    use_cache: bool = True
    server_name: str = "toolfind"
    #: The semantic signal: None on when the extra is installed, True required, False off.
    semantic: bool | None = None
    semantic_weight: float | None = None

    def checked(self, environ: dict[str, str] | None = None) -> ServeOptions:
        """A copy with the token resolved from the environment, after validating every field.

        Raises:
            ConfigError: a bad exposure, prefix, log level, timeout or poll interval, or an
                HTTP address beyond this machine without a token.
        """
        env = os.environ if environ is None else environ
        if self.exposure not in EXPOSURES:
            raise ConfigError(f"--exposure {self.exposure!r}: use one of {', '.join(EXPOSURES)}")
        if self.log_level.lower() not in LOG_LEVELS:
            raise ConfigError(f"--log-level {self.log_level!r}: use one of {', '.join(LOG_LEVELS)}")
        if len(self.meta_prefix) > _MAX_PREFIX or not set(self.meta_prefix) <= _PREFIX_CHARS:
            raise ConfigError(
                f"--meta-prefix {self.meta_prefix!r}: use at most {_MAX_PREFIX} letters, digits "
                "or _-/.: (MCP hosts accept tool names matching ^[a-zA-Z0-9_-]{1,64}$)"
            )
        if not self.call_timeout > 0:
            raise ConfigError(
                f"--call-timeout {self.call_timeout!r}: give a number of seconds above 0"
            )
        if not 0.05 <= self.poll_interval <= 3600:
            raise ConfigError(f"poll interval {self.poll_interval!r}: give 0.05 to 3600 seconds")
        token = self.token if self.token else env.get(TOKEN_ENV) or None
        if self.http is not None and not self.http.is_loopback and not token:
            raise ConfigError(
                f"--http {self.http.host}:{self.http.port} accepts connections from other machines: "
                f"give --token or set {TOKEN_ENV} (clients then send 'Authorization: Bearer <token>')"
            )
        return replace(self, token=token, log_level=self.log_level.lower())
