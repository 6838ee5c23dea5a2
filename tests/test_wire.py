"""The JSON shapes: keys pinned here, so changing one is a deliberate (CHANGELOG) change."""

from __future__ import annotations

from dataclasses import dataclass

from toolfind.models import Category, Hit, Source, Tool
from toolfind.output import wire


@dataclass
class Status:
    available: bool
    detail: str = ""


def test_hit_keys_and_deferred_schema() -> None:
    tool = Tool(name="t", description="Does t.", defer=True, source=Source("c.yaml", "/tools/0"))
    record = wire.hit_record(Hit(tool, 1.23456789))
    assert tuple(record) == (*wire.HIT_KEYS, "schema")
    assert record["score"] == 1.234568
    assert record["source"] == {"file": "c.yaml", "pointer": "/tools/0"}


def test_descriptions_in_hits_lose_invisible_characters_and_are_capped() -> None:
    tool = Tool(name="t", description="Safe\u200b text\u202e" + "x" * 5000)
    description = wire.hit_record(Hit(tool, 1.0))["description"]
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


def test_dumps_is_json_dumps_indented_by_two_for_plain_and_other_data() -> None:
    import json
    from collections import OrderedDict

    import pytest

    plain = {"é": [1, 2.5, None, True, float("nan")], "t": (1, "x"), "d": OrderedDict(a={})}
    assert wire.dumps(plain) == json.dumps(plain, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError, match="not JSON serializable"):  # what json says of a set
        wire.dumps({"x": {1, 2}})
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):  # json's check, not a crash
        wire.dumps(looped)
