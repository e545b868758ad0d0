"""The exact step checker for procedural problems: the first wrong step of a seven-tag solution.

Ground truth for every verifier and reward: it knows the template, so it can tell a wrong law
from a consistent calculation. Steps 1-4 are checked against the problem (target, principle,
equations, given values); steps 5-7 against the solution's own earlier lines (a later step that
follows correctly from an earlier error is not an error).
Returns (first_error, reason): 0 when every step is right.
"""
from __future__ import annotations

import math
import re

from r3bench.procgen.core import Template, lambdify, reference, symbols
from verifiers import check
from verifiers import seventag

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?"


def _close(a: float, b: float, rel: float = 2e-3) -> bool:
    """Equal within 0.2% (the rendered values carry 4 significant figures)."""
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def _lines(step) -> list[tuple[str, str]]:
    """(lhs, rhs) of every `lhs = rhs` line of a step (its own parser: the oracle depends on no
    verifier's internals, so verifiers can change without moving the ground truth)."""
    out = []
    for ln in (step.content if step else "").splitlines():
        if "=" in ln:
            lhs, rhs = ln.split("=", 1)
            out.append((lhs.strip(), rhs.strip()))
    return out


_ALLOWED = re.compile(r"(?:sqrt|sin|cos|tan|asin|acos|atan|exp|log|pi|[\d.eE+\-*/() ])+")


def _eval_numeric(rhs: str) -> float:
    """A substituted right-hand side: numbers, operators and the template functions only."""
    if not _ALLOWED.fullmatch(rhs):
        raise ValueError(f"not a numeric expression: {rhs[:40]}")
    return lambdify(rhs, ())()


def first_error(t: Template, raw: dict, text: str, final=None) -> tuple[int, str]:
    """`final`: the step-7 check of an answer form other than numeric (r3bench.procgen.forms.final_check):
    (final answer content, the last calculation's text, the solution's own values by symbol) -> bool."""
    ref = reference(t, raw)
    sol = seventag.parse(text)
    get = sol.get
    # 1. what is asked
    pa = get("problem_analysis")
    target_eq = t.eq(t.target)
    if pa is None or f"({t.target})" not in pa.content or target_eq.name not in pa.content:
        return 1, "problem_analysis does not name the asked quantity"
    # 2. the principle
    pr = get("principle")
    if pr is None or " ".join(pr.content.split()) != " ".join(t.principle.split()):
        return 2, "wrong principle"
    # 3. equations: each must be one of the template's, as a function (checked at the true values)
    eqs = _lines(get("governing_equation"))
    if not eqs:
        return 3, "no governing equation"
    known = dict(ref.values)
    known.update({e.sym: r for e, r in zip(ref.eqs, ref.results)})
    sol_eqs = {}
    for lhs, rhs in eqs:
        try:
            te = t.eq(lhs)
        except KeyError:
            return 3, f"equation for an unknown quantity {lhs}"
        try:
            ok = _close(lambdify(rhs, symbols(rhs))(*[known[s] for s in symbols(rhs)]),
                        lambdify(te.expr, symbols(te.expr))(*[known[s] for s in symbols(te.expr)]), 1e-6)
        except (KeyError, ValueError, ZeroDivisionError, SyntaxError, TypeError, OverflowError):
            ok = False
        if not ok:
            return 3, f"wrong equation for {lhs}"
        sol_eqs[lhs] = rhs
    # 4. values identified
    vals = {}
    for lhs, rhs in _lines(get("value_identification")):
        m = re.match(_NUM, rhs)
        if not m or lhs not in ref.values or not _close(float(m.group(0)), ref.values[lhs]):
            return 4, f"wrong value for {lhs}"
        vals[lhs] = float(m.group(0))
    if set(vals) != set(ref.values):
        return 4, "missing given values"
    # 5./6. substitution and calculation, consistent with the solution's own lines
    subs, calcs = _lines(get("substitution")), _lines(get("calculation"))
    env = dict(vals)
    for i, (lhs, rhs) in enumerate(eqs):
        if i >= len(subs) or subs[i][0] != lhs:
            return 5, f"no substitution for {lhs}"
        try:
            expect = lambdify(sol_eqs[lhs], symbols(sol_eqs[lhs]))(*[env[s] for s in symbols(sol_eqs[lhs])])
            got = _eval_numeric(subs[i][1])
        except (KeyError, ValueError, ZeroDivisionError, SyntaxError, OverflowError):
            return 5, f"substitution for {lhs} unreadable"
        if not _close(got, expect):
            return 5, f"wrong substitution for {lhs}"
        if i >= len(calcs) or calcs[i][0] != lhs:
            return 6, f"no calculation for {lhs}"
        m = re.match(_NUM, calcs[i][1])
        if not m or not _close(float(m.group(0)), got):
            return 6, f"arithmetic error in {lhs}"
        env[lhs] = float(m.group(0))
    # 7. the final answer is the last result, with its unit
    last_lhs = eqs[-1][0]
    fa = get("final_answer")
    want = f"{calcs[len(eqs) - 1][1]}"
    if fa is None or not (final(fa.content, want, env) if final is not None
                          else check(fa.content, want, kind="numeric").equivalent):
        return 7, "final answer does not match the calculation"
    if last_lhs != t.target:
        return 1, "solved for a different quantity"
    return 0, "all steps correct"
