"""serve-mcp's server (`serve.server`) through the SDK's in-memory client: listing, each
meta-tool, errors, calls forwarded, and first contact (the first initialize, lists and
searches wait, bounded, for backends still connecting, counted from the first request)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.helpers import invoke, write
from tests.serve.support import (
    FILES,
    GIT,
    FakeBackends,
    error_text,
    make_server,
    structured,
    write_catalog,
)
from toolfind.backends.seam import NOT_STARTED, BackendStatus, NoBackends
from toolfind.config import Filters
from toolfind.models import Source, Tool
from toolfind.serve import server as server_module
from toolfind.serve.options import ServeOptions
from toolfind.serve.server import Discovery
from toolfind.serve.state import LiveIndex

pytestmark = pytest.mark.anyio


# -- listing -----------------------------------------------------------------------------

META_NAMES = [
    "proxy_search_tools",
    "proxy_similar_tools",
    "proxy_tool_categories",
    "proxy_get_tool",
    "proxy_call_tool",
]


async def test_tools_list_without_backends_holds_only_the_meta_tools(client: Client) -> None:
    listed = await client.list_tools()
    assert [t.name for t in listed.tools] == META_NAMES
    for tool in listed.tools:
        assert tool.input_schema["type"] == "object"
        if tool.name == "proxy_call_tool":  # a called tool's result is passed on as it is
            assert tool.output_schema is None
        else:
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description


async def test_direct_exposure_without_backends_also_lists_only_meta_tools(
    catalog_dir: Path,
) -> None:
    server, _, _ = make_server([catalog_dir], exposure="direct")
    async with Client(server, mode="legacy") as c:
        assert [t.name for t in (await c.list_tools()).tools] == META_NAMES


async def test_meta_prefix_option_names_the_meta_tools(catalog_dir: Path) -> None:
    server, _, _ = make_server([catalog_dir], meta_prefix="proxy/")
    async with Client(server) as c:
        names = [t.name for t in (await c.list_tools()).tools]
    assert names[0] == "proxy/search_tools"


async def test_search_description_names_the_catalog_namespaces(client: Client) -> None:
    search = (await client.list_tools()).tools[0]
    assert search.description is not None
    assert "4 tools in 2 namespaces (files, git)" in search.description


# -- meta-tools --------------------------------------------------------------------------


async def test_search_tools_returns_the_cli_search_record(client: Client) -> None:
    record = structured(
        await client.call_tool("proxy_search_tools", {"query": "read file contents"})
    )
    assert set(record) - {"note"} == {"query", "hits", "unmatched_terms", "corrections", "stages"}
    assert record["stages"][0] == "lexical"
    assert record["hits"][0]["name"] == "read_file"
    # A note only when no hit is a confident match.
    assert ("note" in record) == (record["hits"][0]["confidence"] < 0.5)
    assert record["hits"][0]["namespace"] == "files"
    assert "schema" not in record["hits"][0]


async def test_search_tools_deferred_hit_carries_its_schema(client: Client) -> None:
    record = structured(await client.call_tool("proxy_search_tools", {"query": "compress archive"}))
    hit = record["hits"][0]
    assert hit["name"] == "compress_file" and hit["deferred"] is True
    assert hit["schema"]["required"] == ["path"]


async def test_search_tools_include_schema_and_namespace_filter(client: Client) -> None:
    record = structured(
        await client.call_tool(
            "proxy_search_tools",
            {"query": "commit history", "namespace": "git", "limit": 1, "include_schema": True},
        )
    )
    assert len(record["hits"]) == 1
    assert record["hits"][0]["namespace"] == "git" and "schema" in record["hits"][0]


@pytest.mark.parametrize("spelling", ["Files", "FILES", "files"])
async def test_search_tools_namespace_compares_as_the_command_line_does(
    client: Client, catalog_dir: Path, spelling: str
) -> None:
    """``--namespace Files`` finds ``files`` on the command line (core.filters), and so does
    the search meta-tool: one rule, the same hits."""
    arguments = {"query": "read file", "namespace": spelling}
    record = structured(await client.call_tool("proxy_search_tools", arguments))
    found = [(h["namespace"], h["name"]) for h in record["hits"]]
    assert found and {namespace for namespace, _ in found} == {"files"}
    code, out, _ = invoke(
        "search", "read file", "--namespace", spelling, "-c", str(catalog_dir), "--json"
    )
    assert code == 0
    assert [(h["namespace"], h["name"]) for h in json.loads(out)["hits"]] == found


async def test_search_tools_no_match_is_an_empty_result_not_an_error(client: Client) -> None:
    record = structured(await client.call_tool("proxy_search_tools", {"query": "zzqx"}))
    assert record["hits"] == [] and record["unmatched_terms"]
    assert record["note"].startswith("No confident match: no tool matches")


async def test_search_tools_says_plainly_when_no_hit_is_a_confident_match(
    client: Client,
) -> None:
    """An agent must be able to tell junk from an answer: a request that shares one weak word
    with the catalog gets its hits, each below 0.5, and a note saying to ask the user."""
    result = await client.call_tool("proxy_search_tools", {"query": "is it going to rain"})
    record = structured(result)
    assert all(h["confidence"] < 0.5 for h in record["hits"])
    assert record["note"].startswith("No confident match")
    assert "Ask the user" in record["note"]
    text = result.content[0]
    assert isinstance(text, types.TextContent) and "No confident match" in text.text
    sure = structured(await client.call_tool("proxy_search_tools", {"query": "read file"}))
    assert sure["hits"][0]["confidence"] >= 0.5 and "note" not in sure


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"query": "   "}, "'query' is empty"),
        ({}, "at $: 'query' is a required property"),
        ({"query": 5}, "at $.query: 5 is not of type 'string'"),
        ({"query": "x", "limit": 0}, "at $.limit: 0 is less than the minimum of 1"),
        ({"query": "x", "limit": 101}, "at $.limit: 101 is greater than the maximum of 100"),
        ({"query": "x", "limit": "ten"}, "at $.limit: 'ten' is not of type 'integer'"),
        (
            {"query": "x", "namespace": "nope"},
            "Unknown namespace 'nope'. Valid namespaces: files, git.",
        ),
        ({"query": "x", "tags": 3}, "at $.tags: 3 is not of type 'array'"),
        ({"query": "x", "include_schema": "yes"}, "'yes' is not of type 'boolean'"),
        ({"query": "x", "q": "x"}, "Additional properties are not allowed ('q' was unexpected)"),
    ],
)
async def test_search_tools_bad_arguments_are_tool_errors_that_say_how_to_fix_them(
    client: Client, arguments: dict[str, Any], expected: str
) -> None:
    assert expected in error_text(await client.call_tool("proxy_search_tools", arguments))


@pytest.mark.parametrize("spelling", ["git/git_log", "git:git_log", "git__git_log", "git_log"])
async def test_similar_tools_accepts_every_show_spelling(client: Client, spelling: str) -> None:
    record = structured(await client.call_tool("proxy_similar_tools", {"name": spelling}))
    assert (record["name"], record["namespace"]) == ("git_log", "git")
    assert record["similar"][0]["name"] == "git_commit"
    assert record["similar"][0]["shared_terms"]


async def test_similar_tools_unknown_name_suggests_the_closest(client: Client) -> None:
    text = error_text(await client.call_tool("proxy_similar_tools", {"name": "git_lgo"}))
    assert text == "No tool named 'git_lgo'. Did you mean 'git_log'?"


async def test_tool_categories_counts_namespaces_and_tools(client: Client) -> None:
    record = structured(await client.call_tool("proxy_tool_categories", {}))
    assert record["total_categories"] == 2 and record["total_tools"] == 4
    files = next(c for c in record["categories"] if c["name"] == "files")
    assert (files["tool_count"], files["deferred_count"]) == (2, 1)
    assert set(files) == {"name", "tool_count", "deferred_count", "tags"}


async def test_get_tool_returns_the_mcp_definition(client: Client) -> None:
    record = structured(await client.call_tool("proxy_get_tool", {"name": "files/read_file"}))
    assert record["name"] == "read_file"
    assert record["inputSchema"]["required"] == ["path"]


async def test_get_tool_unknown_name_is_a_did_you_mean_tool_error(client: Client) -> None:
    text = error_text(await client.call_tool("proxy_get_tool", {"name": "reed_file"}))
    assert text == "No tool named 'reed_file'. Did you mean 'read_file'?"


async def test_call_tool_on_a_catalog_only_tool_says_no_backend_serves_it(client: Client) -> None:
    text = error_text(
        await client.call_tool("proxy_call_tool", {"name": "read_file", "arguments": {"path": "x"}})
    )
    assert text.startswith("No backend serves 'files/read_file'")


async def test_calling_an_unknown_tool_directly_is_a_tool_error_not_a_protocol_error(
    client: Client,
) -> None:
    text = error_text(await client.call_tool("reed_file", {}))
    assert "Did you mean 'read_file'?" in text


async def test_results_name_a_catalog_file_inside_its_catalog_path_never_by_local_path(
    tmp_path: Path,
) -> None:
    """The CLI's ``source.file`` is the file as the run named it; a model gets the file's path
    inside the catalog directory (or a catalog file's name), a backend's ``mcp://`` as it is,
    and a catalog-only call's error names the file the same way."""
    catalogs = tmp_path / "catalogs"
    write_catalog(catalogs, "files", FILES)
    write_catalog(catalogs / "more", "git", GIT)
    single = write(tmp_path / "single" / "notes.yaml", NOTES)
    server, _, _ = make_server([catalogs, single], FakeBackends())
    places = {}
    async with Client(server, mode="legacy") as c:
        for query in ("read file contents", "commit history", "take a note", "forecast"):
            record = structured(await c.call_tool("proxy_search_tools", {"query": query}))
            places.update({h["name"]: h["source"] for h in record["hits"]})
        refused = error_text(await c.call_tool("proxy_call_tool", {"name": "read_file"}))
    assert places["read_file"] == {"file": "files.json", "pointer": "/tools/0"}
    assert places["git_log"]["file"] == os.path.join("more", "git.json")
    assert places["take_note"]["file"] == "notes.yaml"
    assert places["weather__forecast"]["file"] == "mcp://weather"
    assert str(tmp_path) not in json.dumps(places)
    assert "(from files.json)" in refused and str(tmp_path) not in refused
    # The CLI (and the API) keep the path the run named.
    code, out, _ = invoke("search", "read file contents", "--json", "-c", str(catalogs))
    assert code == 0
    assert json.loads(out)["hits"][0]["source"]["file"] == str(catalogs / "files.json")


NOTES = "tools:\n  - name: take_note\n    description: Take a note and save it for later.\n"


async def test_the_modern_protocol_era_serves_the_same_records(catalog_dir: Path) -> None:
    server, _, _ = make_server([catalog_dir])
    async with Client(server) as c:
        assert c.protocol_version == "2026-07-28"
        record = structured(await c.call_tool("proxy_search_tools", {"query": "read file"}))
    assert record["hits"][0]["name"] == "read_file"


# -- backends, exposure and the one filter predicate --------------------------------------


async def test_direct_exposure_lists_backend_tools_and_search_exposure_hides_them(
    catalog_dir: Path,
) -> None:
    for exposure, expected in [("direct", True), ("search", False)]:
        server, _, _ = make_server([catalog_dir], FakeBackends(), exposure=exposure)
        async with Client(server, mode="legacy") as c:
            names = [t.name for t in (await c.list_tools()).tools]
            assert ("weather__forecast" in names) is expected
            # Callable by name in both modes, directly and through call_tool.
            direct = await c.call_tool("weather__forecast", {"city": "Oslo"})
            assert direct.content[0] == types.TextContent(text="sunny in Oslo")
            via = await c.call_tool(
                "proxy_call_tool", {"name": "weather/forecast", "arguments": {"city": "Rome"}}
            )
            assert not via.is_error
            assert via.content[0] == types.TextContent(text="sunny in Rome")
            assert via.structured_content is None  # passed on as it is: no copy of content


async def test_filters_apply_alike_to_listing_search_and_calls(catalog_dir: Path) -> None:
    filters = Filters(exclude_tags=("alerts",), exclude_namespaces=("git",))
    backends = FakeBackends()
    server, _, _ = make_server([catalog_dir], backends, exposure="direct", filters=filters)
    async with Client(server, mode="legacy") as c:
        names = [t.name for t in (await c.list_tools()).tools]
        assert "weather__forecast" in names and "weather__alerts" not in names
        hits = structured(await c.call_tool("proxy_search_tools", {"query": "weather alerts"}))
        found = [h["name"] for h in hits["hits"]]
        # The semantic signal (on when installed) may add related tools; never a filtered one.
        assert found[0] == "weather__forecast" and "weather__alerts" not in found
        assert not any(h["namespace"] == "git" for h in hits["hits"])
        commits = structured(await c.call_tool("proxy_search_tools", {"query": "commit"}))
        assert not any(h["namespace"] == "git" for h in commits["hits"])
        refused = await c.call_tool("weather__alerts", {})
        assert refused.is_error
        refused_via = await c.call_tool("proxy_call_tool", {"name": "weather__alerts"})
        assert refused_via.is_error
    assert backends.calls == []


async def test_a_backend_that_never_answers_times_out_as_a_tool_error(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fake pool never returns, so the outer bound (call_timeout + POOL_SLACK) answers.
    monkeypatch.setattr(server_module, "POOL_SLACK", 0.0)
    server, _, _ = make_server([catalog_dir], FakeBackends(hang=True), call_timeout=0.05)
    async with Client(server, mode="legacy") as c:
        text = error_text(await c.call_tool("weather__forecast", {}))
    assert text == "'weather/weather__forecast' did not answer within 0.05 s; try again later."


async def test_a_failing_backend_is_a_tool_error(catalog_dir: Path) -> None:
    server, _, _ = make_server([catalog_dir], FakeBackends(fail=True))
    async with Client(server, mode="legacy") as c:
        text = error_text(await c.call_tool("proxy_call_tool", {"name": "weather__forecast"}))
    assert "failed: weather exited with status 1" in text


async def test_search_hits_say_whether_a_backend_serves_them(catalog_dir: Path) -> None:
    server, _, _ = make_server([catalog_dir], FakeBackends())
    async with Client(server, mode="legacy") as c:
        weather = structured(await c.call_tool("proxy_search_tools", {"query": "forecast"}))
        files = structured(await c.call_tool("proxy_search_tools", {"query": "read file"}))
    assert [(h["name"], h["callable"]) for h in weather["hits"]] == [("weather__forecast", True)]
    assert (files["hits"][0]["name"], files["hits"][0]["callable"]) == ("read_file", False)


async def test_calls_never_run_a_tool_their_name_does_not_spell_out(catalog_dir: Path) -> None:
    backends = FakeBackends()
    server, _, _ = make_server([catalog_dir], backends)
    async with Client(server, mode="legacy") as c:

        async def call(name: str) -> str:
            return error_text(await c.call_tool("proxy_call_tool", {"name": name}))

        assert await call("Weather__Forecast") == (
            "No tool named 'Weather__Forecast'. Did you mean 'weather__forecast'?"
        )
        assert await call("forecst") == "No tool named 'forecst'. Did you mean 'weather__forecast'?"
        assert await call("weather/alert") == (
            "No tool named 'weather/alert'. Did you mean 'weather__alerts'?"
        )
        ran = await c.call_tool(
            "proxy_call_tool", {"name": "weather:forecast", "arguments": {"city": "Oslo"}}
        )
        assert not ran.is_error
    assert backends.calls == [("weather__forecast", {"city": "Oslo"})]


async def test_a_call_never_runs_another_tool_while_the_index_catches_up_with_new_names(
    catalog_dir: Path,
) -> None:
    """A backend connecting takes a name another backend's tool had (the first claimant keeps
    the base name): until the index is rebuilt, it resolves names to the old tools while the
    backends route them the new way. The call catches the index up first."""
    backends = FakeBackends()
    server, live, _ = make_server([catalog_dir], backends)
    forecast, alerts = backends._tools
    renamed = replace(forecast, name="weather__forecast_2")
    backends._tools = [replace(alerts, name="weather__forecast"), renamed]
    live.backends_changed()  # announced; the rebuild has not run yet
    async with Client(server, mode="legacy") as c:
        ran = await c.call_tool(
            "proxy_call_tool", {"name": "weather/forecast", "arguments": {"city": "Oslo"}}
        )
        assert not ran.is_error
    assert backends.calls == [("weather__forecast_2", {"city": "Oslo"})]


async def test_arguments_are_checked_against_the_input_schema_unless_turned_off(
    catalog_dir: Path,
) -> None:
    backends = FakeBackends()
    server, _, _ = make_server([catalog_dir], backends)
    async with Client(server, mode="legacy") as c:
        refused = await c.call_tool(
            "proxy_call_tool", {"name": "weather__forecast", "arguments": {"city": 5}}
        )
        direct = await c.call_tool("weather__forecast", {"city": ["Oslo"]})
    assert error_text(refused) == (
        "Invalid arguments for 'weather__forecast' at $.city: 5 is not of type 'string'. "
        "Fix them to match its input schema (proxy_get_tool shows it); nothing was sent to "
        "the tool."
    )
    assert "at $.city: ['Oslo'] is not of type 'string'" in error_text(direct)
    assert backends.calls == []
    server, _, _ = make_server([catalog_dir], backends, validate_arguments=False)
    async with Client(server, mode="legacy") as c:
        sent = await c.call_tool("weather__forecast", {"city": 5})
    assert not sent.is_error and backends.calls == [("weather__forecast", {"city": 5})]


async def test_a_backend_named_like_a_catalog_namespace_is_kept_apart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_catalog(
        tmp_path,
        "weather",
        {"namespace": "weather", "tools": [{"name": "forecast", "description": "Catalog only."}]},
    )
    server, _, _ = make_server([tmp_path], FakeBackends())
    async with Client(server, mode="legacy") as c:
        found = structured(await c.call_tool("proxy_tool_categories", {}))
        refused = await c.call_tool("proxy_call_tool", {"name": "forecast"})
    by_name = {c["name"]: c for c in found["categories"]}
    assert by_name["weather"] == {
        "name": "weather",
        "tool_count": 1,
        "deferred_count": 0,
        "tags": [],
    }
    assert by_name["weather-mcp"]["tool_count"] == 2
    assert by_name["weather-mcp"]["available"] is True
    assert by_name["weather-mcp"]["state"] == "ready"
    assert error_text(refused).startswith("No backend serves 'weather/forecast'")
    assert error_text(refused).endswith("Did you mean 'weather__forecast'?")
    warnings = [r.getMessage() for r in caplog.records if "catalog namespace" in r.getMessage()]
    assert warnings == [
        "server 'weather' has the name of a catalog namespace; its tools are kept apart in "
        "namespace 'weather-mcp' (rename the server in its servers file to choose another)"
    ]


async def test_a_backend_without_tools_yet_is_kept_apart_from_a_catalog_namespace_too(
    tmp_path: Path,
) -> None:
    write_catalog(tmp_path, "weather", {"namespace": "weather", "tools": [{"name": "forecast"}]})
    backends = FakeBackends()
    backends._tools.clear()
    server, _, _ = make_server([tmp_path], backends)
    async with Client(server, mode="legacy") as c:
        found = structured(await c.call_tool("proxy_tool_categories", {}))
    by_name = {c["name"]: c for c in found["categories"]}
    assert "state" not in by_name["weather"] and by_name["weather"]["tool_count"] == 1
    assert by_name["weather-mcp"]["tool_count"] == 0 and by_name["weather-mcp"]["state"] == "ready"


async def test_call_tool_refuses_non_object_arguments_and_meta_tools(client: Client) -> None:
    text = error_text(
        await client.call_tool("proxy_call_tool", {"name": "read_file", "arguments": []})
    )
    assert "at $.arguments: [] is not of type 'object'" in text
    text = error_text(await client.call_tool("proxy_call_tool", {"name": "proxy_search_tools"}))
    assert "is a meta-tool" in text


# -- live catalogs -----------------------------------------------------------------------


# -- options -----------------------------------------------------------------------------


WAIT = 30.0


PING = Tool(
    name="late__ping",
    description="Answer pong from the late server.",
    namespace="late",
    aliases=("ping",),
    source=Source(file="mcp://late"),
)


class Arriving(NoBackends):
    """Backends in memory: one server, ``late``, connecting until `connect` is called."""

    def __init__(self) -> None:
        self.up = anyio.Event()
        self.listener: Callable[[], None] | None = None
        self._tools: list[Tool] = []

    def connect(self) -> None:
        self._tools = [PING]
        self.up.set()
        assert self.listener is not None
        self.listener()

    def tools(self) -> Sequence[Tool]:
        return tuple(self._tools)

    def serves(self, name: str) -> bool:
        return any(t.name == name for t in self._tools)

    def route(self, name: str) -> tuple[str, str] | None:
        return ("late", "ping") if self.serves(name) else None

    async def call(
        self, name: str, arguments: Mapping[str, Any], progress: Any = None, *, lane: Any = None
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text="pong")])

    def instructions(self) -> Mapping[str, str]:
        return {"late": "Say ping to hear pong."} if self.up.is_set() else {}

    def status(self) -> Mapping[str, BackendStatus]:
        if self.up.is_set():
            return {"late": BackendStatus("late", True, 1, state="ready")}
        return {"late": BackendStatus("late", False, 0, detail=NOT_STARTED, state="connecting")}

    async def wait_settled(self) -> None:
        await self.up.wait()

    def set_listener(self, listener: Callable[[], None]) -> None:
        self.listener = listener


