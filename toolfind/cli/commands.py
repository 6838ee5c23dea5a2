"""The index commands, each in one place: search, show, list, schemas, similar, categories,
summaries.

A command is a class (``cli.grammar``): its attributes are its options and arguments, its
docstring its help; :meth:`problem` names a usage error (said before the index is opened),
:meth:`ask` is its one call into the index, and what it prints is ``cli.printing.Records``'
hooks (or its own :meth:`emit`). :data:`COMMANDS` lists them: Typer makes each command's
signature from it (``cli.browse``) and the warm path parses argv with it (``cli.fast``), and
both run the same methods. ``search``/``show --json`` without filters also answer from the
index file read in place (:meth:`Search.answer_from_file`), through the same search finish
(``core.confidence.finish``) and records.

No typer, and cheap to import: the warm path runs these very methods, and saves only Typer's
import. Results go to stdout, warnings to the caller's ``warn``.
"""

from __future__ import annotations

import sys
from itertools import chain, islice

from toolfind.cli.grammar import (
    CATALOG,
    COLOR,
    COUNT,
    DIALECTS,
    FAIL_EMPTY,
    FIELDS,
    FLAG,
    JSON,
    NAME,
    NAMESPACE,
    NO_CACHE,
    NO_PAGER,
    NUMBER,
    RECORD_OPTIONS,
    RERANK,
    SEMANTIC,
    SUMMARY_FORMATS,
    SWITCH,
    TABLE_FORMAT,
    TAG,
    TEXT,
    WEIGHT,
    WORDS,
    Command,
    Params,
    dialect_options,
    option,
)  # fmt: skip
from toolfind.cli.printing import Records, for_a_person, renderer, select
from toolfind.output import wire
from toolfind.output.encode import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from types import ModuleType
    from typing import Any

    from toolfind import models
    from toolfind.cli.grammar import Warn
    from toolfind.models import Category, Hit, SearchResult, Tool
    from toolfind.store.index import SearchIndex
    from toolfind.store.segment import Segment
    from toolfind.store.why import Why


