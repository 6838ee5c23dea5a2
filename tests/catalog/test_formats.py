"""Tests for toolfind.catalog.formats: listing a document's entries and reading each into a Tool."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import PARAMS, SRC, read
from toolfind.catalog import metaschema
from toolfind.catalog.formats import list_entries
from toolfind.catalog.paths import EntryError, json_pointer, pointer_parts
from toolfind.errors import CatalogError
from toolfind.output.tool_formats import tool_to_format
from toolfind.shapes import FORMATS

# --- documents ---------------------------------------------------------------------------


def pointers(doc: Any) -> list[str]:
    return [pointer for pointer, _, _ in list_entries(doc)]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ([{"name": "a"}, {"name": "b"}], ["/0", "/1"]),
        ({"model": "gpt", "messages": [], "tools": [{"name": "a"}]}, ["/tools/0"]),
        ({"tools": [{"name": "a"}], "nextCursor": "x"}, ["/tools/0"]),
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "a"}]}}, ["/result/tools/0"]),
        ({"functionDeclarations": [{"name": "a"}]}, ["/functionDeclarations/0"]),
        ({"function_declarations": [{"name": "a"}]}, ["/function_declarations/0"]),
        (
            {"tools": [{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}]},
            ["/tools/0/functionDeclarations/0", "/tools/0/functionDeclarations/1"],
        ),
        ([{"functionDeclarations": [{"name": "a"}]}], ["/0/functionDeclarations/0"]),
        ({"functions": [{"name": "a"}]}, ["/functions/0"]),
        ({"name": "a", "parameters": {}}, [""]),
        ({"namespace": "x", "tools": []}, []),
    ],
)
def test_list_entries_finds_entries_in_every_document_shape(doc: Any, expected: list[str]) -> None:
    assert pointers(doc) == expected


def test_list_entries_gives_file_defaults_of_a_native_catalog() -> None:
    [(_, _, defaults)] = list_entries({"namespace": "web", "tags": ["net"], "tools": [{}]})
    assert defaults == {"namespace": "web", "tags": ("net",), "defer": False, "shape": None}
    [(_, _, defaults)] = list_entries({"defer": True, "tools": [{}]})
    assert defaults["defer"] is True


def test_list_entries_marks_gemini_declarations_as_gemini() -> None:
    [(_, _, defaults)] = list_entries({"tools": [{"functionDeclarations": [{"name": "a"}]}]})
    assert defaults["shape"] == "gemini"


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (5, "expected a tool, a list of tools or an object with a 'tools' list, got a number"),
        ("x", "expected a tool, a list of tools or an object with a 'tools' list, got a string"),
        ({"tools": {"a": 1}}, "tools: {'a': 1} is not of type 'array'"),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}},
            "error: this JSON-RPC response is an error, not a tools/list result",
        ),
        (
            {"namespace": "a b", "tools": []},
            "namespace: 'a b' is not a namespace: use at most 64 characters and no whitespace, '/' or ':'",
        ),
        ({"tags": "x", "tools": []}, "tags: 'x' is not of type 'array'"),
    ],
)
def test_list_entries_rejects_documents_without_a_usable_shape(doc: Any, message: str) -> None:
    with pytest.raises(CatalogError) as caught:
        list_entries(doc)
    assert str(caught.value) == message


# --- reading -----------------------------------------------------------------------------


def test_reading_an_openai_tool_takes_the_function_body() -> None:
    tool = read(
        {
            "type": "function",
            "function": {"name": "f", "description": "D.", "parameters": PARAMS, "strict": True},
        }
    )
    assert (tool.name, tool.description, tool.parameters) == ("f", "D.", PARAMS)


def test_reading_an_mcp_tool_keeps_title_annotations_and_output_schema() -> None:
    entry = {
        "name": "t",
        "title": "T",
        "description": "D.",
        "inputSchema": PARAMS,
        "outputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True, "openWorldHint": False, "destructiveHint": False},
        "execution": {"taskSupport": "forbidden"},
    }
    tool = read(entry)
    assert tool.title == "T"
    assert tool.output_schema == {"type": "object"}
    assert tool.all_tags == ("read-only",)
    assert tool.original is entry
    assert tool.source == SRC


def test_reading_an_anthropic_tool_ignores_cache_control_and_reads_defer_loading_as_defer() -> None:
    tool = read(
        {
            "name": "t",
            "input_schema": PARAMS,
            "cache_control": {"type": "ephemeral"},
            "defer_loading": True,
        }
    )
    assert (tool.parameters, tool.defer) == (PARAMS, True)


def test_reading_a_gemini_declaration_converts_the_openapi_schema() -> None:
    entry = {
        "name": "g",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "city": {"type": "STRING", "nullable": True, "description": "City."},
                "days": {"type": "ARRAY", "items": {"type": "INTEGER"}},
            },
            "required": ["city"],
        },
    }
    assert read(entry).parameters == {
        "type": "object",
        "properties": {
            "city": {"type": ["string", "null"], "description": "City."},
            "days": {"type": "array", "items": {"type": "integer"}},
        },
        "required": ["city"],
    }


def test_reading_a_gemini_declaration_with_lower_case_types_in_a_declaration_list() -> None:
    [(pointer, entry, defaults)] = list_entries(
        {
            "functionDeclarations": [
                {
                    "name": "g",
                    "parameters": {
                        "type": "object",
                        "properties": {"a": {"type": "string", "nullable": True}},
                    },
                }
            ]
        }
    )
    tool = read(entry, shape=defaults["shape"])
    assert tool.parameters["properties"]["a"] == {"type": ["string", "null"]}


def test_reading_a_gemini_json_schema_declaration_keeps_it_verbatim() -> None:
    tool = read(
        {"name": "g", "parametersJsonSchema": PARAMS, "responseJsonSchema": {"type": "string"}}
    )
    assert (tool.parameters, tool.output_schema) == (PARAMS, {"type": "string"})


def test_an_entry_without_parameters_gets_an_empty_object_schema() -> None:
    assert read({"name": "f"}).parameters == {"type": "object", "properties": {}}


def test_namespace_is_the_entrys_own_else_the_one_given() -> None:
    assert read({"name": "f"}, namespace="file").namespace == "file"
    assert read({"name": "f", "namespace": "own"}, namespace="file").namespace == "own"


def test_file_tags_come_before_the_entrys_own_without_repeats() -> None:
    tool = read({"name": "f", "tags": ["b", "a"]}, tags=("a", "c"))
    assert tool.tags == ("a", "c", "b")


def test_native_metadata_is_read_next_to_any_shape() -> None:
    entry = {
        "type": "function",
        "function": {"name": "f"},
        "search_hint": "hint",
        "defer": True,
        "enabled": False,
        "aliases": ["g"],
        "tags": ["t"],
    }
    tool = read(entry)
    assert (tool.search_hint, tool.defer, tool.enabled, tool.aliases, tool.tags) == (
        "hint",
        True,
        False,
        ("g",),
        ("t",),
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (5, "cat.json:3: tools[0]: 5 is not of type 'object'"),
        ({"description": "x"}, "cat.json:3: tools[0]: 'name' is a required property"),
        ({"name": 5}, "cat.json:3: tools[0].name: 5 is not of type 'string'"),
        ({"name": ""}, "cat.json:3: tools[0].name: must not be empty"),
        (
            {"name": "x" * 300},
            "cat.json:3: tools[0].name: is 300 characters long; the limit is 256",
        ),
        (
            {"name": "a\u202eb"},
            "cat.json:3: tools[0].name: contains the invisible or control character "
            "U+202E (RIGHT-TO-LEFT OVERRIDE) at index 1",
        ),
        (
            {"name": "a\U000e0041"},
            "cat.json:3: tools[0].name: contains the invisible or control character "
            "U+E0041 (TAG LATIN CAPITAL LETTER A) at index 1",
        ),
        (
            {"name": "f", "description": 7},
            "cat.json:3: tools[0].description: 7 is not of type 'string'",
        ),
        (
            {"name": "f", "description": "x" * 70_000},
            "cat.json:3: tools[0].description: is 70,000 characters long; the limit is 65,536",
        ),
        (
            {"name": "f", "parameters": [1]},
            "cat.json:3: tools[0].parameters: [1] is not of type 'object'",
        ),
        (
            {"type": "function", "function": {"name": "f", "parameters": "x"}},
            "cat.json:3: tools[0].function.parameters: 'x' is not of type 'object'",
        ),
        ({"name": "f", "tags": "x"}, "cat.json:3: tools[0].tags: 'x' is not of type 'array'"),
        (
            {"name": "f", "tags": ["a", 3]},
            "cat.json:3: tools[0].tags[1]: 3 is not of type 'string'",
        ),
        (
            {"name": "f", "defer": "yes"},
            "cat.json:3: tools[0].defer: 'yes' is not of type 'boolean'",
        ),
        ({"name": "f", "aliases": ["", "b"]}, "cat.json:3: tools[0].aliases[0]: must not be empty"),
        (
            {"name": "f", "namespace": "a/b"},
            "cat.json:3: tools[0].namespace: 'a/b' is not a namespace: use at most 64 characters and no whitespace, '/' or ':'",
        ),
        (
            {"type": "web_search"},
            "cat.json:3: tools[0]: built-in tool 'web_search' has no schema; skipped",
        ),
    ],
)
def test_a_bad_entry_raises_one_line_naming_file_line_and_path(entry: Any, message: str) -> None:
    with pytest.raises(EntryError) as caught:
        read(entry)
    assert str(caught.value) == message


def test_a_schema_nested_too_deep_is_refused() -> None:
    schema: dict[str, Any] = {"type": "object"}
    node = schema
    for _ in range(70):
        node["items"] = {"type": "array"}
        node = node["items"]
    with pytest.raises(EntryError) as caught:
        read({"name": "f", "parameters": schema})
    assert caught.value.message == "schema is nested deeper than 64 levels"
    assert caught.value.parts == ("parameters",)


def test_a_schema_nested_10000_deep_is_refused_without_recursion_error() -> None:
    schema: dict[str, Any] = {}
    node = schema
    for _ in range(10_000):
        node["not"] = {}
        node = node["not"]
    with pytest.raises(EntryError):
        read({"name": "f", "parameters": schema})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
entry_keys = st.sampled_from(
    [
        "name",
        "description",
        "parameters",
        "inputSchema",
        "input_schema",
        "outputSchema",
        "type",
        "function",
        "tags",
        "namespace",
        "defer",
        "enabled",
        "aliases",
        "annotations",
        "title",
        "parametersJsonSchema",
        "response",
        "search_hint",
        "tools",
        "functionDeclarations",
    ]
)
entries = st.dictionaries(entry_keys, json_values, max_size=6)


@settings(max_examples=80, deadline=None)
@given(doc=entries | st.lists(entries, max_size=3) | json_values)
def test_reading_any_value_raises_nothing_but_catalog_error(doc: Any) -> None:
    try:
        found = list_entries(doc)
    except CatalogError:
        return
    for _, entry, defaults in found:
        try:
            tool = read(entry, shape=defaults["shape"])
        except CatalogError:
            continue
        for fmt in FORMATS:
            tool_to_format(tool, fmt)


# --- fast paths agree with what they stand for ------------------------------------------------


def _levels_below(value: Any) -> int:
    """How many levels of objects/arrays nest below ``value`` (0 when none do)."""
    children = value.values() if isinstance(value, Mapping) else value
    return max((1 + _levels_below(c) for c in children if isinstance(c, dict | list)), default=0)


json_trees = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(tree=st.dictionaries(st.text(max_size=3), json_trees, max_size=4), limit=st.integers(0, 7))
def test_too_deep_is_true_exactly_when_nesting_reaches_the_limit(
    tree: dict[str, Any], limit: int
) -> None:
    assert metaschema.too_deep(tree, limit) == (_levels_below(tree) >= limit)


def test_a_schema_nested_exactly_64_levels_is_accepted() -> None:
    schema: dict[str, Any] = {}
    node = schema
    for _ in range(63):
        node["items"] = {}
        node = node["items"]
    assert read({"name": "f", "parameters": schema}).parameters is schema
    node["items"] = {}
    with pytest.raises(EntryError, match="nested deeper than 64 levels"):
        read({"name": "f", "parameters": schema})


@settings(max_examples=100, deadline=None)
@given(doc=entries | st.lists(entries | st.lists(entries, max_size=2), max_size=3) | json_values)
def test_entry_pointers_are_the_json_pointers_of_the_entries(doc: Any) -> None:
    try:
        found = list_entries(doc)
    except CatalogError:
        return
    for pointer, entry, _ in found:
        value = doc
        for part in pointer_parts(pointer):
            value = value[part]
        assert value is entry
        assert json_pointer(pointer_parts(pointer)) == pointer
