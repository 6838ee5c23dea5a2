"""Tests for toolfind.catalog.paths: JSON paths and pointers, invisible characters."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from toolfind.catalog import paths
from toolfind.catalog.paths import json_path, json_pointer, pointer_parts

# --- paths -------------------------------------------------------------------------------


def test_json_path_uses_dots_brackets_and_quotes() -> None:
    assert (
        json_path(("tools", 3, "parameters", "properties", "url"))
        == "tools[3].parameters.properties.url"
    )
    assert json_path((0, "function")) == "[0].function"
    assert json_path(("properties", "a b", "x.y")) == 'properties["a b"]["x.y"]'
    assert json_path(("p", "a\u200bb")) == 'p["a\\u200bb"]'


def test_json_pointer_escapes_and_round_trips() -> None:
    parts = ("tools", 3, "a/b~c")
    assert json_pointer(parts) == "/tools/3/a~1b~0c"
    assert pointer_parts(json_pointer(parts)) == parts


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=20), allow_whitespace=st.booleans())
def test_invisible_chars_are_exactly_the_control_and_format_characters(
    text: str, allow_whitespace: bool
) -> None:
    expected = [
        (i, c)
        for i, c in enumerate(text)
        if unicodedata.category(c) in ("Cc", "Cf") and not (allow_whitespace and c in "\t\n\r")
    ]
    assert paths.invisible_chars(text, allow_whitespace=allow_whitespace) == expected
