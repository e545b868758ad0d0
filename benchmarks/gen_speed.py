"""Issue 51 item 2: sampling speed of the RL trainers' generation backends on this CPU, side by side in one
run, on the same prompts and the same policy (SmolLM2-135M-Instruct + the committed SFT start adapter).

    python benchmarks/gen_speed.py                          # batch 4 and 8, 400 new tokens, 2 rounds
    python benchmarks/gen_speed.py --batches 4 --rounds 1 --variants peft_fp32,merged_bf16

The prompts are the stepfix pool's own first attempts (y1: the problem as the trainer's user chat) and
revisions (y2: the problem, a first attempt and the revision request, so prompts of ~1,000 tokens, as in a
stepfix step). Every variant runs `trainers.generation.HFGenerator.generate` as the trainers do (sampled,
temperature 0.7, the call's seed), in rounds with the variants' order alternating, so drift in the
machine's speed falls on all of them. tokens/s = generated tokens (up to and including the end of turn)
/ wall seconds of the call. Variants:

* peft_fp32      the policy as it trains: a peft model with its LoRA unmerged, fp32 (main before this issue)
* merged_fp32    a copy of the policy with the LoRA merged into its weights, fp32
* merged_bf16    that copy in bfloat16 (this CPU has AMX-BF16; the trainers' `rollout_dtype: bfloat16`)
* peft_bf16      the policy as it trains with `bf16: true`: a bf16 base with its LoRA unmerged (peft keeps the
                 LoRA factors in fp32)
* static_*       the same with a static KV cache (preallocated; transformers' cache_implementation="static")

Writes benchmarks/results/gen_speed/summary.json and summary.md, with the load average of the run.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "gen_speed"
START = ROOT / "results" / "learning" / "sft_start"
VARIANTS = ("peft_fp32", "merged_fp32", "merged_bf16", "peft_bf16", "static_merged_fp32", "static_merged_bf16")


def prompts(n: int) -> tuple[list, list]:
    """(y1 chats, y2 chats) of the stepfix pool's first n problems: y2's first attempt is the pool's
    reference solution (a stand-in of the policy's own y1, of about its length)."""
    from trainers import stepfix
    from trainers.core.data import user_chat

    cfg = stepfix.Config()
    data, _ = stepfix.dataset(cfg, log=lambda *a: None)
    rows = [data[i] for i in range(min(n, len(data)))]
    y1 = [user_chat(r["prompt"]) for r in rows]
    y2 = [user_chat(r["prompt"]) + [{"role": "assistant", "content": r["reference"]},
                                    {"role": "user", "content": "Step 3 has a calculation error: recompute it.\n\n"
                                                                + cfg.revise_instruction}] for r in rows]
    return y1, y2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="4,8")
    ap.add_argument("--max_new_tokens", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    import torch
    from peft import PeftModel

    from r3bench.core import models
    from trainers.core.model import load_base, load_tokenizer, model_path
    from trainers.generation import HFGenerator, Sampling

    torch.set_num_threads(a.threads)
    base = model_path("r3bench/smollm2-135m-instruct")
    tok = load_tokenizer(base)
    batches = [int(b) for b in a.batches.split(",")]
    y1, y2 = prompts(max(batches))
    variants = a.variants.split(",")
    with tempfile.TemporaryDirectory(prefix="r3gen-") as tmp:
        adapter = str(models.adapter_from_parts(START, Path(tmp) / "sft_start"))
        policy = PeftModel.from_pretrained(load_base(base), adapter, is_trainable=True)
        merged = PeftModel.from_pretrained(load_base(base), adapter).merge_and_unload().eval()
        merged_bf16 = PeftModel.from_pretrained(load_base(base), adapter).merge_and_unload().eval().to(torch.bfloat16)
        peft_bf16 = PeftModel.from_pretrained(load_base(base).to(torch.bfloat16), adapter, is_trainable=True)
    models_ = {"peft_fp32": policy, "merged_fp32": merged, "merged_bf16": merged_bf16, "peft_bf16": peft_bf16,
               "static_merged_fp32": merged, "static_merged_bf16": merged_bf16}
    rows = []
    load0 = os.getloadavg()[0]
    for rnd in range(a.rounds):
        for b in batches:
            order = variants if rnd % 2 == 0 else variants[::-1]
            for kind, chats in (("y1", y1[:b]), ("y2", y2[:b])):
                for v in order:
                    gen = HFGenerator(cache_implementation="static" if v.startswith("static") else None)
                    sp = Sampling(max_new_tokens=a.max_new_tokens, temperature=0.7, seed=1000 * rnd + b)
                    t0 = time.perf_counter()
                    out = gen.generate(models_[v], tok, chats, sp)
                    dt = time.perf_counter() - t0
                    n = sum(len(o) for o in out)
                    rows.append({"round": rnd, "batch": b, "prompts": kind, "variant": v, "tokens": n,
                                 "longest": max(len(o) for o in out), "seconds": round(dt, 2),
                                 "tokens_per_s": round(n / dt, 1)})
                    print(json.dumps(rows[-1]), flush=True)
    load1 = os.getloadavg()[0]
    table = {}
    for r in rows:
        table.setdefault((r["batch"], r["prompts"], r["variant"]), []).append(r)
    summary = []
    for (b, kind, v), rs in table.items():
        tok_s = sum(r["tokens"] for r in rs) / sum(r["seconds"] for r in rs)
        summary.append({"batch": b, "prompts": kind, "variant": v, "calls": len(rs), "tokens_per_s": round(tok_s, 1),
                        "per_call": [r["tokens_per_s"] for r in rs]})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    meta = {"command": "python benchmarks/gen_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{os.cpu_count()} CPUs, torch {torch.__version__} threads {a.threads}",
            "load_avg_1min": [round(load0, 2), round(load1, 2)]}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"meta": meta, "summary": summary, "calls": rows}, indent=1) + "\n")
    lines = ["# Generation speed of the RL trainers' sampling backends", "",
             f"`{meta['command']}` at {commit}, {meta['date']}; {meta['machine']}; load average {meta['load_avg_1min']}.",
             "SmolLM2-135M-Instruct + the SFT start adapter, sampled (temperature 0.7), up to "
             f"{a.max_new_tokens} new tokens; the stepfix pool's first attempts (y1) and revision prompts (y2).",
             "tokens/s over all calls of a cell (rounds alternate the variants' order); per call in brackets.", "",
             "| batch | prompts | " + " | ".join(variants) + " |", "|---|---|" + "---|" * len(variants)]
    for b in batches:
        for kind in ("y1", "y2"):
            cells = {s["variant"]: s for s in summary if s["batch"] == b and s["prompts"] == kind}
            ref = cells.get(variants[0], {}).get("tokens_per_s") or 1
            lines.append(f"| {b} | {kind} | " + " | ".join(
                f"{cells[v]['tokens_per_s']} ({cells[v]['tokens_per_s'] / ref:.2f}x)" if v in cells else "-"
                for v in variants) + " |")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
