"""``search --why TOOL``: where one tool ranks for a request, and why not higher.

Read from the one search (``SearchIndex.search`` with its ``--explain`` rows) over the top
:data:`DEPTH`: the tool's rank (or none: not that far up), the query's words it holds nowhere,
and what each word and each signal (the BM25F fields, the semantic signal, the reranker) adds
to its score against the first hit's. A tool beyond the depth is explained by its BM25F rows
alone (``SearchIndex.why``): no other signal scored it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolfind.models import Hit, SearchResult, TermContribution, Tool
    from toolfind.store.index import SearchIndex

#: How far down ``--why`` looks for the tool (as ``eval`` looks for relevant tools).
DEPTH = 100


class Why:
    """A tool's place in one search: ``result`` (the search, its top ``depth``), the tool,
    its ``rank`` (1-based; None when it is not in the top ``depth``), its ``hit`` (None
    likewise), the query's ``words`` and those it ``lacks``, and its ``rows``: its
    ``--explain`` rows (the hit's, or its BM25F rows when it is no hit)."""

    __slots__ = ("depth", "hit", "lacks", "rank", "result", "rows", "tool", "words")

    def __init__(
        self,
        result: SearchResult,
        tool: Tool,
        depth: int,
        words: Sequence[str],
        rows: Sequence[TermContribution],
    ) -> None:
        self.result, self.tool, self.depth = result, tool, depth
        key = (tool.namespace, tool.name)
        self.rank = next(
            (i for i, h in enumerate(result.hits, 1) if (h.tool.namespace, h.tool.name) == key),
            None,
        )
        self.hit = None if self.rank is None else result.hits[self.rank - 1]
        self.rows = tuple(rows if self.hit is None else self.hit.explanation)
        # Whole identifiers (read_file) count only when the query has nothing else: their
        # parts are words of their own (as core.confidence counts coverage).
        self.words = [w for w in words if "_" not in w] or list(words)
        held = {w for c in self.rows if c.score > 0.0 for w in _words_of(c)}
        self.lacks = [w for w in self.words if w not in held]

    @property
    def first(self) -> Hit | None:
        """The first hit, None when nothing was found."""
        return self.result.hits[0] if self.result.hits else None

    def by_word(self) -> list[tuple[str, float, float]]:
        """Each query word: what it adds to the tool's score, and to the first hit's."""
        mine, theirs = parts(self.rows, "word"), parts(self._first_rows(), "word")
        return [(w, mine.get(w, 0.0), theirs.get(w, 0.0)) for w in self.words]

    def by_signal(self) -> list[tuple[str, float, float]]:
        """Each signal that adds to the tool's score or the first hit's (a BM25F field, the
        semantic signal, the reranker): its part of each, in the order of the rows."""
        mine, theirs = parts(self.rows, "signal"), parts(self._first_rows(), "signal")
        signals = dict.fromkeys([*mine, *theirs])
        return [(f, mine.get(f, 0.0), theirs.get(f, 0.0)) for f in signals]

    def _first_rows(self) -> tuple[TermContribution, ...]:
        return () if self.first is None else self.first.explanation


def why(
    index: SearchIndex,
    query: str,
    name: str,
    limit: int = DEPTH,
    *,
    namespace: str | None = None,
    tags: Sequence[str] = (),
    min_score: float | None = None,
    min_confidence: float | None = None,
) -> Why:
    """Where the tool ``name`` names (any spelling ``show`` takes; raises ToolNotFound with
    close names, or AmbiguousName) ranks for ``query`` among the top ``max(limit, DEPTH)``
    hits the search with these filters returns, and why."""
    tool, words, rows = index.why(query, name)
    depth = max(limit, DEPTH)
    result = index.search(
        query,
        depth,
        namespace=namespace,
        tags=tuple(tags),
        min_score=min_score,
        min_confidence=min_confidence,
        explain=True,
    )
    return Why(result, tool, depth, words, rows)


def parts(rows: Sequence[TermContribution], by: str) -> dict[str, float]:
    """What ``rows`` add up to per query word (``by="word"``: a row of a phrase's synonym is
    shared by its words) or per signal (``by="signal"``: the row's field)."""
    out: dict[str, float] = {}
    for c in rows:
        keys = _words_of(c) if by == "word" else [c.field]
        for key in keys:
            out[key] = out.get(key, 0.0) + c.score / len(keys)
    return out


def _words_of(c: TermContribution) -> list[str]:
    """The query words an ``--explain`` row answers (a synonym of a phrase answers each)."""
    return (c.query_word or c.term).split(" ")