class Search(Records, name="search"):
    """Rank tools for a query; a query that names a tool returns it first.

    Example: toolfind search "compress file" --json
    """

    query: list[str] | None = option(
        "", WORDS, None, "What the tool should do, or a tool's name; several words are one query.",
        metavar="QUERY...",
    )  # fmt: skip
    limit: int = option("--limit -k", COUNT, 10, "How many hits.", metavar="N")
    namespace: str | None = NAMESPACE
    tag: list[str] | None = TAG
    min_score: float | None = option(
        "--min-score", NUMBER, None, "Drop hits scoring below this.", metavar="SCORE"
    )
    min_confidence: float | None = option(
        "--min-confidence", NUMBER, None,
        "Drop hits less sure than this (0 to 1; at 0.5 a hit is right about 4 times in 5).",
        metavar="C",
    )  # fmt: skip
    weight = WEIGHT
    schema: bool = option("--schema", FLAG, False, "Include every hit's input schema.")
    explain: bool = option("--explain", FLAG, False, "Show each term's contribution per field.")
    why: str | None = option(
        "--why", TEXT, None,
        "Where this tool ranks for the query, and why not higher: the query words it lacks,"
        " what each word and signal adds to it and to the first hit.",
        metavar="TOOL", complete="tool",
    )  # fmt: skip
    queries: str | None = option(
        "--queries", TEXT, None,
        "Batch mode: one query per line (or JSON Lines with 'query'); - for stdin.",
        metavar="FILE", warm=(),
    )  # fmt: skip
    catalog, json_, format_, fields, fail_empty, no_pager, color, no_cache = RECORD_OPTIONS
    semantic, rerank = SEMANTIC, RERANK
    KEYS = (*wire.HIT_KEYS, "schema", "explain")

    def problem(self) -> str:
        if self.queries is not None and self.query:
            return "give either a QUERY or --queries FILE, not both"
        if self.queries is None and not " ".join(self.query or ()).strip():
            return "search needs a QUERY (or --queries FILE for batch mode)"
        if self.queries is not None and self.format_ not in (None, "json", "jsonl"):
            return (
                f"--queries prints one JSON record a line; --format {self.format_} does not apply"
            )
        if self.min_score is not None and self.min_score != self.min_score:
            return "--min-score nan: give a number"
        if self.min_confidence is not None and not 0.0 <= self.min_confidence <= 1.0:
            return f"--min-confidence {self.min_confidence:g}: use a number from 0 to 1, e.g. 0.5"
        if self.why is not None:
            clash = next((o for o, on in self._why_clashes() if on), "")
            if clash:
                return f"--why explains one tool's place: {clash} does not apply"
        return super().problem()

    def _why_clashes(self) -> list[tuple[str, bool]]:
        return [
            ("--queries", self.queries is not None),
            ("--fields", self.fields is not None),
            ("--explain", self.explain),
            ("--schema", self.schema),
            (f"--format {self.format_}", self.format_ not in (None, "table", "json")),
        ]

    def prepare(self) -> list[str]:
        notes = super().prepare()
        asked = self.fields_of()
        if asked is not None:  # --fields schema or explain asks for them
            self.schema = self.schema or "schema" in asked
            self.explain = self.explain or "explain" in asked
        return notes

    def ask(self, index: SearchIndex) -> tuple[Any, list[str]]:
        if self.why is not None:
            return self.ask_why(index)
        result = self.search(index, " ".join(self.query or ()))
        hints = [filter_warning(index, self.namespace, self.tag or ())]
        by_meaning = bool(result.hits) and index.semantic is not None  # it adds candidates
        notes = search_notes(result.unmatched_terms, dict(result.corrections), by_meaning)
        return result, [*hints, *notes, unsure_note(hit.confidence for hit in result.hits)]

    def search(self, index: SearchIndex, query: str) -> SearchResult:
        """``index.search`` with the command's options (one query of a batch, or the QUERY)."""
        return index.search(
            query,
            self.limit,
            namespace=self.namespace,
            tags=tuple(self.tag or ()),
            min_score=self.min_score,
            min_confidence=self.min_confidence,
            explain=self.explain,
        )

    def ask_why(self, index: SearchIndex) -> tuple[Why, list[str]]:
        """``--why TOOL``: the tool's place in the search (``store.why``), and the stderr
        lines of the search, and of a tool that cannot rank."""
        from toolfind.store.why import why

        found = why(
            index,
            " ".join(self.query or ()),
            self.why or "",
            self.limit,
            namespace=self.namespace,
            tags=self.tag or (),
            min_score=self.min_score,
            min_confidence=self.min_confidence,
        )
        result, notes = found.result, [filter_warning(index, self.namespace, self.tag or ())]
        by_meaning = bool(result.hits) and index.semantic is not None
        notes += search_notes(result.unmatched_terms, dict(result.corrections), by_meaning)
        from toolfind.core.filters import options_rule

        tool = found.tool
        if not tool.enabled:
            notes.append(f"Note: {tool.qualified_name} is disabled: search never returns it")
        elif not options_rule(self.namespace, self.tag or ()).keeps(tool.namespace, tool.all_tags):
            notes.append(f"Note: --namespace or --tag leaves {tool.qualified_name} out")
        elif found.rank is None and (index.semantic is not None or index.reranker is not None):
            notes.append(
                f"Note: beyond the top {found.depth}, only its words are weighed (BM25F): the"
                " other signals scored the top hits alone"
            )
        return found, notes

    def emit(self, answer: Any) -> int:
        if self.why is None:
            return super().emit(answer)
        record = wire.why_record(answer)
        if self.json_:
            sys.stdout.write(dumps(record) + "\n")
        else:
            for_a_person(self, lambda: renderer(self.color).why(record))
        return 0 if answer.rank is None else 1

    def run(self, index: SearchIndex, warn: Warn, error: Callable[[str, str], None]) -> int:
        if self.queries is None:
            return super().run(index, warn, error)
        return self.batch(index, self.queries, error)

    def batch(self, index: SearchIndex, source: str, error: Callable[[str, str], None]) -> int:
        """``search --queries FILE``: one compact search record a query line, in order, each
        written (and flushed) as it is made; a line that cannot run gives its error record
        (and ``error(message, kind)`` on stderr) while the others still run; ``--fields``
        keeps those keys of each hit. Returns the exit code: 1 when a line failed, or with
        ``--fail-empty`` when a query found nothing."""
        from toolfind.errors import QueriesError, ToolfindError

        failed = empty = False
        fields = self.fields_of()
        for file, number, id_, query, unreadable in _batch_queries(source):
            try:
                if unreadable:
                    raise QueriesError(unreadable, file=file, line=number)
                found = self.search(index, query)
                document = wire.search_record(found, include_schema=self.schema)
                document["hits"] = [select(hit, fields) for hit in document["hits"]]
                empty = empty or not found.hits
                record = wire.batch_record(document, id_)
            except ToolfindError as exc:
                failed = True
                error(str(exc), exc.kind)
                record = wire.batch_error_record(str(exc), exc.kind, number, id_)
            sys.stdout.write(dumps(record, compact=True) + "\n")
            sys.stdout.flush()
        return 1 if failed else self.exit_code(0 if empty else 1)

    def items(self, answer: SearchResult) -> Iterable[Hit]:
        return answer.hits

    def records(self, answer: SearchResult, items: Iterable[Hit]) -> Iterator[dict[str, Any]]:
        return iter(wire.hit_records(answer, include_schema=self.schema))

    def document(self, answer: SearchResult, records: Iterator[dict[str, Any]]) -> Any:
        unmatched, corrections = list(answer.unmatched_terms), dict(answer.corrections)
        return wire.search_document(
            answer.query, list(records), unmatched, corrections, answer.stages
        )

    def draw(self, render: ModuleType, answer: SearchResult, items: Iterable[Hit]) -> None:
        render.search(answer, explain=self.explain)

    def columns(self) -> tuple[str, ...]:
        return tuple(key for key in self.KEYS if key != "explain" or self.explain)

    def from_file(self) -> bool:
        return reads_file_only(self)

    def answer_from_file(self, seg: Segment) -> tuple[Any, list[str], int]:
        """``--json`` from the index file read in place: the JSON document, the stderr lines
        and the hit count, as :meth:`answer` and :meth:`emit` make them, reading only the
        records printed."""
        from toolfind.core import confidence
        from toolfind.core import search as searching
        from toolfind.store.segment import ToolRecord

        query = " ".join(self.query or ())
        found = searching.run(seg, query, confidence.probe(self.limit))
        sure = confidence.of_hits(found, found.ranked, exact=len(found.exact))
        fields, record = self.fields_of(), seg.record

        def hit(match: str, doc: int, score: float, sure: float) -> dict[str, Any]:
            made = wire.hit_record(
                ToolRecord(record(doc)), score, match, include_schema=self.schema, confidence=sure
            )
            return select(made, fields)

        made = confidence.finish(found.exact, found.ranked, sure, self.limit, hit)
        unmatched = list(found.unmatched)
        document = wire.search_document(query, made, unmatched, found.corrections, ("lexical",))
        notes = search_notes(found.unmatched, found.corrections)
        unsure = unsure_note(sure[: len(made)])
        return document, [*notes, unsure] if unsure else notes, len(made)


