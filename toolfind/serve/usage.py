"""What serve-mcp learns from use: per MCP session, each discovery search and the first of its
tools the host then calls, stored as a record of the usage store (``store.usage``).

A search is remembered for :data:`WINDOW` seconds (the last :data:`PENDING` of a session):
its request, and the tools it returned with their ranks and where each came from (its
namespace: a catalog's, or the backend server's). The first call of one of those tools in the
same session, through ``call_tool`` or by the tool's own name (any name it resolves by), is the
evidence: the request (redacted as every log and error is: ``backends.redact``), the tool's
namespace and name, its rank, the time. The call's arguments and result are never seen here.
A call of a tool that no remembered search returned is not evidence, so a backend cannot make
any (it would have to make the host call). A session records at most ``core.learning``'s caps
(:data:`~toolfind.core.learning.SESSION_TOOL_CAP` per tool, :data:`~toolfind.core.learning.SESSION_CAP`
in all).

A session is a client's connection (one over stdio; each over HTTP); a client whose transport
gives no connection (stateless HTTP) is a session per request, so it teaches nothing.
"""

from __future__ import annotations

import logging
import secrets
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field

from toolfind.backends.redact import redact
from toolfind.core.learning import SESSION_CAP, SESSION_TOOL_CAP
from toolfind.errors import UsageStoreError
from toolfind.store.usage import Store, Usage, clean_request, meaning

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from toolfind.models import Tool

logger = logging.getLogger("toolfind.serve")

#: Seconds a search waits for the call it leads to.
WINDOW = 600.0
#: Searches remembered per session (the oldest forgotten first).
PENDING = 8
#: Sessions followed at once when a client cannot be followed by reference (the oldest go).
MAX_SESSIONS = 256


@dataclass
class _Search:
    request: str
    #: (namespace, name) -> rank (1-based)
    ranks: dict[tuple[str, str], int]
    at: float


@dataclass
class _Session:
    token: str = field(default_factory=lambda: secrets.token_urlsafe(6))
    searches: list[_Search] = field(default_factory=list)
    recorded: int = 0
    per_tool: dict[tuple[str, str], int] = field(default_factory=dict)


class Recorder:
    """Follows each session's searches and calls; writes the evidence to ``store``."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.clock = clock
        self._sessions: weakref.WeakKeyDictionary[Any, _Session] = weakref.WeakKeyDictionary()
        self._by_id: OrderedDict[int, _Session] = OrderedDict()
        self._broken = False

    def _session(self, client: object) -> _Session:
        try:
            found = self._sessions.get(client)
            if found is None:
                found = self._sessions[client] = _Session()
            return found
        except TypeError:  # not weakly referable: by id, a bounded number of them
            found = self._by_id.pop(id(client), None) or _Session()
            self._by_id[id(client)] = found
            while len(self._by_id) > MAX_SESSIONS:
                self._by_id.popitem(last=False)
            return found

    def searched(self, client: object, request: str, record: Mapping[str, Any]) -> None:
        """A search of ``request`` answered ``record`` (``wire.search_record``) in ``client``'s
        session."""
        hits: Sequence[Mapping[str, Any]] = record.get("hits") or ()
        ranks: dict[tuple[str, str], int] = {}
        for rank, hit in enumerate(hits, 1):
            ranks.setdefault((str(hit.get("namespace") or ""), str(hit.get("name"))), rank)
        if not ranks:
            return
        session = self._session(client)
        now = self.clock()
        session.searches = [s for s in session.searches if now - s.at <= WINDOW]
        session.searches.append(_Search(request, ranks, now))
        del session.searches[:-PENDING]

    async def called(self, client: object, tool: Tool) -> None:
        """``client`` called ``tool``: the evidence of the latest remembered search of its
        session that returned it, if any, is stored (and that search forgotten)."""
        session = self._session(client)
        identity = (tool.namespace, tool.name)
        now = self.clock()
        chosen = None
        for search in reversed(session.searches):
            if now - search.at <= WINDOW and identity in search.ranks:
                chosen = search
                break
        if chosen is None:
            return
        session.searches.remove(chosen)
        count = session.per_tool.get(identity, 0)
        if self._broken or session.recorded >= SESSION_CAP or count >= SESSION_TOOL_CAP:
            return
        request = clean_request(redact(chosen.request))
        if not request:
            return
        session.recorded += 1
        session.per_tool[identity] = count + 1
        usage = Usage(
            int(time.time()),
            request,
            tool.namespace,
            tool.name,
            meaning(tool.description),
            chosen.ranks[identity],
            session.token,
        )
        import anyio

        try:
            await anyio.to_thread.run_sync(self.store.append, [usage])
        except UsageStoreError as exc:
            self._broken = True  # said once: the store is not going to become usable
            logger.warning("not learning from use: %s", exc)


def recorder(learn: bool) -> Recorder | None:
    """serve-mcp's recorder of the usage store, unless ``learn`` is off."""
    return Recorder(Store()) if learn else None
