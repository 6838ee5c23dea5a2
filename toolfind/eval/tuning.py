"""``toolfind tune``'s run: the lexical settings (field weights, b, k1, delta), then the
semantic signal's fusion weight over them, then the reranker's weight and depth over the
tuned first stage (each only when its signal is on); and :func:`write`, which keeps
``tune --write`` from storing settings that score worse held out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolfind.eval import evaluate, reranking
from toolfind.models import FIELDS

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from toolfind.eval.evaluate import Progress, TuneReport
    from toolfind.eval.queries import JudgedQuery
    from toolfind.store.index import SearchIndex


@dataclass(frozen=True, slots=True)
class Tuned:
    """What :func:`tune` chose: the report (lexical settings, and the fusion weight when the
    semantic signal was on), the reranker's (weight, depth) when it was on and the one in
    use, why the rerank settings must not be written ("" when they may), the reranker's
    held-out metric (in use, chosen), and a line on each signal learned."""

    report: TuneReport
    rerank: tuple[float, int] | None = None
    rerank_loss: str = ""
    notes: tuple[str, ...] = ()
    rerank_before: tuple[float, int] | None = None
    rerank_holdout: tuple[float, float] | None = None

    def holdout_loss(self) -> str:
        """Why the chosen settings must not be written ("" when they may): any of them
        scores worse on the held-out queries than the settings in use."""
        return evaluate.holdout_loss(self.report) or self.rerank_loss

    def holdout_gain(self) -> str:
        """Why there is nothing worth writing ("" when there is): no ranking tuned scores
        better on the held-out queries than with the settings in use (or none was held
        out), or nothing changed."""
        report, key = self.report, self.report.metric
        pairs = [(report.holdout_before, report.holdout_after)]
        if report.fusion is not None:
            pairs.append((report.fusion.holdout_before, report.fusion.holdout_after))
        values = [(a.get(key), b.get(key)) for a, b in pairs if a is not None and b is not None]
        values += [self.rerank_holdout] if self.rerank_holdout is not None else []
        if not self.changes():
            return "the chosen settings are the ones in use"
        if not values:
            return (
                "no held-out queries show that the chosen settings do better (--holdout 0.3,"
                " or queries in a split other than the training one, hold some out)"
            )
        if any(after > before + 1e-12 for before, after in values):
            return ""
        return (
            f"the chosen settings score {key} {100 * values[0][1]:.2f}% on the"
            f" {report.holdout_size} held-out queries, the same as the settings in use"
        )

    def changes(self) -> dict[str, float]:
        """The settings chosen that differ from those in use, as ``toolfind.toml`` spells
        them (``k1``, ``weights.name``, ``b.tags``, ``semantic_weight``, ``rerank_depth``)."""
        before, after = self.report.before, self.report.params
        chosen: dict[str, tuple[float, float]] = {
            "k1": (before.k1, after.k1),
            "delta": (before.delta, after.delta),
        }
        for field in FIELDS:
            weights = (getattr(before.weights, field), getattr(after.weights, field))
            chosen[f"weights.{field}"] = weights
            chosen[f"b.{field}"] = (before.b_for(field), after.b_for(field))
        fusion = self.report.fusion
        if fusion is not None:
            chosen["semantic_weight"] = (fusion.before, fusion.weight)
        if self.rerank is not None and self.rerank_before is not None:
            chosen["rerank_weight"] = (self.rerank_before[0], self.rerank[0])
            chosen["rerank_depth"] = (self.rerank_before[1], self.rerank[1])
        return {key: new for key, (old, new) in chosen.items() if new != old}


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
    chosen, value, without, held = _tune_rerank(first, judged, metric=metric, **split)
    notes.append(
        f"Reranker: weight {chosen[0]:g}, depth {chosen[1]} ({metric} on the training queries "
        f"{value:.4f}; without the reranker {without:.4f})"
    )
    in_use = (stage.weight, stage.depth)
    loss = reranking.holdout_loss(held, chosen, in_use, metric)
    held_out = reranking.holdout(held, chosen, in_use, metric)
    return Tuned(report, chosen, loss, tuple(notes), in_use, held_out)


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
) -> tuple[tuple[float, int], float, float, list[reranking.Candidates]]:
    """The rerank weight and depth learned on the training queries over ``index``'s first
    stage (its rerank stage attached): (weight, depth), its value, the value without the
    reranker, and the held-out queries' candidates."""
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
    return chosen, values[chosen], values[(0.0, min(reranking.DEPTHS))], held_found


def write(
    tuned: Tuned, catalogs: Sequence[str], *, force: bool, say: Callable[[str], None]
) -> bool:
    """Store the settings chosen that differ from those in use in the ``toolfind.toml``
    that applies here (else a new one in the working directory), with the catalogs (paths
    and digests) they were tuned on, the run's over ``catalogs`` (``--catalog``), in its
    ``[tuned]`` table; saying what was done. Nothing is written when the settings score
    worse held out (returns False: a failure) or no better (returns True); ``force``
    writes them anyway. Raises ConfigError."""
    import os

    from toolfind.config import CONFIG_NAME, config_path, for_run
    from toolfind.config_write import write_settings
    from toolfind.tuned import names
    from toolfind.userfiles import working_dir

    loss, same = tuned.holdout_loss(), tuned.holdout_gain()
    changes = tuned.changes()
    if not changes:
        say(f"Not written: {same}.")
        return True
    if (loss or same) and not force:
        say(f"Not written: {loss or same}. --force writes them anyway.")
        return not loss
    if loss or same:
        say(f"Writing anyway (--force): {loss or same}.")
    target = config_path(os.environ, working_dir()) or Path(CONFIG_NAME)
    paths = for_run(catalogs).paths
    backup = write_settings(target, changes, paths)
    kept = f" (previous file kept as {backup})" if backup else ""
    keys = ", ".join(changes)
    say(f"Wrote {keys} to {target}, tuned on {names(paths)}{kept}")
    return True
