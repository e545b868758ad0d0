"""Metrics of the code-as-action PDE track (per PDE prompt, then averaged over prompts).

    validity      fraction of a prompt's samples that are valid programs (V = 1 on every instance)
    pass@1        c / n, success = valid and nRMSE <= 0.01 (verify.VerifyConfig.success_nrmse)
    pass@k        the unbiased combinatorial estimator 1 - C(n - c, k) / C(n, k) over n >= k samples
                  with c successes (Chen et al. 2021); with n < k samples it is reported at k = n
    best-of-k     min over the first k samples of the program nRMSE (invalid = 1, capped at 1),
                  aggregated over prompts by the median ("median best-of-8 nRMSE")
"""
from __future__ import annotations

import math
from statistics import median


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k) / C(n, k), computed as a stable product. pass_at_k(8, 1, 1) == 0.125."""
    if n <= 0:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def best_of(nrmses, k: int = 8) -> float:
    vals = [min(1.0, v) if isinstance(v, (int, float)) and math.isfinite(v) else 1.0 for v in list(nrmses)[:k]]
    return min(vals) if vals else 1.0


def prompt_metrics(verdicts, k: int = 8) -> dict:
    """Per-prompt metrics from the ProgramVerdicts of its n samples."""
    n = len(verdicts)
    c = sum(1 for v in verdicts if v.success)
    return {"validity": (sum(1 for v in verdicts if v.valid) / n) if n else 0.0,
            "pass_at_1": pass_at_k(n, c, 1),
            "pass_at_k": pass_at_k(n, c, k),
            "best_nrmse": best_of([v.nrmse for v in verdicts], k),
            "reward": (sum(v.reward for v in verdicts) / n) if n else 0.0}


def agg_median(items) -> float:
    vals = [float(x) for x in items]
    return float(median(vals)) if vals else float("nan")
