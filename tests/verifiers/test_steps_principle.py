"""Step 2 (principle) of the step verifier: the law judged by its physics, not its wording.

Accepted: a principle that names one law of the reference under any of its usual names and synonyms (the
surname alone, 'Newton II', a rotational or an everyday name, the discoverer's name for its setting), without the
reference's setting words ('inelastic', 'wavelength', 'Planck's constant' may go unsaid), or that states under an
unusual name a formula that holds at the problem's values.

Flagged (CM at step 2): a principle whose formula is bare numbers, does not hold at the problem's values, equates
quantities of different kinds, brings in a quantity the problem lacks, or is circular - also when it names a real
law; a law of another setting (Newton's first law for an accelerated body, time dilation for a length, the mean
lifetime for the half-life, a refrigerator for an engine, another gas law); laws that conflict (an inelastic
coupling with the kinetic energy conserved); a single generic keyword ('power').

The tables' rows are (question, solution, reference, expected, reason, origin) - _step_problems.py says how a row
is read - and (principle, reference, same law?, origin) for verifiers.step_reading.same_law.
"""
import pytest

from _step_problems import (ANY, COUPLING, CRANE, DE_BROGLIE, DECAY, DENSITY, LOOP, MARBLE, NOT_2, OHM_12V, OK,
                            PARCEL, PUCK, RIPPLE, ROD, SLED, STRAIGHT_WIRE, Problem, S, check, heldout_row, tmpl)
from verifiers import seventag
from verifiers import step_reading as P


def _synonym(principle, template):
    p = tmpl(template)
    sol = p.solution.replace(seventag.parse(p.solution).get("principle").content, principle)
    return Problem(p.question, p.solution).row(f"{template}: {principle}", OK, "round2", solution=sol)


def _circular_principle():
    """A circular principle (`a = m*a/m`) passed to step 5."""
    p = tmpl("dyn_push_with_friction")
    pr = seventag.parse(p.solution).get("principle").content
    sol = p.solution.replace(pr, "Newton's second law with kinetic friction: a = m*a/m.")
    return Problem(p.question, p.solution).row("a circular principle", (2, "CM"), "round2", solution=sol)


HEATER = Problem("A heater draws 2 A from a 230 V supply. What power does it use?", S(
    problem_analysis="The problem asks for the electric power (P). Given: I, V.",
    principle="Electric power: P = V I.", governing_equation="P = V*I",
    value_identification="V = 230 V\nI = 2 A", substitution="P = 230*2", calculation="P = 460 W",
    final_answer="\\boxed{460 W}"))


def _heater(why, principle, expected):
    return HEATER.row(why, expected, "round2", solution=HEATER.reference.replace("Electric power: P = V I.", principle))


WHEEL = Problem(
    "A net torque of 3.0 N*m acts on a wheel with moment of inertia 0.60 kg*m^2. Find its angular acceleration.",
    S(problem_analysis="Find the angular acceleration alpha.",
      principle="Torque equals moment of inertia times angular acceleration.",
      governing_equation="alpha = tau/I", value_identification="tau = 3.0 N*m\nI = 0.60 kg*m^2",
      substitution="alpha = 3.0/0.60", calculation="alpha = 5.0 rad/s^2", final_answer="\\boxed{5.0 rad/s^2}"))

ICE = Problem(
    "How much heat melts 0.20 kg of ice at 0 °C and then warms the water to 10 °C? "
    "Use L_f = 3.34e5 J/kg and c = 4186 J/(kg*K).",
    S(problem_analysis="Find the total heat Q.",
      principle="Latent heat of fusion for melting, then specific heat capacity for warming.",
      governing_equation="Q = m*L_f + m*c*dT",
      value_identification="m = 0.20 kg\nL_f = 3.34e5 J/kg\nc = 4186 J/(kg*K)\ndT = 10 K",
      substitution="Q = 0.20*3.34e5 + 0.20*4186*10", calculation="Q = 75172 J", final_answer="\\boxed{75172 J}"))

