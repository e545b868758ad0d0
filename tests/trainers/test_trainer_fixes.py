"""Review fixes of the trainers (issue 21, item 7) and the pluggable generation (item 6), each on a
tiny random model: --help of every trainer, exact flag names, GRPO's KL reference, stepfix's optional
baseline, resume past a half-written checkpoint, run.json on a dying run, train_loss over a resumed
run, the early error of the stepfix example config, HF generation stopping at end-of-turn ids and
the error for use_vllm without vllm."""
from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from trainers import dpo, generation, grpo, psv, sft, stepfix  # noqa: E402
from trainers.core.config import BaseConfig, build_parser, make, parse  # noqa: E402
from trainers.core.entry import main  # noqa: E402
from trainers.core.mixins import STATE_FILE  # noqa: E402
from trainers.core.model import frozen_reference, load_tokenizer, policy_model  # noqa: E402
from trainers.core.records import checkpoint_problems, resume_checkpoint, resume_record, whole_run_loss, write_run  # noqa: E402
from trainers.errors import ConfigError, option  # noqa: E402
from transformers import TrainerCallback  # noqa: E402

from trainer_kw import base_kw  # noqa: E402  (tests/trainers/ is on sys.path)

REPO = Path(__file__).resolve().parents[2]
TRAINERS = {"sft": sft, "dpo": dpo, "psv": psv, "grpo": grpo, "stepfix": stepfix}


class CrashAt(TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kw):
        if state.global_step == self.step:
            raise RuntimeError(f"simulated crash at step {self.step}")


def _adapter(path: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(path / "adapter_model.safetensors"))


# ------------------------------------------------------------------------------- CLI and help

@pytest.mark.parametrize("name", ["sft", "dpo", "psv", "grpo", "stepfix", "rag"])
def test_help_of_every_trainer(name):
    r = subprocess.run([sys.executable, "-m", f"trainers.{name}", "--help"], capture_output=True, text=True,
                       cwd=REPO, timeout=120)
    assert r.returncode == 0, r.stderr[-1500:]
    assert "usage:" in r.stdout
    if name == "rag":
        return
    text = " ".join(r.stdout.split())  # argparse wraps lines
    fields = dataclasses.fields(TRAINERS[name].Config)
    for f in fields:
        assert f"--{f.name}" in text
    # one default per flag, and never the parser's own None
    in_help = sum(f.metadata.get("help", "").count("(default:") for f in fields)
    assert text.count("(default:") == len(fields) + in_help, text
    assert "default: None" not in text


def test_flag_abbreviations_are_refused(capsys):
    with pytest.raises(SystemExit):
        parse(sft.Config, ["--max_step", "3"])
    assert "--max_step" in capsys.readouterr().err
    assert parse(sft.Config, ["--max_steps", "3"]).max_steps == 3
    from trainers import rag

    with pytest.raises(SystemExit):
        rag.main(["--procgen", "5"])  # not --procgen_n


def test_percent_in_a_help_text_is_escaped():
    @dataclasses.dataclass
    class C(BaseConfig):
        extra: int = option(1, "100% of the time; %(prog)s is not a format here")

    help_text = build_parser(C, prog="x").format_help()
    assert "100% of the time" in " ".join(help_text.split())


# --------------------------------------------------------------------------------- GRPO reference

@pytest.mark.slow
def test_grpo_kl_reference_is_the_sft_adapter(tiny, data, tmp_path, sft_adapter):
    from trl.trainer.utils import use_adapter

    cfg = make(grpo.Config, **base_kw(tiny, data, tmp_path, max_steps=1), group_size=2,
                      init_adapter=sft_adapter, max_completion_length=4, beta=0.04)
    trainer = grpo.build(cfg)[0]
    model = trainer.model
    assert "ref" in model.peft_config
    assert not any(p.requires_grad for n, p in model.named_parameters() if ".ref." in n)
    ids = torch.tensor([[5, 6, 7, 8, 9, 10]])
    sft_model = frozen_reference(cfg, tiny)  # base + SFT adapter merged
    model.eval()  # LoRA dropout off
    with torch.no_grad():
        with use_adapter(model, adapter_name="ref"):  # what TRL's reference forward runs
            ref = model(input_ids=ids).logits
        with model.disable_adapter():
            base = model(input_ids=ids).logits
        want = sft_model(input_ids=ids).logits
    assert torch.allclose(ref, want, atol=1e-5)
    assert not torch.allclose(ref, base, atol=1e-3), "the reference is the base model, not the SFT adapter"


