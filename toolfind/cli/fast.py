"""Warm commands without Typer (whose import, with Rich's, json's and typing's, costs several
times Python's start-up).

It answers only when all it needs is in the cache (a manifest entry whose recorded stats still
hold, and its index file) and the arguments are the simple ones it understands; otherwise
``run`` returns None and the Typer app answers, with byte-identical output (tested).
``search``/``show --json`` read only what they print from the segment
(:class:`toolfind.store.segment.Segment`); the other commands load the cached index and print
through the very functions the Typer commands call.
"""

from __future__ import annotations

import os
import sys
from itertools import chain, islice

from toolfind.store import segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def run(argv: Sequence[str]) -> int | None:
    """Answer the command in ``argv`` from the cache, or return None to fall back."""
    args = parse(argv)
    if args is None or os.environ.get("TOOLFIND_NO_FASTPATH"):
        return None
    if args.command == "categories" and "--json" not in args.flags and not args.catalogs:
        if not os.environ.get("TOOLFIND_CATALOGS"):
            return None  # maybe the shipped demo catalogs, which the Typer command points out
    segment_only = "--json" in args.flags and args.flags <= _SEGMENT_FLAGS and not args.values
    if args.command in _SEGMENT_COMMANDS and segment_only:
        # search/show --json without filters or explanations: from the segment alone.
        return _run_on_segment(args)
    return _run_on_index(args)


class Grammar:
    """What the fast path accepts of one command: its flags, its options taking a value
    (repeatable or not), whether it takes one NAME/QUERY argument (``joins``: of several
    words, joined by spaces), and its ``-k`` default (None: no ``-k``; 0: ``-k``, no limit by
    default). Every command takes ``-c/--catalog PATH`` (repeatable). The Typer command reads
    all of it alike (tests/test_fast.py checks each option)."""

    __slots__ = ("flags", "formats", "joins", "limit", "takes_name", "valued")

    def __init__(
        self,
        flags: frozenset[str],
        valued: dict[str, bool],
        takes_name: bool,
        limit: int | None = None,
        *,
        joins: bool = False,
        formats: frozenset[str] = frozenset(),
    ) -> None:
        self.flags = flags
        self.valued = valued
        self.takes_name = takes_name
        self.limit = limit
        self.joins = joins
        #: The ``--format`` choices, when it takes ``--format``.
        self.formats = formats


#: ``show --format`` choices, as the Typer command spells them (cli.browse.ShowFormat).
SHOW_FORMATS = frozenset({"native", "openai", "anthropic", "mcp", "gemini"})
#: ``list``/``search`` ``--format`` choices (cli.common.RecordFormatOpt).
RECORD_FORMATS = frozenset({"table", "jsonl", "csv", "tsv"})

#: The commands the fast path answers, and what it reads of them.
GRAMMAR: dict[str, Grammar] = {
    "list": Grammar(
        frozenset({"--json", "--deferred", "--no-deferred", "--no-pager"}),
        {"--namespace": False, "--tag": True, "--format": False},
        False,
        0,
        formats=RECORD_FORMATS,
    ),
    "categories": Grammar(frozenset({"--json", "--no-pager"}), {}, False),
    "summaries": Grammar(frozenset({"--json", "--all", "--deferred", "--no-pager"}), {}, False),
    "similar": Grammar(frozenset({"--json", "--no-pager"}), {}, True, 5),
    "show": Grammar(frozenset({"--json"}), {"--format": False}, True, formats=SHOW_FORMATS),
    "search": Grammar(
        frozenset({"--json", "--schema", "--explain", "--no-pager"}),
        {"--namespace": False, "--tag": True, "--min-score": False, "--format": False},
        True,
        10,
        joins=True,
        formats=RECORD_FORMATS,
    ),
}

CATALOG_OPTIONS = ("-c", "--catalog")
LIMIT_OPTIONS = ("-k", "--limit")

#: Flags that exclude each other: Typer reports the first pair and keeps the last of the
#: second; either way, leave it to Typer.
_EXCLUSIVE = (frozenset({"--all", "--deferred"}), frozenset({"--deferred", "--no-deferred"}))


#: The commands a warm ``--json`` reads from the segment, without loading the index, when
#: they have no other flags than these and no other options than ``-c`` and ``-k``.
_SEGMENT_COMMANDS = frozenset({"search", "show"})
_SEGMENT_FLAGS = frozenset({"--json", "--schema"})


class Args:
    """A command's arguments as the fast path read them."""

    __slots__ = ("catalogs", "command", "flags", "limit", "name", "values")

    def __init__(self, command: str, limit: int | None) -> None:
        self.command = command
        self.catalogs: list[str] = []
        self.flags: set[str] = set()
        self.values: dict[str, list[str]] = {}
        self.name = ""
        self.limit = limit or 0


