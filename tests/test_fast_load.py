"""The fast load path agrees with the general one.

``catalog`` loads a JSON document without looking for repeated keys (counting its strings
instead) and reads well-formed entries with ``_fast_tool``, one pass per entry; everything it
cannot vouch for goes the general way (``formats.tool_from_entry``, ``_check_schemas``, a parse
that records repeated keys). These tests hold the fast path to the general one: the same
tools, the same findings, and counts that never exceed the strings really there (a count too
high could hide a repeated key).
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import test_catalog as catalog_tests
from tests.test_catalog import _objects_in
from toolfind import catalog
from toolfind.catalog import formats, loader, metaschema, parse, paths, rules, validate
from toolfind.catalog.formats import EntryError, detect_entry, tool_to_format
from toolfind.models import Source, Tool, new_source, new_tool

TOOL_FIELDS = [f.name for f in dataclasses.fields(Tool)]


def general(entry: Any, defaults: dict[str, Any], namespace: str, source: Source) -> Tool:
    """What the loader's general path makes of an entry (raises EntryError for a finding)."""
    shape = defaults.get("shape") or detect_entry(entry)
    tool = formats.tool_from_entry(
        entry,
        namespace=defaults.get("namespace") or namespace,
        tags=defaults.get("tags", ()),
        source=source,
        shape=shape,
    )
    validate._check_schemas(entry, shape, tool, source)
    return tool


def same_tool(a: Tool, b: Tool) -> bool:
    """Equal in every field, source and original included (and the very same original)."""
    return (
        type(a) is type(b) is Tool
        and all(getattr(a, f) == getattr(b, f) for f in TOOL_FIELDS)
        and a.original is b.original
    )


# --- strategies ------------------------------------------------------------------------------

names = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
simple_types = st.sampled_from(
    ["string", "integer", "number", "boolean", "object", "array", "null"]
)
property_schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": simple_types,
        "description": texts,
        "enum": st.lists(st.text(max_size=4), max_size=3, unique=True),
        "default": st.none() | st.integers() | texts,
        "x-extra": st.none() | st.booleans() | st.lists(texts, max_size=2),
    },
)
object_schemas = st.fixed_dictionaries(
    {"type": st.just("object")},
    optional={
        "properties": st.dictionaries(names, property_schemas, max_size=4),
        "required": st.lists(names, max_size=3, unique=True),
        "additionalProperties": st.booleans(),
        "$schema": st.sampled_from(
            [
                "https://json-schema.org/draft/2020-12/schema",
                "http://json-schema.org/draft-07/schema#",
            ]
        ),
    },
)
tools = st.builds(
    Tool,
    name=names,
    description=texts,
    parameters=object_schemas,
    namespace=st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
    tags=st.lists(names, max_size=2, unique=True).map(tuple),
    search_hint=texts,
    defer=st.booleans(),
    enabled=st.booleans(),
    aliases=st.lists(names, max_size=2, unique=True).map(tuple),
    annotations=st.fixed_dictionaries(
        {}, optional={"readOnlyHint": st.booleans(), "title": texts, "x": st.integers()}
    ),
    title=st.none() | texts,
    output_schema=st.none() | object_schemas,
)
well_formed_entries = st.builds(tool_to_format, tools, st.sampled_from(formats.FORMATS))
# Values of every kind, many of them wrong wherever they land. Each draw is a fresh copy:
# `entries` edits the objects it draws, and editing the constants shared by every test case
# would make Hypothesis see different data for the same choices (FlakyStrategyDefinition).
odd_values = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            0,
            -1,
            1.5,
            "",
            " ",
            "x",
            "a/b",
            "a b",
            "ns\n",
            "\u200bname",
            "x" * 65,
            "x" * 257,
            "function",
            "custom",
            "OBJECT",
            "string",
            [],
            ["a", "a"],
            ["a", 1],
            [""],
            {},
            {"type": "OBJECT"},
            {"type": 5},
            {"type": "object", "properties": {"a": {"type": "strnig"}}},
            {"readOnlyHint": "yes"},
            {"title": 5},
            {"a": [[[[1]]]]},
        ]
    ),
    texts,
    st.lists(texts, max_size=2),
).map(copy.deepcopy)
# test_catalog's keys of every entry shape, and the ones the fast path treats specially.
ENTRY_KEYS = [*catalog_tests.ENTRY_KEYS, "name", "x-unknown", "googleSearch"]
entry_keys = st.sampled_from(ENTRY_KEYS)


