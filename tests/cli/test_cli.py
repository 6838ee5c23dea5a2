"""The command line, through typer.testing.CliRunner, over real catalog files."""

from __future__ import annotations

import atexit
import io
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import NoReturn

import pytest
import typer
import typer.main
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.models import CommandInfo
from typer.testing import CliRunner

import toolfind.__main__ as toolfind_main
from tests.helpers import REPO, SHIPPED, invoke, run_main, write
from toolfind.cli import common
from toolfind.cli import fast as fastpath
from toolfind.cli.app import app, app_for
from toolfind.output import render, schemas, wire

runner = CliRunner()


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
    assert list(document) == schemas.SEARCH_SCHEMA["required"]
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
    assert json.loads(out) == {
        "query": "xyzzy",
        "hits": [],
        "unmatched_terms": ["xyzzy"],
        "corrections": {},
        "stages": ["lexical"],
    }
    assert "No tool mentions: xyzzy" in err


def test_a_corrected_word_is_said_as_read_not_as_found_nowhere() -> None:
    code, out, err = invoke("search", "send an emial", "-c", str(SHIPPED), "--json")
    assert code == 0
    document = json.loads(out)
    assert document["corrections"] == {"emial": "email"}
    assert document["unmatched_terms"] == []
    assert "Read emial as email" in err and "No tool mentions" not in err
    assert document["hits"][0]["name"] == "send_email"
    # Every hit says how sure it is, in 0..1.
    assert all(0.0 <= h["confidence"] <= 1.0 for h in document["hits"])


def test_min_confidence_drops_the_hits_less_sure(small: str) -> None:
    query = ["search", "compress this folder into a zip", "-c", str(SHIPPED), "--json"]
    every = json.loads(invoke(*query)[1])["hits"]
    assert len(every) > 1 and every[0]["confidence"] >= 0.5 > every[-1]["confidence"]
    code, out, _ = invoke(*query, "--min-confidence", "0.5")
    assert code == 0
    sure = json.loads(out)["hits"]
    assert sure == [h for h in every if h["confidence"] >= 0.5]
    code, _, err = invoke(*query, "--min-confidence", "1.5")
    assert code == 2 and "--min-confidence 1.5: use a number from 0 to 1" in err


def test_search_never_returns_disabled_tools(small: str) -> None:
    _, out, _ = invoke("search", "disabled tool never shows", "-c", small, "--json")
    assert all(h["name"] != "hidden_tool" for h in json.loads(out)["hits"])


def test_search_filters_by_namespace(small: str) -> None:
    _, out, _ = invoke("search", "file web", "-c", small, "--namespace", "web", "--json")
    assert [h["namespace"] for h in json.loads(out)["hits"]] == ["web"]


def test_search_unknown_weight_field_is_a_usage_error(small: str) -> None:
    code, _, err = invoke("search", "file", "-c", small, "--weight", "nam=3")
    assert code == 2
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
    assert list(document) == schemas.CATEGORIES_SCHEMA["required"]
    files = next(c for c in document["categories"] if c["name"] == "files")
    assert files == {"name": "files", "tool_count": 2, "deferred_count": 1, "tags": ["filesystem"]}
    assert document["total_tools"] == 3


def test_summaries_default_to_deferred_tools(small: str) -> None:
    code, out, _ = invoke("summaries", "-c", small)
    assert code == 0
    assert out == "files/compress_file: Compress a file into a zip or tar.gz archive.\n"
    _, out, _ = invoke("summaries", "-c", small, "--all", "--format", "markdown")
    assert "- **files/read_file**: Read a text file and return its contents." in out.splitlines()


def test_summaries_json_is_format_json(small: str) -> None:
    code, out, _ = invoke("summaries", "-c", small, "--json")
    assert code == 0
    assert json.loads(out) == [
        {
            "name": "compress_file",
            "namespace": "files",
            "summary": "Compress a file into a zip or tar.gz archive.",
        }
    ]
    assert invoke("summaries", "-c", small, "--format", "json")[1] == out
    code, _, err = invoke("summaries", "-c", small, "--json", "--format", "markdown")
    assert code == 2
    assert "use either --json or --format markdown" in err


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
    code, out, err = invoke("cache", "clear")
    assert (code, out, err) == (0, "Removed 2 cache files.\n", "")  # the result: stdout
    _, out, _ = invoke("cache", "info", "--json")
    assert json.loads(out)["indexes"] == 0


