"""What every r3bench trainer shares: config, data, model + LoRA, logging, guards, evaluation, run record.

A trainer is a config/trainer pair: a Config dataclass (a subclass of BaseConfig) and a `build(cfg)`
that makes the HF/TRL Trainer (its class guarded: `guarded(SFTTrainer)`, or a module-level class
such as stepfix_trainer.StepFixTrainer); `train, main = entry(Config, build)` gives the module its
`train(cfg)` and its CLI:

    python -m trainers.sft --config trainers/configs/sft.yaml --max_steps 20 --output_dir runs/sft

* Config: YAML file (`--config`) then CLI flags (one per field, `--help` lists them all with their
  help text); an unknown YAML key or a bad value is a clear error before anything loads.
* Data: `data` is a procedural-bank export folder (`r3bench procgen --out DIR`) or one JSONL file;
  empty means "export the bank (procgen_n, procgen_seed) into OUTPUT_DIR/data". Corrupt lines stop
  the run with file and line number.
* Model: `model` is a short name of r3bench.core.models (default SmolLM2-135M-Instruct), a local HF
  folder, or a hub id (users with a hub). LoRA (peft) on all linear layers by default;
  `init_adapter` continues training an existing adapter (the SFT one for DPO/stepfix/GRPO).
* Logs: OUTPUT_DIR/metrics.jsonl (every logged dict, appended across resumes: steps run after the
  last checkpoint of a crashed run appear again after the resume, and the later record is the one
  that counts; the same holds for stepfix_samples.jsonl), TensorBoard when installed, tqdm
  progress bars (HF Trainer's).
* Checkpoints every `save_steps`; `--resume` continues from the newest *intact* one with optimizer,
  scheduler, RNG and data position (HF Trainer's resume_from_checkpoint), so a resumed run equals an
  uninterrupted one. A newer checkpoint half-written by a killed run is moved aside to
  broken-checkpoint-N and named in a warning and in run.json (`checkpoint_problems`). The run's
  `train_loss` covers every step, also after a resume (the loss sum travels in r3bench_state.json).
* Guards: a non-finite loss raises NonFiniteLoss before the optimizer step; `main` records it in
  run.json and exits 2, leaving the last checkpoint as it was.
* Evaluation: lm-eval's simple_evaluate of the current adapter on `eval_tasks` every `eval_steps`
  and at the end (main process only), results in OUTPUT_DIR/eval/step-N.json and metrics.jsonl.
  Off by default (`eval_tasks` empty): with SmolLM2-135M on a 2-core CPU, r3_procgen's 20 problems
  x 512 tokens were estimated at 1 h 33 min. A run without it says so at the end and prints the
  lm_eval command that scores its adapter; a run with it prints the rough CPU cost first.
* Renamed fields: a Config's `renamed` maps old field names to new ones (the KL coefficient is
  `beta` in every trainer, as in TRL; grpo's `kl_coef` and dpo's `tau` are the old names). An old
  name in a YAML file, a CLI flag or `make` still works, with a FutureWarning naming the new one.
* Costs: each Config's `costs` says what its long steps cost on a CPU; `--help` prints it.
* Timing: TimingMixin keeps seconds per phase of the training steps (stepfix, GRPO) and logs them
  as time_<phase>_s and share_<phase>.
* Run record: OUTPUT_DIR/run.json (config, status, git commit, package versions, data sha256,
  the final adapter and the lm_eval --model_args that score it). Status, written in a finally:
  running, finished, error (config/data), non_finite_loss, judge_budget_spent (the LLM judge's
  budget ran out: exit 3, its stats and the checkpoint to resume from beside it; trainers.judging),
  or interrupted (any exception or KeyboardInterrupt, with the error). With `verifier: judge` the
  judge's stats (requests, dropped by cause, tokens, cost) are run.json's `judge`.
* `python -m trainers.X --help` lists every field once with its default; flags are exact
  (no abbreviations). `init_adapter` naming no adapter fails before any load, with the command
  that makes the SFT adapter.

Under `accelerate launch` the HF Trainer handles devices and processes; bf16 is used when CUDA with
bf16 support is present (`bf16: auto`).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import math
import os
import platform
import subprocess
import sys
import textwrap
import time
import traceback
import warnings
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any, Callable, ClassVar

import yaml

from r3bench.core import models
from r3bench.eval.hook import tasks_dir
from r3bench.procgen.export import export
from trainers import distributed
from verifiers import psv
from verifiers.judge import JudgeBudgetExceeded
from verifiers.sandbox import isolation_level


from trainers.errors import (EXIT_JUDGE_BUDGET, ConfigError, NonFiniteLoss, TrainDataError,  # noqa: F401 - re-exported
                             option)


@dataclass
class BaseConfig:
    model: str = option("r3bench/smollm2-135m-instruct", "base model: r3bench short name, local HF folder or hub id")
    data: str = option("", "procgen export folder or JSONL file; empty = export the procedural bank into OUTPUT_DIR/data")
    procgen_n: int = option(2494, "problems in the procedural bank when exporting it (its train split is used)")
    procgen_seed: int = option(0, "seed of the procedural bank export (the r3_procgen task uses n=2494, seed=0)")
    max_train_samples: int = option(0, "use at most this many training rows (0 = all)")
    output_dir: str = option("runs/run", "where checkpoints, logs, the final adapter and run.json go")
    seed: int = option(0, "seed for model init, data order and sampling")
    max_steps: int = option(100, "optimizer steps (> 0); the data is cycled as needed")
    learning_rate: float = option(2e-4, "peak learning rate")
    batch_size: int = option(4, "per-device batch size (problems, pairs or sequences per micro-batch)")
    grad_accum: int = option(1, "gradient accumulation steps")
    warmup_steps: int = option(0, "linear warm-up steps")
    lr_scheduler: str = option("linear", "HF scheduler name: linear, cosine, constant, constant_with_warmup, ...")
    weight_decay: float = option(0.0, "AdamW weight decay")
    max_grad_norm: float = option(1.0, "gradient clipping norm")
    lora_r: int = option(8, "LoRA rank")
    lora_alpha: int = option(16, "LoRA alpha")
    lora_dropout: float = option(0.05, "LoRA dropout")
    lora_targets: str = option("all-linear", "LoRA target modules: all-linear or comma-separated module names")
    lora: bool = option(True, "train a LoRA adapter (true) or every weight of the model (false: full fine-tuning; "
                        "`init_adapter` is then merged into the weights first, and the reference model is a frozen "
                        "copy of that start point)")
    init_adapter: str = option("", "start from this LoRA adapter folder (trainable) instead of a fresh LoRA")
    save_steps: int = option(50, "checkpoint every N optimizer steps")
    save_total_limit: int = option(2, "keep at most this many checkpoints")
    logging_steps: int = option(1, "log metrics every N optimizer steps")
    eval_steps: int = option(0, "run lm-eval on the current adapter every N steps (0 = only at the end)")
    eval_tasks: str = option("", "comma-separated lm-eval tasks for evaluation, e.g. r3_procgen; empty (the default) = no "
                             "evaluation: on a 2-core CPU r3_procgen's 20 problems x 512 tokens take ~1.5 h")
    eval_limit: int = option(20, "lm-eval --limit per task (0 = all documents)")
    eval_max_gen_toks: int = option(512, "max_gen_toks for evaluation generations")
    eval_batch_size: int = option(8, "lm-eval batch size")
    max_length: int = option(1024, "maximum tokens of a training sequence (prompt + completion)")
    gradient_checkpointing: bool = option(True, "recompute activations in the backward pass: ~30% more compute, far less "
                                      "memory (without it SmolLM2 SFT at batch 4 x ~700 tokens held 10.6 GB resident)")
    resume: bool = option(False, "continue from the last checkpoint in OUTPUT_DIR (error if there is none)")
    bf16: str = option("auto", "auto (bf16 when CUDA supports it), true or false")
    report_to: str = option("auto", "auto (tensorboard when installed), none, or HF report_to names")
    dataloader_num_workers: int = option(0, "data loader workers")
    malloc_mmap_threshold: int = option(
        1 << 20, "glibc only: memory blocks of at least this many bytes are mmap'd and handed back to the OS "
        "when freed (mallopt M_MMAP_THRESHOLD; 0 = glibc's dynamic default, which grows the threshold to 32 MiB "
        "and keeps freed activation buffers resident: a SmolLM2 LoRA forward+backward at 4 x 1300 tokens peaked at "
        "9.39 GB with the default and 5.48 GB with 1 MiB, 17% slower, benchmarks/results/memory)")

    # old field name -> new one: still accepted (YAML, CLI, make) with a FutureWarning
    renamed: ClassVar[dict[str, str]] = {}
    # what the long steps cost on a CPU (shown by --help)
    costs: ClassVar[str] = ""
    # whether the trained adapter is a solver lm-eval can score (a PSV is a verifier)
    scored_by_lm_eval: ClassVar[bool] = True


# ----------------------------------------------------------------------------------------- config

def _coerce(f, value):
    typ = f.type if not isinstance(f.type, str) else {"int": int, "float": float, "str": str, "bool": bool}.get(
        f.type.split("|")[0].strip(), str)
    if typ is bool:
        if isinstance(value, bool):
            return value
        s = str(value).strip().lower()
        if s in ("1", "true", "yes", "on"):
            return True
        if s in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{f.name}: expected true/false, got {value!r}")
    try:
        if typ is int and isinstance(value, float) and not value.is_integer():
            raise ValueError
        return typ(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{f.name}: expected {typ.__name__}, got {value!r}") from None


def field_names(cls) -> set[str]:
    """Every name a config of `cls` accepts: its fields and the old names of renamed ones."""
    return {f.name for f in fields(cls)} | set(cls.renamed)


def _rename(cls, values: dict, where: str) -> dict:
    """`values` with old field names (cls.renamed) replaced by the new ones, each with a FutureWarning."""
    out = dict(values)
    for old, new in cls.renamed.items():
        if old not in out:
            continue
        if new in out:
            raise ConfigError(f"{where}: both {old!r} (the old name) and {new!r} are given; keep {new!r}")
        warnings.warn(f"{where}: {old!r} is the old name of {new!r}; write {new}: {out[old]!r} "
                      f"(the old name will stop working)", FutureWarning, stacklevel=3)
        out[new] = out.pop(old)
    return out


def build_parser(cls, prog: str | None = None) -> argparse.ArgumentParser:
    """One flag per field; the help shows each default once and ends with the config's `costs`. Exact
    flag names only (allow_abbrev=False: `--max_step` is an error, not `--max_steps`); `%` in help
    texts is escaped for argparse. Old names of renamed fields are accepted and not listed."""
    epilog = cls.costs
    if cls.scored_by_lm_eval:
        epilog += ("\n\n" if epilog else "") + ("End-of-run evaluation: off by default (eval_tasks empty); with "
                                               f"--eval_tasks r3_procgen and the other defaults, {eval_cost_note(cls())}.")
    epilog = "\n\n".join(textwrap.fill(par, 100) for par in epilog.split("\n\n") if par)
    ap = argparse.ArgumentParser(prog=prog, description=(sys.modules[cls.__module__].__doc__ or "").split("\n")[0],
                                 epilog=epilog or None, allow_abbrev=False,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", help="YAML file of field values (CLI flags override it)")
    for f in fields(cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        text = f"{f.metadata.get('help', '')} (default: {default!r})".replace("%", "%%")
        ap.add_argument(f"--{f.name}", default=None, metavar=type(default).__name__.upper(), help=text)
    for old in cls.renamed:
        ap.add_argument(f"--{old}", default=None, help=argparse.SUPPRESS)
    return ap


def parse(cls, argv=None, prog: str | None = None):
    """Config from `--config YAML` and CLI overrides; raises ConfigError with the reason."""
    args = build_parser(cls, prog).parse_args(argv)
    values: dict[str, Any] = {}
    names = field_names(cls)
    if args.config:
        try:
            loaded = yaml.safe_load(Path(args.config).read_text()) or {}
        except (OSError, yaml.YAMLError) as e:
            raise ConfigError(f"cannot read config {args.config}: {e}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{args.config}: expected a mapping of field: value, got {type(loaded).__name__}")
        unknown = sorted(set(loaded) - names)
        if unknown:
            raise ConfigError(f"{args.config}: unknown field(s) {unknown}; known: {sorted(f.name for f in fields(cls))}")
        values.update(_rename(cls, loaded, args.config))
    cli = {name: getattr(args, name) for name in sorted(names) if getattr(args, name) is not None}
    values.update(_rename(cls, cli, "command line"))
    return make(cls, **values)


def make(cls, **values):
    values = _rename(cls, values, cls.__name__)
    names = {f.name: f for f in fields(cls)}
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ConfigError(f"unknown field(s) {unknown} for {cls.__name__}")
    cfg = cls(**{k: _coerce(names[k], v) for k, v in values.items()})
    cfg.validate() if hasattr(cfg, "validate") else None
    _validate_base(cfg)
    return cfg


def _validate_base(cfg):
    if cfg.max_steps < 1:
        raise ConfigError(f"max_steps must be >= 1, got {cfg.max_steps}")
    for name in ("batch_size", "grad_accum", "save_steps", "logging_steps", "lora_r"):
        if getattr(cfg, name) < 1:
            raise ConfigError(f"{name} must be >= 1, got {getattr(cfg, name)}")
    if not cfg.learning_rate > 0:
        raise ConfigError(f"learning_rate must be > 0, got {cfg.learning_rate}")
    if str(cfg.bf16).lower() not in ("auto", "true", "false"):
        raise ConfigError(f"bf16 must be auto, true or false, got {cfg.bf16!r}")


# ------------------------------------------------------------------------------------------- data

def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(1 << 20):
            h.update(b)
    return h.hexdigest()


def read_jsonl(path: Path, required: tuple[str, ...] = (), what: str = "training data",
               allow_empty: bool = False) -> list[dict]:
    """One JSON object per line; a file that cannot be opened or decoded, a line that is not a JSON
    object or lacks a `required` field, or (unless `allow_empty`) no rows: TrainDataError naming
    path:line (`what` names the file in the cannot-open message)."""
    rows = []
    try:
        fh = open(path, encoding="utf-8")
    except OSError as e:
        raise TrainDataError(f"cannot open {what} {path}: {e}") from None
    with fh:
        try:
            for i, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise TrainDataError(f"{path}:{i}: not JSON ({e.msg})") from None
                if not isinstance(row, dict):
                    raise TrainDataError(f"{path}:{i}: expected a JSON object, got {type(row).__name__}")
                missing = [k for k in required if k not in row]
                if missing:
                    raise TrainDataError(f"{path}:{i}: missing field(s) {missing}")
                rows.append(row)
        except UnicodeDecodeError as e:
            raise TrainDataError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if not rows and not allow_empty:
        raise TrainDataError(f"{path}: no rows")
    return rows


def data_file(cfg, name: str, log=print) -> Path:
    """The JSONL file `name` (sft.jsonl, dpo.jsonl, ...) of cfg.data, exporting the bank if needed."""
    if cfg.data:
        p = Path(cfg.data)
        if p.is_file():
            return p
        if p.is_dir():
            if not (p / name).is_file():
                raise TrainDataError(f"{p} has no {name} (expected a procgen export: r3bench procgen --out DIR)")
            return p / name
        raise TrainDataError(f"data {cfg.data!r} is neither a file nor a folder")
    out = Path(cfg.output_dir) / "data"
    # once for all processes, before the process group exists (torchrun starts every rank at once):
    # the first to take the lock exports, the others wait on it and find the manifest written
    with distributed.file_lock(Path(cfg.output_dir) / ".data.lock"):
        if not (out / "manifest.json").is_file():
            export(out, n=cfg.procgen_n, seed=cfg.procgen_seed, log=log)
    return out / name


def train_rows(cfg, name: str, required: tuple[str, ...], log=print) -> tuple[list[dict], Path]:
    path = data_file(cfg, name, log=log)
    rows = read_jsonl(path, required)
    if any("split" in r for r in rows):
        rows = [r for r in rows if r.get("split", "train") == "train"]
        if not rows:
            raise TrainDataError(f"{path}: no rows with split == 'train'")
    if cfg.max_train_samples:
        rows = rows[: cfg.max_train_samples]
    return rows, path


def user_chat(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


# ------------------------------------------------------------------------------------------ model

def is_main_process() -> bool:
    return distributed.is_main_process()


def wait_for_everyone():
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.barrier()
    except Exception:  # noqa: BLE001
        pass


def model_path(name: str) -> str:
    """A model name as a local directory (r3bench's short names resolved; folders and hub ids unchanged)."""
    return models.local_path(name)


def use_bf16(cfg) -> bool:
    import torch

    v = str(cfg.bf16).lower()
    if v == "auto":
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return v == "true"


def training_placement(cfg) -> tuple[str, str]:
    """(device, torch dtype name) the policy trains on in this process: cuda:LOCAL_RANK in bf16 when
    `bf16` says so, else the CPU in float32."""
    import torch

    dtype = "bfloat16" if use_bf16(cfg) else "float32"
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

    dtype = torch.bfloat16 if (cfg is not None and use_bf16(cfg)) else torch.float32
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


M_MMAP_THRESHOLD = -3  # glibc malloc.h


def set_mmap_threshold(nbytes: int) -> bool:
    """mallopt(M_MMAP_THRESHOLD, nbytes) in this process: blocks of at least nbytes come from mmap and
    go back to the OS on free, and glibc's dynamic threshold (which rises to 32 MiB after the first large
    frees, so that freed activation buffers stay in the heap, resident) is switched off. True when set;
    False with nbytes <= 0, off glibc (macOS, musl) or when glibc refuses the value (above 32 MiB)."""
    if nbytes <= 0 or not sys.platform.startswith("linux"):
        return False
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt(M_MMAP_THRESHOLD, int(nbytes)) == 1


def apply_mmap_threshold(nbytes: int) -> int:
    """The trainers' `malloc_mmap_threshold` option, applied in this process before anything is built
    (run_training; benchmarks/throughput.py's measuring processes): the threshold in force, 0 for glibc's
    dynamic default - asked for (nbytes <= 0) or, with a warning, because it could not be set."""
    if nbytes <= 0:
        return 0
    if set_mmap_threshold(nbytes):
        return nbytes
    warnings.warn(f"malloc_mmap_threshold {nbytes}: not applied (not glibc, or a value glibc refuses); "
                  "peak memory may be several times the tensors' size", RuntimeWarning)
    return 0


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
        disable_tqdm=False, use_cpu=not _cuda(), gradient_checkpointing=cfg.gradient_checkpointing,
        gradient_checkpointing_kwargs={"use_reentrant": False} if cfg.gradient_checkpointing else None,
        # DDP broadcasts buffers at every forward by default, which makes the NUMBER of forwards a
        # collective that every rank must match; the only buffers here are constant (rotary tables)
        ddp_broadcast_buffers=False,
    )


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


