"""Serving HTTP (`serve.transports.http`): the Host and Origin values accepted, the socket."""

from __future__ import annotations

import socket

import pytest

from toolfind.serve.options import HttpAddress
from toolfind.serve.transports.http import bind, security_settings

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


def test_a_burst_of_connections_waits_to_be_accepted_whatever_backlog_asyncio_asks_for() -> None:
    """asyncio calls ``listen()`` with its accept batch (32): a kernel queue that shallow
    dropped the handshakes of a burst from many hosts while the server was busy."""
    listening = bind(HttpAddress("127.0.0.1", 0), queue=120)
    listening.listen(8)  # what asyncio does with uvicorn's ``backlog``
    port = listening.getsockname()[1]
    clients: list[socket.socket] = []
    try:
        for _ in range(100):  # none accepted yet: each must wait in the kernel's queue
            # A shallow queue drops the handshake: connect would wait out its timeout.
            clients.append(socket.create_connection(("127.0.0.1", port), timeout=30))
            clients[-1].sendall(b"hello")
        listening.setblocking(True)
        for _ in range(100):
            accepted, _ = listening.accept()
            with accepted:
                assert accepted.recv(5) == b"hello"
    finally:
        for client in clients:
            client.close()
        listening.close()
