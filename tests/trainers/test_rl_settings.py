"""The RL trainers' settings free of the confounds of issue 50 (item 1), each on real TRL / peft steps
on the tiny random model where a run is needed:

* the generation cap derived from the data when not set (the longest reference of the pool in the
  model's tokens + gen_margin_tokens), a set cap below the longest reference warned about;
* truncated samples (no end-of-turn id) counted per step in metrics.jsonl and in run.json, with a
  warning past truncation_warn (stepfix: a generation double decides which samples are cut; GRPO:
  TRL's own sampling, compared with TRL's completions/clipped_ratio);
* the start's format compliance measured on a few pool prompts before the first step (run.json
  start_check), with a warning when low; off with start_check_n 0;
* a constant learning rate after the warm-up by default (a short run's linear decay reached ~0), and
  the pre-clip gradient norm with `grad_clipped` in every step's metrics.jsonl record;
* GRPO's completions written to grpo_samples.jsonl (stepfix writes stepfix_samples.jsonl already)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from trainers import generation, grpo, stepfix  # noqa: E402
from trainers import rl_sampling as rl  # noqa: E402
from trainers.core.config import make  # noqa: E402
from trainers.core.data import read_jsonl  # noqa: E402
from trainers.core.model import load_tokenizer, training_args_kwargs  # noqa: E402

from test_trainers import _verdict, verifier_double_trainer  # noqa: E402
from trainer_kw import base_kw  # noqa: E402


def _metrics(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]


def _steps(out: Path) -> list[dict]:
    return [m for m in _metrics(out) if "loss" in m]


def _references(data) -> list[str]:
    return [r["completion"] for r in read_jsonl(Path(data) / "sft.jsonl") if r.get("split", "train") == "train"]


# ------------------------------------------------------------------------------ generation cap

@pytest.mark.parametrize("cls,field", [(stepfix.Config, "max_new_tokens"), (grpo.Config, "max_completion_length")])
def test_generation_cap_is_derived_from_the_data_by_default(tiny, data, cls, field, capsys):
    tok = load_tokenizer(tiny)
    refs = _references(data)
    longest = max(len(tok(r, add_special_tokens=False)["input_ids"]) for r in refs) + 1
    cfg = make(cls)
    assert getattr(cfg, field) == 0  # the default: derived (it was 512, then 256 in the study)
    cap = rl.generation_cap(cfg, field, tok, refs)
    assert cap["source"] == "derived" and cap["longest_reference"] == longest
    assert cap["tokens"] == longest + cfg.gen_margin_tokens and cfg.gen_margin_tokens > 0
    assert "warning" not in capsys.readouterr().err

    short = make(cls, **{field: longest // 2})
    cap = rl.generation_cap(short, field, tok, refs)
    assert cap["source"] == "set" and cap["tokens"] == longest // 2 and cap["references_over_cap"] >= 1
    assert f"{field} {longest // 2} is below the longest reference" in capsys.readouterr().err
    assert rl.generation_cap(cfg, field, tok, ["", " "])["source"] == "fallback"  # pde prompts: no references


def test_truncated_means_no_end_of_turn_id():
    assert rl.truncated([5, 6, 7], [2]) and not rl.truncated([5, 2], [2]) and not rl.truncated([2], [2, 3])


# ------------------------------------------------------------------ schedule and gradient norm

@pytest.mark.parametrize("cls", [stepfix.Config, grpo.Config])
def test_rl_trainers_default_to_a_constant_learning_rate_after_warmup(cls):
    cfg = make(cls)
    assert cfg.lr_scheduler == "constant_with_warmup"
    assert training_args_kwargs(cfg)["lr_scheduler_type"] == "constant_with_warmup"
    assert make(cls, lr_scheduler="cosine").lr_scheduler == "cosine"  # still settable


def _double_stepfix(stops, cut_y1: bool):
    """StepFixTrainer with a verifier double (y1 wrong at step 2, y2 at step 5) and a generation double:
    y1 of `max_new_tokens` tokens without an end-of-turn id when cut_y1, y2 always closed."""
    base = verifier_double_trainer([_verdict(2, 7), _verdict(5, 7)])

    class T(base):
        def generate(self, model, chats):
            if len(chats[0]) == 1 and cut_y1:
                return [[40 + i % 7 for i in range(self.gen_cap)] for _ in chats]
            return [[40, 41, 42, stops[0]] for _ in chats]
    return T


@pytest.mark.slow
def test_stepfix_counts_truncation_logs_lr_and_preclip_grad_norm(tiny, data, tmp_path, capfd):
    """Two real steps: every y1 hits the cap (4 of 8 samples a step): metrics.jsonl truncated 2 of 4,
    y1_truncated 2, y2_truncated 0, and a warning (0.5 > 0.05); run.json truncation 4 of 8 and the cap
    as set. The learning rate stays at its peak on both steps; grad_norm is logged every step BEFORE
    clipping (with max_grad_norm 1e-8 every step is clipped, yet the logged norm is far above it)."""
    tok = load_tokenizer(tiny)
    T = _double_stepfix(generation.stop_token_ids(tok), cut_y1=True)
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2), max_new_tokens=6, learning_rate=1e-3,
               max_grad_norm=1e-8, start_check_n=0)
    stepfix.train(cfg, trainer_cls=T)
    steps = _steps(tmp_path)
    assert len(steps) == 2
    for m in steps:
        assert (m["y1_generated"], m["y1_truncated"], m["y2_generated"], m["y2_truncated"]) == (2, 2, 2, 0)
        assert (m["y1_tokens"], m["y2_tokens"]) == (12, 8)  # 2 x the cap of 6; 2 x 4 ids (the stop id included)
        assert m["truncated"] == 2 and m["truncated_frac"] == 0.5
        assert m["learning_rate"] == pytest.approx(1e-3)  # linear decay logged 5e-4 at step 2
        assert m["grad_norm"] > 1e-6 and m["grad_clipped"] == 1
    assert "samples (50%) hit the generation cap" in capfd.readouterr().err
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["truncation"] == {"generated": 8, "truncated": 4, "truncated_frac": 0.5}
    assert run["generation_cap"]["source"] == "set" and run["generation_cap"]["tokens"] == 6
    assert "start_check" not in run


@pytest.mark.slow
def test_stepfix_truncation_totals_count_every_step_with_logging_steps_2(tiny, data, tmp_path):
    """logging_steps 2 over 3 steps: training logs at steps 1 and 2 only (logging_first_step); run.json's
    totals still count step 3's samples (they were added at log steps only: 8 of 12)."""
    tok = load_tokenizer(tiny)
    T = _double_stepfix(generation.stop_token_ids(tok), cut_y1=True)
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=3, save_steps=3), max_new_tokens=6,
               logging_steps=2, start_check_n=0)
    stepfix.train(cfg, trainer_cls=T)
    assert [m["step"] for m in _steps(tmp_path)] == [1, 2]
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["truncation"] == {"generated": 12, "truncated": 6, "truncated_frac": 0.5}
    # the checkpoint of step 3 (not a log step) holds the totals as of step 3: a run resumed from it
    # counts step 3's samples (its state file had the logged totals only, 8 of 12)
    state = json.loads((tmp_path / "checkpoint-3" / "r3bench_state.json").read_text())
    assert state["truncation_total"] == [12, 6]


