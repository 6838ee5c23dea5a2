"""The fast path answers warm `search`, `show --json`, `similar`, `categories` and `summaries`
byte for byte like the Typer app."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.helpers import SHIPPED, write
from toolfind.cli import fast as fastpath
from toolfind.cli.app import app

runner = CliRunner()
CATALOG = str(SHIPPED)
WORDS = [
    "compress",
    "file",
    "read_file",
    "files/read_file",
    "git",
    "commit",
    "email",
    "send",
    "calendar",
    "event",
    "S3",
    "bucket",
    "upload",
    "matrix",
    "factorial",
    "weather",
    "forecast",
    "zip",
    "http",
    "GET",
    "the",
    "a",
    "xyzzy",
    "日本語",
    "query",
    "database",
    "delete",
    "list",
    "search",
    "web",
]


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


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    limit=st.integers(min_value=1, max_value=12),
    schema=st.booleans(),
)
def test_search_output_is_byte_identical(
    warm: None, capsys: pytest.CaptureFixture[str], words: list[str], limit: int, schema: bool
) -> None:
    args = ["search", " ".join(words), "-c", CATALOG, "--json", "-k", str(limit)]
    if schema:
        args.append("--schema")
    expected = slow(args)
    assert fast(args, capsys) == expected


def test_show_output_is_byte_identical_for_every_tool(
    warm: None, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    rows = json.loads(slow(["list", "-c", CATALOG, "--json"]))
    assert len(rows) > 150
    for row in rows:
        for spelling in (row["name"], f"{row['namespace']}/{row['name']}"):
            args = ["show", spelling, "-c", CATALOG, "--json"]
            got = fast(args, capsys)
            assert got is not None, spelling
            assert got == slow(args), spelling


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


@pytest.mark.parametrize(
    "args",
    [
        ["search", "file", "--json", "--no-cache"],
        ["show", "nonexistent_tool_name", "--json"],
        ["show", "nonexistent_tool_name"],
        ["show", "read_file", "--format", "OpenAI"],
        ["schemas", "--format", "openai"],
        ["search", "-k", "0", "file", "--json"],
    ],
)
def test_anything_else_falls_back(
    warm: None, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert fast([*args, "-c", CATALOG], capsys) is None


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


# -- categories, summaries, similar: answered from the whole cached index --------------------


def both(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[tuple[str, str], ...]:
    """(stdout, stderr) of the Typer app, then of the fast path (which must answer)."""
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    capsys.readouterr()
    assert fastpath.run(args) == 0
    got = capsys.readouterr()
    return (result.stdout, result.stderr), (got.out, got.err)


@pytest.mark.parametrize(
    "args",
    [
        ["categories", "--json"],
        ["categories"],
        ["summaries", "--json"],
        ["summaries", "--json", "--all"],
        ["summaries", "--deferred", "--json"],
        ["summaries"],
        ["summaries", "--all"],
        ["list"],
        ["list", "--json"],
        ["list", "--json", "--deferred"],
        ["list", "--no-deferred", "--namespace", "files"],
        ["list", "--json", "--namespace", "git", "--tag", "read-only"],
        ["list", "--json", "--tag", "filesystem", "--tag", "read"],
    ],
)
def test_categories_and_summaries_are_byte_identical(
    warm: None, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    typer_out, fast_out = both([*args, "-c", CATALOG], capsys)
    assert fast_out == typer_out
    assert len(typer_out[0]) > 100


def test_similar_is_byte_identical_for_every_tool(
    warm: None, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    rows = json.loads(slow(["list", "-c", CATALOG, "--json"]))
    for i, row in enumerate(rows):
        args = ["similar", f"{row['namespace']}/{row['name']}", "-c", CATALOG]
        if i % 2 == 0:
            args.append("--json")
        if i % 3 == 0:
            args += ["-k", str(1 + i % 9)]
        typer_out, fast_out = both(args, capsys)
        assert fast_out == typer_out, args


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    limit=st.sampled_from([None, 1, 3, 12]),
    flags=st.lists(st.sampled_from(["--json", "--schema", "--explain"]), unique=True),
    namespace=st.sampled_from([None, "files", "git", "nope", ""]),
    tags=st.lists(st.sampled_from(["filesystem", "read", "write", "read-only", "zzz"]), max_size=2),
    min_score=st.sampled_from([None, "0", "2.5", "-1", "40"]),
)
def test_search_with_filters_or_as_a_table_is_byte_identical(
    warm: None,
    capsys: pytest.CaptureFixture[str],
    words: list[str],
    limit: int | None,
    flags: list[str],
    namespace: str | None,
    tags: list[str],
    min_score: str | None,
) -> None:
    args = ["search", " ".join(words), "-c", CATALOG, *flags]
    if limit is not None:
        args += ["--limit", str(limit)]
    if namespace is not None:
        args += ["--namespace", namespace]
    for tag in tags:
        args += ["--tag", tag]
    if min_score is not None:
        args += ["--min-score", min_score]
    typer_out, fast_out = both(args, capsys)
    assert fast_out == typer_out


def test_show_as_a_table_or_in_another_format_is_byte_identical_for_every_tool(
    warm: None, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    rows = json.loads(slow(["list", "-c", CATALOG, "--json"]))
    formats = [[], ["--format", "openai"], ["--format", "anthropic"], ["--format", "mcp"]]
    formats.append(["--format", "gemini"])
    for i, row in enumerate(rows):
        args = ["show", f"{row['namespace']}/{row['name']}", "-c", CATALOG, *formats[i % 5]]
        if i % 3 == 0:
            args.append("--json")
        typer_out, fast_out = both(args, capsys)
        assert fast_out == typer_out, args


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
        ["summaries", "--format", "markdown"],
        ["summaries", "--json", "--all", "--deferred"],
        ["summaries", "--json", "--format", "json"],
        ["similar", "--json"],
        ["similar", "read_file", "--json", "-k", "0"],
        ["similar", "read_file", "--json", "--weight", "name=2"],
        ["similar", "no_such_tool_anywhere", "--json"],
        ["similar", "read_file", "write_file", "--json"],
        ["categories", "--json", "--no-cache"],
        ["list", "--deferred", "--no-deferred"],
        ["list", "--namespace"],
        ["list", "extra"],
    ],
)
def test_index_commands_fall_back_on_anything_else(
    warm: None, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert fast([*args, "-c", CATALOG], capsys) is None


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


# -- the grammar: what the fast path accepts, Typer accepts alike ---------------------------------


def click_command(name: str) -> Any:
    """The click command Typer makes of ``name`` (Typer brings its own click)."""
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]


def click_options(name: str) -> dict[str, Any]:
    """Every option spelling of the Typer command ``name`` -> its click option."""
    return {
        opt: param
        for param in click_command(name).params
        if param.param_type_name == "option"
        for opt in (*param.opts, *param.secondary_opts)
    }


def click_arguments(name: str) -> list[Any]:
    return [p for p in click_command(name).params if p.param_type_name == "argument"]


@pytest.mark.parametrize("name", sorted(fastpath.GRAMMAR))
def test_every_option_of_the_fast_grammar_is_the_typer_commands(name: str) -> None:
    grammar = fastpath.GRAMMAR[name]
    options = click_options(name)
    for flag in grammar.flags:  # flags: no value, and --x/--no-x are one option's two sides
        assert options[flag].is_flag, flag
        assert flag in options[flag].opts or flag in options[flag].secondary_opts
    for opt, repeatable in grammar.valued.items():
        option = options[opt]
        assert not option.is_flag and option.nargs == 1, opt
        assert option.multiple is repeatable, opt
        assert option.opts == [opt] and not option.secondary_opts, opt
    catalog = options["--catalog"]
    assert sorted(catalog.opts) == sorted(fastpath.CATALOG_OPTIONS) and catalog.multiple
    if grammar.limit is None:
        assert "--limit" not in options and "-k" not in options
    else:
        limit = options["--limit"]
        assert sorted(limit.opts) == sorted(fastpath.LIMIT_OPTIONS) and not limit.multiple
        assert limit.default == (grammar.limit or None)  # 0: no limit unless given
    arguments = click_arguments(name)
    assert len(arguments) == int(grammar.takes_name)
    assert all((argument.nargs == -1) is grammar.joins for argument in arguments)
    if "--format" in grammar.valued:
        assert set(options["--format"].type.choices) == grammar.formats


def test_the_fast_path_leaves_every_command_outside_its_grammar_to_typer() -> None:
    others = ["schemas", "validate", "eval", "tune", "cache", "serve-mcp", "catalog", "--help"]
    for name in [*others, "--version", "nope"]:
        assert name not in fastpath.GRAMMAR
        assert fastpath.run([name]) is None
        assert fastpath.run([name, "--json"]) is None


#: Values an option may get: plain words, numbers, option-like and odd spellings.
VALUES = st.sampled_from(
    ["files", "io", "0", "1", "3", "-1", "2.5", "-0.5", "1e3", "007", " ", "", "--json", "openai"]
    + ["native", "mcp", "x y", "--tag", "-k", "\uff13", "nan", ".5"]
)


@st.composite
def fast_argvs(draw: st.DrawFn) -> list[str]:
    """An argv of one fast command, made of its options (any order, repeats, missing values)
    and a few other words."""
    name = draw(st.sampled_from(sorted(fastpath.GRAMMAR)))
    grammar = fastpath.GRAMMAR[name]
    tokens = [
        *grammar.flags,
        *grammar.valued,
        *fastpath.CATALOG_OPTIONS,
        *(fastpath.LIMIT_OPTIONS if grammar.limit is not None else ()),
        "--unknown",
        "--json=1",
        "-",
    ]
    argv = [name]
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            argv.append(draw(st.sampled_from(["read_file", "read a file", "x"])))
        else:
            token = draw(st.sampled_from(tokens))
            argv.append(token)
            if kind > 1 and token not in grammar.flags:
                argv.append(draw(VALUES))
    return argv


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fast_argvs())
def test_whatever_the_fast_parser_accepts_typer_reads_alike(argv: list[str]) -> None:
    args = fastpath.parse(argv)
    if args is None:
        return  # Typer answers
    command = click_command(argv[0])
    with command.make_context(argv[0], list(argv[1:])) as ctx:
        params = ctx.params
    options = click_options(argv[0])
    grammar = fastpath.GRAMMAR[argv[0]]
    for flag in grammar.flags:
        option = options[flag]
        if flag in option.secondary_opts:  # --no-x: False when given
            if flag in args.flags:
                assert params[str(option.name)] is False
        elif flag in args.flags:
            assert params[str(option.name)] is True
        elif not option.secondary_opts:
            assert params[str(option.name)] is False
    if not args.flags & {"--deferred", "--no-deferred"} and "--no-deferred" in options:
        assert params["deferred"] is None
    for opt, repeatable in grammar.valued.items():
        got = params[str(options[opt].name)]
        given = args.values.get(opt)
        if repeatable:
            assert tuple(got or ()) == tuple(given or ())
        elif given is None:
            assert got == options[opt].default
        elif opt == "--min-score":
            assert got == float(given[0])
        else:
            assert got == given[0]
    assert tuple(params["catalog"] or ()) == tuple(args.catalogs)
    if grammar.limit is not None:
        assert (params["limit"] or 0) == args.limit
    if grammar.takes_name:
        name = params[str(click_arguments(argv[0])[0].name)]
        assert (" ".join(name) if grammar.joins else name) == args.name


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--json", "-k", "3", "-c", "a", "-c", "b", "--schema"],
        ["list", "--tag", "a", "--tag", "b", "--namespace", "files", "--no-deferred"],
        ["show", "read_file", "--format", "openai"],
        ["summaries", "--all", "--json"],
        ["similar", "read_file", "-k", "2"],
        ["search", "compress", "file", "--json"],
        ["list", "-k", "3", "--json"],
        ["show", "read_file", "--format", "gemini"],
    ],
)
def test_the_fast_parser_reads_the_plain_spellings(argv: list[str]) -> None:
    assert fastpath.parse(argv) is not None
    test_whatever_the_fast_parser_accepts_typer_reads_alike.hypothesis.inner_test(argv)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--limit=3", "--json"],  # --option=value: Typer's
        ["search", "q", "-k", "0"],
        ["search", "q", "-k", "\uff13"],  # a digit, not an ASCII one
        ["search", "q", "--min-score", "1e3"],
        ["search", "  ", "--json"],
        ["list", "--namespace", "a", "--namespace", "b"],
        ["list", "--deferred", "--no-deferred"],
        ["summaries", "--all", "--deferred"],
        ["show", "x", "y"],
        ["similar"],
        ["schemas"],
        [],
    ],
)
def test_the_fast_parser_leaves_anything_doubtful_to_typer(argv: list[str]) -> None:
    assert fastpath.parse(argv) is None
