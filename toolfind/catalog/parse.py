"""Parse the files a user gives safely: bytes to text to a JSON value, with line numbers and
duplicate keys. Catalogs are read here, and so is every other file of JSON, JSON Lines or YAML
a user gives (:func:`read_document`, :func:`read_lines`: labelled queries, ``search
--queries``), with the same limits and the same one-line messages.

Files over the size limit are not read and only regular files are opened; text is UTF-8
(with or without a BOM) or UTF-16 with a BOM. JSON refuses NaN, infinities and lone
surrogates; YAML is loaded by ``safe_yaml``, imported only to parse YAML.

A JSON document can be parsed by ``json.loads`` alone (``find_duplicates=False``), which is
much faster; its repeated keys are then found by counting its strings (``Document.quotes``)
against those the loader meets, and ``Document.reparse`` parses it again looking for them.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Final

from toolfind.catalog.paths import PathPart, json_path, printable, short_repr
from toolfind.userfiles import MAX_INPUT_BYTES, FileProblem, read_capped, read_stream

Locate = Callable[[Sequence[PathPart]], int | None]
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class Problem(Exception):
    """A file-level problem: the whole file (or JSON Lines record) is skipped."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Document:
    """A parsed document: its value, how to find a path's line, and its duplicate keys."""

    value: Any
    locate: Locate
    # (path of the object, the repeated key, line) for every duplicate key.
    duplicates: list[tuple[tuple[PathPart, ...], str, int | None]] = field(default_factory=list)
    # Set when the parser did not look for duplicate keys (see ``parse_json``): parses the
    # text again, looking for them. ``quotes`` is then twice the number of strings (keys
    # included) in the text, which the loader compares with the strings it meets.
    reparse: Callable[[], Document] | None = None
    quotes: int = 0
    # A whole JSON document's text: its items' lines are found in one pass over it.
    text: str | None = None

    def item_lines(self, parts: Sequence[PathPart] = ()) -> list[int | None]:
        """The line of each item of the array at ``parts`` (none when it is no array)."""
        if self.text is not None:
            return _json_item_lines(self.text, parts)
        items = self.value
        for part in parts:
            items = items[part]
        return [self.locate((*parts, i)) for i in range(len(items))]


def kind_of(value: Any) -> str:
    """What kind of JSON (or YAML) value ``value`` is, as a message says it: ``null``, ``a
    boolean``, ``a number``, ``a string`` (``a blank string``), ``an array`` (``an empty
    array``) or ``an object``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string" if value.strip() else "a blank string"
    if isinstance(value, list | tuple):
        return "an array" if value else "an empty array"
    return "an object" if isinstance(value, Mapping) else f"a {type(value).__name__}"


# --- reading and decoding ----------------------------------------------------------------


def read(path: str | Path, limit: int, *, catalog: bool = True) -> bytes:
    """The file's bytes (``userfiles.read_capped``: a FIFO or device that replaced a
    discovered file is refused before any read, never more than ``limit`` bytes). For a
    ``catalog``, a message also says that the file is skipped, or how to raise the limit."""
    try:
        return read_capped(path, limit)
    except FileProblem as exc:
        if exc.too_big:
            raise TooBig(_too_big(exc) if catalog else exc.message) from None
        if catalog and exc.message.startswith("not a regular file"):
            raise Problem(f"{exc.message}; skipped") from None
        raise Problem(exc.message) from None


class TooBig(Problem):
    """A file over the size limit (the loader lists these: see ``LoadResult.oversized``)."""


def _too_big(exc: FileProblem) -> str:
    """The message for a file over the limit, with a limit that would do."""
    mib = -(-exc.size // (1 << 20)) + (1 if exc.grew else 0)  # rounded up (grew: may grow on)
    return f'{exc.message}; raise it with max_file_size = "{mib}MiB" in toolfind.toml'


def read_text(path: str | Path, limit: int, *, catalog: bool = True) -> str:
    """The text of the file ``path`` (:func:`read`, :func:`decode`). Raises Problem, for an
    empty file too."""
    text = decode(read(path, limit, catalog=catalog))
    if not text.strip():
        raise Problem("file is empty")
    return text


def decode(data: bytes) -> str:
    """Text of a user's file: UTF-8 (a BOM is skipped), or UTF-16 when it starts with a BOM."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        codec, skip = "utf-16", 0  # the utf-16 codec reads and drops the BOM itself
    else:
        codec, skip = "utf-8", 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        return data[skip:].decode(codec, errors="strict")
    except UnicodeDecodeError as exc:
        offset = exc.start + skip
        line = data.count(b"\n", 0, offset) + 1 if codec == "utf-8" else None
        raise Problem(
            f"invalid {codec.upper()} at byte {offset} (0x{data[offset]:02x}); "
            "save the file as UTF-8",
            line,
        ) from None


