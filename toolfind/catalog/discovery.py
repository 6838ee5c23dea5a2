"""Find catalog files: files as given, directories searched recursively.

Directories yield their ``.json``, ``.yaml``, ``.yml`` and ``.jsonl`` files, sorted, and skip
hidden entries; each directory is visited once, so symlink loops end; only regular files are
returned (FIFOs, devices and sockets are reported, never opened).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from toolfind.catalog.paths import finding as _finding
from toolfind.errors import CatalogError
from toolfind.models import Finding
from toolfind.userfiles import not_regular

CATALOG_SUFFIXES: Final = (".json", ".yaml", ".yml", ".jsonl")


class Discovery:
    """What :func:`discover` found: the catalog ``files`` (each once, in load order) and
    the ``stats`` they had when found; the ``findings`` of what was skipped; and every
    directory walked, with its stat, taken before it was listed, and the names listed
    (``dirs``): what the cache's manifest records to notice a later change without a walk."""

    __slots__ = ("dirs", "files", "findings", "stats")

    def __init__(self) -> None:
        self.files: list[Path] = []
        self.stats: list[os.stat_result] = []
        self.findings: list[Finding] = []
        self.dirs: list[tuple[Path, os.stat_result, tuple[str, ...]]] = []


def discover(paths: Sequence[Path]) -> Discovery:
    """The catalog files under ``paths``, each once (see the module), with what was skipped
    and the directories walked (:class:`Discovery`); raises ``CatalogError`` when a path does
    not exist."""
    found = Discovery()
    findings = found.findings
    seen_files: set[tuple[int, int]] = set()
    seen_dirs: set[tuple[int, int]] = set()

    def add(path: Path, st: os.stat_result) -> None:
        key = (st.st_dev, st.st_ino)
        if key not in seen_files:
            seen_files.add(key)
            found.files.append(path)
            found.stats.append(st)

    for root in paths:
        try:
            st = os.stat(root)
        except (FileNotFoundError, NotADirectoryError):
            raise CatalogError("no such file or directory", file=str(root)) from None
        except OSError as exc:
            findings.append(_finding(root, f"cannot read: {exc.strerror}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            for path, file_st in _walk(root, st, seen_dirs, found):
                add(path, file_st)
        elif not stat.S_ISREG(st.st_mode):
            findings.append(_finding(root, _not_regular(st)))
        elif root.suffix.lower() not in CATALOG_SUFFIXES:
            findings.append(
                _finding(root, "not a catalog file: expected .json, .yaml, .yml or .jsonl")
            )
        else:
            add(root, st)
    return found


def _walk(
    root: Path, root_st: os.stat_result, seen_dirs: set[tuple[int, int]], found: Discovery
) -> list[tuple[Path, os.stat_result]]:
    # Plain strings, not Path operations, per entry: pathlib is several times slower here.
    files: list[tuple[tuple[str, ...], Path, os.stat_result]] = []
    findings = found.findings
    seen_dirs.add((root_st.st_dev, root_st.st_ino))
    # iterative: no deep recursion. Each directory's stat is taken before it is listed.
    stack: list[tuple[Path, os.stat_result, tuple[str, ...]]] = [(root, root_st, ())]
    while stack:
        directory, dir_st, rel = stack.pop()
        try:
            with os.scandir(directory) as it:
                names = sorted(e.name for e in it)
        except OSError as exc:
            findings.append(_finding(directory, f"cannot read directory: {exc.strerror}"))
            continue
        found.dirs.append((directory, dir_st, tuple(names)))
        prefix = os.path.join(directory, "")
        for name in names:
            if name.startswith("."):
                continue
            dot = name.rfind(".")
            catalog_file = 0 < dot < len(name) - 1 and name[dot:].lower() in CATALOG_SUFFIXES
            try:
                st = os.stat(prefix + name)  # follows symlinks: a linked directory is walked once
            except OSError as exc:
                if catalog_file:
                    findings.append(
                        _finding(
                            directory / name,
                            f"cannot read: {exc.strerror}",
                            "warning",
                            rule="unreadable-path",
                        )
                    )
                continue
            if stat.S_ISDIR(st.st_mode):
                if (st.st_dev, st.st_ino) not in seen_dirs:
                    seen_dirs.add((st.st_dev, st.st_ino))
                    stack.append((directory / name, st, (*rel, name)))
            elif not catalog_file:
                continue
            elif stat.S_ISREG(st.st_mode):
                files.append(((*rel, name), directory / name, st))
            else:
                findings.append(
                    _finding(directory / name, _not_regular(st), "warning", rule="not-a-file")
                )
    files.sort(key=lambda item: item[0])
    return [(path, st) for _, path, st in files]


def _not_regular(st: os.stat_result) -> str:
    return f"{not_regular(st)}; skipped"
