"""The index commands, once: search, show, list, schemas, similar, categories, summaries.

:data:`COMMANDS` is their one grammar: every option and argument, its spellings, default,
help and choices. The Typer commands' signatures are made from it (``cli.browse``) and the
warm path parses argv with it (``cli.fast``): two parsers of one table. Each command's body
is here once: :func:`problem` names a usage error (said before the index is opened),
:func:`answer` asks the index and collects the stderr lines (raising ToolfindError
before anything is printed), :func:`emit` prints the answer (``--json``, one record a line,
or for a person through the pager). ``search``/``show --json`` without filters also answer
from the index file read in place (:func:`answer_from_file`), through the same hit assembly
(``core.search.hits``) and records.

No typer, and cheap to import: the warm path runs these very bodies, and saves only Typer's
import. Results go to stdout, warnings to the caller's ``warn``.
"""

from __future__ import annotations

import sys
from itertools import chain, islice

from toolfind.output import wire
from toolfind.store import segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Any

    Warn = Callable[[str], None]

# -- the grammar --------------------------------------------------------------------------------

#: Kinds of option: ``FLAG`` (no value: bool), ``SWITCH`` (``--x/--no-x``: bool, or None when
#: neither is given and the default is None), ``TEXT`` (one value: a choice when there are
#: choices, else a string or None), ``NUMBER`` (float or None), ``COUNT`` (a whole number
#: from 1), ``MANY`` (repeatable: a list, or None when not given). Arguments: ``WORDS``
#: (several words, or None) and ``NAME`` (one, required).
FLAG, SWITCH, TEXT, NUMBER, COUNT, MANY, WORDS, NAME = (
    "flag switch text number count many words name".split()
)


class Opt:
    """One option (or argument) of a command: ``dest`` is its name in the command's
    arguments, ``decls`` its spellings (``"--limit -k"``; a switch ``"--on/--off"``; "" for
    an argument). ``warm`` are the spellings the warm path reads (all, by default): given
    another, it leaves the command to Typer (``--no-cache``, ``--weight``, ``--semantic``)."""

    __slots__ = ("choices", "decls", "default", "dest", "help", "kind", "metavar", "warm")

    def __init__(
        self,
        dest: str,
        decls: str,
        kind: str,
        default: Any = None,
        text: str = "",
        *,
        choices: tuple[str, ...] = (),
        metavar: str | None = None,
        warm: tuple[str, ...] | None = None,
    ) -> None:
        self.dest, self.kind, self.default, self.help = dest, kind, default, text
        self.decls = tuple(decls.split("/" if kind == SWITCH else None))
        self.choices, self.metavar = choices, metavar
        self.warm = self.decls if warm is None else warm


class Command:
    """A command: its help (a summary, then an example), its options and arguments in the
    order ``--help`` shows them, and whether the warm path answers it."""

    __slots__ = ("help", "name", "params", "warm")

    def __init__(self, name: str, summary: str, example: str, *params: Opt, warm: bool = True):
        self.name, self.params, self.warm = name, params, warm
        self.help = f"{summary}\n\nExample: {example}"


#: ``show --format``: the formats a tool is shown in; ``schemas`` takes all but ``native``.
SHOW_FORMATS = ("native", "openai", "anthropic", "mcp", "gemini")
#: ``list``/``search --format``: a table, or one record a line (``output.wire``'s formats).
RECORD_FORMATS = ("table", *wire.RECORD_FORMATS)
SUMMARY_FORMATS = ("text", "markdown", "json")

