"""How the step verifier reads a step's text (verifiers.step_reading), in any step: the notations of hand-written and
model solutions.

Read: equations inside sentences (with full stops, 'Plugging in, d = ...'), a remark in parentheses after a formula
(not a unit in parentheses), absolute-value bars, `lambda` written out, powers of ten written out (`6.67x10^-11`,
`× 10⁻¹¹`, `4 pi e-7`), √ before a number, subscript digits, Unicode and LaTeX (`μk`, `⁄`, `÷`, `½`, `log₁₀`,
`sin⁻¹`, `\\;`, `\\,`, `\\ `), a function applied without parentheses (`sin θ₁`), a Greek letter or a digit before a
symbol as a product, spaces between groups of three digits, Markdown bold. Long runs of spaces and stops are read
in linear time. A wrong step in any of these notations is still caught where it is.

The table's rows are (question, solution, reference, expected, reason, origin): _step_problems.py says how a row
is read.
"""
import pytest

from _step_problems import (BALL, CART_4KG, CART_FROM_REST, COPPER, DECIBEL, DEPTH, FRICTION, OHM_9V, OK, SPHERES,
                            SPRING, VAN, S, check, heldout_row, row, tmpl, with_parts)
from verifiers import seventag
from verifiers import step_reading as P
from verifiers.steps import verify


def _lambda(symbol):
    p = tmpl("wave_wavelength")
    return row(p.question, p.solution.replace("lam", symbol), p.solution, OK, f"{symbol} written out in a right "
               "solution", "round2")


FALL_Q = "A stone falls from rest through 20.0 m with g = 9.8 m/s^2. How long does it fall?"
FALL_REF = S(problem_analysis="Find the time t.", principle="Free fall from rest.", governing_equation="t = sqrt(2*h/g)",
             value_identification="h = 20.0 m\ng = 9.8 m/s^2", substitution="t = sqrt(2*20.0/9.8)",
             calculation="t = 2.02 s", final_answer="\\boxed{2.02 s}")
FALL_UNICODE = S(problem_analysis="Find the time t.", principle="Free fall from rest.", governing_equation="t = √(2h₁/g)",
                 value_identification="h₁ = 20.0 m\ng = 9.8 m/s²", substitution="t = √(2·20.0/9.8)",
                 calculation="t = √4.082\nt = 2.02 s", final_answer="\\boxed{2.02 s}")

SPRING_PROSE = SPRING.with_(
    governing_equation="For a spring obeying Hooke's law the stored energy is U = (1/2) k x^2.",
    value_identification="The stiffness is k = 250 N/m. The extension is x = 0.040 m.",
    substitution="Inserting the numbers gives U = 0.5 * 250 * 0.040^2.",
    calculation="Squaring first, 0.040^2 = 0.0016. Then U = 125 * 0.0016 = 0.2 J.")


def _powers(g_text):
    return SPHERES.with_(value_identification=f"G = {g_text} N*m^2/kg^2\nm1 = 40 kg\nm2 = 20 kg\nr = 0.40 m",
                         substitution=f"F = {g_text} * 40 * 20 / (0.40)^2", calculation="F = 3.34x10^-7 N",
                         final_answer="\\boxed{3.34 \\times 10^{-7} N}")


def _press(calc: str, final: str = "\\boxed{147 kPa}") -> str:
    return S(problem_analysis="Gauge pressure 15 m below the surface.", principle="Hydrostatic pressure grows with depth.",
             governing_equation="p = ρ g h", value_identification="ρ = 1000 kg/m³\ng = 9.8 m/s²\nh = 15 m",
             substitution="p = 1000 × 9.8 × 15 Pa", calculation=calc, final_answer=final)


def _db(calc: str, final: str) -> str:
    return S(problem_analysis="The intensity level β.", principle="The decibel scale, ten times the common logarithm.",
             governing_equation="$\\beta = 10\\,\\log_{10}(I/I_0)$",
             value_identification="I = 1.0 × 10⁻⁴ W/m² (the sound)\nI₀ = 1.0 × 10⁻¹² W/m²",
             substitution="$\\beta = 10\\log_{10}(10^{-4}/10^{-12})$", calculation=calc, final_answer=final)


