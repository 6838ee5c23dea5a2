"""The rerank stage: the mix, search with it, the stored vectors, where it is on or off, and
serve-mcp's background worker."""

from __future__ import annotations

import json
import os
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

import toolfind
from tests.helpers import invoke
from toolfind.backends.seam import NoBackends
from toolfind.config import Filters
from toolfind.core import fusion
from toolfind.errors import ConfigError, ModelUnavailable
from toolfind.models import ScoringParams, Tool
from toolfind.serve.state import LiveIndex
from toolfind.store import rerank
from toolfind.store.index import SearchIndex

TOOLS = [
    Tool("create_entities", "Create new entities in the knowledge graph.", namespace="memory"),
    Tool(
        "add_observations",
        "Add facts about existing people or things to memory.",
        namespace="memory",
    ),
    Tool("delete_observations", "Delete facts from memory.", namespace="memory"),
    Tool(
        "get_forecast",
        "Weather forecast for a city: temperature, rain and wind.",
        namespace="weather",
    ),
    Tool("compress_file", "Compress a file with gzip.", namespace="files"),
    Tool("make_directory", "Create a directory, with its parents.", namespace="files"),
    Tool("list_directory", "List the files in a directory.", namespace="files"),
    Tool("send_message", "Post a message to a Slack channel.", namespace="slack"),
    Tool("git_commit", "Record staged changes to the repository.", namespace="git"),
    Tool("fetch_url", "Fetch a web page and return its text.", namespace="web"),
]


def _catalog(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    entries = [
        {"name": t.name, "description": t.description, "namespace": t.namespace} for t in TOOLS
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def _index(
    cache: Path | None, weight: float = fusion.RERANK_WEIGHT, depth: int = 50
) -> SearchIndex:
    index = SearchIndex.build(TOOLS)
    assert rerank.enable(
        index, True, weight=weight, depth=depth, cache_root=str(cache) if cache else None,
        use_cache=cache is not None,
    )  # fmt: skip
    return index


def _segments(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.glob("toolfind-*.rerank-*.vec")) if cache.is_dir() else []


# -- search ---------------------------------------------------------------------------------------


def test_a_reranked_search_is_as_sure_as_its_calibrated_model(model: Path) -> None:
    from toolfind.core import confidence

    index = _index(None)
    sure = index.search("store an observation about Ana in memory", 3)
    assert [h.name for h in sure.hits][0] == "add_observations"
    assert sure.hits[0].confidence >= confidence.CONFIDENT  # the model agrees
    lexical = index.search("store an observation about Ana in memory", 3, rerank=False)
    assert lexical.hits[0].confidence < confidence.CONFIDENT  # words alone are not enough
    assert all(h.confidence < confidence.CONFIDENT for h in sure.hits[1:])
    assert all(a.confidence >= b.confidence for a, b in pairwise(sure.hits))


def test_reranked_search_puts_the_meaning_first_and_explains_each_share(model: Path) -> None:
    index = _index(None)
    lexical = index.search("make a folder", 3, rerank=False)
    assert all(h.similarity is None for h in lexical.hits)
    found = index.search("make a folder", 3, explain=True)
    assert found.hits[0].tool.name == "make_directory"
    for hit in found.hits:
        assert hit.similarity is not None and -1.0 <= hit.similarity <= 1.0
        assert 0.0 <= hit.score <= 1.0
        rows = hit.explanation
        assert rows[-1].field == "rerank" and rows[-1].weight == fusion.RERANK_WEIGHT
        assert rows[-1].idf == pytest.approx(hit.similarity)
        assert sum(r.score for r in rows) == pytest.approx(hit.score)


def test_a_named_tool_stays_first_and_limits_and_min_score_hold(model: Path) -> None:
    index = _index(None)
    found = index.search("git_commit", 2)
    assert found.hits[0].tool.name == "git_commit" and found.hits[0].match == "exact"
    assert len(index.search("file", 1).hits) == 1
    kept = index.search("create a directory", 10, min_score=0.6)
    assert kept.hits and all(h.score >= 0.6 for h in kept.hits)


def test_rerank_true_without_a_stage_says_how_to_get_the_model() -> None:
    index = SearchIndex.build(TOOLS)
    with pytest.raises(ModelUnavailable, match="toolfind model fetch"):
        index.search("compress", rerank=True)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "😀🎉",
        "日本語で検索",
        "zzzz qqqq",
        "comprss \udcff\udcfe fiel",
        "compress " * 120_000,
    ],
)
def test_bad_queries_never_crash_the_stage(model: Path, query: str) -> None:
    index = _index(None)
    stage = index.reranker
    stage._rows(index, range(len(TOOLS)), rerank.encoder_for(stage.model.name))
    result = index.search(query, 5, explain=True)
    assert all(a.confidence >= b.confidence for a, b in pairwise(result.hits))
    assert all(h.similarity is not None and np.isfinite(h.similarity) for h in result.hits)


