"""Tests for toolfind.output.tool_formats: writing a tool in every format, and reading it back."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import PARAMS, RICH, carried, read
from toolfind import shapes
from toolfind.models import Tool
from toolfind.output import tool_formats
from toolfind.output.tool_formats import list_names, tool_to_format
from toolfind.shapes import CARRIES, FORMATS, host_name

# --- writing -----------------------------------------------------------------------------


def test_tool_to_format_writes_each_format_in_its_documented_shape() -> None:
    tool = Tool(name="f", description="D.", parameters=PARAMS)
    assert tool_to_format(tool, "openai") == {
        "type": "function",
        "function": {"name": "f", "description": "D.", "parameters": PARAMS},
    }
    assert tool_to_format(tool, "openai-responses") == {
        "type": "function",
        "name": "f",
        "description": "D.",
        "parameters": PARAMS,
    }
    assert tool_to_format(tool, "anthropic") == {
        "name": "f",
        "description": "D.",
        "input_schema": PARAMS,
    }
    assert tool_to_format(tool, "mcp") == {"name": "f", "description": "D.", "inputSchema": PARAMS}
    assert tool_to_format(tool, "native") == {
        "name": "f",
        "description": "D.",
        "parameters": PARAMS,
    }
    assert tool_to_format(tool, "gemini") == {
        "name": "f",
        "description": "D.",
        "parameters": {
            "type": "OBJECT",
            "properties": {"path": {"type": "STRING", "description": "File to read."}},
            "required": ["path"],
        },
    }


def test_gemini_falls_back_to_parameters_json_schema_when_the_subset_cannot_say_it() -> None:
    params = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
    }
    out = tool_to_format(Tool(name="f", parameters=params), "gemini")
    assert out["parametersJsonSchema"] == params
    assert "parameters" not in out


def test_gemini_writes_nullable_for_a_type_with_null() -> None:
    params = {"type": "object", "properties": {"a": {"type": ["integer", "null"]}}}
    out = tool_to_format(Tool(name="f", parameters=params), "gemini")
    assert out["parameters"]["properties"]["a"] == {"type": "INTEGER", "nullable": True}


def test_writing_back_to_the_original_shape_keeps_unknown_keys() -> None:
    mcp = read({"name": "t", "inputSchema": PARAMS, "execution": {"taskSupport": "forbidden"}})
    assert tool_to_format(mcp, "mcp")["execution"] == {"taskSupport": "forbidden"}
    assert "execution" not in tool_to_format(mcp, "anthropic")
    openai = read(
        {"type": "function", "function": {"name": "f", "parameters": PARAMS, "strict": True}}
    )
    assert tool_to_format(openai, "openai")["function"]["strict"] is True
    anthropic = read({"name": "t", "input_schema": PARAMS, "cache_control": {"type": "ephemeral"}})
    assert tool_to_format(anthropic, "anthropic")["cache_control"] == {"type": "ephemeral"}


def test_tool_to_format_rejects_an_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'yaml'"):
        tool_to_format(RICH, "yaml")


@pytest.mark.parametrize(("first", "second"), list(itertools.product(FORMATS, FORMATS)))
def test_round_trip_between_every_pair_of_formats(first: str, second: str) -> None:
    once = read(tool_to_format(RICH, first), namespace=RICH.namespace)
    twice = read(tool_to_format(once, second), namespace=RICH.namespace)
    both = CARRIES[first] & CARRIES[second]
    assert {f: getattr(twice, f) for f in both} == {f: getattr(RICH, f) for f in both}


def test_native_carries_every_field() -> None:
    assert read(tool_to_format(RICH, "native"), namespace="other") == RICH


# --- property: any tool written out in any format and read back is equal --------------------

names = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
namespaces = st.from_regex(r"[a-z][a-z0-9_.-]{0,20}", fullmatch=True)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**9), 10**9)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
json_types = st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null"])
leaf_schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": json_types
        | st.tuples(json_types, st.just("null")).map(list)
        | st.lists(json_types, max_size=3),
        "description": st.text(max_size=40),
        "enum": st.lists(scalars, max_size=3),
        "default": scalars,
        "minimum": st.integers(0, 100),
        "format": st.sampled_from(["uri", "date-time"]),
        "x-extra": scalars,
    },
)
schemas = st.recursive(
    leaf_schemas,
    lambda inner: st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=4),
            "items": inner,
            "required": st.lists(st.text(min_size=1, max_size=8), max_size=3, unique=True),
            "anyOf": st.lists(inner, min_size=1, max_size=2),
        },
    ),
    max_leaves=8,
)
object_schemas = schemas.map(lambda s: {**s, "type": "object"}) | schemas
tools = st.builds(
    Tool,
    name=names,
    description=st.text(max_size=200),
    parameters=object_schemas,
    namespace=st.just("") | namespaces,
    tags=st.lists(names, max_size=3, unique=True).map(tuple),
    search_hint=st.text(max_size=30),
    defer=st.booleans(),
    enabled=st.booleans(),
    annotations=st.fixed_dictionaries(
        {},
        optional={
            "title": st.text(max_size=10),
            "readOnlyHint": st.booleans(),
            "destructiveHint": st.booleans(),
            "idempotentHint": st.booleans(),
            "openWorldHint": st.booleans(),
        },
    ),
    aliases=st.lists(names, max_size=2).map(tuple),
    title=st.none() | st.text(max_size=20),
    output_schema=st.none() | object_schemas,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=tools, fmt=st.sampled_from(FORMATS))
def test_any_tool_written_in_any_format_reads_back_equal(tool: Tool, fmt: str) -> None:
    entry = tool_to_format(tool, fmt)
    back = read(entry, namespace=tool.namespace)
    assert carried(back, fmt) == carried(tool, fmt)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas)
def test_gemini_schema_conversion_never_loses_information(schema: Mapping[str, Any]) -> None:
    out = tool_formats._gemini_schema(
        {**schema, "type": "object"}, "parameters", "parametersJsonSchema"
    )
    if "parameters" in out:
        assert shapes.schema_from_gemini(out["parameters"]) == {**schema, "type": "object"}


def test_list_names_qualifies_only_names_that_collide_as_hosts_accept_them() -> None:
    long = "x" * 70
    tools = [
        Tool("echo", namespace="my.tools"),
        Tool("echo", namespace="b"),
        Tool("solo", namespace="b"),
        Tool(long, namespace="a"),
        Tool(long, namespace="b"),
    ]
    names = list_names(tools)
    assert names[:3] == ["my_tools__echo", "b__echo", "solo"]
    # Too long for hosts: cut, and told apart by a hash of the two names (shapes.host_name).
    assert names[3:] == [host_name("a", long), host_name("b", long)]
    assert len(names[3]) == len(names[4]) == 64 and names[3] != names[4]
