"""The ``toolfind`` command line: thin Typer commands over the core.

Each command parses its options, makes one core call and renders the result: a table by
default (drawn by Rich on a terminal, see render), exactly one JSON document with ``--json``.
Errors are one ``Error:`` line on stderr with exit code 1; usage errors exit 2; Ctrl-C exits
130.
"""

# No ``from __future__ import annotations`` here: Typer reads every parameter's annotation on
# each run, and string annotations are compiled and evaluated (twice) each time, which made
# turning a command into a click command three times slower.

import copy
import functools
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, TypeVar

import typer
import typer.main
from typer.models import CommandInfo, TyperInfo

from toolfind import __version__
from toolfind.errors import ConfigError, ToolfindError

if TYPE_CHECKING:
    from toolfind.models import Tool

# Start-up cost is part of every command's cost, so this module imports only what every
# command needs (typer already loads enum, pathlib and typing). Everything else -- json, the
# data model behind ``wire``, the config, the cache, the index, rich -- is imported inside the
# commands that use it: ``toolfind cache path`` must not pay for a search.

app = typer.Typer(
    name="toolfind",
    help="Search large LLM tool catalogs: BM25F ranking, schemas in every format, an MCP server.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
cache_app = typer.Typer(help="Inspect or clear the index cache.", no_args_is_help=True)
app.add_typer(cache_app, name="cache")

F = TypeVar("F", bound=Callable[..., Any])

# Options shared by the commands, declared once.
CatalogOpt = Annotated[
    list[str] | None,
    typer.Option("--catalog", "-c", help="Catalog file or directory (repeatable).", metavar="PATH"),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (see README for its shape).")
]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help="Build the index afresh; do not read or write the cache.")
]
WeightOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--weight",
        "-w",
        help="Field weight override FIELD=W (repeatable), e.g. name=5.",
        metavar="FIELD=W",
    ),
]
NamespaceOpt = Annotated[
    str | None, typer.Option("--namespace", help="Only tools in this namespace.")
]
TagOpt = Annotated[
    list[str] | None,
    typer.Option("--tag", help="Only tools with this tag (repeatable: all must match)."),
]


# Choices are Literal types: Typer lists and checks them as it does an Enum's values, and an
# Enum class costs a fifth of a millisecond to create, on every run.
ShowFormat = Literal["native", "openai", "anthropic", "mcp"]
SchemaFormat = Literal["openai", "anthropic", "mcp", "gemini"]
SummaryFormat = Literal["text", "markdown", "json"]


def _warn(message: str) -> None:
    typer.echo(message, err=True)


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


def reports_errors(func: F) -> F:
    """Turn a ToolfindError into one ``Error:`` line and exit 1, Ctrl-C into exit 130."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ToolfindError as exc:
            _fail(str(exc))
        except KeyboardInterrupt:
            typer.echo("Interrupted.", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # A reader such as `head` went away: not an error of ours.
            sys.stderr.close()
            raise typer.Exit(0) from None

    return wrapper  # type: ignore[return-value]


def _render() -> Any:
    """The renderer, imported only when a command prints for a human (it imports Rich only
    for a terminal)."""
    from toolfind.output import render

    return render


def _emit(document: Any) -> None:
    from toolfind.output.wire import dumps

    typer.echo(dumps(document))


def _open(catalogs: list[str] | None, no_cache: bool, weights: list[str] | None = None) -> Any:
    """Load the index for a command, printing load warnings on stderr."""
    from toolfind.store import segment
    from toolfind.store.cache import load_recorded

    run_key = segment.run_key(tuple(catalogs or ()), tuple(weights or ()))
    loaded = None if no_cache else load_recorded(run_key)
    if loaded is None:
        loaded = _load(catalogs, no_cache, weights, run_key)
    for finding in loaded.findings:
        _warn(f"Warning: skipped {finding}")
    return loaded.index


def _decode_all(index: Any) -> None:
    """Decode every tool of ``index`` at once, for a command that prints them all."""
    from toolfind.store.columns import decode_for_printing

    decode_for_printing(index.tools)


def _load(
    catalogs: list[str] | None,
    no_cache: bool,
    weights: list[str] | None,
    run_key: tuple[str, ...],
) -> Any:
    """:func:`_open`'s full path: config, catalogs, then the cache or a build."""
    from toolfind.config import for_run
    from toolfind.store.cache import load_index

    run = for_run(catalogs or (), weights or ())
    with _progress("Building the search index…"):
        return load_index(
            run.paths,
            run.params,
            max_file_size=run.max_file_size,
            use_cache=not no_cache,
            run_key=run_key,
            warn=_warn,
        )


