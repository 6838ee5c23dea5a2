"""Labelled-queries files: every format, and one clear line for every bad entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolfind.errors import AmbiguousName, ToolfindError, ToolNotFound
from toolfind.eval.queries import (
    MAX_BYTES,
    LabelledQuery,
    load_queries,
    parse_queries,
    resolve_queries,
)
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


def error_of(tmp_path: Path, name: str, text: str, max_bytes: int = MAX_BYTES) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ToolfindError) as info:
        load_queries(path, max_bytes=max_bytes)
    return str(info.value).replace(str(tmp_path) + "/", "")


def test_json_list_loads_every_entry_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps(ENTRIES, indent=1), encoding="utf-8")
    assert load_queries(path) == expected(str(path), [2, 10])


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


def test_an_empty_file_is_an_error_as_an_empty_catalog_is(tmp_path: Path) -> None:
    assert error_of(tmp_path, "q.yaml", "# nothing yet\n") == "q.yaml: file is empty"


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
            "q.jsonl:2: invalid JSON: Expecting ',' delimiter at column 14",
        ),
        (
            "q.json",
            '[{"query": "", "relevant": ["a"]}]',
            "q.json:1: entry 1: query: expected non-empty text, got a blank string",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": []}]',
            "q.json:1: entry 1: relevant: expected a non-empty list of tool names, got an empty array",
        ),
        (
            "q.json",
            '[{"query": "x"}]',
            "q.json:1: entry 1: relevant: required key missing (a list of tool names)",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a", 5]}]',
            "q.json:1: entry 1: relevant[1]: expected a tool name, got a number",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"], "split": 3}]',
            "q.json:1: entry 1: split: expected a string, got a number",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"], "id": true}]',
            "q.json:1: entry 1: id: expected a string or integer, got a boolean",
        ),
        (
            "q.json",
            '[{"id": "q9", "query": 7, "relevant": ["a"]}]',
            "q.json:1: entry 1 (id 'q9'): query: expected non-empty text, got a number",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"]}, "read a file"]',
            "q.json:1: entry 2: expected an object with 'query' and 'relevant', got a string",
        ),
        (
            "q.json",
            '{"query": "x", "relevant": ["a"]}',
            "q.json: expected a list of queries (or an object with a 'queries' list), got an object",
        ),
        (
            "q.json",
            '[{"query": "x", "relevant": ["a"]',
            "q.json:1: invalid JSON: Expecting ',' delimiter at column 34",
        ),
        (
            "q.yaml",
            "- query: x\n  relevant: [a]\n  id: q1\n- query: y\n  relevant: [b]\n  id: q1\n",
            "q.yaml:4: entry 2 (id 'q1'): id: 'q1' is already used by entry 1",
        ),
        (
            "q.yaml",
            "- query: x\n  relevant: {a: 1}\n",
            "q.yaml:1: entry 1: relevant: expected a non-empty list of tool names, got an object",
        ),
    ],
)
def test_bad_entry_is_one_line_naming_file_and_entry(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    assert error_of(tmp_path, name, text) == message


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ToolfindError) as info:
        load_queries(tmp_path / "nope.yaml")
    assert str(info.value) == f"{tmp_path}/nope.yaml: cannot read: No such file or directory"
    assert info.value.kind == "queries"


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "q.json",
            b'[{"query":\n "\xff"}]',
            "q.json:2: invalid UTF-8 at byte 13 (0xff); save the file as UTF-8",
        ),
        (
            "q.jsonl",
            b'{"query": "x", "relevant": ["a"]}\n{"query": NaN, "relevant": ["a"]}\n',
            "q.jsonl:2: invalid JSON: NaN is not allowed (use null or a string)",
        ),
        (
            "q.jsonl",
            b'{"query": "x", "relevant": ["a"]}\n{"query": "x",\n',
            "q.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes at column 15",
        ),
        (
            "q.json",
            b'[{"query": "x",\n  "query": "y", "relevant": ["a"]}]',
            "q.json:2: [0]: duplicate key 'query'",
        ),
        (
            "q.yaml",
            ALIAS_BOMB.encode(),
            "q.yaml:6: invalid YAML: YAML aliases expand to more than 100,000 nodes; refusing to load",
        ),
        (
            "q.yaml",
            b"- query: x\n  relevant: !!python/name:os.system\n",
            "q.yaml:2: invalid YAML: unsupported YAML tag '!!python/name:os.system'",
        ),
    ],
)
def test_a_bad_file_gets_the_catalogs_one_line_error(
    tmp_path: Path, name: str, data: bytes, message: str
) -> None:
    """A queries file is read as a catalog is: the size limit, the encodings, JSON without
    NaN or repeated keys, YAML by the bounded loader (no alias bomb, no Python tags)."""
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ToolfindError) as info:
        load_queries(path)
    assert str(info.value).replace(f"{tmp_path}/", "") == message
    assert info.value.kind == "queries"


def test_an_oversized_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    assert error_of(tmp_path, "q.json", "[]" + " " * 100, max_bytes=100) == (
        "q.json: file is 102 bytes, over the 100-byte limit"
    )


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
        "q.json:1: entry 1: relevant[0]: 'open' is ambiguous: it matches files/open, web/open. Use one of these names."
    )
