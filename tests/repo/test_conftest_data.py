"""tests/conftest.py's shared_data: a missing data folder skips data tests with a reason, and fails them
under R3BENCH_REQUIRE_DATA=1 (what .ci/run sets)."""
import shutil
from pathlib import Path

pytest_plugins = ["pytester"]
CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def _run(pytester, monkeypatch, require):
    shutil.copy(CONFTEST, pytester.path / "conftest.py")
    pytester.makepyfile(test_needs_data="def test_it(shared_data):\n    assert shared_data.is_dir()\n")
    monkeypatch.setenv("R3BENCH_DATA_DIR", str(pytester.path / "no-such-data"))
    if require:
        monkeypatch.setenv("R3BENCH_REQUIRE_DATA", "1")
    else:
        monkeypatch.delenv("R3BENCH_REQUIRE_DATA", raising=False)
    return pytester.runpytest_subprocess("-rs", "-q")


def test_missing_data_skips_with_a_reason(pytester, monkeypatch):
    r = _run(pytester, monkeypatch, require=False)
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["*benchmark data directory not found at no-such-data/*"])


def test_missing_data_fails_where_ci_requires_it(pytester, monkeypatch):
    r = _run(pytester, monkeypatch, require=True)
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(["*R3BENCH_REQUIRE_DATA=1*"])
