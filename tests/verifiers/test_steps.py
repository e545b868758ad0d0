"""Step verification (symbolic backend) against the procedural bank's exact labels, and bad input."""
import json
import subprocess
import sys

from hypothesis import given, settings, strategies as st

from r3bench import procgen
from verifiers import seventag
from r3bench.procgen.export import export
from verifiers.steps import StepVerdict, report, verify


def test_symbolic_backend_meets_its_target_on_held_out_problems(tmp_path):
    export(tmp_path, n=700, seed=123, log=lambda s: None)  # a seed the exports elsewhere do not use
    rows = [json.loads(x) for x in (tmp_path / "verifier.jsonl").read_text().splitlines()]
    r = report(rows)
    assert r["n"] >= 7 * 20
    assert r["first_error_accuracy"] >= 0.90 and r["class_accuracy"] >= 0.85, r
    assert set(r["confusion"]) == {"none", "MC", "CM", "CE"}


def test_reference_is_correct_and_each_class_lands_on_its_step():
    p = procgen.generate(n=10, seed=2)[0]
    assert verify(p.question, p.solution, p.solution) == StepVerdict(0, None, "all steps correct", 7)
    for cls, steps in procgen.CLASSES.items():
        for s in steps:
            try:
                text, fe, c, _ = procgen.inject_problem(p, cls, s)
            except procgen.InjectError:
                continue
            v = verify(p.question, text, p.solution)
            assert (v.first_error, v.error_class) == (s, cls), v


def test_dimensionally_inconsistent_equation_is_conceptual():
    ref = seventag.render({
        "problem_analysis": "The problem asks for the speed (v).", "principle": "Energy conservation in free fall.",
        "governing_equation": "v = sqrt(2*g*h)", "value_identification": "g = 9.8 m/s^2\nh = 5 m",
        "substitution": "v = sqrt(2*9.8*5)", "calculation": "v = 9.899 m/s", "final_answer": "\\boxed{9.899 m/s}"})
    bad = ref.replace("v = sqrt(2*g*h)", "v = 2*g*h").replace("sqrt(2*9.8*5)", "2*9.8*5").replace("9.899", "98")
    v = verify("A stone falls 5 m (g = 9.8 m/s^2). How fast?", bad, ref)
    assert (v.first_error, v.error_class) == (3, "CM") and "equation" in v.explanation
    slip = ref.replace("v = 9.899 m/s", "v = 8.899 m/s").replace("{9.899", "{8.899")
    assert verify("", slip, ref).first_error == 6


@settings(max_examples=150, deadline=None)  # per-example deadline: benchmarks/test_bench_deadlines.py
@given(st.text(max_size=500))
def test_never_raises_on_arbitrary_solutions(text):
    p = procgen.generate(n=10, seed=2)[1]
    v = verify(p.question, text, p.solution)
    assert (0 <= v.first_error <= 7 if v.valid else v.first_error == -1) and v.explanation


def test_verify_cli_contract(tmp_path):
    p = procgen.generate(n=10, seed=2)[0]
    lines = [json.dumps({"question": p.question, "solution": p.solution, "reference": p.solution}), "{not json",
             json.dumps({"question": "q"})]
    r = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "verify", "--backend", "symbolic", "--jsonl", "-"],
                       input="\n".join(lines), capture_output=True, text=True, timeout=60)
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and len(out) == 3
    assert out[0]["first_error"] == 0 and out[0]["error_class"] is None and out[0]["n_steps"] == 7
    assert "error" in out[1] and "error" in out[2]


def test_no_model_text_is_evaluated_as_code():
    """Step expressions go through verifiers.safeexpr (a whitelisted syntax tree), never eval/compile."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "verifiers"
    for name in ("steps.py", "step_reading.py", "reference_free.py", "reference_based.py", "feedback.py"):
        src = (root / name).read_text()
        assert not re.search(r"(?<![\w.])(eval|exec|compile)\(", src), name
    ref = procgen.generate(n=10, seed=2)[0].solution
    evil = ref.replace("s = u*t + a*t**2/2", "s = (1).__class__.__bases__[0].__subclasses__()")
    v = verify("", evil, ref)
    assert v.valid and (v.first_error, v.error_class) == (3, "CM"), v


def test_invalid_verdicts_are_never_all_correct():
    p = procgen.generate(n=10, seed=2)[1]
    v = verify(p.question, p.solution, "")  # no reference, no gold answer
    assert not v.valid and v.first_error == -1


def test_report_counts_no_verdict_as_wrong(monkeypatch):
    """steps.report counted an invalid verdict (first_error 0) as a correct 'no error' verdict."""
    from verifiers import steps

    monkeypatch.setitem(steps.BACKENDS, "down", steps.Backend(
        "down", lambda q, s, r, c: StepVerdict(0, None, "judge down", 7, valid=False), steps.SymbolicConfig, oracle=True))
    rows = [{"question": "q", "solution": "s", "reference": "r", "first_error": 0, "error_class": None}] * 3
    r = report(rows, backend="down")
    assert r["accuracy_correct"] == 0.0 and r["invalid"] == 3 and r["confusion"] == {"none": {"invalid": 3}}
