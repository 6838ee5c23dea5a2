"""Ranking quality: toolfind (defaults, and tuned on seal-tools dev) beside bm25s, in one run.

Usage (from the repository root; needs the ``bench`` extra: bm25s, numpy)::

    .venv/bin/python benchmarks/quality.py [--data DIR] [--no-tune]

It needs the labelled sets, which are not in the repository: ``DIR/seal-tools``,
``DIR/metatool`` and ``DIR/mcp-open``, each with ``tools.jsonl`` and ``queries.jsonl``. DIR is
``--data``, else ``$TOOLFIND_BENCH_DATA``, else ``../shared/bench/data`` beside the checkout
(the project's shared workspace, where each set's README says where it comes from and how it
was built). Without them it says so in one line and exits 1. docs/development.md says how
long a run takes.

Prints MRR@10, R@1/5/10 and NDCG@10 for seal-tools ``dev``, ``test_in_domain``,
``test_out_domain``, metatool (all 21,041 queries) and mcp-open (284 natural requests against
the pooled tools of 42 real MCP servers, by kind: short, sentence, long, hard), as one markdown
table.

- mcp-open tools are loaded as toolfind loads an MCP capture: namespace = the server, name = the
  tool's own name (``fetch__fetch`` is ``fetch/fetch``), so the namespace field is searched;
  the title and the annotations (``destructiveHint``, ``readOnlyHint``...) as the server sent them.

- bm25s is plain BM25 (its default Lucene variant, k1 = 1.5, b = 0.75) over name +
  description + parameter text (parameter names, descriptions, enum values, nested), with
  bm25s' English stop words and the PyStemmer English stemmer.
- toolfind builds its index from Tools made directly from the JSONL rows (no namespace, so
  every tool is searched on its own text) and ranks with ``SearchIndex.search``, exactly as the
  CLI does (exact-name hits first).
- "toolfind tuned" runs ``toolfind.eval.evaluate.tune`` on seal-tools ``dev`` only and applies the
  chosen settings to every set; test splits and metatool never influence it.
- "toolfind+semantic" (when the ``semantic`` extra is installed; ``--no-semantic`` skips it) is
  the same lexical ranking fused with the semantic signal at the default fusion weight
  (``toolfind.core.fusion.DEFAULT_WEIGHT``); "toolfind+semantic w=X" at the weight that
  maximises the mean of seal-tools ``dev`` NDCG@10, metatool MRR@10 and mcp-open MRR@10 (one
  weight for all: tuned for the kind of query, not the examples). seal-tools test splits never
  influence it.
- "toolfind+rerank" (when the model is installed, ``toolfind model fetch``; ``--no-rerank``
  skips it) re-scores toolfind's lexical top 50 with the all-MiniLM-L6-v2 reranker at the
  default weight (``toolfind.core.fusion.RERANK_WEIGHT``) and depth
  (``toolfind.store.rerank.DEFAULT_DEPTH``); "toolfind+semantic+rerank" re-scores the default
  ranking with the semantic extra (the API's and serve-mcp's default). Their deltas are against
  the first stage they re-score. The weight and depth curves (seal-tools dev NDCG@10, metatool
  MRR@10, mcp-open MRR@10) are printed on stderr (``--no-rerank-tune`` skips them; ``--no-tune``
  does not), and the best mean that loses nothing on seal-tools dev gets its own rows. ``--metatool-sample N`` reranks a fixed sample of N
  metatool queries (every 21041/N-th, in file order) instead of all of them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from toolfind.eval.evaluate import (  # noqa: E402
    METRIC_LABELS,
    METRICS,
    Metrics,
    evaluate,
    query_metrics,
    tune,
)
from toolfind.eval.queries import (  # noqa: E402
    JudgedQuery,
    LabelledQuery,
    load_queries,
    resolve_queries,
)
from toolfind.models import ScoringParams, Tool  # noqa: E402

SEAL_SPLITS = ("dev", "test_in_domain", "test_out_domain")


@dataclass
class DataSet:
    name: str
    rows: list[dict[str, Any]]
    tools: list[Tool]
    queries_path: Path


def load_set(data: Path, name: str) -> DataSet:
    path = data / name / "tools.jsonl"
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    tools = [
        Tool(
            name=r["name"],
            description=r.get("description", ""),
            parameters=r.get("parameters") or {"type": "object", "properties": {}},
            tags=tuple(r.get("tags", ())),
        )
        for r in rows
    ]
    return DataSet(name, rows, tools, data / name / "queries.jsonl")


MCP_KINDS = ("short", "sentence", "long", "hard")


def load_mcp_open(data: Path) -> tuple[DataSet, list[LabelledQuery]]:
    """mcp-open's tools as namespaced Tools, and its queries with ``kind`` as the split."""
    base = data / "mcp-open"
    rows = [
        json.loads(line) for line in (base / "tools.jsonl").open(encoding="utf-8") if line.strip()
    ]
    tools = []
    for r in rows:
        ns = r["namespace"]
        own = r["name"][len(ns) + 2 :] if r["name"].startswith(ns + "__") else r["name"]
        tools.append(
            Tool(
                name=own,
                namespace=ns,
                description=r.get("description", ""),
                parameters=r.get("parameters") or {"type": "object", "properties": {}},
                title=r.get("title"),
                annotations=r.get("annotations") or {},
            )
        )
    qualified = {r["name"]: f"{t.namespace}/{t.name}" for r, t in zip(rows, tools, strict=True)}
    queries = []
    for line in (base / "queries.jsonl").open(encoding="utf-8"):
        if not line.strip():
            continue
        q = json.loads(line)
        queries.append(
            LabelledQuery(
                query=q["query"],
                relevant=tuple(qualified[n] for n in q["relevant"]),
                id=q["id"],
                split=q["kind"],
            )
        )
    return DataSet("mcp-open", rows, tools, base / "queries.jsonl"), queries


