"""Writing tuned settings into ``toolfind.toml`` (``toolfind tune --write``): the one writer
of a config file, beside :mod:`toolfind.config`, which reads them: only the keys given, and
the catalogs they were tuned on (``[tuned]``, :mod:`toolfind.tuned`). Imported only when a
command writes (it needs ``tomlkit``, which keeps the file's comments and layout).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from toolfind.config import parse_config
from toolfind.errors import CatalogError, ConfigError
from toolfind.models import FIELDS
from toolfind.userfiles import FileProblem, read_capped, rewrite


def write_settings(
    path: Path, settings: Mapping[str, float], catalogs: Sequence[Path] = ()
) -> Path | None:
    """Store ``settings`` (``toolfind.toml``'s keys: ``k1``, ``weights.name``, ``b.tags``,
    ``semantic_weight``, ``rerank_depth``...) in ``toolfind.toml``, keeping its other keys
    and comments, and the ``catalogs`` they were tuned on in its ``[tuned]`` table
    (``toolfind.tuned.record``, which replaces an earlier one).

    The file is rewritten by :func:`userfiles.rewrite`: through a symlink to its target, its
    mode and owner kept, atomically, the previous version kept as a numbered backup
    (``toolfind.toml.~1~``, ``.~2~``, ...). Returns the backup's path (None when there was no
    file). Raises ConfigError.
    """
    import tomlkit

    try:
        # a dangling symlink is a new file: rewrite() creates its target
        text = read_capped(path).decode("utf-8-sig") if os.path.exists(path) else ""
    except FileProblem as exc:
        reason = exc.message.removeprefix("cannot read: ")
        raise ConfigError(f"cannot read config: {reason}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"invalid UTF-8 at byte {exc.start}", file=str(path)) from None
    try:
        document = tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError as exc:
        raise ConfigError(f"invalid TOML: {exc}", file=str(path)) from None
    for key, value in settings.items():
        table, _, name = key.rpartition(".")
        if not table:
            document[key] = value
        elif table == "b":
            _b_table(document)[name] = value
        else:
            if not isinstance(document.get(table), dict):
                document[table] = tomlkit.table()
            document[table][name] = value
    if catalogs:
        from toolfind.tuned import record

        try:
            tuned = record(catalogs, path)
        except (OSError, CatalogError) as exc:
            raise ConfigError(
                f"cannot record the catalogs tuned on: {exc}", file=str(path)
            ) from None
        record_table = tomlkit.table()
        record_table.comment("the catalogs these settings were tuned on (toolfind tune --write)")
        record_table["catalogs"] = tuned["catalogs"]
        record_table["digests"] = tuned["digests"]
        document["tuned"] = record_table
    parse_config(document.unwrap(), path)  # never write a file that would not load
    try:
        backup = rewrite(path, tomlkit.dumps(document).encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot write config: {exc.strerror or exc}", file=str(path)) from None
    return None if backup is None else Path(backup)


def _b_table(document: Any) -> Any:
    """The file's ``b`` as a table: one number for every field becomes that number per
    field (a field tuned then changes alone)."""
    import tomlkit

    b = document.get("b")
    if isinstance(b, dict):
        return b
    table = tomlkit.inline_table()
    if b is not None:
        for field in FIELDS:
            table[field] = b
    document["b"] = table
    return document["b"]
