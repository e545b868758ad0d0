"""Step verifier, round seven (issue 32): the classes of misses of the round-7 held-out sets (heldout/round7,
now development data). Each class has the held-out item that showed it, a case of our own in another phrasing,
and a wrong solution in the same style that must still be caught. Every test failed before its fix.
"""
import json
import pathlib

import pytest

from verifiers import seventag
from verifiers.steps import verify

H7 = pathlib.Path(__file__).resolve().parents[2] / "heldout" / "round7" / "solutions_r7.jsonl"


def _h7(item: str) -> dict:
    for line in H7.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r["id"] == item:
            return r
    raise KeyError(item)


def _got(item: str):
    r = _h7(item)
    v = verify(r["question"], r["solution"], r["reference"])
    return (v.first_error, v.error_class if v.first_error else None), (r["first_error"], r["error_class"]), v


def S(**parts) -> str:
    return seventag.render(parts)


def _first(q, sol, ref):
    v = verify(q, sol, ref)
    assert v.valid, v
    return v


Q_PRESS = "What is the gauge pressure at a depth of 15 m in fresh water? (rho = 1000 kg/m^3, g = 9.8 m/s^2)"
REF_PRESS = S(problem_analysis="Find the gauge pressure p at 15 m.", principle="Hydrostatic pressure in a fluid at rest.",
              governing_equation="p = rho*g*h", value_identification="rho = 1000 kg/m^3\ng = 9.8 m/s^2\nh = 15 m",
              substitution="p = 1000*9.8*15", calculation="p = 147000 Pa", final_answer="\\boxed{1.47e5 Pa}")


def _press(calc: str, final: str = "\\boxed{147 kPa}") -> str:
    return S(problem_analysis="Gauge pressure 15 m below the surface.", principle="Hydrostatic pressure grows with depth.",
             governing_equation="p = ρ g h", value_identification="ρ = 1000 kg/m³\ng = 9.8 m/s²\nh = 15 m",
             substitution="p = 1000 × 9.8 × 15 Pa", calculation=calc, final_answer=final)


# --- (a) numbers with spaces between groups of three digits --------------------------------------------

@pytest.mark.parametrize("item", ["x034", "x046", "x050", "x106", "x044"])
def test_heldout_thousands_spaces_kept(item):
    got, gold, v = _got(item)
    assert got == gold, v


def test_own_thousands_thin_space_kept():
    v = _first(Q_PRESS, _press("p = 147\\,000 Pa = 147 kPa"), REF_PRESS)
    assert v.first_error == 0, v
    v = _first(Q_PRESS, _press("p = 147 000 Pa"), REF_PRESS)
    assert v.first_error == 0, v


def test_wrong_thousands_spaces_still_caught():
    v = _first(Q_PRESS, _press("p = 174 000 Pa", "\\boxed{174 kPa}"), REF_PRESS)
    assert v.first_error == 6, v


# --- (b) a law named by a synonym or an instance at step 2 ----------------------------------------------

from verifiers import step_reading as P  # noqa: E402


@pytest.mark.parametrize("item", ["x060", "x061", "x109", "x110", "x121", "x122", "x020", "x097", "x043"])
def test_heldout_law_synonym_passes_step2(item):
    got, gold, v = _got(item)
    assert got[0] != 2, v


@pytest.mark.parametrize("principle,reference", [
    ("The photoelectric effect, by Einstein: h f = work function + K_max.",
     "Einstein's photoelectric equation (energy conservation for one photon and one electron)."),
    ("Ideal gas held at constant T; the work is W = ∫ p dV.", "First law / ideal gas: isothermal work W = integral of p dV."),
    ("The resultant force on the car is the mass times the centripetal acceleration.",
     "Newton's second law for uniform circular motion (centripetal acceleration v^2/r)."),
    ("Ohm's law and Joule's law P = I²R for the resistor.", "Ohm's law and Joule heating in a resistor."),
    ("Energy levels of hydrogen and the photon energy E = h c / lambda.",
     "Bohr model energy levels and photon emission (energy conservation, Planck-Einstein relation)."),
])
def test_own_law_synonyms(principle, reference):
    ok, why = P.same_law(principle, reference)
    assert ok, why


