from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from toolfind import segment


@given(st.text())
def test_json_str_equals_json_dumps(text: str) -> None:
    assert segment.json_str(text) == json.dumps(text, ensure_ascii=False)


@given(st.lists(st.text(), max_size=4), st.lists(st.text(), max_size=3))
def test_render_search_without_hits_equals_json_dumps(unmatched: list[str], _: list[str]) -> None:
    document = {"query": "q", "hits": [], "unmatched_terms": unmatched}
    assert segment.render_search("q", [], unmatched) == json.dumps(document, indent=2, ensure_ascii=False)


def test_bucket_of_is_fnv1a_so_it_is_stable_across_processes() -> None:
    # Published FNV-1a 64-bit test vector: fnv1a64("a") = 0xaf63dc4c8601ec8c.
    assert segment.bucket_of("a", 1 << 64) == 0xAF63DC4C8601EC8C
    assert 0 <= segment.bucket_of("日本", 13) < 13
