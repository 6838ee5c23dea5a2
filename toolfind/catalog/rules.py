"""The catalog entry rules, in one place: what a valid entry of each shape is.

``SHAPES`` is the one table: per entry shape, the kind of value each key must hold and the
keys it requires. The packaged JSON Schemas (``toolfind/schemas/``, published for editors and
used by ``validate`` to word messages) say the same (tests/test_rules.py). Derived from it:

- ``vouch`` (the loader's fast path) checks a well-formed entry in one pass and counts its
  strings, or answers "cannot tell" (-1): then the general path (``formats``, then
  ``validate``) decides and words every finding; either way ``formats`` reads the tool;
- ``fits_shape`` tells ``validate`` that an entry certainly passes its packaged schema, so
  jsonschema is imported only for the rest;
- ``input_key`` / ``output_key`` say where each shape keeps its schemas.

The checks reading makes, with their messages (``check_name``, ``check_namespace``,
``check_tags``, the limits), are here too. Each kind's check is at least as strict as both
those and the packaged schema, so an entry ``vouch`` accepts is one the general path accepts
(tests/catalog/test_rules.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from toolfind.catalog.metaschema import schema_strings, value_strings
from toolfind.catalog.paths import Fail, describe_char, invisible_chars, short_repr

#: A kind's check: the number of strings in a value it certainly accepts, else -1.
Check = Callable[[Any], int]

#: Hard limits: an entry over them is an error (skipped), not a warning.
MAX_NAME_LENGTH: Final = 256
MAX_NAMESPACE_LENGTH: Final = 64
MAX_TAG_LENGTH: Final = 64
MAX_DESCRIPTION_LENGTH: Final = 65_536

# --- the table ---------------------------------------------------------------------------
#
# Kinds of value: "name" (1 to 256 characters; no control or invisible ones), "names" (an
# array of names), "namespace", "tags", "text" (a string), "description" (a string of at most
# 65,536 characters), "description?" (or null), "flag" (a boolean), "flag?" (or null),
# "object?" (an object or null), "schema" (a JSON Schema object), "annotations" (MCP's),
# "function" (an OpenAI tool's function: ``FUNCTION``), "=function" and "=custom" (that string).

#: toolfind's metadata keys, accepted next to a tool of any shape.
METADATA: Final[Mapping[str, str]] = {
    "namespace": "namespace",
    "tags": "tags",
    "search_hint": "text",
    "defer": "flag",
    "enabled": "flag",
    "aliases": "names",
}
_FUNCTION: Final = {"name": "name", "description": "description", "parameters": "schema"}

#: Per shape: the kind of each key its packaged schema constrains (the metadata keys
#: included, as every schema's ``allOf``), and the keys it requires. Other keys are kept and
#: ignored: no schema sets ``additionalProperties``.
SHAPES: Final[Mapping[str, tuple[Mapping[str, str], frozenset[str]]]] = {
    "function": ({**METADATA, **_FUNCTION}, frozenset({"name"})),
    "native": (
        {
            **METADATA,
            **_FUNCTION,
            "title": "text",
            "output_schema": "schema",
            "annotations": "annotations",
        },
        frozenset({"name"}),
    ),
    "anthropic": (
        {
            **METADATA,
            "type": "=custom",
            "name": "name",
            "description": "description",
            "input_schema": "schema",
            "defer_loading": "flag",
            "cache_control": "object?",
        },
        frozenset({"name", "input_schema"}),
    ),
    "mcp": (
        {
            **METADATA,
            "name": "name",
            "title": "text",
            "description": "description",
            "inputSchema": "schema",
            "outputSchema": "schema",
            "annotations": "annotations",
        },
        frozenset({"name", "inputSchema"}),
    ),
    "gemini": (
        {
            **METADATA,
            **_FUNCTION,
            "parametersJsonSchema": "schema",
            "response": "schema",
            "responseJsonSchema": "schema",
            "behavior": "text",
        },
        frozenset({"name"}),
    ),
    "openai-responses": (
        {
            **METADATA,
            "type": "=function",
            "name": "name",
            "description": "description?",
            "parameters": "schema",
            "strict": "flag?",
        },
        frozenset({"type", "name"}),
    ),
    "openai": (
        {**METADATA, "type": "=function", "function": "function"},
        frozenset({"type", "function"}),
    ),
}
#: An OpenAI tool's ``function``.
FUNCTION: Final[tuple[Mapping[str, str], frozenset[str]]] = (
    {**_FUNCTION, "strict": "flag?"},
    frozenset({"name"}),
)
#: MCP tool annotations (kind "annotations"); their true hints also become tags.
ANNOTATIONS: Final[Mapping[str, str]] = {
    "title": "text",
    "readOnlyHint": "flag",
    "destructiveHint": "flag",
    "idempotentHint": "flag",
    "openWorldHint": "flag",
}

#: Per shape, the keys that may hold the input and the output schema (of an OpenAI tool: in
#: its ``function``); the first one present is read. Gemini's ``parameters`` and ``response``
#: are OpenAPI-subset schemas, converted when read.
_INPUT_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "anthropic": ("input_schema",),
    "mcp": ("inputSchema",),
    "gemini": ("parametersJsonSchema", "parameters"),
}
_OUTPUT_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "mcp": ("outputSchema",),
    "gemini": ("responseJsonSchema", "response"),
}


def input_key(shape: str, body: Mapping[str, Any]) -> str:
    """The key of ``body`` (an entry, or an OpenAI tool's function) that holds the input schema."""
    keys = _INPUT_KEYS.get(shape, ("parameters",))
    return next((key for key in keys if key in body), keys[-1])


def output_key(shape: str, body: Mapping[str, Any]) -> str:
    """The key of ``body`` that holds the output schema (read for every shape; checked
    against the meta-schema only where the shape's schema lists it)."""
    keys = _OUTPUT_KEYS.get(shape, ("output_schema",))
    return next((key for key in keys if key in body), keys[-1])


# --- the checks reading makes, with their messages ------------------------------------------


def check_name(value: Any, fail: Fail) -> str:
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


def check_namespace(value: Any, fail: Fail) -> str:
    name = check_name(value, fail)
    if len(name) > MAX_NAMESPACE_LENGTH or any(c.isspace() or c in "/:" for c in name):
        raise fail(
            f"{short_repr(name)} is not a namespace: use at most {MAX_NAMESPACE_LENGTH} "
            "characters and no whitespace, '/' or ':'",
            (),
        )
    return name


def check_tags(value: Any, fail: Fail) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise fail(f"{short_repr(value)} is not of type 'array'", ())
    for i, tag in enumerate(value):
        if not isinstance(tag, str):
            raise fail(f"{short_repr(tag)} is not of type 'string'", (i,))
        if not tag or len(tag) > MAX_TAG_LENGTH:
            raise fail(f"a tag must have 1 to {MAX_TAG_LENGTH} characters", (i,))
    return tuple(dict.fromkeys(value))


# --- each kind's check: the number of strings in a value it certainly accepts, else -1 -------
#
# A string counts 1 and an object's keys count too (for the loader's repeated-key check).
# Where a check is stricter than the rule (printable names, say), "cannot tell" only sends
# the entry the general way.


def _name(value: Any) -> int:
    # check_name passes, and so does the schemas' 1 to 256 characters: printable, so without
    # the control and format characters it refuses (other unprintable ones: cannot tell).
    ok = (
        type(value) is str
        and len(value) <= MAX_NAME_LENGTH
        and value.isprintable()
        and value.strip() != ""
    )
    return 1 if ok else -1


def _names(value: Any) -> int:
    ok = type(value) is list and all(_name(v) > 0 for v in value)
    return len(value) if ok else -1


def _namespace(value: Any) -> int:
    # Printable characters include no whitespace but " ": check_namespace's and the schema's rules.
    ok = (
        type(value) is str
        and 0 < len(value) <= MAX_NAMESPACE_LENGTH
        and value.isprintable()
        and " " not in value
        and "/" not in value
        and ":" not in value
    )
    return 1 if ok else -1


def _tags(value: Any) -> int:
    ok = type(value) is list and all(
        type(tag) is str and 0 < len(tag) <= MAX_TAG_LENGTH for tag in value
    )
    return len(value) if ok else -1


def _description(value: Any) -> int:
    return 1 if type(value) is str and len(value) <= MAX_DESCRIPTION_LENGTH else -1


def _flag(value: Any) -> int:
    return 0 if type(value) is bool else -1


def _or_null(check: Check) -> Check:
    return lambda value: 0 if value is None else check(value)


def _constant(expected: str) -> Check:
    return lambda value: 1 if type(value) is str and value == expected else -1


def _other(value: Any, depth: int = 0) -> int:
    """A value no rule constrains: only counted (refused when nested too deep to walk)."""
    kind = type(value)
    if kind is str:
        return 1
    if kind is dict or kind is list:
        return value_strings(value, depth)
    return 0


def _object_strings(
    obj: dict[str, Any], checks: Mapping[str, Check], required: frozenset[str], depth: int = 0
) -> int:
    """The strings in ``obj`` when it has the ``required`` keys and every value passes its
    key's check (keys without one are only counted, as nested ``depth`` levels); else -1."""
    if not obj.keys() >= required:
        return -1
    strings = len(obj)
    for key, value in obj.items():
        check = checks.get(key)
        count = _other(value, depth) if check is None else check(value)
        if count < 0:
            return -1
        strings += count
    return strings


def _annotations(value: Any) -> int:
    # Nested as deep as reading allows (annotations are read like a schema).
    return _object_strings(value, _ANNOTATION_CHECKS, frozenset(), 1) if type(value) is dict else -1


_KINDS: Final[dict[str, Check]] = {
    "name": _name,
    "names": _names,
    "namespace": _namespace,
    "tags": _tags,
    "text": lambda value: 1 if type(value) is str else -1,
    "description": _description,
    "description?": _or_null(_description),
    "flag": _flag,
    "flag?": _or_null(_flag),
    "object?": _or_null(lambda value: value_strings(value, 0) if type(value) is dict else -1),
    "schema": lambda value: schema_strings(value) if type(value) is dict else -1,
    "annotations": _annotations,
    "=function": _constant("function"),
    "=custom": _constant("custom"),
}
_ANNOTATION_CHECKS: Final = {key: _KINDS[kind] for key, kind in ANNOTATIONS.items()}
#: What reading takes from every body (entry, or OpenAI function) though not every shape's
#: schema constrains it: a string title, annotations and an output schema read like a schema.
_READ_ANYWAY: Final = {"title": "text", "annotations": "annotations"}


def _checks(rules: Mapping[str, str], kinds: Mapping[str, Check]) -> dict[str, Check]:
    return {key: kinds[kind] for key, kind in rules.items()}


def _function_check(checks: Mapping[str, Check]) -> Check:
    """The check of an OpenAI tool's ``function`` whose keys ``checks`` check."""
    return lambda value: _object_strings(value, checks, FUNCTION[1]) if type(value) is dict else -1


def _read_rules(shape: str, rules: Mapping[str, str]) -> Mapping[str, str]:
    """The fast path's rules for a body of ``shape``: the schema's, those of what reading
    takes anyway, and the meta-schema walk for its schemas."""
    return {**_READ_ANYWAY, output_key(shape, {}): "schema", **rules}


#: The checks the packaged schemas make (a "schema" is just an object to them; the
#: meta-schema is ``validate``'s).
_FITS_KINDS: Final = {**_KINDS, "schema": lambda value: 0 if type(value) is dict else -1}
_FITS_KINDS["function"] = _function_check(_checks(FUNCTION[0], _FITS_KINDS))
_FITS: Final = {shape: _checks(rules, _FITS_KINDS) for shape, (rules, _) in SHAPES.items()}
#: The fast path's checks per shape (Gemini's schemas are converted when read: not here).
_READ_KINDS: Final = {
    **_KINDS,
    "function": _function_check(_checks(_read_rules("openai", FUNCTION[0]), _KINDS)),
}
_READ: Final = {
    shape: _checks(rules if shape == "openai" else _read_rules(shape, rules), _READ_KINDS)
    for shape, (rules, _) in SHAPES.items()
    if shape != "gemini"
}


def fits_shape(entry: Any, shape: str) -> bool:
    """True when ``entry`` certainly passes its shape's packaged schema."""
    checks = _FITS.get(shape)
    return (
        checks is not None
        and type(entry) is dict
        and _object_strings(entry, checks, SHAPES[shape][1]) >= 0
    )


# --- the fast path's check: a well-formed entry vouched for in one pass -----------------------


def vouch(entry: dict[str, Any], shape: str) -> int:
    """The number of strings in ``entry`` (keys included) when it is certainly a well-formed
    entry of ``shape`` (see ``formats.quick_shape``): every finding the general path could
    word is ruled out, so ``formats.read_tool`` reads it without checks. Else -1 ("cannot
    tell": the general path decides). Gemini entries (whose schemas are converted) and
    built-in tools are never vouched for."""
    checks = _READ.get(shape)
    if checks is None:
        return -1
    return _object_strings(entry, checks, SHAPES[shape][1])
