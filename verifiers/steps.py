"""Step verification: the first wrong step of a seven-tag solution and its error class.

    verify(question, solution, reference, backend="symbolic") -> StepVerdict

StepVerdict.first_error is 0 when every step is right, else the 1-based position of the first wrong
step among the format's seven steps (seventag.TAGS; the paper's e, with n = 7). error_class is
"MC" (miscomprehension), "CM" (conceptual misapplication), "CE" (calculation error) or "FORMAT":
the format itself is broken - a missing, empty, unclosed, nested, duplicated or out-of-order tag,
no tags at all, an over-long output, several different boxed answers, a non-finite number. FORMAT
is booked apart from MC/CM/CE (r3bench.errors), rewarded with the minimum (verifiers.rewards) and
answered with a request for the format (verifiers.feedback), never with the MC re-read prompt.
The format is checked first and, when broken, decides the verdict: a broken solution cannot earn
the reward of a content error placed before the break.

The symbolic backend is deterministic and offline. With a seven-tag reference (the procedural bank
gives an exact one) it checks, in the order of the text (step by step, line by line):

  step 1 (MC)  the asked quantity - the reference's last governing equation's left side, with its
               name words from the reference's analysis - is what the analysis says is asked
  step 2 (CM)  the principle names the same law as the reference (stepparse.same_law: law keys such
               as 'energy_cons' or 'friction', contradictions such as 'frictionless' caught)
  step 3 (CM)  each governing equation gives, at the true values, the reference's value for its
               quantity, and is dimensionally consistent (pint)
  step 4 (MC)  each identified value is the reference's (matched by name, or by value and unit when
               the symbol is renamed) or a number of the question (raw or in SI)
  step 5 (CE)  each substitution equals its own equation at the solution's own values (or at the true
               ones: a step that follows from an earlier error is not counted again)
  step 6 (CE)  each calculation result equals its substitution
  step 7 (CE)  the final answer equals the last calculation (units converted)

LaTeX and plain notation, units in any form the answer checker reads, prose inside tags and
renamed symbols are read by verifiers.stepparse. Without a seven-tag reference the reference-free
mode (verifiers.stepref) runs; where it cannot place an error it returns valid=False with a reason.
Other backends (an LLM judge, a process-supervised verifier) plug in through BACKENDS.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from r3bench.core import seventag
from verifiers import stepparse as P

FORMAT = "FORMAT"
CLASSES = ("MC", "CM", "CE", FORMAT)
N_STEPS = len(seventag.TAGS)
STEP_CLASS = {1: "MC", 2: "CM", 3: "CM", 4: "MC", 5: "CE", 6: "CE", 7: "CE"}
_STEP_CLASS = STEP_CLASS  # old name, kept for importers
TAG_OF_STEP = dict(enumerate(seventag.TAGS, start=1))
STEP_OF_TAG = {t: k for k, t in TAG_OF_STEP.items()}
MAX_SOLUTION_CHARS = 20000  # longer outputs are a format failure (the extractor reads 20,000 at most)


@dataclass(frozen=True)
class StepVerdict:
    first_error: int  # 0 = no error; else 1..7, the position in the seven-tag format
    error_class: str | None  # "MC" | "CM" | "CE" | "FORMAT" | None
    explanation: str
    n_steps: int  # seven-tag steps present in the solution (information; rewards use the format's 7)
    step_scores: tuple = field(default=())  # optional per-step scores (psv backend)
    valid: bool = True  # False: no verdict could be had (judge unreachable, junk replies); see explanation

    def to_dict(self):
        d = asdict(self)
        d["step_scores"] = list(self.step_scores)
        return d


def _close(a, b, rel=2e-3):
    """Kept for r3bench.procgen.oracle (its import): relative closeness of two finite floats."""
    return P.close(a, b, rel)


def _pairs(step):
    """Kept for r3bench.procgen.oracle (its import): the `lhs = rhs` lines of a step, split once."""
    out = []
    for ln in (step.content if step else "").splitlines():
        if "=" in ln:
            lhs, rhs = ln.split("=", 1)
            out.append((lhs.strip(), rhs.strip()))
    return out


def _v(step: int, why: str, n: int, cls: str | None = None) -> StepVerdict:
    return StepVerdict(step, cls or STEP_CLASS[step], why, n)


def invalid(why: str, n: int = 0) -> StepVerdict:
    """No verdict: first_error is -1 so that nothing downstream can read it as 'all correct'."""
    return StepVerdict(-1, None, why, n, valid=False)


# --- format ---------------------------------------------------------------------------------------

def _boxed_all(text: str) -> list[str]:
    from verifiers.extract import _find_braced

    out = []
    for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        got = _find_braced(text, m.end() - 1)
        if got is not None:
            out.append(got[0].strip())
    return out


def _same_answer(a: str, b: str) -> bool:
    qa, qb = P.quantity(a), P.quantity(b)
    if qa and qb:
        return P.close(qa[0], qb[0]) and (qa[1] == qb[1] or not qa[1] or not qb[1])
    return re.sub(r"\s+", "", a) == re.sub(r"\s+", "", b)


def _outside(text: str) -> str:
    """The text outside the seven tags (tag names as seventag.parse reads them)."""
    t = re.sub(r"<\s*(" + "|".join(seventag.TAGS) + r")\s*>.*?<\s*/\s*\1\s*>", " ", text, flags=re.S | re.I)
    return t


def format_error(solution) -> StepVerdict | None:
    """The FORMAT verdict of a solution whose seven-tag format is broken, else None.

    The first error is the first of the seven positions whose tag is missing, broken (unclosed,
    nested, duplicated, empty) or out of order; an over-long output or no tag at all is at step 1;
    a non-finite number (nan, inf) at the step that holds it; several different boxed answers, or a
    boxed answer outside <final_answer>, at step 7.
    """
    text = solution if isinstance(solution, str) else ("" if solution is None else str(solution))
    if len(text) > MAX_SOLUTION_CHARS:
        return _v(1, f"the output is {len(text)} characters, over the {MAX_SOLUTION_CHARS} allowed", 0, FORMAT)
    sol = seventag.parse(text)
    n = sol.n
    if n == 0:
        return _v(1, "no seven-tag steps found in the solution", 0, FORMAT)
    for k, tag in TAG_OF_STEP.items():
        st = sol.get(tag)
        if st is None:
            return _v(k, f"step {k} <{tag}> is missing", n, FORMAT)
        if tag in sol.flawed:
            why = next((p for p in sol.problems if tag in p), "broken")
            return _v(k, f"step {k} <{tag}> is broken ({why})", n, FORMAT)
        if st.index != k:
            return _v(k, f"step {k} <{tag}> is out of order (position {st.index})", n, FORMAT)
    for k in (4, 5, 6, 7):
        if P.NONFINITE.search(sol.get(TAG_OF_STEP[k]).content):
            return _v(k, f"step {k} <{TAG_OF_STEP[k]}> holds a non-finite number (nan/inf)", n, FORMAT)
    fa = sol.get("final_answer").content
    boxes = _boxed_all(fa)
    if len(boxes) > 1 and any(not _same_answer(boxes[0], b) for b in boxes[1:]):
        return _v(7, f"the final answer holds {len(boxes)} different boxed answers", n, FORMAT)
    if _boxed_all(_outside(text)):
        return _v(7, "a boxed answer outside <final_answer>", n, FORMAT)
    return None


# --- the symbolic backend with a reference ----------------------------------------------------------

_ASK = re.compile(r"\b(ask|asks|asked|find|finding|determine|calculate|compute|need|needed|want|wanted|required"
                  r"|unknown|seek|sought|what|how|goal|target)\b", re.I)
_SYN = {"distance": ("far", "displacement", "distance"), "speed": ("fast", "velocity", "speed"),
        "velocity": ("fast", "speed", "velocity"), "time": ("long", "time", "duration"),
        "height": ("high", "height"), "length": ("long", "length"), "buoyant": ("upthrust", "buoyant", "buoyancy"),
        "force": ("force", "upthrust", "push", "pull", "tension"), "energy": ("energy",), "wavelength": ("wavelength",)}


def _sym_re(sym: str):
    """The symbol as a word; a subscript matches in either case (F_b, F_B)."""
    head, sep, sub = sym.partition("_")
    pat = re.escape(head) + (f"_(?i:{re.escape(sub)})" if sep else "")
    return re.compile(rf"(?<![\w'’\\]){pat}(?![\w'’])")


def _asked_clause(pa: str) -> str:
    """The sentence(s) of an analysis that say what is asked (the whole text if none does)."""
    before_given = re.split(r"\b(?:given|known|data)\b\s*[:,]?", pa, maxsplit=1, flags=re.I)[0]
    sents = [s for s in re.split(r"(?<=[.;!?\n])\s+", pa) if _ASK.search(s)]
    if before_given.strip() and len(before_given) < len(pa):
        return before_given
    return " ".join(sents) if sents else pa


def _target_names(ref, target: str) -> set[str]:
    """Words naming the target in the reference's analysis: 'the distance travelled (s)' -> distance."""
    pa = P.symbol_text(ref.get("problem_analysis").content if ref.get("problem_analysis") else "")
    out = set()
    for m in re.finditer(rf"((?:[A-Za-z-]+\s+){{1,4}})\(\s*\$?{re.escape(target)}\$?\s*\)", pa):
        words = [w.lower() for w in m.group(1).split() if w.lower() not in ("the", "a", "an", "of", "its", "for")]
        out.update(w for w in words if len(w) > 3 and w not in ("asks", "problem", "find"))
    for w in list(out):
        out.update(_SYN.get(w, ()))
    return out