def parse(argv: Sequence[str]) -> Args | None:
    """``argv``'s command and arguments, or None for anything the fast path leaves to Typer
    (which reports every mistake): another command, an unknown option, a ``--option=value``
    spelling, a value Typer might read differently, a missing or blank NAME/QUERY."""
    grammar = GRAMMAR.get(argv[0]) if argv else None
    if grammar is None:
        return None
    args = Args(argv[0], grammar.limit)
    positional: list[str] = []
    rest = argv[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        has_value = i + 1 < len(rest)
        if arg in grammar.flags:
            args.flags.add(arg)
        elif arg in CATALOG_OPTIONS and has_value:
            i += 1
            args.catalogs.append(rest[i])
        elif grammar.limit is not None and arg in LIMIT_OPTIONS and has_value:
            i += 1
            if not _is_count(rest[i]):
                return None
            args.limit = int(rest[i])
        elif arg in grammar.valued and has_value:
            i += 1
            if arg in args.values and not grammar.valued[arg]:
                return None  # given twice: Typer keeps the last, leave that to it
            args.values.setdefault(arg, []).append(rest[i])
        elif arg.startswith("-"):
            return None
        else:
            positional.append(arg)
        i += 1
    if any(pair <= args.flags for pair in _EXCLUSIVE) or bool(positional) != grammar.takes_name:
        return None
    if len(positional) > 1 and not grammar.joins:
        return None
    args.name = " ".join(positional)
    return args if _plain(args, grammar) else None


def _plain(args: Args, grammar: Grammar) -> bool:
    """Whether Typer reads ``args``' values as the fast path does: a NAME/QUERY that is not
    blank, a plain decimal ``--min-score`` (which float() reads as click does), a known
    ``--format``."""
    if grammar.takes_name and not args.name.strip():
        return False
    score = args.values.get("--min-score", ["0"])[0].removeprefix("-")
    if not (score.isascii() and score.replace(".", "", 1).isdigit()):
        return False
    chosen = args.values.get("--format")
    if chosen is None:
        return True
    # --json with another --format is Typer's usage error to report.
    together = "table" in grammar.formats and "--json" in args.flags and chosen[0] != "table"
    return chosen[0] in grammar.formats and not together


def _is_count(text: str) -> bool:
    """A whole number of at least 1 in ASCII digits, which int() reads as click does."""
    return text.isascii() and text.isdigit() and int(text) >= 1


def _run_on_segment(args: Args) -> int | None:
    """``search QUERY --json`` and ``show NAME --json`` from the segment (see the module)."""
    seg = _open_segment(tuple(args.catalogs))
    if seg is None:
        return None
    try:
        if not seg.tool_count:
            return None  # nothing loaded: an error, which the Typer path reports
        if args.command == "search":
            out = _search(seg, args.name, args.limit, "--schema" in args.flags)
        else:
            out = _show(seg, args.name)
    finally:
        seg.fh.close()
    if out is None:
        return None
    for line in seg.warnings:
        sys.stderr.write(line + "\n")
    document, hint = out
    if hint:
        sys.stderr.write(hint + "\n")
    sys.stdout.write(document + "\n")
    sys.stdout.flush()
    return 0


def _run_on_index(args: Args) -> int | None:
    """``list``, ``categories``, ``summaries``, ``similar``, ``show`` and ``search`` (``--json``
    or a table) from the cached index, printed by the functions the Typer commands call."""
    from toolfind.errors import ToolfindError
    from toolfind.store import cache

    loaded = cache.load_recorded(segment.run_key(tuple(args.catalogs)))
    if loaded is None or not len(loaded.index.tools):
        return None  # not warm, or nothing loaded (an error the Typer path reports)
    try:
        items, hint = _answer(loaded.index, args)
    except ToolfindError:
        return None  # a miss or an ambiguity: the Typer path explains it
    for finding in loaded.findings:
        sys.stderr.write(f"Warning: skipped {finding}\n")
    if hint:
        sys.stderr.write(hint + "\n")
    _print(args, items)
    sys.stdout.flush()
    return 0


def _answer(index: Any, args: Args) -> tuple[Any, str]:
    """What the command prints, and its stderr hint. Raises ToolfindError as the index does."""
    command, flags = args.command, args.flags
    if command == "list":
        deferred = {"--deferred": True, "--no-deferred": False}
        wanted = next((deferred[f] for f in deferred if f in flags), None)
        namespace = args.values.get("--namespace", [None])[0]
        tags = args.values.get("--tag", ())
        hint = filter_warning(index, namespace, tags)
        if "--json" in flags:  # printed as read, as the Typer command does
            return islice(index.stream(namespace, tags, wanted), args.limit or None), hint
        rows = index.listed(namespace, tags, wanted)
        return rows[: args.limit or None], hint
    if command == "categories":
        return index.categories(), ""
    if command == "summaries":  # printed as read, as the Typer command does
        every = "--all" in flags
        tools = index.stream(deferred=None if every else True)
        first = next(tools, None)
        if first is not None:
            return chain((first,), tools), ""
        from toolfind.output.render import summaries_hint

        return (), summaries_hint((), every)
    if command == "similar":
        return index.similar(args.name, args.limit), ""
    if command == "show":
        from toolfind.output.tool_formats import tool_to_format

        tool = index.resolve(args.name)
        return (tool, tool_to_format(tool, args.values.get("--format", ["native"])[0])), ""
    score = args.values.get("--min-score")
    namespace = args.values.get("--namespace", [None])[0]
    search_tags = tuple(args.values.get("--tag", ()))
    result = index.search(
        args.name,
        args.limit,
        namespace=namespace,
        tags=search_tags,
        min_score=None if score is None else float(score[0]),
        explain="--explain" in flags,
    )
    hints = (
        filter_warning(index, namespace, search_tags),
        segment.unmatched_hint(list(result.unmatched_terms)),
    )
    return result, "\n".join(filter(None, hints))


def filter_warning(index: Any, namespace: str | None, tags: Sequence[str]) -> str:
    """The stderr line for a ``--namespace`` or ``--tag`` no tool has ("" if none): such a
    filter is not an error (exit 0, no rows), but a typo should not look like "no match"."""
    if namespace is None and not tags:
        return ""
    unknown = index.unknown_filters(namespace, tags)
    return f"Warning: {unknown}" if unknown else ""


def _print(args: Args, items: Any) -> None:
    """Print ``items`` as the Typer command does: its ``--json`` document, records one a
    line (``--format jsonl|csv|tsv``), or for a human (through the pager on a terminal)."""
    command = args.command
    chosen = args.values.get("--format", ["table"])[0] if command != "show" else "table"
    if chosen != "table":
        from toolfind.output import wire

        if command == "search":
            records = wire.hit_records(items, include_schema="--schema" in args.flags)
        else:
            records = [wire.tool_row(t) for t in items]
        sys.stdout.write(wire.records_text(records, chosen))
        return
    if "--json" not in args.flags:
        if sys.stdout.isatty() and command != "show":
            from toolfind.cli.pager import paged

            with paged("--no-pager" not in args.flags):
                _print_for_a_person(args, items)
        else:
            _print_for_a_person(args, items)
        return
    _print_json(args, items)


def _print_for_a_person(args: Args, items: Any) -> None:
    from toolfind.output import render

    command = args.command
    if command == "search":
        render.search(items, explain="--explain" in args.flags)
    elif command == "show":
        render.tool(*items)
    elif command == "similar":
        render.similar(args.name, items)
    elif command == "list":
        render.tools(items)
    elif command == "categories":
        render.categories(items)
    else:
        render.summaries(items)


def _print_json(args: Args, items: Any) -> None:
    command = args.command
    from toolfind.output import wire

    document: Any
    if command == "search":
        document = wire.search_record(items, include_schema="--schema" in args.flags)
    elif command == "show":
        document = items[1]
    elif command == "categories":
        document = wire.categories_record(items)
    else:
        record = {"list": wire.tool_row, "summaries": wire.summary_record}
        for piece in wire.dumps_array(map(record.get(command, wire.similar_record), items)):
            sys.stdout.write(piece)
        sys.stdout.write("\n")
        return
    sys.stdout.write(wire.dumps(document) + "\n")


def _open_segment(catalogs: tuple[str, ...]) -> segment.Segment | None:
    root = segment.default_cache_dir(os.environ)
    key = segment.recorded_key(root, segment.run_key(catalogs))
    if key is None:
        return None
    path = segment.index_file(root, key)
    try:
        # Unbuffered: the reads are small and scattered, a buffer would read 8 KiB for each.
        fh = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by run()
    except OSError:
        return None
    try:
        st = os.fstat(fh.fileno())
        if segment.unsafe_reason(st):
            raise ValueError("unsafe")
        return segment.Segment(fh, st.st_size)
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        fh.close()
        return None


def _search(seg: segment.Segment, query: str, limit: int, schema: bool) -> tuple[str, str] | None:
    """The search document: the one search (``toolfind.core.search``) over the segment."""
    from toolfind.core import search

    _, unmatched_words, exact, ranked = search.run(seg, query, limit)
    from toolfind.output.wire import dumps, hit_record, search_document

    record, view = seg.record, segment.ToolRecord
    hits = [hit_record(view(record(d)), s, "exact", include_schema=schema) for d, s in exact]
    hits += [hit_record(view(record(d)), s, "ranked", include_schema=schema) for d, s in ranked]
    unmatched = list(unmatched_words)
    return dumps(search_document(query, hits, unmatched)), segment.unmatched_hint(unmatched)


def _show(seg: segment.Segment, name: str) -> tuple[str, str] | None:
    ids = seg.named(name)
    if len(ids) != 1:
        return None  # a miss or an ambiguity: the Typer path explains it
    from toolfind.output.tool_formats import tool_to_format
    from toolfind.output.wire import dumps

    tool = segment.ToolRecord(seg.record(ids[0]))
    document = tool_to_format(tool, "native", carried=(seg.extras.get(ids[0], ()), ()))
    return dumps(document), ""
