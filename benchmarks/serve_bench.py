"""serve-mcp latency and throughput of ``proxy_search_tools``, through a real MCP client.

Starts ``python -m toolfind serve-mcp`` as a subprocess in front of a synthetic backend MCP
server with ``--backend-tools`` tools (0: none), over stdio (default) or streamable HTTP, then
drives it with the MCP SDK's client: sequential calls for latency (median, p99), then
``--concurrency`` calls at once for throughput.

    python benchmarks/serve_bench.py [--backend-tools 1000] [--transport stdio|http]
                                     [-c CATALOG ...] [--calls 500] [--concurrency 200]

With ``--clients N`` (HTTP) it measures many hosts instead: N clients, each its own MCP
session, each searching once every ``--every`` seconds for ``--seconds`` seconds (latency
p50/p99 over every search). With ``--everything`` the backend is
``@modelcontextprotocol/server-everything`` (npm, as the tests install it) and each client
first calls one of its tools, so it gets a backend session of its own: the memory (RSS of
serve-mcp and every process under it) and the processes while they are connected, and the
backend processes left once they have gone, are reported too.

    python benchmarks/serve_bench.py --transport http --clients 50 [--every 1] [--seconds 20]
                                     [--everything]

With ``--base REV`` it is an A/B: REV (a git revision, checked out in a temporary worktree)
and this checkout are each served ``--runs`` times, run by run interleaved (A B, B A, ...) so
that the machine's drift hits both alike, and the medians of each side are reported, with the
load average before each run. serve-mcp's CPU per call (user and system, from /proc) is
measured for the one-at-a-time calls and for the burst, over stdio as over HTTP, and so is
the benchmark client's own: it shares the machine, so it bounds the calls per second too.

    python benchmarks/serve_bench.py --transport http --concurrency 50 --base main [--runs 7]

Without ``-c`` the catalogs are an empty directory, so only the backend's tools are searched.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
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


EVERYTHING = ROOT / ".cache" / "npm" / "node_modules" / "@modelcontextprotocol"
EVERYTHING_SCRIPT = EVERYTHING / "server-everything" / "dist" / "index.js"


def everything_args(work: Path, catalogs: list[Path], sessions: int) -> list[str]:
    """serve-mcp's arguments in front of server-everything (up to ``sessions`` of it)."""
    if not EVERYTHING_SCRIPT.exists():
        raise SystemExit(f"{EVERYTHING_SCRIPT} not found: run the serve tests once to install it")
    args = serve_args(work, catalogs, 0)
    entry = {"command": "node", "args": [str(EVERYTHING_SCRIPT)], "max_sessions": sessions}
    (work / "servers.json").write_text(json.dumps({"mcpServers": {"everything": entry}}), "utf-8")
    return [*args, "--servers", str(work / "servers.json"), "--backend-wait", "60"]


def tree(pid: int) -> list[int]:
    """``pid`` and every process under it (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(proc.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


#: The serve-mcp process being measured (0: none found).
SERVER = [0]


def server_cpu() -> float:
    """serve-mcp's CPU seconds so far (NaN when its process was not found)."""
    return cpu_seconds(SERVER[0]) if SERVER[0] else float("nan")


def serve_mcp_child() -> int:
    """The serve-mcp process under this one (under stdio the SDK's client starts it)."""
    for pid in tree(os.getpid()):
        try:
            if b"serve-mcp" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
        except OSError:
            continue
    return 0


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sessions(pid: int) -> list[int]:
    """The server-everything processes under ``pid``."""
    found = []
    for child in tree(pid):
        try:
            if str(EVERYTHING_SCRIPT).encode() in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:
            continue
    return found


