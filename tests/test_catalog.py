"""Tests for toolfind.catalog.loader: discovery, safe parsing, validation messages, lint."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolfind import catalog
from toolfind.catalog import metaschema, rules, validate
from toolfind.catalog.formats import CARRIES, FORMATS, detect_entry, tool_to_format
from toolfind.errors import CatalogError
from toolfind.models import LoadResult, Tool

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent


def write(directory: Path, name: str, content: str | bytes | Any) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


def messages(result: LoadResult) -> list[str]:
    return [str(f) for f in result.findings]


def load_one(path: Path, **kw: Any) -> LoadResult:
    # Relative paths, as a user types them: messages must show them as given.
    return catalog.load([Path(os.path.relpath(path))], **kw)


# --- real captures and shipped catalogs -----------------------------------------------------


def test_real_mcp_captures_load_without_findings() -> None:
    result = catalog.load([FIXTURES / "mcp"])
    assert result.findings == ()
    assert len(result.tools) == 2 + 12 + 13
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


# --- discovery ---------------------------------------------------------------------------


def test_discover_walks_directories_sorted_and_skips_hidden_and_other_files(tmp_path: Path) -> None:
    for name in (
        "b.yaml",
        "a.json",
        "sub/c.jsonl",
        "sub/d.yml",
        "notes.txt",
        ".hidden/e.json",
        ".f.json",
    ):
        write(tmp_path, name, "{}")
    found = catalog.discover([tmp_path])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.json",
        "b.yaml",
        "sub/c.jsonl",
        "sub/d.yml",
    ]


def test_discover_keeps_paths_as_given(tmp_path: Path) -> None:
    write(tmp_path, "cats/a.json", "{}")
    assert catalog.discover([Path("../cats")]) == [Path("../cats/a.json")]


def test_discover_ends_on_a_symlink_loop(tmp_path: Path) -> None:
    write(tmp_path, "cats/a.json", "{}")
    os.symlink(tmp_path / "cats", tmp_path / "cats" / "loop")
    os.symlink("self", tmp_path / "cats" / "self")
    assert catalog.discover([tmp_path / "cats"]) == [tmp_path / "cats" / "a.json"]


def test_discover_lists_a_file_reached_twice_once(tmp_path: Path) -> None:
    path = write(tmp_path, "a.json", "{}")
    assert catalog.discover([tmp_path, path]) == [path]


def test_a_missing_path_raises_a_one_line_catalog_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as caught:
        catalog.load([Path("nope/web.yaml")])
    assert str(caught.value) == "nope/web.yaml: no such file or directory"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_catalog_directory_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    write(tmp_path, "ok.json", {"name": "ok"})
    result = catalog.load([Path(os.path.relpath(tmp_path))])  # would hang if opened
    assert [t.name for t in result.tools] == ["ok"]
    assert messages(result) == ["../pipe.json: not a regular file (a FIFO); skipped"]
    assert result.findings[0].severity == "warning"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_given_by_name_is_an_error(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    assert messages(load_one(tmp_path / "pipe.json")) == [
        "../pipe.json: not a regular file (a FIFO); skipped"
    ]


def test_a_file_given_by_name_with_another_suffix_is_an_error(tmp_path: Path) -> None:
    assert messages(load_one(write(tmp_path, "tools.txt", "{}"))) == [
        "../tools.txt: not a catalog file: expected .json, .yaml, .yml or .jsonl"
    ]


def test_an_unreadable_file_is_a_finding_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "a.json", {"name": "a"})
    write(tmp_path, "b.json", {"name": "b"})
    real_open = os.open

    def deny(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith("a.json"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny)
    result = catalog.load([Path("..")])
    assert [t.name for t in result.tools] == ["b"]
    assert messages(result) == ["../a.json: cannot read: Permission denied"]


# --- limits and encodings ------------------------------------------------------------------


def test_a_file_over_the_size_limit_names_size_limit_and_how_to_raise_it(tmp_path: Path) -> None:
    path = write(tmp_path, "big.json", {"name": "a", "description": "x" * 200})
    assert messages(load_one(path, max_bytes=100)) == [
        f"../big.json: file is {path.stat().st_size} bytes, over the 100-byte limit; "
        "raise it with max_file_size in toolfind.toml"
    ]


def test_a_file_just_under_the_size_limit_loads(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.json", {"name": "a"})
    assert [t.name for t in load_one(path, max_bytes=path.stat().st_size).tools] == ["a"]


def test_invalid_utf8_is_an_error_with_the_byte_offset(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.json", b'{"name":\n "caf\xc3\xa9 \xff"}')
    assert messages(load_one(path)) == [
        "../bad.json:2: invalid UTF-8 at byte 17 (0xff); save the file as UTF-8"
    ]


def test_a_binary_file_with_a_json_name_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "bin.json", bytes(range(256)))
    assert messages(load_one(path)) == [
        "../bin.json:2: invalid UTF-8 at byte 128 (0x80); save the file as UTF-8"
    ]


def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "bom.json", b'\xef\xbb\xbf{"name": "a"}')
    assert [t.name for t in load_one(path).tools] == ["a"]


def test_utf16_with_a_bom_is_decoded(tmp_path: Path) -> None:
    path = write(tmp_path, "u16.yaml", "name: a\ndescription: Caf\u00e9 tool.\n".encode("utf-16"))
    [tool] = load_one(path).tools
    assert tool.description == "Caf\u00e9 tool."


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    assert messages(load_one(write(tmp_path, "e.json", ""))) == ["../e.json: file is empty"]
    assert messages(load_one(write(tmp_path, "e.yaml", "# nothing\n"))) == [
        "../e.yaml: file is empty"
    ]


# --- JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"name": "a",\n "x": }', "../c.json:2: invalid JSON: Expecting value (column 7)"),
        (
            '{"name": "a",\n "x": NaN}',
            "../c.json:2: invalid JSON: NaN is not allowed (use null or a string)",
        ),
        (
            '{"d": "Infinity",\n "x": -Infinity}',
            "../c.json:2: invalid JSON: -Infinity is not allowed (use null or a string)",
        ),
        (
            "5",
            "../c.json:1: expected a tool, a list of tools or an object with a 'tools' list, got a number",
        ),
        ('{"name": 1' + "0" * 5000 + "}", "../c.json: invalid JSON: a number has too many digits"),
        ("[" * 10_000 + "]" * 10_000, "../c.json: invalid JSON: nesting is too deep to read"),
    ],
)
def test_bad_json_is_one_line_with_its_line(tmp_path: Path, text: str, message: str) -> None:
    assert messages(load_one(write(tmp_path, "c.json", text))) == [message]


def test_duplicate_json_keys_skip_only_their_entry(tmp_path: Path) -> None:
    path = write(
        tmp_path, "d.json", '{"tools": [\n {"name": "a"},\n {"name": "b",\n  "name": "c"}\n]}'
    )
    result = load_one(path)
    assert messages(result) == ["../d.json:4: tools[1]: duplicate key 'name'"]
    assert [t.name for t in result.tools] == ["a"]


def test_json_entry_errors_report_the_line_of_the_path(tmp_path: Path) -> None:
    doc = '{"tools": [\n  {"name": "a"},\n  {"name": "b",\n   "parameters": {"type": "object",\n     "properties": {"url": 5}}}\n]}'
    assert messages(load_one(write(tmp_path, "web.json", doc))) == [
        "../web.json:5: tools[1].parameters.properties.url: 5 is not of type 'object', 'boolean'"
    ]


# --- YAML ----------------------------------------------------------------------------------


def test_yaml_entry_errors_report_file_line_and_path(tmp_path: Path) -> None:
    text = "tools:\n  - name: ok\n  - name: web\n    parameters:\n      type: object\n      properties:\n        url: 5\n"
    result = load_one(write(tmp_path, "web.yaml", text))
    assert messages(result) == [
        "../web.yaml:7: tools[1].parameters.properties.url: 5 is not of type 'object', 'boolean'"
    ]
    assert [t.name for t in result.tools] == ["ok"]


def test_yaml_tools_carry_their_line(tmp_path: Path) -> None:
    [a, b] = load_one(write(tmp_path, "w.yaml", "tools:\n  - name: a\n\n  - name: b\n")).tools
    assert a.source is not None and b.source is not None
    assert (a.source.line, b.source.line, b.source.pointer) == (2, 4, "/tools/1")


BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            BILLION_LAUGHS,
            "../c.yaml:6: invalid YAML: YAML aliases expand to more than 100,000 nodes; refusing to load",
        ),
        (
            "!!python/object/apply:os.system [echo hi]\n",
            "../c.yaml:1: invalid YAML: unsupported YAML tag '!!python/object/apply:os.system'",
        ),
        (
            "name: a\nx: !!binary aGk=\n",
            "../c.yaml:2: invalid YAML: unsupported YAML tag '!!binary'",
        ),
        ("a: &a [*a]\n", "../c.yaml:1: invalid YAML: recursive YAML alias *a"),
        ("name: a\nx: .nan\n", "../c.yaml:2: invalid YAML: NaN and infinity are not allowed"),
        (
            "name: a\n---\nname: b\n",
            "../c.yaml:2: invalid YAML: but found another document (expected a single document in the stream)",
        ),
        ("[" * 300 + "]" * 300, "../c.yaml:1: invalid YAML: nesting is deeper than 200 levels"),
        ("name: a\nname: b\n", "../c.yaml:2: duplicate key 'name'"),
        ("- 5\n", "../c.yaml:1: [0]: 5 is not of type 'object'"),
    ],
)
def test_bad_yaml_is_one_line_with_its_line(tmp_path: Path, text: str, message: str) -> None:
    assert messages(load_one(write(tmp_path, "c.yaml", text))) == [message]


def test_a_yaml_syntax_error_names_its_line(tmp_path: Path) -> None:
    [message] = messages(load_one(write(tmp_path, "c.yaml", "name: a\n  b: c\n")))
    assert message.startswith("../c.yaml:2: invalid YAML: mapping values are not allowed")


def test_a_python_tag_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    load_one(write(tmp_path, "c.yaml", f"!!python/object/apply:os.system ['touch {marker}']\n"))
    assert not marker.exists()


def test_yaml_keys_stay_strings_and_timestamps_stay_text(tmp_path: Path) -> None:
    text = "name: a\nparameters:\n  type: object\n  properties:\n    on: {type: boolean, default: 2024-01-02}\n    1: {type: string}\n"
    [tool] = load_one(write(tmp_path, "k.yaml", text)).tools
    assert tool.parameters["properties"] == {
        "on": {"type": "boolean", "default": "2024-01-02"},
        "1": {"type": "string"},
    }


def test_yaml_anchors_and_merge_keys_work_within_the_bound(tmp_path: Path) -> None:
    text = (
        "defs:\n  path: &path {type: string, description: A path.}\n"
        "  base: &base {type: object}\n"
        "tools:\n  - name: a\n    parameters:\n      <<: *base\n      properties: {p: *path}\n"
    )
    [tool] = load_one(write(tmp_path, "m.yaml", text)).tools
    assert tool.parameters == {
        "type": "object",
        "properties": {"p": {"type": "string", "description": "A path."}},
    }


# --- JSON Lines ----------------------------------------------------------------------------


def test_jsonl_reads_one_tool_per_line_and_reports_bad_lines(tmp_path: Path) -> None:
    text = '{"name": "a"}\n{bad\n\n{"name": 5}\n{"type": "function", "function": {"name": "b"}}\n'
    result = load_one(write(tmp_path, "t.jsonl", text))
    assert [t.name for t in result.tools] == ["a", "b"]
    assert messages(result) == [
        "../t.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes (column 2)",
        "../t.jsonl:4: name: 5 is not of type 'string'",
    ]
    assert result.tools[1].source is not None and result.tools[1].source.line == 5


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
    assert messages(load_one(write(tmp_path, "c.json", json.dumps(entry)))) == [message]


def test_a_draft_07_schema_is_checked_against_the_draft_07_meta_schema(tmp_path: Path) -> None:
    params = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "items": [{"type": "string"}],
    }
    assert load_one(write(tmp_path, "c.json", {"name": "f", "parameters": params})).findings == ()


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
    result = load_one(write(tmp_path, "c.json", {"name": "f", "parameters": params}))
    assert (result.findings, [t.name for t in result.tools]) == ((), ["f"])


def test_check_schemas_false_skips_only_the_meta_schema_checks(tmp_path: Path) -> None:
    path = write(tmp_path, "c.json", [{"name": "f", "parameters": {"type": "strnig"}}, {"name": 5}])
    result = load_one(path, check_schemas=False)
    assert [t.name for t in result.tools] == ["f"]
    assert messages(result) == ["../c.json:1: [1].name: 5 is not of type 'string'"]


def test_built_in_tools_are_skipped_with_a_warning(tmp_path: Path) -> None:
    doc = {
        "tools": [{"type": "web_search"}, {"type": "function", "name": "f"}, {"googleSearch": {}}]
    }
    result = load_one(write(tmp_path, "req.json", doc))
    assert [t.name for t in result.tools] == ["f"]
    assert messages(result) == [
        "../req.json:1: tools[0]: built-in tool 'web_search' has no schema; skipped",
        "../req.json:1: tools[2]: built-in tool 'googleSearch' has no schema; skipped",
    ]
    assert {f.severity for f in result.findings} == {"warning"}


def test_namespace_comes_from_the_tool_then_the_file_then_the_file_stem(tmp_path: Path) -> None:
    write(tmp_path, "a/web tools.yaml", "tools:\n  - name: a\n")
    write(
        tmp_path, "b/x.yaml", "namespace: net\ntools:\n  - name: b\n  - {name: c, namespace: own}\n"
    )
    result = catalog.load([tmp_path])
    assert [(t.name, t.namespace) for t in result.tools] == [
        ("a", "web_tools"),
        ("b", "net"),
        ("c", "own"),
    ]


def test_a_duplicate_tool_in_a_later_file_is_skipped_and_the_first_wins(tmp_path: Path) -> None:
    write(tmp_path, "a.yaml", "namespace: fs\ntools:\n  - name: read\n    description: first\n")
    write(
        tmp_path,
        "b.yaml",
        "namespace: fs\ntools:\n  - name: other\n  - name: read\n    description: second\n",
    )
    result = catalog.load([Path("..")])
    assert [(t.name, t.description) for t in result.tools] == [("read", "first"), ("other", "")]
    assert messages(result) == [
        "../b.yaml:4: tools[1]: duplicate tool 'fs/read': ../a.yaml:3 was loaded first and wins; this one is skipped"
    ]
    assert result.findings[0].severity == "warning"


def test_load_result_lists_every_catalog_file_found(tmp_path: Path) -> None:
    write(tmp_path, "a.json", {"name": "a"})
    write(tmp_path, "b.json", "{")
    assert catalog.load([Path("..")]).files == ("../a.json", "../b.json")


# --- lint ----------------------------------------------------------------------------------


def lint_messages(tmp_path: Path, text: str) -> list[str]:
    result = load_one(write(tmp_path, "l.yaml", text))
    assert result.findings == ()
    return [str(f) for f in catalog.lint(result)]


def test_lint_warns_about_missing_and_one_word_descriptions(tmp_path: Path) -> None:
    text = "tools:\n  - name: a\n  - name: b\n    description: Search\n  - name: c\n    description: Search the web.\n"
    assert lint_messages(tmp_path, text) == [
        "../l.yaml:2: tools[0]: 'a' has no description",
        "../l.yaml:3: tools[1].description: 'b' has a one-word description; say what the tool does and when to use it",
    ]


def test_lint_warns_about_parameters_without_descriptions(tmp_path: Path) -> None:
    doc = [
        {
            "type": "function",
            "function": {
                "name": "f",
                "description": "Do a thing.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "string"},
                        "b": {"type": "string", "description": "B."},
                    },
                },
            },
        }
    ]
    result = load_one(write(tmp_path, "p.json", doc))
    assert [str(f) for f in catalog.lint(result)] == [
        "../p.json: [0].function.parameters.properties.a: parameter 'a' of 'f' has no description"
    ]


def test_lint_warns_about_names_mcp_hosts_reject(tmp_path: Path) -> None:
    text = (
        "tools:\n  - name: math.factorial\n    description: Compute n factorial.\n  - name: "
        + "x" * 65
        + "\n    description: Too long a name.\n"
    )
    assert lint_messages(tmp_path, text) == [
        "../l.yaml:2: tools[0].name: 'math.factorial' is a name MCP hosts reject (allowed: ^[a-zA-Z0-9_-]{1,64}$)",
        f"../l.yaml:4: tools[1].name: '{'x' * 65}' is a name MCP hosts reject (allowed: ^[a-zA-Z0-9_-]{{1,64}}$)",
    ]


@pytest.mark.parametrize(
    ("char", "described"),
    [
        ("\u200b", "U+200B (ZERO WIDTH SPACE)"),
        ("\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("\U000e0069", "U+E0069 (TAG LATIN SMALL LETTER I)"),
        ("\x07", "U+0007"),
    ],
)
def test_lint_warns_about_invisible_characters_in_descriptions(
    tmp_path: Path, char: str, described: str
) -> None:
    doc = {
        "name": "f",
        "description": f"Read{char} files.",
        "parameters": {
            "type": "object",
            "properties": {"p": {"type": "string", "description": f"x{char}"}},
        },
    }
    result = load_one(write(tmp_path, "i.json", doc))
    assert [str(f) for f in catalog.lint(result)] == [
        f"../i.json: description: description contains the invisible or control character {described} at index 4",
        f"../i.json: parameters.properties.p.description: description contains the invisible or control character {described} at index 1",
    ]


def test_lint_is_quiet_about_a_good_tool(tmp_path: Path) -> None:
    text = "tools:\n  - name: read_file\n    description: Read a file.\n    parameters:\n      type: object\n      properties:\n        path: {type: string, description: The path.}\n"
    assert lint_messages(tmp_path, text) == []


# --- misc ----------------------------------------------------------------------------------


def test_file_digest_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, "a.json", b"{}\n")
    assert catalog.file_digest(path) == hashlib.sha256(b"{}\n").hexdigest()


def test_importing_catalog_does_not_import_yaml_or_jsonschema() -> None:
    code = "import sys, toolfind.catalog.loader; print(sorted(m for m in ('yaml', 'jsonschema') if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


# --- property: tools written to a file in any format load back equal --------------------------

names = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
property_schemas = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "boolean", "number"])},
    optional={"description": texts, "enum": st.lists(st.text(max_size=5), max_size=3, unique=True)},
)
file_tools = st.builds(
    Tool,
    name=names,
    description=texts,
    parameters=st.dictionaries(st.text(min_size=1, max_size=8), property_schemas, max_size=3).map(
        lambda props: {"type": "object", "properties": props}
    ),
    namespace=st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
    tags=st.lists(names, max_size=2, unique=True).map(tuple),
    search_hint=texts,
    defer=st.booleans(),
    annotations=st.fixed_dictionaries({}, optional={"readOnlyHint": st.booleans()}),
    title=st.none() | texts,
)


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


# --- the checks made without jsonschema agree with jsonschema ----------------------------------
#
# catalog decides most entries and schemas with hand-written rules (_fits_shape,
# _surely_valid_schema) and asks jsonschema only when they cannot tell. They may say "cannot
# tell" too often (that costs time), never "valid" for what jsonschema refuses (that would
# lose a finding). Below: they accept well-formed input, and on any input, what they accept
# jsonschema accepts.

SIMPLE_TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"]
DIALECTS = sorted(metaschema._RULED_DIALECTS)
short_texts = st.text(max_size=4)
distinct_texts = st.lists(short_texts, max_size=3, unique=True)
finite_numbers = st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False, allow_infinity=False)
small_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | short_texts,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(short_texts, inner, max_size=2),
    max_leaves=4,
)


def well_formed_values(subschemas: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    """For each keyword, values that both meta-schemas accept."""
    schema_lists = st.lists(subschemas, min_size=1, max_size=2)
    schema_maps = st.dictionaries(short_texts, subschemas, max_size=2)
    return {
        "type": st.sampled_from(SIMPLE_TYPES)
        | st.lists(st.sampled_from(SIMPLE_TYPES), min_size=1, max_size=3, unique=True),
        **dict.fromkeys(
            ["description", "title", "format", "pattern", "$ref", "$comment", "contentEncoding"],
            short_texts,
        ),
        **dict.fromkeys(
            ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"],
            schema_maps,
        ),
        "required": distinct_texts,
        "dependentRequired": st.dictionaries(short_texts, distinct_texts, max_size=2),
        **dict.fromkeys(["enum", "examples"], st.lists(small_json, max_size=2)),
        **dict.fromkeys(["const", "default", "x-vendor"], small_json),  # x-vendor: no keyword
        **dict.fromkeys(
            ["items", "additionalProperties", "additionalItems", "not", "if", "contains"],
            subschemas,
        ),
        **dict.fromkeys(["propertyNames", "unevaluatedProperties", "contentSchema"], subschemas),
        **dict.fromkeys(["anyOf", "allOf", "oneOf", "prefixItems"], schema_lists),
        **dict.fromkeys(
            ["minLength", "maxItems", "minContains", "maxProperties"], st.integers(0, 5)
        ),
        **dict.fromkeys(["minimum", "exclusiveMaximum"], finite_numbers),
        "multipleOf": st.integers(1, 5) | st.floats(0.5, 5),
        **dict.fromkeys(["uniqueItems", "readOnly", "writeOnly", "deprecated"], st.booleans()),
    }


def well_formed_nodes(subschemas: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Schema objects with up to four keywords, each with a value both meta-schemas accept."""
    values = well_formed_values(subschemas)
    return st.lists(st.sampled_from(sorted(values)), max_size=4, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: values[k] for k in keys})
    )


