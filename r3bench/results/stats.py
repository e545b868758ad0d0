"""The study's statistics: Holm's correction, a seed x template x problem bootstrap, and the power of
the paired designs the learning study can afford (issue 35, items 4 and 6).

* holm(pvals): Holm's (1979) step-down adjusted p-values over every test reported (NaN = no test:
  left NaN and not counted in m).
* sign_test(up, down): McNemar's exact two-sided test on the discordant problems of a paired 0/1
  comparison (the binomial test of up vs down at 1/2).
* hierarchical_bootstrap(rows): the 95% percentile interval of a mean paired difference, resampling
  seeds, then templates within a seed, then problems within a template: the interval holds seed
  noise and template noise as well as problem noise (a problem-only bootstrap holds the last alone).
* mcnemar_power(n, p_disc, delta, alpha): the exact power of sign_test at n paired problems when a
  share p_disc of them is discordant and the condition wins delta more of them than it loses.
* mean_diff_power(n, sd, delta, alpha, seeds, seed_sd): the normal-approximation power of a paired
  mean difference (the step reward) over `seeds` runs scored on the same n problems.
* Design / designs(...): every design (seeds x RL dose x evaluation problems) that fits a CPU budget,
  its measured-rate cost and the power of each primary comparison under Holm; ranked.

Nothing here reads model output: inputs are numbers from samples files already scored.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from statistics import NormalDist


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of k successes in n trials ((nan, nan) when n = 0)."""
    if n == 0:
        return float("nan"), float("nan")
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def holm(pvals: list[float]) -> list[float]:
    """Holm-adjusted p-values in the input order: sort the m finite p-values ascending, multiply the
    i-th (0-based) by (m - i), take the running maximum, cap at 1. NaN stays NaN and is not counted.

    holm([0.01, 0.02, 0.03, 0.04, 0.05]) == [0.05, 0.08, 0.09, 0.09, 0.09] (R's p.adjust(.., "holm"))."""
    idx = [i for i, p in enumerate(pvals) if p is not None and not math.isnan(p)]
    for i in idx:
        if not 0.0 <= pvals[i] <= 1.0:
            raise ValueError(f"p-value out of [0, 1]: {pvals[i]!r}")
    m = len(idx)
    order = sorted(idx, key=lambda i: pvals[i])
    out = [math.nan] * len(pvals)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvals[i]))
        out[i] = running
    return out


def sign_test(up: int, down: int) -> float:
    """McNemar's exact two-sided p on `up` + `down` discordant problems (NaN when there are none)."""
    n, k = up + down, min(up, down)
    if n == 0:
        return math.nan
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def hierarchical_bootstrap(rows: list[tuple], iters: int = 2000, seed: int = 0,
                           levels: tuple[str, ...] = ("seed", "template", "problem")) -> tuple[float, float, float]:
    """(estimate, low, high) of the mean of `value` over rows (seed, template, problem, value).

    Each resample draws seeds with replacement, then for each drawn seed its templates with
    replacement, then for each drawn template its problems with replacement (a level left out of
    `levels` is not resampled: levels=("problem",) is the plain problem bootstrap within each seed and
    template). The estimate is the plain mean of the rows. With one seed, the seed level adds nothing;
    say so in what reports it."""
    if not rows:
        return math.nan, math.nan, math.nan
    tree: dict = {}
    for s, t, _p, v in rows:
        tree.setdefault(s, {}).setdefault(t, []).append(float(v))
    est = sum(float(r[3]) for r in rows) / len(rows)
    rng = random.Random(seed)

    def draw(items: list, level: str) -> list:
        return [rng.choice(items) for _ in items] if level in levels else items

    stats = []
    for _ in range(iters):
        total = count = 0.0
        for s in draw(list(tree), "seed"):
            templates = tree[s]
            for t in draw(list(templates), "template"):
                vals = draw(templates[t], "problem")
                total += sum(vals)
                count += len(vals)
        if count:
            stats.append(total / count)
    stats.sort()
    lo = stats[int(0.025 * (len(stats) - 1))]
    hi = stats[int(math.ceil(0.975 * (len(stats) - 1)))]
    return est, lo, hi


