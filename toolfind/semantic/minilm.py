"""all-MiniLM-L6-v2 without torch: the BERT forward pass in numpy, mean pooling, unit vectors.

The reranker's model (docs/SEMANTIC.md, "The reranker"): a 6-layer BERT encoder (hidden size
384, 12 attention heads, feed-forward 1536, GELU in its erf form, LayerNorm eps 1e-12), whose
token states are mean-pooled over the attention mask and L2-normalised, as
sentence-transformers' ``Transformer -> Pooling(mean) -> Normalize`` does. Its weights
(``model.safetensors``) and tokenizer (``tokenizer.json``) are the files ``toolfind model
fetch`` installs (:mod:`toolfind.semantic.models`); they are read with ``safetensors`` and
``tokenizers``, which the semantic extra brings, and nothing is ever fetched here.

Speed: texts are sorted by length and run in batches of similar length (little padding), the
query, key and value projections are one matrix product, every weight is float32 and
contiguous in the layout its product wants, and the GELU, softmax and LayerNorm work in place.
A text longer than :data:`MAX_TOKENS` word pieces is clipped to them, as the model was trained.

Imported only when the reranker is used: never by the lexical path.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Word pieces a text is clipped to, [CLS] and [SEP] included (``max_seq_length`` of the
#: model's ``sentence_bert_config.json``).
MAX_TOKENS = 256
#: Characters of a text handed to the tokenizer: 256 word pieces are never more than a few
#: thousand characters, and a 1 MB query must not cost a second of tokenizing.
MAX_CHARS = 8192
#: Padded tokens in one batch (bounds the attention scores held at once to a few MB).
_BATCH_TOKENS = 2048
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12


def _blas_threads() -> tuple[Any, Any] | None:
    """OpenBLAS's (get, set) number-of-threads functions, found in the libraries this process
    loaded (as threadpoolctl finds them; Linux only), or None.

    Why: numpy's OpenBLAS splits even a query's small products across every core, and on a
    busy machine waiting for those threads cost a reranked query 540 ms against 32 ms on one
    thread (benchmarks/semantic_perf.py). The encoder runs on one thread, and gives the
    process's setting back after each batch."""
    import ctypes

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {
                line.split()[-1]
                for line in maps
                if "openblas" in line.lower() and line.rstrip().split()[-1].startswith("/")
            }
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
            getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
            setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
            if getter is not None and setter is not None:
                getter.restype = ctypes.c_int
                setter.argtypes = [ctypes.c_int]
                return getter, setter
    return None


