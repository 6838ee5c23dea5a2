"""What the tests share: the repository's paths, writing files, running the CLI, and the
catalog tests' helpers and Hypothesis strategies."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from toolfind import catalog, shapes
from toolfind.catalog import formats, rules, validate
from toolfind.catalog.formats import quick_shape
from toolfind.models import LoadResult, Source, Tool
from toolfind.output.tool_formats import tool_to_format
from toolfind.shapes import detect_entry

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "catalogs"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: The MCP servers the tests start as backends (faulty, hostile, lifecycle, rich).
BACKENDS = FIXTURES / "backends"


def _test_cache() -> Path:
    """Where the tests keep what they download once per machine (the npm reference server,
    the reranker's model), outside every clone: ``$TOOLFIND_TEST_CACHE``, else
    ``toolfind-tests`` in ``$XDG_CACHE_HOME`` (when absolute) or ``~/.cache``. Read when the
    tests are collected, before any test points HOME elsewhere."""
    given = os.environ.get("TOOLFIND_TEST_CACHE")
    if given:
        return Path(given)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "toolfind-tests"


TEST_CACHE = _test_cache()


def write(path: Path, content: str | bytes | Any) -> Path:
    """Write ``content`` to ``path`` (its folders made): text as UTF-8, bytes as they are,
    anything else as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


def invoke(
    *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Run ``toolfind ARGS`` through the Typer app as the entry point builds it (``app_for``),
    in process; its exit code, stdout and stderr."""
    from typer.testing import CliRunner

    from toolfind.cli.app import app_for

    result = CliRunner().invoke(
        app_for(list(args)), list(args), input=input, env=env, prog_name="toolfind"
    )
    return result.exit_code, result.stdout, result.stderr


def run_main(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m toolfind ARGS`` in a subprocess (the fast path, the guard, real exits)."""
    return subprocess.run(
        [sys.executable, "-m", "toolfind", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )


def messages(result: LoadResult) -> list[str]:
    return [str(f) for f in result.findings]


def load_one(path: Path, **kw: Any) -> LoadResult:
    # Relative paths, as a user types them: messages must show them as given.
    return catalog.load([Path(os.path.relpath(path))], **kw)


# --- tools and entries -------------------------------------------------------------------------

names = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
property_schemas = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "boolean", "number"])},
    optional={"description": texts, "enum": st.lists(st.text(max_size=5), max_size=3, unique=True)},
)
file_tools = st.builds(
    Tool,
    name=names,
    description=texts,
    parameters=st.dictionaries(st.text(min_size=1, max_size=8), property_schemas, max_size=3).map(
        lambda props: {"type": "object", "properties": props}
    ),
    namespace=st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
    tags=st.lists(names, max_size=2, unique=True).map(tuple),
    search_hint=texts,
    defer=st.booleans(),
    annotations=st.fixed_dictionaries({}, optional={"readOnlyHint": st.booleans()}),
    title=st.none() | texts,
)


def _objects_in(value: Any) -> list[dict[str, Any]]:
    """Every object in a JSON value, the value itself first."""
    found = [value] if isinstance(value, dict) else []
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    )
    for child in children:
        found += _objects_in(child)
    return found


@st.composite
def mutated(
    draw: st.DrawFn,
    base: st.SearchStrategy[Any],
    keys: st.SearchStrategy[str],
    values: st.SearchStrategy[Any],
) -> Any:
    """A value from ``base`` with one key of one of its objects set to one of ``values``:
    the rest stays well formed, so a rule that accepts one wrong value is caught."""
    value = draw(base)
    target = draw(st.sampled_from(_objects_in(value)))
    target[draw(keys)] = draw(values)
    return value


TOOL_FIELDS = [f.name for f in dataclasses.fields(Tool)]


def general(entry: Any, defaults: dict[str, Any], namespace: str, source: Source) -> Tool:
    """What the loader's general path makes of an entry (raises EntryError for a finding)."""
    shape = defaults.get("shape") or detect_entry(entry)
    tool = formats.tool_from_entry(
        entry,
        namespace=defaults.get("namespace") or namespace,
        tags=defaults.get("tags", ()),
        source=source,
        shape=shape,
    )
    validate._check_schemas(entry, shape, tool, source)
    return tool


