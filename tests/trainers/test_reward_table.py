"""One reward table (issue 38): a reward added in ONE place - a factory of a TRL reward function and its
entry in verifiers.rewards.REWARDS - reaches GRPO (`rewards: toy` in a config: validated at load, built
from the config by what its factory asks for, scoring completions the way TRL calls it), the plans of
`r3bench reproduce` and the learning study (both pass a GRPO config's `rewards` to `python -m trainers.grpo`),
and an unknown name fails at config load with the valid ones, the new one among them.

The toy reward below is a real one, registered from one file (TOY). Files a newcomer touches to add a
reward: that one (in the repository: verifiers/rewards.py, the factory and its REWARDS line). Nothing else
chooses a reward by name: stepfix trains on the paper's position reward (verifiers.rewards.step_reward of the
verdict) and has no reward field; the CLI, the method table and the plans name none of their own.
Before: grpo.REWARD_FACTORIES was a copy of REWARDS made when trainers.grpo was imported, so a reward
registered later was no GRPO reward ("rewards: unknown ['toy']"); it now reads REWARDS at each look-up.
"""
import dataclasses
import importlib.util

import pytest

from r3bench import procgen
from r3bench.apps import reproduce
from trainers import grpo, stepfix
from trainers.core.config import make, parse
from trainers.errors import ConfigError
from verifiers import rewards

TOY = '''
from verifiers.rewards import REWARDS, RewardFunc


class _Toy(RewardFunc):
    """1.0 for a completion that states its answer with units in a <final_answer> tag, else 0.0."""

    def __init__(self, answer_column, name):
        super().__init__(name)
        self.answer_column = answer_column
        self.columns = (answer_column,)

    def _score(self, text, question, row):
        said = "<final_answer>" in text and str(row[self.answer_column]).split()[0] in text
        return (1.0, "states the answer") if said else (0.0, "no stated answer")


def toy_reward_func(answer_column="answer", name="toy_reward"):
    return _Toy(answer_column, name)


REWARDS["toy"] = toy_reward_func
'''


@pytest.fixture()
def toy_reward(tmp_path):
    """The toy reward registered from its one file (after trainers.grpo was imported); removed afterwards."""
    module = tmp_path / "toy_reward.py"
    module.write_text(TOY, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("toy_reward", module)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        rewards.REWARDS.pop("toy", None)


def _chat(p, text):
    return dict(prompts=[[{"role": "user", "content": p.question}]],
                completions=[[{"role": "assistant", "content": text}]],
                question=[p.question], reference=[p.solution], answer=[str(p.answer)])


def test_a_toy_reward_is_a_grpo_reward(toy_reward):
    assert "toy" in grpo.REWARD_FACTORIES and set(grpo.REWARD_FACTORIES) - set(rewards.REWARDS) == {"pde"}
    cfg = make(grpo.Config, rewards="position,toy", reward_weights="1,0.5")
    assert cfg.reward_names() == ["position", "toy"]
    from collections import Counter, defaultdict

    counts, times = Counter(), defaultdict(float)
    funcs = grpo.reward_funcs(cfg, counts, times)  # what grpo.build hands TRL's GRPOTrainer
    assert [f.__name__ for f in funcs] == ["position_reward", "toy_reward"]
    p = procgen.generate(n=1, seed=0)[0]
    assert funcs[1](**_chat(p, p.solution)) == [1.0]
    assert funcs[1](**_chat(p, "I do not know.")) == [0.0]
    assert funcs[1].fn.last_reasons == ["no stated answer"]


def test_a_toy_reward_reaches_the_plans_and_the_config_file(toy_reward, tmp_path):
    """reproduce and the learning study write the plan's train fields to a YAML and run
    `python -m trainers.grpo --config` on it: the names are GRPO's, read from the same table."""
    y = tmp_path / "grpo.yaml"
    y.write_text("rewards: outcome,toy\ngroup_size: 2\nbatch_size: 4\n", encoding="utf-8")
    assert parse(grpo.Config, ["--config", str(y)]).reward_names() == ["outcome", "toy"]
    plan = {"methods": {"grpo": {**reproduce.METHODS["grpo"], "train": {"rewards": "toy"}}}}
    assert reproduce.check_train_fields(plan) == []


def test_an_unknown_reward_names_the_valid_ones(toy_reward):
    with pytest.raises(ConfigError, match=r"rewards: unknown \['tyo'\]; choose from \[") as e:
        make(grpo.Config, rewards="position,tyo")
    listed = str(e.value).partition("choose from ")[2]
    assert "'pde'" in listed and "'toy'" in listed, listed  # every registered reward, whatever else is there


def test_a_reward_registered_after_grpo_leaves_with_its_entry(toy_reward):
    rewards.REWARDS.pop("toy")
    with pytest.raises(ConfigError, match=r"unknown \['toy'\]"):
        make(grpo.Config, rewards="toy")
    assert "toy" not in grpo.REWARD_FACTORIES


def test_no_other_trainer_chooses_a_reward_by_name():
    """stepfix's reward is the paper's position reward of the verdict (step_reward), not a choice.
    (`reward_permutation`, the learns-at-all control's switch shared by the RL trainers, chooses no reward.)"""
    def chooses(f):
        return "reward" in f.name and f.name != "reward_permutation"
    assert not [f.name for f in dataclasses.fields(stepfix.Config) if chooses(f)]
    assert [f.name for f in dataclasses.fields(grpo.Config) if chooses(f)] == ["rewards", "reward_weights"]
