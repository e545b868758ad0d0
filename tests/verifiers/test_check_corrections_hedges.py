"""Which answer an output commits to when it states more than one: the last committed answer after a
self-correction (a cue such as "Wait", "Actually", "I made an error", "let me verify" and a restated value);
hedges and alternatives ("3 or 4", "$4 m/s$ or $8 m/s$", "(A) or (D)") are none of their values; committed
statements that disagree with no correction cue between them, and loops that do not agree, commit to nothing;
what follows the answer (a conclusion with another value, a value under a condition, ", giving ...", ", but
...", a remark) is read.  Rows: (prediction, gold, expected, origin[, kind]), see _check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check
from verifiers.extract import read_letters


def _corrected(table):
    """(prediction, new, old, origin[, kind]) -> the rows: the new answer read, the old one not."""
    out = []
    for pred, new, old, origin, *kind in table:
        out += [(pred, new, True, origin, *kind), (pred, old, False, origin, *kind)]
    return out


# --- self-corrections: the last committed answer counts --------------------------------------------------

CORRECTED = _corrected([
    ("The answer is C. Actually, let me reconsider: B.", "B", "C", "round2"),
    ("The speed is 5 m/s. Wait, that's wrong; it should be 6 m/s.", "6 m/s", "5 m/s", "round2"),
    (r"\boxed{5} Hmm, I made an error above. The correct value is \boxed{7}.", "7", "5", "round2"),
    ("Answer: 12 J. On second thought, the work is 16 J.", "16 J", "12 J", "round2"),
    ("So the current is 2 A. No wait, I forgot the second resistor: the current is 1.5 A.", "1.5 A", "2 A", "round2"),
    ("The answer is (A). Correction: the answer is (D).", "D", "A", "round2"),
    (r"\boxed{mgh}. Wait, that's wrong; it should be $mgL$.", "m*g*L", "m*g*h", "round2", "symbolic"),
    # the sentence after a correction cue runs to a stop followed by a space: the point of "9.81" or "2.45 m"
    # is no stop (the corrected value was cut at its decimal point and the first answer kept)
    ("Final answer: 2.9 m/s.\nHmm, actually with g = 9.81 the speed is v = 3.13 m/s.", "3.13 m/s", "2.9 m/s",
     "round5"),
    ("The answer is 12.0 N. Oh wait, I forgot the 0.5 factor; the tension is 6.0 N.", "6.0 N", "12.0 N", "round5"),
    ("Answer: 0.45 A\nCorrection: the resistors are in parallel, so the current is 1.8 A.", "1.8 A", "0.45 A",
     "round5"),
    ("The answer is 7.5 J.\nWait, I should take h = 2.5 m: E = 3 x 9.8 x 2.5 = 73.5 J.", "73.5 J", "7.5 J", "round5"),
    # "let me check / verify / double-check" before a recomputed, restated value is a correction cue
    ("So the answer is 120 W. Let me verify: P = V^2/R = 144/1.5 = 96 W. So the answer is 96 W.", "96 W", "120 W",
     "round5"),
    ("Final answer: 3 s\nLet me double-check with t = d/v = 45/20 = 2.25 s. Final answer: 2.25 s", "2.25 s", "3 s",
     "round5"),
    # a correction stated with a contraction ("it's B") or concluded with "so" (heldout6:c252, c253, c273)
    ("The correct choice is C. Actually, I made an arithmetic slip; it's B.", "B", "C", "heldout6:c252", "mcq"),
    ("The correct option is A. Wait, I dropped a sign, so it's D.", "D", "A", "round6", "mcq"),
    ("I'd go with option B. Oops, that's for the other case; the one we want is C... no wait, it's A.", "A", "B",
     "round6", "mcq"),
    ("Option C is correct. I made a sign error: that's D.", "D", "C", "round6", "mcq"),
    ("The correct statements are B, C, D. Wait, C is wrong since the field is zero inside; so B and D.", "BD",
     "BCD", "round6", "mcq_multi"),
    ("The true statements are A and C. Actually, A fails at high speed, so only C... hmm, so C and D.", "CD", "AC",
     "round6", "mcq_multi"),
    ("Correct options: A, B. Wait, I misread B; thus A and D.", "AD", "AB", "round6", "mcq_multi"),
    ("The speed is 5 m/s. Wait, I forgot the factor of 2, so 10 m/s.", "10 m/s", "5 m/s", "round6"),
    ("The energy is 8 J. Wait, I made a typo, it's 6 J.", "6 J", "8 J", "round6-review"),
    ("The answer is 5 m. Wait, I forgot the return trip, therefore 10 m.", "10 m", "5 m", "round6-review"),
    ("The speed is 5 m/s. Wait, I forgot the factor of 2, so 10 m/s.", "10 m/s", "5 m/s", "round6-review"),
    ("The speed is 5 m/s. Wait, so 4 meters per second.", "4 m/s", "5 m/s", "round6-review"),
    ("The answer is 8 J. Actually, it's about 6 J.", "6 J", "8 J", "round6-review"),
]) + [
    ("At first I found 8.1 m/s, but redoing the square root gives v = 9.0 m/s.", "8.1 m/s", False, "round3"),
    ("Answer: (B)\nHmm, maybe I choose option C instead?\nNo - the correct answer is (B).", "B", True, "round2", "mcq"),
    ("The answer is 96 W. Let me check: 144/1.5 = 96 W. Yes, the answer is 96 W.", "96 W", True, "round5"),
    # with no cue between them, two committed values that disagree are still refused
    ("The answer is 120 W. Then P = 144/1.5 = 96 W. So the answer is 96 W.", "96 W", False, "round5"),
    ("The answer is 8 J. I made a sign error; it's -8 J.", "-8 J", True, "round6-review"),
    ("Answer: A. Actually, that's B, not C.", "B", True, "round6-review", "mcq"),
    ("Answer: (C)\nWait, I mixed up the signs; recomputing gives option A.\nAnswer: (A)", "A", True, "round4", "mcq"),
    ("**Answer: (D)**\n\nLet me re-check the units: the question wants the period.\n\n**Answer: (B)**", "B", True,
     "round4", "mcq"),
    ("KE is lost, so (A) is false.\n\n<final_answer>\\boxed{C}</final_answer>", "C", True, "round4", "mcq"),
    ("Answer: (D)\nWait, the sign flips, so the answer is (A).", "A", True, "round4", "mcq"),
    ("The answer is 12 N. Let me check the lighter block, a = 3 m/s^2, so 6 N.", "12 N", True, "round6-review"),
]


@pytest.mark.parametrize("row", rows(CORRECTED))
def test_the_last_committed_answer_counts(row):
    assert_row(check, row)


# corrections that still hedge, name no option, are qualified by a remark or a condition, or only state
# working, are no new answer
NOT_CORRECTIONS = [
    ("The correct choice is C. Actually, it's B or D.", "B", False, "round6", "mcq"),
    ("The correct statements are A, C. Wait, so B or D.", "BD", False, "round6", "mcq_multi"),
    ("The answer is 3.0e8 m/s. Actually, that's c.", "3.0e8 m/s", True, "round6"),  # "c", the speed of light
    ("The answer is B. A common mistake is to choose C.", "C", False, "round6", "mcq"),  # no self-correction
    ("The answer is (A).\nActually, it should be (C)... though (B) is close too, so C or B.", "C", False, "round5",
     "mcq"),
    ("The answer is 4 m. Actually it should be 2.5 m... or maybe 3.5 m.", "2.5 m", False, "round5"),
    ("The answer is 2.5 s. Wait, actually it should be 3.5 s. Hmm, or 2.5 s.", "3.5 s", False, "round5"),
    ("The answer is 2.5 s. Wait, actually it should be 3.5 s. Hmm, or 2.5 s.", "2.5 s", False, "round5"),
    ("Final answer: 7 N\nWell, or 9 N.", "7 N", False, "round5"),
    # after a cue, "it's" / "that's" / "so" followed by a value that a remark qualifies
    ("The answer is 3 s. Wait, that's 2 s longer than the first estimate.", "2 s", False, "round6-review"),
    ("The answer is 8 J. Wait, it's 6 J less than that.", "6 J", False, "round6-review"),
    ("The answer is 8 J. Actually, that's 6 J more than needed.", "6 J", False, "round6-review"),
    ("The answer is 8 J. Actually, it's 6 J per block.", "6 J", False, "round6-review"),
    ("The tension is 12 N. Wait, the rope has two segments, so 6 N each.", "6 N", False, "round6-review"),
    ("\\boxed{10 \\text{ m/s}}. Wait, it's 5 m/s faster than the bus.", "5 m/s", False, "round6-review"),
    ("The speed of the car is 20 m/s. Wait, it's 5 m/s faster than the truck.", "5 m/s", False, "round6-trailing"),
    # a hedged or conditional correction
    ("The answer is 8 J. Actually, it's 6 J, if not 7 J.", "6 J", False, "round6-review"),
    ("The answer is 5 m. Wait, so 10 m maybe.", "10 m", False, "round6-review"),
    ("The answer is 5 m. Wait, so 10 m maybe.", "5 m", False, "round6-review"),  # the first answer was taken back
    ("The answer is 5 m. Let me check: if a = 2, so 10 m.", "10 m", False, "round6-review"),
    ("The answer is 5. Actually, so 3, 4, or 5.", "5", False, "round6-review"),
    ("\\boxed{8 J}. Wait, I made an arithmetic slip, so either 6 J or 8 J.", "8 J", False, "round6-review"),
    ("\\boxed{8 J}. Wait, I made an arithmetic slip, so either 6 J or 8 J.", "6 J", False, "round6-review"),
    ("The answer is 12 N. Let me check the lighter block, a = 3 m/s^2, so 6 N.", "6 N", False, "round6-review"),
    ("The answer is 8 J. If I made a sign error, it would be -8 J.", "-8 J", False, "round6-review"),
    ("The answer is 8 J. Had I made a sign error, it's -8 J.", "-8 J", False, "round6-review"),
    # a corrected letter list taken back is no answer
    ("The answer is A. Wait, so A, B and D... no, just A.", "ABD", False, "round6-review", "mcq_multi"),
    ("The answer is A. Wait, so A, B and D... no, just A.", "A", True, "round6-review", "mcq"),
    ("The answer is A. Wait, so B and D... no.", "BD", False, "round6-review", "mcq_multi"),
    # a correction that states a total and a part takes the earlier answer back without committing to one
    ("The answer is 20 m. Wait, so 10 m total, 5 m each way.", "20 m", False, "round6-trailing"),
    ("The answer is 20 m. Wait, so 10 m total, 5 m each way.", "5 m", False, "round6-trailing"),
    ("so 10 m total, 5 m each way", "5 m", False, "round6-trailing"),
    ("The speed is 5 m/s. Wait, I forgot the factor of 2, so 10 m/s.", "10 m/s", True, "round6-trailing"),
]


@pytest.mark.parametrize("row", rows(NOT_CORRECTIONS))
def test_a_correction_that_hedges_or_is_qualified_is_no_new_answer(row):
    assert_row(check, row)


# --- hedges and alternatives: several values are none of them -------------------------------------------------

RANGES = [  # (prediction, the values it names, origin)
    ("2 through 5", ("2", "5")),
    ("2..5", ("2", "5")),
    ("3 m/s (4 m/s with friction)", ("3 m/s", "4 m/s")),
    (r"\boxed{3} or \boxed{4}", ("3", "4")),
    ("The answer is between 2 and 5 m.", ("2 m", "5 m")),
    ("from 3 to 4 s", ("3 s", "4 s")),
    (r"\boxed{3}, \boxed{4}", ("3", "4")),
    ("The answer is 3 m/s (or 4 m/s if air resistance counts).", ("3 m/s", "4 m/s")),
    ("It is 6 J, but it could also be 8 J.", ("6 J", "8 J")),
    ("\\boxed{6\\ \\mathrm{J}}\nAlternatively, 8 J.", ("6 J", "8 J")),
]
HEDGED_SPANS = ["$4 m/s$ or $8 m/s$", "**4 m/s** (or **8 m/s**)", "It is $4\\,\\mathrm{m/s}$, or perhaps $8\\,\\mathrm{m/s}$"]
HEDGES = [(p, g, False, "round2") for p, gs in RANGES for g in gs] + [
    (p, g, False, "round4") for p in HEDGED_SPANS for g in ("8 m/s", "4 m/s")] + [
    (r"\boxed{B}. Or maybe C.", "B", False, "round2", "mcq"),
    ("The answer is (B), alternatively (D).", "B", False, "round2", "mcq"),
    (r"\boxed{3} or 4", "3", False, "round2"),
    (r"\boxed{mgh}. Or it could be m g L.", "m*g*h", False, "round2", "symbolic"),
    (r"The answer is $\sqrt{2gh}$. Alternatively $\sqrt{gh}$.", r"\sqrt{2gh}", False, "round2", "symbolic"),
    # remarks after the answer are no alternatives; a last span without an alternative reads
    (r"\boxed{5\ \mathrm{m/s}}. Either way, the block stops.", "5 m/s", True, "round2"),
    (r"\boxed{mgh}. Wait, let me verify: yes, the energy is mgh.", "m*g*h", True, "round2"),
    ("The speed is $8 m/s$", "8 m/s", True, "round4"),
    ("From $v = at$ we get **8 m/s**", "8 m/s", True, "round4"),
    # an answer that states several values is the reference only when every value it states matches (the same
    # quantity in other units); a hedge of two different values never is
    ("The work is W = F d = 250 × 4 = 1,000 J, i.e. 1 kJ.", "1000 J", True, "round4"),
    ("v = 20 m/s, or 72 km/h", "20 m/s", True, "round4"),
    ("v = 20 m/s, or 72 m/s", "20 m/s", False, "round4"),
    ("v = 20 m/s, or 72 m/s", "72 m/s", False, "round4"),
    ("It is 20 m/s or at least 20 m/s", "20 m/s", False, "round4"),
    ("It is 20 m/s or 20 m", "20 m/s", False, "round4"),
]


@pytest.mark.parametrize("row", rows(HEDGES))
def test_hedges_and_alternatives_are_refused(row):
    assert_row(check, row)


# letter hedges: none may read as either letter
LETTER_HEDGES = [
    "**(A)** or **(D)**",
    "The best option is **(A)** or **(D)**",
    "Option A is correct, though option D might be.",
    "A\n\nD",
    "(A)\n(D)",
    "A\n\nThe answer is: D",
    "Therefore A. Therefore D.",
    "Hence (A) is correct. Hence (D) is correct.",
]


@pytest.mark.parametrize("row", rows([(p, g, False, "round4", "mcq") for p in LETTER_HEDGES for g in "AD"] + [
    ("**B** or **D**", "B", False, "round6", "mcq")]))
def test_letter_hedges_read_as_neither_letter(row):
    assert_row(check, row)


# letters joined by "or" are alternatives, never the set (bold or not, the "or" in emphasis or capitals)
@pytest.mark.parametrize("pred", [
    "**B** or **D**", "B or D", "The answer is B or D.", "The correct options are (B) or (D).",  # round6
    "**B** *or* **D**", "B _or_ D", "B **or** D", "The answer is B OR D",  # round6-review
    "The answer is B Or D", "The answer is B or, D",
])
def test_letters_joined_by_or_are_alternatives(pred):
    assert not check(pred, "BD", kind="mcq_multi").equivalent, pred
    assert read_letters(pred).refused, pred


# --- committed statements that disagree, and loops ------------------------------------------------------
# two committed answers (box, tag, "Final answer:", "The answer is") that disagree with no correction cue
# between them: the output never commits to one; an output that repeats its answer's sentence three or more
# times commits only when every complete copy states the same value

LOOP_BOAT = ("The final velocity of the boat is v(1+m/N) where m is the mass of the man and N the number of ... "
             * 40)
LOOP_MOMENTUM = "So the momentum is conserved and p = mv(1 + M/m) and " * 30
TRUNCATED = ("Therefore, the final answer is 12 m/s.\n" * 4) + "Therefore, the final answer is 12"
DISAGREE = [
    ("\\boxed{12 N}\n\nSo the answer is 15 N.", "15 N", False, "round3"),
    ("Final answer: 2.0 s\n\nFinal answer: 2.5 s", "2.5 s", False, "round3"),
    ("Answer: 40 J\nFinal answer: 45 J", "45 J", False, "round3"),
    ("<final_answer>\\boxed{7} or \\boxed{8}</final_answer>", "8", False, "round3", "integer"),
    ("\\boxed{2.5 s}\n\nFinal answer: 2.5 s", "2.5 s", True, "round3"),
    ("Answer: 1500 J\n\nFinal answer: 1.5 kJ", "1.5 kJ", True, "round3"),  # the same value in other units
    ("Answer: 40 J. Wait, that is wrong; the answer is 45 J.", "45 J", True, "round3"),
    ("Final answer: (D)\nFinal answer: (A)\nFinal answer: (D)\nFinal answer:", "D", False, "round4", "mcq"),
    ("The answer is (A). The answer is (B). The answer is (A). The answer is (B). The answer is", "B", False,
     "round4", "mcq"),
    ("The answer is (A). The answer is (B). The answer is (A). The answer is (B). The answer is", "A", False,
     "round4", "mcq"),
    ("Answer: C\nSome more words here.\nAnswer: B", "B", False, "round4", "mcq"),
    ("Answer: C\nAnswer: C\nAnswer: C\nAnswer:", "C", True, "round4", "mcq"),
    ("(C)/(B)/(C)/(D)", "D", False, "round2", "mcq"),
    ("The answer is (C)/(B)/(C)/(D)/(C)/(B)/(D)", "D", False, "round2", "mcq"),
    ("Answer: (C)\nAnswer: (B)\nAnswer: (C)\nAnswer: (D)\nAnswer: (C)\nAnswer: (D)", "D", False, "round2", "mcq"),
    ("C or B or D", "D", False, "round2", "mcq"),
    (LOOP_BOAT, "1", False, "round2"),  # a looping answer without a value
    (LOOP_BOAT + "The final velocity is v(1+m/N", "1 m/s", False, "round2"),
    (LOOP_MOMENTUM, "1", False, "round2"),
    ("The power is 35 A. " * 5 + "The power is 35", "35 W", False, "round2"),  # the complete copies are read
    (TRUNCATED, "12 km/s", False, "round2"),
    (TRUNCATED, "12 m/s", True, "round2"),
    ("The tension is 24 N. The tension is 24 N. The tension is 2.4 N. The tension is 24 N.", "24 N", False,
     "round5"),
    ("The tension is 24 N. The tension is 24 N. The tension is 2.4 N. The tension is 24 N.", "2.4 N", False,
     "round5"),
    ("So the range is 40 m.\nSo the range is 40 m.\nSo the range is 44 m.\nSo the range is 40 m.\nSo the ran",
     "40 m", False, "round5"),
    ("The tension is 24 N. The tension is 24 N. The tension is 24 N. The tension is 24", "24 N", True, "round5"),
    ("The tension is 24 N. The tension is 0.024 kN. The tension is 24 N.", "24 N", True, "round5"),
    # a sentence stated twice with different values is working, not a loop: the last one reads
    ("At first the speed is 3 m/s. Later the speed is 5 m/s.", "5 m/s", True, "round5"),
]


@pytest.mark.parametrize("row", rows(DISAGREE))
def test_disagreeing_statements_and_loops_commit_to_nothing(row):
    assert_row(check, row)


# --- what follows the answer is read --------------------------------------------------------------------------
# a right box plus a wrong or hedged statement after it is not right; a concluding sentence ("So ...",
# "Thus ...") after the committed answer that states another value of the answer's dimension ends the output
# on another value; a value stated under a condition is another answer; "i.e." and "e.g." are no sentence
# ends; ", so R = <value>" ends a sentence with its conclusion

AFTER = [
    (r"\boxed{5} The answer is 6.", "5", False, "round2"),
    (r"\boxed{5\ \mathrm{m/s}}. So the answer is 5 or 6 m/s.", "5 m/s", False, "round2"),
    (r"The final answer is \boxed{5}. The answer is at least 5.", "5", False, "round2"),
    ("<final_answer>5 m/s</final_answer>\nThe answer is 7 m/s.", "5 m/s", False, "round2"),
    (r"Thus \boxed{12\ \mathrm{J}}. The final answer is 12 J or 14 J.", "12 J", False, "round2"),
    (r"\boxed{B} The answer is C.", "B", False, "round2"),
    (r"\boxed{5} The answer is 5.", "5", True, "round2"),
    (r"The answer is \boxed{5\ \mathrm{m/s}}. This is 2 m/s faster than the cart.", "5 m/s", True, "round2"),
    (r"\boxed{5}. I hope it is correct.", "5", True, "round2"),
    ("The answer is 12 J. Let me check this once more: W = F d = 4 × 2.5 = 10 J. Therefore 10 J.", "12 J", False,
     "round4"),
    ("\\boxed{4.9\\ \\mathrm{m/s}}\n\nThus the speed at the bottom is 7.0 m/s.", "4.9 m/s", False, "round4"),
    ("<final_answer>\\boxed{250\\ \\text{Pa}}</final_answer>\n\nHence the gauge pressure is 300 Pa.", "250 Pa", False,
     "round4"),
    ("Final answer: 3 A\n\nSo the current is 0.5 A.", "3 A", False, "round4"),
    ("\\boxed{4.9\\ \\mathrm{m/s}}\n\nSo the speed is about 17.6 km/h.", "4.9 m/s", True, "round4"),
    ("\\boxed{4.9\\ \\mathrm{m/s}}\n\nSo it takes 0.5 s to get there.", "4.9 m/s", True, "round4"),
    ("The answer is 12 J. Therefore the work done is 12 J.", "12 J", True, "round4"),
    ("Final answer: 12 J\n(If the surface is rough: 9 J)", "12 J", False, "round4"),
    ("The answer is 12 J. With friction it would be 9 J.", "12 J", False, "round4"),
    ("The answer is 12 J. With friction it would be 9 J.", "9 J", False, "round4"),
    ("Final answer: 12 J\n(if g = 9.8 m/s^2)", "12 J", True, "round4"),  # a condition that states an assumption
    ("\\boxed{12 J}. If we convert, 0.012 kJ.", "12 J", True, "round4"),
    ("for t from 1 s to 3 s inclusive, i.e. [1, 3] s", "[1 s, 3 s]", True, "round4"),
    ("The answer is 10 m/s, i.e. 36 km/h.", "10 m/s", True, "round4"),
    ("The answer is 10 m/s, i.e. 12 m/s.", "10 m/s", False, "round4"),
    ("The answer is 10 m/s, i.e. 12 m/s.", "12 m/s", False, "round4"),
    ("Adding conductances, 1/R = 1/4 + 1/4 = 1/2, so R = 2 Ω.", "2 Ω", True, "round4"),
    ("Adding conductances, 1/R = 1/4 + 1/4 = 1/2, so R = 2 Ω.", "0.5 Ω", False, "round4"),
    ("The answer is 12 N, so the cable holds.", "12 N", True, "round4"),  # a clause with no value is prose
    ("The answer is 12 N, so F = 10 N", "10 N", False, "round4"),  # a so-clause after a stated answer
    # a value with its reason after it ("because", "since"); a reason that holds another value is not cut
    ("The answer is 5 m/s because the speed is constant.", "5 m/s", True, "round6"),
    ("The answer is 5 m/s because the speed is constant.", "6 m/s", False, "round6"),
    ("We discard x = 4 m since it is too far, so x = 1.5 m.", "4 m", False, "round6"),
    ("x = 3 or x = -5; since x must be positive, x = 3 m.", "3 m", True, "round6"),
    # a value for each case ("12 N if ..., otherwise 10 N") is no one answer; a condition after the value
    # ("x = 9 m when t = 3 s") is not the value
    ("The force is 12 N if the surface is rough, otherwise 10 N.", "10 N", False, "round6-trailing"),
    ("The force is 12 N if the surface is rough, otherwise 10 N.", "12 N", False, "round6-trailing"),
    ("it's 12 N if the surface is rough, otherwise 10 N", "10 N", False, "round6-trailing"),
    ("The answer is 8 N. Wait, it's 12 N if the surface is rough, otherwise 10 N.", "10 N", False, "round6-trailing"),
    ("The answer is 8 N. Wait, it's 12 N if the surface is rough, otherwise 10 N.", "8 N", False, "round6-trailing"),
    ("The answer is 12 N if rough, or else 10 N.", "10 N", False, "round6-trailing"),
    ("giving x = 9 m when t = 3 s", "3 s", False, "round6-trailing"),
    ("The position is x = 9 m at t = 3 s.", "3 s", False, "round6-trailing"),
    ("v = 4 m/s when t = 2 s", "2 s", False, "round6-trailing"),
    ("giving x = 9 m when t = 3 s", "9 m", True, "round6-trailing"),
    ("v = 4 m/s when t = 2 s", "4 m/s", True, "round6-trailing"),
    ("The answer is 12 N. Otherwise the block would slide.", "12 N", True, "round6-trailing"),
]


@pytest.mark.parametrize("row", rows(AFTER))
def test_what_follows_the_answer_is_read(row):
    assert_row(check, row)


# the value a working ends on after ", giving" (heldout6:c287), only where the working ends on it
GIVING = [
    ("The electron drops to n = 1 from n = 3, giving 3 lines.", "3", True, "heldout6:c287", "integer"),
    ("From n = 4 down to n = 1, yielding 6 lines.", "6", True, "round6", "integer"),
    ("Adding the 2 and the 4 rolls, for a total of 6 outcomes.", "6", True, "round6", "integer"),
    ("With v = 5 m/s and m = 2 kg, E = mv^2/2, giving 25 J.", "25 J", True, "round6"),
    ("With n = 3 levels, giving 3 lines.", "4", False, "round6", "integer"),
    ("The electron drops to n = 1 from n = 3, giving 3 lines.", "1", False, "round6", "integer"),
    ("Solving with a = 2 m/s^2 gives t = 3 s, giving 3 s or 4 s.", "3 s", False, "round6"),
    ("v = 5 m/s, giving a kinetic energy of 12 J.", "12 J", False, "round6"),  # words after "giving": not cut
    ("n = 3, giving 9 lines, and subtracting the 2 forbidden transitions leaves 7.", "9", False, "round6-review",
     "integer"),
    ("Starting from n = 3, giving 9 lines or fewer.", "9", False, "round6-review", "integer"),
    ("E = mv^2/2, giving 25 J, which is then split equally between the 5 blocks.", "25 J", False, "round6-review"),
    ("E = mv^2/2, giving 25 J per block, so 50 J in total.", "25 J", False, "round6-review"),
    ("The answer is 50 J, giving 25 J per block.", "25 J", False, "round6-review"),
    ("This would be 2 s, giving 4 m.", "4 m", False, "round6-review"),
    ("The electron drops to n = 1 from n = 3, giving 3 lines.", "3", True, "round6-review", "integer"),
    ("With v = 5 m/s and m = 2 kg, E = mv^2/2, giving 25 J.", "25 J", True, "round6-review"),
]


@pytest.mark.parametrize("row", rows(GIVING))
def test_the_value_after_giving(row):
    assert_row(check, row)


# a hypothetical value before ", but", the committed one after it (heldout6:c372); after ", but" the value is
# the answer only when stated plainly at the end
C372 = ("The roots are t = 2 s and t = -1 s. Keeping the positive one would give 2 s, but since the question asks "
        "for the earlier time, t = -1 s.")
BUT = [
    (C372, "2 s", False, "heldout6:c372"),  # the rejected root was accepted
    (C372, "-1 s", True, "heldout6:c372"),
    ("Taking the larger root would give x = 4 m, but the block stops first, so x = 1.5 m.", "1.5 m", True, "round6"),
    ("Taking the larger root would give x = 4 m, but the block stops first, so x = 1.5 m.", "4 m", False, "round6"),
    ("Ignoring friction the speed would be 10 m/s, but with friction the speed is 8 m/s.", "8 m/s", True, "round6"),
    ("Ignoring friction the speed would be 10 m/s, but with friction the speed is 8 m/s.", "10 m/s", False, "round6"),
    ("The answer is 12 N, but with friction it would be 10 N.", "12 N", True, "round6"),
    ("The answer is 12 N, but with friction it would be 10 N.", "10 N", False, "round6"),
    # both hypothetical, or a hedge after "but": no commitment to the second value
    ("t = 2 s would be the answer, but with air drag it would be 1.8 s.", "1.8 s", False, "round6"),
    ("It would give 2 s, but maybe t = 3 s.", "3 s", False, "round6"),
    ("The answer would be 12 N, but it could also be 10 N.", "10 N", False, "round6"),
    ("t would be 2 s, but the root t = -1 s must be discarded.", "-1 s", False, "round6-review"),
    ("It would be 2 s, but some argue t = 3 s.", "3 s", False, "round6-review"),
    ("It could be 2 s, but t = 3 s is also possible.", "3 s", False, "round6-review"),
    ("The time would be 2 s, but with t = 3 s it overshoots.", "3 s", False, "round6-review"),
    ("It would be 2 s, but t = 3 s is only an upper bound.", "3 s", False, "round6-review"),
    ("It would be 2 s, but I doubt t = 3 s.", "3 s", False, "round6-review"),
    ("It would be 2 s, but t = 3 s is an estimate, I'm unsure.", "3 s", False, "round6-review"),
    ("Ignoring drag, t would be 2 s, but drag makes t = 2.5 s.", "2.5 s", True, "round6-review"),
    ("Naively it would be 2 s, but the correct value is 3 s.", "3 s", True, "round6-review"),
]


@pytest.mark.parametrize("row", rows(BUT))
def test_a_value_before_but(row):
    assert_row(check, row)
