"""The live index behind serve-mcp: built off the request path, swapped atomically.

A `Snapshot` is immutable: a request reads ``live.snapshot`` once and uses that object to
the end, so a swap in the middle of a request never mixes two indexes. `LiveIndex` polls the
catalog files' stats (no watcher dependency, works on every filesystem), rebuilds in a worker
thread when they change or when the backends report new tools, and keeps the last good index
when an edit breaks a catalog. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from toolfind.backends.seam import Backends
from toolfind.catalog import defer_namespaces
from toolfind.config import DEFAULT_MAX_FILE_SIZE, Filters
from toolfind.core.analysis import name_key
from toolfind.errors import ToolfindError
from toolfind.models import LEXICAL, ScoringParams, Signals, Tool
from toolfind.serve.options import tool_allowed
from toolfind.store import manifest
from toolfind.store.cache import Loaded
from toolfind.store.run import attach, open_run_index

TYPE_CHECKING = False
if TYPE_CHECKING:
    from toolfind.store.index import SearchIndex

logger = logging.getLogger("toolfind.serve")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One consistent view: the index over every tool the filters allow, and where it came from.

    ``index`` is a `toolfind.store.index.SearchIndex`. ``catalog_tools`` are every tool the
    catalogs gave (before filtering), kept so a backend change can rebuild without reparsing.
    """

    index: SearchIndex
    catalog_tools: tuple[Tool, ...]
    errors: frozenset[str]
    generation: int
    #: Backend server name -> the namespace of its tools (itself, unless a catalog namespace
    #: or another server has it: see `LiveIndex._apart`).
    backend_namespaces: Mapping[str, str] = field(default_factory=dict)
    #: The backends' tools as the pool gave them (a change rebuilds the index; none swaps it).
    backend_tools: tuple[Tool, ...] = ()
    #: How many backends were still connecting for the first time (the search tool says it).
    backends_connecting: int = 0


OnSwap = Callable[[Snapshot, Snapshot], Awaitable[None]]

#: Seconds after serve-mcp starts before its tools are embedded in the background: its first
#: requests do not share the machine with the embedding's start.
EMBED_AFTER = 1.0
#: Searches that run a model at once, each in a worker thread (about one per core: the event
#: loop then gets the interpreter back within a few milliseconds).
MODEL_THREADS = 2
T = TypeVar("T")


