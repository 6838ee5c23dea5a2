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
from toolfind.shapes import schema_from_gemini

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


Problem = tuple[tuple[PathPart, ...], str]


def _errors(validator: Any, instance: Any) -> list[Problem]:
    """Every way ``instance`` breaks the validator's schema (jsonschema's ``iter_errors``),
    each worded as ``best_match`` words it (the likeliest branch of an ``anyOf``/``oneOf``)."""
    from jsonschema.exceptions import best_match

    try:
        found = [best_match([error]) for error in validator.iter_errors(instance)]
    except RecursionError:
        return [((), "nested too deeply to check")]
    problems: list[Problem] = []
    seen: set[Problem] = set()
    for error in found:
        if error is None:
            continue
        message = error.message
        if len(message) > 200:
            message = message.replace(repr(error.instance), short_repr(error.instance))
        if len(message) > 300:
            message = message[:299] + "…"
        problem = (tuple(error.absolute_path), printable(message))
        if problem not in seen:
            seen.add(problem)
            problems.append(problem)
    return problems


def _check_schemas(entry: Mapping[str, Any], shape: str, tool: Tool, source: Source) -> None:
    """Check the entry against its shape's schema and its JSON Schemas against the meta-schema.

    Run after ``tool_from_entry`` succeeded (``_reduced`` relies on its checks). Raises
    ``EntryError`` naming every problem (the first, then ``more``). jsonschema runs only for
    what the rules (``rules.fits_shape``, ``metaschema.schema_strings``) cannot vouch for.
    """
    problems: list[Problem] = []
    if not fits_shape(entry, shape):
        validator = _shape_validator(shape)
        if not _memo_valid(validator, shape, _reduced(entry, SHAPES[shape][0])):
            problems += _errors(validator, entry)
    for at, schema in _schemas(entry, shape, tool.parameters, tool.output_schema):
        if type(schema) is dict and schema_strings(schema) >= 0:
            continue
        problems += [((*at, *path), message) for path, message in _meta_problems(schema)]
    if problems:
        raise _entry_error(entry, problems, source)


def _schemas(
    entry: Mapping[str, Any],
    shape: str,
    parameters: Mapping[str, Any] | None,
    output_schema: Mapping[str, Any] | None,
) -> list[tuple[tuple[PathPart, ...], Mapping[str, Any]]]:
    """The entry's JSON Schemas the meta-schema checks, each with its path in the entry."""
    body_at: tuple[PathPart, ...] = ("function",) if shape == "openai" else ()
    body = entry["function"] if shape == "openai" else entry
    checks = []
    if parameters is not None:
        checks.append(((*body_at, input_key(shape, body)), parameters))
    output_at = output_key(shape, body)
    if output_schema is not None and output_at in SHAPES[shape][0]:  # where the shape has one
        checks.append(((output_at,), output_schema))
    return checks


def other_problems(entry: Any, shape: str | None, first: EntryError) -> EntryError:
    """``first`` (the rules' first problem with ``entry``, of ``shape``) with the entry's
    other problems that jsonschema finds as ``more``: none at ``first``'s own path (its
    problem, worded by jsonschema) or inside it (a value already wrong)."""
    if shape is None or shape not in SHAPES or not isinstance(entry, Mapping):
        return first
    at = first.parts
    body = entry.get("function") if shape == "openai" else entry
    if not isinstance(body, Mapping):
        return first

    def elsewhere(path: tuple[PathPart, ...]) -> bool:
        return path != at and not (at and path[: len(at)] == at)

    problems = [p for p in _errors(_shape_validator(shape), entry) if elsewhere(p[0])]
    schemas: dict[str, Mapping[str, Any]] = {}
    keys = input_key(shape, body), output_key(shape, body)
    for key in keys:
        schema = body.get(key)
        if type(schema) is dict:
            schemas[key] = schema_from_gemini(schema) if shape == "gemini" else schema
    for where, schema in _schemas(entry, shape, schemas.get(keys[0]), schemas.get(keys[1])):
        if not elsewhere(where):
            continue
        problems += [
            ((*where, *path), message)
            for path, message in _meta_problems(schema)
            if elsewhere((*where, *path))
        ]
    if not problems:
        return first
    return _entry_error(entry, [(first.parts, first.message), *problems], first.source)


#: At most this many lines for an entry's problems, the last saying how many more there are:
#: an entry with thousands of bad properties is not a page of output or a minute of sorting.
MAX_PROBLEMS: Final = 100


def _entry_error(entry: Any, problems: list[Problem], source: Source) -> EntryError:
    """One ``EntryError`` for ``problems`` in the order of their places in ``entry``: the
    first, with the others as ``more`` (at most :data:`MAX_PROBLEMS` in all)."""
    places: dict[int, dict[Any, int]] = {}
    ordered = sorted(problems, key=lambda problem: _order(entry, problem[0], places))
    if len(ordered) > MAX_PROBLEMS:
        extra = len(ordered) - MAX_PROBLEMS + 1
        ordered[MAX_PROBLEMS - 1 :] = [((), f"and {extra:,} more problems of this entry")]
    (parts, message), *rest = ordered
    return EntryError(message, source, parts, [EntryError(m, source, p) for p, m in rest])


def _order(
    value: Any, path: tuple[PathPart, ...], places: dict[int, dict[Any, int]]
) -> tuple[int, ...]:
    """Where ``path`` is in ``value``, as positions: the order of the document's keys
    (``places`` keeps each object's key positions, computed once)."""
    out = []
    for part in path:
        if isinstance(value, Mapping) and part in value:
            if id(value) not in places:
                places[id(value)] = {key: i for i, key in enumerate(value)}
            out.append(places[id(value)][part])
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            out.append(part)
            value = value[part]
        else:
            break
    return tuple(out)


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


def _meta_problems(schema: Mapping[str, Any]) -> list[Problem]:
    """Every way ``schema`` breaks its meta-schema; [] when it is a valid JSON Schema."""
    validator = _meta_validator(schema)
    kind = type(validator).__name__
    stack = [schema]
    while stack:
        shallow, children = _shallow(stack.pop())
        if not _memo_valid(validator, kind, shallow):
            return _errors(validator, schema) or [((), "is not a valid JSON Schema")]
        stack.extend(children)
    return []
