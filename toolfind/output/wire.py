"""What toolfind writes for programs: every ``--json`` and MCP result record, shared by the
CLI, the API and serve-mcp (here and in ``output.schemas`` are the only places JSON keys are
spelled; changing one is a CHANGELOG entry), and the record formats (``jsonl``, ``csv``,
``tsv``). Text it did not write is cleaned and file names rendered by ``output.text``; JSON is
written by ``output.encode``.

The warm fast path imports this module for every ``search --json``: it imports nothing at load
but ``output.text``, ``output.encode`` and ``output.schemas`` (unicodedata when a text needs it).
"""

from __future__ import annotations

from toolfind.output import schemas
from toolfind.output.encode import dumps
from toolfind.output.text import clean_text, render_path, render_text, spreadsheet_cell

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from toolfind.config import ConfigFile, Setting
    from toolfind.models import (
        Category,
        Finding,
        ScoringParams,
        SearchResult,
        Similar,
        TermContribution,
        Tool,
    )
    from toolfind.semantic.models import Installed
    from toolfind.store.segment import ToolRecord
    from toolfind.store.why import Why

    #: What the records and the format writer read of a tool: a Tool, or the warm path's view.
    ToolLike = Tool | ToolRecord


#: Descriptions longer than this are cut in search results (``show`` gives the whole text).
DESCRIPTION_LIMIT = 1000

#: The keys every record of a kind has, in output order (``output.schemas`` defines those it
#: has a schema of). A hit's ``schema`` and ``explain`` appear only when included.
HIT_KEYS: tuple[str, ...] = tuple(schemas.HIT_SCHEMA["required"])
SIMILAR_KEYS: tuple[str, ...] = tuple(schemas.SIMILAR_SCHEMA["required"])
CATEGORY_KEYS: tuple[str, ...] = tuple(schemas.CATEGORY_SCHEMA["required"])
ROW_KEYS = ("name", "namespace", "summary", "tags", "deferred")
SUMMARY_KEYS = ("name", "namespace", "summary")
FINDING_KEYS = ("file", "line", "path", "severity", "message", "rule")
EXPLAIN_KEYS = ("term", "query_word", "field", "tf", "idf", "length_norm", "weight", "score")
METRICS_KEYS = ("mrr_at_10", "recall_at_1", "recall_at_5", "recall_at_10", "ndcg_at_10", "count")

SCORE_DIGITS = 6
CONFIDENCE_DIGITS = 3


def score(value: float) -> float:
    return round(value, SCORE_DIGITS)