def test_every_command_has_help_and_is_in_the_readme() -> None:
    """Every registered command, in a group too (``cache path``), has help and a README line."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for path in command_paths():
        code, out, _ = invoke(*path, "--help")
        assert code == 0
        assert out.startswith("Usage: ") and "Example: toolfind" in out, path
        words = r"\b[^\n]*\b".join(re.escape(w) for w in path)  # `toolfind cache path|info|clear`
        assert re.search(rf"toolfind {words}\b", readme), path


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


@pytest.mark.parametrize("args", [[], ["--help"], ["-h"]])
def test_help_gets_the_full_app(args: list[str]) -> None:
    assert app_for(args) is app  # the demo catalogs' note is said on stderr, not in the help


@pytest.mark.parametrize(
    "args",
    [["--version"], ["--version", "--no-such-option"], ["--version", "nope"], ["-V"]],
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
HEAVY |= {"toolfind.models", "toolfind.config", "toolfind.store.cache", "toolfind.store.index"}


@pytest.mark.parametrize("args", [["cache", "path"], ["--version"]])
def test_light_commands_import_nothing_heavy(args: list[str]) -> None:
    modules = imported_modules(*args)
    assert "toolfind.cli.app" in modules
    packages = {m.split(".")[0] for m in modules}
    assert not (modules | packages) & HEAVY


class FakeSpinners:
    """Stands in for toolfind.output.render: records the spinners started and stopped."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.stopped: list[str] = []

    def spinner(self, message: str) -> FakeSpinners:
        self.message = message
        self.started.set()
        return self

    def update(self, message: str) -> None:
        self.message = message

    def stop(self) -> None:
        self.stopped.append(self.message)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> FakeSpinners:
    """stderr is a terminal, and the renderer (Rich) is a fake."""
    fake = FakeSpinners()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(common, "renderer", lambda: fake)
    return fake


def test_quick_work_on_a_terminal_never_loads_the_renderer(terminal: FakeSpinners) -> None:
    with common._progress("Building", after=60):
        pass
    assert not terminal.started.is_set() and terminal.stopped == []


def test_slow_work_on_a_terminal_shows_a_spinner_and_stops_it(terminal: FakeSpinners) -> None:
    with common._progress("Building", after=0):
        assert terminal.started.wait(10)
    assert terminal.stopped == ["Building"]


def test_the_spinner_of_a_build_shows_files_and_tools_counted(terminal: FakeSpinners) -> None:
    with common._progress("Building", after=0) as show:
        assert show is not None and terminal.started.wait(10)
        progress = common._counted(show)
        progress(1, 2, 0, 0)
        assert terminal.message == "Reading catalogs: 1/2 files, 0 tools…"
        progress(2, 2, 100_000, 0)
        assert terminal.message == "Reading catalogs: 2/2 files, 100,000 tools…"
        progress(2, 2, 100_000, 45_000)
        assert terminal.message == "Indexing 45,000/100,000 tools (2/2 files read)…"
        progress(2, 2, 100_000, 100_000)
    assert terminal.stopped == ["Indexing 100,000 tools (2/2 files read): weighing and writing…"]


def test_off_a_terminal_a_build_shows_no_progress(small: str) -> None:
    with common._progress("Building", after=0) as show:
        assert show is None  # stderr is not a terminal here: nothing to show, nothing counted
    code, _, err = invoke("list", "-c", small, "--json")
    assert (code, err) == (0, "")


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


def test_list_filters_by_tag(small: str) -> None:
    _, out, _ = invoke("list", "-c", small, "--tag", "filesystem", "--json")
    assert {r["name"] for r in json.loads(out)} == {"read_file", "compress_file", "search_web"}
    _, out, _ = invoke("list", "-c", small, "--tag", "filesystem", "--tag", "nope", "--json")
    assert json.loads(out) == []


def test_summaries_all_prints_one_line_a_tool(small: str) -> None:
    code, out, _ = invoke("summaries", "-c", small, "--all")
    assert code == 0
    assert out.endswith("\n") and len(out.splitlines()) == 3
    assert "files/read_file: Read a text file and return its contents." in out.splitlines()


