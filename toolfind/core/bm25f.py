"""BM25F with the BM25+ lower bound: the scoring maths as small pure functions.

The variant is the BM25F of Robertson and Zaragoza, "The Probabilistic Relevance Framework:
BM25 and Beyond", Foundations and Trends in Information Retrieval 3(4), 2009, section 3.5
("simple BM25F"): each field's term frequency is length-normalised with that field's own ``b``
and weighted, the weighted frequencies are summed into one pseudo term frequency, and that sum
is saturated once with ``k1``. On top of it sits the lower bound ``delta`` of BM25+ (Lv and
Zhai, "Lower-Bounding Term Frequency Normalization", CIKM 2011), which stops a matching term in
a long document from scoring almost nothing. For a term t and a tool d::

    B_f(d)   = 1 - b_f + b_f * len_f(d) / avglen_f          length_norm
    s_f(d)   = w_f / B_f(d)                                 field_scale
    tf~(t,d) = sum over fields f of tf_f(t,d) * s_f(d)      pseudo_tf
    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))    idf
    floor(t,d) = delta * max over fields f with tf_f(t,d) > 0 of w_f   floor
    impact   = idf(t) * ((k1 + 1) * tf~ / (k1 + tf~) + floor)   when tf~ > 0, else 0

and a tool's score is the sum of the impacts of the query's distinct terms. ``N`` counts the
enabled tools and ``df(t)`` those where t occurs in a field of positive weight. ``idf`` is the
non-negative form Lucene uses (the ``1 +`` inside the logarithm), so a term found in most tools
still adds a little instead of subtracting. ``avglen_f`` is the mean length of field f over the
tools whose field f is not empty (Lucene's choice too: sparse fields such as search hints would
otherwise get a tiny average and punish every tool that has one).

The BM25+ floor is weighted: BM25+ is a one-field model, and its ``delta`` added whole to a
term found only in a weak field (a parameter description at weight 0.0625) gave that match the
floor of a match in the name, the very floor that ranked "compress file"'s backup_database
second. So the floor is ``delta`` times the (relative) weight of the strongest field the term
occurs in: a name match keeps all of it, a parameter-only match a sixteenth. (Measured against
the sum of the matched fields' weights, capped at 1: see docs/ranking.md, "How the defaults
were chosen".)

Weights are relative (:func:`effective_weights`), so ``k1`` keeps its textbook meaning for the
strongest field. The bulk forms take numpy as an argument (``xp``) and do on each value the
scalar form's IEEE operations in the same order: both give the same bits.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:  # the warm path imports this module for a typo: no typing, no collections
    from collections.abc import Mapping, Sequence
    from typing import Any


#: A query term found in no tool that stands for an indexed term one edit away
#: (:mod:`toolfind.core.typos`) scores this share of that term's impacts: always below an
#: exact match of the same term. A power of two, so that scaling is exact and keeps the impact
#: tiers' cuts exact bounds.
TYPO_DISCOUNT = 0.5


def discounted(impacts: Sequence[float], factor: float) -> Any:
    """A term's impacts times ``factor`` (a typo's discount), as a buffer of doubles."""
    from array import array

    return array("d", [factor * x for x in impacts])


def idf(df: int, n: int) -> float:
    """Lucene's non-negative BM25 idf of a term found in ``df`` of ``n`` tools."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def length_norm(length: float, avg_length: float, b: float) -> float:
    """BM25's length normalisation of one field (1 for a field empty everywhere)."""
    if avg_length <= 0.0:
        return 1.0
    return 1.0 - b + b * length / avg_length


def field_scale(weight: float, length: float, avg_length: float, b: float) -> float:
    """What one occurrence of a term in a field adds to the pseudo term frequency: ``w / B``
    (0 where ``B`` is 0: an empty field with ``b = 1``, which holds no term)."""
    norm = length_norm(length, avg_length, b)
    return weight / norm if norm else 0.0


def field_scales(
    weight: float, lengths: Sequence[float], avg_length: float, b: float, xp: Any = None
) -> Any:
    """:func:`field_scale` of every tool's length of one field: a list, or with ``xp``
    (numpy) and ``lengths`` a float64 array, an array of the same values."""
    if xp is None:
        return [field_scale(weight, length, avg_length, b) for length in lengths]
    values: Any = xp.asarray(lengths, dtype=xp.float64)
    # length_norm's operations in its order: (1 - b) + ((b * length) / avg)
    norm = (1.0 - b) + (b * values) / avg_length if avg_length > 0.0 else xp.ones_like(values)
    scales = xp.zeros_like(norm)
    xp.divide(weight, norm, out=scales, where=norm != 0.0)
    return scales


def pseudo_tf(tfs: Sequence[float], scales: Sequence[float]) -> float:
    """BM25F's pseudo term frequency: ``sum_f tf_f * s_f``, added in field order."""
    total = 0.0
    for tf, scale in zip(tfs, scales, strict=True):
        if tf:
            total += tf * scale
    return total


def floor(tfs: Sequence[float], weights: Sequence[float], delta: float) -> float:
    """BM25+'s lower bound for a term with these per-field frequencies: ``delta`` times the
    largest (relative) weight of the fields it occurs in; 0 when it occurs in none."""
    top = 0.0
    for tf, weight in zip(tfs, weights, strict=True):
        if tf and weight > top:
            top = weight
    return delta * top


def saturate(tf: float, k1: float, delta: float) -> float:
    """BM25+'s term-frequency component ``(k1 + 1) * tf / (k1 + tf) + delta`` for ``tf > 0``."""
    return (k1 + 1.0) * tf / (k1 + tf) + delta


def impact(tf: float, idf_value: float, k1: float, delta: float) -> float:
    """One term's contribution to one tool's score: ``idf * saturate(tf)``, 0 when ``tf <= 0``."""
    if tf <= 0.0:
        return 0.0
    return idf_value * ((k1 + 1.0) * tf / (k1 + tf) + delta)


def saturations(tfs: Sequence[float], k1: float, floors: Any, xp: Any = None) -> Any:
    """:func:`saturate` of many pseudo term frequencies, 0.0 where ``tf <= 0`` (the bulk path),
    each with its own lower bound ``floors[i]`` (:func:`floor`): a list, or with ``xp``
    (numpy) and ``tfs`` and ``floors`` arrays, an array.

    ``idf * saturations(...)[i]`` is bit for bit :func:`impact` with ``delta = floors[i]``:
    the arithmetic is the same.
    """
    k1p1 = k1 + 1.0
    if xp is None:
        return [
            k1p1 * tf / (k1 + tf) + low if tf > 0.0 else 0.0
            for tf, low in zip(tfs, floors, strict=True)
        ]
    values: Any = tfs
    with xp.errstate(divide="ignore", invalid="ignore"):
        return xp.where(values > 0.0, k1p1 * values / (k1 + values) + floors, 0.0)


def effective_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """Field weights divided by the largest one (all zero stays all zero): only their ratios
    matter."""
    top = max(weights.values(), default=0.0)
    if top <= 0.0:
        return dict.fromkeys(weights, 0.0)
    return {name: w / top for name, w in weights.items()}
