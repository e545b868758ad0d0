"""A new user's first hour (issue 37): the trainers say when a step has nothing to learn, printed
commands keep what they run, the demo finds the data and states its times, samples say what was
checked, wrong task names fail early, plots and the leaderboard read right, `r3bench doctor`."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


# ---- 1. nothing to learn ----------------------------------------------------------------------------

def test_nothing_to_learn_names_the_reason():
    from trainers import common

    assert common.nothing_to_learn(n=4, format_failures=4, rewards=[0.0] * 4).startswith("all 4 samples failed")
    assert "same reward" in common.nothing_to_learn(n=4, format_failures=0, rewards=[0.25] * 4)
    assert "no sample" in common.nothing_to_learn(n=4, format_failures=0, rewards=[])
    assert common.nothing_to_learn(n=4, format_failures=1, rewards=[0.0, 0.25, 0.5]) is None
    assert common.nothing_to_learn(n=0, format_failures=0, rewards=[]) is None  # no step at all


def test_phase_progress_prints_on_the_first_and_on_long_steps():
    import io

    from trainers import common

    out, now = io.StringIO(), [0.0]
    p = common.PhaseProgress(long_s=60, out=out, clock=lambda: now[0])
    p.begin_step(1)
    p.phase("generating y1 for 4 problems")
    now[0] = 5.0
    p.end_step()
    text = out.getvalue()
    assert "step 1" in text and "generating y1 for 4 problems" in text
    p.begin_step(2)  # the last step took 5 s: quiet
    p.phase("generating")
    now[0] = 100.0
    p.end_step()
    assert out.getvalue() == text
    p.begin_step(3)  # the last step took 95 s: lines again
    p.phase("verifying")
    assert "step 3" in out.getvalue() and "verifying" in out.getvalue()


@pytest.mark.slow
def test_stepfix_on_a_model_that_never_writes_the_format_warns_and_counts(tiny, data, tmp_path, capsys):
    """The tiny random model fails the seven-tag format on every sample: r1 = r2 = 0, a loss of ~0.
    The run says so on stderr, with what to do, and counts it in metrics.jsonl and run.json."""
    from trainers import common, stepfix

    cfg = common.make(stepfix.Config, model=tiny, data=data, output_dir=str(tmp_path), max_steps=1, batch_size=2,
                      grad_accum=1, save_steps=5, eval_tasks="", report_to="none", max_length=4096, seed=0,
                      max_new_tokens=4)
    stepfix.train(cfg)
    err = capsys.readouterr().err
    assert "nothing to learn" in err and "failed the seven-tag format" in err and "SFT" in err
    logs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    step = next(d for d in logs if "skip_rate" in d)
    assert step["nothing_to_learn"] == 1
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["nothing_to_learn_steps"] == 1 and run["global_step"] == 1
    assert "step 1" in err and "generating" in err  # progress inside the (first) step


@pytest.mark.slow
def test_grpo_with_one_reward_for_every_sample_warns_and_counts(tiny, data, tmp_path, capsys):
    from trainers import common, grpo

    cfg = common.make(grpo.Config, model=tiny, data=data, output_dir=str(tmp_path), max_steps=1, batch_size=4,
                      grad_accum=1, save_steps=5, eval_tasks="", report_to="none", max_length=4096, seed=0,
                      group_size=2, max_completion_length=4, rewards="position")
    grpo.train(cfg)
    err = capsys.readouterr().err
    assert "nothing to learn" in err and "same reward" in err
    logs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert next(d for d in logs if "loss" in d)["nothing_to_learn"] == 1
    assert json.loads((tmp_path / "run.json").read_text())["nothing_to_learn_steps"] == 1