def _ref_target(ref) -> str | None:
    eqs = P.equations(ref.get("governing_equation"))
    if eqs:
        return eqs[-1][0]
    m = re.search(r"\(([A-Za-z_][A-Za-z_0-9]*)\)", ref.get("problem_analysis").content if ref.get("problem_analysis") else "")
    return m.group(1) if m else None


def _check_target(sol, ref) -> str | None:
    tgt = _ref_target(ref)
    if not tgt:
        return None
    pa = P.symbol_text(sol.get("problem_analysis").content)
    clause = _asked_clause(pa)
    names = _target_names(ref, tgt)
    unknowns = re.split(r"\b(?:given|known|data)\b", pa, maxsplit=1, flags=re.I)[0]  # the text before the givens
    if _sym_re(tgt).search(clause) or _sym_re(tgt).search(unknowns):
        return None
    # another quantity named as the asked one: '(v_t)' in parentheses, or a symbol the reference computes
    others = {m.group(1) for m in re.finditer(r"\(\s*\$?([A-Za-z][A-Za-z_0-9]{0,8})\$?\s*\)", clause)}
    others |= {s for s, _, _ in P.equations(ref.get("governing_equation")) + P.equations(ref.get("calculation"))
               if s != tgt and _sym_re(s).search(clause)}
    if others - {tgt}:
        return f"problem_analysis takes {sorted(others - {tgt})[0]} for the asked quantity {tgt}"
    if any(re.search(rf"\b{re.escape(w)}", clause, re.I) for w in names):
        return None
    return f"problem_analysis does not say that {tgt} ({', '.join(sorted(names)) or 'the asked quantity'}) is asked"


