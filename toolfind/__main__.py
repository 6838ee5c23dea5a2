"""``toolfind`` and ``python -m toolfind``: the fast path first, then the Typer app."""

from __future__ import annotations

import gc
import sys


def main() -> None:
    """Run toolfind with ``sys.argv``."""
    argv = sys.argv[1:]
    if len(argv) >= 2 and "--json" in argv:
        from toolfind.fastpath import run

        try:
            code = run(argv)
        except KeyboardInterrupt:
            sys.exit(130)
        except Exception:  # noqa: BLE001 - any doubt falls back to the full CLI, which reports it
            code = None
        if code is not None:
            sys.exit(code)
    # Importing Typer and the CLI creates some 25,000 objects that live until exit (modules,
    # classes, functions) and next to no garbage, yet the cyclic GC walks them during the
    # import and again in full at exit: about a fifth of `toolfind cache path`. So no GC during
    # the import, and what it loaded is frozen (left out of every later collection, the one at
    # exit too); garbage the command itself makes is collected as usual.
    gc.disable()
    try:
        # Only the invoked command is turned into a click command (see cli.app_for).
        from toolfind.cli import app_for
    finally:
        gc.freeze()
        gc.enable()
    app_for(argv)(prog_name="toolfind")


if __name__ == "__main__":
    main()
