"""Reference-free step verification: what can be checked offline without a seven-tag reference.

Real benchmark problems (JEEBench, PhysicsQA, MMLU, SciEval) come with a gold answer and no worked
seven-tag solution. `verify_reference_free(question, solution, gold)` checks, in the order of the
text, only what it can show:

  format       as verifiers.tag_format.format_error (FORMAT at the first broken position)
  step 3 (CM)  each governing equation is dimensionally consistent (pint, with the units of the
               solution's own value_identification and calculation lines)
  step 4 (MC)  each identified value is a number of the question (raw or converted to SI) or a
               physical constant (CONSTANTS, by SI value, within CheckConfig.const_rel_tol)
  step 5 (CE)  each substitution equals its equation at the identified values
  step 6 (CE)  each calculation result equals its substitution
  step 7 (CE)  the boxed answer equals the last calculation; then the answer is checked against the
               gold answer with verifiers.check

It places the first error it can show. When the answer is wrong against the gold and no step shows
why (a misread target, a wrong law: steps 1-3 cannot be judged without a reference), or when the
gold is missing and nothing is wrong, it returns valid=False with the reason: the trainers skip and
count such samples, the error tables book them as "no verdict". It never guesses 'all correct'.
"""
from __future__ import annotations

import re

from verifiers import seventag
from verifiers import step_reading as P
from verifiers import answer
from verifiers.config import CheckConfig
from verifiers.step_checks import check_arithmetic, dependency_order, dimension_ok, not_a_law, split_juxtaposed
from verifiers.tag_format import format_error
from verifiers.verdict import StepVerdict, at_step, invalid

#: SI values of the physical constants a solution may bring in without the question stating them
CONSTANTS = {
    "g": (9.8, 9.81, 9.807, 10.0), "G": (6.674e-11, 6.67e-11), "c": (3e8, 2.998e8), "h": (6.626e-34, 6.63e-34),
    "hbar": (1.055e-34,), "e": (1.602e-19, 1.6e-19), "k_e": (8.99e9, 9e9), "epsilon_0": (8.854e-12,),
    "mu_0": (1.257e-6, 1.2566e-6), "m_e": (9.109e-31, 9.11e-31), "m_p": (1.673e-27,), "k_B": (1.381e-23, 1.38e-23),
    "R": (8.314, 8.31), "N_A": (6.022e23,), "sigma": (5.67e-8,),
}
_CONST_VALUES = [v for vs in CONSTANTS.values() for v in vs]
CONST_REL_TOL = CheckConfig().const_rel_tol


def unit_constants(text: str, names_: set) -> dict:
    """Physical constants written as the unit of a value (`v = 0.80 c`, `q = 2 e`): {name: SI value} for each of
    `names_` that `text` writes after a number and that, read as a unit, is that constant (c is the speed of
    light; `500 g` is grams and `2 h` hours, not g or Planck's constant). Such a name is identified: the text
    measures in it."""
    out = {}
    for name in sorted(names_):
        if name not in CONSTANTS or not re.search(rf"(?<![\w.])\d[\d.]*(?:[eE][-+]?\d+)?\s*{re.escape(name)}(?![\w])",
                                                 text or ""):
            continue
        q = P.quantity(f"1 {name}")
        if q is not None and q[1] and any(P.close(q[0], c, CONST_REL_TOL) for c in CONSTANTS[name]):
            out[name] = q[0]
    return out


def verify_reference_free(question: str, solution: str, gold: str | None = None) -> StepVerdict:
    """The first error that can be shown without a reference; valid=False where none can be placed."""
    bad = format_error(solution)
    if bad is not None:
        return bad
    sol = seventag.parse(solution)
    n = sol.n
    svals = P.values(sol.get("value_identification"))
    units = {s: u for s, v, u, _, _ in svals if u or v != 0}  # a bare 0 is zero in any unit
    for s, _, u, _, _ in P.values(sol.get("calculation")):
        if u:  # a result written without a unit has an unknown unit, not a dimensionless one
            units.setdefault(s, u)
    eqs, _, idents = P.governing(sol.get("governing_equation"), {s for s, *_ in svals}, {s: v for s, v, *_ in svals})
    if idents:
        return at_step(3, idents[0][1], n)
    sol_eqs = dependency_order(split_juxtaposed(eqs, {s for s, *_ in svals}))
    checked = []
    # 3. dimensional consistency of every governing equation
    if not sol_eqs:
        return invalid("no governing equation of the form `quantity = expression`: nothing to check", n)
    for lhs, parts, _ in sol_eqs:
        if (why := not_a_law(lhs, parts[-1])):
            return at_step(3, why, n)
    dims = [dimension_ok(parts[-1], lhs, units) for lhs, parts, _ in sol_eqs]
    for (lhs, _, _), d in zip(sol_eqs, dims):
        if d is False:
            return at_step(3, f"the equation for {lhs} is dimensionally inconsistent", n)
    if any(d is True for d in dims):
        checked.append("dimensions")
    # 4. identified values against the question's givens and the physical constants
    qnums = P.numbers_in(question or "")
    for s, v, u, text, _ in svals:
        if P.given(v, qnums) or any(P.close(v, c, CONST_REL_TOL) for c in _CONST_VALUES):
            continue
        return at_step(4, f"the value {s} = {text} is neither a number of the question nor a physical constant", n)
    checked.append("values")
    # 5.-7. substitution, calculation, final answer, from the solution's own lines
    own = {s: v for s, v, *_ in svals}
    v = check_arithmetic(sol, sol_eqs, own, own, n, None, solution, question=question,
                         gold=None if gold is None else str(gold))
    if v.first_error or not v.valid:
        return v
    checked.append("arithmetic")
    if not gold:
        return invalid(f"no reference and no gold answer: checked {', '.join(checked)}; steps 1-3 cannot be "
                       "judged without a reference", n)
    verdict = answer.check(solution, str(gold))  # the whole text: the checker reads the committed answer
    if verdict.equivalent:
        return StepVerdict(0, None, f"answer matches the gold ({verdict.reason}); checked {', '.join(checked)} "
                           "without a reference", n)
    return invalid(f"the answer is wrong against the gold ({verdict.reason}) but no step shows the error "
                   f"(checked {', '.join(checked)}; a misread target or a wrong law needs a reference)", n)
