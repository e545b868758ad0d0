"""The step checks the symbolic verifier shares between its two modes: with a seven-tag reference
(verifiers.reference_based) and without one (verifiers.reference_free).

  dimension_ok(rhs, lhs, units)   pint check that `lhs = rhs` is dimensionally consistent (None: unknown)
  not_a_law(lhs, rhs)             why `lhs = rhs` cannot be a governing equation (unreadable, a bare number)
  split_juxtaposed(eqs, symbols)  `kx`, `mgh` read as products of known symbols
  check_arithmetic(...)           steps 5-7 (substitution, calculation, final answer) from a solution's lines

Every line is read as data by verifiers.step_reading; nothing here executes text.
"""
from __future__ import annotations

import math
import re

from verifiers import answer
from verifiers import step_reading as P
from verifiers.extract import letters_in
from verifiers.tag_format import boxed_all
from verifiers.units import get_ureg
from verifiers.verdict import StepVerdict, at_step


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
    fn["abs"] = abs  # a magnitude |x| keeps the dimension of x
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
    if lhs in free and P.identity(lhs, rhs):
        return f"the equation for {lhs} holds for any values (`{lhs} = {rhs[:30]}`): an identity, not a law"
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
        for f in sorted(free):  # sorted: the same name is reported on every run (sets iterate by hash)
            try:
                u.parse_units(f)
            except Exception:  # noqa: BLE001 - not a unit: the name is unknown
                raise P.ExprError(f"unknown name {f}") from None
        return P.evaluate(text, {**env, **{f: 1.0 for f in free}})


UNIT_AFTER_NUMBER, units_dropped = P.UNIT_AFTER_NUMBER, P.units_dropped  # their home: step_reading (governing() reads them)


_U = r"(?![eE][-+]?\d)[A-Za-zΩµ°]+(?:\^\{?-?\d+\}?)?"
_QTY_IN_EXPR = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*(?:\\[,;: ]|~|\s)*"
                          r"(?:\[([^\[\]]{1,20})\]|(" + _U + r"(?:[*/·]" + _U + r")*))(?=\s*(?:[)*+/-]|$))")


def written_units_ok(text: str, unit: str | None) -> bool | None:
    """Whether the units written beside the numbers of `text` (`28 m/s * 43 s`) combine to `unit` (the SI unit of
    the quantity the text is equal to): `24 m * 51 s` is no distance. None when no unit is written or one is unknown."""
    units, k = {}, 0

    def sym(m):
        nonlocal k
        u = P.unit_of(f"1 {(m.group(2) or m.group(3) or '').strip()}")
        if u is None:
            raise P.ExprError("unknown unit")
        k += 1
        units[f"uu{k}"] = u
        return f"({m.group(1)}*uu{k})"

    try:
        out = _QTY_IN_EXPR.sub(sym, text)
    except P.ExprError:
        return None
    if not units or unit is None or re.search(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\d.]*\*uu)", out):
        return None  # a number written without its unit: the units cannot be combined
    return dimension_ok(out, "uu0", {**units, "uu0": unit})


def units_to_si(text: str) -> str | None:
    """The text with each `number unit` written inside it (`(72 km/h)^2`, `(2000 cm^3)`) replaced by its SI value
    (`(20.0)^2`), when any was: a value substituted with its unit is that quantity, as value lines are read."""
    changed = False

    def si(m):
        nonlocal changed
        unit = (m.group(2) or m.group(3) or "").strip()
        q = P.quantity(f"{m.group(1)} {unit}")
        if q is None or not unit:
            return m.group(0)
        changed = True
        return f"({q[0]!r})"

    out = _QTY_IN_EXPR.sub(si, text)
    return out if changed else None


_TRIG_NUMBER = re.compile(r"((?<![A-Za-z_])(?:sin|cos|tan)\s*\(?\s*)(\d+(?:\.\d+)?)(?![\d.]*\s*(?:\*\s*pi|°|\\circ|deg|rad))")


