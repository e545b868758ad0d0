"""Export of the benchmark-shaped mixture (r3bench.procgen.mixture) to one folder.

    python -m r3bench.procgen.mixture_export --out DIR [--seed 0] [--n-sft 2000] [--n-rl 600]

  sft.jsonl       the SFT set: prompt (the tasks' seven-tag prompt, options listed as the benchmarks
                  list them), completion (the reference solution in the item's form), messages, answer
                  (the gold: letter(s), integer or value with unit), answer_kind, options, split "train"
  dpo.jsonl       the SFT set's problems: chosen = reference, rejected = an injected error in the
                  same form (its final answer the option its own wrong value points to)
  rl.jsonl        the RL pool, the schema of sft.jsonl (split "train": a trainer takes it as `data`),
                  no instance of sft.jsonl
  learning.jsonl  unseen instances of the training templates (split "test")
  transfer.jsonl  the held-out templates (split "test")
  manifest.json   parameters, the proportions and their source, counts per set and form, the train
                  and held-out templates, the overlaps between sets (all 0), the benchmark tasks
Two exports with the same arguments are byte-identical (no timings in the files).
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from r3bench.core.prompts import prompt_structured
from r3bench.procgen import forms, mixture
from r3bench.procgen.export import CELLS, write_jsonl
from r3bench.procgen.inject import InjectError
from r3bench.procgen.tiers import family

PROPORTION_SOURCE = ("the five benchmarks' answer kinds pooled by problem (forms.BENCHMARK_KIND_COUNTS, counted with "
                     "r3bench.eval.data.load on the data directory: scieval, mmlu_high, mmlu_college, jeebench, "
                     "physicsqa; symbolic and text left out)")


def row(item: forms.Item, set_name: str) -> dict:
    p = item.problem
    prompt = prompt_structured(item.doc())
    return {"id": item.id, "problem_id": p.id, "prompt": prompt, "completion": item.solution,
            "messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": item.solution}],
            "question": item.question, "options": list(item.options), "answer": item.answer,
            "answer_kind": item.form, "numeric_answer": p.answer, "option_sources": list(item.option_sources),
            "split": "train" if set_name in ("sft", "rl") else "test", "set": set_name, "topic": p.topic,
            "template": p.template, "family": family(p.template), "difficulty": p.difficulty, "tier": p.tier}


def dpo_rows(items, seed: int):
    wrong = CELLS[1:]
    for i, it in enumerate(items):
        for cls, step in wrong[i % 6:] + wrong[:i % 6]:
            try:
                text, fe, c, why = forms.inject_item(it, cls, step, seed=seed)
            except InjectError:
                continue
            yield {"id": f"{it.id}-dpo0", "prompt": prompt_structured(it.doc()), "chosen": it.solution,
                   "rejected": text, "chosen_first_error": 0, "rejected_first_error": fe, "rejected_class": c,
                   "answer": it.answer, "answer_kind": it.form, "topic": it.problem.topic,
                   "template": it.problem.template, "split": "train"}
            break


def manifest(m: mixture.Mixture) -> dict:
    sets = m.sets()
    pids = {k: {i.problem.id for i in v} for k, v in sets.items()}
    names = list(sets)
    return {
        "seed": m.seed, "sizes": {k: len(v) for k, v in sets.items()},
        "proportions": {f: round(v, 6) for f, v in m.proportions.items()}, "proportions_source": PROPORTION_SOURCE,
        "benchmark_kind_counts": forms.BENCHMARK_KIND_COUNTS, "multi_correct_letters": forms.MULTI_K_COUNTS,
        "eval_proportions": {f: round(v, 6) for f, v in m.eval_proportions.items()},
        "per_set": mixture.summary(m),
        "per_set_tier": {k: dict(sorted(Counter(i.problem.tier for i in v).items())) for k, v in sets.items()},
        "train_templates": [t.name for t in mixture.TRAIN_TEMPLATES],
        "heldout_templates": list(mixture.HELDOUT),
        "heldout_families": sorted({family(n) for n in mixture.HELDOUT}),
        "instance_overlaps": {f"{a}&{b}": len(pids[a] & pids[b]) for i, a in enumerate(names) for b in names[i + 1:]},
        "excluded_committed_instances": len(mixture.excluded_ids()),
        "benchmark_tasks": list(mixture.BENCHMARK_TASKS),
    }


def export(out, seed: int = 0, n_sft: int = mixture.DEFAULT_SIZES["sft"], n_rl: int = mixture.DEFAULT_SIZES["rl"],
           n_learning: int = mixture.DEFAULT_SIZES["learning"], n_transfer: int = mixture.DEFAULT_SIZES["transfer"],
           proportions: dict | None = None, eval_proportions: dict | None = None) -> dict:
    """Write the mixture's files to `out`; returns the manifest."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    m = mixture.build(seed, n_sft, n_rl, n_learning, n_transfer,
                      tuple(sorted(proportions.items())) if proportions else None,
                      tuple(sorted(eval_proportions.items())) if eval_proportions else None)
    rows = {}
    for name, items in m.sets().items():
        rows[name] = write_jsonl(out / f"{name}.jsonl", (row(i, name) for i in items))
    rows["dpo"] = write_jsonl(out / "dpo.jsonl", dpo_rows(m.sft, seed))
    man = {**manifest(m), "rows": rows}
    (out / "manifest.json").write_text(json.dumps(man, indent=1))
    return man


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    for k, v in mixture.DEFAULT_SIZES.items():
        ap.add_argument(f"--n-{k}", type=int, default=v)
    ap.add_argument("--proportions", default=None, help='JSON {"mcq": 0.5, ...}; default: the benchmarks\' own')
    ap.add_argument("--eval-proportions", default=None, help="JSON; default: equal shares")
    a = ap.parse_args(argv)
    man = export(a.out, a.seed, a.n_sft, a.n_rl, a.n_learning, a.n_transfer,
                 json.loads(a.proportions) if a.proportions else None,
                 json.loads(a.eval_proportions) if a.eval_proportions else None)
    print(json.dumps({"rows": man["rows"], "per_set": man["per_set"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
