"""Confidence: how sure toolfind is that a hit is what the request asks for, 0..1.

An agent reading the results needs to know when nothing fits ("is it going to rain in Oslo"
against servers with no weather tool) so that it asks the user instead of calling junk. Each
hit's confidence is a logistic model of features of the hit and the query (:func:`features`):

* ``coverage``: the share of the query's words the hit holds (a typo's correction or a
  synonym counting by its factor), each word weighted by :func:`word_weight` (a conversational
  filler such as "going" or "want" counts a quarter: matching only it is no evidence);
* ``share``: its score over the best score of the query;
* ``gap``: how far it is ahead of the next hit, over the best score (ties are not sure);
* ``found``: the share of the query's words that occur in the catalog at all;
* ``words``: how many words the query holds (log; long requests cover less of themselves);
* ``semantic``: with the semantic signal, the hit's normalised similarity (0 without);
* ``rerank``: a reranker's cosine, when one is plugged in (:data:`MODELS` ``"rerank"``).

The weights are fitted by ``benchmarks/calibrate.py`` on the open sets (seal-tools dev,
metatool, mcp-open, toolwords) together with requests that have no answer (mcp-open's queries
against the catalog without the servers that answer them), and then shifted so that hits at
0.5 or more are right at least 80% of the time: docs/ranking.md ("Confidence") has the
numbers and how to re-run it. A tool the query names (an exact hit) has confidence 1.

Pure and cheap: the warm path computes it for the hits it prints (only :mod:`math`).
"""

from __future__ import annotations

import math
from bisect import bisect_left

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from toolfind.core.search import Found

#: The features, in the order :func:`features` gives them.
FEATURES = ("coverage", "share", "gap", "found", "words", "semantic", "rerank")

#: Conversational fillers: a request made of them and one real word is about that word.
WEAK_WORDS = frozenset(
    """going go gonna want wanna need like let lets try thing things something anything
    stuff way know think help able just also really maybe possible possibly actually kind sort
    bit lot much many tell say ok okay yes hey hi hello thanks thank right now""".split()
)
#: What a filler counts for in ``coverage``, against 1 for any other word.
WEAK_WEIGHT = 0.25

#: Per model: the bias, then a weight per feature (a missing one is 0). "lexical" ranks by
#: words, "semantic" fuses the semantic signal; "rerank" (when a reranker calibrates one) is
#: chosen whenever a reranker's cosine is given. Fitted by benchmarks/calibrate.py.
MODELS: dict[str, tuple[float, Mapping[str, float]]] = {
    "lexical": (
        -6.0,
        {"coverage": 5.0, "share": 2.0, "gap": 4.0, "found": 1.0, "words": -0.5},
    ),
    "semantic": (
        -6.0,
        {"coverage": 5.0, "share": 2.0, "gap": 4.0, "found": 1.0, "words": -0.5, "semantic": 1.0},
    ),
}
#: Confidence of a tool the query names.
EXACT = 1.0


def word_weight(word: str) -> float:
    """What a query word counts for in ``coverage``."""
    return WEAK_WEIGHT if word in WEAK_WORDS else 1.0


def _words(found: Found) -> list[str]:
    """The query's words that coverage counts: whole identifiers (``read_file``) only when the
    query has nothing else (their parts are words of their own)."""
    parts = [w for w in found.words if "_" not in w]
    return parts or list(found.words)


def coverage(found: Found, doc: int) -> float:
    """The weighted share of the query's words that tool ``doc`` holds (by their best factor:
    1 as written, less for a typo's correction or a synonym)."""
    words = _words(found)
    total = sum(map(word_weight, words))
    if not total:
        return 0.0
    best: dict[str, float] = {}
    for (_, word, factor, *_), postings in zip(found.matched, found.postings, strict=True):
        if factor <= best.get(word, 0.0):
            continue
        docs = postings[0]
        i = bisect_left(docs, doc)
        if i < len(docs) and docs[i] == doc:
            best[word] = factor
    return sum(word_weight(w) * best.get(w, 0.0) for w in words) / total


def found_share(found: Found) -> float:
    """The weighted share of the query's words found in some tool (any way)."""
    words = _words(found)
    total = sum(map(word_weight, words))
    if not total:
        return 0.0
    best: dict[str, float] = {}
    for _, word, factor, *_ in found.matched:
        best[word] = max(best.get(word, 0.0), factor)
    return sum(word_weight(w) * best.get(w, 0.0) for w in words) / total


def features(
    found: Found,
    hits: Sequence[tuple[int, float]],
    semantic: Sequence[float] | None = None,
    rerank: Sequence[float] | None = None,
) -> list[dict[str, float]]:
    """The features of each ranked hit ``(doc, score)`` (best first) of a search; ``semantic``
    each hit's normalised similarity and ``rerank`` a reranker's cosine, when there are."""
    if not hits:
        return []
    top = hits[0][1] or 1.0
    shared = {
        "found": found_share(found),
        "words": math.log1p(sum(map(word_weight, _words(found)))),
    }
    out = []
    for i, (doc, score) in enumerate(hits):
        following = hits[i + 1][1] if i + 1 < len(hits) else 0.0
        row = {
            "coverage": coverage(found, doc),
            "share": score / top,
            "gap": max(0.0, score - following) / top,
            **shared,
            "semantic": semantic[i] if semantic is not None else 0.0,
            "rerank": rerank[i] if rerank is not None else 0.0,
        }
        out.append(row)
    return out


def model_for(semantic: bool, rerank: bool) -> tuple[float, Mapping[str, float]]:
    """The calibrated model for the signals a search has: a reranker's when one is given and
    calibrated, else the semantic one with the semantic signal, else the lexical one."""
    if rerank and "rerank" in MODELS:
        return MODELS["rerank"]
    return MODELS["semantic" if semantic else "lexical"]


def probability(row: Mapping[str, float], model: tuple[float, Mapping[str, float]]) -> float:
    """The logistic model's value for one hit's features, in [0, 1]."""
    bias, weights = model
    z = bias + sum(w * row.get(name, 0.0) for name, w in weights.items())
    if z < -40.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-z))


def of_hits(
    found: Found,
    ranked: Sequence[tuple[int, float]],
    *,
    exact: int = 0,
    semantic: Sequence[float] | None = None,
    rerank: Sequence[float] | None = None,
) -> list[float]:
    """The confidence of each hit of a search: ``exact`` tools the query names first (each
    :data:`EXACT`), then the ``ranked`` ones ``(doc, score)``, best first, as the search
    returns them (``semantic`` and ``rerank``: their signals, when there are)."""
    model = model_for(semantic is not None, rerank is not None)
    rows = features(found, ranked, semantic, rerank)
    return [EXACT] * exact + [round(probability(row, model), 4) for row in rows]
