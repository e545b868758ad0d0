"""The import graph of verifiers/ and r3bench/: arrows only point down, no circles.

Layers, bottom up: verifiers (the seven-tag format, units, formula corpus and store, checkers; imports
nothing of r3bench); r3bench.core; r3bench.procgen and r3bench.pde; r3bench.eval; r3bench.results;
r3bench.apps; trainers/ above r3bench, which reaches them only by name (`python -m trainers.X`, a
plugin lookup), never by import (docs/ARCHITECTURE.md). Every import statement counts, also one
inside a function."""
import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAYERS = {"verifiers": 0, "r3bench.core": 1, "r3bench.procgen": 2, "r3bench.pde": 2, "r3bench.eval": 3,
          "r3bench.results": 4, "r3bench.apps": 5}
# old dotted names kept importable for a transition (none since the restructure merge)
TRANSITION: set = set()


def _modules() -> dict:
    out = {}
    for top in ("r3bench", "verifiers"):
        for f in sorted((REPO / top).rglob("*.py")):
            parts = f.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


MODULES = _modules()


def _layer(name: str):
    best = max((k for k in LAYERS if name == k or name.startswith(k + ".")), key=len, default=None)
    return LAYERS.get(best)


def _imported(path: Path) -> set:
    """Every absolute module name an import statement of the file names (also inside functions), with
    `from X import y` counted as X and X.y."""
    got = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            got |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            got.add(node.module)
            got |= {f"{node.module}.{a.name}" for a in node.names}
    return got


def _imports(name: str, path: Path) -> set:
    # an import names the deepest first-party module it reaches
    return {m for m in _imported(path) if m in MODULES and m != name}


def _tops(path: Path) -> set:
    return {m.split(".")[0] for m in _imported(path)}


GRAPH = {n: _imports(n, p) for n, p in MODULES.items() if n not in TRANSITION}


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_arrows_point_down(name):
    here = _layer(name)
    if here is None:  # the package faces r3bench/__init__.py, verifiers/__init__.py
        return
    up = sorted(m for m in GRAPH[name] if m not in TRANSITION and (_layer(m) or 0) > here)
    assert not up, f"{name} (layer {here}) imports from a layer above: {up}"
    assert not (GRAPH[name] & TRANSITION), f"{name} imports a transition alias"


def test_verifiers_import_nothing_of_r3bench():
    bad = sorted(n for n, p in MODULES.items() if n.startswith("verifiers") and "r3bench" in _tops(p))
    assert not bad, f"modules of verifiers/ that import r3bench: {bad}"


def test_r3bench_never_imports_trainers():
    """r3bench/ reaches trainers/ only by name (a subprocess, reproduce's plugin lookup of a Config)."""
    bad = sorted(n for n, p in MODULES.items() if n.startswith("r3bench") and "trainers" in _tops(p))
    assert not bad, f"modules of r3bench/ that import trainers: {bad}"


def test_no_import_circles_in_r3bench():
    graph = {n: {m for m in deps if m.startswith("r3bench")} for n, deps in GRAPH.items() if n.startswith("r3bench")}
    state = {}

    def visit(n, stack):
        state[n] = "open"
        for m in sorted(graph.get(n, ())):
            if m == n or m in ("r3bench",) or m.startswith(n + "."):  # a package importing its own modules
                continue
            if state.get(m) == "open" and not n.startswith(m + "."):
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(m):] + [m]))
            if m not in state:
                visit(m, stack + [m])
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])


# ---------------------------------------------------------------------------- every tree (issue 38)

TREES = ("r3bench", "verifiers", "trainers", "tasks", "benchmarks", "studies", "heldout")


def _all_files() -> dict:
    out = {}
    for top in TREES:
        for f in sorted((REPO / top).rglob("*.py")):
            parts = f.relative_to(REPO).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


ALL = _all_files()


SCRIPTS = {"benchmarks", "studies", "heldout"}  # folders of scripts, on top of everything: nothing imports them


def test_no_tree_below_imports_trainers_tasks_or_scripts():
    """verifiers < r3bench < trainers < the script folders (benchmarks, studies, heldout): the library never
    imports the trainers, the lm-eval task folder or the scripts; the trainers never import the scripts;
    no script folder imports another's scripts as a package."""
    bad = []
    for n, p in ALL.items():
        tops = _tops(p)
        if n.startswith(("verifiers", "r3bench")) and tops & ({"trainers", "tasks"} | SCRIPTS):
            bad.append((n, sorted(tops & ({"trainers", "tasks"} | SCRIPTS))))
        if n.startswith("trainers") and tops & ({"tasks"} | SCRIPTS):
            bad.append((n, sorted(tops & ({"tasks"} | SCRIPTS))))
        if n.split(".")[0] in SCRIPTS and tops & (SCRIPTS - {n.split(".")[0]}):
            bad.append((n, sorted(tops & (SCRIPTS - {n.split(".")[0]}))))
    assert not bad, f"imports pointing up: {bad}"


def test_no_import_circles_in_any_tree():
    """Over r3bench, verifiers and trainers together (a circle through trainers is one too)."""
    graph = {n: {m for m in _imported(p) if m in ALL and m != n} for n, p in ALL.items()
             if n.startswith(("r3bench", "verifiers", "trainers"))}
    state, path = {}, []

    def visit(n):
        state[n] = "open"
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if m.startswith(n + ".") or n.startswith(m + "."):  # a package and its own modules
                continue
            if state.get(m) == "open":
                raise AssertionError("import circle: " + " -> ".join(path[path.index(m):] + [m]))
            if m not in state:
                visit(m)
        path.pop()
        state[n] = "done"

    for n in sorted(graph):
        if n not in state:
            visit(n)


def _private_uses(path: Path, name: str) -> list:
    """`from X import _y` and `x._y` where x is another first-party module: a private name used outside
    its module. A private module of the same folder (`from x import _m` where x is the importer's own
    package) is its folder's own."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    first = ("r3bench", "verifiers", "trainers", "benchmarks", "studies", "heldout", "tasks")
    here = name.rsplit(".", 1)[0]
    aliases, bad = {}, []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                if a.name.split(".")[0] in first:
                    aliases[a.asname or a.name.split(".")[0]] = a.name
        elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0 and n.module.split(".")[0] in first:
            for a in n.names:
                aliases[a.asname or a.name] = f"{n.module}.{a.name}"
                if a.name.startswith("_") and not a.name.startswith("__") and n.module != here:
                    bad.append(f"from {n.module} import {a.name} (line {n.lineno})")
    for n in ast.walk(tree):
        if (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases
                and n.attr.startswith("_") and not n.attr.startswith("__") and aliases[n.value.id] in ALL
                and aliases[n.value.id] != name):
            bad.append(f"{aliases[n.value.id]}.{n.attr} (line {n.lineno})")
    return bad


def test_no_private_name_is_used_outside_its_module():
    bad = {n: _private_uses(p, n) for n, p in ALL.items()}
    bad = {n: v for n, v in bad.items() if v}
    assert not bad, f"private names used across modules (make them public or keep them home): {bad}"


def test_the_private_name_guard_would_catch_one(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from r3bench.eval import lmeval\nfrom verifiers.answer import _x\n\nlmeval._y()\n")
    got = _private_uses(f, "benchmarks.m")
    assert any("import _x" in g for g in got) and any("lmeval._y" in g for g in got)
