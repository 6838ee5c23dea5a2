"""The commands that check catalogs and ranking: validate, eval and tune."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import sys
from typing import Any

import typer

from toolfind.cli.common import (
    CatalogOpt,
    ColorOpt,
    JsonOpt,
    NoCacheOpt,
    RerankOpt,
    SemanticOpt,
    WeightOpt,
    app,
    emit,
    fail,
    open_index,
    reports_errors,
    warn,
)
from toolfind.cli.options import (
    BOpt,
    FailUnderOpt,
    ForceOpt,
    HoldoutOpt,
    IgnoreOpt,
    K1Opt,
    LintQueriesOpt,
    MetricOpt,
    PathsArg,
    QueriesArg,
    RoundsOpt,
    SeedOpt,
    StrictOpt,
    TrainSplitOpt,
    WorstOpt,
    WriteOpt,
)
from toolfind.cli.printing import renderer
from toolfind.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolfind.eval.queries import JudgedQuery
    from toolfind.models import ScoringParams
    from toolfind.store.index import SearchIndex

# -- validate ------------------------------------------------------------------------------------


@app.command()
@reports_errors
def validate(
    paths: PathsArg = None,
    strict: StrictOpt = False,
    queries: LintQueriesOpt = None,
    ignore: IgnoreOpt = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    color: ColorOpt = "auto",
) -> None:
    """Check catalogs: every error and lint warning, one line each; exit 1 on errors.

    Example: toolfind validate catalogs/ --strict --ignore param-description
    """
    from toolfind import catalog as catalogs
    from toolfind.catalog.linter import unknown_rules
    from toolfind.config import for_run
    from toolfind.output import wire

    problem = unknown_rules(ignore or ())
    if problem:
        fail(f"--ignore: {problem}", 2)
    given = [*(paths or ()), *(catalog or ())]
    run = for_run(given)
    for line in run.warnings:
        warn(line)
    result = catalogs.load(run.paths, max_bytes=run.max_file_size, every_problem=True)
    found = list(result.findings) + catalogs.lint(result)
    if queries is not None and result.tools:
        from toolfind.eval.evaluate import findability_findings
        from toolfind.eval.queries import load_queries
        from toolfind.models import LEXICAL
        from toolfind.store.run import open_run_index

        index = open_run_index(
            paths=run.paths,
            params=run.params,
            max_file_size=run.max_file_size,
            signals=LEXICAL.settings(),
            report_skipped=False,  # the findings above say them
            warn=warn,
        ).index
        found += findability_findings(index, load_queries(queries), file=queries)
    ignored = {*run.config.ignore_rules, *(ignore or ())}
    found = [f for f in found if f.rule not in ignored]
    # As a compiler lists them: file by file in load order (then any other path, such as the
    # queries file, by name), each file's in line order; one line's in the order found.
    rank = {file: i for i, file in enumerate(result.files)}
    found.sort(key=lambda f: (rank.get(f.file, len(rank)), f.file, f.line or 0))
    errors = any(f.severity == "error" for f in found)
    # One verdict: the counts, or (nothing loaded, and no error to say why) the error alone.
    silent = not result.tools and not errors
    if json_:
        emit(wire.findings_records(found))
    else:
        renderer(color).findings(found, len(result.files), len(result.tools), counts=not silent)
    if silent:
        from toolfind.store.run import nothing_loaded

        raise nothing_loaded(given)
    if errors or (strict and found):
        raise typer.Exit(1)


# -- eval / tune --------------------------------------------------------------------------------


def _scoring(
    index: "SearchIndex", weight: list[str] | None, k1: float | None, b: list[str] | None
) -> "ScoringParams":
    """The index's settings with --weight, --k1 and --b applied."""
    from dataclasses import replace

    from toolfind.config import bounded, parse_weight_options, with_b
    from toolfind.errors import ConfigError

    params = index.params
    if weight:
        params = replace(params, weights=parse_weight_options(weight, params.weights))
    if k1 is not None:
        try:
            params = replace(params, k1=bounded("k1", k1))
        except ValueError as exc:
            raise UsageError(f"--k1 {k1!r}: {exc}") from None
    for option in b or ():
        key, sep, value = option.partition("=")
        try:
            params = with_b(params, {key.strip(): float(value)} if sep else float(option))
        except ValueError:
            raise UsageError(f"--b {option!r}: expected a number or FIELD=NUMBER") from None
        except ConfigError as exc:  # out of bounds, or an unknown field
            raise UsageError(f"--b {option!r}: {exc.message}") from None
    return params


