"""DPO with the IPO loss: `python -m trainers.dpo --config FILE`.

Rows: dpo.jsonl of a procedural-bank export (chosen = reference or the later-first-error solution,
rejected = an injected-error one) or any JSONL with `prompt`, `chosen`, `rejected` (for example
verifier-labelled samples of the model itself). TRL's DPOTrainer with `loss_type="ipo"`.

`beta` is the KL coefficient, TRL's DPO beta: how strongly the policy is held to the reference. With
the IPO loss it is IPO's tau, the regulariser in (h - 1/(2 tau))^2 (this field was called `tau`;
the old name still loads, with a warning).

Reference model: with `init_adapter` (the SFT adapter) the policy continues training that adapter
and the reference is the SFT model frozen (adapter merged into a second copy of the base); without
it, a fresh LoRA is trained and the reference is the base (TRL disables the adapter).

What the long steps cost on a CPU: Config.costs, which `--help` prints.
"""
from __future__ import annotations

from dataclasses import dataclass

from trainers.core import upstream
from trainers.core.config import BaseConfig
from trainers.core.data import train_rows, user_chat
from trainers.core.entry import entry
from trainers.core.evaluation import callbacks
from trainers.core.mixins import guarded
from trainers.core.model import frozen_reference, load_tokenizer, model_path, policy_model, training_args_kwargs
from trainers.errors import ConfigError, option


@dataclass
class Config(BaseConfig):
    output_dir: str = option("runs/dpo", "where checkpoints, logs, the final adapter and run.json go")
    learning_rate: float = option(5e-5, "peak learning rate")
    loss_type: str = option("ipo", "TRL DPO loss: ipo (default) or sigmoid (DPO), hinge, ...")
    beta: float = option(0.1, "KL coefficient (TRL's DPO beta; with loss_type ipo it is IPO's tau); old name: tau")

    renamed = {"tau": "beta"}
    costs = ("Cost on a 2-core CPU, SmolLM2-135M: ~75 s per optimizer step of 2 x 2 pairs (5 steps took "
             "373 s): a pair is a chosen and a rejected sequence through the policy and the reference.")

    def validate(self):
        if not self.beta > 0:
            raise ConfigError(f"beta must be > 0, got {self.beta}")
        if self.loss_type not in upstream.DPO_LOSS_TYPES:
            raise ConfigError(f"loss_type must be one of TRL's {list(upstream.DPO_LOSS_TYPES)}, got {self.loss_type!r}")


def dataset(cfg, log=print):
    from datasets import Dataset

    rows, path = train_rows(cfg, "dpo.jsonl", ("prompt", "chosen", "rejected"), log=log)
    data = Dataset.from_list([{"prompt": user_chat(r["prompt"]),
                               "chosen": [{"role": "assistant", "content": r["chosen"]}],
                               "rejected": [{"role": "assistant", "content": r["rejected"]}]} for r in rows])
    return data, path


def build(cfg, extra_callbacks=()):
    from trl import DPOConfig, DPOTrainer

    base = model_path(cfg.model)
    tok = load_tokenizer(base)
    data, path = dataset(cfg)
    args = DPOConfig(**training_args_kwargs(cfg), max_length=cfg.max_length, loss_type=cfg.loss_type,
                     beta=cfg.beta)
    trainer = guarded(DPOTrainer)(model=policy_model(cfg, base), ref_model=frozen_reference(cfg, base),
                                         args=args, train_dataset=data, processing_class=tok,
                                         callbacks=callbacks(cfg, tok, extra_callbacks))
    return trainer, tok, base, path


train, main = entry(Config, build)

if __name__ == "__main__":
    raise SystemExit(main())