class Encoder:
    """Unit vectors of texts by all-MiniLM-L6-v2. Thread-safe for concurrent :meth:`embed`
    calls: nothing is written after ``__init__``."""

    __slots__ = ("_blas", "_np", "_tokenizer", "_w", "dim")

    def __init__(self, root: Path) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub, whatever asks
        self._np = np
        path = root / "tokenizer.json"
        # Either library raises a bare Exception for a damaged file: caught whole, it is a
        # ModelError naming the file (the reranker then turns itself off).
        try:
            tokenizer = Tokenizer.from_file(str(path))
            tokenizer.no_padding()  # the file pads to 128: batches are padded here, by length
            tokenizer.enable_truncation(MAX_TOKENS)
            path = root / "model.safetensors"
            with safe_open(str(path), framework="np", device="cpu") as f:
                raw = {key: f.get_tensor(key) for key in f.keys()}  # noqa: SIM118 - not a dict
            self._load(raw)
        except Exception as exc:
            from toolfind.errors import ModelError

            reason = " ".join(str(exc).split())[:200] or type(exc).__name__
            raise ModelError(f"{path} cannot be read ({reason})") from None
        self._tokenizer = tokenizer
        self._blas = _blas_threads()

    def _load(self, raw: dict[str, Any]) -> None:
        """The weights from the file's tensors, each float32 and laid out for its product.
        Raises KeyError or ValueError for a file that is not this model's."""
        np = self._np

        def get(key: str) -> Any:
            return np.ascontiguousarray(raw[key], dtype=np.float32)

        w: dict[str, Any] = {
            "word": get("embeddings.word_embeddings.weight"),
            "position": get("embeddings.position_embeddings.weight"),
            "type": get("embeddings.token_type_embeddings.weight")[0],
            "ln_g": get("embeddings.LayerNorm.weight"),
            "ln_b": get("embeddings.LayerNorm.bias"),
        }
        layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            attention = p + "attention."
            # torch's Linear keeps (out, in): transposed once here, so that x @ W is a plain
            # row-major product; Q, K and V in one matrix (one product instead of three).
            qkv = np.concatenate(
                [get(f"{attention}self.{n}.weight") for n in ("query", "key", "value")]
            )
            layers.append(
                (
                    np.ascontiguousarray(qkv.T),
                    np.concatenate(
                        [get(f"{attention}self.{n}.bias") for n in ("query", "key", "value")]
                    ),
                    np.ascontiguousarray(get(attention + "output.dense.weight").T),
                    get(attention + "output.dense.bias"),
                    get(attention + "output.LayerNorm.weight"),
                    get(attention + "output.LayerNorm.bias"),
                    np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                    get(p + "intermediate.dense.bias"),
                    np.ascontiguousarray(get(p + "output.dense.weight").T),
                    get(p + "output.dense.bias"),
                    get(p + "output.LayerNorm.weight"),
                    get(p + "output.LayerNorm.bias"),
                )
            )
        w["layers"] = layers
        if w["word"].shape[1] != _HEADS * 32 or w["position"].shape[0] < MAX_TOKENS:
            raise ValueError(f"weights of shape {w['word'].shape} are not this model's")
        self._w = w
        self.dim = int(w["word"].shape[1])

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's word-piece ids, [CLS] and [SEP] included, clipped to
        :data:`MAX_TOKENS`. A text is first cut to :data:`MAX_CHARS` characters and its lone
        surrogates replaced (the tokenizer refuses them)."""
        clipped = [t[:MAX_CHARS].encode("utf-8", "replace").decode("utf-8") for t in texts]
        return [enc.ids for enc in self._tokenizer.encode_batch(clipped)]

    def embed(self, texts: Sequence[str]) -> Any:
        """A (len(texts), 384) float32 array of unit vectors. Every text has [CLS] and [SEP],
        so even an empty one gets a vector (the model's, as sentence-transformers gives it)."""
        np = self._np
        ids = self.token_ids(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            longest = len(ids[order[start]])
            end = start + 1
            # Sorted by length: a batch grows until its padded size would pass the budget.
            while end < len(order) and (end - start + 1) * len(ids[order[end]]) <= _BATCH_TOKENS:
                end += 1
            batch = order[start:end]
            longest = len(ids[batch[-1]])
            matrix = np.zeros((len(batch), longest), dtype=np.int64)
            mask = np.zeros((len(batch), longest), dtype=np.float32)
            for row, i in enumerate(batch):
                matrix[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            out[batch] = self._one_thread(matrix, mask)
            start = end
        return out

    def embed_one(self, text: str) -> Any:
        """The unit vector of one text."""
        return self.embed([text])[0]

    def _one_thread(self, ids: Any, mask: Any) -> Any:
        """:meth:`_forward` with OpenBLAS on one thread (:func:`_blas_threads`)."""
        if self._blas is None:
            return self._forward(ids, mask)
        get, set_ = self._blas
        before = get()
        if before == 1:
            return self._forward(ids, mask)
        set_(1)
        try:
            return self._forward(ids, mask)
        finally:
            set_(before)

    def _forward(self, ids: Any, mask: Any) -> Any:
        """Pooled, normalised vectors of a padded batch (``ids`` and ``mask``: (B, T))."""
        np = self._np
        w = self._w
        batch, length = ids.shape
        hidden = self.dim
        head = hidden // _HEADS
        x = w["word"][ids] + w["position"][:length] + w["type"]
        x = _layer_norm(np, x.reshape(batch * length, hidden), w["ln_g"], w["ln_b"])
        # Padded keys get -inf before the softmax (as a large negative: exp gives exactly 0).
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        scale = 1.0 / math.sqrt(head)
        for qkv_w, qkv_b, o_w, o_b, ln1_g, ln1_b, i_w, i_b, f_w, f_b, ln2_g, ln2_b in w["layers"]:
            qkv = x @ qkv_w
            qkv += qkv_b
            # (B, T, 3, heads, head) -> three (B, heads, T, head)
            qkv = qkv.reshape(batch, length, 3, _HEADS, head).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, hidden)
            attended = context @ o_w
            attended += o_b
            attended += x
            x = _layer_norm(np, attended, ln1_g, ln1_b)
            inner = x @ i_w
            inner += i_b
            inner = _gelu(np, inner)
            out = inner @ f_w
            out += f_b
            out += x
            x = _layer_norm(np, out, ln2_g, ln2_b)
        states = x.reshape(batch, length, hidden)
        pooled = np.einsum("bth,bt->bh", states, mask) / mask.sum(axis=1, keepdims=True)
        norms = np.sqrt(np.einsum("bh,bh->b", pooled, pooled))
        return pooled / np.maximum(norms, 1e-12)[:, None]


def _layer_norm(np: Any, x: Any, gain: Any, bias: Any) -> Any:
    """LayerNorm over the last axis (eps 1e-12, as BERT's), into ``x``'s own memory."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("ij,ij->i", x, x)[:, None] / x.shape[-1]
    x /= np.sqrt(variance + _EPS)
    x *= gain
    x += bias
    return x


#: GELU works on blocks of this many values: its dozen passes then stay in the CPU's cache
#: (measured: 12 ms against 113 ms for one pass per operation over a 2,048 x 1,536 batch).
_BLOCK = 32768
_ERF_P = 0.3275911 / math.sqrt(2.0)
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _gelu(np: Any, x: Any) -> Any:
    """GELU in its erf form, ``x * (1 + erf(x / sqrt 2)) / 2`` (BERT's ``gelu``), in place.

    numpy has no erf (and scipy is not a dependency): erf is Abramowitz and Stegun's 7.1.26,
    ``erf(z) = 1 - t (a1 + a2 t + ... + a5 t^4) exp(-z^2)``, ``t = 1 / (1 + p z)`` for z >= 0,
    absolute error below 1.5e-7 (less than float32's rounding of the result). With z = |x| /
    sqrt 2 and erf odd, ``gelu(x) = (x + |x| - |x| t poly(t) exp(-x^2 / 2)) / 2``."""
    flat = x.reshape(-1)
    size = min(_BLOCK, flat.size)
    a, t, e = (np.empty(size, dtype=np.float32) for _ in range(3))
    a1, a2, a3, a4, a5 = _ERF_A
    for start in range(0, flat.size, _BLOCK):
        v = flat[start : start + _BLOCK]
        n = v.size
        aa, tt, ee = a[:n], t[:n], e[:n]
        np.abs(v, out=aa)
        np.multiply(aa, _ERF_P, out=tt)
        tt += 1.0
        np.reciprocal(tt, out=tt)
        np.multiply(tt, a5, out=ee)  # Horner: t (a1 + t (a2 + t (a3 + t (a4 + t a5))))
        ee += a4
        ee *= tt
        ee += a3
        ee *= tt
        ee += a2
        ee *= tt
        ee += a1
        ee *= tt
        np.multiply(v, v, out=tt)
        tt *= -0.5
        np.exp(tt, out=tt)
        ee *= tt
        ee *= aa
        aa += v
        aa -= ee
        np.multiply(aa, 0.5, out=v)
    return x