# -------------------------------------------------------------------------------------- callbacks

def _jsonable(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def callbacks(cfg, tokenizer, extra=()) -> list:
    """metrics.jsonl and lm-eval callbacks, then `extra` (a caller's own)."""
    from transformers import TrainerCallback

    class JsonlMetrics(TrainerCallback):
        """Every logged dict to OUTPUT_DIR/metrics.jsonl (appended: a resumed run continues the file)."""

        def on_log(self, args, state, control, logs=None, **kw):
            if not state.is_world_process_zero or not logs:
                return
            rec = {"step": state.global_step, "time": round(time.time(), 3)}
            rec.update({k: _jsonable(v) for k, v in logs.items()})
            with open(Path(args.output_dir) / "metrics.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")

    class LmEval(TrainerCallback):
        """simple_evaluate of the current adapter every eval_steps and at the end."""

        def __init__(self):
            self.done: set[int] = set()

        def _run(self, args, state, model):
            if state.global_step in self.done or not cfg.eval_tasks.strip():
                return
            self.done.add(state.global_step)
            if state.is_world_process_zero:
                res = evaluate_model(model, tokenizer, cfg, tag=f"step-{state.global_step}")
                with open(Path(args.output_dir) / "metrics.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"step": state.global_step, "eval": res}) + "\n")
            wait_for_everyone()

        def on_step_end(self, args, state, control, model=None, **kw):
            if cfg.eval_steps and state.global_step % cfg.eval_steps == 0:
                self._run(args, state, model)

        def on_train_end(self, args, state, control, model=None, **kw):
            self._run(args, state, model)

    return [JsonlMetrics(), LmEval(), *extra]


# rough seconds per (problem x generated token) of lm-eval's greedy generation with SmolLM2-135M on a
# shared 2-core CPU: 20 problems x 512 tokens were estimated at 1 h 33 min (a GPU takes minutes)
CPU_EVAL_S_PER_TOKEN = (60 + 33) * 60 / (20 * 512)


def _minutes(seconds: float) -> str:
    m = round(seconds / 60)
    return f"{m // 60} h {m % 60} min" if m >= 60 else f"{max(m, 1)} min"


def eval_cost_note(cfg) -> str:
    """What an evaluation with cfg's eval_* settings costs on a CPU, roughly (one line)."""
    tasks = [t.strip() for t in cfg.eval_tasks.split(",") if t.strip()] or ["r3_procgen"]
    if not cfg.eval_limit:
        return (f"{', '.join(tasks)}: all documents x {cfg.eval_max_gen_toks} tokens (hours on a CPU: "
                f"~{_minutes(CPU_EVAL_S_PER_TOKEN * cfg.eval_max_gen_toks)} per problem on 2 cores)")
    n = cfg.eval_limit * len(tasks)
    return (f"{', '.join(tasks)}: {n} problems x {cfg.eval_max_gen_toks} tokens (~"
            f"{_minutes(CPU_EVAL_S_PER_TOKEN * n * cfg.eval_max_gen_toks)} on a 2-core CPU, rough; minutes on a GPU)")


def score_command(cfg, model_args: str) -> str:
    """The lm_eval command that scores a run's model: a limit that fits a CPU, and results + samples kept
    beside the run (lm_eval saves nothing without --output_path and --log_samples)."""
    return (f"lm_eval --model hf --model_args {model_args} --tasks r3_procgen --apply_chat_template --device cpu "
            f"--batch_size 8 --limit {cfg.eval_limit or 5} --gen_kwargs max_gen_toks={cfg.eval_max_gen_toks} "
            f"--output_path {Path(cfg.output_dir) / 'lm_eval'} --log_samples")


def no_eval_note(cfg, base_path: str, adapter: Path) -> str:
    """The end-of-run line of a run without evaluation: how to score its adapter and what it costs."""
    limit = cfg.eval_limit or 5
    margs = lm_eval_args(base_path, adapter, getattr(cfg, "lora", True))
    return (f"[r3bench] no evaluation (eval_tasks is empty, the default). Score the adapter with: "
            f"{score_command(cfg, margs)}, or train with --eval_tasks r3_procgen --eval_limit {limit}. Cost: "
            f"{eval_cost_note(dataclasses.replace(cfg, eval_limit=limit))}")


def evaluate_model(model, tokenizer, cfg, tag: str = "final") -> dict:
    """lm-eval simple_evaluate on cfg.eval_tasks with this (peft) model; summary per task.

    Failures are recorded (returned and written) rather than raised: an evaluation must not kill a run.
    Without CUDA it first prints what the evaluation costs on a CPU (eval_cost_note)."""
    out = Path(cfg.output_dir) / "eval"
    out.mkdir(parents=True, exist_ok=True)
    if not _cuda():
        print(f"[r3bench] evaluation {tag}: {eval_cost_note(cfg)}", file=sys.stderr, flush=True)
    was_training, side = model.training, tokenizer.padding_side
    t0 = time.perf_counter()
    try:
        from lm_eval import simple_evaluate
        from lm_eval.models.huggingface import HFLM
        from lm_eval.tasks import TaskManager

        lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=cfg.eval_batch_size)
        tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
        tasks = [t.strip() for t in cfg.eval_tasks.split(",") if t.strip()]
        r = simple_evaluate(model=lm, tasks=tasks, task_manager=tm, limit=cfg.eval_limit or None,
                            apply_chat_template=True, gen_kwargs={"max_gen_toks": cfg.eval_max_gen_toks},
                            bootstrap_iters=0, log_samples=True)
        summary = {"tag": tag, "seconds": round(time.perf_counter() - t0, 1), "tasks": {}}
        for name, res in r["results"].items():
            summary["tasks"][name] = {k.split(",")[0]: _jsonable(v) for k, v in res.items()
                                      if k.endswith(",none") and not k.startswith("alias")}
            summary["tasks"][name]["n"] = r["n-samples"].get(name, {}).get("effective")
        with open(out / f"{tag}.json", "w") as fh:
            json.dump({"summary": summary, "config": r.get("config", {}),
                       "samples": {k: [{"doc_id": s.get("doc_id"), "target": s.get("target"),
                                        "resps": s.get("filtered_resps"), "acc": s.get("acc")} for s in v]
                                   for k, v in r.get("samples", {}).items()}}, fh, indent=1, default=str)
    except Exception as e:  # noqa: BLE001 - recorded, see docstring
        summary = {"tag": tag, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-2000:]}
        (out / f"{tag}.json").write_text(json.dumps(summary, indent=1))
        print(f"[r3bench] evaluation {tag} failed (recorded in {out / (tag + '.json')}): {summary['error']}",
              file=sys.stderr)
    finally:
        tokenizer.padding_side = side  # lm-eval sets its own; the trainer's collators expect theirs
        model.train(was_training)
    return summary


