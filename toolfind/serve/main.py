"""Running serve-mcp: load the index, start the backends, watch, serve one transport.

The MCP SDK and anyio are imported only when `run` (or `serve`) is called, so the CLI
imports this module cheaply.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from collections.abc import Collection, Mapping
from functools import partial
from typing import Any, TextIO

from toolfind.backends.defaults import GATEWAY_ENV, RECURSION
from toolfind.backends.seam import Backends, NoBackends
from toolfind.errors import ConfigError
from toolfind.serve.options import ServeOptions

logger = logging.getLogger("toolfind.serve")

__all__ = ["configure_logging", "make_backends", "run", "serve"]


def make_backends(
    options: ServeOptions,
    *,
    reserved_names: Collection[str] = (),
    environ: Mapping[str, str] | None = None,
    errlog: TextIO | None = None,
) -> Backends:
    """The backends ``options.servers`` files name, run as ``options`` say; `NoBackends`
    when there are none.

    Raises:
        ConfigError: a servers file cannot be read or declares an invalid server, or the
            separator is not made of ``[A-Za-z0-9_-]``.
    """
    if not options.servers:
        return NoBackends()
    from toolfind.backends.config import load_servers
    from toolfind.backends.pool import BackendPool

    return BackendPool(
        load_servers(options.servers, environ),
        separator=options.separator,
        reserved_names=reserved_names,
        call_timeout=options.call_timeout,
        backoff_initial=options.retry_initial,
        backoff_max=options.retry_max,
        max_result_bytes=options.max_result_size,
        servers_files=options.servers,
        environ=environ,
        errlog=errlog,
        per_client=options.http is not None,
    )


def run(options: ServeOptions, *, backends: Backends | None = None) -> None:
    """Serve until the client disconnects (stdio) or SIGTERM, SIGINT or SIGHUP arrives (any
    transport); every backend is stopped before this returns. Blocking.

    Raises:
        ConfigError: an invalid option (for example a non-loopback ``--http`` without a token),
            or serve-mcp was started by serve-mcp itself (`refuse_as_backend`).
        CatalogError: a catalog path does not exist or cannot be read.
        KeyboardInterrupt: Ctrl-C (SIGINT), after the backends are stopped (the CLI exits 130).
    """
    import anyio

    if os.environ.get(GATEWAY_ENV):
        refuse_as_backend(options.http is None)
    checked = options.checked()
    configure_logging(checked.log_level)
    from toolfind.backends.redact import remember_values

    remember_values([checked.token])  # serve-mcp's own --token is a secret too
    if anyio.run(serve, checked, backends) == signal.SIGINT:
        raise KeyboardInterrupt


def refuse_as_backend(stdio: bool) -> None:
    """serve-mcp was started by serve-mcp (its backends get `GATEWAY_ENV`), directly or
    through any chain of processes: a servers file that lists toolfind itself. Serving would
    start the same servers again, toolfind among them, without end; instead the handshake is
    answered with `RECURSION` (the parent then skips that server for good) and this exits.

    Raises:
        ConfigError: always, saying so (the CLI's one error line, exit status 1).
    """
    if stdio:  # until the other serve-mcp closes the pipe, having read the answer
        for line in sys.stdin.buffer:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("method") == "initialize":
                error = {"code": -32600, "message": RECURSION}
                answer = {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
                sys.stdout.write(json.dumps(answer) + "\n")
                sys.stdout.flush()
    parent = os.environ.get(GATEWAY_ENV)
    raise ConfigError(
        f"{RECURSION}: this one was started by toolfind serve-mcp (process {parent}) through "
        "an entry of its servers file, and stops here; the other serve-mcp skips that entry"
    )


#: Seconds after SIGTERM (or Ctrl-C) before backends still running are killed (SIGKILL):
#: shorter than the 2 s a host such as the Python SDK waits before it kills toolfind.
KILL_AFTER = 1.5
#: The signals that stop serve-mcp (a host's quit, Ctrl-C, a closed terminal).
STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


async def serve(options: ServeOptions, backends: Backends | None = None) -> int | None:
    """The async body of `run`: load the index, watch the catalogs, serve one transport.
    Returns the signal that stopped it, if one did."""
    import anyio
    import anyio.to_thread

    from toolfind.serve.meta import META_KEYS
    from toolfind.serve.state import LiveIndex

    if backends is None:
        backends = make_backends(
            options, reserved_names=[options.meta_prefix + key for key in META_KEYS]
        )
    # Backends connect in the background and their tools join through the listener (a
    # rebuild, then list_changed); the first lists (and, with backends, the first
    # initialize) wait for them up to --backend-wait from the first request. With
    # --backend-wait 0 under stdio, they start once the first tools/list is answered (or
    # after RELEASE_AFTER), so that their start-up does not compete with it for the CPU.
    # Their handshake waits for the server (`expect_host`): it tells them what toolfind's
    # clients can answer (`passthrough.host`).
    backends.expect_host()
    if options.http is None and options.backend_wait <= 0:
        backends.hold()
    stopped = Stopped()
    serving = anyio.CancelScope()
    stopping = anyio.Event()
    async with anyio.create_task_group() as signals:
        signals.start_soon(
            _on_signals, stopped, serving, stopping, backends, options.http is not None
        )
        try:
            async with backends as active:
                with serving:
                    live = LiveIndex(
                        options.catalogs,
                        params=options.params,
                        filters=options.filters,
                        backends=active,
                        max_file_size=options.max_file_size,
                        use_cache=options.use_cache,
                        signals=options.signals,
                    )
                    active.set_listener(live.backends_changed)
                    await anyio.to_thread.run_sync(live.load)
                    # The MCP SDK's server side only now: the backends were started meanwhile
                    # (a stdio backend's process starts before the SDK is imported).
                    from toolfind.serve.server import Discovery
                    from toolfind.serve.transports.http import run_http
                    from toolfind.serve.transports.stdio import run_stdio

                    discovery = Discovery(live, options, active)
                    server = discovery.build_server()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(
                            partial(live.watch, options.poll_interval, catalogs=options.watch)
                        )
                        tg.start_soon(_release_later, active)
                        if options.watch:
                            tg.start_soon(active.watch_servers, options.poll_interval)
                        if options.http is None:
                            _say_on_a_terminal()
                            await run_stdio(server)
                        else:
                            await run_http(server, options, stopping=stopping)
                        tg.cancel_scope.cancel()
        finally:
            signals.cancel_scope.cancel()
    return stopped.signum


class Stopped:
    """The signal that stopped serving (None: the client went away)."""

    signum: int | None = None


async def _on_signals(
    stopped: Stopped, serving: Any, stopping: Any, backends: Backends, http: bool
) -> None:
    """SIGTERM, SIGINT (Ctrl-C) or SIGHUP stops serving on every transport, at once: the
    stdio loop is cancelled (its reads are on the event loop), HTTP shuts down (``stopping``)
    and is cut short after KILL_AFTER. Every backend process group gets SIGTERM at once
    rather than the grace it has on its closed stdin, and SIGKILL after KILL_AFTER or at the
    next signal, so no backend outlives toolfind even when it ignores both stdin and SIGTERM
    (the watchdog, `backends.watchdog`, covers toolfind itself being killed)."""
    import anyio

    if sys.platform == "win32":  # pragma: no cover - no signal receivers: Ctrl-C raises
        return
    with anyio.open_signal_receiver(*(getattr(signal, name) for name in STOP_SIGNALS)) as got:
        async for signum in got:
            stopped.signum = signum
            logger.info("%s: stopping the backends, then exiting", signal.Signals(signum).name)
            break
        stopping.set()
        if not http:
            serving.cancel()
        backends.hurry()
        with anyio.move_on_after(KILL_AFTER):
            async for _ in got:
                break
        serving.cancel()
        backends.hurry(kill=True)
        await anyio.sleep_forever()  # later signals are received here: never the default


#: Seconds after which held backends start even if no client has listed the tools.
RELEASE_AFTER = 1.0


async def _release_later(backends: Backends) -> None:
    import anyio

    await anyio.sleep(RELEASE_AFTER)
    backends.release()


def _say_on_a_terminal() -> None:
    """A person who ran serve-mcp in a terminal learns what it is waiting for, and how to
    stop it (an MCP host starts it itself, with pipes: it says nothing there)."""
    try:
        interactive = sys.stdin.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        logger.info("serving MCP on stdio")
    else:
        sys.stderr.write(
            "toolfind serve-mcp: serving MCP on stdin/stdout, for an MCP host that starts this "
            "command itself (--http PORT serves a URL instead); press Ctrl-C to stop\n"
        )
        sys.stderr.flush()


def configure_logging(level: str) -> None:
    """Every log line to stderr (stdout belongs to the protocol under stdio), rate-limited,
    then redacted (``backends.redact.log_to_stderr``): no library's line names a secret."""
    import logging

    from toolfind.backends.redact import log_to_stderr
    from toolfind.serve.transports.http_limits import ClientLeft, RateLimit

    threshold = logging.getLevelName(level.upper())
    log_to_stderr(
        "toolfind serve-mcp: %(levelname)s: %(message)s",
        level,
        ClientLeft(threshold if isinstance(threshold, int) else logging.WARNING),
        RateLimit(),
    )
