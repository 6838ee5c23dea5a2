"""The index's columns: the tool table's records decode to the tools they were made from."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import pytest

from toolfind.models import Source, Tool
from toolfind.store import columns


@pytest.mark.parametrize("decode", ["by_fields", "compiled"])
def test_a_decoded_tool_is_the_tool_it_was_recorded_from(decode: str) -> None:
    # A few tools are decoded field by field, many by the unpacking compiled from the fields.
    decoder = columns._by_fields if decode == "by_fields" else columns._decoder()
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
        "source": Source("f.json", "/tools/0", 3),
        "original": {"name": "n"},
    }
    made = Tool(**values)
    tool = decoder(columns._record(made))
    assert type(tool) is Tool and type(tool.source) is Source
    assert tool == made and tool.source == made.source and tool.original == made.original
    assert repr(tool) == repr(made)
    assert pickle.loads(pickle.dumps(tool)) == tool
    assert dataclasses.replace(tool, name="m").name == "m"
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "x"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.source.line = 4  # type: ignore[misc, union-attr]
    assert tool.all_tags == ("a", "read-only")
    bare = decoder(columns._record(Tool("x")))
    assert bare == Tool("x") and bare.source is None
