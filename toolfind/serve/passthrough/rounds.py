"""Server-to-client requests for 2026-07-28 clients: ``input_required`` rounds of a tool call.

A 2026-07-28 client takes no server-to-client requests; a server that needs input answers the
client's request with an ``InputRequiredResult`` (the requests, and an opaque
``requestState``), and the client retries the request with the answers. toolfind's backends
speak the handshake era and ask with ordinary requests in the middle of a call, so for such a
client a forwarded tool call runs in the background (`Round`): its first client request returns
when the call ends or when a backend asks for input; the retry (same ``requestState``) hands the
answers to the waiting backend requests and waits again.

A ``requestState`` is a random 128-bit token naming a round in memory, so a client can neither
forge nor read one. A round that no client request has come back to within ``ROUND_TTL``
seconds is abandoned: its waiting backend requests are refused, its call cancelled.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp.shared.exceptions import MCPError

from toolfind.serve.passthrough.common import Caller
from toolfind.serve.passthrough.host import _typed_request

logger = logging.getLogger("toolfind.serve")

#: Seconds a round waits for its client to come back with answers or for its result.
ROUND_TTL = 300.0
#: Rounds held at once; beyond it the oldest is abandoned.
MAX_ROUNDS = 1000


class Round:
    """One tool call of a 2026-07-28 client, across the client requests that answer its
    backend's requests for input."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.result: types.CallToolResult | None = None
        self.error: BaseException | None = None
        self.done = anyio.Event()
        #: Requests for input not yet sent to the client, by key.
        self.unsent: dict[str, Any] = {}
        #: Requests sent and waiting for the client's answer: key -> (event, answer slot).
        self.waiting: dict[str, tuple[anyio.Event, list[Any]]] = {}
        self.changed = anyio.Event()
        self.scope = anyio.CancelScope()
        self.touched = anyio.current_time()
        self._keys = 0

    def _wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def run(self, call: Callable[[], Awaitable[types.CallToolResult]]) -> None:
        with self.scope:
            try:
                self.result = await call()
            except Exception as exc:
                self.error = exc
        if self.result is None and self.error is None:
            self.error = MCPError(types.INTERNAL_ERROR, "the tool call was abandoned")
        self.done.set()
        self._wake()

    async def ask(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """A backend's request: queue it for the client and wait for its answer."""
        self._keys += 1
        key = f"input-{self._keys}"
        answered = anyio.Event()
        slot: list[Any] = []
        self.unsent[key] = _typed_request(method, params)
        self.waiting[key] = (answered, slot)
        self._wake()
        try:
            with anyio.move_on_after(ROUND_TTL):
                await answered.wait()
            if not answered.is_set():
                raise MCPError(types.INVALID_REQUEST, f"the client did not answer {method} in time")
        finally:
            self.waiting.pop(key, None)
            self.unsent.pop(key, None)
        answer = slot[0]
        if isinstance(answer, MCPError):
            raise answer
        return dict(answer)

    def answer(self, responses: Mapping[str, Any]) -> None:
        for key, response in responses.items():
            waiting = self.waiting.get(key)
            if waiting is None:
                continue
            answered, slot = waiting
            if hasattr(response, "model_dump"):
                response = response.model_dump(by_alias=True, exclude_none=True)
            slot.append(response)
            answered.set()

    def abandon(self, reason: str) -> None:
        for answered, slot in list(self.waiting.values()):
            if not answered.is_set():
                slot.append(MCPError(types.INVALID_REQUEST, reason))
                answered.set()
        self.scope.cancel()

    async def next(self) -> types.CallToolResult | types.InputRequiredResult:
        """The call's result, or the requests for input not yet sent to the client."""
        self.touched = anyio.current_time()
        while True:
            if self.unsent:
                requests, self.unsent = dict(self.unsent), {}
                return types.InputRequiredResult(input_requests=requests, request_state=self.token)
            if self.done.is_set():
                if self.error is not None:
                    raise self.error
                assert self.result is not None
                return self.result
            await self.changed.wait()


class MultiRoundTrip:
    """The rounds of 2026-07-28 clients' tool calls (see the module's docstring)."""

    def __init__(self) -> None:
        self._rounds: dict[str, Round] = {}
        self._of_caller: dict[int, Round] = {}
        self.task_group: Callable[[], anyio.abc.TaskGroup | None] = lambda: None

    async def ask(self, caller: Caller, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Relay a backend's request to a 2026-07-28 ``caller`` (called by `HostRequests`)."""
        round_ = self._of_caller.get(id(caller))
        if round_ is None:
            raise MCPError(
                types.INVALID_REQUEST,
                f"toolfind's client speaks 2026-07-28 and can be asked for input ({method}) "
                "only during a tool call",
            )
        return await round_.ask(method, params)

    async def call(
        self,
        caller: Caller,
        request_state: str | None,
        responses: Mapping[str, Any] | None,
        call: Callable[[], Awaitable[types.CallToolResult]],
    ) -> types.CallToolResult | types.InputRequiredResult:
        """Start a call (no ``request_state``) or resume the round it names."""
        self._expire()
        if request_state is not None:
            round_ = self._rounds.get(request_state)
            if round_ is None:
                raise MCPError(
                    types.INVALID_PARAMS,
                    "Unknown or expired requestState: call the tool again without it",
                )
            round_.answer(responses or {})
        else:
            tg = self.task_group()
            if tg is None:  # no server task group: nothing can outlive this request
                return await call()
            round_ = Round(secrets.token_urlsafe(16))
            self._rounds[round_.token] = round_
            self._of_caller[id(caller)] = round_

            async def run() -> None:
                try:
                    await round_.run(call)
                finally:
                    self._of_caller.pop(id(caller), None)

            tg.start_soon(run)
        try:
            outcome = await round_.next()
        except BaseException:
            if round_.done.is_set():
                self._rounds.pop(round_.token, None)
            raise
        if round_.done.is_set() and not isinstance(outcome, types.InputRequiredResult):
            self._rounds.pop(round_.token, None)
        return outcome

    def _expire(self) -> None:
        now = anyio.current_time()
        stale = [r for r in self._rounds.values() if now - r.touched > ROUND_TTL]
        while len(self._rounds) - len(stale) >= MAX_ROUNDS:
            oldest = min(
                (r for r in self._rounds.values() if r not in stale), key=lambda r: r.touched
            )
            stale.append(oldest)
        for round_ in stale:
            self._rounds.pop(round_.token, None)
            round_.abandon("the client did not come back with the answers in time")