# ------------------------------------------------------------------------------ stepfix baseline

def test_stepfix_loss_with_a_baseline():
    lp2 = torch.tensor([[-1.0, -2.0]], requires_grad=True)
    lp1 = torch.tensor([[-3.0, -1.0]])
    m = torch.ones(1, 2)
    kl = torch.zeros(1, 2)
    paper, parts = stepfix.stepfix_loss(lp2, m, lp1, m, torch.tensor([0.5]), kl, beta=0.1)
    based, bparts = stepfix.stepfix_loss(lp2, m, lp1, m, torch.tensor([0.5]), kl, beta=0.1,
                                         baseline=torch.tensor([0.25]))
    # log-ratio (-3) - (-4) = 1: paper -(1 * 0.5), with b = 0.25: -(1 * 0.25)
    assert abs(float(paper) + 0.5) < 1e-6 and abs(float(based) + 0.25) < 1e-6
    assert float(parts["adv"][0]) == 0.5 and float(bparts["adv"][0]) == 0.25


def _verdict(e, n, cls="CE", valid=True):
    from verifiers.steps import StepVerdict

    return StepVerdict(e, cls if e else None, "verifier double", n, valid=valid)


def verifier_double_trainer(verdicts):
    """StepFixTrainer whose verifier is a double returning fixed verdicts in turn."""
    base = stepfix.StepFixTrainer

    class T(base):
        calls = 0

        def verify(self, q, text, ref):
            v = verdicts[T.calls % len(verdicts)]
            T.calls += 1
            return v
    return T


@pytest.mark.slow
@pytest.mark.parametrize("baseline,want", [("none", [0.625, 0.625]), ("r1", [0.375, 0.375]),
                                           ("mean", [0.625, 0.0])])
def test_stepfix_baseline_option(tiny, data, tmp_path, sft_adapter, baseline, want):
    """Verifier double: y1 wrong at step 2 of 7 (r1 = 0.25), y2 at step 5 of 7 (r2 = 0.625) every time.
    none: advantage r2 (the paper); r1: r2 - r1; mean: r2 - running mean; the first batch (of one) has
    no earlier mean and no other sample (leave-one-out: b = 0), the running mean then starts at 0.625."""
    assert stepfix.Config().baseline == "none"  # off by default
    T = verifier_double_trainer([_verdict(2, 7), _verdict(5, 7)])
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2, batch_size=1),
                      init_adapter=sft_adapter, max_new_tokens=4, baseline=baseline)
    stepfix.train(cfg, trainer_cls=T)
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert [round(r["adv"], 6) for r in recs] == want
    state = json.loads((tmp_path / "checkpoint-2" / STATE_FILE).read_text())
    assert state["r2_running_mean"] == (pytest.approx(0.625) if baseline == "mean" else None)


# ------------------------------------------------------------------------------------ resume

@pytest.mark.slow
def test_checkpoint_problems_finds_truncated_files(tiny, data, tmp_path):
    sft.train(make(sft.Config, **base_kw(tiny, data, tmp_path, max_steps=2)))
    ck = tmp_path / "checkpoint-2"
    assert checkpoint_problems(ck) == []
    for name, cut in (("adapter_model.safetensors", 0.5), ("optimizer.pt", 0.5), ("trainer_state.json", 0.5)):
        bad = tmp_path / f"bad-{name}" / "checkpoint-2"
        shutil.copytree(ck, bad)
        f = bad / name
        f.write_bytes(f.read_bytes()[: int(f.stat().st_size * cut)])
        problems = checkpoint_problems(bad)
        assert problems and any(name in p for p in problems), (name, problems)
    gone = tmp_path / "gone" / "checkpoint-2"
    shutil.copytree(ck, gone)
    (gone / "scheduler.pt").unlink()
    assert "scheduler.pt missing" in checkpoint_problems(gone)


