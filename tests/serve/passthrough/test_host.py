"""What backends ask of the host (`serve.passthrough.host`): a request goes only to a caller that
can answer it, sampling and elicitation outside any request are refused, roots outside a
request come only from the client the session serves, and each session declares its client's
capabilities. The parts are driven directly; the end-to-end side is in
``test_everything_e2e.py`` and ``test_rogue_e2e.py``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.server.connection import Connection
from mcp.shared.exceptions import MCPError

from toolfind.backends.seam import NoBackends
from toolfind.serve.notifier import ChangeNotifier
from toolfind.serve.passthrough.common import CALLER, Caller, Gateway
from toolfind.serve.passthrough.host import EVERYTHING, HostCapabilities, HostRequests, missing

pytestmark = pytest.mark.anyio


def caller(caps: types.ClientCapabilities | None, modern: bool = False) -> Caller:
    session = SimpleNamespace(client_capabilities=caps, can_send_request=not modern)
    return Caller(SimpleNamespace(session=session, request_id=1), SimpleNamespace())


async def test_a_backend_request_goes_only_to_a_caller_that_can_answer_it() -> None:
    gateway = Gateway(NoBackends(), single_client=False)
    host = HostRequests(ChangeNotifier(), gateway, single_client=False)
    sampling = types.ClientCapabilities(sampling=types.SamplingCapability())
    for callers, expected in (
        ([caller(None)], "toolfind's client does not support sampling"),
        (
            [caller(None), caller(None)],
            "none of toolfind's clients with requests at it supports sampling",
        ),
        ([caller(sampling), caller(sampling)], "cannot tell which of its 2 clients"),
    ):
        gateway.in_flight[("s", None)] = callers
        with pytest.raises(MCPError) as refused:
            await host.ask("s", "sampling/createMessage", {"messages": [], "maxTokens": 5}, None)
        assert expected in refused.value.error.message
        assert refused.value.error.code == types.INVALID_REQUEST


@pytest.mark.parametrize("lane", [None, "a client's own session"])
async def test_sampling_or_elicitation_outside_any_request_is_refused_never_relayed(
    lane: Any,
) -> None:
    gateway = Gateway(NoBackends(), single_client=lane is None)
    host = HostRequests(ChangeNotifier(), gateway, single_client=lane is None)
    for method, params in (
        ("sampling/createMessage", {"messages": [], "maxTokens": 5}),
        ("elicitation/create", {"mode": "url", "url": "https://x.example", "elicitationId": "1"}),
    ):
        with pytest.raises(MCPError) as refused:
            await host.ask("s", method, params, lane)
        assert "only while it serves a request" in refused.value.error.message


async def test_roots_outside_any_request_come_only_from_the_client_the_session_serves() -> None:
    shared = Gateway(NoBackends(), single_client=False)
    host = HostRequests(ChangeNotifier(), shared, single_client=False)
    with pytest.raises(MCPError) as refused:
        await host.ask("s", "roots/list", None, None)
    assert "shared by toolfind's clients" in refused.value.error.message
    asked: list[str] = []

    class Own:
        client_capabilities = types.ClientCapabilities(roots=types.RootsCapability())

        async def send_raw_request(self, method: str, params: Any, opts: Any = None) -> Any:
            asked.append(method)
            return {"roots": [{"uri": "file:///own"}]}

    own = Connection(Own(), protocol_version="2025-11-25")
    own.client_capabilities = Own.client_capabilities
    answer = await host.ask("s", "roots/list", None, own)
    assert answer["roots"] == [{"uri": "file:///own"}]
    assert asked == ["roots/list"]


async def test_only_the_callers_own_requests_count_in_flight_at_a_backend() -> None:
    gateway = Gateway(NoBackends(), single_client=False)
    one, two = caller(None), caller(None)
    token = CALLER.set(one)
    try:
        with gateway.calling("a", None):
            assert gateway.callers_at("a", None) == [one]
            CALLER.set(two)
            with gateway.calling("a", None), gateway.calling("b", None):
                assert gateway.callers_at("a", None) == [one, two]
                assert gateway.callers_at("b", None) == [two]
            with gateway.calling("a", two):  # its own session: counted apart
                assert gateway.callers_at("a", None) == [one]
                assert gateway.callers_at("a", two) == [two]
            assert gateway.callers_at("a", None) == [one]
    finally:
        CALLER.reset(token)
    assert gateway.in_flight == {}


def test_what_each_capability_allows() -> None:
    form_only = types.ClientCapabilities(elicitation=types.ElicitationCapability())
    url_only = types.ClientCapabilities(
        elicitation=types.ElicitationCapability(url=types.UrlElicitationCapability())
    )
    assert missing(form_only, "elicitation/create", {"message": "m"}) == ""
    assert missing(form_only, "elicitation/create", {"mode": "url"}) == "URL elicitation"
    assert missing(url_only, "elicitation/create", {"mode": "url"}) == ""
    assert missing(url_only, "elicitation/create", {}) == "form elicitation"
    plain = types.ClientCapabilities(sampling=types.SamplingCapability())
    assert missing(plain, "sampling/createMessage", {"tools": [{}]}) == "sampling with tools"
    assert missing(EVERYTHING, "roots/list", {}) == ""


async def test_backends_are_told_the_hosts_capabilities_under_stdio_and_all_over_http() -> None:
    http = HostCapabilities(single_client=False)
    assert await http.for_backends(None) == EVERYTHING
    own = SimpleNamespace(
        client_capabilities=types.ClientCapabilities(sampling=types.SamplingCapability())
    )
    assert await http.for_backends(own) == types.ClientCapabilities(
        sampling=types.SamplingCapability()
    )
    stdio = HostCapabilities(single_client=True)
    declared = types.ClientCapabilities(
        roots=types.RootsCapability(list_changed=False), experimental={"x": {}}
    )
    async with anyio.create_task_group() as tg:
        got: list[types.ClientCapabilities] = []

        async def ask() -> None:
            got.append(await stdio.for_backends(None))

        tg.start_soon(ask)
        await anyio.wait_all_tasks_blocked()
        assert got == []  # waits for the host's initialize
        stdio.saw_initialize({"capabilities": declared.model_dump(by_alias=True)})
    assert got == [types.ClientCapabilities(roots=types.RootsCapability(list_changed=False))]


# -- HTTP: the connection cap makes room from idle connections; a refused one is closed --------
