"""Step verifier, round four (issue 32): the principle judged by its physics, not its wording, and givens
invented at step 1. Wordings here are our own, not the development sets'.

- A principle that names one law of the reference (the reference's setting words - 'inelastic', 'wavelength',
  'Planck's constant' - may go unsaid), or under an unusual name states a formula that holds at the
  problem's values, passes step 2.
- A principle whose formula is bare numbers, does not hold at the problem's values or is dimensionally
  inconsistent fails at step 2, also when it names a real law.
- Step 1 that lists the asked quantity, or a quantity of a kind the problem states nowhere, as a given is MC.
"""
import pytest

from verifiers import seventag
from verifiers.steps import verify


def S(**parts) -> str:
    return seventag.render(parts)


def _with(ref: str, **parts) -> str:
    p = seventag.parse(ref)
    return S(**{t: parts.get(t, p.get(t).content.strip()) for t in seventag.TAGS})


Q_STICK = ("A 3.0 kg trolley rolling at 4.0 m/s couples to a stationary 1.0 kg trolley and they move off "
           "together. What is their common speed?")
REF_STICK = S(problem_analysis="Find the common speed v after coupling.",
              principle="Conservation of linear momentum; the trolleys stick together, so kinetic energy is lost "
                        "(perfectly inelastic).",
              governing_equation="v = m1*u1/(m1 + m2)", value_identification="m1 = 3.0 kg\nu1 = 4.0 m/s\nm2 = 1.0 kg",
              substitution="v = 3.0*4.0/(3.0 + 1.0)", calculation="v = 3.0 m/s", final_answer="\\boxed{3.0 m/s}")

Q_DENS = "A block of aluminium has a volume of 0.0020 m^3 and density 2700 kg/m^3. What is its mass?"
REF_DENS = S(problem_analysis="Find the mass m. Given: the volume V, the density rho.",
             principle="Density is mass per unit volume: m = rho V.",
             governing_equation="m = rho*V", value_identification="rho = 2700 kg/m^3\nV = 0.0020 m^3",
             substitution="m = 2700*0.0020", calculation="m = 5.4 kg", final_answer="\\boxed{5.4 kg}")

Q_PER = "A ripple has wavelength 0.60 m and travels at 1.5 m/s. Find its period."
REF_PER = S(problem_analysis="Find the period (T). Given: the wavelength lam, the speed v.",
            principle="Wave relation: period = wavelength / speed (T = lam / v).",
            governing_equation="T = lam/v", value_identification="lam = 0.60 m\nv = 1.5 m/s",
            substitution="T = 0.60/1.5", calculation="T = 0.4 s", final_answer="\\boxed{0.4 s}")

Q_HOOP = ("A marble rolls without friction round a vertical loop of radius 2.5 m, barely staying on the track "
          "at the top. Use g = 9.8 m/s^2. How fast does it move at the top?")
REF_HOOP = S(problem_analysis="The problem asks for the speed at the top (v). Given: the radius r, g.",
             principle="Circular motion: at the top gravity alone supplies the centripetal force, g = v^2/r.",
             governing_equation="v = sqrt(g*r)", value_identification="r = 2.5 m\ng = 9.8 m/s^2",
             substitution="v = sqrt(9.8*2.5)", calculation="v = 4.95 m/s", final_answer="\\boxed{4.95 m/s}")


# --- the principle: one law of the reference named, its setting words unsaid -------------------------

@pytest.mark.parametrize("principle", [
    "Momentum is conserved in the coupling.",
    "Total momentum before equals total momentum after.",
])
def test_principle_naming_the_law_without_the_references_setting_words_passes(principle):
    v = verify(Q_STICK, _with(REF_STICK, principle=principle), REF_STICK)
    assert v.valid and v.first_error == 0, v


def test_principle_naming_the_law_with_kinetic_energy_conserved_still_fails():
    v = verify(Q_STICK, _with(REF_STICK, principle="Momentum and kinetic energy are both conserved (elastic "
                                                   "collision)."), REF_STICK)
    assert v.first_error == 2, v


