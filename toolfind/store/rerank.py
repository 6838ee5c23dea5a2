"""The rerank stage: the first stage's top candidates re-scored by a sentence transformer.

After the first stage (BM25F, or BM25F fused with the semantic signal) has ranked the
catalog, :class:`Reranker` takes its top ``depth`` candidates (50 by default), embeds the
query once with all-MiniLM-L6-v2 (:mod:`toolfind.semantic.minilm`), and mixes each
candidate's first-stage score with its cosine similarity to the query
(:func:`toolfind.core.fusion.rerank`). Only candidates are ever embedded, so the cost does
not grow with the catalog: a tool's vector is computed the first time it is a candidate
(the uncached candidates of a query in one batch) and kept.

Tool vectors are kept in memory and on disk (:class:`VectorStore`), keyed by the model and
the tool's text, so that any index holding the same tool (another run, a rebuilt catalog,
serve-mcp's next start) finds it. On disk they are segment files in the cache directory,
``toolfind-<32 hex>.rerank-<model>.vec`` (written atomically like the index; ``toolfind
cache clear`` removes them): a 64-byte header (magic, count, dimension, model), ``count``
16-byte keys (the first half of the text's SHA-256), then the vectors as little-endian
float16. Fresh vectors are rounded to float16 as well, so a fresh and a stored vector rank
alike. A damaged or foreign segment is skipped (and its vectors computed again).

serve-mcp embeds every tool in the background after it starts (:func:`warm_in_background`):
a child process at the lowest CPU priority that writes segments, which queries pick up; until
then a query reranks with what is stored and embeds its own missing candidates.

numpy and the model are imported only when the stage runs: never by the lexical path.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import secrets
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from importlib import util as _util

from toolfind.core import fusion
from toolfind.semantic import models
from toolfind.semantic import tool_text as _tool_text
from toolfind.store import segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from toolfind.models import TermContribution
    from toolfind.semantic.minilm import Encoder

    Warn = Callable[[str], None]

#: Candidates of the first stage that are re-scored, when no setting says otherwise.
DEFAULT_DEPTH = 50
#: Largest depth a setting may ask for: each candidate is embedded once, so a deeper stage
#: costs more only while vectors are missing.
MAX_DEPTH = 1000

_MAGIC = b"TFRRK\x01\x00\x00"
_HEADER = struct.Struct("<8sII44s")
_KEY = 16
#: Segments beyond this are merged into one when vectors are added.
_MAX_SEGMENTS = 8


def _quiet(message: str) -> None:
    """The default ``warn``: nothing."""


def key_of(text: str) -> bytes:
    """A tool text's key in the store: the first half of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:_KEY]


def tool_text(tool: Any) -> str:
    """The text a tool is embedded from (the semantic signal's: names as words, title,
    description)."""
    return _tool_text(tool.name, tool.namespace, tool.description, tool.title)


def runnable() -> bool:
    """Whether the reranker can run here: the semantic extra's numpy, tokenizers and
    safetensors are installed (the model is another question: :func:`models.status`)."""
    for module in ("numpy", "tokenizers", "safetensors"):
        try:
            if _util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


#: Said when the model is there but what runs it is not.
EXTRA_HINT = (
    "reranking needs numpy, tokenizers and safetensors: pip install 'toolfind[semantic]'"
    " (then `toolfind model fetch` if the model is not installed yet)"
)


# -- the stored vectors ------------------------------------------------------------------------