# Options several commands share (the other commands' Typer signatures use them too).
CATALOG = Opt(
    "catalog", "--catalog -c", MANY, None, "Catalog file or directory (repeatable).", metavar="PATH"
)
JSON = Opt("json_", "--json", FLAG, False, "Print one JSON document (its shape: docs/json.md).")
NO_CACHE = Opt(
    "no_cache", "--no-cache", FLAG, False, "Build the index afresh; do not read or write the cache.",
    warm=(),
)  # fmt: skip
WEIGHT = Opt(
    "weight", "--weight -w", MANY, None,
    "Field weight override FIELD=W (repeatable), e.g. name=5.", metavar="FIELD=W", warm=(),
)  # fmt: skip
SEMANTIC = Opt(
    "semantic", "--semantic/--lexical", SWITCH, None,
    "Fuse the semantic signal with BM25F (needs toolfind[semantic]), or rank by words only.",
    warm=("--lexical",),  # the command line's default: the same index, words only
)  # fmt: skip
RERANK = Opt(
    "rerank", "--rerank/--no-rerank", SWITCH, None,
    "Re-score the top candidates with the MiniLM reranker (needs `toolfind model fetch`),"
    " or not.",
    warm=("--no-rerank",),  # the command line's default: no reranker
)  # fmt: skip
NO_PAGER = Opt(
    "no_pager", "--no-pager", FLAG, False,
    "Print straight to the terminal (default: long output goes through $TOOLFIND_PAGER,"
    " $PAGER or less -FRX; never in a pipe).",
)  # fmt: skip
RECORD_FORMAT = Opt(
    "format_", "--format", TEXT, "table",
    "table, or one record a line: jsonl (the --json records), csv or tsv.", choices=RECORD_FORMATS,
)  # fmt: skip
NAMESPACE = Opt("namespace", "--namespace", TEXT, None, "Only tools in this namespace.")
TAG = Opt("tag", "--tag", MANY, None, "Only tools with this tag (repeatable: all must match).")

#: The index commands, in the order ``--help`` lists them.
COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        Command(
            "search",
            "Rank tools for a query; a query that names a tool returns it first.",
            'toolfind search "compress file" --json',
            Opt("query", "", WORDS, None,
                "What the tool should do, or a tool's name; several words are one query."),
            Opt("limit", "--limit -k", COUNT, 10, "How many hits."),
            NAMESPACE,
            TAG,
            Opt("min_score", "--min-score", NUMBER, None, "Drop hits scoring below this."),
            WEIGHT,
            Opt("schema", "--schema", FLAG, False, "Include every hit's input schema."),
            Opt("explain", "--explain", FLAG, False, "Show each term's contribution per field."),
            Opt("queries", "--queries", TEXT, None,
                "Batch mode: one query per line (or JSON Lines with 'query'); - for stdin.",
                metavar="FILE", warm=()),
            CATALOG, JSON, RECORD_FORMAT, NO_PAGER, NO_CACHE, SEMANTIC, RERANK,
        ),
        Command(
            "show",
            "Print one tool's full schema; suggests the closest name on a miss.",
            "toolfind show read_file --format openai --json",
            Opt("name", "", NAME, None, "Tool name: tool, ns/tool, ns:tool, ns__tool or ns.tool."),
            Opt("format_", "--format", TEXT, "native", "Schema format.", choices=SHOW_FORMATS),
            CATALOG, JSON, NO_CACHE,
        ),
        Command(
            "list",
            "List tools, one row each (name, namespace, summary, tags, deferred).",
            "toolfind list --namespace files --json",
            Opt("limit", "--limit -k", COUNT, None, "At most this many tools."),
            NAMESPACE,
            TAG,
            Opt("deferred", "--deferred/--no-deferred", SWITCH, None,
                "Only deferred, or only non-deferred tools."),
            CATALOG, JSON, RECORD_FORMAT, NO_PAGER, NO_CACHE,
        ),
        Command(
            "schemas",
            "Print the tool list to send to an LLM, as one JSON array in the chosen format.",
            "toolfind schemas --format anthropic > tools.json",
            Opt("format_", "--format", TEXT, "openai", "Tool-list format.",
                choices=SHOW_FORMATS[1:]),
            Opt("include_deferred", "--include-deferred/--exclude-deferred", SWITCH, False,
                "Include deferred tools."),
            CATALOG,
            NO_CACHE,
            Opt("json_", "--json", FLAG, False,
                "Accepted for uniformity: the output is always JSON."),
            warm=False,  # every tool decoded and written: Typer's import is not what costs
        ),
        Command(
            "similar",
            "Tools related to one tool by shared, weighted terms.",
            "toolfind similar read_file -k 3",
            Opt("name", "", NAME, None, "The tool to find relatives of."),
            Opt("limit", "--limit -k", COUNT, 5, "How many tools."),
            WEIGHT, CATALOG, JSON, NO_PAGER, NO_CACHE,
        ),
        Command(
            "categories",
            "Namespaces with their tool counts, deferred counts and commonest tags.",
            "toolfind categories --json",
            CATALOG, JSON, NO_PAGER, NO_CACHE,
        ),
        Command(
            "summaries",
            "One line per tool (name and first sentence), for a system prompt.",
            "toolfind summaries --deferred --format markdown",
            Opt("deferred", "--deferred", FLAG, False, "Deferred tools only (the default)."),
            Opt("all_", "--all", FLAG, False, "Every enabled tool."),
            Opt("format_", "--format", TEXT, "text", "Output format.", choices=SUMMARY_FORMATS),
            CATALOG,
            NO_CACHE,
            Opt("json_", "--json", FLAG, False,
                "Same as --format json (its shape: docs/json.md)."),
            NO_PAGER,
        ),
    )
}  # fmt: skip


