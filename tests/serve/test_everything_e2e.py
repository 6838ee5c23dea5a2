"""serve-mcp in front of the MCP reference server ``@modelcontextprotocol/server-everything``
(npm): a host sees through toolfind what it sees connected directly, including the requests
the server makes of the host (sampling, elicitation in both modes, roots) and its
instructions; a host that cannot answer them gets errors, never a hang; over HTTP each client
has a session of its own, so two clients see what each would see connected directly.

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
from mcp.shared.exceptions import MCPError

from tests.serve.everything import Host, everything_script
from tests.serve.support import Seen, http_server, server_env, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.e2e,
    pytest.mark.slow,
    # Logging, sampling and roots are deprecated as of 2026-07-28; hosts still use them.
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

START = 120.0  # node and toolfind start on two busy cores
PREFIX = "everything__"
#: The tool that runs only as an MCP task: toolfind does not relay tasks, so it is not listed.
TASK_TOOL = "simulate-research-query"
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


class Logs(Seen):
    def text(self) -> str:
        return "\n".join(str(m.data) for m in self.items)


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
            assert backend_names(await c.list_tools()) == direct_tools - {TASK_TOOL}
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
            # URL elicitation required (-32042): the host gets the error whole, URL and all.
            with pytest.raises(MCPError) as required:
                await c.call_tool(
                    f"{PREFIX}trigger-url-elicitation",
                    {"url": "https://example.com/authorize?state=s1", "errorPath": True},
                )
            assert required.value.error.code == types.URL_ELICITATION_REQUIRED
            (wanted,) = required.value.error.data["elicitations"]
            assert wanted["mode"] == "url" and wanted["url"].startswith("https://")
            assert wanted["elicitationId"]
            # The first initialize waited for the backend: its instructions follow toolfind's.
            instructions = c.instructions or ""
            assert instructions.startswith("Use proxy_search_tools")
            assert "## everything" in instructions
            assert direct_instructions and direct_instructions.strip()[:200] in instructions


async def test_a_host_without_those_capabilities_gets_errors_not_hangs(
    tmp_path: Path, script: Path
) -> None:
    with anyio.fail_after(START):
        async with Client(direct(script), mode="legacy") as c:
            direct_tools = {t.name for t in (await c.list_tools()).tools}
        assert not direct_tools & HOST_TOOLS
        async with Client(through(tmp_path, script), mode="legacy") as c:
            assert backend_names(await c.list_tools()) == direct_tools - {TASK_TOOL}
            refused = await c.call_tool(f"{PREFIX}trigger-sampling-request", {"prompt": "hi"})
            assert refused.is_error
            assert "No tool named" in text_of(refused)


async def roots_of(client: Client) -> str:
    result = await client.call_tool(f"{PREFIX}get-roots-list", {})
    assert not result.is_error, result.content
    return text_of(result)


async def at_once(*calls: Any) -> list[types.CallToolResult]:
    """Run the calls at the same moment; their results in order."""
    results: list[Any] = [None] * len(calls)

    async def run(i: int) -> None:
        results[i] = await calls[i]

    async with anyio.create_task_group() as tg:
        for i in range(len(calls)):
            tg.start_soon(run, i)
    return results


def simulated(params: types.LoggingMessageNotificationParams) -> bool:
    """One of server-everything's simulated, periodic log messages."""
    return "level message" in str(params.data) or "level-message" in str(params.data)


def updated(uri: str) -> Any:
    return lambda m: isinstance(m, types.ResourceUpdatedNotification) and m.params.uri == uri


