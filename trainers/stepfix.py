"""The paper's step-level reward PG method: `python -m trainers.stepfix --config FILE`.

For each problem x of a batch:

  1. sample y1 ~ pi(. | x) (the seven-tag prompt, chat template, sampling at `temperature`)
  2. verify y1 (`verifier`: symbolic | judge | psv) -> first wrong step e1, class, explanation, n1 steps
  3. r1 = 1.0 if e1 == 0 else e1 / (7 + 1)           (verifiers.rewards.step_reward: n is the
     format's seven steps; a format failure gets the minimum 0; no usable verdict = skipped, counted)
  4. skip the problem when r1 > tau (default 0.9: only fully right solutions are skipped)
  5. p1 = feedback for the error class (verifiers.feedback: MC re-read prompt, CM retrieved
     formulas, CE sandbox-recomputed value), plus the revision instruction
  6. sample y2 ~ pi(. | x, y1, p1)  (chat: user x, assistant y1, user p1)
  7. verify y2 -> r2
  8. loss = -[(log pi(y2 | x, y1, p1) - log pi(y1 | x).detach()) * (r2 - b) - beta * KL(pi(. | x) || pi_ref(. | x))]
     with b = 0: the paper's exact loss (`baseline: none`, the default)

averaged over the problems of the micro-batch that were not skipped (an all-skipped micro-batch
contributes a zero loss that still touches every trainable parameter, so DDP stays in step).
The gradient flows through y2's log-probability and the KL only. pi_ref is the frozen SFT model
(`init_adapter` merged into a copy of the base); the policy is initialised from the same adapter
and trains it. Without `init_adapter`, a fresh LoRA is trained and pi_ref is the base (adapter
disabled).

Choices the paper leaves open, and the option that switches each:

* `kl_estimator` - how KL(pi(.|x) || pi_ref(.|x)) is estimated. The response distribution's KL is
  the expectation over y ~ pi(.|x) of sum_t KL_t; r3bench evaluates it on the sampled y1 (no extra
  sample): `full` (default) sums the exact full-vocabulary KL of the next-token distributions at
  each position of y1; `k1` sums log pi - log pi_ref of y1's tokens (unbiased, high variance,
  can be negative); `k3` sums exp(d) - d - 1 with d = log pi_ref - log pi (Schulman's
  non-negative estimator, as in TRL's GRPO); `none` drops the term. y1 is sampled at
  `temperature`, so it is a sample of the tempered policy (exact only at temperature 1).
* `logprob` - `sum` (default; the equation's sequence log-probabilities, and the KL summed over
  tokens) or `mean` (token-averaged log-probabilities and KL: length-normalised).
* `baseline` - b in step 8, which the paper does not have. What the paper's loss (`none`, the default,
  b = 0) does: log pi(y1|x) is detached, so that term has zero gradient - it is a constant shift of the
  loss, not a baseline - and the gradient is r2 * grad log pi(y2|x, y1, p1): every revision with r2 > 0
  (every one that is not a FORMAT failure) is made more likely, a revision worse than its y1 included; in
  expectation that is the policy gradient of E[r2] (unbiased), but with r2 in [0, 1] and no negative signal
  its variance is large. `r1` (b = r1 of the same problem: the advantage r2 - r1 reinforces a revision
  only when it moved the first error later), `mean` (b = a running mean of r2 over the previous
  micro-batches, momentum `baseline_momentum`; on the first batch each sample's b is the leave-one-out mean of the
  batch's other r2 (0 for a batch of one), the running mean started at the batch mean; saved in checkpoints,
  so a resumed run continues it) or `rloo` (with `revisions` k >= 2 revisions sampled for each y1: b = the
  mean r2 of the other k - 1 revisions of the same y1, the leave-one-out baseline of RLOO; a revision
  worse than its siblings is pushed down, the advantages of a y1's revisions sum to 0; a y1 with a single
  rewarded revision contributes nothing, `rloo_singletons`). Each b is independent of the revision it
  is subtracted from, so every option keeps the expected gradient and changes its variance
  (tests/trainers/test_stepfix_estimators.py computes both exactly on a toy policy). Off by default so
  that the default run is the paper's method.
* `revisions` (k, default 1: the paper) - revisions y2 sampled per kept y1, each a sample of the loss
  (the y1 terms repeat for each; the loss is the mean over revisions). With k > 1 a problem's record
  holds all k in `revisions` (the first one's fields also at the top level).
* The sampling cap `max_new_tokens` defaults to 0: the longest reference solution of the training pool
  in the model's tokens + `gen_margin_tokens` (trainers.rl_sampling.generation_cap); samples that hit
  it without an end of turn are counted (`y1_truncated`, `y2_truncated`, `truncated`, `truncated_frac`
  per step; run.json `truncation`) and a step past `truncation_warn` warns. Before the first step the
  start policy writes greedy solutions to `start_check_n` pool prompts, and their seven-tag format
  compliance (run.json `start_check`) warns below `start_check_min`. The learning rate is constant after
  the warm-up by default (`lr_scheduler: constant_with_warmup`).
* Generation goes through trainers.generation: HF generate with the KV cache, stopping at the chat
  template's end-of-turn ids (default), or vLLM in the training process (`use_vllm`, TRL's names).
* `steps_per_generation` (k, default 1): generation for k gradient-accumulation steps at once, as TRL
  GRPO's steps_per_generation. The first micro-batch of each group of k samples y1 for all k
  micro-batches' problems in one call, verifies them in one batch, writes their feedback in one batch,
  samples the revisions y2 in one call and verifies them in one batch; the results are buffered and
  cut back into the k micro-batches, whose forward, loss and backward run one by one as with k = 1
  (the same losses and update on the same samples). k must divide grad_accum: the k micro-batches are
  in one optimizer step, sampled from the policy they train (as with k = 1), and the buffer is empty at
  every optimizer step, so a checkpoint (saved after an optimizer step) never holds or drops one and
  a resume regenerates nothing and skips nothing. Under DDP each rank generates for its own k
  micro-batches; with use_vllm the k micro-batches' prompts are one request to the engine or server.
* `tau`, `beta`, the revision instruction (`revise_instruction`), sampling settings and the
  verifier backend are config fields; a verifier that gives no verdict (valid=False: judge
  unreachable, junk reply, internal error) skips that problem and is counted
  (`verifier_failures`); a feedback channel that fails falls back to the verdict's explanation and
  is counted (`feedback_fallbacks`). With `verifier: judge` the judge_* fields set the endpoint,
  concurrency, prices and budget (trainers.judging); a micro-batch's y1, then its y2, are verified
  concurrently (`verify_batch` over `verify`), and a spent budget stops the run (judge_budget_spent).

Logged besides the loss (what the paper does not report): skip rate, mean/std of r1 and r2 and
r2 - r1, counts of the error classes of y1 and y2 per logging step, and the seconds spent in
generation, verification, feedback, policy forward, reference forward and backward
(time_*_s and share_*, trainers.core.mixins.TimingMixin, shared with GRPO). Every problem's record (texts,
verdicts, rewards, skip reason, loss terms) goes to OUTPUT_DIR/stepfix_samples.jsonl.

Where the code is: this module holds the config, `build`, `train` and the CLI (light: no torch at
import, so `--help` is fast); trainers.stepfix_loss the pure pieces (reward, skip rule, KL
estimators, loss; re-exported here); trainers.stepfix_trainer the StepFixTrainer that runs the
method (a variant subclasses it: `train(cfg, trainer_cls=...)`).

What the long steps cost on a CPU: Config.costs, which `--help` prints.
"""
from __future__ import annotations

