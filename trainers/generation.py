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
from contextlib import contextmanager
from dataclasses import dataclass

from trainers.common import ConfigError, option

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


@dataclass
class VllmFields:
    """The config fields of vLLM sampling, with TRL GRPOConfig's names (a Config mixin)."""

    use_vllm: bool = option(False, "sample with vLLM in the training process (TRL's colocate mode; needs CUDA + vllm)")
    vllm_mode: str = option("colocate", "TRL's vllm_mode; only colocate is implemented for stepfix")
    vllm_gpu_memory_utilization: float = option(0.3, "share of GPU memory vLLM may take (TRL's name)")
    vllm_max_model_length: int = option(0, "vLLM max_model_len (0 = the model's)")

    def check_vllm(self) -> None:
        check_available(self.use_vllm)
        if not 0 < self.vllm_gpu_memory_utilization <= 1:
            raise ConfigError(f"vllm_gpu_memory_utilization must be in (0, 1], got {self.vllm_gpu_memory_utilization}")

    def trl_vllm_kwargs(self) -> dict:
        """These fields as TRL GRPOConfig keyword arguments."""
        if not self.use_vllm:
            return {}
        return {"use_vllm": True, "vllm_mode": self.vllm_mode,
                "vllm_gpu_memory_utilization": self.vllm_gpu_memory_utilization,
                "vllm_max_model_length": self.vllm_max_model_length or None}


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

    def __init__(self, merge_lora: bool = False):
        self.merge_lora = merge_lora

    def generate(self, model, tok, chats: list[list[dict]], sp: Sampling) -> list[list[int]]:
        import torch

        if not chats:
            return []
        side = tok.padding_side
        tok.padding_side = "left"
        try:
            enc = tok(render(tok, chats), return_tensors="pt", padding=True, add_special_tokens=False)
        finally:
            tok.padding_side = side
        enc = enc.to(model.device)
        stops = stop_token_ids(tok, model)
        pad = tok.pad_token_id if tok.pad_token_id is not None else stops[0]
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
            if sp.synced_gpus:
                kw["synced_gpus"] = True
            with torch.no_grad(), seeded(sp.seed, model.device):
                out = model.generate(**enc, **kw)
        finally:
            if merged:
                model.unmerge_adapter()
            model.train(was)
        return [trim(row, stops, pad) or [stops[0]] for row in out[:, enc["input_ids"].shape[1]:].tolist()]


class VLLMGenerator:
    """vLLM in the training process (TRL's vllm_mode="colocate"); needs CUDA and vllm."""

    name = "vllm"

    def __init__(self, model_path: str, gpu_memory_utilization: float = 0.3, max_model_length: int | None = None,
                 seed: int = 0, dtype: str = "auto"):
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
        self._synced_version = None

    def sync_weights(self, model) -> None:
        """Load the policy's weights into vLLM with the LoRA merged: TRL 1.16's colocate sync
        (trl/generation/vllm_generation.py, VLLMGeneration._iter_named_params + sync_weights)."""
        peft = hasattr(model, "merge_adapter")
        if peft:
            model.merge_adapter()
        try:
            target = self.llm.llm_engine.model_executor.driver_worker.model_runner.model
            for name, p in model.named_parameters():
                if peft:
                    name = name.removeprefix("base_model.model.").replace(".base_layer", "")
                    if model.prefix in name or "original_module" in name:  # LoRA factors: merged already
                        continue
                    name = name.replace("modules_to_save.default.", "")
                target.load_weights([(name.replace("_checkpoint_wrapped_module.", ""), p.data)])
            self.llm.reset_prefix_cache()
        finally:
            if peft:
                model.unmerge_adapter()

    def generate(self, model, tok, chats: list[list[dict]], sp: Sampling) -> list[list[int]]:
        from vllm import SamplingParams

        version = sum(int(p._version) for p in model.parameters() if p.requires_grad)
        if version != self._synced_version:  # the optimizer changed the policy since the last sync
            self.sync_weights(model)
            self._synced_version = version
        stops = stop_token_ids(tok, model)
        params = SamplingParams(max_tokens=sp.max_new_tokens, temperature=sp.temperature if sp.do_sample else 0.0,
                                top_p=sp.top_p, stop_token_ids=stops)
        prompts = [{"prompt_token_ids": tok(t, add_special_tokens=False)["input_ids"]} for t in render(tok, chats)]
        outs = self.llm.generate(prompts, params, use_tqdm=False)
        return [trim(list(o.outputs[0].token_ids), stops, None) or [stops[0]] for o in outs]


def check_available(use_vllm: bool) -> None:
    """ConfigError when use_vllm is set and vllm cannot be imported (a clear error at config time)."""
    if use_vllm and importlib.util.find_spec("vllm") is None:
        raise ConfigError("use_vllm is set but vllm is not importable in this environment; install vllm on a "
                          "CUDA machine (pip install vllm) or set use_vllm: false to sample with HF generate")


def make(cfg, model_path: str | None = None):
    """The generator named by cfg: VLLMGenerator when cfg.use_vllm, else HFGenerator."""
    if getattr(cfg, "use_vllm", False):
        if getattr(cfg, "vllm_mode", "colocate") != "colocate":
            raise ConfigError(f"vllm_mode {cfg.vllm_mode!r}: only colocate is implemented for stepfix")
        return VLLMGenerator(model_path or cfg.model, cfg.vllm_gpu_memory_utilization,
                             cfg.vllm_max_model_length or None, seed=cfg.seed,
                             dtype="bfloat16" if str(cfg.bf16).lower() != "false" else "float32")
    return HFGenerator(merge_lora=getattr(cfg, "merge_lora_for_generation", False))
