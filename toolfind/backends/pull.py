"""``toolfind catalog pull``: live MCP servers' tools written as offline catalog files.

Each backend's tools become ``<out_dir>/<server>.json``, an MCP ``tools/list`` result (the
entries as sent), so its namespace is the server name and the CLI searches it offline.
A file is rewritten by ``userfiles.rewrite`` (atomically, through a symlink, mode and owner
kept), the previous version kept as a numbered backup ``<server>.json.~N~``; a file whose
content would not change, or whose server cannot be reached, is left alone. A server whose
file cannot be written (a name too long for the file system, a read-only file) is reported
failed; the others are still written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Literal, TextIO

from toolfind.backends import defaults
from toolfind.backends.config import Skipped, load_servers
from toolfind.backends.redact import redact
from toolfind.backends.seam import BackendStatus
from toolfind.errors import CatalogError
from toolfind.models import Tool
from toolfind.output.encode import dumps
from toolfind.userfiles import FileProblem, read_capped, rewrite

__all__ = ["PullReport", "ServerPull", "pull"]

PullStatus = Literal["written", "unchanged", "failed", "disabled"]


@dataclass(frozen=True, slots=True)
class ServerPull:
    """What pulling one server did. ``file`` is None for a disabled server."""

    server: str
    status: PullStatus
    file: str | None = None
    tool_count: int = 0
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    backup: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class PullReport:
    """Every server's outcome, in the servers files' order."""

    servers: tuple[ServerPull, ...]

    @property
    def failed(self) -> tuple[ServerPull, ...]:
        return tuple(s for s in self.servers if s.status == "failed")


def pull(
    servers_files: Sequence[Path],
    out_dir: Path,
    *,
    environ: Mapping[str, str] | None = None,
    start_timeout: float = defaults.START_TIMEOUT,
    errlog: TextIO | None = None,
) -> PullReport:
    """Connect to every server the files declare and write its tools under ``out_dir``.

    Blocking (runs its own event loop). ``errlog`` receives the servers' stderr (default
    ``sys.stderr``). A server that fails, or whose entry cannot be used, is reported (status
    ``failed``), not raised.

    Raises:
        ConfigError: a servers file cannot be read as a whole.
        CatalogError: ``out_dir`` or a catalog file in it cannot be written.
    """
    import anyio

    from toolfind.backends.pool import BackendPool

    skipped: list[Skipped] = []
    specs = load_servers(servers_files, environ, skipped=skipped)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CatalogError(
            f"cannot create the directory: {exc.strerror or exc}", file=str(out_dir)
        ) from None

    async def connect() -> tuple[Mapping[str, BackendStatus], Sequence[Tool]]:
        async with BackendPool(specs, start_timeout=start_timeout, errlog=errlog) as pool:
            await pool.wait_settled()
            return pool.status(), pool.tools()

    status, tools = anyio.run(connect)
    by_server: dict[str, list[Mapping[str, Any]]] = {}
    for tool in tools:
        by_server.setdefault(tool.namespace, []).append(tool.original or {})
    results = [
        ServerPull(skip.name, "failed", file=str(out_dir / f"{skip.name}.json"), error=skip.reason)
        for skip in skipped
    ]
    for spec in specs:
        if spec.disabled:
            results.append(ServerPull(spec.name, "disabled"))
            continue
        state = status[spec.name]
        target = out_dir / f"{spec.name}.json"
        if not state.available:
            error = redact(state.detail)
            results.append(ServerPull(spec.name, "failed", file=str(target), error=error))
            continue
        try:
            results.append(write_catalog(spec.name, by_server.get(spec.name, []), target))
        except CatalogError as exc:
            results.append(
                ServerPull(spec.name, "failed", file=str(target), error=redact(str(exc)))
            )
    return PullReport(tuple(results))


def write_catalog(server: str, tools: Sequence[Mapping[str, Any]], target: Path) -> ServerPull:
    """Write ``{"tools": [...]}`` to ``target`` atomically, keeping a backup; report the diff.

    Raises:
        CatalogError: the file, its backup or the temporary file cannot be written.
    """
    text = dumps({"tools": list(tools)}) + "\n"
    old_text = _read_existing(target)
    old = _tools_by_name(old_text)
    new = {str(t.get("name")): t for t in tools}
    added = tuple(sorted(set(new) - set(old)))
    removed = tuple(sorted(set(old) - set(new)))
    changed = tuple(
        sorted(n for n in set(new) & set(old) if _canonical(new[n]) != _canonical(old[n]))
    )
    report = partial(
        ServerPull,
        server,
        file=str(target),
        tool_count=len(tools),
        added=added,
        removed=removed,
        changed=changed,
    )
    if old_text == text:
        return report("unchanged")
    try:
        backup = rewrite(target, text.encode("utf-8"))
    except OSError as exc:
        raise CatalogError(f"cannot write: {exc.strerror or exc}", file=str(target)) from None
    return report("written", backup=backup)


def _read_existing(path: Path) -> str | None:
    try:
        return read_capped(path).decode("utf-8")
    except FileProblem as exc:
        if exc.missing:
            return None
        raise CatalogError(exc.message, file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"cannot read the previous catalog: {exc}", file=str(path)) from None


def _tools_by_name(text: str | None) -> dict[str, Any]:
    """The previous file's tools by name; a file that is not a tools/list counts as empty."""
    if text is None:
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return {}
    tools = doc.get("tools") if isinstance(doc, dict) else None
    if not isinstance(tools, list):
        return {}
    return {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