class _Dialected(Params):
    """``show`` and ``schemas``: tools written in a ``--dialect`` (whose old name is
    ``--format``, said on stderr when used); :data:`DIALECT` when none is given."""

    DIALECT = "native"
    dialect: str | None

    def problem(self) -> str:
        fmt = self.format_
        if fmt is not None and self.dialect is not None and fmt != self.dialect:
            return f"--format is the old name of --dialect: give --dialect {self.dialect} alone"
        return ""

    def prepare(self) -> list[str]:
        notes = []
        if self.format_ is not None:
            notes.append(
                f"Warning: --format {self.format_} is now --dialect {self.format_};"
                " the old name goes in a later release"
            )
            self.dialect, self.format_ = self.format_, None
        if self.dialect is None:
            self.dialect = self.DIALECT
        return notes


class Show(_Dialected, name="show"):
    """Print one tool's full schema as JSON; suggests the closest name on a miss.

    Example: toolfind show read_file --dialect openai --json
    """

    name: str = option(
        "", NAME, None, "Tool name: tool, ns/tool, ns:tool, ns__tool or ns.tool.",
        metavar="NAME", complete="tool",
    )  # fmt: skip
    dialect, format_ = dialect_options("native", DIALECTS)
    catalog = CATALOG
    NAMES_A_TOOL = True
    json_ = option(
        "--json", FLAG, False, "Print the JSON document alone, for a program (an error too is JSON)."
    )  # fmt: skip
    no_pager, color, no_cache = NO_PAGER, COLOR, NO_CACHE

    def ask(self, index: SearchIndex) -> tuple[tuple[Tool, dict[str, Any]], list[str]]:
        from toolfind.output.tool_formats import tool_to_format

        tool = index.resolve(self.name)
        return (tool, tool_to_format(tool, self.dialect or self.DIALECT)), []

    def emit(self, items: tuple[Tool, dict[str, Any]]) -> int:
        if self.json_:
            sys.stdout.write(dumps(items[1]) + "\n")
        else:
            for_a_person(self, lambda: renderer(self.color).tool(*items))
        return 1

    def from_file(self) -> bool:
        return self.dialect == "native" and reads_file_only(self)

    def check_name(self, seg: Segment) -> None:
        tools_named(seg, self.name)

    def answer_from_file(self, seg: Segment) -> tuple[Any, list[str], int] | None:
        """``--json`` (native) from the index file read in place, as :meth:`answer` and
        :meth:`emit` make it: the tool's JSON document, no stderr line, one record. Raises
        ToolNotFound for a name no tool has; None when several tools answer to it (the full
        command lists them)."""
        from toolfind.output.tool_formats import tool_to_format
        from toolfind.store.segment import ToolRecord

        ids = tools_named(seg, self.name)
        if len(ids) != 1:
            return None
        tool = ToolRecord(seg.record(ids[0]))
        return tool_to_format(tool, "native", carried=(seg.extras.get(ids[0], ()), ())), [], 1


