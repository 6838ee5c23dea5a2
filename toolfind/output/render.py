"""Human output: tables and text for a person. The only module that imports rich.

On a terminal Rich draws the output. Anywhere else the same tables are drawn here without
Rich (whose import costs more than the command): the same box characters and cells, at their
natural width, never wrapped or cut; a table that fits in 80 columns prints byte for byte what
Rich prints into a pipe. The switch follows Rich's rules (:func:`use_rich`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice

from toolfind.output import wire
from toolfind.output.encode import dumps
from toolfind.output.text import clean_text, render_line, render_path, render_text, terminal_json

# typing and contextlib cost a table command more than drawing its table: only the type
# checker reads typing, and the progress bar imports contextlib when a build shows one.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from typing import Any, TypeAlias

    from toolfind.models import Category, Finding, SearchResult, Similar, TermContribution, Tool

    #: A table cell or a line: text, or pieces of text some of which are styled.
    Cell: TypeAlias = str | Sequence[str | "Styled"]
    #: Where a command's human output goes: Rich on a terminal, plain text elsewhere. Both
    #: take the same lines, tables (headers, rows of cells, title) and JSON text.
    Output: TypeAlias = "RichOutput | PlainOutput"


class Styled:
    """Text that Rich shows in a style (``bold``, ``dim``, ``red``); plain output shows the text."""

    __slots__ = ("text", "style")

    def __init__(self, text: str, style: str) -> None:
        self.text = text
        self.style = style


#: ``--color``: ``auto`` (Rich's rules, :func:`use_rich`; Rich honours ``NO_COLOR``),
#: ``always`` (Rich draws with styles, into a pipe too) or ``never`` (no styles at all, on a
#: terminal too). Set by the command before it draws.
COLOR = "auto"


def use_rich(environ: Mapping[str, str] | None = None, stdout: Any = None) -> bool:
    """True when Rich should draw stdout, by Rich's own rules: ``TTY_COMPATIBLE=1`` or a
    non-empty ``FORCE_COLOR`` say yes, ``TTY_COMPATIBLE=0`` no, else whether it is a tty;
    ``--color always`` (:data:`COLOR`) says yes first."""
    if COLOR == "always":
        return True
    environ = os.environ if environ is None else environ
    stdout = sys.stdout if stdout is None else stdout
    compatible = environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    isatty = getattr(stdout, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _out() -> Output:
    # Chosen per call, writing to the sys.stdout of the moment (tests capture it).
    return RichOutput() if use_rich() else PlainOutput(sys.stdout)


# -- the commands' output ----------------------------------------------------------------------


def search(result: SearchResult, *, explain: bool = False) -> None:
    out = _out()
    if not result.hits:
        out.line("No tools found.")
        return
    rows: list[list[Cell]] = []
    for rank, hit in enumerate(result.hits, 1):
        name: list[str | Styled] = [hit.tool.qualified_name]
        if hit.match == "exact":
            name += [" ", Styled("(exact)", "bold")]
        if hit.tool.defer:
            name += [" ", Styled("(deferred)", "dim")]
        rows.append(
            [
                str(rank),
                name,
                f"{hit.confidence:.2f}",
                clean_text(hit.tool.summary, 160),
                ", ".join(hit.tool.all_tags),
            ]
        )
    # The name is never cut: tags give way first on a narrow terminal, then the rows stack.
    out.table(("#", "tool", "confidence", "description", "tags"), rows, key=1, drop=(4,))
    if not explain:
        return
    for hit in result.hits:
        rows = [
            [
                c.term if c.query_word == c.term else f"{c.term} (for {c.query_word})",
                c.field,
                f"{c.tf:g}",
                f"{c.idf:.4f}",
                f"{c.length_norm:.4f}",
                f"{c.weight:g}",
                f"{c.score:.4f}",
            ]
            for c in hit.explanation
        ]
        headers = ("term", "field", "tf", "idf", "length norm", "weight", "score")
        title = f"{hit.tool.qualified_name}: {hit.score:.4f}{_shares(hit.explanation)}"
        title += f", confidence {hit.confidence:.2f}"
        out.table(headers, rows, title=title, key=0, drop=(4, 3, 2, 5))


def _shares(rows: Sequence[TermContribution]) -> str:
    """Each signal's share of a hit's score, when more than the words' ran: `` = lexical
    0.3100 + semantic 0.1000 + rerank 0.4000`` (the stages' names, as ``stages`` says them;
    a row's field names its signal, every other row is a word's)."""
    shares = {"lexical": 0.0}
    for c in rows:
        signal = c.field if c.field in ("semantic", "rerank") else "lexical"
        shares[signal] = shares.get(signal, 0.0) + c.score
    if len(shares) == 1:
        return ""
    return " = " + " + ".join(f"{name} {share:.4f}" for name, share in shares.items())


def records(keys: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
    """``--fields`` for a person: a table of those keys of the commands' ``--json``
    records, a column each, the name (when asked for) never cut."""
    cells: list[list[Cell]] = [[record_cell(key, row.get(key)) for key in keys] for row in rows]
    key = keys.index("name") if "name" in keys else 0
    _out().table(tuple(keys), cells, key=key)


def record_cell(key: str, value: Any) -> str:
    """One value of a ``--json`` record in a table for a person: numbers as the commands'
    tables show them (``confidence`` 2 decimals, ``score`` 3), lists of words joined, a
    ``source`` as ``file#pointer``, yes or no, any other object as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        digits = {"confidence": ".2f", "score": ".3f"}.get(key, "g")
        return format(value, digits)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    if key == "source" and isinstance(value, dict):
        file, pointer = value.get("file") or "", value.get("pointer")  # rendered by wire
        return f"{file}#{pointer}" if pointer else str(file)
    if isinstance(value, list | dict):
        return dumps(value, compact=True)
    return str(value)


