"""The documentation's examples, run: README.md and every docs/*.md (the top level of docs/).

The convention (for whoever edits them):

- A ```console block's lines starting with ``$ `` are commands; the lines after one, up to the
  next ``$ `` line or the end of the block, are what it shows. A line ending in ``\\`` goes on
  on the next line.
- Only commands starting with ``toolfind`` are run (``python3 -m venv ...``, ``npx ...`` and
  ``VAR=... toolfind`` lines are not), and not ``toolfind serve-mcp`` (a server runs until
  stopped; tests/serve/ run it). A block right after a ``<!-- doctest: skip -->`` line is not
  run, nor checked, at all.
- Each runs in bash (pipes work: ``| jq ...``; a command whose pipeline needs a program this
  machine lacks is skipped), in one working directory holding a copy of the shipped catalogs
  as ``./catalogs`` (so paths read as they do in a checkout), outside the checkout, with no
  toolfind variable set and a home of their own (so one cache for them all, and no config
  but the docs'), ``toolfind`` being this checkout. README.md runs first, then docs/*.md by name, each in
  order.
- A fenced block right after a ``<!-- doctest: write PATH -->`` line is written to PATH in
  that directory first (``queries.yaml``); two blocks writing one PATH must agree.
- What a command shows is compared with its stdout followed by its stderr, whitespace
  normalised (runs of blanks are one space, blank lines dropped). A line that is just ``...``
  stands for any number of lines; ``...`` inside a line for any text. When the shown text is
  one JSON document (and has no ``...``), stdout must be the same JSON value, however
  formatted (stderr, for a command that must fail). A command that shows nothing must only
  succeed.
- A command must exit 0, unless what it shows has an ``Error:`` or ``Failed:`` line or a
  ``{"error": ...}`` JSON error: then it must fail.
- A ```python block runs (this Python, in that directory) and must succeed; a ```json block
  must be JSON (the host configurations are meant to be copied); a ```toml block must be a
  valid ``toolfind.toml`` (read as the user-wide one, which may hold every key).
- Relative links between these files must lead to a file that exists, and a ``#anchor`` to
  one of its headings (as GitHub spells them); every docs/*.md is linked from README.md.
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
DOCS = [README, *sorted((REPO / "docs").glob("*.md"))]

_SKIP = "<!-- doctest: skip -->"
_WRITE = re.compile(r"<!-- doctest: write (\S+) -->")
_FENCE = re.compile(r"^(`{3,})(\S*)\s*$")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Example:
    where: str  # "docs/json.md:42", the line of the command, 1-based
    command: str
    shown: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    where: str  # the line of the opening fence
    lang: str
    text: str


@dataclass
class Doc:
    examples: list[Example]
    files: list[tuple[str, str, str]]  # (path, text, where)
    blocks: list[Block]  # the other fenced blocks, not skipped
    prose: str  # the text outside fenced blocks (links and headings live there)


def parse(text: str, name: str = "README.md") -> Doc:
    """A document's runnable examples, files to write, checked blocks and prose."""
    lines = text.splitlines()
    doc = Doc([], [], [], "")
    prose: list[str] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            prose.append(lines[i])
            i += 1
            continue
        marker = lines[i - 1].strip() if i else ""
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence.group(1):
            end += 1
        body = lines[i + 1 : end]
        where = f"{name}:{i + 1}"
        written = _WRITE.fullmatch(marker)
        if written:
            doc.files.append((written.group(1), "\n".join(body) + "\n", where))
        elif marker == _SKIP:
            pass
        elif fence.group(2) == "console":
            doc.examples += _commands(body, name, first_line=i + 2)
        elif fence.group(2) in ("python", "json", "toml"):
            doc.blocks.append(Block(where, fence.group(2), "\n".join(body) + "\n"))
        i = end + 1
    doc.prose = "\n".join(prose)
    return doc


def _commands(body: list[str], name: str, first_line: int) -> list[Example]:
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
            found.append(Example(f"{name}:{first_line + start}", command, tuple(shown)))
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


def anchors(prose: str) -> set[str]:
    """The anchors GitHub gives a document's headings: lower case, punctuation dropped
    (letters, digits, ``_`` and ``-`` kept), spaces as ``-``, repeats numbered ``-1``, ``-2``."""
    found: set[str] = set()
    for line in prose.splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        unique, n = slug, 0
        while unique in found:
            n += 1
            unique = f"{slug}-{n}"
        found.add(unique)
    return found


