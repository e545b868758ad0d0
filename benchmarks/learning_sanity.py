"""The learns-at-all test of issue 50 item 3: its pass rule in code, written before any run.

docs/learning_study.md ("The learns-at-all test") fixes the rule, the trainers, the pool, the control
(`reward_permutation`) and the resumable driver's design; the driver (cells, resume, plots) is not built
yet. This module holds what the rule computes from the runs' committed samples files, tested on
synthetic runs (tests/benchmarks/test_learning_sanity.py):

    curves = visit_rewards(records, "stepfix")      # problem -> training reward at each visit
    row = verdict(curves_real, curves_control)      # change, control change, p over problems (one seed)
    row = verdict_seeds([real_s0, real_s1], [control_s0, control_s1])   # >= 2 seeds per arm, paired
    rows = decide({"stepfix": row, ...})            # Holm over the trainers, pass / fail each (pass: >= 2 seeds)

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


SEEDS_MIN = 2  # the amendment of 2026-12-07: at least two seeds per arm, the seed the unit of replication


def verdict_seeds(reals: list[dict[str, list[float]]], controls: list[dict[str, list[float]]],
                  iters: int = 10000, seed: int = 0) -> dict:
    """One trainer's numbers over paired seeds (reals[i] and controls[i]: the real and control runs of
    seed i): `verdict` of each seed (rules 1 and 2 are checked per seed in `decide`), the mean change
    and control change over the seeds, and rule 3's p on the per-problem differences averaged over the
    seeds (problems every run visited at least twice)."""
    if len(reals) != len(controls):
        raise ValueError(f"{len(reals)} real runs beside {len(controls)} control runs: the seeds are paired")
    per_seed = [verdict(r, c, iters=iters, seed=seed) for r, c in zip(reals, controls)]
    runs = list(reals) + list(controls)
    keys = sorted(k for k in (runs[0] if runs else {}) if all(k in run and len(run[k]) >= 2 for run in runs))
    if not keys:
        return {"problems": 0, "change": math.nan, "control_change": math.nan, "p": math.nan,
                "seeds": len(reals), "per_seed": per_seed}
    diffs = [sum(quarter_change(r[k]) - quarter_change(c[k]) for r, c in zip(reals, controls)) / len(reals)
             for k in keys]
    a = [sum(quarter_change(r[k]) for k in keys) / len(keys) for r in reals]
    b = [sum(quarter_change(c[k]) for k in keys) / len(keys) for c in controls]
    return {"problems": len(keys), "change": sum(a) / len(a), "control_change": sum(b) / len(b),
            "p": stats.paired_permutation_p(diffs, iters=iters, seed=seed), "seeds": len(reals),
            "per_seed": per_seed}


def _rules_1_2(r: dict) -> bool:
    return (not math.isnan(r["change"]) and r["change"] >= CHANGE_MIN
            and r["change"] - r["control_change"] >= MARGIN_MIN)


def decide(rows: dict[str, dict]) -> list[dict]:
    """summary.csv's rows, one per trainer: its verdict, p after Holm over the trainers, `rules_met` (the
    three rules: change >= CHANGE_MIN, change - control change >= MARGIN_MIN, Holm p < ALPHA; with
    several seeds (`verdict_seeds`) rules 1 and 2 in every seed as well) and `pass`: rules_met with at
    least SEEDS_MIN seeds per arm (a single-seed row can meet the rules but is not a pass: its p over
    problems does not cover the variance between runs).

    A trainer whose p is NaN (no usable data: no problem visited twice by both runs, or no non-zero
    difference) enters Holm as p = 1: it stays in the family (m is the number of trainers run; dropping
    it shrank m and loosened the others' correction) and cannot pass."""
    names = list(rows)
    raw = [rows[n]["p"] for n in names]
    adjusted = stats.holm([1.0 if p is None or math.isnan(p) else p for p in raw])
    out = []
    for n, ph in zip(names, adjusted):
        r = rows[n]
        seeds = r.get("seeds", 1)
        met = _rules_1_2(r) and all(_rules_1_2(s) for s in r.get("per_seed", [])) and ph < ALPHA
        out.append({"trainer": n, "problems": r["problems"], "seeds": seeds, "change": r["change"],
                    "control_change": r["control_change"], "p": r["p"], "p_holm": ph, "rules_met": met,
                    "pass": met and seeds >= SEEDS_MIN})
    return out
