"""``catalog pull``: backends' tools written as MCP catalog files, with a change report."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import BACKENDS
from toolfind.backends.pull import ServerPull, pull, write_catalog
from toolfind.errors import ConfigError

pytestmark = pytest.mark.slow  # runs real backend MCP servers

SERVER = BACKENDS / "faulty_server.py"
FAULTY_TOOLS = [
    "add_tool",
    "crash",
    "echo",
    "env",
    "fail",
    "freeze",
    "hang",
    "search_tools",
    "shout",
]


def servers_file(path: Path, *extra_args: str) -> Path:
    doc = {
        "mcpServers": {
            "faulty": {"command": sys.executable, "args": [str(SERVER), *extra_args]},
            "broken": {"command": str(path.parent / "no-such-server")},
            "off": {"command": "never", "disabled": True},
        }
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def by_server(report: Any) -> dict[str, ServerPull]:
    return {s.server: s for s in report.servers}


def test_pull_writes_each_backend_as_a_catalog_then_reports_changes(tmp_path: Path) -> None:
    out = tmp_path / "catalogs"
    out.mkdir()
    (out / "broken.json").write_text('{"tools": []}\n', encoding="utf-8")
    config = servers_file(tmp_path / "servers.json")
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog:
        first = by_server(pull([config], out, environ={}, errlog=errlog))

        faulty = first["faulty"]
        assert faulty.status == "written" and faulty.backup is None
        assert faulty.file == str(out / "faulty.json")
        assert list(faulty.added) == FAULTY_TOOLS and faulty.tool_count == 9
        assert faulty.removed == () and faulty.changed == ()
        written = json.loads((out / "faulty.json").read_text(encoding="utf-8"))
        assert [t["name"] for t in written["tools"]][:2] == [
            "echo",
            "fail",
        ]  # backend order, own names
        assert written["tools"][0]["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
        assert sorted(t["name"] for t in written["tools"]) == FAULTY_TOOLS  # malformed ones dropped

        assert first["broken"].status == "failed"
        assert (first["broken"].error or "").startswith("command not found: ")
        assert (out / "broken.json").read_text(
            encoding="utf-8"
        ) == '{"tools": []}\n'  # left untouched
        assert first["off"].status == "disabled"
        assert not (out / "off.json").exists()

        servers_file(config, "--variant", "2")
        changed = by_server(pull([config], out, environ={}, errlog=errlog))["faulty"]
    assert changed.status == "written"
    assert (changed.added, changed.removed, changed.changed) == (
        ("whisper",),
        ("shout",),
        ("echo",),
    )
    assert changed.backup == str(out / "faulty.json.~1~")
    assert json.loads((out / "faulty.json.~1~").read_text(encoding="utf-8")) == written
    assert sorted(p.name for p in out.iterdir()) == [
        "broken.json",
        "faulty.json",
        "faulty.json.~1~",
    ]


def test_pull_reports_an_entry_it_cannot_use_as_failed_with_why(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text(
        '{"mcpServers": {"a": {"command": "x", "env": {"T": "${TOKEN}"}}}}', encoding="utf-8"
    )
    (report,) = pull([config], tmp_path / "out", environ={}).servers
    assert (report.server, report.status) == ("a", "failed")
    assert report.error == (
        "env.T: ${TOKEN} is not set; set TOKEN in the environment or write ${TOKEN:-default}"
    )


def test_pull_refuses_a_file_with_no_servers(tmp_path: Path) -> None:
    config = tmp_path / ".mcp.json"
    config.write_text('{"servers": 3}', encoding="utf-8")
    with pytest.raises(ConfigError, match="servers: must be an object"):
        pull([config], tmp_path / "out", environ={})


def test_write_catalog_replaces_atomically_and_keeps_a_backup(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "s.json"
    tool = {"name": "a", "inputSchema": {"type": "object"}}
    first = write_catalog("s", [tool], target)
    assert (first.status, first.added) == ("written", ("a",))
    same = write_catalog("s", [tool], target)
    assert same.status == "unchanged"
    renamed = write_catalog(
        "s", [{**tool, "description": "now described"}, {**tool, "name": "b"}], target
    )
    assert (renamed.status, renamed.added, renamed.changed) == ("written", ("b",), ("a",))
    assert json.loads((out / "s.json.~1~").read_text(encoding="utf-8")) == {"tools": [tool]}
    assert sorted(p.name for p in out.iterdir()) == [
        "s.json",
        "s.json.~1~",
    ]  # no temporary files left


def test_a_previous_file_that_is_not_a_tools_list_counts_as_empty(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    target.write_text("not json", encoding="utf-8")
    result = write_catalog("s", [{"name": "a", "inputSchema": {"type": "object"}}], target)
    assert (result.added, result.removed) == (("a",), ())
    assert (tmp_path / "s.json.~1~").read_text(encoding="utf-8") == "not json"


def test_pulled_files_load_as_catalogs_with_the_server_as_namespace(tmp_path: Path) -> None:
    catalog = pytest.importorskip("toolfind.catalog.loader")
    out = tmp_path / "out"
    out.mkdir()
    write_catalog(
        "time",
        [{"name": "get_current_time", "description": "Now.", "inputSchema": {"type": "object"}}],
        out / "time.json",
    )
    loaded = catalog.load([out])
    assert [(t.namespace, t.name) for t in loaded.tools] == [("time", "get_current_time")]


def test_a_backend_printing_a_banner_on_stdout_is_pulled_with_one_warning_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    lifecycle = BACKENDS / "lifecycle_server.py"
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "banner": {"command": sys.executable, "args": [str(lifecycle), "--banner"]}
                }
            }
        ),
        encoding="utf-8",
    )
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog:
        report = by_server(pull([config], tmp_path / "out", environ={}, errlog=errlog))
    assert report["banner"].status == "written" and report["banner"].tool_count == 4
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "server 'banner' wrote a line that is not JSON-RPC on stdout (ignored): stdout is for "
        "protocol messages; a banner or log belongs on stderr"
    ]
    assert not any(r.exc_info for r in caplog.records)


def test_a_server_whose_file_cannot_be_written_is_reported_and_the_others_are_written(
    tmp_path: Path,
) -> None:
    long_name = "L" * 300  # legal in a host's config, too long for a file name
    doc = {
        "mcpServers": {
            name: {"command": sys.executable, "args": [str(SERVER)]}
            for name in ("first", long_name, "third")
        }
    }
    config = tmp_path / "servers.json"
    config.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "out"
    with open(tmp_path / "stderr.log", "w", encoding="utf-8") as errlog:
        report = by_server(pull([config], out, environ={}, errlog=errlog))
    assert report["first"].status == report["third"].status == "written"
    failed = report[long_name]
    assert failed.status == "failed" and failed.error is not None
    assert failed.error.endswith(": cannot read: File name too long")
    assert sorted(p.name for p in out.iterdir()) == ["first.json", "third.json"]
