"""The learned signal of one index: the usage store read against the index's tools.

:func:`compile_evidence` turns the store's records into :mod:`toolfind.core.learning`'s
postings for the tools of one index: each record's tool is found by namespace and name (a
tool whose namespace changed is found by its name alone when exactly one tool has that name
and its meaning); a record whose tool's description changed substantially since
(``usage.same_meaning``) is not evidence; the session caps and the decay apply.

The result is kept in the cache directory as ``toolfind-<key>.learned`` (:class:`Compiled`:
a marshalled tuple of a few byte strings, a hashed term table as the index file's), keyed by
the store's stamp, the day (the decay moves) and the maths' version: a warm search reads one
small file and looks up the request's terms, never the store's JSON lines.
:class:`Learned` is what an in-memory index holds: it compiles again when the store changes.
"""

from __future__ import annotations

import marshal
import os
from array import array

from toolfind.store.segment import find_string

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from toolfind.store.index import SearchIndex
    from toolfind.store.segment import Segment
    from toolfind.store.usage import Store, Usage

    #: A tool of the index as compiling needs it: (namespace, name, description, enabled).
    ToolFacts = tuple[str, str, str, bool]

#: The compiled file's suffix, beside the index file ``toolfind-<key>.pickle``.
SUFFIX = ".learned"
#: The compiled file's layout; part of its key.
FORMAT = 1
#: A compiled file larger than this is not read (a store at its bound compiles to far less).
MAX_COMPILED = 16 * 1024 * 1024


class Compiled:
    """Compiled evidence (a ``core.learning.Postings``): a hashed table of terms
    (``columns.StringTable``'s columns) and, per term, its tools and impacts."""

    __slots__ = ("_blob", "_buckets", "_docs", "_impacts", "_offsets", "_slots", "_starts")

    def __init__(self, parts: Sequence[Any]) -> None:
        blob, offsets, buckets, slots, starts, docs, impacts = parts
        self._blob = memoryview(blob)
        self._offsets = memoryview(offsets).cast("Q")
        self._buckets = memoryview(buckets).cast("Q")
        self._slots = memoryview(slots).cast("i")
        self._starts = memoryview(starts).cast("Q")
        self._docs = memoryview(docs).cast("i")
        self._impacts = memoryview(impacts).cast("d")
        if not (
            len(self._buckets) >= 2
            and len(self._offsets) == len(self._starts)
            and self._starts[-1] == len(self._docs) == len(self._impacts)
        ):
            raise ValueError("compiled evidence is malformed")

    @classmethod
    def of(cls, table: dict[str, tuple[list[int], list[float]]]) -> Compiled:
        """The compiled form of ``core.learning.impacts``' table."""
        from toolfind.store.columns import StringTable

        terms = list(table)
        blob, offsets, buckets, slots = StringTable.of(terms).columns()
        starts = array("Q", [0])
        docs, impacts = array("i"), array("d")
        for term in terms:
            ids, values = table[term]
            docs.extend(ids)
            impacts.extend(values)
            starts.append(len(docs))
        parts = (blob, offsets, buckets, slots, starts, docs, impacts)
        return cls([bytes(memoryview(p).cast("B")) for p in parts])

    def parts(self) -> tuple[bytes, ...]:
        return tuple(
            bytes(view.cast("B"))
            for view in (
                self._blob,
                self._offsets,
                self._buckets,
                self._slots,
                self._starts,
                self._docs,
                self._impacts,
            )
        )

    def current(self) -> Compiled:
        """The evidence now (:class:`Learned`'s question; compiled evidence stays as it is)."""
        return self

    def __len__(self) -> int:
        """How many terms count for some tool."""
        return len(self._starts) - 1

    def postings(self, term: str) -> tuple[Sequence[int], Sequence[float]] | None:
        """The tools ``term`` counts for and what it adds to each; None for none."""
        t = find_string(term, self._blob, self._offsets, self._buckets, self._slots)
        if t is None:
            return None
        a, b = self._starts[t], self._starts[t + 1]
        return self._docs[a:b], self._impacts[a:b]


