"""Tool-schema formats, read: an entry of any shape into a ``Tool``.

Pure data conversion: no I/O, no third-party imports (``catalog`` parses files and runs the
JSON Schema checks; this module only needs what it takes to build a correct ``Tool``). The
shapes themselves (format names, their keys, :func:`~toolfind.shapes.detect_entry`, the Gemini
schema conversion) are :mod:`toolfind.shapes`'; writing a ``Tool`` out is
:mod:`toolfind.output.tool_formats`'.

Any shape may carry the toolfind metadata keys (``namespace``, ``tags``, ``search_hint``,
``defer``, ``enabled``, ``aliases``) at its top level.

Gemini schemas are an OpenAPI subset. Reading: types are lower-cased and ``nullable: true``
becomes ``"type": [T, "null"]``, recursively through ``properties``, ``items`` and ``anyOf``;
every other keyword is kept as it is.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import repeat
from operator import contains

from toolfind.errors import CatalogError
from toolfind.models import Source, Tool
from toolfind.shapes import CARRIES as CARRIES
from toolfind.shapes import FORMATS as FORMATS
from toolfind.shapes import METADATA_KEYS as METADATA_KEYS
from toolfind.shapes import SCHEMA_KEYS as SCHEMA_KEYS
from toolfind.shapes import SHAPES as SHAPES
from toolfind.shapes import detect_entry as detect_entry
from toolfind.shapes import schema_from_gemini

# typing costs `show` more than the conversion: only the type checker reads it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

    Entries = list[tuple[str, Any, Mapping[str, Any]]]

#: Hard limits: an entry over them is an error (skipped), not a warning.
MAX_NAME_LENGTH: Final = 256
MAX_NAMESPACE_LENGTH: Final = 64
MAX_TAG_LENGTH: Final = 64
MAX_DESCRIPTION_LENGTH: Final = 65_536
#: Deepest nesting (objects and arrays) allowed in a parameter or output schema.
MAX_SCHEMA_DEPTH: Final = 64

_GEMINI_LISTS: Final = ("functionDeclarations", "function_declarations")

PathPart = str | int
# The types of JSON's strings, numbers, booleans and null, as parsed.
_SCALAR_TYPES: Final = frozenset({str, int, float, bool, type(None)})
#: Builds the exception for a message and a path relative to the value being checked.
Fail = Callable[[str, Sequence[PathPart]], Exception]


class EntryError(CatalogError):
    """A bad entry; ``parts`` is the JSON path inside the entry (``catalog`` maps it to a line)."""

    def __init__(self, message: str, source: Source, parts: Sequence[PathPart] = ()) -> None:
        self.parts = tuple(parts)
        self.source = source
        super().__init__(
            message, file=source.file, line=source.line, path=json_path(self.full_parts)
        )

    @property
    def full_parts(self) -> tuple[PathPart, ...]:
        """The path from the document root: the entry's pointer, then ``parts``."""
        return (*pointer_parts(self.source.pointer), *self.parts)


# --- paths -------------------------------------------------------------------------------


def json_pointer(parts: Sequence[PathPart]) -> str:
    """RFC 6901 pointer for ``parts`` (``("tools", 3)`` -> ``/tools/3``)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def pointer_parts(pointer: str) -> tuple[PathPart, ...]:
    """Inverse of ``json_pointer`` for entry pointers: all-digit segments are list indices."""
    if not pointer:
        return ()
    out: list[PathPart] = []
    for raw in pointer[1:].split("/"):
        seg = raw.replace("~1", "/").replace("~0", "~")
        out.append(int(seg) if seg.isdigit() else seg)
    return tuple(out)


def json_path(parts: Sequence[PathPart]) -> str:
    """Dotted/bracket path for messages: ``tools[3].parameters.properties["a b"]``."""
    out = []
    for p in parts:
        if isinstance(p, int):
            out.append(f"[{p}]")
        elif p and all(c.isalnum() or c in "_-$" for c in p) and p.isascii():
            out.append(f".{p}" if out else p)
        else:
            escaped = p.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'["{printable(escaped)}"]')
    return "".join(out)


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr`` cut to ``limit`` characters, for one-line messages about huge values."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def printable(text: str) -> str:
    """``text`` with every non-printable character as ``\\uXXXX``: messages stay on one line
    and show invisible characters instead of acting on them."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)


def invisible_chars(text: str, *, allow_whitespace: bool = True) -> list[tuple[int, str]]:
    """Control and invisible format characters in ``text`` as (index, char).

    Unicode categories Cc (controls; tab, newline and carriage return allowed when
    ``allow_whitespace``) and Cf (zero-width characters, bidi controls, tag characters,
    soft hyphen, BOM): text that renders differently from what a model reads.
    """
    if text.isprintable():  # the common case, decided in C: no character can be reported
        return []
    found = []
    for i, c in enumerate(text):
        if c.isprintable() or c == " ":
            continue
        if allow_whitespace and c in "\t\n\r":
            continue
        if unicodedata.category(c) in ("Cc", "Cf"):
            found.append((i, c))
    return found


