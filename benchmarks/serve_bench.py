"""serve-mcp throughput: search_tools calls per second and latency through a real HTTP client.

Starts the server in this process on a free loopback port (streamable HTTP, uvicorn), then
drives it with the MCP SDK's client: sequential calls for latency, then N concurrent calls
(each its own ``tools/call``) for throughput. Reports median and p99 latency.

    python benchmarks/serve_bench.py [-c CATALOG ...] [--calls 1000] [--concurrency 1000]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from toolfind.config import packaged_catalogs
from toolfind.serve import ServeOptions, serve
from toolfind.serve.options import HttpAddress
from toolfind.serve.transports import HttpHandle

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


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def bench(catalogs: list[Path], calls: int, concurrency: int, mode: str) -> dict[str, Any]:
    options = ServeOptions(
        catalogs=tuple(catalogs), http=HttpAddress("127.0.0.1", 0), watch=False, log_level="error"
    )
    handles: list[HttpHandle] = []
    started = anyio.Event()

    def ready(handle: HttpHandle) -> None:
        handles.append(handle)
        started.set()

    report: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: serve(options, ready=ready))
        await started.wait()
        handle = handles[0]
        try:
            async with Client(handle.url, mode=mode) as client:
                await client.list_tools()
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
            report = {
                "mode": mode,
                "sequential_calls": calls,
                "sequential_per_second": calls / sum(sequential),
                "sequential_median_ms": statistics.median(sequential) * 1000,
                "sequential_p99_ms": percentile(sequential, 0.99) * 1000,
                "concurrent_calls": concurrency,
                "concurrent_per_second": concurrency / wall,
                "concurrent_median_ms": statistics.median(concurrent) * 1000,
                "concurrent_p99_ms": percentile(concurrent, 0.99) * 1000,
            }
        finally:
            handle.stop()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-c", "--catalog", action="append", type=Path, default=[])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=1000)
    parser.add_argument(
        "--mode",
        choices=["auto", "legacy"],
        default="auto",
        help="auto: 2026-07-28 single-exchange HTTP; legacy: handshake-era sessions",
    )
    args = parser.parse_args()
    catalogs = args.catalog or [packaged_catalogs()]
    report = anyio.run(bench, catalogs, args.calls, args.concurrency, args.mode)
    for key, value in report.items():
        shown = f"{value:.2f}" if isinstance(value, float) else str(value)
        print(f"{key:24} {shown}")


if __name__ == "__main__":
    main()
