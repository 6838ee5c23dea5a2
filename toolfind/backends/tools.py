"""How a backend's listed tools become toolfind Tools: read by the catalog rules, named for
hosts, their text cleaned.

A ``tools/list`` entry is read as a catalog's MCP entry is (``catalog.read_entry``: the same
checks and limits), so the tools serve-mcp exposes are the tools ``catalog pull`` writes and a
catalog then loads. A description is kept whole up to the catalogs' 65,536 characters, and a
longer one drops the tool with a warning, as it skips a catalog entry: the MCP specification
sets no limit and a host connected directly shows the whole text; what protects a model is
that invisible characters are removed (search hits stay capped at 1,000 characters). What
toolfind owns of a backend tool: its exposed name (``shapes.host_name``,
``shapes.unique_name``), its namespace (the server's), its alias (the name calls are
forwarded under), its source (``mcp://<server>``), whether it is deferred (its server entry's
``defer``), and the free text a model reads, cleaned of invisible characters (nothing a
backend sends is trusted).

Pure functions, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from toolfind.catalog import read_entry
from toolfind.catalog.paths import EntryError, json_path
from toolfind.errors import BackendError
from toolfind.models import Source, Tool
from toolfind.output.text import clean_text
from toolfind.shapes import host_name, unique_name


def clean_descriptions(document: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a backend's schema (or annotations) whose ``description`` and ``title``
    strings, at any depth, are cleaned like tool descriptions; everything else is as sent.

    A model reads parameter descriptions as closely as the tool's own, so they are the same
    hiding place for prompt injection. Property names, enums and defaults stay untouched:
    the backend expects them verbatim.
    """

    def clean(obj: dict[str, Any]) -> dict[str, Any]:
        for key in ("description", "title"):
            if isinstance(obj.get(key), str):
                obj[key] = clean_text(obj[key])
        return obj

    # A JSON round trip copies at any depth (the SDK parses messages at most 200 deep).
    cleaned: dict[str, Any] = json.loads(json.dumps(document), object_hook=clean)
    return cleaned