def why(record: Mapping[str, Any]) -> None:
    """``search --why TOOL`` for a person (``wire.why_record``): where the tool ranks and
    the first hit, the query words it lacks, then what each word and each signal adds to
    the tool and to the first hit."""
    out = _out()
    tool = f"{record['namespace']}/{record['name']}"
    first = record["first"]
    other = None if first is None else f"{first['namespace']}/{first['name']}"
    query = render_line(repr(record["query"]))
    if record["rank"] == 1:
        out.line(f"{tool} is the first hit for {query} (confidence {record['confidence']:.2f}).")
        other = None
    else:
        place = (
            f"ranks {_ordinal(record['rank'])} for {query} (confidence {record['confidence']:.2f})"
            if record["rank"] is not None
            else f"is not in the top {record['depth']} for {query}"
        )
        lead = "nothing was found" if first is None else f"the first hit is {other}"
        confident = "" if first is None else f" (confidence {first['confidence']:.2f})"
        out.line(f"{tool} {place}; {lead}{confident}.")
    lacks = record["lacks"]
    out.line(f"Query words it lacks: {', '.join(lacks)}" if lacks else "It holds every query word.")
    headers = ("word", tool) if other is None else ("word", tool, other)
    rows: list[list[Cell]] = [
        [w["word"], f"{w['score']:.3f}", f"{w['first']:.3f}"][: len(headers)]
        for w in record["words"]
    ]
    out.table(headers, rows, key=0)
    rows = [
        [
            s["signal"],
            f"{s['score']:.3f} ({s['share']:.0%})",
            f"{s['first']:.3f} ({s['first_share']:.0%})",
        ][: len(headers)]
        for s in record["signals"]
    ]
    totals = [sum(s[key] for s in record["signals"]) for key in ("score", "first")]
    total: list[Cell] = ["total", *(f"{value:.3f}" for value in totals)]
    rows.append(total[: len(headers)])
    out.table(("signal", *headers[1:]), rows, key=0)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def tools(rows: Sequence[Tool]) -> None:
    out = _out()
    if not rows:
        out.line("No tools.")
        return
    out.table(
        ("tool", "namespace", "summary", "tags", "deferred"),
        [
            [
                tool.name,
                tool.namespace,
                clean_text(tool.summary, 160),
                ", ".join(tool.all_tags),
                "yes" if tool.defer else "",
            ]
            for tool in rows
        ],
        key=0,
        drop=(3, 4, 1),
    )


def tool(tool: Tool, document: dict[str, Any]) -> None:
    """``show`` for a person: the tool's qualified name and where it was read, then its JSON
    document. Off a terminal the two lines go to stderr (for the person, who sees them
    there) and stdout is the JSON document alone: ``show NAME > tool.json`` is valid JSON."""
    out = _out()
    heading: list[str | Styled] = [Styled(tool.qualified_name, "bold")]
    if tool.defer:
        heading += [" ", Styled("(deferred)", "dim")]
    head = out if isinstance(out, RichOutput) else PlainOutput(sys.stderr)
    head.line(heading)
    if tool.source is not None:
        head.line([Styled(render_path(str(tool.source)), "dim")])
    out.json(dumps(document))


