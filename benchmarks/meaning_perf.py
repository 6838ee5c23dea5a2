"""Speed of a reranked query with the whole catalog's vectors: the tools closest in meaning
join the candidates (docs/ranking.md, "Candidates from meaning").

Uses benchmarks/perf.py's synthetic catalog (fixed seed) of --size tools (default 10k), every
tool's vector stored first (random unit vectors under the tools' text keys, as
``semantic_perf.py`` does: the values do not change the cost; ``--embed`` embeds the catalog
with the model instead, kept in ``benchmarks/_work/rerank-vectors`` between runs, minutes on
a busy machine), and reports the in-process median of ``SearchIndex.search`` over perf.py's queries
and a few natural requests, each query timed ``--runs`` times, interleaved:

* lexical + rerank (the command line's ``--rerank``), and the Python API's default with the
  model (semantic first stage + rerank);
* lexical + rerank re-scoring the first stage's candidates only (no closest tools: the
  stage as it was), the same queries interleaved: what the lookup adds;
* the closest-tools lookup alone (``ToolVectors.nearest``: the product over every stored
  vector and the top 32).

Needs the semantic extra and the reranker's model (``toolfind model fetch``; or
``$TOOLFIND_MODEL_DIR``). Usage: python benchmarks/meaning_perf.py [--size 10000] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from perf import QUERIES, write_catalog  # noqa: E402
from semantic_perf import NATURAL, _fill  # noqa: E402

CACHE = REPO / "benchmarks" / "_work" / "rerank-vectors"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--embed", action="store_true", help="the model's vectors, not random")
    args = parser.parse_args()
    import toolfind
    from toolfind.store import rerank

    with tempfile.TemporaryDirectory() as tmp:
        catalog = write_catalog(Path(tmp), args.size)
        index = toolfind.open_index([catalog], semantic=True, rerank=False)
        root = str(CACHE) if args.embed else str(Path(tmp) / "vectors")
        if not rerank.enable(index, True, root=root):
            print("meaning_perf.py: the reranker's model is not installed", file=sys.stderr)
            return 1
        index.accelerate()
        stage = index.reranker
        assert stage is not None
        t0 = time.perf_counter()
        enabled = [d for d in range(len(index.tools)) if index.enabled(d)]
        if args.embed:
            stage.vectors.of(enabled)
        else:
            _fill(stage.vectors.store, [index.text_key(d) for d in enabled], 1)
        print(f"catalog's vectors ready in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        queries = [*QUERIES, *NATURAL]
        for q in queries:  # untimed: the model loads, the catalog's rows are looked up
            index.search(q, 10)

        class FirstOnly(rerank.Reranker):
            def _near(self, *args: object) -> tuple[list[object], list[object]]:
                return [], []

        first_only = index.with_params(index.params)
        first_only.use_reranker(
            FirstOnly(first_only, stage.model, stage.vectors.store, depth=stage.depth)
        )
        for q in queries:
            first_only.search(q, 10, semantic=False)
        _, have = stage.vectors.stored()
        qvs = {q: stage.embed_forms(q, {}) for q in queries}
        samples: dict[str, list[float]] = {
            "lexical+rerank": [],
            "semantic+rerank": [],
            "lexical+rerank, first-stage candidates only": [],
            "lookup": [],
        }
        for _ in range(args.runs):
            for q in queries:
                t = time.perf_counter()
                index.search(q, 10, semantic=False)
                samples["lexical+rerank"].append(time.perf_counter() - t)
                t = time.perf_counter()
                index.search(q, 10)
                samples["semantic+rerank"].append(time.perf_counter() - t)
                t = time.perf_counter()
                first_only.search(q, 10, semantic=False)
                samples["lexical+rerank, first-stage candidates only"].append(
                    time.perf_counter() - t
                )
                t = time.perf_counter()
                stage.vectors.nearest(qvs[q], 32)
                samples["lookup"].append(time.perf_counter() - t)
        print(f"| measure ({args.size:,} tools, {int(have.sum()):,} vectors) | median |")
        print("| --- | --- |")
        for name, values in samples.items():
            print(f"| {name} | {1000 * statistics.median(values):.1f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