@pytest.mark.slow
def test_resume_skips_a_half_written_checkpoint(tiny, data, tmp_path, caplog):
    def cfg(out, **k):
        return make(sft.Config, **{**base_kw(tiny, data, out, max_steps=4, learning_rate=1e-3), **k})

    sft.train(cfg(tmp_path / "a"))  # uninterrupted
    sft.train(cfg(tmp_path / "b"))
    # the run is killed while writing checkpoint-4: its weights and optimizer state are cut short
    for name in ("adapter_model.safetensors", "optimizer.pt"):
        f = tmp_path / "b" / "checkpoint-4" / name
        f.write_bytes(f.read_bytes()[: f.stat().st_size // 3])
    shutil.rmtree(tmp_path / "b" / "final")
    with caplog.at_level(logging.WARNING, logger="r3bench.trainers"):
        res = sft.train(cfg(tmp_path / "b", resume=True))
    assert "resuming from checkpoint-2" in caplog.text and "checkpoint-4" in caplog.text
    assert (tmp_path / "b" / "broken-checkpoint-4").is_dir()
    rec = json.loads((tmp_path / "b" / "run.json").read_text())
    assert rec["resumed_from"] == "checkpoint-2" and rec["skipped_checkpoints"][0]["checkpoint"] == "checkpoint-4"
    assert res["global_step"] == 4
    a, b = _adapter(tmp_path / "a" / "final"), _adapter(tmp_path / "b" / "final")
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k


@pytest.mark.slow
def test_resume_with_no_intact_checkpoint_is_an_error(tiny, data, tmp_path):
    sft.train(make(sft.Config, **base_kw(tiny, data, tmp_path, max_steps=2)))
    (tmp_path / "checkpoint-2" / "trainer_state.json").write_text("{")
    with pytest.raises(ConfigError, match="no intact checkpoint"):
        resume_checkpoint(make(sft.Config, **base_kw(tiny, data, tmp_path, max_steps=2), resume=True))


@pytest.mark.slow
def test_train_loss_after_resume_covers_the_whole_run(tiny, data, tmp_path):
    def cfg(out, **k):
        return make(sft.Config, **{**base_kw(tiny, data, out, max_steps=4, learning_rate=1e-3), **k})

    a = sft.train(cfg(tmp_path / "a"))
    with pytest.raises(RuntimeError, match="simulated crash"):
        sft.train(cfg(tmp_path / "b"), extra_callbacks=[CrashAt(3)])
    b = sft.train(cfg(tmp_path / "b", resume=True))
    assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-5)
    assert b["train_loss_covers"] == "whole run"
    # HF's own figure covers only the steps after the resume
    logged = [json.loads(x) for x in (tmp_path / "a" / "metrics.jsonl").read_text().splitlines()]
    losses = {d["step"]: d["loss"] for d in logged if "loss" in d}
    assert a["train_loss"] == pytest.approx(sum(losses[s] for s in (1, 2, 3, 4)) / 4, rel=1e-5)


@pytest.mark.slow
def test_a_run_resumed_from_a_checkpoint_that_rotation_deletes_finishes(tiny, data, tmp_path):
    """save_total_limit 2: resumed from checkpoint-2, the run saves 4 and 6 and HF deletes 2. The end
    of the run read checkpoint-2 after training and crashed a finished run (FileNotFoundError on its
    trainer_state.json; the study's first GRPO seed died so at its last line)."""
    def cfg(out, **k):
        return make(sft.Config, **{**base_kw(tiny, data, out, max_steps=6, learning_rate=1e-3), **k})

    a = sft.train(cfg(tmp_path / "a"))
    with pytest.raises(RuntimeError, match="simulated crash"):
        sft.train(cfg(tmp_path / "b"), extra_callbacks=[CrashAt(3)])
    b = sft.train(cfg(tmp_path / "b", resume=True))
    assert b["resumed_from"] == "checkpoint-2" and not (tmp_path / "b" / "checkpoint-2").exists()
    assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-5) and b["train_loss_covers"] == "whole run"
    assert json.loads((tmp_path / "b" / "run.json").read_text())["status"] == "finished"


