"""The ``toolfind`` command line: the top-level options, and running only the invoked command.

The commands live in browse (the index), quality (validate, eval, tune), serving (serve-mcp,
catalog pull, cache) and settings (config); importing them registers them on the one app
(cli.common.app), in the order ``--help`` lists them.
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import copy
import os
import sys
from collections.abc import Sequence
from typing import Annotated

import typer
import typer.main
from typer.models import CommandInfo, TyperInfo

from toolfind.cli import (  # noqa: F401 - importing them registers the commands
    browse,
    models,
    quality,
    serving,
    settings,
    usage,
)
from toolfind.cli.common import app
from toolfind.version import __version__

__all__ = ["app", "app_for", "run"]


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
            "-V",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="Read this toolfind.toml (trusted as given) instead of looking upwards for "
            "one; as $TOOLFIND_CONFIG.",
            metavar="FILE",
        ),
    ] = None,
) -> None:
    """Search large LLM tool catalogs.

    Catalogs: --catalog/-c PATH, else $TOOLFIND_CATALOGS, else `catalogs` in toolfind.toml,
    else ./catalogs, else the catalogs shipped with toolfind.
    """
    if config is not None:
        import os

        if not config.strip():
            raise typer.BadParameter("give a toolfind.toml file", param_hint="'--config'")
        # One way for every layer to see it (config, the warm path's run key, serve-mcp).
        os.environ["TOOLFIND_CONFIG"] = config


# -- running -----------------------------------------------------------------------------------


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app to run ``args`` with: the full app, or a copy holding only the command they name.

    Typer turns every registered command into a click command on every run, which costs more
    than most commands' own work. The copy keeps the settings and top-level callback, so help,
    usage errors and exit codes are the full app's; anything that names no command (``--help``,
    an unknown name) gets the full app, which lists or suggests the others. ``--version`` needs
    no command: its eager callback prints and exits first.
    """
    if args and args[0] in VERSION:
        return _with_only(app, commands=[], groups=[])
    if not args and _COMPLETE in os.environ:  # the shell asks what the words typed complete to
        args = completion_words()
    if not args or args[0] in ("--help", "-h"):
        return app
    return _pruned(app, _after_globals(args)) or app


def _after_globals(args: Sequence[str]) -> Sequence[str]:
    """``args`` from the command on: without a leading ``--config FILE`` (or ``--config=FILE``)."""
    if args and args[0].startswith("--config="):
        return args[1:]
    if len(args) >= 2 and args[0] == "--config":
        return args[2:]
    return args


#: The spellings of ``--version``.
VERSION = ("--version", "-V")
#: The variable the shell's completion script sets (Typer's: ``_<PROG>_COMPLETE``).
_COMPLETE = "_TOOLFIND_COMPLETE"


def completion_words() -> list[str]:
    """The words typed so far after ``toolfind`` when the shell asks for completions (bash
    passes them in ``COMP_WORDS``, zsh, fish and PowerShell in ``_TYPER_COMPLETE_ARGS``):
    the command they name is the only one turned into a click command, as for a run."""
    import shlex

    text = os.environ.get("COMP_WORDS") or os.environ.get("_TYPER_COMPLETE_ARGS", "")
    try:
        words = shlex.split(text)
    except ValueError:  # an unclosed quote in what is typed
        return []
    return words[1:2]  # the command; Typer reads the rest from the environment itself


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
