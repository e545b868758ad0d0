"""Tests for the formula corpus (verifiers/formulas.yaml) and its loader (verifiers/formulas.py).

The dimensional check substitutes every variable with a pint Quantity in its declared unit, evaluates
both sides through a numpy lambdify and compares dimensionalities.  Adding incompatible terms, or
passing a dimensional argument to sin/cos/exp/log, raises pint's DimensionalityError, which is
reported as a failure naming the formula id.
"""
from __future__ import annotations

import collections
import warnings

import numpy as np
import pint
import pytest
import sympy

from verifiers import formulas
from verifiers.formulas import CorpusError, Formula
from verifiers.units import get_ureg

UREG = get_ureg()
ALL = formulas.load()


def dimension_error(f: Formula) -> str | None:
    """None if both sides of ``f`` have the same dimensionality, else a message naming ``f.id``.

    Magnitudes only need to keep functions defined, so each variable gets a distinct positive value
    (1.3, 1.47, ...); any nan/inf from e.g. sqrt of a negative number does not affect units.
    """
    try:
        lhs, rhs = formulas.parse(f)
        symbols = sorted(lhs.free_symbols | rhs.free_symbols, key=str)
        values = []
        for i, s in enumerate(symbols):
            unit = f.variables[str(s)]["unit"]
            values.append(UREG.Quantity(1.3 + 0.17 * i, unit))
        sides = []
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for expr in (lhs, rhs):
                value = sympy.lambdify(symbols, expr, modules="numpy")(*values)
                if not isinstance(value, UREG.Quantity):  # a pure number, e.g. gamma = 5/3
                    value = UREG.Quantity(value, "dimensionless")
                sides.append(value)
    except pint.DimensionalityError as exc:
        return f"{f.id}: dimensionally inconsistent ({exc})"
    except (pint.UndefinedUnitError, KeyError) as exc:
        return f"{f.id}: unknown unit or undeclared variable ({exc!r})"
    except CorpusError as exc:
        return str(exc)
    left, right = sides[0].dimensionality, sides[1].dimensionality
    if left != right:
        return f"{f.id}: lhs has {left} but rhs has {right}"
    return None


# --- (1) size and coverage ---------------------------------------------------------------------

def test_corpus_size_ids_and_topics():
    assert len(ALL) >= 160
    ids = [f.id for f in ALL]
    assert len(ids) == len(set(ids)), [i for i, n in collections.Counter(ids).items() if n > 1]
    counts = collections.Counter(f.topic for f in ALL)
    assert set(counts) <= set(formulas.TOPICS), set(counts) - set(formulas.TOPICS)
    assert len(formulas.TOPICS) == 13
    short = {t: counts.get(t, 0) for t in formulas.TOPICS if counts.get(t, 0) < 8}
    assert not short, f"topics with fewer than 8 entries: {short}"


def test_by_topic_and_cache():
    assert formulas.load() is not formulas.load()  # a fresh list each call ...
    assert formulas.load()[0] is formulas.load()[0]  # ... of the same cached objects
    for t in formulas.TOPICS:
        assert formulas.by_topic(t) and all(f.topic == t for f in formulas.by_topic(t))
    assert sum(len(formulas.by_topic(t)) for t in formulas.TOPICS) == len(ALL)
    with pytest.raises(KeyError):
        formulas.by_topic("fluids")


def test_entries_are_filled_in():
    for f in ALL:
        assert f.validity.strip().endswith("."), f.id
        assert "=" in f.latex, f.id
        assert all(v["name"].strip() and v["unit"].strip() for v in f.variables.values()), f.id


def test_ideal_gas_heat_capacities_present_with_validity():
    thermo = {f.id: f for f in formulas.by_topic("thermodynamics")}
    for fid in ("thermo_cv_monatomic", "thermo_cv_diatomic_room", "thermo_cp_diatomic_room",
                "thermo_cv_diatomic_high_temperature", "thermo_mayer_relation"):
        assert fid in thermo
    assert "monatomic" in thermo["thermo_cv_monatomic"].validity
    assert "room temperature" in thermo["thermo_cv_diatomic_room"].validity
    R = sympy.Symbol("R")
    assert formulas.parse(thermo["thermo_cv_monatomic"])[1] == sympy.Rational(3, 2) * R
    assert formulas.parse(thermo["thermo_cv_diatomic_room"])[1] == sympy.Rational(5, 2) * R


