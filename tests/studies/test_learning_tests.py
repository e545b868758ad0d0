"""The issue-35 study's tests named in advance (studies/learning_study.py comparison_tests): paired
differences on the learning set, the seed x template x problem bootstrap, the exact sign test /
sign-flip randomisation p, Holm over every row, the A/A floor; and stats.paired_permutation_p."""
import json
import math
import random

import pytest

import study_scripts  # tests/studies/ is on sys.path (pytest's rootdir-less import)
from r3bench.results import stats

ls = study_scripts.load("learning_study")


def _cell(d, cond, seed, accs, rewards=None, tier="learning"):
    rewards = rewards or [0.25 + a / 2 for a in accs]
    samples = [{"id": f"p{i}", "doc_id": i, "template": f"t{i % 5}", "acc": a, "step_reward": r,
                "format_compliance": 1.0, "error_class": "CM", "verifier_valid": True, "response": "x"}
               for i, (a, r) in enumerate(zip(accs, rewards))]
    sf = d / "samples" / f"{cond}__s{seed}__{tier}.jsonl"
    sf.parent.mkdir(parents=True, exist_ok=True)
    sf.write_text("".join(json.dumps(s) + "\n" for s in samples))
    ls.write_json(d / "cells" / f"{cond}__s{seed}__{tier}.json",
                  {"status": "done", "condition": cond, "seed": seed, "tier": tier, "samples_file": str(sf),
                   "budget": {"n_eval": len(accs)}})


def test_permutation_p_against_the_exact_enumeration():
    d = [0.3, 0.1, 0.2, -0.05, 0.4, 0.25, 0.15, 0.05]
    obs = abs(sum(d))
    exact = sum(abs(sum(x if (m >> i) & 1 else -x for i, x in enumerate(d))) >= obs - 1e-12
                for m in range(2 ** len(d))) / 2 ** len(d)
    got = stats.paired_permutation_p(d, iters=20000, seed=1)
    assert abs(got - exact) < 0.01, (got, exact)
    assert math.isnan(stats.paired_permutation_p([0.0, 0.0]))
    assert stats.paired_permutation_p([0.1, -0.1] * 20, 2000, 0) > 0.5  # no shift: a large p


def test_primary_tests_holm_and_the_aa_floor(tmp_path):
    rng = random.Random(0)
    n = 200
    sft = [float(rng.random() < 0.3) for _ in range(n)]
    for seed in (0, 1):
        # stepfix: right on ~17 more problems per seed (other ones in each seed); GRPO: the same as SFT continued
        _cell(tmp_path, "sft_cont", seed, sft)
        _cell(tmp_path, "grpo_position", seed, sft)
        _cell(tmp_path, "stepfix", seed, [1.0 if (i % 8 == seed and a == 0.0) or a else 0.0
                                          for i, a in enumerate(sft)])
    _cell(tmp_path, "sft", 0, sft)
    _cell(tmp_path, "sft_unmerged", 0, [1 - a if i == 3 else a for i, a in enumerate(sft)])  # one flip
    _cell(tmp_path, "stepfix", 0, sft, tier="transfer")  # another set: not tested
    rows = ls.comparison_tests(tmp_path, iters=300, perm_iters=2000)
    keyed = {(r["kind"], r["a"], r["b"], r["metric"]): r for r in rows}
    p1 = keyed[("primary", "stepfix", "sft_cont", "acc")]
    assert p1["seeds"] == 2 and p1["problems"] == n
    assert p1["diff"] > 0.05 and p1["ci_low"] > 0 and p1["p"] < 1e-6
    assert p1["p_holm"] >= p1["p"]
    p2 = keyed[("primary", "stepfix", "grpo_position", "step_reward")]
    assert p2["p"] < 0.01
    null = keyed[("secondary", "grpo_position", "sft_cont", "acc")]
    assert null["diff"] == 0 and math.isnan(null["p"]) and null["discordant"] == 0
    aa = keyed[("A/A", "sft_unmerged", "sft", "acc")]
    assert aa["problems"] == n and aa["discordant"] == pytest.approx(1 / n)
    # Holm over every finite p: the adjusted values are those of stats.holm on the raw ones
    assert [r["p_holm"] for r in rows if not math.isnan(r["p"])] == [
        x for x in stats.holm([r["p"] for r in rows]) if not math.isnan(x)]
    lines = ls.comparison_lines(rows)
    text = "\n".join(lines)
    assert "A/A floor on the same metric (acc 0.005, step_reward 0.005)" in text
    claimed = [ln for ln in lines if ln.startswith("| primary | stepfix - sft_cont | acc")]
    assert claimed and claimed[0].endswith("| yes |")
    assert all(not ln.endswith("| yes |") for ln in lines if ln.startswith("| secondary"))


