"""What the commands share: the Typer app, common options, error reporting, loading the index.

Errors are one ``Error:`` line on stderr with exit code 1; usage errors exit 2; Ctrl-C exits
130 (see :func:`reports_errors`).
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from toolfind.errors import ToolfindError

# Only what every command needs is imported here; the rest inside the commands that use it:
# ``toolfind cache path`` must not pay for a search.

app = typer.Typer(
    name="toolfind",
    help="Search large LLM tool catalogs: BM25F ranking, schemas in every format, an MCP server.",
    no_args_is_help=True,
    add_completion=False,
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
SemanticOpt = Annotated[
    bool | None,
    typer.Option(
        "--semantic/--lexical",
        help="Fuse the semantic signal with BM25F (needs toolfind[semantic]), or rank by words only.",
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
    """The renderer, imported only when a command prints for a human."""
    from toolfind.output import render

    return render


def _emit(document: Any) -> None:
    from toolfind.output.wire import dumps

    typer.echo(dumps(document))


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
        with _progress("Building the search index…"):
            loaded = load_index(
                run.paths,
                run.params,
                max_file_size=run.max_file_size,
                use_cache=not no_cache,
                run_key=run_key,
                warn=_warn,
            )
    for finding in loaded.findings:
        _warn(f"Warning: skipped {finding}")
    if semantic:
        from toolfind.config import load_config
        from toolfind.store import vectors

        weight = load_config().semantic_weight
        vectors.enable(
            loaded.index, "" if no_cache else loaded.key, True, weight=weight, warn=_warn
        )
    return loaded.index


def _decode_all(index: Any) -> None:
    """Decode every tool of ``index`` at once, for a command that prints them all."""
    from toolfind.store.columns import decode_for_printing

    decode_for_printing(index.tools)


@contextmanager
def _progress(message: str, after: float = 1.0) -> Iterator[None]:
    """A spinner on stderr once the work inside has taken ``after`` seconds; on a terminal only.

    Rich is imported by the timer: a load from the cache costs less than importing Rich.
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
