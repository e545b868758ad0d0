"""Units in the step verifier's steps: every form the reader reads, and a unit is never a symbol.

Accepted: units in square brackets (`4 [m/s]`, `[-]`, `[1/°C]`), the ohm sign, LaTeX units with a group inside
(`\\mathrm{m\\,s^{-2}}`, `\\Omega` after a power of ten), a value per unit (`23e-6 /K`, `per second`), a bare zero
(zero in any unit), a temperature written `20 C` (Celsius, not coulombs, where a temperature is meant), money and
counts as plain numbers.

Flagged: a wrong law whose units do not add up (CM at step 3), a wrong result in any of these notations (CE at
step 6).

The table's rows are (question, solution, reference, expected, reason, origin): _step_problems.py says how a row
is read.
"""
import pytest

from _step_problems import BALLS, BILL, COPPER, OK, RC, Problem, S, check, heldout_row
from verifiers import seventag
from verifiers import step_reading as P

CART = Problem("A cart moves at 4 m/s for 3 s. How far does it go?", S(
    problem_analysis="The problem asks for the distance (s).", principle="Uniform motion at constant velocity.",
    governing_equation="s = v*t", value_identification="v = 4 m/s\nt = 3 s", substitution="s = 4*3",
    calculation="s = 12 m", final_answer="\\boxed{12 m}"))

OHM_4 = Problem("A 12 V battery drives a current through a 4 Ω resistor. Find the current.", S(
    problem_analysis="The problem asks for the current (I).", principle="Ohm's law.",
    governing_equation="I = V/R", value_identification="V = 12 V\nR = 4 ohm", substitution="I = 12/4",
    calculation="I = 3 A", final_answer="\\boxed{3 A}"))


def _rc(sub: str, calc: str, final: str) -> str:
    return S(problem_analysis="The time constant τ.", principle="Time constant of an RC circuit.",
             governing_equation="$\\tau = R C$",
             value_identification="$R = 4.0\\times10^{3}\\,\\Omega$, $C = 2.5\\times10^{-5}\\,\\mathrm{F}$",
             substitution=sub, calculation=calc, final_answer=final)


UNITS = [
    CART.row("units in brackets", OK, "round2", solution=S(
        problem_analysis="We need the distance s.", principle="Uniform motion at constant velocity.",
        governing_equation="s = v t", value_identification="v = 4 [m/s]\nt = 3 [s]",
        substitution="s = 4 [m/s] \\cdot 3 [s]", calculation="s = 12 [m]",
        final_answer="\\boxed{12 m}")),  # the box is read by the checker
    *[OHM_4.row(f"the ohm sign in a substitution: {sub}", OK, "round2",
                solution=OHM_4.reference.replace("R = 4 ohm", "R = 4 Ω").replace("I = 12/4", sub))
      for sub in ("I = \\frac{12 V}{4 Ω}", "I = 12 V / 4 Ω", "I = \\frac{12\\,\\text{V}}{4\\,\\Omega}")],
    BALLS.row("a bare zero is zero in any unit", OK, "round5",
              governing_equation="m1 u1 + m2 u2 = (m1 + m2) v => v = (m1 u1 + m2 u2)/(m1 + m2)",
              value_identification="m1 = 3.0 kg, u1 = 4.0 m/s, m2 = 1.0 kg, u2 = 0",
              substitution="v = (3.0*4.0 + 1.0*0)/(3.0 + 1.0)"),
    # a unit that is wrong is still caught
    BALLS.row("a law whose units do not add up", (3, "CM"), "round5", governing_equation="v = m1*u1/(m1 + u1)"),
    COPPER.row("a temperature written with a bare C is Celsius", OK, "round5",
               value_identification="m = 0.50 kg, c = 385 J/(kg K), T1 = 20 C, T2 = 80 C"),
    *[BILL.row(f"money is a plain number: {price}, {result}", OK, "round5",
               value_identification=f"P = 2.0 kW, t = 3.0 h, price = {price}", calculation=f"cost = {result}")
      for price, result in [("0.20 $/kWh", "1.20 dollars"), ("$0.20/kWh", "$1.20"), ("0.20 euros/kWh", "1.20 euros")]],
    heldout_row("heldout7:x001", OK, "LaTeX units in the substitution"),
    heldout_row("heldout7:x100", OK, "LaTeX units in the substitution"),
    RC.row("Ω and F after powers of ten", OK, "round7",
           solution=_rc("τ = 4.0 × 10³ Ω × 2.5 × 10⁻⁵ F", "τ = 0.10 s", "\\boxed{0.10 s}")),
    RC.row("LaTeX units with a group inside", OK, "round7", solution=_rc(
        "$\\tau = (4.0\\times10^{3}\\,\\Omega)(2.5\\times10^{-5}\\,\\mathrm{A\\,s\\,V^{-1}})$", "τ = 0.10 s",
        "\\boxed{0.10 s}")),
    RC.row("a wrong result after LaTeX units", (6, "CE"), "round7",
           solution=_rc("τ = 4.0 × 10³ Ω × 2.5 × 10⁻⁵ F", "τ = 1.0 s", "\\boxed{1.0 s}")),
]


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", UNITS)
def test_units_in_the_steps(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


def test_a_coulomb_is_still_a_coulomb():
    assert P.values(seventag.parse("<value_identification>q = 3 C</value_identification>")
                    .get("value_identification"))[0][2] == "ampere * second"


def test_money_is_read_as_a_plain_number():
    assert P.quantity("\\$4.50") == (4.5, "")


def test_bracketed_dimensionless_and_per_degree_units_are_read():
    assert P.quantity("0.25 [-]") == (0.25, "")
    for t in ("1.2e-5 [1/°C]", "1.2e-5 /°C", "1.2e-5 °C^-1"):
        q = P.quantity(t)
        assert q is not None and abs(q[0] - 1.2e-5) < 1e-12 and "kelvin" in q[1], (t, q)
    assert abs(P.quantity("10 [°C]")[0] - 283.15) < 0.1  # an absolute temperature keeps its offset


def test_a_value_per_unit_is_read_with_its_unit():
    q = P.quantity("12e-6 /K")
    assert q is not None and q[0] == pytest.approx(1.2e-5) and q[1] == "1 / kelvin"
    q = P.quantity("0.5 per second")
    assert q is not None and q[1] == "1 / second"
    assert P.quantity("23e-6/K")[1] == "1 / kelvin"
    assert P.quantity("10 m/s")[1] == "meter / second"


def test_a_count_in_the_box_is_a_number():
    assert P.quantity("100 nuclei") == (100.0, "")
    assert P.quantity("6.2e18 electrons") == (6.2e18, "")


def test_a_bracket_unit_after_a_latex_space():
    assert P.quantity("9.90\\ [m/s]") == (9.9, "meter / second")


def test_latex_backslash_space_between_a_number_and_its_unit():
    assert P.expr_text("(2.0\\ \\text{m})") == "( 2.0 * m )"


def test_explanation_names_the_same_unknown_name_on_every_run():
    # two names that are neither units nor symbols: the reason must not depend on set order (hash seed)
    import subprocess
    import sys
    prog = ("from verifiers.step_checks import _eval_units\n"
            "from verifiers import step_reading as P\n"
            "try:\n    _eval_units('3*qq2 + zz', {})\nexcept P.ExprError as e:\n    print(e)\n")
    outs = {subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                           env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
    assert len(outs) == 1 and "unknown name" in next(iter(outs)), outs
