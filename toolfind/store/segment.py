"""The index file's layout, and the warm path's reader of it (no pickle, no index classes).

A cached index is one file, ``toolfind-<key>.pickle`` (:func:`index_file`)::

    MAGIC (8 bytes) | part count (u64) | (offset, length) of each part (u64 pairs) | parts

all integers of the header little-endian, every part 8-aligned. Part 0 is the *directory*
(marshalled builtins), part 1 the pickle of the whole index (see :mod:`toolfind.store.cache`),
then the pickle's out-of-band buffers: the index's columns, each a part. The directory names
the parts holding the columns a warm ``search --json`` / ``show --json`` reads (:data:`COLUMNS`),
with their item type, plus the load warnings, the impact tiers' places and the fields of the
tool records (``models.Tool``'s, as ``columns.ToolTable`` writes them). So :class:`Segment`
reads the index's own columns: nothing is stored twice.

The few records a query prints are read through :class:`ToolRecord`, a ``Tool``-like view,
and printed by the functions the Typer path uses. This module imports only the cheapest
stdlib modules.
"""

from __future__ import annotations

import marshal
import os
from zlib import crc32  # columns.StringTable's hash

from toolfind.core.synonyms import Table as SynonymTable

# cli/ reads these through this module (the warm path's one import of the store).

# typing costs as much to import as a warm search may take: only mypy reads this.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from toolfind.core.search import TermPostings
    from toolfind.store.index import SearchIndex
    from toolfind.store.learned import Compiled

#: First bytes of an index file. Its last-but-two byte is the layout's version.
MAGIC = b"TFIDX\x03\n\x00"
#: Bump on any change to the directory or to what the reader expects of the columns and
#: records: the cache key includes it, so a file another version wrote is never read.
FORMAT = 10
_U64 = 8
#: More parts than this is a damaged header (an index has a few dozen).
MAX_PARTS = 1 << 16
#: The directory's part and the pickle's.
DIRECTORY_PART, PICKLE_PART = 0, 1


#: Index files are named ``toolfind-<key>.pickle`` in the cache directory (see
#: ``store.manifest``: every file toolfind writes there is named ``toolfind-*``).
INDEX_PREFIX, INDEX_SUFFIX = "toolfind-", ".pickle"
#: The suffix of the vector store's files (``store.vectors``): ``toolfind-<id>.vectors-<model>.vec``.
VECTORS_SUFFIX = ".vec"


def index_file(root: str, key: str) -> str:
    """The path of the index file of ``key`` in the cache directory ``root``."""
    return os.path.join(root, INDEX_PREFIX + key + INDEX_SUFFIX)


def _item(i: int) -> Any:  # a field's property, without importing operator (show would pay)
    return property(lambda record: record[i])


class SourceRecord(tuple):  # type: ignore[type-arg]
    """A stored tool's source, read as ``models.Source`` is: a property per field of its
    file's layout (:func:`record_type`)."""

    __slots__ = ()
    if TYPE_CHECKING:
        file: str
        pointer: str
        line: int | None


class ToolRecord(tuple):  # type: ignore[type-arg]
    """A read-only, ``models.Tool``-like view of a stored tool record (``columns.ToolTable``'s
    marshalled tuple of a tool's fields), without making a tool nor importing the models.
    :meth:`Segment.record` gives each one as an instance of its file's layout
    (:func:`record_type`: a property per field the directory names); ``ToolRecord(record)``
    of such a record is the record itself."""

    __slots__ = ()

    def __new__(cls, record: Iterable[Any]) -> ToolRecord:
        if isinstance(record, ToolRecord):
            return record
        made: ToolRecord = super().__new__(cls, record)
        return made

    if TYPE_CHECKING:

        def __getattr__(self, field: str) -> Any: ...

        @property
        def source(self) -> SourceRecord | None: ...

    @property
    def all_tags(self) -> tuple[str, ...]:
        from toolfind.shapes import all_tags  # not at import: show never needs it

        return all_tags(self.tags, self.annotations)


