"""Tune the lexical defaults on every open set at once, each with a floor.

Usage (from the repository root; needs the labelled sets of ``benchmarks/quality.py``)::

    .venv/bin/python benchmarks/tune_open.py [--data DIR] [--rounds 2] [--params JSON]
        [--floor-against NAME] [--noise 0.5] [--min-gain 0.1]

Coordinate ascent (``toolfind.eval.evaluate``'s grids and order) on one objective: the mean of
seal-tools dev NDCG@10, metatool MRR@10 (every 8th query, ``--stride``), mcp-open MRR@10 and toolwords
MRR@10, each set counting the same whatever its size, so no kind of query dominates. A change
is kept only when it raises that mean by at least ``--min-gain`` points (smaller steps are
noise on sets of a few hundred queries: a weight fitted to them would not hold on a held-out
set of the same kind) and leaves every set within ``--noise`` points of the floor: its value
under the numbers saved as ``--floor-against`` by ``benchmarks/open_eval.py --save NAME``
(today's defaults), or, without it, under the settings the run starts from. The held-out
seal-tools test splits never influence it; ``benchmarks/quality.py --params`` then reports every
set with the result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import open_eval  # noqa: E402
import quality  # noqa: E402

from toolfind.eval.evaluate import _coordinates, _with_setting  # noqa: E402
from toolfind.models import ScoringParams  # noqa: E402

#: Each set's headline row in ``open_eval.flat`` and which of (MRR, NDCG) judges it.
HEADLINES = {
    "seal-tools": ("seal-tools dev", 1),
    "metatool": ("metatool all", 0),
    "mcp-open": ("mcp-open all", 0),
    "toolwords": ("toolwords all", 0),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", default=quality.DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--params", default=None, help="start from these settings (JSON)")
    parser.add_argument("--floor-against", default=None, help="numbers saved by open_eval.py")
    parser.add_argument("--noise", type=float, default=0.5, help="points a set may lose")
    parser.add_argument("--min-gain", type=float, default=0.1, help="points a change must add")
    parser.add_argument("--stride", type=int, default=8, help="tune on every Nth metatool query")
    args = parser.parse_args()
    data = Path(args.data) if Path(args.data).is_absolute() else (REPO / args.data).resolve()
    start = ScoringParams() if args.params is None else quality.params_from_json(args.params)
    open_eval.log = lambda message: None
    sets = open_eval.load_sets(data, stride=args.stride)
    for s in sets:
        s.build(start)
    cache: dict[ScoringParams, dict[str, float]] = {}

    def values(params: ScoringParams) -> dict[str, float]:
        if params not in cache:
            flat = open_eval.flat(open_eval.measure(sets, params=params))
            cache[params] = {name: flat[row][i] for name, (row, i) in HEADLINES.items()}
        return cache[params]

    def mean(params: ScoringParams) -> float:
        found = values(params)
        return sum(found.values()) / len(found)

    if args.floor_against:
        saved = json.loads((open_eval.CACHE / f"{args.floor_against}.json").read_text())
        floor = {name: saved[row][i] for name, (row, i) in HEADLINES.items()}
    else:
        floor = values(start)

    def allowed(params: ScoringParams) -> bool:
        return all(values(params)[name] >= floor[name] - args.noise for name in HEADLINES)

    tools = [t for s in sets for t in s.tools]
    coords = _coordinates(tools, tune_delta=True)
    best, best_score = start, mean(start)
    print(f"start {best_score:.3f} {values(start)}", flush=True)
    t0 = time.perf_counter()
    for r in range(args.rounds):
        changed = False
        for setting, grid in coords:
            for value in grid:
                cand = _with_setting(best, setting, value)
                if cand == best:
                    continue
                score = mean(cand)
                if score >= best_score + args.min_gain and allowed(cand):
                    best, best_score, changed = cand, score, True
                    print(f"  {setting}={value:g}: {best_score:.3f} {values(best)}", flush=True)
        print(f"round {r + 1} done at {time.perf_counter() - t0:.0f}s", flush=True)
        if not changed:
            break
    print(quality.params_to_json(best))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
