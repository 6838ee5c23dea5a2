"""Flat storage for the search index: typed columns, string tables and tool records.

A cached index is one file that toolfind maps into memory instead of reading it. Its arrays
travel out of band (pickle protocol 5, PEP 574): the pickle itself holds only the index's
shape, each column is a range of the file, and a query touches only the pages it reads. So
loading costs about as much at 100k tools as at 100, and the memory a loaded index adds is
what its queries have read, not every tool it holds.

* A column is an :class:`array.array` while an index is built and a :class:`memoryview` cast
  to the same type code once loaded. Both are read the same way: index, slice, iterate,
  :func:`bisect.bisect_left`.
* :class:`StringTable` is a column of strings: their UTF-8 bytes end to end, plus offsets.
* :class:`KeyedIds` maps strings (sorted) to ascending ids, for names and tags.
* :class:`ToolTable` holds the tools, each one marshalled on its own and decoded on first use.

Everything here pickles through classes of this module and builtins only, so the cache's
restricted unpickler can allow exactly this module.
"""

from __future__ import annotations

import gc
import marshal
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, chain
from zlib import crc32

from toolfind.models import Source, Tool
from toolfind.store.segment import find_string

# typing costs a warm command a good part of its start-up: only the type checker reads it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, overload


__all__ = ["KeyedIds", "Packed", "StringTable", "ToolTable", "column", "pack", "unpack"]


def column(code: str, values: Iterable[Any] = ()) -> array[Any]:
    """A new, writable column of type ``code`` (an :mod:`array` type code)."""
    return array(code, values)


def _view(data: Any, code: str) -> Any:
    """``data`` (any buffer) as a flat memoryview of type ``code``."""
    view = memoryview(data)
    if view.format == code:
        return view
    if view.format != "B":
        view = view.cast("B")
    return view.cast(code)  # type: ignore[call-overload]


class Packed:
    """A column on its way through pickle: its type code and its bytes.

    With protocol 5 the bytes go out of band (a :class:`pickle.PickleBuffer`, which the cache
    writes after the pickle and maps back in); older protocols copy them in line.
    """

    __slots__ = ("code", "data")

    def __init__(self, code: str, data: Any) -> None:
        self.code = code
        self.data = data

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        if int(protocol) >= 5:
            from pickle import PickleBuffer  # only while pickling, so it is loaded

            return (Packed, (self.code, PickleBuffer(self.data)))
        return (Packed, (self.code, _view(self.data, self.code).tobytes()))

    def view(self) -> Any:
        return _view(self.data, self.code)


def pack(col: Any) -> Packed:
    """Wrap a column (an array, a memoryview or bytes) for pickling.

    The column itself travels (no new view of it), so the cache can tell which pickle buffer
    holds which column (``PickleBuffer.raw().obj`` is the column).
    """
    if isinstance(col, array):
        return Packed(col.typecode, col)
    if isinstance(col, memoryview):
        return Packed(col.format, col)
    return Packed(memoryview(col).format, col)


def _ends(chunks: Sequence[Any]) -> array[int]:
    """Offsets of chunks laid end to end: 0, then where each one ends."""
    return column("Q", accumulate(map(len, chunks), initial=0))


def unpack(value: Any) -> Any:
    """The column a :class:`Packed` carried (a memoryview); anything else unchanged."""
    return value.view() if isinstance(value, Packed) else value


