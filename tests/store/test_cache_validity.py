"""What decides a cache hit (store/manifest.py ``stamp``/``check``/``recorded_key``,
store/cache.py): an edit that keeps size and mtime, another project at the same relative
path, the load order, a file added during a build, racy stamps, the skipped files of another
invocation; and the cache directory's own files, the only ones ``cache clear`` removes.
Every case through the real cache, on real files, by the fast path and by Typer."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from toolfind.cli import fast as fastpath
from toolfind.cli.app import app
from toolfind.store import cache, manifest, segment

runner = CliRunner()


def tools(name: str, description: str = "launch the rocket now") -> str:
    return json.dumps([{"name": name, "description": description}])


def typer_json(*args: str) -> Any:
    done = runner.invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def fast_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    capsys.readouterr()
    assert fastpath.run([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def hit_names(document: Any) -> list[str]:
    return [h["name"] for h in document["hits"]]


def test_an_edit_keeping_size_mtime_and_inode_is_seen_by_both_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("cat.json").write_text(tools("alpha_tool"), encoding="utf-8")
    Path("new.json").write_text(tools("omega_tool"), encoding="utf-8")  # same size
    old = os.stat("cat.json")
    assert hit_names(typer_json("search", "rocket", "-c", "cat.json")) == ["alpha_tool"]
    assert hit_names(fast_json(capsys, "search", "rocket", "-c", "cat.json")) == ["alpha_tool"]
    # cp -p: the same inode, its content replaced, the old mtime restored; only ctime moves
    Path("cat.json").write_bytes(Path("new.json").read_bytes())
    os.utime("cat.json", ns=(old.st_atime_ns, old.st_mtime_ns))
    now = os.stat("cat.json")
    assert (now.st_size, now.st_mtime_ns, now.st_ino) == (old.st_size, old.st_mtime_ns, old.st_ino)
    assert fastpath.run(["search", "rocket", "-c", "cat.json", "--json"]) is None  # declined
    assert hit_names(typer_json("search", "rocket", "-c", "cat.json")) == ["omega_tool"]
    assert hit_names(fast_json(capsys, "search", "rocket", "-c", "cat.json")) == ["omega_tool"]


def test_the_fast_path_declines_a_record_whose_file_changed_under_the_same_mtime() -> None:
    Path("cat.json").write_text(tools("alpha_tool"), encoding="utf-8")
    assert typer_json("show", "alpha_tool", "-c", "cat.json")["name"] == "alpha_tool"
    old = os.stat("cat.json")
    Path("cat.json").write_text(tools("omega_tool"), encoding="utf-8")
    os.utime("cat.json", ns=(old.st_atime_ns, old.st_mtime_ns))
    assert fastpath.run(["show", "omega_tool", "-c", "cat.json", "--json"]) is None
    os.environ["TOOLFIND_NO_FASTPATH"] = "1"
    try:
        assert typer_json("show", "omega_tool", "-c", "cat.json")["name"] == "omega_tool"
    finally:
        del os.environ["TOOLFIND_NO_FASTPATH"]


def test_another_project_at_the_same_relative_path_and_stat_gets_its_own_tools() -> None:
    for project, name in (("a", "alpha_tool"), ("b", "omega_tool")):
        Path(project, "catalogs").mkdir(parents=True)
        Path(project, "catalogs", "t.json").write_text(tools(name), encoding="utf-8")
        os.utime(Path(project, "catalogs", "t.json"), ns=(1, 1))  # a normalised mtime
    os.chdir("a")
    assert hit_names(typer_json("search", "rocket")) == ["alpha_tool"]
    os.chdir("../b")
    assert hit_names(typer_json("search", "rocket")) == ["omega_tool"]


def test_the_load_order_decides_the_cached_index_as_it_decides_duplicates() -> None:
    for part in "ab":
        Path(f"{part}.yaml").write_text(
            "namespace: shared\ntools:\n"
            f"  - {{name: dup_tool, description: version from {part.upper()} file}}\n",
            encoding="utf-8",
        )
    first = typer_json("show", "dup_tool", "-c", "a.yaml", "-c", "b.yaml")
    second = typer_json("show", "dup_tool", "-c", "b.yaml", "-c", "a.yaml")
    assert first["description"] == "version from A file"
    assert second["description"] == "version from B file"


def test_skipped_files_warnings_belong_to_their_invocation() -> None:
    os.mkfifo("tools.json")
    Path("real.json").write_text(tools("alpha_tool"), encoding="utf-8")  # the same in both
    fifo = runner.invoke(app, ["search", "x", "-c", "real.json", "-c", "tools.json", "--json"])
    device = runner.invoke(app, ["search", "x", "-c", "real.json", "-c", "/dev/zero", "--json"])
    assert fifo.exit_code == device.exit_code == 0
    assert "Warning: skipped tools.json: not a regular file (a FIFO)" in fifo.stderr
    assert "tools.json" not in device.stderr
    assert "Warning: skipped /dev/zero: not a regular file (a device)" in device.stderr


def test_a_file_added_while_the_index_is_built_is_seen_afterwards(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("dr").mkdir()
    Path("dr/a.json").write_text(tools("first_tool", "zebra one"), encoding="utf-8")
    build = cache._build

    def build_then_add(*args: Any, **kwargs: Any) -> Any:
        loaded = build(*args, **kwargs)
        Path("dr/new.json").write_text(tools("zzz_new", "zebra two"), encoding="utf-8")
        return loaded

    monkeypatch.setattr(cache, "_build", build_then_add)
    assert hit_names(typer_json("search", "zebra", "-c", "dr")) == ["first_tool"]
    monkeypatch.setattr(cache, "_build", build)
    assert fastpath.run(["search", "zebra", "-c", "dr", "--json"]) is None
    assert "zzz_new" in hit_names(typer_json("search", "zebra", "-c", "dr"))
    assert "zzz_new" in hit_names(fast_json(capsys, "search", "zebra", "-c", "dr"))


def _entry(root: Path) -> dict[str, Any]:
    (entry,) = manifest.read(str(root))["runs"].values()
    assert isinstance(entry, dict)
    return entry


def test_racy_stamps_are_checked_by_content_until_they_settle(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Path("cat.json").write_text(tools("alpha_tool"), encoding="utf-8")
    run_key = manifest.run_key(("cat.json",))
    loaded = cache.load_index([Path("cat.json")], run_key=run_key)
    # Just written: its stamp is racy, so the record carries the file's digest.
    contents = dict(_entry(isolated)["contents"])
    assert contents[str(Path.cwd() / "cat.json")] == manifest.content_of("cat.json")
    assert manifest.recorded_key(str(isolated), run_key) == loaded.key
    # A digest that no longer matches is a miss, whatever the stamps say.
    recorded = manifest.read(str(isolated))
    entry = recorded["runs"][run_key]
    entry["contents"] = tuple(
        (p, "0" * 64 if p.endswith(".json") else c) for p, c in contents.items()
    )
    manifest.save(str(isolated), recorded)
    assert manifest.recorded_key(str(isolated), run_key) is None
    cache.load_index([Path("cat.json")], run_key=run_key)  # records it again
    # Once nothing is racy any more, a verified entry drops its contents: stat calls only.
    monkeypatch.setattr(manifest, "RACY_NS", -(10**18))
    assert manifest.recorded_key(str(isolated), run_key) == loaded.key
    assert "contents" not in _entry(isolated)
    assert manifest.recorded_key(str(isolated), run_key) == loaded.key


def test_cache_clear_and_info_touch_only_toolfinds_own_files(isolated: Path) -> None:
    Path("cat.json").write_text(tools("alpha_tool"), encoding="utf-8")
    assert typer_json("search", "rocket", "-c", "cat.json")["hits"]
    mine = sorted(p.name for p in isolated.iterdir())
    assert mine == sorted([manifest.MANIFEST_NAME, only_index(isolated)])
    theirs = {
        "model.pickle": "my trained model",
        "notes.tmp": "draft",
        "part1.seg": "seg",
        "readme.txt": "keep",
        ".notes.txt.abc.tmp": "editor",
        "toolfind-notes.pickle": "not an index name",
    }
    for name, text in theirs.items():
        (isolated / name).write_text(text, encoding="utf-8")
    legacy = ["0123456789abcdef0123456789abcdef.pickle", "manifest.marshal"]
    for name in legacy:
        (isolated / name).write_bytes(b"old")
    info = typer_json("cache", "info")
    assert sorted(f["file"] for f in info["files"]) == sorted([*mine, *legacy])
    assert info["indexes"] == 2
    done = runner.invoke(app, ["cache", "clear"])
    assert done.exit_code == 0 and done.stdout == "Removed 4 cache files.\n"
    assert sorted(p.name for p in isolated.iterdir()) == sorted(theirs)
    for name, text in theirs.items():
        assert (isolated / name).read_text(encoding="utf-8") == text


def only_index(root: Path) -> str:
    (found,) = [p.name for p in root.iterdir() if p.name.endswith(segment.INDEX_SUFFIX)]
    assert found.endswith(segment.INDEX_SUFFIX) and found != manifest.MANIFEST_NAME
    return found


def test_is_own_file_knows_the_temporary_files_of_its_writes() -> None:
    assert cache.is_own_file(".toolfind-manifest.marshal.k2j3.tmp")
    assert cache.is_own_file(f".toolfind-{'a' * 32}.pickle.x_1.tmp")
    assert not cache.is_own_file(".toolfind.tmp")
    assert not cache.is_own_file(".notes.txt.abc.tmp")


def test_is_own_file_knows_the_semantic_vectors_and_nothing_like_them() -> None:
    key = "b" * 32
    assert cache.is_own_file(f"toolfind-{key}.wordllama-0.4.0.post1-l2_supercat-256.vec")
    assert cache.is_own_file(f".toolfind-{key}.wordllama-0.4.0.post1.vec.x_1.tmp")
    assert not cache.is_own_file("toolfind-notes.vec")
    assert not cache.is_own_file(f"{key}.wordllama.vec")  # not toolfind's name
    assert not cache.is_own_file("model.vec")


def test_a_config_created_in_a_parent_directory_is_seen_by_the_next_warm_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Path(".git").mkdir()
    Path("sub/catalogs").mkdir(parents=True)
    Path("sub/catalogs/here.json").write_text(tools("here_tool"), encoding="utf-8")
    Path("there").mkdir()
    Path("there/t.json").write_text(tools("there_tool"), encoding="utf-8")
    monkeypatch.chdir("sub")
    assert hit_names(typer_json("search", "rocket")) == ["here_tool"]
    assert hit_names(fast_json(capsys, "search", "rocket")) == ["here_tool"]
    Path("../toolfind.toml").write_text('catalogs = ["there"]\n', encoding="utf-8")
    assert fastpath.run(["search", "rocket", "--json"]) is None  # another config applies
    assert hit_names(typer_json("search", "rocket")) == ["there_tool"]