# Values of every JSON type, each right for some keyword and wrong for most.
KEYWORD_VALUES: list[Any] = [
    None,
    True,
    False,
    -1,
    0,
    2,
    1.0,
    0.5,
    -0.5,
    10**20,
    "",
    "x",
    "string",
    "strnig",
    "STRING",
    "a#b",
    [],
    [""],
    ["a"],
    ["a", "a"],
    ["a", 1],
    [1],
    ["string", "null"],
    ["string", "string"],
    [{}],
    [True],
    [{"type": 5}],
    {},
    {"a": {}},
    {"a": True},
    {"a": 1},
    {"a": {"minLength": -1}},
    {"a": ["b"]},
    {"a": ["b", "b"]},
    {"type": "string"},
    {"type": 5},
    {"https://x": True},
]

ENTRY_KEYS = [
    "type",
    "function",
    "title",
    "description",
    "parameters",
    "input_schema",
    "inputSchema",
    "outputSchema",
    "output_schema",
    "parametersJsonSchema",
    "response",
    "responseJsonSchema",
    "annotations",
    "behavior",
    "strict",
    "defer_loading",
    "cache_control",
    "namespace",
    "tags",
    "aliases",
    "search_hint",
    "defer",
    "enabled",
    "unknown",
]


# --- strategies ------------------------------------------------------------------------------

short_names = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)
short_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
simple_types = st.sampled_from(
    ["string", "integer", "number", "boolean", "object", "array", "null"]
)
any_property_schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": simple_types,
        "description": short_text,
        "enum": st.lists(st.text(max_size=4), max_size=3, unique=True),
        "default": st.none() | st.integers() | short_text,
        "x-extra": st.none() | st.booleans() | st.lists(short_text, max_size=2),
    },
)
object_schemas = st.fixed_dictionaries(
    {"type": st.just("object")},
    optional={
        "properties": st.dictionaries(short_names, any_property_schemas, max_size=4),
        "required": st.lists(short_names, max_size=3, unique=True),
        "additionalProperties": st.booleans(),
        "$schema": st.sampled_from(
            [
                "https://json-schema.org/draft/2020-12/schema",
                "http://json-schema.org/draft-07/schema#",
            ]
        ),
    },
)
any_tools = st.builds(
    Tool,
    name=short_names,
    description=short_text,
    parameters=object_schemas,
    namespace=st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True),
    tags=st.lists(short_names, max_size=2, unique=True).map(tuple),
    search_hint=short_text,
    defer=st.booleans(),
    enabled=st.booleans(),
    aliases=st.lists(short_names, max_size=2, unique=True).map(tuple),
    annotations=st.fixed_dictionaries(
        {}, optional={"readOnlyHint": st.booleans(), "title": short_text, "x": st.integers()}
    ),
    title=st.none() | short_text,
    output_schema=st.none() | object_schemas,
)
any_format_entries = st.builds(tool_to_format, any_tools, st.sampled_from(shapes.FORMATS))
# Values of every kind, many of them wrong wherever they land. Each draw is a fresh copy:
# `entries` edits the objects it draws, and editing the constants shared by every test case
# would make Hypothesis see different data for the same choices (FlakyStrategyDefinition).
odd_values = st.one_of(
    st.sampled_from(
        [
            None,
            True,
            0,
            -1,
            1.5,
            "",
            " ",
            "x",
            "a/b",
            "a b",
            "ns\n",
            "\u200bname",
            "x" * 65,
            "x" * 257,
            "function",
            "custom",
            "OBJECT",
            "string",
            [],
            ["a", "a"],
            ["a", 1],
            [""],
            {},
            {"type": "OBJECT"},
            {"type": 5},
            {"type": "object", "properties": {"a": {"type": "strnig"}}},
            {"readOnlyHint": "yes"},
            {"title": 5},
            {"a": [[[[1]]]]},
        ]
    ),
    short_text,
    st.lists(short_text, max_size=2),
).map(copy.deepcopy)
# The keys of every entry shape, and the ones the fast path treats specially.
FAST_ENTRY_KEYS = [*ENTRY_KEYS, "name", "x-unknown", "googleSearch"]
fast_entry_keys = st.sampled_from(FAST_ENTRY_KEYS)