async def test_over_http_two_clients_each_see_what_they_would_see_directly(
    tmp_path: Path, script: Path
) -> None:
    """Two HTTP clients, each its own server-everything session: roots, sampling and
    elicitation at the same moment, subscriptions and their toggles, session resources and
    log messages are each client's alone, as with two direct connections."""
    servers = servers_file(tmp_path, script)
    a, b = Host("a", root="file:///work/a"), Host("b", root="file:///work/b")
    a_seen, b_seen, a_logs, b_logs = Seen(), Seen(), Seen(), Seen()
    text1 = "toolfind://everything/demo://resource/dynamic/text/1"
    text2 = "toolfind://everything/demo://resource/dynamic/text/2"
    async with http_server(tmp_path, "--servers", str(servers), "--backend-wait", "60") as url:
        with anyio.fail_after(START):
            async with (
                Client(
                    url,
                    mode="legacy",
                    message_handler=a_seen,
                    logging_callback=a_logs,
                    **a.callbacks(),
                ) as ca,
                Client(
                    url,
                    mode="legacy",
                    message_handler=b_seen,
                    logging_callback=b_logs,
                    **b.callbacks(),
                ) as cb,
            ):
                await ca.list_tools()  # waits for the backend (--backend-wait)
                # Roots: each client's own.
                assert "file:///work/a" in await roots_of(ca)
                b_roots = await roots_of(cb)
                assert "file:///work/b" in b_roots and "file:///work/a" not in b_roots
                # B's roots change: B is asked again, never A, and B's new roots are used.
                a_asked, b_asked = a.asked.count("roots"), b.asked.count("roots")
                b.root = types.Root(uri="file:///work/b2", name="b2")
                await cb.session.send_roots_list_changed()
                while b.asked.count("roots") == b_asked:
                    await b.changed.wait()
                assert "file:///work/b2" in await roots_of(cb)
                assert a.asked.count("roots") == a_asked
                # Sampling and elicitation at the same moment: each answered by its own host.
                sampled = await at_once(
                    ca.call_tool(f"{PREFIX}trigger-sampling-request", {"prompt": "hi"}),
                    cb.call_tool(f"{PREFIX}trigger-sampling-request", {"prompt": "hi"}),
                )
                assert "an answer from a's model" in text_of(sampled[0])
                assert "an answer from b's model" in text_of(sampled[1])
                forms = await at_once(
                    ca.call_tool(f"{PREFIX}trigger-elicitation-request", {}),
                    cb.call_tool(f"{PREFIX}trigger-elicitation-request", {}),
                )
                assert "a's user" in "".join(text_of_all(forms[0]))
                assert "b's user" in "".join(text_of_all(forms[1]))
                # A session resource A made is A's: B neither lists it.
                gzip = {
                    "name": "only-for-a.gz",
                    "data": "data:text/plain;base64,aGVsbG8=",
                    "outputType": "resourceLink",
                }
                made = await ca.call_tool(f"{PREFIX}gzip-file-as-resource", gzip)
                assert not made.is_error, made.content
                listed = {r.uri for r in (await ca.list_resources()).resources}
                assert any(uri.endswith("/only-for-a.gz") for uri in listed), listed
                others = {r.uri for r in (await cb.list_resources()).resources}
                assert not any(uri.endswith("/only-for-a.gz") for uri in others), others
                # Subscriptions and their toggles: B's toggle does not stop A's updates.
                await ca.subscribe_resource(text1)
                await ca.call_tool(f"{PREFIX}toggle-subscriber-updates", {})
                await a_seen.wait(updated(text1))
                await cb.subscribe_resource(text2)
                await cb.call_tool(f"{PREFIX}toggle-subscriber-updates", {})
                await b_seen.wait(updated(text2))
                await a_seen.wait_count(updated(text1), a_seen.count(updated(text1)) + 1)
                assert not any(updated(text2)(m) for m in a_seen.items)
                assert not any(updated(text1)(m) for m in b_seen.items)
                # Periodic log messages reach the client that turned them on, and only it.
                await ca.set_logging_level("debug")
                await cb.set_logging_level("debug")
                await ca.call_tool(f"{PREFIX}toggle-simulated-logging", {})
                await a_logs.wait_count(simulated, 2)  # one at once, then one every 5 s
                assert not any(simulated(p) for p in b_logs.items)
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
