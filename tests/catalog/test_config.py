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
from toolfind.errors import ConfigError, UsageError
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
        ("name=x", "--weight 'name=x': weights.name must be a number from 0 to 1000, not 'x'"),
        ("name=-1", "--weight 'name=-1': weights.name must be a number from 0 to 1000, not '-1'"),
        (
            "name=nan",
            "--weight 'name=nan': weights.name must be a number from 0 to 1000, not 'nan'",
        ),
        (
            "tags=inf",
            "--weight 'tags=inf': weights.tags must be a number from 0 to 1000, not 'inf'",
        ),
        (
            "name=1e400",
            "--weight 'name=1e400': weights.name must be a number from 0 to 1000, not '1e400'",
        ),
        (
            "name=1001",
            "--weight 'name=1001': weights.name must be a number from 0 to 1000, not '1001'",
        ),
    ],
)
def test_bad_weight_option_says_what_is_wrong(option: str, message: str) -> None:
    with pytest.raises(UsageError) as info:  # a usage error: exit 2, whatever is wrong
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


def test_write_settings_keeps_other_keys_and_comments_and_a_backup(tmp_path: Path) -> None:
    from toolfind.config_write import write_settings

    path = tmp_path / "toolfind.toml"
    original = '# my settings\ncatalogs = ["cats"]\nb = 0.6\n[filters]\nnamespaces = ["files"]\n'
    path.write_text(original, encoding="utf-8")
    backup = write_settings(path, {"weights.name": 9.0, "k1": 2.0, "b.tags": 0.1})
    assert backup is not None and backup.read_text(encoding="utf-8") == original
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# my settings\n")
    assert "delta" not in text and text.endswith("[weights]\nname = 9.0\n")  # the keys given
    config = load_config({}, tmp_path)
    assert config.params.weights.name == 9.0 and config.params.k1 == 2.0
    assert config.params.weights == FieldWeights(name=9.0)
    assert config.params.b_for("tags") == 0.1 and config.params.b_for("name") == 0.6
    assert config.catalogs == (tmp_path / "cats",)
    assert config.filters.namespaces == ("files",)
    assert config.tuned is None  # no catalogs given: none recorded


