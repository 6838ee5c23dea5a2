"""What the commands share: the Typer app, common options, error reporting, loading the index.

Errors are one ``Error:`` line on stderr with exit code 1; usage errors exit 2; Ctrl-C exits
130 (see :func:`reports_errors`). With ``--json`` among the arguments an error is instead one
JSON object on stderr (``wire.error_record``), usage errors click finds included (:class:`Group`).
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import functools
import importlib
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any, Literal, NoReturn, TypeVar

import typer
from typer.core import TyperGroup

from toolfind.errors import ToolfindError

#: The click Typer runs on: Typer 0.28 carries its own copy (``typer._click``), earlier ones
#: use the click package. Its exceptions and current context are the ones the app sees.
_CLICK = typer.BadParameter.__module__.rpartition(".")[0]
_click_errors: Any = importlib.import_module(_CLICK + ".exceptions")
_click_globals: Any = importlib.import_module(_CLICK + ".globals")

# Only what every command needs is imported here; the rest inside the commands that use it:
# ``toolfind cache path`` must not pay for a search.

#: ``ctx.meta`` key (shared by every context of a run): ``--json`` is among the arguments.
_JSON_ERRORS = "toolfind.json_errors"


class _JsonClickError(_click_errors.ClickException):  # type: ignore[misc]
    """A click error (a usage error, a bad option value) shown as one JSON object on stderr."""

    def __init__(self, error: Any) -> None:
        super().__init__(error.format_message())
        self.exit_code = error.exit_code
        self.kind = "usage" if isinstance(error, _click_errors.UsageError) else "error"

    def show(self, file: Any = None) -> None:
        _echo_error(self.message, self.kind, as_json=True)


class Group(TyperGroup):
    """The app's click group: with ``--json`` among the arguments, the usage errors click
    finds (in the top level or in any command below it) are JSON objects too."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Any = None,
        **extra: Any,
    ) -> Any:
        wants_json = "--json" in args[: args.index("--")] if "--" in args else "--json" in args
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except _click_errors.ClickException as error:
            raise _as_json(error) if wants_json and parent is None else error from None
        if parent is None:
            ctx.meta[_JSON_ERRORS] = wants_json
        return ctx

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _click_errors.ClickException as error:
            if ctx.meta.get(_JSON_ERRORS):
                raise _as_json(error) from None
            raise


def _as_json(error: Any) -> Any:
    no_args_help = getattr(_click_errors, "NoArgsIsHelpError", _JsonClickError)  # click 8.2+
    if isinstance(error, (_JsonClickError, no_args_help)):
        return error  # already JSON, or help rather than an error
    return _JsonClickError(error)


