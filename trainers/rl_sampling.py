"""What the RL trainers (stepfix, GRPO) share around sampling, so that a run measures the method and
not its settings (issue 50): the generation cap derived from the data, truncated samples counted, and
the start's format compliance measured before the first step.

* `RLFields`: the config fields (a Config mixin, as trainers.generation.VllmFields).
* `generation_cap`: the sampling cap of a run. A cap below the pool's longest reference cut RL samples
  that scoring (512 tokens) let finish: 21-22% of the mixture study's GRPO completions hit its 256.
  With the cap field at 0 (the default) it is the longest reference solution of the training pool in
  the model's tokens (+1 for the end-of-turn token) plus `gen_margin_tokens`.
* `truncated`: a sample that ended without an end-of-turn id (it hit the cap).
* `start_compliance`: greedy samples of the start policy on a few pool prompts, checked for the
  seven-tag format. The mixture study's SFT start had never seen a multiple-choice reference and wrote
  FORMAT failures on them; RL then learnt nothing there (reward 0 for every sample).

Nothing here runs a collective: every rank computes the same cap from the same rows, and the start
check runs on each rank's own copy of the model before the Trainer wraps it (the same prompts, greedy:
every rank gets the same numbers), so no rank waits on another.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from trainers.errors import ConfigError, option


#: the cap when the pool has no reference solutions to measure (the PDE track's prompts)
FALLBACK_CAP = 512


ROLLOUT_DTYPES = ("auto", "policy", "bfloat16", "float32")


@dataclass
class RLFields:
    """Config fields of the RL trainers' sampling checks (a Config mixin)."""

    gen_margin_tokens: int = option(128, "with the generation cap at 0 (derived): tokens added to the longest "
                                    "reference solution of the training pool")
    truncation_warn: float = option(0.05, "warn when more than this share of a step's samples hit the generation cap "
                                    "(metrics.jsonl: truncated, truncated_frac; run.json: truncation)")
    start_check_n: int = option(8, "before the first step, greedy samples of the start policy on this many pool "
                                "prompts are checked for the seven-tag format (run.json: start_check); 0 = off")
    start_check_min: float = option(0.75, "warn when the start's format compliance on those samples is below this")
    reward_permutation: bool = option(False, "the learns-at-all test's control: derange the rewards among the step's "
                                      "samples before the loss (none keeps its own; a lone sample gets zero weight; "
                                      "seeded by seed and step; the verifier's rewards stay in the samples file "
                                      "beside the ones used)")

    rollout_dtype: str = option("auto", "what samples the rollouts (without use_vllm): auto (a bf16 copy when the run "
                                "trains in bf16 over fp32 weights - `bf16` auto on a CPU with AMX-BF16 - else the "
                                "policy) | policy (the policy itself, as it trains) | bfloat16 (a copy of the policy "
                                "with its LoRA merged, in bf16, refreshed after each optimizer step: the CPU "
                                "counterpart of vLLM colocate, benchmarks/results/gen_speed) | float32")
    rollout_cache: str = option("dynamic", "KV cache of HF generate: dynamic (grown per token) | static (preallocated "
                                "to prompt + cap)")

    def check_rl(self) -> None:
        if self.rollout_dtype not in ROLLOUT_DTYPES:
            raise ConfigError(f"rollout_dtype must be one of {ROLLOUT_DTYPES}, got {self.rollout_dtype!r}")
        if self.rollout_cache not in ("dynamic", "static"):
            raise ConfigError(f"rollout_cache must be dynamic or static, got {self.rollout_cache!r}")
        if self.rollout_dtype not in ("policy", "auto") and getattr(self, "use_vllm", False):
            raise ConfigError("rollout_dtype names a copy of the policy to sample from, use_vllm an engine: "
                              "set one (vLLM samples in its own dtype)")
        if self.gen_margin_tokens < 0:
            raise ConfigError(f"gen_margin_tokens must be >= 0, got {self.gen_margin_tokens}")
        if not 0 <= self.truncation_warn <= 1:
            raise ConfigError(f"truncation_warn must be in [0, 1], got {self.truncation_warn}")
        if self.start_check_n < 0:
            raise ConfigError(f"start_check_n must be >= 0, got {self.start_check_n}")
        if not 0 <= self.start_check_min <= 1:
            raise ConfigError(f"start_check_min must be in [0, 1], got {self.start_check_min}")


def reference_tokens(tok, references) -> list[int]:
    """Tokens of each reference solution as the model would write it: its text plus one end-of-turn token."""
    texts = [str(r) for r in references if str(r or "").strip()]
    if not texts:
        return []
    enc = tok(texts, add_special_tokens=False)["input_ids"]
    return [len(ids) + 1 for ids in enc]


