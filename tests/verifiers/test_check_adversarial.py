"""An adversarial pass over the answer checker, as an RL policy searching for reward would make it:
answers that hedge between candidates, negate a value, hide a non-real value behind a number,
write a minus with a dash, drop a unit, or stall the extractor. The defect tests failed on the
checker before their fix (the checker at the commit before this file: 83 of the 122 cases fail there); the guards
next to them (``..._still_read``, ``..._is_read``, the equal-expression and the real-reference tests)
hold verdicts that must not change and passed before too (one of them, "1,200 J" read as 1200 J, now sits
with the thousands separators in test_check_numbers.py)."""
import concurrent.futures as cf
import re

import pytest

from verifiers import CheckConfig, check

JEE = CheckConfig(mode="jeebench")


def _accepted(pred, refs, kind=None):
    return [r for r in refs if check(pred, r, kind=kind).equivalent]


# --- hedges: an answer that names several values is none of them ----------------------------------

@pytest.mark.parametrize("pred,refs", [
    ("The answer is 25 m/s or 30 m/s.", ("25 m/s", "30 m/s")),  # was 25 m/s: the unit "m/s or 30 m/s"
    ("The answer is either 25 m/s or 30 m/s.", ("25 m/s", "30 m/s")),  # was 30 m/s
    ("either 25 m/s or 30 m/s", ("25 m/s", "30 m/s")),
    ("Answer: 25 m/s & 30 m/s", ("25 m/s", "30 m/s")),
    ("5 m/s (or 50 m/s)", ("5 m/s", "50 m/s")),  # the parenthetical hedge was dropped as a remark
    ("The answer is 5 m/s (or 50 m/s).", ("5 m/s", "50 m/s")),
    ("about 5 m/s; alternatively 6 m/s", ("5 m/s", "6 m/s")),
    ("v1 = 25 m/s, v2 = 30 m/s", ("25 m/s", "30 m/s")),  # was the last assignment
    ("v = 25 m/s, or v = 30 m/s", ("25 m/s", "30 m/s")),
    ("5 \u2013 6 m/s", ("5 m/s", "6 m/s")),  # en-dash range
    ("5\u20136 m/s", ("5 m/s", "6 m/s")),
    ("25 vs 30", ("25", "30")),
    ("25 versus 30", ("25", "30")),
    ("25 or maybe 30", ("25", "30")),
    ("25, or 30", ("25", "30")),
    ("25 nor 30", ("25", "30")),
    ("25 otherwise 30", ("25", "30")),
    ("25 ... 30", ("25", "30")),
    ("5 ~ 6", ("5", "6")),
    (r"\boxed{25 \quad 30}", ("25", "30")),
    (r"\boxed{25 \vee 30}", ("25", "30")),
    (r"\boxed{25 | 30}", ("25", "30")),
    (r"\boxed{25 \text{ (or } 30)}", ("25", "30")),
    (r"25 \to 30", ("25", "30")),
    (r"25 \rightarrow 30", ("25", "30")),  # \right was stripped as a delimiter: "25 arrow 30"
    (r"\boxed{5 \pm 1 m/s}", ("5 m/s", "1 m/s", "-5 m/s")),
    (r"\boxed{\pm 5}", ("5", "-5", "5 m/s")),  # was 5
    ("x = 5 \u00b1 100", ("5", "100")),
])
def test_hedges_are_refused(pred, refs):
    assert _accepted(pred, refs) == []


@pytest.mark.parametrize("pred,refs", [
    (r"\boxed{T = 2\pi\sqrt{l/g}, T = \pi\sqrt{l/g}}", (r"2\pi\sqrt{l/g}", r"\pi\sqrt{l/g}")),  # was the last
    (r"\boxed{T = 2\pi\sqrt{l/g} \text{ or } T = \pi\sqrt{l/g}}", (r"2\pi\sqrt{l/g}", r"\pi\sqrt{l/g}")),
    (r"\boxed{v = \sqrt{2gh}; v = \sqrt{gh}}", (r"\sqrt{2gh}", r"\sqrt{gh}")),
])
def test_symbolic_assignment_lists_are_refused(pred, refs):
    assert _accepted(pred, refs, kind="symbolic") == []


