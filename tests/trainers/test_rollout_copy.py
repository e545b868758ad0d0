"""Sampling from a merged copy of the policy (`rollout_dtype`, trainers.generation.RolloutCopy), on the tiny
random model: the merged weights equal peft's merge and leave the policy untouched, the float32 copy samples
what the policy samples, the copy follows the policy after an optimizer step and only then, the config
refuses what it cannot do, and stepfix and GRPO train through it."""
from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("trl")

from trainers import generation, grpo, sft, stepfix  # noqa: E402
from trainers.core.config import make  # noqa: E402
from trainers.core.model import load_base, load_tokenizer, policy_model  # noqa: E402
from trainers.errors import ConfigError  # noqa: E402

from trainer_kw import base_kw  # noqa: E402  (tests/trainers/ is on sys.path)


def _policy(tiny, data, tmp_path, seed=0):
    """The tiny model with a LoRA whose B factors are random (a fresh LoRA's B is 0: nothing to merge)."""
    model = policy_model(make(sft.Config, **base_kw(tiny, data, tmp_path)), tiny)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    return model


def test_merged_weights_are_peft_merge_and_leave_the_policy_alone(tiny, data, tmp_path):
    model = _policy(tiny, data, tmp_path)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    with torch.no_grad():
        ours = dict(generation.merged_weights(model))
    for n, p in model.named_parameters():
        assert torch.equal(before[n], p), n  # bitwise: no merge and unmerge happened
    ref = {n: p for n, p in _policy(tiny, data, tmp_path / "b").merge_and_unload().named_parameters()}
    assert set(ours) == set(ref)
    for n, t in ours.items():
        assert torch.allclose(t, ref[n], atol=1e-6), n
    plain = dict(load_base(tiny).named_parameters())
    changed = sum(not torch.equal(t, plain[n]) for n, t in ours.items())
    lora_layers = sum(1 for n in before if "lora_A" in n)
    assert lora_layers > 0 and changed == lora_layers  # every LoRA layer merged, nothing else touched


def test_a_float32_copy_samples_what_the_policy_samples(tiny, data, tmp_path):
    model = _policy(tiny, data, tmp_path)
    tok = load_tokenizer(tiny)
    chats = [[{"role": "user", "content": "what is 2+2?"}], [{"role": "user", "content": "a ball falls 5 m"}]]
    sp = generation.Sampling(max_new_tokens=8, do_sample=False, policy_step=0)
    copy = generation.RolloutCopy("float32")
    assert copy.generate(model, tok, chats, sp) == generation.HFGenerator().generate(model, tok, chats, sp)
    sampled = generation.Sampling(max_new_tokens=8, temperature=0.7, seed=5, policy_step=0)
    assert copy.generate(model, tok, chats, sampled) == generation.HFGenerator().generate(model, tok, chats, sampled)
    assert copy.copy.dtype == torch.float32 and not any(p.requires_grad for p in copy.copy.parameters())


def test_the_copy_follows_the_policy_after_a_step_and_only_then(tiny, data, tmp_path):
    model = _policy(tiny, data, tmp_path)
    tok = load_tokenizer(tiny)
    chats = [[{"role": "user", "content": "q"}]]
    copy = generation.RolloutCopy("bfloat16")
    copy.generate(model, tok, chats, generation.Sampling(max_new_tokens=2, policy_step=0))
    assert copy.syncs == 1 and copy.copy.dtype == torch.bfloat16
    name, lora_b = next((n, p) for n, p in model.named_parameters() if "lora_B" in n)
    with torch.no_grad():
        lora_b.add_(1.0)
    copy.generate(model, tok, chats, generation.Sampling(max_new_tokens=2, policy_step=0))
    assert copy.syncs == 1  # same optimizer step: not pushed again
    copy.generate(model, tok, chats, generation.Sampling(max_new_tokens=2, policy_step=1))
    assert copy.syncs == 2
    with torch.no_grad():
        want = dict(generation.merged_weights(model))
    for n, t in copy.copy.named_parameters():
        assert torch.allclose(t.float(), want[n], atol=2e-2, rtol=1e-2), n