def generation_cap(cfg, field: str, tok, references) -> dict:
    """The run's sampling cap and where it came from (run.json `generation_cap`).

    cfg.<field> > 0: that value ("set"), with a warning when it is below the pool's longest reference
    (those samples cannot finish). 0: the longest reference + cfg.gen_margin_tokens ("derived"), or
    FALLBACK_CAP when the pool has no references ("fallback")."""
    lengths = reference_tokens(tok, references)
    longest = max(lengths) if lengths else None
    set_to = int(getattr(cfg, field))
    rec = {"field": field, "longest_reference": longest, "references": len(lengths),
           "margin": cfg.gen_margin_tokens}
    if set_to > 0:
        rec.update(tokens=set_to, source="set")
        if longest is not None and set_to < longest:
            short = sum(n > set_to for n in lengths)
            rec["references_over_cap"] = short
            warn(f"{field} {set_to} is below the longest reference solution of the pool ({longest} tokens; "
                 f"{short} of {len(lengths)} references are longer): such samples are cut before they can finish; "
                 f"{field}: 0 derives the cap from the data")
        return rec
    if longest is None:
        rec.update(tokens=FALLBACK_CAP, source="fallback")
        return rec
    rec.update(tokens=longest + cfg.gen_margin_tokens, source="derived")
    return rec


def truncated(ids, stops) -> bool:
    """A sample that hit the cap: no end-of-turn id in it (the generators cut after the first one)."""
    stops = set(stops)
    return not any(t in stops for t in ids)


def warn(msg: str) -> None:
    """One stderr line from the main process (every rank computes the same cap and start check)."""
    from trainers import distributed

    if distributed.is_main_process():
        print(f"[r3bench] warning: {msg}", file=sys.stderr, flush=True)


class TruncationCount:
    """Samples generated and samples truncated over the run (the per-step counts are the trainers' logs)."""

    def __init__(self):
        self.total = [0, 0]  # generated, truncated

    def add(self, generated: int, cut: int) -> None:
        self.total[0] += generated
        self.total[1] += cut

    def record(self) -> dict:
        g, t = self.total
        return {"generated": g, "truncated": t, "truncated_frac": (t / g) if g else None}


def run_record(truncation: "TruncationCount", gen_cap, start_check) -> dict:
    """What run.json says of an RL run's sampling: truncated samples, the cap, the start's compliance."""
    out = {"truncation": truncation.record()}
    if gen_cap is not None:
        out["generation_cap"] = gen_cap
    if start_check is not None:
        out["start_check"] = start_check
    return out


def step_logs(generated: int, cut: int, threshold: float, step: int, main: bool) -> dict:
    """metrics.jsonl's truncated / truncated_frac of a step (every rank's counts), with a warning from the
    main process past `threshold`."""
    if not generated:
        return {}
    frac = cut / generated
    if frac > threshold and main:
        warn(f"step {step}: {cut} of {generated} samples ({frac:.0%}) hit the generation cap without an end of "
             "turn (raise the cap, or set it to 0 to derive it from the data)")
    return {"truncated": cut, "truncated_frac": frac}


def start_compliance(model, tok, chats: list, cap: int, threshold: float) -> dict:
    """Greedy samples of `model` (the start policy, before training) on `chats`, checked for the
    seven-tag format the way the rewards see it (verifiers.tag_format.format_error: a FORMAT verdict is
    the minimum reward): {n, compliant, rate, truncated, threshold, low, max_new_tokens}; a warning
    when the rate is below `threshold`. HF generate on the model's own device (greedy: no seed)."""
    from trainers import generation
    from verifiers.tag_format import format_error

    if not chats:
        return {"n": 0}
    sp = generation.Sampling(max_new_tokens=cap, do_sample=False, temperature=1.0)
    ids = generation.HFGenerator().generate(model, tok, chats, sp)
    stops = generation.stop_token_ids(tok, model)
    ok = [format_error(tok.decode(x, skip_special_tokens=True)) is None for x in ids]
    rate = sum(ok) / len(ok)
    rec = {"n": len(ok), "compliant": sum(ok), "rate": rate, "truncated": sum(truncated(x, stops) for x in ids),
           "threshold": threshold, "low": rate < threshold, "max_new_tokens": cap}
    if rate < threshold:
        warn(f"the start policy writes the seven-tag format on {sum(ok)} of {len(ok)} pool prompts (greedy, "
             f"{rate:.0%} < {threshold:.0%}): RL samples that fail the format earn the minimum reward and teach "
             "nothing; start from an adapter trained on every answer form of the pool (the mixture SFT, "
             "studies/mixture_sft.py), or set start_check_n: 0 to skip this check")
    return rec


