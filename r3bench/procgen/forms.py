"""The benchmarks' answer forms for procedural problems: single-answer MCQ, multi-correct MCQ,
integer and numeric (the kinds of r3bench.core.prompts.ANSWER_FORM that the five benchmarks use).

    from r3bench import procgen
    from r3bench.procgen import forms
    p = procgen.generate(n=10, seed=0)[0]
    it = forms.make_item(p, "mcq", random.Random(0))
    it.options, it.answer, it.option_sources   # four "<value> <unit>" strings, the gold letter, where each came from
    forms.first_error(it, it.solution)         # (0, 'all steps correct')

One physics problem (a procgen Problem: template + sampled values) is rendered in one form:
  numeric    the Problem as it is: the boxed value with its SI unit
  integer    the SI value as an integer: exact where the chain gives an integer (tier 1), else the
             question asks for the value in its SI unit rounded to the nearest integer (only when
             10 <= |value| < 10^4, so rounding moves the answer by at most 5%)
  mcq        four options, one the correct value; the three distractors are the final values of the
             bank's own injected errors: a wrong law (the template's declared wrong laws), a unit
             slip (a prefixed given used as if it were SI), a misread value (a given x10 or x0.1) and a
             factor error (the last result x2 or x0.5); one of each kind where they differ
  mcq_multi  four statements "The <quantity> <sym> is <value> <unit>." about the quantities the
             solution identifies or computes, 1-3 of them true (JEEBench's multi-correct shape);
             false values come from the same injected errors
The seven-tag solution is the reference derivation (every value in value_identification and
calculation, so each option can be checked against a line of it); only final_answer changes: the
letter(s) (\\boxed{B}, \\boxed{AC}) or the integer, as the benchmarks' prompts ask.

Proportions of the forms (DEFAULT_PROPORTIONS): the five benchmarks' own, pooled by problem, from
the counts in BENCHMARK_KIND_COUNTS (computed by r3bench.eval.procgen_data.benchmark_kind_counts with
r3bench.eval.data's loaders; the kinds procgen cannot emit, symbolic and text, are left out).
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace

from r3bench.procgen.core import Derivation, Problem, Template, fmt, shown, to_si, with_changes
from r3bench.procgen.render import steps as _steps
from verifiers import check, extract_letters, seventag

FORMS = ("mcq", "mcq_multi", "integer", "numeric")
LETTERS = "ABCD"

# Answer kinds of the five benchmarks, counted with r3bench.eval.data.load(name, ../shared/data)
# (r3bench.eval.procgen_data.benchmark_kind_counts; tests/procgen/test_procgen_forms.py recounts them). A record
# of what the mixture's proportions were drawn from, not a list of benchmarks: a benchmark added to the
# table (r3bench.eval.data.BENCHMARKS) changes no committed mixture.
BENCHMARK_KIND_COUNTS = {
    "scieval": {"mcq": 164},
    "mmlu_high": {"mcq": 170},
    "mmlu_college": {"mcq": 118},
    "jeebench": {"mcq": 18, "mcq_multi": 40, "integer": 16, "numeric": 33},
    "physicsqa": {"mcq": 346, "mcq_multi": 2, "integer": 1, "numeric": 3, "symbolic": 1, "text": 17},
}
BENCHMARKS = tuple(BENCHMARK_KIND_COUNTS)  # the benchmarks those counts cover
# How many letters the multi-correct golds have (JEEBench and PhysicsQA mcq_multi, same loaders)
MULTI_K_COUNTS = {1: 1, 2: 22, 3: 19}


def proportions_of(counts: dict) -> dict:
    """Form -> share of the problems, pooled over the benchmarks (kinds outside FORMS left out)."""
    tot = Counter()
    for kinds in counts.values():
        tot.update({k: v for k, v in kinds.items() if k in FORMS})
    n = sum(tot.values())
    return {f: tot[f] / n for f in FORMS}


DEFAULT_PROPORTIONS = proportions_of(BENCHMARK_KIND_COUNTS)  # mcq 0.896, mcq_multi 0.046, integer 0.019, numeric 0.040
UNIFORM = {f: 1 / len(FORMS) for f in FORMS}


def counts_for(n: int, proportions: dict) -> dict:
    """n split over the forms by largest remainder (sums to n exactly)."""
    props = {f: float(proportions.get(f, 0.0)) for f in FORMS}
    tot = sum(props.values())
    if tot <= 0 or any(v < 0 for v in props.values()):
        raise ValueError(f"proportions must be non-negative with a positive sum: {proportions}")
    raw = {f: n * v / tot for f, v in props.items()}
    out = {f: int(math.floor(x)) for f, x in raw.items()}
    for f in sorted(FORMS, key=lambda f: (-(raw[f] - out[f]), FORMS.index(f)))[: n - sum(out.values())]:
        out[f] += 1
    return out


@dataclass(frozen=True)
class Item:
    """One problem in one answer form: what a prompt shows, the gold, and the seven-tag reference."""
    id: str  # "<problem id>-<form>"
    problem: Problem
    form: str
    question: str
    options: tuple = ()
    answer: str = ""  # the gold in checker form: "B", "AC", "28", "28.0 m"
    solution: str = ""
    option_syms: tuple = ()  # the quantity each option states (mcq: the target every time)
    option_values: tuple = ()  # its value (SI) as stated
    option_sources: tuple = ()  # "correct" or the injected error that made the option
    meta: dict = field(default_factory=dict)

    def doc(self) -> dict:
        """The fields r3bench.core.prompts.prompt_structured / prompt_cot read."""
        return {"question": self.question, "options": list(self.options), "answer_kind": self.form}


# --- distractors: the bank's own injected errors --------------------------------------------------

def _values(d: Derivation) -> dict:
    out = dict(d.values)
    out.update({e.sym: r for e, r in zip(d.eqs, d.results)})
    return out


def _differs(a: float, b: float, rel: float = 0.02) -> bool:
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) > rel * max(abs(a), abs(b), 1e-300)


def _si_factor(unit: str) -> tuple[float, bool]:
    f = to_si(1.0, unit)[0]
    offset = abs(to_si(2.0, unit)[0] - 2 * f) > 1e-9  # degC: not a plain factor
    return f, offset


def wrong_derivations(t: Template, d: Derivation) -> list[tuple[str, str, Derivation]]:
    """(kind, description, derivation) of every error the bank can inject with a changed result:
    kind is one of 'wrong law', 'unit slip', 'misread value', 'factor error'."""
    cands = []

    def add(kind, why, fn):
        try:
            nd = fn()
        except (ValueError, ZeroDivisionError, OverflowError, TypeError):
            return
        if all(math.isfinite(x) for x in nd.results):
            cands.append((kind, why, nd))

    for w in t.wrong:
        eqs = [replace(e, expr=w.eqs[e.sym]) if e.sym in w.eqs else e for e in d.eqs]
        add("wrong law", w.note or "wrong law",
            lambda eqs=eqs, w=w: with_changes(d, eqs=eqs, principle=w.principle or d.principle))
    for g in t.givens:
        f, offset = _si_factor(g.unit)
        if abs(f - 1.0) > 1e-9 and not offset:
            vals = {**d.values, g.sym: shown(d.values[g.sym] / f)}
            add("unit slip", f"used {g.sym} in {g.unit} as if it were SI", lambda vals=vals: with_changes(d, values=vals))
    for g in t.givens:
        for x in (10.0, 0.1):
            vals = {**d.values, g.sym: shown(d.values[g.sym] * x)}
            add("misread value", f"misread {g.sym} (x{x:g})", lambda vals=vals: with_changes(d, values=vals))
    last = len(d.eqs) - 1
    for x in (2.0, 0.5, 10.0, 0.1):
        add("factor error", f"factor x{x:g} in {d.eqs[last].sym}",
            lambda x=x: with_changes(d, calc_factor={**d.calc_factor, last: x}))
    return cands


def _pick_distinct(pool, taken: list, k: int, rng) -> list:
    """Up to k (value, source) from pool [(kind, why, value)], one kind at a time in a seeded order,
    each differing by > 2% from every value already taken (and shown differently)."""
    kinds = list(dict.fromkeys(c[0] for c in pool))
    rng.shuffle(kinds)
    by_kind = {kd: [c for c in pool if c[0] == kd] for kd in kinds}
    for v in by_kind.values():
        rng.shuffle(v)
    out = []
    while len(out) < k and any(by_kind.values()):
        for kd in kinds:
            while by_kind[kd]:
                _, why, v = by_kind[kd].pop()
                if all(_differs(v, u) and fmt(v) != fmt(u) for u in taken):
                    taken.append(v)
                    out.append((v, f"{kd}: {why}"))
                    break
            if len(out) >= k:
                break
    return out


def _fallback(true_value: float, taken: list, k: int) -> list:
    out = []
    for x in (3.0, 1 / 3, 4.0, 0.25, 5.0, 0.2, 8.0, 0.125):
        if len(out) >= k:
            break
        v = shown(true_value * x)
        if all(_differs(v, u) and fmt(v) != fmt(u) for u in taken):
            taken.append(v)
            out.append((v, f"factor error: x{x:g}"))
    return out


def _q(value: float, unit: str) -> str:
    return f"{fmt(value)} {unit}".strip()


# --- rendering --------------------------------------------------------------------------------------

def _text(t: Template, d: Derivation, final: str) -> str:
    s = _steps(t, d)
    s["final_answer"] = final
    return seventag.render(s)


def _letters_for(item: Item, env: dict) -> str:
    """The letter(s) a solution with values `env` (sym -> SI value) should give: single MCQ the option
    closest to its target value; multi the statements its own values make true (at least the closest)."""
    if item.form == "mcq":
        v = env.get(item.option_syms[0])
        if v is None:
            return ""
        i = min(range(len(item.option_values)), key=lambda i: _logdist(item.option_values[i], v))
        return LETTERS[i]
    true = [LETTERS[i] for i, (s, ov) in enumerate(zip(item.option_syms, item.option_values))
            if s in env and not _differs(env[s], ov, 2e-3)]
    if true:
        return "".join(true)
    i = min(range(len(item.option_values)), key=lambda i: _logdist(item.option_values[i], env.get(item.option_syms[i], math.nan)))
    return LETTERS[i]


def _logdist(a: float, b: float) -> float:
    """How far apart two values are as a ratio; values of opposite sign (or zero) are farther than any ratio."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    if a == 0 or b == 0 or (a > 0) != (b > 0):
        return 1e6 + abs(a - b)
    return abs(math.log(a / b))


