"""The one JSON encoder (:func:`dumps`): what every ``--json`` document, JSON Lines record
and MCP structured result is written with.

No json import: it (and its ``re``) costs a warm command half of Python's start-up, and with
an indent json encodes in Python anyway. A value this writer does not know goes to json.
Byte for byte ``json.dumps(indent=2, ensure_ascii=False)`` (tested against it). A compact
document in a process that has loaded json already (serve-mcp: every MCP result) is written
by json's C encoder, the same bytes several times faster.
"""

from __future__ import annotations

import sys

from toolfind.output.text import encodable_json, unencodable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

_CONTROLS = frozenset(map(chr, range(32)))
#: What json writes for each control character (quote and backslash are done by json_str).
_ESCAPES = {ch: f"\\u{ord(ch):04x}" for ch in _CONTROLS}
_ESCAPES |= {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_INFINITY = float("inf")


def dumps(document: Any, *, compact: bool = False) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)``, or with ``compact``
    ``json.dumps(document, ensure_ascii=False)``, byte for byte, except that a non-finite
    number (NaN, an infinity) is written ``null``: no output ever holds one, which JSON has
    no spelling for (``json`` writes ``NaN``, ``Infinity``); and that a lone surrogate (a file
    name that was not UTF-8), which no UTF-8 output can carry, is written as
    ``output.text.render_path`` writes it (``"caf\\xe9.json"``).

    Anything but dicts, lists, tuples, str, int, float, bool and None (or a cycle) is left to
    json, which raises TypeError or ValueError where it always did (and for a non-finite
    number there too).
    """
    text = _c_compact(document) if compact else None
    if text is None:
        out: list[str] = []
        try:
            _write(document, None if compact else "\n", out)
        except (TypeError, ValueError, RecursionError):
            import json

            text = json.dumps(
                document, indent=None if compact else 2, ensure_ascii=False, allow_nan=False
            )
        else:
            text = "".join(out)
    if unencodable(text):  # a file name that was not UTF-8 (see render_path)
        text = encodable_json(text)
    return text if not ASCII_ONLY or text.isascii() else ascii_escaped(text)


def _c_compact(document: Any) -> str | None:
    """``json.dumps(document, ensure_ascii=False)`` by json's C encoder when json is loaded
    already: what :func:`_write` writes on one line, byte for byte. None when json is not
    loaded (a warm command does not pay for it) or the document holds what only the writer
    spells (a non-finite number) or json refuses (the writer then says so as it does)."""
    json = sys.modules.get("json")
    if json is None:
        return None
    try:
        text: str = json.dumps(document, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return text


#: Set (by ``toolfind.__main__``) when stdout cannot encode every character (a Latin-1 or
#: ASCII locale, a legacy console): :func:`dumps` then escapes every non-ASCII character, as
#: ``json.dumps(ensure_ascii=True)`` would, so a JSON document never fails to print.
ASCII_ONLY = False


def ascii_escaped(text: str) -> str:
    """``text`` (JSON) with each non-ASCII character as a ``\\uXXXX`` escape (a surrogate
    pair above U+FFFF): non-ASCII characters occur only inside JSON strings."""
    return "".join(ch if ch < "\x80" else _u_escape(ord(ch)) for ch in text)


def _u_escape(code: int) -> str:
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def dumps_array(records: Iterable[Any]) -> Iterator[str]:
    """``dumps(list(records))`` in pieces, each record encoded as it comes: for a document too
    large to hold at once (``list --json`` over 100k tools). Joined, byte for byte the same."""
    out: list[str] = []
    sep = "[\n  "
    for record in records:
        piece = [sep]
        try:
            _write(record, "\n  ", piece)
        except (TypeError, ValueError, RecursionError):
            import json  # as dumps does: the record at depth 1 of json's own list

            piece[1:] = [json.dumps([record], indent=2, ensure_ascii=False, allow_nan=False)[4:-2]]
        out += piece
        sep = ",\n  "
        if len(out) >= _PIECES:
            yield _encodable("".join(out))
            out.clear()
    out.append("[]" if sep == "[\n  " else "\n]")
    yield _encodable("".join(out))


def _encodable(text: str) -> str:
    text = encodable_json(text) if unencodable(text) else text
    return text if not ASCII_ONLY or text.isascii() else ascii_escaped(text)


#: Strings gathered before :func:`dumps_array` hands them out (a few hundred records).
_PIECES = 8192


def json_str(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, without importing json.

    Most text needs no escape at all (one C-level scan tells); otherwise each character that
    needs one is replaced throughout, backslashes first so no escape is escaped twice.
    """
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    for ch in _CONTROLS.intersection(text):
        text = text.replace(ch, _ESCAPES[ch])
    return '"' + text + '"'


def _write(value: Any, newline: str | None, out: list[str]) -> None:
    """Append ``value``'s JSON to ``out``; ``newline`` starts a line at its depth (None: the
    document is written on one line)."""
    if isinstance(value, str):
        out.append(json_str(value))
    elif isinstance(value, dict):
        _write_container(value, newline, out, "{", "}")
    elif isinstance(value, (list, tuple)):
        _write_container(value, newline, out, "[", "]")
    else:
        out.append(_scalar(value))


def _write_container(
    items: Any, newline: str | None, out: list[str], opening: str, closing: str
) -> None:
    if not items:
        out.append(opening + closing)
        return
    if newline is None:
        inner, sep, comma, end = None, opening, ", ", closing
    else:
        inner = newline + "  "
        sep, comma, end = opening + inner, "," + inner, newline + closing
    if opening == "{":
        for key, value in items.items():
            out.append(sep + json_str(key if isinstance(key, str) else _key_text(key)) + ": ")
            _write(value, inner, out)
            sep = comma
    else:
        for item in items:
            out.append(sep)
            _write(item, inner, out)
            sep = comma
    out.append(end)


def _key_text(key: Any) -> str:
    """A non-string key as json turns it into a string (a key is text: ``"NaN"`` is JSON)."""
    if isinstance(key, float) and (key != key or key in (_INFINITY, -_INFINITY)):
        return "NaN" if key != key else ("Infinity" if key > 0 else "-Infinity")
    return _scalar(key)


def _scalar(value: Any) -> str:
    """A JSON literal as json writes it (also how it turns a non-string key into a string)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value or value in (_INFINITY, -_INFINITY):
            return "null"  # never NaN/Infinity, which are not JSON: as JavaScript writes them
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
