"""Backend tools (toolfind/backends/tools.py): read by the catalog rules, named for hosts
(the rule itself: tests/data/test_shapes.py), their text cleaned. Pure, no server needed."""

from __future__ import annotations

from typing import Any

import pytest

from toolfind.backends.tools import Listed, assign_names, check_tool, needs_task, to_tool
from toolfind.models import Source


def test_collisions_are_resolved_in_server_then_tool_order_and_reported() -> None:
    tools = [
        ("b", "get.time"),
        ("a", "x__y"),
        ("b", "get_time"),
        ("a__x", "y"),
        ("proxy", "search_tools"),
    ]
    names, renames = assign_names(tools, "__", reserved={"proxy__search_tools"})
    assert names[("b", "get.time")] == "b__get_time"
    assert names[("b", "get_time")] == "b__get_time_2"
    assert names[("a", "x__y")] == "a__x__y"
    assert names[("a__x", "y")] == "a__x__y_2"
    assert names[("proxy", "search_tools")] == "proxy__search_tools_2"
    assert renames[("proxy", "search_tools")] == (
        "server 'proxy': tool 'search_tools' is exposed as 'proxy__search_tools_2' "
        "because 'proxy__search_tools' is taken by the meta-tool 'proxy__search_tools'"
    )
    assert renames[("b", "get_time")].endswith("because 'b__get_time' is taken by b/get.time")
    assert set(renames) == {("b", "get_time"), ("a__x", "y"), ("proxy", "search_tools")}
    # the same input in another order gives the same names
    assert (
        assign_names(list(reversed(tools)), "__", {"proxy__search_tools"})[0] != {}
        and names
        == assign_names(
            sorted(tools, key=lambda t: ["b", "a", "a__x", "proxy"].index(t[0])),
            "__",
            {"proxy__search_tools"},
        )[0]
    )


def test_reserved_names_are_compared_case_insensitively() -> None:
    names, _ = assign_names([("Proxy", "Search_Tools")], "_", reserved={"proxy_search_tools"})
    assert names[("Proxy", "Search_Tools")] == "Proxy_Search_Tools_2"


def entry(**keys: Any) -> dict[str, Any]:
    return {"name": "get_time", "inputSchema": {"type": "object", "properties": {}}, **keys}


def test_a_backend_tool_is_read_by_the_catalog_rules_and_its_text_cleaned() -> None:
    hidden = "\u200b\u202e" + "".join(chr(0xE0000 + ord(c)) for c in "IGNORE")
    raw = entry(
        description=f"Tell the time.{hidden} " + "More. " * 1_700,  # 10,000+ characters
        title=f"Time{hidden}",
        annotations={"title": "Clock", "readOnlyHint": True},
        inputSchema={
            "type": "object",
            "properties": {"tz": {"type": "string", "description": f"Zone.{hidden}"}},
        },
    )
    assert check_tool(raw) is None
    tool = to_tool("clock", "clock__get_time", Listed("get_time", raw, 3))
    assert (tool.name, tool.namespace, tool.aliases) == ("clock__get_time", "clock", ("get_time",))
    assert tool.source == Source("mcp://clock", "/tools/3") and tool.original is raw
    # Kept whole (the catalogs' limit is 65,536), its invisible characters removed.
    assert tool.description == "Tell the time. " + "More. " * 1_700
    assert tool.title == "Time"  # the entry's own title, as a catalog reads it
    assert tool.annotations == {"title": "Clock", "readOnlyHint": True}
    assert tool.all_tags == ("read-only",)
    assert tool.parameters["properties"]["tz"]["description"] == "Zone."


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ("nope", "is not an object"),
        ({"inputSchema": {"type": "object"}}, "has no name"),
        (entry(inputSchema="nope"), "inputSchema is not an object"),
        (entry(inputSchema={"type": "string"}), 'inputSchema does not have "type": "object"'),
        (
            entry(description="x" * 65_537),
            "description: is 65,537 characters long; the limit is 65,536",
        ),
        (entry(name="get\u200btime"), "name: contains the invisible or control character"),
        (
            entry(inputSchema={"type": "object", "properties": {"a": {"type": "strnig"}}}),
            "inputSchema.properties.a.type: 'strnig' is not valid under any of the given schemas",
        ),
        (entry(annotations={"readOnlyHint": "yes"}), "annotations.readOnlyHint: 'yes' is not of"),
    ],
)
def test_a_tool_the_catalog_rules_refuse_is_dropped_with_the_rules_words(
    raw: Any, problem: str
) -> None:
    found = check_tool(raw)
    assert found is not None and found.startswith(problem), found


def test_a_servers_entrys_defer_defers_its_tools_and_task_only_tools_are_told_apart() -> None:
    raw = {"name": "research", "inputSchema": {"type": "object"}}
    plain = to_tool("s", "s__research", Listed("research", raw, 0))
    assert not plain.defer and not needs_task(plain)
    assert to_tool("s", "s__research", Listed("research", raw, 0), defer=True).defer
    tasked = {**raw, "execution": {"taskSupport": "required"}}
    assert needs_task(to_tool("s", "s__research", Listed("research", tasked, 0)))
    optional = {**raw, "execution": {"taskSupport": "optional"}}
    assert not needs_task(to_tool("s", "s__research", Listed("research", optional, 0)))
