"""The scripts of benchmarks/ (not a package) as modules, for the tests that check them."""
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load(script: str, name: str | None = None):
    """benchmarks/<script>.py executed as module `name` (default: the script's name), registered in
    sys.modules first: dataclasses resolve annotations through it, and a script that loads another
    by that name (learning_rescore -> learning_study) finds the same module."""
    name = name or script
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{script}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
