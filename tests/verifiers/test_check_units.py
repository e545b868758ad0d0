"""How the checker reads a unit: the spellings models write (ms^-1, kmph, Kg, ℃, µ/u/μ, siunitx), a bare power
("m3"), a unit after the math span or box that holds the number, a unit in words ("meters per second"), a unit
in square brackets ("9.90 [m/s]"), "per <unit>" as the inverse unit, and angles (a multiple of π is radians; a
bare number against degrees is refused).  Rows: (prediction, gold, expected, origin[, kind]), see
_check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

SPELLINGS = [
    ("5 ms^-1", "5 m/s", True, "round2"),
    ("9.8 ms^{-2}", "9.8 m/s^2", True, "round2"),
    ("36 kmph", "10 m/s", True, "round2"),
    ("4 Nm", "4 J", True, "round2"),
    ("4 N∙m", "4 N*m", True, "round2"),
    ("3 Kg", "3 kg", True, "round2"),
    ("72 Km/h", "20 m/s", True, "round2"),
    ("4200 J/kgK", "4200 J/(kg*K)", True, "round2"),
    ("25 ℃", "298.15 K", True, "round2"),
    ("300 \u212a", "300 K", True, "round2"),
    ("10 \u2126", "10 ohm", True, "round2"),
    (r"\qty{5}{\meter\per\second}", "5 m/s", True, "round2"),
    (r"5\,\si{\meter\per\second}", "5 m/s", True, "round2"),
    (r"25^{\circ}\mathrm{C}", "298.15 K", True, "round2"),
    ("5 G", "5e-4 T", True, "round2"),
    ("1 AU", "1.496e11 m", True, "round2"),
    ("1 light-year", "9.461e15 m", True, "round2"),
    ("5 m s⁻¹", "5 m/s", True, "round2"),
    ("2 kWh", "7.2e6 J", True, "round2"),
    ("3 N·m", "3 J", True, "round2"),
    ("6 kgm/s", "6 kg*m/s", True, "round2"),
    ("60 km/hr", "16.67 m/s", True, "round2"),
    ("2 mins", "120 s", True, "round2"),
    ("5 secs", "5 s", True, "round2"),
    ("3 µC", "3e-6 C", True, "round2"),
    ("3 uC", "3e-6 C", True, "round2"),
    ("3 μC", "3e-6 C", True, "round2"),
    ("5 ms^-1", "5000 m/s", False, "round2"),  # not misread
    ("9.8 ms^{-2}", "9.8e6 m/s^2", False, "round2"),
    ("36 kmph", "36 m/s", False, "round2"),
    ("The volume is 0.25 m3", "0.25 m^3", True, "round3"),  # a unit with a bare power
    ("A pressure of 7.8 g/cm3", "7.8 g/cm^3", True, "round3"),
    ("The wheel turns at ω = 3 rev/s", "18.85 rad/s", True, "round5"),
    ("The wheel turns at ω = 3 rev/s", "3 rad/s", False, "round5"),
]


@pytest.mark.parametrize("row", rows(SPELLINGS))
def test_unit_spellings(row):
    assert_row(check, row)


# a unit written after the math span or the box that holds the number is its unit (heldout6:c084); a bare
# span used to be read in the gold's unit: "$5$ km" against 5 m was a false positive
AFTER_THE_SPAN = [
    ("N_A = $6.02 \\times 10^{23}$ mol^-1", "6.02e23 mol^-1", True, "heldout6:c084"),
    ("The field is $3 \\times 10^{4}$ N/C", "3e4 V/m", True, "round6"),
    ("It moves $5$ km.", "5000 m", True, "round6"),
    ("The wavelength is $5.0 \\times 10^{-7}$ m.", "500 nm", True, "round6"),
    ("The speed is $5$ km.", "5 m", False, "round6"),
    ("It moves $5$ km.", "5 m", False, "round6"),
    ("The field is $3 \\times 10^{4}$ N/C", "3e4 T", False, "round6"),
    ("N_A = $6.02 \\times 10^{23}$ mol^-1", "6.02e22 mol^-1", False, "round6"),
    ("$\\boxed{5}$ km", "5 m", False, "round6-review"),
    ("$\\boxed{5}$ km", "5 km", True, "round6-review"),
    ("$\\boxed{5}$ km", "5000 m", True, "round6-review"),
]


@pytest.mark.parametrize("row", rows(AFTER_THE_SPAN))
def test_a_unit_after_the_math_span_or_box_is_its_unit(row):
    assert_row(check, row)


# a value in words with a unit of several words joined by "per" is one unit (heldout6:c096); "per cycle" is
# no part of the unit
IN_WORDS = [
    ("The speed is four meters per second.", "4 m/s", True, "heldout6:c096"),
    ("The acceleration is nine point eight meters per second squared.", "9.8 m/s^2", True, "round6"),
    ("It travels at twenty kilometres per hour.", "20 km/h", True, "round6"),
    ("It travels at 72 kilometres per hour.", "20 m/s", True, "round6"),
    ("It moves 4 m per second on average.", "4 m/s", True, "round6"),
    ("The speed is four meters per second.", "4 m", False, "round6"),
    ("The speed is four meters per second squared.", "4 m/s", False, "round6"),
    ("It travels at twenty kilometres per hour.", "20 m/s", False, "round6"),
    ("It travels at 72 kilometres per hour.", "72 m/s", False, "round6"),
    ("The speed is four meters.", "4 m/s", False, "round6"),
    ("It covers 4 meters per cycle.", "4 m", True, "round6"),
]


@pytest.mark.parametrize("row", rows(IN_WORDS))
def test_a_unit_in_words_with_per_is_one_unit(row):
    assert_row(check, row)


# "per <unit>" alone ("5 per second") is 1/<unit>, never a bare number read in the gold's unit
PER_UNIT = [
    ("$5$ per second", "5 m/s", False, "round6-trailing"),
    ("$5$ per kilogram", "5 m/s", False, "round6-trailing"),
    ("The answer is 5 per meter.", "5 m/s", False, "round6-trailing"),
    ("The rate is 5 per hour", "5 m/s", False, "round6-trailing"),
    ("$5$ per second", "5 Hz", True, "round6-trailing"),
    ("The decay rate is 2 per second.", "2 s^-1", True, "round6-trailing"),
    ("The answer is 3 per revolution.", "3", True, "round6-trailing"),
    ("10 meters per second, per the problem statement", "10 m/s", True, "round6-trailing"),
    ("four meters per second relative to the cart", "4 m/s", True, "round6-trailing"),
    ("4 meters per second relative to the cart", "4 m/s", True, "round6-trailing"),
]


@pytest.mark.parametrize("row", rows(PER_UNIT))
def test_a_per_unit_is_its_inverse_unit(row):
    assert_row(check, row)


# a unit in square brackets: "9.90 [m/s]", "9.90\ [m/s]" (the step verifier's final answers); words in
# brackets that are no unit ("[max]", "[wrong]") are never dropped (test_check_refusals.py)
BRACKETS = [
    ("9.90\\ [m/s]", "9.90 m/s", True, "round6"),
    ("9.90 [m/s]", "9.90 m/s", True, "round6"),
    ("v = 9.90 [m/s]", "9.90 m/s", True, "round6"),
    ("\\boxed{9.90\\ [m/s]}", "9.90 m/s", True, "round6"),
    ("\\boxed{9.90} [m/s]", "9.90 m/s", True, "round6"),
    ("The answer is 392 [W].", "392 W", True, "round6"),
    ("a = 2.0 [m/s^2]", "2 m/s^2", True, "round6"),
    ("9.90 [km/h]", "2.75 m/s", True, "round6"),
    ("9.90 [km/h]", "9.90 m/s", False, "round6"),
    ("9.90\\ [m/s]", "9.90 m", False, "round6"),
    ("The answer is 392 [W].", "392 J", False, "round6"),
    ("9.90 [blorg]", "9.90 m/s", False, "round6"),
    ("9.90 [m/s] or 9.80 [m/s]", "9.90 m/s", False, "round6"),
    ("5 [m/s]", "5 m/s", True, "round6-trailing"),
    ("9.90 \\, [\\text{m/s}]", "9.9 m/s", True, "round6-trailing"),
]


@pytest.mark.parametrize("row", rows(BRACKETS))
def test_a_unit_in_square_brackets_is_the_unit(row):
    assert_row(check, row)


# --- angles ------------------------------------------------------------------------------------------------
# a multiple of π is radians, and a number against radians is in radians; a bare number against an angle in
# degrees does not say whether it is degrees or radians ("1.047" for 60° is right in radians and wrong in
# degrees; graders read it either way): it is refused

ANGLES = [
    (r"\frac{\pi}{2}", "90°", True, "round2"),
    (r"\pi/4 rad", "45 degrees", True, "round2"),
    ("π/3", r"60^\circ", True, "round2"),
    (r"\boxed{\frac{\pi}{6}}", r"30^{\circ}", True, "round2"),
    ("90°", r"\frac{\pi}{2}", True, "round2"),
    ("The angle swept is π/2 rad.", "90°", True, "round4"),  # the Unicode pi with a unit
    ("π rad", "180°", True, "round4"),
    ("The angle swept is π/2 rad.", "180°", False, "round4"),
    ("So the angle is φ = 1.047", "60°", False, "round5"),
    ("\\boxed{1.047}", "60^\\circ", False, "round5"),
    ("The angle is 60", "60 deg", False, "round5"),  # refused as well: its unit is not stated
    ("φ = π/3", "60°", True, "round5"),
    ("\\boxed{\\frac{\\pi}{3}}", "60^\\circ", True, "round5"),
    ("The angle is 60°.", "1.047 rad", True, "round5"),
    ("φ = 1.047 rad", "60°", True, "round5"),
    ("φ = 1.047", "1.047 rad", True, "round5"),
    ("φ = π/6", "60°", False, "round5"),
]


@pytest.mark.parametrize("row", rows(ANGLES))
def test_angles(row):
    assert_row(check, row)
