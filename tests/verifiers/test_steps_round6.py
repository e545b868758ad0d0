"""Step verifier, round six (issue 32): the classes of misses of the round-6 held-out sets (heldout/round6,
now development data). Each class has the held-out item that showed it, a case of our own in another phrasing,
and a wrong solution in the same style that must still be caught. Every test failed before its fix.
"""
import json
import pathlib

import pytest

from verifiers import seventag
from verifiers import step_reading as P
from verifiers.steps import verify

H6 = pathlib.Path(__file__).resolve().parents[2] / "heldout" / "round6" / "solutions_r6.jsonl"


def _h6(item: str) -> dict:
    for line in H6.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["id"] == item:
            return r
    raise KeyError(item)


def _gold(item: str):
    r = _h6(item)
    v = verify(r["question"], r["solution"], r["reference"])
    return (v.first_error, v.error_class if v.first_error else None), (r["first_error"], r["error_class"]), v


def S(**parts) -> str:
    return seventag.render(parts)


def _with(ref: str, **parts) -> str:
    p = seventag.parse(ref)
    return S(**{t: parts.get(t, p.get(t).content.strip()) for t in seventag.TAGS})


def _first(q, sol, ref):
    v = verify(q, sol, ref)
    assert v.valid, v
    return v.first_error


Q_FRIC = "A 5.0 kg box slides on a level floor; the coefficient of kinetic friction is 0.40. What is the friction force? (g = 9.8 m/s^2)"
REF_FRIC = S(problem_analysis="Find the kinetic friction force f.", principle="Kinetic friction: f = mu_k N with N = m g.",
             governing_equation="f = mu_k m g", value_identification="mu_k = 0.40\nm = 5.0 kg\ng = 9.8 m/s^2",
             substitution="f = 0.40 * 5.0 * 9.8", calculation="f = 19.6 N", final_answer="\\boxed{19.6 N}")

Q_KE = "A 3.0 kg ball moves at 4.0 m/s. What is its kinetic energy?"
REF_KE = S(problem_analysis="Find the kinetic energy K.", principle="Kinetic energy of a moving body.",
           governing_equation="K = m v^2 / 2", value_identification="m = 3.0 kg\nv = 4.0 m/s",
           substitution="K = 3.0 * 4.0^2 / 2", calculation="K = 24 J", final_answer="\\boxed{24 J}")


# --- (b) list markers, Unicode and LaTeX notation ------------------------------------------------------

@pytest.mark.parametrize("item", ["w023", "w030", "w002", "w017", "w019"])
def test_heldout_correct_notation_is_kept(item):
    got, gold, v = _gold(item)
    assert got == (0, None), v


@pytest.mark.parametrize("item", ["w056", "w064", "w072", "w051", "w085"])
def test_heldout_slip_in_that_notation_is_placed_right(item):
    got, gold, v = _gold(item)
    assert got == gold, v


@pytest.mark.parametrize("values", ["* m = 3.0 kg\n* v = 4.0 m/s", "1. m = 3.0 kg\n2. v = 4.0 m/s",
                                    "• m = 3.0 kg\n• v = 4.0 m/s", "(a) m = 3.0 kg\n(b) v = 4.0 m/s"])
def test_bulleted_or_numbered_values_are_read(values):
    assert _first(Q_KE, _with(REF_KE, value_identification=values), REF_KE) == 0


def test_bulleted_wrong_value_is_still_caught():
    sol = _with(REF_KE, value_identification="- m = 30 kg\n- v = 4.0 m/s", substitution="K = 30 * 4.0^2 / 2",
                calculation="K = 240 J", final_answer="\\boxed{240 J}")
    assert _first(Q_KE, sol, REF_KE) == 4


@pytest.mark.parametrize("eq, vals", [("f = μk m g", "μk = 0.40, m = 5.0 kg, g = 9.8 m/s^2"),
                                      ("f = \\mu_k m g", "\\mu_k = 0.40, m = 5.0 kg, g = 9.8 m/s^2"),
                                      ("f = μk·m·g", "μk = 0.40\nm = 5.0 kg\ng = 9.8 m/s^2")])
