"""Step verifier, round three (issue 32): how free text states the asked quantity at step 1. A careful
grader books a miscomprehension only when the analysis clearly names a DIFFERENT asked quantity (another
dimension, a contrasting qualifier, a symbol of another quantity); an analysis that is silent, names the
quantity in words only, or lists givens beside it is no error. Wordings here are our own, not the dev sets'."""
import pytest

from verifiers import seventag
from verifiers.steps import verify


def S(**parts) -> str:
    return seventag.render(parts)


Q_OHM = "A 9.0 V battery is connected across a 3.0 Ω resistor. What current flows through the resistor?"
REF_OHM = S(problem_analysis="We need the current through the resistor. Given: V = 9.0 V, R = 3.0 Ω.",
            principle="Ohm's law: the current equals the voltage divided by the resistance.",
            governing_equation="I = V/R", value_identification="V = 9.0 V\nR = 3.0 ohm",
            substitution="I = 9.0/3.0", calculation="I = 3.0 A", final_answer="\\boxed{3.0 A}")

Q_FALL = "A pebble is dropped from rest from a bridge 11.25 m above the water (g = 10 m/s^2). How fast is it moving when it hits the water?"
REF_FALL = S(problem_analysis="We need the final speed of the pebble as it reaches the water. Given: it starts from rest, h = 11.25 m, g = 10 m/s^2.",
             principle="Conservation of mechanical energy: the potential energy lost becomes kinetic energy.",
             governing_equation="v = sqrt(2*g*h)", value_identification="g = 10 m/s^2\nh = 11.25 m",
             substitution="v = sqrt(2*10*11.25)", calculation="v = 15 m/s", final_answer="\\boxed{15 m/s}")


def _with_analysis(ref: str, text: str) -> str:
    old = seventag.parse(ref).get("problem_analysis").content
    return ref.replace(old, text)


@pytest.mark.parametrize("analysis", [
    "Unknown: the current through the resistor.",
    "The quantity sought is the current in the circuit.",
    "Our goal is the current I, with V = 9.0 V and R = 3.0 Ω.",
    "Determine the current when R = 3.0 Ω and V = 9.0 V.",
    "Required: I. Known: the emf of the battery and the resistance.",
    "How much current flows? The battery gives 9.0 V and the resistor has R = 3.0 Ω.",
    "A 3.0 Ω resistor sits across a 9.0 V battery.",  # silent about the asked quantity: nothing misread
    "The current I through the resistor is to be found.",
])
def test_free_statements_of_the_asked_quantity_are_kept(analysis):
    v = verify(Q_OHM, _with_analysis(REF_OHM, analysis), REF_OHM)
    assert v.valid and v.first_error == 0, (analysis, v)


@pytest.mark.parametrize("analysis", [
    "We must work out the impact velocity, taking g = 10 m/s^2 and a drop of 11.25 m.",
    "Goal: the speed v_w at the water surface; the drop height and g are known.",
    "Let us compute how fast it goes at the bottom; g and h are given.",
])
def test_givens_and_their_symbols_beside_the_asked_quantity_are_not_the_asked_quantity(analysis):
    v = verify(Q_FALL, _with_analysis(REF_FALL, analysis), REF_FALL)
    assert v.valid and v.first_error == 0, (analysis, v)


@pytest.mark.parametrize("analysis", [
    "The power dissipated in the resistor is sought.",          # another dimension
    "We want the voltage across the resistor; R = 3.0 Ω.",      # another dimension
    "Unknown: R.",                                              # the symbol of a given
])
def test_a_different_asked_quantity_is_still_miscomprehension(analysis):
    v = verify(Q_OHM, _with_analysis(REF_OHM, analysis), REF_OHM)
    assert v.valid and (v.first_error, v.error_class) == (1, "MC"), (analysis, v)


@pytest.mark.parametrize("analysis", [
    "We are to determine how long the fall lasts.",             # a time for a speed
    "The initial speed of the pebble is required.",             # contrasting qualifier
    "Find the drop height (h) of the pebble.",                  # a given's symbol named as the asked one
])
def test_a_different_asked_quantity_in_words_is_miscomprehension(analysis):
    v = verify(Q_FALL, _with_analysis(REF_FALL, analysis), REF_FALL)
    assert v.valid and (v.first_error, v.error_class) == (1, "MC"), (analysis, v)


def test_a_looser_step_1_still_catches_later_errors():
    """A silent analysis must not hide a misread given (step 4) or a wrong law (step 3)."""
    sol = _with_analysis(REF_FALL, "A pebble falls from a bridge.")
    misread = sol.replace("h = 11.25 m", "h = 1.125 m").replace("2*10*11.25", "2*10*1.125").replace("v = 15 m/s", "v = 4.74 m/s").replace("\\boxed{15 m/s}", "\\boxed{4.74 m/s}")
    v = verify(Q_FALL, misread, REF_FALL)
    assert (v.first_error, v.error_class) == (4, "MC"), v
    wrong_law = sol.replace("v = sqrt(2*g*h)", "v = 2*g*h").replace("sqrt(2*10*11.25)", "2*10*11.25").replace("v = 15 m/s", "v = 225 m/s").replace("\\boxed{15 m/s}", "\\boxed{225 m/s}")
    v = verify(Q_FALL, wrong_law, REF_FALL)
    assert (v.first_error, v.error_class) == (3, "CM"), v
    taut = sol.replace("v = sqrt(2*g*h)", "v = v")
    v = verify(Q_FALL, taut, REF_FALL)
    assert v.first_error in (3,) and v.error_class == "CM", v


@pytest.mark.parametrize("eq,sub", [
    ("I = |V|/R", "I = |9.0|/3.0"),
    ("I = \\left|V\\right| / R", "I = \\left|9.0\\right| / 3.0"),
    ("I = \\lvert V \\rvert / R", "I = \\lvert 9.0 \\rvert / 3.0"),
])
def test_absolute_value_bars_are_read(eq, sub):
    """A magnitude written with bars (|q1 q2|, \\left| ... \\right|) was 'unexpected character |' at step 3."""
    sol = REF_OHM.replace("I = V/R", eq).replace("I = 9.0/3.0", sub)
    v = verify(Q_OHM, sol, REF_OHM)
    assert v.valid and v.first_error == 0, v
    wrong = sol.replace("/R", "*R").replace("/ R", "* R").replace("/3.0", "*3.0").replace("/ 3.0", "* 3.0")
    v = verify(Q_OHM, wrong, REF_OHM)
    assert v.valid and v.first_error in (2, 3) and v.error_class == "CM", v
