"""The one text sanitiser: tool text made safe to show a model or a person.

A tool's description, summary and title come from catalogs and backend servers toolfind does
not control. Characters a reader does not see can still carry instructions to a model (Unicode
tag characters spell text invisibly) or make text read differently from what it is (bidi
overrides reorder it, zero-width characters split words); control characters can act on a
terminal. :func:`clean_text` removes them all, the same way everywhere: in ``--json`` records,
in tables, in what serve-mcp lists and returns.

Standard library only; :mod:`unicodedata` is imported the first time a text needs it (the
usual text, printable ASCII, never does).
"""

from __future__ import annotations

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