def hit_record(
    tool: ToolLike,
    score_: float,
    match: str = "ranked",
    *,
    include_schema: bool = False,
    explanation: Sequence[TermContribution] = (),
    confidence: float = 0.0,
    place: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """A search hit. Deferred tools always carry their input schema: search is how an agent
    finds them, and it must be able to call one at once. ``source.file`` is the catalog file
    as the run named it, or what ``place`` makes of it (serve-mcp: no local path)."""
    source = tool.source
    record: dict[str, Any] = {
        "name": tool.name,
        "namespace": tool.namespace,
        "description": clean_text(tool.description, DESCRIPTION_LIMIT),
        "score": round(score_, SCORE_DIGITS),
        "confidence": round(confidence, CONFIDENCE_DIGITS),
        "match": match,
        "deferred": tool.defer,
        "tags": list(tool.all_tags),
        "source": {"file": None, "pointer": None}
        if source is None
        else {
            "file": render_path(source.file if place is None else place(source.file)),
            "pointer": source.pointer,
        },
    }
    if include_schema or tool.defer:
        record["schema"] = dict(tool.parameters)
    if explanation:
        record["explain"] = [{k: getattr(c, k) for k in EXPLAIN_KEYS} for c in explanation]
    return record


def search_document(
    query: str,
    hits: list[dict[str, Any]],
    unmatched_terms: list[str],
    corrections: Mapping[str, str] | None,
    stages: Sequence[str],
) -> dict[str, Any]:
    """The search record of already built :func:`hit_record` hits; ``corrections`` maps each
    query word read as another (a typo) to the word it was read as; ``stages`` are the
    ranking stages that ran (``SearchResult.stages``)."""
    return {
        "query": query,
        "hits": hits,
        "unmatched_terms": unmatched_terms,
        "corrections": dict(corrections or {}),
        "stages": list(stages),
    }


def search_record(
    result: SearchResult,
    *,
    include_schema: bool = False,
    callable_: Callable[[Tool], bool] | None = None,
    note: str = "",
    backends_connecting: int = 0,
    place: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """The search record; with ``callable_`` (serve-mcp), each hit says whether a backend
    serves it (``callable``); a ``note`` (serve-mcp: no confident match) is added as it is;
    ``place`` (serve-mcp) names each hit's catalog file (:func:`hit_record`).
    ``backends_connecting`` (serve-mcp): how many backend servers are still connecting for
    the first time, so their tools could not be searched yet (the key is there only when
    some are)."""
    hits = hit_records(result, include_schema=include_schema, callable_=callable_, place=place)
    record = search_document(
        result.query, hits, list(result.unmatched_terms), dict(result.corrections), result.stages
    )
    if note:
        record["note"] = note
    if backends_connecting:
        record["backends_connecting"] = backends_connecting
    return record


def why_record(why: Why) -> dict[str, Any]:
    """``search --why TOOL --json``: where the tool ranks for the query and why not higher
    (``store.why.Why``); keys as ``schemas.WHY_SCHEMA`` defines them."""
    hit, first, result = why.hit, why.first, why.result

    def share(part: float, total: float) -> float:
        return round(part / total, CONFIDENCE_DIGITS) if total > 0.0 else 0.0

    signals = why.by_signal()
    mine, theirs = sum(s[1] for s in signals), sum(s[2] for s in signals)
    return {
        "query": result.query,
        "name": why.tool.name,
        "namespace": why.tool.namespace,
        "rank": why.rank,
        "depth": why.depth,
        "score": None if hit is None else score(hit.score),
        "confidence": None if hit is None else round(hit.confidence, CONFIDENCE_DIGITS),
        "lacks": list(why.lacks),
        "first": None
        if first is None
        else {
            "name": first.tool.name,
            "namespace": first.tool.namespace,
            "score": score(first.score),
            "confidence": round(first.confidence, CONFIDENCE_DIGITS),
        },
        "words": [
            {"word": word, "score": score(a), "first": score(b)} for word, a, b in why.by_word()
        ],
        "signals": [
            {
                "signal": signal,
                "score": score(a),
                "share": share(a, mine),
                "first": score(b),
                "first_share": share(b, theirs),
            }
            for signal, a, b in signals
        ],
        "unmatched_terms": list(result.unmatched_terms),
        "corrections": dict(result.corrections),
    }


def hit_records(
    result: SearchResult,
    *,
    include_schema: bool = False,
    callable_: Callable[[Tool], bool] | None = None,
    place: Callable[[str], str] | None = None,
) -> list[dict[str, Any]]:
    """The search record's ``hits``: one record a hit (``search --format jsonl`` prints them);
    ``place`` as for :func:`hit_record`."""
    hits = []
    for h in result.hits:
        hit = hit_record(
            h.tool,
            h.score,
            h.match,
            include_schema=include_schema,
            explanation=h.explanation,
            confidence=h.confidence,
            place=place,
        )
        if callable_ is not None:
            hit["callable"] = callable_(h.tool)
        hits.append(hit)
    return hits


#: ``list`` and ``search`` output formats besides a table (and ``--json``): one record a line.
RECORD_FORMATS = ("jsonl", "csv", "tsv")


def records_text(
    records: Iterable[Mapping[str, Any]], fmt: str, columns: Sequence[str] = ()
) -> str:
    """``records`` (the ``--json`` records of a command: ``list``'s tools, ``search``' hits...)
    one a line, with a final newline.

    ``jsonl``: each record as compact JSON ("" for none). ``csv`` (RFC 4180) and ``tsv`` (tabs
    and line breaks in a value become spaces, nothing is quoted): a header of ``columns`` (the
    command's record keys, so the same whatever the records hold: an empty result is the header
    alone), then a row a record; ``source`` spreads over ``source.file`` and
    ``source.pointer``, a list of strings is joined by commas, another list or object (a
    schema) is compact JSON, a boolean ``true``/``false``, null or a missing key an empty cell;
    a cell a spreadsheet would take for a formula starts with ``'`` (`text.spreadsheet_cell`).
    """
    if fmt == "jsonl":
        return "".join(dumps(record, compact=True) + "\n" for record in records)
    header = [
        part
        for key in columns
        for part in ((f"{key}.file", f"{key}.pointer") if key == "source" else (key,))
    ]
    table = [header, *([row.get(key, "") for key in header] for row in map(_flat, records))]
    table = [[spreadsheet_cell(cell) for cell in line] for line in table]
    if fmt == "tsv":
        clean = str.maketrans("\t\n\r", "   ")
        return "".join("\t".join(v.translate(clean) for v in line) + "\n" for line in table)
    import csv
    import io

    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(table)
    return out.getvalue()


def _flat(record: Mapping[str, Any]) -> dict[str, str]:
    row: dict[str, str] = {}
    for key, value in record.items():
        if key == "source" and isinstance(value, dict):
            for sub, item in value.items():
                row[f"{key}.{sub}"] = _cell(item)
        else:
            row[key] = _cell(value)
    return row


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ",".join(value)
    if isinstance(value, list | dict):
        return dumps(value, compact=True)
    return str(value)


def tool_row(tool: Tool) -> dict[str, Any]:
    """One row of ``toolfind list``."""
    return {
        "name": tool.name,
        "namespace": tool.namespace,
        "summary": clean_text(tool.summary, DESCRIPTION_LIMIT),
        "tags": list(tool.all_tags),
        "deferred": tool.defer,
    }


def similar_record(similar: Similar) -> dict[str, Any]:
    return {
        "name": similar.tool.name,
        "namespace": similar.tool.namespace,
        "description": clean_text(similar.tool.description, DESCRIPTION_LIMIT),
        "score": score(similar.score),
        "shared_terms": list(similar.shared_terms),
    }


def similar_tools_record(tool: ToolLike, related: Sequence[Similar]) -> dict[str, Any]:
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
        "file": None if server.file is None else render_path(server.file),
        "tool_count": server.tool_count,
        "added": list(server.added),
        "removed": list(server.removed),
        "changed": list(server.changed),
        "backup": None if server.backup is None else render_path(server.backup),
        "error": None if server.error is None else render_text(server.error),
    }


def metrics_record(metrics: Any) -> dict[str, Any]:
    """Mean metrics: ``mrr_at_10``, ``recall_at_1/5/10``, ``ndcg_at_10`` (0..1) and ``count``."""
    return {key: getattr(metrics, key) for key in METRICS_KEYS}


def params_record(params: ScoringParams) -> dict[str, Any]:
    """Scoring settings as ``toolfind.toml`` spells them."""
    from toolfind.models import FIELDS

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
        "fusion_weight": None if report.fusion is None else report.fusion.weight,
        "fusion": None
        if report.fusion is None
        else {
            "weight_before": report.fusion.before,
            "weight": report.fusion.weight,
            "train": report.fusion.train,
            "holdout_before": maybe(report.fusion.holdout_before),
            "holdout_after": maybe(report.fusion.holdout_after),
        },
    }


