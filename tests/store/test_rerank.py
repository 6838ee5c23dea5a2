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
from toolfind.semantic import text_key
from toolfind.serve.state import LiveIndex
from toolfind.store import rerank, vectors
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
        index, True, weight=weight, depth=depth, root=cache, use_cache=cache is not None
    )
    return index


def _segments(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.glob("toolfind-*.vectors-all-minilm*.vec"))


def _keys(tools: list[Tool]) -> list[bytes]:
    return [text_key(vectors.tool_text(t)) for t in tools]


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
    stage.vectors.of(range(len(TOOLS)))
    result = index.search(query, 5, explain=True)
    assert all(a.confidence >= b.confidence for a, b in pairwise(result.hits))
    assert all(h.similarity is not None and np.isfinite(h.similarity) for h in result.hits)


def _fresh(depth: int) -> SearchIndex:
    """An index whose stage has a store of its own, empty: only what a query embeds is in it."""
    index = _index(None, depth=depth)
    stage = index.reranker
    assert stage is not None
    store = vectors.VectorStore(None, stage.model.ident, 384)
    index.use_reranker(rerank.Reranker(index, stage.model, store, depth=depth))
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


def test_the_tools_closest_in_meaning_join_once_the_catalogs_vectors_are_stored(
    model: Path,
) -> None:
    index = _fresh(5)
    query = "is it going to be wet outside tomorrow"  # no word of the weather tool's
    assert "get_forecast" not in [h.name for h in index.search(query, 10, rerank=False).hits]
    before = [h.name for h in index.search(query, 3).hits]
    assert "get_forecast" not in before  # its vector is not stored: it cannot be found by it
    stage = index.reranker
    stage.vectors.of(range(len(TOOLS)))
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
    stage.vectors.of(range(len(TOOLS)))
    found = index.search(query, 3)
    assert found.hits  # the closest tools in meaning are there ...
    assert all(h.confidence < confidence.CONFIDENT for h in found.hits)  # ... but not sure
    assert confidence.no_confident_match(found.hits[0].confidence)


def test_a_misspelt_request_is_read_by_the_model_as_the_words_read_it(model: Path) -> None:
    index = _index(None)
    stage = index.reranker
    stage.vectors.of(range(len(TOOLS)))
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
    assert stage is not None
    found, have = stage.vectors.store.get(_keys(TOOLS))
    assert have.any() and not have.all()  # the candidates only
    ident = stage.model.ident
    again, have_again = vectors.VectorStore(str(cache), ident, 384).get(_keys(TOOLS))
    assert (have_again == have).all() and np.array_equal(found, again)
    # A second search of the same tools computes nothing new: no new segment.
    index.search("make a folder", 3)
    assert len(_segments(cache)) == 1


