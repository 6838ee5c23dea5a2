"""Tests for toolfind.catalog.rules: the one table agrees with the packaged JSON Schemas, and what it vouches for the general checks accept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import (
    ENTRY_KEYS,
    FAST_ENTRY_KEYS,
    KEYWORD_VALUES,
    REPO,
    any_tools,
    defaults_strategy,
    entries,
    file_tools,
    general,
    mutated,
    vouched,
)
from toolfind import shapes
from toolfind.catalog import parse, rules, validate
from toolfind.models import Source, Tool
from toolfind.output.tool_formats import tool_to_format
from toolfind.shapes import FORMATS, METADATA_KEYS, SCHEMA_KEYS, detect_entry

ENTRY_VALUES: list[Any] = [
    *KEYWORD_VALUES,
    "function",
    "custom",
    "a b",
    "a/b",
    "ns\n",
    "x" * 65,
    "x" * 256,
    "x" * 257,
    ["t", "u"],
    ["x" * 65],
    ["x" * 257],
    {"readOnlyHint": True, "title": "t"},
    {"readOnlyHint": "yes"},
    {"title": 5},
    {"type": "object"},
]
short_texts = st.text(max_size=4)
entry_values = st.one_of(
    st.sampled_from(ENTRY_VALUES),
    short_texts,
    st.lists(short_texts, max_size=2),
    st.fixed_dictionaries(
        {},
        optional={
            k: st.sampled_from([True, False, None, "x", 1])
            for k in ("readOnlyHint", "openWorldHint", "title", "other")
        },
    ),
)
entry_keys = st.sampled_from([*ENTRY_KEYS, "name", "readOnlyHint", "idempotentHint"])
well_formed_entries = st.builds(tool_to_format, file_tools, st.sampled_from(FORMATS))
any_entries = mutated(well_formed_entries, entry_keys, entry_values)
WELL_FORMED_ENTRIES: dict[str, dict[str, Any]] = {
    "function": {"name": "f", "description": "d", "parameters": {}},
    "native": {"name": "f", "output_schema": {}, "tags": ["t"]},
    "anthropic": {"name": "f", "input_schema": {}},
    "mcp": {"name": "f", "inputSchema": {}, "annotations": {"readOnlyHint": True}},
    "gemini": {"name": "f", "parametersJsonSchema": {}},
    "openai-responses": {"type": "function", "name": "f", "parameters": {}},
    "openai": {"type": "function", "function": {"name": "f", "parameters": {}}},
}


@pytest.mark.parametrize("shape", sorted(WELL_FORMED_ENTRIES))
def test_the_fast_check_accepts_no_entry_value_the_shape_schema_refuses(shape: str) -> None:
    validator = validate._shape_validator(shape)
    base = WELL_FORMED_ENTRIES[shape]
    assert rules.fits_shape(base, shape) and validator.is_valid(base)
    accepted = 0
    for key in [*ENTRY_KEYS, "name"]:
        for value in ENTRY_VALUES:
            entries = [{**base, key: value}, {k: v for k, v in base.items() if k != key}]
            if shape == "openai":
                entries.append({**base, "function": {**base["function"], key: value}})
            if key == "annotations" or shape in ("native", "mcp"):
                entries.append({**base, "annotations": {"readOnlyHint": False, key: value}})
            for entry in entries:
                if rules.fits_shape(entry, shape):
                    accepted += 1
                    assert validator.is_valid(entry), entry
    assert accepted > 100


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=any_entries, shape=st.none() | st.sampled_from(sorted(rules.SHAPES)))
def test_an_entry_the_fast_check_accepts_passes_its_shape_schema(
    entry: dict[str, Any], shape: str | None
) -> None:
    shape = shape or detect_entry(entry)
    if rules.fits_shape(entry, shape):
        assert validate._shape_validator(shape).is_valid(entry)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=file_tools, fmt=st.sampled_from(FORMATS))
def test_well_formed_entries_are_decided_without_jsonschema(tool: Tool, fmt: str) -> None:
    entry = tool_to_format(tool, fmt)
    shape = detect_entry(entry)
    assert rules.fits_shape(entry, shape)
    assert validate._shape_validator(shape).is_valid(entry)
    if fmt == "openai":  # a bare function, as in a file of functions
        assert rules.fits_shape(entry["function"], "function")


# --- the one table and the packaged JSON Schemas say the same --------------------------------------

NATIVE = "urn:toolfind:schema:native-catalog#/$defs/"
#: What the packaged schemas say of a value of each kind of ``rules.SHAPES``.
SCHEMA_OF_KIND: dict[str, Any] = {
    "name": {"$ref": NATIVE + "name"},
    "names": {"type": "array", "items": {"$ref": NATIVE + "name"}},
    "namespace": {"$ref": NATIVE + "namespace"},
    "tags": {"$ref": NATIVE + "tags"},
    "text": {"type": "string"},
    "description": {"type": "string"},
    "description?": {"type": ["string", "null"]},
    "flag": {"type": "boolean"},
    "flag?": {"type": ["boolean", "null"]},
    "object?": {"type": ["object", "null"]},
    "schema": {"$ref": NATIVE + "jsonSchemaObject"},
    "annotations": {"$ref": NATIVE + "annotations"},
    "=function": {"const": "function"},
    "=custom": {"const": "custom"},
}


def packaged(name: str) -> dict[str, Any]:
    folder = REPO / "toolfind" / "schemas"
    loaded: dict[str, Any] = json.loads((folder / name).read_text(encoding="utf-8"))
    return loaded


def said(properties: dict[str, Any]) -> dict[str, Any]:
    """Each property's rule, without its documentation, references made absolute."""

    def rule(value: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in value.items() if k not in ("description", "default")}
        if "$ref" in out and out["$ref"].startswith("#"):
            out["$ref"] = NATIVE + out["$ref"].removeprefix("#/$defs/")
        if isinstance(out.get("items"), dict):
            out["items"] = rule(out["items"])
        return out

    return {key: rule(value) for key, value in properties.items()}


