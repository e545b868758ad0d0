"""Sampling completions for the RL trainers (stepfix) and the study: one small interface, two backends.

    gen = generation.make(cfg)                      # cfg has use_vllm, vllm_gpu_memory_utilization, ...
    ids = gen.generate(model, tok, chats, Sampling(max_new_tokens=300, temperature=0.7))

`generate` takes chats (lists of {"role", "content"}), renders them with the tokenizer's chat template
(generation prompt added) and returns, per chat, the completion's token ids, cut after the first
end-of-turn id (kept) and without padding.

* HFGenerator (default): `model.generate` on a left-padded batch with the KV cache on (use_cache=True
  also when the trainer enabled gradient checkpointing, which turns the model's cache default off),
  stopping at every end-of-turn id of `stop_token_ids`: the tokenizer's eos, the ids in the model's
  generation_config.eos_token_id, and the chat template's turn terminator (<|im_end|>, <|eot_id|>,
  <end_of_turn>, <|end|>) - a tokenizer whose eos is <|endoftext|> would otherwise run every ChatML
  turn to max_new_tokens. With `merge_lora` a peft model's LoRA is merged into fp32 weights for the
  call and unmerged afterwards (off by default: on the shared 2-core CPU it measured 7 tok/s merged
  vs 10 unmerged at batch 8, one noisy sample each).
* VLLMGenerator (`use_vllm: true`, a CUDA machine with vllm installed): TRL's "colocate" mode - a
  vllm.LLM in the training process, sharing the GPU (`vllm_gpu_memory_utilization`), whose weights are
  replaced by the policy's (LoRA merged, TRL's `_move_model_to_vllm`) whenever the policy changed
  since the last call. Config names follow TRL's GRPOConfig (use_vllm, vllm_mode,
  vllm_gpu_memory_utilization, vllm_max_model_length). When use_vllm is set and vllm cannot be
  imported, `check_available` raises ConfigError at config time, before any model loads.
"""
from __future__ import annotations

import importlib.util
import os
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass

from trainers.errors import ConfigError, option

END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<end_of_turn>", "<|end|>", "<|endoftext|>")


@dataclass(frozen=True)
class Sampling:
    max_new_tokens: int = 512
    temperature: float = 1.0
    top_p: float = 1.0
    do_sample: bool = True
    # the call's own seed (trainers.distributed.generation_seed: per rank, step and call); None = the
    # global random state as it is
    seed: int | None = None
    # FSDP / ZeRO-3 without gathered weights: every rank runs generate's loop until all are done
    synced_gpus: bool = False
    # the optimizer steps the policy has taken (the trainer's global_step): vLLM's weights are pushed
    # when it changed since the last push (TRL's trigger); None = policy_version's tensor counters
    policy_step: int | None = None
    # top-k sampling (None: the model's generation_config default; TRL's GRPO passes its own, 0 = off)
    top_k: int | None = None


@dataclass
class VllmFields:
    """The config fields of vLLM sampling, with TRL GRPOConfig's names (a Config mixin)."""

    use_vllm: bool = option(False, "sample with vLLM (needs CUDA + vllm): in the training process (vllm_mode colocate) "
                            "or from a `trl vllm-serve` server (vllm_mode server)")
    vllm_mode: str = option("colocate", "TRL's vllm_mode: colocate (an engine per rank, sharing its GPU) | server")
    vllm_server_base_url: str = option("http://127.0.0.1:8000", "vllm_mode server: the `trl vllm-serve` server's URL")
    vllm_server_timeout: float = option(240.0, "vllm_mode server: seconds to wait for the server at start")
    vllm_gpu_memory_utilization: float = option(0.3, "share of GPU memory vLLM may take (TRL's name)")
    vllm_max_model_length: int = option(0, "vLLM max_model_len (0 = the model's)")

    def check_vllm(self) -> None:
        check_available(self.use_vllm)
        if self.vllm_mode not in ("colocate", "server"):
            raise ConfigError(f"vllm_mode must be colocate or server, got {self.vllm_mode!r}")
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            raise ConfigError(f"vllm_gpu_memory_utilization must be in (0, 1], got {self.vllm_gpu_memory_utilization}")

    def trl_vllm_kwargs(self) -> dict:
        """These fields as TRL GRPOConfig keyword arguments."""
        if not self.use_vllm:
            return {}
        kw = {"use_vllm": True, "vllm_mode": self.vllm_mode,
              "vllm_gpu_memory_utilization": self.vllm_gpu_memory_utilization,
              "vllm_max_model_length": self.vllm_max_model_length or None}
        if self.vllm_mode == "server":
            kw.update(vllm_server_base_url=self.vllm_server_base_url, vllm_server_timeout=self.vllm_server_timeout)
        return kw


