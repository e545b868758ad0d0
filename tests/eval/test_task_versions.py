"""Task versions, one per task: a change to the code behind a task's metrics bumps that task's version.

tasks/r3/versions.json is the version table: per r3 task and group, its version and a hash of its metric
code (the task's utils module and the checker modules under it: tasks/r3/_versions.py). The generator
writes each YAML's version from it; a task it does not hold enters at 1.0. This test fails when that code
changed and the table did not, naming the tasks to bump and the one command that bumps exactly them:
python tasks/r3/_versions.py --bump --why "..." (new or removed tasks: python tasks/r3/_versions.py --write).
Every test here that writes works on temporary copies; the real repository is only read.
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "tasks" / "r3"


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _versions():
    return _load("r3_task_versions", TASKS / "_versions.py")


@pytest.fixture(scope="module")
def versions():
    return _versions()


@pytest.fixture(scope="module")
def now(versions):
    return versions.current()


def test_every_task_version_matches_its_metric_code(versions, now):
    bump, stale = versions.problems(now, versions.read())
    assert not bump and not stale, versions.message(bump, stale, now)


def test_the_checker_modules_are_in_every_checker_tasks_hash(versions, now):
    files = versions.files_of("r3bench.eval.lmeval")
    for f in ("verifiers/answer.py", "verifiers/extract.py", "verifiers/units.py", "verifiers/symbolic.py",
              "verifiers/safeexpr.py", "verifiers/config.py", "r3bench/eval/lmeval.py"):
        assert f in files, f
    assert now["r3_jeebench"]["modules"] == ["r3bench.eval.lmeval"]
    assert "r3bench.pde.tasks" in now["r3_pde_seen"]["modules"]


def test_a_code_change_without_a_bump_fails_naming_the_tasks_and_the_command(versions, monkeypatch, capsys):
    recorded = versions.read()
    real = versions.code_text

    def changed(rel):  # verifiers/answer.py as if someone changed the checker
        return real(rel) + ("\nx = 1" if rel == "verifiers/answer.py" else "")

    monkeypatch.setattr(versions, "code_text", changed)
    now = versions.current()
    bump, stale = versions.problems(now, recorded)
    assert "r3_jeebench" in bump and "r3_physics" in bump and not stale
    assert "r3_stepverify" in bump and "r3_pde_sc" in bump  # their metric code imports the checker too
    msg = versions.message(bump, stale, now)
    assert "r3_jeebench" in msg and "verifiers/answer.py" in msg
    assert "python tasks/r3/_versions.py --bump --why" in msg
    before = versions.MANIFEST.read_bytes()
    assert versions.main(["--write"]) == 1  # --write never bumps: it refuses before writing anything
    assert "--bump --why" in capsys.readouterr().err and versions.MANIFEST.read_bytes() == before


def test_comments_docstrings_and_blank_lines_do_not_count(versions):
    code = 'def f(x):\n    return x + 1  # why\n'
    noisy = '"""Module."""\n# a comment\n\ndef f(x):\n    """What f does."""\n    return x + 1  # why, said again\n'
    assert versions.strip(noisy) == versions.strip(code) == "def f(x):\n    return x + 1"
    assert versions.strip(code.replace("+ 1", "+ 2")) != versions.strip(code)


def test_a_table_version_the_yamls_do_not_carry_says_regenerate(versions, now):
    recorded = json.loads(json.dumps(versions.read()))
    recorded["r3_jeebench"]["version"] = now["r3_jeebench"]["version"] + 0.1
    bump, stale = versions.problems(now, recorded)
    assert not bump and [s for s in stale if "r3_jeebench" in s] and len(stale) == 1
    assert "python tasks/r3/_generate.py" in versions.message(bump, stale, now)


def test_bumping_one_tasks_hash_bumps_only_that_task(versions, now):
    recorded = versions.read()
    changed = json.loads(json.dumps(now))
    changed["r3_pde_sc"]["code"] = "0" * 16
    assert versions.problems(changed, recorded)[0] == ["r3_pde_sc"]
    with pytest.raises(ValueError, match="--bump"):  # never without bump=True (the --why)
        versions.table(changed, recorded)
    new = versions.table(changed, recorded, bump=True)
    assert new["r3_pde_sc"] == {"version": versions.next_version(recorded["r3_pde_sc"]["version"]), "code": "0" * 16}
    assert new["r3_pde_sc"]["version"] > recorded["r3_pde_sc"]["version"]
    assert {n: e for n, e in new.items() if n != "r3_pde_sc"} == \
        {n: e for n, e in recorded.items() if n != "r3_pde_sc"}
    line = versions.changelog_line(recorded, new, "the PDE sampler's  aggregation\n changed")
    assert line == f"* version {new['r3_pde_sc']['version']} of `r3_pde_sc`: the PDE sampler's aggregation changed"
    assert [versions.next_version(v) for v in (1.0, 1.5, 1.7, 1.9)] == [1.1, 1.6, 1.8, 2.0]


def test_a_new_task_enters_at_1_0_and_moves_no_other_version(versions, tmp_path):
    """A benchmark's row adds r3_<name>* and puts r3_<name> in the r3_physics* groups: a YAML folder with
    one more such task (a copy of r3_scieval's) has nothing to bump, and the table it makes holds the new
    task at the first version and every other task as it was."""
    folder = tmp_path / "r3"
    shutil.copytree(TASKS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    text = (folder / "r3_scieval.yaml").read_text().replace("task: r3_scieval", "task: r3_newbench")
    (folder / "r3_newbench.yaml").write_text(re.sub(r"version: [0-9.]+", "version: 1.0", text))
    group = (folder / "r3_physics.yaml").read_text()
    (folder / "r3_physics.yaml").write_text(group.replace("  - r3_scieval\n", "  - r3_scieval\n  - r3_newbench\n"))
    now, recorded = versions.current(folder), versions.read()
    assert now["r3_newbench"]["version"] == 1.0 and now["r3_newbench"]["code"] == now["r3_scieval"]["code"]
    bump, stale = versions.problems(now, recorded)
    assert not bump, bump  # the group's hash follows its tasks' metric code, not how many it has
    assert len(stale) == 1 and "r3_newbench is not in the table" in stale[0]
    new = versions.table(now, recorded)
    assert new["r3_newbench"]["version"] == 1.0
    assert {n: e for n, e in new.items() if n != "r3_newbench"} == recorded


def test_the_yamls_versions_come_from_the_table(tmp_path, monkeypatch):
    gen = _load("r3_task_generator_versions", TASKS / "_generate.py")
    committed = {p.name: p.read_text() for p in gen.generated(TASKS)}
    table = json.loads((TASKS / "versions.json").read_text())
    table["tasks"]["r3_pde_sc"]["version"] = 9.9
    table["tasks"]["r3_physics"]["version"] = 8.8
    for name in ("r3_scieval", "r3_scieval_sc", "r3_scieval_structured"):  # as if new: not in the table yet
        del table["tasks"][name]
    (tmp_path / "versions.json").write_text(json.dumps(table))
    monkeypatch.setattr(gen, "VERSION_TABLE", tmp_path / "versions.json")
    assert gen.FIRST_VERSION == 1.0
    out = {n: gen.HEADER + "\n" + body for n, body in gen.files().items()}
    want = {"r3_pde_sc.yaml": 9.9, "r3_physics.yaml": 8.8, "r3_scieval.yaml": 1.0, "r3_scieval_sc.yaml": 1.0,
            "r3_scieval_structured.yaml": 1.0}
    assert sorted(out) == sorted(committed)
    for name, text in out.items():
        if name in want:
            assert text != committed[name] and text.endswith(f"metadata:\n  version: {want[name]}\n"), name
        else:
            assert text == committed[name], name  # no other file moves


def test_bump_without_why_is_refused(versions, capsys):
    before = versions.MANIFEST.read_bytes(), versions.README.read_bytes()
    for argv in (["--bump"], ["--bump", "--why", "  "], ["--bump", "--why="], ["--bump", "oops"]):
        assert versions.main(argv) == 2, argv
        assert "--why" in capsys.readouterr().err
    assert (versions.MANIFEST.read_bytes(), versions.README.read_bytes()) == before


def _copy_of_the_repo(dest: Path) -> Path:
    """What --bump reads and writes, copied: the packages, the task folder, the held-out items the
    step-verification tasks load, the snapshot and its writer."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for d in ("r3bench", "verifiers", "tasks", "heldout"):
        shutil.copytree(REPO / d, dest / d, ignore=skip)
    for f in ("pyproject.toml", "tests/eval/test_task_yamls.py", "tests/eval/data/task_configs.json"):
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dest / f)
    return dest