def compile_evidence(
    records: Sequence[Usage],
    named: Callable[[str], Sequence[int]],
    facts: Callable[[int], ToolFacts],
    tools: int,
    now: float,
    memo: Memo | None = None,
) -> Compiled:
    """The evidence of ``records`` (oldest first) for an index of ``tools`` tools whose tools
    named ``name`` (by ``analysis.name_key``) are ``named(name)`` and whose tool ``doc`` is
    ``facts(doc)`` (see the module docstring). ``memo`` keeps the analysed requests and the
    tools' digests for the next compile of the same index (most requests are the same)."""
    from toolfind.core import learning
    from toolfind.core.analysis import query_terms
    from toolfind.store.usage import meaning, same_meaning

    memo = Memo() if memo is None else memo
    meanings, terms = memo.meanings, memo.terms
    if len(terms) > 4 * len(records) + 1000:  # requests long gone from the store
        terms.clear()
    found: dict[tuple[str, str, str], int | None] = {}

    def tool_of(record: Usage) -> int | None:
        key = (record.namespace, record.tool, record.meaning)
        if key not in found:
            from toolfind.core.analysis import name_key

            ids = [d for d in named(name_key(record.tool)) if facts(d)[1] == record.tool]
            same_ns = [d for d in ids if facts(d)[0] == record.namespace]
            if not same_ns:  # its namespace renamed: by its name, if one tool means the same
                same_ns = [d for d in ids if same_meaning(record.meaning, meaning_of(d))]
            doc = same_ns[0] if len(same_ns) == 1 else None
            if doc is not None and not (
                facts(doc)[3] and same_meaning(record.meaning, meaning_of(doc))
            ):
                doc = None
            found[key] = doc
        return found[key]

    def meaning_of(doc: int) -> str:
        if doc not in meanings:
            meanings[doc] = meaning(facts(doc)[2])
        return meanings[doc]

    newest = [(r, tool_of(r)) for r in reversed(records)]
    newest = [(r, d) for r, d in newest if d is not None]
    counts = learning.capped((r.session, d) for r, d in newest)  # type: ignore[misc]
    evidence = []
    for (record, doc), counted in zip(newest, counts, strict=True):
        if not counted:
            continue
        request = terms.get(record.request)
        if request is None:
            request = terms[record.request] = [t for t, _ in query_terms(record.request)]
        evidence.append((request, doc, learning.decay(now - record.at)))
    return Compiled.of(learning.impacts(evidence, tools))  # type: ignore[arg-type]


