"""An adversarial review of checker round six (commit 3b6f560): the false positives its new rules opened,
each fixed in general form.  Every case here was accepted by the round-6 checker; a careful grader marks it
wrong (the last committed answer counts; hedges, bounds, remarks and numbers in working do not).  Near
misses that must stay accepted sit next to each class."""
import pytest

from verifiers import check
from verifiers.extract import read_letters


def _ok(pred, ref, kind=None, **kw):
    return check(pred, ref, kind=kind, **kw).equivalent


# --- after a correction cue, "it's" / "that's" / "so" followed by a value that a remark qualifies ----------

@pytest.mark.parametrize("pred,gold", [
    ("The answer is 3 s. Wait, that's 2 s longer than the first estimate.", "2 s"),
    ("The answer is 8 J. Wait, it's 6 J less than that.", "6 J"),
    ("The answer is 8 J. Actually, that's 6 J more than needed.", "6 J"),
    ("The answer is 8 J. Actually, it's 6 J per block.", "6 J"),
    ("The tension is 12 N. Wait, the rope has two segments, so 6 N each.", "6 N"),
    ("\\boxed{10 \\text{ m/s}}. Wait, it's 5 m/s faster than the bus.", "5 m/s"),
])
def test_a_qualified_value_after_its_or_so_is_no_correction(pred, gold):
    assert not _ok(pred, gold)


@pytest.mark.parametrize("pred,gold", [
    ("The answer is 8 J. Actually, it's 6 J, if not 7 J.", "6 J"),
    ("The answer is 5 m. Wait, so 10 m maybe.", "10 m"),
    ("The answer is 5 m. Wait, so 10 m maybe.", "5 m"),  # the first answer was taken back
    ("The answer is 5 m. Let me check: if a = 2, so 10 m.", "10 m"),
    ("The answer is 5. Actually, so 3, 4, or 5.", "5"),
    ("\\boxed{8 J}. Wait, I made an arithmetic slip, so either 6 J or 8 J.", "8 J"),
    ("\\boxed{8 J}. Wait, I made an arithmetic slip, so either 6 J or 8 J.", "6 J"),
])
def test_a_hedged_or_conditional_correction_is_refused(pred, gold):
    assert not _ok(pred, gold)


def test_after_let_me_check_so_states_working_not_a_new_answer():
    pred = "The answer is 12 N. Let me check the lighter block, a = 3 m/s^2, so 6 N."
    assert not _ok(pred, "6 N")
    assert _ok(pred, "12 N")


@pytest.mark.parametrize("pred,new,old", [
    ("The energy is 8 J. Wait, I made a typo, it's 6 J.", "6 J", "8 J"),
    ("The answer is 5 m. Wait, I forgot the return trip, therefore 10 m.", "10 m", "5 m"),
    ("The speed is 5 m/s. Wait, I forgot the factor of 2, so 10 m/s.", "10 m/s", "5 m/s"),
    ("The speed is 5 m/s. Wait, so 4 meters per second.", "4 m/s", "5 m/s"),
    ("The answer is 8 J. Actually, it's about 6 J.", "6 J", "8 J"),
])
def test_plain_corrections_after_its_or_so_still_read(pred, new, old):
    assert _ok(pred, new)
    assert not _ok(pred, old)


def test_a_conditional_i_made_an_error_is_no_cue():
    assert not _ok("The answer is 8 J. If I made a sign error, it would be -8 J.", "-8 J")
    assert not _ok("The answer is 8 J. Had I made a sign error, it's -8 J.", "-8 J")
    assert _ok("The answer is 8 J. I made a sign error; it's -8 J.", "-8 J")


def test_a_corrected_letter_list_taken_back_is_no_answer():
    pred = "The answer is A. Wait, so A, B and D... no, just A."
    assert not _ok(pred, "ABD", kind="mcq_multi")
    assert _ok(pred, "A", kind="mcq")
    assert not _ok("The answer is A. Wait, so B and D... no.", "BD", kind="mcq_multi")
    assert _ok("Answer: A. Actually, that's B, not C.", "B", kind="mcq")


# --- "or" between two letters in emphasis or capitals ------------------------------------------------

@pytest.mark.parametrize("pred", ["**B** *or* **D**", "B _or_ D", "B **or** D", "The answer is B OR D",
                                  "The answer is B Or D", "The answer is B or, D"])
def test_letters_joined_by_an_emphasised_or_are_alternatives(pred):
    assert not _ok(pred, "BD", kind="mcq_multi")
    assert read_letters(pred).refused


