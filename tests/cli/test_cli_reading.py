"""What people read: whole names in tables, summaries, suggestions, filters, explanations,
eval, validate and cache output, the pager and the machine formats, through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.helpers import SHIPPED, invoke, write

runner = CliRunner()


TWO_ECHOES = """\
tools:
  - name: echo
    namespace: alpha
    description: Repeat the text, e.g. for tests. Nothing else happens.
    defer: false
  - name: echo
    namespace: beta
    description: Print text to stdout, i.e. the console. Returns nothing.
  - name: convert_units
    namespace: alpha
    aliases: [ls]
    description: Convert between units, e.g. meters to feet, vs. metric. Uses v1.2 tables.
  - name: pi_tool
    namespace: alpha
    description: Return pi as 3.14 or as many digits as asked for. Exact up to 1000 digits.
  - name: list_directory
    namespace: beta
    aliases: [ll]
    tags: [filesystem]
    description: List the entries of a directory, files, links etc. and their sizes. More.
"""


@pytest.fixture
def echoes(tmp_path: Path) -> str:
    return str(write(tmp_path / "echoes.yaml", TWO_ECHOES))


# -- summaries -----------------------------------------------------------------------------------


def test_summaries_first_sentence_survives_abbreviations_decimals_and_versions(
    echoes: str,
) -> None:
    code, out, _ = invoke("summaries", "--all", "-c", echoes)
    assert code == 0
    assert out.splitlines() == [
        "alpha/echo: Repeat the text, e.g. for tests.",
        "beta/echo: Print text to stdout, i.e. the console.",
        "alpha/convert_units: Convert between units, e.g. meters to feet, vs. metric.",
        "alpha/pi_tool: Return pi as 3.14 or as many digits as asked for.",
        "beta/list_directory: List the entries of a directory, files, links etc. and their sizes.",
    ]


def test_summaries_all_markdown_qualifies_names_so_two_echo_tools_differ(echoes: str) -> None:
    code, out, _ = invoke("summaries", "--all", "--format", "markdown", "-c", echoes)
    assert code == 0
    assert out.splitlines()[:2] == [
        "- **alpha/echo**: Repeat the text, e.g. for tests.",
        "- **beta/echo**: Print text to stdout, i.e. the console.",
    ]


@pytest.mark.parametrize("flags", [("--deferred",), (), ("--deferred", "--json")])
def test_summaries_without_deferred_tools_says_so_on_stderr(
    echoes: str, flags: tuple[str, ...]
) -> None:
    code, out, err = invoke("summaries", *flags, "-c", echoes)
    assert code == 0
    assert out.strip() in ("", "[]")
    assert err == (
        "No deferred tools. A deferred tool stays out of the tool list and is found by search;"
        " defer one with defer: true on its catalog entry or at the top of its file,"
        ' "defer": true on its servers-file entry, or its namespace in defer_namespaces'
        " (toolfind.toml). --all lists every enabled tool.\n"
    )


# -- did you mean ----------------------------------------------------------------------------------


def test_did_you_mean_offers_the_tool_name_not_its_alias(echoes: str) -> None:
    code, _, err = invoke("show", "lss", "-c", echoes)
    assert code == 1
    assert err == "Error: No tool named 'lss'. Did you mean 'convert_units'?\n"
    code, _, err = invoke("show", "list", "-c", str(SHIPPED))
    assert code == 1
    assert "'ls'" not in err and "list_directory" in err


# -- --min-score and --explain ----------------------------------------------------------------


def test_min_score_drops_exact_matches_below_it() -> None:
    code, out, _ = invoke("search", "compress file", "--min-score", "1000", "--json")
    assert code == 0
    assert json.loads(out)["hits"] == []
    code, out, _ = invoke("search", "compress file", "--min-score", "1", "--json", "-k", "2")
    assert json.loads(out)["hits"][0]["match"] == "exact"


def test_explain_shows_the_weights_the_user_set() -> None:
    code, out, _ = invoke(
        "search", "compress file", "-k", "1", "--explain", "--json", "-w", "params=3"
    )
    assert code == 0
    weights = {c["field"]: c["weight"] for c in json.loads(out)["hits"][0]["explain"]}
    assert weights["params"] == 3
    assert weights["name"] == 2  # the default, not rescaled to 1 (by params=3)


# -- filters -----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [("list",), ("search", "read file")])
def test_namespace_filter_ignores_case(command: tuple[str, ...]) -> None:
    code, out, err = invoke(*command, "--namespace", "FILES", "--json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    rows = rows["hits"] if isinstance(rows, dict) else rows
    assert rows and {r["namespace"] for r in rows} == {"files"}


@pytest.mark.parametrize("command", [("list",), ("search", "read file")])
def test_unknown_namespace_or_tag_is_one_warning_line_with_close_names(
    command: tuple[str, ...],
) -> None:
    for _ in range(2):  # cold (Typer), then warm (the fast path)
        code, out, err = invoke(*command, "--namespace", "fils", "--tag", "filesytem", "--json")
        assert code == 0
        assert err == (
            "Warning: no tool has the namespace 'fils' (did you mean 'files'?); "
            "no tool has the tag 'filesytem' (did you mean 'filesystem'?)\n"
        )
        rows = json.loads(out)
        assert (rows["hits"] if isinstance(rows, dict) else rows) == []


def test_known_filters_that_select_nothing_together_give_no_warning() -> None:
    code, out, err = invoke("list", "--namespace", "web", "--tag", "mail", "--json")
    assert (code, out.strip(), err) == (0, "[]", "")


# -- whole names in terminal tables ---------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LONG = "send_direct_message_to_a_channel_member_with_attachments"


def terminal(*args: str, columns: int) -> list[str]:
    """The command's stdout as Rich draws it on a terminal ``columns`` wide."""
    code, out, _ = invoke(*args, env={"TTY_COMPATIBLE": "1", "COLUMNS": str(columns)})
    assert code == 0, out
    return ANSI.sub("", out).splitlines()


