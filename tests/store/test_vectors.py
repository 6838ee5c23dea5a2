"""store.vectors: the one store of tool vectors (its file format, lookups that read only what
is asked, what it refuses, merging and eviction), an index's view of it, and the nearest
tools to a vector."""

from __future__ import annotations

import hashlib
import os
import struct
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from toolfind.models import Tool
from toolfind.semantic import text_key
from toolfind.store import vectors
from toolfind.store.index import SearchIndex
from toolfind.store.vectors import ToolVectors, VectorStore

DIM = 8
MODEL = "test-model@1"
HEAD = struct.calcsize("<8sII44s")


def _unit(rows: int, seed: int = 0) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _keys(n: int, start: int = 0) -> list[bytes]:
    return [hashlib.sha256(str(i).encode()).digest()[:16] for i in range(start, start + n)]


def _files(root: Path, model: str = MODEL) -> list[Path]:
    return sorted(root.glob(f"toolfind-*.vectors-{model}.vec"))


def _store(root: Path | None, warned: list[str] | None = None, model: str = MODEL) -> VectorStore:
    say = (lambda line: None) if warned is None else warned.append
    return VectorStore(None if root is None else str(root), model, DIM, say)


def test_vectors_come_back_rounded_as_stored_from_another_process_store(tmp_path: Path) -> None:
    keys, rows = _keys(5), _unit(5)
    rounded = _store(tmp_path).add(keys, rows)
    assert np.array_equal(rounded, rows.astype("<f2").astype(np.float32))
    found, have = _store(tmp_path).get([keys[3], b"x" * 16, keys[0]])
    assert have.tolist() == [True, False, True]
    assert np.array_equal(found[[0, 2]], rounded[[3, 0]]) and not found[1].any()


def test_a_segment_file_is_header_sorted_keys_then_float16_rows(tmp_path: Path) -> None:
    keys = _keys(6)
    _store(tmp_path).add(keys, _unit(6))
    (path,) = _files(tmp_path)
    data = path.read_bytes()
    magic, count, dim, ident = struct.unpack_from("<8sII44s", data)
    assert (magic[:5], count, dim, ident.rstrip(b"\0")) == (b"TFVEC", 6, DIM, MODEL.encode())
    stored = [data[HEAD + 16 * i : HEAD + 16 * (i + 1)] for i in range(6)]
    assert stored == sorted(keys) and len(data) == HEAD + 6 * (16 + 2 * DIM)
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_lookup_reads_only_the_rows_asked_for(tmp_path: Path) -> None:
    keys = _keys(50_000)
    _store(tmp_path).add(keys, _unit(50_000))
    store = _store(tmp_path)
    tracemalloc.start()
    try:
        found, have = store.get([keys[7], keys[40_000]])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert have.all() and found.shape == (2, DIM)
    # The keys (16 bytes a vector) are read when a segment is opened; the vectors (here
    # 16 bytes each, 768 for the reranker's) only as asked.
    assert peak < 16 * 50_000 + 200_000


@pytest.mark.parametrize("bad", [np.nan, np.inf, 3.0, 1e30])
def test_a_vector_that_is_not_finite_or_not_unit_is_never_stored(
    tmp_path: Path, bad: float
) -> None:
    rows = _unit(3)
    rows[1, 0] = bad
    with pytest.raises(ValueError, match="not finite or not of unit length"):
        _store(tmp_path).add(_keys(3), rows)
    assert _files(tmp_path) == []
    assert _store(tmp_path).add(_keys(1), np.zeros((1, DIM))).shape == (1, DIM)  # zero: allowed


