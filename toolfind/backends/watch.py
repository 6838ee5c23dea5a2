"""Following the servers files while serving: an edit starts, stops or restarts the backends
it concerns (`BackendPool.update`); nothing else about the pool is touched.

Files are read off the event loop, opened without blocking and capped (`link.read_all`): a
file replaced by a FIFO, a device or a huge file is a change ignored, logged once, as is an
edit that breaks a file (the servers keep running as they are).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from toolfind.backends.config import load_servers
from toolfind.backends.link import read_all
from toolfind.errors import ConfigError

if TYPE_CHECKING:
    from toolfind.backends.pool import BackendPool

logger = logging.getLogger("toolfind.backends")


async def follow(pool: BackendPool, interval: float) -> None:
    """Poll ``pool``'s servers files every ``interval`` seconds; when one changes, update the
    pool to what they declare now. Cancel to stop."""
    import anyio
    import anyio.to_thread

    last = pool.servers_text
    logged: set[str] = set()
    while True:
        await anyio.sleep(interval)
        now = await anyio.to_thread.run_sync(read_all, pool.servers_files)
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
        try:
            specs = await anyio.to_thread.run_sync(load_servers, pool.servers_files, pool.environ)
        except ConfigError as exc:
            logger.error(
                "servers file change ignored, still serving the last good servers: %s", exc
            )
            continue
        pool.update(specs)
