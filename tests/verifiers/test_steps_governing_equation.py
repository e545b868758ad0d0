"""Step 3 (governing_equation) of the step verifier: the law as an equation.

Accepted: the law in its natural form (`h = 1/2 g t^2`, `0 = v0^2 - 2 a d`, `IR = V`), then or instead solved for
the asked quantity (on a new line, after 'so'/'hence', after an arrow `=>`, `⇒`, `\\implies`); a general statement
of the law beside the working equation (`L_i = L_f`); a law for any index used at two (`f_n = n v / 2L`), with a
unit inside it; several equations in dependency order; a value of the problem restated beside the law (`with θ =
90° so τ = r F`); the law written with the values put in, when the units beside the numbers make the asked kind;
the unknown on the right-hand side.

Flagged (CM at step 3): a wrong law in any of these forms (also when its solved form is right), a tautology
(`v = v`, `a = m*a/m`), the answer written as the law (`F = 0.40 N`), values put in whose units make another kind.

The table's rows are (question, solution, reference, expected, reason, origin): _step_problems.py says how a row
is read.
"""
import pytest

from _step_problems import (BALLS, CAR, CART_4KG, DOOR, LENS, OHM_12V, OK, ROD, ROD_IN_FIELD, SKATER, STRING, S,
                            check, heldout_row, row, tmpl, with_parts)
from verifiers import seventag
from verifiers.steps import verify

# --- the governing equation in its natural form, then solved for the asked quantity (round two) -------------------

FALL_Q = ("A stone is dropped from rest from a height of 20 m. How long does it take to reach the ground? "
          "Use g = 9.8 m/s^2.")
FALL = S(problem_analysis="We need the time t the stone takes to fall the height h = 20 m.",
         principle="Free fall from rest with constant acceleration g.",
         governing_equation="h = \\frac{1}{2} g t^2",
         value_identification="h = 20 m\ng = 9.8 m/s^2",
         substitution="t = \\sqrt{2 \\cdot 20 / 9.8}",
         calculation="t = 2.020 s",
         final_answer="\\boxed{2.02 s}")
FALL_REF = S(problem_analysis="The problem asks for the fall time (t). Given: the height h, g.",
             principle="Free fall from rest with constant acceleration g.",
             governing_equation="t = sqrt(2*h/g)", value_identification="h = 20 m\ng = 9.8 m/s^2",
             substitution="t = sqrt(2*20/9.8)", calculation="t = 2.020 s", final_answer="\\boxed{2.020 s}")
FALL_BOTH = FALL.replace("h = \\frac{1}{2} g t^2", "h = \\frac{1}{2} g t^2\nt = \\sqrt{2h/g}")

BRAKE_Q = "A car at 20 m/s brakes to rest with a deceleration of 4 m/s^2. How far does it travel while braking?"
BRAKE_REF = S(problem_analysis="The problem asks for the braking distance (d).",
              principle="Kinematics of constant acceleration.", governing_equation="d = v0**2/(2*a)",
              value_identification="v0 = 20 m/s\na = 4 m/s^2", substitution="d = 20**2/(2*4)", calculation="d = 50 m",
              final_answer="\\boxed{50 m}")
BRAKE = S(problem_analysis="Find the distance d covered until the car stops.",
          principle="Uniformly accelerated motion: v^2 = v_0^2 - 2 a d.",
          governing_equation="0 = v_0^2 - 2 a d", value_identification="v_0 = 20 m/s\na = 4 m/s^2",
          substitution="d = \\frac{20^2}{2 \\cdot 4}", calculation="d = 50 m", final_answer="\\boxed{50 m}")


def _circular_equation():
    """A circular equation (`a = m*a/m`) with the result put in as its substitution passed to step 5."""
    p = tmpl("dyn_push_with_friction")
    ge = seventag.parse(p.solution).get("governing_equation").content
    sub = seventag.parse(p.solution).get("substitution").content
    sol = p.solution.replace(ge, "a = m*a/m").replace(
        sub, "a = " + seventag.parse(p.solution).get("calculation").content.split("=")[1].split()[0])
    return row(p.question, sol, p.solution, (3, "CM"), "a circular equation", "round2")


