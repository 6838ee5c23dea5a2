"""No backend's secret reaches a log line, a JSON error or an MCP result (`backends.redact`).

The end-to-end test feeds secrets through every backend kind (stdio with env and arguments,
streamable HTTP and SSE with URL credentials, query values and headers) and every failure
(HTTP 401/404/500, connection refused, DNS failure, a crash at start and mid-call, a call
timeout, a start timeout, output that is not JSON-RPC, a backend repeating its secrets in an
error), through the real CLI, and greps everything toolfind wrote: serve-mcp's stderr at
debug level (every library's lines), every MCP result and error, ``catalog pull --json``
and its stderr. The unit tests pin down `redact` itself and the logging filters.
"""

from __future__ import annotations

import base64
import http.server
import io
import json
import logging
import os
import socket
import string
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from tests.helpers import BACKENDS
from tests.serve.support import Log, server_env, structured, text_of
from toolfind.backends.config import ServerSpec
from toolfind.backends.redact import (
    NOT_SECRET,
    RedactingFilter,
    install,
    key_like,
    redact,
    remember_values,
    show_url,
)

LEAKY = BACKENDS / "leaky_server.py"

ENV_SECRET = "envS3cret-Value-A1"
ARG_SECRET = "argS3cret-Value-B2"
ARG_TOKEN = "argT0ken-Value-C3"
HEADER_SECRET = "hdrS3cret-Value-D4"
HEADER_KEY = "hdrK3y-Value-E5"
USER = "urlUs3r-F6"
PASSWORD = "urlP@ss w0rd-G7"  # percent-encoded in the URL
QUERY_SECRET = "qryS3cret-Value-H8"
OWN_TOKEN = "ownT0ken-Value-I9"  # in toolfind's environment, expanded from ${LEAKY_TOKEN}
PATH_KEY = "pathK3y-Value-J10"  # a hosted server's key in its URL's path
PATH_WORD = "hiddenprojectword"  # a path segment that is a plain word, yet private
SECRETS = (ENV_SECRET, ARG_SECRET, ARG_TOKEN, HEADER_SECRET, HEADER_KEY, USER, PASSWORD)
SECRETS += (QUERY_SECRET, OWN_TOKEN, PATH_KEY, PATH_WORD)
#: Where the remote backends are: a key and a private word in each path.
SECRET_PATH = f"/{PATH_KEY}/{PATH_WORD}"


def spellings(secret: str) -> set[str]:
    """A secret and the forms a library may print it in."""
    return {
        secret,
        quote(secret, safe=""),
        quote(secret),
        secret.replace(" ", "+"),
        json.dumps(secret)[1:-1],
    }


BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
FORBIDDEN = {form for secret in SECRETS for form in spellings(secret)} | {BASIC}


#: The user name beside a password is only a name: not hidden on its own, but never shown
#: by what toolfind writes (URLs are shown without their userinfo).
def leaks(text: str) -> list[str]:
    return sorted(form for form in FORBIDDEN if form in text)


# -- redact ---------------------------------------------------------------------------------


