"""A trainer added from ONE file (issue 38): a module that uses trainers/core - a Config dataclass on
BaseConfig, a `build(cfg)` and `train, main = entry(Config, build)` - runs end to end on the tiny random
model (`python -m trainers.<name> --config FILE`: run.json "finished" and a final LoRA adapter, like the
others), refuses unknown and invalid fields at config load, and is found by `r3bench reproduce`.

There is no table of trainers: a trainer is found by its module name, `trainers.<name>` (what
`python -m`, reproduce's train command and field check, the learning study and run.json's "trainer"
use). Files a newcomer touches: `trainers/<name>.py`, and - to run it from plans, the leaderboard and the
records - its method row `Method(key, label, trainer=<name>)` in r3bench/core/methods.py: two. The toy
below (TOY) is made importable as `trainers.toy` from a temporary folder added to the package's path, so no
file is written into trainers/.
"""
import importlib
import json
import runpy
import sys

import pytest

import trainers
from r3bench.apps import reproduce
from r3bench.core.methods import Method
from trainers.core.config import make
from trainers.errors import ConfigError

from trainer_kw import base_kw  # tests/trainers/ is on sys.path

TOY = '''
"""Toy SFT: LoRA SFT on each completion's first `completion_chars` characters (a tiny SFT variant)."""
from dataclasses import dataclass

from trainers.core.config import BaseConfig
from trainers.core.data import train_rows, user_chat
from trainers.core.entry import entry
from trainers.core.evaluation import callbacks
from trainers.core.mixins import guarded
from trainers.core.model import load_tokenizer, model_path, policy_model, training_args_kwargs
from trainers.errors import ConfigError, option


@dataclass
class Config(BaseConfig):
    output_dir: str = option("runs/toy", "where checkpoints, logs, the final adapter and run.json go")
    completion_chars: int = option(200, "characters of each completion trained on (>= 1)")

    def validate(self):
        if self.completion_chars < 1:
            raise ConfigError(f"completion_chars must be >= 1, got {self.completion_chars}")


def build(cfg, extra_callbacks=()):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    base = model_path(cfg.model)
    tok = load_tokenizer(base)
    rows, path = train_rows(cfg, "sft.jsonl", ("prompt", "completion"))
    data = Dataset.from_list([{"prompt": user_chat(r["prompt"]), "completion": [
        {"role": "assistant", "content": r["completion"][: cfg.completion_chars]}]} for r in rows])
    args = SFTConfig(**training_args_kwargs(cfg), max_length=cfg.max_length, completion_only_loss=True,
                     packing=False, dataset_num_proc=None)
    trainer = guarded(SFTTrainer)(model=policy_model(cfg, base), args=args, train_dataset=data,
                                  processing_class=tok, callbacks=callbacks(cfg, tok, extra_callbacks))
    return trainer, tok, base, path


train, main = entry(Config, build)

if __name__ == "__main__":
    raise SystemExit(main())
'''


@pytest.fixture()
def toy_trainer(tmp_path, monkeypatch):
    """The toy trainer's one file, importable as `trainers.toy` (a temporary folder on trainers.__path__)."""
    folder = tmp_path / "more_trainers"
    folder.mkdir()
    (folder / "toy.py").write_text(TOY, encoding="utf-8")
    monkeypatch.setattr(trainers, "__path__", [*trainers.__path__, str(folder)])
    importlib.invalidate_caches()
    try:
        yield importlib.import_module("trainers.toy")
    finally:
        sys.modules.pop("trainers.toy", None)
        if hasattr(trainers, "toy"):
            delattr(trainers, "toy")


def test_a_toy_trainer_is_validated(toy_trainer):
    cfg = make(toy_trainer.Config, completion_chars=50, max_steps=2)
    assert (cfg.completion_chars, cfg.max_steps, cfg.output_dir) == (50, 2, "runs/toy")
    with pytest.raises(ConfigError, match="completion_chrs"):
        make(toy_trainer.Config, completion_chrs=50)  # an unknown field, refused
    with pytest.raises(ConfigError, match="completion_chars must be >= 1"):
        make(toy_trainer.Config, completion_chars=0)
    with pytest.raises(ConfigError, match="lr_scheduler must be one of"):
        make(toy_trainer.Config, lr_scheduler="cosin")  # the core's fields and checks come with BaseConfig


def test_reproduce_finds_a_toy_trainer_by_module_name(toy_trainer, tmp_path, monkeypatch):
    """What its method row gives reproduce (a plan's `methods: [toy]`): the train command and the field check."""
    monkeypatch.setitem(reproduce.METHODS, "toy", Method("toy", "Toy", trainer="toy").spec())
    plan_file = tmp_path / "plan.yaml"
    plan_file.write_text("models: [tiny]\nmethods: {toy: {train: {completion_chars: 80}}}\n"
                         "tasks: [r3_procgen]\ntrain: {max_steps: 2}\n", encoding="utf-8")
    plan = reproduce.load_plan(str(plan_file))
    assert reproduce.check_train_fields(plan) == []
    assert reproduce.train_command(plan, "toy", tmp_path / "t.yaml", "python")[1:3] == ["-m", "trainers.toy"]
    plan["methods"]["toy"]["train"]["completion_chrs"] = 80
    assert reproduce.check_train_fields(plan) == ["method toy: unknown trainers.toy field(s) ['completion_chrs']"]


@pytest.mark.slow
def test_a_toy_trainer_runs_end_to_end(toy_trainer, tiny, data, tmp_path, monkeypatch, capsys):
    """`python -m trainers.toy --config FILE` (runpy: what -m runs) on the tiny model: run.json and the adapter."""
    import yaml

    out = tmp_path / "run"
    cfg_file = tmp_path / "toy.yaml"
    cfg_file.write_text(yaml.safe_dump({**base_kw(tiny, data, out, max_steps=2, save_steps=2), "completion_chars": 120}))
    monkeypatch.setattr(sys, "argv", ["trainers.toy", "--config", str(cfg_file)])
    sys.modules.pop("trainers.toy")  # -m runs the file as __main__, not the imported module
    with pytest.raises(SystemExit) as done:
        runpy.run_module("trainers.toy", run_name="__main__", alter_sys=True)
    assert done.value.code == 0, capsys.readouterr().err[-2000:]
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "finished" and run["trainer"] == "toy" and run["global_step"] == 2
    assert run["config"]["completion_chars"] == 120
    assert (out / "final" / "adapter_model.safetensors").is_file() and (out / "final" / "adapter_config.json").is_file()
