"""studies/learning_study.py: design, statistics, resumable cells, and the whole pipeline on a
tiny random model (the slow test)."""
import csv
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import study_scripts  # tests/studies/ is on sys.path (pytest's rootdir-less import)

ROOT = Path(__file__).resolve().parents[2]


ls = study_scripts.load("learning_study")


def test_sample_size_for_a_ten_point_difference():
    # Fleiss (eq. 4.14) without continuity correction: 0.3 vs 0.4 at alpha 0.05, power 0.8
    assert ls.n_for_difference(0.3, 0.4) == 356
    assert ls.n_for_difference(0.4, 0.3) == 356
    assert ls.n_for_difference(0.05, 0.15) < ls.n_for_difference(0.45, 0.55)
    assert ls.n_for_difference(0.3, 0.35) > 4 * 300  # half the difference needs ~4x the problems


def test_bootstrap_ci_is_seeded_and_brackets_the_estimate():
    vals = [1.0] * 30 + [0.0] * 70
    a, b = ls.bootstrap_ci(vals, 500, seed=3), ls.bootstrap_ci(vals, 500, seed=3)
    assert a == b and a[0] == 0.3 and a[1] < 0.3 < a[2] and 0.15 < a[2] - a[1] < 0.25
    assert ls.bootstrap_ci([1.0] * 5, 100, 0) == (1.0, 1.0, 1.0)
    est, lo, hi = ls.bootstrap_ci([0.0, 0.0], 50, 0, num=[0.0, 0.0])  # a share with no erroneous solution
    assert math.isnan(est) and math.isnan(lo) and math.isnan(hi)
    assert ls.bootstrap_ci([1.0, 0.0, 1.0, 0.0], 200, 1, num=[1.0, 1.0, 1.0, 0.0])[0] == pytest.approx(2 / 3)


