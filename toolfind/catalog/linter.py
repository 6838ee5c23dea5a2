"""Lint loaded tools: the warnings ``toolfind validate`` adds to the load's findings."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final

from toolfind.catalog.paths import PathPart, describe_char, invisible_chars, pointer_parts
from toolfind.catalog.paths import finding as _finding
from toolfind.catalog.rules import input_key
from toolfind.models import Finding, LoadResult, Source, Tool
from toolfind.shapes import detect_entry, is_host_name

#: The lint rules, by id (``validate --ignore RULE``, ``[validate] ignore`` in toolfind.toml).
RULES: Final = {
    "no-description": "a tool without a description",
    "one-word-description": "a tool whose description is one word",
    "mcp-name": "a name MCP hosts reject",
    "invisible-character": "a control or invisible character in a description",
    "param-description": "a top-level parameter without a description",
    "identical-tool": "a tool identical (name, description, input schema) to one in another"
    " namespace",
}


#: Every warning's rule: the lint rules, then the loader's, discovery's and findability's.
WARNING_RULES: Final = (
    *RULES,
    "duplicate-tool",
    "builtin-tool",
    "unreadable-path",
    "not-a-file",
    "findability-missed",
    "findability-unfound",
    "findability-indistinct",
)


def unknown_rules(names: Iterable[str]) -> str:
    """ "" when every name is a warning's rule id, else a message naming the others (errors,
    rule ``invalid``, cannot be switched off: the entry is skipped either way)."""
    unknown = [name for name in names if name not in WARNING_RULES]
    if not unknown:
        return ""
    return (
        f"unknown rule {', '.join(map(repr, unknown))}; the rules a warning can have:"
        f" {', '.join(WARNING_RULES)}"
    )


def lint(result: LoadResult) -> list[Finding]:
    """Warnings about loaded tools, for ``toolfind validate``; each names its rule (:data:`RULES`).

    Missing or one-word descriptions, top-level parameters without a description, names MCP
    hosts reject (``^[a-zA-Z0-9_-]{1,64}$``), control or invisible characters (zero-width,
    bidi controls, Unicode tag characters) in descriptions, and a tool identical to one in
    another namespace (:func:`_identical`). Duplicate names are reported by ``load`` (it
    decides which one wins). A warning in a JSON file carries the line of the key it is
    about (the file is read again, for the warnings only). Never raises.
    """
    locators: dict[str, Locate | None] = {}
    found = [finding for tool in result.tools for finding in _lint_tool(tool, locators)]
    return found + _identical(result.tools)


def _identical(tools: Sequence[Tool]) -> list[Finding]:
    """A warning for each enabled tool identical in name, description and input schema to an
    earlier one of another namespace (two captures of one MCP server): search would list both.
    One pass: tools are keyed by name and description, and only those that share a key are
    compared by schema (as canonical JSON), so 100k distinct tools cost a dict insert each."""
    import json

    first: dict[tuple[str, str], Tool] = {}
    by_schema: dict[tuple[str, str], dict[str, Tool]] = {}

    def schema(tool: Tool) -> str:
        return json.dumps(tool.parameters, sort_keys=True, ensure_ascii=False, default=repr)

    out = []
    for tool in tools:
        if not tool.enabled:  # left out of search already: not a second copy in a list
            continue
        key = (tool.name, tool.description)
        earlier = first.setdefault(key, tool)
        if earlier is tool:
            continue
        seen = by_schema.get(key)
        if seen is None:
            seen = by_schema[key] = {schema(earlier): earlier}
        twin = seen.setdefault(schema(tool), tool)
        if twin is tool or tool.source is None:
            continue
        at = twin.source
        where = "" if at is None else f" ({at.file}:{at.line})" if at.line else f" ({at.file})"
        out.append(
            _finding(
                tool.source.file,
                f"{tool.qualified_name!r} is identical to {twin.qualified_name!r}{where} in name,"
                " description and input schema: search lists both; keep one (drop a catalog,"
                " or set enabled: false on one)",
                "warning",
                line=tool.source.line,
                parts=pointer_parts(tool.source.pointer),
                rule="identical-tool",
            )
        )
    return out


Locate = Callable[[Sequence[PathPart]], "int | None"]


def _locator(file: str, locators: dict[str, Locate | None]) -> Locate | None:
    """How to find a JSON path's line in ``file`` (None when it cannot be read again)."""
    if file not in locators:
        from toolfind.catalog.parse import Problem, parse_json, read_text

        try:
            text = read_text(file, 1 << 40)
            locators[file] = parse_json(text, find_duplicates=False).locate
        except (Problem, OSError, ValueError):
            locators[file] = None
    return locators[file]


def _lint_tool(tool: Tool, locators: dict[str, Locate | None]) -> Iterable[Finding]:
    source = tool.source or Source("")
    entry = tool.original if isinstance(tool.original, Mapping) else {}
    shape = detect_entry(entry) if entry else "native"
    base = pointer_parts(source.pointer)
    body: tuple[PathPart, ...] = (*base, "function") if shape == "openai" else base
    params_at = (input_key(shape, entry),)

    def warn(message: str, parts: Sequence[PathPart], rule: str) -> Finding:
        line = source.line  # where the entry starts; in a JSON document, the exact path's
        if source.file.lower().endswith(".json"):
            locate = _locator(source.file, locators)
            line = (locate(parts) if locate is not None else None) or line
        return _finding(source.file, message, "warning", line=line, parts=parts, rule=rule)

    name = repr(tool.name)
    words = tool.description.split()
    if not words:
        yield warn(f"{name} has no description", base, "no-description")
    elif len(words) == 1:
        yield warn(
            f"{name} has a one-word description; say what the tool does and when to use it",
            (*body, "description"),
            "one-word-description",
        )
    if not is_host_name(tool.name):
        yield warn(
            f"{name} is a name MCP hosts reject (allowed: ^[a-zA-Z0-9_-]{{1,64}}$)",
            (*body, "name"),
            "mcp-name",
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
                "invisible-character",
            )
    for param, schema in params:
        if isinstance(schema, Mapping) and "$ref" not in schema:
            description = schema.get("description")
            if not (isinstance(description, str) and description.strip()):
                yield warn(
                    f"parameter {param!r} of {name} has no description",
                    (*body, *params_at, "properties", param),
                    "param-description",
                )
