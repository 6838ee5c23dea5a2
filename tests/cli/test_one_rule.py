"""One rule per concept, as a user meets it: what is said on stderr, what a format means,
exit codes, the terminal conventions. Through the Typer app (``invoke``) and the real entry
point (``run_main``: the warm path too), on real files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers import invoke, run_main, write

OPENAI = {
    "tools": [
        {"type": "web_search"},
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        },
    ]
}
GEMINI = {
    "tools": [
        {"googleSearch": {}},
        {"functionDeclarations": [{"name": "lookup", "description": "Look up a word."}]},
    ]
}


@pytest.fixture
def builtins(tmp_path: Path) -> str:
    """A catalog directory with a provider's built-in tools (no schema) and a duplicate."""
    root = tmp_path / "cat"
    write(root / "a.json", OPENAI)
    write(root / "g.json", GEMINI)
    write(root / "z.yaml", "namespace: a\ntools:\n  - {name: get_weather, description: Again.}\n")
    return str(root)


# -- every skipped entry is said, once ---------------------------------------------------------

SKIPPED = [
    "Warning: skipped {root}/a.json:1: tools[0]: built-in tool 'web_search' has no schema",
    "Warning: skipped {root}/g.json:1: tools[0]: built-in tool 'googleSearch' has no schema",
    "Warning: skipped {root}/z.yaml:3: tools[0]: duplicate tool 'a/get_weather':"
    " {root}/a.json was loaded first and wins; this one is skipped",
]


@pytest.mark.parametrize(
    "argv",
    [["list"], ["search", "weather"], ["list", "--json"], ["search", "weather", "--json"]],
    ids=" ".join,
)
def test_every_skipped_entry_is_said_once_cold_and_warm(builtins: str, argv: list[str]) -> None:
    expected = [line.format(root=builtins) for line in SKIPPED]
    for _ in range(2):  # the first run builds the index, the second answers from the cache
        done = run_main(*argv, "-c", builtins)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines() == expected
        assert "get_weather" in done.stdout


def test_a_path_that_is_not_a_file_is_said_too(tmp_path: Path) -> None:
    root = tmp_path / "cat"
    write(root / "a.json", OPENAI)
    os.mkfifo(root / "pipe.json")
    code, out, err = invoke("list", "-c", str(root), "--json")
    assert code == 0 and [r["name"] for r in json.loads(out)] == ["get_weather"]
    assert f"Warning: skipped {root}/pipe.json: not a regular file (a FIFO)" in err.splitlines()


def test_schemas_says_every_renamed_name_in_one_note(tmp_path: Path) -> None:
    for ns in "abcde":
        tools = "".join(f"  - {{name: {n}, description: Tool {n}.}}\n" for n in "wxyz")
        write(tmp_path / "c" / f"{ns}.yaml", f"namespace: {ns}\ntools:\n{tools}")
    code, out, err = invoke("schemas", "-c", str(tmp_path / "c"))
    assert code == 0 and len(json.loads(out)) == 20
    assert err == (
        "Note: 20 tools share 4 names, each written as namespace__name:"
        " 'w' as a__w, b__w, c__w, d__w, e__w; 'x' as a__x, b__x, c__x, d__x, e__x;"
        " 'y' as a__y, b__y, c__y, d__y, e__y; and 1 more"
        " (LLM APIs reject two tools of one name)\n"
    )


def test_validate_lists_each_files_findings_in_line_order(tmp_path: Path) -> None:
    text = (
        "tools:\n"
        "  - name: ping\n"
        "    description: Ping.\n"  # a lint warning (line 2), found after the load's error
        "  - name: bad\n"
        "    description: A tool with bad parameters.\n"
        "    parameters: 5\n"  # the load's error (line 6)
        "  - name: pong\n"
        "    description: Pong.\n"
    )
    for name in ("b.yaml", "a.yaml"):
        write(tmp_path / "c" / name, text)
    code, out, _ = invoke("validate", str(tmp_path / "c"), "--json")
    assert code == 1
    places = [(Path(f["file"]).name, f["line"]) for f in json.loads(out)]
    assert places == [(f, n) for f in ("a.yaml", "b.yaml") for n in (2, 6, 7)]
    _, text_out, _ = invoke("validate", str(tmp_path / "c"))
    lines = [line.split(": ")[0] for line in text_out.splitlines()[:-1]]
    assert [line.rsplit("/", 1)[-1] for line in lines] == [f"{f}:{n}" for f, n in places]