class Params:
    """A command's arguments by ``dest``, as the Typer command receives them; the warm path
    fills the same names with the same values (``cli.fast.parse``)."""

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Params) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"Params({vars(self)!r})"


# -- the bodies ------------------------------------------------------------------------------


def problem(name: str, p: Params) -> str:
    """What makes arguments ``p`` of command ``name`` a usage error ("" if nothing): said
    before the index is opened, so without the load's warnings."""
    if name == "search":
        if p.queries is not None and p.query:
            return "give either a QUERY or --queries FILE, not both"
        if p.queries is None and not " ".join(p.query or ()).strip():
            return "search needs a QUERY (or --queries FILE for batch mode)"
        if p.queries is not None and p.format_ not in ("table", "jsonl"):
            return f"--queries prints one JSON record a line; --format {p.format_} does not apply"
    if name == "summaries" and p.deferred and p.all_:
        return "use either --deferred or --all, not both"
    # --json is --format json (summaries), or the choice beside a table (list, search): with
    # another --format than the default, a contradiction.
    default = {"list": "table", "search": "table", "summaries": "text"}.get(name)
    if default and p.json_ and p.format_ not in (default, "json"):
        return f"use either --json or --format {p.format_}, not both"
    return ""


def answer(name: str, index: Any, p: Params) -> tuple[Any, list[str]]:
    """What command ``name`` prints from ``index``, and the lines it says on stderr first.
    Raises ToolfindError (a miss, an ambiguous name) before anything is printed. ``list
    --json`` and ``summaries`` read the tools as they are printed (100k tools are never
    held at once)."""
    items, notes = _ANSWERS[name](index, p)
    return items, [note for note in notes if note]


def _search_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    result = search(index, p, " ".join(p.query))
    hints = [filter_warning(index, p.namespace, p.tag or ())]
    return result, [*hints, segment.unmatched_hint(list(result.unmatched_terms))]


def _show_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    from toolfind.output.tool_formats import tool_to_format

    tool = index.resolve(p.name)
    return (tool, tool_to_format(tool, p.format_)), []


def _list_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    hints = [filter_warning(index, p.namespace, p.tag or ())]
    if p.json_:  # written as each tool is read
        return islice(index.stream(p.namespace, p.tag or (), p.deferred), p.limit), hints
    if p.namespace is None and not p.tag and p.limit is None:
        _decode_all(index)  # every tool is printed: decoded at once, faster
    return index.listed(p.namespace, p.tag or (), p.deferred)[: p.limit], hints


def _schemas_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    """Enabled tools (deferred ones with ``--include-deferred``), each under a name no other
    has (LLM APIs require it), and a note per name that was changed."""
    from toolfind.output.tool_formats import list_names, renamed, tool_to_format

    _decode_all(index)
    chosen = [t for t in index.tools if t.enabled and (p.include_deferred or not t.defer)]
    names = list_names(chosen)
    documents = []
    for tool, name in zip(chosen, names, strict=True):
        document = tool_to_format(tool, p.format_)
        documents.append(document if name == tool.name else renamed(document, p.format_, name))
    notes = []
    for name in sorted({t.name for t, new in zip(chosen, names, strict=True) if new != t.name}):
        written = [new for t, new in zip(chosen, names, strict=True) if t.name == name]
        notes.append(
            f"Note: {len(written)} tools are named {name!r}: written as {', '.join(written)}"
            " (LLM APIs reject two tools of one name)"
        )
    return documents, notes


def _similar_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    return index.similar(p.name, p.limit), []


def _categories_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    return index.categories(), [] if p.json_ else [shipped_note(p.catalog)]


def _summaries_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    tools = index.stream(deferred=None if p.all_ else True)  # written as each tool is read
    first = next(tools, None)
    if first is not None:
        return chain((first,), tools), []
    from toolfind.output.render import summaries_hint

    return (), [summaries_hint((), p.all_)]