from dataclasses import dataclass

from trainers import judging
from trainers import rl_sampling as rl
from trainers.core.config import BaseConfig
from trainers.core.data import train_rows, user_chat
from trainers.core.entry import entry
from trainers.core.evaluation import callbacks
from trainers.core.model import frozen_reference, load_tokenizer, model_path, policy_model, training_args_kwargs
from trainers.rl_sampling import RLFields
from trainers.errors import ConfigError, option
from trainers.generation import VllmFields
from trainers.judging import JudgeFields
from trainers.stepfix_loss import (backbone_and_head, chunked_token_stats, completion_batch, completion_hidden,
                                   completion_logits, reward, skip, stepfix_loss, token_kl, token_logprobs)
from verifiers.steps import BACKENDS

__all__ = ["Config", "REVISE", "KL_ESTIMATORS", "BASELINES", "dataset", "build", "train", "main", "StepFixTrainer",  # noqa: F822 - module __getattr__
           # the method's pure pieces (trainers.stepfix_loss), public here too
           "skip", "reward", "token_kl", "stepfix_loss", "completion_batch", "backbone_and_head", "completion_logits",
           "completion_hidden", "chunked_token_stats", "token_logprobs"]

REVISE = ("Revise your solution: fix the step named above and everything that depends on it. "
          "Write the complete corrected solution again in the same seven-tag format, ending with "
          "<final_answer>.")

