"""Labelled queries: the files `eval`, `tune` and `validate --queries` read.

A queries file holds entries ``{query, relevant: [tool names], id?, split?}`` as a YAML
document, a JSON list or JSON Lines (other keys are ignored, so a data set may carry its own
annotations). The whole document may also be a mapping with a ``queries`` list. Every bad
entry is one ``QueriesError`` (kind ``queries``) naming the file, the line where known, and
the entry.

yaml is imported only when a YAML file is read; nothing here imports the index.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from toolfind.errors import AmbiguousName, QueriesError, ToolfindError, ToolNotFound
from toolfind.models import Tool

#: Refuse queries files larger than this (a labelled set is a few MiB at most).
MAX_BYTES = 64 * 1024 * 1024

#: The format of a queries file by its suffix (any other is sniffed from the content).
_FORMATS = {".yaml": "yaml", ".yml": "yaml", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}


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


class NameResolver(Protocol):
    """What resolving needs from a ``SearchIndex``: its tools and ``show``'s name rules."""

    @property
    def tools(self) -> Sequence[Tool]: ...

    def resolve(self, name: str) -> Tool: ...


def load_queries(path: Path | str, *, max_bytes: int = MAX_BYTES) -> list[LabelledQuery]:
    """Read a labelled-queries file (YAML, JSON list or JSON Lines, by :data:`_FORMATS`).

    Raises ``QueriesError`` for a missing, unreadable, oversized or malformed file or entry.
    """
    from toolfind.userfiles import FileProblem, read_capped

    p = Path(path)
    name = str(path)
    try:
        data = read_capped(p, max_bytes)
    except FileProblem as exc:
        message = exc.message
        if exc.too_big:
            message += " for queries files"
        elif exc.missing:
            message = "no such queries file"
        raise QueriesError(message, file=name) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise QueriesError(f"invalid UTF-8 at byte {exc.start}", file=name) from None
    return parse_queries(text, file=name, fmt=_FORMATS.get(p.suffix.lower()))


def parse_queries(
    text: str, *, file: str = "<queries>", fmt: str | None = None
) -> list[LabelledQuery]:
    """Parse labelled queries from text. ``fmt`` is ``yaml``, ``json``, ``jsonl`` or None (sniff).

    Raises ``QueriesError`` naming ``file`` for a malformed document or a bad entry.
    """
    if fmt is None:
        fmt = _sniff(text)
    if fmt == "jsonl":
        return _parse_jsonl(text, file)
    if fmt == "json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" and text.lstrip().startswith("{"):
                return _parse_jsonl(text, file)  # JSON Lines saved under a .json name
            raise QueriesError(f"invalid JSON: {exc.msg}", file=file, line=exc.lineno) from None
        return _entries(doc, file, lines=None)
    if fmt == "yaml":
        doc, lines = _load_yaml(text, file)
        return _entries(doc, file, lines=lines)
    raise ValueError(f"unknown queries format {fmt!r}")


def resolve_queries(index: NameResolver, queries: Sequence[LabelledQuery]) -> list[JudgedQuery]:
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


def _sniff(text: str) -> str:
    stripped = text.lstrip()
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        # One object per line is JSON Lines; a single (possibly multi-line) object is JSON.
        try:
            json.loads(stripped)
        except json.JSONDecodeError:
            return "jsonl"
        return "json"
    return "yaml"


def _parse_jsonl(text: str, file: str) -> list[LabelledQuery]:
    out: list[LabelledQuery] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise QueriesError(f"invalid JSON: {exc.msg}", file=file, line=lineno) from None
        out.append(_entry(entry, len(out) + 1, file, lineno, seen))
    return out


def _load_yaml(text: str, file: str) -> tuple[Any, list[int] | None]:
    import yaml  # lazily: costs ~3x Python's start-up

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        doc = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise QueriesError(f"invalid YAML: {exc.problem or exc}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise QueriesError(f"invalid YAML: {exc}", file=file) from None
    finally:
        loader.dispose()
    lines: list[int] | None = None
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if getattr(key, "value", None) == "queries":
                node = value
    if isinstance(node, yaml.SequenceNode):
        lines = [item.start_mark.line + 1 for item in node.value]
    return doc, lines


def _entries(doc: Any, file: str, *, lines: list[int] | None) -> list[LabelledQuery]:
    if isinstance(doc, Mapping) and "queries" in doc:
        doc = doc["queries"]
    if doc is None:
        return []
    if not isinstance(doc, list):
        raise QueriesError(
            f"expected a list of queries (or a mapping with a 'queries' list), got {_kind(doc)}",
            file=file,
        )
    seen: dict[str, int] = {}
    return [
        _entry(entry, n, file, lines[n - 1] if lines else None, seen)
        for n, entry in enumerate(doc, 1)
    ]


def _entry(entry: Any, n: int, file: str, line: int | None, seen: dict[str, int]) -> LabelledQuery:
    where = f"entry {n}"

    def bad(message: str) -> ToolfindError:
        return QueriesError(message, file=file, line=line, path=where)

    if not isinstance(entry, Mapping):
        raise bad(f"expected a mapping with 'query' and 'relevant', got {_kind(entry)}")
    qid = _entry_id(entry.get("id"), n, bad)
    where = _where(n, qid)
    query = entry.get("query")
    if query is None:
        raise bad("query: required key missing")
    if not isinstance(query, str) or not query.strip():
        raise bad(f"query: expected non-empty text, got {_kind(query)}")
    relevant = entry.get("relevant")
    if relevant is None:
        raise bad("relevant: required key missing (a list of tool names)")
    if isinstance(relevant, str):
        relevant = [relevant]
    if not isinstance(relevant, list) or not relevant:
        raise bad(f"relevant: expected a non-empty list of tool names, got {_kind(relevant)}")
    for j, name in enumerate(relevant):
        if not isinstance(name, str) or not name.strip():
            raise bad(f"relevant[{j}]: expected a tool name, got {_kind(name)}")
    split = entry.get("split", "")
    if split is None:
        split = ""
    if not isinstance(split, str):
        raise bad(f"split: expected a string, got {_kind(split)}")
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
        raise bad(f"id: expected a string or integer, got {_kind(raw)}")
    return str(raw).strip()


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"number {value}"
    if isinstance(value, str):
        return "empty text" if not value.strip() else f"text {value!r}"
    if isinstance(value, list):
        return "an empty list" if not value else "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__
