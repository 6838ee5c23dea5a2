from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolfind.config import (
    Filters,
    for_run,
    load_config,
    packaged_catalogs,
    parse_size,
    parse_weight_options,
    resolve_catalogs,
)
from toolfind.errors import ConfigError
from toolfind.models import FieldWeights, ScoringParams


def test_no_config_file_gives_defaults(tmp_path: Path) -> None:
    config = load_config({}, tmp_path)
    assert config.path is None
    assert config.params == ScoringParams()


def test_config_reads_weights_k1_b_and_catalog_paths_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "toolfind.toml").write_text(
        'catalogs = ["cats"]\nk1 = 1.2\nb = {name = 0.3}\n[weights]\nname = 7\n', encoding="utf-8"
    )
    config = load_config({}, tmp_path)
    assert config.catalogs == (tmp_path / "cats",)
    assert config.params.k1 == 1.2
    assert config.params.b_for("name") == 0.3
    assert config.params.b_for("description") == ScoringParams().b_for("description")
    assert config.params.weights.name == 7.0
    assert config.params.weights.description == FieldWeights().description


def test_config_unknown_weight_field_is_an_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "toolfind.toml").write_text("[weights]\nnmae = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config({}, tmp_path)
    assert str(info.value) == (
        f"{tmp_path / 'toolfind.toml'}: weights: unknown field 'nmae'; "
        "fields are name, namespace, description, params, tags, search_hint"
    )


def test_config_invalid_toml_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "toolfind.toml").write_text("k1 = = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config({}, tmp_path)


def test_config_unknown_top_level_key_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "toolfind.toml").write_text("catalog = 'x'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown key 'catalog'"):
        load_config({}, tmp_path)


def test_weight_options_override_only_the_fields_given() -> None:
    weights = parse_weight_options(["name=5", "tags=0"], FieldWeights())
    assert weights.name == 5.0 and weights.tags == 0.0
    assert weights.description == FieldWeights().description


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("name", "--weight 'name': expected FIELD=NUMBER, for example name=5"),
        (
            "nam=2",
            "--weight 'nam=2': unknown field 'nam'; fields are name, namespace, description, params, tags, search_hint",
        ),
        ("name=x", "--weight 'name=x': 'x' is not a number"),
        ("name=-1", "--weight 'name=-1': a weight must be a finite number >= 0"),
        ("name=inf", "--weight 'name=inf': a weight must be a finite number >= 0"),
        ("name=1e400", "--weight 'name=1e400': a weight must be a finite number >= 0"),
    ],
)
def test_bad_weight_option_says_what_is_wrong(option: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_weight_options([option], FieldWeights())
    assert str(info.value) == message


def test_catalog_resolution_order(tmp_path: Path) -> None:
    config = load_config({}, tmp_path)
    assert resolve_catalogs(["a"], config, {"TOOLFIND_CATALOGS": "b"}, tmp_path) == [Path("a")]
    env = {"TOOLFIND_CATALOGS": f"b{os.pathsep}c"}
    assert resolve_catalogs([], config, env, tmp_path) == [Path("b"), Path("c")]
    assert resolve_catalogs([], config, {}, tmp_path) == [packaged_catalogs()]
    (tmp_path / "catalogs").mkdir()
    assert resolve_catalogs([], config, {}, tmp_path) == [Path("catalogs")]


def test_packaged_catalogs_exist() -> None:
    assert packaged_catalogs().is_dir()


def test_for_run_puts_config_catalogs_and_weights_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "toolfind.toml").write_text(
        'catalogs = ["cats"]\nmax_file_size = "1KiB"\n[weights]\nname = 9\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLFIND_CONFIG", raising=False)
    monkeypatch.delenv("TOOLFIND_CATALOGS", raising=False)
    run = for_run()
    assert run.paths == (tmp_path / "cats",) and run.max_file_size == 1024
    assert run.params == run.config.params and run.params.weights.name == 9.0
    run = for_run(["a", Path("b")], ["description=3"])
    assert run.paths == (Path("a"), Path("b"))
    assert (run.params.weights.name, run.params.weights.description) == (9.0, 3.0)
    assert for_run(weights={"tags": 2}).params.weights.tags == 2.0
    with pytest.raises(ConfigError, match="--weight 'nope=1': unknown field"):
        for_run(weights=["nope=1"])
    with pytest.raises(ConfigError, match="unknown field 'nope'"):
        for_run(weights={"nope": 1})


@pytest.mark.parametrize(
    ("raw", "size"), [("64MiB", 64 << 20), ("500KB", 500_000), (1024, 1024), ("2048", 2048)]
)
def test_sizes_parse(raw: object, size: int) -> None:
    assert parse_size(raw) == size


def test_bad_size_is_an_error() -> None:
    with pytest.raises(ConfigError, match="is not a size"):
        parse_size("lots")


def test_filters_allow_and_deny() -> None:
    f = Filters(namespaces=("files", "git"), exclude_tags=("destructive",))
    assert f.allows("files", ["read-only"])
    assert not f.allows("web", [])
    assert not f.allows("git", ["destructive"])


def test_one_number_for_b_applies_to_every_field(tmp_path: Path) -> None:
    (tmp_path / "toolfind.toml").write_text("b = 0.6\n", encoding="utf-8")
    params = load_config({}, tmp_path).params
    assert {params.b_for(f) for f in ("name", "description", "tags")} == {0.6}


def test_write_params_keeps_other_keys_and_comments_and_a_backup(tmp_path: Path) -> None:
    from toolfind.config import write_params

    path = tmp_path / "toolfind.toml"
    original = '# my settings\ncatalogs = ["cats"]\n[filters]\nnamespaces = ["files"]\n'
    path.write_text(original, encoding="utf-8")
    params = ScoringParams(weights=FieldWeights(name=9.0), k1=2.0)
    backup = write_params(path, params)
    assert backup is not None and backup.read_text(encoding="utf-8") == original
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# my settings\n")
    config = load_config({}, tmp_path)
    assert config.params.weights.name == 9.0 and config.params.k1 == 2.0
    assert config.catalogs == (tmp_path / "cats",)
    assert config.filters.namespaces == ("files",)


def test_catalog_and_servers_paths_expand_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "more-tools").mkdir(parents=True)
    (home / "more-tools" / "t.json").write_text(
        '[{"name": "h_tool", "description": "rocket in home"}]', encoding="utf-8"
    )
    monkeypatch.setenv("HOME", str(home))
    Path("toolfind.toml").write_text(
        'catalogs = ["~/more-tools"]\nservers = ["~/mcp.json"]\n', encoding="utf-8"
    )
    config = load_config()
    assert config.catalogs == (home / "more-tools",)
    assert config.servers == (home / "mcp.json",)
    from typer.testing import CliRunner

    from toolfind.cli.app import app

    done = CliRunner().invoke(app, ["search", "rocket", "--json"])
    assert done.exit_code == 0, done.stderr
    assert '"name": "h_tool"' in done.stdout


