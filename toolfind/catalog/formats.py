"""Tool-schema formats: detect an entry's shape, read it into a ``Tool``, write a ``Tool`` out.

Pure data conversion: no I/O, no third-party imports (``catalog`` parses files and runs the
JSON Schema checks; this module only needs what it takes to build a correct ``Tool``).

Shapes an entry can have (``detect_entry``):

- ``openai``: ``{"type": "function", "function": {name, description, parameters, strict}}``
- ``openai-responses``: ``{"type": "function", name, description, parameters}``
- ``anthropic``: ``{name, description, input_schema}``
- ``mcp``: ``{name, title, description, inputSchema, outputSchema, annotations}``
- ``gemini``: a function declaration whose ``parameters`` use the OpenAPI subset (upper-case
  types) or that carries ``parametersJsonSchema`` / ``responseJsonSchema``
- ``native``: ``{name, description, parameters}`` plus toolfind metadata keys
- ``function``: a bare ``{name, description, parameters}``
- ``builtin``: a provider's built-in tool (``{"type": "web_search"}``, ``{"googleSearch": {}}``)
  that has no schema to index

Any shape may carry the toolfind metadata keys (``namespace``, ``tags``, ``search_hint``,
``defer``, ``enabled``, ``aliases``) at its top level.

Gemini schemas are an OpenAPI subset. Reading: types are lower-cased and ``nullable: true``
becomes ``"type": [T, "null"]``, recursively through ``properties``, ``items`` and ``anyOf``;
every other keyword is kept as it is. Writing: a schema whose every keyword is in that subset
(and whose top level is an object) is written as ``parameters`` with upper-case types;
anything else is written verbatim as ``parametersJsonSchema``. The choice is made by converting
and converting back: ``parameters`` is used only when that gives the same schema, so a write
never loses information.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat
from operator import contains

from toolfind.catalog.metaschema import MAX_SCHEMA_DEPTH, too_deep
from toolfind.catalog.paths import EntryError, Fail, PathPart, json_path, json_pointer, short_repr
from toolfind.catalog.rules import (
    MAX_DESCRIPTION_LENGTH,
    METADATA_KEYS,
    SCHEMA_KEYS,
    check_name,
    check_namespace,
    check_tags,
    input_key,
    output_key,
)
from toolfind.errors import CatalogError
from toolfind.models import Source, Tool

# typing costs `show` more than the conversion: only the type checker reads it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    Entries = list[tuple[str, Any, Mapping[str, Any]]]

#: Formats a tool can be written in (``tool_to_format``).
FORMATS: Final = ("native", "openai", "openai-responses", "anthropic", "mcp", "gemini")

#: Shapes ``detect_entry`` can return: every format, a bare function, and a built-in tool.
SHAPES: Final = (*FORMATS, "function", "builtin")

#: The ``Tool`` fields each format carries (reading ``tool_to_format(t, fmt)`` back gives
#: these fields back unchanged).
CARRIES: Final[Mapping[str, frozenset[str]]] = {
    "native": frozenset(
        {
            "name",
            "description",
            "parameters",
            "namespace",
            "tags",
            "search_hint",
            "defer",
            "enabled",
            "annotations",
            "aliases",
            "title",
            "output_schema",
        }
    ),
    "openai": frozenset({"name", "description", "parameters"}),
    "openai-responses": frozenset({"name", "description", "parameters"}),
    "anthropic": frozenset({"name", "description", "parameters"}),
    "mcp": frozenset(
        {"name", "description", "parameters", "title", "annotations", "output_schema"}
    ),
    "gemini": frozenset({"name", "description", "parameters", "output_schema"}),
}

# Top-level keys of a Gemini request body's `tools` items that are built-in tools, not functions.
_GEMINI_BUILTINS: Final = frozenset(
    {
        "googleSearch",
        "google_search",
        "googleSearchRetrieval",
        "google_search_retrieval",
        "codeExecution",
        "code_execution",
        "urlContext",
        "url_context",
        "retrieval",
        "googleMaps",
        "google_maps",
        "computerUse",
        "computer_use",
        "fileSearch",
        "file_search",
    }
)
_GEMINI_LISTS: Final = ("functionDeclarations", "function_declarations")
# Keys that make an otherwise bare function a native entry.
_NATIVE_ONLY_KEYS: Final = (*METADATA_KEYS, "output_schema")
# Keys read or written by some format: never copied as "unknown" extras on write-back.
_MANAGED: Final = frozenset(
    {
        "type",
        "function",
        "name",
        "title",
        "description",
        *SCHEMA_KEYS,
        "annotations",
        *METADATA_KEYS,
    }
)
_JSON_TYPES: Final = frozenset(
    {"string", "number", "integer", "boolean", "array", "object", "null"}
)
# Keywords the Gemini OpenAPI-subset Schema shares with JSON Schema unchanged.
_GEMINI_SAME: Final = frozenset(
    {
        "format",
        "title",
        "description",
        "enum",
        "maxItems",
        "minItems",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "default",
        "minimum",
        "maximum",
    }
)


# --- detection ---------------------------------------------------------------------------


def _is_gemini_schema(schema: Any) -> bool:
    return (
        (type(schema) is dict or isinstance(schema, Mapping))
        and isinstance(schema.get("type"), str)
        and (schema["type"].isupper())
    )


def detect_entry(entry: Mapping[str, Any]) -> str:
    """The shape of one tool entry (one of ``SHAPES``); see the module docstring.

    Never raises: an entry that fits nothing is a ``function`` (its checks then say what is
    missing).
    """
    kind = entry.get("type")
    if kind is not None and kind == "function":  # `is not None` first: most entries have none
        if isinstance(entry.get("function"), Mapping):
            return "openai"
        if "name" in entry:
            return "openai-responses"
    if "inputSchema" in entry:
        return "mcp"
    if "input_schema" in entry:
        return "anthropic"
    if kind is not None and kind not in ("function", "custom"):
        return "builtin"
    if "name" not in entry and entry and all(k in _GEMINI_BUILTINS for k in entry):
        return "builtin"
    if "parametersJsonSchema" in entry or "responseJsonSchema" in entry or "behavior" in entry:
        return "gemini"
    # This runs once per entry of every load: the common case (a JSON Schema's lower-case
    # "type", no response) is decided without a call.
    params = entry.get("parameters")
    if type(params) is dict:
        params_type = params.get("type")
        if isinstance(params_type, str) and params_type.isupper():
            return "gemini"
    elif _is_gemini_schema(params):
        return "gemini"
    if "response" in entry and _is_gemini_schema(entry["response"]):
        return "gemini"
    # Keys' `isdisjoint` of a tuple: the membership tests are made in C.
    return "function" if entry.keys().isdisjoint(_NATIVE_ONLY_KEYS) else "native"


#: Keys of an entry without a "type" that decide nothing else in detect_entry.
_FUNCTION_KEYS: Final = frozenset({"name", "description", "parameters", "title", "annotations"})


def quick_shape(entry: dict[str, Any]) -> str:
    """``detect_entry``'s answer for the loader's fast path, the commonest entries decided
    without its every test. Only an entry whose ``parameters`` have upper-case (Gemini) types
    is called a bare function instead: the fast path refuses those types (not JSON Schema's).
    """
    if "type" in entry:
        return detect_entry(entry)
    if "inputSchema" in entry:
        return "mcp"
    if "input_schema" in entry:
        return "anthropic"
    if entry.keys() <= _FUNCTION_KEYS:
        return "function"
    return detect_entry(entry)


def iter_entries(doc: Any) -> Iterator[tuple[str, Any, Mapping[str, Any]]]:
    """Every tool entry in a parsed document: ``(json_pointer, entry, defaults)``.

    Accepts a list of entries, ``{"tools": [...]}`` (OpenAI request body, MCP tools/list
    result, native catalog; other keys are ignored), ``{"functions": [...]}``, a JSON-RPC
    response ``{"result": {...}}``, Gemini ``{"functionDeclarations": [...]}`` (also inside
    ``tools``), or a single tool. ``defaults`` holds the file-level ``namespace`` (or None),
    ``tags`` (a tuple) and ``shape`` (the shape the container implies, or None). An entry
    is yielded as found, even when it is not an object: ``tool_from_entry`` reports that.

    Raises ``CatalogError`` (with ``path``) when the document itself has no usable shape.
    """
    yield from list_entries(doc)


def list_entries(doc: Any) -> Entries:
    """``list(iter_entries(doc))``, made at once (a cold build lists thousands of entries)."""
    return _list_doc(doc, ())


def _list_doc(doc: Any, prefix: tuple[PathPart, ...]) -> Entries:
    no_defaults: Mapping[str, Any] = {"namespace": None, "tags": (), "shape": None}
    if isinstance(doc, list):
        return _list_items(doc, prefix, no_defaults)
    if not isinstance(doc, Mapping):
        raise CatalogError(
            f"expected a tool, a list of tools or an object with a 'tools' list, got {_kind(doc)}",
            path=json_path(prefix),
        )
    if "jsonrpc" in doc and ("result" in doc or "error" in doc):
        if "result" not in doc:
            raise CatalogError(
                "this JSON-RPC response is an error, not a tools/list result",
                path=json_path((*prefix, "error")),
            )
        return _list_doc(doc["result"], (*prefix, "result"))
    for key in ("tools", "functions", *_GEMINI_LISTS):
        if key in doc:
            break
    else:
        return [(json_pointer(prefix), doc, no_defaults)]
    items = doc[key]
    if not isinstance(items, list):
        raise CatalogError(
            f"{short_repr(items)} is not of type 'array'", path=json_path((*prefix, key))
        )
    defaults = {
        "namespace": _file_namespace(doc, prefix),
        "tags": _file_tags(doc, prefix),
        "shape": "gemini" if key in _GEMINI_LISTS else None,
    }
    return _list_items(items, (*prefix, key), defaults)


def _list_items(
    items: list[Any], prefix: tuple[PathPart, ...], defaults: Mapping[str, Any]
) -> Entries:
    if not items:  # many files of a directory hold no tools
        return []
    # The list's pointer is built once: an index never needs escaping, so an entry's pointer
    # is it plus "/<index>" (the same text json_pointer gives, without per-entry joins).
    at = json_pointer(prefix) + "/"
    if (
        _DICT_TYPE.issuperset(map(type, items))
        and not any(map(contains, items, repeat(_GEMINI_LISTS[0])))
        and not any(map(contains, items, repeat(_GEMINI_LISTS[1])))
    ):
        # Only entry objects, no Gemini `tools` items (the common case): listed by passes in C
        # (repr: an int's text, a little faster than str).
        return list(zip(map(at.__add__, map(repr, range(len(items)))), items, repeat(defaults)))
    found: Entries = []
    for i, item in enumerate(items):
        nested = _gemini_list_key(item)
        if nested is None:
            found.append((at + str(i), item, defaults))
            continue
        decls = item[nested]
        where = (*prefix, i, nested)
        if not isinstance(decls, list):
            raise CatalogError(f"{short_repr(decls)} is not of type 'array'", path=json_path(where))
        gemini = {**defaults, "shape": "gemini"}
        found.extend((json_pointer((*where, j)), decl, gemini) for j, decl in enumerate(decls))
    return found


_DICT_TYPE: Final = frozenset({dict})


def _gemini_list_key(item: Any) -> str | None:
    """The Gemini declarations key ``item`` carries (a ``tools`` item of a request), or None."""
    if type(item) is dict or isinstance(item, Mapping):
        for key in _GEMINI_LISTS:
            if key in item:
                return key
    return None


def _file_namespace(doc: Mapping[str, Any], prefix: tuple[PathPart, ...]) -> str | None:
    if "namespace" not in doc:
        return None
    return check_namespace(
        doc["namespace"], lambda m, p: CatalogError(m, path=json_path((*prefix, "namespace", *p)))
    )


def _file_tags(doc: Mapping[str, Any], prefix: tuple[PathPart, ...]) -> tuple[str, ...]:
    if "tags" not in doc:
        return ()
    return check_tags(
        doc["tags"], lambda m, p: CatalogError(m, path=json_path((*prefix, "tags", *p)))
    )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return f"a {type(value).__name__}"


# --- reading -----------------------------------------------------------------------------


class _Reader:
    """Typed access to one entry's keys; every failure is an ``EntryError`` with a path."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def fail(self, message: str, parts: Sequence[PathPart]) -> EntryError:
        return EntryError(message, self.source, parts)

    def under(self, *prefix: PathPart) -> Fail:
        """A ``Fail`` for checks of the value at ``prefix``."""
        return lambda message, parts: self.fail(message, (*prefix, *parts))

    def str_(self, obj: Mapping[str, Any], key: str, base: tuple[PathPart, ...]) -> str | None:
        value = obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(f"{short_repr(value)} is not of type 'string'", (*base, key))
        return value

    def bool_(self, obj: Mapping[str, Any], key: str, default: bool) -> bool:
        value = obj.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(f"{short_repr(value)} is not of type 'boolean'", (key,))
        return value

    def schema(
        self, obj: Mapping[str, Any], key: str, base: tuple[PathPart, ...]
    ) -> Mapping[str, Any] | None:
        value = obj.get(key)
        if value is None:
            return None
        if type(value) is not dict and not isinstance(value, Mapping):
            raise self.fail(f"{short_repr(value)} is not of type 'object'", (*base, key))
        if too_deep(value, MAX_SCHEMA_DEPTH):
            raise self.fail(f"schema is nested deeper than {MAX_SCHEMA_DEPTH} levels", (*base, key))
        return value


def tool_from_entry(
    entry: Any,
    *,
    namespace: str,
    tags: Sequence[str],
    source: Source,
    shape: str | None = None,
) -> Tool:
    """Read one entry (any shape) into a ``Tool``.

    ``namespace`` applies when the entry names none; ``tags`` (the file's) come before the
    entry's own. ``shape`` forces a shape (``iter_entries``' ``defaults["shape"]``);
    otherwise ``detect_entry`` decides. Raises ``EntryError`` (a ``CatalogError`` with file,
    line and the JSON path inside the entry in ``parts``) for a bad entry.
    """
    read = _Reader(source)
    # `type(...) is dict` first, here and below: a parsed catalog holds only plain dicts, and
    # an ABC isinstance check costs far more, once per entry and schema of every load.
    if type(entry) is not dict and not isinstance(entry, Mapping):
        raise read.fail(f"{short_repr(entry)} is not of type 'object'", ())
    shape = shape or detect_entry(entry)
    if shape == "builtin":
        kind = entry.get("type") or next(iter(entry), "?")
        raise read.fail(f"built-in tool {short_repr(kind)} has no schema; skipped", ())
    body: Mapping[str, Any] = entry["function"] if shape == "openai" else entry
    base: tuple[PathPart, ...] = ("function",) if shape == "openai" else ()

    if "name" not in body:
        raise read.fail("'name' is a required property", base)
    name = check_name(body["name"], read.under(*base, "name"))
    description = read.str_(body, "description", base) or ""
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise read.fail(
            f"is {len(description):,} characters long; the limit is {MAX_DESCRIPTION_LENGTH:,}",
            (*base, "description"),
        )
    pkey = input_key(shape, body)
    parameters = read.schema(body, pkey, base)
    if parameters is not None and shape == "gemini" and pkey == "parameters":
        parameters = schema_from_gemini(parameters)
    output_schema = _read_output_schema(read, body, shape)
    annotations = read.schema(body, "annotations", base)
    meta = _read_metadata(read, entry, namespace, tags)
    return Tool(
        name=name,
        description=description,
        parameters=parameters if parameters is not None else {"type": "object", "properties": {}},
        title=read.str_(body, "title", base),
        annotations=annotations or {},
        output_schema=output_schema,
        source=source,
        original=entry,
        **meta,
    )


def _read_output_schema(
    read: _Reader, body: Mapping[str, Any], shape: str
) -> Mapping[str, Any] | None:
    key = output_key(shape, body)
    schema = read.schema(body, key, ())
    if schema is not None and shape == "gemini" and key == "response":
        return schema_from_gemini(schema)
    return schema


def _read_metadata(
    read: _Reader, entry: Mapping[str, Any], namespace: str, file_tags: Sequence[str]
) -> dict[str, Any]:
    if entry.keys().isdisjoint(METADATA_KEYS):  # most entries: the defaults, with no checks
        return {
            "namespace": namespace,
            "tags": tuple(dict.fromkeys(file_tags)),
            "search_hint": "",
            "defer": False,
            "enabled": True,
            "aliases": (),
        }
    if "namespace" in entry:
        namespace = check_namespace(entry["namespace"], read.under("namespace"))
    own_tags = check_tags(entry["tags"], read.under("tags")) if "tags" in entry else ()
    aliases: tuple[str, ...] = ()
    if "aliases" in entry:
        raw = entry["aliases"]
        if not isinstance(raw, list):
            raise read.fail(f"{short_repr(raw)} is not of type 'array'", ("aliases",))
        aliases = tuple(check_name(a, read.under("aliases", i)) for i, a in enumerate(raw))
    return {
        "namespace": namespace,
        "tags": tuple(dict.fromkeys((*file_tags, *own_tags))),
        "search_hint": read.str_(entry, "search_hint", ()) or "",
        "defer": read.bool_(entry, "defer", False),
        "enabled": read.bool_(entry, "enabled", True),
        "aliases": aliases,
    }


# --- Gemini schema conversion --------------------------------------------------------------


def schema_from_gemini(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A Gemini (OpenAPI-subset) Schema as JSON Schema: lower-case types, ``nullable`` folded in."""
    nullable = schema.get("nullable") is True and isinstance(schema.get("type"), str)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            kind = value.lower()
            if kind == "type_unspecified":
                continue
            out["type"] = [kind, "null"] if nullable and kind != "null" else kind
        elif key == "nullable" and nullable:
            continue
        elif key == "properties" and isinstance(value, Mapping):
            out[key] = {
                k: schema_from_gemini(v) if isinstance(v, Mapping) else v for k, v in value.items()
            }
        elif key == "items" and isinstance(value, Mapping):
            out[key] = schema_from_gemini(value)
        elif key == "anyOf" and isinstance(value, list):
            out[key] = [schema_from_gemini(v) if isinstance(v, Mapping) else v for v in value]
        else:
            out[key] = value
    return out


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
            props = {}
            for k, v in value.items():
                converted = schema_to_gemini(v) if isinstance(v, Mapping) else None
                if converted is None:
                    return None
                props[k] = converted
            out[key] = props
        elif key == "items" and isinstance(value, Mapping):
            items = schema_to_gemini(value)
            if items is None:
                return None
            out[key] = items
        elif key == "anyOf" and isinstance(value, list):
            options = [schema_to_gemini(v) if isinstance(v, Mapping) else None for v in value]
            if any(o is None for o in options):
                return None
            out[key] = options
        elif key in _GEMINI_SAME:
            out[key] = value
        else:
            return None
    return out


def _gemini_schema(schema: Mapping[str, Any], plain_key: str, json_key: str) -> dict[str, Any]:
    converted = schema_to_gemini(schema) if schema.get("type") == "object" else None
    # Only when converting back gives the same schema: a write must never lose information.
    if converted is not None and schema_from_gemini(converted) == schema:
        return {plain_key: converted}
    return {json_key: dict(schema)}


# --- writing -----------------------------------------------------------------------------


def _extras(tool: Tool, fmt: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Unknown keys of the original entry (top level, and inside ``function``) to carry over.

    Only when writing back to the entry's own shape: ``cache_control`` means nothing to MCP.
    """
    original = tool.original
    if not isinstance(original, Mapping) or detect_entry(original) != fmt:
        return {}, {}
    top = {k: v for k, v in original.items() if k not in _MANAGED}
    inner = original.get("function") if fmt == "openai" else None
    fn = {k: v for k, v in inner.items() if k not in _MANAGED} if isinstance(inner, Mapping) else {}
    return top, fn


def tool_to_format(tool: Tool, fmt: str) -> dict[str, Any]:
    """``tool`` as one entry of format ``fmt`` (one of ``FORMATS``).

    Gemini gives one function declaration (wrap a list of them in
    ``{"functionDeclarations": [...]}`` for a request). Unknown keys of the original entry are
    kept when writing back to its own shape. Nested values are shared with ``tool``: copy
    before mutating. Raises ``ValueError`` for an unknown format.
    """
    extra, fn_extra = _extras(tool, fmt)
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
    raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def _native(tool: Tool) -> dict[str, Any]:
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
