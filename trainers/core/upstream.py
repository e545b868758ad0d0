"""What r3bench relies on in transformers and TRL beyond their public API, in one place.

pyproject pins both to the range the tests run on; this room holds the rest of the contract, each
piece checked against the installed versions by tests/trainers/test_upstream.py (`problems()` says what moved):

* Private methods that have no public hook, overridden or called here and nowhere else:
  - `GRPOHooks` overrides TRL GRPOTrainer's `_generate` (the seconds of generation, the phase lines
    of a long step), `_calculate_rewards` (a completion without a verdict leaves its group: all its
    rewards NaN; a spent judge budget raised on every rank after TRL's gather of the rewards) and
    `_generate_and_score_completions` (that completion's mask and advantage zeroed) and
    `_generate_single_turn` (the sampling itself: from a merged lower-precision copy of the policy when
    `rollout_dtype` says so, else TRL's own). Each only
    delegates to a public `r3_*` method of trainers.grpo.GRPOPhases.
  - `save_checkpoint` calls Trainer._save_checkpoint (a checkpoint saved outside the training loop, when
    the judge's budget stops a run); `load_checkpoint` calls Trainer._load_from_checkpoint (a run that
    died after its last checkpoint is finished from it without another step).
  - `grpo_train_metrics` reads GRPOTrainer._metrics["train"] (TRL's per-step reward statistics, merged
    into its logs only after a subclass's `log` runs).
  What had a public hook uses it: the run state beside every checkpoint is written from the on_save
  callback (trainers.core.mixins; it overrode Trainer._save_checkpoint).
* Names mirrored from them, so that a misspelt config value fails at config load rather than at the
  first optimizer step: `LR_SCHEDULERS` (transformers' SchedulerType), `GRPO_LOSS_TYPES` and
  `DPO_LOSS_TYPES` (TRL's loss_type values).

Nothing here imports torch, transformers or trl at import time."""
from __future__ import annotations

import dataclasses
import importlib
import inspect
import re

#: the private methods used, by "package.Class.method", with their parameter names in the tested range
PRIVATE_METHODS = {
    "transformers.Trainer._save_checkpoint": ("self", "model", "trial"),
    "transformers.Trainer._load_from_checkpoint": ("self", "resume_from_checkpoint", "model"),
    "trl.GRPOTrainer._generate": ("self", "prompts"),
    "trl.GRPOTrainer._generate_single_turn": ("self", "prompt_ids", "images", "multimodal_fields", "num_generations",
                                              "has_tool_images"),
    "trl.GRPOTrainer._calculate_rewards": ("self", "inputs", "prompts", "completions", "completion_ids_list"),
    "trl.GRPOTrainer._generate_and_score_completions": ("self", "inputs"),
}
#: private attributes read, by "package.Class.attribute", with a line of the class's source that must hold
PRIVATE_ATTRIBUTES = {
    "trl.GRPOTrainer._metrics": 'self._metrics[mode]["frac_reward_zero_std"]',
}

#: transformers' SchedulerType values (`lr_scheduler`)
LR_SCHEDULERS = ("linear", "cosine", "cosine_with_restarts", "polynomial", "constant", "constant_with_warmup",
                 "inverse_sqrt", "reduce_lr_on_plateau", "cosine_with_min_lr", "cosine_warmup_with_min_lr",
                 "warmup_stable_decay", "greedy")
#: TRL GRPOConfig's loss_type values (grpo's `loss_type`)
GRPO_LOSS_TYPES = ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo")
#: TRL DPOConfig's loss_type values (dpo's `loss_type`, one of them)
DPO_LOSS_TYPES = ("sigmoid", "hinge", "ipo", "exo_pair", "nca_pair", "robust", "bco_pair", "sppo_hard", "aot",
                  "aot_unpaired", "apo_zero", "apo_down", "discopop", "sft", "sigmoid_norm")


def save_checkpoint(trainer) -> None:
    """checkpoint-<global_step> of `trainer` now, as its training loop saves one (weights, optimizer,
    scheduler, RNG, trainer state; checkpoint rotation), then the run state of GuardMixin beside it."""
    trainer._save_checkpoint(trainer.model, trial=None)
    if hasattr(trainer, "r3_save_state"):
        trainer.r3_save_state(trainer.args.output_dir)


def load_checkpoint(trainer, ckpt: str) -> None:
    """What train(resume_from_checkpoint=ckpt) loads first: the adapter or model weights of `ckpt`."""
    trainer._load_from_checkpoint(ckpt)


def grpo_train_metrics(trainer) -> dict:
    """TRL GRPOTrainer's training metrics of the steps not yet logged (name -> list of values)."""
    return getattr(trainer, "_metrics", {}).get("train", {})


class GRPOHooks:
    """TRL GRPOTrainer's private methods, overridden here only; each delegates to a public method of the
    class that mixes this in (trainers.grpo.GRPOPhases): r3_generate, r3_rewards, r3_before_scoring,
    r3_after_scoring. Put it before GRPOTrainer in the bases."""

    def _generate(self, prompts):
        return self.r3_generate(prompts, super()._generate)

    def _generate_single_turn(self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False):
        return self.r3_generate_single_turn(super()._generate_single_turn, prompt_ids, images, multimodal_fields,
                                            num_generations, has_tool_images)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        return self.r3_rewards(super()._calculate_rewards(inputs, prompts, completions, completion_ids_list), prompts)

    def _generate_and_score_completions(self, inputs):
        self.r3_before_scoring()
        return self.r3_after_scoring(super()._generate_and_score_completions(inputs))


def _owner(dotted: str):
    """(class, member name) of "package.Class.member"; the class imported from the package's top."""
    pkg, cls, member = dotted.split(".")
    return getattr(importlib.import_module(pkg), cls), member


def problems() -> list[str]:
    """What no longer holds in the installed transformers / TRL ([] = all of it), one line each, naming
    the method or name and what this module expects: a private method gone or with other parameters, a
    private attribute no longer set, a mirrored name list that differs."""
    out = []
    for dotted, params in PRIVATE_METHODS.items():
        cls, member = _owner(dotted)
        fn = getattr(cls, member, None)
        if fn is None:
            out.append(f"{dotted} is gone: trainers/core/upstream.py overrides or calls it; find its replacement")
            continue
        got = tuple(inspect.signature(fn).parameters)
        if got != params:
            out.append(f"{dotted} takes {got}, trainers/core/upstream.py was written for {params}")
    for dotted, line in PRIVATE_ATTRIBUTES.items():
        cls, member = _owner(dotted)
        if line not in inspect.getsource(cls):
            out.append(f"{dotted}: {cls.__name__}'s source no longer holds {line!r} (read by grpo_train_metrics)")
    from transformers import SchedulerType
    from trl import DPOConfig, GRPOConfig

    got = tuple(s.value for s in SchedulerType)
    if got != LR_SCHEDULERS:
        out.append(f"transformers' SchedulerType is {got}, LR_SCHEDULERS is {LR_SCHEDULERS}")
    for cls, names in ((GRPOConfig, GRPO_LOSS_TYPES), (DPOConfig, DPO_LOSS_TYPES)):
        text = next(f for f in dataclasses.fields(cls) if f.name == "loss_type").metadata["help"]
        said = re.search(r"values are:?(.*?)\.\s", text)
        listed = set(re.findall(r"'([a-z_]+)'", said.group(1))) if said else set()
        if listed != set(names):
            out.append(f"TRL {cls.__name__}.loss_type lists {sorted(listed)}, trainers/core/upstream.py mirrors "
                       f"{sorted(names)}")
    return out
