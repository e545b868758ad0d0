"""Training logs people can read (issue 56 item 4): per error class, the verifier's verdict shares and
the reward each class earned, in every training log of the RL trainers (metrics.jsonl and TRL's
`report_to`, read back here from a real TensorBoard event file), and the verdict of each GRPO sample.

Columns (trainers.rl_sampling.VerdictTally): ``verdicts/<group>/<class>`` (the class's share of the
group's verdicts in the logging window) and ``reward_by_class/<group>/<class>`` (its mean reward). Groups:
stepfix y1, y2, y2_after and gain_after (a revision's reward and r2 - r1 by the class of the first
attempt's error, the feedback the paper tailors to the class); GRPO each step-level reward by name."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainers import grpo, stepfix  # noqa: E402
from trainers import rl_sampling as rl  # noqa: E402
from trainers.core.config import make  # noqa: E402
from verifiers import rewards
from verifiers.steps import StepVerdict

from test_trainers import verifier_double_trainer  # noqa: E402
from trainer_kw import base_kw  # noqa: E402


def _steps(out: Path) -> list[dict]:
    return [m for m in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if "loss" in m]


# ---------------------------------------------------------------- the tally


def test_tally_gives_shares_and_means_per_group_and_class():
    t = rl.VerdictTally()
    for cls, r in (("CE", 0.25), ("CE", 0.75), ("MC", 0.125), ("correct", 1.0)):
        t.add("y1", cls, r)
    t.add("y1", None, 0.5)  # no class: not booked
    t.add("y2", "FORMAT", 0.0)
    t.add("gain", "CE", -0.5, share=False)
    t.add("y2", "CE", None)  # a verdict without a reward: its share only
    logs = t.logs()
    assert logs["verdicts/y1/CE"] == 0.5 and logs["verdicts/y1/MC"] == 0.25 and logs["verdicts/y1/correct"] == 0.25
    assert logs["reward_by_class/y1/CE"] == pytest.approx(0.5) and logs["reward_by_class/y1/correct"] == 1.0
    assert logs["verdicts/y2/FORMAT"] == 0.5 and logs["verdicts/y2/CE"] == 0.5
    assert "reward_by_class/y2/CE" not in logs and logs["reward_by_class/y2/FORMAT"] == 0.0
    assert logs["reward_by_class/gain/CE"] == -0.5 and "verdicts/gain/CE" not in logs
    assert t.logs() == {}  # the window starts over


def test_tally_ignores_a_nan_reward():
    t = rl.VerdictTally()
    t.add("g", "CE", float("nan"))
    t.add("g", "CE", 0.5)
    assert t.logs() == {"verdicts/g/CE": 1.0, "reward_by_class/g/CE": 0.5}


# ---------------------------------------------------------------- the reward's verdict class


@pytest.mark.parametrize("verdict,label", [
    (StepVerdict(0, None, "ok", 7), "correct"),
    (StepVerdict(3, "CM", "wrong law", 7), "CM"),
    (StepVerdict(6, "CE", "slip", 7), "CE"),
    (StepVerdict(1, "MC", "misread", 7), "MC"),
    (StepVerdict(2, "FORMAT", "broken tag", 7), "FORMAT"),
    (StepVerdict(0, None, "unreachable", 7, valid=False), None),
])
def test_step_reward_carries_the_verdict_class(verdict, label):
    assert rewards.step_reward(verdict).verdict == label


from verifiers.seventag import TAGS  # noqa: E402

SEVEN = "".join(f"<{t}>{'5 m' if t == 'final_answer' else 'x'}</{t}>" for t in TAGS)


def test_the_position_reward_books_every_completion_it_pays():
    """The verifier's class where it gave one; FORMAT for what the adapter zeroes before any verifier
    (no tags, empty, several boxed answers); None where no verdict was had (ok False)."""
    def verifier(q, text, a):
        if "boom" in text:
            raise RuntimeError("verifier down")
        return StepVerdict(5, "CE", "slip", 7)

    f = rewards.position_reward_func(verifier, answer_column=None)
    # (text after </final_answer> is read by no reward: "boom" goes inside a step)
    comps = [SEVEN, "no tags at all", "", r"\boxed{1} and \boxed{2}", SEVEN.replace("<principle>x", "<principle>boom")]
    f(prompts=["q"] * len(comps), completions=comps)
    got = [(r.value, r.ok, r.verdict) for r in f.last_results]
    assert got[0] == (pytest.approx(5 / 8), True, "CE")
    assert got[1] == (0.0, True, "FORMAT") and got[2] == (0.0, True, "FORMAT") and got[3] == (0.0, True, "FORMAT")
    assert got[4][1] is False and got[4][2] is None


def test_an_outcome_reward_books_no_verdict():
    f = rewards.outcome_reward_func()
    f(prompts=["q"], completions=[SEVEN], answer=["5 m"])
    assert [r.verdict for r in f.last_results] == [None]


# ---------------------------------------------------------------- in the trainers' logs


def _scalars(out: Path) -> dict[str, list[float]]:
    """Every scalar of the run's TensorBoard event files (real files, read with TensorBoard's reader)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    files = sorted(out.rglob("events.out.tfevents.*"))
    assert files, "no TensorBoard event file under the run"
    got: dict[str, list[float]] = {}
    for f in files:
        acc = EventAccumulator(str(f))
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            got.setdefault(tag, []).extend(e.value for e in acc.Scalars(tag))
    return got