class LiveIndex:
    """Holds the current `Snapshot` and replaces it when catalogs or backends change."""

    def __init__(
        self,
        catalogs: Sequence[Path],
        *,
        params: ScoringParams,
        filters: Filters,
        backends: Backends,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        use_cache: bool = True,
        signals: Signals | None = None,
    ) -> None:
        self.catalogs = tuple(catalogs)
        #: The signals beyond BM25F each snapshot's index attaches (a switch None: on where
        #: installed, the Python API's and serve-mcp's default).
        self.signals = Signals() if signals is None else signals
        self.params = params
        self.filters = filters
        self.backends = backends
        self.max_file_size = max_file_size
        self.use_cache = use_cache
        self._snapshot: Snapshot | None = None
        #: Whether every tool's vector is computed in the background (from EMBED_AFTER after
        #: start; then for each new index).
        self.embedding = False
        self._model_threads: anyio.CapacityLimiter | None = None
        #: The catalogs as last read (``manifest.record``): what the watcher checks.
        self._record: dict[str, Any] = {}
        self._listeners: list[OnSwap] = []
        self._lock = anyio.Lock()
        self._backends_dirty = anyio.Event()
        self._warned: set[str] = set()
        # How many backend changes were announced, and how many the snapshot includes.
        self._changes = 0
        self._built_changes = 0

    @property
    def snapshot(self) -> Snapshot:
        if self._snapshot is None:
            raise RuntimeError("LiveIndex.load() must run before the index is read")
        return self._snapshot

    def on_swap(self, listener: OnSwap) -> None:
        """Run ``listener(old, new)`` after every swap (e.g. to notify clients)."""
        self._listeners.append(listener)

    def backends_changed(self) -> None:
        """The backends' callback: their tools changed; rebuild at the next poll tick."""
        self._changes += 1
        self._backends_dirty.set()

    async def catch_up(self) -> None:
        """Return once the snapshot holds every backend change announced so far (rebuilding
        now, or waiting for the rebuild under way)."""
        if self._built_changes < self._changes:
            await self.reload(catalogs_changed=False)

    def load(self) -> Snapshot:
        """The first, blocking load. Skipped entries are logged; a missing path raises.

        Raises:
            ToolfindError: a catalog path does not exist or cannot be read at all.
        """
        loaded = self._read()
        for finding in loaded.findings:
            logger.warning("skipped: %s", finding)
        changes = self._changes
        self._snapshot = self._build(loaded, tuple(self.backends.tools()), loaded.findings, 1)
        self._built_changes = changes
        return self._snapshot

    def _connecting(self) -> int:
        return sum(s.state == "connecting" for s in self.backends.status().values())

    async def reload(self, *, catalogs_changed: bool = True) -> bool:
        """Rebuild in a worker thread and swap. Returns whether a new snapshot was installed.

        A catalog edit that adds errors (or makes a path unreadable) keeps the last good
        catalogs and logs one line per new problem, naming the file; backend changes announced
        meanwhile are still taken in. When neither the catalogs nor the backends' tools
        changed (a backend's state did), the index is kept and only the snapshot is new.
        """
        async with self._lock:
            if not catalogs_changed and self._built_changes >= self._changes:
                return False  # a rebuild that ran while this one waited took it in
            changes = self._changes
            old = self.snapshot
            backend_tools = tuple(self.backends.tools())
            catalog: Loaded | tuple[Tool, ...] = old.catalog_tools
            errors: Collection[object] = old.errors
            if catalogs_changed:
                try:
                    loaded = await anyio.to_thread.run_sync(self._read)
                except ToolfindError as exc:
                    problems: list[object] = [exc]
                else:
                    # Errors only: a skipped built-in tool or duplicate is said at load,
                    # but does not hold the rest of the change back.
                    problems = [
                        f
                        for f in loaded.findings
                        if getattr(f, "severity", "error") == "error" and str(f) not in old.errors
                    ]
                for problem in problems:
                    logger.error(
                        "catalog change ignored, still serving the last good index: %s", problem
                    )
                if not problems:
                    catalog, errors = loaded, loaded.findings
                elif self._built_changes >= changes:
                    return False  # nothing but the rejected edit
                else:
                    catalogs_changed = False  # the backends' change, over the last good catalogs
            if not catalogs_changed and backend_tools == old.backend_tools:
                new = replace(
                    old,
                    generation=old.generation + 1,
                    backends_connecting=self._connecting(),
                    backend_namespaces=self._namespaces(old.catalog_tools, backend_tools),
                )
            else:
                new = await anyio.to_thread.run_sync(
                    self._build, catalog, backend_tools, errors, old.generation + 1
                )
            self._snapshot = new
            self._built_changes = changes
            if self.embedding and new.index is not old.index:
                self.embed()
            # Which servers' tools it holds: a server that came up during a rebuild is in the
            # next one (what a user, or a test, waiting for a backend's tools looks for).
            servers = sorted({t.namespace for t in backend_tools})
            logger.info(
                "index rebuilt (generation %d, %d tools%s)",
                new.generation,
                len(new.index.tools),
                f"; tools of servers: {', '.join(servers)}" if servers else "",
            )
        for listener in list(self._listeners):
            await listener(old, new)
        return True

    def _build(
        self,
        catalog: Loaded | tuple[Tool, ...],
        backend_tools: Sequence[Tool],
        errors: Collection[object],
        generation: int,
    ) -> Snapshot:
        """The snapshot over the allowed catalog and backend tools.

        Filtering before indexing makes the filter one predicate for every path: a tool the
        filters deny is not listed, not found by search, not resolvable and not callable.
        """
        from toolfind.store.index import SearchIndex

        tools = tuple(catalog.index.tools if isinstance(catalog, Loaded) else catalog)
        given = tuple(defer_namespaces(backend_tools, self.params.deferred))
        connecting = self._connecting()
        backend_tools, namespaces = self._apart(tools, given)
        key = ""  # names the learned signal's compiled evidence kept beside the index file
        if isinstance(catalog, Loaded) and self.filters == Filters() and not backend_tools:
            index, key = catalog.index, catalog.key  # the cached index answers exactly this
        else:
            allowed = [t for t in (*tools, *backend_tools) if tool_allowed(self.filters, t)]
            index = SearchIndex.build(allowed, self.params)
        index.accelerate()  # a server answers many queries: numpy pays for its import
        # The rerank stage loads its model on the first query; every tool's vector is
        # computed in the background after serve-mcp starts (embed_in_background).
        attach(index, self.signals, use_cache=self.use_cache, key=key, warn=logger.warning)
        if index.learned is not None:
            index.learned.in_background()  # never a compile on the event loop
        return Snapshot(
            index, tools, frozenset(map(str, errors)), generation, namespaces, given, connecting
        )

    def _apart(
        self, catalog_tools: Sequence[Tool], backend_tools: Sequence[Tool]
    ) -> tuple[list[Tool], dict[str, str]]:
        """The backend tools, each in its server's namespace (`_namespaces`)."""
        namespaces = self._namespaces(catalog_tools, backend_tools)
        for server, namespace in namespaces.items():
            if namespace != server and server not in self._warned:
                self._warned.add(server)
                logger.warning(
                    "server %r has the name of a catalog namespace; its tools are kept apart in "
                    "namespace %r (rename the server in its servers file to choose another)",
                    server,
                    namespace,
                )
        moved = [
            t
            if namespaces[t.namespace] == t.namespace
            else _in_namespace(t, namespaces[t.namespace])
            for t in backend_tools
        ]
        return moved, namespaces

    def _namespaces(
        self, catalog_tools: Sequence[Tool], backend_tools: Sequence[Tool]
    ) -> dict[str, str]:
        """Each backend server's namespace: its name, unless a catalog namespace has that name
        (as ``--namespace`` compares names); then ``<server>-mcp`` (``-mcp2``...), a name no
        catalog namespace, no other server and no namespace given before has. So a catalog
        and a backend never merge into one namespace, nor a moved backend with another one,
        and each backend's state is reported on its own."""
        catalog = {name_key(t.namespace) for t in catalog_tools}
        servers = list(
            dict.fromkeys([*self.backends.status(), *(t.namespace for t in backend_tools)])
        )
        taken = catalog | {name_key(s) for s in servers}
        namespaces: dict[str, str] = {}
        for server in servers:
            if name_key(server) not in catalog:
                namespaces[server] = server
        for server in servers:
            if server not in namespaces:
                namespace = namespaces[server] = _apart_from(server, taken)
                taken.add(name_key(namespace))
        return namespaces

    def namespace_of(self, server: str) -> str:
        """The namespace of a backend server's tools in the current snapshot (also for one
        that has no tools yet)."""
        snapshot = self.snapshot
        found = snapshot.backend_namespaces.get(server)
        if found is None:
            found = self._namespaces(snapshot.catalog_tools, snapshot.backend_tools).get(
                server, server
            )
        return found

    def _read(self) -> Loaded:
        """Note the catalogs' record, then parse them (through the cache).

        Raises ToolfindError for a missing path."""
        self._record = manifest.take(self.catalogs)
        return open_run_index(
            paths=self.catalogs,
            params=self.params,
            max_file_size=self.max_file_size,
            use_cache=self.use_cache,
            signals=LEXICAL.settings(),  # attached to the index each snapshot serves (_build)
            warn=logger.warning,
            report_skipped=False,  # logged by load(), compared with the last ones by reload()
        )

    async def watch(self, interval: float, *, catalogs: bool = True) -> None:
        """Poll forever: rebuild when catalog files (unless ``catalogs`` is false) or backend
        tools change; :data:`EMBED_AFTER` seconds after it starts, embed every tool in the
        background (:meth:`embed`). Cancel to stop.

        Backend changes are coalesced: after a rebuild they caused, the next waits at least
        ``interval`` and twice as long as that rebuild took, so a backend whose tools change
        all the time costs at most a third of a core, and searches meanwhile are answered
        from the index there is."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._embed_later)
            await self._poll(interval, catalogs)

    async def _embed_later(self) -> None:
        await anyio.sleep(EMBED_AFTER)
        self.embedding = True
        self.embed()

    async def search(self, index: SearchIndex, work: Callable[[], T]) -> T:
        """``work`` (a search of ``index``): in a worker thread when the index has a model to
        run (the reranker embeds the query and any candidate not embedded yet), at most
        :data:`MODEL_THREADS` at once, so that the event loop keeps answering every other
        client; inline otherwise (a lexical search takes a millisecond)."""
        if index.reranker is None:
            return work()
        if self._model_threads is None:
            self._model_threads = anyio.CapacityLimiter(MODEL_THREADS)
        return await anyio.to_thread.run_sync(work, limiter=self._model_threads)

    def embed(self) -> None:
        """Compute the reranker's vector of every tool of the snapshot's index that has none
        stored, in the background (``rerank.embed_in_background``: a low-priority child
        process, the stage's ``embedding``; searches use what is stored meanwhile). Never on
        the event loop."""
        stage = self.snapshot.index.reranker
        if stage is not None:
            from toolfind.store.rerank import embed_in_background

            embed_in_background(stage)

    async def _poll(self, interval: float, catalogs: bool) -> None:
        while True:
            with anyio.move_on_after(interval if catalogs else math.inf):
                await self._backends_dirty.wait()
            backends_dirty = self._backends_dirty.is_set()
            if backends_dirty:
                self._backends_dirty = anyio.Event()
            catalogs_dirty = False
            if catalogs:
                catalogs_dirty = await anyio.to_thread.run_sync(self.catalogs_changed)
            if catalogs_dirty or backends_dirty:
                started = anyio.current_time()
                await self.reload(catalogs_changed=catalogs_dirty)
                if backends_dirty:
                    took = anyio.current_time() - started
                    await anyio.sleep(max(interval, 2 * took))

    def catalogs_changed(self) -> bool:
        """Whether a catalog file changed since the catalogs were last read: stat calls while
        nothing changed (``manifest.check``); after a directory changed, a walk decides, so
        that a file added beside the catalogs (an editor's swap file) rebuilds nothing."""
        checked = manifest.check(self._record)
        if checked is None:
            now = manifest.take(self.catalogs)
            if not manifest.same_files(self._record, now):
                return True
            checked = now
        self._record = checked  # settled, or the directories' new stamps
        return False


def _apart_from(server: str, taken: Collection[str]) -> str:
    """``<server>-mcp`` (``-mcp2``...): the first whose key is not ``taken``."""
    namespace, n = f"{server}-mcp", 2
    while name_key(namespace) in taken:
        namespace, n = f"{server}-mcp{n}", n + 1
    return namespace


def _in_namespace(tool: Tool, namespace: str) -> Tool:
    """``tool`` in another namespace (the models are frozen)."""
    return replace(tool, namespace=namespace)
