"""Step 7 (final_answer) of the step verifier: the boxed answer against the calculation and the reference.

Accepted: a unit in square brackets in the box, the answer in another correct unit (J for a result worked in eV).
Flagged (CE at step 7): a wrong box after right working (also after prose working), a function of the asked
quantity boxed as the quantity (the sine for the angle), a box in another unit whose number is the calculation's.
More of step 7 - the answer forms of the procedural bank (letters, integers): test_steps_forms.py; the wrong answer
whose steps all check, a bare SI number: test_reward_hacking_empty_steps_and_no_verdict.py.

The table's rows are (question, solution, reference, expected, reason, origin): _step_problems.py says how a row
is read.
"""
import pytest

from _step_problems import OK, PUCK, check, heldout_row
from verifiers import seventag

ROWS = [
    PUCK.row("a unit in square brackets in the box", OK, "round4", value_identification="m = 0.40 [kg]\nv = 5.0 [m/s]",
             calculation="p = 2.0 [kg*m/s]", final_answer="\\boxed{2.0 [kg*m/s]}"),
    PUCK.row("a wrong box with a unit in square brackets", (7, "CE"), "round4", calculation="p = 2.0 [kg*m/s]",
             final_answer="\\boxed{20 [kg*m/s]}"),
    heldout_row("heldout6:w089", (7, "CE"), "a wrong box after prose working"),
    heldout_row("heldout6:w036", OK, "the sine of the angle computed on the way is not the angle"),
    heldout_row("heldout6:w065", (7, "CE"), "the sine boxed as the angle"),
    heldout_row("heldout6:w015", OK, "an answer in eV worked in joules"),
    # `h f = 4.0 eV` given as one quantity; the box in J for a result in eV
    heldout_row("heldout6:w079", (7, "CE"), "the box in J for a result in eV"),
]


@pytest.mark.parametrize("question,solution,reference,expected,reason,origin", ROWS)
def test_the_final_answer(question, solution, reference, expected, reason, origin):
    assert seventag.parse(solution).get("final_answer") is not None  # each row's case is its boxed answer
    check(question, solution, reference, expected, reason, origin)
