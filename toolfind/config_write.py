"""Writing tuned settings into ``toolfind.toml`` (``toolfind tune --write``): the one writer
of a config file, beside :mod:`toolfind.config`, which reads them. Imported only when a
command writes (it needs ``tomlkit``, which keeps the file's comments and layout).
"""

from __future__ import annotations

import os
from pathlib import Path

from toolfind.config import parse_config
from toolfind.errors import ConfigError
from toolfind.models import ScoringParams
from toolfind.userfiles import FileProblem, read_capped, rewrite


def write_params(
    path: Path,
    params: ScoringParams,
    semantic_weight: float | None = None,
    rerank_weight: float | None = None,
    rerank_depth: int | None = None,
) -> Path | None:
    """Store scoring settings (and the fusion weight, the rerank weight and depth, when
    given) in ``toolfind.toml``, keeping its other keys and comments.

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
    weights = tomlkit.table()
    b_table = tomlkit.inline_table()
    for key, value in params.weights.as_dict().items():
        weights[key] = value
        b_table[key] = params.b_for(key)
    document["k1"] = params.k1
    document["b"] = b_table
    document["delta"] = params.delta
    document["weights"] = weights
    if semantic_weight is not None:
        document["semantic_weight"] = semantic_weight
    if rerank_weight is not None:
        document["rerank_weight"] = rerank_weight
    if rerank_depth is not None:
        document["rerank_depth"] = rerank_depth
    parse_config(document.unwrap(), path)  # never write a file that would not load
    try:
        backup = rewrite(path, tomlkit.dumps(document).encode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot write config: {exc.strerror or exc}", file=str(path)) from None
    return None if backup is None else Path(backup)
