from __future__ import annotations

import dataclasses
import io
import marshal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.output.test_encode import JSON
from toolfind.models import Finding, Source, Tool
from toolfind.output import wire
from toolfind.output.tool_formats import tool_to_format
from toolfind.store import cache, columns, segment
from toolfind.store.index import SearchIndex

TOOLS = [
    Tool(
        name="read_file",
        description='Read a file.\n\tWith "quotes" and \\ and \x07 and é.' + "x" * 1200,
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        namespace="files",
        tags=("fs", "read-only"),
        annotations={"readOnlyHint": True, "destructiveHint": False, "openWorldHint": 1},
        source=Source(file="cat.json", pointer="/tools/0", line=3),
        original={"name": "read_file", "x-vendor": {"a": 1}, "namespace": "files"},
    ),
    Tool(name="later", description="Deferred.", defer=True),
    Tool(
        name="Get-Weather",
        description="Weather\u200b now\u202e.",
        namespace="web",
        title="Weather",
        output_schema={"type": "object"},
        aliases=("forecast", "weather_now"),
        search_hint="rain sun",
        enabled=False,
        original={"name": "Get-Weather", "inputSchema": {}, "_meta": {"k": "v"}},
    ),
    Tool(name="files_read", description="Same key, other spelling.", namespace="files"),
]


def _view(tool: Tool) -> segment.ToolRecord:
    """The record the index file stores for ``tool``, as the warm path reads it back."""
    record = marshal.loads(marshal.dumps(columns._record(tool)))
    return segment.record_type(columns.FIELDS, columns.ToolTable.SOURCE_FIELDS)(record)


def test_both_readers_of_a_record_read_every_field_of_the_layout_the_file_names() -> None:
    tool = Tool(  # a distinct value per field: a swap shows
        name="n",
        description="d",
        parameters={"type": "object", "p": 1},
        namespace="ns",
        tags=("t",),
        search_hint="h",
        defer=True,
        enabled=False,
        annotations={"a": True},
        aliases=("al",),
        title="ti",
        output_schema={"o": 1},
        source=Source(file="f", pointer="/p", line=3),
        original={"orig": 1},
    )
    _, data = _index_file([tool])
    view = segment.Segment(io.BytesIO(data), len(data)).record(0)
    assert segment.ToolRecord(view) is view
    decoded = columns.ToolTable.of([tool])[0]
    for field in dataclasses.fields(Tool):
        assert getattr(decoded, field.name) == getattr(tool, field.name), field.name
        if field.name != "source":
            assert getattr(view, field.name) == getattr(tool, field.name), field.name
    assert view.source is not None
    assert (view.source.file, view.source.pointer, view.source.line) == ("f", "/p", 3)


def _check_hit(tool: Tool, score: float, match: str, schema: bool) -> None:
    """A stored record, read through the view, gives the hit record its tool gives."""
    expected = wire.hit_record(tool, score, match, include_schema=schema)
    got = wire.hit_record(_view(tool), score, match, include_schema=schema)
    assert repr(got) == repr(expected)  # key order and types too (and NaN equals NaN)


def _check_show(tool: Tool) -> None:
    """... and the native document, with the extras the directory lists for it."""
    carried = (segment._native_extras([tool]).get(0, ()), ())
    expected = tool_to_format(tool, "native")
    got = tool_to_format(_view(tool), "native", carried=carried)
    assert repr(got) == repr(expected)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
@pytest.mark.parametrize("schema", [False, True])
@pytest.mark.parametrize("match", ["exact", "ranked"])
@pytest.mark.parametrize("score", [0.0, 1.23456789, 12.5e-7, 3.0])
def test_a_records_view_gives_its_tools_hit_record(
    tool: Tool, schema: bool, match: str, score: float
) -> None:
    _check_hit(tool, score, match, schema)


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_a_records_view_gives_its_tools_native_document(tool: Tool) -> None:
    _check_show(tool)


def test_only_a_native_entrys_unknown_keys_are_extras() -> None:
    assert segment._native_extras(TOOLS) == {0: ("x-vendor",)}  # the MCP entry's _meta is not
    assert segment._native_extras(TOOLS[1:2]) == {}


