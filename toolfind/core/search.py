"""One search: a query's hits from any postings source, by the fastest exact strategy.

Both front ends run it: :class:`~toolfind.store.index.SearchIndex` over its columns in memory,
and the warm fast path over the index file (:class:`~toolfind.store.segment.Segment`).

A tool's score adds its impacts over the query's distinct terms in query order, the first as
it is (``0.0 + x`` would be the same float). Every strategy adds the same floats in the same
order, so which one runs never changes a score by a bit:

* a full scan (:func:`accumulate`), always right;
* impact tiers (:func:`top_candidates`, tiers built by :mod:`toolfind.core.tiers`);
* MaxScore pruning (:func:`_accumulate_pruned`), when the source knows each term's largest impact;
* numpy (:func:`_rank_vectorized`), when the source offers it (``SearchIndex.accelerate``).

The warm path runs this: it imports only :mod:`toolfind.core.analysis` and cheap stdlib modules.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress, repeat
from operator import add, mul, or_

from toolfind.core import bm25f
from toolfind.core.analysis import capitalised, query_stop_words, query_terms, unmatched_words

#: At most this many words of one query are looked up as typos (``core/typos``): a pasted
#: paragraph of unknown words costs a bounded number of lookups.
MAX_CORRECTIONS = 8
#: At most this many of a query's stop words are paired with its words (``_stop_compounds``).
MAX_STOP_WORDS = 8

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence
    from typing import Any, Protocol, TypeVar

    from toolfind.core.synonyms import Table as SynonymTable

    _Hit = TypeVar("_Hit")

    #: Positions (ascending) of a term's strongest postings, and the cut the others score below.
    Tier = tuple[Sequence[int], float]
    #: Tool ids (ascending), the term's impact in each, its tier, its largest impact (or None).
    TermPostings = tuple[Sequence[int], Sequence[float], Tier | None, float | None]
    Keep = Callable[[int], bool]
    Scored = list[tuple[int, float]]
    #: A term searched: the index term, the query word it comes from (a synonym of a phrase:
    #: its words, by a space), the factor of its impacts, how it was found (:data:`AS_WRITTEN`,
    #: :data:`TYPO`, :data:`SYNONYM`) and the word it stands for as a tool writes it (a typo's
    #: correction; else the term).
    Matched = tuple[str, str, float, str, str]

    class Source(Protocol):
        """What :func:`run` asks of an index."""

        def postings(self, term: str) -> TermPostings | None: ...  # None: in no tool
        def known(self, terms: list[str]) -> Iterable[str]: ...  # those in the vocabulary
        def synonym_table(self) -> SynonymTable: ...  # synonyms.build's
        def named(self, query: str) -> Sequence[int]: ...  # analysis.lookup_name's ids
        def enabled(self, doc: int) -> bool: ...
        def action(self, doc: int) -> int: ...  # actions.tool_class's bits
        def exact_key(self, doc: int) -> Any: ...  # (namespace, name)
        def tie_key(self, doc: int) -> Any: ...  # (name, namespace, id) or its rank
        def numpy(self, postings: int) -> Any: ...  # numpy for a query this size, or None


#: How a searched term was found: as the query writes it, as a typo's correction, as a synonym.
AS_WRITTEN, TYPO, SYNONYM = "word", "typo", "synonym"
#: Queries reading at least this many postings use MaxScore pruning (see _accumulate_pruned).
PRUNE_MIN_POSTINGS = 1024
#: Queries reading at least this many postings use numpy, when the source offers it.
VECTOR_MIN_POSTINGS = 512
#: Bounds are compared with this relative margin, on the safe side of float rounding.
_MARGIN = 1.0 - 1e-9
#: Exact scoring by binary search costs about this many postings of a full scan, per term.
_SEARCH_COST = 6
#: :func:`_at_or_above_kth` estimates its cut-off from every this-many-th total.
_SAMPLE_STRIDE = 16
#: Action agreement re-ranks at least this many of the lexical top (more when needed).
AGREEMENT_POOL = 30


class Found:
    """What :func:`run` found: the terms searched (``matched``, each a :data:`Matched`) and
    their postings (``postings``, in the same order), the query's words found nowhere
    (``unmatched``), the tools the query names (``exact``) and the ranked ones (``ranked``),
    each a (tool id, score); ``agree`` the action-agreement factor of a tool id (None when
    nothing was searched); ``words`` the query's distinct content words, in order."""

    __slots__ = ("agree", "exact", "matched", "postings", "ranked", "unmatched", "words")

    def __init__(
        self,
        matched: list[Matched],
        postings: list[TermPostings],
        unmatched: tuple[str, ...],
        words: list[str],
        exact: Scored | None = None,
        ranked: Scored | None = None,
        agree: Callable[[int], float] | None = None,
    ) -> None:
        self.matched, self.postings, self.unmatched, self.words = (
            matched,
            postings,
            unmatched,
            words,
        )
        self.exact = [] if exact is None else exact
        self.ranked = [] if ranked is None else ranked
        self.agree = agree

    @property
    def corrections(self) -> dict[str, str]:
        """Each query word read as another (a typo), and the word it was read as."""
        return {m[1]: m[4] for m in self.matched if m[3] == TYPO}