def record_type(fields: tuple[str, ...], source_fields: tuple[str, ...]) -> type[ToolRecord]:
    """The :class:`ToolRecord` of records holding ``fields`` (``models.Tool``'s, in its order)
    and a source holding ``source_fields`` (``models.Source``'s): a property per field. The
    index file's directory names both (``columns.ToolTable.FIELDS``, ``SOURCE_FIELDS``)."""
    at = fields.index("source")
    source_type = type(
        "SourceRecord",
        (SourceRecord,),
        {"__slots__": (), **{field: _item(i) for i, field in enumerate(source_fields)}},
    )

    def source(record: tuple[Any, ...]) -> SourceRecord | None:
        value = record[at]
        return None if value is None else source_type(value)

    body: dict[str, Any] = {field: _item(i) for i, field in enumerate(fields)}
    body.update(__slots__=(), source=property(source))
    return type("ToolRecord", (ToolRecord,), body)


#: The fields a reader needs of every record, whatever else its layout holds.
_NEEDED = ("name", "namespace", "enabled", "source", "aliases")


def layout(parts: Sequence[Any]) -> list[Any]:
    """The chunks of an index file holding ``parts`` (bytes-like): the header, then each part
    8-aligned. Write them one after another; nothing is copied."""
    header_size = len(MAGIC) + _U64 + 2 * _U64 * len(parts)
    table: list[int] = []
    chunks: list[Any] = []
    offset = header_size
    for part in parts:
        pad = -offset % _U64
        if pad:
            chunks.append(b"\0" * pad)
            offset += pad
        length = memoryview(part).nbytes
        table += (offset, length)
        chunks.append(part)
        offset += length
    header = MAGIC + len(parts).to_bytes(_U64, "little")
    header += b"".join(n.to_bytes(_U64, "little") for n in table)
    return [header, *chunks]


def directory(
    index: SearchIndex,
    tools: Any,
    findings: Iterable[Any],
    part_of: Callable[[Any], int],
    extras: dict[int, tuple[str, ...]] | None = None,
) -> bytes:
    """The directory of an index file: ``tools`` is the ``columns.ToolTable`` pickled with
    ``index`` (its records' ``FIELDS`` are named here); ``part_of(column)`` the part a column
    was written as; ``extras`` the index's :func:`_native_extras` if known (a build computes
    them while it holds the tools). Never per tool."""
    columns = {
        name: (part_of(column), memoryview(column).format)  # the item type
        for name, column in _fast_columns(index, tools).items()
    }
    return marshal.dumps(
        {
            "format": FORMAT,
            "columns": columns,
            "fields": tools.FIELDS,
            "source_fields": tools.SOURCE_FIELDS,
            "extras": _native_extras(index.tools) if extras is None else extras,
            "tier_of": index._tier_of,
            "expansions": index._expansions.plain(),
            "warnings": tuple(map(skipped_line, findings)),
            "vocabulary": index.vocabulary(),
        }
    )


def skipped_line(finding: object) -> str:
    """The one spelling of the warning for a catalog entry (or file) that was skipped: printed
    by ``store.run`` and kept in the index file for the warm path to print as it is."""
    return f"Warning: skipped {str(finding).removesuffix('; skipped')}"


#: The columns the warm path reads, by name (see :func:`_fast_columns`).
COLUMNS = tuple(
    "terms.blob terms.offsets terms.buckets terms.slots ioffsets idocs imp tiers keys.blob "
    "keys.offsets keys.buckets keys.slots keys.groups keys.ids keys.ends names.blob names.offsets "
    "tools.blob tools.offsets flags".split()
)


#: A string table's columns (``columns.StringTable.columns``), as :data:`COLUMNS` names them.
_TABLE_PARTS = ("blob", "offsets", "buckets", "slots")


def _fast_columns(index: SearchIndex, tools: Any) -> dict[str, Any]:
    """The index's columns that the warm path reads, by name: the terms, the impact postings
    and tiers, the name keys, the names, the tool records (SearchIndex's private slots: the
    file stores them once for both paths)."""
    keys, groups, ids = index._keys.columns()
    tables = {
        "terms": index._terms.columns(),
        "keys": keys.columns(),
        "names": index._names.columns()[:2],
        "tools": tools.columns(),
    }
    return {
        f"{table}.{part}": column
        for table, columns in tables.items()
        for part, column in zip(_TABLE_PARTS, columns, strict=False)
    } | {
        "ioffsets": index._ioffsets,
        "idocs": index._idocs,
        "imp": index._imp,
        "tiers": index._tiers,
        "flags": index._flags,
        "keys.groups": groups,
        "keys.ids": ids,
        "keys.ends": index._key_ends,
    }


