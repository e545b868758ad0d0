"""Trainers on a tiny random model: each runs, its loss is finite and its parameters move; stepfix's
loss equals a hand computation; the skip rule; resume == uninterrupted; NaN and bad data handling;
the CLI writes an adapter that plain `lm_eval --model hf --model_args ...,peft=...` scores.

Where a tiny random model cannot produce what a path needs (a seven-tag solution that the real
verifier rewards), a *verifier double* or a *generation double* stands in and is named so."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from trainers import dpo, grpo, psv, sft, stepfix  # noqa: E402
from trainers.core.config import make, parse  # noqa: E402
from trainers.core.data import read_jsonl  # noqa: E402
from trainers.core.entry import main  # noqa: E402
from trainers.core.model import training_args_kwargs  # noqa: E402
from trainers.errors import ConfigError, TrainDataError  # noqa: E402
from transformers import TrainerCallback  # noqa: E402

from trainer_kw import base_kw  # noqa: E402  (tests/trainers/ is on sys.path)

REPO = Path(__file__).resolve().parents[2]


class Snapshot(TrainerCallback):
    """Trainable parameters at the start and end of training, and every logged loss."""

    def __init__(self):
        self.before, self.after, self.losses, self.logs = {}, {}, [], []

    def on_train_begin(self, args, state, control, model=None, **kw):
        self.before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

    def on_log(self, args, state, control, logs=None, **kw):
        self.logs.append(dict(logs or {}))
        if logs and "loss" in logs:
            self.losses.append(float(logs["loss"]))

    def on_train_end(self, args, state, control, model=None, **kw):
        self.after = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

    def changed(self) -> bool:
        assert self.before and set(self.before) == set(self.after)
        return any(not torch.equal(self.before[n], self.after[n]) for n in self.before)


def check_trained(snap: Snapshot, out: Path):
    assert snap.losses and all(math.isfinite(x) for x in snap.losses), snap.losses
    assert snap.changed(), "no trainable parameter changed"
    assert (out / "final" / "adapter_model.safetensors").is_file()
    assert (out / "metrics.jsonl").is_file()


# ------------------------------------------------------------------------------------- config

def test_config_yaml_cli_and_help(tmp_path, capsys):
    y = tmp_path / "c.yaml"
    y.write_text("max_steps: 7\nbeta: 0.2\nkl_estimator: k3\n")
    cfg = parse(stepfix.Config, ["--config", str(y), "--beta", "0.3", "--resume", "true"])
    assert (cfg.max_steps, cfg.beta, cfg.kl_estimator, cfg.resume) == (7, 0.3, "k3", True)
    y.write_text("max_stepz: 7\n")
    with pytest.raises(ConfigError, match="max_stepz"):
        parse(stepfix.Config, ["--config", str(y)])
    with pytest.raises(ConfigError, match="kl_estimator"):
        parse(stepfix.Config, ["--kl_estimator", "k9"])
    with pytest.raises(ConfigError, match="multiple of group_size"):
        make(grpo.Config, batch_size=6, group_size=4)
    with pytest.raises(SystemExit):
        parse(stepfix.Config, ["--help"])
    help_text = capsys.readouterr().out
    import dataclasses
    for f in dataclasses.fields(stepfix.Config):
        assert f"--{f.name}" in help_text


def test_read_jsonl_undecodable_bytes_are_a_train_data_error(tmp_path):
    """Bytes that are not UTF-8 raised a bare UnicodeDecodeError out of the reader; now TrainDataError
    naming the file, like every other defect of a JSONL file."""
    bad = tmp_path / "sft.jsonl"
    bad.write_bytes(b'{"prompt": "p", "completion": "c"}\n\xff\xfe\x00garbage\n')
    with pytest.raises(TrainDataError, match="sft.jsonl: not UTF-8 text"):
        read_jsonl(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(TrainDataError, match="no rows"):
        read_jsonl(empty)
    assert read_jsonl(empty, allow_empty=True) == []


def test_corrupt_data_is_a_clear_error(tmp_path, tiny):
    bad = tmp_path / "sft.jsonl"
    bad.write_text('{"prompt": "p", "completion": "c"}\n{not json\n')
    rc = sft.main(["--model", tiny, "--data", str(bad), "--output_dir", str(tmp_path / "o"), "--report_to", "none"])
    assert rc == 1
    rec = json.loads((tmp_path / "o" / "run.json").read_text())
    assert rec["status"] == "error" and "sft.jsonl:2" in rec["error"]


# ----------------------------------------------------------------------------------- trainers

@pytest.mark.slow
def test_sft_trains(tiny, data, tmp_path):
    snap = Snapshot()
    res = sft.train(make(sft.Config, **base_kw(tiny, data, tmp_path)), extra_callbacks=[snap])
    check_trained(snap, tmp_path)
    assert res["lm_eval_model_args"] == f"pretrained={tiny},peft={tmp_path / 'final'}"
    # the run's own card, not transformers' boilerplate ("fine-tuned version of [None]", issue 37)
    card = (tmp_path / "README.md").read_text()
    assert "[None]" not in card and "trainers.sft" in card and tiny in card
    assert f"peft={tmp_path / 'final'}" in card and "--output_path" in card and "--log_samples" in card


def test_a_run_shorter_than_its_warmup_gets_none(tiny, data, tmp_path):
    """max_steps 2 with warmup_steps 5 ran every step at learning rate 0 or lr/5 (issue 37)."""
    cfg = make(sft.Config, **base_kw(tiny, data, tmp_path, max_steps=2, warmup_steps=5))
    with pytest.warns(RuntimeWarning, match="no warm-up"):
        assert training_args_kwargs(cfg)["warmup_steps"] == 0
    cfg = make(sft.Config, **base_kw(tiny, data, tmp_path, max_steps=60, warmup_steps=5))
    assert training_args_kwargs(cfg)["warmup_steps"] == 5


@pytest.mark.slow
def test_dpo_ipo_trains_from_sft(tiny, data, tmp_path, sft_adapter):
    snap = Snapshot()
    cfg = make(dpo.Config, **base_kw(tiny, data, tmp_path), init_adapter=sft_adapter, beta=0.1)
    dpo.train(cfg, extra_callbacks=[snap])
    check_trained(snap, tmp_path)
    # IPO at the reference point: (0 - 1/(2 tau))^2 = 25
    assert abs(snap.losses[0] - 25.0) < 0.1


class LengthReward:
    """A user reward registered through grpo.REWARD_FACTORIES (longer completion, more reward):
    the tiny random model's completions all get 0 from r3bench's rewards, which gives GRPO no
    advantage to learn from; this one does."""
    __name__ = "length_reward"

    def __init__(self):
        self.last_reasons = []

    def __call__(self, prompts=None, completions=None, **kw):
        from verifiers.rewards import completion_text

        out = [len(completion_text(c) or "") / 100 for c in completions]
        self.last_reasons = ["length"] * len(out)
        return out


@pytest.mark.slow
def test_grpo_trains_with_r3bench_rewards(tiny, data, tmp_path, monkeypatch):
    monkeypatch.setitem(grpo.REWARD_FACTORIES, "length", lambda cfg: LengthReward())
    snap = Snapshot()
    cfg = make(grpo.Config, **base_kw(tiny, data, tmp_path, batch_size=4), group_size=2,
                      rewards="position,outcome,rlvp,length", max_completion_length=12, learning_rate=1e-3)
    grpo.train(cfg, extra_callbacks=[snap])
    check_trained(snap, tmp_path)
    logged = {k for d in snap.logs for k in d}
    for name in ("position_reward", "outcome_reward", "rlvp_reward", "length_reward"):
        assert f"rewards/{name}/mean" in logged
    assert "share_generate" in logged and "time_verify_s" in logged


def test_grpo_reward_failure_is_skipped_and_counted():
    from collections import Counter, defaultdict

    from verifiers.rewards import position_reward_func

    def broken(q, text, ref):
        raise RuntimeError("judge timed out")

    from r3bench import procgen

    counts, times = Counter(), defaultdict(float)
    fn = grpo.CountingReward(position_reward_func(broken, answer_column=None), counts, times)
    sol = procgen.generate(n=5, seed=3)[0].solution  # a complete seven-tag solution reaches the verifier
    out = fn(prompts=["q", "q"], completions=[sol, ""])
    assert out == [None, 0.0]  # verifier failure -> None (TRL: no advantage); empty output -> 0
    assert counts["reward_failures/position_reward"] == 1


def test_grpo_position_reward_passes_the_verdict():
    """grpo's position verifier hands step_reward the StepVerdict: n is the format's 7 whatever the
    verdict's n_steps, and valid=False is skipped (None) and counted."""
    from collections import Counter, defaultdict

    from r3bench import procgen
    from verifiers.steps import StepVerdict

    verdicts = iter([StepVerdict(2, "CE", "double", 3), StepVerdict(0, None, "no verdict", 0, valid=False)])
    cfg = make(grpo.Config, rewards="position")
    counts, times = Counter(), defaultdict(float)
    real = grpo.verify  # the step verifier grpo's position reward calls (imported at its top)
    grpo.verify = lambda *a, **k: next(verdicts)
    try:
        fn = grpo.reward_funcs(cfg, counts, times)[0]
        sol = procgen.generate(n=5, seed=3)[0].solution
        out = fn(prompts=["q", "q"], completions=[sol, sol], question=["q", "q"], reference=[sol, sol])
    finally:
        grpo.verify = real
    assert out == [2 / 8, None] and counts["reward_failures/position_reward"] == 1


