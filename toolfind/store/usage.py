"""The usage store: the requests that led the host to a tool, kept on the user's machine.

One file, ``usage.jsonl``, in the state directory (:func:`state_dir`: ``$XDG_STATE_HOME/
toolfind``, by default ``~/.local/state/toolfind``), mode 0600 in a 0700 directory; refused
when another user owns it or can write it, or can replace it (``userfiles.trust_problem``,
as configs are). Each record is one JSON object of :data:`KEYS` (:class:`Usage`): the
request, the tool's namespace and name (its identity: a host that renames the tool it shows
still calls the same one), a digest of its description (:func:`meaning`: evidence for a tool
whose description changed substantially is not used), its rank, the time, and an opaque
session id (never the client's name or address). Never a call's arguments or result.

Safe with several writers at once (serve-mcp processes, ``toolfind usage import``): a record
is appended by one ``write`` to a file opened with ``O_APPEND``, each led by a newline, so
that a line torn by a crash mid-write ends where the next record begins and only the torn
one is lost; readers skip lines that are not whole records. Appends hold a shared advisory
lock (``usage.lock``), rewrites (compaction, ``forget``, ``clear``) an exclusive one and
replace the file atomically, so no append lands in a file being replaced. The file is kept
under :data:`MAX_BYTES`: past it, the oldest records go first (down to :data:`KEEP_BYTES`).
"""

from __future__ import annotations

import os
import time

from toolfind.errors import UsageStoreError
from toolfind.userfiles import FileProblem, open_own, replace_file, trust_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from types import TracebackType

#: The store's file and its lock, in the state directory.
USAGE_NAME, LOCK_NAME = "usage.jsonl", "usage.lock"
#: The store is compacted past this size, down to KEEP_BYTES (about 20k and 15k records).
MAX_BYTES = 4 * 1024 * 1024
KEEP_BYTES = 3 * 1024 * 1024
#: A request is kept to this many characters (a task is described in a few words).
MAX_REQUEST = 500
#: The keys of a stored record, in order: ``t`` time (Unix seconds), ``q`` request, ``ns``
#: namespace, ``n`` tool name, ``m`` the description's digest (:func:`meaning`), ``r`` rank
#: (1-based), ``s`` session. Short, and left out at their defaults (no namespace, rank 0 and
#: session "" for an imported record): 10,000 agent requests take about 1.4 MB.
KEYS = ("t", "q", "ns", "n", "m", "r", "s")
_DEFAULTS = {"ns": "", "m": "", "r": 0, "s": ""}
#: Descriptions whose digests differ in more than this many of 64 bits mean something else
#: (about a cosine of 0.6 between their words: a sentence added keeps a tool's meaning, a
#: rewrite does not).
MEANING_BITS = 18


class Usage:
    """One stored record: the request that led the host to the tool ``namespace/tool``.
    (A plain class: the warm path imports this module, and dataclasses costs it.)"""

    __slots__ = ("at", "meaning", "namespace", "rank", "request", "session", "tool")

    def __init__(
        self,
        at: int,
        request: str,
        namespace: str,
        tool: str,
        meaning: str,
        rank: int,
        session: str,
    ) -> None:
        self.at, self.request, self.namespace, self.tool = at, request, namespace, tool
        self.meaning, self.rank, self.session = meaning, rank, session

    def _fields(self) -> tuple[object, ...]:
        return (
            self.at,
            self.request,
            self.namespace,
            self.tool,
            self.meaning,
            self.rank,
            self.session,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Usage) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Usage{self._fields()!r}"

    @property
    def qualified(self) -> str:
        """``namespace/tool`` (the bare name for a tool without a namespace)."""
        return f"{self.namespace}/{self.tool}" if self.namespace else self.tool

    def line(self) -> bytes:
        """The record as stored: a newline, then the JSON object (see the module docstring)."""
        values = (self.at, self.request, self.namespace, self.tool, self.meaning, self.rank)
        record = {
            key: value
            for key, value in zip(KEYS, (*values, self.session), strict=True)
            if key not in _DEFAULTS or value != _DEFAULTS[key]
        }
        import json

        return b"\n" + json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()