well_formed_schemas = st.recursive(
    well_formed_nodes(st.booleans()),
    lambda inner: well_formed_nodes(inner | st.booleans()),
    max_leaves=6,
)
# Values of every kind, many of them wrong for the keyword they land on.
any_values = st.one_of(
    small_json,
    st.sampled_from([*SIMPLE_TYPES, -1, 0, 0.5, -0.5, [], [""], ["a", "a"], ["string", 1], {}]),
    well_formed_schemas,
    st.lists(well_formed_schemas | small_json, max_size=2),
    st.dictionaries(short_texts, well_formed_schemas | small_json, max_size=2),
)
any_keywords = st.sampled_from(
    sorted({*metaschema._META_KEYWORDS, "x-vendor", "nullable", "discriminator"})
)


def _objects_in(value: Any) -> list[dict[str, Any]]:
    """Every object in a JSON value, the value itself first."""
    found = [value] if isinstance(value, dict) else []
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    )
    for child in children:
        found += _objects_in(child)
    return found


@st.composite
def mutated(
    draw: st.DrawFn,
    base: st.SearchStrategy[Any],
    keys: st.SearchStrategy[str],
    values: st.SearchStrategy[Any],
) -> Any:
    """A value from ``base`` with one key of one of its objects set to one of ``values``:
    the rest stays well formed, so a rule that accepts one wrong value is caught."""
    value = draw(base)
    target = draw(st.sampled_from(_objects_in(value)))
    target[draw(keys)] = draw(values)
    return value