def _name(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


PARSED = {_name(path): parse(path.read_text(encoding="utf-8"), _name(path)) for path in DOCS}
EXAMPLES = [e for doc in PARSED.values() for e in doc.examples]
BLOCKS = [b for doc in PARSED.values() for b in doc.blocks]
FILES = {path: text for doc in PARSED.values() for path, text, _ in doc.files}


def _env(workdir: Path) -> dict[str, str]:
    """A reader's environment: no toolfind variable, and a home of the docs' own (its cache,
    config and model folders where a new user's are, empty at first)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOLFIND_", "XDG_"))}
    env["PATH"] = f"{workdir.parent / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(workdir.parent / "home")
    env["COLUMNS"] = "200"
    return env


def _run(argv: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    """``argv`` run in the docs' working directory, as a reader's shell would run it."""
    return subprocess.run(
        argv,
        cwd=workdir,
        env=_env(workdir),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from toolfind.config import packaged_catalogs

    root = tmp_path_factory.mktemp("readme")
    (root / "home").mkdir()
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
    readme = PARSED["README.md"]
    commands = [e.command for e in readme.examples]
    assert any(c.startswith("toolfind search") for c in commands)
    assert any(e.shown for e in readme.examples)
    assert any(path == "queries.yaml" for path, _, _ in readme.files)


def test_ci_runs_the_readme_test_command_verbatim_and_installs_once() -> None:
    [command] = [
        line
        for line in README.read_text(encoding="utf-8").splitlines()
        if line.startswith("python3 -m venv") and "pytest" in line
    ]
    ci = [
        line
        for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if not line.lstrip().startswith("#")
    ]
    assert command in ci
    assert [line for line in ci if "pip install" in line] == [command]


def test_every_user_doc_is_read_and_every_file_written_once() -> None:
    assert {"docs/commands.md", "docs/json.md", "docs/mcp-server.md"} <= set(PARSED)
    written: dict[str, tuple[str, str]] = {}
    for doc in PARSED.values():
        for path, text, where in doc.files:
            if path in written:
                assert written[path][0] == text, f"{where} writes {path} unlike {written[path][1]}"
            written.setdefault(path, (text, where))


def test_matching_elides_lines_and_text_and_nothing_else() -> None:
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "b"], ["a", "b"])
    assert matches(["x ... z"], ["x y y z"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["a ... c"], ["a b"])


def test_anchors_are_spelled_as_github_spells_them() -> None:
    prose = "# Top\n## `search --queries` (batch mode)\n### toolfind's own format\n## Top\n"
    assert anchors(prose) == {"top", "search---queries-batch-mode", "toolfinds-own-format", "top-1"}


def test_links_between_the_docs_lead_somewhere() -> None:
    broken = []
    for name, doc in PARSED.items():
        for target in _LINK.findall(doc.prose):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            file = (REPO / name).parent / path if path else REPO / name
            if not file.exists():
                broken.append(f"{name}: {target}: no such file")
            elif anchor and file.suffix == ".md":
                if _name(file.resolve()) in PARSED:
                    prose = PARSED[_name(file.resolve())].prose
                else:
                    prose = parse(file.read_text(encoding="utf-8"), file.name).prose
                if anchor not in anchors(prose):
                    broken.append(f"{name}: {target}: no heading #{anchor}")
    assert not broken, "\n".join(broken)


def test_the_readme_links_every_doc() -> None:
    linked = {
        (REPO / target.partition("#")[0]).resolve()
        for target in _LINK.findall(PARSED["README.md"].prose)
    }
    assert [path for path in DOCS[1:] if path.resolve() not in linked] == []


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.where)
def test_readme_example(example: Example, workdir: Path) -> None:
    tokens = list(shlex.shlex(example.command, posix=True, punctuation_chars=True))
    programs = [tokens[i + 1] for i, t in enumerate(tokens[:-1]) if t == "|"]
    missing = [p for p in programs if shutil.which(p) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    done = _run(["bash", "-o", "pipefail", "-c", example.command], workdir)
    where = f"{example.where}: $ {example.command}"
    shown = normalised("\n".join(example.shown))
    fails = any(line.startswith(("Error:", "Failed:", '{"error":')) for line in shown)
    if fails:
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
            assert json.loads(done.stderr if fails else done.stdout) == value, where
            return
    actual = normalised(done.stdout + done.stderr)
    assert matches(shown, actual), f"{where}\nshown:\n{text}\ngot:\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: f"{b.where}:{b.lang}")
def test_readme_block(block: Block, workdir: Path, tmp_path: Path) -> None:
    if block.lang == "json":
        json.loads(block.text)
    elif block.lang == "toml":
        from toolfind.config import load_config

        # As the user-wide config, which may hold every key (safe_directories too).
        config = tmp_path / "xdg" / "toolfind" / "toolfind.toml"
        config.parent.mkdir(parents=True)
        config.write_text(block.text, encoding="utf-8")
        loaded = load_config({"XDG_CONFIG_HOME": str(tmp_path / "xdg")}, cwd=tmp_path)
        assert loaded.user_path == config, block.where
    else:
        done = _run([sys.executable, "-c", block.text], workdir)
        assert done.returncode == 0, f"{block.where}\n{done.stderr}"
