"""Temperatures: an absolute temperature converts between kelvin and degrees Celsius with the offset (0 °C is
no exact zero); a temperature stated as a change ("rises by", "the change is", "ΔT =") compares the two one to
one, and "rises to", "the final temperature" state a temperature.  Rows: (prediction, gold, expected,
origin), see _check_table.py."""
import pytest

from _check_table import assert_row, rows
from verifiers import check

CHANGES = [
    ("Heating it for a minute, the oil's temperature increases by 35 K.", "35 °C", True, "round5"),
    ("So the temperature difference between the plates is 12 °C.", "12 K", True, "round5"),
    ("The water cools by 8 °C, so ΔT = 8 °C.", "8 K", True, "round5"),
    # a change wrongly shifted by 273 is wrong (it matched the absolute reading)
    ("ΔT = 35 + 273 = 308 K, so the oil's temperature increases by 308 K.", "35 °C", False, "round5"),
    ("The temperature change of the gas is 26.85 °C.", "300 K", False, "round5"),
]


@pytest.mark.parametrize("row", rows(CHANGES))
def test_a_temperature_change_compares_kelvin_and_celsius_one_to_one(row):
    assert_row(check, row)


TEMPERATURES = [
    ("The mixture reaches 45 °C.", "318 K", True, "round5"),
    ("The temperature rises to 45 °C.", "318 K", True, "round5"),
    ("The temperature rises to 45 °C.", "45 K", False, "round5"),
    ("The final temperature after the increase is 318 K.", "45 °C", True, "round5"),
    ("T_f = T_i + ΔT = 25 °C + 20 K = 45 °C", "318 K", True, "round5"),  # ΔT is working; 45 °C the temperature
    # zero Celsius is no exact zero
    ("Water freezes at 0 °C.", "273.15 K", True, "round5"),
    ("T = 273 K", "0 °C", True, "round5"),
    ("T = 0 K", "0 °C", False, "round5"),
    ("T = 0 °C", "0 K", False, "round5"),
]


@pytest.mark.parametrize("row", rows(TEMPERATURES))
def test_a_temperature_converts_with_the_offset(row):
    assert_row(check, row)
