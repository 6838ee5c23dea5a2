"""The catalog entry rules: what a valid entry of each shape is, decided without jsonschema."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from toolfind.catalog import formats
from toolfind.catalog.metaschema import _fast_schema, _value_strings
from toolfind.models import Source, Tool, new_tool

# --- schema checks without jsonschema ----------------------------------------------------
#
# Importing jsonschema costs ~0.3 s, and even memoised (above) the checks cost ~0.1 ms per
# entry, yet nearly every entry of a real catalog is well formed. So entries and schemas are
# first checked by hand-written rules that answer only "certainly valid" (True) or "cannot
# tell" (False). Only "cannot tell" goes on to jsonschema, which then decides and words the
# message, so every finding is still jsonschema's own. The rules cover the common keys and
# keywords and leave everything unusual to jsonschema; they must never accept what jsonschema
# refuses (tests/test_catalog.py checks them against jsonschema on random entries and schemas).

Rule = Callable[[Any], bool]


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_bool(value: Any) -> bool:
    return type(value) is bool


def _is_object(value: Any) -> bool:
    return type(value) is dict


def _is_str_or_null(value: Any) -> bool:
    return value is None or type(value) is str


def _is_bool_or_null(value: Any) -> bool:
    return value is None or type(value) is bool


def _is_object_or_null(value: Any) -> bool:
    return value is None or type(value) is dict


def _is_name(value: Any) -> bool:
    """native-catalog.schema.json's ``name``: a string of 1 to 256 characters."""
    return type(value) is str and 0 < len(value) <= 256


def _is_names(value: Any) -> bool:
    return type(value) is list and all(_is_name(v) for v in value)


def _is_tags(value: Any) -> bool:
    """native-catalog.schema.json's ``tags``: strings of 1 to 64 characters."""
    return type(value) is list and all(type(v) is str and 0 < len(v) <= 64 for v in value)


_NAMESPACE_PATTERN: Final = re.compile(r"^[^\s/:]{1,64}$")  # native-catalog.schema.json's


def _is_namespace(value: Any) -> bool:
    # re.search, as jsonschema applies "pattern" (so `$` also matches before a final "\n").
    return type(value) is str and _NAMESPACE_PATTERN.search(value) is not None


def _is_function_type(value: Any) -> bool:
    return type(value) is str and value == "function"


def _is_custom_type(value: Any) -> bool:
    return type(value) is str and value == "custom"


_ANNOTATION_RULES: Final[Mapping[str, Rule]] = {
    "title": _is_str,
    "readOnlyHint": _is_bool,
    "destructiveHint": _is_bool,
    "idempotentHint": _is_bool,
    "openWorldHint": _is_bool,
}


def _is_annotations(value: Any) -> bool:
    return _fits(value, _ANNOTATION_RULES, frozenset())


_METADATA_RULES: Final[Mapping[str, Rule]] = {
    "namespace": _is_namespace,
    "tags": _is_tags,
    "search_hint": _is_str,
    "defer": _is_bool,
    "enabled": _is_bool,
    "aliases": _is_names,
}
_FUNCTION_RULES: Final[Mapping[str, Rule]] = {
    "name": _is_name,
    "description": _is_str,
    "parameters": _is_object,
}
_OPENAI_FUNCTION_RULES: Final[Mapping[str, Rule]] = {**_FUNCTION_RULES, "strict": _is_bool_or_null}


def _is_openai_function(value: Any) -> bool:
    return _fits(value, _OPENAI_FUNCTION_RULES, frozenset({"name"}))


#: Per shape, as its packaged schema says: the rule of each key it constrains (the toolfind
#: metadata keys included, as every schema's ``allOf``), and the keys it requires.
_SHAPE_RULES: Final[Mapping[str, tuple[Mapping[str, Rule], frozenset[str]]]] = {
    "function": ({**_METADATA_RULES, **_FUNCTION_RULES}, frozenset({"name"})),
    "native": (
        {
            **_METADATA_RULES,
            **_FUNCTION_RULES,
            "title": _is_str,
            "output_schema": _is_object,
            "annotations": _is_annotations,
        },
        frozenset({"name"}),
    ),
    "anthropic": (
        {
            **_METADATA_RULES,
            "type": _is_custom_type,
            "name": _is_name,
            "description": _is_str,
            "input_schema": _is_object,
            "defer_loading": _is_bool,
            "cache_control": _is_object_or_null,
        },
        frozenset({"name", "input_schema"}),
    ),
    "mcp": (
        {
            **_METADATA_RULES,
            "name": _is_name,
            "title": _is_str,
            "description": _is_str,
            "inputSchema": _is_object,
            "outputSchema": _is_object,
            "annotations": _is_annotations,
        },
        frozenset({"name", "inputSchema"}),
    ),
    "gemini": (
        {
            **_METADATA_RULES,
            **_FUNCTION_RULES,
            "parametersJsonSchema": _is_object,
            "response": _is_object,
            "responseJsonSchema": _is_object,
            "behavior": _is_str,
        },
        frozenset({"name"}),
    ),
    "openai-responses": (
        {
            **_METADATA_RULES,
            "type": _is_function_type,
            "name": _is_name,
            "description": _is_str_or_null,
            "parameters": _is_object,
            "strict": _is_bool_or_null,
        },
        frozenset({"type", "name"}),
    ),
    "openai": (
        {**_METADATA_RULES, "type": _is_function_type, "function": _is_openai_function},
        frozenset({"type", "function"}),
    ),
}


