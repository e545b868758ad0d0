"""ruff over every tree (pyproject.toml's [tool.ruff]: syntax errors and pyflakes), so the test command
that CI runs fails on an undefined name or an unused import."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = ("r3bench", "verifiers", "trainers", "tasks", "benchmarks", "studies", "heldout", "tests")


def _ruff() -> list[str]:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.fail("ruff is not installed: it is in the test extra (pip install -e '.[test]')")
    return [exe]


def test_ruff_finds_nothing_in_any_tree():
    r = subprocess.run(_ruff() + ["check", "--output-format", "concise", *TREES], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_ruff_would_catch_an_undefined_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    return undefined_name\n")
    r = subprocess.run(_ruff() + ["check", "--output-format", "concise", "--config", str(ROOT / "pyproject.toml"),
                                  str(bad)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "F821" in r.stdout
