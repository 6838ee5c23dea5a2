"""Flat storage for the search index: typed columns, string tables and tool records.

A cached index's arrays travel out of band (pickle protocol 5, PEP 574) and load as ranges of a
memory-mapped file, so loading costs about as much at 100k tools as at 100 and a query touches
only the pages it reads. A column is an :class:`array.array` while an index is built and a
:class:`memoryview` of the same type code once loaded: both index, slice, iterate and bisect
alike. Everything here pickles through this module's classes and builtins only, so the cache's
restricted unpickler can allow exactly this module.
"""

from __future__ import annotations

import gc
import marshal
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, chain, repeat
from operator import attrgetter
from zlib import crc32

from toolfind.models import Source, Tool
from toolfind.store.segment import find_string

# typing costs a warm command a good part of its start-up: only mypy reads this.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, overload


def _view(data: Any, code: str) -> Any:
    """``data`` (any buffer) as a flat memoryview of type ``code``."""
    view = memoryview(data)
    if view.format == code:
        return view
    if view.format != "B":
        view = view.cast("B")
    return view.cast(code)  # type: ignore[call-overload]


class Packed:
    """A column on its way through pickle: its type code and its bytes (out of band with
    protocol 5, in line before)."""

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
    """Wrap a column (an array, a memoryview or bytes) for pickling. The column itself travels,
    not a new view: the cache tells the buffers apart by ``PickleBuffer.raw().obj``."""
    return Packed(memoryview(col).format, col)


def _ends(chunks: Sequence[Any]) -> array[int]:
    """Offsets of chunks laid end to end: 0, then where each one ends."""
    return array("Q", accumulate(map(len, chunks), initial=0))


def unpack(value: Any) -> Any:
    """The column a :class:`Packed` carried (a memoryview); anything else unchanged."""
    return value.view() if isinstance(value, Packed) else value


class StringTable(Sequence[str]):
    """Strings stored as one UTF-8 blob and ``len + 1`` offsets; ``table[i]`` decodes one.
    :meth:`find` hashes (CRC-32 into ``len`` buckets, two more columns): a couple of
    comparisons where a binary search over 100k strings takes ~17 decodes."""

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
        slots = array("i", chain.from_iterable(chains))
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
        """The UTF-8 blob, the offsets (``Q``), the buckets (``Q``: where each bucket's slots
        start) and the slots (``i``: string positions)."""
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
        return cls(StringTable.of(keys), _ends(groups), array("i", chain.from_iterable(groups)))

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

    def key_at(self, i: int) -> str:
        """The ``i``-th key, in sorted order."""
        return self._keys[i]

    def ids_between(self, i: int, j: int) -> Sequence[int]:
        """The ids of the ``i``-th to the ``j - 1``-th keys."""
        ids: Sequence[int] = self._ids[self._offsets[i] : self._offsets[j]]
        return ids

    def columns(self) -> tuple[StringTable, Any, Any]:
        """The keys, and per key where its ids start in the ids column (``Q``), and the ids."""
        return (self._keys, self._offsets, self._ids)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (KeyedIds, (self._keys, pack(self._offsets), pack(self._ids)))


#: A tool record: the marshalled tuple of a tool's fields, in ``Tool``'s order, the source as
#: a tuple in ``Source``'s (the index file's directory names them for the warm path's reader).
FIELDS: tuple[str, ...] = Tool.__match_args__
_SOURCE = FIELDS.index("source")
_FIELDS = attrgetter(*FIELDS)


_SOURCE_NAMES = Source.__match_args__
_SOURCE_FIELDS = attrgetter(*_SOURCE_NAMES)


def _record(tool: Tool) -> tuple[Any, ...]:
    record = list(_FIELDS(tool))
    source = tool.source
    record[_SOURCE] = None if source is None else _SOURCE_FIELDS(source)
    return tuple(record)


class _ThawedTool:
    """``Tool``'s slots without its frozen ``__setattr__`` (same slots: it may become one)."""

    __slots__ = vars(Tool)["__slots__"]


class _ThawedSource:
    """``Source``'s slots, as :class:`_ThawedTool` has ``Tool``'s."""

    __slots__ = vars(Source)["__slots__"]


def _by_fields(record: tuple[Any, ...]) -> Tool:
    """The tool :func:`_record` wrote, filled in field by field (``setattr`` mapped over
    :data:`FIELDS`, in C) as a thawed tool that then becomes a ``Tool``: nothing to compile,
    for a command that decodes a few tools; about twice the cost per tool of
    :func:`_decoder`'s function, which takes over once many are decoded."""
    tool: Any = object.__new__(_ThawedTool)
    deque(map(setattr, repeat(tool), FIELDS, record), 0)
    source = record[_SOURCE]
    if source is not None:
        made: Any = object.__new__(_ThawedSource)
        deque(map(setattr, repeat(made), _SOURCE_NAMES, source), 0)
        made.__class__ = Source
        tool.source = made
    tool.__class__ = Tool
    decoded: Tool = tool  # typed without cast(), a call
    return decoded