def test_a_config_with_a_utf8_bom_is_read(tmp_path: Path) -> None:
    (tmp_path / "toolfind.toml").write_bytes(b"\xef\xbb\xbfk1 = 1.5\n")
    assert load_config({}, tmp_path).params.k1 == 1.5


@pytest.mark.parametrize(("make", "kind"), [(os.mkdir, "a directory"), (os.mkfifo, "a FIFO")])
def test_a_config_that_is_not_a_regular_file_is_one_error(
    tmp_path: Path, make: object, kind: str
) -> None:
    path = tmp_path / "toolfind.toml"
    make(path)  # type: ignore[operator]
    with pytest.raises(ConfigError) as caught:
        load_config({}, tmp_path)
    assert str(caught.value) == f"{path}: cannot read config: not a regular file ({kind})"


def test_the_config_is_found_in_a_parent_directory_up_to_the_repository_root(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "toolfind.toml").write_text("k1 = 0.5\n", encoding="utf-8")
    config = load_config({"HOME": str(tmp_path / "home")}, repo / "src" / "pkg")
    assert config.path == repo / "toolfind.toml" and config.params.k1 == 0.5
    (tmp_path / "toolfind.toml").write_text("k1 = 3\n", encoding="utf-8")
    (repo / "toolfind.toml").unlink()
    assert load_config({"HOME": str(tmp_path / "home")}, repo / "src").path is None


def test_empty_catalog_paths_are_errors_not_the_working_directory() -> None:
    with pytest.raises(ConfigError, match="an empty path"):
        resolve_catalogs([""], load_config({}, Path.cwd()))
    for junk in (":::", " : ", os.pathsep):
        with pytest.raises(ConfigError, match="names no path"):
            resolve_catalogs([], load_config({}, Path.cwd()), {"TOOLFIND_CATALOGS": junk})
    assert resolve_catalogs([], load_config({}, Path.cwd()), {"TOOLFIND_CATALOGS": "a::b"}) == [
        Path("a"),
        Path("b"),
    ]
