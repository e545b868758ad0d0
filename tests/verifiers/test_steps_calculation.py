"""Steps 5 and 6 (substitution, calculation) of the step verifier: the numbers put into the equation and worked out.

Accepted: a value substituted with its unit (`(54 km/h)^2`), an intermediate result worked out in the substitution
step, the sine of a bare number read in degrees where the angle was given so, a result stated in words ('it comes
to 3.0 A') or as numbers alone (the last quantity's), a result inside a sentence, a result rounded to the figures
the data have.

Flagged: a wrong number put into the equation (CE at step 5, also a value substituted in non-SI units as it
stands), a wrong result however it is written (CE at step 6), a 'rounding' that is none or has one figure.

The table's rows are (question, solution, reference, expected, reason, origin): _step_problems.py says how a row
is read.
"""
import pytest

from _step_problems import (ANY, CART_FROM_REST, CRATE, DE_BROGLIE, DOOR, KICK, OHM_12V, OK, VAN, BALL, Problem, S,
                            check)
from verifiers.steps import verify

KINETIC = Problem("A 500 g ball moves at 36 km/h. What is its kinetic energy?", S(
    problem_analysis="The problem asks for the kinetic energy (K).", principle="Kinetic energy of a moving body.",
    governing_equation="K = m*v**2/2", value_identification="m = 0.5 kg\nv = 10 m/s",
    substitution="K = 0.5*10**2/2", calculation="K = 25 J", final_answer="\\boxed{25 J}"))

CAR_KE = Problem("A 1200 kg car moves at 54 km/h. What is its kinetic energy?", S(
    problem_analysis="Find the kinetic energy K.", principle="Kinetic energy is one half m v squared.",
    governing_equation="K = 0.5*m*v^2", value_identification="m = 1200 kg\nv = 15 m/s",
    substitution="K = 0.5*1200*15^2", calculation="K = 135000 J", final_answer="\\boxed{135000 J}"))

SUBSTITUTION = [
    # a value substituted in non-SI units gets a verdict
    KINETIC.row("a value substituted in non-SI units as it stands", (5, "CE"), "round2", solution=S(
        problem_analysis="We need the kinetic energy K.", principle="Kinetic energy of a moving body.",
        governing_equation="K = \\frac{1}{2} m v^2", value_identification="m = 500 g\nv = 36 km/h",
        substitution="K = \\frac{1}{2} \\cdot 500 \\cdot 36^2", calculation="K = 324000 J",
        final_answer="\\boxed{324000 J}")),
    CAR_KE.row("a value substituted with its unit is that quantity", OK, "round4",
               value_identification="m = 1200 kg\nv = 54 km/h", substitution="K = 0.5*1200*(54 km/h)^2",
               calculation="K = 600*15^2\nK = 135000 J"),
    CAR_KE.row("a value substituted with its unit, a bad conversion", (6, "CE"), "round4",
               value_identification="m = 1200 kg\nv = 54 km/h", substitution="K = 0.5*1200*(54 km/h)^2",
               calculation="K = 600*5.4^2\nK = 17496 J", final_answer="\\boxed{17496 J}"),
    CRATE.row("an intermediate result worked out in the substitution step is its calculation", OK, "round5",
              substitution="W = 50*6.0 = 300 J; P = 300/4.0", calculation="P = 75 W"),
    CRATE.row("a wrong intermediate result in the substitution step", ((5, 6), "CE"), "round5",
              substitution="W = 50*6.0 = 30 J; P = 30/4.0", calculation="P = 7.5 W", final_answer="\\boxed{7.5 W}"),
    KICK.row("the sine of a bare number read in degrees", OK, "round5", substitution="R = 225 * sin 80 / 9.8",
             calculation="R ≈ 23 m", final_answer="\\boxed{23 m}"),
    KICK.row("the sine of a bare number in parentheses, worked out", OK, "round5",
             substitution="R = 225 * sin(80) / 9.8", calculation="R = 225*sin(80)/9.8 = 22.6 m"),
    KICK.row("the sine of the wrong angle", (5, ANY), "round5", substitution="R = 225 * sin 40 / 9.8",
             calculation="R = 14.8 m", final_answer="\\boxed{14.8 m}"),
]

CALCULATION = [
    CART_FROM_REST.row("a wrong result inside a sentence is still found", (6, ANY), "round4",
                       calculation="Working it out, d = 0.5*2.0*9.0 = 18 m, which is the distance",
                       final_answer="\\boxed{18 m}"),
    *[DE_BROGLIE.row(f"a result rounded to its written figures: {why}", (want, ANY), "round4", calculation=calc,
                     final_answer=box)
      for calc, box, want, why in [
          ("lam = 2.424e-10 m\nlam = 2.4e-10 m", "\\boxed{2.4e-10 m}", 0, "two figures, as the data: kept"),
          ("lam = 2.4e-10 m", "\\boxed{2.4e-10 m}", 0, "two figures alone"),
          ("lam = 2.5e-10 m", "\\boxed{2.5e-10 m}", 6, "not a rounding of 2.424"),
          ("lam = 2e-10 m", "\\boxed{2e-10 m}", 6, "one figure is not a report")]],
    VAN.row("a bare result in the calculation step is the last quantity's", OK, "round5",
            calculation="18000 kg m/s"),
    VAN.row("a wrong bare result", (6, ANY), "round5", calculation="1800 kg m/s",
            final_answer="\\boxed{1800 kg m/s}"),
    *[OHM_12V.row(f"a result stated in words: {calc}", OK, "round5", calculation=calc)
      for calc in ["The ratio is 12/4.0, so the current is 3.0 A.", "It comes to 3.0 A", "Dividing gives 3.0 A."]],
    OHM_12V.row("a wrong result stated in words is a calculation error", (6, ANY), "round5",
                calculation="Dividing gives 4.0 A.", final_answer="\\boxed{4.0 A}"),
    BALL.row("a result written as numbers alone is the last quantity's", OK, "round6",
             calculation="m v^2 = 48 J, and 48 J / 2 = 24 J"),
    BALL.row("a wrong result written as numbers alone", (6, ANY), "round6",
             calculation="m v^2 = 48 J, and 48 J / 2 = 28 J", final_answer="\\boxed{28 J}"),
    DOOR.row("a function of a symbol computed on the way (sin(theta) = 1)", OK, "round6",
             calculation="sin(theta) = 1, tau = 40 N m"),
    DOOR.row("a function of a symbol on the way, then a wrong result", (6, ANY), "round6",
             calculation="sin(theta) = 1, tau = 1 N m", final_answer="\\boxed{1 N m}"),
]


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", SUBSTITUTION)
def test_the_substitution(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", CALCULATION)
def test_the_calculation(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


def test_a_function_of_a_symbol_on_the_left_is_no_symbol():
    from verifiers import step_reading as P
    assert P.lhs_name("sin θ2") is None and P.lhs_name("\\cos\\theta") is None and P.lhs_name("ln N") is None
    assert P.lhs_name("The angle is θ2") == "theta2"
    assert verify(DOOR.question, DOOR.with_(calculation="sin(theta) = 1, tau = 40 N m"), DOOR.reference).valid