def test_friction_coefficient_written_mu_k_is_one_symbol(eq, vals):
    assert P.expr_text("μk m g") == P.expr_text("mu_k m g")
    assert _first(Q_FRIC, _with(REF_FRIC, governing_equation=eq, value_identification=vals), REF_FRIC) == 0
    bad = _with(REF_FRIC, governing_equation=eq, value_identification=vals, substitution="f = 0.40 * 5.0 * 9.8",
                calculation="f = 1.96 N", final_answer="\\boxed{1.96 N}")
    assert _first(Q_FRIC, bad, REF_FRIC) == 6


def test_microseconds_are_not_a_friction_coefficient():
    assert P.expr_text("5 μs") != P.expr_text("5 mu_s")


@pytest.mark.parametrize("sub", ["K = 3.0 ⁄ 2 × 4.0²", "K = 3.0 ∕ 2 · 4.0^2", "K = 3.0 × 4.0² ÷ 2"])
def test_unicode_division_signs_are_divisions(sub):
    sol = _with(REF_KE, governing_equation="K = m·v² ⁄ 2", substitution=sub)
    assert _first(Q_KE, sol, REF_KE) == 0
    bad = _with(REF_KE, governing_equation="K = m·v² ⁄ 2", substitution=sub, calculation="K = 2.4 J",
                final_answer="\\boxed{2.4 J}")
    assert _first(Q_KE, bad, REF_KE) == 6


def test_middle_dot_parts_two_values_but_not_a_product():
    assert P.assignments("m = 3.0 kg · v = 4.0 m/s") == ["m = 3.0 kg", "v = 4.0 m/s"]
    assert P.assignments("P = F · v = 20 W") == ["P = F · v = 20 W"]
    assert _first(Q_KE, _with(REF_KE, value_identification="m = 3.0 kg · v = 4.0 m/s"), REF_KE) == 0


def test_latex_thin_space_comma_is_no_separator():
    line = "\\Delta t = \\gamma\\,\\Delta t_0 = \\frac{\\Delta t_0}{\\sqrt{1 - v^2/c^2}}"
    assert P.assignments(line) == [line]
    sol = _with(REF_KE, governing_equation="K = \\tfrac{1}{2}\\,m\\,v^2 = \\frac{m\\,v^2}{2}")
    assert _first(Q_KE, sol, REF_KE) == 0
    bad = _with(REF_KE, governing_equation="K = \\tfrac{1}{2}\\,m\\,v = \\frac{m\\,v}{2}",
                substitution="K = 3.0 * 4.0 / 2", calculation="K = 6 J", final_answer="\\boxed{6 J}")
    assert _first(Q_KE, bad, REF_KE) == 3


# --- (a) givens stated in prose or in the analysis ---------------------------------------------------------

@pytest.mark.parametrize("item", ["w003", "w010"])
def test_heldout_givens_in_prose_are_found(item):
    got, gold, v = _gold(item)
    assert got == (0, None), v


def test_heldout_misread_value_in_prose_is_still_caught():
    got, gold, v = _gold("w086")  # the value step says 0.2 m^3 where the analysis and problem say 0.02
    assert got == gold == (4, "MC"), v


@pytest.mark.parametrize("values", ["The ball's mass is 3.0 kilograms and it moves at 4.0 m/s.",
                                    "mass 3.0 kg; speed 4.0 m/s",
                                    "We use the mass (3.0 kg) and the speed (4.0 m/s) from the problem."])
def test_values_named_in_words_are_identified(values):
    assert _first(Q_KE, _with(REF_KE, value_identification=values), REF_KE) == 0


def test_a_wrong_value_named_in_words_is_caught():
    sol = _with(REF_KE, value_identification="The ball's mass is 30 kg and it moves at 4.0 m/s.",
                substitution="K = 30 * 4.0^2 / 2", calculation="K = 240 J", final_answer="\\boxed{240 J}")
    assert _first(Q_KE, sol, REF_KE) == 4


def test_a_symbol_no_words_give_a_value_for_is_still_unidentified():
    sol = _with(REF_KE, value_identification="The ball's mass is 3.0 kg.")
    v = verify(Q_KE, sol, REF_KE)
    assert v.first_error == 4 and "never identified" in v.explanation, v