def _fits(value: Any, rules: Mapping[str, Rule], required: frozenset[str]) -> bool:
    """Whether ``value`` is an object with the ``required`` keys whose keys pass their rules.

    Keys without a rule are accepted, as the packaged schemas accept unknown keys.
    """
    if type(value) is not dict or not value.keys() >= required:
        return False
    for key, item in value.items():
        rule = rules.get(key)
        if rule is not None and not rule(item):
            return False
    return True


def _fits_shape(entry: Any, shape: str) -> bool:
    """True when ``entry`` certainly passes its shape's packaged schema (see ``_SHAPE_RULES``)."""
    rules = _SHAPE_RULES.get(shape)
    return rules is not None and _fits(entry, *rules)


# --- the fast path: a well-formed entry read and checked in one pass -------------------------
#
# Reading an entry (formats.tool_from_entry), then checking it (_check_schemas) walks each of
# its schemas three times and calls a function per key, which made loading a 10,000-tool
# catalog take several times longer than parsing it. ``_fast_tool`` reads a well-formed entry
# of the common shapes in one pass over its keys and one walk of each schema, and answers
# only "this Tool, certainly the one the general path builds, with no finding" or "cannot
# tell" (-1); "cannot tell" goes the general way, which decides and words any finding. So
# it holds every value at least as strictly as formats (its reading checks), ``_fits_shape``
# and ``_surely_valid_schema`` do (tests/test_fast_load.py checks that on random entries).
# The walk also counts the entry's strings, for ``_Doc.quotes``.

#: What ``_fast_fields`` does with each key of an entry (or of an OpenAI ``function``), per
#: shape; a key without an action is read by no one and constrained by no rule: only counted.
_FAST_BODY: Final[Mapping[str, str]] = {
    "name": "name",
    "description": "description",
    "title": "title",
    "annotations": "annotations",
    "output_schema": "output",
}
_FAST_METADATA: Final[Mapping[str, str]] = {key: key for key in formats.METADATA_KEYS}
_FAST_SPECS: Final[Mapping[str, Mapping[str, str]]] = {
    "function": {**_FAST_METADATA, **_FAST_BODY, "parameters": "parameters"},
    "native": {**_FAST_METADATA, **_FAST_BODY, "parameters": "parameters"},
    "anthropic": {
        **_FAST_METADATA,
        **_FAST_BODY,
        "input_schema": "parameters",
        "type": "custom",
        "defer_loading": "flag",
        "cache_control": "object-or-null",
    },
    "mcp": {
        **_FAST_METADATA,
        **{k: v for k, v in _FAST_BODY.items() if k != "output_schema"},
        "inputSchema": "parameters",
        "outputSchema": "output",
    },
    "openai-responses": {
        **_FAST_METADATA,
        **_FAST_BODY,
        "parameters": "parameters",
        "type": "function-type",
        "strict": "strict",
    },
    "openai": {**_FAST_METADATA, "type": "function-type", "function": "function"},
}
#: The body of an OpenAI tool (its ``function``).
_FAST_OPENAI_FUNCTION: Final[Mapping[str, str]] = {
    **_FAST_BODY,
    "parameters": "parameters",
    "strict": "strict",
}
_HINTS: Final = frozenset(_ANNOTATION_RULES) - {"title"}
#: Keys of an entry of shape "function" that decide nothing else in detect_entry.
_FUNCTION_KEYS: Final = frozenset({"name", "description", "parameters", "title", "annotations"})
#: Per shape, the keys of the commonest entries (of an OpenAI tool's ``function``), which
#: ``_fast_plain`` reads without a loop, and the key of the input schema among them (which
#: they must have: every shape's schema requires it or detect_entry found it).
_PLAIN: Final[Mapping[str, tuple[frozenset[str], str]]] = {
    "function": (frozenset({"name", "description", "parameters"}), "parameters"),
    "anthropic": (frozenset({"name", "description", "input_schema"}), "input_schema"),
    "mcp": (frozenset({"name", "description", "inputSchema"}), "inputSchema"),
    "openai-responses": (
        frozenset({"type", "name", "description", "parameters", "strict"}),
        "parameters",
    ),
    "openai": (frozenset({"name", "description", "parameters", "strict"}), "parameters"),
}
#: The ``_PLAIN`` shapes an entry without a "type" has, in the order detect_entry tests them
#: (keys of a bare function first: one without "inputSchema" is no MCP tool).
_UNTYPED_PLAIN: Final = tuple(_PLAIN[shape] for shape in ("function", "mcp", "anthropic"))
_MAX_NAME: Final = formats.MAX_NAME_LENGTH
_MAX_DESCRIPTION: Final = formats.MAX_DESCRIPTION_LENGTH
#: What ``_fast_fields`` found, by action, before it looks: what the general path reads for
#: a missing key (None where ``_fast_tool`` decides).
_FOUND: Final[dict[str, Any]] = {
    "name": None,
    "description": "",
    "parameters": None,
    "output": None,
    "title": None,
    "annotations": None,
    "namespace": None,
    "tags": None,
    "search_hint": "",
    "defer": False,
    "enabled": True,
    "aliases": None,
}


