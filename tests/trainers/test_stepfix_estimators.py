"""stepfix's gradient estimators on a small exact case (issue 50 item 2): the paper's loss
(`baseline: none`), the r1 and running-mean baselines, and RLOO (`baseline: rloo`, k revisions of one
y1), each through the trainer's own loss (trainers.stepfix_loss.stepfix_loss, loo_baseline).

The toy policy: a softmax over K = 4 discrete "revisions" y2 with logits theta and known rewards
R = (0 [a FORMAT failure], 0.25, 0.5, 1.0); the first attempt earned r1 = 0.625. The objective is
J(theta) = E_{y2 ~ pi}[R(y2)], whose exact gradient is dJ/dtheta_j = pi_j (R_j - J). Each estimator's
expectation is computed exactly by enumerating every tuple of k revisions (weights prod pi), and by
Monte Carlo (fixed seed, Python's own generator: the same draws on any machine). Every estimator here
is unbiased - the paper's b = 0 too - and differs in what a single sample does and in variance: the
paper's loss pushes UP every revision with R > 0, also one worse than its first attempt; r1 and RLOO
push such a revision down.

Real trainer runs (TRL / peft steps on a tiny random model) of the rloo option: test_stepfix_rloo_trains."""
from __future__ import annotations

import itertools
import json
import math
import random

import pytest

torch = pytest.importorskip("torch")

from trainers.stepfix_loss import loo_baseline, stepfix_loss  # noqa: E402

THETA = (0.2, -0.1, 0.3, 0.0)
R = (0.0, 0.25, 0.5, 1.0)
R1 = 0.625  # the first attempt's reward: its first error at step 5 of 7, 5 / 8
MEAN = 0.4  # the running-mean baseline's value before this batch (it does not depend on this batch's samples)
WORSE = 1  # a revision whose reward (0.25) is below the first attempt's (0.625) and above the FORMAT one's


def pi() -> torch.Tensor:
    return torch.softmax(torch.tensor(THETA, dtype=torch.float64), 0)


def exact_gradient() -> torch.Tensor:
    """dJ/dtheta of J = sum_j pi_j R_j: pi_j (R_j - J)."""
    p, r = pi(), torch.tensor(R, dtype=torch.float64)
    return p * (r - (p * r).sum())


def estimate(how: str, revisions: tuple[int, ...], y1_grad: list | None = None) -> torch.Tensor:
    """The estimator's gradient ascent direction (-d loss / d theta) for the k revisions `revisions` of
    one first attempt, through stepfix_loss: one token per revision, beta 0. log pi(y1|x) comes from
    its own logits (a leaf, theta1): its gradient is appended to `y1_grad` when given."""
    theta = torch.tensor(THETA, dtype=torch.float64, requires_grad=True)
    theta1 = torch.tensor(THETA, dtype=torch.float64, requires_grad=True)
    k = len(revisions)
    idx = torch.tensor(revisions)
    lp2 = torch.log_softmax(theta, 0)[idx].unsqueeze(1)  # [k, 1]
    lp1 = torch.log_softmax(theta1, 0)[2].expand(k).unsqueeze(1)  # log pi(y1|x), y1 = "revision" 2
    ones = torch.ones(k, 1, dtype=torch.float64)
    r2 = torch.tensor([R[i] for i in revisions], dtype=torch.float64)
    baseline = {"none": None, "r1": torch.full_like(r2, R1), "mean": torch.full_like(r2, MEAN),
                "rloo": loo_baseline(r2, [0] * k) if k > 1 else None}[how]
    loss, _ = stepfix_loss(lp2, ones, lp1, ones, r2, torch.zeros(k, 1, dtype=torch.float64), beta=0.0,
                           baseline=baseline)
    loss.backward()
    if y1_grad is not None:
        y1_grad.append(theta1.grad)
    return -theta.grad


def exact_moments(how: str, k: int) -> tuple[torch.Tensor, float]:
    """(E[g], E||g - E[g]||^2) of the estimator over every tuple of k revisions drawn from pi."""
    p = pi()
    mean = torch.zeros(4, dtype=torch.float64)
    tuples = list(itertools.product(range(4), repeat=k))
    gs = {t: estimate(how, t) for t in tuples}
    for t, g in gs.items():
        mean += math.prod(float(p[i]) for i in t) * g
    var = sum(math.prod(float(p[i]) for i in t) * float(((g - mean) ** 2).sum()) for t, g in gs.items())
    return mean, var


ESTIMATORS = [("none", 1), ("r1", 1), ("mean", 1), ("none", 2), ("rloo", 2), ("rloo", 3)]


@pytest.mark.parametrize("how,k", ESTIMATORS)
def test_every_estimator_is_unbiased_exactly(how, k):
    """Enumerated over every tuple of k revisions, each estimator's expectation is the exact gradient."""
    mean, _ = exact_moments(how, k)
    assert torch.allclose(mean, exact_gradient(), atol=1e-12), (how, k, mean, exact_gradient())


