"""The step checks the symbolic verifier shares between its two modes: with a seven-tag reference
(verifiers.steps) and without one (verifiers.stepref).

  dimension_ok(rhs, lhs, units)   pint check that `lhs = rhs` is dimensionally consistent (None: unknown)
  not_a_law(lhs, rhs)             why `lhs = rhs` cannot be a governing equation (unreadable, a bare number)
  split_juxtaposed(eqs, symbols)  `kx`, `mgh` read as products of known symbols
  check_arithmetic(...)           steps 5-7 (substitution, calculation, final answer) from a solution's lines

Every line is read as data by verifiers.stepparse; nothing here executes text.
"""
from __future__ import annotations

import re

from verifiers import stepparse as P
from verifiers.stepformat import boxed_all
from verifiers.units import get_ureg
from verifiers.verdict import StepVerdict, at_step, invalid


def _dims(units: dict) -> dict:
    u = get_ureg()
    out = {}
    for i, (k, unit) in enumerate(sorted(units.items())):
        try:
            out[k] = u.Quantity(1.3 + 0.17 * i, unit or "dimensionless")  # distinct magnitudes: no x - x = 0
        except Exception:  # noqa: BLE001 - pint raises many types on odd unit strings: unit unknown
            continue
    return out


def dimension_ok(rhs: str, lhs: str, units: dict) -> bool | None:
    """pint check that `lhs = rhs` is dimensionally consistent; None when a unit is unknown."""
    import numpy as np
    import pint

    q = _dims(units)
    try:
        free = P.names(rhs)
    except P.ExprError:
        return None
    if lhs not in q or any(n not in q for n in free):
        return None
    fn = {k: getattr(np, {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "ln": "log"}.get(k, k))
          for k in P.FUNCS if k != "abs"}
    try:
        with np.errstate(all="ignore"):
            val = P.evaluate_objects(rhs, q, fn)
    except (pint.DimensionalityError, pint.errors.OffsetUnitCalculusError):
        return False  # adding metres to seconds, sin of a length
    except (P.ExprError, ZeroDivisionError, OverflowError, ValueError, TypeError):
        return None
    dim = getattr(val, "dimensionality", None)
    if dim is None:
        return q[lhs].dimensionless
    return dim == q[lhs].dimensionality


def not_a_law(lhs: str, rhs: str) -> str | None:
    """Why `lhs = rhs` cannot be a governing equation: unreadable, or a bare number (the answer written as
    the 'law', which would otherwise pass every later step), else None."""
    try:
        free = P.names(rhs)
    except P.ExprError as e:  # not an expression of the grammar: no law can be read from it
        return f"the equation for {lhs} cannot be read as an expression ({e})"
    if not free:
        return f"the equation for {lhs} is a number ({rhs[:30]}), not a law relating quantities"
    return None


def _eval_units(text: str, env: dict) -> float:
    """Evaluate a substitution/calculation part; unit names written beside the numbers count as 1."""
    try:
        return P.evaluate(text, env)
    except P.ExprError:
        free = P.names(text) - set(env)
        if not free or len(free) > 4:
            raise
        u = get_ureg()
        for f in free:
            try:
                u.parse_units(f)
            except Exception:  # noqa: BLE001 - not a unit: the name is unknown
                raise P.ExprError(f"unknown name {f}") from None
        return P.evaluate(text, {**env, **{f: 1.0 for f in free}})


def _result(part: str, env: dict) -> float:
    """A calculation part's value: a quantity in SI when it reads as one, else the expression's value."""
    q = P.quantity(part) if P.is_quantity(part) else None
    if q is not None:
        return q[0]
    return _eval_units(part, env)


def _raw(part: str, env: dict) -> float:
    """A part's number as written (in its own unit), else the expression's value with env."""
    x = P.raw_number(part) if P.is_quantity(part) else None
    return x if x is not None else _eval_units(part, env)


def split_juxtaposed(eqs, symbols: set) -> list:
    """Equations with an unknown name that is symbols written together (`kx`, `mgh`) read as their product."""
    out = []
    known = set(symbols) | {lhs for lhs, _, _ in eqs}
    for lhs, parts, line in eqs:
        rhs = parts[-1]
        try:
            free = P.names(rhs)
        except P.ExprError:
            out.append((lhs, parts, line))
            continue
        for name in sorted(free - known, key=len, reverse=True):
            if len(name) > 1 and all(ch in known for ch in name):
                rhs = re.sub(rf"(?<![\w\\]){name}(?!\w)", " ".join(name), rhs)
        out.append((lhs, parts[:-1] + [rhs], line))
    return out


