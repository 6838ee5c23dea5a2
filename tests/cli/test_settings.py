"""Settings through the command line: ``toolfind config`` (every setting, where it came
from), ``config path``, ``--config FILE``, the bounds of ``--weight``/``--k1``/``--b``, and
settings that can never make a number JSON cannot write."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_cli import SMALL
from tests.cli.test_quality import QUERIES
from tests.helpers import invoke, run_main, write
from toolfind.userfiles import user_config


def user_settings(text: str) -> Path:
    return write(Path(user_config(os.environ)), text)


def rows(out: str) -> dict[str, dict[str, Any]]:
    return {row["key"]: row for row in json.loads(out)["settings"]}


def test_config_shows_every_setting_and_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    user = user_settings("k1 = 2\n[weights]\nname = 4\n")
    project = write(Path("toolfind.toml"), "[weights]\nname = 7\n").absolute()
    monkeypatch.setenv("TOOLFIND_CATALOGS", "cats")
    code, out, err = invoke("config", "--weight", "tags=3", "--json")
    assert code == 0, err
    settings = rows(out)
    assert settings["k1"] == {"key": "k1", "value": 2.0, "source": "user", "origin": str(user)}
    assert settings["weights.name"] == {
        "key": "weights.name",
        "value": 7.0,
        "source": "project",
        "origin": str(project),
    }
    assert settings["weights.tags"]["source"] == "command line"
    assert settings["weights.tags"]["value"] == 3.0
    assert settings["catalogs"] == {
        "key": "catalogs",
        "value": ["cats"],
        "source": "environment",
        "origin": "TOOLFIND_CATALOGS",
    }
    assert settings["delta"] == {"key": "delta", "value": 0.5, "source": "default", "origin": None}
    assert settings["cache_dir"]["origin"] == "TOOLFIND_CACHE_DIR"
    assert {f["scope"]: f["used"] for f in json.loads(out)["files"]} == {
        "user": True,
        "project": True,
    }
    _, out, _ = invoke("config", "-c", "other")
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert lines["k1"].split() == ["k1", "2.0", str(user)]
    assert lines["catalogs"].split() == ["catalogs", '["other"]', "--catalog"]
    assert lines["semantic"].split() == ["semantic", "(not", "set)", "default"]


def test_config_path_lists_the_user_wide_config_even_before_it_exists() -> None:
    code, out, _ = invoke("config", "path", "--json")
    assert code == 0
    assert json.loads(out) == [
        {
            "scope": "user",
            "path": user_config(os.environ),
            "exists": False,
            "explicit": False,
            "used": False,
            "problem": None,
        }
    ]
    write(Path("toolfind.toml"), "k1 = 1\n")
    _, out, _ = invoke("config", "path")
    assert [line.split() for line in out.splitlines()] == [
        ["user", user_config(os.environ), "not", "found"],
        ["project", str(Path("toolfind.toml").absolute()), "used"],
    ]


def test_a_config_given_with_the_config_option_is_read_instead_of_the_one_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLFIND_CONFIG", "")  # --config sets it in this process: undone after
    write(tmp_path / "cat" / "files.yaml", SMALL)
    named = write(tmp_path / "named.toml", 'catalogs = ["cat"]\nk1 = 1.25\n')
    write(Path("toolfind.toml"), "k1 = 9\n")
    done = run_main("--config", str(named), "search", "read a file", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hits"][0]["name"] == "read_file"
    code, out, _ = invoke("--config", str(named), "config", "--json")
    assert code == 0 and rows(out)["k1"]["value"] == 1.25
    code, _, err = invoke("--config", "", "config")
    assert code == 2 and "Invalid value for '--config': give a toolfind.toml file" in err


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--weight", "name=inf"], "--weight 'name=inf': weights.name must be a number from 0"),
        (["--weight", "name=1e400"], "--weight 'name=1e400': weights.name must be a number"),
        (["--weight", "name=nan"], "--weight 'name=nan': weights.name must be a number"),
        (["--k1", "nan"], "--k1 nan: k1 must be a number from 0 to 100, not nan"),
        (["--k1", "1e400"], "--k1 inf: k1 must be a number from 0 to 100, not inf"),
        (["--b", "5"], "--b '5': b must be a number from 0 to 1, not 5.0"),
        (["--b", "name=2"], "--b 'name=2': b.name must be a number from 0 to 1, not 2.0"),
    ],
)
def test_an_out_of_bounds_option_is_a_usage_error(
    tmp_path: Path, option: list[str], said: str
) -> None:
    catalog = write(tmp_path / "cat" / "files.yaml", SMALL)
    queries = write(tmp_path / "queries.yaml", QUERIES)
    code, _, err = invoke("eval", str(queries), "-c", str(catalog), *option)
    assert code == 2, err
    assert said in err


def test_the_extreme_settings_allowed_still_give_finite_scores_and_valid_json() -> None:
    """Every bound at once (the repro was a huge delta): every score stays a finite number,
    so the bounds alone keep NaN and Infinity out of every output."""
    write(Path("cat.json"), [{"name": "read_file", "description": "read a file " * 40}])
    weights = "\n".join(f"{f} = 1000" for f in ("name", "description", "params", "tags"))
    write(
        Path("toolfind.toml"),
        f'catalogs = ["cat.json"]\nk1 = 100\ndelta = 100\nb = 1\n[weights]\n{weights}\n',
    )
    done = run_main("search", "read file read_file", "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout, parse_constant=pytest.fail)
    assert found["hits"] and all(math.isfinite(hit["score"]) for hit in found["hits"])
    table = run_main("search", "read", "--explain")
    assert table.returncode == 0 and "inf" not in table.stdout and "nan" not in table.stdout


def test_a_tilde_catalog_is_read_from_each_home_never_from_another_homes_warm_run(
    tmp_path: Path,
) -> None:
    """Two HOMEs sharing one cache (containers, CI, sudo -E): ``~`` expands with each."""
    for home, name in (("h1", "alice_tool"), ("h2", "bob_tool")):
        write(tmp_path / home / "more" / "t.json", [{"name": name, "description": "rocket"}])
    write(Path("toolfind.toml"), 'catalogs = ["~/more"]\n')
    for home, name in (("h1", "alice_tool"), ("h2", "bob_tool"), ("h1", "alice_tool")):
        done = run_main("search", "rocket", "--json", env={"HOME": str(tmp_path / home)})
        assert done.returncode == 0, done.stderr
        assert [hit["name"] for hit in json.loads(done.stdout)["hits"]] == [name]