def test_design_cells_seeds_and_disjoint_eval_blocks():
    b = ls.FULL
    conds = {c.name: c for c in ls.conditions(b)}
    assert set(conds) == {"base_cot", "base_seventag", "sft", "sft_cont", "dpo_ipo", "stepfix", "stepfix_baseline",
                          "grpo_outcome", "grpo_position", "stepco", "bestofn", "full_base", "full_best"}
    cells = ls.cells(b)
    train = [c for c in cells if c.tier is None]
    assert train[0].id == "sft__s0__train" and len(train) == 1 + 6 * 3
    assert conds["stepfix_baseline"].overrides["baseline"] == "r1"
    # equal budget from the start: same steps and problems per step for every trained condition
    # (grad_accum is set explicitly: trainers.sft's default of 4 would give the SFT control 4x the problems)
    steps = {(c.overrides["max_steps"],
              c.overrides["batch_size"] * c.overrides["grad_accum"] // (c.overrides.get("group_size") or 1))
             for c in conds.values() if c.kind == "trained"}
    assert steps == {(b.rl_steps, b.rl_batch)}
    blocks = [set(ls.doc_indices(ls.Cell(conds["stepfix"], s, 1), b)) for s in b.seeds]
    assert all(not (x & y) for i, x in enumerate(blocks) for y in blocks[i + 1:])
    # the pooled blocks are exactly the SFT start's problems (ceil(356/3) = 119 made a third block reach
    # problem 356, which the SFT start never scored)
    assert set().union(*blocks) == set(range(b.n_eval)) and b.n_eval == ls.n_for_difference(0.3, 0.4)
    assert ls.doc_indices(ls.Cell(conds["sft"], 0, 1), b) == list(range(b.n_eval))
    assert ls.depends_on(ls.Cell(conds["stepco"], 0, 1)) == "sft__s0__train"
    assert ls.depends_on(ls.Cell(conds["dpo_ipo"], 2, 1)) == "dpo_ipo__s2__train"
    assert ls.depends_on(ls.Cell(conds["base_cot"], 0, 1)) is None


def test_plan_lists_every_cell_and_a_cpu_estimate(tmp_path):
    study = ls.Study(tmp_path, ls.FULL)
    text = ls.plan(study)
    assert all(c.id in text for c in study.cells) and "estimated CPU time" in text
    hours = float(text.split("pending cells: ")[1].split(" h")[0])
    assert 3 < hours < 9  # the ~6 CPU-hour budget of docs/learning_study.md


def test_score_sample_reward_class_and_format():
    from r3bench import procgen

    p = next(x for x in procgen.generate(n=60, seed=0, tier=1) if x.split == "test")
    doc = {"question": p.question, "solution": p.solution, "answer": p.answer}
    ok = ls.score_sample(doc, p.solution, 1.0, 1.0, "symbolic")
    assert ok["step_reward"] == 1.0 and ok["error_class"] is None and ok["first_error"] == 0
    junk = ls.score_sample(doc, "The answer is 12 N.", 0.0, 0.0, "symbolic")
    assert junk["error_class"] == "FORMAT" and junk["step_reward"] == 0.0
    bad, step, cls, _ = procgen.inject_problem(p, "CE", 6)
    wrong = ls.score_sample(doc, bad, 0.0, 1.0, "symbolic")
    assert wrong["error_class"] in ("MC", "CM", "CE") and 0 < wrong["step_reward"] < 1
    # the trainers' reward (verifiers.rewards.step_reward): n is the format's seven steps, so an error at
    # step e earns e/8, and a solution cut after three correct tags earns the minimum (it earned 0.75)
    assert wrong["step_reward"] == wrong["first_error"] / 8
    cut = p.solution[:p.solution.index("</governing_equation>") + len("</governing_equation>")]
    short = ls.score_sample(doc, cut, 0.0, 0.0, "symbolic")
    assert short["error_class"] == "FORMAT" and short["step_reward"] == 0.0


def test_score_sample_one_validity_for_reward_and_shares(monkeypatch):
    """A verdict with a first error but no known class gives no step reward; it must not count in the
    error shares' denominator either (it did: the shares then summed to less than 1 unseen)."""
    from verifiers import steps
    from verifiers.verdict import StepVerdict

    odd = StepVerdict(first_error=3, error_class="XYZ", explanation="odd", n_steps=7)
    monkeypatch.setattr(steps, "verify", lambda *a, **k: odd)
    rec = ls.score_sample({"question": "q", "solution": "s"}, "r", 0.0, 1.0, "symbolic")
    assert rec["verifier_valid"] is False and rec["step_reward"] is None and rec["error_class"] is None
    m = ls.cell_metrics([rec, {**rec, "verifier_valid": True, "error_class": "CE", "step_reward": 0.5}], 50, 0)
    assert m["share_CE"][0] == 1.0 and m["share_CE"][3] == 1 and m["step_reward"][3] == 1


def _eval_record(d, cond, seed, vals):
    samples = [{"acc": v, "step_reward": v, "format_compliance": 1.0, "error_class": None if v else "CE",
                "verifier_valid": True} for v in vals]
    sf = d / "samples" / f"{cond}__s{seed}__t1.jsonl"
    sf.parent.mkdir(parents=True, exist_ok=True)
    sf.write_text("".join(json.dumps(s) + "\n" for s in samples))
    m = ls.cell_metrics(samples, 100, seed)
    ls.write_json(d / "cells" / f"{cond}__s{seed}__t1.json",
                  {"status": "done", "condition": cond, "seed": seed, "tier": 1, "samples_file": str(sf),
                   "metrics": {k: list(v) for k, v in m.items()}})


def test_summary_rows_pool_seeds_and_give_their_spread(tmp_path):
    _eval_record(tmp_path, "stepfix", 0, [1.0] * 2 + [0.0] * 8)
    _eval_record(tmp_path, "stepfix", 1, [1.0] * 6 + [0.0] * 4)
    _eval_record(tmp_path, "sft", 0, [1.0] * 3 + [0.0] * 17)
    ls.write_json(tmp_path / "cells" / "sft__s0__train.json", {"status": "done", "adapter": "x"})  # no tier: not a row
    rows = ls.summary_rows(tmp_path, 200)
    acc = {(r["condition"], r["seed"]): r for r in rows if r["metric"] == "acc"}
    assert acc[("stepfix", "all")]["value"] == pytest.approx(0.4) and acc[("stepfix", "all")]["n"] == 20
    sp = acc[("stepfix", "spread")]
    assert (sp["ci_low"], sp["ci_high"], sp["n"]) == (0.2, 0.6, 2) and sp["value"] == pytest.approx(math.sqrt(0.08))
    assert ("sft", "all") not in acc and acc[("sft", 0)]["n"] == 20
    assert {r["metric"] for r in rows} == set(ls.METRICS)
    share = next(r for r in rows if r["condition"] == "stepfix" and r["seed"] == "all" and r["metric"] == "share_CE")
    assert share["value"] == 1.0 and share["n"] == 12


def _paired_record(d, cond, seed, accs, first_id=0):
    samples = [{"id": f"p{first_id + i}", "doc_id": first_id + i, "acc": a, "step_reward": 0.25 + a / 2,
                "format_compliance": 1.0, "error_class": "CM", "verifier_valid": True} for i, a in enumerate(accs)]
    sf = d / "samples" / f"{cond}__s{seed}__t1.jsonl"
    sf.parent.mkdir(parents=True, exist_ok=True)
    sf.write_text("".join(json.dumps(s) + "\n" for s in samples))
    ls.write_json(d / "cells" / f"{cond}__s{seed}__t1.json",
                  {"status": "done", "condition": cond, "seed": seed, "tier": 1, "samples_file": str(sf),
                   "budget": {"n_eval": 20}, "metrics": {k: list(v) for k, v in ls.cell_metrics(samples, 50, 0).items()}})


def test_summary_pairs_each_condition_with_the_sft_start_on_the_same_problems(tmp_path):
    """The SFT start scores problems 0-19 and gets 0-9 right; stepfix's seeds score blocks 0-9 (0.8)
    and 10-19 (0.3). Unpaired, seed 0 beats the SFT start's 0.5 and seed 1 loses to it; on the same
    problems seed 0 lost 0.2 and seed 1 gained 0.3."""
    _paired_record(tmp_path, "sft", 0, [1.0] * 10 + [0.0] * 10)
    _paired_record(tmp_path, "stepfix", 0, [1.0] * 8 + [0.0] * 2, first_id=0)
    _paired_record(tmp_path, "stepfix", 1, [1.0] * 3 + [0.0] * 7, first_id=10)
    _paired_record(tmp_path, "sft_cont", 0, [1.0] * 9 + [0.0] * 1, first_id=0)
    rows = ls.summary_rows(tmp_path, 200)
    r = {(x["condition"], x["seed"], x["metric"]): x for x in rows}
    assert r[("stepfix", 0, "acc_minus_sft")]["value"] == pytest.approx(-0.2)
    assert r[("stepfix", 1, "acc_minus_sft")]["value"] == pytest.approx(0.3)
    assert r[("stepfix", "all", "acc_minus_sft")]["value"] == pytest.approx(0.05)
    assert r[("stepfix", "all", "acc_minus_sft")]["n"] == 20
    assert r[("stepfix", 0, "step_reward_minus_sft")]["value"] == pytest.approx(-0.1)
    assert r[("stepfix", 0, "acc_minus_sft_cont")]["value"] == pytest.approx(-0.1)  # its own seed, same block
    assert ("stepfix", 1, "acc_minus_sft_cont") not in r  # no SFT-continued seed 1
    assert r[("sft_cont", 0, "acc_minus_sft")]["value"] == pytest.approx(-0.1)
    assert not any(k[0] == "sft" and k[2].endswith("_minus_sft") for k in r)
    ls.write_outputs(tmp_path, ls.TINY)
    md = (tmp_path / "summary.md").read_text()
    assert "| stepfix | 1 | 20 | +0.050 [" in md


def test_summary_gives_the_share_of_responses_training_changed(tmp_path):
    """A condition that barely moved scores like its start: the paired accuracy says 0 either way. The
    share of problems whose greedy text differs from the SFT start's tells "did not move" from "moved
    without gain" (the first GRPO runs wrote the SFT start's text on 3 problems in 4)."""
    _paired_record(tmp_path, "sft", 0, [1.0] * 10 + [0.0] * 10)
    _paired_record(tmp_path, "grpo_outcome", 0, [1.0] * 10, first_id=0)
    _paired_record(tmp_path, "grpo_outcome", 1, [0.0] * 10, first_id=10)
    for f, changed in (("sft__s0__t1", set()), ("grpo_outcome__s0__t1", {"p1", "p4"}),
                       ("grpo_outcome__s1__t1", {"p10"})):
        sf = tmp_path / "samples" / f"{f}.jsonl"
        rows = [json.loads(x) for x in sf.read_text().splitlines()]
        for x in rows:
            x["response"] = f"solution of {x['id']}" + (" reworded" if x["id"] in changed else "")
        rows[-1]["response"] = None if f.startswith("grpo_outcome__s1") else rows[-1]["response"]  # no text: not counted
        sf.write_text("".join(json.dumps(x) + "\n" for x in rows))
    r = {(x["condition"], x["seed"], x["metric"]): x for x in ls.summary_rows(tmp_path, 200)}
    assert (r[("grpo_outcome", 0, "changed_vs_sft")]["value"], r[("grpo_outcome", 0, "changed_vs_sft")]["n"]) == (0.2, 10)
    assert r[("grpo_outcome", 1, "changed_vs_sft")]["n"] == 9
    assert r[("grpo_outcome", "all", "changed_vs_sft")]["value"] == pytest.approx(3 / 19)
    assert r[("grpo_outcome", "all", "acc_minus_sft")]["value"] == pytest.approx(0.0)  # what accuracy alone shows
    assert not any(k[2] == "changed_vs_sft" for k in r if k[0] == "sft")
    ls.write_outputs(tmp_path, ls.TINY)
    line = next(x for x in (tmp_path / "summary.md").read_text().splitlines() if x.startswith("| grpo_outcome | 1 | 20 |"))
    assert line.split(" | ")[3].startswith("+0.000 [") and line.split(" | ")[-1].startswith(f"{3 / 19:.3f} [")


def test_sign_test_matches_scipys_exact_binomial_test():
    """McNemar's exact test is the two-sided binomial test on the discordant pairs: checked against
    scipy's binomtest (not ours), and against the case that prompted it: 4 problems gained, none lost,
    which a bootstrap interval over 118 pairs calls a gain, is p = 0.125."""
    from scipy.stats import binomtest

    assert ls.sign_test([1.0] * 4 + [0.0] * 114) == (0.125, 4, 0)
    for up, down in ((9, 4), (4, 9), (12, 3), (1, 1), (0, 7), (20, 20), (31, 12)):
        p, u, d = ls.sign_test([1.0] * up + [-1.0] * down + [0.0] * 50)
        assert (u, d) == (up, down) and p == pytest.approx(binomtest(up, up + down, 0.5).pvalue, rel=1e-12)
    p, u, d = ls.sign_test([0.0] * 10)
    assert math.isnan(p) and (u, d) == (0, 0)


def test_summary_counts_the_problems_a_paired_accuracy_rests_on(tmp_path):
    """stepfix seed 0 gets problems 0-7 right where the SFT start got 0-9: 0 up, 2 down, p = 0.5; seed
    1 gets 10-12 right where the SFT start got none of 10-19: 3 up, 0 down, p = 0.25; pooled 3 / 2."""
    _paired_record(tmp_path, "sft", 0, [1.0] * 10 + [0.0] * 10)
    _paired_record(tmp_path, "stepfix", 0, [1.0] * 8 + [0.0] * 2, first_id=0)
    _paired_record(tmp_path, "stepfix", 1, [1.0] * 3 + [0.0] * 7, first_id=10)
    r = {(x["condition"], x["seed"], x["metric"]): x for x in ls.summary_rows(tmp_path, 200)}
    got = lambda seed: tuple(r[("stepfix", seed, f"acc_{k}_vs_sft")]["value"] for k in ("up", "down", "sign_p"))  # noqa: E731
    assert got(0) == (0.0, 2.0, 0.5) and got(1) == (3.0, 0.0, 0.25) and got("all") == (3.0, 2.0, 1.0)
    assert r[("stepfix", "all", "acc_sign_p_vs_sft")]["n"] == 5 and r[("stepfix", "all", "acc_up_vs_sft")]["n"] == 20
    ls.write_outputs(tmp_path, ls.TINY)
    line = next(x for x in (tmp_path / "summary.md").read_text().splitlines() if x.startswith("| stepfix | 1 | 20 |"))
    assert line.split(" | ")[4] == "3 / 2 (1.000)"


def test_summary_does_not_pool_overlapping_seed_blocks(tmp_path):
    _paired_record(tmp_path, "stepfix", 0, [1.0] * 10, first_id=0)
    _paired_record(tmp_path, "stepfix", 1, [0.0] * 10, first_id=5)  # problems 5-9 scored twice
    told = []
    rows = ls.summary_rows(tmp_path, 100, warn=told.append)
    assert not [x for x in rows if x["seed"] == "all"] and "overlap" in told[0]
    assert {x["seed"] for x in rows if x["metric"] == "acc"} == {0, 1}


def test_summary_rows_are_recomputed_from_the_samples_file(tmp_path):
    """A record's stored metrics can be stale (the metric code changed after it was scored): the
    summary takes the samples, not the record."""
    _paired_record(tmp_path, "stepfix", 0, [1.0] * 4 + [0.0] * 6)
    f = tmp_path / "cells" / "stepfix__s0__t1.json"
    rec = ls.read_json(f)
    rec["metrics"]["acc"] = [0.9, 0.8, 1.0, 10]
    ls.write_json(f, rec)
    acc = next(x for x in ls.summary_rows(tmp_path, 100) if x["metric"] == "acc")
    assert acc["value"] == pytest.approx(0.4)


@pytest.mark.parametrize("damage", ["truncated", "not_object", "missing", "no_name", "binary"])
def test_a_corrupt_samples_file_leaves_its_cell_out_with_a_reason(tmp_path, damage):
    """One broken samples file (a half-written line, a list for a row, a deleted file, a record naming
    none, bytes that are not text) used to stop --summarise with a bare JSON error: now that cell is
    left out, the reason names the file and line, and every other cell is still summarised."""
    _paired_record(tmp_path, "sft", 0, [1.0] * 5 + [0.0] * 5)
    _paired_record(tmp_path, "stepfix", 0, [1.0] * 4 + [0.0] * 6)
    sf = tmp_path / "samples" / "stepfix__s0__t1.jsonl"
    good = sf.read_text().splitlines()
    if damage == "truncated":
        sf.write_text("\n".join(good[:3] + [good[3][:17]]) + "\n")
    elif damage == "not_object":
        sf.write_text("\n".join(good[:2] + ["[1, 2]"]) + "\n")
    elif damage == "missing":
        sf.unlink()
    elif damage == "binary":
        sf.write_bytes(b"\xff\xfe\x00garbage")
    else:
        f = tmp_path / "cells" / "stepfix__s0__t1.json"
        ls.write_json(f, {k: v for k, v in ls.read_json(f).items() if k != "samples_file"})
    told = []
    rows = ls.summary_rows(tmp_path, 100, warn=told.append)
    assert {x["condition"] for x in rows} == {"sft"}
    assert len(told) == 1 and "stepfix__s0__t1" in told[0]
    if damage == "truncated":
        assert "stepfix__s0__t1.jsonl:4" in told[0] and "not JSON" in told[0]
    elif damage == "not_object":
        assert "stepfix__s0__t1.jsonl:3" in told[0] and "list" in told[0]
    ls.write_outputs(tmp_path, ls.TINY)  # the whole summary is still written
    assert "| sft |" in (tmp_path / "summary.md").read_text()


def test_crashed_and_interrupted_cells_are_recorded_and_retried(tmp_path, monkeypatch):
    budget = replace(ls.TINY, eval_tiers={"base": (), "sft": (1,), "trained": (), "strategy": ()})
    study = ls.Study(tmp_path, budget, only={"sft"})
    assert [c.id for c in study.cells] == ["sft__s0__train", "sft__s0__t1"]
    calls = []

    def train(cell):
        calls.append(cell.id)
        if len(calls) == 1:
            raise RuntimeError("trainer died")
        return {"adapter": str(tmp_path / "a")}

    monkeypatch.setattr(study, "run_train", train)
    monkeypatch.setattr(study, "run_eval", lambda cell: {"metrics": {}, "n": 0})
    res = study.run(progress=False)
    rec = json.loads((tmp_path / "cells" / "sft__s0__train.json").read_text())
    assert rec["status"] == "crashed" and "trainer died" in rec["error"] and res["crashed"] == 1
    assert study.status("sft__s0__t1") == "missing"  # its dependency failed: not run
    # a cell left "running" (the process died inside it) is recorded as crashed, then retried
    ls.write_json(tmp_path / "cells" / "sft__s0__train.json", {"cell": "sft__s0__train", "status": "running", "tries": 1})
    res = study.run(progress=False)
    assert res == {"done": 2, "crashed": 0, "ran": 2, "cells": 2}
    assert json.loads((tmp_path / "cells" / "sft__s0__train.json").read_text())["tries"] == 2
    assert study.run(progress=False)["ran"] == 0 and calls == ["sft__s0__train", "sft__s0__train"]


def test_max_cells_runs_the_study_in_pieces(tmp_path, monkeypatch):
    study = ls.Study(tmp_path, ls.TINY, only={"base_cot", "base_seventag"})
    monkeypatch.setattr(study, "run_eval", lambda cell: {"metrics": {}, "n": 0})
    assert study.run(max_cells=1, progress=False)["ran"] == 1
    assert study.run(max_cells=1, progress=False)["done"] == 2
    assert study.run(progress=False)["ran"] == len(study.cells) - 2


def test_tiny_refuses_the_committed_results_folder():
    with pytest.raises(SystemExit):
        ls.main(["--tiny"])


@pytest.mark.slow
def test_tiny_pipeline_end_to_end(tmp_path):
    """Every condition on a tiny random model: trainers through `python -m trainers.X --config`, lm-eval
    greedy on the tier tasks, the summary CSV / markdown / plots; a second run skips every cell."""
    out = tmp_path / "study"
    assert ls.main(["--tiny", "--out", str(out), "--quiet"]) == 0
    recs = {f.stem: json.loads(f.read_text()) for f in (out / "cells").glob("*.json")}
    assert recs and all(r["status"] == "done" for r in recs.values()), \
        {k: r.get("error", "")[:300] for k, r in recs.items() if r["status"] != "done"}
    assert not Path(recs["sft__s0__train"]["adapter"]).is_absolute()  # records stay portable
    assert all(r["peak_rss_gb"] > 0.05 for k, r in recs.items() if k.endswith("__train"))  # the trainer's own
    sft_adapter = str(out / recs["sft__s0__train"]["adapter"])
    for name in ("sft_cont", "dpo_ipo", "stepfix", "stepfix_baseline", "grpo_outcome", "grpo_position"):
        run = json.loads((out / "runs" / f"{name}-s0" / "run.json").read_text())
        assert run["status"] == "finished" and run["config"]["init_adapter"] == sft_adapter, name
    assert json.loads((out / "runs" / "stepfix_baseline-s0" / "run.json").read_text())["config"]["baseline"] == "r1"
    for name in ("stepfix", "grpo_position"):  # the RL runs' training samples, copied into the study folder
        rec = recs[f"{name}__s0__train"]
        assert rec["train_samples_file"] == f"train_samples/{name}__s0__train.jsonl", rec.get("train_samples_file")
        rows = [json.loads(x) for x in (out / rec["train_samples_file"]).read_text().splitlines()]
        assert rows and all(r["step"] == 1 for r in rows)
        assert rec["truncation"]["generated"] > 0 and rec["generation_cap"]["tokens"] == ls.TINY.gen_tokens
    assert recs["sft_cont__s0__train"]["train_samples_file"] is None
    with open(out / "summary.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["condition", "seed", "tier", "metric", "value", "ci_low", "ci_high", "n"]
    assert {r["condition"] for r in rows} == {c.name for c in ls.conditions(ls.TINY)}
    assert all((-1 if "_minus_" in r["metric"] else 0) <= float(r["value"]) <= 1 for r in rows if r["value"] != "nan")
    assert any(r["metric"] == "acc_minus_sft" for r in rows)
    assert (out / "accuracy.png").stat().st_size > 1000 and (out / "learning_curves.png").stat().st_size > 1000
    assert (out / "paired.png").stat().st_size > 1000  # every trained cell paired with the SFT start
    assert "| stepfix | 1 |" in (out / "summary.md").read_text()
    best = recs["full_best__s0__r3_demo_structured"]["best_adapter"]  # a whole task, the chosen adapter
    assert best["train_cell"] in recs and recs["full_base__s0__r3_demo_structured"]["n"] == 6
    before = {k: r["finished"] for k, r in recs.items()}
    ls.main(["--tiny", "--out", str(out), "--quiet"])
    after = {f.stem: json.loads(f.read_text())["finished"] for f in (out / "cells").glob("*.json")}
    assert after == before  # nothing re-run


def test_committed_sft_start_becomes_the_sft_cell(tmp_path, tiny):
    """A gpu_sft.py output folder (bf16 adapter parts) is taken as the done SFT cell: the adapter is
    reassembled inside the study folder, the record holds a path relative to it (portable when
    committed), every RL condition's init_adapter resolves to it, and taking it twice is a no-op."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    sys.path.insert(0, str(ROOT / "studies"))
    import gpu_sft

    base = tiny
    torch.manual_seed(0)
    peft_model = get_peft_model(AutoModelForCausalLM.from_pretrained(base),
                                LoraConfig(r=4, target_modules="all-linear", task_type="CAUSAL_LM"))
    peft_model.save_pretrained(tmp_path / "adapter")
    start = tmp_path / "sft_start"
    start.mkdir()
    assert gpu_sft.pack_adapter(tmp_path / "adapter", start)
    study = ls.Study(tmp_path / "study", ls.TINY, None)
    assert study.use_sft_start(start) == "taken"
    rec = json.loads((tmp_path / "study" / "cells" / "sft__s0__train.json").read_text())
    assert rec["status"] == "done" and not Path(rec["adapter"]).is_absolute()
    a = Path(study.adapter("sft__s0__train"))
    assert (a / "adapter_config.json").is_file() and (a / "adapter_model.safetensors").is_file()
    assert study.use_sft_start(start) == "done"
    rl = next(c for c in study.cells if c.tier is None and c.cond.kind == "trained")
    assert study.train_config(rl)["init_adapter"] == str(a)


def test_a_plain_adapter_folder_becomes_the_sft_cell(tmp_path, tiny):
    """A trainers.sft run's final/ (e.g. mixture_sft.py's sft_mix, which has seen every answer form of the
    mixture's pool) is taken as the SFT cell as it is: the same weights, recorded by their sha256."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    get_peft_model(AutoModelForCausalLM.from_pretrained(tiny), LoraConfig(r=4, target_modules="all-linear",
                                                                          task_type="CAUSAL_LM")).save_pretrained(
        tmp_path / "final")
    study = ls.Study(tmp_path / "study", ls.TINY, None)
    assert study.use_sft_start(tmp_path / "final") == "taken"
    a = Path(study.adapter("sft__s0__train"))
    assert ls.weights_sha256(a) == ls.weights_sha256(tmp_path / "final")
    rec = json.loads((tmp_path / "study" / "cells" / "sft__s0__train.json").read_text())
    assert rec["adapter_sha256"] == ls.weights_sha256(tmp_path / "final")


