"""Catalog I/O: find catalog files, parse them safely, check them, and lint them.

The only module that reads catalog files. ``load`` never raises for bad input: every problem
becomes a ``Finding`` naming the file, line, JSON path and what is wrong, and everything else
still loads. yaml and jsonschema cost a lot to import (see docs/CONTRACTS.md), so they are
imported inside the functions that parse YAML or check schemas, never at module level; and
jsonschema only for the entries and schemas that hand-written rules cannot vouch for (those
with a problem to report, and unusual ones): a well-formed catalog of Draft 2020-12 or Draft 7
schemas loads without importing it.

Loading a large catalog is mostly reading entries, so the common case has a fast path: a JSON
document is parsed by ``json.loads`` alone, and its repeated keys are found by counting its
strings (``_Doc.quotes``) against those the loader meets; a well-formed entry is read and
checked in one pass (``_fast_tool``). Anything either cannot vouch for goes the general way,
which decides and words every finding, so the results are the same (tests/test_fast_load.py).

Limits that protect the user: files over ``max_bytes`` are not read; YAML aliases may add at
most ``MAX_YAML_ALIAS_NODES`` nodes (refusing "billion laughs" documents); YAML nests at most
``MAX_YAML_DEPTH`` levels and schemas at most ``formats.MAX_SCHEMA_DEPTH``; only regular files
are ever opened (never FIFOs, devices or sockets); no ``$ref`` is ever fetched.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from toolfind.catalog import formats
from toolfind.catalog.formats import EntryError, PathPart, json_path, pointer_parts, short_repr
from toolfind.errors import CatalogError
from toolfind.models import Finding, LoadResult, Source, Tool

if TYPE_CHECKING:
    from toolfind.models import Severity

DEFAULT_MAX_BYTES: Final = 64 * 1024 * 1024
CATALOG_SUFFIXES: Final = (".json", ".yaml", ".yml", ".jsonl")
#: Nodes that YAML aliases may add in total before a file is refused ("billion laughs").
MAX_YAML_ALIAS_NODES: Final = 100_000
#: Deepest nesting of a YAML document (kept well inside Python's recursion limit).
MAX_YAML_DEPTH: Final = 200
#: Names MCP hosts accept (the MCP specification's recommendation, enforced by clients).
MCP_NAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)

_SCHEMA_FILES: Final = {
    "openai": "openai.schema.json",
    "openai-responses": "openai-responses.schema.json",
    "function": "function.schema.json",
    "anthropic": "anthropic.schema.json",
    "mcp": "mcp.schema.json",
    "gemini": "gemini.schema.json",
    "native": "native-catalog.schema.json",
}
_NATIVE_TOOL_REF: Final = "urn:toolfind:schema:native-catalog#/$defs/tool"

Locate = Callable[[Sequence[PathPart]], int | None]


class _Problem(Exception):
    """A file-level problem: the whole file (or JSON Lines record) is skipped."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class _Doc:
    """A parsed document: its value, how to find a path's line, and its duplicate keys."""

    value: Any
    locate: Locate
    # (path of the object, the repeated key, line) for every duplicate key.
    duplicates: list[tuple[tuple[PathPart, ...], str, int | None]] = field(default_factory=list)
    # Set when the parser did not look for duplicate keys (see ``_parse_json``): parses the
    # text again, looking for them. ``quotes`` is then twice the number of strings (keys
    # included) in the text, which the loader compares with the strings it meets.
    reparse: Callable[[], _Doc] | None = None
    quotes: int = 0


# --- discovery ---------------------------------------------------------------------------


def discover(paths: Sequence[Path]) -> list[Path]:
    """Catalog files under ``paths``: files as given, directories searched recursively.

    Directories yield their ``.json``, ``.yaml``, ``.yml`` and ``.jsonl`` files, sorted, and
    skip hidden entries (names starting with ``.``); each directory is visited once, so
    symlink loops end. Only regular files are returned, each once. Raises ``CatalogError``
    when a path does not exist.
    """
    return _discover(paths)[0]