@pytest.mark.parametrize("principle,reference", [
    ("Conservation of energy.", "Einstein's photoelectric equation (energy conservation for one photon and one electron)."),
    ("Adiabatic expansion of an ideal gas: W = ∫ p dV.", "First law / ideal gas: isothermal work W = integral of p dV."),
    ("The photon energy E = h c / lambda.",
     "Bohr model energy levels and photon emission (energy conservation, Planck-Einstein relation)."),
    ("Isothermal process.", "Adiabatic expansion (first law of thermodynamics with Q = 0)."),
])
def test_wrong_law_still_caught(principle, reference):
    ok, why = P.same_law(principle, reference)
    assert not ok, why


# --- (c) givens and functions in Unicode notation: n₁ = 1.00 (air), sin⁻¹, log₁₀, ½CV², 70 dB ------------

@pytest.mark.parametrize("item", ["x067", "x079", "x081", "x088", "x082"])
def test_heldout_unicode_notation(item):
    got, gold, v = _got(item)
    assert got == gold, v


Q_DB = "A sound has intensity 1.0e-4 W/m^2. What is its intensity level in dB? (I0 = 1.0e-12 W/m^2)"
REF_DB = S(problem_analysis="Find the intensity level beta.", principle="Definition of the decibel scale.",
           governing_equation="beta = 10*log10(I/I0)", value_identification="I = 1.0e-4 W/m^2\nI0 = 1.0e-12 W/m^2",
           substitution="beta = 10*log10(1.0e-4/1.0e-12)", calculation="beta = 10*8 = 80 dB", final_answer="\\boxed{80 dB}")


def _db(calc: str, final: str) -> str:
    return S(problem_analysis="The intensity level β.", principle="The decibel scale, ten times the common logarithm.",
             governing_equation="$\\beta = 10\\,\\log_{10}(I/I_0)$",
             value_identification="I = 1.0 × 10⁻⁴ W/m² (the sound)\nI₀ = 1.0 × 10⁻¹² W/m²",
             substitution="$\\beta = 10\\log_{10}(10^{-4}/10^{-12})$", calculation=calc, final_answer=final)


def test_own_log10_and_air_remark_kept():
    v = _first(Q_DB, _db("β = 10 × 8 = 80 dB", "\\boxed{80 dB}"), REF_DB)
    assert v.first_error == 0, v


def test_own_inverse_sine_kept():
    from verifiers import step_reading as P
    assert P.close(P.evaluate("sin⁻¹(0.5)", {}), 0.5235987755982988)
    assert P.close(P.evaluate("\\sin^{-1}(0.5)", {}), 0.5235987755982988)
    assert P.close(P.evaluate("10 log₁₀(1000)", {}), 30.0)


def test_wrong_log_still_caught():
    v = _first(Q_DB, _db("β = 10 × 8 = 90 dB", "\\boxed{90 dB}"), REF_DB)
    assert v.first_error == 6, v


# --- (d) a constant the problem states as an expression, a subscript before a symbol, a table of givens ----

@pytest.mark.parametrize("item", ["x095", "x097"])
def test_heldout_constant_and_table(item):
    got, gold, v = _got(item)
    assert got == gold, v


Q_WIRE = "What is the magnetic field 5.0 cm from a long straight wire carrying 4.0 A? (mu_0 = 4 pi x 10^-7 T m/A)"
REF_WIRE = S(problem_analysis="Find the field B.", principle="Field of a long straight wire (Ampere's law).",
             governing_equation="B = mu_0*I/(2*pi*r)", value_identification="mu_0 = 1.2566e-6 T m/A\nI = 4.0 A\nr = 0.050 m",
             substitution="B = 1.2566e-6*4.0/(2*pi*0.050)", calculation="B = 1.6e-5 T", final_answer="\\boxed{1.6e-5 T}")


