"""The user's files: capped regular-file reads, rewrites that keep mode, owner, symlinks and
every backup, and where ``toolfind.toml`` is found."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolfind.cli.app import app
from toolfind.userfiles import FileProblem, file_digest, find_config, read_capped, rewrite

runner = CliRunner()


def test_read_capped_refuses_devices_fifos_directories_and_oversized_files(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it for reading must not wait for a writer
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 11)
    cases = {
        "/dev/zero": "not a regular file (a device)",
        str(fifo): "not a regular file (a FIFO)",
        str(tmp_path): "not a regular file (a directory)",
        str(big): "file is 11 bytes, over the 10-byte limit",
        str(tmp_path / "missing"): "cannot read: No such file or directory",
    }
    for path, message in cases.items():
        with pytest.raises(FileProblem) as caught:
            read_capped(path, 10)
        assert caught.value.message == message
    assert read_capped(big, 11) == b"x" * 11


def test_rewrite_keeps_the_mode_and_keeps_every_previous_version(tmp_path: Path) -> None:
    tmp_path = tmp_path / "d"
    tmp_path.mkdir()
    target = tmp_path / "toolfind.toml"
    target.write_text("one\n", encoding="utf-8")
    target.chmod(0o644)
    first = rewrite(target, b"two\n")
    second = rewrite(target, b"three\n")
    assert (first, second) == (f"{target}.~1~", f"{target}.~2~")
    assert Path(first).read_text(encoding="utf-8") == "one\n"
    assert Path(second).read_text(encoding="utf-8") == "two\n"
    assert target.read_text(encoding="utf-8") == "three\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "toolfind.toml",
        "toolfind.toml.~1~",
        "toolfind.toml.~2~",
    ]  # no temporary file left


def test_rewrite_writes_through_a_symlink_to_its_target(tmp_path: Path) -> None:
    (tmp_path / "dotfiles").mkdir()
    real = tmp_path / "dotfiles" / "toolfind.toml"
    real.write_text("old\n", encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "toolfind.toml"
    link.symlink_to(Path("dotfiles") / "toolfind.toml")
    backup = rewrite(link, b"new\n")
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert backup == f"{real}.~1~" and Path(backup).read_text(encoding="utf-8") == "old\n"


def test_tune_write_keeps_mode_symlink_and_numbered_backups(tmp_path: Path) -> None:
    # Requests in the descriptions' words: a lower name weight serves every query, held out too.
    catalog = tmp_path / "cat.json"
    catalog.write_text(
        '[{"name": "paint_fence", "description": "Stain wooden boards."},'
        ' {"name": "stain_boards", "description": "Paint the garden fence."}]',
        encoding="utf-8",
    )
    queries = tmp_path / "q.yaml"
    queries.write_text(
        "- {query: paint a fence, relevant: [stain_boards], split: train}\n"
        "- {query: paint the fence white, relevant: [stain_boards], split: train}\n"
        "- {query: paint my fence, relevant: [stain_boards], split: test}\n",
        encoding="utf-8",
    )
    Path("dotfiles").mkdir()
    real = Path("dotfiles/toolfind.toml")
    original = f"catalogs = [{str(catalog)!r}]\n"
    real.write_text(original, encoding="utf-8")
    real.chmod(0o644)
    Path("toolfind.toml").symlink_to(real)
    for _ in range(2):
        done = runner.invoke(app, ["tune", str(queries), "--write", "--rounds", "1"])
        assert done.exit_code == 0, done.output
        assert "[weights]" in real.read_text(encoding="utf-8")
        real.write_text(original, encoding="utf-8")  # so that the next run writes again
    assert Path("toolfind.toml").is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    assert sorted(p.name for p in Path("dotfiles").iterdir()) == [
        "toolfind.toml",
        "toolfind.toml.~1~",
        "toolfind.toml.~2~",
    ]
    assert Path("dotfiles/toolfind.toml.~1~").read_text(encoding="utf-8") == original


def test_config_is_found_upwards_up_to_the_repository_root(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = home / "repo"
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    env = {"HOME": str(home)}
    assert find_config(env, str(deep)) is None
    (home / "toolfind.toml").write_text("", encoding="utf-8")
    assert find_config(env, str(deep)) is None  # beyond the repository root: not ours
    (repo / "toolfind.toml").write_text("", encoding="utf-8")
    assert find_config(env, str(deep)) == str(repo / "toolfind.toml")
    (deep / "toolfind.toml").write_text("", encoding="utf-8")
    assert find_config(env, str(deep)) == str(deep / "toolfind.toml")
    assert find_config({**env, "TOOLFIND_CONFIG": "/x.toml"}, str(deep)) == "/x.toml"
    assert find_config(env, None) is None  # no working directory


def test_config_lookup_stops_at_home_outside_a_repository(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "proj" / "sub").mkdir(parents=True)
    (home / "toolfind.toml").write_text("", encoding="utf-8")
    (tmp_path / "toolfind.toml").write_text("", encoding="utf-8")
    env = {"HOME": str(home)}
    assert find_config(env, str(home / "proj" / "sub")) == str(home / "toolfind.toml")
    assert find_config({"HOME": f"{home}/"}, str(home / "proj")) == str(home / "toolfind.toml")
    os.unlink(home / "toolfind.toml")
    assert find_config(env, str(home / "proj" / "sub")) is None  # not above home
    assert find_config({"HOME": f"{home}/"}, str(home / "proj")) is None  # however spelled


def test_file_digest_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_bytes(b"{}\n")
    assert file_digest(path) == hashlib.sha256(b"{}\n").hexdigest()
