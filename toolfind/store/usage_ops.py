"""What ``toolfind usage`` does with the usage store (:mod:`toolfind.store.usage`): what was
learned per tool, the records as labelled queries for ``eval`` and ``tune``, importing
requests a team shares or seeds from logs, forgetting a tool.

An import never loses a stored record: it adds at most what the store's bound leaves room for
(the rest is a problem said, not an eviction), and each bad line is one problem naming the
file and the line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from toolfind.errors import AmbiguousName, ToolfindError, ToolNotFound, UsageStoreError
from toolfind.store.usage import MAX_BYTES, Store, Usage, clean_request, meaning, now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from toolfind.models import Tool

#: An import file larger than this is refused whole (the store holds a few MiB).
MAX_IMPORT_BYTES = 64 * 1024 * 1024
#: At most this many problems of one import are listed one by one; the rest are counted.
MAX_PROBLEMS = 50


@dataclass(frozen=True, slots=True)
class Learned:
    """What the store says about one tool: its records, the sessions they came from, when
    it was last chosen, and the words that now count for it (most first)."""

    namespace: str
    name: str
    records: int
    sessions: int
    last_used: int
    words: tuple[str, ...]

    @property
    def qualified(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def per_tool(records: Sequence[Usage], at: float | None = None) -> list[Learned]:
    """What was learned per tool, most records first: the learned signal's own evidence
    (:func:`toolfind.core.learning.impacts`, with its caps and decay), by tool identity."""
    from toolfind.core import learning
    from toolfind.core.analysis import query_terms

    at = now() if at is None else at
    ids: dict[tuple[str, str], int] = {}
    newest = [(r, ids.setdefault((r.namespace, r.tool), len(ids))) for r in reversed(records)]
    counted = learning.capped((r.session, d) for r, d in newest)
    words: dict[str, str] = {}  # a term as a request wrote it
    evidence = []
    for (record, doc), ok in zip(newest, counted, strict=True):
        pairs = query_terms(record.request)
        for term, word in pairs:
            words.setdefault(term, word)
        evidence.append(([t for t, _ in pairs], doc, learning.decay(at - record.at) if ok else 0.0))
    learned: dict[int, list[tuple[float, str]]] = {}
    for term, (docs, impacts) in learning.impacts(evidence, len(ids)).items():
        for doc, impact in zip(docs, impacts, strict=True):
            learned.setdefault(doc, []).append((impact, words.get(term, term)))
    out = []
    for (namespace, name), doc in ids.items():
        mine = [r for r, d in newest if d == doc]
        ranked = sorted(learned.get(doc, []), key=lambda iw: (-iw[0], iw[1]))
        out.append(
            Learned(
                namespace,
                name,
                len(mine),
                len({r.session for r in mine if r.session}),
                max(r.at for r in mine),
                tuple(dict.fromkeys(w for _, w in ranked)),
            )
        )
    out.sort(key=lambda t: (-t.records, t.qualified))
    return out


def labelled_queries(records: Sequence[Usage]) -> list[tuple[str, str]]:
    """The records as labelled queries for ``eval`` and ``tune``: (request, the tool's
    qualified name), each pair once, oldest first."""
    return list(dict.fromkeys((r.request, r.qualified) for r in records))


def forget(store: Store, name: str) -> tuple[str, int]:
    """Delete every record of the tool ``name`` (``namespace/tool`` or a bare name that one
    stored tool has); returns its qualified name and how many went. Raises ToolNotFound or
    AmbiguousName (naming what the store holds), UsageStoreError."""
    stored = {(r.namespace, r.tool) for r in store.read()}
    chosen = [ns_name for ns_name in stored if _qualified(*ns_name) == name]
    if not chosen:
        chosen = [ns_name for ns_name in stored if ns_name[1] == name]
    if len(chosen) > 1:
        raise AmbiguousName(name, sorted(_qualified(*c) for c in chosen))
    if not chosen:
        from toolfind.core.suggest import close

        names = {_qualified(*c).casefold(): _qualified(*c) for c in stored}
        raise ToolNotFound(name, close(name, names)) from None
    target = chosen[0]
    before, after = store.rewrite(lambda rs: [r for r in rs if (r.namespace, r.tool) != target])
    return _qualified(*target), before - after


def _qualified(namespace: str, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


@dataclass
class Imported:
    """What an import did: records added, lines already in the store, and the problems
    (each ``file:line: message``; ``more`` counts those past :data:`MAX_PROBLEMS`)."""

    added: int = 0
    already: int = 0
    problems: list[str] = field(default_factory=list)
    more: int = 0

    def problem(self, file: str, line: int | None, message: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(str(ToolfindError(message, file=file, line=line)))
        else:
            self.more += 1


def import_file(
    store: Store,
    path: str,
    resolve: Callable[[str], Tool],
    redact: Callable[[str], str],
) -> Imported:
    """Add the requests of the JSON Lines file ``path`` (``{"query": "...", "tool":
    "NAME"}``, NAME as toolfind lists it, found by ``resolve``) as imported records, each
    request ``redact``-ed as serve-mcp's are. A line already stored is not added again.
    Raises UsageStoreError for a store that must not be used and QueriesError for a file
    that cannot be read at all; every other problem is one line of the result."""
    from toolfind.errors import QueriesError
    from toolfind.userfiles import FileProblem, read_capped

    try:
        data = read_capped(path, MAX_IMPORT_BYTES)
    except FileProblem as exc:
        raise QueriesError(exc.message, file=path) from None
    done = Imported()
    held = {(r.request, r.namespace, r.tool) for r in store.read() if not r.session}
    room = MAX_BYTES - (store.stamp() or (0,))[0]
    at = now()
    meanings: dict[int, str] = {}
    records: list[Usage] = []
    for number, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            request, name = _entry(raw)
            tool = resolve(name)
        except (ValueError, ToolfindError) as exc:
            done.problem(path, number, getattr(exc, "message", None) or str(exc))
            continue
        request = clean_request(redact(request))
        key = (request, tool.namespace, tool.name)
        if key in held:
            done.already += 1
            continue
        held.add(key)
        sig = meanings.setdefault(id(tool), meaning(tool.description))
        record = Usage(at, request, tool.namespace, tool.name, sig, 0, "")
        room -= len(record.line())
        if room < 0:
            done.problem(
                path,
                number,
                "the usage store is full: this and later lines were "
                "not imported (toolfind usage forget TOOL or clear makes room)",
            )
            break
        records.append(record)
    store.append(records)
    done.added = len(records)
    return done


def _entry(raw: bytes) -> tuple[str, str]:
    """A line's request and tool name. Raises ValueError saying what is wrong with it."""
    try:
        entry = json.loads(raw)
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(
            f"not a JSON object ({getattr(exc, 'msg', 'too deep')}); "
            'expected {"query": "...", "tool": "NAME"}'
        ) from None
    if not isinstance(entry, dict):
        raise ValueError('expected an object {"query": "...", "tool": "NAME"}')
    request, name = entry.get("query"), entry.get("tool")
    if not isinstance(request, str) or not request.strip():
        raise ValueError("'query' must be a non-blank string")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("'tool' must be a tool name as toolfind lists it")
    return request, name


__all__ = ["UsageStoreError", "forget", "import_file", "labelled_queries", "per_tool"]
