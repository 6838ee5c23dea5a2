"""Catalog I/O: find catalog files, parse them, check their entries, read them into tools.

The public API is ``discover``, ``load``, ``read_entry``, ``defer_namespaces`` and ``lint``, each imported from its
module on first use: a cache hit only discovers files, and need not import readers.

Its modules, one job each, are mapped in docs/ARCHITECTURE.md.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from toolfind.catalog.discovery import discover
    from toolfind.catalog.linter import lint
    from toolfind.catalog.loader import defer_namespaces, load, read_entry

#: The default file size limit (``max_file_size``): only a guard against a runaway file; a
#: 100k-tool catalog in OpenAI's format is about 80 MB.
DEFAULT_MAX_BYTES = 1 << 30

__all__ = ["DEFAULT_MAX_BYTES", "defer_namespaces", "discover", "lint", "load", "read_entry"]

_HOMES = {
    "defer_namespaces": "loader",
    "discover": "discovery",
    "lint": "linter",
    "load": "loader",
    "read_entry": "loader",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
