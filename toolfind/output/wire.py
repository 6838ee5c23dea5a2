"""Every ``--json`` and MCP result shape: the one place JSON keys are spelled.

The CLI serialises these records and ``serve-mcp`` returns them as structured content, so
both share one schema. Changing a key here is a CHANGELOG entry.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence

from toolfind.models import (
    FIELDS,
    Category,
    Finding,
    Hit,
    ScoringParams,
    SearchResult,
    Similar,
    Source,
    Tool,
)
from toolfind.store import segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Descriptions longer than this are cut in search results (``show`` gives the whole text).
DESCRIPTION_LIMIT = 1000

#: Hit keys, in output order. ``schema`` and ``explain`` appear only when included.
HIT_KEYS = ("name", "namespace", "description", "score", "match", "deferred", "tags", "source")
SEARCH_KEYS = ("query", "hits", "unmatched_terms")
ROW_KEYS = ("name", "namespace", "summary", "tags", "deferred")
SIMILAR_KEYS = ("name", "namespace", "description", "score", "shared_terms")
SIMILAR_TOOLS_KEYS = ("name", "namespace", "similar")
PULL_KEYS = (
    "server",
    "status",
    "file",
    "tool_count",
    "added",
    "removed",
    "changed",
    "backup",
    "error",
)
CATEGORY_KEYS = ("name", "tool_count", "deferred_count", "tags")
CATEGORIES_KEYS = ("categories", "total_categories", "total_tools")
SUMMARY_KEYS = ("name", "namespace", "summary")
FINDING_KEYS = ("file", "line", "path", "severity", "message")
EXPLAIN_KEYS = ("term", "field", "tf", "idf", "length_norm", "weight", "score")

SCORE_DIGITS = 6


def dumps(document: Any) -> str:
    """The one JSON rendering: indented by 2, non-ASCII kept as is.

    That is ``json.dumps(document, indent=2, ensure_ascii=False)``, byte for byte (tested),
    written by :func:`segment.dumps`: with an indent json encodes in Python too, and importing
    it (and its ``re``) costs a warm command half of Python's start-up. A value that function
    refuses (not plain JSON data, or a cycle) goes to json, which handles or reports it.
    """
    try:
        return segment.dumps(document)
    except (TypeError, ValueError, RecursionError):
        import json

        return json.dumps(document, indent=2, ensure_ascii=False)


def clean_text(text: str, limit: int | None = None) -> str:
    """Text safe to show a model: invisible and control characters removed, length capped.

    Zero-width, bidi-control and Unicode tag characters (category Cf) and control characters
    other than newline and tab (Cc) can hide instructions from a human reviewer.
    """
    if text.isascii() and text.isprintable() and (limit is None or len(text) <= limit):
        return text
    kept = "".join(
        ch
        for ch in text
        if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Co", "Cs")
    )
    if limit is not None and len(kept) > limit:
        kept = kept[: limit - 1].rstrip() + "…"
    return kept


def score(value: float) -> float:
    return round(value, SCORE_DIGITS)


def source_record(source: Source | None) -> dict[str, Any]:
    if source is None:
        return {"file": None, "pointer": None}
    return {"file": source.file, "pointer": source.pointer}


def hit_record(hit: Hit, *, include_schema: bool = False) -> dict[str, Any]:
    """A search hit. Deferred tools always carry their input schema: search is how an agent
    finds them, and it must be able to call one at once."""
    tool = hit.tool
    record: dict[str, Any] = {
        "name": tool.name,
        "namespace": tool.namespace,
        "description": clean_text(tool.description, DESCRIPTION_LIMIT),
        "score": score(hit.score),
        "match": hit.match,
        "deferred": tool.defer,
        "tags": list(tool.all_tags),
        "source": source_record(tool.source),
    }
    if include_schema or tool.defer:
        record["schema"] = dict(tool.parameters)
    if hit.explanation:
        record["explain"] = [
            {
                "term": c.term,
                "field": c.field,
                "tf": c.tf,
                "idf": c.idf,
                "length_norm": c.length_norm,
                "weight": c.weight,
                "score": c.score,
            }
            for c in hit.explanation
        ]
    return record


def search_record(result: SearchResult, *, include_schema: bool = False) -> dict[str, Any]:
    return {
        "query": result.query,
        "hits": [hit_record(h, include_schema=include_schema) for h in result.hits],
        "unmatched_terms": list(result.unmatched_terms),
    }


def tool_row(tool: Tool) -> dict[str, Any]:
    """One row of ``toolfind list``."""
    return {
        "name": tool.name,
        "namespace": tool.namespace,
        "summary": clean_text(tool.summary, DESCRIPTION_LIMIT),
        "tags": list(tool.all_tags),
        "deferred": tool.defer,
    }


def tool_document(tool: Tool, fmt: str = "native") -> dict[str, Any]:
    """The full schema of one tool in a given format (``show``, ``get_tool``)."""
    from toolfind.catalog.formats import tool_to_format

    return tool_to_format(tool, fmt)


def similar_record(similar: Similar) -> dict[str, Any]:
    return {
        "name": similar.tool.name,
        "namespace": similar.tool.namespace,
        "description": clean_text(similar.tool.description, DESCRIPTION_LIMIT),
        "score": score(similar.score),
        "shared_terms": list(similar.shared_terms),
    }


def similar_tools_record(tool: Tool, related: Sequence[Similar]) -> dict[str, Any]:
    """``similar_tools``' structured result: MCP structured content must be an object."""
    return {
        "name": tool.name,
        "namespace": tool.namespace,
        "similar": [similar_record(s) for s in related],
    }


