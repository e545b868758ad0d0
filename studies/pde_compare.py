"""SmolLM2 on r3_pde before and after a short SFT on the solver bank (seen vs held-out families).

    OMP_NUM_THREADS=1 python studies/pde_compare.py [--per_family 1] [--sft_steps 10]

Steps: (1) lm-eval r3_pde_seen + r3_pde_heldout on the base model (chat template, greedy);
(2) `python -m r3bench.pde export` and `trainers.sft` for `--sft_steps` LoRA steps; (3) the same
evaluation with the adapter. Writes studies/results/pde/smollm2_compare.{json,md} after every
phase. CPU-sized: `--per_family 1` is one prompt per family (6 seen, 3 held-out), each scored on its
3 hidden instances; `--adapter DIR` reuses an SFT adapter, `--skip_before` skips the base model.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "pde"


def evaluate(model_path, peft, per_family, max_gen_toks, batch_size):
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    kw = {"peft": peft} if peft else {}
    lm = HFLM(pretrained=str(model_path), device="cpu", batch_size=batch_size, **kw)
    rows = {}
    for task in ("r3_pde_seen", "r3_pde_heldout"):
        t0 = time.time()
        res = simple_evaluate(model=lm, tasks=[task], task_manager=TaskManager(metadata={"per_family": per_family}),
                              bootstrap_iters=0, apply_chat_template=True, log_samples=True,
                              gen_kwargs=f"max_gen_toks={max_gen_toks}")
        r = res["results"][task]
        out = {"validity": r["validity,none"], "pass_at_1": r["pass_at_1,none"], "median_nrmse": r["nrmse,none"],
               "reward": r["reward,none"], "prompts": res["n-samples"][task]["effective"],
               "seconds": round(time.time() - t0, 1)}
        reasons = [s.get("invalid_reasons", "") for s in res["samples"][task]]
        out["reasons"] = sorted({x.split(";")[0][:160] for x in reasons if x})
        out["has_code_block"] = sum(1 for s in res["samples"][task] if "```" in (s["resps"][0][0] or "")) / max(
            1, len(res["samples"][task]))
        rows[task] = out
    return rows


def evaluate_sc(model_path, peft, per_family, max_gen_toks, batch_size):
    """r3_pde_sc: 8 sampled programs per prompt (temperature 0.7), all nine families: pass@1, pass@8
    (unbiased estimator), median best-of-8 nRMSE, per seen / held-out family group."""
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from r3bench.pde.families import HELD_OUT

    kw = {"peft": peft} if peft else {}
    lm = HFLM(pretrained=str(model_path), device="cpu", batch_size=batch_size, **kw)
    t0 = time.time()
    res = simple_evaluate(model=lm, tasks=["r3_pde_sc"], task_manager=TaskManager(metadata={"per_family": per_family}),
                          bootstrap_iters=0, apply_chat_template=True, log_samples=True,
                          gen_kwargs=f"max_gen_toks={max_gen_toks}")
    rows = {}
    for group in ("seen", "heldout"):
        ss = [s for s in res["samples"]["r3_pde_sc"] if (s["doc"]["family"] in HELD_OUT) == (group == "heldout")]
        if not ss:
            continue
        import statistics
        rows[f"r3_pde_sc ({group})"] = {
            "prompts": len(ss), "validity": statistics.mean(s["validity"] for s in ss),
            "pass_at_1": statistics.mean(s["pass_at_1"] for s in ss), "pass_at_8": statistics.mean(s["pass_at_8"] for s in ss),
            "median_best_nrmse": statistics.median(s["best_nrmse"] for s in ss)}
    rows["seconds"] = round(time.time() - t0, 1)
    return rows


def table(record, args) -> str:
    lines = [f"# {args.model} on r3_pde, before and after {args.sft_steps} SFT steps on the bank", "",
             f"{args.per_family} prompt(s) per family, 3 hidden instances each; greedy decoding with the chat "
             f"template, max_gen_toks {args.max_gen_toks}; success = valid and nRMSE (RMSE / reference range) "
             "<= 0.01; nRMSE of invalid programs = 1.", "",
             "| model | task | prompts | validity | pass@1 | median nRMSE | mean reward | has ``` block |",
             "|---|---|--:|--:|--:|--:|--:|--:|"]
    for when in ("before", "after"):
        for task, r in record.get(when, {}).items():
            lines.append(f"| {'base' if when == 'before' else 'SFT'} | {task} | {r['prompts']} | {r['validity']:.2f} | "
                         f"{r['pass_at_1']:.2f} | {r['median_nrmse']:.3g} | {r['reward']:.3f} | "
                         f"{r['has_code_block']:.2f} |")
    if record.get("sc_before") or record.get("sc_after"):
        lines += ["", "Sampled (r3_pde_sc: 8 programs per prompt, temperature 0.7; pass@k by the unbiased estimator):", "",
                  "| model | families | prompts | validity | pass@1 | pass@8 | median best-of-8 nRMSE |",
                  "|---|---|--:|--:|--:|--:|--:|"]
        for when in ("sc_before", "sc_after"):
            for task, r in record.get(when, {}).items():
                if task == "seconds":
                    continue
                lines.append(f"| {'base' if when == 'sc_before' else 'SFT'} | {task} | {r['prompts']} | {r['validity']:.2f} | "
                             f"{r['pass_at_1']:.3f} | {r['pass_at_8']:.3f} | {r['median_best_nrmse']:.3g} |")
    lines += ["", "Invalid-program reasons seen:", ""]
    for when in ("before", "after"):
        for task, r in record.get(when, {}).items():
            for why in r["reasons"]:
                lines.append(f"- {when} / {task}: {why}")
    lines += ["", f"SFT {record.get('sft_seconds', '-')} s; total {record['total_seconds']} s on CPU "
              f"(OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')})."]
    if not (record.get("sc_before") or record.get("sc_after")):
        lines.append("pass@8 (r3_pde_sc) was not measured in this run (`--sc`).")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="r3bench/smollm2-135m-instruct")
    ap.add_argument("--per_family", type=int, default=1)
    ap.add_argument("--sft_steps", type=int, default=10)
    ap.add_argument("--sft_per_family", type=int, default=4)
    ap.add_argument("--max_gen_toks", type=int, default=512)
    ap.add_argument("--batch_size", type=int, default=7)
    ap.add_argument("--work", default="runs/pde_compare")
    ap.add_argument("--adapter", default="", help="evaluate this SFT adapter instead of training one")
    ap.add_argument("--skip_before", action="store_true", help="do not evaluate the base model")
    ap.add_argument("--out", default=str(OUT), help="where smollm2_compare.{json,md} go")
    ap.add_argument("--sc", action="store_true", help="also r3_pde_sc (8 samples per prompt: pass@8) before and after")
    args = ap.parse_args(argv)
    out_dir = Path(args.out)

    from r3bench.core import models
    from r3bench.pde.tasks import export
    from trainers import sft
    from trainers.core.config import make

    base = models.resolve(args.model) if models.is_short_name(args.model) else Path(args.model)
    work = Path(args.work)
    t0 = time.time()
    record = {"model": args.model, "per_family": args.per_family, "sft_steps": args.sft_steps,
              "max_gen_toks": args.max_gen_toks, "decoding": "greedy, chat template"}
    out_dir.mkdir(parents=True, exist_ok=True)

    def save():  # after every phase: a run cut short still leaves what it measured (json and table)
        record["total_seconds"] = round(time.time() - t0, 1)
        (out_dir / "smollm2_compare.json").write_text(json.dumps(record, indent=1))
        (out_dir / "smollm2_compare.md").write_text(table(record, args))

    prev = out_dir / "smollm2_compare.json"
    if args.skip_before and prev.is_file():  # a continuation (e.g. --sc --adapter): keep the phases measured before
        kept = json.loads(prev.read_text())
        record = {**{k: kept[k] for k in ("before", "after", "sft_seconds", "sc_before") if k in kept}, **record}
    if not args.skip_before:
        record["before"] = evaluate(base, None, args.per_family, args.max_gen_toks, args.batch_size)
        save()
    adapter = args.adapter
    if not adapter:
        export(work / "data", per_family=args.sft_per_family)
        cfg = make(sft.Config, model=str(base), data=str(work / "data"), output_dir=str(work / "sft"),
                          max_steps=args.sft_steps, batch_size=2, save_steps=max(1, args.sft_steps), eval_tasks="",
                          report_to="none", max_length=1536, seed=0, learning_rate=2e-4)
        t1 = time.time()
        sft.train(cfg)
        record["sft_seconds"] = round(time.time() - t1, 1)
        adapter = str(work / "sft" / "final")
        save()
    if "after" not in record:
        record["after"] = evaluate(base, adapter, args.per_family, args.max_gen_toks, args.batch_size)
        save()
    if args.sc:
        if "sc_before" not in record:
            record["sc_before"] = evaluate_sc(base, None, args.per_family, args.max_gen_toks, args.batch_size)
            save()
        record["sc_after"] = evaluate_sc(base, adapter, args.per_family, args.max_gen_toks, args.batch_size)
        save()
    print(table(record, args))


if __name__ == "__main__":
    main()
