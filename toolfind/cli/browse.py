"""The Typer commands that read the index: search, show, list, schemas, similar, categories,
summaries. One parser of the grammar in ``cli.commands`` (the warm path is the other): each
command's signature is made from its class, and it runs the methods written there.
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

from toolfind.cli.commands import COMMANDS
from toolfind.cli.common import (
    app,
    echo_error,
    json_errors,
    open_index,
    reports_errors,
    typer_command,
    warn,
)
from toolfind.cli.grammar import Params
from toolfind.errors import UsageError


def _run(p: Params) -> int:
    """The command of arguments ``p``: usage checked, the index opened (from the cache, else
    built), the body run. Returns the exit code."""
    problem = p.problem()
    if problem:
        raise UsageError(problem)
    for note in p.prepare():
        warn(note)
    index = open_index(p.catalog, p.no_cache, p.weight, p.semantic, p.rerank)
    return p.run(index, warn, _batch_error)


def _batch_error(message: str, kind: str) -> None:
    echo_error(message, kind, as_json=json_errors())


for _spec in COMMANDS.values():
    app.command(_spec.name)(reports_errors(typer_command(_spec, _run)))
