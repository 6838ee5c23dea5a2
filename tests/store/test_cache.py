"""The index cache: a corrupt, foreign or hostile cache file is a miss (one line on stderr, a
rebuild, the right answer), an unwritable cache directory or a full disk only costs speed, and
concurrent builders leave exactly one valid cache file and no temporary files behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolfind.cli import fast as fastpath
from toolfind.cli.app import app
from toolfind.models import FieldWeights, ScoringParams, Tool
from toolfind.store import cache, manifest, segment

runner = CliRunner()
QUERY = "read a file"
TOOLS = [
    {"name": "read_file", "description": "Read a text file from disk and return its contents."},
    {"name": "write_file", "description": "Write text to a file on disk, replacing it."},
    {"name": "send_email", "description": "Send an email message to a recipient."},
]
OTHER = [{"name": "launch_rocket", "description": "Launch a rocket: read a file of coordinates."}]


@pytest.fixture
def cat() -> Path:
    """A small catalog directory (relative to the test's working directory)."""
    root = Path("cat")
    root.mkdir()
    (root / "a.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (root / "b.yaml").write_text(
        "- name: compress_file\n  description: Compress a file into a zip archive.\n",
        encoding="utf-8",
    )
    return root


def load(cat: Path, **kwargs: Any) -> tuple[cache.Loaded, list[str]]:
    said: list[str] = []
    loaded = cache.load_index([cat], warn=said.append, **kwargs)
    return loaded, said


def names(loaded: cache.Loaded) -> list[str]:
    return sorted(t.name for t in loaded.index.tools)


def only(root: Path, suffix: str) -> Path:
    (found,) = root.glob(f"*{suffix}")
    return found


def search(cat: Path) -> tuple[str, str]:
    result = runner.invoke(app, ["search", QUERY, "-c", str(cat), "--json"])
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout, result.stderr


def hits(stdout: str) -> list[str]:
    return [h["name"] for h in json.loads(stdout)["hits"]]


def temporaries(root: Path) -> list[str]:
    return [p.name for p in root.iterdir() if p.name.endswith(".tmp")] if root.is_dir() else []


def test_cache_dir_is_created_private_and_files_are_owner_only(cat: Path, isolated: Path) -> None:
    loaded, said = load(cat, run_key=("k",))
    assert not loaded.from_cache and said == []
    assert stat.S_IMODE(isolated.stat().st_mode) == 0o700
    for path in isolated.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    again, said = load(cat, run_key=("k",))
    assert again.from_cache and said == [] and names(again) == names(loaded)


def _holding(index: Any) -> bytes:
    """A plain pickle of a payload whose index is ``index``."""
    return pickle.dumps({"index": index, "findings": [], "files": []})


def _missing_class(key: str) -> bytes:
    # An index class that an older toolfind had and this one does not.
    return b"\x80\x04\x8c\x0etoolfind.index\x8c\x08OldIndex\x93)R."


CORRUPT = {
    "truncated": lambda good, key: good[: len(good) // 2],
    "random-bytes": lambda good, key: hashlib.sha512(b"noise").digest() * 64,
    "empty": lambda good, key: b"",
    "no-index": lambda good, key: _holding(None),
    "index-of-another-class": lambda good, key: _holding(Tool(name="not_an_index")),
    "class-no-longer-exists": lambda good, key: _missing_class(key),
    "not-a-dict": lambda good, key: pickle.dumps([1, 2, 3]),
}


def test_a_cached_index_maps_its_file_and_decodes_only_the_tools_it_prints(
    cat: Path, isolated: Path
) -> None:
    built, _ = load(cat)
    loaded, said = load(cat)
    assert loaded.from_cache and said == []
    tools = loaded.index.tools
    assert type(tools).__name__ == "ToolTable" and len(tools) == 4
    result = loaded.index.search("compress", 1)
    assert [h.name for h in result] == ["compress_file"]
    assert sum(t is not None for t in tools._decoded) == 1  # only the hit was decoded
    # Columns are views of a read-only map of the file, not copies.
    assert isinstance(loaded.index._idocs, memoryview) and loaded.index._idocs.readonly
    assert [t.name for t in tools] == [t.name for t in built.index.tools]
    assert loaded.index.search(QUERY) == built.index.search(QUERY)


def test_a_build_holds_no_tool_objects_and_streams_what_it_prints(
    cat: Path, isolated: Path
) -> None:
    """A cold build keeps the tools marshalled, as the cache stores them (100k tools' parsed
    JSON is not held beside the index), and list/summaries decode one at a time."""
    for use_cache in (True, False):
        built, _ = load(cat, use_cache=use_cache)
        tools = built.index.tools
        assert type(tools).__name__ == "ToolTable"
        assert not any(tools._decoded)  # the build and the write decoded none to keep
        streamed = list(built.index.stream())
        assert [t.name for t in streamed] == ["read_file", "write_file", "send_email"] + [
            "compress_file"
        ]
        assert not any(tools._decoded)
        assert streamed == list(built.index.listed())  # equal tools, now decoded and kept
        assert built.index.search(QUERY) == load(cat)[0].index.search(QUERY)


def test_a_build_reports_files_read_and_tools_counted(cat: Path, isolated: Path) -> None:
    calls: list[tuple[int, int, int, int]] = []
    load(cat, progress=lambda *counts: calls.append(counts))
    # a.json (3 tools), then b.yaml (1 more), then the analysis of all 4
    assert calls == [(1, 2, 3, 0), (2, 2, 4, 0), (2, 2, 4, 4)]
    calls.clear()
    assert load(cat, progress=lambda *counts: calls.append(counts))[0].from_cache
    assert calls == []  # from the cache: nothing is built


def _bad_columns(good: bytes, key: str) -> bytes:
    """A well-formed file whose index has columns of different lengths."""
    copy = Path("good.pickle")
    copy.write_bytes(good)
    with open(copy, "rb") as fh:
        payload = cache._load_index_file(fh, len(good))
    payload["index"]._flags = payload["index"]._flags[:-1]
    return b"".join(bytes(part) for part in cache._index_file_parts(payload))


CORRUPT["columns-disagree"] = lambda good, key: _bad_columns(good, key)
CORRUPT["header-points-past-the-end"] = lambda good, key: good[:8] + (10**6).to_bytes(8, "little")


@pytest.mark.parametrize("fault", list(CORRUPT))
def test_corrupt_pickle_is_a_miss_rebuilt_with_one_line(
    cat: Path, isolated: Path, fault: str
) -> None:
    first, _ = load(cat)
    path = only(isolated, ".pickle")
    path.write_bytes(CORRUPT[fault](path.read_bytes(), first.key))
    loaded, said = load(cat)
    assert not loaded.from_cache and names(loaded) == names(first)
    assert len(said) == 1 and str(path) in said[0] and "rebuilding" in said[0], said
    healed, said = load(cat)
    assert healed.from_cache and said == []


class _Evil:
    def __init__(self, func: Any, *args: Any) -> None:
        self.call = (func, args)

    def __reduce__(self) -> tuple[Any, ...]:
        return self.call


def _proto4_global(module: str, name: str, arg: str) -> bytes:
    """STACK_GLOBAL of a dotted name (which find_class resolves attribute by attribute)."""

    def short(text: str) -> bytes:
        data = text.encode()
        return b"\x8c" + bytes([len(data)]) + data

    return b"\x80\x04" + short(module) + short(name) + b"\x93" + short(arg) + b"\x85R."


@pytest.mark.parametrize(
    "payload",
    [
        "os.system",
        "builtins.exec",
        "builtins.eval",
        "subprocess.Popen",
        "dotted-class",
        "dotted-globals",
    ],
)
def test_pickle_that_would_run_code_is_refused_and_runs_nothing(
    cat: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch, payload: str
) -> None:
    expected = search(cat)[0]
    marker = Path("marker").resolve()
    touch = f"open({str(marker)!r}, 'w').close()"
    evil = {
        "os.system": lambda: _Evil(os.system, f"touch {marker}"),
        "builtins.exec": lambda: _Evil(exec, touch),
        "builtins.eval": lambda: _Evil(eval, touch),
        "subprocess.Popen": lambda: _Evil(subprocess.Popen, ["touch", str(marker)]),
    }
    path = only(isolated, ".pickle")
    if payload.startswith("dotted"):
        name = "Tool.__class__" if payload == "dotted-class" else "Tool.__init__.__globals__"
        data = _proto4_global("toolfind.models", name, touch)
    else:
        data = _holding(evil[payload]())
    path.write_bytes(data)
    monkeypatch.setenv("TOOLFIND_NO_FASTPATH", "1")  # the CLI must go through the pickle
    stdout, stderr = search(cat)
    assert stdout == expected
    assert not marker.exists()
    assert [line for line in stderr.splitlines() if str(path) in line] == [
        f"Cache file {path} is unreadable (UnpicklingError); rebuilding."
    ]


def _foreign(path: Path) -> None:
    os.chown(path, 65534, 65534)


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        (_foreign, "it is owned by another user"),
        (lambda p: p.chmod(0o666), "it is writable by group or others"),
        (lambda p: p.chmod(0o620), "it is writable by group or others"),
    ],
    ids=["owned-by-uid-65534", "mode-0666", "mode-0620"],
)
def test_foreign_or_shared_pickle_is_never_loaded(
    cat: Path, isolated: Path, how: Any, reason: str
) -> None:
    if how is _foreign and os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    first, _ = load(cat)
    # Plant a valid cache file for this key holding another catalog's index: if it were
    # loaded, the answer would be wrong.
    other = Path("other")
    other.mkdir()
    (other / "o.json").write_text(json.dumps(OTHER), encoding="utf-8")
    planted = cache.load_index([other], use_cache=False)
    store = cache.CacheStore(isolated, lambda _: None)
    store.write_index(first.key, cache.Loaded(planted.index, (), first.key, False))
    path = Path(segment.index_file(str(store.root), first.key))
    how(path)
    loaded, said = load(cat)
    assert not loaded.from_cache and names(loaded) == names(first)
    assert said == [f"Ignoring cache file {path}: {reason}; rebuilding."]
    st = path.stat()  # replaced by our own, private file
    assert st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o600
    assert load(cat)[0].from_cache