#: Tools decoded field by field before the compiled unpacking takes over: its compile (a
#: process's first costs ~1 ms) is worth about 2,000 tools' difference.
_COMPILE_AFTER = 2048


#: The function :func:`_decoder` made, once made.
_decode: Callable[[tuple[Any, ...]], Tool] | None = None


def _decoder() -> Callable[[tuple[Any, ...]], Tool]:
    """The function that turns many :func:`_record` back into their tools: a thawed tool
    filled by one unpacking of the record into its slots, which then becomes a ``Tool`` (a
    quarter of ``Tool.__init__``'s cost, half of :func:`_by_fields`'; ``list`` pays it per
    tool). Written from ``Tool``'s and ``Source``'s fields and compiled on first use, then
    kept."""
    global _decode
    if _decode is not None:
        return _decode
    targets = ", ".join("source" if f == "source" else f"tool.{f}" for f in FIELDS)
    source_targets = ", ".join(f"made.{f}" for f in _SOURCE_NAMES)
    text = f"""def decode(record):
    tool = new(ThawedTool)
    ({targets},) = record
    if source is not None:
        made = new(ThawedSource)
        ({source_targets},) = source
        made.__class__ = Source
        source = made
    tool.source = source
    tool.__class__ = Tool
    return tool
"""
    scope: dict[str, Any] = {"new": object.__new__, "Tool": Tool, "Source": Source}
    scope.update(ThawedTool=_ThawedTool, ThawedSource=_ThawedSource)
    exec(compile(text, f"<{__name__} decoder>", "exec"), scope)  # our own text, from the fields
    _decode = scope["decode"]
    return scope["decode"]  # type: ignore[no-any-return]


class ToolTable(Sequence[Tool]):
    """The tools of a loaded index, each decoded on first use and then kept (so
    ``id(index.tools[i])`` is stable)."""

    __slots__ = ("_blob", "_decoded", "_offsets")
    #: The fields of its records, in order (:data:`FIELDS`), and of their sources.
    FIELDS = FIELDS
    SOURCE_FIELDS = _SOURCE_NAMES

    def __init__(self, blob: Any, offsets: Any) -> None:
        self._blob = unpack(blob)
        self._offsets = unpack(offsets)
        self._decoded: list[Tool | None] = [None] * (len(self._offsets) - 1)

    @classmethod
    def of(cls, tools: Iterable[Tool]) -> ToolTable:
        """Marshal every tool into one growing buffer (no second copy of every record).
        Raises ValueError if a schema holds a value marshal cannot store."""
        blob, ends, dumps = bytearray(), array("Q", [0]), marshal.dumps
        for tool in tools:
            blob += dumps(_record(tool))
            ends.append(len(blob))
        return cls(blob, ends)

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
            record = marshal.loads(self._blob[offsets[i] : offsets[i + 1]])
            tool = self._decoded[i] = (_decode or _by_fields)(record)
        return tool

    def __iter__(self) -> Iterator[Tool]:
        return self._tools(range(len(self._decoded)), keep=True)

    def each(self, ids: Iterable[int]) -> Iterator[Tool]:
        """The tools ``ids``, each decoded as it is reached and not kept (unless it was)."""
        return self._tools(ids, keep=False)

    def decode_all(self) -> None:
        """Decode every tool not decoded yet, the collector paused (:class:`collector_paused`)."""
        with collector_paused():
            deque(self._tools(range(len(self._decoded)), keep=True), 0)

    def _tools(self, ids: Iterable[int], *, keep: bool) -> Iterator[Tool]:
        """The tools ``ids``, decoded as they are reached (kept with ``keep``): field by field,
        then by the compiled unpacking once :data:`_COMPILE_AFTER` were."""
        blob, offsets, decoded, loads = self._blob, self._offsets, self._decoded, marshal.loads
        decode, left = _decode or _by_fields, _COMPILE_AFTER
        for i in ids:
            tool = decoded[i]
            if tool is None:
                left -= 1
                if not left:
                    decode = _decoder()
                tool = decode(loads(blob[offsets[i] : offsets[i + 1]]))
                if keep:
                    decoded[i] = tool
            yield tool

    def columns(self) -> tuple[Any, Any]:
        """The records end to end, and where each one starts (``Q``)."""
        return (self._blob, self._offsets)

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return (ToolTable, (pack(self._blob), pack(self._offsets)))


class collector_paused:  # noqa: N801 - used as a function: ``with collector_paused():``
    """Run a build, or the decoding of every tool, with the cyclic garbage collector off:
    both make millions of small acyclic objects that a collector would re-walk as they pile
    up. It is turned back on, as it was, whatever happens.

    Every object alive then moves to the permanent generation (``gc.freeze``), so no later
    collection walks them again. Frozen objects are still freed by reference counting; only a
    cycle that was garbage at this moment stays uncollected.
    """

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self.was_enabled:
            gc.freeze()
            gc.enable()


def decode_for_printing(tools: Sequence[Tool]) -> None:
    """Decode every tool of a loaded index for a command that prints them and ends."""
    if isinstance(tools, ToolTable):
        tools.decode_all()
