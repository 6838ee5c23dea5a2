"""serve-mcp start-up: seconds from spawn to the first ``tools/list`` answer over stdio.

Serves the shipped catalogs (warm cache: one untimed run first) without backends; with
``--backend-wait 0`` in front of backends that are slow (never start), stuck (never answer),
crashing (exit at once) and healthy (tests/fixtures/backends/lifecycle_server.py): what
serving costs when it never waits; and with the defaults (first contact: the first
``initialize`` and lists wait, bounded, for backends still connecting, counted from that
``initialize``) in front of two healthy backends and one stuck, where the first list must
hold the healthy backends' tools (a host that lists once) and the first ``initialize``
their instructions (a stdio host), however long serve-mcp took to start. Reports the median
and the maximum of ``--runs`` runs. Must hold: <= 1.5 s with backends and
``--backend-wait 0``; <= 3 s for first contact, with both healthy backends' tools and
instructions every time.

    python benchmarks/serve_start.py [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIFECYCLE = ROOT / "tests" / "fixtures" / "backends" / "lifecycle_server.py"


def first_list(
    servers: Path | None, env: dict[str, str], catalog: Path, *args: str
) -> tuple[float, set[str], str]:
    """Seconds from spawn to the tools/list reply (initialize first, as a host does), the
    names it listed and the instructions ``initialize`` gave."""
    command = [sys.executable, "-m", "toolfind", "serve-mcp", "-c", str(catalog), *args]
    if servers is not None:
        command += ["--servers", str(servers)]
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert process.stdin is not None
        process.stdin.write(json.dumps(message).encode() + b"\n")
        process.stdin.flush()

    def reply(request_id: int) -> dict[str, object]:
        assert process.stdout is not None
        while True:
            message = json.loads(process.stdout.readline())
            if message.get("id") == request_id:
                return dict(message)

    send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        }
    )
    initialized = reply(1)["result"]
    assert isinstance(initialized, dict)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    listed = reply(2)
    elapsed = time.perf_counter() - start
    assert "result" in listed, listed
    process.stdin.close()  # serve-mcp stops its backends and leaves: the next run starts clean
    process.wait(60)
    result = listed["result"]
    assert isinstance(result, dict)
    names = {str(tool["name"]) for tool in result["tools"]}
    return elapsed, names, str(initialized.get("instructions") or "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from toolfind.config import packaged_catalogs

    with tempfile.TemporaryDirectory() as work:
        gate = Path(work) / "never"
        servers = Path(work) / "servers.json"
        two = Path(work) / "two.json"
        py, fixture = sys.executable, str(LIFECYCLE)

        def hint(server: str) -> list[str]:
            return ["--instructions", f"Ask {server} first."]

        two.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "good": {"command": py, "args": [fixture, *hint("good")]},
                        "other": {"command": py, "args": [fixture, *hint("other")]},
                        "stuck": {"command": py, "args": [fixture, "--stuck"]},
                    }
                }
            ),
            encoding="utf-8",
        )
        servers.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "slow": {"command": py, "args": [fixture, "--gate", str(gate)]},
                        "stuck": {"command": py, "args": [fixture, "--stuck"]},
                        "crash": {"command": py, "args": [fixture, "--need", str(gate)]},
                        "good": {"command": py, "args": [fixture]},
                    }
                }
            ),
            encoding="utf-8",
        )
        env = {
            **os.environ,
            "TOOLFIND_CACHE_DIR": str(Path(work) / "cache"),
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
            ),
        }
        catalog = packaged_catalogs()
        first_list(None, env, catalog)  # fill the cache
        cases: tuple[tuple[str, Path | None, tuple[str, ...]], ...] = (
            ("without backends", None, ()),
            ("with backends, --backend-wait 0", servers, ("--backend-wait", "0")),
            ("first contact: 2 healthy + stuck", two, ("--exposure", "direct")),
        )
        for label, with_servers, extra in cases:
            runs = [first_list(with_servers, env, catalog, *extra) for _ in range(args.runs)]
            times = [elapsed for elapsed, _, _ in runs]
            line = (
                f"{label:32} first tools/list: median {statistics.median(times):.3f} s, "
                f"max {max(times):.3f} s ({args.runs} runs)"
            )
            if with_servers is two:
                listed = sum({"good__echo", "other__echo"} <= names for _, names, _ in runs)
                told = sum(
                    "Ask good first." in said and "Ask other first." in said for _, _, said in runs
                )
                line += (
                    f"; both healthy backends' tools listed in {listed} of {args.runs}, "
                    f"their instructions in initialize in {told} of {args.runs}"
                )
            print(line)


if __name__ == "__main__":
    main()