def run(
    source: Source,
    query: str,
    limit: int,
    *,
    keep: Keep | None = None,
    min_score: float | None = None,
) -> Found:
    """Search ``source`` for at most ``limit`` hits (:class:`Found`).

    The tools the query names come first (by ``source.exact_key``), then the ranked ones by
    (-score, ``source.tie_key``), each score times its action-agreement factor
    (:mod:`toolfind.core.actions`). ``keep`` (a filter on tool ids) applies to both kinds of
    hit; ``min_score`` drops hits scoring less, exact ones too. When no query term (nor a
    correction or synonym of one) occurs in any tool there are no hits at all.
    """
    pairs = query_terms(query)
    matched, terms, found = _match(source, pairs, capitalised(query))
    unmatched = unmatched_words(pairs, found)
    words = list(dict.fromkeys(word for _, word in pairs))
    if terms:
        _stop_compounds(source, query, pairs, matched, terms)
    if not terms:
        return Found(matched, terms, unmatched, words)
    from toolfind.core.actions import agreement

    agree = agreement(query, source.action)
    if limit <= 0:
        return Found(matched, terms, unmatched, words, agree=agree)
    enabled = source.enabled
    exact = [d for d in source.named(query) if enabled(d) and (keep is None or keep(d))]
    exact.sort(key=source.exact_key)
    del exact[limit:]
    named = [(d, score_of(d, terms)) for d in exact]
    if min_score is not None:
        named = [(d, s) for d, s in named if s >= min_score]
    ranked = _agreeing(source, terms, limit - len(named), agree, keep, min_score, exact)
    return Found(matched, terms, unmatched, words, named, ranked, agree)


def _agreeing(
    source: Source,
    terms: Sequence[TermPostings],
    k: int,
    agree: Callable[[int], float],
    keep: Keep | None,
    min_score: float | None,
    skip: Collection[int],
) -> Scored:
    """The k best tools by score times ``agree`` (every factor at most 1).

    The lexical top k first: when none of them loses anything it is the answer (a tool left
    out scores at most the k-th and can only go down). Otherwise the pool is widened until
    the k-th re-scored tool beats the pool's last score, or the pool holds every match."""
    if k <= 0:
        return []
    pool = k
    while True:
        raw = rank(source, terms, pool, keep=keep, skip=skip)
        factors = [agree(d) for d, _ in raw]
        if pool == k and all(f == 1.0 for f in factors):
            scored = raw
            break
        scored = [(d, s * f) for (d, s), f in zip(raw, factors, strict=True)]
        scored.sort(key=lambda ds: (-ds[1], source.tie_key(ds[0])))
        del scored[k:]
        if len(raw) < pool or (len(scored) == k and scored[-1][1] > raw[-1][1]):
            break
        pool = max(pool * 4, AGREEMENT_POOL)
    if min_score is not None:
        scored = [(d, s) for d, s in scored if s >= min_score]
    return scored


def hits(
    exact: Iterable[Sequence[Any]], ranked: Iterable[Sequence[Any]], make: Callable[..., _Hit]
) -> list[_Hit]:
    """Every search's hits, in their one order: the tools the query names, then the ranked
    ones (as :func:`run`, or the semantic signal, gives them), each ``make(match, doc, score,
    *rest)`` of its entry ``(doc, score, *rest)``, ``match`` being ``"exact"`` or ``"ranked"``.
    ``SearchIndex.search`` makes its ``models.Hit`` objects with it, the warm path the JSON
    hit records of tools read from the index file (``output.wire.hit_record``)."""
    found = [make("exact", *entry) for entry in exact]
    found += [make("ranked", *entry) for entry in ranked]
    return found


