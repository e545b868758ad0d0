"""How the checker reads a number: an exact zero against a tiny gold, the whole of an expression (never a part
of it), thousands separators and decimal commas, scientific notation as models write it, Unicode fractions and
roots, number words, and very long numbers.  Rows: (prediction, gold, expected, origin[, kind]), see
_check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

# --- exact zero ---------------------------------------------------------------------------------------
# an exact 0 is never a tiny gold, and a tiny value is never an exact-zero gold; 0 still matches a zero gold

ZERO = [
    ("0", "1.6e-19 C", False, "round2"),
    (r"\boxed{0}", r"1.6 \times 10^{-19}\ \mathrm{C}", False, "round2"),
    ("The answer is 0.", "6.67e-11", False, "round2"),
    ("The charge is 0 C.", "1.6e-19 C", False, "round2"),
    (r"\boxed{0}", "9.1e-31 kg", False, "round2"),
    ("0 J", "1e-20 J", False, "round2"),
    ("0", r"1.6\times10^{-19}", False, "round2", "symbolic"),
    (r"\boxed{0}", r"\frac{e^2}{10^{20}}", False, "round2", "symbolic"),
    ("\\boxed{3e-18 J}", "0 J", False, "round3"),
    ("The net charge is 2 \\times 10^{-21} C.", "0 C", False, "round3"),
    ("\\boxed{0." + "0" * 3000 + "7}", "0", False, "round4"),  # a long tiny decimal is never cut to zero
    ("0." + "0" * 3000 + "7" * 3000, "0", False, "round4"),
    # still read
    ("0", "0", True, "round2"),
    (r"\boxed{0}", "0 m/s", True, "round2"),
    ("The net force is 0 N.", "0.0 N", True, "round2"),
    ("0.00", "0", True, "round2"),
    ("The net charge is 0 C.", "0 C", True, "round3"),
]


@pytest.mark.parametrize("row", rows(ZERO))
def test_exact_zero(row):
    assert_row(check, row)


# --- the whole expression is the value ---------------------------------------------------------------
# part of an expression (a factor, a denominator, an exponent, a factorial's base, a digit split off by a
# zero-width character) is not the value; the whole expression is

EXPRESSIONS = [
    ("2/3 m/s", "3 m/s", False, "round2"),
    (r"5\sqrt{2}\,\text{N}", "5 N", False, "round2"),
    (r"2\pi rad/s", "2 rad/s", False, "round2"),
    (r"(3\hat{i} + 4\hat{j}) N", "4 N", False, "round2"),
    ("3÷4", "4", False, "round2"),
    ("1 1/2", "2", False, "round2"),
    ("3!", "3", False, "round2"),
    ("20‰", "20", False, "round2"),
    ("1.2 X 10^-3", "0.001", False, "round2"),
    ("The speed is v = 4\\sqrt{3} m/s.", "3 m/s", False, "round2"),
    ("The field is E = kq/r^2 = 9 \\times 10^9 q/4", "4", False, "round2"),
    ("x = 7^2", "2", False, "round2"),
    ("The energy is 3 e^2 J", "2 J", False, "round2"),
    ("The result is 10/4 s", "4 s", False, "round2"),
    ("1\u200b5", "5", False, "round2"),  # a zero-width space inside a number
    ("The answer is 2\u200c0 m.", "0 m", False, "round2"),
    ("\ufeff3\u200d4", "4", False, "round2"),
    # the whole expression
    ("2/3 m/s", "0.667 m/s", True, "round2"),
    (r"5\sqrt{2}\,\text{N}", "7.07 N", True, "round2"),
    (r"2\pi rad/s", "6.283 rad/s", True, "round2"),
    ("3÷4", "0.75", True, "round2"),
    ("1.2 X 10^-3", "0.0012", True, "round2"),
    ("20‰", "0.02", True, "round2"),
    ("1 1/2", "1.5", True, "round2"),
    ("1\u200b5", "15", True, "round2"),
    # a root sign and pi glued to a number are read whole
    ("The speed is 3√2 m/s.", "4.243 m/s", True, "round5"),
    ("The speed is 3√2 m/s.", "2 m/s", False, "round5"),
    ("The speed is 3√2 m/s.", "3 m/s", False, "round5"),
    ("d = √9 m", "3 m", True, "round5"),
    ("d = √9 m", "9 m", False, "round5"),
    ("x = √-9", "-9", False, "round5"),
    ("The phase is 3π", "9.425", True, "round5"),
    ("The phase is 3π", "3", False, "round5"),
]


@pytest.mark.parametrize("row", rows(EXPRESSIONS))
def test_the_whole_expression_is_the_value(row):
    assert_row(check, row)


# --- thousands separators and decimal commas ------------------------------------------------------------
# a comma, a thin space or a space groups thousands ("1,200 J", "12 000 J"); points between thousands with a
# decimal comma ("2.500,75"); a comma and a space is a list, never a separator; a malformed group is no number

THOUSANDS = [
    ("1 200 J", "1200 J", True, "round2"),
    ("The work is 12 000 J.", "12000 J", True, "round2"),
    ("1 200 000 m", "1.2e6 m", True, "round2"),
    ("The work done is 1,200 J.", "1200 J", True, "adversarial"),
    ("Answer: 5 000 m", "5000 m", True, "round6-policy"),
    ("The answer is 1, 200 J", "200 J", False, "defects"),
    ("The work done is 1,200 J.", "200 J", False, "defects"),  # the old checker read the sentence's 200 J
    ("1,200 J", "200 J", False, "defects"),
    (r"\boxed{1{,}200 J}", "200 J", False, "defects"),
    ("Die Energie beträgt E = 2.500,75 J", "2500.75 J", True, "round5"),
    ("Die Energie beträgt E = 2.500,75 J", "2.5 J", False, "round5"),
    ("x = 2.500, 75", "2500.75", False, "round5"),  # comma and space: a list
    ("Answer: 3.23.2 J", "3.2 J", False, "round6-policy"),  # malformed numbers are no value
    ("Answer: 3.2.5 J", "3.2 J", False, "round6-policy"),
    ("Answer: 3.2 000 J", "3.2 J", False, "round6-policy"),
    ("Answer: 3.20 J", "3.2 J", True, "round6-policy"),
]


@pytest.mark.parametrize("row", rows(THOUSANDS))
def test_thousands_separators_and_decimal_commas(row):
    assert_row(check, row)


# --- scientific notation and per mille -----------------------------------------------------------------

SCIENTIFIC = [
    ("The charge is 3.2x10^(-19) C", "3.2e-19 C", True, "round5"),  # lowercase x, a parenthesised exponent
    ("E = 4.5 x 10^(6) J", "4.5 MJ", True, "round5"),
    ("The charge is 3.2x10^(-19) C", "3.2e-18 C", False, "round5"),
    ("The strain is 2 per mille.", "0.2%", True, "round5"),
    ("The strain is 2 per mille.", "0.002", True, "round5"),
    ("The strain is 2 per mille.", "2%", False, "round5"),
]


@pytest.mark.parametrize("row", rows(SCIENTIFIC))
def test_scientific_notation_and_per_mille(row):
    assert_row(check, row)


# --- fractions ----------------------------------------------------------------------------------------
# Unicode fractions: "¼" is 1/4, "2¼" the mixed number 2 1/4, "5⁄8" (fraction slash) 5/8; a fraction of two
# whole numbers standing alone in a sentence is its value ("stretches 3/4 m")

FRACTIONS = [
    ("¼ A", "0.25 A", True, "round4"),
    ("The spring stretches ¾ m.", "0.75 m", True, "round4"),
    ("2¼ h", "135 min", True, "round4"),
    ("5⁄8 s", "0.625 s", True, "round4"),
    ("\\boxed{3½}", "3.5", True, "round4"),
    ("¼ A", "4 A", False, "round4"),
    ("2¼ h", "2 h", False, "round4"),
    ("2¼ h", "0.25 h", False, "round4"),
    ("5⁄8 s", "8 s", False, "round4"),
    ("The block slides 5/4 m before stopping.", "1.25 m", True, "round4"),
    ("The block slides 5/4 m before stopping.", "4 m", False, "round4"),
    ("The block slides 5/4 m before stopping.", "5 m", False, "round4"),
    ("The block slides 5/4x m before stopping.", "1.25 m", False, "round4"),
]


@pytest.mark.parametrize("row", rows(FRACTIONS))
def test_fractions(row):
    assert_row(check, row)


# --- number words ----------------------------------------------------------------------------------------
# cardinals, decimals read with "point", "and a half / quarter", fraction phrases ("a quarter (of an
# ampere)", "two thirds", "half a second": only in an answer with no digit; "half the distance" is no
# number) and ordinal fractions ("one fifth", "a tenth")

NUMBER_WORDS = [
    ("five", "5", True, "round2"),
    ("The answer is twenty-five m/s.", "25 m/s", True, "round2"),
    ("three hundred joules", "300 J", True, "round2"),
    ("zero", "0", True, "round2"),
    ("one thousand two hundred J", "1200 J", True, "round2"),
    ("The period is two point five seconds.", "2.5 s", True, "round4"),
    ("three and a half metres", "3.5 m", True, "round4"),
    ("Answer: a quarter of a joule", "0.25 J", True, "round4"),
    ("It needs half an hour.", "30 min", True, "round4"),
    ("two thirds", "0.667", True, "round4"),
    ("three quarters of a metre", "0.75 m", True, "round4"),
    ("one point zero eight kilograms", "1.08 kg", True, "round4"),
    ("Answer: a quarter of a joule", "0.25 J", True, "round6-policy"),
    ("three and a half metres", "3 m", False, "round4"),
    ("three and a half metres", "0.5 m", False, "round4"),
    ("The period is two point five seconds.", "5 s", False, "round4"),
    ("It is half the distance.", "0.5 m", False, "round4"),
    ("two thirds", "2", False, "round4"),
    ("The efficiency is one fifth.", "0.2", True, "round5"),
    ("It takes a tenth of a second.", "0.1 s", True, "round5"),
    ("The current is three hundredths of an ampere.", "0.03 A", True, "round5"),
    ("It takes a tenth of a second.", "1 s", False, "round5"),
    ("It takes one second.", "1 s", True, "round5"),  # "second" is a unit, never an ordinal here
]


@pytest.mark.parametrize("row", rows(NUMBER_WORDS))
def test_number_words(row):
    assert_row(check, row)


# --- very long numbers -------------------------------------------------------------------------------------
# whitespace is collapsed before the output is cut to its last 20,000 characters; digits past the 30th
# after the point change nothing

LONG = [
    ("4.9" + " " * 20000 + "m/s^2", "4.9 m/s^2", True, "round4"),
    ("4.9" + " " * 20000 + "m", "4.9 m/s^2", False, "round4"),
    ("2.7" + "3" * 5000, "2.73", True, "round4"),
    ("2.7" + "3" * 5000, "2.8", False, "round4"),
]


@pytest.mark.parametrize("row", rows(LONG))
def test_very_long_numbers(row):
    assert_row(check, row)
