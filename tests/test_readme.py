"""The README's examples, run: every ``$ toolfind ...`` line of its ```console blocks.

The convention (for whoever edits README.md):

- A ```console block's lines starting with ``$ `` are commands; the lines after one, up to the
  next ``$ `` line or the end of the block, are what it shows. A line ending in ``\\`` goes on
  on the next line.
- Only commands starting with ``toolfind`` are run (``python3 -m venv ...``, ``npx ...`` and
  ``VAR=... toolfind`` lines are not), and not ``toolfind serve-mcp`` (a server runs until
  stopped; tests/test_serve*.py run it). A block right after a ``<!-- doctest: skip -->``
  line is not run at all.
- Each runs in bash (pipes work: ``| jq ...``; a command whose pipeline needs a program this
  machine lacks is skipped), in one working directory holding a copy of the shipped catalogs
  as ``./catalogs`` (so paths read as they do in a checkout), with one cache for them all,
  ``toolfind`` being this checkout. The blocks run in README order.
- A fenced block right after a ``<!-- doctest: write PATH -->`` line is written to PATH in
  that directory first (``queries.yaml``).
- What a command shows is compared with its stdout followed by its stderr, whitespace
  normalised (runs of blanks are one space, blank lines dropped). A line that is just ``...``
  stands for any number of lines; ``...`` inside a line for any text. When the shown text is
  one JSON document (and has no ``...``), stdout must be the same JSON value, however
  formatted. A command that shows nothing must only succeed.
- A command must exit 0, unless what it shows has an ``Error:`` line: then it must fail.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import REPO

README = REPO / "README.md"

_SKIP = "<!-- doctest: skip -->"
_WRITE = re.compile(r"<!-- doctest: write (\S+) -->")
_FENCE = re.compile(r"^(`{3,})(\S*)\s*$")


@dataclass(frozen=True)
class Example:
    line: int  # in README.md, 1-based
    command: str
    shown: tuple[str, ...]


def parse(text: str) -> tuple[list[Example], dict[str, str]]:
    """The README's runnable examples, and the files it asks to write (path -> text)."""
    lines = text.splitlines()
    examples: list[Example] = []
    files: dict[str, str] = {}
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        marker = lines[i - 1].strip() if i else ""
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence.group(1):
            end += 1
        body = lines[i + 1 : end]
        written = _WRITE.fullmatch(marker)
        if written:
            files[written.group(1)] = "\n".join(body) + "\n"
        elif fence.group(2) == "console" and marker != _SKIP:
            examples += _commands(body, first_line=i + 2)
        i = end + 1
    return examples, files


def _commands(body: list[str], first_line: int) -> list[Example]:
    found: list[Example] = []
    k = 0
    while k < len(body):
        if not body[k].startswith("$ "):
            k += 1
            continue
        start = k
        command = body[k][2:]
        while command.endswith("\\") and k + 1 < len(body):
            k += 1
            command = command[:-1] + " " + body[k].strip()
        k += 1
        shown = []
        while k < len(body) and not body[k].startswith("$ "):
            shown.append(body[k])
            k += 1
        words = command.split()
        if words[0] == "toolfind" and words[1:2] != ["serve-mcp"]:
            found.append(Example(first_line + start, command, tuple(shown)))
    return found


def normalised(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` lines are what ``shown`` shows, ``...`` eliding (see the module)."""
    parts = []
    for line in shown:
        if line == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*".join(map(re.escape, line.split("..."))) + r"\n")
    return re.fullmatch("".join(parts), "".join(f"{line}\n" for line in actual)) is not None


EXAMPLES, FILES = parse(README.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolfind.config import packaged_catalogs

    root = tmp_path_factory.mktemp("readme")
    work = root / "work"
    shutil.copytree(packaged_catalogs(), work / "catalogs")
    for name, text in FILES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "toolfind"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m toolfind "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return work


def test_the_readme_has_runnable_examples() -> None:
    commands = [e.command for e in EXAMPLES]
    assert any(c.startswith("toolfind search") for c in commands)
    assert any(e.shown for e in EXAMPLES)
    assert "queries.yaml" in FILES


def test_matching_elides_lines_and_text_and_nothing_else() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert matches(["x ... z"], ["x y y z"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a ... c"], ["a b"])


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"README.md:{e.line}")
def test_readme_example(example: Example, workdir: Path) -> None:
    tokens = list(shlex.shlex(example.command, posix=True, punctuation_chars=True))
    programs = [tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t == "|"]
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLFIND_")}
    env["PATH"] = f"{workdir.parent / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["TOOLFIND_CACHE_DIR"] = str(workdir.parent / "cache")
    env["COLUMNS"] = "200"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", example.command],
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    where = f"README.md:{example.line}: $ {example.command}"
    shown = normalised("\n".join(example.shown))
    if any(line.startswith("Error:") for line in shown):
        assert done.returncode != 0, where
    else:
        assert done.returncode == 0, f"{where}\n{done.stderr}"
    if not shown:
        return
    text = "\n".join(example.shown)
    if "..." not in text:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            pass
        else:
            assert json.loads(done.stdout) == value, where
            return
    actual = normalised(done.stdout + done.stderr)
    assert matches(shown, actual), f"{where}\nshown:\n{text}\ngot:\n{done.stdout}{done.stderr}"