def _match(
    source: Source, pairs: Sequence[tuple[str, str]], names: Collection[str] = ()
) -> tuple[list[Matched], list[TermPostings], set[str]]:
    """Per term searched, its :data:`Matched` and its postings: the query's terms found as
    they are, in query order; then the typos' corrections; then the synonyms of the query's
    words (:mod:`toolfind.core.synonyms`); and the query terms found one of these ways.

    A term with no postings stands for the indexed term one edit away that
    :func:`toolfind.core.typos.correct` picks, its impacts times ``bm25f.TYPO_DISCOUNT``
    (so every strategy adds the same, discounted floats), unless the query also has that
    term. A real word is never corrected into another (both common English:
    ``typos.is_english``), nor one of ``names``, the words the query capitalises. A synonym's impacts are times
    ``synonyms.DISCOUNT`` (times the discount of a typo when it is a typo's synonym). A term
    the query holds is never added again. Synonyms are looked up by the query's words (a
    typo's by the word it was read as), never by its stems.
    """
    matched: list[Matched] = []
    terms: list[TermPostings] = []
    found: set[str] = set()
    # (term as searched, query word, factor, the word looked up as a synonym)
    sequence: list[tuple[str, str, float, str]] = []
    typos: list[tuple[str, str, str, TermPostings]] = []  # (term, word, shown, postings)
    tried = 0  # words looked up as typos (MAX_CORRECTIONS at most)
    table = source.synonym_table()
    for term, word in pairs:
        postings = source.postings(term)
        if postings is not None:
            found.add(term)
            matched.append((term, word, 1.0, AS_WRITTEN, term))
            terms.append(postings)
            sequence.append((term, word, 1.0, word))
        elif (
            "_" not in term and tried < MAX_CORRECTIONS and not table.terms(table.member_word(word))
        ):
            from toolfind.core import typos as typo_rule  # only for a term found nowhere

            tried += 1
            fix = None
            if word not in names:
                fix = typo_rule.read_as(term, word, source.known, source.postings)
            if fix is None:
                sequence.append((term, word, 1.0, word))
            else:
                typos.append((fix[0], word, fix[1], fix[2]))
                found.add(term)
                sequence.append((fix[0], word, bm25f.TYPO_DISCOUNT, fix[1]))
        else:
            sequence.append((term, word, 1.0, word))
    searched = {m[0] for m in matched}
    for fixed, word, shown, postings in typos:
        if fixed not in searched:
            searched.add(fixed)
            matched.append((fixed, word, bm25f.TYPO_DISCOUNT, TYPO, shown))
            terms.append(_scaled(postings, bm25f.TYPO_DISCOUNT))
    if sequence and len(table):
        from toolfind.core.synonyms import DISCOUNT

        own = [t for t, _, _, _ in sequence]
        for term, at, size in table.expand([w for *_, w in sequence], own):
            postings = source.postings(term) if term not in searched else None
            if postings is None:
                continue
            searched.add(term)
            factor = sequence[at][2] * DISCOUNT
            # A phrase's words, by a space (the parts of an identifier, not the whole again).
            spelled = [w for _, w, _, _ in sequence[at : at + size]]
            word = " ".join(w for w in spelled if "_" not in w) or spelled[0]
            matched.append((term, word, factor, SYNONYM, term))
            terms.append(_scaled(postings, factor))
            found.update(pair[0] for pair in pairs[at : at + size])
    return matched, terms, found


def _stop_compounds(
    source: Source,
    query: str,
    pairs: Sequence[tuple[str, str]],
    matched: list[Matched],
    terms: list[TermPostings],
) -> None:
    """Add the names a query's stop word makes with one of its words: "is 97 prime" holds
    ``is_prime`` (a stop word counts only as half of a tool's name, never on its own: counting
    query stop words everywhere cost metatool 4 points of MRR@10). At most
    :data:`MAX_STOP_WORDS` stop words are paired."""
    have = {t for t, _ in pairs} | {m[0] for m in matched}
    words = [word for term, word in pairs if "_" not in term]
    for stop in query_stop_words(query)[:MAX_STOP_WORDS]:
        for word in words:
            for compound in (f"{stop}_{word}", f"{word}_{stop}"):
                postings = None if compound in have else source.postings(compound)
                if postings is not None:
                    have.add(compound)
                    matched.append((compound, f"{stop} {word}", 1.0, AS_WRITTEN, compound))
                    terms.append(postings)


