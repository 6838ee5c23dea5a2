"""The rerank stage: the first stage's top candidates re-scored by a sentence transformer.

After the first stage (BM25F, or BM25F fused with the semantic signal) has ranked the
catalog, :class:`Reranker` takes its top ``depth`` candidates (50 by default) and the tools
closest in meaning over the whole catalog (:meth:`Reranker.pool`: ``ToolVectors.nearest``
over the stored vectors), embeds the request once with all-MiniLM-L6-v2
(:mod:`toolfind.semantic.minilm`), and mixes each candidate's first-stage score with its
cosine similarity to the request (:func:`toolfind.store.ranking.order`,
:func:`toolfind.core.fusion.blend`). A candidate's vector comes from the one vector store
(:mod:`toolfind.store.vectors`: by model and tool text, shared by every index holding the
tool); one not stored yet is embedded then (a query's missing candidates in one batch) and
stored.

Every tool of an index gets its vector in the background (:func:`embed_in_background`;
serve-mcp after it starts, the Python API from its first reranked search, ``toolfind model
embed`` in the foreground): a child process at the lowest priority writes segments, which
queries pick up as they come (:meth:`Reranker.vectors` is the whole catalog's view:
``ToolVectors.nearest``).

A model that cannot be loaded, or that gives vectors that are not finite, turns the stage
off with one warning naming the file and the fix (:meth:`Reranker.ready`): search answers
from the first stage.

numpy and the model are imported only when the stage runs: never by the lexical path.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from importlib import util as _util

from toolfind.core import fusion
from toolfind.errors import ModelError, ModelUnavailable
from toolfind.models import MAX_RERANK_DEPTH, RERANK_DEPTH, RERANK_WEIGHT
from toolfind.semantic import models, text_key
from toolfind.store import vectors as stored
from toolfind.store.vectors import ToolVectors, VectorStore

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from toolfind.models import TermContribution
    from toolfind.semantic.minilm import Encoder
    from toolfind.store.index import SearchIndex
    from toolfind.store.ranking import Pool
    from toolfind.store.vectors import Catalog

    Warn = Callable[[str], None]

#: The reranker's vectors' width (all-MiniLM-L6-v2's hidden size).
DIM = 384


def _quiet(message: str) -> None:
    """The default ``warn``: nothing."""


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

_ENCODERS: dict[str, Encoder] = {}
_SHARED = threading.Lock()


def encoder_for(name: str) -> Encoder:
    """The process's encoder of model ``name``, loaded once (about 0.3 s) and checked to give
    sound vectors. Raises ModelUnavailable when the model is not installed, ModelError
    naming the file when one cannot be read (or the folder, when its vectors are not
    finite)."""
    with _SHARED:
        found = _ENCODERS.get(name)
        if found is None:
            from toolfind.semantic.minilm import Encoder

            path = models.require(name)
            loaded = Encoder(path)
            if not stored.sound(loaded.embed(["find a tool"])).all():
                raise ModelError(f"{path} gives vectors that are not finite")
            found = _ENCODERS[name] = loaded
        return found


def store_for(root: str | None, model: models.ModelSpec, warn: Warn = _quiet) -> VectorStore:
    """The process's store of ``model``'s vectors in cache directory ``root`` (None: memory)."""
    return stored.store_for(root, model.ident, DIM, warn)


# -- the stage ---------------------------------------------------------------------------------


class Reranker:
    """The rerank stage of one index: its model, weight and depth, and its tools' vectors
    (:attr:`vectors`). ``SearchIndex.search`` asks :meth:`ready`, then calls :meth:`run`.
    ``background`` (serve-mcp, the Python API): the first query that reranks starts
    :func:`embed_in_background` for the index."""

    __slots__ = (
        "_lock", "_off", "_warn", "background", "depth", "embedding", "model", "vectors", "weight"
    )  # fmt: skip

    def __init__(
        self,
        index: Catalog,
        model: models.ModelSpec,
        store: VectorStore,
        *,
        weight: float = RERANK_WEIGHT,
        depth: int = RERANK_DEPTH,
        warn: Warn = _quiet,
    ) -> None:
        self.model = model
        self.weight = weight
        self.depth = depth
        #: The index's tools' vectors by this model: the whole catalog's are
        #: ``vectors.stored()`` and ``vectors.nearest(query_vector, k)``.
        self.vectors = ToolVectors(index, store, self._embed)
        self.background = False
        #: The background embedding of this index's tools last started, if any (``wait()``
        #: for it).
        self.embedding: Background | None = None
        self._warn = warn
        self._off = ""
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> Any:
        return encoder_for(self.model.name).embed(texts)

    def ready(self) -> bool:
        """Whether the stage can run: its model loads (the first time) and gives sound
        vectors. When it cannot (a damaged or partial file, removed meanwhile), the stage
        turns itself off, said once through ``warn`` with the file and the fix: search
        then answers from the first stage."""
        if self._off:
            return False
        try:
            encoder_for(self.model.name)
        except (ModelError, ModelUnavailable) as exc:
            self.turn_off(str(exc))
            return False
        return True

    def turn_off(self, reason: str) -> None:
        """Turn the stage off for good, saying why once."""
        with self._lock:
            if self._off:
                return
            self._off = reason
        self._warn(
            f"Warning: reranking is off: {reason} (run `toolfind model fetch` to install the "
            "model again); results come from the first stage"
        )

    def embed_query(self, query: str) -> Any:
        """The query's unit vector by the stage's model (raises as :func:`encoder_for`)."""
        return encoder_for(self.model.name).embed_one(query)

    def with_settings(self, weight: float | None = None, depth: int | None = None) -> Reranker:
        """The same stage (its vectors shared) at another weight or depth: ``eval`` and
        ``tune`` try several."""
        other = Reranker.__new__(Reranker)
        other.model, other.vectors, other.embedding = self.model, self.vectors, None
        other.weight = self.weight if weight is None else weight
        other.depth = self.depth if depth is None else depth
        other.background, other._warn, other._off = False, self._warn, self._off
        other._lock = self._lock
        return other

    def pool(
        self,
        query: str,
        corrections: Mapping[str, str],
        exact: Sequence[Sequence[Any]],
        ranked: Sequence[Sequence[Any]],
        first_score: Callable[[int], tuple[float, float]],
        keep: Callable[[int], bool] | None = None,
        known: Mapping[str, Any] | None = None,
    ) -> Pool | None:
        """The request's candidates (:class:`toolfind.store.ranking.Pool`): the first stage's
        ``exact`` and first ``depth`` ``ranked`` entries (``(doc, score on the fused scale,
        semantic part)``), and the :data:`toolfind.core.fusion.NEAREST` tools closest in
        meaning among those ``keep`` accepts (``first_score`` gives their (score, semantic
        part)), each with its cosine to the request: the greater of the request's as written
        and as the search read it (its typos' ``corrections``), embedded in one batch (but
        those ``known``: text to vector). The closest tools are the catalog's stored vectors'
        (``ToolVectors.nearest``); they join only when the request holds a word the model
        knows: a request of unknown strings finds nothing by meaning. None when the model
        failed meanwhile (the stage is then off: :meth:`turn_off`)."""
        from toolfind.semantic import knows_a_word
        from toolfind.store.ranking import Pool

        if self.background:
            self.background = False
            embed_in_background(self)
        head = [*exact, *ranked[: self.depth]]
        try:
            forms = self.embed_forms(query, corrections, known)
            cos = self._cosines([int(e[0]) for e in head], forms)
            knows = knows_a_word(encoder_for(self.model.name), query)
        except (ModelError, ModelUnavailable, ValueError) as exc:
            self.turn_off(str(exc))
            return None
        entries = [(int(e[0]), float(e[1]), _part(e), c) for e, c in zip(head, cos, strict=True)]
        tail = [(int(e[0]), float(e[1]), _part(e)) for e in ranked[self.depth :]]
        # Closest tools enough that NEAREST are left beside the candidates at any depth up to
        # this one (``order`` leaves out those among them): eval's grid over depths ranks as
        # a search at each depth would.
        named = {e[0] for e in entries[: len(exact)]}
        wanted = fusion.NEAREST + len(entries) - len(named) if knows else 0
        near, nearest = self._near(forms, wanted, named, first_score, keep)
        return Pool(query, entries[: len(exact)], entries[len(exact) :], near, nearest, tail)

    def _near(
        self,
        forms: Any,
        wanted: int,
        taken: set[int],
        first_score: Callable[[int], tuple[float, float]],
        keep: Callable[[int], bool] | None,
    ) -> tuple[list[tuple[int, float, float, float]], list[tuple[int, float]]]:
        """The ``wanted`` tools closest to the request (``forms``: its vectors, one a row)
        among the catalog's stored vectors, leaving out those ``taken`` and those ``keep``
        refuses, each ``(doc, first-stage score, semantic part, cosine)``; and the catalog's
        two closest ``(doc, cosine)`` (the confidence's margin: the whole catalog's, not the
        filtered one's)."""
        vectors = self.vectors
        closest = vectors.nearest(forms, max(2, wanted + len(taken)))
        nearest = closest[:2]
        chosen = [(d, c) for d, c in closest if d not in taken and (keep is None or keep(d))]
        if len(chosen) < wanted and len(closest) > len(chosen):  # a filter left too few
            chosen = vectors.nearest(
                forms, wanted, lambda d: d not in taken and (keep is None or keep(d))
            )
        near = [(d, *first_score(d), c) for d, c in chosen[:wanted]]
        return near, nearest

    def embed_forms(
        self, query: str, corrections: Mapping[str, str], known: Mapping[str, Any] | None = None
    ) -> Any:
        """The request's vectors, as written and (when a typo was read as another word) as
        read, one row each: those not ``known`` already (``eval`` embeds its queries
        beforehand) embedded in one batch. Raises ValueError when the model gives a vector
        that is not finite."""
        import numpy as np

        read = fusion.as_read(query, corrections)
        forms = [query] if read == query else [query, read]
        have = known or {}
        todo = [f for f in forms if f not in have]
        fresh = dict(zip(todo, encoder_for(self.model.name).embed(todo), strict=True))
        out = np.stack([have[f] if f in have else fresh[f] for f in forms]).astype(np.float32)
        if not stored.sound(out).all():
            raise ValueError(f"the model {self.model.name} gives vectors that are not finite")
        return out

    def _cosines(self, docs: Sequence[int], forms: Any) -> list[float]:
        """Each tool's cosine to the request: the greatest over the request's ``forms``; the
        tools' vectors from the store (the missing ones embedded in one batch and stored)."""
        if not docs:
            return []
        import numpy as np

        # einsum, not ``@``: OpenBLAS's threads cost a busy machine tens of milliseconds for
        # a product this small (docs/SEMANTIC.md).
        sims = np.einsum("ij,kj->ik", self.vectors.of(docs), forms)
        result: list[float] = sims.max(axis=1).tolist()
        return result

    def cosines(self, query: str, docs: Sequence[int], query_vector: Any = None) -> list[float]:
        """The cosine similarity of ``query`` to each of ``docs``: the query embedded once
        (unless its vector is given: :meth:`embed_queries`), the tools' vectors from the
        store (the missing ones embedded in one batch and stored). Raises ValueError when
        the model gives a vector that is not finite."""
        import numpy as np

        qv = self.embed_query(query) if query_vector is None else query_vector
        form = np.asarray(qv, dtype=np.float32).reshape(1, -1)
        if not stored.sound(form).all():
            raise ValueError(f"the model {self.model.name} gives vectors that are not finite")
        return self._cosines(docs, form)

    def embed_queries(self, queries: Sequence[str]) -> dict[str, Any]:
        """The vectors of many queries, embedded in batches of similar length (much faster
        than one at a time): ``eval``/``tune`` over thousands of labelled queries."""
        unique = list(dict.fromkeys(queries))
        return dict(zip(unique, encoder_for(self.model.name).embed(unique), strict=True))

    def explained(
        self,
        explanation: tuple[TermContribution, ...],
        mix: tuple[float, float],
        context: float,
        cosine: float,
    ) -> tuple[TermContribution, ...]:
        """A reranked hit's explanation: the first stage's rows, each scaled to its share of
        the final score, then one ``rerank`` row (term ``(context)``, ``tf`` the meaning
        part over the weight, ``idf`` the cosine, ``weight`` the rerank weight used for the
        query) holding the meaning's share. The rows add up to the hit's score. ``mix`` is
        what :func:`toolfind.store.ranking.order` returned with the hits."""
        from toolfind.models import TermContribution

        factor, weight = mix
        rows = [
            TermContribution(
                c.term,
                c.field,
                c.tf,
                c.idf,
                c.length_norm,
                c.weight,
                c.score * factor,
                c.query_word,
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
    index: SearchIndex,
    want: bool | None,
    *,
    weight: float = RERANK_WEIGHT,
    depth: int = RERANK_DEPTH,
    use_cache: bool = True,
    root: str | os.PathLike[str] | None = None,
    background: bool = False,
    warn: Warn = _quiet,
    name: str = models.DEFAULT_MODEL,
) -> bool:
    """Attach the rerank stage to ``index`` as asked: ``want`` False: off; None: on when the
    model is installed and can run; True: on, or ModelUnavailable saying in one line how to
    get what is missing. Returns whether it is on. Cheap: the model is loaded by the first
    query that reranks, which with ``background`` also starts :func:`embed_in_background`.
    Vectors are kept in ``root``, else the cache directory (none unless ``use_cache``).
    The one policy the Python API, the CLI and serve-mcp share."""
    if want is False:
        index.use_reranker(None)
        return False
    model = models.spec(name)
    problem = "" if runnable() else EXTRA_HINT
    if not problem and not models.status(model.name).installed:
        problem = "model"
    if problem:
        if want:
            if problem == "model":
                models.require(model.name)  # raises, naming what is wrong with the folder
            raise ModelUnavailable(problem)
        index.use_reranker(None)
        return False
    if not 1 <= depth <= MAX_RERANK_DEPTH:
        raise ValueError(f"rerank depth {depth} is out of range")  # config bounds it first
    store = store_for(stored.cache_root(use_cache, root), model, warn)
    stage = Reranker(index, model, store, weight=weight, depth=depth, warn=warn)
    stage.background = background
    index.use_reranker(stage)
    return True


# -- the background embedding -------------------------------------------------------------------


class Background:
    """A background embedding of one index's tools: a thread that finds the tools without a
    stored vector and a child process that embeds them. :meth:`wait` for it, :meth:`stop`
    it (serve-mcp's next index, the end of the process)."""

    def __init__(self, stage: Reranker) -> None:
        self.stage = stage
        self.process: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._start, name="toolfind-embed", daemon=True)

    def _start(self) -> None:
        # At the process's own priority: a thread at a lower one that the system leaves
        # waiting while it holds the interpreter would hold up the event loop with it
        # (pings of serve-mcp waited up to 0.6 s on a busy machine). The child is niced.
        vectors = self.stage.vectors
        texts = list(
            dict.fromkeys(stored.tool_text(vectors.index.tools[d]) for d in vectors.missing())
        )
        if not texts:
            return
        job = json.dumps(
            {"root": vectors.store.root, "model": self.stage.model.name, "texts": texts},
            ensure_ascii=False,
        ).encode("utf-8", "surrogatepass")
        with self._lock:
            if self._stopped:
                return
            try:
                self.process = _spawn_worker()
            except OSError:
                return  # queries embed their own candidates
        try:
            assert self.process.stdin is not None
            # One line, and the pipe stays open: it is the worker's lifeline (_worker_main).
            self.process.stdin.write(job + b"\n")
            self.process.stdin.flush()
        except OSError:
            pass  # it was stopped

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the embedding to end (at most ``timeout`` seconds for the thread, then
        for the process); the process's exit code, or None when none was needed (nothing
        missing) or it still runs."""
        self.thread.join(timeout)
        if self.process is None:
            return None
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """Stop it (the process exits; what it wrote stays)."""
        with self._lock:
            self._stopped = True
            child = self.process
        if child is not None and child.stdin is not None:
            try:
                child.stdin.close()  # the end of its lifeline: it exits at once
            except OSError:
                pass
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


_RUNNING: list[Background] = []
_RUNNING_LOCK = threading.Lock()


def embed_in_background(stage: Reranker) -> Background | None:
    """Embed every enabled tool of ``stage``'s index that has no stored vector, without
    delaying the caller: a thread at the lowest priority finds them and hands their texts to
    a child process (at the lowest priority, on one BLAS thread, isolated from the working
    directory), which writes segment files that queries pick up as they come. The previous
    background embedding, if still running, is stopped first. None without a cache
    directory (queries then embed their own candidates)."""
    if stage.vectors.store.root is None:
        return None
    job = stage.embedding = Background(stage)
    with _RUNNING_LOCK:
        while _RUNNING:
            _RUNNING.pop().stop()
        _RUNNING.append(job)
    job.thread.start()
    return job


def stop_background() -> None:
    """Stop the background embedding, if one runs."""
    with _RUNNING_LOCK:
        while _RUNNING:
            _RUNNING.pop().stop()


atexit.register(stop_background)


def _spawn_worker() -> subprocess.Popen[bytes]:
    """``python -P -m toolfind.store.rerank`` from the filesystem's root: nothing a working
    directory holds (a planted ``secrets.py``, ``numpy/``) can run in it."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-P", "-m", "toolfind.store.rerank"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=os.path.abspath(os.sep),
    )


