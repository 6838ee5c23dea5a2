"""The package's shape, as docs/ARCHITECTURE.md states it: layers, sizes and single homes.

These read the source (``ast``), not behaviour: they fail when a change puts code where the
architecture says it does not go, so the map in the docs stays true.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolfind"

#: Layers from the bottom; a module may import its own group and the groups of lower layers.
#: ``cli`` may start ``serve`` (the serve-mcp command); ``serve`` never imports ``cli``.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"errors", "models", "shapes"}),
    frozenset({"core"}),
    frozenset({"catalog", "config", "userfiles", "semantic"}),
    frozenset({"store"}),
    frozenset({"output"}),
    frozenset({"eval"}),
    frozenset({"serve"}),
    frozenset({"cli", "toolfind", "__main__"}),
)


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append((".".join(parts), path))
    return out


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "toolfind"


def _layer(group: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if group in layer)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


MODULES = _modules()


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_imports_point_down_the_layers(module: str, path: Path) -> None:
    own = _group(module)
    wrong = set()
    for imported in _imports(path):
        if imported.split(".")[0] != "toolfind" or imported in ("toolfind", "toolfind.__version__"):
            continue
        group = _group(imported)
        if group == own or group not in {g for layer in LAYERS for g in layer}:
            continue
        if _layer(group) > _layer(own) or (own == "serve" and group == "cli"):
            wrong.add(imported)
    assert not wrong, f"{module} imports from a higher layer: {sorted(wrong)}"


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_every_module_is_under_800_lines(module: str, path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 800, f"{module} has {lines} lines"


def test_the_core_imports_no_third_party_io_or_front_end() -> None:
    allowed_third_party = {"Stemmer"}
    for module, path in MODULES:
        if _group(module) != "core":
            continue
        third = {
            name.split(".")[0]
            for name in _imports(path)
            if not name.startswith(("toolfind", "__future__"))
        }
        stdlib = {"math", "bisect", "itertools", "operator", "heapq", "array", "unicodedata"}
        stdlib |= {"collections", "typing", "functools", "dataclasses", "zlib", "sys", "re"}
        assert third <= stdlib | allowed_third_party, (module, sorted(third - stdlib))


def test_no_argparse_beside_typer() -> None:
    users = [m for m, path in MODULES if "argparse" in _imports(path)]
    assert users == []


def test_typer_rich_and_mcp_each_have_one_home() -> None:
    homes = {"typer": "cli", "rich": "output.render", "mcp": "serve"}
    for module, path in MODULES:
        imported = {name.split(".")[0] for name in _imports(path)}
        for package, home in homes.items():
            if package in imported:
                assert module.removeprefix("toolfind.").startswith(home), (module, package)
    assert "typer" not in {n.split(".")[0] for n in _imports(PACKAGE / "cli" / "fast.py")}


#: JSON keys that only output records use: spelled as a string in output/wire.py alone.
RECORD_ONLY_KEYS = {
    "unmatched_terms",
    "backends_connecting",
    "shared_terms",
    "tool_count",
    "deferred_count",
    "total_categories",
    "total_tools",
    "length_norm",
    "mrr_at_10",
    "recall_at_1",
    "ndcg_at_10",
    "holdout_before",
    "train_after",
}


def _keys_spelled(tree: ast.AST) -> set[str]:
    """Strings used as JSON keys: keys of dict literals and string subscripts."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            found.update(k.value for k in node.keys if isinstance(k, ast.Constant))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            found.add(node.slice.value)
    return {key for key in found if isinstance(key, str)}


def test_record_keys_are_spelled_only_in_wire() -> None:
    spelled: dict[str, set[str]] = {}
    for module, path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for key in _keys_spelled(tree) & RECORD_ONLY_KEYS:
            spelled.setdefault(key, set()).add(module)
    assert spelled, "wire spells no record key: the test reads the wrong thing"
    elsewhere = {k: sorted(m - {"toolfind.output.wire"}) for k, m in spelled.items()}
    assert {k: m for k, m in elsewhere.items() if m} == {}
