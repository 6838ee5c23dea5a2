"""File names that are not UTF-8, or hold controls, through the real entry point: every output
(JSON, JSON Lines, CSV, TSV, tables, findings, errors, warnings; cold and warm) is valid
UTF-8, acts on no terminal, and shows the name as ``output.text.render_path`` writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LATIN_1 = b"caf\xe9.json"  # 'café' written by an old archive or a Windows share
HOSTILE = b"red\x1b[31m\nline.json"  # ESC would colour a terminal; the newline split a line
SHOWN = {LATIN_1: "caf\\xe9.json", HOSTILE: "red\\x1b[31m\\x0aline.json"}


def toolfind(*args: str | bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """``toolfind ARGS`` with a strict UTF-8 stdout (an encoding error would be a traceback)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "TOOLFIND_CACHE_DIR": str(cwd / "c")}
    return subprocess.run(
        [
            sys.executable.encode(),
            b"-m",
            b"toolfind",
            *(a if isinstance(a, bytes) else a.encode() for a in args),
        ],
        capture_output=True,
        check=False,
        timeout=120,
        env=env,
        cwd=cwd,
    )


def clean(done: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    """stdout and stderr, which must be UTF-8 without ESC or a traceback."""
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")  # strict
    assert "\x1b" not in out + err and "Traceback" not in err, (out, err)
    return out, err


@pytest.fixture
def work(tmp_path: Path) -> Path:
    catalogs = tmp_path / "d"
    catalogs.mkdir()
    for name in (LATIN_1, HOSTILE):
        entries = [{"name": f"brew_{len(name)}", "description": "Brew a rocket coffee."}]
        with open(os.fsencode(catalogs) + b"/" + name, "w", encoding="utf-8") as f:
            json.dump(entries, f)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        ["search", "rocket", "-c", "d", "--json"],
        ["search", "rocket", "-c", "d", "--format", "jsonl"],
        ["search", "rocket", "-c", "d", "--format", "csv"],
        ["search", "rocket", "-c", "d", "--format", "tsv"],
        ["search", "rocket", "-c", "d"],
        ["show", "brew_9", "-c", "d"],
    ],
)
def test_every_output_shows_the_file_names_safely(work: Path, args: list[str]) -> None:
    for _ in range(2):  # cold (Typer), then warm (the fast path where it answers)
        done = toolfind(*args, cwd=work)
        out, _ = clean(done)
        assert done.returncode == 0
        if "--json" in args or "jsonl" in args:
            hits = (
                json.loads(out)["hits"] if "--json" in args else map(json.loads, out.splitlines())
            )
            files = {h["source"]["file"] for h in hits}
            assert files == {f"d/{shown}" for shown in SHOWN.values()}
        elif args[-1] != "d":  # a search table shows no source
            assert f"d/{SHOWN[LATIN_1]}" in out


def test_findings_warnings_and_errors_show_the_file_names_safely(work: Path) -> None:
    with open(os.fsencode(work / "d") + b"/" + HOSTILE, "w", encoding="utf-8") as f:
        f.write('[{"name": 5}]')
    for args in (["validate", "d"], ["validate", "d", "--json"]):
        done = toolfind(*args, cwd=work)
        out, _ = clean(done)
        assert done.returncode == 1 and f"d/{SHOWN[HOSTILE]}" in out.replace("\\\\", "\\")
    done = toolfind("search", "rocket", "-c", "d", cwd=work)
    _, err = clean(done)
    assert f"Warning: skipped d/{SHOWN[HOSTILE]}" in err
    for json_ in ([], ["--json"]):
        done = toolfind("search", "x", "-c", b"gone-\xe9", *json_, cwd=work)
        _, err = clean(done)
        assert done.returncode == 1 and "gone-\\xe9" in err.replace("\\\\", "\\")
