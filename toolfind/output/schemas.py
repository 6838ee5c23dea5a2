"""The JSON Schemas of the records ``output.wire`` makes: serve-mcp's output schemas, and the
one definition of those records' keys (``wire.HIT_KEYS`` and the others are read from here).

Each record's properties are in output order; every key is required but the ones a record
has only sometimes (named where the record is made).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _record(properties: dict[str, Any], *sometimes: str) -> dict[str, Any]:
    """An object's schema: ``properties`` required, but those it has only ``sometimes``."""
    required = [key for key in properties if key not in sometimes]
    return {"type": "object", "properties": properties, "required": required}


STRINGS_SCHEMA: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
_STRING: dict[str, Any] = {"type": "string"}
_NUMBER: dict[str, Any] = {"type": "number"}
_INTEGER: dict[str, Any] = {"type": "integer"}
_OPTIONAL_STRING: dict[str, Any] = {"type": ["string", "null"]}

HIT_SCHEMA = _record(
    {
        "name": _STRING,
        "namespace": _STRING,
        "description": _STRING,
        "score": _NUMBER,
        "confidence": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "How sure the ranking is that this tool is what the query asks"
            " for; below 0.5, ask the user rather than call it.",
        },
        "match": {"type": "string", "enum": ["exact", "ranked"]},
        "deferred": {"type": "boolean"},
        "tags": STRINGS_SCHEMA,
        "source": {
            "type": "object",
            "properties": {"file": _OPTIONAL_STRING, "pointer": _OPTIONAL_STRING},
        },
        "schema": {"type": "object", "description": "The tool's input JSON Schema."},
        "callable": {
            "type": "boolean",
            "description": "serve-mcp only: true when a backend serves the tool (call_tool "
            "can run it); false for a catalog-only tool.",
        },
    },
    "schema",
    "callable",
)
SEARCH_SCHEMA = _record(
    {
        "query": _STRING,
        "hits": {"type": "array", "items": HIT_SCHEMA},
        "unmatched_terms": {**STRINGS_SCHEMA, "description": "Query terms found in no tool."},
        "corrections": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Query words read as others (typos): word -> the word read.",
        },
        "stages": {
            **STRINGS_SCHEMA,
            "description": "The ranking stages that ran, in order: lexical (BM25F), semantic "
            "(the semantic signal fused in), rerank (the reranker re-scored the top hits).",
        },
        "note": {
            "type": "string",
            "description": "serve-mcp only, when no hit is a confident match: says so.",
        },
        "backends_connecting": {
            "type": "integer",
            "description": "serve-mcp only, when above 0: how many backend MCP servers are "
            "still connecting; their tools are not searched yet (search again shortly).",
        },
    },
    "note",
    "backends_connecting",
)
SIMILAR_SCHEMA = _record(
    {
        "name": _STRING,
        "namespace": _STRING,
        "description": _STRING,
        "score": _NUMBER,
        "shared_terms": STRINGS_SCHEMA,
    }
)
SIMILAR_TOOLS_SCHEMA = _record(
    {
        "name": {"type": "string", "description": "The tool the others are similar to."},
        "namespace": _STRING,
        "similar": {"type": "array", "items": SIMILAR_SCHEMA},
    }
)
CATEGORY_SCHEMA = _record(
    {
        "name": _STRING,
        "tool_count": _INTEGER,
        "deferred_count": _INTEGER,
        "tags": STRINGS_SCHEMA,
        "available": {
            "type": "boolean",
            "description": "Backend servers only: false while the server is down.",
        },
        "state": {
            "type": "string",
            "enum": ["connecting", "ready", "retrying", "failed"],
            "description": "Backend servers only: connecting (the first time), "
            "ready, retrying (it failed or crashed; detail says how) or failed "
            "(given up: its tools cannot be called; a call tries it once more).",
        },
        "detail": {
            "type": "string",
            "description": "Why a backend is unavailable (its last error).",
        },
    },
    "available",
    "state",
    "detail",
)
CATEGORIES_SCHEMA = _record(
    {
        "categories": {"type": "array", "items": CATEGORY_SCHEMA},
        "total_categories": _INTEGER,
        "total_tools": _INTEGER,
    }
)
_PART: dict[str, Any] = {
    "type": "number",
    "description": "What it adds to the tool's score (the first hit's, under first).",
}
WHY_SCHEMA = _record(
    {
        "query": _STRING,
        "name": _STRING,
        "namespace": _STRING,
        "rank": {
            "type": ["integer", "null"],
            "description": "The tool's place among the hits (1 is first); null when it is not "
            "in the top depth.",
        },
        "depth": {"type": "integer", "description": "How many hits were looked through."},
        "score": {"type": ["number", "null"], "description": "Null when it is no hit."},
        "confidence": {"type": ["number", "null"], "description": "Null when it is no hit."},
        "lacks": {**STRINGS_SCHEMA, "description": "The query's words the tool holds nowhere."},
        "first": {
            "type": ["object", "null"],
            "description": "The first hit (null when nothing was found).",
            "properties": {
                "name": _STRING,
                "namespace": _STRING,
                "score": _NUMBER,
                "confidence": _NUMBER,
            },
        },
        "words": {
            "type": "array",
            "description": "Each of the query's words, what it adds to the tool and to the "
            "first hit.",
            "items": _record({"word": _STRING, "score": _PART, "first": _PART}),
        },
        "signals": {
            "type": "array",
            "description": "Each signal (a BM25F field, semantic, rerank): what it adds to the "
            "tool and to the first hit, and its share of each one's total.",
            "items": _record(
                {
                    "signal": _STRING,
                    "score": _PART,
                    "share": _NUMBER,
                    "first": _PART,
                    "first_share": _NUMBER,
                }
            ),
        },
        "unmatched_terms": STRINGS_SCHEMA,
        "corrections": {"type": "object", "additionalProperties": {"type": "string"}},
    }
)