class List(Records, name="list"):
    """List tools, one row each (name, namespace, summary, tags, deferred).

    Example: toolfind list --namespace files --json
    """

    limit: int | None = option("--limit -k", COUNT, None, "At most this many tools.", metavar="N")
    namespace: str | None = NAMESPACE
    tag: list[str] | None = TAG
    deferred: bool | None = option(
        "--deferred/--no-deferred", SWITCH, None, "Only deferred, or only non-deferred tools."
    )
    catalog, json_, format_, fields, fail_empty, no_pager, color, no_cache = RECORD_OPTIONS
    KEYS = wire.ROW_KEYS

    def ask(self, index: SearchIndex) -> tuple[Iterable[Tool], list[str]]:
        hints = [filter_warning(index, self.namespace, self.tag or ())]
        if self.machine():  # written as each tool is read
            return islice(
                index.stream(self.namespace, self.tag or (), self.deferred), self.limit
            ), hints
        if self.namespace is None and not self.tag and self.limit is None:
            _decode_all(index)  # every tool is printed: decoded at once, faster
        return index.listed(self.namespace, self.tag or (), self.deferred)[: self.limit], hints

    def records(self, answer: Iterable[Tool], items: Iterable[Tool]) -> Iterator[dict[str, Any]]:
        return map(wire.tool_row, items)

    def draw(self, render: ModuleType, answer: Sequence[Tool], items: Iterable[Tool]) -> None:
        render.tools(answer)


class Schemas(_Dialected, name="schemas", warm=False):
    """Print the tool list to send to an LLM, as one JSON array in the chosen dialect.

    Example: toolfind schemas --dialect anthropic > tools.json
    """

    # Every tool is decoded and written: the warm path would save little.
    DIALECT = "openai"
    dialect, format_ = dialect_options("openai", DIALECTS[1:])
    include_deferred: bool = option(
        "--include-deferred/--exclude-deferred", SWITCH, False, "Include deferred tools."
    )
    catalog, no_cache = CATALOG, NO_CACHE
    json_ = option("--json", FLAG, False, "Accepted for uniformity: the output is always JSON.")

    def ask(self, index: SearchIndex) -> tuple[list[dict[str, Any]], list[str]]:
        """Enabled tools (deferred ones with ``--include-deferred``), each under a name no
        other has (LLM APIs require it), and a note when a name was changed."""
        from toolfind.output.tool_formats import list_names, renamed, tool_to_format

        _decode_all(index)
        chosen = [t for t in index.tools if t.enabled and (self.include_deferred or not t.defer)]
        names, dialect = list_names(chosen), self.dialect or self.DIALECT
        documents = []
        for tool, name in zip(chosen, names, strict=True):
            document = tool_to_format(tool, dialect)
            documents.append(document if name == tool.name else renamed(document, dialect, name))
        return documents, [_renamed_note(chosen, names)]

    def emit(self, items: list[dict[str, Any]]) -> int:
        sys.stdout.write(dumps(items) + "\n")
        return len(items)


