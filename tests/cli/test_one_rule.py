"""One rule per concept, as a user meets it: what is said on stderr, what a format means,
exit codes, the terminal conventions. Through the Typer app (``invoke``) and the real entry
point (``run_main``: the warm path too), on real files."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SHIPPED, invoke, run_main, write

OPENAI = {
    "tools": [
        {"type": "web_search"},
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Get the weather for a city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        },
    ]
}
GEMINI = {
    "tools": [
        {"googleSearch": {}},
        {"functionDeclarations": [{"name": "lookup", "description": "Look up a word."}]},
    ]
}


@pytest.fixture
def builtins(tmp_path: Path) -> str:
    """A catalog directory with a provider's built-in tools (no schema) and a duplicate."""
    root = tmp_path / "cat"
    write(root / "a.json", OPENAI)
    write(root / "g.json", GEMINI)
    write(root / "z.yaml", "namespace: a\ntools:\n  - {name: get_weather, description: Again.}\n")
    return str(root)


# -- every skipped entry is said, once ---------------------------------------------------------

SKIPPED = [
    "Warning: skipped {root}/a.json:1: tools[0]: built-in tool 'web_search' has no schema",
    "Warning: skipped {root}/g.json:1: tools[0]: built-in tool 'googleSearch' has no schema",
    "Warning: skipped {root}/z.yaml:3: tools[0]: duplicate tool 'a/get_weather':"
    " {root}/a.json:1 was loaded first and wins; this one is skipped",
]


@pytest.mark.parametrize(
    "argv",
    [["list"], ["search", "weather"], ["list", "--json"], ["search", "weather", "--json"]],
    ids=" ".join,
)
def test_every_skipped_entry_is_said_once_cold_and_warm(builtins: str, argv: list[str]) -> None:
    expected = [line.format(root=builtins) for line in SKIPPED]
    for _ in range(2):  # the first run builds the index, the second answers from the cache
        done = run_main(*argv, "-c", builtins)
        assert done.returncode == 0, done.stderr
        assert done.stderr.splitlines() == expected
        assert "get_weather" in done.stdout


def test_a_path_that_is_not_a_file_is_said_too(tmp_path: Path) -> None:
    root = tmp_path / "cat"
    write(root / "a.json", OPENAI)
    os.mkfifo(root / "pipe.json")
    code, out, err = invoke("list", "-c", str(root), "--json")
    assert code == 0 and [r["name"] for r in json.loads(out)] == ["get_weather"]
    assert f"Warning: skipped {root}/pipe.json: not a regular file (a FIFO)" in err.splitlines()


def test_schemas_says_every_renamed_name_in_one_note(tmp_path: Path) -> None:
    for ns in "abcde":
        tools = "".join(f"  - {{name: {n}, description: Tool {n}.}}\n" for n in "wxyz")
        write(tmp_path / "c" / f"{ns}.yaml", f"namespace: {ns}\ntools:\n{tools}")
    code, out, err = invoke("schemas", "-c", str(tmp_path / "c"))
    assert code == 0 and len(json.loads(out)) == 20
    assert err == (
        "Note: 20 tools share 4 names, each written as namespace__name:"
        " 'w' as a__w, b__w, c__w, d__w, e__w; 'x' as a__x, b__x, c__x, d__x, e__x;"
        " 'y' as a__y, b__y, c__y, d__y, e__y; and 1 more"
        " (LLM APIs reject two tools of one name)\n"
    )


def test_validate_lists_each_files_findings_in_line_order(tmp_path: Path) -> None:
    text = (
        "tools:\n"
        "  - name: ping\n"
        "    description: Ping.\n"  # a lint warning (line 2), found after the load's error
        "  - name: bad\n"
        "    description: A tool with bad parameters.\n"
        "    parameters: 5\n"  # the load's error (line 6)
        "  - name: pong\n"
        "    description: Pong.\n"
    )
    for name in ("b.yaml", "a.yaml"):
        write(tmp_path / "c" / name, text)
    code, out, _ = invoke("validate", str(tmp_path / "c"), "--json")
    assert code == 1
    places = [(Path(f["file"]).name, f["line"]) for f in json.loads(out)]
    # b's ping and pong are copies of a's: each line also has its identical-tool warning.
    assert places == [("a.yaml", n) for n in (2, 6, 7)] + [("b.yaml", n) for n in (2, 2, 6, 7, 7)]
    _, text_out, _ = invoke("validate", str(tmp_path / "c"))
    lines = [line.split(": ")[0] for line in text_out.splitlines()[:-1]]
    assert [line.rsplit("/", 1)[-1] for line in lines] == [f"{f}:{n}" for f, n in places]


