"""A call's arguments checked against its tool's input schema: the same verdicts as
jsonschema, but no backtracking regex, no quadratic uniqueItems, a deadline on every keyword,
and never on the event loop (a schema's ``pattern`` must not freeze every client)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema.exceptions import best_match
from jsonschema.validators import Draft202012Validator
from mcp import Client

from tests.serve.support import FakeBackends, error_text, make_server, text_of
from toolfind.models import Source, Tool
from toolfind.output.text import clean_text
from toolfind.serve import arguments as arguments_module
from toolfind.serve.arguments import MAX_SCHEMA_NODES, ArgumentChecker, search

#: A common schema pattern (words separated by single spaces) whose nested quantifiers make
#: Python's ``re`` backtrack: 26 characters took 7 s, and each one more doubles it.
WORDS = r"^(\w+\s?)*$"


def tool(schema: Mapping[str, Any], name: str = "t") -> Tool:
    return Tool(name=name, description="A tool.", parameters=dict(schema))


def finished(work: Any, seconds: float = 30.0) -> Any:
    """``work()``'s value, computed in a daemon thread that must end within ``seconds`` (a
    catastrophic check would run for hours: the test fails instead of hanging)."""
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"the check did not end within {seconds} s"
    return done[0]


def jsonschema_says(schema: Mapping[str, Any], arguments: Any) -> str | None:
    """What plain jsonschema reports, in the checker's words."""
    error = best_match(Draft202012Validator(schema).iter_errors(arguments))
    if error is None:
        return None
    message = error.message
    if error.validator == "uniqueItems":
        # The checker shows the array in half the message's room, so that a long array never
        # cuts off the verdict: the one place its words differ from jsonschema's, by design.
        shown = clean_text(repr(error.instance), arguments_module._MESSAGE_LIMIT // 2)
        message = f"{shown} has non-unique elements"
    return f"{error.json_path}: {clean_text(message, arguments_module._MESSAGE_LIMIT)}"


def test_a_catastrophic_pattern_is_decided_in_linear_time() -> None:
    checker = ArgumentChecker()
    words = tool({"type": "object", "properties": {"title": {"type": "string", "pattern": WORDS}}})
    problem = finished(lambda: checker.problem(words, {"title": "a" * 40 + "!"}))
    assert problem is not None
    assert problem.startswith("$.title: 'aaaa") and f"does not match {WORDS!r}" in problem
    assert finished(lambda: checker.problem(words, {"title": "hello brave new world"})) is None
    keys = tool({"type": "object", "patternProperties": {WORDS: {"type": "integer"}}})
    problem = finished(lambda: checker.problem(keys, {"a" * 40 + "!": "x", "ok": "y"}))
    assert problem == "$.ok: 'y' is not of type 'integer'"
    closed = tool(
        {"type": "object", "patternProperties": {WORDS: {}}, "additionalProperties": False}
    )
    problem = finished(lambda: checker.problem(closed, {"a" * 40 + "!": 1}))
    assert problem == f"$: {'a' * 40 + '!'!r} does not match any of the regexes: {WORDS!r}"


def test_patterns_search_anywhere_as_json_schema_says() -> None:
    assert search("b", "abc") and search("^a", "abc") and search("c$", "abc")
    assert not search("^b", "abc") and not search("^[0-9]{3}$", "1234")
    assert search(r"^\d{3}-\d{4}$", "555-1234")


SAFE_PATTERNS = ["^a", "b$", "^[a-z]+$", r"\d", "^(ab|cd)*$", "x{2,3}", "^$", "."]
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from([1.0, 2.5])
    | st.text("abcdx1 ", max_size=6),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text("abx", max_size=3), inner, max_size=3)
    ),
    max_leaves=10,
)
subschemas = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["string", "array", "object", "integer", "number"]),
        "pattern": st.sampled_from(SAFE_PATTERNS),
        "uniqueItems": st.booleans(),
        "patternProperties": st.dictionaries(
            st.sampled_from(SAFE_PATTERNS), st.just({"type": "string"}), max_size=2
        ),
        "additionalProperties": st.booleans() | st.just({"type": "integer"}),
        "properties": st.just({"ab": {"type": "string"}}),
    },
)
schemas = st.one_of(
    subschemas,
    st.builds(lambda s: {"not": s}, subschemas),
    st.builds(lambda a, b: {"oneOf": [a, b]}, subschemas, subschemas),
    st.builds(lambda s: {"type": "array", "items": s}, subschemas),
)


@settings(max_examples=300, deadline=None)
@given(schema=schemas, value=values)
def test_verdicts_and_messages_are_jsonschemas_for_patterns_it_runs_safely(
    schema: dict[str, Any], value: Any
) -> None:
    checker = ArgumentChecker()
    wrapped = {"type": "object", "properties": {"v": schema}}
    assert checker.problem(tool(wrapped), {"v": value}) == jsonschema_says(wrapped, {"v": value})


