"""The commands that read the index: search, show, list, schemas, similar, categories, summaries.

``search`` also answers batch queries (``--queries FILE``). Each command parses its options,
makes one core call and renders the result: a table by default (drawn by Rich on a terminal,
see render), exactly one JSON document with ``--json``.
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from toolfind.cli.common import (
    CatalogOpt,
    JsonOpt,
    NamespaceOpt,
    NoCacheOpt,
    SemanticOpt,
    TagOpt,
    WeightOpt,
    _decode_all,
    _emit,
    _fail,
    _open,
    _render,
    _warn,
    app,
    reports_errors,
)
from toolfind.errors import ConfigError

if TYPE_CHECKING:
    from toolfind.models import Tool


# Choices are Literal types: Typer lists and checks them as it does an Enum's values, and an
# Enum class costs a fifth of a millisecond to create, on every run.
ShowFormat = Literal["native", "openai", "anthropic", "mcp"]
SchemaFormat = Literal["openai", "anthropic", "mcp", "gemini"]
SummaryFormat = Literal["text", "markdown", "json"]


# -- search ------------------------------------------------------------------------------------


@app.command()
@reports_errors
def search(
    query: Annotated[
        str | None, typer.Argument(help="What the tool should do, or a tool's name.")
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
    no_cache: NoCacheOpt = False,
    semantic: SemanticOpt = None,
) -> None:
    """Rank tools for a query; a query that names a tool returns it first.

    Example: toolfind search "compress file" --json
    """
    if queries is None and (query is None or not query.strip()):
        _fail("search needs a QUERY (or --queries FILE for batch mode)", 2)
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
        from toolfind.output.wire import dumps

        for text in _batch_queries(queries):
            record = wire.search_record(run(text), include_schema=schema)
            typer.echo(dumps(record, compact=True))
        return
    assert query is not None
    result = run(query)
    hint = segment.unmatched_hint(list(result.unmatched_terms))
    if hint:
        _warn(hint)
    if json_:
        _emit(wire.search_record(result, include_schema=schema))
    else:
        _render().search(result, explain=explain)


def _batch_queries(source: str) -> Iterator[str]:
    """Queries from a file (or stdin): plain lines, or JSON Lines objects with a ``query``."""
    import json

    if source == "-":
        lines = sys.stdin.read().splitlines()
        name = "<stdin>"
    else:
        try:
            lines = Path(source).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read queries: {exc}", file=source) from None
        name = source
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith("{"):
            try:
                entry = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"invalid JSON: {exc.msg}", file=name, line=number) from None
            if not isinstance(entry, dict) or not isinstance(entry.get("query"), str):
                raise ConfigError("a JSON line needs a string 'query'", file=name, line=number)
            text = entry["query"]
        yield text


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
    namespace: NamespaceOpt = None,
    tag: TagOpt = None,
    deferred: Annotated[
        bool | None,
        typer.Option("--deferred/--no-deferred", help="Only deferred, or only non-deferred tools."),
    ] = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """List tools, one row each (name, namespace, summary, tags, deferred).

    Example: toolfind list --namespace files --json
    """
    from toolfind.output import wire

    index = _open(catalog, no_cache)
    _decode_all(index)
    rows = index.listed(namespace, tag or (), deferred)
    if json_:
        _emit([wire.tool_row(t) for t in rows])
    else:
        _render().tools(rows)


@app.command()
@reports_errors
def schemas(
    format_: Annotated[SchemaFormat, typer.Option("--format", help="Tool-list format.")] = "openai",
    include_deferred: Annotated[
        bool, typer.Option("--include-deferred/--exclude-deferred", help="Include deferred tools.")
    ] = False,
    catalog: CatalogOpt = None,
    no_cache: NoCacheOpt = False,
) -> None:
    """Print the tool list to send to an LLM, as one JSON array in the chosen format.

    Example: toolfind schemas --format anthropic > tools.json
    """
    from toolfind.output.tool_formats import tool_to_format

    index = _open(catalog, no_cache)
    _decode_all(index)
    chosen = [t for t in index.tools if t.enabled and (include_deferred or not t.defer)]
    _emit([tool_to_format(t, format_) for t in chosen])


@app.command()
@reports_errors
def similar(
    name: Annotated[str, typer.Argument(help="The tool to find relatives of.")],
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, help="How many tools.")] = 5,
    weight: WeightOpt = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
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
        _render().similar(name, items)


@app.command()
@reports_errors
def categories(
    catalog: CatalogOpt = None, json_: JsonOpt = False, no_cache: NoCacheOpt = False
) -> None:
    """Namespaces with their tool counts, deferred counts and commonest tags.

    Example: toolfind categories --json
    """
    from toolfind.output import wire

    items = _open(catalog, no_cache).categories()
    if json_:
        _emit(wire.categories_record(items))
    else:
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
        bool, typer.Option("--json", help="Same as --format json (see README for its shape).")
    ] = False,
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
    if all_:
        _decode_all(index)
    tools: list[Tool] = index.summaries(deferred=None if all_ else True)
    if format_ == "json":
        _emit([wire.summary_record(t) for t in tools])
        return
    _render().summaries(tools, markdown=format_ == "markdown")
