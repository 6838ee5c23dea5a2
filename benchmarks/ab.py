"""A/B speed of this checkout against another revision, measured in one run.

Checks out ``--base`` (a git revision) in a temporary worktree and times the same commands
with both trees on the same synthetic catalogs (``perf.py``'s generator), interleaved run by
run (A B, B A, A B, ...) so that the machine's drift hits both alike. Reports each command's
median for both, the ratio new / base, and the new median against Python's start-up (P,
``python -c pass`` timed in the same run). A ratio above 1.10 is marked: a refactor may not
make a command more than 10% slower.

Both trees run with the same interpreter (the console script ``toolfind`` of this
environment) and their own ``PYTHONPATH`` and cache directory; each tree's bytecode is
compiled first, so start-up, not compilation, is measured.

Usage: python benchmarks/ab.py --base REV [--runs 15] [--sizes 10000,100000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from perf import QUERIES, write_catalog  # noqa: E402 - the one synthetic catalog generator

ROOT = Path(__file__).resolve().parent.parent
#: The issue's targets for the warm fast path, as a multiple of P (None: no target).
TARGETS = {
    ("search --json", 10000): 2.0,
    ("search --json", 100000): 2.5,
    ("show --json", 10000): 1.6,
    ("show --json", 100000): 1.6,
}


def run_once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def paired(
    cmd: list[str], envs: tuple[dict[str, str], dict[str, str]], runs: int
) -> tuple[float, float]:
    """Medians of ``cmd`` under the base and the new environment, runs interleaved."""
    samples: tuple[list[float], list[float]] = ([], [])
    for i in range(runs):
        order = (0, 1) if i % 2 == 0 else (1, 0)
        for side in order:
            samples[side].append(run_once(cmd, envs[side]))
    return statistics.median(samples[0]), statistics.median(samples[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="git revision to compare against")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    toolfind = shutil.which("toolfind") or str(Path(sys.executable).with_name("toolfind"))
    work = Path(tempfile.mkdtemp(prefix="toolfind-ab-"))
    base_tree = work / "base"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base_tree), args.base],
        check=True,
    )
    try:
        trees = (base_tree, ROOT)
        for tree in trees:
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(tree / "toolfind")], check=True
            )
        common = {k: v for k, v in os.environ.items() if k != "TOOLFIND_CATALOGS"}
        envs = tuple(
            {**common, "PYTHONPATH": str(tree), "TOOLFIND_CACHE_DIR": str(work / f"cache{i}")}
            for i, tree in enumerate(trees)
        )
        rows = measure(toolfind, work, envs, args.runs, [int(s) for s in args.sizes.split(",")])
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)], check=False
        )
        shutil.rmtree(work, ignore_errors=True)
    print(f"base: {args.base}; runs: {args.runs} per side, interleaved\n")
    print("| command | base | new | new / base | new x P | target |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, base, new, p in rows:
        ratio = new / base
        mark = " **slower**" if ratio > 1.10 else ""
        target = TARGETS.get(
            (label.rsplit(" ", 1)[0], int(label.rsplit(" ", 1)[1].replace(",", "")))
        )
        goal = (
            ""
            if target is None
            else f"<= {target}x " + ("met" if new / p <= target else "**not met**")
        )
        print(
            f"| {label} | {_ms(base)} | {_ms(new)} | {ratio:.2f}{mark} | {new / p:.2f} | {goal} |"
        )


def measure(
    toolfind: str,
    work: Path,
    envs: tuple[dict[str, str], ...],
    runs: int,
    sizes: list[int],
) -> list[tuple[str, float, float, float]]:
    """(label, base median, new median, P) per command and size."""
    pair = (envs[0], envs[1])
    p = statistics.median(run_once([sys.executable, "-c", "pass"], envs[1]) for _ in range(runs))
    rows = []
    for size in sizes:
        catalog = write_catalog(work, size)
        name = json.loads(catalog.read_text(encoding="utf-8"))[size // 2]["name"]
        cat = ["-c", str(catalog)]
        if size <= 10000:
            cold = ([], [])
            for i in range(3):
                for side in (0, 1) if i % 2 == 0 else (1, 0):
                    shutil.rmtree(envs[side]["TOOLFIND_CACHE_DIR"], ignore_errors=True)
                    cold[side].append(
                        run_once([toolfind, "search", "x", *cat, "--json"], envs[side])
                    )
            rows.append((f"cold build {size:,}", *map(statistics.median, cold), p))
        for env in envs:  # warm both caches
            run_once([toolfind, "search", "warm", *cat, "--json"], env)
        typer = tuple({**env, "TOOLFIND_NO_FASTPATH": "1"} for env in envs)
        commands = [
            ("search --json", [toolfind, "search", QUERIES[0], *cat, "--json"], pair, runs),
            ("show --json", [toolfind, "show", name, *cat, "--json"], pair, runs),
            ("categories --json", [toolfind, "categories", *cat, "--json"], pair, runs // 2),
            ("search table", [toolfind, "search", QUERIES[1], *cat], pair, runs // 2),
            ("similar --json", [toolfind, "similar", name, *cat, "--json"], pair, runs // 2),
            ("summaries --json", [toolfind, "summaries", *cat, "--json"], pair, runs // 2),
            ("list --json", [toolfind, "list", *cat, "--json"], pair, max(3, runs // 4)),
            ("show table", [toolfind, "show", name, *cat], pair, runs // 2),
            ("search table (Typer)", [toolfind, "search", QUERIES[1], *cat], typer, runs // 2),
            (
                "categories --json (Typer)",
                [toolfind, "categories", *cat, "--json"],
                typer,
                runs // 2,
            ),
        ]
        for label, cmd, side_envs, n in commands:
            base, new = paired(cmd, (side_envs[0], side_envs[1]), max(3, n))
            rows.append((f"{label} {size:,}", base, new, p))
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


if __name__ == "__main__":
    main()
