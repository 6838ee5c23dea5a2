"""A fast, in-process evaluation loop over every open set, for iterating on ranking.

Usage (from the repository root; needs the ``bench`` extra and the labelled sets, see
``benchmarks/quality.py``)::

    .venv/bin/python benchmarks/open_eval.py [--semantic] [--params JSON] [--full]
        [--save NAME] [--against NAME]

One process builds each set's index once and runs every query in it; ``--semantic`` adds the
fused ranking (tool vectors cached under ``$TMPDIR/toolfind-open-eval``, query vectors
memoised). metatool is sampled (every 4th query) unless ``--full``. It prints, per set and
per kind, MRR@10 and NDCG@10; ``--save NAME`` keeps the numbers in that cache directory and
``--against NAME`` prints the change from numbers kept earlier (e.g. today's defaults).

The sets: seal-tools (``dev``, and the test splits, reported only), metatool, mcp-open (by
kind), and toolwords (``benchmarks/data/toolwords.jsonl``: BFCL-style requests in the tools'
own words against ``catalogs/`` and ``tests/fixtures/mcp/``; its README says how it was
written). ``benchmarks/quality.py`` is the full report beside bm25s; this is the quick loop.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import quality  # noqa: E402

from toolfind.eval.evaluate import Metrics, evaluate  # noqa: E402
from toolfind.eval.queries import JudgedQuery, LabelledQuery, load_queries, resolve_queries  # noqa: E402
from toolfind.models import ScoringParams, Tool  # noqa: E402

CACHE = Path(tempfile.gettempdir()) / "toolfind-open-eval"


@dataclass
class OpenSet:
    """One labelled set: its tools, its queries (``split`` is the kind or split), the
    metric it is judged by, and its index once built."""

    name: str
    tools: list[Tool]
    labelled: list[LabelledQuery]
    metric: str  # "mrr@10" or "ndcg@10"
    index: Any = None
    judged: list[JudgedQuery] = field(default_factory=list)

    def build(self, params: ScoringParams | None = None) -> None:
        t0 = time.perf_counter()
        self.index = quality.build_index(self.tools, params)
        self.judged = resolve_queries(self.index, self.labelled)
        log(f"  built {self.name}: {len(self.tools)} tools in {time.perf_counter() - t0:.1f}s")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load_sets(data: Path, *, full_metatool: bool = False, stride: int = 4) -> list[OpenSet]:
    seal = quality.load_set(data, "seal-tools")
    meta = quality.load_set(data, "metatool")
    mcp, mcp_labelled = quality.load_mcp_open(data)
    words, words_labelled = quality.load_toolwords()
    meta_labelled = load_queries(meta.queries_path)
    if not full_metatool:
        meta_labelled = meta_labelled[::stride]
    return [
        OpenSet("seal-tools", seal.tools, load_queries(seal.queries_path), "ndcg@10"),
        OpenSet("metatool", meta.tools, meta_labelled, "mrr@10"),
        OpenSet("mcp-open", mcp.tools, mcp_labelled, "mrr@10"),
        OpenSet("toolwords", words.tools, words_labelled, "mrr@10"),
    ]


class MemoEmbedder:
    """An embedder whose ``embed_one`` remembers each query's vector (a run embeds every
    query once per fusion weight otherwise)."""

    def __init__(self, embedder: Any) -> None:
        self._inner = embedder
        self._memo: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def embed_one(self, text: str) -> Any:
        found = self._memo.get(text)
        if found is None:
            found = self._memo[text] = self._inner.embed_one(text)
        return found


_EMBEDDER: list[Any] = []


def embedder() -> Any:
    if not _EMBEDDER:
        from toolfind import semantic

        _EMBEDDER.append(MemoEmbedder(semantic.load()))
    return _EMBEDDER[0]


def attach_semantic(s: OpenSet, weight: float | None = None) -> None:
    """Fuse the semantic signal into ``s.index`` (tool vectors kept in CACHE's store)."""
    from toolfind.core.fusion import DEFAULT_WEIGHT
    from toolfind.store import vectors

    emb = embedder()
    matrix = vectors.semantic_matrix(s.index, emb, str(CACHE))
    weight = DEFAULT_WEIGHT if weight is None else weight
    s.index.use_semantic(vectors.SemanticSignal(emb, matrix, weight))


def measure(
    sets: Sequence[OpenSet],
    *,
    params: ScoringParams | None = None,
    semantic: bool = False,
    weight: float | None = None,
    transform: Callable[[Any], Any] | None = None,
) -> dict[str, dict[str, Metrics]]:
    """Per set, per split (and ``all``): the metrics of its queries."""
    out: dict[str, dict[str, Metrics]] = {}
    for s in sets:
        index = (
            s.index if params is None or params == s.index.params else s.index.with_params(params)
        )
        if semantic:
            if s.index.semantic is None:
                attach_semantic(s)
            if index is not s.index:
                index.use_semantic(s.index.semantic)
            if weight is not None:
                index = index.with_params(index.params)
                index.use_semantic(s.index.semantic.with_weight(weight))
        elif index.semantic is not None:
            index = index.with_params(index.params)
            index.use_semantic(None)
        if transform is not None:
            index = transform(index)
        report = evaluate(index, s.judged, worst=0, depth=10)
        out[s.name] = {"all": report.overall, **report.splits}
    return out


def headline(name: str, metric: str, results: dict[str, dict[str, Metrics]]) -> float:
    """The number a set is judged by: seal-tools dev NDCG@10, the others' MRR@10 (all)."""
    split = "dev" if name == "seal-tools" else "all"
    m = results[name][split]
    return m.ndcg_at_10 if metric == "ndcg@10" else m.mrr_at_10


ROWS = {
    "seal-tools": ("dev", "test_in_domain", "test_out_domain"),
    "metatool": ("all",),
    "mcp-open": ("all", "short", "sentence", "long", "hard"),
    "toolwords": ("all", "catalog", "mcp"),
}


def flat(results: dict[str, dict[str, Metrics]]) -> dict[str, tuple[float, float]]:
    return {
        f"{name} {split}": (
            100 * results[name][split].mrr_at_10,
            100 * results[name][split].ndcg_at_10,
        )
        for name, splits in ROWS.items()
        if name in results
        for split in splits
        if split in results[name]
    }


def report(results: dict[str, dict[str, Metrics]], against: dict[str, Any] | None = None) -> str:
    lines = [f"{'set':<28} {'MRR@10':>7} {'NDCG@10':>8}" + ("   ΔMRR  ΔNDCG" if against else "")]
    for row, (mrr, ndcg) in flat(results).items():
        line = f"{row:<28} {mrr:7.2f} {ndcg:8.2f}"
        if against and row in against:
            a_mrr, a_ndcg = against[row]
            line += f" {mrr - a_mrr:+6.2f} {ndcg - a_ndcg:+6.2f}"
        lines.append(line)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--data", default=os.environ.get("TOOLFIND_BENCH_DATA") or quality.DEFAULT_DATA
    )
    parser.add_argument("--semantic", action="store_true", help="the fused ranking")
    parser.add_argument("--weight", type=float, default=None, help="fusion weight")
    parser.add_argument("--params", default=None, help="scoring settings as JSON")
    parser.add_argument("--full", action="store_true", help="every metatool query")
    parser.add_argument("--save", default=None, help="keep the numbers under this name")
    parser.add_argument("--against", default=None, help="print the change from these numbers")
    args = parser.parse_args(argv)
    data = Path(args.data) if Path(args.data).is_absolute() else (REPO / args.data).resolve()
    params = None if args.params is None else quality.params_from_json(args.params)
    sets = load_sets(data, full_metatool=args.full)
    for s in sets:
        s.build(params)
    t0 = time.perf_counter()
    results = measure(sets, semantic=args.semantic, weight=args.weight)
    log(f"measured in {time.perf_counter() - t0:.1f}s")
    against = None
    if args.against:
        against = json.loads((CACHE / f"{args.against}.json").read_text())
    print(report(results, against))
    if args.save:
        CACHE.mkdir(parents=True, exist_ok=True)
        (CACHE / f"{args.save}.json").write_text(json.dumps(flat(results)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
