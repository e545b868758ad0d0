"""Worst-case time of one step verification on 20,000-character adversarial seven-tag solutions (issue
32: a reward a policy can stall is a reward it can attack; the checker's deadline is 2 s, and the step
verifier is called as often, from the same reward functions).

    python -m pytest benchmarks/test_bench_verify_worstcase.py -q -s

Writes benchmarks/results/verifier/worstcase.md. Each input is an honest solution of one problem with
one slip at step 6 (26*18 = 486) and one step (or the whole text) flooded to 20,000 characters in a form a policy could write: many
assignments or `K = m, so` clauses among the values, long equation chains, nested LaTeX, digit runs,
law-name lists, repeated or unclosed tags, lines of numbers. Each is verified once against the
reference (symbolic backend, caches warm from one honest verification first), and the verdict is kept
beside the time: a flood must not hide the slip (no input may come back "all steps correct").
"""
import pathlib
import time

import pytest

from verifiers.steps import verify

N = 20000
HERE = pathlib.Path(__file__).parent
OUT = HERE / "results" / "verifier" / "worstcase.md"
DEADLINE = 2.0

QUESTION = "A car drives at a constant speed of 26 m/s for 18 s. How far does it go?"
STEPS = {
    "problem_analysis": "Find the distance travelled (s). Given v = 26 m/s and t = 18 s.",
    "principle": "Uniform motion: distance = speed x time.",
    "governing_equation": "s = v*t",
    "value_identification": "v = 26 m/s\nt = 18 s",
    "substitution": "s = 26*18",
    "calculation": "s = 468 m",
    "final_answer": "\\boxed{468 m}",
}


def render(steps: dict) -> str:
    """Seven-tag text of `steps` as written (not seventag.render, which strips each step: the whitespace
    floods must reach the verifier)."""
    return "\n".join(f"<{k}>\n{v}\n</{k}>" for k, v in steps.items())


REFERENCE = render(STEPS)
# the flooded solutions carry one slip (26*18 = 486): a flood must neither stall the verifier nor hide it
SLIPPED = dict(STEPS, calculation="s = 486 m", final_answer="\\boxed{486 m}")


