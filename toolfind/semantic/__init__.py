"""The semantic signal's embedder: text to unit vectors, on the CPU, from weights in a wheel.

Imported only when the semantic signal is used (``pip install "toolfind[semantic]"``), never
on the warm lexical path. The model is WordLlama's ``l2_supercat`` (256 dimensions; a static
token-embedding table distilled from Llama 2's embeddings), read from the files the
``wordllama`` wheel installs: its tokenizer (``tokenizers``) and its weights
(``safetensors``). WordLlama's own loader looks for the tokenizer in the wrong folder and then
downloads it, so the two files are opened here and its inference is done here, as its
``WordLlamaInference.embed`` does it: token ids (no special tokens), the mean of their rows,
L2-normalised. Nothing is ever fetched from a network.

See docs/SEMANTIC.md for the candidates measured and why this one.
"""

from __future__ import annotations

import os

# pathlib, importlib.util and typing: only when the model is looked for. A build imports this
# module for ``tool_text`` and ``text_key``, and so does the warm path (through the index).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

#: The model: name, and the version of the package whose wheel carries its files. Both are part
#: of the cache key of stored tool vectors (a different model or version is a different file).
MODEL_NAME = "wordllama-l2_supercat-256"
MODEL_PACKAGE = "wordllama"
MODEL_VERSION = "0.4.0.post1"

#: How to get the extra, said to a user who asks for the semantic signal without it.
INSTALL_HINT = (
    "the semantic signal needs the optional extra: pip install 'toolfind[semantic]' "
    "(numpy, tokenizers, safetensors and the wordllama wheel that carries the model)"
)

#: Characters of a text that are embedded: a static model's mean over more tokens changes
#: little, and a 1 MB query must not cost a second.
MAX_CHARS = 4096

#: Texts embedded per numpy pass (bounds the token rows held at once to a few MB).
_CHUNK = 512

_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")


def _package_dir() -> Path | None:
    """The installed ``wordllama`` package's folder, found without importing it (its
    ``__init__`` configures logging and imports pydantic)."""
    from importlib import util as _util
    from pathlib import Path

    spec = _util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def available() -> bool:
    """Whether the extra is installed: numpy, tokenizers, safetensors and the model files."""
    from importlib import util as _util

    for module in ("numpy", "tokenizers", "safetensors"):
        try:
            if _util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):  # a module set to None in sys.modules
            return False
    root = _package_dir()
    return root is not None and all((root / a / b).is_file() for a, b in (_WEIGHTS, _TOKENIZER))


def model_id() -> str:
    """``name@version``: what stored vectors are keyed by."""
    return f"{MODEL_NAME}@{MODEL_VERSION}"


class Embedder:
    """Unit vectors for texts. Thread-safe for concurrent ``embed`` calls (no shared state
    is written after ``__init__``)."""

    __slots__ = ("_np", "_table", "_tokenizer", "dim")

    def __init__(self, root: Path) -> None:
        import numpy as np
        from safetensors import safe_open
        from tokenizers import Tokenizer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub, whatever asks
        self._np = np
        with safe_open(str(root.joinpath(*_WEIGHTS)), framework="np", device="cpu") as f:
            # float16 as stored (16 MB): rows are widened only when they are used.
            self._table = f.get_tensor("embedding.weight")
        self._tokenizer = Tokenizer.from_file(str(root.joinpath(*_TOKENIZER)))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.dim = int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> Any:
        """A (len(texts), dim) float32 array of unit vectors; a text with no token (empty,
        only spaces) gets a zero vector, which is similar to nothing."""
        np = self._np
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _CHUNK):
            self._embed_into(texts[start : start + _CHUNK], out[start : start + _CHUNK])
        return out

    def _embed_into(self, texts: Sequence[str], out: Any) -> None:
        """Mean-pool ``texts``' token rows into ``out``, normalised, in a few numpy passes
        (a Python loop per text cost a 10k-tool build seconds)."""
        np = self._np
        # Clipped, and lone surrogates (which the tokenizer refuses) replaced.
        clipped = [t[:MAX_CHARS].encode("utf-8", "replace").decode("utf-8") for t in texts]
        encodings = self._tokenizer.encode_batch(clipped, add_special_tokens=False)
        ids = [enc.ids for enc in encodings]
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        total = int(lengths.sum())
        if total == 0:
            return
        flat = np.fromiter((i for row in ids for i in row), dtype=np.int64, count=total)
        np.clip(flat, 0, self._table.shape[0] - 1, out=flat)
        rows = self._table[flat].astype(np.float32)
        used = lengths > 0
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[used]
        sums = np.add.reduceat(rows, starts, axis=0)
        norms = np.sqrt(np.einsum("ij,ij->i", sums, sums))
        ok = np.isfinite(norms) & (norms > 0.0)
        target = np.flatnonzero(used)[ok]
        out[target] = sums[ok] / norms[ok, None]

    def embed_one(self, text: str) -> Any:
        """The unit vector of one text (zeros when it has no token)."""
        return self.embed([text])[0]


