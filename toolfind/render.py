"""Human output: Rich tables and panels. The only module that imports rich.

Results go to stdout; progress goes to stderr and only when stderr is a terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from toolfind import wire
from toolfind.models import Category, Finding, SearchResult, Similar, Tool


def _out() -> Console:
    # Built per call so that tests capturing sys.stdout see the output.
    return Console(file=sys.stdout, highlight=False, soft_wrap=True)


def _tags(tags: Sequence[str]) -> str:
    return ", ".join(tags)


def search(result: SearchResult, *, explain: bool = False) -> None:
    console = _out()
    if not result.hits:
        console.print("No tools found.")
        return
    table = Table("#", "tool", "score", "description", "tags", show_lines=False)
    for rank, hit in enumerate(result.hits, 1):
        name = escape(hit.tool.qualified_name)
        if hit.match == "exact":
            name += " [bold](exact)[/bold]"
        if hit.tool.defer:
            name += " [dim](deferred)[/dim]"
        table.add_row(
            str(rank),
            name,
            f"{wire.score(hit.score):.3f}",
            escape(wire.clean_text(hit.tool.summary, 160)),
            escape(_tags(hit.tool.all_tags)),
        )
    console.print(table)
    if explain:
        for hit in result.hits:
            explanation(hit.tool.qualified_name, hit.score, hit.explanation)


def explanation(name: str, total: float, contributions: Sequence[Any]) -> None:
    console = _out()
    table = Table(
        "term",
        "field",
        "tf",
        "idf",
        "length norm",
        "weight",
        "score",
        title=f"{escape(name)}: {total:.4f}",
    )
    for c in contributions:
        table.add_row(
            escape(c.term),
            c.field,
            f"{c.tf:g}",
            f"{c.idf:.4f}",
            f"{c.length_norm:.4f}",
            f"{c.weight:g}",
            f"{c.score:.4f}",
        )
    console.print(table)


def tools(rows: Sequence[Tool]) -> None:
    console = _out()
    if not rows:
        console.print("No tools.")
        return
    table = Table("tool", "namespace", "summary", "tags", "deferred")
    for tool in rows:
        table.add_row(
            escape(tool.name),
            escape(tool.namespace),
            escape(wire.clean_text(tool.summary, 160)),
            escape(_tags(tool.all_tags)),
            "yes" if tool.defer else "",
        )
    console.print(table)


def tool(tool: Tool, document: dict[str, Any]) -> None:
    console = _out()
    console.print(
        f"[bold]{escape(tool.qualified_name)}[/bold]"
        + (" [dim](deferred)[/dim]" if tool.defer else "")
    )
    if tool.source is not None:
        console.print(f"[dim]{escape(str(tool.source))}[/dim]")
    console.print_json(wire.dumps(document))


def similar(name: str, items: Sequence[Similar]) -> None:
    console = _out()
    if not items:
        console.print(f"No tools similar to {escape(name)}.")
        return
    table = Table(
        "tool", "score", "shared terms", "description", title=f"Similar to {escape(name)}"
    )
    for item in items:
        table.add_row(
            escape(item.tool.qualified_name),
            f"{wire.score(item.score):.3f}",
            escape(", ".join(item.shared_terms)),
            escape(wire.clean_text(item.tool.summary, 120)),
        )
    console.print(table)


def categories(items: Sequence[Category]) -> None:
    console = _out()
    table = Table("namespace", "tools", "deferred", "top tags")
    for c in items:
        table.add_row(
            escape(c.name), str(c.tool_count), str(c.deferred_count), escape(_tags(c.tags))
        )
    console.print(table)
    console.print(f"{len(items)} namespaces, {sum(c.tool_count for c in items)} tools")


def findings(items: Sequence[Finding], files: int, tools: int) -> None:
    console = _out()
    for f in items:
        style = "red" if f.severity == "error" else "yellow"
        console.print(f"[{style}]{f.severity}[/{style}] {escape(str(f))}")
    errors = sum(1 for f in items if f.severity == "error")
    warnings = len(items) - errors
    console.print(f"{files} files, {tools} tools: {errors} errors, {warnings} warnings")


def mapping(title: str, data: dict[str, Any]) -> None:
    console = _out()
    table = Table(title=title, show_header=False)
    for key, value in data.items():
        if not isinstance(value, list | dict):
            table.add_row(key, escape(str(value)))
    console.print(table)


def spinner(message: str) -> Any:
    """A spinner on stderr, started; the caller stops it. (The CLI starts one only when work
    has already taken a while, and only on a terminal, so pipes and CI logs stay clean.)"""
    status = Console(stderr=True).status(message)
    status.start()
    return status


def _pct(value: float) -> str:
    return f"{100 * value:.2f}"


def _metrics_row(label: str, m: Any) -> list[str]:
    return [label, str(m.count), *(_pct(v) for v in m.values())]


def eval_report(report: Any, all_tools: Sequence[Tool]) -> None:
    console = _out()
    table = Table(
        "split", "queries", "MRR@10", "R@1", "R@5", "R@10", "NDCG@10", title="Ranking quality (%)"
    )
    table.add_row(*_metrics_row("all", report.overall))
    for name, metrics in sorted(report.splits.items()):
        table.add_row(*_metrics_row(name or "-", metrics))
    console.print(table)
    if report.worst:
        worst = Table("query", "NDCG@10", "relevant tool: rank", title="Worst queries")
        for o in report.worst:
            ranks = ", ".join(
                f"{all_tools[doc].qualified_name}: {rank if rank is not None else '-'}"
                for doc, rank in zip(o.query.relevant_ids, o.ranks, strict=True)
            )
            worst.add_row(escape(o.query.query), _pct(o.metrics["ndcg@10"]), escape(ranks))
        console.print(worst)
    if report.unretrieved:
        names = ", ".join(t.qualified_name for t in report.unretrieved)
        console.print(
            f"{len(report.unretrieved)} tools no query retrieves in its top 10: {escape(names)}"
        )


def tune_report(report: Any) -> None:
    console = _out()
    table = Table(
        "",
        "queries",
        "MRR@10",
        "R@1",
        "R@5",
        "R@10",
        "NDCG@10",
        title=f"Tuning {report.metric} (%)",
    )
    table.add_row(*_metrics_row("train before", report.train_before))
    table.add_row(*_metrics_row("train after", report.train_after))
    if report.holdout_before is not None and report.holdout_after is not None:
        table.add_row(*_metrics_row("held out before", report.holdout_before))
        table.add_row(*_metrics_row("held out after", report.holdout_after))
    console.print(table)
    params = report.params
    weights = ", ".join(f"{k}={v:g}" for k, v in params.weights.as_dict().items())
    console.print(f"weights: {weights}")
    console.print(
        f"k1={params.k1:g} delta={params.delta:g} b: "
        + ", ".join(f"{f}={params.b_for(f):g}" for f in params.weights.as_dict())
    )
    console.print(f"{report.trials} trials")


@contextmanager
def progress_bar(label: str, total: int | None) -> Iterator[Any]:
    """A progress bar on stderr; yields the ``(done, total)`` callback the core calls."""
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(label, total=total)

        def update(done: int, all_: int) -> None:
            progress.update(task, completed=done, total=all_)

        yield update