def _wire(mu: str, calc: str = "B = 1.6 × 10⁻⁵ T", final: str = "\\boxed{1.6e-5 T}") -> str:
    return S(problem_analysis="Field B near a long wire.", principle="Ampère's law for a long straight wire.",
             governing_equation="B = μ₀I/(2πr)",
             value_identification=f"| quantity | symbol | value |\n|---|---|---|\n| permeability | μ₀ | {mu} |\n"
                                  "| current | I | 4.0 A |\n| distance | r | 0.050 m |",
             substitution="B = (4π × 10⁻⁷)(4.0)/(2π × 0.050)", calculation=calc, final_answer=final)


def test_own_constant_in_table_kept():
    v = _first(Q_WIRE, _wire("4π × 10⁻⁷ T·m/A"), REF_WIRE)
    assert v.first_error == 0, v


def test_wrong_constant_value_still_caught():
    v = _first(Q_WIRE, _wire("4π × 10⁻⁶ T·m/A", "B = 1.6 × 10⁻⁴ T", "\\boxed{1.6e-4 T}"), REF_WIRE)
    assert v.first_error == 4, v


# --- (e) the unknown written on the right-hand side -----------------------------------------------------

def test_heldout_unknown_on_the_right_kept():
    got, gold, v = _got("x014")
    assert got == gold, v


Q_KE = "A 4.0 kg cart moves at 3.0 m/s. What is its kinetic energy?"
REF_KE = S(problem_analysis="Find the kinetic energy K.", principle="Kinetic energy of a moving body.",
           governing_equation="K = m*v^2/2", value_identification="m = 4.0 kg\nv = 3.0 m/s",
           substitution="K = 4.0*3.0^2/2", calculation="K = 18 J", final_answer="\\boxed{18 J}")


def _ke(calc: str, final: str) -> str:
    return S(problem_analysis="The kinetic energy K of the cart.", principle="Kinetic energy of a moving body.",
             governing_equation="½ m v² = K", value_identification="m = 4.0 kg\nv = 3.0 m/s",
             substitution="½ × 4.0 kg × (3.0 m/s)² = K", calculation=calc, final_answer=final)


def test_own_unknown_on_the_right_kept():
    v = _first(Q_KE, _ke("2.0 × 9.0 J = 18 J = K", "\\boxed{18 J}"), REF_KE)
    assert v.first_error == 0, v


def test_wrong_unknown_on_the_right_still_caught():
    v = _first(Q_KE, _ke("2.0 × 9.0 J = 36 J = K", "\\boxed{36 J}"), REF_KE)
    assert v.first_error == 6, v
    wrong_law = S(problem_analysis="The kinetic energy K of the cart.", principle="Kinetic energy of a moving body.",
                  governing_equation="m v² = K", value_identification="m = 4.0 kg\nv = 3.0 m/s",
                  substitution="4.0 kg × (3.0 m/s)² = K", calculation="36 J = K", final_answer="\\boxed{36 J}")
    assert _first(Q_KE, wrong_law, REF_KE).first_error == 3


# --- (f) LaTeX units with a group inside (\mathrm{m\,s^{-2}}) and Ω after a power of ten ---------------------

@pytest.mark.parametrize("item", ["x001", "x100"])
def test_heldout_latex_units_in_substitution(item):
    got, gold, v = _got(item)
    assert got == gold, v


Q_RC = "A 4.0 kΩ resistor and a 25 μF capacitor are in series. What is the time constant?"
REF_RC = S(problem_analysis="Find the time constant tau.", principle="RC circuit time constant.",
           governing_equation="tau = R*C", value_identification="R = 4000 ohm\nC = 25e-6 F",
           substitution="tau = 4000*25e-6", calculation="tau = 0.1 s", final_answer="\\boxed{0.1 s}")