def _fresh(depth: int) -> SearchIndex:
    """An index whose stage has a store of its own, empty: only what a query embeds is in it."""
    index = _index(None, depth=depth)
    stage = index.reranker
    store = rerank.VectorStore(None, stage.model.ident, 384)
    index.use_reranker(rerank.Reranker(stage.model, store, depth=depth))
    return index


def test_the_depth_bounds_what_is_re_scored(model: Path) -> None:
    # No tool's vector is stored yet: the stage re-scores the first stage's top two only
    # (nothing else is near in meaning yet), the rest keep their order below, unscored.
    two = _fresh(2)
    first_stage = [h.tool.name for h in two.search("file directory", 5, rerank=False).hits]
    hits = two.search("file directory", 5).hits
    assert sorted(h.tool.name for h in hits[:2]) == sorted(first_stage[:2])
    assert [h.tool.name for h in hits[2:]] == first_stage[2:]
    assert [h.similarity is None for h in hits] == [False, False] + [True] * (len(hits) - 2)
    with pytest.raises(ConfigError, match="rerank depth"):
        rerank.Reranker(two.reranker.model, two.reranker.store, depth=0)


def test_the_tools_closest_in_meaning_join_once_the_catalogs_vectors_are_stored(
    model: Path,
) -> None:
    index = _fresh(5)
    query = "is it going to be wet outside tomorrow"  # no word of the weather tool's
    assert "get_forecast" not in [h.name for h in index.search(query, 10, rerank=False).hits]
    before = [h.name for h in index.search(query, 3).hits]
    assert "get_forecast" not in before  # its vector is not stored: it cannot be found by it
    stage = index.reranker
    stage._rows(index, range(len(TOOLS)), rerank.encoder_for(stage.model.name))
    after = index.search(query, 3, explain=True).hits
    assert after[0].name == "get_forecast"
    assert sum(r.score for r in after[0].explanation) == pytest.approx(after[0].score)
    # A request of unknown strings finds nothing by meaning, every vector stored or not.
    assert index.search("zzzz qqqq", 5).hits == ()


@pytest.mark.parametrize(
    "query",
    [
        "play some jazz",
        "list mongo collections",
        "eslint src/index.ts",
        "how much disk space is left",
    ],
)
def test_a_request_nothing_fits_gets_no_confident_hit_even_from_the_closest_tool(
    model: Path, query: str
) -> None:
    from toolfind.core import confidence

    index = _index(None)
    stage = index.reranker
    stage._rows(index, range(len(TOOLS)), rerank.encoder_for(stage.model.name))
    found = index.search(query, 3)
    assert found.hits  # the closest tools in meaning are there ...
    assert all(h.confidence < confidence.CONFIDENT for h in found.hits)  # ... but not sure
    assert confidence.no_confident_match(found.hits[0].confidence)


def test_a_misspelt_request_is_read_by_the_model_as_the_words_read_it(model: Path) -> None:
    index = _index(None)
    stage = index.reranker
    stage._rows(index, range(len(TOOLS)), rerank.encoder_for(stage.model.name))
    found = index.search("comprss this fiel", 3)
    assert dict(found.corrections) == {"comprss": "compress", "fiel": "file"}
    assert found.hits[0].name == "compress_file"
    forms = stage.embed_forms("comprss this fiel", dict(found.corrections))
    assert forms.shape == (2, 384)  # as written, and as read: the closer of the two counts
    assert stage.embed_forms("compress this file", {}).shape == (1, 384)


# -- stored vectors -----------------------------------------------------------------------------


