from __future__ import annotations

import io
import json
import marshal
import math
import os
import subprocess
import sys
from array import array
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolfind
from toolfind import segment, wire
from toolfind.models import Hit, Source, Tool


@given(st.text())
def test_json_str_equals_json_dumps(text: str) -> None:
    assert segment.json_str(text) == json.dumps(text, ensure_ascii=False)


@given(st.text(alphabet=st.sampled_from(['"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "a"])))
def test_json_str_escapes_every_special_character_once(text: str) -> None:
    assert segment.json_str(text) == json.dumps(text, ensure_ascii=False)


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities too: json writes NaN, Infinity, -Infinity
    | st.text()
)
KEYS = st.text() | st.integers() | st.floats() | st.booleans() | st.none()
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(KEYS, inner, max_size=4)
    ),
    max_leaves=25,
)


@given(JSON)
def test_dumps_equals_json_dumps_indent_2(document: object) -> None:
    assert segment.dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


@given(JSON)
def test_dumps_of_a_marshal_round_trip_equals_json_dumps(document: object) -> None:
    """The fast path renders what marshal gives back from the segment."""
    expected = json.dumps(document, indent=2, ensure_ascii=False)
    assert segment.dumps(marshal.loads(marshal.dumps(document))) == expected


def test_dumps_refuses_what_json_refuses() -> None:
    with pytest.raises(TypeError):
        segment.dumps({"x": {1, 2}})
    with pytest.raises(TypeError):
        segment.dumps({(1, 2): 0})


@given(st.text(), st.lists(st.text(), max_size=4))
def test_render_search_without_hits_equals_json_dumps(query: str, unmatched: list[str]) -> None:
    document = {"query": query, "hits": [], "unmatched_terms": unmatched}
    expected = json.dumps(document, indent=2, ensure_ascii=False)
    assert segment.render_search(query, [], unmatched) == expected


TOOLS = [
    Tool(
        name="read_file",
        description='Read a file.\n\tWith "quotes" and \\ and \x07 and é.' + "x" * 1200,
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        namespace="files",
        tags=("fs",),
        annotations={"readOnlyHint": True},
        source=Source(file="cat.json", pointer="/tools/0"),
    ),
    Tool(name="later", description="Deferred.", defer=True),
]


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
@pytest.mark.parametrize("schema", [False, True])
@pytest.mark.parametrize("match", ["exact", "ranked"])
@pytest.mark.parametrize("score", [0.0, 1.23456789, 12.5e-7, 3.0])
def test_a_stored_hit_record_completes_to_what_wire_gives(
    tool: Tool, schema: bool, match: str, score: float
) -> None:
    stored = marshal.loads(
        marshal.dumps(wire.hit_record(Hit(tool=tool, score=0.0), include_schema=True))
    )
    hit = Hit(tool=tool, score=score, match=match)  # type: ignore[arg-type]
    expected = wire.hit_record(hit, include_schema=schema)
    got = segment.complete_hit(stored, score, match, schema)
    assert got == expected
    assert list(got) == list(expected)  # key order too
    assert segment.dumps(got) == wire.dumps(expected)


def test_score_digits_agree_with_wire() -> None:
    assert segment.SCORE_DIGITS == wire.SCORE_DIGITS


def test_bucket_of_is_the_same_in_every_process() -> None:
    words = ["a", "read_file", "日本", "=name", "~key", "\udcff"]
    code = (
        "from toolfind.segment import bucket_of; "
        f"print([bucket_of(w, b) for w in {words!r} for b in (1, 7, 652, 1 << 40)])"
    )
    root = Path(toolfind.__file__).resolve().parent.parent
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert outputs == {
        str([segment.bucket_of(w, b) for w in words for b in (1, 7, 652, 1 << 40)]) + "\n"
    }
    # Pinned values: a segment written by one build is read by another process.
    assert [segment.bucket_of(w, 1 << 40) for w in ("a", "read_file")] == PINNED


PINNED = [59, 801786079012]


def test_bucket_of_spreads_terms_evenly() -> None:
    buckets = 100
    counts = [0] * buckets
    for i in range(3200):
        counts[segment.bucket_of(f"term_{i}", buckets)] += 1
    assert max(counts) < 3 * 32 and min(counts) > 0
    assert math.isclose(sum(counts) / buckets, 32)


class _Index:
    """What ``encode`` reads of a SearchIndex."""

    def __init__(self, tools: list[Tool], impacts: dict[str, tuple[object, object]]) -> None:
        self.tools = tools
        self._impacts = impacts

    def impacts(self) -> dict[str, tuple[object, object]]:
        return self._impacts

    def name_keys(self) -> dict[str, list[int]]:
        return {"readfile": [0], "later": [1]}


POSTINGS = {"read": ([0, 1], [1.5, 0.25]), "file": ([0], [2.0]), "日本": ([1], [0.5])}


@pytest.mark.parametrize("kind", ["array", "memoryview", "list"])
def test_a_segment_reads_back_what_was_encoded(kind: str) -> None:
    def column(values: list[object], code: str) -> object:
        if kind == "list":
            return list(values)
        packed = array(code, values)  # type: ignore[arg-type]
        return packed if kind == "array" else memoryview(packed.tobytes()).cast(code)

    impacts = {t: (column(i, "i"), column(s, "d")) for t, (i, s) in POSTINGS.items()}
    seg = segment.Segment(io.BytesIO(segment.encode(_Index(TOOLS, impacts), ["bad entry"])))
    for term, (ids, scores) in POSTINGS.items():
        found = seg.postings(term)
        assert found is not None
        assert (list(found[0]), list(found[1])) == (ids, scores)
    assert seg.postings("absent") is None
    assert list(seg.names_for("readfile")) == [0] and not seg.names_for("absent")
    for i, tool in enumerate(TOOLS):
        name, namespace, hit, document = seg.doc(i)
        assert (name, namespace) == (tool.name, tool.namespace)
        assert hit == wire.hit_record(Hit(tool=tool, score=0.0), include_schema=True)
        assert segment.dumps(document) == wire.dumps(wire.tool_document(tool))
    assert seg.warnings == ("Warning: skipped bad entry",)
    assert seg.disabled == frozenset()


@pytest.mark.parametrize("enabled", [True, False])
def test_encode_leaves_the_garbage_collector_as_it_found_it(enabled: bool) -> None:
    import gc

    impacts = {"read": (array("i", [0]), array("d", [1.0]))}
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        segment.encode(_Index(TOOLS, impacts))
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
