"""``python -m toolfind.serve``: a minimal entry to serve-mcp without the Typer CLI.

For tests and debugging; users run ``toolfind serve-mcp`` (same options, same `run`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from toolfind.config import Filters
from toolfind.errors import ToolfindError
from toolfind.serve import ServeOptions, parse_http_address, run
from toolfind.serve.options import EXPOSURES, LOG_LEVELS


def parse_args(argv: Sequence[str] | None = None) -> ServeOptions:
    """Options from the command line. Raises ConfigError for a bad ``--http``."""
    parser = argparse.ArgumentParser(prog="python -m toolfind.serve", description=__doc__)
    parser.add_argument(
        "-c", "--catalog", action="append", default=[], help="catalog file or directory"
    )
    parser.add_argument("--exposure", choices=EXPOSURES, default="search")
    parser.add_argument("--meta-prefix", default="proxy_")
    parser.add_argument("--http", metavar="[HOST:]PORT", default=None)
    parser.add_argument("--token", default=None)
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="warning")
    parser.add_argument("--servers", action="append", default=[])
    parser.add_argument("--call-timeout", type=float, default=60.0)
    parser.add_argument("--poll-interval", type=float, default=1.0)
    parser.add_argument("--no-watch", action="store_true")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument(
        "--namespace", action="append", default=[], help="allow only these namespaces"
    )
    parser.add_argument("--exclude-namespace", action="append", default=[])
    parser.add_argument(
        "--tag", action="append", default=[], help="allow only tools with these tags"
    )
    parser.add_argument("--exclude-tag", action="append", default=[])
    args = parser.parse_args(argv)
    return ServeOptions(
        catalogs=tuple(Path(c) for c in args.catalog),
        exposure=args.exposure,
        meta_prefix=args.meta_prefix,
        http=parse_http_address(args.http) if args.http is not None else None,
        token=args.token,
        log_level=args.log_level,
        filters=Filters(
            namespaces=tuple(args.namespace),
            exclude_namespaces=tuple(args.exclude_namespace),
            tags=tuple(args.tag),
            exclude_tags=tuple(args.exclude_tag),
        ),
        servers=tuple(Path(s) for s in args.servers),
        call_timeout=args.call_timeout,
        watch=not args.no_watch,
        poll_interval=args.poll_interval,
        use_cache=not args.no_cache,
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        run(parse_args(argv))
    except ToolfindError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
