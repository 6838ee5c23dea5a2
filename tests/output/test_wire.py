"""toolfind.output.wire: the JSON shapes (keys pinned here, so changing one is a deliberate
CHANGELOG change), the encoder (checked against json itself) and the text sanitiser."""

from __future__ import annotations

import io
import json
import marshal
import math
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolfind.models import Category, Finding, Hit, SearchResult, Source, TermContribution, Tool
from toolfind.output import wire
from toolfind.output.text import HIDDEN, clean_text, guard_streams, render_path, render_text


@dataclass
class Status:
    available: bool
    detail: str = ""


def test_hit_keys_and_deferred_schema() -> None:
    tool = Tool(name="t", description="Does t.", defer=True, source=Source("c.yaml", "/tools/0"))
    record = wire.hit_record(tool, 1.23456789)
    assert tuple(record) == (*wire.HIT_KEYS, "schema")
    assert record["score"] == 1.234568
    assert record["source"] == {"file": "c.yaml", "pointer": "/tools/0"}


def test_descriptions_in_hits_lose_invisible_characters_and_are_capped() -> None:
    tool = Tool(name="t", description="Safe\u200b text\u202e" + "x" * 5000)
    description = wire.hit_record(tool, 1.0)["description"]
    assert "\u200b" not in description and "\u202e" not in description
    assert len(description) == wire.DESCRIPTION_LIMIT and description.endswith("…")


def test_categories_mark_backends_available_or_not_and_list_a_dead_one() -> None:
    categories = [Category("files", 3, 1, ("fs",)), Category("time", 2, 0, ())]
    record = wire.categories_record(
        categories, {"time": Status(True), "git": Status(False, "exited")}
    )
    by_name = {c["name"]: c for c in record["categories"]}
    assert tuple(by_name["files"]) == wire.CATEGORY_KEYS
    assert by_name["time"]["available"] is True
    assert by_name["git"] == {
        "name": "git",
        "tool_count": 0,
        "deferred_count": 0,
        "tags": [],
        "available": False,
        "detail": "exited",
    }
    assert record["total_categories"] == 3 and record["total_tools"] == 5


def test_search_records_keys_and_an_explained_hit() -> None:
    tool = Tool(name="t", tags=("x",), annotations={"readOnlyHint": True, "openWorldHint": 1})
    term = TermContribution("t", "name", 1, 2.0, 0.5, 4.0, 1.0)
    result = SearchResult("q", (Hit(tool, 2.0, "exact", (term,)),), ("zz",))
    record = wire.search_record(result, include_schema=True)
    assert tuple(record) == wire.SEARCH_KEYS and record["unmatched_terms"] == ["zz"]
    hit = record["hits"][0]
    assert tuple(hit) == (*wire.HIT_KEYS, "schema", "explain")
    assert hit["tags"] == ["x", "read-only"] and hit["match"] == "exact"
    assert [tuple(e) for e in hit["explain"]] == [wire.EXPLAIN_KEYS]
    assert hit["source"] == {"file": None, "pointer": None}


def test_cache_info_counts_indexes_and_bytes() -> None:
    record = wire.cache_info_record("/c", True, [("a.pickle", 10), ("manifest.marshal", 5)])
    assert tuple(record) == wire.CACHE_INFO_KEYS
    assert record["indexes"] == 1 and record["bytes"] == 15
    assert [tuple(f) for f in record["files"]] == [wire.CACHE_FILE_KEYS] * 2


def test_the_record_schemas_require_the_record_keys() -> None:
    assert wire.SEARCH_SCHEMA["required"] == list(wire.SEARCH_KEYS)
    hit_schema = wire.SEARCH_SCHEMA["properties"]["hits"]["items"]
    assert list(hit_schema["properties"])[: len(wire.HIT_KEYS)] == list(wire.HIT_KEYS)
    assert wire.CATEGORIES_SCHEMA["required"] == list(wire.CATEGORIES_KEYS)
    assert wire.SIMILAR_TOOLS_SCHEMA["required"] == list(wire.SIMILAR_TOOLS_KEYS)


# -- encoding --------------------------------------------------------------------------------


@given(st.text())
def test_json_str_equals_json_dumps(text: str) -> None:
    assert wire.json_str(text) == json.dumps(text, ensure_ascii=False)