def test_a_second_study_process_on_one_folder_is_refused(tmp_path):
    """Two study processes on one folder would train the same cells into the same run folders."""
    import os
    import subprocess

    a = ls.Study(tmp_path, ls.TINY)
    lock = a.lock()
    assert lock.read_text() == str(os.getpid())
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock.write_text(str(other.pid))  # held by a live process that is not this one
        with pytest.raises(RuntimeError, match="another study process"):
            ls.Study(tmp_path, ls.TINY).lock()
    finally:
        other.kill()
        other.wait()
    # the holder is gone: the stale lock is taken over
    assert ls.Study(tmp_path, ls.TINY).lock().read_text() == str(os.getpid())


def test_an_interrupted_study_stops_its_trainer(tmp_path, monkeypatch):
    """Ctrl-C / SIGTERM inside a training cell stops the trainer subprocess (an orphan kept writing
    into the run folder that the next try resumes from)."""
    import subprocess

    started = []
    real_popen = subprocess.Popen

    class Popen(real_popen):
        def __init__(self, cmd, **kw):
            super().__init__([sys.executable, "-c", "import time; time.sleep(120)"], **kw)
            started.append(self)

        def wait(self, timeout=None):
            if timeout is None:  # the study waiting for its trainer: interrupted
                raise KeyboardInterrupt
            return super().wait(timeout)

    monkeypatch.setattr(ls.subprocess, "Popen", Popen)
    study = ls.Study(tmp_path, ls.TINY, only={"sft"})
    monkeypatch.setattr(study, "train_config", lambda cell: {"output_dir": str(tmp_path / "run")})
    with pytest.raises(KeyboardInterrupt):
        study.run_train(ls.Cell(ls.conditions(ls.TINY)[2], 0))
    assert started and started[0].poll() is not None  # terminated, not left running