# -- formats: --format is a record format where records are printed; --dialect a schema's ----

CATALOG = """\
namespace: files
tools:
  - name: read_file
    description: Read a text file and return its contents.
    tags: [read]
    parameters:
      type: object
      properties:
        path: {type: string, description: Path of the file.}
      required: [path]
  - name: compress_file
    description: Compress a file into a zip archive.
    defer: true
    annotations: {readOnlyHint: false, destructiveHint: true}
  - name: send_mail
    namespace: mail
    description: Send an email message to someone.
"""


@pytest.fixture
def small(tmp_path: Path) -> str:
    return str(write(tmp_path / "cat" / "files.yaml", CATALOG))


def test_show_prints_the_json_document_alone_on_stdout(small: str) -> None:
    """Into a file or a pipe, stdout is JSON; the heading is for the person, on stderr."""
    for argv in (["show", "read_file"], ["show", "read_file", "--dialect", "anthropic"]):
        for _ in range(2):  # cold, then warm
            done = run_main(*argv, "-c", small)
            assert done.returncode == 0, done.stderr
            document = json.loads(done.stdout)
            assert document["name"] == "read_file"
            assert done.stderr.splitlines() == ["files/read_file", f"{small}:3#/tools/0"]
    done = run_main("show", "read_file", "-c", small, "--json")
    assert done.stderr == "" and json.loads(done.stdout)["name"] == "read_file"


@pytest.mark.parametrize("command", ["show", "schemas"])
def test_the_old_format_option_of_show_and_schemas_still_works_and_says_so(
    small: str, command: str
) -> None:
    name = ["read_file"] if command == "show" else []
    new = run_main(command, *name, "--dialect", "mcp", "-c", small, "--json")
    for _ in range(2):  # cold, then warm (show)
        old = run_main(command, *name, "--format", "mcp", "-c", small, "--json")
        assert (old.returncode, old.stdout) == (0, new.stdout)
        assert old.stderr == (
            "Warning: --format mcp is now --dialect mcp; the old name goes in a later release\n"
        )
    code, out, err = invoke(command, *name, "--format", "mcp", "--dialect", "openai", "-c", small)
    assert (code, out) == (2, "")
    assert "--format is the old name of --dialect" in err


RECORD_COMMANDS = [
    ["search", "file"],
    ["list"],
    ["similar", "read_file"],
    ["categories"],
    ["summaries", "--all"],
]


@pytest.mark.parametrize("argv", RECORD_COMMANDS, ids=" ".join)
def test_format_json_is_json_on_every_command_that_prints_records(
    small: str, argv: list[str]
) -> None:
    for _ in range(2):
        as_json = run_main(*argv, "-c", small, "--json")
        as_format = run_main(*argv, "-c", small, "--format", "json")
        assert as_json.returncode == as_format.returncode == 0, as_format.stderr
        assert as_format.stdout == as_json.stdout and json.loads(as_json.stdout)
    code, _, err = invoke(*argv, "-c", small, "--json", "--format", "csv")
    assert code == 2 and "use either --json or --format csv, not both" in err


@pytest.mark.parametrize("argv", RECORD_COMMANDS, ids=" ".join)
def test_jsonl_prints_the_json_records_one_a_line(small: str, argv: list[str]) -> None:
    document = json.loads(invoke(*argv, "-c", small, "--json")[1])
    records = document["hits"] if argv[0] == "search" else document
    records = records["categories"] if argv[0] == "categories" else records
    code, out, _ = invoke(*argv, "-c", small, "--format", "jsonl")
    assert code == 0 and [json.loads(line) for line in out.splitlines()] == records