class StringTable(Sequence[str]):
    """Strings stored as one UTF-8 blob and ``len + 1`` offsets; ``table[i]`` decodes one.

    :meth:`find` looks a string up through a hash table (CRC-32 of its UTF-8 bytes into
    ``len`` buckets, stored as two more columns): a couple of decodes, not the ~17 a binary
    search over 100k strings would take.
    """

    __slots__ = ("_blob", "_buckets", "_offsets", "_slots")

    def __init__(self, blob: Any, offsets: Any, buckets: Any, slots: Any) -> None:
        self._blob = unpack(blob)
        self._offsets = unpack(offsets)
        self._buckets = unpack(buckets)
        self._slots = unpack(slots)

    @classmethod
    def of(cls, strings: Iterable[str]) -> StringTable:
        encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
        offsets = _ends(encoded)
        n_buckets = max(1, len(encoded))
        chains: list[list[int]] = [[] for _ in range(n_buckets)]
        for i, data in enumerate(encoded):
            chains[crc32(data) % n_buckets].append(i)
        slots = column("i", chain.from_iterable(chains))
        return cls(b"".join(encoded), offsets, _ends(chains), slots)

    def __len__(self) -> int:
        return len(self._offsets) - 1

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, i: int) -> str: ...
        @overload
        def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        offsets = self._offsets
        return str(self._blob[offsets[i] : offsets[i + 1]], "utf-8", "surrogatepass")

    def find(self, text: str) -> int | None:
        """Position of ``text`` in the table, or None (:func:`segment.find_string`)."""
        return find_string(text, self._blob, self._offsets, self._buckets, self._slots)

    def columns(self) -> tuple[Any, Any, Any, Any]:
        """Its columns: the UTF-8 blob, the offsets (``Q``), the hash buckets (``Q``: where each
        bucket's slots start) and the slots (``i``: string positions). The index file's warm
        reader (:mod:`toolfind.store.segment`) looks strings up in them from the file."""
        return (self._blob, self._offsets, self._buckets, self._slots)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (StringTable, tuple(pack(c) for c in self.columns()))


class KeyedIds(Mapping[str, Sequence[int]]):
    """Sorted strings, each with its ascending ids: ``keyed.get(key, ())``."""

    __slots__ = ("_ids", "_keys", "_offsets")

    def __init__(self, keys: Any, offsets: Any, ids: Any) -> None:
        self._keys: StringTable = keys
        self._offsets = unpack(offsets)
        self._ids = unpack(ids)

    @classmethod
    def of(cls, mapping: Mapping[str, Iterable[int]]) -> KeyedIds:
        keys = sorted(mapping)
        groups = [sorted(set(mapping[key])) for key in keys]
        return cls(StringTable.of(keys), _ends(groups), column("i", chain.from_iterable(groups)))

    def __getitem__(self, key: str) -> Sequence[int]:
        i = self._keys.find(key)
        if i is None:
            raise KeyError(key)
        ids: Sequence[int] = self._ids[self._offsets[i] : self._offsets[i + 1]]
        return ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def pairs(self) -> Iterator[tuple[str, Sequence[int]]]:
        """Every (key, ids), in key order, without a lookup per key."""
        offsets, ids = self._offsets, self._ids
        for i, key in enumerate(self._keys):
            yield key, ids[offsets[i] : offsets[i + 1]]

    def columns(self) -> tuple[StringTable, Any, Any]:
        """The keys, and per key where its ids start in the ids column (``Q``), and the ids."""
        return (self._keys, self._offsets, self._ids)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (KeyedIds, (self._keys, pack(self._offsets), pack(self._ids)))


def _record(tool: Tool) -> tuple[Any, ...]:
    source = tool.source
    return (
        tool.name,
        tool.description,
        tool.parameters,
        tool.namespace,
        tool.tags,
        tool.search_hint,
        tool.defer,
        tool.enabled,
        tool.annotations,
        tool.aliases,
        tool.title,
        tool.output_schema,
        None if source is None else (source.file, source.pointer, source.line),
        tool.original,
    )


class _ThawedTool:
    """``Tool``'s slots without its frozen ``__setattr__``: :func:`_tool` fills a tool in as
    one of these, then makes it a ``Tool`` (same slots, so the object may change class)."""

    __slots__ = vars(Tool)["__slots__"]


class _ThawedSource:
    """``Source``'s slots, as :class:`_ThawedTool` has ``Tool``'s."""

    __slots__ = vars(Source)["__slots__"]


def _tool(record: tuple[Any, ...]) -> Tool:
    """The tool :func:`_record` wrote: its fields in ``Tool``'s order, the source a tuple.

    Without ``Tool.__init__``, which sets each field through ``object.__setattr__`` (frozen):
    a quarter of the time (measured: 0.2 us against 0.9 us), and ``list`` decodes every tool
    of the index.
    """
    tool: Any = object.__new__(_ThawedTool)
    (
        tool.name,
        tool.description,
        tool.parameters,
        tool.namespace,
        tool.tags,
        tool.search_hint,
        tool.defer,
        tool.enabled,
        tool.annotations,
        tool.aliases,
        tool.title,
        tool.output_schema,
        source,
        tool.original,
    ) = record
    if source is not None:
        made: Any = object.__new__(_ThawedSource)
        made.file, made.pointer, made.line = source
        made.__class__ = Source
        source = made
    tool.source = source
    tool.__class__ = Tool
    decoded: Tool = tool  # typed without cast(), a call
    return decoded


