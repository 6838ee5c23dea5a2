"""Impact tiers: for each common term, its strongest postings, so a query can skip the rest.

Adding up a long posting list costs a pure-Python query most of its time, and most of those
postings are too weak to matter. So each term with at least :data:`MIN_POSTINGS` postings gets
a *tier*: the positions of its strongest postings (impact at least a cut, about an eighth of
them); every posting left out scores less than the cut. This is the tiered index (champion
list) of Manning, Raghavan and Schütze, *Introduction to Information Retrieval* (2008), 7.1;
:func:`toolfind.core.search.top_candidates` reads the tiers back, exactly. The warm path never
imports this module.
"""

from __future__ import annotations

from itertools import compress, repeat
from operator import le, sub

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from collections.abc import Sequence
    from typing import Any

#: Terms with at least this many postings get a tier (a shorter list scans in about a ms).
MIN_POSTINGS = 4096
#: A tier holds about this share of its term's postings (more where impacts tie at the cut).
_SHARE = 8
#: The cut is taken from every this-many-th impact.
_SAMPLE_STRIDE = 8


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

    A term gets no tier when the tier would hold half its postings or more (ties at the
    cut). With ``np`` (numpy) the same tiers are found with it.
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
