"""Calibrate toolfind's confidence (``toolfind.core.confidence``) on the open sets.

Usage (from the repository root; needs the ``bench`` extra, the labelled sets of
``benchmarks/quality.py``, and the ``semantic`` extra for the fused model)::

    .venv/bin/python benchmarks/calibrate.py [--data DIR] [--no-semantic] [--no-rerank] [--check]

For every query of seal-tools ``dev``, metatool (every 4th), mcp-open and toolwords it runs the
first stage as ``SearchIndex.search`` does and takes the features of each of the top 10 hits,
labelled by whether the hit is relevant. Requests that have no answer are added the honest way:
each mcp-open and toolwords query against its catalog *without* the namespaces that answer it
(every hit then is wrong). A logistic regression (each set weighing the same, L2 1e-3) fits the
weights; then the bias is raised until hits at 0.5 or more are right at least ``--precision``
(default 0.82, a margin over the 80% promised) of the time over the sets pooled. It prints the
models to paste into ``toolfind/core/confidence.py`` (``MODELS``) and, per set, the share of
hits at >= 0.5 that are right, the share of answerable requests with such a hit, and the share
of requests without an answer that get one (they should not).

``--check`` fits nothing: it reports the models in ``core/confidence.py`` as they are.

The "rerank" model (when the reranker's model is installed: ``toolfind model fetch``) is
fitted on the ranking the Python API and serve-mcp give by default: the semantic first stage
(the lexical one with ``--no-semantic``) re-scored by the rerank stage at its defaults, each
hit's cosine to the request a feature. It leaves out the ``semantic`` feature, so the one
model serves a reranked lexical search too. The tools' vectors are kept where
``benchmarks/quality.py`` keeps them.
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import open_eval  # noqa: E402
import quality  # noqa: E402

from toolfind.core import confidence  # noqa: E402
from toolfind.eval.queries import JudgedQuery  # noqa: E402
from toolfind.store.index import SearchIndex  # noqa: E402

DEPTH = 10
#: The features each model weighs (``a*b``: the product of two), chosen on these sets: the
#: products let the first hit's lead and coverage count more than a later hit's.
_COMMON = (
    "coverage", "share", "gap", "found", "words", "relcov", "lead", "first", "topgap", "rare",
    "coverage*share", "share*gap", "first*gap", "relcov*first", "relcov*share", "lead*first",
    "rare*first",
)  # fmt: skip
USED = {
    "lexical": _COMMON,
    "semantic": (*_COMMON, "semantic", "semantic*first"),
    "rerank": (*_COMMON, "rerank", "rerank*first"),
}


class Row:
    __slots__ = ("answerable", "features", "label", "query", "rank", "set")

    def __init__(
        self, set_: str, query: str, rank: int, features: dict[str, float], label: bool, ans: bool
    ) -> None:
        self.set, self.query, self.rank, self.features = set_, query, rank, features
        self.label, self.answerable = label, ans


def rows_of(
    name: str, index: SearchIndex, judged: Sequence[JudgedQuery], semantic: bool, answerable: bool
) -> list[Row]:
    """Each query's top ``DEPTH`` hits as ``SearchIndex.search`` ranks them (one hit more
    asked for, as search does: ``SearchIndex.ranking``), with their features, labelled."""
    signal = index.semantic if semantic else None
    out = []
    for q in judged:
        staged = index.ranking(q.query, DEPTH + 1, signal=signal, stage=index.reranker)
        relevant = set(q.relevant_ids)
        ranked = staged.ranked
        feats = confidence.features(
            staged.found, [(e[0], e[1]) for e in ranked], staged.semantic, staged.cosines
        )
        shown = max(0, DEPTH - len(staged.exact))
        pairs = list(zip(ranked, feats, strict=True))[:shown]
        for rank, (entry, row) in enumerate(pairs, len(staged.exact) + 1):
            out.append(Row(name, q.query, rank, row, entry[0] in relevant, answerable))
        if not ranked:  # asked, and nothing to be sure of: it counts among the requests
            out.append(Row(name, q.query, 0, {}, False, answerable))
    return out


def without_answers(s: open_eval.OpenSet, semantic: bool) -> list[Row]:
    """Each query of ``s`` against its tools without the namespaces of its relevant tools."""
    groups: dict[tuple[str, ...], list[JudgedQuery]] = {}
    for q in s.judged:
        spaces = tuple(sorted({s.index.tools[d].namespace for d in q.relevant_ids}))
        groups.setdefault(spaces, []).append(q)
    out: list[Row] = []
    matrix = s.index.semantic.matrix if semantic and s.index.semantic is not None else None
    for spaces, queries in groups.items():
        kept = [i for i, t in enumerate(s.tools) if t.namespace not in spaces]
        sub = SearchIndex.build([s.tools[i] for i in kept])
        if s.index.reranker is not None:
            attach_reranker(sub)
        if matrix is not None:
            from toolfind.store import vectors

            sub.use_semantic(
                vectors.SemanticSignal(
                    s.index.semantic.embedder, matrix[kept], s.index.semantic.weight
                )
            )
        labelled = [q.labelled for q in queries]
        judged = [JudgedQuery(lab, ()) for lab in labelled]
        out += rows_of(f"{s.name} (no answer)", sub, judged, semantic, False)
    return out


def attach_reranker(index: SearchIndex) -> None:
    """The rerank stage at its defaults, its tool vectors kept where quality.py keeps them."""
    from toolfind.store import rerank

    rerank.enable(index, True, root=quality.RERANK_CACHE)


def reranker_installed() -> bool:
    from toolfind.semantic import models
    from toolfind.store import rerank

    return rerank.runnable() and models.status(models.DEFAULT_MODEL).installed


def collect(sets: Sequence[open_eval.OpenSet], semantic: bool) -> list[Row]:
    rows: list[Row] = []
    for s in sets:
        judged = [q for q in s.judged if s.name != "seal-tools" or q.split == "dev"]
        rows += rows_of(s.name, s.index, judged, semantic, True)
        if s.name in ("mcp-open", "toolwords"):
            rows += without_answers(s, semantic)
    return rows


def value(row: dict[str, float], name: str) -> float:
    a, _, b = name.partition("*")
    return row.get(a, 0.0) * row.get(b, 0.0) if b else row.get(a, 0.0)


def matrix(rows: Sequence[Row], used: Sequence[str]) -> Any:
    import numpy as np

    return np.array([[1.0, *(value(r.features, f) for f in used)] for r in rows])


def fit(
    rows: Sequence[Row], used: Sequence[str], l2: float = 1e-3
) -> tuple[float, dict[str, float]]:
    """Weighted logistic regression by Newton's method (IRLS): each set weighs the same."""
    import numpy as np

    rows = [r for r in rows if r.rank > 0]
    x = matrix(rows, used)
    y = np.array([1.0 if r.label else 0.0 for r in rows])
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.set] = counts.get(r.set, 0) + 1
    w = np.array([1.0 / counts[r.set] for r in rows])
    w *= len(rows) / w.sum()
    penalty = l2 * len(rows) * np.diag(np.r_[0.0, np.ones(len(used))])
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (y - p)) - penalty @ beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(hess, grad)
        beta += step
        if np.abs(step).max() < 1e-9:
            break
    return float(beta[0]), {f: float(b) for f, b in zip(used, beta[1:], strict=True)}