# --- a user's other files ----------------------------------------------------------------

#: The format of a user's file by its suffix; any other is told from its first character.
FORMATS: Final = {
    ".yaml": "yaml", ".yml": "yaml", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"
}  # fmt: skip


def read_document(path: str | Path, limit: int) -> Document:
    """A user's JSON, JSON Lines or YAML file (:data:`FORMATS`) read and parsed by the
    catalogs' rules (:func:`read_text`, :func:`parse_document`). Raises Problem."""
    text = read_text(path, limit, catalog=False)
    return parse_document(text, FORMATS.get(Path(path).suffix.lower()))


def parse_document(text: str, fmt: str | None = None) -> Document:
    """``text`` as ``fmt`` (``json``, ``jsonl``, ``yaml``; None: JSON when it starts with
    ``[`` or ``{``, else YAML; JSON Lines saved under a JSON name is read as JSON Lines). A
    JSON Lines text is the array of its records. Raises Problem, for a repeated key too."""
    if fmt is None:
        fmt = "json" if text.lstrip()[:1] in ("[", "{") else "yaml"
    if fmt == "json":
        try:
            return _single(parse_json(text))
        except Problem as problem:
            if not (text.lstrip().startswith("{") and "Extra data" in problem.message):
                raise
    if fmt == "yaml":
        return _single(parse_yaml(text))
    values: list[Any] = []
    lines: list[int] = []
    for index, line in enumerate(text.split("\n")):
        if line.strip():
            values.append(parse_line(line, index))
            lines.append(index + 1)
    return Document(values, partial(_record_line, lines))


def _record_line(lines: list[int], parts: Sequence[PathPart]) -> int | None:
    return lines[parts[0]] if parts and isinstance(parts[0], int) else None


def parse_line(text: str, index: int) -> Any:
    """The value of the JSON Lines record ``text`` on the 0-based line ``index``. Raises
    Problem, for a repeated key too."""
    return _single(parse_json(text, index)).value


def _single(doc: Document) -> Document:
    """``doc``, unless a key is repeated in it: then Problem, naming the first."""
    for parts, key, line in doc.duplicates:
        where = f"{json_path(parts)}: " if parts else ""
        raise Problem(f"{where}duplicate key {short_repr(key)}", line)
    return doc


def read_lines(source: str, limit: int = MAX_INPUT_BYTES) -> list[str]:
    """The lines of the text file ``source``, or of stdin (``-``), read and decoded as a
    catalog is. Raises Problem."""
    if source != "-":
        return decode(read(source, limit, catalog=False)).splitlines()
    try:
        return decode(read_stream(sys.stdin.buffer, limit)).splitlines()
    except FileProblem as exc:
        raise Problem(exc.message) from None


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


