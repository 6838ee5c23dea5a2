from __future__ import annotations

import dataclasses
import inspect
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolfind import models
from toolfind.config import (
    Config,
    Filters,
    cache_dir,
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
        ("name=-1", "--weight 'name=-1': a weight must be a number >= 0"),
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


def test_cache_dir_follows_the_environment(tmp_path: Path) -> None:
    assert cache_dir({"TOOLFIND_CACHE_DIR": str(tmp_path)}) == tmp_path
    if os.name == "posix" and os.uname().sysname == "Linux":
        assert cache_dir({"HOME": "/h", "XDG_CACHE_HOME": "/x"}) == Path("/x/toolfind")
        assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/toolfind")


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


# -- frozen_dataclass: the config's and the models' classes --------------------------------------
# They write their own __init__ (generated methods cost start-up); each must behave exactly as
# @dataclass(frozen=True, slots=True) with the same fields would.

FROZEN_CLASSES = [
    Filters,
    Config,
    *(
        c
        for c in vars(models).values()
        if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == models.__name__
    ),
]
DATACLASS_METHODS = {"__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"}
DATACLASS_METHODS |= {"__getstate__", "__setstate__", "__match_args__", "__dataclass_fields__"}


def reference(cls: type) -> type:
    """The same fields through the real @dataclass(frozen=True, slots=True)."""
    specs = []
    for f in dataclasses.fields(cls):
        options = {"compare": f.compare, "repr": f.repr, "hash": f.hash}
        if f.default is not dataclasses.MISSING:
            options["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            options["default_factory"] = f.default_factory
        specs.append((f.name, f.type, dataclasses.field(**options)))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True, slots=True)


def sample_values(cls: type, seed: str) -> dict[str, Any]:
    return {f.name: f"{seed}-{f.name}" for f in dataclasses.fields(cls)}


def outcome(action: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """What calling ``action(*args)`` gives: its value or its exception."""
    try:
        return ("value", action(*args))
    except Exception as exc:  # noqa: BLE001 - the outcome compared is the exception itself
        return (type(exc).__name__, str(exc))


def test_the_frozen_classes_are_all_found() -> None:
    names = {c.__name__ for c in FROZEN_CLASSES}
    assert {"Tool", "Source", "ScoringParams", "FieldWeights", "Hit", "Config"} <= names
    assert len(FROZEN_CLASSES) == 13


@pytest.mark.parametrize("cls", FROZEN_CLASSES, ids=lambda c: c.__name__)
def test_frozen_dataclass_behaves_as_the_generated_dataclass(cls: type) -> None:
    ref = reference(cls)
    params = inspect.signature(cls).parameters.values()
    assert [str(p) for p in params] == [str(p) for p in inspect.signature(ref).parameters.values()]
    assert cls.__match_args__ == ref.__match_args__  # type: ignore[attr-defined]
    assert cls.__slots__ == ref.__slots__  # type: ignore[attr-defined]
    assert DATACLASS_METHODS <= set(vars(cls)) & set(vars(ref))
    ours, theirs = cls(**sample_values(cls, "a")), ref(**sample_values(cls, "a"))
    other, other_ref = cls(**sample_values(cls, "b")), ref(**sample_values(cls, "b"))
    assert repr(ours) == repr(theirs)
    assert hash(ours) == hash(theirs)
    assert ours == cls(**sample_values(cls, "a")) and ours != other
    assert theirs != other_ref
    for f in dataclasses.fields(cls):  # which fields take part in == and hash()
        changed = sample_values(cls, "a") | {f.name: "changed"}
        assert (ours == cls(**changed)) is (theirs == ref(**changed)), f.name
        assert (hash(ours) == hash(cls(**changed))) is (hash(theirs) == hash(ref(**changed)))
    assert ours.__eq__(theirs) is NotImplemented  # another class, as generated __eq__ does
    assert pickle.loads(pickle.dumps(ours)) == ours
    assert dataclasses.replace(ours) == ours and dataclasses.astuple(ours) == dataclasses.astuple(
        theirs
    )
    name = dataclasses.fields(cls)[0].name
    assert outcome(setattr, ours, name, 1) == outcome(setattr, theirs, name, 1)
    assert outcome(delattr, ours, name) == outcome(delattr, theirs, name)
    # Another name: the generated methods call super() on the class from before slots were
    # added, a TypeError on CPython 3.11; ours say what happened. Both refuse.
    assert outcome(setattr, ours, "nope", 1) == (
        "FrozenInstanceError",
        "cannot assign to field 'nope'",
    )
    assert outcome(delattr, ours, "nope") == ("FrozenInstanceError", "cannot delete field 'nope'")
    assert outcome(setattr, theirs, "nope", 1)[0] != "value"
    if all(p.default is not p.empty for p in params):
        assert repr(cls()) == repr(ref())
        assert outcome(hash, cls()) == outcome(hash, ref())
        fresh = [
            f.name for f in dataclasses.fields(cls) if f.default_factory is not dataclasses.MISSING
        ]
        assert all(getattr(cls(), n) is not getattr(cls(), n) for n in fresh)


def test_a_tool_with_default_mappings_is_equal_but_unhashable_like_before() -> None:
    tool = models.Tool("read_file")
    assert tool == models.Tool("read_file")
    assert tool.parameters == {"type": "object", "properties": {}}
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        hash(tool)
    assert models.Tool("x", parameters=None).parameters is None  # given, even if None
    moved = models.Tool("x", source=models.Source("b"))
    assert models.Tool("x", source=models.Source("a")) == moved  # source is not compared
