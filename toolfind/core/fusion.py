"""Fusing the lexical (BM25F) and the semantic signal: normalisation and a convex mix.

Pure: scores in, scores out; no numpy (the caller computes similarities and passes them).

For a query, each candidate tool gets

    fused = (1 - w) * (lex / max_lex) * coverage**2  +  w * max(0, (cos - lo) / (hi - lo))

where ``lex`` is its BM25F score (0 when it shares no term with the query), ``max_lex`` the best
lexical score of the query, ``coverage`` the share of the query's distinct terms that occur in
the catalog at all (a request whose only known word is "going" has little lexical evidence,
whatever its best BM25F score: measured, +4 MRR@10 on metatool, no loss on seal-tools dev),
``cos`` the cosine similarity of the query's and the tool's
vectors, and ``lo``/``hi`` the least and greatest similarity over the catalog (min-max
normalisation: the semantically closest tool gets 1, the farthest 0). ``w`` is the fusion weight
(``eval`` reports it, ``tune`` learns it). Both parts lie in [0, 1], so a fused score does too.
Of the normalisations measured (min-max over the catalog, over the candidates, z-scores, and
reciprocal-rank fusion) min-max over the catalog lost least on the lexical sets
(docs/SEMANTIC.md).

Candidates are the lexical top ``pool`` and the semantic top ``pool``. A semantic-only candidate
(no query term in the tool) is admitted only when its normalised similarity reaches
:data:`SEMANTIC_FLOOR` and the query holds a word the model knows (the caller's rule,
:func:`toolfind.semantic.knows_a_word`): the similarity of a query of unknown words (``zzzz qqqq``)
to the nearest tool is as high as a real request's, so without that rule such a query would
return noise instead of an honest empty result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from toolfind.models import RERANK_WEIGHT as RERANK_WEIGHT
from toolfind.models import SEMANTIC_WEIGHT

#: The fusion weight of the semantic signal when none is given; ``RERANK_WEIGHT`` the weight
#: of the reranker's similarity (tuned, docs/SEMANTIC.md): ``models.Signals``' defaults.
DEFAULT_WEIGHT = SEMANTIC_WEIGHT
#: The power of the query's term coverage that scales the lexical part.
COVERAGE_POWER = 2.0
#: How many candidates each signal contributes before fusion.
POOL = 50
#: A tool that shares no term with the query is a hit only if its normalised similarity is
#: at least this: in the top 30% of the catalog's range (measured: no loss on any set, and a
#: small catalog no longer lists every tool for a one-word query).
SEMANTIC_FLOOR = 0.7

#: (tool id, score) pairs, best first.
Scored = list[tuple[int, float]]


def mix(
    lexical: float,
    max_lexical: float,
    similarity: float,
    lo: float,
    hi: float,
    weight: float,
    coverage: float = 1.0,
) -> tuple[float, float]:
    """(fused score, its semantic part) for one tool, by the formula in the module docstring."""
    lex = lexical / max_lexical * coverage**COVERAGE_POWER if max_lexical > 0.0 else 0.0
    sem = (similarity - lo) / (hi - lo) if hi > lo else 0.0
    sem = min(1.0, max(0.0, sem))
    semantic = weight * sem
    return (1.0 - weight) * lex + semantic, semantic


def term_coverage(matched: Iterable[Sequence[Any]], words: Iterable[str]) -> float:
    """The share of the query's distinct ``words`` found in some tool: ``matched`` holds
    :func:`toolfind.core.search.run`'s (index term, query word, factor, ...), a word matched
    only through a typo's correction or a synonym counting by its factor."""
    best: dict[str, float] = {}
    for _, asked, factor, *_ in matched:
        for word in asked.split(" "):  # a synonym of a phrase answers each of its words
            best[word] = max(best.get(word, 0.0), factor)
    wanted = set(words)
    return sum(best.get(w, 0.0) for w in wanted) / len(wanted) if wanted else 0.0


