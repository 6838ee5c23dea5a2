"""``toolfind config``: every setting's effective value and where it came from, and
``toolfind config path``: the config files that apply here."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

from typing import Any

import typer

from toolfind.cli.common import CatalogOpt, JsonOpt, WeightOpt, app, emit, reports_errors, warn

config_app = typer.Typer(
    help="Show the settings in effect and where each came from.",
    invoke_without_command=True,
    no_args_is_help=False,
)
app.add_typer(config_app, name="config")


@config_app.callback()
@reports_errors
def config_show(
    ctx: typer.Context,
    catalog: CatalogOpt = None,
    weight: WeightOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Show every setting's effective value and where it came from: the default, the
    user-wide config, the project config, an environment variable or the command line.

    Example: toolfind config --weight name=4
    """
    if ctx.invoked_subcommand is not None:
        return
    import os

    from toolfind.config import Setting, config_files, explain
    from toolfind.store.manifest import default_cache_dir

    settings, run = explain(catalog or (), weight or ())
    for line in run.warnings:
        warn(line)
    cache = default_cache_dir(os.environ)
    if os.environ.get("TOOLFIND_CACHE_DIR"):
        settings.append(Setting("cache_dir", cache, "environment", "TOOLFIND_CACHE_DIR"))
    else:
        settings.append(Setting("cache_dir", cache, "default"))
    files = config_files(run.config)
    if json_:
        from toolfind.output import wire

        emit(wire.config_record(settings, files))
        return
    typer.echo(_table([(s.key, _shown(s.value), s.origin or s.source) for s in settings]))


@config_app.command("path")
@reports_errors
def config_path(json_: JsonOpt = False) -> None:
    """Print the config files that apply here: the user-wide one (even when it does not
    exist yet), then the project's, and whether each is used.

    Example: toolfind config path
    """
    from toolfind.config import config_files, load_config

    config = load_config()
    for line in config.warnings:
        warn(line)
    files = config_files(config)
    if json_:
        from toolfind.output import wire

        emit([wire.config_file_record(f) for f in files])
        return
    rows = []
    for f in files:
        state = "not found" if not f.exists else "ignored" if f.problem else "used"
        rows.append((f.scope, str(f.path), state + (" (named)" if f.explicit else "")))
    typer.echo(_table(rows))


def _shown(value: Any) -> str:
    """A value as TOML writes it (JSON's spelling of strings, numbers, booleans and lists
    is TOML's too); ``(not set)`` for a setting nobody set and that has no default."""
    if value is None:
        return "(not set)"
    from toolfind.output.encode import dumps

    return dumps(value, compact=True)


def _table(rows: list[tuple[str, str, str]]) -> str:
    """Plain columns, the first two padded to their widest cell (the second to 40 at most:
    a long list of paths pushes only its own line's source along). Each cell as any line of
    output shows text a config wrote (`render_line`): an escape sequence in a key or value
    (an OSC that retitles the window or writes the clipboard) is shown, never acted on."""
    if not rows:
        return ""
    from toolfind.output.text import render_line

    rows = [(render_line(a), render_line(b), render_line(c)) for a, b, c in rows]
    first = max(len(r[0]) for r in rows)
    second = min(max(len(r[1]) for r in rows), 40)
    return "\n".join(f"{a:<{first}}  {b:<{second}}  {c}".rstrip() for a, b, c in rows)