#: Texts the worker embeds and writes at a time: progress reaches queries as it is made.
_WORKER_CHUNK = 256


def embed_missing(
    store: VectorStore,
    encoder: Encoder,
    texts: Sequence[str],
    progress: Callable[[int, int], object] | None = None,
) -> int:
    """Embed those of ``texts`` whose vector ``store`` lacks, a chunk at a time (each chunk
    stored as it is done: an interrupted run loses one chunk at most, and the next one
    resumes); ``progress(done, total)`` after each chunk. Returns how
    many were embedded. Raises ValueError when the model gives vectors that are not
    finite."""
    done = 0
    for start in range(0, len(texts), _WORKER_CHUNK):
        chunk = list(texts[start : start + _WORKER_CHUNK])
        keys = [text_key(t) for t in chunk]
        _, have = store.get(keys)
        todo = [i for i, ok in enumerate(have) if not ok]
        if todo:
            store.add([keys[i] for i in todo], encoder.embed([chunk[i] for i in todo]))
            done += len(todo)
        if progress is not None:
            progress(min(start + _WORKER_CHUNK, len(texts)), len(texts))
    return done


def embed_all(
    stage: Reranker, progress: Callable[[int, int], object] | None = None
) -> tuple[int, int]:
    """Embed, here and now, every enabled tool of ``stage``'s index that has no stored
    vector (``toolfind model embed``), a chunk at a time, each stored as it is done: an
    interrupted run (Ctrl-C) loses one chunk at most, and the next resumes.
    ``progress(done, total)`` after each chunk. Returns (the index's enabled tools, how many
    were embedded now). Raises ModelUnavailable or ModelError (naming the file) for a model
    that cannot be loaded or gives vectors that are not finite."""
    vectors = stage.vectors
    index = vectors.index
    missing = vectors.missing()
    texts = list(dict.fromkeys(stored.tool_text(index.tools[d]) for d in missing))
    encoder = encoder_for(stage.model.name)
    try:
        done = embed_missing(vectors.store, encoder, texts, progress)
    except ValueError as exc:
        raise ModelError(f"{models.status(stage.model.name).path}: {exc}") from None
    return sum(index.enabled(d) for d in range(len(index.tools))), done


