"""JSON paths and one-line message text: what every catalog finding is made of.

A finding names the file, the line (where known), the JSON path inside the document
(``tools[3].parameters.properties["a b"]``) and a one-line message; entries are addressed by
RFC 6901 pointers (``/tools/3``) while they load. Stdlib only, cheap to import.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from toolfind.errors import CatalogError
from toolfind.models import Finding, Source

if TYPE_CHECKING:
    from pathlib import Path

    from toolfind.models import Severity

PathPart = str | int
#: Builds the exception for a message and a path relative to the value being checked.
Fail = Callable[[str, Sequence[PathPart]], Exception]


class EntryError(CatalogError):
    """A bad entry; ``parts`` is the JSON path inside the entry (``catalog`` maps it to a line).

    ``more`` holds the entry's other problems, when it has several (``validate`` lists each)."""

    def __init__(
        self,
        message: str,
        source: Source,
        parts: Sequence[PathPart] = (),
        more: Sequence[EntryError] = (),
    ) -> None:
        self.parts = tuple(parts)
        self.source = source
        self.more = tuple(more)
        super().__init__(
            message, file=source.file, line=source.line, path=json_path(self.full_parts)
        )

    @property
    def each(self) -> tuple[EntryError, ...]:
        """Every problem of the entry: this one (the message a one-line report gives), then
        the others found (``more``), each with its own path."""
        return (self, *self.more)

    @property
    def full_parts(self) -> tuple[PathPart, ...]:
        """The path from the document root: the entry's pointer, then ``parts``."""
        return (*pointer_parts(self.source.pointer), *self.parts)


# --- paths -------------------------------------------------------------------------------


def json_pointer(parts: Sequence[PathPart]) -> str:
    """RFC 6901 pointer for ``parts`` (``("tools", 3)`` -> ``/tools/3``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def pointer_parts(pointer: str) -> tuple[PathPart, ...]:
    """Inverse of ``json_pointer`` for entry pointers: all-digit segments are list indices."""
    if not pointer:
        return ()
    segments = (raw.replace("~1", "/").replace("~0", "~") for raw in pointer[1:].split("/"))
    return tuple(int(seg) if seg.isdigit() else seg for seg in segments)


def json_path(parts: Sequence[PathPart]) -> str:
    """Dotted/bracket path for messages: ``tools[3].parameters.properties["a b"]``."""
    out = []
    for p in parts:
        if isinstance(p, int):
            out.append(f"[{p}]")
        elif p and all(c.isalnum() or c in "_-$" for c in p) and p.isascii():
            out.append(f".{p}" if out else p)
        else:
            escaped = p.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'["{printable(escaped)}"]')
    return "".join(out)


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr`` cut to ``limit`` characters, for one-line messages about huge values."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str) -> str:
    """``text`` with every non-printable character as ``\\uXXXX``: messages stay on one line
    and show invisible characters instead of acting on them."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def invisible_chars(text: str, *, allow_whitespace: bool = True) -> list[tuple[int, str]]:
    """Control and invisible format characters in ``text`` as (index, char).

    Unicode categories Cc (controls; tab, newline and carriage return allowed when
    ``allow_whitespace``) and Cf (zero-width characters, bidi controls, tag characters,
    soft hyphen, BOM): text that renders differently from what a model reads.
    """
    if text.isprintable():  # the common case, decided in C: no character can be reported
        return []
    allowed = "\t\n\r" if allow_whitespace else ""
    return [
        (i, c)
        for i, c in enumerate(text)
        if not c.isprintable() and c not in allowed and unicodedata.category(c) in ("Cc", "Cf")
    ]


def describe_char(c: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``."""
    name = unicodedata.name(c, "")
    return f"U+{ord(c):04X} ({name})" if name else f"U+{ord(c):04X}"


def finding(
    path: Path | str,
    message: str,
    severity: Severity = "error",
    *,
    line: int | None = None,
    parts: Sequence[PathPart] = (),
    rule: str = "",
) -> Finding:
    return Finding(str(path), line, json_path(parts), severity, message, rule)