def _rc(sub: str, calc: str, final: str) -> str:
    return S(problem_analysis="The time constant τ.", principle="Time constant of an RC circuit.",
             governing_equation="$\\tau = R C$",
             value_identification="$R = 4.0\\times10^{3}\\,\\Omega$, $C = 2.5\\times10^{-5}\\,\\mathrm{F}$",
             substitution=sub, calculation=calc, final_answer=final)


def test_own_latex_units_kept():
    v = _first(Q_RC, _rc("τ = 4.0 × 10³ Ω × 2.5 × 10⁻⁵ F", "τ = 0.10 s", "\\boxed{0.10 s}"), REF_RC)
    assert v.first_error == 0, v
    v = _first(Q_RC, _rc("$\\tau = (4.0\\times10^{3}\\,\\Omega)(2.5\\times10^{-5}\\,\\mathrm{A\\,s\\,V^{-1}})$",
                          "τ = 0.10 s", "\\boxed{0.10 s}"), REF_RC)
    assert v.first_error == 0, v


def test_wrong_latex_units_still_caught():
    v = _first(Q_RC, _rc("τ = 4.0 × 10³ Ω × 2.5 × 10⁻⁵ F", "τ = 1.0 s", "\\boxed{1.0 s}"), REF_RC)
    assert v.first_error == 6, v


# --- (g) an intermediate named in the analysis ('we need the wave speed v first') is no asked quantity -------

def test_heldout_intermediate_in_analysis_kept():
    got, gold, v = _got("x077")
    assert got == gold, v


def _pa(analysis: str, final: str = "\\boxed{18 J}", calc: str = "K = 18 J") -> str:
    return S(problem_analysis=analysis, principle="Kinetic energy of a moving body.", governing_equation="K = m v^2/2",
             value_identification="m = 4.0 kg\nv = 3.0 m/s", substitution="K = 4.0 × 3.0²/2", calculation=calc,
             final_answer=final)


def test_own_intermediate_in_analysis_kept():
    v = _first(Q_KE, _pa("Kinetic energy of the cart. To begin with we need the speed v along the way."), REF_KE)
    assert v.first_error == 0, v


def test_wrong_asked_quantity_still_caught():
    assert _first(Q_KE, _pa("We need the speed v of the cart."), REF_KE).first_error == 1


def test_value_in_parentheses_is_no_remark():
    from verifiers import step_reading as P
    step = seventag.parse(S(problem_analysis="a", principle="b", governing_equation="E = P t",
                            value_identification="n_1 = 1.00 (air)", substitution="E = 1.5*30*(4.0 min)",
                            calculation="x", final_answer="y"))
    assert P.lines(step.get("substitution")) == ["E = 1.5*30*(4.0 min)"]
    assert P.lines(step.get("value_identification")) == ["n_1 = 1.00"]


def test_first_as_adjective_is_still_the_asked_quantity():
    assert _first(Q_KE, _pa("We need the speed v of the first cart."), REF_KE).first_error == 1


# --- (h) Markdown bold around a formula or a name inside a tag --------------------------------------------

@pytest.mark.parametrize("item", ["x020", "x093", "x094"])
def test_heldout_markdown_bold(item):
    got, gold, v = _got(item)
    assert got == gold, v


def _bold(calc: str, final: str) -> str:
    return S(problem_analysis="**Unknown:** the kinetic energy K.", principle="**Kinetic energy** of a moving body.",
             governing_equation="**K = ½ m v²**", value_identification="**m** = 4.0 kg\n**v** = 3.0 m/s",
             substitution="K = ½ × 4.0 × 3.0**2", calculation=calc, final_answer=final)


def test_own_markdown_bold_kept():
    assert _first(Q_KE, _bold("K = **18 J**", "\\boxed{18 J}"), REF_KE).first_error == 0


def test_wrong_markdown_bold_still_caught():
    assert _first(Q_KE, _bold("K = **36 J**", "\\boxed{36 J}"), REF_KE).first_error == 6
