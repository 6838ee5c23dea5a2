"""Settings: ``toolfind.toml`` and catalog resolution; :func:`for_run` puts them together.

Nothing here is imported by the warm fast path (``tomllib`` alone costs twice Python's
start-up); the fast path reuses what a slow run recorded in the cache manifest instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolfind.catalog import DEFAULT_MAX_BYTES
from toolfind.errors import ConfigError, UsageError
from toolfind.models import FIELDS, FieldWeights, ScoringParams
from toolfind.userfiles import CONFIG_NAME as CONFIG_NAME
from toolfind.userfiles import (
    MAX_INPUT_BYTES,
    NO_WORKING_DIR,
    FileProblem,
    find_config,
    read_capped,
    rewrite,
    working_dir,
)

DEFAULT_MAX_FILE_SIZE = DEFAULT_MAX_BYTES

_KNOWN_KEYS = frozenset(
    {
        "catalogs",
        "weights",
        "k1",
        "b",
        "delta",
        "max_file_size",
        "servers",
        "filters",
        "serve",
        "validate",
        "semantic",
        "semantic_weight",
        "rerank",
        "rerank_weight",
        "rerank_depth",
    }
)
_FILTER_KEYS = frozenset({"namespaces", "exclude_namespaces", "tags", "exclude_tags"})
#: Size suffixes, longest first (``b`` ends every other one).
_UNITS = {"gib": 1024**3, "mib": 1024**2, "kib": 1024, "gb": 10**9, "mb": 10**6, "kb": 1000, "b": 1}


@dataclass(frozen=True, slots=True)
class Filters:
    """Namespace and tag allow/deny lists: one predicate for listing, search and calls."""

    namespaces: tuple[str, ...] = ()
    exclude_namespaces: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()

    def allows(self, namespace: str, tags: Sequence[str]) -> bool:
        """True when a tool in ``namespace`` with ``tags`` passes every list, by the rule of
        :mod:`toolfind.core.filters` (names compared by ``name_key``; any of ``tags``)."""
        from toolfind.core.filters import serve_rule

        lists = (self.namespaces, self.exclude_namespaces, self.tags, self.exclude_tags)
        return serve_rule(*lists).keeps(namespace, tags)


@dataclass(frozen=True, slots=True)
class Config:
    """The settings of one run, from ``toolfind.toml`` (if any) and the defaults."""

    path: Path | None = None
    catalogs: tuple[Path, ...] = ()
    params: ScoringParams = field(default_factory=ScoringParams)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    servers: tuple[Path, ...] = ()
    filters: Filters = field(default_factory=Filters)
    serve: Mapping[str, Any] = field(default_factory=dict)
    #: ``[validate] ignore``: the warning rules ``toolfind validate`` leaves out.
    ignore_rules: tuple[str, ...] = ()
    #: The semantic signal: True/False as set in the file, None when not set (on where the
    #: extra is installed for the API and serve-mcp; off for the CLI).
    semantic: bool | None = None
    #: Its fusion weight (None: ``toolfind.core.fusion.DEFAULT_WEIGHT``).
    semantic_weight: float | None = None
    #: The rerank stage (``toolfind model fetch``): as ``semantic``, for the model.
    rerank: bool | None = None
    #: Its weight (None: ``toolfind.core.fusion.RERANK_WEIGHT``) and depth, the candidates
    #: it re-scores (None: ``toolfind.store.rerank.DEFAULT_DEPTH``).
    rerank_weight: float | None = None
    rerank_depth: int | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """What a command (or the Python API, or serve-mcp) works on: the catalog paths, the
    scoring settings with any weight overrides, and the config they came from."""

    paths: tuple[Path, ...]
    params: ScoringParams
    config: Config

    @property
    def max_file_size(self) -> int:
        return self.config.max_file_size


def for_run(
    catalogs: Sequence[str | Path] = (), weights: Sequence[str] | Mapping[str, float] = ()
) -> Run:
    """The run's config, its catalogs (``catalogs``, else :func:`resolve_catalogs`) and its
    scoring settings: the config's, with ``weights`` (``--weight FIELD=W`` options or the
    Python API's ``{"name": 5}``) overriding. Raises ConfigError."""
    config = load_config()
    params = config.params
    if isinstance(weights, Mapping):
        if weights:
            params = replace(params, weights=parse_weights(dict(weights), base=params.weights))
    elif weights:
        params = replace(params, weights=parse_weight_options(weights, params.weights))
    return Run(tuple(resolve_catalogs(catalogs, config)), params, config)


