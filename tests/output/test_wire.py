"""toolfind.output.wire: the JSON shapes (keys pinned here, so changing one is a deliberate
CHANGELOG change), and the text sanitiser."""

from __future__ import annotations

import io
import unicodedata
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolfind.models import (
    Category,
    Finding,
    Hit,
    SearchResult,
    Similar,
    Source,
    TermContribution,
    Tool,
)
from toolfind.output import schemas, wire
from toolfind.output.text import HIDDEN, clean_text, guard_streams, render_path, render_text


@dataclass
class Status:
    available: bool
    detail: str = ""


def test_hit_keys_and_deferred_schema() -> None:
    tool = Tool(name="t", description="Does t.", defer=True, source=Source("c.yaml", "/tools/0"))
    record = wire.hit_record(tool, 1.23456789)
    assert tuple(record) == (*wire.HIT_KEYS, "schema")
    assert record["score"] == 1.234568
    assert record["source"] == {"file": "c.yaml", "pointer": "/tools/0"}


def test_descriptions_in_hits_lose_invisible_characters_and_are_capped() -> None:
    tool = Tool(name="t", description="Safe\u200b text\u202e" + "x" * 5000)
    description = wire.hit_record(tool, 1.0)["description"]
    assert "\u200b" not in description and "\u202e" not in description
    assert len(description) == wire.DESCRIPTION_LIMIT and description.endswith("…")


def test_categories_mark_backends_available_or_not_and_list_a_dead_one() -> None:
    categories = [Category("files", 3, 1, ("fs",)), Category("time", 2, 0, ())]
    record = wire.categories_record(
        categories, {"time": Status(True), "git": Status(False, "exited")}
    )
    by_name = {c["name"]: c for c in record["categories"]}
    assert tuple(by_name["files"]) == wire.CATEGORY_KEYS
    assert by_name["time"]["available"] is True
    assert by_name["git"] == {
        "name": "git",
        "tool_count": 0,
        "deferred_count": 0,
        "tags": [],
        "available": False,
        "detail": "exited",
    }
    assert record["total_categories"] == 3 and record["total_tools"] == 5


def test_search_records_keys_and_an_explained_hit() -> None:
    tool = Tool(name="t", tags=("x",), annotations={"readOnlyHint": True, "openWorldHint": 1})
    term = TermContribution("t", "name", 1, 2.0, 0.5, 4.0, 1.0)
    result = SearchResult("q", (Hit(tool, 2.0, "exact", (term,)),), ("zz",))
    record = wire.search_record(result, include_schema=True)
    assert list(record) == schemas.SEARCH_SCHEMA["required"] and record["unmatched_terms"] == ["zz"]
    hit = record["hits"][0]
    assert tuple(hit) == (*wire.HIT_KEYS, "schema", "explain")
    assert hit["tags"] == ["x", "read-only"] and hit["match"] == "exact"
    assert [tuple(e) for e in hit["explain"]] == [wire.EXPLAIN_KEYS]
    assert hit["source"] == {"file": None, "pointer": None}


def test_cache_info_counts_indexes_and_bytes() -> None:
    record = wire.cache_info_record("/c", True, [("a.pickle", 10), ("manifest.marshal", 5)])
    assert tuple(record) == ("path", "exists", "indexes", "bytes", "files")
    assert record["indexes"] == 1 and record["bytes"] == 15
    assert [tuple(f) for f in record["files"]] == [("file", "bytes")] * 2


def test_every_record_with_a_schema_has_its_required_keys_first_and_no_other() -> None:
    tool = Tool(name="t", description="Does t.")
    hits = (Hit(tool, 1.0, "exact"), Hit(Tool(name="u", defer=True), 0.5))
    result = SearchResult("t", hits, ("zz",), (("tt", "t"),))
    status = {"git": Status(False, "exited")}
    records = [
        (wire.search_record(result, callable_=lambda _: True), schemas.SEARCH_SCHEMA),
        (
            wire.similar_tools_record(tool, [Similar(tool, 1.0, ("t",))]),
            schemas.SIMILAR_TOOLS_SCHEMA,
        ),
        (wire.categories_record([Category("files", 1, 0, ())], status), schemas.CATEGORIES_SCHEMA),
    ]
    for record, schema in records:
        required = schema["required"]
        assert list(record)[: len(required)] == required and set(record) <= set(
            schema["properties"]
        )
        for key, value in record.items():
            items = schema["properties"][key].get("items", {})
            for item in value if isinstance(value, list) and "required" in items else ():
                assert list(item)[: len(items["required"])] == items["required"]
                assert set(item) <= set(items["properties"]), item


