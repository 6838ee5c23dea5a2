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


def suggestions(source: Names, wanted: str) -> list[str]:
    """Up to 3 names close to ``wanted`` (a name no tool has), best first (:func:`close`):
    tool names, ``namespace/name`` forms, and for a close alias the tool's own name
    (qualified when other tools share it)."""
    pool: dict[str, str] = {}
    for doc in sorted(_candidates(source, wanted)):
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
    return close(wanted, pool)


def _candidates(source: Names, wanted: str) -> set[int]:
    """The tools whose spellings :func:`suggestions` ranks. Every tool sharing a name key
    with one of them is one too, so a spelling several tools have is offered as the first of
    them, as when every tool is ranked."""
    if source.tool_count <= ALL:
        return set(range(source.tool_count))
    keys = {name_key(wanted)}
    for qualifier in QUALIFIERS:  # the tool's part of a qualified name, as show reads it
        if qualifier in wanted:
            keys.add(name_key(wanted.partition(qualifier)[2]))
            keys.add(name_key(wanted.rpartition(qualifier)[2]))
    docs: set[int] = set()
    count = source.key_count()
    for key in keys:
        at = _bisect(source.key_at, key, count)
        docs.update(source.ids_between(max(0, at - WINDOW), min(count, at + WINDOW)))

        def end(i: int) -> str:
            return source.key_at(source.key_end_at(i))[::-1]

        at = _bisect(end, key[::-1], count)
        for i in range(max(0, at - WINDOW), min(count, at + WINDOW)):
            position = source.key_end_at(i)
            docs.update(source.ids_between(position, position + 1))
    from toolfind.core.search import run

    found = run(source, wanted, HITS)
    docs.update(doc for doc, _ in (*found.exact, *found.ranked))
    for doc in list(docs):
        name, _, aliases = source.spellings(doc)
        for spelling in (name, *aliases):
            docs.update(source.ids_with_key(name_key(spelling)))
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
    import difflib  # only on the error path

    found = difflib.get_close_matches(wanted.casefold(), list(pool), n=6, cutoff=0.6)
    return list(dict.fromkeys(pool[c] for c in found))[:3]