_ANSWERS: dict[str, Callable[[Any, Params], tuple[Any, list[str]]]] = {
    "search": _search_answer,
    "show": _show_answer,
    "list": _list_answer,
    "schemas": _schemas_answer,
    "similar": _similar_answer,
    "categories": _categories_answer,
    "summaries": _summaries_answer,
}


def emit(name: str, p: Params, items: Any) -> None:
    """Print command ``name``'s answer (:func:`answer`): JSON, one record a line (``search``,
    ``list``), or for a person (through the pager on a terminal, but one tool's ``show``)."""
    output = "json" if name == "schemas" or p.json_ else getattr(p, "format_", "table")
    write = sys.stdout.write
    if output == "json" and name in ("list", "similar", "summaries"):
        made: Callable[[Any], dict[str, Any]] = wire.summary_record
        if name != "summaries":
            made = wire.tool_row if name == "list" else wire.similar_record
        for piece in wire.dumps_array(map(made, items)):
            write(piece)  # each record as it is made
        write("\n")
    elif output == "json":
        if name == "search":
            items = wire.search_record(items, include_schema=p.schema)
        elif name == "show":
            items = items[1]
        elif name == "categories":
            items = wire.categories_record(items)
        write(wire.dumps(items) + "\n")
    elif output in wire.RECORD_FORMATS:
        if name == "search":
            records = wire.hit_records(items, include_schema=p.schema)
        else:
            records = [wire.tool_row(t) for t in items]
        write(wire.records_text(records, output))
    elif name == "show":
        from toolfind.output import render

        render.tool(*items)
    elif sys.stdout.isatty():  # the pager (and contextlib) only where it can start
        from toolfind.cli.pager import paged

        with paged(not p.no_pager):
            _draw(name, p, items)
    else:
        _draw(name, p, items)


def _draw(name: str, p: Params, items: Any) -> None:
    """Command ``name``'s answer for a person: a table (Rich's on a terminal), or lines."""
    from toolfind.output import render

    if name == "search":
        render.search(items, explain=p.explain)
    elif name == "list":
        render.tools(items)
    elif name == "similar":
        render.similar(p.name, items)
    elif name == "categories":
        render.categories(items)
    else:
        render.summaries(items, markdown=p.format_ == "markdown")


def run(name: str, index: Any, p: Params, warn: Warn) -> None:
    """Command ``name``'s answer from ``index``: its stderr lines, then its output."""
    items, notes = answer(name, index, p)
    for note in notes:
        warn(note)
    emit(name, p, items)


def search(index: Any, p: Params, query: str) -> Any:
    """``index.search`` with the command's options (one query of a batch, or the QUERY)."""
    return index.search(
        query,
        p.limit,
        namespace=p.namespace,
        tags=tuple(p.tag or ()),
        min_score=p.min_score,
        explain=p.explain,
    )


def filter_warning(index: Any, namespace: str | None, tags: Sequence[str]) -> str:
    """The stderr line for a ``--namespace`` or ``--tag`` no tool has ("" if none): such a
    filter is not an error (exit 0, no rows), but a typo should not look like "no match"."""
    if namespace is None and not tags:
        return ""
    unknown = index.unknown_filters(namespace, tags)
    return f"Warning: {unknown}" if unknown else ""


#: Said where a person could take the demo catalogs for their own (not on every search).
SHIPPED_NOTE = (
    "Note: the catalogs in use are the demo ones shipped with toolfind (no --catalog,"
    " $TOOLFIND_CATALOGS, toolfind.toml or ./catalogs here)."
)


def shipped_note(catalogs: Sequence[str] | None) -> str:
    """:data:`SHIPPED_NOTE` when a run with ``catalogs`` reads the shipped catalogs because
    nothing is configured, else ''."""
    if catalogs:
        return ""
    from toolfind.config import for_run, uses_packaged_catalogs
    from toolfind.errors import ToolfindError

    try:
        return SHIPPED_NOTE if uses_packaged_catalogs(for_run(())) else ""
    except ToolfindError:
        return ""  # a broken config is reported by the commands that need it


def _decode_all(index: Any) -> None:
    """Decode every tool of ``index`` at once, for a command that prints them all."""
    from toolfind.store.columns import decode_for_printing

    decode_for_printing(index.tools)


# -- search --queries ------------------------------------------------------------------------