def _native_extras(tools: Sequence[Any]) -> dict[int, tuple[str, ...]]:
    """Per tool whose native ``show`` document carries keys of its original entry
    (``shapes.carried_keys``): those keys, in the entry's order. Usually no tool has any.
    """
    from toolfind.shapes import MANAGED, carried_keys

    originals = [tool.original for tool in tools]
    # one C-level pass over every key: only entries holding an unmanaged key are examined
    if MANAGED.issuperset(set().union(*filter(None, originals))):
        return {}
    out: dict[int, tuple[str, ...]] = {}
    for i, original in enumerate(originals):
        if original and not MANAGED.issuperset(original):
            extra, _ = carried_keys(original, "native")
            if extra:
                out[i] = extra
    return out


def read_spans(fh: Any, size: int) -> list[tuple[int, int]]:
    """(offset, length) of each part of the index file ``fh`` (``size`` bytes).

    Raises ValueError for a file that is not one, or whose parts lie outside it.
    """
    fh.seek(0)
    head = fh.read(len(MAGIC) + _U64)
    if len(head) != len(MAGIC) + _U64 or not head.startswith(MAGIC):
        raise ValueError("not a toolfind index file")
    count = int.from_bytes(head[len(MAGIC) :], "little")
    end = len(head) + 2 * _U64 * count
    if not PICKLE_PART < count <= MAX_PARTS or end > size:
        raise ValueError("bad index file header")
    raw = fh.read(2 * _U64 * count)
    table = [int.from_bytes(raw[i : i + _U64], "little") for i in range(0, len(raw), _U64)]
    spans = list(zip(table[::2], table[1::2], strict=True))
    if len(spans) != count or any(start < end or start + n > size for start, n in spans):
        raise ValueError("index file is truncated")
    return spans