@pytest.mark.parametrize("pred,ref", [
    (r"\boxed{T = 2\pi\sqrt{l/g}}", r"2\pi\sqrt{l/g}"),
    (r"\boxed{x = 5+5+1 = 11}", "11"),
    (r"\boxed{E = mc^2 = m c^{2}}", "m c^2"),
    (r"\boxed{\{1, 2\}}", r"\{1, 2\}"),
])
def test_symbolic_single_answers_still_read(pred, ref):
    assert check(pred, ref, kind="symbolic").equivalent


@pytest.mark.parametrize("pred,ref", [
    ("The answer is (A) or (B)", "A"),  # was A: "or" ended the letter list
    ("The answer is A or B", "A"),
    ("The answer is (A) or (B)", "B"),
    ("Consider option A. So we get C.", "A"),  # a bare "option A" in the reasoning was the answer
    ("Option A is tempting. Final: B", "A"),
    ("Let's look at option A first. After checking, C fits.", "A"),
])
def test_mcq_hedges_and_mentions_are_not_answers(pred, ref):
    for cfg in (CheckConfig(), JEE):
        assert not check(pred, ref, cfg=cfg).equivalent


@pytest.mark.parametrize("pred,ref", [
    ("I choose option D", "D"),
    ("Option B is correct.", "B"),
    ("The answer is option C", "C"),
    ("The correct option is (C).", "C"),
    ("After eliminating the others, the answer is therefore (B)", "B"),
    ("So the right choice is option A.", "A"),
    ("Option A is tempting. The answer is B", "B"),
])
def test_mcq_answer_statements_still_read(pred, ref):
    assert check(pred, ref).equivalent


# --- negated values -------------------------------------------------------------------------------

@pytest.mark.parametrize("pred,ref", [
    ("The answer is not 25", "25"),
    ("The answer is not 25 m/s.", "25 m/s"),
    ("It cannot be 25", "25"),
    ("25 is wrong", "25"),
    ("The answer isn't 25", "25"),
])
def test_a_negated_value_is_not_the_answer(pred, ref):
    assert not check(pred, ref).equivalent


@pytest.mark.parametrize("pred,ref", [
    ("not it's not 10 it's 1,000.99m²", "1000.99"),  # Math-Verify test_number_extraction[16]
    ("The answer is 30, not 25", "30"),
    ("The answer is 25 m/s (not 30 m/s).", "25 m/s"),
])
def test_a_correction_after_a_negation_is_read(pred, ref):
    assert check(pred, ref).equivalent


# --- an expression whose value is not a real number is not the number written in it ---------------

@pytest.mark.parametrize("pred,ref", [
    (r"\boxed{\sqrt{-25}}", "25"),
    (r"\boxed{\sqrt{-25}}", "25 m"),
    (r"\boxed{\log(-1) + 25}", "25"),
    (r"\boxed{\ln(0) + 25}", "25"),
    (r"\boxed{25 \cdot \infty}", "25"),
    (r"\boxed{\infty - 25}", "25"),
    (r"\boxed{\frac{1}{0} 25}", "25"),
    ("log(0)+25", "25"),  # plain text (safeexpr): a math domain error, then the last number
    ("asin(2)+25", "25"),
    ("exp(1000)*25", "25"),
    ("The answer is sqrt(-1) + 25 m", "25 m"),
])
def test_non_real_expressions_do_not_fall_back_to_a_number(pred, ref):
    v = check(pred, ref)
    assert not v.equivalent and v.reason


# --- symbolic sampling: a term that vanishes on the narrow sampling range is not the reference -----

PENDULUM = r"2\pi\sqrt{l/g}"