def check_arithmetic(sol, sol_eqs, own_vals: dict, true_env: dict, n: int, ref_answer) -> StepVerdict:
    """Steps 5-7 from the solution's own lines (shared with the reference-free mode).

    Numbers may be substituted in SI (the values read in SI) or as written in their own units
    (`N0 = 80 g` substituted as 80): each substitution is matched in either system, and its
    calculation is compared in the system its substitution used.
    """
    subs, calcs = P.equations(sol.get("substitution")), P.equations(sol.get("calculation"))
    calc_of = {}
    for lhs, parts, i in calcs:
        calc_of.setdefault(lhs, []).append((parts, i))
    own = dict(own_vals)
    raw = {s: x for s, _, _, text, _ in P.values(sol.get("value_identification"))
           if (x := P.raw_number(text)) is not None}
    for lhs, parts, _ in calcs:  # the solution's own results feed later substitutions
        for env, fn in ((own, _result), (raw, _raw)):
            try:
                env[lhs] = fn(parts[-1], env)
            except P.ExprError:
                pass
    # 5. substitutions, each against its equation (own values, or true ones), in the order of the text
    errors, got_of, mode_of, used = [], {}, {}, set()
    for k, (lhs, eq_parts, _) in enumerate(sol_eqs):
        j = next((j for j, (l, _, _) in enumerate(subs) if l == lhs and j not in used), None)
        if j is None and k < len(subs) and k not in used and subs[k][0] not in {e[0] for e in sol_eqs}:
            j = k
        if j is None:
            errors.append((len(subs) + k, f"no substitution for {lhs}"))
            continue
        used.add(j)
        _, parts, line = subs[j]
        expect = []
        for mode, env in (("si", own), ("si", true_env), ("raw", raw)):
            try:
                expect.append((mode, P.evaluate(eq_parts[-1], env)))
            except P.ExprError:
                pass
        try:
            vals = [_eval_units(p, own) for p in parts]
        except P.ExprError as e:
            errors.append((line, f"the substitution for {lhs} cannot be evaluated ({e})"))
            continue
        hit = next((mode for mode, x in expect if P.close(vals[0], x)), None)
        if expect and hit is None:
            errors.append((line, f"the substitution for {lhs} gives {vals[0]:.4g}; its equation at the identified "
                                 f"values gives {expect[0][1]:.4g}"))
            continue
        bad = next((p for p, x in zip(parts[1:], vals[1:]) if not P.close(x, vals[0])), None)
        if bad is not None:
            errors.append((line, f"the substitution for {lhs} does not simplify to {bad}"))
            continue
        got_of[lhs], mode_of[lhs] = vals[-1], hit or "si"
    if errors:
        return at_step(5, min(errors)[1], n)
    # 6. calculations: every part of every line for a quantity equals its substitution
    last = None
    for lhs, _, _ in sol_eqs:
        lines_ = calc_of.get(lhs)
        if not lines_:
            errors.append((10 ** 6, f"no calculation result for {lhs}"))
            continue
        for parts, line in lines_:
            for p in parts:
                try:
                    x = _raw(p, raw) if mode_of[lhs] == "raw" else _result(p, own)
                except P.ExprError as e:
                    errors.append((line, f"the calculation of {lhs} cannot be read ({e})"))
                    break
                if not P.close(x, got_of[lhs]):
                    errors.append((line, f"arithmetic error: {lhs} = {p} but the substitution gives {got_of[lhs]:.4g}"))
                    break
        last = lines_[-1][0][-1]
    if errors:
        return at_step(6, min(errors)[1], n)
    # 7. the final answer follows from the last calculation
    fa = sol.get("final_answer").content
    boxes = boxed_all(fa)
    ans = boxes[-1] if boxes else fa.strip()
    qa, ql = P.quantity(ans), P.quantity(last) if last else None
    if qa is None:
        return at_step(7, f"the final answer {ans[:40]!r} is not a number with a unit", n)
    if ql is not None:
        # a bare number (JEE style: 'in kW m^-2') is read in the unit the calculation is written in
        bare_ok = not qa[1] and (lr := P.raw_number(last)) is not None and P.close(qa[0], lr)
        if not P.close(qa[0], ql[0]) and not bare_ok:
            return at_step(7, f"the final answer {ans[:40]} does not follow from the last calculation {last}", n)
        if ql[1] and qa[1] and qa[1] != ql[1]:
            return at_step(7, f"the final answer's unit ({qa[1] or 'none'}) is not the calculation's ({ql[1]})", n)
        if bare_ok and not P.close(qa[0], ql[0]):
            qa = ql
    if ref_answer is not None and not (P.close(qa[0], ref_answer[0]) and (not ref_answer[1] or qa[1] == ref_answer[1])):
        return invalid(f"every step checks, but the answer {ans[:40]} differs from the reference "
                       f"({ref_answer[0]:.4g} {ref_answer[1]}): the first error could not be placed", n)
    return StepVerdict(0, None, "all steps correct", n)