def _scaled(postings: TermPostings, factor: float) -> TermPostings:
    """A term's postings with its impacts times ``factor``. Scaling by a positive factor keeps
    every order: the tier's postings are still the strongest, the others below its scaled
    cut, the scaled largest the largest."""
    docs, impacts, tier, largest = postings
    if tier is not None:
        tier = (tier[0], factor * tier[1])
    bound = None if largest is None else factor * largest
    return (docs, bm25f.discounted(impacts, factor), tier, bound)


def rank(
    source: Source,
    terms: Sequence[TermPostings],
    k: int,
    *,
    keep: Keep | None = None,
    min_score: float | None = None,
    skip: Collection[int] = (),
    weights: Sequence[float] | None = None,
) -> Scored:
    """The k best tools for ``terms`` (in query order) that ``keep`` accepts, scoring at least
    ``min_score``, ``skip`` left out: see :func:`top`. ``weights`` (one per term, for
    ``similar``) multiply each term's impacts; every strategy adds the same products in the
    same order."""
    if k <= 0 or not terms:
        return []
    total = sum(len(p[0]) for p in terms)
    skipped = set(skip)
    np = source.numpy(total)
    if np is not None and total >= VECTOR_MIN_POSTINGS:
        return _rank_vectorized(np, source, terms, k, keep, min_score, skipped, weights)
    if weights is None and any(p[2] is not None for p in terms):
        found = top_candidates(terms, k, skipped, keep)
        if found is not None:
            return top(found, k, source.tie_key, None, min_score)
    if len(terms) > 1 and total >= PRUNE_MIN_POSTINGS and all(p[3] is not None for p in terms):
        acc = _accumulate_pruned(terms, k, keep, skipped, weights)
    else:
        acc = accumulate(terms, weights)
    for doc in skipped:
        acc.pop(doc, None)
    return top(acc, k, source.tie_key, keep, min_score)


# ---------------------------------------------------------------------- one score, one cut


def score_of(doc: int, terms: Sequence[TermPostings]) -> float:
    """Tool ``doc``'s score: its impacts found by binary search, added in query order (the
    first as it is, as a scan adds them); 0.0 if it has none."""
    score: float | None = None
    for p in terms:
        docs, impacts = p[0], p[1]
        j = bisect_left(docs, doc)
        if j < len(docs) and docs[j] == doc:
            score = impacts[j] if score is None else score + impacts[j]
    return 0.0 if score is None else score


def add_into(acc: dict[int, float], docs: Sequence[int], impacts: Iterable[float]) -> None:
    """``acc[d] = acc.get(d, 0.0) + s`` for each posting (a new tool gets ``s`` as it is),
    iterated in C (3-4x a Python loop): a term's ids are distinct, so the additions are the
    loop's."""
    if acc:
        acc.update(zip(docs, map(add, map(acc.get, docs, repeat(0.0)), impacts), strict=True))
    else:
        acc.update(zip(docs, impacts, strict=True))


def _weighted(impacts: Sequence[float], weights: Sequence[float] | None, j: int) -> Iterable[float]:
    """A term's impacts, times ``weights[j]`` if weights are given."""
    return impacts if weights is None else map(mul, repeat(weights[j]), impacts)


def accumulate(
    terms: Sequence[TermPostings], weights: Sequence[float] | None = None
) -> dict[int, float]:
    """The score of every tool matching a term: impacts (times ``weights``, one per term)
    added in query order."""
    acc: dict[int, float] = {}
    for j, p in enumerate(terms):
        add_into(acc, p[0], _weighted(p[1], weights, j))
    return acc