@pytest.mark.slow  # lm-eval loads every task for the snapshot (about a minute)
def test_bump_in_a_copy_bumps_exactly_the_changed_tasks_with_the_changelog(tmp_path, shared_data):
    """The one command, end to end, on a copy: a change to the step-verification metric code bumps the
    four r3_stepverify* tasks (table, YAMLs, snapshot, changelog) and nothing else; the check passes."""
    repo = _copy_of_the_repo(tmp_path / "repo")
    code = repo / "r3bench" / "eval" / "stepverify.py"
    code.write_text(code.read_text() + "\n_PROBE = 1\n")
    env = {**os.environ, "PYTHONPATH": str(repo), "R3BENCH_DATA_DIR": str(shared_data)}

    def run(*argv):
        return subprocess.run([sys.executable, "tasks/r3/_versions.py", *argv], cwd=repo, env=env,
                              capture_output=True, text=True)

    assert run().returncode == 1  # the check names them
    assert run("--bump").returncode == 2  # no changelog line, no bump
    done = run("--bump", "--why", "the step verifier's probe")
    assert done.returncode == 0, done.stderr
    old = json.loads((TASKS / "versions.json").read_text())["tasks"]
    new = json.loads((repo / "tasks" / "r3" / "versions.json").read_text())["tasks"]
    moved = sorted(n for n in new if new[n]["version"] != old[n]["version"])
    assert moved == ["r3_stepverify", "r3_stepverify_procgen", "r3_stepverify_real", "r3_stepverify_written"]
    assert all(new[n]["version"] == round(old[n]["version"] + 0.1, 1) for n in moved)
    assert sorted(new) == sorted(old)
    last = (repo / "tasks" / "r3" / "README.md").read_text().rstrip("\n").splitlines()[-1]
    v = new["r3_stepverify"]["version"]
    assert last == (f"* version {v} of `r3_stepverify`, `r3_stepverify_procgen`, `r3_stepverify_real`, "
                    "`r3_stepverify_written`: the step verifier's probe")
    assert (repo / "tasks" / "r3" / "r3_stepverify_real.yaml").read_text().endswith(f"version: {v}\n")
    snap = json.loads((repo / "tests" / "eval" / "data" / "task_configs.json").read_text())
    assert {n: c["metadata"]["version"] for n, c in snap["tasks"].items()} == \
        {n: e["version"] for n, e in new.items() if n in snap["tasks"]}
    assert run().returncode == 0
    assert run("--bump", "--why", "again").returncode == 1  # nothing changed since: nothing to bump