def test_list_and_summaries_print_as_they_read_the_same_bytes_as_one_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """list --json and summaries stream over 100k tools; the bytes are those of one document
    of the same records, from the cache (fast path and Typer) and from a fresh build."""
    from toolfind.store.cache import load_index

    entries = [
        {
            "type": "function",
            "function": {"name": f"tool_{i}", "description": f"Does thing {i}. Then more."},
            **({"defer": True} if i % 3 == 0 else {}),
        }
        for i in range(1500)  # more than a piece of output
    ]
    cat = str(write(tmp_path / "cat" / "many.json", json.dumps(entries)))
    tools = load_index([Path(cat)], use_cache=False).index.listed()
    deferred = [t for t in tools if t.defer]
    expected = {
        ("list", "--json"): wire.dumps([wire.tool_row(t) for t in tools]) + "\n",
        ("summaries", "--all", "--json"): wire.dumps([wire.summary_record(t) for t in tools])
        + "\n",
        ("summaries", "--json"): wire.dumps([wire.summary_record(t) for t in deferred]) + "\n",
        ("summaries", "--all"): "".join(f"many/{t.name}: {t.summary}\n" for t in tools),
        ("list", "--json", "-k", "2"): wire.dumps([wire.tool_row(t) for t in tools[:2]]) + "\n",
        ("list", "--json", "--tag", "nowhere"): "[]\n",
    }
    for args, document in expected.items():
        for extra in ([], ["--no-cache"]):
            code, out, err = invoke(*args, "-c", cat, *extra)
            assert (code, err.startswith("Warning: no tool has the tag")) == (0, "nowhere" in args)
            assert out == document, (args, extra)
        capsys.readouterr()
        assert fastpath.run([*args, "-c", cat]) == 0  # the cache is warm: the fast path too
        assert capsys.readouterr().out == document
    assert json.loads(expected["list", "--json"])[1]["summary"] == "Does thing 1."


# -- human output in a pipe: render's plain tables -----------------------------------------------


class Pipe(io.StringIO):
    """A pipe as Rich sees one: not a terminal, with an encoding."""

    def __init__(self, encoding: str = "utf-8") -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding


def rich_prints(draw: Callable[[Console], None], encoding: str = "utf-8") -> str:
    """What Rich prints into a pipe (80 columns), with the console settings render uses."""
    pipe = Pipe(encoding)
    console = Console(file=pipe, highlight=False, soft_wrap=True, emoji=False, legacy_windows=False)
    draw(console)
    return pipe.getvalue()


TABLES: list[tuple[tuple[str, ...], list[list[str]], str | None, bool]] = [
    (("#", "tool", "score"), [["1", "files/read_file (exact)", "9.000"]], None, True),
    (("a", "bb"), [["1", "x"], ["long value", "ü日本"]], "Similar to x", True),
    (("a", "bb"), [], None, True),
    (("h", "k"), [["two\nlines", "b"], ["", ""], ["x ", " y"]], None, True),
    (("", "queries"), [["train", "3"]], "Tuning ndcg@10 (%)", True),
    ((), [["path", "/tmp/x"], ["exists", "True"]], "toolfind cache", False),
    (("h",), [["1"]], "a title much wider than the table under it", True),
]


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
@pytest.mark.parametrize(("headers", "rows", "title", "show_header"), TABLES)
def test_a_table_that_fits_is_byte_for_byte_what_rich_prints_into_a_pipe(
    headers: tuple[str, ...],
    rows: list[list[str]],
    title: str | None,
    show_header: bool,
    encoding: str,
) -> None:
    def draw(console: Console) -> None:
        table = Table(*headers, title=title, show_header=show_header)
        for row in rows:
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)

    plain = Pipe(encoding)
    render.PlainOutput(plain).table(headers, rows, title=title, show_header=show_header)
    assert plain.getvalue() == rich_prints(draw, encoding)


