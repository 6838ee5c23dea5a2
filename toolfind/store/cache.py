"""Load the search index from the on-disk cache, or build it and store it there.

The cache key is toolfind's version, the index format, the analysis and scoring settings and
every catalog file's path and SHA-256; a warm run hashes only the files whose stamp changed.
Each index is stored once, atomically, in ``<key>.pickle`` (layout: :mod:`toolfind.store.segment`):
a protocol-5 pickle whose columns travel out of band and load as views of a memory map, plus a
small directory of the columns the fast path reads without unpickling. ``manifest.marshal``
remembers, per invocation context, which key answered and the stamps that keep it valid.

Safety: a cache file not owned by the current user, or writable by group or others, is never
loaded; only toolfind's own classes and plain builtins may be unpickled; any unreadable, foreign
or stale file is a miss (rebuild, one line through ``warn``, carry on).
"""

from __future__ import annotations

import io
import marshal
import mmap
import os
import stat

# _pickle's unpickler: the `pickle` module imports `re`, dear for a warm command (every
# importer of this module unpickles an index or builds one).
from _pickle import Unpickler, UnpicklingError

from toolfind.catalog import DEFAULT_MAX_BYTES
from toolfind.errors import CacheError, NothingLoaded
from toolfind.models import Finding, ScoringParams
from toolfind.store import segment
from toolfind.store.columns import ToolTable, collector_paused
from toolfind.store.segment import CACHE_FORMAT, MANIFEST_NAME, Stamp, stamp

# pickle (its `re`), pathlib, typing and dataclasses cost a warm command about Python's start-up
# again: a build's and the cache commands' imports are local; loading uses the C unpickler.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from pathlib import Path
    from typing import Any

    Warn = Callable[[str], None]
    #: (files read, files found, tools loaded, tools analysed), as a build goes.
    Progress = Callable[[int, int, int, int], None]

MAX_MANIFEST_RUNS = 64
#: The files toolfind writes here (``.seg``: the separate segments of cache formats 1 and 2,
#: still listed and cleared; ``.vec``: the semantic signal's tool vectors, store/vectors.py).
_OWN_SUFFIXES = (".pickle", ".seg", ".marshal", ".vec")


def _no_warn(message: str) -> None:
    """The default ``warn``: the library says nothing unless asked."""


