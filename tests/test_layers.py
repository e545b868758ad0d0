"""The import graph of verifiers/ and r3bench/: arrows only point down, no circles.

Layers, bottom up: verifiers (the seven-tag format, units, formula corpus and store, checkers; imports
nothing of r3bench); r3bench.core; r3bench.procgen and r3bench.pde; r3bench.eval; r3bench.results;
r3bench.apps; trainers/ above r3bench, which reaches them only by name (`python -m trainers.X`, a
plugin lookup), never by import (docs/ARCHITECTURE.md). Every import statement counts, also one
inside a function."""
import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
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
