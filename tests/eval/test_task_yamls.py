"""The task YAMLs of tasks/r3/ as lm-eval sees them.

(a) every r3_* task and group, loaded through lm-eval's TaskManager, has the same fully-resolved
    config as the snapshot tests/eval/data/task_configs.json (taken from the YAMLs before they were
    rebuilt on `include:` templates);
(b) the generator is deterministic and the committed files are its output;
(c) every task YAML includes a template, every task and group carries its own version (the version
    table tasks/r3/versions.json), tasks/r3/README.md names them all.

The snapshot names a callable by the `!function` spec that resolves to it and writes file paths
relative to the repository. Rewrite it (only when a task is meant to change) with
    R3BENCH_DATA_DIR=<data> PYTHONPATH=. python tests/eval/test_task_yamls.py --write-snapshot
(`python tasks/r3/_versions.py --bump --why "..."` and `--write` rewrite it themselves: a task's version
is in it).
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tasks" / "r3"
SNAPSHOT = REPO / "tests" / "eval" / "data" / "task_configs.json"
# the module prefixes of the `!function` specs, as the generator names them (the snapshot records
# the values it was taken with, so moving a module means changing the generator's constant only)
DEFAULT_PREFIXES = {"GLUE": "r3bench.eval.lmeval", "TIER_GLUE": "r3bench.eval.procgen_data",
                     "PDE_GLUE": "r3bench.pde.tasks", "PDE_METRICS": "r3bench.pde.metrics"}


def _generator():
    spec = importlib.util.spec_from_file_location("r3_task_generator", TASKS / "_generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


def _task_files() -> list[Path]:
    """Everything lm-eval reads in tasks/r3: the task/group YAMLs and the `_*_yaml` templates."""
    return sorted([*TASKS.glob("*.yaml"), *TASKS.glob("_*_yaml")])


def _spec_names() -> dict[int, str]:
    """id(object) -> the `!function` spec naming it in the task files (the smallest if several)."""
    names: dict[int, str] = {}
    specs = {m for f in _task_files() for m in re.findall(r"!function\s+([\w.]+)", f.read_text())}
    for spec in sorted(specs, reverse=True):
        mod, _, attr = spec.rpartition(".")
        names[id(getattr(importlib.import_module(mod), attr))] = spec
    return names


def _plain(x, names: dict[int, str]):
    if isinstance(x, dict):
        return {str(k): _plain(v, names) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v, names) for v in x]
    if callable(x):
        return "!function " + names.get(id(x), f"?{getattr(x, '__module__', '')}.{getattr(x, '__qualname__', x)}")
    return x


def _relative_source(cfg: dict) -> dict:
    src = cfg.get("metadata", {}).get("config_source")
    if src:
        cfg["metadata"]["config_source"] = Path(src).resolve().relative_to(REPO).as_posix()
    return cfg


def resolved_configs() -> dict:
    """{"tasks": {name: TaskConfig as dict}, "groups": {name: GroupConfig as dict}} for every r3_* name."""
    from lm_eval.tasks import TaskManager

    tm = TaskManager(include_path=str(TASKS.parent), include_defaults=False)
    spec_names = _spec_names()
    tasks, groups = {}, {}
    for n in tm.all_subtasks:
        if n.startswith("r3_"):
            tasks[n] = _relative_source(_plain(dataclasses.asdict(tm.load([n])["tasks"][n].config), spec_names))
    for n in tm.all_groups:
        if n.startswith("r3_"):
            group = tm.load([n])["groups"][n]
            groups[n] = _relative_source(_plain({**dataclasses.asdict(group._config),
                                                 "children": group.child_names}, spec_names))
    return {"tasks": dict(sorted(tasks.items())), "groups": dict(sorted(groups.items()))}


def _renamed(snapshot: dict, gen) -> dict:
    """The snapshot with each recorded module prefix replaced by the generator's current one."""
    text = json.dumps(snapshot)
    for key, old in snapshot["prefixes"].items():
        new = getattr(gen, key, old)
        text = text.replace(f'"!function {old}.', f'"!function {new}.')
    return json.loads(text)