def kinds(table: dict[str, str]) -> dict[str, Any]:
    return {key: SCHEMA_OF_KIND[kind] for key, kind in table.items()}


def test_the_packaged_schemas_say_what_the_rules_table_says() -> None:
    defs = packaged("native-catalog.schema.json")["$defs"]
    metadata = said(defs["metadata"]["properties"])
    assert metadata == kinds(dict(rules.METADATA))
    assert said(defs["annotations"]["properties"]) == kinds(dict(rules.ANNOTATIONS))
    for shape, (table, required) in rules.SHAPES.items():
        schema = defs["tool"] if shape == "native" else packaged(f"{shape}.schema.json")
        assert said({"metadata": schema["allOf"][0]}) == {"metadata": {"$ref": NATIVE + "metadata"}}
        properties = said(schema["properties"])
        if shape == "openai":  # its function, the one nested object: the FUNCTION table
            function = schema["properties"].get("function", {})
            assert said(function["properties"]) == kinds(dict(rules.FUNCTION[0]))
            assert set(function["required"]) == rules.FUNCTION[1]
            assert properties.pop("function")["type"] == "object"
            assert table["function"] == "function"
            table = {k: v for k, v in table.items() if k != "function"}
        assert {**metadata, **properties} == kinds(dict(table)), shape
        assert set(schema["required"]) == required, shape


def test_the_packaged_schemas_state_the_limits_the_rules_enforce() -> None:
    defs = packaged("native-catalog.schema.json")["$defs"]
    assert (defs["name"]["minLength"], defs["name"]["maxLength"]) == (1, rules.MAX_NAME_LENGTH)
    assert defs["namespace"]["pattern"] == f"^[^\\s/:]{{1,{rules.MAX_NAMESPACE_LENGTH}}}$"
    assert defs["tags"]["items"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": rules.MAX_TAG_LENGTH,
    }


def test_every_shape_keeps_its_schemas_where_its_packaged_schema_says() -> None:
    for shape, (table, _) in rules.SHAPES.items():
        body = dict(rules.FUNCTION[0]) if shape == "openai" else table
        assert body[rules.input_key(shape, {})] == "schema", shape
    # The keys shapes.py names as schema and metadata keys (what reading and writing share)
    # are the ones the rules table gives those kinds.
    from_table = {
        key for table, _ in rules.SHAPES.values() for key, k in table.items() if k == "schema"
    }
    assert from_table == set(SCHEMA_KEYS)
    assert tuple(rules.METADATA) == METADATA_KEYS


