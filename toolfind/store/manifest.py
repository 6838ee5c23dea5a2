"""The cache manifest, and the one check of whether catalogs changed since they were read.

``toolfind-manifest.marshal``, in the cache directory (:func:`default_cache_dir`), remembers
per invocation context (:func:`run_key`) which index answered and the *record* that keeps that
answer valid; per catalog file, by absolute path, the SHA-256 its stamp stood for; per build's
inputs, the key. A warm command reads it (:func:`recorded_key`) importing only os, stat,
marshal and sys; a load writes it (:func:`remembered`, :func:`save`).

A *record* (:func:`record`) is what the catalogs looked like when they were read: the stamp
(:func:`stamp`) of every catalog root, every directory walked and every catalog file found, by
absolute path, and the content behind each stamp that was *racy* then (:func:`racy`). An entry
added to or removed from a directory changes its stamp, so :func:`check` tells without a walk
whether a record still holds: the cache's hits and serve-mcp's watcher both ask it.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys

from toolfind.userfiles import (
    FileProblem,
    file_digest,
    find_config,
    open_own,
    own_file_problem,
    replace_file,
    shipped_catalogs,
    user_config,
    working_dir,
)

# typing costs as much to import as a warm search may take: only mypy reads this.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from toolfind.catalog.discovery import Discovery

#: What tells, without reading it, whether a catalog file or directory changed:
#: ``(size, mtime_ns, inode, ctime_ns, device)``. ctime catches the edits that keep size and
#: mtime (``cp -p``, ``touch -r``, tools restoring mtimes): nobody can set it back. The device
#: tells apart files on two volumes that reuse inode numbers.
Stamp = tuple[int, int, int, int, int]

#: The stamp of a path that cannot be stat'ed (missing, unreadable).
MISSING: Stamp = (-1, -1, -1, -1, -1)

#: A stamp whose mtime or ctime is this close to the moment it was taken (or later) is
#: *racy*, as git calls it: an edit within the same timestamp tick would not change it, so it
#: proves nothing about the content. 2 s: FAT's granularity, the coarsest in use.
RACY_NS = 2_000_000_000

#: The manifest's name in the cache directory. Every file toolfind writes there is named
#: ``toolfind-*`` (temporary ones ``.toolfind-*.tmp``): nothing else there is toolfind's.
MANIFEST_NAME = "toolfind-manifest.marshal"
#: The cache's format, the manifest's and the index files': bump on a change to either, and
#: old files become misses. 3: one file per index. 4: stamps with ctime and device, absolute
#: paths, files named ``toolfind-*``. 5: records of directories and files apart.
CACHE_FORMAT = 5
#: Runs (and build inputs) remembered; the oldest are dropped beyond it.
MAX_RUNS = 64
#: Indexes loaded by no run to remember (serve-mcp, the Python API) whose files are kept:
#: the most recently used; the oldest are dropped beyond it (:func:`used`).
MAX_USED = 8
#: The index files kept hold at most this many bytes: beyond it the least recently written
#: go (the same budget as the reranker's segments of a model).
MAX_INDEX_BYTES = 1 << 30


def default_cache_dir(environ: Any) -> str:
    """``$TOOLFIND_CACHE_DIR``, else the platform's per-user cache directory: platformdirs'
    ``user_cache_dir("toolfind")``, spelled out (platformdirs costs a warm search too much)."""
    explicit = environ.get("TOOLFIND_CACHE_DIR")
    if explicit:
        return str(explicit)
    home = environ.get("HOME") or os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "toolfind")
    if sys.platform == "win32":
        local = environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(local, "toolfind", "Cache")
    xdg = environ.get("XDG_CACHE_HOME", "").strip()
    return os.path.join(xdg or os.path.join(home, ".cache"), "toolfind")


#: Why a cache file with this stat must not be read, or None when it may be (a cache file is
#: opened by `userfiles.open_own`, which asks it).
unsafe_reason = own_file_problem


# -- stamps ----------------------------------------------------------------------------------


def stamp_of(st: os.stat_result) -> Stamp:
    """The stamp in a stat result."""
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns, st.st_dev)


def stamp(path: str | os.PathLike[str]) -> Stamp:
    """``path``'s stamp, or :data:`MISSING`."""
    try:
        return stamp_of(os.stat(path))
    except (OSError, ValueError):
        return MISSING


