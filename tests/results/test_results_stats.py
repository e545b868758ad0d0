"""r3bench.results.stats: Holm, the exact sign test, the hierarchical bootstrap and the power of the
study's designs, each checked against a reference written apart from it (R's p.adjust values, scipy's
binomtest, a Monte Carlo simulation, a textbook closed form)."""
import math
import random

import pytest
from scipy.stats import binomtest

from r3bench.results import stats


def test_holm_matches_r_p_adjust():
    # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") -> 0.05 0.08 0.09 0.09 0.09
    assert stats.holm([0.01, 0.02, 0.03, 0.04, 0.05]) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    # order is kept, values capped at 1, NaN not counted in m
    got = stats.holm([0.04, math.nan, 0.001, 0.6])
    assert got[0] == pytest.approx(0.08) and math.isnan(got[1])
    assert got[2] == pytest.approx(0.003) and got[3] == pytest.approx(0.6)
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0]
    with pytest.raises(ValueError):
        stats.holm([1.5])


@pytest.mark.parametrize("up,down", [(4, 0), (12, 10), (9, 4), (0, 7), (30, 12), (1, 1)])
def test_sign_test_is_scipys_exact_binomial(up, down):
    assert stats.sign_test(up, down) == pytest.approx(binomtest(up, up + down, 0.5).pvalue, abs=1e-12)
    assert math.isnan(stats.sign_test(0, 0))


def _simulated_power(n, p_disc, delta, alpha, reps, rng):
    p_up, p_down = (p_disc + delta) / 2, (p_disc - delta) / 2
    hits = 0
    for _ in range(reps):
        up = down = 0
        for _ in range(n):
            u = rng.random()
            if u < p_up:
                up += 1
            elif u < p_up + p_down:
                down += 1
        p = binomtest(up, up + down, 0.5).pvalue if up + down else 1.0
        hits += p <= alpha
    return hits / reps


@pytest.mark.parametrize("n,p_disc,delta,alpha", [(120, 0.2, 0.08, 0.05), (300, 0.06, 0.03, 0.0125)])
def test_mcnemar_power_agrees_with_simulation(n, p_disc, delta, alpha):
    exact = stats.mcnemar_power(n, p_disc, delta, alpha)
    sim = _simulated_power(n, p_disc, delta, alpha, 1500, random.Random(7))
    assert abs(exact - sim) < 4 * math.sqrt(sim * (1 - sim) / 1500) + 0.01, (exact, sim)


def test_mcnemar_power_edges_and_size():
    # no effect: the power is the test's size, at most alpha (an exact test is conservative)
    assert stats.mcnemar_power(200, 0.2, 0.0, 0.05) <= 0.05
    assert stats.mcnemar_power(200, 0.2, 0.0, 0.05) > 0.02
    # monotone in n and in the effect
    assert stats.mcnemar_power(400, 0.2, 0.05) > stats.mcnemar_power(200, 0.2, 0.05)
    assert stats.mcnemar_power(200, 0.2, 0.08) > stats.mcnemar_power(200, 0.2, 0.04)
    with pytest.raises(ValueError):
        stats.mcnemar_power(100, 0.05, 0.1)


def test_mean_diff_power_closed_form():
    # one seed, no seed noise: the textbook z-test power, Phi(delta sqrt(n)/sd - z) (+ the far tail)
    from statistics import NormalDist
    nd = NormalDist()
    want = nd.cdf(0.02 * math.sqrt(400) / 0.1 - nd.inv_cdf(0.975)) + nd.cdf(-0.02 * math.sqrt(400) / 0.1 - nd.inv_cdf(0.975))
    assert stats.mean_diff_power(400, 0.1, 0.02) == pytest.approx(want)
    # seed noise costs power; seeds buy it back; with problem_corr=1 seeds do not shrink problem noise
    assert stats.mean_diff_power(400, 0.1, 0.02, seed_sd=0.02) < stats.mean_diff_power(400, 0.1, 0.02)
    assert stats.mean_diff_power(400, 0.1, 0.02, seeds=3, seed_sd=0.02) > stats.mean_diff_power(400, 0.1, 0.02, seed_sd=0.02)
    assert stats.mean_diff_power(400, 0.1, 0.02, seeds=3, problem_corr=1.0) == pytest.approx(stats.mean_diff_power(400, 0.1, 0.02))
    assert stats.mean_diff_power(400, 0.1, 0.02, seeds=3, problem_corr=0.0) > stats.mean_diff_power(400, 0.1, 0.02)


def _rows(seed_shift, n_seeds=3, n_templates=8, per=10, rng=None):
    rng = rng or random.Random(0)
    rows = []
    for s in range(n_seeds):
        shift = rng.gauss(0, seed_shift)
        for t in range(n_templates):
            for p in range(per):
                rows.append((s, f"t{t}", f"{t}-{p}", shift + rng.gauss(0, 0.1)))
    return rows


def test_hierarchical_bootstrap_widens_with_seed_noise():
    calm, noisy = _rows(0.0), _rows(0.2)
    _, lo_c, hi_c = stats.hierarchical_bootstrap(calm, iters=600)
    _, lo_n, hi_n = stats.hierarchical_bootstrap(noisy, iters=600)
    _, lo_p, hi_p = stats.hierarchical_bootstrap(noisy, iters=600, levels=("problem",))
    # seed noise is invisible to a problem-only bootstrap and widens the hierarchical interval
    assert (hi_n - lo_n) > 3 * (hi_p - lo_p)
    assert (hi_n - lo_n) > 3 * (hi_c - lo_c)
    est, lo, hi = stats.hierarchical_bootstrap(calm, iters=600)
    assert lo <= est <= hi
    assert math.isnan(stats.hierarchical_bootstrap([])[0])


def test_hierarchical_bootstrap_problem_level_matches_plain_bootstrap_width():
    rng = random.Random(3)
    vals = [rng.gauss(0, 1) for _ in range(400)]
    _, lo, hi = stats.hierarchical_bootstrap([(0, "t", i, v) for i, v in enumerate(vals)], iters=1500)
    se = (sum((v - sum(vals) / 400) ** 2 for v in vals) / 399) ** 0.5 / 20
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_designs_fit_the_budget_and_rank_by_power():
    ds = stats.designs(budget_s=8 * 3600)
    assert ds and all(d.cpu_s <= 8 * 3600 for d in ds)
    best = ds[0]
    assert min(best.power_acc, best.power_step) >= max(min(d.power_acc, d.power_step) for d in ds) - 1e-12
    # the cost counts every condition x seed, the SFT start and the A/A control
    r = stats.Rates()
    assert stats.design_cost(2, 48, 400, r) == pytest.approx(
        (36 + 67.5 + 8) * 48 * 2 + (3 * 2 + 2) * 400 * 2.9)
    assert not stats.designs(budget_s=60)
    assert "| seeds |" in stats.design_table(ds)