def integer_answer(d: Derivation) -> tuple[int, bool] | None:
    """(integer gold, rounded?) or None when the value suits no integer question."""
    x = d.answer
    if float(x).is_integer() and abs(x) < 1e6:
        return int(x), False
    if 10 <= abs(x) < 1e4:
        return int(round(x)), True
    return None


def solution_in_form(item: Item, t: Template, d: Derivation) -> str:
    """The seven-tag text of derivation `d` (reference or injected) with the final answer in the item's
    form: letters chosen from the solution's own values, the integer rounded from its own result."""
    if item.form == "numeric":
        from r3bench.procgen.render import render
        return render(t, d)
    if item.form == "integer":
        return _text(t, d, f"\\boxed{{{int(round(d.answer))}}}")
    return _text(t, d, f"\\boxed{{{_letters_for(item, _values(d))}}}")


def make_item(p: Problem, form: str, rng: random.Random, t: Template | None = None, d: Derivation | None = None,
              multi_k: dict | None = None) -> Item | None:
    """Problem `p` in answer form `form`; None when the problem cannot take it (integer only)."""
    from r3bench import procgen
    from r3bench.procgen.core import reference

    if form not in FORMS:
        raise ValueError(f"unknown form {form!r} (have {FORMS})")
    t = t or procgen.BY_NAME[p.template]
    d = d or reference(t, procgen.raw_values(p))
    meta = {"template": p.template, "topic": p.topic, "difficulty": p.difficulty, "tier": p.tier, "form": form,
            "numeric_answer": p.answer}
    iid = f"{p.id}-{form}"
    if form == "numeric":
        return Item(iid, p, form, p.question, (), p.answer, p.solution, meta=meta)
    if form == "integer":
        got = integer_answer(d)
        if got is None:
            return None
        n, rounded = got
        unit = d.answer_unit
        ask = (f" Give the answer in {unit}" if unit else " Give the answer") + (", rounded to the nearest integer."
                                                                                   if rounded else ".")
        it = Item(iid, p, form, p.question + ask, (), str(n), "", meta={**meta, "rounded": rounded})
        return _with_solution(it, t, d)
    wrong = wrong_derivations(t, d)
    if form == "mcq":
        taken = [d.answer]
        pool = [(kd, why, nd.answer) for kd, why, nd in wrong if nd.answer_unit == d.answer_unit]
        picked = _pick_distinct(pool, taken, 3, rng)
        picked += _fallback(d.answer, taken, 3 - len(picked))
        opts = [(d.answer, "correct")] + picked
        rng.shuffle(opts)
        gold = LETTERS[next(i for i, o in enumerate(opts) if o[1] == "correct")]
        it = Item(iid, p, form, p.question, tuple(_q(v, d.answer_unit) for v, _ in opts), gold, "",
                  (d.target,) * 4, tuple(v for v, _ in opts), tuple(s for _, s in opts), meta)
        return _with_solution(it, t, d)
    return _with_solution(_multi(p, t, d, wrong, rng, multi_k or MULTI_K_COUNTS, iid, meta), t, d)