class Loaded:
    """An index ready to query, with what loading it found: the skipped entries, the cache key
    (empty for an uncached build), whether the cache answered, and the catalog files read.
    (Not a dataclass: the import would cost a warm command more than the load.)"""

    __slots__ = ("extras", "files", "findings", "from_cache", "index", "key")

    def __init__(
        self,
        index: Any,  # toolfind.store.index.SearchIndex (imported lazily: it pulls in the analysers)
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


def settings_fingerprint(params: ScoringParams, max_file_size: int) -> str:
    from toolfind import __version__
    from toolfind.core import analysis
    from toolfind.store import index

    return (
        f"toolfind {__version__} format {CACHE_FORMAT}/{index.INDEX_FORMAT}/"
        f"{segment.FORMAT} analysis {analysis.SETTINGS} {params.fingerprint()} "
        f"max_file_size {max_file_size}"
    )


def load_index(
    paths: Sequence[Path],
    params: ScoringParams | None = None,
    *,
    max_file_size: int = DEFAULT_MAX_BYTES,
    use_cache: bool = True,
    cache_root: Path | None = None,
    run_key: tuple[str, ...] | None = None,
    warn: Warn = _no_warn,
    progress: Progress | None = None,
) -> Loaded:
    """The index over ``paths``: from the cache when it is current, else freshly built.

    ``run_key`` names the invocation (see ``segment.run_key``) so the fast path can find this
    index again without parsing anything. Raises CatalogError for a catalog path that does not
    exist, and NothingLoaded (naming the file, its size and the limit) when a file over
    ``max_file_size`` was skipped and no other file loaded a tool;
    cache problems never raise, they are reported through ``warn``. A build reports through
    ``progress`` (files read, files found, tools loaded, tools analysed) as it goes.
    """
    from toolfind import catalog

    params = params or ScoringParams()
    files = catalog.discover(paths)
    fingerprint = settings_fingerprint(params, max_file_size)
    if not use_cache:
        with collector_paused():
            return _build(paths, params, max_file_size, key="", files=files, progress=progress)

    store = CacheStore(cache_root, warn)
    manifest = segment.read_manifest(store._root, warn)
    stats = {str(p): stamp(p) for p in files}
    digests = _digests(stats, manifest.get("shas", {}))
    # The key of these exact inputs, as a warm run recorded it: no hashing (nor hashlib import).
    inputs = fingerprint + "".join(f"\0{p}\0{d}" for p, d in sorted(digests.items()))
    known = manifest.get("keys", {}).get(inputs)
    key = known if isinstance(known, str) else cache_key(fingerprint, digests)
    loaded = store.read_index(key)
    if loaded is None:
        with collector_paused():
            loaded = _build(paths, params, max_file_size, key=key, files=files, progress=progress)
            store.write_index(key, loaded)
    if run_key is not None:
        store.remember_run(manifest, run_key, key, _dir_stamps(paths), stats, digests, inputs)
    return loaded


def load_recorded(run_key: tuple[str, ...], cache_root: Path | None = None) -> Loaded | None:
    """The index an earlier invocation with the same ``run_key`` loaded (see
    ``segment.run_key``), if none of the catalog files and directories it recorded changed
    since; else None, and the caller runs :func:`load_index`, which reports any problem.
    The warm path of every command: no config parsing, catalog discovery or hashing.
    """
    store = CacheStore(cache_root)
    key = segment.recorded_key(store._root, run_key)
    return None if key is None else store.read_index(key)


def cache_key(fingerprint: str, digests: dict[str, str]) -> str:
    import hashlib  # its OpenSSL binding costs a warm run a fifth of Python's start-up

    h = hashlib.sha256(fingerprint.encode("utf-8"))
    for path in sorted(digests):
        h.update(b"\0" + path.encode("utf-8", "surrogateescape") + b"\0" + digests[path].encode())
    return h.hexdigest()[:32]


def _build(
    paths: Sequence[Path],
    params: ScoringParams,
    max_file_size: int,
    *,
    key: str,
    files: Sequence[Path],
    progress: Progress | None = None,
) -> Loaded:
    from toolfind import catalog
    from toolfind.store.index import SearchIndex

    def read(done: int, found: int, tools: int) -> None:
        if progress is not None:
            progress(done, found, tools, 0)

    result = catalog.load(paths, max_bytes=max_file_size, progress=read)
    n_files = len(result.files)
    if result.oversized and not result.tools:  # skipped, with nothing else to search
        raise NothingLoaded(str(result.oversized[0]))
    findings = result.errors
    extras = segment._native_extras(result.tools)  # now, not by decoding every tool again
    try:
        # The tools as the cache stores them, one buffer; their objects (the parsed JSON)
        # are then let go, and the build decodes one tool at a time: a 100k-tool build never
        # holds both every tool's objects and its index.
        tools: Sequence[Any] = ToolTable.of(result.tools)
    except ValueError:  # a value marshal cannot store (not from a catalog file): as they are
        tools = result.tools
    del result

    def analysed(done: int, total: int) -> None:
        if progress is not None:
            progress(n_files, n_files, total, done)

    index = SearchIndex.build(tools, params, progress=analysed)
    return Loaded(index, findings, key, False, tuple(map(str, files)), extras)


def _digests(stats: dict[str, Stamp], known: dict[str, Any]) -> dict[str, str]:
    """SHA-256 of each file, reusing the recorded one when the file's stat is unchanged."""
    from toolfind.catalog import file_digest

    out: dict[str, str] = {}
    for path, st in stats.items():
        previous = known.get(path)
        if isinstance(previous, tuple) and len(previous) == 4 and previous[:3] == st:
            out[path] = previous[3]
        else:
            out[path] = file_digest(path)
    return out


def _dir_stamps(paths: Sequence[Path]) -> list[tuple[str, int, int, int]]:
    """Every directory under the catalog roots (and the working directory) with its stamp: an
    entry added or removed changes its directory's mtime, so no walk is needed to notice."""
    seen: set[tuple[int, int]] = set()
    out = [(".", *stamp("."))]
    for root in paths:
        out.extend((d, *stamp(d)) for d in _walk_dirs(os.fspath(root), seen))
    return out


def _walk_dirs(root: str, seen: set[tuple[int, int]]) -> Iterator[str]:
    try:
        st = os.stat(root)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    yield root
    try:
        children = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in children:
        try:
            if entry.is_dir():
                yield from _walk_dirs(entry.path, seen)
        except OSError:
            continue


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
        """``root`` None: :func:`segment.default_cache_dir`."""
        # reads use the text: pathlib is imported to write
        self._root = os.fspath(root or segment.default_cache_dir(os.environ))
        self.warn = warn
        self._unwritable = False

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self._root)

    def read_index(self, key: str) -> Loaded | None:
        path = os.path.join(self._root, f"{key}.pickle")
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                reason = segment.unsafe_reason(st)
                if reason:
                    self.warn(f"Ignoring cache file {path}: {reason}; rebuilding.")
                    return None
                payload = _load_index_file(fh, st.st_size)
            # No version check: the key names toolfind's version and the formats.
            index = payload["index"]
            index.check()  # only a SearchIndex has it
            return Loaded(index, tuple(payload["findings"]), key, True, tuple(payload["files"]))
        except FileNotFoundError:
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
        self._write(self.root / f"{key}.pickle", parts)

    def remember_run(
        self,
        manifest: dict[str, Any],
        run_key: tuple[str, ...],
        key: str,
        dirs: list[tuple[str, int, int, int]],
        stats: dict[str, Stamp],
        digests: dict[str, str],
        inputs: str = "",
    ) -> None:
        """Record which index answers this invocation, the stats that keep it valid, and
        the key of its inputs (settings and file digests)."""
        entry = {
            "key": key,
            "stamps": (*dirs, *((p, *st) for p, st in sorted(stats.items()))),
        }
        runs: dict[Any, Any] = dict(manifest.get("runs", {}))
        keys: dict[Any, Any] = dict(manifest.get("keys", {}))
        if runs.get(run_key) == entry and (not inputs or keys.get(inputs) == key):
            return
        _put_newest(runs, run_key, entry)
        shas = dict(manifest.get("shas", {}))
        shas.update({p: (*stats[p], digests[p]) for p in stats})
        if inputs:
            _put_newest(keys, inputs, key)
        new = {"format": CACHE_FORMAT, "runs": runs, "shas": shas, "keys": keys}
        self._write(self.root / MANIFEST_NAME, [marshal.dumps(new)])

    def _write(self, path: Path, chunks: Iterable[Any]) -> None:
        """Write ``chunks`` (buffers) one after another to ``path`` atomically: a
        temporary file in the same directory, then ``os.replace``, so that readers only ever
        see a complete file."""
        if self._unwritable:
            return
        import tempfile  # only a build writes

        tmp: str | None = None
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=self.root)
            with os.fdopen(fd, "wb") as fh:
                fh.writelines(chunks)
            os.replace(tmp, path)
            tmp = None
        except OSError as exc:
            self._unwritable = True  # said once: later writes are skipped
            reason = exc.strerror or type(exc).__name__
            self.warn(
                f"Cache directory {self.root} is not writable ({reason}); working without a cache."
            )
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass

    def own_files(self) -> list[tuple[str, int]]:
        """toolfind's own files in the cache directory, by name, with their sizes in bytes
        (``toolfind cache info``)."""
        if not self.root.is_dir():
            return []
        return [
            (child.name, child.stat().st_size)
            for child in sorted(self.root.iterdir())
            if child.suffix in _OWN_SUFFIXES
        ]

    def clear(self) -> int:
        """Remove toolfind's own files from the cache directory; returns how many."""
        removed = 0
        if not self.root.is_dir():
            return 0
        for child in self.root.iterdir():
            own = child.suffix in _OWN_SUFFIXES or child.name.endswith(".tmp")
            if own and child.is_file():
                try:
                    child.unlink()
                    removed += 1
                except OSError as exc:
                    raise CacheError(f"cannot remove {child}: {exc.strerror}") from None
        return removed


def _put_newest(table: dict[Any, Any], key: Any, value: Any) -> None:
    """Set ``table[key]`` as its newest entry, dropping the oldest beyond the manifest's bound."""
    table.pop(key, None)
    table[key] = value
    while len(table) > MAX_MANIFEST_RUNS:
        table.pop(next(iter(table)))


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