def test_a_pattern_only_a_backtracking_engine_runs_leaves_the_call_to_the_backend(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Guessing either way would be wrong somewhere: under "not", "match" refuses a valid call.
    checker = ArgumentChecker()
    ahead = {"type": "string", "pattern": "(?=a)ab"}
    for schema in (ahead, {"not": ahead}, {"oneOf": [ahead, {"type": "string"}]}):
        wrapped = {"type": "object", "properties": {"v": schema}}
        assert jsonschema_says(wrapped, {"v": "zzz"}) != jsonschema_says(wrapped, {"v": "abc"})
        for text in ("zzz", "abc"):
            assert checker.problem(tool(wrapped), {"v": text}) is None
    # A schema that would look patternProperties up with `re` for unevaluatedProperties.
    both = {"patternProperties": {WORDS: {}}, "unevaluatedProperties": False}
    with caplog.at_level(logging.INFO, "toolfind.serve"):
        assert checker.problem(tool(both), {"a" * 40 + "!": 1}) is None
    assert "unevaluatedProperties beside patternProperties" in caplog.text


def test_unique_items_is_linear_and_keeps_json_equality() -> None:
    checker = ArgumentChecker()
    unique = tool({"type": "object", "properties": {"v": {"type": "array", "uniqueItems": True}}})
    many = [{"id": i, "tags": [i, str(i)]} for i in range(20_000)]
    assert finished(lambda: checker.problem(unique, {"v": many})) is None
    problem = finished(lambda: checker.problem(unique, {"v": [*many, {"tags": [7, "7"], "id": 7}]}))
    assert problem is not None and problem.endswith("has non-unique elements")
    assert checker.problem(unique, {"v": [1, 1.0]}) is not None  # equal numbers
    assert checker.problem(unique, {"v": [1, True, 0, False, None]}) is None  # not equal


def test_formats_are_never_asserted_not_even_in_the_metaschema_check() -> None:
    checker = ArgumentChecker()
    email = tool({"type": "object", "properties": {"v": {"type": "string", "format": "email"}}})
    assert checker.problem(email, {"v": "not an address"}) is None
    # "format": "regex" on the schema's own pattern is not run either; the linear engine
    # cannot compile it, so the call is left to the backend.
    broken = tool({"type": "object", "properties": {"v": {"type": "string", "pattern": "(["}}})
    assert checker.problem(broken, {"v": "x"}) is None


def test_a_huge_schema_is_not_walked(caplog: pytest.LogCaptureFixture) -> None:
    checker = ArgumentChecker()
    properties = {f"p{i}": {"type": "string"} for i in range(MAX_SCHEMA_NODES // 2)}
    huge = tool({"type": "object", "properties": properties})
    with caplog.at_level(logging.INFO, "toolfind.serve"):
        assert checker.problem(huge, {"p1": 5}) is None
    assert f"more than {MAX_SCHEMA_NODES} nodes" in caplog.text


def nested_any_of() -> dict[str, Any]:
    """A schema whose check doubles with each level of the argument: the first branch of
    each anyOf descends into the items before ``maxItems`` fails it."""
    node = {
        "anyOf": [
            {"type": "array", "items": {"$ref": "#/$defs/n"}, "maxItems": 0},
            {"type": "array", "items": {"$ref": "#/$defs/n"}},
        ]
    }
    return {"type": "object", "$defs": {"n": node}, "properties": {"v": {"$ref": "#/$defs/n"}}}


def deep(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.anyio
async def test_a_check_past_its_deadline_is_undecided_and_the_call_goes_through(
    caplog: pytest.LogCaptureFixture,
) -> None:
    checker = ArgumentChecker(seconds=0.2)
    with caplog.at_level(logging.INFO, "toolfind.serve"):
        assert await checker.check(tool(nested_any_of()), {"v": deep(40)}) is None
    assert "forwarded unchecked: checking took more than" in caplog.text
    # The same schema is still checked when it can be: a mistake is reported.
    problem = await checker.check(tool(nested_any_of()), {"v": "x"})
    assert problem is not None and problem.startswith("$.v: 'x' is not valid under any")


class SchemaBackends(FakeBackends):
    """One backend tool, ``slow__words``, with the input schema given."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        super().__init__()
        self._tools = [
            Tool(
                name="slow__words",
                description="Set the words.",
                namespace="slow",
                parameters=dict(schema),
                source=Source(file="mcp://slow"),
            )
        ]


@pytest.mark.anyio
async def test_requests_are_answered_while_a_call_is_checked(catalog_dir: Path) -> None:
    # deep(18): seconds of checking (2^18 descents), more than the one-second deadline.
    backends = SchemaBackends(nested_any_of())
    server, _, _ = make_server([catalog_dir], backends)
    arrived = anyio.Event()

    async def on_arrival(ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/call":
            arrived.set()
        return await call_next(ctx)

    server.middleware.insert(0, on_arrival)
    done: list[str] = []
    async with Client(server, mode="legacy") as client:

        async def call() -> None:
            result = await client.call_tool("slow__words", {"v": deep(18)})
            done.append("call: " + text_of(result))

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await arrived.wait()  # the server is checking the call's arguments now
                await client.list_tools()  # any request: a ping, another client's search
                done.append(f"list answered, {len(backends.calls)} call forwarded")
    # The check ran off the event loop: the list was answered while it ran (before the call
    # reached the backend); then the call went on (checked valid, or undecided at the
    # deadline: either way forwarded).
    assert done == ["list answered, 0 call forwarded", "call: sunny in None"]
    assert backends.calls == [("slow__words", {"v": deep(18)})]


@pytest.mark.anyio
async def test_a_catastrophic_pattern_is_an_argument_error_at_once(catalog_dir: Path) -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string", "pattern": WORDS}}}
    backends = SchemaBackends(schema)
    server, _, _ = make_server([catalog_dir], backends)
    async with Client(server, mode="legacy") as client:
        with anyio.fail_after(30):
            refused = await client.call_tool("slow__words", {"title": "a" * 26 + "!"})
            sent = await client.call_tool("slow__words", {"title": "two words"})
    assert error_text(refused).startswith("Invalid arguments for 'slow__words' at $.title: 'aaa")
    assert not sent.is_error
    assert backends.calls == [("slow__words", {"title": "two words"})]