def _primary_row(seeds: int) -> dict:
    """A primary step-reward row as comparison_tests writes it (the interim seed-0 numbers)."""
    return {"kind": "primary", "a": "stepfix", "b": "sft_cont", "metric": "step_reward", "seeds": seeds,
            "problems": 400, "diff": -0.046, "ci_low": -0.076, "ci_high": -0.019, "plain_low": -0.067,
            "plain_high": -0.025, "discordant": 0.292, "p": 0.0001, "test": "sign-flip randomisation",
            "p_holm": 0.0006}


def _claimed(lines: list[str]) -> dict:
    """The primary rows' 'claimed' column of a comparison_lines table, by metric."""
    return {ln.split(" | ")[2]: ln.rstrip(" |").rsplit("| ", 1)[1] for ln in lines if ln.startswith("| primary")}


def test_a_primary_result_is_pending_until_the_aa_control_has_run():
    """Before the A/A cell, the floor a primary difference must exceed is unknown: a primary test that
    passes Holm reads "pending", not "yes" (it read "yes" before); p below 0.001 reads "<0.001"."""
    row = _primary_row(seeds=1)
    lines = ls.comparison_lines([row])
    line = [ln for ln in lines if ln.startswith("| primary")][0]
    assert line.endswith("| <0.001 | pending |") and "| <0.001 (sign-flip" in line
    assert "has not run" in "\n".join(lines)
    aa = dict(row, kind="A/A", a="sft_unmerged", b="sft", discordant=0.01, p=0.5, p_holm=1.0)  # step reward
    line = [ln for ln in ls.comparison_lines([row, aa]) if ln.startswith("| primary")][0]
    assert line.endswith("| yes |")
    big_floor = dict(aa, discordant=0.5)
    line = [ln for ln in ls.comparison_lines([row, big_floor]) if ln.startswith("| primary")][0]
    assert line.endswith("| no |")


def test_the_aa_floor_is_the_same_metrics():
    """A step reward moves with any change of the response, accuracy only when the answer flips: the
    A/A control's accuracy floor (0.01) said nothing of a step-reward difference, which was held to it
    and claimed ("yes") although the A/A control's own step rewards differ on half the problems."""
    row = _primary_row(seeds=2)
    acc_row = dict(row, metric="acc", discordant=0.12, p=0.0001, p_holm=0.0006, test="sign test")
    aa_acc = dict(row, kind="A/A", a="sft_unmerged", b="sft", metric="acc", discordant=0.01, p=1.0, p_holm=1.0)
    aa_step = dict(aa_acc, metric="step_reward", discordant=0.5)
    lines = ls.comparison_lines([row, acc_row, aa_acc, aa_step])
    assert _claimed(lines) == {"step_reward": "no", "acc": "yes"}
    assert "(acc 0.010, step_reward 0.500)" in "\n".join(lines)
    # an A/A control with no row for a metric leaves that metric's primary result pending
    assert _claimed(ls.comparison_lines([row, acc_row, aa_acc])) == {"step_reward": "pending", "acc": "yes"}