def cells(lines: list[str]) -> set[str]:
    """Every piece of text between table borders (or a stacked row's first line)."""
    return {cell.strip() for line in lines for cell in re.split(r"[│┃]", line)}


@pytest.mark.parametrize("columns", [80, 40])
def test_list_never_cuts_or_folds_a_tool_name(columns: int) -> None:
    lines = terminal("list", columns=columns)
    names = {row["name"] for row in json.loads(invoke("list", "--json")[1])}
    assert names <= cells(lines)
    assert not any("…" in line for line in lines)
    assert all(len(line) <= columns for line in lines)


@pytest.mark.parametrize("columns", [80, 40])
def test_search_similar_and_categories_keep_whole_names(columns: int) -> None:
    hits = json.loads(invoke("search", "compress file", "--json")[1])["hits"]
    lines = terminal("search", "compress file", columns=columns)
    for hit in hits:
        assert any(f"{hit['namespace']}/{hit['name']}" in line.split() for line in lines)
    assert not any("…" in line for line in lines)
    lines = terminal("similar", "read_file", columns=columns)
    for row in json.loads(invoke("similar", "read_file", "--json")[1]):
        assert any(f"{row['namespace']}/{row['name']}" in line.split() for line in lines)
    lines = terminal("categories", columns=columns)
    for c in json.loads(invoke("categories", "--json")[1])["categories"]:
        assert c["name"] in cells(lines)


def test_a_narrow_terminal_stacks_each_row_name_first(tmp_path: Path) -> None:
    catalog = write(
        tmp_path / "long.yaml",
        f"tools:\n  - name: {LONG}\n    tags: [chat, messaging]\n"
        "    description: Send a direct message with attachments to a member of a channel.\n",
    )
    lines = terminal("list", "-c", str(catalog), columns=40)
    assert lines[0] == LONG
    assert lines[1] == "  namespace: long"
    assert lines[2].startswith("  summary: Send a direct message")
    assert all(len(line) <= 40 for line in lines[1:])
    assert "  tags: chat, messaging" in lines
    lines = terminal("search", "direct message", "-c", str(catalog), columns=40)
    assert lines[0] == f"1 long/{LONG}"


