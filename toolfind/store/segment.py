"""The index file's layout, and the warm path's reader of it (no pickle, no index classes).

A cached index is one file, ``<key>.pickle``::

    MAGIC (8 bytes) | part count (u64) | (offset, length) of each part (u64 pairs) | parts

all integers of the header little-endian, every part 8-aligned. Part 0 is the *directory*
(marshalled builtins), part 1 the pickle of the whole index (what the Typer path and the Python
API load; see :mod:`toolfind.store.cache`), then the pickle's out-of-band buffers: the index's
columns (:mod:`toolfind.store.columns`), each a part. The directory names the parts that hold the
columns a warm ``search --json`` / ``show --json`` reads (the terms' string table, their
impact postings and tiers, the name keys, the names, the marshalled tool records), with their
item type, plus the load warnings and where each term's tier lies. So :class:`Segment` answers
by reading the query terms' postings and one record per printed tool, straight from the
columns the index itself uses: nothing is stored twice, and writing the cache costs the pickle
and a directory of a few hundred bytes (a few KiB with many impact tiers).

The tool records are ``columns.ToolTable``'s (marshalled once per tool, for both paths); the
few a query prints are turned into their ``--json`` documents here (:func:`hit_document`,
:func:`show_document`) and rendered by :func:`dumps`, byte for byte what the Typer path prints
through ``wire``, ``formats`` and ``json`` (tests compare both on every field).

This module imports only the standard library's cheapest parts; what writing needs is
imported lazily.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from zlib import crc32  # columns.StringTable's hash

# typing costs as much to import as a warm search may take (it pulls in re and collections);
# mypy reads this block, Python skips it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from toolfind.core.search import TermPostings

#: First bytes of an index file. Its last-but-two byte is the layout's version.
MAGIC = b"TFIDX\x03\n\x00"
#: Bump on any change to the directory or to what the reader expects of the columns and
#: records: the cache key includes it, so a file another version wrote is never read.
FORMAT = 6
_U64 = 8
#: More parts than this is a damaged header (an index has a few dozen).
MAX_PARTS = 1 << 16
#: The directory's part and the pickle's.
DIRECTORY_PART, PICKLE_PART = 0, 1


def default_cache_dir(environ: Any) -> str:
    """``$TOOLFIND_CACHE_DIR``, else the platform's per-user cache directory.

    Spelled out here rather than taken from platformdirs, which costs more to import than a warm
    search may: these are the locations platformdirs' ``user_cache_dir("toolfind")`` gives.
    """
    explicit = environ.get("TOOLFIND_CACHE_DIR")
    if explicit:
        return str(explicit)
    home = environ.get("HOME") or os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "toolfind")
    if sys.platform == "win32":
        local = environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(local, "toolfind", "Cache")
    xdg = environ.get("XDG_CACHE_HOME", "").strip()
    return os.path.join(xdg or os.path.join(home, ".cache"), "toolfind")


def unsafe_reason(st: os.stat_result) -> str | None:
    """Why a cache file with this stat must not be read, or None when it may be."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return "it is owned by another user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "it is writable by group or others"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    return None


