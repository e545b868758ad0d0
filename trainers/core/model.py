"""The model a trainer trains: names resolved to folders, tokenizer, base model, LoRA (fresh or
`init_adapter`) or full fine-tuning, the frozen reference, device and dtype, and the keyword arguments
shared by TrainingArguments and TRL's configs. torch, transformers and peft are imported inside the
functions (importing a trainer stays light for `--help`)."""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from r3bench.core import models
from trainers import distributed
from trainers.errors import ConfigError


def model_path(name: str) -> str:
    """A model name as a local directory (r3bench's short names resolved; folders and hub ids unchanged)."""
    return models.local_path(name)


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def cpu_bf16_native() -> bool:
    """Whether this CPU multiplies bf16 matrices in hardware (AMX-BF16 tiles): there a bf16 matmul of a 135M
    model's shapes runs ~6x faster than fp32 (benchmarks/results/gen_speed). R3BENCH_CPU_BF16=0 or 1 overrides
    the detection (tests pin it so that their numbers do not depend on the machine)."""
    forced = os.environ.get("R3BENCH_CPU_BF16", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    import torch

    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(probe and probe())


def use_bf16(cfg) -> bool:
    """Whether the run trains in bf16: `bf16: true`, or `auto` on CUDA with bf16 support or on a CPU that
    multiplies bf16 in hardware (cpu_bf16_native). On CUDA the weights are bf16 (bf16_weights); on a CPU,
    mixed precision: fp32 weights, the forward and backward under bf16 autocast (accelerate's)."""
    import torch

    v = str(cfg.bf16).lower()
    if v == "auto":
        if torch.cuda.is_available():
            return torch.cuda.is_bf16_supported()
        return cpu_bf16_native()
    return v == "true"


def bf16_weights(cfg) -> bool:
    """Whether the model's weights are loaded in bf16: bf16 training on CUDA. On a CPU bf16 is autocast over
    fp32 weights (the optimizer's and the frozen reference's precision unchanged)."""
    return use_bf16(cfg) and cuda_available()


def training_placement(cfg) -> tuple[str, str]:
    """(device, torch dtype name of the weights) the policy trains on in this process: cuda:LOCAL_RANK in
    bf16 when `bf16` says so, else the CPU in float32 (bf16 there is autocast over fp32 weights)."""
    import torch

    dtype = "bfloat16" if bf16_weights(cfg) else "float32"
    if torch.cuda.is_available():
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}", dtype
    return "cpu", dtype


def load_tokenizer(path: str, padding_side: str = "right"):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = padding_side
    if not getattr(tok, "chat_template", None):
        raise ConfigError(f"tokenizer of {path} has no chat template; r3bench trains chat models")
    return tok


def load_base(path: str, cfg=None):
    import torch
    from transformers import AutoModelForCausalLM

    dtype = torch.bfloat16 if (cfg is not None and bf16_weights(cfg)) else torch.float32
    return AutoModelForCausalLM.from_pretrained(path, dtype=dtype)


def lora_config(cfg):
    from peft import LoraConfig

    targets = cfg.lora_targets if cfg.lora_targets == "all-linear" else [t.strip() for t in cfg.lora_targets.split(",")]
    return LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha, lora_dropout=cfg.lora_dropout,
                      target_modules=targets, task_type="CAUSAL_LM", bias="none")


def policy_model(cfg, path: str):
    """The trainable policy: base + `init_adapter` (trainable) or + a fresh LoRA."""
    from peft import PeftModel, get_peft_model
    from transformers import set_seed

    set_seed(cfg.seed)  # the fresh LoRA's initialisation is part of the run: same seed, same weights
    if not cfg.lora:
        return full_model(cfg, path)
    base = load_base(path, cfg)
    if cfg.init_adapter:
        if not (Path(cfg.init_adapter) / "adapter_config.json").is_file():
            raise ConfigError(f"init_adapter {cfg.init_adapter!r} has no adapter_config.json")
        return PeftModel.from_pretrained(base, cfg.init_adapter, is_trainable=True)
    return get_peft_model(base, lora_config(cfg))