BOX = Problem("A 4.0 kg box is pushed with a net force of 10 N. Find its acceleration.", S(
    problem_analysis="Find the acceleration a.", principle="Newton's second law: F = m a.",
    governing_equation="a = F/m", value_identification="F = 10 N\nm = 4.0 kg", substitution="a = 10/4.0",
    calculation="a = 2.5 m/s^2", final_answer="\\boxed{2.5 m/s^2}"))

NAMED = [
    # law names with their usual synonyms
    _synonym("The force of gravity between the planet and the body sets g at its surface.", "grav_surface_g"),
    _synonym("The weight near Earth's surface is the gravitational pull G M m / R^2, so g = G M / R^2.",
             "grav_surface_g"),
    _synonym("Coulomb: the electrostatic force between two point charges is k q1 q2 / r^2.", "es_coulomb_force"),
    _synonym("Coulomb force between point charges, inverse-square in the distance.", "es_coulomb_force"),
    _synonym("Heat lost = heat gained, each body's heat being mass times specific heat times temperature change.",
             "thermo_mixing_water"),
    _synonym("Energy balance with the specific heat of water: the warm water's heat goes into the cold water.",
             "thermo_mixing_water"),
    # one law of the reference named, its setting words unsaid
    COUPLING.row("momentum conserved, 'inelastic' unsaid", OK, "round4",
                 principle="Momentum is conserved in the coupling."),
    COUPLING.row("total momentum before equals after", OK, "round4",
                 principle="Total momentum before equals total momentum after."),
    DE_BROGLIE.row("Planck's constant in the reference is no photon law to name", OK, "round4",
                   principle="Matter waves (de Broglie): lam = h/p with p = m v."),
    WHEEL.row("the torque law as rotational Newton's law with its formula", OK, "round4",
              principle="Rotational Newton's law tau = I alpha."),
    WHEEL.row("the torque law as Newton's second law for rotation", OK, "round4",
              principle="Newton's second law for rotation."),
    ICE.row("latent heat named beside the heat capacity (no capacitor)", OK, "round4",
            principle="Melting needs m L_f (latent heat); warming needs Q = m c dT."),
    OHM_12V.row("the surname alone: Ohm", OK, "round5", principle="Ohm"),
    OHM_12V.row("the surname alone: Ohm.", OK, "round5", principle="Ohm."),
    OHM_12V.row("By Ohm: I = V/R", OK, "round5", principle="By Ohm: I = V/R."),
    SLED.row("Newton II", OK, "round5", principle="Newton II"),
    SLED.row("Newton's 2nd", OK, "round5", principle="Newton's 2nd"),
    SLED.row("N2L", OK, "round5", principle="N2L"),
    SLED.row("the second law of motion", OK, "round5", principle="The second law of motion."),
    STRAIGHT_WIRE.row("Ampère's circuital law is Ampère's law", (NOT_2, ANY), "round5",
                      principle="Ampère's circuital law around a circle centred on the wire."),
    MARBLE.row("free fall is the setting of an energy reference", OK, "round5",
               principle="Energy is conserved: m g h = (1/2) m v^2."),
    PARCEL.row("uniformly accelerated motion is free fall's name", OK, "round5",
               principle="Uniformly accelerated motion: v = u + a t."),
    CRANE.row("the energy gained is the work done against gravity", OK, "round5",
              principle="Work-energy theorem: the crane's work is the potential energy gained; power is "
                        "work per unit time."),
    heldout_row("heldout6:w016", OK, "Boyle names the isothermal ideal gas"),
    heldout_row("heldout6:w093", (4, "MC"), "Boyle's principle, then a conversion slip of a given"),
    *[heldout_row(f"heldout7:{i}", (NOT_2, ANY), "a law named by a synonym or an instance passes step 2")
      for i in ["x060", "x061", "x109", "x110", "x121", "x122", "x020", "x097", "x043"]],
    # a generic keyword is no law; the right law in everyday words is
    _heater("a single generic keyword ('power') is not the law", "Heat for a power source.", (2, "CM")),
    _heater("power delivered is voltage times current", "The power delivered to a resistive load is the voltage "
                                                        "times the current.", OK),
    _heater("Electrical power P = IV", "Electrical power P = IV.", OK),
    _heater("power dissipated equals V I", "Power dissipated in the heater equals V I.", OK),
]