def rss_mib(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


class Hosts:
    """What the many clients of `many_clients` share: the server, the clock, the results."""

    def __init__(self, url: str, pid: int, clients: int, every: float, seconds: float) -> None:
        self.url, self.pid, self.clients = url, pid, clients
        self.every, self.seconds = every, seconds
        self.latencies: list[float] = []
        self.connected = anyio.Event()
        self.ready = self.done = 0
        self.measured: dict[str, Any] = {}

    async def host(self, i: int, everything: bool) -> None:
        """Client ``i``: connect (and, with ``everything``, open its own backend session),
        wait for the others, then search once every ``every`` seconds, spread over the
        period; client 0 notes the processes and memory before leaving."""
        async with Client(self.url, mode="legacy") as client:
            await client.list_tools()
            if everything:
                await client.call_tool("everything__echo", {"message": f"client {i}"})
            self.ready += 1
            if self.ready == self.clients:
                self.measured["cpu"] = cpu_seconds(self.pid)
                self.connected.set()
            await self.connected.wait()
            start = time.perf_counter()
            offset = self.every * i / self.clients
            n = 0
            while time.perf_counter() - start < self.seconds:
                await anyio.sleep(max(0.0, start + offset + self.every * n - time.perf_counter()))
                t0 = time.perf_counter()
                query = QUERIES[(i + n) % len(QUERIES)]
                result = await client.call_tool("proxy_search_tools", {"query": query})
                self.latencies.append(time.perf_counter() - t0)
                assert not result.is_error
                n += 1
            if i == 0:
                pids = tree(self.pid)
                self.measured["processes"] = len(pids)
                self.measured["rss_mib"] = rss_mib(pids)
            self.done += 1
            if self.done == self.clients:
                self.measured["cpu"] = cpu_seconds(self.pid) - self.measured["cpu"]


async def many_clients(
    catalogs: list[Path],
    backend_tools: int,
    clients: int,
    every: float,
    seconds: float,
    everything: bool,
) -> dict[str, Any]:
    """``clients`` HTTP clients searching once every ``every`` seconds (see the module)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if everything:
            args = everything_args(work, catalogs, clients)
        else:
            args = serve_args(work, catalogs, backend_tools)
        command = [sys.executable, *args, "--http", "127.0.0.1:0"]
        async with await anyio.open_process(command, env=environment(work), cwd=work) as process:
            assert process.stderr is not None
            stderr = BufferedByteReceiveStream(process.stderr)
            url = ""
            while not url:
                line = (await stderr.receive_until(b"\n", 65536)).decode()
                if "listening on " in line:
                    url = line.split("listening on ", 1)[1].strip()
            hosts = Hosts(url, process.pid, clients, every, seconds)
            async with anyio.create_task_group() as tg:
                for i in range(clients):
                    tg.start_soon(hosts.host, i, everything)
            left = 0
            if everything:  # the clients have gone: their sessions go (the shared one stays)
                with anyio.move_on_after(30):
                    while (left := len(sessions(process.pid)) - 1) > 0:
                        await anyio.sleep(0.2)
            process.terminate()
            await process.wait()
    latencies, measured = hosts.latencies, hosts.measured
    return {
        "transport": "http",
        "clients": clients,
        "searches": len(latencies),
        "search_p50_ms": percentile(latencies, 0.5) * 1000,
        "search_p99_ms": percentile(latencies, 0.99) * 1000,
        "server_cpu_ms_per_search": measured["cpu"] / max(1, len(latencies)) * 1000,
        "processes_connected": measured.get("processes", 0),
        "rss_connected_mib": measured.get("rss_mib", 0.0),
        "client_sessions_left_after": left,
    }


#: The checkout whose toolfind is served (``--tree``; default: this one).
TREE = [ROOT]


def environment(work: Path) -> dict[str, str]:
    """serve-mcp's environment: ``TREE``'s toolfind first on the path (serve-mcp runs in
    ``work``: ``python -m`` puts the working directory before it)."""
    path = os.pathsep.join(p for p in (str(TREE[0]), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "TOOLFIND_CACHE_DIR": str(work / "cache")}


@asynccontextmanager
async def connect(work: Path, args: list[str], transport: str) -> AsyncIterator[Client]:
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=args, env=environment(work), cwd=work
        )
        async with Client(params, mode="legacy") as client:
            SERVER[0] = serve_mcp_child()
            yield client
        SERVER[0] = 0
        return
    command = [sys.executable, *args, "--http", "127.0.0.1:0"]
    async with await anyio.open_process(command, env=environment(work), cwd=work) as process:
        assert process.stderr is not None
        SERVER[0] = process.pid
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
            cpu, mine = server_cpu(), time.process_time()
            for i in range(calls):
                t0 = time.perf_counter()
                result = await client.call_tool(
                    "proxy_search_tools", {"query": QUERIES[i % len(QUERIES)]}
                )
                sequential.append(time.perf_counter() - t0)
                assert not result.is_error
            sequential_cpu, sequential_mine = server_cpu() - cpu, time.process_time() - mine
            concurrent: list[float] = []

            async def one(i: int) -> None:
                t0 = time.perf_counter()
                result = await client.call_tool(
                    "proxy_search_tools", {"query": QUERIES[i % len(QUERIES)]}
                )
                concurrent.append(time.perf_counter() - t0)
                assert not result.is_error

            cpu, mine = server_cpu(), time.process_time()
            t_all = time.perf_counter()
            async with anyio.create_task_group() as burst:
                for i in range(concurrency):
                    burst.start_soon(one, i)
            wall = time.perf_counter() - t_all
            cpu, mine = server_cpu() - cpu, time.process_time() - mine
    return {
        "transport": transport,
        "indexed_tools": total,
        "sequential_calls": calls,
        "sequential_median_ms": statistics.median(sequential) * 1000,
        "sequential_p99_ms": percentile(sequential, 0.99) * 1000,
        "sequential_server_cpu_ms": per_call(sequential_cpu, calls),
        "sequential_client_cpu_ms": per_call(sequential_mine, calls),
        "concurrent_calls": concurrency,
        "concurrent_per_second": concurrency / wall,
        "concurrent_median_ms": statistics.median(concurrent) * 1000,
        "server_cpu_ms_per_call": per_call(cpu, concurrency),
        # The benchmark's own client shares the machine: its CPU per call bounds the rate too.
        "client_cpu_ms_per_call": per_call(mine, concurrency),
    }


def per_call(cpu: float, calls: int) -> float:
    """Milliseconds of serve-mcp CPU per call (NaN when not measured)."""
    return cpu / calls * 1000 if cpu == cpu else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-c", "--catalog", action="append", type=Path, default=[])
    parser.add_argument("--backend-tools", type=int, default=1000)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--clients", type=int, default=0, help="many HTTP clients (see above)")
    parser.add_argument("--every", type=float, default=1.0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--everything", action="store_true")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="serve another checkout's toolfind (an A/B)"
    )
    parser.add_argument("--base", help="A/B against this git revision (see above)")
    parser.add_argument("--runs", type=int, default=7, help="runs per side with --base")
    args = parser.parse_args()
    TREE[0] = args.tree
    if args.base:
        compare(args)
        return
    if args.clients:
        report = anyio.run(
            many_clients,
            args.catalog,
            args.backend_tools,
            args.clients,
            args.every,
            args.seconds,
            args.everything,
        )
    else:
        report = anyio.run(
            bench, args.catalog, args.backend_tools, args.transport, args.calls, args.concurrency
        )
    for key, value in report.items():
        shown = f"{value:.2f}" if isinstance(value, float) else str(value)
        print(f"{key:24} {shown}")


def compare(args: argparse.Namespace) -> None:
    """``bench`` of ``--base`` and of this checkout, ``--runs`` times each, interleaved; the
    medians of both sides, their ratio, and each run's load average (see the module)."""
    work = Path(tempfile.mkdtemp(prefix="toolfind-serve-ab-"))
    base_tree = work / "base"
    git = ["git", "-C", str(ROOT), "worktree"]
    subprocess.run([*git, "add", "-q", "--detach", str(base_tree), args.base], check=True)
    runs: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    loads: list[float] = []
    try:
        for i in range(args.runs):
            for side in (0, 1) if i % 2 == 0 else (1, 0):
                TREE[0] = (base_tree, ROOT)[side]
                loads.append(os.getloadavg()[0])
                runs[side].append(
                    anyio.run(
                        bench,
                        args.catalog,
                        args.backend_tools,
                        args.transport,
                        args.calls,
                        args.concurrency,
                    )
                )
    finally:
        subprocess.run([*git, "remove", "--force", str(base_tree)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    print(f"base: {args.base}; {args.transport}; {args.runs} runs per side, interleaved")
    print(f"load average (1 min) before each run: {', '.join(f'{x:.1f}' for x in loads)}\n")
    print("| measure | base | new | new / base |")
    print("| --- | --- | --- | --- |")
    for key, value in runs[0][0].items():
        if isinstance(value, float):
            base = statistics.median(r[key] for r in runs[0])
            new = statistics.median(r[key] for r in runs[1])
            print(f"| {key} | {base:.2f} | {new:.2f} | {new / base if base else 0:.2f} |")


if __name__ == "__main__":
    main()
