"""serve-mcp latency and throughput of ``proxy_search_tools``, through a real MCP client.

Starts ``python -m toolfind serve-mcp`` as a subprocess in front of a synthetic backend MCP
server with ``--backend-tools`` tools (0: none), over stdio (default) or streamable HTTP, then
drives it with the MCP SDK's client: sequential calls for latency (median, p99), then
``--concurrency`` calls at once for throughput.

    python benchmarks/serve_bench.py [--backend-tools 1000] [--transport stdio|http]
                                     [-c CATALOG ...] [--calls 500] [--concurrency 200]

Without ``-c`` the catalogs are an empty directory, so only the backend's tools are searched.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [
    "compress a file",
    "read file contents",
    "send an email",
    "create calendar event",
    "git commit",
    "query database table",
    "upload to cloud storage",
    "square root",
    "fetch a web page",
    "list directory",
]
WORDS = (
    "file directory archive email message calendar event database table query web page fetch "
    "upload download bucket storage commit branch repository image resize convert text json "
    "schema validate search index user account invoice payment weather forecast time zone "
    "compress extract encrypt hash sign verify list create delete update read write move copy"
).split()

BACKEND = """
import sys
import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [types.Tool.model_validate(t) for t in __import__("json").load(open(sys.argv[1]))]

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)

async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(text="ok")])

async def main():
    server = Server("synthetic", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""


def synthetic_tools(count: int) -> list[dict[str, Any]]:
    rng = random.Random(7)
    tools = []
    for i in range(count):
        words = rng.sample(WORDS, 6)
        tools.append(
            {
                "name": f"{words[0]}_{words[1]}_{i}",
                "description": " ".join(words).capitalize() + f". Tool number {i}.",
                "inputSchema": {
                    "type": "object",
                    "properties": {w: {"type": "string", "description": w} for w in words[2:4]},
                },
            }
        )
    return tools


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def serve_args(work: Path, catalogs: list[Path], backend_tools: int) -> list[str]:
    args = ["-m", "toolfind", "serve-mcp", "--log-level", "error"]
    if not catalogs:
        empty = work / "catalogs"
        empty.mkdir()
        catalogs = [empty]
    for catalog in catalogs:
        args += ["-c", str(catalog)]
    if backend_tools:
        (work / "tools.json").write_text(json.dumps(synthetic_tools(backend_tools)), "utf-8")
        (work / "backend.py").write_text(BACKEND, "utf-8")
        config = {
            "mcpServers": {
                "synthetic": {
                    "command": sys.executable,
                    "args": [str(work / "backend.py"), str(work / "tools.json")],
                }
            }
        }
        (work / "servers.json").write_text(json.dumps(config), "utf-8")
        args += ["--servers", str(work / "servers.json")]
    return args


def environment(work: Path) -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "TOOLFIND_CACHE_DIR": str(work / "cache")}


@asynccontextmanager
async def connect(work: Path, args: list[str], transport: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=args, env=environment(work))
        async with Client(params, mode="legacy") as client:
            yield client
        return
    command = [sys.executable, *args, "--http", "127.0.0.1:0"]
    async with await anyio.open_process(command, env=environment(work)) as process:
        assert process.stderr is not None
        stderr = BufferedByteReceiveStream(process.stderr)
        url = ""
        while not url:
            line = (await stderr.receive_until(b"\n", 65536)).decode()
            if "listening on " in line:
                url = line.split("listening on ", 1)[1].strip()
        try:
            async with Client(url) as client:
                yield client
        finally:
            process.terminate()
            await process.wait()


async def bench(
    catalogs: list[Path], backend_tools: int, transport: str, calls: int, concurrency: int
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        args = serve_args(work, catalogs, backend_tools)
        async with connect(work, args, transport) as client:
            total = 0
            while total < backend_tools:  # the backend connects before the first answer today,
                # in the background later: wait until its tools are searchable
                categories = await client.call_tool("proxy_tool_categories", {})
                total = (categories.structured_content or {}).get("total_tools", 0)
            sequential: list[float] = []
            for i in range(calls):
                t0 = time.perf_counter()
                result = await client.call_tool(
                    "proxy_search_tools", {"query": QUERIES[i % len(QUERIES)]}
                )
                sequential.append(time.perf_counter() - t0)
                assert not result.is_error
            concurrent: list[float] = []

            async def one(i: int) -> None:
                t0 = time.perf_counter()
                result = await client.call_tool(
                    "proxy_search_tools", {"query": QUERIES[i % len(QUERIES)]}
                )
                concurrent.append(time.perf_counter() - t0)
                assert not result.is_error

            t_all = time.perf_counter()
            async with anyio.create_task_group() as burst:
                for i in range(concurrency):
                    burst.start_soon(one, i)
            wall = time.perf_counter() - t_all
    return {
        "transport": transport,
        "indexed_tools": total,
        "sequential_calls": calls,
        "sequential_median_ms": statistics.median(sequential) * 1000,
        "sequential_p99_ms": percentile(sequential, 0.99) * 1000,
        "concurrent_calls": concurrency,
        "concurrent_per_second": concurrency / wall,
        "concurrent_median_ms": statistics.median(concurrent) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-c", "--catalog", action="append", type=Path, default=[])
    parser.add_argument("--backend-tools", type=int, default=1000)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=200)
    args = parser.parse_args()
    report = anyio.run(
        bench, args.catalog, args.backend_tools, args.transport, args.calls, args.concurrency
    )
    for key, value in report.items():
        shown = f"{value:.2f}" if isinstance(value, float) else str(value)
        print(f"{key:24} {shown}")


if __name__ == "__main__":
    main()
