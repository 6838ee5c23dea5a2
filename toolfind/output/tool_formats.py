"""Tool-schema formats, written: the one writer of a tool as one entry of any format (``show``,
``schemas``, serve-mcp), for a ``Tool`` and the warm path's tool records alike.

Gemini: a schema whose keywords are all in Gemini's OpenAPI subset (top level an object) is
written as ``parameters`` with upper-case types, and only when converting back gives the same
schema; anything else verbatim as ``parametersJsonSchema``, so a write never loses
information. What reading shares (format names, keys, shapes) is :mod:`toolfind.shapes`',
imported when first needed: the warm ``show --json`` needs none of it.
"""

from __future__ import annotations

# collections.abc.Mapping itself, loaded at start-up (collections.abc would cost more).
from _collections_abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Final

    from toolfind.output.wire import ToolLike

_JSON_TYPES: Final = frozenset(
    {"string", "number", "integer", "boolean", "array", "object", "null"}
)
# Keywords the Gemini OpenAPI-subset Schema shares with JSON Schema unchanged.
_GEMINI_SAME: Final = frozenset(
    "format title description enum maxItems minItems required minProperties maxProperties"
    " minLength maxLength pattern default minimum maximum".split()
)


def schema_to_gemini(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """JSON Schema as a Gemini Schema, or None when it uses anything outside the subset."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            if isinstance(value, str) and value in _JSON_TYPES:
                out["type"] = value.upper()
            elif (
                isinstance(value, list)
                and len(value) == 2
                and value[1] == "null"
                and value[0] in _JSON_TYPES - {"null"}
            ):
                out["type"] = value[0].upper()
                out["nullable"] = True
            else:
                return None
        elif key == "properties" and isinstance(value, Mapping):
            props = {
                k: schema_to_gemini(v) if isinstance(v, Mapping) else None for k, v in value.items()
            }
            if None in props.values():
                return None
            out[key] = props
        elif key == "items" and isinstance(value, Mapping):
            items = schema_to_gemini(value)
            if items is None:
                return None
            out[key] = items
        elif key == "anyOf" and isinstance(value, list):
            options = [schema_to_gemini(v) if isinstance(v, Mapping) else None for v in value]
            if None in options:
                return None
            out[key] = options
        elif key in _GEMINI_SAME:
            out[key] = value
        else:
            return None
    return out


def _gemini_schema(schema: Mapping[str, Any], plain_key: str, json_key: str) -> dict[str, Any]:
    from toolfind.shapes import schema_from_gemini

    converted = schema_to_gemini(schema) if schema.get("type") == "object" else None
    # Only when converting back gives the same schema: a write must never lose information.
    if converted is not None and schema_from_gemini(converted) == schema:
        return {plain_key: converted}
    return {json_key: dict(schema)}


# --- writing -----------------------------------------------------------------------------


def tool_to_format(
    tool: ToolLike, fmt: str, *, carried: tuple[Sequence[str], Sequence[str]] | None = None
) -> dict[str, Any]:
    """``tool`` as one entry of format ``fmt`` (one of ``FORMATS``).

    Gemini gives one function declaration (wrap a list of them in
    ``{"functionDeclarations": [...]}`` for a request). Unknown keys of the original entry are
    kept when writing back to its own shape (``shapes.carried_keys``; ``carried`` gives those
    keys when they are known already, as the warm path knows them for the native format).
    Nested values are shared with ``tool``: copy before mutating. Raises ``ValueError`` for an
    unknown format.
    """
    original = tool.original
    if carried is None:
        from toolfind.shapes import carried_keys  # not at import: the warm show passes carried

        carried = carried_keys(original, fmt)
    top, fn = carried
    extra = {key: original[key] for key in top} if top else {}  # type: ignore[index]
    fn_extra = {key: original["function"][key] for key in fn} if fn else {}  # type: ignore[index]
    params = dict(tool.parameters)
    if fmt == "openai":
        function = {"name": tool.name, "description": tool.description, "parameters": params}
        return {"type": "function", **extra, "function": {**function, **fn_extra}}
    if fmt == "openai-responses":
        base = {"type": "function", "name": tool.name, "description": tool.description}
        return {**base, "parameters": params, **extra}
    if fmt == "anthropic":
        return {"name": tool.name, "description": tool.description, "input_schema": params, **extra}
    if fmt == "mcp":
        out: dict[str, Any] = {"name": tool.name}
        if tool.title is not None:
            out["title"] = tool.title
        out.update(description=tool.description, inputSchema=params)
        if tool.output_schema is not None:
            out["outputSchema"] = dict(tool.output_schema)
        if tool.annotations:
            out["annotations"] = dict(tool.annotations)
        return {**out, **extra}
    if fmt == "gemini":
        out = {"name": tool.name, "description": tool.description}
        out.update(_gemini_schema(params, "parameters", "parametersJsonSchema"))
        if tool.output_schema is not None:
            out.update(_gemini_schema(tool.output_schema, "response", "responseJsonSchema"))
        return {**out, **extra}
    if fmt == "native":
        return {**_native(tool), **extra}
    from toolfind.shapes import FORMATS

    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def _native(tool: ToolLike) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.namespace:
        out["namespace"] = tool.namespace
    if tool.title is not None:
        out["title"] = tool.title
    out["description"] = tool.description
    out["parameters"] = dict(tool.parameters)
    if tool.output_schema is not None:
        out["output_schema"] = dict(tool.output_schema)
    if tool.annotations:
        out["annotations"] = dict(tool.annotations)
    if tool.tags:
        out["tags"] = list(tool.tags)
    if tool.search_hint:
        out["search_hint"] = tool.search_hint
    if tool.aliases:
        out["aliases"] = list(tool.aliases)
    if tool.defer:
        out["defer"] = True
    if not tool.enabled:
        out["enabled"] = False
    return out


#: What ``summaries --deferred`` (on stderr) and serve-mcp's deferred-tools resource say when
#: no tool is deferred, rather than nothing: what deferral is, and the ways to defer.
NO_DEFERRED = (
    "No deferred tools. A deferred tool stays out of the tool list and is found by search;"
    " defer one with defer: true on its catalog entry or at the top of its file,"
    ' "defer": true on its servers-file entry, or its namespace in defer_namespaces'
    " (toolfind.toml)."
)


def summaries_text(tools: Sequence[ToolLike], *, markdown: bool = False) -> str:
    """One line per tool, ``namespace/name: summary`` (``- **namespace/name**: summary`` in
    Markdown): the text of ``toolfind summaries`` and of serve-mcp's deferred-tools prompt and
    resource. The qualified name tells two tools of one name apart."""
    from toolfind.output.text import clean_text

    pattern = "- **{}**: {}" if markdown else "{}: {}"
    return "".join(pattern.format(t.qualified_name, clean_text(t.summary)) + "\n" for t in tools)


# --- a tool list for an LLM ----------------------------------------------------------------


def list_names(tools: Sequence[ToolLike]) -> list[str]:
    """The name each of ``tools`` goes by in one tool list: its own, unless another tool of the
    list has the same name (LLM APIs reject a request with two tools of one name); then
    ``namespace__name`` as hosts accept it (``shapes.host_name``), and ``_2``, ``_3``...
    should that still collide (``shapes.unique_name``)."""
    from toolfind.shapes import host_name, unique_name

    counts: dict[str, int] = {}
    for tool in tools:
        counts[tool.name] = counts.get(tool.name, 0) + 1
    taken = {name for name, count in counts.items() if count == 1}
    names = []
    for tool in tools:
        name = tool.name
        if counts[name] > 1:
            name = unique_name(host_name(tool.namespace, name), taken)
            taken.add(name)
        names.append(name)
    return names


def renamed(document: dict[str, Any], fmt: str, name: str) -> dict[str, Any]:
    """``document`` (a fresh :func:`tool_to_format` result of format ``fmt``) named ``name``."""
    if fmt == "openai":
        document["function"]["name"] = name
    else:
        document["name"] = name
    return document