@pytest.mark.parametrize("pred,ref", [
    (r"\boxed{2\pi\sqrt{l/g} + \lfloor l/10 \rfloor}", PENDULUM),  # floor(l/10) = 0 on [0.5, 2.5]
    (r"\boxed{2\pi\sqrt{l/g} + \lfloor 0.3 l \rfloor}", PENDULUM),
    (r"\boxed{2\pi\sqrt{l/g} + (l-1)^{20} 0.000001}", PENDULUM),  # < 1e-6 relative on [0.5, 2.5]
    (r"\boxed{2\pi\sqrt{l/g} + e^{-100 l}}", PENDULUM),
    (r"\boxed{x + 10^{-7} y}", "x"),
])
def test_sampling_covers_more_than_the_narrow_range(pred, ref):
    assert not check(pred, ref, kind="symbolic").equivalent


@pytest.mark.parametrize("pred,ref", [
    (r"\frac{1-\cos x}{x^2}", r"\frac{2\sin^2(x/2)}{x^2}"),
    (r"\frac{m c^2}{\sqrt{1-v^2/c^2}}", r"m c^2 (1-v^2/c^2)^{-1/2}"),
    (r"\frac{e^{50x}}{e^{49x}}", "e^{x}"),
    (r"\ln(x^{100})", r"100\ln x"),
    (r"\sqrt{\frac{2 g h}{1 + I/(m r^2)}}", r"\sqrt{\frac{2 g h m r^2}{m r^2 + I}}"),
])
def test_equal_expressions_still_match_over_the_wide_range(pred, ref):
    assert check(pred, ref, kind="symbolic").equivalent


# --- units written as a LaTeX fraction are units, not dropped ---------------------------------------

@pytest.mark.parametrize("pred,ref,ok", [
    (r"\boxed{5 \frac{\text{km}}{\text{s}}}", "5 m/s", False),  # was a bare 5, read in m/s: 1000x off
    (r"\boxed{5 \dfrac{\mathrm{km}}{\mathrm{h}}}", "5 m/s", False),
    (r"\boxed{5 \frac{\text{km}}{\text{s}}}", "5000 m/s", True),
    (r"\boxed{5\,\frac{\text{g}}{\text{cm}^3}}", "5000 kg/m^3", True),
    (r"\boxed{5 \frac{m}{s^2}}", "5 m/s^2", True),
    (r"\boxed{5 \dfrac{\mu C}{m^2}}", "5e-6 C/m^2", True),
    (r"\boxed{\frac{3}{4}}", "0.75", True),
    (r"\boxed{2\frac{\pi}{3}}", "2.094", True),
    ("The speed is 5 km s^{-1} upward", "5 km/s", True),  # the longest unit prefix, not "km"
    # a unit after the box, in parentheses, or with \rm was dropped: the bare 5 was read in m/s
    (r"\boxed{5}\text{ km/s}", "5 m/s", False),
    (r"\boxed{5} km/s", "5 m/s", False),
    (r"\boxed{5}~\mathrm{km\,s^{-1}}", "5 m/s", False),
    (r"\boxed{5}\text{ km/s}", "5000 m/s", True),
    (r"\boxed{5\ {\rm km/s}}", "5 m/s", False),
    ("5 (km/s)", "5 m/s", False),
    ("5 (km/s)", "5000 m/s", True),
    ("5 thousand m/s", "5 m/s", False),
    ("5 kilo m/s", "5 m/s", False),
    (r"The answer is \boxed{5} m/s.", "5 m/s", True),
    (r"\boxed{5} and so on", "5 m/s", True),
    (r"\boxed{5}$ in 3 s", "5 m/s", True),
    ("The answer is 6.3 (rounded)", "6.3", True),
    ("The answer is 6.3 (to 2 s.f.)", "6.3", True),
])
def test_fraction_units(pred, ref, ok):
    assert check(pred, ref).equivalent is ok


