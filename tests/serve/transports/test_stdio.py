"""serve-mcp's stdio on asyncio pipes: lines as the SDK reads them, and the wire kept clean."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from tests.helpers import REPO
from toolfind.serve.transports.stdio import PipeLines


async def _lines(data: bytes, limit: int) -> list[str]:
    reader = asyncio.StreamReader(limit=limit)
    reader.feed_data(data)
    reader.feed_eof()
    return [line async for line in PipeLines(reader)]


def test_an_overlong_line_is_skipped_whole_and_the_next_one_read() -> None:
    data = b'{"a": 1}\n' + b"x" * 100 + b"\n" + b"\xff tail\n" + b"no newline"
    lines = asyncio.run(_lines(data, limit=16))
    assert lines == ['{"a": 1}\n', "\ufffd tail\n", "no newline"]


SCRIPT = """
import anyio, sys
from toolfind.serve.transports.stdio import claimed_pipes

async def main():
    async with claimed_pipes() as pipes:
        assert pipes is not None, "stdin and stdout are pipes here"
        lines, out = pipes
        print("stray print", flush=True)  # fd 1 points at stderr while serving
        async for line in lines:
            await out.write("echo " + line)
            await out.flush()
    print("after", flush=True)  # fd 1 is the real stdout again

anyio.run(main)
"""


@pytest.mark.slow
def test_claimed_pipes_keep_stray_output_off_the_wire_and_restore_stdout() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=b"one\ntwo\n",
        capture_output=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert done.stdout == b"echo one\necho two\nafter\n"
    assert b"stray print" in done.stderr
