"""Load catalogs: files to tools and findings.

``load`` never raises for bad input: every problem becomes a ``Finding`` naming the file,
line, JSON path and what is wrong, and everything else still loads.

The common case has a fast path (``load_unchecked``): a JSON document parsed by ``json.loads``
alone, each well-formed entry checked in one pass (``rules.vouch``) and read
(``formats.read_tool``). Anything it cannot vouch for goes the general way
(``formats.tool_from_entry``, then ``validate``), which decides and words every finding.
:func:`read_entry` reads one entry of any source so (serve-mcp's backends' tools).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from toolfind.catalog import DEFAULT_MAX_BYTES, formats
from toolfind.catalog.discovery import Discovery, discover
from toolfind.catalog.formats import read_tool
from toolfind.catalog.parse import (
    Document,
    Problem,
    TooBig,
    parse_json,
    parse_yaml,
    read_text,
    strings_in,
)
from toolfind.catalog.paths import EntryError, PathPart, pointer_parts, short_repr
from toolfind.catalog.paths import finding as _finding
from toolfind.catalog.rules import MAX_NAMESPACE_LENGTH
from toolfind.catalog.validate import _check_schemas, other_problems
from toolfind.errors import CatalogError
from toolfind.models import Finding, LoadResult, Source, Tool
from toolfind.shapes import detect_entry

if TYPE_CHECKING:
    from toolfind.models import Severity

_quick_shape: Final = formats.quick_shape


def _entry_lines(
    doc: Document, entries: formats.Entries, jsonl_index: int | None
) -> list[int | None]:
    """The line each entry starts on (``show`` says ``file:line#pointer``): a JSON Lines
    record's own; in a whole JSON document each list of entries is read in one pass over its
    text (a pointer's line looked up alone costs a pass over what comes before it)."""
    if jsonl_index is not None:
        return [jsonl_index + 1] * len(entries)
    if doc.text is None:  # YAML: its nodes know their lines
        return [doc.locate(pointer_parts(pointer)) for pointer, _, _ in entries]
    lists: dict[str, list[int | None]] = {}
    lines: list[int | None] = []
    for pointer, _, _ in entries:
        parent, _, item = pointer.rpartition("/")
        if not item.isdigit():  # the document is one tool
            lines.append(doc.locate(pointer_parts(pointer)))
            continue
        if parent not in lists:
            lists[parent] = doc.item_lines(pointer_parts(parent))
        found = lists[parent]
        lines.append(found[int(item)] if int(item) < len(found) else None)
    return lines


def _stem_namespace(path: Path) -> str:
    """The namespace a file gives tools that name none: its stem, made a valid namespace."""
    stem = "".join("_" if c.isspace() or c in "/:" or not c.isprintable() else c for c in path.stem)
    return stem[:MAX_NAMESPACE_LENGTH] or "default"


class _FileLoader:
    """Loads one file's tools; collects its findings."""

    def __init__(self, path: Path, check_schemas: bool, every_problem: bool) -> None:
        self.path = path
        self.file = str(path)
        self.check_schemas = check_schemas
        self.every_problem = every_problem
        self.yaml = path.suffix.lower() in (".yaml", ".yml")
        self.namespace = _stem_namespace(path)  # for tools that name none (once, not per tool)
        self.tools: list[Tool] = []
        self.findings: list[Finding] = []
        self.too_big = False

    def error(
        self,
        message: str,
        line: int | None,
        parts: Sequence[PathPart] = (),
        severity: Severity = "error",
    ) -> None:
        self.findings.append(_finding(self.file, message, severity, line=line, parts=parts))

    def load(self, max_bytes: int) -> None:
        try:
            text = read_text(self.path, max_bytes)
        except Problem as problem:
            self.too_big = isinstance(problem, TooBig)
            self.error(problem.message, problem.line)
            return
        if self.path.suffix.lower() == ".jsonl":
            for index, line in enumerate(text.split("\n")):
                if line.strip():
                    self.load_text(line, index)
        else:
            self.load_text(text, None)

    def load_text(self, text: str, jsonl_index: int | None) -> None:
        try:
            if self.yaml:  # never JSON Lines
                doc = parse_yaml(text)
            else:
                doc = parse_json(text, jsonl_index, find_duplicates=False)
            if doc.reparse is not None and not self.load_unchecked(doc, jsonl_index):
                doc = doc.reparse()
        except Problem as problem:
            line = problem.line if jsonl_index is None else jsonl_index + 1
            self.error(problem.message, line)
            return
        if doc.reparse is None:
            self.load_doc(doc, jsonl_index)

    def load_unchecked(self, doc: Document, jsonl_index: int | None) -> bool:
        """Load a document parsed without looking for repeated keys; False (with nothing
        loaded) when it may hold some, or its structure is in doubt: then parse it again.

        A repeated key drops at least itself (a string) from the parsed value, so the value
        holds all the text's strings exactly when no key is repeated. The loader never counts
        a string twice (a part left uncounted only costs the second parse), so a count equal
        to the text's proves there is none.
        """
        try:
            entries = formats.list_entries(doc.value)
        except CatalogError:
            return False
        tools, findings = len(self.tools), len(self.findings)
        # The entries' strings are counted as they load, the rest of the document's here.
        value = doc.value
        if (
            type(value) is list
            and len(value) == len(entries)
            and formats._DICT_TYPE.issuperset(map(type, value))
        ):
            # A list of entry objects (the common case; if some were Gemini `tools` items
            # instead, their keys go uncounted, and too few strings only cost a second parse).
            strings = 0
        else:
            strings = strings_in(value, set(map(id, map(itemgetter(1), entries))))
        lines = _entry_lines(doc, entries, jsonl_index)
        file, namespace, loaded, quick_shape = self.file, self.namespace, self.tools, _quick_shape
        for (pointer, entry, defaults), line in zip(entries, lines, strict=True):
            if strings < 0:
                break
            source = Source(file, pointer, line)
            count = -1
            if type(entry) is dict:  # as in load_doc
                shape = defaults["shape"] or quick_shape(entry)
                at = defaults["namespace"] or namespace
                tags, defer = defaults["tags"], defaults["defer"]
                count = read_tool(entry, shape, at, tags, source, loaded, defer)
            if count < 0:
                self.load_general(entry, defaults, source, doc)
                # An entry that is no object was counted with the rest of the document.
                count = strings_in(entry) if type(entry) is dict else 0
            strings = -1 if count < 0 else strings + count
        if strings >= 0 and 2 * strings == doc.quotes:
            return True
        del self.tools[tools:], self.findings[findings:]
        return False

    def load_doc(self, doc: Document, jsonl_index: int | None) -> None:
        try:
            entries = formats.list_entries(doc.value)
        except CatalogError as exc:
            line = doc.locate(())
            self.findings.append(Finding(self.file, line, exc.path or "", "error", exc.message))
            entries = []
        for parts, key, line in doc.duplicates:
            self.error(f"duplicate key {short_repr(key)}", line, parts)
        # A duplicate key spoils the innermost entry holding it; outside every entry (the
        # file's structure is in doubt), the whole file.
        pointers = [pointer for pointer, _, _ in entries]
        spoiled = set()
        for parts, _, _ in doc.duplicates:
            owner = max(
                (p for p in pointers if tuple(parts[: len(pointer_parts(p))]) == pointer_parts(p)),
                key=len,
                default=None,
            )
            if owner is None:
                return
            spoiled.add(owner)
        lines = _entry_lines(doc, entries, jsonl_index)
        for (pointer, entry, defaults), line in zip(entries, lines, strict=True):
            if pointer in spoiled:
                continue
            source = Source(self.file, pointer, line)
            if type(entry) is dict:  # the fast way when it can tell, else the general way
                shape = defaults["shape"] or _quick_shape(entry)
                at = defaults["namespace"] or self.namespace
                tags, defer = defaults["tags"], defaults["defer"]
                if read_tool(entry, shape, at, tags, source, self.tools, defer) >= 0:
                    continue
            self.load_general(entry, defaults, source, doc)

    def load_general(
        self, entry: Any, defaults: Mapping[str, Any], source: Source, doc: Document
    ) -> None:
        """Load one entry the general way, which decides and words every finding."""
        shape = defaults.get("shape") or (
            detect_entry(entry) if type(entry) is dict or isinstance(entry, Mapping) else None
        )
        namespace = defaults.get("namespace") or self.namespace
        try:
            tool = _checked(
                entry,
                shape,
                namespace,
                defaults.get("tags", ()),
                source,
                self.check_schemas,
                defaults.get("defer", False),
                every_problem=self.every_problem,
            )
        except EntryError as exc:
            # A provider's built-in tool is not a mistake, just nothing to index.
            severity: Severity = "warning" if shape == "builtin" else "error"
            rule = "builtin-tool" if shape == "builtin" else ""
            for each in exc.each if self.every_problem else (exc,):
                parts = each.full_parts
                self.findings.append(
                    _finding(
                        self.file,
                        each.message,
                        severity,
                        line=doc.locate(parts),
                        parts=parts,
                        rule=rule,
                    )
                )
            return
        self.tools.append(tool)


def defer_namespaces(tools: Sequence[Tool], namespaces: Collection[str]) -> list[Tool]:
    """``tools``, those of ``namespaces`` (compared as ``--namespace`` compares them) deferred:
    ``defer_namespaces`` in toolfind.toml, applied wherever tools become an index."""
    if not namespaces:
        return tools if isinstance(tools, list) else list(tools)
    from dataclasses import replace

    from toolfind.core.analysis import name_key

    keys = {name_key(n) for n in namespaces}
    return [
        replace(t, defer=True) if not t.defer and name_key(t.namespace) in keys else t
        for t in tools
    ]


def read_entry(
    entry: Any,
    *,
    namespace: str,
    source: Source,
    tags: Sequence[str] = (),
    shape: str | None = None,
    check_schemas: bool = True,
) -> Tool:
    """One tool entry read as the loader reads each entry of a catalog file: ``namespace``
    when it names none, the file's ``tags`` before its own, ``shape`` forced or detected;
    ``check_schemas`` as :func:`load` says. The catalog rules for an entry from anywhere
    (serve-mcp reads its backends' tools with it). Raises ``EntryError`` for a bad entry."""
    if type(entry) is dict:
        made: list[Tool] = []
        if read_tool(entry, shape or _quick_shape(entry), namespace, tags, source, made) >= 0:
            return made[0]
    if shape is None and (type(entry) is dict or isinstance(entry, Mapping)):
        shape = detect_entry(entry)
    return _checked(entry, shape, namespace, tags, source, check_schemas)


def _checked(
    entry: Any,
    shape: str | None,
    namespace: str,
    tags: Sequence[str],
    source: Source,
    check_schemas: bool,
    defer: bool = False,
    *,
    every_problem: bool = False,
) -> Tool:
    """``entry`` read the general way, every key checked (``formats.tool_from_entry``) and,
    with ``check_schemas``, against its packaged schema and the meta-schema (``validate``).
    Raises ``EntryError``; with ``check_schemas``, its ``more`` holds the entry's other
    problems (with ``every_problem``, those too that jsonschema finds beside the first the
    reading rules found)."""
    try:
        tool = formats.tool_from_entry(
            entry, namespace=namespace, tags=tags, source=source, shape=shape, defer=defer
        )
    except EntryError as exc:
        if not (check_schemas and every_problem):
            raise
        raise other_problems(entry, shape, exc) from None
    if check_schemas and shape is not None:
        _check_schemas(entry, shape, tool, source)
    return tool


def load(
    paths: Sequence[Path],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    check_schemas: bool = True,
    every_problem: bool = False,
    progress: Callable[[int, int, int], object] | None = None,
    found: Discovery | None = None,
) -> LoadResult:
    """Load every tool under ``paths`` (files or directories, see ``discover``).

    Skipped built-in tools and duplicates are warnings, other findings errors. A tool whose
    (namespace, name) was already loaded is skipped: the first in load order wins (paths in
    the order given, files within a directory sorted). ``check_schemas`` runs the packaged
    JSON Schemas and the meta-schema over every entry (the checks needed to build a correct
    ``Tool`` always run). ``every_problem`` (``validate``) makes each of an entry's problems a
    finding, not only the first. ``LoadResult.files`` lists every catalog file found, loaded
    or not. ``progress``, if given, is called after each file with (files read, files found, tools).
    ``found`` is ``discover(paths)`` when the caller walked them already.

    Raises ``CatalogError`` only when a path does not exist.
    """
    found = found or discover(paths)
    files, findings = found.files, list(found.findings)
    tools: list[Tool] = []
    oversized: list[Finding] = []
    first: dict[tuple[str, str], Tool] = {}
    for done, path in enumerate(files, 1):
        loader = _FileLoader(path, check_schemas, every_problem)
        loader.load(max_bytes)
        findings.extend(loader.findings)
        if loader.too_big:
            oversized.extend(loader.findings)
        if progress is not None:
            progress(done, len(files), len(tools) + len(loader.tools))
        if not loader.tools:
            continue
        # Most files repeat no tool, of their own or an earlier file's: decided at once.
        loaded = dict(zip(map(_tool_key, loader.tools), loader.tools, strict=True))
        if len(loaded) == len(loader.tools) and (not first or first.keys().isdisjoint(loaded)):
            first.update(loaded)
            tools.extend(loader.tools)
            continue
        for tool in loader.tools:
            key = (tool.namespace, tool.name)
            winner = first.get(key)
            if winner is None:
                first[key] = tool
                tools.append(tool)
                continue
            assert tool.source is not None and winner.source is not None
            first_at = winner.source
            where = f"{first_at.file}:{first_at.line}" if first_at.line else first_at.file
            findings.append(
                _finding(
                    tool.source.file,
                    f"duplicate tool {tool.qualified_name!r}: {where} was "
                    "loaded first and wins; this one is skipped",
                    "warning",
                    line=tool.source.line,
                    parts=pointer_parts(tool.source.pointer),
                    rule="duplicate-tool",
                )
            )
    findings.extend(_same_key_findings(tools))
    return LoadResult(
        tools=tuple(tools),
        findings=tuple(findings),
        files=tuple(map(str, files)),
        oversized=tuple(oversized),
    )


def _same_key_findings(tools: Sequence[Tool]) -> list[Finding]:
    """A warning for each tool whose name, in its namespace, has the same ``name_key`` as an
    earlier tool's (``read_file``, ``Read-File``): both load, and each is reachable only by its
    exact spelling (``analysis.lookup_name``), not by a case- or separator-free one."""
    from toolfind.core.analysis import name_key

    first: dict[tuple[str, str], Tool] = {}
    out = []
    for tool in tools:
        key = (tool.namespace, name_key(tool.name))
        earlier = first.setdefault(key, tool)
        if earlier is tool or tool.source is None:
            continue
        out.append(
            _finding(
                tool.source.file,
                f"{tool.qualified_name!r} and {earlier.qualified_name!r} differ only in case or "
                "separators: each is found only by its exact name; rename one to tell them apart",
                "warning",
                line=tool.source.line,
                parts=pointer_parts(tool.source.pointer),
            )
        )
    return out


_tool_key: Final = attrgetter("namespace", "name")
