"""The import graph of r3bench/ (and verifiers/' imports of it): arrows only point down, no circles.

Layers, bottom up: r3bench.core; verifiers (imports r3bench.core only); r3bench.procgen and
r3bench.pde; r3bench.eval; r3bench.results; r3bench.apps (docs/ARCHITECTURE.md). Every import
statement counts, also one inside a function."""
import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYERS = {"r3bench.core": 0, "verifiers": 1, "r3bench.procgen": 2, "r3bench.pde": 2, "r3bench.eval": 3,
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


def _imports(name: str, path: Path) -> set:
    got = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            got |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            got.add(node.module)
            got |= {f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in MODULES}
    # an import names the deepest first-party module it reaches
    return {m for m in got if m in MODULES and m != name}


GRAPH = {n: _imports(n, p) for n, p in MODULES.items() if n not in TRANSITION}


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_arrows_point_down(name):
    here = _layer(name)
    if here is None:  # the package faces r3bench/__init__.py, verifiers/__init__.py
        return
    up = sorted(m for m in GRAPH[name] if m not in TRANSITION and (_layer(m) or 0) > here)
    assert not up, f"{name} (layer {here}) imports from a layer above: {up}"
    assert not (GRAPH[name] & TRANSITION), f"{name} imports a transition alias"


def test_verifiers_import_only_r3bench_core():
    for name, deps in GRAPH.items():
        if name.startswith("verifiers"):
            bad = sorted(m for m in deps if m.startswith("r3bench") and not m.startswith("r3bench.core"))
            assert not bad, f"{name} imports {bad}"


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
