"""Warm commands without Typer.

Typer, Rich, json, typing and the index classes together cost several times Python's start-up;
the hot commands of an agent's loop should not pay that. This path answers only when everything
it needs is already in the cache (a manifest entry whose recorded stats still hold, and its
index file) and the arguments are the simple ones it understands. In every other case,
including any doubt, ``run`` returns None and the Typer app answers instead: the two paths
give byte-identical output for the same arguments (tested).

``search QUERY --json`` and ``show NAME --json`` read only what they print, through
:class:`toolfind.store.segment.Segment`, importing only the standard library's cheapest modules.
``list``, ``categories``, ``summaries``, ``similar``, ``show`` (a table, or another
``--format``) and ``search`` (a table, or with filters), JSON or not, load the cached index
(:func:`toolfind.store.cache.load_recorded`) and print through the very functions the Typer
commands call: they skip Typer's import, about three times Python's start-up.
"""

from __future__ import annotations

import marshal
import os
import sys

from toolfind.store import segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def run(argv: Sequence[str]) -> int | None:
    """Answer the command in ``argv`` from the cache, or return None to fall back."""
    if not argv:
        return None
    parsed = _parse(list(argv))
    if parsed is None:
        # Tables, filters, explanations and the other commands: from the whole index.
        return _run_on_index(list(argv)) if argv[0] in _INDEX_COMMANDS else None
    catalogs, command, text, limit, schema = parsed
    seg = _open_segment(tuple(catalogs))
    if seg is None:
        return None
    try:
        if command == "search":
            out = _search(seg, text, limit, schema)
        else:
            out = _show(seg, text)
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


def _parse(argv: list[str]) -> tuple[list[str], str, str, int, bool] | None:
    """The arguments the fast path understands, or None for anything else."""
    if not argv or argv[0] not in ("search", "show"):
        return None
    command = argv.pop(0)
    catalogs: list[str] = []
    positional: list[str] = []
    json_flag = schema = False
    limit = 10 if command == "search" else 0
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--json":
            json_flag = True
        elif arg in ("-c", "--catalog") and i + 1 < len(argv):
            i += 1
            catalogs.append(argv[i])
        elif command == "search" and arg == "--schema":
            schema = True
        elif command == "search" and arg in ("-k", "--limit") and i + 1 < len(argv):
            i += 1
            value = argv[i]
            if not value.isdigit() or int(value) < 1:
                return None
            limit = int(value)
        elif arg.startswith("-"):
            return None
        else:
            positional.append(arg)
        i += 1
    if not json_flag or len(positional) != 1 or not positional[0].strip():
        return None
    return catalogs, command, positional[0], limit, schema


#: Commands answered from the whole cached index: their flags, their options taking a value
#: (how many times), whether they take one positional argument, and their default ``-k``
#: (None: no ``-k``). ``search --json`` without filters is answered from the segment, above.
_INDEX_COMMANDS: dict[str, tuple[frozenset[str], dict[str, bool], bool, int | None]] = {
    "list": (
        frozenset({"--json", "--deferred", "--no-deferred"}),
        {"--namespace": False, "--tag": True},
        False,
        None,
    ),
    "categories": (frozenset({"--json"}), {}, False, None),
    "summaries": (frozenset({"--json", "--all", "--deferred"}), {}, False, None),
    "similar": (frozenset({"--json"}), {}, True, 5),
    "show": (frozenset({"--json"}), {"--format": False}, True, None),
    "search": (
        frozenset({"--json", "--schema", "--explain"}),
        {"--namespace": False, "--tag": True, "--min-score": False},
        True,
        10,
    ),
}


class _Args:
    """An index command's arguments as the fast path read them."""

    def __init__(self, command: str, limit: int | None) -> None:
        self.command = command
        self.catalogs: list[str] = []
        self.flags: set[str] = set()
        self.values: dict[str, list[str]] = {}
        self.name = ""
        self.limit = limit or 0


def _parse_index_command(argv: list[str]) -> _Args | None:
    """An index command's arguments, or None for anything the fast path leaves to Typer
    (which reports every mistake): an unknown option, a ``--option=value`` spelling, a value
    Typer might read differently."""
    command = argv.pop(0)
    known, valued, takes_name, limit = _INDEX_COMMANDS[command]
    args = _Args(command, limit)
    positional: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        has_value = i + 1 < len(argv)
        if arg in known:
            args.flags.add(arg)
        elif arg in ("-c", "--catalog") and has_value:
            i += 1
            args.catalogs.append(argv[i])
        elif limit is not None and arg in ("-k", "--limit") and has_value:
            i += 1
            if not argv[i].isdigit() or int(argv[i]) < 1:
                return None
            args.limit = int(argv[i])
        elif arg in valued and has_value:
            i += 1
            if arg in args.values and not valued[arg]:
                return None  # given twice: Typer keeps the last, leave that to it
            args.values.setdefault(arg, []).append(argv[i])
        elif arg.startswith("-"):
            return None
        else:
            positional.append(arg)
        i += 1
    if any(pair <= args.flags for pair in _EXCLUSIVE) or len(positional) != int(takes_name):
        return None
    if takes_name:
        args.name = positional[0]
        if not args.name.strip():
            return None
    score = args.values.get("--min-score", ["0"])[0].removeprefix("-")
    if not score.replace(".", "", 1).isdigit():
        return None  # a plain decimal only, which float() reads as click does
    if args.values.get("--format", ["native"])[0] not in _SHOW_FORMATS:
        return None
    return args


#: Flags that exclude each other: Typer reports the first pair and keeps the last of the
#: second; either way, leave it to Typer.
_EXCLUSIVE = (frozenset({"--all", "--deferred"}), frozenset({"--deferred", "--no-deferred"}))