def test_other_columns_give_way_before_the_name_at_80_columns(tmp_path: Path) -> None:
    catalog = write(
        tmp_path / "long.yaml",
        f"tools:\n  - name: {LONG}\n    tags: [chat, messaging]\n    namespace: chat\n"
        "    description: Send a direct message with attachments to a member of a channel.\n",
    )
    lines = terminal("list", "-c", str(catalog), columns=80)
    assert LONG in cells(lines)
    assert "tags" not in cells(lines)  # dropped to make room
    assert all(len(line) <= 80 for line in lines)


# -- validate ----------------------------------------------------------------------------------

LINTED_JSON = """[
  {"name": "c", "description": ""},
  {"name": "d", "description": "A fine tool here.",
   "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}
]
"""


def test_validate_prints_compiler_style_lines_relative_to_the_working_directory() -> None:
    catalog = write(Path.cwd() / "cat" / "tools.json", LINTED_JSON)
    code, out, _ = invoke("validate", str(catalog.resolve()))
    assert code == 0
    assert out.splitlines() == [
        "cat/tools.json:2: warning: [0]: 'c' has no description [no-description]",
        "cat/tools.json:4: warning: [1].parameters.properties.q: parameter 'q' of 'd' has no"
        " description [param-description]",
        "1 file, 2 tools: 0 errors, 2 warnings",
    ]


def test_validate_json_findings_carry_line_numbers_and_rule_ids() -> None:
    write(Path("tools.json"), LINTED_JSON)
    code, out, _ = invoke("validate", "tools.json", "--json")
    assert code == 0
    assert [(f["line"], f["rule"]) for f in json.loads(out)] == [
        (2, "no-description"),
        (4, "param-description"),
    ]


def test_validate_ignore_switches_a_rule_off_by_flag_or_toml() -> None:
    write(Path("tools.json"), LINTED_JSON)
    code, out, _ = invoke("validate", "tools.json", "--strict", "--ignore", "param-description")
    assert code == 1
    assert "[no-description]" in out and "param-description" not in out
    write(Path("toolfind.toml"), '[validate]\nignore = ["no-description"]\n')
    code, out, _ = invoke("validate", "tools.json", "--strict", "--ignore", "param-description")
    assert code == 0
    assert out == "1 file, 2 tools: 0 errors, 0 warnings\n"


def test_validate_warns_of_a_tool_identical_to_one_in_another_namespace_unless_ignored() -> None:
    tool = {"name": "echo", "description": "Echoes back the input.", "inputSchema": {}}
    write(Path("caps") / "everything.json", {"tools": [tool]})
    write(Path("caps") / "everything-full.json", {"tools": [tool]})
    code, out, _ = invoke("validate", "caps")
    assert code == 0
    assert out.splitlines() == [
        "caps/everything.json:1: warning: tools[0]: 'everything/echo' is identical to"
        " 'everything-full/echo' (caps/everything-full.json:1) in name, description and input"
        " schema: search lists both; keep one (drop a catalog, or set enabled: false on one)"
        " [identical-tool]",
        "2 files, 2 tools: 0 errors, 1 warning",
    ]
    code, out, _ = invoke("validate", "caps", "--strict", "--ignore", "identical-tool")
    assert (code, out) == (0, "2 files, 2 tools: 0 errors, 0 warnings\n")


def test_validate_ignore_of_an_unknown_rule_is_a_usage_error() -> None:
    write(Path("tools.json"), LINTED_JSON)
    code, _, err = invoke("validate", "tools.json", "--ignore", "no-descriptoin")
    assert code == 2
    assert err.startswith("Error: --ignore: unknown rule 'no-descriptoin'; the rules")
    write(Path("toolfind.toml"), '[validate]\nignore = ["nope"]\n')
    code, _, err = invoke("validate", "tools.json")
    assert code == 1 and "unknown rule 'nope'" in err


def test_validate_says_not_a_tool_catalog_for_a_package_json() -> None:
    write(
        Path("package.json"),
        '{"name": "my-app", "version": "1.0.0", "description": "An app",\n'
        ' "scripts": {"test": "jest"}}\n',
    )
    write(Path("tsconfig.json"), '{"compilerOptions": {"strict": true}}\n')
    code, out, _ = invoke("validate", "package.json", "tsconfig.json", "--json")
    assert code == 1
    messages = [f["message"] for f in json.loads(out)]
    assert len(messages) == 2
    assert all(m.startswith("not a tool catalog: ") for m in messages)
    assert "'name' is a required property" not in out