TEXT = st.text(max_size=12)
SCHEMAS = st.dictionaries(TEXT, JSON, max_size=3)
ANNOTATIONS = st.dictionaries(
    st.sampled_from(["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint", "x"]),
    st.booleans() | st.none() | st.integers(0, 1),
    max_size=5,
)
TAGS = st.lists(st.sampled_from(["fs", "read-only", "destructive", "net", "é"]), max_size=4)
ORIGINALS = st.none() | st.dictionaries(
    st.sampled_from(["name", "parameters", "inputSchema", "type", "namespace", "x-a", "_meta"]),
    st.sampled_from([None, "function", {}, "v"]),
    max_size=4,
)
TOOL = st.builds(
    Tool,
    name=TEXT,
    description=st.text(max_size=1100),
    parameters=SCHEMAS,
    namespace=TEXT,
    tags=TAGS.map(tuple),
    search_hint=TEXT,
    defer=st.booleans(),
    enabled=st.booleans(),
    annotations=ANNOTATIONS,
    aliases=st.lists(TEXT, max_size=2).map(tuple),
    title=st.none() | TEXT,
    output_schema=st.none() | SCHEMAS,
    source=st.none() | st.builds(Source, file=TEXT, pointer=TEXT, line=st.none() | st.integers(1)),
    original=ORIGINALS,
)


@settings(max_examples=300)
@given(TOOL, st.floats(0, 100), st.sampled_from(["exact", "ranked"]), st.booleans())
def test_any_records_view_gives_its_tools_documents(
    tool: Tool, score: float, match: str, schema: bool
) -> None:
    _check_hit(tool, score, match, schema)
    _check_show(tool)


# -- the index file ---------------------------------------------------------------------------

MORE = [
    Tool(name=f"tool_{i}", description=f"Does thing {i % 7} with file {i % 3}.", namespace="ns")
    for i in range(40)
]
FINDINGS = (Finding(file="bad.json", line=2, path="/0", severity="error", message="no name"),)


def _index_file(tools: list[Tool]) -> tuple[SearchIndex, bytes]:
    index = SearchIndex.build(tools)
    payload = {"index": index, "findings": list(FINDINGS), "format": 0, "key": "", "files": []}
    return index, b"".join(bytes(chunk) for chunk in cache._index_file_parts(payload))


