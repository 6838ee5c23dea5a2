"""toolfind.output.encode: the one JSON encoder, byte for byte json.dumps (checked against
json itself), without NaN or Infinity, and always UTF-8."""

from __future__ import annotations

import json
import marshal
import math
import sys
from collections import OrderedDict
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolfind.output import encode
from toolfind.output.text import render_path

# -- encoding --------------------------------------------------------------------------------


@given(st.text())
def test_json_str_equals_json_dumps(text: str) -> None:
    assert encode.json_str(text) == json.dumps(text, ensure_ascii=False)


@given(st.text(alphabet=st.sampled_from(['"', "\\", "\n", "\x00", "\x1f", "\x7f", "é", "a"])))
def test_json_str_escapes_every_special_character_once(text: str) -> None:
    assert encode.json_str(text) == json.dumps(text, ensure_ascii=False)


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
    assert encode.dumps(document) == json.dumps(finite(document), indent=2, ensure_ascii=False)


@given(JSON)
def test_dumps_of_a_marshal_round_trip_equals_json_dumps(document: object) -> None:
    """The fast path renders what marshal gives back from the segment."""
    expected = json.dumps(finite(document), indent=2, ensure_ascii=False)
    assert encode.dumps(marshal.loads(marshal.dumps(document))) == expected


@given(JSON)
def test_compact_dumps_equals_json_dumps_on_one_line(document: object) -> None:
    assert encode.dumps(document, compact=True) == json.dumps(finite(document), ensure_ascii=False)


@given(JSON)
def test_compact_dumps_writes_the_same_bytes_whether_json_is_loaded_or_not(
    document: object,
) -> None:
    """Where json is loaded (serve-mcp) json's C encoder writes compact documents; in a warm
    command the writer does."""
    loaded = encode.dumps(document, compact=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.delitem(sys.modules, "json")
        assert encode.dumps(document, compact=True) == loaded


@given(st.lists(JSON, max_size=6), st.integers(1, 3))
def test_dumps_array_pieces_join_to_dumps_of_the_list(records: list[object], pieces: int) -> None:
    """list/summaries --json are written a few hundred records at a time: same bytes."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encode, "_PIECES", pieces)  # a piece every record or so
        streamed = list(encode.dumps_array(iter(records)))
    assert "".join(streamed) == encode.dumps(records)
    assert "".join(streamed) == json.dumps(finite(records), indent=2, ensure_ascii=False)
    assert len(streamed) >= min(len(records), 2) or not records


def test_dumps_array_leaves_a_record_it_cannot_write_to_json_as_dumps_does() -> None:
    records = [{"a": 1}, {"d": OrderedDict(a={}), "e": IntEnum("E", "A").A}, [1]]
    assert "".join(encode.dumps_array(records)) == json.dumps(records, indent=2)
    with pytest.raises(TypeError, match="not JSON serializable"):
        "".join(encode.dumps_array([{"x": {1, 2}}]))


@pytest.mark.parametrize("compact", [False, True])
def test_dumps_leaves_other_data_to_json_and_refuses_what_json_refuses(compact: bool) -> None:
    indent = None if compact else 2
    other = {"d": OrderedDict(a={}), "e": IntEnum("E", "A").A}
    assert encode.dumps(other, compact=compact) == json.dumps(other, indent=indent)
    with pytest.raises(TypeError, match="not JSON serializable"):  # what json says of a set
        encode.dumps({"x": {1, 2}}, compact=compact)
    with pytest.raises(TypeError):
        encode.dumps({(1, 2): 0}, compact=compact)
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):  # json's check, not a crash
        encode.dumps(looped, compact=compact)


def test_no_output_ever_holds_a_non_finite_number() -> None:
    """NaN and the infinities have no JSON spelling: a record holding one (a score gone
    wrong) is written with null, by dumps and dumps_array alike."""
    nan, inf = float("nan"), float("inf")
    document = {"score": inf, "hits": [nan, -inf, 1.5], "other": OrderedDict(x=1)}
    for text in (encode.dumps(document), encode.dumps(document, compact=True)):
        assert json.loads(text, parse_constant=pytest.fail) == {
            "score": None,
            "hits": [None, None, 1.5],
            "other": {"x": 1},
        }
    streamed = "".join(encode.dumps_array([{"score": nan}, {"score": inf}]))
    assert json.loads(streamed, parse_constant=pytest.fail) == [{"score": None}, {"score": None}]


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
        text = encode.dumps(document, compact=compact)
        assert json.loads(text.encode("utf-8")) == _rendered(document)
    streamed = "".join(encode.dumps_array([document]))
    assert streamed == encode.dumps([document])


def test_a_file_name_that_is_not_utf_8_is_written_as_its_bytes_in_json() -> None:
    document = {"file": "d/caf\udce9.json", "ok": "café"}
    assert json.loads(encode.dumps(document)) == {"file": "d/caf\\xe9.json", "ok": "café"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encode, "ASCII_ONLY", True)
        ascii_text = encode.dumps(document, compact=True)
    assert ascii_text == '{"file": "d/caf\\\\xe9.json", "ok": "caf\\u00e9"}'
