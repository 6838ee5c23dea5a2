"""Hostile catalogs: every row gives one clear line (validate exits 1, or search skips the file
with one warning and loads the rest), never a traceback, never a hang, never a network call,
never a changed catalog file.

Each row runs the real CLI in-process (``validate --json``, ``validate``, ``search --json``) in a
daemon thread with a generous timeout, so a hang (a FIFO opened for reading, an endless read of
/dev/zero) fails the row instead of the suite. The row ids carry the count of inputs; the last
test checks the tally (inputs tried, crashes 0, files lost 0) that the rows kept.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import shutil
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from toolfind import catalog
from toolfind.cli.app import app
from toolfind.core import analysis
from toolfind.errors import ToolfindError
from toolfind.models import Tool
from toolfind.store.index import SearchIndex

runner = CliRunner()
TIMEOUT = 120.0  # seconds per command: generous, only there so that a hang fails the row
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
MANY = 100_000

GOOD = [
    {
        "name": "read_file",
        "description": "Read a text file from disk and return its contents.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The file to read."}},
        },
    }
]

Expect = Literal["error", "warning", "ok"]


@dataclass(frozen=True)
class Row:
    id: str
    build: Callable[[Path], tuple[str, str]]  # (what to validate, the file the finding names)
    expect: Expect
    message: str = ""  # part of the one finding's message
    loads: str | None = None  # a hostile tool that must still load (expect "ok")
    config: str = ""  # toolfind.toml in the working directory
    heavy: bool = False  # skip the human-readable validate (one load fewer)


# -- builders ---------------------------------------------------------------------------------


def _file(name: str, data: bytes | str) -> Callable[[Path], tuple[str, str]]:
    def build(cat: Path) -> tuple[str, str]:
        path = cat / name
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return str(path), str(path)

    return build


def _tools(name: str, *tools: dict[str, Any]) -> Callable[[Path], tuple[str, str]]:
    return _file(name, json.dumps(list(tools), ensure_ascii=True))


def _tool(
    name: Any, description: str = "A hostile tool for testing.", **extra: Any
) -> dict[str, Any]:
    return {"name": name, "description": description, **extra}


def _nested_json(depth: int) -> str:
    return (
        '[{"name": "deep_schema", "description": "A very deep schema.", "parameters": '
        + '{"type": "object", "properties": {"x": ' * depth
        + "{}"
        + "}}" * depth
        + "}]"
    )


def _nested_yaml(depth: int) -> str:
    return (
        "- name: deep_schema\n  description: A very deep schema.\n  parameters: "
        + "{type: object, properties: {x: " * depth
        + "{}"
        + "}}" * depth
        + "\n"
    )


BILLION_LAUGHS = "\n".join(
    [
        'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
        *(
            f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]"
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        ),
        "tools: []",
    ]
)


def _padded(limit: int, name: str) -> Callable[[Path], tuple[str, str]]:
    """A valid catalog of exactly ``limit`` bytes."""

    def build(cat: Path) -> tuple[str, str]:
        body = json.dumps([_tool(name, "A tool padded to the size limit.")])
        path = cat / "padded.json"
        path.write_bytes(body.encode() + b" " * (limit - len(body)))
        assert path.stat().st_size == limit
        return str(path), str(path)

    return build


def _sparse(size: int) -> Callable[[Path], tuple[str, str]]:
    def build(cat: Path) -> tuple[str, str]:
        path = cat / "huge.json"
        with open(path, "wb") as fh:  # sparse: costs no disk and no write time
            fh.truncate(size)
        return str(path), str(path)

    return build


def _symlink_loop(cat: Path) -> tuple[str, str]:
    (cat / "loop").symlink_to(".")
    (cat / "sub").mkdir()
    (cat / "sub" / "up").symlink_to("..")
    (cat / "sub" / "again").symlink_to("../sub")
    return str(cat), str(cat)


def _symlink(name: str, target: str) -> Callable[[Path], tuple[str, str]]:
    def build(cat: Path) -> tuple[str, str]:
        (cat / name).symlink_to(target)
        return str(cat), str(cat / name)

    return build


def _unreadable(cat: Path) -> tuple[str, str]:
    path = cat / "locked.json"
    path.write_text(json.dumps([_tool("locked_tool")]), encoding="utf-8")
    path.chmod(0)
    return str(path), str(path)


def _fifo(direct: bool) -> Callable[[Path], tuple[str, str]]:
    def build(cat: Path) -> tuple[str, str]:
        path = cat / "pipe.json"
        os.mkfifo(path)
        return (str(path) if direct else str(cat)), str(path)

    return build


def _socket(cat: Path) -> tuple[str, str]:
    path = cat / "sock.json"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
    return str(cat), str(path)


def _many(cat: Path) -> tuple[str, str]:
    """100,000 small files (every 1,000th holds a tool), on tmpfs when there is one."""
    where = Path(tempfile.mkdtemp(dir="/dev/shm")) if os.access("/dev/shm", os.W_OK) else None
    many = cat / "many"
    if where is None:
        many.mkdir()
    else:
        many.symlink_to(where)
        _CLEANUP.append(where)
    for i in range(MANY):
        data = json.dumps([_tool(f"bulk_{i}", "A bulk tool.")]) if i % 1000 == 0 else "[]"
        fd = os.open(many / f"t{i:06d}.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, data.encode())
        os.close(fd)
    return str(cat), str(cat)


_CLEANUP: list[Path] = []

UNREADABLE: tuple[Expect, str, str | None] = (
    ("ok", "", "locked_tool") if IS_ROOT else ("error", "cannot read: Permission denied", None)
)

ROWS: list[Row] = [
    Row("yaml-billion-laughs", _file("lol.yaml", BILLION_LAUGHS), "error", "YAML aliases expand"),
    Row("yaml-recursive-alias", _file("rec.yaml", "a: &a [*a]\n"), "error", "recursive YAML alias"),
    Row(
        "yaml-python-tag",
        _file(
            "py.yaml",
            '- name: evil\n  description: !!python/object/apply:os.system ["touch PWNED"]\n',
        ),
        "error",
        "unsupported YAML tag '!!python/object/apply:os.system'",
    ),
    Row(
        "yaml-python-name-tag",
        _file("pyname.yaml", "- name: !!python/name:os.system\n"),
        "error",
        "unsupported YAML tag",
    ),
    Row(
        "json-schema-10000-deep",
        _file("deep.json", _nested_json(10_000)),
        "error",
        "nesting is too deep",
    ),
    Row(
        "yaml-schema-10000-deep",
        _file("deep.yaml", _nested_yaml(10_000)),
        "error",
        "nesting is deeper than",
    ),
    Row(
        "json-schema-100-deep",
        _file("deep100.json", _nested_json(100)),
        "error",
        "schema is nested deeper",
    ),
    Row(
        "1100MiB-sparse-over-default-limit",
        _sparse(1100 * 1024 * 1024),
        "error",
        "over the 1,073,741,824-byte limit",
    ),
    Row(
        "over-configured-limit",
        _padded(2001, "big_tool"),
        "error",
        "over the 2,000-byte limit",
        config="max_file_size = 2000\n",
    ),
    Row(
        "exactly-configured-limit",
        _padded(2000, "padded_tool"),
        "ok",
        loads="padded_tool",
        config="max_file_size = 2000\n",
    ),
    Row(
        "invalid-utf8",
        _file("bad8.json", b'[{"name": "caf\xe9", "description": "latin-1 bytes"}]'),
        "error",
        "invalid UTF-8",
    ),
    Row(
        "utf16-with-bom",
        _file(
            "wide.json",
            json.dumps([_tool("wide_tool", "Stored as UTF-16 with a byte order mark.")]).encode(
                "utf-16"
            ),
        ),
        "ok",
        loads="wide_tool",
    ),
    Row(
        "utf16-without-bom",
        _file("wide.json", json.dumps([_tool("wide_tool")]).encode("utf-16-le")),
        "error",
        "invalid JSON",  # NUL bytes are valid UTF-8; without a BOM the text is not JSON
    ),
    Row("utf16-odd-length", _file("odd.json", b"\xff\xfe[\x00{"), "error", "invalid UTF-16"),
    Row(
        "binary-with-json-name",
        _file("blob.json", bytes(range(256)) * 16),
        "error",
        "invalid UTF-8",
    ),
    Row(
        "elf-with-json-name",
        _file("elf.json", b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x02\x00>\x00"),
        "error",
        "invalid JSON",
    ),
    Row("empty-file", _file("empty.json", b""), "error", "file is empty"),
    Row("whitespace-only", _file("blank.yaml", "  \n\t\n"), "error", "file is empty"),
    Row(
        "json-nan",
        _file("nan.json", '[{"name": "n", "description": "d", "parameters": {"default": NaN}}]'),
        "error",
        "NaN is not allowed",
    ),
    Row(
        "json-infinity",
        _file(
            "inf.json", '[{"name": "n", "description": "d", "parameters": {"maximum": -Infinity}}]'
        ),
        "error",
        "Infinity is not allowed",
    ),
    Row(
        "json-overflow-to-infinity",
        _file("big.json", '[{"name": "n", "parameters": {"maximum": 1e99999}}]'),
        "error",
        "1e99999 overflows to infinity",
    ),
    Row(
        "yaml-nan",
        _file("nan.yaml", "- name: n\n  parameters: {default: .nan}\n"),
        "error",
        "NaN and infinity are not allowed",
    ),
    Row(
        "json-huge-integer",
        _file("int.json", '[{"name": "n", "parameters": {"maximum": ' + "9" * 5000 + "}}]"),
        "error",
        "too many digits",
    ),
    Row(
        "json-duplicate-keys",
        _file("dup.json", '[{"name": "one", "name": "two", "description": "d"}]'),
        "error",
        "duplicate key 'name'",
    ),
    Row(
        "yaml-duplicate-keys",
        _file("dup.yaml", "- name: one\n  name: two\n"),
        "error",
        "duplicate key 'name'",
    ),
    Row("top-level-number", _file("num.json", "42\n"), "error", "got a number"),
    Row("top-level-string", _file("str.json", '"tools"\n'), "error", "got a string"),
    Row("top-level-null", _file("null.json", "null\n"), "error", "got null"),
    Row("name-is-a-number", _tools("t.json", _tool(42)), "error", "42 is not of type 'string'"),
    Row("name-is-empty", _tools("t.json", _tool("")), "error", "must not be empty"),
    Row(
        "name-10000-chars",
        _tools("t.json", _tool("a" * 10_000)),
        "error",
        "is 10,000 characters long",
    ),
    Row(
        "name-zero-width",
        _tools("t.json", _tool("read\u200bfile")),
        "error",
        "U+200B (ZERO WIDTH SPACE)",
    ),
    Row(
        "name-bidi-override",
        _tools("t.json", _tool("read\u202efile")),
        "error",
        "U+202E (RIGHT-TO-LEFT OVERRIDE)",
    ),
    Row(
        "name-unicode-tag-chars",
        _tools("t.json", _tool("read\U000e0041file")),
        "error",
        "U+E0041 (TAG LATIN CAPITAL LETTER A)",
    ),
    Row("name-nul-char", _tools("t.json", _tool("read\x00file")), "error", "U+0000"),
    Row(
        "name-lone-surrogate",
        _file("s.json", '[{"name": "read\\ud800file"}]'),
        "error",
        "unpaired surrogate \\ud800",
    ),
    Row(
        "description-lone-surrogate",
        _file("s.json", '[{"name": "x", "description": "a \\udfff b"}]'),
        "error",
        "unpaired surrogate \\udfff",
    ),
    Row(
        "description-1MB",
        _tools("t.json", _tool("wordy", "x" * (1 << 20))),
        "error",
        "is 1,048,576 characters long",
    ),
    Row(
        "ref-to-remote-url",
        _tools(
            "ref.json",
            _tool(
                "remote_ref",
                parameters={
                    "type": "object",
                    "properties": {
                        "x": {"$ref": "https://example.com/schema.json", "description": "X."}
                    },
                },
            ),
        ),
        "ok",
        loads="remote_ref",
    ),
    Row(
        "remote-id-and-schema",
        _tools(
            "ref.json",
            _tool(
                "remote_base",
                parameters={
                    "$schema": "http://169.254.169.254/latest/meta-data/",
                    "$id": "http://169.254.169.254/base",
                    "$ref": "other.json",
                },
            ),
        ),
        "ok",
        loads="remote_base",
    ),
    Row(
        "ref-cycle",
        _tools(
            "cyc.json",
            _tool(
                "cyclic_ref",
                parameters={
                    "$ref": "#/$defs/a",
                    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                },
            ),
        ),
        "ok",
        loads="cyclic_ref",
    ),
    Row(
        "ref-to-itself",
        _tools("self.json", _tool("self_ref", parameters={"$ref": "#"})),
        "ok",
        loads="self_ref",
    ),
    Row("directory-symlink-loop", _symlink_loop, "ok"),
    Row(
        "symlink-to-itself",
        _symlink("self.json", "self.json"),
        "warning",
        "cannot read: Too many levels of symbolic links",
    ),
    Row(
        "dangling-symlink",
        _symlink("gone.json", "nowhere.json"),
        "warning",
        "cannot read: No such file or directory",
    ),
    Row(
        "unreadable-file" + ("-root-reads-it" if IS_ROOT else ""),
        _unreadable,
        *UNREADABLE[:2],
        loads=UNREADABLE[2],
    ),
    Row(
        "fifo-in-directory", _fifo(direct=False), "warning", "not a regular file (a FIFO); skipped"
    ),
    Row("fifo-given-directly", _fifo(direct=True), "error", "not a regular file (a FIFO); skipped"),
    Row(
        "device-dev-zero",
        _symlink("zero.json", "/dev/zero"),
        "warning",
        "not a regular file (a device); skipped",
    ),
    Row("unix-socket", _socket, "warning", "not a regular file (a socket); skipped"),
    Row(
        "jsonl-one-bad-line",
        _file("t.jsonl", json.dumps(_tool("line_tool")) + "\n{oops\n"),
        "error",
        "invalid JSON",
    ),
    Row(
        f"directory-of-{MANY:,}-files".replace(",", "_"), _many, "ok", loads="bulk_5000", heavy=True
    ),
]
TOTAL = len(ROWS)
TALLY: dict[str, dict[str, int]] = {}


# -- harness ------------------------------------------------------------------------------------


def run_bounded(args: list[str]) -> tuple[Result, float]:
    """Run the CLI in a daemon thread; a hang fails here instead of hanging the suite."""
    box: list[Result] = []
    thread = threading.Thread(target=lambda: box.append(runner.invoke(app, args)), daemon=True)
    start = time.monotonic()
    thread.start()
    thread.join(TIMEOUT)
    elapsed = time.monotonic() - start
    assert box, f"toolfind {' '.join(args)} did not finish within {TIMEOUT:.0f} s"
    return box[0], elapsed


def _tree(root: Path) -> Iterator[Path]:
    """Every entry under root, following directory links once each (loops end)."""
    seen: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        directory = stack.pop()
        st = os.stat(directory)
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        for entry in os.scandir(directory):
            path = Path(entry.path)
            yield path
            try:
                if entry.is_dir():
                    stack.append(path)
            except OSError:
                continue


def snapshot(root: Path, *, digest: bool = True) -> dict[str, tuple[Any, ...]]:
    """Each entry's kind, size, mtime and (for small regular files) SHA-256."""
    out: dict[str, tuple[Any, ...]] = {}
    for path in _tree(root):
        st = os.lstat(path)
        sha = None
        if digest and stat.S_ISREG(st.st_mode) and st.st_size < 8 << 20:
            sha = hashlib.sha256(path.read_bytes()).hexdigest()
        out[str(path)] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, sha)
    return out


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[str]]]:
    """Record (and refuse) network connections, and record every path opened."""
    seen: dict[str, list[str]] = {"network": [], "opened": []}

    def no_network(*args: Any, **kwargs: Any) -> Any:
        seen["network"].append(repr(args[:2]))
        raise OSError("network access is not allowed in this test")

    for name in ("connect", "connect_ex", "sendto"):
        monkeypatch.setattr(socket.socket, name, no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)

    def spy(real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, str | bytes | os.PathLike):
                seen["opened"].append(os.fsdecode(file))
            return real(file, *args, **kwargs)

        return wrapper

    monkeypatch.setattr(os, "open", spy(os.open))
    monkeypatch.setattr(builtins, "open", spy(builtins.open))
    yield seen
    while _CLEANUP:
        shutil.rmtree(_CLEANUP.pop(), ignore_errors=True)


