"""Opening a run's index: the one way the command line, the warm path, eval and tune, the
Python API and serve-mcp get theirs.

One place decides what differs between them and why: which catalogs and settings apply
(``config.for_run``), whether the manifest's record of an earlier identical run answers
(``store.cache.load_recorded``), whether a signal beyond BM25F is wanted (:func:`wanted`) and
attaching it (:func:`attach`), what a run without a tool is, and how a skipped catalog entry
is said (``segment.skipped_line``).
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
    from toolfind.models import ScoringParams, Signals
    from toolfind.store.cache import Loaded, Progress
    from toolfind.store.index import SearchIndex

    Warn = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default ``warn``: the library says nothing unless asked."""


def wanted(switch: bool | None, *, one_shot: bool) -> bool | None:
    """Whether a signal whose switch is ``switch`` is wanted: True (on; an error when what it
    needs is missing), False (off) or None (on where it is installed). **The one rule of every
    front end**: a switch set (a flag, the API's argument, the environment, a config file:
    ``config.signals_for``) is as set; one left unset is None, except in a ``one_shot``
    process (the command line), which loads no model it was not asked for (False). The
    Python API and serve-mcp answer many queries: a model's load pays for itself there."""
    if switch is None and one_shot:
        return False
    return switch


def attach(
    index: SearchIndex,
    signals: Signals,
    *,
    use_cache: bool = True,
    background: bool = False,
    warn: Warn = _quiet,
) -> None:
    """Attach to ``index`` the signals ``signals`` turns on: a switch False leaves its signal
    off, None turns it on where it is installed, True turns it on or raises
    (SemanticUnavailable, ModelUnavailable: one line saying how to get what is missing).
    The semantic signal's vectors are read (or computed) now; the reranker's model loads on
    the first query that reranks, which with ``background`` also starts embedding every
    tool (``rerank.embed_in_background``). Vectors are kept in the cache directory unless
    ``use_cache`` is false."""
    if signals.semantic is not False:
        from toolfind.store import vectors  # numpy and the model: only when the signal is used

        vectors.enable(
            index, signals.semantic, weight=signals.semantic_weight, use_cache=use_cache, warn=warn
        )
    if signals.rerank is not False:
        from toolfind.store import rerank

        rerank.enable(
            index,
            signals.rerank,
            weight=signals.rerank_weight,
            depth=signals.rerank_depth,
            use_cache=use_cache,
            background=background,
            warn=warn,
        )


def open_run_index(
    catalogs: Sequence[str | os.PathLike[str]] = (),
    *,
    weights: Sequence[str] | Mapping[str, float] = (),
    signals: Mapping[str, Any] | None = None,
    paths: Sequence[Path] | None = None,
    params: ScoringParams | None = None,
    max_file_size: int | None = None,
    use_cache: bool = True,
    one_shot: bool = False,
    remember: bool = False,
    need_tools: bool = False,
    warn: Warn = _quiet,
    report_skipped: bool = True,
    building: Callable[[], AbstractContextManager[Progress | None]] | None = None,
) -> Loaded:
    """The index of a run over ``catalogs`` (resolved as ``config.for_run`` does, with the
    ``weights`` overrides: ``--weight`` options or the API's mapping), or over ``paths`` with
    ``params`` and ``max_file_size`` already resolved (serve-mcp, which reads no config
    here), with the signals ``signals`` asks for (the flags, the API's arguments: setting
    name to value, None not asked) over the environment's and the config's attached
    (:func:`attach`); ``loaded.signals`` says which were asked for.

    What differs between front ends, each named:

    - ``one_shot`` (the command line): an unset switch is off (:func:`wanted`).
    - ``remember`` (the command line): the run is remembered in the cache's manifest (by
      ``manifest.run_key``, with the signal settings the config gives), and an earlier
      identical run's index answers when none of its files changed (not with
      ``use_cache`` False; nor is a run remembered whose config ignored a file another
      user may have written: its warning is said on every run).
    - ``need_tools`` (the command line): a run whose catalogs hold no tool is a
      NothingLoaded error, never an empty answer.

    Skipped catalog entries (unless ``report_skipped`` is false: serve-mcp logs them itself)
    and the cache's problems are said through ``warn``. A build runs inside ``building()``,
    which yields its progress callback (or None). Raises ToolfindError subclasses for bad
    input (CatalogError, ConfigError, NothingLoaded, SemanticUnavailable, ModelUnavailable).
    """
    from toolfind.config import for_run, signals_for

    asked = signals or {}
    names = tuple(str(os.fspath(c)) for c in catalogs)
    run_key = manifest.run_key(names, tuple(weights)) if remember else None
    loaded = _recorded(run_key) if run_key is not None and use_cache else None
    if loaded is not None:
        chosen = signals_for(loaded.configured, asked)  # the recorded run's: no config read
    else:
        configured: Mapping[str, Any] = {}
        if paths is None:
            run = for_run(names, weights, signals=asked)
            paths, params, max_file_size = run.paths, run.params, run.max_file_size
            for line in run.warnings:
                warn(line)
            if run.warnings:
                run_key = None  # not remembered: the warm path would answer without the warning
            chosen, configured = run.signals, run.configured
        else:
            chosen = signals_for({}, asked)
        load = (paths, params, max_file_size, use_cache, run_key, configured, warn)
        if building is None:
            loaded = _load(*load, None)
        else:
            with building() as progress:
                loaded = _load(*load, progress)
    if report_skipped:
        for finding in loaded.findings:
            warn(segment.skipped_line(finding))
    if need_tools and not len(loaded.index.tools):
        raise nothing_loaded(names)
    loaded.signals = chosen.changed(
        semantic=wanted(chosen.semantic, one_shot=one_shot),
        rerank=wanted(chosen.rerank, one_shot=one_shot),
    )
    # A process answering many queries embeds every tool in the background from its first
    # reranked search; a one-shot command embeds only its candidates.
    background = not one_shot
    attach(loaded.index, loaded.signals, use_cache=use_cache, background=background, warn=warn)
    return loaded


