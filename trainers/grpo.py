"""GRPO with r3bench rewards: `python -m trainers.grpo --config FILE`.

TRL's GRPOTrainer on the seven-tag prompts of the procedural bank (sft.jsonl train split: prompt,
question, reference solution, answer). `rewards` names one or more of:

  outcome    1/0 from the unit-aware checker against `answer`
  rlvp       RLVP's continuous exp(-relative error / T) on the final quantity (T = rlvp_T)
  position   the paper's step reward e/(n+1) (1.0 when no step is wrong) from the step verifier
             (`verifier` backend) against the reference solution
  pspo_wrs   PSPO-WRS: Weibull-shaped process reward from per-step scores of a PSV model
             (`psv_model`, trained by `python -m trainers.psv`)
  pspo_piecewise  the same scores with the piecewise shaping
  (every name of verifiers.rewards.REWARDS is a GRPO reward: REWARD_FACTORIES reads it at each look-up)
  pde        RLVP code-as-action: the completion's ```python``` solver runs in the sandbox on the
             prompt's hidden PDE instances; reward V * exp(-L_traj/0.05) * exp(-L_phys/2)
             (r3bench.pde.verify). With this reward the prompts are the r3_pde training prompts of
             the seen families: `data` = an export of `python -m r3bench.pde export` (one row per
             prompt is kept), or, without `data`, `pde_prompts` generated prompts per family.

With `verifier: judge` the judge_* fields set the judge's endpoint, concurrency, prices and budget
(trainers.judging); the position reward verifies a batch's completions concurrently, and a spent
budget stops the run (run.json status judge_budget_spent, exit 3).

`group_size` is TRL's num_generations, `temperature` and `max_completion_length` the sampling
settings; `max_completion_length` 0 (the default) derives the cap from the data (the longest reference
solution of the pool in the model's tokens + `gen_margin_tokens`; trainers.rl_sampling, shared with
stepfix: truncated completions per step in metrics.jsonl and run.json, the start's format compliance
before the first step, `start_check_n`). The learning rate is constant after the warm-up by default.
Every completion goes to OUTPUT_DIR/grpo_samples.jsonl (`log_samples`). `beta` is the KL coefficient, TRL's GRPO beta: the weight of the per-token KL estimate
(k3) to the reference in the loss; 0 loads no reference model (this field was called `kl_coef`; the
old name still loads, with a warning). The KL reference is the model the policy starts
from, as for stepfix and DPO: with `init_adapter` (the SFT adapter) a frozen copy of that adapter
(the peft adapter "ref", which TRL >= 1.x creates and `build` adds itself when TRL did not), without
it the base model (the fresh LoRA disabled). `use_vllm` and the vllm_* fields are passed to TRL
(its colocate/server modes) unchanged. `batch_size` counts completions per device and
must be a multiple of `group_size`.

A reward function that fails on a completion for a reason outside the completion (verifier error,
scorer error, no verdict) returns None for it, and the completion is removed from its group: its
rewards are all NaN (out of the group's mean and std, whatever the other reward functions said), its
completion mask is zeroed (no loss, no KL, no tokens counted) and its advantage is 0; the counts are
logged as `reward_failures/<name>` and `no_verdict_removed` (issue 32: a None set to the group mean
beat every honest answer below the mean). Completions that are
simply wrong or malformed get the reward's 0 with its reason. Seconds in generation and in reward
computation (verification) per step are logged as `time_generate_s`, `time_verify_s`, and the
rest of the step (log-prob forwards, loss, backward) as `time_rest_s` (trainers.core.mixins.TimingMixin, shared
with stepfix), with their shares `share_*`.

What the long steps cost on a CPU: Config.costs, which `--help` prints.
"""
from __future__ import annotations

