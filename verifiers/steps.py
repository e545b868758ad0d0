"""Step verification: the first wrong step of a seven-tag solution and its error class.

    verify(question, solution, reference, backend="symbolic") -> StepVerdict

StepVerdict.first_error is 0 when every step is right, else the 1-based index of the first wrong
step (the paper's e, with n = number of tags present); error_class is "MC" (miscomprehension),
"CM" (conceptual misapplication) or "CE" (calculation error), checked in that priority within a
step; the earliest step wins.

The symbolic backend is deterministic and offline. It compares the solution with a reference
seven-tag solution (the procedural bank gives an exact one; for a benchmark problem, a worked
reference in the same format):

  step 1 (MC)  the quantity asked for: the reference's target symbol must be named in problem_analysis
  step 2 (CM)  the principle: must agree with the reference's (word overlap), not another law
  step 3 (CM)  each governing equation must equal the reference's equation for the same quantity
               (numerically, at the reference's values) and be dimensionally consistent (pint)
  step 4 (MC)  each identified value must match the reference's (or a number in the question)
  step 5 (CE)  each substitution must be the solution's own equation at its own values
  step 6 (CE)  each calculation result must equal the substituted expression
  step 7 (CE)  the boxed answer must equal the last calculation

Steps 5-7 are checked against the solution's own earlier lines, so a step that follows correctly
from an earlier error is not counted again. Other backends (an LLM judge, a process-supervised
verifier) plug in through BACKENDS.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field

from r3bench import seventag

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_FUNCS = {"sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "pi"}
_NUM = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*)$")
_STEP_CLASS = {1: "MC", 2: "CM", 3: "CM", 4: "MC", 5: "CE", 6: "CE", 7: "CE"}


@dataclass(frozen=True)
class StepVerdict:
    first_error: int  # 0 = no error
    error_class: str | None  # "MC" | "CM" | "CE" | None
    explanation: str
    n_steps: int
    step_scores: tuple = field(default=())  # optional per-step scores (psv backend)
    valid: bool = True  # False: no verdict could be had (judge unreachable, junk replies); see explanation

    def to_dict(self):
        d = asdict(self)
        d["step_scores"] = list(self.step_scores)
        return d


def _ns():
    return {"sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
            "acos": math.acos, "atan": math.atan, "exp": math.exp, "log": math.log, "pi": math.pi}


_SAFE = re.compile(r"(?:[A-Za-z_][A-Za-z_0-9]*|[\d.eE+\-*/()^ ,])+")


def _eval(expr: str, env: dict) -> float:
    """Evaluate a short arithmetic expression in the given variables (no attribute access, no calls
    other than the math functions)."""
    if len(expr) > 300 or not _SAFE.fullmatch(expr) or "__" in expr or "**" in expr and expr.count("**") > 6:
        raise ValueError("expression rejected")
    code = compile(expr.replace("^", "**"), "<step>", "eval")
    if any(n not in _FUNCS and n not in env for n in code.co_names):
        raise KeyError(code.co_names[0])
    v = eval(code, {"__builtins__": {}, **_ns()}, dict(env))  # noqa: S307 - names restricted above
    return float(v)


def _close(a, b, rel=2e-3):
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def _pairs(step):
    out = []
    for ln in (step.content if step else "").splitlines():
        if "=" in ln:
            lhs, rhs = ln.split("=", 1)
            out.append((lhs.strip(), rhs.strip()))
    return out


def _values(step):
    vals, units = {}, {}
    for lhs, rhs in _pairs(step):
        m = _NUM.match(rhs)
        if m and _IDENT.fullmatch(lhs):
            vals[lhs] = float(m.group(1))
            units[lhs] = m.group(2).strip()
    return vals, units


def _words(s: str) -> set:
    return {w for w in re.findall(r"[a-z]+", s.lower()) if len(w) > 3}


def _target(ref) -> str | None:
    pa = ref.get("problem_analysis")
    m = re.search(r"\(([A-Za-z_][A-Za-z_0-9]*)\)", pa.content) if pa else None
    if m:
        return m.group(1)
    eqs = _pairs(ref.get("governing_equation"))
    return eqs[-1][0] if eqs else None


def _dimension_ok(expr: str, lhs: str, units: dict) -> bool | None:
    """pint check that `lhs = expr` is dimensionally consistent; None when units are unknown."""
    from r3bench.units import get_ureg
    import numpy as np

    u = get_ureg()
    try:
        # distinct magnitudes, so that no difference cancels to zero (1/f - 1/d_o)
        q = {k: u.Quantity(1.3 + 0.17 * i, (v or "dimensionless").replace("^", "**"))
             for i, (k, v) in enumerate(sorted(units.items()))}
        ns = {"sqrt": np.sqrt, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
              "atan": np.arctan, "exp": np.exp, "log": np.log, "pi": math.pi}
        names = set(_IDENT.findall(expr)) - _FUNCS
        if lhs not in q or any(n not in q for n in names):
            return None
        with np.errstate(all="ignore"):
            val = eval(compile(expr.replace("^", "**"), "<dim>", "eval"), {"__builtins__": {}, **ns}, q)  # noqa: S307
        val = val if hasattr(val, "dimensionality") else u.Quantity(val, "dimensionless")
        return val.dimensionality == q[lhs].dimensionality
    except Exception:  # noqa: BLE001 - a DimensionalityError inside the expression is an inconsistency
        return False


def _v(step, why, n):
    return StepVerdict(step, _STEP_CLASS.get(step) if step else None, why, n)


def verify_symbolic(question: str, solution: str, reference: str) -> StepVerdict:
    sol, ref = seventag.parse(solution or ""), seventag.parse(reference or "")
    n = sol.n
    if n == 0:
        return StepVerdict(1, "MC", "no seven-tag steps found in the solution", 0)
    if ref.n == 0:
        return StepVerdict(0, None, "reference has no seven-tag steps: nothing to verify against", n)
    get = sol.get
    # 1. the asked quantity
    tgt = _target(ref)
    pa = get("problem_analysis")
    if tgt and (pa is None or not re.search(rf"(?<![A-Za-z_0-9]){re.escape(tgt)}(?![A-Za-z_0-9])", pa.content)):
        return _v(1, f"problem_analysis does not name the asked quantity {tgt}", n)
    # 2. the principle
    pr, rpr = get("principle"), ref.get("principle")
    if rpr is not None:
        a, b = _words(pr.content if pr else ""), _words(rpr.content)
        if not a or len(a & b) / max(1, len(a | b)) < 0.6:
            return _v(2, "the principle differs from the one that applies", n)
    # 3. equations, at the reference's values
    rvals, runits = _values(ref.get("value_identification"))
    ref_eqs = dict(_pairs(ref.get("governing_equation")))
    known = dict(rvals)
    for lhs, rhs in _pairs(ref.get("calculation")):
        m = _NUM.match(rhs)
        if m:
            known[lhs] = float(m.group(1))
            runits[lhs] = m.group(2).strip()
    sol_eqs = _pairs(get("governing_equation"))
    if not sol_eqs:
        return _v(3, "no governing equation", n)
    for lhs, rhs in sol_eqs:
        if lhs in ref_eqs:
            try:
                ok = _close(_eval(rhs, known), _eval(ref_eqs[lhs], known), 1e-6)
            except (KeyError, ValueError, ZeroDivisionError, SyntaxError, TypeError, OverflowError):
                ok = False
            if not ok:
                return _v(3, f"the equation for {lhs} is not the one that applies", n)
        dim = _dimension_ok(rhs, lhs, runits)
        if dim is False:
            return _v(3, f"the equation for {lhs} is dimensionally inconsistent", n)
    # 4. values
    vals, _ = _values(get("value_identification"))
    qnums = [float(x) for x in re.findall(r"(?<![\w.])[-+]?\d+\.?\d*(?:e[-+]?\d+)?", question or "")]
    for k, v in vals.items():
        if k in rvals and not _close(v, rvals[k]):
            return _v(4, f"the value of {k} contradicts the problem ({v:g} vs {rvals[k]:g})", n)
        if k not in rvals and qnums and not any(_close(v, x) for x in qnums):
            return _v(4, f"the value of {k} appears nowhere in the problem", n)
    missing = [k for k in rvals if k not in vals]
    if missing and sol_eqs and any(k in rhs for _, rhs in sol_eqs for k in missing):
        return _v(4, f"given value {missing[0]} not identified", n)
    # 5./6. substitutions and calculations, from the solution's own lines
    subs, calcs = _pairs(get("substitution")), _pairs(get("calculation"))
    env = dict(vals)
    eq_of = dict(sol_eqs)
    last = None
    for i, (lhs, rhs) in enumerate(sol_eqs):
        sub = next((r for l, r in subs if l == lhs), None)
        if sub is None:
            return _v(5, f"no substitution for {lhs}", n)
        try:
            expect = _eval(eq_of[lhs], env)
            got = _eval(sub, {})
        except (KeyError, ValueError, ZeroDivisionError, SyntaxError, TypeError, OverflowError) as e:
            return _v(5, f"substitution for {lhs} cannot be evaluated ({type(e).__name__})", n)
        if not _close(got, expect):
            return _v(5, f"the substitution for {lhs} does not match its equation and values", n)
        calc = next((r for l, r in calcs if l == lhs), None)
        m = _NUM.match(calc or "")
        if not m:
            return _v(6, f"no calculation result for {lhs}", n)
        if not _close(float(m.group(1)), got):
            return _v(6, f"arithmetic error: {lhs} = {m.group(1)} but the substitution gives {got:.4g}", n)
        env[lhs] = float(m.group(1))
        last = calc
    # 7. the boxed answer follows from the last calculation
    from verifiers import check
    fa = get("final_answer")
    if fa is None or last is None or not check(fa.content, last, kind="numeric").equivalent:
        return _v(7, "the final answer does not follow from the last calculation", n)
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
    except Exception as e:  # noqa: BLE001 - a verifier bug is recorded, not a crashed RL run
        return StepVerdict(0, None, f"verifier error: {type(e).__name__}: {str(e)[:100]}",
                           seventag.parse(solution or "").n, valid=False)


def report(rows, backend: str = "symbolic") -> dict:
    """Score a backend on labelled rows {question, solution, reference, first_error, error_class}."""
    conf, n, exact, cls_ok, err_ok, err_n, cor_ok, cor_n = {}, 0, 0, 0, 0, 0, 0, 0
    for r in rows:
        v = verify(r["question"], r["solution"], r["reference"], backend)
        n += 1
        gold_c = r["error_class"] if r["first_error"] else "none"
        pred_c = v.error_class or "none"
        conf.setdefault(gold_c, {}).setdefault(pred_c, 0)
        conf[gold_c][pred_c] += 1
        exact += v.first_error == r["first_error"]
        cls_ok += pred_c == gold_c
        if r["first_error"]:
            err_n += 1
            err_ok += v.first_error == r["first_error"]
        else:
            cor_n += 1
            cor_ok += v.first_error == 0
    acc_err = err_ok / err_n if err_n else float("nan")
    acc_cor = cor_ok / cor_n if cor_n else float("nan")
    f1 = 2 * acc_err * acc_cor / (acc_err + acc_cor) if acc_err + acc_cor else 0.0
    return {"backend": backend, "n": n, "first_error_accuracy": exact / n if n else float("nan"),
            "class_accuracy": cls_ok / n if n else float("nan"), "accuracy_erroneous": acc_err,
            "accuracy_correct": acc_cor, "processbench_f1": f1, "confusion": conf}