Q_DB = "An electron moves at 3.0e6 m/s. Find its de Broglie wavelength. Use h = 6.626e-34 J*s and m = 9.11e-31 kg."
REF_DB = S(problem_analysis="Find the wavelength lam.",
           principle="de Broglie relation: the wavelength is Planck's constant over the momentum, lam = h/(m v).",
           governing_equation="lam = h/(m*v)", value_identification="h = 6.626e-34 J*s\nm = 9.11e-31 kg\nv = 3.0e6 m/s",
           substitution="lam = 6.626e-34/(9.11e-31*3.0e6)", calculation="lam = 2.424e-10 m",
           final_answer="\\boxed{2.424e-10 m}")


def test_plancks_constant_in_the_reference_is_no_photon_law_to_name():
    v = verify(Q_DB, _with(REF_DB, principle="Matter waves (de Broglie): lam = h/p with p = m v."), REF_DB)
    assert v.valid and v.first_error == 0, v


@pytest.mark.parametrize("principle", [
    "Rotational Newton's law tau = I alpha.",
    "Newton's second law for rotation.",
])
def test_torque_law_under_its_rotational_names(principle):
    q = "A net torque of 3.0 N*m acts on a wheel with moment of inertia 0.60 kg*m^2. Find its angular acceleration."
    ref = S(problem_analysis="Find the angular acceleration alpha.",
            principle="Torque equals moment of inertia times angular acceleration.",
            governing_equation="alpha = tau/I", value_identification="tau = 3.0 N*m\nI = 0.60 kg*m^2",
            substitution="alpha = 3.0/0.60", calculation="alpha = 5.0 rad/s^2", final_answer="\\boxed{5.0 rad/s^2}")
    v = verify(q, _with(ref, principle=principle), ref)
    assert v.valid and v.first_error == 0, v


def test_heat_capacity_is_not_a_capacitor_and_latent_heat_must_be_named():
    q = ("How much heat melts 0.20 kg of ice at 0 °C and then warms the water to 10 °C? "
         "Use L_f = 3.34e5 J/kg and c = 4186 J/(kg*K).")
    ref = S(problem_analysis="Find the total heat Q.",
            principle="Latent heat of fusion for melting, then specific heat capacity for warming.",
            governing_equation="Q = m*L_f + m*c*dT", value_identification="m = 0.20 kg\nL_f = 3.34e5 J/kg\nc = 4186 J/(kg*K)\ndT = 10 K",
            substitution="Q = 0.20*3.34e5 + 0.20*4186*10", calculation="Q = 75172 J", final_answer="\\boxed{75172 J}")
    ok = verify(q, _with(ref, principle="Melting needs m L_f (latent heat); warming needs Q = m c dT."), ref)
    assert ok.valid and ok.first_error == 0, ok
    bad = verify(q, _with(ref, principle="Only Q = m c dT is needed: melting at 0 °C costs nothing extra."), ref)
    assert bad.first_error == 2, bad


# --- the principle's own formula -------------------------------------------------------------------

Q_MOM = "A 0.40 kg puck slides at 5.0 m/s. What is its momentum?"
REF_MOM = S(problem_analysis="Find the momentum (p).", principle="Linear momentum is mass times velocity: p = m v.",
            governing_equation="p = m*v", value_identification="m = 0.40 kg\nv = 5.0 m/s", substitution="p = 0.40*5.0",
            calculation="p = 2.0 kg*m/s", final_answer="\\boxed{2.0 kg*m/s}")


@pytest.mark.parametrize("principle", [
    "Puck-motion formula: p = m v.",       # an invented name, the right relation
    "The Galilean rule p = m*v.",
])
def test_right_formula_under_an_unusual_name_passes(principle):
    v = verify(Q_MOM, _with(REF_MOM, principle=principle), REF_MOM)
    assert v.valid and v.first_error == 0, v


def test_right_formula_under_an_unusual_name_then_a_wrong_value_is_step_4():
    sol = _with(REF_MOM, principle="Puck formula: p = m v.", value_identification="m = 0.40 kg\nv = 50 m/s",
                substitution="p = 0.40*50", calculation="p = 20 kg*m/s", final_answer="\\boxed{20 kg*m/s}")
    v = verify(Q_MOM, sol, REF_MOM)
    assert v.first_error == 4, v