def test_sigterm_to_the_study_stops_its_trainer(tmp_path):
    """`kill PID` of a study inside a training cell: its trainer subprocess must not live on."""
    import os
    import signal
    import subprocess
    import time

    pidfile = tmp_path / "trainer.pid"
    code = f"""
import subprocess, sys
sys.path.insert(0, {str(ROOT / "studies")!r})
import learning_study as ls
real = subprocess.Popen
class Popen(real):
    def __init__(self, cmd, **kw):
        super().__init__([sys.executable, "-c", "import time; time.sleep(120)"], **kw)
        open({str(pidfile)!r}, "w").write(str(self.pid))
ls.subprocess.Popen = Popen
ls.unwind_on_sigterm()
study = ls.Study(ls.Path({str(tmp_path)!r}), ls.TINY, only={{"sft"}})
study.train_config = lambda cell: {{"output_dir": {str(tmp_path / "run")!r}}}
study.run_train(ls.Cell(ls.conditions(ls.TINY)[2], 0))
"""
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    for _ in range(600):
        if pidfile.is_file() and pidfile.read_text():
            break
        time.sleep(0.1)
    child = int(pidfile.read_text())
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=120)
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the trainer subprocess outlived the study")


def test_each_training_cell_is_followed_by_its_evaluations():
    cl = ls.cells(ls.FULL)
    assert [c.id for c in cl if c.tier is None][0] == "sft__s0__train"  # before all that continue it
    for i, c in enumerate(cl):
        if c.tier is None:
            k = len(ls.FULL.eval_tiers[c.cond.kind])
            assert [e.id for e in cl[i + 1:i + 1 + k]] == [ls.Cell(c.cond, c.seed, t).id
                                                           for t in ls.FULL.eval_tiers[c.cond.kind]]