class VectorStore:
    """Vectors of tool texts for one model: in memory, and in segment files in the cache
    directory ``root`` (None: in memory only). Thread-safe; shared by every index of a
    process (:func:`store_for`)."""

    def __init__(self, root: str | None, ident: str, dim: int, warn: Warn = _quiet) -> None:
        import numpy as np

        self._np = np
        self.root = root
        self.ident = ident
        self.dim = dim
        self._warn = warn
        slug = "".join(c if c.isalnum() or c in "._-" else "_" for c in ident)
        self._suffix = f".rerank-{slug}{segment.VECTORS_SUFFIX}"
        self._rows: dict[bytes, int] = {}
        self._matrix = np.zeros((256, dim), dtype=np.float32)
        self._count = 0
        self._seen: set[str] = set()
        self._dir_stamp: tuple[int, int] | None = None
        self._lock = threading.Lock()
        self._loaded = False  # the segments are read on first use, not when attached

    @property
    def matrix(self) -> Any:
        """Every stored vector, one row each (rows beyond :meth:`rows_of`'s are unused)."""
        return self._matrix

    def __len__(self) -> int:
        if not self._loaded:
            self.refresh()
        return self._count

    def rows_of(self, keys: Sequence[bytes]) -> list[int]:
        """The row of each key, -1 for a key not stored."""
        if not self._loaded:
            self.refresh()
        rows = self._rows
        return [rows.get(k, -1) for k in keys]

    def refresh(self) -> None:
        """Read the segment files written since the last look (by this process, another one,
        or the background worker): only when the directory changed."""
        self._loaded = True
        if self.root is None:
            return
        try:
            st = os.stat(self.root)
        except OSError:
            return
        stamp = (st.st_mtime_ns, st.st_ino)
        if stamp == self._dir_stamp:
            return
        try:
            names = [n for n in os.listdir(self.root) if n.endswith(self._suffix)]
        except OSError:
            return
        with self._lock:
            self._dir_stamp = stamp
            for name in sorted(set(names) - self._seen):
                self._seen.add(name)
                found = self._read(os.path.join(self.root, name))
                if found is not None:
                    self._add(*found)

    def _read(self, path: str) -> tuple[list[bytes], Any] | None:
        from toolfind.userfiles import FileProblem, open_own

        np = self._np
        try:
            fh, _ = open_own(path)  # never a FIFO or another user's file
            with fh:
                data = fh.read()
        except FileProblem as exc:
            self._warn(f"Ignoring cache file {path}: {exc.message}.")
            return None
        except OSError:  # removed by a merge meanwhile: its vectors are in the merged one
            return None
        try:
            magic, count, dim, ident = _HEADER.unpack_from(data)
        except struct.error:
            magic, count, dim, ident = b"", 0, 0, b""
        size = _HEADER.size + count * (_KEY + 2 * dim)
        if (
            magic != _MAGIC
            or dim != self.dim
            or ident.rstrip(b"\0") != self.ident.encode()[:44]
            or len(data) != size
        ):
            self._warn(f"Cache file {path} is unreadable; its vectors will be computed again.")
            return None
        start = _HEADER.size
        keys = [data[start + i * _KEY : start + (i + 1) * _KEY] for i in range(count)]
        offset = start + count * _KEY
        vectors = np.frombuffer(data, dtype="<f2", count=count * dim, offset=offset)
        return keys, vectors.reshape(count, dim).astype(np.float32)

    def _add(self, keys: Sequence[bytes], vectors: Any) -> None:
        """Keep ``vectors`` under ``keys`` in memory (a key already there keeps its row).
        Called with the lock held."""
        np = self._np
        fresh = [i for i, k in enumerate(keys) if k not in self._rows]
        if not fresh:
            return
        need = self._count + len(fresh)
        if need > len(self._matrix):
            # A new, larger matrix: a reader holding the old one still finds its rows there.
            grown = np.zeros((max(need, 2 * len(self._matrix)), self.dim), dtype=np.float32)
            grown[: self._count] = self._matrix[: self._count]
            self._matrix = grown
        self._matrix[self._count : need] = vectors[fresh]
        for offset, i in enumerate(fresh):
            self._rows[keys[i]] = self._count + offset
        self._count = need

    def add(self, keys: Sequence[bytes], vectors: Any) -> Any:
        """Store ``vectors`` (rows of float32, rounded here to float16 as they are written)
        under ``keys``, in memory and, with a cache directory, as a new segment file.
        Returns the rounded vectors."""
        np = self._np
        half = np.ascontiguousarray(vectors, dtype="<f2")
        rounded = half.astype(np.float32)
        with self._lock:
            self._add(keys, rounded)
        if self.root is not None and len(keys):
            self._write(list(keys), half)
        return rounded

    def _write(self, keys: list[bytes], half: Any) -> None:
        from toolfind.userfiles import replace_file

        name = f"{segment.INDEX_PREFIX}{secrets.token_hex(16)}{self._suffix}"
        header = _HEADER.pack(_MAGIC, len(keys), self.dim, self.ident.encode()[:44])
        assert self.root is not None
        try:
            os.makedirs(self.root, mode=0o700, exist_ok=True)
            replace_file(os.path.join(self.root, name), [header, b"".join(keys), half.tobytes()])
        except OSError as exc:
            self._warn(f"Cannot write the reranker's vectors in {self.root}: {exc}")
            return
        with self._lock:
            self._seen.add(name)
        self._merge_if_many()

    def _merge_if_many(self) -> None:
        """Merge the segment files into one when there are more than :data:`_MAX_SEGMENTS`
        (a merge that races another process's loses nothing: a vector missing later is
        computed again)."""
        assert self.root is not None
        try:
            names = sorted(n for n in os.listdir(self.root) if n.endswith(self._suffix))
        except OSError:
            return
        if len(names) <= _MAX_SEGMENTS:
            return
        self.refresh()
        with self._lock:
            keys = sorted(self._rows, key=self._rows.__getitem__)
            rows = [self._rows[k] for k in keys]
            half = self._matrix[rows].astype("<f2")
        from toolfind.userfiles import replace_file

        name = f"{segment.INDEX_PREFIX}{secrets.token_hex(16)}{self._suffix}"
        header = _HEADER.pack(_MAGIC, len(keys), self.dim, self.ident.encode()[:44])
        try:
            replace_file(os.path.join(self.root, name), [header, b"".join(keys), half.tobytes()])
        except OSError:
            return
        with self._lock:
            self._seen.add(name)
        for old in names:
            try:
                os.unlink(os.path.join(self.root, old))
            except OSError:
                pass


