"""What leaves serve-mcp: results every transport can encode, errors without secrets, and a
server that outlives any answer it cannot give (a catalog file whose name is not UTF-8 must
not end serve-mcp on the first hit from it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.serve.support import (
    INITIALIZE,
    FakeBackends,
    Log,
    make_server,
    server_env,
    structured,
    text_of,
)
from toolfind.backends.redact import remember_values

LATIN_1 = b"caf\xe9.json"


class OddBackends(FakeBackends):
    """``weather__forecast`` answers a text holding a lone surrogate; ``weather__alerts``
    fails with an exception no layer expects, naming a secret."""

    async def call(
        self, name: str, arguments: Mapping[str, Any], progress: Any = None, *, lane: Any = None
    ) -> types.CallToolResult:
        self.calls.append((name, dict(arguments)))
        if name == "weather__alerts":
            raise RuntimeError("GET http://u:guard-S3cret@h.example/x?token=guard-S3cret failed")
        return types.CallToolResult(content=[types.TextContent(text="from caf\udce9.json")])


@pytest.mark.anyio
async def test_an_unencodable_result_is_rendered_and_an_unexpected_error_redacted(
    catalog_dir: Path,
) -> None:
    remember_values(["guard-S3cret"])
    server, _, _ = make_server([catalog_dir], OddBackends())
    async with Client(server, mode="legacy") as client:
        odd = await client.call_tool("weather__forecast", {"city": "Oslo"})
        assert text_of(odd) == "from caf\\xe9.json"
        with pytest.raises(MCPError) as failed:
            await client.call_tool("weather__alerts", {})
        assert "guard-S3cret" not in str(failed.value)
        assert "toolfind could not answer tools/call: RuntimeError: GET http://***@h" in str(
            failed.value
        )
        found = structured(await client.call_tool("proxy_search_tools", {"query": "weather"}))
        assert found["hits"]  # still serving


@pytest.mark.e2e
@pytest.mark.slow
def test_a_file_name_that_is_not_utf_8_never_ends_serve_mcp(tmp_path: Path) -> None:
    catalogs = tmp_path / "d"
    catalogs.mkdir()
    with open(os.fsencode(catalogs) + b"/" + LATIN_1, "w", encoding="utf-8") as f:
        json.dump([{"name": "brew", "description": "Brew a rocket coffee."}], f)
    messages = [
        INITIALIZE,
        {"method": "notifications/initialized"},
        {
            "id": 2,
            "method": "tools/call",
            "params": {"name": "proxy_search_tools", "arguments": {"query": "rocket"}},
        },
        {
            "id": 3,
            "method": "tools/call",
            "params": {"name": "proxy_call_tool", "arguments": {"name": "brew"}},
        },
        {
            "id": 4,
            "method": "tools/call",
            "params": {"name": "proxy_get_tool", "arguments": {"name": "caf_/brew"}},
        },
        {"id": 5, "method": "ping"},
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "toolfind", "serve-mcp", "-c", "d"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **server_env(tmp_path)},
        cwd=tmp_path,
    )
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    log = Log(process.stderr)
    answers: dict[int, Any] = {}
    try:
        for message in messages:
            process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
            process.stdin.flush()
            if "id" in message:
                while message["id"] not in answers:
                    line = process.stdout.readline()
                    assert line, f"serve-mcp ended: {log.text[-2000:]}"
                    reply = json.loads(line.decode("utf-8"))  # strict UTF-8
                    answers[reply.get("id")] = reply
        assert process.poll() is None
    finally:
        process.stdin.close()
        process.wait(30)
        process.stdout.close()
    hits = json.loads(answers[2]["result"]["content"][0]["text"])["hits"]
    assert hits[0]["source"]["file"] == "caf\\xe9.json"  # inside the catalog path, escaped
    refused = answers[3]["result"]["content"][0]["text"]
    assert "(from caf\\xe9.json)" in refused and answers[3]["result"]["isError"]
    assert answers[4]["result"]["structuredContent"]["name"] == "brew"
    assert answers[5]["result"] == {}
    assert process.returncode == 0 and log.tracebacks() == []
