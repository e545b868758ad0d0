"""The built wheel carries every tracked file of the installed packages: the task YAMLs and their
`include:` templates (`_r3_*_template_yaml`, no .yaml suffix), verifiers/formulas.yaml, the trainers'
configs, the demo problems and the lm-eval hook's .pth. An editable install (what the tests run on)
reads them from the checkout and would never notice one missing from the wheel."""
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("r3bench", "verifiers", "trainers", "tasks")


@pytest.mark.slow
def test_wheel_holds_every_tracked_package_file(tmp_path):
    try:
        tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", *PACKAGES], capture_output=True, text=True,
                                 check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.fail(f"git ls-files failed (the test needs a git checkout): {e}")
    # pip builds in an isolated environment with the backend pyproject.toml names (hatchling)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = tmp_path.glob("r3bench-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [t for t in tracked if t not in names and (ROOT / t).is_file()]
    assert not missing, missing
    assert {"verifiers/formulas.yaml", "tasks/r3/_r3_structured_template_yaml", "r3bench_lmeval_hook.pth"} <= names
