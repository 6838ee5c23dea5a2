"""BackendPool over streamable HTTP: the fault fixture's server served in-process by uvicorn.

The listening socket is bound before uvicorn starts, so the client's first connection waits
in the backlog instead of the test waiting for the server to be ready.
"""

from __future__ import annotations

import importlib.util
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any

import anyio
import pytest
import uvicorn

from tests.helpers import BACKENDS
from tests.serve.support import text_of
from toolfind.backends.config import ServerSpec
from toolfind.backends.pool import BackendPool
from toolfind.errors import BackendError

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SERVER = BACKENDS / "faulty_server.py"


def fixture_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("faulty_server", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_a_streamable_http_backend_is_listed_called_and_notifies_changes() -> None:
    app: Any = fixture_module().build(page_size=3).streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    changed = anyio.Event()
    spec = ServerSpec(
        name="web", transport="http", url=f"http://127.0.0.1:{port}/mcp", headers={"X-Test": "1"}
    )
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(web.serve, [sock])
            async with BackendPool([spec], call_timeout=10) as pool:
                await pool.wait_settled()
                pool.set_listener(changed.set)
                assert pool.status()["web"].available, pool.status()["web"].detail
                assert pool.serves("web__echo") and not pool.serves("web__broken_schema")
                result = await pool.call("web__echo", {"text": "over http"})
                assert result.structured_content == {"echo": "over http"}
                await pool.call("web__add_tool", {"name": "late"})
                await changed.wait()
                assert pool.serves("web__late")
            web.should_exit = True
    sock.close()


def big_server(tools: int = 0) -> Any:
    """An MCP server with ``big {mb}`` (that many MiB of text, as ``x``) and, to make its tool
    list large, ``tools`` more tools with 3,500-character descriptions."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("big")

    @server.tool()
    def big(mb: float) -> str:
        """Return mb MiB of text."""
        return "x" * int(mb * 1024 * 1024)

    for n in range(tools):
        server.add_tool(
            lambda: "ok", name=f"padding_{n}", description=f"Padding {n}. " + "p" * 3500
        )
    return server


@asynccontextmanager
async def served_over_http(app: Any) -> AsyncIterator[str]:
    """``app`` served by uvicorn in-process; its /mcp URL (the socket is bound first)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(web.serve, [sock])
            yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
            web.should_exit = True
    finally:
        sock.close()


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_an_http_backend_answers_up_to_the_result_limit_and_is_never_restarted_for_more(
    json_response: bool,
) -> None:
    # The SDK's SSE reader refuses events over 1 MiB on its own: toolfind's cap is the
    # pool's. 2 MiB is relayed; over --max-result-size a clear error; over the transport's
    # cap (the answer is not even read) the same error; the backend stays up throughout.
    app = big_server().streamable_http_app(json_response=json_response)
    async with served_over_http(app) as url:
        spec = ServerSpec(name="big", transport="http", url=url)
        limit = 5 * 1024 * 1024  # a str result is sent twice: as text and structured
        pool = BackendPool(
            [spec], call_timeout=30, max_result_bytes=limit, max_message_bytes=limit + (1 << 20)
        )
        with anyio.fail_after(60):
            async with pool:
                await pool.wait_settled()
                two = await pool.call("big__big", {"mb": 2})
                assert len(text_of(two)) == 2 * 1024 * 1024
                for mb in (3, 6):  # over the result limit; then over the transport's cap too
                    with pytest.raises(
                        BackendError,
                        match=r"^server 'big' answered 'big' with more than 5 MiB; toolfind "
                        r"relays results up to 5 MiB \(--max-result-size\): ask for less",
                    ):
                        await pool.call("big__big", {"mb": mb})
                    assert pool.status()["big"].state == "ready"
                small = await pool.call("big__big", {"mb": 0.001})
                assert len(text_of(small)) == 1048
                assert pool.status()["big"].state == "ready"


async def test_an_http_backend_with_a_two_megabyte_tool_list_connects() -> None:
    app = big_server(tools=600).streamable_http_app()
    async with served_over_http(app) as url:
        spec = ServerSpec(name="wide", transport="http", url=url)
        with anyio.fail_after(60):
            async with BackendPool([spec], call_timeout=30) as pool:
                await pool.wait_settled()
                status = pool.status()["wide"]
                assert status.state == "ready", status.detail
                assert status.tool_count == 601