def read_directory(data: Any, spans: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """The directory in ``data`` (the bytes of the directory part), its columns resolved to
    ``name: (offset, items, type code, item size)``. Raises ValueError (or TypeError,
    KeyError, EOFError) for one that is not this format's or names a part it should not."""
    found = marshal.loads(data)
    if not isinstance(found, dict) or found.get("format") != FORMAT:
        raise ValueError("index file directory format differs")
    columns: dict[str, tuple[int, int, str, int]] = {}
    for name in COLUMNS:
        part, code = found["columns"][name]
        if not PICKLE_PART < part < len(spans):
            raise ValueError(f"column {name} is not a buffer of this file")
        offset, length = spans[part]
        size = memoryview(b"").cast(code).itemsize
        if length % size:
            raise ValueError(f"column {name} is not whole items")
        columns[name] = (offset, length // size, code, size)
    tier_of = found["tier_of"]
    fields, source_fields = found["fields"], found["source_fields"]
    if (
        not _names(fields, _NEEDED)
        or not _names(source_fields, ("file", "pointer", "line"))
        or not isinstance(found["warnings"], tuple)
        or not isinstance(found["extras"], dict)
        or not _vocabulary(found["vocabulary"])
        or not isinstance(tier_of, dict)
        or any(not 0 <= a <= b <= columns["tiers"][1] for a, b, _ in tier_of.values())
    ):
        raise ValueError("index file directory is malformed")
    found["columns"] = columns
    found["expansions"] = SynonymTable.from_plain(found["expansions"])
    return found


def _vocabulary(found: Any) -> bool:
    """Whether ``found`` is an index's vocabulary (``SearchIndex.vocabulary``)."""
    return (
        isinstance(found, dict)
        and set(found) == {"namespace", "tag"}
        and all(isinstance(v, tuple) and all(isinstance(x, str) for x in v) for v in found.values())
    )


def _names(fields: Any, needed: tuple[str, ...]) -> bool:
    """Whether ``fields`` is a record layout: distinct names, ``needed`` among them."""
    return (
        isinstance(fields, tuple)
        and all(isinstance(field, str) for field in fields)
        and len(set(fields)) == len(fields)
        and set(needed) <= set(fields)
    )


def find_string(text: str, blob: Any, offsets: Any, buckets: Any, slots: Any) -> int | None:
    """The position of ``text`` in a string table (``columns.StringTable``'s columns), or None.

    String i's UTF-8 bytes are ``blob[offsets[i]:offsets[i + 1]]``; the string whose bytes'
    CRC-32 is h modulo ``len(buckets) - 1`` is among ``slots[buckets[h]:buckets[h + 1]]``.
    Only ``len`` and slices are needed: :class:`Segment` reads the columns from the file.
    """
    data = text.encode("utf-8", "surrogatepass")
    h = crc32(data) % (len(buckets) - 1)
    a, b = buckets[h : h + 2]
    for i in slots[a:b]:
        start, end = offsets[i : i + 2]
        if blob[start:end] == data:
            return int(i)
    return None


class _Column:
    """A column of the open index file, read on demand: ``len`` and slices."""

    __slots__ = ("_items", "_len", "_name")

    def __init__(self, segment: Segment, name: str) -> None:
        self._items = segment._items
        self._name = name
        self._len = segment._columns[name][1]

    def __len__(self) -> int:
        return int(self._len)

    def __getitem__(self, span: slice) -> Any:
        return self._items(self._name, span.start, span.stop)


class Segment:
    """The warm path's view of an open index file, a search source: reads only what a query
    needs. Raises ValueError (or OSError, EOFError, TypeError, KeyError) for a file that is
    not an index file of this format."""

    def __init__(self, fh: Any, size: int) -> None:
        self.fh = fh
        spans = read_spans(fh, size)
        offset, length = spans[DIRECTORY_PART]
        fh.seek(offset)
        found = read_directory(fh.read(length), spans)
        self._columns: dict[str, tuple[int, int, str, int]] = found["columns"]
        self.warnings: tuple[str, ...] = found["warnings"]
        self.extras: dict[int, tuple[str, ...]] = found["extras"]
        self._vocabulary: dict[str, tuple[str, ...]] = found["vocabulary"]
        self._tier_of: dict[int, tuple[int, int, float]] = found["tier_of"]
        self._expansions: SynonymTable = found["expansions"]
        self._flags: Any = None
        fields: tuple[str, ...] = found["fields"]
        self._record_type = record_type(fields, found["source_fields"])
        self._name, self._namespace, self._enabled = map(fields.index, _NEEDED[:3])
        self._records: dict[int, ToolRecord] = {}
        self._tables: dict[str, tuple[_Column, ...]] = {}
        self._vocab: tuple[Any, ...] | None = None
        #: The learned evidence (``store.learned.for_segment``), when learning is on.
        self.learned: Compiled | None = None

    def _bytes(self, name: str, i: int, j: int) -> bytes:
        """Items ``i`` to ``j`` of a column, as bytes."""
        offset, count, _, size = self._columns[name]
        if not 0 <= i <= j <= count:
            raise ValueError(f"{name}[{i}:{j}] is out of range")
        self.fh.seek(offset + i * size)
        data: bytes = self.fh.read((j - i) * size)
        return data

    def _items(self, name: str, i: int, j: int) -> Any:
        """Items ``i`` to ``j`` of a column, as a memoryview of its type."""
        code = self._columns[name][2]
        return memoryview(self._bytes(name, i, j)).cast(code)  # type: ignore[call-overload]

    def _find(self, table: str, text: str) -> int | None:
        """The position of ``text`` in the string table ``table`` (:func:`find_string`)."""
        columns = self._tables.get(table)
        if columns is None:
            columns = self._tables[table] = tuple(
                _Column(self, f"{table}.{part}") for part in _TABLE_PARTS
            )
        return find_string(text, *columns)

    def postings(self, term: str) -> TermPostings | None:
        """The term's postings, as ``SearchIndex.postings`` gives them but with no largest
        impact (the file does not store it); None for a term of no tool."""
        t = self._find("terms", term)
        if t is None:
            return None
        a, b = self._items("ioffsets", t, t + 2)
        if a == b:
            return None
        tier = self._tier_of.get(t)
        return (
            self._items("idocs", a, b),
            self._items("imp", a, b),
            None if tier is None else (self._items("tiers", tier[0], tier[1]), tier[2]),
            None,
        )

    def known(self, terms: list[str]) -> list[str]:
        """Those of ``terms`` in the vocabulary (a typo's candidates): the terms table is read
        whole on the first typo lookup, so that the lookups cost no file reads each."""
        columns = self._vocab
        if columns is None:
            columns = self._vocab = tuple(
                self._items(f"terms.{part}", 0, self._columns[f"terms.{part}"][1])
                for part in _TABLE_PARTS
            )
        return [term for term in terms if find_string(term, *columns) is not None]

    def names_for(self, key: str) -> Sequence[int]:
        """Ids of the tools whose name or alias has this ``analysis.name_key``."""
        k = self._find("keys", key)
        if k is None:
            return ()
        a, b = self._items("keys.groups", k, k + 2)
        ids: Sequence[int] = self._items("keys.ids", a, b)
        return ids

    ids_with_key = names_for

    def key_count(self) -> int:
        """How many distinct name keys the index holds (:class:`columns.KeyedIds`)."""
        return int(self._columns["keys.offsets"][1]) - 1

    def key_at(self, i: int) -> str:
        """The ``i``-th name key, in sorted order."""
        start, end = self._items("keys.offsets", i, i + 2)
        return str(self._bytes("keys.blob", start, end), "utf-8", "surrogatepass")

    def ids_between(self, i: int, j: int) -> Sequence[int]:
        """The tools of the ``i``-th to the ``j - 1``-th name keys."""
        groups = self._items("keys.groups", i, j + 1)
        ids: Sequence[int] = self._items("keys.ids", groups[0], groups[-1])
        return ids

    def key_end_at(self, i: int) -> int:
        """The position of the name key that is ``i``-th when the keys sort by their ends."""
        return int(self._items("keys.ends", i, i + 1)[0])

    def spellings(self, doc: int) -> tuple[str, str, Sequence[str]]:
        """Tool ``doc``'s name, namespace and aliases (``core.suggest``)."""
        record = self.record(doc)
        return record.name, record.namespace, record.aliases

    def name(self, doc: int) -> str:
        """Tool ``doc``'s name."""
        start, end = self._items("names.offsets", doc, doc + 2)
        return str(self._bytes("names.blob", start, end), "utf-8", "surrogatepass")

    def vocabulary(self, what: str) -> tuple[str, ...]:
        """Every ``tool`` name (disabled tools' too), ``namespace`` or ``tag`` of the index:
        what the shell completes. The names are read in one go, the others are in the
        directory."""
        if what != "tool":
            return self._vocabulary[what]
        count = self.tool_count
        offsets = self._items("names.offsets", 0, count + 1)
        blob = self._bytes("names.blob", 0, offsets[count]) if count else b""
        return tuple(
            {
                str(blob[offsets[d] : offsets[d + 1]], "utf-8", "surrogatepass"): None
                for d in range(count)
            }
        )

    @property
    def tool_count(self) -> int:
        """How many tools the index holds (disabled ones too)."""
        return int(self._columns["tools.offsets"][1]) - 1

    def named(self, query: str) -> list[int]:
        """The tools ``query`` names (disabled ones too), by the function the index uses."""
        from toolfind.core.analysis import lookup_name, name_key

        record, namespace = self.record, self._namespace
        return lookup_name(
            query, self.names_for, self.name, lambda d: name_key(record(d)[namespace])
        )

    def enabled(self, doc: int) -> bool:
        return bool(self.record(doc)[self._enabled])

    def synonym_table(self) -> SynonymTable:
        """The synonym groups of the index (``SearchIndex.synonym_table``)."""
        return self._expansions

    def action(self, doc: int) -> int:
        """The tool's flags, its action class among them (``SearchIndex.action``): the
        column is read whole on first use (a byte a tool), not once per tool."""
        flags = self._flags
        if flags is None:
            flags = self._flags = self._bytes("flags", 0, self._columns["flags"][1])
        return int(flags[doc])

    def exact_key(self, doc: int) -> tuple[str, str]:
        record = self.record(doc)
        return record[self._namespace], record[self._name]

    def tie_key(self, doc: int) -> tuple[str, str, int]:
        """(name, namespace, id): the index's order of ties (``SearchIndex.tie_key``)."""
        record = self.record(doc)
        return record[self._name], record[self._namespace], doc

    def numpy(self, postings: int) -> None:
        """Never: importing numpy would cost a one-shot command more than it saves."""
        return None

    def record(self, doc: int) -> ToolRecord:
        """Tool ``doc``'s record, in this file's layout (:func:`record_type`), decoded once."""
        found = self._records.get(doc)
        if found is None:
            start, end = self._items("tools.offsets", doc, doc + 2)
            data = marshal.loads(self._bytes("tools.blob", start, end))
            found = self._records[doc] = self._record_type(data)
        return found