def similar(name: str, items: Sequence[Similar]) -> None:
    out = _out()
    if not items:
        out.line(f"No tools similar to {name}.")
        return
    rows: list[list[Cell]] = [
        [
            item.tool.qualified_name,
            f"{wire.score(item.score):.3f}",
            ", ".join(item.shared_terms),
            clean_text(item.tool.summary, 120),
        ]
        for item in items
    ]
    headers = ("tool", "score", "shared terms", "description")
    out.table(headers, rows, title=f"Similar to {name}", key=0, drop=(2, 1))


def summaries(tools: Iterable[Tool], *, markdown: bool = False) -> None:
    """One line per tool, ``namespace/name: summary`` (``- **namespace/name**: summary`` in
    Markdown), never Rich: the qualified name tells two tools of one name apart. Written as
    the tools come, a few hundred lines a write."""
    from toolfind.output.tool_formats import summaries_text

    tools = iter(tools)
    while batch := list(islice(tools, 512)):
        sys.stdout.write(summaries_text(batch, markdown=markdown))


def summaries_hint(tools: Sequence[Tool], every: bool) -> str:
    """The stderr line for ``summaries`` when it prints nothing ("" when it prints some)."""
    if tools:
        return ""
    if every:
        return "No enabled tools."
    from toolfind.output.tool_formats import NO_DEFERRED

    return f"{NO_DEFERRED} --all lists every enabled tool."


def categories(items: Sequence[Category]) -> None:
    out = _out()
    out.table(
        ("namespace", "tools", "deferred", "top tags"),
        [[c.name, str(c.tool_count), str(c.deferred_count), ", ".join(c.tags)] for c in items],
        key=0,
        drop=(3, 2),
    )
    out.line(f"{len(items)} namespaces, {sum(c.tool_count for c in items)} tools")


