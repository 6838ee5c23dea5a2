"""What the learned signal costs: a warm ``toolfind search --json`` with 10,000 usage records
against none, the first search after the store changed (it compiles the evidence), the
store's size, and one search in process.

Usage (from the repository root)::

    .venv/bin/python benchmarks/learning_perf.py [--records N] [--runs N]

The catalogs are the shipped ones (``toolfind`` with no ``-c``); the records are requests
made of words of the tools' descriptions (three to eight, so that words reach the minimum of
evidence), each leading to its tool, in sessions of 20. Runs are interleaved (none, with,
none, ...) and each side's median is reported, as ``benchmarks/ab.py`` does.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from toolfind.store.usage import Store, Usage, meaning, now  # noqa: E402

QUERY = "read a file from disk"


def records(count: int, seed: int = 7) -> list[Usage]:
    """``count`` records over the shipped catalogs' tools (see the module docstring)."""
    import toolfind

    index = toolfind.open_index(learn=False)
    rng = random.Random(seed)
    tools = list(index.tools)
    out = []
    at = now()
    for i in range(count):
        tool = rng.choice(tools)
        words = [w for w in tool.description.split() if w.isalpha()] or [tool.name]
        request = " ".join(rng.choice(words) for _ in range(rng.randint(3, 8)))
        sig = meaning(tool.description)
        out.append(Usage(at - i, request, tool.namespace, tool.name, sig, 1, f"s{i // 20}"))
    return out


def run(env: dict[str, str]) -> float:
    """Seconds of one ``toolfind search QUERY --json``."""
    exe = str(Path(sys.executable).parent / "toolfind")
    t0 = time.perf_counter()
    subprocess.run([exe, "search", QUERY, "--json"], env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=31)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolfind-learning-perf-"))
    try:
        base = {**os.environ, "TOOLFIND_CACHE_DIR": str(work / "cache"), "HOME": str(work)}
        base.pop("TOOLFIND_NO_FASTPATH", None)
        # As installed: each module's bytecode written (a stale one is compiled on every run)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        import compileall

        compileall.compile_dir(str(REPO / "toolfind"), quiet=1)
        none = {**base, "TOOLFIND_STATE_DIR": str(work / "none")}
        full = {**base, "TOOLFIND_STATE_DIR": str(work / "full")}
        os.environ.update(TOOLFIND_CACHE_DIR=base["TOOLFIND_CACHE_DIR"], HOME=str(work))
        made = records(args.records)
        store = Store(full["TOOLFIND_STATE_DIR"])
        t0 = time.perf_counter()
        for start in range(0, len(made), 500):
            store.append(made[start : start + 500])
        wrote = time.perf_counter() - t0
        size = os.path.getsize(store.path)
        for env in (none, full, none, full):  # record the run, compile the evidence
            run(env)
        times: dict[str, list[float]] = {"none": [], "with": []}
        for _ in range(args.runs):
            times["none"].append(run(none))
            times["with"].append(run(full))
        compiles = []
        for i in range(5):  # the store changed: this search compiles the evidence again
            store.append([Usage(now(), f"read file {i}", "", "x", "", 0, "")])
            compiles.append(run(full))
        a, b = (statistics.median(times[k]) * 1000 for k in ("none", "with"))
        print(f"records: {len(store.read()):,}; written in {wrote:.2f}s (500 a write)")
        print(f"store: {size:,} bytes ({size / len(made) * 10_000 / 1e6:.2f} MB per 10k records)")
        print(f"warm search --json, median of {args.runs} interleaved runs:")
        print(f"  no usage     {a:7.2f} ms")
        print(f"  10k records  {b:7.2f} ms  ({b - a:+.2f} ms)")
        c = statistics.median(compiles) * 1000
        print(f"  first search after the store changed (compiles): {c:.1f} ms ({c - a:+.1f} ms)")
        import toolfind

        index = toolfind.open_index()
        plain = toolfind.open_index(learn=False)
        for idx in (index, plain):
            idx.search(QUERY)  # compile, warm
        per: dict[str, list[float]] = {"none": [], "with": []}
        for _ in range(200):
            for name, idx in (("none", plain), ("with", index)):
                t0 = time.perf_counter()
                idx.search(QUERY)
                per[name].append(time.perf_counter() - t0)
        x, y = (statistics.median(per[k]) * 1e6 for k in ("none", "with"))
        print(f"in process (open_index), median of 200: {x:.0f} us, with learning {y:.0f} us")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
