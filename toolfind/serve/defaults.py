"""serve-mcp's defaults, each written once: the options (`options.ServeOptions`), the command
line (``toolfind/cli/serving.py``), the backend pool and the HTTP limits read them here.

Nothing but typing is imported: the Typer CLI reads this module on every run.
"""

from typing import Literal

Exposure = Literal["direct", "search"]

EXPOSURE: Exposure = "search"
META_PREFIX = "proxy_"
#: Between a backend server's name and its tool's name.
SEPARATOR = "__"
LOG_LEVEL = "warning"
#: Seconds a forwarded tool call may take.
CALL_TIMEOUT = 60.0
#: Seconds between catalog (and servers file) change checks.
POLL_INTERVAL = 1.0
#: Seconds before retrying a backend that failed to start, doubling up to RETRY_MAX.
RETRY_INITIAL = 1.0
RETRY_MAX = 60.0
#: Seconds a backend may take to start (each connection attempt).
START_TIMEOUT = 30.0
#: Seconds from start during which lists and searches wait for backends still connecting for
#: the first time (until each is up or has failed once; 0: never wait).
BACKEND_WAIT = 2.0
#: The largest backend tool result relayed, as ``--max-result-size`` takes it.
MAX_RESULT_SIZE = "10MiB"
#: HTTP limits: a request's headers must arrive within HEADER_TIMEOUT seconds of its first byte
#: (or of the connection), its body within BODY_TIMEOUT; at most MAX_CONNECTIONS at once
#: (further ones are refused before any authentication).
HEADER_TIMEOUT = 5.0
BODY_TIMEOUT = 30.0
MAX_CONNECTIONS = 4096
