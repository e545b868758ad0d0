"""The task-version rule: a change to the code behind a task's metrics bumps the task's version.

    python tasks/r3/_versions.py            check (exit 1 naming the tasks to bump, or a stale manifest)
    python tasks/r3/_versions.py --write    refresh tasks/r3/versions.json (refused while a task's
                                            metric code changed and its version did not)

`versions.json` (committed) maps every r3 task and group to its version and a hash of its metric code:
the source of the module its `process_results`, aggregations and filters live in (the task's utils:
r3bench/eval/lmeval.py, r3bench/pde/tasks.py, ...) and of the checker modules those scores rest on
(ROOTS, followed through their imports inside `verifiers/`: answer, extract, units, symbolic, safeexpr,
config, worker, ...). Comments, docstrings and blank lines are left out of the hash, so only code
counts. A group's hash is over its tasks' hashes. tests/eval/test_task_versions.py runs the check.

When the check fails because code changed: bump VERSION (or PDE_VERSION) in tasks/r3/_generate.py,
add the changelog line in tasks/r3/README.md, run `python tasks/r3/_generate.py`, then this script
with --write.
"""
from __future__ import annotations

import ast
import hashlib
import io
import json
import pathlib
import re
import sys
import tokenize

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
MANIFEST = HERE / "versions.json"
COMMAND = "python tasks/r3/_versions.py --write"
# the module a task's metric functions live in -> the files its scores rest on (followed through their
# imports inside verifiers/, the checker package)
ROOTS = {
    "r3bench.eval.lmeval": ("r3bench/eval/lmeval.py", "verifiers/answer.py", "verifiers/seventag.py"),
    "r3bench.pde.tasks": ("r3bench/pde/tasks.py", "r3bench/pde/verify.py", "r3bench/pde/metrics.py"),
    "r3bench.pde.metrics": ("r3bench/pde/metrics.py",),
    "r3bench.eval.stepverify": ("r3bench/eval/stepverify.py", "r3bench/eval/stepverify_data.py"),
}
FOLLOW = "verifiers"
# the keys of a task config whose `!function` values compute or aggregate its metrics
_DOTTED = re.compile(r"\w+(\.\w+){2,}")  # a function's dotted name (module.function, the module dotted)
_METRIC_KEYS = ("process_results", "metric_list", "filter_list")


def _imports(rel: str) -> list[str]:
    """The files of FOLLOW that `rel` imports (`from verifiers import x`, `from verifiers.x import y`)."""
    tree = ast.parse((REPO / rel).read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == FOLLOW:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] == FOLLOW]
        for n in names:
            parts = n.split(".")
            for f in (pathlib.Path(*parts).with_suffix(".py"), pathlib.Path(*parts) / "__init__.py"):
                if (REPO / f).is_file():
                    out.append(f.as_posix())
                    break
    return out


def files_of(module: str) -> list[str]:
    """Every file the metric code of `module` rests on: its ROOTS and what they import in verifiers/."""
    todo, seen = list(ROOTS[module]), set()
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo += _imports(f)
    return sorted(seen)


def code_text(rel: str) -> str:
    """A file's code without comments, docstrings and blank lines (what the hash covers)."""
    return strip((REPO / rel).read_text(encoding="utf-8"))


def strip(src: str) -> str:
    """Python source without comments, docstrings and blank lines."""
    drop = set()
    for node in ast.walk(ast.parse(src)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            drop.update(range(body[0].lineno, body[0].end_lineno + 1))
    lines = src.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            r, c = tok.start
            lines[r - 1] = lines[r - 1][:c]
    return "\n".join(ln.rstrip() for i, ln in enumerate(lines, 1) if i not in drop and ln.strip())


def code_hash(files) -> str:
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f.encode() + b"\0" + code_text(f).encode() + b"\0")
    return h.hexdigest()[:16]


def _raw(path: pathlib.Path) -> dict:
    import yaml

    # a `!function` value read as the text of its dotted name
    return yaml.load(path.read_text(encoding="utf-8").replace("!function", "!!str"), Loader=yaml.SafeLoader) or {}