def test_a_servers_secrets_are_known_as_soon_as_it_is_declared() -> None:
    ServerSpec(
        name="unit",
        transport="http",
        url=f"https://{USER}:{quote(PASSWORD, safe='')}@h.example/mcp?api_key={QUERY_SECRET}",
        headers={"Authorization": f"Bearer {HEADER_SECRET}", "X-Api-Key": HEADER_KEY},
        args=("--api-key=" + ARG_SECRET, "--token", ARG_TOKEN),
        env={"API_KEY": ENV_SECRET, "LOG_LEVEL": "debug", "HOME": "/home/me", "PATH": "/a:/b"},
    )
    said = " | ".join(
        [
            f"token {HEADER_SECRET} and {HEADER_KEY} and {ARG_TOKEN}; env {ENV_SECRET}",
            f"argv --api-key={ARG_SECRET}; pass {quote(PASSWORD)} {PASSWORD}",
            f"at https://{USER}:{quote(PASSWORD, safe='')}@h.example/mcp",
            f"basic {BASIC}; query {QUERY_SECRET}; json {json.dumps(PASSWORD)}",
            "level debug: keep the words that are never secrets, /home/me/x and /a:/b",
        ]
    )
    shown = redact(said)
    assert leaks(shown) == []
    assert "level debug: keep the words that are never secrets, /home/me/x and /a:/b" in shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "Client error '401 Unauthorized' for url 'http://al:pw@127.0.0.1:9/sse?api_key=zz&x=1'",
            "Client error '401 Unauthorized' for url 'http://***@127.0.0.1:9/sse?api_key=***&x=***'",
        ),
        (
            "GET https://tok@api.example/v1#access_token=abc",
            "GET https://***@api.example/v1#access_token=***",
        ),
        ("Authorization: Bearer abcdefgh12345678", "Authorization: *** ***"),
        ('{"password": "hunter22", "user": "bob"}', '{"password": "***", "user": "bob"}'),
        ("run srv --db-password=hunter22 -v", "run srv --db-password=*** -v"),
        (
            "could not re-read its tools: authentication failed",
            "could not re-read its tools: authentication failed",
        ),
        (
            "server 'git' (stdio: uvx) is unavailable: command not found: uvx",
            "server 'git' (stdio: uvx) is unavailable: command not found: uvx",
        ),
    ],
)
def test_what_looks_like_a_secret_is_hidden_whatever_its_value(text: str, shown: str) -> None:
    assert redact(text) == shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://actions.zapier.com/mcp/sk-ak-Zx9Key42/sse", "https://actions.zapier.com"),
        ("http://u:p4ss@127.0.0.1:8123/mcp?api_key=k#frag", "http://127.0.0.1:8123"),
        ("HTTPS://Mcp.Example.COM:8443/s/abc", "https://mcp.example.com:8443"),
        ("http://[::1]:9000/x/y", "http://[::1]:9000"),
        ("https://host.example", "https://host.example"),
        ("not a url at all", "***"),
        ("http://host:99999999/x", "***"),  # an impossible port: nothing of it is shown
    ],
)
def test_a_configured_url_is_shown_as_its_origin_alone(url: str, shown: str) -> None:
    assert show_url(url) == shown


def test_a_servers_description_names_no_part_of_its_url_but_the_origin() -> None:
    spec = ServerSpec(
        name="zap", transport="sse", url="https://me:pw12@zap.example:444/mcp/ab/cd?q=1#f"
    )
    assert spec.describe() == "sse: https://zap.example:444"


def test_a_key_in_a_configured_urls_path_is_hidden_in_any_text() -> None:
    key = "sk-ak-Zx9PathSecret42"
    ServerSpec(name="zap", transport="sse", url=f"http://127.0.0.1:8765/mcp/{key}/sse")
    texts = [
        f"Client error '401 Unauthorized' for url 'http://127.0.0.1:8765/mcp/{key}/sse'",
        f"POST /mcp/{key}/messages/?session_id=5f2 HTTP/1.1",  # the path alone
        f"endpoint {quote('/mcp/' + key + '/messages')}",  # percent-encoded
        f'{{"url": "http://127.0.0.1:8765/mcp/{key}/sse"}}',  # in JSON
    ]
    for text in texts:
        assert key not in redact(text), text
    assert redact(texts[0]) == "Client error '401 Unauthorized' for url 'http://127.0.0.1:8765/***'"


def test_any_path_at_a_configured_origin_is_masked_plain_words_included() -> None:
    ServerSpec(name="p", transport="http", url="https://Private.Example/team/projectword/mcp")
    said = redact(
        "redirected to https://private.example:443/team/projectword/login?next=/mcp (see "
        "https://docs.example/errors/401) and (https://private.example/other)"
    )
    assert "projectword" not in said and "/other" not in said
    assert said.startswith("redirected to https://private.example:443/*** (see ")
    assert "https://docs.example/errors/401" in said  # another origin's link stays whole
    assert said.endswith("(https://private.example/***)")


@pytest.mark.parametrize("word", ["mcp", "sse", "messages", "v1", "streamable_http", "api"])
def test_path_words_are_not_remembered_as_secrets(word: str) -> None:
    ServerSpec(name="w", transport="http", url=f"https://words.example/{word}/x")
    assert not key_like(word)
    assert redact(f"server 'w': 3 {word} listed") == f"server 'w': 3 {word} listed"


