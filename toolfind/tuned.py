"""The ``[tuned]`` table of ``toolfind.toml``: the catalogs whose labelled queries the ranking
settings there were tuned on (``tune --write`` records them), and the warning of a run that
searches other catalogs with those settings.

Each catalog is recorded by its path (relative to the file, as ``catalogs`` is) and a digest of
what it held, so that the same catalog moved or copied is still known:

```toml
[tuned]
catalogs = ["assistant_tools.json"]
digests = ["sha256:9f2c..."]
```

Read with the rest of the file by ``config`` (:func:`read`), written by ``config_write``
(:func:`record`), checked once per run by ``config.for_run`` (:func:`other_catalogs`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolfind.errors import CatalogError, ConfigError

#: How many catalogs a warning names; the rest are counted.
_SHOWN = 3


@dataclass(frozen=True, slots=True)
class TunedOn:
    """The catalogs the settings of ``file`` were tuned on: their paths (absolute) and the
    digest of each (:func:`digest`)."""

    file: str
    catalogs: tuple[Path, ...]
    digests: tuple[str, ...]


def digest(path: Path) -> str:
    """What the catalog ``path`` holds, as one SHA-256: a file's bytes; for a directory, its
    catalog files (as ``catalog.discover`` finds them: each one's path under it and digest).
    Raises OSError or CatalogError when it cannot be read."""
    import hashlib

    from toolfind.catalog.discovery import discover
    from toolfind.userfiles import file_digest

    if not os.path.isdir(path):
        return "sha256:" + file_digest(path)
    whole = hashlib.sha256()
    for file in discover([path]).files:
        relative = os.path.relpath(file, path).replace(os.sep, "/")
        whole.update(f"{relative}\0{file_digest(file)}\n".encode("utf-8", "surrogateescape"))
    return "sha256:" + whole.hexdigest()


def record(paths: Sequence[Path], config: Path) -> dict[str, list[str]]:
    """The ``[tuned]`` table of a run over ``paths``, for the file ``config``: each path
    relative to the file's directory when it is under it. Raises OSError or CatalogError."""
    base = os.path.dirname(os.path.abspath(config))
    names = []
    for path in paths:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute, base)
        names.append(absolute if relative.startswith(os.pardir) else relative)
    return {"catalogs": names, "digests": [digest(Path(p)) for p in paths]}


def read(raw: Any, path: Path) -> TunedOn:
    """The ``[tuned]`` table of the config file ``path``; raises ConfigError naming the file
    and the key, as ``config`` words its own."""
    file = str(path)
    if not isinstance(raw, Mapping):
        raise ConfigError("tuned must be a table", file=file)
    unknown = sorted(set(raw) - {"catalogs", "digests"})
    if unknown:
        raise ConfigError(
            f"unknown key {unknown[0]!r}; known keys: catalogs, digests", file=file, path="tuned"
        )
    lists = {}
    for key in ("catalogs", "digests"):
        value = raw.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"tuned.{key} must be a list of strings", file=file)
        lists[key] = value
    if len(lists["catalogs"]) != len(lists["digests"]):
        raise ConfigError("tuned.digests must hold one digest a catalog", file=file)
    catalogs = tuple(path.parent / os.path.expanduser(p) for p in lists["catalogs"])
    return TunedOn(file, catalogs, tuple(lists["digests"]))


def other_catalogs(tuned: TunedOn | None, paths: Sequence[Path]) -> str:
    """The one ``Warning:`` line of a run over ``paths`` whose settings were tuned on other
    catalogs ("" when each is one of them: the same path, or a copy with the same digest)."""
    if tuned is None:
        return ""
    known = {os.path.realpath(p) for p in tuned.catalogs}
    others = []
    for path in paths:
        if os.path.realpath(path) in known:
            continue
        try:
            if digest(path) in tuned.digests:
                continue
        except (OSError, CatalogError):
            pass  # a catalog that cannot be read is reported where it is loaded
        others.append(path)
    if not others:
        return ""
    return (
        f"Warning: the ranking settings in {tuned.file} were tuned on {names(tuned.catalogs)},"
        f" not on {names(others)} searched here: tune them on these catalogs, or remove"
        " them and the [tuned] table from it"
    )


def names(paths: Sequence[Path]) -> str:
    """Catalogs in a line: the first few, and how many more."""
    shown = ", ".join(map(str, paths[:_SHOWN]))
    more = len(paths) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "") if paths else "no catalog"
