"""What the commands share: the Typer app, common options, error reporting, loading the index.

Errors are one ``Error:`` line on stderr with exit code 1; usage errors exit 2; Ctrl-C exits
130 (see :func:`reports_errors`). With ``--json`` among the arguments an error is instead one
JSON object on stderr (``wire.error_record``), usage errors click finds included (:class:`Group`).
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import functools
import importlib
import inspect
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup

from toolfind.cli import grammar
from toolfind.cli.commands import shipped_note
from toolfind.cli.grammar import error_text, wants_json
from toolfind.cli.printing import renderer
from toolfind.errors import ToolfindError

if TYPE_CHECKING:
    from toolfind.store.index import SearchIndex

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
        echo_error(self.message, self.kind, as_json=True)


F = TypeVar("F", bound=Callable[..., Any])


#: What an option's value is called in ``--help`` when the table or the command names none:
#: every name is written one way, upper case (``--call-timeout NUMBER``, ``show NAME``).
_METAVARS = {"float": "NUMBER", "float range": "NUMBER", "path": "PATH", "file": "FILE"}
_METAVARS |= dict.fromkeys(("int", "int range", "integer", "integer range"), "N")


class Command(TyperCommand):
    """Every command's click class: one way to write a value's name in ``--help``, upper
    case (``NAME``, ``[QUERY...]``, ``--limit N``, ``--catalog PATH``), never Typer's
    ``{name}`` or ``<int range>``; a choice lists its values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.metavar is not None or getattr(param, "is_flag", False):
                continue
            if param.param_type_name == "argument":
                param.metavar = (param.name or "").upper() + ("..." if param.nargs != 1 else "")
            elif not hasattr(param.type, "choices"):  # a choice lists its values
                param.metavar = _METAVARS.get(param.type.name, "TEXT")

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = param.metavar or (param.name or "").upper()
                pieces.append(name if param.required else f"[{name}]")
        return pieces


class App(typer.Typer):
    """A Typer app whose commands are :class:`Command`s."""

    def command(self, *args: Any, **kwargs: Any) -> Callable[[F], F]:
        kwargs.setdefault("cls", Command)
        made: Callable[[F], F] = super().command(*args, **kwargs)
        return made


class Group(TyperGroup):
    """The app's click group: with ``--json`` among the arguments, the usage errors click
    finds (in the top level or in any command below it) are JSON objects too. ``--help``
    lists each command's whole first sentence, wrapped to the terminal (click cuts it to one
    line), and the top-level help says on stderr when the demo catalogs are in use."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if ctx.parent is not None:
            return super().parse_args(ctx, args)
        helped = "--help" in args or "-h" in args  # (the parser consumes args)
        try:
            return super().parse_args(ctx, args)
        except typer.Exit:  # --help (or --version) printed, to stdout
            if helped:
                _say_shipped_note()
            raise
        except _click_errors.UsageError as error:  # no arguments: the help, on stderr
            note = shipped_note(None) if _no_args_help(error) else ""
            if note:
                error.message = f"{error.message}\n\n{note}"
            raise

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Any = None,
        **extra: Any,
    ) -> Any:
        json_errors = wants_json(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except _click_errors.ClickException as error:
            raise _as_json(error) if json_errors and parent is None else error from None
        if parent is None:
            ctx.meta[_JSON_ERRORS] = json_errors
        return ctx

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _click_errors.ClickException as error:
            if ctx.meta.get(_JSON_ERRORS):
                raise _as_json(error) from None
            raise


def _no_args_help(error: Any) -> bool:
    """Whether click's ``error`` is the help shown for no arguments (click 8.2+)."""
    shown: Any = getattr(_click_errors, "NoArgsIsHelpError", None)
    return shown is not None and isinstance(error, shown)


def _as_json(error: Any) -> Any:
    no_args_help = getattr(_click_errors, "NoArgsIsHelpError", _JsonClickError)  # click 8.2+
    if isinstance(error, (_JsonClickError, no_args_help)):
        return error  # already JSON, or help rather than an error
    return _JsonClickError(error)


def _say_shipped_note() -> None:
    note = shipped_note(None)
    if note:
        typer.echo(note, err=True)


def subgroup(help: str) -> App:
    """A command group under the app (``cache``, ``catalog``): its help as the app's."""
    return App(cls=Group, help=help, no_args_is_help=True, rich_markup_mode=None)