def test_a_done_training_cell_without_its_adapter_is_trained_again(tmp_path, monkeypatch):
    """Run folders are not committed: in a fresh checkout a trained cell is 'done' but its adapter is
    gone; while its evaluations are pending it must be trained again, not crash every evaluation."""
    study = ls.Study(tmp_path, ls.TINY, only={"sft", "sft_cont"})
    ls.write_json(study.record_path("sft__s0__train"), {"status": "done", "adapter": "sft_adapter"})
    (tmp_path / "sft_adapter").mkdir()
    (tmp_path / "sft_adapter" / "adapter_config.json").write_text("{}")
    ls.write_json(study.record_path("sft__s0__t1"), {"status": "done"})
    ls.write_json(study.record_path("sft_cont__s0__train"), {"status": "done", "adapter": "runs/gone/final"})
    cont = ls.Cell(ls.conditions(ls.TINY)[3], 0)
    assert study.adapter_missing(cont)
    # --plan counts the training again (it read "done" and left it out of the pending time)
    line = [ln for ln in ls.plan(study).splitlines() if ln.startswith("  sft_cont__s0__train ")][0]
    assert line.split()[1] == "retrain"
    trained, scored = [], []

    def run_train(cell):
        trained.append(cell.id)
        d = tmp_path / "runs" / "again" / "final"
        d.mkdir(parents=True)
        (d / "adapter_config.json").write_text("{}")
        return {"adapter": "runs/again/final"}

    monkeypatch.setattr(study, "run_train", run_train)
    monkeypatch.setattr(study, "run_eval", lambda cell: scored.append(cell.id) or {"n": 0})
    study.run(progress=False)
    assert trained == ["sft_cont__s0__train"] and scored == ["sft_cont__s0__t1"]
    assert not study.adapter_missing(cont)  # its evaluation is done (and the adapter is here)
    line = [ln for ln in ls.plan(study).splitlines() if ln.startswith("  sft_cont__s0__train ")][0]
    assert line.split()[1] == "done"


