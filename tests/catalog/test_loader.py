"""Tests for toolfind.catalog.loader: files to tools and findings, the fast path and the general one giving the same result."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import (
    FIXTURES,
    REPO,
    SHIPPED,
    TOOL_FIELDS,
    documents,
    dump,
    file_tools,
    general,
    load_one,
    messages,
    with_repeated_key,
    write,
)
from toolfind import catalog
from toolfind.catalog import loader
from toolfind.catalog.paths import EntryError
from toolfind.models import Source, Tool
from toolfind.output.tool_formats import tool_to_format
from toolfind.shapes import CARRIES, FORMATS

# --- real captures and shipped catalogs -----------------------------------------------------


def test_real_mcp_captures_load_without_findings() -> None:
    result = catalog.load([FIXTURES / "mcp"])
    assert result.findings == ()
    # time, git, everything, fetch, filesystem, memory, sequential thinking
    assert len(result.tools) == 2 + 12 + 13 + 1 + 14 + 9 + 1
    time = [t for t in result.tools if t.namespace == "mcp-server-time"]
    assert [t.name for t in time] == ["get_current_time", "convert_time"]
    assert time[0].all_tags == ("read-only", "idempotent")
    assert time[0].output_schema is not None


def test_an_mcp_capture_with_extra_keys_is_read_as_a_tools_list_document() -> None:
    result = catalog.load([FIXTURES / "mcp" / "server-everything.json"])
    echo = next(t for t in result.tools if t.name == "echo")
    assert echo.title == "Echo Tool"
    assert echo.source is not None and echo.source.pointer == "/tools/0"


def test_the_shipped_catalogs_load_without_errors() -> None:
    result = catalog.load([REPO / "catalogs"])
    assert result.errors == ()
    assert len(result.tools) >= 150


# --- entries and schemas ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "x" * 10_000}, "../c.json:1: name: is 10,000 characters long; the limit is 256"),
        ({"name": 5}, "../c.json:1: name: 5 is not of type 'string'"),
        ({"name": ""}, "../c.json:1: name: must not be empty"),
        (
            {"name": "read\u200bfile"},
            "../c.json:1: name: contains the invisible or control character U+200B (ZERO WIDTH SPACE) at index 4",
        ),
        (
            {"name": "a", "description": "x" * 1_000_000},
            "../c.json:1: description: is 1,000,000 characters long; the limit is 65,536",
        ),
        (
            [{"type": "function", "function": {"name": "f", "strict": "yes"}}],
            "../c.json:1: [0].function.strict: 'yes' is not of type 'boolean', 'null'",
        ),
        (
            {"name": "f", "inputSchema": {}, "annotations": {"readOnlyHint": "yes"}},
            "../c.json:1: annotations.readOnlyHint: 'yes' is not of type 'boolean'",
        ),
        (
            {"name": "f", "parameters": {"type": "strnig"}},
            "../c.json:1: parameters.type: 'strnig' is not valid under any of the given schemas",
        ),
        (
            {"name": "f", "parameters": {"required": "a"}},
            "../c.json:1: parameters.required: 'a' is not of type 'array'",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": 1}},
            "../c.json:1: error: this JSON-RPC response is an error, not a tools/list result",
        ),
    ],
)
def test_bad_entries_are_one_line_each(tmp_path: Path, entry: Any, message: str) -> None:
    assert messages(load_one(write(tmp_path / "c.json", json.dumps(entry)))) == [message]


def test_every_problem_of_an_entry_is_a_finding_with_its_own_place(tmp_path: Path) -> None:
    text = """[{"name": "f",
  "parameters": {"type": "object",
    "required": "n",
    "properties": {"n": {"type": "integr"}}}}]"""
    result = load_one(write(tmp_path / "c.json", text), every_problem=True)
    assert result.tools == ()
    assert messages(result) == [
        "../c.json:3: [0].parameters.required: 'n' is not of type 'array'",
        "../c.json:4: [0].parameters.properties.n.type: 'integr' is not valid under any of the"
        " given schemas",
    ]
    assert {(f.severity, f.rule) for f in result.findings} == {("error", "invalid")}
    # Loading for any other command: one finding for one skipped entry, the first.
    assert messages(load_one(tmp_path / "c.json")) == messages(result)[:1]


def test_a_broken_key_and_a_broken_schema_are_both_found(tmp_path: Path) -> None:
    entry = {
        "description": 5,
        "inputSchema": {"type": "object", "required": "n"},
        "outputSchema": {"type": "strnig"},
    }
    path = write(tmp_path / "c.json", [entry])
    assert messages(load_one(path, every_problem=True)) == [
        "../c.json:1: [0]: 'name' is a required property",
        "../c.json:1: [0].description: 5 is not of type 'string'",
        "../c.json:1: [0].inputSchema.required: 'n' is not of type 'array'",
        "../c.json:1: [0].outputSchema.type: 'strnig' is not valid under any of the given schemas",
    ]
    # Without the schema checks, only what reading the entry needs: its first problem.
    assert messages(load_one(path, every_problem=True, check_schemas=False)) == [
        "../c.json:1: [0]: 'name' is a required property"
    ]


def test_an_entry_with_very_many_problems_gets_at_most_a_hundred_lines(tmp_path: Path) -> None:
    # Keys sort as text: p000..p149 keeps the document's order equal to the names' order.
    properties = {f"p{i:03}": {"type": "integr"} for i in range(150)}
    entry = {"name": "f", "description": "d", "parameters": {"properties": properties}}
    said = messages(load_one(write(tmp_path / "c.json", [entry]), every_problem=True))
    not_valid = "'integr' is not valid under any of the given schemas"
    assert len(said) == 100
    assert said[:99] == [
        f"../c.json:1: [0].parameters.properties.p{i:03}.type: {not_valid}" for i in range(99)
    ]
    assert said[99] == "../c.json:1: [0]: and 51 more problems of this entry"


def test_a_problem_inside_a_value_already_wrong_is_not_said_twice(tmp_path: Path) -> None:
    entry = {"name": "f", "description": "x" * 70_000, "parameters": {"required": "a"}}
    path = write(tmp_path / "c.json", entry)
    assert messages(load_one(path, every_problem=True)) == [
        "../c.json:1: description: is 70,000 characters long; the limit is 65,536",
        "../c.json:1: parameters.required: 'a' is not of type 'array'",
    ]


def test_a_draft_07_schema_is_checked_against_the_draft_07_meta_schema(tmp_path: Path) -> None:
    params = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "items": [{"type": "string"}],
    }
    assert load_one(write(tmp_path / "c.json", {"name": "f", "parameters": params})).findings == ()


def test_a_remote_ref_is_never_fetched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_network(*args: Any, **kw: Any) -> None:
        raise AssertionError("network used")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    params = {
        "$schema": "https://example.com/my-meta.json",
        "type": "object",
        "properties": {
            "a": {"$ref": "https://example.com/x.json"},
            "b": {"$ref": "#/properties/b"},
        },
    }
    result = load_one(write(tmp_path / "c.json", {"name": "f", "parameters": params}))
    assert (result.findings, [t.name for t in result.tools]) == ((), ["f"])


def test_check_schemas_false_skips_only_the_meta_schema_checks(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.json", [{"name": "f", "parameters": {"type": "strnig"}}, {"name": 5}]
    )
    result = load_one(path, check_schemas=False)
    assert [t.name for t in result.tools] == ["f"]
    assert messages(result) == ["../c.json:1: [1].name: 5 is not of type 'string'"]


def test_built_in_tools_are_skipped_with_a_warning(tmp_path: Path) -> None:
    doc = {
        "tools": [{"type": "web_search"}, {"type": "function", "name": "f"}, {"googleSearch": {}}]
    }
    result = load_one(write(tmp_path / "req.json", doc))
    assert [t.name for t in result.tools] == ["f"]
    assert messages(result) == [
        "../req.json:1: tools[0]: built-in tool 'web_search' has no schema; skipped",
        "../req.json:1: tools[2]: built-in tool 'googleSearch' has no schema; skipped",
    ]
    assert {f.severity for f in result.findings} == {"warning"}


def test_namespace_comes_from_the_tool_then_the_file_then_the_file_stem(tmp_path: Path) -> None:
    write(tmp_path / "a/web tools.yaml", "tools:\n  - name: a\n")
    write(
        tmp_path / "b/x.yaml",
        "namespace: net\ntools:\n  - name: b\n  - {name: c, namespace: own}\n",
    )
    result = catalog.load([tmp_path])
    assert [(t.name, t.namespace) for t in result.tools] == [
        ("a", "web_tools"),
        ("b", "net"),
        ("c", "own"),
    ]


def test_a_duplicate_tool_in_a_later_file_is_skipped_and_the_first_wins(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", "namespace: fs\ntools:\n  - name: read\n    description: first\n")
    write(
        tmp_path / "b.yaml",
        "namespace: fs\ntools:\n  - name: other\n  - name: read\n    description: second\n",
    )
    result = catalog.load([Path("..")])
    assert [(t.name, t.description) for t in result.tools] == [("read", "first"), ("other", "")]
    assert messages(result) == [
        "../b.yaml:4: tools[1]: duplicate tool 'fs/read': ../a.yaml:3 was loaded first and wins; this one is skipped"
    ]
    assert result.findings[0].severity == "warning"


def test_load_result_lists_every_catalog_file_found(tmp_path: Path) -> None:
    write(tmp_path / "a.json", {"name": "a"})
    write(tmp_path / "b.json", "{")
    assert catalog.load([Path("..")]).files == ("../a.json", "../b.json")


def test_importing_catalog_does_not_import_yaml_or_jsonschema() -> None:
    code = "import sys, toolfind.catalog.loader; print(sorted(m for m in ('yaml', 'jsonschema') if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=file_tools, fmt=st.sampled_from(FORMATS), as_yaml=st.booleans())
def test_any_tool_written_to_a_file_in_any_format_loads_back_equal(
    tool: Tool, fmt: str, as_yaml: bool
) -> None:
    entry = tool_to_format(tool, fmt)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / ("t.yaml" if as_yaml else "t.json")
        text = yaml.safe_dump({"tools": [entry]}) if as_yaml else json.dumps({"tools": [entry]})
        path.write_text(text, encoding="utf-8")
        result = catalog.load([path])
    assert result.errors == ()
    [back] = result.tools
    assert {f: getattr(back, f) for f in CARRIES[fmt]} == {
        f: getattr(tool, f) for f in CARRIES[fmt]
    }


# --- fuzz: hostile bytes never escape as anything but findings ------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=20,
)
tool_keys = st.sampled_from(
    [
        "name",
        "description",
        "parameters",
        "inputSchema",
        "input_schema",
        "type",
        "function",
        "tools",
        "tags",
        "namespace",
        "defer",
        "aliases",
        "annotations",
        "functionDeclarations",
        "result",
        "jsonrpc",
    ]
)
tool_like = st.recursive(
    json_values,
    lambda inner: st.dictionaries(tool_keys, inner, max_size=5) | st.lists(inner, max_size=3),
    max_leaves=15,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    content=st.binary(max_size=300) | tool_like.map(lambda v: json.dumps(v).encode()),
    suffix=st.sampled_from([".json", ".yaml", ".jsonl"]),
)
def test_load_turns_any_bytes_into_tools_or_findings(content: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"fuzz{suffix}"
        path.write_bytes(content)
        result = catalog.load([path])
        catalog.lint(result)
    assert all("\n" not in str(f) for f in result.findings)


def test_loading_well_formed_catalogs_never_imports_jsonschema() -> None:
    code = (
        "import sys; from pathlib import Path; from toolfind.catalog import loader as catalog; "
        f"r = catalog.load([Path({str(REPO / 'catalogs')!r}), Path({str(FIXTURES / 'mcp')!r})]); "
        "print(len(r.tools), len(r.errors), 'jsonschema' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    tools, errors, imported = out.stdout.split()
    assert int(tools) > 150 and errors == "0" and imported == "False"


# --- the one-pass load: a document proved free of repeated keys by counting its strings -------
#
# The loader parses JSON without looking for repeated keys and proves there are none by
# counting the strings of the entries it reads (rules.vouch counts them); the proof must find
# what the checking parse finds. The reference parses looking for repeated keys and checks
# every entry the general way.


def reference_load(paths: list[Path]) -> Any:
    """``catalog.load`` without the one-pass proof: every JSON document parsed looking for
    repeated keys, every entry checked the general way."""
    parse = loader.parse_json
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loader, "read_tool", lambda *args: -1)
        patch.setattr(
            loader,
            "parse_json",
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
    path = write(tmp_path / "c.json", text)
    result = catalog.load([path])
    assert any("duplicate key" in f.message for f in result.findings)
    same_result(result, reference_load([path]))


def test_a_document_nested_deeper_than_the_count_walks_is_parsed_again(tmp_path: Path) -> None:
    deep = "[" * 700 + "]" * 700
    path = write(tmp_path / "c.json", f'[{{"name": "t", "x-deep": {deep}}}, {{"name": "u"}}]')
    same_result(catalog.load([path]), reference_load([path]))
    assert [t.name for t in catalog.load([path]).tools] == ["t", "u"]


def test_json_lines_records_are_counted_one_by_one(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", f'{TOOL}\n{{"name": "a", "name": "b"}}\n\n{TOOL[:-1]}')
    same_result(catalog.load([path]), reference_load([path]))


def test_a_catalog_of_every_shape_loads_as_before(tmp_path: Path) -> None:
    shipped = SHIPPED
    fixtures = FIXTURES / "mcp"
    same_result(catalog.load([shipped, fixtures]), reference_load([shipped, fixtures]))


@pytest.mark.parametrize(
    ("document", "repeat"),
    [
        ({"tools": "LIST"}, False),
        ("LIST", False),
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": "LIST"}}, False),
        ("LIST", True),  # a repeated key: the document is parsed again, the general way
    ],
)
def test_a_json_entry_knows_the_line_it_starts_on(
    tmp_path: Path, document: Any, repeat: bool
) -> None:
    entries = [{"name": f"t{i}", "description": f"Tool {i}."} for i in range(3)]
    if repeat:
        entries[0]["x-note"] = "first"
    text = json.dumps(document, indent=2).replace('"LIST"', json.dumps(entries, indent=2))
    if repeat:
        text = text.replace('"x-note": "first"', '"x-note": "first", "x-note": "again"')
    path = write(tmp_path / "c.json", text)
    lines = text.splitlines()
    for tool in catalog.load([path]).tools:
        assert tool.source is not None and tool.source.line is not None
        start = lines[tool.source.line - 1]
        following = lines[tool.source.line]
        assert start.strip().startswith("{") and f'"{tool.name}"' in following
        assert str(tool.source) == f"{path}:{tool.source.line}#{tool.source.pointer}"


def test_gemini_declarations_inside_tools_each_know_their_line(tmp_path: Path) -> None:
    declarations = [{"name": f"g{i}", "description": f"Tool {i}."} for i in range(2)]
    text = json.dumps({"tools": [{"functionDeclarations": declarations}]}, indent=1)
    path = write(tmp_path / "g.json", text)
    lines = text.splitlines()
    tools = catalog.load([path]).tools
    assert [t.source.pointer for t in tools if t.source] == [
        "/tools/0/functionDeclarations/0",
        "/tools/0/functionDeclarations/1",
    ]
    for tool in tools:
        assert tool.source and tool.source.line and f'"{tool.name}"' in lines[tool.source.line]


def test_a_bad_entry_still_gets_its_one_line_finding(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.json", '[{"name": "ok"}, {"name": "bad", "parameters": {"type": "strnig"}}]'
    )
    result = catalog.load([path])
    assert [t.name for t in result.tools] == ["ok"]
    [finding] = result.findings
    assert finding.path == "[1].parameters.type" and "strnig" in finding.message
    same_result(result, reference_load([path]))
    with pytest.raises(EntryError):
        general({"name": "bad", "parameters": {"type": "strnig"}}, {}, "stem", Source("f"))


def test_names_that_differ_only_in_case_or_separators_are_a_warning_at_load(
    tmp_path: Path,
) -> None:
    (tmp_path / "alpha.json").write_text(
        json.dumps(
            [
                {"name": "read_file", "description": "alpha read file"},
                {"name": "Read-File", "description": "alpha other read file"},
            ]
        ),
        encoding="utf-8",
    )
    (tmp_path / "beta.json").write_text(
        json.dumps([{"name": "read_file", "description": "beta read file"}]), encoding="utf-8"
    )
    result = catalog.load([tmp_path])
    assert len(result.tools) == 3
    assert [(f.severity, f.message) for f in result.findings] == [
        (
            "warning",
            "'alpha/Read-File' and 'alpha/read_file' differ only in case or separators: each is "
            "found only by its exact name; rename one to tell them apart",
        )
    ]


def test_read_entry_reads_one_entry_from_anywhere_by_the_catalog_rules() -> None:
    where = Source("mcp://srv", "/tools/0")
    entry = {"name": "t", "description": "d", "inputSchema": {"type": "object"}, "tags": ["x"]}
    tool = catalog.read_entry(entry, namespace="srv", source=where, shape="mcp")
    assert (tool.name, tool.namespace, tool.tags, tool.source) == ("t", "srv", ("x",), where)
    assert tool.original is entry
    long = {"name": "t", "inputSchema": {}, "description": "x" * 65_537}
    with pytest.raises(EntryError, match="the limit is 65,536") as too_long:
        catalog.read_entry(long, namespace="srv", source=where)
    assert too_long.value.full_parts == ("tools", 0, "description")
    bad = {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "strnig"}}}}
    with pytest.raises(EntryError, match="strnig"):
        catalog.read_entry(bad, namespace="srv", source=where)
    assert catalog.read_entry(bad, namespace="srv", source=where, check_schemas=False).name == "t"


def test_a_file_level_defer_defers_its_tools_unless_an_entry_says_otherwise(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "capture.json",
        json.dumps(
            {
                "defer": True,
                "tools": [
                    {"name": "a", "inputSchema": {"type": "object"}},
                    {"name": "b", "inputSchema": {"type": "object"}, "defer": False},
                ],
            }
        ),
    )
    write(tmp_path / "bad.json", json.dumps({"defer": "yes", "tools": [{"name": "c"}]}))
    result = catalog.load([tmp_path])
    assert [(t.name, t.defer) for t in result.tools] == [("a", True), ("b", False)]
    assert messages(result) == [f"{tmp_path / 'bad.json'}:1: defer: 'yes' is not of type 'boolean'"]


def test_anthropics_defer_loading_is_read_as_defer(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {}}
    write(
        tmp_path / "request.json",
        json.dumps(
            {
                "tools": [
                    {"name": "later", "input_schema": schema, "defer_loading": True},
                    {"name": "now", "input_schema": schema, "defer_loading": False},
                    {"name": "plain", "input_schema": schema},
                ]
            }
        ),
    )
    result = catalog.load([tmp_path])
    assert [(t.name, t.defer) for t in result.tools] == [
        ("later", True),
        ("now", False),
        ("plain", False),
    ]


def test_defer_namespaces_defers_every_tool_of_those_namespaces() -> None:
    tools = [Tool("a", "", namespace="GitHub"), Tool("b", "", namespace="files")]
    assert [t.defer for t in catalog.defer_namespaces(tools, ["github"])] == [True, False]
    assert catalog.defer_namespaces(tools, ()) == tools