def paired_permutation_p(diffs: list[float], iters: int = 10000, seed: int = 0) -> float:
    """Two-sided sign-flip randomisation p of a paired mean difference: under "no difference" each
    problem's difference is as likely with either sign; p = (1 + #{|mean of randomly signed diffs| >=
    |observed mean|}) / (iters + 1). NaN with no non-zero difference (nothing to test).

    Exact enough at iters = 10000 for a Holm threshold of 0.05 / k (the smallest p it can return is
    1 / (iters + 1))."""
    d = [float(x) for x in diffs if x is not None and not math.isnan(float(x))]
    if not any(d):
        return math.nan
    obs = abs(sum(d)) - 1e-12 * len(d)  # ties (equal |sum|) count as at least as extreme
    rng = random.Random(seed)
    hit = 0
    for _ in range(iters):
        if abs(sum(x if rng.random() < 0.5 else -x for x in d)) >= obs:
            hit += 1
    return (1 + hit) / (iters + 1)


def _log_binom_pmf(n: int, k: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def _sign_test_reject(d: int, alpha: float) -> int:
    """The largest k such that sign_test(k, d - k) <= alpha (-1 if none): the test rejects when
    min(up, down) <= k."""
    k, tail = -1, 0.0
    while k + 1 <= d // 2:
        nxt = tail + math.comb(d, k + 1) / 2 ** d
        if min(1.0, 2 * nxt) > alpha:
            break
        k, tail = k + 1, nxt
    return k


def mcnemar_power(n: int, p_disc: float, delta: float, alpha: float = 0.05) -> float:
    """Exact power of McNemar's exact test (sign_test) at `n` paired problems, computed, not simulated.

    A share p_disc of the problems is discordant (one condition right, the other wrong); the condition
    wins delta more of the problems than it loses (delta = p_up - p_down, the accuracy difference), so
    p_up = (p_disc + delta) / 2. The number discordant D ~ Binomial(n, p_disc) and up | D ~
    Binomial(D, p_up / p_disc); the test rejects at level alpha when min(up, down) <= k(D)."""
    if not 0 <= abs(delta) <= p_disc <= 1:
        raise ValueError(f"need |delta| <= p_disc <= 1, got delta={delta}, p_disc={p_disc}")
    if p_disc == 0:
        return 0.0
    q = (p_disc + delta) / 2 / p_disc  # P(up | discordant)
    power = 0.0
    for d in range(n + 1):
        w = _log_binom_pmf(n, d, p_disc)
        if w < -50:
            continue
        k = _sign_test_reject(d, alpha)
        if k < 0:
            continue
        rej = sum(math.exp(_log_binom_pmf(d, u, q)) for u in range(k + 1))  # up <= k
        rej += sum(math.exp(_log_binom_pmf(d, u, q)) for u in range(d - k, d + 1) if u > k)  # down <= k
        power += math.exp(w) * min(1.0, rej)
    return power


def mean_diff_power(n: int, sd: float, delta: float, alpha: float = 0.05, seeds: int = 1,
                    seed_sd: float = 0.0, problem_corr: float = 1.0) -> float:
    """Normal-approximation power of a two-sided test that a paired mean difference is 0.

    Each of `seeds` runs per condition is scored on the same n problems; sd is the per-problem SD of
    the paired difference within one seed; seed_sd the SD of a seed's mean difference beyond problem
    noise. problem_corr is the correlation of one problem's differences across seeds: 1 (the
    conservative default: the problem noise does not shrink with seeds) to 0 (it shrinks as 1/seeds).
    Var(mean) = seed_sd^2 / seeds + sd^2 / n * (problem_corr + (1 - problem_corr) / seeds)."""
    var = seed_sd ** 2 / seeds + sd ** 2 / n * (problem_corr + (1 - problem_corr) / seeds)
    if var <= 0:
        return 1.0 if delta else 0.0
    z = NormalDist().inv_cdf(1 - alpha / 2)
    se = math.sqrt(var)
    nd = NormalDist()
    return nd.cdf(abs(delta) / se - z) + nd.cdf(-abs(delta) / se - z)


@dataclass(frozen=True)
class Rates:
    """Measured CPU seconds on the 2-core machines (docs/learning_study.md, quiet cells) and the last
    study's variances (results/learning/summary.csv, tier 1, stepfix vs SFT continued)."""
    eval_s_per_problem: float = 2.9       # merged adapter, batch 32, greedy, ~165-token solutions
    train_s_per_problem: dict = field(default_factory=lambda: {
        "stepfix": 36.0,                  # ~145 s a step of 4 problems (generation ~60%)
        "grpo": 67.5,                     # ~270 s a step of 4 problems x 4 completions
        "sft_cont": 8.0,                  # teacher-forced only; cells ran shared (16-25 min for 48)
    })
    step_reward_sd: float = 0.10          # per-problem SD of the paired step-reward difference (0.076-0.124)
    step_reward_seed_sd: float = 0.003    # SD of the three seeds' mean differences (0.019, 0.023, 0.024)
    disc_factor: float = 0.51             # discordant share = disc_factor * 2p(1-p): 22/356 at p = 0.065


@dataclass(frozen=True)
class Design:
    seeds: int
    dose: int           # RL problems per training run
    n_eval: int         # learning-set problems, the same for every seed and condition
    cpu_s: float
    power_acc: float    # per primary comparison, at the Holm level of the first test (alpha / m)
    power_step: float


PRIMARY = (("stepfix", "sft_cont"), ("stepfix", "grpo"))


def design_cost(seeds: int, dose: int, n_eval: int, rates: Rates = Rates(),
                conditions: tuple[str, ...] = ("stepfix", "grpo", "sft_cont"), aa_control: bool = True) -> float:
    """CPU seconds: every condition x seed trained on `dose` problems and scored on n_eval problems,
    plus the SFT start scored once (and once more, merged, for the A/A control)."""
    train = sum(rates.train_s_per_problem[c] for c in conditions) * dose * seeds
    evals = (len(conditions) * seeds + 1 + (1 if aa_control else 0)) * n_eval * rates.eval_s_per_problem
    return train + evals


def designs(budget_s: float = 8 * 3600, acc: float = 0.35, acc_delta: float = 0.05, step_delta: float = 0.02,
            alpha: float = 0.05, rates: Rates = Rates(), seeds_options=(2, 3, 4),
            dose_options=(48, 96, 144, 192), n_eval_options=(200, 400, 600, 800, 1200),
            tests: int = 2 * len(PRIMARY)) -> list[Design]:
    """Every design within budget_s, best first (the smaller of its two powers, then the larger dose).

    The power is that of one primary comparison at the strictest Holm level alpha / tests (two
    comparisons x two metrics = 4 tests: the level the first rejection must clear), for an accuracy
    difference acc_delta at accuracy acc (McNemar, exact; the discordant share from the last study's
    ratio, rates.disc_factor) and a step-reward difference step_delta (normal approximation, the last
    study's per-problem and seed SDs, problem noise not shrinking with seeds). The dose does not enter
    the power: the effect a dose buys is unknown, so the design spends what is left on dose once the
    comparison can see acc_delta. One seed is no design: a seed x template x problem bootstrap needs
    seeds, and one run cannot tell the method from a lucky run (seeds_options starts at 2)."""
    level = alpha / tests
    p_disc = min(1.0, rates.disc_factor * 2 * acc * (1 - acc))
    out = []
    for s in seeds_options:
        for d in dose_options:
            for n in n_eval_options:
                cost = design_cost(s, d, n, rates)
                if cost > budget_s:
                    continue
                # conservative, like the step reward's problem_corr = 1: the seeds are scored on the same
                # n problems, and their outcomes on one problem are taken as one pair (seeds do not add
                # problems; what they buy is protection from one lucky seed, which no power covers)
                pa = mcnemar_power(n, p_disc, acc_delta, level)
                ps = mean_diff_power(n, rates.step_reward_sd, step_delta, level, s, rates.step_reward_seed_sd)
                out.append(Design(s, d, n, cost, pa, ps))
    out.sort(key=lambda x: (-min(x.power_acc, x.power_step), -x.dose, x.cpu_s))
    return out


def design_table(ds: list[Design], top: int = 12) -> str:
    lines = ["| seeds | RL dose | n_eval | CPU h | power, accuracy | power, step reward |", "|---|---|---|---|---|---|"]
    for x in ds[:top]:
        lines.append(f"| {x.seeds} | {x.dose} | {x.n_eval} | {x.cpu_s / 3600:.1f} | {x.power_acc:.2f} | {x.power_step:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m r3bench.results.stats",
                                 description="Power of the learning study's designs within a CPU budget.")
    ap.add_argument("--hours", type=float, default=8.0)
    ap.add_argument("--acc", type=float, default=0.35, help="expected accuracy on the learning set")
    ap.add_argument("--acc-delta", type=float, default=0.05)
    ap.add_argument("--step-delta", type=float, default=0.02)
    ap.add_argument("--eval-s", type=float, default=Rates().eval_s_per_problem,
                    help="CPU seconds to score one problem (what-if: a faster evaluation path)")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args(argv)
    ds = designs(a.hours * 3600, a.acc, a.acc_delta, a.step_delta, rates=Rates(eval_s_per_problem=a.eval_s))
    print(design_table(ds, a.top) if ds else "no design fits the budget")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