@st.composite
def entries(draw: st.DrawFn) -> Any:
    """A well-formed entry of any format, often with one key of one of its objects (schemas
    included) set to an odd value, or deleted."""
    entry = draw(well_formed_entries)
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from(_objects_in(entry)))
        key = draw(entry_keys | st.sampled_from(sorted(target) or ["name"]))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = draw(odd_values)
    return entry


defaults_strategy = st.fixed_dictionaries(
    {
        "namespace": st.none() | st.just("filens"),
        "tags": st.sampled_from([(), ("t",), ("t", "u")]),
        "shape": st.none() | st.just("gemini"),
    }
)


# --- the fast path and the general path make the same tool -------------------------------------


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=entries(), defaults=defaults_strategy)
def test_a_tool_the_fast_path_reads_is_the_general_paths_and_its_strings_are_counted(
    entry: Any, defaults: dict[str, Any]
) -> None:
    source = Source("f.json", "/0", None)
    made: list[Tool] = []
    count = rules._fast_tool(entry, defaults, "stem", source, made)
    if count < 0:
        assert made == []
        return
    [fast] = made
    reference = general(entry, defaults, "stem", source)  # must not raise: no finding
    assert same_tool(fast, reference)
    assert count == parse._strings_in(entry)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=tools, fmt=st.sampled_from([f for f in formats.FORMATS if f != "gemini"]))
def test_the_fast_path_reads_well_formed_entries_of_every_format(tool: Tool, fmt: str) -> None:
    entry = tool_to_format(tool, fmt)
    made: list[Tool] = []
    defaults = {"namespace": None, "tags": (), "shape": None}
    assert rules._fast_tool(entry, defaults, "stem", Source("f"), made) >= 0
    assert same_tool(made[0], general(entry, defaults, "stem", Source("f")))


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
KEYS = [*ENTRY_KEYS, "readOnlyHint", "openWorldHint"]


@pytest.mark.parametrize("shape", sorted(BASES))
def test_the_fast_path_accepts_no_value_the_general_path_refuses_or_reads_otherwise(
    shape: str,
) -> None:
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
                made: list[Tool] = []
                count = rules._fast_tool(entry, defaults, "stem", Source("f"), made)
                if count >= 0:
                    accepted += 1
                    assert same_tool(made[0], general(entry, defaults, "stem", Source("f"))), entry
                    assert count == parse._strings_in(entry), entry
    assert accepted > 150


def test_the_fast_path_leaves_gemini_and_built_in_tools_to_the_general_path() -> None:
    made: list[Tool] = []
    defaults: dict[str, Any] = {"namespace": None, "tags": (), "shape": None}
    for entry in (
        {"name": "g", "parameters": {"type": "OBJECT", "properties": {}}},
        {"name": "g", "parametersJsonSchema": {"type": "object"}},
        {"type": "web_search"},
        {"googleSearch": {}},
    ):
        assert rules._fast_tool(entry, defaults, "stem", Source("f"), made) == -1
    gemini = {**defaults, "shape": "gemini"}
    assert rules._fast_tool({"name": "g"}, gemini, "stem", Source("f"), made) == -1
    assert made == []


# --- the one-walk schema check implies the reference checks -----------------------------------

short = st.text(max_size=3)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | short,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short, inner, max_size=3),
    max_leaves=8,
)
keywords = st.sampled_from(
    sorted({*metaschema._META_KEYWORDS, "x-vendor", "nullable", "required", "properties"})
)
schemas = st.recursive(
    st.dictionaries(keywords, any_json | simple_types, max_size=4),
    lambda inner: st.dictionaries(
        keywords,
        inner
        | st.dictionaries(short, inner | st.booleans(), max_size=3)
        | st.lists(inner | st.booleans(), max_size=3)
        | any_json
        | simple_types,
        max_size=4,
    ),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas | object_schemas)
def test_a_schema_the_one_walk_accepts_passes_both_reference_checks(
    schema: dict[str, Any],
) -> None:
    count = metaschema._fast_schema(schema)
    if count >= 0:
        assert metaschema._surely_valid_schema(schema)
        assert not formats._too_deep(schema, formats.MAX_SCHEMA_DEPTH)
        assert count == parse._strings_in(schema)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=object_schemas)
def test_the_one_walk_decides_common_schemas(schema: dict[str, Any]) -> None:
    assert metaschema._fast_schema(schema) == parse._strings_in(schema)


def _nested(depth: int, leaf: Any) -> dict[str, Any]:
    schema: Any = leaf
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return dict(schema)


