"""Load the search index from the on-disk cache, or build it and store it there.

The cache key is toolfind's version, the index format, the analysis and scoring settings,
what discovery skipped, and every catalog file's path and SHA-256 in load order; a warm run
hashes only the files whose stamp (size, mtime, inode, ctime, device, by absolute path)
changed. Each index is stored once, atomically, in ``toolfind-<key>.pickle`` (layout:
:mod:`toolfind.store.segment`): a protocol-5 pickle whose columns travel out of band and load
as views of a memory map, plus a small directory of the columns the fast path reads without
unpickling. The manifest (:mod:`toolfind.store.manifest`) remembers, per invocation context,
which key answered and the record that keeps it valid. Only files named ``toolfind-*`` are
toolfind's (:func:`is_own_file`): ``cache info`` and ``cache clear`` touch no other.

Safety: a cache file not owned by the current user, or writable by group or others, is never
loaded; only toolfind's own classes and plain builtins may be unpickled; any unreadable, foreign
or stale file is a miss (rebuild, one line through ``warn``, carry on).
"""

from __future__ import annotations

import io
import mmap
import os
import stat
import time

# _pickle's unpickler: the `pickle` module imports `re`, dear for a warm command (every
# importer of this module unpickles an index or builds one).
from _pickle import Unpickler, UnpicklingError

from toolfind.catalog import DEFAULT_MAX_BYTES
from toolfind.errors import CacheError, NothingLoaded
from toolfind.models import Finding, ScoringParams
from toolfind.store import manifest, segment
from toolfind.store.columns import ToolTable, collector_paused
from toolfind.store.manifest import CACHE_FORMAT, MANIFEST_NAME
from toolfind.userfiles import FileProblem, open_own, replace_file, working_dir

# pickle (its `re`), pathlib, typing and dataclasses cost a warm command about Python's start-up
# again: a build's and the cache commands' imports are local; loading uses the C unpickler.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path
    from typing import Any

    from toolfind.catalog.discovery import Discovery
    from toolfind.models import Signals
    from toolfind.store.index import SearchIndex

    Warn = Callable[[str], None]
    #: (files read, files found, tools loaded, tools analysed), as a build goes.
    Progress = Callable[[int, int, int, int], None]


def _no_warn(message: str) -> None:
    """The default ``warn``: the library says nothing unless asked."""


class Loaded:
    """An index ready to query, with what loading it found: the skipped entries, the cache key
    (empty for an uncached build), whether the cache answered, and the catalog files read;
    for an index a run opened (``store.run``), the signal settings its config gave
    (``configured``, as the manifest keeps them) and the signals it asked for (``signals``).
    (Not a dataclass: the import would cost a warm command more than the load.)"""

    __slots__ = (
        "configured",
        "extras",
        "files",
        "findings",
        "from_cache",
        "index",
        "key",
        "signals",
    )

    def __init__(
        self,
        index: SearchIndex,
        findings: tuple[Finding, ...],
        key: str,
        from_cache: bool,
        files: tuple[str, ...] = (),
        extras: dict[int, tuple[str, ...]] | None = None,
    ) -> None:
        self.index = index
        self.findings = findings
        self.key = key
        self.from_cache = from_cache
        self.files = files
        #: A build's ``segment._native_extras`` of its tools, for the index file's directory.
        self.extras = extras
        self.configured: dict[str, Any] = {}
        self.signals: Signals | None = None


def settings_fingerprint(params: ScoringParams, max_file_size: int) -> str:
    from toolfind.core import actions, analysis, synonyms
    from toolfind.store import index
    from toolfind.version import __version__

    return (
        f"toolfind {__version__} format {CACHE_FORMAT}/{index.INDEX_FORMAT}/"
        f"{segment.FORMAT} analysis {analysis.SETTINGS} {synonyms.VERSION} {actions.VERSION} "
        f"{params.fingerprint()} max_file_size {max_file_size}"
    )


