"""One test per defect of issue 19 ("A checker that never executes model text and agrees with the
official graders"). Each failed on the checker before the fix (run against the previous
verifiers/ package); the worker's isolation and time limits are in test_check_timeout.py."""
import builtins

import pytest

from verifiers import CheckConfig, check

PENDULUM = r"2\pi\sqrt{l/g}"


# --- model text is data, never code --------------------------------------------------------------

@pytest.mark.parametrize("template", [
    "The answer is __import__('os').system('touch {f}')",
    r"\boxed{__import__('os').system('touch {f}')}",
    "The answer is (lambda: __import__('os').system('touch {f}'))()",
    "The answer is exec(\"open('{f}', 'w')\")",
])
@pytest.mark.parametrize("kind", [None, "symbolic", "numeric"])
def test_model_text_is_never_executed(template, kind, tmp_path):
    f = tmp_path / "pwned"
    v = check(template.replace("{f}", str(f)), PENDULUM, kind=kind)
    assert not f.exists()
    assert v.equivalent is False and v.score == 0.0 and v.reason


def test_no_evaluator_sees_model_text_in_process(monkeypatch):
    """With the worker bypassed (isolate=False) the whole check runs here: eval, exec, sympify and
    parse_expr are never handed the answer's text."""
    import sympy
    import sympy.parsing.sympy_parser as sp

    seen = []
    real_eval, real_exec, real_sympify = builtins.eval, builtins.exec, sympy.sympify

    def spy(name, real):
        def f(arg, *a, **k):
            if isinstance(arg, str) and "MARKER" in arg:
                seen.append(name)
            return real(arg, *a, **k)
        return f

    monkeypatch.setattr(builtins, "eval", spy("eval", real_eval))
    monkeypatch.setattr(builtins, "exec", spy("exec", real_exec))
    monkeypatch.setattr(sympy, "sympify", spy("sympify", real_sympify))
    monkeypatch.setattr(sp, "parse_expr", spy("parse_expr", sp.parse_expr))
    cfg = CheckConfig(isolate=False)
    for pred in (r"\boxed{MARKER + 1}", "The answer is MARKER*2", r"\boxed{\frac{MARKER}{2}}", "MARKER m/s"):
        for ref, kind in ((PENDULUM, None), ("x + 1", "symbolic"), ("5 m/s", None), ("3", None)):
            check(pred, ref, kind=kind, cfg=cfg)
    assert seen == []


# --- false positives -----------------------------------------------------------------------------

@pytest.mark.parametrize("pred,ref,kind", [
    (r"\boxed{zoo}", PENDULUM, None),
    ("The answer is nan", PENDULUM, None),
    ("The answer is nan", "x", "symbolic"),
    (r"\boxed{\frac{1}{0}}", PENDULUM, None),
    (r"\boxed{oo}", "x", "symbolic"),
    (r"\boxed{3/4}", "3", None),
    (r"\boxed{7/2}", "7", "integer"),
    ("The answer is BD", "B", None),
    ("The correct option is BD", "B", "mcq"),
    # thousands separators ("1,200 J" is never 200 J): test_check_numbers.py
    (r"The speed of light is 3.0 \times 10^{8} m/s in vacuum", "1e8 m/s", None),
    (r"so it travels at 3.0 \times 10^{8} m/s.", "1e8 m/s", None),
    (r"\boxed{x<3 \text{ or } x \geq 3}", "3", None),  # hedges and inequalities are not a value
    ("The answer is 4 or 3.", "3", None),
    ("The answer is between 2 and 3 m/s.", "3 m/s", None),
])
def test_false_positives(pred, ref, kind):
    v = check(pred, ref, kind=kind)
    assert v.equivalent is False, v


# --- false negatives and crashes -----------------------------------------------------------------

@pytest.mark.parametrize("pred,ref,kind", [
    (r"\boxed{\{1, 2\}}", r"\{2, 1\}", "symbolic"),
    (r"\boxed{\{-2, 1 \pm \sqrt{5}\}}", r"\{1 \pm \sqrt{5}, -2\}", "symbolic"),
    (r"\boxed{1 \pm \sqrt{2}}", r"1 \pm \sqrt{2}", "symbolic"),
    (r"\boxed{1 + \sqrt{2}, 1 - \sqrt{2}}", r"1 \pm \sqrt{2}", "symbolic"),
    (r"\boxed{0.3333}", r"\frac{1}{3}", None),
    (r"\boxed{0.3333}", r"\frac{1}{3}", "symbolic"),
    (r"\boxed{x < 3}", "x < 3", "symbolic"),
    (r"\boxed{3 > x}", "x < 3", "symbolic"),
    (r"\boxed{x \geq 5}", "x >= 5", None),
    ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", "0.75", None),
    ("Final Answer: The final answer is $12.5 \\mathrm{m/s}$. I hope it is correct.", "12.5 m/s", None),
    ("28 percent", "28%", None),
    ("The efficiency is 28 percent.", "0.28", None),
    (r"\boxed{\frac13}", "0.3333", None),
    (r"\boxed{\sqrt3}", "1.732", None),
    (r"\boxed{\frac13}", r"\frac{1}{3}", "symbolic"),
    ("The answer is 2.5 m/s, not 3 m/s.", "2.5 m/s", None),  # what follows the answer is not the answer
    ("The answer is 0.75 (i.e. 3/4).", "0.75", None),
    ("Numerically, the answer is 9, which matches the expected order of magnitude (about 10 units).", "9", None),
])
def test_false_negatives(pred, ref, kind):
    v = check(pred, ref, kind=kind)
    assert v.equivalent is True, v