def test_every_trained_condition_has_one_learning_rate():
    """One movement budget: with Adam a step moves each weight by ~lr whatever the loss's scale. GRPO
    ran at trainers.grpo's default 1e-5 (5x below the others) and stayed within KL 0.0004 of its start."""
    lrs = {c.name: c.overrides.get("learning_rate") for c in ls.conditions(ls.FULL) if c.kind == "trained"}
    assert set(lrs.values()) == {ls.FULL.rl_lr}, lrs
    steps = {c.overrides.get("max_steps") for c in ls.conditions(ls.FULL) if c.kind == "trained"}
    assert steps == {ls.FULL.rl_steps}


def _grpo():
    return next(c for c in ls.conditions(ls.TINY) if c.name == "grpo_outcome")


def _drifted_study(tmp_path, monkeypatch, recorded: dict | None, config: dict | None = None):
    """A study whose grpo_outcome seed 0 was trained and scored under `recorded` settings (in the record)
    or `config` (only in the config file the cell wrote, as records did before 'overrides')."""
    import yaml

    study = ls.Study(tmp_path, ls.TINY, only={"sft", "grpo_outcome"})
    grpo = _grpo()
    ad = tmp_path / "runs" / "grpo_outcome-s0" / "final"
    ad.mkdir(parents=True)
    (ad / "adapter_config.json").write_text("{}")
    (tmp_path / "runs" / "grpo_outcome-s0" / "checkpoint-1").mkdir()
    for cid in ("sft__s0__train", "sft__s0__t1"):
        ls.write_json(study.record_path(cid), {"status": "done", "adapter": "sft_adapter"})
    rec = {"status": "done", "condition": "grpo_outcome", "seed": 0, "tier": None,
           "adapter": "runs/grpo_outcome-s0/final"}
    if recorded is not None:
        rec["overrides"] = recorded
    if config is not None:
        (tmp_path / "configs").mkdir()
        (tmp_path / "configs" / "grpo_outcome__s0__train.yaml").write_text(yaml.safe_dump(config))
        rec["config_file"] = "configs/grpo_outcome__s0__train.yaml"
    ls.write_json(study.record_path("grpo_outcome__s0__train"), rec)
    _paired_record(tmp_path, "grpo_outcome", 0, [1.0, 0.0])
    trained, scored = [], []

    def run_train(cell):
        trained.append(cell.id)
        return {"adapter": "runs/grpo_outcome-s0/final", "overrides": ls._plain(cell.cond.overrides)}

    monkeypatch.setattr(study, "run_train", run_train)
    monkeypatch.setattr(study, "run_eval", lambda cell: scored.append(cell.id) or {"n": 0})
    return study, grpo, trained, scored


def test_a_cell_trained_under_other_settings_is_retired_and_run_again(tmp_path, monkeypatch):
    """The study keys cells by name: a done cell trained at another learning rate would have been kept
    and pooled with seeds trained under the design. Now it and its evaluations move to superseded/ (with
    why), its run folder is set aside (a resume must not continue its checkpoints), and they run again."""
    study, grpo, trained, scored = _drifted_study(tmp_path, monkeypatch, {**ls._plain(_grpo().overrides),
                                                                          "learning_rate": 1e-5})
    assert "redo" in ls.plan(study).split("grpo_outcome__s0__t1")[1].splitlines()[0]
    study.run(progress=False)
    assert trained == ["grpo_outcome__s0__train"] and scored == ["grpo_outcome__s0__t1"]
    [dest] = list((tmp_path / "superseded").iterdir())
    why = json.loads((dest / "why.json").read_text())
    assert why["cells"] == ["grpo_outcome__s0__train", "grpo_outcome__s0__t1"]
    assert why["drift"] == {"learning_rate": {"recorded": 1e-5, "design": ls.TINY.rl_lr}}
    old = json.loads((dest / "cells" / "grpo_outcome__s0__t1.json").read_text())
    assert (tmp_path / old["samples_file"]).is_file() and not (tmp_path / "samples" / "grpo_outcome__s0__t1.jsonl").exists()
    assert not (tmp_path / "runs" / "grpo_outcome-s0").exists()
    assert len(list((tmp_path / "runs").glob("grpo_outcome-s0.superseded-*/checkpoint-1"))) == 1
    # the new record holds the design's settings: nothing to retire the next time
    assert study.design_drift(ls.Cell(grpo, 0)) == {} and ls.read_json(study.record_path("grpo_outcome__s0__train"))["overrides"]
    for d in ("grpo_outcome-s0", next((tmp_path / "runs").glob("*.superseded-*")).name):
        (tmp_path / "runs" / d).mkdir(exist_ok=True)
        (tmp_path / "runs" / d / "metrics.jsonl").write_text("")
    assert [f.parent.name for f in ls.curve_runs(tmp_path)] == ["grpo_outcome-s0"]  # the retired run is not drawn
    study.run(progress=False)
    assert len(trained) == 1 and len(list((tmp_path / "superseded").iterdir())) == 1


def test_settings_are_read_from_the_config_file_of_older_records(tmp_path, monkeypatch):
    study, grpo, trained, _ = _drifted_study(tmp_path, monkeypatch, None,
                                              config={**ls._plain(_grpo().overrides), "learning_rate": 1e-5, "seed": 0})
    assert study.design_drift(ls.Cell(grpo, 0)) == {"learning_rate": (1e-5, ls.TINY.rl_lr)}
    study.run(progress=False)
    assert trained == ["grpo_outcome__s0__train"]


@pytest.mark.parametrize("recorded", ["same", "nothing"])
def test_a_cell_under_the_design_settings_or_with_none_recorded_is_kept(tmp_path, monkeypatch, recorded):
    study, grpo, trained, scored = _drifted_study(
        tmp_path, monkeypatch, ls._plain(_grpo().overrides) if recorded == "same" else None)
    assert study.design_drift(ls.Cell(grpo, 0)) == {}
    study.run(progress=False)
    assert trained == [] and scored == [] and not (tmp_path / "superseded").exists()


def test_seeds_filter_runs_one_seed_of_every_condition_first():
    """--seeds 0: every condition's seed-0 cells (the untrained ones have seed 0 only), no seed 1 or 2."""
    b = ls.FULL
    first = ls.cells(b, seeds={0})
    assert {c.seed for c in first} == {0}
    assert {c.cond.name for c in first} == {c.name for c in ls.conditions(b)}
    rest = ls.cells(b, seeds={1, 2})
    assert {c.cond.kind for c in rest} == {"trained"}
    assert {c.id for c in first} | {c.id for c in rest} == {c.id for c in ls.cells(b)}
    assert ls.main(["--plan", "--seeds", "1", "--out", "/nonexistent-study-folder"]) == 0