#: ``show --format`` choices, as the Typer command spells them (cli.ShowFormat).
_SHOW_FORMATS = frozenset({"native", "openai", "anthropic", "mcp"})


def _run_on_index(argv: list[str]) -> int | None:
    """``list``, ``categories``, ``summaries``, ``similar``, ``show`` and ``search`` (``--json``
    or a table) from the cached index, printed by the functions the Typer commands call."""
    args = _parse_index_command(argv)
    if args is None or os.environ.get("TOOLFIND_NO_FASTPATH"):
        return None
    from toolfind.errors import ToolfindError
    from toolfind.store import cache

    loaded = cache.load_recorded(segment.run_key(tuple(args.catalogs)))
    if loaded is None:
        return None
    try:
        items, hint = _answer(loaded.index, args)
    except ToolfindError:
        return None  # a miss or an ambiguity: the Typer path explains it
    json_flag = "--json" in args.flags
    text = _json_text(args.command, items, "--schema" in args.flags) if json_flag else None
    for finding in loaded.findings:
        sys.stderr.write(f"Warning: skipped {finding}\n")
    if hint:
        sys.stderr.write(hint + "\n")
    if text is not None:
        sys.stdout.write(text + "\n")
    else:
        _render(args, items)
    sys.stdout.flush()
    return 0


def _answer(index: Any, args: _Args) -> tuple[Any, str]:
    """What the command prints, and its stderr hint. Raises ToolfindError as the index does."""
    command, flags = args.command, args.flags
    if command == "list" or (command == "summaries" and "--all" in flags):
        from toolfind.store.columns import decode_for_printing  # (columns is loaded with the index)

        decode_for_printing(index.tools)  # they print every tool
    if command == "list":
        deferred = {"--deferred": True, "--no-deferred": False}
        wanted = next((deferred[f] for f in deferred if f in flags), None)
        namespace = args.values.get("--namespace", [None])[0]
        return index.listed(namespace, args.values.get("--tag", ()), wanted), ""
    if command == "categories":
        return index.categories(), ""
    if command == "summaries":
        return index.summaries(deferred=None if "--all" in flags else True), ""
    if command == "similar":
        return index.similar(args.name, args.limit), ""
    if command == "show":
        from toolfind.output import wire

        tool = index.resolve(args.name)
        return (tool, wire.tool_document(tool, args.values.get("--format", ["native"])[0])), ""
    score = args.values.get("--min-score")
    result = index.search(
        args.name,
        args.limit,
        namespace=args.values.get("--namespace", [None])[0],
        tags=tuple(args.values.get("--tag", ())),
        min_score=None if score is None else float(score[0]),
        explain="--explain" in flags,
    )
    return result, segment.unmatched_hint(list(result.unmatched_terms))


def _render(args: _Args, items: Any) -> None:
    """Print ``items`` for a human, as the Typer command does."""
    from toolfind.output import render

    if args.command == "search":
        render.search(items, explain="--explain" in args.flags)
    elif args.command == "list":
        render.tools(items)
    elif args.command == "show":
        render.tool(*items)
    elif args.command == "similar":
        render.similar(args.name, items)
    elif args.command == "categories":
        render.categories(items)
    else:
        render.summaries(items)


def _json_text(command: str, items: Any, schema: bool) -> str:
    """The ``--json`` document of an index command, as the Typer command builds it."""
    from toolfind.output import wire

    if command == "search":
        return wire.dumps(wire.search_record(items, include_schema=schema))
    if command == "show":
        return wire.dumps(items[1])
    if command == "categories":
        return wire.dumps(wire.categories_record(items))
    if command == "list":
        return wire.dumps([wire.tool_row(t) for t in items])
    if command == "summaries":
        return wire.dumps([wire.summary_record(t) for t in items])
    return wire.dumps([wire.similar_record(s) for s in items])


def _open_segment(catalogs: tuple[str, ...]) -> segment.Segment | None:
    if os.environ.get("TOOLFIND_NO_FASTPATH"):
        return None
    root = segment.default_cache_dir(os.environ)
    key = segment.run_key(catalogs)
    manifest = _read_manifest(os.path.join(root, "manifest.marshal"))
    entry = manifest.get("runs", {}).get(key) if isinstance(manifest, dict) else None
    if not isinstance(entry, dict) or not segment.still_valid(entry):
        return None
    path = os.path.join(root, str(entry["key"]) + ".pickle")
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


def _read_manifest(path: str) -> object:
    try:
        with open(path, "rb") as fh:
            if segment.unsafe_reason(os.fstat(fh.fileno())):
                return None
            return marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _search(seg: segment.Segment, query: str, limit: int, schema: bool) -> tuple[str, str] | None:
    """The search document: the one search (``toolfind.core.search``) over the segment."""
    from toolfind.core import search

    _, unmatched_words, exact, ranked = search.run(seg, query, limit)
    record = seg.record
    hits = [segment.hit_document(record(d), s, "exact", schema) for d, s in exact]
    hits += [segment.hit_document(record(d), s, "ranked", schema) for d, s in ranked]
    unmatched = list(unmatched_words)
    return segment.render_search(query, hits, unmatched), segment.unmatched_hint(unmatched)


def _show(seg: segment.Segment, name: str) -> tuple[str, str] | None:
    ids = seg.named(name)
    if len(ids) != 1:
        return None  # a miss or an ambiguity: the Typer path explains it
    document = segment.show_document(seg.record(ids[0]), seg.extras.get(ids[0], ()))
    return segment.dumps(document), ""