def findings(items: Sequence[Finding], files: int, tools: int, *, counts: bool = True) -> None:
    """One line a finding as compilers write them, ``file:line: severity: path: message
    [rule]`` (the file relative to the working directory when it is under it), then the
    counts (unless ``counts`` is false)."""
    from toolfind.userfiles import working_dir

    out = _out()
    cwd = working_dir()  # None when it was deleted: paths are then shown as given
    for f in items:
        style = "red" if f.severity == "error" else "yellow"
        where = render_path(_relative(f.file, cwd)) + (f":{f.line}" if f.line else "")
        what = render_line(f"{f.path}: {f.message}" if f.path else f.message)
        out.line([where, ": ", Styled(f.severity, style), f": {what} [{f.rule}]"])
    if not counts:
        return
    errors = sum(1 for f in items if f.severity == "error")
    warnings = len(items) - errors
    out.line(
        f"{_count(files, 'file')}, {_count(tools, 'tool')}: "
        f"{_count(errors, 'error')}, {_count(warnings, 'warning')}"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _relative(file: str, cwd: str | None) -> str:
    """``file`` relative to ``cwd`` when it is under it, else as given."""
    if cwd is None or not os.path.isabs(file):
        return file
    try:
        relative = os.path.relpath(file, cwd)
    except ValueError:  # another drive
        return file
    return file if relative.startswith(os.pardir) else relative


def cache_info(path: str, exists: bool, files: Sequence[tuple[str, int]]) -> None:
    """``cache info`` for a person: what ``wire.cache_info_record`` holds, sizes in KiB/MiB."""
    rows: list[list[Cell]] = [
        ["path", render_path(path)],
        ["exists", str(exists)],
        ["indexes", str(sum(1 for name, _ in files if name.endswith(".pickle")))],
        ["size", human_size(sum(size for _, size in files))],
    ]
    _out().table((), rows, title="toolfind cache", show_header=False)


def human_size(n: int, *, exact: bool = False) -> str:
    """``n`` bytes in binary units: ``512 B``, ``1.5 KiB``, ``2.4 MiB``, ``1.1 GiB`` (one
    decimal: a measured size); ``exact`` gives as many digits as it takes and none for a
    whole number (``10 MiB``: a limit, as the user wrote it)."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            break
    return f"{value:g} {unit}" if exact else f"{value:.1f} {unit}"


def spinner(message: str) -> Any:
    """A spinner on stderr, started; ``update(text)`` changes its message; the caller stops it."""
    from rich.console import Console

    status = Console(stderr=True).status(message)
    status.start()
    return status


def _pct(value: float) -> str:
    return f"{100 * value:.2f}"


def _metrics_row(label: str, m: Any) -> list[Cell]:
    return [label, str(m.count), *(_pct(v) for v in m.values())]


#: How many of the tools no query retrieves ``eval`` names in its table output.
_UNRETRIEVED_SHOWN = 20

_METRIC_HEADERS = ("queries", "MRR@10", "R@1", "R@5", "R@10", "NDCG@10")


def eval_report(report: Any, all_tools: Sequence[Tool]) -> None:
    out = _out()
    rows = [_metrics_row("all", report.overall)]
    rows += [_metrics_row(name or "-", m) for name, m in sorted(report.splits.items())]
    out.table(("split", *_METRIC_HEADERS), rows, title="Ranking quality (%)")
    if report.worst:
        worst: list[list[Cell]] = []
        for o in report.worst:
            ranks = ", ".join(
                f"{all_tools[doc].qualified_name}: "
                + (str(rank) if rank is not None else f"not in the top {report.depth}")
                for doc, rank in zip(o.query.relevant_ids, o.ranks, strict=True)
            )
            worst.append([o.query.query, _pct(o.metrics["ndcg@10"]), ranks])
        out.table(("query", "NDCG@10", "relevant tool: rank"), worst, title="Worst queries")
    if report.unretrieved:
        # One per line, at most _UNRETRIEVED_SHOWN: --json lists them all.
        missing = report.unretrieved
        out.line(f"{_count(len(missing), 'tool')} no query retrieves in its top 10:")
        for tool in missing[:_UNRETRIEVED_SHOWN]:
            out.line(f"  {tool.qualified_name}")
        if len(missing) > _UNRETRIEVED_SHOWN:
            out.line(f"  ... and {len(missing) - _UNRETRIEVED_SHOWN} more (--json lists them all)")


def tune_report(report: Any) -> None:
    out = _out()
    rows = [
        _metrics_row("train before", report.train_before),
        _metrics_row("train after", report.train_after),
    ]
    if report.holdout_before is not None and report.holdout_after is not None:
        rows.append(_metrics_row("held out before", report.holdout_before))
        rows.append(_metrics_row("held out after", report.holdout_after))
    out.table(("", *_METRIC_HEADERS), rows, title=f"Tuning {report.metric} (%)")
    params = report.params
    weights = ", ".join(f"{k}={v:g}" for k, v in params.weights.as_dict().items())
    out.line(f"weights: {weights}")
    out.line(
        f"k1={params.k1:g} delta={params.delta:g} b: "
        + ", ".join(f"{f}={params.b_for(f):g}" for f in params.weights.as_dict())
    )
    out.line(f"{report.trials} trials")


def progress_bar(
    label: str, total: int | None
) -> AbstractContextManager[Callable[[int, int], None]]:
    """A progress bar on stderr; yields the ``(done, total)`` callback the core calls."""
    from contextlib import contextmanager

    from rich.console import Console
    from rich.progress import Progress

    @contextmanager
    def bar() -> Iterator[Callable[[int, int], None]]:
        with Progress(console=Console(stderr=True), transient=True) as progress:
            task = progress.add_task(label, total=total)

            def update(done: int, all_: int) -> None:
                progress.update(task, completed=done, total=all_)

            yield update

    return bar()


# -- Rich, on a terminal -------------------------------------------------------------------------


class RichOutput:
    """Output through a Rich console on stdout (imported only when one is wanted)."""

    def __init__(self) -> None:
        from rich.console import Console

        # emoji=False: a catalog's ":warning:" is shown as written, here as in a pipe.
        styles: dict[str, Any] = {}
        if COLOR == "never":
            styles["color_system"] = None  # no escape codes at all, bold and dim included
        elif COLOR == "always":
            styles["force_terminal"] = True
        self.console = Console(
            file=sys.stdout, highlight=False, soft_wrap=True, emoji=False, **styles
        )

    def line(self, text: Cell = "") -> None:
        self.console.print(_markup(text))

    def table(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[Cell]],
        *,
        title: str | None = None,
        show_header: bool = True,
        key: int | None = None,
        drop: Sequence[int] = (),
    ) -> None:
        """A table fitted to the terminal. The ``key`` column (a tool's name: what a person
        pastes into ``show``) is never cut or folded: the other columns wrap, the ``drop``
        columns go (first listed first) when even wrapped they would not fit, and a
        terminal too narrow for the key and one other column gets each row stacked."""
        from rich.markup import escape
        from rich.table import Table

        shown = list(range(len(headers) or max(map(len, rows), default=0)))
        if key is not None:
            fitted = fit_columns(headers, rows, key, drop, self.console.width)
            if fitted is None:
                self._stacked(headers, rows, key, title)
                return
            shown = fitted
        title = None if title is None else escape(render_text(title))
        table = Table(title=title, show_header=show_header)
        for i in shown:
            if i == key:
                width = max(_width(line) for line in _lines(headers[i], rows, i))
                table.add_column(_markup(headers[i]), no_wrap=True, min_width=width)
            else:
                table.add_column(_markup(headers[i]) if headers else "", overflow="fold")
        for row in rows:
            table.add_row(*(_markup(row[i]) for i in shown))
        self.console.print(table)

    def _stacked(
        self, headers: Sequence[str], rows: Sequence[Sequence[Cell]], key: int, title: str | None
    ) -> None:
        """Each row as its key on a line of its own (after the columns left of it, such as
        a rank), then ``header: value`` lines for the rest, indented."""
        from rich.markup import escape
        from rich.padding import Padding

        if title is not None:
            self.console.print(escape(render_text(title)))
        for row in rows:
            first = [_markup(row[i]) for i in range(key + 1) if _plain(row[i])]
            self.console.print(" ".join(first))
            for i in range(key + 1, len(row)):
                if _plain(row[i]):
                    text = f"{_markup(headers[i])}: {_markup(row[i])}"
                    self.console.print(Padding(text, (0, 0, 0, 2), expand=False), soft_wrap=False)

    def json(self, text: str) -> None:
        # What print_json prints, but from encode.dumps's text as it is (print_json would parse
        # and re-encode it, turning terminal_json's escapes back into the controls).
        from rich.highlighter import JSONHighlighter

        shown = JSONHighlighter()(terminal_json(text))
        shown.no_wrap = True
        shown.overflow = None
        self.console.print(shown, soft_wrap=True)


#: A column other than the key is not squeezed below this (or its header, or its text).
_MIN_COLUMN = 16


def fit_columns(
    headers: Sequence[str],
    rows: Sequence[Sequence[Cell]],
    key: int,
    drop: Sequence[int],
    width: int,
) -> list[int] | None:
    """The columns (indices) of a table that fit in ``width`` terminal cells with the
    ``key`` column at its full width and each other one wrapped down to at most
    ``_MIN_COLUMN`` cells, dropping the ``drop`` columns in turn; None when not even the key
    and one other column fit (the rows are then stacked)."""

    def need(i: int) -> int:
        natural = max(_width(line) for line in _lines(headers[i], rows, i))
        if i == key:
            return natural
        return min(natural, max(_width(headers[i]), _MIN_COLUMN))

    shown = list(range(len(headers)))
    cost = {i: need(i) + 3 for i in shown}  # a cell's padding and its border

    def fits() -> bool:
        return 1 + sum(cost[i] for i in shown) <= width

    for i in drop:
        if fits():
            break
        shown.remove(i)
    return shown if fits() and len(shown) > 1 else None


def _lines(header: str, rows: Sequence[Sequence[Cell]], i: int) -> list[str]:
    """The lines of text of column ``i``, its header's included."""
    return [
        line for text in (header, *(_plain(row[i]) for row in rows)) for line in text.split("\n")
    ]


def _markup(cell: Cell) -> str:
    """A cell or line as Rich markup: its text escaped for Rich, and for the terminal
    (`render_text`, as `_plain` does)."""
    from rich.markup import escape

    if isinstance(cell, str):
        return escape(render_text(cell))
    return "".join(
        f"[{p.style}]{escape(render_text(p.text))}[/{p.style}]"
        if isinstance(p, Styled)
        else escape(render_text(p))
        for p in cell
    )


# -- plain text, anywhere else -------------------------------------------------------------------

# Rich's boxes, each as the characters of its lines: (left, horizontal, divider, right).
# A table with a header is drawn in HEAVY_HEAD, one without in SQUARE; ASCII when the output's
# encoding is not UTF-8.
_HEAVY_HEAD = ("┏━┳┓", "┃ ┃┃", "┡━╇┩", "│ ││", "└─┴┘")
_SQUARE = ("┌─┬┐", "│ ││", "├─┼┤", "│ ││", "└─┴┘")
_ASCII = ("+--+", "| ||", "|-+|", "| ||", "+--+")

#: The control characters Rich leaves out of text (bell, backspace, vertical tab, form feed,
#: carriage return).
_STRIP = dict.fromkeys((7, 8, 11, 12, 13))


class PlainOutput:
    """Rich's output into a pipe, without Rich: no styles, and tables never wrapped or cut."""

    def __init__(self, file: Any) -> None:
        self.file = file
        encoding = str(getattr(file, "encoding", None) or "utf-8").lower()
        self.ascii = not encoding.startswith("utf")

    def line(self, text: Cell = "") -> None:
        self.file.write(_clean(_plain(text)) + "\n")

    def table(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[Cell]],
        *,
        title: str | None = None,
        show_header: bool = True,
        key: int | None = None,
        drop: Sequence[int] = (),
    ) -> None:
        # Natural widths: nothing is cut in a pipe, so the key and drop columns change nothing.
        lines = table_lines(
            [_plain(h) for h in headers] if show_header else None,
            [[_plain(cell) for cell in row] for row in rows],
            ascii=self.ascii,
        )
        if title is not None:
            lines.insert(0, _clean(_plain(title)))
        self.file.write("\n".join(lines) + "\n")

    def json(self, text: str) -> None:
        # encode.dumps already wrote what Rich's print_json prints (indent 2, non-ASCII as is).
        self.file.write(terminal_json(text) + "\n")


