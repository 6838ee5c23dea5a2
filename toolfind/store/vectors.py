"""Tool vectors: one store of the vectors of tool texts per model, each index's view of it,
and the semantic signal that fuses them with BM25F.

**The store** (:class:`VectorStore`) keeps vectors by model and tool text (a tool's text
key, ``semantic.text_key``, is part of the index: ``SearchIndex.text_key``), so every index
holding the same tool finds it (another catalog, an edited one, the next process), and an
edited catalog embeds only the tools that changed. On disk: segment files in the cache
directory, ``toolfind-<32 hex>.vectors-<model>.vec``, written atomically (``toolfind cache
clear`` removes them): a 60-byte header (magic, count, dimension, model), ``count`` 16-byte
keys in ascending order, then the vectors as little-endian float16 in the keys' order.
Fresh vectors are rounded to float16 too: a fresh and a stored vector rank alike.

A process memory-maps the segments and reads only the rows of the keys it looks up (a
binary search a segment): what it holds is bounded by the tools it asks about, never by the
cache's history. A segment that is not of this format or model, another user's, writable by
others, or not a regular file is never read; one holding a vector that is not finite or not
of unit length is removed (said once) and its vectors are computed again. Segments of a
size class are merged (:data:`TIER` at most), and segment files are evicted (:meth:`evict`):
those unused for :data:`MAX_AGE_DAYS` days, and beyond :data:`MAX_BYTES` of a model the
least recently used; a vector evicted is computed again when it is needed.

**An index's view** (:class:`ToolVectors`): its tools' vectors by one model, read from the
store as they are asked for; a list of candidates gets its missing vectors computed at once,
the whole catalog (:meth:`ToolVectors.stored`, :meth:`ToolVectors.nearest`) what is stored.

**The semantic signal** (:class:`SemanticSignal`): every tool's WordLlama vector, the query's,
and :func:`toolfind.core.fusion.fuse`.

numpy is imported here, and this module only when a signal that needs it is on: never by the
warm lexical path.
"""

from __future__ import annotations

import os
import secrets
import struct
import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

from toolfind import semantic as model
from toolfind.core import fusion
from toolfind.core import search as searching
from toolfind.store import segment
from toolfind.store.manifest import unsafe_reason
from toolfind.userfiles import FileProblem, open_own

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    from toolfind.models import TermContribution, Tool
    from toolfind.store.index import SearchIndex

    Warn = Callable[[str], None]

    class Catalog(Protocol):
        """What the vectors need of an index (``SearchIndex``)."""

        tools: Sequence[Tool]

        def enabled(self, doc: int) -> bool: ...
        def text_key(self, doc: int) -> bytes: ...
        def tie_key(self, doc: int) -> int: ...


_MAGIC = b"TFVEC\x02\x00\x00"
_HEADER = struct.Struct("<8sII44s")
KEY = 16
#: Segments of one size class (counts within a factor of 4) merged into one.
TIER = 4
#: Segment files unused for this many days are removed; a file is marked used (its mtime) at
#: most once a day by a process that reads from it.
MAX_AGE_DAYS = 30
#: A model's segment files beyond this many bytes: the least recently used are removed.
MAX_BYTES = 1 << 30
#: How far from 1 a stored vector's length may be (float16 rounding moves it by about 1e-3);
#: a zero vector (a text with no token the model knows) is allowed.
_UNIT = 0.01
#: Rows a merge copies at a time (bounds its memory).
_CHUNK = 8192
_DAY = 86400


def _quiet(message: str) -> None:
    """The default ``warn``: nothing."""


def _slug(ident: str) -> str:
    return "".join(c if c.isalnum() or c in "._-@" else "_" for c in ident)