def _trig_degrees(text: str) -> str | None:
    """The text with a sine, cosine or tangent of a bare number (`sin 60`, `cos(30)`) read in degrees, when it
    has one: the angle as the value line writes it (`theta = 60 degrees` substituted as 60)."""
    out = _TRIG_NUMBER.sub(lambda m: f"{m.group(1)}({m.group(2)}*pi/180)", text)
    return out if out != text else None


#: an expression in brackets followed by one unit: `(4.0 - 2.3) eV`, `(12 + 8) kN`
_BRACKET_TIMES_UNIT = re.compile(r"(\([^()]{1,200}\))\s*([A-Za-zµΩ°][A-Za-z0-9µΩ°/^*·-]{0,15})")


def _readings(text: str, env: dict) -> list[float]:
    """The values a substitution part can have: as written (unit names count as 1), with the units written
    after its numbers dropped, and with each number and its unit read as the quantity in SI."""
    out = []
    for t in (text, units_dropped(text), units_to_si(text), _trig_degrees(text)):
        if t is None:
            continue
        try:
            out.append(_eval_units(t, env))
        except P.ExprError:
            continue
    m = _BRACKET_TIMES_UNIT.fullmatch(text.strip())
    if m and (q := P.quantity(f"1 {m.group(2)}")) is not None and q[1]:  # `(4.0 - 2.3) eV`: the bracket in that unit, in SI
        try:
            out.append(_eval_units(m.group(1), env) * q[0])
        except P.ExprError:
            pass
    if not out:
        _eval_units(text, env)  # raises the reason
    return out


_MANTISSA = re.compile(r"^\s*[-+−]?\s*(\d+(?:\.\d*)?|\.\d+)")


def _rounded_as_written(part: str, x: float, exact: float) -> bool:
    """Whether a result written with n >= 2 significant figures (`3.6e-10 m`, `1.8 s`) is the exact value rounded
    to n: a result reported to the precision of the data is no arithmetic error (graders allow it)."""
    m = _MANTISSA.match(part or "")
    if not m or not math.isfinite(x) or not math.isfinite(exact) or exact == 0:
        return False
    digits = m.group(1).replace(".", "").lstrip("0")
    n = len(digits)
    if n < 2 or n > 6:
        return False
    return f"{x:.{n}g}" == f"{exact:.{n}g}"  # both to n figures: no tolerance of its own (CheckConfig holds those)


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
        for name in sorted(free - known, key=lambda x: (-len(x), x)):
            if len(name) > 1 and all(ch in known for ch in name):
                rhs = re.sub(rf"(?<![A-Za-z_\\]){name}(?![A-Za-z0-9_])", " ".join(name), rhs)  # `2gh` is 2 g h, `CV²` C V²
        out.append((lhs, parts[:-1] + [rhs], line))
    return out


def _natural_substitutions(step, subs, sol_eqs, own_vals: dict) -> list:
    """Substitution lines written in the law's natural form, numbers in and the unknown left where the law has it
    (`20 = \\frac{1}{2} \\cdot 9.8 \\cdot t^2`), as (unknown, [the line solved for it], line): the unknown is
    the one name of the line that is no identified value (unit names written after numbers dropped), and a
    quantity the solution's equations solve for that no `x = ...` substitution line gives. Solved by
    step_reading.solve_for (the sides read by safeexpr, rearranged as sympy objects: no text is evaluated);
    a positive root is taken where there are two."""
    wanted = {lhs for lhs, _, _ in sol_eqs} - {lhs for lhs, _, _ in subs}
    taken = {i for _, _, i in subs}
    out = []
    for i, ln in enumerate(P.lines(step)):
        if i in taken or not wanted:
            continue
        for text in (ln, units_dropped(ln)):
            sides = [x.strip() for x in P.APPROX.sub("=", text or "").split("=")]
            if len(sides) != 2 or not all(sides) or P.lhs_name(sides[0]):
                continue
            try:
                free = (P.names(sides[0]) | P.names(sides[1])) - set(own_vals)
            except P.ExprError:
                continue
            if len(free) != 1 or not free <= wanted:
                continue
            x = free.pop()
            cands = P.solve_for(sides[0], sides[1], x)
            pick = next((c for c in cands if _positive(c, own_vals)), cands[0] if cands else None)
            if pick is not None:
                out.append((x, [pick], i))
                wanted.discard(x)
                break
    return out