def _fast_tool(
    entry: dict[str, Any],
    defaults: Mapping[str, Any],
    namespace: str,
    source: Source,
    tools: list[Tool],
) -> int:
    """Append to ``tools`` the ``Tool`` the general path reads from ``entry`` and return the
    number of strings in the entry (keys included), when it is certainly well formed; else
    return -1 ("cannot tell"), appending nothing."""
    shape = defaults.get("shape")
    if shape is None:
        if "type" in entry:
            shape = formats.detect_entry(entry)
        else:
            # detect_entry's answer for an entry without a "type", without its every test
            # (one it calls Gemini, for upper-case types in "parameters", fails the schema
            # walk here); the commonest entries go straight to _fast_plain.
            keys = entry.keys()
            for plain_keys, params_key in _UNTYPED_PLAIN:
                if keys <= plain_keys:
                    return _fast_plain(entry, params_key, defaults, namespace, source, entry, tools)
            if "inputSchema" in entry:
                shape = "mcp"
            elif "input_schema" in entry:
                shape = "anthropic"
            elif keys <= _FUNCTION_KEYS:
                shape = "function"
            else:
                shape = formats.detect_entry(entry)
    plain = _PLAIN.get(shape)
    if plain is not None:
        body: Any = entry
        if shape == "openai":  # {"type": "function", "function": {...}} and nothing else
            body = entry["function"] if len(entry) == 2 else None
        if type(body) is dict and body.keys() <= plain[0]:
            return _fast_plain(body, plain[1], defaults, namespace, source, entry, tools)
    spec = _FAST_SPECS.get(shape)
    if spec is None:  # gemini (whose schemas are converted) and built-in tools
        return -1
    found = _FOUND.copy()
    strings = _fast_fields(entry, spec, found)
    name = found["name"]
    if strings < 0 or name is None:
        return -1
    tags = found["tags"]
    file_tags = defaults.get("tags", ())
    if tags or file_tags:
        tags = tuple(dict.fromkeys((*file_tags, *tags) if tags else file_tags))
    parameters = found["parameters"]
    aliases = found["aliases"]
    tool = new_tool(
        name,
        found["description"],
        {"type": "object", "properties": {}} if parameters is None else parameters,
        found["namespace"] or defaults.get("namespace") or namespace,
        tags or (),
        found["search_hint"],
        found["defer"],
        found["enabled"],
        found["annotations"] or {},
        () if aliases is None else tuple(aliases),
        found["title"],
        found["output"],
        source,
        entry,
    )
    tools.append(tool)
    return strings