def table_lines(
    headers: Sequence[str] | None, rows: Sequence[Sequence[str]], *, ascii: bool = False
) -> list[str]:
    """A table drawn as Rich draws it (padding of one space, left-justified cells), each
    column as wide as its widest line: a cell's lines are its lines of text."""
    box = _ASCII if ascii else _HEAVY_HEAD if headers is not None else _SQUARE
    count = max([len(headers or ())] + [len(row) for row in rows])
    head = [_cell(h) for h in headers] if headers is not None else None
    body = [[_cell(text) for text in row] for row in rows]
    widths = [0] * count
    for cells in ([head] if head is not None else []) + body:
        for i, (_, width) in enumerate(cells):
            widths[i] = max(widths[i], width)

    def rule(chars: str) -> str:
        left, horizontal, divider, right = chars[0], chars[1], chars[2], chars[3]
        return left + divider.join(horizontal * (w + 2) for w in widths) + right

    def text(chars: str, cells: list[tuple[list[str], int]]) -> list[str]:
        left, divider, right = chars[0], chars[2], chars[3]
        cells = cells + [([""], 0)] * (count - len(cells))
        height = max(len(lines) for lines, _ in cells)
        return [
            left
            + divider.join(
                f" {_pad(lines[n] if n < len(lines) else '', w)} "
                for (lines, _), w in zip(cells, widths, strict=True)
            )
            + right
            for n in range(height)
        ]

    lines = [rule(box[0])]
    if head is not None:
        lines += text(box[1], head)
        lines.append(rule(box[2]))
    for cells in body:
        lines += text(box[3], cells)
    lines.append(rule(box[4]))
    return lines