def _dims(units: dict) -> dict:
    from r3bench.core.units import get_ureg
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


def _not_a_law(lhs: str, rhs: str) -> str | None:
    """Why `lhs = rhs` cannot be a governing equation: unreadable, or a bare number (the answer written as
    the 'law', which would otherwise pass every later step), else None."""
    try:
        free = P.names(rhs)
    except P.ExprError as e:  # not an expression of the grammar: no law can be read from it
        return f"the equation for {lhs} cannot be read as an expression ({e})"
    if not free:
        return f"the equation for {lhs} is a number ({rhs[:30]}), not a law relating quantities"
    return None


_FORMULA = re.compile(r"([^:;,.]{1,40}?=[^;,]{1,60}?)(?:[.;,]\s|[.;,]?$)")


def _formula(principle: str) -> str | None:
    """The formula a principle states ('distance = speed x time'), normalised; None when it states none."""
    m = _FORMULA.search((principle or "").strip())
    if not m:
        return None
    f = m.group(1).lower()
    f = re.split(r"\s(?:at|for|with|when|where|in|of|and|if|near|on|from|so|because|which)\s", f + " ")[0]
    f = re.sub(r"\b(?:times|x)\b|×|·|\\cdot", "*", f)
    f = re.sub(r"\b(?:over|divided by)\b", "/", f)
    f = re.sub(r"\*\*", "^", f)
    return re.sub(r"[\s*]+", "", f)


def _wrong_law_stated_at_step_2(sol_principle: str, ref_principle: str) -> str | None:
    """When an equation is wrong at step 3: the same wrong law is already written in the principle if the
    principle states a formula other than the reference principle's (the first error is where the text
    first shows it). None when either states no formula, or both state the same one."""
    a, b = _formula(sol_principle), _formula(ref_principle)
    if a and b and a != b:
        return f"the principle states {a} where the law that applies is {b}"
    return None


def _eval_units(text: str, env: dict) -> float:
    """Evaluate a substitution/calculation part; unit names written beside the numbers count as 1."""
    try:
        return P.evaluate(text, env)
    except P.ExprError:
        free = P.names(text) - set(env)
        if not free or len(free) > 4:
            raise
        from r3bench.core.units import get_ureg
        u = get_ureg()
        for f in free:
            try:
                u.parse_units(f)
            except Exception:  # noqa: BLE001 - not a unit: the name is unknown
                raise P.ExprError(f"unknown name {f}") from None
        return P.evaluate(text, {**env, **{f: 1.0 for f in free}})


