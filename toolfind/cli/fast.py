"""The warm path: the index commands without Typer (whose import, with Rich's, json's and
typing's, costs several times Python's start-up).

The other parser of the one grammar (``cli.commands.COMMANDS``): it reads argv as the Typer
command would, and runs the same methods (``answer`` and ``emit``) on the index an earlier
identical run recorded (``store.run.open_recorded``). It answers only when that index is
there and current and the arguments are ones it reads as click would (a NAME no tool has
too: its error, as the Typer command says it, from the index file); anything else (a cold
cache, an option it leaves to Typer, a usage error, an ambiguous name) makes ``run`` return
None before anything is printed, and Typer answers. ``search``/``show --json`` without filters read only
what they print from the index file (``answer_from_file``).
"""

from __future__ import annotations

import os
import sys

from toolfind.cli.commands import COMMANDS
from toolfind.cli.grammar import (
    COUNT,
    FLAG,
    MANY,
    NAME,
    NUMBER,
    SWITCH,
    WORDS,
    error_text,
    wants_json,
)
from toolfind.store.run import open_recorded, open_recorded_segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from toolfind.cli.grammar import Opt, Params


def run(argv: Sequence[str]) -> int | None:
    """Answer the command in ``argv`` from the cache, or return None to fall back."""
    p = parse(argv)
    if p is None or os.environ.get("TOOLFIND_NO_FASTPATH") or p.problem():
        return None  # a usage error is Typer's to report
    prepared = p.prepare()
    if p.needs_config():
        return None
    from toolfind.errors import ToolNotFound

    lines = [*prepared]  # said on stderr before the answer, the index's warnings after them
    try:
        count = _answer(p, lines)
    except ToolNotFound as exc:  # said as the Typer command says it
        _say(lines)
        sys.stderr.write(error_text(str(exc), exc.kind, as_json=wants_json(argv)) + "\n")
        return exc.exit_code
    if count is None:
        return None
    sys.stdout.flush()
    return p.exit_code(count)


def _answer(p: Params, lines: list[str]) -> int | None:
    """Print the command's answer from the recorded index, after ``lines`` (the index's
    warnings join them); how many records it printed, or None to fall back. Raises
    ToolNotFound (said by the caller, after ``lines``) for a NAME no tool has."""
    from toolfind.errors import ToolfindError, ToolNotFound

    # A search ranks: the recorded run answers it only when its signals' switches, flags
    # over the run's config, leave every signal off (the warm path ranks by words alone).
    given = vars(p)
    switches = {s: given[s] for s in ("semantic", "rerank")} if "rerank" in given else None
    from_file = p.from_file()
    if from_file or p.NAMES_A_TOOL:
        # The index file answers search/show --json, and says that a NAME names no tool
        # whatever the output (the index itself is then never opened).
        warnings: list[str] = []
        seg = open_recorded_segment(p.catalog or (), warnings.append, switches)
        if seg is None:
            return None
        found = None
        try:
            if from_file:
                found = p.answer_from_file(seg)  # raises for a NAME no tool has too
            else:
                p.check_name(seg)
        except ToolNotFound:
            lines += warnings
            raise
        finally:
            seg.fh.close()
        if from_file:
            if found is None:
                return None
            document, notes, count = found
            _say([*lines, *warnings, *notes])
            from toolfind.output.encode import dumps

            sys.stdout.write(dumps(document) + "\n")
            return int(count)
    loaded = open_recorded(p.catalog or (), lines.append, switches)
    if loaded is None:
        return None
    try:
        items, notes = p.answer(loaded.index)
    except ToolNotFound:
        raise
    except ToolfindError:
        return None  # an ambiguous name: the Typer path lists the tools
    _say([*lines, *notes])
    return p.emit(items)


def _say(lines: list[str]) -> None:
    if lines:
        from toolfind.output.text import render_line

        for line in lines:
            sys.stderr.write(render_line(line) + "\n")


def parse(argv: Sequence[str]) -> Params | None:
    """``argv``'s command's arguments, as the Typer command would receive them; None
    for anything the warm path leaves to Typer (which reports every mistake): a command it
    does not answer, an option it does not read (``Opt.warm``) or does not know, a
    ``--option=value`` spelling, a value click might read differently, an option given twice
    that is not repeatable, a missing or blank NAME/QUERY."""
    spec = COMMANDS.get(argv[0]) if argv else None
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
        return spec.cls(values) if argument is None and not words else None
    if (argument.kind == NAME and len(words) > 1) or not " ".join(words).strip():
        return None
    values[argument.dest] = words if argument.kind == WORDS else words[0]
    return spec.cls(values)


def _value(opt: Opt, text: str) -> Any:
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