def _fast_plain(
    body: dict[str, Any],
    params_key: str,
    defaults: Mapping[str, Any],
    namespace: str,
    source: Source,
    entry: dict[str, Any],
    tools: list[Tool],
) -> int:
    """``_fast_tool`` for a ``body`` (the entry, or an OpenAI tool's ``function``) with only
    the keys ``_PLAIN`` lists: no metadata, title, annotations or output schema."""
    name = body.get("name")
    description = body.get("description", "")
    parameters = body.get(params_key)
    strict = body.get("strict")
    if (
        type(name) is not str
        or not _plain_name(name)
        or type(description) is not str
        or len(description) > _MAX_DESCRIPTION
        or not (strict is None or type(strict) is bool)
    ):
        return -1
    if type(parameters) is dict:
        count = _fast_schema(parameters)
        if count < 0:
            return -1
    elif parameters is None and params_key not in body and params_key == "parameters":
        parameters, count = {"type": "object", "properties": {}}, 0  # none, as formats says
    else:
        return -1
    # The keys, then the string values: the name, the description, a "type" ("function").
    strings = len(body) + count + 1 + ("description" in body) + ("type" in body)
    if body is not entry:  # an OpenAI tool: "type", "function" and "function"
        strings += 3
    file_tags = defaults.get("tags", ())
    tool = new_tool(
        name,
        description,
        parameters,
        defaults.get("namespace") or namespace,
        tuple(dict.fromkeys(file_tags)) if file_tags else (),
        "",
        False,
        True,
        {},
        (),
        None,
        None,
        source,
        entry,
    )
    tools.append(tool)
    return strings


def _fast_fields(obj: dict[str, Any], spec: Mapping[str, str], found: dict[str, Any]) -> int:
    """Check and read the keys of ``obj`` as ``spec`` says, into ``found`` (by action).

    Returns the number of strings in ``obj`` (keys included), or -1: "cannot tell".
    """
    strings = len(obj)
    for key, value in obj.items():
        kind = type(value)
        if kind is str:
            strings += 1
        action = spec.get(key)
        if action is None:
            if kind is dict or kind is list:
                count = _value_strings(value, 0)
                if count < 0:
                    return -1
                strings += count
            continue
        if action == "description":
            if kind is not str or len(value) > _MAX_DESCRIPTION:
                return -1
        elif action == "name":
            if kind is not str or not _plain_name(value):
                return -1
        elif action == "parameters" or action == "output":
            count = _fast_schema(value) if kind is dict else -1
            if count < 0:
                return -1
            strings += count
        else:
            count = _fast_other(action, value, found)
            if count < 0:
                return -1
            strings += count
            if action == "function":
                continue  # its keys were read into `found`
        found[action] = value
    return strings


def _fast_other(action: str, value: Any, found: dict[str, Any]) -> int:
    """``_fast_fields`` for the less common keys: the strings inside ``value``, or -1."""
    kind = type(value)
    if action == "title" or action == "search_hint":
        return 0 if kind is str else -1
    if action == "function-type":
        return 0 if kind is str and value == "function" else -1
    if action == "function":
        return _fast_fields(value, _FAST_OPENAI_FUNCTION, found) if kind is dict else -1
    if action == "annotations":
        return _fast_annotations(value) if kind is dict else -1
    if action == "tags":
        ok = kind is list and all(
            type(tag) is str and 0 < len(tag) <= formats.MAX_TAG_LENGTH for tag in value
        )
        return len(value) if ok else -1
    if action == "namespace":
        return 0 if kind is str and _plain_namespace(value) else -1
    if action == "aliases":
        ok = kind is list and all(type(alias) is str and _plain_name(alias) for alias in value)
        return len(value) if ok else -1
    if action == "defer" or action == "enabled" or action == "flag":
        return 0 if kind is bool else -1
    if action == "strict":
        return 0 if kind is bool or value is None else -1
    if action == "custom":
        return 0 if kind is str and value == "custom" else -1
    if action == "object-or-null":
        return _value_strings(value, 0) if kind is dict else 0 if value is None else -1
    raise AssertionError(action)  # pragma: no cover - every action of _FAST_SPECS is above


def _plain_name(name: str) -> bool:
    """A name formats accepts and the schemas' 1 to 256 characters; printable, so without
    the control and format characters formats refuses (other unprintable ones: cannot tell)."""
    return len(name) <= _MAX_NAME and name.isprintable() and name.strip() != ""


def _plain_namespace(name: str) -> bool:
    # Printable characters include no whitespace but " ": formats' and the schema's rules.
    return (
        0 < len(name) <= formats.MAX_NAMESPACE_LENGTH
        and name.isprintable()
        and " " not in name
        and "/" not in name
        and ":" not in name
    )


def _fast_annotations(annotations: dict[str, Any]) -> int:
    """``_is_annotations`` (for every shape: stricter than some need), nesting as formats
    allows; the strings inside, or -1."""
    strings = len(annotations)
    for key, value in annotations.items():
        kind = type(value)
        if key in _HINTS:
            if kind is not bool:
                return -1
        elif kind is str:
            strings += 1
        elif key == "title":
            return -1
        elif kind is dict or kind is list:
            count = _value_strings(value, 1)
            if count < 0:
                return -1
            strings += count
    return strings