def _worker_main() -> int:
    """``python -m toolfind.store.rerank``: read ``{"root", "model", "texts"}`` as one line
    on stdin, embed the texts not stored yet, a chunk at a time, at the lowest priority;
    stop when done, or at once when stdin ends.

    The parent keeps stdin open while it wants the work: its end means the parent stopped
    it or is gone, however it died (SIGKILL included). A check between chunks would wait
    for the model to load and a chunk to finish, which at the lowest priority on a busy
    machine takes minutes: the worker outlived a killed serve-mcp. The lifeline's thread
    starts before the worker lowers its priority: on Linux a thread's priority is its own,
    so the end of the lifeline is noticed at once however busy the machine."""
    job = json.loads(sys.stdin.buffer.readline().decode("utf-8", "surrogatepass"))
    threading.Thread(target=_exit_at_end, args=(sys.stdin.fileno(),), daemon=True).start()
    if hasattr(os, "nice"):
        os.nice(19)
    model = models.spec(job["model"])
    store = store_for(job["root"], model)
    texts = [t for t in job["texts"] if isinstance(t, str)]
    embed_missing(store, encoder_for(model.name), texts)
    return 0


def _exit_at_end(fd: int) -> None:
    """End the process when the file ``fd`` ends (what a chunk stored stays; an interrupted
    write is what a kill leaves too, and the store reads past it). Read unbuffered: a daemon
    thread holding ``sys.stdin``'s lock would abort the interpreter's exit."""
    while os.read(fd, 1 << 16):
        pass  # nothing more is sent
    os._exit(0)


if __name__ == "__main__":
    raise SystemExit(_worker_main())