def racy(st: tuple[int, ...], taken_ns: int) -> bool:
    """Whether the stamp ``st``, taken at ``taken_ns`` (``time.time_ns()`` before the stat),
    may miss a later edit: its mtime or ctime lies within :data:`RACY_NS` of that moment."""
    return st != MISSING and max(st[1], st[3]) >= taken_ns - RACY_NS


def content_of(path: str) -> Any:
    """What a racy stamp stands for: a directory's sorted names, a file's SHA-256 (hex), None
    for anything else or what cannot be read."""
    try:
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            return tuple(sorted(os.listdir(path)))
        if stat.S_ISREG(st.st_mode):
            return file_digest(path)
    except OSError:
        pass
    return None


def _absolute(path: Any, cwd: str | None) -> str:
    """``path`` joined to the working directory (as is when absolute or there is none)."""
    text = os.fspath(path)
    return text if cwd is None or os.path.isabs(text) else os.path.join(cwd, text)


# -- records ---------------------------------------------------------------------------------


def stamp_roots(paths: Iterable[Any], cwd: str | None) -> list[tuple[Any, ...]]:
    """``(absolute path, *stamp)`` of each catalog root, whatever it is (missing included):
    taken before the roots are walked, for :func:`record`."""
    rows = []
    for path in paths:
        absolute = _absolute(path, cwd)
        rows.append((absolute, *stamp(absolute)))
    return rows


def files_of(found: Discovery, cwd: str | None) -> dict[str, tuple[str, Stamp]]:
    """Each catalog file found, as given -> its absolute path and the stamp it had when found."""
    return {
        str(path): (_absolute(path, cwd), stamp_of(st))
        for path, st in zip(found.files, found.stats, strict=True)
    }


