"""The Typer options of validate, eval, tune, serve-mcp and catalog pull, each declared once as
an ``Annotated`` alias (the index commands' options are their grammar's, ``cli.grammar``;
those every command shares are ``cli.common``'s): a command's signature is one line a
parameter, and options of one shape (a repeatable value, seconds) are made alike.
"""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

from pathlib import Path
from typing import Annotated, Any

import typer

from toolfind.serve.defaults import Exposure


def repeated(decl: str, help: str, metavar: str) -> Any:
    """A repeatable option: a list, or None when it is not given."""
    return Annotated[list[str] | None, typer.Option(decl, help=help, metavar=metavar)]


def seconds(decl: str, help: str, **details: Any) -> Any:
    """An option giving a number of seconds."""
    return Annotated[float, typer.Option(decl, help=help, **details)]


def flag(decl: str, help: str) -> Any:
    """An option without a value."""
    return Annotated[bool, typer.Option(decl, help=help)]


def text(decl: str, help: str, **details: Any) -> Any:
    """An option with one value (None when it is not given)."""
    return Annotated[str | None, typer.Option(decl, help=help, **details)]


# -- validate, eval and tune --------------------------------------------------------------------

PathsArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Catalog files or directories (default: the catalogs in use).", metavar="PATH..."
    ),
]
StrictOpt = flag("--strict", "Exit 1 on warnings too.")
LintQueriesOpt = text("--queries", "Labelled queries: add findability lint.", metavar="FILE")
IgnoreOpt = repeated(
    "--ignore", "Leave out the warnings of this rule, e.g. param-description (repeatable).", "RULE"
)
QueriesArg = Annotated[
    str, typer.Argument(help="Labelled queries file (YAML, JSON or JSON Lines).", metavar="QUERIES")
]
FailUnderOpt = repeated(
    "--fail-under",
    "Exit 1 when a metric is lower, in percent as printed, e.g. ndcg@10=80"
    " (a value up to 1 is a fraction; repeatable).",
    "METRIC=PCT",
)
WorstOpt = Annotated[
    int, typer.Option("--worst", min=0, help="How many of the worst queries to list.")
]
K1Opt = Annotated[float | None, typer.Option("--k1", help="Term-frequency saturation k1 to try.")]
BOpt = repeated(
    "--b", "Length normalisation: a number for every field, or FIELD=B (repeatable).", "B"
)
MetricOpt = Annotated[
    str, typer.Option("--metric", help="What to maximise: ndcg@10, mrr@10, recall@1/5/10.")
]
HoldoutOpt = Annotated[
    float | None,
    typer.Option("--holdout", help="Hold out this share of queries at random (seeded)."),
]
TrainSplitOpt = text("--train-split", "Train on the queries of this split.")
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the random holdout.")]
RoundsOpt = Annotated[
    int, typer.Option("--rounds", min=1, help="Coordinate-ascent rounds at most.")
]
WriteOpt = flag(
    "--write",
    "Store the chosen settings in toolfind.toml (backup kept), unless they score worse on the"
    " held-out queries than the settings in use.",
)
ForceOpt = flag("--force", "With --write: write even settings that score worse held out.")

# -- serve-mcp and catalog pull ---------------------------------------------------------------

ServersOpt = repeated(
    "--servers",
    "Backend MCP servers: a Claude Desktop, Claude Code, VS Code or Cursor config file"
    " (repeatable; default: servers in toolfind.toml).",
    "FILE",
)
ExposureOpt = Annotated[
    Exposure,
    typer.Option(
        "--exposure",
        help="search: list only the meta-tools; direct: also every callable, non-deferred tool.",
    ),
]
MetaPrefixOpt = Annotated[str, typer.Option("--meta-prefix", help="Prefix of the meta-tool names.")]
HttpOpt = text(
    "--http",
    "Serve streamable HTTP on [HOST:]PORT (127.0.0.1 unless a host is given).",
    metavar="[HOST:]PORT",
)
TokenOpt = text("--token", "Bearer token HTTP clients must send (default $TOOLFIND_TOKEN).")
SeparatorOpt = Annotated[
    str, typer.Option("--separator", help="Between a backend server's name and its tool's name.")
]
CallTimeoutOpt = seconds("--call-timeout", "Seconds a forwarded tool call may take.")
PollIntervalOpt = seconds("--poll-interval", "Seconds between catalog change checks.")
NoWatchOpt = flag("--no-watch", "Do not watch the catalogs for changes.")
LogLevelOpt = Annotated[
    str, typer.Option("--log-level", help="debug, info, warning, error or critical (on stderr).")
]
AllowedHostOpt = repeated(
    "--allowed-host",
    "With --http: also accept this Host header, NAME or NAME:PORT (repeatable).",
    "HOST",
)
AllowedOriginOpt = repeated(
    "--allowed-origin",
    "With --http: also accept this Origin, scheme://host[:port] (repeatable).",
    "ORIGIN",
)
NoValidateArgumentsOpt = flag(
    "--no-validate-arguments",
    "Forward calls without checking their arguments against the tool's input schema.",
)
RetryInitialOpt = seconds("--retry-initial", "Seconds before retrying a failed backend (doubling).")
RetryMaxOpt = seconds("--retry-max", "Longest wait between a backend's retries.")
BackendWaitOpt = seconds(
    "--backend-wait",
    "For this many seconds from the first request, the first initialize, lists and searches"
    " wait for backends still connecting (until each is up or has failed once); 0: never wait.",
    metavar="SECONDS",
)
MaxResultSizeOpt = Annotated[
    str,
    typer.Option(
        "--max-result-size",
        help="Largest backend tool result relayed (e.g. 10MiB).",
        metavar="SIZE",
    ),
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Directory for the catalog files.")]
StartTimeoutOpt = seconds("--start-timeout", "Seconds a server may take to start.")
