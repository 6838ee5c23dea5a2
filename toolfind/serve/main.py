"""Running serve-mcp: load the index, start the backends, watch, serve one transport.

The MCP SDK and anyio are imported only when `run` (or `serve`) is called, so the CLI
imports this module cheaply.
"""

from __future__ import annotations

import logging
import sys
from functools import partial
from typing import Any

from toolfind.serve.backends.seam import Backends
from toolfind.serve.options import ServeOptions

logger = logging.getLogger("toolfind.serve")

__all__ = ["configure_logging", "run", "serve"]


def run(options: ServeOptions, *, backends: Backends | None = None) -> None:
    """Serve until the client disconnects (stdio) or a signal arrives (HTTP). Blocking.

    Raises:
        ConfigError: an invalid option (for example a non-loopback ``--http`` without a token).
        CatalogError: a catalog path does not exist or cannot be read.
        KeyboardInterrupt: Ctrl-C (the CLI exits 130).
    """
    import anyio

    checked = options.checked()
    configure_logging(checked.log_level)
    anyio.run(serve, checked, backends)


async def serve(options: ServeOptions, backends: Backends | None = None) -> None:
    """The async body of `run`: load the index, watch the catalogs, serve one transport."""
    import anyio
    import anyio.to_thread

    from toolfind.serve.backends.pool import make_backends
    from toolfind.serve.meta import META_KEYS
    from toolfind.serve.server import Discovery
    from toolfind.serve.state import LiveIndex
    from toolfind.serve.transports.http import run_http
    from toolfind.serve.transports.stdio import run_stdio

    if backends is None:
        backends = make_backends(
            options, reserved_names=[options.meta_prefix + key for key in META_KEYS]
        )
    # Backends connect in the background: serving never waits for one; their tools join
    # through the listener (a rebuild, then list_changed). Under stdio they start once the
    # first tools/list is answered (or after RELEASE_AFTER), so that their start-up does
    # not compete with it for the CPU.
    hold = getattr(backends, "hold", None)
    if hold is not None and options.http is None:
        hold()
    async with backends as active:
        live = LiveIndex(
            options.catalogs,
            params=options.params,
            filters=options.filters,
            backends=active,
            max_file_size=options.max_file_size,
            use_cache=options.use_cache,
            semantic=options.semantic,
            semantic_weight=options.semantic_weight,
            rerank=options.rerank,
            rerank_weight=options.rerank_weight,
            rerank_depth=options.rerank_depth,
        )
        active.set_listener(live.backends_changed)
        await anyio.to_thread.run_sync(live.load)
        server = Discovery(live, options, active).build_server()
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(live.watch, options.poll_interval, catalogs=options.watch))
            tg.start_soon(_release_later, active)
            watch_servers = getattr(active, "watch_servers", None)
            if options.watch and watch_servers is not None:
                tg.start_soon(watch_servers, options.poll_interval)
            if options.http is None:
                tg.start_soon(_stop_on_sigterm, tg.cancel_scope)
                await run_stdio(server)
            else:
                await run_http(server, options)
            tg.cancel_scope.cancel()


async def _stop_on_sigterm(scope: Any) -> None:
    """Under stdio, a host quits toolfind with SIGTERM: stop serving, so that leaving the
    backend pool stops every backend (even one that ignores its closed stdin) before exiting.
    (Over HTTP, uvicorn handles the signal and serving ends the same way.)"""
    import signal

    import anyio

    if sys.platform == "win32":  # pragma: no cover - no signal receivers there
        return
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            logger.info("SIGTERM: stopping the backends, then exiting")
            scope.cancel()
            return


#: Seconds after which held backends start even if no client has listed the tools.
RELEASE_AFTER = 1.0


async def _release_later(backends: Backends) -> None:
    import anyio

    await anyio.sleep(RELEASE_AFTER)
    backends.release()


def configure_logging(level: str) -> None:
    """Every log line to stderr (stdout belongs to the protocol under stdio)."""
    from toolfind.serve.transports.http_limits import RateLimit

    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RateLimit())
    handler.setFormatter(logging.Formatter("toolfind serve-mcp: %(levelname)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
