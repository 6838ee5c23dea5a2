"""BackendPool over streamable HTTP: the fault fixture's server served in-process by uvicorn.

The listening socket is bound before uvicorn starts, so the client's first connection waits
in the backlog instead of the test waiting for the server to be ready.
"""

from __future__ import annotations

import importlib.util
import socket
from types import ModuleType
from typing import Any

import anyio
import pytest
import uvicorn

from tests.helpers import BACKENDS
from toolfind.serve.backends.config import ServerSpec
from toolfind.serve.backends.pool import BackendPool

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