_STORES: dict[tuple[str | None, str], VectorStore] = {}
_ENCODERS: dict[str, Encoder] = {}
_SHARED = threading.Lock()


def store_for(root: str | None, model: models.ModelSpec, warn: Warn = _quiet) -> VectorStore:
    """The process's vector store of ``model`` in cache directory ``root`` (None: memory)."""
    with _SHARED:
        found = _STORES.get((root, model.ident))
        if found is None:
            found = _STORES[(root, model.ident)] = VectorStore(root, model.ident, 384, warn)
        return found


def encoder_for(name: str) -> Encoder:
    """The process's encoder of model ``name``, loaded once (about 0.3 s). Raises
    ModelUnavailable when the model is not installed."""
    with _SHARED:
        found = _ENCODERS.get(name)
        if found is None:
            from toolfind.semantic.minilm import Encoder

            found = _ENCODERS[name] = Encoder(models.require(name))
        return found


# -- the stage ---------------------------------------------------------------------------------


class Reranker:
    """The rerank stage of one index: its model, weight and depth, and which stored vector
    each of its tools has (found on first use). ``SearchIndex.search`` calls :meth:`run`.
    ``warm_on_first_query`` (serve-mcp): the first query that reranks starts
    :func:`warm_in_background` for the index."""

    __slots__ = (
        "_doc_rows",
        "_doc_keys",
        "depth",
        "model",
        "store",
        "warm_on_first_query",
        "weight",
    )

    def __init__(
        self,
        model: models.ModelSpec,
        store: VectorStore,
        *,
        weight: float = fusion.RERANK_WEIGHT,
        depth: int = DEFAULT_DEPTH,
    ) -> None:
        from toolfind.errors import ConfigError

        if not 0.0 <= weight <= 1.0:
            raise ConfigError(f"rerank weight must be between 0 and 1, not {weight}")
        if not 1 <= depth <= MAX_DEPTH:
            raise ConfigError(f"rerank depth must be between 1 and {MAX_DEPTH}, not {depth}")
        self.model = model
        self.store = store
        self.weight = weight
        self.depth = depth
        self._doc_rows: dict[int, int] = {}
        self._doc_keys: dict[int, bytes] = {}
        self.warm_on_first_query = False

    def with_settings(self, weight: float | None = None, depth: int | None = None) -> Reranker:
        """The same stage with another weight or depth (``eval`` and ``tune`` try several)."""
        other = Reranker(
            self.model,
            self.store,
            weight=self.weight if weight is None else weight,
            depth=self.depth if depth is None else depth,
        )
        other._doc_rows, other._doc_keys = self._doc_rows, self._doc_keys
        return other

    def run(
        self,
        index: Any,
        query: str,
        exact: Sequence[Sequence[Any]],
        ranked: Sequence[Sequence[Any]],
        limit: int,
        min_score: float | None,
    ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], tuple[float, float]]:
        """Re-score the first stage's ``exact`` and ``ranked`` entries (``(doc, score)`` or
        ``(doc, score, semantic part)``): the exact ones and the first ``depth`` ranked ones
        get the mix; ranked ones past the depth (a search asking for more hits than the
        depth) keep their order below them, as if their similarity were the lowest. Returns
        (exact, ranked, factor), each entry ``(doc, score, semantic part, rerank part,
        cosine or None)``, exact hits first in their order, the ranked by (-score, name), at
        most ``limit`` in all, those below ``min_score`` dropped; and the mix: (the factor that
        turns a first-stage score's part into its share of the final score, the weight used
        for this query: :func:`toolfind.core.fusion.rerank_weight`), for ``--explain``."""
        if self.warm_on_first_query:
            self.warm_on_first_query = False
            warm_in_background(index)
        head = list(exact) + list(ranked[: self.depth])
        docs = [int(e[0]) for e in head]
        if not docs or limit <= 0:
            return [], [], (0.0, self.weight)
        cosines = self.cosines(index, query, docs)
        weight = fusion.rerank_weight(self.weight, query)
        mixed, factor = fusion.rerank([float(e[1]) for e in head], cosines, weight)
        entries: list[tuple[Any, ...]] = [
            (doc, final, _part(e) * factor, context, cos)
            for doc, e, (final, context), cos in zip(docs, head, mixed, cosines, strict=True)
        ]
        entries += [
            (int(e[0]), max(0.0, float(e[1])) * factor, _part(e) * factor, 0.0, None)
            for e in ranked[self.depth :]
        ]
        out_exact = entries[: len(exact)][:limit]
        rest = [e for e in entries[len(exact) :] if min_score is None or e[1] >= min_score]
        rest.sort(key=lambda e: (-e[1], index.tie_key(e[0])))
        return out_exact, rest[: max(0, limit - len(out_exact))], (factor, weight)

    def cosines(
        self, index: Any, query: str, docs: Sequence[int], query_vector: Any = None
    ) -> list[float]:
        """The cosine similarity of ``query`` to each of ``docs`` (tools of ``index``): the
        query embedded once (unless its vector is given: :meth:`embed_queries`), the tools'
        vectors from the store (the missing ones embedded in one batch and stored)."""
        encoder = encoder_for(self.model.name)
        qv = encoder.embed_one(query) if query_vector is None else query_vector
        rows = self._rows(index, docs, encoder)
        # einsum, not ``@``: OpenBLAS's threads cost a busy machine tens of milliseconds for
        # a product this small (docs/SEMANTIC.md).
        result: list[float] = encoder._np.einsum("ij,j->i", self.store.matrix[rows], qv).tolist()
        return result

    def embed_queries(self, queries: Sequence[str]) -> dict[str, Any]:
        """The vectors of many queries, embedded in batches of similar length (much faster
        than one at a time): ``eval``/``tune`` over thousands of labelled queries."""
        unique = list(dict.fromkeys(queries))
        return dict(zip(unique, encoder_for(self.model.name).embed(unique), strict=True))

    def _rows(self, index: Any, docs: Sequence[int], encoder: Encoder) -> list[int]:
        """The store's row of each doc's vector; the missing ones embedded in one batch."""
        doc_rows = self._doc_rows
        if all(d in doc_rows for d in docs):
            return [doc_rows[d] for d in docs]
        keys = [self._key(index, d) for d in docs]
        rows = self.store.rows_of(keys)
        if -1 in rows:
            self.store.refresh()  # the background worker may have written them
            rows = self.store.rows_of(keys)
        missing = list(dict.fromkeys(k for k, r in zip(keys, rows, strict=True) if r < 0))
        if missing:
            texts = {self._doc_keys[d]: d for d in docs}
            vectors = encoder.embed([tool_text(index.tools[texts[k]]) for k in missing])
            self.store.add(missing, vectors)
            rows = self.store.rows_of(keys)
        for d, r in zip(docs, rows, strict=True):
            doc_rows[d] = r
        return rows

    def _key(self, index: Any, doc: int) -> bytes:
        found = self._doc_keys.get(doc)
        if found is None:
            found = self._doc_keys[doc] = key_of(tool_text(index.tools[doc]))
        return found

    def explained(
        self,
        explanation: tuple[TermContribution, ...],
        mix: tuple[float, float],
        context: float,
        cosine: float,
    ) -> tuple[TermContribution, ...]:
        """A reranked hit's explanation: the first stage's rows, each scaled to its share of
        the final score, then one ``rerank`` row (term ``(context)``, ``tf`` the normalised
        similarity, ``idf`` the cosine, ``weight`` the rerank weight used for the query)
        holding the reranker's share. The rows add up to the hit's score. ``mix`` is what
        :meth:`run` returned with the hits."""
        from toolfind.models import TermContribution

        factor, weight = mix

        rows = [
            TermContribution(
                c.term, c.field, c.tf, c.idf, c.length_norm, c.weight, c.score * factor
            )
            for c in explanation
        ]
        similarity = context / weight if weight > 0.0 else 0.0
        rows.append(
            TermContribution("(context)", "rerank", similarity, cosine, 1.0, weight, context)
        )
        return tuple(rows)


