"""Procedural physics problems with exact seven-tag solutions and errors injected at known steps.

    from r3bench import procgen
    probs = procgen.generate(n=100, seed=0)            # deterministic for (n, seed)
    bad = procgen.inject_problem(probs[0], "CM")       # -> (solution text, first_error, class, why)
    procgen.first_error(probs[0], bad[0])              # the exact step checker -> (step, reason)

Splits: every instance (template + sampled values) appears once; train/validation/test are cut
from the deduplicated, shuffled list (80/10/10), so no instance is in two splits.
"""
from __future__ import annotations

import random

from r3bench.procgen.core import Problem, instance, make_problem, problem_id, reference
from r3bench.procgen.inject import CLASS_NAMES, CLASSES, InjectError, inject
from r3bench.procgen.oracle import first_error as _oracle
from r3bench.procgen.render import render
from r3bench.procgen.templates import BY_NAME, TEMPLATES, TOPICS

SPLITS = (("train", 0.8), ("validation", 0.1), ("test", 0.1))
__all__ = ["generate", "inject_problem", "first_error", "TEMPLATES", "TOPICS", "CLASSES", "CLASS_NAMES",
           "InjectError", "Problem", "raw_values", "SPLITS"]


def raw_values(p: Problem) -> dict:
    return {k: v[0] for k, v in p.givens.items()}


def generate(n: int = 2494, seed: int = 0, templates=None, difficulty: int | None = None) -> list[Problem]:
    """n distinct problems, templates cycled in a seeded order, each with its split."""
    ts = [t for t in (templates or TEMPLATES) if difficulty is None or t.difficulty == difficulty]
    if not ts:
        raise ValueError(f"no template with difficulty {difficulty}")
    rng = random.Random(seed)
    seen, items = set(), []
    attempts = 0
    while len(items) < n:
        attempts += 1
        if attempts > 20 * n + 100:
            raise ValueError(f"could only make {len(items)} distinct problems from {len(ts)} templates")
        t = ts[len(items) % len(ts)] if attempts <= n else rng.choice(ts)
        raw, d = instance(t, rng)
        pid = problem_id(t, raw)
        if pid in seen:
            continue
        seen.add(pid)
        items.append((t, raw, d))
    order = list(range(n))
    random.Random(seed + 1).shuffle(order)
    split_of, start = {}, 0
    for name, frac in SPLITS:
        k = round(frac * n) if name != "test" else n - start
        for i in order[start:start + k]:
            split_of[i] = name
        start += k
    return [make_problem(t, raw, d, split_of[i]) for i, (t, raw, d) in enumerate(items)]


def inject_problem(p: Problem, cls: str, step: int | None = None, seed: int = 0):
    """(wrong solution text, first_error, class, description) for a generated problem."""
    t = BY_NAME[p.template]
    d = reference(t, raw_values(p))
    got = inject(t, d, cls, step, random.Random(f"{p.id}|{cls}|{step}|{seed}"))
    return render(t, got.derivation), got.first_error, got.error_class, got.description


def first_error(p: Problem, solution: str) -> tuple[int, str]:
    """The first wrong step (1-7) of `solution` for problem `p`, or 0 if all are right."""
    return _oracle(BY_NAME[p.template], raw_values(p), solution)