@pytest.mark.parametrize("principle", [
    "Period of a wave = 0.60 m / 1.5 m/s",          # a calculation with numbers, no law
    "Wave timing: 1.5 m/s * 0.60 m = 0.9 s",
])
def test_principle_that_is_bare_numbers_fails_at_step_2(principle):
    sol = _with(REF_PER, principle=principle, governing_equation="T = 0.9", substitution="T = 0.9",
                calculation="T = 0.9 s", final_answer="\\boxed{0.9 s}")
    v = verify(Q_PER, sol, REF_PER)
    assert v.first_error == 2 and v.error_class == "CM", v


@pytest.mark.parametrize("principle", [
    "Mass relation: m = m V.",                 # meaningless: holds only for V = 1
    "Density law: m = rho / V.",               # a real quantity with a wrong formula under it
])
def test_principle_formula_that_does_not_hold_fails_at_step_2(principle):
    sol = _with(REF_DENS, principle=principle, governing_equation="m = rho/V", substitution="m = 2700/0.0020",
                calculation="m = 1350000 kg", final_answer="\\boxed{1350000 kg}")
    v = verify(Q_DENS, sol, REF_DENS)
    assert v.first_error == 2 and v.error_class == "CM", v


def test_named_law_with_a_wrong_formula_fails_at_step_2():
    # the wrong formula under the right law's name, followed by the governing equation
    sol = _with(REF_HOOP, principle="Circular motion at the top: v = g r.", governing_equation="v = g*r",
                substitution="v = 9.8*2.5", calculation="v = 24.5 m/s", final_answer="\\boxed{24.5 m/s}")
    v = verify(Q_HOOP, sol, REF_HOOP)
    assert v.first_error == 2 and v.error_class == "CM", v


# --- step 1: givens the problem does not state ---------------------------------------------------

@pytest.mark.parametrize("analysis", [
    "The problem asks for the speed (v). Given: the radius r, the travel time t_l.",     # no time in the problem
    "We need the speed v at the top. Given: the radius r, the top speed v.",              # the asked one as a given
    "The problem asks for the speed (v). Given: the radius r, the track pressure p_t.",  # no pressure stated
    "The problem asks for the speed (v). Given: the radius r, the exit speed ve.",        # a two-letter symbol
])
def test_invented_or_asked_given_in_step_1_is_mc(analysis):
    v = verify(Q_HOOP, _with(REF_HOOP, problem_analysis=analysis), REF_HOOP)
    assert v.first_error == 1 and v.error_class == "MC", v


@pytest.mark.parametrize("analysis", [
    "The problem asks for the speed (v). Given: the radius r, the gravitational acceleration g.",
    "Find v at the top. Given: the loop radius r and g; the marble barely stays on.",
    "The problem asks for the top speed v. Given: the radius r, the mass m of the marble.",  # unused, not invented
])
def test_honest_givens_are_kept(analysis):
    v = verify(Q_HOOP, _with(REF_HOOP, problem_analysis=analysis), REF_HOOP)
    assert v.valid and v.first_error == 0, v


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


# --- notation: powers of ten written out, √ before a number, subscript digits, [unit] in the box ---------

Q_GRAV = "Two lead spheres of 40 kg and 20 kg have their centres 0.40 m apart. Find the gravitational force between them. Use G = 6.67e-11 N*m^2/kg^2."
REF_GRAV = S(problem_analysis="Find the force F.", principle="Newton's law of universal gravitation.",
             governing_equation="F = G*m1*m2/r^2", value_identification="G = 6.67e-11 N*m^2/kg^2\nm1 = 40 kg\nm2 = 20 kg\nr = 0.40 m",
             substitution="F = 6.67e-11*40*20/0.40^2", calculation="F = 3.335e-7 N", final_answer="\\boxed{3.335e-7 N}")


