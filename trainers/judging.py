"""The step verifier of a training run (stepfix, GRPO): the config of its backend, and for the LLM judge
(`verifier: judge`) its config fields, the judge they install, how many verdicts are asked at once, and
what the step log and run.json say.

`verifier_config(cfg)` is the config the run passes to `verifiers.steps.verify`: the backend of
`cfg.verifier` (one of verifiers.steps.BACKENDS, checked at config load with the valid names, as is
what the backend lacks: `verifier: psv` without a PSV model) built from the config's
`<backend>_<field>` fields - judge_base_url, judge_model, ..., psv_model - over the backend's
documented defaults (its config's from_env); model names resolved by model_path; a backend whose config
has a device and a dtype (psv) gets the run's own (trainers.core.model.training_placement), so the PSV
scores beside the policy.

    judge_base_url: http://127.0.0.1:8080/v1   # OpenAI, `vllm serve`, llama.cpp's server ...
    judge_model: gpt-4o
    judge_max_concurrency: 8                   # requests in flight at once (a micro-batch's y1 together)
    judge_price_in: 2.5                        # dollars per million prompt tokens
    judge_price_out: 10.0                      # ... and completion tokens
    judge_max_cost_usd: 5.0                    # the budget: past it the run stops (status judge_budget_spent)

The API key is read from the environment only (R3BENCH_JUDGE_API_KEY, else OPENAI_API_KEY), never
from a config file that would be copied into run.json. Empty base_url / model: R3BENCH_JUDGE_BASE_URL
/ R3BENCH_JUDGE_MODEL, else OpenAI's gpt-4o (verifiers.judge.Judge).

Accounting is per process: under torchrun each rank has its own judge, budget and counts (run.json
holds rank 0's); a budget spent on any rank stops every rank (trainers.distributed.raise_together;
docs/training.md).
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from trainers import distributed
from trainers.core.model import model_path, training_placement
from trainers.errors import ConfigError, option
from verifiers import judge as judge_mod
from verifiers.steps import BACKENDS, backend, config_for


@dataclass
class JudgeFields:
    """The config fields of the LLM judge (a Config mixin, as generation.VllmFields)."""

    judge_base_url: str = option("", "verifier judge: the OpenAI-compatible endpoint (.../v1); empty = "
                                 "$R3BENCH_JUDGE_BASE_URL, else OpenAI. The API key: $R3BENCH_JUDGE_API_KEY or "
                                 "$OPENAI_API_KEY only")
    judge_model: str = option("", "verifier judge: the model name the endpoint serves; empty = $R3BENCH_JUDGE_MODEL, "
                              "else gpt-4o")
    judge_max_concurrency: int = option(8, "verifier judge: requests in flight at once (the samples of a batch "
                                        "are verified together)")
    judge_price_in: float = option(0.0, "verifier judge: dollars per million prompt tokens (0: cost not tracked)")
    judge_price_out: float = option(0.0, "verifier judge: dollars per million completion tokens")
    judge_max_cost_usd: float = option(0.0, "verifier judge: stop the run cleanly once this many dollars are "
                                       "spent by the whole run (0 = no limit; under N processes each rank "
                                       "gets 1/N of it)")
    judge_max_tokens: int = option(0, "verifier judge: stop the run cleanly once this many tokens are spent "
                                   "by the whole run (0 = no limit; each of N ranks gets 1/N)")

    def check_judge(self) -> None:
        url = self.judge_base_url.strip()
        if url and not url.startswith(("http://", "https://")):
            raise ConfigError(f"judge_base_url must be an http(s):// URL (.../v1), got {url!r}")
        if self.judge_max_concurrency < 1:
            raise ConfigError(f"judge_max_concurrency must be >= 1, got {self.judge_max_concurrency}")
        for name in ("judge_price_in", "judge_price_out", "judge_max_cost_usd", "judge_max_tokens"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.judge_max_cost_usd and not (self.judge_price_in or self.judge_price_out):
            raise ConfigError("judge_max_cost_usd needs judge_price_in / judge_price_out (the cost is counted "
                              "from them); or budget tokens with judge_max_tokens")


def uses_judge(cfg) -> bool:
    return getattr(cfg, "verifier", None) == "judge"


def verifier_config(cfg, resolve=model_path):
    """The config of cfg.verifier's backend: the config's `<backend>_<field>` fields (empty / 0: the
    backend's default), the judge's budget split over the ranks (rank_budget)."""
    name = cfg.verifier
    prefix = f"{name}_"
    given = {f.name.removeprefix(prefix): getattr(cfg, f.name) for f in fields(cfg) if f.name.startswith(prefix)}
    given = {k: v.strip() if isinstance(v, str) else v for k, v in given.items()}
    if uses_judge(cfg):
        given["max_cost_usd"], given["max_tokens"] = rank_budget(cfg)
    if {"device", "dtype"} <= {f.name for f in fields(backend(name).config)}:  # psv: score beside the policy
        for k, v in zip(("device", "dtype"), training_placement(cfg)):
            given[k] = given.get(k) or v
    return config_for(name, resolve, **given)


def check_verifier(cfg) -> None:
    """At config load: cfg.verifier names a backend of the table, and its config lacks nothing."""
    if cfg.verifier not in BACKENDS:
        raise ConfigError(f"verifier must be one of {sorted(BACKENDS)}, got {cfg.verifier!r}")
    why = backend(cfg.verifier).problem(verifier_config(cfg, resolve=None))
    if why:
        raise ConfigError(f"verifier {cfg.verifier} needs {why}")


def install(cfg):
    """The judge of cfg's judge_* fields as the default of `verify(..., backend="judge")` (and the judge of
    verifier_config(cfg)); None when the run's verifier is not the judge."""
    if not uses_judge(cfg):
        return None
    return judge_mod.configure(verifier_config(cfg))


def rank_budget(cfg) -> tuple[float | None, int | None]:
    """(dollars, tokens) this process may spend: the run's budget split evenly over the ranks (each rank
    has its own judge and counts only its own requests, so a whole budget per rank would let the run
    spend N times what was set). None = no limit."""
    n = max(1, distributed.world_size())
    cost = cfg.judge_max_cost_usd / n if cfg.judge_max_cost_usd else None
    tokens = max(1, cfg.judge_max_tokens // n) if cfg.judge_max_tokens else None
    return cost, tokens


def workers(cfg) -> int:
    """Samples verified at once: the judge's concurrency for the judge (it waits on a server), else 1
    (the symbolic and PSV verifiers are CPU/GPU-bound in this process)."""
    return judge_mod.default_judge().max_concurrency if uses_judge(cfg) else 1


def step_logs(cfg) -> dict:
    """The judge's running totals for a training log: judge_requests, judge_dropped, judge_tokens,
    judge_cost_usd ({} when the verifier is not the judge)."""
    j = judge_mod.default_judge(create=False) if uses_judge(cfg) else None
    if j is None:
        return {}
    s = j.stats()
    return {"judge_requests": s["requests"], "judge_dropped": s["dropped_total"],
            "judge_tokens": s["prompt_tokens"] + s["completion_tokens"], "judge_cost_usd": s["cost_usd"]}


def run_record(cfg) -> dict:
    """{"judge": Judge.stats()} for run.json ({} when the verifier is not the judge, or no judge was made:
    a run that failed before it built one)."""
    j = judge_mod.default_judge(create=False) if uses_judge(cfg) else None
    return {"judge": j.stats()} if j is not None else {}
