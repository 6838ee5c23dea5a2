"""The command line, through typer.testing.CliRunner, over real catalog files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from importlib.metadata import version
from pathlib import Path

import pytest
import typer
import typer.main
from typer.models import CommandInfo
from typer.testing import CliRunner

from tests.conftest import REPO, SHIPPED
from toolfind import cli, wire
from toolfind.cli import app, app_for

runner = CliRunner()


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


SMALL = """\
namespace: files
tags: [filesystem]
tools:
  - name: read_file
    description: Read a text file and return its contents.
    parameters:
      type: object
      properties:
        path: {type: string, description: Path of the file to read.}
      required: [path]
  - name: compress_file
    description: Compress a file into a zip or tar.gz archive.
    search_hint: zip gzip archive pack
    defer: true
    parameters:
      type: object
      properties:
        path: {type: string, description: File to compress.}
        format: {type: string, enum: [zip, tar.gz], description: Archive format.}
  - name: search_web
    namespace: web
    description: Search the web for pages matching a query.
  - name: hidden_tool
    enabled: false
    description: A disabled tool that never shows in search.
"""


@pytest.fixture
def small(tmp_path: Path) -> str:
    return str(write(tmp_path / "cat" / "files.yaml", SMALL))


def test_version_matches_the_installed_distribution() -> None:
    code, out, _ = invoke("--version")
    assert code == 0
    assert out.strip() == f"toolfind {version('toolfind')}"


def test_search_json_has_the_documented_shape(small: str) -> None:
    code, out, _ = invoke("search", "compress a file", "-c", small, "--json")
    assert code == 0
    document = json.loads(out)
    assert tuple(document) == wire.SEARCH_KEYS
    first = document["hits"][0]
    assert first["name"] == "compress_file"
    assert tuple(first)[: len(wire.HIT_KEYS)] == wire.HIT_KEYS
    assert first["deferred"] is True
    assert first["schema"]["properties"]["format"]["enum"] == ["zip", "tar.gz"]
    assert first["source"] == {"file": small, "pointer": "/tools/1"}


def test_search_for_a_tool_name_returns_it_first_as_exact(small: str) -> None:
    code, out, _ = invoke("search", "web/search_web", "-c", small, "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert hits[0]["name"] == "search_web"
    assert hits[0]["match"] == "exact"


def test_search_with_no_matching_term_is_an_empty_list_and_a_hint(small: str) -> None:
    code, out, err = invoke("search", "xyzzy", "-c", small, "--json")
    assert code == 0
    assert json.loads(out) == {"query": "xyzzy", "hits": [], "unmatched_terms": ["xyzzy"]}
    assert "No tool mentions: xyzzy" in err


def test_search_never_returns_disabled_tools(small: str) -> None:
    _, out, _ = invoke("search", "disabled tool never shows", "-c", small, "--json")
    assert all(h["name"] != "hidden_tool" for h in json.loads(out)["hits"])


def test_search_filters_by_namespace(small: str) -> None:
    _, out, _ = invoke("search", "file web", "-c", small, "--namespace", "web", "--json")
    assert [h["namespace"] for h in json.loads(out)["hits"]] == ["web"]


def test_search_unknown_weight_field_is_an_error(small: str) -> None:
    code, _, err = invoke("search", "file", "-c", small, "--weight", "nam=3")
    assert code == 1
    assert err.strip() == (
        "Error: --weight 'nam=3': unknown field 'nam'; fields are name, namespace, description, params, tags, search_hint"
    )


def test_search_batch_mode_prints_one_json_line_per_query(small: str, tmp_path: Path) -> None:
    queries = write(tmp_path / "q.txt", 'read a file\n\n{"query": "search the web"}\n')
    code, out, _ = invoke("search", "--queries", str(queries), "-c", small)
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [d["query"] for d in lines] == ["read a file", "search the web"]
    assert lines[0]["hits"][0]["name"] == "read_file"
    assert lines[1]["hits"][0]["name"] == "search_web"


def test_search_batch_mode_reads_stdin(small: str) -> None:
    code, out, _ = invoke("search", "--queries", "-", "-c", small, input="read file\n")
    assert code == 0
    assert json.loads(out)["hits"][0]["name"] == "read_file"


def test_search_without_a_query_is_a_usage_error(small: str) -> None:
    code, _, err = invoke("search", "-c", small)
    assert code == 2
    assert "search needs a QUERY" in err


def test_show_prints_the_schema_in_each_format(small: str) -> None:
    code, out, _ = invoke("show", "read_file", "-c", small, "--format", "openai", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["type"] == "function"
    assert document["function"]["name"] == "read_file"


@pytest.mark.parametrize(
    "spelling",
    ["files/read_file", "files:read_file", "files__read_file", "files.read_file", "READ-FILE"],
)
def test_show_accepts_every_spelling(small: str, spelling: str) -> None:
    code, out, _ = invoke("show", spelling, "-c", small, "--json")
    assert code == 0, out
    assert json.loads(out)["name"] == "read_file"


def test_show_miss_suggests_the_closest_name(small: str) -> None:
    code, out, err = invoke("show", "serch_web", "-c", small)
    assert code == 1
    assert out == ""
    assert err.strip() == "Error: No tool named 'serch_web'. Did you mean 'search_web'?"


def test_list_json_rows(small: str) -> None:
    code, out, _ = invoke("list", "-c", small, "--json")
    assert code == 0
    rows = json.loads(out)
    assert all(tuple(r) == wire.ROW_KEYS for r in rows)
    assert {r["name"] for r in rows} == {"read_file", "compress_file", "search_web"}
    _, out, _ = invoke("list", "-c", small, "--deferred", "--json")
    assert [r["name"] for r in json.loads(out)] == ["compress_file"]


def test_schemas_exclude_deferred_by_default_and_round_trip(small: str, tmp_path: Path) -> None:
    code, out, _ = invoke("schemas", "-c", small, "--format", "anthropic")
    assert code == 0
    tools = json.loads(out)
    assert {t["name"] for t in tools} == {"read_file", "search_web"}
    again = write(tmp_path / "again" / "files.json", out)
    _, out2, _ = invoke("schemas", "-c", str(again), "--format", "anthropic")
    assert json.loads(out2) == tools
    _, out3, _ = invoke("schemas", "-c", small, "--include-deferred")
    assert len(json.loads(out3)) == 3


def test_similar_lists_shared_terms(small: str) -> None:
    code, out, _ = invoke("similar", "read_file", "-c", small, "--json")
    assert code == 0
    items = json.loads(out)
    assert items and all(tuple(i) == wire.SIMILAR_KEYS for i in items)
    assert items[0]["name"] == "compress_file"
    assert "file" in items[0]["shared_terms"]


def test_categories_json_counts(small: str) -> None:
    code, out, _ = invoke("categories", "-c", small, "--json")
    assert code == 0
    document = json.loads(out)
    assert tuple(document) == wire.CATEGORIES_KEYS
    files = next(c for c in document["categories"] if c["name"] == "files")
    assert files == {"name": "files", "tool_count": 2, "deferred_count": 1, "tags": ["filesystem"]}
    assert document["total_tools"] == 3


def test_summaries_default_to_deferred_tools(small: str) -> None:
    code, out, _ = invoke("summaries", "-c", small)
    assert code == 0
    assert out == "compress_file: Compress a file into a zip or tar.gz archive.\n"
    _, out, _ = invoke("summaries", "-c", small, "--all", "--format", "markdown")
    assert "- **read_file**: Read a text file and return its contents." in out.splitlines()


def test_validate_reports_errors_and_exits_1(tmp_path: Path) -> None:
    bad = write(
        tmp_path / "bad.json", '[{"name": "x", "description": "Bad one.", "parameters": 5}]'
    )
    code, out, _ = invoke("validate", str(bad), "--json")
    assert code == 1
    findings = json.loads(out)
    assert findings and all(tuple(f) == wire.FINDING_KEYS for f in findings)
    assert findings[0]["severity"] == "error"


def test_validate_the_shipped_catalogs_is_clean() -> None:
    code, out, _ = invoke("validate", str(SHIPPED), "--strict", "--json")
    assert code == 0, out
    assert json.loads(out) == []


def test_missing_catalog_path_is_one_error_line(tmp_path: Path) -> None:
    code, _, err = invoke("search", "x", "-c", str(tmp_path / "nope"))
    assert code == 1
    assert err.startswith("Error: ") and err.count("\n") == 1


def test_cache_path_info_clear(small: str, isolated: Path) -> None:
    _, out, _ = invoke("cache", "path")
    assert out.strip() == str(isolated)
    invoke("search", "file", "-c", small)
    _, out, _ = invoke("cache", "info", "--json")
    assert json.loads(out)["indexes"] == 1
    code, _, err = invoke("cache", "clear")
    assert code == 0 and "Removed" in err
    _, out, _ = invoke("cache", "info", "--json")
    assert json.loads(out)["indexes"] == 0


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    names = [c.name or c.callback.__name__ for c in app.registered_commands if c.callback]
    for name in names:
        code, out, _ = invoke(name, "--help")
        assert code == 0
        assert re.search(rf"toolfind {re.escape(name)}\b", readme), name


# -- the per-command app (cli.app_for) -----------------------------------------------------------


def command_paths() -> list[list[str]]:
    """Every runnable command, as the words that name it (``["cache", "path"]``)."""
    paths = [[_command_name(c)] for c in app.registered_commands]
    for group in app.registered_groups:
        assert group.typer_instance is not None
        paths += [
            [str(group.name), _command_name(c)] for c in group.typer_instance.registered_commands
        ]
    return paths


def _command_name(command: CommandInfo) -> str:
    assert command.callback is not None
    return command.name or typer.main.get_command_name(command.callback.__name__)


def run_with(application: typer.Typer, args: list[str]) -> tuple[int, str, str]:
    result = runner.invoke(application, args)
    return result.exit_code, result.stdout, result.stderr


def test_command_paths_cover_every_command() -> None:
    paths = [" ".join(p) for p in command_paths()]
    assert {"search", "list", "eval", "serve-mcp", "cache path", "catalog pull"} <= set(paths)
    assert len(paths) == len(set(paths)) > 12


@pytest.mark.parametrize("path", command_paths(), ids=" ".join)
@pytest.mark.parametrize(
    "rest", [["--help"], ["--no-such-option"], ["--catalog"], ["--json", "a", "b", "c", "d"]]
)
def test_the_app_for_one_command_prints_what_the_full_app_prints(
    path: list[str], rest: list[str]
) -> None:
    args = path + rest
    single = app_for(args)
    assert single is not app
    assert run_with(single, args) == run_with(app, args)


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["nope"],
        ["serch"],
        ["cache"],
        ["cache", "--help"],
        ["cache", "nope"],
        ["catalog"],
        ["-c", "x", "search"],
    ],
)
def test_other_arguments_get_the_full_app(args: list[str]) -> None:
    assert app_for(args) is app
    assert run_with(app_for(args), args) == run_with(app, args)


@pytest.mark.parametrize(
    "args", [["--version"], ["--version", "--no-such-option"], ["--version", "nope"]]
)
def test_version_first_needs_no_command(args: list[str]) -> None:
    single = app_for(args)
    assert not single.registered_commands and not single.registered_groups
    assert run_with(single, args) == run_with(app, args)


def imported_modules(*args: str) -> set[str]:
    """The modules ``python -m toolfind ARGS`` imports, from ``-X importtime``."""
    env = dict(os.environ, TOOLFIND_NO_FASTPATH="1")
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolfind", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    lines = [
        line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")
    ]
    return {parts[-1].strip() for parts in lines[1:]}


#: Not needed to print a path or the version: JSON, Rich, the catalog readers, the MCP server,
#: the data model, the config, the cache and the index.
HEAVY = {"json", "rich", "yaml", "jsonschema", "mcp", "pickle", "dataclasses"}
HEAVY |= {"toolfind.models", "toolfind.config", "toolfind.cache", "toolfind.index"}


@pytest.mark.parametrize("args", [["cache", "path"], ["--version"]])
def test_light_commands_import_nothing_heavy(args: list[str]) -> None:
    modules = imported_modules(*args)
    assert "toolfind.cli" in modules
    packages = {m.split(".")[0] for m in modules}
    assert not (modules | packages) & HEAVY


class FakeSpinners:
    """Stands in for toolfind.render: records the spinners started and stopped."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped: list[str] = []

    def spinner(self, message: str) -> FakeSpinners:
        self.message = message
        self.started.set()
        return self

    def stop(self) -> None:
        self.stopped.append(self.message)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> FakeSpinners:
    """stderr is a terminal, and the renderer (Rich) is a fake."""
    fake = FakeSpinners()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(cli, "_render", lambda: fake)
    return fake


def test_quick_work_on_a_terminal_never_loads_the_renderer(terminal: FakeSpinners) -> None:
    with cli._progress("Building", after=60):
        pass
    assert not terminal.started.is_set() and terminal.stopped == []


def test_slow_work_on_a_terminal_shows_a_spinner_and_stops_it(terminal: FakeSpinners) -> None:
    with cli._progress("Building", after=0):
        assert terminal.started.wait(10)
    assert terminal.stopped == ["Building"]


def test_the_cli_runs_with_the_garbage_collector_back_on() -> None:
    """__main__ pauses the GC while importing the CLI only: serve-mcp runs for days."""
    code = (
        "import atexit, gc, sys\n"
        "atexit.register(lambda: print('gc enabled:', gc.isenabled()))\n"
        "sys.argv = ['toolfind', 'cache', 'path']\n"
        "from toolfind.__main__ import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [os.environ["TOOLFIND_CACHE_DIR"], "gc enabled: True"]
