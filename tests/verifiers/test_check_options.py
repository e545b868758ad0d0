"""Multiple choice: letters in the words and forms models write ("Hence, (C) is correct.", "answer: c)",
"**B** and **D**", "The true statements are (a) and (c)"), a lone letter on the first line, an options
mapping or an option list the output writes itself (an option's text or value without its letter is that
letter; a letter written with another option's text is refused; a copied list is no choice), and option
numbers never read as values.  Letters offered as alternatives, looping or corrected:
test_check_corrections_hedges.py.  Rows: (prediction, gold, expected, origin[, kind[, options[, reason]]]), see
_check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

MM = {"A": "2.22 ± 0.02 mm", "B": "2.20 ± 0.01 mm", "C": "2.14 ± 0.02 mm", "D": "2.14 ± 0.01 mm"}
KMH = {"A": "72 km/h", "B": "90 km/h", "C": "108 km/h", "D": "120 km/h"}
SPEEDS = {"A": r"\frac{mv^2}{r}", "B": "2 m/s", "C": "4 m/s", "D": "8 m/s"}
ANGLES = {"A": "0°", "B": "30°", "C": "45°", "D": "60°"}
CM = {"A": r"$3.1 \pm 0.1 \mathrm{~cm}$", "B": r"$3.1 \pm 0.2 \mathrm{~cm}$",
      "C": "The field inside the conductor vanishes everywhere", "D": "The charge resides on the outer surface only"}
LENS = {"A": "the image is real and inverted", "B": "the image is virtual and upright",
        "C": "no image is formed", "D": "the image is real and upright"}
FACTORS = {"A": "halved", "B": "doubled", "C": "unchanged", "D": "quadrupled"}
FORCES = {"A": "2 N", "B": "4 N", "C": "6 N", "D": "8 N"}
TIMES = {"A": "2 s", "B": "4 s", "C": "6 s", "D": "8 s"}
LISTED = "Options:\nA) 2.0 m/s\nB) 3.1 m/s\nC) 4.43 m/s\nD) 6.0 m/s\n\n"  # an option list the output writes
FLUX = "A) increases  B) decreases  C) stays the same  D) reverses\n\n"

# --- letters in words -------------------------------------------------------------------------------------

WORDS = [
    ("Hence, (C) is correct.", "C", True, "round2", "mcq"),
    ("I'll go with C.", "C", True, "round2", "mcq"),
    ("**(C) 108 km/h**", "C", True, "round2", "mcq"),
    (r"\boxed{C. 108\text{ km/h}}", "C", True, "round2", "mcq"),
    ("<final_answer>(C) 108</final_answer>", "C", True, "round2", "mcq"),
    ("Therefore option (B) is the right one.", "B", True, "round2", "mcq"),
    ("So my answer: D", "D", True, "round2", "mcq"),
    ("The correct choice is thus (A).", "A", True, "round2", "mcq"),
    (r"$\boxed{\text{(B)}}$", "B", True, "round2", "mcq"),
    ("Thus, the answer is option C: 108 km/h.", "C", True, "round2", "mcq"),
    (r"\boxed{B}, \boxed{D}", "BD", True, "round2", "mcq_multi"),
    ("Both B and D are correct.", "BD", True, "round2", "mcq_multi"),
    ("[B, D]", "BD", True, "round2", "mcq_multi"),
    ("B;D", "BD", True, "round2", "mcq_multi"),
    ("The correct options are (A), (C).", "AC", True, "round2", "mcq_multi"),
    ("Answer: A, B and D", "ABD", True, "round2", "mcq_multi"),
    (r"\boxed{A, C}", "AC", True, "round2", "mcq_multi"),
    # letters in sentences: "the true/correct statements are ...", "... are all correct", a bold letter,
    # "Therefore C." (the letter is the sentence), a lowercase letter in parentheses, a lone lowercase letter
    ("The true statements are B and D.", "BD", True, "round3", "mcq_multi"),
    ("B, C and D are all correct.", "BCD", True, "round3", "mcq_multi"),
    ("Therefore the right option is **(D)**.", "D", True, "round3", "mcq"),
    ("So the answer is (c).", "C", True, "round3", "mcq"),
    ("So the answer is (c).", "A", False, "round3", "mcq"),
    ("The correct statements are (A) and (D).", "AD", True, "round4", "mcq_multi"),
    ("The true statements are A, B and D.", "ABD", True, "round4", "mcq_multi"),
    ("(A), (C) and (D) are all correct.", "ACD", True, "round4", "mcq_multi"),
    ("After comparing, the best option is **(C)**.", "C", True, "round4", "mcq"),
    ("A fails the units check and B the limit check. Thus C.", "C", True, "round4", "mcq"),
    ("So the correct answer is (d).", "D", True, "round4", "mcq"),
    ("c", "C", True, "round4", "mcq"),
    ("So the correct answer is (d).", "A", False, "round4", "mcq"),
    ("(A), (C) and (D) are all correct.", "AC", False, "round4", "mcq_multi"),
    ("So A ball of mass 2 kg is dropped.", "A", False, "round4", "mcq"),
    # a lowercase letter that is an answer statement's whole answer is the letter; "a" alone is the article
    ("the answer is a", "A", False, "round4", "mcq"),
    ("the answer is d = 4 m", "D", False, "round4", "mcq"),
    # a lowercase letter (b-h) or a list of them as a statement's whole answer; a lowercase letter in
    # parentheses; "(B) and (D) are correct" after "Hence"; "[B, D]" after "correct statements:"; "C (12 N)"
    ("Final answer: d", "D", True, "round5", "mcq"),
    ("So the answer is b.", "B", True, "round5", "mcq"),
    ("answer: a, c", "AC", True, "round5", "mcq_multi"),
    ("The best choice is (b).", "B", True, "round5", "mcq"),
    ("The true statements are (a) and (c).", "AC", True, "round5", "mcq_multi"),
    ("Thus (A) and (C) are correct.", "AC", True, "round5", "mcq_multi"),
    ("Correct options: [A, C]", "AC", True, "round5", "mcq_multi"),
    ("A) 2 s  B) 4 s  C) 8 s  D) 16 s\n\nThe answer is B (4 s)", "B", True, "round5", "mcq"),
    ("Final answer: d", "C", False, "round5", "mcq"),
    ("Thus (A) and (C) are correct.", "A", False, "round5", "mcq_multi"),
    ("Thus (A) and (C) are correct.", "A", False, "round5", "mcq"),
    ("A) 2 s  B) 4 s  C) 8 s  D) 16 s\n\nThe answer is B (8 s)", "B", False, "round5", "mcq"),
    ("The answer is B (or maybe C)", "B", False, "round5", "mcq"),
    # a lowercase letter with its closing parenthesis (heldout7:d337)
    ("the field inside a conductor is zero\nanswer: c)", "C", True, "heldout7:d337", "mcq"),
    ("Final answer: b)", "B", True, "heldout7:d337", "mcq"),
    ("Final answer: b)", "C", False, "heldout7:d337", "mcq"),
    ("the answer is a", "A", False, "heldout7:d337", "mcq"),  # the article is no letter
]


@pytest.mark.parametrize("row", rows(WORDS))
def test_letters_in_words(row):
    assert_row(check, row)


# option letters each in markdown emphasis (heldout6:c275), bold letters before "are correct"
# (heldout7:d375); "or" between them is an alternative (test_check_corrections_hedges.py)
BOLD = [
    ("**B** and **D**", "BD", True, "heldout6:c275", "mcq_multi"),
    ("__B__ and __D__", "BD", True, "round6", "mcq_multi"),
    ("*B*, *D*", "BD", True, "round6", "mcq_multi"),
    ("**(B)** and **(D)**", "BD", True, "round6", "mcq_multi"),
    ("The correct options are **B** and **D**.", "BD", True, "round6", "mcq_multi"),
    ("**B** and **C**", "BD", False, "round6", "mcq_multi"),
    ("**B**", "BD", False, "round6", "mcq_multi"),
    ("**B** *and* **D**", "BD", True, "round6-review", "mcq_multi"),
    ("The correct options are **B** and **D**.", "BD", True, "round6-review", "mcq_multi"),
    ("**B** and **D** are correct.", "B,D", True, "heldout7:d375", "mcq_multi"),
    ("**A**, **C** are correct.", "A,C", True, "heldout7:d375", "mcq_multi"),
    ("**B** and **D** are correct.", "B", False, "heldout7:d375", "mcq_multi"),
    ("**B** or **D** are correct.", "B,D", False, "heldout7:d375", "mcq_multi"),
]


@pytest.mark.parametrize("row", rows(BOLD))
def test_letters_in_emphasis(row):
    assert_row(check, row)


# a letter followed by its reason with no comma: "the answer is C because ..." (heldout6:c325, a loop of the
# same statement, cut off)
BECAUSE = ("I think the answer is C because the period depends on length only. " * 40)[:-30]
REASONS = [
    (BECAUSE, "C", True, "heldout6:c325", "mcq"),
    ("The answer is B since the charge is conserved.", "B", True, "round6", "mcq"),
    ("My answer is (D) because energy is conserved.", "D", True, "round6", "mcq"),
    ("The answer is C because the period is independent of mass.", "C", True, "round6", "mcq"),
    (BECAUSE, "B", False, "round6", "mcq"),
    ("The answer is C or D because both work.", "C", False, "round6", "mcq"),
    ("I think the answer is C because A is wrong. I think the answer is D because A is wrong.", "C", False,
     "round6", "mcq"),
]


@pytest.mark.parametrize("row", rows(REASONS))
def test_a_letter_with_a_reason_after_it(row):
    assert_row(check, row)


# --- a lone letter on the first line ----------------------------------------------------------------------
# then an explanation (or an empty answer cue): that letter, unless the explanation states another option's
# text and not its own, or names another option

LONE = [
    ("D\n\nFinal answer:", "D", True, "round3", "mcq"),
    ("D\n\nFinal answer:", "C", False, "round3", "mcq"),
    ("C\n\nThe answer is:", "C", True, "round4", "mcq"),
    ("B\n\nReason: inside the focal length a converging lens gives a magnified view.", "B", True, "round4", "mcq",
     LENS),
    ("C\n\nThe answer is:", "B", False, "round4", "mcq"),
    ("B\n\nWith the object beyond 2f the image is real and inverted, as a projector shows.", "B", False, "round4",
     "mcq", LENS),
    ("A\n\nBeyond 2f the image is real and inverted.", "A", True, "round4", "mcq", LENS),
    ("A\nB\nC\n\nThe answer is:", "A", False, "round4", "mcq"),  # a lone letter among others is no answer
    ("B\n\nMaybe C.", "B", False, "round4", "mcq"),
    ("D\n\nthough (A) is also possible", "D", False, "round4", "mcq"),
]


@pytest.mark.parametrize("row", rows(LONE))
def test_a_lone_first_line_letter(row):
    assert_row(check, row)


# --- options: given as a mapping, or listed by the output itself -------------------------------------------

OPTIONS = [
    # a letter with another option's text is refused; an option's text or value without a letter is read
    ("The answer is (C) 2.22 ± 0.02 mm.", "C", False, "round2", "mcq", MM),
    ("The answer is (C) 2.22 ± 0.02 mm.", "A", False, "round2", "mcq", MM),
    (r"\boxed{B. 108\text{ km/h}}", "B", False, "round2", "mcq", KMH),
    ("The answer is (C) 2.14 ± 0.02 mm.", "C", True, "round2", "mcq", MM),
    (r"\boxed{C. 108\text{ km/h}}", "C", True, "round2", "mcq", KMH),
    ("The speed is 108 km/h.", "C", True, "round2", "mcq", KMH),
    (r"\boxed{108\ \text{km/h}}", "C", True, "round2", "mcq", KMH),
    ("The answer is 30 m/s.", "C", True, "round2", "mcq", KMH),  # option C's value in other units
    ("2.14 ± 0.01 mm", "D", True, "round2", "mcq", MM),
    ("The speed is 100 km/h.", "C", False, "round2", "mcq", KMH),
    ("The speed is 72 km/h.", "C", False, "round2", "mcq", KMH),
    ("(A)", "A", False, "round2", "mcq", ["x", "y"], "options"),  # options must be a mapping of letters
    ("The final speed is 4 m/s, so C.", "C", True, "round2", "mcq", SPEEDS),
    ("**Final answer:** 4.0 m/s", "C", True, "round2", "mcq", SPEEDS),
    ("Final answer: (B) 4 m/s", "B", False, "round2", "mcq", SPEEDS),
    ("Final answer: (B) 4 m/s", "C", False, "round2", "mcq", SPEEDS, "option C"),
    ("Final answer: (C) 4 m/s", "C", True, "round2", "mcq", SPEEDS),
    # a letter with a value of no option
    ("<final_answer>\n(C) 30.52 m\n</final_answer>", "C", False, "round2", "mcq", ANGLES),  # a real output
    ("<final_answer>\n(C) 45 degrees\n</final_answer>", "C", True, "round2", "mcq", ANGLES),
    ("<final_answer>\n(C) because the angle is 45°\n</final_answer>", "C", True, "round2", "mcq", ANGLES),
    ("<final_answer>(C) 108</final_answer>", "C", True, "round2", "mcq", KMH),
    # options in LaTeX, an option's long text on the letter's line
    ("The correct choice is:\n\n(B) $3.1 \\pm 0.1 \\mathrm{~cm}$", "B", False, "round3", "mcq", CM),
    ("The correct choice is:\n\n(A) $3.1 \\pm 0.1 \\mathrm{~cm}$", "A", True, "round3", "mcq", CM),
    ("The correct answer is (C) The charge resides on the outer surface only.", "C", False, "round3", "mcq", CM),
    ("The correct answer is (D) The charge resides on the outer surface only.", "D", True, "round3", "mcq", CM),
    # closing words after the chosen letter that state another option's text (and not the letter's own)
    ("Answer: D. So the period is halved.", "D", False, "round5", "mcq", FACTORS),
    ("Answer: C. Since 2 N + 4 N = 6 N.", "C", True, "round5", "mcq", FORCES),
    # an option number is no value
    ("t = 4 s. Answer: option 2", "A", False, "round7", "mcq", TIMES),
]


@pytest.mark.parametrize("row", rows(OPTIONS))
def test_options_given_as_a_mapping(row):
    assert_row(check, row)


# with no options passed, the option list an output writes out itself counts: a letter written with another
# listed option's text is no commitment; a letter with its own listed text, or listed text alone, is read
LISTED_ROWS = [
    ("(A) 5 N (B) 10 N (C) 15 N (D) 20 N\nF = ma = 2 × 5 = 10 N.\nThe answer is (C) 10 N", "C", False, "round4",
     "mcq"),
    ("A. it doubles\nB. it halves\nC. it stays the same\nD. it quadruples\n\nChoice D: it halves", "D", False,
     "round4", "mcq"),
    ("(A) 5 N (B) 10 N (C) 15 N (D) 20 N\nF = 3 × 5 = 15 N.\nThe answer is (C) 15 N", "C", True, "round4", "mcq"),
    ("A. it doubles\nB. it halves\nC. it stays the same\n\nAnswer: B. it halves", "B", True, "round4", "mcq"),
    (FLUX + "The flux is constant... Answer: C. The current increases.", "C", False, "round5", "mcq"),
    (FLUX + "Answer: C. The current stays the same.", "C", True, "round5", "mcq"),
    (FLUX + "Answer: C. It neither increases nor decreases: it stays the same.", "C", True, "round5", "mcq"),
    # "The answer is C. 3.1 m/s": the period after the letter is the option label's, not a sentence end
    (LISTED + "v = sqrt(2 × 9.8 × 1.0) = 3.1 m/s (using g/2 by mistake).\nThe answer is C. 3.1 m/s", "C", False,
     "heldout7:d341", "mcq"),
    (LISTED + "v = 6.0 m/s here (wrong).\nAnswer: B. 6.0 m/s", "B", False, "heldout7:d341", "mcq"),
    (LISTED + "v = sqrt(2 × 9.8 × 1.0) = 4.43 m/s (rounded).\nThe answer is C. 4.43 m/s", "C", True,
     "heldout7:d341"),
    ("The power is 35 A. The power is 35", "35 A", True, "heldout7:d341"),  # a truncated copy is still dropped
    # no letter: the answer states one listed option's text (heldout7:d342, d355)
    (LISTED + "v = sqrt(2 × 9.8 × 1.0) = 4.43 m/s.\nThe answer is 4.43 m/s.", "C", True, "heldout7:d342", "mcq"),
    ("A) 5 N  B) 10 N  C) 15 N  D) None of these\nThe net force is 7.5 N, so the answer is none of these.", "D",
     True, "heldout7:d355", "mcq"),
    ("(A) 1 s (B) 2 s (C) 3 s (D) 4 s\nThe answer is 2 s.", "B", True, "round7", "mcq"),
    (LISTED + "The answer is 3.1 m/s.", "C", False, "round7", "mcq"),
    (LISTED + "The answer is 5.0 m/s.", "C", False, "round7", "mcq"),  # no option states it
    ("A) 5 N  B) 10 N  C) 15 N\nThe answer is 10 N or 15 N.", "B", False, "round7", "mcq"),
    # an option number or the working is never read as a value
    ("(A) 2 s (B) 4 s (C) 6 s (D) 8 s\nt = 4 s. Answer: option 2", "A", False, "round7", "mcq"),
    ("Options: (A) 10 J (B) 20 J (C) 30 J (D) 40 J\nKE = 20 J. The third option is correct.", "B", False, "round7",
     "mcq"),
    # options discussed one by one, the output stopping in the middle: none is chosen
    ("Check each choice.\nA: wrong, it ignores friction.\nB: wrong, the sign is flipped.\nD: this one", "D", False,
     "round4", "mcq"),
    ("(A) fails the units test.\n(B) fails at t = 0.\n(C) looks", "C", False, "round4", "mcq"),
]


@pytest.mark.parametrize("row", rows(LISTED_ROWS))
def test_options_listed_by_the_output(row):
    assert_row(check, row)


# a copied option list is no choice
@pytest.mark.parametrize("pred", [
    "<final_answer>\n(A) Electron\n(B) Meson\n(C) Photon\n(D) Boson\n</final_answer>",  # a real output (study sample)
    "<final_answer>\n(A) 2.4 V\n(B) 3.3 V\n(C) 4.5 V\n(D) 5.7 V\n</final_answer>",
    "The options are (A) 1 m (B) 2 m (C) 3 m (D) 4 m.",
    "Answer:\nA. 2.4 V\nB. 3.3 V",
])
def test_copied_option_lists_are_no_choice(pred):  # round2
    assert not check(pred, "A", kind="mcq").equivalent
    assert not check(pred, "AB", kind="mcq_multi").equivalent
