"""File stamps: what toolfind records of a file or directory to tell later, without reading
it, whether it changed.

A stamp is ``(size, mtime_ns, inode)``: an edit changes the size or the modification time, a
file replaced by another (an atomic save, a ``git checkout``) changes the inode, and a
directory's modification time changes when an entry is added, removed or renamed. The cache
records the stamps of every catalog file and directory it indexed (the warm paths check them
before trusting a cached index) and serve-mcp polls them to know when to rebuild.

Standard library only (``os``): the warm fast path imports this.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

#: ``(size, mtime_ns, inode)``.
Stamp = tuple[int, int, int]

#: The stamp of a path that cannot be stat'ed (missing, unreadable).
MISSING: Stamp = (-1, -1, -1)


def stamp(path: str | os.PathLike[str]) -> Stamp:
    """``path``'s stamp, or :data:`MISSING`."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return MISSING
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def unchanged(recorded: Iterable[tuple[str, int, int, int]] | None) -> bool:
    """True when every recorded ``(path, size, mtime_ns, inode)`` is still that path's stamp;
    False for None and for anything that is not such a list (a damaged or older record)."""
    if recorded is None:
        return False
    try:
        return all(stamp(path) == (size, mtime, ino) for path, size, mtime, ino in recorded)
    except (TypeError, ValueError):
        return False