def discovery(tmp_path: Path, backends: Arriving, backend_wait: float) -> Discovery:
    catalog = tmp_path / "c.json"
    catalog.write_text('[{"name": "noop", "description": "Nothing at all."}]', encoding="utf-8")
    options = replace(
        ServeOptions(catalogs=(catalog,), watch=False),
        exposure="direct",
        backend_wait=backend_wait,
    )
    live = LiveIndex(
        options.catalogs, params=options.params, filters=options.filters, backends=backends
    )
    backends.set_listener(live.backends_changed)
    live.load()
    return Discovery(live, options, backends)


def serving(tmp_path: Path, backends: Arriving, backend_wait: float) -> Client:
    return Client(discovery(tmp_path, backends, backend_wait).build_server(), mode="legacy")


def described(listed: types.ListToolsResult) -> str:
    search = next(t for t in listed.tools if t.name == "proxy_search_tools")
    return search.description or ""


async def test_the_first_initialize_waits_for_a_backend_and_carries_its_instructions(
    tmp_path: Path,
) -> None:
    backends = Arriving()
    seen: list[tuple[str, types.ListToolsResult]] = []

    async def host() -> None:
        async with serving(tmp_path, backends, backend_wait=WAIT) as client:
            seen.append((client.instructions or "", await client.list_tools()))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(host)
            await anyio.wait_all_tasks_blocked()
            assert not seen  # the initialize waits for 'late'
            backends.connect()
    ((instructions, listed),) = seen
    assert instructions.startswith("Use proxy_search_tools")
    assert "## late (its tools: late__<tool>)\nSay ping to hear pong." in instructions
    assert "late__ping" in [t.name for t in listed.tools]  # a host that lists once sees it
    assert "still connecting" not in described(listed)


