"""trainers.generation's vLLM backends against DOUBLES of vLLM's interface (vllm cannot be installed on a
CPU machine: its wheel is a CUDA build): the weight sync (LoRA merged, TRL's parameter names, once per
optimizer step and not at every call), the per-call seed, and the batching of the prompts.

VLLMEngineDouble stands in for vllm.LLM (colocate), VLLMClientDouble for trl's VLLMClient (server),
and a module double for `vllm` provides SamplingParams. They record what they are given and answer
with fixed token ids; nothing of vLLM's own behaviour is modelled. The same code on a GPU with the
real vLLM: studies/gpu_smoke_dist.py."""
from __future__ import annotations

import sys
import types
from contextlib import contextmanager

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from trainers import generation  # noqa: E402


class SamplingParamsDouble:
    def __init__(self, **kw):
        self.kw = kw


class _Out:
    def __init__(self, ids):
        self.outputs = [types.SimpleNamespace(token_ids=ids)]


class VLLMEngineDouble:
    """Double of vllm.LLM: records loaded weights, prefix-cache resets and generate calls."""

    def __init__(self):
        self.loaded, self.resets, self.calls = [], 0, []
        model = types.SimpleNamespace(load_weights=lambda pairs: self.loaded.extend((n, t.clone()) for n, t in pairs))
        self.llm_engine = types.SimpleNamespace(model_executor=types.SimpleNamespace(
            driver_worker=types.SimpleNamespace(model_runner=types.SimpleNamespace(model=model))))

    def reset_prefix_cache(self):
        self.resets += 1

    def generate(self, prompts, params, use_tqdm=False):
        self.calls.append((prompts, params))
        return [_Out([7, 8, 9]) for _ in prompts]


class VLLMClientDouble:
    """Double of trl's VLLMClient (server mode): records weight updates and generate requests."""

    def __init__(self):
        self.updated, self.resets, self.requests, self.in_update = [], 0, [], False

    @contextmanager
    def weight_update(self):
        self.in_update = True
        yield
        self.in_update = False

    def update_named_param(self, name, weights):
        assert self.in_update, "weights sent outside weight_update()"
        self.updated.append((name, weights.clone()))

    def reset_prefix_cache(self):
        self.resets += 1

    def generate(self, prompts, **kw):
        self.requests.append((prompts, kw))
        return {"completion_ids": [[7, 8] for _ in prompts]}


@pytest.fixture
def policy(tiny):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny, dtype=torch.float32),
                           LoraConfig(r=4, lora_alpha=8, target_modules="all-linear", task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.1)
    return model, AutoTokenizer.from_pretrained(tiny)


@pytest.fixture
def vllm_module(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(SamplingParams=SamplingParamsDouble))


def _step(model):
    """One optimizer step on the LoRA parameters (in place, as every torch optimizer updates)."""
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    model(input_ids=torch.tensor([[5, 6, 7]])).logits.sum().backward()
    opt.step()
    opt.zero_grad()


def _merged_q_proj(model):
    layer = model.base_model.model.model.layers[0].self_attn.q_proj
    return layer.base_layer.weight + layer.scaling["default"] * layer.lora_B["default"].weight @ layer.lora_A["default"].weight


def test_colocate_syncs_merged_weights_once_per_optimizer_step(policy, vllm_module):
    model, tok = policy
    eng = VLLMEngineDouble()
    gen = generation.VLLMGenerator("unused", llm=eng)
    chats = [[{"role": "user", "content": "a"}], [{"role": "user", "content": "bb"}]]
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    out = gen.generate(model, tok, chats, generation.Sampling(max_new_tokens=5, seed=1234))
    assert gen.syncs == 1 and eng.resets == 1 and len(out) == 2
    names = [n for n, _ in eng.loaded]
    assert not any("lora_" in n or n.startswith("base_model.") or ".base_layer" in n for n in names), names[:5]
    loaded = dict(eng.loaded)
    want = _merged_q_proj(model).detach()
    assert torch.allclose(loaded["model.layers.0.self_attn.q_proj.weight"], want, atol=1e-6)
    assert all(torch.allclose(before[n], p, atol=1e-6) for n, p in model.named_parameters()), "merge was not undone"
    # one batched request with every prompt, the call's seed, the end-of-turn stop ids
    prompts, params = eng.calls[0]
    assert len(prompts) == 2 and [p.kw["seed"] for p in params] == [1234, 1235] and params[0].kw["stop_token_ids"]
    gen.generate(model, tok, chats, generation.Sampling(seed=1))
    assert gen.syncs == 1, "synced again without an optimizer step"
    _step(model)
    gen.generate(model, tok, chats, generation.Sampling(seed=2))
    assert gen.syncs == 2
    assert torch.allclose(dict(eng.loaded[-len(names):])["model.layers.0.self_attn.q_proj.weight"],
                          _merged_q_proj(model).detach(), atol=1e-6)