@given(
    key=st.text(alphabet=string.ascii_letters + string.digits + "-_~", min_size=8, max_size=40)
    .filter(key_like)
    .filter(lambda k: k.lower() not in NOT_SECRET),
    port=st.integers(1, 65535),
)
@settings(max_examples=60, deadline=None)
def test_a_key_like_path_segment_never_survives_redaction(key: str, port: int) -> None:
    url = f"https://hosted.example:{port}/mcp/{key}/sse"
    spec = ServerSpec(name="h", transport="sse", url=url)
    assert key not in spec.describe()
    for text in (url, f"GET {url} failed", f"path /mcp/{key}/sse", f"'{quote(url, safe='')}'"):
        assert key not in redact(text), text


def test_redacting_hostile_text_takes_linear_time() -> None:
    # Each pattern is tried at token starts only and runs with bounded names: a text built to
    # make a backtracking pattern explode is done at once (a thread, so the test cannot hang).
    texts = [
        "a" * 200_000 + "://" + "b" * 200_000,
        "a-" * 200_000 + "token=" + "x" * 100_000,
        "?" * 100_000 + "&x=" * 50_000,
        "Bearer " * 100_000,
    ]
    done: list[str] = []
    thread = threading.Thread(target=lambda: done.extend(map(redact, texts)), daemon=True)
    thread.start()
    thread.join(30)
    assert len(done) == len(texts)


def test_log_lines_of_any_library_are_redacted_tracebacks_included() -> None:
    remember_values(["lib-S3cret-Value"])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    install(handler)
    log = logging.getLogger("some.library")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("request to %s failed", "http://u:lib-S3cret-Value@h/x?k=v")
        try:
            raise RuntimeError("boom with lib-S3cret-Value inside")
        except RuntimeError:
            log.exception("with a traceback, and a forged\nsecond line")
    finally:
        log.removeHandler(handler)
        log.propagate = True
    written = stream.getvalue()
    assert "lib-S3cret-Value" not in written
    assert "request to http://***@h/x?k=*** failed" in written
    assert "RuntimeError: boom with *** inside" in written
    assert "a forged\\x0asecond line" in written  # one record, one line


def test_toolfind_loggers_redact_whoever_handles_them(caplog: pytest.LogCaptureFixture) -> None:
    remember_values(["own-S3cret-Value"])
    with caplog.at_level(logging.INFO, "toolfind.backends"):
        logging.getLogger("toolfind.backends").info(
            "server %r: %s", "x", ValueError("own-S3cret-Value")
        )
    assert "own-S3cret-Value" not in caplog.text
    assert "server 'x': ***" in caplog.text
    logger_filters = logging.getLogger("toolfind.serve").filters
    assert any(isinstance(f, RedactingFilter) for f in logger_filters)


# -- end to end -----------------------------------------------------------------------------