any_schemas = mutated(well_formed_schemas, any_keywords, any_values)
any_dialects = st.sampled_from(
    [
        *DIALECTS,
        "http://json-schema.org/draft-04/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "https://example.com/meta",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=well_formed_schemas, dialect=st.none() | st.sampled_from(DIALECTS))
def test_well_formed_schemas_are_decided_without_jsonschema(
    schema: dict[str, Any], dialect: str | None
) -> None:
    if dialect is not None:
        schema = {"$schema": dialect, **schema}
    assert metaschema._surely_valid_schema(schema)
    assert validate._meta_problem(schema) is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=any_schemas, dialect=st.none() | any_dialects)
def test_a_schema_the_fast_check_accepts_passes_the_meta_schema_check(
    schema: dict[str, Any], dialect: str | None
) -> None:
    if dialect is not None:
        schema = {**schema, "$schema": dialect}
    if metaschema._surely_valid_schema(schema):
        assert validate._meta_problem(schema) is None


# Values of every JSON type, each right for some keyword and wrong for most.
KEYWORD_VALUES: list[Any] = [
    None,
    True,
    False,
    -1,
    0,
    2,
    1.0,
    0.5,
    -0.5,
    10**20,
    "",
    "x",
    "string",
    "strnig",
    "STRING",
    "a#b",
    [],
    [""],
    ["a"],
    ["a", "a"],
    ["a", 1],
    [1],
    ["string", "null"],
    ["string", "string"],
    [{}],
    [True],
    [{"type": 5}],
    {},
    {"a": {}},
    {"a": True},
    {"a": 1},
    {"a": {"minLength": -1}},
    {"a": ["b"]},
    {"a": ["b", "b"]},
    {"type": "string"},
    {"type": 5},
    {"https://x": True},
]


@pytest.mark.parametrize("dialect", [None, *DIALECTS])
def test_the_fast_check_accepts_no_keyword_value_the_meta_schema_check_refuses(
    dialect: str | None,
) -> None:
    accepted = 0
    for keyword in sorted({*metaschema._META_KEYWORDS, "x-vendor"}):
        for value in KEYWORD_VALUES:
            for schema in (
                {keyword: value},
                {"type": "object", "properties": {"p": {keyword: value}}, "required": ["p"]},
            ):
                if dialect is not None and keyword not in schema:
                    schema = {"$schema": dialect, **schema}
                if metaschema._surely_valid_schema(schema):
                    accepted += 1
                    assert validate._meta_problem(schema) is None, schema
    assert accepted > 300  # the fast check decides most well-formed keywords


def _meta_schema_keywords(uri: str) -> set[str]:
    from jsonschema_specifications import REGISTRY

    contents = REGISTRY.contents(uri)
    found = set(contents.get("properties", {}))
    for ref in contents.get("allOf", []):  # 2020-12: its vocabularies' meta-schemas
        found |= set(REGISTRY.contents(urljoin(uri, ref["$ref"])).get("properties", {}))
    return found


def test_the_fast_check_knows_every_keyword_of_both_meta_schemas() -> None:
    for uri in (
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-07/schema",
    ):
        keywords = _meta_schema_keywords(uri)
        assert len(keywords) > 30
        assert keywords <= metaschema._META_KEYWORDS, keywords - metaschema._META_KEYWORDS


def test_the_fast_check_follows_only_draft_2020_12_and_draft_7() -> None:
    from jsonschema import Draft7Validator, Draft202012Validator
    from jsonschema.validators import validator_for

    for dialect in DIALECTS:
        cls = validator_for({"$schema": dialect}, default=None)
        assert cls in (Draft7Validator, Draft202012Validator), dialect


def test_a_schema_of_another_draft_goes_to_jsonschema() -> None:
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}
    assert not metaschema._surely_valid_schema(schema)
    assert not metaschema._surely_valid_schema({"type": "object", "$id": "urn:x"})


