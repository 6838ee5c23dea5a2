"""What a parameter schema may say, decided without jsonschema.

The rule of each keyword of the JSON Schema meta-schemas (Draft 2020-12 and Draft 7), and
the one walk that holds a schema to them, checks its depth and counts its strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from toolfind.catalog import formats

_SUBSCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
_SUBSCHEMA_LISTS: Final = frozenset({"prefixItems", "allOf", "anyOf", "oneOf", "items"})
_SUBSCHEMA_ONE: Final = frozenset(
    {
        "items",
        "additionalProperties",
        "additionalItems",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contentSchema",
    }
)
_FREE_TEXT: Final = frozenset({"description", "title", "$comment", "pattern", "$ref", "format"})
_COUNTS: Final = frozenset(
    {
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    }
)
_BOUNDS: Final = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})

_SIMPLE_TYPES: Final = frozenset(
    {"array", "boolean", "integer", "null", "number", "object", "string"}
)
_STRING_TYPE: Final = frozenset({str})

#: A keyword's rule: whether its value certainly passes the meta-schema. A rule for a keyword
#: that holds subschemas also appends the object ones to the list, to be checked in turn.
KeywordRule = Callable[[Any, list[dict[str, Any]]], bool]


def _rule_text(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is str


def _rule_flag(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is bool


def _rule_count(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is int and value >= 0


def _rule_number(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is int or type(value) is float


def _rule_positive(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return (type(value) is int or type(value) is float) and value > 0


def _rule_array(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is list


def _rule_anything(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return True


def _rule_types(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    """A simple type, or a non-empty array of distinct simple types."""
    if type(value) is str:
        return value in _SIMPLE_TYPES
    return _distinct_strings(value) and len(value) > 0 and _SIMPLE_TYPES.issuperset(value)


def _rule_names(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return _distinct_strings(value)


def _rule_name_lists(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is dict and all(_distinct_strings(v) for v in value.values())


def _rule_subschema(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return _subschemas((value,), subschemas)


def _rule_subschema_map(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is dict and _subschemas(value.values(), subschemas)


def _rule_subschema_list(value: Any, subschemas: list[dict[str, Any]]) -> bool:
    return type(value) is list and len(value) > 0 and _subschemas(value, subschemas)


def _subschemas(values: Iterable[Any], subschemas: list[dict[str, Any]]) -> bool:
    """Whether every value is a schema: ``true``/``false``, or an object (queued for checking)."""
    for value in values:
        if type(value) is dict:
            subschemas.append(value)
        elif type(value) is not bool:
            return False
    return True


def _distinct_strings(value: Any) -> bool:
    return (
        type(value) is list
        and _STRING_TYPE.issuperset(map(type, value))  # all strings, checked in C
        and len(set(value)) == len(value)
    )


#: The rule of each keyword the fast check decides. Each is the keyword's rule in both the
#: Draft 2020-12 and the Draft 7 meta-schemas, or stricter; a keyword of only one of them (a
#: ``$defs`` under Draft 7, say) is still held to its rule, as ``_shallow`` holds it.
_KEYWORD_RULES: Final[Mapping[str, KeywordRule]] = {
    **dict.fromkeys(
        ("description", "title", "$comment", "pattern", "format", "$ref", "$schema"), _rule_text
    ),
    **dict.fromkeys(("contentEncoding", "contentMediaType"), _rule_text),
    "type": _rule_types,
    "required": _rule_names,
    "dependentRequired": _rule_name_lists,
    "enum": _rule_array,
    "examples": _rule_array,
    "const": _rule_anything,
    "default": _rule_anything,
    **dict.fromkeys(_SUBSCHEMA_MAPS - {"dependencies"}, _rule_subschema_map),
    **dict.fromkeys(_SUBSCHEMA_LISTS - {"items"}, _rule_subschema_list),
    **dict.fromkeys(_SUBSCHEMA_ONE, _rule_subschema),
    **dict.fromkeys(_COUNTS, _rule_count),
    **dict.fromkeys(_BOUNDS, _rule_number),
    "multipleOf": _rule_positive,
    **dict.fromkeys(("uniqueItems", "readOnly", "writeOnly", "deprecated"), _rule_flag),
}
#: Every keyword either meta-schema (with its vocabularies) constrains. Those without a rule
#: above (``$id``, ``$anchor``, ``dependencies``, ...) are left to jsonschema; any other key
#: is no keyword, and the meta-schemas accept any value for it.
_META_KEYWORDS: Final = frozenset(
    {
        *_KEYWORD_RULES,
        "$id",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$vocabulary",
        "dependencies",
        "$recursiveAnchor",
        "$recursiveRef",
    }
)
#: ``$schema`` values naming the meta-schemas the rules follow: Draft 2020-12 (also the
#: default of ``_meta_validator``) and Draft 7 (which MCP servers built with zod declare).
_RULED_DIALECTS: Final = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
        "http://json-schema.org/draft-07/schema",
        "http://json-schema.org/draft-07/schema#",
    }
)


def _surely_valid_schema(schema: Mapping[str, Any]) -> bool:
    """True when ``_meta_problem(schema)`` is certainly None, decided without jsonschema.

    Visits the subschemas ``_meta_problem`` visits (``_shallow``'s children) and holds each
    keyword to its rule in ``_KEYWORD_RULES``; False ("cannot tell") for anything else, a
    ``$schema`` other than Draft 2020-12 or Draft 7 included.
    """
    if type(schema) is not dict:
        return False
    declared = schema.get("$schema")
    if declared is not None and not (type(declared) is str and declared in _RULED_DIALECTS):
        return False
    rule_of = _KEYWORD_RULES.get
    stack: list[dict[str, Any]] = [schema]
    while stack:
        for key, value in stack.pop().items():
            rule = rule_of(key)
            if rule is None:
                if key in _META_KEYWORDS:
                    return False
            elif not rule(value, stack):
                return False
    return True


_TEXT_KEYWORDS: Final = frozenset(k for k, rule in _KEYWORD_RULES.items() if rule is _rule_text)
_SCHEMA_MAP_KEYWORDS: Final = _SUBSCHEMA_MAPS - {"dependencies"}
_SCHEMA_LIST_KEYWORDS: Final = _SUBSCHEMA_LISTS - {"items"}
#: Keywords that take any value (whose nesting alone matters), and any array.
_VALUE_KEYWORDS: Final = frozenset({"const", "default"})
_ARRAY_KEYWORDS: Final = frozenset({"enum", "examples"})
#: Keywords the walk holds to a rule for a value of some type, and leaves to
#: ``_surely_valid_schema`` (by answering "cannot tell") for any other.
_RULED_OBJECT_KEYWORDS: Final = _META_KEYWORDS - _VALUE_KEYWORDS
_RULED_ARRAY_KEYWORDS: Final = _META_KEYWORDS - _VALUE_KEYWORDS - _ARRAY_KEYWORDS
#: Keywords whose value may not be a string ("type" apart: only some strings).
_NO_TEXT_KEYWORDS: Final = _RULED_OBJECT_KEYWORDS - _TEXT_KEYWORDS - {"type"}
#: The deepest a schema object may be for the walk to decide (one level short of what
#: ``formats._too_deep`` allows for its direct children: the walk never looks further).
_DEEPEST_NODE: Final = formats.MAX_SCHEMA_DEPTH - 2
#: ``_SIMPLE_TYPES`` as a tuple: ``in`` compares, so an unhashable value is just not in it.
_SIMPLE_TYPE_NAMES: Final = ("string", "integer", "number", "boolean", "object", "array", "null")
_NO_SUBSCHEMAS: Final[list[dict[str, Any]]] = []  # rules append only objects: never to it
_DICT_TYPE: Final = frozenset({dict})


def _fast_schema(schema: dict[str, Any]) -> int:
    """The strings in ``schema`` (keys included) when ``_surely_valid_schema`` accepts it and
    ``formats._too_deep`` does not refuse it; else -1. One walk for both."""
    if "$schema" in schema and not _ruled_dialect(schema["$schema"]):
        return -1
    return _schema_strings(schema, 0)


def _ruled_dialect(declared: Any) -> bool:
    """Whether a ``$schema`` value lets ``_surely_valid_schema`` decide (None: the default)."""
    return declared is None or (type(declared) is str and declared in _RULED_DIALECTS)


def _schema_strings(node: dict[str, Any], depth: int) -> int:
    """``_fast_schema`` of a schema object ``depth`` levels below the top."""
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
            else:
                count = _schema_object_strings(key, value, depth)
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
    rule = _KEYWORD_RULES.get(key)
    if rule is None:
        return key not in _META_KEYWORDS
    return rule(value, _NO_SUBSCHEMAS)


def _schema_object_strings(key: str, value: dict[str, Any], depth: int) -> int:
    """``_schema_strings`` for an object value (but a map of subschemas)."""
    if key in _SUBSCHEMA_ONE:
        return _schema_strings(value, depth + 1)
    if key in _RULED_OBJECT_KEYWORDS:
        return -1
    return _value_strings(value, depth + 1)


def _schema_list_strings(key: str, value: list[Any], depth: int) -> int:
    """``_schema_strings`` for an array value."""
    if key == "required":
        return len(value) if _distinct_strings(value) else -1
    if key in _SCHEMA_LIST_KEYWORDS:
        return _subschemas_strings(value, depth + 2) if value else -1
    if key == "type":
        return len(value) if _rule_types(value, _NO_SUBSCHEMAS) else -1
    if key in _RULED_ARRAY_KEYWORDS:
        return -1
    return _value_strings(value, depth + 1)


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


def _value_strings(value: dict[str, Any] | list[Any], depth: int) -> int:
    """The strings in a JSON object or array nested ``depth`` levels below a schema's top, or
    -1 when something in it is nested ``formats.MAX_SCHEMA_DEPTH`` levels or deeper."""
    if depth >= formats.MAX_SCHEMA_DEPTH:
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
            count = _value_strings(child, depth + 1)
            if count < 0:
                return -1
            strings += count
    return strings