class Stub(http.server.BaseHTTPRequestHandler):
    """An HTTP server that is not an MCP server: ``/401/...``, ``/404/...``, ``/500/...``
    answer that status, ``/bad/...`` answers 200 with a body that is not JSON-RPC."""

    def answer(self) -> None:
        self.close_connection = True
        status = self.path.split("/")[1]
        if status == "bad":
            body = b"data: {not json\n\n" if self.command == "GET" else b"{not json"
            kind = "text/event-stream" if self.command == "GET" else "application/json"
            self.send_response(200)
            self.send_header("content-type", kind)
        else:
            body = b"no"
            self.send_response(int(status))
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = answer

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture(scope="module")
def stub() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def leaky_http() -> Iterator[int]:
    """The leaky server over streamable HTTP, in a process of its own."""
    process = subprocess.Popen(
        [sys.executable, str(LEAKY), "--http", f"--path=/mcp{SECRET_PATH}"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("port "), line
        yield int(line.split()[1])
    finally:
        process.terminate()
        process.wait(15)
        if process.stdout is not None:
            process.stdout.close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def servers(stub: int, leaky: int) -> dict[str, Any]:
    """Every backend kind, each failing its own way, each given secrets."""
    auth = f"{USER}:{quote(PASSWORD, safe='')}@"
    query = f"?api_key={QUERY_SECRET}&mode=x"
    headers = {"Authorization": "Bearer ${LEAKY_TOKEN}", "X-Api-Key": HEADER_KEY}
    stdio_secrets = {
        "env": {"API_KEY": ENV_SECRET, "OTHER": HEADER_SECRET},
        "args": [str(LEAKY), f"--api-key={ARG_SECRET}", "--token", ARG_TOKEN],
    }

    def stdio(*extra: str, command: str = sys.executable) -> dict[str, Any]:
        return {
            "command": command,
            "env": stdio_secrets["env"],
            "args": [*stdio_secrets["args"], *extra],
        }

    def remote(kind: str, url: str) -> dict[str, Any]:
        return {"type": kind, "url": url, "headers": headers}

    local = f"http://{auth}127.0.0.1"
    return {
        "stdio_ok": stdio(),
        "stdio_crash": stdio("--crash-at-start"),
        "stdio_garbage": stdio("--garbage"),
        "stdio_missing": stdio(command=f"/nonexistent/leaky-{ARG_SECRET}"),
        "http_ok": remote("http", f"{local}:{leaky}/mcp{SECRET_PATH}{query}"),
        **{
            f"http_{s}": remote("http", f"{local}:{stub}/{s}/mcp{SECRET_PATH}{query}")
            for s in (401, 404, 500)
        },
        **{
            f"sse_{s}": remote("sse", f"{local}:{stub}/{s}{SECRET_PATH}/sse{query}")
            for s in (401, 404, 500)
        },
        "http_bad": remote("http", f"{local}:{stub}/bad{SECRET_PATH}/mcp{query}"),
        "http_refused": remote("http", f"{local}:{closed_port()}/mcp{SECRET_PATH}{query}"),
        "http_dns": remote("http", f"http://{auth}leaky-host.invalid/mcp{SECRET_PATH}{query}"),
    }


def environment(work: Path) -> dict[str, str]:
    return {**server_env(work), "PATH": os.environ.get("PATH", ""), "LEAKY_TOKEN": OWN_TOKEN}


async def failed_call(client: Client, name: str, arguments: dict[str, Any] | None = None) -> str:
    """What a call that fails says: a tool error's text, or the backend's JSON-RPC error
    (passed on whole)."""
    try:
        result = await client.call_tool(name, arguments or {})
    except MCPError as exc:
        return f"{exc.error.code} {exc.error.message} {json.dumps(exc.error.data)}"
    assert result.is_error, name
    return text_of(result)


async def everything_serve_mcp_says(work: Path, servers_file: Path) -> tuple[list[str], str]:
    """Every result and error of a session that lists, asks for the categories and calls every
    tool (each fails), and serve-mcp's whole stderr at debug level."""
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "toolfind",
            "serve-mcp",
            "--servers",
            str(servers_file),
            "--log-level",
            "debug",
            "--call-timeout",
            "2",
            "--retry-initial",
            "300",
            "--retry-max",
            "300",
            "--backend-wait",
            "120",
        ],
        env=environment(work),
        cwd=str(work),
    )
    said: list[str] = []
    read, write = os.pipe()
    log = Log(os.fdopen(read, "rb"))
    with os.fdopen(write, "w", encoding="utf-8") as errlog, anyio.fail_after(300):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            listed = await client.list_tools()  # waits (--backend-wait) for every backend
            said.append(json.dumps([t.model_dump(mode="json") for t in listed.tools]))
            categories = structured(await client.call_tool("proxy_tool_categories", {}))
            said.append(json.dumps(categories))
            details = {c["name"]: c.get("detail", "") for c in categories["categories"]}
            # (http_ok's process stays up: catalog pull reads it next.)
            for name, tools in (
                ("stdio_ok", ("refuse", "hang", "crash")),
                ("http_ok", ("refuse", "hang")),
            ):
                for tool in tools:
                    said.append(await failed_call(client, f"{name}__{tool}"))
            for name in details:
                said.append(
                    await failed_call(client, "proxy_call_tool", {"name": f"{name}__refuse"})
                )
            said.append((await client.list_resources()).model_dump_json())
            said.append((await client.list_prompts()).model_dump_json())
            try:
                await client.read_resource("toolfind://http_ok/secret://x")
            except MCPError as exc:
                said.append(str(exc))
    log.wait_closed()
    return [*said, json.dumps(details)], log.text


