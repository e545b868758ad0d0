"""One RL step before and after the speed work, side by side in one run: stepfix and GRPO at the README's
example configs (trainers/configs/*.yaml), each revision checked out in its own folder, the order of the
revisions turning each round (A B, B A, ...) so that load from elsewhere falls on both.

    python benchmarks/step_ab.py                                # A = BEFORE_REV, B = this checkout
    python benchmarks/step_ab.py --a REV --rounds 2 --trainers stepfix,grpo --arms a,b,b_fp32 --fp32_rounds 1

Arms: `a` the revision `--a` (git worktree in a temporary folder) with the example config; `b` this checkout
with the same config (its defaults decide: `bf16: auto` is bf16 autocast on a CPU with AMX-BF16, and the
rollouts come from a bf16 copy of the policy); `b_fp32` this checkout with `bf16: false` and
`rollout_dtype: policy` (fp32 throughout, sampling from the policy itself, as before; in the first
`--fp32_rounds` rounds only): its losses on the same seed are A's when nothing else changed, which separates
"the code path is the same" from "bf16 changes the numbers". Every run: the committed SFT start (results/learning/sft_start), seed 0,
`--steps` optimizer steps, no evaluation, no checkpoint, start check off. Per run: seconds a step
(train_runtime / steps), the trainers' own phase timers, the first step's loss and reward, generated tokens.
Writes benchmarks/results/step_ab/summary.json and summary.md with the load average of each run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import profile_step  # noqa: E402  (the per-phase profile's example configs and phase names)
from profile_step import PHASES, START  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "step_ab"
BEFORE_REV = "7f5ee37"  # main before the speed work (rollouts from a bf16 copy of the policy)


def config(trainer: str, steps: int, out: Path, start: str, extra: dict) -> dict:
    """profile_step's run of the example config, with seed 0 and `extra` (the arm's settings)."""
    cfg = profile_step.config(trainer, steps, out, start)
    cfg.update(seed=0, start_check_n=0, **extra)
    return cfg


def read_run(trainer: str, run: Path) -> dict:
    recs = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines() if x.strip()]
    steps = [r for r in recs if "loss" in r]
    end = next((r for r in reversed(recs) if "train_runtime" in r), {})
    row = {"steps": len(steps), "train_runtime_s": end.get("train_runtime")}
    if steps and end.get("train_runtime"):
        row["step_s"] = round(float(end["train_runtime"]) / len(steps), 1)
    for ph in PHASES[trainer]:
        vals = [float(r[f"time_{ph}_s"]) for r in steps if f"time_{ph}_s" in r]
        if vals:
            row[f"{ph}_s"] = round(sum(vals) / len(vals), 1)
    if steps:
        first = steps[0]
        row["loss_step1"] = first.get("loss")
        row["reward_step1"] = first.get("r1_mean", first.get("reward"))
        if trainer == "stepfix":
            row["tokens_step1"] = int(first.get("y1_tokens", 0)) + int(first.get("y2_tokens", 0))
        else:
            row["tokens_step1"] = round(float(first.get("completions/mean_length", 0)) * 8)
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", default=BEFORE_REV, help="revision A (before)")
    ap.add_argument("--trainers", default="stepfix,grpo")
    ap.add_argument("--arms", default="a,b,b_fp32")
    ap.add_argument("--fp32_rounds", type=int, default=1, help="rounds that run the b_fp32 arm")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--timeout", type=int, default=3600, help="seconds a run may take")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from r3bench.core import models

    arms = a.arms.split(",")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_file = out / "runs.jsonl"
    rows = []
    with tempfile.TemporaryDirectory(prefix="r3ab-") as tmp:
        tmp = Path(tmp)
        start = str(models.adapter_from_parts(START, tmp / "sft_start"))
        a_root = tmp / "rev_a"
        subprocess.run(["git", "worktree", "add", "--detach", str(a_root), a.a], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            roots = {"a": a_root, "b": ROOT, "b_fp32": ROOT}
            extras = {"a": {}, "b": {}, "b_fp32": {"rollout_dtype": "policy", "bf16": "false"}}
            for rnd in range(a.rounds):
                for t in a.trainers.split(","):
                    here = [x for x in arms if x != "b_fp32" or rnd < a.fp32_rounds]
                    order = here if rnd % 2 == 0 else here[::-1]
                    for arm in order:
                        run = tmp / f"{t}_{arm}_{rnd}"
                        cfg_file = tmp / f"{t}_{arm}_{rnd}.yaml"
                        cfg_file.write_text(yaml.safe_dump(config(t, a.steps, run, start, extras[arm])))
                        env = {**os.environ, "OMP_NUM_THREADS": str(a.threads), "TOKENIZERS_PARALLELISM": "false",
                               "PYTHONPATH": str(roots[arm])}
                        print(f"[step_ab] round {rnd} {t} {arm}", flush=True)
                        l0, t0 = os.getloadavg()[0], time.time()
                        p = subprocess.run([sys.executable, "-m", f"trainers.{t}", "--config", str(cfg_file)],
                                           cwd=roots[arm], env=env, capture_output=True, text=True, timeout=a.timeout)
                        row = {"round": rnd, "trainer": t, "arm": arm, "wall_s": round(time.time() - t0, 1),
                               "load_avg_1min": [round(l0, 2), round(os.getloadavg()[0], 2)]}
                        if p.returncode != 0:
                            row["error"] = f"exit {p.returncode}: {p.stderr[-600:]}"
                        else:
                            row.update(read_run(t, run))
                        rows.append(row)
                        with rows_file.open("a") as f:
                            f.write(json.dumps(row) + "\n")
                        print(json.dumps(row), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(a_root)], cwd=ROOT, capture_output=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    meta = {"command": "python benchmarks/step_ab.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "a": a.a, "b": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{os.cpu_count()} CPUs, torch threads {a.threads}"}
    (out / "summary.json").write_text(json.dumps({"meta": meta, "runs": rows}, indent=1) + "\n")
    (out / "summary.md").write_text(markdown(rows, meta, arms) + "\n")
    print((out / "summary.md").read_text())
    return 0 if all("error" not in r for r in rows) else 1


def markdown(rows: list[dict], meta: dict, arms: list[str]) -> str:
    lines = ["# One RL step before (A) and after (B) the speed work, side by side", "",
             f"`{meta['command']}`: A = {meta['a']}, B = {meta['b']}, {meta['date']}; {meta['machine']}. "
             "The README's example configs from the committed SFT start, seed 0; the arms alternate their order "
             "each round. A/A noise: the spread of an arm's step times over the rounds.", ""]
    for t in dict.fromkeys(r["trainer"] for r in rows):
        mine = [r for r in rows if r["trainer"] == t and "step_s" in r]
        med = {arm: statistics.median([r["step_s"] for r in mine if r["arm"] == arm])
               for arm in arms if any(r["arm"] == arm for r in mine)}
        lines += [f"## {t}", ""]
        if "a" in med:
            lines.append("Speed-up (median step of A / median step of each arm): " + ", ".join(
                f"{arm} {med['a'] / med[arm]:.2f}x" for arm in med if arm != "a"))
            lines.append("")
        ph = PHASES[t]
        lines += ["| round | arm | s a step | " + " | ".join(ph) + " | loss step 1 | reward step 1 | tokens step 1 | load |",
                  "|---|---|---|" + "---|" * len(ph) + "---|---|---|---|"]
        for r in sorted((r for r in rows if r["trainer"] == t), key=lambda r: (r["arm"], r["round"])):
            if "error" in r:
                lines.append(f"| {r['round']} | {r['arm']} | error: {r['error'][:80]} |")
                continue
            lines.append(f"| {r['round']} | {r['arm']} | {r.get('step_s', '-')} | "
                         + " | ".join(str(r.get(f"{p}_s", "-")) for p in ph)
                         + f" | {r.get('loss_step1')} | {r.get('reward_step1')} | {r.get('tokens_step1')} | {r['load_avg_1min']} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