def parse(line: bytes) -> Usage | None:
    """The record a stored line holds, or None for one that is not a whole record."""
    import json

    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    at, request, namespace, tool, sig, rank, session = (data.get(k, _DEFAULTS.get(k)) for k in KEYS)
    strings = (request, namespace, tool, sig, session)
    if not all(isinstance(s, str) for s in strings) or not request or not tool:
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in (at, rank)):
        return None
    return Usage(at, request, namespace, tool, sig, rank, session)


def meaning(description: str) -> str:
    """A 64-bit SimHash (Charikar, 2002) of a description's analysed words, in hex: two
    descriptions sharing most of their words differ in few bits (:func:`same_meaning`)."""
    import hashlib

    from toolfind.core.analysis import analyze_prose

    counts = [0] * 64
    for term in set(analyze_prose(description)):
        h = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big")
        for bit in range(64):
            counts[bit] += 1 if h >> bit & 1 else -1
    return f"{sum(1 << bit for bit in range(64) if counts[bit] > 0):016x}"


def same_meaning(then: str, now: str) -> bool:
    """Whether descriptions with the digests ``then`` and ``now`` mean the same (at most
    :data:`MEANING_BITS` bits apart); an unknown digest ("") is taken as the same."""
    if not then or not now:
        return True
    try:
        return bin(int(then, 16) ^ int(now, 16)).count("1") <= MEANING_BITS
    except ValueError:
        return False


def state_dir(environ: Mapping[str, str] | None = None) -> str:
    """``$TOOLFIND_STATE_DIR``, else ``$XDG_STATE_HOME/toolfind`` (an absolute one), else
    ``~/.local/state/toolfind``; on Windows ``%LOCALAPPDATA%\\toolfind\\State``."""
    environ = os.environ if environ is None else environ
    explicit = environ.get("TOOLFIND_STATE_DIR", "").strip()
    if explicit:
        return explicit
    home = environ.get("HOME") or os.path.expanduser("~")
    if os.name == "nt":
        local = environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(local, "toolfind", "State")
    xdg = environ.get("XDG_STATE_HOME", "").strip()
    if not os.path.isabs(xdg):
        xdg = os.path.join(home, ".local", "state")
    return os.path.join(xdg, "toolfind")


def clean_request(text: str) -> str:
    """A request as stored: whitespace runs as one space, at most :data:`MAX_REQUEST`
    characters (cut at a word)."""
    text = " ".join(text.split())
    if len(text) > MAX_REQUEST:
        text = text[:MAX_REQUEST].rsplit(" ", 1)[0]
    return text