def _part(entry: Sequence[Any]) -> float:
    """A first-stage entry's semantic part (0 for a lexical one)."""
    return float(entry[2]) if len(entry) > 2 else 0.0


def enable(
    index: Any,
    want: bool | None,
    *,
    weight: float | None = None,
    depth: int | None = None,
    cache_root: str | None = None,
    use_cache: bool = True,
    warn: Warn = _quiet,
    name: str = models.DEFAULT_MODEL,
) -> bool:
    """Attach the rerank stage to ``index`` as asked: ``want`` False: off; None: on when the
    model is installed and can run; True: on, or ModelUnavailable saying in one line how to
    get what is missing. Returns whether it is on. Cheap: the model is loaded by the first
    query that reranks. The one policy the Python API, the CLI and serve-mcp share."""
    if want is False:
        index.use_reranker(None)
        return False
    model = models.spec(name)
    problem = "" if runnable() else EXTRA_HINT
    if not problem and not models.status(model.name).installed:
        problem = "model"
    if problem:
        if want:
            from toolfind.errors import ModelUnavailable

            if problem == "model":
                models.require(model.name)  # raises, naming what is wrong with the folder
            raise ModelUnavailable(problem)
        index.use_reranker(None)
        return False
    root = None
    if use_cache:
        from toolfind.store.manifest import default_cache_dir

        root = os.fspath(cache_root) if cache_root else default_cache_dir(os.environ)
    index.use_reranker(
        Reranker(
            model,
            store_for(root, model, warn),
            weight=fusion.RERANK_WEIGHT if weight is None else weight,
            depth=DEFAULT_DEPTH if depth is None else depth,
        )
    )
    return True