def test_validate_prints_each_schema_error_of_an_entry_on_its_own_line() -> None:
    write(
        Path("wrongtype.json"),
        '[{"name": "add", "description": "Add two numbers.",\n'
        '  "parameters": {"type": "object", "required": "n",\n'
        '    "properties": {"n": {"type": "integr"}}}}]\n',
    )
    code, out, err = invoke("validate", "wrongtype.json")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "wrongtype.json:2: error: [0].parameters.required: 'n' is not of type 'array' [invalid]",
        "wrongtype.json:3: error: [0].parameters.properties.n.type: 'integr' is not valid under"
        " any of the given schemas [invalid]",
        "1 file, 0 tools: 2 errors, 0 warnings",
    ]
    code, out, err = invoke("validate", "wrongtype.json", "--json")
    assert (code, err) == (1, "")
    assert [(f["line"], f["path"]) for f in json.loads(out)] == [
        (2, "[0].parameters.required"),
        (3, "[0].parameters.properties.n.type"),
    ]


def test_validate_gives_one_verdict_for_a_wholly_broken_file() -> None:
    write(Path("trunc.json"), '{"tools": [')
    code, out, err = invoke("validate", "trunc.json")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "trunc.json:1: error: invalid JSON: Expecting value at column 12 [invalid]",
        "1 file, 0 tools: 1 error, 0 warnings",
    ]


def test_validate_counts_with_singular_and_plural_words() -> None:
    write(Path("one.yaml"), "tools:\n  - name: a\n    description: Does one thing well.\n")
    code, out, _ = invoke("validate", "one.yaml")
    assert (code, out) == (0, "1 file, 1 tool: 0 errors, 0 warnings\n")


# -- eval ---------------------------------------------------------------------------------------


@pytest.fixture
def many(tmp_path: Path) -> tuple[str, str]:
    tools = "".join(
        f"  - name: tool_{n:02d}\n    description: Handle widget number {n} of the set.\n"
        for n in range(40)
    )
    catalog = write(tmp_path / "many.yaml", f"namespace: w\ntools:\n{tools}")
    queries = write(tmp_path / "q.yaml", "- query: handle widget 7\n  relevant: [tool_07]\n")
    return str(catalog), str(queries)


@pytest.mark.parametrize("gate", ["ndcg@10=101", "ndcg@10=100.5%"])
def test_eval_fail_under_out_of_range_names_the_percent_unit(
    many: tuple[str, str], gate: str
) -> None:
    catalog, queries = many
    code, _, err = invoke("eval", queries, "-c", catalog, "--fail-under", gate)
    assert code == 2
    assert err == f"Error: --fail-under {gate!r}: the value must be a percentage, 0 to 100\n"


@pytest.mark.parametrize("gate", ["mrr@10=100", "R@1=100%", "R@1=1"])
def test_eval_fail_under_takes_percentages_as_eval_prints_them(
    many: tuple[str, str], gate: str
) -> None:
    catalog, queries = many
    code, out, err = invoke("eval", queries, "-c", catalog, "--fail-under", gate)
    assert "100.00" in out  # what eval prints: percentages
    assert (code, err) == (0, "")


def test_eval_failure_message_is_in_percent(many: tuple[str, str]) -> None:
    catalog, queries = many
    args = ("eval", queries, "-c", catalog, "-w", "name=0", "-w", "description=0")
    code, _, err = invoke(*args, "-w", "namespace=0", "--fail-under", "ndcg@10=90")
    assert code == 1
    assert err == "Failed: ndcg@10 is 0.00%, below the required 90%\n"


def test_eval_lists_unretrieved_tools_one_a_line_up_to_a_cap(many: tuple[str, str]) -> None:
    catalog, queries = many
    code, out, _ = invoke("eval", queries, "-c", catalog)
    assert code == 0
    lines = out.splitlines()
    start = lines.index("30 tools no query retrieves in its top 10:")
    listed = lines[start + 1 : start + 21]
    assert all(line.startswith("  w/tool_") for line in listed)
    assert lines[start + 21] == "  ... and 10 more (--json lists them all)"
    code, out, _ = invoke("eval", queries, "-c", catalog, "--json")
    assert len(json.loads(out)["unretrieved"]) == 30