def _bold(calc: str, final: str) -> str:
    return S(problem_analysis="**Unknown:** the kinetic energy K.", principle="**Kinetic energy** of a moving body.",
             governing_equation="**K = ½ m v²**", value_identification="**m** = 4.0 kg\n**v** = 3.0 m/s",
             substitution="K = ½ × 4.0 × 3.0**2", calculation=calc, final_answer=final)


DIVISIONS = ["K = 3.0 ⁄ 2 × 4.0²", "K = 3.0 ∕ 2 · 4.0^2", "K = 3.0 × 4.0² ÷ 2"]

PROSE = [
    *[CART_FROM_REST.row(f"equations inside sentences: {gov}", OK, "round4", governing_equation=gov,
                         substitution=sub, calculation=calc)
      for gov, sub, calc in [
          ("Starting from rest, the distance covered is d = (1/2)*a*t^2", "Hence d = 0.5*2.0*3.0^2",
           "Squaring first, 3.0^2 = 9.0 and so d = 1.0*9.0 = 9.0 m"),
          ("We use d = ½ a t²", "Plugging in, d = 0.5 × 2.0 × 3.0²", "This works out to d = 9.0 m, which is the answer"),
          ("|d| = a t^2/2", "|d| = 2.0*3.0^2/2", "|d| = 9.0 m")]],
    SPRING.row("equations written as sentences with full stops", OK, "round5", solution=SPRING_PROSE),
    SPRING.row("a wrong law written as a sentence", (3, "CM"), "round5", solution=with_parts(
        SPRING_PROSE, governing_equation="For a spring the stored energy is U = k x^2.")),
    *[COPPER.row(f"a remark in parentheses after a formula: {law}", OK, "round5", governing_equation=law)
      for law in ["Q = m*c*(T2 - T1) (heat taken in by the copper)",
                  "Q = m c (T2 - T1)   (c = specific heat of copper)"]],
    *[heldout_row(f"heldout7:{i}", (0, None) if i not in ("x094",) else (7, "CE"), "Markdown bold")
      for i in ["x020", "x093", "x094"]],
    CART_4KG.row("Markdown bold around a formula and a name", OK, "round7",
                 solution=_bold("K = **18 J**", "\\boxed{18 J}")),
    CART_4KG.row("a wrong result in Markdown bold", (6, "CE"), "round7",
                 solution=_bold("K = **36 J**", "\\boxed{36 J}")),
]

NUMBERS = [
    *[SPHERES.row(f"a power of ten written out: {g}", OK, "round4", solution=_powers(g))
      for g in ["6.67x10^-11", "6.67 X 10^-11", "6.67*10^(-11)", "6.67·10^-11", "6.67 × 10⁻¹¹"]],
    SPHERES.row("a power of ten spelled out keeps a wrong substitution wrong", (5, "CE"), "round4",
                substitution="F = 6.67x10^-11 * 40 * 20 / (0.40)", calculation="F = 1.33x10^-7 N",
                final_answer="\\boxed{1.33x10^-7 N}"),
    row(FALL_Q, FALL_UNICODE, FALL_REF, OK, "a root sign before a number and subscript digits", "round4"),
    *[heldout_row(f"heldout7:{i}", OK, "spaces between groups of three digits")
      for i in ["x034", "x046", "x050", "x106", "x044"]],
    DEPTH.row("a thin space between groups of three digits", OK, "round7",
              solution=_press("p = 147\\,000 Pa = 147 kPa")),
    DEPTH.row("a space between groups of three digits", OK, "round7", solution=_press("p = 147 000 Pa")),
    DEPTH.row("a wrong result with spaces between digit groups", (6, "CE"), "round7",
              solution=_press("p = 174 000 Pa", "\\boxed{174 kPa}")),
]

