"""Serving HTTP (`serve.transports.http`): the Host and Origin values accepted."""

from __future__ import annotations

import pytest

from toolfind.serve.options import HttpAddress
from toolfind.serve.transports.http import security_settings

pytestmark = pytest.mark.anyio


def test_allowed_hosts_add_names_on_any_port_and_exact_host_ports() -> None:
    settings = security_settings(
        HttpAddress("0.0.0.0", 8765),
        ("mybox.lan", "192.168.1.20:8765"),
        ("https://app.example.com",),
    )
    assert {"mybox.lan", "mybox.lan:*", "192.168.1.20:8765"} <= set(settings.allowed_hosts)
    assert "192.168.1.20:*" not in settings.allowed_hosts
    assert "https://app.example.com" in settings.allowed_origins
    assert "http://mybox.lan:*" in settings.allowed_origins
