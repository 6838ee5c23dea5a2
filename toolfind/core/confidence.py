"""Confidence: how sure toolfind is that a hit is what the request asks for, 0..1.

An agent reading the results needs to know when nothing fits ("is it going to rain in Oslo"
against servers with no weather tool, "play some jazz" against a time server) so that it asks
the user instead of calling junk. A hit's confidence is a logistic model of what the search
knows about that hit and the request in absolute terms (:func:`features`):

* ``coverage``: the share of the request's words the hit holds (a typo's correction or a
  synonym counting by its factor), each word by :func:`word_weight` (a conversational filler
  such as "going" or "want" counts a quarter); ``rare`` the same with each word weighted by
  its rarity (a word few tools hold says more, a word no tool holds the most);
* ``found``: the share of the request's words found in the catalog at all; ``missing`` the
  rarity-weighted share found nowhere (an app or product name no tool mentions: "list mongo
  collections" against servers without MongoDB);
* ``words``: how many words the request holds (log);
* with the reranker's model (:data:`MODELS` ``"meaning"``): ``cos``, the model's cosine of
  the request and the tool, and ``cosgap``, how far it is above the closest *other* tool of
  the catalog (the whole catalog's vectors, not the other candidates);
* with the semantic signal alone (``"semantic"``): ``sim``, its cosine of the two.

None of them is a scale relative to the other candidates (a score over the best one, a lead
over the next hit): a lone candidate is judged on what it holds, not on being alone. The
model is fitted on each request's best hit, so it reads as "the chance this hit is right if
it were the one called"; down a result list, a hit's confidence is at most the one above it
(:func:`of_hits`): the list is ranked by the fused score, which ranks better than the
confidence model does (docs/ranking.md, "Confidence"), and confidence never rises down it.

The weights are fitted by ``benchmarks/calibrate.py`` on the open sets (seal-tools dev,
metatool, mcp-open, toolwords), each weighing the same, with requests that have no answer
made the honest way (half of a set's servers indexed, the requests about the other half
asked), under cross-validation grouped by server; the bias is then moved so that confident
hits stay right and requests without an answer rarely get one: docs/ranking.md
("Confidence calibration") has the numbers. A tool the query names has confidence 1.

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

#: The features :func:`features` gives, by the signals they need.
LEXICAL_FEATURES = ("coverage", "rare", "found", "missing", "words")
MEANING_FEATURES = ("cos", "cosgap")
SEMANTIC_FEATURES = ("sim",)

#: Per model: the bias, then a weight per feature (a missing one is 0). "lexical" ranks by
#: words, "semantic" with the semantic signal, "meaning" whenever the reranker's model scored
#: the hits (with or without the semantic signal: it does not weigh ``sim``). Fitted by
#: benchmarks/calibrate.py.
MODELS: dict[str, tuple[float, Mapping[str, float]]] = {
    "lexical": (
        -7.0103,
        {
            "coverage": 3.5203,
            "rare": 3.2026,
            "found": 0.2587,
            "missing": -0.2006,
            "words": 1.4549,
        },
    ),
    "semantic": (
        -6.8431,
        {
            "coverage": 2.6302,
            "rare": 2.4955,
            "found": -0.4552,
            "missing": 0.0876,
            "words": 1.1220,
            "sim": 4.9347,
        },
    ),
    "meaning": (
        -5.9976,
        {
            "coverage": 2.6181,
            "rare": 2.3498,
            "found": -0.2479,
            "missing": -0.1990,
            "words": 1.1463,
            "cos": 3.3461,
            "cosgap": 2.6062,
        },
    ),
}
#: Confidence of a tool the query names.
EXACT = 1.0
#: A hit at this confidence or more is a confident match (calibrated: docs/ranking.md).
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
    docs: Sequence[int],
    *,
    cosines: Sequence[float] | None = None,
    nearest: Sequence[tuple[int, float]] = (),
    sims: Sequence[float] | None = None,
) -> list[dict[str, float]]:
    """The features of each hit ``docs`` (tool ids) of a search: the request's words each
    holds, and with the reranker's model each one's ``cosines`` (and ``nearest``, the
    catalog's two tools closest to the request, ``(tool id, cosine)``, for ``cosgap``), with
    the semantic signal alone its ``sims``."""
    if not docs:
        return []
    words = _words(found)
    weights = {w: word_weight(w) for w in words}
    total = sum(weights.values())
    rarity = _rarity(found, words)
    rare_total = sum(rarity.values())
    anywhere = _found_factors(found)
    shared = {
        "found": found_share(found),
        "missing": (
            1.0 - sum(rarity[w] * anywhere.get(w, 0.0) for w in words) / rare_total
            if rare_total
            else 0.0
        ),
        "words": math.log1p(total),
    }
    out = []
    for i, doc in enumerate(docs):
        held = _held(found, doc)
        row = {
            "coverage": (
                sum(weights[w] * held.get(w, 0.0) for w in words) / total if total else 0.0
            ),
            "rare": (
                sum(rarity[w] * held.get(w, 0.0) for w in words) / rare_total if rare_total else 0.0
            ),
            **shared,
        }
        if cosines is not None:
            cos = cosines[i]
            other = next((c for d, c in nearest if d != doc), None)
            row["cos"] = cos
            row["cosgap"] = cos - other if other is not None else 0.0
        if sims is not None:
            row["sim"] = sims[i]
        out.append(row)
    return out


#: ``rare`` weighs a word by ``log(1 + RARITY_SCALE / (tools holding it + 0.5))``: a word
#: few tools hold says more (a fixed scale: the weight depends on the word, not on the size
#: of the catalog).
RARITY_SCALE = 5000.0


def _found_factors(found: Found) -> dict[str, float]:
    """Each query word found in some tool, by its best factor (1 as written, less for a
    typo's correction or a synonym)."""
    best: dict[str, float] = {}
    for _, matched, factor, *_ in found.matched:
        for word in matched.split(" "):  # a synonym of a phrase answers each of its words
            best[word] = max(best.get(word, 0.0), factor)
    return best


def _held(found: Found, doc: int) -> dict[str, float]:
    """The query's words tool ``doc`` holds, each by its best factor (1 as written, less for a
    typo's correction or a synonym)."""
    best: dict[str, float] = {}
    for (_, words, factor, *_), postings in zip(found.matched, found.postings, strict=True):
        docs = postings[0]
        i = bisect_left(docs, doc)
        if i < len(docs) and docs[i] == doc:
            for word in words.split(" "):
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


def model_for(semantic: bool, meaning: bool) -> tuple[float, Mapping[str, float]]:
    """The calibrated model for the signals a search has: the meaning one when the
    reranker's model scored the hits, else the semantic one with the semantic signal, else
    the lexical one."""
    if meaning:
        return MODELS["meaning"]
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
    if z > 40.0:
        return 1.0
    return 1.0 / (1.0 + math.exp(-z))


def of_hits(
    found: Found,
    ranked: Sequence[Sequence[Any]],
    *,
    exact: int = 0,
    cosines: Sequence[float] | None = None,
    nearest: Sequence[tuple[int, float]] = (),
    sims: Sequence[float] | None = None,
) -> list[float]:
    """The confidence of each hit of a search: ``exact`` tools the query names first (each
    :data:`EXACT`), then the ``ranked`` ones (entries whose first item is the tool id), best
    first, as the search returns them (``cosines``, ``nearest``, ``sims``: the signals that ran, as :func:`features`
    takes them). A hit's confidence is at most the one above it: it never rises down a list."""
    model = model_for(sims is not None, cosines is not None)
    docs = [int(entry[0]) for entry in ranked]
    rows = features(found, docs, cosines=cosines, nearest=nearest, sims=sims)
    out = [EXACT] * exact
    ceiling = EXACT
    for row in rows:
        ceiling = min(ceiling, round(probability(row, model), 4))
        out.append(ceiling)
    return out


def probe(limit: int) -> int:
    """How many hits a search showing ``limit`` ranks: as many (a hit's confidence needs no
    hit below it)."""
    return max(0, limit)


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
    """:meth:`toolfind.store.index.SearchIndex.ranking`'s answer: the first stage's ``found``
    (terms, typos, agreement), the ``exact`` and ``ranked`` hits, each ``(tool id, score,
    semantic part, rerank part, cosine or None)``, the lexical contributions' ``scale`` and the
    rerank ``mix`` (for ``--explain``), and the raw signals of the ranked hits for their
    confidence: the semantic signal's cosines ``sims`` (when it ran), the reranker's
    ``cosines`` and the catalog's ``nearest`` tools to the request (when it ran)."""

    __slots__ = ("cosines", "exact", "found", "mix", "nearest", "ranked", "scale", "sims")

    def __init__(
        self,
        found: Found,
        exact: Sequence[tuple[Any, ...]],
        ranked: Sequence[tuple[Any, ...]],
        scale: float,
        mix: tuple[float, float],
        sims: list[float] | None,
        cosines: list[float] | None,
        nearest: Sequence[tuple[int, float]] = (),
    ) -> None:
        self.found, self.exact, self.ranked = found, exact, ranked
        self.scale, self.mix, self.sims, self.cosines = scale, mix, sims, cosines
        self.nearest = nearest

    @property
    def semantic(self) -> list[float] | None:
        """The semantic signal's cosine of each ranked hit, when it ran."""
        return self.sims

    def confidences(self) -> list[float]:
        """Each hit's confidence, exact hits first (:func:`of_hits`, from every signal that
        ran; with the reranker's model, the semantic signal's cosine is not weighed)."""
        return of_hits(
            self.found,
            self.ranked,
            exact=len(self.exact),
            cosines=self.cosines,
            nearest=self.nearest,
            sims=self.sims if self.cosines is None else None,
        )
