"""The commands that read the index: search, show, list, schemas, similar, categories, summaries.

``search`` also answers batch queries (``--queries FILE``). Each command parses its options,
makes one core call and renders the result: a table by default (drawn by Rich on a terminal,
see render), exactly one JSON document with ``--json``.
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import sys
from collections.abc import Iterator
from itertools import chain, islice
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

import typer

from toolfind.cli.common import (
    CatalogOpt,
    JsonOpt,
    NamespaceOpt,
    NoCacheOpt,
    NoPagerOpt,
    RecordFormatOpt,
    SemanticOpt,
    TagOpt,
    WeightOpt,
    _decode_all,
    _echo_error,
    _emit,
    _emit_array,
    _fail,
    _json_errors,
    _open,
    _paged,
    _record_format,
    _render,
    _shipped_note,
    _warn,
    app,
    reports_errors,
)
from toolfind.cli.fast import filter_warning
from toolfind.errors import ConfigError, ToolfindError

if TYPE_CHECKING:
    from toolfind.models import Tool


# Choices are Literal types: Typer lists and checks them as it does an Enum's values, and an
# Enum class costs a fifth of a millisecond to create, on every run.
ShowFormat = Literal["native", "openai", "anthropic", "mcp", "gemini"]
SchemaFormat = Literal["openai", "anthropic", "mcp", "gemini"]
SummaryFormat = Literal["text", "markdown", "json"]


# -- search ------------------------------------------------------------------------------------


@app.command()
@reports_errors
def search(
    query: Annotated[
        list[str] | None,
        typer.Argument(
            help="What the tool should do, or a tool's name; several words are one query."
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, help="How many hits.")] = 10,
    namespace: NamespaceOpt = None,
    tag: TagOpt = None,
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="Drop hits scoring below this.")
    ] = None,
    weight: WeightOpt = None,
    schema: Annotated[
        bool, typer.Option("--schema", help="Include every hit's input schema.")
    ] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each term's contribution per field.")
    ] = False,
    queries: Annotated[
        str | None,
        typer.Option(
            "--queries",
            help="Batch mode: one query per line (or JSON Lines with 'query'); - for stdin.",
            metavar="FILE",
        ),
    ] = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    format_: RecordFormatOpt = "table",
    no_pager: NoPagerOpt = False,
    no_cache: NoCacheOpt = False,
    semantic: SemanticOpt = None,
) -> None:
    """Rank tools for a query; a query that names a tool returns it first.

    Example: toolfind search "compress file" --json
    """
    text = " ".join(query or ())
    if queries is not None and query:
        _fail("give either a QUERY or --queries FILE, not both", 2)
    if queries is None and not text.strip():
        _fail("search needs a QUERY (or --queries FILE for batch mode)", 2)
    if queries is not None and format_ not in ("table", "jsonl"):
        _fail(f"--queries prints one JSON record a line; --format {format_} does not apply", 2)
    output = _record_format(format_, json_)
    from toolfind.output import wire
    from toolfind.store import segment

    index = _open(catalog, no_cache, weight, semantic)

    def run(text: str) -> Any:
        return index.search(
            text,
            limit,
            namespace=namespace,
            tags=tuple(tag or ()),
            min_score=min_score,
            explain=explain,
        )

    if queries is not None:
        failed = False
        for line in _batch_queries(queries):
            try:
                if line.error:
                    raise ConfigError(line.error, file=line.file, line=line.number)
                record = wire.batch_record(
                    wire.search_record(run(line.text), include_schema=schema), line.id
                )
            except ToolfindError as exc:
                failed = True
                _echo_error(str(exc), exc.kind, as_json=_json_errors())
                record = wire.batch_error_record(str(exc), exc.kind, line.number, line.id)
            typer.echo(wire.dumps(record, compact=True))
        if failed:
            raise typer.Exit(1)
        return
    result = run(text)
    hint = filter_warning(index, namespace, tag or ())
    if hint:
        _warn(hint)
    hint = segment.unmatched_hint(list(result.unmatched_terms))
    if hint:
        _warn(hint)
    if output == "json":
        _emit(wire.search_record(result, include_schema=schema))
    elif output != "table":
        sys.stdout.write(wire.records_text(wire.hit_records(result, include_schema=schema), output))
    else:
        with _paged(no_pager):
            _render().search(result, explain=explain)


class _BatchLine(NamedTuple):
    """One query line of ``--queries``: its number, ``id`` (JSON Lines), query or error."""

    file: str
    number: int
    id: Any
    text: str
    error: str


def _batch_queries(source: str) -> Iterator[_BatchLine]:
    """Queries from a file (or stdin): plain lines, or JSON Lines objects with a ``query``
    (and an optional ``id``). Blank lines and lines starting with ``#`` are skipped; a line
    that cannot be read is yielded with its error (the others still run)."""
    import json

    from toolfind.userfiles import FileProblem, read_capped, read_stream

    name = "<stdin>" if source == "-" else source
    try:
        data = read_stream(sys.stdin.buffer) if source == "-" else read_capped(source)
        lines = data.decode("utf-8-sig").splitlines()
    except FileProblem as exc:
        raise ConfigError(f"cannot read queries: {exc.message}", file=name) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"invalid UTF-8 at byte {exc.start}", file=name) from None
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if not text.startswith("{"):
            yield _BatchLine(name, number, None, text, "")
            continue
        try:
            entry = json.loads(text)
        except json.JSONDecodeError as exc:
            yield _BatchLine(name, number, None, "", f"invalid JSON: {exc.msg}")
            continue
        id_ = entry.get("id") if isinstance(entry, dict) else None
        query = entry.get("query") if isinstance(entry, dict) else None
        if not isinstance(query, str) or not query.strip():
            yield _BatchLine(name, number, id_, "", "a JSON line needs a non-blank string 'query'")
            continue
        yield _BatchLine(name, number, id_, query, "")


@app.command()
@reports_errors
def show(
    name: Annotated[
        str, typer.Argument(help="Tool name: tool, ns/tool, ns:tool, ns__tool or ns.tool.")
    ],
    format_: Annotated[ShowFormat, typer.Option("--format", help="Schema format.")] = "native",
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Print one tool's full schema; suggests the closest name on a miss.

    Example: toolfind show read_file --format openai --json
    """
    from toolfind.output.tool_formats import tool_to_format

    index = _open(catalog, no_cache)
    tool = index.resolve(name)
    document = tool_to_format(tool, format_)
    if json_:
        _emit(document)
    else:
        _render().tool(tool, document)