class ToolTable(Sequence[Tool]):
    """The tools of a loaded index, each decoded on first use and then kept.

    A search prints ten tools; decoding all 100k to print ten would cost more than the search.
    Kept tools keep their identity, so ``id(index.tools[i])`` is stable.
    """

    __slots__ = ("_blob", "_decoded", "_offsets")

    def __init__(self, blob: Any, offsets: Any) -> None:
        self._blob = unpack(blob)
        self._offsets = unpack(offsets)
        self._decoded: list[Tool | None] = [None] * (len(self._offsets) - 1)

    @classmethod
    def of(cls, tools: Iterable[Tool]) -> ToolTable:
        """Marshal every tool. Raises ValueError if a schema holds a non-JSON value."""
        chunks = [marshal.dumps(_record(tool)) for tool in tools]
        return cls(b"".join(chunks), _ends(chunks))

    def __len__(self) -> int:
        return len(self._decoded)

    if TYPE_CHECKING:

        @overload
        def __getitem__(self, i: int) -> Tool: ...
        @overload
        def __getitem__(self, i: slice) -> tuple[Tool, ...]: ...

    def __getitem__(self, i: int | slice) -> Tool | tuple[Tool, ...]:
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        tool = self._decoded[i]
        if tool is None:
            if i < 0:
                i += len(self._decoded)
            offsets = self._offsets
            tool = self._decoded[i] = _tool(marshal.loads(self._blob[offsets[i] : offsets[i + 1]]))
        return tool

    def __iter__(self) -> Iterator[Tool]:
        for i in range(len(self._decoded)):
            yield self[i]

    def decode_all(self, *, freeze: bool = False) -> None:
        """Decode every tool not decoded yet, with the cyclic garbage collector paused.

        Decoding keeps every dict and list it makes, and a collector left on walks them again
        and again as they pile up (measured: 10k tools decode in 0.16 s, 0.09 s paused). With
        ``freeze`` everything alive then moves to the collector's permanent generation
        (``gc.freeze``), so that later collections skip the tools too (printing 10k of them:
        0.13 s -> 0.08 s): for a process that ends once it has used them, as a command does,
        never for one that lives on, such as a server (cyclic garbage alive at that moment
        would never be collected).
        """
        with collector_paused(freeze=freeze):
            for i, tool in enumerate(self._decoded):
                if tool is None:
                    self[i]

    def columns(self) -> tuple[Any, Any]:
        """The records end to end, and where each one starts (``Q``)."""
        return (self._blob, self._offsets)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (ToolTable, (pack(self._blob), pack(self._offsets)))


class collector_paused:  # noqa: N801 - used as a function: ``with collector_paused(...):``
    """Run a build, or the decoding of every tool, with the cyclic garbage collector off.

    Both allocate millions of small objects (dicts, lists, tuples) and free almost none, and
    they form no cycles; left on, the collector keeps re-walking all of them as they pile up
    (measured: a tenth of a 10k build; 10k tools decode in 0.16 s, 0.09 s paused). It is
    turned back on, as it was, whatever happens.

    With ``freeze``, every object alive is first moved to the collector's permanent
    generation (``gc.freeze``): else the first allocation after ``gc.enable`` walks all the
    millions allocated meanwhile, still in the youngest generation (measured: 0.26 s after a
    10k build), and later collections walk them again. Frozen objects are still freed by
    reference counting; only a reference cycle that was garbage at this moment stays
    uncollected, and an index holds none.
    """

    def __init__(self, *, freeze: bool) -> None:
        self.freeze = freeze

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self.was_enabled:
            if self.freeze:
                gc.freeze()
            gc.enable()


def decode_for_printing(tools: Sequence[Tool]) -> None:
    """Decode every tool of a loaded index for a command that prints them and ends (see
    :meth:`ToolTable.decode_all`); a freshly built index's tools are decoded already."""
    if isinstance(tools, ToolTable):
        tools.decode_all(freeze=True)