@pytest.mark.parametrize("depth", [1, 20, 31, 32, 33, 40])
@pytest.mark.parametrize(
    "leaf", [{}, {"type": "string", "description": "d"}, {"default": [[1]]}, {"enum": [[[]]]}]
)
def test_the_one_walk_never_accepts_what_is_nested_too_deep(depth: int, leaf: Any) -> None:
    schema = _nested(depth, leaf)
    if metaschema._fast_schema(schema) >= 0:
        assert not formats._too_deep(schema, formats.MAX_SCHEMA_DEPTH)
    if depth <= 20:
        assert metaschema._fast_schema(schema) >= 0


# --- counting the strings of JSON text ----------------------------------------------------------

tricky_text = st.text(
    st.sampled_from(['"', "\\", "a", " ", ":", "\n", "é", "\u2028", "/", "😀"]),
    max_size=8,
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | tricky_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(tricky_text, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, ensure_ascii=st.booleans(), indent=st.none() | st.just(2))
def test_the_quotes_counted_in_json_text_are_twice_its_strings(
    value: Any, ensure_ascii: bool, indent: int | None
) -> None:
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    assert parse._string_quotes(text) == 2 * parse._strings_in(json.loads(text))


# --- whole loads: the same result with and without the fast path --------------------------------


class Pairs(list[tuple[str, Any]]):
    """An object written with its pairs as they are, repeated keys included."""


def dump(value: Any) -> str:
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return dump(Pairs(value.items()))
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value)