def test_write_settings_records_the_catalogs_tuned_on(tmp_path: Path) -> None:
    from toolfind.config_write import write_settings
    from toolfind.tuned import digest, other_catalogs

    inside = tmp_path / "cats"
    (inside / "more").mkdir(parents=True)
    (inside / "a.yaml").write_text("- name: a\n  description: A.\n", encoding="utf-8")
    (inside / "more" / "b.json").write_text('[{"name": "b"}]', encoding="utf-8")
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere.yaml"
    outside.write_text("- name: c\n", encoding="utf-8")
    path = tmp_path / "toolfind.toml"
    write_settings(path, {"k1": 2.0}, [inside, outside])
    text = path.read_text(encoding="utf-8")
    assert f'catalogs = ["cats", "{outside}"]' in text
    tuned = load_config({}, tmp_path).tuned
    assert tuned is not None and tuned.catalogs == (inside, outside)
    assert tuned.digests == (digest(inside), digest(outside))
    assert other_catalogs(tuned, [inside]) == other_catalogs(tuned, [outside, inside]) == ""
    (inside / "more" / "b.json").write_text('[{"name": "b2"}]', encoding="utf-8")
    assert digest(inside) != tuned.digests[0]  # a directory's digest covers its files
    assert other_catalogs(tuned, [inside]) == ""  # the same path: a catalog edited, not another
    assert other_catalogs(tuned, [inside / "a.yaml"]).startswith("Warning: the ranking settings")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("tuned = 1", "tuned must be a table"),
        ("[tuned]\ncatalogs = 'a'\ndigests = []", "tuned.catalogs must be a list of strings"),
        ("[tuned]\ncatalogs = ['a']\ndigests = []", "tuned.digests must hold one digest a catalog"),
        ("[tuned]\ncatalogs = []\ndigests = []\nwhen = 1", "unknown key 'when'"),
    ],
)
def test_a_bad_tuned_table_is_one_config_error(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "toolfind.toml").write_text(table + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config({}, tmp_path)
    assert message in str(caught.value) and str(tmp_path / "toolfind.toml") in str(caught.value)


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


# -- the user-wide config, under the project's ------------------------------------------------


def user_settings(text: str) -> Path:
    from toolfind.userfiles import user_config

    path = Path(user_config(os.environ))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_user_wide_config_applies_under_the_project_config_key_by_key(
    tmp_path: Path,
) -> None:
    user = user_settings(
        'catalogs = ["ucats"]\nk1 = 2\nb = {name = 0.3}\n'
        '[weights]\nname = 4\ntags = 1\n[filters]\nexclude_tags = ["destructive"]\n'
    )
    (tmp_path / "toolfind.toml").write_text(
        "b = 0.5\n[weights]\nname = 7\n[filters]\nnamespaces = ['files']\n", encoding="utf-8"
    )
    config = load_config(cwd=tmp_path)
    project = str(tmp_path / "toolfind.toml")
    assert (config.user_path, config.path) == (user, tmp_path / "toolfind.toml")
    assert config.catalogs == (user.parent / "ucats",)  # relative to the file that names it
    assert config.params.k1 == 2.0
    assert (config.params.weights.name, config.params.weights.tags) == (7.0, 1.0)
    assert {config.params.b_for(f) for f in ("name", "tags")} == {0.5}  # one b for all, on top
    assert config.filters == Filters(namespaces=("files",), exclude_tags=("destructive",))
    assert config.sources == {
        "catalogs": str(user),
        "k1": str(user),
        "weights.name": project,
        "weights.tags": str(user),
        "filters.exclude_tags": str(user),
        "b": project,
        "filters.namespaces": project,
    }
    # A per-field b in the project keeps the user's b for the other fields.
    user_settings("b = 0.6\n")
    (tmp_path / "toolfind.toml").write_text("b = {tags = 0.1}\n", encoding="utf-8")
    params = load_config(cwd=tmp_path).params
    assert (params.b_for("name"), params.b_for("tags")) == (0.6, 0.1)


def test_toolfind_config_names_the_project_config_and_the_user_wide_one_still_applies(
    tmp_path: Path,
) -> None:
    user_settings("k1 = 2\ndelta = 0.25\n")
    (tmp_path / "toolfind.toml").write_text("k1 = 1\n", encoding="utf-8")
    named = tmp_path / "elsewhere.toml"
    named.write_text("k1 = 1.5\n", encoding="utf-8")
    config = load_config({**os.environ, "TOOLFIND_CONFIG": str(named)}, tmp_path)
    assert config.path == named and (config.params.k1, config.params.delta) == (1.5, 0.25)
    assert [(f.scope, f.explicit) for f in config.files] == [("user", False), ("project", True)]


def test_the_user_wide_config_follows_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolfind.userfiles import user_config

    env = {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}
    assert user_config(env) == "/x/toolfind/toolfind.toml"
    assert user_config({"HOME": "/h"}) == "/h/.config/toolfind/toolfind.toml"
    assert user_config({"HOME": "/h", "XDG_CONFIG_HOME": "rel"}) == (
        "/h/.config/toolfind/toolfind.toml"  # relative: ignored, as the XDG spec says
    )


# -- every numeric setting has a bound -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("k1 = 101", "k1 must be a number from 0 to 100, not 101"),
        ("k1 = -1", "k1 must be a number from 0 to 100, not -1"),
        ("k1 = nan", "k1 must be a number from 0 to 100, not nan"),
        ("delta = 1.7e308", "delta must be a number from 0 to 100, not 1.7e+308"),
        ("delta = inf", "delta must be a number from 0 to 100, not inf"),
        ("b = 1.5", "b must be a number from 0 to 1, not 1.5"),
        ("b = {name = 2}", "b.name must be a number from 0 to 1, not 2"),
        (
            "weights = {name = 1e9}",
            "weights.name must be a number from 0 to 1000, not 1000000000.0",
        ),
        ("semantic_weight = 2", "semantic_weight must be a number from 0 to 1, not 2"),
        ('k1 = "2"', "k1 must be a number, not '2'"),
        ('max_file_size = "1e400GiB"', "max_file_size '1e400GiB' is over the 1TiB limit"),
        ('max_file_size = "2000GiB"', "max_file_size '2000GiB' is over the 1TiB limit"),
        ('max_file_size = "nanGiB"', "max_file_size 'nanGiB' is not a size such as 64MiB"),
    ],
)
def test_every_numeric_setting_has_a_bound(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "toolfind.toml").write_text(text + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config({}, tmp_path)
    assert str(caught.value) == f"{tmp_path / 'toolfind.toml'}: {message}"


def test_the_python_api_has_the_same_bounds() -> None:
    import toolfind

    for bad in (float("inf"), float("nan"), -1.0, 1e4):
        with pytest.raises(ConfigError, match="weights.name must be a number from 0 to 1000"):
            for_run(weights={"name": bad})
    with pytest.raises(ConfigError, match="semantic_weight must be a number from 0 to 1"):
        toolfind.open_index(semantic=False, semantic_weight=float("inf"))


def test_synonym_groups_merge_group_by_group_and_a_bad_one_names_its_key(tmp_path: Path) -> None:
    user = user_settings('[synonyms]\nstandup = "daily meeting"\nk8s = ["kube"]\n')
    (tmp_path / "toolfind.toml").write_text(
        '[synonyms]\nk8s = ["kubernetes", "kube"]\n', encoding="utf-8"
    )
    config = load_config(cwd=tmp_path)
    assert config.params.synonyms == (("k8s", "kubernetes", "kube"), ("standup", "daily meeting"))
    assert config.sources["synonyms.standup"] == str(user)
    assert config.sources["synonyms.k8s"] == str(tmp_path / "toolfind.toml")
    for bad in ("[synonyms]\npr = 3\n", "[synonyms]\npr = []\n", 'synonyms = "pr"\n'):
        (tmp_path / "toolfind.toml").write_text(bad, encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load_config(cwd=tmp_path)
        assert "synonyms" in str(caught.value) and "toolfind.toml" in str(caught.value)
