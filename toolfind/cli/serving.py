"""The commands that serve, pull or cache: serve-mcp, catalog pull and cache path/info/clear."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from toolfind.cli.common import (
    CatalogOpt,
    JsonOpt,
    NoCacheOpt,
    SemanticOpt,
    WeightOpt,
    _emit,
    _render,
    _warn,
    app,
    reports_errors,
)

cache_app = typer.Typer(help="Inspect or clear the index cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")

catalog_app = typer.Typer(help="Work with catalog files.", no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")


# -- serve-mcp ---------------------------------------------------------------------------------


Exposure = Literal["direct", "search"]


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
    ] = "search",
    meta_prefix: Annotated[
        str, typer.Option("--meta-prefix", help="Prefix of the meta-tool names.")
    ] = "proxy_",
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
    ] = "__",
    call_timeout: Annotated[
        float, typer.Option("--call-timeout", help="Seconds a forwarded tool call may take.")
    ] = 60.0,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", help="Seconds between catalog change checks.")
    ] = 1.0,
    no_watch: Annotated[
        bool, typer.Option("--no-watch", help="Do not watch the catalogs for changes.")
    ] = False,
    log_level: Annotated[
        str,
        typer.Option("--log-level", help="debug, info, warning, error or critical (on stderr)."),
    ] = "warning",
    weight: WeightOpt = None,
    no_cache: NoCacheOpt = False,
    semantic: SemanticOpt = None,
) -> None:
    """Serve the catalogs (and backend MCP servers) to MCP hosts as a few discovery meta-tools.

    Example: toolfind serve-mcp --servers ~/.config/claude/claude_desktop_config.json
    """
    from toolfind.config import for_run
    from toolfind.serve import ServeOptions, parse_http_address, run

    settings = for_run(catalog or (), weight or ())
    config = settings.config
    options = ServeOptions(
        catalogs=settings.paths,
        exposure=exposure,
        meta_prefix=meta_prefix,
        http=parse_http_address(http) if http else None,
        token=token,
        log_level=log_level,
        params=settings.params,
        filters=config.filters,
        max_file_size=config.max_file_size,
        servers=tuple(Path(s) for s in servers or ()) or config.servers,
        separator=separator,
        call_timeout=call_timeout,
        poll_interval=poll_interval,
        watch=not no_watch,
        use_cache=not no_cache,
        semantic=config.semantic if semantic is None else semantic,
        semantic_weight=config.semantic_weight,
    )
    run(options)


# -- catalog pull --------------------------------------------------------------------------------


@catalog_app.command("pull")
@reports_errors
def catalog_pull(
    servers: Annotated[
        list[str],
        typer.Option(
            "--servers", help="Backend MCP servers config file (repeatable).", metavar="FILE"
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for the catalog files.")
    ] = Path("catalogs"),
    start_timeout: Annotated[
        float, typer.Option("--start-timeout", help="Seconds a server may take to start.")
    ] = 30.0,
    json_: JsonOpt = False,
) -> None:
    """Write each backend server's tools as an MCP catalog file, reporting what changed.

    Example: toolfind catalog pull --servers .mcp.json -o catalogs/
    """
    import logging

    from toolfind.output import wire
    from toolfind.serve.pull import pull

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="toolfind: %(message)s")
    report = pull([Path(s) for s in servers], out, start_timeout=start_timeout, errlog=sys.stderr)
    if json_:
        _emit([wire.pull_record(s) for s in report.servers])
    else:
        for s in report.servers:
            if s.status == "failed":
                typer.echo(f"{s.server}: failed: {s.error}", err=True)
                continue
            kinds = zip(
                ("added", "removed", "changed"), (s.added, s.removed, s.changed), strict=True
            )
            changes = ", ".join(f"{label} {', '.join(names)}" for label, names in kinds if names)
            typer.echo(
                f"{s.server}: {s.status} {s.file} ({s.tool_count} tools){': ' + changes if changes else ''}"
            )
    if report.failed:
        raise typer.Exit(1)


# -- cache -------------------------------------------------------------------------------------


def _store() -> Any:
    import os

    from toolfind.store.cache import CacheStore
    from toolfind.store.segment import default_cache_dir

    return CacheStore(default_cache_dir(os.environ), _warn)


@cache_app.command("path")
@reports_errors
def cache_path() -> None:
    """Print the cache directory.

    Example: toolfind cache path
    """
    import os

    from toolfind.store.segment import default_cache_dir

    typer.echo(str(Path(default_cache_dir(os.environ))))


@cache_app.command("info")
@reports_errors
def cache_info(json_: JsonOpt = False) -> None:
    """What the cache holds: indexes and bytes.

    Example: toolfind cache info --json
    """
    from toolfind.output import wire

    store = _store()
    info = wire.cache_info_record(str(store.root), store.root.is_dir(), store.own_files())
    if json_:
        _emit(info)
    else:
        _render().mapping("toolfind cache", info)


@cache_app.command("clear")
@reports_errors
def cache_clear() -> None:
    """Delete toolfind's cached indexes (nothing else in the directory is touched).

    Example: toolfind cache clear
    """
    removed = _store().clear()
    typer.echo(f"Removed {removed} cache files.", err=True)
