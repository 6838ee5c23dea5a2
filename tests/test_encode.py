"""toolfind.output.encode: the one JSON encoder, checked against json itself."""

from __future__ import annotations

import json
import marshal
from collections import OrderedDict
from enum import IntEnum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolfind.output import encode


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
    assert encode.dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


@given(JSON)
def test_dumps_of_a_marshal_round_trip_equals_json_dumps(document: object) -> None:
    """The fast path renders what marshal gives back from the segment."""
    expected = json.dumps(document, indent=2, ensure_ascii=False)
    assert encode.dumps(marshal.loads(marshal.dumps(document))) == expected


@given(JSON)
def test_compact_dumps_equals_json_dumps_on_one_line(document: object) -> None:
    assert encode.dumps(document, compact=True) == json.dumps(document, ensure_ascii=False)


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
