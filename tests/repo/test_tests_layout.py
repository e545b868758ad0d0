"""The rule of tests/ (docs/ARCHITECTURE.md, "Where the tests are"), checked so it stays true.

- A test file lives in the folder of the code it tests: tests/<folder>/ for each folder of FOLDERS, the
  folder of the first-party package it imports most (every import statement counts once, those inside
  functions too; on a tie any of the tied packages). A file that loads a script of benchmarks/, studies/ or
  heldout/ (through that folder's loader: `bench_scripts`, `study_scripts`, `heldout_scripts`) belongs to
  tests/benchmarks/, tests/studies/ or tests/heldout/; a file that imports no first-party package checks the
  repository as a whole and belongs to tests/repo/. The few files placed otherwise are in ELSEWHERE, each
  with the reason.
- Nothing but conftest.py and helper modules used from more than one folder sits at tests/ top level; a
  helper used from one folder sits in that folder.
- Every fixture is defined once: a fixture two folders share is in the conftest.py of their nearest
  common folder."""
import ast
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

# folder of tests/ -> the code its tests import (the package, or what stands for it)
FOLDERS = {
    "verifiers": "verifiers",
    "core": "r3bench.core",
    "procgen": "r3bench.procgen",
    "pde": "r3bench.pde",
    "eval": "r3bench.eval",
    "results": "r3bench.results",
    "apps": "r3bench.apps",
    "trainers": "trainers",
    "benchmarks": "bench_scripts",  # the scripts of benchmarks/ (not a package), loaded by tests/benchmarks/bench_scripts.py
    "studies": "study_scripts",  # the study drivers of studies/ (not a package), loaded by tests/studies/study_scripts.py
    "heldout": "heldout_scripts",  # the scoring scripts of heldout/ (not a package), loaded by tests/heldout/heldout_scripts.py
    "repo": None,  # the repository as a whole: layers, lint, docs, the wheel, this rule
}
PACKAGE_FOLDER = {pkg: folder for folder, pkg in FOLDERS.items() if pkg}
SCRIPT_FOLDERS = ("benchmarks", "studies", "heldout")  # folders of scripts: a test that loads one of them is theirs

# test files placed other than by their imports, and why
ELSEWHERE = {
    "verifiers/test_backend_table.py": "the verifier backend table of verifiers/steps.py, followed to the CLI, the trainers and the strategies",
    "eval/test_benchmark_table.py": "the benchmark table of r3bench/eval/data.py, followed to the demo and leaderboard",
    "eval/test_procgen_mixture_tasks.py": "reads the task YAMLs of tasks/r3, whose functions are r3bench.eval's",
    "eval/test_task_versions.py": "tasks/r3's version rule (tasks/r3/_versions.py over r3bench.eval's metric code)",
    "eval/test_task_yamls.py": "tasks/r3's YAMLs resolved by lm-eval (tasks/r3/_generate.py)",
    "core/test_models_fetch.py": "r3bench.core.models and r3bench.core.fetch (the fetch sources come from eval's table)",
    "verifiers/test_steps_forms.py": "the step verifier (verifiers.steps) on every answer form of the procedural bank",
    "apps/test_newuser.py": "a new user's first commands through the r3bench CLI",
    "repo/test_docs.py": "runs the marked blocks of README.md and docs/",
    "verifiers/test_check_order.py": "the step verifier's order of checks (verifiers.reference_based), on errors procgen injects",
}


def _owner(module: str) -> str | None:
    """The folder whose code `module` is (an import's module name), or None if it is not first-party."""
    parts = module.split(".")
    for n in (2, 1):
        if ".".join(parts[:n]) in PACKAGE_FOLDER:
            return PACKAGE_FOLDER[".".join(parts[:n])]
    return None


def imports(path: Path) -> Counter:
    """How many import statements of `path` import each folder's code."""
    counts = Counter()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # `from r3bench import procgen` imports r3bench.procgen
            names = [f"{node.module}.{a.name}" for a in node.names] if node.module == "r3bench" else [node.module]
        else:
            continue
        for folder in {_owner(n) for n in names} - {None}:
            counts[folder] += 1
    return counts


def expected_folders(path: Path) -> set[str]:
    counts = imports(path)
    scripts = {f: counts[f] for f in SCRIPT_FOLDERS if counts[f]}
    if scripts:
        counts = Counter(scripts)
    if not counts:
        return {"repo"}
    top = max(counts.values())
    return {f for f, n in counts.items() if n == top}


def _test_files():
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_file_is_in_a_folder_of_the_code_it_tests():
    files = _test_files()
    assert len(files) > 90, len(files)
    misplaced = []
    for f in files:
        rel = f.relative_to(TESTS)
        assert len(rel.parts) == 2 and rel.parts[0] in FOLDERS, f"{rel}: a test file belongs in one of tests/{{{','.join(FOLDERS)}}}/"
        if rel.as_posix() in ELSEWHERE:
            continue
        want = expected_folders(f)
        if rel.parts[0] not in want:
            misplaced.append(f"{rel}: imports {dict(imports(f))}, so it belongs in tests/{' or tests/'.join(sorted(want))}/")
    assert not misplaced, "\n".join(misplaced) + "\n(move it with git mv, or add it to ELSEWHERE with the reason)"


def test_every_exception_names_a_file_that_needs_it():
    for rel in ELSEWHERE:
        f = TESTS / rel
        assert f.is_file(), f"ELSEWHERE names {rel}, which does not exist"
        assert rel.split("/")[0] not in expected_folders(f), f"{rel} sits where its imports put it: drop it from ELSEWHERE"


def test_helpers_sit_with_their_users():
    """A helper module (tests/**/*.py that is neither a test file nor a conftest) sits in the one folder
    whose tests import it, or at tests/ top level when tests of several folders do."""
    helpers = [p for p in TESTS.rglob("*.py") if not p.name.startswith("test_") and p.name != "conftest.py"]
    assert helpers
    for h in helpers:
        users = {f.relative_to(TESTS).parts[0] for f in TESTS.rglob("*.py")
                 if f != h and any(n == h.stem or n.startswith(h.stem + ".") for n in _imported_names(f))}
        where = h.parent.relative_to(TESTS).parts
        if len(users) > 1:
            assert where == (), f"{h.relative_to(TESTS)} is used from {sorted(users)}: it belongs at tests/ top level"
        else:
            assert where == tuple(users), f"{h.relative_to(TESTS)} is used from {sorted(users) or 'nowhere'}: it belongs there"


def _imported_names(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
    return out


def test_every_fixture_is_defined_once():
    seen: dict[str, list[str]] = {}
    for f in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef) and any(_is_fixture(d) for d in node.decorator_list):
                seen.setdefault(node.name, []).append(str(f.relative_to(TESTS)))
    twice = {name: where for name, where in seen.items() if len(where) > 1}
    assert not twice, f"fixtures defined more than once (one definition, in the conftest.py of the nearest common folder): {twice}"


def _is_fixture(d: ast.expr) -> bool:
    d = d.func if isinstance(d, ast.Call) else d
    return isinstance(d, ast.Attribute) and d.attr == "fixture"


def test_no_test_file_at_the_top_and_no_basename_twice():
    """tests/ has no __init__.py files (pytest's rootdir-less import): two test files of one name in two
    folders would collide as modules."""
    assert not list(TESTS.glob("test_*.py"))
    assert not list(TESTS.rglob("__init__.py"))
    names = Counter(p.name for p in TESTS.rglob("*.py") if p.name != "conftest.py")
    assert [n for n, c in names.items() if c > 1] == []
