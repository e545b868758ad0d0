"""LaTeX and markdown around the value: constants with a unit ("\\frac{10}{3}\\,\\text{m/s}"), numbers in LaTeX
parsed exactly, bold math and spaced boxes, markdown emphasis (never dropping an operator, a power or a
subscript), and an equation chain whose last side is the value.  Rows: (prediction, gold, expected, origin[,
kind]), see _check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

CONSTANTS = [
    (r"\frac{10}{3}\,\text{m/s}", "3.33 m/s", True, "round2"),
    (r"5\sqrt{2}\ \mathrm{m/s}", r"5\sqrt{2}\ \mathrm{m/s}", True, "round2"),
    (r"7.07 m/s", r"5\sqrt{2}\ \mathrm{m/s}", True, "round2"),
    (r"\boxed{\frac{\sqrt{3}}{2}\ \text{N}}", "0.866 N", True, "round2"),
    (r"2\pi \times 10^{3}\ \mathrm{rad/s}", "6283 rad/s", True, "round2"),
    # numbers in LaTeX are parsed exactly (the digits never reach sympify: test_check_guards.py)
    (r"\boxed{\frac{98765}{2} m v^2}", "49382.5*m*v**2", True, "round2", "symbolic"),
    (r"\boxed{0.5 m v^2}", r"\frac{1}{2} m v^2", True, "round2", "symbolic"),
    (r"\boxed{1,000 x}", "1000*x", True, "round2", "symbolic"),
]


@pytest.mark.parametrize("row", rows(CONSTANTS))
def test_latex_constants_and_numbers(row):
    assert_row(check, row)


# markdown emphasis and LaTeX bold/spacing around the value
FORMATTING = [
    ("Hence $\\mathbf{3.5 \\times 10^{4}\\ J}$.", "35000 J", True, "round3"),
    ("$$ \\boxed{\\, a = 2.45\\ \\text{m/s}^2 \\,} $$", "2.45 m/s^2", True, "round3"),
    ("**Final answer:** _about_ **9.6 m/s**", "9.6 m/s", True, "round4"),
    ("_Answer_: __12 kg__", "12 kg", True, "round4"),
    ("Therefore $\\boldsymbol{4.2 \\times 10^{3}\\ \\mathrm{J}}$.", "4200 J", True, "round4"),
    ("\\[ \\boxed{\\; F = 19.6\\ \\text{N} \\;} \\]", "19.6 N", True, "round4"),
    # emphasis removal keeps products, powers and subscripts and never drops an operator
    ("The answer is 2*10**3 N", "2000 N", True, "round4"),
    ("**Final answer:** __12 kg__", "13 kg", False, "round4"),
    ("v_1 = 3 m/s", "3 m/s", True, "round4"),
    ("The answer is 5 *10^3 m", "1000 m", False, "round4"),
    ("The answer is 5 *10^3 m", "5000 m", True, "round4"),
    ("The answer is **5 m/s**", "5 m/s", True, "round4"),
]


@pytest.mark.parametrize("row", rows(FORMATTING))
def test_emphasis_and_bold_math_around_the_value(row):
    assert_row(check, row)


# an equation chain in LaTeX whose last side is a constant expression with a unit in \text/\mathrm after a
# LaTeX space: the last side is the value (heldout7:d214-d226); a chain with no unit after the working is
# not read
CHAINS = [
    (r"$|\vec v| = \sqrt{5^2+5^2} = 5\sqrt{2}\ \mathrm{m/s}$", "7.07 m/s", True, "heldout7:d214-d226"),
    (r"$\omega = 2\pi f = 2\pi\,\text{rad/s}$", "6.28 rad/s", True, "heldout7:d214-d226"),
    (r"$A = \pi r^2 = \pi (0.1)^2 = \pi \times 10^{-2}\,\mathrm{m^2}$", "0.0314 m^2", True, "heldout7:d214-d226"),
    (r"$x = \left(\dfrac{3}{4}\right)\,\mathrm{m}$", "0.75 m", True, "heldout7:d214-d226"),
    (r"Ratio $= \frac12$", "0.5", True, "heldout7:d214-d226"),
    (r"$F = m a = 2 \times 3\sqrt{3}\,\mathrm{N}$", "10.39 N", True, "heldout7:d214-d226"),
    (r"$|\vec v| = \sqrt{5^2+5^2} = 5\sqrt{2}\ \mathrm{m/s}$", "7.07 km/s", False, "heldout7:d214-d226"),
    (r"$|\vec v| = \sqrt{5^2+5^2} = 5\sqrt{2}\ \mathrm{m/s}$", "5 m/s", False, "heldout7:d214-d226"),
    (r"$\omega = 2\pi f = 2\pi\,\text{rad/s}$", "2 rad/s", False, "heldout7:d214-d226"),
    (r"$v_1 = 2\sqrt{2}, v_2 = 3\sqrt{2}\,\mathrm{m/s}$", "4.24 m/s", False, "heldout7:d214-d226"),
    (r"$x = \sqrt{2}\,\mathrm{m} = y$", "1.414 m", False, "heldout7:d214-d226"),
    (r"$\sum_{i=1}^{3} i\,\mathrm{m}$", "1 m", False, "heldout7:d214-d226"),
    ("N = mg cos 30° = 20 × √3/2, so the coefficient is 10 and N = 10 N", "10\\sqrt{3} N", False, "round7"),
]


@pytest.mark.parametrize("row", rows(CHAINS))
def test_an_equation_chain_is_its_last_side(row):
    assert_row(check, row)