def _discover(paths: Sequence[Path]) -> tuple[list[Path], list[Finding]]:
    files: list[Path] = []
    findings: list[Finding] = []
    seen_files: set[tuple[int, int]] = set()
    seen_dirs: set[tuple[int, int]] = set()

    def add(path: Path, st: os.stat_result) -> None:
        key = (st.st_dev, st.st_ino)
        if key not in seen_files:
            seen_files.add(key)
            files.append(path)

    for root in paths:
        try:
            st = os.stat(root)
        except (FileNotFoundError, NotADirectoryError):
            raise CatalogError("no such file or directory", file=str(root)) from None
        except OSError as exc:
            findings.append(_finding(root, f"cannot read: {exc.strerror}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            for path, file_st in _walk(root, st, seen_dirs, findings):
                add(path, file_st)
        elif not stat.S_ISREG(st.st_mode):
            findings.append(_finding(root, f"not a regular file ({_file_kind(st)}); skipped"))
        elif root.suffix.lower() not in CATALOG_SUFFIXES:
            findings.append(
                _finding(root, "not a catalog file: expected .json, .yaml, .yml or .jsonl")
            )
        else:
            add(root, st)
    return files, findings


def _walk(
    root: Path, root_st: os.stat_result, seen_dirs: set[tuple[int, int]], findings: list[Finding]
) -> list[tuple[Path, os.stat_result]]:
    # Plain strings, not Path operations, per entry: a directory of 100,000 files is walked
    # on every cold start, and pathlib made that walk several times slower.
    found: list[tuple[tuple[str, ...], Path, os.stat_result]] = []
    seen_dirs.add((root_st.st_dev, root_st.st_ino))
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]  # iterative: no deep recursion
    while stack:
        directory, rel = stack.pop()
        try:
            with os.scandir(directory) as it:
                names = sorted(e.name for e in it)
        except OSError as exc:
            findings.append(_finding(directory, f"cannot read directory: {exc.strerror}"))
            continue
        prefix = os.path.join(directory, "")
        for name in names:
            if name.startswith("."):
                continue
            dot = name.rfind(".")
            catalog_file = 0 < dot < len(name) - 1 and name[dot:].lower() in CATALOG_SUFFIXES
            try:
                st = os.stat(prefix + name)  # follows symlinks: a linked directory is walked once
            except OSError as exc:
                if catalog_file:
                    findings.append(
                        _finding(directory / name, f"cannot read: {exc.strerror}", "warning")
                    )
                continue
            if stat.S_ISDIR(st.st_mode):
                if (st.st_dev, st.st_ino) not in seen_dirs:
                    seen_dirs.add((st.st_dev, st.st_ino))
                    stack.append((directory / name, (*rel, name)))
            elif not catalog_file:
                continue
            elif stat.S_ISREG(st.st_mode):
                found.append(((*rel, name), directory / name, st))
            else:
                findings.append(
                    _finding(
                        directory / name,
                        f"not a regular file ({_file_kind(st)}); skipped",
                        "warning",
                    )
                )
    found.sort(key=lambda item: item[0])
    return [(path, st) for _, path, st in found]


def _file_kind(st: os.stat_result) -> str:
    mode = st.st_mode
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _finding(
    path: Path | str,
    message: str,
    severity: Severity = "error",
    *,
    line: int | None = None,
    parts: Sequence[PathPart] = (),
) -> Finding:
    return Finding(
        file=str(path),
        line=line,
        path=json_path(parts),
        severity=severity,
        message=message,
    )


# --- reading and decoding ----------------------------------------------------------------


def _read(path: Path, limit: int) -> bytes:
    # O_NONBLOCK: if the path became a FIFO after discovery, opening must not hang; the
    # fstat then refuses it before any read.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _Problem(f"cannot read: {exc.strerror}") from None
    with open(fd, "rb", closefd=True) as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _Problem(f"not a regular file ({_file_kind(st)}); skipped")
        if st.st_size > limit:
            raise _Problem(_too_big(f"{st.st_size:,}", limit))
        # Sized to the file: read(limit + 1) allocates a limit-sized buffer for every file,
        # which made a directory of 100,000 small files take seconds longer to load.
        want = st.st_size + 1
        try:
            data = f.read(want)
            if len(data) == want:  # it grew after the stat: read on, up to the limit
                data += f.read(limit + 1 - want)
        except OSError as exc:
            raise _Problem(f"cannot read: {exc.strerror}") from None
    if len(data) > limit:  # it grew after the stat
        raise _Problem(_too_big(f"more than {limit:,}", limit))
    return data


def _too_big(size: str, limit: int) -> str:
    return (
        f"file is {size} bytes, over the {limit:,}-byte limit; raise it with "
        "max_file_size in toolfind.toml"
    )


def _decode(data: bytes) -> str:
    """Text of a catalog file: UTF-8 (a BOM is skipped), or UTF-16 when it starts with a BOM."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        codec, skip = "utf-16", 0  # the utf-16 codec reads and drops the BOM itself
    else:
        codec, skip = "utf-8", 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[skip:].decode(codec, errors="strict")
    except UnicodeDecodeError as exc:
        offset = exc.start + skip
        line = data.count(b"\n", 0, offset) + 1 if codec == "utf-8" else None
        raise _Problem(
            f"invalid {codec.upper()} at byte {offset} (0x{data[offset]:02x}); "
            "save the file as UTF-8",
            line,
        ) from None
    if not text.strip():
        raise _Problem("file is empty")
    return text


# --- JSON --------------------------------------------------------------------------------


class _Constant(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _reject_constant(name: str) -> Any:
    raise _Constant(name)


def _finite_float(text: str) -> float:
    # 1e99999 overflows to infinity: refused like Infinity, or --json would print a bare
    # `Infinity`, which is not JSON.
    value = float(text)
    if not math.isfinite(value):
        raise _Constant(text)
    return value


def _parse_json(text: str, jsonl_index: int | None = None, *, find_duplicates: bool = True) -> _Doc:
    """Parse JSON text; ``jsonl_index`` is the 0-based line of a JSON Lines record.

    Without ``find_duplicates`` the text is parsed by ``json.loads`` alone, which keeps the
    last of repeated keys without a word but is much faster than handing every object's pairs
    to Python; the ``_Doc`` then counts the text's strings and can ``reparse`` looking for
    repeated keys. Either way the value, and every problem raised, are the same.
    """
    line_offset = jsonl_index or 0
    repeated: list[tuple[dict[str, Any], str]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):
            seen: set[str] = set()
            key = next(k for k, _ in items if k in seen or seen.add(k))  # type: ignore[func-returns-value]
            repeated.append((obj, key))
        return obj

    def at(offset: int | None) -> int | None:
        return None if offset is None else text.count("\n", 0, offset) + 1 + line_offset

    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs if find_duplicates else None,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        raise _Problem(
            f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno + line_offset
        ) from None
    except _Constant as exc:
        what = exc.name
        if exc.name.lstrip("-") not in ("NaN", "Infinity"):
            what = f"{exc.name} overflows to infinity, which"
        raise _Problem(
            f"invalid JSON: {what} is not allowed (use null or a string)",
            at(_offset_outside_strings(text, exc.name.lstrip("-"))),
        ) from None
    except RecursionError:
        raise _Problem("invalid JSON: nesting is too deep to read") from None
    except ValueError:  # int() over sys.get_int_max_str_digits()
        raise _Problem("invalid JSON: a number has too many digits") from None

    if jsonl_index is not None:
        # A JSON Lines record: every path is on the record's line.
        def locate(parts: Sequence[PathPart]) -> int | None:
            return line_offset + 1
    else:

        def locate(parts: Sequence[PathPart]) -> int | None:
            return at(_json_offset(text, parts))

    _refuse_lone_surrogates(text, value, locate)
    doc = _Doc(value, locate)
    if not find_duplicates:
        doc.reparse = lambda: _parse_json(text, jsonl_index)
        doc.quotes = _string_quotes(text)
    _add_duplicates(doc, repeated)
    return doc


def _add_duplicates(doc: _Doc, repeated: list[tuple[dict[str, Any], str]]) -> None:
    """Note each (object, repeated key) in ``doc.duplicates``, with its path and line."""
    if repeated:
        where = _paths_of(doc.value, {id(obj) for obj, _ in repeated})
        for obj, key in repeated:
            parts = where.get(id(obj), ())
            doc.duplicates.append((parts, key, doc.locate((*parts, key))))


def _string_quotes(text: str) -> int:
    """Twice the number of strings in valid JSON ``text``: its quotes that no ``\\`` escapes.

    Backslashes outside strings are not JSON, and inside them every run of them starts an
    escape; so dropping each ``\\\\`` pair from the left leaves ``\\"`` exactly where a quote
    is escaped.
    """
    if "\\" not in text:
        return text.count('"')
    if "\\\\" in text:
        text = text.replace("\\\\", "")
    return text.count('"') - text.count('\\"')


def _strings_in(value: Any, skip: Collection[int] = ()) -> int:
    """The number of strings (object keys included) in a parsed JSON value; -1 when it nests
    deeper than ``_DEEP_DOCUMENT`` levels. Objects whose ``id`` is in ``skip`` are not counted.
    """
    if type(value) is str:
        return 1
    if not value or (type(value) is dict and id(value) in skip):  # `[]`: many files hold no more
        return 0
    count = 0
    stack: list[tuple[Any, int]] = [(value, 0)]  # iterative: no deep recursion
    while stack:
        node, depth = stack.pop()
        if type(node) is dict:
            count += len(node)
            children: Iterable[Any] = node.values()
        elif type(node) is list:
            children = node
        else:
            continue
        if depth >= _DEEP_DOCUMENT:
            return -1
        for child in children:
            kind = type(child)
            if kind is str:
                count += 1
            elif kind is list or (kind is dict and id(child) not in skip):
                stack.append((child, depth + 1))
    return count


#: Nesting beyond which a document parsed without looking for repeated keys is parsed again
#: looking for them, however its strings count: that parse nests a little less deep before
#: it gives up, and it is the one whose verdict stands.
_DEEP_DOCUMENT: Final = 500


def _refuse_lone_surrogates(text: str, value: Any, locate: Locate) -> None:
    # Only an escape can make a lone surrogate; "\\" first, as one character is found fastest.
    if "\\" in text and ("\\ud" in text or "\\uD" in text):
        bad = _lone_surrogate(value)
        if bad is not None:
            raise _Problem(
                f"invalid JSON: the string at {json_path(bad[0]) or '$'} has the unpaired "
                f"surrogate \\u{ord(bad[1]):04x}; strings must be valid Unicode",
                locate(bad[0]),
            )


def _lone_surrogate(doc: Any) -> tuple[tuple[PathPart, ...], str] | None:
    """The path and character of the first unpaired surrogate in a key or string, or None.

    json accepts ``"\\ud800"``, but no such string can be written as UTF-8: printing it
    would crash every command that shows the tool.
    """
    stack: list[tuple[Any, tuple[PathPart, ...]]] = [(doc, ())]
    while stack:
        value, parts = stack.pop()
        items: Iterable[tuple[PathPart, Any]]
        if isinstance(value, str):
            bad = next((c for c in value if "\ud800" <= c <= "\udfff"), None)
            if bad is not None:
                return parts, bad
            continue
        if isinstance(value, dict):
            for key in value:
                bad = next((c for c in key if "\ud800" <= c <= "\udfff"), None)
                if bad is not None:
                    return (*parts, key), bad
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        stack.extend(reversed([(v, (*parts, k)) for k, v in items]))  # document order
    return None


def _offset_outside_strings(text: str, token: str) -> int | None:
    """Offset of the first ``token`` outside JSON strings (for NaN/Infinity's line)."""
    i = 0
    while True:
        hit, quote = text.find(token, i), text.find('"', i)
        if hit < 0 or quote < 0 or hit < quote:
            return hit if hit >= 0 else None
        end = quote + 1
        while True:  # the closing quote is the first one preceded by an even run of '\'
            end = text.find('"', end)
            if end < 0:
                return None
            slashes = len(text[:end]) - len(text[:end].rstrip("\\"))
            if slashes % 2 == 0:
                break
            end += 1
        i = end + 1


def _json_offset(text: str, parts: Sequence[PathPart]) -> int | None:
    """Offset of the deepest value along ``parts`` in JSON ``text``; only run for findings."""
    decoder = json.JSONDecoder()
    scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

    def ws(i: int) -> int:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        return i

    i = ws(0)
    best = i
    try:
        for part in parts:
            if text[i] == "{" and isinstance(part, str):
                i = ws(i + 1)
                value_at = None
                while text[i] == '"':
                    key_at = i
                    key, i = scanstring(text, i + 1)
                    i = ws(ws(i) + 1)  # skip ':'
                    if key == part:  # the last one wins, as in the parsed object
                        best, value_at = key_at, i
                    i = ws(decoder.raw_decode(text, i)[1])
                    i = ws(i + 1) if text[i] == "," else i
                if value_at is None:
                    return best
                i = value_at
            elif text[i] == "[" and isinstance(part, int):
                i = ws(i + 1)
                for _ in range(part):
                    i = ws(decoder.raw_decode(text, i)[1])
                    i = ws(i + 1) if text[i] == "," else i
                best = i
            else:
                return best
    except (ValueError, IndexError):
        return best
    return best


def _paths_of(doc: Any, targets: set[int]) -> dict[int, tuple[PathPart, ...]]:
    """The JSON path of each object whose ``id`` is in ``targets`` (iterative walk)."""
    found: dict[int, tuple[PathPart, ...]] = {}
    stack: list[tuple[Any, tuple[PathPart, ...]]] = [(doc, ())]
    while stack and len(found) < len(targets):
        value, parts = stack.pop()
        if id(value) in targets:
            found.setdefault(id(value), parts)
        if isinstance(value, dict):
            stack.extend((v, (*parts, k)) for k, v in value.items() if isinstance(v, dict | list))
        elif isinstance(value, list):
            stack.extend(
                (v, (*parts, i)) for i, v in enumerate(value) if isinstance(v, dict | list)
            )
    return found


# --- YAML --------------------------------------------------------------------------------

_yaml_loader: type | None = None


def _yaml_loader_class() -> type:
    """A safe YAML loader (built once): libyaml's parser when present, a bounded composer.

    The composer refuses recursive aliases, alias expansion beyond ``MAX_YAML_ALIAS_NODES``
    and nesting beyond ``MAX_YAML_DEPTH``; the constructor makes every mapping key a string,
    records duplicate keys, and refuses NaN/infinity and every tag that is not plain JSON
    data (Python tags, !!binary, !!set, ...); timestamps stay strings.
    """
    global _yaml_loader
    if _yaml_loader is None:
        _yaml_loader = _assemble_loader(_bounded_composer(), _json_constructor())
    return _yaml_loader


def _bounded_composer() -> type:
    from yaml import AliasEvent
    from yaml.composer import Composer, ComposerError
    from yaml.nodes import Node

    class BoundedComposer(Composer):
        peek_event: Callable[[], Any]  # provided by the parser mixed in beside it

        def __init__(self) -> None:
            super().__init__()
            self.depth = 0
            self.expanded = 0  # nodes added by aliases
            self.count = 0  # nodes, each alias counting as the size of what it repeats
            self.sizes: dict[int, int] = {}  # anchored node -> its size

        def fail(self, message: str, event: Any) -> ComposerError:
            return ComposerError(None, None, message, event.start_mark)

        def compose_node(self, parent: Node | None, index: Any) -> Node | None:
            event: Any = self.peek_event()
            if isinstance(event, AliasEvent):
                target = self.anchors.get(event.anchor)
                if target is not None:
                    size = self.sizes.get(id(target))
                    if size is None:  # the anchor is still open: the alias is inside it
                        raise self.fail(f"recursive YAML alias *{event.anchor}", event)
                    self.count += size
                    self.expanded += size
                    if self.expanded > MAX_YAML_ALIAS_NODES:
                        raise self.fail(
                            f"YAML aliases expand to more than {MAX_YAML_ALIAS_NODES:,} nodes; "
                            "refusing to load",
                            event,
                        )
                return super().compose_node(parent, index)
            self.depth += 1
            if self.depth > MAX_YAML_DEPTH:
                raise self.fail(f"nesting is deeper than {MAX_YAML_DEPTH} levels", event)
            start = self.count
            node = super().compose_node(parent, index)
            self.count += 1
            if getattr(event, "anchor", None) is not None:
                self.sizes[id(node)] = self.count - start
            self.depth -= 1
            return node

    return BoundedComposer


def _json_constructor() -> type:
    from yaml.constructor import ConstructorError, SafeConstructor
    from yaml.nodes import MappingNode, Node, ScalarNode

    class JsonConstructor(SafeConstructor):
        def __init__(self) -> None:
            super().__init__()
            self.duplicates: list[tuple[MappingNode, ScalarNode]] = []

        def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
            explicit = [k for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"]
            self.flatten_mapping(node)
            seen: set[str] = set()
            for key_node in explicit:
                if isinstance(key_node, ScalarNode):
                    if key_node.value in seen:
                        self.duplicates.append((node, key_node))
                    seen.add(key_node.value)
            mapping: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, ScalarNode):
                    raise ConstructorError(
                        None, None, "a mapping key must be a plain value", key_node.start_mark
                    )
                # The key's text, so `on:` or `1:` name a property instead of becoming
                # True or 1: catalogs are JSON data, whose keys are strings.
                mapping[key_node.value] = self.construct_object(value_node, deep=deep)
            return mapping

        def construct_finite_float(self, node: ScalarNode) -> float:
            value = self.construct_yaml_float(node)
            if not math.isfinite(value):
                raise ConstructorError(
                    None, None, "NaN and infinity are not allowed", node.start_mark
                )
            return value

        def refuse(self, node: Node) -> Any:
            tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
            raise ConstructorError(None, None, f"unsupported YAML tag {tag!r}", node.start_mark)

    register: Any = JsonConstructor.add_constructor
    register("tag:yaml.org,2002:float", JsonConstructor.construct_finite_float)
    register("tag:yaml.org,2002:timestamp", JsonConstructor.construct_yaml_str)
    for tag in ("binary", "omap", "pairs", "set"):
        register(f"tag:yaml.org,2002:{tag}", JsonConstructor.refuse)
    register(None, JsonConstructor.refuse)  # any other tag, Python ones included
    return JsonConstructor


def _assemble_loader(composer: Any, constructor: Any) -> type:
    from yaml.composer import Composer
    from yaml.resolver import Resolver

    try:
        from yaml.cyaml import CParser  # type: ignore[attr-defined]
    except ImportError:  # PyYAML built without libyaml
        from yaml.parser import Parser
        from yaml.reader import Reader
        from yaml.scanner import Scanner

        class PyLoader(Reader, Scanner, Parser, composer, constructor, Resolver):  # type: ignore[misc]
            def __init__(self, stream: str) -> None:
                Reader.__init__(self, stream)
                Scanner.__init__(self)
                Parser.__init__(self)
                composer.__init__(self)
                constructor.__init__(self)
                Resolver.__init__(self)

        return PyLoader

    # libyaml parses (fast); the Python composer builds the nodes so it can bound them.
    class CLoader(CParser, composer, constructor, Resolver):  # type: ignore[misc]
        get_single_node = Composer.get_single_node
        compose_document = Composer.compose_document
        compose_node = composer.compose_node

        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            composer.__init__(self)
            constructor.__init__(self)
            Resolver.__init__(self)

    return CLoader


def _parse_yaml(text: str) -> _Doc:
    import yaml

    loader = _yaml_loader_class()(text)
    try:
        root = loader.get_single_node()
        value = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.problem and exc.context:
            problem = f"{exc.problem} ({exc.context})"
        raise _Problem(
            f"invalid YAML: {formats.printable(problem)}", mark.line + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:  # reader errors carry no mark
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _Problem(f"invalid YAML: {formats.printable(first)}") from None
    except RecursionError:
        raise _Problem("invalid YAML: nesting is too deep to read") from None
    except ValueError:  # int() over sys.get_int_max_str_digits()
        raise _Problem("invalid YAML: a number has too many digits") from None
    finally:
        loader.dispose()
    if value is None:
        raise _Problem("file is empty")

    def locate(parts: Sequence[PathPart]) -> int | None:
        return _yaml_line(root, parts)

    doc = _Doc(value, locate)
    if loader.duplicates:
        where = _node_paths(root, {id(node) for node, _ in loader.duplicates})
        for node, key_node in loader.duplicates:
            doc.duplicates.append(
                (where.get(id(node), ()), key_node.value, key_node.start_mark.line + 1)
            )
    return doc


def _yaml_line(root: Any, parts: Sequence[PathPart]) -> int | None:
    from yaml.nodes import MappingNode, SequenceNode

    node, line = root, root.start_mark.line + 1
    for part in parts:
        if isinstance(node, MappingNode):
            # The last pair with the key wins, as in the constructed mapping.
            pair = next((p for p in reversed(node.value) if p[0].value == part), None)
            if pair is None:
                break
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return int(line)


def _node_paths(root: Any, targets: set[int]) -> dict[int, tuple[PathPart, ...]]:
    from yaml.nodes import MappingNode, SequenceNode

    found: dict[int, tuple[PathPart, ...]] = {}
    stack: list[tuple[Any, tuple[PathPart, ...]]] = [(root, ())]
    visited: set[int] = set()
    while stack:
        node, parts = stack.pop()
        if id(node) in visited:  # aliases share nodes
            continue
        visited.add(id(node))
        if id(node) in targets:
            found[id(node)] = parts
        if isinstance(node, MappingNode):
            stack.extend((v, (*parts, k.value)) for k, v in node.value)
        elif isinstance(node, SequenceNode):
            stack.extend((v, (*parts, i)) for i, v in enumerate(node.value))
    return found


# --- schema checks (jsonschema) --------------------------------------------------------------

_validators: dict[str, Any] = {}


def _shape_validator(shape: str) -> Any:
    """The compiled validator of an entry shape, from the packaged schemas (built once)."""
    if shape in _validators:
        return _validators[shape]
    from importlib.resources import files

    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    folder = files("toolfind") / "schemas"
    schemas = [
        json.loads((folder / name).read_text(encoding="utf-8"))
        for name in set(_SCHEMA_FILES.values())
    ]
    # No `retrieve`: an unknown reference fails instead of being fetched.
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas
    )
    for name in _SCHEMA_FILES:
        ref = _NATIVE_TOOL_REF if name == "native" else f"urn:toolfind:schema:{name}"
        _validators[name] = Draft202012Validator({"$ref": ref}, registry=registry)
    return _validators[shape]


def _meta_validator(schema: Mapping[str, Any]) -> Any:
    """A validator for ``schema`` itself: the meta-schema its ``$schema`` names (2020-12 default)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    declared = schema.get("$schema")
    cls: Any = Draft202012Validator
    if isinstance(declared, str):
        try:
            cls = validator_for(schema, default=Draft202012Validator)
        except (ValueError, TypeError, AttributeError):  # not a URI jsonschema can parse
            cls = Draft202012Validator
    key = f"meta:{cls.__name__}"
    if key not in _validators:
        # The bundled meta-schemas only: validating a schema never fetches anything.
        _validators[key] = cls(cls.META_SCHEMA, registry=REGISTRY)
    return _validators[key]


def _first_error(validator: Any, instance: Any) -> tuple[tuple[PathPart, ...], str] | None:
    from jsonschema.exceptions import best_match

    try:
        error = best_match(validator.iter_errors(instance))
    except RecursionError:
        return (), "nested too deeply to check"
    if error is None:
        return None
    message = error.message
    if len(message) > 200:
        message = message.replace(repr(error.instance), short_repr(error.instance))
    if len(message) > 300:
        message = message[:299] + "…"
    return tuple(error.absolute_path), formats.printable(message)


_SCHEMA_KEYS: Final = {
    # shape: (where the input schema is, where the output schema is)
    "openai": (("function", "parameters"), None),
    "openai-responses": (("parameters",), None),
    "function": (("parameters",), None),
    "native": (("parameters",), ("output_schema",)),
    "anthropic": (("input_schema",), None),
    "mcp": (("inputSchema",), ("outputSchema",)),
}


def _check_schemas(entry: Mapping[str, Any], shape: str, tool: Tool, source: Source) -> None:
    """Check the entry against its shape's schema and its JSON Schemas against the meta-schema.

    Run after ``tool_from_entry`` succeeded (``_reduced_entry`` relies on its checks).
    Raises ``EntryError`` for the first problem. jsonschema runs only for what the
    hand-written rules (``_fits_shape``, ``_surely_valid_schema``) cannot vouch for.
    """
    if not _fits_shape(entry, shape):
        validator = _shape_validator(shape)
        if not _memo_valid(validator, shape, _reduced_entry(entry)):
            problem = _first_error(validator, entry)
            if problem is not None:
                raise EntryError(problem[1], source, problem[0])
    if shape == "gemini":
        params_at: tuple[PathPart, ...] = (
            ("parametersJsonSchema",) if "parametersJsonSchema" in entry else ("parameters",)
        )
        output_at: tuple[PathPart, ...] | None = (
            ("responseJsonSchema",) if "responseJsonSchema" in entry else ("response",)
        )
    else:
        params_at, output_at = _SCHEMA_KEYS[shape]
    checks = [(params_at, tool.parameters)]
    if tool.output_schema is not None and output_at is not None:
        checks.append((output_at, tool.output_schema))
    for at, schema in checks:
        if _surely_valid_schema(schema):
            continue
        problem = _meta_problem(schema)
        if problem is not None:
            raise EntryError(problem[1], source, (*at, *problem[0]))


# Validating with jsonschema costs ~0.4 ms per entry and ~7 ms per schema against the
# 2020-12 meta-schema: far too slow for a 10,000-tool cold build. So validity is decided on
# reduced copies that keep everything the schemas constrain and drop what they do not
# (free text, names already checked by formats, subschemas checked on their own), and is
# memoised: catalogs repeat the same shapes over and over. Only an invalid entry is then
# validated in full, for its message.
_memo: dict[tuple[str, str], bool] = {}
_MEMO_LIMIT: Final = 100_000

_ENTRY_SCHEMA_KEYS: Final = formats.SCHEMA_KEYS
_ENTRY_KEYS: Final = frozenset(
    {
        *_ENTRY_SCHEMA_KEYS,
        *formats.METADATA_KEYS,
        "type",
        "function",
        "name",
        "title",
        "description",
        "strict",
        "defer_loading",
        "cache_control",
        "annotations",
        "behavior",
    }
)
_SUBSCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
_SUBSCHEMA_LISTS: Final = frozenset({"prefixItems", "allOf", "anyOf", "oneOf", "items"})
_SUBSCHEMA_ONE: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "additionalItems",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_FREE_TEXT: Final = frozenset({"description", "title", "$comment", "pattern", "$ref", "format"})
_COUNTS: Final = frozenset(
    {
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    }
)
_BOUNDS: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def _memo_valid(validator: Any, kind: str, instance: Any) -> bool:
    key = (kind, json.dumps(instance, sort_keys=True))
    valid = _memo.get(key)
    if valid is None:
        try:
            valid = bool(validator.is_valid(instance))
        except RecursionError:
            valid = False
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[key] = valid
    return valid


def _reduced_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """What the shape schemas see of an entry, with per-tool values replaced by placeholders."""
    out: dict[str, Any] = {}
    for key, value in entry.items():
        if key not in _ENTRY_KEYS:
            continue  # no shape schema constrains unknown keys
        if key in _ENTRY_SCHEMA_KEYS and isinstance(value, Mapping):
            value = {}  # only "an object" here; the meta-schema check covers the content
        elif key in ("description", "title", "search_hint") and isinstance(value, str):
            value = ""
        elif key in ("name", "namespace") and isinstance(value, str):
            value = "n"  # formats already enforced the name/namespace rules
        elif key in ("tags", "aliases") and isinstance(value, list):
            value = _placeholders(value, str, "t")
        elif isinstance(value, bool):
            value = False
        elif key == "annotations" and isinstance(value, Mapping):
            value = {k: False if isinstance(v, bool) else v for k, v in value.items()}
        elif key == "function" and isinstance(value, Mapping):
            value = _reduced_entry(value)
        out[key] = value
    return out


def _placeholders(values: list[Any], kind: type, placeholder: Any) -> list[Any]:
    """``[placeholder]`` for a non-empty list of distinct ``kind`` values, else ``values``.

    The schemas ask of such lists only the item type, non-emptiness and uniqueness.
    """
    if not values or not all(type(v) is kind for v in values):
        return values
    if kind is str and len(set(values)) != len(values):
        return values
    return [placeholder]


def _shallow(node: Mapping[str, Any]) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """A schema node as the meta-schema sees it, and its subschemas (checked on their own).

    Subschemas become ``{}``, and free text, property names, numbers and other per-tool
    values become placeholders that the meta-schema accepts or refuses exactly as it would
    the originals.
    """
    out: dict[str, Any] = {}
    children: list[Mapping[str, Any]] = []

    def sub(value: Any) -> Any:
        if isinstance(value, Mapping):
            children.append(value)
            return {}
        return value

    for key, value in node.items():
        if key in _FREE_TEXT and isinstance(value, str):
            value = ""
        elif key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            subs = [sub(v) for v in value.values()]
            value = {} if all(s == {} for s in subs) else {str(i): s for i, s in enumerate(subs)}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            value = _placeholders([sub(v) for v in value], dict, {})
        elif key in _SUBSCHEMA_ONE and isinstance(value, Mapping):
            value = sub(value)
        elif key in ("default", "const"):
            value = None  # any JSON value is allowed
        elif key == "examples" and isinstance(value, list):
            value = []
        elif key in ("required", "enum") and isinstance(value, list):
            value = _placeholders(value, str, "")
        elif key in _COUNTS and type(value) is int and value >= 0:
            value = 0
        elif key in _BOUNDS and type(value) in (int, float):
            value = 0
        out[key] = value
    return out, children


def _meta_problem(schema: Mapping[str, Any]) -> tuple[tuple[PathPart, ...], str] | None:
    """The first way ``schema`` breaks its meta-schema, or None."""
    validator = _meta_validator(schema)
    kind = type(validator).__name__
    stack = [schema]
    while stack:
        shallow, children = _shallow(stack.pop())
        if not _memo_valid(validator, kind, shallow):
            return _first_error(validator, schema) or ((), "is not a valid JSON Schema")
        stack.extend(children)
    return None


# --- schema checks without jsonschema ----------------------------------------------------
#
# Importing jsonschema costs ~0.3 s, and even memoised (above) the checks cost ~0.1 ms per
# entry, yet nearly every entry of a real catalog is well formed. So entries and schemas are
# first checked by hand-written rules that answer only "certainly valid" (True) or "cannot
# tell" (False). Only "cannot tell" goes on to jsonschema, which then decides and words the
# message, so every finding is still jsonschema's own. The rules cover the common keys and
# keywords and leave everything unusual to jsonschema; they must never accept what jsonschema
# refuses (tests/test_catalog.py checks them against jsonschema on random entries and schemas).

Rule = Callable[[Any], bool]


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_bool(value: Any) -> bool:
    return type(value) is bool


def _is_object(value: Any) -> bool:
    return type(value) is dict


def _is_str_or_null(value: Any) -> bool:
    return value is None or type(value) is str


def _is_bool_or_null(value: Any) -> bool:
    return value is None or type(value) is bool


def _is_object_or_null(value: Any) -> bool:
    return value is None or type(value) is dict


def _is_name(value: Any) -> bool:
    """native-catalog.schema.json's ``name``: a string of 1 to 256 characters."""
    return type(value) is str and 0 < len(value) <= 256


def _is_names(value: Any) -> bool:
    return type(value) is list and all(_is_name(v) for v in value)


def _is_tags(value: Any) -> bool:
    """native-catalog.schema.json's ``tags``: strings of 1 to 64 characters."""
    return type(value) is list and all(type(v) is str and 0 < len(v) <= 64 for v in value)


_NAMESPACE_PATTERN: Final = re.compile(r"^[^\s/:]{1,64}$")  # native-catalog.schema.json's


def _is_namespace(value: Any) -> bool:
    # re.search, as jsonschema applies "pattern" (so `$` also matches before a final "\n").
    return type(value) is str and _NAMESPACE_PATTERN.search(value) is not None


def _is_function_type(value: Any) -> bool:
    return type(value) is str and value == "function"


def _is_custom_type(value: Any) -> bool:
    return type(value) is str and value == "custom"


_ANNOTATION_RULES: Final[Mapping[str, Rule]] = {
    "title": _is_str,
    "readOnlyHint": _is_bool,
    "destructiveHint": _is_bool,
    "idempotentHint": _is_bool,
    "openWorldHint": _is_bool,
}


def _is_annotations(value: Any) -> bool:
    return _fits(value, _ANNOTATION_RULES, frozenset())


_METADATA_RULES: Final[Mapping[str, Rule]] = {
    "namespace": _is_namespace,
    "tags": _is_tags,
    "search_hint": _is_str,
    "defer": _is_bool,
    "enabled": _is_bool,
    "aliases": _is_names,
}
_FUNCTION_RULES: Final[Mapping[str, Rule]] = {
    "name": _is_name,
    "description": _is_str,
    "parameters": _is_object,
}
_OPENAI_FUNCTION_RULES: Final[Mapping[str, Rule]] = {**_FUNCTION_RULES, "strict": _is_bool_or_null}


def _is_openai_function(value: Any) -> bool:
    return _fits(value, _OPENAI_FUNCTION_RULES, frozenset({"name"}))


#: Per shape, as its packaged schema says: the rule of each key it constrains (the toolfind
#: metadata keys included, as every schema's ``allOf``), and the keys it requires.
_SHAPE_RULES: Final[Mapping[str, tuple[Mapping[str, Rule], frozenset[str]]]] = {
    "function": ({**_METADATA_RULES, **_FUNCTION_RULES}, frozenset({"name"})),
    "native": (
        {
            **_METADATA_RULES,
            **_FUNCTION_RULES,
            "title": _is_str,
            "output_schema": _is_object,
            "annotations": _is_annotations,
        },
        frozenset({"name"}),
    ),
    "anthropic": (
        {
            **_METADATA_RULES,
            "type": _is_custom_type,
            "name": _is_name,
            "description": _is_str,
            "input_schema": _is_object,
            "defer_loading": _is_bool,
            "cache_control": _is_object_or_null,
        },
        frozenset({"name", "input_schema"}),
    ),
    "mcp": (
        {
            **_METADATA_RULES,
            "name": _is_name,
            "title": _is_str,
            "description": _is_str,
            "inputSchema": _is_object,
            "outputSchema": _is_object,
            "annotations": _is_annotations,
        },
        frozenset({"name", "inputSchema"}),
    ),
    "gemini": (
        {
            **_METADATA_RULES,
            **_FUNCTION_RULES,
            "parametersJsonSchema": _is_object,
            "response": _is_object,
            "responseJsonSchema": _is_object,
            "behavior": _is_str,
        },
        frozenset({"name"}),
    ),
    "openai-responses": (
        {
            **_METADATA_RULES,
            "type": _is_function_type,
            "name": _is_name,
            "description": _is_str_or_null,
            "parameters": _is_object,
            "strict": _is_bool_or_null,
        },
        frozenset({"type", "name"}),
    ),
    "openai": (
        {**_METADATA_RULES, "type": _is_function_type, "function": _is_openai_function},
        frozenset({"type", "function"}),
    ),
}


def _fits(value: Any, rules: Mapping[str, Rule], required: frozenset[str]) -> bool:
    """Whether ``value`` is an object with the ``required`` keys whose keys pass their rules.

    Keys without a rule are accepted, as the packaged schemas accept unknown keys.
    """
    if type(value) is not dict or not value.keys() >= required:
        return False
    for key, item in value.items():
        rule = rules.get(key)
        if rule is not None and not rule(item):
            return False
    return True


def _fits_shape(entry: Any, shape: str) -> bool:
    """True when ``entry`` certainly passes its shape's packaged schema (see ``_SHAPE_RULES``)."""
    rules = _SHAPE_RULES.get(shape)
    return rules is not None and _fits(entry, *rules)


_SIMPLE_TYPES: Final = frozenset(
    {"array", "boolean", "integer", "null", "number", "object", "string"}
)
_STRING_TYPE: Final = frozenset({str})

#: A keyword's rule: whether its value certainly passes the meta-schema. A rule for a keyword
#: that holds subschemas also appends the object ones to the list, to be checked in turn.
KeywordRule = Callable[[Any, list[dict[str, Any]]], bool]


def _rule_text(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is str


def _rule_flag(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is bool


def _rule_count(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is int and value >= 0


def _rule_number(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is int or type(value) is float


def _rule_positive(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return (type(value) is int or type(value) is float) and value > 0


def _rule_array(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is list


def _rule_anything(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return True


def _rule_types(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    """A simple type, or a non-empty array of distinct simple types."""
    if type(value) is str:
        return value in _SIMPLE_TYPES
    return _distinct_strings(value) and len(value) > 0 and _SIMPLE_TYPES.issuperset(value)


def _rule_names(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return _distinct_strings(value)


def _rule_name_lists(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is dict and all(_distinct_strings(v) for v in value.values())


def _rule_subschema(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return _subschemas((value,), subschemas)


def _rule_subschema_map(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is dict and _subschemas(value.values(), subschemas)


def _rule_subschema_list(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is list and len(value) > 0 and _subschemas(value, subschemas)


def _subschemas(values: Iterable[Any], subschemas: list[dict[str, Any]]) -> bool:
    """Whether every value is a schema: ``true``/``false``, or an object (queued for checking)."""
    for value in values:
        if type(value) is dict:
            subschemas.append(value)
        elif type(value) is not bool:
            return False
    return True


def _distinct_strings(value: Any) -> bool:
    return (
        type(value) is list
        and _STRING_TYPE.issuperset(map(type, value))  # all strings, checked in C
        and len(set(value)) == len(value)
    )


#: The rule of each keyword the fast check decides. Each is the keyword's rule in both the
#: Draft 2020-12 and the Draft 7 meta-schemas, or stricter; a keyword of only one of them (a
#: ``$defs`` under Draft 7, say) is still held to its rule, as ``_shallow`` holds it.
_KEYWORD_RULES: Final[Mapping[str, KeywordRule]] = {
    **dict.fromkeys(
        ("description", "title", "$comment", "pattern", "format", "$ref", "$schema"), _rule_text
    ),
    **dict.fromkeys(("contentEncoding", "contentMediaType"), _rule_text),
    "type": _rule_types,
    "required": _rule_names,
    "dependentRequired": _rule_name_lists,
    "enum": _rule_array,
    "examples": _rule_array,
    "const": _rule_anything,
    "default": _rule_anything,
    **dict.fromkeys(_SUBSCHEMA_MAPS - {"dependencies"}, _rule_subschema_map),
    **dict.fromkeys(_SUBSCHEMA_LISTS - {"items"}, _rule_subschema_list),
    **dict.fromkeys(_SUBSCHEMA_ONE, _rule_subschema),
    **dict.fromkeys(_COUNTS, _rule_count),
    **dict.fromkeys(_BOUNDS, _rule_number),
    "multipleOf": _rule_positive,
    **dict.fromkeys(("uniqueItems", "readOnly", "writeOnly", "deprecated"), _rule_flag),
}
#: Every keyword either meta-schema (with its vocabularies) constrains. Those without a rule
#: above (``$id``, ``$anchor``, ``dependencies``, ...) are left to jsonschema; any other key
#: is no keyword, and the meta-schemas accept any value for it.
_META_KEYWORDS: Final = frozenset(
    {
        *_KEYWORD_RULES,
        "$id",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "dependencies",
        "$recursiveAnchor",
        "$recursiveRef",
    }
)
#: ``$schema`` values naming the meta-schemas the rules follow: Draft 2020-12 (also the
#: default of ``_meta_validator``) and Draft 7 (which MCP servers built with zod declare).
_RULED_DIALECTS: Final = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-07/schema#",
    }
)


def _surely_valid_schema(schema: Mapping[str, Any]) -> bool:
    """True when ``_meta_problem(schema)`` is certainly None, decided without jsonschema.

    Visits the subschemas ``_meta_problem`` visits (``_shallow``'s children) and holds each
    keyword to its rule in ``_KEYWORD_RULES``; False ("cannot tell") for anything else, a
    ``$schema`` other than Draft 2020-12 or Draft 7 included.
    """
    if type(schema) is not dict:
        return False
    declared = schema.get("$schema")
    if declared is not None and not (type(declared) is str and declared in _RULED_DIALECTS):
        return False
    rule_of = _KEYWORD_RULES.get
    stack: list[dict[str, Any]] = [schema]
    while stack:
        for key, value in stack.pop().items():
            rule = rule_of(key)
            if rule is None:
                if key in _META_KEYWORDS:
                    return False
            elif not rule(value, stack):
                return False
    return True


# --- the fast path: a well-formed entry read and checked in one pass -------------------------
#
# Reading an entry (formats.tool_from_entry), then checking it (_check_schemas) walks each of
# its schemas three times and calls a function per key, which made loading a 10,000-tool
# catalog take several times longer than parsing it. ``_fast_tool`` reads a well-formed entry
# of the common shapes in one pass over its keys and one walk of each schema, and answers
# only "this Tool, certainly the one the general path builds, with no finding" or "cannot
# tell" (-1); "cannot tell" goes the general way, which decides and words any finding. So
# it holds every value at least as strictly as formats (its reading checks), ``_fits_shape``
# and ``_surely_valid_schema`` do (tests/test_fast_load.py checks that on random entries).
# The walk also counts the entry's strings, for ``_Doc.quotes``.

#: What ``_fast_fields`` does with each key of an entry (or of an OpenAI ``function``), per
#: shape; a key without an action is read by no one and constrained by no rule: only counted.
_FAST_BODY: Final[Mapping[str, str]] = {
    "name": "name",
    "description": "description",
    "title": "title",
    "annotations": "annotations",
    "output_schema": "output",
}
_FAST_METADATA: Final[Mapping[str, str]] = {key: key for key in formats.METADATA_KEYS}
_FAST_SPECS: Final[Mapping[str, Mapping[str, str]]] = {
    "function": {**_FAST_METADATA, **_FAST_BODY, "parameters": "parameters"},
    "native": {**_FAST_METADATA, **_FAST_BODY, "parameters": "parameters"},
    "anthropic": {
        **_FAST_METADATA,
        **_FAST_BODY,
        "input_schema": "parameters",
        "type": "custom",
        "defer_loading": "flag",
        "cache_control": "object-or-null",
    },
    "mcp": {
        **_FAST_METADATA,
        **{k: v for k, v in _FAST_BODY.items() if k != "output_schema"},
        "inputSchema": "parameters",
        "outputSchema": "output",
    },
    "openai-responses": {
        **_FAST_METADATA,
        **_FAST_BODY,
        "parameters": "parameters",
        "type": "function-type",
        "strict": "strict",
    },
    "openai": {**_FAST_METADATA, "type": "function-type", "function": "function"},
}
#: The body of an OpenAI tool (its ``function``).
_FAST_OPENAI_FUNCTION: Final[Mapping[str, str]] = {
    **_FAST_BODY,
    "parameters": "parameters",
    "strict": "strict",
}
_HINTS: Final = frozenset(_ANNOTATION_RULES) - {"title"}
#: Keys of an entry of shape "function" that decide nothing else in detect_entry.
_FUNCTION_KEYS: Final = frozenset({"name", "description", "parameters", "title", "annotations"})
#: Per shape, the keys of the commonest entries (of an OpenAI tool's ``function``), which
#: ``_fast_plain`` reads without a loop, and the key of the input schema among them (which
#: they must have: every shape's schema requires it or detect_entry found it).
_PLAIN: Final[Mapping[str, tuple[frozenset[str], str]]] = {
    "function": (frozenset({"name", "description", "parameters"}), "parameters"),
    "anthropic": (frozenset({"name", "description", "input_schema"}), "input_schema"),
    "mcp": (frozenset({"name", "description", "inputSchema"}), "inputSchema"),
    "openai-responses": (
        frozenset({"type", "name", "description", "parameters", "strict"}),
        "parameters",
    ),
    "openai": (frozenset({"name", "description", "parameters", "strict"}), "parameters"),
}
#: The ``_PLAIN`` shapes an entry without a "type" has, in the order detect_entry tests them
#: (keys of a bare function first: one without "inputSchema" is no MCP tool).
_UNTYPED_PLAIN: Final = tuple(_PLAIN[shape] for shape in ("function", "mcp", "anthropic"))
_MAX_NAME: Final = formats.MAX_NAME_LENGTH
_MAX_DESCRIPTION: Final = formats.MAX_DESCRIPTION_LENGTH
#: What ``_fast_fields`` found, by action, before it looks: what the general path reads for
#: a missing key (None where ``_fast_tool`` decides).
_FOUND: Final[dict[str, Any]] = {
    "name": None,
    "description": "",
    "parameters": None,
    "output": None,
    "title": None,
    "annotations": None,
    "namespace": None,
    "tags": None,
    "search_hint": "",
    "defer": False,
    "enabled": True,
    "aliases": None,
}


def _fast_tool(
    entry: dict[str, Any],
    defaults: Mapping[str, Any],
    namespace: str,
    source: Source,
    tools: list[Tool],
) -> int:
    """Append to ``tools`` the ``Tool`` the general path reads from ``entry`` and return the
    number of strings in the entry (keys included), when it is certainly well formed; else
    return -1 ("cannot tell"), appending nothing."""
    shape = defaults.get("shape")
    if shape is None:
        if "type" in entry:
            shape = formats.detect_entry(entry)
        else:
            # detect_entry's answer for an entry without a "type", without its every test
            # (one it calls Gemini, for upper-case types in "parameters", fails the schema
            # walk here); the commonest entries go straight to _fast_plain.
            keys = entry.keys()
            for plain_keys, params_key in _UNTYPED_PLAIN:
                if keys <= plain_keys:
                    return _fast_plain(entry, params_key, defaults, namespace, source, entry, tools)
            if "inputSchema" in entry:
                shape = "mcp"
            elif "input_schema" in entry:
                shape = "anthropic"
            elif keys <= _FUNCTION_KEYS:
                shape = "function"
            else:
                shape = formats.detect_entry(entry)
    plain = _PLAIN.get(shape)
    if plain is not None:
        body: Any = entry
        if shape == "openai":  # {"type": "function", "function": {...}} and nothing else
            body = entry["function"] if len(entry) == 2 else None
        if type(body) is dict and body.keys() <= plain[0]:
            return _fast_plain(body, plain[1], defaults, namespace, source, entry, tools)
    spec = _FAST_SPECS.get(shape)
    if spec is None:  # gemini (whose schemas are converted) and built-in tools
        return -1
    found = _FOUND.copy()
    strings = _fast_fields(entry, spec, found)
    name = found["name"]
    if strings < 0 or name is None:
        return -1
    tags = found["tags"]
    file_tags = defaults.get("tags", ())
    if tags or file_tags:
        tags = tuple(dict.fromkeys((*file_tags, *tags) if tags else file_tags))
    parameters = found["parameters"]
    aliases = found["aliases"]
    tool = Tool(
        name,
        found["description"],
        {"type": "object", "properties": {}} if parameters is None else parameters,
        found["namespace"] or defaults.get("namespace") or namespace,
        tags or (),
        found["search_hint"],
        found["defer"],
        found["enabled"],
        found["annotations"] or {},
        () if aliases is None else tuple(aliases),
        found["title"],
        found["output"],
        source,
        entry,
    )
    tools.append(tool)
    return strings


def _fast_plain(
    body: dict[str, Any],
    params_key: str,
    defaults: Mapping[str, Any],
    namespace: str,
    source: Source,
    entry: dict[str, Any],
    tools: list[Tool],
) -> int:
    """``_fast_tool`` for a ``body`` (the entry, or an OpenAI tool's ``function``) with only
    the keys ``_PLAIN`` lists: no metadata, title, annotations or output schema."""
    name = body.get("name")
    description = body.get("description", "")
    parameters = body.get(params_key)
    strict = body.get("strict")
    if (
        type(name) is not str
        or not _plain_name(name)
        or type(description) is not str
        or len(description) > _MAX_DESCRIPTION
        or not (strict is None or type(strict) is bool)
    ):
        return -1
    if type(parameters) is dict:
        count = _fast_schema(parameters)
        if count < 0:
            return -1
    elif parameters is None and params_key not in body and params_key == "parameters":
        parameters, count = {"type": "object", "properties": {}}, 0  # none, as formats says
    else:
        return -1
    # The keys, then the string values: the name, the description, a "type" ("function").
    strings = len(body) + count + 1 + ("description" in body) + ("type" in body)
    if body is not entry:  # an OpenAI tool: "type", "function" and "function"
        strings += 3
    file_tags = defaults.get("tags", ())
    tool = Tool(
        name,
        description,
        parameters,
        defaults.get("namespace") or namespace,
        tuple(dict.fromkeys(file_tags)) if file_tags else (),
        "",
        False,
        True,
        {},
        (),
        None,
        None,
        source,
        entry,
    )
    tools.append(tool)
    return strings


def _fast_fields(obj: dict[str, Any], spec: Mapping[str, str], found: dict[str, Any]) -> int:
    """Check and read the keys of ``obj`` as ``spec`` says, into ``found`` (by action).

    Returns the number of strings in ``obj`` (keys included), or -1: "cannot tell".
    """
    strings = len(obj)
    for key, value in obj.items():
        kind = type(value)
        if kind is str:
            strings += 1
        action = spec.get(key)
        if action is None:
            if kind is dict or kind is list:
                count = _value_strings(value, 0)
                if count < 0:
                    return -1
                strings += count
            continue
        if action == "description":
            if kind is not str or len(value) > _MAX_DESCRIPTION:
                return -1
        elif action == "name":
            if kind is not str or not _plain_name(value):
                return -1
        elif action == "parameters" or action == "output":
            count = _fast_schema(value) if kind is dict else -1
            if count < 0:
                return -1
            strings += count
        else:
            count = _fast_other(action, value, found)
            if count < 0:
                return -1
            strings += count
            if action == "function":
                continue  # its keys were read into `found`
        found[action] = value
    return strings


def _fast_other(action: str, value: Any, found: dict[str, Any]) -> int:
    """``_fast_fields`` for the less common keys: the strings inside ``value``, or -1."""
    kind = type(value)
    if action == "title" or action == "search_hint":
        return 0 if kind is str else -1
    if action == "function-type":
        return 0 if kind is str and value == "function" else -1
    if action == "function":
        return _fast_fields(value, _FAST_OPENAI_FUNCTION, found) if kind is dict else -1
    if action == "annotations":
        return _fast_annotations(value) if kind is dict else -1
    if action == "tags":
        ok = kind is list and all(
            type(tag) is str and 0 < len(tag) <= formats.MAX_TAG_LENGTH for tag in value
        )
        return len(value) if ok else -1
    if action == "namespace":
        return 0 if kind is str and _plain_namespace(value) else -1
    if action == "aliases":
        ok = kind is list and all(type(alias) is str and _plain_name(alias) for alias in value)
        return len(value) if ok else -1
    if action == "defer" or action == "enabled" or action == "flag":
        return 0 if kind is bool else -1
    if action == "strict":
        return 0 if kind is bool or value is None else -1
    if action == "custom":
        return 0 if kind is str and value == "custom" else -1
    if action == "object-or-null":
        return _value_strings(value, 0) if kind is dict else 0 if value is None else -1
    raise AssertionError(action)  # pragma: no cover - every action of _FAST_SPECS is above


def _plain_name(name: str) -> bool:
    """A name formats accepts and the schemas' 1 to 256 characters; printable, so without
    the control and format characters formats refuses (other unprintable ones: cannot tell)."""
    return len(name) <= _MAX_NAME and name.isprintable() and name.strip() != ""


def _plain_namespace(name: str) -> bool:
    # Printable characters include no whitespace but " ": formats' and the schema's rules.
    return (
        0 < len(name) <= formats.MAX_NAMESPACE_LENGTH
        and name.isprintable()
        and " " not in name
        and "/" not in name
        and ":" not in name
    )


def _fast_annotations(annotations: dict[str, Any]) -> int:
    """``_is_annotations`` (for every shape: stricter than some need), nesting as formats
    allows; the strings inside, or -1."""
    strings = len(annotations)
    for key, value in annotations.items():
        kind = type(value)
        if key in _HINTS:
            if kind is not bool:
                return -1
        elif kind is str:
            strings += 1
        elif key == "title":
            return -1
        elif kind is dict or kind is list:
            count = _value_strings(value, 1)
            if count < 0:
                return -1
            strings += count
    return strings


def _value_strings(value: dict[str, Any] | list[Any], depth: int) -> int:
    """The strings in a JSON object or array nested ``depth`` levels below a schema's top, or
    -1 when something in it is nested ``formats.MAX_SCHEMA_DEPTH`` levels or deeper."""
    if depth >= formats.MAX_SCHEMA_DEPTH:
        return -1
    if type(value) is dict:
        strings = len(value)
        children: Iterable[Any] = value.values()
    else:
        strings = 0
        children = value
    for child in children:
        kind = type(child)
        if kind is str:
            strings += 1
        elif kind is dict or kind is list:
            count = _value_strings(child, depth + 1)
            if count < 0:
                return -1
            strings += count
    return strings


_TEXT_KEYWORDS: Final = frozenset(k for k, rule in _KEYWORD_RULES.items() if rule is _rule_text)
_SCHEMA_MAP_KEYWORDS: Final = _SUBSCHEMA_MAPS - {"dependencies"}
_SCHEMA_LIST_KEYWORDS: Final = _SUBSCHEMA_LISTS - {"items"}
#: Keywords that take any value (whose nesting alone matters), and any array.
_VALUE_KEYWORDS: Final = frozenset({"const", "default"})
_ARRAY_KEYWORDS: Final = frozenset({"enum", "examples"})
#: Keywords the walk holds to a rule for a value of some type, and leaves to
#: ``_surely_valid_schema`` (by answering "cannot tell") for any other.
_RULED_OBJECT_KEYWORDS: Final = _META_KEYWORDS - _VALUE_KEYWORDS
_RULED_ARRAY_KEYWORDS: Final = _META_KEYWORDS - _VALUE_KEYWORDS - _ARRAY_KEYWORDS
#: Keywords whose value may not be a string ("type" apart: only some strings).
_NO_TEXT_KEYWORDS: Final = _RULED_OBJECT_KEYWORDS - _TEXT_KEYWORDS - {"type"}
#: The deepest a schema object may be for the walk to decide (one level short of what
#: ``formats._too_deep`` allows for its direct children: the walk never looks further).
_DEEPEST_NODE: Final = formats.MAX_SCHEMA_DEPTH - 2
#: ``_SIMPLE_TYPES`` as a tuple: ``in`` compares, so an unhashable value is just not in it.
_SIMPLE_TYPE_NAMES: Final = ("string", "integer", "number", "boolean", "object", "array", "null")
_NO_SUBSCHEMAS: Final[list[dict[str, Any]]] = []  # rules append only objects: never to it
_DICT_TYPE: Final = frozenset({dict})


def _fast_schema(schema: dict[str, Any]) -> int:
    """The strings in ``schema`` (keys included) when ``_surely_valid_schema`` accepts it and
    ``formats._too_deep`` does not refuse it; else -1. One walk for both."""
    if "$schema" in schema and not _ruled_dialect(schema["$schema"]):
        return -1
    return _schema_strings(schema, 0)


def _ruled_dialect(declared: Any) -> bool:
    """Whether a ``$schema`` value lets ``_surely_valid_schema`` decide (None: the default)."""
    return declared is None or (type(declared) is str and declared in _RULED_DIALECTS)


def _schema_strings(node: dict[str, Any], depth: int) -> int:
    """``_fast_schema`` of a schema object ``depth`` levels below the top."""
    if depth > _DEEPEST_NODE:
        return -1
    strings = len(node)
    for key, value in node.items():
        kind = type(value)
        if kind is str:
            strings += 1
            if key == "type":
                if value not in _SIMPLE_TYPES:
                    return -1
            elif key in _NO_TEXT_KEYWORDS:
                return -1
            continue
        if kind is dict:
            if key in _SCHEMA_MAP_KEYWORDS:
                strings += len(value)
                count = _subschemas_strings(value.values(), depth + 2)
            else:
                count = _schema_object_strings(key, value, depth)
        elif kind is list:
            if key == "required" and len(value) == 1 and type(value[0]) is str:
                strings += 1  # the commonest array, decided without a call
                continue
            count = _schema_list_strings(key, value, depth)
        else:
            count = 0 if _scalar_keyword(key, value) else -1
        if count < 0:
            return -1
        strings += count
    return strings


def _scalar_keyword(key: str, value: Any) -> bool:
    """``_schema_strings`` for a value that is no string, object or array."""
    rule = _KEYWORD_RULES.get(key)
    if rule is None:
        return key not in _META_KEYWORDS
    return rule(value, _NO_SUBSCHEMAS)


def _schema_object_strings(key: str, value: dict[str, Any], depth: int) -> int:
    """``_schema_strings`` for an object value (but a map of subschemas)."""
    if key in _SUBSCHEMA_ONE:
        return _schema_strings(value, depth + 1)
    if key in _RULED_OBJECT_KEYWORDS:
        return -1
    return _value_strings(value, depth + 1)


def _schema_list_strings(key: str, value: list[Any], depth: int) -> int:
    """``_schema_strings`` for an array value."""
    if key == "required":
        return len(value) if _distinct_strings(value) else -1
    if key in _SCHEMA_LIST_KEYWORDS:
        return _subschemas_strings(value, depth + 2) if value else -1
    if key == "type":
        return len(value) if _rule_types(value, _NO_SUBSCHEMAS) else -1
    if key in _RULED_ARRAY_KEYWORDS:
        return -1
    return _value_strings(value, depth + 1)


def _subschemas_strings(values: Iterable[Any], depth: int) -> int:
    """The strings in subschemas (objects or booleans) ``depth`` levels down, or -1."""
    if depth > _DEEPEST_NODE:
        return -1
    strings = 0
    for value in values:
        if type(value) is not dict:
            if type(value) is not bool:
                return -1
        # Most are a property's {"type": ..., "description": ...}: decided without a call.
        elif (
            len(value) == 2
            and value.get("type") in _SIMPLE_TYPE_NAMES
            and type(value.get("description")) is str
        ):
            strings += 4
        else:
            count = _schema_strings(value, depth)
            if count < 0:
                return -1
            strings += count
    return strings


# --- loading -----------------------------------------------------------------------------


def _stem_namespace(path: Path) -> str:
    """The namespace a file gives tools that name none: its stem, made a valid namespace."""
    stem = "".join("_" if c.isspace() or c in "/:" or not c.isprintable() else c for c in path.stem)
    return stem[: formats.MAX_NAMESPACE_LENGTH] or "default"


class _FileLoader:
    """Loads one file's tools; collects its findings."""

    def __init__(self, path: Path, check_schemas: bool) -> None:
        self.path = path
        self.file = str(path)
        self.check_schemas = check_schemas
        self.yaml = path.suffix.lower() in (".yaml", ".yml")
        self.namespace = _stem_namespace(path)  # for tools that name none (once, not per tool)
        self.tools: list[Tool] = []
        self.findings: list[Finding] = []

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
            text = _decode(_read(self.path, max_bytes))
        except _Problem as problem:
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
            if self.yaml and jsonl_index is None:
                doc = _parse_yaml(text)
            else:
                doc = _parse_json(text, jsonl_index, find_duplicates=False)
            if doc.reparse is not None and not self.load_unchecked(doc, jsonl_index):
                doc = doc.reparse()
        except _Problem as problem:
            line = problem.line if jsonl_index is None else jsonl_index + 1
            self.error(problem.message, line)
            return
        if doc.reparse is None:
            self.load_doc(doc, jsonl_index)

    def load_unchecked(self, doc: _Doc, jsonl_index: int | None) -> bool:
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
            and _DICT_TYPE.issuperset(map(type, value))
        ):
            # A list of entry objects (the common case; if some were Gemini `tools` items
            # instead, their keys go uncounted, and too few strings only cost a second parse).
            strings = 0
        else:
            strings = _strings_in(value, set(map(id, map(itemgetter(1), entries))))
        line = None if jsonl_index is None else jsonl_index + 1
        file, namespace, loaded = self.file, self.namespace, self.tools
        for pointer, entry, defaults in entries:
            if strings < 0:
                break
            source = Source(file, pointer, line)
            count = -1
            if type(entry) is dict:  # load_entry's fast path, without a call
                count = _fast_tool(entry, defaults, namespace, source, loaded)
            if count < 0:
                self.load_general(entry, defaults, source, doc)
                # An entry that is no object was counted with the rest of the document.
                count = _strings_in(entry) if type(entry) is dict else 0
            strings = -1 if count < 0 else strings + count
        if strings >= 0 and 2 * strings == doc.quotes:
            return True
        del self.tools[tools:], self.findings[findings:]
        return False

    def load_doc(self, doc: _Doc, jsonl_index: int | None) -> None:
        try:
            entries = formats.list_entries(doc.value)
        except CatalogError as exc:
            line = doc.locate(())
            self.findings.append(Finding(self.file, line, exc.path or "", "error", exc.message))
            self.error_duplicates(doc)
            return
        spoiled = self.error_duplicates(doc)
        if spoiled is None:
            return
        for pointer, entry, defaults in entries:
            if pointer in spoiled:
                continue
            if jsonl_index is not None:
                line = jsonl_index + 1
            elif self.yaml:  # a JSON entry's line is only looked up for a finding
                line = doc.locate(pointer_parts(pointer))
            else:
                line = None
            self.load_entry(entry, defaults, Source(self.file, pointer, line), doc)

    def error_duplicates(self, doc: _Doc) -> set[str] | None:
        """Report duplicate keys; the pointers of entries they spoil, None if the file is spoiled."""
        spoiled: set[str] = set()
        for parts, key, line in doc.duplicates:
            self.error(f"duplicate key {short_repr(key)}", line, parts)
        if not doc.duplicates:
            return spoiled
        try:
            pointers = [pointer for pointer, _, _ in formats.list_entries(doc.value)]
        except CatalogError:
            return None
        for parts, _, _ in doc.duplicates:
            owner = max(
                (p for p in pointers if tuple(parts[: len(pointer_parts(p))]) == pointer_parts(p)),
                key=len,
                default=None,
            )
            if owner is None:  # outside every entry: the file's structure is in doubt
                return None
            spoiled.add(owner)
        return spoiled

    def load_entry(
        self, entry: Any, defaults: Mapping[str, Any], source: Source, doc: _Doc
    ) -> None:
        """Load one entry: the fast way when it can tell, else the general way."""
        if (
            type(entry) is not dict
            or _fast_tool(entry, defaults, self.namespace, source, self.tools) < 0
        ):
            self.load_general(entry, defaults, source, doc)

    def load_general(
        self, entry: Any, defaults: Mapping[str, Any], source: Source, doc: _Doc
    ) -> None:
        """Load one entry the general way, which decides and words every finding."""
        shape = defaults.get("shape") or (
            formats.detect_entry(entry)
            if type(entry) is dict or isinstance(entry, Mapping)
            else None
        )
        try:
            tool = formats.tool_from_entry(
                entry,
                namespace=defaults.get("namespace") or self.namespace,
                tags=defaults.get("tags", ()),
                source=source,
                shape=shape,
            )
            if self.check_schemas and shape is not None:
                _check_schemas(entry, shape, tool, source)
        except EntryError as exc:
            # A provider's built-in tool is not a mistake, just nothing to index.
            severity: Severity = "warning" if shape == "builtin" else "error"
            self.error(exc.message, doc.locate(exc.full_parts), exc.full_parts, severity)
            return
        self.tools.append(tool)


def load(
    paths: Sequence[Path],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    check_schemas: bool = True,
) -> LoadResult:
    """Load every tool under ``paths`` (files or directories, see ``discover``).

    Bad files and entries become ``Finding``s (errors; skipped built-in tools and
    duplicates are warnings) and everything else still loads. A tool whose
    (namespace, name) was already loaded is skipped: the first in load order wins (paths in
    the order given, files within a directory sorted). ``check_schemas`` runs the packaged
    JSON Schemas and the JSON Schema meta-schema over every entry (the expensive part; the
    checks needed to build a correct ``Tool`` always run). ``LoadResult.files`` lists every
    catalog file found, loaded or not.

    Raises ``CatalogError`` only when a path does not exist.
    """
    files, findings = _discover(paths)
    tools: list[Tool] = []
    first: dict[tuple[str, str], Tool] = {}
    for path in files:
        loader = _FileLoader(path, check_schemas)
        loader.load(max_bytes)
        findings.extend(loader.findings)
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
            findings.append(
                _finding(
                    tool.source.file,
                    f"duplicate tool {tool.qualified_name!r}: {_where(winner.source)} was "
                    "loaded first and wins; this one is skipped",
                    "warning",
                    line=tool.source.line,
                    parts=pointer_parts(tool.source.pointer),
                )
            )
    return LoadResult(tools=tuple(tools), findings=tuple(findings), files=tuple(map(str, files)))


_tool_key: Final = attrgetter("namespace", "name")


def _where(source: Source) -> str:
    return f"{source.file}:{source.line}" if source.line else source.file


# --- lint --------------------------------------------------------------------------------


def lint(result: LoadResult) -> list[Finding]:
    """Warnings about loaded tools, for ``toolfind validate``.

    Missing or one-word descriptions, top-level parameters without a description, names MCP
    hosts reject (``^[a-zA-Z0-9_-]{1,64}$``), and control or invisible characters (zero-width,
    bidi controls, Unicode tag characters) in descriptions. Duplicate names are reported by
    ``load`` (it decides which one wins). Never raises.
    """
    findings: list[Finding] = []
    for tool in result.tools:
        findings.extend(_lint_tool(tool))
    return findings


def _lint_tool(tool: Tool) -> Iterable[Finding]:
    source = tool.source or Source("")
    entry = tool.original if isinstance(tool.original, Mapping) else {}
    shape = formats.detect_entry(entry) if entry else "native"
    base = pointer_parts(source.pointer)
    body: tuple[PathPart, ...] = (*base, "function") if shape == "openai" else base
    params_at = _SCHEMA_KEYS.get(shape, (("parameters",), None))[0]
    if shape == "openai":
        params_at = ("parameters",)
    if shape == "gemini" and "parametersJsonSchema" in entry:
        params_at = ("parametersJsonSchema",)

    def warn(message: str, parts: Sequence[PathPart]) -> Finding:
        return _finding(source.file, message, "warning", line=source.line, parts=parts)

    name = repr(tool.name)
    words = tool.description.split()
    if not words:
        yield warn(f"{name} has no description", base)
    elif len(words) == 1:
        yield warn(
            f"{name} has a one-word description; say what the tool does and when to use it",
            (*body, "description"),
        )
    if not (len(tool.name) <= 64 and set(tool.name) <= MCP_NAME_CHARS):
        yield warn(
            f"{name} is a name MCP hosts reject (allowed: ^[a-zA-Z0-9_-]{{1,64}}$)",
            (*body, "name"),
        )
    for at, text in _descriptions(tool, (*body, "description"), (*body, *params_at)):
        for index, char in formats.invisible_chars(text)[:1]:
            yield warn(
                f"description contains the invisible or control character "
                f"{formats.describe_char(char)} at index {index}",
                at,
            )
    properties = tool.parameters.get("properties")
    if isinstance(properties, Mapping):
        for param, schema in properties.items():
            if (
                isinstance(schema, Mapping)
                and "$ref" not in schema
                and not _text(schema.get("description"))
            ):
                yield warn(
                    f"parameter {param!r} of {name} has no description",
                    (*body, *params_at, "properties", param),
                )


def _descriptions(
    tool: Tool, description_at: tuple[PathPart, ...], params_at: tuple[PathPart, ...]
) -> Iterable[tuple[tuple[PathPart, ...], str]]:
    yield description_at, tool.description
    properties = tool.parameters.get("properties")
    if isinstance(properties, Mapping):
        for param, schema in properties.items():
            if isinstance(schema, Mapping) and isinstance(schema.get("description"), str):
                yield (*params_at, "properties", param, "description"), schema["description"]


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes, in hex. Raises ``OSError`` when it cannot be read."""
    with open(path, "rb") as f:
        import hashlib  # OpenSSL's binding: a warm run whose files did not change never hashes

        return hashlib.file_digest(f, "sha256").hexdigest()