# ----------------------------------------------------------------------------------------- guards

STATE_FILE = "r3bench_state.json"


class GuardMixin:
    """Put first in the bases of a Trainer: a non-finite loss raises NonFiniteLoss before the
    optimizer step (so no NaN reaches the weights or a checkpoint).

    It also keeps the sum of the training losses of the whole run (HF's `train_loss` after a resume
    covers only the resumed part) and writes it, with `r3_state()` (a trainer's own running
    statistics), into every checkpoint as r3bench_state.json; `r3_load_state` restores both."""

    r3_loss_sum = 0.0

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        val = float(loss.detach().float().item()) if hasattr(loss, "detach") else float(loss)
        # every rank learns of a non-finite loss on any rank and stops with the reason (one rank raising
        # alone left the others waiting in the next collective)
        every = distributed.stop_together(val, f"loss at step {self.state.global_step + 1}")
        # what HF adds to its tr_loss (already scaled for accumulation), averaged over the ranks as HF's
        # logged loss is: the same whole-run loss on every rank
        self.r3_loss_sum += sum(every) / len(every)
        return loss

    def r3_state(self) -> dict:
        return {}

    def r3_load_state(self, state: dict) -> None:
        self.r3_loss_sum = float(state.get("loss_sum", 0.0))

    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
        if self.is_world_process_zero():
            ck = Path(self._get_output_dir(trial=trial)) / f"checkpoint-{self.state.global_step}"
            if ck.is_dir():
                rec = {"global_step": self.state.global_step, "loss_sum": self.r3_loss_sum, **self.r3_state()}
                (ck / STATE_FILE).write_text(json.dumps(rec))


