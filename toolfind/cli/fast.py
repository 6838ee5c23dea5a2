"""The warm path: the index commands without Typer (whose import, with Rich's, json's and
typing's, costs several times Python's start-up).

The other parser of the one grammar (``cli.commands.COMMANDS``): it reads argv as the Typer
command would, and runs the same methods (``answer`` and ``emit``) on the index an earlier
identical run recorded (``store.run.open_recorded``). It answers only when that index is
there and current and the arguments are ones it reads as click would; anything else (a cold
cache, an option it leaves to Typer, a usage error, a miss) makes ``run`` return None before
anything is printed, and Typer answers. ``search``/``show --json`` without filters read only
what they print from the index file (``answer_from_file``).
"""

from __future__ import annotations

import os
import sys

from toolfind.cli.commands import COMMANDS
from toolfind.cli.grammar import COUNT, FLAG, MANY, NAME, NUMBER, SWITCH, WORDS
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
    warnings: list[str] = []
    # A search ranks: the recorded run answers it only when its signals' switches, flags
    # over the run's config, leave every signal off (the warm path ranks by words alone).
    given = vars(p)
    switches = {s: given[s] for s in ("semantic", "rerank")} if "rerank" in given else None
    if p.from_file():
        seg = open_recorded_segment(p.catalog or (), warnings.append, switches)
        if seg is None:
            return None
        try:
            found = p.answer_from_file(seg)
        finally:
            seg.fh.close()
        if found is None:
            return None
        document, notes, count = found
        _say([*prepared, *warnings, *notes])
        from toolfind.output.encode import dumps

        sys.stdout.write(dumps(document) + "\n")
    else:
        from toolfind.errors import ToolfindError

        loaded = open_recorded(p.catalog or (), warnings.append, switches)
        if loaded is None:
            return None
        try:
            items, notes = p.answer(loaded.index)
        except ToolfindError:
            return None  # a miss or an ambiguity: the Typer path explains it
        _say([*prepared, *warnings, *notes])
        count = p.emit(items)
    sys.stdout.flush()
    return p.exit_code(count)


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