class CrashAfterSave(TrainerCallback):
    def __init__(self, step):
        self.step = step

    def on_save(self, args, state, control, **kw):
        if state.global_step == self.step:
            raise RuntimeError(f"simulated crash after saving checkpoint-{self.step}")


@pytest.mark.slow
def test_a_run_that_died_after_its_last_checkpoint_resumes_without_an_extra_step(tiny, data, tmp_path):
    """Killed after checkpoint-4 of 4 was written, before final/: HF's loop, resumed there, took a
    fifth optimizer step (global_step 5). Now the resume loads checkpoint-4 and saves it as final/."""
    def cfg(out, **k):
        return make(sft.Config, **{**base_kw(tiny, data, out, max_steps=4, learning_rate=1e-3), **k})

    a = sft.train(cfg(tmp_path / "a"))
    with pytest.raises(RuntimeError, match="simulated crash"):
        sft.train(cfg(tmp_path / "b"), extra_callbacks=[CrashAfterSave(4)])
    assert not (tmp_path / "b" / "final").exists()
    class TrainEnd(TrainerCallback):
        steps = []

        def on_train_end(self, args, state, control, **kw):  # where LmEval scores the final adapter
            TrainEnd.steps.append(state.global_step)

    b = sft.train(cfg(tmp_path / "b", resume=True), extra_callbacks=[TrainEnd()])
    assert b["global_step"] == 4 and b["resumed_from"] == "checkpoint-4" and b["train_loss_this_session"] is None
    assert TrainEnd.steps == [4]
    assert b["train_loss"] == pytest.approx(a["train_loss"], rel=1e-5)
    assert not (tmp_path / "b" / "checkpoint-5").exists()
    fa, fb = _adapter(tmp_path / "a" / "final"), _adapter(tmp_path / "b" / "final")
    for k in fa:
        assert torch.allclose(fa[k], fb[k], atol=1e-6), k
    assert json.loads((tmp_path / "b" / "run.json").read_text())["status"] == "finished"


def test_whole_run_loss_of_an_older_checkpoint_is_read_before_training(tmp_path):
    """A checkpoint without r3bench_state.json (older r3bench): its log_history is read when the run
    starts, so the whole-run loss is there after rotation has deleted the checkpoint."""
    ck = tmp_path / "checkpoint-4"
    ck.mkdir()
    (ck / "trainer_state.json").write_text(json.dumps({"global_step": 4, "log_history": [
        {"step": 2, "loss": 1.0}, {"step": 4, "loss": 0.5}, {"step": 4, "train_runtime": 1.0}]}))
    rec = resume_record(str(ck))
    shutil.rmtree(ck)
    assert rec["global_step"] == 4
    trainer = types.SimpleNamespace(state=types.SimpleNamespace(global_step=6), r3_loss_sum=0.6)
    loss, how = whole_run_loss(trainer, rec)
    assert loss == pytest.approx((2 * 1.0 + 2 * 0.5 + 0.6) / 6) and "steps 1-4" in how
    assert whole_run_loss(trainer, None) == (pytest.approx(0.1), "whole run")
    assert resume_record(None) is None


# ------------------------------------------------------------------------------------ run.json