class Measured:
    """Per set: its hits' logits under a model, labels, and query ids (numpy arrays)."""

    def __init__(self, rows: Sequence[Row], model: tuple[float, dict[str, float]]) -> None:
        import numpy as np

        used = list(model[1])
        self.z = matrix(rows, used) @ np.r_[model[0], [model[1][f] for f in used]]
        self.y = np.array([r.label for r in rows], dtype=bool)
        self.sets = sorted({r.set for r in rows})
        self.set_of = np.array([self.sets.index(r.set) for r in rows])
        ids: dict[tuple[str, str], int] = {}
        self.query = np.array([ids.setdefault((r.set, r.query), len(ids)) for r in rows])
        self.queries = {name: {ids[k] for k in ids if k[0] == name} for name in self.sets}
        self.hit = np.array([r.rank > 0 for r in rows], dtype=bool)  # rank 0: no hit at all

    def at(self, shift: float = 0.0) -> dict[str, dict[str, float]]:
        """Per set and pooled: hits at >= 0.5, the share right, the share of (answerable)
        requests with one, for a set without answers the share of its requests with one."""
        sure = (self.z + shift >= 0.0) & self.hit
        out: dict[str, dict[str, float]] = {}
        for k, name in enumerate([*self.sets, "pooled"]):
            mask = (self.set_of == k) if name != "pooled" else (self.set_of >= 0)
            hits = sure & mask
            asked = (
                set().union(*(self.queries[n] for n in self.sets if "no answer" not in n))
                if name == "pooled"
                else self.queries[name]
            )
            with_one = set(self.query[hits].tolist()) & asked
            out[name] = {
                "hits>=0.5": float(hits.sum()),
                "right": float(self.y[hits].mean()) if hits.any() else math.nan,
                "share": len(with_one) / len(asked) if asked else math.nan,
            }
        return out