def stop_token_ids(tok, model=None) -> list[int]:
    """End-of-turn ids: tok.eos_token_id, generation_config.eos_token_id (int or list) of `model`, and
    the chat template's turn terminator when it is one token of the vocabulary."""
    ids = []

    def add(x):
        for i in (x if isinstance(x, (list, tuple)) else [x]):
            if isinstance(i, int) and i >= 0 and i not in ids:
                ids.append(i)

    add(tok.eos_token_id)
    gc = getattr(model, "generation_config", None) if model is not None else None
    if gc is not None:
        add(gc.eos_token_id)
    template = str(getattr(tok, "chat_template", "") or "")
    vocab = tok.get_vocab()
    for t in END_OF_TURN:
        if t in template and t in vocab:
            add(vocab[t])
    return ids


def trim(row: list[int], stops: list[int], pad_id: int | None) -> list[int]:
    """Cut a generated row after its first stop id (kept); without one, drop trailing padding."""
    for i, t in enumerate(row):
        if t in stops:
            return row[:i + 1]
    if pad_id is not None and pad_id not in stops:
        while row and row[-1] == pad_id:
            row = row[:-1]
    return row


def render(tok, chats: list[list[dict]]) -> list[str]:
    return [tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in chats]


@contextmanager
def seeded(seed: int | None, device=None):
    """The torch random state seeded with `seed` inside the block and restored after it (the training's
    own stream - dropout, data order - is not disturbed); nothing is done with seed None."""
    if seed is None:
        yield
        return
    import torch

    devices = [device] if device is not None and getattr(device, "type", "cpu") == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield


class HFGenerator:
    """Batched `model.generate` with the KV cache, stopping at the end-of-turn ids."""

    name = "hf"

    def __init__(self, merge_lora: bool = False, cache_implementation: str | None = None):
        self.merge_lora = merge_lora
        self.cache_implementation = cache_implementation  # transformers' generate option ("static"); None: dynamic

    def generate(self, model, tok, chats: list[list[dict]], sp: Sampling) -> list[list[int]]:
        if not chats:
            return []
        return self.generate_ids(model, tok, [tok(t, add_special_tokens=False)["input_ids"] for t in render(tok, chats)],
                                 sp)

    def generate_ids(self, model, tok, prompts: list[list[int]], sp: Sampling) -> list[list[int]]:
        """`generate` on prompts already tokenised (GRPO's path: TRL hands over token ids)."""
        import torch

        if not prompts:
            return []
        stops = stop_token_ids(tok, model)
        pad = tok.pad_token_id if tok.pad_token_id is not None else stops[0]
        width = max(len(p) for p in prompts)
        ids = torch.tensor([[pad] * (width - len(p)) + list(p) for p in prompts], device=model.device)
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts], device=model.device)
        was = model.training
        merged = self.merge_lora and hasattr(model, "merge_adapter") and next(model.parameters()).dtype.is_floating_point \
            and next(model.parameters()).dtype.itemsize >= 4  # merge + unmerge in bf16 would drift the base weights
        model.eval()
        try:
            if merged:
                model.merge_adapter()
            kw = dict(do_sample=sp.do_sample, max_new_tokens=sp.max_new_tokens, pad_token_id=pad,
                      eos_token_id=stops, use_cache=True)
            if sp.do_sample:
                kw.update(temperature=sp.temperature, top_p=sp.top_p)
                if sp.top_k is not None:
                    kw["top_k"] = sp.top_k
            if sp.synced_gpus:
                kw["synced_gpus"] = True
            if self.cache_implementation:
                kw["cache_implementation"] = self.cache_implementation
            with torch.no_grad(), seeded(sp.seed, model.device):
                out = model.generate(input_ids=ids, attention_mask=mask, **kw)
        finally:
            if merged:
                model.unmerge_adapter()
            model.train(was)
        return [trim(row, stops, pad) or [stops[0]] for row in out[:, width:].tolist()]


def _plain_name(model, name: str, peft: bool) -> str | None:
    """The name of a policy parameter in the plain transformers model (TRL 1.16's naming for vLLM,
    trl/generation/vllm_generation.py, VLLMGeneration._iter_named_params): peft's prefixes and `.base_layer`
    dropped, modules_to_save's copy under the module's own name, activation-checkpoint wrappers unnamed;
    None for what the plain model has no place for (the LoRA factors, modules_to_save's original)."""
    if peft:
        name = name.removeprefix("base_model.model.").replace(".base_layer", "")
        if model.prefix in name or "original_module" in name:
            return None
        name = name.replace("modules_to_save.default.", "")
    return name.replace("_checkpoint_wrapped_module.", "")


