"""The user's files: reading one safely, rewriting one without losing anything, finding
``toolfind.toml``, and the working directory.

Reading: only regular files (a FIFO or a device is refused before any read, so ``/dev/zero``
or a named pipe never hangs or fills memory), never more than a limit. Rewriting: through a
symlink to its target, keeping the mode and owner, atomically, with a numbered backup
(``name.~1~``, ``name.~2~``, as GNU ``cp --backup=numbered``) so that no earlier version is
ever overwritten (:func:`rewrite`, through the one atomic writer, :func:`replace_file`). The
one file hash (:func:`file_digest`). Only ``os`` and ``stat``: the warm fast path's run key
finds the config file through :func:`find_config`.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

CONFIG_NAME = "toolfind.toml"
#: Text files toolfind reads besides catalogs (queries files, configs, servers files) are
#: refused over this size: a labelled set or a config is a few MiB at most.
MAX_INPUT_BYTES = 64 * 1024 * 1024


class FileProblem(Exception):
    """Why a user's file cannot be read (the message names no file: the caller does).
    ``too_big`` and ``missing`` tell those two cases from the others; for ``too_big``,
    ``size`` is the size seen (at least the limit + 1 when the file ``grew`` while read)."""

    def __init__(
        self,
        message: str,
        *,
        too_big: bool = False,
        missing: bool = False,
        size: int = 0,
        grew: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.too_big = too_big
        self.missing = missing
        self.size = size
        self.grew = grew


def not_regular(st: os.stat_result) -> str:
    """The message for a path that is not a regular file, naming what it is."""
    mode = st.st_mode
    kind = "not a file"
    if stat.S_ISDIR(mode):
        kind = "a directory"
    elif stat.S_ISFIFO(mode):
        kind = "a FIFO"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    return f"not a regular file ({kind})"


def read_capped(path: str | os.PathLike[str], limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises FileProblem for a missing or unreadable path, one that is not a regular file, or a
    file over ``limit`` bytes (``too_big``).
    """
    # O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat then refuses it.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        with open(os.open(path, flags), "rb", closefd=True) as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise FileProblem(not_regular(st))
            if st.st_size > limit:
                raise FileProblem(_too_big(f"{st.st_size:,}", limit), too_big=True, size=st.st_size)
            # Sized to the file: read(limit + 1) would allocate a limit-sized buffer per file.
            want = st.st_size + 1
            data = f.read(want)
            if len(data) == want:  # it grew after the stat: read on, up to the limit
                data += f.read(limit + 1 - want)
    except FileNotFoundError as exc:
        raise FileProblem(f"cannot read: {exc.strerror}", missing=True) from None
    except IsADirectoryError:
        raise FileProblem("not a regular file (a directory)") from None
    except OSError as exc:
        raise FileProblem(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:  # it grew after the stat
        raise FileProblem(
            _too_big(f"more than {limit:,}", limit), too_big=True, size=len(data), grew=True
        )
    return data


def read_stream(stream: object, limit: int = MAX_INPUT_BYTES) -> bytes:
    """At most ``limit`` bytes of a binary stream (stdin). Raises FileProblem beyond it."""
    data: bytes = stream.read(limit + 1)  # type: ignore[attr-defined]
    if len(data) > limit:
        raise FileProblem(_too_big(f"more than {limit:,}", limit), too_big=True)
    return data


def _too_big(size: str, limit: int) -> str:
    return f"file is {size} bytes, over the {limit:,}-byte limit"


def working_dir() -> str | None:
    """The working directory, or None when it was deleted (or cannot be named)."""
    try:
        return os.getcwd()
    except OSError:
        return None


#: What to say when a relative path needs a working directory that no longer exists.
NO_WORKING_DIR = (
    "the working directory no longer exists (was it deleted?); "
    "cd to an existing directory or give absolute paths"
)


def find_config(environ: Mapping[str, str], cwd: str | None) -> str | None:
    """The config file that applies: ``$TOOLFIND_CONFIG`` if set, else the nearest
    ``toolfind.toml`` from ``cwd`` upwards, stopping after the repository root (a directory
    holding ``.git``) or the home directory, as ruff does; None when there is none (or no
    working directory). A ``toolfind.toml`` that is not a regular file is returned too, so
    that loading it reports it."""
    explicit = environ.get("TOOLFIND_CONFIG")
    if explicit:
        return explicit
    if cwd is None:
        return None
    home = os.path.normpath(environ.get("HOME") or os.path.expanduser("~"))
    directory = cwd
    while True:
        candidate = os.path.join(directory, CONFIG_NAME)
        if os.path.lexists(candidate):
            return candidate
        if directory == home or os.path.lexists(os.path.join(directory, ".git")):
            return None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def rewrite(path: str | os.PathLike[str], data: bytes) -> str | None:
    """Replace the contents of the file ``path`` with ``data``, atomically, keeping a numbered
    backup of the previous contents; returns the backup's path (None for a new file).

    A symlink is written through: its target gets the new contents and the link stays. The
    target's mode (and owner, where allowed) are kept; a new file gets the umask's mode.
    Raises OSError.
    """
    target = os.path.realpath(path)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    backup = None if st is None else _numbered_backup(target)

    def finish(fh: Any) -> None:
        fh.flush()
        os.fsync(fh.fileno())
        if st is not None:
            _keep_owner_and_mode(fh.fileno(), st)
        else:
            umask = os.umask(0)
            os.umask(umask)
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), 0o666 & ~umask)

    replace_file(target, [data], finish)
    return backup