# ------------------------------------------------------------------------------------ stepfix

def _verdict(e, n, cls="CE", valid=True):
    from verifiers.steps import StepVerdict

    return StepVerdict(e, cls if e else None, "verifier double", n, valid=valid)


def verifier_double_trainer(verdicts):
    """StepFixTrainer whose verifier is a double returning fixed verdicts (y1, y2 alternately by call)."""
    base = stepfix.StepFixTrainer

    class T(base):
        calls = 0

        def verify(self, q, text, ref):
            v = verdicts[T.calls % len(verdicts)]
            T.calls += 1
            return v
    return T


@pytest.mark.slow
def test_stepfix_runs_with_the_real_verifier(tiny, data, tmp_path, sft_adapter):
    snap = Snapshot()
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2), init_adapter=sft_adapter,
                      max_new_tokens=12)
    stepfix.train(cfg, extra_callbacks=[snap])
    assert snap.losses and all(math.isfinite(x) for x in snap.losses)
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 4 and all("r1" in r and "why1" in r for r in recs)
    assert any(k.startswith("y1_") for d in snap.logs for k in d)
    assert (tmp_path / "final" / "adapter_model.safetensors").is_file()


@pytest.mark.slow
def test_stepfix_params_change(tiny, data, tmp_path, sft_adapter):
    snap = Snapshot()
    # verifier double: y1 wrong at step 2 of 7 (r1 = 0.25), y2 wrong at step 5 of 7 (r2 = 0.625)
    T = verifier_double_trainer([_verdict(2, 7), _verdict(5, 7)])
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2, batch_size=1),
                      init_adapter=sft_adapter, max_new_tokens=8, learning_rate=1e-3)
    stepfix.train(cfg, extra_callbacks=[snap], trainer_cls=T)
    check_trained(snap, tmp_path)
    r = [d for d in snap.logs if "r2_mean" in d]
    assert r and abs(r[0]["r1_mean"] - 0.25) < 1e-9 and abs(r[0]["r2_mean"] - 0.625) < 1e-9
    assert r[0]["y1_CE"] == 1 and r[0]["skip_rate"] == 0


