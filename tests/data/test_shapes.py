"""Tests for toolfind.shapes: telling an entry's shape, and the one rule for names hosts accept."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import RICH
from toolfind import shapes
from toolfind.output.tool_formats import tool_to_format
from toolfind.shapes import FORMATS, detect_entry

# --- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "shape"),
    [
        ({"type": "function", "function": {"name": "f", "parameters": {}}}, "openai"),
        ({"type": "function", "name": "f", "parameters": {}}, "openai-responses"),
        ({"name": "f", "description": "d", "parameters": {}}, "function"),
        ({"name": "f", "input_schema": {"type": "object"}}, "anthropic"),
        ({"type": "custom", "name": "f", "input_schema": {"type": "object"}}, "anthropic"),
        ({"name": "f", "inputSchema": {"type": "object"}}, "mcp"),
        ({"name": "f", "parameters": {"type": "OBJECT"}}, "gemini"),
        ({"name": "f", "parametersJsonSchema": {"type": "object"}}, "gemini"),
        ({"name": "f", "parameters": {}, "tags": ["x"]}, "native"),
        ({"name": "f", "defer": True}, "native"),
        ({"type": "web_search_20250305", "name": "web_search"}, "builtin"),
        ({"type": "web_search"}, "builtin"),
        ({"googleSearch": {}}, "builtin"),
    ],
)
def test_detect_entry_names_every_shape(entry: dict[str, Any], shape: str) -> None:
    assert detect_entry(entry) == shape


def test_tool_to_format_output_is_detected_as_that_format() -> None:
    for fmt in FORMATS:
        assert detect_entry(tool_to_format(RICH, fmt)) == fmt


# --- the one rule for names hosts accept ------------------------------------------------------

HOST_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_host_names_fit_what_hosts_accept() -> None:
    assert shapes.host_name("time", "get_current_time") == "time__get_current_time"
    assert shapes.host_name("my srv", "do.thing/now") == "my_srv__do_thing_now"
    assert shapes.host_name("", "do.thing") == "do_thing"  # no namespace: the bare name
    assert shapes.host_name("a", "b", "-") == "a-b"
    long_a = shapes.host_name("server", "x" * 80 + "a")
    long_b = shapes.host_name("server", "x" * 80 + "b")
    assert len(long_a) == 64 and len(long_b) == 64 and long_a != long_b
    assert HOST_NAME.match(long_a) and shapes.is_host_name(long_a)
    assert shapes.host_name("server", "x" * 80 + "a") == long_a  # stable
    assert shapes.host_safe("") == "_" and shapes.host_safe("a b/ü") == "a_b__"


@given(st.text(max_size=80), st.text(min_size=1, max_size=80))
def test_every_host_name_is_one_hosts_accept(namespace: str, name: str) -> None:
    made = shapes.host_name(namespace, name)
    assert HOST_NAME.match(made) and shapes.is_host_name(made)
    assert shapes.is_host_name(name) == bool(HOST_NAME.match(name))


def test_unique_names_count_up_within_64_characters() -> None:
    assert shapes.unique_name("a", set()) == "a"
    assert shapes.unique_name("a", {"a", "a_2"}) == "a_3"
    assert shapes.unique_name("x" * 64, {"x" * 64}) == "x" * 62 + "_2"
    assert shapes.unique_name("A", {"a"}) == "A"
    assert shapes.unique_name("A", {"a"}, fold=True) == "A_2"  # as hosts that ignore case