def _multi(p, t, d, wrong, rng, multi_k, iid, meta) -> Item:
    true = _values(d)
    info = {e.sym: (e.name, e.unit) for e in d.eqs}
    info.update({g.sym: (g.name, d.units[g.sym]) for g in t.givens})
    chain = [e.sym for e in d.eqs if e.sym != d.target]
    givens = [g.sym for g in t.givens]
    nontrivial = [s for s in givens if abs(_si_factor(next(g.unit for g in t.givens if g.sym == s))[0] - 1) > 1e-9]
    trivial = [s for s in givens if s not in nontrivial]
    for xs in (chain, nontrivial, trivial):
        rng.shuffle(xs)
    order = [d.target] + chain + nontrivial + trivial
    slots = (order * 4)[:4]
    ks, ws = zip(*sorted(multi_k.items()))
    k = min(rng.choices(ks, weights=ws)[0], len(set(slots)))
    idx = list(range(4))
    while True:  # k true slots, no quantity stated true twice
        rng.shuffle(idx)
        if len({slots[i] for i in idx[:k]}) == k:
            break
    true_slots = set(idx[:k])
    taken = {s: [true[s]] for s in set(slots)}
    opts = []
    for i, s in enumerate(slots):
        if i in true_slots:
            opts.append((s, true[s], "correct"))
            continue
        pool = [(kd, why, _values(nd).get(s, math.nan)) for kd, why, nd in wrong]
        got = _pick_distinct(pool, taken[s], 1, rng) or _fallback(true[s], taken[s], 1)
        opts.append((s, got[0][0], got[0][1]))
    rng.shuffle(opts)
    text = tuple(f"The {info[s][0]} {s} is {_q(v, info[s][1])}." for s, v, _ in opts)
    gold = "".join(LETTERS[i] for i, o in enumerate(opts) if o[2] == "correct")
    q = p.question + " Which of the following statements are correct?"
    return Item(iid, p, "mcq_multi", q, text, gold, "", tuple(s for s, _, _ in opts), tuple(v for _, v, _ in opts),
                tuple(x for _, _, x in opts), meta)


