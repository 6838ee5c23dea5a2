"""The semantic signal's side of the index: tool vectors, stored beside the index, and the
hybrid search that fuses them with BM25F (:mod:`toolfind.core.fusion`).

Tool vectors are computed when an index is first used with the semantic signal and stored in
the cache directory as ``<index key>.<model id>.vec`` (written atomically like the index): the
index key covers toolfind's version, the settings and every catalog file's digest, the model
id its name and its package's version. A missing, damaged or foreign file is a miss: the
vectors are computed again. Layout: a 64-byte header (magic, tool count, dimension, model id)
then the vectors as little-endian float16, one row per tool (zeros for a disabled tool).

numpy and the embedder are imported here, and this module is imported only when the semantic
signal is on: never by the warm lexical path.
"""

from __future__ import annotations

import os
import struct

from toolfind import semantic as model
from toolfind.core import fusion
from toolfind.core import search as searching
from toolfind.store import segment
from toolfind.userfiles import FileProblem, open_own

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from toolfind.store.cache import CacheStore

_MAGIC = b"TFVEC\x01\x00\x00"
_HEADER = struct.Struct("<8sII48s")


def file_name(key: str) -> str:
    """The vectors' file name beside index ``key`` (``toolfind-<key>.<model id>.vec``, which
    `cache.is_own_file` knows): the model id is part of it."""
    slug = "".join(c if c.isalnum() or c in "._-" else "_" for c in model.model_id())
    return f"{segment.INDEX_PREFIX}{key}.{slug}{segment.VECTORS_SUFFIX}"


class SemanticSignal:
    """Tool vectors for one index, the embedder, and the fusion weight: what
    ``SearchIndex.search`` needs to fuse the semantic signal in."""

    __slots__ = ("embedder", "matrix", "weight")

    def __init__(self, embedder: model.Embedder, matrix: Any, weight: float) -> None:
        from toolfind.config import bounded  # the one rule of every numeric setting
        from toolfind.errors import ConfigError

        try:
            weight = bounded("semantic_weight", weight)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.embedder = embedder
        self.matrix = matrix  # (tools, dim) float32, unit rows
        self.weight = weight

    def with_weight(self, weight: float) -> SemanticSignal:
        return SemanticSignal(self.embedder, self.matrix, weight)

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
    ]:
        """(what :func:`toolfind.core.search.run` found, exact hits, ranked hits, lexical
        scale): each hit a (tool id, fused score, semantic part); the scale turns a BM25F
        contribution into its share of a fused score."""
        pool = max(limit, fusion.POOL)
        found = searching.run(source, query, pool, keep=keep)
        if limit <= 0:
            return found, [], [], 0.0
        np = self.embedder._np
        qv = self.embedder.embed_one(query)
        # einsum, not ``@``: a matrix-vector product through OpenBLAS starts its threads, and
        # on a busy machine waiting for them cost 30-60 ms against 0.3 ms in one thread
        # (10k tools, measured with benchmarks/semantic_perf.py).
        sims = np.einsum("ij,j->i", self.matrix, qv)
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
        return found, exact_f, ranked, scale

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
        np = self.embedder._np
        n = len(sims)
        want = min(n, pool * 4)
        while True:
            part = np.argpartition(-sims, want - 1)[:want] if want < n else np.arange(n)
            order = part[np.argsort(-sims[part], kind="stable")]
            out = [int(d) for d in order if enabled(int(d)) and (keep is None or keep(int(d)))]
            if len(out) >= pool or want >= n:
                return out[:pool]
            want = min(n, want * 8)


def tool_texts(index: Any) -> list[str]:
    tools = index.tools
    return [
        model.tool_text(t.name, t.namespace, t.description, t.title) if index.enabled(d) else ""
        for d, t in enumerate(tools)
    ]


def compute(index: Any, embedder: model.Embedder) -> Any:
    """The (tools, dim) float32 matrix of the index's tool vectors, rounded to float16 as
    they are stored: a fresh and a stored matrix rank alike."""
    return embedder.embed(tool_texts(index)).astype("<f2").astype(embedder._np.float32)


def load_or_compute(
    index: Any, key: str, store: CacheStore | None, embedder: model.Embedder
) -> Any:
    """The index's tool vectors: from ``toolfind-<key>.<model>.vec`` in the cache when it is there and
    sound, else computed (and stored, when there is a cache)."""
    np = embedder._np
    n = len(index.tools)
    if store is not None and key:
        path = os.path.join(store._root, file_name(key))
        found = _read(np, path, n, embedder.dim, store.warn)
        if found is not None:
            return found
    matrix = compute(index, embedder)
    if store is not None and key:
        header = _HEADER.pack(_MAGIC, n, embedder.dim, model.model_id().encode()[:48])
        body = matrix.astype("<f2").tobytes()
        store._write(store.root / file_name(key), [header, body])
    return matrix


def _read(np: Any, path: str, n: int, dim: int, warn: Callable[[str], None]) -> Any:
    try:
        fh, _ = open_own(path)  # never a FIFO or another user's file (userfiles.open_own)
        with fh:
            data = fh.read()
    except FileProblem as exc:
        warn(f"Ignoring cache file {path}: {exc.message}; recomputing.")
        return None
    except OSError:
        return None
    try:
        magic, count, width, ident = _HEADER.unpack_from(data)
        ok = (
            magic == _MAGIC
            and count == n
            and width == dim
            and ident.rstrip(b"\0") == model.model_id().encode()[:48]
            and len(data) == _HEADER.size + 2 * n * dim
        )
    except struct.error:
        ok = False
    if not ok:
        warn(f"Cache file {path} is unreadable; recomputing.")
        return None
    return np.frombuffer(data, dtype="<f2", offset=_HEADER.size).reshape(n, dim).astype(np.float32)


def enable(
    index: Any,
    key: str,
    want: bool | None,
    *,
    weight: float | None = None,
    cache_root: Any = None,
    warn: Callable[[str], None] | None = None,
) -> bool:
    """Turn the semantic signal on for ``index`` (cache key ``key``, "" for no cache) as
    asked: ``want`` False: off; None: on when the extra is installed; True: on, or raise
    SemanticUnavailable (the one line saying how to get it). Returns whether it is on.
    The one policy the Python API, the CLI and serve-mcp share."""
    if want is False:
        index.use_semantic(None)
        return False
    if not model.available():
        if want:
            from toolfind.errors import SemanticUnavailable

            raise SemanticUnavailable(model.INSTALL_HINT)
        return False
    from toolfind.store.cache import CacheStore

    embedder = model.load()
    store = CacheStore(cache_root, warn or (lambda message: None)) if key else None
    matrix = load_or_compute(index, key, store, embedder)
    index.use_semantic(
        SemanticSignal(embedder, matrix, fusion.DEFAULT_WEIGHT if weight is None else weight)
    )
    return True