app = typer.Typer(
    name="toolfind",
    cls=Group,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Search large LLM tool catalogs: BM25F ranking, schemas in every format, an MCP server.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

F = TypeVar("F", bound=Callable[..., Any])

# Options shared by the commands, declared once.
CatalogOpt = Annotated[
    list[str] | None,
    typer.Option("--catalog", "-c", help="Catalog file or directory (repeatable).", metavar="PATH"),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON document (its shape: docs/json.md).")
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
SemanticOpt = Annotated[
    bool | None,
    typer.Option(
        "--semantic/--lexical",
        help="Fuse the semantic signal with BM25F (needs toolfind[semantic]), or rank by words only.",
    ),
]
NoPagerOpt = Annotated[
    bool,
    typer.Option(
        "--no-pager",
        help="Print straight to the terminal (default: long output goes through $TOOLFIND_PAGER,"
        " $PAGER or less -FRX; never in a pipe).",
    ),
]
RecordFormatOpt = Annotated[
    Literal["table", "jsonl", "csv", "tsv"],
    typer.Option(
        "--format",
        help="table, or one record a line: jsonl (the --json records), csv or tsv.",
    ),
]
NamespaceOpt = Annotated[
    str | None, typer.Option("--namespace", help="Only tools in this namespace.")
]
TagOpt = Annotated[
    list[str] | None,
    typer.Option("--tag", help="Only tools with this tag (repeatable: all must match)."),
]


def _warn(message: str) -> None:
    typer.echo(message, err=True)


def _json_errors() -> bool:
    """Whether this run's errors are JSON objects (``--json`` is among its arguments)."""
    ctx = _click_globals.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(_JSON_ERRORS))


def _echo_error(message: str, kind: str, *, as_json: bool) -> None:
    if as_json:
        from toolfind.output.wire import dumps, error_record

        typer.echo(dumps(error_record(message, kind), compact=True), err=True)
    else:
        typer.echo(f"Error: {message}", err=True)


def _fail(message: str, code: int = 1, kind: str | None = None) -> NoReturn:
    """Report an error (one ``Error:`` line, or a JSON object under ``--json``) and exit
    ``code``: 2 for a usage error, else 1."""
    _echo_error(message, kind or ("usage" if code == 2 else "error"), as_json=_json_errors())
    raise typer.Exit(code)


def print_error(message: str, argv: Sequence[str], kind: str = "error") -> None:
    """The one way an error reaches the user outside :func:`_fail`: ``toolfind.__main__``'s
    guard for what escapes a command, after it (or the fast path) ran with ``argv``: a JSON
    object when ``--json`` is among the arguments (before a ``--``), as :class:`Group` decides."""
    args = list(argv)
    wants_json = "--json" in (args[: args.index("--")] if "--" in args else args)
    _echo_error(message, kind, as_json=wants_json or _json_errors())


def reports_errors(func: F) -> F:
    """Turn a ToolfindError into one ``Error:`` line (or JSON object) and its exit code (1, 2
    for a usage error), Ctrl-C into exit 130."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ToolfindError as exc:
            _fail(str(exc), exc.exit_code, exc.kind)
        except KeyboardInterrupt:
            typer.echo("Interrupted.", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # A reader such as `head` went away: not an error of ours.
            sys.stderr.close()
            raise typer.Exit(0) from None

    return wrapper  # type: ignore[return-value]


def _render() -> Any:
    """The renderer, imported only when a command prints for a human."""
    from toolfind.output import render

    return render


def _paged(no_pager: bool) -> Any:
    """The pager for a command's human output (see toolfind.cli.pager)."""
    from toolfind.cli.pager import paged

    return paged(not no_pager)


def _record_format(format_: str, json_: bool) -> str:
    """The output format of ``list``/``search``: ``json`` for --json, else ``--format``'s;
    both at once (other than the default table) is a usage error."""
    if json_ and format_ != "table":
        _fail(f"use either --json or --format {format_}, not both", 2)
    return "json" if json_ else format_


def _emit(document: Any) -> None:
    from toolfind.output.wire import dumps

    typer.echo(dumps(document))


def _emit_array(records: Iterable[Any]) -> None:
    """Print a JSON array as :func:`_emit` would, each record written as it is made."""
    from toolfind.output.wire import dumps_array

    write = sys.stdout.write
    for piece in dumps_array(records):
        write(piece)
    write("\n")


def _open(
    catalogs: list[str] | None,
    no_cache: bool,
    weights: list[str] | None = None,
    semantic: bool | None = None,
) -> Any:
    """Load the index for a command (from the cache, else config, catalogs and a build),
    printing load warnings on stderr. ``semantic`` True turns the semantic signal on (or
    fails with the line saying how to get it); the command line is lexical otherwise."""
    from toolfind.store import segment
    from toolfind.store.cache import load_recorded

    run_key = segment.run_key(tuple(catalogs or ()), tuple(weights or ()))
    loaded = None if no_cache else load_recorded(run_key)
    if loaded is None:
        from toolfind.config import for_run
        from toolfind.store.cache import load_index

        run = for_run(catalogs or (), weights or ())
        with _progress("Building the search index…") as show:
            loaded = load_index(
                run.paths,
                run.params,
                max_file_size=run.max_file_size,
                use_cache=not no_cache,
                run_key=run_key,
                warn=_warn,
                progress=None if show is None else _counted(show),
            )
    for finding in loaded.findings:
        _warn(f"Warning: skipped {finding}")
    if not len(loaded.index.tools):
        _nothing_loaded(catalogs)
    if semantic:
        from toolfind.config import load_config
        from toolfind.store import vectors

        weight = load_config().semantic_weight
        vectors.enable(
            loaded.index, "" if no_cache else loaded.key, True, weight=weight, warn=_warn
        )
    return loaded.index


#: Said where a person could take the demo catalogs for their own (not on every search).
SHIPPED_NOTE = (
    "Note: the catalogs in use are the demo ones shipped with toolfind (no --catalog,"
    " $TOOLFIND_CATALOGS, toolfind.toml or ./catalogs here)."
)


def _shipped_note(catalogs: Sequence[str] | None) -> str:
    """:data:`SHIPPED_NOTE` when a run with ``catalogs`` reads the shipped catalogs because
    nothing is configured, else ''."""
    if catalogs:
        return ""
    from toolfind.config import for_run, uses_packaged_catalogs

    try:
        return SHIPPED_NOTE if uses_packaged_catalogs(for_run(())) else ""
    except ToolfindError:
        return ""  # a broken config is reported by the commands that need it


def _nothing_loaded(catalogs: Sequence[str] | None) -> NoReturn:
    """Raise the error of a run whose catalogs hold no tool: never an empty answer."""
    from toolfind.config import for_run
    from toolfind.errors import NothingLoaded

    paths = ", ".join(str(p) for p in for_run(catalogs or ()).paths)
    raise NothingLoaded(f"0 tools loaded from {paths}")


def _decode_all(index: Any) -> None:
    """Decode every tool of ``index`` at once, for a command that prints them all."""
    from toolfind.store.columns import decode_for_printing

    decode_for_printing(index.tools)


def _counted(show: Callable[[str], None]) -> Callable[[int, int, int, int], None]:
    """A build's progress callback (``store.cache.load_index``) that shows the counts."""

    def progress(read: int, found: int, tools: int, analysed: int) -> None:
        files = f"{read:,}/{found:,} files read"
        if not analysed:
            show(f"Reading catalogs: {read:,}/{found:,} files, {tools:,} tools…")
        elif analysed < tools:
            show(f"Indexing {analysed:,}/{tools:,} tools ({files})…")
        else:  # what is left: the postings, the impacts, the cache file
            show(f"Indexing {tools:,} tools ({files}): weighing and writing…")

    return progress


@contextmanager
def _progress(message: str, after: float = 1.0) -> Iterator[Callable[[str], None] | None]:
    """A spinner on stderr once the work inside has taken ``after`` seconds; on a terminal only.
    Yields a function that changes its message (None off a terminal: nothing is shown).

    Rich is imported by the timer: a load from the cache costs less than importing Rich.
    """
    if not sys.stderr.isatty():
        yield None
        return
    import threading

    spinners: list[Any] = []
    shown = [message]

    def show(text: str) -> None:
        shown[0] = text  # the spinner, when the timer starts it, shows the latest
        for spinner in spinners:
            spinner.update(text)

    timer = threading.Timer(after, lambda: spinners.append(_render().spinner(shown[0])))
    timer.daemon = True
    timer.start()
    try:
        yield show
    finally:
        timer.cancel()
        timer.join()  # a spinner that is being started must be stopped too
        for spinner in spinners:
            spinner.stop()