@contextmanager
def _progress(message: str, after: float = 1.0) -> Iterator[None]:
    """A spinner on stderr once the work inside has taken ``after`` seconds; on a terminal only.

    Rich is imported by the timer, when the spinner starts: a load from the cache takes a few
    milliseconds, and importing Rich would cost more than the load.
    """
    if not sys.stderr.isatty():
        yield
        return
    import threading

    spinners: list[Any] = []
    timer = threading.Timer(after, lambda: spinners.append(_render().spinner(message)))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()  # a spinner that is being started must be stopped too
        for spinner in spinners:
            spinner.stop()


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"toolfind {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Search large LLM tool catalogs.

    Catalogs: --catalog/-c PATH, else $TOOLFIND_CATALOGS, else `catalogs` in toolfind.toml,
    else ./catalogs, else the catalogs shipped with toolfind.
    """


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
) -> None:
    """Rank tools for a query; a query that names a tool returns it first.

    Example: toolfind search "compress file" --json
    """
    if queries is None and (query is None or not query.strip()):
        _fail("search needs a QUERY (or --queries FILE for batch mode)", 2)
    from toolfind.output import wire
    from toolfind.store import segment

    index = _open(catalog, no_cache, weight)

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


@app.command()
@reports_errors
def validate(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Catalog files or directories (default: the catalogs in use)."),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too.")] = False,
    queries: Annotated[
        str | None,
        typer.Option("--queries", help="Labelled queries: add findability lint.", metavar="FILE"),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Check catalogs: every error and lint warning, one line each; exit 1 on errors.

    Example: toolfind validate catalogs/ --strict
    """
    from toolfind import catalog
    from toolfind.config import for_run
    from toolfind.output import wire

    run = for_run(paths or ())
    result = catalog.load(run.paths, max_bytes=run.max_file_size)
    found = list(result.findings) + catalog.lint(result)
    if queries is not None:
        found += _findability(result.tools, queries, run.params)
    if json_:
        _emit(wire.findings_records(found))
    else:
        _render().findings(found, len(result.files), len(result.tools))
    errors = any(f.severity == "error" for f in found)
    if errors or (strict and found):
        raise typer.Exit(1)


def _findability(tools: Any, queries_file: str, params: Any) -> list[Any]:
    from toolfind.eval import evaluate, queries
    from toolfind.store.index import SearchIndex

    index = SearchIndex.build(tools, params)
    labelled = queries.load_queries(Path(queries_file))
    return list(evaluate.findability_findings(index, labelled, file=queries_file))


# -- eval / tune --------------------------------------------------------------------------------

QueriesArg = Annotated[
    str, typer.Argument(help="Labelled queries file (YAML, JSON or JSON Lines).", metavar="QUERIES")
]
K1Opt = Annotated[float | None, typer.Option("--k1", help="Term-frequency saturation k1 to try.")]
BOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--b",
        help="Length normalisation: a number for every field, or FIELD=B (repeatable).",
        metavar="B",
    ),
]


def _scoring(index: Any, weight: list[str] | None, k1: float | None, b: list[str] | None) -> Any:
    """The index's settings with --weight, --k1 and --b applied."""
    from dataclasses import replace

    from toolfind.config import parse_weight_options, with_b

    params = index.params
    if weight:
        params = replace(params, weights=parse_weight_options(weight, params.weights))
    if k1 is not None:
        if k1 < 0:
            raise ConfigError(f"--k1 {k1!r}: k1 must be >= 0")
        params = replace(params, k1=k1)
    for option in b or ():
        key, sep, value = option.partition("=")
        try:
            params = with_b(params, {key.strip(): float(value)} if sep else float(option))
        except ValueError:
            raise ConfigError(f"--b {option!r}: expected a number or FIELD=NUMBER") from None
    return params


def _judged(index: Any, queries_file: str) -> Any:
    from toolfind.eval import queries

    return queries.resolve_queries(index, queries.load_queries(Path(queries_file)))