@st.composite
def entries(draw: st.DrawFn) -> Any:
    """A well-formed entry of any format, often with one key of one of its objects (schemas
    included) set to an odd value, or deleted."""
    entry = draw(any_format_entries)
    for _ in range(draw(st.integers(0, 2))):
        target = draw(st.sampled_from(_objects_in(entry)))
        key = draw(fast_entry_keys | st.sampled_from(sorted(target) or ["name"]))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = draw(odd_values)
    return entry


defaults_strategy = st.fixed_dictionaries(
    {
        "namespace": st.none() | st.just("filens"),
        "tags": st.sampled_from([(), ("t",), ("t", "u")]),
        "shape": st.none() | st.just("gemini"),
    }
)


# --- documents -------------------------------------------------------------------------------


class Pairs(list[tuple[str, Any]]):
    """An object written with its pairs as they are, repeated keys included."""


def dump(value: Any) -> str:
    if isinstance(value, Pairs):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(v)}" for k, v in value) + "}"
    if isinstance(value, dict):
        return dump(Pairs(value.items()))
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    return json.dumps(value)


@st.composite
def with_repeated_key(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with one of its objects (maybe) writing one of its keys twice."""
    value = copy.deepcopy(value)
    objects = [o for o in _objects_in(value) if o]
    if not objects or not draw(st.booleans()):
        return value
    target = draw(st.sampled_from(objects))
    key = draw(st.sampled_from(sorted(target)))
    pairs = Pairs(target.items())
    pairs.insert(draw(st.integers(0, len(pairs))), (key, draw(odd_values)))

    def swap(node: Any) -> Any:
        if node is target:
            return pairs
        if isinstance(node, dict):
            return {k: swap(v) for k, v in node.items()}
        if isinstance(node, list):
            return [swap(v) for v in node]
        return node

    return swap(value)


documents = st.one_of(
    st.lists(entries(), max_size=4),
    st.fixed_dictionaries(
        {"tools": st.lists(entries(), max_size=4)},
        optional={
            "namespace": st.just("docns"),
            "tags": st.builds(lambda: ["dt"]),
            "nextCursor": texts,
        },
    ),
    st.lists(entries(), max_size=3).map(
        lambda items: {"jsonrpc": "2.0", "id": 1, "result": {"tools": items}}
    ),
    st.lists(entries(), max_size=2).map(lambda items: [{"functionDeclarations": items}, *items]),
    entries(),
    odd_values,
)


def vouched(entry: dict[str, Any], defaults: dict[str, Any]) -> int:
    """The loader's fast path's verdict on one entry: ``rules.vouch`` of its quick shape."""
    return rules.vouch(entry, defaults.get("shape") or quick_shape(entry))


# --- one rich tool and reading helpers, for the format tests ----------------------------

SRC = Source("cat.json", "/tools/0", 3)
PARAMS = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "File to read."}},
    "required": ["path"],
}


def read(entry: Any, namespace: str = "ns", tags: tuple[str, ...] = (), **kw: Any) -> Tool:
    return formats.tool_from_entry(entry, namespace=namespace, tags=tags, source=SRC, **kw)


def carried(tool: Tool, fmt: str) -> dict[str, Any]:
    return {name: getattr(tool, name) for name in shapes.CARRIES[fmt]}


RICH = Tool(
    name="read_file",
    description="Read a file. Returns its text.",
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path."},
            "encoding": {"type": ["string", "null"], "enum": ["utf-8", "latin-1"]},
        },
        "required": ["path"],
    },
    namespace="files",
    tags=("read", "fs"),
    search_hint="cat open",
    defer=True,
    enabled=False,
    annotations={"readOnlyHint": True, "title": "Read"},
    aliases=("cat",),
    title="Read File",
    output_schema={"type": "object", "properties": {"text": {"type": "string"}}},
)