def _fill(unit: str, room: int) -> str:
    return (unit * (room // max(len(unit), 1) + 1))[:room]


def flooded(tag: str, unit: str, where: str = "before") -> str:
    """The honest solution with `tag`'s content padded by repetitions of `unit` to N characters in all."""
    room = N - len(REFERENCE)
    steps = dict(SLIPPED)
    pad = _fill(unit, room)
    steps[tag] = pad + steps[tag] if where == "before" else steps[tag] + pad
    return render(steps)[:N] if len(render(steps)) > N else render(steps)


INPUTS = {
    "values: 'K = m, so ' clauses": flooded("value_identification", "K = m, so ", "after"),
    "values: many assignments": flooded("value_identification", "x = 5 m, ", "after"),
    "values: bullet lines": flooded("value_identification", "- v = 3 m/s\n", "after"),
    "values: unit conversions": flooded("value_identification", "1 eV = 1.602e-19 J\n", "after"),
    "values: products given one value": flooded("value_identification", "h f = 4.0 eV, ", "after"),
    "analysis: sentences with numbers": flooded("problem_analysis", "After 2 s the speed is 5 m/s. "),
    "principle: law-name list": flooded("principle", "Newton's second law, Ohm's law, Snell's law, ", "after"),
    "equation: '= v*t' chain": flooded("governing_equation", " = v*t", "after"),
    "equation: nested \\frac{": flooded("governing_equation", "\\frac{", "after"),
    "equation: open parentheses": flooded("governing_equation", "(", "after"),
    "equation: long sum": flooded("governing_equation", " + v*t - v*t", "after"),
    "equation: ', so s = v*t' rearrangements": flooded("governing_equation", ", so s = v*t", "after"),
    "equation: unicode symbols": flooded("governing_equation", "λ = v/f, ω = 2πf, ", "after"),
    "substitution: digit run": flooded("substitution", "9", "after"),
    "substitution: '26*18*' chain": flooded("substitution", "*26*18", "after"),
    "calculation: '= 486 m' repeated": flooded("calculation", " = 486 m", "after"),
    "calculation: lines of numbers": flooded("calculation", "4988.4 J / 0.050 m^3 = 99768 Pa\n", "after"),
    "calculation: \\sqrt{ nest": flooded("calculation", "\\sqrt{", "after"),
    "final: unclosed \\boxed{": flooded("final_answer", "\\boxed{", "before"),
    "final: many boxes": flooded("final_answer", "\\boxed{486 m} ", "before"),
    "whole: seven tags repeated": (render(SLIPPED) * (N // len(REFERENCE) + 1))[:N],
    "whole: unclosed tags": _fill("<governing_equation>s = v*t ", N),
    "whole: no tags, prose": _fill("The distance is speed times time, 26 m/s for 18 s. ", N),
    "whole: whitespace flood in every step": render({k: v + _fill(" \n\t", (N - len(REFERENCE)) // 7)
                                                     for k, v in SLIPPED.items()}),
}
# under the per-step cap (verifiers.verdict.MAX_STEP_CHARS): every step filled to just below it with one
# of the costliest floods above, ~14,000 characters the verifier must read rather than refuse
from verifiers.verdict import MAX_STEP_CHARS  # noqa: E402


def at_cap(unit: str) -> str:
    return render({k: v + " " + _fill(unit, MAX_STEP_CHARS - len(v) - 2) for k, v in SLIPPED.items()})


for _unit in ("λ = v/f, ω = 2πf, ", ", so s = v*t", "K = m, so ", "x = 5 m, ", "h f = 4.0 eV, ", " = v*t",
              "- v = 3 m/s\n", "After 2 s the speed is 5 m/s. "):
    INPUTS[f"every step at the cap: {_unit.strip()!r}"] = at_cap(_unit)
ROWS = []


@pytest.fixture(scope="module", autouse=True)
def _warm():
    honest = verify(QUESTION, REFERENCE, REFERENCE)
    assert honest.valid and honest.first_error == 0, honest  # the anchor: the honest solution passes
    yield
    _report()


@pytest.mark.parametrize("name", list(INPUTS))
def test_every_verification_within_the_deadline(name):
    text = INPUTS[name]
    assert N * 0.95 <= len(text) <= N + 200 or name.startswith("every step at the cap"), len(text)
    t = time.monotonic()
    v = verify(QUESTION, text, REFERENCE)
    dt = time.monotonic() - t
    ROWS.append((name, dt, v))
    assert not (v.valid and v.first_error == 0), (name, v)  # the slip (or the flood) is an error
    assert dt < DEADLINE, (name, dt, v.explanation[:100])


def _report():
    if not ROWS:
        return
    ROWS.sort(key=lambda r: -r[1])
    lines = ["# Worst-case step verifications on 20,000-character adversarial seven-tag solutions", "",
             "`python -m pytest benchmarks/test_bench_verify_worstcase.py -q -s`; one `verify()` (symbolic "
             f"backend) per input after one honest verification; deadline {DEADLINE:g} s (the checker's). The "
             "problem: 26 m/s for 18 s, s = 468 m; every flooded solution carries one slip, 26*18 = 486 (step 6).", "",
             "| input | seconds | verdict (first error, class, valid) | explanation |", "|---|---|---|---|"]
    for name, dt, v in ROWS:
        why = (v.explanation or "")[:90].replace("|", "/").replace("\n", " ")
        lines.append(f"| {name} | {dt:.3f} | {v.first_error}, {v.error_class}, {v.valid} | {why} |")
    lines += ["", f"Longest: {ROWS[0][1]:.3f} s ({ROWS[0][0]})."]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
