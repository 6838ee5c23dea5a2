"""The usage store (toolfind/store/usage.py, store/usage_ops.py, store/learned.py): several
writer processes at once, a crash mid-write, bounds, refusal of a store another user could
have written, hostile imports, and evidence that follows a tool's identity and meaning."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from toolfind.core import learning
from toolfind.errors import ToolNotFound, UsageStoreError
from toolfind.models import Tool
from toolfind.store import learned, usage, usage_ops
from toolfind.store.usage import Store, Usage

WRITER = """
import sys
from toolfind.store.usage import Store, Usage
store, me = Store(sys.argv[1]), sys.argv[2]
for i in range(1000):
    store.append([Usage(1, f"request {i} of writer {me} " + "x" * 60, "ns", f"tool{me}", "", 1, me)])
"""


def record(
    request: str,
    tool: str = "forecast",
    namespace: str = "weather",
    meaning: str = "",
    session: str = "",
) -> Usage:
    return Usage(usage.now(), request, namespace, tool, meaning, 1, session)


def test_four_writer_processes_at_once_leave_4000_whole_records(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(n)], env=env)
        for n in range(4)
    ]
    assert [w.wait(timeout=300) for w in writers] == [0] * 4
    records, skipped = Store(str(tmp_path))._read()
    assert skipped == 0 and len(records) == 4000
    for n in range(4):
        mine = [r.request for r in records if r.session == str(n)]
        assert mine == [f"request {i} of writer {n} " + "x" * 60 for i in range(1000)]
    assert os.stat(tmp_path / usage.USAGE_NAME).st_mode & 0o777 == 0o600


def test_a_line_torn_by_a_crash_is_skipped_and_the_records_around_it_kept(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    store.append([record("weather in oslo"), record("rain in paris")])
    whole = record("will it snow").line()
    with open(store.path, "ab") as fh:
        fh.write(whole[: len(whole) // 2])  # the crash: half a record, no end
    assert [r.request for r in store.read()] == ["weather in oslo", "rain in paris"]
    store.append([record("sunny tomorrow")])
    records, skipped = store._read()
    assert [r.request for r in records] == ["weather in oslo", "rain in paris", "sunny tomorrow"]
    assert skipped == 1


def test_past_its_bound_the_oldest_records_go_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(usage, "MAX_BYTES", 4_000)
    monkeypatch.setattr(usage, "KEEP_BYTES", 3_000)
    store = Store(str(tmp_path))
    for i in range(100):
        store.append([record(f"request number {i}")])
    kept = [r.request for r in store.read()]
    assert os.path.getsize(store.path) <= 4_000
    assert kept[-1] == "request number 99" and kept == [
        f"request number {i}" for i in range(100 - len(kept), 100)
    ]


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
@pytest.mark.parametrize("what", ["file", "directory"])
def test_a_store_another_user_could_write_is_refused_and_ranking_goes_on_without_it(
    tmp_path: Path, what: str
) -> None:
    store = Store(str(tmp_path / "state"))
    store.append([record("weather in oslo")] * 2)
    os.chmod(store.path if what == "file" else store.directory, 0o666 if what == "file" else 0o777)
    with pytest.raises(UsageStoreError) as caught:
        store.read()
    assert caught.value.kind == "usage_store"
    assert str(caught.value).startswith(f"{store.path}: not using the usage store: ")
    assert "TOOLFIND_STATE_DIR" in str(caught.value)
    with pytest.raises(UsageStoreError):
        store.append([record("more")])
    before = Path(store.path).read_bytes()
    tools = [Tool(name="forecast", namespace="weather", description="Weather.")]
    found = learned.evidence_for(store, "", None, lambda _: [0], lambda _: _facts(tools[0]), 1, 0)
    assert found is None and Path(store.path).read_bytes() == before


def _facts(tool: Tool) -> tuple[str, str, str, bool]:
    return tool.namespace, tool.name, tool.description, tool.enabled


def test_the_state_directory_follows_xdg_and_toolfind_state_dir() -> None:
    home = {"HOME": "/home/u"}
    assert usage.state_dir(home) == "/home/u/.local/state/toolfind"
    assert usage.state_dir(home | {"XDG_STATE_HOME": "/s"}) == "/s/toolfind"
    assert usage.state_dir(home | {"XDG_STATE_HOME": "rel"}) == "/home/u/.local/state/toolfind"
    assert usage.state_dir(home | {"TOOLFIND_STATE_DIR": "/x"}) == "/x"


TOOLS = {
    "weather/forecast": Tool(
        name="forecast", namespace="weather", description="Get the weather forecast for a city."
    ),
    "files/compress_file": Tool(
        name="compress_file", namespace="files", description="Compress a file into an archive."
    ),
}


def resolve(name: str) -> Tool:
    for qualified, tool in TOOLS.items():
        if name in (qualified, tool.name):
            return tool
    raise ToolNotFound(name)


def test_a_hostile_import_says_one_line_per_problem_and_loses_nothing_stored(
    tmp_path: Path,
) -> None:
    store = Store(str(tmp_path / "state"))
    store.append([record("weather in oslo", session="s1")])
    before = store.read()
    lines = [
        b'{"query": "zip my photos", "tool": "files/compress_file"}',
        b"not json at all",
        b'{"query": "x", "tool": "no_such_tool"}',
        b"[1, 2]",
        b'{"query": "", "tool": "forecast"}',
        b"\xff\xfe garbage",
        b"[" * 100_000,
        b'{"query": "rain tomorrow", "tool": "forecast", "extra": {"deep": [1]}}',
        b'{"query": "zip my photos", "tool": "compress_file"}',  # already there
    ]
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_bytes(b"\n".join(lines))
    done = usage_ops.import_file(store, str(hostile), resolve, lambda s: s)
    assert (done.added, done.already, done.more) == (2, 1, 0)
    assert [p.split(": ", 1)[0] for p in done.problems] == [
        f"{hostile}:{n}" for n in (2, 3, 4, 5, 6, 7)
    ]
    assert "expected {" in done.problems[0] and "no_such_tool" in done.problems[1]
    after = store.read()
    assert after[: len(before)] == before
    assert [(r.request, r.qualified) for r in after[len(before) :]] == [
        ("zip my photos", "files/compress_file"),
        ("rain tomorrow", "weather/forecast"),
    ]


def test_an_import_past_the_bound_stops_and_says_so_evicting_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(usage_ops, "MAX_BYTES", 2_000)
    store = Store(str(tmp_path / "state"))
    store.append([record(f"stored request {i}", session="s") for i in range(10)])
    before = store.read()
    big = tmp_path / "big.jsonl"
    big.write_text(
        "\n".join(f'{{"query": "imported {i}", "tool": "forecast"}}' for i in range(500)),
        encoding="utf-8",
    )
    done = usage_ops.import_file(store, str(big), resolve, lambda s: s)
    assert 0 < done.added < 500 and len(done.problems) == 1
    assert "the usage store is full" in done.problems[0]
    assert store.read()[: len(before)] == before


def compiled(records: list[Usage], tools: list[Tool]) -> dict[str, list[int]]:
    """What each term counts for, by tool index, from ``records``."""

    def named(key: str) -> list[int]:
        return [i for i, t in enumerate(tools) if t.name.lower() == key]

    found = learned.compile_evidence(
        records, named, lambda d: _facts(tools[d]), len(tools), usage.now()
    )
    terms = {"rain", "oslo", "forecast"}
    return {t: list(p[0]) for t in terms if (p := found.postings(t)) is not None}


def test_evidence_follows_a_renamed_namespace_and_is_dropped_for_a_changed_meaning() -> None:
    old = Tool(name="forecast", namespace="weather", description="Get the weather forecast.")
    sig = usage.meaning(old.description)
    records = [record(q, meaning=sig) for q in ("rain in oslo", "rain in bergen")]
    assert compiled(records, [old]) == {"rain": [0]}
    moved = Tool(name="forecast", namespace="meteo", description=old.description)
    assert compiled(records, [moved]) == {"rain": [0]}  # the host renamed its server
    reworded = Tool(name="forecast", namespace="weather", description=old.description + " Now.")
    assert compiled(records, [reworded]) == {"rain": [0]}  # a sentence added: same meaning
    other = Tool(
        name="forecast", namespace="weather", description="Send invoices to customers by email."
    )
    assert compiled(records, [other]) == {}  # another meaning: the evidence is dropped


def test_one_session_counts_at_most_its_cap_for_a_tool() -> None:
    tool = Tool(name="forecast", namespace="weather", description="Get the weather forecast.")
    loop = [record("rain in oslo", session="agent-loop") for _ in range(50)]
    table = learned.compile_evidence(loop, lambda _: [0], lambda _: _facts(tool), 1000, usage.now())
    capped = learning.impacts([(["rain"], 0, 1.0)] * learning.SESSION_TOOL_CAP, 1000)
    found = table.postings("rain")
    assert found is not None and list(found[1]) == capped["rain"][1]


def test_forget_removes_one_tools_records_and_names_it() -> None:
    store = Store()
    store.append([record("rain"), record("zip", tool="compress_file", namespace="files")])
    assert usage_ops.forget(store, "compress_file") == ("files/compress_file", 1)
    assert [r.qualified for r in store.read()] == ["weather/forecast"]
    with pytest.raises(ToolNotFound):
        usage_ops.forget(store, "compress_file")
    assert store.clear() == 1 and store.read() == []


def test_a_server_compiles_in_a_worker_thread_and_searches_with_the_last_evidence_meanwhile(
    tmp_path: Path,
) -> None:
    from toolfind.store.index import SearchIndex

    tool = Tool(name="forecast", namespace="weather", description="Get the weather forecast.")
    index = SearchIndex.build([tool, Tool(name="send_email", description="Send an email.")])
    store = Store(str(tmp_path / "state"))
    sig = usage.meaning(tool.description)
    store.append([record(f"rain in {c}", meaning=sig) for c in ("oslo", "bergen")])
    signal = learned.Learned(index, store)
    signal.in_background()
    signal._compiling.join(timeout=60)  # the first compile, started at once
    first = signal.current()
    assert first is not None and first.postings("oslo") is None and first.postings("rain")
    store.append([record(f"oslo {w}", meaning=sig) for w in ("snow", "wind")])
    assert signal.current() is first  # the store changed: the last evidence answers ...
    signal._compiling.join(timeout=60)  # ... while the worker compiles it anew
    now = signal.current()
    assert now is not first and now is not None and now.postings("oslo") is not None
