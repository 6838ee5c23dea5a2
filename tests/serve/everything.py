"""The MCP reference server ``@modelcontextprotocol/server-everything`` (npm) for the tests,
and a host that answers what it asks (sampling, elicitation, roots).

The package is installed once per machine into ``npm`` of the tests' cache, outside the
checkout (``tests.helpers.TEST_CACHE``; test runs side by side take turns, under a lock),
pinned to the version ``scripts/inspector-check.sh`` uses. Without ``node``/``npm`` the
tests that need it are skipped, except under CI (``CI`` set), where that is a failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext

from tests.helpers import TEST_CACHE

VERSION = "2026.8.31"
PACKAGE = "@modelcontextprotocol/server-everything"
CACHE = TEST_CACHE / "npm"


def everything_script() -> Path:
    """The server's entry point, installed on first use; skips (fails under CI) without node."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("CI"):
            pytest.fail("node and npm are needed for the server-everything tests (CI has them)")
        pytest.skip(
            "node/npm not found: the @modelcontextprotocol/server-everything tests need them"
        )
    installed = CACHE / "node_modules" / PACKAGE
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        manifest = installed / "package.json"
        if not manifest.exists() or json.loads(manifest.read_text())["version"] != VERSION:
            subprocess.run(
                [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--silent"]
                + ["--no-save", f"{PACKAGE}@{VERSION}"],
                cwd=CACHE,
                check=True,
                timeout=600,
                stdout=subprocess.DEVNULL,
            )
    return installed / "dist" / "index.js"


class Host:
    """A host's answers to what a server asks, and a record of what it was asked."""

    ROOT = types.Root(uri="file:///work/project", name="project")

    def __init__(self, name: str = "host", root: str | None = None) -> None:
        self.name = name
        self.root = self.ROOT if root is None else types.Root(uri=root, name=name)
        self.asked: list[str] = []
        self.changed = anyio.Event()

    def _saw(self, what: str) -> None:
        self.asked.append(what)
        self.changed.set()
        self.changed = anyio.Event()

    async def sampling(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self._saw("sampling")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(text=f"an answer from {self.name}'s model"),
            model=f"{self.name}-model",
            stop_reason="endTurn",
        )

    async def elicitation(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        if isinstance(params, types.ElicitRequestURLParams):
            self._saw(f"elicitation url {params.url}")
            return types.ElicitResult(action="accept")
        self._saw("elicitation form")
        return types.ElicitResult(action="accept", content={"name": f"{self.name}'s user"})

    async def roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self._saw("roots")
        return types.ListRootsResult(roots=[self.root])

    def callbacks(self) -> dict[str, Any]:
        """The SDK client's keyword arguments that make it answer (and so declare) all three."""
        return {
            "sampling_callback": self.sampling,
            "elicitation_callback": self.elicitation,
            "list_roots_callback": self.roots,
        }