def _special(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_IFMT(mode) in (stat.S_IFIFO, stat.S_IFCHR, stat.S_IFBLK, stat.S_IFSOCK)


def _one_line(lines: list[str], prefix: str) -> list[str]:
    return [line for line in lines if line.startswith(prefix)]


@pytest.mark.parametrize(
    "row",
    [pytest.param(row, marks=[pytest.mark.slow] if row.heavy else []) for row in ROWS],
    ids=[f"{n:02d}of{TOTAL}-{row.id}" for n, row in enumerate(ROWS, 1)],
)
def test_hostile_catalog_gives_one_clear_line_and_loads_the_rest(
    row: Row, guarded: dict[str, list[str]]
) -> None:
    cat = Path("cat")
    cat.mkdir()
    (cat / "good.json").write_text(json.dumps(GOOD), encoding="utf-8")
    target, named = row.build(cat)
    if row.config:
        Path("toolfind.toml").write_text(row.config, encoding="utf-8")
    before = snapshot(cat, digest=not row.heavy)
    tally = TALLY.setdefault(row.id, {"crashes": 0, "files_lost": 0, "commands": 0})
    runs: list[tuple[list[str], Result, float]] = []
    try:
        query = f"read file {row.loads or ''}".strip()
        roots = ["-c", target, "-c", str(cat)] if target != str(cat) else ["-c", str(cat)]
        commands = [["search", query, *roots, "--json", "-k", "200"]]
        if not row.heavy:  # 100,000 files: one cold load (with the cache) is enough
            commands += [["validate", target, "--json"], ["validate", target]]
        for args in commands:
            result, elapsed = run_bounded(args)
            runs.append((args, result, elapsed))
            tally["commands"] += 1
            crashed = (
                result.exception is not None and not isinstance(result.exception, SystemExit)
            ) or ("Traceback" in result.stdout + result.stderr)
            tally["crashes"] += crashed
            assert not crashed, f"{args}: {result.exception!r}\n{result.stdout}{result.stderr}"
    finally:
        after = snapshot(cat, digest=not row.heavy)
        tally["files_lost"] = sum(before[k] != after.get(k) for k in before)
        tally["elapsed_ms"] = int(1000 * sum(elapsed for _, _, elapsed in runs))  # measured only
    assert after == before, "a catalog file was created, changed or removed"
    assert guarded["network"] == [], "toolfind tried to reach the network"
    assert [p for p in set(guarded["opened"]) if _special(p)] == [], "opened a FIFO or device"
    assert not Path("PWNED").exists()

    _, found, _ = runs[0]
    # search: the good catalog still answers; a bad file is one warning line naming it (a
    # skipped special file is said once too, as every skipped entry is).
    assert found.exit_code == 0, found.stderr
    names = [h["name"] for h in json.loads(found.stdout)["hits"]]
    assert "read_file" in names, found.stdout
    if row.loads:
        assert row.loads in names, found.stdout
    skipped = _one_line(found.stderr.splitlines(), f"Warning: skipped {named}")
    assert len(skipped) == {"ok": 0, "warning": len(skipped) and 1, "error": 1}[row.expect], (
        found.stderr
    )
    assert "Error" not in found.stderr
    if row.heavy:  # nothing to warn of (the search may still say how sure it is)
        said = [line for line in found.stderr.splitlines() if "No confident match" not in line]
        assert said == [], found.stderr
        return

    (_, vjson, _), (_, human, _) = runs[1], runs[2]
    findings = json.loads(vjson.stdout)
    errors = [f for f in findings if f["severity"] == "error"]
    mine = [f for f in findings if f["file"] == named]
    if row.expect == "error":
        assert vjson.exit_code == 1, vjson.stdout
        assert len(errors) == 1 and errors[0]["file"] == named, findings
        assert row.message in errors[0]["message"], errors[0]
    elif row.expect == "warning":
        assert vjson.exit_code == 0, vjson.stdout
        assert errors == [] and len(mine) == 1 and mine[0]["severity"] == "warning", findings
        assert row.message in mine[0]["message"], mine[0]
    else:
        assert vjson.exit_code == 0, vjson.stdout
        assert errors == [], findings

    assert human.exit_code == vjson.exit_code
    lines = human.stdout.splitlines()
    assert len([line for line in lines if ": error: " in line]) == len(errors), human.stdout
    if row.expect != "ok":
        mentions = [line for line in _one_line(lines, named) if f": {row.expect}: " in line]
        assert len(mentions) == 1, human.stdout


@pytest.mark.parametrize("counts", [f"inputs={TOTAL}-crashes=0-files_lost=0"])
def test_hostile_tally_counts_every_input_with_no_crash_and_no_file_lost(counts: str) -> None:
    if len(TALLY) != TOTAL:
        pytest.skip("the tally needs every hostile row to have run in this session")
    assert sum(t["crashes"] for t in TALLY.values()) == 0
    assert sum(t["files_lost"] for t in TALLY.values()) == 0
    assert counts == f"inputs={len(TALLY)}-crashes=0-files_lost=0"


# -- fuzzing ----------------------------------------------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
TOOLISH = st.lists(
    st.fixed_dictionaries(
        {"name": st.text(max_size=12) | st.integers(), "description": st.text(max_size=40)},
        optional={
            "parameters": JSONISH,
            "inputSchema": JSONISH,
            "tags": JSONISH,
            "namespace": JSONISH,
        },
    ),
    max_size=4,
)
SUFFIXES = st.sampled_from([".json", ".yaml", ".yml", ".jsonl"])
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load_bytes(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"fuzz{suffix}"
        path.write_bytes(data)
        try:
            result = catalog.load([path])
            catalog.lint(result)
            SearchIndex.build(result.tools).search("read file")
        except ToolfindError:
            pass


@FUZZ
@given(data=st.binary(max_size=600), suffix=SUFFIXES)
def test_loader_survives_random_bytes(data: bytes, suffix: str) -> None:
    _load_bytes(data, suffix)


@FUZZ
@given(doc=TOOLISH | JSONISH, suffix=SUFFIXES, noise=st.binary(max_size=3), at=st.integers(0, 400))
def test_loader_survives_jsonish_documents(doc: Any, suffix: str, noise: bytes, at: int) -> None:
    text = json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
    _load_bytes(text[:at] + noise + text[at:] if noise else text, suffix)


YAMLISH = st.text(alphabet="{}[]:,-&*!|>'\"\n #ab1.~?%@`\\", max_size=120)


@FUZZ
@given(text=YAMLISH, suffix=st.sampled_from([".yaml", ".json"]))
def test_loader_survives_yamlish_text(text: str, suffix: str) -> None:
    _load_bytes(text.encode("utf-8"), suffix)


@FUZZ
@given(
    names=st.lists(st.text(min_size=1, max_size=16), min_size=1, max_size=5),
    descriptions=st.lists(st.text(max_size=60), min_size=5, max_size=5),
    query=st.text(max_size=40),
)
def test_analyser_and_index_survive_random_unicode(
    names: list[str], descriptions: list[str], query: str
) -> None:
    try:
        analysis.analyze_query(query)
        analysis.name_key(query)
        tools = [
            Tool(name=n, description=d, namespace="fz")
            for n, d in zip(names, descriptions, strict=False)
        ]
        index = SearchIndex.build(tools)
        index.search(query, explain=True)
        index.exact_ids(query)
        index.similar(names[0])
    except ToolfindError:
        pass