@app.command("eval")
@reports_errors
def eval_(
    queries_file: QueriesArg,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            help="Exit 1 when a metric is lower, e.g. ndcg@10=0.8 (repeatable).",
            metavar="METRIC=X",
        ),
    ] = None,
    worst: Annotated[
        int, typer.Option("--worst", min=0, help="How many of the worst queries to list.")
    ] = 10,
    weight: WeightOpt = None,
    k1: K1Opt = None,
    b: BOpt = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Measure ranking on labelled queries: MRR@10, Recall@1/5/10, NDCG@10, overall and per split.

    Example: toolfind eval queries.yaml --fail-under ndcg@10=0.8
    """
    from toolfind.eval import evaluate
    from toolfind.output import wire

    index = _open(catalog, no_cache)
    thresholds = [evaluate.parse_threshold(t) for t in fail_under or ()]
    params = _scoring(index, weight, k1, b)
    judged = _judged(index, queries_file)
    with _progress_bar("Evaluating", len(judged)) as progress:
        report = evaluate.evaluate(
            index, judged, params=params, thresholds=thresholds, worst=worst, progress=progress
        )
    if json_:
        _emit(wire.eval_record(report, index.tools))
    else:
        _render().eval_report(report, index.tools)
    for failure in report.failures:
        _warn(f"Failed: {failure}")
    if report.failures:
        raise typer.Exit(1)


@app.command()
@reports_errors
def tune(
    queries_file: QueriesArg,
    metric: Annotated[
        str, typer.Option("--metric", help="What to maximise: ndcg@10, mrr@10, recall@1/5/10.")
    ] = "ndcg@10",
    holdout: Annotated[
        float | None,
        typer.Option("--holdout", help="Hold out this share of queries at random (seeded)."),
    ] = None,
    train_split: Annotated[
        str | None, typer.Option("--train-split", help="Train on the queries of this split.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random holdout.")] = 0,
    rounds: Annotated[
        int, typer.Option("--rounds", min=1, help="Coordinate-ascent rounds at most.")
    ] = 3,
    write: Annotated[
        bool,
        typer.Option("--write", help="Store the chosen settings in toolfind.toml (backup kept)."),
    ] = False,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Tune field weights, per-field b, k1 and delta on labelled queries; report train and held-out metrics.

    Example: toolfind tune queries.yaml --holdout 0.3 --write
    """
    from toolfind.config import CONFIG_NAME, config_path, write_params
    from toolfind.eval import evaluate
    from toolfind.output import wire

    index = _open(catalog, no_cache)
    judged = _judged(index, queries_file)
    with _progress_bar("Tuning", None) as progress:
        report = evaluate.tune(
            index,
            judged,
            metric=metric,
            holdout=holdout,
            train_split=train_split,
            seed=seed,
            rounds=rounds,
            progress=progress,
        )
    if json_:
        _emit(wire.tune_record(report))
    else:
        _render().tune_report(report)
    if write:
        import os

        target = config_path(os.environ, Path.cwd()) or Path(CONFIG_NAME)
        backup = write_params(target, report.params)
        _warn(
            f"Wrote the chosen settings to {target}"
            + (f" (previous file kept as {backup})" if backup else "")
        )


def _progress_bar(label: str, total: int | None) -> Any:
    """A Rich progress bar on a terminal's stderr, fed by the core's (done, total) callback."""
    if sys.stderr.isatty():
        return _render().progress_bar(label, total)
    from contextlib import nullcontext

    return nullcontext(None)


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
    )
    run(options)


# -- catalog pull --------------------------------------------------------------------------------

catalog_app = typer.Typer(help="Work with catalog files.", no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")


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
            changes = ", ".join(
                f"{label} {', '.join(names)}"
                for label, names in (
                    ("added", s.added),
                    ("removed", s.removed),
                    ("changed", s.changed),
                )
                if names
            )
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


# -- running -----------------------------------------------------------------------------------


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app to run ``args`` with: the full app, or a copy holding only the command they name.

    Typer turns every registered command of an app into a click command on every run, which
    costs more than most commands' own work. When ``args`` start with a command's name (its
    group's name first for ``cache path`` and the like) the copy holds that command alone, with
    the same settings and the same top-level callback, so its help, usage errors and exit codes
    are the full app's. Anything else -- no arguments, ``--help``, an unknown name, a group
    without a known subcommand -- gets the full app, whose output lists or suggests the other
    commands. With ``--version`` first no command is needed at all: its eager callback prints
    and exits before a command is looked up.
    """
    if args and args[0] == "--version":
        return _with_only(app, commands=[], groups=[])
    return _pruned(app, args) or app


def _pruned(group: typer.Typer, args: Sequence[str]) -> typer.Typer | None:
    """A copy of ``group`` with only the command ``args`` start with, or None when there is none."""
    if not args:
        return None
    for command in group.registered_commands:
        if _command_name(command) == args[0]:
            return _with_only(group, commands=[command], groups=[])
    for sub in group.registered_groups:
        if sub.name == args[0] and sub.typer_instance is not None:
            inner = _pruned(sub.typer_instance, args[1:])
            if inner is None:
                return None
            pruned_sub = copy.copy(sub)
            pruned_sub.typer_instance = inner
            return _with_only(group, commands=[], groups=[pruned_sub])
    return None


def _with_only(
    group: typer.Typer, *, commands: list[CommandInfo], groups: list[TyperInfo]
) -> typer.Typer:
    """A shallow copy of ``group`` (same settings and callback) with other registrations."""
    pruned = copy.copy(group)
    pruned.registered_commands = commands
    pruned.registered_groups = groups
    return pruned


def _command_name(command: CommandInfo) -> str | None:
    """The name a registered command answers to, as Typer derives it."""
    if command.name:
        return command.name
    return typer.main.get_command_name(command.callback.__name__) if command.callback else None


def run() -> None:
    """Entry point without the fast path (for tools that import the app)."""
    app_for(sys.argv[1:])(prog_name="toolfind")


if __name__ == "__main__":  # pragma: no cover
    run()