def test_skip_rule():
    from verifiers.rewards import position_reward

    assert stepfix.skip(1.0, 0.9)
    assert not stepfix.skip(position_reward(7, 7), 0.9)  # 7/8 = 0.875: the latest error is still revised
    assert stepfix.skip(0.6, 0.5) and not stepfix.skip(0.5, 0.5)
    assert stepfix.reward(_verdict(0, 7))[0] == 1.0
    assert stepfix.reward(_verdict(7, 7))[0] == 7 / 8
    assert stepfix.reward(_verdict(2, 3, "FORMAT"))[0] == 0.0  # a format failure: the minimum


@pytest.mark.slow
def test_stepfix_skips_correct_solutions_end_to_end(tiny, data, tmp_path):
    """Generation double: y1 is the reference solution itself, so the real verifier finds no error,
    r1 = 1 > tau and every problem is skipped: no y2, a zero loss, parameters unchanged."""
    base = stepfix.StepFixTrainer
    refs = {json.loads(x)["prompt"]: json.loads(x)["completion"] for x in Path(data, "sft.jsonl").read_text().splitlines()}

    class GenerationDouble(base):
        def generate(self, model, chats):
            assert len(chats[0]) == 1, "a revision was requested for a correct solution"
            return [self.tok(refs[c[0]["content"]], add_special_tokens=False)["input_ids"] for c in chats]

    snap = Snapshot()
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2))
    stepfix.train(cfg, extra_callbacks=[snap], trainer_cls=GenerationDouble)
    logs = [d for d in snap.logs if "skip_rate" in d]
    assert logs and all(d["skip_rate"] == 1.0 and d["r1_mean"] == 1.0 for d in logs)
    assert not snap.changed() and all(x == 0.0 for x in snap.losses)
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert all(r["skipped"] and "> tau" in r["skip_reason"] and "y2" not in r for r in recs)


