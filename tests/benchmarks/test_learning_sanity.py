"""benchmarks/learning_sanity.py: the learns-at-all test's pass rule (docs/learning_study.md), on synthetic
runs whose answer is known: a run that learns beside a flat control passes; a flat run, a run whose control
rose as much, and a change too small or carried by too few problems do not."""
import math
import random

import pytest

import bench_scripts  # tests/benchmarks/ is on sys.path (pytest's rootdir-less import)

ls = bench_scripts.load("learning_sanity")


def curves(n_problems=16, visits=8, start=0.3, slope=0.0, noise=0.05, seed=0):
    rng = random.Random(seed)
    return {f"p{i}": [min(1.0, max(0.0, start + slope * v + rng.gauss(0, noise))) for v in range(visits)]
            for i in range(n_problems)}


def test_quarter_change():
    assert abs(ls.quarter_change([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) - 0.6) < 1e-12  # (0.75) - (0.15)
    assert abs(ls.quarter_change([0.0, 1.0]) - 1.0) < 1e-12 and math.isnan(ls.quarter_change([0.5]))


def test_a_learning_run_beside_a_flat_control_passes():
    """Two seeds per arm, each learning beside its flat control: a pass. One seed meets the rules but is
    not a pass (the amendment of 2026-12-07: the p over problems does not cover seed variance)."""
    one = ls.decide({"learns": ls.verdict(curves(slope=0.04), curves(seed=1), iters=2000)})[0]
    assert one["change"] > 0.2 and abs(one["control_change"]) < 0.05 and one["p_holm"] < 0.01
    assert one["rules_met"] and one["seeds"] == 1 and not one["pass"]
    row = ls.verdict_seeds([curves(slope=0.04), curves(slope=0.04, seed=2)], [curves(seed=1), curves(seed=3)],
                           iters=2000)
    out = ls.decide({"learns": row})[0]
    assert out["seeds"] == 2 and out["change"] > 0.2 and out["p_holm"] < 0.01 and out["rules_met"] and out["pass"]


def test_every_seed_must_meet_rules_1_and_2():
    """Two seeds whose mean clears the rules, but one seed's run did not learn: no pass."""
    row = ls.verdict_seeds([curves(slope=0.08), curves(seed=2)], [curves(seed=1), curves(seed=3)], iters=2000)
    out = ls.decide({"half": row})[0]
    assert out["change"] >= ls.CHANGE_MIN and out["p_holm"] < 0.05
    assert not out["rules_met"] and not out["pass"]


def test_a_trainer_without_usable_data_stays_in_holms_family():
    """A trainer with no usable data (p NaN) counts as p = 1 in Holm: m stays the number of trainers run.
    Before, it dropped out of m: the two others' 0.02 and 0.03 became 0.04 and 0.04 (pass) instead of
    0.06 (no pass)."""
    row = {"problems": 16, "change": 0.3, "control_change": 0.0, "seeds": 2, "per_seed": []}
    rows = {"a": {**row, "p": 0.02}, "b": {**row, "p": 0.03},
            "empty": {"problems": 0, "change": math.nan, "control_change": math.nan, "p": math.nan}}
    out = {r["trainer"]: r for r in ls.decide(rows)}
    assert out["a"]["p_holm"] == pytest.approx(0.06) and out["b"]["p_holm"] == pytest.approx(0.06)
    assert out["empty"]["p_holm"] == 1.0 and not any(r["pass"] for r in out.values())


def test_flat_runs_a_control_that_rose_as_much_and_small_changes_fail():
    rows = {"flat": ls.verdict(curves(seed=2), curves(seed=3), iters=2000),
            "drift": ls.verdict(curves(slope=0.04, seed=4), curves(slope=0.04, seed=5), iters=2000),
            "small": ls.verdict(curves(slope=0.01, noise=0.0, seed=6), curves(noise=0.0, seed=7), iters=2000)}
    out = {r["trainer"]: r for r in ls.decide(rows)}
    assert not any(r["pass"] for r in out.values())
    assert out["drift"]["change"] >= ls.CHANGE_MIN  # rule 1 met, rule 2 not: the control rose as much
    assert out["small"]["p_holm"] < 0.05 and out["small"]["change"] < ls.CHANGE_MIN  # significant, too small


def test_too_few_problems_cannot_pass():
    rows = {"two": ls.verdict(curves(n_problems=2, slope=0.05), curves(n_problems=2, seed=1), iters=2000)}
    out = ls.decide(rows)[0]
    assert out["change"] > 0.2 and out["p"] > 0.05 and not out["pass"]  # 2 problems: p >= 0.25 at best


def test_holm_runs_over_the_trainers():
    """6 problems that all rose: each trainer's sign-flip p is the smallest there is (2/64 = 0.031 < 0.05),
    and Holm over 4 trainers lifts it to ~0.125: no trainer passes on p alone."""
    rows = {f"t{i}": ls.verdict(curves(n_problems=6, slope=0.05, noise=0.0, seed=i),
                                curves(n_problems=6, noise=0.0, seed=10 + i)) for i in range(4)}
    out = ls.decide(rows)
    for r in out:
        assert r["p"] < 0.05 and r["p_holm"] > 0.05 and r["change"] > 0.2 and not r["pass"]


def test_visit_rewards_from_the_samples_files():
    stepfix = [{"step": 1, "id": "a", "r1": 0.25}, {"step": 1, "id": "b", "r1": 0.5},
               {"step": 3, "id": "a", "r1": 0.5}, {"step": 2, "id": "b", "skipped": True},
               {"step": 3, "id": "a", "r1": 0.75}]  # step 3 again after a resume: the later record counts
    assert ls.visit_rewards(stepfix, "stepfix") == {"a": [0.25, 0.75], "b": [0.5]}
    grpo = [{"step": 1, "prompt": "x", "rank": 0, "index": 0, "rewards": {"position_reward": 0.25}},
            {"step": 1, "prompt": "x", "rank": 0, "index": 1, "rewards": {"position_reward": 0.75},
             "rewards_used": {"position_reward": 0.25}},  # the control's permuted reward is not the training reward
            {"step": 2, "prompt": "x", "rank": 0, "index": 0, "rewards": {"position_reward": None}},
            {"step": 2, "prompt": "x", "rank": 0, "index": 1, "rewards": {"position_reward": 1.0}}]
    assert ls.visit_rewards(grpo, "grpo_position") == {"x": [0.5, 1.0]}
