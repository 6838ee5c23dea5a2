"""``toolfind usage``: see, export, import and delete what toolfind learned from use (the
requests serve-mcp saw lead the host to a tool; ``store.usage``)."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

from typing import Annotated

import typer

from toolfind.cli.common import (
    CatalogOpt,
    JsonOpt,
    NoCacheOpt,
    app,
    emit,
    reports_errors,
    subgroup,
    warn,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolfind.store.usage import Store

usage_app = subgroup(
    "See, export, import or delete what toolfind learned from use (the requests that led"
    " the host to a tool)."
)
app.add_typer(usage_app, name="usage")

ToolArg = Annotated[
    str, typer.Argument(help="A tool as stored: namespace/tool, or a bare name.", metavar="TOOL")
]


def _store() -> "Store":
    from toolfind.store.usage import Store

    return Store()


@usage_app.command("list")
@reports_errors
def usage_list(
    tool: Annotated[
        str | None, typer.Argument(help="Only this tool's records.", metavar="TOOL")
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help="Show at most N records.", metavar="N")
    ] = 50,
    json_: JsonOpt = False,
) -> None:
    """The stored records, newest first: time, tool, the rank it had, the request.

    Example: toolfind usage list --limit 5
    """
    from toolfind.output import wire
    from toolfind.output.text import render_line

    records = list(reversed(_store().read()))
    if tool is not None:
        records = [r for r in records if tool in (r.qualified, r.tool)]
    records = records[:limit]
    if json_:
        emit([wire.usage_record(r) for r in records])
        return
    for r in records:
        rank = f"#{r.rank}" if r.rank else "imported"
        typer.echo(
            render_line(f"{wire.usage_record(r)['time']}  {r.qualified}  {rank}  {r.request}")
        )


@usage_app.command("stats")
@reports_errors
def usage_stats(json_: JsonOpt = False) -> None:
    """What was learned, per tool: records, sessions, last use, and the words that count.

    Example: toolfind usage stats --json
    """
    import os

    from toolfind.output import wire
    from toolfind.output.text import render_line
    from toolfind.store.usage_ops import per_tool

    store = _store()
    records = store.read()
    size = os.path.getsize(store.path) if records else 0
    tools = per_tool(records)
    if json_:
        emit(wire.usage_stats_record(store.path, size, len(records), tools))
        return
    typer.echo(render_line(f"{store.path}: {len(records)} records, {size:,} bytes"))
    for t in tools:
        words = ", ".join(t.words[:8]) or "(nothing yet: a word counts after 2 requests)"
        line = f"{t.qualified}  {t.records} records, last {wire.usage_tool_record(t)['last_used']}"
        typer.echo(render_line(f"{line}  words: {words}"))


@usage_app.command("export")
@reports_errors
def usage_export(
    file: Annotated[
        str | None,
        typer.Argument(
            help="Write here (an existing file is kept as FILE.~1~); default: stdout.",
            metavar="FILE",
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """The records as labelled queries (JSON Lines) that eval and tune read.

    Example: toolfind usage export my-queries.jsonl
    """
    from toolfind.output import wire
    from toolfind.output.encode import dumps
    from toolfind.store.usage_ops import labelled_queries

    pairs = labelled_queries(_store().read())
    entries = [wire.labelled_query_record(q, t, n) for n, (q, t) in enumerate(pairs, 1)]
    if file is None:
        if json_:
            emit(entries)
        else:
            for entry in entries:
                typer.echo(dumps(entry, compact=True))
        return
    from toolfind.errors import UsageStoreError
    from toolfind.output.text import render_path
    from toolfind.userfiles import rewrite

    text = "".join(dumps(entry, compact=True) + "\n" for entry in entries)
    try:
        backup = rewrite(file, text.encode())
    except OSError as exc:
        raise UsageStoreError(f"cannot write: {exc.strerror or exc}", file=file) from None
    if backup is not None:
        warn(f"Kept the earlier {render_path(file)} as {render_path(backup)}")
    if json_:
        emit(wire.usage_export_record(file, len(entries)))
    else:
        warn(f"Wrote {len(entries)} labelled queries to {render_path(file)}")


@usage_app.command("import")
@reports_errors
def usage_import(
    file: Annotated[
        str, typer.Argument(help='JSON Lines: {"query": "...", "tool": "NAME"}.', metavar="FILE")
    ],
    catalog: CatalogOpt = None,
    no_cache: NoCacheOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Add requests that led to tools (a team's shared usage, or seeded from logs).

    NAME as toolfind lists it (namespace/tool, or a unique bare name). Each bad line is one
    line on stderr (FILE:LINE: why) and exit code 1; the good lines are added, and nothing
    already stored is lost.

    Example: toolfind usage import team-usage.jsonl
    """
    from toolfind.backends.redact import redact
    from toolfind.cli.common import open_index
    from toolfind.output import wire
    from toolfind.store.usage_ops import import_file

    index = open_index(catalog, no_cache)
    done = import_file(_store(), file, index.resolve, redact)
    if json_:
        emit(wire.usage_import_record(done))
    for problem in done.problems:
        warn(f"Error: {problem}")
    if done.more:
        warn(f"Error: {file}: {done.more} more problems")
    if not json_:
        already = f" ({done.already} already stored)" if done.already else ""
        typer.echo(f"Imported {done.added} requests{already}.")
    if done.problems:
        raise typer.Exit(1)


@usage_app.command("forget")
@reports_errors
def usage_forget(tool: ToolArg, json_: JsonOpt = False) -> None:
    """Delete every record of one tool.

    Example: toolfind usage forget files/compress_file
    """
    from toolfind.output import wire
    from toolfind.store.usage_ops import forget

    name, removed = forget(_store(), tool)
    if json_:
        emit(wire.usage_removed_record(removed, name))
    else:
        typer.echo(f"Forgot {removed} records of {name}.")


@usage_app.command("clear")
@reports_errors
def usage_clear(json_: JsonOpt = False) -> None:
    """Delete everything toolfind learned from use.

    Example: toolfind usage clear
    """
    from toolfind.output import wire

    removed = _store().clear()
    if json_:
        emit(wire.usage_removed_record(removed))
    else:
        typer.echo(f"Deleted {removed} records.")
