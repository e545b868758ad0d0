"""DPO with the IPO loss: `python -m trainers.dpo --config FILE`.

Rows: dpo.jsonl of a procedural-bank export (chosen = reference or the later-first-error solution,
rejected = an injected-error one) or any JSONL with `prompt`, `chosen`, `rejected` (for example
verifier-labelled samples of the model itself). TRL's DPOTrainer with `loss_type="ipo"`; TRL's
`beta` is IPO's tau (the regulariser in (h - 1/(2 tau))^2), set here as `tau`.

Reference model: with `init_adapter` (the SFT adapter) the policy continues training that adapter
and the reference is the SFT model frozen (adapter merged into a second copy of the base); without
it, a fresh LoRA is trained and the reference is the base (TRL disables the adapter).
"""
from __future__ import annotations

from dataclasses import dataclass

from trainers import common
from trainers.common import BaseConfig, ConfigError, _f


@dataclass
class Config(BaseConfig):
    output_dir: str = _f("runs/dpo", "where checkpoints, logs, the final adapter and run.json go")
    learning_rate: float = _f(5e-5, "peak learning rate")
    loss_type: str = _f("ipo", "TRL DPO loss: ipo (default) or sigmoid (DPO), hinge, ...")
    tau: float = _f(0.1, "IPO tau = TRL beta")

    def validate(self):
        if not self.tau > 0:
            raise ConfigError(f"tau must be > 0, got {self.tau}")


def dataset(cfg, log=print):
    from datasets import Dataset

    rows, path = common.train_rows(cfg, "dpo.jsonl", ("prompt", "chosen", "rejected"), log=log)
    data = Dataset.from_list([{"prompt": common.user_chat(r["prompt"]),
                               "chosen": [{"role": "assistant", "content": r["chosen"]}],
                               "rejected": [{"role": "assistant", "content": r["rejected"]}]} for r in rows])
    return data, path


def build(cfg, extra_callbacks=()):
    from trl import DPOConfig, DPOTrainer

    base = common.model_path(cfg.model)
    tok = common.load_tokenizer(base)
    data, path = dataset(cfg)
    args = DPOConfig(**common.training_args_kwargs(cfg), max_length=cfg.max_length, loss_type=cfg.loss_type,
                     beta=cfg.tau)

    class Trainer(common.GuardMixin, DPOTrainer):
        pass

    trainer = Trainer(model=common.policy_model(cfg, base), ref_model=common.frozen_reference(cfg, base), args=args,
                      train_dataset=data, processing_class=tok,
                      callbacks=common.callbacks(cfg, tok, extra_callbacks))
    return trainer, tok, base, path


def train(cfg, extra_callbacks=()):
    return common.run_training(cfg, build, extra_callbacks=extra_callbacks)[1]


def main(argv=None):
    return common.main(Config, train, argv, prog="python -m trainers.dpo")


if __name__ == "__main__":
    raise SystemExit(main())
