"""How well ``similar`` finds a tool's alternatives: tools labelled relevant to the same request.

Usage (from the repository root; the labelled sets as for ``benchmarks/open_eval.py``)::

    .venv/bin/python benchmarks/similar_eval.py

For every request of mcp-open and toolwords with two or more relevant tools (alternatives:
``files/read_file`` and ``server-filesystem/read_text_file``), each of those tools is looked
up with ``similar``; it prints, per set, the MRR@10 of the first other alternative and how
often it comes first.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import open_eval  # noqa: E402
import quality  # noqa: E402


def main() -> int:
    data = Path(os.environ.get("TOOLFIND_BENCH_DATA") or REPO / quality.DEFAULT_DATA)
    for s in open_eval.load_sets(data.resolve()):
        if s.name not in ("mcp-open", "toolwords"):
            continue
        s.build(None)
        index = s.index
        groups = {tuple(sorted(j.relevant_ids)) for j in s.judged if len(j.relevant_ids) >= 2}
        reciprocal, n, first = 0.0, 0, 0
        for group in groups:
            for doc in group:
                tool = index.tools[doc]
                found = index.similar(f"{tool.namespace}/{tool.name}", 10)
                others = {index.tools[o].qualified_name for o in group if o != doc}
                ranks = [r for r, hit in enumerate(found, 1) if hit.tool.qualified_name in others]
                reciprocal += 1 / ranks[0] if ranks else 0.0
                first += bool(ranks) and ranks[0] == 1
                n += 1
        print(
            f"{s.name}: {n} tools, MRR@10 {100 * reciprocal / n:.2f}, first {100 * first / n:.1f}%"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
