"""The scripts of benchmarks/, studies/ and heldout/ (folders of scripts, not packages) as modules, for the
tests that check them. Each test folder has its own loader naming its folder (tests/benchmarks/bench_scripts.py,
tests/studies/study_scripts.py, tests/heldout/heldout_scripts.py), so tests/repo/test_tests_layout.py can tell
from a test file's imports which folder's scripts it tests."""
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def loader(folder: str):
    """load(script, name=None) for the scripts of ROOT/<folder>/."""

    def load(script: str, name: str | None = None):
        """<folder>/<script>.py executed as module `name` (default: the script's name), registered in
        sys.modules first: dataclasses resolve annotations through it, and a script that loads another
        by that name (learning_rescore -> learning_study) finds the same module."""
        name = name or script
        spec = importlib.util.spec_from_file_location(name, ROOT / folder / f"{script}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    return load
