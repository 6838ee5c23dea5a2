"""Parse catalog files safely: bytes to text to a JSON value, with line numbers and duplicate keys.

Files over the size limit are not read and only regular files are opened; text is UTF-8
(with or without a BOM) or UTF-16 with a BOM. JSON refuses NaN, infinities and lone
surrogates; YAML is loaded by ``safe_yaml``, imported only to parse YAML.

A JSON document can be parsed by ``json.loads`` alone (``find_duplicates=False``), which is
much faster; its repeated keys are then found by counting its strings (``_Doc.quotes``)
against those the loader meets, and ``_Doc.reparse`` parses it again looking for them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final

from toolfind.catalog.paths import PathPart, json_path, printable
from toolfind.userfiles import FileProblem, read_capped

Locate = Callable[[Sequence[PathPart]], int | None]
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


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
    """The file's bytes (``userfiles.read_capped``: a FIFO or device that replaced a
    discovered file is refused before any read, never more than ``limit`` bytes)."""
    try:
        return read_capped(path, limit)
    except FileProblem as exc:
        if exc.too_big:
            raise _TooBig(_too_big(exc)) from None
        if exc.message.startswith("not a regular file"):
            raise _Problem(f"{exc.message}; skipped") from None
        raise _Problem(exc.message) from None


class _TooBig(_Problem):
    """A file over the size limit (the loader lists these: see ``LoadResult.oversized``)."""


def _too_big(exc: FileProblem) -> str:
    """The message for a file over the limit, with a limit that would do."""
    mib = -(-exc.size // (1 << 20)) + (1 if exc.grew else 0)  # rounded up (grew: may grow on)
    return f'{exc.message}; raise it with max_file_size = "{mib}MiB" in toolfind.toml'


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
    """A refused constant or number; ``args[0]`` is its text."""


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

    Without ``find_duplicates``, ``json.loads`` keeps the last of repeated keys without a word
    (see ``_Doc.reparse``); the value, and every problem raised, are the same either way.
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
        what = token = exc.args[0]
        if token.lstrip("-") not in ("NaN", "Infinity"):
            what = f"{token} overflows to infinity, which"
        raise _Problem(
            f"invalid JSON: {what} is not allowed (use null or a string)",
            at(_offset_outside_strings(text, token.lstrip("-"))),
        ) from None
    except RecursionError:
        raise _Problem("invalid JSON: nesting is too deep to read") from None
    except ValueError:  # int() over sys.get_int_max_str_digits()
        raise _Problem("invalid JSON: a number has too many digits") from None

    def locate(parts: Sequence[PathPart]) -> int | None:
        if jsonl_index is not None:  # a JSON Lines record: every path is on the record's line
            return line_offset + 1
        return at(_json_offset(text, parts))

    _refuse_lone_surrogates(text, value, locate)
    doc = _Doc(value, locate)
    if not find_duplicates:
        doc.reparse = lambda: _parse_json(text, jsonl_index)
        doc.quotes = _string_quotes(text)
    if repeated:
        where = _paths_of(value, {id(obj) for obj, _ in repeated}, _json_children)
        for obj, key in repeated:
            parts = where.get(id(obj), ())
            doc.duplicates.append((parts, key, locate((*parts, key))))
    return doc


def _string_quotes(text: str) -> int:
    """Twice the number of strings in valid JSON ``text``: its quotes that no ``\\`` escapes.

    Backslashes outside strings are not JSON, and inside them every run of them starts an
    escape; so dropping each ``\\\\`` pair from the left leaves ``\\"`` exactly where a quote
    is escaped.
    """
    if "\\" not in text:
        return text.count('"')
    text = text.replace("\\\\", "")  # the text itself when it has none: no copy
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
    """Refuse the first unpaired surrogate in a key or string: json accepts ``"\\ud800"``, but
    no such string can be written as UTF-8, so printing it would crash every command."""
    # Only an escape can make a lone surrogate; "\\" first, as one character is found fastest.
    if "\\" not in text or ("\\ud" not in text and "\\uD" not in text):
        return
    stack: list[tuple[Any, tuple[PathPart, ...]]] = [(value, ())]
    while stack:
        node, parts = stack.pop()
        if isinstance(node, str):
            strings = [(parts, node)]
        else:
            strings = [((*parts, key), key) for key in node] if isinstance(node, dict) else []
            stack.extend(reversed([(v, (*parts, k)) for k, v in _json_children(node)]))
        for at, string in strings:  # a dict's keys before its values: document order
            bad = next((c for c in string if "\ud800" <= c <= "\udfff"), None)
            if bad is not None:
                raise _Problem(
                    f"invalid JSON: the string at {json_path(at) or '$'} has the unpaired "
                    f"surrogate \\u{ord(bad):04x}; strings must be valid Unicode",
                    locate(at),
                )


def _offset_outside_strings(text: str, token: str) -> int | None:
    """Offset of the first ``token`` outside JSON strings (for NaN/Infinity's line)."""
    i = 0
    while True:
        hit, quote = text.find(token, i), text.find('"', i)
        if hit < 0 or quote < 0 or hit < quote:
            return hit if hit >= 0 else None
        # The string opens before the refused constant, so json has read it: it is valid.
        i = _scanstring(text, quote + 1)[1]


def _json_offset(text: str, parts: Sequence[PathPart]) -> int | None:
    """Offset of the deepest value along ``parts`` in JSON ``text``; only run for findings."""
    decoder = json.JSONDecoder()

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
                    key, i = _scanstring(text, i + 1)
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


def _paths_of(
    root: Any, targets: set[int], children: Callable[[Any], Iterable[tuple[PathPart, Any]]]
) -> dict[int, tuple[PathPart, ...]]:
    """The path of each node whose ``id`` is in ``targets`` (iterative walk)."""
    found: dict[int, tuple[PathPart, ...]] = {}
    stack: list[tuple[Any, tuple[PathPart, ...]]] = [(root, ())]
    visited: set[int] = set()
    while stack and len(found) < len(targets):
        node, parts = stack.pop()
        if id(node) in visited:  # YAML aliases share nodes
            continue
        visited.add(id(node))
        if id(node) in targets:
            found[id(node)] = parts
        stack.extend((child, (*parts, key)) for key, child in children(node))
    return found


def _json_children(value: Any) -> Iterable[tuple[PathPart, Any]]:
    if isinstance(value, dict):
        return value.items()
    return enumerate(value) if isinstance(value, list) else ()


# --- YAML --------------------------------------------------------------------------------


def _parse_yaml(text: str) -> _Doc:
    import yaml

    from toolfind.catalog.safe_yaml import Loader, node_children, node_line

    loader = None
    try:
        loader = Loader(text)  # without libyaml, the reader checks the text here
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
        if loader is not None:
            loader.dispose()
    if value is None:
        raise _Problem("file is empty")
    doc = _Doc(value, partial(node_line, root))
    if loader.duplicates:
        where = _paths_of(root, {id(node) for node, _ in loader.duplicates}, node_children)
        for node, key_node in loader.duplicates:
            doc.duplicates.append(
                (where.get(id(node), ()), key_node.value, key_node.start_mark.line + 1)
            )
    return doc