async def test_the_wait_counts_from_the_first_request_not_from_start(tmp_path: Path) -> None:
    backends = Arriving()
    found = discovery(tmp_path, backends, backend_wait=WAIT)
    assert found.first_contact_until is None  # however long serve-mcp took to start
    backends.connect()
    async with Client(found.build_server(), mode="legacy") as client:
        assert found.first_contact_until is not None
        listed = await client.list_tools()
    assert "late__ping" in [t.name for t in listed.tools]


async def test_the_first_tools_list_waits_for_a_backend_that_is_connecting(tmp_path: Path) -> None:
    backends = Arriving()
    async with serving(tmp_path, backends, backend_wait=0.01) as client:
        listed = await client.list_tools()  # the bound passed at initialize: nothing waits
        assert "late__ping" not in [t.name for t in listed.tools]
        backends.connect()
        found = structured(await client.call_tool("proxy_search_tools", {"query": "pong"}))
        assert "backends_connecting" not in found


async def test_a_backend_that_never_connects_costs_at_most_the_bound(tmp_path: Path) -> None:
    backends = Arriving()
    async with serving(tmp_path, backends, backend_wait=0.3) as client:
        with anyio.fail_after(WAIT):
            listed = await client.list_tools()  # returns: the bound has passed
            assert "late__ping" not in [t.name for t in listed.tools]
            assert "1 more MCP server is still connecting" in described(listed)
            found = structured(await client.call_tool("proxy_search_tools", {"query": "pong"}))
            assert found["backends_connecting"] == 1 and found["hits"] == []
            # It connects later: the lists follow (list_changed), nothing waits any more.
            backends.connect()
            categories = structured(await client.call_tool("proxy_tool_categories", {}))
            late = next(c for c in categories["categories"] if c["name"] == "late")
            assert late["state"] == "ready"


async def test_backend_wait_0_never_waits(tmp_path: Path) -> None:
    backends = Arriving()
    async with serving(tmp_path, backends, backend_wait=0) as client:
        with anyio.fail_after(WAIT):
            listed = await client.list_tools()
        assert "late__ping" not in [t.name for t in listed.tools]
        assert "still connecting" in described(listed)


async def test_after_first_contact_a_search_never_waits_for_a_rebuild(catalog_dir: Path) -> None:
    server, live, _ = make_server([catalog_dir], FakeBackends())
    async with Client(server, mode="legacy") as client:
        await client.list_tools()  # first contact is over
        generation = live.snapshot.generation
        async with live._lock:  # a rebuild is under way...
            live.backends_changed()  # ...and more backend changes are announced
            with anyio.fail_after(WAIT):
                found = structured(
                    await client.call_tool("proxy_search_tools", {"query": "weather forecast"})
                )
        assert found["hits"][0]["name"] == "weather__forecast"
        assert live.snapshot.generation == generation  # answered from the index there is