ENTRY_KEYS = [
    "type",
    "function",
    "title",
    "description",
    "parameters",
    "input_schema",
    "inputSchema",
    "outputSchema",
    "output_schema",
    "parametersJsonSchema",
    "response",
    "responseJsonSchema",
    "annotations",
    "behavior",
    "strict",
    "defer_loading",
    "cache_control",
    "namespace",
    "tags",
    "aliases",
    "search_hint",
    "defer",
    "enabled",
    "unknown",
]
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
    assert rules._fits_shape(base, shape) and validator.is_valid(base)
    accepted = 0
    for key in [*ENTRY_KEYS, "name"]:
        for value in ENTRY_VALUES:
            entries = [{**base, key: value}, {k: v for k, v in base.items() if k != key}]
            if shape == "openai":
                entries.append({**base, "function": {**base["function"], key: value}})
            if key == "annotations" or shape in ("native", "mcp"):
                entries.append({**base, "annotations": {"readOnlyHint": False, key: value}})
            for entry in entries:
                if rules._fits_shape(entry, shape):
                    accepted += 1
                    assert validator.is_valid(entry), entry
    assert accepted > 100


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=any_entries, shape=st.none() | st.sampled_from(sorted(rules._SHAPE_RULES)))
def test_an_entry_the_fast_check_accepts_passes_its_shape_schema(
    entry: dict[str, Any], shape: str | None
) -> None:
    shape = shape or detect_entry(entry)
    if rules._fits_shape(entry, shape):
        assert validate._shape_validator(shape).is_valid(entry)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=file_tools, fmt=st.sampled_from(FORMATS))