def test_csv_columns_are_the_commands_record_keys_whatever_the_hits(small: str) -> None:
    header = "name,namespace,description,score,confidence,match,deferred,tags,source.file,source.pointer,schema"
    for query in ("compress", "read text", "xyzzy"):  # a deferred hit, none, no hit at all
        code, out, _ = invoke("search", query, "-c", small, "--format", "csv")
        assert code == 0 and out.splitlines()[0] == header, query
    assert invoke("search", "xyzzy", "-c", small, "--format", "csv")[1] == header + "\n"
    code, out, _ = invoke("search", "read", "-c", small, "--format", "tsv", "--explain")
    assert out.splitlines()[0].split("\t")[-2:] == ["schema", "explain"]
    empty = {
        "list": "name\tnamespace\tsummary\ttags\tdeferred\n",
        "similar": "name\tnamespace\tdescription\tscore\tshared_terms\n",
    }
    assert invoke("list", "-c", small, "--tag", "nope", "--format", "tsv")[1] == empty["list"]
    code, out, _ = invoke("similar", "send_mail", "-c", small, "--format", "tsv", "-k", "1")
    assert code == 0 and out.splitlines()[0] + "\n" == empty["similar"]


@pytest.mark.parametrize("fmt", ["table", "csv", "tsv"])
def test_batch_search_prints_json_lines_and_takes_no_other_format(
    small: str, tmp_path: Path, fmt: str
) -> None:
    queries = str(write(tmp_path / "q.txt", "read a file\n"))
    code, out, err = invoke("search", "--queries", queries, "-c", small, "--format", fmt)
    assert (code, out) == (2, "")
    assert f"--format {fmt} does not apply" in err
    for ok in (["--format", "jsonl"], ["--format", "json"], ["--json"], []):
        code, out, _ = invoke("search", "--queries", queries, "-c", small, *ok)
        assert code == 0 and json.loads(out)["hits"][0]["name"] == "read_file", ok


# -- --fields ----------------------------------------------------------------------------------


def test_fields_keeps_those_keys_in_every_record_format(small: str) -> None:
    for _ in range(2):  # cold, then warm (from the index file alone)
        done = run_main("search", "file", "-c", small, "--fields", "name,score", "--json")
        document = json.loads(done.stdout)
        assert list(document) == ["query", "hits", "unmatched_terms", "corrections", "stages"]
        assert [list(hit) for hit in document["hits"]] == [["name", "score"]] * 2
    code, out, _ = invoke("list", "-c", small, "--fields", "namespace,name", "--format", "csv")
    assert out.splitlines() == ["namespace,name", "files,read_file", "files,compress_file"] + [
        "mail,send_mail"
    ]
    code, out, _ = invoke("categories", "-c", small, "--fields", "name", "--json")
    assert json.loads(out)["categories"] == [{"name": "files"}, {"name": "mail"}]
    code, out, _ = invoke("summaries", "-c", small, "--fields", "summary", "--format", "jsonl")
    assert out == '{"summary": "Compress a file into a zip archive."}\n'


def test_fields_schema_and_explain_are_given_for_every_hit(small: str) -> None:
    argv = ("search", "file", "-c", small, "--fields", "name,schema,explain")
    code, out, _ = invoke(*argv, "--json")
    hits = json.loads(out)["hits"]
    assert hits and all(h["schema"]["type"] == "object" and h["explain"] for h in hits)


def test_the_search_table_shows_each_hits_confidence_not_its_score(small: str) -> None:
    hits = json.loads(run_main("search", "file", "-c", small, "--json").stdout)["hits"]
    for _ in range(2):
        lines = run_main("search", "file", "-c", small).stdout.splitlines()
        assert re.fullmatch(r"┃ # ┃ tool +┃ confidence ┃ description +┃ tags +┃", lines[1])
        cells = [[cell.strip() for cell in line.split("│")[1:-1]] for line in lines[3:-1]]
        assert [row[2] for row in cells] == [f"{h['confidence']:.2f}" for h in hits]
        assert all(f"{h['score']:.3f}" not in lines[3 + i] for i, h in enumerate(hits))


