"""How a backend's listed tools become toolfind Tools: checked, named, their text cleaned.

Pure functions, no I/O; the MCP SDK is imported only inside `check_tool`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolfind.models import Source, Tool
from toolfind.output.wire import clean_text
from toolfind.serve.backends.config import safe_name

#: MCP hosts reject tool names longer than this.
MAX_NAME = 64
#: Backend descriptions are untrusted text shown to a model: capped, invisible characters removed.
MAX_DESCRIPTION = 4000


def exposed_name(server: str, tool: str, separator: str = "__") -> str:
    """``<server><sep><tool>`` made safe for MCP hosts (``^[a-zA-Z0-9_-]{1,64}$``).

    A name longer than 64 characters is cut and ends with 8 hex digits of a hash of the
    server and tool names, so two long names stay distinct and the result is stable.
    """
    full = f"{safe_name(server)}{separator}{safe_name(tool)}"
    if len(full) <= MAX_NAME:
        return full
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{full[: MAX_NAME - 9]}_{digest}"


def clean_descriptions(document: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a backend's schema (or annotations) whose ``description`` and ``title``
    strings, at any depth, are cleaned like tool descriptions; everything else is as sent.

    A model reads parameter descriptions as closely as the tool's own, so they are the same
    hiding place for prompt injection. Property names, enums and defaults stay untouched:
    the backend expects them verbatim.
    """

    def clean(obj: dict[str, Any]) -> dict[str, Any]:
        for key, limit in (("description", MAX_DESCRIPTION), ("title", 200)):
            if isinstance(obj.get(key), str):
                obj[key] = clean_text(obj[key], limit)
        return obj

    # A JSON round trip copies at any depth (the SDK parses messages at most 200 deep).
    cleaned: dict[str, Any] = json.loads(json.dumps(document), object_hook=clean)
    return cleaned


def assign_names(
    tools: Sequence[tuple[str, str]], separator: str = "__", reserved: Collection[str] = ()
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], str]]:
    """Exposed names for (server, tool) pairs, and a message for each tool that was renamed.

    Deterministic: servers in the order given, each server's tools by name; the first
    claimant keeps `exposed_name`, a later one (or one whose name is ``reserved``, compared
    case-insensitively, as some hosts do) gets ``_2``, ``_3``... within 64 characters.
    """
    order: dict[str, int] = {}
    for server, _ in tools:
        order.setdefault(server, len(order))
    taken = {name.casefold(): f"the meta-tool {name!r}" for name in reserved}
    names: dict[tuple[str, str], str] = {}
    renames: dict[tuple[str, str], str] = {}
    for server, tool in sorted(dict.fromkeys(tools), key=lambda st: (order[st[0]], st[1])):
        base = exposed_name(server, tool, separator)
        candidate, n = base, 2
        while candidate.casefold() in taken:
            suffix = f"_{n}"
            candidate, n = base[: MAX_NAME - len(suffix)] + suffix, n + 1
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


def check_tool(entry: Any) -> str | None:
    """Why a tools/list entry cannot be used, or None when it is a valid MCP tool."""
    from mcp_types import Tool as McpTool
    from pydantic import ValidationError

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
        McpTool.model_validate(entry, by_name=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}"
    return None


def to_tool(server: str, exposed: str, item: Listed) -> Tool:
    raw = item.raw
    annotations = raw.get("annotations")
    title = raw.get("title")
    if title is None and isinstance(annotations, dict):
        title = annotations.get("title")
    output_schema = raw.get("outputSchema")
    if isinstance(output_schema, dict):
        output_schema = clean_descriptions(output_schema)
    return Tool(
        name=exposed,
        description=clean_text(raw.get("description") or "", MAX_DESCRIPTION),
        parameters=clean_descriptions(raw["inputSchema"]),
        namespace=server,
        annotations=clean_descriptions(annotations) if isinstance(annotations, dict) else {},
        aliases=(item.name,),
        title=clean_text(title, 200) if isinstance(title, str) else None,
        output_schema=output_schema if isinstance(output_schema, dict) else None,
        source=Source(file=f"mcp://{server}", pointer=f"/tools/{item.position}"),
        original=raw,
    )
