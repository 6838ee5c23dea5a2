"""What leaves serve-mcp in answer to a request: a result every transport can encode, and
errors that name no secret. A middleware, outermost in the SDK server's chain.

* A result holding a lone surrogate (a catalog file whose name is not UTF-8 names a hit's
  source) cannot be encoded as UTF-8 JSON: the transport's writer failed on it and serve-mcp
  ended, for every client. Such a string is written as `output.text.render_path` writes it
  (``caf\\xe9.json``); anything else that makes the result unusable becomes a JSON-RPC
  error for that request alone.
* A JSON-RPC error's message (the SDK's, a backend's passed on, an exception's text) goes
  through `toolfind.backends.redact`; its data loses every secret the servers files declare
  but keeps its shape (a backend's -32042 names the URL its user must open, query and all).
  An unexpected exception is logged (the log filter redacts its traceback) and answered as an
  internal error with its redacted first line.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult

from toolfind.backends.redact import redact, redact_values
from toolfind.output.text import encodable, render_text

__all__ = ["Guard", "encodable_result"]

logger = logging.getLogger("toolfind.serve")

#: An unexpected failure's message is cut to this many characters.
_MESSAGE_LIMIT = 500


class Guard:
    """The server middleware: redacted errors, encodable results (see the module)."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        from mcp.shared.exceptions import MCPError
        from mcp_types import INTERNAL_ERROR
        from pydantic import BaseModel, ValidationError

        try:
            result = await call_next(ctx)
        except MCPError as exc:  # the SDK's, or a backend's passed on: its data too
            message, data = redact(render_text(exc.message)), _redacted(exc.data)
            if message == exc.message and data == exc.data:
                raise
            raise MCPError(exc.code, message, data) from None
        except ValidationError:
            raise  # the SDK answers INVALID_PARAMS, without pydantic's text
        except Exception as exc:
            logger.exception("answering %s failed", ctx.method)
            text = redact(render_text(f"{type(exc).__name__}: {exc}".splitlines()[0]))
            message = f"toolfind could not answer {ctx.method}: {text}"[:_MESSAGE_LIMIT]
            raise MCPError(INTERNAL_ERROR, message) from None
        try:
            if isinstance(result, BaseModel):
                result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            fixed: HandlerResult = encodable_result(result)
            return fixed
        except Exception as exc:  # never a dead transport: this request gets an error
            logger.exception("the answer to %s cannot be sent", ctx.method)
            text = redact(render_text(f"{type(exc).__name__}: {exc}".splitlines()[0]))
            message = f"toolfind could not encode its answer to {ctx.method}: {text}"
            raise MCPError(INTERNAL_ERROR, message[:_MESSAGE_LIMIT]) from None


def _redacted(value: Any) -> Any:
    """A JSON value with each string's secrets masked (`redact_values`; encodable)."""
    if isinstance(value, str):
        return redact_values(render_text(value))
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {_redacted(key): _redacted(item) for key, item in value.items()}
    return value


def encodable_result(value: Any) -> Any:
    """``value`` (a result as JSON values) with every string, keys included, `encodable`:
    fixed in place (the SDK hands each request its own copy), the value returned. Nearly
    every result is encodable already: one pass of the C encoder says so."""
    if isinstance(value, str):
        return encodable(value)
    try:
        json.dumps(value, ensure_ascii=False, check_circular=False).encode("utf-8")
    except UnicodeEncodeError:
        pass  # a lone surrogate somewhere: fixed below
    except (TypeError, ValueError, RecursionError):
        pass  # not plain JSON values: each string is looked at below
    else:
        return value
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in [k for k in node if isinstance(k, str) and encodable(k) is not k]:
                node[encodable(key)] = node.pop(key)
            items: Any = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        for key, item in list(items):
            if isinstance(item, str):
                if not item.isascii():
                    node[key] = encodable(item)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value
