"""The order of the step verifier's checks (issue 54): with errors at two steps i < j, the first error is i.

A table over the procgen templates (one problem of each): procgen's own error injection puts an error at step i
(its CLASSES: MC at 1 and 4, CM at 2 and 3, CE at 5 and 6), then a second one at step j on the erroneous
derivation; step 7, where procgen injects nothing, gets a wrong boxed answer (three times the solution's own). A
case counts only where procgen's exact checker (its oracle) places the first error at i and the second injection
changed step j's text. Every case must be booked at i by the symbolic verifier: a check of a later step run before
an earlier one (step 4's values before step 3's equations, say) books a wrong law with a misread given at 4.
"""
import random
from collections import defaultdict

import pytest

from r3bench import procgen
from r3bench.procgen.core import fmt, reference
from r3bench.procgen.inject import CLASSES, InjectError, inject
from r3bench.procgen.render import steps as rendered_steps
from verifiers import seventag
from verifiers.steps import verify

PROBS = procgen.generate(n=len(procgen.TEMPLATES), seed=0)  # one problem of every template
CLASS_AT = {s: c for c, ss in CLASSES.items() for s in ss}
PAIRS = [(i, j) for i in range(1, 8) for j in range(i + 1, 8)]


def _two_errors(p, i: int, j: int):
    """The seven steps of p's solution with procgen's error at step i and a second at step j, or None where
    procgen cannot inject both (a template without an alternative target or a wrong law)."""
    t = procgen.BY_NAME[p.template]
    d = reference(t, procgen.raw_values(p))
    try:
        d1 = inject(t, d, CLASS_AT[i], i, random.Random(f"{p.id}|{i}")).derivation
    except InjectError:
        return None
    first = rendered_steps(t, d1)
    if j == 7:
        return {**first, "final_answer": f"\\boxed{{{fmt(d1.answer * 3)} {d1.answer_unit}}}".replace(" }", "}")}
    try:
        d2 = inject(t, d1, CLASS_AT[j], j, random.Random(f"{p.id}|{i}|{j}")).derivation
    except InjectError:
        return None
    both = rendered_steps(t, d2)
    tag = seventag.TAGS[j - 1]
    return both if both[tag] != first[tag] else None


@pytest.fixture(scope="module")
def booked():
    """(i, j) -> [(template, first error booked, explanation)] over the cases procgen's oracle places at i."""
    rows = defaultdict(list)
    for p in PROBS:
        for i, j in PAIRS:
            parts = _two_errors(p, i, j) if i < 7 else None
            if parts is None:
                continue
            text = seventag.render(parts)
            if procgen.first_error(p, text)[0] != i:
                continue
            v = verify(p.question, text, p.solution)
            rows[(i, j)].append((p.template, v.first_error, v.explanation))
    return rows


@pytest.mark.parametrize("i,j", [(i, j) for i, j in PAIRS if i < 7])
def test_two_errors_are_booked_at_the_first(booked, i, j):
    cases = booked[(i, j)]
    assert cases, f"no template took errors at both {i} and {j}"
    bad = [c for c in cases if c[1] != i]
    assert not bad, (f"{len(bad)} of {len(cases)} booked elsewhere than step {i}", bad[:3])


def test_the_table_covers_every_template(booked):
    """Every template takes two errors (steps 4-7 always: a misread value, a slip, a wrong box)."""
    seen = {t for cases in booked.values() for t, *_ in cases}
    assert seen == {p.template for p in PROBS}