def merged_named_params(model):
    """(vLLM parameter name, tensor) of the policy with its LoRA merged (the caller merges and unmerges),
    named by _plain_name: the LoRA factors themselves left out (merged already)."""
    peft = hasattr(model, "merge_adapter")
    for name, p in model.named_parameters():
        plain = _plain_name(model, name, peft)
        if plain is not None:
            yield plain, p.data


def merged_weights(model):
    """(name, tensor) of the policy as a plain transformers model with its LoRA merged, computed without
    changing the policy: W + the active adapters' delta (peft's get_delta_weight) for each LoRA layer; the
    names as merged_named_params gives them. Call under torch.no_grad()."""
    peft = hasattr(model, "merge_adapter")
    deltas = {}
    if peft:
        from peft.tuners.lora import LoraLayer

        for mname, m in model.named_modules():
            if isinstance(m, LoraLayer) and not m.merged and not m.disable_adapters:
                for a in m.active_adapters:
                    if a in m.lora_A:
                        key = f"{mname}.base_layer.weight"
                        deltas[key] = deltas.get(key, 0) + m.get_delta_weight(a)
    for name, p in model.named_parameters():
        plain = _plain_name(model, name, peft)
        if plain is not None:
            yield plain, (p.data + deltas[name] if name in deltas else p.data)


def policy_version(model) -> int:
    """A number that changes whenever an in-place update bumps a trainable parameter's version counter:
    the weight-sync trigger when the caller gives no optimizer step (Sampling.policy_step). Not enough
    alone: torch's fused AdamW (HF's default optimizer, adamw_torch_fused) updates the weights without
    bumping the counters, so a trainer passes its global_step."""
    return sum(int(p._version) for p in model.parameters() if p.requires_grad)


class _VLLMBase(ABC):
    """Weight sync and sampling shared by the colocate and server modes: `generate` first pushes the
    policy's weights (LoRA merged) when an optimizer step changed them since the last push, then samples
    with the call's seed (Sampling.seed: per rank, step and call)."""

    def __init__(self):
        self._synced_version = None
        self.syncs = 0  # weight pushes so far (tests, logs)

    @abstractmethod
    def _push(self, named) -> None:
        """A mode's way of loading (name, tensor) pairs into its engine (colocate: the LLM's model;
        server: VLLMClient's update calls)."""

    def sync_weights(self, model) -> None:
        peft = hasattr(model, "merge_adapter")
        if peft:
            model.merge_adapter()
        try:
            self._push(merged_named_params(model))
        finally:
            if peft:
                model.unmerge_adapter()
        self.syncs += 1

    def maybe_sync(self, model, step: int | None = None) -> None:
        """Push the weights when the policy changed since the last push: when the optimizer step `step`
        changed (the trainer's global_step, as TRL's `_last_loaded_step`), or without one, when
        policy_version changed."""
        version = ("step", step) if step is not None else policy_version(model)
        if version != self._synced_version:  # the optimizer changed the policy since the last sync
            self.sync_weights(model)
            self._synced_version = version

    def prompts(self, tok, chats) -> list[list[int]]:
        return [tok(t, add_special_tokens=False)["input_ids"] for t in render(tok, chats)]


