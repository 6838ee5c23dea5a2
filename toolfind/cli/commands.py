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
    another, it leaves the command to Typer (``--no-cache``, ``--weight``, ``--semantic``).
    ``metavar`` names its value in ``--help`` (upper case, as every argument's name);
    ``complete`` what the shell completes it with (:data:`COMPLETIONS`); ``hidden`` leaves
    it out of ``--help`` (an old spelling kept for a release)."""

    __slots__ = (
        "choices", "complete", "decls", "default", "dest", "help", "hidden", "kind", "metavar",
        "warm",
    )  # fmt: skip

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
        complete: str = "",
        hidden: bool = False,
    ) -> None:
        self.dest, self.kind, self.default, self.help = dest, kind, default, text
        self.decls = tuple(decls.split("/" if kind == SWITCH else None))
        self.choices, self.metavar = choices, metavar
        self.warm = self.decls if warm is None else warm
        self.complete, self.hidden = complete, hidden


class Command:
    """A command: its help (a summary, then an example), its options and arguments in the
    order ``--help`` shows them, and whether the warm path answers it."""

    __slots__ = ("help", "name", "params", "warm")

    def __init__(self, name: str, summary: str, example: str, *params: Opt, warm: bool = True):
        self.name, self.params, self.warm = name, params, warm
        self.help = f"{summary}\n\nExample: {example}"


#: ``--dialect``: the tool-schema formats a tool is written in (``show``: all; ``schemas``:
#: all but ``native``). The same names the catalogs are read in (docs/catalogs.md).
DIALECTS = ("native", "openai", "anthropic", "mcp", "gemini")
#: ``--format`` where records are printed: for a person (``table``; ``text`` or ``markdown``
#: lines for ``summaries``), one JSON document (``json``, the same as ``--json``), or one
#: record a line (``output.wire``'s formats: ``jsonl``, ``csv``, ``tsv``).
TABLE_FORMATS = ("table", "json", *wire.RECORD_FORMATS)
SUMMARY_FORMATS = ("text", "markdown", "json", *wire.RECORD_FORMATS)
#: What ``--color`` takes; ``auto`` follows the terminal and ``NO_COLOR``.
COLORS = ("auto", "always", "never")
#: What an option's or argument's value completes to in the shell (``cli.completion``).
COMPLETIONS = ("tool", "namespace", "tag")

# Options several commands share (the other commands' Typer signatures use them too).
CATALOG = Opt(
    "catalog", "--catalog -c", MANY, None, "Catalog file or directory (repeatable).", metavar="PATH"
)
JSON = Opt(
    "json_", "--json", FLAG, False,
    "Print one JSON document (its shape: docs/json.md); the same as --format json.",
)  # fmt: skip
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
COLOR = Opt(
    "color", "--color", TEXT, "auto",
    "Styles on a terminal: auto (off with NO_COLOR), always (into a pipe too) or never.",
    choices=COLORS,
)  # fmt: skip
TABLE_FORMAT = Opt(
    "format_", "--format", TEXT, None,
    "table (the default), json (as --json), or one record a line: jsonl, csv or tsv.",
    choices=TABLE_FORMATS,
)  # fmt: skip
FIELDS = Opt(
    "fields", "--fields", TEXT, None,
    "Only these record keys, e.g. name,score (JSON unless --format says otherwise).",
    metavar="KEY,...",
)  # fmt: skip
FAIL_EMPTY = Opt(
    "fail_empty", "--fail-empty", FLAG, False,
    "Exit 1 when nothing is found (as grep does; nothing is said).",
)  # fmt: skip
NAMESPACE = Opt(
    "namespace", "--namespace", TEXT, None, "Only tools in this namespace.", metavar="NS",
    complete="namespace",
)  # fmt: skip
TAG = Opt(
    "tag", "--tag", MANY, None, "Only tools with this tag (repeatable: all must match).",
    metavar="TAG", complete="tag",
)  # fmt: skip


def _dialect(default: str, choices: tuple[str, ...]) -> tuple[Opt, Opt]:
    """``--dialect``, and ``--format`` as its old name (hidden, said on stderr when used)."""
    return (
        Opt("dialect", "--dialect", TEXT, None,
            f"The tool-schema format, as an LLM API or MCP writes tools (default {default}).",
            choices=choices),
        Opt("format_", "--format", TEXT, None, "Old name of --dialect.", choices=choices,
            hidden=True),
    )  # fmt: skip


#: The index commands, in the order ``--help`` lists them.
COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        Command(
            "search",
            "Rank tools for a query; a query that names a tool returns it first.",
            'toolfind search "compress file" --json',
            Opt("query", "", WORDS, None,
                "What the tool should do, or a tool's name; several words are one query.",
                metavar="QUERY..."),
            Opt("limit", "--limit -k", COUNT, 10, "How many hits.", metavar="N"),
            NAMESPACE,
            TAG,
            Opt("min_score", "--min-score", NUMBER, None, "Drop hits scoring below this.",
                metavar="SCORE"),
            Opt("min_confidence", "--min-confidence", NUMBER, None,
                "Drop hits less sure than this (0 to 1; at 0.5 a hit is right about 4 times in 5).",
                metavar="C"),
            WEIGHT,
            Opt("schema", "--schema", FLAG, False, "Include every hit's input schema."),
            Opt("explain", "--explain", FLAG, False, "Show each term's contribution per field."),
            Opt("queries", "--queries", TEXT, None,
                "Batch mode: one query per line (or JSON Lines with 'query'); - for stdin.",
                metavar="FILE", warm=()),
            CATALOG, JSON, TABLE_FORMAT, FIELDS, FAIL_EMPTY, NO_PAGER, COLOR, NO_CACHE, SEMANTIC,
            RERANK,
        ),
        Command(
            "show",
            "Print one tool's full schema as JSON; suggests the closest name on a miss.",
            "toolfind show read_file --dialect openai --json",
            Opt("name", "", NAME, None, "Tool name: tool, ns/tool, ns:tool, ns__tool or ns.tool.",
                metavar="NAME", complete="tool"),
            *_dialect("native", DIALECTS),
            CATALOG,
            Opt("json_", "--json", FLAG, False,
                "Print the JSON document alone, for a program (an error too is JSON)."),
            NO_PAGER, COLOR, NO_CACHE,
        ),
        Command(
            "list",
            "List tools, one row each (name, namespace, summary, tags, deferred).",
            "toolfind list --namespace files --json",
            Opt("limit", "--limit -k", COUNT, None, "At most this many tools.", metavar="N"),
            NAMESPACE,
            TAG,
            Opt("deferred", "--deferred/--no-deferred", SWITCH, None,
                "Only deferred, or only non-deferred tools."),
            CATALOG, JSON, TABLE_FORMAT, FIELDS, FAIL_EMPTY, NO_PAGER, COLOR, NO_CACHE,
        ),
        Command(
            "schemas",
            "Print the tool list to send to an LLM, as one JSON array in the chosen dialect.",
            "toolfind schemas --dialect anthropic > tools.json",
            *_dialect("openai", DIALECTS[1:]),
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
            Opt("name", "", NAME, None, "The tool to find relatives of.", metavar="NAME",
                complete="tool"),
            Opt("limit", "--limit -k", COUNT, 5, "How many tools.", metavar="N"),
            WEIGHT, CATALOG, JSON, TABLE_FORMAT, FIELDS, FAIL_EMPTY, NO_PAGER, COLOR, NO_CACHE,
        ),
        Command(
            "categories",
            "Namespaces with their tool counts, deferred counts and commonest tags.",
            "toolfind categories --json",
            CATALOG, JSON, TABLE_FORMAT, FIELDS, NO_PAGER, COLOR, NO_CACHE,
        ),
        Command(
            "summaries",
            "One line per tool (name and first sentence), for a system prompt.",
            "toolfind summaries --deferred --format markdown",
            Opt("deferred", "--deferred", FLAG, False, "Deferred tools only (the default)."),
            Opt("all_", "--all", FLAG, False, "Every enabled tool."),
            Opt("format_", "--format", TEXT, None,
                "text (the default) or markdown lines, json (as --json), or one record a line:"
                " jsonl, csv or tsv.", choices=SUMMARY_FORMATS),
            CATALOG,
            NO_CACHE,
            JSON,
            FIELDS,
            FAIL_EMPTY,
            NO_PAGER,
        ),
    )
}  # fmt: skip


class Params:
    """A command's arguments by ``dest``, as the Typer command receives them; the warm path
    fills the same names with the same values (``cli.fast.parse``)."""

    if TYPE_CHECKING:

        def __getattr__(self, name: str) -> Any: ...

        def __setattr__(self, name: str, value: Any) -> None: ...

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
    fmt = getattr(p, "format_", None)
    if name == "search":
        if p.queries is not None and p.query:
            return "give either a QUERY or --queries FILE, not both"
        if p.queries is None and not " ".join(p.query or ()).strip():
            return "search needs a QUERY (or --queries FILE for batch mode)"
        if p.queries is not None and fmt not in (None, "json", "jsonl"):
            return f"--queries prints one JSON record a line; --format {fmt} does not apply"
        if p.min_score is not None and p.min_score != p.min_score:
            return "--min-score nan: give a number"
        if p.min_confidence is not None and not 0.0 <= p.min_confidence <= 1.0:
            return f"--min-confidence {p.min_confidence:g}: use a number from 0 to 1, e.g. 0.5"
    if name == "summaries" and p.deferred and p.all_:
        return "use either --deferred or --all, not both"
    if name in ("show", "schemas"):
        if fmt is not None and p.dialect is not None and fmt != p.dialect:
            return f"--format is the old name of --dialect: give --dialect {p.dialect} alone"
        return ""
    # --json is --format json: beside another --format, a contradiction.
    if p.json_ and fmt not in (None, "json"):
        return f"use either --json or --format {fmt}, not both"
    if getattr(p, "fields", None) is None:
        return ""
    from toolfind.cli.printing import fields_problem  # not on a warm search without it

    return fields_problem(name, p)


def prepare(name: str, p: Params) -> list[str]:
    """Read ``p`` (a command's arguments without a :func:`problem`) as one rule, in place:
    ``--format json`` is ``--json``, ``--fields`` alone means JSON (and ``search --fields
    schema`` or ``explain`` asks for them), ``show``/``schemas`` ``--format`` is the old
    name of ``--dialect``, whose default is filled in. Returns the stderr lines it calls for
    (the old name's warning). Both parsers call it before :func:`answer`."""
    notes = []
    if name in ("show", "schemas"):
        if p.format_ is not None:
            notes.append(
                f"Warning: --format {p.format_} is now --dialect {p.format_};"
                " the old name goes in a later release"
            )
            p.dialect, p.format_ = p.format_, None
        if p.dialect is None:
            p.dialect = "native" if name == "show" else "openai"
        return notes
    if p.format_ == "json":
        p.json_, p.format_ = True, None
    if p.fields is not None and p.format_ is None:
        p.json_ = True
    if name == "search" and p.fields is not None:
        from toolfind.cli.printing import fields_of

        asked = fields_of(p) or ()
        p.schema = p.schema or "schema" in asked
        p.explain = p.explain or "explain" in asked
    return notes


def machine(p: Params) -> bool:
    """Whether command arguments ``p`` ask for JSON or one record a line (not for a person)."""
    return bool(p.json_) or getattr(p, "format_", None) in wire.RECORD_FORMATS


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
    notes = segment.search_notes(list(result.unmatched_terms), dict(result.corrections))
    return result, [*hints, *notes]


def _show_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    from toolfind.output.tool_formats import tool_to_format

    tool = index.resolve(p.name)
    return (tool, tool_to_format(tool, p.dialect)), []


def _list_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    hints = [filter_warning(index, p.namespace, p.tag or ())]
    if machine(p):  # written as each tool is read
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
        document = tool_to_format(tool, p.dialect)
        documents.append(document if name == tool.name else renamed(document, p.dialect, name))
    return documents, [_renamed_note(chosen, names)]


#: How many shared names :func:`_renamed_note` spells out.
_RENAMED_SHOWN = 3


def _renamed_note(tools: Sequence[Any], names: Sequence[str]) -> str:
    """The one stderr line of ``schemas`` when tools that share a name were written under
    others (``names``: each tool's name in the list), "" when none was."""
    shared = sorted({t.name for t, new in zip(tools, names, strict=True) if new != t.name})
    if not shared:
        return ""
    written = {
        name: [new for t, new in zip(tools, names, strict=True) if t.name == name]
        for name in shared
    }
    why = " (LLM APIs reject two tools of one name)"
    if len(shared) == 1:
        name = shared[0]
        return f"Note: {len(written[name])} tools are named {name!r}: written as {', '.join(written[name])}{why}"
    count = sum(map(len, written.values()))
    shown = "; ".join(f"{name!r} as {', '.join(written[name])}" for name in shared[:_RENAMED_SHOWN])
    more = len(shared) - _RENAMED_SHOWN
    rest = f"; and {more} more" if more > 0 else ""
    return (
        f"Note: {count} tools share {len(shared)} names, each written as namespace__name:"
        f" {shown}{rest}{why}"
    )


def _similar_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    return index.similar(p.name, p.limit), []


def _categories_answer(index: Any, p: Params) -> tuple[Any, list[str]]:
    return index.categories(), [] if machine(p) else [shipped_note(p.catalog)]


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


def run(name: str, index: Any, p: Params, warn: Warn) -> int:
    """Command ``name``'s answer from ``index``: its stderr lines, then its output
    (``cli.printing.emit``). Returns the exit code: 1 with ``--fail-empty`` and nothing
    found, else 0."""
    from toolfind.cli.printing import emit

    items, notes = answer(name, index, p)
    for note in notes:
        warn(note)
    return exit_code(p, emit(name, p, items))


def wants_json(args: Sequence[str]) -> bool:
    """Whether ``args`` (before a ``--``) ask for JSON: ``--json``, or ``--format json``
    (the same thing), so that an error is one JSON object too."""
    args = list(args)
    args = args[: args.index("--")] if "--" in args else args
    pairs = zip(args, args[1:], strict=False)
    return "--json" in args or "--format=json" in args or ("--format", "json") in pairs


def error_text(message: str, kind: str, *, as_json: bool) -> str:
    """How an error is said on stderr: one ``Error:`` line, or one JSON object (``as_json``)
    of its ``kind``; the warm path and Typer's commands say it alike."""
    if as_json:
        return wire.dumps(wire.error_record(message, kind), compact=True)
    from toolfind.output.text import render_line

    return f"Error: {render_line(message)}"


def exit_code(p: Params, found: int) -> int:
    """The exit code of a command that printed ``found`` records: 1 when there are none and
    ``--fail-empty`` asks for it (silently, as grep's status), else 0."""
    return 1 if getattr(p, "fail_empty", False) and not found else 0


def search(index: Any, p: Params, query: str) -> Any:
    """``index.search`` with the command's options (one query of a batch, or the QUERY)."""
    return index.search(
        query,
        p.limit,
        namespace=p.namespace,
        tags=tuple(p.tag or ()),
        min_score=p.min_score,
        min_confidence=p.min_confidence,
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
    (and ``error(message, kind)`` on stderr) while the others still run; ``--fields`` keeps
    those keys of each hit. Returns the exit code: 1 when a line failed, or with
    ``--fail-empty`` when a query found nothing."""
    from toolfind.cli.printing import fields_of, select
    from toolfind.errors import QueriesError, ToolfindError

    failed = empty = False
    fields = fields_of(p)
    for file, number, id_, query, unreadable in _batch_queries(p.queries):
        try:
            if unreadable:
                raise QueriesError(unreadable, file=file, line=number)
            found = search(index, p, query)
            document = wire.search_record(found, include_schema=p.schema)
            document["hits"] = [select(hit, fields) for hit in document["hits"]]
            empty = empty or not found.hits
            record = wire.batch_record(document, id_)
        except ToolfindError as exc:
            failed = True
            error(str(exc), exc.kind)
            record = wire.batch_error_record(str(exc), exc.kind, number, id_)
        sys.stdout.write(wire.dumps(record, compact=True) + "\n")
        sys.stdout.flush()
    return 1 if failed else exit_code(p, 0 if empty else 1)


def _batch_queries(source: str) -> Iterator[tuple[str, int, Any, str, str]]:
    """Query lines of a file (or stdin, ``-``): ``(file, line number, id, query, error)``.
    Plain lines, or JSON Lines objects with a ``query`` (and an optional ``id``); blank lines
    and lines starting with ``#`` are skipped; a line that cannot be read comes with its
    error (the others still run). Raises QueriesError for a file that cannot be read."""
    import json

    from toolfind.errors import QueriesError
    from toolfind.userfiles import FileProblem, read_capped, read_stream

    name = "<stdin>" if source == "-" else source
    try:
        data = read_stream(sys.stdin.buffer) if source == "-" else read_capped(source)
        lines = data.decode("utf-8-sig").splitlines()
    except FileProblem as exc:
        raise QueriesError(f"cannot read queries: {exc.message}", file=name) from None
    except UnicodeDecodeError as exc:
        raise QueriesError(f"invalid UTF-8 at byte {exc.start}", file=name) from None
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


#: What :func:`answer_from_file` reads (or what changes nothing in JSON); any other argument
#: but at its default needs the index.
_FILE_READS = frozenset(
    {"json_", "schema", "limit", "catalog", "query", "name", "fields", "fail_empty", "color"}
    | {"no_pager", "dialect"}
)


#: The commands whose NAME must name a tool: the warm path says a miss from the index file.
NAMING = ("show", "similar")


def named_in_file(seg: segment.Segment, name: str) -> list[int]:
    """The tools ``name`` names in the index file (``show``'s rules); raises ToolNotFound,
    with the closest names (``core.suggest``), when it names none."""
    ids = seg.named(name)
    if not ids:
        from toolfind.core.suggest import suggestions
        from toolfind.errors import ToolNotFound

        raise ToolNotFound(name, suggestions(seg, name))
    return ids


def from_file(name: str, p: Params) -> bool:
    """Whether :func:`answer_from_file` answers command ``name`` with arguments ``p`` (after
    :func:`prepare`): ``search``/``show --json`` with no other argument than those it reads
    (``show`` in the native dialect)."""
    return (
        name in ("search", "show")
        and p.json_
        and getattr(p, "dialect", "native") == "native"
        and all(
            getattr(p, o.dest) == o.default
            for o in COMMANDS[name].params
            if o.dest not in _FILE_READS
        )
    )


def answer_from_file(name: str, seg: segment.Segment, p: Params) -> tuple[Any, list[str]] | None:
    """``search --json`` or ``show --json`` (no filters, no other format) from the index file
    read in place: the JSON document and the stderr lines, as :func:`answer` and :func:`emit`
    make them, reading only the records printed. Raises ToolNotFound for a name no tool has;
    None when several tools answer to it (the full command lists them)."""
    if name == "search":
        from toolfind.core import confidence
        from toolfind.core import search as searching

        query = " ".join(p.query)
        found = searching.run(seg, query, p.limit + 1)  # one more: the last hit's lead
        sure = confidence.of_hits(found, found.ranked, exact=len(found.exact))
        exact, ranked = confidence.cut(found.exact, found.ranked, p.limit)
        del sure[p.limit :]
        record, view = seg.record, segment.ToolRecord

        fields: Sequence[str] | None = None
        if p.fields is not None:  # the module only then: a warm search imports what it needs
            from toolfind.cli.printing import fields_of, select

            fields = fields_of(p)

        def hit(match: str, doc: int, score: float, sure: float) -> dict[str, Any]:
            made = wire.hit_record(
                view(record(doc)), score, match, include_schema=p.schema, confidence=sure
            )
            return made if fields is None else select(made, fields)

        n = len(exact)
        made = searching.hits(
            [(*e, c) for e, c in zip(exact, sure[:n], strict=True)],
            [(*r, c) for r, c in zip(ranked, sure[n:], strict=True)],
            hit,
        )
        unmatched, corrections = list(found.unmatched), found.corrections
        document = wire.search_document(query, made, unmatched, corrections)
        return document, segment.search_notes(unmatched, corrections)
    ids = named_in_file(seg, p.name)
    if len(ids) != 1:
        return None
    from toolfind.output.tool_formats import tool_to_format

    tool = segment.ToolRecord(seg.record(ids[0]))
    return tool_to_format(tool, "native", carried=(seg.extras.get(ids[0], ()), ())), []