# -- serve-mcp's background worker ---------------------------------------------------------------

_WORKER: list[subprocess.Popen[bytes]] = []
_WORKER_LOCK = threading.Lock()


def warm_in_background(index: Any) -> threading.Thread | None:
    """Embed every enabled tool of ``index`` that has no stored vector, without delaying the
    caller: a thread at the lowest priority gathers the tools' texts and hands them to a
    child process, also at the lowest priority (and on one BLAS thread), which writes segment
    files that queries pick up as they come. The thread still shares the interpreter (reading
    10k tools' texts holds it about 150 ms), so serve-mcp starts it on the first reranked
    query (``Reranker.warm_on_first_query``), never while it starts. The previous worker, if still running, is
    stopped first. None (nothing started) without a rerank stage or a cache directory:
    vectors are then computed by the queries that need them. Returns the thread (tests wait
    on it, then on :func:`worker`)."""
    stage = getattr(index, "reranker", None)
    if stage is None or stage.store.root is None:
        return None
    thread = threading.Thread(
        target=_start_worker, args=(index, stage), name="toolfind-rerank-warm", daemon=True
    )
    _STARTING[:] = [thread]
    thread.start()
    return thread


_STARTING: list[threading.Thread] = []


def worker(timeout: float | None = None) -> subprocess.Popen[bytes] | None:
    """The background worker process last started, if any, once the thread starting it is
    done (waiting at most ``timeout`` seconds for it)."""
    for thread in list(_STARTING):
        thread.join(timeout)
    with _WORKER_LOCK:
        return _WORKER[-1] if _WORKER else None


