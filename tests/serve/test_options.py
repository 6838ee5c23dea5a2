"""What serve-mcp is asked to do (`serve.options`): the HTTP address, the token rule, option
checks, allowed hosts and origins from toolfind.toml and the command line."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolfind.cli.app import app
from toolfind.errors import ConfigError
from toolfind.serve.options import (
    HttpAddress,
    ServeOptions,
    allowed_from_config,
    parse_http_address,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8080", HttpAddress("127.0.0.1", 8080)),
        ("0.0.0.0:9000", HttpAddress("0.0.0.0", 9000)),
        ("[::1]:0", HttpAddress("::1", 0)),
        ("localhost:8000", HttpAddress("localhost", 8000)),
    ],
)
def test_parse_http_address_accepts_port_and_host_port(text: str, expected: HttpAddress) -> None:
    assert parse_http_address(text) == expected


@pytest.mark.parametrize("text", ["", "http", "1.2.3.4:", ":80", "70000", "[::1]80"])
def test_parse_http_address_refuses_bad_input_with_one_line(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^--http"):
        parse_http_address(text)


def test_a_non_loopback_http_address_requires_a_token() -> None:
    options = ServeOptions(http=HttpAddress("0.0.0.0", 8080))
    with pytest.raises(ConfigError, match="give --token or set TOOLFIND_TOKEN"):
        options.checked({})
    assert options.checked({"TOOLFIND_TOKEN": "s3cret"}).token == "s3cret"
    assert ServeOptions(http=HttpAddress("127.0.0.1", 0)).checked({}).token is None


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("exposure", "all", "--exposure 'all'"),
        ("meta_prefix", "proxy tools ", "--meta-prefix"),
        ("log_level", "loud", "--log-level 'loud'"),
        ("call_timeout", 0.0, "--call-timeout"),
    ],
)
def test_invalid_options_are_config_errors(field: str, value: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        replace(ServeOptions(), **{field: value}).checked({})


def test_allowed_hosts_come_from_toml_and_the_command_line() -> None:
    table = {"allowed_hosts": ["a.lan"], "allowed_origins": "https://x.example"}
    hosts, origins = allowed_from_config(table, "toolfind.toml", ["b.lan", "a.lan"], [])
    assert hosts == ("a.lan", "b.lan") and origins == ("https://x.example",)
    with pytest.raises(ConfigError) as bad:
        allowed_from_config({"allowed_hosts": [3]}, "toolfind.toml", [], [])
    assert str(bad.value) == "toolfind.toml: serve.allowed_hosts: must be a list of strings"
    with pytest.raises(ConfigError) as origin:
        allowed_from_config({"allowed_origins": ["app.example"]}, "toolfind.toml", [], [])
    assert str(origin.value).startswith("toolfind.toml: serve.allowed_origins: --allowed-origin")


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--allowed-host", "http://x.lan"), ("--allowed-host", "*"), ("--allowed-origin", "x.lan")],
)
def test_a_malformed_allowed_host_or_origin_is_one_error_line(
    catalog_dir: Path, flag: str, value: str
) -> None:
    result = CliRunner().invoke(
        app, ["serve-mcp", "-c", str(catalog_dir), "--http", "0", flag, value]
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {flag} {value!r}: give")
    assert len(result.stderr.strip().splitlines()) == 1
