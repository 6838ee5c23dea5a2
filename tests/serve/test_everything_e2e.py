"""serve-mcp in front of the MCP reference server ``@modelcontextprotocol/server-everything``
(npm): a host sees through toolfind what it sees connected directly, including the requests
the server makes of the host (sampling, elicitation in both modes, roots); a host that cannot
answer them gets errors, never a hang; over HTTP one client never gets what another caused.

Every wait is on a reply or an event, within a timeout.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.serve.everything import Host, everything_script
from tests.serve.support import http_server, server_env, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.slow,
    # Logging, sampling and roots are deprecated as of 2026-07-28; hosts still use them.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

START = 120.0  # node and toolfind start on two busy cores
PREFIX = "everything__"
#: The tools server-everything registers only for a host that declares the capability.
HOST_TOOLS = {
    "trigger-sampling-request",
    "trigger-elicitation-request",
    "trigger-url-elicitation",
    "get-roots-list",
}


@pytest.fixture(scope="module")
def script() -> Path:
    return everything_script()


def direct(script: Path) -> StdioServerParameters:
    return StdioServerParameters(command=shutil.which("node") or "node", args=[str(script)])


def servers_file(tmp_path: Path, script: Path) -> Path:
    path = tmp_path / "servers.json"
    entry = {"command": shutil.which("node") or "node", "args": [str(script)]}
    path.write_text(json.dumps({"mcpServers": {"everything": entry}}), encoding="utf-8")
    return path


def through(tmp_path: Path, script: Path) -> StdioServerParameters:
    args = ["-m", "toolfind", "serve-mcp", "--servers", str(servers_file(tmp_path, script))]
    args += ["--exposure", "direct", "--backend-wait", "60"]
    return StdioServerParameters(
        command=sys.executable, args=args, env=server_env(tmp_path), cwd=str(tmp_path)
    )


def backend_names(tools: types.ListToolsResult) -> set[str]:
    names = {t.name for t in tools.tools if not t.name.startswith("proxy_")}
    assert all(n.startswith(PREFIX) for n in names), names
    return {n.removeprefix(PREFIX) for n in names}


class Logs:
    def __init__(self) -> None:
        self.messages: list[types.LoggingMessageNotificationParams] = []

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.messages.append(params)

    def text(self) -> str:
        return "\n".join(str(m.data) for m in self.messages)


async def what_it_offers(client: Client) -> dict[str, Any]:
    """Everything but tools, as a host lists it (toolfind's own entries left out)."""
    resources = await client.list_resources()
    templates = await client.list_resource_templates()
    prompts = await client.list_prompts()
    return {
        "resources": sorted(
            r.uri for r in resources.resources if r.uri != "toolfind:deferred-tools"
        ),
        "templates": sorted(t.uri_template for t in templates.resource_templates),
        "prompts": sorted(p.name for p in prompts.prompts if p.name != "deferred_tool_summaries"),
    }


def exposed(offer: dict[str, Any]) -> dict[str, Any]:
    """What toolfind shows for what the server offers directly."""
    return {
        "resources": sorted(f"toolfind://everything/{u}" for u in offer["resources"]),
        "templates": sorted(f"toolfind://everything/{u}" for u in offer["templates"]),
        "prompts": sorted(PREFIX + p for p in offer["prompts"]),
    }


async def exercise_host_requests(client: Client, host: Host, name: str = PREFIX) -> None:
    """The four tools that ask the host, called through ``client``: each answered by ``host``."""
    sampled = await client.call_tool(f"{name}trigger-sampling-request", {"prompt": "hello"})
    assert not sampled.is_error, sampled.content
    assert f"an answer from {host.name}'s model" in text_of(sampled)
    form = await client.call_tool(f"{name}trigger-elicitation-request", {})
    assert not form.is_error, form.content
    assert f"{host.name}'s user" in "".join(text_of_all(form))
    url = await client.call_tool(
        f"{name}trigger-url-elicitation", {"url": "https://example.com/authorize"}
    )
    assert not url.is_error, url.content
    assert "completed the URL elicitation" in text_of(url)
    roots = await client.call_tool(f"{name}get-roots-list", {})
    assert not roots.is_error, roots.content
    assert str(Host.ROOT.uri) in text_of(roots)
    assert {"sampling", "elicitation form", "roots"} <= set(host.asked)
    assert "elicitation url https://example.com/authorize" in host.asked


async def complete(client: Client, prefix: str) -> list[str]:
    """The department values ``completable-prompt`` offers for "S"."""
    ref = types.PromptReference(name=f"{prefix}completable-prompt")
    done = await client.complete(ref, {"name": "department", "value": "S"})
    return done.completion.values


def text_of_all(result: types.CallToolResult) -> list[str]:
    return [b.text for b in result.content if isinstance(b, types.TextContent)]


async def test_a_host_sees_through_toolfind_what_it_sees_directly(
    tmp_path: Path, script: Path
) -> None:
    with anyio.fail_after(START):
        direct_host = Host("direct")
        async with Client(direct(script), mode="legacy", **direct_host.callbacks()) as c:
            direct_tools = {t.name for t in (await c.list_tools()).tools}
            direct_offer = await what_it_offers(c)
            direct_instructions = c.instructions
            direct_completion = await complete(c, "")
            await exercise_host_requests(c, direct_host, name="")
        assert HOST_TOOLS <= direct_tools

        host = Host()
        logs = Logs()
        params = through(tmp_path, script)
        async with Client(params, mode="legacy", logging_callback=logs, **host.callbacks()) as c:
            await c.set_logging_level("info")
            assert backend_names(await c.list_tools()) == direct_tools
            assert await what_it_offers(c) == exposed(direct_offer)
            await exercise_host_requests(c, host)
            read = await c.read_resource(exposed(direct_offer)["resources"][0])
            assert read.contents[0].uri == exposed(direct_offer)["resources"][0]
            # What the server logs for the host (here: the roots it got) reaches the host.
            assert "root(s) received from client" in logs.text()
            assert await complete(c, PREFIX) == direct_completion == ["Sales", "Support"]
            # The host's roots changed: the server is told, and asks the host again.
            asked = host.asked.count("roots")
            await c.session.send_roots_list_changed()
            while host.asked.count("roots") == asked:
                await host.changed.wait()
            uri = exposed(direct_offer)["resources"][0]
            await c.subscribe_resource(uri)
            await c.unsubscribe_resource(uri)
            assert direct_instructions
        # The backends connect after stdio's initialize: their instructions reach the clients
        # that initialise later (the HTTP test shows them).


async def test_a_host_without_those_capabilities_gets_errors_not_hangs(
    tmp_path: Path, script: Path
) -> None:
    with anyio.fail_after(START):
        async with Client(direct(script), mode="legacy") as c:
            direct_tools = {t.name for t in (await c.list_tools()).tools}
        assert not direct_tools & HOST_TOOLS
        async with Client(through(tmp_path, script), mode="legacy") as c:
            assert backend_names(await c.list_tools()) == direct_tools
            refused = await c.call_tool(f"{PREFIX}trigger-sampling-request", {"prompt": "hi"})
            assert refused.is_error
            assert "No tool named" in text_of(refused)


async def test_over_http_each_client_gets_only_what_its_own_calls_caused(
    tmp_path: Path, script: Path
) -> None:
    servers = servers_file(tmp_path, script)
    able, unable = Host("able"), Host("unable")
    able_logs, unable_logs = Logs(), Logs()
    async with http_server(tmp_path, "--servers", str(servers), "--backend-wait", "60") as url:
        with anyio.fail_after(START):
            async with (
                Client(url, mode="legacy", logging_callback=able_logs, **able.callbacks()) as a,
                Client(url, mode="legacy", logging_callback=unable_logs) as b,
            ):
                await a.list_tools()  # waits for the backend (--backend-wait)
                await a.set_logging_level("debug")
                await b.set_logging_level("debug")

                # A client that cannot answer: the backend is told at once, the other client
                # is never asked in its place.
                refused = await b.call_tool(f"{PREFIX}trigger-sampling-request", {"prompt": "x"})
                assert refused.is_error
                assert "does not support sampling" in "".join(text_of_all(refused))
                assert able.asked == []

                await exercise_host_requests(a, able)
                assert unable.asked == []
                # What the server logged about the roots it got from the able client (during
                # its call, or at start-up when no call explains it) never reaches the other.
                assert "root(s) received" not in unable_logs.text()

                # A client connecting after the backend gets its instructions with toolfind's.
                async with Client(url, mode="legacy") as late:
                    instructions = late.instructions or ""
                    assert "## everything" in instructions
                    assert instructions.startswith("Use proxy_search_tools")


async def test_a_2026_client_answers_through_input_required_rounds(
    tmp_path: Path, script: Path
) -> None:
    servers = servers_file(tmp_path, script)
    host = Host("modern")
    async with http_server(tmp_path, "--servers", str(servers), "--backend-wait", "60") as url:
        with anyio.fail_after(START):
            async with Client(url, **host.callbacks()) as c:
                assert c.session.protocol_version == "2026-07-28"
                await c.list_tools()
                sampled = await c.call_tool(f"{PREFIX}trigger-sampling-request", {"prompt": "hi"})
                assert "an answer from modern's model" in text_of(sampled)
                form = await c.call_tool(f"{PREFIX}trigger-elicitation-request", {})
                assert "modern's user" in "".join(text_of_all(form))
                assert {"sampling", "elicitation form"} <= set(host.asked)