def test_server_mode_pushes_weights_in_one_update_and_sends_the_seed(policy):
    model, tok = policy
    client = VLLMClientDouble()
    gen = generation.VLLMServerGenerator("http://double", client=client)
    chats = [[{"role": "user", "content": "a"}]] * 3
    out = gen.generate(model, tok, chats, generation.Sampling(max_new_tokens=4, temperature=0.7, seed=99))
    assert out == [[7, 8]] * 3 and gen.syncs == 1 and client.resets == 1
    assert not any("lora_" in n for n, _ in client.updated)
    # three copies of one prompt: three requests, seeds 99, 100, 101 (one seed per request)
    assert [len(p) for p, _ in client.requests] == [1, 1, 1]
    assert [kw["generation_kwargs"]["seed"] for _, kw in client.requests] == [99, 100, 101]
    assert client.requests[0][1]["max_tokens"] == 4
    gen.generate(model, tok, chats, generation.Sampling(seed=5))
    assert gen.syncs == 1
    _step(model)
    gen.generate(model, tok, chats, generation.Sampling(seed=6))
    assert gen.syncs == 2


def _revision_chats(k):
    """stepfix's revision phase with `revisions` k: each problem's chat k times in a row."""
    return [c for c in ([{"role": "user", "content": "a"}], [{"role": "user", "content": "bb"}]) for _ in range(k)]


def test_colocate_gives_each_copy_of_a_revision_prompt_its_own_seed(policy, vllm_module):
    """revisions k > 1: with one SamplingParams(seed) for the batch the k identical revision prompts got
    identical noise, identical samples and RLOO advantages all 0; each request has its own seed now."""
    model, tok = policy
    eng = VLLMEngineDouble()
    gen = generation.VLLMGenerator("unused", llm=eng)
    gen.generate(model, tok, _revision_chats(3), generation.Sampling(seed=40))
    prompts, params = eng.calls[0]
    assert isinstance(params, list) and len(params) == len(prompts) == 6
    seeds = [p.kw["seed"] for p in params]
    assert len(set(seeds)) == 6 and seeds[0] == 40
    gen.generate(model, tok, _revision_chats(3), generation.Sampling(seed=None))
    assert not isinstance(eng.calls[1][1], list) and eng.calls[1][1].kw.get("seed") is None


def test_server_gives_each_copy_of_a_revision_prompt_its_own_seed(policy):
    model, tok = policy
    client = VLLMClientDouble()
    client.generate = lambda prompts, **kw: (client.requests.append((prompts, kw)) or
                                             {"completion_ids": [[7, 8 + len(p)] for p in prompts]})
    gen = generation.VLLMServerGenerator("http://double", client=client)
    chats = _revision_chats(3)
    out = gen.generate(model, tok, chats, generation.Sampling(seed=40))
    sent = [(tuple(map(tuple, p)), kw["generation_kwargs"]["seed"]) for p, kw in client.requests]
    assert [s for _, s in sent] == [40, 41, 42] and all(len(p) == 2 and len(set(p)) == 2 for p, _ in sent)
    pairs = [(p, s) for ps, s in sent for p in ps]
    assert len(set(pairs)) == 6  # every copy of a prompt reached the server under another seed
    a, b = (len(x) for x in gen.prompts(tok, chats[::3]))
    assert out == [[7, 8 + a]] * 3 + [[7, 8 + b]] * 3  # the answers back in the prompts' order


def test_vllm_mode_server_is_a_config_choice(monkeypatch):
    from trainers import stepfix
    from trainers.core.config import make
    from trainers.errors import ConfigError

    monkeypatch.setattr(generation, "check_available", lambda use: None)
    cfg = make(stepfix.Config, use_vllm=True, vllm_mode="server", vllm_server_base_url="http://h:1")
    assert cfg.trl_vllm_kwargs()["vllm_server_base_url"] == "http://h:1"
    with pytest.raises(ConfigError, match="colocate or server"):
        make(stepfix.Config, use_vllm=True, vllm_mode="remote")


def test_sync_follows_the_optimizer_step_also_under_fused_adamw(policy, vllm_module):
    """HF's default optimizer (adamw_torch_fused) updates the weights without bumping the tensors'
    version counters: before, the sync trigger (policy_version) never changed after the first push and
    the engine sampled from the initial policy for the whole run. The trainer's optimizer step
    (Sampling.policy_step) is the trigger now, as TRL's _last_loaded_step."""
    model, tok = policy
    eng = VLLMEngineDouble()
    gen = generation.VLLMGenerator("unused", llm=eng)
    chats = [[{"role": "user", "content": "a"}]]
    gen.generate(model, tok, chats, generation.Sampling(seed=1, policy_step=0))
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.1, fused=True)
    v0 = generation.policy_version(model)
    model(input_ids=torch.tensor([[5, 6, 7]])).logits.sum().backward()
    opt.step()
    assert generation.policy_version(model) == v0  # the counters did not move: they cannot be the trigger
    gen.generate(model, tok, chats, generation.Sampling(seed=2, policy_step=0))
    assert gen.syncs == 1, "synced again within the same optimizer step"
    gen.generate(model, tok, chats, generation.Sampling(seed=3, policy_step=1))
    assert gen.syncs == 2
    assert torch.allclose(dict(eng.loaded[-len(eng.loaded) // 2:])["model.layers.0.self_attn.q_proj.weight"],
                          _merged_q_proj(model).detach(), atol=1e-6)
