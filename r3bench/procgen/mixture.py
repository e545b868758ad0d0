"""The benchmark-shaped training mixture and its evaluation sets (issue 35, Build 1-2).

    from r3bench.procgen import mixture
    m = mixture.build(seed=0)            # deterministic for its arguments
    m.sft, m.rl, m.learning, m.transfer  # tuples of forms.Item

Templates: the whole bank (tiers 1, 2 and 3 and templates_more.MORE: 125 templates in 104 formula
families, 15 topics). HELDOUT holds out, from every training set, 42 templates (35 families):
  - the held-out families of tiers 1-2 (tiers.heldout_templates(1)/(2): 7 families, 14 templates),
    already outside the committed SFT start's data and the test split of r3_procgen_t1/_t2;
  - in tier 3, per topic, the two templates with the smallest sha1 of their name (26 templates;
    they include r3_procgen_t3's 13 held-out templates). No tier-3 template was in the SFT start's data;
  - in MORE, per topic with two or more of its templates (rotation, fluids), the smallest sha1 (2).
Sets, each a set of distinct instances (template + sampled values) in one answer form, and no
instance in two sets (whatever the form):
  sft       training templates, forms in `proportions` (the benchmarks' own by default)
  rl        the RL pool: training templates, the same proportions, disjoint from sft
  learning  unseen instances of the training templates (evaluation of learning)
  transfer  instances of the HELDOUT templates only (evaluation of transfer)
None of them holds an instance the committed study could have trained on or scores elsewhere:
every instance of the tier-1/2 exports it trained from (generate(1500, 0, tier=1|2), all splits)
and of r3_procgen's test split (generate(2494, 0)) is excluded (`excluded_ids`).
The evaluation sets default to equal shares of the four forms (`EVAL_PROPORTIONS`), so every form
is measured on n/4 problems; the five real benchmarks are the lm-eval tasks BENCHMARK_TASKS.
"""
from __future__ import annotations

import functools
import hashlib
import random
from collections import Counter
from dataclasses import dataclass

from r3bench.procgen.core import instance, problem_id
from r3bench.procgen.forms import BENCHMARKS, DEFAULT_PROPORTIONS, FORMS, UNIFORM, Item, counts_for, make_item
from r3bench.procgen.render import make_problem
from r3bench.procgen.templates_more import MORE
from r3bench.procgen.tiers import TIER_TEMPLATES, family, heldout_templates

POOL = tuple(t for k in (1, 2, 3) for t in TIER_TEMPLATES[k]) + tuple(MORE)
TIER3_HELDOUT_PER_TOPIC = 2
EVAL_PROPORTIONS = UNIFORM
# the five real benchmarks: the seven-tag lm-eval tasks (group r3_physics_structured) and the CoT ones
BENCHMARK_TASKS = tuple(f"r3_{b}_structured" for b in BENCHMARKS)
# what the committed learning study trained on or scores: (n, seed, tier) of procgen.generate
COMMITTED = ((1500, 0, 1), (1500, 0, 2))
R3_PROCGEN_TEST = (2494, 0)
DEFAULT_SIZES = {"sft": 2000, "rl": 600, "learning": 400, "transfer": 400}


def _h(s: str) -> str:
    return hashlib.sha1(s.encode()).hexdigest()


def _heldout() -> tuple[str, ...]:
    fams = {family(n) for k in (1, 2) for n in heldout_templates(k)}
    out = {t.name for k in (1, 2) for t in TIER_TEMPLATES[k] if family(t.name) in fams}
    by_topic: dict[str, list] = {}
    for t in TIER_TEMPLATES[3]:
        by_topic.setdefault(t.topic, []).append(t.name)
    for names in by_topic.values():
        out.update(sorted(names, key=_h)[:TIER3_HELDOUT_PER_TOPIC])
    more: dict[str, list] = {}
    for t in MORE:
        more.setdefault(t.topic, []).append(t.name)
    out.update(min(names, key=_h) for names in more.values() if len(names) >= 2)
    return tuple(sorted(out))


HELDOUT = _heldout()
TRAIN_TEMPLATES = tuple(t for t in POOL if t.name not in HELDOUT)
HELDOUT_TEMPLATES = tuple(t for t in POOL if t.name in HELDOUT)