class Similar(Records, name="similar"):
    """Tools related to one tool by shared, weighted terms.

    Example: toolfind similar read_file -k 3
    """

    name: str = option(
        "", NAME, None, "The tool to find relatives of.", metavar="NAME", complete="tool"
    )
    limit: int = option("--limit -k", COUNT, 5, "How many tools.", metavar="N")
    weight = WEIGHT
    catalog, json_, format_, fields, fail_empty, no_pager, color, no_cache = RECORD_OPTIONS
    KEYS = wire.SIMILAR_KEYS
    NAMES_A_TOOL = True

    def ask(self, index: SearchIndex) -> tuple[list[models.Similar], list[str]]:
        return index.similar(self.name, self.limit), []

    def check_name(self, seg: Segment) -> None:
        tools_named(seg, self.name)

    def records(
        self, answer: list[models.Similar], items: Iterable[models.Similar]
    ) -> Iterator[dict[str, Any]]:
        return map(wire.similar_record, items)

    def draw(
        self, render: ModuleType, answer: list[models.Similar], items: Iterable[models.Similar]
    ) -> None:
        render.similar(self.name, answer)


class Categories(Records, name="categories"):
    """Namespaces with their tool counts, deferred counts and commonest tags.

    Example: toolfind categories --json
    """

    catalog, json_, format_, fields, no_pager, color, no_cache = (
        CATALOG, JSON, TABLE_FORMAT, FIELDS, NO_PAGER, COLOR, NO_CACHE
    )  # fmt: skip
    KEYS = wire.CATEGORY_KEYS

    def needs_config(self) -> bool:
        """For a person, whether the demo catalogs are in use (:func:`shipped_note`)."""
        import os

        configured = self.catalog or os.environ.get("TOOLFIND_CATALOGS", "").strip()
        return not self.machine() and not configured

    def ask(self, index: SearchIndex) -> tuple[list[Category], list[str]]:
        return index.categories(), [] if self.machine() else [shipped_note(self.catalog)]

    def records(
        self, answer: list[Category], items: Iterable[Category]
    ) -> Iterator[dict[str, Any]]:
        return iter(wire.categories_record(list(items))["categories"])

    def document(self, answer: list[Category], records: Iterator[dict[str, Any]]) -> Any:
        document = wire.categories_record(answer)
        document["categories"] = list(records)
        return document

    def draw(self, render: ModuleType, answer: list[Category], items: Iterable[Category]) -> None:
        render.categories(answer)


class Summaries(Records, name="summaries"):
    """One line per tool (name and first sentence), for a system prompt.

    Example: toolfind summaries --deferred --format markdown
    """

    deferred: bool = option("--deferred", FLAG, False, "Deferred tools only (the default).")
    all_: bool = option("--all", FLAG, False, "Every enabled tool.")
    format_ = option(
        "--format", TEXT, None,
        "text (the default) or markdown lines, json (as --json), or one record a line:"
        " jsonl, csv or tsv.", choices=SUMMARY_FORMATS,
    )  # fmt: skip
    catalog, no_cache, json_, fields, fail_empty, no_pager = (
        CATALOG, NO_CACHE, JSON, FIELDS, FAIL_EMPTY, NO_PAGER
    )  # fmt: skip
    KEYS = wire.SUMMARY_KEYS
    TABLE = False  # lines of text: --fields alone means JSON

    def problem(self) -> str:
        if self.deferred and self.all_:
            return "use either --deferred or --all, not both"
        return super().problem()

    def ask(self, index: SearchIndex) -> tuple[Iterable[Tool], list[str]]:
        tools = index.stream(deferred=None if self.all_ else True)  # written as each is read
        first = next(tools, None)
        if first is not None:
            return chain((first,), tools), []
        from toolfind.output.render import summaries_hint

        return (), [summaries_hint((), self.all_)]

    def records(self, answer: Iterable[Tool], items: Iterable[Tool]) -> Iterator[dict[str, Any]]:
        return map(wire.summary_record, items)

    def draw(self, render: ModuleType, answer: Iterable[Tool], items: Iterable[Tool]) -> None:
        render.summaries(items, markdown=self.format_ == "markdown")


#: The index commands, in the order ``--help`` lists them.
_CLASSES: tuple[type[Params], ...] = (Search, Show, List, Schemas, Similar, Categories, Summaries)
COMMANDS: dict[str, Command] = {command.spec.name: command.spec for command in _CLASSES}