def _metric_modules(cfg: dict) -> set[str]:
    """The modules named by the `!function` values of the keys that compute or aggregate metrics."""
    def strings(x):
        if isinstance(x, dict):
            return [s for v in x.values() for s in strings(v)]
        if isinstance(x, list):
            return [s for v in x for s in strings(v)]
        return [x] if isinstance(x, str) else []

    return {s.rpartition(".")[0] for k in _METRIC_KEYS for s in strings(cfg.get(k)) if _DOTTED.fullmatch(s)}


def current(folder: pathlib.Path = HERE) -> dict:
    """{name: {"version", "code", "modules"}} of every task and group in `folder`, read from its YAMLs."""
    tasks, groups, hashes = {}, {}, {}
    for p in sorted(folder.glob("*.yaml")):
        raw = _raw(p)
        if "group" in raw:
            groups[raw["group"]] = raw
        elif "task" in raw:
            base = _raw(folder / raw["include"]) if raw.get("include") else {}
            cfg = {**base, **raw}
            mods = sorted(_metric_modules(cfg))
            unknown = [m for m in mods if m not in ROOTS]
            if unknown:
                raise SystemExit(f"{p.name}: metric functions in {unknown}: add the module to ROOTS in {__file__}")
            if tuple(mods) not in hashes:  # one hash per set of modules (most tasks share one)
                hashes[tuple(mods)] = code_hash({f for m in mods for f in files_of(m)})
            tasks[raw["task"]] = {"version": cfg["metadata"]["version"], "code": hashes[tuple(mods)], "modules": mods}
    out = dict(tasks)
    for name, raw in groups.items():
        h = hashlib.sha256(" ".join(sorted(tasks[t]["code"] for t in raw["task"])).encode()).hexdigest()[:16]
        out[name] = {"version": raw["metadata"]["version"], "code": h, "modules": []}
    return dict(sorted(out.items()))


def problems(now: dict, recorded: dict) -> tuple[list[str], list[str]]:
    """(tasks whose metric code changed while their version did not, other ways the manifest is stale)."""
    bump, stale = [], []
    for name, e in now.items():
        r = recorded.get(name)
        if r is None:
            stale.append(f"{name} is not in the manifest")
        elif e["version"] == r["version"] and e["code"] != r["code"]:
            bump.append(name)
        elif e["version"] < r["version"]:
            stale.append(f"{name}'s version went down ({r['version']} -> {e['version']})")
        elif e["version"] != r["version"]:
            stale.append(f"{name} was bumped to {e['version']} (manifest: {r['version']})")
    stale += [f"{name} is gone" for name in recorded if name not in now]
    return bump, stale


def message(bump: list[str], stale: list[str], now: dict) -> str:
    out = []
    if bump:
        mods = sorted({m for t in bump for m in now[t]["modules"]})
        files = sorted({f for m in mods for f in files_of(m)})
        out.append(f"the metric code of {len(bump)} task(s) changed but their version did not: {', '.join(bump)} "
                   f"(code: {', '.join(files)}). Bump VERSION / PDE_VERSION in tasks/r3/_generate.py, add a "
                   f"changelog line to tasks/r3/README.md, run `python tasks/r3/_generate.py`, then `{COMMAND}`")
    if stale:
        out.append(f"tasks/r3/versions.json is stale ({'; '.join(stale[:8])}{' ...' if len(stale) > 8 else ''}): "
                   f"run `{COMMAND}`")
    return "\n".join(out)


def read() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["tasks"] if MANIFEST.is_file() else {}


def write(now: dict) -> None:
    files = {m: files_of(m) for m in ROOTS}
    body = {"about": f"task versions and the hash of their metric code; refresh: {COMMAND}",
            "files": files, "tasks": {n: {"version": e["version"], "code": e["code"]} for n, e in now.items()}}
    MANIFEST.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    now = current()
    bump, stale = problems(now, read())
    if argv == ["--write"]:
        if bump:
            print(message(bump, [], now), file=sys.stderr)
            return 1
        write(now)
        print(f"wrote {MANIFEST.relative_to(REPO)}: {len(now)} tasks and groups")
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    if bump or stale:
        print(message(bump, stale, now), file=sys.stderr)
        return 1
    print(f"{len(now)} tasks and groups: versions match their metric code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
