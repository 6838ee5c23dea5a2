"""What learning from use gains, and what it costs the tools nobody used yet.

Usage (from the repository root; needs the labelled sets, see ``benchmarks/quality.py``)::

    .venv/bin/python benchmarks/learning.py [--data DIR] [--weight W] [--metatool-stride N]

The split (the same for every set): each tool's requests, in file order, are numbered from 1;
the even-numbered ones become usage (a record of that request leading to that tool, through
the real usage store and the compiled evidence, as ``toolfind usage import`` writes them),
the odd-numbered ones are judged. A request labelled with several tools is usage for some and
judged for others. Each judged (request, tool) pair scores the reciprocal rank of the tool
among the tool itself and the tools not labelled for the request (the *filtered* rank of
link-prediction benchmarks: another right tool ranked first is no error), cut at 10, with no
usage and with it.

Rows, per set:

* ``used``: pairs whose tool has usage and was asked at least 4 times (half its requests
  are usage);
* ``no usage``: pairs whose tool has none (seal-tools: tools asked once; metatool: none, so
  the second protocol holds back every fourth tool, by name, entirely);
* seal-tools per split: the weight was chosen on ``dev`` (and metatool); the test splits
  judge it.

Also: the store's size per 10,000 records (the seal-tools and metatool requests as stored).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import quality  # noqa: E402

from toolfind.core import learning  # noqa: E402
from toolfind.eval.queries import JudgedQuery, load_queries, resolve_queries  # noqa: E402
from toolfind.store.learned import Learned  # noqa: E402
from toolfind.store.usage import Store, Usage, meaning, now  # noqa: E402

CUTOFF = 10


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def split(
    judged: Sequence[JudgedQuery], held: frozenset[int] = frozenset()
) -> tuple[list[tuple[str, int]], list[tuple[int, int]], collections.Counter[int]]:
    """(usage: (request, tool id)), (judged pairs: (query position, tool id)), and how often
    each tool is asked; tools in ``held`` get no usage."""
    asked: collections.Counter[int] = collections.Counter(t for q in judged for t in q.relevant_ids)
    seen: collections.Counter[int] = collections.Counter()
    usage, pairs = [], []
    for i, q in enumerate(judged):
        for t in q.relevant_ids:
            seen[t] += 1
            if seen[t] % 2 == 0:
                if t not in held:
                    usage.append((q.query, t))
            else:
                pairs.append((i, t))
    return usage, pairs, asked


def filtered_rr(ranked: Sequence[int], tool: int, labelled: set[int]) -> float:
    """1 / the rank of ``tool`` among itself and the tools not in ``labelled``, within 10."""
    rank = 0
    for d in ranked:
        if d == tool:
            return 1.0 / (rank + 1)
        if d not in labelled:
            rank += 1
            if rank >= CUTOFF:
                break
    return 0.0


def rankings(index: Any, judged: Sequence[JudgedQuery], wanted: set[int]) -> dict[int, list[int]]:
    doc_of = {id(tool): i for i, tool in enumerate(index.tools)}
    depth = CUTOFF + 20  # room for the other labelled tools of a request
    return {
        i: [doc_of[id(h.tool)] for h in index.search(judged[i].query, depth).hits]
        for i in sorted(wanted)
    }


def store_usage(store: Store, index: Any, usage: Sequence[tuple[str, int]]) -> None:
    """Write ``usage`` to ``store`` as ``toolfind usage import`` does (session "", rank 0)."""
    at = now()
    meanings: dict[int, str] = {}
    records = []
    for request, doc in usage:
        tool = index.tools[doc]
        if doc not in meanings:
            meanings[doc] = meaning(tool.description)
        records.append(Usage(at, request, tool.namespace, tool.name, meanings[doc], 0, ""))
    for start in range(0, len(records), 2000):  # under the store's bound, in a few writes
        store.append(records[start : start + 2000])


def measure(
    name: str,
    index: Any,
    judged: Sequence[JudgedQuery],
    held: frozenset[int],
    stride: int,
) -> dict[str, tuple[int, float, float]]:
    """Per group, (pairs, filtered MRR@10 without usage, with it), in percent."""
    usage, pairs, asked = split(judged, held)
    pairs = pairs[::stride]
    with_usage = {d for _, d in usage}
    groups: dict[str, list[tuple[int, int]]] = {
        "used": [(i, t) for i, t in pairs if t in with_usage and asked[t] >= 4],
        "no usage": [(i, t) for i, t in pairs if t not in with_usage],
    }
    if name == "seal-tools":
        for kind in ("dev", "test_in_domain", "test_out_domain"):
            groups[f"used, {kind}"] = [(i, t) for i, t in groups["used"] if judged[i].split == kind]
    wanted = {i for i, _ in pairs}
    t0 = time.perf_counter()
    index.learned = None
    before = rankings(index, judged, wanted)
    with tempfile.TemporaryDirectory() as state:
        store = Store(state)
        store_usage(store, index, usage)
        size = os.path.getsize(store.path)
        index.learned = Learned(index, store)
        after = rankings(index, judged, wanted)
        index.learned = None
    log(
        f"  {name}: {len(usage)} usage records ({size / len(usage) * 10_000 / 1e6:.2f} MB per 10k)"
        f", {len(wanted)} requests judged twice in {time.perf_counter() - t0:.0f}s"
    )
    out = {}
    for group, members in groups.items():
        if not members:
            continue
        rr = [
            (
                filtered_rr(before[i], t, set(judged[i].relevant_ids)),
                filtered_rr(after[i], t, set(judged[i].relevant_ids)),
            )
            for i, t in members
        ]
        n = len(rr)
        out[group] = (n, 100 * sum(a for a, _ in rr) / n, 100 * sum(b for _, b in rr) / n)
    return out


def table(rows: list[tuple[str, str, tuple[int, float, float]]]) -> str:
    lines = [
        "| set | protocol, group | pairs | no usage | with usage | change |",
        "|---|---|---|---|---|---|",
    ]
    for name, group, (n, a, b) in rows:
        lines.append(f"| {name} | {group} | {n:,} | {a:.2f} | {b:.2f} | {b - a:+.2f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="the labelled sets' directory")
    parser.add_argument("--weight", type=float, default=None, help="the learned signal's weight")
    parser.add_argument(
        "--metatool-stride", type=int, default=2, help="judge every Nth metatool pair (1: all)"
    )
    args = parser.parse_args(argv)
    data = args.data or Path(os.environ.get("TOOLFIND_BENCH_DATA") or quality.DEFAULT_DATA)
    problem = quality.missing_requirements(data, ("seal-tools", "metatool"), need_bm25s=False)
    if problem:
        print(f"learning.py: {problem}", file=sys.stderr)
        return 1
    if args.weight is not None:
        learning.WEIGHT = args.weight
    rows = []
    for name, stride in (("metatool", args.metatool_stride), ("seal-tools", 1)):
        found = quality.load_set(data, name)
        index = quality.build_index(found.tools)
        judged = resolve_queries(index, load_queries(found.queries_path))
        log(f"{name}: {len(index.tools)} tools, {len(judged)} requests")
        for group, value in measure(name, index, judged, frozenset(), stride).items():
            rows.append((name, f"split, {group}", value))
        asked = sorted(
            {t for q in judged for t in q.relevant_ids}, key=lambda d: index.tools[d].name
        )
        held = frozenset(asked[3::4])
        for group, value in measure(name, index, judged, held, stride).items():
            rows.append((name, f"every 4th tool held back, {group}", value))
    print(f"learned signal weight {learning.WEIGHT:g}; filtered MRR@10 per (request, tool)\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
