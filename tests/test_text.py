"""toolfind.output.text: the one sanitiser of tool text."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from toolfind.output.text import HIDDEN, clean_text


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