app = App(
    name="toolfind",
    cls=Group,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Search large LLM tool catalogs: BM25F ranking, schemas in every format, an MCP server.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def annotated(opt: grammar.Opt) -> Any:
    """The Typer annotation of an option or argument of the one grammar (``cli.grammar``)."""
    kind = opt.kind
    choice: Any = Literal[opt.choices] if opt.choices else str
    types: dict[str, Any] = {
        grammar.FLAG: bool,
        grammar.SWITCH: bool if opt.default is not None else bool | None,
        grammar.TEXT: choice if opt.default is not None else choice | None,
        grammar.NUMBER: float | None,
        grammar.COUNT: int if opt.default is not None else int | None,
        grammar.MANY: list[str] | None,
        grammar.WORDS: list[str] | None,
        grammar.NAME: str,
    }
    extra: dict[str, Any] = {}
    if opt.metavar:
        extra["metavar"] = opt.metavar
    if opt.complete:
        from toolfind.cli.completion import completer

        extra["autocompletion"] = completer(opt.complete)
    if kind in (grammar.WORDS, grammar.NAME):
        return Annotated[types[kind], typer.Argument(help=opt.help, **extra)]
    decls = ("/".join(opt.decls),) if kind == grammar.SWITCH else opt.decls
    if kind == grammar.COUNT:
        extra["min"] = 1
    return Annotated[types[kind], typer.Option(*decls, help=opt.help, hidden=opt.hidden, **extra)]


def typer_command(spec: grammar.Command, body: Callable[[grammar.Params], int]) -> Any:
    """A Typer command of the grammar's ``spec``: its signature is the command's options, and
    it runs ``body`` with its arguments (exiting with its code when not 0)."""

    def command(**values: Any) -> None:
        code = body(spec.cls(values))
        if code:
            raise typer.Exit(code)

    keyword = inspect.Parameter.KEYWORD_ONLY
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                opt.dest,
                keyword,
                default=inspect.Parameter.empty if opt.kind == grammar.NAME else opt.default,
                annotation=annotated(opt),
            )
            for opt in spec.params
        ]
    )
    command.__name__ = command.__qualname__ = spec.name
    command.__doc__ = spec.help
    return command


# Options the other commands share with the index commands, declared once in the grammar.
CatalogOpt = annotated(grammar.CATALOG)
JsonOpt = annotated(grammar.JSON)
NoCacheOpt = annotated(grammar.NO_CACHE)
WeightOpt = annotated(grammar.WEIGHT)
SemanticOpt = annotated(grammar.SEMANTIC)
ColorOpt = annotated(grammar.COLOR)
RerankOpt = annotated(grammar.RERANK)


def warn(message: str) -> None:
    """Say ``message`` on stderr (a warning, a note, progress), its unprintable characters
    escaped."""
    from toolfind.output.text import render_line

    typer.echo(render_line(message), err=True)


def json_errors() -> bool:
    """Whether this run's errors are JSON objects (``--json`` is among its arguments)."""
    ctx = _click_globals.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(_JSON_ERRORS))


def echo_error(message: str, kind: str, *, as_json: bool) -> None:
    """Say an error on stderr: one ``Error:`` line, or ``as_json`` one JSON object."""
    typer.echo(error_text(message, kind, as_json=as_json), err=True)


def fail(message: str, code: int = 1, kind: str | None = None) -> NoReturn:
    """Report an error (one ``Error:`` line, or a JSON object under ``--json``) and exit
    ``code``: 2 for a usage error, else 1."""
    echo_error(message, kind or ("usage" if code == 2 else "error"), as_json=json_errors())
    raise typer.Exit(code)


def print_error(message: str, argv: Sequence[str], kind: str = "error") -> None:
    """The one way an error reaches the user outside :func:`fail`: ``toolfind.__main__``'s
    guard for what escapes a command, after it (or the fast path) ran with ``argv``: a JSON
    object when ``--json`` is among the arguments (before a ``--``), as :class:`Group` decides."""
    echo_error(message, kind, as_json=wants_json(argv) or json_errors())


def reports_errors(func: F) -> F:
    """Turn a ToolfindError into one ``Error:`` line (or JSON object) and its exit code (1, 2
    for a usage error), Ctrl-C into exit 130."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ToolfindError as exc:
            fail(str(exc), exc.exit_code, exc.kind)
        except KeyboardInterrupt:
            typer.echo("Interrupted.", err=True)
            raise typer.Exit(130) from None
        except BrokenPipeError:
            # A reader such as `head` went away: not an error of ours.
            sys.stderr.close()
            raise typer.Exit(0) from None

    return wrapper  # type: ignore[return-value]


def emit(document: Any) -> None:
    """Print ``document`` as the one JSON document of a command (``--json``)."""
    from toolfind.output.encode import dumps

    typer.echo(dumps(document))


def open_index(
    catalogs: Sequence[str] | None,
    no_cache: bool,
    weights: list[str] | None = None,
    semantic: bool | None = False,
    rerank: bool | None = False,
) -> "SearchIndex":
    """The index of a command (``store.run.open_run_index`` by the command line's rules),
    with the signals' switches it was given (None: as configured; a command that does not
    rank leaves them off), its warnings on stderr and a spinner on a terminal while it is
    built."""
    from toolfind.store.run import open_run_index

    loaded = open_run_index(
        catalogs or (),
        weights=weights or (),
        signals={"semantic": semantic, "rerank": rerank},
        use_cache=not no_cache,
        one_shot=True,
        remember=True,
        need_tools=True,
        warn=warn,
        building=_building,
    )
    index: SearchIndex = loaded.index
    return index


@contextmanager
def _building() -> Iterator[Callable[[int, int, int, int], None] | None]:
    """A build's progress: a spinner on a terminal, showing the counts."""
    with _progress("Building the search index…") as show:
        yield None if show is None else _counted(show)


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

    timer = threading.Timer(after, lambda: spinners.append(renderer().spinner(shown[0])))
    timer.daemon = True
    timer.start()
    try:
        yield show
    finally:
        timer.cancel()
        timer.join()  # a spinner that is being started must be stopped too
        for spinner in spinners:
            spinner.stop()
