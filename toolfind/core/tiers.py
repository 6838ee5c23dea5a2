"""Impact tiers: the exact top k of a query from the best postings of its common terms.

A term found in many tools (``file`` in a large catalog) has a long posting list, and adding
all of it up costs a pure-Python query most of its time (about 0.3 µs a posting: 85k of them
for a two-word query over 100k synthetic tools). Most of those postings are too weak to
matter. So for each term with at least :data:`MIN_POSTINGS` postings the index keeps a
*tier*: the positions of its strongest postings (impact at least a cut-off ``cut``, about an
eighth of them), and every posting left out of the tier scores less than ``cut``. This is the
tiered index (or champion list) of Manning, Raghavan and Schütze, *Introduction to
Information Retrieval* (2008), section 7.1, made exact in the manner of Fagin's threshold
algorithm ("Optimal aggregation algorithms for middleware", PODS 2001) and of MaxScore:

1. Add up the tiers of the tiered terms and the whole lists of the others: each tool's
   partial score is a lower bound of its score (impacts are positive).
2. A tool's score is below its partial score plus the cut of every tier it is missing from;
   a tool in no list read scores below the sum of all cuts, ``outside``.
3. If the k-th best partial score ``theta`` beats ``outside``, only the tools read can be in
   the top k (or tie with it). Of those, the ones whose bound reaches ``theta`` get their
   exact score: from the partial score itself for a tool in every tier, else by binary search
   in each term's whole list, adding the impacts in query order as a full scan does, so the
   scores are bit for bit the same.
4. Otherwise (or when exact scoring would cost more than a full scan) it gives up, and the
   caller scans as before: tiers never change a result, only how fast it comes.

Used by :class:`~toolfind.store.index.SearchIndex` (pure-Python queries) and by the fast path, which
reads the same columns from the index file. It imports only bisect, itertools and operator
(heapq when a query gets that far): the warm path pays a fraction of a millisecond for it.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress, repeat
from operator import add, le, or_, sub

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Collection, Iterable, Sequence
    from typing import Any

    #: A query term's postings: tool ids (ascending), impacts, and its tier, if it has one:
    #: (positions in those lists of the tier's postings, ascending; the tier's cut).
    Tier = tuple[Sequence[int], float]
    TermPostings = tuple[Sequence[int], Sequence[float], Tier | None]

__all__ = ["MIN_POSTINGS", "add_into", "build", "score_of", "top_candidates"]

#: Terms with at least this many postings get a tier (at 10k synthetic tools the commonest
#: words have about 4.5k; a shorter list is scanned in about a millisecond anyway).
MIN_POSTINGS = 4096
#: A tier holds about this share of its term's postings (more where impacts tie at the cut).
_SHARE = 8
#: The cut is taken from every this-many-th impact.
_SAMPLE_STRIDE = 8
#: Scores are compared with this relative margin, on the safe side of float rounding.
_MARGIN = 1.0 - 1e-9
#: Exact scoring by binary search costs about this many postings of a full scan, per term
#: (measured: about 1.5 µs a search against 0.3 µs a posting).
_SEARCH_COST = 6


def build(
    offsets: Sequence[int],
    impacts: Sequence[float],
    np: Any = None,
    min_postings: int | None = None,
) -> tuple[array[int], dict[int, tuple[int, int, float]]]:
    """The tiers of the terms with at least ``min_postings`` postings (default
    :data:`MIN_POSTINGS`), term t's impacts being ``impacts[offsets[t]:offsets[t + 1]]``: the
    positions of every tier's postings, relative to its term's first posting, end to end, and
    ``{term: (start, end, cut)}`` locating each tier among them.

    A term gets no tier when its impacts tie so much that the tier would hold half its
    postings or more (reading it would save nothing). With ``np`` (numpy) the same tiers are
    found with it.
    """
    from array import array  # a build's; the warm path never builds

    def at_or_above(a: int, b: int, cut: float) -> array[int]:
        """Positions (relative to ``a``) of the impacts ``a..b`` that reach ``cut``."""
        if np is None:
            return array("i", compress(range(b - a), map(cut.__le__, impacts[a:b])))
        found = array("i")
        found.frombytes(np.flatnonzero(values[a:b] >= cut).astype(np.intc).tobytes())
        return found

    values: Any = None if np is None else np.frombuffer(impacts, dtype=np.float64)
    positions = array("i")
    tier_of: dict[int, tuple[int, int, float]] = {}
    least = MIN_POSTINGS if min_postings is None else max(1, min_postings)
    sizes = map(sub, offsets[1:], offsets[:-1])
    for t in compress(range(len(offsets) - 1), map(le, repeat(least), sizes)):
        a, b = offsets[t], offsets[t + 1]
        sample = sorted(impacts[a:b:_SAMPLE_STRIDE])
        cut = sample[-max(1, len(sample) // _SHARE)]
        tier = at_or_above(a, b, cut)
        if cut > 0.0 and 2 * len(tier) < b - a:
            tier_of[t] = (len(positions), len(positions) + len(tier), cut)
            positions += tier
    return positions, tier_of


def top_candidates(
    terms: Sequence[TermPostings],
    k: int,
    skip: Collection[int] = (),
    keep: Callable[[int], bool] | None = None,
) -> dict[int, float] | None:
    """Exact scores of a set of tools holding the query's top k and every tool tied with the
    k-th (the caller ranks them), among those ``keep`` accepts and not in ``skip``; None when
    the tiers cannot tell, and the caller must scan (see the module docstring).

    ``terms`` are the query's terms in query order; at least one should have a tier.
    """
    if k <= 0:
        return None
    partial, seen, cuts = _read(terms)
    if not cuts:
        return None
    for doc in skip:
        partial.pop(doc, None)
    if keep is None:
        eligible: Collection[float] = partial.values()
    else:
        eligible = [s for d, s in partial.items() if keep(d)]
    if len(eligible) < k:
        return None
    import heapq

    theta = heapq.nlargest(k, eligible)[-1] * _MARGIN
    outside = sum(cuts)
    if outside >= theta:
        return None  # a tool in no tier might still reach the k-th score
    every = (1 << len(cuts)) - 1
    missing = {every: 0.0}  # tier bits -> the most the tiers a tool is missing can add
    exact: dict[int, float] = {}
    todo: list[int] = []
    get = seen.get
    floor = theta - outside  # below it, no tool can reach theta whatever tiers it misses
    for doc, score in [item for item in partial.items() if item[1] >= floor]:
        bits = get(doc, 0)
        bound = missing.get(bits)
        if bound is None:
            bound = missing[bits] = sum(c for i, c in enumerate(cuts) if not bits >> i & 1)
        if score + bound >= theta and (keep is None or keep(doc)):
            if bits == every:
                exact[doc] = score  # its every posting was read, in query order
            else:
                todo.append(doc)
    if len(todo) * len(terms) * _SEARCH_COST > sum(len(docs) for docs, _, _ in terms):
        return None
    for doc in todo:
        exact[doc] = score_of(doc, terms)
    return exact


def _read(terms: Sequence[TermPostings]) -> tuple[dict[int, float], dict[int, int], list[float]]:
    """Step 1: per tool, the sum of the impacts read (tiers of tiered terms, whole lists of
    the others) and a bit per tier it is in; and the tiers' cuts, in query order."""
    partial: dict[int, float] = {}
    seen: dict[int, int] = {}
    cuts: list[float] = []
    for docs, impacts, tier in terms:
        if tier is None:
            add_into(partial, docs, impacts)
            continue
        positions, cut = tier
        tier_docs = list(map(docs.__getitem__, positions))
        add_into(partial, tier_docs, map(impacts.__getitem__, positions))
        bits = map(or_, map(seen.get, tier_docs, repeat(0)), repeat(1 << len(cuts)))
        seen.update(zip(tier_docs, bits, strict=True))
        cuts.append(cut)
    return partial, seen, cuts


def score_of(doc: int, terms: Sequence[TermPostings]) -> float:
    """Tool ``doc``'s score: its impacts found by binary search, added in query order (the
    first as it is, as a scan adds them); 0.0 if it has none."""
    score: float | None = None
    for docs, impacts, _ in terms:
        j = bisect_left(docs, doc)
        if j < len(docs) and docs[j] == doc:
            score = impacts[j] if score is None else score + impacts[j]
    return 0.0 if score is None else score


def add_into(acc: dict[int, float], docs: Sequence[int], impacts: Iterable[float]) -> None:
    """``acc[d] = acc.get(d, 0.0) + s`` for each posting (a new tool gets ``s`` as it is),
    iterated in C (3-4x a Python loop).

    A term's tool ids are distinct, so each ``get`` reads the total from before this term:
    the same float additions, in the same order, as the loop. The index and the fast path add
    their postings up with it.
    """
    if acc:
        acc.update(zip(docs, map(add, map(acc.get, docs, repeat(0.0)), impacts), strict=True))
    else:
        acc.update(zip(docs, impacts, strict=True))
