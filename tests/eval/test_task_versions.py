"""The task-version rule (issue 38): a change to the code behind a task's metrics bumps its version.

tasks/r3/versions.json records, per r3 task and group, its version and a hash of its metric code (the
task's utils module and the checker modules under it: tasks/r3/_versions.py). This test fails when that
code changed and the version did not, naming the tasks to bump and the one command that refreshes the
manifest afterwards: python tasks/r3/_versions.py --write
"""
import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _versions():
    spec = importlib.util.spec_from_file_location("r3_task_versions", REPO / "tasks" / "r3" / "_versions.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


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


def test_a_code_change_without_a_bump_fails_naming_the_tasks_and_the_command(versions, monkeypatch):
    recorded = versions.read()
    real = versions.code_text

    def changed(rel):  # verifiers/answer.py as if someone changed the checker
        return real(rel) + ("\nx = 1" if rel == "verifiers/answer.py" else "")

    monkeypatch.setattr(versions, "code_text", changed)
    now = versions.current()
    bump, stale = versions.problems(now, recorded)
    assert "r3_jeebench" in bump and "r3_physics" in bump and not stale
    msg = versions.message(bump, stale, now)
    assert "r3_jeebench" in msg and "verifiers/answer.py" in msg and "python tasks/r3/_versions.py --write" in msg
    assert "VERSION" in msg and "tasks/r3/_generate.py" in msg
    assert versions.main(["--write"]) == 1  # the refresh refuses while a bump is missing


def test_comments_docstrings_and_blank_lines_do_not_count(versions):
    code = 'def f(x):\n    return x + 1  # why\n'
    noisy = '"""Module."""\n# a comment\n\ndef f(x):\n    """What f does."""\n    return x + 1  # why, said again\n'
    assert versions.strip(noisy) == versions.strip(code) == "def f(x):\n    return x + 1"
    assert versions.strip(code.replace("+ 1", "+ 2")) != versions.strip(code)


def test_a_bump_without_a_refresh_says_refresh(versions, now):
    recorded = json.loads(json.dumps(versions.read()))
    recorded["r3_jeebench"]["version"] = now["r3_jeebench"]["version"] - 0.1
    bump, stale = versions.problems(now, recorded)
    assert not bump and any("r3_jeebench was bumped" in s for s in stale)
    assert "python tasks/r3/_versions.py --write" in versions.message(bump, stale, now)