def parse_json(
    text: str, jsonl_index: int | None = None, *, find_duplicates: bool = True
) -> Document:
    """Parse JSON text; ``jsonl_index`` is the 0-based line of a JSON Lines record.

    Without ``find_duplicates``, ``json.loads`` keeps the last of repeated keys without a word
    (see ``Document.reparse``); the value, and every problem raised, are the same either way.
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
        raise Problem(json_error(exc), exc.lineno + line_offset) from None
    except _Constant as exc:
        what = token = exc.args[0]
        if token.lstrip("-") not in ("NaN", "Infinity"):
            what = f"{token} overflows to infinity, which"
        raise Problem(
            f"invalid JSON: {what} is not allowed (use null or a string)",
            at(_offset_outside_strings(text, token.lstrip("-"))),
        ) from None
    except RecursionError:
        raise Problem("invalid JSON: nesting is too deep to read") from None
    except ValueError:  # int() over sys.get_int_max_str_digits()
        raise Problem("invalid JSON: a number has too many digits") from None

    def locate(parts: Sequence[PathPart]) -> int | None:
        if jsonl_index is not None:  # a JSON Lines record: every path is on the record's line
            return line_offset + 1
        return at(_json_offset(text, parts))

    _refuse_lone_surrogates(text, value, locate)
    doc = Document(value, locate, text=text if jsonl_index is None else None)
    if not find_duplicates:
        doc.reparse = lambda: parse_json(text, jsonl_index)
        doc.quotes = _string_quotes(text)
    if repeated:
        where = _paths_of(value, {id(obj) for obj, _ in repeated}, _json_children)
        for obj, key in repeated:
            parts = where.get(id(obj), ())
            doc.duplicates.append((parts, key, locate((*parts, key))))
    return doc


def json_error(exc: json.JSONDecodeError) -> str:
    """The message of a JSON syntax error, with its column (the caller names the line):
    ``invalid JSON: Expecting value at column 7``, ``invalid JSON: Unterminated string
    starting at column 11`` (Python's messages that end in "at" lose their place)."""
    at = "" if exc.msg.endswith(" at") else " at"
    return f"invalid JSON: {exc.msg}{at} column {exc.colno}"


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


def strings_in(value: Any, skip: Collection[int] = ()) -> int:
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
                raise Problem(
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


def _ws(text: str, i: int) -> int:
    """The offset of the first character at or after ``i`` that is not JSON whitespace."""
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _json_offset(text: str, parts: Sequence[PathPart], *, value: bool = False) -> int | None:
    """Offset of the deepest value along ``parts`` in JSON ``text`` (a key's when its value
    is the deepest: its line is the finding's); only run for findings. With ``value``, the
    offset of the value at ``parts`` itself, None when there is none."""
    decoder = json.JSONDecoder()
    i = _ws(text, 0)
    best = i
    try:
        for part in parts:
            if text[i] == "{" and isinstance(part, str):
                i = _ws(text, i + 1)
                value_at = None
                while text[i] == '"':
                    key_at = i
                    key, i = _scanstring(text, i + 1)
                    i = _ws(text, _ws(text, i) + 1)  # skip ':'
                    if key == part:  # the last one wins, as in the parsed object
                        best, value_at = key_at, i
                    i = _ws(text, decoder.raw_decode(text, i)[1])
                    i = _ws(text, i + 1) if text[i] == "," else i
                if value_at is None:
                    return None if value else best
                i = value_at
            elif text[i] == "[" and isinstance(part, int):
                i = _ws(text, i + 1)
                for _ in range(part):
                    i = _ws(text, decoder.raw_decode(text, i)[1])
                    i = _ws(text, i + 1) if text[i] == "," else i
                best = i
            else:
                return None if value else best
    except (ValueError, IndexError):
        return None if value else best
    return i if value else best


def _json_item_lines(text: str, parts: Sequence[PathPart]) -> list[int | None]:
    """The line of each item of the array at ``parts`` in valid JSON ``text``, in one pass."""
    decoder = json.JSONDecoder()
    i = _json_offset(text, parts, value=True)
    if i is None or text[i : i + 1] != "[":
        return []
    found: list[int | None] = []
    line, at = text.count("\n", 0, i) + 1, i
    i = _ws(text, i + 1)
    while text[i] != "]":
        line += text.count("\n", at, i)
        found.append(line)
        at, i = i, _ws(text, decoder.raw_decode(text, i)[1])
        i = _ws(text, i + 1) if text[i] == "," else i
    return found


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


def parse_yaml(text: str) -> Document:
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
        raise Problem(
            f"invalid YAML: {printable(problem)}", mark.line + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:  # reader errors carry no mark
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Problem(f"invalid YAML: {printable(first)}") from None
    except RecursionError:
        raise Problem("invalid YAML: nesting is too deep to read") from None
    except ValueError:  # int() over sys.get_int_max_str_digits()
        raise Problem("invalid YAML: a number has too many digits") from None
    finally:
        if loader is not None:
            loader.dispose()
    if value is None:
        raise Problem("file is empty")
    doc = Document(value, partial(node_line, root))
    if loader.duplicates:
        where = _paths_of(root, {id(node) for node, _ in loader.duplicates}, node_children)
        for node, key_node in loader.duplicates:
            doc.duplicates.append(
                (where.get(id(node), ()), key_node.value, key_node.start_mark.line + 1)
            )
    return doc