@pytest.mark.slow
def test_grpo_truncation_totals_count_every_step_with_logging_steps_2(tiny, data, tmp_path):
    cfg = make(grpo.Config, **base_kw(tiny, data, tmp_path, max_steps=3, save_steps=3, batch_size=4), group_size=2,
               rewards="outcome", max_completion_length=6, logging_steps=2, start_check_n=0)
    grpo.train(cfg)
    recs = [json.loads(x) for x in (tmp_path / "grpo_samples.jsonl").read_text().splitlines()]
    run = json.loads((tmp_path / "run.json").read_text())
    assert {r["step"] for r in recs} == {1, 2, 3}
    assert run["truncation"]["generated"] == len(recs) == 12
    assert run["truncation"]["truncated"] == sum(r["truncated"] for r in recs)
    state = json.loads((tmp_path / "checkpoint-3" / "r3bench_state.json").read_text())
    assert state["truncation_total"] == [12, sum(r["truncated"] for r in recs)]  # step 3's too (was 8)


@pytest.mark.slow
def test_stepfix_derives_its_cap_and_checks_the_start(tiny, data, tmp_path, capfd):
    """No cap set: the run's samples are capped at the pool's longest reference + margin (the generation
    double writes exactly gen_cap tokens); the start check ran on start_check_n prompts with the real
    generator: the random tiny model writes no seven-tag solution, so compliance 0 and a warning."""
    tok = load_tokenizer(tiny)
    T = _double_stepfix(generation.stop_token_ids(tok), cut_y1=False)
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=1), start_check_n=2)
    stepfix.train(cfg, trainer_cls=T)
    run = json.loads((tmp_path / "run.json").read_text())
    cap = run["generation_cap"]
    assert cap["source"] == "derived" and cap["tokens"] == cap["longest_reference"] + cfg.gen_margin_tokens
    sc = run["start_check"]
    assert sc["n"] == 2 and sc["compliant"] == 0 and sc["rate"] == 0.0 and sc["low"] is True
    assert sc["max_new_tokens"] == cap["tokens"]
    assert "writes the seven-tag format on 0 of 2 pool prompts" in capfd.readouterr().err
    assert run["truncation"]["truncated"] == 0


