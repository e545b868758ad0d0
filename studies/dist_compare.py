"""Two gloo processes vs one at the same global batch, for SFT, DPO, stepfix and GRPO on the tiny random
model: loss and weight equality, and seconds per optimizer step.

    PYTHONPATH=. python studies/dist_compare.py --out studies/results/distributed

Two processes run `torchrun --standalone --nproc_per_node 2` with batch B each; one process runs the
same module with batch 2B (OMP_NUM_THREADS=1 in both, so that each process uses one core). The
training set is cut to one global batch, so every step sees the same problems in both runs. Stepfix
and GRPO use the generation / verifier / reward doubles of tests/trainers/dist_doubles.py (random-model
sampling cannot be made independent of the batch split); in stepfix's first step rank 1's micro-batch
is all skipped. Seconds per step = HF's train_runtime / steps (the training loop only: process start,
imports and model load are left out, and are reported separately as the wall time of the command).
On a 2-core machine shared with other work the times are rough; the equality is the point.
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

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable

CASES = {  # name: (entry, per-device batch, extra flags)
    "sft": (["-m", "trainers.sft"], 2, {"max_train_samples": 4, "grad_accum": 1}),
    "dpo": (["-m", "trainers.dpo"], 2, {"max_train_samples": 4}),
    "stepfix": (["tests/trainers/dist_doubles.py", "stepfix"], 2, {"max_train_samples": 4}),
    "grpo": (["tests/trainers/dist_doubles.py", "grpo"], 2, {"max_train_samples": 2, "group_size": 2, "rewards": "length"}),
}


def run(cmd, env) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-4000:]}")
    return time.perf_counter() - t0


def metrics(out: Path):
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in rows if "loss" in r]
    end = next(r for r in rows if "train_runtime" in r)
    return losses, end["train_runtime"] / len(losses)


def max_weight_diff(a: Path, b: Path) -> float:
    from safetensors.torch import load_file

    wa, wb = load_file(str(a / "final" / "adapter_model.safetensors")), load_file(str(b / "final" / "adapter_model.safetensors"))
    return max(float((wa[k] - wb[k]).abs().max()) for k in wa)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="studies/results/distributed")
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args(argv)
    from r3bench.core import models
    from r3bench.procgen.export import export

    work = Path(tempfile.mkdtemp(prefix="dist_compare_"))
    tiny = models.build_tiny(work / "tiny")
    data = work / "data"
    export(data, n=60, seed=1, log=lambda *x: None)
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    results = {}
    for name, (entry, b, extra) in CASES.items():
        base = {"model": tiny, "data": data, "max_steps": a.steps, "save_steps": 100, "report_to": "none",
                "lora_dropout": 0.0, "learning_rate": 1e-3, "seed": 0, **extra}
        flags = lambda d: [x for k, v in d.items() for x in (f"--{k}", str(v))]  # noqa: E731
        two, one = work / f"{name}-2", work / f"{name}-1"
        w2 = run([PY, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *entry,
                  *flags({**base, "output_dir": two, "batch_size": b})], env)
        if name == "stepfix":  # the one-process run skips what the two-process run skipped
            recs = [json.loads(x) for x in (two / "stepfix_samples.jsonl").read_text().splitlines()]
            skip = work / "skip.json"
            skip.write_text(json.dumps([[r["step"], r["id"]] for r in recs if "> tau" in r.get("skip_reason", "")]))
            env1 = dict(env, R3_SKIP_FILE=str(skip))
        else:
            env1 = env
        w1 = run([PY, *entry, *flags({**base, "output_dir": one, "batch_size": 2 * b})], env1)
        l1, s1 = metrics(one)
        l2, s2 = metrics(two)
        results[name] = {"loss_1proc": l1, "loss_2proc": l2,
                         "loss_max_rel_diff": max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(l1, l2)),
                         "weight_max_abs_diff": max_weight_diff(one, two), "s_per_step_1proc": s1,
                         "s_per_step_2proc": s2, "wall_s_1proc": w1, "wall_s_2proc": w2,
                         "global_batch": 2 * b}
        print(name, json.dumps(results[name]), flush=True)
    out = REPO / a.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"steps": a.steps, "cpus": os.cpu_count(), "results": results},
                                                 indent=1))
    lines = ["# Two gloo processes vs one at the same global batch (tiny random model, CPU)", "",
             f"`PYTHONPATH=. python studies/dist_compare.py` on a {os.cpu_count()}-core machine shared with other "
             f"work; {a.steps} optimizer steps, AdamW lr 1e-3, OMP_NUM_THREADS=1 per process. Stepfix and GRPO with "
             "the generation/verifier/reward doubles of tests/trainers/dist_doubles.py (stepfix: rank 1's micro-batch all "
             "skipped in step 1). s/step: HF train_runtime / steps (the loop only); wall: the whole command.", "",
             "| trainer | global batch | loss max rel. diff | weight max abs. diff | s/step 1 proc | s/step 2 procs "
             "| wall 1 proc | wall 2 procs |", "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['global_batch']} | {r['loss_max_rel_diff']:.1e} | {r['weight_max_abs_diff']:.1e} "
                     f"| {r['s_per_step_1proc']:.2f} | {r['s_per_step_2proc']:.2f} | {r['wall_s_1proc']:.0f} s "
                     f"| {r['wall_s_2proc']:.0f} s |")
    lines += ["", "Tolerances the test asserts (tests/trainers/test_distributed.py): loss relative 1e-5, weights absolute "
              "2e-5 (2% of one AdamW step at lr 1e-3; AdamW divides a near-zero gradient by its own size, so a "
              "1e-7 difference in summation order can move such a weight by ~1e-5).", ""]
    (out / "summary.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