def _numeric(text: str) -> bool:
    """Whether a text is arithmetic on numbers alone (`1/0.60`): no names."""
    try:
        return not P.names(text) and bool(re.search(r"\d", text))
    except P.ExprError:
        return False


def dependency_order(eqs) -> list:
    """Equations in the order they can be evaluated: one that uses the quantity another solves for comes after
    it (`t = gamma t0, gamma = 1/sqrt(1 - v^2/c^2)` -> gamma first), else in the order of the text; the last is
    then the asked quantity's. A cycle keeps the text's order."""
    rest, done, out = list(eqs), set(), []
    solved = {e[0] for e in eqs}
    while rest:
        for k, (lhs, parts, line) in enumerate(rest):
            try:
                needs = (P.names(parts[-1]) & solved) - done - {lhs}
            except P.ExprError:
                needs = set()
            if not needs:
                break
        else:
            return out + rest
        out.append(rest.pop(k))
        done.add(out[-1][0])
    return out


_IS = re.compile(r"(?:^|\s)(?:is|are|equals|gives|becomes|comes to|≈)\s+(?:about\s+|approximately\s+|roughly\s+)?", re.I)


def _stated_result(line: str) -> str | None:
    """The result a line without `=` states: the whole line when it is `number unit` (`1.5 A`), else what its
    last `is` / `equals` / `gives` says when that is a number with its unit ('its arcsine is 48.8 degrees')."""
    line = line.strip().rstrip(".")
    if P.is_quantity(line):
        return line
    last = None
    for m in _IS.finditer(line):
        last = m
    tail = line[last.end():].strip() if last else ""
    return tail if tail and P.is_quantity(tail) and P.quantity(tail) is not None else None


def _results_elsewhere(sol, subs, calcs, sol_eqs) -> list:
    """Results the calculation step does not write as `x = result` lines, as (symbol, [result], line) lines:
    - an intermediate quantity worked out in the substitution step (`R = 4.0 + 8.0 = 12 ohm`, then `I = 24/12`):
      the substitution line's last part, a number, is that quantity's result when no calculation line gives it;
    - the calculation step's result written bare (`1.5 A`) or stated in words ('its arcsine is 48.8 degrees'),
      for the last governing equation's quantity when no calculation line names it.
    Line numbers run after the calculation step's own (an error among them is reported after those)."""
    have = {lhs for lhs, _, _ in calcs}
    base = max((i for _, _, i in calcs), default=-1) + 1
    out = []
    for lhs, parts, i in subs:
        if lhs not in have and len(parts) >= 2 and (P.is_quantity(parts[-1]) or _numeric(parts[-1])):
            out.append((lhs, [parts[-1]], base + i))
            have.add(lhs)
    if sol_eqs and sol_eqs[-1][0] not in have:
        calc_lines = P.lines(sol.get("calculation"))
        bare = [(i, [r]) for i, ln in enumerate(calc_lines) if "=" not in ln
                and (r := _stated_result(ln)) is not None]
        # a line of numbers alone (`4988.4 J / 0.050 m^3 = 99768 Pa`): its results are the last quantity's
        bare += [(i, parts[1:]) for i, ln in enumerate(calc_lines)
                 if (parts := [x.strip() for x in P.APPROX.sub("=", re.sub(
                     r"^(?:[A-Za-z'’-]+,?\s+)+(?=[-+(.\d])", "", ln)).split("=")])[0]
                 and len(parts) >= 2 and all(parts) and P.lhs_name(parts[0]) is None
                 and _numeric(units_dropped(parts[0]) or parts[0]) and all(P.is_quantity(x) or _numeric(x) for x in parts[1:])]
        if bare:
            i, res = max(bare)
            out.append((sol_eqs[-1][0], res, i))
    return out