def test_well_formed_entries_are_decided_without_jsonschema(tool: Tool, fmt: str) -> None:
    entry = tool_to_format(tool, fmt)
    shape = detect_entry(entry)
    assert rules._fits_shape(entry, shape)
    assert validate._shape_validator(shape).is_valid(entry)
    if fmt == "openai":  # a bare function, as in a file of functions
        assert rules._fits_shape(entry["function"], "function")


def test_the_fast_entry_rules_cover_every_key_of_the_packaged_schemas() -> None:
    folder = REPO / "toolfind" / "schemas"
    native = json.loads((folder / "native-catalog.schema.json").read_text(encoding="utf-8"))
    metadata = set(native["$defs"]["metadata"]["properties"])
    for shape, (shape_rules, required) in rules._SHAPE_RULES.items():
        if shape == "native":
            schema = native["$defs"]["tool"]
        else:
            schema = json.loads((folder / f"{shape}.schema.json").read_text(encoding="utf-8"))
        assert set(shape_rules) == set(schema["properties"]) | metadata, shape
        assert required == set(schema["required"]), shape
    openai = json.loads((folder / "openai.schema.json").read_text(encoding="utf-8"))
    function = openai["properties"]["function"]
    assert set(rules._OPENAI_FUNCTION_RULES) == set(function["properties"])


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
