"""The user's files: reading one safely, rewriting one without losing anything, finding
``toolfind.toml`` (the user-wide one and the project's), whether a file found rather than
given could hold what another user wrote (:func:`trust_problem`), and the working directory.

Reading: only regular files (a FIFO or a device is refused before any read, so ``/dev/zero``
or a named pipe never hangs or fills memory), never more than a limit. Rewriting: through a
symlink to its target, keeping the mode and owner, atomically, with a numbered backup
(``name.~1~``, ``name.~2~``, as GNU ``cp --backup=numbered``) so that no earlier version is
ever overwritten (:func:`rewrite`, through the one atomic writer, :func:`replace_file`). The
one file hash (:func:`file_digest`). toolfind's own files (the cache's, the model folder's)
are opened by :func:`open_own` alone: never a FIFO, socket, device or link, never another
user's. Only ``os`` and ``stat``: the warm fast path's run key finds the config file through
:func:`find_config`.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, BinaryIO

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
    elif stat.S_ISLNK(mode):
        kind = "a symbolic link"
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


#: Opening never waits (a FIFO for a writer), never follows a link, never leaks to a child.
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def open_own(path: str | os.PathLike[str], buffering: int = -1) -> tuple[BinaryIO, os.stat_result]:
    """A file in one of toolfind's own folders (the cache, the model folder: anyone who can
    write there can name a file as toolfind does) opened for reading, with its stat, once it
    is known to be one toolfind may read: a regular file, owned by the user, writable by
    nobody else. A FIFO, socket, device or symbolic link is refused by ``lstat`` before
    anything opens it, and checked again on the descriptor (opened without blocking or
    following a link), so that nothing swapped in meanwhile is read either.

    Raises FileNotFoundError when there is none, FileProblem (why, in words: ``it is not a
    regular file (a FIFO)``) for one that must not be read, and OSError for one that cannot
    be.
    """
    problem = own_file_problem(os.lstat(path))
    if problem is None:
        try:
            fd = os.open(path, _OPEN_FLAGS)
        except OSError as exc:
            import errno

            if exc.errno != errno.ELOOP:
                raise
            # A link swapped in since the lstat: refused as the lstat would have.
            raise FileProblem("it is not a regular file (a symbolic link)") from None
        try:
            st = os.fstat(fd)
            problem = own_file_problem(st)
            if problem is None:
                return open(fd, "rb", buffering=buffering, closefd=True), st
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raise FileProblem(problem)


def own_file_problem(st: os.stat_result) -> str | None:
    """Why a file in toolfind's own folders with this stat must not be read (``it is not a
    regular file (a FIFO)``, ``it is owned by another user``...), or None when it may be."""
    mode = st.st_mode
    if not stat.S_ISREG(mode):
        return f"it is {not_regular(st)}"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return "it is owned by another user"
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "it is writable by group or others"
    return None


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


def user_config(environ: Mapping[str, str]) -> str:
    """The user-wide config file: ``$XDG_CONFIG_HOME/toolfind/toolfind.toml``, else
    ``~/.config/toolfind/toolfind.toml`` (on macOS too, as gh and llm's users expect), on
    Windows ``%APPDATA%\\toolfind\\toolfind.toml``. A relative ``$XDG_CONFIG_HOME`` is ignored,
    as the XDG specification says. The path is returned whether or not the file exists."""
    xdg = environ.get("XDG_CONFIG_HOME", "").strip()
    if not os.path.isabs(xdg):
        home = environ.get("HOME") or os.path.expanduser("~")
        appdata = environ.get("APPDATA", "") if os.name == "nt" else ""
        xdg = appdata or os.path.join(home, ".config")
    return os.path.join(xdg, "toolfind", CONFIG_NAME)


# -- trust ---------------------------------------------------------------------------------------
#
# A file toolfind finds by itself (a toolfind.toml above the working directory, ./catalogs, the
# servers files and catalogs a config names) is used only when nobody but you or root can have
# written it: git refuses repositories owned by someone else for the same reason
# (CVE-2022-24765). A path given on the command line or in an environment variable is trusted
# as given.


def trust_problem(path: str | os.PathLike[str], safe_directories: Iterable[str] = ()) -> str | None:
    """Why the file or directory ``path`` may hold what another user wrote, or None when only
    the current user or root can have written it (or it lies in ``safe_directories``).

    Checked for the path as found and for what its symlinks lead to: every component, the
    file itself included, must be owned by the current user or root, and every directory
    holding one must be writable by nobody else, unless its sticky bit keeps others from
    replacing entries they do not own (``/tmp``). Group write counts only when the group
    has members besides the user (a user-private group, as umask 002 systems make, does
    not). A component that does not exist (a file not created yet) is skipped. On systems
    without POSIX owners (Windows) nothing is refused."""
    if not hasattr(os, "getuid"):
        return None
    text = os.fspath(path)
    absolute = os.path.abspath(text)
    real = os.path.realpath(text)
    if safe_directories and _in_safe_directory(absolute, real, safe_directories):
        return None
    uid = os.getuid()
    for chain in dict.fromkeys((absolute, real)):
        problem = _chain_problem(chain, uid)
        if problem is not None:
            return (
                "it" + problem[len(absolute) :] if problem.startswith(absolute + " ") else problem
            )
    return None


def _chain_problem(path: str, uid: int) -> str | None:
    """The first reason, from ``path`` up to the root, that another user can change what
    ``path`` holds (see :func:`trust_problem`)."""
    entry = path
    while True:
        try:
            st = os.lstat(entry)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return f"{entry} cannot be checked ({exc.strerror or exc})"
        if st is not None and st.st_uid not in (uid, 0):
            return f"{entry} is owned by {_user_name(st.st_uid)}"
        parent = os.path.dirname(entry)
        if parent == entry:
            return None
        try:
            mode, gid = _mode_and_group(parent)
        except FileNotFoundError:
            mode, gid = 0, 0
        except OSError as exc:
            return f"{parent} cannot be checked ({exc.strerror or exc})"
        if not mode & stat.S_ISVTX:  # sticky: only an entry's owner (or root) may replace it
            if mode & stat.S_IWOTH:
                return f"{parent} is writable by every user (mode {stat.S_IMODE(mode):04o})"
            if mode & stat.S_IWGRP and not _group_is_private(gid, uid):
                return (
                    f"{parent} is writable by the group {_group_name(gid)} "
                    f"(mode {stat.S_IMODE(mode):04o})"
                )
        entry = parent


def _mode_and_group(directory: str) -> tuple[int, int]:
    """The mode and group of the directory ``directory`` (through a symlink: a link's own
    mode means nothing; who owns the link is checked as a component)."""
    st = os.stat(directory)
    return st.st_mode, st.st_gid


def _group_is_private(gid: int, uid: int) -> bool:
    """Whether only ``uid`` (and root) belong to the group ``gid``: the user's own group of
    the same name (a user-private group) or root's, with no other listed member."""
    import grp
    import pwd

    try:
        group = grp.getgrgid(gid)
        user = pwd.getpwuid(uid).pw_name
    except KeyError:
        return False
    if set(group.gr_mem) - {user, "root"}:
        return False
    return gid == 0 or (group.gr_name == user and gid == os.getgid())


def _user_name(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _group_name(gid: int) -> str:
    try:
        import grp

        return grp.getgrgid(gid).gr_name
    except (ImportError, KeyError):
        return f"gid {gid}"


def _in_safe_directory(absolute: str, real: str, safe_directories: Iterable[str]) -> bool:
    """Whether ``safe_directories`` vouch for the file or directory ``absolute`` (``real``
    once its symlinks are resolved), as git's ``safe.directory`` does: an entry names the
    directory holding a file (or a directory itself) exactly; ``DIR/*`` names DIR and
    everything below it; ``*`` everything."""
    places = set()
    for candidate in (absolute, real):
        places.add(candidate if os.path.isdir(candidate) else os.path.dirname(candidate))
    for entry in safe_directories:
        if entry.strip() == "*":
            return True
        below = entry.endswith(("/*", os.sep + "*"))
        base = os.path.expanduser(entry[:-2] if below else entry)
        if not os.path.isabs(base):
            continue  # the config that holds them is checked to name absolute paths
        bases = {os.path.normpath(base), os.path.realpath(base)}
        for place in places:
            if place in bases:
                return True
            if below and any(place.startswith(b.rstrip(os.sep) + os.sep) for b in bases):
                return True
    return False


def shipped_catalogs() -> str:
    """The catalogs shipped with toolfind: ``_catalogs`` inside the installed package (a
    wheel), else the checkout's ``catalogs/`` beside the package."""
    package = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(package, "_catalogs")
    return bundled if os.path.isdir(bundled) else os.path.join(os.path.dirname(package), "catalogs")


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
    # O_NONBLOCK: a FIFO swapped in since the file was found is refused, never waited on.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    with open(os.open(path, flags), "rb", closefd=True) as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            import errno

            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
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
