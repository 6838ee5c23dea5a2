"""Speed of the semantic signal: the hybrid query, the cost of turning it on, the vectors' build.

Uses benchmarks/perf.py's synthetic catalog (fixed seed) of --size tools (default 10k) and
reports, from a fresh cache:

* in-process median latency of ``SearchIndex.search`` over that catalog: lexical (numpy on,
  as the API and serve-mcp run it) and hybrid (fused with the semantic signal), over perf.py's
  queries and a few natural requests;
* the cost of the first ``open_index(semantic=True)`` (the tool vectors are computed and
  stored) and of a later one (read back), against ``open_index(semantic=False)``, each in a fresh
  interpreter: what serve-mcp's start pays for the extra;
* warm ``toolfind search QUERY --json`` (the lexical fast path) against
  ``toolfind search QUERY --semantic --json`` (Typer, numpy and the model), and P
  (``python -c pass``).

With the reranker's model installed (``toolfind model fetch``; ``$TOOLFIND_MODEL_DIR`` as
set), also:

* in-process median of a reranked query (lexical and hybrid first stage), the candidates'
  vectors stored (one untimed pass over the queries first);
* the first reranked query on a fresh catalog (no stored vector), in a fresh interpreter:
  the model's load, the query's and 50 candidates' vectors;
* serve-mcp's start (spawn to the first ``tools/list`` answer, benchmarks/serve_start.py)
  with the model installed against without it: the stage is attached but its model loads on
  the first query, and the tools are embedded by a worker after start;
* whole-catalog vectors (every tool's vector stored: random unit vectors under the tools'
  text keys, as the values do not change the cost): a reranked query of the --size catalog
  plus the 30 nearest tools to its vector (``ToolVectors.nearest``), in process; and the
  nearest-tools lookup alone over --nearest tools (default 100k), with the first load of the
  whole catalog's matrix from the store.

``--only-vectors`` runs the whole-catalog rows alone.

Usage: python benchmarks/semantic_perf.py [--size 10000] [--runs 7] [--nearest 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from perf import QUERIES, timed, write_catalog  # noqa: E402
from serve_start import first_list  # noqa: E402

NATURAL = [
    "remember that my sister lives in Rome",
    "is it going to rain in Oslo",
    "post this to slack",
    "download a web page",
    "commit my changes",
]


def fresh(code: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--nearest", type=int, default=100_000)
    parser.add_argument("--only-vectors", action="store_true")
    args = parser.parse_args()
    repo = Path(__file__).resolve().parent.parent
    if args.only_vectors:
        _table(_catalog_vectors(args.size, args.nearest, args.runs))
        return
    with tempfile.TemporaryDirectory() as tmp:
        catalog = write_catalog(Path(tmp), args.size)
        env = {
            **os.environ,
            "TOOLFIND_CACHE_DIR": str(Path(tmp) / "cache"),
            "PYTHONPATH": str(repo),
            "HF_HUB_OFFLINE": "1",
        }
        opening = """
import json, time
t = time.perf_counter()
import toolfind
index = toolfind.open_index([{cat!r}], semantic={sem})
print(json.dumps({{"open": time.perf_counter() - t}}))
"""
        lexical_open = [
            fresh(opening.format(cat=str(catalog), sem=False), env)["open"] for _ in range(3)
        ]
        first = fresh(opening.format(cat=str(catalog), sem=True), env)["open"]
        later = [fresh(opening.format(cat=str(catalog), sem=True), env)["open"] for _ in range(3)]
        queries = QUERIES + NATURAL
        latency = f"""
import json, statistics, time
import toolfind
index = toolfind.open_index([{str(catalog)!r}], semantic=True, rerank=False)
def median(semantic):
    samples = []
    for _ in range({args.runs}):
        for q in {queries!r}:
            t = time.perf_counter(); index.search(q, semantic=semantic)
            samples.append(time.perf_counter() - t)
    return statistics.median(samples)
