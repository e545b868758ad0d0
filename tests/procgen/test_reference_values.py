"""procgen's reference answers, checked by an independent path (issue 54).

For every template of the bank (every tier and templates_more), on a few instances: the givens are read back from
the question as it is printed (the template's question text with each `{sym}` a quantity), made pint quantities in
the units printed there, the template's constants pint quantities in theirs; the template's equation chain is
evaluated on those quantities with numpy's functions (pint converts units and angles itself), and the result,
converted to the answer's unit, must agree with the answer procgen states (`Problem.answer`, what the checker
compares against). None of procgen's own computation (to_si, the rounded chain of Derivation.compute, fmt) is used.

The tolerance: procgen rounds every intermediate value to 4 significant figures (each rounding at most 5e-4
relative); the largest disagreement on the bank is 1.0e-3 (kin_projectile_range), so 5e-3 leaves room for a
cancellation and still catches a wrong unit, a wrong constant or a printed value that differs from the one used.
"""
import re
from dataclasses import replace

import numpy as np
import pytest

from r3bench import procgen
from verifiers.units import get_ureg

TOL = 5e-3
SEEDS = (0, 1, 2)
FUNCS = {"sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
         "atan": np.arctan, "exp": np.exp, "log": np.log, "pi": np.pi, "abs": abs, "Abs": abs, "E": np.e}


def quantity(text: str):
    """A printed quantity (`3.5 m/s`, `30°`, `25 °C`, `0.2`) as a pint quantity; temperatures absolute (kelvin)."""
    ureg = get_ureg()
    text = text.strip()
    if text.endswith("°"):
        return ureg.Quantity(float(text[:-1]), "degree")
    m = re.fullmatch(r"([-+]?\d*\.?\d+(?:e[-+]?\d+)?)\s*(.*)", text)
    assert m, f"not a printed quantity: {text!r}"
    value, unit = float(m.group(1)), m.group(2).strip()
    q = ureg.Quantity(value, ureg.parse_units(unit) if unit else "dimensionless")
    return q.to("kelvin") if q.units in (ureg.degC, ureg.degF) else q


def printed_givens(t, question: str) -> dict:
    """sym -> pint quantity of each given, read from the question text."""
    pattern = re.escape(t.question)
    for g in t.givens:
        pattern = pattern.replace(re.escape("{" + g.sym + "}"), f"(?P<{g.sym}>.+?)", 1)
    m = re.match(pattern, question)
    assert m, f"{t.name}: the question does not read as its template"
    return {g.sym: quantity(m.group(g.sym)) for g in t.givens}


def independent_answer(t, question: str) -> float:
    """The template's target from the printed givens, by pint, in the unit of the target's equation."""
    ureg = get_ureg()
    env = printed_givens(t, question)
    env.update({c.sym: ureg.Quantity(c.value, c.unit) for c in t.consts})
    for e in t.eqs:
        env[e.sym] = eval(e.expr.replace("^", "**"), dict(FUNCS), dict(env))  # noqa: S307 - the bank's own formulas
    r = env[t.target]
    r = r if hasattr(r, "to") else ureg.Quantity(r, "dimensionless")
    return float(r.to(t.eq(t.target).unit or "dimensionless").magnitude)


@pytest.mark.parametrize("name", sorted(procgen.BY_NAME))
def test_reference_answer_agrees_with_an_independent_computation(name):
    t = procgen.BY_NAME[name]
    for seed in SEEDS:
        p = procgen.generate(n=1, seed=seed, templates=[t])[0]
        want = independent_answer(t, p.question)
        stated = quantity(p.answer).to(t.eq(t.target).unit or "dimensionless").magnitude
        assert abs(stated - want) <= TOL * abs(want), (name, seed, p.answer, want, p.question)
        assert abs(p.answer_value - want) <= TOL * abs(want), (name, seed, p.answer_value, want)


def test_the_check_catches_a_wrong_reference():
    """The check has teeth: a reference computed with a wrong constant (g = 10 m/s^2 for 9.8) is 2% off."""
    t = procgen.BY_NAME["kin_free_fall"]
    wrong = replace(t, consts=tuple(replace(c, value=10.0) if c.sym == "g" else c for c in t.consts))
    bad = procgen.generate(n=1, seed=0, templates=[wrong])[0]
    want = independent_answer(t, bad.question)
    assert abs(bad.answer_value - want) > TOL * abs(want)