TOOLWORDS = REPO / "benchmarks" / "data" / "toolwords.jsonl"
TOOLWORDS_KINDS = ("catalog", "mcp")


def load_toolwords() -> tuple[DataSet, list[LabelledQuery]]:
    """toolwords (in the repository): BFCL-style requests in the tools' own words against the
    shipped catalogs and the MCP captures of tests/fixtures/mcp, loaded as toolfind loads
    them; the queries' ``kind`` (catalog, mcp) is the split. benchmarks/data/README.md."""
    from toolfind import catalog

    tools = list(catalog.load([REPO / "catalogs", REPO / "tests" / "fixtures" / "mcp"]).tools)
    rows = [
        {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
        for t in tools
    ]
    lines = TOOLWORDS.read_text(encoding="utf-8").splitlines()
    queries = [
        LabelledQuery(q["query"], tuple(q["relevant"]), q["id"], q["kind"], entry=i)
        for i, q in enumerate(map(json.loads, filter(None, lines)), 1)
    ]
    return DataSet("toolwords", rows, tools, TOOLWORDS), queries


# --- bm25s baseline ----------------------------------------------------------------------


def param_text(schema: Mapping[str, Any]) -> list[str]:
    """Parameter names, descriptions and enum values, nested properties included."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if not isinstance(node, Mapping):
            return
        for key, prop in (node.get("properties") or {}).items():
            out.append(str(key))
            if isinstance(prop, Mapping):
                if prop.get("description"):
                    out.append(str(prop["description"]))
                out.extend(str(v) for v in prop.get("enum") or ())
                walk(prop)
                walk(prop.get("items"))

    walk(schema)
    return out


class Bm25sRanker:
    """bm25s over name + description + parameter text, English stop words and stemmer."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        import bm25s
        import Stemmer

        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        corpus = [
            " ".join([r["name"], r.get("description", ""), *param_text(r.get("parameters") or {})])
            for r in rows
        ]
        self._retriever = bm25s.BM25()
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=self._stemmer, show_progress=False)
        self._retriever.index(tokens, show_progress=False)
        self._n = len(rows)

    def rank(self, queries: Sequence[str], k: int = 10) -> list[list[int]]:
        tokens = self._bm25s.tokenize(
            list(queries), stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        docs, scores = self._retriever.retrieve(
            tokens, k=min(k, self._n), show_progress=False, n_threads=1
        )
        # Documents with score 0 share no term with the query: not retrieved.
        return [
            [int(d) for d, s in zip(row_d, row_s, strict=True) if s > 0]
            for row_d, row_s in zip(docs, scores, strict=True)
        ]


def bm25s_metrics(ranker: Bm25sRanker, judged: Sequence[JudgedQuery]) -> dict[str, Metrics]:
    ranked = ranker.rank([q.query for q in judged])
    rows = [query_metrics(r, set(q.relevant_ids)) for r, q in zip(ranked, judged, strict=True)]
    by_split: dict[str, list[tuple[float, ...]]] = {}
    for q, row in zip(judged, rows, strict=True):
        by_split.setdefault(q.split, []).append(row)
    out = {split: Metrics.mean(r) for split, r in by_split.items()}
    out["all"] = Metrics.mean(rows)
    return out


# --- toolfind ------------------------------------------------------------------------------


def build_index(tools: Sequence[Tool], params: ScoringParams | None = None) -> Any:
    from toolfind.store.index import SearchIndex

    return SearchIndex.build(tools, params or ScoringParams())


def toolfind_metrics(index: Any, judged: Sequence[JudgedQuery]) -> dict[str, Metrics]:
    report = evaluate(index, judged, worst=0, depth=10)
    return {**report.splits, "all": report.overall}


def judged_queries(index: Any, path: Path) -> list[JudgedQuery]:
    return resolve_queries(index, load_queries(path))


# --- output --------------------------------------------------------------------------------


def pct(x: float) -> str:
    return f"{100 * x:.2f}"


def table(rows: Iterable[tuple[str, str, Metrics, Metrics | None]]) -> str:
    head = ["set", "queries", "ranker", *(METRIC_LABELS[m] for m in METRICS), "ΔNDCG", "ΔMRR"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for set_name, ranker, m, base in rows:
        delta_n = f"{100 * (m.ndcg_at_10 - base.ndcg_at_10):+.2f}" if base else ""
        delta_m = f"{100 * (m.mrr_at_10 - base.mrr_at_10):+.2f}" if base else ""
        cells = [set_name, str(m.count), ranker, *(pct(v) for v in m.values()), delta_n, delta_m]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def describe(params: ScoringParams) -> str:
    w = ", ".join(f"{k}={v:g}" for k, v in params.weights.as_dict().items())
    from toolfind.models import FIELDS

    b = ", ".join(f"{f}={params.b_for(f):g}" for f in FIELDS)
    return f"weights({w}) k1={params.k1:g} b({b}) delta={params.delta:g}"


def run(args: argparse.Namespace, progress: Callable[[str], None]) -> str:
    data = Path(args.data)
    if not data.is_absolute():
        data = (REPO / data).resolve()
    seal = load_set(data, "seal-tools")
    meta = load_set(data, "metatool")
    base = ScoringParams() if args.params is None else params_from_json(args.params)

    t0 = time.perf_counter()
    seal_index = build_index(seal.tools, base)
    meta_index = build_index(meta.tools, base)
    mcp, mcp_labelled = load_mcp_open(data)
    mcp_index = build_index(mcp.tools, base)
    words, words_labelled = load_toolwords()
    words_index = build_index(words.tools, base)
    progress(f"built indexes in {time.perf_counter() - t0:.1f}s")
    seal_q = judged_queries(seal_index, seal.queries_path)
    meta_q = judged_queries(meta_index, meta.queries_path)
    mcp_q = resolve_queries(mcp_index, mcp_labelled)
    words_q = resolve_queries(words_index, words_labelled)

    t0 = time.perf_counter()
    seal_bm = bm25s_metrics(Bm25sRanker(seal.rows), seal_q)
    meta_bm = bm25s_metrics(Bm25sRanker(meta.rows), meta_q)
    mcp_bm = bm25s_metrics(Bm25sRanker(mcp.rows), mcp_q)
    words_bm = bm25s_metrics(Bm25sRanker(words.rows), words_q)
    progress(f"bm25s in {time.perf_counter() - t0:.1f}s")

    t0 = time.perf_counter()
    seal_tf = toolfind_metrics(seal_index, seal_q)
    meta_tf = toolfind_metrics(meta_index, meta_q)
    mcp_tf = toolfind_metrics(mcp_index, mcp_q)
    words_tf = toolfind_metrics(words_index, words_q)
    progress(f"toolfind in {time.perf_counter() - t0:.1f}s")

    tuned_params: ScoringParams | None = None
    seal_tuned = meta_tuned = mcp_tuned = words_tuned = None
    if not args.no_tune and not args.no_lexical_tune:
        t0 = time.perf_counter()
        last = [0.0]

        def tick(done: int, total: int) -> None:
            now = time.perf_counter()
            if now - last[0] > 10:
                last[0] = now
                progress(f"  tune {done}/{total}")

        report = tune(
            seal_index,
            [q for q in seal_q if q.split == "dev"],
            metric=args.metric,
            train_split="dev",
            rounds=args.rounds,
            progress=tick,
        )
        tuned_params = report.params
        progress(f"tuned on dev in {time.perf_counter() - t0:.1f}s, {report.trials} trials")
        seal_tuned = toolfind_metrics(seal_index.with_params(tuned_params), seal_q)
        meta_tuned = toolfind_metrics(meta_index.with_params(tuned_params), meta_q)
        mcp_tuned = toolfind_metrics(mcp_index.with_params(tuned_params), mcp_q)
        words_tuned = toolfind_metrics(words_index.with_params(tuned_params), words_q)

    rows: list[tuple[str, str, Metrics, Metrics | None]] = []
    for split in SEAL_SPLITS:
        rows.append((f"seal-tools {split}", "bm25s", seal_bm[split], None))
        rows.append((f"seal-tools {split}", "toolfind", seal_tf[split], seal_bm[split]))
        if seal_tuned:
            rows.append(
                (f"seal-tools {split}", "toolfind tuned", seal_tuned[split], seal_bm[split])
            )
    rows.append(("metatool (all)", "bm25s", meta_bm["all"], None))
    rows.append(("metatool (all)", "toolfind", meta_tf["all"], meta_bm["all"]))
    if meta_tuned:
        rows.append(("metatool (all)", "toolfind tuned", meta_tuned["all"], meta_bm["all"]))
    for kind in ("all", *MCP_KINDS):
        label = f"mcp-open {kind}"
        rows.append((label, "bm25s", mcp_bm[kind], None))
        rows.append((label, "toolfind", mcp_tf[kind], mcp_bm[kind]))
        if mcp_tuned:
            rows.append((label, "toolfind tuned", mcp_tuned[kind], mcp_bm[kind]))
    for kind in ("all", *TOOLWORDS_KINDS):
        label = f"toolwords {kind}"
        rows.append((label, "bm25s", words_bm[kind], None))
        rows.append((label, "toolfind", words_tf[kind], words_bm[kind]))
        if words_tuned:
            rows.append((label, "toolfind tuned", words_tuned[kind], words_bm[kind]))

    if not args.no_semantic:
        rows += semantic_rows(
            args,
            progress,
            (seal_index, seal_q, seal_tf),
            (meta_index, meta_q, meta_tf),
            (mcp_index, mcp_q, mcp_tf),
            (words_index, words_q, words_tf),
        )
    if not args.no_rerank:
        rows += rerank_rows(
            args,
            progress,
            (seal_index, seal_q, seal_tf),
            (meta_index, meta_q, meta_tf),
            (mcp_index, mcp_q, mcp_tf),
        )
    rows.sort(key=lambda r: ROW_ORDER.get(r[0], 99))
    out = [table(rows), "", f"toolfind: {describe(base)}"]
    if tuned_params is not None:
        out.append(f"toolfind tuned on seal-tools dev: {describe(tuned_params)}")
        out.append(f"tuned as JSON: {params_to_json(tuned_params)}")
    return "\n".join(out)


ROW_ORDER = {
    **{f"seal-tools {split}": i for i, split in enumerate(SEAL_SPLITS)},
    "metatool (all)": 10,
    **{f"mcp-open {kind}": 20 + i for i, kind in enumerate(("all", *MCP_KINDS))},
    **{f"toolwords {kind}": 30 + i for i, kind in enumerate(("all", *TOOLWORDS_KINDS))},
}


def semantic_rows(
    args: argparse.Namespace,
    progress: Callable[[str], None],
    seal: tuple[Any, list[JudgedQuery], dict[str, Metrics]],
    meta: tuple[Any, list[JudgedQuery], dict[str, Metrics]],
    mcp: tuple[Any, list[JudgedQuery], dict[str, Metrics]],
    words: tuple[Any, list[JudgedQuery], dict[str, Metrics]],
) -> list[tuple[str, str, Metrics, Metrics | None]]:
    """Rows for toolfind fused with the semantic signal: the default weight, and the weight
    tuned on seal-tools dev + metatool + mcp-open + toolwords (mean of their headline
    metrics). Their deltas are against toolfind's lexical ranking (the third item of each
    set), not bm25s."""
    from toolfind import semantic
    from toolfind.core.fusion import DEFAULT_WEIGHT
    from toolfind.eval.evaluate import best_fusion_weight, fusion_curve, with_fusion_weight
    from toolfind.store import vectors

    if not semantic.available():
        progress("semantic extra not installed: no semantic rows")
        return []
    embedder = semantic.load()
    t0 = time.perf_counter()
    for index, _, _ in (seal, meta, mcp, words):
        matrix = vectors.semantic_matrix(index, embedder, str(SEMANTIC_CACHE))
        index.use_semantic(vectors.SemanticSignal(embedder, matrix, DEFAULT_WEIGHT))
    progress(f"tool vectors in {time.perf_counter() - t0:.1f}s ({semantic.model_id()})")
    weights: list[tuple[str, float]] = [("toolfind+semantic", DEFAULT_WEIGHT)]
    if not args.no_tune:
        t0 = time.perf_counter()
        curves = [
            fusion_curve(seal[0], [q for q in seal[1] if q.split == "dev"], metric="ndcg@10"),
            fusion_curve(meta[0], meta[1], metric="mrr@10"),
            fusion_curve(mcp[0], mcp[1], metric="mrr@10"),
            fusion_curve(words[0], words[1], metric="mrr@10"),
        ]
        best = best_fusion_weight(curves, guard=curves[0])
        progress(f"fusion weight tuned in {time.perf_counter() - t0:.1f}s: {best:g}")
        for (w, a), (_, b), (_, c), (_, d) in zip(*curves, strict=True):
            progress(
                f"  w={w:<5g} seal dev NDCG {pct(a)}  metatool MRR {pct(b)}  mcp-open MRR"
                f" {pct(c)}  toolwords MRR {pct(d)}"
            )
        if best != DEFAULT_WEIGHT:
            weights.append((f"toolfind+semantic w={best:g}", best))
    rows: list[tuple[str, str, Metrics, Metrics | None]] = []
    for label, weight in weights:
        seal_m = toolfind_metrics(with_fusion_weight(seal[0], weight), seal[1])
        meta_m = toolfind_metrics(with_fusion_weight(meta[0], weight), meta[1])
        mcp_m = toolfind_metrics(with_fusion_weight(mcp[0], weight), mcp[1])
        words_m = toolfind_metrics(with_fusion_weight(words[0], weight), words[1])
        for split in SEAL_SPLITS:
            rows.append((f"seal-tools {split}", label, seal_m[split], seal[2][split]))
        rows.append(("metatool (all)", label, meta_m["all"], meta[2]["all"]))
        for kind in ("all", *MCP_KINDS):
            rows.append((f"mcp-open {kind}", label, mcp_m[kind], mcp[2][kind]))
        for kind in ("all", *TOOLWORDS_KINDS):
            rows.append((f"toolwords {kind}", label, words_m[kind], words[2][kind]))
    return rows


#: Where the rerank rows keep the tools' vectors between runs (``benchmarks/_work`` is not
#: committed).
RERANK_CACHE = REPO / "benchmarks" / "_work" / "rerank-vectors"
SEMANTIC_CACHE = REPO / "benchmarks" / "_work" / "semantic-vectors"


def rerank_rows(
    args: argparse.Namespace,
    progress: Callable[[str], None],
    seal: tuple[Any, list[JudgedQuery], dict[str, Metrics]],
    meta: tuple[Any, list[JudgedQuery], dict[str, Metrics]],
    mcp: tuple[Any, list[JudgedQuery], dict[str, Metrics]],
) -> list[tuple[str, str, Metrics, Metrics | None]]:
    """Rows for the rerank stage over the lexical ranking and over the default ranking with
    the semantic extra (when ``semantic_rows`` attached it), at the default weight and depth
    and at the best ones (see the module docstring)."""
    from toolfind.core.fusion import RERANK_WEIGHT
    from toolfind.eval import reranking
    from toolfind.semantic import models
    from toolfind.store import rerank

    if not rerank.runnable() or not models.status(models.DEFAULT_MODEL).installed:
        progress("reranker model not installed (toolfind model fetch): no rerank rows")
        return []
    depth = max(reranking.DEPTHS)
    if args.metatool_sample:
        step = max(1, len(meta[1]) // args.metatool_sample)
        meta = (meta[0], meta[1][::step][: args.metatool_sample], meta[2])
        progress(f"metatool: reranking {len(meta[1])} of its queries (every {step}th)")
    rows: list[tuple[str, str, Metrics, Metrics | None]] = []
    firsts = [("toolfind+rerank", False)]
    if seal[0].semantic is not None:
        firsts.append(("toolfind+semantic+rerank", True))
    vectors: dict[int, dict[str, Any]] = {}
    for label, semantic_on in firsts:
        found = []
        for n, (index, queries, _) in enumerate((seal, meta, mcp)):
            stage_index = index.with_params(index.params)
            stage_index.use_semantic(index.semantic if semantic_on else None)
            # Tool vectors are kept between runs (keyed by model and text, as in the product).
            rerank.enable(stage_index, True, root=RERANK_CACHE)
            t0 = time.perf_counter()
            if n not in vectors:
                vectors[n] = stage_index.reranker.embed_queries([q.query for q in queries])
            cands = reranking.candidates(stage_index, queries, depth, vectors[n])
            progress(
                f"{label}: candidates of {len(queries)} queries in {time.perf_counter() - t0:.1f}s"
            )
            found.append((stage_index, queries, cands))
        first = {  # the first stage's metrics, from the same candidates (weight 0)
            n: _split_metrics(cands, 0.0, depth) for n, (_, _, cands) in enumerate(found)
        }
        settings = [(label, RERANK_WEIGHT, rerank.DEFAULT_DEPTH)]
        if not args.no_rerank_tune:
            curves = [
                reranking.grid(
                    [c for c in found[0][2] if c.query.split == "dev"], metric="ndcg@10"
                ),
                reranking.grid(found[1][2], metric="mrr@10"),
                reranking.grid(found[2][2], metric="mrr@10"),
            ]
            base = {(w, d): v for w, d, v in curves[0]}[(0.0, min(reranking.DEPTHS))]
            allowed = [
                (w, d, a + b + c)
                for (w, d, a), (_, _, b), (_, _, c) in zip(*curves, strict=True)
                if a >= base - 1e-12
            ]
            best_w, best_d = reranking.best(allowed)
            for (w, d, a), (_, _, b), (_, _, c) in zip(*curves, strict=True):
                progress(
                    f"  {label} w={w:<4g} depth={d:<4d} seal dev NDCG {pct(a)}"
                    f"  metatool MRR {pct(b)}  mcp-open MRR {pct(c)}"
                )
            progress(f"{label}: best weight {best_w:g}, depth {best_d}")
            if (best_w, best_d) != (RERANK_WEIGHT, rerank.DEFAULT_DEPTH):
                settings.append((f"{label} w={best_w:g} d={best_d}", best_w, best_d))
        for row_label, weight, d in settings:
            seal_m, meta_m, mcp_m = (_split_metrics(cands, weight, d) for _, _, cands in found)
            for split in SEAL_SPLITS:
                rows.append((f"seal-tools {split}", row_label, seal_m[split], first[0][split]))
            rows.append(("metatool (all)", row_label, meta_m["all"], first[1]["all"]))
            for kind in ("all", *MCP_KINDS):
                rows.append((f"mcp-open {kind}", row_label, mcp_m[kind], first[2][kind]))
    return rows


def _split_metrics(found: Sequence[Any], weight: float, depth: int) -> dict[str, Metrics]:
    from toolfind.eval import reranking

    by_split: dict[str, list[Any]] = {}
    for c in found:
        by_split.setdefault(c.query.split, []).append(c)
    out = {split: reranking.metrics(cs, weight, depth) for split, cs in by_split.items()}
    out["all"] = reranking.metrics(found, weight, depth)
    return out


# --- analysis experiments (monkeypatched; seal-tools dev only) --------------------------------


def _variants() -> dict[str, Callable[[], None]]:
    """Ways to change toolfind's analysis, each a function that patches ``toolfind.core.analysis``."""
    import Stemmer

    from toolfind.core import analysis

    original_span = analysis._analyze_span

    def stemmer(name: str | None) -> Callable[[], None]:
        def patch() -> None:
            if name is None:
                analysis._stem = lambda word: word  # type: ignore[assignment]
            else:
                s = Stemmer.Stemmer(name)
                analysis._stem = s.stemWord  # type: ignore[assignment]
            analysis._STOP_TERMS = frozenset(analysis._stem(w) for w in analysis.STOP_WORDS)

        return patch

    def stop_words(words: Iterable[str]) -> Callable[[], None]:
        def patch() -> None:
            analysis._STOP_TERMS = frozenset(analysis._stem(w) for w in words)

        return patch

    def keep_terms(text: str, wanted: Callable[[str, bool], bool]) -> Any:
        """``_analyze_span``'s four tuples (terms, content terms, and the surface form of
        each) with only the terms ``wanted(term, is_content)`` keeps."""
        every, content, every_forms, content_forms = original_span(text)
        kept = [(t, f) for t, f in zip(every, every_forms, strict=True) if wanted(t, False)]
        kept_content = [
            (t, f) for t, f in zip(content, content_forms, strict=True) if wanted(t, True)
        ]
        return (
            tuple(t for t, _ in kept),
            tuple(t for t, _ in kept_content),
            tuple(f for _, f in kept),
            tuple(f for _, f in kept_content),
        )

    def no_compound() -> None:
        def span(text: str) -> Any:
            return keep_terms(text, lambda term, _: "_" not in term)

        analysis._analyze_span = span  # type: ignore[assignment]

    def min_len(n: int) -> Callable[[], None]:
        def patch() -> None:
            def span(text: str) -> Any:
                return keep_terms(
                    text, lambda term, content: not content or len(term) >= n or not term.isascii()
                )

            analysis._analyze_span = span  # type: ignore[assignment]

        return patch

    def single_pass() -> None:
        s = Stemmer.Stemmer("english")
        analysis._stem = s.stemWord  # type: ignore[assignment]
        analysis._STOP_TERMS = frozenset(analysis._stem(w) for w in analysis.STOP_WORDS)

    def s_stemmer() -> None:
        # Harman's S-stemmer (JASIS 1991): plurals only.
        def stem(w: str) -> str:
            if len(w) > 3 and w.endswith("ies") and not w.endswith(("eies", "aies")):
                return w[:-3] + "y"
            if len(w) > 3 and w.endswith("es") and not w.endswith(("aes", "ees", "oes")):
                return w[:-1]
            if len(w) > 2 and w.endswith("s") and not w.endswith(("us", "ss")):
                return w[:-1]
            return w

        analysis._stem = stem  # type: ignore[assignment]
        analysis._STOP_TERMS = frozenset(analysis._stem(w) for w in analysis.STOP_WORDS)

    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

    return {
        "as shipped": lambda: None,
        "no stemming": stemmer(None),
        "porter stemmer": stemmer("porter"),
        "snowball, one pass (no fixpoint)": single_pass,
        "S-stemmer (plurals only)": s_stemmer,
        "no stop words": stop_words(()),
        "lucene 33 stop words": stop_words(STOPWORDS_EN),
        "bm25s en_plus stop words": stop_words(STOPWORDS_EN_PLUS),
        "no whole-identifier term": no_compound,
        "drop 1-letter prose/query terms": min_len(2),
    }


def analysis_experiments(data: Path, params: ScoringParams, progress: Callable[[str], None]) -> str:
    """Each analysis variant with ``params``, measured on seal-tools dev only."""
    from toolfind.core import analysis

    saved = {k: getattr(analysis, k) for k in ("_stem", "_STOP_TERMS", "_analyze_span")}
    seal = load_set(data, "seal-tools")
    rows = []
    for name, patch in _variants().items():
        for k, v in saved.items():
            setattr(analysis, k, v)
        for memo in (analysis._every_memo, analysis._content_memo, analysis._stem_memo):
            memo.clear()
        patch()
        index = build_index(seal.tools, params)
        dev = [q for q in judged_queries(index, seal.queries_path) if q.split == "dev"]
        rows.append((name, toolfind_metrics(index, dev)["all"]))
        progress(f"  {name}: NDCG@10 {pct(rows[-1][1].ndcg_at_10)}")
    for k, v in saved.items():
        setattr(analysis, k, v)
    analysis._every_memo.clear()
    analysis._content_memo.clear()
    analysis._stem_memo.clear()
    base = rows[0][1]
    lines = [
        "| analysis (seal-tools dev) | "
        + " | ".join(METRIC_LABELS[m] for m in METRICS)
        + " | ΔNDCG |",
        "|---|" + "---|" * (len(METRICS) + 1),
    ]
    for name, m in rows:
        cells = [pct(v) for v in m.values()]
        lines.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {100 * (m.ndcg_at_10 - base.ndcg_at_10):+.2f} |"
        )
    return "\n".join(lines)


def params_to_json(params: ScoringParams) -> str:
    from toolfind.models import FIELDS

    return json.dumps(
        {
            "weights": params.weights.as_dict(),
            "k1": params.k1,
            "b": {f: params.b_for(f) for f in FIELDS},
            "delta": params.delta,
        }
    )


def params_from_json(text: str) -> ScoringParams:
    from toolfind.models import FieldWeights

    doc = json.loads(text)
    b = doc.get("b", {})
    if isinstance(b, Mapping):
        default_b = ScoringParams().default_b
        b_pairs = tuple((k, float(v)) for k, v in b.items())
    else:
        default_b, b_pairs = float(b), ()
    return ScoringParams(
        weights=FieldWeights().with_overrides(doc.get("weights", {})),
        k1=float(doc.get("k1", ScoringParams().k1)),
        default_b=default_b,
        b=b_pairs,
        delta=float(doc.get("delta", ScoringParams().delta)),
    )


DEFAULT_DATA = "../shared/bench/data"
DATA_SETS = ("seal-tools", "metatool", "mcp-open")


def missing_requirements(data: Path, sets: Sequence[str], *, need_bm25s: bool) -> str | None:
    """What this run lacks, as one line saying how to get it, or None when nothing is missing.

    Checked before any work, so a fresh clone gets this line instead of a traceback minutes in.
    """
    missing = [
        f"{name}/{file}"
        for name in sets
        for file in ("tools.jsonl", "queries.jsonl")
        if not (data / name / file).is_file()
    ]
    if missing:
        listed = ", ".join(missing[:2]) + (
            f" and {len(missing) - 2} more" if len(missing) > 2 else ""
        )
        return (
            f"no bench data in {data} (missing {listed}): it needs the labelled sets"
            f" {', '.join(sets)} (tools.jsonl and queries.jsonl each), which are not in the"
            " repository; pass --data DIR or set TOOLFIND_BENCH_DATA=DIR to the directory holding"
            f" them (by default {DEFAULT_DATA}, the project's shared workspace beside the"
            " checkout; see docs/development.md)"
        )
    if need_bm25s and importlib.util.find_spec("bm25s") is None:
        return 'bm25s is not installed: pip install -e ".[bench]"'
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--data",
        default=os.environ.get("TOOLFIND_BENCH_DATA") or DEFAULT_DATA,
        help="directory holding seal-tools/, metatool/ and mcp-open/ (relative to the repo root;"
        f" default: $TOOLFIND_BENCH_DATA, else {DEFAULT_DATA})",
    )
    parser.add_argument("--no-tune", action="store_true", help="skip tuning on seal-tools dev")
    parser.add_argument(
        "--no-lexical-tune",
        action="store_true",
        help="skip the lexical tuning on seal-tools dev (the fusion weight is still tuned)",
    )
    parser.add_argument(
        "--no-semantic", action="store_true", help="skip the rows fused with the semantic signal"
    )
    parser.add_argument(
        "--no-rerank", action="store_true", help="skip the rows of the rerank stage"
    )
    parser.add_argument(
        "--no-rerank-tune",
        action="store_true",
        help="skip the rerank stage's weight and depth curves (its default rows stay)",
    )
    parser.add_argument(
        "--metatool-sample",
        type=int,
        default=0,
        help="rerank only this many metatool queries (a fixed, evenly spaced sample)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="coordinate-ascent rounds")
    parser.add_argument("--metric", default="ndcg@10", help="metric tune maximises")
    parser.add_argument(
        "--params",
        default=None,
        help='settings for "toolfind" as JSON: {"weights": {...}, "k1": .., "b": {...} or .., "delta": ..}',
    )
    parser.add_argument(
        "--analysis-experiments",
        action="store_true",
        help="instead: compare analysis variants (monkeypatched) on seal-tools dev",
    )
    args = parser.parse_args(argv)
    data = Path(args.data) if Path(args.data).is_absolute() else (REPO / args.data).resolve()
    sets = ("seal-tools",) if args.analysis_experiments else DATA_SETS
    problem = missing_requirements(data, sets, need_bm25s=not args.analysis_experiments)
    if problem:
        print(f"quality.py: {problem}", file=sys.stderr)
        return 1
    args.data = str(data)
    progress = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if args.analysis_experiments:
        params = ScoringParams() if args.params is None else params_from_json(args.params)
        print(analysis_experiments(data, params, progress))
        return 0
    print(run(args, progress))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