class VLLMGenerator(_VLLMBase):
    """vLLM in the training process (TRL's vllm_mode="colocate"); needs CUDA and vllm. Every rank holds
    its own engine (TRL's external launcher) and samples its own prompts with its own seed.

    `llm`: an engine made elsewhere (tests pass a double of vllm.LLM's interface)."""

    name = "vllm"

    def __init__(self, model_path: str, gpu_memory_utilization: float = 0.3, max_model_length: int | None = None,
                 seed: int = 0, dtype: str = "auto", llm=None):
        super().__init__()
        if llm is not None:
            self.llm = llm
            return
        check_available(True)
        import os

        from trl.trainer.utils import ensure_master_addr_port
        from vllm import LLM

        # vLLM's external launcher (the model in this process, so its weights can be replaced) reads
        # the torch.distributed variables: set for one process, as TRL does for each of its ranks
        os.environ.setdefault("RANK", os.environ.get("RANK", "0"))
        os.environ.setdefault("LOCAL_RANK", "0")
        os.environ.setdefault("WORLD_SIZE", "1")
        ensure_master_addr_port()

        # TRL 1.16's colocate settings (trl/generation/vllm_generation.py): one process, no extra launcher
        self.llm = LLM(model=model_path, gpu_memory_utilization=gpu_memory_utilization, max_model_len=max_model_length,
                       seed=seed, dtype=dtype, enable_prefix_caching=True, max_num_batched_tokens=4096,
                       distributed_executor_backend="external_launcher")

    def _push(self, named) -> None:
        """Load the merged weights into the engine (TRL 1.16's colocate sync), then drop its prefix cache."""
        target = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
        for name, t in named:
            target.load_weights([(name, t)])
        self.llm.reset_prefix_cache()

    def generate(self, model, tok, chats: list[list[dict]], sp: Sampling) -> list[list[int]]:
        from vllm import SamplingParams

        if not chats:
            return []
        self.maybe_sync(model, sp.policy_step)
        stops = stop_token_ids(tok, model)
        kw = dict(max_tokens=sp.max_new_tokens, temperature=sp.temperature if sp.do_sample else 0.0,
                  top_p=sp.top_p, stop_token_ids=stops)
        # a seed per request (the call's seed + its index): with one seed for all, identical prompts (stepfix's
        # k `revisions` of a y1) got identical noise and identical samples (RLOO advantages all 0)
        params = (SamplingParams(**kw) if sp.seed is None else
                  [SamplingParams(**kw, seed=sp.seed + i) for i in range(len(chats))])
        outs = self.llm.generate([{"prompt_token_ids": ids} for ids in self.prompts(tok, chats)], params,
                                 use_tqdm=False)
        return [trim(list(o.outputs[0].token_ids), stops, None) or [stops[0]] for o in outs]


class VLLMServerGenerator(_VLLMBase):
    """A vLLM server (TRL's vllm_mode="server": `trl vllm-serve --model M` on GPUs of its own) through
    TRL's VLLMClient. Rank 0 pushes the weights after each optimizer step (one weight-update group; the
    server's NCCL communicator) and every rank waits for it before sampling (a barrier), then every
    rank sends its own prompts with its own seed.

    `client`: a client made elsewhere (tests pass a double of trl's VLLMClient interface)."""

    name = "vllm-server"

    def __init__(self, base_url: str, client=None, device=0, timeout: float = 240.0):
        super().__init__()
        from trainers import distributed

        self._main = distributed.is_main_process()
        if client is not None:
            self.client = client
            return
        check_available(True)
        from trl.generation.vllm_client import VLLMClient

        self.client = VLLMClient(base_url=base_url, connection_timeout=timeout)
        if self._main:
            self.client.init_communicator(device=device)

    def sync_weights(self, model) -> None:
        from trainers import distributed

        if self._main:
            super().sync_weights(model)
        distributed.barrier()  # no rank samples from the server before rank 0's push is complete

    def _push(self, named) -> None:
        with self.client.weight_update():
            for name, t in named:
                self.client.update_named_param(name, t)
        self.client.reset_prefix_cache()

    def generate(self, model, tok, chats: list[list[dict]], sp: Sampling) -> list[list[int]]:
        self.maybe_sync(model, sp.policy_step)  # every rank: the barrier inside must be reached by all
        if not chats:
            return []
        stops = stop_token_ids(tok, model)
        prompts = self.prompts(tok, chats)
        # the server takes one seed per request: identical prompts (stepfix's k `revisions` of a y1) in one
        # request got identical samples. The j-th copy of each prompt goes in request j with seed + j
        # (one request when every prompt is distinct, as before)
        copy, seen = [], {}
        for ids in prompts:
            key = tuple(ids)
            copy.append(seen.get(key, 0))
            seen[key] = copy[-1] + 1
        result = [None] * len(prompts)
        for j in range(max(copy) + 1):
            idx = [i for i, c in enumerate(copy) if c == j]
            seed = None if sp.seed is None else sp.seed + j
            out = self.client.generate([prompts[i] for i in idx], n=1,
                                       temperature=sp.temperature if sp.do_sample else 0.0, top_p=sp.top_p,
                                       max_tokens=sp.max_new_tokens,
                                       generation_kwargs={"seed": seed, "stop_token_ids": stops})
            for i, ids in zip(idx, out["completion_ids"]):
                result[i] = trim(list(ids), stops, None) or [stops[0]]
        return result