def replace_file(
    path: str | os.PathLike[str], chunks: Iterable[Any], finish: Callable[[Any], None] | None = None
) -> None:
    """Write ``chunks`` (buffers) one after another to ``path`` atomically: a temporary file
    ``.<name>.<random>.tmp`` in the same directory, ``finish(file)`` if given, then
    ``os.replace``, so that a reader only ever sees the old file or the whole new one. Raises
    OSError, leaving no temporary file behind. (The one atomic writer: ``rewrite`` and the
    cache's files.)"""
    import tempfile

    directory, name = os.path.split(os.fspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.writelines(chunks)
            if finish is not None:
                finish(fh)
        os.replace(tmp, path)
        tmp = ""
    finally:
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def file_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, in hex (the one file hash: catalog digests in the cache key,
    racy stamps' contents). Raises ``OSError`` when it cannot be read."""
    with open(path, "rb") as f:
        import hashlib  # OpenSSL's binding: a warm run whose files did not change never hashes

        return hashlib.file_digest(f, "sha256").hexdigest()


def _keep_owner_and_mode(fd: int, st: os.stat_result) -> None:
    if hasattr(os, "fchown"):
        try:
            os.fchown(fd, st.st_uid, st.st_gid)
        except OSError:
            pass  # only root may give a file away: the user's own file keeps its owner anyway
    if hasattr(os, "fchmod"):
        os.fchmod(fd, stat.S_IMODE(st.st_mode))


def _numbered_backup(target: str) -> str:
    """Copy ``target`` to the next free ``target.~N~`` (never over an existing file)."""
    import shutil

    directory, name = os.path.split(target)
    prefix = name + ".~"
    numbers = [0]
    for entry in os.listdir(directory or "."):
        middle = entry[len(prefix) : -1]
        if entry.startswith(prefix) and entry.endswith("~") and middle.isdigit():
            numbers.append(int(middle))
    number = max(numbers) + 1
    while True:
        backup = os.path.join(directory, f"{prefix}{number}~")
        try:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            number += 1
            continue
        break
    try:
        with open(fd, "wb") as out, open(target, "rb") as src:
            shutil.copyfileobj(src, out)
        shutil.copystat(target, backup)
    except OSError:
        os.unlink(backup)
        raise
    return backup