LEVELS_Q = ("An electron in a box has levels E_n = n^2 * 0.38 eV. What energy does it give off falling from n = 3 "
            "to n = 2?")
LEVELS_REF = S(problem_analysis="Find the emitted energy E.", principle="Energy levels of a particle in a box.",
               governing_equation="E = (9 - 4)*E1", value_identification="E1 = 0.38 eV",
               substitution="E = 5*0.38", calculation="E = 1.90 eV", final_answer="\\boxed{1.90 eV}")
LEVELS = with_parts(LEVELS_REF, governing_equation="E_n = 0.38 eV * n^2; E = E_3 - E_2",
                    value_identification="n_i = 3, n_f = 2",
                    substitution="E_3 = 9*0.38 = 3.42 eV; E_2 = 4*0.38 = 1.52 eV; E = 3.42 - 1.52",
                    calculation="E = 1.90 eV")

STRING_OK = STRING.with_(governing_equation="f_n = n v / (2 L); Delta_f = f_3 - f_2",
                         value_identification="v = 100 m/s, L = 0.50 m",
                         substitution="f_3 = 3*100/(2*0.50) = 300 Hz; f_2 = 2*100/(2*0.50) = 200 Hz; "
                                      "Delta_f = 300 - 200", calculation="Delta_f = 100 Hz")
ROD_CHAIN = ROD.with_(governing_equation="L = L0 / gamma, gamma = 1/sqrt(1 - v^2/c^2)",
                      substitution="gamma = 1/sqrt(1 - 0.36) = 1/0.80; L = 4.0 * 0.80", calculation="L = 3.2 m")
ROD_B_BESIDE = ROD_IN_FIELD.with_(governing_equation="F = B I L sin(theta), theta = 90 degrees",
                                  value_identification="B = 0.20 T, I = 4.0 A, L = 0.50 m",
                                  substitution="F = 0.20 * 4.0 * 0.50 * 1")
CAR_PUT_IN = CAR.with_(governing_equation="s = 28 m/s*43 s", value_identification="speed = 28 m/s\ntime = 43 s",
                       substitution="s = 28 m/s*43 s", calculation="s = 1136 m", final_answer="\\boxed{1136 m}")


def _lens(gov):
    return LENS.with_(governing_equation=gov, substitution="1/v = 1/20 - 1/60", calculation="1/v = 1/30, v = 30 cm")


def _lens_wrong(gov):
    return LENS.with_(governing_equation=gov.replace("1/f - 1/u", "1/f + 1/u").replace("u - f", "u + f"),
                      substitution="1/v = 1/20 + 1/60", calculation="1/v = 4/60, v = 15 cm",
                      final_answer="\\boxed{15 cm}")


def _door_wrong(gov):
    return DOOR.with_(governing_equation=gov.replace("r F sin", "r F cos").replace("tau = r F\n", "").replace(
        ", so tau = r F", ""))


def _cart(sub, calc, final, gov="½ m v² = K"):
    return S(problem_analysis="The kinetic energy K of the cart.", principle="Kinetic energy of a moving body.",
             governing_equation=gov, value_identification="m = 4.0 kg\nv = 3.0 m/s",
             substitution=sub, calculation=calc, final_answer=final)


LENS_FORMS = ["1/f = 1/u + 1/v, so 1/v = 1/f - 1/u", "1/f = 1/u + 1/v so v = f u/(u - f)",
              "With u and f known the lens law is 1/v = 1/f - 1/u"]
DOOR_FORMS = ["tau = r F sin(theta), where theta = 90 degrees, so tau = r F",
              "tau = r F sin(theta), with theta = 90°\ntau = r F"]

