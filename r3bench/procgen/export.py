"""`r3bench procgen`: the four exports of the procedural bank, written to one folder.

  sft.jsonl        every problem: prompt (the tasks' seven-tag prompt), completion (the reference
                   solution), question, messages (chat form), split, topic, template, difficulty
  dpo.jsonl        train split: chosen = reference, rejected = an injected-error solution; and
                   pairs of two wrong solutions, the later first error chosen
  verifier.jsonl   validation + test splits: solutions with first_error (0 = correct) and class,
                   balanced exactly over the cells correct, MC@1, MC@4, CM@2, CM@3, CE@5, CE@6
  procgen_test.jsonl  the test split, the rows of the lm-eval task r3_procgen (r3_procgen_t<k> with a tier)
  manifest.json    parameters and counts (no timings: two exports of one seed are byte-identical);
                   with a tier, the split kind and the held-out (test-only) templates
"""
from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

from r3bench import procgen
from r3bench.core.prompts import prompt_structured

CELLS = [("none", 0), ("MC", 1), ("MC", 4), ("CM", 2), ("CM", 3), ("CE", 5), ("CE", 6)]


def doc_of(p) -> dict:
    return {"question": p.question, "options": [], "answer_kind": "numeric"}


def write_jsonl(path: Path, rows) -> int:
    tmp = path.with_name(path.name + ".partial")
    n = 0
    with open(tmp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
            n += 1
    tmp.replace(path)
    return n


def sft_rows(problems):
    for p in problems:
        prompt = prompt_structured(doc_of(p))
        yield {"id": p.id, "prompt": prompt, "completion": p.solution, "question": p.question,
               "messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": p.solution}],
               "answer": p.answer, "split": p.split, "topic": p.topic, "template": p.template,
               "difficulty": p.difficulty, "tier": p.tier}


def _injected(p, cells, rng):
    """First cell of `cells` (tried in the given order) that this template can take."""
    for cls, step in cells:
        try:
            text, fe, c, why = procgen.inject_problem(p, cls, step, seed=rng.randrange(1 << 30))
            return text, fe, c, why
        except procgen.InjectError:
            continue
    return None


def dpo_rows(problems, seed):
    rng = random.Random(seed)
    wrong_cells = CELLS[1:]
    for i, p in enumerate(problems):
        prompt = prompt_structured(doc_of(p))
        order = wrong_cells[i % 6:] + wrong_cells[:i % 6]
        got = _injected(p, order, rng)
        if got:
            yield {"id": f"{p.id}-dpo0", "prompt": prompt, "chosen": p.solution, "rejected": got[0],
                   "chosen_first_error": 0, "rejected_first_error": got[1], "rejected_class": got[2],
                   "topic": p.topic, "template": p.template}
        if i % 4 == 0:  # two wrong solutions: the later first error is preferred (more steps right)
            early = _injected(p, [c for c in order if c[1] <= 3], rng)
            late = _injected(p, [c for c in order if c[1] >= 5], rng)
            if early and late:
                yield {"id": f"{p.id}-dpo1", "prompt": prompt, "chosen": late[0], "rejected": early[0],
                       "chosen_first_error": late[1], "rejected_first_error": early[1],
                       "chosen_class": late[2], "rejected_class": early[2], "topic": p.topic, "template": p.template}


def verifier_rows(problems, seed):
    rng = random.Random(seed)
    by_cell = {c: [] for c in CELLS}
    for p in problems:
        for cls, step in CELLS:
            if step == 0:
                text, fe, c, why = p.solution, 0, "none", "reference solution"
            else:
                try:
                    text, fe, c, why = procgen.inject_problem(p, cls, step, seed=seed)
                except procgen.InjectError:
                    continue
            by_cell[(cls, step)].append({"id": f"{p.id}-{cls}{step}", "problem_id": p.id, "question": p.question,
                                         "answer": p.answer, "reference": p.solution, "solution": text, "first_error": fe,
                                         "error_class": c, "description": why, "topic": p.topic,
                                         "template": p.template, "split": p.split})
    k = min(len(v) for v in by_cell.values())
    rows = []
    for v in by_cell.values():
        rng.shuffle(v)
        rows += v[:k]
    rng.shuffle(rows)
    return rows


def export(out: str | Path, n: int = 2494, seed: int = 0, log=print, tier: int | None = None) -> dict:
    """Write the four exports of `generate(n, seed, tier=tier)` to `out`; returns the manifest plus
    the seconds taken (which manifest.json leaves out)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    probs = procgen.generate(n=n, seed=seed, tier=tier)
    templates = procgen.TIER_TEMPLATES[tier] if tier is not None else procgen.TEMPLATES
    log(f"generated {len(probs)} problems from {len(templates)} templates in {time.perf_counter() - t0:.1f} s")
    counts = {"sft": write_jsonl(out / "sft.jsonl", sft_rows(probs))}
    counts["dpo"] = write_jsonl(out / "dpo.jsonl", dpo_rows([p for p in probs if p.split == "train"], seed))
    log(f"sft {counts['sft']}, dpo {counts['dpo']} rows")
    ver = verifier_rows([p for p in probs if p.split != "train"], seed)
    counts["verifier"] = write_jsonl(out / "verifier.jsonl", ver)
    counts["procgen_test"] = write_jsonl(out / "procgen_test.jsonl", (p.to_dict() for p in probs if p.split == "test"))
    log(f"verifier {counts['verifier']} rows, test split {counts['procgen_test']} problems")
    manifest = {
        "n": n, "seed": seed, "tier": tier, "templates": len(templates),
        "topics": list(dict.fromkeys(t.topic for t in templates)),
        "split_kind": "instance (80/10/10)" if tier is None else
        "template: held-out templates are the test split; the rest train 90% / validation 10%",
        "heldout_templates": [] if tier is None else list(procgen.heldout_templates(tier)),
        "rows": counts, "splits": dict(sorted(Counter(p.split for p in probs).items())),
        "per_topic": dict(sorted(Counter(p.topic for p in probs).items())),
        "per_difficulty": dict(sorted(Counter(p.difficulty for p in probs).items())),
        "per_template_split": {s: dict(sorted(Counter(p.template for p in probs if p.split == s).items()))
                               for s in ("train", "validation", "test")},
        "verifier_cells": dict(sorted(Counter(f"{r['error_class']}@{r['first_error']}" for r in ver).items())),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    seconds = round(time.perf_counter() - t0, 2)
    log(f"wrote {out} in {seconds} s")
    return {**manifest, "seconds": seconds}  # the timing is returned (demo, CLI), never written to the file