def load_index(
    paths: Sequence[Path],
    params: ScoringParams | None = None,
    *,
    max_file_size: int = DEFAULT_MAX_BYTES,
    use_cache: bool = True,
    cache_root: Path | None = None,
    run_key: tuple[str, ...] | None = None,
    configured: Mapping[str, Any] | None = None,
    warn: Warn = _no_warn,
    progress: Progress | None = None,
) -> Loaded:
    """The index over ``paths``: from the cache when it is current, else freshly built.

    ``run_key`` names the invocation (see ``manifest.run_key``) so the fast path can find this
    index again without parsing anything; it is remembered with the signal settings its
    config gave (``configured``). Raises CatalogError for a catalog path that does not
    exist, and NothingLoaded (naming the file, its size and the limit) when a file over
    ``max_file_size`` was skipped and no other file loaded a tool;
    cache problems never raise, they are reported through ``warn``. A build reports through
    ``progress`` (files read, files found, tools loaded, tools analysed) as it goes.
    """
    from toolfind.catalog.discovery import discover

    params = params or ScoringParams()
    # Stamps are taken before anything is read (roots before the walk, each directory before
    # it is listed, each file before it is read), so an edit or a new file during the build
    # changes one; a racy stamp (manifest.racy), which might not change, is recorded with the
    # content it stood for, compared until it settles.
    taken = time.time_ns()
    cwd = working_dir()
    local = [] if cwd is None else [os.path.join(cwd, "catalogs")]  # the default catalogs
    remember = use_cache and run_key is not None
    roots = manifest.stamp_roots([*local, *paths], cwd) if remember else []
    found = discover(paths)
    fingerprint = settings_fingerprint(params, max_file_size)
    if not use_cache:
        with collector_paused():
            return _build(paths, params, max_file_size, key="", found=found, progress=progress)

    store = CacheStore(cache_root, warn)
    recorded = manifest.read(store._root, warn)
    files = manifest.files_of(found, cwd)
    digests = manifest.digests(recorded, files)
    # Everything a build's result depends on, in load order (the first of two duplicates
    # wins): the settings, what discovery skipped (its warnings), each file as given and its
    # digest. Looked up as is in the manifest (no hashing, nor hashlib import), else hashed.
    inputs = fingerprint + "".join(f"\0skipped {f}" for f in found.findings)
    inputs += "".join(f"\0{p}\0{d}" for p, d in digests.items())
    key = manifest.known_key(recorded, inputs) or cache_key(inputs)
    loaded = store.read_index(key)
    if loaded is None:
        with collector_paused():
            loaded = _build(paths, params, max_file_size, key=key, found=found, progress=progress)
            store.write_index(key, loaded)
    if run_key is not None:
        made = manifest.record(roots, found, cwd, taken, digests)
        new = manifest.remembered(
            recorded, run_key, key, made, files, digests, taken, inputs, configured
        )
    else:
        new = manifest.used(recorded, key)
    if new is not None:
        store.write_manifest(new)
    return loaded


def load_recorded(run_key: tuple[str, ...], cache_root: Path | None = None) -> Loaded | None:
    """The index an earlier invocation with the same ``run_key`` loaded (see
    ``manifest.run_key``), if none of the catalog files and directories it recorded changed
    since (with the signal settings its config gave: ``Loaded.configured``); else None, and
    the caller runs :func:`load_index`, which reports any problem. The warm path of every
    command: no config parsing, catalog discovery or hashing.
    """
    store = CacheStore(cache_root)
    found = manifest.recorded_run(store._root, run_key)
    if found is None:
        return None
    loaded = store.read_index(found[0])
    if loaded is not None:
        loaded.configured = found[1]
    return loaded


