"""toolfind: make large LLM tool catalogs searchable.

The Python API::

    import toolfind
    index = toolfind.open_index()            # same catalog resolution as the CLI
    for hit in index.search("compress file"):
        print(hit.name, hit.score)
"""

from __future__ import annotations

from toolfind.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from toolfind.models import Signals
    from toolfind.store.index import SearchIndex

__all__ = ["__version__", "open_index"]


def open_index(
    catalogs: Sequence[str | Path] | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    use_cache: bool = True,
    signals: Signals | None = None,
    semantic: bool | None = None,
    semantic_weight: float | None = None,
    rerank: bool | None = None,
) -> SearchIndex:
    """Load (from the cache) or build the index over ``catalogs``.

    With no catalogs, resolves them as the CLI does: ``$TOOLFIND_CATALOGS``, then ``catalogs``
    in ``toolfind.toml``, then ``./catalogs``, then the catalogs shipped with toolfind.
    ``weights`` overrides some field weights (``{"name": 5}``).

    The signals beyond BM25F are set as everywhere else: these arguments, then
    ``$TOOLFIND_SEMANTIC``/``$TOOLFIND_RERANK``, then ``toolfind.toml``, then the defaults.
    ``signals`` (a :class:`toolfind.models.Signals`) gives every signal setting at once
    (a switch None in it: as configured); ``semantic``, ``semantic_weight`` and ``rerank``
    give one each, over it.

    ``semantic``: fuse the semantic signal into every search (``pip install
    "toolfind[semantic]"``). None (the default): on when the extra is installed, unless
    ``semantic = false`` in ``toolfind.toml``; True: on, or SemanticUnavailable saying how to
    get it; False: lexical only. ``semantic_weight`` (0..1) overrides the fusion weight.

    ``rerank``: re-score each search's top candidates with the all-MiniLM-L6-v2 reranker
    (``toolfind model fetch`` installs it). None (the default): on when the model is
    installed (with the ``semantic`` extra that runs it), unless ``rerank = false`` in
    ``toolfind.toml``; True: on, or ModelUnavailable saying how to get it; False: off.

    Raises ToolfindError subclasses (CatalogError, ConfigError, SemanticUnavailable,
    ModelUnavailable) for bad input; entries that cannot be read are skipped.
    """
    from toolfind.store.run import open_run_index

    asked = {} if signals is None else signals.settings()
    given = {"semantic": semantic, "semantic_weight": semantic_weight, "rerank": rerank}
    asked |= {name: value for name, value in given.items() if value is not None}
    loaded = open_run_index(
        catalogs or (), weights=weights or {}, signals=asked, use_cache=use_cache
    )
    index: SearchIndex = loaded.index
    index.accelerate()  # an API user asks many queries: numpy (if installed) pays for itself
    return index