def _continued(step, subs) -> list:
    """A substitution line that starts with `=` (`KE = 1/2*3.0*5.0^2`, then `= 1.5*16` below it) continues the
    equation above it: its parts are added to that line's."""
    lines_ = P.lines(step)
    out = [(lhs, list(parts), i) for lhs, parts, i in subs]
    for i, ln in enumerate(lines_):
        ln = P.APPROX.sub("=", ln).strip()
        if not ln.startswith("="):
            continue
        prev = [e for e in out if e[2] < i]
        if not prev:
            continue
        last = max(prev, key=lambda e: e[2])
        if last[2] != i - 1 and any(not P.APPROX.sub("=", lines_[k]).strip().startswith("=") for k in range(last[2] + 1, i)):
            continue  # only a run of `= ...` lines right below the equation continues it
        last[1].extend(x.strip() for x in ln[1:].split("=") if x.strip())
    return out


def _values_restated(subs, own_vals: dict, raw: dict, solved: set) -> list:
    """The substitution step restating an identified value with another number (`v = 4.0 m/s` where the values
    say 5.0 m/s): the substitution puts a wrong number into the equation - its error (step 5), not the
    calculation's. Returns (line, why) errors."""
    out = []
    for lhs, parts, line in subs:
        if lhs in solved or lhs not in own_vals or len(parts) != 1 or not P.is_quantity(parts[0]):
            continue
        q = P.quantity(parts[0])
        if q is None:
            continue
        x = P.raw_number(parts[0])
        if P.close(q[0], own_vals[lhs]) or (x is not None and lhs in raw and P.close(x, raw[lhs])):
            continue
        out.append((line, f"the substitution puts {lhs} = {parts[0]} where the value identified is "
                          f"{own_vals[lhs]:.4g}"))
    return out


def _positive(expr: str, env: dict) -> bool:
    try:
        return P.evaluate(expr, env) > 0
    except P.ExprError:
        return False