@pytest.mark.slow
def test_run_json_says_interrupted_when_a_run_dies(tiny, data, tmp_path):
    out = tmp_path / "direct"
    with pytest.raises(RuntimeError):
        sft.train(make(sft.Config, **base_kw(tiny, data, out, max_steps=4)), extra_callbacks=[CrashAt(1)])
    rec = json.loads((out / "run.json").read_text())
    assert rec["status"] == "interrupted" and "simulated crash" in rec["error"]

    argv = ["--model", tiny, "--data", data, "--report_to", "none", "--eval_tasks", ""]

    def boom(cfg):
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        main(sft.Config, boom, argv + ["--output_dir", str(tmp_path / "m1")])
    rec = json.loads((tmp_path / "m1" / "run.json").read_text())
    assert rec["status"] == "interrupted" and "disk on fire" in rec["error"] and rec["traceback"]

    def ctrl_c(cfg):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        main(sft.Config, ctrl_c, argv + ["--output_dir", str(tmp_path / "m2")])
    assert json.loads((tmp_path / "m2" / "run.json").read_text())["status"] == "interrupted"


def test_stepfix_example_config_without_sft_adapter_fails_early(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the example's init_adapter runs/sft/final is relative
    out = tmp_path / "out"
    rc = stepfix.main(["--config", str(REPO / "trainers" / "configs" / "stepfix.yaml"), "--output_dir", str(out)])
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert len(err.splitlines()) == 1 and "python -m trainers.sft --config trainers/configs/sft.yaml" in err
    assert not (out / "data").exists()  # before any data export or model load


# ---------------------------------------------------------------------------------- generation

def test_stop_ids_include_the_chat_templates_end_of_turn(tiny):
    from transformers import AutoTokenizer, GenerationConfig

    tok = AutoTokenizer.from_pretrained(tiny)
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    tok.eos_token = "<|endoftext|>"  # a tokenizer whose eos is not the turn terminator
    eot = tok.convert_tokens_to_ids("<|endoftext|>")
    assert generation.stop_token_ids(tok) == [eot, im_end]

    class M:
        generation_config = GenerationConfig(eos_token_id=[7, eot])

    assert generation.stop_token_ids(tok, M()) == [eot, 7, im_end]


def test_trim_cuts_after_the_first_stop_id():
    assert generation.trim([5, 6, 2, 9, 2], [2], 0) == [5, 6, 2]
    assert generation.trim([5, 6, 0, 0], [2], 0) == [5, 6]
    assert generation.trim([5, 6, 0, 0], [2, 0], 0) == [5, 6, 0]


def test_hf_generator_passes_stop_ids_and_the_kv_cache(tiny):
    """Generation double around the real tiny model: records generate's kwargs, and returns a fixed
    continuation with an end-of-turn id in the middle."""
    from transformers import AutoModelForCausalLM

    tok = load_tokenizer(tiny)
    tok.eos_token = "<|endoftext|>"
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    model = AutoModelForCausalLM.from_pretrained(tiny)
    model.config.use_cache = False  # what gradient checkpointing leaves behind
    seen = {}

    def fake_generate(input_ids=None, attention_mask=None, **kw):
        seen.update(kw)
        tail = torch.tensor([[11, 12, im_end, 13]] * input_ids.shape[0])
        return torch.cat([input_ids, tail], 1)

    model.generate = fake_generate
    chats = [[{"role": "user", "content": "q"}], [{"role": "user", "content": "a longer question"}]]
    ids = generation.HFGenerator().generate(model, tok, chats, generation.Sampling(max_new_tokens=4))
    assert ids == [[11, 12, im_end]] * 2
    assert im_end in seen["eos_token_id"] and seen["use_cache"] is True and seen["max_new_tokens"] == 4
    assert tok.padding_side == "right"  # restored


def test_hf_generator_on_a_peft_model_keeps_weights_and_mode(tiny, data, tmp_path):
    cfg = make(sft.Config, **base_kw(tiny, data, tmp_path))
    model = policy_model(cfg, tiny)
    g = torch.Generator().manual_seed(0)  # the same adapter whatever ran before this test
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    tok = load_tokenizer(tiny)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    model.train()
    chats = [[{"role": "user", "content": "what is 2+2?"}]] * 3
    sp = generation.Sampling(max_new_tokens=6, do_sample=False)
    merged = generation.HFGenerator(merge_lora=True).generate(model, tok, chats, sp)
    plain = generation.HFGenerator(merge_lora=False).generate(model, tok, chats, sp)
    assert all(1 <= len(r) <= 6 for r in merged)
    assert model.training
    model.eval()  # no LoRA dropout in the logits read below
    for chat, a, b in zip(chats, merged, plain):  # merged = unmerged, up to a float near-tie between two tokens
        if a != b:
            k = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
            ids = tok.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=False)
            with torch.no_grad():
                logits = model(torch.tensor([list(ids) + a[:k]])).logits[0, -1]
            assert abs(float(logits[a[k]] - logits[b[k]])) < 1e-4, (a, b)
    for n, p in model.named_parameters():
        assert torch.allclose(before[n], p, atol=1e-6), n