def top(
    scores: dict[int, float],
    k: int,
    tie_key: Callable[[int], Any],
    keep: Keep | None = None,
    min_score: float | None = None,
) -> Scored:
    """The k best (tool, score) of ``scores`` that ``keep`` accepts and score at least
    ``min_score``, by (-score, ``tie_key(tool)``).

    The tools at or above the k-th best bare score (ties included) are picked in C: no Python
    call per scored tool.
    """
    if k <= 0 or not scores:
        return []
    if keep is not None or min_score is not None:
        scores = {
            d: s
            for d, s in scores.items()
            if (keep is None or keep(d)) and (min_score is None or s >= min_score)
        }
    if len(scores) <= k:
        items = list(scores.items())
    else:
        import heapq

        cutoff = heapq.nlargest(k, scores.values())[-1]
        items = [(d, scores[d]) for d in compress(scores, map(cutoff.__le__, scores.values()))]
    items.sort(key=lambda ds: (-ds[1], tie_key(ds[0])))
    del items[k:]
    return items


# ---------------------------------------------------------------------- impact tiers


def top_candidates(
    terms: Sequence[TermPostings],
    k: int,
    skip: Collection[int] = (),
    keep: Keep | None = None,
) -> dict[int, float] | None:
    """Exact scores of a set of tools holding the query's top k and every tool tied with the
    k-th (the caller ranks them), among those ``keep`` accepts and not in ``skip``; None when
    the tiers cannot tell, and the caller must scan.

    The threshold algorithm over impact tiers:

    1. Add up the tiers of the tiered terms and the whole lists of the others: each tool's
       partial score is a lower bound of its score (impacts are positive).
    2. A tool's score is below its partial score plus the cut of every tier it is missing
       from; a tool in no list read scores below the sum of all cuts, ``outside``.
    3. If the k-th best partial score ``theta`` beats ``outside``, only the tools read can be
       in the top k (or tie with it). Of those, the ones whose bound reaches ``theta`` get
       their exact score: from the partial score itself for a tool in every tier, else by
       :func:`score_of`, so the scores are bit for bit a scan's.
    4. Otherwise (or when exact scoring would cost more than a full scan) it gives up.
    """
    if k <= 0:
        return None
    partial, seen, cuts = _read(terms)
    if not cuts:
        return None
    for doc in skip:
        partial.pop(doc, None)
    kth = _kth(partial, k, keep, ())
    if kth is None:
        return None
    theta = kth * _MARGIN
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
    if len(todo) * len(terms) * _SEARCH_COST > sum(len(p[0]) for p in terms):
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
    for docs, impacts, tier, _ in terms:
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


# ---------------------------------------------------------------------- MaxScore


def _accumulate_pruned(
    terms: Sequence[TermPostings],
    k: int,
    keep: Keep | None,
    skip: set[int],
    weights: Sequence[float] | None,
) -> dict[int, float]:
    """:func:`accumulate`, or the scores of a set of tools holding the top k (and every tool
    tied with the k-th) that ``keep`` accepts, not in ``skip``: without scanning the postings
    of terms that cannot change the top k.

    MaxScore (Turtle and Flood, 1995) in the given term order: once the k-th best partial
    score (a lower bound, impacts being positive) exceeds the sum of the largest impacts of
    the terms still to come, only the tools whose partial score plus that sum reaches it can
    make the top k. The remaining terms then only update those survivors, still in term
    order, so scores are bit for bit a full scan's.
    """
    import heapq

    largest = [m for *_, m in terms if m is not None]  # every term has one: see rank()
    if weights is None:
        bounds = largest
    else:
        bounds = [w * m for w, m in zip(weights, largest, strict=True)]
    n = len(terms)
    rest = [0.0] * (n + 1)  # rest[j]: the most terms j... can add to a score
    later = [0] * (n + 1)
    for j in range(n - 1, -1, -1):
        rest[j] = rest[j + 1] + bounds[j]
        later[j] = later[j + 1] + len(terms[j][0])
    acc: dict[int, float] = {}
    for j, (docs, impacts, *_) in enumerate(terms):
        add_into(acc, docs, _weighted(impacts, weights, j))
        if j + 1 == n or later[j + 1] <= len(acc):
            continue  # checking would cost more than the scan it could save
        theta = _kth(acc, k, keep, skip)
        if theta is None or rest[j + 1] >= theta * _MARGIN:
            continue
        floor = theta * _MARGIN - rest[j + 1]
        survivors = {
            d: score
            for d, score in acc.items()
            if score >= floor and d not in skip and (keep is None or keep(d))
        }
        if len(survivors) * 3 > later[j + 1]:
            continue  # as many candidates as postings left: scanning is cheaper
        for j2 in range(j + 1, n):
            weight = None if weights is None else weights[j2]
            _update_survivors(survivors, terms[j2], weight)
            if len(survivors) > k:  # the k-th best partial score has grown: prune again
                theta = heapq.nlargest(k, survivors.values())[-1]
                floor = theta * _MARGIN - rest[j2 + 1]
                survivors = {d: score for d, score in survivors.items() if score >= floor}
        return survivors
    return acc


