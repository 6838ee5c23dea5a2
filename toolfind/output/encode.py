"""The one JSON encoder: every JSON document toolfind prints or sends is written here.

:func:`dumps` gives ``json.dumps(document, indent=2, ensure_ascii=False)`` (the ``--json``
documents, the catalog files ``catalog pull`` writes) or, with ``compact=True``,
``json.dumps(document, ensure_ascii=False)`` (one line: ``search --queries`` and serve-mcp's
text content), byte for byte (tested against json), without importing json: with an indent
json encodes in Python anyway, and importing it (and its ``re``) costs a warm command half of
Python's start-up. A value this writer does not know (not plain JSON data, or a cycle) goes to
json, which handles or reports it as it always did.

Standard library only, and only its cheapest parts: the warm fast path imports this module.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_CONTROLS = frozenset(chr(cp) for cp in range(32))
for _ch in _CONTROLS:
    _ESCAPES.setdefault(_ch, f"\\u{ord(_ch):04x}")
del _ch
_INFINITY = float("inf")


def dumps(document: Any, *, compact: bool = False) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)``, or with ``compact``
    ``json.dumps(document, ensure_ascii=False)``, byte for byte.

    Writes dicts, lists, tuples (arrays, as json writes them), str, int, float, bool and None
    itself; anything else (or a cycle) is left to json, which raises TypeError or ValueError
    where it always did.
    """
    out: list[str] = []
    try:
        _write(document, None if compact else "\n", out)
    except (TypeError, ValueError, RecursionError):
        import json

        return json.dumps(document, indent=None if compact else 2, ensure_ascii=False)
    return "".join(out)


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
            out.append(sep + json_str(key if isinstance(key, str) else _scalar(key)) + ": ")
            _write(value, inner, out)
            sep = comma
    else:
        for item in items:
            out.append(sep)
            _write(item, inner, out)
            sep = comma
    out.append(end)


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
        if value != value:
            return "NaN"
        if value == _INFINITY:
            return "Infinity"
        if value == -_INFINITY:
            return "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
