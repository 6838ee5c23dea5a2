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


def discover(paths: Sequence[Path]) -> list[Path]:
    """Catalog files under ``paths``, each once (see the module); raises ``CatalogError``
    when a path does not exist."""
    return discover_all(paths)[0]


def discover_all(paths: Sequence[Path]) -> tuple[list[Path], list[Finding]]:
    """Catalog files under ``paths`` (see :func:`discover`), and the findings of what was
    skipped (FIFOs, devices, unreadable entries); raises ``CatalogError`` as ``discover``."""
    files: list[Path] = []
    findings: list[Finding] = []
    seen_files: set[tuple[int, int]] = set()
    seen_dirs: set[tuple[int, int]] = set()

    def add(path: Path, st: os.stat_result) -> None:
        key = (st.st_dev, st.st_ino)
        if key not in seen_files:
            seen_files.add(key)
            files.append(path)

    for root in paths:
        try:
            st = os.stat(root)
        except (FileNotFoundError, NotADirectoryError):
            raise CatalogError("no such file or directory", file=str(root)) from None
        except OSError as exc:
            findings.append(_finding(root, f"cannot read: {exc.strerror}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            for path, file_st in _walk(root, st, seen_dirs, findings):
                add(path, file_st)
        elif not stat.S_ISREG(st.st_mode):
            findings.append(_finding(root, _not_regular(st)))
        elif root.suffix.lower() not in CATALOG_SUFFIXES:
            findings.append(
                _finding(root, "not a catalog file: expected .json, .yaml, .yml or .jsonl")
            )
        else:
            add(root, st)
    return files, findings


def _walk(
    root: Path, root_st: os.stat_result, seen_dirs: set[tuple[int, int]], findings: list[Finding]
) -> list[tuple[Path, os.stat_result]]:
    # Plain strings, not Path operations, per entry: pathlib is several times slower here.
    found: list[tuple[tuple[str, ...], Path, os.stat_result]] = []
    seen_dirs.add((root_st.st_dev, root_st.st_ino))
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]  # iterative: no deep recursion
    while stack:
        directory, rel = stack.pop()
        try:
            with os.scandir(directory) as it:
                names = sorted(e.name for e in it)
        except OSError as exc:
            findings.append(_finding(directory, f"cannot read directory: {exc.strerror}"))
            continue
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
                    stack.append((directory / name, (*rel, name)))
            elif not catalog_file:
                continue
            elif stat.S_ISREG(st.st_mode):
                found.append(((*rel, name), directory / name, st))
            else:
                findings.append(
                    _finding(directory / name, _not_regular(st), "warning", rule="not-a-file")
                )
    found.sort(key=lambda item: item[0])
    return [(path, st) for _, path, st in found]


def _not_regular(st: os.stat_result) -> str:
    return f"{not_regular(st)}; skipped"


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes, in hex. Raises ``OSError`` when it cannot be read."""
    with open(path, "rb") as f:
        import hashlib  # OpenSSL's binding: a warm run whose files did not change never hashes

        return hashlib.file_digest(f, "sha256").hexdigest()