def pull_record(server: Any) -> dict[str, Any]:
    """One server's outcome in ``toolfind catalog pull --json``."""
    return {
        "server": server.server,
        "status": server.status,
        "file": server.file,
        "tool_count": server.tool_count,
        "added": list(server.added),
        "removed": list(server.removed),
        "changed": list(server.changed),
        "backup": server.backup,
        "error": server.error,
    }


def metrics_record(metrics: Any) -> dict[str, Any]:
    """Mean metrics: ``mrr_at_10``, ``recall_at_1/5/10``, ``ndcg_at_10`` (0..1) and ``count``."""
    return {
        "mrr_at_10": metrics.mrr_at_10,
        "recall_at_1": metrics.recall_at_1,
        "recall_at_5": metrics.recall_at_5,
        "recall_at_10": metrics.recall_at_10,
        "ndcg_at_10": metrics.ndcg_at_10,
        "count": metrics.count,
    }


def params_record(params: ScoringParams) -> dict[str, Any]:
    """Scoring settings as ``toolfind.toml`` spells them."""
    return {
        "weights": params.weights.as_dict(),
        "k1": params.k1,
        "b": {f: params.b_for(f) for f in FIELDS},
        "delta": params.delta,
    }


def eval_record(report: Any, tools: Sequence[Tool]) -> dict[str, Any]:
    """``toolfind eval --json``."""
    return {
        "overall": metrics_record(report.overall),
        "splits": {name: metrics_record(m) for name, m in sorted(report.splits.items())},
        "worst": [
            {
                "id": o.query.id,
                "query": o.query.query,
                "split": o.query.split,
                "ndcg_at_10": o.metrics["ndcg@10"],
                "relevant": [
                    {"name": tools[doc].qualified_name, "rank": rank}
                    for doc, rank in zip(o.query.relevant_ids, o.ranks, strict=True)
                ],
            }
            for o in report.worst
        ],
        "unretrieved": [t.qualified_name for t in report.unretrieved],
        "missed": [t.qualified_name for t in report.missed],
        "failures": list(report.failures),
        "params": params_record(report.params),
    }


def tune_record(report: Any) -> dict[str, Any]:
    """``toolfind tune --json``."""

    def maybe(metrics: Any) -> dict[str, Any] | None:
        return None if metrics is None else metrics_record(metrics)

    return {
        "metric": report.metric,
        "before": params_record(report.before),
        "params": params_record(report.params),
        "train_before": metrics_record(report.train_before),
        "train_after": metrics_record(report.train_after),
        "holdout_before": maybe(report.holdout_before),
        "holdout_after": maybe(report.holdout_after),
        "train_size": report.train_size,
        "holdout_size": report.holdout_size,
        "trials": report.trials,
    }


def category_record(category: Category) -> dict[str, Any]:
    return {
        "name": category.name,
        "tool_count": category.tool_count,
        "deferred_count": category.deferred_count,
        "tags": list(category.tags),
    }


def categories_record(
    categories: Sequence[Category], backends: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Namespaces with counts. ``backends`` (server name -> status with ``available`` and
    ``detail``) adds ``available`` (and ``detail`` when down) to the backends' namespaces, and
    lists a backend that has no tools (it never started) with a count of 0."""
    records = [category_record(c) for c in categories]
    if backends:
        by_name = {r["name"]: r for r in records}
        for name, status in sorted(backends.items()):
            record = by_name.get(name)
            if record is None:
                record = {"name": name, "tool_count": 0, "deferred_count": 0, "tags": []}
                records.append(record)
            record["available"] = bool(status.available)
            if not status.available:
                record["detail"] = str(status.detail)
    return {
        "categories": records,
        "total_categories": len(records),
        "total_tools": sum(r["tool_count"] for r in records),
    }


def summary_record(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "namespace": tool.namespace, "summary": clean_text(tool.summary)}


def finding_record(finding: Finding) -> dict[str, Any]:
    return {
        "file": finding.file,
        "line": finding.line,
        "path": finding.path,
        "severity": finding.severity,
        "message": finding.message,
    }


def findings_records(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    return [finding_record(f) for f in findings]
