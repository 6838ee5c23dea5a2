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


def test_a_table_decodes_the_same_tools_before_and_after_its_decoder_is_compiled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(columns, "_COMPILE_AFTER", 3)
    monkeypatch.setattr(columns, "_decode", None)  # as in a new process
    tools = [
        Tool(f"t{i}", source=Source("f.json", f"/{i}", i) if i % 2 else None) for i in range(7)
    ]
    table = columns.ToolTable.of(tools)
    assert table[0] == tools[0] and columns._decode is None  # one tool: nothing compiled
    assert list(table.each(range(7))) == tools and columns._decode is not None
    fresh = columns.ToolTable(*table.columns())
    assert list(fresh) == tools and [t.source for t in fresh] == [t.source for t in tools]
