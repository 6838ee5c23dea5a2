"""The backend client's defaults, each written once: the pool, `catalog pull` and serve-mcp's
options (``toolfind/serve/defaults.py`` re-exports them for the command line) read them here.

Nothing but typing is imported: the Typer CLI reads this module on every run.
"""

#: Between a backend server's name and its tool's name.
SEPARATOR = "__"
#: Seconds a forwarded tool call may take.
CALL_TIMEOUT = 60.0
#: Seconds before retrying a backend that failed to start, doubling up to RETRY_MAX.
RETRY_INITIAL = 1.0
RETRY_MAX = 60.0
#: Seconds a backend may take to start (each connection attempt).
START_TIMEOUT = 30.0
#: The largest backend tool result relayed, as ``--max-result-size`` takes it.
MAX_RESULT_SIZE = "10MiB"
