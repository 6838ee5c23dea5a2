"""The warm path: the index commands without Typer (whose import, with Rich's, json's and
typing's, costs several times Python's start-up).

The other parser of the one table (``cli.commands.COMMANDS``): it reads argv as the Typer
command would, and runs the same bodies (``commands.answer`` and ``commands.emit``) on the
index an earlier identical run recorded (``store.run.open_recorded``). It answers only when
that index is there and current and the arguments are ones it reads as click would (a name
no tool has too: its error, as Typer's command says it); anything else (a cold cache, an
option it leaves to Typer, a usage error, an ambiguous name) makes ``run`` return None before
anything is printed, and Typer answers. ``search``/``show --json`` without
filters read only what they print from the index file (``commands.answer_from_file``).
"""

from __future__ import annotations

import os
import sys

from toolfind.cli import commands
from toolfind.cli.commands import COUNT, FLAG, MANY, NAME, NUMBER, SWITCH, WORDS
from toolfind.store.run import open_recorded, open_recorded_segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def run(argv: Sequence[str]) -> int | None:
    """Answer the command in ``argv`` from the cache, or return None to fall back."""
    parsed = parse(argv)
    if parsed is None or os.environ.get("TOOLFIND_NO_FASTPATH"):
        return None
    name, p = parsed
    if commands.problem(name, p):
        return None  # a usage error: Typer's to report
    prepared = commands.prepare(name, p)
    if name == "categories" and not commands.machine(p) and not p.catalog:
        if not os.environ.get("TOOLFIND_CATALOGS", "").strip():
            return None  # maybe the shipped demo catalogs, which need the config to tell
    from toolfind.errors import ToolNotFound

    lines = [*prepared]  # said on stderr before the answer, the index's warnings after them
    try:
        code = _answer(name, p, lines)
    except ToolNotFound as exc:  # said as the Typer command says it
        _say(lines)
        as_json = commands.wants_json(argv)
        sys.stderr.write(commands.error_text(str(exc), exc.kind, as_json=as_json) + "\n")
        return exc.exit_code
    if code is not None:
        sys.stdout.flush()
    return code


def _answer(name: str, p: commands.Params, lines: list[str]) -> int | None:
    """Print command ``name``'s answer from the recorded index, after ``lines`` (the index's
    warnings join them); its exit code, or None to fall back. Raises ToolNotFound (said
    by the caller, after ``lines``) for a NAME no tool has."""
    from toolfind.errors import ToolfindError, ToolNotFound

    from_file = commands.from_file(name, p)
    if from_file or name in commands.NAMING:
        # The index file answers search/show --json, and says that a name names no tool
        # whatever the output (the index itself is then never opened).
        warnings: list[str] = []
        seg = open_recorded_segment(p.catalog or (), warnings.append)
        if seg is None:
            return None
        try:
            if not from_file:
                commands.named_in_file(seg, p.name)
                found = None
            else:
                found = commands.answer_from_file(name, seg, p)
        except ToolNotFound:
            lines += warnings
            raise
        finally:
            seg.fh.close()
        if from_file:
            if found is None:
                return None
            document, notes = found
            _say([*lines, *warnings, *notes])
            from toolfind.output.wire import dumps

            sys.stdout.write(dumps(document) + "\n")
            return commands.exit_code(p, len(document["hits"]) if name == "search" else 1)
    loaded = open_recorded(p.catalog or (), lines.append)
    if loaded is None:
        return None
    try:
        items, notes = commands.answer(name, loaded.index, p)
    except ToolNotFound:
        raise
    except ToolfindError:
        return None  # an ambiguity: the Typer path lists the tools
    _say([*lines, *notes])
    from toolfind.cli.printing import emit

    return commands.exit_code(p, emit(name, p, items))


def _say(lines: list[str]) -> None:
    if lines:
        from toolfind.output.text import render_line

        for line in lines:
            sys.stderr.write(render_line(line) + "\n")


def parse(argv: Sequence[str]) -> tuple[str, commands.Params] | None:
    """``argv``'s command and its arguments, as the Typer command would receive them; None
    for anything the warm path leaves to Typer (which reports every mistake): a command it
    does not answer, an option it does not read (``Opt.warm``) or does not know, a
    ``--option=value`` spelling, a value click might read differently, an option given twice
    that is not repeatable, a missing or blank NAME/QUERY."""
    spec = commands.COMMANDS.get(argv[0]) if argv else None
    if spec is None or not spec.warm:
        return None
    values: dict[str, Any] = {opt.dest: opt.default for opt in spec.params}
    spelled = {spelling: opt for opt in spec.params for spelling in opt.warm}
    given: set[str] = set()
    words: list[str] = []
    rest = list(argv[1:])
    while rest:
        token = rest.pop(0)
        opt = spelled.get(token)
        if opt is None:
            if token.startswith("-"):
                return None
            words.append(token)
            continue
        if opt.kind == FLAG:
            value: Any = True
        elif opt.kind == SWITCH:
            value = token == opt.decls[0]
        elif not rest:
            return None
        else:
            value = _value(opt, rest.pop(0))
        if value is None or (opt.dest in given and opt.kind != MANY and values[opt.dest] != value):
            return None  # given twice, differently: Typer keeps the last, leave that to it
        values[opt.dest] = [*(values[opt.dest] or ()), value] if opt.kind == MANY else value
        given.add(opt.dest)
    argument = next((o for o in spec.params if o.kind in (WORDS, NAME)), None)
    if argument is None or not words:
        return (spec.name, commands.Params(values)) if argument is None and not words else None
    if (argument.kind == NAME and len(words) > 1) or not " ".join(words).strip():
        return None
    values[argument.dest] = words if argument.kind == WORDS else words[0]
    return spec.name, commands.Params(values)


def _value(opt: commands.Opt, text: str) -> Any:
    """``text`` as click reads it for ``opt``; None when the warm path is not sure it would:
    a choice it does not have, a count that is not plain ASCII digits from 1, a number that
    is not a plain decimal (float() and click agree on those)."""
    if opt.kind == COUNT:
        return int(text) if text.isascii() and text.isdigit() and int(text) >= 1 else None
    if opt.kind == NUMBER:
        plain = text.removeprefix("-")
        return float(text) if plain.isascii() and plain.replace(".", "", 1).isdigit() else None
    if opt.choices and text not in opt.choices:
        return None
    return text
