"""The rerank stage's weight and depth, measured and tuned on labelled queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import invoke
from tests.store.test_rerank import _catalog, _index
from toolfind.eval import reranking
from toolfind.eval.queries import JudgedQuery, LabelledQuery


def _judged(query: str, relevant: int) -> JudgedQuery:
    return JudgedQuery(LabelledQuery(query=query, relevant=("x",), id=query), (relevant,))


def _candidates(exact: int = 0) -> reranking.Candidates:
    # First stage: 10 > 11 > 12 by score; the reranker likes 12 best.
    return reranking.Candidates(
        _judged("q", 12), (10, 11, 12), (3.0, 2.0, 1.0), exact, (0.1, 0.2, 0.9)
    )


def test_ranked_is_the_search_order_at_each_weight_and_depth() -> None:
    found = _candidates()
    assert reranking.ranked(found, 0.0, 50) == [10, 11, 12]
    assert reranking.ranked(found, 0.7, 50) == [12, 10, 11]  # 0.8, 0.3, 0.2875
    assert reranking.ranked(_candidates(exact=1), 0.7, 50) == [10, 12, 11]  # named stays first


def test_grid_and_best_prefer_the_cheaper_setting_on_ties() -> None:
    found = [_candidates()]
    points = reranking.grid(found, metric="mrr@10", weights=(0.0, 0.7, 0.8), depths=(10, 20))
    assert {(w, d): v for w, d, v in points}[(0.0, 10)] == pytest.approx(1 / 3)
    assert reranking.best(points) == (0.7, 10)


def test_settings_that_score_worse_held_out_are_not_to_be_written() -> None:
    # On this held-out query the reranker (which likes 12) is right: a weight of 0 loses.
    held = [_candidates()]
    assert reranking.holdout_loss(held, (0.7, 10), (0.5, 50), "mrr@10") == ""
    loss = reranking.holdout_loss(held, (0.0, 10), (0.7, 50), "mrr@10")
    assert loss == (
        "the chosen rerank weight 0 and depth 10 score mrr@10 33.33% on the 1 held-out queries,"
        " below the 100.00% of the weight 0.7 and depth 50 in use"
    )
    assert reranking.holdout_loss([], (0.0, 10), (0.7, 50)) == ""  # nothing held out


def test_candidates_and_search_agree(model: Path) -> None:
    index = _index(None)
    queries = [_judged("make a folder", 5), _judged("post to slack", 7)]
    found = reranking.candidates(index, queries, 50)
    doc_of = {id(t): i for i, t in enumerate(index.tools)}
    for c in found:
        searched = [doc_of[id(h.tool)] for h in index.search(c.query.query, 10).hits]
        assert reranking.ranked(c, index.reranker.weight, index.reranker.depth) == searched


def test_tune_rerank_learns_and_writes_the_weight_and_depth(model: Path, tmp_path: Path) -> None:
    catalog = str(_catalog(tmp_path))
    queries = Path("queries.jsonl")
    rows = [
        ("make a folder", "make_directory"),
        ("remember my sister lives in Rome", "add_observations"),
    ]
    queries.write_text(
        "".join(json.dumps({"query": q, "relevant": [r]}) + "\n" for q, r in rows), encoding="utf-8"
    )
    args = ("tune", str(queries), "-c", catalog, "--rerank", "--write", "--rounds", "1")
    code, _, err = invoke(*args)
    assert code == 0, err
    assert "Reranker: weight" in err
    # Every query is answered already: the held-out one shows no gain, and nothing is written.
    assert "Not written: the chosen settings score ndcg@10 100.00%" in err
    assert not Path("toolfind.toml").exists()
    code, _, err = invoke(*args, "--force")
    assert code == 0, err
    written = Path("toolfind.toml").read_text(encoding="utf-8")
    assert "rerank_weight = " in written and "rerank_depth = " in written
    code, _, err = invoke("eval", str(queries), "-c", catalog, "--rerank")
    assert code == 0 and "Reranker on: all-minilm-l6-v2" in err
