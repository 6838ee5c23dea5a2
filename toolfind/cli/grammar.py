"""The index commands' one grammar: the kinds of option, :class:`Opt` (an option or argument),
:class:`Params` (a command's arguments: the base of each command's class in ``cli.commands``)
and the options several commands share.

A command is a class whose attributes are its options, in the order ``--help`` shows them
(``limit: int = option("--limit -k", COUNT, 10, "How many hits.")``), whose docstring is its
help, and whose methods are its body. Its :class:`Command` (``cls.spec``) is what both
parsers read: Typer makes the command's signature from it (``cli.common.typer_command``), the
warm path parses argv with it (``cli.fast``). An instance is one run's arguments, as the
Typer command receives them, each attribute of the type its option declares.

No typer, typing or dataclasses: the warm path parses with this.
"""

from __future__ import annotations

from toolfind.output.wire import RECORD_FORMATS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from toolfind.store.index import SearchIndex
    from toolfind.store.segment import Segment

    Warn = Callable[[str], None]

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
    arguments (the class attribute it is), ``decls`` its spellings (``"--limit -k"``; a
    switch ``"--on/--off"``; "" for an argument). ``warm`` are the spellings the warm path
    reads (all, by default): given another, it leaves the command to Typer (``--no-cache``,
    ``--weight``, ``--semantic``). ``metavar`` names its value in ``--help`` (upper case, as
    every argument's name); ``complete`` what the shell completes it with (``tool``,
    ``namespace`` or ``tag``: ``cli.completion``); ``hidden`` leaves it out of ``--help``
    (an old spelling kept for a release)."""

    __slots__ = (
        "choices", "complete", "decls", "default", "dest", "help", "hidden", "kind", "metavar",
        "warm",
    )  # fmt: skip

    def __init__(
        self,
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
        self.dest, self.kind, self.default, self.help = "", kind, default, text
        self.decls = tuple(decls.split("/" if kind == SWITCH else None))
        self.choices, self.metavar = choices, metavar
        self.warm = self.decls if warm is None else warm
        self.complete, self.hidden = complete, hidden

    def __set_name__(self, owner: type, name: str) -> None:
        if self.dest not in ("", name):  # a shared option is one argument of every command
            raise TypeError(f"{owner.__name__}.{name}: this option is {self.dest!r}")
        self.dest = name


def option(decls: str, kind: str, default: Any = None, text: str = "", **details: Any) -> Any:
    """An :class:`Opt` as a command class declares it: ``name: type = option(...)`` (typed
    Any, so that mypy reads the attribute as its value's type)."""
    return Opt(decls, kind, default, text, **details)


class Command:
    """A command as the parsers read it: its name, its help (a summary, then an example), its
    options and arguments in the order ``--help`` shows them, whether the warm path answers
    it, and ``cls``, the class of its arguments."""

    __slots__ = ("cls", "help", "name", "params", "warm")

    def __init__(
        self, name: str, help: str, params: tuple[Opt, ...], warm: bool, cls: type[Params]
    ) -> None:
        self.name, self.help, self.params, self.warm, self.cls = name, help, params, warm, cls


class Params:
    """An index command's arguments by ``dest``, as the Typer command receives them; the warm
    path fills the same names with the same values (``cli.fast.parse``). A subclass is a
    command (``class Search(Records, name="search")``): its options are its attributes, its
    docstring its help; ``warm=False`` leaves it to Typer. Its methods are its body: none
    prints before :meth:`answer` has returned (which raises ToolfindError for a miss)."""

    spec: Command
    #: The keys of the command's records: what ``--fields`` may name, the CSV/TSV columns.
    KEYS: tuple[str, ...] = ()
    #: Whether the command prints a table for a person (then ``--fields`` picks its columns).
    TABLE = False

    # The options several commands have (each command declares its own; the value of one a
    # command has not is this default).
    if TYPE_CHECKING:
        catalog: list[str] | None
        no_cache: bool
        json_: bool
        format_: str | None
    #: Whether the command's NAME must name a tool (``show``, ``similar``): the warm path
    #: says a name no tool has from the index file.
    NAMES_A_TOOL = False
    fields: str | None = None
    fail_empty: bool = False
    no_pager: bool = False
    color: str = "auto"
    weight: list[str] | None = None
    # A command without the signals' switches does not rank by them: off, whatever is set.
    semantic: bool | None = False
    rerank: bool | None = False

    def __init_subclass__(cls, name: str = "", warm: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if name:
            params = tuple(value for value in vars(cls).values() if isinstance(value, Opt))
            text = "\n".join(line.strip() for line in (cls.__doc__ or "").strip().splitlines())
            cls.spec = Command(name, text, params, warm, cls)

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(self) == vars(other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({vars(self)!r})"

    # -- the rules every command shares -------------------------------------------------------

    def problem(self) -> str:
        """What makes these arguments a usage error ("" if nothing): said before the index
        is opened, so without the load's warnings."""
        # --json is --format json: beside another --format, a contradiction.
        if self.json_ and self.format_ not in (None, "json"):
            return f"use either --json or --format {self.format_}, not both"
        fields = self.fields_of()
        if fields is None:
            return ""
        if self.format_ in ("text", "markdown") or (self.format_ == "table" and not self.TABLE):
            return (
                f"--fields picks record keys: use it with --json or --format json, jsonl, csv"
                f" or tsv, not --format {self.format_}"
            )
        unknown = [key for key in fields if key not in self.KEYS]
        if not fields or unknown:
            what = f"unknown field {unknown[0]!r}" if unknown else "no field given"
            return f"--fields: {what}; {self.spec.name} records have {', '.join(self.KEYS)}"
        return ""

    def prepare(self) -> list[str]:
        """Read the arguments (without a :meth:`problem`) as one rule, in place: ``--format
        json`` is ``--json``, and ``--fields`` alone picks a table's columns, or means JSON
        where the command prints no table. Returns the stderr lines it calls for. Both
        parsers call it before :meth:`answer`."""
        if self.format_ == "json":
            self.json_, self.format_ = True, None
        if self.fields is not None and self.format_ is None and not self.TABLE:
            self.json_ = True
        return []

    def fields_of(self) -> tuple[str, ...] | None:
        """``--fields`` as keys (None when not given)."""
        if self.fields is None:
            return None
        return tuple(dict.fromkeys(key.strip() for key in self.fields.split(",") if key.strip()))

    def machine(self) -> bool:
        """Whether the arguments ask for JSON or one record a line (not for a person)."""
        return self.json_ or self.format_ in RECORD_FORMATS

    def needs_config(self) -> bool:
        """Whether answering needs the config read (which the warm path does not do)."""
        return False

    def answer(self, index: SearchIndex) -> tuple[Any, list[str]]:
        """What the command prints from ``index``, and the lines it says on stderr first
        (:meth:`ask`). Raises ToolfindError (a miss, an ambiguous name) before anything is
        printed."""
        items, notes = self.ask(index)
        return items, [note for note in notes if note]

    def ask(self, index: SearchIndex) -> tuple[Any, list[str]]:
        """The command's one call into the index: its answer and stderr lines ("" for none)."""
        raise NotImplementedError

    def emit(self, items: Any) -> int:
        """Print the :meth:`answer` as the arguments ask; return how many records it held
        (hits, tools, namespaces: ``--fail-empty``'s count)."""
        raise NotImplementedError

    def run(self, index: SearchIndex, warn: Warn, error: Callable[[str, str], None]) -> int:
        """The command's answer from ``index``: its stderr lines (``warn``), then its output
        (``error`` says a failed part of a batch). Returns the exit code."""
        items, notes = self.answer(index)
        for note in notes:
            warn(note)
        return self.exit_code(self.emit(items))

    def from_file(self) -> bool:
        """Whether :meth:`answer_from_file` answers (then the warm path reads no index)."""
        return False

    def answer_from_file(self, seg: Segment) -> tuple[Any, list[str], int] | None:
        """The JSON document :meth:`answer` and :meth:`emit` would print, its stderr lines and
        its record count, from the index file ``seg`` read in place; None when the index
        must answer."""
        return None

    def check_name(self, seg: Segment) -> None:
        """Raise ToolNotFound when the command's NAME names no tool in the index file ``seg``
        (the commands whose NAME must name one: :attr:`NAMES_A_TOOL`)."""

    def exit_code(self, found: int) -> int:
        """The exit code of a command that printed ``found`` records: 1 when there are none
        and ``--fail-empty`` asks for it (silently, as grep's status), else 0."""
        return 1 if self.fail_empty and not found else 0


def wants_json(args: Sequence[str]) -> bool:
    """Whether ``args`` (before a ``--``) ask for JSON: ``--json``, or ``--format json``
    (the same thing), so that an error is one JSON object too."""
    args = list(args)
    args = args[: args.index("--")] if "--" in args else args
    pairs = zip(args, args[1:], strict=False)
    return "--json" in args or "--format=json" in args or ("--format", "json") in pairs


def error_text(message: str, kind: str, *, as_json: bool) -> str:
    """How an error is said on stderr: one ``Error:`` line, or ``as_json`` one JSON object
    of its ``kind``; the warm path and the Typer commands say it alike."""
    if as_json:
        from toolfind.output.encode import dumps
        from toolfind.output.wire import error_record

        return dumps(error_record(message, kind), compact=True)
    from toolfind.output.text import render_line

    return f"Error: {render_line(message)}"


# -- options several commands share (the other commands' Typer signatures use them too) ---------

#: ``--dialect``: the tool-schema formats a tool is written in (``show``: all; ``schemas``:
#: all but ``native``). The same names the catalogs are read in (docs/catalogs.md).
DIALECTS = ("native", "openai", "anthropic", "mcp", "gemini")
#: ``--format`` where records are printed: for a person (``table``; ``text`` or ``markdown``
#: lines for ``summaries``), one JSON document (``json``, the same as ``--json``), or one
#: record a line (``output.wire``'s formats: ``jsonl``, ``csv``, ``tsv``).
TABLE_FORMATS = ("table", "json", *RECORD_FORMATS)
SUMMARY_FORMATS = ("text", "markdown", "json", *RECORD_FORMATS)
#: What ``--color`` takes; ``auto`` follows the terminal and ``NO_COLOR``.
COLORS = ("auto", "always", "never")

CATALOG = option(
    "--catalog -c", MANY, None, "Catalog file or directory (repeatable).", metavar="PATH"
)
JSON = option(
    "--json", FLAG, False,
    "Print one JSON document (its shape: docs/json.md); the same as --format json.",
)  # fmt: skip
NO_CACHE = option(
    "--no-cache", FLAG, False, "Build the index afresh; do not read or write the cache.", warm=()
)
WEIGHT = option(
    "--weight -w", MANY, None,
    "Field weight override FIELD=W (repeatable), e.g. name=5.", metavar="FIELD=W", warm=(),
)  # fmt: skip
SEMANTIC = option(
    "--semantic/--lexical", SWITCH, None,
    "Fuse the semantic signal with BM25F (needs toolfind[semantic]), or rank by words only.",
    warm=("--lexical",),  # the command line's default: the same index, words only
)  # fmt: skip
RERANK = option(
    "--rerank/--no-rerank", SWITCH, None,
    "Re-score the top candidates with the MiniLM reranker (needs `toolfind model fetch`),"
    " or not.",
    warm=("--no-rerank",),  # the command line's default: no reranker
)  # fmt: skip
NO_PAGER = option(
    "--no-pager", FLAG, False,
    "Print straight to the terminal (default: long output goes through $TOOLFIND_PAGER,"
    " $PAGER or less -FRX; never in a pipe).",
)  # fmt: skip
COLOR = option(
    "--color", TEXT, "auto",
    "Styles on a terminal: auto (off with NO_COLOR), always (into a pipe too) or never.",
    choices=COLORS,
)  # fmt: skip
TABLE_FORMAT = option(
    "--format", TEXT, None,
    "table (the default), json (as --json), or one record a line: jsonl, csv or tsv.",
    choices=TABLE_FORMATS,
)  # fmt: skip
FIELDS = option(
    "--fields", TEXT, None,
    "Only these record keys, e.g. name,description: the table's columns (JSON where there"
    " is no table), or each record's with --json or --format.",
    metavar="KEY,...",
)  # fmt: skip
FAIL_EMPTY = option(
    "--fail-empty", FLAG, False, "Exit 1 when nothing is found (as grep does; nothing is said)."
)
NAMESPACE = option(
    "--namespace", TEXT, None, "Only tools in this namespace.", metavar="NS", complete="namespace"
)
TAG = option(
    "--tag", MANY, None, "Only tools with this tag (repeatable: all must match).",
    metavar="TAG", complete="tag",
)  # fmt: skip


#: The options of a command that prints records (``cli.printing.Records``), in the order
#: ``--help`` shows them: ``catalog, json_, format_, fields, fail_empty, no_pager, color,
#: no_cache = RECORD_OPTIONS``.
RECORD_OPTIONS = (CATALOG, JSON, TABLE_FORMAT, FIELDS, FAIL_EMPTY, NO_PAGER, COLOR, NO_CACHE)


def dialect_options(default: str, choices: tuple[str, ...]) -> tuple[Any, Any]:
    """``--dialect``, and ``--format`` as its old name (hidden, said on stderr when used)."""
    return (
        option("--dialect", TEXT, None,
               f"The tool-schema format, as an LLM API or MCP writes tools (default {default}).",
               choices=choices),
        option("--format", TEXT, None, "Old name of --dialect.", choices=choices, hidden=True),
    )  # fmt: skip
