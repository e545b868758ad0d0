"""LoRA SFT on the seven-tag corpus: `python -m trainers.sft --config FILE`.

Rows: sft.jsonl of a procedural-bank export (train split) or any JSONL with `prompt` and
`completion` (the assistant's seven-tag solution). Each becomes a conversational prompt/completion
pair, rendered with the model's chat template exactly as lm-eval's `--apply_chat_template` renders
the task prompts; the loss is on the completion tokens only (TRL SFTTrainer, completion_only_loss).

What the long steps cost on a CPU: Config.costs, which `--help` prints.
"""
from __future__ import annotations

from dataclasses import dataclass

from trainers.core.config import BaseConfig
from trainers.core.data import train_rows, user_chat
from trainers.core.entry import entry
from trainers.core.evaluation import callbacks
from trainers.core.mixins import guarded
from trainers.core.model import load_tokenizer, model_path, policy_model, training_args_kwargs
from trainers.errors import option


@dataclass
class Config(BaseConfig):
    output_dir: str = option("runs/sft", "where checkpoints, logs, the final adapter and run.json go")
    learning_rate: float = option(2e-4, "peak learning rate")
    batch_size: int = option(1, "sequences per micro-batch (peak memory grows ~2 GB per ~650-token SmolLM2 sequence: "
                         "~2.5 GB at 1, 4.6 GB at 2, 8.1 GB at 4; docs/training.md)")
    grad_accum: int = option(4, "gradient accumulation steps (1 x 4 = 4 sequences per optimizer step)")

    costs = ("Cost on a 2-core CPU, SmolLM2-135M: ~35 s per optimizer step of 4 sequences of ~650 tokens "
             "(30 steps took 1038 s), so the default 100 steps take about an hour; peak memory ~2.5 GB at "
             "batch 1. A GPU takes seconds per step.")


def dataset(cfg, log=print):
    from datasets import Dataset

    rows, path = train_rows(cfg, "sft.jsonl", ("prompt", "completion"), log=log)
    data = Dataset.from_list([{"prompt": user_chat(r["prompt"]),
                               "completion": [{"role": "assistant", "content": r["completion"]}]} for r in rows])
    return data, path


def build(cfg, extra_callbacks=()):
    from trl import SFTConfig, SFTTrainer

    base = model_path(cfg.model)
    tok = load_tokenizer(base)
    data, path = dataset(cfg)
    args = SFTConfig(**training_args_kwargs(cfg), max_length=cfg.max_length, completion_only_loss=True,
                     packing=False, dataset_num_proc=None)
    trainer = guarded(SFTTrainer)(model=policy_model(cfg, base), args=args, train_dataset=data,
                                         processing_class=tok, callbacks=callbacks(cfg, tok, extra_callbacks))
    return trainer, tok, base, path


train, main = entry(Config, build)

if __name__ == "__main__":
    raise SystemExit(main())
