"""Every file toolfind opens in its own folders is checked before it is read: a FIFO, socket,
device or symbolic link named like a cache file (an index, the manifest, vectors, a reranker
segment) or like the model's manifest is refused without blocking, with one warning line, and
the command answers as if it were not there (a miss: rebuild, recompute, or work without it);
old index files are evicted by one policy (docs/cache-and-speed.md).

Anyone who can write in a shared or group-writable cache directory can plant such a file, so
each opener is tried, through the real command line (fast path included) and serve-mcp.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers import run_main, write
from tests.serve.support import Log, server_env, structured
from toolfind import userfiles
from toolfind.store import cache, manifest, segment
from toolfind.userfiles import FileProblem, open_own

TOOLS = [
    {"name": "send_email", "description": "Send an email message to a recipient."},
    {"name": "get_weather", "description": "Get the weather forecast for a city."},
    {"name": "read_file", "description": "Read a text file from disk."},
]


def fifo(path: Path) -> None:
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    # Bound by its name in its folder: a socket's whole path is limited to 108 bytes.
    here = os.getcwd()
    os.chdir(path.parent)
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(path.name)  # the socket file stays when it is closed
    finally:
        os.chdir(here)


def device(path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    os.mknod(path, 0o600 | 0o020000, os.makedev(1, 5))  # a character device: /dev/zero's


def link_to_fifo(path: Path) -> None:
    target = path.with_name("elsewhere.fifo")
    os.mkfifo(target)
    path.symlink_to(target)


KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (fifo, "not a regular file (a FIFO)"),
    "socket": (unix_socket, "not a regular file (a socket)"),
    "device": (device, "not a regular file (a device)"),
    "symlink": (link_to_fifo, "not a regular file (a symbolic link)"),
}


def in_thread(work: Callable[[], Any]) -> Any:
    """``work()``'s result, run in a thread: a blocking open fails the test instead of
    hanging the suite (the thread is a daemon; 60 s is only the bound of a defect)."""
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(_outcome(work)), daemon=True)
    thread.start()
    thread.join(60)
    assert done, "blocked: a file in toolfind's own folder was opened for reading"
    return done[0]


def _outcome(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except Exception as exc:  # returned, to be asserted on in the test's thread
        return exc


# -- userfiles.open_own ----------------------------------------------------------------------


def test_a_private_regular_file_is_opened_with_its_stat(tmp_path: Path) -> None:
    path = write(tmp_path / "toolfind-x.pickle", b"data")
    path.chmod(0o600)
    fh, st = open_own(path)
    with fh:
        assert fh.read() == b"data" and st.st_size == 4


@pytest.mark.parametrize("kind", list(KINDS))
def test_anything_but_a_regular_file_is_refused_without_being_opened(
    tmp_path: Path, kind: str
) -> None:
    make, reason = KINDS[kind]
    path = tmp_path / "toolfind-manifest.marshal"
    make(path)
    outcome = in_thread(lambda: open_own(path))
    assert isinstance(outcome, FileProblem) and outcome.message == f"it is {reason}"


@pytest.mark.parametrize(
    ("swapped", "reason"), [(fifo, "a FIFO"), (link_to_fifo, "a symbolic link")]
)
def test_a_file_swapped_in_after_the_lstat_is_refused_on_its_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped: Callable[[Path], None], reason: str
) -> None:
    # What lstat saw was a regular file; what open finds is not: the open neither waits for a
    # writer (O_NONBLOCK) nor follows a link (O_NOFOLLOW), and the fstat refuses the rest.
    regular = os.lstat(write(tmp_path / "regular", b"x"))
    path = tmp_path / "toolfind-0123.pickle"
    swapped(path)
    monkeypatch.setattr(userfiles.os, "lstat", lambda p: regular)
    outcome = in_thread(lambda: open_own(path))
    assert isinstance(outcome, FileProblem)
    assert outcome.message == f"it is not a regular file ({reason})"


def test_a_file_writable_by_others_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "toolfind-x.pickle", b"data")
    path.chmod(0o622)
    with pytest.raises(FileProblem, match="writable by group or others"):
        open_own(path)


# -- through the command line ----------------------------------------------------------------


def warm(catalog: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_main("search", "send an email", "-c", str(catalog), "--json", "-k", "1", *extra)


def answered(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hits"][0]["name"])


def replace_with(path: Path, kind: str) -> None:
    path.unlink(missing_ok=True)
    KINDS[kind][0](path)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("target", ["manifest", "index"])
def test_the_cli_refuses_a_planted_manifest_or_index_file_and_answers(
    isolated: Path, kind: str, target: str
) -> None:
    catalog = write(Path("cat.json"), TOOLS)
    assert answered(in_thread(lambda: warm(catalog))) == "send_email"
    (index,) = isolated.glob("toolfind-*.pickle")
    planted = isolated / manifest.MANIFEST_NAME if target == "manifest" else index
    replace_with(planted, kind)
    # The fast path first (the warm run), then the full command line: neither waits.
    done = in_thread(lambda: warm(catalog))
    assert answered(done) == "send_email"
    warned = [line for line in done.stderr.splitlines() if str(planted) in line]
    assert warned == [
        f"Ignoring cache file {planted}: it is {KINDS[kind][1]}"
        + ("; rebuilding." if target == "index" else ".")
    ]


def test_the_semantic_vectors_file_is_refused_and_recomputed(isolated: Path) -> None:
    pytest.importorskip("numpy")
    catalog = write(Path("cat.json"), TOOLS)
    assert answered(in_thread(lambda: warm(catalog, "--semantic"))) == "send_email"
    vectors = [p for p in isolated.glob("toolfind-*.vec") if ".rerank-" not in p.name]
    assert len(vectors) == 1
    replace_with(vectors[0], "fifo")
    done = in_thread(lambda: warm(catalog, "--semantic"))
    assert answered(done) == "send_email"
    assert f"Ignoring cache file {vectors[0]}: it is not a regular file (a FIFO)" in done.stderr


def test_a_planted_reranker_segment_is_refused_and_the_search_reranks(
    isolated: Path, model: Path
) -> None:
    from toolfind.semantic import models
    from toolfind.store.rerank import store_for

    suffix = store_for(None, models.spec(models.DEFAULT_MODEL))._suffix
    planted = isolated / f"toolfind-{'0' * 32}{suffix}"
    isolated.mkdir(mode=0o700, exist_ok=True)
    os.mkfifo(planted)
    catalog = write(Path("cat.json"), TOOLS)
    done = in_thread(lambda: warm(catalog, "--rerank"))
    assert answered(done) == "send_email"
    assert f"Ignoring cache file {planted}: it is not a regular file (a FIFO)." in done.stderr


def test_completion_never_opens_a_planted_index_file(isolated: Path) -> None:
    from toolfind.cli.completion import candidates

    catalog = write(Path("cat.json"), TOOLS)
    assert answered(warm(catalog)) == "send_email"  # records this run's index
    assert "send_email" in in_thread(lambda: candidates("tool", (str(catalog),), "send"))
    (index,) = isolated.glob("toolfind-*.pickle")
    replace_with(index, "fifo")
    assert in_thread(lambda: candidates("tool", (str(catalog),), "send")) == []


def test_the_model_folder_manifest_as_a_fifo_is_not_installed_never_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolfind.semantic import models

    spec = models.spec(models.DEFAULT_MODEL)
    folder = tmp_path / "models" / spec.name
    folder.mkdir(parents=True, mode=0o700)
    os.mkfifo(folder / models.MANIFEST)
    monkeypatch.setenv("TOOLFIND_MODEL_DIR", str(folder.parent))
    found = in_thread(lambda: models.status(spec.name))
    assert not found.installed and "no complete installation" in found.problem


# -- serve-mcp ----------------------------------------------------------------------------------


async def search_over_serve_mcp(work: Path, catalog: Path) -> tuple[dict[str, Any], str]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolfind", "serve-mcp", "-c", str(catalog)],
        env=server_env(work),
        cwd=str(work),
    )
    read, write_end = os.pipe()
    log = Log(os.fdopen(read, "rb"))
    with os.fdopen(write_end, "w", encoding="utf-8") as errlog, anyio.fail_after(120):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            found = structured(
                await client.call_tool("proxy_search_tools", {"query": "send an email"})
            )
    log.wait_closed()
    return found, log.text


@pytest.mark.anyio
async def test_serve_mcp_refuses_planted_cache_files_and_serves(tmp_path: Path) -> None:
    catalog = write(tmp_path / "cat.json", TOOLS)
    found, _ = await search_over_serve_mcp(tmp_path, catalog)
    assert found["hits"][0]["name"] == "send_email"
    root = Path(server_env(tmp_path)["TOOLFIND_CACHE_DIR"])
    # The manifest, the index, and the semantic vectors beside it (on by default there).
    planted = [root / manifest.MANIFEST_NAME, *root.glob("toolfind-*.pickle")]
    planted += root.glob("toolfind-*.vec")
    assert len(planted) == 3
    for path in planted:
        replace_with(path, "fifo")
    found, stderr = await search_over_serve_mcp(tmp_path, catalog)
    assert found["hits"][0]["name"] == "send_email"
    for path in planted:
        assert f"Ignoring cache file {path}: it is not a regular file (a FIFO)" in stderr


# -- eviction -----------------------------------------------------------------------------------


def index_keys(root: Path) -> set[str]:
    return {
        p.name[len(segment.INDEX_PREFIX) : -len(segment.INDEX_SUFFIX)]
        for p in root.glob("*.pickle")
    }


def test_each_edit_of_a_catalog_leaves_only_the_index_its_run_answers_with(
    isolated: Path,
) -> None:
    catalog = Path("cat.json")
    for version in range(5):
        write(catalog, [{**TOOLS[0], "description": f"Send an email, version {version}."}])
        assert answered(warm(catalog)) == "send_email"
    (live,) = index_keys(isolated)
    assert live == manifest.live_keys(manifest.read(str(isolated))).pop()
    assert answered(warm(catalog)) == "send_email"  # and the warm run still has it


def test_indexes_of_other_runs_and_the_reranker_segments_are_kept(isolated: Path) -> None:
    # Two catalogs, two runs: each keeps its index. An editing session of one drops only
    # its own old versions; what is not an index (a reranker segment, a user's file) stays.
    a, b = write(Path("a.json"), TOOLS), write(Path("b.json"), TOOLS[1:])
    answered(warm(a))
    answered(run_main("search", "weather", "-c", str(b), "--json"))
    keep = [
        write(isolated / f"toolfind-{'a' * 32}.rerank-some-model.vec", b"segment"),
        write(isolated / f"toolfind-{'b' * 32}.vectors-some-model@1.vec", b"vector store"),
        write(isolated / "notes.txt", b"mine"),
    ]
    before = index_keys(isolated)
    write(a, [{**TOOLS[0], "description": "Send an email, edited."}])
    answered(warm(a))
    after = index_keys(isolated)
    assert len(before) == len(after) == 2 and len(before & after) == 1
    assert all(path.exists() for path in keep)


def test_loads_no_run_remembers_keep_their_most_recent_indexes(isolated: Path) -> None:
    # serve-mcp and the Python API remember no run: their last MAX_USED indexes are kept,
    # each with the semantic vectors beside it; older ones go.
    keys = []
    for version in range(manifest.MAX_USED + 3):
        catalog = write(Path(f"c{version}.json"), [{**TOOLS[0], "description": f"v{version}"}])
        loaded = cache.load_index([catalog], cache_root=isolated)
        keys.append(loaded.key)
        write(isolated / f"toolfind-{loaded.key}.some-model.vec", b"vectors")
        os.chmod(isolated / f"toolfind-{loaded.key}.some-model.vec", 0o600)
    kept = keys[-manifest.MAX_USED :]
    # the last load's own write evicted what was beyond the budget before it
    assert index_keys(isolated) == set(kept)
    vectors = {p.name.split(".")[0][len(segment.INDEX_PREFIX) :] for p in isolated.glob("*.vec")}
    assert vectors == set(kept)
    again = cache.load_index([Path(f"c{manifest.MAX_USED + 2}.json")], cache_root=isolated)
    assert again.from_cache


def test_beyond_the_size_budget_the_least_recently_written_indexes_go(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def load(n: int) -> Path:
        catalog = write(Path(f"c{n}.json"), [{**TOOLS[0], "description": f"version {n}"}])
        key = cache.load_index([catalog], cache_root=isolated).key
        return isolated / f"toolfind-{key}.pickle"

    first = load(1)
    os.utime(first, ns=(10**18, 10**18))  # written long ago (2001)
    second = load(2)
    os.utime(second, ns=(15 * 10**17, 15 * 10**17))  # (2017)
    # Room for two indexes of this size: the third load's write drops the oldest only.
    monkeypatch.setattr(manifest, "MAX_INDEX_BYTES", 2 * first.stat().st_size)
    third = load(3)
    assert (first.exists(), second.exists(), third.exists()) == (False, True, True)
    monkeypatch.setattr(manifest, "MAX_INDEX_BYTES", 1)  # the newest always stays
    fourth = load(4)
    assert [p.exists() for p in (second, third, fourth)] == [False, False, True]
