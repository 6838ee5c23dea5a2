"""A call's arguments checked against the tool's input schema before it is forwarded.

A model that sends ``{"timezone": 5}`` learns at once, from toolfind, which argument is wrong
and why, instead of getting whatever the backend makes of it. jsonschema is imported on the
first check; each schema's validator is built once. A schema jsonschema cannot use (invalid,
or a ``$ref`` it cannot resolve) is not checked: the backend decides, as without toolfind.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from toolfind.models import Tool
from toolfind.output.wire import clean_text

logger = logging.getLogger("toolfind.serve")

#: Validators kept (by schema object); more are dropped all at once (the index rebuilt).
_MAX_CACHED = 4096
_MESSAGE_LIMIT = 300


class ArgumentChecker:
    """Finds the first way a call's arguments break its tool's input schema."""

    def __init__(self) -> None:
        # id(schema) -> (schema, validator or None); the schema is kept so its id stays its.
        self._validators: dict[int, tuple[Mapping[str, Any], Any]] = {}

    def problem(self, tool: Tool, arguments: Mapping[str, Any]) -> str | None:
        """``<JSON path>: <what is wrong>`` (``$.timezone: 5 is not of type 'string'``), or
        None when the arguments are valid or the schema cannot be checked."""
        from jsonschema.exceptions import best_match

        validator = self._validator(tool)
        if validator is None:
            return None
        try:
            error = best_match(validator.iter_errors(dict(arguments)))
        except Exception as exc:  # an unresolvable $ref and the like: the backend decides
            logger.debug("input schema of %r not checked: %s", tool.name, exc)
            return None
        if error is None:
            return None
        return f"{error.json_path}: {clean_text(error.message, _MESSAGE_LIMIT)}"

    def _validator(self, tool: Tool) -> Any:
        schema = tool.parameters
        cached = self._validators.get(id(schema))
        if cached is not None and cached[0] is schema:
            return cached[1]
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import Draft202012Validator, validator_for

        validator: Any = None
        try:
            cls: Any = validator_for(schema, default=Draft202012Validator)
            cls.check_schema(schema)
            validator = cls(schema)
        except (SchemaError, TypeError, ValueError, LookupError) as exc:
            logger.info("input schema of %r is not checked: %s", tool.name, exc)
        if len(self._validators) >= _MAX_CACHED:
            self._validators.clear()
        self._validators[id(schema)] = (schema, validator)
        return validator