@st.composite
def with_repeated_key(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one of its objects (maybe) writing one of its keys twice."""
    value = copy.deepcopy(value)
    objects = [o for o in _objects_in(value) if o]
    if not objects or not draw(st.booleans()):
        return value
    target = draw(st.sampled_from(objects))
    key = draw(st.sampled_from(sorted(target)))
    pairs = Pairs(target.items())
    pairs.insert(draw(st.integers(0, len(pairs))), (key, draw(odd_values)))

    def swap(node: Any) -> Any:
        if node is target:
            return pairs
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v) for v in node]
        return node

    return swap(value)


documents = st.one_of(
    st.lists(entries(), max_size=4),
    st.fixed_dictionaries(
        {"tools": st.lists(entries(), max_size=4)},
        optional={
            "namespace": st.just("docns"),
            "tags": st.builds(lambda: ["dt"]),
            "nextCursor": texts,
        },
    ),
    st.lists(entries(), max_size=3).map(
        lambda items: {"jsonrpc": "2.0", "id": 1, "result": {"tools": items}}
    ),
    st.lists(entries(), max_size=2).map(lambda items: [{"functionDeclarations": items}, *items]),
    entries(),
    odd_values,
)


def reference_load(paths: list[Path]) -> Any:
    """``catalog.load`` without the fast path: every entry read and checked the general way,
    every JSON document parsed looking for repeated keys."""
    parse = loader._parse_json
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "_fast_tool", lambda *args: -1)
        patch.setattr(
            loader,
            "_parse_json",
            lambda text, jsonl_index=None, find_duplicates=True: parse(text, jsonl_index),
        )
        return catalog.load(paths)


def same_result(a: Any, b: Any) -> None:
    assert a.findings == b.findings
    assert a.files == b.files
    assert len(a.tools) == len(b.tools)
    for x, y in zip(a.tools, b.tools, strict=True):
        assert all(getattr(x, f) == getattr(y, f) for f in TOOL_FIELDS)
        assert x.original == y.original


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    doc=documents.flatmap(with_repeated_key),
    suffix=st.sampled_from([".json", ".jsonl", ".yaml"]),
)
def test_load_gives_the_same_tools_and_findings_with_and_without_the_fast_path(
    doc: Any, suffix: str
) -> None:
    if suffix == ".jsonl":
        items = doc if isinstance(doc, list) else [doc]
        text = "\n".join(dump(item) for item in items)
    elif suffix == ".yaml":
        text = yaml.safe_dump(json.loads(dump(doc)))
    else:
        text = dump(doc)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"c{suffix}"
        path.write_text(text, encoding="utf-8")
        same_result(catalog.load([path]), reference_load([path]))


def _write(tmp_path: Path, text: str, name: str = "c.json") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


TOOL = '{"name": "t", "description": "d", "parameters": {"type": "object"}}'


@pytest.mark.parametrize(
    "text",
    [
        f'[{TOOL}, {{"name": "u", "name": "v"}}]',
        f'[{TOOL}, {{"name": "u", "parameters": {{"type": "object", "type": "string"}}}}]',
        f'{{"tools": [{TOOL}], "tools": []}}',
        f'{{"tools": [{TOOL}], "namespace": "a", "namespace": "b"}}',
        f'[{{"functionDeclarations": [{TOOL}], "functionDeclarations": []}}]',
        f'{{"jsonrpc": "2.0", "result": {{"tools": [{TOOL}]}}, "id": 1, "id": 2}}',
        '{"name": "solo", "name": "solo"}',
        f'[{TOOL}, "a", "a", {{"name": "w", "x": {{"a": 1, "a": 1}}}}]',
    ],
)
def test_repeated_keys_anywhere_are_found_as_before(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, text)
    result = catalog.load([path])
    assert any("duplicate key" in f.message for f in result.findings)
    same_result(result, reference_load([path]))


def test_a_document_nested_deeper_than_the_count_walks_is_parsed_again(tmp_path: Path) -> None:
    deep = "[" * 700 + "]" * 700
    path = _write(tmp_path, f'[{{"name": "t", "x-deep": {deep}}}, {{"name": "u"}}]')
    same_result(catalog.load([path]), reference_load([path]))
    assert [t.name for t in catalog.load([path]).tools] == ["t", "u"]


def test_json_lines_records_are_counted_one_by_one(tmp_path: Path) -> None:
    path = _write(tmp_path, f'{TOOL}\n{{"name": "a", "name": "b"}}\n\n{TOOL[:-1]}', "c.jsonl")
    same_result(catalog.load([path]), reference_load([path]))


def test_a_catalog_of_every_shape_loads_as_before(tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parent.parent / "catalogs"
    fixtures = Path(__file__).resolve().parent / "fixtures" / "mcp"
    same_result(catalog.load([shipped, fixtures]), reference_load([shipped, fixtures]))


# --- list_entries ------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents)
def test_list_entries_lists_what_iter_entries_yields(doc: Any) -> None:
    try:
        expected = list(formats.iter_entries(doc))
    except formats.CatalogError as exc:
        with pytest.raises(formats.CatalogError) as raised:
            formats.list_entries(doc)
        assert (raised.value.message, raised.value.path) == (exc.message, exc.path)
        return
    found = formats.list_entries(doc)
    assert found == expected
    assert all(a[1] is b[1] for a, b in zip(found, expected, strict=True))
    assert [p for p, _, _ in found] == [
        paths.json_pointer(paths.pointer_parts(p)) for p, _, _ in found
    ]


# --- the fast constructors ----------------------------------------------------------------------


def test_new_tool_and_new_source_make_what_the_classes_make() -> None:
    source = new_source("f.json", "/tools/0", 3)
    assert type(source) is Source and source == Source("f.json", "/tools/0", 3)
    values: dict[str, Any] = {
        "name": "n",
        "description": "d",
        "parameters": {"type": "object"},
        "namespace": "ns",
        "tags": ("a",),
        "search_hint": "h",
        "defer": True,
        "enabled": False,
        "annotations": {"readOnlyHint": True},
        "aliases": ("m",),
        "title": "T",
        "output_schema": {"type": "string"},
        "source": source,
        "original": {"name": "n"},
    }
    tool = new_tool(*values.values())
    assert type(tool) is Tool
    assert same_tool(tool, Tool(**values)) and tool == Tool(**values)
    assert repr(tool) == repr(Tool(**values))
    assert pickle.loads(pickle.dumps(tool)) == tool
    assert dataclasses.replace(tool, name="m").name == "m"
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        source.line = 4  # type: ignore[misc]
    assert tool.all_tags == ("a", "read-only")


def test_tool_init_sets_every_field_and_stays_frozen() -> None:
    tool = Tool("n", tags=("a", "a"))
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.annotations == {} and tool.all_tags == ("a",) and tool.annotation_tags == ()
    assert Tool("n").all_tags == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.tags = ()  # type: ignore[misc]


def test_a_subclass_of_tool_is_still_filled_in() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, init=False)
    class Special(Tool):
        extra: int = 0

        def __init__(self, name: str) -> None:
            Tool.__init__(self, name, description="d")
            object.__setattr__(self, "extra", 5)

    special = Special("s")
    assert type(special) is Special
    assert (special.name, special.description, special.extra) == ("s", "d", 5)


def test_a_bad_entry_still_gets_its_one_line_finding(tmp_path: Path) -> None:
    path = _write(tmp_path, '[{"name": "ok"}, {"name": "bad", "parameters": {"type": "strnig"}}]')
    result = catalog.load([path])
    assert [t.name for t in result.tools] == ["ok"]
    [finding] = result.findings
    assert finding.path == "[1].parameters.type" and "strnig" in finding.message
    same_result(result, reference_load([path]))
    with pytest.raises(EntryError):
        general({"name": "bad", "parameters": {"type": "strnig"}}, {}, "stem", Source("f"))