KL_ESTIMATORS = ("full", "k1", "k3", "none")
BASELINES = ("none", "r1", "mean", "rloo")


@dataclass
class Config(BaseConfig, VllmFields, JudgeFields, RLFields):
    output_dir: str = option("runs/stepfix", "where checkpoints, logs, the final adapter and run.json go")
    learning_rate: float = option(5e-5, "peak learning rate")
    lr_scheduler: str = option("constant_with_warmup", "HF scheduler name; RL default constant after the warm-up "
                               "(a short run's linear decay spent its last steps near 0)")
    batch_size: int = option(4, "problems per micro-batch")
    gradient_checkpointing: bool = option(True, "recompute activations in the backward pass (long revision contexts: "
                                      "without it attention activations of x, y1, p1, y2 outgrow CPU memory)")
    tau: float = option(0.9, "skip a problem when r1 > tau")
    beta: float = option(0.1, "KL coefficient: weight of KL(pi(.|x) || pi_ref(.|x)) on y1 in the loss (kl_estimator)")
    kl_estimator: str = option("full", "KL(pi(.|x) || pi_ref(.|x)) on y1: full | k1 | k3 | none")
    kl_chunk: int = option(32, "positions per chunk of the LM head / log-softmax / KL under activation checkpointing "
                           "(0: the whole [B, T, V] at once, the older path: same values, ~10x the memory)")
    logprob: str = option("sum", "sequence log-probabilities: sum (the equation) | mean (token-averaged)")
    verifier: str = option("symbolic", f"step verifier backend: {' | '.join(BACKENDS)}")
    psv_model: str = option("", "verifier psv: the PSV model folder (python -m trainers.psv writes OUTPUT_DIR/psv_model); "
                            "empty = $R3BENCH_PSV_MODEL")
    temperature: float = option(0.7, "sampling temperature of y1 and y2")
    top_p: float = option(1.0, "nucleus sampling of y1 and y2")
    max_new_tokens: int = option(0, "maximum tokens of y1 and of y2; 0 = derived from the data: the longest reference "
                                 "solution of the training pool in the model's tokens + gen_margin_tokens")
    revise_instruction: str = option(REVISE, "text appended to the feedback to ask for the revision")
    log_samples: bool = option(True, "write every problem's record to OUTPUT_DIR/stepfix_samples.jsonl")
    baseline: str = option("none", "b in (r2 - b): none (the paper's exact loss) | r1 | mean (running mean of r2) | "
                           "rloo (mean r2 of the other revisions of the same y1; needs revisions >= 2)")
    revisions: int = option(1, "revisions y2 sampled per first attempt y1 (the paper: 1); each is a sample of the loss, "
                            "and baseline rloo compares each with the others of its y1")
    baseline_momentum: float = option(0.9, "momentum of the running-mean baseline (baseline: mean)")
    feedback_workers: int = option(4, "feedback of one micro-batch written on up to this many threads for the "
                                   "channels that wait on something (CM: the ChromaDB query; CE: the sandbox "
                                   "process); 1: one by one")
    steps_per_generation: int = option(1, "micro-batches (gradient-accumulation steps) sampled, verified, given "
                                       "feedback and revised together, as TRL GRPO's steps_per_generation: one "
                                       "generation call of steps_per_generation x batch_size problems, its results "
                                       "cut into the micro-batches; must divide grad_accum (1: one micro-batch at a "
                                       "time)")
    merge_lora_for_generation: bool = option(False, "merge the LoRA into fp32 weights while sampling (unmerged "
                                         "after); off: no speed-up measured on CPU (docs/training.md)")

    costs = ("Cost on a 2-core CPU, SmolLM2-135M: with AMX-BF16 (bf16 auto: autocast + rollouts from a bf16 copy) "
             "~115 s per step of the example config (4 problems, up to 400 new tokens; generation ~54%), 1.8x faster "
             "than fp32 (~205 s; benchmarks/results/step_ab); the example config's 10 steps take ~20 min. Generation "
             "dominates: a GPU (and use_vllm) is the way out.")

    def validate(self):
        if self.kl_estimator not in KL_ESTIMATORS:
            raise ConfigError(f"kl_estimator must be one of {KL_ESTIMATORS}, got {self.kl_estimator!r}")
        if self.logprob not in ("sum", "mean"):
            raise ConfigError(f"logprob must be sum or mean, got {self.logprob!r}")
        if self.steps_per_generation < 1:
            raise ConfigError(f"steps_per_generation must be >= 1, got {self.steps_per_generation}")
        if self.grad_accum % self.steps_per_generation:
            raise ConfigError(f"steps_per_generation ({self.steps_per_generation}) must divide grad_accum "
                              f"({self.grad_accum}): a generation never spans an optimizer step, so every sample "
                              "comes from the policy it trains and no buffer outlives a checkpoint")
        if self.feedback_workers < 1:
            raise ConfigError(f"feedback_workers must be >= 1, got {self.feedback_workers}")
        judging.check_verifier(self)  # a backend of verifiers.steps.BACKENDS, lacking nothing
        if not self.temperature > 0:
            raise ConfigError("temperature must be > 0 (y1 and y2 are sampled)")
        if self.beta < 0:
            raise ConfigError(f"beta must be >= 0, got {self.beta}")
        if self.baseline not in BASELINES:
            raise ConfigError(f"baseline must be one of {BASELINES}, got {self.baseline!r}")
        if self.revisions < 1:
            raise ConfigError(f"revisions must be >= 1, got {self.revisions}")
        if self.baseline == "rloo" and self.revisions < 2:
            raise ConfigError(f"baseline rloo needs revisions >= 2 (the leave-one-out baseline of a revision is the "
                              f"mean reward of the other revisions of its y1), got {self.revisions}")
        if not 0 <= self.baseline_momentum < 1:
            raise ConfigError(f"baseline_momentum must be in [0, 1), got {self.baseline_momentum}")
        self.check_vllm()
        self.check_judge()
        self.check_rl()
        if self.max_new_tokens < 0:
            raise ConfigError(f"max_new_tokens must be >= 0 (0: derived from the data), got {self.max_new_tokens}")


