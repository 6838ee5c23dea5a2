"""``toolfind tune``'s run: the lexical settings (field weights, b, k1, delta), then the
semantic signal's fusion weight over them, then the reranker's weight and depth over the
tuned first stage (each only when its signal is on); and :func:`write`, which keeps
``tune --write`` from storing settings that score worse held out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolfind.eval import evaluate, reranking

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from toolfind.eval.evaluate import Progress, TuneReport
    from toolfind.eval.queries import JudgedQuery
    from toolfind.store.index import SearchIndex


@dataclass(frozen=True, slots=True)
class Tuned:
    """What :func:`tune` chose: the report (lexical settings, and the fusion weight when the
    semantic signal was on), the reranker's (weight, depth) when it was on, why the rerank
    settings must not be written ("" when they may), and a line on each signal learned."""

    report: TuneReport
    rerank: tuple[float, int] | None = None
    rerank_loss: str = ""
    notes: tuple[str, ...] = ()

    def holdout_loss(self) -> str:
        """Why the chosen settings must not be written ("" when they may): any of them
        scores worse on the held-out queries than the settings in use."""
        return evaluate.holdout_loss(self.report) or self.rerank_loss


def tune(
    index: SearchIndex,
    judged: Sequence[JudgedQuery],
    *,
    metric: str = "ndcg@10",
    holdout: float | None = None,
    train_split: str | None = None,
    seed: int = 0,
    rounds: int = 3,
    progress: Progress | None = None,
) -> Tuned:
    """Tune every setting of ``index``'s ranking on the training queries of ``judged``
    (``evaluate.split_queries``: ``holdout``, ``train_split``, ``seed``): the first stage
    (:func:`_first_stage`), then, with the rerank stage on, its weight and depth over the
    tuned first stage."""
    split: dict[str, Any] = {"holdout": holdout, "train_split": train_split, "seed": seed}
    stage = index.reranker
    index.use_reranker(None)  # the first stage is tuned without the reranker
    try:
        report, notes = _first_stage(index, judged, metric, rounds, progress, split)
    finally:
        index.use_reranker(stage)
    if stage is None:
        return Tuned(report, notes=tuple(notes))
    first = index.with_params(report.params)
    if index.semantic is not None and report.fusion is not None:
        first.use_semantic(index.semantic.with_weight(report.fusion.weight))
    chosen, value, without, loss = _tune_rerank(first, judged, metric=metric, **split)
    notes.append(
        f"Reranker: weight {chosen[0]:g}, depth {chosen[1]} ({metric} on the training queries "
        f"{value:.4f}; without the reranker {without:.4f})"
    )
    return Tuned(report, chosen, loss, tuple(notes))


def _first_stage(
    index: SearchIndex,
    judged: Sequence[JudgedQuery],
    metric: str,
    rounds: int,
    progress: Progress | None,
    split: dict[str, Any],
) -> tuple[TuneReport, list[str]]:
    """The lexical settings tuned on the lexical ranking of ``index`` (``evaluate.tune``),
    then, with the semantic signal on, its fusion weight over them; and a line on it."""
    lexical = index.with_params(index.params)
    lexical.use_semantic(None)
    report = evaluate.tune(
        lexical, judged, metric=metric, rounds=rounds, progress=progress, **split
    )
    if index.semantic is None:
        return report, []
    tuned = index.with_params(report.params)
    report = evaluate.tune_fusion(report, index, tuned, judged, **split)
    assert report.fusion is not None
    fusion = report.fusion
    return report, [
        f"Fusion weight of the semantic signal: {fusion.weight:g} "
        f"({report.metric} on the training queries {fusion.train:.4f}; in use: {fusion.before:g})"
    ]


def _tune_rerank(
    index: SearchIndex,
    judged: Sequence[JudgedQuery],
    *,
    metric: str,
    holdout: float | None,
    train_split: str | None,
    seed: int,
) -> tuple[tuple[float, int], float, float, str]:
    """The rerank weight and depth learned on the training queries over ``index``'s first
    stage (its rerank stage attached): (weight, depth), its value, the value without the
    reranker, and why it must not be written (``reranking.holdout_loss``)."""
    stage = index.reranker
    assert stage is not None, "tuning the reranker needs its stage attached"
    train, held = evaluate.split_queries(
        judged, holdout=holdout, train_split=train_split, seed=seed
    )
    found = reranking.candidates(index, train, max(reranking.DEPTHS))
    points = reranking.grid(found, metric=metric)
    chosen = reranking.best(points)
    values = {(w, d): v for w, d, v in points}
    held_found = (
        reranking.candidates(index, held, max(*reranking.DEPTHS, stage.depth)) if held else []
    )
    loss = reranking.holdout_loss(held_found, chosen, (stage.weight, stage.depth), metric)
    return chosen, values[chosen], values[(0.0, min(reranking.DEPTHS))], loss


def write(tuned: Tuned, *, force: bool, say: Callable[[str], None]) -> bool:
    """Store the chosen settings in the ``toolfind.toml`` that applies here (else a new one
    in the working directory), unless they score worse held out (``force`` writes them
    anyway), saying what was done. Returns whether they were written. Raises ConfigError."""
    import os

    from toolfind.config import CONFIG_NAME, config_path
    from toolfind.config_write import write_params
    from toolfind.userfiles import working_dir

    loss = tuned.holdout_loss()
    if loss and not force:
        say(f"Not written: {loss}. --force writes them anyway.")
        return False
    if loss:
        say(f"Writing anyway (--force): {loss}.")
    target = config_path(os.environ, working_dir()) or Path(CONFIG_NAME)
    fusion = None if tuned.report.fusion is None else tuned.report.fusion.weight
    backup = write_params(target, tuned.report.params, fusion, *(tuned.rerank or (None, None)))
    kept = f" (previous file kept as {backup})" if backup else ""
    say(f"Wrote the chosen settings to {target}{kept}")
    return True