def check_arithmetic(sol, sol_eqs, own_vals: dict, true_env: dict, n: int, ref_answer,
                     solution: str | None = None, ref_text: str | None = None, question: str | None = None,
                     gold: str | None = None, raw_extra: dict | None = None) -> StepVerdict:
    """Steps 5-7 from the solution's own lines (shared with the reference-free mode).

    Numbers may be substituted in SI (the values read in SI) or as written in their own units
    (`N0 = 80 g` substituted as 80): each substitution is matched in either system, and its
    calculation is compared in the system its substitution used.

    The final answer is read in the answer form the reference (`ref_text`) or the gold (`gold`, the
    reference-free mode: it only tells the form, the caller checks the answer) has: option letters
    (final_letters), an integer (the calculation rounded is right) or a value with a unit.
    `question`: where its lettered options can be read, the letter must be the one the calculation gives.
    `raw_extra`: values of names as written in their own units (a constant the values are measured in, 1).
    """
    subs, calcs = P.equations(sol.get("substitution")), P.equations(sol.get("calculation"))
    subs = sorted(subs + _natural_substitutions(sol.get("substitution"), subs, sol_eqs, own_vals), key=lambda e: e[2])
    subs = _continued(sol.get("substitution"), subs)
    calcs = calcs + _results_elsewhere(sol, subs, calcs, sol_eqs)
    calc_of = {}
    for lhs, parts, i in calcs:
        calc_of.setdefault(lhs, []).append((parts, i))
    own = dict(own_vals)
    raw = {s: x for s, _, _, text, _ in P.values(sol.get("value_identification"))
           if (x := P.raw_number(text)) is not None}
    raw.update(raw_extra or {})  # a constant the values are written in (`v = 0.80 c`) is 1 in their own units
    for lhs, parts, _ in calcs:  # the solution's own results feed later substitutions
        for env, fn in ((own, _result), (raw, _raw)):
            try:
                env[lhs] = fn(parts[-1], env)
            except P.ExprError:
                pass
    # 5. substitutions, each against its equation (own values, or true ones), in the order of the text
    errors, got_of, mode_of, used = [], {}, {}, set()
    errors += _values_restated(subs, own_vals, raw, {e[0] for e in sol_eqs})
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
        # the substitution is read without this equation's result or any later one: `s = s`, `s = s + 0` or
        # `\frac{s}{1}` took the solution's own result and so matched anything (issue 32)
        later = {e[0] for e in sol_eqs[k:]}
        sub_env = {s_: v for s_, v in own_vals.items() if s_ not in later}
        sub_env.update({s_: v for s_, v in own.items() if s_ not in later and s_ not in sub_env})
        try:
            readings = [_readings(p, sub_env) for p in parts]
        except P.ExprError as e:
            errors.append((line, f"the substitution for {lhs} cannot be evaluated ({e})"))
            continue
        # an SI match first: `(54 km/h)^2` read as 15 m/s, then the calculation is checked in SI
        first = next(((mode, x) for mode, ex in expect for x in readings[0] if P.close(x, ex)), None)
        hit = first[0] if first else None
        vals = [first[1] if first else readings[0][0]]
        vals += [next((x for x in r if P.close(x, vals[0])), r[0]) for r in readings[1:]]
        if expect and hit is None:
            errors.append((line, f"the substitution for {lhs} gives {vals[0]:.4g}; its equation at the identified "
                                 f"values gives {expect[0][1]:.4g}"))
            continue
        bad = next((p for p, x in zip(parts[1:], vals[1:]) if not P.close(x, vals[0])), None)
        if bad is not None:
            errors.append((line, f"the substitution for {lhs} does not simplify to {bad}"))
            continue
        got_of[lhs], mode_of[lhs] = vals[-1], hit or "si"
        if sum(e[0] == lhs for e in sol_eqs) == 1:
            # the quantity's other substitution lines (`KE = 1/2*3.0*5.0^2`, then `KE = 1.5*16`): one substitution
            # written over several lines, each of which must give the same number (an arithmetic slip there is the
            # substitution's, step 5, not the calculation's)
            for j2, (l2, parts2, line2) in enumerate(subs):
                if l2 != lhs or j2 == j:
                    continue
                used.add(j2)
                try:
                    more = [_readings(p, sub_env) for p in parts2]
                except P.ExprError:
                    continue
                bad = next((p for p, r in zip(parts2, more) if not any(P.close(x, vals[0]) for x in r)), None)
                if bad is not None:
                    errors.append((line2, f"the substitution for {lhs} does not simplify to {bad}"))
                    break
    if errors:
        return at_step(5, min(errors)[1], n)
    # 6. calculations: every part of every line for a quantity equals its substitution
    last, sig_exact = None, None
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
                if not P.close(x, got_of[lhs]) and (deg := _trig_degrees(p)) is not None:
                    try:  # `0.40*5.0*0.30*sin 90`: the angle in degrees, as the value line writes it
                        x = _raw(deg, raw) if mode_of[lhs] == "raw" else _result(deg, own)
                    except P.ExprError:
                        pass
                if not P.close(x, got_of[lhs]) and mode_of[lhs] != "raw":
                    try:  # the result in the unit it is written in, as its substitution's numbers (`-13.6/9 = -1.511 eV`)
                        xr = _raw(p, raw)
                        x = xr if P.close(xr, got_of[lhs]) else x
                    except P.ExprError:
                        pass
                if not P.close(x, got_of[lhs]) and not _rounded_as_written(p, x, got_of[lhs]):
                    errors.append((line, f"arithmetic error: {lhs} = {p} but the substitution gives {got_of[lhs]:.4g}"))
                    break
        last = lines_[-1][0][-1]
        # the last result reported rounded to its significant figures: the exact value it stands for
        sig_exact = got_of[lhs] if mode_of.get(lhs) != "raw" and lhs in got_of else None
    if errors:
        return at_step(6, min(errors)[1], n)
    # 7. the final answer follows from the last calculation
    fa = sol.get("final_answer").content
    boxes = boxed_all(fa)
    ans = boxes[-1] if boxes else fa.strip()
    form = ref_text if ref_text is not None else gold
    ql = P.quantity(last) if last else None
    qa = None
    if letters_in(ans, P.LETTERS) or (form is not None and letters_in(form, P.LETTERS)):
        chosen = answer.canonical(solution if solution is not None else fa, "mcq_multi") or ""
        if (why := _option_error(chosen, question, ql, own)):
            return at_step(7, why, n)
        if ref_text is None:
            return StepVerdict(0, None, "all steps correct", n)
        kind = "mcq" if len(letters_in(ref_text, P.LETTERS) or "") == 1 else "mcq_multi"
        v = answer.check(solution if solution is not None else fa, ref_text, kind)
        right, why = v.equivalent, v.reason
    else:
        qa = P.quantity(ans)
        if qa is None:
            return at_step(7, f"the final answer {ans[:40]!r} is not a number with a unit", n)
        if ql is not None:
            # a bare number (JEE style: 'in kW m^-2') is read in the unit the calculation is written in
            bare_ok = not qa[1] and (lr := P.raw_number(last)) is not None and P.close(qa[0], lr)
            rounded = _integer_form(form, question) and _rounds_to(qa, ql, last)
            if not P.close(qa[0], ql[0]) and not bare_ok and not rounded:
                return at_step(7, f"the final answer {ans[:40]} does not follow from the last calculation {last}", n)
            if ql[1] and qa[1] and qa[1] != ql[1]:
                return at_step(7, f"the final answer's unit ({qa[1] or 'none'}) is not the calculation's ({ql[1]})", n)
            if bare_ok and not P.close(qa[0], ql[0]):
                qa = ql
        if ref_text is None and ref_answer is None:
            return StepVerdict(0, None, "all steps correct", n)
        # an integer asked for is checked as one (the eval's kind: 37.8 is not 38 there, as it is within rel_tol)
        kind = "integer" if ref_text is not None and _integer_form(ref_text, None) and _integer_form(None, question) \
            else "numeric"
        right, why = _answer_right(solution, ref_text, ref_answer, qa, kind)
    if not right and sig_exact is not None and ref_answer is not None and qa is not None and ql is not None \
            and P.close(qa[0], ql[0]) and (not qa[1] or not ref_answer[1] or qa[1] == ref_answer[1]) \
            and not P.close(ql[0], sig_exact) and P.close(sig_exact, ref_answer[0]) \
            and _rounded_as_written(last, ql[0], sig_exact):
        # the box states the last calculation, which is the exact (right) value rounded to the figures it is
        # written with (`3.6e-10 m` for 3.637e-10 m): it states step 6's result, no error at step 7
        right = True
    if not right:
        nonsi = any(s_ in raw and not P.close(raw[s_], v) for s_, v in own_vals.items())
        raw_subs = sorted(l for l, m in mode_of.items() if m == "raw") if nonsi else []
        if raw_subs:  # the numbers went in as written, in units the law does not take
            return at_step(5, f"the substitution for {raw_subs[0]} uses values in non-SI units as written "
                              f"and the answer is wrong against the reference ({why})", n)
        # every step checks and the answer is still wrong: the first error is the final answer (issue 32;
        # before, no verdict, which a GRPO group paid as its mean)
        return at_step(7, f"every step checks, but the final answer {ans[:40]} is wrong against the reference "
                          f"({why})", n)
    return StepVerdict(0, None, "all steps correct", n)


