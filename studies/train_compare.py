"""Held-out procgen accuracy of CoT, SFT, DPO and SFT+stepfix on SmolLM2, and trainer throughput.

    python studies/train_compare.py --out studies/results/train_compare [--sft_steps 60 ...]

Every model is scored by the same lm-eval call (trainers.core.evaluation.evaluate_model: r3_procgen, the
held-out test split of the procedural bank, chat template, greedy) with the same --limit. The
trainers run through their Python API with the configs written to OUT/<method>/run.json. Per-step
seconds and the shares of generation / verification / forward / backward come from the stepfix
and GRPO runs' own metrics.jsonl (4 problems per step for both: stepfix samples y1 and y2 per
problem, GRPO 2 completions per problem). Writes OUT/summary.json and OUT/summary.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path


def _steps(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if "loss" in d and "eval" not in d:
            out.append(d)
    return out


def throughput(run: Path, keys: tuple[str, ...]) -> dict:
    steps = _steps(run / "metrics.jsonl")[1:] or _steps(run / "metrics.jsonl")  # drop the warm-up step
    tot = [sum(float(s.get(f"time_{k}_s", 0)) for k in keys) for s in steps]
    res = {"steps_measured": len(steps), "sec_per_step": statistics.mean(tot) if tot else None}
    for k in keys:
        v = sum(float(s.get(f"time_{k}_s", 0)) for s in steps)
        res[f"share_{k}"] = v / sum(tot) if sum(tot) else None
    return res


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="studies/results/train_compare")
    ap.add_argument("--model", default="r3bench/smollm2-135m-instruct")
    ap.add_argument("--eval_limit", type=int, default=30)
    ap.add_argument("--eval_max_gen_toks", type=int, default=400)
    ap.add_argument("--sft_steps", type=int, default=60)
    ap.add_argument("--dpo_steps", type=int, default=20)
    ap.add_argument("--stepfix_steps", type=int, default=10)
    ap.add_argument("--grpo_steps", type=int, default=3)
    ap.add_argument("--gen_tokens", type=int, default=0, help="max new tokens of stepfix/GRPO samples (0 = eval_max_gen_toks)")
    ap.add_argument("--only", default="cot_prompt,cot,sft,dpo,stepfix,grpo")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    only = set(a.only.split(","))
    from trainers import dpo, grpo, sft, stepfix
    from trainers.core.config import make
    from trainers.core.evaluation import evaluate_model
    from trainers.core.model import load_tokenizer, model_path
    from trainers.core.records import versions, write_run

    summary_path = out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {"methods": {}}
    summary.update({"model": a.model, "eval": {"task": "r3_procgen", "limit": a.eval_limit,
                                               "max_gen_toks": a.eval_max_gen_toks, "decoding": "greedy"},
                    "versions": versions()})
    data = out / "data"
    if not (data / "manifest.json").is_file():
        from r3bench.procgen.export import export
        export(data, n=2494, seed=0)
    shared = dict(model=a.model, data=str(data), eval_limit=a.eval_limit, eval_max_gen_toks=a.eval_max_gen_toks,
                  eval_tasks="r3_procgen", save_steps=10, report_to="none", max_length=768)

    def save():
        summary_path.write_text(json.dumps(summary, indent=1, default=str))

    def run(name, mod, **kw):
        cfg = make(mod.Config, output_dir=str(out / name), **shared, **kw)
        t0 = time.time()
        res = mod.train(cfg)
        write_run(cfg, status="finished", **res)
        ev = json.loads((Path(cfg.output_dir) / "eval" / f"step-{res['global_step']}.json").read_text())["summary"]
        summary["methods"][name] = {"train_seconds": round(time.time() - t0 - ev.get("seconds", 0), 1),
                                    "steps": res["global_step"], "config": {k: v for k, v in kw.items()},
                                    "eval": ev["tasks"].get("r3_procgen"), "adapter": res["adapter"]}
        save()
        return res

    for name, task in (("cot", "r3_procgen"), ("cot_prompt", "r3_procgen_cot")):
        if name not in only:
            continue
        from transformers import AutoModelForCausalLM

        path = model_path(a.model)
        tok = load_tokenizer(path)
        m = AutoModelForCausalLM.from_pretrained(path)
        cfg = make(sft.Config, output_dir=str(out / name), **{**shared, "eval_tasks": task})
        ev = evaluate_model(m, tok, cfg, tag="base")
        summary["methods"][name] = {"train_seconds": 0, "steps": 0, "eval": ev["tasks"].get(task), "task": task}
        save()
    sft_adapter = str(out / "sft" / "final")
    if "sft" in only:
        run("sft", sft, max_steps=a.sft_steps, batch_size=4, learning_rate=2e-4, warmup_steps=5)
    if "dpo" in only:
        run("dpo", dpo, max_steps=a.dpo_steps, batch_size=2, grad_accum=2, learning_rate=5e-5, beta=0.1,
            init_adapter=sft_adapter)
    if "stepfix" in only:
        run("stepfix", stepfix, max_steps=a.stepfix_steps, batch_size=4, learning_rate=5e-5,
            init_adapter=sft_adapter, max_new_tokens=a.gen_tokens or a.eval_max_gen_toks, temperature=0.7)
        summary["throughput_stepfix"] = throughput(out / "stepfix", ("generate", "verify", "feedback", "forward", "ref_forward", "backward"))
        save()
    if "grpo" in only:
        cfg = make(grpo.Config, output_dir=str(out / "grpo"), **{**shared, "eval_tasks": ""},
                          max_steps=a.grpo_steps, batch_size=8, group_size=2, rewards="position",
                          init_adapter=sft_adapter, max_completion_length=a.gen_tokens or a.eval_max_gen_toks,
                          temperature=0.7)
        grpo.train(cfg)
        summary["throughput_grpo"] = throughput(out / "grpo", ("generate", "verify", "rest"))
        save()
    lines = ["| method | train steps | train s | r3_procgen acc | format compliance | n |", "|---|---|---|---|---|---|"]
    labels = {"cot": "base model, seven-tag prompt", "cot_prompt": "CoT (base model, CoT prompt: r3_procgen_cot)",
              "sft": "SFT", "dpo": "DPO (IPO) from SFT", "stepfix": "SFT + stepfix"}
    for name in ("cot_prompt", "cot", "sft", "dpo", "stepfix"):
        m = summary["methods"].get(name)
        if m and m.get("eval"):
            e = m["eval"]
            lines.append(f"| {labels[name]} | {m['steps']} | {m['train_seconds']} | {e.get('acc')} | "
                         f"{e.get('format_compliance', '-')} | {e.get('n')} |")
    for k in ("throughput_stepfix", "throughput_grpo"):
        if k in summary:
            lines.append("")
            lines.append(f"{k}: " + ", ".join(f"{a_}={v:.3g}" if isinstance(v, float) else f"{a_}={v}"
                                               for a_, v in summary[k].items()))
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