# --- (c) the law in textbook form then rearranged; results without `quantity =` ---------------------------

@pytest.mark.parametrize("item", ["w004", "w018", "w037"])
def test_heldout_law_then_rearranged_is_kept(item):
    got, gold, v = _gold(item)
    assert got == (0, None), v


def test_heldout_wrong_box_after_prose_working_is_at_step_7():
    got, gold, v = _gold("w089")
    assert got == gold == (7, "CE"), v


Q_LENS = "An object stands 60 cm in front of a converging lens of focal length 20 cm. Where is the image?"
REF_LENS = S(problem_analysis="Find the image distance v.", principle="Thin lens equation.",
             governing_equation="1/f = 1/u + 1/v", value_identification="f = 20 cm\nu = 60 cm",
             substitution="v = 1/(1/20 - 1/60)", calculation="v = 30 cm", final_answer="\\boxed{30 cm}")


@pytest.mark.parametrize("gov", ["1/f = 1/u + 1/v, so 1/v = 1/f - 1/u", "1/f = 1/u + 1/v so v = f u/(u - f)",
                                 "With u and f known the lens law is 1/v = 1/f - 1/u"])
def test_law_then_rearranged_forms(gov):
    sol = _with(REF_LENS, governing_equation=gov, substitution="1/v = 1/20 - 1/60", calculation="1/v = 1/30, v = 30 cm")
    assert _first(Q_LENS, sol, REF_LENS) == 0
    bad = _with(REF_LENS, governing_equation=gov.replace("1/f - 1/u", "1/f + 1/u").replace("u - f", "u + f"),
                substitution="1/v = 1/20 + 1/60", calculation="1/v = 4/60, v = 15 cm", final_answer="\\boxed{15 cm}")
    assert _first(Q_LENS, bad, REF_LENS) == 3


def test_result_written_as_numbers_alone_is_the_last_quantitys():
    sol = _with(REF_KE, calculation="m v^2 = 48 J, and 48 J / 2 = 24 J")
    assert _first(Q_KE, sol, REF_KE) == 0
    bad = _with(REF_KE, calculation="m v^2 = 48 J, and 48 J / 2 = 28 J", final_answer="\\boxed{28 J}")
    assert _first(Q_KE, bad, REF_KE) == 6


def test_a_count_in_the_box_is_a_number():
    assert P.quantity("100 nuclei") == (100.0, "")
    assert P.quantity("6.2e18 electrons") == (6.2e18, "")


Q_CAR = "A car drives at a constant speed of 28 m/s for 43 s. How far does it go?"
REF_CAR = S(problem_analysis="Find the distance travelled (s).", principle="Uniform motion: distance = speed x time.",
            governing_equation="s = v*t", value_identification="v = 28 m/s\nt = 43 s", substitution="s = 28*43",
            calculation="s = 1204 m", final_answer="\\boxed{1204 m}")


def test_law_written_with_the_values_put_in():
    sol = _with(REF_CAR, governing_equation="s = 28 m/s*43 s", value_identification="speed = 28 m/s\ntime = 43 s",
                substitution="s = 28 m/s*43 s", calculation="s = 1136 m", final_answer="\\boxed{1136 m}")
    assert _first(Q_CAR, sol, REF_CAR) == 6  # the arithmetic slip, not an unidentified `m`
    # the units written beside the numbers must make a distance: 28 m * 43 s is no law
    bad = _with(sol, governing_equation="s = 28 m*43 s")
    assert _first(Q_CAR, bad, REF_CAR) == 3
    # the answer alone is still no law
    assert _first(Q_CAR, _with(REF_CAR, governing_equation="s = 1204 m"), REF_CAR) == 3


def test_a_given_put_under_the_asked_symbol_is_a_misread_value():
    sol = _with(REF_CAR, governing_equation="s = 28 m/s*43 s", value_identification="s = 28 m/s",
                substitution="s = 28 m/s", calculation="s = 1204 m")
    v = verify(Q_CAR, sol, REF_CAR)
    assert v.first_error == 4 and "kind of s" in v.explanation, v