FILE_FAULTS = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "random-bytes": lambda p: p.write_bytes(hashlib.sha512(b"x").digest() * 32),
    "empty": lambda p: p.write_bytes(b""),
    "magic-only": lambda p: p.write_bytes(segment.MAGIC + b"\xff" * 8),
    "owned-by-uid-65534": _foreign,
    "mode-0666": lambda p: p.chmod(0o666),
    "deleted": lambda p: p.unlink(),
}


@pytest.mark.parametrize("target", [".pickle", "manifest.marshal"])
@pytest.mark.parametrize("fault", list(FILE_FAULTS))
def test_fast_path_falls_back_on_a_bad_index_file_or_manifest_and_the_cache_heals(
    cat: Path, isolated: Path, capsys: pytest.CaptureFixture[str], target: str, fault: str
) -> None:
    if fault == "owned-by-uid-65534" and os.geteuid() != 0:
        pytest.skip("chown to another user needs root")
    args = ["search", QUERY, "-c", str(cat), "--json"]
    expected = search(cat)[0]
    capsys.readouterr()
    assert fastpath.run(args) == 0 and capsys.readouterr().out == expected
    path = (
        isolated / cache.MANIFEST_NAME
        if target == "manifest.marshal"
        else only(isolated, ".pickle")
    )
    FILE_FAULTS[fault](path)
    code = fastpath.run(args)
    out = capsys.readouterr().out
    assert code is None or (code == 0 and out == expected), out
    stdout, stderr = search(cat)
    assert stdout == expected
    assert len(stderr.splitlines()) <= 1, stderr
    capsys.readouterr()
    assert fastpath.run(args) == 0, "the slow path rewrites a bad index file or manifest"
    assert capsys.readouterr().out == expected