def test_evaluation_model_is_the_adapter_merged(tmp_path, tiny):
    """The study scores a trained cell with its LoRA adapter merged into the weights: the same logits as
    the unmerged PeftModel (lm-eval's peft= path) up to float rounding."""
    import torch
    from peft import LoraConfig, PeftModel, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    pm = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny),
                        LoraConfig(r=4, target_modules="all-linear", task_type="CAUSAL_LM", init_lora_weights=False))
    pm.save_pretrained(tmp_path / "adapter")
    ids = torch.randint(3, 100, (2, 12))
    with torch.no_grad():
        ref = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny), tmp_path / "adapter").eval()(ids).logits
        base = AutoModelForCausalLM.from_pretrained(tiny).eval()(ids).logits
        got = ls.merged_model(tiny, str(tmp_path / "adapter"))(ids).logits
    assert not torch.allclose(ref, base, atol=1e-3)  # the adapter changes the function
    assert torch.allclose(got, ref, atol=1e-4)


def test_plan_uses_measured_seconds_of_done_cells(tmp_path):
    """A pending cell whose condition already has a done cell on the same tier is planned at that cell's
    measured time (per problem for evaluations), not at the throughput constants."""
    study = ls.Study(tmp_path, ls.FULL)
    (tmp_path / "cells").mkdir()
    ls.write_json(tmp_path / "cells" / "dpo_ipo__s0__train.json", {"status": "done", "condition": "dpo_ipo",
                                                                    "tier": None, "seconds": 3600.0})
    ls.write_json(tmp_path / "cells" / "dpo_ipo__s0__t1.json", {"status": "done", "condition": "dpo_ipo",
                                                                 "tier": 1, "n": 100, "seconds": 500.0})
    lines = {ln.split()[0]: ln for ln in ls.plan(study).splitlines() if ln.startswith("  ")}
    assert "60.0 min (measured)" in lines["dpo_ipo__s1__train"]
    k = len(ls.doc_indices(ls.Cell(ls.conditions(ls.FULL)[4], 1, 1), ls.FULL))
    assert f"{5 * k / 60:.1f} min (measured)" in lines["dpo_ipo__s1__t1"]
    assert "(estimate)" in lines["stepfix__s1__train"]
    assert "done" in lines["dpo_ipo__s0__train"]


def test_plan_borrows_the_measured_time_of_a_condition_with_the_same_trainer(tmp_path):
    """stepfix_baseline runs trainers.stepfix like stepfix: with only stepfix measured, its cells are
    planned at stepfix's time (they were planned at the throughput constants, ~3.5x too low here)."""
    study = ls.Study(tmp_path, ls.FULL)
    (tmp_path / "cells").mkdir()
    ls.write_json(tmp_path / "cells" / "stepfix__s0__train.json", {"status": "done", "condition": "stepfix",
                                                                    "tier": None, "seconds": 1800.0})
    lines = {ln.split()[0]: ln for ln in ls.plan(study).splitlines() if ln.startswith("  ")}
    assert "30.0 min (measured, trainers.stepfix)" in lines["stepfix_baseline__s2__train"]
    assert "30.0 min (measured)" in lines["stepfix__s1__train"]
    assert "(estimate)" in lines["grpo_position__s0__train"]  # another trainer: nothing to borrow
    assert "(estimate)" in lines["stepfix_baseline__s0__t1"]  # no evaluation measured yet


def test_full_best_scores_the_best_condition_once_every_tier1_evaluation_is_done(tmp_path):
    """full_best waits until the SFT start and every trained condition have their tier-1 evaluations,
    then takes the condition with the highest pooled tier-1 accuracy and its first seed (not its best
    seed: each seed scored its own block of problems, so "best" would partly pick the easiest block)."""
    study = ls.Study(tmp_path, ls.FULL)
    (tmp_path / "cells").mkdir()
    t1 = [c for c in ls.cells(ls.FULL) if c.tier == 1 and c.cond.kind in ("sft", "trained")]
    acc = {("sft", 0): 0.05, ("stepfix", 0): 0.10, ("stepfix", 1): 0.20, ("stepfix", 2): 0.0,
           ("dpo_ipo", 0): 0.12, ("dpo_ipo", 1): 0.08, ("dpo_ipo", 2): 0.08}
    for c in t1[:-1]:
        ls.write_json(study.record_path(c.id), {"status": "done", "metrics": {"acc": [acc.get((c.cond.name, c.seed), 0.01),
                                                                                    0, 0, 119]}})
    assert study.best_adapter() is None  # one evaluation still pending
    c = t1[-1]
    ls.write_json(study.record_path(c.id), {"status": "done", "metrics": {"acc": [0.01, 0, 0, 119]}})
    best = study.best_adapter()
    assert (best["condition"], best["seed"], best["train_cell"]) == ("stepfix", 0, "stepfix__s0__train")
    assert best["tier1_acc_pooled"] == pytest.approx(0.1)
    full = [c for c in ls.cells(ls.FULL) if c.cond.kind == "full"]
    assert {c.id for c in full} == {f"{n}__s0__{t}" for n in ("full_base", "full_best") for t in ls.FULL.full_tasks}
    assert all(ls.depends_on(c) is None for c in full)


def test_one_colour_per_condition_in_every_plot(tmp_path):
    """A condition keeps its colour in every plot (issue 35): the paired plot shows a subset of the
    conditions and used to repaint them by their place in that subset."""
    rows = []
    for c in ("sft", "sft_cont", "stepfix", "grpo_outcome"):
        for seed in (0, "all"):
            for m, v in (("acc", 0.3), ("acc_minus_sft", 0.01), ("step_reward_minus_sft", 0.02)):
                if c == "sft" and m != "acc":
                    continue
                rows.append({"condition": c, "seed": seed, "tier": 1, "metric": m, "value": v,
                             "ci_low": v - 0.05, "ci_high": v + 0.05, "n": 100})
    for run in ("stepfix-s0", "stepfix-s1", "sft_cont-s0"):
        d = tmp_path / "runs" / run
        d.mkdir(parents=True)
        (d / "metrics.jsonl").write_text(json.dumps({"step": 1, "loss": 1.0}) + "\n")
    used = ls.plots(tmp_path, rows, ["sft", "sft_cont", "stepfix", "grpo_outcome"])
    for c in ("sft_cont", "stepfix", "grpo_outcome"):
        assert used["accuracy"][c] == used["paired"][c] == ls.colour_of(c)
    assert used["learning_curves"]["stepfix-s0"] == used["learning_curves"]["stepfix-s1"] == ls.colour_of("stepfix")
    names = [c.name for c in ls.conditions(ls.Budget())]
    names += [c.name for c in ls.conditions(ls.MIXTURE) if c.name not in names]
    # distinct as drawn, not only as spelled: "C5" and "#8c564b" are the same brown (bestofn took stepfix's)
    from matplotlib.colors import to_hex
    assert len({to_hex(ls.colour_of(c)) for c in names}) == len(names)
    for f in ("accuracy.png", "paired.png", "learning_curves.png"):
        assert (tmp_path / f).stat().st_size > 1000


