"""Vectors: a combination of unit vectors is the tuple of its components (x, y, z), in a reference (its missing
axes zero) and in an answer; one assignment per component in order ("F_x = ..., F_y = ...") or to the
coordinates themselves ("x = 3, y = 4") is that tuple too, when it is stated as the answer (not a trial, a
supposition or a rejected guess).  Tuples and intervals: test_check_intervals_tuples.py.  Rows: (prediction,
gold, expected, origin[, kind]), see _check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

UNIT_VECTORS = [
    ("\\boxed{5\\hat{i} - 2\\hat{j}\\ \\mathrm{N}}", "(5, -2) N", True, "round4"),
    ("\\vec{a} = 3\\hat{x} + \\hat{z}", "(3, 0, 1)", True, "round4"),
    ("(2, 7) m/s", "(2\\hat{i} + 7\\hat{j}) m/s", True, "round4"),
    ("7\\hat{j} + 2\\hat{i} m/s", "(2\\hat{i} + 7\\hat{j}) m/s", True, "round4"),
    ("\\boxed{5\\hat{i} - 2\\hat{j}\\ \\mathrm{N}}", "(5, 2) N", False, "round4"),
    ("5 N", "(5\\hat{i} - 2\\hat{j}) N", False, "round4"),
    ("5\\hat{i} - 2\\hat{j} N", "5 N", False, "round4"),
    ("5x\\hat{i} - 2\\hat{j} N", "(5, -2) N", False, "round4"),
    ("(2\\hat{i} + 7\\hat{j}) m", "(2\\hat{i} + 7\\hat{j}) m/s", False, "round4"),
    # a product with k is no vector
    ("2k", "2*k", True, "round4", "symbolic"),
    ("(0, 0, 2)", "2 k", False, "round4"),
    # a unit-vector reference has zero for its missing axes
    ("B = (0, 2, 0) T", "2\\hat{j}\\ \\text{T}", True, "round5"),
    ("B = (0, 2, 0.3) T", "2\\hat{j}\\ \\text{T}", False, "round5"),
    ("B = (2, 0, 0) T", "2\\hat{j}\\ \\text{T}", False, "round5"),
]


@pytest.mark.parametrize("row", rows(UNIT_VECTORS))
def test_unit_vectors_are_tuples(row):
    assert_row(check, row)


COMPONENTS = [
    ("F_x = 6 N, F_y = -8 N", "(6, -8) N", True, "round4"),
    ("x₁ = 2 m and x₂ = 5 m", "(2 m, 5 m)", True, "round4"),
    ("F_y = -8 N, F_x = 6 N", "(6, -8) N", False, "round4"),  # which is which is the question's
    ("F_x = 6 N or F_y = -8 N", "(6, -8) N", False, "round4"),
    ("x = 3, y = 4", "(3, 4)", True, "heldout6:c298"),
    ("The point is at x = 2 m and y = -1 m.", "(2 m, -1 m)", True, "round6"),
    ("x = 1 m, y = 2 m, z = 3 m", "(1, 2, 3) m", True, "round6"),
    ("x = 4, y = 3", "(3, 4)", False, "round6"),
    ("y = 4, x = 3", "(3, 4)", False, "round6"),  # which is which is left to the order x, y, z
    ("x = 3, x = 4", "(3, 4)", False, "round6"),
    ("a = 3, b = 4", "(3, 4)", False, "round6"),
    ("x = 3 or y = 4", "(3, 4)", False, "round6"),
    ("x = 1 m, y = 2 m", "(1, 2, 3) m", False, "round6"),
    ("It is not at x = 2 m and y = -1 m.", "(2 m, -1 m)", False, "round6"),
    ("It might be at x = 2 m and y = -1 m.", "(2 m, -1 m)", False, "round6"),
]


@pytest.mark.parametrize("row", rows(COMPONENTS))
def test_component_assignments_are_tuples(row):
    assert_row(check, row)


# "x = 3, y = 4" only when it is stated as the answer
NOT_STATED = [
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
]
STATED = [
    ("The point is at x = 3, y = 4.", "(3, 4)", True, "round6-review"),
    ("The solution is x = 3 and y = 4.", "(3, 4)", True, "round6-review"),
    ("It lands at x = 2 m and y = -1 m.", "(2 m, -1 m)", True, "round6-review"),
    ("x = 1 m, y = 2 m, z = 3 m", "(1, 2, 3) m", True, "round6-review"),
]


@pytest.mark.parametrize("row", rows([(p, "(3, 4)", False, "round6-review") for p in NOT_STATED] + STATED))
def test_coordinates_only_when_stated_as_the_answer(row):
    assert_row(check, row)
