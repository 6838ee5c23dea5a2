"""The search segment: a seekable file from which a warm search reads only what it needs.

Unpickling a whole index costs many times Python's start-up at 100k tools; a query needs only
the postings of its few terms and the records of its top hits. The segment stores, hashed into
buckets, each term's postings as precomputed BM25F impacts (doc ids and float64 scores exactly
as ``SearchIndex.impacts`` gives them), a name table for exact matches, and each tool's
pre-rendered JSON pieces, so that the fast path prints byte for byte what the Typer path prints
without importing ``json``, ``pickle`` or the index.

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
    from typing import Any

MAGIC = b"TFSEG\x01\n\x00"
FORMAT = 2
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


def bucket_of(text: str, buckets: int) -> int:
    """FNV-1a (64-bit) of the UTF-8 text, modulo ``buckets``: stable across runs, unlike hash()."""
    h = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogatepass"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h % buckets


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


# -- JSON pieces ------------------------------------------------------------------------------

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def json_str(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``, without importing json."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def indent(compact: str) -> str:
    """Re-indent compact JSON (``separators=(",", ":")``) exactly as ``json.dumps(indent=2)``.

    The build stores compact JSON because ``json.dumps`` with ``indent`` runs the pure-Python
    encoder (minutes for 100k tools); re-indenting only the few records a query prints is cheap.
    """
    out: list[str] = []
    depth = 0
    i, n = 0, len(compact)
    while i < n:
        ch = compact[i]
        if ch == '"':
            j = i + 1
            while True:
                j = compact.index('"', j)
                backslashes = 0
                k = j - 1
                while compact[k] == "\\":
                    backslashes += 1
                    k -= 1
                if backslashes % 2 == 0:
                    break
                j += 1
            out.append(compact[i : j + 1])
            i = j + 1
            continue
        if ch in "{[":
            closer = "}" if ch == "{" else "]"
            if i + 1 < n and compact[i + 1] == closer:
                out.append(ch + closer)
                i += 2
                continue
            depth += 1
            out.append(ch + "\n" + "  " * depth)
        elif ch in "}]":
            depth -= 1
            out.append("\n" + "  " * depth + ch)
        elif ch == ",":
            out.append(",\n" + "  " * depth)
        elif ch == ":":
            out.append(": ")
        else:
            j = i
            while j < n and compact[j] not in '"{}[],:':
                j += 1
            out.append(compact[i:j])
            i = j
            continue
        i += 1
    return "".join(out)


def render_search(query: str, hits: list[str], unmatched: list[str]) -> str:
    """The search document, as the Typer path prints it, around compact hits."""
    terms = ",".join(json_str(t) for t in unmatched)
    return indent(
        '{"query":'
        + json_str(query)
        + ',"hits":['
        + ",".join(hits)
        + '],"unmatched_terms":['
        + terms
        + "]}"
    )


def render_hit(
    pieces: tuple[str, str, str, str, bool], score: float, match: str, schema: bool
) -> str:
    """One hit in compact JSON, from the pieces ``hit_pieces`` stored."""
    head, mid, tail, schema_piece, deferred = pieces
    text = head + repr(round(score, 6)) + mid + json_str(match) + tail
    if schema or deferred:
        text += schema_piece
    return text + "}"


# -- writing ------------------------------------------------------------------------------------


def compact(document: Any) -> str:
    """Compact JSON through the C encoder (``indent`` would force the Python one)."""
    import json

    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


def hit_pieces(tool: Any) -> tuple[str, str, str, str, bool]:
    """Split the compact rendering of a hit around its score and match (and schema)."""
    from toolfind import wire
    from toolfind.models import Hit

    record = wire.hit_record(Hit(tool=tool, score=0.0), include_schema=True)
    record["score"] = "\0SCORE\0"
    record["match"] = "\0MATCH\0"
    text = compact(record)
    head, _, rest = text.partition('"\\u0000SCORE\\u0000"')
    mid, _, rest = rest.partition('"\\u0000MATCH\\u0000"')
    schema_at = rest.rindex(',"schema":')
    tail, schema_piece = rest[:schema_at], rest[schema_at:-1]
    return (head, mid, tail, schema_piece, bool(tool.defer))


def encode(index: Any, findings: Any = ()) -> bytes:
    """Serialise the parts of a SearchIndex that search and show need."""
    from toolfind import wire

    tools = index.tools
    impacts = index.impacts()
    n_buckets = max(1, len(impacts) // 32)
    term_buckets: list[dict[str, tuple[bytes, bytes]]] = [{} for _ in range(n_buckets)]
    for term, (ids, scores) in impacts.items():
        term_buckets[bucket_of(term, n_buckets)][term] = (_pack(ids, "i"), _pack(scores, "d"))
    name_buckets: list[dict[str, tuple[int, ...]]] = [{} for _ in range(n_buckets)]
    by_raw: dict[str, list[int]] = {}
    for doc, tool in enumerate(tools):
        by_raw.setdefault(tool.name, []).append(doc)
    for raw, ids in by_raw.items():
        name_buckets[bucket_of("=" + raw, n_buckets)]["=" + raw] = tuple(ids)
    for key, ids in index.name_keys().items():
        name_buckets[bucket_of("~" + key, n_buckets)]["~" + key] = tuple(ids)

    chunks: list[bytes] = [MAGIC, b"\0" * _U64]
    offset = len(MAGIC) + _U64

    def add(blob: bytes) -> int:
        nonlocal offset
        start = offset
        chunks.append(blob)
        offset += len(blob)
        return start

    def table(blobs: list[bytes]) -> bytes:
        offsets = [add(b) for b in blobs]
        offsets.append(offset)
        return b"".join(o.to_bytes(_U64, sys.byteorder) for o in offsets)

    term_table = table([marshal.dumps(b) for b in term_buckets])
    name_table = table([marshal.dumps(b) for b in name_buckets])
    doc_table = table(
        [
            marshal.dumps((t.name, t.namespace, hit_pieces(t), compact(wire.tool_document(t))))
            for t in tools
        ]
    )
    directory = {
        "format": FORMAT,
        "buckets": n_buckets,
        "terms": term_table,
        "names": name_table,
        "docs": doc_table,
        "disabled": tuple(i for i, t in enumerate(tools) if not t.enabled),
        "warnings": tuple(f"Warning: skipped {f}" for f in findings),
    }
    dir_offset = add(marshal.dumps(directory))
    chunks[1] = dir_offset.to_bytes(_U64, "little")
    return b"".join(chunks)


def _pack(values: Any, code: str) -> bytes:
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

    def names_for(self, key: str) -> tuple[int, ...]:
        result: tuple[int, ...] = self._blob(self.names, bucket_of(key, self.buckets)).get(key, ())
        return result

    def doc(self, doc_id: int) -> tuple[str, str, tuple[str, str, str, str, bool], str]:
        """(name, namespace, hit pieces, show document) of one tool."""
        result: tuple[str, str, tuple[str, str, str, str, bool], str] = self._blob(
            self.docs, doc_id
        )
        return result