def file_key(stamp: Any, now: float) -> tuple[Any, ...]:
    """What a compiled file must have been made from to answer now."""
    from toolfind.core.learning import VERSION

    return (FORMAT, VERSION, tuple(stamp), int(now // 86_400))


def compiled_path(cache_dir: str, key: str) -> str:
    from toolfind.store.segment import INDEX_PREFIX

    return os.path.join(cache_dir, INDEX_PREFIX + key + SUFFIX)


def load(path: str, wanted: tuple[Any, ...]) -> Compiled | None:
    """The compiled evidence in ``path`` if it was made for ``wanted`` (:func:`file_key`);
    None when there is none, it is another's or it is damaged."""
    from toolfind.userfiles import FileProblem, open_own

    try:
        fh, st = open_own(path)
    except (OSError, FileProblem):
        return None
    with fh:
        if st.st_size > MAX_COMPILED:
            return None
        data = fh.read(MAX_COMPILED)
    try:
        found = marshal.loads(data)
        if not isinstance(found, tuple) or len(found) != 2 or found[0] != wanted:
            return None
        return Compiled(found[1])
    except (ValueError, EOFError, TypeError, IndexError):
        return None


def save(path: str, key: tuple[Any, ...], compiled: Compiled) -> None:
    """Keep ``compiled`` in ``path`` (atomically; a failure only costs the next run a compile)."""
    from toolfind.userfiles import replace_file

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        replace_file(path, [marshal.dumps((key, compiled.parts()))])
    except OSError:
        pass


class Memo:
    """What one compile of an index's evidence keeps for the next: each request's analysed
    terms, each tool's digest (``usage.meaning``)."""

    def __init__(self) -> None:
        self.terms: dict[str, list[str]] = {}
        self.meanings: dict[int, str] = {}


class Learned:
    """The learned signal of the in-memory ``index``: its evidence compiled from ``store``,
    again whenever the store's stamp (or the day) changes; ``key`` (the index's cache key,
    "" for none) names the compiled file kept in ``cache_dir``.

    A server (:meth:`in_background`) never compiles on the thread that searches: a compile
    of 10,000 records takes most of a second, and serve-mcp's event loop answers every
    client. Its searches use the evidence compiled last (none before the first compile
    ends) while a worker thread compiles the store as it is now."""

    def __init__(
        self, index: SearchIndex, store: Store, key: str = "", cache_dir: str | None = None
    ) -> None:
        self.index = index
        self.store = store
        self.key = key
        self.cache_dir = cache_dir
        self._made: tuple[tuple[Any, ...], Compiled | None] | None = None
        self._memo = Memo()
        self._background = False
        self._compiling: Any = None  # the worker thread, while it compiles

    def in_background(self) -> None:
        """Compile from now on in a worker thread (see the class docstring), starting now."""
        self._background = True
        self.current()

    def current(self) -> Compiled | None:
        """The evidence for ``index`` as the store holds it now; None when it holds none (or
        cannot be read: learning then stays off, as for a store another user could have
        written)."""
        import time

        stamp = self.store.stamp()
        if stamp is None:
            return None
        now = time.time()
        wanted = file_key(stamp, now)
        made = self._made
        if made is not None and made[0] == wanted:
            return made[1]
        if self._background:
            if self._compiling is None or not self._compiling.is_alive():
                import threading

                self._compiling = threading.Thread(
                    target=self._compile, args=(wanted, now), name="toolfind-learned", daemon=True
                )
                self._compiling.start()
            return None if made is None else made[1]
        return self._compile(wanted, now)

    def _compile(self, wanted: tuple[Any, ...], now: float) -> Compiled | None:
        index = self.index

        def facts(doc: int) -> ToolFacts:
            tool = index.tools[doc]
            return tool.namespace, tool.name, tool.description, tool.enabled

        compiled = evidence_for(
            self.store,
            self.key,
            self.cache_dir,
            index.ids_with_key,
            facts,
            len(index.tools),
            now,
            self._memo,
        )
        self._made = (wanted, compiled)
        return compiled


def evidence_for(
    store: Store,
    key: str,
    cache_dir: str | None,
    named: Callable[[str], Sequence[int]],
    facts: Callable[[int], ToolFacts],
    tools: int,
    now: float,
    memo: Memo | None = None,
) -> Compiled | None:
    """The compiled evidence of ``store`` for the index ``key``: read from the cache
    directory when it was made from the store as it is now, else compiled (and kept there);
    None when there is no evidence or the store cannot be used."""
    from toolfind.errors import UsageStoreError

    stamp = store.stamp()
    if stamp is None:
        return None
    wanted = file_key(stamp, now)
    path = compiled_path(cache_dir, key) if key and cache_dir else None
    if path is not None:
        found = load(path, wanted)
        if found is not None:
            return found if len(found) else None
    try:
        records = store.read()
    except UsageStoreError:
        return None
    compiled = compile_evidence(records, named, facts, tools, now, memo)
    if path is not None and store.stamp() == stamp:  # unchanged while read
        save(path, wanted, compiled)
    return compiled if len(compiled) else None


def attach(index: SearchIndex, key: str, want: bool) -> bool:
    """Rank ``index`` (cache key ``key``, "" for none) by what the usage store learned,
    unless ``want`` is False (``learn = false``); returns whether it does. Cheap: the store
    is read on the first search."""
    if want is False:
        index.learned = None
        return False
    from toolfind.store.manifest import default_cache_dir
    from toolfind.store.usage import Store

    index.learned = Learned(index, Store(), key, default_cache_dir(os.environ))
    return True


def for_segment(seg: Segment, root: str, key: str) -> Compiled | None:
    """The learned evidence for the index file ``seg`` (cache key ``key`` in ``root``): the
    warm path's, read from the compiled file when the store has not changed since."""
    import time

    from toolfind.store.usage import Store

    def facts(doc: int) -> ToolFacts:
        record = seg.record(doc)
        return record.namespace, record.name, record.description, bool(record.enabled)

    return evidence_for(Store(), key, root, seg.names_for, facts, seg.tool_count, time.time())
