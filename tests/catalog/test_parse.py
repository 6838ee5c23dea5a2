"""Tests for toolfind.catalog.parse: limits, encodings, safe JSON / YAML / JSON Lines parsing, line numbers, duplicate keys."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import (
    load_one,
    messages,
    write,
)
from toolfind.catalog import parse

# --- limits and encodings ------------------------------------------------------------------


def test_a_file_over_the_size_limit_names_size_limit_and_how_to_raise_it(tmp_path: Path) -> None:
    path = write(tmp_path / "big.json", {"name": "a", "description": "x" * 200})
    assert messages(load_one(path, max_bytes=100)) == [
        f"../big.json: file is {path.stat().st_size} bytes, over the 100-byte limit; "
        'raise it with max_file_size = "1MiB" in toolfind.toml'
    ]


def test_a_file_just_under_the_size_limit_loads(tmp_path: Path) -> None:
    path = write(tmp_path / "ok.json", {"name": "a"})
    assert [t.name for t in load_one(path, max_bytes=path.stat().st_size).tools] == ["a"]


def test_invalid_utf8_is_an_error_with_the_byte_offset(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", b'{"name":\n "caf\xc3\xa9 \xff"}')
    assert messages(load_one(path)) == [
        "../bad.json:2: invalid UTF-8 at byte 17 (0xff); save the file as UTF-8"
    ]


def test_a_binary_file_with_a_json_name_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "bin.json", bytes(range(256)))
    assert messages(load_one(path)) == [
        "../bin.json:2: invalid UTF-8 at byte 128 (0x80); save the file as UTF-8"
    ]


def test_a_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path / "bom.json", b'\xef\xbb\xbf{"name": "a"}')
    assert [t.name for t in load_one(path).tools] == ["a"]


def test_utf16_with_a_bom_is_decoded(tmp_path: Path) -> None:
    path = write(tmp_path / "u16.yaml", "name: a\ndescription: Caf\u00e9 tool.\n".encode("utf-16"))
    [tool] = load_one(path).tools
    assert tool.description == "Caf\u00e9 tool."


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    assert messages(load_one(write(tmp_path / "e.json", ""))) == ["../e.json: file is empty"]
    assert messages(load_one(write(tmp_path / "e.yaml", "# nothing\n"))) == [
        "../e.yaml: file is empty"
    ]


# --- JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"name": "a",\n "x": }', "../c.json:2: invalid JSON: Expecting value at column 7"),
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
    assert messages(load_one(write(tmp_path / "c.json", text))) == [message]


def test_duplicate_json_keys_skip_only_their_entry(tmp_path: Path) -> None:
    path = write(
        tmp_path / "d.json", '{"tools": [\n {"name": "a"},\n {"name": "b",\n  "name": "c"}\n]}'
    )
    result = load_one(path)
    assert messages(result) == ["../d.json:4: tools[1]: duplicate key 'name'"]
    assert [t.name for t in result.tools] == ["a"]


def test_json_entry_errors_report_the_line_of_the_path(tmp_path: Path) -> None:
    doc = '{"tools": [\n  {"name": "a"},\n  {"name": "b",\n   "parameters": {"type": "object",\n     "properties": {"url": 5}}}\n]}'
    assert messages(load_one(write(tmp_path / "web.json", doc))) == [
        "../web.json:5: tools[1].parameters.properties.url: 5 is not of type 'object', 'boolean'"
    ]


# --- YAML ----------------------------------------------------------------------------------


def test_yaml_entry_errors_report_file_line_and_path(tmp_path: Path) -> None:
    text = "tools:\n  - name: ok\n  - name: web\n    parameters:\n      type: object\n      properties:\n        url: 5\n"
    result = load_one(write(tmp_path / "web.yaml", text))
    assert messages(result) == [
        "../web.yaml:7: tools[1].parameters.properties.url: 5 is not of type 'object', 'boolean'"
    ]
    assert [t.name for t in result.tools] == ["ok"]


def test_yaml_tools_carry_their_line(tmp_path: Path) -> None:
    [a, b] = load_one(write(tmp_path / "w.yaml", "tools:\n  - name: a\n\n  - name: b\n")).tools
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
    assert messages(load_one(write(tmp_path / "c.yaml", text))) == [message]


def test_a_yaml_syntax_error_names_its_line(tmp_path: Path) -> None:
    [message] = messages(load_one(write(tmp_path / "c.yaml", "name: a\n  b: c\n")))
    assert message.startswith("../c.yaml:2: invalid YAML: mapping values are not allowed")


def test_a_python_tag_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    load_one(write(tmp_path / "c.yaml", f"!!python/object/apply:os.system ['touch {marker}']\n"))
    assert not marker.exists()


def test_yaml_keys_stay_strings_and_timestamps_stay_text(tmp_path: Path) -> None:
    text = "name: a\nparameters:\n  type: object\n  properties:\n    on: {type: boolean, default: 2024-01-02}\n    1: {type: string}\n"
    [tool] = load_one(write(tmp_path / "k.yaml", text)).tools
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
    [tool] = load_one(write(tmp_path / "m.yaml", text)).tools
    assert tool.parameters == {
        "type": "object",
        "properties": {"p": {"type": "string", "description": "A path."}},
    }


# --- JSON Lines ----------------------------------------------------------------------------


def test_jsonl_reads_one_tool_per_line_and_reports_bad_lines(tmp_path: Path) -> None:
    text = '{"name": "a"}\n{bad\n\n{"name": 5}\n{"type": "function", "function": {"name": "b"}}\n'
    result = load_one(write(tmp_path / "t.jsonl", text))
    assert [t.name for t in result.tools] == ["a", "b"]
    assert messages(result) == [
        "../t.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes at column 2",
        "../t.jsonl:4: name: 5 is not of type 'string'",
    ]
    assert result.tools[1].source is not None and result.tools[1].source.line == 5


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
    assert parse._string_quotes(text) == 2 * parse.strings_in(json.loads(text))


def test_without_libyaml_an_unprintable_character_is_one_finding_not_a_traceback(
    tmp_path: Path,
) -> None:
    """PyYAML's pure-Python reader checks the text when the loader is made, not when it
    parses: that check is reported like any other YAML error."""
    path = write(tmp_path / "c.yaml", "name: a\x00b\n")
    code = (
        "import sys; sys.modules['yaml.cyaml'] = None; from pathlib import Path; "
        "from toolfind import catalog; import toolfind.catalog.safe_yaml as s; "
        "assert 'cyaml' not in s.Parser.__module__, s.Parser; "
        f"r = catalog.load([Path({str(path)!r})]); "
        "print(len(r.tools)); [print(str(f)) for f in r.findings]"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    count, *findings = out.stdout.splitlines()
    assert count == "0" and len(findings) == 1 and out.stderr == ""
    assert "c.yaml" in findings[0] and "invalid YAML: unacceptable character" in findings[0]