def categories_record(
    categories: Sequence[Category], backends: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Namespaces with counts. ``backends`` (server name -> status with ``available`` and
    ``detail``) adds ``available`` (and ``detail`` when down) to the backends' namespaces, and
    lists a backend that has no tools (it never started) with a count of 0."""
    records = [
        {
            "name": c.name,
            "tool_count": c.tool_count,
            "deferred_count": c.deferred_count,
            "tags": list(c.tags),
        }
        for c in categories
    ]
    if backends:
        by_name = {r["name"]: r for r in records}
        for name, status in sorted(backends.items()):
            record = by_name.get(name)
            if record is None:
                record = {"name": name, "tool_count": 0, "deferred_count": 0, "tags": []}
                records.append(record)
            record["available"] = bool(status.available)
            if getattr(status, "state", ""):
                record["state"] = str(status.state)
            if not status.available:
                record["detail"] = str(status.detail)
    return {
        "categories": records,
        "total_categories": len(records),
        "total_tools": sum(r["tool_count"] for r in records),
    }


def summary_record(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "namespace": tool.namespace, "summary": clean_text(tool.summary)}


def findings_records(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """``validate --json``: each finding, its file as :func:`render_path` shows it."""
    records = [{k: getattr(f, k) for k in FINDING_KEYS} for f in findings]
    for record in records:
        record["file"] = render_path(record["file"])
        record["message"] = render_text(record["message"])
    return records


def cache_info_record(path: str, exists: bool, files: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """``toolfind cache info --json``: the cache directory and its own files (name, bytes)."""
    return {
        "path": render_path(path),
        "exists": exists,
        "indexes": sum(1 for name, _ in files if name.endswith(".pickle")),
        "bytes": sum(size for _, size in files),
        "files": [{"file": render_path(name), "bytes": size} for name, size in files],
    }


def error_record(message: str, kind: str) -> dict[str, Any]:
    """An error under ``--json``: one object on stderr, besides the exit code."""
    return {"error": {"message": render_text(message), "kind": kind}}


def batch_record(record: dict[str, Any], id_: Any) -> dict[str, Any]:
    """One line of ``search --queries``: the search record, led by the input line's ``id``
    when it has one."""
    return record if id_ is None else {"id": id_, **record}


def batch_error_record(message: str, kind: str, line: int, id_: Any) -> dict[str, Any]:
    """A ``search --queries`` input line that could not run: its line number (and ``id``)
    and the error, in place of its search record."""
    record: dict[str, Any] = {} if id_ is None else {"id": id_}
    return record | {"line": line} | error_record(message, kind)


def cache_clear_record(removed: int) -> dict[str, Any]:
    """``toolfind cache clear --json``: how many cache files were deleted."""
    return {"removed": removed}


def config_file_record(file: ConfigFile) -> dict[str, Any]:
    """A config file that applies (``config.ConfigFile``): ``scope`` user or project,
    whether it exists, was named explicitly (``--config``, ``$TOOLFIND_CONFIG``), and is
    used; ``problem`` says why it is not (another user may have written it)."""
    return {
        "scope": file.scope,
        "path": str(file.path),
        "exists": file.exists,
        "explicit": file.explicit,
        "used": file.exists and file.problem is None,
        "problem": file.problem,
    }


def config_record(settings: Sequence[Setting], files: Sequence[ConfigFile]) -> dict[str, Any]:
    """``toolfind config --json``: the config files, and every setting (``config.Setting``)
    with its effective value and where it came from."""
    return {
        "files": [config_file_record(f) for f in files],
        "settings": [
            {"key": s.key, "value": s.value, "source": s.source, "origin": s.origin}
            for s in settings
        ],
    }


def cache_path_record(path: str) -> dict[str, Any]:
    """``toolfind cache path --json``."""
    return {"path": render_path(path)}


def model_record(found: Installed, problem: str) -> dict[str, Any]:
    """A model of ``toolfind model list --json`` (and ``fetch --json``): a
    ``semantic.models.Installed`` and what is wrong with it ("" if nothing)."""
    model = found.spec
    return {
        "name": model.name,
        "package": model.package,
        "version": model.version,
        "installed": not problem,
        "problem": problem or None,
        "path": str(found.path),
        "licence": model.licence,
        "upstream": model.upstream,
    }


def model_removed_record(name: str, path: str) -> dict[str, Any]:
    """``toolfind model remove --json``."""
    return {"removed": name, "path": path}


def model_embedded_record(name: str, tools: int, embedded: int) -> dict[str, Any]:
    """``toolfind model embed --json``: the model, the catalog's tools, how many were embedded
    now (the others were stored already)."""
    return {"model": name, "tools": tools, "embedded": embedded}


# -- toolfind usage: what was learned from use -------------------------------------------------


def _iso(at: int) -> str:
    """Unix seconds as ISO 8601, UTC, to the second."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def usage_record(usage: Any) -> dict[str, Any]:
    """A stored record (``store.usage.Usage``) of ``toolfind usage list --json``."""
    return {
        "time": _iso(usage.at),
        "request": clean_text(usage.request),
        "tool": clean_text(usage.qualified),
        "rank": usage.rank or None,
        "session": usage.session or None,
    }


def usage_tool_record(learned: Any) -> dict[str, Any]:
    """What was learned about one tool (``store.usage_ops.Learned``)."""
    return {
        "tool": clean_text(learned.qualified),
        "records": learned.records,
        "sessions": learned.sessions,
        "last_used": _iso(learned.last_used),
        "words": [clean_text(w) for w in learned.words],
    }


def usage_stats_record(path: str, size: int, records: int, tools: Sequence[Any]) -> dict[str, Any]:
    """``toolfind usage stats --json``: the store, and what was learned per tool."""
    return {
        "path": render_path(path),
        "bytes": size,
        "records": records,
        "tools": [usage_tool_record(t) for t in tools],
    }


def labelled_query_record(request: str, tool: str, number: int) -> dict[str, Any]:
    """One labelled query of ``toolfind usage export`` (an entry ``eval`` and ``tune`` read)."""
    return {"query": request, "relevant": [tool], "id": f"usage-{number}"}


def usage_export_record(file: str, count: int) -> dict[str, Any]:
    """``toolfind usage export FILE --json``: the file written and how many queries."""
    return {"file": render_path(file), "count": count}


def usage_import_record(done: Any) -> dict[str, Any]:
    """``toolfind usage import --json``: records added, lines already stored, problems."""
    return {
        "imported": done.added,
        "already_stored": done.already,
        "problems": [clean_text(p) for p in done.problems],
        "more_problems": done.more,
    }


def usage_removed_record(removed: int, tool: str | None = None) -> dict[str, Any]:
    """``toolfind usage forget --json`` (with ``tool``) and ``clear --json``."""
    record: dict[str, Any] = {"removed": removed}
    if tool is not None:
        record["tool"] = clean_text(tool)
    return record