def sound(vectors: Any) -> Any:
    """Per row (float32): finite, and of unit length (or zero)."""
    with np.errstate(all="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        finite = np.isfinite(vectors).all(axis=1)
        return finite & ((np.abs(norms - 1.0) <= _UNIT) | (norms == 0.0))


class _Segment:
    """One segment: its keys (``S16``, sorted, in memory: 16 bytes a vector) and its vectors
    (float16), read row by row from its file (``fd``, closed with the object: readers may
    still hold a segment a merge replaced) or held in
    ``vectors`` (a store without a cache directory). Rows are read, not memory-mapped: a
    file cut short under a reader is a short read (the segment is then dropped), never a
    crash."""

    __slots__ = ("count", "dim", "fd", "keys", "name", "offset", "vectors")

    def __init__(
        self,
        name: str,
        keys: Any,
        dim: int,
        vectors: Any = None,
        fd: int = -1,
        offset: int = 0,
    ) -> None:
        self.name, self.keys, self.count, self.dim = name, keys, len(keys), dim
        self.vectors, self.fd, self.offset = vectors, fd, offset

    def __del__(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)

    def rows(self, at: Any) -> Any:
        """Rows ``at`` (ascending) as float16. Raises OSError for a file cut short."""
        if self.vectors is not None:
            return self.vectors[at]
        fd = self.fd
        width = 2 * self.dim
        out = np.empty((len(at), self.dim), dtype="<f2")
        blocks = at // _CHUNK
        for block in np.unique(blocks):
            mine = np.flatnonzero(blocks == block)
            first = int(block) * _CHUNK
            if len(mine) * 16 > _CHUNK:  # many rows of this block: read it whole
                n = min(_CHUNK, self.count - first)
                data = _pread(fd, n * width, self.offset + first * width)
                whole = np.frombuffer(data, dtype="<f2").reshape(n, self.dim)
                out[mine] = whole[at[mine] - first]
                continue
            for i in mine:
                data = _pread(fd, width, self.offset + int(at[i]) * width)
                out[i] = np.frombuffer(data, dtype="<f2")
        return out


def _pread(fd: int, size: int, offset: int) -> bytes:
    data = os.pread(fd, size, offset)
    if len(data) != size:
        raise OSError(f"{size - len(data)} bytes missing")
    return data


class VectorStore:
    """Vectors of tool texts by one model (``ident``, ``dim`` wide): segment files in the
    cache directory ``root`` (None: in memory only). Thread-safe; one per process and model
    (:func:`store_for`)."""

    def __init__(self, root: str | None, ident: str, dim: int, warn: Warn = _quiet) -> None:
        self.root = root
        self.ident = ident
        self.dim = dim
        self._warn = warn
        self._suffix = f".vectors-{_slug(ident)}{segment.VECTORS_SUFFIX}"
        self._segments: list[_Segment] = []  # newest first
        self._seen: set[str] = set()
        self._bad: set[str] = set()
        self._used: set[str] = set()
        self._dir_stamp: tuple[int, int] | None = None
        self._lock = threading.RLock()
        #: Counts the changes of the segments seen: a reader of the whole catalog looks up
        #: what it misses again when it moved (``ToolVectors.stored``).
        self.generation = 0

    def __len__(self) -> int:
        """Vectors in the segments (a key in two segments counts twice)."""
        self.refresh()
        return sum(s.count for s in self._segments)

    # -- reading ---------------------------------------------------------------------------

    def refresh(self) -> bool:
        """Open the segment files written since the last look (by this process, another one,
        or a background worker), and forget those removed: only when the directory changed.
        Returns whether a new one was opened."""
        if self.root is None:
            return False
        try:
            st = os.stat(self.root)
        except OSError:
            return False
        stamp = (st.st_mtime_ns, st.st_ino)
        if stamp == self._dir_stamp:
            return False
        try:
            names = {n for n in os.listdir(self.root) if n.endswith(self._suffix)}
        except OSError:
            return False
        with self._lock:
            self._dir_stamp = stamp
            fresh = [self._open(n) for n in sorted(names - self._seen)]
            self._seen = names | (self._seen & self._bad)
            kept = [s for s in self._segments if s.name in names]
            added = [s for s in fresh if s is not None]
            # The largest first: a key is likelier there (every copy of a key is one vector).
            self._segments = sorted(kept + added, key=lambda s: -s.count)
            self.generation += bool(added)
        return bool(added)

    def _open(self, name: str) -> _Segment | None:
        """A segment file opened (its keys read), or None (said once) when it must not or
        cannot be read."""
        assert self.root is not None
        path = os.path.join(self.root, name)
        try:
            fh, st = open_own(path, buffering=0)  # never a FIFO, a link or another user's
        except FileProblem as exc:
            self._warn(f"Ignoring cache file {path}: {exc.message}.")
            return None
        except OSError:
            return None  # removed by a merge meanwhile: its vectors are in the merged one
        with fh:  # the segment keeps a descriptor of its own (a raw one: see _Segment)
            fd = os.dup(fh.fileno())
        try:
            head = os.pread(fd, _HEADER.size, 0)
            magic, count, dim, ident = (
                _HEADER.unpack(head) if len(head) == _HEADER.size else (b"", 0, 0, b"")
            )
            sound_header = (
                magic == _MAGIC
                and dim == self.dim
                and ident.rstrip(b"\0") == self.ident.encode()[:44]
                and st.st_size == _HEADER.size + count * (KEY + 2 * dim)
            )
            keys = _pread(fd, count * KEY, _HEADER.size) if sound_header else b""
        except OSError:
            os.close(fd)
            return None
        if not sound_header:
            os.close(fd)
            self._drop(name, "unreadable")
            return None
        offset = _HEADER.size + count * KEY
        return _Segment(name, np.frombuffer(keys, dtype=f"S{KEY}"), dim, fd=fd, offset=offset)

    def _drop(self, name: str, why: str) -> None:
        """Say once that segment ``name`` cannot be used (``why``), remove it and forget it:
        its vectors are computed again where they are needed."""
        with self._lock:
            if name in self._bad:
                return
            self._bad.add(name)
            self._segments = [s for s in self._segments if s.name != name]
        path = name if self.root is None else os.path.join(self.root, name)
        self._warn(f"Cache file {path} is {why}; its vectors will be computed again.")
        if self.root is not None:
            try:
                os.unlink(path)
            except OSError:
                pass

    def get(self, keys: Sequence[bytes]) -> tuple[Any, Any]:
        """The stored vector of each key: (a ``(len(keys), dim)`` float32 array, a bool array:
        found). Reads only those rows; a key not found has a zero row."""
        n = len(keys)
        out = np.zeros((n, self.dim), dtype=np.float32)
        found = np.zeros(n, dtype=bool)
        if not n:
            return out, found
        wanted = np.frombuffer(b"".join(keys), dtype=f"S{KEY}")
        self.refresh()
        for seg in list(self._segments):
            todo = np.flatnonzero(~found)
            if not len(todo):
                break
            if not seg.count:
                continue
            asked = wanted[todo]
            at = np.minimum(np.searchsorted(seg.keys, asked), seg.count - 1)
            hit = seg.keys[at] == asked
            if not hit.any():
                continue
            try:
                rows = seg.rows(at[hit]).astype(np.float32)
            except OSError:
                self._drop(seg.name, "cut short")
                continue
            if not sound(rows).all():
                self._drop(seg.name, "damaged (a vector that is not finite or not of unit length)")
                continue
            out[todo[hit]] = rows
            found[todo[hit]] = True
            self._mark_used(seg.name)
        return out, found

    def _mark_used(self, name: str) -> None:
        """Touch a segment file a process read from (once a day at most): eviction removes
        the files no process used for :data:`MAX_AGE_DAYS` days."""
        if self.root is None or name in self._used:
            return
        self._used.add(name)
        path = os.path.join(self.root, name)
        try:
            if os.stat(path).st_mtime < time.time() - _DAY:
                os.utime(path)
        except OSError:
            pass

    # -- writing ----------------------------------------------------------------------------

    def add(self, keys: Sequence[bytes], vectors: Any) -> Any:
        """Store ``vectors`` (rows of float32, rounded here to float16 as they are written)
        under ``keys``: a new segment (in memory, or a file with a cache directory), merged
        with others of its size class. Returns the rounded vectors. Raises ValueError for a
        vector that is not finite or not of unit length (nothing is stored)."""
        with np.errstate(all="ignore"):  # a value too large for float16: refused just below
            half = np.ascontiguousarray(vectors, dtype="<f2").reshape(len(keys), self.dim)
        rounded = half.astype(np.float32)
        if not sound(rounded).all():
            raise ValueError("a vector to store is not finite or not of unit length")
        if not len(keys):
            return rounded
        packed = np.frombuffer(b"".join(keys), dtype=f"S{KEY}")
        order = np.argsort(packed, kind="stable")
        unique = np.ones(len(order), dtype=bool)
        unique[1:] = packed[order][1:] != packed[order][:-1]
        order = order[unique]
        sorted_keys, sorted_half = packed[order], half[order]
        if self.root is None:
            with self._lock:
                name = f"memory-{self.generation}"
                self._segments.insert(0, _Segment(name, sorted_keys, self.dim, sorted_half))
                self.generation += 1
            return rounded
        self._write(len(order), [sorted_keys.tobytes(), sorted_half.tobytes()])
        self.compact()
        return rounded

    def _write(self, count: int, chunks: Any) -> str | None:
        """A new segment file of ``count`` rows (its keys and vectors in ``chunks``); its
        name, or None when it could not be written (said once)."""
        from toolfind.userfiles import replace_file

        assert self.root is not None
        name = f"{segment.INDEX_PREFIX}{secrets.token_hex(16)}{self._suffix}"
        header = _HEADER.pack(_MAGIC, count, self.dim, self.ident.encode()[:44])
        try:
            os.makedirs(self.root, mode=0o700, exist_ok=True)
            replace_file(os.path.join(self.root, name), [header, *chunks])
        except OSError as exc:
            self._warn(f"Cannot write tool vectors in {self.root}: {exc}")
            return None
        self._dir_stamp = None  # look again
        return name

    def compact(self) -> None:
        """Merge the segments of each size class holding :data:`TIER` or more (then the
        class they make, and so on), and evict old segment files (:meth:`evict`)."""
        self.refresh()
        while True:
            classes: dict[int, list[_Segment]] = {}
            for seg in self._segments:
                classes.setdefault(max(0, seg.count.bit_length() - 1) // 2, []).append(seg)
            group = next((g for _, g in sorted(classes.items()) if len(g) >= TIER), None)
            if group is None or self._merge(group) is None:
                break
            self.refresh()
        self.evict()

    def _merge(self, group: list[_Segment]) -> str | None:
        """One segment file of ``group``'s vectors (a key in several: the first segment's;
        an unsound vector dropped), written a chunk at a time; the group's files removed.
        A merge that races another process's loses nothing: a vector missing later is
        computed again."""
        keys = np.concatenate([s.keys for s in group])
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        unique = np.ones(len(order), dtype=bool)
        unique[1:] = ordered[1:] != ordered[:-1]
        order = order[unique]
        ends = np.cumsum([s.count for s in group])
        owner = np.searchsorted(ends, order, side="right")
        row = order - (ends - [s.count for s in group])[owner]
        keep = np.ones(len(order), dtype=bool)
        try:
            for start in range(0, len(order), _CHUNK):
                part = slice(start, start + _CHUNK)
                keep[part] = sound(self._rows(group, owner[part], row[part]).astype(np.float32))
        except OSError:
            return None  # a file cut short: its reader drops it, the next merge goes on
        owner, row = owner[keep], row[keep]

        def chunks() -> Any:
            yield keys[order[keep]].tobytes()
            for start in range(0, len(owner), _CHUNK):
                part = slice(start, start + _CHUNK)
                yield self._rows(group, owner[part], row[part]).tobytes()

        name = self._write(len(owner), chunks())
        if name is None:
            return None
        assert self.root is not None
        for seg in group:
            try:
                os.unlink(os.path.join(self.root, seg.name))
            except OSError:
                pass
        return name

    def _rows(self, group: list[_Segment], owner: Any, row: Any) -> Any:
        """Rows ``row`` of segments ``group[owner]`` (float16), in order."""
        out = np.empty((len(row), self.dim), dtype="<f2")
        for i, seg in enumerate(group):
            mine = owner == i
            if mine.any():
                out[mine] = seg.rows(row[mine])
        return out

    def evict(self, now: float | None = None) -> None:
        """Remove this model's segment files unused for :data:`MAX_AGE_DAYS` days, then the
        least recently used until they hold at most :data:`MAX_BYTES` (never the newest),
        and vector files of an earlier format (any model): the documented policy
        (docs/cache-and-speed.md). Only files this user owns are touched."""
        if self.root is None:
            return
        now = time.time() if now is None else now
        files = []
        try:
            names = os.listdir(self.root)
        except OSError:
            return
        for name in names:
            own = name.startswith(segment.INDEX_PREFIX) and name.endswith(segment.VECTORS_SUFFIX)
            if not own or (".vectors-" in name and not name.endswith(self._suffix)):
                continue
            path = os.path.join(self.root, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if unsafe_reason(st):
                continue
            if ".vectors-" not in name or st.st_mtime < now - MAX_AGE_DAYS * _DAY:
                _unlink(path)  # an earlier format's, or unused too long
            else:
                files.append((st.st_mtime, st.st_size, path))
        files.sort()
        total = sum(size for _, size, _ in files)
        for _, size, path in files[:-1]:
            if total <= MAX_BYTES:
                break
            _unlink(path)
            total -= size


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_STORES: dict[tuple[str | None, str], VectorStore] = {}
_SHARED = threading.Lock()


def store_for(root: str | None, ident: str, dim: int, warn: Warn = _quiet) -> VectorStore:
    """The process's vector store of model ``ident`` in cache directory ``root`` (None:
    memory only)."""
    with _SHARED:
        found = _STORES.get((root, ident))
        if found is None:
            found = _STORES[(root, ident)] = VectorStore(root, ident, dim, warn)
        return found


def cache_root(use_cache: bool = True, root: str | os.PathLike[str] | None = None) -> str | None:
    """The directory vectors are kept in (absolute): ``root``, else the cache directory; None
    without a cache (``use_cache`` false)."""
    if not use_cache:
        return None
    from toolfind.store.manifest import default_cache_dir

    return os.path.abspath(root or default_cache_dir(os.environ))


# -- one index's view -------------------------------------------------------------------------


def tool_text(tool: Tool) -> str:
    """The text a tool is embedded from (``semantic.tool_text``)."""
    return model.tool_text(tool.name, tool.namespace, tool.description, tool.title)


class ToolVectors:
    """One index's tools' vectors by one model (``store``'s), rows by tool id: read from the
    store as they are asked for, and, for a list of candidates, computed at once by
    ``embed`` (texts to a float32 array of unit rows) when missing. Thread-safe."""

    def __init__(
        self, index: Catalog, store: VectorStore, embed: Callable[[list[str]], Any]
    ) -> None:
        self.index = index
        self.store = store
        self.embed = embed
        self._rows: dict[int, Any] = {}
        self._matrix: Any = None
        self._have: Any = None
        self._seen = -1
        self._lock = threading.Lock()

    def of(self, docs: Sequence[int]) -> Any:
        """The vectors of ``docs`` (a ``(len(docs), dim)`` float32 array): stored, or
        computed now and stored. Raises ValueError when the model gives a vector that is not
        finite or not of unit length (a damaged model)."""
        rows = self._rows
        missing = list(dict.fromkeys(d for d in docs if d not in rows))
        if missing:
            keys = [self.index.text_key(d) for d in missing]
            found, have = self.store.get(keys)
            absent = [i for i, ok in enumerate(have) if not ok]
            if absent:
                texts = [tool_text(self.index.tools[missing[i]]) for i in absent]
                computed = self.store.add([keys[i] for i in absent], self.embed(texts))
                found[absent] = computed
            with self._lock:
                for d, vector in zip(missing, found, strict=True):
                    rows[d] = vector
        out = np.empty((len(docs), self.store.dim), dtype=np.float32)
        for i, d in enumerate(docs):
            out[i] = rows[d]
        return out

    def missing(self) -> list[int]:
        """The enabled tools with no stored vector (yet)."""
        _, have = self.stored()
        index = self.index
        return [d for d in range(len(index.tools)) if index.enabled(d) and not have[d]]

    def stored(self) -> tuple[Any, Any]:
        """The whole catalog's stored vectors: a ``(tools, dim)`` float32 matrix (a zero row
        for a tool without one) and which tools have one; what is missing is looked up again
        when the store changed (a background embedding writes as it goes)."""
        with self._lock:
            store, index = self.store, self.index
            store.refresh()
            seen = store.generation
            n = len(index.tools)
            if self._matrix is not None and seen == self._seen:
                return self._matrix, self._have
            self._seen = seen
            done = np.zeros(n, dtype=bool) if self._have is None else self._have
            todo = [d for d in range(n) if not done[d] and index.enabled(d)]
            found, have = store.get([index.text_key(d) for d in todo])
            if self._matrix is None and len(todo) == n:  # the first look: as found
                self._matrix, self._have = found, have
            else:
                if self._matrix is None:
                    self._matrix = np.zeros((n, store.dim), dtype=np.float32)
                    self._have = done
                where = np.asarray(todo, dtype=np.intp)[have]
                self._matrix[where] = found[have]
                self._have[where] = True
            return self._matrix, self._have

    def nearest(
        self, vector: Any, k: int, keep: Callable[[int], bool] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` tools whose stored vectors are closest to ``vector`` (a unit vector of
        the model, or several, one a row: a tool's cosine is then its greatest), by cosine,
        closest first (ties by tool id), among the enabled tools ``keep`` keeps: one matrix
        product over the catalog (einsum: OpenBLAS's threads cost a busy machine more than
        the product)."""
        matrix, have = self.stored()
        if k <= 0 or not have.any():
            return []
        query = np.asarray(vector, dtype=np.float32)
        if query.ndim == 1:
            sims = np.einsum("ij,j->i", matrix, query)
        else:
            sims = np.einsum("ij,kj->ik", matrix, query).max(axis=1)
        if not have.all():
            sims[~have] = -np.inf
        n, want = len(sims), min(len(sims), k * 4)
        while True:
            part = np.argpartition(-sims, want - 1)[:want] if want < n else np.arange(n)
            order = part[np.lexsort((part, -sims[part]))]
            out = [
                (int(d), float(sims[d]))
                for d in order
                if have[d] and self.index.enabled(int(d)) and (keep is None or keep(int(d)))
            ]
            if len(out) >= k or want >= n:
                return out[:k]
            want = min(n, want * 8)


# -- the semantic signal ----------------------------------------------------------------------


class SemanticSignal:
    """Tool vectors for one index, the embedder, and the fusion weight: what
    ``SearchIndex.search`` needs to fuse the semantic signal in."""

    __slots__ = ("embedder", "matrix", "weight")

    def __init__(self, embedder: model.Embedder, matrix: Any, weight: float) -> None:
        self.embedder = embedder
        self.matrix = matrix  # (tools, dim) float32, unit rows (zeros for a disabled tool)
        self.weight = weight

    def with_weight(self, weight: float) -> SemanticSignal:
        return SemanticSignal(self.embedder, self.matrix, weight)

    def explained(
        self, lexical: tuple[TermContribution, ...], scale: float, semantic: float
    ) -> tuple[TermContribution, ...]:
        """A fused hit's explanation: each BM25F contribution scaled to its share of the fused
        score (``scale``: :meth:`run`'s), then one ``semantic`` row (field ``semantic``, term
        ``(meaning)``, ``weight`` the fusion weight, ``tf`` the normalised similarity) holding
        the semantic share (``semantic``)."""
        from toolfind.models import TermContribution

        rows = [
            TermContribution(
                c.term, c.field, c.tf, c.idf, c.length_norm, c.weight, c.score * scale, c.query_word
            )
            for c in lexical
        ]
        weight = self.weight
        similarity = semantic / weight if weight > 0.0 else 0.0
        rows.append(
            TermContribution("(meaning)", "semantic", similarity, 0.0, 1.0, weight, semantic)
        )
        return tuple(rows)

    def run(
        self,
        source: Any,
        query: str,
        limit: int,
        keep: Callable[[int], bool] | None,
        min_score: float | None,
    ) -> tuple[
        searching.Found,
        list[tuple[int, float, float]],
        list[tuple[int, float, float]],
        float,
        Any,
    ]:
        """(what :func:`toolfind.core.search.run` found, exact hits, ranked hits, lexical
        scale, :meth:`cosines` of the query or None when nothing is ranked): each hit a
        (tool id, fused score, semantic part); the scale turns a BM25F contribution into its
        share of a fused score."""
        pool = max(limit, fusion.POOL)
        found = searching.run(source, query, pool, keep=keep)
        if limit <= 0:
            return found, [], [], 0.0, None
        sims = self.cosines(query)
        if len(sims):
            lo, hi = float(sims.min()), float(sims.max())
        else:
            lo = hi = 0.0
        closest: list[int] = []
        if hi > lo and model.knows_a_word(self.embedder, query):
            closest = self._closest(sims, pool, source.enabled, keep)
        exact, lexical = found.exact, found.ranked
        max_lex = max((s for _, s in (*exact, *lexical)), default=0.0)
        covered = fusion.term_coverage(found.matched, found.words)
        exact_f, ranked = fusion.fuse(
            exact,
            lexical,
            closest,
            lambda d: float(sims[d]),
            lo,
            hi,
            weight=self.weight,
            limit=limit,
            tie_key=source.tie_key,
            min_score=min_score,
            coverage=covered,
            agree=found.agree,
        )
        lexical_share = (1.0 - self.weight) * covered**fusion.COVERAGE_POWER
        scale = lexical_share / max_lex if max_lex > 0.0 else 0.0
        return found, exact_f, ranked, scale, sims

    def cosines(self, query: str) -> Any:
        """The cosine of ``query`` and every tool (a float32 array by tool id)."""
        qv = self.embedder.embed_one(query)
        # einsum, not ``@``: a matrix-vector product through OpenBLAS starts its threads, and
        # on a busy machine waiting for them cost 30-60 ms against 0.3 ms in one thread
        # (10k tools, measured with benchmarks/semantic_perf.py).
        return np.einsum("ij,j->i", self.matrix, qv)

    def similarities(self, hits: Sequence[tuple[int, float, float]]) -> list[float]:
        """Each fused hit's normalised similarity (its semantic part over the weight)."""
        if self.weight <= 0.0:
            return [0.0] * len(hits)
        return [part / self.weight for *_, part in hits]

    def _closest(
        self,
        sims: Any,
        pool: int,
        enabled: Callable[[int], bool],
        keep: Callable[[int], bool] | None,
    ) -> list[int]:
        n = len(sims)
        want = min(n, pool * 4)
        while True:
            part = np.argpartition(-sims, want - 1)[:want] if want < n else np.arange(n)
            order = part[np.argsort(-sims[part], kind="stable")]
            out = [int(d) for d in order if enabled(int(d)) and (keep is None or keep(int(d)))]
            if len(out) >= pool or want >= n:
                return out[:pool]
            want = min(n, want * 8)


def semantic_matrix(
    index: Catalog, embedder: model.Embedder, root: str | None, warn: Warn = _quiet
) -> Any:
    """Every tool's vector of the semantic model (zeros for a disabled tool): from the
    store in ``root`` (None: memory only), the missing ones computed and stored."""
    store = store_for(root, model.model_id(), embedder.dim, warn)
    vectors = ToolVectors(index, store, embedder.embed)
    enabled = [d for d in range(len(index.tools)) if index.enabled(d)]
    matrix = np.zeros((len(index.tools), embedder.dim), dtype=np.float32)
    if enabled:
        matrix[enabled] = vectors.of(enabled)
    return matrix


def enable(
    index: SearchIndex,
    want: bool | None,
    *,
    weight: float = fusion.DEFAULT_WEIGHT,
    use_cache: bool = True,
    root: str | os.PathLike[str] | None = None,
    warn: Warn = _quiet,
) -> bool:
    """Turn the semantic signal on for ``index`` as asked: ``want`` False: off; None: on when
    the extra is installed; True: on, or raise SemanticUnavailable (the one line saying how
    to get it). Returns whether it is on. The tools' vectors are read from the store (in
    ``root``, else the cache directory; none unless ``use_cache``), the missing ones
    computed now."""
    if want is False:
        index.use_semantic(None)
        return False
    if not model.available():
        if want:
            from toolfind.errors import SemanticUnavailable

            raise SemanticUnavailable(model.INSTALL_HINT)
        return False
    embedder = model.load()
    matrix = semantic_matrix(index, embedder, cache_root(use_cache, root), warn)
    index.use_semantic(SemanticSignal(embedder, matrix, weight))
    return True