@pytest.mark.parametrize("bad", [np.nan, np.inf, 7.0])
def test_a_segment_holding_a_damaged_vector_is_dropped_once_and_computed_again(
    tmp_path: Path, bad: float
) -> None:
    keys = _keys(4)
    _store(tmp_path).add(keys, _unit(4))
    (path,) = _files(tmp_path)
    data = bytearray(path.read_bytes())
    struct.pack_into("<e", data, HEAD + 4 * 16 + 2 * DIM, bad)  # the second row's first value
    path.write_bytes(bytes(data))
    warned: list[str] = []
    store = _store(tmp_path, warned)
    assert not store.get(keys)[1].any()
    assert store.get(keys)[1].sum() == 0 and len(warned) == 1
    assert warned[0] == (
        f"Cache file {path} is damaged (a vector that is not finite or not of unit length); "
        "its vectors will be computed again."
    )
    assert not path.exists()


def test_a_segment_cut_short_under_a_reader_is_dropped_not_a_crash(tmp_path: Path) -> None:
    keys = _keys(20)
    _store(tmp_path).add(keys, _unit(20))
    warned: list[str] = []
    store = _store(tmp_path, warned)
    assert store.get(keys[:1])[1].all()  # opened, its keys read
    (path,) = _files(tmp_path)
    with open(path, "r+b") as fh:  # cut in place, as a full disk or another tool might
        fh.truncate(100)
    assert not store.get(keys[5:6])[1].any()
    assert warned == [f"Cache file {path} is cut short; its vectors will be computed again."]


def test_segments_of_others_or_of_another_model_are_never_read(tmp_path: Path) -> None:
    keys = _keys(3)
    _store(tmp_path, model="other-model@2").add(keys, _unit(3))
    assert not _store(tmp_path).get(keys)[1].any()  # another model's: not this store's files
    _store(tmp_path).add(keys, _unit(3))
    (path,) = _files(tmp_path)
    os.chmod(path, 0o666)
    warned: list[str] = []
    assert not _store(tmp_path, warned).get(keys)[1].any()
    assert warned == [f"Ignoring cache file {path}: it is writable by group or others."]
    # Another model's file renamed as this model's: its header says whose it is.
    os.chmod(path, 0o600)
    (other,) = _files(tmp_path, "other-model@2")
    path.unlink()
    os.rename(other, path)
    warned.clear()
    assert not _store(tmp_path, warned).get(keys)[1].any() and "unreadable" in warned[0]


def test_a_fifo_or_a_link_named_like_a_segment_is_never_opened(tmp_path: Path) -> None:
    keys = _keys(2)
    _store(tmp_path).add(keys, _unit(2))
    (real,) = _files(tmp_path)
    os.mkfifo(tmp_path / "toolfind-0000.vectors-test-model@1.vec")  # would block a reader
    os.symlink(real, tmp_path / "toolfind-1111.vectors-test-model@1.vec")
    warned: list[str] = []
    assert _store(tmp_path, warned).get(keys)[1].all()
    assert sorted(warned) == [
        f"Ignoring cache file {tmp_path / 'toolfind-0000.vectors-test-model@1.vec'}: "
        "it is not a regular file (a FIFO).",
        f"Ignoring cache file {tmp_path / 'toolfind-1111.vectors-test-model@1.vec'}: "
        "it is not a regular file (a symbolic link).",
    ]


