"""Tool-schema formats, reading: list a document's entries and read each into a ``Tool``.

Reading has one constructor (:func:`_tool`: how an entry's keys become a tool's fields) and
two ways to it: :func:`read_tool`, for an entry ``rules.vouch`` vouches for (no check can
fail), and :func:`tool_from_entry`, which checks each key and words what is wrong. Pure data
conversion: no I/O, no third-party imports. The shapes an entry can have, how they
are told apart (``detect_entry``) and the Gemini schema conversion are :mod:`toolfind.shapes`'
(shared with ``output.tool_formats``, which writes tools back out). Any shape may carry the
toolfind metadata keys (``namespace``, ``tags``, ``search_hint``, ``defer``, ``enabled``,
``aliases``) at its top level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from operator import contains
from typing import Any, Final

from toolfind.catalog.metaschema import MAX_SCHEMA_DEPTH, too_deep
from toolfind.catalog.parse import kind_of
from toolfind.catalog.paths import EntryError, Fail, PathPart, json_path, json_pointer, short_repr
from toolfind.catalog.rules import (
    MAX_DESCRIPTION_LENGTH,
    check_name,
    check_namespace,
    check_tags,
    input_key,
    output_key,
    vouch,
)
from toolfind.errors import CatalogError
from toolfind.models import Source, Tool
from toolfind.shapes import MANAGED, METADATA_KEYS, SCHEMA_KEYS, detect_entry, schema_from_gemini

Entries = list[tuple[str, Any, Mapping[str, Any]]]
_GEMINI_LISTS: Final = ("functionDeclarations", "function_declarations")
_DICT_TYPE: Final = frozenset({dict})

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


def list_entries(doc: Any, prefix: tuple[PathPart, ...] = ()) -> Entries:
    """Every tool entry in a parsed document: ``(json_pointer, entry, defaults)``.

    Accepts a list of entries, ``{"tools": [...]}`` (OpenAI request body, MCP tools/list
    result, native catalog; other keys are ignored), ``{"functions": [...]}``, a JSON-RPC
    response ``{"result": {...}}``, Gemini ``{"functionDeclarations": [...]}`` (also inside
    ``tools``), or a single tool. ``defaults`` holds the file-level ``namespace`` (or None),
    ``tags`` (a tuple), ``defer`` (whether its tools are deferred unless an entry says
    otherwise) and ``shape`` (the shape the container implies, or None). An entry is listed
    as found, even when it is not an object: ``tool_from_entry`` reports that.

    Raises ``CatalogError`` (with ``path``) when the document itself has no usable shape.
    """
    no_defaults: Mapping[str, Any] = {"namespace": None, "tags": (), "defer": False, "shape": None}
    if isinstance(doc, list):
        return _list_items(doc, prefix, no_defaults)
    if not isinstance(doc, Mapping):
        raise CatalogError(
            f"expected a tool, a list of tools or an object with a 'tools' list, got {kind_of(doc)}",
            path=json_path(prefix),
        )
    if "jsonrpc" in doc and ("result" in doc or "error" in doc):
        if "result" not in doc:
            raise CatalogError(
                "this JSON-RPC response is an error, not a tools/list result",
                path=json_path((*prefix, "error")),
            )
        return list_entries(doc["result"], (*prefix, "result"))
    for key in ("tools", "functions", *_GEMINI_LISTS):
        if key in doc:
            break
    else:
        if not doc.keys() & SCHEMA_KEYS and "function" not in doc and not doc.keys() <= MANAGED:
            # No tools list, no schema, and keys no tool has: a package.json, a tsconfig...
            others = ", ".join(repr(k) for k in sorted(doc.keys() - MANAGED)[:3])
            raise CatalogError(
                f"not a tool catalog: no 'tools' list, no schema, and keys no tool has ({others})",
                path=json_path(prefix),
            )
        return [(json_pointer(prefix), doc, no_defaults)]
    items = doc[key]
    if not isinstance(items, list):
        raise CatalogError(
            f"{short_repr(items)} is not of type 'array'", path=json_path((*prefix, key))
        )
    defaults = {
        "namespace": _file_value(doc, prefix, "namespace", check_namespace, None),
        "tags": _file_value(doc, prefix, "tags", check_tags, ()),
        "defer": _file_value(doc, prefix, "defer", _check_flag, False),
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
        # A `tools` item of a Gemini request carries a list of declarations.
        is_map = isinstance(item, Mapping)
        nested = next((k for k in _GEMINI_LISTS if k in item), None) if is_map else None
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


def _file_value(
    doc: Mapping[str, Any],
    prefix: tuple[PathPart, ...],
    key: str,
    check: Callable[[Any, Fail], Any],
    default: Any,
) -> Any:
    """The file-level ``key`` of a document, checked; ``default`` when it has none."""
    if key not in doc:
        return default
    return check(doc[key], lambda m, p: CatalogError(m, path=json_path((*prefix, key, *p))))


def _check_flag(value: Any, fail: Fail) -> bool:
    if not isinstance(value, bool):
        raise fail(f"{short_repr(value)} is not of type 'boolean'", ())
    return value


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
        if value is not None and not isinstance(value, str):
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


def _tool(
    entry: Mapping[str, Any],
    body: Mapping[str, Any],
    namespace: str,
    file_tags: Sequence[str],
    source: Source,
    parameters: Mapping[str, Any] | None,
    output_schema: Mapping[str, Any] | None,
    file_defer: bool = False,
) -> Tool:
    """The tool of a checked ``entry``: the one place an entry's keys become a tool's fields.
    ``body`` holds the tool's own keys (the entry, or an OpenAI tool's ``function``), the
    metadata keys are the entry's; ``namespace`` applies when it names none, the file's
    ``file_tags`` come before its own; ``parameters`` and ``output_schema`` as read. A tool
    is deferred when its entry says ``defer`` (or Anthropic's ``defer_loading``), else when
    its file does (``file_defer``)."""
    tags = entry.get("tags") or ()
    if tags or file_tags:
        tags = tuple(dict.fromkeys((*file_tags, *tags) if tags else file_tags))
    defer = entry.get("defer")
    if defer is None:
        loading = entry.get("defer_loading")
        defer = loading if isinstance(loading, bool) else file_defer
    return Tool(
        body["name"],
        body.get("description") or "",
        {"type": "object", "properties": {}} if parameters is None else parameters,
        entry.get("namespace") or namespace,
        tags,
        entry.get("search_hint") or "",
        defer,
        entry.get("enabled", True),
        body.get("annotations") or {},
        tuple(entry.get("aliases", ())),
        body.get("title"),
        output_schema,
        source,
        entry,
    )


def read_tool(
    entry: dict[str, Any],
    shape: str,
    namespace: str,
    file_tags: Sequence[str],
    source: Source,
    tools: list[Tool],
    file_defer: bool = False,
) -> int:
    """The loader's fast path: when ``rules.vouch`` vouches for ``entry`` (of ``shape``, see
    :func:`quick_shape`), append its tool to ``tools`` and return the number of strings in
    the entry (keys included); else return -1, appending nothing."""
    strings = vouch(entry, shape)
    if strings >= 0:
        body = entry["function"] if shape == "openai" else entry
        parameters = body.get(input_key(shape, body))
        output_schema = body.get(output_key(shape, body))
        made = _tool(
            entry, body, namespace, file_tags, source, parameters, output_schema, file_defer
        )
        tools.append(made)
    return strings


def tool_from_entry(
    entry: Any,
    *,
    namespace: str,
    tags: Sequence[str],
    source: Source,
    shape: str | None = None,
    defer: bool = False,
) -> Tool:
    """Read one entry (any shape) into a ``Tool``, checking each key.

    ``namespace`` applies when the entry names none; ``tags`` (the file's) come before the
    entry's own; ``defer`` (the file's) applies when the entry says nothing of it. ``shape``
    forces a shape (``list_entries``' ``defaults["shape"]``);
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
    check_name(body["name"], read.under(*base, "name"))
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
    okey = output_key(shape, body)
    output_schema = read.schema(body, okey, ())
    if output_schema is not None and shape == "gemini" and okey == "response":
        output_schema = schema_from_gemini(output_schema)
    read.schema(body, "annotations", base)
    _check_metadata(read, entry)
    read.str_(body, "title", base)
    return _tool(entry, body, namespace, tags, source, parameters, output_schema, defer)


def _check_metadata(read: _Reader, entry: Mapping[str, Any]) -> None:
    if entry.keys().isdisjoint(METADATA_KEYS):  # most entries
        return
    if "namespace" in entry:
        check_namespace(entry["namespace"], read.under("namespace"))
    if "tags" in entry:
        check_tags(entry["tags"], read.under("tags"))
    if "aliases" in entry:
        raw = entry["aliases"]
        if not isinstance(raw, list):
            raise read.fail(f"{short_repr(raw)} is not of type 'array'", ("aliases",))
        for i, alias in enumerate(raw):
            check_name(alias, read.under("aliases", i))
    read.str_(entry, "search_hint", ())
    read.bool_(entry, "defer", False)
    read.bool_(entry, "enabled", True)
