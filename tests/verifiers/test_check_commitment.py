"""Which value a response commits to (issue 54): a value followed by its own rejection, a self-correction
after a dash or "wait", a letter written with another option's value, a boxed value overridden by the value
the response settles on, looping working that never states a value.  Each row is (response, gold, kind,
expected verdict); every class has true and false twins."""
import pytest

from verifiers.answer import check

LENGTHS = {"A": "4 m", "B": "8 m", "C": "12 m", "D": "16 m"}

# a value followed by its own negation or rejection: the response takes back the value it wrote
NEGATION = [
    ("5 - no, that is false", "5", None, False),
    ("The answer is 5 m/s - no, that is false.", "5 m/s", None, False),
    ("5 doesn't work", "5", None, False),
    ("v = 5 m/s. Hmm, 5 m/s doesn't work.", "5 m/s", None, False),
    ("The speed is 5 m/s. 5 m/s doesn't work.", "5 m/s", None, False),
    ("The answer is 5 m/s. No, that is wrong.", "5 m/s", None, False),
    ("The answer is 5 m/s. That's wrong.", "5 m/s", None, False),
    ("The answer is 5 m/s - no.", "5 m/s", None, False),
    # twins: a rejected value with another one stated, a "no" that rejects nothing, a wrong method noted
    ("5 m/s doesn't work, so the speed is 7 m/s.", "7 m/s", None, True),
    ("The net force is 5 N, no friction acts.", "5 N", None, True),
    ("The answer is 5 m/s. It is wrong to use g = 10 here, but that changes nothing.", "5 m/s", None, True),
    ("The answer is 5 m/s.", "5 m/s", None, True),
]

# a self-correction after a dash or "wait": the last committed value wins
SELF_CORRECTION = [
    ("(C) - wait, no, (B)", "C", "mcq", False),
    ("(C) - wait, no, (B)", "B", "mcq", True),
    ("The answer is (C) - wait, no, (B).", "C", "mcq", False),
    ("The answer is (C) - wait, no, (B).", "B", "mcq", True),
    ("A. No wait - B.", "B", "mcq", True),
    (r"\boxed{12 N}. Wait, no, 10 N.", "12 N", None, False),
    (r"\boxed{12 N}. Wait, no, 10 N.", "10 N", None, True),
    ("The answer is 5 m/s - wait, no, 7 m/s.", "5 m/s", None, False),
    ("The answer is 5 m/s - wait, no, 7 m/s.", "7 m/s", None, True),
    ("The answer is 12 N. Actually, 2 forces act on the block.", "12 N", None, True),  # no value alone
    ("The answer is 5 m/s. Is that wrong? No.", "5 m/s", None, True),  # the "no" answers a question
]

# a letter followed by a DIFFERENT option's text is ambiguous: refused; with its own text it reads
LETTER_TEXT = [
    ("(B) 12 m", "B", "mcq", False),
    ("(B) 12 m", "C", "mcq", False),
    (r"\boxed{B} 12 m", "B", "mcq", False),
    (r"\boxed{B} 12 m", "C", "mcq", False),
    (r"\boxed{B} 8 m", "B", "mcq", True),
    (r"\boxed{B}. 12 m is the distance travelled in the first second.", "B", "mcq", True),
    ("The answer is (B) 8 m.", "B", "mcq", True),
]

# a boxed value later overridden by a different value the response settles on; looping output that never
# commits (working repeated, no value stated)
LOOP = "&= 16 \\times 2^{-2}\n" * 6 + "&= 16 \\ti"
OVERRIDE_AND_LOOPS = [
    ("\\boxed{5 m/s}\n\nBut using energy conservation: v = 7 m/s. The speed is 7 m/s.", "5 m/s", None, False),
    ("\\boxed{5 m/s}\n\nBut using energy conservation: v = 7 m/s. The speed is 7 m/s.", "7 m/s", None, False),
    ("\\boxed{5 m/s}\n\nCheck with energy conservation: the speed is 5 m/s.", "5 m/s", None, True),
    ("\\boxed{5 m/s}\n\nThe kinetic energy is then 25 J.", "5 m/s", None, True),
    ("\\boxed{5 m/s}\n\nwhere the initial speed is 3 m/s.", "5 m/s", None, True),
    (LOOP, "4", "integer", False),
    ("= 5 \\times 2^{-1}\n" * 6, "2.5", None, False),
    ("n = 4\n" * 9 + "n =", "4", "integer", True),  # a loop that states its value each time agrees on it
    ("The tension is 24 N. " * 4, "24 N", None, True),
]


@pytest.mark.parametrize("pred, gold, kind, expected", NEGATION + SELF_CORRECTION + OVERRIDE_AND_LOOPS)
def test_commitment(pred, gold, kind, expected):
    assert check(pred, gold, kind).equivalent is expected


@pytest.mark.parametrize("pred, gold, kind, expected", LETTER_TEXT)
def test_letter_with_option_text(pred, gold, kind, expected):
    assert check(pred, gold, kind, options=LENGTHS).equivalent is expected
