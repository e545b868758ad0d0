"""Checker behaviour on bad model output, and symbolic equivalence: a verdict with a reason, never a raise."""
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