import inspect
import json
import time
from collections import Counter, defaultdict
from collections.abc import MutableMapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from r3bench.pde import families, tasks
from r3bench.pde.tasks import PDEReward
from trainers import distributed, generation, judging
from trainers import rl_sampling as rl
from trainers.core import upstream
from trainers.core.config import BaseConfig
from trainers.core.data import train_rows, user_chat
from trainers.core.entry import entry
from trainers.core.evaluation import callbacks
from trainers.core.mixins import PhaseProgress, TimingMixin, guarded, warn_nothing_to_learn
from trainers.core.model import load_tokenizer, model_path, policy_model, training_args_kwargs, training_placement
from trainers.rl_sampling import RLFields
from trainers.errors import ConfigError, option
from trainers.generation import VllmFields
from trainers.judging import JudgeFields
from verifiers.judge import JudgeBudgetExceeded
from verifiers.psv import PSV
from verifiers.rewards import REWARDS
from verifiers.steps import BACKENDS, verify

# The reward functions are verifiers.rewards.REWARDS (one registry): every name in it is a GRPO reward,
# built from the config by what its factory asks for (the parameters below); the PDE track's reward,
# which lives with its tasks, is the one more (tests/trainers/test_trainers_layout.py checks both directions;
# tests/trainers/test_reward_table.py adds one after this import and follows it here).


def _step_verifier(cfg):
    config = judging.verifier_config(cfg)  # the backend's config from the run's config, built once

    def verifier(q, text, reference, _b=cfg.verifier):
        # the StepVerdict itself: step_reward pays e/(7+1), the minimum for a FORMAT verdict, and
        # None (skipped, counted) for valid=False
        return verify(q, text, reference, backend=_b, config=config)

    return verifier


def _step_scorer(cfg):
    """The PSV's step scores for the PSPO rewards, on the policy's device and in its training dtype."""
    device, dtype = training_placement(cfg)
    return PSV(model_path(cfg.psv_model), device=device, dtype=dtype).step_scores


#: what a GRPO config passes to a REWARDS factory's required parameter of that name, with the columns
#: that go with it: a step verifier scores a completion against the reference solution, a step scorer
#: (a PSV model) reads the question, an answer reward compares with the `answer` column
NEEDS = {
    "verifier": lambda cfg: {"verifier": _step_verifier(cfg), "answer_column": "reference",
                             "question_column": "question"},
    "step_scorer": lambda cfg: {"step_scorer": _step_scorer(cfg), "question_column": "question"},
}


