"""Tune the lexical defaults on the open sets together: seal-tools ``dev``, metatool, mcp-open.

Usage (from the repository root; needs /work/shared/bench/data)::

    .venv/bin/python benchmarks/tune_open.py [--data ../shared/bench/data] [--rounds 2]

Coordinate ascent (``toolfind.eval.evaluate``'s grids and order) on one objective: the mean of
seal-tools dev NDCG@10, metatool MRR@10 and mcp-open MRR@10, each set counting the same
whatever its size, so no kind of query dominates. metatool is sampled (every 4th query, fixed)
to keep a trial to a few seconds. The held-out seal-tools test splits never influence it;
``benchmarks/quality.py --params`` then reports every set with the result.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import quality  # noqa: E402

from toolfind.eval.evaluate import _coordinates, _with_setting, mean_metrics  # noqa: E402
from toolfind.models import ScoringParams  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default="../shared/bench/data")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--params", default=None, help="start from these settings (JSON)")
    args = parser.parse_args()
    data = Path(args.data) if Path(args.data).is_absolute() else (REPO / args.data).resolve()
    start = ScoringParams() if args.params is None else quality.params_from_json(args.params)
    seal = quality.load_set(data, "seal-tools")
    meta = quality.load_set(data, "metatool")
    mcp, mcp_labelled = quality.load_mcp_open(data)
    indexes = [quality.build_index(s.tools, start) for s in (seal, meta, mcp)]
    seal_q = [q for q in quality.judged_queries(indexes[0], seal.queries_path) if q.split == "dev"]
    meta_q = quality.judged_queries(indexes[1], meta.queries_path)[::4]
    mcp_q = quality.resolve_queries(indexes[2], mcp_labelled)
    sets = [(indexes[0], seal_q, 4), (indexes[1], meta_q, 0), (indexes[2], mcp_q, 0)]
    cache: dict[ScoringParams, float] = {}

    def score(params: ScoringParams) -> float:
        if params not in cache:
            parts = []
            for index, queries, metric in sets:
                trial = index if params == index.params else index.with_params(params)
                parts.append(mean_metrics(trial, queries).values()[metric])
            cache[params] = sum(parts) / len(parts)
        return cache[params]

    tools = [t for s in (seal, meta, mcp) for t in s.tools]
    coords = _coordinates(tools, tune_delta=True)
    best, best_score = start, score(start)
    print(f"start {best_score:.4f}", flush=True)
    t0 = time.perf_counter()
    for r in range(args.rounds):
        changed = False
        for setting, grid in coords:
            for value in grid:
                cand = _with_setting(best, setting, value)
                if cand != best and score(cand) > best_score + 1e-9:
                    best, best_score, changed = cand, score(cand), True
                    print(f"  {setting}={value:g}: {best_score:.4f}", flush=True)
        print(f"round {r + 1} done at {time.perf_counter() - t0:.0f}s", flush=True)
        if not changed:
            break
    print(quality.params_to_json(best))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