# --- what the rules vouch for, the general checks accept ---------------------------------------
#
# Both ways of reading an entry end in one constructor (formats._tool): an entry the rules
# vouch for is read with no check, so the one property to hold is that ``rules.vouch`` (the
# table's kinds) never vouches for an entry a general check would refuse, and that it counts
# the entry's strings (the loader's proof that a document repeats no key).


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=entries(), defaults=defaults_strategy)
def test_an_entry_the_rules_vouch_for_has_no_finding_and_its_strings_are_counted(
    entry: Any, defaults: dict[str, Any]
) -> None:
    count = vouched(entry, defaults) if type(entry) is dict else -1
    if count >= 0:
        general(entry, defaults, "stem", Source("f.json", "/0", None))  # must not raise
        assert count == parse.strings_in(entry)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=any_tools, fmt=st.sampled_from([f for f in shapes.FORMATS if f != "gemini"]))
def test_the_rules_vouch_for_well_formed_entries_of_every_format(tool: Tool, fmt: str) -> None:
    entry = tool_to_format(tool, fmt)
    assert vouched(entry, {"namespace": None, "tags": (), "shape": None}) >= 0


BASES: dict[str, dict[str, Any]] = {
    "function": {"name": "f", "description": "d", "parameters": {"type": "object"}},
    "native": {"name": "f", "tags": ["t"], "output_schema": {}, "annotations": {"title": "A"}},
    "anthropic": {"name": "f", "input_schema": {"type": "object"}},
    "mcp": {"name": "f", "inputSchema": {}, "annotations": {"readOnlyHint": True}},
    "openai-responses": {"type": "function", "name": "f", "parameters": {}},
    "openai": {"type": "function", "function": {"name": "f", "parameters": {}}},
}
VALUES: list[Any] = [
    None,
    True,
    0,
    1.5,
    "",
    " ",
    "x",
    "a b",
    "a/b",
    "a:b",
    "ns\n",
    "\u200bname",
    "\u2028",
    "x\x00",
    "x" * 64,
    "x" * 65,
    "x" * 256,
    "x" * 257,
    "function",
    "custom",
    "string",
    "OBJECT",
    [],
    [""],
    ["a"],
    ["a", "a"],
    ["a", 1],
    ["x" * 65],
    ["a b"],
    {},
    {"type": "object"},
    {"type": "OBJECT"},
    {"type": 5},
    {"readOnlyHint": "yes"},
    {"readOnlyHint": False, "title": 5},
    {"title": "t", "x": [[1]]},
]
KEYS = [*FAST_ENTRY_KEYS, "readOnlyHint", "openWorldHint"]


@pytest.mark.parametrize("shape", sorted(BASES))
def test_the_rules_vouch_for_no_value_the_general_checks_refuse(shape: str) -> None:
    base = BASES[shape]
    defaults: dict[str, Any] = {"namespace": None, "tags": ("ft",), "shape": None}
    accepted = 0
    for key in KEYS:
        for value in VALUES:
            variants = [{**base, key: value}, {k: v for k, v in base.items() if k != key}]
            if shape == "openai":
                variants.append({**base, "function": {**base["function"], key: value}})
            if "annotations" in base:
                variants.append({**base, "annotations": {**base["annotations"], key: value}})
            for entry in variants:
                count = vouched(entry, defaults)
                if count >= 0:
                    accepted += 1
                    general(entry, defaults, "stem", Source("f"))  # no finding
                    assert count == parse.strings_in(entry), entry
    assert accepted > 150


def test_the_rules_leave_gemini_and_built_in_tools_to_the_general_path() -> None:
    defaults: dict[str, Any] = {"namespace": None, "tags": (), "shape": None}
    for entry in (
        {"name": "g", "parameters": {"type": "OBJECT", "properties": {}}},
        {"name": "g", "parametersJsonSchema": {"type": "object"}},
        {"type": "web_search"},
        {"googleSearch": {}},
    ):
        assert vouched(entry, defaults) == -1
    assert vouched({"name": "g"}, {**defaults, "shape": "gemini"}) == -1