def run_key(catalog_args: tuple[str, ...], weight_args: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Names this invocation's context: everything that decides which catalogs and settings
    apply (working directory, ``--catalog`` and ``--weight`` options, the environment, the
    config file's stat). The slow path records its index under this key; the fast path looks
    it up without parsing anything."""
    environ = os.environ
    cwd = os.getcwd()
    config = environ.get("TOOLFIND_CONFIG") or os.path.join(cwd, "toolfind.toml")
    try:
        st = os.stat(config)
        config_stat = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    except OSError:
        config_stat = "-"
    return (
        "run1",
        cwd,
        "\0".join(catalog_args),
        environ.get("TOOLFIND_CATALOGS", ""),
        environ.get("TOOLFIND_CONFIG", ""),
        "\0".join(weight_args),
        config_stat,
    )


def still_valid(entry: dict[str, object]) -> bool:
    """True when no catalog file of a manifest's run entry changed (size, mtime, inode) and no
    directory gained or lost an entry: the index it names still answers that run."""
    try:
        for directory, mtime in entry["dirs"]:  # type: ignore[attr-defined]
            if os.stat(directory).st_mtime_ns != mtime:
                return False
        for file, size, mtime, ino in entry["files"]:  # type: ignore[attr-defined]
            st = os.stat(file)
            if (st.st_size, st.st_mtime_ns, st.st_ino) != (size, mtime, ino):
                return False
    except (OSError, KeyError, TypeError, ValueError):
        return False
    return True


def unmatched_hint(terms: list[str]) -> str:
    """The stderr line naming query terms that occur in no tool."""
    return "No tool mentions: " + ", ".join(terms) if terms else ""


# -- JSON, rendered at query time ----------------------------------------------------------
#
# The segment stores plain records (marshalled) rather than pre-rendered JSON: rendering every
# tool at build time cost more than the rest of the build, and a query prints about ten. So
# the few records a query prints are rendered here, byte for byte as ``json.dumps(document,
# indent=2, ensure_ascii=False)`` would (the Typer path's ``wire.dumps``), without json.

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_CONTROLS = frozenset(chr(cp) for cp in range(32))
for _ch in _CONTROLS:
    _ESCAPES.setdefault(_ch, f"\\u{ord(_ch):04x}")
del _ch
_INFINITY = float("inf")


def json_str(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, without importing json.

    Most text needs no escape at all (one C-level scan tells); otherwise each character that
    needs one is replaced throughout, backslashes first so no escape is escaped twice.
    """
    if text.isprintable() and '"' not in text and "\\" not in text:
        return '"' + text + '"'
    text = text.replace("\\", "\\\\").replace('"', '\\"')
    for ch in _CONTROLS.intersection(text):
        text = text.replace(ch, _ESCAPES[ch])
    return '"' + text + '"'


def dumps(document: Any) -> str:
    """``json.dumps(document, indent=2, ensure_ascii=False)``, byte for byte, without json.

    Takes what marshal gives back: dicts, lists, tuples (arrays, as json writes them), str,
    int, float, bool and None.
    """
    out: list[str] = []
    _write(document, "\n", out)
    return "".join(out)


def _write(value: Any, newline: str, out: list[str]) -> None:
    """Append ``value``'s JSON to ``out``; ``newline`` starts a line at its depth."""
    if isinstance(value, str):
        out.append(json_str(value))
    elif isinstance(value, dict):
        _write_object(value, newline, out)
    elif isinstance(value, (list, tuple)):
        _write_array(value, newline, out)
    else:
        out.append(_scalar(value))


def _write_object(obj: dict[Any, Any], newline: str, out: list[str]) -> None:
    if not obj:
        out.append("{}")
        return
    inner = newline + "  "
    sep = "{" + inner
    for key, value in obj.items():
        out.append(sep + json_str(key if isinstance(key, str) else _scalar(key)) + ": ")
        _write(value, inner, out)
        sep = "," + inner
    out.append(newline + "}")


def _write_array(items: list[Any] | tuple[Any, ...], newline: str, out: list[str]) -> None:
    if not items:
        out.append("[]")
        return
    inner = newline + "  "
    sep = "[" + inner
    for item in items:
        out.append(sep)
        _write(item, inner, out)
        sep = "," + inner
    out.append(newline + "]")


def _scalar(value: Any) -> str:
    """A JSON literal as json writes it (also how it turns a non-string key into a string)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value == _INFINITY:
            return "Infinity"
        if value == -_INFINITY:
            return "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# -- --json documents from tool records -----------------------------------------------------
#
# A record is ``columns.ToolTable``'s marshalled tuple of a tool's fields, in this order (a
# test checks it against ``columns``). The documents built from it are ``wire.hit_record``'s
# and ``wire.tool_document``'s (native format), key for key; importing those modules (and the
# dataclasses, typing and formats behind them) would cost a warm search twice what it does.

(
    NAME,
    DESCRIPTION,
    PARAMETERS,
    NAMESPACE,
    TAGS,
    SEARCH_HINT,
    DEFER,
    ENABLED,
    ANNOTATIONS,
    ALIASES,
    TITLE,
    OUTPUT_SCHEMA,
    SOURCE,
    ORIGINAL,
) = range(14)

#: ``wire.SCORE_DIGITS``, ``wire.DESCRIPTION_LIMIT`` and ``models.ANNOTATION_TAGS`` (a test
#: checks that they agree).
SCORE_DIGITS = 6
DESCRIPTION_LIMIT = 1000
ANNOTATION_TAGS = (
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open-world"),
)
_HIDDEN = ("Cc", "Cf", "Co", "Cs")


def clean_text(text: str, limit: int | None = None) -> str:
    """``wire.clean_text``: invisible and control characters (but newline and tab) removed,
    at most ``limit`` characters (a test checks that both agree)."""
    if text.isascii() and text.isprintable() and (limit is None or len(text) <= limit):
        return text
    from unicodedata import category

    kept = "".join(ch for ch in text if ch in "\n\t" or category(ch) not in _HIDDEN)
    if limit is not None and len(kept) > limit:
        kept = kept[: limit - 1].rstrip() + "…"
    return kept


def hit_document(record: Sequence[Any], score: float, match: str, schema: bool) -> dict[str, Any]:
    """``wire.hit_record(Hit(tool, score, match), include_schema=schema)`` of the record's tool.

    Deferred tools always carry their schema, as ``wire.hit_record`` says.
    """
    annotations = record[ANNOTATIONS]
    implied = [tag for hint, tag in ANNOTATION_TAGS if annotations.get(hint) is True]
    source = record[SOURCE]
    document = {
        "name": record[NAME],
        "namespace": record[NAMESPACE],
        "description": clean_text(record[DESCRIPTION], DESCRIPTION_LIMIT),
        "score": round(score, SCORE_DIGITS),
        "match": match,
        "deferred": record[DEFER],
        "tags": list(dict.fromkeys((*record[TAGS], *implied))),
        "source": (
            {"file": None, "pointer": None}
            if source is None
            else {"file": source[0], "pointer": source[1]}
        ),
    }
    if schema or record[DEFER]:
        document["schema"] = dict(record[PARAMETERS])
    return document


def show_document(record: Sequence[Any], extra_keys: Sequence[str] = ()) -> dict[str, Any]:
    """``wire.tool_document(tool)`` (the native format) of the record's tool.

    ``extra_keys`` are the keys of the tool's original entry that ``formats`` carries over
    (its unknown keys, when the entry was written in the native shape): the directory lists
    them per tool (see :func:`_native_extras`).
    """
    out: dict[str, Any] = {"name": record[NAME]}
    if record[NAMESPACE]:
        out["namespace"] = record[NAMESPACE]
    if record[TITLE] is not None:
        out["title"] = record[TITLE]
    out["description"] = record[DESCRIPTION]
    out["parameters"] = dict(record[PARAMETERS])
    if record[OUTPUT_SCHEMA] is not None:
        out["output_schema"] = dict(record[OUTPUT_SCHEMA])
    if record[ANNOTATIONS]:
        out["annotations"] = dict(record[ANNOTATIONS])
    if record[TAGS]:
        out["tags"] = list(record[TAGS])
    if record[SEARCH_HINT]:
        out["search_hint"] = record[SEARCH_HINT]
    if record[ALIASES]:
        out["aliases"] = list(record[ALIASES])
    if record[DEFER]:
        out["defer"] = True
    if not record[ENABLED]:
        out["enabled"] = False
    if extra_keys:
        original = record[ORIGINAL]
        out.update((key, original[key]) for key in extra_keys)
    return out


def render_search(query: str, hits: list[dict[str, Any]], unmatched: list[str]) -> str:
    """The search document, as the Typer path prints it (``wire.search_record``'s keys)."""
    return dumps({"query": query, "hits": hits, "unmatched_terms": unmatched})


# -- writing ------------------------------------------------------------------------------------


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
    index: Any, tools: Any, findings: Iterable[Any], part_of: Callable[[Any], int]
) -> bytes:
    """The directory of an index file (see the module docstring).

    ``tools`` is the ``columns.ToolTable`` pickled with ``index``; ``part_of(column)`` gives
    the part a column was written as (raising KeyError for one that was not). A few hundred
    bytes, plus about 20 per impact tier (a few KiB at 100k tools: one tier per very common
    word); never per tool: the warm path reads the index's own columns.
    """
    columns = {
        name: (part_of(column), _type_code(column))
        for name, column in _fast_columns(index, tools).items()
    }
    return marshal.dumps(
        {
            "format": FORMAT,
            "tools": len(tools),
            "columns": columns,
            "extras": _native_extras(index.tools),
            "tier_of": index._tier_of,
            "warnings": tuple(f"Warning: skipped {f}" for f in findings),
        }
    )


#: The columns the warm path reads, by name (see :func:`_fast_columns`).
COLUMNS = (
    "terms.blob",
    "terms.offsets",
    "terms.buckets",
    "terms.slots",
    "ioffsets",
    "idocs",
    "imp",
    "tiers",
    "keys.blob",
    "keys.offsets",
    "keys.buckets",
    "keys.slots",
    "keys.groups",
    "keys.ids",
    "names.blob",
    "names.offsets",
    "tools.blob",
    "tools.offsets",
)


def _fast_columns(index: Any, tools: Any) -> dict[str, Any]:
    """The index's columns that the warm path reads, by name.

    The terms (a ``columns.StringTable``) and, per term, the tools it occurs in and its
    impact in each (``SearchIndex.impacts``' postings: ``_ioffsets``, ``_idocs``, ``_imp``);
    the name keys (a ``columns.KeyedIds``: what ``analysis.lookup_name`` calls ``keys``);
    the names; the tool records. These are the SearchIndex's private slots, read here
    because the file stores them once for both paths.
    """
    keys = index._keys.columns()
    found = {
        "terms": index._terms.columns(),
        "keys": keys[0].columns(),
        "names": index._names.columns()[:2],
        "tools": tools.columns(),
    }
    out = {
        f"{table}.{part}": column
        for table, columns in found.items()
        for part, column in zip(("blob", "offsets", "buckets", "slots"), columns, strict=False)
    }
    out.update(
        {
            "ioffsets": index._ioffsets,
            "idocs": index._idocs,
            "imp": index._imp,
            "tiers": index._tiers,
            "keys.groups": keys[1],
            "keys.ids": keys[2],
        }
    )
    return out


def _type_code(column: Any) -> str:
    """The item type of a column: an array's type code, a memoryview's format, "B" for bytes."""
    code = getattr(column, "typecode", None) or getattr(column, "format", "B")
    return str(code)


def _native_extras(tools: Sequence[Any]) -> dict[int, tuple[str, ...]]:
    """Per tool whose ``show`` document carries keys of its original entry (``formats``
    keeps an entry's unknown keys when writing it back in its own shape, here the native
    one): those keys, in the entry's order. Usually no tool has any.

    One C-level pass collects every key of every entry (a few milliseconds at 10k tools);
    only when some key is one that no format manages are the entries holding one examined, by
    ``formats``' own rule.
    """
    from operator import attrgetter

    from toolfind.catalog import formats

    managed = formats._MANAGED
    originals = list(map(attrgetter("original"), tools))
    if managed.issuperset(set().union(*filter(None, originals))):
        return {}
    out: dict[int, tuple[str, ...]] = {}
    for i, original in enumerate(originals):
        if original and not managed.issuperset(original):
            extra, _ = formats._extras(tools[i], "native")
            if extra:
                out[i] = tuple(extra)
    return out


# -- reading -------------------------------------------------------------------------------------


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
    warnings, extras, tier_of = found["warnings"], found["extras"], found["tier_of"]
    if not isinstance(warnings, tuple) or not isinstance(extras, dict):
        raise ValueError("index file directory is malformed")
    if not isinstance(tier_of, dict) or any(
        not 0 <= start <= end <= columns["tiers"][1] for start, end, _ in tier_of.values()
    ):
        raise ValueError("index file directory is malformed")
    return {
        "columns": columns,
        "warnings": warnings,
        "extras": extras,
        "tier_of": tier_of,
        "tools": found["tools"],
    }


def find_string(text: str, blob: Any, offsets: Any, buckets: Any, slots: Any) -> int | None:
    """The position of ``text`` in a string table (``columns.StringTable``'s columns), or None.

    The strings' UTF-8 bytes lie end to end in ``blob``, string i at
    ``offsets[i]:offsets[i + 1]``; the string whose bytes' CRC-32 is h modulo
    ``len(buckets) - 1`` is among ``slots[buckets[h]:buckets[h + 1]]``. The columns need only
    ``len`` and slices (two items at a time), so the warm path reads them from the file on
    demand (:class:`Segment`) and the index from memory, through this one lookup.
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
    """The warm path's view of an open index file: reads only what a query needs.

    It is a search source (``toolfind.core.search.Source``): the warm ``search --json`` runs
    the one search over it. Raises ValueError (or OSError, EOFError, TypeError, KeyError) for
    a file that is not an index file of this format.
    """

    def __init__(self, fh: Any, size: int) -> None:
        self.fh = fh
        spans = read_spans(fh, size)
        offset, length = spans[DIRECTORY_PART]
        fh.seek(offset)
        found = read_directory(fh.read(length), spans)
        self._columns: dict[str, tuple[int, int, str, int]] = found["columns"]
        self.warnings: tuple[str, ...] = found["warnings"]
        self.extras: dict[int, tuple[str, ...]] = found["extras"]
        self._tier_of: dict[int, tuple[int, int, float]] = found["tier_of"]
        self._records: dict[int, tuple[Any, ...]] = {}
        self._tables: dict[str, tuple[_Column, ...]] = {}

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
            parts = ("blob", "offsets", "buckets", "slots")
            columns = self._tables[table] = tuple(_Column(self, f"{table}.{p}") for p in parts)
        return find_string(text, *columns)

    def postings(self, term: str) -> TermPostings | None:
        """The ids of the tools ``term`` occurs in (ascending), its impact in each (exactly as
        ``SearchIndex.impacts`` gives them), its impact tier if it has one, and no largest
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

    def names_for(self, key: str) -> Sequence[int]:
        """Ids of the tools whose name or alias has this ``analysis.name_key``."""
        k = self._find("keys", key)
        if k is None:
            return ()
        a, b = self._items("keys.groups", k, k + 2)
        ids: Sequence[int] = self._items("keys.ids", a, b)
        return ids

    def name(self, doc: int) -> str:
        """Tool ``doc``'s name."""
        start, end = self._items("names.offsets", doc, doc + 2)
        return str(self._bytes("names.blob", start, end), "utf-8", "surrogatepass")

    def named(self, query: str) -> list[int]:
        """The tools ``query`` names (disabled ones too), by the function the index uses."""
        from toolfind.core.analysis import lookup_name, name_key

        record = self.record
        return lookup_name(
            query, self.names_for, self.name, lambda d: name_key(record(d)[NAMESPACE])
        )

    def enabled(self, doc: int) -> bool:
        return bool(self.record(doc)[ENABLED])

    def exact_key(self, doc: int) -> tuple[str, str]:
        record = self.record(doc)
        return record[NAMESPACE], record[NAME]

    def tie_key(self, doc: int) -> tuple[str, str, int]:
        """(name, namespace, id): the index's order of ties (``SearchIndex.tie_key``)."""
        record = self.record(doc)
        return record[NAME], record[NAMESPACE], doc

    def numpy(self, postings: int) -> None:
        """Never: importing numpy would cost a one-shot command more than it saves."""
        return None

    def record(self, doc: int) -> tuple[Any, ...]:
        """Tool ``doc``'s record (see :data:`NAME` and the fields after it), decoded once."""
        found = self._records.get(doc)
        if found is None:
            start, end = self._items("tools.offsets", doc, doc + 2)
            found = self._records[doc] = marshal.loads(self._bytes("tools.blob", start, end))
        return found