_INTEGER_ASKED = re.compile(r"integer", re.I)


def _integer_form(form: str | None, question: str | None) -> bool:
    """Whether an integer is asked for: the reference's (or gold) answer is an integer, or the question says so
    ('rounded to the nearest integer', JEEBench's 'non-negative integer')."""
    return bool((form is not None and re.fullmatch(r"\s*[-+]?\d+\s*", form))
                or (question and _INTEGER_ASKED.search(question)))


def _rounds_to(qa, ql, last: str) -> bool:
    """An integer answer that is the calculation rounded (in SI, or in the unit the calculation is written in;
    a tie .5 may go either way): procgen's integer form asks for the SI value rounded."""
    if not float(qa[0]).is_integer() or (qa[1] and ql[1] and qa[1] != ql[1]):
        return False
    xs = [ql[0]] + ([r] if (r := P.raw_number(last)) is not None else [])
    return any(qa[0] in (round(x), math.floor(x + 0.5)) for x in xs if math.isfinite(x))


def _option_error(chosen: str, question: str | None, ql, own: dict) -> str | None:
    """Why the chosen letter(s) are not the option(s) the solution's own calculation gives, where the question's
    options can be read (step_reading.options); None when they are, or when nothing can be told.

    A value option (`378 m`) is true when the last calculation equals it (checker tolerance); a statement
    (`The distance travelled s is 378 m.`) when the solution's own value of that quantity does. A chosen option
    that is false is an error; with statements (multi-correct), so is a true one left out. An option whose
    value cannot be read, or a quantity the solution never computes, is not judged."""
    opts = P.options(question or "")
    if not opts or not chosen:
        return None
    true, false, statements = {}, set(), False
    for letter, text in opts.items():
        c = P.option_claim(text)
        if c is None:
            continue
        sym, v, u = c
        if sym is None:
            if ql is None:
                continue
            ok = P.close(v, ql[0]) and (not u or not ql[1] or u == ql[1])
        else:
            statements = True
            if sym not in own:
                continue
            ok = P.close(v, own[sym])
        if ok:
            true[letter] = text
        else:
            false.add(letter)
    if not true:
        return None  # the calculation gives none of the options: the reference (or gold) decides
    shown = ", ".join(f"({k}) {t}" for k, t in sorted(true.items()))
    bad = sorted(set(chosen) & false)
    if bad:
        return (f"the final answer {chosen} chooses ({bad[0]}) {opts[bad[0]]}, but the calculation gives {shown}")
    left = sorted(set(true) - set(chosen)) if statements else []
    if left:
        return f"the final answer {chosen} leaves out ({left[0]}) {opts[left[0]]}, which the solution's own values make true"
    return None


