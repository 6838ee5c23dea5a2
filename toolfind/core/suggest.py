"""The "did you mean" of a tool name that names no tool: a few candidate tools, their
spellings ranked by difflib.

Ranking every spelling of a large catalog costs seconds (100k tools, 200k spellings), so the
candidates come from two places that hold the likely ones, each read in time that grows with
the log of the catalog's size:

* the tools whose name keys (``analysis.name_key``, kept sorted by the index) sort next to
  the wanted name's, and those whose keys sort next to it by their ends (read backwards): a
  typo leaves the name's start or its end, and the names sharing the longest start or end
  are the neighbours of the wanted one in either order;
* the search's best hits for the name's words (:func:`toolfind.core.search.run`, typo
  correction included): words in another order, a typo in a short name.

The search is asked only when no neighbour is as close as a one-letter typo (:data:`SURE`).
A catalog of at most :data:`ALL` tools has every tool as a candidate. Either way the spellings
are ranked as they always were (:func:`close`, difflib's ratio): a candidate set holding the
best spellings gives the answer a scan of them all would.
"""

from __future__ import annotations

from toolfind.core.analysis import QUALIFIERS, name_key
from toolfind.models import qualified_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Protocol

    from toolfind.core.search import Source

    class Names(Source, Protocol):
        """What :func:`suggestions` asks of an index, besides a search."""

        @property
        def tool_count(self) -> int: ...  # disabled tools too
        def key_count(self) -> int: ...  # distinct name keys
        def key_at(self, i: int) -> str: ...  # the i-th name key, in sorted order
        def ids_between(self, i: int, j: int) -> Sequence[int]: ...  # those of keys i to j - 1
        def key_end_at(self, i: int) -> int: ...  # the key i-th by its end: its position
        def ids_with_key(self, key: str) -> Sequence[int]: ...
        def spellings(self, doc: int) -> tuple[str, str, Sequence[str]]: ...  # name, ns, aliases


#: A catalog of at most this many tools: every tool is a candidate.
ALL = 64
#: Name keys taken on each side of the wanted name's place in the sorted keys.
WINDOW = 24
#: The search's best hits taken as candidates.
HITS = 16
#: A spelling this close (difflib's ratio) among the neighbours is what a one-letter typo of
#: a name gives: the search for the name's words is then not asked (it finds words in another
#: order, or two typos, whose spellings are less close).
SURE = 0.9


def suggestions(source: Names, wanted: str) -> list[str]:
    """Up to 3 names close to ``wanted`` (a name no tool has), best first (:func:`close`):
    tool names, ``namespace/name`` forms, and for a close alias the tool's own name
    (qualified when other tools share it)."""
    if source.tool_count <= ALL:
        return close(wanted, _pool(source, set(range(source.tool_count))))
    docs = _neighbours(source, wanted)
    pool = _pool(source, docs)
    found = _closest(wanted, pool)
    if found and _ratio(wanted, found[0]) >= SURE:
        return _offered(pool, found)
    from toolfind.core.search import run

    hits = run(source, wanted, HITS)
    docs.update(doc for doc, _ in (*hits.exact, *hits.ranked))
    return close(wanted, _pool(source, docs))


def by_ends(keys: Sequence[str]) -> list[int]:
    """The positions of the sorted name ``keys`` in the order of their ends (their reversed
    spellings): what an index keeps for ``Names.key_end_at``."""
    return sorted(range(len(keys)), key=lambda i: keys[i][::-1])


def _pool(source: Names, docs: set[int]) -> dict[str, str]:
    """The spellings of ``docs`` (case folded) and the name each offers, as when every tool
    is ranked: every tool sharing a name key with one of them is in too, so that a spelling
    several tools have offers the first of them."""
    for doc in list(docs):
        name, _, aliases = source.spellings(doc)
        for spelling in (name, *aliases):
            docs.update(source.ids_with_key(name_key(spelling)))
    pool: dict[str, str] = {}
    for doc in sorted(docs):
        name, namespace, aliases = source.spellings(doc)
        qualified = qualified_name(namespace, name)
        pool.setdefault(name.casefold(), name)
        pool.setdefault(qualified.casefold(), qualified)
        if aliases:
            shared = any(
                other != doc and source.spellings(other)[0] == name
                for other in source.ids_with_key(name_key(name))
            )
            for alias in aliases:
                pool.setdefault(alias.casefold(), qualified if shared else name)
    return pool


def _neighbours(source: Names, wanted: str) -> set[int]:
    """The tools whose name keys sort next to ``wanted``'s, from the start and from the end
    (for a qualified name, its tool's part's too, as ``show`` reads it)."""
    keys = {name_key(wanted)}
    for qualifier in QUALIFIERS:
        if qualifier in wanted:
            keys.add(name_key(wanted.partition(qualifier)[2]))
            keys.add(name_key(wanted.rpartition(qualifier)[2]))
    docs: set[int] = set()
    count = source.key_count()

    def end(i: int) -> str:
        return source.key_at(source.key_end_at(i))[::-1]

    for key in keys:
        at = _bisect(source.key_at, key, count)
        docs.update(source.ids_between(max(0, at - WINDOW), min(count, at + WINDOW)))
        at = _bisect(end, key[::-1], count)
        for i in range(max(0, at - WINDOW), min(count, at + WINDOW)):
            position = source.key_end_at(i)
            docs.update(source.ids_between(position, position + 1))
    return docs


def _bisect(key_at: Callable[[int], str], key: str, count: int) -> int:
    """Where ``key`` sorts among ``count`` sorted keys (the first position not below it)."""
    lo, hi = 0, count
    while lo < hi:
        mid = (lo + hi) // 2
        if key_at(mid) < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


def close(wanted: str, pool: Mapping[str, str]) -> list[str]:
    """The "did you mean" of a name: up to 3 values of ``pool`` (spellings, case folded, to
    the name to offer) whose spelling is close to ``wanted`` (difflib's ratio, 0.6 or more),
    closest first, each offered once."""
    return _offered(pool, _closest(wanted, pool))


def _closest(wanted: str, pool: Mapping[str, str]) -> list[str]:
    """The 6 spellings of ``pool`` closest to ``wanted`` (difflib's ratio, 0.6 or more)."""
    import difflib  # only on the error path

    return difflib.get_close_matches(wanted.casefold(), list(pool), n=6, cutoff=0.6)


def _offered(pool: Mapping[str, str], spellings: list[str]) -> list[str]:
    return list(dict.fromkeys(pool[spelling] for spelling in spellings))[:3]


def _ratio(wanted: str, spelling: str) -> float:
    """difflib's ratio of ``spelling`` to ``wanted``, as ``get_close_matches`` computes it."""
    import difflib

    return difflib.SequenceMatcher(None, spelling, wanted.casefold()).ratio()
