"""``toolfind usage`` through the Typer app: import, list, stats, export, forget, clear, their
``--json`` documents (validated against ``output.schemas``), hostile imports, and the learned
signal in ``search`` (on by default, ``learn = false`` in toolfind.toml turns it off)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.helpers import invoke, write
from toolfind.output import schemas

CATALOG = {
    "namespace": "files",
    "tools": [
        {"name": "compress_file", "description": "Compress a file into an archive."},
        {"name": "read_file", "description": "Read the contents of a file."},
        {"name": "send_email", "description": "Send an email message to someone."},
    ],
}
TEAM = [
    {"query": "zip up this folder", "tool": "files/compress_file"},
    {"query": "zip the build logs", "tool": "files/compress_file"},
    {"query": "make an archive of my photos", "tool": "compress_file"},
]


@pytest.fixture
def catalog(tmp_path: Path) -> str:
    return str(write(tmp_path / "cat" / "files.json", CATALOG))


def jsonl(path: Path, entries: list[Any]) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return str(path)


def document(*args: str, schema: dict[str, Any] | None = None) -> Any:
    code, out, err = invoke(*args, "--json")
    assert code == 0, err
    found = json.loads(out)
    if schema is not None:
        jsonschema.validate(found, schema)
    return found


def top(catalog: str, query: str) -> str:
    hits = document("search", query, "-c", catalog)["hits"]
    return str(hits[0]["name"]) if hits else ""


def test_usage_commands_show_export_and_delete_what_was_imported(
    catalog: str, tmp_path: Path
) -> None:
    team = jsonl(tmp_path / "team.jsonl", TEAM)
    imported = document("usage", "import", team, "-c", catalog, schema=schemas.USAGE_IMPORT_SCHEMA)
    assert imported == {"imported": 3, "already_stored": 0, "problems": [], "more_problems": 0}
    again = document("usage", "import", team, "-c", catalog)
    assert (again["imported"], again["already_stored"]) == (0, 3)
    listed = document("usage", "list")
    for entry in listed:
        jsonschema.validate(entry, schemas.USAGE_RECORD_SCHEMA)
    assert [e["request"] for e in listed] == [t["query"] for t in reversed(TEAM)]
    assert {(e["tool"], e["rank"], e["session"]) for e in listed} == {
        ("files/compress_file", None, None)
    }
    stats = document("usage", "stats", schema=schemas.USAGE_STATS_SCHEMA)
    assert stats["records"] == 3 and stats["bytes"] > 0
    assert [(t["tool"], t["records"], t["words"]) for t in stats["tools"]] == [
        ("files/compress_file", 3, ["zip"])
    ]
    exported = document("usage", "export")
    for entry in exported:
        jsonschema.validate(entry, schemas.LABELLED_QUERY_SCHEMA)
    assert exported[0] == {
        "query": "zip up this folder",
        "relevant": ["files/compress_file"],
        "id": "usage-1",
    }
    code, out, _ = invoke("usage", "export")
    assert [json.loads(line) for line in out.splitlines()] == exported  # eval's file
    assert document("usage", "forget", "compress_file") == {
        "removed": 3,
        "tool": "files/compress_file",
    }
    assert document("usage", "list") == []
    assert document("usage", "clear") == {"removed": 0}


def test_a_bad_import_line_is_one_error_line_and_exit_1_the_good_ones_are_kept(
    catalog: str, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"query": "zip it", "tool": "compress_file"}\nnope\n{"query": "x", "tool": "nothere"}\n',
        encoding="utf-8",
    )
    code, out, err = invoke("usage", "import", str(bad), "-c", catalog)
    assert code == 1 and out == "Imported 1 requests.\n"
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"Error: {bad}:2: not a JSON object")
    assert lines[1].startswith(f"Error: {bad}:3: ") and "nothere" in lines[1]
    assert [e["request"] for e in document("usage", "list")] == ["zip it"]


def test_forget_of_a_tool_never_stored_is_one_error_line(catalog: str) -> None:
    code, out, err = invoke("usage", "forget", "nothing_here")
    assert (code, out) == (1, "") and err.startswith("Error: No tool named 'nothing_here'")


def test_search_ranks_by_what_was_learned_unless_learn_is_off(catalog: str, tmp_path: Path) -> None:
    query = "vacation pictures"
    assert top(catalog, query) == ""  # no tool says either
    learned = [{"query": f"mail {w} vacation pictures", "tool": "send_email"} for w in "ab"]
    assert document("usage", "import", jsonl(tmp_path / "l.jsonl", learned), "-c", catalog)
    assert top(catalog, query) == "send_email"
    hit = document("search", query, "-c", catalog, "--explain")["hits"][0]
    assert [(r["field"], r["term"]) for r in hit["explain"]] == [("learned", "(use)")]
    (tmp_path / "toolfind.toml").write_text("learn = false\n", encoding="utf-8")
    assert top(catalog, query) == ""
    bad = tmp_path / "toolfind.toml"
    bad.write_text('learn = "yes"\n', encoding="utf-8")
    code, _, err = invoke("search", query, "-c", catalog)
    assert code == 1 and err == f"Error: {bad}: learn: learn must be true or false\n"


def test_a_warm_search_with_learned_evidence_imports_nothing_heavy(
    catalog: str, tmp_path: Path
) -> None:
    """Once the evidence is compiled (the first search after the store changed), a warm
    search reads the compiled file: no JSON, no typing, no catalog reader."""
    import subprocess
    import sys

    learned = [{"query": f"mail {w} vacation pictures", "tool": "send_email"} for w in "ab"]
    assert document("usage", "import", jsonl(tmp_path / "l.jsonl", learned), "-c", catalog)
    script = "import sys; from toolfind.__main__ import main; sys.argv[0] = 'toolfind'; main()"
    command = [sys.executable, "-X", "importtime", "-c", script, "search", "vacation pictures"]
    command += ["-c", catalog, "--json"]
    for _ in range(2):  # the first records the run, the second compiles the evidence
        subprocess.run(command, capture_output=True, check=True)
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["hits"][0]["name"] == "send_email"
    modules = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "toolfind.cli.fast" in modules and "toolfind.store.learned" in modules
    heavy = {"typer", "rich", "yaml", "jsonschema", "mcp", "toolfind.config", "json", "typing"}
    heavy |= {"re", "pathlib", "dataclasses", "inspect", "pickle", "contextlib", "enum"}
    assert not modules & heavy, sorted(modules & heavy)