def balanced(m: dict[str, dict[str, float]]) -> tuple[float, float]:
    """(right, answered) with each answerable set weighing the same: the mean over the sets of
    the share of their hits at >= 0.5 that are right, and of their requests with one."""
    sets = [k for k in m if k != "pooled" and "no answer" not in k]
    right = [m[k]["right"] for k in sets if not math.isnan(m[k]["right"])]
    answered = [m[k]["share"] for k in sets]
    return sum(right) / len(right) if right else 0.0, sum(answered) / len(answered)


def shifted(
    rows: Sequence[Row], model: tuple[float, dict[str, float]], precision: float
) -> tuple[float, dict[str, float]]:
    """The model with the bias (moved by 0.05 steps) that answers the most requests (each
    set weighing the same) while the hits at >= 0.5 stay right ``precision`` of the time,
    each set weighing the same, and 80% of the time pooled."""
    measured = Measured(rows, model)
    best: tuple[float, float] | None = None
    for step in range(-160, 161):
        m = measured.at(0.05 * step)
        right, answered = balanced(m)
        if right >= precision and m["pooled"]["right"] >= 0.8:
            if best is None or answered > best[0]:
                best = (answered, 0.05 * step)
    shift = 0.0 if best is None else best[1]
    return model[0] + shift, model[1]


def report(name: str, rows: Sequence[Row], model: tuple[float, dict[str, float]]) -> None:
    m = Measured(rows, model).at()
    right, answered = balanced(m)
    print(
        f"\n{name}: each answerable set weighing the same, hits at >= 0.5 right"
        f" {100 * right:.1f}%, requests with one {100 * answered:.1f}%"
    )
    print("| set | hits >= 0.5 | right | requests with one |")
    print("| --- | --- | --- | --- |")

    def pct(x: float) -> str:
        return "" if math.isnan(x) else f"{100 * x:.1f}%"

    for set_name, row in m.items():
        print(
            f"| {set_name} | {int(row['hits>=0.5'])} | {pct(row['right'])} | {pct(row['share'])} |"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--data", default=os.environ.get("TOOLFIND_BENCH_DATA") or quality.DEFAULT_DATA
    )
    parser.add_argument("--no-semantic", action="store_true")
    parser.add_argument("--no-rerank", action="store_true", help="leave the rerank model out")
    parser.add_argument("--check", action="store_true", help="report the shipped models only")
    parser.add_argument("--precision", type=float, default=0.82)
    parser.add_argument(
        "--rows", default=None, help="keep the collected hits in PATH.<model> and reuse them"
    )
    args = parser.parse_args(argv)
    data = Path(args.data) if Path(args.data).is_absolute() else (REPO / args.data).resolve()
    problem = quality.missing_requirements(data, quality.DATA_SETS, need_bm25s=False)
    if problem:
        print(f"calibrate.py: {problem}", file=sys.stderr)
        return 1
    open_eval.log = lambda message: None
    sets = open_eval.load_sets(data)
    if not args.rows:
        for s in sets:
            s.build()
    kinds = ["lexical"] if args.no_semantic else ["lexical", "semantic"]
    if not args.no_rerank and reranker_installed():
        kinds.append("rerank")
    for kind in kinds:
        semantic = kind != "lexical" and not args.no_semantic
        cached = args.rows and Path(f"{args.rows}.{kind}")
        if not (cached and cached.is_file()):
            for s in sets:
                if s.index is None:
                    s.build()
                if semantic and s.index.semantic is None:
                    open_eval.attach_semantic(s)
                if kind == "rerank":
                    attach_reranker(s.index)
        if cached and cached.is_file():
            rows = pickle.loads(cached.read_bytes())
        else:
            rows = collect(sets, semantic)
            if cached:
                cached.write_bytes(pickle.dumps(rows))
        if args.check:
            if kind in confidence.MODELS:
                report(f"{kind} (shipped)", rows, confidence.MODELS[kind])
            continue
        model = fit(rows, USED[kind])
        report(f"{kind} (fitted)", rows, model)
        model = shifted(rows, model, args.precision)
        report(f"{kind} (shifted to {args.precision:.0%} right at >= 0.5)", rows, model)
        weights = "".join(f'            "{k}": {v:.4f},\n' for k, v in model[1].items())
        print(f'    "{kind}": (\n        {model[0]:.4f},\n        {{\n{weights}        }},\n    ),')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