def test_start_check_counts_compliant_samples(tiny, data, monkeypatch, capsys):
    """start_compliance on a generation double that writes the reference solution: every sample passes
    the format (the rewards' tag_format check), no warning; a double writing prose: none passes, a warning."""
    tok = load_tokenizer(tiny)
    rows = [r for r in read_jsonl(Path(data) / "sft.jsonl")][:3]
    chats = [[{"role": "user", "content": r["prompt"]}] for r in rows]
    texts = {r["prompt"]: r["completion"] for r in rows}
    stop = generation.stop_token_ids(tok)[0]

    def fake(self, model, tok_, chats_, sp):
        assert sp.do_sample is False and sp.max_new_tokens == 77
        return [tok_(texts[c[-1]["content"]], add_special_tokens=False)["input_ids"] + [stop] for c in chats_]

    monkeypatch.setattr(generation.HFGenerator, "generate", fake)
    model = torch.nn.Linear(1, 1)
    rec = rl.start_compliance(model, tok, chats, 77, 0.75)
    assert rec["n"] == 3 and rec["compliant"] == 3 and rec["rate"] == 1.0 and rec["low"] is False
    assert "warning" not in capsys.readouterr().err
    texts = {k: "The answer is 4 m/s." for k in texts}
    rec = rl.start_compliance(model, tok, chats, 77, 0.75)
    assert rec["compliant"] == 0 and rec["low"] is True
    assert "0 of 3 pool prompts" in capsys.readouterr().err


def test_start_check_is_skipped_with_its_reason_under_zero3(monkeypatch, capsys):
    """Under DeepSpeed ZeRO-3 the policy's parameters are partitioned before the Trainer wraps it and HF
    generate on it breaks: the check is skipped, the reason recorded (run.json start_check), no generate."""
    import transformers.integrations as integrations

    def boom(*a, **k):
        raise AssertionError("generated under ZeRO-3")

    monkeypatch.setattr(generation.HFGenerator, "generate", boom)
    monkeypatch.setattr(integrations, "is_deepspeed_zero3_enabled", lambda: True)
    cfg = make(stepfix.Config, start_check_n=4)
    rec = rl.check_start(cfg, torch.nn.Linear(1, 1), None, [[{"role": "user", "content": "x"}]] * 8, 32)
    assert rec["n"] == 0 and "ZeRO-3" in rec["skipped"]
    assert "start check skipped" in capsys.readouterr().err


def test_start_check_prompts_are_spread_and_deterministic():
    assert rl.spread(4, 100) == [0, 25, 50, 75]
    assert rl.spread(8, 3) == [0, 1, 2] and rl.spread(0, 10) == []


# ------------------------------------------------------------------------------------------ GRPO

