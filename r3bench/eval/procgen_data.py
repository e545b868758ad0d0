"""The lm-eval dataset of a procgen tier: `custom_dataset: !function r3bench.eval.procgen_data.dataset_tier`.

Used by the task YAMLs r3_procgen_t1/_t2/_t3 (and their _cot variants) that tasks/r3/_generate.py
writes. The split is the tier's template-level one (r3bench.procgen.generate(..., tier=k)): the
test split holds only templates never used in training. The records have the same schema as
r3bench.eval.lmeval.dataset_procgen's, so the same prompts and process_results score them.
"""
from __future__ import annotations

import functools

from r3bench import procgen
from r3bench.eval import data as _data
from r3bench.eval.lmeval import records_to_dataset

# n per tier of the task datasets: the test split (the held-out templates) then has >= 300 problems
# in every tier (tier 1: 501, tier 2: 496, tier 3: 307 at seed 0)
TASK_N = 1500


@functools.lru_cache(maxsize=16)
def problems(tier: int, n: int = TASK_N, seed: int = 0, split: str = "test") -> tuple:
    """The problems of one split of a tier (deterministic for tier, n, seed)."""
    return tuple(p for p in procgen.generate(n=n, seed=seed, tier=tier) if p.split == split)


def records(tier: int, n: int = TASK_N, seed: int = 0, split: str = "test") -> list:
    """r3bench.eval.data.Record rows of one split of a tier (what the lm-eval tasks score)."""
    return [_data.Record(id=p.id, benchmark="procgen", question=p.question, options=(), answer=p.answer,
                         answer_kind="numeric", unit=p.answer_unit or None, solution=p.solution, topic=p.topic,
                         source=f"procgen:{p.template}",
                         meta={"difficulty": p.difficulty, "template": p.template, "tier": p.tier})
            for p in problems(int(tier), int(n), int(seed), split)]


def dataset_tier(procgen_tier: int = 1, procgen_n: int = TASK_N, procgen_seed: int = 0, procgen_split: str = "test",
                 **_metadata):
    """DatasetDict {"test": ...} of one tier's split. Keywords are prefixed because lm-eval passes every
    --model_args key here too (as metadata)."""
    import datasets


    return datasets.DatasetDict({"test": records_to_dataset(records(procgen_tier, procgen_n, procgen_seed,
                                                                    procgen_split))})


# --- the benchmark-shaped mixture's evaluation sets (issue 35) -----------------------------------------
# learning: unseen instances of the training templates; transfer: the held-out templates
# (r3bench.procgen.mixture); the third evaluation set is the five real benchmarks, the lm-eval tasks
# mixture.BENCHMARK_TASKS (group r3_physics_structured).
MIXTURE_SETS = ("learning", "transfer")


def benchmark_kind_counts(data_dir=None) -> tuple[dict, dict]:
    """(benchmark -> {answer kind: count}, multi-correct letter count -> n) of the five benchmarks, read
    with r3bench.eval.data: what r3bench.procgen.forms.BENCHMARK_KIND_COUNTS / MULTI_K_COUNTS record."""
    from collections import Counter

    from r3bench.procgen.forms import BENCHMARKS

    kinds, multi = {}, Counter()
    for b in BENCHMARKS:
        recs = _data.load(b, data_dir)
        kinds[b] = dict(Counter(r.answer_kind for r in recs))
        multi.update(len(set(r.answer)) for r in recs if r.answer_kind == "mcq_multi")
    return kinds, dict(sorted(multi.items()))


def mixture_records(procgen_set: str = "learning", seed: int = 0) -> list:
    """Record rows of one evaluation set of the mixture built with its default sizes (mixture.build(seed)):
    answer_kind is the item's form, options the listed options, answer the gold (letters for MCQ)."""
    from r3bench.procgen import mixture
    from r3bench.procgen.tiers import family

    if procgen_set not in MIXTURE_SETS:
        raise ValueError(f"procgen_set must be one of {MIXTURE_SETS}, got {procgen_set!r}")
    items = getattr(mixture.build(int(seed)), procgen_set)
    return [_data.Record(id=it.id, benchmark="procgen_mixture", question=it.question, options=tuple(it.options),
                         answer=it.answer, answer_kind=it.form,
                         unit=(it.problem.answer_unit or None) if it.form == "numeric" else None,
                         solution=it.solution, topic=it.problem.topic, source=f"procgen:{it.problem.template}",
                         meta={"difficulty": it.problem.difficulty, "template": it.problem.template,
                               "family": family(it.problem.template), "tier": it.problem.tier, "form": it.form,
                               "set": procgen_set, "numeric_answer": it.problem.answer})
            for it in items]


def dataset_mixture(procgen_set: str = "learning", procgen_seed: int = 0, **_metadata):
    """DatasetDict {"test": ...} of the mixture's learning or transfer set, for a task YAML:
    custom_dataset: !function r3bench.eval.procgen_data.dataset_mixture, dataset_kwargs: {procgen_set: transfer};
    scored by r3bench.eval.lmeval.results_structured (the checker reads answer_kind per problem)."""
    import datasets

    return datasets.DatasetDict({"test": records_to_dataset(mixture_records(procgen_set, procgen_seed))})
