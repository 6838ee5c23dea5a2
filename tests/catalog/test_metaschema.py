"""Tests for toolfind.catalog.metaschema: the one walk never accepts a schema jsonschema refuses, and decides the common ones."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import (
    KEYWORD_VALUES,
    mutated,
    object_schemas,
    simple_types,
)
from toolfind.catalog import metaschema, parse, validate

# --- the checks made without jsonschema agree with jsonschema ----------------------------------
#
# The walk (metaschema.schema_strings) decides most schemas and asks jsonschema only when it
# cannot tell. It may say "cannot tell" too often (that costs time), never "valid" for what
# jsonschema refuses (that would lose a finding). Below: it accepts well-formed schemas, and on
# any schema, what it accepts jsonschema accepts.


def surely_valid(schema: dict[str, Any]) -> bool:
    """The walk's verdict: certainly valid (without jsonschema)."""
    return metaschema.schema_strings(schema) >= 0


SIMPLE_TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"]
DIALECTS = sorted(metaschema.RULED_DIALECTS)
short_texts = st.text(max_size=4)
distinct_texts = st.lists(short_texts, max_size=3, unique=True)
finite_numbers = st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False, allow_infinity=False)
small_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | short_texts,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(short_texts, inner, max_size=2),
    max_leaves=4,
)


