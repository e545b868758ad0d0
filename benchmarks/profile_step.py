"""Issue 51 item 1: where an RL step's time goes on this machine, phase by phase, for stepfix, GRPO and DPO
at the README's example configs (trainers/configs/*.yaml), so that every later speed change is measured
against it.

    python benchmarks/profile_step.py                    # stepfix, grpo, dpo: 2 steps each (~20 min on 2 cores)
    python benchmarks/profile_step.py --trainers stepfix --steps 1

Each trainer runs as a user runs it (`python -m trainers.X --config`), from the committed SFT start
(results/learning/sft_start: it writes the seven-tag format, so stepfix revises and GRPO's rewards vary),
on the trainer's own default data, with the example config's batch, cap and settings; no evaluation, no
checkpoint. The phases are the trainers' own timers in metrics.jsonl (stepfix: generate, verify, feedback,
forward, ref_forward, backward; GRPO: generate, verify, rest), the whole step from the Trainer's
`train_runtime`, and generated tokens per second (stepfix: its y1/y2 token counts; GRPO: TRL's mean
completion length x completions). Writes benchmarks/results/profile/summary.json and summary.md, with
the command, the machine and the load average during the runs (a loaded machine says so).
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

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "profile"
START = ROOT / "results" / "learning" / "sft_start"
PHASES = {"stepfix": ("generate", "verify", "feedback", "forward", "ref_forward", "backward"),
          "grpo": ("generate", "verify", "rest"), "dpo": ()}


def config(trainer: str, steps: int, out: Path, start: str) -> dict:
    cfg = yaml.safe_load((ROOT / "trainers" / "configs" / f"{trainer}.yaml").read_text())
    cfg.update(max_steps=steps, output_dir=str(out), init_adapter=start, report_to="none", eval_tasks="",
               save_steps=10_000, logging_steps=1)
    if trainer in ("stepfix", "grpo"):
        cfg["start_check_n"] = 0  # a one-off check before the first step: not a step's time
    return cfg


def summarise(trainer: str, run_dir: Path, wall: float, load: tuple) -> dict:
    recs = [json.loads(x) for x in (run_dir / "metrics.jsonl").read_text().splitlines() if x.strip()]
    steps = [r for r in recs if "loss" in r]
    end = next((r for r in reversed(recs) if "train_runtime" in r), {})
    row = {"trainer": trainer, "steps": len(steps), "wall_s": round(wall, 1),
           "train_runtime_s": end.get("train_runtime"), "load_avg_1min": load}
    if steps and end.get("train_runtime"):
        row["step_s"] = round(float(end["train_runtime"]) / len(steps), 1)
    for ph in PHASES[trainer]:
        vals = [float(r[f"time_{ph}_s"]) for r in steps if f"time_{ph}_s" in r]
        if vals:
            row[f"{ph}_s"] = round(sum(vals) / len(vals), 2)
    if trainer == "stepfix":
        toks = sum(int(r.get("y1_tokens", 0)) + int(r.get("y2_tokens", 0)) for r in steps)
        gen = sum(float(r.get("time_generate_s", 0)) for r in steps)
        row["gen_tokens_per_step"] = round(toks / max(1, len(steps)), 1)
        row["gen_tokens_per_s"] = round(toks / gen, 1) if gen else None
        row["truncated_frac"] = round(sum(int(r.get("truncated", 0)) for r in steps)
                                      / max(1, sum(int(r.get("y1_generated", 0)) + int(r.get("y2_generated", 0))
                                                   for r in steps)), 3)
    if trainer == "grpo":
        n = [float(r.get("completions/mean_length", 0)) * 8 for r in steps]  # the example config's 8 completions
        gen = sum(float(r.get("time_generate_s", 0)) for r in steps)
        row["gen_tokens_per_step"] = round(sum(n) / max(1, len(n)), 1)
        row["gen_tokens_per_s"] = round(sum(n) / gen, 1) if gen else None
        row["truncated_frac"] = round(sum(float(r.get("completions/clipped_ratio", 0)) for r in steps)
                                      / max(1, len(steps)), 3)
    return row


def markdown(rows: list[dict], meta: dict) -> str:
    lines = ["# Where an RL step's time goes (issue 51 item 1)", "",
             f"`{meta['command']}` at commit {meta['commit']}, {meta['date']}; {meta['machine']}.",
             "Each trainer from the committed SFT start with the README's example config (trainers/configs/), "
             "no evaluation or checkpoint. Seconds per optimizer step, the mean over the steps run; "
             "load average (1 min) before and after each run in the last column.", ""]
    for r in rows:
        ph = [k[:-2] for k in r if k.endswith("_s") and k[:-2] in PHASES[r["trainer"]]]
        tot = sum(r[f"{p}_s"] for p in ph) or 1.0
        lines.append(f"## {r['trainer']}: {r.get('step_s', '-')} s a step ({r['steps']} steps; load {r['load_avg_1min']})")
        lines.append("")
        if ph:
            lines += ["| phase | s a step | share |", "|---|---|---|"]
            lines += [f"| {p} | {r[f'{p}_s']:.1f} | {r[f'{p}_s'] / tot:.0%} |" for p in ph]
            lines.append("")
        if r.get("gen_tokens_per_step") is not None:
            lines.append(f"Generated {r['gen_tokens_per_step']:.0f} tokens a step at {r['gen_tokens_per_s']} tokens/s "
                         f"in the generation phase; {r['truncated_frac']:.0%} of the samples hit the cap.")
            lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainers", default="stepfix,grpo,dpo")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from r3bench.core import models

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="r3profile-") as tmp:
        start = str(models.adapter_from_parts(START, Path(tmp) / "sft_start"))
        for t in a.trainers.split(","):
            run = Path(tmp) / t
            cfg_file = Path(tmp) / f"{t}.yaml"
            cfg_file.write_text(yaml.safe_dump(config(t, a.steps, run, start)))
            env = {**os.environ, "OMP_NUM_THREADS": str(a.threads), "TOKENIZERS_PARALLELISM": "false"}
            print(f"[profile] {t}: {a.steps} steps", flush=True)
            l0, t0 = os.getloadavg()[0], time.time()
            p = subprocess.run([sys.executable, "-m", f"trainers.{t}", "--config", str(cfg_file)], cwd=ROOT, env=env,
                               capture_output=True, text=True)
            wall, l1 = time.time() - t0, os.getloadavg()[0]
            if p.returncode != 0:
                print(p.stdout[-2000:], p.stderr[-3000:], file=sys.stderr)
                rows.append({"trainer": t, "error": f"exit {p.returncode}", "steps": 0})
                continue
            rows.append(summarise(t, run, wall, (round(l0, 2), round(l1, 2))))
            print(json.dumps(rows[-1]), flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    meta = {"command": "python benchmarks/profile_step.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "commit": commit, "date": time.strftime("%Y-%m-%d"),
            "machine": f"{os.cpu_count()} CPUs, torch threads {a.threads}"}
    (out / "summary.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    (out / "summary.md").write_text(markdown([r for r in rows if "error" not in r], meta) + "\n")
    print((out / "summary.md").read_text())
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