# -- cache info ---------------------------------------------------------------------------------


def test_cache_info_prints_human_sizes_and_json_keeps_bytes() -> None:
    assert invoke("list", "--json")[0] == 0  # fills the cache
    code, out, _ = invoke("cache", "info")
    assert code == 0
    size = next(line for line in out.splitlines() if " size " in line)
    assert re.search(r"│ size\s+│ \d+\.\d (KiB|MiB)\s+│", size), out
    code, out, _ = invoke("cache", "info", "--json")
    record = json.loads(out)
    assert isinstance(record["bytes"], int) and record["bytes"] > 1024


# -- --format and the pager ---------------------------------------------------------------------


@pytest.mark.parametrize("command", [("list",), ("search", "compress file")])
def test_format_jsonl_prints_the_json_records_one_a_line(command: tuple[str, ...]) -> None:
    for _ in range(2):  # cold (Typer), then warm (the fast path)
        code, out, _ = invoke(*command, "--format", "jsonl")
        assert code == 0
        document = json.loads(invoke(*command, "--json")[1])
        records = document["hits"] if isinstance(document, dict) else document
        assert [json.loads(line) for line in out.splitlines()] == records


def test_format_csv_and_tsv_have_a_header_and_a_row_a_tool() -> None:
    import csv
    import io

    rows = json.loads(invoke("list", "--namespace", "files", "--json")[1])
    code, out, _ = invoke("list", "--namespace", "files", "--format", "csv")
    assert code == 0
    table = list(csv.reader(io.StringIO(out)))
    assert table[0] == ["name", "namespace", "summary", "tags", "deferred"]
    assert [r[0] for r in table[1:]] == [r["name"] for r in rows]
    assert table[1][3] == ",".join(rows[0]["tags"])
    code, out, _ = invoke("search", "compress file", "-k", "2", "--format", "tsv")
    lines = [line.split("\t") for line in out.splitlines()]
    assert lines[0][:6] == ["name", "namespace", "description", "score", "confidence", "match"]
    assert "source.file" in lines[0] and len(lines) == 3
    assert all(len(line) == len(lines[0]) for line in lines)


def test_format_and_json_together_are_a_usage_error() -> None:
    code, _, err = invoke("list", "--json", "--format", "csv")
    assert code == 2
    message = "use either --json or --format csv, not both"
    assert json.loads(err) == {"error": {"message": message, "kind": "usage"}}
    code, _, err = invoke("search", "x", "--format", "csv", "--json")
    assert code == 2 and json.loads(err)["error"]["kind"] == "usage"


def test_no_pager_in_a_pipe(tmp_path: Path) -> None:
    marker = tmp_path / "paged"
    code, out, _ = invoke("list", env={"TOOLFIND_PAGER": f"touch {marker}; cat"})
    assert code == 0 and "read_file" in out
    assert not marker.exists()


def _on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run toolfind with stdout on a pseudo-terminal (read as it writes); its exit code and
    stderr."""
    import os
    import pty
    import subprocess
    import sys
    import threading

    master, slave = pty.openpty()
    shown: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the other side closed
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "toolfind", *args],
            stdout=slave,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
            text=True,
        )
        os.close(slave)
        _, err = process.communicate(timeout=60)
    finally:
        reader.join(timeout=60)
        os.close(master)
    return process.returncode, err


@pytest.mark.parametrize("command", [["list"], ["search", "compress file"]])
def test_a_terminal_gets_the_pager_unless_no_pager(tmp_path: Path, command: list[str]) -> None:
    paged = tmp_path / "paged.txt"
    env = {"TOOLFIND_PAGER": f"cat > {paged}", "COLUMNS": "100"}
    for _ in range(2):  # cold (Typer), then warm (the fast path)
        paged.unlink(missing_ok=True)
        code, err = _on_a_terminal(command, env)
        assert (code, err) == (0, "")
        assert "compress_file" in paged.read_text(encoding="utf-8")
    paged.unlink()
    assert _on_a_terminal([*command, "--no-pager"], env) == (0, "")
    assert not paged.exists()
    assert _on_a_terminal([*command, "--format", "jsonl"], env) == (0, "")
    assert not paged.exists()