_LOADED: Embedder | None = None


def load() -> Embedder:
    """The process's embedder, loaded once. Raises SemanticUnavailable when the extra is not
    installed."""
    global _LOADED
    if _LOADED is None:
        from toolfind.errors import SemanticUnavailable

        if not available():
            raise SemanticUnavailable(INSTALL_HINT)
        root = _package_dir()
        assert root is not None
        _LOADED = Embedder(root)
    return _LOADED


def tool_text(name: str, namespace: str, description: str, title: str | None = None) -> str:
    """The text a tool is embedded from: its namespace and name as words, its title, and
    its description (the parameters' text is left to the lexical signal: in a mean of token
    vectors it drowns what the tool does)."""
    words = []
    for part in (namespace, name):
        if part:
            words.append(_identifier_words(part))
    head = " ".join(words)
    parts = [head]
    if title:
        parts.append(title)
    if description:
        parts.append(description)
    return ": ".join(p for p in parts if p)


def text_key(text: str) -> bytes:
    """A tool text's key in the vector store (``store.vectors``): the first half of its
    SHA-256. Each model keeps its own vectors under it."""
    import hashlib  # only a build or a signal asks: never the warm lexical path

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


def _identifier_words(identifier: str) -> str:
    """``git_diff_staged`` / ``createEntities`` -> ``git diff staged`` / ``create Entities``."""
    out: list[str] = []
    prev = ""
    for ch in identifier:
        if ch in "_-./:":
            out.append(" ")
        elif ch.isupper() and prev.islower():
            out.append(" ")
            out.append(ch)
        else:
            out.append(ch)
        prev = ch
    return " ".join("".join(out).split())


def _word_known(tokenizer: Any, word: str) -> bool:
    """Whether the tokenizer reads ``word`` (as written, lower-case or capitalised) as one
    token, or two of 2.5 letters or more on average: a word of its vocabulary. Unknown
    strings (``zzzz``, ``qwerty``, ``asdf``) break into short fragments."""
    for form in dict.fromkeys((word, word.lower(), word.capitalize())):
        pieces = len(tokenizer.encode(form, add_special_tokens=False).ids)
        if pieces == 1 or (pieces == 2 and len(word) >= 5):
            return True
    return False


def knows_a_word(embedder: Embedder, query: str) -> bool:
    """Whether ``query`` holds a content word the model knows (:func:`_word_known`; not a
    stop word, three letters or more). The rule that keeps a query of unknown
    words (``zzzz qqqq``) from returning the nearest tools as if they matched."""
    from toolfind.core.analysis import STOP_WORDS

    seen = 0
    letters = "".join(c if c.isalpha() else " " for c in query[:MAX_CHARS])
    for word in letters.split():
        if len(word) < 3 or word.casefold() in STOP_WORDS:
            continue
        if _word_known(embedder._tokenizer, word):
            return True
        seen += 1
        if seen >= 64:  # a long query of unknown words: enough evidence
            break
    return False
