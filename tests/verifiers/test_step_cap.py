"""A step longer than verifiers.verdict.MAX_STEP_CHARS is a FORMAT failure at that step (reward 0), for
every backend (format_error runs first): a flood of one step used to reach the symbolic verifier whole
and took 1.6-2.7 s on 20,000 characters (benchmarks/test_bench_verify_worstcase.py)."""
import time

import pytest

from verifiers.rewards import step_reward
from verifiers.seventag import render
from verifiers.steps import verify
from verifiers.verdict import FORMAT, MAX_STEP_CHARS

Q = "A car drives at a constant speed of 26 m/s for 18 s. How far does it go?"
STEPS = {"problem_analysis": "Find the distance travelled (s).", "principle": "Uniform motion: distance = speed x time.",
         "governing_equation": "s = v*t", "value_identification": "v = 26 m/s\nt = 18 s", "substitution": "s = 26*18",
         "calculation": "s = 468 m", "final_answer": "\\boxed{468 m}"}


REF = render(STEPS)


@pytest.mark.parametrize("k,tag,unit", [(3, "governing_equation", "λ = v/f, ω = 2πf, "),
                                        (4, "value_identification", "K = m, so "),
                                        (7, "final_answer", "\\boxed{468 m} ")])
def test_a_flooded_step_is_a_format_failure_at_that_step(k, tag, unit):
    flood = (unit * (MAX_STEP_CHARS // len(unit) + 2))
    sol = render(dict(STEPS, **{tag: STEPS[tag] + " " + flood}))
    t = time.monotonic()
    v = verify(Q, sol, REF)
    assert time.monotonic() - t < 0.5
    assert (v.first_error, v.error_class, v.valid) == (k, FORMAT, True), v
    assert "characters, over the" in v.explanation
    assert step_reward(v).value == 0.0


def test_a_long_honest_step_under_the_cap_is_read():
    long_analysis = "Find the distance travelled (s) by the car. " + "The car keeps a steady speed. " * 40
    assert len(long_analysis) < MAX_STEP_CHARS
    v = verify(Q, render(dict(STEPS, problem_analysis=long_analysis)), REF)
    assert v.valid and v.first_error == 0, v
