"""Check entries and their JSON Schemas with jsonschema: the exact verdicts and messages.

Each entry is checked against the packaged JSON Schema of its shape (``toolfind/schemas/``),
and each parameter and output schema against the JSON Schema meta-schema its ``$schema``
names (Draft 2020-12 when it names none); no ``$ref`` is ever fetched. jsonschema costs a lot
to import (see docs/ARCHITECTURE.md): it is imported only for what the rules cannot vouch for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from toolfind.catalog.metaschema import (
    _BOUNDS,
    _COUNTS,
    _SUBSCHEMA_LISTS,
    _SUBSCHEMA_MAPS,
    _SUBSCHEMA_ONE,
    schema_strings,
)
from toolfind.catalog.paths import EntryError, PathPart, printable, short_repr
from toolfind.catalog.rules import FUNCTION, SHAPES, fits_shape, input_key, output_key
from toolfind.models import Source, Tool

_NATIVE_TOOL_REF: Final = "urn:toolfind:schema:native-catalog#/$defs/tool"
_FREE_TEXT: Final = frozenset({"description", "title", "$comment", "pattern", "$ref", "format"})

_validators: dict[str, Any] = {}


def _shape_validator(shape: str) -> Any:
    """The compiled validator of an entry shape, from the packaged schemas (built once)."""
    if shape in _validators:
        return _validators[shape]
    from importlib.resources import files

    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    schemas = [
        json.loads(file.read_text(encoding="utf-8"))
        for file in (files("toolfind") / "schemas").iterdir()
        if file.name.endswith(".schema.json")
    ]
    # No `retrieve`: an unknown reference fails instead of being fetched.
    registry: Registry[Any] = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in schemas
    )
    for name in SHAPES:
        ref = _NATIVE_TOOL_REF if name == "native" else f"urn:toolfind:schema:{name}"
        _validators[name] = Draft202012Validator({"$ref": ref}, registry=registry)
    return _validators[shape]


def _meta_validator(schema: Mapping[str, Any]) -> Any:
    """A validator for ``schema`` itself: the meta-schema its ``$schema`` names (2020-12 default)."""
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    cls: Any = Draft202012Validator
    if isinstance(schema.get("$schema"), str):
        try:
            cls = validator_for(schema, default=Draft202012Validator)
        except (ValueError, TypeError, AttributeError):  # not a URI jsonschema can parse
            cls = Draft202012Validator
    key = f"meta:{cls.__name__}"
    if key not in _validators:
        # The bundled meta-schemas only: validating a schema never fetches anything.
        _validators[key] = cls(cls.META_SCHEMA, registry=REGISTRY)
    return _validators[key]


def _first_error(validator: Any, instance: Any) -> tuple[tuple[PathPart, ...], str] | None:
    from jsonschema.exceptions import best_match

    try:
        error = best_match(validator.iter_errors(instance))
    except RecursionError:
        return (), "nested too deeply to check"
    if error is None:
        return None
    message = error.message
    if len(message) > 200:
        message = message.replace(repr(error.instance), short_repr(error.instance))
    if len(message) > 300:
        message = message[:299] + "…"
    return tuple(error.absolute_path), printable(message)


def _check_schemas(entry: Mapping[str, Any], shape: str, tool: Tool, source: Source) -> None:
    """Check the entry against its shape's schema and its JSON Schemas against the meta-schema.

    Run after ``tool_from_entry`` succeeded (``_reduced`` relies on its checks). Raises
    ``EntryError`` for the first problem. jsonschema runs only for what the rules
    (``rules.fits_shape``, ``metaschema.schema_strings``) cannot vouch for.
    """
    rules = SHAPES[shape][0]
    if not fits_shape(entry, shape):
        validator = _shape_validator(shape)
        if not _memo_valid(validator, shape, _reduced(entry, rules)):
            problem = _first_error(validator, entry)
            if problem is not None:
                raise EntryError(problem[1], source, problem[0])
    body_at: tuple[PathPart, ...] = ("function",) if shape == "openai" else ()
    body = entry["function"] if shape == "openai" else entry
    checks = [((*body_at, input_key(shape, body)), tool.parameters)]
    output_at = output_key(shape, body)
    if tool.output_schema is not None and output_at in rules:  # where the shape's schema has one
        checks.append(((output_at,), tool.output_schema))
    for at, schema in checks:
        if type(schema) is dict and schema_strings(schema) >= 0:
            continue
        problem = _meta_problem(schema)
        if problem is not None:
            raise EntryError(problem[1], source, (*at, *problem[0]))


# jsonschema is slow per entry and schema: validity is decided on reduced copies (what the
# schemas constrain, per-tool values as placeholders), memoised, as catalogs repeat the same
# shapes; only an invalid entry is validated in full, for its message.
_memo: dict[tuple[str, str], bool] = {}
_MEMO_LIMIT: Final = 100_000


def _memo_valid(validator: Any, kind: str, instance: Any) -> bool:
    key = (kind, json.dumps(instance, sort_keys=True))
    valid = _memo.get(key)
    if valid is None:
        try:
            valid = bool(validator.is_valid(instance))
        except RecursionError:
            valid = False
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[key] = valid
    return valid


def _reduced(obj: Mapping[str, Any], rules: Mapping[str, str]) -> dict[str, Any]:
    """What a shape schema sees of an entry (``rules``: its keys' kinds, ``rules.SHAPES``),
    with per-tool values replaced by placeholders it accepts or refuses as the originals."""
    return {key: _placeholder(kind, obj[key]) for key, kind in rules.items() if key in obj}


def _placeholder(kind: str, value: Any) -> Any:
    if kind == "schema" and isinstance(value, Mapping):
        return {}  # only "an object" here; the meta-schema check covers the content
    if kind in ("text", "description", "description?") and isinstance(value, str):
        return ""
    if kind in ("name", "namespace") and isinstance(value, str):
        return "n"  # formats already enforced the name/namespace rules
    if kind in ("tags", "names") and isinstance(value, list):
        return _placeholders(value, str, "t")
    if kind in ("flag", "flag?") and isinstance(value, bool):
        return False
    if kind == "annotations" and isinstance(value, Mapping):
        return {k: False if isinstance(v, bool) else v for k, v in value.items()}
    if kind == "function" and isinstance(value, Mapping):
        return _reduced(value, FUNCTION[0])
    return value


def _placeholders(values: list[Any], kind: type, placeholder: Any) -> list[Any]:
    """``[placeholder]`` for a non-empty list of distinct ``kind`` values (the schemas ask no
    more of such lists), else ``values``."""
    if not values or not all(type(v) is kind for v in values):
        return values
    if kind is str and len(set(values)) != len(values):
        return values
    return [placeholder]


def _shallow(node: Mapping[str, Any]) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """A schema node as the meta-schema sees it, and its subschemas (checked on their own):
    subschemas become ``{}``, and per-tool values placeholders that the meta-schema accepts or
    refuses exactly as it would the originals."""
    out: dict[str, Any] = {}
    children: list[Mapping[str, Any]] = []

    def sub(value: Any) -> Any:
        if isinstance(value, Mapping):
            children.append(value)
            return {}
        return value

    for key, value in node.items():
        if key in _FREE_TEXT and isinstance(value, str):
            value = ""
        elif key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            subs = [sub(v) for v in value.values()]
            value = {} if all(s == {} for s in subs) else {str(i): s for i, s in enumerate(subs)}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            value = _placeholders([sub(v) for v in value], dict, {})
        elif key in _SUBSCHEMA_ONE and isinstance(value, Mapping):
            value = sub(value)
        elif key in ("default", "const"):
            value = None  # any JSON value is allowed
        elif key == "examples" and isinstance(value, list):
            value = []
        elif key in ("required", "enum") and isinstance(value, list):
            value = _placeholders(value, str, "")
        elif key in _COUNTS and type(value) is int and value >= 0:
            value = 0
        elif key in _BOUNDS and type(value) in (int, float):
            value = 0
        out[key] = value
    return out, children


def _meta_problem(schema: Mapping[str, Any]) -> tuple[tuple[PathPart, ...], str] | None:
    """The first way ``schema`` breaks its meta-schema, or None."""
    validator = _meta_validator(schema)
    kind = type(validator).__name__
    stack = [schema]
    while stack:
        shallow, children = _shallow(stack.pop())
        if not _memo_valid(validator, kind, shallow):
            return _first_error(validator, schema) or ((), "is not a valid JSON Schema")
        stack.extend(children)
    return None
