"""Task versions, one per task: a change to the code behind a task's metrics bumps that task's version.

    python tasks/r3/_versions.py                     check (exit 1 naming the tasks to bump, or what is stale)
    python tasks/r3/_versions.py --bump --why "..."  the metric code changed: bump exactly the tasks whose
                                                     hash changed, with a changelog line (refused without --why)
    python tasks/r3/_versions.py --write             a task was added or removed (a benchmark's row, a variant):
                                                     record it; no version changes (refused while a hash changed)

`versions.json` (committed) is the version table: every r3 task and group -> its version and a hash of
its metric code. tasks/r3/_generate.py writes each YAML's `metadata: version:` from it; a name the table
does not hold yet enters at 1.0 (`FIRST_VERSION` there), so adding a benchmark leaves every other task's
version alone. The hash covers the source of the module its `process_results`, aggregations and filters
live in (the task's utils: r3bench/eval/lmeval.py, r3bench/pde/tasks.py, ...) and of the checker modules
those scores rest on (ROOTS, followed through their imports inside `verifiers/`: answer, extract, units,
symbolic, safeexpr, config, worker, ...). Comments, docstrings and blank lines are left out of the hash, so
only code counts. A group's hash is over the distinct hashes of its tasks: it changes when their metric
code does, not when a task joins the group (a new benchmark's task joins `r3_physics`; lm-eval lists a
group's subtasks and their versions beside every result). tests/eval/test_task_versions.py runs the check.

--bump and --write are the whole procedure, each one command: they rerun tasks/r3/_generate.py, update the
table (--bump: the next tenth, 1.5 -> 1.6, 1.9 -> 2.0, of each task whose hash changed, and its new hash;
the line "* version 1.6 of `r3_x`, ...: WHY" appended to the changelog of tasks/r3/README.md), rerun the
generator so the YAMLs carry the new versions, and rewrite the resolved-config snapshot
(tests/eval/test_task_yamls.py --write-snapshot; they need R3BENCH_DATA_DIR). Branches that bump different
tasks merge cleanly; two that bump the same task conflict in versions.json (and the YAMLs, the snapshot,
the changelog): while rebasing, take main's side of those files, then rerun --bump --why with your line -
it bumps from main's versions.
"""
from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import tokenize

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[1]
MANIFEST = HERE / "versions.json"
README = HERE / "README.md"
GENERATOR = HERE / "_generate.py"
SNAPSHOT_WRITER = REPO / "tests" / "eval" / "test_task_yamls.py"
COMMAND = "python tasks/r3/_versions.py --write"
BUMP = 'python tasks/r3/_versions.py --bump --why "what changed, for whom"'
GENERATE = "python tasks/r3/_generate.py"

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
        # over the distinct hashes of its tasks: a task joining the group (a new benchmark) changes nothing
        h = hashlib.sha256(" ".join(sorted({tasks[t]["code"] for t in raw["task"]})).encode()).hexdigest()[:16]
        out[name] = {"version": raw["metadata"]["version"], "code": h,
                     "modules": sorted({m for t in raw["task"] for m in tasks[t]["modules"]})}
    return dict(sorted(out.items()))


def problems(now: dict, recorded: dict) -> tuple[list[str], list[str]]:
    """(tasks whose metric code changed since the table recorded their version, other ways the table or
    the YAMLs are stale)."""
    bump, stale = [], []
    for name, e in now.items():
        r = recorded.get(name)
        if r is None:
            stale.append(f"{name} is not in the table (new: run `{COMMAND}`)")
        elif e["code"] != r["code"]:
            bump.append(name)
        elif e["version"] != r["version"]:
            stale.append(f"{name}'s YAML says version {e['version']}, the table {r['version']} (run `{GENERATE}`)")
    stale += [f"{name} is gone (run `{COMMAND}`)" for name in recorded if name not in now]
    return bump, stale


def message(bump: list[str], stale: list[str], now: dict) -> str:
    out = []
    if bump:
        mods = sorted({m for t in bump for m in now[t]["modules"]})
        files = sorted({f for m in mods for f in files_of(m)})
        out.append(f"the metric code of {len(bump)} task(s) changed since their version was recorded: "
                   f"{', '.join(bump)} (code: {', '.join(files)}). Bump exactly these, with the changelog "
                   f"line: `{BUMP}`")
    if stale:
        out.append(f"tasks/r3 is stale ({'; '.join(stale[:8])}{' ...' if len(stale) > 8 else ''})")
    return "\n".join(out)


def next_version(v: float) -> float:
    """The next tenth: 1.5 -> 1.6, 1.9 -> 2.0 (versions are numbers in the YAMLs, so there is no 1.10)."""
    return round(v + 0.1, 1)


def table(now: dict, recorded: dict, bump: bool = False) -> dict:
    """The version table for the tasks `now` holds: a recorded task keeps its version, or (bump=True)
    gets the next one where its hash changed; a new task enters at the version its YAML has (the
    generator's FIRST_VERSION); a task no longer generated leaves. Refuses (ValueError) a changed hash
    without bump=True."""
    out = {}
    for name, e in now.items():
        r = recorded.get(name)
        if r is None:
            out[name] = {"version": e["version"], "code": e["code"]}
        elif r["code"] == e["code"]:
            out[name] = {"version": r["version"], "code": r["code"]}
        elif bump:
            out[name] = {"version": next_version(r["version"]), "code": e["code"]}
        else:
            raise ValueError(f"{name}: its metric code changed: `{BUMP}`")
    return out