class _Counting(io.BytesIO):
    """A file that counts the bytes read from it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.count = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.count += len(data)
        return data


def test_a_segment_reads_back_every_column_the_index_holds() -> None:
    tools = TOOLS + MORE
    index, data = _index_file(tools)
    seg = segment.Segment(io.BytesIO(data), len(data))
    impacts = index.impacts()
    assert impacts
    for term, (ids, scores) in impacts.items():
        found = seg.postings(term)
        assert found is not None
        assert (list(found[0]), list(found[1])) == (list(ids), list(scores))  # bit for bit
    for absent in ("absent", "", "日本", "\udcff"):
        assert seg.postings(absent) is None
    for key, ids in index._keys.items():
        assert list(seg.names_for(key)) == list(ids)
    assert list(seg.names_for("filesread")) == [3]  # the key of files_read, not read_file
    assert not seg.names_for("absent")
    for i, tool in enumerate(tools):
        assert seg.name(i) == tool.name
        assert seg.record(i) == columns._record(tool)
    assert seg.warnings == (f"Warning: skipped {FINDINGS[0]}",)
    assert seg.extras == {0: ("x-vendor",)}
    with pytest.raises(ValueError):
        seg.record(len(tools))


def test_the_pickle_in_the_same_file_loads_the_same_index(tmp_path: Any) -> None:
    index, data = _index_file(TOOLS + MORE)
    path = tmp_path / "i.pickle"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        payload = cache._load_index_file(fh, len(data))
    loaded = payload["index"]
    loaded.check()
    assert [t.name for t in loaded.tools] == [t.name for t in index.tools]
    assert loaded.search("file thing 3") == index.search("file thing 3")


def test_a_query_reads_a_small_part_of_the_file() -> None:
    words = [a + b for a in "bcdfg" for b in ("ash", "elm", "oak", "yew", "ivy", "fir")]
    tools = [
        Tool(name=f"tool_{i}", description=f"{words[i % 30]} {words[i % 7]}", namespace="ns")
        for i in range(3000)
    ]
    index, data = _index_file(tools)
    impacts = index.impacts()
    term = min(impacts, key=lambda t: abs(len(impacts[t][0]) - 100))
    fh = _Counting(data)
    seg = segment.Segment(fh, len(data))
    found = seg.postings(term)
    assert found is not None and 50 < len(found[0]) < 200
    for doc in found[0][:10]:
        seg.record(doc)
    assert fh.count < len(data) / 50


def test_the_directory_holds_no_per_tool_data() -> None:
    sizes = []
    for n in (10, 400):
        _, data = _index_file([Tool(name=f"t{i}", description="x y") for i in range(n)])
        spans = segment.read_spans(io.BytesIO(data), len(data))
        sizes.append(spans[segment.DIRECTORY_PART][1])
    assert sizes[0] == sizes[1] < 2048


def _with_directory(data: bytes, directory: object) -> bytes:
    """``data`` with its directory part overwritten (the rest of the part zeroed)."""
    spans = segment.read_spans(io.BytesIO(data), len(data))
    start, length = spans[segment.DIRECTORY_PART]
    new = marshal.dumps(directory)
    assert len(new) <= length
    return data[:start] + new + b"\0" * (length - len(new)) + data[start + length :]


def _directory(data: bytes) -> dict[str, Any]:
    spans = segment.read_spans(io.BytesIO(data), len(data))
    start, length = spans[segment.DIRECTORY_PART]
    found: dict[str, Any] = marshal.loads(data[start : start + length])
    return found


def _damaged(directory: dict[str, Any], how: str) -> object:
    columns = dict(directory["columns"])
    if how == "other-format":
        return {**directory, "format": segment.FORMAT - 1}
    if how == "not-a-dict":
        return [1, 2]
    if how == "layout-without-a-name":
        return {**directory, "fields": tuple(f for f in directory["fields"] if f != "name")}
    if how == "layout-repeats-a-field":
        return {**directory, "fields": (*directory["fields"][:-1], "name")}
    if how == "source-layout-not-names":
        return {**directory, "source_fields": ("file", 2, "line")}
    if how == "column-is-the-pickle":
        columns["imp"] = (segment.PICKLE_PART, "d")
    elif how == "column-past-the-parts":
        columns["imp"] = (10**6, "d")
    elif how == "bad-type-code":
        columns["imp"] = (columns["imp"][0], "x")
    elif how == "not-whole-items":
        columns["imp"] = (columns["names.blob"][0], "d")  # 38 bytes: not whole doubles
    elif how == "column-missing":
        del columns["imp"]
    return {**directory, "columns": columns}


@pytest.mark.parametrize(
    "how",
    [
        "other-format",
        "not-a-dict",
        "layout-without-a-name",
        "layout-repeats-a-field",
        "source-layout-not-names",
        "column-is-the-pickle",
        "column-past-the-parts",
        "bad-type-code",
        "not-whole-items",
        "column-missing",
    ],
)
def test_a_damaged_directory_is_refused_by_both_readers(tmp_path: Any, how: str) -> None:
    _, data = _index_file(TOOLS + [Tool(name="odd", description="seven")])
    bad = _with_directory(data, _damaged(_directory(data), how))
    with pytest.raises((ValueError, TypeError, KeyError)):
        segment.Segment(io.BytesIO(bad), len(bad))
    path = tmp_path / "i.pickle"
    path.write_bytes(bad)
    with open(path, "rb") as fh, pytest.raises((ValueError, TypeError, KeyError)):
        cache._load_index_file(fh, len(bad))


@pytest.mark.parametrize("cut", [0, 7, 16, 40, -1])
def test_a_truncated_file_is_refused(cut: int) -> None:
    _, data = _index_file(TOOLS)
    short = data[:cut]
    with pytest.raises(ValueError):
        segment.Segment(io.BytesIO(short), len(short))