@pytest.mark.slow
def test_stepfix_verifier_failure_skips_and_counts(tiny, data, tmp_path):
    T = verifier_double_trainer([_verdict(0, 0, valid=False)])
    snap = Snapshot()
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=1), max_new_tokens=4)
    stepfix.train(cfg, extra_callbacks=[snap], trainer_cls=T)
    d = next(d for d in snap.logs if "skip_rate" in d)
    assert d["skip_rate"] == 1.0 and d["verifier_failures"] == 2


@pytest.mark.slow
def test_stepfix_no_verdict_on_y2_counts_as_skipped(tiny, data, tmp_path):
    T = verifier_double_trainer([_verdict(2, 7), _verdict(0, 0, valid=False)])
    snap = Snapshot()
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=1, batch_size=1), max_new_tokens=4)
    stepfix.train(cfg, extra_callbacks=[snap], trainer_cls=T)
    d = next(d for d in snap.logs if "skip_rate" in d)
    assert d["skip_rate"] == 1.0 and d["verifier_failures"] == 1 and d["revised"] == 0


def _hand_logprobs(model, prompt, completion):
    """log p of each completion token, one forward per prefix (no padding, no batching)."""
    out, dists = [], []
    for t in range(len(completion)):
        ids = torch.tensor([list(prompt) + list(completion[:t])])
        lp = torch.log_softmax(model(input_ids=ids).logits[0, -1].float(), -1)
        out.append(lp[completion[t]])
        dists.append(lp)
    return out, dists


@pytest.mark.slow
@pytest.mark.parametrize("kl,how", [("full", "sum"), ("k1", "sum"), ("k3", "mean")])
def test_stepfix_loss_matches_hand_computation(tiny, data, tmp_path, kl, how):
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=1), kl_estimator=kl, logprob=how,
                      beta=0.1, lora_dropout=0.0)
    trainer, tok, _, _ = stepfix.build(cfg)
    model = trainer.model
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():  # move the policy away from the reference so the KL is not 0
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    model.train()
    used = [([5, 6, 7], [8, 9, 10, 11], [5, 6, 7, 12, 13], [14, 15], 0.25, {}),
            ([20, 21], [22, 23], [24, 25, 26, 27], [28, 29, 30], 0.625, {})]
    loss, parts = trainer._loss(model, model, used)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()

    terms = []
    for x, y1, c2, y2, r2, _ in used:
        lp1, d_pol = _hand_logprobs(model, x, y1)
        with torch.no_grad(), model.disable_adapter():
            _, d_ref = _hand_logprobs(model, x, y1)
        lp2, _ = _hand_logprobs(model, c2, y2)
        if kl == "full":
            k = [(p.exp() * (p - q)).sum() for p, q in zip(d_pol, d_ref)]
        else:
            a = [p[t] for p, t in zip(d_pol, y1)]
            b = [q[t] for q, t in zip(d_ref, y1)]
            k = [u - v for u, v in zip(a, b)] if kl == "k1" else [torch.exp(v - u) - (v - u) - 1 for u, v in zip(a, b)]
        agg = (lambda xs: sum(xs)) if how == "sum" else (lambda xs: sum(xs) / len(xs))
        terms.append(-((agg(lp2) - agg(lp1).detach()) * r2 - 0.1 * agg(k)))
    hand = sum(terms) / len(terms)
    assert torch.allclose(loss, hand, atol=1e-5, rtol=1e-5), (float(loss), float(hand))
    hand.backward()
    for n, p in model.named_parameters():
        if n in grads:  # same gradient: log pi(y1|x) is detached in both
            assert torch.allclose(grads[n], p.grad, atol=1e-5, rtol=1e-4), n