def spread(n: int, size: int) -> list[int]:
    """`n` indices spread evenly over range(size) (deterministic: the same on every rank)."""
    if n <= 0 or size <= 0:
        return []
    m = min(n, size)
    return [(i * size) // m for i in range(m)]


def check_start(cfg, policy, tok, chats: list, cap: int) -> dict | None:
    """start_compliance of the policy before its first step on start_check_n of the pool's `chats` (spread
    over the pool), on the device it trains on; None when the check is off (start_check_n 0) or the run
    resumes (its start is a checkpoint, loaded later). Under DeepSpeed ZeRO-3 the check is skipped, with
    its reason in the record: the parameters are partitioned over the ranks (zero3_init_flag) before the
    Trainer wraps the model, and HF generate on the bare policy cannot run on them (every rank decides
    alike: the same config, no collective)."""
    if not cfg.start_check_n or cfg.resume:
        return None
    from transformers.integrations import is_deepspeed_zero3_enabled

    if is_deepspeed_zero3_enabled():
        rec = {"n": 0, "skipped": "DeepSpeed ZeRO-3: the policy's parameters are partitioned before the Trainer "
                                  "wraps it, so its greedy samples cannot be taken here; check the start with "
                                  "one process (or without ZeRO-3) if it is in doubt"}
        warn(f"start check skipped ({rec['skipped']})")
        return rec
    import torch

    from trainers.core.model import training_placement

    device, _ = training_placement(cfg)
    policy.to(torch.device(device))
    return start_compliance(policy, tok, [chats[i] for i in spread(cfg.start_check_n, len(chats))], cap,
                            cfg.start_check_min)


def permutation(n: int, seed: int, step: int, rank_: int = 0) -> list[int]:
    """The control's shuffle of n rewards at an optimizer step (reward_permutation): sample k gets the
    reward of sample order[k]. A derangement for n >= 2 (no sample keeps its own reward: a uniform shuffle
    left each one its own reward with probability 1/n, real signal in the control): a random cyclic shift
    by 1..n-1 along a random permutation. n < 2 has no derangement: the callers give such a phase zero
    weight (`PERMUTATION_SKIPPED`). A function of the run's seed, the step and the rank only (Python's own
    generator: the same on every machine)."""
    import random

    rng = random.Random(seed * 1_000_003 + step * 10_007 + rank_ * 101 + 7)
    order = list(range(n))
    if n < 2:
        return order
    cycle = list(range(n))
    rng.shuffle(cycle)
    shift = rng.randrange(1, n)
    for i, k in enumerate(cycle):
        order[k] = cycle[(i + shift) % n]
    return order


#: metrics.jsonl's count of the control's generation phases with a single rewarded sample (no derangement
#: exists): that sample gets zero weight, so that the control never trains on a real reward
PERMUTATION_SKIPPED = "reward_permutation_skipped"


class VerdictTally:
    """The step verdicts' classes since the last training log and the rewards they earned (issue 56 item
    4): `logs()` gives, per group (stepfix: y1, y2 and the revisions by their first attempt's class;
    GRPO: each step-level reward), ``verdicts/<group>/<class>`` - the class's share of the group's
    verdicts - and ``reward_by_class/<group>/<class>`` - the mean reward of that class. The classes are
    ``correct``, the content classes (MC, CM, CE) and FORMAT (verifiers.rewards.RewardResult.verdict).
    They reach metrics.jsonl and TRL's `report_to` (TensorBoard) with the step's other logs.

    Every rank adds its own samples; `logs` gathers every rank's (call it on every rank, as the trainers'
    `log` is), so the numbers are the step's over the whole world, then starts over."""

    def __init__(self):
        self.n: dict[tuple[str, str], int] = {}
        self.sums: dict[tuple[str, str], list] = {}  # (group, class) -> [sum of rewards, rewards added]

    def add(self, group: str, verdict: str | None, reward: float | None = None, share: bool = True) -> None:
        """One sample of `group` with step-verdict class `verdict` (None: no class, not booked) and its
        reward (None: none). `share` False: the reward only (a group whose shares another group gives)."""
        if verdict is None:
            return
        key = (group, str(verdict))
        if share:
            self.n[key] = self.n.get(key, 0) + 1
        if reward is not None and reward == reward:
            s = self.sums.setdefault(key, [0.0, 0])
            s[0] += float(reward)
            s[1] += 1

    def logs(self) -> dict:
        from trainers import distributed

        n, sums = {}, {}
        for rn, rs in distributed.gather_objects((self.n, self.sums)):
            for k, v in rn.items():
                n[k] = n.get(k, 0) + v
            for k, (s, c) in rs.items():
                t = sums.setdefault(k, [0.0, 0])
                t[0] += s
                t[1] += c
        self.n, self.sums = {}, {}
        total: dict[str, int] = {}
        for (g, _), v in n.items():
            total[g] = total.get(g, 0) + v
        out = {f"verdicts/{g}/{c}": v / total[g] for (g, c), v in sorted(n.items())}
        out.update({f"reward_by_class/{g}/{c}": s / k for (g, c), (s, k) in sorted(sums.items()) if k})
        return out
