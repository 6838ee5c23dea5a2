"""Opening a run's index: the one way the command line, the warm path, eval and tune, the
Python API and serve-mcp get theirs.

One place decides what differs between them and why: which catalogs and settings apply
(``config.for_run``), whether the manifest's record of an earlier identical run answers
(``store.cache.load_recorded``), whether the semantic signal is on (:func:`semantic_wanted`),
what a run without a tool is, and how a skipped catalog entry is said (``segment.skipped_line``).
Nothing here prints: warnings go to the caller's ``warn``.

The warm path imports this module on its way to the index file: the cache, the config and
the semantic signal are imported only by the functions that need them.
"""

from __future__ import annotations

import os

from toolfind.store import manifest, segment
from toolfind.userfiles import FileProblem, open_own

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any

    from toolfind.errors import NothingLoaded
    from toolfind.models import ScoringParams
    from toolfind.store.cache import Loaded, Progress

    Warn = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default ``warn``: the library says nothing unless asked."""


def semantic_wanted(asked: bool | None, configured: bool | None, *, cli: bool) -> bool | None:
    """Whether the semantic signal is wanted: ``asked`` (``--semantic``/``--lexical``, the
    API's ``semantic=``) decides when given. Otherwise the command line ranks by words only
    (a one-shot command should not load a model it was not asked for), while the Python API
    and serve-mcp, which answer many queries, follow ``semantic`` in ``toolfind.toml``
    (``configured``), and when it is not set use the signal if the extra is installed
    (None: see ``store.vectors.enable``)."""
    if cli:
        return bool(asked)
    return configured if asked is None else asked


def attach_semantic(
    index: Any, key: str, want: bool | None, *, weight: float | None, warn: Warn = _quiet
) -> bool:
    """Turn the semantic signal on for ``index`` (cache key ``key``, "" for none) as
    :func:`semantic_wanted` decided (``want``), with fusion weight ``weight`` (None: the
    default). Returns whether it is on; raises SemanticUnavailable when it is required but
    the extra is not installed. serve-mcp calls this for each index it builds."""
    if want is False:
        return False  # nothing to undo: a loaded or built index has no signal attached
    from toolfind.store import vectors  # numpy and the model: only when the signal is used

    return vectors.enable(index, key, want, weight=weight, warn=warn)


def attach_rerank(
    index: Any,
    want: bool | None,
    *,
    weight: float | None = None,
    depth: int | None = None,
    use_cache: bool = True,
    warn: Warn = _quiet,
) -> bool:
    """Attach the rerank stage (:mod:`toolfind.store.rerank`) to ``index`` as
    :func:`semantic_wanted` decided for the ``rerank`` setting (``want``: None on when the
    model is installed, True required, False off), with its weight and depth (None: the
    defaults). Returns whether it is on; raises ModelUnavailable when it is required but the
    model (or the extra that runs it) is missing. Cheap: the model loads on first use."""
    if want is False:
        return False
    from toolfind.store import rerank

    return rerank.enable(index, want, weight=weight, depth=depth, use_cache=use_cache, warn=warn)


def open_run_index(
    catalogs: Sequence[str | os.PathLike[str]] = (),
    *,
    weights: Sequence[str] | Mapping[str, float] = (),
    paths: Sequence[Path] | None = None,
    params: ScoringParams | None = None,
    max_file_size: int | None = None,
    use_cache: bool = True,
    cli: bool = False,
    semantic: bool | None = None,
    semantic_weight: float | None = None,
    rerank: bool | None = None,
    rerank_weight: float | None = None,
    rerank_depth: int | None = None,
    accelerate: bool = False,
    warn: Warn = _quiet,
    report_skipped: bool = True,
    building: Callable[[], AbstractContextManager[Progress | None]] | None = None,
) -> Loaded:
    """The index of a run over ``catalogs`` (resolved as ``config.for_run`` does, with the
    ``weights`` overrides: ``--weight`` options or the API's mapping), or over ``paths`` with
    ``params`` and ``max_file_size`` already resolved (serve-mcp).

    ``cli``: the command line's rules. The run is remembered in the cache's manifest (by
    ``manifest.run_key``), and an earlier identical run's index answers when none of its
    files changed (not with ``use_cache`` False; nor is a run remembered whose config
    ignored a file another user may have written: its warning is said on every run); a run whose catalogs hold no tool is a
    NothingLoaded error; the semantic signal is on only when ``semantic`` is True. Otherwise
    (the Python API, serve-mcp) nothing is remembered, an empty index is returned as it is,
    and the semantic signal follows :func:`semantic_wanted`; serve-mcp passes
    ``semantic=False`` and attaches it to each index it builds (:func:`attach_semantic`).
    The rerank stage follows the same rule for ``rerank`` (the command line's ``--rerank``,
    the API's ``rerank=``, ``rerank`` in ``toolfind.toml``), with ``rerank_weight`` and
    ``rerank_depth`` (None: the config's, else the defaults).

    Each skipped catalog entry is said through ``warn`` (``segment.skipped_line``) unless
    ``report_skipped`` is false (serve-mcp logs them itself, and tells new problems from
    old ones on a reload), as are the cache's problems. A build runs inside ``building()``,
    a context that yields the build's progress callback (or None).

    Raises ToolfindError subclasses for bad input (CatalogError, ConfigError, NothingLoaded,
    SemanticUnavailable, ModelUnavailable).
    """
    if semantic_weight is not None:
        semantic_weight = _bounded_weight(semantic_weight)
    names = tuple(str(os.fspath(c)) for c in catalogs)
    run_key = manifest.run_key(names, tuple(weights)) if cli else None
    loaded = _recorded(run_key) if run_key is not None and use_cache else None
    configured: bool | None = None
    rerank_configured: bool | None = None
    if loaded is None:
        if paths is None:
            from toolfind.config import for_run

            run = for_run(names, weights)
            paths, params, max_file_size = run.paths, run.params, run.max_file_size
            for line in run.warnings:
                warn(line)
            if run.warnings:
                run_key = None  # not remembered: the warm path would answer without the warning
            configured = run.config.semantic
            if semantic_weight is None:
                semantic_weight = run.config.semantic_weight
            rerank_configured = run.config.rerank
            rerank_weight = run.config.rerank_weight if rerank_weight is None else rerank_weight
            rerank_depth = run.config.rerank_depth if rerank_depth is None else rerank_depth
        if building is None:
            loaded = _load(paths, params, max_file_size, use_cache, run_key, warn, None)
        else:
            with building() as progress:
                loaded = _load(paths, params, max_file_size, use_cache, run_key, warn, progress)
    if report_skipped:
        for finding in loaded.findings:
            warn(segment.skipped_line(finding))
    if cli and not len(loaded.index.tools):
        raise nothing_loaded(names)
    if accelerate:
        loaded.index.accelerate()  # many queries to come: numpy (if installed) pays for itself
    _attach_signals(
        loaded,
        cli=cli,
        semantic=(semantic_wanted(semantic, configured, cli=cli), semantic_weight),
        rerank=(semantic_wanted(rerank, rerank_configured, cli=cli), rerank_weight, rerank_depth),
        use_cache=use_cache,
        warn=warn,
    )
    return loaded


def _attach_signals(
    loaded: Loaded,
    *,
    cli: bool,
    semantic: tuple[bool | None, float | None],
    rerank: tuple[bool | None, float | None, int | None],
    use_cache: bool,
    warn: Warn,
) -> None:
    """Turn on what was decided of the semantic signal (wanted, weight) and the rerank stage
    (wanted, weight, depth); a setting left None on the command line comes from the config
    (a recorded run read none)."""
    want, weight = semantic
    want_rerank, rerank_weight, depth = rerank
    config = None
    if cli and (
        (want is not False and weight is None)
        or (want_rerank is not False and (rerank_weight is None or depth is None))
    ):
        from toolfind.config import load_config

        config = load_config()
    if want is not False:
        if weight is None and config is not None:
            weight = config.semantic_weight
        attach_semantic(loaded.index, loaded.key, want, weight=weight, warn=warn)
    if want_rerank is not False:
        if config is not None:
            rerank_weight = config.rerank_weight if rerank_weight is None else rerank_weight
            depth = config.rerank_depth if depth is None else depth
        attach_rerank(
            loaded.index,
            want_rerank,
            weight=rerank_weight,
            depth=depth,
            use_cache=use_cache,
            warn=warn,
        )


def _bounded_weight(weight: float) -> float:
    """The API's ``semantic_weight`` within the one bound of every setting (even when the
    signal ends up off: a bad value is a mistake either way). Raises ConfigError."""
    from toolfind.config import bounded
    from toolfind.errors import ConfigError

    try:
        return bounded("semantic_weight", weight)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def open_recorded(catalogs: Sequence[str], warn: Warn) -> Loaded | None:
    """The warm path's :func:`open_run_index` (the command line's rules, no option but
    ``--catalog``): the index an earlier identical run recorded, if none of its files
    changed, with its skipped entries said through ``warn``; else None, never a build, and
    None for an index without a tool (the full command line reports what is wrong)."""
    loaded = _recorded(manifest.run_key(tuple(catalogs)))
    if loaded is None or not len(loaded.index.tools):
        return None
    for finding in loaded.findings:
        warn(segment.skipped_line(finding))
    return loaded


def _recorded(run_key: tuple[str, ...]) -> Loaded | None:
    from toolfind.store.cache import load_recorded

    return load_recorded(run_key)


def _load(
    paths: Sequence[Path],
    params: ScoringParams | None,
    max_file_size: int | None,
    use_cache: bool,
    run_key: tuple[str, ...] | None,
    warn: Warn,
    progress: Progress | None,
) -> Loaded:
    from toolfind.store.cache import load_index

    options: dict[str, Any] = {} if max_file_size is None else {"max_file_size": max_file_size}
    return load_index(
        paths, params, use_cache=use_cache, run_key=run_key, warn=warn, progress=progress, **options
    )


def nothing_loaded(catalogs: Sequence[str]) -> NothingLoaded:
    """The error of a run over ``catalogs`` whose catalogs hold no tool (never an empty
    answer on the command line), naming the paths it read."""
    from toolfind.config import for_run
    from toolfind.errors import NothingLoaded

    paths = ", ".join(str(p) for p in for_run(catalogs).paths)
    return NothingLoaded(f"0 tools loaded from {paths}")


def open_recorded_segment(catalogs: Sequence[str], warn: Warn) -> segment.Segment | None:
    """:func:`open_recorded` for ``search``/``show --json`` without filters: the
    recorded index's file opened in place as a ``segment.Segment`` (its caller reads the
    few records it prints and closes ``fh``), not loaded; None when there is none, it holds
    no tool, or it cannot be read (the full command line then rebuilds or reports). Its
    skipped entries are said through ``warn`` (the file keeps them as lines)."""
    root = manifest.default_cache_dir(os.environ)
    key = manifest.recorded_key(root, manifest.run_key(tuple(catalogs)))
    if key is None:
        return None
    try:
        # Unbuffered: the reads are small and scattered, a buffer would read 8 KiB for each.
        # A file open_own refuses is a miss here: the full command line says why.
        fh, st = open_own(segment.index_file(root, key), buffering=0)
    except (OSError, FileProblem):
        return None
    try:
        seg = segment.Segment(fh, st.st_size)
        if not seg.tool_count:
            raise ValueError("no tool")
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        fh.close()
        return None
    for line in seg.warnings:
        warn(line)
    return seg
