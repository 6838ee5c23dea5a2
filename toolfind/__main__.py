"""``toolfind`` and ``python -m toolfind``: the fast path first, then the Typer app."""

from __future__ import annotations

import gc
import sys

#: The first argument of the one-shot commands besides the fast path's (``fast.GRAMMAR``), and
#: of help and version: done once their output is written, nothing they start outlives them.
#: Not ``serve-mcp`` or ``catalog pull``, which run MCP servers.
_ONE_SHOT = frozenset({"schemas", "validate", "eval", "tune", "cache", "--version", "--help", "-h"})


def main() -> None:
    """Run toolfind with ``sys.argv``."""
    argv = sys.argv[1:]
    from toolfind.cli import fast  # it declines (None) every command its grammar does not know

    if argv:
        try:
            code = fast.run(argv)
        except KeyboardInterrupt:
            sys.exit(130)
        except Exception:  # noqa: BLE001 - any doubt falls back to the full CLI, which reports it
            code = None
        if code is not None:
            _end(code)
            sys.exit(code)
    # The Typer import makes ~25,000 long-lived objects and next to no garbage: no GC walks
    # during it, and what it loaded is frozen out of later collections (the one at exit too).
    gc.disable()
    try:
        # Only the invoked command is turned into a click command (see cli.app_for).
        from toolfind.cli.app import app_for
    finally:
        gc.freeze()
        gc.enable()
    try:
        app_for(argv)(prog_name="toolfind")
    except SystemExit as done:
        one_shot = not argv or argv[0] in _ONE_SHOT or argv[0] in fast.GRAMMAR
        if one_shot and (done.code is None or isinstance(done.code, int)):
            _end(done.code or 0)
        raise


def _end(code: int) -> None:
    """End a one-shot command at once, with exit status ``code``, skipping the interpreter's
    teardown; return (for the caller to exit as usual) when that would not be safe.

    Python's exit frees every object one by one, memory the OS takes back anyway: once stdout
    and stderr are flushed and the ``atexit`` functions have run, the process simply ends. Not
    while a non-daemon thread runs (Python's exit would wait for it), and not when flushing
    fails (a closed pipe): Python's exit reports that as it always has.
    """
    import atexit
    import os

    threading = sys.modules.get("threading")
    if threading is not None and any(
        not t.daemon for t in threading.enumerate() if t is not threading.main_thread()
    ):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        code = 120  # what Python's exit returns when it cannot flush stdout
    os._exit(code)


if __name__ == "__main__":
    main()