@pytest.mark.parametrize("pred,ref", [
    (r"\boxed{5 m/s)}", "6 m/s"),
    (r"\boxed{5 (m/s}", "5 m/s"),
    (r"\boxed{5 m/s(}", "5 m/s"),
    (r"\boxed{x < 3}", "x"),
    (r"\boxed{x < 3 < y}", "x < 3"),
    ("The answer is 1, 200 J", "200 J"),  # pint raised AssertionError -> "internal error"
])
def test_no_internal_errors(pred, ref):
    v = check(pred, ref)
    assert v.equivalent is False and "internal error" not in v.reason and "failed:" not in v.reason, v


@pytest.mark.parametrize("ref", ["banana m/s", r"\text{banana} m/s", "3 bananas/s"])
def test_prose_reference_is_refused_not_read_as_symbols(ref):
    for pred in ("b*a*n*a*n*a*m/s", ref, "x"):
        v = check(pred, ref)
        assert v.equivalent is False and "reference" in v.reason, v


# --- JEEBench exam marks -------------------------------------------------------------------------

@pytest.mark.parametrize("pred,ref,kind", [("5", "6", "integer"), ("2.5", "3.75", "numeric"),
                                           ("The answer is 7", "6", "integer")])
def test_exam_marks_no_negative_for_integer_numeric(pred, ref, kind):
    """JEE Advanced has no negative marking for Integer / Numeric answers; JEEBench scores them 0."""
    assert check(pred, ref, kind=kind, cfg=CheckConfig(mode="jeebench_marks")).score == 0.0
    assert check(ref, ref, kind=kind, cfg=CheckConfig(mode="jeebench_marks")).score == 3.0
    assert check("(A)", "B", kind="mcq", cfg=CheckConfig(mode="jeebench_marks")).score == -1.0


def test_jeebench_numeric_tolerance_is_absolute_0_01():
    cfg = CheckConfig(mode="jeebench")
    assert check("2.51", "2.5", kind="numeric", cfg=cfg).score == 1.0
    assert check("2.52", "2.5", kind="numeric", cfg=cfg).score == 0.0
    # the official float comparison, not a rounded one: 100.01 - 100.00 = 0.0100000000000051 > 0.01
    assert check("100.01", "100.00", kind="numeric", cfg=cfg).score == float(abs(100.00 - 100.01) <= 0.01)


# --- the tolerance lives in CheckConfig ----------------------------------------------------------

def test_one_tolerance():
    from verifiers.answer import close

    assert close(12.4, 12.5) and not close(13.0, 12.5)
    assert close(13.0, 12.5, CheckConfig(rel_tol=0.05))
    assert close(2.509, 2.5, CheckConfig(mode="jeebench")) and not close(2.52, 2.5, CheckConfig(mode="jeebench"))
    assert not close(float("nan"), float("nan")) and not close(float("inf"), float("inf"))
    assert close(0.0, 0.0) and not close(0.0, 1e-6)
    assert not close(9.029e-19, 3.421e-19) and close(3.42e-19, 3.421e-19)  # tiny values: relative, not absolute
    assert not check("9.029e-19 J", "3.421e-19 J").equivalent
    assert not check(r"\boxed{9.029 \times 10^{-19}}", r"3.421 \times 10^{-19}", kind="symbolic").equivalent
    assert check(r"\boxed{3.42 \times 10^{-19}}", r"3.421 \times 10^{-19}", kind="symbolic").equivalent
    # the checker and the helper agree, and a looser rel_tol loosens both the numeric and the
    # constant-symbolic comparison
    loose = CheckConfig(rel_tol=0.05)
    assert check("13 m/s", "12.5 m/s", cfg=loose).equivalent and not check("13 m/s", "12.5 m/s").equivalent
    assert check(r"\boxed{0.32}", r"\frac{1}{3}", kind="symbolic", cfg=loose).equivalent
    assert not check(r"\boxed{0.32}", r"\frac{1}{3}", kind="symbolic").equivalent
