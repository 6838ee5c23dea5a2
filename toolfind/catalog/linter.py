"""Lint loaded tools: the warnings ``toolfind validate`` adds to the load's findings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from toolfind.catalog.paths import PathPart, describe_char, invisible_chars, pointer_parts
from toolfind.catalog.paths import finding as _finding
from toolfind.catalog.rules import input_key
from toolfind.models import Finding, LoadResult, Source, Tool
from toolfind.shapes import detect_entry

#: Names MCP hosts accept (the MCP specification's recommendation, enforced by clients).
MCP_NAME_CHARS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
)


def lint(result: LoadResult) -> list[Finding]:
    """Warnings about loaded tools, for ``toolfind validate``.

    Missing or one-word descriptions, top-level parameters without a description, names MCP
    hosts reject (``^[a-zA-Z0-9_-]{1,64}$``), and control or invisible characters (zero-width,
    bidi controls, Unicode tag characters) in descriptions. Duplicate names are reported by
    ``load`` (it decides which one wins). Never raises.
    """
    return [finding for tool in result.tools for finding in _lint_tool(tool)]


def _lint_tool(tool: Tool) -> Iterable[Finding]:
    source = tool.source or Source("")
    entry = tool.original if isinstance(tool.original, Mapping) else {}
    shape = detect_entry(entry) if entry else "native"
    base = pointer_parts(source.pointer)
    body: tuple[PathPart, ...] = (*base, "function") if shape == "openai" else base
    params_at = (input_key(shape, entry),)

    def warn(message: str, parts: Sequence[PathPart]) -> Finding:
        return _finding(source.file, message, "warning", line=source.line, parts=parts)

    name = repr(tool.name)
    words = tool.description.split()
    if not words:
        yield warn(f"{name} has no description", base)
    elif len(words) == 1:
        yield warn(
            f"{name} has a one-word description; say what the tool does and when to use it",
            (*body, "description"),
        )
    if not (len(tool.name) <= 64 and set(tool.name) <= MCP_NAME_CHARS):
        yield warn(
            f"{name} is a name MCP hosts reject (allowed: ^[a-zA-Z0-9_-]{{1,64}}$)",
            (*body, "name"),
        )
    properties = tool.parameters.get("properties")
    params = list(properties.items()) if isinstance(properties, Mapping) else []
    descriptions = [((*body, "description"), tool.description)] + [
        ((*body, *params_at, "properties", param, "description"), schema["description"])
        for param, schema in params
        if isinstance(schema, Mapping) and isinstance(schema.get("description"), str)
    ]
    for at, text in descriptions:
        for index, char in invisible_chars(text)[:1]:
            yield warn(
                f"description contains the invisible or control character "
                f"{describe_char(char)} at index {index}",
                at,
            )
    for param, schema in params:
        if isinstance(schema, Mapping) and "$ref" not in schema:
            description = schema.get("description")
            if not (isinstance(description, str) and description.strip()):
                yield warn(
                    f"parameter {param!r} of {name} has no description",
                    (*body, *params_at, "properties", param),
                )