def _with_solution(it: Item, t: Template, d: Derivation) -> Item:
    return replace(it, solution=solution_in_form(it, t, d))


# --- the exact step checker in every form -----------------------------------------------------------

def final_check(item: Item):
    """The step-7 check of r3bench.procgen.oracle.first_error for this item's form: (final answer
    content, the solution's last calculation text, the solution's own values) -> bool."""
    if item.form == "numeric":
        return None  # the oracle's own numeric check
    if item.form == "integer":
        def ok(fa, want, env):
            m = leading_number(want)
            return m is not None and check(fa, str(int(round(m))), kind="integer").equivalent
        return ok

    def ok(fa, want, env):
        got = extract_letters(fa, multi=True, valid=LETTERS)
        return bool(got) and "".join(sorted(got)) == _letters_for(item, env)
    return ok


def leading_number(text: str) -> float | None:
    """The number a `lhs = <number> <unit>` right-hand side starts with."""
    m = re.match(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", text.strip())
    return float(m.group(0)) if m else None


def first_error(item: Item, solution: str) -> tuple[int, str]:
    """The first wrong step (1-7) of `solution` for this item, 0 if all are right (the procgen oracle,
    with step 7 read in the item's form)."""
    from r3bench import procgen
    from r3bench.procgen.oracle import first_error as _oracle

    return _oracle(procgen.BY_NAME[item.problem.template], procgen.raw_values(item.problem), solution,
                   final=final_check(item))


def inject_item(item: Item, cls: str, step: int | None = None, seed: int = 0):
    """(wrong solution text in the item's form, first_error, class, description)."""
    from r3bench import procgen
    from r3bench.procgen.core import reference
    from r3bench.procgen.inject import inject

    p = item.problem
    t = procgen.BY_NAME[p.template]
    got = inject(t, reference(t, procgen.raw_values(p)), cls, step, random.Random(f"{p.id}|{cls}|{step}|{seed}"))
    return solution_in_form(item, t, got.derivation), got.first_error, got.error_class, got.description