# --- (d) a law by its discoverer's name; an idealisation of the setting ---------------------------------------

def test_heldout_boyle_names_the_isothermal_ideal_gas():
    got, gold, v = _gold("w016")
    assert got == (0, None), v
    got, gold, v = _gold("w093")  # the same principle with a conversion slip of a given: step 4
    assert got == gold == (4, "MC"), v


@pytest.mark.parametrize("principle", ["Boyle's law.", "The ideal gas law at constant temperature: P V = n R T with T fixed.",
                                       "Isothermal process of an ideal gas: the temperature stays constant."])
def test_isothermal_gas_law_synonyms(principle):
    ok, why = P.same_law(principle, "Boyle's law (isothermal ideal gas).")
    assert ok, why


@pytest.mark.parametrize("principle", ["Adiabatic compression of an ideal gas.", "Charles's law at constant pressure.",
                                       "The ideal gas law."])
def test_another_gas_law_is_still_wrong(principle):
    ok, why = P.same_law(principle, "Boyle's law (isothermal ideal gas).")
    assert not ok, why


def test_a_reference_that_names_constant_temperature_as_its_setting():
    ok, why = P.same_law("Latent heat of fusion.", "Latent heat: a phase change at constant temperature.")
    assert ok, why
    ok, why = P.same_law("Specific heat capacity.", "Latent heat: a phase change at constant temperature.")
    assert not ok, why


# --- (f) a value restated beside the law (`with θ = 90° so τ = r F`) ----------------------------------------

def test_heldout_angle_restated_beside_the_law():
    got, gold, v = _gold("w028")
    assert got == (0, None), v
    got, gold, v = _gold("w049")  # the same layout with a substitution slip: step 5
    assert got == gold, v


Q_TQ = "A 50 N force acts at right angles to a door 0.80 m from its hinge. What torque does it produce?"
REF_TQ = S(problem_analysis="Find the torque tau.", principle="Torque is r F sin(theta).",
           governing_equation="tau = r F sin(theta)", value_identification="r = 0.80 m\nF = 50 N\ntheta = 90°",
           substitution="tau = 0.80 * 50 * sin(90°)", calculation="tau = 40 N m", final_answer="\\boxed{40 N m}")


@pytest.mark.parametrize("gov", ["tau = r F sin(theta), where theta = 90 degrees, so tau = r F",
                                 "tau = r F sin(theta), with theta = 90°\ntau = r F"])
def test_value_restated_in_the_equation_step(gov):
    assert _first(Q_TQ, _with(REF_TQ, governing_equation=gov), REF_TQ) == 0
    bad = _with(REF_TQ, governing_equation=gov.replace("r F sin", "r F cos").replace("tau = r F\n", "").replace(
        ", so tau = r F", ""))
    assert _first(Q_TQ, bad, REF_TQ) == 3


# --- (g) a function of the asked quantity computed on the way (`sin θ2 = 0.333`) -------------------------------

def test_heldout_sine_of_the_angle_is_not_the_angle():
    got, gold, v = _gold("w036")
    assert got == (0, None), v
    got, gold, v = _gold("w065")  # boxes the sine as the angle: step 7
    assert got == gold == (7, "CE"), v


def test_function_of_a_symbol_on_the_left_is_no_symbol():
    assert P.lhs_name("sin θ2") is None and P.lhs_name("\\cos\\theta") is None and P.lhs_name("ln N") is None
    assert P.lhs_name("The angle is θ2") == "theta2"
    sol = _with(REF_TQ, calculation="sin(theta) = 1, tau = 40 N m")
    assert _first(Q_TQ, sol, REF_TQ) == 0
    bad = _with(REF_TQ, calculation="sin(theta) = 1, tau = 1 N m", final_answer="\\boxed{1 N m}")
    assert _first(Q_TQ, bad, REF_TQ) == 6


# --- (e) the answer in another correct unit (eV and J), a conversion stated among the values, a product given ---

def test_heldout_ev_worked_in_joules():
    got, gold, v = _gold("w015")
    assert got == (0, None), v
    got, gold, v = _gold("w079")  # `h f = 4.0 eV` given as one quantity; the box in J for a result in eV: step 7
    assert got == gold == (7, "CE"), v