UNICODE = [
    _lambda("lambda"),
    _lambda("\\lambda"),
    *[heldout_row(f"heldout6:{i}", OK, "list markers, Unicode and LaTeX") for i in ["w023", "w030", "w002", "w017",
                                                                                    "w019"]],
    *[heldout_row(f"heldout6:{i}", gold, "a slip in list, Unicode or LaTeX notation")
      for i, gold in [("w056", (5, "CE")), ("w064", (6, "CE")), ("w072", (7, "CE")), ("w051", (7, "CE")),
                      ("w085", (5, "CE"))]],
    *[BALL.row(f"Unicode division signs: {sub}", OK, "round6", governing_equation="K = m·v² ⁄ 2", substitution=sub)
      for sub in DIVISIONS],
    *[BALL.row(f"Unicode division signs, a wrong result: {sub}", (6, "CE"), "round6", governing_equation="K = m·v² ⁄ 2",
               substitution=sub, calculation="K = 2.4 J", final_answer="\\boxed{2.4 J}") for sub in DIVISIONS],
    BALL.row("a LaTeX thin space in a law", OK, "round6",
             governing_equation="K = \\tfrac{1}{2}\\,m\\,v^2 = \\frac{m\\,v^2}{2}"),
    BALL.row("a wrong law with LaTeX thin spaces", (3, "CM"), "round6",
             governing_equation="K = \\tfrac{1}{2}\\,m\\,v = \\frac{m\\,v}{2}", substitution="K = 3.0 * 4.0 / 2",
             calculation="K = 6 J", final_answer="\\boxed{6 J}"),
    *[heldout_row(f"heldout7:{i}", gold, "Unicode notation: n₁ = 1.00 (air), sin⁻¹, log₁₀, ½CV², 70 dB")
      for i, gold in [("x067", (0, None)), ("x079", (0, None)), ("x081", (0, None)), ("x088", (0, None)),
                      ("x082", (3, "CM"))]],
    DECIBEL.row("log₁₀ and a remark '(the sound)' after a value", OK, "round7",
                solution=_db("β = 10 × 8 = 80 dB", "\\boxed{80 dB}")),
    DECIBEL.row("a wrong logarithm result", (6, "CE"), "round7", solution=_db("β = 10 × 8 = 90 dB", "\\boxed{90 dB}")),
]


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", PROSE)
def test_prose_remarks_and_markdown(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", NUMBERS)
def test_numbers_written_out(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", UNICODE)
def test_unicode_and_latex(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


@pytest.mark.parametrize("eq,sub", [
    ("I = |V|/R", "I = |9.0|/3.0"),
    ("I = \\left|V\\right| / R", "I = \\left|9.0\\right| / 3.0"),
    ("I = \\lvert V \\rvert / R", "I = \\lvert 9.0 \\rvert / 3.0"),
])
def test_absolute_value_bars_are_read(eq, sub):
    """A magnitude written with bars (|q1 q2|, \\left| ... \\right|) was 'unexpected character |' at step 3."""
    sol = OHM_9V.reference.replace("I = V/R", eq).replace("I = 9.0/3.0", sub)
    v = verify(OHM_9V.question, sol, OHM_9V.reference)
    assert v.valid and v.first_error == 0, v
    wrong = sol.replace("/R", "*R").replace("/ R", "* R").replace("/3.0", "*3.0").replace("/ 3.0", "* 3.0")
    v = verify(OHM_9V.question, wrong, OHM_9V.reference)
    assert v.valid and v.first_error in (2, 3) and v.error_class == "CM", v


@pytest.mark.parametrize("eq, vals", [("f = μk m g", "μk = 0.40, m = 5.0 kg, g = 9.8 m/s^2"),
                                      ("f = \\mu_k m g", "\\mu_k = 0.40, m = 5.0 kg, g = 9.8 m/s^2"),
                                      ("f = μk·m·g", "μk = 0.40\nm = 5.0 kg\ng = 9.8 m/s^2")])
def test_friction_coefficient_written_mu_k_is_one_symbol(eq, vals):
    assert P.expr_text("μk m g") == P.expr_text("mu_k m g")
    v = verify(FRICTION.question, FRICTION.with_(governing_equation=eq, value_identification=vals), FRICTION.reference)
    assert v.valid and v.first_error == 0, v
    bad = FRICTION.with_(governing_equation=eq, value_identification=vals, substitution="f = 0.40 * 5.0 * 9.8",
                         calculation="f = 1.96 N", final_answer="\\boxed{1.96 N}")
    v = verify(FRICTION.question, bad, FRICTION.reference)
    assert v.valid and v.first_error == 6, v


def test_microseconds_are_not_a_friction_coefficient():
    assert P.expr_text("5 μs") != P.expr_text("5 mu_s")


def test_exponent_of_a_number_is_no_name():
    assert P.names("2.5e9 * k + 1E-3") == {"k"}
    assert P.names("x^2 * 10^3") == {"x"}  # a power of a symbol times a thousand is not the number 2e3


def test_function_applied_without_parentheses():
    assert abs(P.evaluate("n_1 \\sin\\theta_1", {"n_1": 2.0, "theta_1": 0.5}) - 2.0 * 0.479425538604203) < 1e-9
    assert abs(P.evaluate("sin θ₁ / 2", {"theta_1": 0.5}) - 0.479425538604203 / 2) < 1e-9
    assert abs(P.evaluate("cos 60°", {}) - 0.5) < 1e-9


def test_own_inverse_sine_kept():
    assert P.close(P.evaluate("sin⁻¹(0.5)", {}), 0.5235987755982988)
    assert P.close(P.evaluate("\\sin^{-1}(0.5)", {}), 0.5235987755982988)
    assert P.close(P.evaluate("10 log₁₀(1000)", {}), 30.0)


@pytest.mark.parametrize("mu0", ["4 pi x 10^-7 T m/A", "4 pi e-7 T m/A", "4\\pi \\times 10^{-7} T m/A"])
def test_a_constant_written_as_pi_times_a_power_of_ten(mu0):
    q = P.quantity(mu0)
    assert q is not None and q[0] == pytest.approx(1.2566e-6, rel=1e-3)
    assert P.evaluate(mu0.split(" T")[0], {}) == pytest.approx(1.2566e-6, rel=1e-3)


def test_greek_letter_before_a_symbol_and_a_digit_before_symbols_are_products():
    assert P.names("λL/d") == {"lambda", "L", "d"} and P.names("ρ g h") == {"rho", "g", "h"}
    assert P.juxtaposed("sqrt(2gh)", {"g", "h"}) == "sqrt(2g h)"


def test_a_change_of_a_greek_quantity_is_one_symbol():
    assert P.names("N*ΔΦ/Δt") == {"N", "Delta_Phi", "Delta_t"}
    assert P.names("N \\frac{\\Delta\\Phi}{\\Delta t}") == {"N", "Delta_Phi", "Delta_t"}
    assert P.lhs_name("ΔΦ") == "Delta_Phi"


def test_a_latex_thick_space_is_no_separator():
    st = seventag.parse("<governing_equation>h = \\frac{1}{2} g t^2 \\;\\Rightarrow\\; t = \\sqrt{\\frac{2h}{g}}"
                        "</governing_equation>")
    got = P.lines(st.get("governing_equation"))
    assert len(got) == 2 and all("\\" not in ln.rstrip()[-1:] for ln in got), got
    eqs, _, _ = P.governing(st.get("governing_equation"), {"h", "g"})
    assert [e[0] for e in eqs] == ["t"]


def test_latex_thin_space_comma_is_no_separator():
    line = "\\Delta t = \\gamma\\,\\Delta t_0 = \\frac{\\Delta t_0}{\\sqrt{1 - v^2/c^2}}"
    assert P.assignments(line) == [line]


def test_a_unit_in_parentheses_is_no_remark():
    st = seventag.parse("<value_identification>c = 385 J/(kg K)\nu = 0 m/s (from rest)</value_identification>")
    assert P.lines(st.get("value_identification")) == ["c = 385 J/(kg K)", "u = 0 m/s"]


def test_value_in_parentheses_is_no_remark():
    step = seventag.parse(S(problem_analysis="a", principle="b", governing_equation="E = P t",
                            value_identification="n_1 = 1.00 (air)", substitution="E = 1.5*30*(4.0 min)",
                            calculation="x", final_answer="y"))
    assert P.lines(step.get("substitution")) == ["E = 1.5*30*(4.0 min)"]
    assert P.lines(step.get("value_identification")) == ["n_1 = 1.00"]


@pytest.mark.parametrize("body", ["x = 1" + " " * 15000 + "y", "a" + " " * 15000 + "(b", "x = 1" + " ." * 5000,
                                  "x = 1 (" + "a " * 5000 + ")", "m = 1200 kg," + " ," * 5000 + " v = 15 m/s"])
def test_long_runs_of_spaces_and_stops_are_read_in_linear_time(body):
    import time
    t = time.time()
    P.lines(seventag.parse(f"<substitution>{body}</substitution>").get("substitution"))
    verify(VAN.question, VAN.with_(value_identification=body, substitution=body), VAN.reference)
    assert time.time() - t < 10.0  # <= 0.01 s here; a quadratic read of these runs takes minutes
