"""The learned signal: the words of past requests that led to a tool count for that tool.

Evidence is a request (its analysed terms) and the tool the host then called, when, and in
which session. Each term of a request earns its tool a *credit*: the record's weight, halved
every :data:`HALF_LIFE_DAYS`, shared among the request's words as if it had
:data:`CREDIT_WORDS` of them (a long, several-step request says less about each tool it led
to than a short one). A term counts for a tool once its credits there reach
:data:`MIN_EVIDENCE` (two recent requests): one use teaches nothing, and old evidence fades
out entirely. One session's records count at most :data:`SESSION_TOOL_CAP` times for a tool
and :data:`SESSION_CAP` times in all, so that an agent in a loop cannot dominate.

What a term adds to a tool is a BM25 weight over the catalog's tools, as a field of its
own would (Robertson and Zaragoza, 2009: ``idf(t) * (k1 + 1) * c / (k1 + c)`` with ``c`` the
term's credit and no length normalisation, the credits being shares already); a request
adds :data:`WEIGHT` times the sum over its distinct terms to the tool's score. Saturation
bounds what any one word adds, the idf keeps words that led to many tools (``find``,
``help``) from counting, and a word learned for one tool adds nothing to a request that does
not hold it: a few uses cannot bury a better lexical match for a different request.

:func:`impacts` compiles evidence into per-term postings; :func:`boosts` reads them for a
query. Pure: the store reads and writes the evidence, the search mixes the boosts in
(``toolfind.core.search``).
"""

from __future__ import annotations

import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Protocol

    from toolfind.models import TermContribution

    class Postings(Protocol):
        """What :func:`boosts` asks of compiled evidence."""

        def postings(self, term: str) -> tuple[Sequence[int], Sequence[float]] | None: ...


#: The maths' version: part of the key of every compiled form (change it with the maths).
VERSION = "toolfind-learning/1"
#: A record's weight halves every this many days.
HALF_LIFE_DAYS = 90.0
#: A request's words share the credit of this many words.
CREDIT_WORDS = 3.0
#: A term counts for a tool once its credits there (in records, before sharing) reach this.
MIN_EVIDENCE = 2.0
#: The saturation of a term's credit (BM25's k1).
K1 = 1.2
#: What the learned score weighs beside BM25F's: the largest weight at which the requests of
#: tools nobody used lose nothing (seal-tools: -0.8 MRR@10 at 0.2, -1.0 at 0.25, -2.3 at
#: 0.4), one value for every set (benchmarks/learning.py).
WEIGHT = 0.2
#: A session's records count at most this many times for one tool, and this many in all.
SESSION_TOOL_CAP = 4
SESSION_CAP = 64
_DAY = 86_400.0


def decay(age_seconds: float) -> float:
    """A record's weight at ``age_seconds``: 1 when new, halved every :data:`HALF_LIFE_DAYS`
    (a record from the future counts as new)."""
    return float(0.5 ** (max(0.0, age_seconds) / (HALF_LIFE_DAYS * _DAY)))


#: MIN_EVIDENCE as decayed weights: records of the last day count in full.
_ENOUGH = MIN_EVIDENCE * decay(_DAY)


def capped(sessions: Iterable[tuple[str, int]]) -> list[bool]:
    """Which records count, newest first, given each one's (session, tool): a session's first
    :data:`SESSION_TOOL_CAP` for a tool and :data:`SESSION_CAP` in all. The session ``""``
    (records a user imported) is not capped."""
    per_tool: dict[tuple[str, int], int] = {}
    per_session: dict[str, int] = {}
    kept = []
    for session, doc in sessions:
        if not session:
            kept.append(True)
            continue
        n = per_tool.get((session, doc), 0)
        total = per_session.get(session, 0)
        ok = n < SESSION_TOOL_CAP and total < SESSION_CAP
        if ok:
            per_tool[(session, doc)] = n + 1
            per_session[session] = total + 1
        kept.append(ok)
    return kept


def impacts(
    evidence: Iterable[tuple[Sequence[str], int, float]], tools: int
) -> dict[str, tuple[list[int], list[float]]]:
    """Per term, the tools it counts for (ascending ids) and what it adds to each (before
    :data:`WEIGHT`), from ``evidence``: each record's distinct terms, its tool and its weight
    (:func:`decay`, 0 for a record that does not count). ``tools`` is how many tools the
    catalog holds: a term's idf says how few of them requests holding it led to."""
    credit: dict[str, dict[int, float]] = {}
    seen: dict[str, dict[int, float]] = {}
    for terms, doc, weight in evidence:
        if weight <= 0.0 or not terms:
            continue
        share = weight * min(1.0, CREDIT_WORDS / len(terms))
        for term in terms:
            credit.setdefault(term, {})[doc] = credit.get(term, {}).get(doc, 0.0) + share
            seen.setdefault(term, {})[doc] = seen.get(term, {}).get(doc, 0.0) + weight
    kept: dict[str, dict[int, float]] = {}
    for term, docs in credit.items():
        counted = seen[term]
        found = {d: c for d, c in docs.items() if counted[d] >= _ENOUGH}
        if found:
            kept[term] = found
    n = max(tools, len({d for docs in kept.values() for d in docs}))
    out: dict[str, tuple[list[int], list[float]]] = {}
    for term, docs in sorted(kept.items()):
        idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
        ids = sorted(docs)
        out[term] = (ids, [idf * (K1 + 1.0) * docs[d] / (K1 + docs[d]) for d in ids])
    return out


def boosts(source: Postings, terms: Iterable[str]) -> tuple[dict[int, float], list[str]]:
    """What the evidence adds to each tool's score for a request of ``terms`` (its distinct
    analysed terms): :data:`WEIGHT` times the sum of the terms' impacts, tools without any
    left out; and the terms that count for some tool."""
    out: dict[int, float] = {}
    known = []
    for term in terms:
        found = source.postings(term)
        if found is None:
            continue
        known.append(term)
        for doc, impact in zip(found[0], found[1], strict=True):
            out[doc] = out.get(doc, 0.0) + WEIGHT * impact
    return out, known


def explained(added: Mapping[int, float], doc: int) -> tuple[TermContribution, ...]:
    """``--explain``'s row of what the signal added to tool ``doc``'s score (``added``:
    ``search.Found.learned``), if anything: field ``learned``, term ``(use)``, ``weight``
    the signal's :data:`WEIGHT`."""
    if doc not in added:
        return ()
    from toolfind.models import TermContribution

    return (TermContribution("(use)", "learned", 1.0, 0.0, 1.0, WEIGHT, added[doc]),)
