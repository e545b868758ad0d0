"""Procedural physics problems with exact seven-tag solutions and errors injected at known steps.

    from r3bench import procgen
    probs = procgen.generate(n=100, seed=0)            # deterministic for (n, seed)
    bad = procgen.inject_problem(probs[0], "CM")       # -> (solution text, first_error, class, why)
    procgen.first_error(probs[0], bad[0])              # the exact step checker -> (step, reason)

Splits: every instance (template + sampled values) appears once; train/validation/test are cut
from the deduplicated, shuffled list (80/10/10), so no instance is in two splits.
Answer forms and the benchmark-shaped mixture (issue 35): r3bench.procgen.forms (MCQ, multi-correct
MCQ, integer, numeric) and r3bench.procgen.mixture (held-out templates, SFT / RL / learning / transfer
sets, drawn from the tiers and templates_more.MORE).
Tiers (`generate(n, seed, tier=1|2|3)`, r3bench.procgen.tiers): a curriculum from one-formula integer
problems to the full bank, with a template-level split (test = templates never trained on).
"""
from __future__ import annotations

import functools
import random

from r3bench.procgen.core import Problem, instance, problem_id, reference
from r3bench.procgen.inject import CLASS_NAMES, CLASSES, InjectError, inject
from r3bench.procgen.oracle import first_error as _oracle
from r3bench.procgen.render import make_problem, render
from r3bench.procgen.templates import TEMPLATES, TOPICS
from r3bench.procgen.templates_more import MORE
from r3bench.procgen.tiers import TIER_TEMPLATES, TIERS, heldout_templates

# every template of every tier and of the mixture's extra bank (templates_more) by name (tier-1/2
# names start with t1_/t2_, so none collide)
BY_NAME = {t.name: t for ts in (*TIER_TEMPLATES.values(), MORE) for t in ts}

SPLITS = (("train", 0.8), ("validation", 0.1), ("test", 0.1))
__all__ = ["generate", "inject_problem", "first_error", "TEMPLATES", "TOPICS", "CLASSES", "CLASS_NAMES",
           "InjectError", "Problem", "raw_values", "SPLITS", "TIERS", "TIER_TEMPLATES", "heldout_templates", "BY_NAME"]


def raw_values(p: Problem) -> dict:
    return {k: v[0] for k, v in p.givens.items()}


def _draw(ts, n: int, seed: int) -> list:
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
    return items


def generate(n: int = 2494, seed: int = 0, templates=None, difficulty: int | None = None,
             tier: int | None = None) -> list[Problem]:
    """n distinct problems, templates cycled in a seeded order, each with its split.

    tier None: the original bank with an instance-level split (SPLITS: 80/10/10; the r3_procgen task).
    tier 1/2/3: that tier's templates (r3bench.procgen.tiers) with a template-level split: the
    held-out templates (tiers.heldout_templates) make up the test split, every other problem is
    train (90%) or validation (10%), so no test template is ever trained on."""
    if tier is not None and tier not in TIERS:
        raise ValueError(f"tier must be one of {TIERS}, got {tier!r}")
    pool = templates or (TIER_TEMPLATES[tier] if tier is not None else TEMPLATES)
    ts = [t for t in pool if difficulty is None or t.difficulty == difficulty]
    if not ts:
        raise ValueError(f"no template with difficulty {difficulty}")
    items = _draw(ts, n, seed)
    order = list(range(n))
    random.Random(seed + 1).shuffle(order)
    split_of, start = {}, 0
    if tier is None:
        for name, frac in SPLITS:
            k = round(frac * n) if name != "test" else n - start
            for i in order[start:start + k]:
                split_of[i] = name
            start += k
    else:
        held = set(heldout_templates(tier))
        seen_idx = [i for i in order if items[i][0].name not in held]
        n_train = round(0.9 * len(seen_idx))
        split_of = {i: "test" for i in order if items[i][0].name in held}
        split_of.update({i: "train" for i in seen_idx[:n_train]})
        split_of.update({i: "validation" for i in seen_idx[n_train:]})
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


@functools.lru_cache(maxsize=8)
def test_split(n: int, seed: int) -> tuple:
    """The test split of the bank generated for (n, seed), cached: what r3_procgen scores and a run record hashes."""
    return tuple(p for p in generate(n=n, seed=seed) if p.split == "test")