def search_batch(index: Any, p: Params, error: Callable[[str, str], None]) -> int:
    """``search --queries FILE``: one compact search record a query line, in order, each
    written (and flushed) as it is made; a line that cannot run gives its error record
    (and ``error(message, kind)`` on stderr) while the others still run. Returns the exit
    code: 1 when a line failed."""
    from toolfind.errors import ConfigError, ToolfindError

    failed = False
    for file, number, id_, query, unreadable in _batch_queries(p.queries):
        try:
            if unreadable:
                raise ConfigError(unreadable, file=file, line=number)
            found = search(index, p, query)
            record = wire.batch_record(wire.search_record(found, include_schema=p.schema), id_)
        except ToolfindError as exc:
            failed = True
            error(str(exc), exc.kind)
            record = wire.batch_error_record(str(exc), exc.kind, number, id_)
        sys.stdout.write(wire.dumps(record, compact=True) + "\n")
        sys.stdout.flush()
    return 1 if failed else 0


def _batch_queries(source: str) -> Iterator[tuple[str, int, Any, str, str]]:
    """Query lines of a file (or stdin, ``-``): ``(file, line number, id, query, error)``.
    Plain lines, or JSON Lines objects with a ``query`` (and an optional ``id``); blank lines
    and lines starting with ``#`` are skipped; a line that cannot be read comes with its
    error (the others still run). Raises ConfigError for a file that cannot be read."""
    import json

    from toolfind.errors import ConfigError
    from toolfind.userfiles import FileProblem, read_capped, read_stream

    name = "<stdin>" if source == "-" else source
    try:
        data = read_stream(sys.stdin.buffer) if source == "-" else read_capped(source)
        lines = data.decode("utf-8-sig").splitlines()
    except FileProblem as exc:
        raise ConfigError(f"cannot read queries: {exc.message}", file=name) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"invalid UTF-8 at byte {exc.start}", file=name) from None
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if not text.startswith("{"):
            yield name, number, None, text, ""
            continue
        try:
            entry = json.loads(text)
        except json.JSONDecodeError as exc:
            yield name, number, None, "", f"invalid JSON: {exc.msg}"
            continue
        id_ = entry.get("id") if isinstance(entry, dict) else None
        query = entry.get("query") if isinstance(entry, dict) else None
        if not isinstance(query, str) or not query.strip():
            yield name, number, id_, "", "a JSON line needs a non-blank string 'query'"
            continue
        yield name, number, id_, query, ""


# -- from the index file alone -----------------------------------------------------------------


#: What :func:`answer_from_file` reads; any other argument but at its default needs the index.
_FILE_READS = frozenset({"json_", "schema", "limit", "catalog", "query", "name"})


def from_file(name: str, p: Params) -> bool:
    """Whether :func:`answer_from_file` answers command ``name`` with arguments ``p``:
    ``search``/``show --json`` with no other argument than those it reads."""
    return (
        name in ("search", "show")
        and p.json_
        and all(
            getattr(p, o.dest) == o.default
            for o in COMMANDS[name].params
            if o.dest not in _FILE_READS
        )
    )


def answer_from_file(name: str, seg: segment.Segment, p: Params) -> tuple[Any, list[str]] | None:
    """``search --json`` or ``show --json`` (no filters, no other format) from the index file
    read in place: the JSON document and the stderr lines, as :func:`answer` and :func:`emit`
    make them, reading only the records printed; None when the name is not one tool's (the
    full command explains a miss or an ambiguity)."""
    if name == "search":
        from toolfind.core import search as searching

        query = " ".join(p.query)
        _, unmatched_words, exact, ranked = searching.run(seg, query, p.limit)
        record, view = seg.record, segment.ToolRecord

        def hit(match: str, doc: int, score: float) -> dict[str, Any]:
            return wire.hit_record(view(record(doc)), score, match, include_schema=p.schema)

        unmatched = list(unmatched_words)
        document = wire.search_document(query, searching.hits(exact, ranked, hit), unmatched)
        return document, [line for line in (segment.unmatched_hint(unmatched),) if line]
    ids = seg.named(p.name)
    if len(ids) != 1:
        return None
    from toolfind.output.tool_formats import tool_to_format

    tool = segment.ToolRecord(seg.record(ids[0]))
    return tool_to_format(tool, "native", carried=(seg.extras.get(ids[0], ()), ())), []