def record(
    roots: Sequence[tuple[Any, ...]],
    found: Discovery,
    cwd: str | None,
    taken: int,
    digests: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The record of a load that stamped ``roots`` (:func:`stamp_roots`) at ``taken``
    (``time.time_ns()`` before), then walked them (``found``): every root and directory
    walked (``dirs``) and every catalog file found (``files``), as ``(absolute path,
    *stamp)``, each stamp as it was before the path was read; and for each racy one
    (``contents``) what it stood for then: a directory's names as the walk listed them, a
    file's SHA-256 (from ``digests``, by the path as given, when the load hashed it)."""
    known: dict[str, Any] = {_absolute(d, cwd): names for d, _, names in found.dirs}
    dirs = [*roots, *((_absolute(d, cwd), *stamp_of(st)) for d, st, _ in found.dirs)]
    files = []
    for path, (absolute, st) in files_of(found, cwd).items():
        files.append((absolute, *st))
        if digests is not None and path in digests:
            known[absolute] = digests[path]
    contents = tuple(
        (row[0], known[row[0]] if row[0] in known else content_of(row[0]))
        for row in (*dirs, *files)
        if racy(row[1:], taken)
    )
    made: dict[str, Any] = {"dirs": tuple(dirs), "files": tuple(files)}
    if contents:
        made["contents"] = contents
    return made


def take(paths: Sequence[Any]) -> dict[str, Any]:
    """A record of the catalogs ``paths`` as they are now (serve-mcp's watcher); a root that
    is missing is recorded as missing. A walk that fails (a root removed meanwhile) gives a
    record that never holds, so the next look walks again."""
    import time

    from toolfind.catalog.discovery import discover
    from toolfind.errors import CatalogError

    taken = time.time_ns()
    cwd = working_dir()
    roots = stamp_roots(paths, cwd)
    try:
        found = discover([p for p, row in zip(paths, roots, strict=True) if row[1:] != MISSING])
    except CatalogError:
        return {"dirs": (("", -2, -2, -2, -2, -2),), "files": ()}
    return record(roots, found, cwd, taken)


def check(recorded: Any) -> Any:
    """``recorded`` (a :func:`record`) when every stamp in it still holds and each racy one
    still has its content; the same without its contents once none of them is racy any more
    (*settled*: stat calls only from then on); None when anything changed, and for anything
    that is not a record (a damaged manifest)."""
    try:
        for row in (*recorded["dirs"], *recorded["files"]):
            if stamp(row[0]) != row[1:]:
                return None
        contents = recorded.get("contents")
        if not contents:
            return recorded
        import time

        now = time.time_ns()  # before the contents are read: see racy()
        if not all(content_of(path) == content for path, content in contents):
            return None
        if any(racy(stamp(path), now) for path, _ in contents):
            return recorded
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        return None
    return {key: value for key, value in recorded.items() if key != "contents"}


def same_files(old: Any, new: Any) -> bool:
    """Whether two records found the same catalog files with the same stamps, and each file
    racy in ``old`` still with its content: whether a load would read anything else, whatever
    happened in the directories around them (an editor's swap file, say)."""
    try:
        if old["files"] != new["files"]:
            return False
        files = {row[0] for row in new["files"]}
        fresh = dict(new.get("contents", ()))
        return all(
            content == (fresh[path] if path in fresh else content_of(path))
            for path, content in old.get("contents", ())
            if path in files
        )
    except (TypeError, ValueError, KeyError, AttributeError):
        return False


# -- the manifest ----------------------------------------------------------------------------


def read(root: str, warn: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The manifest of the cache directory ``root``; an empty one for a file that is missing,
    unreadable, unsafe (said through ``warn``) or of another format."""
    path = os.path.join(root, MANIFEST_NAME)
    data = None
    try:
        fh, _ = open_own(path)
        with fh:
            raw = fh.read()
        data = marshal.loads(raw)
    except FileProblem as exc:
        if warn is not None:
            warn(f"Ignoring cache file {path}: {exc.message}.")
    except (OSError, EOFError, ValueError, TypeError):
        pass
    if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
        return {"format": CACHE_FORMAT, "runs": {}, "shas": {}, "keys": {}, "used": {}}
    data["size"] = len(raw)  # not saved: how many bytes every warm run reads
    return data


def save(root: str, manifest: Mapping[str, Any]) -> None:
    """Write ``manifest`` to the cache directory ``root``, atomically. Raises OSError."""
    os.makedirs(root, mode=0o700, exist_ok=True)
    data = {key: value for key, value in manifest.items() if key != "size"}
    replace_file(os.path.join(root, MANIFEST_NAME), [marshal.dumps(data)])


def pruned(manifest: Mapping[str, Any], keep: Any = None) -> dict[str, Any]:
    """``manifest`` without what no run can use again: the runs (but ``keep``) whose record
    is dead (a directory or catalog root it stamped changed or is gone, so :func:`check`
    refuses it for ever: the next such run records afresh), the digests of files no
    remaining run found, and the build inputs whose key no remaining run names. Runs are
    told dead by their directories' stamps only (a file removed changes its directory's),
    so this costs a few stat calls per run, never one per file."""
    runs = {
        run: entry
        for run, entry in manifest.get("runs", {}).items()
        if run == keep or _directories_hold(entry)
    }
    found = {row[0] for entry in runs.values() for row in entry["files"]}
    answering = {entry["key"] for entry in runs.values()}
    shas = {path: sha for path, sha in manifest.get("shas", {}).items() if path in found}
    keys = {inputs: key for inputs, key in manifest.get("keys", {}).items() if key in answering}
    used = manifest.get("used")
    used = {key: None for key in used if isinstance(key, str)} if isinstance(used, dict) else {}
    return {"format": CACHE_FORMAT, "runs": runs, "shas": shas, "keys": keys, "used": used}


def used(manifest: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """``manifest`` recording that a load no run remembers (serve-mcp, the Python API) used
    the index ``key``, as the newest of the :data:`MAX_USED` such indexes whose files are
    kept; None when it is the newest already."""
    table = manifest.get("used")
    table = dict(table) if isinstance(table, dict) else {}
    if table and next(reversed(table)) == key:
        return None
    _put_newest(table, key, None, MAX_USED)
    return {**pruned(manifest), "used": table}


def live_keys(manifest: Mapping[str, Any]) -> set[str]:
    """The keys of the index files the cache keeps: those a remembered run answers with,
    and the :data:`MAX_USED` most recently used by loads no run remembers. Every other index
    file is stale (an earlier version of a catalog, of the settings, of the config)."""
    live = {entry["key"] for entry in manifest.get("runs", {}).values()}
    live.update(manifest.get("keys", {}).values())
    live.update(manifest.get("used", {}))
    return {key for key in live if isinstance(key, str)}


def _directories_hold(entry: Any) -> bool:
    """Whether every directory (and root) ``entry``'s record stamped still has its stamp;
    False for anything that is not a record."""
    try:
        if not isinstance(entry["key"], str) or not isinstance(entry["files"], tuple):
            return False
        return all(stamp(row[0]) == tuple(row[1:]) for row in entry["dirs"])
    except (TypeError, ValueError, KeyError, IndexError):
        return False


def tidy(root: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` (read from ``root``) :func:`pruned`, and saved so when that dropped
    anything (a failed write only leaves the work to the next run)."""
    tidied = pruned(manifest)
    if len(tidied["runs"]) == len(manifest.get("runs", {})):
        return manifest
    try:
        save(root, tidied)
    except OSError:
        pass
    return tidied


#: A manifest larger than this is tidied by the warm path too (:func:`recorded_key`):
#: hundreds of runs' records of ordinary catalogs stay well below it.
TIDY_BYTES = 1 << 20


def recorded_key(root: str, run_key: tuple[str, ...]) -> str | None:
    """The key of the index an earlier invocation with this ``run_key`` loaded, if its
    record still holds (:func:`recorded_run`)."""
    found = recorded_run(root, run_key)
    return None if found is None else found[0]


def recorded_run(root: str, run_key: tuple[str, ...]) -> tuple[str, dict[str, Any]] | None:
    """The key of the index an earlier invocation with this ``run_key`` loaded, and the
    signal settings its config gave (``remembered``'s ``signals``), if its record still
    holds (:func:`check`). A record that settles is saved so (when nobody changed the entry
    meanwhile; a failed write only costs the next run the same check). A manifest over
    :data:`TIDY_BYTES` is tidied first (:func:`tidy`): what dead runs left would otherwise
    slow every warm run until some run records afresh."""
    recorded = read(root)
    if recorded.get("size", 0) > TIDY_BYTES:
        recorded = tidy(root, recorded)
    entry = recorded.get("runs", {}).get(run_key)
    checked = check(entry)
    key = None if checked is None else checked.get("key")
    signals = None if checked is None else checked.get("signals", {})
    if not isinstance(key, str) or not isinstance(signals, dict):
        return None
    if checked is not entry:
        manifest = read(root)
        runs = manifest.get("runs")
        if isinstance(runs, dict) and runs.get(run_key) == entry:
            runs[run_key] = checked
            try:
                save(root, manifest)
            except OSError:
                pass
    return key, signals


def known_key(manifest: Mapping[str, Any], inputs: str) -> str | None:
    """The index key recorded for a build's ``inputs``, if any."""
    key = manifest.get("keys", {}).get(inputs)
    return key if isinstance(key, str) else None


def digests(manifest: Mapping[str, Any], files: Mapping[str, tuple[str, Stamp]]) -> dict[str, str]:
    """SHA-256 of each of ``files`` (:func:`files_of`), reusing the one recorded for its
    absolute path when its whole stamp is unchanged (racy stamps are never recorded: see
    :func:`remembered`). A file that cannot be read gets a text naming the error: the build
    reports it, the key only needs to differ."""
    known = manifest.get("shas", {})
    out: dict[str, str] = {}
    for path, (absolute, st) in files.items():
        previous = known.get(absolute)
        if isinstance(previous, tuple) and len(previous) == 6 and previous[:5] == st:
            out[path] = previous[5]
            continue
        try:
            out[path] = file_digest(path)
        except OSError as exc:
            out[path] = f"unreadable {exc.errno}"
    return out


def remembered(
    manifest: Mapping[str, Any],
    run_key: tuple[str, ...],
    key: str,
    made: Mapping[str, Any],
    files: Mapping[str, tuple[str, Stamp]],
    digests: Mapping[str, str],
    taken: int,
    inputs: str,
    signals: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """``manifest`` recording that the index ``key`` answers ``run_key`` while the record
    ``made`` holds (with the signal settings the run's config gave, ``signals``, when there
    are some: ``config.Run.configured``), each of ``files``' digests whose stamp is not
    racy, and ``key`` for the build's ``inputs``; None when it records all of that
    already."""
    entry = {"key": key, **made}
    if signals:
        entry["signals"] = dict(signals)
    runs = dict(manifest.get("runs", {}))
    keys = dict(manifest.get("keys", {}))
    if runs.get(run_key) == entry and keys.get(inputs) == key:
        return None
    _put_newest(runs, run_key, entry)
    _put_newest(keys, inputs, key)
    shas = dict(manifest.get("shas", {}))
    for path, (absolute, st) in files.items():
        if racy(st, taken):
            shas.pop(absolute, None)
        else:
            shas[absolute] = (*st, digests[path])
    recorded = {"runs": runs, "shas": shas, "keys": keys, "used": manifest.get("used", {})}
    return pruned(recorded, keep=run_key)


def _put_newest(table: dict[Any, Any], key: Any, value: Any, limit: int = MAX_RUNS) -> None:
    """Set ``table[key]`` as its newest entry, dropping the oldest beyond ``limit``."""
    table.pop(key, None)
    table[key] = value
    while len(table) > limit:
        table.pop(next(iter(table)))


def run_key(catalog_args: tuple[str, ...], weight_args: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Names this invocation's context: everything that decides which catalogs and settings
    apply. The install (toolfind's version and where its shipped catalogs are: two installs
    share one cache), the working directory, the options, the environment (``~`` in a
    config's or ``$TOOLFIND_CATALOGS``'s paths expands with ``$HOME``; the signals'
    switches), and each config file
    that applies (the user-wide one and the project's) with its stamp. A deleted working
    directory is named ``""``: only absolute paths work there."""
    from toolfind.version import __version__

    environ = os.environ
    cwd = working_dir()
    configs = []
    for config in (user_config(environ), find_config(environ, cwd)):
        config_stamp = MISSING if config is None else stamp(config)
        configs += [
            config or "",
            "-" if config_stamp == MISSING else ":".join(map(str, config_stamp)),
        ]
    return (
        "run3",
        __version__,
        shipped_catalogs(),
        os.path.expanduser("~"),
        cwd or "",
        "\0".join(catalog_args),
        environ.get("TOOLFIND_CATALOGS", ""),
        environ.get("TOOLFIND_CONFIG", ""),
        environ.get("TOOLFIND_SEMANTIC", ""),
        environ.get("TOOLFIND_RERANK", ""),
        "\0".join(weight_args),
        *configs,
    )
