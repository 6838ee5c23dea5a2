"""Tests for toolfind.catalog.linter: the warnings of `toolfind validate`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import (
    load_one,
    write,
)
from toolfind import catalog

# --- lint ----------------------------------------------------------------------------------


def lint_messages(tmp_path: Path, text: str) -> list[str]:
    result = load_one(write(tmp_path / "l.yaml", text))
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
    result = load_one(write(tmp_path / "p.json", doc))
    assert [str(f) for f in catalog.lint(result)] == [
        "../p.json:1: [0].function.parameters.properties.a: parameter 'a' of 'f' has no description"
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
    result = load_one(write(tmp_path / "i.json", doc))
    assert [str(f) for f in catalog.lint(result)] == [
        f"../i.json:1: description: description contains the invisible or control character {described} at index 4",
        f"../i.json:1: parameters.properties.p.description: description contains the invisible or control character {described} at index 1",
    ]


def test_lint_is_quiet_about_a_good_tool(tmp_path: Path) -> None:
    text = "tools:\n  - name: read_file\n    description: Read a file.\n    parameters:\n      type: object\n      properties:\n        path: {type: string, description: The path.}\n"
    assert lint_messages(tmp_path, text) == []


# --- identical tools across namespaces -------------------------------------------------------

ECHO = {
    "name": "echo",
    "description": "Echoes back the input.",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "Message to echo."}},
        "required": ["message"],
    },
}


def capture(*tools: dict[str, object]) -> dict[str, object]:
    """An MCP ``tools/list`` capture (its namespace is the file's name)."""
    return {"tools": list(tools)}


def test_lint_names_a_tool_identical_to_one_in_another_namespace_and_where_that_is(
    tmp_path: Path,
) -> None:
    """Two captures of one server: name, description and input schema alike (keys in any
    order) is one finding at the later copy naming the first; a tool that differs in any of
    the three, or a copy switched off, is none."""
    reordered = {**ECHO, "inputSchema": dict(reversed(list(ECHO["inputSchema"].items())))}
    other_schema = {**ECHO, "name": "add", "inputSchema": {"type": "object"}}
    other_text = {**ECHO, "name": "ping", "description": "Pings the server."}
    write(
        tmp_path / "cat" / "a-everything.json", capture(ECHO, {**other_schema, "inputSchema": {}})
    )
    write(tmp_path / "cat" / "b-everything.json", capture(reordered, other_schema, other_text))
    write(tmp_path / "cat" / "c-everything.json", capture({**ECHO, "name": "ping"}))
    off = {"name": "echo", "description": ECHO["description"], "enabled": False}
    write(tmp_path / "cat" / "d-off.json", {"tools": [off | {"parameters": ECHO["inputSchema"]}]})
    result = load_one(tmp_path / "cat")
    found = [f for f in catalog.lint(result) if f.rule == "identical-tool"]
    assert [(f.file, f.line, f.path, f.severity) for f in found] == [
        (os.path.join("..", "cat", "b-everything.json"), 1, "tools[0]", "warning")
    ]
    first = os.path.join("..", "cat", "a-everything.json")
    assert found[0].message == (
        f"'b-everything/echo' is identical to 'a-everything/echo' ({first}:1) in name,"
        " description and input schema: search lists both; keep one (drop a catalog, or set"
        " enabled: false on one)"
    )