def _answer_right(solution, ref_text, ref_answer, qa, kind: str = "numeric") -> tuple[bool, str]:
    """Whether the solution's answer is the reference's, read by the answer checker over the whole text
    (verifiers.check: hedges, self-corrections and answer sentences are its business); a bare number in SI
    units is the SI value of the reference's answer."""
    if solution is not None and ref_text is not None:
        if ref_answer is not None and not answer.check(f"\\boxed{{{ref_text}}}", ref_text, "numeric").equivalent:
            ref_text = f"{ref_answer[0]:.6g} {ref_answer[1]}".strip()  # the reference's box is not a quantity
        v = answer.check(solution, ref_text, kind)
        if v.equivalent:
            return True, v.reason
        box = boxed_all(solution)
        if box and P.BRACKET_UNIT.search(box[-1]):
            # the unit in square brackets (`392 [W]`), as the value lines are read: the same text without them
            i = solution.rindex(box[-1])
            v2 = answer.check(solution[:i] + P.BRACKET_UNIT.sub(r"\1 \2", box[-1]) + solution[i + len(box[-1]):],
                              ref_text, kind)
            if v2.equivalent:
                return True, "the unit in brackets: " + v2.reason
        if box and ref_answer is not None and qa is not None and not qa[1] and P.close(qa[0], ref_answer[0]) \
                and ref_answer[1]:
            # a bare number in SI units: the same text with the reference's SI unit written after it
            si = solution[:solution.rindex(box[-1])] + f"{box[-1]} {ref_answer[1]}" + \
                solution[solution.rindex(box[-1]) + len(box[-1]):]
            v2 = answer.check(si, ref_text, kind)
            if v2.equivalent:
                return True, "a bare number in SI units: " + v2.reason
        return False, v.reason
    ok = P.close(qa[0], ref_answer[0]) and (not ref_answer[1] or not qa[1] or qa[1] == ref_answer[1])
    return ok, "numeric match" if ok else f"{qa[0]:.4g} {qa[1]} vs {ref_answer[0]:.4g} {ref_answer[1]}"
