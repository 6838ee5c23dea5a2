"""What toolfind writes for programs: every ``--json`` and MCP result shape (the one place
JSON keys are spelled; changing one is a CHANGELOG entry), the one JSON encoder (:func:`dumps`)
and the one text sanitiser (:func:`clean_text`), shared by the CLI, the API and serve-mcp.

The warm fast path imports this module for every ``search --json``: it imports nothing at load
(unicodedata when a text needs it), and is one module because each costs a warm command ~0.1 ms.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
    from typing import Any

    from toolfind.models import (
        Category,
        Finding,
        ScoringParams,
        SearchResult,
        Similar,
        TermContribution,
        Tool,
    )
    from toolfind.store.segment import ToolRecord

    #: What the records and the format writer read of a tool: a Tool, or the warm path's view.
    ToolLike = Tool | ToolRecord


#: Descriptions longer than this are cut in search results (``show`` gives the whole text).
DESCRIPTION_LIMIT = 1000

#: Hit keys, in output order. ``schema`` and ``explain`` appear only when included.
HIT_KEYS = ("name", "namespace", "description", "score", "match", "deferred", "tags", "source")
SEARCH_KEYS = ("query", "hits", "unmatched_terms")
ROW_KEYS = ("name", "namespace", "summary", "tags", "deferred")
SIMILAR_KEYS = ("name", "namespace", "description", "score", "shared_terms")
SIMILAR_TOOLS_KEYS = ("name", "namespace", "similar")
CATEGORY_KEYS = ("name", "tool_count", "deferred_count", "tags")
CATEGORIES_KEYS = ("categories", "total_categories", "total_tools")
FINDING_KEYS = ("file", "line", "path", "severity", "message", "rule")
EXPLAIN_KEYS = ("term", "field", "tf", "idf", "length_norm", "weight", "score")
CACHE_INFO_KEYS = ("path", "exists", "indexes", "bytes", "files")
CACHE_FILE_KEYS = ("file", "bytes")
ERROR_KEYS = ("message", "kind")
METRICS_KEYS = ("mrr_at_10", "recall_at_1", "recall_at_5", "recall_at_10", "ndcg_at_10", "count")

SCORE_DIGITS = 6


def score(value: float) -> float:
    return round(value, SCORE_DIGITS)


def hit_record(
    tool: ToolLike,
    score_: float,
    match: str = "ranked",
    *,
    include_schema: bool = False,
    explanation: Sequence[TermContribution] = (),
) -> dict[str, Any]:
    """A search hit. Deferred tools always carry their input schema: search is how an agent
    finds them, and it must be able to call one at once."""
    source = tool.source
    record: dict[str, Any] = {
        "name": tool.name,
        "namespace": tool.namespace,
        "description": clean_text(tool.description, DESCRIPTION_LIMIT),
        "score": round(score_, SCORE_DIGITS),
        "match": match,
        "deferred": tool.defer,
        "tags": list(tool.all_tags),
        "source": {"file": None, "pointer": None}
        if source is None
        else {"file": source.file, "pointer": source.pointer},
    }
    if include_schema or tool.defer:
        record["schema"] = dict(tool.parameters)
    if explanation:
        record["explain"] = [{k: getattr(c, k) for k in EXPLAIN_KEYS} for c in explanation]
    return record


def search_document(
    query: str, hits: list[dict[str, Any]], unmatched_terms: list[str]
) -> dict[str, Any]:
    """The search record of already built :func:`hit_record` hits."""
    return {"query": query, "hits": hits, "unmatched_terms": unmatched_terms}


def search_record(
    result: SearchResult,
    *,
    include_schema: bool = False,
    callable_: Callable[[Tool], bool] | None = None,
) -> dict[str, Any]:
    """The search record; with ``callable_`` (serve-mcp), each hit says whether a backend
    serves it (``callable``)."""
    hits = hit_records(result, include_schema=include_schema, callable_=callable_)
    return search_document(result.query, hits, list(result.unmatched_terms))


def hit_records(
    result: SearchResult,
    *,
    include_schema: bool = False,
    callable_: Callable[[Tool], bool] | None = None,
) -> list[dict[str, Any]]:
    """The search record's ``hits``: one record a hit (``search --format jsonl`` prints them)."""
    hits = []
    for h in result.hits:
        hit = hit_record(
            h.tool, h.score, h.match, include_schema=include_schema, explanation=h.explanation
        )
        if callable_ is not None:
            hit["callable"] = callable_(h.tool)
        hits.append(hit)
    return hits


#: ``list`` and ``search`` output formats besides a table (and ``--json``): one record a line.
RECORD_FORMATS = ("jsonl", "csv", "tsv")


