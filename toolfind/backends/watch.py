"""Following the servers files while serving: an edit starts, stops or restarts the backends
it concerns (the pool's ``update``); nothing else about the pool is touched.

Files are read off the event loop, opened without blocking and capped (`link.read_all`): a
file replaced by a FIFO, a device or a huge file is a change ignored, logged once, as is an
edit that breaks a file as a whole (the servers keep running as they are). An entry that
cannot be served is skipped (`config.load_servers` logs it); if that server is running, it
keeps running as it was declared before.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from toolfind.backends.config import ServerSpec, Skipped, load_servers
from toolfind.backends.link import read_all
from toolfind.errors import ConfigError

logger = logging.getLogger("toolfind.backends")

__all__ = ["follow"]

#: Serves these specs from now on, and keeps the servers named in the second argument as
#: they run (`pool.BackendPool.update`).
Update = Callable[[Sequence[ServerSpec], Collection[str]], None]


async def follow(
    files: Sequence[Path],
    last: tuple[bytes | str | None, ...],
    environ: Mapping[str, str] | None,
    update: Update,
    interval: float,
) -> None:
    """Poll ``files`` every ``interval`` seconds (``last`` is what they held at start); when one
    changes, ``update`` to the servers they declare now. Cancel to stop."""
    import anyio
    import anyio.to_thread

    logged: set[str] = set()
    while True:
        await anyio.sleep(interval)
        now = await anyio.to_thread.run_sync(read_all, files)
        if now == last:
            continue
        last = now
        problems = [text for text in now if isinstance(text, str)]
        for problem in problems:
            key = re.sub(r"[\d,]+", "#", problem)  # a file that keeps growing: one line
            if key not in logged:
                logged.add(key)
                logger.error(
                    "servers file change ignored, still serving the last good servers: %s",
                    problem,
                )
        if problems:
            continue
        logged.clear()
        skipped: list[Skipped] = []
        try:
            specs = await anyio.to_thread.run_sync(_load, files, environ, skipped)
        except ConfigError as exc:
            logger.error(
                "servers file change ignored, still serving the last good servers: %s", exc
            )
            continue
        update(specs, {skip.name for skip in skipped})


def _load(
    files: Sequence[Path], environ: Mapping[str, str] | None, skipped: list[Skipped]
) -> list[ServerSpec]:
    return load_servers(files, environ, skipped=skipped)