def fuse(
    exact: Sequence[tuple[int, float]],
    lexical: Sequence[tuple[int, float]],
    semantic: Iterable[int],
    similarity: Callable[[int], float],
    lo: float,
    hi: float,
    *,
    weight: float,
    limit: int,
    tie_key: Callable[[int], object],
    min_score: float | None = None,
    coverage: float = 1.0,
    agree: Callable[[int], float] | None = None,
) -> tuple[list[tuple[int, float, float]], list[tuple[int, float, float]]]:
    """(exact hits, ranked hits), each a (tool id, fused score, semantic part of it).

    ``exact`` are the tools the query names and ``lexical`` the lexical ranking (both with
    their BM25F scores); ``semantic`` the semantically closest tool ids, already filtered
    (and empty when the query holds no word the model knows); ``similarity`` a tool's cosine
    similarity to the query. Exact hits stay first, in their order; the rest are ranked by
    (-fused, ``tie_key``), at most ``limit`` hits in all; ``min_score`` drops ranked hits
    whose fused score is lower; ``coverage`` is the query's term coverage (0..1); ``agree``
    the action-agreement factor of a tool (:mod:`toolfind.core.actions`), which scales its
    semantic part (the lexical scores given are agreed already).
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"fusion weight must be in [0, 1], not {weight}")
    scores = [s for _, s in exact] + [s for _, s in lexical]
    max_lex = max(scores, default=0.0)
    named = {d for d, _ in exact}
    lex = dict(lexical)
    candidates = dict.fromkeys(d for d, _ in lexical)
    for d in semantic:
        if d not in named:
            candidates.setdefault(d)
    out_exact = []
    for d, s in exact[:limit]:
        out_exact.append((d, *mix(s, max_lex, similarity(d), lo, hi, weight, coverage)))
    ranked = []
    floor = weight * SEMANTIC_FLOOR
    for d in candidates:
        fused, part = mix(lex.get(d, 0.0), max_lex, similarity(d), lo, hi, weight, coverage)
        if d not in lex and part < floor:
            continue
        if agree is not None:  # the lexical scores are already agreed: the semantic part
            share = agree(d)
            fused, part = fused - part * (1.0 - share), part * share
        if fused <= 0.0 or (min_score is not None and fused < min_score):
            continue
        ranked.append((d, fused, part))
    ranked.sort(key=lambda hit: (-hit[1], tie_key(hit[0])))
    return out_exact, ranked[: max(0, limit - len(out_exact))]


#: Requests of up to this many words get the reranker's full weight; a longer one gets
#: ``weight * RERANK_FULL_WORDS / words`` (:func:`rerank_weight`).
RERANK_FULL_WORDS = 12


def rerank_weight(weight: float, query: str) -> float:
    """The reranker's weight for ``query``: ``weight`` for up to :data:`RERANK_FULL_WORDS`
    words (split at white space), then shrinking as ``RERANK_FULL_WORDS / words``.

    A sentence vector is the mean of its word pieces' states: a long request that asks for
    several things (a task in steps) averages them, and its cosine to any one tool says
    less, while BM25F still matches each part's words. Measured (docs/SEMANTIC.md): with the
    full weight for every query, seal-tools' multi-tool tasks (median 54 words) lost 4-6
    NDCG@10; with this, nothing, and the natural requests (4-18 words) keep their gains."""
    words = len(query.split())
    return weight if words <= RERANK_FULL_WORDS else weight * RERANK_FULL_WORDS / words


def rerank(
    scores: Sequence[float], cosines: Sequence[float], weight: float
) -> tuple[list[tuple[float, float]], float]:
    """The rerank stage's mix of the first stage's ``scores`` of its candidates with the
    reranker's ``cosines`` (query and tool vectors), a convex mix over the candidates:

        final = (1 - w) * score / best  +  w * (cos - lo) / (hi - lo)

    ``best`` the best first-stage score of the candidates, ``lo``/``hi`` their least and
    greatest cosine (min-max over the candidates: the closest gets 1; when all are equal,
    each gets 1). Returns each candidate's (final score, its reranker part) and the factor
    ``(1 - w) / best`` that turns a first-stage score into its share of the final one."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"rerank weight must be in [0, 1], not {weight}")
    best = max(scores, default=0.0)
    lo, hi = min(cosines, default=0.0), max(cosines, default=0.0)
    factor = (1.0 - weight) / best if best > 0.0 else 0.0
    out = []
    for score, cos in zip(scores, cosines, strict=True):
        context = weight * ((cos - lo) / (hi - lo) if hi > lo else 1.0)
        out.append((max(0.0, score) * factor + context, context))
    return out, factor
