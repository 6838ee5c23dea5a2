"""The warm path: a real route to the one command layer (cli.commands). It answers only
from a current cache, reads argv as the Typer command does, and prints what the Typer
command prints; it leaves anything else to Typer, and imports neither Typer nor what a
warm command does not need."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.helpers import SHIPPED, write
from toolfind.cli import commands
from toolfind.cli import fast as fastpath
from toolfind.cli.app import app
from toolfind.cli.common import typer_command
from toolfind.cli.grammar import Params

runner = CliRunner()
CATALOG = str(SHIPPED)


def slow(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def fast(args: list[str], capsys: pytest.CaptureFixture[str]) -> str | None:
    capsys.readouterr()
    code = fastpath.run(args)
    if code is None:
        return None
    assert code == 0
    return capsys.readouterr().out


@pytest.fixture
def warm() -> None:
    """A slow run records the index and the manifest entry the fast path needs."""
    slow(["search", "file", "-c", CATALOG, "--json"])


def test_fast_path_answers_only_when_warm(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["search", "read a file", "-c", CATALOG, "--json"]
    assert fast(args, capsys) is None
    expected = slow(args)
    assert fast(args, capsys) == expected


def test_a_changed_catalog_is_never_answered_from_the_old_segment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = tmp_path / "c.jsonl"
    cat.write_text(
        '{"name": "alpha_tool", "description": "Alpha does things."}\n', encoding="utf-8"
    )
    args = ["search", "alpha", "-c", str(cat), "--json"]
    slow(args)
    assert fast(args, capsys) is not None
    with cat.open("a", encoding="utf-8") as fh:
        fh.write('{"name": "alpha_two", "description": "Alpha again."}\n')
    os.utime(cat, ns=(1, 1))  # a different mtime even on coarse clocks
    assert fast(args, capsys) is None
    assert "alpha_two" in slow(args)


def test_a_new_file_in_a_catalog_directory_invalidates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "cats"
    d.mkdir()
    (d / "a.jsonl").write_text(
        '{"name": "alpha_tool", "description": "Alpha."}\n', encoding="utf-8"
    )
    args = ["search", "alpha", "-c", str(d), "--json"]
    slow(args)
    assert fast(args, capsys) is not None
    (d / "b.jsonl").write_text('{"name": "alpha_b", "description": "Alpha b."}\n', encoding="utf-8")
    os.utime(d, ns=(1, 1))
    assert fast(args, capsys) is None


TRICKY = [
    {
        "name": "quote_tool",
        "description": 'Says "hi" \\ back.\nSecond line\twith a tab, é, 日本語, \u2028 and \x7f.',
        "parameters": {
            "type": "object",
            "properties": {
                "ratio": {"type": "number", "default": 1e-07, "maximum": 1e300, "minimum": -0.0},
                "count": {"type": "integer", "default": 12345678901234567890},
                "flags": {"type": "array", "items": {}, "default": []},
                "mode": {"enum": ["a", None, True, 2.5], "description": "Ünïcödé \\u0000"},
            },
            "required": ["ratio"],
        },
        "tags": ["quotes", "ünï"],
        "annotations": {"readOnlyHint": True},
    },
    {"name": "deferred_quote", "description": 'Deferred "quote" tool.', "defer": True},
    {"name": "plain_quote", "description": "", "parameters": {"type": "object"}},
]


@pytest.mark.parametrize("schema", [False, True])
def test_escapes_numbers_and_empty_values_render_byte_identically(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], schema: bool
) -> None:
    import json

    cat = tmp_path / "tricky.json"
    cat.write_text(json.dumps(TRICKY, ensure_ascii=False), encoding="utf-8")
    args = ["search", "quote tool", "-c", str(cat), "--json", *(["--schema"] if schema else [])]
    expected = slow(args)
    assert fast(args, capsys) == expected
    for entry in TRICKY:
        show = ["show", str(entry["name"]), "-c", str(cat), "--json"]
        assert fast(show, capsys) == slow(show)


def _write(tmp_path: Path, name: str, entries: object) -> str:
    """A JSON catalog with its non-ASCII text as is (names the fast path must read back)."""
    return str(write(tmp_path / name, json.dumps(entries, ensure_ascii=False)))


def test_show_carries_a_native_entrys_unknown_keys_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = _write(
        tmp_path,
        "mixed.json",
        [
            {"name": "native_tool", "description": "Native.", "tags": ["t"], "x-vendor": [1, 2]},
            {"name": "mcp_tool", "description": "MCP.", "inputSchema": {}, "_meta": {"k": 1}},
        ],
    )
    for name, kept in (("native_tool", True), ("mcp_tool", False)):
        args = ["show", name, "-c", cat, "--json"]
        expected = slow(args)
        assert fast(args, capsys) == expected
        assert ('"x-vendor"' in expected or '"_meta"' in expected) is kept


def test_disabled_tools_are_shown_never_searched_and_make_names_ambiguous(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    cat = _write(
        tmp_path,
        "flags.json",
        [
            {"name": "alpha_off", "description": "Alpha tool.", "enabled": False},
            {"name": "alpha_on", "description": "Alpha tool.", "namespace": "a"},
            {"name": "alpha-on", "description": "Alpha tool.", "namespace": "b", "enabled": False},
        ],
    )
    show = ["show", "alpha_off", "-c", cat, "--json"]
    expected = slow(show)  # builds the cache (the fast path answers only when warm)
    assert fast(show, capsys) == expected
    for query in ("alpha_off", "alpha", "alpha_on", "a/alpha_on"):
        args = ["search", query, "-c", cat, "--json"]
        expected = slow(args)
        assert fast(args, capsys) == expected
        assert [h["name"] for h in json.loads(expected)["hits"]] == ["alpha_on"]
    # alpha_on and the disabled alpha-on share a name key: the Typer path explains that.
    assert fast(["show", "alphaon", "-c", cat, "--json"], capsys) is None


def test_a_name_without_letters_or_digits_is_found_by_both_paths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["___", "---", ".", "🚀"]
    cat = _write(
        tmp_path, "u.json", [{"name": n, "description": "Odd name."} for n in [*names, "launch"]]
    )
    for name in names:
        for spelling in (name, f"u/{name}", f"u:{name}"):
            dash = spelling.startswith("-")  # only after "--", which the fast path leaves
            args = ["show", "-c", cat, "--json", "--", spelling] if dash else ["show", spelling]
            args += [] if dash else ["-c", cat, "--json"]
            expected = slow(args)  # Typer (and the cache the fast path needs)
            assert json.loads(expected)["name"] == name
            assert fast(args, capsys) == (None if dash else expected)


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 8])
def test_ties_break_by_name_namespace_then_position_as_the_index_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: int
) -> None:
    entries = [
        {"name": name, "namespace": ns, "description": "Sync the shared ledger."}
        for name, ns in [("b", "y"), ("a", "z"), ("b", "x"), ("a", "z"), ("c", ""), ("a", "y")]
    ]
    cat = _write(tmp_path, "ties.json", entries)
    args = ["search", "ledger", "-c", cat, "--json", "-k", str(limit)]
    expected = slow(args)
    assert fast(args, capsys) == expected


# -- the warm path answers, and prints what the Typer command prints ---------------------------


def both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[tuple[str, str], ...]:
    """(stdout, stderr) of the Typer app, then of the warm path (which must answer, with the
    same exit code: 0, or 1 for --fail-empty)."""
    result = runner.invoke(app, args)
    assert result.exit_code == (1 if "--fail-empty" in args else 0), result.stderr
    capsys.readouterr()
    assert fastpath.run(args) == result.exit_code
    got = capsys.readouterr()
    return (result.stdout, result.stderr), (got.out, got.err)


@pytest.mark.parametrize(
    "args",
    [
        ["search", "compress file", "--json", "-k", "3"],  # from the index file alone
        ["search", "read a fil", "--json", "--schema"],
        ["search", "xyzzy read", "--namespace", "files", "--tag", "read-only", "--explain"],
        ["search", "send email", "--namespace", "nope", "--min-score", "2.5", "--json"],
        ["search", "git commit", "--format", "csv", "--lexical"],
        ["show", "files/read_file", "--json"],  # from the index file alone
        ["show", "read_file", "--format", "gemini"],
        ["list", "--no-deferred", "--namespace", "files"],
        ["list", "--json", "--tag", "filesystem", "--tag", "read", "-k", "2"],
        ["list", "--format", "tsv", "--deferred"],
        ["categories", "--json"],
        ["categories"],
        ["summaries", "--all"],
        ["summaries", "--format", "markdown"],
        ["summaries", "--json"],
        ["similar", "read_file", "-k", "3"],
        ["similar", "files/read_file", "--json"],
        # one rule for formats, fields and the old --format of show
        ["search", "compress file", "--fields", "name,score"],  # from the index file alone
        ["search", "read file", "--format", "json", "--fields", "name,schema"],
        ["search", "xyzzy", "--format", "csv", "--fail-empty"],
        ["show", "read_file", "--dialect", "mcp"],
        ["show", "read_file", "--format", "openai", "--json"],
        ["list", "--fields", "name,tags", "--format", "csv", "--namespace", "git"],
        ["similar", "read_file", "--format", "tsv"],
        ["categories", "--format", "jsonl", "--fields", "name,tool_count"],
        ["summaries", "--format", "csv", "--all"],
    ],
)
def test_the_warm_path_prints_what_the_typer_command_prints(
    warm: None, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    typer_out, fast_out = both([*args, "-c", CATALOG], capsys)
    assert fast_out == typer_out
    assert typer_out[0].strip()


def test_index_commands_warn_about_skipped_entries_like_the_typer_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = _write(
        tmp_path,
        "half.json",
        [
            {"name": "good_tool", "description": "A good tool.", "defer": True},
            {"name": "bad_tool", "description": "Bad parameters.", "parameters": 5},
            {"name": "other_tool", "description": "Another good tool."},
        ],
    )
    for args in (
        ["categories", "--json"],
        ["list", "--json"],
        ["summaries", "--json"],
        ["summaries"],
        ["similar", "good_tool", "--json"],
        ["search", "good xyzzy"],
    ):
        args = [*args, "-c", cat]
        slow(args)
        typer_out, fast_out = both(args, capsys)
        assert fast_out == typer_out
        assert "Warning: skipped" in fast_out[1]


@pytest.mark.parametrize(
    "args",
    [
        ["categories", "--json", "extra"],
        ["search", "file", "--min-score", "1e3"],
        ["search", "file", "--min-score", "nan"],
        ["search", "file", "--namespace", "files", "--namespace", "git"],
        ["search", "file", "--namespace=files"],
        ["search", "file", "--weight", "name=2"],
        ["search", "--queries", "-"],
        ["search", "   "],
        ["summaries", "--json", "--format", "markdown"],  # a usage error: Typer's to say
        ["summaries", "--json", "--all", "--deferred"],
        ["summaries", "--format", "html"],
        ["similar", "--json"],
        ["similar", "read_file", "--json", "-k", "0"],
        ["similar", "read_file", "--json", "--weight", "name=2"],
        ["similar", "read_file", "write_file", "--json"],
        ["categories", "--json", "--no-cache"],
        ["list", "--deferred", "--no-deferred"],
        ["list", "--namespace"],
        ["list", "extra"],
        ["list", "--json", "--format", "csv"],
        ["search", "file", "--json", "--no-cache"],
        ["show", "read_file", "--format", "OpenAI"],
        ["schemas", "--format", "openai"],
        ["search", "-k", "0", "file", "--json"],
    ],
)
def test_index_commands_fall_back_on_anything_else(
    warm: None, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert fast([*args, "-c", CATALOG], capsys) is None


@pytest.mark.parametrize(
    "args",
    [
        ["show", "raed_file", "--json"],  # from the index file
        ["show", "raed_file"],  # a table, said from the index file too
        ["show", "raed_file", "--dialect", "openai"],
        ["show", "files/raed_file", "--json"],
        ["show", "nonexistent_tool_name"],  # nothing close
        ["similar", "raed_file", "--json"],
        ["similar", "no_such_tool_anywhere"],
    ],
)
def test_a_name_no_tool_has_is_said_by_the_warm_path_as_by_typer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    cat = _write(
        tmp_path,
        "half.json",
        [
            {"name": "read_file", "description": "Read a file.", "namespace": "files"},
            {"name": "bad_tool", "description": "Bad parameters.", "parameters": 5},
            *({"name": f"tool_{i}", "description": "Filler."} for i in range(100)),
        ],
    )
    args = [*args, "-c", cat]
    slow(["list", "-c", cat])  # the cache the warm path reads
    typer = runner.invoke(app, args)
    assert typer.exit_code == 1
    capsys.readouterr()
    assert fastpath.run(args) == 1
    got = capsys.readouterr()
    assert (got.out, got.err) == (typer.stdout, typer.stderr) == ("", got.err)
    assert got.err.startswith("Warning: skipped ")  # the skipped entry first, once
    assert got.err.count("Warning: skipped ") == 1
    if "raed_file" in args[1]:
        assert "Did you mean 'read_file'?" in got.err or "'files/read_file'?" in got.err


def test_a_warm_miss_imports_no_typer() -> None:
    import subprocess
    import sys

    slow(["list", "-c", CATALOG])
    script = "import sys; from toolfind.__main__ import main; sys.argv[0] = 'toolfind'; main()"
    for output in ([], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", script, "show", "raed_file", "-c", CATALOG]
            + output,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 1
        assert "Did you mean 'read_file'?" in done.stderr
        modules = {
            line.split("|")[-1].strip()
            for line in done.stderr.splitlines()
            if line.startswith("import time:")
        }
        assert "toolfind.cli.fast" in modules
        assert not modules & {"typer", "rich", "toolfind.cli.common", "pickle"}


def test_index_commands_answer_only_when_warm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = _write(tmp_path, "c.json", [{"name": "solo_tool", "description": "Solo."}])
    args = ["categories", "-c", cat, "--json"]
    assert fast(args, capsys) is None
    slow(args)
    assert fast(args, capsys) == slow(args)


@pytest.mark.parametrize(
    "command",
    [
        ["categories", "--json"],
        ["summaries", "--all"],
        ["similar", "read_file", "--json"],
        ["search", "read a file"],
    ],
)
def test_warm_index_commands_import_no_typer_nor_catalog_readers(
    warm: None, command: list[str]
) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolfind", *command, "-c", CATALOG],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "_file" in done.stdout or '"total_tools"' in done.stdout
    modules = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "toolfind.cli.fast" in modules and "toolfind.store.index" in modules
    heavy = {
        "typer",
        "rich",
        "yaml",
        "jsonschema",
        "mcp",
        "toolfind.catalog.loader",
        "toolfind.config",
    }
    assert not modules & heavy


#: What the console script itself never needs for a warm index command: each of these costs a
#: good part of Python's start-up (typing and pathlib, json and pickle through re, dataclasses
#: through inspect).
STDLIB_HEAVY = {"typing", "re", "pathlib", "dataclasses", "inspect", "pickle", "json"}
STDLIB_HEAVY |= {"contextlib", "enum"}


@pytest.mark.parametrize(
    "command",
    [
        ["categories", "--json"],
        ["list", "--json"],
        ["summaries", "--all", "--json"],
        ["similar", "read_file", "--json"],
        ["similar", "read_file"],
        ["search", "read a file"],
        ["search", "read a file", "--tag", "io", "--json"],
        ["show", "read_file"],
        ["show", "read_file", "--format", "openai"],
    ],
)
def test_warm_index_commands_import_no_heavy_standard_modules(
    warm: None, command: list[str]
) -> None:
    """As the ``toolfind`` script runs them (``python -m`` would add runpy's own imports)."""
    import subprocess
    import sys

    script = "import sys; from toolfind.__main__ import main; sys.argv[0] = 'toolfind'; main()"
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", script, *command, "-c", CATALOG],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip()
    modules = {
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "toolfind.store.index" in modules and "typer" not in modules
    assert not modules & STDLIB_HEAVY, sorted(modules & STDLIB_HEAVY)


# -- the grammar: one per command, two parsers that read argv alike -----------------------------

WARM = sorted(name for name, spec in commands.COMMANDS.items() if spec.warm)


def _recording_app() -> tuple[typer.Typer, list[Params]]:
    """A Typer app of the warm commands, made from their grammar as the real app's are, whose
    bodies only record the arguments they receive."""
    received: list[Params] = []
    recorder = typer.Typer()
    for name in WARM:

        def body(p: Params) -> int:
            received.append(p)
            return 0

        recorder.command(name)(typer_command(commands.COMMANDS[name], body))
    return recorder, received


RECORDER, RECEIVED = _recording_app()


def test_the_fast_path_leaves_every_other_command_to_typer() -> None:
    others = ["schemas", "validate", "eval", "tune", "cache", "serve-mcp", "catalog", "--help"]
    for name in [*others, "--version", "nope"]:
        assert fastpath.run([name]) is None
        assert fastpath.run([name, "--json"]) is None


#: Values an option may get: plain words, numbers, option-like and odd spellings.
VALUES = st.sampled_from(
    ["files", "io", "0", "1", "3", "-1", "2.5", "-0.5", "1e3", "007", " ", "", "--json", "openai"]
    + ["native", "mcp", "x y", "--tag", "-k", "\uff13", "nan", ".5", "csv", "markdown"]
)


@st.composite
def fast_argvs(draw: st.DrawFn) -> list[str]:
    """An argv of one warm command, made of its options (any order, repeats, missing values)
    and a few other words."""
    spec = commands.COMMANDS[draw(st.sampled_from(WARM))]
    valued = {s for o in spec.params if o.kind not in ("flag", "switch") for s in o.decls}
    spellings = [s for opt in spec.params for s in opt.warm]
    tokens = [*spellings, *spellings, "--unknown", "--json=1", "-", "--no-cache"]
    argv = [spec.name]
    for _ in range(draw(st.integers(0, 7))):
        if draw(st.integers(0, 3)) == 0:
            argv.append(draw(st.sampled_from(["read_file", "read a file", "x"])))
            continue
        token = draw(st.sampled_from(tokens))
        argv.append(token)
        if token in valued and draw(st.integers(0, 5)):  # now and then, the value is missing
            argv.append(draw(VALUES))
    return argv


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fast_argvs())
def test_whatever_the_fast_parser_accepts_the_typer_command_receives_alike(
    argv: list[str],
) -> None:
    parsed = fastpath.parse(argv)
    if parsed is None:
        return  # Typer answers
    RECEIVED.clear()
    result = runner.invoke(RECORDER, argv)
    assert result.exit_code == 0, (argv, result.output)
    assert parsed == RECEIVED[0] and parsed.spec.name == argv[0]


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--json", "-k", "3", "-c", "a", "-c", "b", "--schema"],
        ["list", "--tag", "a", "--tag", "b", "--namespace", "files", "--no-deferred"],
        ["show", "read_file", "--format", "openai"],
        ["summaries", "--all", "--json"],
        ["summaries", "--format", "markdown"],
        ["similar", "read_file", "-k", "2"],
        ["search", "compress", "file", "--json", "--lexical"],
        ["list", "-k", "3", "--json"],
        ["show", "read_file", "--format", "gemini"],
    ],
)
def test_the_fast_parser_reads_the_plain_spellings(argv: list[str]) -> None:
    assert fastpath.parse(argv) is not None
    test_whatever_the_fast_parser_accepts_the_typer_command_receives_alike.hypothesis.inner_test(
        argv
    )  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--limit=3", "--json"],  # --option=value: Typer's
        ["search", "q", "-k", "0"],
        ["search", "q", "-k", "\uff13"],  # a digit, not an ASCII one
        ["search", "q", "--min-score", "1e3"],
        ["search", "q", "--semantic"],
        ["search", "q", "--weight", "name=2"],
        ["search", "  ", "--json"],
        ["list", "--namespace", "a", "--namespace", "b"],
        ["list", "--deferred", "--no-deferred"],
        ["list", "--no-cache"],
        ["show", "x", "y"],
        ["show", "x", "--format", "OpenAI"],
        ["similar"],
        ["schemas"],
        [],
    ],
)
def test_the_fast_parser_leaves_anything_doubtful_to_typer(argv: list[str]) -> None:
    assert fastpath.parse(argv) is None
