"""The words for every way a request to a backend fails, and what each failure calls for.

One place builds the messages a caller (a model, through a tool error) and the logs read when
a backend times out, crashes, is removed or changed mid-call, answers too much or refuses: the
pool (`pool.BackendPool`) asks `request_failure` and does what the answer says (ping the
backend, or record the connection as lost and restart it). Secrets are taken out of every
backend-provided text here (`link.Backend.redact`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfind.backends.link import oversized
from toolfind.errors import BackendError
from toolfind.output.render import human_size

if TYPE_CHECKING:
    from toolfind.backends.link import Attempt, Backend

__all__ = ["Failure", "request_failure", "too_large"]


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed request: the error for the caller, and what the pool must do about it."""

    error: Exception
    #: Ping the backend: no answer means it is stopped and restarted.
    probe: bool = False
    #: The connection is gone: record this reason for its end and restart the backend.
    lost: str | None = None


def request_failure(
    backend: Backend,
    attempt: Attempt,
    method: str,
    tool: str | None,
    exc: Any,
    call_timeout: float,
    max_result_bytes: int,
) -> Failure:
    """Why ``method`` (a ``tools/call`` of backend tool ``tool``, else another request)
    failed on ``attempt``: ``exc`` is the SDK's MCPError, None when the connection was
    already gone. The error is a BackendError (toolfind's words: the backend went away, timed
    out, answered too much), or the backend's own JSON-RPC error as an MCPError to pass on
    whole: its code, its message redacted, its data (a URL elicitation's URL, for -32042)."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

    name = backend.name
    what = repr(tool) if tool is not None else method
    during = "the call" if tool is not None else method
    code = CONNECTION_CLOSED if exc is None else exc.code
    if backend.removed:
        if backend.replaced:
            return Failure(
                BackendError(
                    f"server {name!r} was changed in the servers file during {during}; it is "
                    "being restarted with its new settings"
                )
            )
        return Failure(
            BackendError(f"server {name!r} was removed from the servers file during {during}")
        )
    if code == REQUEST_TIMEOUT:
        return Failure(
            BackendError(f"server {name!r} did not answer {what} within {call_timeout:g} s"),
            probe=True,
        )
    if attempt.too_large:  # a stdio line past the transport's limit: the pool restarts it
        return Failure(too_large(name, what, max_result_bytes, dropped=True))
    if exc is not None and oversized(exc.message):  # over HTTP: that answer only
        return Failure(too_large(name, what, max_result_bytes, dropped=False))
    if code == CONNECTION_CLOSED and (
        exc is None or backend.spec.transport == "stdio" or attempt.closed.is_set()
    ):
        ended = attempt.ended("closed the connection")
        return Failure(
            BackendError(f"server {name!r} {ended} during {during}; it is being restarted"),
            lost=f"{ended} during {'a call to ' + what if tool is not None else method}",
        )
    message = backend.redact(exc.message)
    if code == CONNECTION_CLOSED:
        # Over HTTP one request's stream can fail while the session is fine: a ping decides.
        return Failure(
            BackendError(f"server {name!r} did not complete its answer to {what}: {message}"),
            probe=True,
        )
    return Failure(MCPError(exc.code, message, exc.data))


def too_large(server: str, what: str, limit_bytes: int, *, dropped: bool) -> BackendError:
    """A backend answered ``what`` with more than ``--max-result-size``. ``dropped``: the
    answer was not even read (a stdio line past the transport's limit): the connection was
    dropped and the backend is restarted."""
    limit = human_size(limit_bytes, exact=True)
    if dropped:
        return BackendError(
            f"server {server!r} answered {what} with far more than {limit}; toolfind relays "
            f"results up to {limit} (--max-result-size), so it dropped the connection and "
            "restarts the server: ask for less"
        )
    return BackendError(
        f"server {server!r} answered {what} with more than {limit}; toolfind relays results "
        f"up to {limit} (--max-result-size): ask for less, e.g. a smaller range or page"
    )