def cache_key(inputs: str) -> str:
    """The index file's key for a build's ``inputs`` (see :func:`load_index`)."""
    import hashlib  # its OpenSSL binding costs a warm run a fifth of Python's start-up

    return hashlib.sha256(inputs.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _build(
    paths: Sequence[Path],
    params: ScoringParams,
    max_file_size: int,
    *,
    key: str,
    found: Discovery,
    progress: Progress | None = None,
) -> Loaded:
    from toolfind import catalog
    from toolfind.store.index import SearchIndex

    def read(done: int, found: int, tools: int) -> None:
        if progress is not None:
            progress(done, found, tools, 0)

    result = catalog.load(paths, max_bytes=max_file_size, progress=read, found=found)
    n_files = len(result.files)
    if result.oversized and not result.tools:  # skipped, with nothing else to search
        raise NothingLoaded(str(result.oversized[0]))
    findings = result.skipped  # what was not loaded: said on stderr by every run
    loaded = catalog.defer_namespaces(result.tools, params.deferred)  # the same, unless set
    extras = segment._native_extras(loaded)  # now, not by decoding every tool again
    try:
        # The tools as the cache stores them, one buffer; their objects (the parsed JSON)
        # are then let go, and the build decodes one tool at a time: a 100k-tool build never
        # holds both every tool's objects and its index.
        tools: Sequence[Any] = ToolTable.of(loaded)
    except ValueError:  # a value marshal cannot store (not from a catalog file): as they are
        tools = loaded
    del result, loaded

    def analysed(done: int, total: int) -> None:
        if progress is not None:
            progress(n_files, n_files, total, done)

    index = SearchIndex.build(tools, params, progress=analysed)
    return Loaded(index, findings, key, False, tuple(map(str, found.files)), extras)


class _RestrictedUnpickler(Unpickler):
    """Loads only toolfind's own classes and plain builtins: a cache file that names any other
    global (``os.system`` ...) is refused before it can run."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if module == "array" and name in ("array", "_array_reconstructor"):
            return super().find_class(module, name)
        if module in _MODULES:
            obj = super().find_class(module, name)
            if isinstance(obj, type) and obj.__module__ == module:
                return obj
        raise UnpicklingError(f"global {module}.{name} is not allowed in a toolfind cache")


_BUILTINS = frozenset(
    {"set", "frozenset", "dict", "list", "tuple", "bytearray", "complex", "slice"}
)
#: The modules whose classes an index pickles (see :func:`_index_file_parts`).
_MODULES = frozenset({"toolfind.models", "toolfind.store.index", "toolfind.store.columns"})


class CacheStore:
    """The cache directory: reads that never raise, atomic writes that never corrupt."""

    def __init__(self, root: Path | str | None, warn: Warn = _no_warn) -> None:
        """``root`` None: :func:`manifest.default_cache_dir`."""
        # reads use the text: pathlib is imported to write
        self._root = os.fspath(root or manifest.default_cache_dir(os.environ))
        self.warn = warn
        self._unwritable = False

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self._root)

    def read_index(self, key: str) -> Loaded | None:
        if self._unwritable:
            return None  # not a directory (said once): nothing to read either
        path = segment.index_file(self._root, key)
        try:
            fh, st = open_own(path)
            with fh:
                payload = _load_index_file(fh, st.st_size)
            # No version check: the key names toolfind's version and the formats.
            index = payload["index"]
            index.check()  # only a SearchIndex has it
            return Loaded(index, tuple(payload["findings"]), key, True, tuple(payload["files"]))
        except FileNotFoundError:
            return None
        except FileProblem as exc:  # a FIFO named like an index file, another user's file
            self.warn(f"Ignoring cache file {path}: {exc.message}; rebuilding.")
            return None
        except NotADirectoryError:
            self._unusable(self._not_a_directory() or "is not a directory")
            return None
        except Exception as exc:  # noqa: BLE001 - any unreadable or damaged cache is a miss
            self.warn(f"Cache file {path} is unreadable ({type(exc).__name__}); rebuilding.")
            return None

    def write_index(self, key: str, loaded: Loaded) -> None:
        payload = {
            "index": loaded.index,
            "findings": list(loaded.findings),
            "files": list(loaded.files),
        }
        try:
            parts = _index_file_parts(payload, loaded.extras)
        except (ValueError, TypeError) as exc:  # a value marshal cannot store: no cache
            self.warn(f"Cannot cache this index ({exc}); working without a cache.")
            return
        self._write(self.root / os.path.basename(segment.index_file(self._root, key)), parts)

    def write_manifest(self, data: dict[str, Any]) -> None:
        """Replace the manifest with ``data`` (:func:`manifest.remembered`, :func:`manifest.used`),
        then remove the index files it no longer names (:meth:`evict`)."""
        self._written(lambda: manifest.save(self._root, data))
        if not self._unwritable:
            self.evict(manifest.live_keys(data))

    def evict(self, live: set[str]) -> int:
        """Remove the index files whose key is not in ``live`` (:func:`manifest.live_keys`),
        then, while the index files left hold more than :data:`manifest.MAX_INDEX_BYTES`,
        the least recently written (never the newest); each with an earlier version's
        semantic vectors beside it (``toolfind-<key>.<model>.vec``). Returns how many files
        went. The vector store's files are not an index's and stay (``store.vectors`` evicts
        them). A file that cannot be removed
        (another user's, or mapped on Windows) stays; a process that has an index open or
        mapped keeps reading it (POSIX), and the next run that wants it back rebuilds it."""
        try:
            names = os.listdir(self._root)
        except OSError:
            return 0
        files: dict[str, list[str]] = {}
        for name in names:
            key = _index_key(name)
            if key is not None:
                files.setdefault(key, []).append(name)
        kept = []  # (mtime, size, key) of each live index file
        for key in live & files.keys():
            try:
                st = os.lstat(
                    os.path.join(self._root, segment.INDEX_PREFIX + key + segment.INDEX_SUFFIX)
                )
            except OSError:
                continue
            kept.append((st.st_mtime_ns, st.st_size, key))
        kept.sort()
        total = sum(size for _, size, _ in kept)
        doomed = set(files) - live
        for _, size, key in kept[:-1]:  # the oldest first, never the newest
            if total <= manifest.MAX_INDEX_BYTES:
                break
            doomed.add(key)
            total -= size
        removed = 0
        for key in doomed:
            for name in files[key]:
                try:
                    os.unlink(os.path.join(self._root, name))
                    removed += 1
                except OSError:
                    continue
        return removed

    def _write(self, path: Path, chunks: Iterable[Any]) -> None:
        """Write ``chunks`` (buffers) to ``path`` in the cache directory, atomically."""

        def write() -> None:
            os.makedirs(self._root, mode=0o700, exist_ok=True)
            replace_file(path, chunks)

        self._written(write)

    def _written(self, write: Callable[[], None]) -> None:
        """Run ``write``; the first failure says, once, that the cache is not writable, and
        later writes are skipped."""
        if self._unwritable:
            return
        try:
            write()
        except OSError as exc:
            problem = self._not_a_directory()
            if problem is None:
                problem = f"is not writable ({exc.strerror or type(exc).__name__})"
            self._unusable(problem)

    def _not_a_directory(self) -> str | None:
        """Why the cache directory cannot be one, if it cannot: it is a file (or another
        non-directory), or a file stands where one of its parents should be."""
        try:
            if not stat.S_ISDIR(os.stat(self._root).st_mode):
                return "is not a directory"
        except NotADirectoryError:
            parent = os.path.dirname(os.path.abspath(self._root))
            while parent != os.path.dirname(parent) and not os.path.exists(parent):
                parent = os.path.dirname(parent)
            return f"is not usable ({parent} is not a directory)"
        except OSError:
            return None
        return None

    def _unusable(self, problem: str) -> None:
        """Say once that the cache directory cannot be used, and why; then work without it."""
        if not self._unwritable:
            self._unwritable = True
            self.warn(f"Cache directory {self._root} {problem}; working without a cache.")

    def own_files(self) -> list[tuple[str, int]]:
        """toolfind's own files in the cache directory (:func:`is_own_file`), by name, with
        their sizes in bytes (``toolfind cache info``)."""
        if not self.root.is_dir():
            return []
        out = []
        for child in sorted(self.root.iterdir()):
            if is_own_file(child.name):
                try:
                    st = child.lstat()
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    out.append((child.name, st.st_size))
        return out

    def clear(self) -> int:
        """Remove toolfind's own files (:func:`is_own_file`) from the cache directory; returns
        how many. Nothing else there is touched."""
        removed = 0
        for name, _ in self.own_files():
            child = self.root / name
            try:
                child.unlink()
                removed += 1
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise CacheError(f"cannot remove {child}: {exc.strerror}") from None
        return removed


def is_own_file(name: str) -> bool:
    """Whether a file in the cache directory is one toolfind wrote: ``toolfind-<32 hex>.pickle``,
    the tool vectors ``toolfind-<32 hex>.vectors-<model>.vec``, the manifest, their
    ``.toolfind-*.tmp`` leftovers, or the files of earlier cache formats
    (``<hex>.pickle``, ``<hex>.seg``, ``manifest.marshal`` and their temporary files)."""
    if name.startswith(".") and name.endswith(".tmp"):
        inner = name[1:].rsplit(".", 2)[0]  # ".<name>.<random>.tmp"
        return inner != name[1:] and is_own_file(inner)
    if name == MANIFEST_NAME or name == "manifest.marshal":
        return True
    if name.startswith(segment.INDEX_PREFIX) and name.endswith(segment.VECTORS_SUFFIX):
        key = name[len(segment.INDEX_PREFIX) :].split(".", 1)[
            0
        ]  # toolfind-<id>.vectors-<model>.vec
        return len(key) == 32 and _is_hex(key)
    stem, dot, suffix = name.rpartition(".")
    if name.startswith(segment.INDEX_PREFIX) and "." + suffix == segment.INDEX_SUFFIX:
        stem = stem[len(segment.INDEX_PREFIX) :]
        return len(stem) == 32 and _is_hex(stem)
    return bool(dot) and suffix in ("pickle", "seg") and len(stem) >= 16 and _is_hex(stem)


def _index_key(name: str) -> str | None:
    """The key of an index file's name (``toolfind-<key>.pickle``) or of an earlier version's
    semantic vectors beside one (``toolfind-<key>.<model>.vec``); None for any other name,
    the vector store's files (``toolfind-<id>.vectors-<model>.vec``: not an index's, evicted
    by ``store.vectors``) and an earlier reranker segment included."""
    if not name.startswith(segment.INDEX_PREFIX):
        return None
    key, dot, rest = name[len(segment.INDEX_PREFIX) :].partition(".")
    if not dot or len(key) != 32 or not _is_hex(key):
        return None
    if "." + rest == segment.INDEX_SUFFIX:
        return key
    vectors = rest.endswith(segment.VECTORS_SUFFIX) and not rest.startswith(("rerank-", "vectors-"))
    return key if vectors else None


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _index_file_parts(
    payload: dict[str, Any], extras: dict[int, tuple[str, ...]] | None = None
) -> list[Any]:
    """The chunks of an index file (see :mod:`toolfind.store.segment`): header, the directory,
    the pickle, its buffers (every column once); ``extras`` as ``segment.directory`` takes
    them. Raises ValueError or TypeError for an index that cannot be stored."""
    import pickle

    class Pickler(pickle.Pickler):
        """Pickles the columns out of band, and notes the ToolTable it pickled (the
        SearchIndex makes it while pickling: the directory needs its columns)."""

        def __init__(self, file: Any) -> None:
            super().__init__(file, protocol=5, buffer_callback=buffers.append)
            self.tool_tables: list[Any] = []

        def reducer_override(self, obj: Any) -> Any:
            if type(obj) is ToolTable:
                self.tool_tables.append(obj)
            return NotImplemented

    buffers: list[pickle.PickleBuffer] = []
    out = io.BytesIO()
    pickler = Pickler(out)
    pickler.dump(payload)
    if len(pickler.tool_tables) != 1:
        raise ValueError("the payload must hold one index")
    raws = [b.raw() for b in buffers]
    first = segment.PICKLE_PART + 1
    # id() of the objects pickle was given: alive (held by `buffers`) until this returns.
    parts_of = {id(raw.obj): part for part, raw in enumerate(raws, first)}

    def part_of(column: Any) -> int:
        try:
            return parts_of[id(column)]
        except KeyError:
            raise ValueError("an index column was not pickled out of band") from None

    directory = segment.directory(
        payload["index"], pickler.tool_tables[0], payload["findings"], part_of, extras
    )
    return segment.layout([directory, out.getbuffer(), *raws])


def _load_index_file(fh: Any, size: int) -> Any:
    """Unpickle an index file, its buffers as views of a read-only map of the file (a file
    without the magic as a plain pickle). Raises on anything malformed, a directory the fast
    path could not read included (so that a rebuild repairs it)."""
    if fh.read(len(segment.MAGIC)) != segment.MAGIC:
        fh.seek(0)
        return _RestrictedUnpickler(io.BytesIO(fh.read())).load()
    spans = segment.read_spans(fh, size)
    view = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
    parts = [view[start : start + length] for start, length in spans]
    segment.read_directory(parts[segment.DIRECTORY_PART], spans)
    pickled, buffers = parts[segment.PICKLE_PART], parts[segment.PICKLE_PART + 1 :]
    return _RestrictedUnpickler(io.BytesIO(pickled), buffers=buffers).load()
