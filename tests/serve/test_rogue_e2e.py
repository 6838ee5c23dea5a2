"""A backend speaks only to the client it serves, and cannot stall or bloat serve-mcp: serve-mcp
in a subprocess in front of ``fixtures/backends/rogue_server.py`` (raw JSON-RPC, no SDK), one
test per thing a hostile backend tries.

Every wait is on an event (a reply, a notification, a line on serve-mcp's stderr: the rogue
server writes each answer it gets there), within a timeout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.helpers import BACKENDS
from tests.serve.everything import Host
from tests.serve.support import Seen, http_serving, stdio_serving, structured, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

ROGUE = BACKENDS / "rogue_server.py"
WAIT = 90.0


def servers_file(tmp_path: Path, **roles: str | tuple[str, dict[str, Any]]) -> Path:
    """A servers file of rogue servers, each ``name=ROLE`` (or ``(ROLE, extra keys)``)."""
    entries = {}
    for name, role in roles.items():
        role, extra = (role, {}) if isinstance(role, str) else role
        args = [str(ROGUE), role, name]
        entries[name] = {"command": sys.executable, "args": args, **extra}
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return path


def answer_line(line: str) -> dict[str, Any]:
    """The JSON answer in a ``rogue NAME got ID: {...}`` line."""
    return dict(json.loads(line.split(": ", 1)[1]))


@pytest.mark.parametrize("shared", [False, True])
async def test_sampling_and_elicitation_a_backend_sends_outside_any_request_are_refused(
    tmp_path: Path, shared: bool
) -> None:
    """Two HTTP clients able to answer: a backend that asks after its call has ended is
    refused, whether the session is the caller's own or shared by every client, and neither
    client is asked (their model never runs its prompt, their user never sees its URL)."""
    extra = {"shared": True} if shared else {}
    servers = servers_file(tmp_path, evil=("unsolicited", extra))
    a, b = Host("a"), Host("b")
    with http_serving(tmp_path, "--servers", str(servers), "--backend-wait", "60") as (url, log):
        with anyio.fail_after(WAIT):
            async with (
                Client(url, mode="legacy", **a.callbacks()) as ca,
                Client(url, mode="legacy", **b.callbacks()) as cb,
            ):
                await ca.list_tools()
                await cb.list_tools()
                assert text_of(await ca.call_tool("evil__later", {})) == "later"
                sampled = answer_line(await log.wait("rogue evil got s1:", timeout=WAIT))
                elicited = answer_line(await log.wait("rogue evil got e1:", timeout=WAIT))
                rooted = answer_line(await log.wait("rogue evil got r1:", timeout=WAIT))
    for refused in (sampled, elicited):
        assert refused["error"]["code"] == types.INVALID_REQUEST
        assert "only while it serves a request" in refused["error"]["message"]
    assert b.asked == []
    if shared:  # roots too: a shared session serves no one client
        assert "shared by toolfind's clients" in rooted["error"]["message"]
        assert a.asked == []
    else:  # the caller's own session: roots are asked of it, and of it alone
        assert rooted["result"]["roots"] == [{"uri": str(Host.ROOT.uri), "name": "project"}]
        assert a.asked == ["roots"]


async def test_an_elicitation_completion_reaches_only_the_client_of_the_backend_that_asked(
    tmp_path: Path,
) -> None:
    servers = servers_file(tmp_path, alpha="elicit", beta="complete")
    a_seen, b_seen = Seen(), Seen()
    a, b = Host("a"), Host("b")
    completed = types.ElicitCompleteNotification
    args = ("--servers", str(servers), "--backend-wait", "60", "--exposure", "direct")
    with http_serving(tmp_path, *args) as (url, _):
        with anyio.fail_after(WAIT):
            async with (
                Client(url, mode="legacy", message_handler=a_seen, **a.callbacks()) as ca,
                Client(url, mode="legacy", message_handler=b_seen, **b.callbacks()) as cb,
            ):
                await ca.list_tools()
                login = await ca.call_tool("alpha__login", {})
                assert "the user answered" in text_of(login)
                assert a.asked == ["elicitation url https://auth.example/alpha"]
                # Another backend's word for alpha's elicitation E1 reaches nobody...
                assert "sent a completion" in text_of(await cb.call_tool("beta__finish", {}))
                # ...and alpha's own, sent after it, reaches A: the first A hears.
                await ca.call_tool("alpha__done", {})
                done = await a_seen.wait(lambda m: isinstance(m, completed))
                assert done.params.elicitation_id == "E1"
    assert a_seen.count(lambda m: isinstance(m, completed)) == 1
    assert not any(isinstance(m, completed) for m in b_seen.items)


async def test_a_url_elicitation_required_error_reaches_the_host_whole(tmp_path: Path) -> None:
    servers = servers_file(tmp_path, alpha="elicit")
    async with stdio_serving(tmp_path, "--servers", str(servers), "--backend-wait", "60") as (
        client,
        _,
    ):
        with anyio.fail_after(WAIT):
            for call in (
                client.call_tool("alpha__authorize", {}),
                client.call_tool("proxy_call_tool", {"name": "alpha__authorize"}),
            ):
                with pytest.raises(MCPError) as error:
                    await call
                assert error.value.error.code == types.URL_ELICITATION_REQUIRED
                assert error.value.error.message == (
                    "This request requires browser-based authorization."
                )
                (item,) = error.value.error.data["elicitations"]
                assert item["url"] == "https://auth.example/start?state=abc123"
                assert item["elicitationId"] == "E2"


async def test_a_backend_cannot_speak_for_another_backends_resource(tmp_path: Path) -> None:
    servers = servers_file(tmp_path, notes="notes", spoof="spoof")
    async with stdio_serving(tmp_path, "--servers", str(servers), "--backend-wait", "60") as (
        client,
        _,
    ):
        with anyio.fail_after(WAIT):
            real = "toolfind://notes/note://plan"
            listed = [r.uri for r in (await client.list_resources()).resources]
            assert real in listed
            read = await client.read_resource(real)
            (contents,) = read.contents
            assert isinstance(contents, types.TextResourceContents)
            assert contents.text == "ship on Friday"
            blocks = (await client.call_tool("spoof__fetch_doc", {})).content
    embedded, link, own, web = blocks
    assert isinstance(embedded, types.EmbeddedResource)
    assert embedded.resource.uri == f"toolfind://spoof/{real}"
    assert isinstance(link, types.ResourceLink) and link.uri == f"toolfind://spoof/{real}"
    assert isinstance(own, types.ResourceLink)
    assert own.uri == "toolfind://spoof/toolfind:deferred-tools"
    assert isinstance(web, types.ResourceLink) and web.uri == "https://example.com/doc"


async def test_a_backend_whose_tools_keep_changing_never_stalls_search(tmp_path: Path) -> None:
    """20 tool changes a second: every search is answered, from the index there is, while
    the index keeps being rebuilt behind it."""
    catalog = tmp_path / "c.json"
    catalog.write_text(
        json.dumps([{"name": "rocket_fuel", "description": "Measure rocket fuel."}]),
        encoding="utf-8",
    )
    servers = servers_file(tmp_path, churn="churn")
    args = ("-c", str(catalog), "--servers", str(servers), "--log-level", "info")
    async with stdio_serving(tmp_path, *args, "--backend-wait", "60") as (client, log):
        with anyio.fail_after(WAIT):
            await client.list_tools()
            await log.wait("index rebuilt", since=log.mark(), timeout=WAIT)  # it churns
            for _ in range(10):
                found = structured(
                    await client.call_tool("proxy_search_tools", {"query": "rocket fuel"})
                )
                assert found["hits"][0]["name"] == "rocket_fuel"
            categories = structured(await client.call_tool("proxy_tool_categories", {}))
            assert "churn" in {c["name"] for c in categories["categories"]}


async def test_refused_subscriptions_are_errors_and_a_huge_uri_is_not_echoed(
    tmp_path: Path,
) -> None:
    async with stdio_serving(tmp_path, "-c", str(write_catalog(tmp_path))) as (client, _):
        with anyio.fail_after(WAIT):
            for i in range(50):
                with pytest.raises(MCPError) as refused:
                    await client.subscribe_resource(f"toolfind://nobody/{i}")
                assert refused.value.error.code == -32002
            with pytest.raises(MCPError) as too_long:
                await client.subscribe_resource("toolfind://nobody/" + "x" * 100_000)
            assert too_long.value.error.code == types.INVALID_PARAMS
            assert len(too_long.value.error.message) < 300
            await client.subscribe_resource("toolfind:deferred-tools")  # still subscribes


def write_catalog(tmp_path: Path) -> Path:
    catalog = tmp_path / "c.json"
    catalog.write_text(json.dumps([{"name": "noop", "description": "Nothing."}]), "utf-8")
    return catalog
