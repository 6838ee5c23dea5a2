"""Confidence: how sure toolfind is that a hit is what the request asks for, 0..1.

An agent reading the results needs to know when nothing fits ("is it going to rain in Oslo"
against servers with no weather tool) so that it asks the user instead of calling junk. Each
hit's confidence is a logistic model of features of the hit and the query (:func:`features`):

* ``coverage``: the share of the query's words the hit holds (a typo's correction or a
  synonym counting by its factor), each word weighted by :func:`word_weight` (a conversational
  filler such as "going" or "want" counts a quarter: matching only it is no evidence);
  ``relcov`` the same over the words some tool holds; ``rare`` the same with each word
  weighted by its rarity (a word few tools hold says more);
* ``share``: its score over the best score of the query; ``first``: 1 for the best hit;
* ``gap``: how far it is ahead of the next hit, over the best score (ties are not sure);
  ``lead`` the log of its score over the next one's; ``topgap`` the best hit's ``gap``;
* ``found``: the share of the query's words that occur in the catalog at all;
* ``words``: how many words the query holds (log; long requests cover less of themselves);
* ``semantic``: with the semantic signal, the hit's normalised similarity (0 without);
* ``rerank``: the reranker's cosine of the request and the tool, when the rerank stage ran
  (:data:`MODELS` ``"rerank"``);

and products of two of them (``a*b``), which let the best hit's lead and coverage count more
than a later hit's.

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

from toolfind.core.search import hits

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TypeVar

    from toolfind.core.search import Found

    _Hit = TypeVar("_Hit")

#: Conversational fillers: a request made of them and one real word is about that word.
WEAK_WORDS = frozenset(
    """going go gonna want wanna need like let lets try thing things something anything
    stuff way know think help able just also really maybe possible possibly actually kind sort
    bit lot much many tell say ok okay yes hey hi hello thanks thank right now""".split()
)
#: What a filler counts for in ``coverage``, against 1 for any other word.
WEAK_WEIGHT = 0.25

#: Per model: the bias, then a weight per feature (a missing one is 0). "lexical" ranks by
#: words, "semantic" fuses the semantic signal; "rerank" is chosen whenever the rerank stage
#: re-scored the hits (over either first stage: it does not weigh ``semantic``). Fitted by
#: benchmarks/calibrate.py.
MODELS: dict[str, tuple[float, Mapping[str, float]]] = {
    "lexical": (
        -10.9338,
        {
            "coverage": 0.7616,
            "share": 2.5630,
            "gap": 1.1895,
            "found": 0.7823,
            "words": 1.8084,
            "relcov": 0.4983,
            "lead": -0.5714,
            "first": 0.7065,
            "topgap": 0.4579,
            "rare": 0.6681,
            "coverage*share": 1.2931,
            "share*gap": 1.2124,
            "first*gap": 0.5089,
            "relcov*first": 0.3575,
            "relcov*share": 1.0238,
            "lead*first": 0.2823,
            "rare*first": 0.7321,
        },
    ),
    "semantic": (
        -11.7968,
        {
            "coverage": 0.7015,
            "share": 2.3591,
            "gap": 1.0654,
            "found": 0.5232,
            "words": 1.7243,
            "relcov": 0.5364,
            "lead": -0.5853,
            "first": 0.1918,
            "topgap": 0.4093,
            "rare": 0.6869,
            "coverage*share": 1.1931,
            "share*gap": 1.1636,
            "first*gap": 0.6093,
            "relcov*first": 0.2971,
            "relcov*share": 1.0997,
            "lead*first": 0.8567,
            "rare*first": 0.4093,
            "semantic": 1.7068,
            "semantic*first": 0.8500,
        },
    ),
    "rerank": (
        -10.8944,
        {
            "coverage": 0.5341,
            "share": 2.6727,
            "gap": 1.1423,
            "found": 0.2038,
            "words": 1.6879,
            "relcov": 0.4754,
            "lead": 1.0551,
            "first": 0.7198,
            "topgap": 0.1125,
            "rare": 0.4866,
            "coverage*share": 1.1084,
            "share*gap": 1.1258,
            "first*gap": 0.4399,
            "relcov*first": 0.3195,
            "relcov*share": 1.1284,
            "lead*first": 0.5422,
            "rare*first": 0.3478,
            "rerank": 1.6846,
            "rerank*first": 1.1762,
        },
    ),
}
#: Confidence of a tool the query names.
EXACT = 1.0
#: A hit at this confidence or more is a confident match (calibrated: right 4 times in 5).
CONFIDENT = 0.5


def no_confident_match(best: float | None) -> str:
    """What to tell an agent whose search found no confident match ("" when the best hit,
    of confidence ``best`` or None for no hit at all, is one)."""
    if best is not None and best >= CONFIDENT:
        return ""
    found = "no tool matches" if best is None else f"the best hit's confidence is {best:.2f}"
    return (
        f"No confident match: {found} (below {CONFIDENT:g}). Ask the user what they mean, or"
        " search again with other words, before calling any of these tools."
    )


def word_weight(word: str) -> float:
    """What a query word counts for in ``coverage``."""
    return WEAK_WEIGHT if word in WEAK_WORDS else 1.0


def _words(found: Found) -> list[str]:
    """The query's words that coverage counts: whole identifiers (``read_file``) only when the
    query has nothing else (their parts are words of their own)."""
    parts = [w for w in found.words if "_" not in w]
    return parts or list(found.words)


def found_share(found: Found) -> float:
    """The weighted share of the query's words found in some tool (any way)."""
    words = _words(found)
    total = sum(map(word_weight, words))
    if not total:
        return 0.0
    best: dict[str, float] = {}
    for _, matched, factor, *_ in found.matched:
        for word in matched.split(" "):
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
    words = _words(found)
    weights = {w: word_weight(w) for w in words}
    total = sum(weights.values())
    rarity = _rarity(found, words)
    rare_total = sum(rarity.values())
    known = found_share(found)
    top = hits[0][1] or 1.0
    shared = {"found": known, "words": math.log1p(total)}
    out = []
    for i, (doc, score) in enumerate(hits):
        held = _held(found, doc)
        covered = sum(weights[w] * held.get(w, 0.0) for w in words) / total if total else 0.0
        following = hits[i + 1][1] if i + 1 < len(hits) else 0.0
        share = score / top
        row = {
            "coverage": covered,
            "share": share,
            "gap": max(0.0, score - following) / top,
            **shared,
            "semantic": semantic[i] if semantic is not None else 0.0,
            "rerank": rerank[i] if rerank is not None else 0.0,
            "relcov": covered / known if known else 0.0,
            "lead": min(MAX_LEAD, math.log(score / following)) if following > 0 else MAX_LEAD,
            "first": 1.0 if i == 0 else 0.0,
            "rare": (
                sum(rarity[w] * held.get(w, 0.0) for w in words) / rare_total if rare_total else 0.0
            ),
        }
        out.append(row)
    top_gap = out[0]["gap"]
    for row in out:
        row["topgap"] = top_gap
    return out