def frozen_reference(cfg, path: str):
    """pi_ref: the base with `init_adapter` merged in (frozen), or None when there is no init adapter
    (then the reference is the policy with its adapter disabled)."""
    if not cfg.lora:  # full fine-tuning: no adapter to disable, so the start point is loaded again, frozen
        ref = load_base(start_path(cfg, path), cfg)
    elif not cfg.init_adapter:
        return None
    else:
        from peft import PeftModel

        ref = PeftModel.from_pretrained(load_base(path, cfg), cfg.init_adapter).merge_and_unload()
    ref.eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref


def start_path(cfg, path: str) -> str:
    """The folder of the model a full fine-tuning run starts from: the base, or with `init_adapter` the
    base with that adapter merged, saved once (under a file lock, by whichever process comes first) to
    OUTPUT_DIR/init_merged. A folder, not an in-memory merge: TRL's GRPO and DPO trainers load their
    own reference model from the policy's config name, which must then name the SFT model, not the base."""
    if not cfg.init_adapter:
        return path
    out = Path(cfg.output_dir) / "init_merged"
    with distributed.file_lock(Path(cfg.output_dir) / ".init_merged.lock"):
        if not (out / "config.json").is_file():
            from peft import PeftModel

            merged = PeftModel.from_pretrained(load_base(path, cfg), cfg.init_adapter).merge_and_unload()
            merged.save_pretrained(str(out))
            load_tokenizer(path).save_pretrained(str(out))
    return str(out)


def full_model(cfg, path: str):
    """The policy of full fine-tuning (`lora: false`): every weight trainable, from start_path."""
    model = load_base(start_path(cfg, path), cfg)
    for p in model.parameters():
        p.requires_grad_(True)
    return model


def report_to(cfg) -> list[str]:
    v = str(cfg.report_to).strip().lower()
    if v == "auto":
        try:
            import tensorboard  # noqa: F401

            return ["tensorboard"]
        except ImportError:
            return []
    if v in ("none", ""):
        return []
    return [s.strip() for s in v.split(",")]


def warmup_steps(cfg) -> int:
    """The warm-up the run gets: cfg.warmup_steps, or none when the run is not longer than its warm-up.

    HF's linear warm-up gives step k the rate lr * k / warmup_steps, starting at 0: with max_steps 2 and
    warmup_steps 5 every step ran at 0 or a fifth of the rate (a short check run learnt nothing). Such a
    run gets no warm-up, and a warning says so."""
    w = int(cfg.warmup_steps or 0)
    if w > 0 and 0 < cfg.max_steps <= w:
        warnings.warn(f"warmup_steps {w} >= max_steps {cfg.max_steps}: this run gets no warm-up (a warm-up "
                      "as long as the run keeps the learning rate near 0 throughout)", RuntimeWarning)
        return 0
    return w


def training_args_kwargs(cfg) -> dict:
    """Keyword arguments shared by TrainingArguments and TRL's configs."""
    return dict(
        output_dir=cfg.output_dir, seed=cfg.seed, max_steps=cfg.max_steps, learning_rate=cfg.learning_rate,
        per_device_train_batch_size=cfg.batch_size, gradient_accumulation_steps=cfg.grad_accum,
        warmup_steps=warmup_steps(cfg), lr_scheduler_type=cfg.lr_scheduler, weight_decay=cfg.weight_decay,
        max_grad_norm=cfg.max_grad_norm, save_strategy="steps", save_steps=cfg.save_steps,
        save_total_limit=cfg.save_total_limit, logging_steps=cfg.logging_steps, logging_first_step=True,
        report_to=report_to(cfg), bf16=use_bf16(cfg), dataloader_num_workers=cfg.dataloader_num_workers,
        # transformers 5's names (gradient_checkpointing* are deprecated aliases that warn)
        disable_tqdm=False, use_cpu=not cuda_available(), activation_checkpointing=cfg.gradient_checkpointing,
        activation_checkpointing_kwargs={"use_reentrant": False} if cfg.gradient_checkpointing else None,
        # DDP broadcasts buffers at every forward by default, which makes the NUMBER of forwards a
        # collective that every rank must match; the only buffers here are constant (rotary tables)
        ddp_broadcast_buffers=False,
    )
