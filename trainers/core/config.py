"""A trainer's configuration: `BaseConfig` (the fields every trainer shares), YAML + CLI parsing
(`parse`, `--help` from `build_parser`), `make` (values -> a validated Config) and the renamed-field
rule. Unknown keys and bad values are ConfigErrors before anything loads; name-valued fields are
checked against their one list (`lr_scheduler`: trainers.core.upstream.LR_SCHEDULERS)."""
from __future__ import annotations

import argparse
import dataclasses
import sys
import textwrap
import warnings
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import yaml

from trainers.core import upstream
from trainers.errors import ConfigError, option


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
                             "evaluation (what it costs on a CPU: the end of --help)")
    eval_limit: int = option(5, "lm-eval --limit per task (0 = all documents)")
    eval_max_gen_toks: int = option(512, "max_gen_toks for evaluation generations")
    eval_batch_size: int = option(8, "lm-eval batch size")
    max_length: int = option(1024, "maximum tokens of a training sequence (prompt + completion)")
    gradient_checkpointing: bool = option(True, "recompute activations in the backward pass: ~30% more compute, far less "
                                      "memory (without it SmolLM2 SFT at batch 4 x ~700 tokens held 10.6 GB resident)")
    resume: bool = option(False, "continue from the last checkpoint in OUTPUT_DIR (error if there is none)")
    bf16: str = option("auto", "auto (bf16 on CUDA that supports it, with bf16 weights; on a CPU with AMX-BF16, "
                       "autocast over fp32 weights), true or false")
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
    if cfg.lr_scheduler not in upstream.LR_SCHEDULERS:
        raise ConfigError(f"lr_scheduler must be one of {list(upstream.LR_SCHEDULERS)}, got {cfg.lr_scheduler!r}")


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