#: ``lead`` (the log of a hit's score over the next one's) is capped here.
MAX_LEAD = 3.0
#: ``rare`` weighs a word by ``log(1 + RARITY_SCALE / (tools holding it + 0.5))``: a word
#: few tools hold says more (a fixed scale: the weight depends on the word, not on the size
#: of the catalog).
RARITY_SCALE = 5000.0


def _held(found: Found, doc: int) -> dict[str, float]:
    """The query's words tool ``doc`` holds, each by its best factor (1 as written, less for a
    typo's correction or a synonym)."""
    best: dict[str, float] = {}
    for (_, words, factor, *_), postings in zip(found.matched, found.postings, strict=True):
        docs = postings[0]
        i = bisect_left(docs, doc)
        if i < len(docs) and docs[i] == doc:
            for word in words.split(" "):  # a synonym of a phrase answers each of its words
                if factor > best.get(word, 0.0):
                    best[word] = factor
    return best


def _rarity(found: Found, words: Sequence[str]) -> dict[str, float]:
    """Each word's rarity weight (:data:`RARITY_SCALE`), by its rarest matched term; a word in
    no tool counts as the rarest."""
    fewest: dict[str, int] = {}
    for (_, asked, *_), postings in zip(found.matched, found.postings, strict=True):
        for word in asked.split(" "):
            fewest[word] = min(fewest.get(word, len(postings[0])), len(postings[0]))
    return {w: word_weight(w) * math.log1p(RARITY_SCALE / (fewest.get(w, 0) + 0.5)) for w in words}


