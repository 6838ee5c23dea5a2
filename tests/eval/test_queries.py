"""Labelled-queries files: every format, and one clear line for every bad entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolfind.errors import AmbiguousName, ToolfindError, ToolNotFound
from toolfind.eval.queries import LabelledQuery, load_queries, parse_queries, resolve_queries
from toolfind.models import Tool

ENTRIES = [
    {"query": "compress a folder", "relevant": ["files/compress"], "id": "q1", "split": "train"},
    {"query": "read a file", "relevant": ["read_file", "files:open"], "split": "test", "extra": 1},
]


def expected(file: str, lines: list[int | None]) -> list[LabelledQuery]:
    return [
        LabelledQuery("compress a folder", ("files/compress",), "q1", "train", 1, lines[0], file),
        LabelledQuery("read a file", ("read_file", "files:open"), "2", "test", 2, lines[1], file),
    ]


def error_of(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ToolfindError) as info:
        load_queries(path)
    return str(info.value).replace(str(tmp_path) + "/", "")


def test_json_list_loads_every_entry(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(ENTRIES), encoding="utf-8")
    assert load_queries(path) == expected(str(path), [None, None])


def test_json_lines_load_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        "\n".join(json.dumps(e) for e in ENTRIES).replace("\n", "\n\n") + "\n", encoding="utf-8"
    )
    assert load_queries(path) == expected(str(path), [1, 3])


def test_yaml_loads_with_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_text(
        "# labelled queries\n"
        "- query: compress a folder\n"
        "  relevant: [files/compress]\n"
        "  id: q1\n"
        "  split: train\n"
        "- query: read a file\n"
        "  relevant:\n"
        "    - read_file\n"
        "    - files:open\n"
        "  split: test\n"
        "  extra: 1\n",
        encoding="utf-8",
    )
    assert load_queries(path) == expected(str(path), [2, 6])


def test_yaml_mapping_with_queries_key_loads(tmp_path: Path) -> None:
    path = tmp_path / "q.yml"
    path.write_text("queries:\n  - query: read a file\n    relevant: read_file\n", encoding="utf-8")
    assert load_queries(path) == [
        LabelledQuery("read a file", ("read_file",), "1", "", 1, 2, str(path))
    ]


def test_json_lines_under_a_json_name_still_load(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text("\n".join(json.dumps(e) for e in ENTRIES), encoding="utf-8")
    assert [q.id for q in load_queries(path)] == ["q1", "2"]


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        (json.dumps(ENTRIES), "json"),
        ("\n".join(json.dumps(e) for e in ENTRIES), "jsonl"),
        ("- query: compress a folder\n  relevant: [files/compress]\n", "yaml"),
    ],
)
def test_unknown_suffix_is_sniffed(text: str, fmt: str) -> None:
    assert parse_queries(text, file="-")[0].query == "compress a folder"
    assert parse_queries(text, file="-", fmt=fmt)[0].relevant == ("files/compress",)


def test_empty_file_has_no_queries(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_text("", encoding="utf-8")
    assert load_queries(path) == []


def test_duplicate_relevant_names_are_kept_once() -> None:
    [q] = parse_queries('[{"query": "x", "relevant": ["a", "a", "b"]}]', fmt="json")
    assert q.relevant == ("a", "b")


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "q.jsonl",
            '{"query": "x", "relevant": ["a"]}\n{"relevant": ["a"]}\n',
            "q.jsonl:2: entry 2: query: required key missing",
        ),
        (
            "q.jsonl",
            '{"query": "x", "relevant": ["a"]}\n{"query": "x"\n',
            "q.jsonl:2: invalid JSON: Expecting ',' delimiter",
        ),
        (
            "q.json",
            '[{"query": "", "relevant": ["a"]}]',
            "q.json: entry 1: query: expected non-empty text, got empty text",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": []}]',
            "q.json: entry 1: relevant: expected a non-empty list of tool names, got an empty list",
        ),
        (
            "q.json",
            '[{"query": "x"}]',
            "q.json: entry 1: relevant: required key missing (a list of tool names)",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a", 5]}]',
            "q.json: entry 1: relevant[1]: expected a tool name, got number 5",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"], "split": 3}]',
            "q.json: entry 1: split: expected a string, got number 3",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"], "id": true}]',
            "q.json: entry 1: id: expected a string or integer, got boolean true",
        ),
        (
            "q.json",
            '[{"id": "q9", "query": 7, "relevant": ["a"]}]',
            "q.json: entry 1 (id 'q9'): query: expected non-empty text, got number 7",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"]}, "read a file"]',
            "q.json: entry 2: expected a mapping with 'query' and 'relevant', got text 'read a file'",
        ),
        (
            "q.json",
            '{"query": "x", "relevant": ["a"]}',
            "q.json: expected a list of queries (or a mapping with a 'queries' list), got a mapping",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"]',
            "q.json:1: invalid JSON: Expecting ',' delimiter",
        ),
        (
            "q.yaml",
            "- query: x\n  relevant: [a]\n  id: q1\n- query: y\n  relevant: [b]\n  id: q1\n",
            "q.yaml:4: entry 2 (id 'q1'): id: 'q1' is already used by entry 1",
        ),
        (
            "q.yaml",
            "- query: x\n  relevant: [a\n",
            "q.yaml:3: invalid YAML: expected ',' or ']', but got '<stream end>'",
        ),
        (
            "q.yaml",
            "- query: x\n  relevant: {a: 1}\n",
            "q.yaml:1: entry 1: relevant: expected a non-empty list of tool names, got a mapping",
        ),
    ],
)
def test_bad_entry_is_one_line_naming_file_and_entry(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    assert error_of(tmp_path, name, text) == message


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolfindError, match="no such queries file"):
        load_queries(tmp_path / "nope.yaml")


def test_invalid_utf8_names_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_bytes(b'[{"query": "\xff"}]')
    with pytest.raises(ToolfindError, match=r"q.json: invalid UTF-8 at byte 12$"):
        load_queries(path)


def test_oversized_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text("[]" + " " * 100, encoding="utf-8")
    with pytest.raises(ToolfindError, match="over the 10-byte limit"):
        load_queries(path, max_bytes=10)


class FakeIndex:
    """Just enough of SearchIndex for resolving: exact names and bare names."""

    def __init__(self, tools: tuple[Tool, ...]) -> None:
        self.tools = tools

    def resolve(self, name: str) -> Tool:
        found = [t for t in self.tools if name in (t.name, t.qualified_name)]
        if len(found) > 1:
            raise AmbiguousName(name, [t.qualified_name for t in found])
        if not found:
            raise ToolNotFound(name, ["search_web"])
        return found[0]


TOOLS = (
    Tool("read_file", namespace="files"),
    Tool("search_web", namespace="web"),
    Tool("open", namespace="files"),
    Tool("open", namespace="web"),
)


def test_resolve_maps_names_to_doc_ids() -> None:
    queries = parse_queries(
        '[{"query": "x", "relevant": ["search_web", "files/read_file", "read_file"]}]', fmt="json"
    )
    [judged] = resolve_queries(FakeIndex(TOOLS), queries)
    assert judged.relevant_ids == (1, 0)
    assert judged.query == "x" and judged.id == "1" and judged.split == ""


def test_unknown_tool_name_is_an_error_naming_the_entry(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_text(
        "- query: x\n  relevant: [read_file]\n- query: y\n  id: web\n  relevant: [read_file, serch_web]\n",
        encoding="utf-8",
    )
    with pytest.raises(ToolfindError) as info:
        resolve_queries(FakeIndex(TOOLS), load_queries(path))
    assert (
        str(info.value)
        == f"{path}:3: entry 2 (id 'web'): relevant[1]: No tool named 'serch_web'. Did you mean 'search_web'?"
    )


def test_ambiguous_tool_name_is_an_error_naming_the_entry() -> None:
    queries = parse_queries('[{"query": "x", "relevant": ["open"]}]', file="q.json", fmt="json")
    with pytest.raises(ToolfindError) as info:
        resolve_queries(FakeIndex(TOOLS), queries)
    assert str(info.value) == (
        "q.json: entry 1: relevant[0]: 'open' is ambiguous: it matches files/open, web/open. Use one of these names."
    )
