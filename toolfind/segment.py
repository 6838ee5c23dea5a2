"""The search segment: a seekable file from which a warm search reads only what it needs.

Unpickling a whole index costs many times Python's start-up at 100k tools; a query needs only
the postings of its few terms and the records of its top hits. The segment stores, hashed into
buckets, each term's postings as precomputed BM25F impacts (doc ids and float64 scores exactly
as ``SearchIndex.impacts`` gives them) and the tool ids of each name key, and per tool its
``--json`` records as plain data (``wire.hit_record`` and ``wire.tool_document``). The fast
path renders the few records it prints with :func:`dumps`, byte for byte what the Typer path
prints, without importing ``json``, ``pickle`` or the index.

Layout: ``MAGIC`` (8 bytes), the directory's offset (8 bytes, little-endian), the blobs, then
the directory: a marshalled dict of offset tables (``bytes`` of native-order u64, read through
``memoryview.cast``; a cache never moves between machines). Every blob is marshalled builtins.

This module imports only the standard library's cheapest parts; ``encode`` (run once per
build, off the hot path) imports what it needs lazily.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys

# typing costs as much to import as a warm search may take (it pulls in re and collections);
# mypy reads this block, Python skips it.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

MAGIC = b"TFSEG\x01\n\x00"
#: Bump on any change to the layout, to the records or to :func:`buckets_of`: the cache key
#: includes it, so a segment another version wrote is never read.
FORMAT = 4
_U64 = 8


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


_MERSENNE_61 = (1 << 61) - 1
_GOLDEN_64 = 0x9E3779B97F4A7C15  # 2**64 / golden ratio, odd: Fibonacci hashing


def bucket_of(text: str, buckets: int) -> int:
    """The bucket of ``text`` among ``buckets``: see :func:`buckets_of`."""
    return buckets_of((text,), buckets)[0]


def buckets_of(texts: Iterable[str], buckets: int) -> list[int]:
    """The bucket of each text, the same in every process (unlike ``hash()``, which is salted).

    The UTF-8 bytes read as one little-endian integer, reduced modulo the prime 2**61 - 1,
    then Fibonacci-hashed (the high bits of a product with an odd constant depend on every
    bit) before the modulo picks a bucket. A few C-level integer operations per text: a
    per-byte hash loop in Python cost a build ~0.1 s per 10k tools.
    """
    return [
        (
            (int.from_bytes(t.encode("utf-8", "surrogatepass"), "little") % _MERSENNE_61)
            * _GOLDEN_64
            >> 64
        )
        % buckets
        for t in texts
    ]


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


#: ``wire.SCORE_DIGITS`` (wire is too costly to import here; a test checks they agree).
SCORE_DIGITS = 6


def complete_hit(stored: dict[str, Any], score: float, match: str, schema: bool) -> dict[str, Any]:
    """A stored hit record (``wire.hit_record`` with the schema) completed for one query, in
    place: score and match filled in, the schema dropped unless asked for or the tool is
    deferred (deferred tools always carry theirs, as ``wire.hit_record`` says)."""
    stored["score"] = round(score, SCORE_DIGITS)
    stored["match"] = match
    if not schema and not stored["deferred"]:
        del stored["schema"]
    return stored


def render_search(query: str, hits: list[dict[str, Any]], unmatched: list[str]) -> str:
    """The search document, as the Typer path prints it (``wire.search_record``'s keys)."""
    return dumps({"query": query, "hits": hits, "unmatched_terms": unmatched})


# -- writing ------------------------------------------------------------------------------------


def encode(index: Any, findings: Any = ()) -> bytes:
    """Serialise the parts of a SearchIndex that search and show need.

    Run it with the cyclic garbage collector paused (the cache does): everything made here
    is acyclic, yet its allocations would trigger full collections that re-walk the whole
    index and catalog (measured: more time than the encoding itself at 10k tools).
    """
    tools = list(index.tools)  # one pass: the index may decode its tools lazily
    impacts = index.impacts()
    n_buckets = max(1, len(impacts) // 32)
    writer = _Writer()
    directory = {
        "format": FORMAT,
        "buckets": n_buckets,
        "terms": writer.table(_term_buckets(impacts, n_buckets)),
        "names": writer.table(_name_buckets(index.name_keys(), n_buckets)),
        "docs": writer.table(_doc_blobs(tools)),
        "disabled": tuple(i for i, t in enumerate(tools) if not t.enabled),
        "warnings": tuple(f"Warning: skipped {f}" for f in findings),
    }
    return writer.finish(marshal.dumps(directory))


class _Writer:
    """The segment's bytes as they are laid out: header, blobs, then the directory."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = [MAGIC, b"\0" * _U64]
        self.offset = len(MAGIC) + _U64

    def table(self, blobs: list[bytes]) -> bytes:
        """Append ``blobs``; return their offset table (``len(blobs) + 1`` native u64)."""
        from itertools import accumulate

        offsets = list(accumulate(map(len, blobs), initial=self.offset))
        self.chunks += blobs
        self.offset = offsets[-1]
        return _pack(offsets, "Q")

    def finish(self, directory: bytes) -> bytes:
        self.chunks[1] = self.offset.to_bytes(_U64, "little")
        self.chunks.append(directory)
        return b"".join(self.chunks)


def _term_buckets(impacts: Any, n_buckets: int) -> list[bytes]:
    """Each term's (ids, impacts) as native int32 and float64 bytes, hashed into buckets."""
    return _hashed(_native_postings(impacts), n_buckets)


def _native_postings(impacts: Any) -> Any:
    """``impacts`` as marshal should write them. The index gives arrays (or memoryviews) of C
    ints and doubles, which marshal writes as their bytes, so they pass as they are; anything
    else is packed first."""
    pairs = list(impacts.values())
    ids_codes = _type_codes([ids for ids, _ in pairs])
    score_codes = _type_codes([scores for _, scores in pairs])
    if ids_codes <= {"i"} and score_codes <= {"d"}:
        return impacts
    return {term: (_pack(ids, "i"), _pack(sc, "d")) for term, (ids, sc) in impacts.items()}


def _type_codes(columns: list[Any]) -> set[str | None]:
    """The item types of arrays or memoryviews (``{None}`` for anything else)."""
    from array import array

    kinds = {type(c) for c in columns}
    if kinds <= {array}:
        return {c.typecode for c in columns}
    if kinds <= {memoryview}:
        return {c.format for c in columns}
    return {None}


def _name_buckets(name_keys: Any, n_buckets: int) -> list[bytes]:
    """Name key -> ids of the tools with that name (or alias) key: ``lookup_name``'s ``keys``.

    Exact names need no table: ``lookup_name`` reads the candidates' names from their docs.
    The ids may be any sequence marshal takes (the fast path only iterates them).
    """
    return _hashed(name_keys, n_buckets)


def _hashed(mapping: Any, n_buckets: int) -> list[bytes]:
    """``mapping`` split into ``n_buckets`` marshalled dicts by :func:`buckets_of` its keys."""
    buckets: list[dict[str, Any]] = [{} for _ in range(n_buckets)]
    keys = list(mapping)
    hashed = buckets_of(keys, n_buckets)
    for key, value, bucket in zip(keys, mapping.values(), hashed, strict=True):
        buckets[bucket][key] = value
    return [marshal.dumps(b) for b in buckets]


def _doc_blobs(tools: list[Any]) -> list[bytes]:
    """Per tool: name, namespace, its hit record (schema included, score and match to fill
    in) and its ``show`` document, as plain marshalled data (see :func:`complete_hit`)."""
    from toolfind import wire
    from toolfind.models import Hit

    return [
        marshal.dumps(
            (
                tool.name,
                tool.namespace,
                wire.hit_record(Hit(tool=tool, score=0.0), include_schema=True),
                wire.tool_document(tool),
            )
        )
        for tool in tools
    ]


def _pack(values: Any, code: str) -> bytes:
    """``values`` as native ``code`` items."""
    from array import array

    return array(code, values).tobytes()


# -- reading -------------------------------------------------------------------------------------


class Segment:
    """An open segment file. Raises ValueError (or OSError) for a file that is not one."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        if fh.read(len(MAGIC)) != MAGIC:
            raise ValueError("not a toolfind segment")
        dir_offset = int.from_bytes(fh.read(_U64), "little")
        fh.seek(dir_offset)
        directory = marshal.loads(fh.read())
        if not isinstance(directory, dict) or directory.get("format") != FORMAT:
            raise ValueError("segment format differs")
        self.buckets: int = directory["buckets"]
        self.terms = memoryview(directory["terms"]).cast("Q")
        self.names = memoryview(directory["names"]).cast("Q")
        self.docs = memoryview(directory["docs"]).cast("Q")
        self.disabled: frozenset[int] = frozenset(directory["disabled"])
        self.warnings: tuple[str, ...] = directory["warnings"]

    def _blob(self, table: memoryview, i: int) -> Any:
        start, end = table[i], table[i + 1]
        self.fh.seek(start)
        return marshal.loads(self.fh.read(end - start))

    def postings(self, term: str) -> tuple[memoryview[int], memoryview[float]] | None:
        bucket = self._blob(self.terms, bucket_of(term, self.buckets))
        found = bucket.get(term)
        if found is None:
            return None
        return memoryview(found[0]).cast("i"), memoryview(found[1]).cast("d")

    def names_for(self, key: str) -> Sequence[int]:
        """Ids of the tools whose name or alias has this ``analysis.name_key``."""
        result: Sequence[int] = self._blob(self.names, bucket_of(key, self.buckets)).get(key, ())
        return result

    def doc(self, doc_id: int) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
        """(name, namespace, stored hit record, show document) of one tool: fresh objects,
        which :func:`complete_hit` may complete in place."""
        result: tuple[str, str, dict[str, Any], dict[str, Any]] = self._blob(self.docs, doc_id)
        return result