NATURAL = [
    # 'problem_analysis takes t for the asked quantity h' on a solution identical to its reference
    row(FALL_Q, FALL, FALL, OK, "the natural form, identical to its reference", "round2"),
    row(FALL_Q, FALL, FALL_REF, OK, "the natural form against a solved reference", "round2"),
    row(FALL_Q, FALL_BOTH, FALL_REF, OK, "the natural form then the solved form, against a solved reference",
        "round2"),
    row(FALL_Q, FALL_BOTH, FALL, OK, "the natural form then the solved form, against a natural reference", "round2"),
    row(BRAKE_Q, BRAKE, BRAKE_REF, OK, "the natural form with an expression on the left", "round2"),
    row(FALL_Q, FALL.replace("h = \\frac{1}{2} g t^2", "h = g t^2").replace("2 \\cdot 20 / 9.8", "20 / 9.8")
        .replace("2.020 s", "1.429 s").replace("2.02 s", "1.43 s"), FALL_REF, (3, "CM"),
        "the natural form of a wrong law is still wrong at step 3", "round2"),
    row(FALL_Q, FALL.replace("2 \\cdot 20 / 9.8", "2 \\cdot 20 / 9.1"), FALL_REF, (5, "CE"),
        "a substitution slip after the natural form is at step 5", "round2"),
    *[OHM_12V.row(f"the natural form, then solved: {law}", OK, "round5", governing_equation=law)
      for law in ["IR = V, so I = V/R", "V = IR; then I = V/R", "IR = V, hence I = V/R"]],
    OHM_12V.row("a wrong natural form before its solved form is still a wrong law", (3, "CM"), "round5",
                governing_equation="I = VR, so I = V/R"),
    *[BALLS.row(f"the law and its solved form joined by {arrow}", OK, "round5",
                governing_equation=f"m_1 u_1 = (m_1 + m_2) v  {arrow}  v = m_1 u_1/(m_1 + m_2)",
                value_identification="m_1 = 3.0 kg, u_1 = 4.0 m/s, m_2 = 1.0 kg")
      for arrow in ["=>", "⇒", "\\Rightarrow", "\\implies", "→"]],
    # the unknown written on the right-hand side (before heldout6:w004: test_steps_comprehension.py's
    # test_a_verdict_does_not_depend_on_what_was_verified_before)
    heldout_row("heldout7:x014", OK, "the unknown on the right"),
    CART_4KG.row("the unknown on the right", OK, "round7",
                 solution=_cart("½ × 4.0 kg × (3.0 m/s)² = K", "2.0 × 9.0 J = 18 J = K", "\\boxed{18 J}")),
    CART_4KG.row("the unknown on the right, a slip in the calculation", (6, "CE"), "round7",
                 solution=_cart("½ × 4.0 kg × (3.0 m/s)² = K", "2.0 × 9.0 J = 36 J = K", "\\boxed{36 J}")),
    CART_4KG.row("the unknown on the right, a wrong law", (3, "CM"), "round7",
                 solution=_cart("4.0 kg × (3.0 m/s)² = K", "36 J = K", "\\boxed{36 J}", gov="m v² = K")),
    *[heldout_row(f"heldout6:{i}", OK, "the law in textbook form, then rearranged") for i in ["w004", "w018", "w037"]],
    *[LENS.row(f"the law then rearranged: {gov}", OK, "round6", solution=_lens(gov)) for gov in LENS_FORMS],
    *[LENS.row(f"a wrong rearrangement: {gov}", (3, "CM"), "round6", solution=_lens_wrong(gov))
      for gov in LENS_FORMS],
]