@given(st.text(alphabet=st.sampled_from(['"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "a"])))
def test_json_str_escapes_every_special_character_once(text: str) -> None:
    assert wire.json_str(text) == json.dumps(text, ensure_ascii=False)


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities too: json writes NaN, Infinity, -Infinity; dumps null
    | st.text()
)


def finite(document: Any) -> Any:
    """``document`` with each non-finite number as None: what ``dumps`` writes for it (JSON
    has no NaN or Infinity), so that json.dumps of it is the oracle. Keys stay: json writes
    a non-finite key as the text ``"NaN"``/``"Infinity"``, which is JSON."""
    if isinstance(document, float) and not math.isfinite(document):
        return None
    if isinstance(document, dict):
        return {key: finite(value) for key, value in document.items()}
    if isinstance(document, list | tuple):
        return [finite(item) for item in document]
    return document


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
    assert wire.dumps(document) == json.dumps(finite(document), indent=2, ensure_ascii=False)


@given(JSON)
def test_dumps_of_a_marshal_round_trip_equals_json_dumps(document: object) -> None:
    """The fast path renders what marshal gives back from the segment."""
    expected = json.dumps(finite(document), indent=2, ensure_ascii=False)
    assert wire.dumps(marshal.loads(marshal.dumps(document))) == expected


@given(JSON)
def test_compact_dumps_equals_json_dumps_on_one_line(document: object) -> None:
    assert wire.dumps(document, compact=True) == json.dumps(finite(document), ensure_ascii=False)


@given(st.lists(JSON, max_size=6), st.integers(1, 3))
def test_dumps_array_pieces_join_to_dumps_of_the_list(records: list[object], pieces: int) -> None:
    """list/summaries --json are written a few hundred records at a time: same bytes."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wire, "_PIECES", pieces)  # a piece every record or so
        streamed = list(wire.dumps_array(iter(records)))
    assert "".join(streamed) == wire.dumps(records)
    assert "".join(streamed) == json.dumps(finite(records), indent=2, ensure_ascii=False)
    assert len(streamed) >= min(len(records), 2) or not records


def test_dumps_array_leaves_a_record_it_cannot_write_to_json_as_dumps_does() -> None:
    records = [{"a": 1}, {"d": OrderedDict(a={}), "e": IntEnum("E", "A").A}, [1]]
    assert "".join(wire.dumps_array(records)) == json.dumps(records, indent=2)
    with pytest.raises(TypeError, match="not JSON serializable"):
        "".join(wire.dumps_array([{"x": {1, 2}}]))


@pytest.mark.parametrize("compact", [False, True])
def test_dumps_leaves_other_data_to_json_and_refuses_what_json_refuses(compact: bool) -> None:
    indent = None if compact else 2
    other = {"d": OrderedDict(a={}), "e": IntEnum("E", "A").A}
    assert wire.dumps(other, compact=compact) == json.dumps(other, indent=indent)
    with pytest.raises(TypeError, match="not JSON serializable"):  # what json says of a set
        wire.dumps({"x": {1, 2}}, compact=compact)
    with pytest.raises(TypeError):
        wire.dumps({(1, 2): 0}, compact=compact)
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):  # json's check, not a crash
        wire.dumps(looped, compact=compact)


def test_no_output_ever_holds_a_non_finite_number() -> None:
    """NaN and the infinities have no JSON spelling: a record holding one (a score gone
    wrong) is written with null, by dumps and dumps_array alike."""
    nan, inf = float("nan"), float("inf")
    document = {"score": inf, "hits": [nan, -inf, 1.5], "other": OrderedDict(x=1)}
    for text in (wire.dumps(document), wire.dumps(document, compact=True)):
        assert json.loads(text, parse_constant=pytest.fail) == {
            "score": None,
            "hits": [None, None, 1.5],
            "other": {"x": 1},
        }
    streamed = "".join(wire.dumps_array([{"score": nan}, {"score": inf}]))
    assert json.loads(streamed, parse_constant=pytest.fail) == [{"score": None}, {"score": None}]


# -- text ------------------------------------------------------------------------------------


def test_invisible_and_control_characters_are_removed_newline_and_tab_kept() -> None:
    assert (
        clean_text("Read\u200b a fi\u202ele\u2066.\nTab\there\U000e0041\x1b[31m\x07")
        == "Read a file.\nTab\there[31m"
    )


def test_private_use_and_unassigned_code_points_are_removed() -> None:
    assert clean_text("a\ue000b\U0010fffdc\u0378d") == "abcd"


def test_a_text_over_the_limit_is_cut_and_marked() -> None:
    assert clean_text("x" * 10_000, 4000) == "x" * 3999 + "…"
    assert clean_text("word " * 10, 11) == "word word…"  # no space before the mark
    assert clean_text("x" * 10_000) == "x" * 10_000


@given(st.text(), st.none() | st.integers(min_value=1, max_value=40))
def test_clean_text_keeps_exactly_the_visible_characters(text: str, limit: int | None) -> None:
    cleaned = clean_text(text, limit)
    assert not any(c not in "\n\t" and unicodedata.category(c) in HIDDEN for c in cleaned)
    kept = "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in HIDDEN)
    if limit is None or len(kept) <= limit:
        assert cleaned == kept
    else:
        assert len(cleaned) <= limit and cleaned.endswith("…")
        assert kept.startswith(cleaned[:-1])


# -- file names and messages: rendered safely in every output -------------------------------


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("catalogs/read.json", "catalogs/read.json"),
        ("caf\udce9.json", "caf\\xe9.json"),  # a Latin-1 byte, surrogate-escaped by Python
        ("a\x1b[31m.json", "a\\x1b[31m.json"),  # ESC would act on a terminal
        ("two\nlines.json", "two\\x0alines.json"),
        ("\u202ecod.exe", "\\u202ecod.exe"),  # a bidi override
        ("line\u2028break", "line\\u2028break"),
        ("\U000e0041tag", "\\U000e0041tag"),
        ("café déjà", "café déjà"),
        ("no\u00a0break", "no\u00a0break"),  # a space you can see
        ("C:\\Users\\me", "C:\\Users\\me"),  # backslashes stay
    ],
)
def test_render_path_escapes_what_an_output_cannot_carry_or_a_reader_cannot_see(
    path: str, shown: str
) -> None:
    assert render_path(path) == shown
    assert render_path(path).encode("utf-8")


def test_render_text_keeps_newlines_and_tabs() -> None:
    assert render_text("a\tb\nc\udcff\x07") == "a\tb\nc\\xff\\x07"


SURROGATE_TEXT = st.text(
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF) | st.characters(), max_size=12
)


def _rendered(value: object) -> object:
    """``value`` with each lone surrogate of its strings as render_path shows it."""
    if isinstance(value, str):
        return "".join(render_path(c) if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
    if isinstance(value, list):
        return [_rendered(v) for v in value]
    return value


@given(st.recursive(SURROGATE_TEXT, lambda inner: st.lists(inner, max_size=3), max_leaves=6))
def test_dumps_always_writes_utf_8_json(document: object) -> None:
    for compact in (False, True):
        text = wire.dumps(document, compact=compact)
        assert json.loads(text.encode("utf-8")) == _rendered(document)
    streamed = "".join(wire.dumps_array([document]))
    assert streamed == wire.dumps([document])


def test_a_file_name_that_is_not_utf_8_is_written_as_its_bytes_in_json() -> None:
    document = {"file": "d/caf\udce9.json", "ok": "café"}
    assert json.loads(wire.dumps(document)) == {"file": "d/caf\\xe9.json", "ok": "café"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wire, "ASCII_ONLY", True)
        ascii_text = wire.dumps(document, compact=True)
    assert ascii_text == '{"file": "d/caf\\\\xe9.json", "ok": "caf\\u00e9"}'


def test_records_render_the_paths_they_name() -> None:
    tool = Tool(name="t", description="Does t.", source=Source("d/caf\udce9\n.json", "/0"))
    assert wire.hit_record(tool, 1.0)["source"]["file"] == "d/caf\\xe9\\x0a.json"
    finding = Finding("bad\x1b.json", 3, "[0].name", "error", "cannot read bad\x1b.json", "invalid")
    record = wire.findings_records([finding])[0]
    assert (record["file"], record["message"]) == ("bad\\x1b.json", "cannot read bad\\x1b.json")
    assert wire.error_record("no file x\udce9", "catalog")["error"]["message"] == "no file x\\xe9"
    info = wire.cache_info_record("/c\udce9", True, [("toolfind-\udce9.pickle", 3)])
    assert (info["path"], info["files"][0]["file"]) == ("/c\\xe9", "toolfind-\\xe9.pickle")
    assert wire.cache_path_record("/c\udce9") == {"path": "/c\\xe9"}


@pytest.mark.parametrize(
    ("encoding", "written"),
    [("utf-8", "caf\\xe9 café\n".encode()), ("ascii", b"caf\\xe9 caf?\n")],
)
def test_guarded_streams_write_what_their_encoding_cannot_carry_safely(
    encoding: str, written: bytes
) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict")
    guard_streams(stream)
    stream.write("caf\udce9 café\n")
    stream.flush()
    assert raw.getvalue() == written