@pytest.mark.parametrize("g_text", ["6.67x10^-11", "6.67 X 10^-11", "6.67*10^(-11)", "6.67·10^-11", "6.67 × 10⁻¹¹"])
def test_power_of_ten_written_out_is_one_number(g_text):
    sol = _with(REF_GRAV, value_identification=f"G = {g_text} N*m^2/kg^2\nm1 = 40 kg\nm2 = 20 kg\nr = 0.40 m",
                substitution=f"F = {g_text} * 40 * 20 / (0.40)^2", calculation="F = 3.34x10^-7 N",
                final_answer="\\boxed{3.34 \\times 10^{-7} N}")
    v = verify(Q_GRAV, sol, REF_GRAV)
    assert v.valid and v.first_error == 0, v


def test_power_of_ten_spelling_keeps_a_wrong_substitution_wrong():
    sol = _with(REF_GRAV, substitution="F = 6.67x10^-11 * 40 * 20 / (0.40)", calculation="F = 1.33x10^-7 N",
                final_answer="\\boxed{1.33x10^-7 N}")
    v = verify(Q_GRAV, sol, REF_GRAV)
    assert v.first_error == 5, v


def test_exponent_of_a_number_is_no_name():
    from verifiers import step_reading as P
    assert P.names("2.5e9 * k + 1E-3") == {"k"}
    assert P.names("x^2 * 10^3") == {"x"}  # a power of a symbol times a thousand is not the number 2e3


def test_root_sign_before_a_number_and_subscript_digits():
    q = "A stone falls from rest through 20.0 m with g = 9.8 m/s^2. How long does it fall?"
    ref = S(problem_analysis="Find the time t.", principle="Free fall from rest.", governing_equation="t = sqrt(2*h/g)",
            value_identification="h = 20.0 m\ng = 9.8 m/s^2", substitution="t = sqrt(2*20.0/9.8)",
            calculation="t = 2.02 s", final_answer="\\boxed{2.02 s}")
    sol = S(problem_analysis="Find the time t.", principle="Free fall from rest.", governing_equation="t = √(2h₁/g)",
            value_identification="h₁ = 20.0 m\ng = 9.8 m/s²", substitution="t = √(2·20.0/9.8)",
            calculation="t = √4.082\nt = 2.02 s", final_answer="\\boxed{2.02 s}")
    v = verify(q, sol, ref)
    assert v.valid and v.first_error == 0, v


def test_unit_in_square_brackets_in_the_boxed_answer():
    sol = _with(REF_MOM, value_identification="m = 0.40 [kg]\nv = 5.0 [m/s]", calculation="p = 2.0 [kg*m/s]",
                final_answer="\\boxed{2.0 [kg*m/s]}")
    v = verify(Q_MOM, sol, REF_MOM)
    assert v.valid and v.first_error == 0, v
    wrong = _with(REF_MOM, calculation="p = 2.0 [kg*m/s]", final_answer="\\boxed{20 [kg*m/s]}")
    assert verify(Q_MOM, wrong, REF_MOM).first_error == 7


# --- the equations written inside sentences ------------------------------------------------------------

Q_CAR = "A cart starts from rest and accelerates uniformly at 2.0 m/s^2 for 3.0 s. How far does it travel?"
REF_CAR = S(problem_analysis="Find the distance d.", principle="Uniformly accelerated motion from rest.",
            governing_equation="d = (1/2)*a*t^2", value_identification="a = 2.0 m/s^2\nt = 3.0 s",
            substitution="d = 0.5*2.0*3.0^2", calculation="d = 9.0 m", final_answer="\\boxed{9.0 m}")


@pytest.mark.parametrize("gov,sub,calc", [
    ("Starting from rest, the distance covered is d = (1/2)*a*t^2", "Hence d = 0.5*2.0*3.0^2",
     "Squaring first, 3.0^2 = 9.0 and so d = 1.0*9.0 = 9.0 m"),
    ("We use d = ½ a t²", "Plugging in, d = 0.5 × 2.0 × 3.0²", "This works out to d = 9.0 m, which is the answer"),
    ("|d| = a t^2/2", "|d| = 2.0*3.0^2/2", "|d| = 9.0 m"),
])
def test_equations_inside_sentences_are_read(gov, sub, calc):
    v = verify(Q_CAR, _with(REF_CAR, governing_equation=gov, substitution=sub, calculation=calc), REF_CAR)
    assert v.valid and v.first_error == 0, v