def test_lines_and_json_are_what_rich_prints_into_a_pipe() -> None:
    # The renderer is given wire.dumps's text, which is already what print_json prints.
    document = wire.dumps({"name": "x", "tags": ["a", "b"], "nested": {"k": "ü"}, "empty": []})
    plain = Pipe()
    out = render.PlainOutput(plain)
    out.line([render.Styled("files/read_file", "bold"), " ", render.Styled("(deferred)", "dim")])
    out.line("bell\x07 and [brackets]")
    out.json(document)

    def draw(console: Console) -> None:
        console.print("[bold]files/read_file[/bold] [dim](deferred)[/dim]")
        # A control character is shown escaped, by both outputs (render._plain, _markup).
        console.print(escape("bell\\x07 and [brackets]"))
        console.print_json(document)

    assert plain.getvalue() == rich_prints(draw)


def test_a_wide_table_keeps_each_row_on_one_line_and_cuts_nothing(tmp_path: Path) -> None:
    long = "Compress a file " + "with a very long description " * 4 + "end."
    tools = [{"name": f"compress_file_with_a_long_name_{i}", "description": long} for i in range(3)]
    catalog = write(tmp_path / "wide" / "wide.json", json.dumps(tools))
    code, out, _ = invoke("search", "compress file", "-c", str(catalog))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("┏") and lines[-1].startswith("└")
    assert len(lines) == 3 + 3 + 1  # top, header, rule; a line a hit; bottom
    assert len({len(line) for line in lines}) == 1
    for i, line in enumerate(lines[3:6]):
        assert line.startswith(f"│ {i + 1} │ wide/compress_file_with_a_long_name_")
        assert f"│ {long} │" in line


def test_search_table_in_a_pipe_does_not_import_rich(small: str) -> None:
    packages = {m.split(".")[0] for m in imported_modules("search", "read file", "-c", small)}
    assert "toolfind" in packages and "rich" not in packages


@pytest.mark.parametrize(
    ("environ", "tty", "expected"),
    [
        ({}, False, False),
        ({}, True, True),
        ({"TTY_COMPATIBLE": "1"}, False, True),
        ({"TTY_COMPATIBLE": "0"}, True, False),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": ""}, True, False),
        ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, True, False),
    ],
)
def test_rich_draws_what_rich_would_treat_as_a_terminal(
    environ: dict[str, str], tty: bool, expected: bool
) -> None:
    class Stream:
        def isatty(self) -> bool:
            return tty

    assert render.use_rich(environ, Stream()) is expected


def test_on_a_terminal_rich_draws_the_table(small: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    code, out, _ = invoke("categories", "-c", small)
    assert code == 0
    assert "\x1b[1mnamespace\x1b[0m" in out  # a bold header: Rich drew it
    assert "│ files     │ 2     │ 1        │ filesystem │" in out
    assert out.endswith("2 namespaces, 3 tools\n")


# -- ending a one-shot command (__main__) --------------------------------------------------------


def test_one_shot_commands_end_with_their_output_and_exit_code(small: str) -> None:
    done = run_main("categories", "-c", small, "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["total_tools"] == 3
    done = run_main("show", "serch_web", "-c", small)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "Error: No tool named 'serch_web'. Did you mean 'search_web'?\n"
    done = run_main("search", "-c", small)
    assert done.returncode == 2 and "search needs a QUERY" in done.stderr


class Exited(Exception):
    """Stands in for os._exit."""


@pytest.fixture
def no_exit(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """os._exit raises Exited, and the atexit functions are recorded, not run."""
    calls: list[str] = []

    def fake_exit(code: int) -> NoReturn:
        calls.append(f"exit {code}")
        raise Exited

    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: calls.append("atexit"))
    return calls


def test_the_end_runs_atexit_then_exits_with_the_code(no_exit: list[str]) -> None:
    with pytest.raises(Exited):
        toolfind_main._end(3)
    assert no_exit == ["atexit", "exit 3"]


def test_the_end_leaves_it_to_python_while_a_thread_runs(no_exit: list[str]) -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        toolfind_main._end(0)  # returns: Python's own exit must wait for the thread
    finally:
        release.set()
        worker.join()
    assert no_exit == []


def test_defer_namespaces_in_toolfind_toml_defers_those_namespaces(
    small: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "toolfind.toml").write_text('defer_namespaces = ["Files"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke("summaries", "-c", small)
    assert code == 0
    assert sorted(out.splitlines()) == [
        "files/compress_file: Compress a file into a zip or tar.gz archive.",
        "files/read_file: Read a text file and return its contents.",
    ]
