"""The `Backends` seam is one complete contract: every member serve-mcp uses is declared on the
Protocol, and both implementations (`NoBackends`, `BackendPool`) have each, with the
Protocol's parameters (serve-mcp calls them plainly, never through ``getattr``)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from toolfind.backends.pool import BackendPool
from toolfind.backends.seam import Backends, NoBackends

MEMBERS = sorted(
    name
    for name, value in vars(Backends).items()
    if callable(value) and (not name.startswith("_") or name in ("__aenter__", "__aexit__"))
)


def parameters(function: Callable[..., object]) -> list[tuple[str, object]]:
    return [(p.name, p.kind) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("implementation", [NoBackends, BackendPool])
@pytest.mark.parametrize("member", MEMBERS)
def test_each_implementation_has_every_member_with_the_protocols_parameters(
    implementation: type, member: str
) -> None:
    declared = getattr(Backends, member)
    made = getattr(implementation, member)
    assert parameters(made) == parameters(declared)
    assert inspect.iscoroutinefunction(made) == inspect.iscoroutinefunction(declared)


def test_serve_mcp_never_probes_the_backends_for_a_member() -> None:
    serve = Path(__file__).parents[2] / "toolfind" / "serve"
    probes = [
        f"{path.name}: {line.strip()}"
        for path in serve.rglob("*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.search(r"getattr\((self\.)?(backends|upstream|active|gateway\.upstream)\b", line)
    ]
    assert probes == []
