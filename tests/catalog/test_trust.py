"""Nothing another user wrote is trusted: a toolfind.toml, servers file or catalog that toolfind
finds (rather than is given) and that someone other than you or root owns, or that sits in a
directory others can write without the sticky bit's protection, is ignored with one warning
naming it and how to trust it (``userfiles.trust_problem``, ``config.load_config``).

The owner cases need root (to give a file to ``nobody``), as CI runs them; elsewhere they skip.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import pytest

from tests.helpers import write
from toolfind.config import for_run, load_config, packaged_catalogs
from toolfind.errors import ConfigError
from toolfind.userfiles import trust_problem, user_config

try:
    NOBODY = pwd.getpwnam("nobody").pw_uid
except KeyError:  # pragma: no cover - every Linux has it
    NOBODY = -1

as_root = pytest.mark.skipif(
    not hasattr(os, "getuid") or os.getuid() != 0 or NOBODY < 0,
    reason="giving a file to another user (nobody) needs root",
)


def give_away(path: Path) -> None:
    """Make ``nobody`` own ``path`` (a symlink itself, not its target)."""
    os.chown(path, NOBODY, -1, follow_symlinks=False)


def shared(directory: Path, mode: int = 0o777) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(mode)
    return directory


def user_settings(text: str) -> Path:
    return write(Path(user_config(os.environ)), text)


# -- the rule: owners and modes, every component, symlinks --------------------------------------


def test_your_own_files_in_your_own_directories_are_trusted(tmp_path: Path) -> None:
    config = write(tmp_path / "proj" / "toolfind.toml", "k1 = 2\n")
    assert trust_problem(config) is None
    assert trust_problem(tmp_path / "proj" / "not-yet.json") is None  # missing: its place counts


def test_a_directory_others_can_write_makes_everything_below_it_untrusted(tmp_path: Path) -> None:
    config = write(shared(tmp_path / "open") / "proj" / "toolfind.toml", "k1 = 2\n")
    assert trust_problem(config) == f"{tmp_path / 'open'} is writable by every user (mode 0777)"
    assert trust_problem(tmp_path / "open" / "toolfind.toml") == (
        f"{tmp_path / 'open'} is writable by every user (mode 0777)"
    )


def test_the_sticky_bit_protects_what_you_own_in_a_shared_directory(tmp_path: Path) -> None:
    """/tmp: everyone may create files, nobody may replace another's."""
    config = write(shared(tmp_path / "tmp", 0o1777) / "toolfind.toml", "k1 = 2\n")
    assert trust_problem(config) is None


def test_group_write_counts_unless_the_group_is_yours_alone(tmp_path: Path) -> None:
    import grp

    others = next((g for g in grp.getgrall() if g.gr_gid != os.getgid() and g.gr_gid != 0), None)
    if others is None:
        pytest.skip("no group here but the user's own")
    directory = shared(tmp_path / "team", 0o775)
    config = write(directory / "toolfind.toml", "k1 = 2\n")
    assert trust_problem(config) is None  # root's group: only root in it
    os.chown(directory, -1, others.gr_gid)
    assert trust_problem(config) == (
        f"{directory} is writable by the group {others.gr_name} (mode 0775)"
    )


@as_root
def test_a_file_another_user_owns_is_untrusted_wherever_it_is(tmp_path: Path) -> None:
    config = write(tmp_path / "toolfind.toml", "k1 = 2\n")
    give_away(config)
    assert trust_problem(config) == "it is owned by nobody (uid 65534)"
    subdir = tmp_path / "theirs"
    subdir.mkdir()
    mine = write(subdir / "toolfind.toml", "k1 = 2\n")
    give_away(subdir)  # they may rename it and put another file in its place
    assert trust_problem(mine) == f"{subdir} is owned by nobody (uid 65534)"


@as_root
def test_symlinks_are_checked_both_as_found_and_where_they_lead(tmp_path: Path) -> None:
    theirs = write(tmp_path / "theirs.toml", "k1 = 2\n")
    give_away(theirs)
    link = tmp_path / "proj" / "toolfind.toml"
    link.parent.mkdir()
    link.symlink_to(theirs)  # your link to their file
    assert trust_problem(link) == f"{theirs} is owned by nobody (uid 65534)"
    mine = write(tmp_path / "mine.toml", "k1 = 2\n")
    other = tmp_path / "other" / "toolfind.toml"
    other.parent.mkdir()
    other.symlink_to(mine)
    give_away(other)  # their link to your file: they chose what it says
    assert trust_problem(other) == "it is owned by nobody (uid 65534)"


def test_safe_directories_vouch_as_gits_safe_directory_does(tmp_path: Path) -> None:
    config = write(shared(tmp_path / "open") / "proj" / "toolfind.toml", "k1 = 2\n")
    project = str(tmp_path / "open" / "proj")
    assert trust_problem(config, [project]) is None  # the directory holding it, exactly
    assert trust_problem(config, [str(tmp_path / "open")]) is not None  # not a parent
    assert trust_problem(config, [str(tmp_path / "open") + "/*"]) is None  # DIR/*: below too
    assert trust_problem(config, ["*"]) is None
    assert trust_problem(tmp_path / "open" / "proj", [project]) is None  # a directory itself