def test_use_vllm_without_vllm_is_a_clear_error(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    for cls in (stepfix.Config, grpo.Config):
        with pytest.raises(ConfigError, match="vllm is not importable"):
            make(cls, use_vllm=True)
    assert make(stepfix.Config).use_vllm is False
    assert isinstance(generation.make(make(stepfix.Config)), generation.HFGenerator)
    assert make(grpo.Config, use_vllm=False).trl_vllm_kwargs() == {}


# ------------------------------------------------------------------------- reward and run record

def test_stepfix_reward_is_the_fixed_position_reward():
    """stepfix.reward delegates to verifiers.rewards.step_reward: n is the format's seven steps
    (not the tags present), a format failure is the minimum, an unusable verdict gives no reward."""
    assert stepfix.reward(_verdict(2, 3))[0] == 2 / 8  # a 3-tag solution is not paid as e/(3+1)
    assert stepfix.reward(_verdict(1, 1, "FORMAT"))[0] == 0.0
    r, why = stepfix.reward(_verdict(9, 7))
    assert r is None and why


@pytest.mark.slow
def test_stepfix_unusable_verdict_is_skipped_and_counted(tiny, data, tmp_path):
    T = verifier_double_trainer([_verdict(9, 7)])  # a first error past the seventh step
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=1), max_new_tokens=4)
    stepfix.train(cfg, trainer_cls=T)
    d = next(json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines() if "skip_rate" in x)
    assert d["skip_rate"] == 1.0 and d["reward_failures"] == 2 and d["revised"] == 0
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert all(r["skipped"] and r["skip_reason"].startswith("no reward for y1") for r in recs)


@pytest.mark.slow
def test_run_json_records_the_sandbox_isolation(tiny, data, tmp_path):
    from verifiers.sandbox import isolation_level

    sft.train(make(sft.Config, **base_kw(tiny, data, tmp_path, max_steps=1)))
    rec = json.loads((tmp_path / "run.json").read_text())
    assert rec["status"] == "finished" and rec["sandbox_isolation"] == isolation_level()


