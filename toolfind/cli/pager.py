"""A pager for long human output on a terminal, as git does it.

``TOOLFIND_PAGER``, else ``PAGER``, else ``less`` with ``LESS=FRX`` when ``LESS`` is unset
(``-F`` quits at once when the output fits on one screen, ``-R`` shows colours, ``-X`` leaves
the text on the screen). An empty value or ``cat`` means no pager. Never when stdout is not a
terminal (a pipe, a file, a test), never for ``--json`` or the machine formats, and not with
``--no-pager``. No typer here: the warm fast path pages with it too.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from contextlib import AbstractContextManager
    from typing import Any


def pager_command(environ: Mapping[str, str]) -> str | None:
    """The pager to run, or None for none (see the module docstring)."""
    for name in ("TOOLFIND_PAGER", "PAGER"):
        if name in environ:
            command = environ[name].strip()
            return None if command in ("", "cat") else command
    import shutil

    return "less" if shutil.which("less") else None


class _Terminal:
    """The pager's input, standing in for stdout: it says it is a terminal, so the output
    is drawn for the terminal the pager shows it on (Rich reads that terminal's width)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def isatty(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def paged(enabled: bool = True) -> AbstractContextManager[None]:
    """Send what is printed to stdout inside through the pager, when stdout is a terminal
    and ``enabled``; a reader that quits early (``q`` in less) is not an error."""
    from contextlib import contextmanager

    @contextmanager
    def pager() -> Iterator[None]:
        command = pager_command(os.environ) if enabled and _is_terminal(sys.stdout) else None
        if command is None:
            yield
            return
        import io
        import subprocess

        env = dict(os.environ)
        env.setdefault("LESS", "FRX")
        env.setdefault("LV", "-c")
        real = sys.stdout
        try:
            real.flush()
            process = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
        except OSError:
            yield  # no pager after all: print as usual
            return
        assert process.stdin is not None
        pipe = io.TextIOWrapper(process.stdin, encoding=real.encoding or "utf-8", errors="replace")
        sys.stdout = _Terminal(pipe)
        try:
            yield
        except BrokenPipeError:
            pass  # the reader quit the pager before the end
        finally:
            sys.stdout = real
            try:
                pipe.close()
            except OSError:
                pass
            process.wait()

    return pager()


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
