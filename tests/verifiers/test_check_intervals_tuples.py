"""Tuples and intervals: a tuple compares every component in order, with one unit after it ("(3, 4) m/s") for
every component; two tuples offered are no tuple; an interval compares its ends and their openness, written
in brackets, as an inequality chain ("2 < t ≤ 6 s", against a pair in parentheses: the open interval), one
side ("v ≥ 3"), an absolute value ("|y| ≤ 2") or a range in words whose ends are said to be in or out; a
negated or doubled interval is no answer.  Vectors: test_check_vectors.py.  Rows: (prediction, gold,
expected, origin), see _check_table.py."""
import pytest

from _check_table import Row, assert_row, rows
from verifiers import check

# tuple, interval and vector golds: read as such, never "reference unparseable"
GOLDS = [
    ("(3, 4)", "(3, 4)", True, "round2"),
    (r"\boxed{(3, 4)}", "(3, 4)", True, "round2"),
    ("(4, 3)", "(3, 4)", False, "round2"),
    ("(2 m/s, 3 m/s)", "(2 m/s, 3 m/s)", True, "round2"),
    ("(2 m/s, 3 m/s)", "(3 m/s, 2 m/s)", False, "round2"),
    (r"(3\hat{i} + 4\hat{j})\ \mathrm{N}", r"(3\hat{i} + 4\hat{j})\ \mathrm{N}", True, "round2"),
    (r"3\hat{i} + 4\hat{j}", r"(3\hat{i} + 4\hat{j})\ \mathrm{N}", True, "round2"),
    (r"4\hat{i} + 3\hat{j}", r"(3\hat{i} + 4\hat{j})\ \mathrm{N}", False, "round2"),
    ("[0, 1)", "[0, 1)", True, "round2"),
    ("[0, 1]", "[0, 1)", False, "round2"),
    (r"\langle 1, 2, 3 \rangle", "(1, 2, 3)", True, "round2"),
    ("(1, 2)", "(1, 2, 3)", False, "round2"),
]


@pytest.mark.parametrize("row", rows(GOLDS))
def test_tuple_interval_vector_golds_are_parsed(row: Row):
    v = check(row.pred, row.gold)
    assert v.equivalent is row.expected, v
    assert "reference unparseable" not in v.reason


# a tuple written with one unit after it ("(3, 4) m/s"): that unit for every component, in a reference and in
# an answer; components may be constants ("(1/2, 3/4)")
TUPLES = [
    ("(6 N, 8 N)", "(6, 8) N", True, "round3"),
    ("\\boxed{(6, 8)}", "(6, 8) N", True, "round3"),
    ("The point is at (50 cm, -20 cm).", "(0.5, -0.2) m", True, "round3"),
    ("\\boxed{\\langle 2, 0, 1 \\rangle\\ \\text{m/s}}", "(2, 0, 1) m/s", True, "round3"),
    ("(6 N, 9 N)", "(6, 8) N", False, "round3"),
    ("(6 m, 8 m)", "(6, 8) N", False, "round3"),
    ("(8, 6)", "(6, 8) N", False, "round3"),
    ("(0.3, 0.4) m/s", "(0.3 m/s, 0.4 m/s)", True, "round4"),
    ("(30 cm/s, 40 cm/s)", "(0.3, 0.4) m/s", True, "round4"),
    ("\\boxed{(1/2, 3/4)}", "(0.5, 0.75)", True, "round4"),
    ("The velocity is (2, -5) m/s.", "(2, -5) m/s", True, "round4"),
    ("\\left(1, 0, 2\\right)\\,\\mathrm{N}", "(1, 0, 2) N", True, "round4"),
    ("(0.3, 0.5) m/s", "(0.3 m/s, 0.4 m/s)", False, "round4"),
    ("(0.3, 0.4) m", "(0.3, 0.4) m/s", False, "round4"),
    ("(0.4, 0.3) m/s", "(0.3, 0.4) m/s", False, "round4"),
    ("(1/2, 3/5)", "(0.5, 0.75)", False, "round4"),
    ("(1, 0) N", "(1, 0, 2) N", False, "round4"),
    # two tuples are no tuple
    ("(1, 2) m or (3, 4) m", "(1, 2, 4) m", False, "round4"),
    ("(1, 2) m or (3, 4) m", "(3, 4) m", False, "round4"),
    ("(1, 2), (3, 4)", "(1, 2)", False, "round4"),
]


