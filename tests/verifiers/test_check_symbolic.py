"""Symbolic answers read as physics: e is the charge and mv^2 is m v^2 (never Euler's number, (mv)^2 or
milligrams), the forms models write (v0, ħ, √, ω²), ħ against h/2π, an index written without its underscore,
a Unicode fraction grouped, and function names written without a backslash ("sinθ", "ln 2").  Rows:
(prediction, gold, expected, origin[, kind]), see _check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

SYMBOLIC = [
    (r"\frac{7.389}{4\pi\epsilon_0 r}", r"\frac{e^2}{4\pi\epsilon_0 r}", False, "round2"),  # e is the charge
    (r"\frac{e^{2}}{4\pi\epsilon_0 r}", r"\frac{q^2}{4\pi\epsilon_0 r}", False, "round2"),
    (r"\frac{m^2 v^2}{r}", r"\frac{mv^2}{r}", False, "round2"),  # mv^2 is m v^2, never (mv)^2
    ("m^2 v^2/r", "mv^2/r", False, "round2"),
    ("0.002 g", "2mg", False, "round2"),  # 2mg is 2 m g, never 2 milligrams
    ("2 milligrams", "2mg", False, "round2"),
    (r"\frac{e^2}{4\pi\epsilon_0 r}", r"\frac{e^2}{4\pi\epsilon_0 r}", True, "round2"),
    (r"\frac{m v^2}{r}", r"\frac{mv^2}{r}", True, "round2"),
    ("m*v^2/r", "mv^2/r", True, "round2"),
    ("2 m g", "2mg", True, "round2"),
    (r"V_0 e^{-t/RC}", r"V_0 e^{-\frac{t}{R C}}", True, "round2"),
]


@pytest.mark.parametrize("row", rows(SYMBOLIC))
def test_symbolic_golds_read_as_physics(row):
    assert_row(check, row)


FORMS = [
    (r"\sqrt{2gh}\ \mathrm{m/s}", r"\sqrt{2gh}", True, "round2"),
    ("sqrt(2 g h) m/s", r"\sqrt{2gh}", True, "round2"),
    ("v0/g", "v_0/g", True, "round2"),
    (r"\frac{v_0}{g}", "v0/g", True, "round2"),
    (r"\frac{q}{4\pi\varepsilon_0 r^2}", r"\frac{q}{4\pi\epsilon_0 r^2}", True, "round2"),
    (r"\frac{\hbar}{2}", r"\hbar/2", True, "round2"),
    ("ħ/2", r"\frac{\hbar}{2}", True, "round2"),
    ("λ/2", r"\frac{\lambda}{2}", True, "round2"),
    ("ω²r", r"\omega^2 r", True, "round2"),
    ("√(2gh)", r"\sqrt{2gh}", True, "round2"),
    ("mω²A", r"m\omega^2 A", True, "round2"),
    # a letter with a number after it is indexed in LaTeX
    (r"x = \frac{u1^2}{2a}", r"\frac{u_1^2}{2a}", True, "round5", "symbolic"),
    (r"x = \frac{u1^2}{2a}", "0", False, "round5", "symbolic"),
    # ħ is h over 2π against an answer in h
    (r"p = \frac{2\pi\hbar}{\lambda}", r"\frac{h}{\lambda}", True, "round5", "symbolic"),
    ("p = h/λ", r"\frac{2\pi\hbar}{\lambda}", True, "round5", "symbolic"),
    (r"p = \frac{\hbar}{\lambda}", r"\frac{h}{\lambda}", False, "round5", "symbolic"),
    # a Unicode fraction in an expression is grouped
    ("I = ⅔ M R^2", r"\frac{2}{3} M R^2", True, "round5", "symbolic"),
    ("I = ⅔MR^2", "2 M R^2 / 3", True, "round5", "symbolic"),
    ("I = ⅔MR^2", "2/(3 M R^2)", False, "round5", "symbolic"),
]


@pytest.mark.parametrize("row", rows(FORMS))
def test_symbolic_answers_in_the_forms_models_write(row):
    assert_row(check, row)


# functions written without a backslash next to a Greek letter (heldout6:c150, c328): "sinθ" becomes
# "sin\theta" once its unicode is LaTeX, and the LaTeX parser read "sin" as s*i*n (the gold "m g sin(θ)/k" was
# read as m g s i n(θ)/k); a bare one-symbol argument binds to its function ("cos θ / g" is cos(θ)/g), a bare
# number after "ln" binds to the number, and symbols written against the function keep it
FUNCTIONS = [
    ("R = 2 v0^2 sinθ cosθ / g", "v_0^2 \\sin(2\\theta)/g", True, "heldout6:c150", "symbolic"),
    ("<final_answer>\\frac{mg\\sin\\theta}{k}</final_answer>", "m g sin(θ)/k", True, "heldout6:c328", "symbolic"),
    ("a = g sinθ − μ g cosθ", "g(\\sin\\theta - \\mu\\cos\\theta)", True, "round6", "symbolic"),
    ("x = v0 t cosα", "v_0 t \\cos\\alpha", True, "round6", "symbolic"),
    ("T = mg cos θ / 2", "\\frac{m g \\cos\\theta}{2}", True, "round6", "symbolic"),
    ("2 v_0^2 \\sin\\theta \\cos\\theta / g", "v_0^2 \\sin(2\\theta)/g", True, "round6", "symbolic"),
    ("R = 2 v0^2 sinθ / g", "v_0^2 \\sin(2\\theta)/g", False, "round6", "symbolic"),
    ("R = v0^2 sinθ cosθ / g", "v_0^2 \\sin(2\\theta)/g", False, "round6", "symbolic"),
    ("m g cos(θ)/k", "m g sin(θ)/k", False, "round6", "symbolic"),
    ("a = g sinθ + μ g cosθ", "g(\\sin\\theta - \\mu\\cos\\theta)", False, "round6", "symbolic"),
    ("T = mg tanθ", "m g \\sin\\theta", False, "round6", "symbolic"),
    ("ln 2/λ", "\\ln(2/\\lambda)", False, "round6-review", "symbolic"),
    ("ln 2/λ", "\\ln(2)/\\lambda", True, "round6-review", "symbolic"),
    ("ln2/λ", "\\ln(2)/\\lambda", True, "round6-review", "symbolic"),
    ("mgsinθ", "m g \\sin\\theta", True, "round6-trailing"),
    ("Fcosθ", "F \\cos\\theta", True, "round6-trailing"),
    ("mgsinθ - μmgcosθ", "m g (\\sin\\theta - \\mu \\cos\\theta)", True, "round6-trailing"),
    ("mgsinθ", "m g \\cos\\theta", False, "round6-trailing"),
    ("mgsinθ", "m g \\theta", False, "round6-trailing"),
]


@pytest.mark.parametrize("row", rows(FUNCTIONS))
def test_function_names_without_a_backslash(row):
    assert_row(check, row)
