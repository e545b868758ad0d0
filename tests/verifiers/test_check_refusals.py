"""Values that are no committed answer, each refused: a bound before or after the value ("at least 5 N",
"10 m at least", "5 m/s or so", HTML "&ge; 5"), a negated or rejected value ("We reject 5.", "is not the total
energy", "~~5 m/s~~", "\\not= 5"), a value offered with a doubt, a disavowal or as a multiple ("maybe 5 m/s",
"5 m/s (guess)", "twice 5 m/s"), an answer named as an alternative, someone else's or a supposition ("Expected
answer: 5 m/s", "Suppose v = 5 m/s."), and a step or part number.  Next to each class, the near misses a
careful grader still accepts (an approximation, a remark, a negation of something else).  Rows: (prediction,
gold, expected, origin), see _check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

BOUNDS = [
    ("more than 3 m/s", "3 m/s", False, "round2"),
    ("The tension is at least 5 N.", "5 N", False, "round2"),
    ("up to 10 J", "10 J", False, "round2"),
    (r"\boxed{\text{at most } 4\ \mathrm{s}}", "4 s", False, "round2"),
    ("The answer is less than 2 m.", "2 m", False, "round2"),
    ("Final answer: no more than 12 V", "12 V", False, "round2"),
    ("The speed must exceed 7 m/s.", "7 m/s", False, "round2"),
    ("<final_answer>greater than 9.8 m/s^2</final_answer>", "9.8 m/s^2", False, "round2"),
    ("The answer is over 100 K.", "100 K", False, "round2"),
    # working that discusses a bound is not the answer; a bound word after the value is no bound
    ("For the block to move the force must be at least 3 N. We apply 5 N, so the acceleration "
     r"is $a = 2.5\ \mathrm{m/s^2}$. The answer is \boxed{2.5\ \mathrm{m/s^2}}.", "2.5 m/s^2", True, "round2"),
    ("The speed is more than 3 m/s at the top; at the bottom it is \\boxed{7 m/s}.", "7 m/s", True, "round2"),
    ("The answer is 5 m/s, which is more than the 3 m/s needed.", "5 m/s", True, "round2"),
    ("The answer is 12 N, which is above the 10 N limit.", "12 N", True, "round2"),
]


@pytest.mark.parametrize("row", rows(BOUNDS))
def test_bounds_are_not_values(row):
    assert_row(check, row)


# a bound, range or comparison written AFTER a value ("10 m at least", "5 m/s or so", "10 J less", "5 [max]",
# "5 m/s (lower bound)") is refused as the same words before it are; an approximation ("5 m/s approx.",
# "5 m/s roughly"), like "about 5 m/s", states the value; words in square brackets that are no unit ("[max]",
# "[wrong]") are never dropped
TRAILING = [
    ("The length is $10$ m at least", "10 m", False, "round6-trailing"),
    ("$5$ m/s or so", "5 m/s", False, "round6-trailing"),
    ("$10$ J less", "10 J", False, "round6-trailing"),
    ("5 [max]", "5", False, "round6-trailing"),
    ("5 [wrong] m/s", "5 m/s", False, "round6-trailing"),
    ("5 m/s (lower bound)", "5 m/s", False, "round6-trailing"),
    ("5 [m/s] (lower bound)", "5 m/s", False, "round6-trailing"),
    ("5 m/s at most", "5 m/s", False, "round6-trailing"),
    ("The answer is 5 m/s or more.", "5 m/s", False, "round6-trailing"),
    ("$12$ N or less", "12 N", False, "round6-trailing"),
    ("5 m/s max", "5 m/s", False, "round6-trailing"),
    ("The speed is 5 m/s (upper bound).", "5 m/s", False, "round6-trailing"),
    ("5 m/s give or take", "5 m/s", False, "round6-trailing"),
    ("\\boxed{5 \\text{ m/s at least}}", "5 m/s", False, "round6-trailing"),
    ("5 [guess] m/s", "5 m/s", False, "round6-trailing"),
    ("5 m/s [estimate, lower]", "5 m/s", False, "round6-trailing"),
    ("The drop is $3$ m higher", "3 m", False, "round6-trailing"),
    ("The answer is 4 s longer than before.", "4 s", False, "round6-trailing"),
    ("5ish m/s", "5 m/s", False, "round6-trailing"),
    ("v ≈ 5 m/s", "5 m/s", True, "round6-trailing"),
    ("about 5 m/s", "5 m/s", True, "round6-trailing"),
    ("5 m/s approx.", "5 m/s", True, "round6-trailing"),
    ("5 m/s roughly", "5 m/s", True, "round6-trailing"),
    ("5 m/s (approximately)", "5 m/s", True, "round6-trailing"),
    ("5 m/s (to 2 s.f.)", "5 m/s", True, "round6-trailing"),
    ("5 m/s [rounded]", "5 m/s", True, "round6-trailing"),
    ("5 m/s, which is less than c", "5 m/s", True, "round6-trailing"),
    ("The answer is 5 m/s, which is less than the speed of sound.", "5 m/s", True, "round6-trailing"),
    ("The speed at maximum height is 5 m/s at maximum height", "5 m/s", True, "round6-trailing"),
    ("The intensity is 4 times greater", "4", True, "round6-trailing"),
    ("The time is 5 min", "5 min", True, "round6-trailing"),
    ("The maximum speed is 5 m/s.", "5 m/s", True, "round6-trailing"),
    ("$5$ kg m/s, then", "5 kg m/s", True, "round6-trailing"),
]


@pytest.mark.parametrize("row", rows(TRAILING))
def test_a_trailing_bound_or_comparison_is_refused(row):
    assert_row(check, row)


# --- negated and rejected values ----------------------------------------------------------------------------

REJECTED = [
    ("5 is impossible", "5", False, "round2"),
    ("We reject 5.", "5", False, "round2"),
    ("The value 5 m/s is ruled out.", "5 m/s", False, "round2"),
    ("5 N is not possible here", "5 N", False, "round2"),
    ("So 12 is invalid.", "12", False, "round2"),
    ("We discard 3 s since time is positive.", "3 s", False, "round2"),
    ("Be careful: 12 J is not the total energy, only the kinetic part.", "12 J", False, "round3"),
    ("The value 3 A is NOT the current through the resistor.", "3 A", False, "round3"),
    # a negation does not over-fire
    ("never zero; it equals 5 N", "5 N", True, "round2"),
    ("The force is not zero: it is 5 N.", "5 N", True, "round2"),
    ("It cannot be negative, so t = 3 s.", "3 s", True, "round2"),
    ("30, not 25", "30", True, "round2"),
    # a value rejected before a clause ("is not 49 N, since ...") leaves the value stated after it
    ("The normal force is not 49 N, since the incline tilts it: N = mg cos θ = 5 × 9.8 × 0.8 = 39.2 N.", "39.2 N",
     True, "round4"),
    ("The normal force is not 49 N, since the incline tilts it: N = mg cos θ = 5 × 9.8 × 0.8 = 39.2 N.", "49 N",
     False, "round4"),
    # two roots offered, the last sentence rejecting one: the other is the answer; a rejection of a value that
    # is neither root, or three roots: no answer
    ("t = 4 s or t = -2 s. Time cannot be negative, so we discard -2 s.", "4 s", True, "round4"),
    ("t = 4 s or t = -2 s. Time cannot be negative, so we discard -2 s.", "-2 s", False, "round4"),
    ("t = 4 s or t = -2 s. Time cannot be negative, so we discard 3 s.", "4 s", False, "round4"),
    ("t = 4 s or t = 1 s or t = -2 s. We discard -2 s.", "4 s", False, "round4"),
    # a value a negated verb rules out leaves the other; a negated verb whose scope runs over both: no answer
    ("The crate doesn't slide 4 m; it stops after 2.6 m.", "2.6 m", True, "round5"),
    ("The crate doesn't slide 4 m; it stops after 2.6 m.", "4 m", False, "round5"),
    ("The cable does not hold 800 N.", "800 N", False, "round5"),
    ("The crate does not slide 4 m or 2.6 m.", "2.6 m", False, "round5"),
]


@pytest.mark.parametrize("row", rows(REJECTED))
def test_negated_and_rejected_values(row):
    assert_row(check, row)


# HTML character references are read as what they render ("&lt;5 m/s" is a bound), markdown strikethrough
# withdraws the struck text, "\not=" / "\not" strike a relation or value and "\text{not } 5" negates the value
STRUCK = [
    ("Answer: &lt;5 m/s", "5 m/s", False, "round6-policy"),
    ("Answer: &gt; 12 N", "12 N", False, "round6-policy"),
    ("Answer: &ge; 3.2 J", "3.2 J", False, "round6-policy"),
    ("Answer: &le;9.8 m/s^2", "9.8 m/s^2", False, "round6-policy"),
    ("Answer: &#8805; 5 m/s", "5 m/s", False, "round6-policy"),
    ("Answer: ~~5 m/s~~", "5 m/s", False, "round6-policy"),
    ("Answer: ~~12 N~~ 15 N", "12 N", False, "round6-policy"),
    ("\\boxed{\\not= 5 \\text{ m/s}}", "5 m/s", False, "round6-policy"),
    ("\\boxed{\\text{not }5 \\text{ m/s}}", "5 m/s", False, "round6-policy"),
    ("Answer: &asymp;5 m/s", "5 m/s", True, "round6-policy"),
    ("Answer: ~~7 m/s~~ 5 m/s", "5 m/s", True, "round6-policy"),
    ("v = 5~\\text{m/s}", "5 m/s", True, "round6-policy"),
    ("The speed is $5~~\\text{m/s}$.", "5 m/s", True, "round6-policy"),
]


@pytest.mark.parametrize("row", rows(STRUCK))
def test_entities_strikethrough_and_struck_relations(row):
    assert_row(check, row)


# --- doubts, disavowals and premises --------------------------------------------------------------------------
# a value offered with a doubt or a disavowal ("maybe", "(guess)", "(wrong)", "anything but", "or not",
# "unless ...") or as a multiple ("twice 5 m/s") is no committed answer; nor is an answer named as an
# alternative, someone else's or a supposition, or an output whose only value sits in a premise

DOUBTED = [
    ("Answer: maybe 5 m/s", "5 m/s", False, "round6-policy"),
    ("Answer: possibly 12 N", "12 N", False, "round6-policy"),
    ("Answer: 3.2 J probably", "3.2 J", False, "round6-policy"),
    ("Answer: 5 m/s (unverified)", "5 m/s", False, "round6-policy"),
    ("Answer: 5 m/s (uncertain)", "5 m/s", False, "round6-policy"),
    ("Answer: 5 m/s (I'm not sure)", "5 m/s", False, "round6-policy"),
    ("Answer: 5 m/s (guess)", "5 m/s", False, "round6-policy"),
    ("Answer: 5 m/s (wrong)", "5 m/s", False, "round6-policy"),
    ("Answer: 12 N (incorrect)", "12 N", False, "round6-policy"),
    ("Answer: anything but 5 m/s", "5 m/s", False, "round6-policy"),
    ("Answer: other than 5 m/s", "5 m/s", False, "round6-policy"),
    ("Answer: 5 m/s or not", "5 m/s", False, "round6-policy"),
    ("Answer: 5 m/s unless friction matters", "5 m/s", False, "round6-policy"),
    ("Answer: undefined; naive estimate 5 m/s", "5 m/s", False, "round6-policy"),
    ("Answer: twice 5 m/s", "5 m/s", False, "round6-policy"),
    ("Answer: half of 12 N", "12 N", False, "round6-policy"),
    ("Answer: 7 m/s\n\n(Alternative answer: 5 m/s)", "5 m/s", False, "round6-policy"),
    ("Answer: 15 N\n\nAlternative answer: 12 N", "12 N", False, "round6-policy"),
    ("Expected answer: 5 m/s", "5 m/s", False, "round6-policy"),
    ("Let me check whether the answer is 5 m/s.", "5 m/s", False, "round6-policy"),
    ("Given: v = 5 m/s", "5 m/s", False, "round6-policy"),
    ("Known: 5 m/s. Unknown: x.", "5 m/s", False, "round6-policy"),
    ("Suppose v = 5 m/s.", "5 m/s", False, "round6-policy"),
    ("Assume v = 12 N.", "12 N", False, "round6-policy"),
    ("Try v = 5 m/s.", "5 m/s", False, "round6-policy"),
    ("Guess: v = 5 m/s.", "5 m/s", False, "round6-policy"),
    ("Hypothesis: 5 m/s", "5 m/s", False, "round6-policy"),
    ("Target: 5 m/s", "5 m/s", False, "round6-policy"),
    ("Goal: show v = 5 m/s", "5 m/s", False, "round6-policy"),
    ("We want to verify v = 5 m/s", "5 m/s", False, "round6-policy"),
    ("The reference says 5 m/s.", "5 m/s", False, "round6-policy"),
    ("I'd expect something like 5 m/s.", "5 m/s", False, "round6-policy"),
    ("The initial value is 5 m/s.", "5 m/s", False, "round6-policy"),
    ("Starting from 5 m/s, it decreases.", "5 m/s", False, "round6-policy"),
    ("Answer: 5 m/s", "5 m/s", True, "round6-policy"),
    ("Answer: 5 m/s (assuming no friction)", "5 m/s", True, "round6-policy"),
    ("Answer: 5 m/s (approximately)", "5 m/s", True, "round6-policy"),
    ("The most likely speed is 5 m/s.", "5 m/s", True, "round6-policy"),
    ("The correct answer is 5 m/s.", "5 m/s", True, "round6-policy"),
    ("Given that m = 2 kg, the speed is 5 m/s.", "5 m/s", True, "round6-policy"),
    ("Suppose v0 = 2 m/s, then v = 5 m/s.", "5 m/s", True, "round6-policy"),
    ("If g = 10 m/s^2, then v = 5 m/s.", "5 m/s", True, "round6-policy"),
    ("Is the answer 7 m/s? No. The answer is 5 m/s.", "5 m/s", True, "round6-policy"),
    ("Answer: $\\boxed{m g h}$", "m*g*h", True, "round6-policy"),
    # a step or part number is not an answer
    ("Part 1: Draw the diagram. Part 2: Draw the diagram. Part 3: Draw the", "3 m", False, "round3"),
    ("First, list the givens. Step 4: list the givens. Step 5", "5 s", False, "round3"),
]


@pytest.mark.parametrize("row", rows(DOUBTED))
def test_doubted_disowned_and_premise_values(row):
    assert_row(check, row)