class Store:
    """The usage store in ``directory`` (:func:`state_dir` by default)."""

    def __init__(self, directory: str | None = None) -> None:
        self.directory = state_dir() if directory is None else directory
        self.path = os.path.join(self.directory, USAGE_NAME)

    def problem(self) -> str | None:
        """Why the store must not be used (another user owns or can write it, or its
        directory), or None."""
        found = trust_problem(self.path)
        if found is not None:
            return found
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"it cannot be checked ({exc.strerror or exc})"
        from toolfind.userfiles import own_file_problem

        return own_file_problem(st)

    def _refuse(self, problem: str) -> UsageStoreError:
        return UsageStoreError(
            f"not using the usage store: {problem}; fix its owner and mode "
            "(chmod 600, in a directory only you can write) or set TOOLFIND_STATE_DIR",
            file=self.path,
        )

    def stamp(self) -> tuple[int, int, int, int, int] | None:
        """What tells, without reading it, whether the store changed; None when there is none."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns, st.st_dev)

    def _locked(self, exclusive: bool) -> _Lock:
        """The store's advisory lock, as a context (none where ``fcntl`` is missing)."""
        return _Lock(os.path.join(self.directory, LOCK_NAME), exclusive)

    def _ready(self) -> None:
        """Make the directory (0700) and check the store may be used. Raises UsageStoreError."""
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise UsageStoreError(
                f"cannot create: {exc.strerror or exc}", file=self.directory
            ) from None
        problem = self.problem()
        if problem is not None:
            raise self._refuse(problem)

    def append(self, records: Iterable[Usage]) -> int:
        """Append ``records`` in one write; returns how many. Compacts the store when it
        grew past :data:`MAX_BYTES`. Raises UsageStoreError."""
        data = b"".join(r.line() for r in records)
        if not data:
            return 0
        self._ready()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        flags |= getattr(os, "O_CLOEXEC", 0)
        try:
            with self._locked(exclusive=False):
                fd = os.open(self.path, flags, 0o600)
                try:
                    from toolfind.userfiles import own_file_problem

                    st = os.fstat(fd)
                    problem = own_file_problem(st)
                    if problem is not None:
                        raise self._refuse(problem)
                    written = os.write(fd, data)
                    size = st.st_size + written
                finally:
                    os.close(fd)
            if written != len(data):
                raise UsageStoreError(
                    f"short write ({written} of {len(data)} bytes)", file=self.path
                )
            if size > MAX_BYTES:
                self.rewrite(lambda records: _newest(records, KEEP_BYTES))
        except OSError as exc:
            raise UsageStoreError(f"cannot write: {exc.strerror or exc}", file=self.path) from None
        return data.count(b"\n{")

    def read(self) -> list[Usage]:
        """Every whole record, oldest first (lines that are not are skipped; of a store
        larger than twice :data:`MAX_BYTES`, only its last bytes are read). Raises
        UsageStoreError when the store must not be read."""
        return self._read()[0]

    def _read(self) -> tuple[list[Usage], int]:
        """The records and how many lines were skipped."""
        try:
            fh, st = open_own(self.path)
        except FileNotFoundError:
            return [], 0
        except FileProblem as exc:
            raise self._refuse(exc.message) from None
        except OSError as exc:
            raise UsageStoreError(f"cannot read: {exc.strerror or exc}", file=self.path) from None
        problem = trust_problem(self.path)  # its directory and every one above
        if problem is not None:
            fh.close()
            raise self._refuse(problem)
        with fh:
            limit = 2 * MAX_BYTES
            if st.st_size > limit:
                fh.seek(st.st_size - limit)
                data = fh.read(limit).partition(b"\n")[2]  # from the first whole line
            else:
                data = fh.read(limit)
        records, skipped = [], 0
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            found = parse(line)
            if found is None:
                skipped += 1
            else:
                records.append(found)
        return records, skipped

    def rewrite(self, change: Callable[[list[Usage]], list[Usage]]) -> tuple[int, int]:
        """Replace the records with ``change(records)`` (oldest first), atomically, under the
        exclusive lock; returns (records before, after). Raises UsageStoreError."""
        self._ready()
        try:
            with self._locked(exclusive=True):
                records = self.read()
                kept = change(records)
                if kept == records and os.path.exists(self.path):
                    return len(records), len(kept)

                def private(fh: object) -> None:
                    os.fchmod(fh.fileno(), 0o600)  # type: ignore[attr-defined]

                replace_file(self.path, [r.line() for r in kept], private)
        except OSError as exc:
            raise UsageStoreError(
                f"cannot rewrite: {exc.strerror or exc}", file=self.path
            ) from None
        return len(records), len(kept)

    def clear(self) -> int:
        """Delete every record (and the file); returns how many there were."""
        try:
            with self._locked(exclusive=True):
                count = len(self.read())
                try:
                    os.unlink(self.path)
                except FileNotFoundError:
                    pass
        except FileNotFoundError:  # no directory: nothing was ever stored
            return 0
        except OSError as exc:
            raise UsageStoreError(f"cannot delete: {exc.strerror or exc}", file=self.path) from None
        return count


class _Lock:
    """An advisory lock on a file (``flock``): shared, or exclusive. Raises OSError."""

    def __init__(self, path: str, exclusive: bool) -> None:
        self.path, self.exclusive, self.fd = path, exclusive, -1

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:  # Windows: appends are still whole lines
            return
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        self.fd = os.open(self.path, flags, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX if self.exclusive else fcntl.LOCK_SH)
        except BaseException:
            os.close(self.fd)
            raise

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing releases the lock
            self.fd = -1


def _newest(records: list[Usage], budget: int) -> list[Usage]:
    """The newest of ``records`` (oldest first) whose lines fit in ``budget`` bytes."""
    size = 0
    start = len(records)
    while start > 0:
        size += len(records[start - 1].line())
        if size > budget:
            break
        start -= 1
    return records[start:]


def now() -> int:
    """The time a record is stamped with (Unix seconds)."""
    return int(time.time())
