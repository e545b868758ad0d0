"""Is the procgen curriculum climbable? Base-model greedy accuracy on a sample of a tier.

    python studies/curriculum_check.py --tier 1 --limit 60 --out studies/results/curriculum

Scores the model (default: SmolLM2-135M-Instruct, no adapter) through lm-eval on r3_procgen_t<k>
(seven-tag prompt: accuracy and format compliance) and r3_procgen_t<k>_cot (CoT prompt), greedy,
chat template, the first `limit` documents of the held-out test split (the held-out templates in
turn). Accuracy gets a Wilson 95% interval (Wilson 1927; the score interval, which stays inside
[0, 1] and is not degenerate at 0 successes). Writes OUT/summary.json and OUT/summary.md with
per-template counts and a few responses, and OUT/samples.jsonl (every response with its gold answer
and verdict), so a reader can see what the model does and audit every counted success.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import time
from collections import defaultdict
from pathlib import Path


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of k successes in n trials (z = 1.96: 95%). n = 0 gives (0, 1)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def score(model: str, tasks: list[str], limit: int, batch_size: int, max_gen_toks: int | None):
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from r3bench.core import models
    from r3bench.eval.hook import tasks_dir

    path = str(models.resolve(model)) if models.is_short_name(model) else model
    lm = HFLM(pretrained=path, device="cpu", batch_size=batch_size, dtype="float32")
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    gen = {"max_gen_toks": max_gen_toks} if max_gen_toks else None
    return simple_evaluate(model=lm, tasks=tasks, task_manager=tm, limit=limit, apply_chat_template=True,
                           gen_kwargs=gen, bootstrap_iters=0, log_samples=True)


def summarise(res: dict, tasks: list[str]) -> dict:
    out = {}
    for t in tasks:
        samples = res["samples"][t]
        acc = [float(s["acc"]) for s in samples]
        k, n = int(round(sum(acc))), len(acc)
        lo, hi = wilson(k, n)
        by_t = defaultdict(lambda: [0, 0])
        for s, a in zip(samples, acc):
            tpl = json.loads(s["doc"]["meta"])["template"]
            by_t[tpl][0] += int(a)
            by_t[tpl][1] += 1
        row = {"n": n, "correct": k, "acc": k / n if n else None, "wilson95": [lo, hi],
               "per_template": {a: f"{c}/{m}" for a, (c, m) in sorted(by_t.items())},
               "examples": [{"question": s["doc"]["question"], "answer": s["doc"]["answer"],
                             "response": (s["filtered_resps"][0] if s["filtered_resps"] else "")[:600],
                             "acc": s["acc"]} for s in samples[:3]]}
        if "format_compliance" in samples[0]:
            row["format_compliance"] = sum(float(s["format_compliance"]) for s in samples) / n
        out[t] = row
    return out


def markdown(summary: dict) -> str:
    a = summary["args"]
    lines = [f"# Curriculum check: base {a['model']} on tier {a['tier']} (greedy)", "",
             f"First {a['limit']} problems of the held-out test split of r3_procgen_t{a['tier']} (templates never "
             f"used in training), chat template, max_gen_toks {a['max_gen_toks'] or 'task default'}; "
             f"{summary['seconds']} s on {summary['host']}.", "",
             "| task | prompt | n | correct | accuracy | Wilson 95% CI | format compliance |", "|---|---|---|---|---|---|---|"]
    for t, r in summary["tasks"].items():
        prompt = "CoT" if t.endswith("_cot") else "seven-tag"
        fc = f"{r['format_compliance']:.3f}" if "format_compliance" in r else "-"
        lines.append(f"| {t} | {prompt} | {r['n']} | {r['correct']} | {r['acc']:.3f} | "
                     f"[{r['wilson95'][0]:.3f}, {r['wilson95'][1]:.3f}] | {fc} |")
    lines += ["", "Per held-out template (correct / n):", ""]
    for t, r in summary["tasks"].items():
        lines.append(f"- {t}: " + ", ".join(f"{k} {v}" for k, v in r["per_template"].items()))
    lines += ["", "First responses (truncated):", ""]
    for t, r in summary["tasks"].items():
        for ex in r["examples"][:2]:
            resp = ex["response"][:300].replace("\n", " ").replace("|", "/")
            lines.append(f"- {t}, gold {ex['answer']}, acc {ex['acc']}: {resp}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="r3bench/smollm2-135m-instruct")
    ap.add_argument("--tier", type=int, default=1, choices=(1, 2, 3))
    ap.add_argument("--limit", type=int, default=60, help="problems per task (>= 50 for a usable interval)")
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--max_gen_toks", type=int, default=0, help="0 = the task's own (384 for tiers 1-2)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="studies/results/curriculum")
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(a.threads)
    tasks = [f"r3_procgen_t{a.tier}", f"r3_procgen_t{a.tier}_cot"]
    t0 = time.time()
    res = score(a.model, tasks, a.limit, a.batch_size, a.max_gen_toks or None)
    summary = {"args": vars(a), "seconds": round(time.time() - t0, 1),
               "host": f"{platform.machine()} CPU, {a.threads} threads", "tasks": summarise(res, tasks)}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    with open(out / "samples.jsonl", "w", encoding="utf-8") as fh:
        for t in tasks:
            for s in res["samples"][t]:
                fh.write(json.dumps({"task": t, "doc_id": s["doc_id"], "id": s["doc"]["id"],
                                     "question": s["doc"]["question"], "answer": s["doc"]["answer"],
                                     "response": s["filtered_resps"][0] if s["filtered_resps"] else "",
                                     "acc": s["acc"]}, ensure_ascii=False) + "\n")
    (out / "summary.md").write_text(markdown(summary))
    print(markdown(summary))


if __name__ == "__main__":
    main()