def _is_quantity(part: str) -> bool:
    """`number [unit]` (3.6 N, 5.02 \\times 10^{5} J, 10 g), as opposed to an expression (80/8, 1.8/0.50)."""
    m = P._RAW.match(part or "")
    if not m:
        return False
    rest = part[m.end():].strip()
    return not rest or bool(re.match(r"[A-Za-zµΩ°\\%]", rest))


def _result(part: str, env: dict) -> float:
    """A calculation part's value: a quantity in SI when it reads as one, else the expression's value."""
    q = P.quantity(part) if _is_quantity(part) else None
    if q is not None:
        return q[0]
    return _eval_units(part, env)


def verify_symbolic(question: str, solution: str, reference: str) -> StepVerdict:
    bad = format_error(solution)
    if bad is not None:
        return bad
    ref = seventag.parse(reference or "")
    if ref.n == 0 or format_error(reference) is not None:
        from verifiers.stepref import verify_reference_free
        return verify_reference_free(question, solution, reference or None)
    sol = seventag.parse(solution)
    n = sol.n
    get = sol.get
    # 1. the asked quantity
    why = _check_target(sol, ref)
    if why:
        return _v(1, why, n)
    # 2. the principle
    ok, why = P.same_law(get("principle").content, ref.get("principle").content)
    if not ok:
        return _v(2, why, n)
    # reference data: true values (SI) of the givens and of every computed quantity
    rvals = {s: (v, u) for s, v, u, _, _ in P.values(ref.get("value_identification"))}
    known = dict(rvals)
    for s, v, u, _, _ in P.values(ref.get("calculation")):
        known[s] = (v, u)
    target = _ref_target(ref)
    svals = P.values(get("value_identification"))
    # the solution's symbols mapped onto the reference's: by name, else by value and unit
    true_env, units = {}, {}
    for s, v, u, _, _ in svals:
        units[s] = u
        if s in known and (known[s][1] == u or not u):
            true_env[s] = known[s][0]
            continue
        m = next((r for r, (rv, ru) in rvals.items() if ru == u and P.close(rv, v)), None)
        true_env[s] = rvals[m][0] if m else v
    for s, (v, u) in known.items():
        units.setdefault(s, u)
    # 3. governing equations, at the true values
    sol_eqs = split_juxtaposed(P.equations(get("governing_equation")), {s for s, *_ in svals})
    if not sol_eqs:
        return _v(3, "no governing equation of the form `quantity = expression`", n)
    for i, (lhs, parts, _) in enumerate(sol_eqs):
        rhs = parts[-1]
        goal = known.get(lhs) or (known.get(target) if i == len(sol_eqs) - 1 and target else None)
        if (why := _not_a_law(lhs, rhs)):
            return _v(3, why, n)
        try:
            val = P.evaluate(rhs, true_env)
        except P.ExprError:
            val = None
        if val is not None and goal is not None and not P.close(val, goal[0]):
            if (why := _wrong_law_stated_at_step_2(get("principle").content, ref.get("principle").content)):
                return _v(2, why, n)
            return _v(3, f"the equation for {lhs} gives {val:.4g} where the law that applies gives {goal[0]:.4g}", n)
        if val is not None:
            true_env[lhs] = goal[0] if goal is not None else val
        if goal is not None:
            units.setdefault(lhs, goal[1])
        if dimension_ok(rhs, lhs, units) is False:
            if (why := _wrong_law_stated_at_step_2(get("principle").content, ref.get("principle").content)):
                return _v(2, why, n)
            return _v(3, f"the equation for {lhs} is dimensionally inconsistent", n)
    # 4. values: the reference's, or numbers of the question
    qnums = P.numbers_in(question or "")
    for s, v, u, text, _ in svals:
        if s in rvals and (rvals[s][1] == u or not u):
            if not P.close(v, rvals[s][0]):
                return _v(4, f"the value of {s} contradicts the problem ({text} vs {rvals[s][0]:.4g} {rvals[s][1]})", n)
            continue
        if any(ru == u and P.close(rv, v) for rv, ru in rvals.values()):
            continue
        if qnums and not P.given(v, qnums):
            return _v(4, f"the value {s} = {text} appears nowhere in the problem", n)
    defined = {s for s, *_ in svals} | {lhs for lhs, _, _ in sol_eqs}
    for lhs, parts, _ in sol_eqs:
        try:
            free = P.names(parts[-1])
        except P.ExprError:
            continue
        missing = sorted(free - defined)
        if missing:
            return _v(4, f"{missing[0]} is used in the equation for {lhs} but its value is never identified", n)
    return _check_arithmetic(sol, sol_eqs, {s: v for s, v, *_ in svals}, true_env, n, known.get(target))