def reward_needs(name: str) -> list[str]:
    """The required parameters of REWARDS[name] (those without a default), in order."""
    return [p.name for p in inspect.signature(REWARDS[name]).parameters.values()
            if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def build_reward(name: str, cfg):
    """REWARDS[name] built from a GRPO config: its required parameters from NEEDS, `answer_column` the
    `answer` column otherwise, `T` the config's rlvp_T; a reward that waits on a verifier (the judge)
    scores a batch's completions on judging.workers(cfg) threads."""
    params = inspect.signature(REWARDS[name]).parameters
    kw = {}
    for need in reward_needs(name):
        kw.update(NEEDS[need](cfg))
    if "answer_column" in params and "answer_column" not in kw:
        kw["answer_column"] = "answer"
    if "T" in params:
        kw["T"] = cfg.rlvp_T
    fn = REWARDS[name](**kw)
    if "verifier" in kw:
        fn.workers = judging.workers(cfg)  # the judge: a batch's completions verified concurrently
    return fn


def _pde(cfg):
    return PDEReward()


class RewardFactories(MutableMapping):
    """name -> factory(cfg) of a verifiers.rewards.RewardFunc: every name of verifiers.rewards.REWARDS, read at
    each look-up (a reward registered there after this module's import is a GRPO reward too: a copy made at
    import missed it), and the few set here (the PDE track's reward, which lives with its tasks; a test's double)."""

    def __init__(self, own: dict):
        self.own = dict(own)

    def __getitem__(self, name):
        if name in self.own:
            return self.own[name]
        if name in REWARDS:
            return partial(build_reward, name)
        raise KeyError(name)

    def __setitem__(self, name, factory):
        if isinstance(factory, partial) and factory.func is build_reward and factory.args == (name,):
            self.own.pop(name, None)  # the registry's own (a test putting back what it read)
            return
        self.own[name] = factory

    def __delitem__(self, name):
        del self.own[name]

    def __iter__(self):
        return iter({**dict.fromkeys(REWARDS), **self.own})

    def __len__(self):
        return len({**dict.fromkeys(REWARDS), **self.own})


REWARD_FACTORIES = RewardFactories({"pde": _pde})


@dataclass
class Config(BaseConfig, VllmFields, JudgeFields, RLFields):
    output_dir: str = option("runs/grpo", "where checkpoints, logs, the final adapter and run.json go")
    learning_rate: float = option(1e-5, "peak learning rate")
    lr_scheduler: str = option("constant_with_warmup", "HF scheduler name; RL default constant after the warm-up "
                               "(a short run's linear decay spent its last steps near 0)")
    batch_size: int = option(4, "completions per device per micro-batch (a multiple of group_size)")
    gradient_checkpointing: bool = option(True, "recompute activations in the backward pass (long revision contexts: "
                                      "without it attention activations of x, y1, p1, y2 outgrow CPU memory)")
    rewards: str = option("position", "comma-separated rewards: names of verifiers.rewards.REWARDS, or pde "
                          f"(shipped: {', '.join(REWARD_FACTORIES)})")
    reward_weights: str = option("", "comma-separated weights, one per reward (default: all 1)")
    group_size: int = option(4, "completions per prompt (TRL num_generations)")
    beta: float = option(0.04, "KL coefficient (TRL's GRPO beta: weight of the k3 KL to the reference per token); "
                           "0 loads no reference model; old name: kl_coef")
    temperature: float = option(0.9, "sampling temperature")
    max_completion_length: int = option(0, "maximum completion tokens; 0 = derived from the data: the longest reference "
                                        "solution of the training pool in the model's tokens + gen_margin_tokens "
                                        "(512 for the pde reward, whose prompts have no reference)")
    verifier: str = option("symbolic", f"step verifier backend of the position reward: {' | '.join(BACKENDS)}")
    psv_model: str = option("", "PSV model folder for pspo_wrs and pspo_piecewise, and of `verifier: psv` (empty: "
                            "$R3BENCH_PSV_MODEL there; trainers.psv writes OUTPUT_DIR/psv_model)")
    rlvp_T: float = option(0.05, "temperature T of the RLVP reward")
    loss_type: str = option("grpo", "TRL GRPO loss_type: grpo, dapo, dr_grpo, bnpo, ...")
    pde_prompts: int = option(16, "pde reward without data: generated training prompts per seen PDE family")
    log_samples: bool = option(True, "write every completion (prompt, completion, rewards and reasons, advantage, "
                               "truncated) to OUTPUT_DIR/grpo_samples.jsonl")
    steps_per_generation: int = option(0, "TRL's steps_per_generation: micro-batches whose completions are sampled "
                                       "and scored in one generation (0: TRL's default, grad_accum - all of an "
                                       "optimizer step's); must divide grad_accum")

    renamed = {"kl_coef": "beta"}
    costs = ("Cost on a 2-core CPU, SmolLM2-135M: with AMX-BF16 (bf16 auto) ~110-126 s per step of the example "
             "config (4 prompts x 2 completions of up to 400 tokens; generation ~40%), 1.75x faster than fp32 "
             "(~195-222 s; benchmarks/results/step_ab); the defaults (4 completions of up to 512 tokens per step, "
             "100 steps) take hours. Generation dominates: a GPU (and use_vllm) is the way out.")

    def validate(self):
        self.check_vllm()
        self.check_judge()
        self.check_rl()
        if self.max_completion_length < 0:
            raise ConfigError(f"max_completion_length must be >= 0 (0: derived from the data), got "
                              f"{self.max_completion_length}")
        names = self.reward_names()
        bad = [n for n in names if n not in REWARD_FACTORIES]
        if bad or not names:
            raise ConfigError(f"rewards: unknown {bad or '(none given)'}; choose from {sorted(REWARD_FACTORIES)}")
        for name in names:
            unknown = [n for n in (reward_needs(name) if name in REWARDS else []) if n not in NEEDS]
            if unknown:
                raise ConfigError(f"the {name} reward needs {unknown}, which a GRPO config does not give (trainers/grpo.py "
                                  f"NEEDS gives {sorted(NEEDS)})")
            if name in REWARDS and "step_scorer" in reward_needs(name) and not self.psv_model:
                raise ConfigError(f"the {name} reward needs psv_model (train one with python -m trainers.psv)")
        judging.check_verifier(self)  # a backend of verifiers.steps.BACKENDS, lacking nothing
        if self.loss_type not in upstream.GRPO_LOSS_TYPES:
            raise ConfigError(f"loss_type must be one of TRL's {list(upstream.GRPO_LOSS_TYPES)}, got {self.loss_type!r}")
        if self.group_size < 2:
            raise ConfigError(f"group_size must be >= 2 (GRPO normalises within a group), got {self.group_size}")
        if self.batch_size % self.group_size:
            raise ConfigError(f"batch_size ({self.batch_size}) must be a multiple of group_size ({self.group_size}): "
                              "it counts completions, group_size of them per prompt")
        k = self.steps_per_generation
        if k < 0 or (k and self.grad_accum % k):
            raise ConfigError(f"steps_per_generation ({k}) must be 0 (TRL's default: grad_accum) or divide grad_accum "
                              f"({self.grad_accum}): TRL keeps a generation's buffer in memory "
                              "only, so one spanning an optimizer step would be lost at a checkpoint and sampled "
                              "again by the resumed policy")
        if self.reward_weights and len(self.reward_weights.split(",")) != len(names):
            raise ConfigError(f"reward_weights has {len(self.reward_weights.split(','))} values for {len(names)} rewards")

    def reward_names(self) -> list[str]:
        return [n.strip() for n in self.rewards.split(",") if n.strip()]


class CountingReward:
    """Wraps an r3bench RewardFunc: failures not caused by the completion (a RewardResult with ok
    False in the function's `last_results`) become None (skipped by TRL) and are counted; time spent
    is added up. A reward function without `last_results` reports no failures."""

    def __init__(self, fn, counts: Counter, times: defaultdict):
        self.fn, self.counts, self.times = fn, counts, times
        self.__name__ = fn.__name__

    def __call__(self, prompts=None, completions=None, **kw):
        t0 = time.perf_counter()
        try:
            out = self.fn(prompts=prompts, completions=completions, **kw)
        except JudgeBudgetExceeded as e:
            # the judge's budget is spent: kept, and raised on every rank after TRL has gathered the
            # rewards (GRPOPhases.r3_rewards), so that no rank is left in that gather
            self.stop = e
            self.last_none = [True] * len(completions)
            self.times["verify"] += time.perf_counter() - t0
            return [None] * len(completions)
        results = getattr(self.fn, "last_results", None)
        if results is None:
            results = [None] * len(out)
        elif len(results) != len(out):
            raise RuntimeError(f"{self.__name__}: {len(out)} rewards but {len(results)} results")
        res = []
        for r, rr in zip(out, results):
            if rr is not None and not rr.ok:
                self.counts[f"reward_failures/{self.__name__}"] += 1
                res.append(None)
            else:
                res.append(r)
        self.last_none = [r is None for r in res]  # read by GRPOPhases: these completions leave their group
        self.times["verify"] += time.perf_counter() - t0
        return res


def no_verdict_rows(reward_funcs, n: int) -> list[int]:
    """The completions (local indices) to which some reward function gave no reward (None) in its last call."""
    flags = [getattr(f, "last_none", None) for f in reward_funcs]
    return [i for i in range(n) if any(fl is not None and len(fl) == n and fl[i] for fl in flags)]


def reward_funcs(cfg, counts, times) -> list:
    return [CountingReward(REWARD_FACTORIES[name](cfg), counts, times) for name in cfg.reward_names()]


def dataset(cfg, log=print):
    from datasets import Dataset

    if "pde" in cfg.reward_names():
        return _pde_dataset(cfg, log)
    rows, path = train_rows(cfg, "sft.jsonl", ("prompt", "completion", "answer"), log=log)
    return Dataset.from_list([{"prompt": user_chat(r["prompt"]), "question": r.get("question") or r["prompt"],
                               "reference": r["completion"], "answer": str(r["answer"])} for r in rows]), path


def _pde_dataset(cfg, log=print):
    """r3_pde training prompts (seen families only) with the columns the pde reward reads."""
    from datasets import Dataset

    if cfg.data:
        rows, path = train_rows(cfg, "sft.jsonl", ("prompt", "family", "seed"), log=log)
        rows = list({(r["family"], r["seed"]): r for r in rows}.values())  # the export repeats a prompt per scheme
    else:
        rows, path = tasks.grpo_rows(cfg.pde_prompts), None
        if cfg.max_train_samples:
            rows = rows[: cfg.max_train_samples]
    held = sorted({r["family"] for r in rows if r["family"] not in families.SEEN})
    if held:
        raise ConfigError(f"pde training rows of held-out or unknown families {held}: only {list(families.SEEN)}")
    return Dataset.from_list([{"prompt": user_chat(r["prompt"]), "question": r["prompt"], "reference": "",
                               "answer": "", "family": r["family"], "seed": int(r["seed"]),
                               "n_instances": int(r.get("n_instances") or tasks.N_INSTANCES)} for r in rows]), path


class GRPOPhases(TimingMixin, upstream.GRPOHooks):
    """The GRPO Trainer's additions to TRL's GRPOTrainer (bases: `guarded(GRPOTrainer, GRPOPhases)`):
    seconds in generation, in the rewards (CountingReward adds to r3_times["verify"]) and the rest of
    each step, and the reward-failure counts, with every training log. TRL offers no public hook around
    generation and reward gathering: upstream.GRPOHooks overrides those private methods and calls the
    r3_* methods here."""

    r3_phases = ("generate", "verify", "rest")

    def __init__(self, *a, r3_counts: Counter | None = None, r3_cfg=None, r3_gen=(None, None), **kw):
        self.r3_counts = r3_counts if r3_counts is not None else Counter()
        self.r3_gen_cap, self.r3_start_check = r3_gen  # run.json: trainers.rl_sampling
        self.r3_truncation = rl.TruncationCount()
        self.r3_stops = None
        self.r3_cfg = r3_cfg  # the run's Config: its judge's totals go into the training logs
        self.r3_nothing_to_learn = 0  # steps where every group earned one reward (run.json)
        self.r3_progress = PhaseProgress()
        self.r3_verdicts = rl.VerdictTally()  # per step-level reward: verdict shares and reward per class
        self.r3_rollout = None  # trainers.generation.RolloutCopy with rollout_dtype set, made on first use
        super().__init__(*a, **kw)

    def r3_generate(self, prompts, generate):
        """TRL's generation of `prompts` (`generate`), timed, with a progress line per phase."""
        self.r3_progress.begin_step(self.state.global_step + 1)
        self.r3_progress.phase(f"generating {len(prompts)} completions")
        with self.timed("generate"):
            out = generate(prompts)
        self.r3_progress.phase("rewards (verification), then the update")
        self.r3_progress.end_step()
        return out

    def r3_generate_single_turn(self, trl_generate, prompt_ids, images, multimodal_fields, num_generations,
                                has_tool_images):
        """TRL's sampling of `prompt_ids` (token ids), or with `rollout_dtype` set, the same prompts sampled
        from a merged copy of the policy in that dtype (trainers.generation.RolloutCopy) with TRL's sampling
        settings (temperature, top_p, top_k, the completion cap); returns TRL's (completion ids, None)."""
        cfg = self.r3_cfg
        if cfg is None or generation.rollout_dtype(cfg) == "policy" or self.use_vllm or images \
                or multimodal_fields:
            return trl_generate(prompt_ids, images, multimodal_fields, num_generations, has_tool_images)
        if distributed.sharded(self.accelerator):
            raise ConfigError("rollout_dtype needs the whole policy in each process; under FSDP / ZeRO-3 sample "
                              "from the policy (rollout_dtype: policy) or with vLLM")
        if self.r3_rollout is None:
            self.r3_rollout = generation.make(cfg)
        gc = self.generation_config
        sp = generation.Sampling(max_new_tokens=self.max_completion_length, temperature=gc.temperature,
                                 top_p=gc.top_p if gc.top_p is not None else 1.0,
                                 top_k=gc.top_k if gc.top_k is not None else 0, policy_step=self.state.global_step)
        model = self.accelerator.unwrap_model(self.model)
        return self.r3_rollout.generate_ids(model, self.processing_class, [list(p) for p in prompt_ids], sp), None

    def r3_rewards(self, out, prompts):
        """TRL's gathered rewards `out` (completions x reward functions, every rank's rows)."""
        # a completion without a verdict is removed from its group, not paid the group mean: all its rewards NaN
        # (TRL then leaves it out of the mean and std and gives it advantage 0) and its mask zeroed below
        # a judge budget spent on any rank stops every rank here, before the loss (trainers.distributed)
        stops = [getattr(f, "__dict__", {}).pop("stop", None) for f in self.reward_funcs]
        distributed.raise_together(next((e for e in stops if e is not None), None))
        self.r3_removed = no_verdict_rows(self.reward_funcs, len(prompts))
        first = self.accelerator.process_index * len(prompts)
        self.r3_sample_rewards = out[first:first + len(prompts)].detach().float().cpu().tolist()  # this rank's rows
        zeroed = []
        if self.r3_cfg is not None and self.r3_cfg.reward_permutation:
            zeroed = self.r3_permute(out, len(prompts))
        self.r3_sample_used = out[first:first + len(prompts)].detach().float().cpu().tolist()
        self.r3_sample_reasons = [list(getattr(getattr(f, "fn", None), "last_reasons", None) or []) for f in self.reward_funcs]
        # the verifier's verdict class of each completion under each step-level reward (None: none), and the
        # reward it earned (the verifier's, also in the control): the per-class log columns and the samples
        self.r3_sample_verdicts = []
        for f in self.reward_funcs:
            results = list(getattr(getattr(f, "fn", None), "last_results", None) or [])
            labels = [getattr(r, "verdict", None) for r in results]
            self.r3_sample_verdicts.append(labels)
            for r, label in zip(results, labels):
                self.r3_verdicts.add(f.__name__, label, r.value if r.ok else None)
        if self.r3_removed:
            first = self.accelerator.process_index * len(prompts)
            out[[first + i for i in self.r3_removed], :] = float("nan")
            self.r3_counts["no_verdict_removed"] += len(self.r3_removed)
        self.r3_removed = sorted(set(self.r3_removed) | set(zeroed))  # the control's lone row: no loss either
        return out

    def r3_permute(self, out, n_local: int) -> list[int]:
        """The learns-at-all control (`reward_permutation`): the rows of the step's gathered rewards with a
        verdict (no NaN: a row with any NaN had some reward function without a verdict) deranged among
        themselves (no row keeps its own reward), across groups and ranks. `out` is the same on every rank
        (TRL gathered it) and the derangement depends on the seed and step only, so every rank shuffles
        alike. A step with a single such row has no derangement: that row gets zero weight (NaN, its mask
        zeroed: the returned local indices; metrics.jsonl reward_permutation_skipped)."""
        import torch

        rows = [i for i in range(out.shape[0]) if not bool(torch.isnan(out[i]).any())]
        if len(rows) == 1:
            out[rows[0], :] = float("nan")
            self.r3_counts[rl.PERMUTATION_SKIPPED] += 1 if self.accelerator.is_main_process else 0
            first = self.accelerator.process_index * n_local
            return [rows[0] - first] if first <= rows[0] < first + n_local else []
        if not rows:
            return []
        order = rl.permutation(len(rows), self.r3_cfg.seed, self.state.global_step + 1)
        idx = torch.tensor(rows, device=out.device)
        out[idx] = out[idx[torch.tensor(order, device=out.device)]]
        self.r3_counts["reward_permuted"] += len(rows) if self.accelerator.is_main_process else 0
        return []

    def r3_before_scoring(self):
        self.r3_removed = []

    def r3_after_scoring(self, out):
        """TRL's scored batch `out`: the completions removed from their groups get no loss; this rank's
        completions that hit the cap (no end-of-turn id) counted."""
        if self.r3_stops is None:
            self.r3_stops = generation.stop_token_ids(self.processing_class, self.accelerator.unwrap_model(self.model))
        ids, mask = out["completion_ids"], out["completion_mask"]
        rows = [row[m.bool()].tolist() for row, m in zip(ids, mask)]
        cut = [rl.truncated(r, self.r3_stops) for r in rows]
        self.r3_counts["generated"] += len(rows)
        self.r3_counts["truncated"] += sum(cut)
        for i in self.r3_removed:
            out["completion_mask"][i] = 0
            out["advantages"][i] = 0.0
        self.r3_write_samples(out, rows, cut)
        return out

    def r3_write_samples(self, out, rows, cut) -> None:
        """Every completion of this generation to OUTPUT_DIR/grpo_samples.jsonl (log_samples): the prompt's
        last message, the completion, each reward with its reason, the advantage, whether it hit the cap
        and whether it left its group (no verdict). Every rank's records are gathered (this runs on every
        rank at the same point) and rank 0 writes them, in rank order."""
        if self.r3_cfg is None or not self.r3_cfg.log_samples:
            return
        tok, names = self.processing_class, [f.__name__ for f in self.reward_funcs]
        prompts = [tok.decode(p[m.bool()].tolist(), skip_special_tokens=True) for p, m in
                   zip(out["prompt_ids"], out["prompt_mask"])]
        rewards = getattr(self, "r3_sample_rewards", None) or [[None] * len(names)] * len(rows)
        used = getattr(self, "r3_sample_used", None) or rewards
        reasons = getattr(self, "r3_sample_reasons", None) or [[] for _ in names]
        verdicts = getattr(self, "r3_sample_verdicts", None) or [[] for _ in names]
        step, rank = self.state.global_step + 1, distributed.rank()
        recs = []
        for i, ids in enumerate(rows):
            r = {n: (None if v != v else v) for n, v in zip(names, rewards[i])}  # NaN: no reward (left its group)
            ru = {n: (None if v != v else v) for n, v in zip(names, used[i])}  # what the loss used (the control: permuted)
            why = {n: rs[i] for n, rs in zip(names, reasons) if i < len(rs)}
            cls = {n: vs[i] for n, vs in zip(names, verdicts) if i < len(vs) and vs[i] is not None}
            recs.append({"step": step, "rank": rank, "index": i, "group": i // self.num_generations,
                         "prompt": prompts[i][-2000:], "completion": tok.decode(ids, skip_special_tokens=True),
                         "tokens": len(ids), "truncated": bool(cut[i]), "rewards": r, "reasons": why,
                         **({"verdicts": cls} if cls else {}),
                         **({"rewards_used": ru} if ru != r else {}),
                         "advantage": float(out["advantages"][i]), "removed": i in self.r3_removed})
        every = distributed.gather_objects(recs)
        if self.is_world_process_zero():
            with open(Path(self.args.output_dir) / "grpo_samples.jsonl", "a", encoding="utf-8") as fh:
                for rank_recs in every:
                    for rec in rank_recs:
                        fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")

    def r3_run_record(self) -> dict:
        """What run.json says of the run's sampling (rl_sampling.run_record)."""
        return rl.run_record(self.r3_truncation, self.r3_gen_cap, self.r3_start_check)

    def r3_state(self) -> dict:
        return {**super().r3_state(), "truncation_total": list(self.r3_truncation.total)}

    def r3_state_gathered(self) -> dict:
        """run.json's truncation totals as of this checkpoint: the logged totals plus every rank's
        completions since the last training log (logging_steps > 1), so a run resumed here counts them."""
        every = distributed.gather_objects((self.r3_counts.get("generated", 0), self.r3_counts.get("truncated", 0)))
        return {"truncation_total": [self.r3_truncation.total[0] + sum(g for g, _ in every),
                                     self.r3_truncation.total[1] + sum(t for _, t in every)]}

    def r3_load_state(self, state: dict) -> None:
        super().r3_load_state(state)
        self.r3_truncation.total = list(state.get("truncation_total") or [0, 0])

    def r3_take_truncation(self) -> tuple[int, int]:
        """The completions since the last call and those that hit the cap, over every rank (log runs on
        every rank), taken off the counts and added to run.json's totals."""
        every = distributed.gather_objects((self.r3_counts.pop("generated", 0), self.r3_counts.pop("truncated", 0)))
        gen, cut = sum(g for g, _ in every), sum(t for _, t in every)
        self.r3_truncation.add(gen, cut)
        return gen, cut

    def log(self, logs, start_time=None):
        if "train_runtime" in logs and "loss" not in logs:
            # the end-of-train summary (every rank logs it): the steps after the last training log into
            # run.json's totals (logging_steps > 1)
            self.r3_take_truncation()
        if "loss" in logs:
            gen, cut = self.r3_take_truncation()
            logs.update(rl.step_logs(gen, cut, self.r3_cfg.truncation_warn if self.r3_cfg else 1.0,
                                     self.state.global_step, self.is_world_process_zero()))
            logs.update(self.r3_counts)
            self.r3_counts.clear()
            logs.update(judging.step_logs(self.r3_cfg))  # verifier judge: dropped, requests, tokens, cost so far
            logs.update(self.r3_verdicts.logs())  # every rank's (gathered): verdicts/<reward>/<class>, reward_by_class/
            # TRL's per-step share of groups whose rewards all agree (merged into the logs by its own
            # log, below): 1.0 = every advantage 0, the loss ~0
            m = upstream.grpo_train_metrics(self)
            same, rew = m.get("frac_reward_zero_std") or [], m.get("reward") or []
            logs["nothing_to_learn"] = int(bool(same) and min(same) >= 1.0)
            if logs["nothing_to_learn"]:
                self.r3_nothing_to_learn += 1
                if self.is_world_process_zero():
                    mean = f" (mean {sum(rew) / len(rew):.3f})" if rew else ""
                    warn_nothing_to_learn(self.state.global_step,
                                          f"every sample of each group earned the same reward{mean}")
        super().log(logs, start_time)


def grpo_args(cfg, weights=None, cap: int | None = None):
    """TRL's GRPOConfig of cfg; `cap`: the completion cap (trainers.rl_sampling.generation_cap), else the config's."""
    from trl import GRPOConfig

    cap = cap or cfg.max_completion_length or rl.FALLBACK_CAP
    return GRPOConfig(**training_args_kwargs(cfg), num_generations=cfg.group_size, beta=cfg.beta,
                      temperature=cfg.temperature, max_completion_length=cap,
                      reward_weights=weights, loss_type=cfg.loss_type,
                      steps_per_generation=cfg.steps_per_generation or None,
                      cache_implementation=generation.cache_implementation(cfg), **cfg.trl_vllm_kwargs())


def build(cfg, extra_callbacks=()):
    from trl import GRPOTrainer

    base = model_path(cfg.model)
    tok = load_tokenizer(base, padding_side="left")
    data, path = dataset(cfg)
    judging.install(cfg)  # verifier judge: the judge of the config's judge_* fields, before the rewards use it
    counts, times = Counter(), defaultdict(float)
    weights = [float(w) for w in cfg.reward_weights.split(",")] if cfg.reward_weights else None
    cap = rl.generation_cap(cfg, "max_completion_length", tok, data["reference"])
    args = grpo_args(cfg, weights, cap["tokens"])
    policy = policy_model(cfg, base)
    # the start's format compliance: not for the pde reward (its completions are code, not seven tags)
    start = None if "pde" in cfg.reward_names() else rl.check_start(cfg, policy, tok, list(data["prompt"]),
                                                                     cap["tokens"])
    trainer = guarded(GRPOTrainer, GRPOPhases)(
        model=policy, reward_funcs=reward_funcs(cfg, counts, times), args=args,
        train_dataset=data, processing_class=tok, callbacks=callbacks(cfg, tok, extra_callbacks),
        r3_times=times, r3_counts=counts, r3_cfg=cfg, r3_gen=(cap, start))
    if cfg.init_adapter and cfg.beta > 0 and "ref" not in trainer.model.peft_config:
        # TRL versions that do not copy a pretrained adapter would take the base model as reference
        trainer.model.load_adapter(cfg.init_adapter, adapter_name="ref", is_trainable=False)
    return trainer, tok, base, path


train, main = entry(Config, build)

if __name__ == "__main__":
    raise SystemExit(main())
