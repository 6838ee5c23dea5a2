"""Shell completion of values: tool names, namespaces and tags, from the warm index.

Read from the index file an earlier identical run recorded (``store.run``), in place: a
completion never builds an index, and says nothing when there is none (a cold cache, other
catalogs): the shell then offers nothing, as for any value it cannot know.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def completer(what: str) -> Callable[..., list[str]]:
    """The Typer ``autocompletion`` callback completing ``what`` (``tool``, ``namespace`` or
    ``tag``: ``commands.COMPLETIONS``) for the catalogs the command line names so far."""

    def complete(ctx: object, incomplete: str) -> list[str]:
        # ``ctx`` is click's context (Typer passes it by this name); its ``params`` hold the
        # options parsed so far: the completion reads the catalogs they name.
        params: dict[str, Any] = getattr(ctx, "params", None) or {}
        return candidates(what, tuple(params.get("catalog") or ()), incomplete)

    return complete


def candidates(what: str, catalogs: tuple[str, ...], incomplete: str) -> list[str]:
    """The values of kind ``what`` in the recorded index of a run over ``catalogs`` that
    start with ``incomplete``, sorted; [] when there is no such index."""
    from toolfind.store.run import open_recorded_segment

    seg = open_recorded_segment(catalogs, lambda line: None)
    if seg is None:
        return []
    try:
        values = seg.vocabulary(what)
    finally:
        seg.fh.close()
    return sorted(v for v in values if v.startswith(incomplete))
