"""``toolfind`` and ``python -m toolfind``: the fast path first, then the Typer app, both
inside one guard for the environment (:func:`main`)."""

from __future__ import annotations

import gc
import sys

#: The first argument of the one-shot commands besides the index ones (``commands.COMMANDS``), and
#: of help and version: done once their output is written, nothing they start outlives them.
#: Also ``serve-mcp``: it returns once every backend it started has stopped, and a SIGTERM'd
#: server should leave at once (its teardown took up to a second on a busy machine). Not
#: ``catalog pull``.
_ONE_SHOT = frozenset(
    {"schemas", "validate", "eval", "tune", "cache", "serve-mcp", "--version", "-V", "--help", "-h"}
)


def main() -> None:
    """Run toolfind with ``sys.argv``, guarded against its environment: output that stdout
    cannot encode degrades (replacement characters in text, ``\\u`` escapes in JSON), a
    failed write to stdout (a full disk) is one ``Error:`` line and exit 1, Ctrl-C exits 130,
    and nothing else that escapes a command is a traceback."""
    argv = sys.argv[1:]
    _degrade_unencodable_output(argv)
    try:
        _run(argv)
    except SystemExit:
        if _stdout_broken():  # Python's exit would flush it again, and complain
            _stop(1, "cannot write the output", argv)
        raise
    except KeyboardInterrupt:
        _stop(130, "Interrupted.", argv)
    except BrokenPipeError:
        _stop(0, None, argv)  # a reader such as `head` went away: not an error of ours
    except OSError as exc:
        if _output_error(exc):
            _stop(1, f"cannot write the output: {exc.strerror or exc}", argv)
        _stop(1, str(exc), argv)


def _run(argv: list[str]) -> None:
    from toolfind.cli import (
        commands,
        fast,
    )  # it declines (None) every command its grammar does not know

    if argv:
        try:
            code = fast.run(argv)
        except (KeyboardInterrupt, BrokenPipeError):
            raise
        except OSError as exc:
            if _output_error(exc):
                raise  # the answer was found but cannot be written: Typer could not either
            code = None  # e.g. an unreadable cache file: the full CLI reports or rebuilds
        except Exception:  # noqa: BLE001 - any doubt falls back to the full CLI, which reports it
            code = None
        if code is not None:
            _end(code)
            sys.exit(code)
    # The Typer import makes ~25,000 long-lived objects and next to no garbage: no GC walks
    # during it, and what it loaded is frozen out of later collections (the one at exit too).
    gc.disable()
    try:
        # Only the invoked command is turned into a click command (see cli.app_for).
        from toolfind.cli.app import app_for
    finally:
        gc.freeze()
        gc.enable()
    try:
        app_for(argv)(prog_name="toolfind")
    except SystemExit as done:
        one_shot = not argv or argv[0] in _ONE_SHOT or argv[0] in commands.COMMANDS
        if one_shot and (done.code is None or isinstance(done.code, int)):
            _end(done.code or 0)
        raise


def _degrade_unencodable_output(argv: list[str]) -> None:
    """What stdout and stderr cannot encode is written safely (``output.text.guard_streams``:
    a file name's byte that is not UTF-8 as ``\\xNN``, a character a Latin-1 or ASCII
    terminal lacks as ``?``), and when stdout's encoding is not UTF-8, JSON documents escape
    every non-ASCII character (``output.encode.ASCII_ONLY``). serve-mcp's stdout is the MCP
    protocol's (the SDK writes UTF-8 itself): only its stderr is guarded."""
    from toolfind.output import encode
    from toolfind.output.text import guard_streams

    stdout = sys.stdout
    if argv and argv[0] == "serve-mcp":
        guard_streams(sys.stderr)
        return
    guard_streams(stdout, sys.stderr)
    encoding = (getattr(stdout, "encoding", None) or "utf-8").lower().replace("-", "")
    if encoding not in ("utf8", "utf_8", "utf8sig"):
        encode.ASCII_ONLY = True


def _output_error(exc: OSError) -> bool:
    """Whether ``exc`` is a failed write to stdout: a write error that names no file (an
    open, a stat or a read of a user's file does, and those are reported where they happen),
    or what is still buffered for stdout cannot be written either."""
    import errno

    writes = {errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EBADF, getattr(errno, "EDQUOT", -1)}
    return (exc.filename is None and exc.errno in writes) or _stdout_broken()


def _stdout_broken() -> bool:
    """Whether stdout cannot take what is written to it (a full disk, an I/O error): the
    data still buffered cannot be flushed."""
    try:
        sys.stdout.flush()
    except OSError:
        return True
    except (ValueError, AttributeError):
        return False
    return False


def _stop(code: int, message: str | None, argv: list[str]) -> None:
    """Print ``message`` (an ``Error:`` line, or a JSON object under ``--json``, through the
    CLI's one error printer; or ``Interrupted.``) and end with ``code`` at once: stdout's unwritable buffer is dropped, not
    flushed again at exit (which would print Python's own complaint)."""
    import os

    try:
        if message == "Interrupted.":
            sys.stderr.write(message + "\n")
        elif message is not None:
            from toolfind.cli.common import print_error

            print_error(message, argv)
        sys.stderr.flush()
    except (OSError, ValueError, KeyboardInterrupt):
        pass
    os._exit(code)


def _end(code: int) -> None:
    """End a one-shot command at once, with exit status ``code``, skipping the interpreter's
    teardown; return (for the caller to exit as usual) when that would not be safe.

    Python's exit frees every object one by one, memory the OS takes back anyway: once stdout
    and stderr are flushed and the ``atexit`` functions have run, the process simply ends. Not
    while a non-daemon thread runs (Python's exit would wait for it). A flush that fails with
    OSError (a closed pipe, a full disk) raises it, for :func:`main`'s guard to report.
    """
    import atexit
    import os

    threading = sys.modules.get("threading")
    if threading is not None and any(
        not t.daemon for t in threading.enumerate() if t is not threading.main_thread()
    ):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (ValueError, AttributeError):
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        code = 120  # what Python's exit returns when it cannot flush stdout
    os._exit(code)


if __name__ == "__main__":
    main()