BESIDE = [
    # a law stated in general symbols beside the working equations
    SKATER.row("L_initial = L_final beside the solved equation", OK, "round4",
               governing_equation="L_initial = L_final\nw2 = I1*w1/I2", substitution="w2 = 2.4*3.0/1.2"),
    SKATER.row("L_i = L_f beside the balance", OK, "round4", governing_equation="L_i = L_f\nI1*w1 = I2*w2",
               substitution="2.4*3.0 = 1.2*w2"),
    # a law for any index, used at two; with a unit inside
    STRING.row("a law for any index used at two indices", OK, "round5", solution=STRING_OK),
    STRING.row("a wrong law for any index", (3, "CM"), "round5", solution=with_parts(
        STRING_OK, governing_equation="f_n = n v / L; Delta_f = f_3 - f_2",
        substitution="f_3 = 3*100/0.50 = 600 Hz; f_2 = 2*100/0.50 = 400 Hz; Delta_f = 600 - 400",
        calculation="Delta_f = 200 Hz", final_answer="\\boxed{200 Hz}")),
    row(LEVELS_Q, LEVELS, LEVELS_REF, OK, "a law with a unit inside at two indices, its results in that unit",
        "round5"),
    row(LEVELS_Q, with_parts(LEVELS, calculation="E = 1.80 eV", final_answer="\\boxed{1.80 eV}"), LEVELS_REF,
        (6, "CE"), "a law with a unit inside, then a slip in the calculation", "round5"),
    # equations in dependency order
    ROD.row("equations taken in dependency order", OK, "round5", solution=ROD_CHAIN),
    ROD.row("a wrong equation in a chain", (3, "CM"), "round5",
            solution=with_parts(ROD_CHAIN, governing_equation="L = L0 * gamma, gamma = 1/sqrt(1 - v^2/c^2)")),
    # a value of the problem stated beside the law
    ROD_IN_FIELD.row("a given value stated beside the law is a value, not a law", OK, "round5",
                     solution=ROD_B_BESIDE),
    ROD_IN_FIELD.row("a given value beside the law, then a slip in the calculation", (6, "CE"), "round5",
                     solution=with_parts(ROD_B_BESIDE, calculation="F = 4.0 N", final_answer="\\boxed{4.0 N}")),
    heldout_row("heldout6:w028", OK, "an angle restated beside the law"),
    heldout_row("heldout6:w049", (5, "CE"), "an angle restated beside the law, a substitution slip"),
    *[DOOR.row(f"a value restated in the equation step: {gov!r}", OK, "round6", governing_equation=gov)
      for gov in DOOR_FORMS],
    *[DOOR.row(f"a wrong law with a value restated: {gov!r}", (3, "CM"), "round6", solution=_door_wrong(gov))
      for gov in DOOR_FORMS],
]

NO_LAW = [
    _circular_equation(),
    ROD_IN_FIELD.row("the answer written as the law is no law", (3, "CM"), "round5", governing_equation="F = 0.40 N"),
    # the law written with the values put in: the arithmetic slip, not an unidentified `m`
    CAR.row("the law written with the values put in, then a slip", (6, "CE"), "round6", solution=CAR_PUT_IN),
    # the units written beside the numbers must make a distance: 28 m * 43 s is no law
    CAR.row("values put in whose units make no distance", (3, "CM"), "round6",
            solution=with_parts(CAR_PUT_IN, governing_equation="s = 28 m*43 s")),
    CAR.row("the answer alone is still no law", (3, "CM"), "round6", governing_equation="s = 1204 m"),
]


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", NATURAL)
def test_the_law_in_its_natural_form_and_solved(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", BESIDE)
def test_more_than_one_relation_in_the_equation_step(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", NO_LAW)
def test_no_law_is_no_governing_equation(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


def test_lambda_written_out_does_not_escape_the_law_check():
    """A line writing `lambda` (a Python keyword) was unreadable, so a wrong wave law passed to step 6."""
    p = tmpl("wave_wavelength")
    d = {s.tag: s.content for s in seventag.parse(p.solution).steps}
    v_, f_ = seventag.parse(p.solution).get("value_identification").content.splitlines()[:2]
    d.update(governing_equation="lambda = v*f",
             substitution=f"lambda = {v_.split('=')[1].split()[0]}*{f_.split('=')[1].split()[0]}")
    vv = float(v_.split("=")[1].split()[0]) * float(f_.split("=")[1].split()[0])
    d.update(calculation=f"lambda = {vv:.4g} m", final_answer=f"\\boxed{{{vv:.4g} m}}")
    d.update(problem_analysis="We need the wavelength lambda.")
    v = verify(p.question, seventag.render(d), p.solution)
    assert v.valid and v.first_error in (2, 3) and v.error_class == "CM", v