def test_search_says_on_stderr_when_no_hit_is_confident() -> None:
    """serve-mcp's note, on stderr: whatever the format, cold and warm; not when a hit is
    confident, nor when nothing was found (that says so itself)."""
    from toolfind.core.confidence import CONFIDENT, no_confident_match

    said = set()
    queries = ("is it going to be a good day", "think through this step by step", "draw a cat")
    for query in (*queries, "disk space left", "send an email"):
        hits = search_json(query)["hits"]
        if not hits:
            continue
        best = max(h["confidence"] for h in hits)
        for argv in (["search", query], ["search", query, "--json"]):
            for _ in range(2):
                done = run_main(*argv, "-c", str(SHIPPED))
                assert done.returncode == 0
                note = no_confident_match(best)
                assert (note in done.stderr.splitlines()) == (best < CONFIDENT)
                assert (best < CONFIDENT) == ("No confident match" in done.stderr)
        said.add(best < CONFIDENT)
    assert said == {True, False}  # both cases met
    nothing = run_main("search", "xyzzy", "-c", str(SHIPPED))
    assert nothing.stdout == "No tools found.\n" and "No confident match" not in nothing.stderr


def search_json(query: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(
        run_main("search", query, "-c", str(SHIPPED), "--json").stdout
    )
    return document


def test_fields_alone_picks_the_columns_of_a_table(small: str) -> None:
    """As ``kubectl -o custom-columns``: a column a key, in the order asked, cold and warm."""
    argv = ("search", "file", "-c", small, "--fields", "name,confidence,deferred")
    hits = json.loads(run_main(*argv, "--json").stdout)["hits"]
    for _ in range(2):
        done = run_main(*argv)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert re.fullmatch(r"┃ name +┃ confidence ┃ deferred ┃", lines[1])
        rows = [line.split("│")[1:-1] for line in lines[3:-1]]
        assert [[cell.strip() for cell in row] for row in rows] == [
            [h["name"], f"{h['confidence']:.2f}", "yes" if h["deferred"] else "no"] for h in hits
        ]
        assert [h["name"] for h in hits] == ["read_file", "compress_file"]
    code, out, _ = invoke("list", "-c", small, "--fields", "name", "--format", "table")
    assert code == 0 and "compress_file" in out and "namespace" not in out
    code, out, _ = invoke("summaries", "-c", small, "--all", "--fields", "name")
    assert code == 0 and json.loads(out)[0] == {"name": "read_file"}  # lines: no table to pick


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "x", "--fields", "nam"], "--fields: unknown field 'nam'; search records"),
        (["list", "--fields", "score"], "--fields: unknown field 'score'; list records have"),
        (["list", "--fields", ","], "--fields: no field given"),
        (["summaries", "--fields", "name", "--format", "text"], "--fields picks record keys"),
        (["summaries", "--fields", "name", "--format", "markdown"], "--fields picks record"),
    ],
)
def test_a_bad_fields_is_a_usage_error(small: str, argv: list[str], message: str) -> None:
    code, out, err = invoke(*argv, "-c", small)
    assert (code, out) == (2, "")
    assert message in err


# -- --fail-empty --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["search", "xyzzy"], 1),
        (["search", "file", "--namespace", "mail"], 1),
        (["list", "--tag", "write"], 1),
        (["search", "file"], 0),
        (["list"], 0),
        (["similar", "read_file"], 0),
        (["summaries"], 0),
    ],
    ids=str,
)
def test_fail_empty_exits_1_when_nothing_is_found_and_says_nothing_more(
    small: str, argv: list[str], code: int
) -> None:
    for fmt in ([], ["--json"], ["--format", "csv"]):
        plain = run_main(*argv, "-c", small, *fmt)
        for _ in range(2):  # cold or warm
            failing = run_main(*argv, "-c", small, *fmt, "--fail-empty")
            assert (failing.stdout, failing.stderr) == (plain.stdout, plain.stderr)
            assert (plain.returncode, failing.returncode) == (0, code), (argv, fmt)


def test_fail_empty_in_batch_mode_fails_when_a_query_finds_nothing(small: str) -> None:
    code, out, _ = invoke(
        "search", "--queries", "-", "-c", small, "--fail-empty", input="read file\nxyzzy\n"
    )
    assert code == 1 and len(out.splitlines()) == 2
    code, _, _ = invoke("search", "--queries", "-", "-c", small, "--fail-empty", input="file\n")
    assert code == 0


# -- the terminal: one --no-pager, --color, help that fits, one way to name a value ----------


