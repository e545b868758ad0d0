"""Checker behaviour on bad model output, and symbolic equivalence: a verdict with a reason, never a raise; no
hang on whitespace floods, one deadline over every stage, and the answer's digits never handed to sympify."""
import builtins
import threading

import pytest

from verifiers import check


@pytest.mark.parametrize("pred,ref,why", [
    (r"\boxed{10^{10^{10}}}", "5 m", "tower"),
    (r"\boxed{5 blorgs}", "5 m", "not understood"),
    ("x" * 10000, "5 m", "too long"),
    ("(" * 10000, "5 m", "too long"),
    (r"\boxed{10^{10^{10}}}", "x", "tower"),
    ("no answer here", "5 m", "unparseable"),
])
def test_bad_output_is_verdict_with_reason(pred, ref, why):
    v = check(pred, ref)
    assert v.equivalent is False and v.score == 0.0 and why in v.reason


@pytest.mark.parametrize("pred,ref,ok", [
    (r"\boxed{\frac{q_{1} q_2}{4 \pi \epsilon_0 r^2}}", "q_1*q_2/(4*pi*epsilon_0*r**2)", True),
    (r"\boxed{\frac{q_{1} q_2}{2 \pi \epsilon_0 r^2}}", "q_1*q_2/(4*pi*epsilon_0*r**2)", False),
    (r"\boxed{\sqrt{2 g h}}", "(2*g*h)**(1/2)", True),
    (r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", True),
    (r"\boxed{m v^2}", "m*v**2/2", False),
    (r"\boxed{\sqrt{\frac{G M}{r}}}", "sqrt(G*M/r)", True),
])
def test_symbolic(pred, ref, ok):
    v = check(pred, ref, kind="symbolic")
    assert v.equivalent is ok, v


@pytest.mark.parametrize("pred,ref", [
    ("The temperature is 25 °C", "298.15 K"),
    ("so the current is 1.2 mA in the wire", "0.0012 A"),
])
def test_number_inside_a_sentence(pred, ref):
    assert check(pred, ref).equivalent


from concurrent.futures import ThreadPoolExecutor  # noqa: E402

from verifiers import CheckConfig  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

LIMIT = CheckConfig(timeout_s=1.0)
KINDS = [None, "numeric", "symbolic", "mcq", "mcq_multi", "integer"]
REFS = ["5 m", "9.81 m/s^2", "B", "ACD", "42", "q_1*q_2/(4*pi*epsilon_0*r**2)", "298.15 K"]


@settings(max_examples=150, deadline=None)  # per-example deadline: benchmarks/test_bench_deadlines.py
@given(pred=st.text(max_size=300), ref=st.sampled_from(REFS), kind=st.sampled_from(KINDS))
def test_arbitrary_text_never_raises(pred, ref, kind):
    v = check(pred, ref, kind=kind, cfg=LIMIT)  # within the limit + a worker restart: benchmarks/test_bench_deadlines.py
    assert isinstance(v.equivalent, bool) and isinstance(v.reason, str) and v.reason


@settings(max_examples=60, deadline=None)  # per-example deadline: benchmarks/test_bench_deadlines.py
@given(pred=st.text(alphabet="0123456789^{}\\frac()+-*/e.xmsAB $", max_size=200), ref=st.sampled_from(REFS))
def test_latexish_text_never_raises_inside_a_thread(pred, ref):
    with ThreadPoolExecutor(max_workers=1) as ex:
        v = ex.submit(check, pred, ref).result(timeout=10)
    assert isinstance(v.equivalent, bool) and v.reason


# --- the hang and the deadline ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "The answer" + " " * 1000 + ".",
    "The answer" + " " * 20000 + ".",
    "answer is" + " " * 19990 + "x",
    "option" + " " * 19990 + "A",
    "The correct answer is " + "(A) " * 4000,
    "Answer:" + "\t \n" * 6000 + "B",
    "I choose " + " , " * 6000 + "A",
])
@pytest.mark.parametrize("ref", ["A", "5 m/s"])
def test_whitespace_floods_do_not_hang(text, ref):
    """A hang guard, not a speed goal (benchmarks/test_bench_worstcase.py times these against the 2 s
    deadline): before the fix "The answer" + 1,000 spaces took 42 s and 20,000 spaces did not end."""
    done = []
    t = threading.Thread(target=lambda: done.append(check(text, ref)), daemon=True)
    t.start()
    t.join(60)
    assert done and done[0].reason


def test_deadline_covers_in_process_stages():
    v = check("The answer is " + "5 m/s, " * 2000, "5 m/s", cfg=CheckConfig(timeout_s=1e-9))
    assert v.equivalent is False and "timeout" in v.reason


def test_a_flood_of_agreeing_conclusions_stays_inside_the_deadline():
    text = ("\\boxed{5 N} " + "So 5 N. " * 3000)[:20000]
    v = check(text, "5 N")
    assert v.equivalent, v.reason
    assert not check(("\\boxed{5 N} " + "So 5 N. " * 3000)[:19990] + " So 6 N.", "5 N").equivalent


def test_verdict_carries_the_extracted_answer():
    v = check("Some work. The answer is 5 m/s.", "5 m/s")
    assert v.answer == "5 m/s"


# --- the answer's digits never reach sympify (numbers parsed exactly: test_check_latex.py) -------------------

LOCAL = CheckConfig(isolate=False)


def test_number_tokens_never_reach_sympify(monkeypatch):
    import sympy.core.numbers as numbers
    import sympy.parsing.sympy_parser as sp

    seen = []
    real_parse, real_sympify = sp.parse_expr, numbers.sympify

    def spy(real):
        def f(arg, *a, **k):
            if isinstance(arg, str) and "98765" in arg:
                seen.append(arg)
            return real(arg, *a, **k)
        return f

    monkeypatch.setattr(sp, "parse_expr", spy(real_parse))
    monkeypatch.setattr(numbers, "sympify", spy(real_sympify))
    monkeypatch.setattr(builtins, "eval", spy(builtins.eval))
    for pred in (r"\boxed{\frac{98765}{2} m v^2}", r"\boxed{98765 x}", r"\boxed{98765.5}", r"\boxed{0.98765}",
                 r"\boxed{98,765}", r"\boxed{\{98765, 1\}}", r"\boxed{98765\%}"):
        for ref, kind in (("x + 1", "symbolic"), (r"\frac{1}{2}", None), ("m*v**2/2", "symbolic")):
            check(pred, ref, kind=kind, cfg=LOCAL)
    assert seen == []


def test_plain_text_digits_never_reach_sympify(monkeypatch):
    import sympy.core.numbers as numbers
    import sympy.parsing.sympy_parser as sp

    seen = []

    def spy(real):
        def f(arg, *a, **k):
            if isinstance(arg, str) and "98765" in arg:
                seen.append(arg)
            return real(arg, *a, **k)
        return f

    monkeypatch.setattr(sp, "parse_expr", spy(sp.parse_expr))
    monkeypatch.setattr(numbers, "sympify", spy(numbers.sympify))
    for pred in ("The answer is 98765.5*x", "98765 m v^2/2", "0.98765"):
        check(pred, "x + 1", kind="symbolic", cfg=LOCAL)
    assert seen == []