@pytest.mark.slow
def test_grpo_counts_truncation_writes_samples_and_keeps_its_lr(tiny, data, tmp_path):
    """Two real GRPO steps of 4 completions capped at 6 tokens: per step, truncated out of 4 equals
    TRL's own completions/clipped_ratio; run.json sums them; the learning rate stays at its peak;
    grpo_samples.jsonl holds the 8 completions with their rewards and advantages."""
    cfg = make(grpo.Config, **base_kw(tiny, data, tmp_path, max_steps=2, batch_size=4), group_size=2,
               rewards="outcome", max_completion_length=6, learning_rate=1e-3, start_check_n=0)
    grpo.train(cfg)
    steps = _steps(tmp_path)
    assert len(steps) == 2
    for m in steps:
        assert m["truncated_frac"] == pytest.approx(m["completions/clipped_ratio"])
        assert m["truncated"] == round(4 * m["truncated_frac"])
        assert m["learning_rate"] == pytest.approx(1e-3)
        assert "grad_norm" in m and "grad_clipped" in m
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["truncation"]["generated"] == 8
    assert run["truncation"]["truncated"] == sum(m["truncated"] for m in steps)
    assert run["generation_cap"] == {**run["generation_cap"], "source": "set", "tokens": 6}
    recs = [json.loads(x) for x in (tmp_path / "grpo_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 8 and [r["step"] for r in recs] == [1] * 4 + [2] * 4
    for r in recs:
        assert set(r["rewards"]) == {"outcome_reward"} and r["tokens"] <= 6 and "advantage" in r
    for step in (1, 2):  # GRPO's advantages of a group of 2 are opposite (or both 0)
        adv = [r["advantage"] for r in recs if r["step"] == step]
        assert abs(adv[0] + adv[1]) < 1e-5 and abs(adv[2] + adv[3]) < 1e-5


# ---------------------------------------------------------------- the learns-at-all control

def test_the_controls_permutation_is_seeded_by_seed_and_step_only():
    a = rl.permutation(6, 0, 3)
    assert sorted(a) == list(range(6)) and a == rl.permutation(6, 0, 3)
    assert len({tuple(rl.permutation(6, 0, s)) for s in range(1, 9)}) > 1
    assert make(stepfix.Config).reward_permutation is False and make(grpo.Config).reward_permutation is False


def test_the_controls_permutation_is_a_derangement():
    """No sample keeps its own reward (a uniform shuffle left it its own with probability 1/n: real signal
    in the control); every derangement of 3 is reached."""
    for n in range(2, 9):
        for seed in range(40):
            for step in range(1, 6):
                o = rl.permutation(n, seed, step, rank_=seed % 3)
                assert sorted(o) == list(range(n)) and all(o[k] != k for k in range(n)), (n, seed, step, o)
    assert {tuple(rl.permutation(3, s, 1)) for s in range(200)} == {(1, 2, 0), (2, 0, 1)}
    assert rl.permutation(1, 0, 1) == [0] and rl.permutation(0, 0, 1) == []


def _grpo_permute(rewards, rank=0, world=1):
    from collections import Counter
    from types import SimpleNamespace

    nan = float("nan")
    out = torch.tensor([[nan if v is None else v for v in row] for row in rewards])
    me = SimpleNamespace(r3_cfg=make(grpo.Config, reward_permutation=True), state=SimpleNamespace(global_step=0),
                         accelerator=SimpleNamespace(is_main_process=rank == 0, process_index=rank), r3_counts=Counter())
    zeroed = grpo.GRPOPhases.r3_permute(me, out, len(rewards) // world)
    return out, zeroed, me.r3_counts


def test_grpo_control_leaves_rows_without_a_verdict_out_and_zeroes_a_lone_row():
    """GRPO's control: rows with any NaN (some reward function gave no verdict) are not shuffled (nor
    given another's reward); the others are deranged; a step with one such row gives it zero weight."""
    out, zeroed, counts = _grpo_permute([[0.1, 1.0], [0.2, None], [None, None], [0.3, 3.0], [0.4, 4.0]])
    assert out[1, 0] == pytest.approx(0.2) and torch.isnan(out[1, 1]) and torch.isnan(out[2]).all()
    kept = [round(float(out[i, 0]), 3) for i in (0, 3, 4)]
    assert sorted(kept) == [0.1, 0.3, 0.4] and all(a != b for a, b in zip(kept, [0.1, 0.3, 0.4]))
    assert zeroed == [] and counts["reward_permuted"] == 3
    out, zeroed, counts = _grpo_permute([[0.5, 1.0], [0.2, None], [None, None], [None, 2.0]], rank=1, world=2)
    assert torch.isnan(out[0]).all() and zeroed == [] and counts[rl.PERMUTATION_SKIPPED] == 0  # not the main rank
    out, zeroed, counts = _grpo_permute([[0.2, None], [0.5, 1.0]])
    assert torch.isnan(out[1]).all() and zeroed == [1] and counts[rl.PERMUTATION_SKIPPED] == 1


@pytest.mark.slow
def test_stepfix_reward_permutation_gives_a_lone_revision_zero_weight(tiny, data, tmp_path):
    """A generation phase with one rewarded revision (no derangement of 1): the control does not train on
    its real reward; the phase is counted in metrics.jsonl reward_permutation_skipped."""
    T = verifier_double_trainer([_verdict(2, 7), _verdict(5, 7)])
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2, batch_size=1), max_new_tokens=4,
               reward_permutation=True, start_check_n=0, baseline="r1")
    stepfix.train(cfg, trainer_cls=T)
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 2
    assert all(r.get("skipped") and "reward_permutation" in r["skip_reason"] and "adv" not in r for r in recs)
    steps = _steps(tmp_path)
    assert [m[rl.PERMUTATION_SKIPPED] for m in steps] == [1, 1] and all(m["loss"] == 0 for m in steps)
    assert all(m.get("reward_permuted", 0) == 0 for m in steps)


@pytest.mark.slow
def test_stepfix_reward_permutation_shuffles_what_the_loss_uses(tiny, data, tmp_path):
    """reward_permutation (the control): each step's r2 are shuffled among its revisions before the loss;
    the records keep the verifier's r2 beside r2_used, the same values in another order on some step."""
    T = verifier_double_trainer([_verdict(2, 7), _verdict(2, 7), _verdict(5, 7), _verdict(1, 7)])
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=4), max_new_tokens=4,
               reward_permutation=True, start_check_n=0, baseline="r1")
    stepfix.train(cfg, trainer_cls=T)
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 8
    swapped = 0
    for step in range(1, 5):
        rs = [r for r in recs if r["step"] == step]
        assert [r["r2"] for r in rs] == [0.625, 0.125]
        assert sorted(r["r2_used"] for r in rs) == [0.125, 0.625]
        assert all(abs(r["adv"] - (r["r2_used"] - r["r1_used"])) < 1e-6 for r in rs)  # the loss used them
        swapped += rs[0]["r2_used"] != rs[0]["r2"]
    assert swapped == 4  # a derangement: no revision keeps its own reward
    assert all(m["reward_permuted"] == 2 for m in _steps(tmp_path))


@pytest.mark.slow
def test_grpo_reward_permutation_shuffles_across_the_step(tiny, data, tmp_path, monkeypatch):
    from test_trainers import LengthReward

    monkeypatch.setitem(grpo.REWARD_FACTORIES, "length", lambda cfg: LengthReward())
    cfg = make(grpo.Config, **base_kw(tiny, data, tmp_path, max_steps=2, batch_size=4), group_size=2,
               rewards="length", max_completion_length=8, reward_permutation=True, start_check_n=0)
    grpo.train(cfg)
    recs = [json.loads(x) for x in (tmp_path / "grpo_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 8
    for step in (1, 2):
        rs = [r for r in recs if r["step"] == step]
        true = [r["rewards"]["length_reward"] for r in rs]
        used = [r.get("rewards_used", r["rewards"])["length_reward"] for r in rs]
        assert sorted(true) == sorted(used)
    assert any("rewards_used" in r for r in recs)  # some step's order changed
    assert all(m["reward_permuted"] == 4 for m in _steps(tmp_path))
