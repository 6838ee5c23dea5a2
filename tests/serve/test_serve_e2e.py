"""serve-mcp as a real subprocess, driven by the SDK's stdio and streamable-HTTP clients."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import anyio.abc
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.serve.support import (
    ACCEPT,
    GIT,
    INITIALIZE,
    ListChanged,
    error_text,
    http_server,
    server_env,
    structured,
    write_catalog,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.slow]

START_TIMEOUT = 30
EVENT_TIMEOUT = 15


def watching(catalog_dir: Path) -> tuple[str, ...]:
    """serve-mcp's arguments for ``catalog_dir``, checked for edits every 0.1 s."""
    return ("-c", str(catalog_dir), "--poll-interval", "0.1")


def entry_command() -> list[str]:
    """``toolfind serve-mcp``."""
    return ["-m", "toolfind", "serve-mcp"]


def add_tool(catalog_dir: Path) -> None:
    tools = [*GIT["tools"], {"name": "git_push", "description": "Push commits to a remote."}]
    write_catalog(catalog_dir, "git", {**GIT, "tools": tools})


async def exercise_meta_tools(client: Client) -> None:
    names = [t.name for t in (await client.list_tools()).tools]
    assert names == [
        "proxy_search_tools",
        "proxy_similar_tools",
        "proxy_tool_categories",
        "proxy_get_tool",
        "proxy_call_tool",
    ]
    search = structured(await client.call_tool("proxy_search_tools", {"query": "read file"}))
    assert search["hits"][0]["name"] == "read_file"
    similar = structured(await client.call_tool("proxy_similar_tools", {"name": "git:git_log"}))
    assert similar["similar"][0]["name"] == "git_commit"
    categories = structured(await client.call_tool("proxy_tool_categories", {}))
    assert categories["total_tools"] == 4
    tool = structured(await client.call_tool("proxy_get_tool", {"name": "read_file"}))
    assert tool["inputSchema"]["required"] == ["path"]
    refused = error_text(await client.call_tool("proxy_call_tool", {"name": "read_file"}))
    assert refused.startswith("No backend serves 'files/read_file'")
    missing = error_text(await client.call_tool("proxy_get_tool", {"name": "reed_file"}))
    assert missing == "No tool named 'reed_file'. Did you mean 'read_file'?"


async def test_stdio_server_serves_meta_tools_and_announces_catalog_edits(
    tmp_path: Path, catalog_dir: Path
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[*entry_command(), "-c", str(catalog_dir), "--poll-interval", "0.1"],
        env=server_env(tmp_path),
        cwd=str(tmp_path),
    )
    seen = ListChanged()
    with anyio.fail_after(START_TIMEOUT + EVENT_TIMEOUT):
        async with Client(params, mode="legacy", message_handler=seen) as client:
            await exercise_meta_tools(client)
            add_tool(catalog_dir)
            with anyio.fail_after(EVENT_TIMEOUT):
                await seen.after(0)
            categories = structured(await client.call_tool("proxy_tool_categories", {}))
            assert categories["total_tools"] == 5


async def test_http_server_serves_meta_tools_and_announces_catalog_edits(
    tmp_path: Path, catalog_dir: Path
) -> None:
    async with http_server(tmp_path, *watching(catalog_dir)) as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        with anyio.fail_after(START_TIMEOUT):
            async with Client(url) as client:
                assert client.protocol_version == "2026-07-28"
                await exercise_meta_tools(client)
                async with client.listen(tools_list_changed=True) as subscription:
                    add_tool(catalog_dir)
                    with anyio.fail_after(EVENT_TIMEOUT):
                        event = await subscription.__aiter__().__anext__()
                    assert type(event).__name__ == "ToolsListChanged"
                categories = structured(await client.call_tool("proxy_tool_categories", {}))
                assert categories["total_tools"] == 5


async def test_http_server_speaks_the_handshake_era_too(tmp_path: Path, catalog_dir: Path) -> None:
    async with http_server(tmp_path, *watching(catalog_dir)) as url:
        with anyio.fail_after(START_TIMEOUT):
            async with Client(url, mode="legacy") as client:
                assert client.protocol_version in ("2025-11-25", "2025-06-18")
                caps = client.server_capabilities
                assert caps.tools is not None and caps.tools.list_changed is True
                await exercise_meta_tools(client)


async def test_http_with_a_token_refuses_requests_without_it(
    tmp_path: Path, catalog_dir: Path
) -> None:
    async with http_server(tmp_path, *watching(catalog_dir), "--token", "s3cret") as url:
        body, headers = INITIALIZE, ACCEPT
        async with httpx2.AsyncClient() as http:
            anonymous = await http.post(url, content=json.dumps(body), headers=headers)
            assert anonymous.status_code == 401
            assert anonymous.headers["www-authenticate"].startswith("Bearer")
            wrong = await http.post(
                url, content=json.dumps(body), headers={**headers, "Authorization": "Bearer nope"}
            )
            assert wrong.status_code == 401
            rebinding = await http.post(
                url,
                content=json.dumps(body),
                headers={**headers, "Authorization": "Bearer s3cret", "Host": "evil.example:80"},
            )
            assert rebinding.status_code == 421
        authorized = create_mcp_http_client(headers={"Authorization": "Bearer s3cret"})
        with anyio.fail_after(START_TIMEOUT):
            async with (
                authorized,
                Client(streamable_http_client(url, http_client=authorized)) as client,
            ):
                result = await client.call_tool("proxy_search_tools", {"query": "commit"})
                assert structured(result)["hits"][0]["name"] == "git_commit"