def test_a_wrong_result_inside_a_sentence_is_still_found():
    sol = _with(REF_CAR, calculation="Working it out, d = 0.5*2.0*9.0 = 18 m, which is the distance",
                final_answer="\\boxed{18 m}")
    v = verify(Q_CAR, sol, REF_CAR)
    assert v.first_error == 6, v


def test_function_applied_without_parentheses():
    from verifiers import step_reading as P
    assert abs(P.evaluate("n_1 \\sin\\theta_1", {"n_1": 2.0, "theta_1": 0.5}) - 2.0 * 0.479425538604203) < 1e-9
    assert abs(P.evaluate("sin θ₁ / 2", {"theta_1": 0.5}) - 0.479425538604203 / 2) < 1e-9
    assert abs(P.evaluate("cos 60°", {}) - 0.5) < 1e-9


# --- principles naming conflicting laws -----------------------------------------------------------------

@pytest.mark.parametrize("principle", [
    "The trolleys stick together, and both the momentum and the kinetic energies are conserved.",
    "Momentum is conserved in this inelastic coupling; kinetic energy is also conserved.",
])
def test_inelastic_with_kinetic_energy_conserved_is_a_conflict(principle):
    v = verify(Q_STICK, _with(REF_STICK, principle=principle), REF_STICK)
    assert v.first_error == 2 and v.error_class == "CM", v


def test_kinetic_energy_not_conserved_is_no_conflict():
    v = verify(Q_STICK, _with(REF_STICK, principle="Momentum is conserved; the kinetic energy is not conserved "
                                                  "since they stick together."), REF_STICK)
    assert v.valid and v.first_error == 0, v


def test_first_and_second_law_together_conflict_and_newtons_first_law_is_no_thermodynamics():
    from verifiers import step_reading as P
    assert "first_law" not in P.laws("Newton's first law holds")
    q = "A 4.0 kg box is pushed with a net force of 10 N. Find its acceleration."
    ref = S(problem_analysis="Find the acceleration a.", principle="Newton's second law: F = m a.",
            governing_equation="a = F/m", value_identification="F = 10 N\nm = 4.0 kg", substitution="a = 10/4.0",
            calculation="a = 2.5 m/s^2", final_answer="\\boxed{2.5 m/s^2}")
    bad = _with(ref, principle="Newton's second law F = m a, and by Newton's first law the net force is zero.")
    assert verify(q, bad, ref).first_error == 2
    assert verify(q, ref, ref).first_error == 0


# --- a value substituted with its unit -------------------------------------------------------------------

def test_value_substituted_with_its_unit_is_that_quantity_and_a_bad_conversion_is_step_6():
    q = "A 1200 kg car moves at 54 km/h. What is its kinetic energy?"
    ref = S(problem_analysis="Find the kinetic energy K.", principle="Kinetic energy is one half m v squared.",
            governing_equation="K = 0.5*m*v^2", value_identification="m = 1200 kg\nv = 15 m/s",
            substitution="K = 0.5*1200*15^2", calculation="K = 135000 J", final_answer="\\boxed{135000 J}")
    ok = _with(ref, value_identification="m = 1200 kg\nv = 54 km/h", substitution="K = 0.5*1200*(54 km/h)^2",
               calculation="K = 600*15^2\nK = 135000 J")
    v = verify(q, ok, ref)
    assert v.valid and v.first_error == 0, v
    slip = _with(ref, value_identification="m = 1200 kg\nv = 54 km/h", substitution="K = 0.5*1200*(54 km/h)^2",
                 calculation="K = 600*5.4^2\nK = 17496 J", final_answer="\\boxed{17496 J}")
    v = verify(q, slip, ref)
    assert v.first_error == 6, v


# --- a law stated in general symbols beside the working equations ------------------------------------------

Q_SKATE = ("A skater spinning at 3.0 rad/s with moment of inertia 2.4 kg*m^2 pulls in her arms to 1.2 kg*m^2. "
           "What is her new angular speed?")
REF_SKATE = S(problem_analysis="Find the final angular speed w2.", principle="Conservation of angular momentum.",
              governing_equation="w2 = I1*w1/I2", value_identification="I1 = 2.4 kg*m^2\nw1 = 3.0 rad/s\nI2 = 1.2 kg*m^2",
              substitution="w2 = 2.4*3.0/1.2", calculation="w2 = 6.0 rad/s", final_answer="\\boxed{6.0 rad/s}")


