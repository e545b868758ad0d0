"""Derivation -> seven-tag text, following the conventions of verifiers.seventag.CONVENTIONS, and the
Problem that shows it (question, answer and the rendered reference solution)."""
from __future__ import annotations

from r3bench.procgen.core import Derivation, Problem, Template, fmt, problem_id, question_text, substitute
from verifiers import seventag


def substitution_lines(d: Derivation) -> list[str]:
    known, out = dict(d.values), []
    for i, e in enumerate(d.eqs):
        env = dict(known)
        for (j, sym), v in d.sub_override.items():
            if j == i:
                env[sym] = v
        out.append(f"{e.sym} = {substitute(e.expr, env)}")
        known[e.sym] = d.results[i]
    return out


def steps(t: Template, d: Derivation) -> dict:
    givens = ", ".join(f"the {g.name} {g.sym}" for g in t.givens)
    value_syms = [g.sym for g in t.givens] + [c.sym for c in t.consts]
    # tiers 1-2 use the short form (the givens are listed again in value_identification): shorter
    # training sequences for CPU budgets; both name the target and its symbol, which the oracle checks
    analysis = (f"Find the {d.target_name} ({d.target})." if t.tier <= 2 else
                f"The problem asks for the {d.target_name} ({d.target}). Given: {givens}.")
    return {
        "problem_analysis": analysis,
        "principle": d.principle,
        "governing_equation": "\n".join(f"{e.sym} = {e.expr}" for e in d.eqs),
        "value_identification": "\n".join(f"{s} = {fmt(d.values[s])} {d.units[s]}".rstrip() for s in value_syms),
        "substitution": "\n".join(substitution_lines(d)),
        "calculation": "\n".join(f"{e.sym} = {fmt(r)} {e.unit}".rstrip() for e, r in zip(d.eqs, d.results)),
        "final_answer": f"\\boxed{{{fmt(d.answer)} {d.answer_unit}}}".replace(" }", "}"),
    }


def render(t: Template, d: Derivation) -> str:
    return seventag.render(steps(t, d))


def make_problem(t: Template, raw: dict, d: Derivation, split: str = "train") -> Problem:
    ans = f"{fmt(d.answer)} {d.answer_unit}".strip()
    return Problem(id=problem_id(t, raw), template=t.name, topic=t.topic, difficulty=t.difficulty,
                   question=question_text(t, raw), answer=ans, answer_value=d.answer, answer_unit=d.answer_unit,
                   solution=render(t, d), givens={g.sym: [raw[g.sym], g.unit] for g in t.givens}, split=split,
                   tier=t.tier)
