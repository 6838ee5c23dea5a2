"""`toolfind eval`, `tune` and `validate --queries` through the CLI, on real files."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.cli.test_cli import SMALL
from tests.helpers import run_main, write
from toolfind.cli.app import app

runner = CliRunner()

QUERIES = """\
- query: read a text file
  relevant: [files/read_file]
  split: train
- query: make a zip archive of a file
  relevant: [compress_file]
  split: train
- query: find pages on the web
  relevant: [web:search_web]
  split: test
"""


def setup(tmp_path: Path) -> tuple[str, str]:
    catalog = write(tmp_path / "cat" / "files.yaml", SMALL)
    queries = write(tmp_path / "queries.yaml", QUERIES)
    return str(catalog), str(queries)


def test_eval_json_reports_metrics_overall_and_per_split(tmp_path: Path) -> None:
    catalog, queries = setup(tmp_path)
    result = runner.invoke(app, ["eval", queries, "-c", catalog, "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["overall"]["count"] == 3
    assert report["overall"]["mrr_at_10"] == 1.0
    assert set(report["splits"]) == {"train", "test"}
    assert report["failures"] == []


def test_eval_fail_under_exits_1(tmp_path: Path) -> None:
    catalog, queries = setup(tmp_path)
    result = runner.invoke(
        app,
        [
            "eval",
            queries,
            "-c",
            catalog,
            "--weight",
            "name=0",
            "--weight",
            "description=0",
            "--weight",
            "search_hint=0",
            "--weight",
            "params=0",
            "--weight",
            "tags=0",
            "--weight",
            "namespace=0",
            "--fail-under",
            "ndcg@10=0.99",
        ],
    )
    assert result.exit_code == 1
    assert "Failed: " in result.stderr


def test_eval_worst_queries_say_in_words_a_tool_not_in_the_top_100(tmp_path: Path) -> None:
    catalog, _ = setup(tmp_path)
    queries = write(tmp_path / "q.yaml", "- {query: read a text file, relevant: [search_web]}\n")
    result = runner.invoke(app, ["eval", str(queries), "-c", catalog])
    assert result.exit_code == 0, result.stderr
    assert "web/search_web: not in the top 100" in result.stdout
    document = runner.invoke(app, ["eval", str(queries), "-c", catalog, "--json"]).stdout
    assert json.loads(document)["worst"][0]["relevant"] == [
        {"name": "web/search_web", "rank": None}
    ]


def test_eval_unknown_relevant_tool_names_the_entry(tmp_path: Path) -> None:
    catalog, _ = setup(tmp_path)
    queries = write(tmp_path / "bad.yaml", "- query: x\n  relevant: [serch_web]\n")
    result = runner.invoke(app, ["eval", str(queries), "-c", catalog])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {queries}:")
    assert "serch_web" in result.stderr and "search_web" in result.stderr


def test_validate_queries_adds_findability_warnings(tmp_path: Path) -> None:
    catalog, _ = setup(tmp_path)
    queries = write(tmp_path / "q.yaml", "- query: read a text file\n  relevant: [read_file]\n")
    result = runner.invoke(app, ["validate", catalog, "--queries", str(queries), "--json"])
    findings = json.loads(result.stdout)
    assert any("search_web" in f["message"] or "compress_file" in f["message"] for f in findings)
    assert all(f["severity"] == "warning" for f in findings)


#: Training queries that only a lower name weight answers, held-out ones only the name does:
#: tuning fits the training queries and loses the held-out ones.
OVERFIT_CATALOG = """\
- name: paint_fence
  description: Stain wooden boards.
- name: stain_boards
  description: Paint the garden fence.
