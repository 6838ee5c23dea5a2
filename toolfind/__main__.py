"""``toolfind`` and ``python -m toolfind``: the fast path first, then the Typer app."""

from __future__ import annotations

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
    from toolfind.cli import app

    app(prog_name="toolfind")


if __name__ == "__main__":
    main()
