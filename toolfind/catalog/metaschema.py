"""What a parameter or output schema may say, decided without jsonschema: one walk.

``schema_strings`` holds every keyword of a schema to its rule in the JSON Schema meta-schemas
(Draft 2020-12 and Draft 7), refuses nesting deeper than ``MAX_SCHEMA_DEPTH``, and counts the
schema's strings (for the loader's repeated-key check), in one walk. It answers only
"certainly valid" (the count) or "cannot tell" (-1), which goes to ``validate``, where
jsonschema decides and words the message, so every finding is still jsonschema's own. The
walk covers the common keywords and leaves everything unusual to jsonschema; it must never
accept what jsonschema refuses (tests/test_metaschema.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

#: Deepest nesting (objects and arrays) allowed in a parameter or output schema: deeper is a
#: hard error ("schema is nested deeper than 64 levels").
MAX_SCHEMA_DEPTH: Final = 64

# The types of JSON's strings, numbers, booleans and null, as parsed.
_SCALAR_TYPES: Final = frozenset({str, int, float, bool, type(None)})


def too_deep(value: Any, limit: int = MAX_SCHEMA_DEPTH) -> bool:
    """Whether ``value`` nests objects/arrays more than ``limit`` levels deep (recursion stops
    at ``limit``: a hostile 10,000-level schema costs ``limit`` frames)."""
    if limit <= 0:
        return True
    children = value.values() if type(value) is dict or isinstance(value, Mapping) else value
    for child in children:
        if type(child) in _SCALAR_TYPES:  # most: passed over after one set lookup
            continue
        if isinstance(child, dict | list) and too_deep(child, limit - 1):
            return True
    return False


_SUBSCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
_SUBSCHEMA_LISTS: Final = frozenset({"prefixItems", "allOf", "anyOf", "oneOf", "items"})
_SUBSCHEMA_ONE: Final = frozenset(
    {"items", "additionalProperties", "additionalItems", "contains", "propertyNames"}
    | {"not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
)
_COUNTS: Final = frozenset(
    {"minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains"}
    | {"minProperties", "maxProperties"}
)
_BOUNDS: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
#: As a tuple, ``in`` compares, so an unhashable value is just not in it.
_SIMPLE_TYPE_NAMES: Final = ("string", "integer", "number", "boolean", "object", "array", "null")
_SIMPLE_TYPES: Final = frozenset(_SIMPLE_TYPE_NAMES)

# The walk holds each keyword below to its rule in both the Draft 2020-12 and the Draft 7
# meta-schemas, or a stricter one; a keyword of only one of them (a ``$defs`` under Draft 7,
# say) is still held to its rule, as ``validate._shallow`` holds it.
#: Keywords whose value is a string.
_TEXT_KEYWORDS: Final = frozenset(
    {"description", "title", "$comment", "pattern", "format", "$ref", "$schema"}
    | {"contentEncoding", "contentMediaType"}
)
#: Keywords whose value is a boolean (a subschema may be one too).
_FLAG_KEYWORDS: Final = frozenset({"uniqueItems", "readOnly", "writeOnly", "deprecated"})
#: Keywords that take any value (whose nesting alone matters), and any array.
_VALUE_KEYWORDS: Final = frozenset({"const", "default"})
_ARRAY_KEYWORDS: Final = frozenset({"enum", "examples"})
#: Maps and non-empty arrays of subschemas (``items`` may be one subschema, ``dependencies``
#: an array too: both left to jsonschema then).
_SCHEMA_MAP_KEYWORDS: Final = _SUBSCHEMA_MAPS - {"dependencies"}
_SCHEMA_LIST_KEYWORDS: Final = _SUBSCHEMA_LISTS - {"items"}
#: Every keyword either meta-schema (with its vocabularies) constrains. Those without a rule
#: here (``$id``, ``$anchor``, ``dependencies``, ...) are left to jsonschema; any other key
#: is no keyword, and the meta-schemas accept any value for it.
META_KEYWORDS: Final = frozenset(
    {*_TEXT_KEYWORDS, *_FLAG_KEYWORDS, *_VALUE_KEYWORDS, *_ARRAY_KEYWORDS, *_COUNTS, *_BOUNDS}
    | {*_SUBSCHEMA_MAPS, *_SUBSCHEMA_LISTS, *_SUBSCHEMA_ONE, "type", "required", "multipleOf"}
    | {"$id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "dependentRequired"}
    | {"$recursiveAnchor", "$recursiveRef"}
)
#: ``$schema`` values naming the meta-schemas the rules follow: Draft 2020-12 (also the
#: default of ``validate._meta_validator``) and Draft 7 (which MCP servers built with zod
#: declare).
RULED_DIALECTS: Final = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-07/schema#",
    }
)
#: Keywords the walk holds to a rule for a value of some type, and leaves to jsonschema (by
#: answering "cannot tell") for any other.
_RULED_OBJECT_KEYWORDS: Final = META_KEYWORDS - _VALUE_KEYWORDS
_RULED_ARRAY_KEYWORDS: Final = META_KEYWORDS - _VALUE_KEYWORDS - _ARRAY_KEYWORDS
#: Keywords whose value may not be a string ("type" apart: only some strings).
_NO_TEXT_KEYWORDS: Final = _RULED_OBJECT_KEYWORDS - _TEXT_KEYWORDS - {"type"}
#: The deepest a schema object may be for the walk to decide (one level short of what
#: ``too_deep`` allows for its direct children: the walk never looks further).
_DEEPEST_NODE: Final = MAX_SCHEMA_DEPTH - 2
_STRING_TYPE: Final = frozenset({str})


def schema_strings(schema: dict[str, Any]) -> int:
    """The strings in ``schema`` (keys included) when it certainly passes the meta-schema its
    ``$schema`` names (Draft 2020-12 or Draft 7) and ``too_deep`` does not refuse it; else
    -1 ("cannot tell")."""
    declared = schema.get("$schema")  # None: the default, 2020-12
    if declared is not None and not (type(declared) is str and declared in RULED_DIALECTS):
        return -1
    return _schema_strings(schema, 0)


def _schema_strings(node: dict[str, Any], depth: int) -> int:
    """``schema_strings`` of a schema object ``depth`` levels below the top."""
    if depth > _DEEPEST_NODE:
        return -1
    strings = len(node)
    for key, value in node.items():
        kind = type(value)
        if kind is str:
            strings += 1
            if key == "type":
                if value not in _SIMPLE_TYPES:
                    return -1
            elif key in _NO_TEXT_KEYWORDS:
                return -1
            continue
        if kind is dict:
            if key in _SCHEMA_MAP_KEYWORDS:
                strings += len(value)
                count = _subschemas_strings(value.values(), depth + 2)
            elif key in _SUBSCHEMA_ONE:
                count = _schema_strings(value, depth + 1)
            elif key in _RULED_OBJECT_KEYWORDS:
                return -1
            else:
                count = value_strings(value, depth + 1)
        elif kind is list:
            if key == "required" and len(value) == 1 and type(value[0]) is str:
                strings += 1  # the commonest array, decided without a call
                continue
            count = _schema_list_strings(key, value, depth)
        else:
            count = 0 if _scalar_keyword(key, value) else -1
        if count < 0:
            return -1
        strings += count
    return strings


def _scalar_keyword(key: str, value: Any) -> bool:
    """``_schema_strings`` for a value that is no string, object or array."""
    kind = type(value)
    if key in _COUNTS:
        return kind is int and value >= 0
    if key in _BOUNDS:
        return kind is int or kind is float
    if key == "multipleOf":
        return (kind is int or kind is float) and value > 0
    if key in _FLAG_KEYWORDS or key in _SUBSCHEMA_ONE:
        return kind is bool
    return key in _VALUE_KEYWORDS or key not in META_KEYWORDS


def _schema_list_strings(key: str, value: list[Any], depth: int) -> int:
    """``_schema_strings`` for an array value."""
    if key == "required":
        return len(value) if _distinct_strings(value) else -1
    if key in _SCHEMA_LIST_KEYWORDS:
        return _subschemas_strings(value, depth + 2) if value else -1
    if key == "type":
        ok = value and _distinct_strings(value) and _SIMPLE_TYPES.issuperset(value)
        return len(value) if ok else -1
    if key in _RULED_ARRAY_KEYWORDS:
        return -1
    return value_strings(value, depth + 1)


def _subschemas_strings(values: Iterable[Any], depth: int) -> int:
    """The strings in subschemas (objects or booleans) ``depth`` levels down, or -1."""
    if depth > _DEEPEST_NODE:
        return -1
    strings = 0
    for value in values:
        if type(value) is not dict:
            if type(value) is not bool:
                return -1
        # Most are a property's {"type": ..., "description": ...}: decided without a call.
        elif (
            len(value) == 2
            and value.get("type") in _SIMPLE_TYPE_NAMES
            and type(value.get("description")) is str
        ):
            strings += 4
        else:
            count = _schema_strings(value, depth)
            if count < 0:
                return -1
            strings += count
    return strings


def value_strings(value: dict[str, Any] | list[Any], depth: int) -> int:
    """The strings in a JSON object or array nested ``depth`` levels below a schema's top, or
    -1 when something in it is nested ``MAX_SCHEMA_DEPTH`` levels or deeper."""
    if depth >= MAX_SCHEMA_DEPTH:
        return -1
    if type(value) is dict:
        strings = len(value)
        children: Iterable[Any] = value.values()
    else:
        strings = 0
        children = value
    for child in children:
        kind = type(child)
        if kind is str:
            strings += 1
        elif kind is dict or kind is list:
            count = value_strings(child, depth + 1)
            if count < 0:
                return -1
            strings += count
    return strings


def _distinct_strings(value: list[Any]) -> bool:
    # All strings (checked in C), none repeated.
    return _STRING_TYPE.issuperset(map(type, value)) and len(set(value)) == len(value)