def records_text(records: Sequence[Mapping[str, Any]], fmt: str) -> str:
    """``records`` (the ``--json`` records of ``list`` or ``search``' hits) one a line, with a
    final newline ("" when there are none: no row, no header).

    ``jsonl``: each record as compact JSON. ``csv`` (RFC 4180) and ``tsv`` (tabs and line
    breaks in a value become spaces, nothing is quoted): a header of the records' keys, then
    a row a record; a list of strings is joined by commas, ``source`` spreads over
    ``source.file`` and ``source.pointer``, another list or object (a schema) is compact
    JSON, a boolean ``true``/``false``, a missing key an empty cell.
    """
    if fmt == "jsonl" or not records:
        return "".join(dumps(record, compact=True) + "\n" for record in records)
    rows = [_flat(record) for record in records]
    header = list(dict.fromkeys(key for row in rows for key in row))
    table = [header, *([row.get(key, "") for key in header] for row in rows)]
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


def eval_record(report: Any, tools: Sequence[Any]) -> dict[str, Any]:
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
    return [{k: getattr(f, k) for k in FINDING_KEYS} for f in findings]


def cache_info_record(path: str, exists: bool, files: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """``toolfind cache info --json``: the cache directory and its own files (name, bytes)."""
    return {
        "path": path,
        "exists": exists,
        "indexes": sum(1 for name, _ in files if name.endswith(".pickle")),
        "bytes": sum(size for _, size in files),
        "files": [{"file": name, "bytes": size} for name, size in files],
    }


def error_record(message: str, kind: str) -> dict[str, Any]:
    """An error under ``--json``: one object on stderr, besides the exit code."""
    return {"error": {"message": message, "kind": kind}}


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


def cache_path_record(path: str) -> dict[str, Any]:
    """``toolfind cache path --json``."""
    return {"path": path}


def model_record(found: Any, problem: str) -> dict[str, Any]:
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


# -- encoding ----------------------------------------------------------------------------------
#
# No json import: it (and its ``re``) costs a warm command half of Python's start-up, and with
# an indent json encodes in Python anyway. A value this writer does not know goes to json.

_CONTROLS = frozenset(map(chr, range(32)))
#: What json writes for each control character (quote and backslash are done by json_str).
_ESCAPES = {ch: f"\\u{ord(ch):04x}" for ch in _CONTROLS}
_ESCAPES |= {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_INFINITY = float("inf")


def dumps(document: Any, *, compact: bool = False) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)``, or with ``compact``
    ``json.dumps(document, ensure_ascii=False)``, byte for byte.

    Anything but dicts, lists, tuples, str, int, float, bool and None (or a cycle) is left to
    json, which raises TypeError or ValueError where it always did.
    """
    out: list[str] = []
    try:
        _write(document, None if compact else "\n", out)
    except (TypeError, ValueError, RecursionError):
        import json

        return json.dumps(document, indent=None if compact else 2, ensure_ascii=ASCII_ONLY)
    text = "".join(out)
    return text if not ASCII_ONLY or text.isascii() else ascii_escaped(text)


#: Set (by ``toolfind.__main__``) when stdout cannot encode every character (a Latin-1 or
#: ASCII locale, a legacy console): :func:`dumps` then escapes every non-ASCII character, as
#: ``json.dumps(ensure_ascii=True)`` would, so a JSON document never fails to print.
ASCII_ONLY = False


def ascii_escaped(text: str) -> str:
    """``text`` (JSON) with each non-ASCII character as a ``\\uXXXX`` escape (a surrogate
    pair above U+FFFF): non-ASCII characters occur only inside JSON strings."""
    return "".join(ch if ch < "\x80" else _u_escape(ord(ch)) for ch in text)


def _u_escape(code: int) -> str:
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def dumps_array(records: Iterable[Any]) -> Iterator[str]:
    """``dumps(list(records))`` in pieces, each record encoded as it comes: for a document too
    large to hold at once (``list --json`` over 100k tools). Joined, byte for byte the same."""
    out: list[str] = []
    sep = "[\n  "
    for record in records:
        piece = [sep]
        try:
            _write(record, "\n  ", piece)
        except (TypeError, ValueError, RecursionError):
            import json  # as dumps does: the record at depth 1 of json's own list

            piece[1:] = [json.dumps([record], indent=2, ensure_ascii=False)[4:-2]]
        out += piece
        sep = ",\n  "
        if len(out) >= _PIECES:
            yield "".join(out)
            out.clear()
    out.append("[]" if sep == "[\n  " else "\n]")
    yield "".join(out)


#: Strings gathered before :func:`dumps_array` hands them out (a few hundred records).
_PIECES = 8192


def json_str(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, without importing json.

    Most text needs no escape at all (one C-level scan tells); otherwise each character that
    needs one is replaced throughout, backslashes first so no escape is escaped twice.
    """
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    for ch in _CONTROLS.intersection(text):
        text = text.replace(ch, _ESCAPES[ch])
    return '"' + text + '"'


def _write(value: Any, newline: str | None, out: list[str]) -> None:
    """Append ``value``'s JSON to ``out``; ``newline`` starts a line at its depth (None: the
    document is written on one line)."""
    if isinstance(value, str):
        out.append(json_str(value))
    elif isinstance(value, dict):
        _write_container(value, newline, out, "{", "}")
    elif isinstance(value, (list, tuple)):
        _write_container(value, newline, out, "[", "]")
    else:
        out.append(_scalar(value))


def _write_container(
    items: Any, newline: str | None, out: list[str], opening: str, closing: str
) -> None:
    if not items:
        out.append(opening + closing)
        return
    if newline is None:
        inner, sep, comma, end = None, opening, ", ", closing
    else:
        inner = newline + "  "
        sep, comma, end = opening + inner, "," + inner, newline + closing
    if opening == "{":
        for key, value in items.items():
            out.append(sep + json_str(key if isinstance(key, str) else _scalar(key)) + ": ")
            _write(value, inner, out)
            sep = comma
    else:
        for item in items:
            out.append(sep)
            _write(item, inner, out)
            sep = comma
    out.append(end)


def _scalar(value: Any) -> str:
    """A JSON literal as json writes it (also how it turns a non-string key into a string)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value == _INFINITY:
            return "Infinity"
        if value == -_INFINITY:
            return "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# -- text ----------------------------------------------------------------------------------------
#
# Tool text comes from catalogs and servers toolfind does not control. Characters a reader does
# not see can still carry instructions to a model (tag characters spell text invisibly) or make
# text read differently (bidi overrides, zero-width characters); controls can act on a terminal.
# :func:`clean_text` removes them all, the same way in records, tables and serve-mcp.

#: Unicode categories removed: controls (Cc; newline and tab kept), format characters (Cf:
#: zero-width, bidi controls, tag characters, soft hyphen, BOM), private use (Co), surrogates
#: (Cs) and unassigned code points (Cn: what they become is unknown, so they are not shown).
HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Cn"})
#: Controls that are kept: they lay text out and are seen as such.
KEPT = "\n\t"


def clean_text(text: str, limit: int | None = None) -> str:
    """``text`` without the characters of :data:`HIDDEN` categories (but newline and tab),
    and at most ``limit`` characters: a longer text is cut and ends with ``…``.

    Printable ASCII within the limit (most text) is returned as is, decided in C.
    """
    if text.isascii() and text.isprintable() and (limit is None or len(text) <= limit):
        return text
    from unicodedata import category

    kept = "".join(ch for ch in text if ch in KEPT or category(ch) not in HIDDEN)
    if limit is not None and len(kept) > limit:
        kept = kept[: limit - 1].rstrip() + "…"
    return kept


# -- the records' JSON Schemas (serve-mcp's output schemas) ---------------------------------

STRINGS_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_SOURCE_SCHEMA = {
    "type": "object",
    "properties": {"file": {"type": ["string", "null"]}, "pointer": {"type": ["string", "null"]}},
}
_HIT_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "description": {"type": "string"},
        "score": {"type": "number"},
        "match": {"type": "string", "enum": ["exact", "ranked"]},
        "deferred": {"type": "boolean"},
        "tags": STRINGS_SCHEMA,
        "source": _SOURCE_SCHEMA,
        "schema": {"type": "object", "description": "The tool's input JSON Schema."},
        "callable": {
            "type": "boolean",
            "description": "serve-mcp only: true when a backend serves the tool (call_tool "
            "can run it); false for a catalog-only tool.",
        },
    },
    "required": list(HIT_KEYS),
}
SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "hits": {"type": "array", "items": _HIT_SCHEMA},
        "unmatched_terms": {**STRINGS_SCHEMA, "description": "Query terms found in no tool."},
    },
    "required": list(SEARCH_KEYS),
}
_SIMILAR_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "description": {"type": "string"},
        "score": {"type": "number"},
        "shared_terms": STRINGS_SCHEMA,
    },
    "required": list(SIMILAR_KEYS),
}
SIMILAR_TOOLS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The tool the others are similar to."},
        "namespace": {"type": "string"},
        "similar": {"type": "array", "items": _SIMILAR_SCHEMA},
    },
    "required": list(SIMILAR_TOOLS_KEYS),
}
CATEGORIES_SCHEMA = {
    "type": "object",
    "properties": {
        "categories": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "tool_count": {"type": "integer"},
                    "deferred_count": {"type": "integer"},
                    "tags": STRINGS_SCHEMA,
                    "available": {
                        "type": "boolean",
                        "description": "Backend servers only: false while the server is down.",
                    },
                    "state": {
                        "type": "string",
                        "enum": ["connecting", "ready", "retrying", "failed"],
                        "description": "Backend servers only: connecting, ready, retrying "
                        "(waiting out a backoff) or failed (retried when next called).",
                    },
                    "detail": {
                        "type": "string",
                        "description": "Why a backend is unavailable (its last error).",
                    },
                },
                "required": list(CATEGORY_KEYS),
            },
        },
        "total_categories": {"type": "integer"},
        "total_tools": {"type": "integer"},
    },
    "required": list(CATEGORIES_KEYS),
}
