"""Text toolfind prints that it did not write: the one sanitiser for tool text from catalogs
and backends (:func:`clean_text`), and the one rendering of file names and messages for any
output (:func:`render_path`, :func:`render_line`, :func:`render_text`, :func:`guard_streams`),
CSV and TSV cells no spreadsheet runs (:func:`spreadsheet_cell`), and JSON for a person's
terminal (:func:`terminal_json`).

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


# -- spreadsheet cells --------------------------------------------------------------------------
#
# A CSV or TSV cell that starts with ``=``, ``+``, ``-`` or ``@`` is a formula to Excel,
# LibreOffice and Google Sheets (``=HYPERLINK(...)`` sends data away when clicked, DDE payloads
# run programs on old Office), and a leading tab or carriage return is trimmed into one. Tool
# names, descriptions and tags come from catalogs and servers toolfind does not vouch for, so
# :func:`spreadsheet_cell` neutralises every cell the record formats write, as OWASP's "CSV
# injection" page recommends.

#: The first characters that make a cell a formula (OWASP's list).
FORMULA_STARTS = frozenset("=+-@\t\r")


def spreadsheet_cell(text: str) -> str:
    """``text`` as a CSV or TSV cell that no spreadsheet runs: one starting with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return (after spaces too) gets a leading ``'`` (shown
    as text, the quote hidden), except a plain number (``-2``, ``-0.25``, ``-1e-05``), which
    a spreadsheet reads as the number it is, never as a formula. A carriage return becomes a
    line feed: a CSV reader ends a row at a bare one (which ``csv.writer`` does not quote), and
    what follows would start a cell of its own.

    >>> spreadsheet_cell("=1+1"), spreadsheet_cell("-0.5")
    ("'=1+1", '-0.5')
    """
    if not text:
        return text
    risky = text[0] in FORMULA_STARTS or text.lstrip()[:1] in FORMULA_STARTS
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "'" + text if risky and not _plain_number(text) else text


def _plain_number(text: str) -> bool:
    """Whether ``text`` is ``-`` and a decimal number in ASCII digits (an exponent allowed)."""
    if text[:1] != "-" or not text.isascii():
        return False
    mantissa, e, exponent = text[1:].lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    if e:
        exponent = exponent[1:] if exponent[:1] in "+-" else exponent
        if not exponent.isdigit():
            return False
    return (whole + fraction).isdigit()


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


def terminal_json(text: str) -> str:
    """JSON ``text`` (``wire.dumps``'s) for a person's terminal: each character
    :func:`render_text` would escape (an 8-bit CSI or OSC, a bidi control, a line separator),
    which JSON leaves as it is, written as its ``\\u`` escape instead (it can only be inside a
    string): the same document, and nothing a terminal acts on."""
    if text.isascii():  # JSON escapes every ASCII control itself
        return text
    from unicodedata import category

    out = []
    for ch in text:
        if ch.isascii() or ch.isprintable() or category(ch) not in _ESCAPED:
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:  # as a surrogate pair, as JSON spells a character beyond the BMP
            high, low = divmod(ord(ch) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
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