def _start_worker(index: Any, stage: Reranker) -> None:
    if hasattr(os, "setpriority") and hasattr(threading, "get_native_id"):
        try:  # this thread only (Linux threads have their own nice value)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except OSError:
            pass
    texts = list(
        dict.fromkeys(
            text
            for d, tool in enumerate(index.tools)
            if index.enabled(d) and (text := tool_text(tool))
        )
    )
    job = json.dumps(
        {"root": stage.store.root, "model": stage.model.name, "texts": texts}, ensure_ascii=False
    ).encode("utf-8", "surrogatepass")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    with _WORKER_LOCK:
        _stop_workers()
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "toolfind.store.rerank"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError:
            return  # queries embed their own candidates
        _WORKER.append(child)
    try:
        assert child.stdin is not None
        child.stdin.write(job)
        child.stdin.close()
    except OSError:
        pass  # it was stopped


def stop_worker() -> None:
    """Stop the background worker, if one runs (the process exits)."""
    with _WORKER_LOCK:
        _stop_workers()


def _stop_workers() -> None:
    while _WORKER:
        child = _WORKER.pop()
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


atexit.register(stop_worker)

#: Texts the worker embeds and writes at a time: progress reaches queries as it is made.
_WORKER_CHUNK = 256


def _worker_main() -> int:
    """``python -m toolfind.store.rerank``: read ``{"root", "model", "texts"}`` on stdin,
    embed the texts not stored yet, a chunk at a time, at the lowest priority; stop when
    done or when the parent is gone."""
    parent = os.getppid()
    if hasattr(os, "nice"):
        os.nice(19)
    job = json.loads(sys.stdin.buffer.read().decode("utf-8", "surrogatepass"))
    model = models.spec(job["model"])
    store = store_for(job["root"], model)
    encoder = encoder_for(model.name)
    texts = [t for t in job["texts"] if isinstance(t, str)]
    for start in range(0, len(texts), _WORKER_CHUNK):
        if os.getppid() != parent:
            return 0  # the server is gone: nobody will read these
        chunk = texts[start : start + _WORKER_CHUNK]
        store.refresh()
        keys = [key_of(t) for t in chunk]
        todo = [(k, t) for k, t in zip(keys, chunk, strict=True) if store.rows_of([k])[0] < 0]
        if todo:
            store.add([k for k, _ in todo], encoder.embed([t for _, t in todo]))
    return 0


if __name__ == "__main__":
    raise SystemExit(_worker_main())
