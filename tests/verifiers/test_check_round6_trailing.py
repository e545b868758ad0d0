"""Checker round six, trailing qualifiers: false positives left open by the adversarial pass (588ac86), each
closed in general form, with near misses that a careful grader still accepts.

- a bound, range or comparison written AFTER a value ("10 m at least", "5 m/s or so", "10 J less", "5 [max]",
  "5 m/s (lower bound)") is refused as the same words before it are ("at least 10 m"); an approximation
  ("5 m/s approx.", "5 m/s roughly"), like "about 5 m/s", states the value and is accepted;
- words in square brackets that are no unit ("[max]", "[wrong]") are never dropped;
- a unit written as "per <unit>" ("5 per second") is 1/<unit>, never a bare number read in the gold's unit;
- a value for each case ("12 N if ..., otherwise 10 N") is no one answer, a condition after the value
  ("x = 9 m when t = 3 s") is not the value, and a correction that states a total and a part ("Wait, so 10 m
  total, 5 m each way") takes the earlier answer back without committing to one.
"""
import pytest

from verifiers import check


def _ok(pred, ref, kind=None):
    return check(pred, ref, kind=kind).equivalent


@pytest.mark.parametrize("pred,gold", [
    ("The length is $10$ m at least", "10 m"),
    ("$5$ m/s or so", "5 m/s"),
    ("$10$ J less", "10 J"),
    ("5 [max]", "5"),
    ("5 [wrong] m/s", "5 m/s"),
    ("5 m/s (lower bound)", "5 m/s"),
    ("5 [m/s] (lower bound)", "5 m/s"),
    # more attacks of the same class
    ("5 m/s at most", "5 m/s"),
    ("The answer is 5 m/s or more.", "5 m/s"),
    ("$12$ N or less", "12 N"),
    ("5 m/s max", "5 m/s"),
    ("The speed is 5 m/s (upper bound).", "5 m/s"),
    ("5 m/s give or take", "5 m/s"),
    ("\\boxed{5 \\text{ m/s at least}}", "5 m/s"),
    ("5 [guess] m/s", "5 m/s"),
    ("5 m/s [estimate, lower]", "5 m/s"),
    ("The drop is $3$ m higher", "3 m"),
    ("The answer is 4 s longer than before.", "4 s"),
    ("5ish m/s", "5 m/s"),
])
def test_a_trailing_bound_range_or_comparison_is_refused(pred, gold):
    assert not _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("v ≈ 5 m/s", "5 m/s"),
    ("about 5 m/s", "5 m/s"),
    ("5 m/s approx.", "5 m/s"),
    ("5 m/s roughly", "5 m/s"),
    ("5 m/s (approximately)", "5 m/s"),
    ("5 m/s (to 2 s.f.)", "5 m/s"),
    ("5 m/s [rounded]", "5 m/s"),
    ("5 [m/s]", "5 m/s"),
    ("9.90 \\, [\\text{m/s}]", "9.9 m/s"),
    ("5 m/s, which is less than c", "5 m/s"),
    ("The answer is 5 m/s, which is less than the speed of sound.", "5 m/s"),
    ("The speed at maximum height is 5 m/s at maximum height", "5 m/s"),
    ("The intensity is 4 times greater", "4"),
    ("The time is 5 min", "5 min"),
    ("The maximum speed is 5 m/s.", "5 m/s"),
    ("$5$ kg m/s, then", "5 kg m/s"),
])
def test_approximations_units_and_remarks_still_read(pred, gold):
    assert _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("$5$ per second", "5 m/s"),
    ("$5$ per kilogram", "5 m/s"),
    ("The answer is 5 per meter.", "5 m/s"),
    ("The rate is 5 per hour", "5 m/s"),
])
def test_a_per_unit_is_its_inverse_unit_never_the_golds(pred, gold):
    assert not _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("$5$ per second", "5 Hz"),
    ("The decay rate is 2 per second.", "2 s^-1"),
    ("The answer is 3 per revolution.", "3"),
    ("10 meters per second, per the problem statement", "10 m/s"),
    ("four meters per second relative to the cart", "4 m/s"),
    ("4 meters per second relative to the cart", "4 m/s"),
])
def test_per_units_spelt_out_still_read(pred, gold):
    assert _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("The speed of the car is 20 m/s. Wait, it's 5 m/s faster than the truck.", "5 m/s"),
    ("The force is 12 N if the surface is rough, otherwise 10 N.", "10 N"),
    ("The force is 12 N if the surface is rough, otherwise 10 N.", "12 N"),
    ("it's 12 N if the surface is rough, otherwise 10 N", "10 N"),
    ("The answer is 8 N. Wait, it's 12 N if the surface is rough, otherwise 10 N.", "10 N"),
    ("The answer is 8 N. Wait, it's 12 N if the surface is rough, otherwise 10 N.", "8 N"),
    ("The answer is 12 N if rough, or else 10 N.", "10 N"),
    ("The answer is 20 m. Wait, so 10 m total, 5 m each way.", "20 m"),
    ("The answer is 20 m. Wait, so 10 m total, 5 m each way.", "5 m"),
    ("so 10 m total, 5 m each way", "5 m"),
    ("giving x = 9 m when t = 3 s", "3 s"),
    ("The position is x = 9 m at t = 3 s.", "3 s"),
    ("v = 4 m/s when t = 2 s", "2 s"),
])
def test_comparisons_conditions_and_parts_are_no_answer(pred, gold):
    assert not _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("giving x = 9 m when t = 3 s", "9 m"),
    ("v = 4 m/s when t = 2 s", "4 m/s"),
    ("The speed is 5 m/s. Wait, I forgot the factor of 2, so 10 m/s.", "10 m/s"),
    ("The answer is 12 N. Otherwise the block would slide.", "12 N"),
])
def test_conditions_restating_the_question_and_plain_corrections_read(pred, gold):
    assert _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("mgsinθ", "m g \\sin\\theta"),
    ("Fcosθ", "F \\cos\\theta"),
    ("mgsinθ - μmgcosθ", "m g (\\sin\\theta - \\mu \\cos\\theta)"),
])
def test_symbols_written_against_a_bare_function(pred, gold):
    assert _ok(pred, gold)


def test_symbols_against_a_bare_function_keep_the_function():
    assert not _ok("mgsinθ", "m g \\cos\\theta")
    assert not _ok("mgsinθ", "m g \\theta")
