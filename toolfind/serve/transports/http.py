"""Serving streamable HTTP at ``/mcp``: behind a bearer token, Host/Origin checks and the
limits of `http_limits`."""

from __future__ import annotations

import hmac
import socket
import sys
from typing import TYPE_CHECKING, Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from toolfind.serve.options import HttpAddress, ServeOptions
from toolfind.serve.transports.http_limits import (
    ACCEPT_BATCH,
    connection_cap,
    limited_protocol,
    listener,
)

if TYPE_CHECKING:
    from mcp.server import Server

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_WILDCARD_HOSTS = ("0.0.0.0", "::", "")


class BearerTokenGate:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            response = JSONResponse(
                {
                    "error": "unauthorized",
                    "error_description": "send Authorization: Bearer <token>",
                },
                status_code=401,
                # Closed after the answer: a refused client holds no connection toward the cap.
                headers={"WWW-Authenticate": 'Bearer realm="toolfind"', "Connection": "close"},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        values = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        if len(values) != 1:
            return False
        scheme, _, credential = values[0].partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), self._token)


def security_settings(
    address: HttpAddress, extra_hosts: tuple[str, ...] = (), extra_origins: tuple[str, ...] = ()
) -> TransportSecuritySettings:
    """DNS-rebinding protection on: only Host/Origin values naming this server are accepted.

    Loopback names are always allowed; a specific host adds itself; a wildcard bind
    (0.0.0.0, ::) adds this machine's host name and addresses. ``extra_hosts``
    (``--allowed-host``) adds more: a bare name on any port (and without one), a
    ``NAME:PORT`` exactly; a name is also allowed as an http(s) Origin on any port.
    ``extra_origins`` (``--allowed-origin``) are Origins allowed as given.
    """
    hosts = list(_LOOPBACK_HOSTS)
    if address.host in _WILDCARD_HOSTS:
        hosts.extend(_this_machine())
    elif not address.is_loopback:
        hosts.append(f"[{address.host}]" if ":" in address.host else address.host)
    exact: list[str] = []
    for extra in extra_hosts:
        if extra.rpartition(":")[2].isdigit() and not extra.endswith("]"):
            exact.append(extra)  # NAME:PORT or [IPv6]:PORT
        else:
            hosts.append(extra)
    hosts = list(dict.fromkeys(hosts))
    allowed_hosts = [*exact, *hosts, *(f"{h}:*" for h in hosts)]
    origins = [f"{scheme}://{h}:*" for h in hosts for scheme in ("http", "https")]
    origins.extend(f"{scheme}://{h}" for h in hosts for scheme in ("http", "https"))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(dict.fromkeys(allowed_hosts)),
        allowed_origins=list(dict.fromkeys([*origins, *extra_origins])),
    )


def _this_machine() -> list[str]:
    names = [socket.gethostname(), socket.getfqdn()]
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None)
    except OSError:
        infos = []
    for info in infos:
        addr = str(info[4][0])
        names.append(f"[{addr}]" if ":" in addr else addr)
    return [n for n in names if n]


def bind(address: HttpAddress, queue: int) -> socket.socket:
    """A listening socket for ``address`` (port 0 picks a free one) whose kernel queue holds
    ``queue`` connections waiting to be accepted (`http_limits.Listener`)."""
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.create_server((address.host, address.port), family=family, reuse_port=False)
    # Accepted connections inherit this: without it a response written in two segments
    # waits on the client's delayed ACK (about 40 ms per request on Linux).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return listener(sock, queue)


async def run_http(server: Server[Any], options: ServeOptions, *, stopping: Any = None) -> None:
    """Serve streamable HTTP at ``/mcp`` until ``stopping`` (an anyio Event) is set: then
    shut down gracefully. Signals are serve-mcp's to handle (`main`), not uvicorn's."""
    import contextlib

    import anyio
    import uvicorn

    address = options.http or HttpAddress()
    cap = connection_cap(options.max_connections)
    # As many may wait to be accepted as may be open at once: a burst up to the cap is queued.
    sock = bind(address, queue=cap)
    port = int(sock.getsockname()[1])
    security = security_settings(address, options.allowed_hosts, options.allowed_origins)
    app: Any = server.streamable_http_app(host=address.host, transport_security=security)
    if options.token:
        app = BearerTokenGate(app, options.token)
    config = uvicorn.Config(
        app,
        # The connection cap and read timeouts run before the token and Host checks.
        http=limited_protocol(cap, options.header_timeout, options.body_timeout),
        # asyncio's accept batch; the kernel's queue stays ``cap`` deep (`http_limits.Listener`).
        backlog=ACCEPT_BATCH,
        log_config=None,
        access_log=False,
        lifespan="on",
        log_level=options.log_level,
        timeout_graceful_shutdown=2,
        # Longer than clients' idle-connection expiry (httpx: 5 s, uvicorn's default too):
        # otherwise the server may close a pooled connection just as a client reuses it,
        # and that request fails with a read error.
        timeout_keep_alive=30,
    )
    # One line users (and tests) can rely on, whatever the log level: where to connect.
    sys.stderr.write(f"toolfind serve-mcp: listening on {address.url(port)}\n")
    sys.stderr.flush()
    web = uvicorn.Server(config)
    # uvicorn's own handlers re-raise SIGTERM once it has shut down: toolfind died before it
    # stopped its backends (a backend ignoring its closed stdin was orphaned).
    web.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]

    async def stop_when_asked() -> None:
        await stopping.wait()
        web.should_exit = True

    try:
        async with anyio.create_task_group() as tg:
            if stopping is not None:
                tg.start_soon(stop_when_asked)
            await web.serve(sockets=[sock])
            tg.cancel_scope.cancel()
    finally:
        sock.close()
