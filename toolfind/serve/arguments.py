"""A call's arguments checked against the tool's input schema before it is forwarded.

A model that sends ``{"timezone": 5}`` learns at once, from toolfind, which argument is wrong
and why, instead of getting whatever the backend makes of it. jsonschema is imported on the
first check; each schema's validator is built once. A schema jsonschema cannot use (invalid,
or a ``$ref`` it cannot resolve) is not checked: the backend decides, as without toolfind.

Schemas and arguments come from people toolfind does not trust (a backend's ``tools/list``, a
model's call), so a check is bounded and never holds the event loop:

* No backtracking regular expression ever runs. jsonschema evaluates ``pattern``,
  ``patternProperties`` (and ``additionalProperties`` beside them) with Python's ``re``, which
  backtracks: ``^(\\w+\\s?)*$`` against 26 characters took 7 s, doubling per character, and a
  thread running ``re`` cannot be stopped. Here those keywords use pydantic-core's Rust regex
  engine (linear in the text, with a limit on the compiled size): the engine the SDK's own
  servers validate with. A pattern it cannot run (look-around, back-references) leaves the
  call *undecided*, and an undecided call is forwarded unchecked, for the backend to decide:
  guessing "matches" or "does not match" instead could make a valid call an error under
  ``not``, ``oneOf`` or ``if``. A schema whose ``unevaluatedProperties`` would need its
  ``patternProperties`` (jsonschema looks those up with ``re``) is not checked at all.
* ``format`` is never asserted: not in calls, and not when a schema is checked against its
  metaschema (the format checkers run ``re.compile`` and other parsers on untrusted text).
* ``uniqueItems`` compares hashable canonical forms, in linear time (jsonschema compares every
  pair of objects).
* Every keyword looks at a deadline (`CHECK_SECONDS`; a schema over `MAX_SCHEMA_NODES` nodes
  is not walked at all): a check that would take longer (``anyOf`` nested over a deep
  argument, the metaschema check of a huge schema) stops there, undecided.
* `ArgumentChecker.check` runs all of it, the validator's building included, in a worker
  thread (at most `THREADS` at once), and stops waiting at the deadline: the event loop keeps
  answering pings and other clients during any check.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import Any

from toolfind.models import Tool
from toolfind.output.text import clean_text

logger = logging.getLogger("toolfind.serve")

__all__ = ["CHECK_SECONDS", "ArgumentChecker", "Undecided", "search"]

#: How long one check may take, its tool's validator built included; then it is undecided.
CHECK_SECONDS = 1.0
#: A schema with more nodes (objects, arrays and values) is not checked: not even walked.
MAX_SCHEMA_NODES = 50_000
#: Worker threads checking arguments at once; other checks wait for one (within their time).
THREADS = 4
#: Validators kept (by schema object); more are dropped all at once (the index rebuilt).
_MAX_CACHED = 4096
#: Compiled patterns kept; more are dropped all at once.
_MAX_PATTERNS = 4096
_MESSAGE_LIMIT = 300
#: Undecided reasons logged per tool (a flood of different reasons is not logged).
_MAX_LOGGED = 4096


class Undecided(Exception):
    """The arguments cannot be checked within bounds; the backend decides."""


class _OutOfTime(Undecided):
    """The deadline passed (the same schema may be checked in time on a quieter machine)."""


_thread = threading.local()


def _tick() -> None:
    """Raise `_OutOfTime` once this thread's check is past its deadline."""
    deadline = getattr(_thread, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise _OutOfTime(f"checking took more than {CHECK_SECONDS:g} s")


# -- regular expressions, in linear time -----------------------------------------------------

_patterns: dict[str, Any] = {}


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's rule: unanchored),
    in time linear in ``text``. Raises `Undecided` for a pattern the linear engine cannot
    run (look-around, back-references, a compiled size over its limit)."""
    from pydantic_core import ValidationError

    compiled = _patterns.get(pattern)
    if compiled is None:
        compiled = _compile(pattern)
        if len(_patterns) >= _MAX_PATTERNS:
            _patterns.clear()
        _patterns[pattern] = compiled
    if isinstance(compiled, Undecided):
        raise compiled
    try:
        compiled.validate_python(text)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "string_pattern_mismatch":
            return False
        raise Undecided(f"the text cannot be matched: {exc.errors()[0]['msg']}") from None
    return True


def _compile(pattern: str) -> Any:
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        return SchemaValidator(
            core_schema.str_schema(pattern=pattern, regex_engine="rust-regex", strict=True)
        )
    except (SchemaError, TypeError, ValueError):
        shown = clean_text(pattern, 60)
        return Undecided(f"the pattern {shown!r} needs a backtracking regex engine")


# -- the keywords that differ from jsonschema's -----------------------------------------------


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            _tick()
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = []
    for key in instance:
        _tick()
        if key not in properties and not any(search(p, key) for p in patterns):
            extras.append(key)
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        listed = ", ".join(repr(each) for each in sorted(extras, key=str))
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{listed} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({listed} {verb} unexpected)"
            )


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            shown = clean_text(repr(instance), _MESSAGE_LIMIT // 2)  # the verdict stays in
            yield ValidationError(f"{shown} has non-unique elements")
            return
        seen.add(key)


def _canonical(value: Any) -> Any:
    """A hashable form equal for values JSON Schema calls equal (``1`` and ``1.0``, objects
    whatever their key order) and different otherwise (``true`` is not ``1``)."""
    if value is True or value is False:
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list | tuple):
        _tick()
        return ("a", tuple(map(_canonical, value)))
    if isinstance(value, dict):
        _tick()
        return ("o", frozenset((key, _canonical(item)) for key, item in value.items()))
    return ("?", id(value))


_OVERRIDES: dict[str, Callable[..., Iterator[Any]]] = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "uniqueItems": _unique_items,
}


def _timed(keyword: Callable[..., Any]) -> Callable[..., Any]:
    def timed(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _tick()
        return keyword(validator, value, instance, schema)

    return timed


_classes: dict[Any, Any] = {}


def _bounded(cls: Any) -> Any:
    """``cls`` (a jsonschema validator class) with the keywords above and a deadline."""
    found = _classes.get(cls)
    if found is None:
        from jsonschema import validators

        extend: Any = validators.extend  # untyped in types-jsonschema
        keywords = {**cls.VALIDATORS}
        keywords.update((k, v) for k, v in _OVERRIDES.items() if k in keywords)
        found = _classes[cls] = extend(cls, {k: _timed(v) for k, v in keywords.items()})
    return found


def _scan(schema: Any) -> None:
    """Raise `Undecided` for a schema too large to walk, or whose ``unevaluatedProperties``
    would look its ``patternProperties`` up with ``re``."""
    stack: list[Any] = [schema]
    nodes = 0
    pattern_properties = unevaluated = False
    while stack:
        node = stack.pop()
        nodes += 1
        if nodes > MAX_SCHEMA_NODES:
            raise Undecided(f"its input schema has more than {MAX_SCHEMA_NODES} nodes")
        if isinstance(node, dict):
            pattern_properties = pattern_properties or "patternProperties" in node
            unevaluated = unevaluated or "unevaluatedProperties" in node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if pattern_properties and unevaluated:
        raise Undecided("its input schema has unevaluatedProperties beside patternProperties")


def _build(schema: Mapping[str, Any]) -> Any:
    """The bounded validator of ``schema``. Raises `Undecided`, or a jsonschema error (an
    invalid schema: the metaschema's first complaint)."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    _scan(schema)
    base: Any = validator_for(schema, default=Draft202012Validator)
    meta = _bounded(validator_for(base.META_SCHEMA, default=base))(base.META_SCHEMA)
    for error in meta.iter_errors(schema):  # as check_schema, without the format checkers
        raise SchemaError.create_from(error)
    return _bounded(base)(schema)


class ArgumentChecker:
    """Finds the first way a call's arguments break its tool's input schema."""

    def __init__(self, seconds: float = CHECK_SECONDS) -> None:
        self.seconds = seconds
        # id(schema) -> (schema, validator or None); the schema is kept so its id stays its.
        self._validators: dict[int, tuple[Mapping[str, Any], Any]] = {}
        self._limiter: Any = None
        self._logged: set[tuple[str, str]] = set()

    async def check(self, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        """`problem`, in a worker thread, within ``seconds``: None (forward the call) when the
        arguments are valid, the schema cannot be checked, or the check is undecided."""
        import anyio
        import anyio.to_thread

        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(THREADS)
        deadline = time.monotonic() + self.seconds
        work = partial(self._problem_or_reason, tool, arguments, deadline)
        # A keyword that does not return (one huge multipleOf) keeps its thread until it
        # does; the call does not wait for it.
        with anyio.move_on_after(self.seconds + 0.5):
            problem, reason = await anyio.to_thread.run_sync(
                work, abandon_on_cancel=True, limiter=self._limiter
            )
            if reason is not None:
                self._log_once(tool.name, reason)
            return problem
        self._log_once(tool.name, f"checking took more than {self.seconds:g} s")
        return None

    def problem(self, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        """``<JSON path>: <what is wrong>`` (``$.timezone: 5 is not of type 'string'``), or
        None when the arguments are valid or cannot be checked (no deadline: see `check`)."""
        return self._problem_or_reason(tool, arguments, None)[0]

    def _problem_or_reason(
        self, tool: Tool, arguments: Mapping[str, Any], deadline: float | None
    ) -> tuple[str | None, str | None]:
        """(the problem, None) or (None, why the arguments were not checked)."""
        from jsonschema.exceptions import best_match

        _thread.deadline = deadline
        try:
            validator = self._validator(tool)
            if validator is None:
                return None, None
            error = best_match(validator.iter_errors(dict(arguments)))
        except Undecided as exc:
            return None, str(exc)
        except Exception as exc:  # an unresolvable $ref, a RecursionError: the backend decides
            return None, f"{type(exc).__name__}: {clean_text(str(exc), _MESSAGE_LIMIT)}"
        finally:
            _thread.deadline = None
        if error is None:
            return None, None
        return f"{error.json_path}: {clean_text(error.message, _MESSAGE_LIMIT)}", None

    def _validator(self, tool: Tool) -> Any:
        """The tool's bounded validator; None when its schema cannot be checked (cached)."""
        schema = tool.parameters
        cached = self._validators.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        from jsonschema.exceptions import SchemaError

        validator: Any = None
        try:
            validator = _build(schema)
        except _OutOfTime:
            raise  # not cached: it may be built in time later
        except (Undecided, SchemaError, TypeError, ValueError, LookupError) as exc:
            reason = exc.message if isinstance(exc, SchemaError) else str(exc)
            logger.info("input schema of %r is not checked: %s", tool.name, clean_text(reason, 200))
        if len(self._validators) >= _MAX_CACHED:
            self._validators.clear()
        self._validators[id(schema)] = (schema, validator)
        return validator

    def _log_once(self, tool: str, reason: str) -> None:
        if (tool, reason) in self._logged or len(self._logged) >= _MAX_LOGGED:
            return
        self._logged.add((tool, reason))
        logger.info("arguments of %r forwarded unchecked: %s", tool, reason)
