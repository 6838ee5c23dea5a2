"""Labelled queries: the files `eval`, `tune` and `validate --queries` read.

A queries file holds entries ``{query, relevant: [tool names], id?, split?}`` as a YAML
document, a JSON list or JSON Lines (other keys are ignored, so a data set may carry its own
annotations). The whole document may also be an object with a ``queries`` list. The file is
read as a catalog is (``catalog.parse.read_document``: the same limits and messages); every
bad entry is one ``QueriesError`` (kind ``queries``) naming the file, the line and the entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolfind.catalog.parse import Document, Problem, kind_of, parse_document, read_document
from toolfind.errors import AmbiguousName, QueriesError, ToolfindError, ToolNotFound

if TYPE_CHECKING:
    from toolfind.store.index import SearchIndex

#: Refuse queries files larger than this (a labelled set is a few MiB at most).
MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One labelled query: the text, the tools it should find (as written: any spelling
    ``show`` accepts), and where it came from (1-based ``entry``, ``line`` where known)."""

    query: str
    relevant: tuple[str, ...]
    id: str
    split: str = ""
    entry: int = 0
    line: int | None = None
    file: str = ""


@dataclass(frozen=True, slots=True)
class JudgedQuery:
    """A labelled query whose relevant names are resolved to the index's tools (doc ids)."""

    labelled: LabelledQuery
    relevant_ids: tuple[int, ...]

    @property
    def id(self) -> str:
        return self.labelled.id

    @property
    def query(self) -> str:
        return self.labelled.query

    @property
    def split(self) -> str:
        return self.labelled.split


def load_queries(path: Path | str, *, max_bytes: int = MAX_BYTES) -> list[LabelledQuery]:
    """Read a labelled-queries file (YAML, JSON or JSON Lines: ``catalog.parse.FORMATS``).

    Raises ``QueriesError`` for a missing, unreadable, oversized or malformed file or entry.
    """
    try:
        doc = read_document(path, max_bytes)
    except Problem as problem:
        raise QueriesError(problem.message, file=str(path), line=problem.line) from None
    return _entries(doc, str(path))


def parse_queries(
    text: str, *, file: str = "<queries>", fmt: str | None = None
) -> list[LabelledQuery]:
    """Parse labelled queries from text. ``fmt`` is ``yaml``, ``json``, ``jsonl`` or None
    (``catalog.parse.parse_document`` tells). Raises ``QueriesError`` naming ``file``."""
    try:
        doc = parse_document(text, fmt)
    except Problem as problem:
        raise QueriesError(problem.message, file=file, line=problem.line) from None
    return _entries(doc, file)


def resolve_queries(index: SearchIndex, queries: Sequence[LabelledQuery]) -> list[JudgedQuery]:
    """Resolve every query's relevant names to doc ids with ``show``'s rules.

    Raises ``QueriesError`` naming the entry for an unknown or ambiguous tool name.
    """
    doc_ids = {id(tool): i for i, tool in enumerate(index.tools)}  # resolve returns one of them
    judged: list[JudgedQuery] = []
    for q in queries:
        ids: list[int] = []
        for j, name in enumerate(q.relevant):
            try:
                tool = index.resolve(name)
            except (ToolNotFound, AmbiguousName) as exc:
                raise QueriesError(
                    exc.message,
                    file=q.file or None,
                    line=q.line,
                    path=f"{_where(q.entry, q.id)}: relevant[{j}]",
                ) from None
            if doc_ids[id(tool)] not in ids:
                ids.append(doc_ids[id(tool)])
        judged.append(JudgedQuery(q, tuple(ids)))
    return judged


def _where(entry: int, qid: str) -> str:
    return f"entry {entry} (id {qid!r})" if qid != str(entry) else f"entry {entry}"


def _entries(doc: Document, file: str) -> list[LabelledQuery]:
    value = doc.value
    where: tuple[str, ...] = ()
    if isinstance(value, Mapping) and "queries" in value:
        value, where = value["queries"], ("queries",)
    if not isinstance(value, list):
        raise QueriesError(
            f"expected a list of queries (or an object with a 'queries' list), got {kind_of(value)}",
            file=file,
        )
    lines = doc.item_lines(where)
    seen: dict[str, int] = {}
    return [_entry(entry, n, file, lines[n - 1], seen) for n, entry in enumerate(value, 1)]


def _entry(entry: Any, n: int, file: str, line: int | None, seen: dict[str, int]) -> LabelledQuery:
    where = f"entry {n}"

    def bad(message: str) -> ToolfindError:
        return QueriesError(message, file=file, line=line, path=where)

    if not isinstance(entry, Mapping):
        raise bad(f"expected an object with 'query' and 'relevant', got {kind_of(entry)}")
    qid = _entry_id(entry.get("id"), n, bad)
    where = _where(n, qid)
    query = entry.get("query")
    if query is None:
        raise bad("query: required key missing")
    if not isinstance(query, str) or not query.strip():
        raise bad(f"query: expected non-empty text, got {kind_of(query)}")
    relevant = entry.get("relevant")
    if relevant is None:
        raise bad("relevant: required key missing (a list of tool names)")
    if isinstance(relevant, str):
        relevant = [relevant]
    if not isinstance(relevant, list) or not relevant:
        raise bad(f"relevant: expected a non-empty list of tool names, got {kind_of(relevant)}")
    for j, name in enumerate(relevant):
        if not isinstance(name, str) or not name.strip():
            raise bad(f"relevant[{j}]: expected a tool name, got {kind_of(name)}")
    split = entry.get("split", "")
    if split is None:
        split = ""
    if not isinstance(split, str):
        raise bad(f"split: expected a string, got {kind_of(split)}")
    if qid in seen:
        raise bad(f"id: {qid!r} is already used by entry {seen[qid]}")
    seen[qid] = n
    names = tuple(dict.fromkeys(name.strip() for name in relevant))
    return LabelledQuery(
        query=query, relevant=names, id=qid, split=split.strip(), entry=n, line=line, file=file
    )


def _entry_id(raw: Any, n: int, bad: Callable[[str], ToolfindError]) -> str:
    if raw is None:
        return str(n)
    if isinstance(raw, bool) or not isinstance(raw, str | int) or not str(raw).strip():
        raise bad(f"id: expected a string or integer, got {kind_of(raw)}")
    return str(raw).strip()