@pytest.mark.parametrize("row", rows(TUPLES))
def test_tuples_compare_every_component(row):
    assert_row(check, row)


# intervals with numeric end points, compared in process: a unit after the brackets is each end's
INTERVALS = [
    ("2 < t ≤ 6 s", "(2, 6] s", True, "round4"),
    ("\\boxed{[20 cm, 80 cm]}", "[0.2 m, 0.8 m]", True, "round4"),
    ("v ≥ 3", "[3, \\infty)", True, "round4"),
    ("|y| ≤ 2", "[-2, 2]", True, "round4"),
    ("t \\in [1, 4) s", "[1, 4) s", True, "round4"),
    ("0 \\le x \\le 7", "[0, 7]", True, "round4"),
    ("2 ≤ t ≤ 6 s", "(2, 6] s", False, "round4"),
    ("2 < t ≤ 6 m", "(2, 6] s", False, "round4"),
    ("v > 3", "[3, \\infty)", False, "round4"),
    ("v ≤ 3", "[3, \\infty)", False, "round4"),
    ("|y| < 2", "[-2, 2]", False, "round4"),
    ("\\boxed{[20 cm, 90 cm]}", "[0.2 m, 0.8 m]", False, "round4"),
    ("[0, 7] or [0, 8]", "[0, 7]", False, "round4"),
    ("(1, 3)", "(1, 3)", True, "round4"),  # a bare pair in parentheses is still a tuple
    # an interval that closes the answer's sentence
    ("The block slides only while 1 s ≤ t ≤ 3 s.", "[1, 3] s", True, "round5"),
    ("The block slides only while 1 s ≤ t ≤ 3 s.", "(1, 3) s", False, "round5"),
    ("The block slides only while 1 s ≤ t ≤ 4 s.", "[1, 3] s", False, "round5"),
    # an inequality chain against a pair in parentheses is the open interval
    ("4 m < x < 9 m", "(4, 9) m", True, "round5"),
    ("1 < v < 6 m/s", "(1, 6) m/s", True, "round5"),
    ("4 m ≤ x < 9 m", "(4, 9) m", False, "round5"),
    ("4 m < x < 8 m", "(4, 9) m", False, "round5"),
    # a range in words with its ends stated
    ("It is visible from 3 to 7 seconds, inclusive.", "[3, 7] s", True, "round5"),
    ("It is visible from 3 to 7 s, both ends excluded", "(3, 7) s", True, "round5"),
    ("It is visible from 3 to 7 seconds, inclusive.", "(3, 7) s", False, "round5"),
    ("It is visible from 3 to 7 seconds.", "[3, 7] s", False, "round5"),  # which ends are in is not said
    ("It is visible from 3 to 7 seconds, inclusive.", "5 s", False, "round5"),
    # a negated interval or range, two intervals or ranges offered: no answer
    ("The block is not moving while 1 s ≤ t ≤ 3 s.", "[1, 3] s", False, "round5"),
    ("It is not visible from 3 to 7 seconds, inclusive.", "[3, 7] s", False, "round5"),
    ("t is in 2 s ≤ t ≤ 5 s or 6 s ≤ t ≤ 8 s", "[2, 5] s", False, "round5"),
    ("It is visible from 3 to 5 s or from 4 to 7 s, inclusive.", "[4, 7] s", False, "round5"),
    # an interval in brackets is still an interval (next to the unit-in-brackets rule, test_check_units.py)
    ("x in [2, 4] m", "[2, 4] m", True, "round6"),
    ("x in [2, 5] m", "[2, 4] m", False, "round6"),
]


@pytest.mark.parametrize("row", rows(INTERVALS))
def test_intervals_compare_ends_and_openness(row):
    assert_row(check, row)