@app.command("list")
@reports_errors
def list_(
    limit: Annotated[
        int | None, typer.Option("--limit", "-k", min=1, help="At most this many tools.")
    ] = None,
    namespace: NamespaceOpt = None,
    tag: TagOpt = None,
    deferred: Annotated[
        bool | None,
        typer.Option("--deferred/--no-deferred", help="Only deferred, or only non-deferred tools."),
    ] = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    format_: RecordFormatOpt = "table",
    no_pager: NoPagerOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """List tools, one row each (name, namespace, summary, tags, deferred).

    Example: toolfind list --namespace files --json
    """
    from toolfind.output import wire

    output = _record_format(format_, json_)
    index = _open(catalog, no_cache)
    hint = filter_warning(index, namespace, tag or ())
    if hint:
        _warn(hint)
    if output == "json":  # written as each tool is read: 100k tools are not held at once
        rows = islice(index.stream(namespace, tag or (), deferred), limit)
        _emit_array(map(wire.tool_row, rows))
        return
    _decode_all(index)
    listed = index.listed(namespace, tag or (), deferred)[:limit]
    if output != "table":
        sys.stdout.write(wire.records_text([wire.tool_row(t) for t in listed], output))
    else:
        with _paged(no_pager):
            _render().tools(listed)


@app.command()
@reports_errors
def schemas(
    format_: Annotated[SchemaFormat, typer.Option("--format", help="Tool-list format.")] = "openai",
    include_deferred: Annotated[
        bool, typer.Option("--include-deferred/--exclude-deferred", help="Include deferred tools.")
    ] = False,
    catalog: CatalogOpt = None,
    no_cache: NoCacheOpt = False,
    json_: Annotated[
        bool, typer.Option("--json", help="Accepted for uniformity: the output is always JSON.")
    ] = False,
) -> None:
    """Print the tool list to send to an LLM, as one JSON array in the chosen format.

    Example: toolfind schemas --format anthropic > tools.json
    """
    from toolfind.output.tool_formats import list_names, renamed, tool_to_format

    index = _open(catalog, no_cache)
    _decode_all(index)
    chosen = [t for t in index.tools if t.enabled and (include_deferred or not t.defer)]
    names = list_names(chosen)
    documents = []
    for tool, name in zip(chosen, names, strict=True):
        document = tool_to_format(tool, format_)
        documents.append(document if name == tool.name else renamed(document, format_, name))
    for name in sorted({t.name for t, new in zip(chosen, names, strict=True) if new != t.name}):
        written = [new for t, new in zip(chosen, names, strict=True) if t.name == name]
        _warn(
            f"Note: {len(written)} tools are named {name!r}: written as {', '.join(written)}"
            " (LLM APIs reject two tools of one name)"
        )
    _emit(documents)


@app.command()
@reports_errors
def similar(
    name: Annotated[str, typer.Argument(help="The tool to find relatives of.")],
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, help="How many tools.")] = 5,
    weight: WeightOpt = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_pager: NoPagerOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Tools related to one tool by shared, weighted terms.

    Example: toolfind similar read_file -k 3
    """
    from toolfind.output import wire

    index = _open(catalog, no_cache, weight)
    items = index.similar(name, limit)
    if json_:
        _emit([wire.similar_record(s) for s in items])
    else:
        with _paged(no_pager):
            _render().similar(name, items)


@app.command()
@reports_errors
def categories(
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_pager: NoPagerOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Namespaces with their tool counts, deferred counts and commonest tags.

    Example: toolfind categories --json
    """
    from toolfind.output import wire

    items = _open(catalog, no_cache).categories()
    if json_:
        _emit(wire.categories_record(items))
    else:
        note = _shipped_note(catalog)
        if note:
            _warn(note)
        with _paged(no_pager):
            _render().categories(items)