def test_segments_of_a_size_class_are_merged_and_a_key_is_kept_once(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for i in range(vectors.TIER - 1):
        store.add(_keys(1, i) + _keys(1, 0), _unit(2, i) if i == 0 else _unit(2, 0))
    assert len(_files(tmp_path)) == vectors.TIER - 1
    store.add(_keys(2, 10), _unit(2, 5))  # a fourth of its class: merged
    (merged,) = _files(tmp_path)
    count = struct.unpack_from("<8sII", merged.read_bytes())[1]
    keys = _keys(vectors.TIER - 1) + _keys(2, 10)
    assert count == len(set(keys)) and _store(tmp_path).get(keys)[1].all()


def test_old_unused_and_earlier_format_files_are_evicted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path)
    store.add(_keys(1), _unit(1))
    (old,) = _files(tmp_path)
    month_ago = time.time() - (vectors.MAX_AGE_DAYS + 1) * 86400
    os.utime(old, (month_ago, month_ago))
    legacy = [
        tmp_path / ("toolfind-" + "a" * 32 + ".rerank-all-minilm-l6-v2.vec"),
        tmp_path / ("toolfind-" + "b" * 32 + ".wordllama-l2_supercat-256@0.4.0.post1.vec"),
    ]
    for path in legacy:
        path.write_bytes(b"old")
        path.chmod(0o600)
    unrelated = tmp_path / "notes.txt"
    unrelated.write_text("mine", encoding="utf-8")
    store.add(_keys(1, 1), _unit(1, 1))
    assert not old.exists() and not any(p.exists() for p in legacy) and unrelated.exists()
    assert len(_files(tmp_path)) == 1
    # Beyond the size bound: the least recently used go first, never the newest.
    monkeypatch.setattr(vectors, "MAX_BYTES", 1)
    first = _files(tmp_path)[0]
    store.add(_keys(1, 2), _unit(1, 2))
    assert not first.exists() and len(_files(tmp_path)) == 1


def test_a_segment_read_is_marked_used(tmp_path: Path) -> None:
    keys = _keys(1)
    _store(tmp_path).add(keys, _unit(1))
    (path,) = _files(tmp_path)
    week_ago = time.time() - 7 * 86400
    os.utime(path, (week_ago, week_ago))
    assert _store(tmp_path).get(keys)[1].all()
    assert path.stat().st_mtime > week_ago + 6 * 86400


# -- an index's view -----------------------------------------------------------------------


class Counting:
    """A deterministic model: a text's vector from its hash; counts the texts embedded."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        seeds = [int.from_bytes(text_key(t)[:4], "little") for t in texts]
        return np.stack([_unit(1, s)[0] for s in seeds]) if texts else np.zeros((0, DIM))


TOOLS = [Tool(f"tool_{i}", f"Does thing number {i}.", namespace="ns") for i in range(6)]


def test_an_edited_catalog_embeds_only_the_tools_that_changed(tmp_path: Path) -> None:
    model = Counting()
    store = _store(tmp_path)
    first = ToolVectors(SearchIndex.build(TOOLS), store, model)
    first.of(range(6))
    assert len(model.texts) == 6
    edited = [*TOOLS[:5], Tool("tool_5", "Does something else now.", namespace="ns")]
    again = ToolVectors(SearchIndex.build(edited), _store(tmp_path), model)
    assert np.array_equal(again.of(range(5)), first.of(range(5)))
    again.of([5])
    assert model.texts[6:] == [vectors.tool_text(edited[5])]


def test_the_catalog_view_holds_what_is_stored_and_finds_the_nearest(tmp_path: Path) -> None:
    model = Counting()
    tools = [*TOOLS, Tool("off", "Disabled.", enabled=False)]
    view = ToolVectors(SearchIndex.build(tools), _store(tmp_path), model)
    assert view.nearest(_unit(1)[0], 3) == [] and len(view.missing()) == 6
    got = view.of([0, 1, 2, 3])
    matrix, have = view.stored()
    assert have.tolist() == [True] * 4 + [False] * 3 and view.missing() == [4, 5]
    query = got[2]
    nearest = view.nearest(query, 2)
    assert nearest[0][0] == 2 and nearest[0][1] == pytest.approx(1.0, abs=1e-3)
    cosines = {d: float(matrix[d] @ query) for d in range(4)}
    assert [d for d, _ in view.nearest(query, 4)] == sorted(cosines, key=lambda d: -cosines[d])
    assert all(d != 2 for d, _ in view.nearest(query, 4, keep=lambda d: d != 2))
    # Vectors another process stores are seen once the store changed.
    other = ToolVectors(SearchIndex.build(tools), _store(tmp_path), model)
    other.of([4, 5])
    assert view.missing() == [] and len(view.nearest(query, 10)) == 6  # never the disabled one