# --- dashes written for a minus sign --------------------------------------------------------------

@pytest.mark.parametrize("dash", ["\u2012", "\u2013", "\u2014", "\u2010", "\ufe63", "\uff0d"])
def test_a_dash_before_a_digit_is_a_minus(dash):
    assert check(dash + "5", "-5").equivalent
    assert not check(dash + "5", "5").equivalent
    assert not check(f"The velocity is {dash}5 m/s", "5 m/s").equivalent


@pytest.mark.parametrize("pred,ref", [
    ("Speed \u2014 5 m/s", "5 m/s"),  # a spaced dash is punctuation
    ("\u22125", "-5"),
    (r"The speed of light is 3.0 \times 10^{8} m/s in vacuum", "3e8 m/s"),
    ("9.8 m/s^2 downward", "9.8 m/s^2"),
    ("After 2 s the speed becomes 5 m/s", "5 m/s"),
    ("x = 5 + 5 + 1 = 11", "11"),
    ("F = ma = 2 \\cdot 5 = 10 N", "10 N"),  # thousands separators: test_check_numbers.py
])
def test_single_values_still_read(pred, ref):
    assert check(pred, ref).equivalent


# --- extraction is linear: unclosed openers cannot stall a check ---------------------------------

PATHOLOGICAL = [
    "\\boxed{" * 2800,  # 8-12 s per check before (25 s under threads): a scan per opener
    "\\fbox{" * 3300,
    "\\(" * 9900,  # 3.5 s before: inline math scanned to the end of the line from every opener
    "\\[" * 9900,
    "<final_answer>" * 1420,
    "The correct answer is " + "A   " * 14 + "Ab",
]


@pytest.mark.parametrize("text", PATHOLOGICAL, ids=lambda t: t[:14])
def test_unclosed_openers_are_linear(text):
    for ref, kind in (("A", "mcq"), ("5 m", None)):
        v = check(text, ref, kind=kind)  # how fast (linear, < 2 s): benchmarks/test_bench_deadlines.py
        assert isinstance(v.equivalent, bool) and v.reason


def test_pathological_verdicts_and_deadlines_under_threads():
    cases = [(t, "A", "mcq") for t in PATHOLOGICAL] + [(t, "5 m", None) for t in PATHOLOGICAL] + [
        ("The answer is 25 m/s or 30 m/s.", "25 m/s", None), (r"\boxed{\sqrt{-25}}", "25", None),
        ("The answer is (A) or (B)", "A", None), ("\u20135", "-5", None), ("\u20135", "5", None)]
    serial = [check(*c) for c in cases]

    with cf.ThreadPoolExecutor(4) as ex:
        got = list(ex.map(lambda c: check(*c), cases * 2))
    assert got == serial * 2  # the longest check (< 8 s; 25 s before): benchmarks/test_bench_deadlines.py


# --- real references: each is equal to itself and not to itself x1.1 or x10 -----------------------

def _perturbed(ans: str, f: float):
    m = re.search(r"(?<![\w^{_.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", ans)
    if not m or float(m.group()) == 0:
        return None
    return ans[:m.start()] + repr(float(m.group()) * f) + ans[m.end():]


def test_real_references_against_themselves_and_perturbed(shared_data):
    # the data directory from the shared fixture ($R3BENCH_DATA_DIR, else ../shared/data): it was a
    # skipif on the variable, so the README's own test command (which does not set it) skipped it
    from r3bench.eval import data

    recs = [r for b in ("jeebench", "physicsqa") for r in data.load(b, shared_data)
            if r.answer_kind in ("numeric", "integer")]
    assert len(recs) > 40
    for r in recs:
        assert check(r.answer, r.answer, r.answer_kind).equivalent, r.answer
        for f in (1.1, 10):
            p = _perturbed(r.answer, f)
            if p is not None:
                assert not check(p, r.answer, r.answer_kind).equivalent, (r.answer, p)