# --- (2) parsing and declared variables ----------------------------------------------------------

@pytest.mark.parametrize("f", ALL, ids=[f.id for f in ALL])
def test_parses_and_declares_all_symbols(f: Formula):
    lhs, rhs = formulas.parse(f)
    assert isinstance(lhs, sympy.Expr) and isinstance(rhs, sympy.Expr)
    free = {str(s) for s in lhs.free_symbols | rhs.free_symbols}
    assert free == set(f.variables), f"{f.id}: undeclared {free - set(f.variables)}, " \
                                     f"unused {set(f.variables) - free}"


def test_sympy_names_are_symbols_not_builtins():
    f = Formula("x_demo", "dc_circuits", "demo", "E = I N S", "E = I*N*S*gamma",
                {k: {"name": k, "unit": "dimensionless"} for k in ("E", "I", "N", "S", "gamma")},
                "Demo.")
    lhs, rhs = formulas.parse(f)
    assert lhs == sympy.Symbol("E") and rhs.free_symbols == {sympy.Symbol(s) for s in "INS"} | {
        sympy.Symbol("gamma")}


# --- (3) dimensional consistency -----------------------------------------------------------------

@pytest.mark.parametrize("f", ALL, ids=[f.id for f in ALL])
def test_dimensionally_consistent(f: Formula):
    err = dimension_error(f)
    assert err is None, err


# --- (4) the checker can fail ---------------------------------------------------------------------

KIN_VARS = formulas.load()[0].variables  # kin_velocity_time: v, v_0, a, t


def _fake(sympy_form: str, variables=KIN_VARS) -> Formula:
    return Formula("fake_wrong", "kinematics", "wrong on purpose", "-", sympy_form,
                   dict(variables), "Never.")


def test_checker_accepts_the_correct_formula():
    assert formulas.load()[0].id == "kin_velocity_time"
    assert dimension_error(_fake("v = v_0 + a*t")) is None


@pytest.mark.parametrize("form", [
    "v = v_0 + a*t**2",      # incompatible terms in a sum
    "v = a*t**2",            # single term with the wrong dimension
    "v = v_0*exp(a)",        # dimensional argument to exp
    "v = v_0*sin(t)",        # dimensional argument to sin
    "v = v_0 + log(a*t)",    # dimensional argument to log
])
def test_checker_detects_wrong_formula(form: str):
    err = dimension_error(_fake(form))
    assert err is not None and err.startswith("fake_wrong:"), err


def test_checker_flags_unknown_unit():
    bad = {**KIN_VARS, "a": {"name": "acceleration", "unit": "furlongs_per_blorp"}}
    assert dimension_error(_fake("v = v_0 + a*t", bad)) is not None


# --- loader errors --------------------------------------------------------------------------------

GOOD = """
- id: demo_entry
  topic: kinematics
  name: Demo
  latex: 'v = a t'
  sympy: 'v = a*t'
  variables:
    v: {name: speed, unit: meter/second}
    a: {name: acceleration, unit: meter/second**2}
    t: {name: time, unit: second}
  validity: Demo only.
"""


def test_from_yaml_good():
    (f,) = formulas.from_yaml(GOOD)
    assert f.id == "demo_entry" and f.variables["a"]["unit"] == "meter/second**2"


@pytest.mark.parametrize("old,new", [
    ("topic: kinematics", "topic: fluids"),                  # unknown topic
    ("  validity: Demo only.\n", ""),                        # missing field
    ("sympy: 'v = a*t'", "sympy: 'v == a*t'"),               # not one '='
    ("    t: {name: time, unit: second}", "    t: {name: time}"),  # variable lacks a unit
    ("    v: {name: speed", "    lambda: {name: speed"),     # keyword as a symbol
])
def test_from_yaml_malformed_names_the_entry(old: str, new: str):
    assert old in GOOD
    with pytest.raises(CorpusError, match="demo_entry"):
        formulas.from_yaml(GOOD.replace(old, new))


def test_from_yaml_duplicate_id():
    with pytest.raises(CorpusError, match="demo_entry: duplicate"):
        formulas.from_yaml(GOOD + GOOD)


def test_parse_error_names_the_entry():
    f = _fake("v = v_0 + (a*t")
    with pytest.raises(CorpusError, match="fake_wrong"):
        formulas.parse(f)