def _raw(part: str, env: dict) -> float:
    """A part's number as written (in its own unit), else the expression's value with env."""
    x = P.raw_number(part) if _is_quantity(part) else None
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


def _check_arithmetic(sol, sol_eqs, own_vals: dict, true_env: dict, n: int, ref_answer) -> StepVerdict:
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
        return _v(5, min(errors)[1], n)
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
        return _v(6, min(errors)[1], n)
    # 7. the final answer follows from the last calculation
    fa = sol.get("final_answer").content
    boxes = _boxed_all(fa)
    ans = boxes[-1] if boxes else fa.strip()
    qa, ql = P.quantity(ans), P.quantity(last) if last else None
    if qa is None:
        return _v(7, f"the final answer {ans[:40]!r} is not a number with a unit", n)
    if ql is not None:
        # a bare number (JEE style: 'in kW m^-2') is read in the unit the calculation is written in
        bare_ok = not qa[1] and (lr := P.raw_number(last)) is not None and P.close(qa[0], lr)
        if not P.close(qa[0], ql[0]) and not bare_ok:
            return _v(7, f"the final answer {ans[:40]} does not follow from the last calculation {last}", n)
        if ql[1] and qa[1] and qa[1] != ql[1]:
            return _v(7, f"the final answer's unit ({qa[1] or 'none'}) is not the calculation's ({ql[1]})", n)
        if bare_ok and not P.close(qa[0], ql[0]):
            qa = ql
    if ref_answer is not None and not (P.close(qa[0], ref_answer[0]) and (not ref_answer[1] or qa[1] == ref_answer[1])):
        return invalid(f"every step checks, but the answer {ans[:40]} differs from the reference "
                       f"({ref_answer[0]:.4g} {ref_answer[1]}): the first error could not be placed", n)
    return StepVerdict(0, None, "all steps correct", n)


def _judge(question, solution, reference):
    from verifiers.judge import judge_backend
    return judge_backend(question, solution, reference)


def _psv(question, solution, reference):
    from verifiers.psv import psv_backend
    return psv_backend(question, solution, reference)


BACKENDS = {"symbolic": verify_symbolic, "judge": _judge, "psv": _psv}


def verify(question: str, solution: str, reference: str, backend: str = "symbolic") -> StepVerdict:
    """Never raises on model output: an internal failure is a verdict whose explanation says so."""
    fn = BACKENDS.get(backend)
    if fn is None:
        raise ValueError(f"unknown verifier backend {backend!r} (have: {', '.join(BACKENDS)})")
    try:
        return fn(question, solution, reference)
    except Exception as e:  # noqa: BLE001 - a verifier bug is recorded as no verdict, not a crashed RL run
        return invalid(f"verifier error: {type(e).__name__}: {str(e)[:100]}", seventag.parse(solution or "").n)


def report(rows, backend: str = "symbolic") -> dict:
    """Score a backend on labelled rows {question, solution, reference, first_error, error_class}.

    A verdict with valid=False counts as wrong (it is never read as 'no error') and is counted in
    'invalid'. ProcessBench F1 is the harmonic mean of the accuracy on erroneous samples (exact first
    error) and on correct ones.
    """
    conf, n, exact, cls_ok, err_ok, err_n, cor_ok, cor_n, inval = {}, 0, 0, 0, 0, 0, 0, 0, 0
    for r in rows:
        v = verify(r["question"], r["solution"], r["reference"], backend)
        n += 1
        gold_c = r["error_class"] if r["first_error"] else "none"
        pred_c = (v.error_class or "none") if v.valid else "invalid"
        inval += not v.valid
        conf.setdefault(gold_c, {}).setdefault(pred_c, 0)
        conf[gold_c][pred_c] += 1
        hit = v.valid and v.first_error == r["first_error"]
        exact += hit
        cls_ok += pred_c == gold_c
        if r["first_error"]:
            err_n += 1
            err_ok += hit
        else:
            cor_n += 1
            cor_ok += hit
    acc_err = err_ok / err_n if err_n else float("nan")
    acc_cor = cor_ok / cor_n if cor_n else float("nan")
    f1 = 2 * acc_err * acc_cor / (acc_err + acc_cor) if acc_err + acc_cor else 0.0
    return {"backend": backend, "n": n, "first_error_accuracy": exact / n if n else float("nan"),
            "class_accuracy": cls_ok / n if n else float("nan"), "accuracy_erroneous": acc_err,
            "accuracy_correct": acc_cor, "processbench_f1": f1, "invalid": inval, "confusion": conf}
