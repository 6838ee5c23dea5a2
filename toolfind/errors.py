"""toolfind's exceptions. Core modules raise these; only the CLI turns them into exit codes.

Every error carries where the problem is (file, line, JSON path) so that its message is
one line naming the object, the place, and the fix.
"""

from __future__ import annotations

from collections.abc import Sequence


class ToolfindError(Exception):
    """Any error toolfind reports to a user (exit code 1, never a traceback).

    ``kind`` names the class of error in ``--json`` error objects; ``exit_code`` is the
    command line's exit status for it.
    """

    kind = "error"
    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        path: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.path = path

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.file and self.line else self.file
        return ": ".join([*(part for part in (where, self.path) if part), self.message])


class CatalogError(ToolfindError):
    """A catalog file, or an entry in one, cannot be read."""

    kind = "catalog"


class NothingLoaded(CatalogError):
    """The catalogs of a run hold no tool at all (empty, not catalogs, or every entry bad)."""

    kind = "nothing_loaded"


class ConfigError(ToolfindError):
    """``toolfind.toml``, a ``--weight`` or another setting is invalid."""

    kind = "config"


class UsageError(ConfigError):
    """A command-line option or argument has a bad value (exit code 2, as click's own)."""

    kind = "usage"
    exit_code = 2


class QueriesError(ToolfindError):
    """A queries file cannot be used: a line of ``search --queries``, or a labelled-queries
    file of ``eval``, ``tune`` and ``validate --queries`` (unreadable, malformed, or naming a
    tool no catalog has)."""

    kind = "queries"


class CacheError(ToolfindError):
    """The index cache cannot be used (toolfind carries on without it where it can)."""

    kind = "cache"


class ToolNotFound(ToolfindError):
    """No tool answers to a name. ``suggestions`` holds the closest names, best first."""

    kind = "not_found"

    def __init__(self, name: str, suggestions: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        message = f"No tool named {name!r}."
        if self.suggestions:
            message += f" Did you mean {self.suggestions[0]!r}?"
        super().__init__(message)


class AmbiguousName(ToolfindError):
    """A bare name matches tools in several namespaces; ``candidates`` lists them qualified."""

    kind = "ambiguous"

    def __init__(self, name: str, candidates: Sequence[str]) -> None:
        self.name = name
        self.candidates = tuple(candidates)
        listed = ", ".join(self.candidates)
        super().__init__(f"{name!r} is ambiguous: it matches {listed}. Use one of these names.")


class BackendError(ToolfindError):
    """A backend MCP server failed to start, crashed or did not answer."""

    kind = "backend"


class SemanticUnavailable(ToolfindError):
    """The semantic signal was asked for, but its optional extra is not installed."""

    kind = "semantic_unavailable"


class ModelUnavailable(ToolfindError):
    """The reranker was asked for, but its model (``toolfind model fetch``) or the semantic
    extra that runs it is not installed."""

    kind = "model_unavailable"


class ModelError(ToolfindError):
    """A model cannot be fetched, installed or removed (pip failed, a file is not the pinned
    one, a folder cannot be written)."""

    kind = "model"


class UsageStoreError(ToolfindError):
    """The usage store (what toolfind learned from use) cannot be used: another user owns or
    can write it, or it cannot be read or written."""

    kind = "usage_store"
