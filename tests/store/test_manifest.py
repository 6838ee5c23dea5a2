"""The cache manifest and the one change check (toolfind/store/manifest.py): stamps, racy
stamps settled by content, records of directories and files, on real files. The cache's hits
(through ``recorded_key``) and serve-mcp's watcher (``LiveIndex.catalogs_changed``, tested in
tests/serve/test_serve.py) both ask ``manifest.check``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from toolfind.store import cache, manifest


def tools(name: str) -> str:
    return json.dumps([{"name": name, "description": "launch the rocket now"}])


def test_the_cache_directory_follows_the_environment(tmp_path: Path) -> None:
    assert manifest.default_cache_dir({"TOOLFIND_CACHE_DIR": str(tmp_path)}) == str(tmp_path)
    if sys.platform.startswith("linux"):
        xdg = {"HOME": "/h", "XDG_CACHE_HOME": "/x"}
        assert manifest.default_cache_dir(xdg) == "/x/toolfind"
        assert manifest.default_cache_dir({"HOME": "/h"}) == "/h/.cache/toolfind"


def test_a_record_stops_holding_when_a_file_is_edited_replaced_or_removed() -> None:
    Path("cats").mkdir()
    path = Path("cats/tools.json")
    path.write_text("[]", encoding="utf-8")
    recorded = manifest.take([Path("cats")])
    assert [row[0] for row in recorded["files"]] == [str(path.absolute())]
    assert manifest.check(recorded) is not None
    os.utime(path, ns=(0, 12345))  # the same size, another modification time
    assert manifest.check(recorded) is None
    recorded = manifest.take([Path("cats")])
    other = Path("other.json")
    other.write_text("[]", encoding="utf-8")
    os.utime(other, ns=(0, 12345))
    os.replace(other, path)  # the same size and time, another inode
    assert manifest.check(recorded) is None
    recorded = manifest.take([Path("cats")])
    path.unlink()
    assert manifest.stamp(path) == manifest.MISSING
    assert manifest.check(recorded) is None


@pytest.mark.parametrize("damaged", [None, (), {"dirs": [("x", 1)], "files": ()}, {"dirs": ()}])
def test_anything_but_a_record_never_holds(damaged: Any) -> None:
    assert manifest.check(damaged) is None


def test_a_racy_stamp_holds_by_its_content_until_it_settles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    Path("cat.json").write_text(tools("alpha_tool"), encoding="utf-8")
    recorded = manifest.take([Path("cat.json")])
    # Just written: racy, so the record carries the file's digest (and the root's).
    contents = dict(recorded["contents"])
    assert contents[str(Path("cat.json").absolute())] == manifest.content_of("cat.json")
    assert manifest.check(recorded) is recorded  # still racy: checked, kept as it is
    # The same stamps, another content (an edit within one timestamp tick): changed.
    lying = {**recorded, "contents": tuple((p, "0" * 64) for p in contents)}
    assert manifest.check(lying) is None
    # Once nothing is racy any more, a verified record drops its contents: stat calls only.
    monkeypatch.setattr(manifest, "RACY_NS", -(10**18))
    settled = manifest.check(recorded)
    assert settled is not None and "contents" not in settled
    assert manifest.check(settled) is settled


def test_a_directory_change_is_seen_without_a_walk_and_told_apart_from_a_catalog_change() -> None:
    Path("cats/sub").mkdir(parents=True)
    Path("cats/a.json").write_text(tools("alpha_tool"), encoding="utf-8")
    recorded = manifest.take([Path("cats")])
    # An editor's swap file beside the catalogs: the directory changed, no catalog file did.
    Path("cats/.a.json.swp").write_text("x", encoding="utf-8")
    assert manifest.check(recorded) is None
    now = manifest.take([Path("cats")])
    assert manifest.same_files(recorded, now)
    # A catalog file added deep down: its directory's stamp says so.
    Path("cats/sub/b.json").write_text(tools("beta_tool"), encoding="utf-8")
    assert manifest.check(now) is None
    assert not manifest.same_files(now, manifest.take([Path("cats")]))


def test_a_missing_root_is_recorded_and_its_appearance_seen() -> None:
    recorded = manifest.take([Path("later.json")])
    assert recorded["files"] == () and manifest.check(recorded) is not None
    Path("later.json").write_text(tools("late_tool"), encoding="utf-8")
    assert manifest.check(recorded) is None
    assert not manifest.same_files(recorded, manifest.take([Path("later.json")]))


def test_a_load_records_the_roots_the_default_catalogs_and_every_directory(isolated: Path) -> None:
    Path("cats/sub").mkdir(parents=True)
    Path("cats/sub/a.json").write_text(tools("alpha_tool"), encoding="utf-8")
    run_key = manifest.run_key(("cats",))
    loaded = cache.load_index([Path("cats")], run_key=run_key)
    (entry,) = manifest.read(str(isolated))["runs"].values()
    here = Path.cwd()
    assert entry["key"] == loaded.key
    assert [row[0] for row in entry["dirs"]] == [
        str(here / "catalogs"),
        str(here / "cats"),
        str(here / "cats"),
        str(here / "cats" / "sub"),
    ]
    assert [row[0] for row in entry["files"]] == [str(here / "cats" / "sub" / "a.json")]
    assert manifest.recorded_key(str(isolated), run_key) == loaded.key
    Path("catalogs").mkdir()  # the default catalogs appear: another answer may apply
    assert manifest.recorded_key(str(isolated), run_key) is None


def test_what_a_removed_catalog_left_in_the_manifest_is_pruned(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Digests of files no recorded run refers to, the runs of a directory that is gone and
    their build inputs are dropped on the next write (and by a warm run when the manifest
    is large), so one big catalog indexed once never slows every later warm run."""
    import shutil

    monkeypatch.setattr(manifest, "RACY_NS", -(10**18))  # nothing racy: digests are recorded
    Path("tiny.json").write_text(tools("tiny_tool"), encoding="utf-8")
    for n in range(40):
        Path(f"big/f{n}.json").parent.mkdir(exist_ok=True)
        Path(f"big/f{n}.json").write_text(tools(f"big_{n}"), encoding="utf-8")
    root = str(isolated)
    tiny = manifest.run_key(("tiny.json",))
    cache.load_index([Path("tiny.json")], run_key=tiny)
    big = manifest.run_key(("big",))
    cache.load_index([Path("big")], run_key=big)
    assert len(manifest.read(root)["shas"]) == 41 and len(manifest.read(root)["keys"]) == 2
    shutil.rmtree("big")
    # The next run that records (another query context over tiny.json) prunes.
    other = manifest.run_key(("tiny.json",), ("name=3",))
    cache.load_index([Path("tiny.json")], run_key=other)
    kept = manifest.read(root)
    here = str(Path.cwd())
    assert set(kept["runs"]) == {tiny, other}
    assert set(kept["shas"]) == {os.path.join(here, "tiny.json")}
    assert len(kept["keys"]) == 1
    # The warm path tidies a large manifest itself, without any run recording.
    Path("big").mkdir()
    Path("big/f.json").write_text(tools("big_again"), encoding="utf-8")
    cache.load_index([Path("big")], run_key=big)
    shutil.rmtree("big")
    assert big in manifest.read(root)["runs"]
    monkeypatch.setattr(manifest, "TIDY_BYTES", 0)
    assert manifest.recorded_key(root, tiny) is not None
    assert set(manifest.read(root)["runs"]) == {tiny, other}


def test_the_run_key_names_the_install_and_what_paths_expand_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two installs (or versions) sharing a cache, or two HOMEs, never share a warm answer:
    the key holds toolfind's version, the shipped catalogs' place, $HOME and the user-wide
    config with its stamp."""
    from toolfind import userfiles, version

    key = manifest.run_key(())
    with monkeypatch.context() as patch:
        patch.setattr(version, "__version__", "9.9.9")
        assert manifest.run_key(()) != key
    with monkeypatch.context() as patch:
        patch.setattr(manifest, "shipped_catalogs", lambda: str(tmp_path / "other-install"))
        assert manifest.run_key(()) != key
    assert manifest.run_key(()) == key
    monkeypatch.setenv("HOME", str(tmp_path / "h2"))
    other_home = manifest.run_key(())
    assert other_home != key
    user = Path(userfiles.user_config(os.environ))
    user.parent.mkdir(parents=True)
    user.write_text("k1 = 2\n", encoding="utf-8")
    with_config = manifest.run_key(())
    assert with_config != other_home
    user.write_text("k1 = 1.5\n", encoding="utf-8")
    assert manifest.run_key(()) != with_config
