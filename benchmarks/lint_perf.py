"""Time of ``toolfind validate``'s lint at scale, and the share of its cross-namespace check.

Writes perf.py's synthetic tools (fixed seed) as two catalogs in a temporary directory and
loads them once; then times, in process, the median over ``--runs`` of ``catalog.lint`` (every
lint rule) and of the ``identical-tool`` check alone (``linter._identical``) in two layouts:

* ``distinct``: ``--size`` tools, no two alike (each tool is keyed by name and description,
  no schema is serialised);
* ``twice``: the same ``--size`` tools as two namespaces of ``--size / 2`` each, the second a
  copy of the first (every tool of it is a finding: the check's worst case, a schema
  serialised per tool).

Usage: python benchmarks/lint_perf.py [--size 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from perf import make_tool  # noqa: E402 - the one synthetic tool generator

from toolfind import catalog  # noqa: E402
from toolfind.catalog import linter  # noqa: E402
from toolfind.models import LoadResult  # noqa: E402


def median_seconds(run: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def loaded(directory: Path, documents: dict[str, list[dict[str, object]]]) -> LoadResult:
    for name, tools in documents.items():
        (directory / f"{name}.json").write_text(json.dumps({"tools": tools}), encoding="utf-8")
    return catalog.load([directory])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(args.size)
    tools = [make_tool(rng, i) for i in range(args.size)]
    half = tools[: args.size // 2]
    layouts = {
        "distinct": {"a": tools[: args.size // 2], "b": tools[args.size // 2 :]},
        "twice": {"a": half, "b": half},
    }
    print(f"{'layout':<9} {'tools':>7} {'findings':>8} {'lint (s)':>9} {'identical (s)':>13}")
    for layout, documents in layouts.items():
        with tempfile.TemporaryDirectory() as tmp:
            result = loaded(Path(tmp), documents)
            findings = sum(f.rule == "identical-tool" for f in catalog.lint(result))
            whole = median_seconds(partial(catalog.lint, result), args.runs)
            alone = median_seconds(partial(linter._identical, result.tools), args.runs)
        print(f"{layout:<9} {len(result.tools):>7} {findings:>8} {whole:>9.3f} {alone:>13.3f}")


if __name__ == "__main__":
    main()