def well_formed_values(subschemas: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    """For each keyword, values that both meta-schemas accept."""
    schema_lists = st.lists(subschemas, min_size=1, max_size=2)
    schema_maps = st.dictionaries(short_texts, subschemas, max_size=2)
    return {
        "type": st.sampled_from(SIMPLE_TYPES)
        | st.lists(st.sampled_from(SIMPLE_TYPES), min_size=1, max_size=3, unique=True),
        **dict.fromkeys(
            ["description", "title", "format", "pattern", "$ref", "$comment", "contentEncoding"],
            short_texts,
        ),
        **dict.fromkeys(
            ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"],
            schema_maps,
        ),
        "required": distinct_texts,
        **dict.fromkeys(["enum", "examples"], st.lists(small_json, max_size=2)),
        **dict.fromkeys(["const", "default", "x-vendor"], small_json),  # x-vendor: no keyword
        **dict.fromkeys(
            ["items", "additionalProperties", "additionalItems", "not", "if", "contains"],
            subschemas,
        ),
        **dict.fromkeys(["propertyNames", "unevaluatedProperties", "contentSchema"], subschemas),
        **dict.fromkeys(["anyOf", "allOf", "oneOf", "prefixItems"], schema_lists),
        **dict.fromkeys(
            ["minLength", "maxItems", "minContains", "maxProperties"], st.integers(0, 5)
        ),
        **dict.fromkeys(["minimum", "exclusiveMaximum"], finite_numbers),
        "multipleOf": st.integers(1, 5) | st.floats(0.5, 5),
        **dict.fromkeys(["uniqueItems", "readOnly", "writeOnly", "deprecated"], st.booleans()),
    }


def well_formed_nodes(subschemas: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Schema objects with up to four keywords, each with a value both meta-schemas accept."""
    values = well_formed_values(subschemas)
    return st.lists(st.sampled_from(sorted(values)), max_size=4, unique=True).flatmap(
        lambda keys: st.fixed_dictionaries({k: values[k] for k in keys})
    )


well_formed_schemas = st.recursive(
    well_formed_nodes(st.booleans()),
    lambda inner: well_formed_nodes(inner | st.booleans()),
    max_leaves=6,
)
# Values of every kind, many of them wrong for the keyword they land on.
any_values = st.one_of(
    small_json,
    st.sampled_from([*SIMPLE_TYPES, -1, 0, 0.5, -0.5, [], [""], ["a", "a"], ["string", 1], {}]),
    well_formed_schemas,
    st.lists(well_formed_schemas | small_json, max_size=2),
    st.dictionaries(short_texts, well_formed_schemas | small_json, max_size=2),
)
any_keywords = st.sampled_from(
    sorted({*metaschema.META_KEYWORDS, "x-vendor", "nullable", "discriminator"})
)


any_schemas = mutated(well_formed_schemas, any_keywords, any_values)
any_dialects = st.sampled_from(
    [
        *DIALECTS,
        "http://json-schema.org/draft-04/schema#",
        "https://json-schema.org/draft/2019-09/schema",
        "https://example.com/meta",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=well_formed_schemas, dialect=st.none() | st.sampled_from(DIALECTS))
def test_well_formed_schemas_are_decided_without_jsonschema(
    schema: dict[str, Any], dialect: str | None
) -> None:
    if dialect is not None:
        schema = {"$schema": dialect, **schema}
    assert surely_valid(schema)
    assert validate._meta_problems(schema) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=any_schemas, dialect=st.none() | any_dialects)
def test_a_schema_the_fast_check_accepts_passes_the_meta_schema_check(
    schema: dict[str, Any], dialect: str | None
) -> None:
    if dialect is not None:
        schema = {**schema, "$schema": dialect}
    if surely_valid(schema):
        assert validate._meta_problems(schema) == []


@pytest.mark.parametrize("dialect", [None, *DIALECTS])
def test_the_fast_check_accepts_no_keyword_value_the_meta_schema_check_refuses(
    dialect: str | None,
) -> None:
    accepted = 0
    for keyword in sorted({*metaschema.META_KEYWORDS, "x-vendor"}):
        for value in KEYWORD_VALUES:
            for schema in (
                {keyword: value},
                {"type": "object", "properties": {"p": {keyword: value}}, "required": ["p"]},
            ):
                if dialect is not None and keyword not in schema:
                    schema = {"$schema": dialect, **schema}
                if surely_valid(schema):
                    accepted += 1
                    assert validate._meta_problems(schema) == [], schema
    assert accepted > 300  # the fast check decides most well-formed keywords


def _meta_schema_keywords(uri: str) -> set[str]:
    from jsonschema_specifications import REGISTRY

    contents = REGISTRY.contents(uri)
    found = set(contents.get("properties", {}))
    for ref in contents.get("allOf", []):  # 2020-12: its vocabularies' meta-schemas
        found |= set(REGISTRY.contents(urljoin(uri, ref["$ref"])).get("properties", {}))
    return found


def test_the_fast_check_knows_every_keyword_of_both_meta_schemas() -> None:
    for uri in (
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-07/schema",
    ):
        keywords = _meta_schema_keywords(uri)
        assert len(keywords) > 30
        assert keywords <= metaschema.META_KEYWORDS, keywords - metaschema.META_KEYWORDS


def test_the_fast_check_follows_only_draft_2020_12_and_draft_7() -> None:
    from jsonschema import Draft7Validator, Draft202012Validator
    from jsonschema.validators import validator_for

    for dialect in DIALECTS:
        cls = validator_for({"$schema": dialect}, default=None)
        assert cls in (Draft7Validator, Draft202012Validator), dialect


def test_a_schema_of_another_draft_goes_to_jsonschema() -> None:
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}
    assert not surely_valid(schema)
    assert not surely_valid({"type": "object", "$id": "urn:x"})


# --- the one-walk schema check implies the reference checks -----------------------------------

short = st.text(max_size=3)
any_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | short,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short, inner, max_size=3),
    max_leaves=8,
)
keywords = st.sampled_from(
    sorted({*metaschema.META_KEYWORDS, "x-vendor", "nullable", "required", "properties"})
)
schemas = st.recursive(
    st.dictionaries(keywords, any_json | simple_types, max_size=4),
    lambda inner: st.dictionaries(
        keywords,
        inner
        | st.dictionaries(short, inner | st.booleans(), max_size=3)
        | st.lists(inner | st.booleans(), max_size=3)
        | any_json
        | simple_types,
        max_size=4,
    ),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas | object_schemas)
def test_a_schema_the_walk_accepts_passes_the_meta_schema_and_depth_checks(
    schema: dict[str, Any],
) -> None:
    count = metaschema.schema_strings(schema)
    if count >= 0:
        assert validate._meta_problems(schema) == []
        assert not metaschema.too_deep(schema)
        assert count == parse.strings_in(schema)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=object_schemas)
def test_the_one_walk_decides_common_schemas(schema: dict[str, Any]) -> None:
    assert metaschema.schema_strings(schema) == parse.strings_in(schema)


def _nested(depth: int, leaf: Any) -> dict[str, Any]:
    schema: Any = leaf
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return dict(schema)


@pytest.mark.parametrize("depth", [1, 20, 31, 32, 33, 40])
@pytest.mark.parametrize(
    "leaf", [{}, {"type": "string", "description": "d"}, {"default": [[1]]}, {"enum": [[[]]]}]
)
def test_the_one_walk_never_accepts_what_is_nested_too_deep(depth: int, leaf: Any) -> None:
    schema = _nested(depth, leaf)
    if metaschema.schema_strings(schema) >= 0:
        assert not metaschema.too_deep(schema)
    if depth <= 20:
        assert metaschema.schema_strings(schema) >= 0
