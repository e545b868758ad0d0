"""The learns-at-all test of issue 50 item 3: its pass rule in code, written before any run.

docs/learning_study.md ("The learns-at-all test") fixes the rule, the trainers, the pool, the control
(`reward_permutation`) and the resumable driver's design; the driver (cells, resume, plots) is not built
yet. This module holds what the rule computes from the runs' committed samples files, tested on
synthetic runs (tests/benchmarks/test_learning_sanity.py):

    curves = visit_rewards(records, "stepfix")      # problem -> training reward at each visit
    row = verdict(curves_real, curves_control)      # change, control change, p over problems
    rows = decide({"stepfix": row, ...})            # Holm over the trainers, pass / fail each

The training reward of a visit: stepfix, the first attempt's r1 (what the policy writes from x alone);
GRPO, the mean reward of the problem's completions at that step (the verifier's rewards, not the
control's permuted ones).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from r3bench.results import stats  # noqa: E402

CHANGE_MIN = 0.10  # rule 1: last quarter of visits minus the first, mean over problems
MARGIN_MIN = 0.10  # rule 2: that change minus the control's
ALPHA = 0.05  # rule 3: the sign-flip permutation p over problems, after Holm over the trainers


def visit_rewards(records: list[dict], trainer: str) -> dict[str, list[float]]:
    """problem -> its training reward at each visit, in step order, from a run's samples records
    (stepfix_samples.jsonl or grpo_samples.jsonl rows). A step run twice (a resumed run appends its
    records again) counts once, with its later records. Records without a reward are left out."""
    if trainer.startswith("stepfix"):
        last = {}
        for r in records:
            if r.get("r1") is not None:
                last[(str(r["id"]), int(r["step"]))] = float(r["r1"])
        out: dict[str, list[tuple[int, float]]] = {}
        for (pid, step), v in last.items():
            out.setdefault(pid, []).append((step, v))
        return {k: [v for _, v in sorted(vs)] for k, vs in out.items()}
    steps: dict[tuple[str, int], dict[tuple, float]] = {}
    for r in records:  # GRPO: one visit = a prompt's completions at one step
        vals = [v for v in (r.get("rewards") or {}).values() if v is not None]
        if vals:
            steps.setdefault((r["prompt"], int(r["step"])), {})[(r.get("rank", 0), r.get("index"))] = sum(vals)
    out = {}
    for (prompt, step), comps in steps.items():
        out.setdefault(prompt, []).append((step, sum(comps.values()) / len(comps)))
    return {k: [v for _, v in sorted(vs)] for k, vs in out.items()}


def quarter_change(visits: list[float]) -> float:
    """Mean of the last quarter of visits minus the mean of the first quarter (at least one visit each)."""
    if len(visits) < 2:
        return math.nan
    q = max(1, len(visits) // 4)
    return sum(visits[-q:]) / q - sum(visits[:q]) / q


def verdict(real: dict[str, list[float]], control: dict[str, list[float]], iters: int = 10000, seed: int = 0) -> dict:
    """One trainer's numbers over the problems both runs visited at least twice: the mean change (rule 1),
    the control's mean change (rule 2) and the two-sided sign-flip permutation p of the per-problem
    differences real - control (stats.paired_permutation_p; rule 3 before Holm)."""
    keys = sorted(k for k in real if k in control and len(real[k]) >= 2 and len(control[k]) >= 2)
    if not keys:
        return {"problems": 0, "change": math.nan, "control_change": math.nan, "p": math.nan}
    a = [quarter_change(real[k]) for k in keys]
    b = [quarter_change(control[k]) for k in keys]
    return {"problems": len(keys), "change": sum(a) / len(a), "control_change": sum(b) / len(b),
            "p": stats.paired_permutation_p([x - y for x, y in zip(a, b)], iters=iters, seed=seed)}


def decide(rows: dict[str, dict]) -> list[dict]:
    """summary.csv's rows, one per trainer: its verdict, p after Holm over the trainers, and `pass` (all
    three rules: change >= CHANGE_MIN, change - control change >= MARGIN_MIN, Holm p < ALPHA)."""
    names = list(rows)
    adjusted = stats.holm([rows[n]["p"] for n in names])
    out = []
    for n, ph in zip(names, adjusted):
        r = rows[n]
        ok = (not math.isnan(r["change"]) and r["change"] >= CHANGE_MIN
              and r["change"] - r["control_change"] >= MARGIN_MIN and not math.isnan(ph) and ph < ALPHA)
        out.append({"trainer": n, "problems": r["problems"], "change": r["change"],
                    "control_change": r["control_change"], "p": r["p"], "p_holm": ph, "pass": ok})
    return out
