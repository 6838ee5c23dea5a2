"""Peak memory and time of toolfind on one large OpenAI-format catalog (100k tools, 77 MiB).

Writes the catalog once (fixed seed: ``perf.py``'s tools, each wrapped as an OpenAI
``{"type": "function", "function": ...}`` entry, ``indent=1``), then runs each command in a
fresh process from an empty directory and reports the median over ``--runs`` of its peak
resident memory (the child's ``ru_maxrss``, from ``os.wait4``), its wall time, its CPU time
(user + system: steadier than wall time on a busy machine) and what it printed:

* the cold build (``search --json`` with an empty cache: parse, analyse, index, write);
* warm ``list --json``, ``summaries --all`` (text and ``--json``) and ``search --json``;
* warm ``show`` of a tool's name, and of a name no tool has (one edit from it), ``--json``
  and the table: the tool, and the error with its "did you mean" (exit 1).

Targets: cold build <= 500 MiB, ``list --json`` and ``summaries`` <= 150 MiB, a ``show``
hit or miss <= 30 MiB.

``--base PATH`` also measures another checkout (e.g. a worktree of an older revision), run by
run interleaved with this one so that the machine's drift hits both alike;
``--base-max-file-size SIZE`` gives the base a ``toolfind.toml`` raising its file limit (the
64 MiB default of earlier revisions skips the catalog).

Usage: python benchmarks/large.py [--size 100000] [--runs 3] [--base PATH [--base-max-file-size 1GiB]]
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
from perf import QUERIES, make_tool, typo  # noqa: E402 - the one synthetic tool generator

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"cold build": 500, "list --json": 150, "summaries --all": 150, "summaries --json": 150}
TARGETS |= {"show": 30, "show --json": 30, "show miss": 30, "show miss --json": 30}

#: (peak RSS in MiB, wall seconds, CPU seconds, bytes printed) of one run.
Sample = tuple[float, float, float, int]


def write_openai_catalog(path: Path, size: int) -> None:
    """The catalog: ``size`` tools in OpenAI's chat-completions format (deterministic)."""
    rng = random.Random(size)
    tools = [{"type": "function", "function": make_tool(rng, i)} for i in range(size)]
    path.write_text(json.dumps(tools, indent=1), encoding="utf-8")


class Tree:
    """One checkout under test: its environment, its working directory and its cache."""

    def __init__(self, name: str, root: Path, work: Path, max_file_size: str | None) -> None:
        self.name = name
        self.root = root.resolve()
        self.cwd = work / f"run-{name}"  # empty: no toolfind.toml but the one written here
        self.cwd.mkdir()
        if max_file_size:
            (self.cwd / "toolfind.toml").write_text(f'max_file_size = "{max_file_size}"\n')
        self.cache = work / f"cache-{name}"
        env = {k: v for k, v in os.environ.items() if k != "TOOLFIND_CATALOGS"}
        self.env = env | {"PYTHONPATH": str(self.root), "TOOLFIND_CACHE_DIR": str(self.cache)}
        self.out = work / f"stdout-{name}"
        compile_ = [sys.executable, "-m", "compileall", "-q", str(self.root / "toolfind")]
        subprocess.run(compile_, check=True)

    def run(self, args: list[str], code: int = 0) -> Sample:
        cmd = [sys.executable, "-m", "toolfind", *args]
        with open(self.out, "wb") as stdout:
            start = time.perf_counter()
            proc = subprocess.Popen(
                cmd, env=self.env, cwd=self.cwd, stdout=stdout, stderr=subprocess.DEVNULL
            )
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != code:
            raise SystemExit(f"{self.name}: {' '.join(cmd)} exited {proc.returncode}")
        cpu = usage.ru_utime + usage.ru_stime
        return usage.ru_maxrss / 1024, wall, cpu, self.out.stat().st_size  # maxrss: KiB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--base", type=Path, help="another checkout, measured interleaved")
    parser.add_argument("--base-max-file-size", help="a max_file_size for the base's runs")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="toolfind-large-"))
    try:
        trees = [Tree("new", ROOT, work, None)]
        if args.base:
            trees.insert(0, Tree("base", args.base, work, args.base_max_file_size))
        rows = measure(work, trees, args.size, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{args.size:,} tools; median of {args.runs} runs; trees: ", end="")
    print(", ".join(f"{t.name} = {t.root}" for t in trees) + "\n")
    print("| command | tree | peak RSS | wall | CPU | stdout | target |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, name, (mib, wall, cpu, printed) in rows:
        target = TARGETS.get(label)
        goal = (
            ""
            if target is None
            else f"<= {target} MiB " + ("met" if mib <= target else "**not met**")
        )
        print(
            f"| {label} | {name} | {mib:.0f} MiB | {wall:.2f} s | {cpu:.2f} s "
            f"| {printed / 1024:,.0f} KiB | {goal} |"
        )


def measure(work: Path, trees: list[Tree], size: int, runs: int) -> list[tuple[str, str, Sample]]:
    # Written by a child: a fork of a large parent would start with the parent's peak RSS.
    catalog = work / f"openai-{size}.json"
    subprocess.run([sys.executable, __file__, "--write", str(catalog), str(size)], check=True)
    print(f"catalog: {catalog.stat().st_size / 2**20:.1f} MiB", file=sys.stderr)
    cat = ["-c", str(catalog)]
    # One edit from a tool's name (perf.py's tool 7 of the same seed: ``size`` tools).
    rng = random.Random(size)
    hit = str([make_tool(rng, i) for i in range(8)][7]["name"])
    miss = typo(hit)
    commands = [
        ("cold build", ["search", QUERIES[0], *cat, "--json"]),
        ("list --json", ["list", *cat, "--json"]),
        ("summaries --all", ["summaries", "--all", *cat]),
        ("summaries --json", ["summaries", "--all", *cat, "--json"]),
        ("search --json", ["search", QUERIES[0], *cat, "--json"]),
        ("show", ["show", hit, *cat]),
        ("show --json", ["show", hit, *cat, "--json"]),
        ("show miss", ["show", miss, *cat]),
        ("show miss --json", ["show", miss, *cat, "--json"]),
    ]
    rows = []
    for label, command in commands:
        samples: dict[str, list[Sample]] = {t.name: [] for t in trees}
        for i in range(runs):
            for tree in trees if i % 2 == 0 else trees[::-1]:
                if label == "cold build":
                    shutil.rmtree(tree.cache, ignore_errors=True)
                samples[tree.name].append(tree.run(command, 1 if "miss" in label else 0))
        for tree in trees:
            got = samples[tree.name]
            median = tuple(statistics.median(s[k] for s in got) for k in range(4))
            rows.append((label, tree.name, (median[0], median[1], median[2], int(median[3]))))
            print(
                f"{label} ({tree.name}): {median[0]:.0f} MiB, {median[2]:.2f} s CPU",
                file=sys.stderr,
            )
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write"]:
        write_openai_catalog(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        main()