def _judged(index: "SearchIndex", queries_file: str) -> "list[JudgedQuery]":
    """The labelled queries of ``queries_file`` resolved to ``index``'s tools."""
    from toolfind.eval import queries

    return queries.resolve_queries(index, queries.load_queries(queries_file))


@app.command("eval")
@reports_errors
def eval_(
    queries_file: QueriesArg,
    fail_under: FailUnderOpt = None,
    worst: WorstOpt = 10,
    weight: WeightOpt = None,
    k1: K1Opt = None,
    b: BOpt = None,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_cache: NoCacheOpt = False,
    semantic: SemanticOpt = None,
    color: ColorOpt = "auto",
    rerank: RerankOpt = None,
) -> None:
    """Measure ranking on labelled queries: MRR@10, Recall@1/5/10, NDCG@10, overall and per split.

    Example: toolfind eval queries.yaml --fail-under ndcg@10=80
    """
    from toolfind.eval import evaluate
    from toolfind.output import wire

    index = open_index(catalog, no_cache, semantic=semantic, rerank=rerank)
    if index.semantic is not None:
        warn(f"Semantic signal on, fusion weight {index.semantic.weight:g}")
    if index.reranker is not None:
        stage = index.reranker
        warn(f"Reranker on: {stage.model.name}, weight {stage.weight:g}, depth {stage.depth}")
    thresholds = [evaluate.parse_threshold(t) for t in fail_under or ()]
    params = _scoring(index, weight, k1, b)
    judged = _judged(index, queries_file)
    with _progress_bar("Evaluating", len(judged)) as progress:
        report = evaluate.evaluate(
            index, judged, params=params, thresholds=thresholds, worst=worst, progress=progress
        )
    if json_:
        emit(wire.eval_record(report, index.tools))
    else:
        renderer(color).eval_report(report, index.tools)
    for failure in report.failures:
        warn(f"Failed: {failure}")
    if report.failures:
        raise typer.Exit(1)


@app.command()
@reports_errors
def tune(
    queries_file: QueriesArg,
    metric: MetricOpt = "ndcg@10",
    holdout: HoldoutOpt = None,
    train_split: TrainSplitOpt = None,
    seed: SeedOpt = 0,
    rounds: RoundsOpt = 3,
    write: WriteOpt = False,
    force: ForceOpt = False,
    catalog: CatalogOpt = None,
    json_: JsonOpt = False,
    no_cache: NoCacheOpt = False,
    semantic: SemanticOpt = None,
    color: ColorOpt = "auto",
    rerank: RerankOpt = None,
) -> None:
    """Tune field weights, per-field b, k1 and delta on labelled queries; report train and held-out metrics.

    With --semantic, also learn the fusion weight of the semantic signal on the training
    queries (reported on stderr and in --json, written as semantic_weight with --write); with
    --rerank, the reranker's weight and depth (rerank_weight, rerank_depth). --write refuses
    (exit 1) settings that score worse on the held-out queries than the settings in use;
    --force writes them anyway.

    Example: toolfind tune queries.yaml --holdout 0.3 --write
    """
    from toolfind.eval import tuning
    from toolfind.output import wire

    if force and not write:
        raise UsageError("--force only applies with --write")
    index = open_index(catalog, no_cache, semantic=semantic, rerank=rerank)
    judged = _judged(index, queries_file)
    with _progress_bar("Tuning", None) as progress:
        tuned = tuning.tune(
            index,
            judged,
            metric=metric,
            holdout=holdout,
            train_split=train_split,
            seed=seed,
            rounds=rounds,
            progress=progress,
        )
    for note in tuned.notes:
        warn(note)
    if json_:
        emit(wire.tune_record(tuned.report))
    else:
        renderer(color).tune_report(tuned.report)
    if write and not tuning.write(tuned, catalog or (), force=force, say=warn):
        raise typer.Exit(1)


def _progress_bar(label: str, total: int | None) -> Any:
    """A Rich progress bar on a terminal's stderr, fed by the core's (done, total) callback."""
    if sys.stderr.isatty():
        return renderer().progress_bar(label, total)
    from contextlib import nullcontext

    return nullcontext(None)
