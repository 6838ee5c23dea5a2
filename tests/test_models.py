"""Tests for the fast constructors of toolfind.models (new_tool, new_source) and Tool's own init."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from tests.catalog_support import (
    same_tool,
)
from toolfind.models import Source, Tool, new_source, new_tool

# --- the fast constructors ----------------------------------------------------------------------


def test_new_tool_and_new_source_make_what_the_classes_make() -> None:
    source = new_source("f.json", "/tools/0", 3)
    assert type(source) is Source and source == Source("f.json", "/tools/0", 3)
    values: dict[str, Any] = {
        "name": "n",
        "description": "d",
        "parameters": {"type": "object"},
        "namespace": "ns",
        "tags": ("a",),
        "search_hint": "h",
        "defer": True,
        "enabled": False,
        "annotations": {"readOnlyHint": True},
        "aliases": ("m",),
        "title": "T",
        "output_schema": {"type": "string"},
        "source": source,
        "original": {"name": "n"},
    }
    tool = new_tool(*values.values())
    assert type(tool) is Tool
    assert same_tool(tool, Tool(**values)) and tool == Tool(**values)
    assert repr(tool) == repr(Tool(**values))
    assert pickle.loads(pickle.dumps(tool)) == tool
    assert dataclasses.replace(tool, name="m").name == "m"
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        source.line = 4  # type: ignore[misc]
    assert tool.all_tags == ("a", "read-only")


def test_tool_init_sets_every_field_and_stays_frozen() -> None:
    tool = Tool("n", tags=("a", "a"))
    assert tool.parameters == {"type": "object", "properties": {}}
    assert tool.annotations == {} and tool.all_tags == ("a",) and tool.annotation_tags == ()
    assert Tool("n").all_tags == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.tags = ()  # type: ignore[misc]


def test_a_subclass_of_tool_is_still_filled_in() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, init=False)
    class Special(Tool):
        extra: int = 0

        def __init__(self, name: str) -> None:
            Tool.__init__(self, name, description="d")
            object.__setattr__(self, "extra", 5)

    special = Special("s")
    assert type(special) is Special
    assert (special.name, special.description, special.extra) == ("s", "d", 5)
