"""Peak memory and wall time of toolfind on one large OpenAI-format catalog (100k tools, 77 MiB).

Writes the catalog once (fixed seed: ``perf.py``'s tools, each wrapped as an OpenAI
``{"type": "function", "function": ...}`` entry, ``indent=1``), then runs each command in a
fresh process from an empty directory and reports its peak resident memory (the child's
``ru_maxrss``, from ``os.wait4``), its wall time and what it printed:

* the cold build (``search --json`` with an empty cache: parse, analyse, index, write);
* warm ``list --json``, ``summaries --all`` (text and ``--json``) and ``search --json``.

Issue 18's targets: cold build <= 500 MiB, ``list --json`` and ``summaries`` <= 150 MiB.

``--tree PATH`` measures another checkout (e.g. a worktree of main, for "before" numbers);
``--max-file-size SIZE`` writes a ``toolfind.toml`` raising the file limit, for revisions whose
default limit skips the catalog.

Usage: python benchmarks/large.py [--size 100000] [--runs 3] [--tree PATH] [--max-file-size 1GiB]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from perf import QUERIES, make_tool  # noqa: E402 - the one synthetic tool generator

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"cold build": 500, "list --json": 150, "summaries --all": 150, "summaries --json": 150}


def write_openai_catalog(path: Path, size: int) -> None:
    """The catalog: ``size`` tools in OpenAI's chat-completions format (deterministic)."""
    rng = random.Random(size)
    tools = [{"type": "function", "function": make_tool(rng, i)} for i in range(size)]
    path.write_text(json.dumps(tools, indent=1), encoding="utf-8")


def run(cmd: list[str], env: dict[str, str], cwd: Path, out: Path) -> tuple[float, float, int]:
    """(peak RSS in MiB, wall seconds, bytes printed) of one run of ``cmd``."""
    with open(out, "wb") as stdout:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return usage.ru_maxrss / 1024, wall, out.stat().st_size  # ru_maxrss: KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument("--max-file-size", help="write a toolfind.toml with this limit")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolfind-large-"))
    try:
        rows = measure(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"tree: {args.tree}; {args.size:,} tools; median of {args.runs} runs\n")
    print("| command | peak RSS | wall | stdout | target |\n| --- | --- | --- | --- | --- |")
    for label, mib, wall, printed in rows:
        target = TARGETS.get(label)
        goal = (
            ""
            if target is None
            else f"<= {target} MiB " + ("met" if mib <= target else "**not met**")
        )
        print(f"| {label} | {mib:.0f} MiB | {wall:.2f} s | {printed / 1024:,.0f} KiB | {goal} |")


def measure(work: Path, args: argparse.Namespace) -> list[tuple[str, float, float, int]]:
    # Written by a child: a fork of a large parent would start with the parent's peak RSS.
    catalog = work / f"openai-{args.size}.json"
    subprocess.run([sys.executable, __file__, "--write", str(catalog), str(args.size)], check=True)
    print(f"catalog: {catalog.stat().st_size / 2**20:.1f} MiB", file=sys.stderr)
    cwd = work / "run"  # an empty directory: no toolfind.toml but the one written here
    cwd.mkdir()
    if args.max_file_size:
        (cwd / "toolfind.toml").write_text(f'max_file_size = "{args.max_file_size}"\n')
    tree = args.tree.resolve()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "toolfind")], check=True)
    cache = work / "cache"
    env = {k: v for k, v in os.environ.items() if k != "TOOLFIND_CATALOGS"}
    env |= {"PYTHONPATH": str(tree), "TOOLFIND_CACHE_DIR": str(cache)}
    toolfind = [sys.executable, "-m", "toolfind"]
    cat = ["-c", str(catalog)]
    out = work / "stdout"
    rows = []

    def row(label: str, samples: list[tuple[float, float, int]]) -> None:
        mib, wall, printed = (statistics.median(s[k] for s in samples) for k in range(3))
        rows.append((label, mib, wall, int(printed)))
        print(f"{label}: {mib:.0f} MiB, {wall:.2f} s", file=sys.stderr)

    cold = []
    for _ in range(args.runs):
        shutil.rmtree(cache, ignore_errors=True)
        cold.append(run([*toolfind, "search", QUERIES[0], *cat, "--json"], env, cwd, out))
    row("cold build", cold)
    for label, command in (
        ("list --json", ["list", *cat, "--json"]),
        ("summaries --all", ["summaries", "--all", *cat]),
        ("summaries --json", ["summaries", "--all", *cat, "--json"]),
        ("search --json", ["search", QUERIES[0], *cat, "--json"]),
    ):
        row(label, [run([*toolfind, *command], env, cwd, out) for _ in range(args.runs)])
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"]:
        write_openai_catalog(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