def test_each_runs_step_log_is_committed_and_its_adapter_and_checkpoints_are_not():
    """Issue 35 item 4: the metrics.jsonl of every run is committed (learning_curves.png is drawn from it);
    the run folder's adapters, checkpoints and run.json (machine paths) stay out of git."""
    import subprocess

    def ignored(p: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", p], cwd=ROOT).returncode == 0

    for study in ("results/learning", "results/learning/mixture"):
        assert not ignored(f"{study}/runs/stepfix-s0/metrics.jsonl")
        assert not ignored(f"{study}/runs/grpo_position-s1.superseded-20261206/metrics.jsonl")
        for p in ("final/adapter_model.safetensors", "checkpoint-4/trainer_state.json", "run.json", "export.jsonl"):
            assert ignored(f"{study}/runs/stepfix-s0/{p}"), p


def test_summarising_without_the_run_folders_keeps_the_learning_curves_plot(tmp_path):
    """A fresh clone of a study whose run folders were never committed has no metrics.jsonl: --summarise
    used to redraw learning_curves.png empty over the committed plot."""
    rows = [{"condition": "sft", "seed": 0, "tier": 1, "metric": "acc", "value": 0.3, "ci_low": 0.2, "ci_high": 0.4,
             "n": 100}]
    (tmp_path / "learning_curves.png").write_bytes(b"the plot drawn where the runs were")
    ls.plots(tmp_path, rows, ["sft"])
    assert (tmp_path / "learning_curves.png").read_bytes() == b"the plot drawn where the runs were"
    assert (tmp_path / "accuracy.png").stat().st_size > 1000
    d = tmp_path / "runs" / "stepfix-s0"
    d.mkdir(parents=True)
    (d / "metrics.jsonl").write_text(json.dumps({"step": 1, "loss": 1.0}) + "\n")
    ls.plots(tmp_path, rows, ["sft"])  # with a run's metrics: drawn again
    assert (tmp_path / "learning_curves.png").read_bytes().startswith(b"\x89PNG")


def test_the_mixture_plan_borrows_the_tiers_studys_training_times_and_a_shared_cells_generation(tmp_path):
    """The mixture design's --plan put its cells at the throughput constants (stepfix ~12 min where the
    tiers study measured ~27; scoring ~17 where it took ~25): it now borrows the tiers study's measured
    training cells of the same trainer, and the generation time of a cell it re-scored (shared)."""
    out = tmp_path / "mixture"
    study = ls.Study(out, ls.MIXTURE)
    ls.write_json(tmp_path / "cells" / "stepfix__s0__train.json", {"status": "done", "condition": "stepfix",
                                                                    "tier": None, "seconds": 1800.0})
    ls.write_json(tmp_path / "cells" / "sft__s0__train.json", {"status": "done", "condition": "sft",  # not an RL
                                                                "tier": None, "seconds": 9000.0})  # trainer's
    ls.write_json(out / "cells" / "sft__s0__learning.json", {"status": "done", "condition": "sft", "tier": "learning",
                                                             "n": 400, "seconds": 60.0, "generation_seconds": 1200.0,
                                                             "shared": {"record": "x"}})
    lines = {ln.split()[0]: ln for ln in ls.plan(study).splitlines() if ln.startswith("  ")}
    assert "30.0 min (measured, trainers.stepfix in the tiers study)" in lines["stepfix__s1__train"]
    assert "20.0 min (measured, other adapters on this set)" in lines["stepfix__s0__learning"]
    assert "(estimate)" in lines["sft_cont__s0__train"]  # trainers.sft: only the SFT start measured there
    assert "(estimate)" in ls.plan(ls.Study(tmp_path / "tiers", ls.FULL)).split("stepfix__s0__train")[1].splitlines()[0]


@pytest.mark.parametrize("limit,suffix", [(1 << 20, ".jsonl"), (10, ".jsonl.gz")])
def test_a_training_cell_copies_its_training_samples_into_the_study(tmp_path, monkeypatch, limit, suffix):
    """run_train copies the trainer's samples file (stepfix_samples.jsonl / grpo_samples.jsonl, in the
    git-ignored run folder) to OUT/train_samples/<cell>.jsonl, gzip-compressed past TRAIN_SAMPLES_GZIP_BYTES,
    and records it with the run's sampling record (cap, truncation, start check); retire moves it."""
    import gzip
    import subprocess

    run_dir = tmp_path / "run"
    lines = [json.dumps({"step": 1, "id": str(i), "y1": "x" * 50, "r1": 0.25}) + "\n" for i in range(3)]

    class Popen(subprocess.Popen):  # a trainer double: writes what trainers.stepfix writes, exits 0
        def __init__(self, cmd, **kw):
            run_dir.mkdir(parents=True, exist_ok=True)
            (run_dir / "stepfix_samples.jsonl").write_text("".join(lines))
            (run_dir / "run.json").write_text(json.dumps({
                "status": "finished", "adapter": str(run_dir / "final"), "global_step": 1,
                "truncation": {"generated": 8, "truncated": 1, "truncated_frac": 0.125},
                "generation_cap": {"tokens": 499, "source": "derived"}}))
            super().__init__([sys.executable, "-c", "pass"], **kw)

    monkeypatch.setattr(ls.subprocess, "Popen", Popen)
    monkeypatch.setattr(ls, "TRAIN_SAMPLES_GZIP_BYTES", limit)
    study = ls.Study(tmp_path, ls.TINY, only={"stepfix"})
    monkeypatch.setattr(study, "train_config", lambda cell: {"output_dir": str(run_dir)})
    cell = ls.Cell(next(c for c in ls.conditions(ls.TINY) if c.name == "stepfix"), 0)
    res = study.run_train(cell)
    path = tmp_path / res["train_samples_file"]
    assert res["train_samples_file"] == f"train_samples/stepfix__s0__train{suffix}" and path.is_file()
    raw = gzip.decompress(path.read_bytes()) if suffix.endswith(".gz") else path.read_bytes()
    assert raw.decode() == "".join(lines)
    assert res["truncation"]["truncated"] == 1 and res["generation_cap"]["tokens"] == 499
    ls.write_json(study.record_path(cell.id), {"cell": cell.id, "status": "done", **res})
    dest = study.retire(cell, {"learning_rate": (1.0, 2.0)})
    assert not path.exists() and (dest / "train_samples" / path.name).is_file()


def test_a_cell_without_training_samples_records_none(tmp_path):
    study = ls.Study(tmp_path, ls.TINY, only={"sft_cont"})
    (tmp_path / "run").mkdir()
    assert study.save_train_samples(ls.Cell(ls.conditions(ls.TINY)[3], 0), tmp_path / "run") is None
