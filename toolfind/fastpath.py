"""Warm ``toolfind search QUERY --json`` and ``toolfind show NAME --json`` without Typer.

Typer, Rich, json, typing and the index classes together cost several times Python's start-up;
the hot commands of an agent's loop should not pay that. This path answers only when everything
it needs is already in the cache (a manifest entry whose recorded stats still hold, and its
segment file) and the arguments are the simple ones it understands. In every other case,
including any doubt, ``run`` returns None and the Typer app answers instead: the two paths
give byte-identical output for the same arguments (tested).

Only the standard library's cheapest modules are imported here.
"""

from __future__ import annotations

import marshal
import os
import sys
from itertools import repeat
from operator import add

from toolfind import segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def run(argv: Sequence[str]) -> int | None:
    """Answer the command in ``argv`` from the cache, or return None to fall back."""
    parsed = _parse(list(argv))
    if parsed is None:
        return None
    catalogs, command, text, limit, schema = parsed
    seg = _open_segment(tuple(catalogs))
    if seg is None:
        return None
    try:
        if command == "search":
            out = _search(seg, text, limit, schema)
        else:
            out = _show(seg, text)
    finally:
        seg.fh.close()
    if out is None:
        return None
    for line in seg.warnings:
        sys.stderr.write(line + "\n")
    document, hint = out
    if hint:
        sys.stderr.write(hint + "\n")
    sys.stdout.write(document + "\n")
    sys.stdout.flush()
    return 0


def _parse(argv: list[str]) -> tuple[list[str], str, str, int, bool] | None:
    """The arguments the fast path understands, or None for anything else."""
    if not argv or argv[0] not in ("search", "show"):
        return None
    command = argv.pop(0)
    catalogs: list[str] = []
    positional: list[str] = []
    json_flag = schema = False
    limit = 10 if command == "search" else 0
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--json":
            json_flag = True
        elif arg in ("-c", "--catalog") and i + 1 < len(argv):
            i += 1
            catalogs.append(argv[i])
        elif command == "search" and arg == "--schema":
            schema = True
        elif command == "search" and arg in ("-k", "--limit") and i + 1 < len(argv):
            i += 1
            value = argv[i]
            if not value.isdigit() or int(value) < 1:
                return None
            limit = int(value)
        elif arg.startswith("-"):
            return None
        else:
            positional.append(arg)
        i += 1
    if not json_flag or len(positional) != 1 or not positional[0].strip():
        return None
    return catalogs, command, positional[0], limit, schema


def _open_segment(catalogs: tuple[str, ...]) -> segment.Segment | None:
    if os.environ.get("TOOLFIND_NO_FASTPATH"):
        return None
    root = segment.default_cache_dir(os.environ)
    key = segment.run_key(catalogs)
    manifest = _read_manifest(os.path.join(root, "manifest.marshal"))
    entry = manifest.get("runs", {}).get(key) if isinstance(manifest, dict) else None
    if not isinstance(entry, dict) or not _still_valid(entry):
        return None
    path = os.path.join(root, str(entry["key"]) + ".seg")
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed by run()
    except OSError:
        return None
    try:
        if segment.unsafe_reason(os.fstat(fh.fileno())):
            raise ValueError("unsafe")
        return segment.Segment(fh)
    except (OSError, ValueError, EOFError, TypeError, KeyError):
        fh.close()
        return None


def _read_manifest(path: str) -> object:
    try:
        with open(path, "rb") as fh:
            if segment.unsafe_reason(os.fstat(fh.fileno())):
                return None
            return marshal.loads(fh.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def _still_valid(entry: dict[str, object]) -> bool:
    """True when no catalog file changed and no directory gained or lost an entry."""
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


class _Keys:
    """``name key -> tool ids`` read from the segment on demand (``analysis.lookup_name``)."""

    def __init__(self, seg: segment.Segment) -> None:
        self.seg = seg

    def get(self, key: str, default: Sequence[int] = ()) -> Sequence[int]:
        return self.seg.names_for(key) or default


class _DocField:
    """``tools[i].name`` (or the namespace's name key) read from the segment on demand."""

    def __init__(self, seg: segment.Segment, namespace: bool) -> None:
        self.seg = seg
        self.namespace = namespace

    def __getitem__(self, doc: int) -> str:
        record = self.seg.doc(doc)
        if self.namespace:
            from toolfind.analysis import name_key

            return name_key(record[1])
        return record[0]


def _exact_ids(seg: segment.Segment, query: str) -> list[int]:
    """The tools ``query`` names, by the very function the index uses."""
    from toolfind.analysis import lookup_name

    ids = lookup_name(query, _Keys(seg), _DocField(seg, False), _DocField(seg, True))  # type: ignore[arg-type]
    return [i for i in ids if i not in seg.disabled]


def _search(seg: segment.Segment, query: str, limit: int, schema: bool) -> tuple[str, str] | None:
    from toolfind.analysis import query_terms, unmatched_words

    acc: dict[int, float] = {}
    pairs = query_terms(query)
    matched: list[str] = []
    for term, _ in pairs:
        postings = seg.postings(term)
        if postings is None or not len(postings[0]):
            continue
        matched.append(term)
        ids, scores = postings
        # acc[doc] += score for every posting, in C: a term's ids are distinct, so each get
        # reads the total from before this term, as the index's accumulation does.
        acc.update(zip(ids, map(add, map(acc.get, ids, repeat(0.0)), scores), strict=True))
    unmatched = list(unmatched_words(pairs, matched))
    if not matched:
        return segment.render_search(query, [], unmatched), segment.unmatched_hint(unmatched)
    for doc in seg.disabled:
        acc.pop(doc, None)
    exact = _exact_ids(seg, query)
    docs = {d: seg.doc(d) for d in exact}
    exact.sort(key=lambda d: (docs[d][1], docs[d][0]))
    exact = exact[:limit]
    exact_scores = [acc.pop(d, 0.0) for d in exact]
    room = limit - len(exact)
    ranked = _top(acc, room)
    for doc, _ in ranked:
        docs[doc] = seg.doc(doc)
    ranked.sort(key=lambda item: (-item[1], docs[item[0]][0], docs[item[0]][1]))
    del ranked[room:]
    hits = [
        segment.complete_hit(docs[d][2], s, "exact", schema)
        for d, s in zip(exact, exact_scores, strict=True)
    ]
    hits += [segment.complete_hit(docs[d][2], s, "ranked", schema) for d, s in ranked]
    return segment.render_search(query, hits, unmatched), segment.unmatched_hint(unmatched)


def _top(acc: dict[int, float], limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best-scoring docs, with every doc tied at the cut-off score kept so that
    the caller's sort by name decides ties exactly as the index does."""
    if limit <= 0 or not acc:
        return []
    import heapq

    best = heapq.nlargest(limit, acc.items(), key=lambda item: item[1])
    if len(best) < limit:
        return best
    cutoff = best[-1][1]
    above = [item for item in best if item[1] > cutoff]
    tied = [item for item in acc.items() if item[1] == cutoff]
    if len(above) + len(tied) > limit:
        tied.sort(key=lambda item: item[0])
    return above + tied


def _show(seg: segment.Segment, name: str) -> tuple[str, str] | None:
    ids = _exact_ids(seg, name) or []
    if len(ids) != 1:
        return None  # a miss, an ambiguity or a disabled tool: the Typer path explains it
    return segment.dumps(seg.doc(ids[0])[3]), ""
