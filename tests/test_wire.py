"""The JSON shapes: keys pinned here, so changing one is a deliberate (CHANGELOG) change."""

from __future__ import annotations

from dataclasses import dataclass

from toolfind.models import Category, Hit, SearchResult, Source, TermContribution, Tool
from toolfind.output import wire


@dataclass
class Status:
    available: bool
    detail: str = ""


def test_hit_keys_and_deferred_schema() -> None:
    tool = Tool(name="t", description="Does t.", defer=True, source=Source("c.yaml", "/tools/0"))
    record = wire.hit_record(tool, 1.23456789)
    assert tuple(record) == (*wire.HIT_KEYS, "schema")
    assert record["score"] == 1.234568
    assert record["source"] == {"file": "c.yaml", "pointer": "/tools/0"}


def test_descriptions_in_hits_lose_invisible_characters_and_are_capped() -> None:
    tool = Tool(name="t", description="Safe\u200b text\u202e" + "x" * 5000)
    description = wire.hit_record(tool, 1.0)["description"]
    assert "\u200b" not in description and "\u202e" not in description
    assert len(description) == wire.DESCRIPTION_LIMIT and description.endswith("…")


def test_categories_mark_backends_available_or_not_and_list_a_dead_one() -> None:
    categories = [Category("files", 3, 1, ("fs",)), Category("time", 2, 0, ())]
    record = wire.categories_record(
        categories, {"time": Status(True), "git": Status(False, "exited")}
    )
    by_name = {c["name"]: c for c in record["categories"]}
    assert tuple(by_name["files"]) == wire.CATEGORY_KEYS
    assert by_name["time"]["available"] is True
    assert by_name["git"] == {
        "name": "git",
        "tool_count": 0,
        "deferred_count": 0,
        "tags": [],
        "available": False,
        "detail": "exited",
    }
    assert record["total_categories"] == 3 and record["total_tools"] == 5


def test_search_records_keys_and_an_explained_hit() -> None:
    tool = Tool(name="t", tags=("x",), annotations={"readOnlyHint": True, "openWorldHint": 1})
    term = TermContribution("t", "name", 1, 2.0, 0.5, 4.0, 1.0)
    result = SearchResult("q", (Hit(tool, 2.0, "exact", (term,)),), ("zz",))
    record = wire.search_record(result, include_schema=True)
    assert tuple(record) == wire.SEARCH_KEYS and record["unmatched_terms"] == ["zz"]
    hit = record["hits"][0]
    assert tuple(hit) == (*wire.HIT_KEYS, "schema", "explain")
    assert hit["tags"] == ["x", "read-only"] and hit["match"] == "exact"
    assert [tuple(e) for e in hit["explain"]] == [wire.EXPLAIN_KEYS]
    assert hit["source"] == {"file": None, "pointer": None}


def test_cache_info_counts_indexes_and_bytes() -> None:
    record = wire.cache_info_record("/c", True, [("a.pickle", 10), ("manifest.marshal", 5)])
    assert tuple(record) == wire.CACHE_INFO_KEYS
    assert record["indexes"] == 1 and record["bytes"] == 15
    assert [tuple(f) for f in record["files"]] == [wire.CACHE_FILE_KEYS] * 2


def test_the_record_schemas_require_the_record_keys() -> None:
    assert wire.SEARCH_SCHEMA["required"] == list(wire.SEARCH_KEYS)
    hit_schema = wire.SEARCH_SCHEMA["properties"]["hits"]["items"]
    assert list(hit_schema["properties"])[: len(wire.HIT_KEYS)] == list(wire.HIT_KEYS)
    assert wire.CATEGORIES_SCHEMA["required"] == list(wire.CATEGORIES_KEYS)
    assert wire.SIMILAR_TOOLS_SCHEMA["required"] == list(wire.SIMILAR_TOOLS_KEYS)
