"""Commands that behave alike: the shared options, usage errors, JSON errors, batch search,
``schemas`` names, and saying what was loaded. Through the real CLI (CliRunner, subprocess)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from tests.helpers import SHIPPED, invoke, run_main, write
from toolfind.cli.app import app
from toolfind.output import wire

runner = CliRunner()


SMALL = """\
namespace: files
tools:
  - name: read_file
    description: Read a text file and return its contents.
  - name: compress_file
    description: Compress a file into a zip archive.
  - name: search_web
    namespace: web
    description: Search the web for pages matching a query.
"""


@pytest.fixture
def small(tmp_path: Path) -> str:
    return str(write(tmp_path / "cat" / "files.yaml", SMALL))


def click_command(*path: str) -> Any:
    command: Any = typer.main.get_command(app)
    for name in path:
        command = command.commands[name]
    return command


def option_names(*path: str) -> set[str]:
    return {
        opt
        for param in click_command(*path).params
        if param.param_type_name == "option"
        for opt in (*param.opts, *param.secondary_opts)
    }


# -- the shared options ----------------------------------------------------------------------

DATA_COMMANDS = [
    ("search", "file"),
    ("show", "read_file"),
    ("list",),
    ("schemas",),
    ("similar", "read_file"),
    ("categories",),
    ("summaries", "--all"),
    ("validate",),
    ("cache", "info"),
    ("cache", "path"),
    ("cache", "clear"),
]


@pytest.mark.parametrize("command", DATA_COMMANDS, ids=" ".join)
def test_every_data_command_prints_one_json_document_with_json(
    small: str, command: tuple[str, ...]
) -> None:
    catalog = () if command[0] == "cache" else ("-c", small)
    code, out, err = invoke(*command, *catalog, "--json")
    assert code == 0, err
    json.loads(out)


@pytest.mark.parametrize(
    "command",
    ["search", "show", "list", "schemas", "similar", "categories", "summaries"]
    + ["validate", "eval", "tune", "serve-mcp"],
)
def test_every_command_that_reads_catalogs_takes_catalog_and_c(command: str) -> None:
    assert {"-c", "--catalog"} <= option_names(command)
    assert (
        click_command(command)
        .params[[p.name for p in click_command(command).params].index("catalog")]
        .multiple
    )


def test_validate_reads_c_as_its_paths(small: str, tmp_path: Path) -> None:
    bad = write(
        tmp_path / "bad.json", '[{"name": "x", "description": "Bad one.", "parameters": 5}]'
    )
    code, out, _ = invoke("validate", "-c", small, "-c", str(bad), "--json")
    assert code == 1
    assert {f["file"] for f in json.loads(out)} == {str(bad)}
    code, out, _ = invoke("validate", "-c", small, "--json")
    assert (code, json.loads(out)) == (0, [])


def test_list_takes_a_limit(small: str) -> None:
    _, every, _ = invoke("list", "-c", small, "--json")
    code, out, _ = invoke("list", "-c", small, "-k", "2", "--json")
    assert code == 0
    assert json.loads(out) == json.loads(every)[:2]
    code, out, _ = invoke("list", "-c", small, "--limit", "1")
    assert code == 0 and "read_file" in out and "search_web" not in out


def test_show_writes_gemini_as_schemas_does(small: str) -> None:
    code, out, _ = invoke("show", "read_file", "-c", small, "--format", "gemini", "--json")
    assert code == 0
    _, listed, _ = invoke("schemas", "-c", small, "--format", "gemini")
    assert json.loads(out) in json.loads(listed)


def test_schemas_accepts_json_and_prints_the_same(small: str) -> None:
    _, plain, _ = invoke("schemas", "-c", small)
    _, with_json, _ = invoke("schemas", "-c", small, "--json")
    assert plain == with_json


def test_cache_clear_and_path_have_json_records() -> None:
    code, out, err = invoke("cache", "clear", "--json")
    assert (code, json.loads(out), err) == (0, {"removed": 0}, "")
    code, out, _ = invoke("cache", "path", "--json")
    assert json.loads(out) == {"path": os.environ["TOOLFIND_CACHE_DIR"]}


def every_command_path() -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = [()]
    for name, command in click_command().commands.items():
        paths.append((name,))
        paths += [(name, sub) for sub in getattr(command, "commands", {})]
    return paths


@pytest.mark.parametrize("path", every_command_path(), ids=lambda p: " ".join(p) or "toolfind")
def test_h_is_help_everywhere(path: tuple[str, ...]) -> None:
    long_code, long_out, _ = invoke(*path, "--help")
    short_code, short_out, _ = invoke(*path, "-h")
    assert (short_code, short_out) == (long_code, long_out) == (0, long_out)
    assert "-h, --help" in long_out


def test_h_is_help_through_the_real_entry_point() -> None:
    done = run_main("search", "-h")
    assert done.returncode == 0 and done.stdout.startswith("Usage: toolfind search")


def test_a_query_of_several_unquoted_words_is_one_query(small: str) -> None:
    _, quoted, _ = invoke("search", "compress file", "-c", small, "--json")
    code, unquoted, _ = invoke("search", "compress", "file", "-c", small, "--json")
    assert code == 0 and unquoted == quoted
    assert json.loads(unquoted)["query"] == "compress file"


def test_several_unquoted_words_are_one_query_on_the_fast_path_too(small: str) -> None:
    run_main("search", "compress file", "-c", small, "--json")  # warms the cache
    quoted = run_main("search", "compress file", "-c", small, "--json")
    unquoted = run_main("search", "compress", "file", "-c", small, "--json")
    assert unquoted.returncode == 0 and unquoted.stdout == quoted.stdout


def test_a_query_and_queries_together_are_a_usage_error(small: str, tmp_path: Path) -> None:
    queries = write(tmp_path / "q.txt", "read a file\n")
    code, out, err = invoke("search", "file", "--queries", str(queries), "-c", small)
    assert (code, out) == (2, "")
    assert err.strip() == "Error: give either a QUERY or --queries FILE, not both"


def test_queries_with_a_format_other_than_jsonl_is_a_usage_error(
    small: str, tmp_path: Path
) -> None:
    queries = write(tmp_path / "q.txt", "read a file\n")
    code, out, err = invoke("search", "--queries", str(queries), "--format", "csv", "-c", small)
    assert (code, out) == (2, "")
    assert "--format csv does not apply" in err
    code, out, _ = invoke("search", "--queries", str(queries), "--format", "jsonl", "-c", small)
    assert code == 0 and out.count("\n") == 1  # one record a line, as without --format


# -- usage errors exit 2 ---------------------------------------------------------------------

USAGE_ERRORS = [
    ["search", "file", "--weight", "nam=3"],
    ["search", "file", "--weight", "name"],
    ["search", "file", "-k", "0"],
    ["search", "file", "--bogus"],
    ["search"],
    ["similar", "read_file", "--weight", "name=-1"],
    # Every bad value of an option is a usage error, those BM25F would refuse later included.
    ["search", "file", "--weight", "name=inf"],
    ["search", "file", "--weight", "name=1e400"],
    ["search", "file", "--weight", "name=nan"],
    ["similar", "read_file", "--weight", "name=inf"],
    ["search", "file", "--min-score", "nan"],
    ["eval", "Q", "--weight", "name=inf"],
    ["eval", "Q", "--k1", "-1"],
    ["eval", "Q", "--k1", "inf"],
    ["eval", "Q", "--k1", "nan"],
    ["eval", "Q", "--b", "x"],
    ["eval", "Q", "--b", "2"],
    ["eval", "Q", "--b", "nan"],
    ["eval", "Q", "--b", "name=inf"],
    ["eval", "Q", "--b", "nam=0.5"],
    ["eval", "Q", "--fail-under", "ndcg@10"],
    ["eval", "Q", "--fail-under", "nope=0.5"],
    ["tune", "Q", "--holdout", "2"],
    ["tune", "Q", "--metric", "nope"],
    ["tune", "Q", "--train-split", "nope"],
    ["serve-mcp", "--http", "x:y"],
    ["serve-mcp", "--log-level", "loud"],
    ["serve-mcp", "--separator", "!!"],
    ["serve-mcp", "--call-timeout", "0"],
    ["summaries", "--all", "--deferred"],
    ["show", "--format", "xml", "read_file"],
    ["nope"],
    ["cache", "nope"],
]


def queries_file(tmp_path: Path) -> str:
    return str(
        write(tmp_path / "q.yaml", "- {query: read a file, relevant: [read_file], split: train}\n")
    )


@pytest.mark.parametrize("argv", USAGE_ERRORS, ids=" ".join)
def test_every_usage_error_exits_2_with_one_error_line(
    small: str, tmp_path: Path, argv: list[str]
) -> None:
    argv = [queries_file(tmp_path) if a == "Q" else a for a in argv]
    catalog = ["-c", small] if argv[0] in {"search", "similar", "eval", "tune", "show"} else []
    code, out, err = invoke(*argv, *catalog)
    assert code == 2, err
    assert out == ""
    assert "Error: " in err and "Traceback" not in err


@pytest.mark.parametrize("argv", USAGE_ERRORS, ids=" ".join)
def test_with_json_a_usage_error_is_one_json_object_on_stderr(
    small: str, tmp_path: Path, argv: list[str]
) -> None:
    argv = [queries_file(tmp_path) if a == "Q" else a for a in argv]
    catalog = ["-c", small] if argv[0] in {"search", "similar", "eval", "tune", "show"} else []
    code, out, err = invoke(*argv, *catalog, "--json")
    assert (code, out) == (2, "")
    error = json.loads(err)
    assert error == wire.error_record(error["error"]["message"], "usage")
    assert tuple(error["error"]) == ("message", "kind") and error["error"]["message"]


def test_with_json_a_toolfind_error_is_one_json_object_with_its_kind(small: str) -> None:
    code, out, err = invoke("show", "raed_file", "-c", small, "--json")
    assert (code, out) == (1, "")
    assert json.loads(err) == wire.error_record(
        "No tool named 'raed_file'. Did you mean 'read_file'?", "not_found"
    )
    code, _, err = invoke("search", "file", "-c", str(Path(small).parent / "missing"), "--json")
    assert code == 1 and json.loads(err)["error"]["kind"] == "catalog"


def test_without_json_errors_stay_one_error_line(small: str) -> None:
    code, _, err = invoke("show", "raed_file", "-c", small)
    assert code == 1
    assert err == "Error: No tool named 'raed_file'. Did you mean 'read_file'?\n"


def test_json_errors_on_a_warm_fast_path_command(small: str) -> None:
    assert run_main("search", "file", "-c", small, "--json").returncode == 0  # warm
    for argv, kind in (
        (["show", "raed_file", "-c", small, "--json"], "not_found"),
        (["search", "file", "-c", small, "-k", "0", "--json"], "usage"),
        (["list", "-c", small, "-k", "x", "--json"], "usage"),
    ):
        done = run_main(*argv)
        assert done.returncode == (1 if kind == "not_found" else 2)
        assert done.stdout == ""
        assert json.loads(done.stderr)["error"]["kind"] == kind


def test_the_shipped_catalogs_answer_every_data_command() -> None:
    code, out, err = invoke("schemas", "-c", str(SHIPPED), "--json")
    assert code == 0 and json.loads(out), err


# -- batch search ----------------------------------------------------------------------------


def test_batch_search_echoes_ids_skips_comments_and_reports_a_bad_line_in_place(
    small: str, tmp_path: Path
) -> None:
    lines = [
        "# a comment, then a blank line",
        "",
        "read a file",
        '{"id": "zip-1", "query": "compress file"}',
        '{"id": 3}',
        "{not json",
        '{"query": "search the web", "id": 7}',
    ]
    queries = write(tmp_path / "q.jsonl", "\n".join(lines) + "\n")
    code, out, err = invoke("search", "--queries", str(queries), "-c", small, "-k", "1")
    assert code == 1  # a line failed: CI must notice
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 5  # one per query line, in order
    assert "id" not in records[0] and records[0]["query"] == "read a file"
    assert list(records[1])[:2] == ["id", "query"] and records[1]["id"] == "zip-1"
    assert records[1]["hits"][0]["name"] == "compress_file"
    assert records[2] == wire.batch_error_record(
        f"{queries}:5: a JSON line needs a non-blank string 'query'", "queries", 5, 3
    )
    assert records[3]["line"] == 6 and "invalid JSON" in records[3]["error"]["message"]
    assert "id" not in records[3]
    assert records[4]["id"] == 7 and records[4]["hits"][0]["name"] == "search_web"
    assert err.splitlines() == [
        f"Error: {records[2]['error']['message']}",
        f"Error: {records[3]['error']['message']}",
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"query": NaN}', "invalid JSON: NaN is not allowed (use null or a string)"),
        ('{"query": "a", "query": "b"}', "duplicate key 'query'"),
        ('{"query": "a",}', "invalid JSON: Expecting property name enclosed in double quotes"),
        ('{"query": "abc', "invalid JSON: Unterminated string starting at column 11"),
    ],
)
def test_a_batch_line_is_read_as_a_json_lines_catalog_record(
    small: str, line: str, message: str
) -> None:
    code, out, err = invoke("search", "--queries", "-", "-c", small, input=f"web\n{line}\n")
    assert code == 1
    [good, bad] = [json.loads(record) for record in out.splitlines()]
    assert good["query"] == "web" and bad["line"] == 2
    assert bad["error"]["message"].startswith(f"<stdin>:2: {message}")
    assert err == f"Error: {bad['error']['message']}\n"


def test_a_batch_file_that_is_not_utf8_is_one_error_naming_the_byte(
    small: str, tmp_path: Path
) -> None:
    queries = write(tmp_path / "q.txt", b"web\n\xff\n")
    code, out, err = invoke("search", "--queries", str(queries), "-c", small)
    assert (code, out) == (1, "")
    assert err == (
        f"Error: {queries}:2: cannot read queries: invalid UTF-8 at byte 4 (0xff);"
        " save the file as UTF-8\n"
    )


def test_batch_search_with_every_line_good_exits_0(small: str) -> None:
    code, out, err = invoke(
        "search", "--queries", "-", "-c", small, input="# from stdin\nread a file\nweb\n"
    )
    assert (code, err) == (0, "")
    assert [json.loads(line)["query"] for line in out.splitlines()] == ["read a file", "web"]


def test_batch_search_errors_are_json_objects_with_json(small: str) -> None:
    code, _, err = invoke("search", "--queries", "-", "-c", small, "--json", input="{x\n")
    assert code == 1
    assert json.loads(err)["error"]["kind"] == "queries"


# -- schemas: one name, one tool -------------------------------------------------------------

HOST_NAME = r"^[a-zA-Z0-9_-]{1,64}$"


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp", "gemini"])
def test_schemas_qualifies_colliding_names_and_says_so(tmp_path: Path, fmt: str) -> None:
    write(
        tmp_path / "c" / "a.yaml",
        "namespace: my.tools\ntools:\n  - {name: echo, description: Echo one.}\n"
        "  - {name: b__echo, description: Named like a qualified name.}\n"
        "  - {name: solo, description: Alone.}\n",
    )
    write(tmp_path / "c" / "b.yaml", "namespace: b\ntools:\n  - {name: echo, description: Two.}\n")
    code, out, err = invoke("schemas", "-c", str(tmp_path / "c"), "--dialect", fmt)
    assert code == 0
    tools = json.loads(out)
    names = [t["function"]["name"] if fmt == "openai" else t["name"] for t in tools]
    assert names == ["my_tools__echo", "b__echo", "solo", "b__echo_2"]
    assert len(set(names)) == len(names)
    assert all(re.match(HOST_NAME, n) for n in names)
    assert [t["function"]["description"] if fmt == "openai" else t["description"] for t in tools][
        3
    ] == "Two."
    assert err == (
        "Note: 2 tools are named 'echo': written as my_tools__echo, b__echo_2"
        " (LLM APIs reject two tools of one name)\n"
    )


def test_schemas_of_the_shipped_catalogs_have_unique_names_and_no_note() -> None:
    code, out, err = invoke("schemas", "-c", str(SHIPPED), "--include-deferred")
    names = [t["function"]["name"] for t in json.loads(out)]
    assert (code, err) == (0, "")
    assert len(set(names)) == len(names)


# -- nothing loaded is an error --------------------------------------------------------------

PACKAGE_JSON = '{"name": "my-app", "version": "1.0.0", "description": "A web app.",\n'
PACKAGE_JSON += ' "main": "index.js", "scripts": {"test": "jest"}, "dependencies": {}}\n'


def nothing_to_load(tmp_path: Path, case: str) -> Path:
    where = tmp_path / case
    where.mkdir()
    if case == "invalid":
        write(where / "bad.json", '[{"name": "x", "description": "Bad.", "parameters": 5}]')
    elif case == "package":
        write(where / "package.json", PACKAGE_JSON)
    return where


@pytest.mark.parametrize("case", ["empty", "invalid", "package"])
@pytest.mark.parametrize(
    "argv",
    [["search", "file"], ["list"], ["categories"], ["show", "x"], ["schemas"], ["summaries"]]
    + [["similar", "x"], ["validate"]],
    ids=" ".join,
)
def test_nothing_loaded_is_an_error_naming_the_paths(
    tmp_path: Path, case: str, argv: list[str]
) -> None:
    where = nothing_to_load(tmp_path, case)
    code, out, err = invoke(*argv, "-c", str(where))
    assert code == 1
    assert "No tools found" not in out + err
    if argv[0] != "validate":
        assert out == ""
        assert err.splitlines()[-1] == f"Error: 0 tools loaded from {where}"
        assert len(err.splitlines()) == (1 if case == "empty" else 2)  # the skipped file, named
    elif case == "empty":  # nothing says why: the error line instead of the count
        assert (out, err) == ("", f"Error: 0 tools loaded from {where}\n")
    else:  # one verdict: the error that says why and the count, not a second line as well
        assert out.splitlines()[-1] == "1 file, 0 tools: 1 error, 0 warnings"
        assert err == ""


@pytest.mark.parametrize("case", ["empty", "package"])
def test_nothing_loaded_is_an_error_on_the_fast_path_too(tmp_path: Path, case: str) -> None:
    where = str(nothing_to_load(tmp_path, case))
    for argv in (["search", "file", "--json"], ["list"], ["search", "file", "--json"]):
        done = run_main(*argv, "-c", where)
        assert (done.returncode, done.stdout) == (1, "")
        if "--json" in argv:
            error = json.loads(done.stderr.splitlines()[-1])
            assert error == wire.error_record(f"0 tools loaded from {where}", "nothing_loaded")


def test_a_package_json_is_not_a_tool_catalog(tmp_path: Path) -> None:
    where = nothing_to_load(tmp_path, "package")
    code, out, _ = invoke("validate", str(where), "--json")
    assert code == 1
    [finding] = json.loads(out)
    assert finding["severity"] == "error"
    assert finding["message"].startswith("not a tool catalog: no 'tools' list, no schema")


def test_zero_hits_is_still_success(small: str) -> None:
    code, out, _ = invoke("search", "xyzzy", "-c", small, "--json")
    assert code == 0 and json.loads(out)["hits"] == []
    code, out, _ = invoke("list", "-c", small, "--namespace", "nope", "--json")
    assert (code, json.loads(out)) == (0, [])


# -- the shipped demo catalogs are named where they could mislead -----------------------------

NOTE = (
    "Note: the catalogs in use are the demo ones shipped with toolfind (no --catalog,"
    " $TOOLFIND_CATALOGS, toolfind.toml or ./catalogs here)."
)


def test_categories_and_cache_info_say_when_the_shipped_catalogs_answer(small: str) -> None:
    for argv in (["categories"], ["cache", "info"]):
        code, _, err = invoke(*argv)
        assert code == 0 and err.splitlines()[0] == NOTE, argv
        _, _, err = invoke(*argv, "--json")
        assert NOTE not in err, argv
    _, _, err = invoke("categories", "-c", small)
    assert NOTE not in err


def test_the_warm_categories_table_says_so_too() -> None:
    for _ in range(2):  # cold, then warm
        done = run_main("categories")
        assert done.returncode == 0 and done.stderr.splitlines()[0] == NOTE


def test_search_says_nothing_about_the_shipped_catalogs() -> None:
    for _ in range(2):
        code, _, err = invoke("search", "compress", "file")
        assert code == 0 and err == ""
        assert run_main("search", "compress file", "--json").stderr == ""


def test_help_says_on_stderr_when_the_shipped_catalogs_are_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for argv in (["--help"], ["-h"]):
        code, out, err = invoke(*argv)
        assert code == 0 and out.startswith("Usage: toolfind") and "demo" not in out
        assert err == NOTE + "\n", argv
    code, out, err = invoke()  # without arguments: the help, then the note, on stderr
    assert (code, out) == (2, "") and err.startswith("Usage: toolfind")
    assert err.rstrip().endswith(NOTE)
    monkeypatch.setenv("TOOLFIND_CATALOGS", str(SHIPPED))  # configured: no note
    _, out, err = invoke("--help")
    assert "demo" not in out + err


# -- shell completion ------------------------------------------------------------------------


def complete(words: str) -> list[str]:
    env = {"_TOOLFIND_COMPLETE": "complete_bash", "COMP_WORDS": words}
    env["COMP_CWORD"] = str(len(words.split()) - (0 if words.endswith(" ") else 1))
    done = run_main(env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_shell_completion_completes_commands_subcommands_and_options() -> None:
    assert complete("toolfind sea") == ["search"]
    assert complete("toolfind cache i") == ["info"]
    assert "--limit" in complete("toolfind search --li")
    assert complete("toolfind show --dia") == ["--dialect"]
    assert "--format" not in complete("toolfind show --")  # the old name is not offered


def test_shell_completion_script_is_shown_for_a_shell() -> None:
    # Typer's switch to name the shell rather than detect it from the parent process
    done = run_main(
        "--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    )
    assert done.returncode == 0 and "_toolfind_completion" in done.stdout
    code, out, _ = invoke("--help")
    assert "--install-completion" in out and "--show-completion" in out
