"""The PDE verifier against hostile program output (issue 36): `verify` never raises, a verifier failure is
booked as not ok (GRPO skips and counts it), and an instance's time is the host's clock.

Each test failed on the code before its fix. The program's own module can patch what the driver uses
(here base64.b64encode, whose return value the driver puts into its report), so the report the
verifier reads back is whatever text the program chose.
"""
import pytest

from r3bench.pde import families as F
from r3bench.pde import tasks
from r3bench.pde import verify as V
from r3bench.pde.verify import VerifyConfig, verify

ZEROS = "def solve(u0, x, t, nu):\n    return np.zeros((len(t), len(x)))\n"


def _forged(text: str) -> str:
    """A program whose driver report ends in `text` (the repr of the data field, verbatim)."""
    return ("import base64, numpy as np\nclass H:\n    def decode(self, *a):\n        return self\n"
            f"    def __repr__(self):\n        return {text!r}\nbase64.b64encode = lambda b: H()\n" + ZEROS)


HOSTILE = {
    "unhashable key": "{[1]: 2}",  # literal_eval raised TypeError
    "huge us": "0, 'us': 1" + "0" * 400,  # the old driver's 'us' field: OverflowError on / 1e6
    "huge status": "0, 'status': 1" + "0" * 400,
    "huge why": "0, 'status': 'error', 'why': 1" + "0" * 4000,
    "set data": "{1, 2}",
    "deep nesting": "[" * 50000 + "]" * 50000,
    "bytes data": "b'AAAAAAAAAAA='",
    "not a literal": "__import__('os')",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_verify_never_raises_on_hostile_reports(case):
    v = verify(_forged(HOSTILE[case]), "heat", F.instances("heat", 0, 1))
    assert not v.valid and v.reward == 0.0 and v.nrmse == 1.0 and v.reason, v
    assert v.verifier_ok, v  # the program's output, not the verifier's failure


def test_a_verifier_failure_is_not_ok(monkeypatch):
    """An exception inside the verifier is a verdict with verifier_ok False (verify raised it before)."""
    def boom(*a, **k):
        raise OverflowError("int too large to convert to float")
    monkeypatch.setattr(V, "score_instance", boom)
    v = verify("import numpy as np\n" + ZEROS, "heat", F.instances("heat", 0, 1))
    assert not v.valid and v.reward == 0.0 and not v.verifier_ok and v.reason.startswith("verifier error"), v


def test_score_books_a_verifier_failure_as_not_ok(monkeypatch):
    """tasks.score caught the exception but booked reward 0 with verifier_ok=True: GRPO scored it."""
    def boom(*a, **k):
        raise TypeError("unhashable type: 'list'")
    monkeypatch.setattr(tasks, "verify", boom)
    v = tasks.score({"family": "heat", "seed": 0, "n_instances": 1}, "```python\ndef solve(): pass\n```")
    assert not v.verifier_ok and v.reason.startswith("verifier error"), v
    reward = tasks.PDEReward()
    reward(completions=["```python\ndef solve(): pass\n```"], family=["heat"], seed=[0], n_instances=[1])
    assert reward.last_results[0].ok is False


def test_setitimer_cannot_switch_the_time_limit_off():
    """setitimer(ITIMER_REAL, 0) inside solve switched the per-instance alarm off; a too-slow solve (5.5 s
    against instance_s = 2 s) was accepted while the run stayed under startup_s + n * instance_s."""
    slow = ("import signal, time, numpy as np\ndef solve(u0, x, t, nu):\n"
            "    signal.setitimer(signal.ITIMER_REAL, 0)\n    time.sleep(5.5)\n"
            "    return np.zeros((len(t), len(x)))\n")
    v = verify(slow, "heat", F.instances("heat", 0, 2), VerifyConfig(instance_s=2.0, startup_s=3.0))
    assert not v.valid and "time limit" in v.reason, v


def test_patched_clock_does_not_shorten_the_reported_time():
    """time.perf_counter patched to a constant made the reported per-instance time 0."""
    code = ("import time, numpy as np\ntime.perf_counter = lambda: 0.0\n"
            "def solve(u0, x, t, nu):\n    time.sleep(0.3)\n    return np.zeros((len(t), len(x)))\n")
    v = verify(code, "heat", F.instances("heat", 0, 1))
    assert v.valid, v
    assert v.instances[0].seconds >= 0.3, v.instances[0]


def test_one_sandbox_run_per_program(monkeypatch):
    """The fork server: one run (interpreter, NumPy, the top level once), a fork per instance; it was one run
    per instance (3-4x the cost)."""
    runs = []
    real = V.run_python

    def counting(*a, **k):
        runs.append(k.get("calls"))
        return real(*a, **k)
    monkeypatch.setattr(V, "run_python", counting)
    code = "import numpy as np\n" + ZEROS
    v = verify(code, "heat", F.instances("heat", 0, 3))
    assert v.valid and len(v.instances) == 3, v
    assert len(runs) == 1 and len(runs[0].inputs) == 3, runs
    # timed per instance (the bound leaves room for a loaded machine; the deadlines are timed in benchmarks/)
    assert all(i.seconds is not None and 0 < i.seconds < 10.0 for i in v.instances), v.instances


def test_a_later_slow_instance_is_killed_by_the_supervisor():
    """Instance 1 switches the alarm off and patches the clock, then sleeps past instance_s: the supervisor's clock
    ends it; instance 0 keeps its verdict, instance 2 is not run."""
    code = ("import signal, time, numpy as np\nn = [0]\ntime.perf_counter = time.monotonic = lambda: 0.0\n"
            "def solve(u0, x, t, nu):\n    signal.setitimer(signal.ITIMER_REAL, 0)\n"
            "    if float(nu) == NU1:\n        time.sleep(5.5)\n    return np.zeros((len(t), len(x)))\n")
    insts = F.instances("heat", 0, 3)
    v = verify(code.replace("NU1", repr(float(insts[1]["args"]["nu"]))), "heat", insts,
               VerifyConfig(instance_s=1.5, startup_s=3.0))
    assert not v.valid and "time limit" in v.instances[1].reason, v
    assert v.instances[0].valid and "not run" in v.instances[2].reason, v.instances
    assert 1.5 <= v.instances[1].seconds < 5.0, v.instances[1]  # ended before its 5.5 s sleep


def test_a_slow_top_level_reaches_the_start_up_limit():
    code = "import time, numpy as np\ntime.sleep(6)\n" + ZEROS
    v = verify(code, "heat", F.instances("heat", 0, 2), VerifyConfig(startup_s=1.5))
    assert not v.valid and all("start-up time limit" in i.reason for i in v.instances), v