@pytest.mark.parametrize("gov", ["L_initial = L_final\nw2 = I1*w1/I2", "L_i = L_f\nI1*w1 = I2*w2"])
def test_general_statement_of_the_law_beside_the_working_equation(gov):
    sub = "w2 = 2.4*3.0/1.2" if "w2 =" in gov else "2.4*3.0 = 1.2*w2"
    v = verify(Q_SKATE, _with(REF_SKATE, governing_equation=gov, substitution=sub), REF_SKATE)
    assert v.valid and v.first_error == 0, v


def test_an_equation_with_an_unidentified_symbol_alone_is_still_step_4():
    v = verify(Q_SKATE, _with(REF_SKATE, governing_equation="w2 = I1*w1/I_arms", substitution="w2 = 2.4*3.0/1.2"),
               REF_SKATE)
    assert v.first_error == 4, v


# --- step 1: the asked quantity named in other words of the same kind ----------------------------------------

def test_reference_ending_with_a_helper_equation_keeps_its_boxed_quantity_as_the_asked_one():
    q = "A ball is thrown straight up at 14 m/s from a 5.0 m high balcony (g = 9.8 m/s^2). How high above the ground does it rise?"
    ref = S(problem_analysis="Find the greatest height above the ground H.", principle="Uniformly accelerated motion.",
            governing_equation="h_r = u^2/(2*g)\nH = h0 + h_r", value_identification="u = 14 m/s\ng = 9.8 m/s^2\nh0 = 5.0 m",
            substitution="h_r = 14^2/(2*9.8)\nH = 5.0 + 10", calculation="h_r = 10 m\nH = 15 m", final_answer="\\boxed{15 m}")
    # the same reference with the helper written last: the asked quantity is still H (the box), not h_r
    ref2 = ref.replace("h_r = u^2/(2*g)\nH = h0 + h_r", "H = h0 + u^2/(2*g)\nh_r = u^2/(2*g)").replace(
        "h_r = 14^2/(2*9.8)\nH = 5.0 + 10", "H = 5.0 + 14^2/(2*9.8)\nh_r = 14^2/(2*9.8)").replace(
        "h_r = 10 m\nH = 15 m", "H = 15 m\nh_r = 10 m")
    sol = _with(ref, problem_analysis="Find the maximum height H reached above the ground.")
    v = verify(q, sol, ref2)
    assert v.first_error != 1, v  # not a misread asked quantity


@pytest.mark.parametrize("analysis", [
    "Find $|\\vec v|$, the top speed, for a loop of radius 2.5 m.",
    "Required: the largest speed v_max at the top that keeps contact.",
])
def test_asked_quantity_under_a_vector_sign_or_a_synonym_qualifier(analysis):
    sol = _with(REF_HOOP, problem_analysis=analysis)
    v = verify(Q_HOOP, sol, REF_HOOP)
    assert v.first_error != 1, v


def test_own_symbol_with_a_quantity_word_of_the_asked_dimension_is_the_asked_quantity():
    sol = _with(REF_HOOP, problem_analysis="Required: the critical orbital speed v_c at the top of the loop.")
    assert verify(Q_HOOP, sol, REF_HOOP).first_error != 1
    other = _with(REF_HOOP, problem_analysis="Required: the normal force N_t at the top of the loop.")
    assert verify(Q_HOOP, other, REF_HOOP).first_error == 1


# --- a result reported to the significant figures of the data ---------------------------------------------

@pytest.mark.parametrize("calc,box,want", [
    ("lam = 2.424e-10 m\nlam = 2.4e-10 m", "\\boxed{2.4e-10 m}", 0),       # two figures, as the data: kept
    ("lam = 2.4e-10 m", "\\boxed{2.4e-10 m}", 0),
    ("lam = 2.5e-10 m", "\\boxed{2.5e-10 m}", 6),                          # not a rounding of 2.424
    ("lam = 2e-10 m", "\\boxed{2e-10 m}", 6),                               # one figure is not a report
])
def test_result_rounded_to_its_written_figures(calc, box, want):
    v = verify(Q_DB, _with(REF_DB, calculation=calc, final_answer=box), REF_DB)
    assert v.first_error == want, v