def test_a_trained_b_with_one_seed_is_paired_seed_with_seed(tmp_path):
    # GRPO has run seed 0 only: stepfix seed 1 must not be paired with GRPO seed 0 (a different training
    # run), and the row counts the one seed paired; the SFT start, scored once, pairs with every seed
    n = 60
    base = [float(i % 3 == 0) for i in range(n)]
    _cell(tmp_path, "sft", 0, base)
    _cell(tmp_path, "grpo_position", 0, base)
    _cell(tmp_path, "stepfix", 0, base)  # seed 0: the same as GRPO seed 0
    _cell(tmp_path, "stepfix", 1, [1.0] * n)  # seed 1: right everywhere
    keyed = {(r["kind"], r["a"], r["b"], r["metric"]): r
             for r in ls.comparison_tests(tmp_path, iters=100, perm_iters=200)}
    p2 = keyed[("primary", "stepfix", "grpo_position", "acc")]
    assert p2["seeds"] == 1 and p2["diff"] == 0 and p2["discordant"] == 0
    ref = keyed[("secondary", "stepfix", "sft", "acc")]
    assert ref["seeds"] == 2 and ref["discordant"] > 0
    # once GRPO seed 1 lands, both seeds pair; a seed whose partner shares no problem with it is not counted
    _cell(tmp_path, "grpo_position", 1, base)
    _cell(tmp_path, "stepfix", 2, base)
    _cell(tmp_path, "grpo_position", 2, base)
    other = tmp_path / "samples" / "grpo_position__s2__learning.jsonl"
    other.write_text("".join(json.dumps({**json.loads(x), "id": "other-" + json.loads(x)["id"]}) + "\n"
                             for x in other.read_text().splitlines()))
    keyed = {(r["kind"], r["a"], r["b"], r["metric"]): r
             for r in ls.comparison_tests(tmp_path, iters=100, perm_iters=200)}
    assert keyed[("primary", "stepfix", "grpo_position", "acc")]["seeds"] == 2


def test_missing_cells_leave_their_tests_out(tmp_path):
    _cell(tmp_path, "stepfix", 0, [1.0, 0.0, 1.0])
    assert ls.comparison_tests(tmp_path, iters=50, perm_iters=100) == []
    assert ls.comparison_lines([]) == []


def test_the_mixture_summary_pools_seeds_scored_on_the_same_problems(tmp_path):
    """Every seed of the mixture design scores the same problems: the table pools them (the mean over seeds,
    the seed range beside it) instead of showing seed 0 alone as a two-seed row, and says so."""
    n = 40
    base = [float(i % 3 == 0) for i in range(n)]
    _cell(tmp_path, "sft", 0, base)
    _cell(tmp_path, "stepfix", 0, [1.0 if i < 10 else 0.0 for i in range(n)])  # 0.25
    _cell(tmp_path, "stepfix", 1, [1.0 if i < 20 else 0.0 for i in range(n)])  # 0.5
    warned = []
    rows = ls.summary_rows(tmp_path, iters=100, warn=warned.append)
    assert not warned
    pooled = {(r["seed"], r["metric"]): r for r in rows if r["condition"] == "stepfix" and r["tier"] == "learning"}
    assert pooled[("all", "acc")]["value"] == pytest.approx(0.375) and pooled[("all", "acc")]["n"] == 2 * n
    assert (pooled[("spread", "acc")]["ci_low"], pooled[("spread", "acc")]["ci_high"]) == (0.25, 0.5)
    from dataclasses import replace

    ls.write_outputs(tmp_path, replace(ls.MIXTURE, bootstrap=100))
    text = (tmp_path / "summary.md").read_text()
    assert "disjoint" not in text and "same problems" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| stepfix | learning |"))
    assert "| 2 | 80 | 0.375 [" in row and "0.250 - 0.500" in row
