"""The commands that check catalogs and ranking: validate, eval and tune."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from toolfind.cli.common import (
    CatalogOpt,
    ColorOpt,
    JsonOpt,
    NoCacheOpt,
    RerankOpt,
    SemanticOpt,
    WeightOpt,
    _emit,
    _fail,
    _open,
    _render,
    _warn,
    app,
    reports_errors,
)
from toolfind.errors import UsageError

# -- validate ------------------------------------------------------------------------------------


@app.command()
@reports_errors
def validate(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            help="Catalog files or directories (default: the catalogs in use).", metavar="PATH..."
        ),
    ] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too.")] = False,
    queries: Annotated[
        str | None,
        typer.Option("--queries", help="Labelled queries: add findability lint.", metavar="FILE"),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore",
            help="Leave out the warnings of this rule, e.g. param-description (repeatable).",
            metavar="RULE",
        ),
    ] = None,
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
        _fail(f"--ignore: {problem}", 2)
    given = [*(paths or ()), *(catalog or ())]
    run = for_run(given)
    for line in run.warnings:
        _warn(line)
    result = catalogs.load(run.paths, max_bytes=run.max_file_size, every_problem=True)
    found = list(result.findings) + catalogs.lint(result)
    if queries is not None and result.tools:
        from toolfind.eval.evaluate import findability_findings
        from toolfind.eval.queries import load_queries
        from toolfind.store.index import SearchIndex

        index = SearchIndex.build(result.tools, run.params)
        found += findability_findings(index, load_queries(Path(queries)), file=queries)
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
        _emit(wire.findings_records(found))
    else:
        _render(color).findings(found, len(result.files), len(result.tools), counts=not silent)
    if silent:
        from toolfind.store.run import nothing_loaded

        raise nothing_loaded(given)
    if errors or (strict and found):
        raise typer.Exit(1)


# -- eval / tune --------------------------------------------------------------------------------

QueriesArg = Annotated[
    str, typer.Argument(help="Labelled queries file (YAML, JSON or JSON Lines).", metavar="QUERIES")
]
K1Opt = Annotated[float | None, typer.Option("--k1", help="Term-frequency saturation k1 to try.")]
BOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--b",
        help="Length normalisation: a number for every field, or FIELD=B (repeatable).",
        metavar="B",
    ),
]


def _scoring(index: Any, weight: list[str] | None, k1: float | None, b: list[str] | None) -> Any:
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


def _judged(index: Any, queries_file: str) -> Any:
    from toolfind.eval import queries

    return queries.resolve_queries(index, queries.load_queries(Path(queries_file)))


@app.command("eval")
@reports_errors
def eval_(
    queries_file: QueriesArg,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            help="Exit 1 when a metric is lower, in percent as printed, e.g. ndcg@10=80"
            " (a value up to 1 is a fraction; repeatable).",
            metavar="METRIC=PCT",
        ),
    ] = None,
    worst: Annotated[
        int, typer.Option("--worst", min=0, help="How many of the worst queries to list.")
    ] = 10,
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

    index = _open(catalog, no_cache, semantic=semantic, rerank=rerank)
    if index.semantic is not None:
        _warn(f"Semantic signal on, fusion weight {index.semantic.weight:g}")
    if index.reranker is not None:
        stage = index.reranker
        _warn(f"Reranker on: {stage.model.name}, weight {stage.weight:g}, depth {stage.depth}")
    thresholds = [evaluate.parse_threshold(t) for t in fail_under or ()]
    params = _scoring(index, weight, k1, b)
    judged = _judged(index, queries_file)
    with _progress_bar("Evaluating", len(judged)) as progress:
        report = evaluate.evaluate(
            index, judged, params=params, thresholds=thresholds, worst=worst, progress=progress
        )
    if json_:
        _emit(wire.eval_record(report, index.tools))
    else:
        _render(color).eval_report(report, index.tools)
    for failure in report.failures:
        _warn(f"Failed: {failure}")
    if report.failures:
        raise typer.Exit(1)


@app.command()
@reports_errors
def tune(
    queries_file: QueriesArg,
    metric: Annotated[
        str, typer.Option("--metric", help="What to maximise: ndcg@10, mrr@10, recall@1/5/10.")
    ] = "ndcg@10",
    holdout: Annotated[
        float | None,
        typer.Option("--holdout", help="Hold out this share of queries at random (seeded)."),
    ] = None,
    train_split: Annotated[
        str | None, typer.Option("--train-split", help="Train on the queries of this split.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random holdout.")] = 0,
    rounds: Annotated[
        int, typer.Option("--rounds", min=1, help="Coordinate-ascent rounds at most.")
    ] = 3,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Store the chosen settings in toolfind.toml (backup kept), unless they score"
            " worse on the held-out queries than the settings in use.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="With --write: write even settings that score worse held out."
        ),
    ] = False,
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
    from toolfind.config import CONFIG_NAME, config_path
    from toolfind.config_write import write_params
    from toolfind.eval import evaluate
    from toolfind.output import wire

    if force and not write:
        raise UsageError("--force only applies with --write")
    index = _open(catalog, no_cache, semantic=semantic, rerank=rerank)
    judged = _judged(index, queries_file)
    signal, fusion_weight = index.semantic, None
    stage, rerank_settings, rerank_loss = index.reranker, None, ""
    index.use_reranker(None)  # the reranker is tuned last, over the tuned first stage
    lexical = index.with_params(index.params)
    lexical.use_semantic(None)  # field weights, b, k1 and delta are tuned on the lexical ranking
    with _progress_bar("Tuning", None) as progress:
        report = evaluate.tune(
            lexical,
            judged,
            metric=metric,
            holdout=holdout,
            train_split=train_split,
            seed=seed,
            rounds=rounds,
            progress=progress,
        )
    if signal is not None:
        tuned = index.with_params(report.params)
        tuned.use_semantic(signal)
        report = evaluate.tune_fusion(
            report, index, tuned, judged, holdout=holdout, train_split=train_split, seed=seed
        )
        assert report.fusion is not None
        fusion_weight = report.fusion.weight
        _warn(
            f"Fusion weight of the semantic signal: {fusion_weight:g} "
            f"({report.metric} on the training queries {report.fusion.train:.4f}; "
            f"in use: {report.fusion.before:g})"
        )
    if stage is not None:
        learned = _tune_rerank(
            index,
            report.params,
            signal,
            fusion_weight,
            stage,
            judged,
            holdout=holdout,
            train_split=train_split,
            seed=seed,
            metric=metric,
        )
        rerank_settings = _tune_rerank_report(learned, metric)
        rerank_loss = learned[3]
    if json_:
        _emit(wire.tune_record(report))
    else:
        _render(color).tune_report(report)
    if write:
        import os

        from toolfind.userfiles import working_dir

        loss = evaluate.holdout_loss(report) or rerank_loss
        if loss and not force:
            _warn(f"Not written: {loss}. --force writes them anyway.")
            raise typer.Exit(1)
        if loss:
            _warn(f"Writing anyway (--force): {loss}.")
        target = config_path(os.environ, working_dir()) or Path(CONFIG_NAME)
        backup = write_params(
            target,
            report.params,
            fusion_weight,
            *(rerank_settings or (None, None)),
        )
        _warn(
            f"Wrote the chosen settings to {target}"
            + (f" (previous file kept as {backup})" if backup else "")
        )


def _tune_rerank(
    index: Any,
    params: Any,
    signal: Any,
    fusion_weight: float | None,
    stage: Any,
    judged: Any,
    *,
    holdout: float | None = None,
    train_split: str | None = None,
    seed: int = 0,
    metric: str = "ndcg@10",
) -> Any:
    """The rerank weight and depth learned on the training queries, over the tuned first
    stage: ((weight, depth), its value, the value without the reranker, and why it must not
    be written: ``reranking.holdout_loss``, "" unless it scores worse on the held-out queries
    than the weight and depth in use)."""
    from toolfind.eval import evaluate, reranking

    tuned = index.with_params(params)
    if signal is not None:
        tuned.use_semantic(signal if fusion_weight is None else signal.with_weight(fusion_weight))
    tuned.use_reranker(stage)
    train, held = evaluate.split_queries(
        judged, holdout=holdout, train_split=train_split, seed=seed
    )
    found = reranking.candidates(tuned, train, max(reranking.DEPTHS))
    points = reranking.grid(found, metric=metric)
    chosen = reranking.best(points)
    values = {(w, d): v for w, d, v in points}
    held_found = (
        reranking.candidates(tuned, held, max(*reranking.DEPTHS, stage.depth)) if held else []
    )
    loss = reranking.holdout_loss(held_found, chosen, (stage.weight, stage.depth), metric)
    return chosen, values[chosen], values[(0.0, min(reranking.DEPTHS))], loss


def _tune_rerank_report(learned: Any, metric: str) -> tuple[float, int]:
    (weight, depth), value, without, _ = learned
    _warn(
        f"Reranker: weight {weight:g}, depth {depth} ({metric} on the training queries "
        f"{value:.4f}; without the reranker {without:.4f})"
    )
    return weight, depth


def _progress_bar(label: str, total: int | None) -> Any:
    """A Rich progress bar on a terminal's stderr, fed by the core's (done, total) callback."""
    if sys.stderr.isatty():
        return _render().progress_bar(label, total)
    from contextlib import nullcontext

    return nullcontext(None)
