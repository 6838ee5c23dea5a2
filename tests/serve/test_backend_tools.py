"""The naming of backend tools (toolfind/serve/backends/tools.py): pure, no server needed."""

from __future__ import annotations

import re

from toolfind.serve.backends.tools import assign_names, exposed_name

HOST_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_exposed_names_fit_what_hosts_accept() -> None:
    assert exposed_name("time", "get_current_time") == "time__get_current_time"
    assert exposed_name("my srv", "do.thing/now") == "my_srv__do_thing_now"
    long_a = exposed_name("server", "x" * 80 + "a")
    long_b = exposed_name("server", "x" * 80 + "b")
    assert len(long_a) == 64 and len(long_b) == 64 and long_a != long_b
    assert HOST_NAME.match(long_a)
    assert exposed_name("server", "x" * 80 + "a") == long_a


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