# -- what the commands share ---------------------------------------------------------------------


def filter_warning(index: SearchIndex, namespace: str | None, tags: Sequence[str]) -> str:
    """The stderr line for a ``--namespace`` or ``--tag`` no tool has ("" if none): such a
    filter is not an error (exit 0, no rows), but a typo should not look like "no match"."""
    if namespace is None and not tags:
        return ""
    unknown = index.unknown_filters(namespace, tags)
    return f"Warning: {unknown}" if unknown else ""


def search_notes(
    unmatched: Sequence[str], corrections: dict[str, str], by_meaning: bool = False
) -> list[str]:
    """A search's stderr lines: the words read as others (typos), then the words no tool
    mentions (a corrected word is not among them: it was matched); ``by_meaning``: hits were
    found by meaning all the same (the semantic signal), and the line says so rather than
    contradict them."""
    notes = []
    if corrections:
        read = ", ".join(f"{word} as {fixed}" for word, fixed in corrections.items())
        notes.append(f"Read {read}")
    if unmatched:
        line = "No tool mentions: " + ", ".join(unmatched)
        notes.append(line + " (the hits were found by meaning)" if by_meaning else line)
    return notes


def unsure_note(confidences: Iterable[float]) -> str:
    """The stderr line of a search whose hits (of these confidences) hold no confident match
    (``core.confidence.no_confident_match``: serve-mcp's note); "" when one is, or there is
    no hit (nothing found says so itself)."""
    best = max(confidences, default=None)
    if best is None:
        return ""
    from toolfind.core.confidence import no_confident_match

    return no_confident_match(best)


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


def _decode_all(index: SearchIndex) -> None:
    """Decode every tool of ``index`` at once, for a command that prints them all."""
    from toolfind.store.columns import decode_for_printing

    decode_for_printing(index.tools)


#: How many shared names :func:`_renamed_note` spells out.
_RENAMED_SHOWN = 3


def _renamed_note(tools: Sequence[Tool], names: Sequence[str]) -> str:
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


def _batch_queries(source: str) -> Iterator[tuple[str, int, Any, str, str]]:
    """Query lines of a file (or stdin, ``-``): ``(file, line number, id, query, error)``.
    Plain lines, or JSON Lines objects with a ``query`` (and an optional ``id``); blank lines
    and lines starting with ``#`` are skipped; a line that cannot be read comes with its
    error (the others still run). The file is read as a catalog is
    (``catalog.parse.read_lines``); raises QueriesError when it cannot be."""
    from toolfind.catalog.parse import Problem, parse_line, read_lines
    from toolfind.errors import QueriesError

    name = "<stdin>" if source == "-" else source
    try:
        lines = read_lines(source)
    except Problem as problem:
        message = f"cannot read queries: {problem.message}"
        raise QueriesError(message, file=name, line=problem.line) from None
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if not text.startswith("{"):
            yield name, number, None, text, ""
            continue
        try:
            entry = parse_line(text, number - 1)
        except Problem as problem:
            yield name, number, None, "", problem.message
            continue
        id_ = entry.get("id") if isinstance(entry, dict) else None
        query = entry.get("query") if isinstance(entry, dict) else None
        if not isinstance(query, str) or not query.strip():
            yield name, number, id_, "", "a JSON line needs a non-blank string 'query'"
            continue
        yield name, number, id_, query, ""


#: What the index-file route reads (or what changes nothing in JSON); any other argument but
#: at its default needs the index.
_FILE_READS = frozenset(
    {"json_", "schema", "limit", "catalog", "query", "name", "fields", "fail_empty", "color"}
    | {"no_pager", "dialect"}
)


def tools_named(seg: Segment, name: str) -> Sequence[int]:
    """The tools ``name`` names in the index file (``show``'s rules); raises ToolNotFound,
    with the closest names (``core.suggest``), when it names none."""
    ids = seg.named(name)
    if not ids:
        from toolfind.core.suggest import suggestions
        from toolfind.errors import ToolNotFound

        raise ToolNotFound(name, suggestions(seg, name))
    return ids


def reads_file_only(p: Params) -> bool:
    """Whether ``p`` (after :meth:`Params.prepare`) asks for ``--json`` and no argument
    but those the index-file route reads (``answer_from_file``)."""
    return p.json_ and all(
        getattr(p, o.dest) == o.default for o in p.spec.params if o.dest not in _FILE_READS
    )