@functools.lru_cache(maxsize=1)
def excluded_ids() -> frozenset:
    """Instance ids the committed study trained on (its tier-1/2 exports, every split) or scores as
    r3_procgen's test split."""
    from r3bench import procgen

    ids = {p.id for n, seed, tier in COMMITTED for p in procgen.generate(n=n, seed=seed, tier=tier)}
    ids |= {p.id for p in procgen.test_split(*R3_PROCGEN_TEST)}
    return frozenset(ids)


@dataclass(frozen=True)
class Mixture:
    sft: tuple
    rl: tuple
    learning: tuple
    transfer: tuple
    seed: int
    proportions: dict
    eval_proportions: dict

    def sets(self) -> dict:
        return {"sft": self.sft, "rl": self.rl, "learning": self.learning, "transfer": self.transfer}


def _draw(templates, counts: dict, rng: random.Random, used: set, set_name: str, tries: int = 40) -> list[Item]:
    """Items in the forms and numbers of `counts`, templates taken in turn (a seeded order), each a new
    instance (its id not in `used`, which grows). A template that gives no new instance that can take
    the form in `tries` draws is skipped for that form from then on (small integer instance spaces)."""
    forms = [f for f in FORMS for _ in range(counts.get(f, 0))]
    rng.shuffle(forms)
    order = list(templates)
    rng.shuffle(order)
    dead: set = set()
    out, cur = [], 0
    for form in forms:
        for _ in range(len(order)):
            t = order[cur % len(order)]
            cur += 1
            if (t.name, form) in dead:
                continue
            item = None
            for _ in range(tries):
                raw, d = instance(t, rng)
                pid = problem_id(t, raw)
                if pid in used:
                    continue
                item = make_item(make_problem(t, raw, d, split=set_name), form, rng, t=t, d=d)
                if item is not None:
                    used.add(pid)
                    break
            if item is not None:
                out.append(item)
                break
            dead.add((t.name, form))
        else:
            raise ValueError(f"{set_name}: no template gives a new {form} instance any more")
    return out


@functools.lru_cache(maxsize=4)
def build(seed: int = 0, n_sft: int = DEFAULT_SIZES["sft"], n_rl: int = DEFAULT_SIZES["rl"],
          n_learning: int = DEFAULT_SIZES["learning"], n_transfer: int = DEFAULT_SIZES["transfer"],
          proportions: tuple | None = None, eval_proportions: tuple | None = None) -> Mixture:
    """The four sets, drawn in the order sft, rl, learning, transfer from one seeded generator.
    proportions / eval_proportions: tuples of (form, share) pairs (hashable, for the cache); default
    the benchmarks' own (forms.DEFAULT_PROPORTIONS) and equal shares (EVAL_PROPORTIONS)."""
    props = dict(proportions) if proportions else dict(DEFAULT_PROPORTIONS)
    eprops = dict(eval_proportions) if eval_proportions else dict(EVAL_PROPORTIONS)
    rng = random.Random(f"procgen-mixture|{seed}")
    used = set(excluded_ids())
    sft = _draw(TRAIN_TEMPLATES, counts_for(n_sft, props), rng, used, "sft")
    rl = _draw(TRAIN_TEMPLATES, counts_for(n_rl, props), rng, used, "rl")
    learning = _draw(TRAIN_TEMPLATES, counts_for(n_learning, eprops), rng, used, "learning")
    transfer = _draw(HELDOUT_TEMPLATES, counts_for(n_transfer, eprops), rng, used, "transfer")
    return Mixture(tuple(sft), tuple(rl), tuple(learning), tuple(transfer), seed, props, eprops)


def summary(m: Mixture) -> dict:
    """Counts per set: items, forms, templates, families, topics."""
    out = {}
    for name, items in m.sets().items():
        out[name] = {"n": len(items), "forms": dict(Counter(i.form for i in items)),
                     "templates": len({i.problem.template for i in items}),
                     "families": len({family(i.problem.template) for i in items}),
                     "topics": len({i.problem.topic for i in items})}
    return out
