"""What the pass-through capabilities share (`serve.passthrough.common`): list cursors and
exposed URIs."""

from __future__ import annotations

import pytest
from mcp.shared.exceptions import MCPError

from toolfind.serve.passthrough.common import PAGE_SIZE, backend_uri, exposed_uri, page
from toolfind.serve.passthrough.resources import OWN_URI

pytestmark = pytest.mark.anyio


def test_pages_follow_their_cursors_to_the_end() -> None:
    items = list(range(2 * PAGE_SIZE + 3))
    seen: list[int] = []
    cursor: str | None = None
    pages = 0
    while True:
        chunk, cursor = page(items, cursor, "tools")
        seen.extend(chunk)
        pages += 1
        if cursor is None:
            break
    assert seen == items and pages == 3


@pytest.mark.parametrize("cursor", ["junk", "", "dG9vbHM6MA==", "cHJvbXB0czox", "dG9vbHM6OTk5"])
def test_a_cursor_not_given_out_for_this_list_is_invalid_params(cursor: str) -> None:
    # "tools:0" (never given out), "prompts:1" (another list's), "tools:999" (past the end)
    with pytest.raises(MCPError) as raised:
        page(list(range(10)), cursor, "tools")
    assert raised.value.code == -32602


@pytest.mark.parametrize(
    "uri", ["file:///tmp/a%2Fb.txt", "note://{name}", "https://x.example/a?b=c#d", "urn:isbn:1"]
)
def test_backend_uris_round_trip_verbatim(uri: str) -> None:
    exposed = exposed_uri("my-server_2", uri)
    assert exposed == f"toolfind://my-server_2/{uri}"
    assert backend_uri(exposed) == ("my-server_2", uri)


@pytest.mark.parametrize("uri", [OWN_URI, "toolfind://", "toolfind://server", "file:///x"])
def test_uris_that_are_not_a_backend_s_do_not_route(uri: str) -> None:
    assert backend_uri(uri) is None