# --------------------------------------------------------------------------------- trainer

def dataset(cfg, log=print):
    from datasets import Dataset

    rows, path = train_rows(cfg, "sft.jsonl", ("prompt", "completion", "answer"), log=log)
    recs = [{"id": str(r.get("id", i)), "prompt": r["prompt"], "question": r.get("question") or r["prompt"],
             "reference": r["completion"], "answer": str(r["answer"])} for i, r in enumerate(rows)]
    return Dataset.from_list(recs), path


def build(cfg, extra_callbacks=(), trainer_cls=None):
    """(trainer, tokenizer, base path, data path): a StepFixTrainer, or `trainer_cls` (a subclass of
    it, e.g. with its own `verify`), on cfg's model and data."""
    from transformers import TrainingArguments

    from trainers.stepfix_trainer import StepFixTrainer  # torch + transformers: imported when training

    base = model_path(cfg.model)
    tok = load_tokenizer(base)
    data, path = dataset(cfg)
    judging.install(cfg)  # verifier judge: the judge of the config's judge_* fields
    args = TrainingArguments(**training_args_kwargs(cfg), remove_unused_columns=False)
    cls = trainer_cls or StepFixTrainer
    policy = policy_model(cfg, base)
    cap = rl.generation_cap(cfg, "max_new_tokens", tok, data["reference"])
    start = rl.check_start(cfg, policy, tok, [user_chat(p) for p in data["prompt"]], cap["tokens"])
    trainer = cls(model=policy, args=args, train_dataset=data, data_collator=lambda rows: rows,
                  callbacks=callbacks(cfg, tok, extra_callbacks), stepfix_cfg=cfg,
                  ref_model=frozen_reference(cfg, base), tok=tok, gen_cap=cap, start_check=start)
    return trainer, tok, base, path


train, main = entry(Config, build)


def __getattr__(name):
    """`stepfix.StepFixTrainer`, imported on first use (it needs torch and transformers; --help does not)."""
    if name == "StepFixTrainer":
        from trainers.stepfix_trainer import StepFixTrainer

        return StepFixTrainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    raise SystemExit(main())