def _update_survivors(
    survivors: dict[int, float], postings: TermPostings, weight: float | None
) -> None:
    """Add a term's impact (times ``weight``) to each survivor it occurs in: by binary search
    per survivor, or, for a term with few postings, by one pass over them."""
    docs, impacts = postings[0], postings[1]
    if len(docs) <= 4 * len(survivors):
        for d, s in zip(docs, impacts, strict=True):
            if d in survivors:
                survivors[d] += s if weight is None else weight * s
        return
    n = len(docs)
    for d in survivors:
        i = bisect_left(docs, d)
        if i < n and docs[i] == d:
            survivors[d] += impacts[i] if weight is None else weight * impacts[i]


def _kth(acc: dict[int, float], k: int, keep: Keep | None, skip: Collection[int]) -> float | None:
    """The k-th largest score of ``acc`` among the tools that may be returned, if any."""
    import heapq

    scores: Collection[float]
    if keep is None:
        # A few skipped tools (``similar``'s own): set aside, not a filtered copy of every score.
        held = [(d, acc.pop(d)) for d in skip if d in acc]
        try:
            return heapq.nlargest(k, acc.values())[-1] if len(acc) >= k else None
        finally:
            acc.update(held)
    scores = [s for d, s in acc.items() if d not in skip and keep(d)]
    if len(scores) < k:
        return None
    return heapq.nlargest(k, scores)[-1]


# ---------------------------------------------------------------------- numpy


def _rank_vectorized(
    np: Any,
    source: Source,
    terms: Sequence[TermPostings],
    k: int,
    keep: Keep | None,
    min_score: float | None,
    skip: set[int],
    weights: Sequence[float] | None,
) -> Scored:
    """:func:`rank` with numpy, bit for bit the same.

    ``bincount`` adds each posting's impact into its tool's total in array order, the
    postings laid out in query order: :func:`accumulate`'s additions. Impacts are positive,
    so a nonzero total is a matching tool. The postings must be buffers of C ints and doubles
    (numpy reads them in place).
    """
    docs = [np.frombuffer(p[0], dtype=np.intc) for p in terms]
    parts = [np.frombuffer(p[1], dtype=np.float64) for p in terms]
    if weights is not None:  # the same IEEE products as weight * impact in Python
        parts = [part * w for part, w in zip(parts, weights, strict=True)]
    totals = np.bincount(np.concatenate(docs), weights=np.concatenate(parts))
    if skip:
        ids = [doc for doc in skip if doc < len(totals)]
        totals[ids] = 0.0
    if keep is not None:
        found = (totals > 0.0).nonzero()[0]
        kept = np.fromiter(map(keep, found.tolist()), dtype=bool, count=len(found))
        totals[found[~kept]] = 0.0
    found, scores = _at_or_above_kth(np, totals, k)
    if min_score is not None:
        above = scores >= min_score
        found, scores = found[above], scores[above]
    return top(dict(zip(found.tolist(), scores.tolist(), strict=True)), k, source.tie_key)


def _at_or_above_kth(np: Any, totals: Any, k: int) -> tuple[Any, Any]:
    """The positions and values of the nonzero ``totals`` at or above the k-th largest (all
    the nonzero ones when fewer than k are), ties included, in ascending position order.

    Partitioning every total would cost more than the rest of a query: the k-th largest of a
    strided sample is a lower bound of the k-th largest of all, and the exact one is taken
    among the few totals at or above it.
    """
    sample = totals[::_SAMPLE_STRIDE]
    floor = np.partition(sample, len(sample) - k)[len(sample) - k] if k < len(sample) else 0.0
    # nonzero() of a boolean mask, not of the floats: a tenth of the time.
    found = (totals >= floor if floor > 0.0 else totals > 0.0).nonzero()[0]
    values = totals[found]
    if len(found) > k:
        kth = np.partition(values, len(values) - k)[len(values) - k]
        above = values >= kth
        found, values = found[above], values[above]
    return found, values