def test_same_kind_of_quantity_for_the_other_body_is_still_a_misread():
    # the relaxed step-1 rule (a word of the asked dimension) must not let 'first' stand for 'second'
    q = "A 2.0 kg cart at 3.0 m/s hits a resting 1.0 kg cart elastically. Find the speed of the second cart."
    ref = S(problem_analysis="The problem asks for the speed of the second cart (v2).",
            principle="Conservation of momentum and kinetic energy in an elastic collision.",
            governing_equation="v2 = 2*m1*v1/(m1 + m2)", value_identification="m1 = 2.0 kg\nv1 = 3.0 m/s\nm2 = 1.0 kg",
            substitution="v2 = 2*2.0*3.0/(2.0 + 1.0)", calculation="v2 = 4.0 m/s", final_answer="\\boxed{4.0 m/s}")
    sol = _with(ref, problem_analysis="The problem asks for the velocity of the first cart (u1f).",
                governing_equation="u1f = (m1 - m2)*v1/(m1 + m2)", substitution="u1f = (2.0 - 1.0)*3.0/(2.0 + 1.0)",
                calculation="u1f = 1.0 m/s", final_answer="\\boxed{1.0 m/s}")
    assert verify(q, sol, ref).first_error == 1


@pytest.mark.parametrize("principle", [
    "The momentum of the puck equals its kinetic energy.",       # quantities of different kinds, in words
    "Momentum = 0.40 kg * 5.0 m/s",                              # a calculation, not a law
])
def test_principle_in_words_equating_different_kinds_fails(principle):
    v = verify(Q_MOM, _with(REF_MOM, principle=principle), REF_MOM)
    assert v.first_error == 2, v


@pytest.mark.parametrize("principle", [
    "The impulse equals the change in momentum.",
    "Momentum equals mass times velocity.",
    "The work done equals the kinetic energy gained.",
])
def test_principle_in_words_with_consistent_kinds_is_not_judged_by_that_rule(principle):
    from verifiers.reference_based import _principle_formula
    assert _principle_formula(principle, {"p": 2.0, "m": 0.4, "v": 5.0}, {"p": "kg*m/s", "m": "kg", "v": "m/s"}) is None


def test_quantity_named_in_words_on_the_left_of_a_principle_formula():
    from verifiers.reference_based import _principle_formula
    env, units = {"lam": 0.6, "v": 1.5, "T": 0.4}, {"lam": "m", "v": "m/s", "T": "s"}
    got = _principle_formula("Wave speed = 2*lam/T.", env, units)  # the one speed symbol is v: v = 2 lam/T is false
    assert got is not None and got[0] is False, got
    assert _principle_formula("Wave speed = lam/T.", env, units)[0] is True


def test_principle_bringing_in_a_quantity_the_problem_lacks_is_a_wrong_law_at_step_2():
    sol = _with(REF_PER, principle="Wave timing law: T = 2*tan(psi).", governing_equation="T = 2*tan(psi)",
                substitution="T = 2*tan(0.3)", calculation="T = 0.62 s", final_answer="\\boxed{0.62 s}")
    v = verify(Q_PER, sol, REF_PER)
    assert v.first_error == 2 and v.error_class == "CM", v


def test_a_reference_quantity_left_unidentified_is_still_step_4():
    # G belongs to the law of the reference: forgetting its value is a value-identification slip
    sol = _with(REF_GRAV, value_identification="m1 = 40 kg\nm2 = 20 kg\nr = 0.40 m")
    v = verify(Q_GRAV, sol, REF_GRAV)
    assert v.first_error == 4, v


# --- values the problem gives in words or through its own arithmetic ------------------------------------------

Q_WIRE = ("A 0.50 m wire carrying 3.0 A lies at right angles to a 0.20 T magnetic field. "
          "What force acts on it?")
