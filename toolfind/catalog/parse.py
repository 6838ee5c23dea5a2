"""Parse catalog files safely: bytes to text to a JSON value, with line numbers and duplicate keys.

Files over the size limit are not read and only regular files are opened; text is UTF-8
(with or without a BOM) or UTF-16 with a BOM. JSON refuses NaN, infinities and lone
surrogates; YAML is loaded safely (no Python or other non-JSON tags), aliases may add at most
``MAX_YAML_ALIAS_NODES`` nodes ("billion laughs"), and it nests at most ``MAX_YAML_DEPTH``
levels. yaml is imported only to parse YAML (see docs/CONTRACTS.md).

A JSON document can be parsed by ``json.loads`` alone (``find_duplicates=False``), which is
much faster; its repeated keys are then found by counting its strings (``_Doc.quotes``)
against those the loader meets, and ``_Doc.reparse`` parses it again looking for them.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from toolfind.catalog.discovery import _file_kind
from toolfind.catalog.paths import PathPart, json_path, printable

#: Nodes that YAML aliases may add in total before a file is refused ("billion laughs").
MAX_YAML_ALIAS_NODES: Final = 100_000
#: Deepest nesting of a YAML document (kept well inside Python's recursion limit).
MAX_YAML_DEPTH: Final = 200

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
            f"invalid YAML: {printable(problem)}", mark.line + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:  # reader errors carry no mark
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _Problem(f"invalid YAML: {printable(first)}") from None
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
