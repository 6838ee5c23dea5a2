"""The semantic signal: the embedder, fusion, stored vectors, and where it is on or off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import toolfind
from tests.helpers import REPO
from toolfind import semantic
from toolfind.cli.app import app
from toolfind.core import fusion
from toolfind.errors import ConfigError, SemanticUnavailable
from toolfind.models import Tool
from toolfind.store import vectors
from toolfind.store.index import SearchIndex

TOOLS = [
    Tool(
        "create_entities",
        "Create new entities in the knowledge graph, with their observations.",
        namespace="memory",
    ),
    Tool(
        "add_observations",
        "Add facts about existing people or things to memory.",
        namespace="memory",
    ),
    Tool(
        "get_forecast",
        "Weather forecast for a city: temperature, rain and wind.",
        namespace="weather",
    ),
    Tool("compress_file", "Compress a file with gzip.", namespace="files"),
    Tool("send_message", "Post a message to a Slack channel.", namespace="slack"),
    Tool("git_commit", "Record staged changes to the repository.", namespace="git"),
]


def _index(weight: float = fusion.DEFAULT_WEIGHT) -> SearchIndex:
    index = SearchIndex.build(TOOLS)
    embedder = semantic.load()
    matrix = vectors.semantic_matrix(index, embedder, None)
    index.use_semantic(vectors.SemanticSignal(embedder, matrix, weight))
    return index


def _catalog(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    entries = [
        {"name": t.name, "description": t.description, "namespace": t.namespace} for t in TOOLS
    ]
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


# -- the embedder ---------------------------------------------------------------------------


def test_embedder_gives_unit_vectors_and_similar_texts_are_closer() -> None:
    e = semantic.load()
    a, b, c = e.embed(["weather forecast", "will it rain tomorrow", "compress a file"])
    assert abs(float(a @ a) - 1.0) < 1e-5
    assert float(a @ b) > float(a @ c)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "🙂🙂🙂",
        "天気はどうですか",
        "quel temps fait-il à Paris",
        "x" * 1_000_000,
        "\x00\ud800",
    ],
)
def test_embedder_never_crashes_on_odd_input(text: str) -> None:
    vec = semantic.load().embed_one(text)
    norm = float(vec @ vec)
    assert norm == 0.0 or abs(norm - 1.0) < 1e-5


def test_a_query_of_unknown_words_is_not_known_and_a_request_is() -> None:
    e = semantic.load()
    assert not semantic.knows_a_word(e, "zzzz qqqq")
    assert not semantic.knows_a_word(e, "🙂 the a")
    assert semantic.knows_a_word(e, "remember that my sister lives in Rome")


def test_tool_text_spells_identifiers_as_words() -> None:
    text = semantic.tool_text("createEntities", "server-memory", "Make entities.")
    assert text == "server memory create Entities: Make entities."


# -- fusion (pure) --------------------------------------------------------------------------


def test_mix_is_convex_and_in_unit_range() -> None:
    fused, part = fusion.mix(2.0, 4.0, 0.5, 0.0, 1.0, 0.4)
    assert fused == pytest.approx(0.6 * 0.5 + 0.4 * 0.5)
    assert part == pytest.approx(0.2)
    assert fusion.mix(4.0, 4.0, 1.0, 0.0, 1.0, 0.3)[0] == pytest.approx(1.0)
    assert fusion.mix(0.0, 0.0, -1.0, 0.0, 1.0, 0.3) == (0.0, 0.0)


def test_fuse_weight_zero_keeps_the_lexical_order_and_exact_hits_first() -> None:
    sims = {0: 0.9, 1: 0.1, 2: 0.5, 3: 0.95}
    exact, ranked = fusion.fuse(
        [(3, 1.0)],
        [(1, 3.0), (2, 2.0)],
        [0, 3],
        sims.__getitem__,
        0.0,
        1.0,
        weight=0.0,
        limit=10,
        tie_key=lambda d: d,
    )
    assert [d for d, *_ in exact] == [3]
    assert [d for d, *_ in ranked] == [1, 2]  # tool 0 has no lexical score: fused 0, dropped


def test_fuse_rejects_a_weight_outside_zero_one() -> None:
    with pytest.raises(ValueError, match="fusion weight"):
        fusion.fuse([], [], [], float, 0.0, 1.0, weight=1.5, limit=3, tie_key=int)


# -- hybrid search --------------------------------------------------------------------------


def test_semantic_finds_a_paraphrase_that_shares_no_word() -> None:
    index = _index()
    lexical = index.search("will it be sunny tomorrow", 3, semantic=False)
    fused = index.search("will it be sunny tomorrow", 3)
    assert lexical.hits == ()
    assert fused.hits[0].name == "get_forecast"


def test_a_query_with_nothing_to_match_is_an_honest_empty_result() -> None:
    index = _index()
    for text in ("zzzz qqqq", "", "🙂🙂", "x" * 1_000_000):
        assert index.search(text, 5).hits == ()


def test_fused_scores_lie_in_unit_range_and_explain_adds_up() -> None:
    index = _index()
    result = index.search("compress a file", 3, explain=True)
    assert result.hits[0].name == "compress_file"
    for hit in result.hits:
        assert 0.0 < hit.score <= 1.0 + 1e-9
        rows = hit.explanation
        assert rows[-1].field == "semantic"
        assert sum(r.score for r in rows) == pytest.approx(hit.score)


def test_semantic_false_is_exactly_the_lexical_search() -> None:
    plain = SearchIndex.build(TOOLS)
    index = _index()
    a = [(h.name, h.score) for h in plain.search("commit staged changes", 5)]
    b = [(h.name, h.score) for h in index.search("commit staged changes", 5, semantic=False)]
    assert a == b


def test_filters_apply_to_semantic_hits_too() -> None:
    index = _index()
    hits = index.search("will it be sunny tomorrow", 5, namespace="memory").hits
    assert all(h.tool.namespace == "memory" for h in hits)


def test_semantic_true_without_the_signal_attached_raises_the_install_line() -> None:
    with pytest.raises(SemanticUnavailable, match=r"pip install 'toolfind\[semantic\]'"):
        SearchIndex.build(TOOLS).search("x", semantic=True)


# -- stored vectors, API, config ------------------------------------------------------------


def test_open_index_is_semantic_by_default_and_stores_vectors_keyed_by_model(
    tmp_path: Path, isolated: Path
) -> None:
    catalog = _catalog(tmp_path)
    index = toolfind.open_index([catalog])
    assert index.semantic is not None
    stored = [p.name for p in isolated.iterdir() if p.suffix == ".vec"]
    assert len(stored) == 1 and "wordllama-l2_supercat-256" in stored[0]
    assert semantic.MODEL_VERSION in stored[0]
    before = (isolated / stored[0]).stat().st_mtime_ns
    again = toolfind.open_index([catalog])  # read back, not recomputed
    assert (isolated / stored[0]).stat().st_mtime_ns == before
    assert (again.semantic.matrix == index.semantic.matrix).all()
    assert toolfind.open_index([catalog], semantic=False).semantic is None


def test_a_damaged_vector_file_is_recomputed(tmp_path: Path, isolated: Path) -> None:
    catalog = _catalog(tmp_path)
    first = toolfind.open_index([catalog])
    (path,) = [p for p in isolated.iterdir() if p.suffix == ".vec"]
    path.write_bytes(b"garbage")
    os.chmod(path, 0o600)
    again = toolfind.open_index([catalog])
    assert (again.semantic.matrix == first.semantic.matrix).all()
    (rebuilt,) = [p for p in isolated.iterdir() if p.suffix == ".vec"]  # the damaged one gone
    assert rebuilt != path and rebuilt.stat().st_size > 100


def test_semantic_weight_from_api_and_config(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    assert toolfind.open_index([catalog], semantic_weight=0.2).semantic.weight == 0.2
    with pytest.raises(ConfigError, match="semantic_weight must be a number from 0 to 1"):
        toolfind.open_index([catalog], semantic_weight=1.5)
    (Path.cwd() / "toolfind.toml").write_text("semantic_weight = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="semantic_weight"):
        toolfind.open_index([catalog])
    (Path.cwd() / "toolfind.toml").write_text("semantic = false\n", encoding="utf-8")
    assert toolfind.open_index([catalog]).semantic is None
    (Path.cwd() / "toolfind.toml").write_text('semantic = "yes"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="true or false"):
        toolfind.open_index([catalog])


# -- CLI ------------------------------------------------------------------------------------


def test_cli_is_lexical_by_default_and_semantic_on_request(tmp_path: Path) -> None:
    catalog = str(_catalog(tmp_path))
    runner = CliRunner()
    query = ["search", "will it be sunny tomorrow", "-c", catalog, "--json"]
    plain = runner.invoke(app, query)
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.stdout)["hits"] == []
    fused = runner.invoke(app, [*query, "--semantic"])
    assert fused.exit_code == 0, fused.output
    assert json.loads(fused.stdout)["hits"][0]["name"] == "get_forecast"
    lexical = runner.invoke(app, [*query, "--lexical"])
    assert json.loads(lexical.stdout)["hits"] == []


def test_cli_explain_shows_the_semantic_share(tmp_path: Path) -> None:
    catalog = str(_catalog(tmp_path))
    result = CliRunner().invoke(
        app, ["search", "compress a file", "-c", catalog, "--semantic", "--explain", "--json"]
    )
    assert result.exit_code == 0, result.output
    hit = json.loads(result.stdout)["hits"][0]
    assert "semantic" in json.dumps(hit)


# -- the extra missing ----------------------------------------------------------------------

_BLOCKED = "import sys; sys.modules['tokenizers'] = None; "


def _run_without_extra(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TOOLFIND_CACHE_DIR": str(tmp_path / "c")}
    return subprocess.run(
        [sys.executable, "-c", _BLOCKED + code],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


def test_without_the_extra_cli_semantic_says_how_to_get_it(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    code = (
        "from toolfind.__main__ import main; "
        f"sys.argv = ['toolfind', 'search', 'file', '-c', {str(catalog)!r}, '--semantic']; main()"
    )
    done = _run_without_extra(code, tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == ["Error: " + semantic.INSTALL_HINT]


def test_without_the_extra_the_api_is_lexical_and_semantic_true_raises(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    code = (
        "import toolfind; "
        f"i = toolfind.open_index([{str(catalog)!r}]); "
        "print(i.semantic is None, [h.name for h in i.search('compress file', 1)]); "
        "from toolfind.errors import SemanticUnavailable\n"
        "try:\n"
        f"    toolfind.open_index([{str(catalog)!r}], semantic=True)\n"
        "except SemanticUnavailable as e:\n"
        "    print('raised', e)\n"
    )
    done = _run_without_extra(code, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "True ['compress_file']"
    assert lines[1].startswith("raised the semantic signal needs the optional extra")


def test_eval_reports_and_tune_learns_the_fusion_weight(tmp_path: Path) -> None:
    catalog = str(_catalog(tmp_path))
    queries = tmp_path / "q.json"
    queries.write_text(
        json.dumps(
            [
                {"query": "will it be sunny tomorrow", "relevant": ["get_forecast"]},
                {"query": "jot down where my sister lives", "relevant": ["add_observations"]},
                {"query": "compress a file", "relevant": ["compress_file"]},
            ]
        ),
        encoding="utf-8",
    )
    runner = CliRunner()
    evaluated = runner.invoke(app, ["eval", str(queries), "-c", catalog, "--semantic", "--json"])
    assert evaluated.exit_code == 0, evaluated.output
    assert f"Semantic signal on, fusion weight {fusion.DEFAULT_WEIGHT:g}" in evaluated.stderr
    # --force: one of three queries is held out, too few to show a gain; what --write
    # stores is the point here.
    argv = ["tune", str(queries), "-c", catalog, "--semantic", "--write", "--force"]
    tuned = runner.invoke(app, [*argv, "--rounds", "1", "--json"])
    assert tuned.exit_code == 0, tuned.output
    assert "Fusion weight of the semantic signal:" in tuned.stderr
    learned = json.loads(tuned.stdout)["fusion_weight"]
    assert 0.0 < learned <= 1.0  # lexical alone finds only one of three
    assert json.loads(tuned.stdout)["fusion"]["weight_before"] == fusion.DEFAULT_WEIGHT
    written = (Path.cwd() / "toolfind.toml").read_text(encoding="utf-8")
    (line,) = [x for x in written.splitlines() if x.startswith("semantic_weight")]
    assert float(line.split("=")[1]) == learned


def test_cache_clear_removes_the_stored_vectors(tmp_path: Path, isolated: Path) -> None:
    toolfind.open_index([_catalog(tmp_path)])
    assert any(p.suffix == ".vec" for p in isolated.iterdir())
    result = CliRunner().invoke(app, ["cache", "clear"])
    assert result.exit_code == 0, result.output
    assert not any(p.suffix == ".vec" for p in isolated.iterdir())


def test_term_coverage_scales_the_lexical_part() -> None:
    assert fusion.term_coverage([("rain", "rain", 1.0)], ["rain", "oslo"]) == 0.5
    assert fusion.term_coverage([("rain", "rainy", 1.0)], ["rainy", "rainy"]) == 1.0
    # A word matched through a typo's correction counts by the correction's factor.
    assert fusion.term_coverage([("email", "emial", 0.5)], ["emial", "send"]) == 0.25
    assert fusion.term_coverage([], []) == 0.0
    full, _ = fusion.mix(2.0, 2.0, 0.0, 0.0, 1.0, 0.3, coverage=1.0)
    half, _ = fusion.mix(2.0, 2.0, 0.0, 0.0, 1.0, 0.3, coverage=0.5)
    assert full == pytest.approx(0.7) and half == pytest.approx(0.7 * 0.25)


def test_embedder_matches_wordllamas_own_inference(tmp_path: Path) -> None:
    """Oracle: WordLlama's WordLlamaInference.embed(norm=True) over the same two files (in a
    subprocess: importing wordllama configures the root logger)."""
    code = """
from tokenizers import Tokenizer
from wordllama.inference import WordLlamaInference
from toolfind import semantic
e = semantic.load()
root = semantic._package_dir()
theirs = WordLlamaInference(e._table, Tokenizer.from_file(str(root.joinpath(*semantic._TOKENIZER))))
texts = ["Compress a file with gzip.", "is it going to rain in Oslo", "a", "git_commit: Record"]
print(float(abs(e.embed(texts) - theirs.embed(texts, norm=True)).max()))
"""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.strip().splitlines()[-1]) < 1e-5