# -- text ------------------------------------------------------------------------------------


def test_invisible_and_control_characters_are_removed_newline_and_tab_kept() -> None:
    assert (
        clean_text("Read\u200b a fi\u202ele\u2066.\nTab\there\U000e0041\x1b[31m\x07")
        == "Read a file.\nTab\there[31m"
    )


def test_private_use_and_unassigned_code_points_are_removed() -> None:
    assert clean_text("a\ue000b\U0010fffdc\u0378d") == "abcd"


def test_a_text_over_the_limit_is_cut_and_marked() -> None:
    assert clean_text("x" * 10_000, 4000) == "x" * 3999 + "…"
    assert clean_text("word " * 10, 11) == "word word…"  # no space before the mark
    assert clean_text("x" * 10_000) == "x" * 10_000


@given(st.text(), st.none() | st.integers(min_value=1, max_value=40))
def test_clean_text_keeps_exactly_the_visible_characters(text: str, limit: int | None) -> None:
    cleaned = clean_text(text, limit)
    assert not any(c not in "\n\t" and unicodedata.category(c) in HIDDEN for c in cleaned)
    kept = "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in HIDDEN)
    if limit is None or len(kept) <= limit:
        assert cleaned == kept
    else:
        assert len(cleaned) <= limit and cleaned.endswith("…")
        assert kept.startswith(cleaned[:-1])


# -- file names and messages: rendered safely in every output -------------------------------


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("catalogs/read.json", "catalogs/read.json"),
        ("caf\udce9.json", "caf\\xe9.json"),  # a Latin-1 byte, surrogate-escaped by Python
        ("a\x1b[31m.json", "a\\x1b[31m.json"),  # ESC would act on a terminal
        ("two\nlines.json", "two\\x0alines.json"),
        ("\u202ecod.exe", "\\u202ecod.exe"),  # a bidi override
        ("line\u2028break", "line\\u2028break"),
        ("\U000e0041tag", "\\U000e0041tag"),
        ("café déjà", "café déjà"),
        ("no\u00a0break", "no\u00a0break"),  # a space you can see
        ("C:\\Users\\me", "C:\\Users\\me"),  # backslashes stay
    ],
)
def test_render_path_escapes_what_an_output_cannot_carry_or_a_reader_cannot_see(
    path: str, shown: str
) -> None:
    assert render_path(path) == shown
    assert render_path(path).encode("utf-8")


def test_render_text_keeps_newlines_and_tabs() -> None:
    assert render_text("a\tb\nc\udcff\x07") == "a\tb\nc\\xff\\x07"


def test_records_render_the_paths_they_name() -> None:
    tool = Tool(name="t", description="Does t.", source=Source("d/caf\udce9\n.json", "/0"))
    assert wire.hit_record(tool, 1.0)["source"]["file"] == "d/caf\\xe9\\x0a.json"
    finding = Finding("bad\x1b.json", 3, "[0].name", "error", "cannot read bad\x1b.json", "invalid")
    record = wire.findings_records([finding])[0]
    assert (record["file"], record["message"]) == ("bad\\x1b.json", "cannot read bad\\x1b.json")
    assert wire.error_record("no file x\udce9", "catalog")["error"]["message"] == "no file x\\xe9"
    info = wire.cache_info_record("/c\udce9", True, [("toolfind-\udce9.pickle", 3)])
    assert (info["path"], info["files"][0]["file"]) == ("/c\\xe9", "toolfind-\\xe9.pickle")
    assert wire.cache_path_record("/c\udce9") == {"path": "/c\\xe9"}


@pytest.mark.parametrize(
    ("encoding", "written"),
    [("utf-8", "caf\\xe9 café\n".encode()), ("ascii", b"caf\\xe9 caf?\n")],
)
def test_guarded_streams_write_what_their_encoding_cannot_carry_safely(
    encoding: str, written: bytes
) -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, errors="strict")
    guard_streams(stream)
    stream.write("caf\udce9 café\n")
    stream.flush()
    assert raw.getvalue() == written