@pytest.mark.parametrize("how,k", ESTIMATORS)
def test_monte_carlo_mean_is_within_four_standard_errors(how, k):
    """4,000 draws (random.Random(0)): every component of the Monte Carlo mean is within 4 standard
    errors (from the exact per-component variance) of the exact gradient, and within 0.01 absolute."""
    p = [float(x) for x in pi()]
    rng = random.Random(0)
    n = 4000
    cache, total = {}, torch.zeros(4, dtype=torch.float64)
    sq = torch.zeros(4, dtype=torch.float64)
    for _ in range(n):
        t = tuple(rng.choices(range(4), weights=p, k=k))
        if t not in cache:
            cache[t] = estimate(how, t)
        total += cache[t]
    mc = total / n
    exact = exact_gradient()
    for t in itertools.product(range(4), repeat=k):  # exact per-component variance
        sq += math.prod(p[i] for i in t) * (estimate(how, t) - exact) ** 2
    se = (sq / n).sqrt()
    assert torch.all((mc - exact).abs() <= 4 * se + 1e-12), (how, k, mc, exact, se)
    assert torch.all((mc - exact).abs() < 0.01), (how, k, mc, exact)


def test_paper_loss_reinforces_every_non_format_revision():
    """baseline none: a single revision y with R(y) > 0 raises its own logit (its probability), also
    when it is worse than the first attempt; a FORMAT revision (R 0) gives no gradient at all."""
    for j, r in enumerate(R):
        g = estimate("none", (j,))
        if r == 0:
            assert torch.all(g == 0), g
        else:
            assert g[j] > 0, (j, g)
    assert R[WORSE] < R1 and estimate("none", (WORSE,))[WORSE] > 0


def test_paper_baseline_log_pi_y1_has_zero_gradient():
    """The paper's log pi(y1|x) term is detached: no gradient reaches the logits that produced y1, and
    the loss's gradient is the same as with that term left out."""
    seen = []
    for how in ("none", "r1", "rloo"):
        estimate(how, (1, 3), y1_grad=seen)
    assert all(g is None or torch.all(g == 0) for g in seen), seen


def test_r1_and_rloo_push_a_worse_revision_down():
    """r1: a revision below its first attempt lowers its own logit. RLOO: a revision below the other
    revisions of its y1 lowers its logit, one above them raises it, whatever the sign of r2."""
    assert estimate("r1", (WORSE,))[WORSE] < 0
    g = estimate("rloo", (WORSE, 3))  # 0.25 beside 1.0: WORSE goes down, 3 goes up
    assert g[WORSE] < 0 and g[3] > 0
    g = estimate("rloo", (WORSE, 0))  # 0.25 beside a FORMAT failure: WORSE goes up, the FORMAT one down
    assert g[WORSE] > 0 and g[0] < 0
    g = estimate("rloo", (2, 2))  # equal rewards: no signal
    assert torch.allclose(g, torch.zeros(4, dtype=torch.float64))


@pytest.mark.parametrize("k,ratio", [(2, 0.96), (3, 0.7)])
def test_rloo_has_less_variance_than_the_paper_loss_at_equal_samples(k, ratio):
    """k revisions per first attempt: RLOO's exact variance (E||g - dJ||^2) is below the paper's on the
    same k samples. In this toy (rewards 0-1, J ~0.5, as stepfix's) the gain is small at k = 2 (0.099 vs
    0.105: one other revision is a noisy baseline) and a third at k = 3 (0.045 vs 0.070)."""
    _, v_paper = exact_moments("none", k)
    _, v_rloo = exact_moments("rloo", k)
    assert v_rloo < ratio * v_paper, (k, v_rloo, v_paper)


def test_loo_baseline_values_and_groups():
    r2 = torch.tensor([0.0, 0.5, 1.0, 0.25, 0.75])
    b = loo_baseline(r2, ["a", "a", "a", "b", "b"])
    assert torch.allclose(b, torch.tensor([0.75, 0.5, 0.25, 0.75, 0.25]))
    adv = r2 - b
    assert abs(float(adv[:3].sum())) < 1e-6 and abs(float(adv[3:].sum())) < 1e-6  # each group's advantages sum to 0
    with pytest.raises(ValueError, match="needs >= 2"):
        loo_baseline(torch.tensor([0.5, 0.5, 1.0]), ["a", "a", "b"])


def test_rloo_config_needs_two_revisions():
    from trainers import stepfix
    from trainers.core.config import make
    from trainers.errors import ConfigError

    with pytest.raises(ConfigError, match="revisions >= 2"):
        make(stepfix.Config, baseline="rloo")
    assert make(stepfix.Config, baseline="rloo", revisions=4).revisions == 4
    assert make(stepfix.Config).baseline == "none" and make(stepfix.Config).revisions == 1  # the paper by default


