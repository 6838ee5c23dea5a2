"""Text toolfind prints that it did not write: the one sanitiser for tool text from catalogs
and backends (:func:`clean_text`), and the one rendering of file names and messages for any
output (:func:`render_path`, :func:`render_line`, :func:`render_text`, :func:`guard_streams`).

No imports beyond the standard library, and those lazily: the warm path uses it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# -- text ----------------------------------------------------------------------------------------
#
# Tool text comes from catalogs and servers toolfind does not control. Characters a reader does
# not see can still carry instructions to a model (tag characters spell text invisibly) or make
# text read differently (bidi overrides, zero-width characters); controls can act on a terminal.
# :func:`clean_text` removes them all, the same way in records, tables and serve-mcp.

#: Unicode categories removed: controls (Cc; newline and tab kept), format characters (Cf:
#: zero-width, bidi controls, tag characters, soft hyphen, BOM), private use (Co), surrogates
#: (Cs) and unassigned code points (Cn: what they become is unknown, so they are not shown).
HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Cn"})
#: Controls that are kept: they lay text out and are seen as such.
KEPT = "\n\t"


def clean_text(text: str, limit: int | None = None) -> str:
    """``text`` without the characters of :data:`HIDDEN` categories (but newline and tab),
    and at most ``limit`` characters: a longer text is cut and ends with ``…``.

    Printable ASCII within the limit (most text) is returned as is, decided in C.
    """
    if text.isascii() and text.isprintable() and (limit is None or len(text) <= limit):
        return text
    from unicodedata import category

    kept = "".join(ch for ch in text if ch in KEPT or category(ch) not in HIDDEN)
    if limit is not None and len(kept) > limit:
        kept = kept[: limit - 1].rstrip() + "…"
    return kept


# -- file names and messages ------------------------------------------------------------------
#
# A file name is bytes: one that is not UTF-8 reaches Python as a str holding surrogate escapes
# (``'caf\udce9.json'``), which no UTF-8 output can carry (written as it is, it would stop
# serve-mcp's encoder, or make ``--json`` output invalid UTF-8). A name can also hold controls
# (an ESC that acts on a terminal, a newline that breaks a line of output) or invisible
# characters.
# Removing them would name another file; :func:`render_path` escapes them, the same way in
# every output (JSON, tables, CSV/TSV, MCP results, findings, messages).

#: Categories escaped in a path or message: :data:`HIDDEN`, and line and paragraph separators.
_ESCAPED = HIDDEN | {"Zl", "Zp"}


def render_path(path: str) -> str:
    """``path`` as any output can carry it and a reader can tell it apart: a byte that was not
    UTF-8 (a surrogate escape) as ``\\xNN``, a control, format, private-use, unassigned or
    line-separating character as ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``; the rest as it
    is (a backslash stays one: Windows paths are made of them).

    >>> render_path("caf\udce9.json")
    'caf\\xe9.json'
    """
    if path.isascii() and path.isprintable():
        return path
    return _escape(path, "")


def render_line(text: str) -> str:
    """A line of output (a warning, an ``Error:`` line, a log line) with what
    :func:`render_path` escapes, newlines included: a file name cannot forge another line."""
    return render_path(text)


def render_text(text: str) -> str:
    """A message as any output can carry it (an error naming a file, a backend's reason):
    what :func:`render_path` escapes, newlines and tabs aside."""
    if text.isascii() and text.isprintable():
        return text
    return _escape(text, KEPT)


def _escape(text: str, keep: str) -> str:
    from unicodedata import category

    out = []
    for ch in text:
        if ch in keep or ch.isprintable() or category(ch) not in _ESCAPED:
            out.append(ch)
            continue
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (PEP 383)
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)


#: The ``codecs`` error handler of toolfind's stdout and stderr (:func:`guard_streams`).
STREAM_ERRORS = "toolfind-escape"


def guard_streams(*streams: Any) -> None:
    """Make each text stream write what its encoding cannot carry as :func:`render_path`
    writes a lone surrogate, and any other character it cannot encode (an accent on an ASCII
    terminal) as ``?``: the last guard behind the outputs that render their paths."""
    import codecs

    codecs.register_error(STREAM_ERRORS, _unwritable)
    for stream in streams:
        try:
            stream.reconfigure(errors=STREAM_ERRORS)
        except (AttributeError, ValueError):  # not a TextIOWrapper, or closed
            pass


def _unwritable(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    failed = exc.object[exc.start : exc.end]
    return "".join(render_path(ch) if _SURROGATE <= ch <= _LAST else "?" for ch in failed), exc.end


_SURROGATE, _LAST = "\ud800", "\udfff"


def encodable(text: str) -> str:
    """``text`` with each lone surrogate (which UTF-8 cannot encode: a file name's byte that
    was not UTF-8) written as :func:`render_path` writes it; anything else as it is."""
    if not unencodable(text):
        return text
    return "".join(render_path(ch) if _SURROGATE <= ch <= _LAST else ch for ch in text)


def unencodable(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (which UTF-8 cannot encode)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def encodable_json(text: str) -> str:
    """JSON ``text`` with each lone surrogate (inside a string: nowhere else can one be)
    written as :func:`render_path` writes it, its backslash escaped for JSON."""
    return "".join(f"\\{render_path(ch)}" if _SURROGATE <= ch <= _LAST else ch for ch in text)
