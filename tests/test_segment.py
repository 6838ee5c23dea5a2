from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from toolfind import segment


@given(st.text())
def test_json_str_equals_json_dumps(text: str) -> None:
    assert segment.json_str(text) == json.dumps(text, ensure_ascii=False)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=25,
)


@given(JSON)
def test_indent_of_compact_json_equals_json_dumps_indent_2(document: object) -> None:
    compact = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    assert segment.indent(compact) == json.dumps(document, ensure_ascii=False, indent=2)


@given(st.text(), st.lists(st.text(), max_size=4))
def test_render_search_without_hits_equals_json_dumps(query: str, unmatched: list[str]) -> None:
    document = {"query": query, "hits": [], "unmatched_terms": unmatched}
    expected = json.dumps(document, indent=2, ensure_ascii=False)
    assert segment.render_search(query, [], unmatched) == expected


def test_bucket_of_is_fnv1a_so_it_is_stable_across_processes() -> None:
    # Published FNV-1a 64-bit test vector: fnv1a64("a") = 0xaf63dc4c8601ec8c.
    assert segment.bucket_of("a", 1 << 64) == 0xAF63DC4C8601EC8C
    assert 0 <= segment.bucket_of("日本", 13) < 13