Q_PE = "Light of photon energy 5.0 eV falls on a metal of work function 3.0 eV. What is the largest kinetic energy of the electrons?"
REF_PE = S(problem_analysis="Find the maximum kinetic energy K.", principle="Einstein's photoelectric equation.",
           governing_equation="K = E - phi", value_identification="E = 5.0 eV\nphi = 3.0 eV",
           substitution="K = 5.0 - 3.0", calculation="K = 2.0 eV", final_answer="\\boxed{2.0 eV}")


def test_conversion_among_the_values_and_a_bracket_in_a_unit():
    assert P.assignments("phi = 3.0 eV, 1 eV = 1.602e-19 J") == ["phi = 3.0 eV", "1 eV = 1.602e-19 J"]
    sol = _with(REF_PE, value_identification="E = 5.0 eV, phi = 3.0 eV, 1 eV = 1.602e-19 J",
                substitution="K = (5.0 - 3.0) eV = 2.0 × 1.602e-19 J", calculation="K = 3.204e-19 J",
                final_answer="\\boxed{3.20 \\times 10^{-19} J}")
    assert _first(Q_PE, sol, REF_PE) == 0
    bad = _with(sol, calculation="K = 3.204e-18 J", final_answer="\\boxed{3.20 \\times 10^{-18} J}")
    assert _first(Q_PE, bad, REF_PE) == 6


def test_a_product_given_one_value_is_one_quantity():
    sol = _with(REF_PE, governing_equation="K = h f - phi", value_identification="h·f = 5.0 eV, phi = 3.0 eV")
    assert _first(Q_PE, sol, REF_PE) == 0
    ref = _with(REF_PE, governing_equation="K = h f - phi", value_identification="h f = 5.0 eV\nphi = 3.0 eV")
    assert _first(Q_PE, sol, ref) == 0
    bad = _with(sol, value_identification="h·f = 4.0 eV, phi = 3.0 eV", substitution="K = 4.0 - 3.0",
                calculation="K = 1.0 eV", final_answer="\\boxed{1.0 eV}")
    assert _first(Q_PE, bad, ref) == 4


def test_a_bracket_unit_after_a_latex_space():
    assert P.quantity("9.90\\ [m/s]") == (9.9, "meter / second")


# --- a wrong law named in the principle is the first error -------------------------------------------------------

@pytest.mark.parametrize("item", ["w060", "w081"])
def test_heldout_wrong_law_named_in_the_principle(item):
    got, gold, v = _gold(item)
    assert got == gold == (2, "CM"), v


Q_HL = "A sample of 640 nuclei has a half-life of 2.0 h. How many nuclei remain after 6.0 h?"
REF_HL = S(problem_analysis="Find the number N that remains.", principle="Radioactive decay law.",
           governing_equation="N = N0 (1/2)^(t/T_half)", value_identification="N0 = 640\nt = 6.0 h\nT_half = 2.0 h",
           substitution="N = 640 (1/2)^(6.0/2.0)", calculation="N = 80", final_answer="\\boxed{80}")


def test_mean_lifetime_taken_for_the_half_life_is_a_step_2_error():
    bad = _with(REF_HL, principle="Exponential decay with the average lifetime equal to the half-life.",
                governing_equation="N = N0 exp(-t/T_half)", substitution="N = 640 exp(-6.0/2.0)",
                calculation="N = 31.9", final_answer="\\boxed{32}")
    assert _first(Q_HL, bad, REF_HL) == 2
    # the right law under the principle's right name: the wrong equation is a step-3 error
    bad3 = _with(bad, principle="Radioactive decay law.")
    assert _first(Q_HL, bad3, REF_HL) == 3


def test_refrigerator_for_an_engine_is_a_step_2_error():
    ok, why = P.same_law("Coefficient of performance of a heat pump.", "Efficiency of a Carnot engine.")
    assert not ok, why
    ok, why = P.same_law("COP of an ideal Carnot refrigerator.", "Carnot efficiency of the engine.")
    assert not ok, why
    ok, why = P.same_law("Carnot's theorem (second law).", "Efficiency of a Carnot engine.")
    assert ok, why