REF_WIRE = S(problem_analysis="Find the force F.", principle="Magnetic force on a current-carrying wire.",
             governing_equation="F = B*I*L", value_identification="B = 0.20 T\nI = 3.0 A\nL = 0.50 m",
             substitution="F = 0.20*3.0*0.50", calculation="F = 0.30 N", final_answer="\\boxed{0.30 N}")


def test_an_angle_the_problem_states_in_words_is_given():
    sol = _with(REF_WIRE, governing_equation="F = B*I*L*sin(theta)",
                value_identification="B = 0.20 T\nI = 3.0 A\nL = 0.50 m\ntheta = 90°",
                substitution="F = 0.20*3.0*0.50*sin(90°)")
    v = verify(Q_WIRE, sol, REF_WIRE)
    assert v.valid and v.first_error == 0, v
    wrong = _with(REF_WIRE, governing_equation="F = B*I*L*sin(theta)",
                  value_identification="B = 0.20 T\nI = 3.0 A\nL = 0.50 m\ntheta = 60°",
                  substitution="F = 0.20*3.0*0.50*sin(60°)", calculation="F = 0.26 N", final_answer="\\boxed{0.26 N}")
    assert verify(Q_WIRE, wrong, REF_WIRE).first_error in (3, 4)  # an angle not given is an error


def test_a_value_line_that_shows_its_arithmetic_on_the_givens():
    q = "A 1500 W heater runs 12 minutes a day for 10 days. How much energy does it use, in kWh?"
    ref = S(problem_analysis="Find the energy E.", principle="Electrical energy is power times time.",
            governing_equation="E = P*t", value_identification="P = 1500 W\nt = 7200 s", substitution="E = 1500*7200",
            calculation="E = 10800000 J", final_answer="\\boxed{3.0 kWh}")
    sol = _with(ref, governing_equation="E = P*t_on", value_identification="P = 1.5 kW\nt_on = 10*12 min = 120 min = 2.0 h",
                substitution="E = 1.5 kW * 2.0 h", calculation="E = 3.0 kWh")
    v = verify(q, sol, ref)
    assert v.first_error != 4, v
    bad = _with(ref, governing_equation="E = P*t_on", value_identification="P = 1.5 kW\nt_on = 10*12 min = 100 min",
                substitution="E = 1500*6000",
                calculation="E = 9000000 J", final_answer="\\boxed{2.5 kWh}")
    assert verify(q, bad, ref).first_error in (3, 4)  # a wrong derivation is no given (step 3 sees its value first)


def test_bracketed_dimensionless_and_per_degree_units_are_read():
    from verifiers import step_reading as P
    assert P.quantity("0.25 [-]") == (0.25, "")
    for t in ("1.2e-5 [1/°C]", "1.2e-5 /°C", "1.2e-5 °C^-1"):
        q = P.quantity(t)
        assert q is not None and abs(q[0] - 1.2e-5) < 1e-12 and "kelvin" in q[1], (t, q)
    assert abs(P.quantity("10 [°C]")[0] - 283.15) < 0.1  # an absolute temperature keeps its offset


def test_primed_symbols_and_a_sign_convention_in_the_principle():
    q = "An object stands 30 cm in front of a converging lens of focal length 10 cm. Where is the image?"
    ref = S(problem_analysis="Find the image distance d_i.", principle="Thin lens equation.",
            governing_equation="d_i = f*d_o/(d_o - f)", value_identification="f = 10 cm\nd_o = 30 cm",
            substitution="d_i = 10*30/(30 - 10)", calculation="d_i = 15 cm", final_answer="\\boxed{15 cm}")
    sol = _with(ref, problem_analysis="Find the image distance s'.", principle="Thin lens: 1/s + 1/s' = 1/f.",
                governing_equation="1/s + 1/s' = 1/f", value_identification="f = 10 cm\ns = 30 cm",
                substitution="1/30 + 1/s' = 1/10", calculation="s' = 15 cm")
    v = verify(q, sol, ref)
    assert v.valid and v.first_error == 0, v
    from verifiers.reference_based import _principle_formula
    got = _principle_formula("Mirror focal length f = R/2.", {"f": -0.2, "R": 0.4}, {"f": "m", "R": "m"})
    assert got is not None and got[0] is True, got  # the other sign convention is the same law