def test_candidate_vectors_are_stored_and_read_back_by_another_store(
    model: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    index = _index(cache)
    index.search("make a folder", 3)
    assert len(_segments(cache)) == 1
    stage = index.reranker
    keys = [rerank.key_of(rerank.tool_text(t)) for t in TOOLS]
    stored = [k for k, r in zip(keys, stage.store.rows_of(keys), strict=True) if r >= 0]
    assert stored
    fresh = rerank.VectorStore(str(cache), stage.model.ident, 384)
    rows_a, rows_b = stage.store.rows_of(stored), fresh.rows_of(stored)
    assert -1 not in rows_b
    assert np.array_equal(stage.store.matrix[rows_a], fresh.matrix[rows_b])
    # A second search of the same tools computes nothing new: no new segment.
    index.search("make a folder", 3)
    assert len(_segments(cache)) == 1


def test_a_damaged_segment_is_skipped_with_one_line(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _index(cache).search("compress a file", 3)
    [name] = _segments(cache)
    (cache / name).write_bytes((cache / name).read_bytes()[:100])
    warned: list[str] = []
    store = rerank.VectorStore(
        str(cache), rerank.models.MODELS["all-minilm-l6-v2"].ident, 384, warned.append
    )
    assert len(store) == 0
    assert warned == [
        f"Cache file {cache / name} is unreadable; its vectors will be computed again."
    ]


def test_many_segments_are_merged_into_one(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    index = _index(cache, depth=1)
    for tool in TOOLS:  # one new candidate a query: one segment each
        index.search(tool.description, 1)
    assert 1 <= len(_segments(cache)) <= 8
    store = rerank.VectorStore(str(cache), index.reranker.model.ident, 384)
    assert len(store) == len(index.reranker.store)


# -- on or off ----------------------------------------------------------------------------------


def test_open_index_reranks_when_the_model_is_there_unless_told_not_to(
    model: Path, tmp_path: Path
) -> None:
    catalog = _catalog(tmp_path)
    assert toolfind.open_index([catalog], semantic=False).reranker is not None
    assert toolfind.open_index([catalog], semantic=False, rerank=False).reranker is None
    (Path.cwd() / "toolfind.toml").write_text(
        "rerank = false\nrerank_weight = 0.3\nrerank_depth = 20\n", encoding="utf-8"
    )
    assert toolfind.open_index([catalog], semantic=False).reranker is None
    forced = toolfind.open_index([catalog], semantic=False, rerank=True).reranker
    assert (forced.weight, forced.depth) == (0.3, 20)


def test_open_index_without_the_model_is_off_or_one_clear_error(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    assert toolfind.open_index([catalog], semantic=False).reranker is None
    with pytest.raises(ModelUnavailable) as raised:
        toolfind.open_index([catalog], semantic=False, rerank=True)
    assert raised.value.kind == "model_unavailable"
    assert "toolfind model fetch" in str(raised.value) and "\n" not in str(raised.value)


def test_bad_rerank_settings_name_the_key(tmp_path: Path) -> None:
    (Path.cwd() / "toolfind.toml").write_text("rerank_depth = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="rerank_depth must be a whole number from 1 to 1000"):
        toolfind.open_index([_catalog(tmp_path)])


def test_search_rerank_on_the_command_line(model: Path, tmp_path: Path) -> None:
    catalog = str(_catalog(tmp_path))
    code, out, err = invoke(
        "search", "make a folder", "-c", catalog, "--rerank", "--json", "-k", "2"
    )
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert hits[0]["name"] == "make_directory" and hits[0]["score"] <= 1.0
    code, out, _ = invoke("search", "make a folder", "-c", catalog, "--rerank", "--explain")
    assert code == 0 and "(context)" in out and "rerank" in out


def test_search_rerank_without_the_model_is_one_line_exit_1(tmp_path: Path) -> None:
    catalog = str(_catalog(tmp_path))
    code, out, err = invoke("search", "make a folder", "-c", catalog, "--rerank")
    assert code == 1 and out == ""
    assert err.startswith(
        "Error: reranking needs the all-minilm-l6-v2 model: run `toolfind model fetch`"
    )
    assert err.count("\n") == 1
    code, _, err = invoke("search", "make a folder", "-c", catalog, "--rerank", "--json")
    assert json.loads(err)["error"]["kind"] == "model_unavailable"


# -- serve-mcp --------------------------------------------------------------------------------------


def test_serve_reranks_and_embeds_every_tool_in_the_background(model: Path, tmp_path: Path) -> None:
    cache = Path(os.environ["TOOLFIND_CACHE_DIR"])
    rerank.stop_worker()
    live = LiveIndex(
        [_catalog(tmp_path)], params=ScoringParams(), filters=Filters(), backends=NoBackends()
    )
    index = live.load().index
    assert index.reranker is not None
    assert rerank.worker(timeout=0) is None  # serve-mcp's start shares nothing with it
    # The first reranked query embeds its candidates and starts the worker for the rest.
    assert index.search("make a folder", 3).hits[0].tool.name == "make_directory"
    worker = rerank.worker(timeout=60)
    assert worker is not None
    assert worker.wait(timeout=300) == 0
    store = rerank.VectorStore(str(cache), index.reranker.model.ident, 384)
    keys = [rerank.key_of(rerank.tool_text(t)) for t in TOOLS]
    assert -1 not in store.rows_of(keys)
    # Later queries find them stored: nothing embedded, no new segment, no second worker.
    before = _segments(cache)
    assert index.search("compress a file with gzip", 3).hits[0].tool.name == "compress_file"
    assert _segments(cache) == before
    assert rerank.worker(timeout=0) is worker
