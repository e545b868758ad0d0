"""templates_more: every new template parses, verifies (the oracle and the step verifier) and takes
every injected error at its labelled step; the old banks' datasets do not include them."""
import math
import random

import numpy as np
import pytest

from r3bench import procgen
from r3bench.procgen import core, tiers
from r3bench.procgen.export import CELLS
from r3bench.procgen.templates_more import MORE
from verifiers import check, seventag
from verifiers.steps import verify

INSTANCES = {t.name: [procgen.generate(n=1, seed=s, templates=[t])[0] for s in range(4)] for t in MORE}


def test_new_templates_are_new_and_spread_over_topics():
    old = {t.name for ts in tiers.TIER_TEMPLATES.values() for t in ts}
    assert not {t.name for t in MORE} & old and len({t.name for t in MORE}) == len(MORE)
    assert len({t.topic for t in MORE}) >= 12 and {"rotation", "fluids"} <= {t.topic for t in MORE}
    assert not {t.name for t in MORE} & {t.name for t in procgen.TEMPLATES}  # r3_procgen's bank unchanged
    assert all(procgen.BY_NAME[t.name] is t for t in MORE)


@pytest.mark.parametrize("t", MORE, ids=[t.name for t in MORE])
def test_reference_parses_checks_and_verifies(t):
    for p in INSTANCES[t.name]:
        sol = seventag.parse(p.solution)
        assert sol.ok and sol.n == 7 and not sol.problems, sol.problems
        assert check(p.solution, p.answer, kind="numeric").equivalent
        assert procgen.first_error(p, p.solution) == (0, "all steps correct")
        v = verify(p.question, p.solution, p.solution)
        assert v.valid and v.first_error == 0, v.explanation


@pytest.mark.parametrize("t", MORE, ids=[t.name for t in MORE])
def test_equations_are_dimensionally_consistent(t):
    from verifiers.units import get_ureg
    u = get_ureg()
    raw, _ = core.instance(t, random.Random(0))
    q = {}
    for g in t.givens:
        si, unit = core.to_si(raw[g.sym], g.unit)
        q[g.sym] = u.Quantity(si, unit.replace("^", "**") or "dimensionless")
    for c in t.consts:
        q[c.sym] = u.Quantity(c.value, c.unit)
    ns = {"sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "atan": np.arctan,
          "exp": np.exp, "log": np.log, "pi": math.pi}
    for e in t.eqs + ((t.alt,) if t.alt else ()):
        val = eval(e.expr, ns, dict(q))  # noqa: S307 - the project's own templates
        val = val if hasattr(val, "dimensionality") else u.Quantity(val, "dimensionless")
        want = u.Quantity(1, e.unit or "dimensionless")
        assert val.dimensionality == want.dimensionality, (e.sym, val.dimensionality, e.unit)
        q[e.sym] = val.to(want.units)


@pytest.mark.parametrize("cls,step", [c for c in CELLS if c[1]])
@pytest.mark.parametrize("t", MORE, ids=[t.name for t in MORE])
def test_every_template_takes_every_injection_at_its_step(t, cls, step):
    made = 0
    for p in INSTANCES[t.name]:
        try:
            text, fe, c, why = procgen.inject_problem(p, cls, step)
        except procgen.InjectError:
            continue
        made += 1
        assert (fe, c) == (step, cls)
        assert procgen.first_error(p, text)[0] == step, why
        assert not check(text, p.answer, kind="numeric").equivalent, why
    assert made >= 3, (t.name, cls, step)