def test_letters_joined_by_and_in_emphasis_stay_a_set():
    assert _ok("**B** *and* **D**", "BD", kind="mcq_multi")
    assert _ok("The correct options are **B** and **D**.", "BD", kind="mcq_multi")


# --- ", giving" only where the working ends on the value -------------------------------------------------

@pytest.mark.parametrize("pred,gold,kind", [
    ("n = 3, giving 9 lines, and subtracting the 2 forbidden transitions leaves 7.", "9", "integer"),
    ("Starting from n = 3, giving 9 lines or fewer.", "9", "integer"),
    ("E = mv^2/2, giving 25 J, which is then split equally between the 5 blocks.", "25 J", None),
    ("E = mv^2/2, giving 25 J per block, so 50 J in total.", "25 J", None),
    ("The answer is 50 J, giving 25 J per block.", "25 J", None),
    ("This would be 2 s, giving 4 m.", "4 m", None),
])
def test_a_value_after_giving_that_the_sentence_goes_on_from_is_not_the_answer(pred, gold, kind):
    assert not _ok(pred, gold, kind)


def test_giving_at_the_end_of_the_working_still_reads():
    assert _ok("The electron drops to n = 1 from n = 3, giving 3 lines.", "3", "integer")
    assert _ok("With v = 5 m/s and m = 2 kg, E = mv^2/2, giving 25 J.", "25 J")


# --- "x = 3, y = 4" only when it is stated as the answer ------------------------------------------------

@pytest.mark.parametrize("pred", [
    "x = 3 and y = 4 satisfy the first equation, but the solution is x = 1, y = 2.",
    "x = 3 (rejected), y = 4",
    "x = 3, y = 4?",
    "x = 3, y = 4 (not final)",
    "The point cannot be at x = 3 and y = 4.",
    "Suppose x = 3 and y = 4.",
    "Try x = 3, y = 4.",
    "Assume x = 3, y = 4.",
    "The wrong guess is x = 3, y = 4.",
    "Guessing x = 3, y = 4.",
    "Testing x = 3 and y = 4.",
    "We reject x = 3 and y = 4.",
])
def test_coordinates_not_stated_as_the_answer_are_refused(pred):
    assert not _ok(pred, "(3, 4)")


@pytest.mark.parametrize("pred,gold", [
    ("The point is at x = 3, y = 4.", "(3, 4)"),
    ("The solution is x = 3 and y = 4.", "(3, 4)"),
    ("It lands at x = 2 m and y = -1 m.", "(2 m, -1 m)"),
    ("x = 1 m, y = 2 m, z = 3 m", "(1, 2, 3) m"),
])
def test_coordinates_stated_as_the_answer_still_read(pred, gold):
    assert _ok(pred, gold)


# --- a value after ", but" is the answer only when stated plainly at the end ----------------------------

@pytest.mark.parametrize("pred,gold", [
    ("t would be 2 s, but the root t = -1 s must be discarded.", "-1 s"),
    ("It would be 2 s, but some argue t = 3 s.", "3 s"),
    ("It could be 2 s, but t = 3 s is also possible.", "3 s"),
    ("The time would be 2 s, but with t = 3 s it overshoots.", "3 s"),
    ("It would be 2 s, but t = 3 s is only an upper bound.", "3 s"),
    ("It would be 2 s, but I doubt t = 3 s.", "3 s"),
    ("It would be 2 s, but t = 3 s is an estimate, I'm unsure.", "3 s"),
])
def test_a_doubted_or_remarked_value_after_but_is_not_the_answer(pred, gold):
    assert not _ok(pred, gold)


def test_a_plain_value_after_but_still_reads():
    assert _ok("Ignoring drag, t would be 2 s, but drag makes t = 2.5 s.", "2.5 s")
    assert _ok("Naively it would be 2 s, but the correct value is 3 s.", "3 s")


# --- a bare number after a function name -------------------------------------------------------------

def test_ln_of_a_number_binds_to_the_number():
    assert not _ok("ln 2/λ", "\\ln(2/\\lambda)", kind="symbolic")
    assert _ok("ln 2/λ", "\\ln(2)/\\lambda", kind="symbolic")
    assert _ok("ln2/λ", "\\ln(2)/\\lambda", kind="symbolic")


# --- a unit after a box in a math span ----------------------------------------------------------------

def test_a_unit_after_a_boxed_math_span_is_its_unit():
    assert not _ok("$\\boxed{5}$ km", "5 m")
    assert _ok("$\\boxed{5}$ km", "5 km")
    assert _ok("$\\boxed{5}$ km", "5000 m")
