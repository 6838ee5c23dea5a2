"""Grouped cross-validation of the ranking's settings over every open set: does a default
hold on requests about servers (or tools) it was not chosen on, and on a set it was not
chosen on?

Usage (from the repository root; the sets of ``benchmarks/quality.py``, the ``semantic``
extra and the reranker's model, ``toolfind model fetch``)::

    .venv/bin/python benchmarks/crossval.py [--data DIR]

``benchmarks/quality.py`` prints the same table after its own (``--no-cv`` skips it).

The ranking is the Python API's default with the model: the semantic first stage, then the
rerank stage with the tools closest in meaning. Its settings, the rerank weight and depth
(:data:`toolfind.eval.reranking.WEIGHTS` x :data:`~toolfind.eval.reranking.DEPTHS`), are chosen
the way a default is chosen: the best mean over the sets of each set's headline measure
(seal-tools ``dev`` NDCG@10, metatool, mcp-open and toolwords MRR@10; each set counting the
same). Three numbers per set:

- **default**: at the shipped weight and depth;
- **grouped CV**: the requests split in 5 folds by server (a request's servers are its
  relevant tools' namespaces; for seal-tools and metatool, whose tools have none, the tools
  themselves), each fold judged at the settings chosen on the other four (seal-tools' test
  splits, never chosen on, at the settings chosen on every fold);
- **leave one set out**: each set judged at the settings chosen on the other three.

A default whose grouped-CV and leave-one-set-out numbers stay within noise of it generalises;
a change that raises only the set it was chosen on shows up here as a drop
(docs/ranking.md, "The generalisation protocol").
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import open_eval  # noqa: E402
import quality  # noqa: E402

FOLDS = 5
#: Each set's headline measure: (split its choices are made on, index into query_metrics).
HEADLINE = {"seal-tools": ("dev", -1), "metatool": (None, 0), "mcp-open": (None, 0)}
HEADLINE["toolwords"] = (None, 0)


def group_of(set_name: str, tool: Any) -> str:
    """A tool's server: its namespace, or the tool itself where tools have none."""
    return tool.namespace if set_name in ("mcp-open", "toolwords") else tool.name


def settings_grid() -> list[tuple[float, int]]:
    from toolfind.eval import reranking

    return [(w, d) for d in reranking.DEPTHS for w in reranking.WEIGHTS]


def per_query(sets: Sequence[open_eval.OpenSet], progress: Callable[[str], None]) -> list[Any]:
    """Per request: (set, fold, split, {setting: (MRR@10, ..., NDCG@10)})."""
    from toolfind.eval import reranking
    from toolfind.eval.evaluate import query_metrics

    grid = settings_grid()
    out = []
    for s in sets:
        t0 = time.perf_counter()
        if s.index.semantic is None:
            open_eval.attach_semantic(s)
        if s.index.reranker is None:
            open_eval.attach_reranker(s)
        depth = max(reranking.DEPTHS)
        vectors = open_eval.query_vectors(s.name, [q.query for q in s.judged])
        found = reranking.candidates(s.index, s.judged, depth, vectors)
        for c in found:
            q = c.query
            server = min(group_of(s.name, s.index.tools[d]) for d in q.relevant_ids)
            fold = zlib.crc32(f"{s.name}|{server}".encode()) % FOLDS
            relevant = set(q.relevant_ids)
            values = {g: query_metrics(reranking.ranked(c, *g), relevant) for g in grid}
            out.append((s.name, fold, q.split, values))
        progress(f"  cross-validation: {s.name} in {time.perf_counter() - t0:.1f}s")
    return out


def headline(rows: Sequence[Any], name: str, setting: tuple[float, int]) -> float:
    split, k = HEADLINE[name]
    values = [v[setting][k] for n, _, sp, v in rows if n == name and (split is None or sp == split)]
    return sum(values) / len(values) if values else float("nan")


def choose(rows: Sequence[Any], names: Sequence[str]) -> tuple[float, int]:
    """The setting with the best mean headline over ``names`` (ties: the smaller depth, then
    the smaller weight, as ``tune`` breaks them)."""
    from toolfind.eval import reranking

    points = [
        (w, d, sum(headline(rows, n, (w, d)) for n in names) / len(names))
        for w, d in settings_grid()
    ]
    return reranking.best(points)


def run(sets: Sequence[open_eval.OpenSet], progress: Callable[[str], None]) -> str:
    """The markdown table of default, grouped-CV and leave-one-set-out numbers per set."""
    from toolfind.core.fusion import RERANK_WEIGHT
    from toolfind.models import RERANK_DEPTH as DEFAULT_DEPTH

    rows = per_query(sets, progress)
    names = [s.name for s in sets]
    default = (RERANK_WEIGHT, DEFAULT_DEPTH)
    chosen = {k: choose([r for r in rows if r[1] != k], names) for k in range(FOLDS)}
    everywhere = choose(rows, names)
    lines = [
        "| set | measure | default | grouped CV | leave one set out (chosen there) |",
        "|---|---|---|---|---|",
    ]
    for name in names:
        other = choose(rows, [n for n in names if n != name])
        splits = ("dev", "test_in_domain", "test_out_domain") if name == "seal-tools" else (None,)
        k = HEADLINE[name][1]
        label = "NDCG@10" if k == -1 else "MRR@10"
        for split in splits:
            mine = [r for r in rows if r[0] == name and (split is None or r[2] == split)]
            held_out = split in (None, "dev")
            cells = (
                _mean(mine, k, [default] * len(mine)),
                _mean(mine, k, [chosen[r[1]] if held_out else everywhere for r in mine]),
                _mean(mine, k, [other] * len(mine)),
            )
            lines.append(
                f"| {name}{' ' + split if split else ''} | {label} | {cells[0]:.2f}"
                f" | {cells[1]:.2f} | {cells[2]:.2f} (w={other[0]:g}, d={other[1]}) |"
            )
    picks = ", ".join(f"w={w:g} d={d}" for w, d in chosen.values())
    lines.append("")
    lines.append(
        f"default: w={default[0]:g} d={default[1]}; chosen per fold: {picks};"
        f" on every request: w={everywhere[0]:g} d={everywhere[1]}"
    )
    return "\n".join(lines)


def _mean(rows: Sequence[Any], k: int, settings: Sequence[tuple[float, int]]) -> float:
    """The mean of measure ``k`` over ``rows``, each at its own setting, in percent."""
    return 100 * sum(r[3][g][k] for r, g in zip(rows, settings, strict=True)) / len(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--data", default=os.environ.get("TOOLFIND_BENCH_DATA") or quality.DEFAULT_DATA
    )
    args = parser.parse_args(argv)
    data = Path(args.data) if Path(args.data).is_absolute() else (REPO / args.data).resolve()
    problem = quality.missing_requirements(data, quality.DATA_SETS, need_bm25s=False)
    if problem:
        print(f"crossval.py: {problem}", file=sys.stderr)
        return 1
    sets = open_eval.load_sets(data)
    for s in sets:
        s.build()
    print(run(sets, open_eval.log))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