@app.command()
@reports_errors
def summaries(
    deferred: Annotated[
        bool, typer.Option("--deferred", help="Deferred tools only (the default).")
    ] = False,
    all_: Annotated[bool, typer.Option("--all", help="Every enabled tool.")] = False,
    format_: Annotated[SummaryFormat, typer.Option("--format", help="Output format.")] = "text",
    catalog: CatalogOpt = None,
    no_cache: NoCacheOpt = False,
    json_: Annotated[
        bool, typer.Option("--json", help="Same as --format json (its shape: docs/json.md).")
    ] = False,
    no_pager: NoPagerOpt = False,
) -> None:
    """One line per tool (name and first sentence), for a system prompt.

    Example: toolfind summaries --deferred --format markdown
    """
    if deferred and all_:
        _fail("use either --deferred or --all, not both", 2)
    if json_:
        if format_ not in ("text", "json"):  # text is the default: --json overrides only that
            _fail(f"use either --json or --format {format_}, not both", 2)
        format_ = "json"
    from toolfind.output import wire

    index = _open(catalog, no_cache)
    tools: Iterator[Tool] = index.stream(deferred=None if all_ else True)  # printed as read
    first = next(tools, None)
    if first is None:
        _warn(_render().summaries_hint((), all_))
    else:
        tools = chain((first,), tools)
    if format_ == "json":
        _emit_array(map(wire.summary_record, tools))
        return
    with _paged(no_pager):
        _render().summaries(tools, markdown=format_ == "markdown")
