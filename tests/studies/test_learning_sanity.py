"""studies/learning_sanity.py: the learns-at-all test's pass rule (docs/learning_study.md), on synthetic
runs whose answer is known: a run that learns beside a flat control passes; a flat run, a run whose control
rose as much, and a change too small or carried by too few problems do not."""
import math
import random
from pathlib import Path

import pytest

import study_scripts  # tests/studies/ is on sys.path (pytest's rootdir-less import)

ls = study_scripts.load("learning_sanity")


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


# ---------------------------------------------------------------- the driver (cells, resume, summary)


def test_cells_pair_every_real_run_with_its_control():
    d = ls.FULL_DESIGN
    cs = ls.cells(d)
    assert len(cs) == len(d.trainers) * 2 * len(d.seeds) == len(set(cs))
    for c in cs:
        t, arm, seed = ls.parse_cell(c)
        assert t in d.trainers and arm in ("real", "control") and seed in d.seeds
        if arm == "real":
            assert f"{t}__control__s{seed}" in cs


def test_pick_pool_keeps_the_band_and_the_kinds_proportions():
    means = {f"m{i}": 0.5 for i in range(30)} | {f"n{i}": 0.5 for i in range(10)} | {"low": 0.1, "high": 0.95}
    kinds = {k: ("mcq" if k.startswith("m") else "numeric") for k in means} | {"low": "mcq", "high": "mcq"}
    got = ls.pick_pool(means, kinds, 8, (0.2, 0.8))
    assert len(got) == 8 and "low" not in got and "high" not in got
    # candidates: 32 mcq, 10 numeric of 42 -> 8 * 32/42 = 6.1 mcq, 1.9 numeric: 6 and 2
    assert sum(k.startswith("m") for k in got) == 6 and sum(k.startswith("n") for k in got) == 2
    assert got == ls.pick_pool(means, kinds, 8, (0.2, 0.8))  # seeded
    # a kind with too few in the band gives its places to the others; fewer than n in the band: all of them
    assert len(ls.pick_pool({"a": 0.5, "b": 0.5, "c": 0.9}, {"a": "x", "b": "y", "c": "y"}, 5, (0.2, 0.8))) == 2
    few = {f"m{i}": 0.5 for i in range(3)} | {"n0": 0.5}
    got = ls.pick_pool(few, {k: ("mcq" if k[0] == "m" else "num") for k in few} | {f"z{i}": "num" for i in range(20)},
                       3, (0.2, 0.8))
    assert len(got) == 3


@pytest.mark.slow
def test_the_driver_runs_resumes_and_summarises(tmp_path, tiny, data):
    """The whole driver on the tiny model: the pool from the start's samples, each cell a real trainer run
    (stepfix and GRPO, real and control, 2 visits of 2 problems), records, samples and metrics on file,
    a crashed cell recorded with its error and retried, done cells skipped, the summary and plot written."""
    import json

    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    start = tmp_path / "start"
    get_peft_model(AutoModelForCausalLM.from_pretrained(tiny), LoraConfig(r=4, target_modules="all-linear",
                                                                          task_type="CAUSAL_LM")).save_pretrained(start)
    d = ls.Design(model=tiny, trainers={"stepfix": ("stepfix", {"baseline": "none"}),
                                        "grpo_position": ("grpo", {"rewards": "position", "group_size": 2})},
                  seeds=(0,), problems=2, visits=2, per_step=2, candidates=4, pilot_samples=2, band=(0.0, 1.0),
                  pilot_batch=4, gen_tokens=8, threads=1)
    out = tmp_path / "sanity"
    s = ls.Sanity(out, d, start=start, pool_source=Path(data) / "sft.jsonl")
    pool = s.choose_pool(log=lambda *_: None)
    assert pool["candidates"] == 4 and len(pool["chosen"]) == 2 and all(len(v) == 2 for v in pool["rewards"].values())
    assert len((out / "pool.jsonl").read_text().splitlines()) == 2
    assert s.steps() == (1, 2)
    cfg = s.config("stepfix__control__s0")
    assert cfg["reward_permutation"] and cfg["save_steps"] == 1 and cfg["max_steps"] == 2 and cfg["baseline"] == "none"
    assert s.config("grpo_position__real__s0")["batch_size"] == 4 and not s.config("grpo_position__real__s0")[
        "reward_permutation"]
    # a crash: the grpo control's config names an unknown field; recorded, the other cells still run
    bad = dict(d.trainers)
    bad["grpo_position"] = ("grpo", {"rewards": "position", "group_size": 2, "no_such_field": 1})
    s_bad = ls.Sanity(out, ls.replace(d, trainers=bad), start=start, pool_source=Path(data) / "sft.jsonl")
    ran = s_bad.run(log=lambda *_: None)
    assert ran == {"stepfix__real__s0": "done", "stepfix__control__s0": "done",
                   "grpo_position__real__s0": "crashed", "grpo_position__control__s0": "crashed"}
    rec = json.loads((out / "cells" / "grpo_position__real__s0.json").read_text())
    assert rec["tries"] == 1 and "no_such_field" in rec["error"]
    done = json.loads((out / "cells" / "stepfix__real__s0.json").read_text())
    assert done["global_step"] == 2 and (out / done["train_samples"]).is_file() and (out / done["metrics"]).is_file()
    assert not Path(done["config"]["data"]).is_absolute() or str(tmp_path) in done["config"]["data"]
    # the next start retries the crashed cells only
    before = done["finished"]
    ran = s.run(log=lambda *_: None)
    assert ran == {"grpo_position__real__s0": "done", "grpo_position__control__s0": "done"}
    assert json.loads((out / "cells" / "stepfix__real__s0.json").read_text())["finished"] == before
    assert json.loads((out / "cells" / "grpo_position__real__s0.json").read_text())["tries"] == 2
    cur = s.curves()
    assert set(cur) == {"stepfix", "grpo_position"} and set(cur["stepfix"]) == {"real", "control"}
    assert all(len(v) == 2 for v in cur["stepfix"]["real"][0].values())  # every problem visited twice
    rows = s.summarise(iters=200)
    assert [r["trainer"] for r in rows] == ["stepfix", "grpo_position"]
    assert all(not r["pass"] for r in rows)  # one seed per arm is never a pass
    assert (out / "summary.csv").read_text().startswith("trainer,problems,seeds,change")
    assert (out / "curves.png").stat().st_size > 1000 and "| stepfix |" in (out / "summary.md").read_text()
    assert "| stepfix__real__s0 | done |" in s.plan()


def test_a_second_driver_on_one_folder_is_refused(tmp_path):
    import os

    lock = tmp_path / ".sanity.lock"
    lock.write_text(str(os.getppid()))  # a live process that is not this one
    with pytest.raises(RuntimeError, match="another study process"):
        ls.Sanity(tmp_path, ls.FULL_DESIGN).run(log=lambda *_: None)


def test_records_name_paths_inside_the_repository_relatively(tmp_path):
    """pool.json recorded the start adapter's absolute path (a machine path in a committed record)."""
    assert ls._shown(ls.ROOT / "results" / "learning" / "sanity" / "runs" / "start_adapter") == \
        "results/learning/sanity/runs/start_adapter"
    assert ls._shown(tmp_path / "adapter") == "adapter"