def test_stepfix_loss_pure_function():
    lp2 = torch.tensor([[-1.0, -2.0, 0.0]], requires_grad=True)
    lp1 = torch.tensor([[-3.0, -1.0]], requires_grad=True)
    kl = torch.tensor([[0.5, 0.25]], requires_grad=True)
    loss, parts = stepfix.stepfix_loss(lp2, torch.tensor([[1.0, 1.0, 0.0]]), lp1, torch.tensor([[1.0, 1.0]]),
                                       torch.tensor([0.5]), kl, beta=0.1)
    # -[((-3) - (-4)) * 0.5 - 0.1 * 0.75] = -(0.5 - 0.075)
    assert abs(float(loss) + 0.425) < 1e-6
    loss.backward()
    assert lp1.grad is None or torch.all(lp1.grad == 0)
    assert torch.allclose(lp2.grad, torch.tensor([[-0.5, -0.5, 0.0]]))


# ------------------------------------------------------------------------- resume and guards

class CrashAt(TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kw):
        if state.global_step == self.step:
            raise RuntimeError(f"simulated crash at step {self.step}")


def _adapter(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(path / "adapter_model.safetensors"))


@pytest.mark.slow
@pytest.mark.parametrize("which", ["sft", "stepfix"])
def test_resume_equals_uninterrupted(tiny, data, tmp_path, which, sft_adapter):
    mod = {"sft": sft, "stepfix": stepfix}[which]
    extra = {} if which == "sft" else dict(init_adapter=sft_adapter, max_new_tokens=6, batch_size=1)
    kw_t = {} if which == "sft" else {"trainer_cls": verifier_double_trainer([_verdict(2, 7), _verdict(5, 7)])}

    def cfg(out, **k):
        return make(mod.Config, **{**base_kw(tiny, data, out, max_steps=4, learning_rate=1e-3), **extra, **k})

    mod.train(cfg(tmp_path / "a"), **kw_t)
    with pytest.raises(RuntimeError, match="simulated crash"):
        mod.train(cfg(tmp_path / "b"), extra_callbacks=[CrashAt(3)], **kw_t)
    assert (tmp_path / "b" / "checkpoint-2").is_dir() and not (tmp_path / "b" / "final").exists()
    with pytest.raises(ConfigError, match="--resume"):
        mod.train(cfg(tmp_path / "b"), **kw_t)
    mod.train(cfg(tmp_path / "b", resume=True), **kw_t)
    a, b = _adapter(tmp_path / "a" / "final"), _adapter(tmp_path / "b" / "final")
    assert a.keys() == b.keys()
    first = _adapter(tmp_path / "b" / "checkpoint-2")
    assert any(not torch.equal(first[k], a[k]) for k in a)  # training went on after the checkpoint
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k


def test_resume_without_checkpoint_is_an_error(tiny, data, tmp_path):
    with pytest.raises(ConfigError, match="no checkpoint"):
        sft.train(make(sft.Config, **base_kw(tiny, data, tmp_path), resume=True))


@pytest.mark.slow
def test_nan_loss_stops_with_checkpoint_intact(tiny, data, tmp_path, sft_adapter):
    base = verifier_double_trainer([_verdict(2, 7), _verdict(5, 7)])

    class NaNAt3(base):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            loss = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
            return loss * float("nan") if self.state.global_step == 2 else loss

    argv = ["--model", tiny, "--data", data, "--output_dir", str(tmp_path), "--max_steps", "4", "--save_steps", "2",
            "--batch_size", "1", "--max_new_tokens", "4", "--eval_tasks", "", "--report_to", "none",
            "--init_adapter", sft_adapter]
    rc = main(stepfix.Config, lambda cfg: stepfix.train(cfg, trainer_cls=NaNAt3), argv)
    assert rc == 2
    rec = json.loads((tmp_path / "run.json").read_text())
    assert rec["status"] == "non_finite_loss" and "step 3" in rec["error"]
    ck = _adapter(tmp_path / "checkpoint-2")
    assert all(torch.isfinite(v).all() for v in ck.values())
    assert not (tmp_path / "checkpoint-3").exists() and not (tmp_path / "final").exists()