def open_recorded(
    catalogs: Sequence[str], warn: Warn, switches: Mapping[str, bool | None] | None = None
) -> Loaded | None:
    """The warm path's :func:`open_run_index` (the command line's rules, no option but
    ``--catalog`` and, for a command that ranks, the signals' ``switches`` it was given): the
    index an earlier identical run recorded, if none of its files changed, with its skipped
    entries said through ``warn``; else None, never a build. None too for an index without
    a tool (the full command line reports what is wrong), and for a command that ranks when
    the run's config turns on a signal its ``switches`` leave on (:func:`by_words`)."""
    loaded = _recorded(manifest.run_key(tuple(catalogs)))
    if loaded is None or not len(loaded.index.tools):
        return None
    if switches is not None and not by_words(loaded.configured, switches):
        return None
    for finding in loaded.findings:
        warn(segment.skipped_line(finding))
    return loaded


def by_words(configured: Mapping[str, Any], switches: Mapping[str, bool | None]) -> bool:
    """Whether a command line's ranking with the signals' ``switches`` (its flags; None: not
    given) ranks by words alone when its config gives the signal settings ``configured``:
    what the warm path can answer. (The precedence of ``config.signals_for``, without
    importing the config, then :func:`wanted`.)"""
    return not any(
        wanted(configured.get(name) if flag is None else flag, one_shot=True) is not False
        for name, flag in switches.items()
    )


def _recorded(run_key: tuple[str, ...]) -> Loaded | None:
    from toolfind.store.cache import load_recorded

    return load_recorded(run_key)


def _load(
    paths: Sequence[Path],
    params: ScoringParams | None,
    max_file_size: int | None,
    use_cache: bool,
    run_key: tuple[str, ...] | None,
    configured: Mapping[str, Any],
    warn: Warn,
    progress: Progress | None,
) -> Loaded:
    from toolfind.store.cache import load_index

    options: dict[str, Any] = {} if max_file_size is None else {"max_file_size": max_file_size}
    loaded = load_index(
        paths,
        params,
        use_cache=use_cache,
        run_key=run_key,
        configured=configured,
        warn=warn,
        progress=progress,
        **options,
    )
    loaded.configured = dict(configured)
    return loaded


def nothing_loaded(catalogs: Sequence[str]) -> NothingLoaded:
    """The error of a run over ``catalogs`` whose catalogs hold no tool (never an empty
    answer on the command line), naming the paths it read."""
    from toolfind.config import for_run
    from toolfind.errors import NothingLoaded

    paths = ", ".join(str(p) for p in for_run(catalogs).paths)
    return NothingLoaded(f"0 tools loaded from {paths}")


def open_recorded_segment(
    catalogs: Sequence[str], warn: Warn, switches: Mapping[str, bool | None] | None = None
) -> segment.Segment | None:
    """:func:`open_recorded` for ``search``/``show --json`` without filters: the
    recorded index's file opened in place as a ``segment.Segment`` (its caller reads the
    few records it prints and closes ``fh``), not loaded; None when there is none, it holds
    no tool, it cannot be read (the full command line then rebuilds or reports), or the
    command ranks and its ``switches`` do not rank by words alone (:func:`by_words`). Its
    skipped entries are said through ``warn`` (the file keeps them as lines)."""
    root = manifest.default_cache_dir(os.environ)
    found = manifest.recorded_run(root, manifest.run_key(tuple(catalogs)))
    if found is None or (switches is not None and not by_words(found[1], switches)):
        return None
    key = found[0]
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
