"""GPU smoke check of the distributed / full-fine-tuning / vLLM paths, for when a GPU machine is lent.

    PYTHONPATH=. python studies/gpu_smoke_dist.py --out $OUT/gpu_smoke    # < 5 min on one H100

On the tiny random model (built here; no hub), each case a short subprocess, its exit status, wall
time and the last lines of its output written to OUT/summary.json:

1. stepfix and GRPO, 2 steps, bf16 on cuda:0, LoRA and `lora: false` (full fine-tuning, reference copy);
2. with 2+ GPUs: `torchrun --nproc_per_node 2` of stepfix (NCCL; rank 1 all skipped in step 1, the
   doubles of tests/trainers/dist_doubles.py) - the case that hung under NCCL before;
   and the same with rank 1's judge budget spent in step 2 (the JUDGE BUDGET HOOK): both ranks exit 3;
3. with vllm importable: stepfix with `use_vllm: true` (colocate; the weight sync after each
   optimizer step is the real vLLM's load_weights, the CPU tests only ran it against a double), two
   micro-batches per generation (`grad_accum 2`, `steps_per_generation 2`).

Missing pieces (one GPU, no vllm, no trl) are reported as skipped with the reason, never as passed.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def case(name, cmd, env, results, timeout=300, check=None):
    """Run `cmd`; its result is rc 0, or with `check(rc, output)` given, 0 when check says True."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
        rc, tail = p.returncode, (p.stdout + p.stderr)[-2500:]
        if check is not None:
            rc = 0 if check(p.returncode, p.stdout + p.stderr) else f"check failed (rc {p.returncode})"
    except subprocess.TimeoutExpired as e:
        rc, tail = "timeout", str(e)[-500:]
    results[name] = {"rc": rc, "seconds": round(time.perf_counter() - t0, 1), "tail": tail}
    print(name, rc, results[name]["seconds"], flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="studies/results/gpu_smoke_dist")
    a = ap.parse_args(argv)
    import torch

    from r3bench.core import models
    from r3bench.procgen.export import export

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gpu_smoke_"))
    tiny, data = models.build_tiny(work / "tiny"), work / "data"
    export(data, n=40, seed=1, log=lambda *x: None)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    results: dict = {"cuda": torch.cuda.is_available(), "gpus": torch.cuda.device_count(),
                     "vllm": importlib.util.find_spec("vllm") is not None}
    base = ["--model", str(tiny), "--data", str(data), "--max_steps", "2", "--batch_size", "2", "--report_to", "none",
            "--save_steps", "10", "--bf16", "auto", "--max_train_samples", "4"]
    for lora in ("true", "false"):
        case(f"stepfix_lora_{lora}", [sys.executable, "tests/trainers/dist_doubles.py", "stepfix", *base, "--lora", lora,
                                      "--output_dir", str(work / f"sf-{lora}")], env, results)
        case(f"grpo_lora_{lora}", [sys.executable, "tests/trainers/dist_doubles.py", "grpo", *base, "--lora", lora,
                                   "--group_size", "2", "--rewards", "length", "--output_dir", str(work / f"g-{lora}")],
             env, results)
    if results["gpus"] >= 2:
        case("stepfix_torchrun_2gpu_nccl", [sys.executable, "-m", "torch.distributed.run", "--standalone",
                                            "--nproc_per_node", "2", "tests/trainers/dist_doubles.py", "stepfix", *base,
                                            "--output_dir", str(work / "sf-ddp")], env, results)
        # rank 1's judge budget spent in step 2 (the JUDGE BUDGET HOOK): both ranks must exit 3, none hang in NCCL
        case("stepfix_torchrun_2gpu_nccl_judge_budget",
             [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
              "tests/trainers/dist_doubles.py", "stepfix", *base, "--max_steps", "3", "--output_dir", str(work / "sf-budget")],
             dict(env, R3_BUDGET_RANK="1", R3_BUDGET_STEP="2"), results, timeout=240,
             check=lambda rc, log: sorted(re.findall(r"exitcode\s*:\s*(-?\d+) \(pid", log)) == ["3", "3"])
    else:
        for name in ("stepfix_torchrun_2gpu_nccl", "stepfix_torchrun_2gpu_nccl_judge_budget"):
            results[name] = {"rc": "skipped", "tail": f"{results['gpus']} GPU(s)"}
    if results["vllm"]:
        case("stepfix_vllm_colocate", [sys.executable, "-m", "trainers.stepfix", *base, "--use_vllm", "true",
                                       "--max_new_tokens", "16", "--vllm_gpu_memory_utilization", "0.2",
                                       "--grad_accum", "2", "--steps_per_generation", "2",
                                       "--output_dir", str(work / "sf-vllm")], env, results, timeout=420)
    else:
        results["stepfix_vllm_colocate"] = {"rc": "skipped", "tail": "vllm not importable"}
    (out / "summary.json").write_text(json.dumps(results, indent=1))
    bad = [k for k, v in results.items() if isinstance(v, dict) and v["rc"] not in (0, "skipped")]
    print("failed:" if bad else "ok", bad)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