# -- what load_config and for_run do with it -----------------------------------------------------


@as_root
@pytest.mark.parametrize("where", ["parent", "cwd"])
def test_a_config_another_user_owns_is_ignored_with_a_warning_saying_how_to_trust_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    top = shared(tmp_path / "shared", 0o1777)
    work = top / "work"
    work.mkdir()
    config = write((top if where == "parent" else work) / "toolfind.toml", "k1 = 2\n")
    give_away(config)
    monkeypatch.chdir(work)
    loaded = load_config()
    assert loaded.path is None and loaded.params.k1 == 3.0
    (line,) = loaded.warnings
    assert line == (
        f"Warning: ignoring {config}: it is owned by nobody (uid 65534); if you trust it, "
        f"pass --config {config} or add {config.parent} to safe_directories in "
        f"{user_config(os.environ)}"
    )
    monkeypatch.setenv("TOOLFIND_CONFIG", str(config))  # named: trusted as given
    assert load_config().params.k1 == 2.0 and not load_config().warnings
    monkeypatch.delenv("TOOLFIND_CONFIG")
    user_settings(f'safe_directories = ["{config.parent}"]\n')
    assert load_config().params.k1 == 2.0 and not load_config().warnings


def test_a_config_in_a_directory_others_can_write_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = shared(tmp_path / "open") / "work"
    work.mkdir()
    write(tmp_path / "open" / "toolfind.toml", 'servers = ["evil.json"]\n')
    monkeypatch.chdir(work)
    config = load_config()
    assert config.servers == () and config.path is None
    assert "is writable by every user (mode 0777)" in config.warnings[0]


def test_safe_directories_are_read_only_from_the_user_wide_config(tmp_path: Path) -> None:
    write(tmp_path / "toolfind.toml", 'safe_directories = ["/tmp"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'toolfind.toml'}: safe_directories: safe_directories is read only from "
        f"your user-wide config ({user_config(os.environ)}): move it there"
    )
    with pytest.raises(ConfigError, match="not an absolute directory"):
        user_settings('safe_directories = ["relative/dir"]\n')
        load_config(cwd=tmp_path)


@as_root
def test_a_user_wide_config_another_user_owns_is_ignored(tmp_path: Path) -> None:
    """As under ``sudo -E``: root's run must not read the invoking user's settings."""
    user = user_settings('servers = ["/x/mcp.json"]\nk1 = 2\n')
    give_away(user)
    config = load_config(cwd=tmp_path)
    assert config.user_path is None and config.servers == () and config.params.k1 == 3.0
    assert config.warnings == (
        f"Warning: ignoring {user}: it is owned by nobody (uid 65534); if you trust it, "
        f"pass --config {user}",
    )


@as_root
def test_servers_files_and_catalogs_a_config_names_are_checked_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drop = shared(tmp_path / "drop", 0o1777)
    evil = write(drop / "evil.json", '{"mcpServers": {}}')
    give_away(evil)
    theirs = shared(tmp_path / "theirs-catalogs", 0o755)
    give_away(theirs)
    write(
        Path("toolfind.toml"),
        f'servers = ["{evil}", "mine.json"]\ncatalogs = ["{theirs}", "cats"]\n',
    )
    config = load_config()
    here = Path.cwd()
    assert config.servers == (here / "mine.json",)
    assert config.catalogs == (here / "cats",)
    assert config.warnings == (
        f"Warning: ignoring the catalog {theirs} named in {here / 'toolfind.toml'}: it is "
        f"owned by nobody (uid 65534); if you trust it, pass -c {theirs} or add {theirs} to "
        f"safe_directories in {user_config(os.environ)}",
        f"Warning: ignoring the servers file {evil} named in {here / 'toolfind.toml'}: it is "
        f"owned by nobody (uid 65534); if you trust it, pass --servers {evil} or add {drop} "
        f"to safe_directories in {user_config(os.environ)}",
    )
    write(Path("toolfind.toml"), f'catalogs = ["{theirs}"]\n')  # nothing left: no demo either
    with pytest.raises(
        ConfigError, match=f"^no catalog left to read: ignoring the catalog {theirs}"
    ):
        load_config()


@as_root
def test_a_catalogs_directory_another_user_owns_is_not_searched() -> None:
    Path("catalogs").mkdir()
    write(Path("catalogs/t.json"), [{"name": "planted_tool", "description": "rocket"}])
    give_away(Path("catalogs"))
    run = for_run()
    assert run.paths == (packaged_catalogs(),)
    (line,) = run.warnings
    assert line.startswith(f"Warning: ignoring {Path.cwd() / 'catalogs'}: it is owned by nobody")
    assert f"pass -c {Path.cwd() / 'catalogs'} or add" in line
    assert for_run(["catalogs"]).paths == (Path("catalogs"),)  # named: trusted as given