def describe_char(c: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``."""
    name = unicodedata.name(c, "")
    return f"U+{ord(c):04X} ({name})" if name else f"U+{ord(c):04X}"


# --- detection ---------------------------------------------------------------------------


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
    return _check_namespace(
        doc["namespace"], lambda m, p: CatalogError(m, path=json_path((*prefix, "namespace", *p)))
    )


def _file_tags(doc: Mapping[str, Any], prefix: tuple[PathPart, ...]) -> tuple[str, ...]:
    if "tags" not in doc:
        return ()
    return _check_tags(
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
        if _too_deep(value, MAX_SCHEMA_DEPTH):
            raise self.fail(f"schema is nested deeper than {MAX_SCHEMA_DEPTH} levels", (*base, key))
        return value


def _too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects/arrays more than ``limit`` levels deep.

    Recursion stops at ``limit``, so a hostile 10,000-level schema costs ``limit`` frames.
    This runs over every schema of every load: a child of a plain JSON scalar type (most of
    them) is passed over after one set lookup, before any ``isinstance``.
    """
    if limit <= 0:
        return True
    children = value.values() if type(value) is dict or isinstance(value, Mapping) else value
    for child in children:
        if type(child) in _SCALAR_TYPES:
            continue
        if isinstance(child, dict | list) and _too_deep(child, limit - 1):
            return True
    return False


def _check_name(value: Any, fail: Fail) -> str:
    if not isinstance(value, str):
        raise fail(f"{short_repr(value)} is not of type 'string'", ())
    if not value.strip():
        raise fail("must not be empty", ())
    if len(value) > MAX_NAME_LENGTH:
        raise fail(f"is {len(value):,} characters long; the limit is {MAX_NAME_LENGTH}", ())
    bad = invisible_chars(value, allow_whitespace=False)
    if bad:
        i, c = bad[0]
        raise fail(
            f"contains the invisible or control character {describe_char(c)} at index {i}", ()
        )
    return value


def _check_namespace(value: Any, fail: Fail) -> str:
    name = _check_name(value, fail)
    if len(name) > MAX_NAMESPACE_LENGTH or any(c.isspace() or c in "/:" for c in name):
        raise fail(
            f"{short_repr(name)} is not a namespace: use at most {MAX_NAMESPACE_LENGTH} "
            "characters and no whitespace, '/' or ':'",
            (),
        )
    return name


def _check_tags(value: Any, fail: Fail) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise fail(f"{short_repr(value)} is not of type 'array'", ())
    for i, tag in enumerate(value):
        if not isinstance(tag, str):
            raise fail(f"{short_repr(tag)} is not of type 'string'", (i,))
        if not tag or len(tag) > MAX_TAG_LENGTH:
            raise fail(f"a tag must have 1 to {MAX_TAG_LENGTH} characters", (i,))
    return tuple(dict.fromkeys(value))


def _params_key(shape: str, body: Mapping[str, Any]) -> str:
    if shape == "anthropic":
        return "input_schema"
    if shape == "mcp":
        return "inputSchema"
    if shape == "gemini" and "parametersJsonSchema" in body:
        return "parametersJsonSchema"
    return "parameters"


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
    name = _check_name(body["name"], read.under(*base, "name"))
    description = read.str_(body, "description", base) or ""
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise read.fail(
            f"is {len(description):,} characters long; the limit is {MAX_DESCRIPTION_LENGTH:,}",
            (*base, "description"),
        )
    pkey = _params_key(shape, body)
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
    if shape == "mcp":
        return read.schema(body, "outputSchema", ())
    if shape == "gemini":
        if "responseJsonSchema" in body:
            return read.schema(body, "responseJsonSchema", ())
        response = read.schema(body, "response", ())
        return schema_from_gemini(response) if response is not None else None
    return read.schema(body, "output_schema", ())


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
        namespace = _check_namespace(entry["namespace"], read.under("namespace"))
    own_tags = _check_tags(entry["tags"], read.under("tags")) if "tags" in entry else ()
    aliases: tuple[str, ...] = ()
    if "aliases" in entry:
        raw = entry["aliases"]
        if not isinstance(raw, list):
            raise read.fail(f"{short_repr(raw)} is not of type 'array'", ("aliases",))
        aliases = tuple(_check_name(a, read.under("aliases", i)) for i, a in enumerate(raw))
    return {
        "namespace": namespace,
        "tags": tuple(dict.fromkeys((*file_tags, *own_tags))),
        "search_hint": read.str_(entry, "search_hint", ()) or "",
        "defer": read.bool_(entry, "defer", False),
        "enabled": read.bool_(entry, "enabled", True),
        "aliases": aliases,
    }


# --- Gemini schema conversion --------------------------------------------------------------
