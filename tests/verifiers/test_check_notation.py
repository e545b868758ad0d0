"""Notations a response writes its value in (issue 54): number words with a scale, spoken powers, mixed
numbers, factorials, power towers, units with signed exponents, an integer's unit, two named quantities in
one sentence, multiple-choice wordings.  Each row is (response, gold, kind, expected verdict); every class
has true and false twins."""
import pytest

from verifiers.answer import check

NUMBERS = [
    # a digit number with its scale word
    ("5 thousand", "5000", None, True),
    ("5 thousand", "5", None, False),
    ("3 million", "3000000", None, True),
    ("The energy is 3 million joules.", "3e6 J", None, True),
    ("The answer is 2.5 thousand J.", "2500 J", None, True),
    ("The answer is 2.5 thousand J.", "2.5 J", None, False),
    # spoken powers of ten
    ("1.2 times 10 to the power -3", "1.2e-3", None, True),
    ("The current is 1.2 times 10 to the power -3 A.", "1.2 mA", None, True),
    ("The current is 1.2 times ten to the power of minus three A.", "1.2 mA", None, True),
    ("The current is 1.2 times 10 to the power -3 A.", "1.2 A", None, False),
    ("1.2 times 10 to the power 3", "1.2e-3", None, False),
    # mixed numbers: the whole and the fraction
    (r"\boxed{2\frac{1}{4}}", "2.25", None, True),
    (r"\boxed{2\frac{1}{4}}", "0.25", None, False),
    (r"\boxed{2\frac{1}{4}}", "0.5", None, False),
    (r"The length is $2\tfrac{1}{4}$ m.", "2.25 m", None, True),
    (r"The length is $2\tfrac{1}{4}$ m.", "0.25 m", None, False),
    ("The answer is 2 and 1/4 m.", "2.25 m", None, True),
    ("The answer is 2 1/4 m.", "2.25 m", None, True),
    # factorials of whole numbers
    ("The answer is 3!", "6", None, True),
    (r"\boxed{3!}", "6", "integer", True),
    (r"\boxed{3!}", "3", "integer", False),
    ("There are 4! = 24 orderings.", "24", None, True),
    # power towers: the whole tower, never its base
    (r"\boxed{2^{3^2}}", "512", "integer", True),
    (r"\boxed{2^{3^2}}", "2", "integer", False),
    (r"The answer is $2^{3^2}$.", "2", None, False),
    (r"The answer is $2^{3^2}$.", "64", None, False),
]

UNITS = [
    ("5 m s-1", "5 m/s", None, True),
    ("The speed is 5 m s-1.", "5 m/s", None, True),
    ("9.8 m s-2", "9.8 m/s^2", None, True),
    ("The density is 1000 kg m-3.", "1000 kg/m^3", None, True),
    ("8.3 J mol-1 K-1", "8.31 J/(mol*K)", None, True),
    ("5 m s-1", "5 m/s^2", None, False),
    ("5 m s-1", "5 m", None, False),
    ("The answer is 5 - 1 = 4 m.", "4 m", None, True),
    # an integer answer's unit must be of the gold's dimension
    ("Answer: 114 N*kg", "114 m/s^2", "integer", False),
    ("Answer: 114 m/s^2", "114 m/s^2", "integer", True),
    ("Answer: 2 km", "2000 m", "integer", True),
    ("Answer: 2 kg", "2000 m", "integer", False),
]

# a sentence that states the asked quantity and another one: the quantity of the gold's dimension
TWO_QUANTITIES = [
    ("The maximum height is 20 m and the time of flight is 4 s.", "20 m", None, True),
    ("The maximum height is 20 m and the time of flight is 4 s.", "4 s", None, True),
    ("The maximum height is 25 m and the time of flight is 4 s.", "20 m", None, False),
    ("The maximum height is 20 m and the time of flight is 5 s.", "4 s", None, False),
    ("The speed is 5 m/s and the kinetic energy is 25 J.", "5 m/s", None, True),
    ("The speed is 5 m/s and the kinetic energy is 25 J.", "6 m/s", None, False),
    ("The height is 20 m or the time is 4 s.", "20 m", None, False),  # offered as alternatives
    ("The height is 30 m and the range is 20 m.", "30 m", None, False),  # two of the same dimension
]

OPTIONS_ABOVE = {"A": "x", "B": "y", "C": "z", "D": "All of the above"}
LETTERS = [
    ("So the answer must be C.", "C", "mcq", None, True),
    ("So the answer must be C.", "B", "mcq", None, False),
    ("All of the above", "ABCD", "mcq_multi", None, True),
    ("All of the above are correct.", "ABCD", "mcq_multi", None, True),
    ("All of the above", "ABC", "mcq_multi", None, False),
    ("All of the above", "ABC", "mcq_multi", {"A": "1 m", "B": "2 m", "C": "3 m"}, True),
    ("The answer is all of the above.", "D", "mcq", OPTIONS_ABOVE, True),
    ("All of the above", "D", "mcq", OPTIONS_ABOVE, True),
    ("All of the above", "A", "mcq", OPTIONS_ABOVE, False),
    ("(D) All of the above", "ABCD", "mcq_multi", OPTIONS_ABOVE, True),
    ("(D)", "ABC", "mcq_multi", OPTIONS_ABOVE, True),
    ("(A)", "ABC", "mcq_multi", OPTIONS_ABOVE, False),
]


@pytest.mark.parametrize("pred, gold, kind, expected", NUMBERS + UNITS + TWO_QUANTITIES)
def test_notation(pred, gold, kind, expected):
    assert check(pred, gold, kind).equivalent is expected


@pytest.mark.parametrize("pred, gold, kind, options, expected", LETTERS)
def test_letter_wordings(pred, gold, kind, options, expected):
    assert check(pred, gold, kind, options=options).equivalent is expected