@cache
def guarded(base, *mixins):
    """`base` (an HF/TRL Trainer class) with GuardMixin, after `mixins` (e.g. TimingMixin) in the MRO:
    the Trainer class of a trainer whose only change to `base` is the guard (one class per bases)."""
    return type(f"Guarded{base.__name__}", (*mixins, GuardMixin, base), {"__module__": __name__})


class TimingMixin:
    """Seconds per phase of the training steps (stepfix, GRPO); put it before GuardMixin in the bases.

    `r3_phases` names the phases in log order; the last one gets the rest of each `training_step`:
    its seconds not counted in the other phases (stepfix: backward; GRPO: rest). A phase is timed by
    adding to `self.r3_times[phase]` (a dict that may be shared with helpers, such as GRPO's reward
    wrappers: pass it as `r3_times=`) or with `with self.timed(phase):`. Every training log (one with
    a loss) gets time_<phase>_s and share_<phase> (its share of the phases' total; with
    `r3_log_step_time`, also time_step_s, the whole training_step), and the times restart."""

    r3_phases: ClassVar[tuple[str, ...]] = ()
    r3_log_step_time: ClassVar[bool] = False

    def __init__(self, *a, r3_times: defaultdict | None = None, **kw):
        self.r3_times = r3_times if r3_times is not None else defaultdict(float)
        super().__init__(*a, **kw)

    @contextmanager
    def timed(self, phase: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.r3_times[phase] += time.perf_counter() - t0

    def training_step(self, model, inputs, num_items_in_batch=None):
        *inner, rest = self.r3_phases
        t0 = time.perf_counter()
        before = sum(self.r3_times[k] for k in inner)
        try:
            return super().training_step(model, inputs, num_items_in_batch)
        finally:
            dt = time.perf_counter() - t0
            self.r3_times[rest] += dt - (sum(self.r3_times[k] for k in inner) - before)
            self.r3_times["step"] += dt

    def timing_logs(self) -> dict:
        """time_<phase>_s and share_<phase> of the times since the last training log."""
        t = self.r3_times
        logs = {"time_step_s": t["step"]} if self.r3_log_step_time else {}
        tot = sum(t[k] for k in self.r3_phases)
        logs.update({f"time_{k}_s": t[k] for k in self.r3_phases})
        if tot:
            logs.update({f"share_{k}": t[k] / tot for k in self.r3_phases})
        return logs

    def log(self, logs, start_time=None):
        if "loss" in logs:  # a training log (not the end-of-train summary)
            logs.update(self.timing_logs())
            self.r3_times.clear()
        super().log(logs, *([start_time] if start_time is not None else []))


NOTHING_TO_LEARN_HINT = ("the adapter cannot change this way: train the SFT start longer (a larger max_steps "
                         "in trainers/configs/sft.yaml) until its samples pass the seven-tag format and "
                         "differ in reward")


def nothing_to_learn(n: int, format_failures: int, rewards: list) -> str | None:
    """Why a training step of n samples gives the policy nothing to learn, or None.

    Every sample failed the seven-tag format (its reward is the minimum), no sample reached the loss,
    or every sample that did earned the same reward (no advantage: the loss is ~0)."""
    if not n:
        return None
    if format_failures >= n:
        return f"all {n} samples failed the seven-tag format (reward 0)"
    if not rewards:
        return f"no sample of {n} reached the loss"
    if max(rewards) == min(rewards):
        return f"every sample earned the same reward ({rewards[0]:.3f})"
    return None


def warn_nothing_to_learn(step: int, why: str) -> None:
    print(f"[r3bench] warning: step {step} had nothing to learn: {why}; {NOTHING_TO_LEARN_HINT}",
          file=sys.stderr, flush=True)


class PhaseProgress:
    """One stderr line per phase of a training step (generation, verification, update), for the first
    step and for every step after one that took longer than `long_s` seconds: a step of many minutes
    (18 on a loaded CPU) is not a silent 0/1 progress bar."""

    def __init__(self, long_s: float = 60.0, out=None, clock=time.perf_counter):
        self.long_s, self.out, self.clock = long_s, out, clock
        self.step, self.t0, self.last, self.on = 0, 0.0, None, False

    def begin_step(self, step: int) -> None:
        self.step, self.t0 = step, self.clock()
        self.on = self.last is None or self.last > self.long_s

    def phase(self, what: str) -> None:
        if self.on:
            print(f"[r3bench] step {self.step}: {what} ({self.clock() - self.t0:.0f} s into the step)",
                  file=self.out or sys.stderr, flush=True)

    def end_step(self) -> None:
        self.last = self.clock() - self.t0


def resume_record(ckpt: str | None) -> dict | None:
    """What the end of a resumed run needs from the checkpoint it resumed from, read before training:
    with save_total_limit, HF's checkpoint rotation deletes that checkpoint once newer ones are saved
    (a run resumed from checkpoint-3 that saves 6, 9 and 12 keeps only 9 and 12), and reading it after
    train() crashed a finished run at its last line. None for a fresh run."""
    if ckpt is None:
        return None
    p = Path(ckpt)
    state = json.loads((p / STATE_FILE).read_text()) if (p / STATE_FILE).is_file() else None
    ts = json.loads((p / "trainer_state.json").read_text())
    # log_history stands in for the loss sum in a checkpoint of an older r3bench (no state file)
    return {"state": state, "log_history": ts.get("log_history", []), "global_step": int(ts.get("global_step", 0))}


def finish_from_last_checkpoint(trainer, ckpt: str) -> None:
    """A run that died after saving its checkpoint at max_steps (while saving final/, say): load that
    checkpoint's weights and state instead of calling train(). HF's loop, resumed at max_steps, takes
    one more optimizer step before it checks max_steps (the study's GRPO outcome seed 0, resumed from
    checkpoint-12 of 12, came back at step 13)."""
    from transformers import TrainerState

    trainer._load_from_checkpoint(ckpt)  # what train(resume_from_checkpoint=...) loads first (adapter or model)
    trainer.state = TrainerState.load_from_json(str(Path(ckpt) / "trainer_state.json"))
    # a session with no step: its callbacks begin and end (the lm-eval of the final adapter runs at the end;
    # HF's progress bar is opened at the beginning)
    cb = trainer.callback_handler
    trainer.control = cb.on_train_begin(trainer.args, trainer.state, trainer.control)
    trainer.control = cb.on_train_end(trainer.args, trainer.state, trainer.control)


def whole_run_loss(trainer, resumed: dict | None) -> tuple[float, str]:
    """(mean training loss over every step of the run, how it was obtained) after trainer.train().

    `resumed`: resume_record of the checkpoint the run resumed from (None: a fresh run). A resumed
    run adds the loss sum saved in that checkpoint (r3bench_state.json, restored into the trainer
    before training); a checkpoint without that file (written by an older r3bench) falls back to its
    log_history (logged interval means x interval lengths: exact when logging_steps divides save_steps)."""
    steps = max(trainer.state.global_step, 1)
    total = getattr(trainer, "r3_loss_sum", None)
    if total is None:
        return float("nan"), "trainer keeps no loss sum"
    if resumed is None or resumed["state"] is not None:
        return total / steps, "whole run"
    prev, before = 0, 0.0
    for h in resumed["log_history"]:
        if "loss" in h and h.get("step", 0) > prev:
            before += float(h["loss"]) * (h["step"] - prev)
            prev = h["step"]
    return (before + total) / steps, f"whole run; steps 1-{prev} from the checkpoint's log_history"


# ------------------------------------------------------------------------------------- run record

def _git_commit() -> str | None:
    try:
        here = Path(__file__).resolve().parent
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                              timeout=10).stdout.strip() or None
    except Exception:  # noqa: BLE001
        return None


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("r3bench", "torch", "transformers", "peft", "trl", "accelerate", "lm_eval", "datasets"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def trainer_name(cfg) -> str:
    """The trainer's module name ("sft", "stepfix", ...), also under `python -m trainers.sft`, where the
    config class lives in `__main__`."""
    return _module_name(type(cfg)).rsplit(".", 1)[-1]


def _module_name(cls) -> str:
    """The module of `cls` by its import name, also when it runs as __main__ (python -m)."""
    mod = cls.__module__
    if mod == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        mod = spec.name if spec is not None else mod
    return mod


def sandbox_isolation() -> str:
    """verifiers.sandbox.isolation_level(): how model-written code (CE feedback, pde reward) was
    isolated in this run; a failure to tell is recorded as such."""
    try:
        return isolation_level()
    except Exception as e:  # noqa: BLE001 - a record field, never a reason to stop a run
        return f"unknown ({type(e).__name__}: {str(e)[:200]})"


def peak_rss_gb() -> float | None:
    """This process's peak resident memory so far (ru_maxrss), in GB; None where unavailable."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(rss * (1 if sys.platform == "darwin" else 1024) / 1e9, 3)


def write_run(cfg, **extra) -> Path:
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "run.json"
    rec = json.loads(path.read_text()) if path.is_file() else {}
    rec.update({"trainer": trainer_name(cfg), "config": dataclasses.asdict(cfg),
                "git_commit": _git_commit(), "versions": versions(),
                "hardware": {"cuda": _cuda(), "platform": platform.platform(), "cpus": os.cpu_count()},
                "sandbox_isolation": sandbox_isolation(), "peak_rss_gb": peak_rss_gb()})
    if "status" in extra:  # an error of an earlier attempt does not describe this one
        for k in ("error", "traceback"):
            rec.pop(k, None)
    rec.update(extra)
    if is_main_process():
        tmp = path.with_suffix(".json.partial")
        tmp.write_text(json.dumps(rec, indent=1, default=str))
        tmp.replace(path)
    elif extra.get("status") not in (None, "running", "finished"):
        # another rank's failure: its own file (run.json is rank 0's), so the reason is not lost when the
        # launcher stops rank 0 because this rank died
        rank_path = out / f"run.rank{distributed.rank()}.json"
        rank_path.write_text(json.dumps({"rank": distributed.rank(), **{k: rec.get(k) for k in
                                         ("status", "error", "traceback")}}, indent=1, default=str))
    return path


def checkpoint_problems(path: Path) -> list[str]:
    """Why the checkpoint folder `path` cannot be resumed from ([] = intact).

    A checkpoint half-written by a run killed while saving has missing or truncated files. Checked
    without loading any tensor: trainer_state.json parses and names this step; optimizer.pt and
    scheduler.pt exist; every *.json parses; every *.safetensors has a readable header whose tensors
    fit the file's size; every torch file (*.pt, *.pth, *.bin) is a complete zip archive whose CRCs
    match."""
    import zipfile

    path = Path(path)
    problems = []
    try:
        state = json.loads((path / "trainer_state.json").read_text())
        step = int(path.name.rsplit("-", 1)[-1])
        if state.get("global_step") != step:
            problems.append(f"trainer_state.json says step {state.get('global_step')}, folder {path.name}")
    except (OSError, ValueError) as e:
        problems.append(f"trainer_state.json unreadable ({type(e).__name__})")
    for need in ("optimizer.pt", "scheduler.pt"):
        if not (path / need).is_file():
            problems.append(f"{need} missing")
    if not any(path.glob("*.safetensors")) and not any(path.glob("*.bin")):
        problems.append("no weights file")
    for f in sorted(path.iterdir()) if path.is_dir() else []:
        if not f.is_file() or f.name == "trainer_state.json":
            continue
        try:
            if f.suffix == ".json":
                json.loads(f.read_text())
            elif f.suffix == ".safetensors":
                with open(f, "rb") as fh:
                    n = int.from_bytes(fh.read(8), "little")
                    if not 2 <= n <= 100_000_000:
                        raise ValueError("bad header length")
                    header = json.loads(fh.read(n))
                end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
                if f.stat().st_size < 8 + n + end:
                    raise ValueError("truncated")
            elif f.suffix in (".pt", ".pth", ".bin"):
                with zipfile.ZipFile(f) as z:
                    if z.testzip() is not None:
                        raise ValueError("CRC mismatch")
        except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile) as e:
            problems.append(f"{f.name}: {type(e).__name__}: {str(e)[:80]}")
    return problems


def _checkpoints(out: Path) -> list[Path]:
    import re

    found = [p for p in out.glob("checkpoint-*") if p.is_dir() and re.fullmatch(r"checkpoint-\d+", p.name)]
    return sorted(found, key=lambda p: int(p.name.split("-")[1]))


def resume_checkpoint(cfg, log=None) -> str | None:
    """The checkpoint to resume from: None without `resume`; else the newest *intact* one.

    Newer checkpoints that are half-written (checkpoint_problems) are renamed to broken-checkpoint-N
    (kept for inspection, out of HF's checkpoint rotation and of later resumes) and reported through
    `log` (default: the logging module) and in run.json (`skipped_checkpoints`)."""
    out = Path(cfg.output_dir)
    ckpts = _checkpoints(out) if out.is_dir() else []
    if not cfg.resume:
        if ckpts:
            raise ConfigError(f"{cfg.output_dir} already holds checkpoints: pass --resume to continue, "
                              "or choose another output_dir")
        return None
    if not ckpts:
        raise ConfigError(f"--resume: no checkpoint-* folder in {cfg.output_dir}")
    with distributed.file_lock(out / ".resume.lock"):  # rank 0 may be moving half-written ones aside
        return _pick_checkpoint(cfg, out, _checkpoints(out), log)


def _pick_checkpoint(cfg, out: Path, ckpts: list[Path], log=None) -> str:
    """resume_checkpoint's choice; only the main process renames (every rank skips the same ones)."""
    skipped = []
    for ck in reversed(ckpts):
        problems = checkpoint_problems(ck)
        if not problems:
            if skipped:
                msg = (f"resuming from {ck.name}, the newest intact checkpoint; skipped (half-written): "
                       + "; ".join(f"{s['checkpoint']} ({', '.join(s['problems'])}) -> {s['moved_to']}" for s in skipped))
                (log or logging.getLogger("r3bench.trainers").warning)(msg)
                write_run(cfg, skipped_checkpoints=skipped, resumed_from=ck.name)
            return str(ck)
        dest = out / f"broken-{ck.name}"
        i = 1
        while dest.exists():
            dest, i = out / f"broken-{ck.name}.{i}", i + 1
        if not is_main_process():
            skipped.append({"checkpoint": ck.name, "problems": problems[:5], "moved_to": dest.name})
            continue
        ck.rename(dest)
        skipped.append({"checkpoint": ck.name, "problems": problems[:5], "moved_to": dest.name})
    raise ConfigError(f"--resume: no intact checkpoint in {cfg.output_dir}; half-written ones moved aside: "
                      + ", ".join(s["moved_to"] for s in skipped))


def save_final(trainer, tokenizer, cfg) -> Path:
    final = Path(cfg.output_dir) / "final"
    trainer.save_model(str(final))
    if trainer.is_world_process_zero():
        tokenizer.save_pretrained(str(final))
    return final


def lm_eval_args(base_path: str, adapter: Path, lora: bool = True) -> str:
    """lm-eval's --model_args for the run's final folder: an adapter over the base, or (full fine-tuning)
    the model itself."""
    return f"pretrained={base_path},peft={adapter}" if lora else f"pretrained={adapter}"


def check_init_adapter(cfg) -> None:
    """Fail early (before data export and model loads) when `init_adapter` names no adapter, with
    the command that makes one."""
    if not getattr(cfg, "init_adapter", ""):
        return
    p = Path(cfg.init_adapter)
    if not (p / "adapter_config.json").is_file():
        out = p.parent if p.name == "final" else p
        raise ConfigError(f"init_adapter {cfg.init_adapter!r} has no adapter_config.json; make the SFT adapter first: "
                          f"python -m trainers.sft --config trainers/configs/sft.yaml --output_dir {out}"
                          + ("" if p.name == "final" else " (it writes OUTPUT_DIR/final)"))


def run_training(cfg, build: Callable, **build_kw):
    """The body of every trainer's `train`: refuse/resume checkpoints, build, record, train, save.

    `build(cfg, **build_kw) -> (trainer, tokenizer, base_path, data_path or None)`.
    run.json: "finished" with the result, or "interrupted" (with the error) when anything stops the
    run (exception or KeyboardInterrupt; written in a finally), "non_finite_loss" for that guard,
    "judge_budget_spent" when the LLM judge's budget ran out (judge_budget_stop: the judge's stats and a
    checkpoint to resume from). With `verifier: judge`, run.json's `judge` is the judge's stats().
    Returns (trainer, result dict for run.json)."""
    from trainers import judging  # here, not at the top: trainers.judging imports this module

    check_init_adapter(cfg)
    apply_mmap_threshold(cfg.malloc_mmap_threshold)
    psv.set_resolver(model_path)  # the psv verifier backend's R3BENCH_PSV_MODEL may be a short name too
    psv.set_placement(*training_placement(cfg))  # PSV verifier and PSPO scorer beside the policy
    ckpt = resume_checkpoint(cfg)
    status, extra, trainer = "interrupted", {}, None
    try:
        resumed = resume_record(ckpt)  # now: training may rotate that checkpoint away
        trainer, tok, base, path = build(cfg, **build_kw)
        distributed.check_launch(getattr(trainer, "accelerator", None))  # FSDP / DeepSpeed asked, not applied
        if path is not None:
            write_run(cfg, status="running", data_file=str(path), data_sha256=sha256_file(path))
        if resumed is not None and resumed["state"] is not None and hasattr(trainer, "r3_load_state"):
            trainer.r3_load_state(resumed["state"])
        if resumed is not None and resumed["global_step"] >= cfg.max_steps:
            finish_from_last_checkpoint(trainer, ckpt)
            this_session = None  # no step run in this session
        else:
            this_session = trainer.train(resume_from_checkpoint=ckpt).training_loss
        final = save_final(trainer, tok, cfg)
        loss, how = whole_run_loss(trainer, resumed)
        result = {"adapter": str(final), "lm_eval_model_args": lm_eval_args(base, final, cfg.lora), "train_loss": loss,
                  "train_loss_covers": how, "train_loss_this_session": this_session,
                  "global_step": trainer.state.global_step}
        if ckpt is not None:
            result["resumed_from"] = Path(ckpt).name
        if hasattr(trainer, "r3_nothing_to_learn"):  # stepfix, GRPO: steps that could not move the policy
            result["nothing_to_learn_steps"] = trainer.r3_nothing_to_learn
            if trainer.r3_nothing_to_learn and trainer.is_world_process_zero():
                print(f"[r3bench] warning: {trainer.r3_nothing_to_learn} of {trainer.state.global_step} steps had "
                      f"nothing to learn (metrics.jsonl: nothing_to_learn); {NOTHING_TO_LEARN_HINT}",
                      file=sys.stderr, flush=True)
        if not cfg.eval_tasks.strip() and type(cfg).scored_by_lm_eval and trainer.is_world_process_zero():
            print(no_eval_note(cfg, base, final), file=sys.stderr, flush=True)
        result.update(judging.run_record(cfg))
        if trainer.is_world_process_zero():
            write_model_card(cfg, base, result)
        status, extra = "finished", result
        return trainer, result
    except NonFiniteLoss as e:
        status, extra = "non_finite_loss", {"error": str(e)}
        raise
    except JudgeBudgetExceeded as e:
        status, extra = "judge_budget_spent", {"error": str(e), **judge_budget_stop(trainer, cfg)}
        raise
    except KeyboardInterrupt:
        extra = {"error": "KeyboardInterrupt; resume with --resume"}
        raise
    except BaseException as e:
        extra = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
        raise
    finally:
        if status == "interrupted":
            extra.update(judging.run_record(cfg))
        write_run(cfg, status=status, **extra)


def write_model_card(cfg, base: str, result: dict) -> Path:
    """OUTPUT_DIR/README.md: what the run is, in place of the card transformers / TRL write there
    ("fine-tuned version of [None]"): trainer, base model, data, steps, loss, and the command that scores it."""
    out = Path(cfg.output_dir)
    name = trainer_name(cfg)
    data = getattr(cfg, "data", "") or "the procgen export made for the run (see run.json: data_file)"
    lines = [f"# {out.name}: r3bench `trainers.{name}` run", "",
             f"- base model: `{base}`" + (f" (start adapter `{cfg.init_adapter}`)" if getattr(cfg, "init_adapter", "")
                                           else ""),
             f"- method: {name}, {'LoRA r=' + str(cfg.lora_r) if cfg.lora else 'full fine-tuning'}, "
             f"{result.get('global_step')} optimizer steps of batch {cfg.batch_size} x accumulation {cfg.grad_accum}, "
             f"learning rate {cfg.learning_rate}",
             f"- data: {data}",
             f"- training loss: {result.get('train_loss')} ({result.get('train_loss_covers')})",
             f"- the model: `{result.get('adapter')}`; run record: `run.json`; step log: `metrics.jsonl`", "",
             "Score it (lm-eval with r3bench's tasks; on a CPU keep a limit):", "", "```bash",
             score_command(cfg, result.get("lm_eval_model_args")),
             "```", ""]
    path = out / "README.md"
    path.write_text("\n".join(lines))
    return path


def judge_budget_stop(trainer, cfg) -> dict:
    """What run.json says of a run that the judge's budget stopped: the judge's stats, the step reached
    and the checkpoint to resume from - the one of that step, saved now unless it exists (the step in
    progress is dropped: its optimizer update never happened, and a resume runs it again)."""
    from trainers import judging

    rec = judging.run_record(cfg)
    if trainer is None:
        return rec
    step, out = trainer.state.global_step, Path(cfg.output_dir)
    # every rank stopped here together (distributed.raise_together) and saves together (each rank's RNG
    # state; FSDP / ZeRO gather): rank 0's look decides for all, taken before any rank starts writing
    exists = distributed.gather_objects((out / f"checkpoint-{step}").is_dir())[0]
    if step > 0 and not exists:
        try:
            trainer._save_checkpoint(trainer.model, trial=None)
        except Exception as e:  # noqa: BLE001 - recorded; the newest earlier checkpoint is named instead
            rec["checkpoint_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    found = _checkpoints(out)
    rec.update(global_step=step, checkpoint=found[-1].name if found else None,
               resume="raise the judge budget (judge_max_cost_usd / judge_max_tokens) and run again with --resume")
    return rec


def main(cls, train_fn: Callable, argv=None, prog: str | None = None) -> int:
    """CLI entry: parse, run, record the outcome in run.json; exit 0 ok, 1 config/data error, 2 non-finite loss,
    3 the judge's budget spent (one line on stderr, no traceback).

    run.json's status is written in a finally: finished, error (config/data), non_finite_loss,
    judge_budget_spent, or interrupted (any other exception, KeyboardInterrupt included; the error and
    traceback beside it)."""
    try:
        cfg = parse(cls, argv, prog=prog)
        check_init_adapter(cfg)
        resume_checkpoint(cfg)  # refuse to touch a finished run's record when --resume is missing
    except (ConfigError, TrainDataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    t0 = time.time()
    write_run(cfg, status="running", started=t0)
    status, extra, rc, together = "interrupted", {}, None, False
    try:
        result = train_fn(cfg) or {}
        status, extra, rc = "finished", {"seconds": round(time.time() - t0, 1), **result}, 0
    except (ConfigError, TrainDataError) as e:
        status, extra, rc = "error", {"error": str(e)}, 1
        print(f"error: {e}", file=sys.stderr)
    except NonFiniteLoss as e:
        status, extra, rc = "non_finite_loss", {"error": str(e)}, 2
        together = getattr(e, "raised_together", False)
        print(f"error: {e}", file=sys.stderr)
    except JudgeBudgetExceeded as e:
        # a planned stop, not a crash: one line, no traceback; run_training recorded the stats and the checkpoint
        status, extra, rc = "judge_budget_spent", {"error": str(e)}, EXIT_JUDGE_BUDGET
        together = getattr(e, "raised_together", False)
        print(f"stopped: {e}; the judge's stats and the checkpoint to resume from are in "
              f"{Path(cfg.output_dir) / 'run.json'}", file=sys.stderr)
    except KeyboardInterrupt:
        extra = {"error": "KeyboardInterrupt; resume with --resume"}
        raise
    except BaseException as e:
        extra = {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}
        raise
    finally:
        write_run(cfg, status=status, **extra)
    if together:
        # every rank stopped at the same point (distributed.raise_together / stop_together): none exits
        # before rank 0 has written run.json and the checkpoint - the launcher stops the other ranks as
        # soon as one exits, and rank 0, which writes, is the slowest (seen: rank 1 exited 3, torchrun
        # sent SIGTERM to rank 0 while it saved the checkpoint)
        distributed.barrier()
        _ignore_sigterm()
    if rc == 0:
        print(json.dumps({k: v for k, v in extra.items() if k != "eval"}, indent=1, default=str))
    return rc


def _ignore_sigterm() -> None:
    """After a stop that every rank shares, with the records written: the launcher's SIGTERM (sent to the
    other ranks as soon as the first one exits) is ignored, so that this process too ends with its own
    exit code rather than as killed (-15): its work is done, only the interpreter's teardown is left (a
    handler function would not do: Python resets those to the default at finalization; SIG_IGN it keeps).
    torchrun sends SIGKILL 30 s later to a process that is still there."""
    import signal

    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:  # not the main thread: the launcher's signal ends the process as it would
        pass


def _prog(cls) -> str:
    """`python -m trainers.<name>` of a config class (also when its module runs as __main__)."""
    return f"python -m {_module_name(cls)}"


def entry(cls, build: Callable, after: Callable | None = None) -> tuple[Callable, Callable]:
    """(train, main) of a trainer module from its Config class and `build`:

        train, main = common.entry(Config, build)

    `train(cfg, extra_callbacks=(), **build_kw)` runs run_training(cfg, build, ...) and returns the
    result dict for run.json, passed through `after(cfg, trainer, result)` when given (psv saves its
    merged model there); `main(argv=None)` is the CLI (common.main with prog `python -m trainers.X`)."""

    def train(cfg, extra_callbacks=(), **build_kw):
        trainer, result = run_training(cfg, build, extra_callbacks=extra_callbacks, **build_kw)
        return after(cfg, trainer, result) if after is not None else result

    def main_(argv=None) -> int:
        return main(cls, train, argv, prog=_prog(cls))

    train.__module__ = main_.__module__ = cls.__module__
    train.__doc__ = "Train `cfg` (run_training with this trainer's build); returns the result dict of run.json."
    main_.__name__ = main_.__qualname__ = "main"
    main_.__doc__ = ("The CLI: parse, train, record run.json; exit 0 ok, 1 config/data error, 2 non-finite loss, "
                     "3 the judge's budget spent.")
    return train, main_
