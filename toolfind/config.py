"""Settings: the user-wide and the project ``toolfind.toml`` (one on top of the other, key
by key; a file another user may have written is ignored), the bounds of every numeric
setting (:func:`bounded`) and catalog resolution; :func:`for_run` puts them together.

Nothing here is imported by the warm fast path (``tomllib`` alone costs twice Python's
start-up); the fast path reuses what a slow run recorded in the cache manifest instead."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolfind import models
from toolfind.catalog import DEFAULT_MAX_BYTES
from toolfind.errors import ConfigError, UsageError
from toolfind.models import FIELDS, FieldWeights, ScoringParams, Signals
from toolfind.tuned import TunedOn, other_catalogs
from toolfind.tuned import read as read_tuned
from toolfind.userfiles import CONFIG_NAME as CONFIG_NAME
from toolfind.userfiles import (
    MAX_INPUT_BYTES,
    NO_WORKING_DIR,
    FileProblem,
    find_config,
    read_capped,
    shipped_catalogs,
    trust_problem,
    user_config,
    working_dir,
)

DEFAULT_MAX_FILE_SIZE = DEFAULT_MAX_BYTES

#: The keys of ``toolfind.toml`` (those of the signals beyond BM25F: ``models.Signals``).
_KNOWN_KEYS = frozenset(
    {"catalogs", "weights", "k1", "b", "delta", "max_file_size", "servers", "filters", "serve"}
    | {"validate", "synonyms", "safe_directories", "tuned", "defer_namespaces"}
    | set(models.SIGNAL_SETTINGS)
)
_FILTER_KEYS = frozenset({"namespaces", "exclude_namespaces", "tags", "exclude_tags"})
_SERVE_KEYS = frozenset({"allowed_hosts", "allowed_origins"})
#: Size suffixes, longest first (``b`` ends every other one).
_UNITS = {"gib": 1024**3, "mib": 1024**2, "kib": 1024, "gb": 10**9, "mb": 10**6, "kb": 1000, "b": 1}

#: The range of every numeric setting, both ends allowed: the one rule wherever it is set
#: (``toolfind.toml``, ``--weight``, ``--k1``, ``--b``, the Python API), applied by
#: :func:`bounded`. Each bound is far beyond any useful value (tune's grids stop at a weight
#: of 16, k1 5, delta 2) and keeps every score finite: a BM25+ score adds, per query term,
#: at most idf x (k1 + 1) and a weighted delta.
BOUNDS: dict[str, tuple[float, float]] = {
    "weights": (0.0, 1000.0),
    "k1": (0.0, 100.0),
    "b": (0.0, 1.0),
    "delta": (0.0, 100.0),
    "semantic_weight": (0.0, 1.0),
    "rerank_weight": (0.0, 1.0),
}
#: The largest ``max_file_size``: 1 TiB (a catalog file is read whole into memory).
MAX_FILE_SIZE_BOUND = 1 << 40


def bounded(setting: str, raw: Any) -> float:
    """``raw`` as a float within :data:`BOUNDS` of ``setting`` (``weights``, ``k1``, ``b``,
    ``delta``, ``semantic_weight``; ``weights.name``, ``b.tags`` name a field's). Raises
    ValueError whose message says the range (the caller names the file or the option):
    ``k1 must be a number from 0 to 100, not 1e+400``. NaN, infinities, booleans and text
    are refused too."""
    low, high = BOUNDS[setting.partition(".")[0]]
    number = raw
    if isinstance(raw, str):
        try:
            number = float(raw)
        except ValueError:
            number = None
    ok = isinstance(number, int | float) and not isinstance(number, bool)
    if not ok or not low <= number <= high:  # NaN compares false: refused too
        raise ValueError(f"{setting} must be a number from {low:g} to {high:g}, not {raw!r}")
    return float(number)


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
class ConfigFile:
    """A config file that applies here: ``scope`` ``user`` (the user-wide one) or
    ``project`` (found upwards, or named by ``$TOOLFIND_CONFIG``/``--config``: ``explicit``),
    and why it was ignored (``problem``: another user may have written it), if it was."""

    scope: str
    path: Path
    explicit: bool = False
    problem: str | None = None
    exists: bool = True


@dataclass(frozen=True, slots=True)
class Config:
    """The settings of one run: the defaults, then the user-wide ``toolfind.toml``, then the
    project's on top, key by key."""

    #: The project config read (found upwards, or ``$TOOLFIND_CONFIG``), if any.
    path: Path | None = None
    catalogs: tuple[Path, ...] = ()
    params: ScoringParams = field(default_factory=ScoringParams)
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    servers: tuple[Path, ...] = ()
    filters: Filters = field(default_factory=Filters)
    serve: Mapping[str, Any] = field(default_factory=dict)
    #: ``[validate] ignore``: the warning rules ``toolfind validate`` leaves out.
    ignore_rules: tuple[str, ...] = ()
    #: The signals beyond BM25F as the files set them (unset: None; see ``store.run.wanted``).
    signals: Signals = field(default_factory=Signals)
    #: The user-wide config's ``safe_directories`` (see ``userfiles.trust_problem``).
    safe_directories: tuple[str, ...] = ()
    #: The user-wide config read, if any.
    user_path: Path | None = None
    #: The config files that apply here, read or ignored (``toolfind config path``).
    files: tuple[ConfigFile, ...] = ()
    #: Each setting a file set (``k1``, ``weights.name``, ``filters.tags``...) -> that file.
    sources: Mapping[str, str] = field(default_factory=dict)
    #: One ``Warning:`` line per file ignored because another user may have written it.
    warnings: tuple[str, ...] = ()
    #: The catalogs the ranking settings were tuned on (``[tuned]``), if recorded.
    tuned: TunedOn | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """What a command (or the Python API, or serve-mcp) works on: the catalog paths, the scoring
    settings with any weight overrides, the signals beyond BM25F, and the config they came from."""

    paths: tuple[Path, ...]
    params: ScoringParams
    config: Config
    #: The config's warnings and the run's own (``./catalogs`` ignored): said once per run.
    warnings: tuple[str, ...] = ()
    #: The signals as resolved (:func:`signals_for`; a switch left unset is None).
    signals: Signals = field(default_factory=Signals)
    #: The signal settings of the environment and the files (not the defaults): the manifest
    #: keeps them with the run, so that a run it answers need not read the config again.
    configured: Mapping[str, Any] = field(default_factory=dict)

    @property
    def max_file_size(self) -> int:
        return self.config.max_file_size


def for_run(
    catalogs: Sequence[str | Path] = (),
    weights: Sequence[str] | Mapping[str, float] = (),
    *,
    signals: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """The run's config, its catalogs (``catalogs``, else :func:`resolve_catalogs`), its
    scoring settings (the config's, ``weights`` overriding: ``--weight FIELD=W`` or the API's
    ``{"name": 5}``) and its signals (:func:`signals_for`). Raises ConfigError."""
    environ = os.environ if environ is None else environ
    config = load_config(environ, cwd)
    params = config.params
    if isinstance(weights, Mapping):
        if weights:
            params = replace(params, weights=parse_weights(dict(weights), base=params.weights))
    elif weights:
        params = replace(params, weights=parse_weight_options(weights, params.weights))
    warnings = list(config.warnings)
    paths = resolve_catalogs(catalogs, config, environ, cwd, warnings=warnings)
    warnings += filter(None, [other_catalogs(config.tuned, paths)])
    configured = configured_signals(config, environ)
    resolved = signals_for(configured, signals or {})
    return Run(tuple(paths), params, config, tuple(warnings), resolved, configured)


# -- the signals beyond BM25F ----------------------------------------------------------------

#: The environment variable of each switch: between the flags and the config files.
SWITCH_VARIABLES = {s: f"TOOLFIND_{s.upper()}" for s in ("semantic", "rerank", "learn")}
_SWITCH_WORDS = {"true": True, "1": True, "false": False, "0": False, "auto": None}


def configured_signals(config: Config, environ: Mapping[str, str]) -> dict[str, Any]:
    """The signal settings the config files (``config``) and then the environment's switches
    (:data:`SWITCH_VARIABLES`) give, where they differ from the defaults. Raises ConfigError
    for a variable that is not ``true``, ``false`` or ``auto``."""
    out = config.signals.settings()
    for switch, variable in SWITCH_VARIABLES.items():
        raw = environ.get(variable, "").strip()
        if raw.lower() not in ("", *_SWITCH_WORDS):
            raise ConfigError(f"{variable}={raw!r}: use true, false or auto (or unset it)")
        if raw:
            value = _SWITCH_WORDS[raw.lower()]
            out[switch] = value is not False if switch == "learn" else value  # needs no install
    default = Signals().settings()
    return {k: v for k, v in out.items() if v != default[k]}


def signals_for(configured: Mapping[str, Any], asked: Mapping[str, Any]) -> Signals:
    """A run's signals: the settings ``asked`` for (flags, the API's arguments; None: not
    asked) over those ``configured`` (:func:`configured_signals`) over the defaults, each
    checked as in a file (an unset switch stays None: ``store.run.wanted``). Raises
    ConfigError naming a setting out of its range."""
    settings = Signals().settings() | dict(configured)
    for name, value in asked.items():
        if value is not None:
            settings[name] = _setting(value, name, None)
    return Signals(**settings)


def _setting(raw: Any, key: str, file: str | None) -> Any:
    """A number or a switch of ``toolfind.toml`` (or the Python API's), checked."""
    if key in (*models.SIGNAL_SWITCHES, "learn"):
        return _switch(raw, key, file)
    return (_depth if key == "rerank_depth" else _number)(raw, key, file)


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting as ``toolfind config`` shows it: its effective value and where it came
    from: ``source`` is ``default``, ``user`` (the user-wide config), ``project`` (the
    project config, or the file ``$TOOLFIND_CONFIG``/``--config`` names), ``environment``
    or ``command line``; ``origin`` the file, variable or option (None for a default)."""

    key: str
    value: Any
    source: str
    origin: str | None = None


def explain(
    catalogs: Sequence[str | Path] = (),
    weights: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[list[Setting], Run]:
    """Every setting of a run with ``--catalog catalogs`` and ``--weight weights``, its
    effective value and where it came from (``toolfind config``), and the run (its config's
    files and warnings). Raises ConfigError as :func:`for_run` does."""
    environ = os.environ if environ is None else environ
    run = for_run(catalogs, weights, environ=environ, cwd=cwd)
    config, params = run.config, run.params
    user = str(config.user_path) if config.user_path else None

    def row(key: str, value: Any, *keys: str) -> Setting:
        for name in keys or (key,):
            if name in config.sources:
                file = config.sources[name]
                return Setting(key, value, "user" if file == user else "project", file)
        return Setting(key, value, "default")

    if catalogs:
        where = Setting("catalogs", [], "command line", "--catalog")
    elif environ.get("TOOLFIND_CATALOGS", "").strip():
        where = Setting("catalogs", [], "environment", "TOOLFIND_CATALOGS")
    else:
        where = row("catalogs", [])
    rows = [replace(where, value=[str(p) for p in run.paths])]
    rows.append(row("servers", [str(p) for p in config.servers]))
    rows.append(row("max_file_size", config.max_file_size))
    rows += [row("k1", params.k1), row("delta", params.delta)]
    rows += [row(f"b.{f}", params.b_for(f), f"b.{f}", "b") for f in FIELDS]
    given = {option.partition("=")[0].strip() for option in weights}
    for name, value in params.weights.as_dict().items():
        if name in given:
            rows.append(Setting(f"weights.{name}", value, "command line", "--weight"))
        else:
            rows.append(row(f"weights.{name}", value))
    for name, value in run.signals.settings().items():
        variable = SWITCH_VARIABLES.get(name, "")
        if environ.get(variable, "").strip():
            rows.append(Setting(name, value, "environment", variable))
        else:
            rows.append(replace(row(name, value), value=value))
    for name in sorted(_FILTER_KEYS):
        rows.append(row(f"filters.{name}", list(getattr(config.filters, name))))
    rows.append(row("defer_namespaces", list(params.deferred)))
    rows.append(row("validate.ignore", list(config.ignore_rules)))
    for name in sorted(_SERVE_KEYS):
        rows.append(row(f"serve.{name}", list(config.serve.get(name, []))))
    for group in params.synonyms:
        rows.append(row(f"synonyms.{group[0]}", list(group[1:])))
    rows.append(row("safe_directories", list(config.safe_directories)))
    return rows, run


def config_files(config: Config, environ: Mapping[str, str] | None = None) -> list[ConfigFile]:
    """The config files of ``config`` (read or ignored), the user-wide one first, listed
    even when it does not exist (``exists`` False: where to create it)."""
    environ = os.environ if environ is None else environ
    files = list(config.files)
    if not any(f.scope == "user" for f in files):
        files.insert(0, ConfigFile("user", Path(user_config(environ)), exists=False))
    return files


def servers_for(explicit: Sequence[str | Path], config: Config) -> tuple[Path, ...]:
    """The servers files of ``serve-mcp`` and ``catalog pull``: ``--servers`` options (trusted
    as given), else ``servers`` in toolfind.toml (those another user may have written left
    out, with a warning in ``config.warnings``)."""
    return tuple(Path(s) for s in explicit) or config.servers


def config_path(environ: Mapping[str, str], cwd: Path | str | None) -> Path | None:
    """``$TOOLFIND_CONFIG`` if set, else the nearest ``toolfind.toml`` from ``cwd`` upwards,
    up to the repository root or the home directory (:func:`userfiles.find_config`), else
    None: the project config (whether or not it is trusted)."""
    found = find_config(environ, None if cwd is None else os.fspath(cwd))
    return None if found is None else Path(found)


def load_config(environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> Config:
    """The settings that apply here: the defaults, then the user-wide config
    (:func:`userfiles.user_config`), then the project config (:func:`config_path`) on top, key
    by key (``[weights] name`` in one file and ``tags`` in the other both apply).

    A config file toolfind finds rather than is given (``$TOOLFIND_CONFIG``), and every
    servers file and catalog a config names, is ignored with a warning (``warnings``) when
    another user may have written it (:func:`userfiles.trust_problem`), unless it lies in
    one of the user-wide config's ``safe_directories``. Raises ConfigError naming the file
    and the key for anything invalid."""
    environ = os.environ if environ is None else environ
    here = working_dir() if cwd is None else os.fspath(cwd)
    user = Path(user_config(environ))
    explicit = bool(environ.get("TOOLFIND_CONFIG"))
    project = config_path(environ, here)
    user_explicit = False
    if project is not None and _same_file(project, user):
        # the user-wide config itself, found upwards (under ~/.config/toolfind) or named
        project, user_explicit = None, explicit
    files: list[ConfigFile] = []
    warnings: list[str] = []
    layers: list[tuple[Path, dict[str, Any]]] = []
    safe: tuple[str, ...] = ()
    if os.path.lexists(user):
        problem = None if user_explicit else trust_problem(user)
        files.append(ConfigFile("user", user, user_explicit, problem))
        if problem is not None:
            warnings.append(_ignored(user, problem, f"pass --config {user}"))
        else:
            data = _read_toml(user)
            safe = _safe_directories(data.get("safe_directories", []), str(user))
            layers.append((user, _flatten(data, user)))
    if project is not None:
        problem = None if explicit else trust_problem(project, safe)
        files.append(ConfigFile("project", project, explicit, problem))
        if problem is not None:
            hint = f"pass --config {project} or add {project.parent} to {_safe_hint(user)}"
            warnings.append(_ignored(project, problem, hint))
        else:
            data = _read_toml(project)
            if "safe_directories" in data:
                raise ConfigError(
                    f"safe_directories is read only from your user-wide config ({user}): "
                    "move it there",
                    file=str(project),
                    path="safe_directories",
                )
            layers.append((project, _flatten(data, project)))
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for path, flat in layers:
        for key, value in flat.items():
            if key == "b":  # one number for every field: the b.FIELD set earlier give way
                for earlier in [k for k in merged if k.startswith("b.")]:
                    del merged[earlier], sources[earlier]
            merged[key] = value
            sources[key] = str(path)
    for key in ("catalogs", "servers"):
        if key in merged:
            merged[key] = _trusted(merged[key], key, sources[key], safe, user, warnings)
    read = [path for path, _ in layers]
    return replace(
        _config(merged),
        path=project if project in read else None,
        user_path=user if user in read else None,
        safe_directories=safe,
        files=tuple(files),
        sources=sources,
        warnings=tuple(warnings),
    )


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _safe_hint(user: Path) -> str:
    return f"safe_directories in {user}"


def _ignored(path: Path | str, problem: str, hint: str) -> str:
    """The one line that says a file another user may have written was ignored, and how to
    trust it."""
    return f"Warning: ignoring {path}: {problem}; if you trust it, {hint}"


def _trusted(
    paths: tuple[Path, ...],
    key: str,
    config: str,
    safe: Sequence[str],
    user: Path,
    warnings: list[str],
) -> tuple[Path, ...]:
    """``paths`` (``catalogs`` or ``servers`` that the file ``config`` names) without those
    another user may have written, each said in ``warnings``."""
    option = "--servers" if key == "servers" else "-c"
    kept, lines = [], []
    for path in paths:
        problem = trust_problem(path, safe)
        if problem is None:
            kept.append(path)
            continue
        place = path if os.path.isdir(path) else path.parent
        what = "the servers file" if key == "servers" else "the catalog"
        hint = f"pass {option} {path} or add {place} to {_safe_hint(user)}"
        lines.append(_ignored(f"{what} {path} named in {config}", problem, hint))
    if key == "catalogs" and paths and not kept:  # nothing left to search: not the demo either
        raise ConfigError("no catalog left to read: " + lines[0].removeprefix("Warning: "))
    warnings += lines
    return tuple(kept)


def _read_toml(path: Path) -> dict[str, Any]:
    """The parsed config file ``path``. Raises ConfigError naming it."""
    try:
        raw_bytes = read_capped(path, MAX_INPUT_BYTES)
    except FileProblem as exc:
        reason = exc.message.removeprefix("cannot read: ")
        raise ConfigError(f"cannot read config: {reason}", file=str(path)) from None
    import tomllib

    try:
        return tomllib.loads(raw_bytes.decode("utf-8-sig"))  # a BOM (Windows editors) is skipped
    except UnicodeDecodeError as exc:
        raise ConfigError(f"invalid UTF-8 at byte {exc.start}", file=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", file=str(path)) from None


def parse_config(data: Mapping[str, Any], path: Path) -> Config:
    """Turn one parsed ``toolfind.toml`` into a Config (no other file, no trust check).
    Raises ConfigError."""
    flat = _flatten(data, path)
    return replace(_config(flat), path=path, sources=dict.fromkeys(flat, str(path)))


def _flatten(data: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """The settings one file sets, checked, by key (a table's as ``table.key``; ``b`` a
    number, or ``b.FIELD``), paths made absolute from the file's directory. Raises
    ConfigError naming the file and the key."""
    file = str(path)
    _check_keys(data, _KNOWN_KEYS, file)
    flat: dict[str, Any] = {}
    for key in ("catalogs", "servers"):
        if key in data:
            paths = _string_list(data[key], key, file)
            flat[key] = tuple(path.parent / _home(p) for p in paths)
    if "max_file_size" in data:
        flat["max_file_size"] = parse_size(data["max_file_size"], file=file)
    for key in ("k1", "delta", *models.SIGNAL_SETTINGS):
        if key in data:
            flat[key] = _setting(data[key], key, file)
    if "b" in data and not isinstance(data["b"], Mapping):
        flat["b"] = _number(data["b"], "b", file)
    for key in ("weights", "b"):
        if key in data and (key == "weights" or isinstance(data[key], Mapping)):
            table = _table(data[key], key, file)
            for name, value in _per_field(table, key, file, _number).items():
                flat[f"{key}.{name}"] = value
    for key, known in (("filters", _FILTER_KEYS), ("serve", _SERVE_KEYS)):
        table = _table(data.get(key, {}), key, file)
        _check_keys(table, known, file, key)
        for name, value in table.items():
            flat[f"{key}.{name}"] = tuple(_string_list(value, f"{key}.{name}", file))
    readers = {
        "validate": ("validate.ignore", _ignore_rules),
        "tuned": ("tuned", lambda raw, file: read_tuned(raw, Path(file))),
        "safe_directories": ("safe_directories", _safe_directories),
        "defer_namespaces": (
            "defer_namespaces",
            lambda raw, file: tuple(_string_list(raw, "defer_namespaces", file)),
        ),
    }
    for key, (name, reader) in readers.items():
        if key in data:
            flat[name] = reader(data[key], file)
    flat.update(_synonyms(data.get("synonyms", {}), file))  # merged group by group
    return flat


def _config(flat: Mapping[str, Any]) -> Config:
    """A Config of the settings :func:`_flatten` gave (merged), the rest defaults."""
    params = ScoringParams()
    weights = {k.removeprefix("weights."): v for k, v in flat.items() if k.startswith("weights.")}
    if weights:
        params = replace(params, weights=params.weights.with_overrides(weights))
    for key in ("k1", "delta"):
        if key in flat:
            params = replace(params, **{key: flat[key]})
    if "b" in flat:
        params = replace(params, default_b=flat["b"], b=())
    per_field = {k.removeprefix("b."): v for k, v in flat.items() if k.startswith("b.")}
    if per_field:
        params = replace(params, b=tuple(sorted((dict(params.b) | per_field).items())))
    filters = {k.removeprefix("filters."): v for k, v in flat.items() if k.startswith("filters.")}
    serve = {k.removeprefix("serve."): list(v) for k, v in flat.items() if k.startswith("serve.")}
    groups = tuple(v for k, v in sorted(flat.items()) if k.startswith("synonyms."))
    if groups:
        params = replace(params, synonyms=groups)
    return Config(
        catalogs=flat.get("catalogs", ()),
        params=replace(params, deferred=flat.get("defer_namespaces", params.deferred)),
        max_file_size=flat.get("max_file_size", DEFAULT_MAX_FILE_SIZE),
        servers=flat.get("servers", ()),
        filters=Filters(**filters),
        serve=serve,
        ignore_rules=flat.get("validate.ignore", ()),
        signals=Signals(**{k: flat[k] for k in models.SIGNAL_SETTINGS if k in flat}),
        tuned=flat.get("tuned"),
    )


def _synonyms(raw: Any, file: str) -> dict[str, tuple[str, ...]]:
    """``[synonyms]``: each key and its words (one string or a list) are one group of words
    that mean the same (``pr = ["pull request"]``), beside the shipped table; by setting
    (``synonyms.KEY``), at most ``synonyms.MAX_WORDS`` words in all. Raises ConfigError naming
    the key for anything else."""
    from toolfind.core.synonyms import MAX_WORDS

    table = _table(raw, "synonyms", file)
    groups = []
    declared = 0
    for key, value in table.items():
        words = [value] if isinstance(value, str) else value
        if not isinstance(words, list) or not all(isinstance(w, str) and w.strip() for w in words):
            raise ConfigError(
                f'expected a word or a list of words, e.g. {key} = ["pull request"]',
                file=file,
                path=f"synonyms.{key}",
            )
        if not key.strip() or not words:
            raise ConfigError("a group needs a key and a word", file=file, path=f"synonyms.{key}")
        declared += 1 + len(words)
        if declared > MAX_WORDS:
            raise ConfigError(
                f"[synonyms] declares more than {MAX_WORDS:,} words (this group brings it to "
                f"{declared:,}); keep groups to the words people use for one thing",
                file=file,
                path=f"synonyms.{key}",
            )
        groups.append((key.strip(), *(w.strip() for w in words)))
    return {f"synonyms.{group[0]}": group for group in groups}


def _safe_directories(raw: Any, file: str) -> tuple[str, ...]:
    """``safe_directories``: absolute directories (``~`` expanded), ``DIR/*`` or ``*``."""
    entries = _string_list(raw, "safe_directories", file)
    for entry in entries:
        base = entry[:-2] if entry.endswith("/*") else entry
        if entry.strip() != "*" and not os.path.isabs(os.path.expanduser(base)):
            raise ConfigError(
                f"{entry!r} is not an absolute directory (or DIR/*, or *)",
                file=file,
                path="safe_directories",
            )
    return tuple(entries)


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


def _switch(raw: Any, key: str, file: str | None) -> bool | None:
    if raw is None or isinstance(raw, bool):
        return raw
    raise ConfigError(f"{key} must be true or false", file=file, path=file and key)


def _depth(raw: Any, key: str, file: str | None) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= models.MAX_RERANK_DEPTH:
        raise ConfigError(
            f"rerank_depth must be a whole number from 1 to {models.MAX_RERANK_DEPTH}, not {raw!r}",
            file=file,
            path=file and key,
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
            values[key] = bounded(f"weights.{key}", value.strip())
        except ValueError as exc:
            raise UsageError(f"--weight {option!r}: {exc}") from None
    return base.with_overrides(values)


def with_b(params: ScoringParams, raw: Any, *, file: str | None = None) -> ScoringParams:
    """Apply ``b``: one number for every field, or a table of per-field values."""
    if isinstance(raw, Mapping):
        per_field = dict(params.b) | _per_field(raw, "b", file, _number)
        return replace(params, b=tuple(sorted(per_field.items())))
    return replace(params, default_b=_number(raw, "b", file), b=())


def parse_size(raw: Any, *, file: str | None = None) -> int:
    """Bytes from an integer or a text such as ``64MiB``, ``500KB``, ``1GiB``."""
    if isinstance(raw, bool):
        raise ConfigError("max_file_size must be a size such as 64MiB", file=file)
    size: float | None = raw if isinstance(raw, int) else None
    if isinstance(raw, str):
        text = raw.strip().lower().replace(" ", "")
        for suffix, factor in _UNITS.items():
            if text.endswith(suffix):
                try:
                    size = float(text[: -len(suffix)]) * factor
                except ValueError:
                    pass
                break
        if text.isdigit():
            size = int(text)
    if size is not None and 0 < size <= MAX_FILE_SIZE_BOUND:  # NaN and infinities: refused
        return int(size)
    if size is not None and size > 0:
        raise ConfigError(f"max_file_size {raw!r} is over the 1TiB limit", file=file)
    raise ConfigError(f"max_file_size {raw!r} is not a size such as 64MiB", file=file)


def resolve_catalogs(
    explicit: Sequence[str | Path],
    config: Config,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    *,
    warnings: list[str] | None = None,
) -> list[Path]:
    """The catalog paths of this run, in precedence order.

    ``--catalog`` options; else ``$TOOLFIND_CATALOGS`` (``os.pathsep``-separated); else
    ``catalogs`` in ``toolfind.toml``; else ``./catalogs`` if it exists and nobody but you
    (or root) can have written it (else a line in ``warnings`` says why it is ignored); else
    the catalogs shipped inside the package."""
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
        found = os.path.join(here, local)
        problem = trust_problem(found, config.safe_directories)
        if problem is None:
            return [local]
        if warnings is not None:
            hint = f"pass -c {found} or add {found} to safe_directories in {user_config(environ)}"
            warnings.append(_ignored(found, problem, hint))
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
    return Path(shipped_catalogs())


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
    """A number in ``toolfind.toml`` (or the API's), within :func:`bounded`'s range."""
    try:
        if isinstance(raw, str):  # a TOML value: "5" is text, not a number
            raise ValueError(f"{key} must be a number, not {raw!r}")
        return bounded(key, raw)
    except ValueError as exc:
        raise ConfigError(str(exc), file=file) from None


def _string_list(raw: Any, key: str, file: str | None) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{key} must be a list of strings", file=file)
    return list(raw)