@pytest.fixture(scope="module")
def configs(shared_data):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("R3BENCH_DATA_DIR", str(shared_data))
        mp.syspath_prepend(str(REPO))
        yield resolved_configs()


def test_resolved_task_configs_match_the_snapshot(configs):
    want = _renamed(json.loads(SNAPSHOT.read_text()), _generator())
    assert sorted(configs["tasks"]) == sorted(want["tasks"])
    assert sorted(configs["groups"]) == sorted(want["groups"])
    for kind in ("tasks", "groups"):
        for name, cfg in want[kind].items():
            assert configs[kind][name] == cfg, name


def _run_generator(out: Path) -> dict[str, bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, str(TASKS / "_generate.py"), str(out)], env=env, check=True,
                   capture_output=True, text=True)
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_generator_is_deterministic_and_the_committed_files_are_its_output(tmp_path):
    first, second = _run_generator(tmp_path / "a"), _run_generator(tmp_path / "b")
    assert first == second
    gen = _generator()
    committed = {p.name: p.read_bytes() for p in gen.generated(TASKS)}
    assert sorted(committed) == sorted(first), "rerun python tasks/r3/_generate.py"
    for name, text in first.items():
        assert committed[name] == text, f"{name}: rerun python tasks/r3/_generate.py"


def test_generator_rewrites_only_its_own_files(tmp_path):
    (tmp_path / "mine.yaml").write_text("task: mine\n")
    (tmp_path / "r3_gone.yaml").write_text(_generator().HEADER + "\ntask: r3_gone\n")
    names = set(_run_generator(tmp_path))
    assert "mine.yaml" in names and "r3_gone.yaml" not in names and "r3_scieval.yaml" in names


def _raw(path: Path) -> dict:
    import yaml

    return yaml.load(path.read_text().replace("!function", "!!str"), Loader=yaml.SafeLoader)


def test_every_task_file_includes_a_template_and_carries_its_own_version():
    task_files = [p for p in TASKS.glob("*.yaml") if "task" in _raw(p) and "group" not in _raw(p)]
    templates = sorted(TASKS.glob("_*_yaml"))
    assert len(task_files) >= 30 and len(templates) >= 5
    for p in task_files:
        inc = _raw(p).get("include")
        assert inc and (TASKS / inc).is_file() and inc.startswith("_") and not inc.endswith(".yaml"), p.name
    for t in templates:
        raw = _raw(t)
        assert "task" not in raw and "group" not in raw, t.name  # lm-eval never indexes a template
        assert "metadata" not in raw, t.name  # a version is a task's own, never a template's
    # every task and group file: the version of the version table (tasks/r3/versions.json; the rule that
    # bumps it: tests/eval/test_task_versions.py)
    table = json.loads((TASKS / "versions.json").read_text())["tasks"]
    for p in TASKS.glob("*.yaml"):
        raw = _raw(p)
        assert raw["metadata"]["version"] == table[raw.get("group") or raw["task"]]["version"], p.name


def test_every_task_is_versioned(configs):
    for kind in ("tasks", "groups"):
        for name, cfg in configs[kind].items():
            assert isinstance(cfg["metadata"].get("version"), float), name


def test_readme_names_every_task_group_and_template(configs):
    readme = (TASKS / "README.md").read_text()
    for name in [*configs["tasks"], *configs["groups"], *(t.name for t in TASKS.glob("_*_yaml"))]:
        assert f"`{name}`" in readme, name


def _write_snapshot():
    out = {"about": "the resolved lm-eval configs of tasks/r3 (tests/eval/test_task_yamls.py --write-snapshot)",
           "prefixes": {k: getattr(_generator(), k, v) for k, v in DEFAULT_PREFIXES.items()},
           **resolved_configs()}
    SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
    SNAPSHOT.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT.relative_to(REPO)}: {len(out['tasks'])} tasks, {len(out['groups'])} groups")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-snapshot"]:
        sys.exit(__doc__)
    if not os.environ.get("R3BENCH_DATA_DIR"):
        sys.exit("set R3BENCH_DATA_DIR to the benchmark data directory")
    _write_snapshot()