WRONG = [
    _circular_principle(),
    COUPLING.row("the law named with the kinetic energy conserved (elastic)", (2, "CM"), "round4",
                 principle="Momentum and kinetic energy are both conserved (elastic collision)."),
    ICE.row("latent heat left out", (2, "CM"), "round4",
            principle="Only Q = m c dT is needed: melting at 0 °C costs nothing extra."),
    # the principle's own formula
    PUCK.row("the right formula under an invented name", OK, "round4", principle="Puck-motion formula: p = m v."),
    PUCK.row("the right formula under an unusual name", OK, "round4", principle="The Galilean rule p = m*v."),
    PUCK.row("the right formula under an unusual name, then a wrong value", (4, "MC"), "round4",
             principle="Puck formula: p = m v.", value_identification="m = 0.40 kg\nv = 50 m/s",
             substitution="p = 0.40*50", calculation="p = 20 kg*m/s", final_answer="\\boxed{20 kg*m/s}"),
    *[RIPPLE.row(f"bare numbers: {pr}", (2, "CM"), "round4", principle=pr, governing_equation="T = 0.9",
                 substitution="T = 0.9", calculation="T = 0.9 s", final_answer="\\boxed{0.9 s}")
      for pr in ["Period of a wave = 0.60 m / 1.5 m/s",  # a calculation with numbers, no law
                 "Wave timing: 1.5 m/s * 0.60 m = 0.9 s"]],
    *[DENSITY.row(f"a formula that does not hold: {why}", (2, "CM"), "round4", principle=pr,
                  governing_equation="m = rho/V", substitution="m = 2700/0.0020", calculation="m = 1350000 kg",
                  final_answer="\\boxed{1350000 kg}")
      for pr, why in [("Mass relation: m = m V.", "meaningless, holds only for V = 1"),
                      ("Density law: m = rho / V.", "a real quantity with a wrong formula under it")]],
    # the wrong formula under the right law's name, followed by the governing equation
    LOOP.row("a named law with a wrong formula", (2, "CM"), "round4",
             principle="Circular motion at the top: v = g r.", governing_equation="v = g*r",
             substitution="v = 9.8*2.5", calculation="v = 24.5 m/s", final_answer="\\boxed{24.5 m/s}"),
    PUCK.row("quantities of different kinds equated in words", (2, "CM"), "round4",
             principle="The momentum of the puck equals its kinetic energy."),
    PUCK.row("a calculation in words, not a law", (2, "CM"), "round4", principle="Momentum = 0.40 kg * 5.0 m/s"),
    RIPPLE.row("a principle bringing in a quantity the problem lacks", (2, "CM"), "round4",
               principle="Wave timing law: T = 2*tan(psi).", governing_equation="T = 2*tan(psi)",
               substitution="T = 2*tan(0.3)", calculation="T = 0.62 s", final_answer="\\boxed{0.62 s}"),
    # principles naming conflicting laws
    COUPLING.row("inelastic with both momentum and kinetic energies conserved", (2, "CM"), "round4",
                 principle="The trolleys stick together, and both the momentum and the kinetic energies are "
                           "conserved."),
    COUPLING.row("inelastic, kinetic energy also conserved", (2, "CM"), "round4",
                 principle="Momentum is conserved in this inelastic coupling; kinetic energy is also conserved."),
    COUPLING.row("kinetic energy not conserved is no conflict", OK, "round4",
                 principle="Momentum is conserved; the kinetic energy is not conserved since they stick together."),
    BOX.row("Newton's first and second law together conflict", (2, "CM"), "round4",
            principle="Newton's second law F = m a, and by Newton's first law the net force is zero."),
    BOX.row("Newton's second law alone", OK, "round4", principle="Newton's second law: F = m a."),
    # a law of another setting
    SLED.row("Newton I for an accelerated body", (2, "CM"), "round5",
             principle="Newton I: no net force, no acceleration."),
    PARCEL.row("constant velocity for a free fall", (2, "CM"), "round5",
               principle="Motion at constant velocity: distance = speed * time."),
    ROD.row("time dilation for a length", (2, "CM"), "round5", principle="Time dilation.",
            governing_equation="L = L0/sqrt(1 - v^2/c^2)", substitution="L = 4.0/sqrt(1 - 0.60^2)",
            calculation="L = 5.0 m", final_answer="\\boxed{5.0 m}"),
    DECAY.row("the mean lifetime taken for the half-life", (2, "CM"), "round6",
              principle="Exponential decay with the average lifetime equal to the half-life.",
              governing_equation="N = N0 exp(-t/T_half)", substitution="N = 640 exp(-6.0/2.0)",
              calculation="N = 31.9", final_answer="\\boxed{32}"),
    # the right law under the principle's right name: the wrong equation is a step-3 error
    DECAY.row("the right law named, the mean-lifetime equation: step 3", (3, "CM"), "round6",
              principle="Radioactive decay law.", governing_equation="N = N0 exp(-t/T_half)",
              substitution="N = 640 exp(-6.0/2.0)", calculation="N = 31.9", final_answer="\\boxed{32}"),
    heldout_row("heldout6:w060", (2, "CM"), "a wrong law named in the principle"),
    heldout_row("heldout6:w081", (2, "CM"), "a wrong law named in the principle"),
]


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", NAMED)
def test_a_law_under_its_names_passes_step_2(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", WRONG)
def test_a_wrong_law_or_formula_is_booked_at_step_2(question, solution, reference, expected, reason, origin):
    check(question, solution, reference, expected, reason, origin)


BOYLE = "Boyle's law (isothermal ideal gas)."
PHOTO_REF = "Einstein's photoelectric equation (energy conservation for one photon and one electron)."
GAS_WORK_REF = "First law / ideal gas: isothermal work W = integral of p dV."
BOHR_REF = "Bohr model energy levels and photon emission (energy conservation, Planck-Einstein relation)."
SAME_LAW = [
    pytest.param("Vertically it falls freely; horizontally it keeps a constant velocity.",
                 "Projectile: uniform acceleration g vertically, constant velocity horizontally.", True, "round5",
                 id="free fall beside constant velocity is projectile motion"),
    *[pytest.param(pr, BOYLE, True, "round6", id=f"isothermal gas: {pr}")
      for pr in ["Boyle's law.", "The ideal gas law at constant temperature: P V = n R T with T fixed.",
                 "Isothermal process of an ideal gas: the temperature stays constant."]],
    *[pytest.param(pr, BOYLE, False, "round6", id=f"another gas law: {pr}")
      for pr in ["Adiabatic compression of an ideal gas.", "Charles's law at constant pressure.",
                 "The ideal gas law."]],
    pytest.param("Latent heat of fusion.", "Latent heat: a phase change at constant temperature.", True, "round6",
                 id="a reference naming constant temperature as its setting"),
    pytest.param("Specific heat capacity.", "Latent heat: a phase change at constant temperature.", False, "round6",
                 id="specific heat for latent heat at constant temperature"),
    pytest.param("Coefficient of performance of a heat pump.", "Efficiency of a Carnot engine.", False, "round6",
                 id="a heat pump for an engine"),
    pytest.param("COP of an ideal Carnot refrigerator.", "Carnot efficiency of the engine.", False, "round6",
                 id="a refrigerator for an engine"),
    pytest.param("Carnot's theorem (second law).", "Efficiency of a Carnot engine.", True, "round6",
                 id="Carnot's theorem for a Carnot engine"),
    pytest.param("The photoelectric effect, by Einstein: h f = work function + K_max.", PHOTO_REF, True, "round7",
                 id="the photoelectric effect by Einstein"),
    pytest.param("Ideal gas held at constant T; the work is W = ∫ p dV.", GAS_WORK_REF, True, "round7",
                 id="isothermal work in other words"),
    pytest.param("The resultant force on the car is the mass times the centripetal acceleration.",
                 "Newton's second law for uniform circular motion (centripetal acceleration v^2/r).", True, "round7",
                 id="Newton's second law for circular motion in words"),
    pytest.param("Ohm's law and Joule's law P = I²R for the resistor.", "Ohm's law and Joule heating in a resistor.",
                 True, "round7", id="Joule's law for Joule heating"),
    pytest.param("Energy levels of hydrogen and the photon energy E = h c / lambda.", BOHR_REF, True, "round7",
                 id="hydrogen levels and photon energy for the Bohr model"),
    pytest.param("Conservation of energy.", PHOTO_REF, False, "round7",
                 id="energy conservation alone for the photoelectric equation"),
    pytest.param("Adiabatic expansion of an ideal gas: W = ∫ p dV.", GAS_WORK_REF, False, "round7",
                 id="adiabatic for isothermal work"),
    pytest.param("The photon energy E = h c / lambda.", BOHR_REF, False, "round7",
                 id="the photon energy alone for the Bohr model"),
    pytest.param("Isothermal process.", "Adiabatic expansion (first law of thermodynamics with Q = 0).", False,
                 "round7", id="isothermal for adiabatic"),
]


@pytest.mark.parametrize("principle,reference,same,origin", SAME_LAW)
def test_same_law(principle, reference, same, origin):
    ok, why = P.same_law(principle, reference)
    assert bool(ok) == same, why


def test_newtons_first_law_is_no_thermodynamics():
    assert "first_law" not in P.laws("Newton's first law holds")


def test_a_resistance_in_ohms_names_no_law():
    assert "ohm" not in P.laws("Power in the 4.0 ohm heater: P = V^2/R.")
    assert "ohm" not in P.laws("the resistance of 12 ohms")


def test_lorentz_contraction_is_length_contraction():
    assert "lorentz" not in P.laws("Lorentz contraction of the rod") and "length_contraction" in P.laws(
        "Lorentz contraction of the rod")


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


def test_primed_symbols_and_a_sign_convention_in_the_principle():
    from _step_problems import with_parts
    from verifiers.steps import verify
    q = "An object stands 30 cm in front of a converging lens of focal length 10 cm. Where is the image?"
    ref = S(problem_analysis="Find the image distance d_i.", principle="Thin lens equation.",
            governing_equation="d_i = f*d_o/(d_o - f)", value_identification="f = 10 cm\nd_o = 30 cm",
            substitution="d_i = 10*30/(30 - 10)", calculation="d_i = 15 cm", final_answer="\\boxed{15 cm}")
    sol = with_parts(ref, problem_analysis="Find the image distance s'.", principle="Thin lens: 1/s + 1/s' = 1/f.",
                     governing_equation="1/s + 1/s' = 1/f", value_identification="f = 10 cm\ns = 30 cm",
                     substitution="1/30 + 1/s' = 1/10", calculation="s' = 15 cm")
    v = verify(q, sol, ref)
    assert v.valid and v.first_error == 0, v
    from verifiers.reference_based import _principle_formula
    got = _principle_formula("Mirror focal length f = R/2.", {"f": -0.2, "R": 0.4}, {"f": "m", "R": "m"})
    assert got is not None and got[0] is True, got  # the other sign convention is the same law