def on_a_terminal(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """Run ``python -m toolfind ARGS`` with a pseudo-terminal as stdin, stdout and stderr
    (as a person runs it); its exit code and all it wrote to the terminal."""
    import pty
    import subprocess
    import sys
    import threading

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:  # the terminal's reader: the child never blocks on a full buffer
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    with subprocess.Popen(
        [sys.executable, "-m", "toolfind", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "COLUMNS": "100", "LINES": "20", **env},
    ) as child:
        os.close(slave)
        code = child.wait(timeout=60)
    reader.join(timeout=60)
    os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize(
    "argv",
    [["show", "read_file"], ["list"], ["search", "file"], ["similar", "read_file"]],
    ids=" ".join,
)
def test_every_command_for_a_person_pages_on_a_terminal_unless_no_pager(
    small: str, tmp_path: Path, argv: list[str]
) -> None:
    paged = tmp_path / "paged.txt"
    env = {"TOOLFIND_PAGER": f"cat > {paged}"}  # a pager that keeps what it is given
    code, shown = on_a_terminal(*argv, "-c", small, env=env)
    assert code == 0 and "read_file" in paged.read_text(encoding="utf-8")
    assert "read_file" not in shown  # it went through the pager, not to the terminal
    paged.unlink()
    code, shown = on_a_terminal(*argv, "-c", small, "--no-pager", env=env)
    assert code == 0 and "read_file" in shown and not paged.exists()


def test_color_always_styles_a_pipe_and_never_styles_nothing(small: str) -> None:
    styled = run_main("search", "file", "-c", small, "--color", "always")
    assert styled.returncode == 0 and "\x1b[" in styled.stdout
    plain = run_main("search", "file", "-c", small)
    assert "\x1b[" not in plain.stdout
    forced = {"TTY_COMPATIBLE": "1"}  # Rich draws, as on a terminal
    assert "\x1b[1m" in run_main("search", "file", "-c", small, env=forced).stdout
    never = run_main("search", "file", "-c", small, "--color", "never", env=forced)
    assert never.returncode == 0 and "\x1b[" not in never.stdout and "read_file" in never.stdout
    for argv in (["validate", small], ["cache", "info"], ["show", "read_file", "-c", small]):
        done = run_main(*argv, "--color", "never", env=forced)
        assert done.returncode == 0 and "\x1b[" not in done.stdout, argv


def test_no_color_leaves_colour_out_on_a_terminal(small: str) -> None:
    code, shown = on_a_terminal("show", "read_file", "-c", small, "--no-pager", env={})
    assert code == 0 and "\x1b[3" in shown  # JSON in colour: a foreground colour
    code, shown = on_a_terminal(
        "show", "read_file", "-c", small, "--no-pager", env={"NO_COLOR": "1"}
    )
    assert code == 0 and "\x1b[3" not in shown and '"read_file"' in shown


def test_help_at_60_columns_gives_each_command_its_whole_summary() -> None:
    done = run_main("--help", env={"COLUMNS": "60"})
    commands = done.stdout.split("Commands:\n", 1)[1]
    assert "..." not in commands and max(map(len, commands.splitlines())) <= 60
    assert "Rank tools for a query; a query that names a\n" in commands
    assert " " * 14 + "tool returns it first." in commands


def every_usage() -> list[str]:
    lines = []
    for argv in (["search"], ["show"], ["similar"], ["validate"], ["eval"], ["tune"], ["list"]):
        lines.append(run_main(*argv, "--help").stdout)
    return lines


def test_every_value_is_named_one_way_in_help() -> None:
    helps = every_usage()
    usages = [text.splitlines()[0] for text in helps]
    assert usages == [
        "Usage: toolfind search [OPTIONS] [QUERY...]",
        "Usage: toolfind show [OPTIONS] NAME",
        "Usage: toolfind similar [OPTIONS] NAME",
        "Usage: toolfind validate [OPTIONS] [PATH...]",
        "Usage: toolfind eval [OPTIONS] QUERIES",
        "Usage: toolfind tune [OPTIONS] QUERIES",
        "Usage: toolfind list [OPTIONS]",
    ]
    text = "\n".join(helps)
    for typer_spelling in ("{", "<int", "<float", "<str", "<text"):
        assert typer_spelling not in text, typer_spelling
    assert "--limit N" in text and "--namespace NS" in text and "--k1 NUMBER" in text


def test_minus_v_is_the_version() -> None:
    done = run_main("-V")
    assert done.returncode == 0 and done.stdout == run_main("--version").stdout
    assert done.stdout.startswith("toolfind ")


# -- completion of values, from the warm index -------------------------------------------------


def complete(words: str, *catalog: str) -> list[str]:
    """What bash completion offers for the last of ``words`` (after ``toolfind``)."""
    typed = " ".join(["toolfind", *words.split()[:1], *catalog, *words.split()[1:]])
    if words.endswith(" "):
        typed += " "
    env = {"_TOOLFIND_COMPLETE": "complete_bash", "COMP_WORDS": typed}
    env["COMP_CWORD"] = str(len(typed.split()) - (0 if typed.endswith(" ") else 1))
    done = run_main(env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_tool_names_namespaces_and_tags_complete_from_the_warm_index(
    small: str, isolated: Path
) -> None:
    catalog = ("-c", small)
    assert complete("show rea", *catalog) == []  # cold: nothing, and nothing is built
    assert not isolated.exists() or not any(isolated.iterdir())
    assert run_main("list", *catalog).returncode == 0  # a run records the index
    assert complete("show rea", *catalog) == ["read_file"]
    assert complete("similar ", *catalog) == ["compress_file", "read_file", "send_mail"]
    assert complete("list --namespace ", *catalog) == ["files", "mail"]
    assert complete("search x --tag ", *catalog) == ["destructive", "read"]
    assert complete("search x --tag r", *catalog) == ["read"]
    assert complete("show rea") == []  # other catalogs: another index, not recorded


# -- round trip: what each dialect carries, read back ------------------------------------------

ROUND_TRIP = """\
namespace: files
tools:
  - name: read_file
    title: Read a file
    description: Read a text file and return its contents.
    parameters:
      type: object
      properties:
        path: {type: string, description: Path of the file.}
      required: [path]
    output_schema: {type: object, properties: {text: {type: string}}}
    annotations: {readOnlyHint: true, idempotentHint: true}
  - name: delete_file
    description: Delete a file for good.
    parameters:
      type: object
      properties:
        path: {type: string}
        force: {type: [boolean, "null"], default: false}
      additionalProperties: false
    annotations: {destructiveHint: true}
"""

#: What each dialect carries through ``schemas`` and back: every one the name, description
#: and input schema; MCP the title, annotations (so their tags) and output schema too; Gemini
#: the output schema. The LLM APIs refuse keys they do not know, so nothing else is added.
CARRIED = {
    "openai": {"name", "description", "parameters"},
    "anthropic": {"name", "description", "parameters"},
    "gemini": {"name", "description", "parameters", "output_schema"},
    "mcp": {"name", "description", "parameters", "output_schema", "title", "tags"},
}


def as_read(catalog: str) -> dict[str, dict[str, object]]:
    """Each tool of ``catalog`` as toolfind reads it: its native document and its tags (the
    annotations' included), by name."""
    tools = {}
    for row in json.loads(invoke("list", "-c", catalog, "--json")[1]):
        tool = json.loads(invoke("show", row["name"], "-c", catalog, "--json")[1])
        tools[row["name"]] = {**tool, "tags": row["tags"]}
    return tools


@pytest.mark.parametrize("dialect", sorted(CARRIED))
def test_each_dialect_reads_back_the_same_tools_as_far_as_it_carries_them(
    tmp_path: Path, dialect: str
) -> None:
    source = str(write(tmp_path / "c" / "files.yaml", ROUND_TRIP))
    code, out, _ = invoke("schemas", "-c", source, "--dialect", dialect)
    assert code == 0
    again = str(write(tmp_path / "again" / "files.json", out))
    assert invoke("schemas", "-c", again, "--dialect", dialect)[1] == out  # a fixed point
    first, back = as_read(source), as_read(again)
    assert list(back) == list(first) == ["read_file", "delete_file"]
    for name, tool in first.items():
        kept = {key: tool.get(key) for key in CARRIED[dialect]}
        assert {key: back[name].get(key) for key in CARRIED[dialect]} == kept, name
        lost = {"title", "output_schema", "tags"} - CARRIED[dialect]
        assert not any(back[name].get(key) for key in lost), (name, lost)  # as the docs say