def test_the_config_chooses_the_backend_and_refuses_what_it_cannot_do(tiny, data, tmp_path):
    kw = base_kw(tiny, data, tmp_path)
    assert type(generation.make(make(stepfix.Config, **kw))) is generation.HFGenerator
    g = generation.make(make(stepfix.Config, **kw, rollout_dtype="bfloat16", rollout_cache="static"))
    assert isinstance(g, generation.RolloutCopy) and g.dtype == "bfloat16" and g.hf.cache_implementation == "static"
    assert generation.make(make(stepfix.Config, **kw, rollout_cache="static")).cache_implementation == "static"
    gkw = dict(kw, group_size=2)
    for cls, k in ((stepfix.Config, kw), (grpo.Config, gkw)):
        with pytest.raises(ConfigError, match="rollout_dtype must be one of"):
            make(cls, **k, rollout_dtype="fp8")
        with pytest.raises(ConfigError, match="rollout_cache must be"):
            make(cls, **k, rollout_cache="paged")
    assert grpo.grpo_args(make(grpo.Config, **gkw, rollout_cache="static")).cache_implementation == "static"


def test_static_cache_samples_what_the_dynamic_cache_samples(tiny, data, tmp_path):
    model = _policy(tiny, data, tmp_path)
    tok = load_tokenizer(tiny)
    chats = [[{"role": "user", "content": "what is 2+2?"}], [{"role": "user", "content": "a much longer question here"}]]
    sp = generation.Sampling(max_new_tokens=8, do_sample=False)
    assert generation.HFGenerator(cache_implementation="static").generate(model, tok, chats, sp) == \
        generation.HFGenerator().generate(model, tok, chats, sp)


def test_bf16_auto_on_a_cpu_that_multiplies_bf16_is_autocast_over_fp32_weights(tiny, data, tmp_path, monkeypatch):
    from trainers.core import model as m

    kw = base_kw(tiny, data, tmp_path)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("R3BENCH_CPU_BF16", "1")
    cfg = make(stepfix.Config, **kw)
    assert m.use_bf16(cfg) and not m.bf16_weights(cfg) and m.training_placement(cfg) == ("cpu", "float32")
    assert m.training_args_kwargs(cfg)["bf16"] is True and m.load_base(tiny, cfg).dtype == torch.float32
    assert generation.rollout_dtype(cfg) == "bfloat16" and isinstance(generation.make(cfg), generation.RolloutCopy)
    assert generation.rollout_dtype(make(stepfix.Config, **kw, rollout_dtype="policy")) == "policy"
    off = make(stepfix.Config, **kw, bf16="false")
    assert not m.use_bf16(off) and generation.rollout_dtype(off) == "policy"
    monkeypatch.setenv("R3BENCH_CPU_BF16", "0")  # a CPU without AMX-BF16: fp32 throughout, as before
    assert not m.use_bf16(cfg) and type(generation.make(cfg)) is generation.HFGenerator


@pytest.mark.parametrize("trainer", ["stepfix", "grpo"])
def test_a_run_trains_in_bf16_autocast_through_the_bf16_copy(trainer, tiny, data, tmp_path, one_thread, monkeypatch):
    """`bf16: auto` on a CPU that multiplies bf16 (forced here): autocast training, rollouts from the bf16 copy."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("R3BENCH_CPU_BF16", "1")
    mod = {"stepfix": stepfix, "grpo": grpo}[trainer]
    extra = dict(max_new_tokens=8) if trainer == "stepfix" else dict(max_completion_length=8, group_size=2,
                                                                      batch_size=2)
    cfg = make(mod.Config, **base_kw(tiny, data, tmp_path, max_steps=2, save_steps=10, start_check_n=0, **extra))
    trainer_obj, *_ = mod.build(cfg)
    trainer_obj.train()
    gen = trainer_obj.generator if trainer == "stepfix" else trainer_obj.r3_rollout
    assert isinstance(gen, generation.RolloutCopy) and gen.syncs >= 1
    assert trainer_obj.args.bf16 and next(trainer_obj.model.parameters()).dtype == torch.float32
    recs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines() if x.strip()]
    losses = [r["loss"] for r in recs if "loss" in r]
    assert len(losses) == 2 and all(x == x for x in losses)  # two steps, no NaN
