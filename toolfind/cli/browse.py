"""The Typer commands that read the index: search, show, list, schemas, similar, categories,
summaries. One parser of the table in ``cli.commands`` (the warm path is the other): each
command's signature is made from it, and it runs the body written there.
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

from toolfind.cli import commands
from toolfind.cli.common import (
    _echo_error,
    _json_errors,
    _open,
    _warn,
    app,
    reports_errors,
    typer_command,
)
from toolfind.errors import UsageError


def _run(name: str, p: commands.Params) -> int:
    """Command ``name`` with arguments ``p``: usage checked, the index opened (from the
    cache, else built), the body run. Returns the exit code."""
    problem = commands.problem(name, p)
    if problem:
        raise UsageError(problem)
    for note in commands.prepare(name, p):
        _warn(note)
    index = _open(
        p.catalog,
        p.no_cache,
        getattr(p, "weight", None),
        getattr(p, "semantic", False),  # a command without the option does not rank
        getattr(p, "rerank", False),
    )
    if name == "search" and p.queries is not None:
        return commands.search_batch(index, p, _batch_error)
    return commands.run(name, index, p, _warn)


def _batch_error(message: str, kind: str) -> None:
    _echo_error(message, kind, as_json=_json_errors())


def _register() -> None:
    for spec in commands.COMMANDS.values():

        def body(p: commands.Params, name: str = spec.name) -> int:
            return _run(name, p)

        app.command(spec.name)(reports_errors(typer_command(spec, body)))


_register()