def changelog_line(old: dict, new: dict, why: str) -> str:
    """`* version 1.6 of `r3_a`, `r3_b`; version 1.8 of `r3_c`: WHY` for the tasks whose version went up."""
    by_version: dict[float, list[str]] = {}
    for name, e in new.items():
        if name in old and e["version"] != old[name]["version"]:
            by_version.setdefault(e["version"], []).append(name)
    parts = [f"version {v} of " + ", ".join(f"`{n}`" for n in sorted(names)) for v, names in sorted(by_version.items())]
    return f"* {'; '.join(parts)}: {' '.join(why.split())}"


def add_changelog(line: str, readme: pathlib.Path = README) -> None:
    """Append `line` to the `### Changelog` section of `readme` (before the next heading, or at the end)."""
    text = readme.read_text(encoding="utf-8")
    at = text.find("\n### Changelog\n")
    if at < 0:
        raise SystemExit(f"{readme}: no `### Changelog` section to add the line to")
    nxt = re.search(r"^#", text[at + len("\n### Changelog\n"):], re.M)
    end = at + len("\n### Changelog\n") + nxt.start() if nxt else len(text)
    body = text[:end].rstrip("\n") + "\n" + line + "\n"
    readme.write_text(body + ("\n" + text[end:] if nxt else ""), encoding="utf-8")


def read() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))["tasks"] if MANIFEST.is_file() else {}


def write(tasks: dict) -> None:
    """Write the version table (`tasks`: name -> {"version", "code"}) and the files each module's hash covers."""
    files = {m: files_of(m) for m in ROOTS}
    body = {"about": "the version table of tasks/r3: each task's version and the hash of its metric code "
                     f"(tasks/r3/_versions.py: `{BUMP}`, `{COMMAND}`)",
            "files": files, "tasks": {n: {"version": e["version"], "code": e["code"]} for n, e in tasks.items()}}
    MANIFEST.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _run(cmd: list) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, *map(str, cmd)], cwd=REPO, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{done.stderr[-4000:]}")


def regenerate() -> None:
    """Rerun tasks/r3/_generate.py (it reads the table): the YAMLs carry the table's versions."""
    _run([GENERATOR])


def write_snapshot() -> None:
    """Rewrite the resolved configs of every task (tests/eval/test_task_yamls.py --write-snapshot)."""
    _run([SNAPSHOT_WRITER, "--write-snapshot"])


def update(why: str | None) -> int:
    """--write (why None) and --bump: regenerate, update the table (and the changelog), regenerate,
    rewrite the snapshot."""
    now = current()
    bump, _ = problems(now, read())
    if bump and why is None:  # before anything is written
        print(message(bump, [], now), file=sys.stderr)
        return 1
    if not os.environ.get("R3BENCH_DATA_DIR"):
        print("set R3BENCH_DATA_DIR (the benchmark data directory): the snapshot of the resolved task configs "
              "is rewritten with the versions", file=sys.stderr)
        return 2
    regenerate()  # a new benchmark's tasks, a changed variant: the YAMLs first, at the table's versions
    now, old = current(), read()
    bump, _ = problems(now, old)
    if bump and why is None:
        print(message(bump, [], now), file=sys.stderr)
        return 1
    if why is not None and not bump:
        print(f"no task's metric code changed: nothing to bump (a new or removed task: `{COMMAND}`)",
              file=sys.stderr)
        return 1
    new = table(now, old, bump=why is not None)
    write(new)
    if why is not None:
        add_changelog(changelog_line(old, new, why))
    regenerate()
    after = current()
    left_bump, left_stale = problems(after, read())
    if left_bump or left_stale:  # the generator did not write the table's versions
        print(message(left_bump, left_stale, after), file=sys.stderr)
        return 1
    write_snapshot()
    notes = [f"bumped {n} {old[n]['version']} -> {new[n]['version']}"
             for n in new if n in old and new[n]["version"] != old[n]["version"]]
    notes += [f"new: {n} at {new[n]['version']}" for n in new if n not in old]
    notes += [f"gone: {n}" for n in old if n not in new]
    print(f"wrote {MANIFEST.relative_to(REPO)} ({len(new)} tasks and groups), tasks/r3 and the snapshot"
          + "".join(f"\n  {x}" for x in notes))
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--write"]:
        return update(None)
    if argv[:1] == ["--bump"]:
        why = argv[2] if len(argv) == 3 and argv[1] == "--why" else \
            argv[1][len("--why="):] if len(argv) == 2 and argv[1].startswith("--why=") else ""
        if not why.strip():
            print(f"--bump needs the changelog line: `{BUMP}` (it goes to tasks/r3/README.md with the "
                  "names of the tasks it bumps)", file=sys.stderr)
            return 2
        return update(why)
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    now = current()
    bump, stale = problems(now, read())
    if bump or stale:
        print(message(bump, stale, now), file=sys.stderr)
        return 1
    print(f"{len(now)} tasks and groups: versions match their metric code and the table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