# ----------------------------------------------------------------------------------------- psv

def test_psv_exact_labels_and_loss():
    assert psv.exact_labels(7, 0) == [1.0] * 7
    assert psv.exact_labels(7, 3) == [1, 1, 0, 0, 0, 0, 0]
    logits = torch.tensor([[2.0, 0.0, 1.0], [0.0, 0.0, 3.0]])
    loss, p = psv.psv_loss(logits, 0, 1, torch.tensor([1.0, 0.0]))
    p0 = 1 / (1 + math.exp(-2.0))
    assert abs(float(loss) - ((p0 - 1) ** 2 + 0.5 ** 2) / 2) < 1e-6


@pytest.mark.slow
def test_psv_trains_and_loads_in_the_backend(tiny, tmp_path):
    from r3bench import procgen
    from verifiers.psv import PSV

    snap = Snapshot()
    cfg = make(psv.Config, model=tiny, procgen_n=40, output_dir=str(tmp_path), max_steps=3, batch_size=4,
                      report_to="none", learning_rate=1e-3)
    res = psv.train(cfg, extra_callbacks=[snap])
    check_trained(snap, tmp_path)
    p = procgen.generate(n=5, seed=3)[0]
    scores = PSV(res["psv_model"]).step_scores(p.question, p.solution)
    assert len(scores) == 7 and all(0 < s < 1 for s in scores)


@pytest.mark.slow
def test_psv_mc_labels_are_cached(tiny, tmp_path):
    cfg = make(psv.Config, model=tiny, procgen_n=30, output_dir=str(tmp_path), labels="mc", mc_rollouts=2,
                      mc_max_new_tokens=4, max_train_samples=2, report_to="none")
    rows = psv.solution_rows(cfg)
    lab = psv.mc_labels(cfg, rows)
    assert len(lab) == 2 and all(len(r["labels"]) == 7 and all(0 <= y <= 1 for y in r["labels"]) for r in lab)
    assert lab[0]["labels"][-1] == 1.0  # the complete reference solution reaches the right answer
    again = psv.mc_labels(cfg, rows)  # from the cache
    assert again == lab


# ----------------------------------------------------------------------------------------- CLI

@pytest.mark.slow
def test_cli_writes_an_adapter_that_lm_eval_scores(tiny, data, tmp_path):
    y = tmp_path / "sft.yaml"
    y.write_text(f"model: {tiny}\ndata: {data}\noutput_dir: {tmp_path / 'run'}\nmax_steps: 2\nbatch_size: 2\n"
                 "eval_tasks: ''\nreport_to: none\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "trainers.sft", "--config", str(y)], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    rec = json.loads((tmp_path / "run" / "run.json").read_text())
    assert rec["status"] == "finished" and rec["data_sha256"] and rec["trainer"] == "sft"  # not "__main__"
    lm_eval = Path(sys.executable).with_name("lm_eval")
    r = subprocess.run([str(lm_eval), "--model", "hf", "--model_args", rec["lm_eval_model_args"], "--tasks", "r3_procgen",
                        "--limit", "2", "--gen_kwargs", "max_gen_toks=8", "--apply_chat_template",
                        "--output_path", str(tmp_path / "ev")], capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(next((tmp_path / "ev").rglob("results_*.json")).read_text())
    assert "acc,none" in res["results"]["r3_procgen"]
    ma = res["config"]["model_args"]
    assert (ma.get("peft") if isinstance(ma, dict) else ma.split("peft=")[-1]) == str(tmp_path / "run" / "final")


@pytest.mark.parametrize("name", ["sft", "dpo", "stepfix", "grpo", "psv"])
def test_shipped_configs_parse(name):
    mod = {"sft": sft, "dpo": dpo, "stepfix": stepfix, "grpo": grpo, "psv": psv}[name]
    cfg = parse(mod.Config, ["--config", str(REPO / "trainers" / "configs" / f"{name}.yaml")])
    assert cfg.output_dir == f"runs/{name}"