def test_a_damaged_segment_is_skipped_with_one_line(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _index(cache).search("compress a file", 3)
    [name] = _segments(cache)
    (cache / name).write_bytes((cache / name).read_bytes()[:100])
    warned: list[str] = []
    ident = rerank.models.MODELS["all-minilm-l6-v2"].ident
    store = vectors.VectorStore(str(cache), ident, 384, warned.append)
    assert len(store) == 0 and not store.get(_keys(TOOLS))[1].any()
    assert warned == [
        f"Cache file {cache / name} is unreadable; its vectors will be computed again."
    ]


def test_many_segments_are_merged_by_size_class(model: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    index = _index(cache, depth=1)
    for tool in TOOLS:  # one new candidate a query: one segment each
        index.search(tool.description, 1)
    assert 1 <= len(_segments(cache)) < 2 * vectors.TIER
    store = vectors.VectorStore(str(cache), index.reranker.model.ident, 384)
    assert store.get(_keys(TOOLS))[1].sum() == len(index.reranker.vectors._rows)


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


def test_explain_titles_each_hit_with_each_signals_share_of_its_score(
    model: Path, tmp_path: Path
) -> None:
    import re

    catalog = str(_catalog(tmp_path))
    args = ("search", "make a folder", "-c", catalog, "--explain", "-k", "3")
    code, out, err = invoke(*args, "--semantic", "--rerank")
    assert code == 0, err
    titles = re.findall(
        r"(\w+): ([\d.]+) = lexical ([\d.]+) \+ semantic ([\d.]+) \+ rerank ([\d.]+)", out
    )
    assert len(titles) == 3 and titles[0][0] == "make_directory"
    for _, score, *shares in titles:
        assert sum(map(float, shares)) == pytest.approx(float(score), abs=2e-4)
    code, out, _ = invoke(*args, "--lexical")
    assert code == 0 and " = lexical" not in out  # one signal: its rows are the score


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
    live = LiveIndex(
        [_catalog(tmp_path)], params=ScoringParams(), filters=Filters(), backends=NoBackends()
    )
    index = live.load().index
    stage = index.reranker
    assert stage is not None and not live.embedding  # serve-mcp's start shares nothing with it
    assert index.search("make a folder", 3).hits[0].tool.name == "make_directory"
    job = rerank.embed_in_background(stage)
    assert job is not None and job.wait(timeout=300) == 0
    store = vectors.VectorStore(str(cache), stage.model.ident, 384)
    assert store.get(_keys(TOOLS))[1].all()
    assert stage.vectors.missing() == []
    # Later queries find them stored: nothing embedded, no new segment.
    before = _segments(cache)
    assert index.search("compress a file with gzip", 3).hits[0].tool.name == "compress_file"
    assert _segments(cache) == before
    # Nothing missing: nothing to start.
    again = rerank.embed_in_background(stage)
    assert again is not None and again.wait(timeout=60) is None and again.process is None


def test_model_embed_gives_every_tool_its_vector(model: Path, tmp_path: Path) -> None:
    catalog = str(_catalog(tmp_path))
    code, out, err = invoke("model", "embed", "-c", catalog, "--json")
    assert code == 0, err
    assert json.loads(out) == {"model": "all-minilm-l6-v2", "tools": 10, "embedded": 10}
    code, out, _ = invoke("model", "embed", "-c", catalog)
    assert out == "10 tools have their all-minilm-l6-v2 vector (0 computed now)\n"


def test_an_interrupted_embedding_keeps_what_it_did_and_the_next_resumes(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rerank, "_WORKER_CHUNK", 4)
    stage = _index(tmp_path / "cache").reranker
    assert stage is not None

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C once the first chunk is stored

    with pytest.raises(KeyboardInterrupt):
        rerank.embed_all(stage, interrupt)
    assert len(stage.vectors.missing()) == len(TOOLS) - 4
    assert rerank.embed_all(stage) == (len(TOOLS), len(TOOLS) - 4)
    assert stage.vectors.missing() == []


def test_the_background_worker_runs_isolated_from_the_working_directory(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.semantic.test_models import plant

    shared = tmp_path / "shared"  # a folder another user could have written
    marker = tmp_path / "ran"
    plant(shared, marker)
    monkeypatch.chdir(shared)
    monkeypatch.setenv("PYTHONPATH", ".")
    stage = _index(tmp_path / "cache").reranker
    assert stage is not None
    job = rerank.embed_in_background(stage)
    assert job is not None and job.wait(timeout=300) == 0
    assert stage.vectors.missing() == [] and not marker.exists()


def test_the_background_worker_ends_as_soon_as_its_lifeline_does(
    model: Path, tmp_path: Path
) -> None:
    """The worker's stdin stays open while its parent wants the work: its end (the parent
    stopped it, or died, SIGKILL included) ends the worker at once, whatever it is doing at
    the lowest priority; not once the model has loaded and a chunk is done (minutes on a busy
    machine, for a worker that then outlived a killed serve-mcp)."""
    stage = _index(tmp_path / "cache").reranker
    assert stage is not None
    texts = [f"tool number {i} does task {i} of many" for i in range(3000)]  # 12 chunks
    job = {"root": stage.vectors.store.root, "model": stage.model.name, "texts": texts}
    worker = rerank._spawn_worker()
    try:
        assert worker.stdin is not None
        worker.stdin.write(json.dumps(job).encode() + b"\n")
        worker.stdin.close()  # what the parent's death does to its end
        assert worker.wait(timeout=120) == 0
    finally:
        worker.kill()
    _, stored = stage.vectors.store.get([text_key(t) for t in texts])
    assert stored.sum() < len(texts)  # it stopped early: most were never embedded


def test_a_reranked_search_in_serve_runs_off_the_event_loop(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    import anyio
    import anyio.to_thread

    live = LiveIndex(
        [_catalog(tmp_path)], params=ScoringParams(), filters=Filters(), backends=NoBackends()
    )
    index = live.load().index
    inside, release = threading.Event(), threading.Event()
    embed = rerank.Reranker.embed_query

    def held(stage: rerank.Reranker, query: str) -> object:
        inside.set()
        assert release.wait(60), "the event loop was held by the search"
        return embed(stage, query)

    monkeypatch.setattr(rerank.Reranker, "embed_query", held)
    found: list[object] = []

    async def main() -> None:
        async def search() -> None:
            found.append(await live.search(index, lambda: index.search("make a folder", 3)))

        async with anyio.create_task_group() as tg:
            tg.start_soon(search)
            await anyio.to_thread.run_sync(inside.wait, 60)
            release.set()  # runs only while the search is inside the model: the loop is free

    anyio.run(main)
    (result,) = found
    assert result.hits[0].tool.name == "make_directory" and result.stages[-1] == "rerank"


def _damaged_model(tmp_path: Path, installed: Path, name: str) -> Path:
    """A copy of the installed model with file ``name`` spoilt, its size kept."""
    import shutil

    root = tmp_path / "models"
    shutil.copytree(installed.parent, root)
    path = root / "all-minilm-l6-v2" / name
    size = path.stat().st_size
    path.write_bytes(b"{" + b" " * (size - 1))
    return path


@pytest.mark.parametrize("name", ["tokenizer.json", "model.safetensors"])
def test_a_damaged_model_turns_reranking_off_with_one_warning_and_search_answers(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    spoilt = _damaged_model(tmp_path, model, name)
    monkeypatch.setenv("TOOLFIND_MODEL_DIR", str(spoilt.parent.parent))
    monkeypatch.setattr(rerank, "_ENCODERS", {})
    catalog = str(_catalog(tmp_path))
    code, out, err = invoke(
        "search", "make a folder", "-c", catalog, "--rerank", "--json", "-k", "2"
    )
    assert code == 0 and "Traceback" not in err
    assert json.loads(out)["stages"] == ["lexical"]
    assert json.loads(out)["hits"][0]["name"] == "make_directory"
    (line,) = [said for said in err.splitlines() if said.startswith("Warning")]  # said once
    assert line.startswith(f"Warning: reranking is off: {spoilt} cannot be read (")
    assert line.endswith(
        "(run `toolfind model fetch` to install the model again); results come from the first stage"
    )
    # serve-mcp: every search answers, the warning said once.
    warned: list[str] = []
    index = SearchIndex.build(TOOLS)
    assert rerank.enable(index, None, use_cache=False, warn=warned.append)
    for query in ("make a folder", "send a message", "compress"):
        assert index.search(query, 2).stages == ("lexical",)
    assert len(warned) == 1


def test_non_finite_stored_vectors_are_refused_and_computed_again(
    model: Path, tmp_path: Path
) -> None:
    import struct

    cache = tmp_path / "cache"
    clean = [h.tool.name for h in _index(cache).search("send an email to my colleague", 3).hits]
    (path,) = [cache / n for n in _segments(cache)]
    data = bytearray(path.read_bytes())
    _, count, dim, _ = struct.unpack_from("<8sII44s", data)
    start = struct.calcsize("<8sII44s") + 16 * count
    data[start:] = b"\x00\x7e" * (count * dim)  # float16 NaN in every row
    path.write_bytes(bytes(data))
    warned: list[str] = []
    index = SearchIndex.build(TOOLS)
    store = vectors.VectorStore(str(cache), rerank.models.spec("all-minilm-l6-v2").ident, 384)
    store._warn = warned.append
    index.use_reranker(rerank.Reranker(index, rerank.models.spec("all-minilm-l6-v2"), store))
    again = index.search("send an email to my colleague", 3)
    assert [h.tool.name for h in again.hits] == clean
    assert all(h.similarity is not None and np.isfinite(h.similarity) for h in again.hits)
    assert len(warned) == 1 and "not finite" in warned[0] and not path.exists()


def test_serve_embeds_every_tool_after_it_starts_and_for_each_new_index(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from toolfind.serve import state

    monkeypatch.setattr(state, "EMBED_AFTER", 0.0)
    live = LiveIndex(
        [_catalog(tmp_path)], params=ScoringParams(), filters=Filters(), backends=NoBackends()
    )
    stage = live.load().index.reranker
    assert stage is not None and stage.embedding is None  # not while it starts

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(live.watch, 3600.0)
            while stage.embedding is None:  # started by the watcher's first step
                await anyio.sleep(0)
            tg.cancel_scope.cancel()

    anyio.run(main)
    assert stage.embedding is not None and stage.embedding.wait(timeout=300) == 0
    assert stage.vectors.missing() == []


def test_the_api_embeds_every_tool_from_its_first_reranked_search(
    model: Path, tmp_path: Path
) -> None:
    index = toolfind.open_index([_catalog(tmp_path)], semantic=False)
    stage = index.reranker
    assert stage is not None and stage.embedding is None  # opening starts nothing
    index.search("make a folder", 3)
    assert stage.embedding is not None and stage.embedding.wait(timeout=300) == 0
    assert stage.vectors.missing() == []