median(True)
print(json.dumps({{"lexical": median(False), "hybrid": median(True)}}))
"""
        lat = fresh(latency, env)
        rerank_rows = _rerank_measures(catalog, env, queries, args.runs)
        exe = [sys.executable, "-m", "toolfind"]
        search = [*exe, "search", "compress file", "-c", str(catalog), "--json"]
        subprocess.run(search, env=env, capture_output=True, check=True)  # fill the cache
        subprocess.run([*search, "--semantic"], env=env, capture_output=True, check=True)
        p = timed([sys.executable, "-c", "pass"], env, args.runs)
        warm_lex = timed(search, env, args.runs)
        warm_sem = timed([*search, "--semantic"], env, args.runs)
    ms = 1000
    lex_open = statistics.median(lexical_open)
    rows = [
        (f"SearchIndex.search {args.size:,}, lexical (numpy)", f"{lat['lexical'] * ms:.2f} ms", ""),
        (f"SearchIndex.search {args.size:,}, hybrid", f"{lat['hybrid'] * ms:.2f} ms", "<= 3 ms"),
        ("open_index(semantic=False), warm cache", f"{lex_open * ms:.0f} ms", ""),
        (
            "open_index(semantic=True), first (vectors computed)",
            f"{first * ms:.0f} ms (+{(first - lex_open) * ms:.0f})",
            "",
        ),
        (
            "open_index(semantic=True), later (vectors read)",
            f"{statistics.median(later) * ms:.0f} ms (+{(statistics.median(later) - lex_open) * ms:.0f})",
            "<= +1 s",
        ),
        ("P: python -c pass", f"{p * ms:.0f} ms", ""),
        (
            "warm search --json (lexical fast path)",
            f"{warm_lex * ms:.0f} ms ({warm_lex / p:.1f} P)",
            "",
        ),
        ("warm search --semantic --json", f"{warm_sem * ms:.0f} ms ({warm_sem / p:.1f} P)", ""),
    ]
    rows += rerank_rows
    rows += _catalog_vectors(args.size, args.nearest, args.runs)
    _table(rows)


def _table(rows: list[tuple[str, str, str]]) -> None:
    print("| measure | median | target |\n|---|---|---|")
    for name, value, target in rows:
        print(f"| {name} | {value} | {target} |")


class _Catalog:
    """What ``ToolVectors`` reads of an index, for ``n`` synthetic tools (all enabled)."""

    def __init__(self, n: int) -> None:
        self.tools = range(n)
        self.keys = [i.to_bytes(16, "big") for i in range(n)]

    def enabled(self, doc: int) -> bool:
        return True

    def text_key(self, doc: int) -> bytes:
        return self.keys[doc]

    def tie_key(self, doc: int) -> int:
        return doc


def _fill(store: object, keys: list[bytes], seed: int) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    for start in range(0, len(keys), 50_000):
        part = keys[start : start + 50_000]
        m = rng.standard_normal((len(part), 384)).astype(np.float32)
        store.add(part, m / np.linalg.norm(m, axis=1, keepdims=True))  # type: ignore[attr-defined]


def _catalog_vectors(size: int, nearest: int, runs: int) -> list[tuple[str, str, str]]:
    """The whole-catalog rows (see the module docstring), or none without the model."""
    from toolfind.semantic import models

    if not models.status(models.DEFAULT_MODEL).installed:
        return []
    import numpy as np

    from toolfind.store.vectors import ToolVectors, VectorStore

    ms = 1000
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        catalog = write_catalog(Path(tmp), size)
        os.environ["TOOLFIND_CACHE_DIR"] = str(Path(tmp) / "cache")
        import toolfind

        index = toolfind.open_index([catalog], semantic=False, rerank=True)
        stage = index.reranker
        assert stage is not None
        keys = [index.text_key(d) for d in range(len(index.tools))]
        _fill(stage.vectors.store, keys, 1)
        queries = QUERIES + NATURAL
        for q in queries:  # the model's load, the matrix's first load
            stage.vectors.nearest(stage.embed_query(q), 30)
            index.search(q)
        # The query's vector is computed once by the search; the lookup reuses it.
        vectors = {q: stage.embed_query(q) for q in queries}
        samples = []
        for _ in range(runs):
            for q in queries:
                t = time.perf_counter()
                index.search(q)
                stage.vectors.nearest(vectors[q], 30)
                samples.append(time.perf_counter() - t)
        rows.append(
            (
                f"reranked query + 30 nearest of {size:,} tools, every vector stored",
                f"{statistics.median(samples) * ms:.1f} ms",
                "<= 25 ms",
            )
        )
        store = VectorStore(str(Path(tmp) / "big"), "bench@1", 384)
        view = ToolVectors(_Catalog(nearest), store, lambda texts: None)
        _fill(store, view.index.keys, 2)  # type: ignore[attr-defined]
        t = time.perf_counter()
        view.stored()
        loaded = time.perf_counter() - t
        rng = np.random.default_rng(3)
        lookups = []
        for _ in range(runs * 10):
            v = rng.standard_normal(384).astype(np.float32)
            v /= np.linalg.norm(v)
            t = time.perf_counter()
            view.nearest(v, 30)
            lookups.append(time.perf_counter() - t)
        rows.append(
            (
                f"ToolVectors.nearest, 30 of {nearest:,} tools",
                f"{statistics.median(lookups) * ms:.1f} ms",
                "<= 15 ms",
            )
        )
        rows.append(
            (f"whole-catalog matrix of {nearest:,} tools, first load", f"{loaded * ms:.0f} ms", "")
        )
    return rows


def _rerank_measures(
    catalog: Path, env: dict[str, str], queries: list[str], runs: int
) -> list[tuple[str, str, str]]:
    """The reranker's rows (see the module docstring), or none without its model."""
    from toolfind.semantic import models

    if not models.status(models.DEFAULT_MODEL).installed:
        print(
            "semantic_perf.py: no reranker model (toolfind model fetch): no rerank rows",
            file=sys.stderr,
        )
        return []
    ms = 1000
    latency = f"""
import json, statistics, time
import toolfind
index = toolfind.open_index([{str(catalog)!r}], semantic=True, rerank=True)
def median(semantic):
    for q in {queries!r}:
        index.search(q, semantic=semantic)  # the candidates' vectors: computed and stored
    samples = []
    for _ in range({runs}):
        for q in {queries!r}:
            t = time.perf_counter(); index.search(q, semantic=semantic)
            samples.append(time.perf_counter() - t)
    return statistics.median(samples)
print(json.dumps({{"lexical": median(False), "hybrid": median(True)}}))
"""
    lat = fresh(latency, env)
    first = f"""
import json, time
t = time.perf_counter()
import toolfind
index = toolfind.open_index([{str(catalog)!r}], semantic=False, rerank=True)
opened = time.perf_counter() - t
t = time.perf_counter()
index.search("archive the old invoices of last month")
print(json.dumps({{"open": opened, "first": time.perf_counter() - t}}))
"""
    firsts = []
    for _ in range(3):
        with tempfile.TemporaryDirectory() as cache:  # no stored vector: a fresh catalog
            firsts.append(fresh(first, {**env, "TOOLFIND_CACHE_DIR": cache}))
    first_query = statistics.median(f["first"] for f in firsts)
    without = {**env, "TOOLFIND_MODEL_DIR": tempfile.mkdtemp()}
    first_list(None, env, catalog)  # the cache, the vectors' worker
    starts: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(max(3, runs // 2)):  # interleaved: the machine's load hits both alike
        starts["without"].append(first_list(None, without, catalog)[0])  # (seconds, names)
        starts["with"].append(first_list(None, env, catalog)[0])
    start_with = statistics.median(starts["with"])
    start_without = statistics.median(starts["without"])
    return [
        (
            "SearchIndex.search 10,000, lexical + rerank (vectors stored)",
            f"{lat['lexical'] * ms:.1f} ms",
            "<= 20 ms",
        ),
        (
            "SearchIndex.search 10,000, hybrid + rerank (vectors stored)",
            f"{lat['hybrid'] * ms:.1f} ms",
            "",
        ),
        (
            "first reranked query, fresh catalog (model load, 50 candidates embedded)",
            f"{first_query * ms:.0f} ms",
            "<= 2 s",
        ),
        (
            "serve-mcp start to first tools/list, model installed",
            f"{start_with * ms:.0f} ms",
            "unchanged",
        ),
        ("serve-mcp start to first tools/list, no model", f"{start_without * ms:.0f} ms", ""),
    ]


if __name__ == "__main__":
    main()
