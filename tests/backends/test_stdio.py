"""The stdio transport's line splitter: whole lines, joined once, bounded."""

from __future__ import annotations

from toolfind.backends.stdio import LineSplitter, MessageTooLarge


def test_lines_split_across_chunks_come_out_whole() -> None:
    lines = LineSplitter(100)
    assert lines.feed('{"a":') == []
    assert lines.feed(' 1}\n{"b"') == ['{"a": 1}']
    assert lines.feed(": 2}\n\n") == ['{"b": 2}', ""]


def test_a_line_over_the_limit_is_dropped_once_and_the_next_line_is_intact() -> None:
    lines = LineSplitter(10)
    assert lines.feed("12345") == []
    (too_large,) = lines.feed("678901234")
    assert isinstance(too_large, MessageTooLarge) and too_large.limit == 10
    assert lines.feed("x" * 50) == []  # the rest of that line is skipped, not kept
    assert lines.feed("tail\nnext\n") == ["next"]


def test_a_line_of_exactly_the_limit_is_kept() -> None:
    assert LineSplitter(4).feed("abcd\n") == ["abcd"]