def _directory_span(path: Path) -> tuple[int, int]:
    with open(path, "rb") as fh:
        return segment.read_spans(fh, path.stat().st_size)[segment.DIRECTORY_PART]


def test_real_entry_point_answers_through_a_corrupt_directory(cat: Path, isolated: Path) -> None:
    expected = search(cat)[0]
    path = only(isolated, ".pickle")
    start, length = _directory_span(path)
    data = bytearray(path.read_bytes())
    data[start : start + length] = b"\xff" * length  # the fast path's directory only
    path.write_bytes(bytes(data))
    done = subprocess.run(
        [sys.executable, "-m", "toolfind", *["search", QUERY, "-c", str(cat), "--json"]],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected and "Traceback" not in done.stderr
    # The Typer path refused the file (it could not serve the fast path) and rebuilt it.
    assert done.stderr.splitlines() == [
        f"Cache file {path} is unreadable (ValueError); rebuilding."
    ]
    assert cache.CacheStore(isolated, lambda m: pytest.fail(m)).read_index(
        path.stem.removeprefix(segment.INDEX_PREFIX)
    )


def test_each_index_is_one_file_that_stores_every_column_once(cat: Path, isolated: Path) -> None:
    loaded, _ = load(cat, run_key=("k",))
    assert sorted(p.suffix for p in isolated.iterdir()) == [".marshal", ".pickle"]
    path = only(isolated, ".pickle")
    with open(path, "rb") as fh:
        spans = segment.read_spans(fh, path.stat().st_size)
    buffers: list[pickle.PickleBuffer] = []
    pickle.dumps(loaded.index, protocol=5, buffer_callback=buffers.append)
    columns = sum(b.raw().nbytes for b in buffers)
    stored = sum(length for _, length in spans[segment.PICKLE_PART + 1 :])
    assert stored == columns  # the fast path reads the pickle's own buffers: no copy


@pytest.fixture
def immutable_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory even root cannot write to (ext4's immutable attribute)."""
    chattr = shutil.which("chattr")
    path = tmp_path / "frozen"
    path.mkdir(mode=0o700)
    if chattr is None:
        pytest.skip("chattr is not installed")
    if subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False).returncode:
        pytest.skip("this filesystem or container does not allow chattr +i")
    try:
        yield path
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


@pytest.mark.parametrize("kind", ["is-a-file", "parent-is-a-file", "immutable-directory"])
def test_unwritable_cache_dir_works_without_cache_and_says_so_once(
    cat: Path,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    # Tests run as root here, so chmod 0500 would not stop a write: use what stops root too.
    expected = search(cat)[0]
    blocker = tmp_path / "a-file"
    if kind == "immutable-directory":
        root = request.getfixturevalue("immutable_dir")
        said = "is not writable ("
    else:
        blocker.write_text("not a directory", encoding="utf-8")
        root = blocker if kind == "is-a-file" else blocker / "cache"
        said = "is not a directory;" if kind == "is-a-file" else f"is not usable ({blocker} is"
    monkeypatch.setenv("TOOLFIND_CACHE_DIR", str(root))
    for _ in range(2):  # every run answers, and says so in one line, rightly
        stdout, stderr = search(cat)
        assert stdout == expected
        (line,) = stderr.splitlines()
        assert line.startswith(f"Cache directory {root} {said}"), stderr
        assert line.endswith("; working without a cache.")
    assert not root.is_dir() or list(root.iterdir()) == []


LIMITED = """
import resource, runpy, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # so a write past the limit raises EFBIG
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["toolfind", *sys.argv[2:]]
runpy.run_module("toolfind", run_name="__main__")
"""


def _valid_cache(root: Path) -> None:
    """Every cache file left is complete: index files load, and their directories open."""
    store = cache.CacheStore(root, lambda m: pytest.fail(m))
    for path in root.glob("*.pickle"):
        assert store.read_index(path.stem.removeprefix(segment.INDEX_PREFIX)) is not None
        with open(path, "rb") as fh:
            segment.Segment(fh, path.stat().st_size)


@pytest.mark.parametrize("room", ["nothing", "half-the-pickle", "every-file"])
def test_full_disk_still_answers_and_leaves_no_partial_files(
    cat: Path, isolated: Path, room: str
) -> None:
    expected = search(cat)[0]
    sizes = {p.suffix: p.stat().st_size for p in isolated.iterdir()}
    limit = {
        "nothing": 0,
        "half-the-pickle": sizes[".pickle"] // 2,
        "every-file": max(sizes.values()),
    }[room]
    shutil.rmtree(isolated)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, str(limit), "search", QUERY, "-c", str(cat), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == expected
    said = [line for line in done.stderr.splitlines() if "not writable" in line]
    assert said == (
        []
        if room == "every-file"
        else [
            f"Cache directory {isolated} is not writable (File too large); working without a cache."
        ]
    )
    assert temporaries(isolated) == []
    _valid_cache(isolated)
    # Room again: the next run caches everything and the fast path answers.
    assert search(cat)[0] == expected
    assert fastpath.run(["search", QUERY, "-c", str(cat), "--json"]) == 0


def test_eight_processes_building_the_same_cache_agree_and_leave_one_file(
    cat: Path, isolated: Path
) -> None:
    command = [sys.executable, "-m", "toolfind", "search", QUERY, "-c", str(cat), "--json"]
    procs = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    outputs = [proc.communicate(timeout=180) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 8, [err for _, err in outputs]
    assert all("Traceback" not in err for _, err in outputs)
    assert len({out for out, _ in outputs}) == 1
    assert hits(outputs[0][0])[0] == "read_file"
    assert search(cat)[0] == outputs[0][0]  # and the in-process CLI agrees
    assert len(list(isolated.glob("*.pickle"))) == 1
    assert list(isolated.glob("*.seg")) == []
    assert temporaries(isolated) == []
    _valid_cache(isolated)


def _edit_byte(cat: Path) -> None:
    path = cat / "a.json"
    data = path.read_bytes()
    path.write_bytes(data.replace(b"send_email", b"send_gmail"))  # same size


def _add_file(cat: Path) -> None:
    (cat / "c.json").write_text(json.dumps(OTHER), encoding="utf-8")


def _remove_file(cat: Path) -> None:
    (cat / "b.yaml").unlink()


@pytest.mark.parametrize(
    ("change", "expect"),
    [(_edit_byte, "send_gmail"), (_add_file, "launch_rocket"), (_remove_file, None)],
    ids=["edit-one-byte", "add-a-file", "remove-a-file"],
)
def test_any_catalog_change_rebuilds(
    cat: Path, isolated: Path, capsys: pytest.CaptureFixture[str], change: Any, expect: str | None
) -> None:
    before, _ = load(cat)
    assert load(cat)[0].from_cache
    args = ["search", "file email rocket", "-c", str(cat), "--json", "-k", "20"]
    runner.invoke(app, args)  # warm the fast path
    change(cat)
    after, said = load(cat)
    assert not after.from_cache and said == []
    if expect is None:
        assert "compress_file" not in names(after) and "compress_file" in names(before)
    else:
        assert expect in names(after) and expect not in names(before)
    result = runner.invoke(app, ["cache", "info", "--json"])
    assert json.loads(result.stdout)["indexes"] == 2
    capsys.readouterr()
    code = fastpath.run(args)  # never the stale answer
    fresh = runner.invoke(app, args).stdout
    assert code is None or capsys.readouterr().out == fresh


@pytest.mark.parametrize(
    ("change", "expect"),
    [(_edit_byte, "send_gmail"), (_add_file, "launch_rocket"), (_remove_file, None)],
    ids=["edit-one-byte", "add-a-file", "remove-a-file"],
)
def test_a_recorded_run_answers_until_a_catalog_changes(
    cat: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch, change: Any, expect: str | None
) -> None:
    args = ["list", "-c", str(cat), "--json"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0
    run_key = manifest.run_key((str(cat),))
    recorded = cache.load_recorded(run_key)
    assert recorded is not None and recorded.from_cache
    assert names(recorded) == sorted(t["name"] for t in json.loads(first.stdout))

    def forbidden(*_: Any, **__: Any) -> Any:
        raise AssertionError("a recorded run reads no config and discovers no catalogs")

    from toolfind import config
    from toolfind.catalog import discovery

    with monkeypatch.context() as patch:
        patch.setattr(discovery, "discover", forbidden)
        patch.setattr(config, "load_config", forbidden)
        again = runner.invoke(app, args)
    assert again.exit_code == 0 and again.stdout == first.stdout
    change(cat)
    assert cache.load_recorded(run_key) is None
    fresh = json.loads(runner.invoke(app, args).stdout)
    if expect is None:
        assert "compress_file" not in {t["name"] for t in fresh}
    else:
        assert expect in {t["name"] for t in fresh}
    assert cache.load_recorded(run_key) is not None  # the new state is recorded in its turn


def test_a_recorded_run_is_not_used_with_no_cache_or_another_config(
    cat: Path, isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["categories", "-c", str(cat), "--json"]
    assert runner.invoke(app, args).exit_code == 0
    assert cache.load_recorded(manifest.run_key((str(cat),))) is not None
    with monkeypatch.context() as patch:
        patch.setattr(cache, "load_recorded", lambda *_: pytest.fail("--no-cache read the cache"))
        assert runner.invoke(app, [*args, "--no-cache"]).exit_code == 0
    Path("toolfind.toml").write_text("max_file_size = 10\n", encoding="utf-8")
    assert cache.load_recorded(manifest.run_key((str(cat),))) is None
    result = runner.invoke(app, args)
    assert result.exit_code == 1  # every file is over 10 bytes now: nothing loaded
    assert result.stdout == ""
    error = json.loads(result.stderr.splitlines()[-1])["error"]
    assert error["kind"] == "nothing_loaded" and "over the 10-byte limit" in error["message"]


def test_a_lone_catalog_over_the_size_limit_is_an_error_naming_size_limit_and_fix(
    tmp_path: Path,
) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps([{"name": "big_tool", "description": "x" * 3000}]), "utf-8")
    Path("toolfind.toml").write_text('max_file_size = "2KiB"\n', encoding="utf-8")
    message = (
        f"{big}: file is {big.stat().st_size:,} bytes, over the 2,048-byte limit; "
        'raise it with max_file_size = "1MiB" in toolfind.toml'
    )
    result = runner.invoke(app, ["search", "big", "-c", str(big)])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {message}\n")
    result = runner.invoke(app, ["list", "-c", str(big), "--json"])
    assert (result.exit_code, result.stdout) == (1, "")
    assert json.loads(result.stderr) == {"error": {"message": message, "kind": "nothing_loaded"}}
    # beside a catalog that loads, it is a warning and the rest is searched
    small = tmp_path / "small.json"
    small.write_text(json.dumps([{"name": "small_tool", "description": "Small."}]), "utf-8")
    result = runner.invoke(app, ["list", "-c", str(big), "-c", str(small), "--json"])
    assert result.exit_code == 0, result.stderr
    assert [row["name"] for row in json.loads(result.stdout)] == ["small_tool"]
    assert f"Warning: skipped {big}: file is" in result.stderr


def test_changing_weights_rebuilds(cat: Path) -> None:
    plain, _ = load(cat)
    weighted, _ = load(cat, params=ScoringParams(weights=FieldWeights(name=9.0)))
    assert not weighted.from_cache and weighted.key != plain.key
    assert load(cat, params=ScoringParams(weights=FieldWeights(name=9.0)))[0].from_cache
    Path("toolfind.toml").write_text("[weights]\nname = 9\n", encoding="utf-8")
    args = ["search", QUERY, "-c", str(cat), "--json"]
    assert fastpath.run(args) is None  # the config changed: the recorded run no longer applies


def _hashes(root: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


COMMANDS = {
    "search": ["search", QUERY, "--json"],
    "search-human": ["search", QUERY, "--explain"],
    "show": ["show", "read_file", "--json"],
    "list": ["list", "--json"],
    "schemas": ["schemas", "--format", "anthropic"],
    "similar": ["similar", "read_file"],
    "categories": ["categories", "--json"],
    "summaries": ["summaries", "--all"],
    "validate": ["validate", "cat", "--strict"],
    "eval": ["eval", "queries.jsonl", "--json"],
    "cache path": ["cache", "path"],
    "cache info": ["cache", "info"],
    "cache clear": ["cache", "clear"],
    "config path": ["config", "path"],
    "config": ["config", "--json"],
    "model fetch": ["model", "fetch", "--from", "cat"],  # no model there: exit 1, no download
    "model embed": ["model", "embed"],  # no model here: exit 1
    "model list": ["model", "list"],
    "model path": ["model", "path"],
    "model remove": ["model", "remove"],
}
#: The only commands allowed to write catalogs (atomically, with a backup), or that never end.
EXEMPT = {"catalog pull", "tune", "serve-mcp"}


def _registered() -> set[str]:
    out = {c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands}
    for group in app.registered_groups:
        sub = group.typer_instance
        assert sub is not None
        out |= {
            f"{group.name} {c.name or (c.callback.__name__ if c.callback else '')}"
            for c in sub.registered_commands
        }
    return {name.replace("_", "-") for name in out}


def test_no_command_modifies_a_catalog_file(cat: Path) -> None:
    (cat / "c.jsonl").write_text(json.dumps(OTHER[0]) + "\n", encoding="utf-8")
    Path("toolfind.toml").write_text('catalogs = ["cat"]\n', encoding="utf-8")
    Path("queries.jsonl").write_text(
        json.dumps({"query": QUERY, "relevant": ["read_file"]}) + "\n", encoding="utf-8"
    )
    missing = _registered() - set(COMMANDS) - EXEMPT
    assert missing == set(), f"add these commands to COMMANDS: {missing}"
    before = _hashes(cat)
    for name, args in COMMANDS.items():
        result = runner.invoke(app, args)
        assert result.exit_code in (0, 1), (name, result.stderr)
        assert "Traceback" not in result.stdout + result.stderr
        assert _hashes(cat) == before, f"{name} changed a catalog file"


@pytest.mark.parametrize("collecting", [False, True])
def test_decode_all_decodes_every_tool_and_gives_the_collector_back(
    cat: Path, collecting: bool
) -> None:
    import gc

    load(cat)
    table = load(cat)[0].index.tools
    table[1]  # one decoded already: kept as it is
    kept = table[1]
    expected = list(load(cat)[0].index.tools)
    was = gc.isenabled()
    (gc.enable if collecting else gc.disable)()
    frozen = gc.get_freeze_count()
    try:
        table.decode_all()
        assert gc.isenabled() is collecting
        assert (gc.get_freeze_count() > frozen) is collecting
    finally:
        # Not gc.unfreeze(): on CPython 3.11 it led to a crash later in this process. Frozen
        # objects are still freed by reference counting (every cached build freezes too).
        (gc.enable if was else gc.disable)()
    assert None not in table._decoded and table[1] is kept
    assert list(table) == expected