@pytest.mark.anyio
@pytest.mark.e2e
@pytest.mark.slow
async def test_no_secret_reaches_a_log_a_json_error_or_a_model(
    tmp_path: Path, stub: int, leaky_http: int
) -> None:
    declared = servers(stub, leaky_http)
    servers_file = tmp_path / "servers.json"
    servers_file.write_text(json.dumps({"mcpServers": declared}), encoding="utf-8")

    said, stderr = await everything_serve_mcp_says(tmp_path, servers_file)

    # Each failure was met and reported, in words that name no secret.
    details = json.loads(said[-1])
    assert "401" in details["sse_401"] and "404" in details["sse_404"]
    assert "500" in details["sse_500"] and "Not Found" in details["http_404"]
    assert "command not found" in details["stdio_missing"]
    assert "Name or service not known" in details["http_dns"]
    assert all("\n" not in detail for detail in details.values()), details  # one line each
    for failed in ("stdio_crash", "stdio_garbage", "http_refused", "http_401", "http_bad"):
        assert details[failed], failed
    refused = [s for s in said if s.startswith("-32050 refused: ")]  # passed on whole
    assert any("started as" in s for s in refused) and any("called at" in s for s in refused)
    assert any("did not answer" in s for s in said)  # the hang
    assert any("during the call; it is being restarted" in s for s in said)  # the crash
    assert "HTTP Request" in stderr  # httpx's own lines are there, redacted
    # toolfind names a remote backend by its URL's origin alone.
    assert f"server 'sse_401' (sse: http://127.0.0.1:{stub}) is unavailable" in stderr
    for text in [*said, stderr]:
        assert leaks(text) == [], text[:2000]

    # catalog pull, with backends that never finish starting (a start timeout): one that
    # never answers, one whose SSE stream is not MCP.
    silent = {
        "stdio_silent": {
            "command": sys.executable,
            "args": ["-c", "import time; time.sleep(600)", f"--api-key={ARG_SECRET}"],
            "env": {"API_KEY": ENV_SECRET},
        },
        "sse_bad": {
            "type": "sse",
            "url": f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{stub}/bad{SECRET_PATH}/sse?k={QUERY_SECRET}",
        },
    }
    extra = tmp_path / "extra.json"
    extra.write_text(json.dumps({"mcpServers": silent}), encoding="utf-8")
    # The silent ones time out whatever the machine's load (they never answer); the servers
    # that answer (start, or refuse) are asked for again without a race, at a start timeout
    # no load reaches.
    ok = tmp_path / "ok.json"
    ok.write_text(
        json.dumps({"mcpServers": {k: declared[k] for k in ("stdio_ok", "http_ok", "sse_401")}}),
        encoding="utf-8",
    )
    for files, start_timeout in (((servers_file, extra), 5), ((ok,), 600)):
        pulled = pull(tmp_path, files, start_timeout)
        report = {r["server"]: r for r in json.loads(pulled.stdout)}
        if files == (ok,):
            for name in ("stdio_ok", "http_ok"):
                assert report[name]["status"] == "written", (report[name], pulled.stderr[-2000:])
            assert "401" in report["sse_401"]["error"]
        else:
            assert "did not start within 5 s" in report["stdio_silent"]["error"]
        assert leaks(pulled.stdout) == [] and leaks(pulled.stderr) == [], pulled.stderr[-3000:]


def pull(
    work: Path, files: tuple[Path, ...], start_timeout: int
) -> subprocess.CompletedProcess[str]:
    """``toolfind catalog pull --json`` of ``files`` into a directory of its own (a server
    that one pull wrote is ``unchanged`` for the next)."""
    servers = [arg for file in files for arg in ("--servers", str(file))]
    return subprocess.run(
        [
            *(sys.executable, "-m", "toolfind", "catalog", "pull", *servers),
            *("-o", str(work / f"out-{start_timeout}"), "--json"),
            *("--start-timeout", str(start_timeout)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, **environment(work)},
        cwd=work,
        check=False,
        timeout=900,
    )
