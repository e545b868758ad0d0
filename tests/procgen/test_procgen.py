"""Procedural bank: reference solutions are exact, injected errors sit at exactly the labelled step."""
import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from r3bench import procgen
from verifiers import seventag
from r3bench.procgen import core
from r3bench.procgen.export import CELLS, export
from verifiers import check

PROBS = procgen.generate(n=3 * len(procgen.TEMPLATES), seed=11)


def test_coverage_of_topics_templates_and_difficulty():
    assert len(procgen.TEMPLATES) >= 40 and len(procgen.TOPICS) >= 12
    assert set(Counter(t.topic for t in procgen.TEMPLATES).values()) and min(
        Counter(t.topic for t in procgen.TEMPLATES).values()) >= 3
    assert {t.difficulty for t in procgen.TEMPLATES} == {1, 2, 3}
    assert len({t.name for t in procgen.TEMPLATES}) == len(procgen.TEMPLATES)


@pytest.mark.parametrize("p", PROBS, ids=[p.id for p in PROBS])
def test_reference_solution_is_clean_correct_and_exact(p):
    sol = seventag.parse(p.solution)
    assert sol.ok and sol.n == 7 and not sol.problems, sol.problems
    assert check(p.solution, p.answer, kind="numeric").equivalent
    assert procgen.first_error(p, p.solution) == (0, "all steps correct")


def test_template_equations_are_dimensionally_consistent():
    from verifiers.units import get_ureg
    u = get_ureg()
    for t in procgen.TEMPLATES:
        raw, d = core.instance(t, random.Random(0))
        q = {}
        for g in t.givens:
            si, unit = core.to_si(raw[g.sym], g.unit)
            q[g.sym] = u.Quantity(si, unit.replace("^", "**") or "dimensionless")
        for c in t.consts:
            q[c.sym] = u.Quantity(c.value, c.unit)
        for e in t.eqs:
            import math
            import numpy as np
            ns = {"sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "atan": np.arctan,
                  "exp": np.exp, "log": np.log, "pi": math.pi}
            val = eval(e.expr, ns, dict(q))  # noqa: S307 - the project's own templates
            val = val if hasattr(val, "dimensionality") else u.Quantity(val, "dimensionless")
            want = u.Quantity(1, e.unit or "dimensionless")
            assert val.dimensionality == want.dimensionality, (t.name, e.sym, val.dimensionality, e.unit)
            q[e.sym] = val.to(want.units)


@pytest.mark.parametrize("cls,step", [c for c in CELLS if c[1]])
def test_injected_errors_fail_exactly_at_the_labelled_step(cls, step):
    made = 0
    for p in PROBS:
        try:
            text, fe, c, why = procgen.inject_problem(p, cls, step)
        except procgen.InjectError:
            continue
        made += 1
        assert (fe, c) == (step, cls)
        assert procgen.first_error(p, text)[0] == step, (p.template, why)
        assert not check(text, p.answer, kind="numeric").equivalent, (p.template, why)
        assert seventag.parse(text).ok
    assert made >= 20


def test_injection_refuses_what_a_template_cannot_take():
    from r3bench.procgen.templates import BY_NAME
    single = next(p for p in PROBS if p.difficulty == 1 and BY_NAME[p.template].alt is None)
    with pytest.raises(procgen.InjectError, match="no alternative target"):
        procgen.inject_problem(single, "MC", 1)
    with pytest.raises(procgen.InjectError, match="steps"):
        procgen.inject_problem(single, "CE", 2)
    with pytest.raises(procgen.InjectError, match="unknown error class"):
        procgen.inject_problem(single, "XX")


def test_deterministic_and_splits_share_no_instance():
    a = procgen.generate(n=300, seed=5)
    b = procgen.generate(n=300, seed=5)
    assert [p.to_dict() for p in a] == [p.to_dict() for p in b]
    assert [p.id for p in procgen.generate(n=300, seed=6)] != [p.id for p in a]
    assert len({p.id for p in a}) == 300
    splits = Counter(p.split for p in a)
    assert splits == {"train": 240, "validation": 30, "test": 30}


def test_export_writes_four_exports(tmp_path):
    m = export(tmp_path, n=200, seed=0, log=lambda s: None)
    rows = {name: [json.loads(x) for x in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
            for name in ("sft", "dpo", "verifier", "procgen_test")}
    assert len(rows["sft"]) == 200 and rows["sft"][0]["messages"][1]["content"] == rows["sft"][0]["completion"]
    assert all(r["chosen_first_error"] == 0 or r["chosen_first_error"] > r["rejected_first_error"] for r in rows["dpo"])
    cells = Counter((r["error_class"], r["first_error"]) for r in rows["verifier"])
    assert set(cells) == set(CELLS) and len(set(cells.values())) == 1  # exactly balanced
    assert len(rows["procgen_test"]) == m["splits"]["test"] == 20
    assert m["rows"]["sft"] == 200


@settings(max_examples=200, deadline=None)  # per-example deadline: benchmarks/test_bench_deadlines.py
@given(st.lists(st.sampled_from(list("<>/ab_=1. \n") + ["x = 3 m", "\\boxed{"] + [f"<{t}>" for t in seventag.TAGS]
                                + [f"</{t}>" for t in seventag.TAGS]), max_size=60).map("".join))
def test_parser_and_oracle_never_raise_on_tag_soup(text):
    sol = seventag.parse(text)
    assert isinstance(sol.problems, (list, tuple))
    step, why = procgen.first_error(PROBS[0], text)
    assert 1 <= step <= 7 and why
