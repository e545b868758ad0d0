"""tests/verifiers/conftest.py's `ns` fixture: where the namespaces+seccomp level is missing, the sandbox
tests skip with the probe's reason, and fail under R3BENCH_REQUIRE_SANDBOX=namespaces+seccomp (what
.ci/run sets). The level is made missing by giving the copied conftest a probe that answers as a machine
without namespaces does (the real probe's answer there: level "fallback" and its reason)."""
import shutil
from pathlib import Path

pytest_plugins = ["pytester"]
CONFTEST = Path(__file__).resolve().parents[1] / "verifiers" / "conftest.py"
CI_RUN = Path(__file__).resolve().parents[2] / ".ci" / "run"


def _run(pytester, monkeypatch, require):
    shutil.copy(CONFTEST, pytester.path / "conftest.py")
    with open(pytester.path / "conftest.py", "a") as f:
        f.write("\n\ndef probe():\n    return {'level': 'fallback', 'why': 'util-linux `unshare` not found on PATH'}\n")
    pytester.makepyfile(test_needs_ns="def test_it(ns):\n    assert ns == 'namespaces+seccomp'\n")
    if require:
        monkeypatch.setenv("R3BENCH_REQUIRE_SANDBOX", "namespaces+seccomp")
    else:
        monkeypatch.delenv("R3BENCH_REQUIRE_SANDBOX", raising=False)
    return pytester.runpytest_subprocess("-rs", "-q")


def test_missing_namespaces_skip_with_the_probes_reason(pytester, monkeypatch):
    r = _run(pytester, monkeypatch, require=False)
    r.assert_outcomes(skipped=1)
    r.stdout.fnmatch_lines(["*namespaces+seccomp are not available here*unshare*"])


def test_missing_namespaces_fail_where_ci_requires_them(pytester, monkeypatch):
    r = _run(pytester, monkeypatch, require=True)
    r.assert_outcomes(errors=1)  # a fixture that fails: an error, never a skip
    r.stdout.fnmatch_lines(["*R3BENCH_REQUIRE_SANDBOX=namespaces+seccomp makes this an error*"])


def test_ci_requires_the_level():
    assert "export R3BENCH_REQUIRE_SANDBOX=namespaces+seccomp" in CI_RUN.read_text()