def test_stepfix_completion_logits_gathered_equal_the_full_forward(tiny):
    """The LM head runs only at completion positions; the logits equal the plain forward's there."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(tiny).eval()
    ids, att, tgt, mask, starts = stepfix.completion_batch([([5, 6, 7], [8, 9, 10, 11]), ([20, 21, 22, 23, 24], [25])],
                                                           0, "cpu")
    assert stepfix.backbone_and_head(model) is not None
    with torch.no_grad():
        got = stepfix.completion_logits(model, ids, att, starts, tgt.shape[1])
        full = model(input_ids=ids, attention_mask=att).logits
    assert got.shape == (2, 4, full.shape[-1])
    assert torch.allclose(got[0], full[0, 2:6], atol=1e-5)
    assert torch.allclose(got[1, :1], full[1, 4:5], atol=1e-5)
    model.config.final_logit_softcapping = 30.0  # logits are more than head(hidden): the plain forward
    assert stepfix.backbone_and_head(model) is None


def test_malloc_mmap_threshold_is_set_in_the_trainer_process(monkeypatch):
    """Every trainer has `malloc_mmap_threshold` (default 1 MiB) and run_training applies it before it
    builds anything; set_mmap_threshold(0) leaves glibc's default; in a fresh process on glibc mallopt
    accepts the value. What it does to peak memory is measured in benchmarks/malloc_peak.py."""
    from trainers import dpo, grpo, psv, sft, stepfix
    from trainers.core import memory
    from trainers.core.entry import run_training
    from trainers.core.memory import set_mmap_threshold

    for mod in (sft, dpo, grpo, psv, stepfix):
        f = {x.name: x for x in dataclasses.fields(mod.Config)}["malloc_mmap_threshold"]
        assert f.default == 1 << 20, mod.__name__
    assert set_mmap_threshold(0) is False
    r = subprocess.run([sys.executable, "-c", "from trainers.core.memory import set_mmap_threshold as s; print(s(1 << 20))"],
                       capture_output=True, text=True, cwd=str(Path(__file__).resolve().parents[2]))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == ("True" if sys.platform.startswith("linux") else "False")
    seen = []
    monkeypatch.setattr(memory, "set_mmap_threshold", lambda n: seen.append(n) or True)

    def build(cfg):
        raise RuntimeError("stop after the threshold")

    cfg = sft.Config(output_dir=str(Path(__import__("tempfile").mkdtemp()) / "run"), malloc_mmap_threshold=12345)
    with pytest.raises(RuntimeError, match="stop after"):
        run_training(cfg, build)
    assert seen == [12345]


def test_run_json_records_the_peak_resident_memory(tmp_path):
    import resource

    cfg = sft.Config(output_dir=str(tmp_path / "run"))
    rec = json.loads(write_run(cfg, status="running").read_text())
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    assert 0.01 < rec["peak_rss_gb"] <= own + 0.01


@pytest.mark.parametrize("checkpointing", [True, False])
def test_training_arguments_use_no_deprecated_name(checkpointing, tmp_path):
    """transformers 5 renamed gradient_checkpointing to activation_checkpointing: the trainers' arguments
    use the new names, so neither TrainingArguments nor TRL's configs (whose own default sets the old
    name) print `FutureWarning: gradient_checkpointing is deprecated`, and checkpointing still follows
    the trainer's flag."""
    import warnings

    from transformers import TrainingArguments
    from trl import DPOConfig, GRPOConfig, SFTConfig

    from trainers.core.model import training_args_kwargs

    cfg = make(sft.Config, output_dir=str(tmp_path), gradient_checkpointing=checkpointing, batch_size=4)
    for cls in (TrainingArguments, SFTConfig, DPOConfig, GRPOConfig):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            extra = {"num_generations": 2} if cls is GRPOConfig else {}
            args = cls(**training_args_kwargs(cfg), **extra)
        bad = [str(w.message) for w in caught if "checkpointing" in str(w.message)]
        assert not bad, (cls.__name__, bad)
        assert args.gradient_checkpointing is checkpointing and args.activation_checkpointing is checkpointing
        assert (args.gradient_checkpointing_kwargs or {}).get("use_reentrant", False) is False


def test_stepfix_generation_phase_prints_no_checkpointing_deprecation(tiny, tmp_path):
    """stepfix samples through TRL's unwrap_model_for_generation, which toggles checkpointing with
    transformers 5's deprecated aliases (three FutureWarnings a generation phase): for_generation keeps
    them out of the user's output, still turns checkpointing off while sampling and back on after."""
    import warnings

    from accelerate import Accelerator
    from transformers import AutoModelForCausalLM, TrainingArguments

    from trainers.stepfix_trainer import StepFixTrainer

    model = AutoModelForCausalLM.from_pretrained(tiny)
    model.activation_checkpointing_enable({"use_reentrant": False})
    model.train()
    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[], activation_checkpointing=True,
                             activation_checkpointing_kwargs={"use_reentrant": False})
    fake = types.SimpleNamespace(args=args, accelerator=Accelerator(cpu=True))  # after the arguments' reset
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with StepFixTrainer.for_generation(fake, model) as m:
            assert not m.is_activation_checkpointing  # off while it samples
    assert model.is_activation_checkpointing  # on again for the backward pass
    bad = [str(w.message) for w in caught if "checkpointing" in str(w.message)]
    assert not bad, bad