def assign_names(
    tools: Sequence[tuple[str, str]], separator: str, reserved: Collection[str] = ()
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """Exposed names for (server, tool) pairs, and a message for each tool that was renamed.

    Deterministic: servers in the order given, each server's tools by name; the first
    claimant keeps ``shapes.host_name``, a later one (or one whose name is ``reserved``,
    compared case-insensitively, as some hosts do) gets ``_2``, ``_3``... within 64
    characters (``shapes.unique_name``).
    """
    order: dict[str, int] = {}
    for server, _ in tools:
        order.setdefault(server, len(order))
    taken = {name.casefold(): f"the meta-tool {name!r}" for name in reserved}
    names: dict[tuple[str, str], str] = {}
    renames: dict[tuple[str, str], str] = {}
    for server, tool in sorted(dict.fromkeys(tools), key=lambda st: (order[st[0]], st[1])):
        base = host_name(server, tool, separator)
        candidate = unique_name(base, taken, fold=True)
        if candidate != base:
            renames[(server, tool)] = (
                f"server {server!r}: tool {tool!r} is exposed as {candidate!r} "
                f"because {base!r} is taken by {taken[base.casefold()]}"
            )
        taken[candidate.casefold()] = f"{server}/{tool}"
        names[(server, tool)] = candidate
    return names, renames


@dataclass(frozen=True, slots=True)
class Listed:
    """One valid tool as a backend listed it: its own name and the entry as sent."""

    name: str
    raw: Mapping[str, Any]
    position: int


#: A tools/list that paginates longer than this is cut short (a server that never stops).
MAX_PAGES = 100
MAX_TOOLS_PER_SERVER = 10_000


async def read_tools(
    request: Callable[[dict[str, Any] | None], Awaitable[dict[str, Any]]],
    warn: Callable[[str], None],
) -> tuple[Listed, ...]:
    """A backend's whole tools/list: every page (``request(params)`` sends one), within
    :data:`MAX_PAGES` and :data:`MAX_TOOLS_PER_SERVER`, each tool checked on its own
    (`usable_tools`); each problem said through ``warn``. Raises BackendError for a result
    with no list of tools."""
    entries: list[Any] = []
    cursor: Any = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        raw = await request({"cursor": cursor} if cursor else None)
        page = raw.get("tools")
        if not isinstance(page, list):
            raise BackendError("its tools/list result has no list of tools")
        entries.extend(page)
        cursor = raw.get("nextCursor")
        if cursor is None or len(entries) >= MAX_TOOLS_PER_SERVER:
            break
        if not isinstance(cursor, str) or cursor in seen:
            warn("tools/list repeats a cursor; read the pages before it only")
            break
        seen.add(cursor)
    else:
        warn(f"tools/list has more than {MAX_PAGES} pages; read the first {MAX_PAGES}")
    if len(entries) > MAX_TOOLS_PER_SERVER:
        warn(f"lists more than {MAX_TOOLS_PER_SERVER} tools; kept the first {MAX_TOOLS_PER_SERVER}")
        del entries[MAX_TOOLS_PER_SERVER:]
    return usable_tools(entries, warn)


def usable_tools(entries: Sequence[Any], warn: Callable[[str], None]) -> tuple[Listed, ...]:
    """The entries of a ``tools/list`` that can be used, in order; each one dropped (see
    `check_tool`, or a name repeated) is ``warn``-ed in one line."""
    listed: list[Listed] = []
    names: set[str] = set()
    for position, entry in enumerate(entries):
        problem = check_tool(entry)
        label = entry.get("name") if isinstance(entry, dict) else None
        label = repr(clean_text(label, 80)) if isinstance(label, str) else f"#{position}"
        if problem is None and entry["name"] in names:
            problem = "repeats the name of an earlier tool"
        if problem is not None:
            warn(f"tool {label} dropped: {problem}")
            continue
        names.add(entry["name"])
        listed.append(Listed(entry["name"], entry, position))
    return tuple(listed)


def check_tool(entry: Any) -> str | None:
    """Why a tools/list entry cannot be used, or None when it can: what calling it needs (a
    name, an input schema of ``"type": "object"``), then the catalog rules for an MCP entry
    (``catalog.read_entry``, packaged schema and meta-schema included)."""
    if not isinstance(entry, dict):
        return "is not an object"
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        return "has no name"
    schema = entry.get("inputSchema")
    if not isinstance(schema, dict):
        return "inputSchema is not an object"
    if schema.get("type") != "object":
        return 'inputSchema does not have "type": "object"'
    if not isinstance(schema.get("properties", {}), dict):
        return "inputSchema.properties is not an object"
    try:
        read_entry(entry, namespace="-", source=Source("mcp://"), shape="mcp")
    except EntryError as exc:
        where = json_path(exc.parts)
        return f"{where}: {exc.message}" if where else exc.message
    return None


#: How a backend tool's source names its server: ``mcp://<server>``.
MCP_SOURCE = "mcp://"


def origin(tool: Tool) -> tuple[str, str] | None:
    """(server, the backend's own name) of a tool `to_tool` made, whatever it is exposed as
    and whichever namespace it was moved to; None for a catalog's tool."""
    file = tool.source.file if tool.source is not None else ""
    if not file.startswith(MCP_SOURCE) or not tool.aliases:
        return None
    return file[len(MCP_SOURCE) :], tool.aliases[0]


def needs_task(tool: Tool) -> bool:
    """Whether a backend tool must run as an MCP task (``execution.taskSupport`` is
    ``required``): toolfind does not relay tasks, so such a tool is not callable."""
    execution = tool.original.get("execution") if isinstance(tool.original, Mapping) else None
    return isinstance(execution, Mapping) and execution.get("taskSupport") == "required"


def to_tool(server: str, exposed: str, item: Listed, *, defer: bool = False) -> Tool:
    """The Tool of a tool ``check_tool`` accepted, exposed as ``exposed``; deferred when its
    server entry says ``defer`` (or the entry itself does)."""
    where = Source(file=MCP_SOURCE + server, pointer=f"/tools/{item.position}")
    tool = read_entry(item.raw, namespace=server, source=where, shape="mcp", check_schemas=False)
    return replace(
        tool,
        name=exposed,
        namespace=server,
        aliases=(item.name,),
        defer=defer or tool.defer,
        description=clean_text(tool.description),
        title=None if tool.title is None else clean_text(tool.title),
        parameters=clean_descriptions(tool.parameters),
        annotations=clean_descriptions(tool.annotations) if tool.annotations else {},
        output_schema=None
        if tool.output_schema is None
        else clean_descriptions(tool.output_schema),
    )