@pytest.mark.slow
def test_stepfix_rloo_trains(tiny, data, tmp_path):
    """A real run (TRL/peft steps, tiny random model) with revisions 2 and baseline rloo: verifier double
    y1 wrong at step 2 (r1 0.25), its two revisions wrong at step 5 (0.625) and step 1 (0.125): advantages
    +0.5 and -0.5 (each against the other), summing to 0; the adapter moves."""
    pytest.importorskip("trl")
    from test_trainers import Snapshot, _verdict, check_trained, verifier_double_trainer
    from trainer_kw import base_kw

    from trainers import stepfix
    from trainers.core.config import make

    T = verifier_double_trainer([_verdict(2, 7), _verdict(5, 7), _verdict(1, 7)])
    snap = Snapshot()
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=2, batch_size=1), max_new_tokens=8,
               learning_rate=1e-3, revisions=2, baseline="rloo", start_check_n=0)
    stepfix.train(cfg, extra_callbacks=[snap], trainer_cls=T)
    check_trained(snap, tmp_path)
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 2
    for rec in recs:
        revs = rec["revisions"]
        assert [r["r2"] for r in revs] == [0.625, 0.125]
        assert [round(r["adv"], 6) for r in revs] == [0.5, -0.5]
        assert revs[0]["group"] == revs[1]["group"]
    logged = [d for d in snap.logs if "revised" in d]
    assert logged and all(d["revised"] == 2 for d in logged)


def test_mean_baseline_first_batch_is_leave_one_out():
    """baseline: mean on the first batch (no earlier mean): each sample's b is the mean of the batch's
    other r2 (it used the batch mean with the sample's own r2 in: biased), 0 for a batch of one; the running
    mean then starts at the batch mean and later batches use it."""
    from types import SimpleNamespace

    from trainers import stepfix
    from trainers.core.config import make
    from trainers.stepfix_trainer import StepFixTrainer

    me = SimpleNamespace(cfg=make(stepfix.Config, baseline="mean", baseline_momentum=0.9), _dummy=False,
                         r2_running_mean=None, _batch_r2_stats=(1.8, 3))
    b = StepFixTrainer._baseline(me, [None] * 3, torch.tensor([0.2, 0.6, 1.0], dtype=torch.float64))
    assert torch.allclose(b, torch.tensor([0.8, 0.6, 0.4], dtype=torch.float64))
    assert me.r2_running_mean == pytest.approx(0.6)
    me._batch_r2_stats = (0.0, 2)
    b = StepFixTrainer._baseline(me, [None] * 2, torch.tensor([0.0, 0.0], dtype=torch.float64))
    assert b.tolist() == [0.6, 0.6] and me.r2_running_mean == pytest.approx(0.54)
    one = SimpleNamespace(cfg=me.cfg, _dummy=False, r2_running_mean=None, _batch_r2_stats=(0.7, 1))
    assert StepFixTrainer._baseline(one, [None], torch.tensor([0.7])).tolist() == [0.0]


@pytest.mark.slow
def test_stepfix_rloo_groups_revisions_by_their_own_y1(tiny, data, tmp_path):
    """batch_size 2, revisions 2, first attempts with distinct verdicts (r1 0.25 and 0.375): each
    revision's b is the other revision of ITS y1 (not of the batch): problem A's revisions r2 0.625 and
    0.125 get +-0.5, problem B's 0.75 and 0.5 get +-0.25; groups differ between the problems."""
    pytest.importorskip("trl")
    from test_trainers import _verdict, verifier_double_trainer
    from trainer_kw import base_kw

    from trainers import stepfix
    from trainers.core.config import make

    # per step: y1 of A, y1 of B, then A's two revisions and B's two
    T = verifier_double_trainer([_verdict(2, 7), _verdict(3, 7), _verdict(5, 7), _verdict(1, 7),
                                 _verdict(6, 7), _verdict(4, 7)])
    cfg = make(stepfix.Config, **base_kw(tiny, data, tmp_path, max_steps=1, batch_size=2), max_new_tokens=4,
               revisions=2, baseline="rloo", start_check_n=0)
    stepfix.train(cfg, trainer_cls=T)
    recs = [json.loads(x) for x in (tmp_path / "stepfix_samples.jsonl").read_text().splitlines()]
    assert [r["r1"] for r in recs] == [0.25, 0.375]
    want = {0.25: ([0.625, 0.125], [0.5, -0.5]), 0.375: ([0.75, 0.5], [0.25, -0.25])}
    for rec in recs:
        revs = rec["revisions"]
        r2, adv = want[rec["r1"]]
        assert [r["r2"] for r in revs] == r2
        assert [round(r["adv"], 6) for r in revs] == adv
        assert revs[0]["group"] == revs[1]["group"]
    assert recs[0]["revisions"][0]["group"] != recs[1]["revisions"][0]["group"]
