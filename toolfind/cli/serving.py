"""The commands that serve, pull or cache: serve-mcp, catalog pull and cache path/info/clear."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import sys
from pathlib import Path

import typer

from toolfind.cli.commands import shipped_note
from toolfind.cli.common import (
    CatalogOpt,
    ColorOpt,
    JsonOpt,
    NoCacheOpt,
    RerankOpt,
    SemanticOpt,
    WeightOpt,
    app,
    emit,
    reports_errors,
    subgroup,
    warn,
)
from toolfind.cli.options import (
    AllowedHostOpt,
    AllowedOriginOpt,
    BackendWaitOpt,
    CallTimeoutOpt,
    ExposureOpt,
    HttpOpt,
    LogLevelOpt,
    MaxResultSizeOpt,
    MetaPrefixOpt,
    NoValidateArgumentsOpt,
    NoWatchOpt,
    OutOpt,
    PollIntervalOpt,
    RetryInitialOpt,
    RetryMaxOpt,
    SeparatorOpt,
    ServersOpt,
    StartTimeoutOpt,
    TokenOpt,
)
from toolfind.cli.printing import renderer
from toolfind.serve import defaults

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolfind.store.cache import CacheStore

cache_app = subgroup("Inspect or clear the index cache.")
app.add_typer(cache_app, name="cache")

catalog_app = subgroup("Work with catalog files.")
app.add_typer(catalog_app, name="catalog")


# -- serve-mcp ---------------------------------------------------------------------------------


@app.command("serve-mcp")
@reports_errors
def serve_mcp(
    catalog: CatalogOpt = None,
    servers: ServersOpt = None,
    exposure: ExposureOpt = defaults.EXPOSURE,
    meta_prefix: MetaPrefixOpt = defaults.META_PREFIX,
    http: HttpOpt = None,
    token: TokenOpt = None,
    separator: SeparatorOpt = defaults.SEPARATOR,
    call_timeout: CallTimeoutOpt = defaults.CALL_TIMEOUT,
    poll_interval: PollIntervalOpt = defaults.POLL_INTERVAL,
    no_watch: NoWatchOpt = False,
    log_level: LogLevelOpt = defaults.LOG_LEVEL,
    allowed_host: AllowedHostOpt = None,
    allowed_origin: AllowedOriginOpt = None,
    no_validate_arguments: NoValidateArgumentsOpt = False,
    retry_initial: RetryInitialOpt = defaults.RETRY_INITIAL,
    retry_max: RetryMaxOpt = defaults.RETRY_MAX,
    backend_wait: BackendWaitOpt = defaults.BACKEND_WAIT,
    max_result_size: MaxResultSizeOpt = defaults.MAX_RESULT_SIZE,
    weight: WeightOpt = None,
    no_cache: NoCacheOpt = False,
    semantic: SemanticOpt = None,
    rerank: RerankOpt = None,
) -> None:
    """Serve the catalogs (and backend MCP servers) to MCP hosts as a few discovery meta-tools.

    Example: toolfind serve-mcp --servers ~/.config/claude/claude_desktop_config.json
    """
    from toolfind.config import for_run
    from toolfind.serve.main import run
    from toolfind.serve.options import ServeOptions

    settings = for_run(
        catalog or (), weight or (), signals={"semantic": semantic, "rerank": rerank}
    )
    for line in settings.warnings:
        warn(line)
    options = ServeOptions.from_run(
        settings,
        catalogs_given=bool(catalog),
        servers=servers or (),
        http=http,
        allowed_hosts=allowed_host or (),
        allowed_origins=allowed_origin or (),
        max_result_size=max_result_size,
        exposure=exposure,
        meta_prefix=meta_prefix,
        token=token,
        log_level=log_level,
        separator=separator,
        call_timeout=call_timeout,
        poll_interval=poll_interval,
        watch=not no_watch,
        use_cache=not no_cache,
        validate_arguments=not no_validate_arguments,
        retry_initial=retry_initial,
        retry_max=retry_max,
        backend_wait=backend_wait,
    )
    run(options)


# -- catalog pull --------------------------------------------------------------------------------


@catalog_app.command("pull")
@reports_errors
def catalog_pull(
    servers: ServersOpt = None,
    out: OutOpt = Path("catalogs"),
    start_timeout: StartTimeoutOpt = defaults.START_TIMEOUT,
    json_: JsonOpt = False,
) -> None:
    """Write each backend server's tools as an MCP catalog file, reporting what changed.

    Example: toolfind catalog pull --servers .mcp.json -o catalogs/
    """
    import logging

    from toolfind.backends.pull import pull
    from toolfind.backends.redact import log_to_stderr
    from toolfind.config import Config, load_config, servers_for
    from toolfind.errors import UsageError
    from toolfind.output import wire
    from toolfind.output.text import render_line, render_path

    config = Config() if servers else load_config()  # --servers: named, so trusted as given
    for line in config.warnings:
        warn(line)
    files = list(servers_for(servers or (), config))
    if not files:
        raise UsageError("no servers to pull: give --servers FILE, or set servers in toolfind.toml")
    log_to_stderr("toolfind: %(message)s", logging.WARNING, keep_handlers=True)
    report = pull(files, out, start_timeout=start_timeout, errlog=sys.stderr)
    if json_:
        emit([wire.pull_record(s) for s in report.servers])
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
            # The names are the server's: an escape in one is shown, never acted on.
            typer.echo(
                render_line(
                    f"{s.server}: {s.status} {file} ({s.tool_count} tools)"
                    + (f": {changes}" if changes else "")
                )
            )
    if report.failed:
        raise typer.Exit(1)


# -- cache -------------------------------------------------------------------------------------


def _store() -> "CacheStore":
    import os

    from toolfind.store.cache import CacheStore
    from toolfind.store.manifest import default_cache_dir

    return CacheStore(default_cache_dir(os.environ), warn)


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
        emit(wire.cache_path_record(path))
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
        emit(wire.cache_info_record(*found))
    else:
        note = shipped_note(None)
        if note:
            warn(note)
        renderer(color).cache_info(*found)


@cache_app.command("clear")
@reports_errors
def cache_clear(json_: JsonOpt = False) -> None:
    """Delete toolfind's cached indexes (nothing else in the directory is touched).

    Example: toolfind cache clear
    """
    removed = _store().clear()
    if json_:
        from toolfind.output import wire

        emit(wire.cache_clear_record(removed))
    else:
        files = "file" if removed == 1 else "files"
        typer.echo(f"Removed {removed} cache {files}.")  # the result: stdout, as every command's