def _cell(text: str) -> tuple[list[str], int]:
    """A cell's lines, and the width of the widest."""
    if text.isascii() and text.isprintable():  # the usual cell: one line, a cell a character
        return [text], len(text)
    lines = _clean(text).split("\n")
    return lines, max(map(_width, lines))


def _plain(cell: Cell) -> str:
    """A cell's or line's text, whatever it holds made harmless to a terminal: an escape or
    control character (an OSC that retitles the window or writes the clipboard, a CSI)
    written as ``\\x1b`` (`output.text.render_text`), in every table and line of both
    outputs, whoever wrote the value (a config's key, a query, a tag)."""
    if isinstance(cell, str):
        return render_text(cell)
    return render_text("".join(p.text if isinstance(p, Styled) else p for p in cell))


def _clean(text: str) -> str:
    """Text as Rich shows it: its control characters left out, tabs as spaces (not a
    sanitiser: ``output.text.clean_text`` cleans tool text before it gets here)."""
    if text.isascii() and text.isprintable():
        return text
    return text.translate(_STRIP).expandtabs(8)


def _pad(text: str, width: int) -> str:
    if text.isascii():
        return text.ljust(width)
    return text + " " * (width - _width(text))


def _width(text: str) -> int:
    """How many terminal cells ``text`` takes: wide East Asian characters two, combining
    and format characters none."""
    if text.isascii():
        return len(text)
    import unicodedata

    cells = 0
    for ch in text:
        if ch.isascii():
            cells += 1
        elif unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            cells += 2
        else:
            cells += 1
    return cells
