"""Tests for toolfind.shapes: telling an entry's shape."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import RICH
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
