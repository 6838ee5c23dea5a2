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
#: Sessions one backend runs at most at once, one per client (over HTTP; ``max_sessions``).
MAX_SESSIONS = 32
#: Seconds after which a client's session no request has used is stopped.
SESSION_IDLE = 1800.0
#: Set in every stdio backend's environment (to serve-mcp's process id): a serve-mcp started
#: with it, directly or through any chain of processes, was started by serve-mcp itself and
#: refuses to serve, answering the handshake with RECURSION: toolfind never recurses.
GATEWAY_ENV = "TOOLFIND_SERVE_MCP"
RECURSION = "toolfind serve-mcp does not run as a backend of toolfind serve-mcp"