def model_for(semantic: bool, rerank: bool) -> tuple[float, Mapping[str, float]]:
    """The calibrated model for the signals a search has: a reranker's when one is given and
    calibrated, else the semantic one with the semantic signal, else the lexical one."""
    if rerank and "rerank" in MODELS:
        return MODELS["rerank"]
    return MODELS["semantic" if semantic else "lexical"]


def probability(row: Mapping[str, float], model: tuple[float, Mapping[str, float]]) -> float:
    """The logistic model's value for one hit's features, in [0, 1]. A weight named ``a*b``
    weighs the product of features a and b."""
    bias, weights = model
    z = bias
    for name, w in weights.items():
        if "*" in name:
            a, _, b = name.partition("*")
            z += w * row.get(a, 0.0) * row.get(b, 0.0)
        else:
            z += w * row.get(name, 0.0)
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


def probe(limit: int) -> int:
    """How many hits a search showing ``limit`` ranks: one more, as the last shown hit's
    lead over the next is part of its confidence."""
    return limit + 1 if limit > 0 else 0


def finish(
    exact: Sequence[Sequence[Any]],
    ranked: Sequence[Sequence[Any]],
    sure: Sequence[float],
    limit: int,
    make: Callable[..., _Hit],
) -> list[_Hit]:
    """The one finish of every search: the first ``limit`` of the :func:`probe` hits it
    ranked, the ``exact`` ones then the ``ranked`` ones (entries ``(doc, score, *rest)``),
    each ``make(match, doc, score, *rest, confidence)`` (``core.search.hits``), its
    confidence from ``sure`` (:func:`of_hits`: exact hits first)."""
    exact, ranked = exact[:limit], ranked[: max(0, limit - len(exact))]
    n = len(exact)
    return hits(
        [(*e, c) for e, c in zip(exact, sure[:n], strict=True)],
        [(*r, c) for r, c in zip(ranked, sure[n : n + len(ranked)], strict=True)],
        make,
    )


class Ranking:
    """:meth:`toolfind.store.index.SearchIndex.ranking`'s answer: the first stage's ``found`` (terms, typos,
    agreement), the ``exact`` and ``ranked`` hits, each ``(tool id, score, semantic part,
    rerank part, cosine or None)``, the fused scores' ``scale`` and the rerank ``mix`` (for
    ``--explain``), and each ranked hit's ``semantic`` similarity and rerank ``cosines`` when
    those signals ran."""

    __slots__ = ("cosines", "exact", "found", "mix", "ranked", "scale", "semantic")

    def __init__(
        self,
        found: Found,
        exact: Sequence[tuple[Any, ...]],
        ranked: Sequence[tuple[Any, ...]],
        scale: float,
        mix: tuple[float, float],
        semantic: list[float] | None,
        cosines: list[float] | None,
    ) -> None:
        self.found, self.exact, self.ranked = found, exact, ranked
        self.scale, self.mix, self.semantic, self.cosines = scale, mix, semantic, cosines

    def confidences(self) -> list[float]:
        """Each hit's confidence, exact hits first (:func:`toolfind.core.confidence.of_hits`,
        from every signal that ran)."""
        return of_hits(
            self.found,
            [(e[0], e[1]) for e in self.ranked],
            exact=len(self.exact),
            semantic=self.semantic,
            rerank=self.cosines,
        )