@pytest.mark.slow
def test_stepfix_logs_verdict_shares_and_rewards_per_class_to_tensorboard(tiny, data, tmp_path):
    """Two real steps; the verifier double books every y1 CE at step 2 (r1 2/8) and every y2 CM at step 5
    (r2 5/8): each step's log has y1 all CE with reward 0.25, y2 all CM with 0.625, the revisions after a
    CE earning 0.625 and gaining 0.375, in metrics.jsonl and in the TensorBoard file (report_to)."""
    ce, cm = StepVerdict(2, "CE", "double", 7), StepVerdict(5, "CM", "double", 7)
    T = verifier_double_trainer([ce, ce, cm, cm])  # by call: a step verifies its 2 y1, then its 2 y2
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2, report_to="tensorboard"),
               max_new_tokens=6, start_check_n=0)
    stepfix.train(cfg, trainer_cls=T)
    steps = _steps(tmp_path)
    assert len(steps) == 2
    want = {"verdicts/y1/CE": 1.0, "reward_by_class/y1/CE": 0.25, "verdicts/y2/CM": 1.0,
            "reward_by_class/y2/CM": 0.625, "verdicts/y2_after/CE": 1.0, "reward_by_class/y2_after/CE": 0.625,
            "reward_by_class/gain_after/CE": 0.375}
    for m in steps:
        assert {k: m.get(k) for k in want} == pytest.approx(want)
        assert not any(k.startswith("verdicts/y1/") and k != "verdicts/y1/CE" for k in m)
    tb = _scalars(tmp_path)
    for k, v in want.items():
        assert tb.get(f"train/{k}") == pytest.approx([v, v]), k


class _LabelReward(rewards.RewardFunc):
    """A step-level reward whose verdict class follows the completion's length (odd: CE at step 4,
    paid 0.5; even: correct, 1.0): the tiny random model writes no seven tags, so the position reward
    would book every completion FORMAT."""
    step_level = True

    def __init__(self):
        super().__init__("label_reward")

    def _score(self, text, question, row):
        odd = len(text) % 2 == 1
        return rewards.RewardResult(0.5 if odd else 1.0, True, "by length", "CE" if odd else "correct")


@pytest.mark.slow
def test_grpo_logs_verdicts_per_reward_and_writes_them_with_each_sample(tiny, data, tmp_path, monkeypatch):
    monkeypatch.setitem(grpo.REWARD_FACTORIES, "label", lambda cfg: _LabelReward())
    cfg = make(grpo.Config, **base_kw(tiny, data, tmp_path, max_steps=2, batch_size=4), group_size=2,
               rewards="label", max_completion_length=8, start_check_n=0)
    grpo.train(cfg)
    recs = [json.loads(x) for x in (tmp_path / "grpo_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 8
    for r in recs:
        want = "CE" if len(r["completion"]) % 2 else "correct"
        assert r["verdicts"] == {"label_reward": want}
        assert r["rewards"]["label_reward"] == (0.5 if want == "CE" else 1.0)
    for m in _steps(tmp_path):
        rs = [r for r in recs if r["step"] == m["step"]]
        share = sum(r["verdicts"]["label_reward"] == "CE" for r in rs) / len(rs)
        assert m.get("verdicts/label_reward/CE", 0.0) == pytest.approx(share)
        assert m.get("verdicts/label_reward/correct", 0.0) == pytest.approx(1 - share)
        if share:
            assert m["reward_by_class/label_reward/CE"] == 0.5


# ---------------------------------------------------------------- the viewer opens a run's training samples


@pytest.mark.slow
def test_view_opens_a_stepfix_runs_folder(tiny, data, tmp_path):
    """`r3bench view RUN_DIR` on a real stepfix run: one card per first attempt with its verdict, the
    feedback the trainer gave, and the revision with its own verdict and reward."""
    from r3bench.apps import view

    ce, cm = StepVerdict(2, "CE", "double: slip", 7), StepVerdict(5, "CM", "double: law", 7)
    T = verifier_double_trainer([ce, ce, cm, cm])
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=1), max_new_tokens=6, start_check_n=0)
    stepfix.train(cfg, trainer_cls=T)
    items = view.to_items(tmp_path)
    assert len(items) == 2
    for it in items:
        assert it["task"] == "stepfix step 1" and it["first_error"] == 2 and it["error_class"] == "CE"
        assert it["explanation"] == "double: slip" and it["right"] is False
        assert it["question"] and it["gold"] and it["feedback"]
        (rv,) = it["revisions"]
        assert (rv["first_error"], rv["error_class"], rv["r"], rv["right"]) == (5, "CM", 0.625, False)
        assert "r1 0.250" in it["reason"] and "r2 0.625" in it["reason"]
    page = view.write([tmp_path], tmp_path / "view.html")
    assert page.stat().st_size > 0


@pytest.mark.slow
def test_view_opens_a_grpo_samples_file(tiny, data, tmp_path, monkeypatch):
    from r3bench.apps import view

    monkeypatch.setitem(grpo.REWARD_FACTORIES, "label", lambda cfg: _LabelReward())
    cfg = make(grpo.Config, **base_kw(tiny, data, tmp_path, max_steps=1, batch_size=4), group_size=2,
               rewards="label", max_completion_length=8, start_check_n=0)
    grpo.train(cfg)
    items = view.to_items(tmp_path / "grpo_samples.jsonl")
    recs = [json.loads(x) for x in (tmp_path / "grpo_samples.jsonl").read_text().splitlines()]
    assert len(items) == len(recs) == 4
    for it, r in zip(items, recs):
        ce = r["verdicts"]["label_reward"] == "CE"
        assert it["right"] is (not ce) and it["error_class"] == ("CE" if ce else "")
        assert it["first_error"] == (None if ce else 0) and "label_reward" in it["reason"]
        assert it["question"] == r["prompt"]
