"""The pass-through capabilities put together (`serve.passthrough.relay`), in memory: what is
declared, toolfind's own prompt and resource, paged lists, log levels."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from typer.testing import CliRunner

from tests.serve.support import FakeBackends, Subscribable, make_server
from toolfind.cli.app import app
from toolfind.models import Source, Tool
from toolfind.serve.passthrough.common import PAGE_SIZE
from toolfind.serve.passthrough.prompts import OWN_PROMPT
from toolfind.serve.passthrough.resources import OWN_URI

pytestmark = pytest.mark.anyio

CATALOG = {
    "namespace": "files",
    "tools": [
        {"name": "read_file", "description": "Read the contents of a text file. More text."},
        {"name": "compress_file", "description": "Compress a file into an archive.", "defer": True},
        {"name": "hash_file", "description": "Hash a file with SHA-256.", "defer": True},
    ],
}


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "catalogs"
    directory.mkdir()
    (directory / "files.json").write_text(json.dumps(CATALOG), encoding="utf-8")
    return directory


# -- cursors and names -------------------------------------------------------------------------


# -- toolfind's own prompt and resource, capabilities -------------------------------------------


async def test_without_backends_the_capabilities_are_what_toolfind_itself_serves(
    client: Client,
) -> None:
    caps = client.server_capabilities
    assert caps.resources is not None and caps.prompts is not None and caps.logging is not None
    assert caps.completions is None  # nothing to complete without backends
    resources = await client.list_resources()
    assert [r.uri for r in resources.resources] == [OWN_URI]
    assert (await client.list_resource_templates()).resource_templates == []
    assert [p.name for p in (await client.list_prompts()).prompts] == [OWN_PROMPT]


async def test_the_deferred_summaries_resource_and_prompt_are_the_cli_s_lines(
    client: Client, catalog_dir: Path
) -> None:
    markdown = CliRunner().invoke(
        app, ["summaries", "--deferred", "--format", "markdown", "-c", str(catalog_dir)]
    )
    assert markdown.exit_code == 0
    read = await client.read_resource(OWN_URI)
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text == markdown.stdout
    assert content.text == (
        "- **files/compress_file**: Compress a file into an archive.\n"
        "- **files/hash_file**: Hash a file with SHA-256.\n"
    )
    prompt = await client.get_prompt(OWN_PROMPT)
    block = prompt.messages[0].content
    assert isinstance(block, types.TextContent) and block.text == markdown.stdout
    every = await client.get_prompt(OWN_PROMPT, {"all": "true"})
    block = every.messages[0].content
    assert isinstance(block, types.TextContent) and "read_file" in block.text


async def test_the_deferred_tools_resource_says_how_to_defer_when_nothing_is(
    tmp_path: Path,
) -> None:
    """Not a blank resource: one line on what deferral is and where to set it, as the CLI's
    ``summaries --deferred`` says on stderr."""
    undeferred = {**CATALOG, "tools": CATALOG["tools"][:1]}
    (tmp_path / "files.json").write_text(json.dumps(undeferred), encoding="utf-8")
    server, _, _ = make_server([tmp_path / "files.json"])
    async with Client(server, mode="legacy") as c:
        read = await c.read_resource(OWN_URI)
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents)
    assert content.text.startswith("No deferred tools. A deferred tool stays out of the tool list")
    assert content.text.count("\n") == 1
    for way in ("defer: true", '"defer": true', "defer_namespaces"):
        assert way in content.text
    cli = CliRunner().invoke(app, ["summaries", "--deferred", "-c", str(tmp_path / "files.json")])
    assert cli.stdout == "" and cli.stderr.startswith(content.text.rstrip("\n"))


async def test_an_unknown_resource_or_prompt_is_a_protocol_error_naming_the_fix(
    client: Client,
) -> None:
    with pytest.raises(MCPError) as unknown:
        await client.read_resource("toolfind://nobody/file:///x")
    assert unknown.value.code == -32002 and "resources/list" in unknown.value.message
    with pytest.raises(MCPError) as prompt:
        await client.get_prompt("nobody__greet")
    assert prompt.value.code == -32602 and "prompts/list" in prompt.value.message


async def test_tools_list_pages_with_opaque_cursors(catalog_dir: Path) -> None:
    backends = FakeBackends()
    backends._tools = [
        Tool(
            name=f"weather__t{i:03}",
            description=f"Tool {i}.",
            namespace="weather",
            source=Source(file="mcp://weather"),
        )
        for i in range(2 * PAGE_SIZE + 10)
    ]
    server, _, _ = make_server([catalog_dir], backends, exposure="direct")
    async with Client(server, mode="legacy") as c:
        names: list[str] = []
        cursor: str | None = None
        while True:
            result = await c.list_tools(cursor=cursor)
            assert len(result.tools) <= PAGE_SIZE
            names.extend(t.name for t in result.tools)
            cursor = result.next_cursor
            if cursor is None:
                break
        assert len(names) == 5 + 2 * PAGE_SIZE + 10
        assert len(set(names)) == len(names)
        with pytest.raises(MCPError) as bad:
            await c.list_tools(cursor="bm9wZQ==")
        assert bad.value.code == -32602


async def test_set_level_is_answered(client: Client) -> None:
    import warnings

    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        assert isinstance(await client.set_logging_level("debug"), types.EmptyResult)


# -- allowed hosts and origins -----------------------------------------------------------------


# -- HTTP limits -------------------------------------------------------------------------------


async def test_a_backends_json_rpc_error_passes_on_whole_its_uris_as_clients_see_them(
    catalog_dir: Path,
) -> None:
    _, _, discovery = make_server([catalog_dir], Subscribable())
    error = MCPError(-32002, "Resource not found", {"uri": "note://gone", "more": [{"uri": "a:b"}]})
    passed = discovery.passthrough.passed_on("weather", None, error)
    assert (passed.error.code, passed.error.message) == (-32002, "Resource not found")
    assert passed.error.data == {
        "uri": "toolfind://weather/note://gone",
        "more": [{"uri": "toolfind://weather/a:b"}],
    }
