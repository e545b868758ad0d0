"""Peak resident memory of one LoRA forward+backward of SmolLM2 under glibc's malloc settings.

    python benchmarks/malloc_peak.py [--batch 4] [--tokens 1300] [--thresholds 0,1048576] [--repeats 2]

Why: every trainer but PSV peaked at 9-16 GB resident for a 135M-parameter model
(benchmarks/results/throughput), far above its tensors. The suspect is glibc's dynamic mmap threshold:
after the first large frees it rises to 32 MiB, so activation buffers below that come from the heap and
stay resident after they are freed. trainers.core.memory.set_mmap_threshold (the trainers' option
`malloc_mmap_threshold`, default 1 MiB) fixes the threshold instead.

Each measurement runs in a fresh process (its ru_maxrss is its own): the model with LoRA r 16 on all
linear layers, training mode, gradient checkpointing (non-reentrant), `--batch` random sequences of
`--tokens` tokens (the length of a stepfix revision context), loss = the causal LM loss over every
position (the SFT trainer's path, full logits), backward. Threshold 0 = glibc's default. The settings
alternate (A B A B ...) so that a change in the machine's load hits both. Writes OUT/summary.json and
OUT/summary.md.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child(a) -> dict:
    import torch

    from trainers.core.memory import set_mmap_threshold

    applied = set_mmap_threshold(a.threshold) if a.threshold > 0 else False
    torch.set_num_threads(a.threads)
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from r3bench.core import models

    path = str(models.resolve(a.model)) if models.is_short_name(a.model) else a.model
    m = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    m = get_peft_model(m, LoraConfig(r=16, target_modules="all-linear", task_type="CAUSAL_LM"))
    m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    m.enable_input_require_grads()
    m.train()
    rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # noqa: E731
    loaded = rss()
    torch.manual_seed(0)
    ids = torch.randint(100, 20000, (a.batch, a.tokens))
    t0 = time.perf_counter()
    out = m(input_ids=ids, attention_mask=torch.ones_like(ids), labels=ids)
    after_fwd = rss()
    out.loss.backward()
    return {"threshold": a.threshold, "applied": applied, "loaded_gb": round(loaded, 2),
            "forward_peak_gb": round(after_fwd, 2), "peak_gb": round(rss(), 2),
            "seconds": round(time.perf_counter() - t0, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="r3bench/smollm2-135m-instruct")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=1300)
    ap.add_argument("--thresholds", default="0,1048576", help="bytes; 0 = glibc's dynamic default")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "memory"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threshold", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print("RESULT " + json.dumps(child(a)), flush=True)
        return 0
    rows = []
    ths = [int(x) for x in a.thresholds.split(",")]
    for rep in range(a.repeats):
        for th in ths:
            load0 = os.getloadavg()[0]
            cmd = [sys.executable, __file__, "--child", "--threshold", str(th), "--model", a.model, "--batch",
                   str(a.batch), "--tokens", str(a.tokens), "--threads", str(a.threads)]
            env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
            line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
            row = json.loads(line[7:]) if line else {"threshold": th, "error": (p.stderr or "")[-800:]}
            row.update(repeat=rep, load_before=round(load0, 2), load_after=round(os.getloadavg()[0], 2))
            rows.append(row)
            print(json.dumps(row), flush=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    git = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=10", "HEAD"], capture_output=True, text=True)
    meta = {"command": "python benchmarks/malloc_peak.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "commit": git.stdout.strip(), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "batch": a.batch, "tokens": a.tokens, "threads": a.threads, "cpus": os.cpu_count()}
    (out / "summary.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    lines = ["# Peak memory of a LoRA forward+backward under glibc malloc settings", "",
             f"`{meta['command']}` at {meta['commit']}, {meta['when']}; SmolLM2-135M, LoRA r16 all-linear, "
             f"gradient checkpointing, batch {a.batch} x {a.tokens} tokens, {a.threads} torch thread(s) on "
             f"{meta['cpus']} CPUs (load average before/after each run in the table; the CPU may be shared).", "",
             "| mmap threshold | runs | peak RSS GB (each) | after forward GB | seconds (each) | load before/after |",
             "|---|---|---|---|---|---|"]
    for th in ths:
        rs = [r for r in rows if r["threshold"] == th and "peak_gb" in r]
        bad = [r for r in rows if r["threshold"] == th and "error" in r]
        name = "glibc default (dynamic)" if th == 0 else f"{th} bytes ({th / 2**20:g} MiB)"
        if rs:
            loads = ", ".join(f"{r['load_before']}/{r['load_after']}" for r in rs)
            lines.append(f"| {name} | {len(rs)} | {' / '.join(str(r['peak_gb']) for r in rs)} | "
                         f"{' / '.join(str(r['forward_peak_gb']) for r in rs)} | "
                         f"{' / '.join(str(r['seconds']) for r in rs)} | "
                         f"{loads} |")
        for r in bad:
            lines.append(f"| {name} | failed | {r['error'][-200:].replace('|', '/').replace(chr(10), ' ')} | | | |")
    if all(any(r["threshold"] == th and "peak_gb" in r for r in rows) for th in ths) and len(ths) == 2:
        pk = {th: statistics.median(r["peak_gb"] for r in rows if r["threshold"] == th and "peak_gb" in r) for th in ths}
        sec = {th: statistics.median(r["seconds"] for r in rows if r["threshold"] == th and "seconds" in r) for th in ths}
        lines += ["", f"Median peak: {pk[ths[0]]:.2f} GB -> {pk[ths[1]]:.2f} GB; median seconds {sec[ths[0]]:.1f} -> "
                  f"{sec[ths[1]]:.1f} (ratio {sec[ths[1]] / sec[ths[0]]:.2f})."]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out / 'summary.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
