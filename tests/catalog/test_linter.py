"""Tests for toolfind.catalog.linter: the warnings of `toolfind validate`."""

from __future__ import annotations

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
