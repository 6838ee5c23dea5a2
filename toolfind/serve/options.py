"""What `toolfind serve-mcp` is asked to do: options, the HTTP address, the tool filter.

Nothing here imports the MCP SDK: the CLI builds a `ServeOptions` cheaply.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from toolfind.backends.config import check_separator
from toolfind.config import DEFAULT_MAX_FILE_SIZE, Filters, parse_size
from toolfind.errors import ConfigError, UsageError
from toolfind.models import ScoringParams, Signals, Tool
from toolfind.serve import defaults
from toolfind.serve.defaults import Exposure

if TYPE_CHECKING:
    from toolfind.config import Run

EXPOSURES: tuple[Exposure, ...] = get_args(Exposure)
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error", "critical")
TOKEN_ENV = "TOOLFIND_TOKEN"
DEFAULT_HOST = "127.0.0.1"

#: Characters a meta-tool prefix may use. MCP hosts accept ``^[a-zA-Z0-9_-]{1,64}$`` only;
#: ``/``, ``.`` and ``:`` are allowed so ``--meta-prefix proxy/`` gives the exact names
#: some hosts (and the MCP Inspector) accept.
_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/.:")
_MAX_PREFIX = 40
#: The keys of ``[serve]`` in ``toolfind.toml`` read here.
SERVE_KEYS = ("allowed_hosts", "allowed_origins")


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
        UsageError: the text is not a port or ``HOST:PORT`` with a port in 0-65535.
    """
    raw = text.strip()
    host, port_text = DEFAULT_HOST, raw
    if raw.startswith("["):
        inside, bracket, rest = raw[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise UsageError(f"--http {text!r}: write an IPv6 host as [HOST]:PORT, e.g. [::1]:8080")
        host, port_text = inside, rest[1:]
    elif ":" in raw:
        host, _, port_text = raw.rpartition(":")
    if not host:
        raise UsageError(
            f"--http {text!r}: the host before ':' is empty; give [HOST:]PORT, e.g. 8080"
        )
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise UsageError(f"--http {text!r}: the port must be a number from 0 to 65535, e.g. 8080")
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
    exposure: Exposure = defaults.EXPOSURE
    meta_prefix: str = defaults.META_PREFIX
    http: HttpAddress | None = None
    token: str | None = None
    log_level: str = defaults.LOG_LEVEL
    params: ScoringParams = field(default_factory=ScoringParams)
    filters: Filters = field(default_factory=Filters)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    servers: tuple[Path, ...] = ()
    separator: str = defaults.SEPARATOR
    call_timeout: float = defaults.CALL_TIMEOUT
    watch: bool = True
    poll_interval: float = defaults.POLL_INTERVAL
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    header_timeout: float = defaults.HEADER_TIMEOUT
    body_timeout: float = defaults.BODY_TIMEOUT
    max_connections: int = defaults.MAX_CONNECTIONS
    use_cache: bool = True
    server_name: str = "toolfind"
    validate_arguments: bool = True
    retry_initial: float = defaults.RETRY_INITIAL
    retry_max: float = defaults.RETRY_MAX
    backend_wait: float = defaults.BACKEND_WAIT
    max_result_size: int = parse_size(defaults.MAX_RESULT_SIZE)
    #: The signals beyond BM25F (``config.for_run``'s; a switch None: on where installed).
    signals: Signals = field(default_factory=Signals)

    @classmethod
    def from_run(
        cls,
        run: Run,
        *,
        catalogs_given: bool = False,
        servers: Sequence[str] = (),
        http: str | None = None,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_result_size: str = defaults.MAX_RESULT_SIZE,
        **flags: Any,
    ) -> ServeOptions:
        """What serve-mcp is asked to do: the ``run``'s settings (``config.for_run``) with the
        command line's ``servers``, ``http``, allowed hosts and origins, ``max_result_size``
        and other fields (``flags``); its signals as the run resolved them; no shipped demo catalog when backends are given
        and no catalog is (``catalogs_given``). Raises ConfigError, UsageError."""
        from toolfind.config import servers_for, uses_packaged_catalogs

        config = run.config
        source = config.sources.get("serve.allowed_hosts") or config.sources.get(
            "serve.allowed_origins"
        )
        hosts, origins = allowed_from_config(config.serve, source, allowed_hosts, allowed_origins)
        backends = servers_for(servers, config)
        catalogs = run.paths
        if backends and not catalogs_given and uses_packaged_catalogs(run):
            catalogs = ()  # backends and no catalogs of the user's: not the shipped demo ones
        address = parse_http_address(http) if http else None
        try:
            size = parse_size(max_result_size)
        except ConfigError:
            raise UsageError(
                f"--max-result-size {max_result_size!r}: give a size such as 10MiB"
            ) from None
        return cls(
            catalogs=catalogs,
            http=address,
            params=run.params,
            filters=config.filters,
            max_file_size=config.max_file_size,
            servers=backends,
            allowed_hosts=hosts,
            allowed_origins=origins,
            max_result_size=size,
            signals=run.signals,
            **flags,
        )

    def checked(self, environ: dict[str, str] | None = None) -> ServeOptions:
        """A copy with the token resolved from the environment, after validating every field.

        Raises:
            UsageError: a bad exposure, prefix, log level, timeout or poll interval, or an
                HTTP address beyond this machine without a token.
        """
        env = os.environ if environ is None else environ
        if self.exposure not in EXPOSURES:
            raise UsageError(f"--exposure {self.exposure!r}: use one of {', '.join(EXPOSURES)}")
        if self.log_level.lower() not in LOG_LEVELS:
            raise UsageError(f"--log-level {self.log_level!r}: use one of {', '.join(LOG_LEVELS)}")
        if len(self.meta_prefix) > _MAX_PREFIX or not set(self.meta_prefix) <= _PREFIX_CHARS:
            raise UsageError(
                f"--meta-prefix {self.meta_prefix!r}: use at most {_MAX_PREFIX} letters, digits "
                "or _-/.: (MCP hosts accept tool names matching ^[a-zA-Z0-9_-]{1,64}$)"
            )
        if not self.call_timeout > 0:
            raise UsageError(
                f"--call-timeout {self.call_timeout!r}: give a number of seconds above 0"
            )
        if not 0 < self.retry_initial <= self.retry_max:
            raise UsageError(
                f"--retry-initial {self.retry_initial!r} / --retry-max {self.retry_max!r}: give "
                "seconds above 0, the initial wait at most the maximum"
            )
        if not 0 <= self.backend_wait <= 600:
            raise UsageError(f"--backend-wait {self.backend_wait!r}: give seconds from 0 to 600")
        if self.max_result_size < 1024:
            raise UsageError(
                f"--max-result-size {self.max_result_size!r}: give at least 1KiB, e.g. 10MiB"
            )
        check_separator(self.separator)
        if not 0.05 <= self.poll_interval <= 3600:
            raise UsageError(f"poll interval {self.poll_interval!r}: give 0.05 to 3600 seconds")
        for host in self.allowed_hosts:
            check_allowed_host(host)
        for origin in self.allowed_origins:
            check_allowed_origin(origin)
        if not (self.header_timeout > 0 and self.body_timeout > 0 and self.max_connections > 0):
            raise UsageError("HTTP limits: timeouts and the connection cap must be above 0")
        token = self.token if self.token else env.get(TOKEN_ENV) or None
        if self.http is not None and not self.http.is_loopback and not token:
            raise UsageError(
                f"--http {self.http.host}:{self.http.port} accepts connections from other machines: "
                f"give --token or set {TOKEN_ENV} (clients then send 'Authorization: Bearer <token>')"
            )
        return replace(self, token=token, log_level=self.log_level.lower())


def check_allowed_host(host: str) -> str:
    """``host`` if it is a ``--allowed-host`` value: ``NAME``, ``NAME:PORT``, ``[IPv6]``...

    Raises:
        UsageError: empty, or holding a scheme, a path, spaces or a wildcard.
    """
    if not host or any(c in host for c in " /\t*@,") or host.startswith(":"):
        raise UsageError(
            f"--allowed-host {host!r}: give a host name or address as clients send it in the "
            "Host header, optionally with :PORT (e.g. mybox.lan, 192.168.1.20:8765)"
        )
    return host


def check_allowed_origin(origin: str) -> str:
    """``origin`` if it is a ``--allowed-origin`` value: ``http(s)://HOST[:PORT]`` (``:*`` for
    any port).

    Raises:
        UsageError: not of that form.
    """
    scheme, sep, rest = origin.partition("://")
    if scheme not in ("http", "https") or not sep or not rest or any(c in rest for c in " /"):
        raise UsageError(
            f"--allowed-origin {origin!r}: give scheme://host[:port] as browsers send it in "
            "the Origin header (e.g. https://app.example.com, http://mybox.lan:*)"
        )
    return origin


def allowed_from_config(
    table: Mapping[str, Any], file: str | None, hosts: Iterable[str], origins: Iterable[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The allowed hosts and origins: ``[serve]`` ``allowed_hosts``/``allowed_origins`` from
    ``toolfind.toml``, then the command line's.

    Raises:
        ConfigError: a ``[serve]`` key is not a list of strings, or a value is malformed
            (naming the file).
        UsageError: a command-line value is malformed.
    """
    found: dict[str, list[str]] = {}
    for key in SERVE_KEYS:
        raw = table.get(key, [])
        if isinstance(raw, str):
            raw = [raw]
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise ConfigError("must be a list of strings", file=file, path=f"serve.{key}")
        for value in raw:
            try:
                (check_allowed_host if key == "allowed_hosts" else check_allowed_origin)(value)
            except ConfigError as exc:
                raise ConfigError(exc.message, file=file, path=f"serve.{key}") from None
        found[key] = raw
    all_hosts = [*found["allowed_hosts"], *(check_allowed_host(h) for h in hosts)]
    all_origins = [*found["allowed_origins"], *(check_allowed_origin(o) for o in origins)]
    return tuple(dict.fromkeys(all_hosts)), tuple(dict.fromkeys(all_origins))
