"""serve-mcp's defaults, each written once: the options (`options.ServeOptions`), the command
line (``toolfind/cli/serving.py``) and the HTTP limits read them here; the backend client's
own (separator, timeouts, retries, result size) are written in ``toolfind/backends/defaults.py``
and re-exported.

Nothing but typing is imported: the Typer CLI reads this module on every run.
"""

from typing import Literal

from toolfind.backends.defaults import (
    CALL_TIMEOUT,
    MAX_RESULT_SIZE,
    RETRY_INITIAL,
    RETRY_MAX,
    SEPARATOR,
    START_TIMEOUT,
)

__all__ = [
    "BACKEND_WAIT",
    "BODY_TIMEOUT",
    "CALL_TIMEOUT",
    "EXPOSURE",
    "HEADER_TIMEOUT",
    "LOG_LEVEL",
    "MAX_CONNECTIONS",
    "MAX_RESULT_SIZE",
    "META_PREFIX",
    "POLL_INTERVAL",
    "RETRY_INITIAL",
    "RETRY_MAX",
    "SEPARATOR",
    "START_TIMEOUT",
    "Exposure",
]

Exposure = Literal["direct", "search"]

EXPOSURE: Exposure = "search"
META_PREFIX = "proxy_"
LOG_LEVEL = "warning"
#: Seconds between catalog (and servers file) change checks.
POLL_INTERVAL = 1.0
#: Seconds from the first request during which the first initialize, lists and searches wait
#: for backends still connecting for the first time (until each is up or has failed once; 0:
#: never wait).
BACKEND_WAIT = 2.0
#: HTTP limits: a request's headers must arrive within HEADER_TIMEOUT seconds of its first byte
#: (or of the connection), its body within BODY_TIMEOUT; at most MAX_CONNECTIONS at once
#: (further ones are refused before any authentication). The connection cap, not this
#: timeout, keeps slow senders from taking every descriptor (at the cap the one waiting
#: longest for its headers makes room): the timeout can allow for a client that a busy
#: machine keeps waiting between its connect and its first write (Apache's mod_reqtimeout
#: starts at 20 s too).
HEADER_TIMEOUT = 20.0
BODY_TIMEOUT = 30.0
MAX_CONNECTIONS = 4096
