"""Tests for toolfind.catalog.discovery: finding catalog files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    load_one,
    messages,
    write,
)
from toolfind import catalog
from toolfind.errors import CatalogError

# --- discovery ---------------------------------------------------------------------------


def test_discover_walks_directories_sorted_and_skips_hidden_and_other_files(tmp_path: Path) -> None:
    for name in (
        "b.yaml",
        "a.json",
        "sub/c.jsonl",
        "sub/d.yml",
        "notes.txt",
        ".hidden/e.json",
        ".f.json",
    ):
        write(tmp_path / name, "{}")
    found = catalog.discover([tmp_path]).files
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a.json",
        "b.yaml",
        "sub/c.jsonl",
        "sub/d.yml",
    ]


def test_discover_keeps_paths_as_given(tmp_path: Path) -> None:
    write(tmp_path / "cats/a.json", "{}")
    assert catalog.discover([Path("../cats")]).files == [Path("../cats/a.json")]


def test_discover_ends_on_a_symlink_loop(tmp_path: Path) -> None:
    write(tmp_path / "cats/a.json", "{}")
    os.symlink(tmp_path / "cats", tmp_path / "cats" / "loop")
    os.symlink("self", tmp_path / "cats" / "self")
    assert catalog.discover([tmp_path / "cats"]).files == [tmp_path / "cats" / "a.json"]


def test_discover_lists_a_file_reached_twice_once(tmp_path: Path) -> None:
    path = write(tmp_path / "a.json", "{}")
    assert catalog.discover([tmp_path, path]).files == [path]


def test_discover_reports_each_directory_it_listed_with_its_stat_and_names(tmp_path: Path) -> None:
    write(tmp_path / "cats/sub/a.json", "{}")
    write(tmp_path / "cats/.hidden/b.json", "{}")
    write(tmp_path / "cats/README.md", "x")
    found = catalog.discover([tmp_path / "cats"])
    assert [(d.relative_to(tmp_path).as_posix(), names) for d, _, names in found.dirs] == [
        ("cats", (".hidden", "README.md", "sub")),
        ("cats/sub", ("a.json",)),
    ]
    assert all(st.st_ino == os.stat(d).st_ino for d, st, _ in found.dirs)
    assert [st.st_ino for st in found.stats] == [os.stat(tmp_path / "cats/sub/a.json").st_ino]


def test_a_missing_path_raises_a_one_line_catalog_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as caught:
        catalog.load([Path("nope/web.yaml")])
    assert str(caught.value) == "nope/web.yaml: no such file or directory"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_catalog_directory_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    write(tmp_path / "ok.json", {"name": "ok"})
    result = catalog.load([Path(os.path.relpath(tmp_path))])  # would hang if opened
    assert [t.name for t in result.tools] == ["ok"]
    assert messages(result) == ["../pipe.json: not a regular file (a FIFO); skipped"]
    assert result.findings[0].severity == "warning"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_given_by_name_is_an_error(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    assert messages(load_one(tmp_path / "pipe.json")) == [
        "../pipe.json: not a regular file (a FIFO); skipped"
    ]


def test_a_file_given_by_name_with_another_suffix_is_an_error(tmp_path: Path) -> None:
    assert messages(load_one(write(tmp_path / "tools.txt", "{}"))) == [
        "../tools.txt: not a catalog file: expected .json, .yaml, .yml or .jsonl"
    ]


def test_an_unreadable_file_is_a_finding_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "a.json", {"name": "a"})
    write(tmp_path / "b.json", {"name": "b"})
    real_open = os.open

    def deny(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith("a.json"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny)
    result = catalog.load([Path("..")])
    assert [t.name for t in result.tools] == ["b"]
    assert messages(result) == ["../a.json: cannot read: Permission denied"]


# --- misc ----------------------------------------------------------------------------------