"""
OVERFIT_QUERIES = """\
- {query: paint a fence, relevant: [stain_boards], split: train}
- {query: paint the fence white, relevant: [stain_boards], split: train}
- {query: stain the boards, relevant: [stain_boards], split: test}
- {query: stain some boards, relevant: [stain_boards], split: test}
"""


def test_tune_write_refuses_settings_that_score_worse_held_out(tmp_path: Path) -> None:
    catalog = str(write(tmp_path / "c.yaml", OVERFIT_CATALOG))
    queries = str(write(tmp_path / "q.yaml", OVERFIT_QUERIES))
    Path("toolfind.toml").write_text("k1 = 3\n", encoding="utf-8")
    args = ["tune", queries, "-c", catalog, "--train-split", "train", "--metric", "mrr@10"]
    refused = runner.invoke(app, [*args, "--json", "--write"])
    assert refused.exit_code == 1
    report = json.loads(refused.stdout)  # the report is still printed
    assert report["train_after"]["mrr_at_10"] > report["train_before"]["mrr_at_10"]
    assert report["holdout_after"]["mrr_at_10"] < report["holdout_before"]["mrr_at_10"]
    assert "Not written: the chosen settings score mrr@10 " in refused.stderr
    assert "--force writes them anyway" in refused.stderr
    assert Path("toolfind.toml").read_text(encoding="utf-8") == "k1 = 3\n"
    assert not Path("toolfind.toml.~1~").exists()
    forced = runner.invoke(app, [*args, "--write", "--force"])
    assert forced.exit_code == 0, forced.stderr
    assert "Writing anyway (--force)" in forced.stderr
    assert "[weights]" in Path("toolfind.toml").read_text(encoding="utf-8")
    assert runner.invoke(app, [*args, "--force"]).exit_code == 2  # --force needs --write


#: Requests in the descriptions' words, not the names': a lower name weight serves the
#: training queries and the held-out one alike.
BETTER_QUERIES = """\
- {query: paint a fence, relevant: [stain_boards], split: train}
- {query: paint the fence white, relevant: [stain_boards], split: train}
- {query: paint my fence, relevant: [stain_boards], split: test}
"""
TUNE = ["tune", "--train-split", "train", "--metric", "mrr@10", "--write"]


def test_tune_write_stores_only_what_changed_and_the_catalogs_tuned_on(tmp_path: Path) -> None:
    from toolfind.config import load_config
    from toolfind.tuned import digest

    catalog = write(Path.cwd() / "cats" / "c.yaml", OVERFIT_CATALOG)
    queries = str(write(tmp_path / "q.yaml", BETTER_QUERIES))
    Path("toolfind.toml").write_text("# keep me\nk1 = 3\n", encoding="utf-8")
    done = runner.invoke(app, [*TUNE, queries, "-c", str(catalog), "--json"])
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["holdout_after"]["mrr_at_10"] > report["holdout_before"]["mrr_at_10"]
    changed = {
        f"weights.{field}": value
        for field, value in report["params"]["weights"].items()
        if value != report["before"]["weights"][field]
    }
    assert changed and report["params"]["k1"] == report["before"]["k1"] == 3
    target = Path.cwd() / "toolfind.toml"
    assert done.stderr == (
        f"Wrote {', '.join(changed)} to {target}, tuned on {catalog}"
        f" (previous file kept as {target}.~1~)\n"
    )
    assert Path("toolfind.toml.~1~").read_text(encoding="utf-8") == "# keep me\nk1 = 3\n"
    text = Path("toolfind.toml").read_text(encoding="utf-8")
    assert text.startswith("# keep me\nk1 = 3\n") and text.count("k1") == 1
    assert "delta" not in text and "b =" not in text  # no default is pinned
    config = load_config()
    assert {k for k in config.sources if k.startswith("weights.")} == set(changed)
    assert config.tuned is not None
    assert config.tuned.catalogs == (catalog,) and config.tuned.digests == (digest(catalog),)
    assert 'catalogs = ["cats/c.yaml"]' in text  # relative to the file, as catalogs are


def test_tuned_settings_warn_once_a_run_over_other_catalogs(tmp_path: Path) -> None:
    catalog = write(tmp_path / "c.yaml", OVERFIT_CATALOG)
    queries = str(write(tmp_path / "q.yaml", BETTER_QUERIES))
    assert runner.invoke(app, [*TUNE, queries, "-c", str(catalog)]).exit_code == 0
    other = write(tmp_path / "other.yaml", SMALL)
    copy = write(tmp_path / "copy" / "c.yaml", OVERFIT_CATALOG)  # the same tools, moved
    warning = (
        f"Warning: the ranking settings in {Path.cwd() / 'toolfind.toml'} were tuned on"
        f" {catalog}, not on {other} searched here: tune them on these catalogs, or remove them"
        " and the [tuned] table from it"
    )
    for _ in range(2):  # never remembered: the warm path would leave the warning out
        done = run_main("search", "paint", "-c", str(other), "-c", str(catalog), "--json")
        assert done.returncode == 0
        assert [line for line in done.stderr.splitlines() if "tuned" in line] == [warning]
        for same in (catalog, copy):
            quiet = run_main("search", "paint", "-c", str(same), "--json")
            assert quiet.returncode == 0 and "Warning" not in quiet.stderr


def test_tune_write_writes_nothing_when_held_out_does_not_improve(tmp_path: Path) -> None:
    extra = "- name: read_file\n  description: Read a text file.\n"
    catalog = str(write(tmp_path / "c.yaml", OVERFIT_CATALOG + extra))
    queries = str(
        write(
            tmp_path / "q.yaml",
            "- {query: paint a fence, relevant: [stain_boards], split: train}\n"
            "- {query: read a text file, relevant: [read_file], split: train}\n"
            "- {query: read the file, relevant: [read_file], split: test}\n",  # answered already
        )
    )
    Path("toolfind.toml").write_text("# keep me\n", encoding="utf-8")
    args = ["tune", queries, "-c", catalog, "--train-split", "train", "--write"]
    done = runner.invoke(app, [*args, "--json"])
    report = json.loads(done.stdout)
    assert report["params"] != report["before"]  # training moved the settings
    assert report["holdout_after"]["ndcg_at_10"] == report["holdout_before"]["ndcg_at_10"]
    assert done.exit_code == 0, done.stderr  # nothing to gain is no failure
    assert done.stderr == (
        "Not written: the chosen settings score ndcg@10 100.00% on the 1 held-out queries, the"
        " same as the settings in use. --force writes them anyway.\n"
    )
    assert Path("toolfind.toml").read_text(encoding="utf-8") == "# keep me\n"
    assert not Path("toolfind.toml.~1~").exists()
    forced = runner.invoke(app, [*args, "--force"])
    assert forced.exit_code == 0 and "Writing anyway (--force): the chosen" in forced.stderr
    assert "[tuned]" in Path("toolfind.toml").read_text(encoding="utf-8")


def test_tune_write_writes_nothing_without_held_out_queries(tmp_path: Path) -> None:
    catalog = write(tmp_path / "c.yaml", OVERFIT_CATALOG)
    queries = str(write(tmp_path / "q.yaml", BETTER_QUERIES.replace("split: test", "split: train")))
    done = runner.invoke(app, [*TUNE, queries, "-c", str(catalog)])
    assert done.exit_code == 0, done.stderr
    assert "Not written: no held-out queries show that the chosen settings do better" in (
        done.stderr
    )
    assert not Path("toolfind.toml").exists()


def test_a_bad_labelled_queries_file_is_a_queries_error_everywhere(tmp_path: Path) -> None:
    """One kind for a queries file that cannot be used, whichever command reads it."""
    catalog, _ = setup(tmp_path)
    unknown = write(tmp_path / "unknown.yaml", "- {query: read a file, relevant: [nope_tool]}\n")
    broken = write(tmp_path / "broken.yaml", "- {query: [unclosed\n")
    for argv in (
        ["eval", str(unknown)],
        ["tune", str(unknown)],
        ["eval", str(broken)],
        ["validate", catalog, "--queries", str(broken)],
    ):
        result = runner.invoke(app, [*argv, "-c", catalog, "--json"])
        assert result.exit_code == 1, result.stderr
        error = json.loads(result.stderr)["error"]
        assert error["kind"] == "queries" and str(tmp_path) in error["message"]
