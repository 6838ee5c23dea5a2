"""The commands that serve, pull or cache: serve-mcp, catalog pull and cache path/info/clear."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolfind.cli.common import (
    CatalogOpt,
    ColorOpt,
    JsonOpt,
    NoCacheOpt,
    RerankOpt,
    SemanticOpt,
    WeightOpt,
    _emit,
    _render,
    _shipped_note,
    _warn,
    app,
    reports_errors,
    subgroup,
)
from toolfind.serve import defaults
from toolfind.serve.defaults import Exposure

cache_app = subgroup("Inspect or clear the index cache.")
app.add_typer(cache_app, name="cache")

catalog_app = subgroup("Work with catalog files.")
app.add_typer(catalog_app, name="catalog")


# -- serve-mcp ---------------------------------------------------------------------------------


@app.command("serve-mcp")
@reports_errors
def serve_mcp(
    catalog: CatalogOpt = None,
    servers: Annotated[
        list[str] | None,
        typer.Option(
            "--servers",
            help="Backend MCP servers: a Claude Desktop, Claude Code, VS Code or Cursor config file (repeatable).",
            metavar="FILE",
        ),
    ] = None,
    exposure: Annotated[
        Exposure,
        typer.Option(
            "--exposure",
            help="search: list only the meta-tools; direct: also every callable, non-deferred tool.",
        ),
    ] = defaults.EXPOSURE,
    meta_prefix: Annotated[
        str, typer.Option("--meta-prefix", help="Prefix of the meta-tool names.")
    ] = defaults.META_PREFIX,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            help="Serve streamable HTTP on [HOST:]PORT (127.0.0.1 unless a host is given).",
            metavar="[HOST:]PORT",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", help="Bearer token HTTP clients must send (default $TOOLFIND_TOKEN)."
        ),
    ] = None,
    separator: Annotated[
        str,
        typer.Option("--separator", help="Between a backend server's name and its tool's name."),
    ] = defaults.SEPARATOR,
    call_timeout: Annotated[
        float, typer.Option("--call-timeout", help="Seconds a forwarded tool call may take.")
    ] = defaults.CALL_TIMEOUT,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", help="Seconds between catalog change checks.")
    ] = defaults.POLL_INTERVAL,
    no_watch: Annotated[
        bool, typer.Option("--no-watch", help="Do not watch the catalogs for changes.")
    ] = False,
    log_level: Annotated[
        str,
        typer.Option("--log-level", help="debug, info, warning, error or critical (on stderr)."),
    ] = defaults.LOG_LEVEL,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="With --http: also accept this Host header, NAME or NAME:PORT (repeatable).",
            metavar="HOST",
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-origin",
            help="With --http: also accept this Origin, scheme://host[:port] (repeatable).",
            metavar="ORIGIN",
        ),
    ] = None,
    no_validate_arguments: Annotated[
        bool,
        typer.Option(
            "--no-validate-arguments",
            help="Forward calls without checking their arguments against the tool's input schema.",
        ),
    ] = False,
    retry_initial: Annotated[
        float,
        typer.Option(
            "--retry-initial", help="Seconds before retrying a failed backend (doubling)."
        ),
    ] = defaults.RETRY_INITIAL,
    retry_max: Annotated[
        float, typer.Option("--retry-max", help="Longest wait between a backend's retries.")
    ] = defaults.RETRY_MAX,
    backend_wait: Annotated[
        float,
        typer.Option(
            "--backend-wait",
            help="For this many seconds from start, lists and searches wait for backends "
            "still connecting (until each is up or has failed once); 0: never wait.",
            metavar="SECONDS",
        ),
    ] = defaults.BACKEND_WAIT,
    max_result_size: Annotated[
        str,
        typer.Option(
            "--max-result-size",
            help="Largest backend tool result relayed (e.g. 10MiB).",
            metavar="SIZE",
        ),
    ] = defaults.MAX_RESULT_SIZE,
    weight: WeightOpt = None,
    no_cache: NoCacheOpt = False,
    semantic: SemanticOpt = None,
    rerank: RerankOpt = None,
) -> None:
    """Serve the catalogs (and backend MCP servers) to MCP hosts as a few discovery meta-tools.

    Example: toolfind serve-mcp --servers ~/.config/claude/claude_desktop_config.json
    """
    from toolfind.config import for_run, servers_for, uses_packaged_catalogs
    from toolfind.serve.main import run
    from toolfind.serve.options import ServeOptions, allowed_from_config, parse_http_address

    settings = for_run(
        catalog or (), weight or (), signals={"semantic": semantic, "rerank": rerank}
    )
    config = settings.config
    for line in settings.warnings:
        _warn(line)
    serve_source = config.sources.get("serve.allowed_hosts") or config.sources.get(
        "serve.allowed_origins"
    )
    hosts, origins = allowed_from_config(
        config.serve, serve_source, allowed_host or (), allowed_origin or ()
    )
    backends = servers_for(servers or (), config)
    catalogs = settings.paths
    if backends and not catalog and uses_packaged_catalogs(settings):
        catalogs = ()  # backends and no catalogs of the user's: not the shipped demo ones
    options = ServeOptions(
        catalogs=catalogs,
        exposure=exposure,
        meta_prefix=meta_prefix,
        http=parse_http_address(http) if http else None,
        token=token,
        log_level=log_level,
        params=settings.params,
        filters=config.filters,
        max_file_size=config.max_file_size,
        servers=backends,
        separator=separator,
        call_timeout=call_timeout,
        poll_interval=poll_interval,
        watch=not no_watch,
        use_cache=not no_cache,
        allowed_hosts=hosts,
        allowed_origins=origins,
        validate_arguments=not no_validate_arguments,
        retry_initial=retry_initial,
        retry_max=retry_max,
        backend_wait=backend_wait,
        max_result_size=_size_option("--max-result-size", max_result_size),
        signals=settings.signals,
    )
    run(options)


def _size_option(option: str, text: str) -> int:
    from toolfind.config import parse_size
    from toolfind.errors import ConfigError, UsageError

    try:
        return parse_size(text)
    except ConfigError:
        raise UsageError(f"{option} {text!r}: give a size such as 10MiB") from None


# -- catalog pull --------------------------------------------------------------------------------


@catalog_app.command("pull")
@reports_errors
def catalog_pull(
    servers: Annotated[
        list[str] | None,
        typer.Option(
            "--servers",
            help="Backend MCP servers config file (repeatable; default: servers in toolfind.toml).",
            metavar="FILE",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for the catalog files.")
    ] = Path("catalogs"),
    start_timeout: Annotated[
        float, typer.Option("--start-timeout", help="Seconds a server may take to start.")
    ] = defaults.START_TIMEOUT,
    json_: JsonOpt = False,
) -> None:
    """Write each backend server's tools as an MCP catalog file, reporting what changed.

    Example: toolfind catalog pull --servers .mcp.json -o catalogs/
    """
    import logging

    from toolfind.backends.pull import pull
    from toolfind.backends.redact import install
    from toolfind.config import Config, load_config, servers_for
    from toolfind.errors import UsageError
    from toolfind.output import wire
    from toolfind.output.text import render_line, render_path

    config = Config() if servers else load_config()  # --servers: named, so trusted as given
    for line in config.warnings:
        _warn(line)
    files = list(servers_for(servers or (), config))
    if not files:
        raise UsageError("no servers to pull: give --servers FILE, or set servers in toolfind.toml")
    root = logging.getLogger()
    if not root.handlers:  # as logging.basicConfig, and redacted: no line names a secret
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("toolfind: %(message)s"))
        install(handler)
        root.addHandler(handler)
        root.setLevel(logging.WARNING)
    install()
    report = pull(files, out, start_timeout=start_timeout, errlog=sys.stderr)
    if json_:
        _emit([wire.pull_record(s) for s in report.servers])
    else:
        for s in report.servers:
            if s.status == "failed":
                typer.echo(f"{s.server}: failed: {render_line(s.error or '')}", err=True)
                continue
            kinds = zip(
                ("added", "removed", "changed"), (s.added, s.removed, s.changed), strict=True
            )
            changes = ", ".join(f"{label} {', '.join(names)}" for label, names in kinds if names)
            file = render_path(s.file or "")
            typer.echo(
                f"{s.server}: {s.status} {file} ({s.tool_count} tools){': ' + changes if changes else ''}"
            )
    if report.failed:
        raise typer.Exit(1)


# -- cache -------------------------------------------------------------------------------------


def _store() -> Any:
    import os

    from toolfind.store.cache import CacheStore
    from toolfind.store.manifest import default_cache_dir

    return CacheStore(default_cache_dir(os.environ), _warn)


@cache_app.command("path")
@reports_errors
def cache_path(json_: JsonOpt = False) -> None:
    """Print the cache directory.

    Example: toolfind cache path
    """
    import os

    from toolfind.output import wire
    from toolfind.output.text import render_path
    from toolfind.store.manifest import default_cache_dir

    path = str(Path(default_cache_dir(os.environ)))
    if json_:
        _emit(wire.cache_path_record(path))
    else:
        typer.echo(render_path(path))


@cache_app.command("info")
@reports_errors
def cache_info(json_: JsonOpt = False, color: ColorOpt = "auto") -> None:
    """What the cache holds: indexes and bytes.

    Example: toolfind cache info --json
    """
    from toolfind.output import wire

    store = _store()
    found = (str(store.root), store.root.is_dir(), store.own_files())
    if json_:
        _emit(wire.cache_info_record(*found))
    else:
        note = _shipped_note(None)
        if note:
            _warn(note)
        _render(color).cache_info(*found)


@cache_app.command("clear")
@reports_errors
def cache_clear(json_: JsonOpt = False) -> None:
    """Delete toolfind's cached indexes (nothing else in the directory is touched).

    Example: toolfind cache clear
    """
    removed = _store().clear()
    if json_:
        from toolfind.output import wire

        _emit(wire.cache_clear_record(removed))
    else:
        files = "file" if removed == 1 else "files"
        typer.echo(f"Removed {removed} cache {files}.")  # the result: stdout, as every command's