class RolloutCopy(_VLLMBase):
    """Sampling from a copy of the policy with its LoRA merged, in `dtype` (bfloat16), refreshed whenever an
    optimizer step changed the policy: the CPU counterpart of TRL's vLLM colocate mode (`rollout_dtype`).
    On a CPU with AMX-BF16 a bf16 matmul of the 135M model's shapes runs ~6x faster than fp32 and reads half
    the bytes; generation, bound by reading the weights once per token, gains the most. As with vLLM, the
    samples come from a lower-precision copy of the policy while the loss's log-probabilities are the fp32
    policy's (benchmarks/results/step_ab has the measured difference)."""

    name = "rollout-copy"

    def __init__(self, dtype: str = "bfloat16", cache_implementation: str | None = None):
        super().__init__()
        self.dtype = dtype
        self.copy = None
        self.hf = HFGenerator(cache_implementation=cache_implementation)

    def _make(self, model):
        import torch
        from transformers import AutoModelForCausalLM

        inner = model.get_base_model() if hasattr(model, "get_base_model") else model
        copy = AutoModelForCausalLM.from_config(inner.config, dtype=getattr(torch, self.dtype))
        copy.generation_config = inner.generation_config
        return copy.to(next(model.parameters()).device).eval().requires_grad_(False)

    def _push(self, named) -> None:
        """Copy (name, tensor) pairs into the copy's parameters (under sync_weights' torch.no_grad)."""
        for name, t in named:
            self.copy.get_parameter(name).copy_(t)

    def sync_weights(self, model) -> None:
        """Load the policy's weights, LoRA merged, into the copy; the policy itself is not touched (no
        merge and unmerge, whose rounding would drift the frozen base weights a little every step)."""
        import torch

        if self.copy is None:
            self.copy = self._make(model)
        with torch.no_grad():
            self._push(merged_weights(model))
        self.syncs += 1

    def generate(self, model, tok, chats: list[list[dict]], sp: Sampling) -> list[list[int]]:
        if not chats:
            return []
        self.maybe_sync(model, sp.policy_step)
        return self.hf.generate(self.copy, tok, chats, sp)

    def generate_ids(self, model, tok, prompts: list[list[int]], sp: Sampling) -> list[list[int]]:
        if not prompts:
            return []
        self.maybe_sync(model, sp.policy_step)
        return self.hf.generate_ids(self.copy, tok, prompts, sp)


def check_available(use_vllm: bool) -> None:
    """ConfigError when use_vllm is set and vllm cannot be imported (a clear error at config time)."""
    if use_vllm and importlib.util.find_spec("vllm") is None:
        raise ConfigError("use_vllm is set but vllm is not importable in this environment; install vllm on a "
                          "CUDA machine (pip install vllm) or set use_vllm: false to sample with HF generate")


def cache_implementation(cfg) -> str | None:
    """transformers' generate `cache_implementation` of cfg.rollout_cache: "static", or None (dynamic)."""
    return "static" if getattr(cfg, "rollout_cache", "dynamic") == "static" else None


def rollout_dtype(cfg) -> str:
    """cfg.rollout_dtype with auto resolved: bfloat16 when the run trains in bf16 over fp32 weights (a CPU with
    AMX-BF16, trainers.core.model.use_bf16 / bf16_weights) and samples with HF, else policy."""
    dtype = getattr(cfg, "rollout_dtype", "policy")
    if dtype != "auto":
        return dtype
    from trainers.core.model import bf16_weights, use_bf16

    return "bfloat16" if (not getattr(cfg, "use_vllm", False) and use_bf16(cfg) and not bf16_weights(cfg)) \
        else "policy"


def make(cfg, model_path: str | None = None):
    """The generator named by cfg: VLLMGenerator (or the server's) when cfg.use_vllm, RolloutCopy when
    cfg.rollout_dtype names a dtype, else HFGenerator on the policy itself."""
    if getattr(cfg, "use_vllm", False):
        mode = getattr(cfg, "vllm_mode", "colocate")
        if mode == "server":
            import torch

            device = int(os.environ.get("LOCAL_RANK", "0")) if torch.cuda.is_available() else "cpu"
            return VLLMServerGenerator(cfg.vllm_server_base_url, device=device, timeout=cfg.vllm_server_timeout)
        if mode != "colocate":
            raise ConfigError(f"vllm_mode {mode!r}: colocate or server")
        return VLLMGenerator(model_path or cfg.model, cfg.vllm_gpu_memory_utilization,
                             cfg.vllm_max_model_length or None, seed=cfg.seed,
                             dtype="bfloat16" if str(cfg.bf16).lower() != "false" else "float32")
    cache = cache_implementation(cfg)
    dtype = rollout_dtype(cfg)
    if dtype != "policy":
        return RolloutCopy(dtype, cache_implementation=cache)
    return HFGenerator(merge_lora=getattr(cfg, "merge_lora_for_generation", False), cache_implementation=cache)
