"""The package's shape, as docs/ARCHITECTURE.md states it: layers, sizes and single homes.

These read the source (``ast``), not behaviour: they fail when a change puts code where the
architecture says it does not go, so the map in the docs stays true.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "toolfind"

ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "ARCHITECTURE.md"


def _stated_layers() -> tuple[frozenset[str], ...]:
    """The layers from the bottom, as the table under "## Layers" in docs/ARCHITECTURE.md
    states them: a row's second column names its packages in backticks (``core/``,
    ``toolfind/__init__`` for the package root). A module may import its own group and the
    groups of lower layers; the doc is the one statement of the order, so it cannot drift."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    layers = []
    for row in section.splitlines():
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) < 2 or not re.match(r"\d+\.", cells[0]):
            continue
        names = {name.rstrip("/") for name in re.findall(r"`([^`]+)`", cells[1])}
        layers.append(
            frozenset("toolfind" if name == "toolfind/__init__" else name for name in names)
        )
    return tuple(layers)


LAYERS = _stated_layers()


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


def _imports(path: Path, *, typing_too: bool = True) -> set[str]:
    """What ``path`` imports (absolute names; ``from a import b`` gives ``a`` and ``a.b``),
    lazy imports inside functions included; those under ``if TYPE_CHECKING:`` only when
    ``typing_too`` (they never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if not typing_too:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped.update(id(n) for n in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


MODULES = _modules()
GROUPS = {_group(module) for module, _ in MODULES}


def test_every_package_has_its_stated_layer() -> None:
    """Each top-level package and module sits in exactly one row of the doc's table, and the
    table names nothing that is gone: a new room is placed on the map before it is built."""
    stated = [group for layer in LAYERS for group in layer]
    assert len(LAYERS) >= 8, "the layer table in docs/ARCHITECTURE.md was not found"
    assert len(stated) == len(set(stated)), f"a package on two layers: {sorted(stated)}"
    assert GROUPS - set(stated) == set(), f"not on the layer table: {sorted(GROUPS - set(stated))}"
    assert set(stated) - GROUPS == set(), f"on the table but gone: {sorted(set(stated) - GROUPS)}"


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_imports_point_down_the_layers(module: str, path: Path) -> None:
    own = _group(module)
    wrong = set()
    for imported in _imports(path):
        if imported.split(".")[0] != "toolfind" or imported == "toolfind":
            continue
        group = _group(imported)
        if group == own or group not in GROUPS:
            continue  # a name from the package root (``from toolfind import open_index``)
        if _layer(group) > _layer(own):
            wrong.add(imported)
    assert not wrong, f"{module} imports from a higher layer: {sorted(wrong)}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    """No two modules import each other, directly or through others: a lower piece never
    calls back up. Imports inside functions count (a lazy import is still a dependency);
    those under ``if TYPE_CHECKING:`` do not (they never run)."""
    names = {m for m, _ in MODULES}

    def resolved(imported: str) -> str | None:
        while imported and imported not in names:
            imported = imported.rpartition(".")[0]
        return imported or None

    graph = {
        module: {
            target
            for name in _imports(path, typing_too=False)
            if (target := resolved(name)) not in (None, module, "toolfind")
        }
        for module, path in MODULES
    }
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles(graph) == []


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
        stdlib |= {"difflib"}  # the "did you mean" of a name (core.suggest)
        assert third <= stdlib | allowed_third_party, (module, sorted(third - stdlib))


def test_every_child_python_is_isolated_from_the_working_directory() -> None:
    """A child Python toolfind starts (``[sys.executable, ...]``) runs ``-I``, or ``-P`` from a
    directory it chose (``cwd=``): never with the caller's working directory first on its
    path, where anyone who can write there could plant ``pip/`` or ``secrets.py``."""
    found = 0
    for module, path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.List) or not node.elts:
                continue
            if ast.unparse(node.elts[0]) != "sys.executable":
                continue
            found += 1
            flag = ast.literal_eval(node.elts[1]) if len(node.elts) > 1 else None
            assert flag in ("-I", "-P"), f"{module}:{node.lineno}: start it with -I or -P"
            if flag == "-P":
                calls = [
                    c
                    for c in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(c, ast.Call) and any(k.arg == "cwd" for k in c.keywords)
                ]
                assert calls, f"{module}:{node.lineno}: -P needs a safe working directory (cwd=)"
    assert found >= 3  # model fetch's pip, the reranker's worker, the watchdog


def test_no_argparse_beside_typer() -> None:
    users = [m for m, path in MODULES if "argparse" in _imports(path)]
    assert users == []


def test_typer_rich_and_mcp_each_have_one_home() -> None:
    homes = {"typer": ("cli",), "rich": ("output.render",), "mcp": ("serve", "backends")}
    for module, path in MODULES:
        imported = {name.split(".")[0] for name in _imports(path)}
        for package, home in homes.items():
            if package in imported:
                assert module.removeprefix("toolfind.").startswith(home), (module, package)
    for typer_free in ("fast.py", "commands.py"):  # the warm path, and the bodies it shares
        assert "typer" not in {n.split(".")[0] for n in _imports(PACKAGE / "cli" / typer_free)}


#: Where JSON keys are spelled: the records (output/wire.py) and their schemas
#: (output/schemas.py, where the keys every record of a kind has are defined).
KEY_HOMES = {"toolfind.output.wire", "toolfind.output.schemas"}
#: JSON keys that only output records use: spelled as a string in :data:`KEY_HOMES` alone.
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


def test_record_keys_are_spelled_only_in_their_homes() -> None:
    spelled: dict[str, set[str]] = {}
    for module, path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for key in _keys_spelled(tree) & RECORD_ONLY_KEYS:
            spelled.setdefault(key, set()).add(module)
    elsewhere = {k: sorted(m - KEY_HOMES) for k, m in spelled.items()}
    assert {k: m for k, m in elsewhere.items() if m} == {}
    assert set().union(*spelled.values()) == KEY_HOMES, "the test reads the wrong thing"