def config_path(environ: Mapping[str, str], cwd: Path | str | None) -> Path | None:
    """``$TOOLFIND_CONFIG`` if set, else the nearest ``toolfind.toml`` from ``cwd`` upwards,
    up to the repository root or the home directory (:func:`userfiles.find_config`), else
    None."""
    found = find_config(environ, None if cwd is None else os.fspath(cwd))
    return None if found is None else Path(found)


def load_config(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Config:
    """Read the config file that applies here, or return the defaults.

    Raises ConfigError naming the file and the key for anything invalid.
    """
    environ = os.environ if environ is None else environ
    path = config_path(environ, working_dir() if cwd is None else cwd)
    if path is None:
        return Config()
    try:
        raw_bytes = read_capped(path, MAX_INPUT_BYTES)
    except FileProblem as exc:
        reason = exc.message.removeprefix("cannot read: ")
        raise ConfigError(f"cannot read config: {reason}", file=str(path)) from None
    import tomllib

    try:
        data = tomllib.loads(raw_bytes.decode("utf-8-sig"))  # a BOM (Windows editors) is skipped
    except UnicodeDecodeError as exc:
        raise ConfigError(f"invalid UTF-8 at byte {exc.start}", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", file=str(path)) from None
    return parse_config(data, path)


def parse_config(data: Mapping[str, Any], path: Path) -> Config:
    """Turn a parsed ``toolfind.toml`` into a Config. Raises ConfigError."""
    file = str(path)
    _check_keys(data, _KNOWN_KEYS, file)
    base = path.parent
    params = ScoringParams()
    if "weights" in data:
        params = replace(params, weights=parse_weights(data["weights"], file=file))
    if "k1" in data:
        params = replace(params, k1=_number(data["k1"], "k1", file))
    if "delta" in data:
        params = replace(params, delta=_number(data["delta"], "delta", file))
    if "b" in data:
        params = with_b(params, data["b"], file=file)
    return Config(
        path=path,
        catalogs=tuple(
            base / _home(p) for p in _string_list(data.get("catalogs", []), "catalogs", file)
        ),
        params=params,
        max_file_size=parse_size(data.get("max_file_size", DEFAULT_MAX_FILE_SIZE), file=file),
        servers=tuple(
            base / _home(p) for p in _string_list(data.get("servers", []), "servers", file)
        ),
        filters=_parse_filters(data.get("filters", {}), file),
        serve=_table(data.get("serve", {}), "serve", file),
        ignore_rules=_ignore_rules(data.get("validate", {}), file),
        semantic=_semantic_switch(data.get("semantic"), file),
        semantic_weight=_semantic_weight(data.get("semantic_weight"), file),
        rerank=_switch(data.get("rerank"), "rerank", file),
        rerank_weight=_semantic_weight(data.get("rerank_weight"), file, "rerank_weight"),
        rerank_depth=_depth(data.get("rerank_depth"), file),
    )


def _ignore_rules(raw: Any, file: str) -> tuple[str, ...]:
    """``[validate] ignore = ["rule", ...]``. Raises ConfigError for another key or rule."""
    from toolfind.catalog.linter import unknown_rules

    table = _table(raw, "validate", file)
    _check_keys(table, frozenset({"ignore"}), file, "validate")
    rules = _string_list(table.get("ignore", []), "validate.ignore", file)
    problem = unknown_rules(rules)
    if problem:
        raise ConfigError(problem, file=file, path="validate.ignore")
    return tuple(rules)


def _semantic_switch(raw: Any, file: str) -> bool | None:
    if raw is None or isinstance(raw, bool):
        return raw
    raise ConfigError("semantic must be true or false", file=file, path="semantic")


def _semantic_weight(raw: Any, file: str, key: str = "semantic_weight") -> float | None:
    if raw is None:
        return None
    return _unit(raw, key, file)


def _switch(raw: Any, key: str, file: str) -> bool | None:
    if raw is None or isinstance(raw, bool):
        return raw
    raise ConfigError(f"{key} must be true or false", file=file, path=key)


#: The largest ``rerank_depth`` (``toolfind.store.rerank.MAX_DEPTH``, not imported: numpy).
_MAX_RERANK_DEPTH = 1000


def _depth(raw: Any, file: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= _MAX_RERANK_DEPTH:
        raise ConfigError(
            f"rerank_depth must be a whole number from 1 to {_MAX_RERANK_DEPTH}, not {raw!r}",
            file=file,
            path="rerank_depth",
        )
    return raw


def parse_weights(
    raw: Any, *, file: str | None = None, base: FieldWeights | None = None
) -> FieldWeights:
    """Weights from a mapping of field name to number; a partial set overrides only those."""
    values = _per_field(_table(raw, "weights", file), "weights", file, _number)
    return (base or FieldWeights()).with_overrides(values)


def parse_weight_options(options: Sequence[str], base: FieldWeights) -> FieldWeights:
    """``--weight name=5`` options on top of ``base``. Raises UsageError for a bad one."""
    values: dict[str, float] = {}
    for option in options:
        key, sep, value = option.partition("=")
        key = key.strip()
        if not sep:
            raise UsageError(f"--weight {option!r}: expected FIELD=NUMBER, for example name=5")
        if key not in FIELDS:
            raise UsageError(f"--weight {option!r}: {_unknown_field(key)}")
        try:
            number = float(value)
        except ValueError:
            raise UsageError(f"--weight {option!r}: {value!r} is not a number") from None
        if number < 0 or number != number:
            raise UsageError(f"--weight {option!r}: a weight must be a number >= 0")
        values[key] = number
    return base.with_overrides(values)


def with_b(params: ScoringParams, raw: Any, *, file: str | None = None) -> ScoringParams:
    """Apply ``b``: one number for every field, or a table of per-field values."""
    if isinstance(raw, Mapping):
        per_field = dict(params.b) | _per_field(raw, "b", file, _unit)
        return replace(params, b=tuple(sorted(per_field.items())))
    return replace(params, default_b=_unit(raw, "b", file), b=())


def parse_size(raw: Any, *, file: str | None = None) -> int:
    """Bytes from an integer or a text such as ``64MiB``, ``500KB``, ``1GiB``."""
    if isinstance(raw, bool):
        raise ConfigError("max_file_size must be a size such as 64MiB", file=file)
    if isinstance(raw, int) and raw > 0:
        return raw
    if isinstance(raw, str):
        text = raw.strip().lower().replace(" ", "")
        for suffix, factor in _UNITS.items():
            if text.endswith(suffix):
                try:
                    value = float(text[: -len(suffix)])
                except ValueError:
                    break
                if value > 0:
                    return int(value * factor)
        if text.isdigit() and int(text) > 0:
            return int(text)
    raise ConfigError(f"max_file_size {raw!r} is not a size such as 64MiB", file=file)


def resolve_catalogs(
    explicit: Sequence[str | Path],
    config: Config,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> list[Path]:
    """The catalog paths of this run, in precedence order.

    ``--catalog`` options; else ``$TOOLFIND_CATALOGS`` (``os.pathsep``-separated); else
    ``catalogs`` in ``toolfind.toml``; else ``./catalogs`` if it exists; else the catalogs
    shipped inside the package.
    """
    environ = os.environ if environ is None else environ
    here = working_dir() if cwd is None else os.fspath(cwd)
    if explicit:
        for p in explicit:
            if not os.fspath(p).strip():
                raise ConfigError(
                    f"--catalog {os.fspath(p)!r}: an empty path; give a catalog file or directory"
                )
        return _resolvable([Path(p) for p in explicit], here)
    env = environ.get("TOOLFIND_CATALOGS", "")
    if env:
        paths = [Path(_home(p)) for p in env.split(os.pathsep) if p.strip()]
        if not paths:
            raise ConfigError(
                f"TOOLFIND_CATALOGS={env!r} names no path; give catalog paths separated by "
                f"{os.pathsep!r}, or unset it"
            )
        return _resolvable(paths, here)
    if config.catalogs:
        return _resolvable(list(config.catalogs), here)
    local = Path("catalogs")
    if here is not None and os.path.isdir(os.path.join(here, local)):
        return [local]
    return [packaged_catalogs()]


def _resolvable(paths: list[Path], cwd: str | None) -> list[Path]:
    """``paths``, or ConfigError when one is relative and there is no working directory."""
    if cwd is None and not all(p.is_absolute() for p in paths):
        raise ConfigError(NO_WORKING_DIR)
    return paths


def _home(path: str) -> str:
    """``~`` and ``~user`` expanded, as a shell would (toolfind.toml, ``$TOOLFIND_CATALOGS``)."""
    return os.path.expanduser(path) if path.startswith("~") else path


def uses_packaged_catalogs(run: Run) -> bool:
    """Whether ``run`` reads the demo catalogs shipped with toolfind because nothing else is
    configured (no ``--catalog``, ``$TOOLFIND_CATALOGS``, ``catalogs`` setting or ``./catalogs``)."""
    configured = run.config.catalogs or os.environ.get("TOOLFIND_CATALOGS", "").strip()
    return not configured and run.paths == (packaged_catalogs(),)


def packaged_catalogs() -> Path:
    """The catalogs shipped with toolfind (in a wheel, or the checkout's ``catalogs/``)."""
    here = Path(__file__).resolve().parent
    bundled = here / "_catalogs"
    return bundled if bundled.is_dir() else here.parent / "catalogs"


def _unknown_field(name: str) -> str:
    return f"unknown field {name!r}; fields are {', '.join(FIELDS)}"


def _per_field(
    table: Mapping[str, Any], key: str, file: str | None, convert: Callable[..., float]
) -> dict[str, float]:
    values: dict[str, float] = {}
    for name, value in table.items():
        if name not in FIELDS:
            raise ConfigError(_unknown_field(name), file=file, path=key)
        values[name] = convert(value, f"{key}.{name}", file)
    return values


def _check_keys(
    table: Mapping[str, Any], known: frozenset[str], file: str | None, path: str | None = None
) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        listed = ", ".join(sorted(known))
        raise ConfigError(f"unknown key {unknown[0]!r}; known keys: {listed}", file=file, path=path)


def _table(raw: Any, key: str, file: str | None) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{key} must be a table", file=file)
    return raw


def _number(raw: Any, key: str, file: str | None) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0 or raw != raw:
        raise ConfigError(f"{key} must be a number >= 0, not {raw!r}", file=file)
    return float(raw)


def _unit(raw: Any, key: str, file: str | None) -> float:
    value = _number(raw, key, file)
    if value > 1:
        raise ConfigError(f"{key} must be between 0 and 1, not {raw!r}", file=file)
    return value


def _string_list(raw: Any, key: str, file: str | None) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{key} must be a list of strings", file=file)
    return list(raw)


def _parse_filters(raw: Any, file: str | None) -> Filters:
    table = _table(raw, "filters", file)
    _check_keys(table, _FILTER_KEYS, file, "filters")
    return Filters(**{k: tuple(_string_list(v, f"filters.{k}", file)) for k, v in table.items()})


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
