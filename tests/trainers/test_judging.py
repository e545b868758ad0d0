"""The LLM judge in training runs and in the scorer (trainers.judging, issue 34 item 1): config fields
validated at load, the configured judge installed, a batch verified concurrently, the judge's totals in
the step log and run.json, and a spent budget that stops the run cleanly (status judge_budget_spent,
exit 3, a checkpoint to resume from, no traceback).

The judge's model is a double (tests/judge_double.py: a real HTTP server with scripted replies); the
policy is the tiny random model, whose text has no seven-tag steps, so a *generation double* (stepfix)
or a *completion double* (GRPO: the reference solution carrying the sampled text) hands the judge
seven-tag solutions, as a trained policy would.

Last, the PSV verifier's and scorer's placement: each run's config carries its own device and dtype."""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import trainer_kw  # tests/trainers/ is on sys.path (pytest's rootdir-less import)
from judge_double import GOOD, JudgeModelDouble  # tests/ is on sys.path (pytest's rootdir-less import)

from r3bench import procgen
from trainers import grpo, judging, stepfix
from trainers.core.config import make
from trainers.core.entry import main
from trainers.core.records import checkpoint_problems
from trainers.errors import ConfigError, EXIT_JUDGE_BUDGET
from verifiers import judge as J

PROBS = procgen.generate(n=8, seed=5)


@pytest.fixture()
def double():
    made = []

    def start(script=(GOOD,), **kw):
        s = JudgeModelDouble(list(script), **kw)
        made.append(s)
        return s
    yield start
    for s in made:
        s.close()


@pytest.fixture(autouse=True)
def fresh_judge(tmp_path, monkeypatch):
    """No judge carried over from another test; the judge's answer cache in this test's folder."""
    monkeypatch.setenv("R3BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(J, "_DEFAULT", None)


def judge_kw(url, **kw):
    return dict(verifier="judge", judge_base_url=url, judge_model="judge-double", **kw)


# ------------------------------------------------------------------------------------- config

@pytest.mark.parametrize("bad,why", [({"judge_max_concurrency": 0}, "judge_max_concurrency must be >= 1"),
                                     ({"judge_base_url": "localhost:8000"}, "must be an http"),
                                     ({"judge_price_in": -1}, "judge_price_in must be >= 0"),
                                     ({"judge_max_tokens": -5}, "judge_max_tokens must be >= 0"),
                                     ({"judge_max_cost_usd": 2.0}, "needs judge_price_in")])
@pytest.mark.parametrize("cls", [stepfix.Config, grpo.Config])
def test_judge_fields_are_validated_at_config_load(cls, bad, why):
    with pytest.raises(ConfigError, match=why):
        make(cls, **bad)


def test_the_config_installs_its_judge(double):
    s = double()
    cfg = make(stepfix.Config, **judge_kw(s.url, judge_max_concurrency=3, judge_price_in=2.5,
                                                 judge_max_cost_usd=1.0, judge_max_tokens=500))
    j = judging.install(cfg)
    assert j is J.default_judge() and (j.base_url, j.model, j.max_concurrency) == (s.url, "judge-double", 3)
    assert (j.price_in, j.max_cost_usd, j.max_tokens) == (2.5, 1.0, 500)
    assert judging.workers(cfg) == 3 and judging.workers(make(stepfix.Config)) == 1
    assert judging.install(make(grpo.Config)) is None  # verifier symbolic: nothing installed
    assert set(judging.step_logs(cfg)) == {"judge_requests", "judge_dropped", "judge_tokens", "judge_cost_usd"}
    assert judging.step_logs(make(grpo.Config)) == {} and judging.run_record(make(grpo.Config)) == {}


# ------------------------------------------------------------------------ concurrency, no training

def _rows(n):
    return [{"question": p.question, "solution": p.solution, "reference": p.solution} for p in PROBS[:n]]


def test_grpo_position_reward_verifies_a_batch_concurrently(double):
    s = double(delay=0.3)
    cfg = make(grpo.Config, rewards="position", **judge_kw(s.url, judge_max_concurrency=4))
    judging.install(cfg)
    counts = Counter()
    fn = grpo.reward_funcs(cfg, counts, defaultdict(float))[0]
    rows = _rows(4)
    out = fn(prompts=[r["question"] for r in rows], completions=[r["solution"] for r in rows],
             question=[r["question"] for r in rows], reference=[r["reference"] for r in rows])
    assert out == [4 / 8] * 4 and len(s.requests) == 4
    assert s.max_active > 1, "the completions of a batch were verified one at a time"


def test_position_reward_lets_a_spent_budget_through(double):
    """A spent budget stops the run: it is not one completion's 'verifier error' (0 reward, counted).
    The position reward raises it; GRPO's wrapper keeps it (`stop`) and gives the batch no rewards, so
    that TRL's gather of the rewards completes on every rank before GRPOPhases.r3_rewards
    raises it on every rank (distributed.raise_together; tests/trainers/test_distributed.py)."""
    s = double(usage=(100, 20))
    cfg = make(grpo.Config, rewards="position", **judge_kw(s.url, judge_max_tokens=100, judge_max_concurrency=1))
    judging.install(cfg)
    counts = Counter()
    fn = grpo.reward_funcs(cfg, counts, defaultdict(float))[0]
    r = _rows(2)
    kw = dict(prompts=None, completions=[x["solution"] for x in r], question=[x["question"] for x in r],
              reference=[x["reference"] for x in r])
    with pytest.raises(J.JudgeBudgetExceeded):
        fn.fn(**kw)  # the reward itself
    out = fn(**kw)
    assert out == [None, None] and isinstance(fn.stop, J.JudgeBudgetExceeded) and not counts


def test_scorer_verifies_many_concurrently_with_the_judge(double):
    from r3bench.eval.strategies.scorer import Scorer

    s = double(delay=0.3)
    J.configure(base_url=s.url, model="judge-double", max_concurrency=4)
    got = Scorer("judge").steps_many(_rows(4))
    assert [g["first_error"] for g in got] == [4] * 4 and got[0]["scores"][:4] == [1.0, 1.0, 1.0, 0.0]
    assert s.max_active > 1
    sym = Scorer("symbolic").steps_many(_rows(2))
    assert [g["valid"] for g in sym] == [True, True]


# -------------------------------------------------------------------------------- training runs

def base_kw(tiny, data, out, **kw):
    return trainer_kw.base_kw(tiny, data, out, **{"batch_size": 4, "save_steps": 50, **kw})


def _refs(data):
    return {json.loads(x)["prompt"]: json.loads(x)["completion"] for x in Path(data, "sft.jsonl").read_text().splitlines()}


def _metrics(out):
    return [json.loads(x) for x in (Path(out) / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_stepfix_with_the_judge_concurrent_accounted_and_stopped_by_its_budget(tiny, data, tmp_path, double, capsys):
    """Generation double: y1 is the reference solution, y2 the same marked as revised (the judge double
    says step 4 is wrong, so every problem is revised). 8 requests of 120 tokens in step 1; a budget of
    900 tokens lets all of them through and stops step 2 before its first request."""
    refs = _refs(data)

    class GenerationDouble(stepfix.StepFixTrainer):
        def generate(self, model, chats):
            texts = [refs[c[0]["content"]] for c in chats]
            if len(chats[0]) > 1:  # the revision
                texts = [t.replace("<problem_analysis>", "<problem_analysis>Revised. ", 1) for t in texts]
            return [self.tok(t, add_special_tokens=False)["input_ids"] for t in texts]

    s = double(delay=0.2, usage=(100, 20))
    out = tmp_path / "run"
    argv = [f"--{k}={v}" for k, v in base_kw(tiny, data, out).items()]
    argv += [f"--{k}={v}" for k, v in judge_kw(s.url, judge_max_concurrency=4, judge_max_tokens=900,
                                                 judge_price_in=1.0, judge_price_out=2.0).items()]
    rc = main(stepfix.Config, lambda cfg: stepfix.train(cfg, trainer_cls=GenerationDouble), argv)
    err = capsys.readouterr().err
    assert rc == EXIT_JUDGE_BUDGET == 3
    assert "stopped: judge token budget spent" in err and "Traceback" not in err
    assert s.max_active > 1, "a micro-batch's samples were verified one at a time"
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "judge_budget_spent" and "token budget" in run["error"] and "traceback" not in run
    st = run["judge"]
    assert (st["requests"], st["prompt_tokens"], st["completion_tokens"], st["dropped_total"]) == (8, 800, 160, 0)
    assert st["cost_usd"] == pytest.approx((800 * 1.0 + 160 * 2.0) / 1e6) and st["model"] == "judge-double"
    assert run["global_step"] == 1 and run["checkpoint"] == "checkpoint-1"
    assert not checkpoint_problems(out / "checkpoint-1")  # saved at the stop: save_steps is 50
    step1 = next(m for m in _metrics(out) if m.get("step") == 1 and "loss" in m)
    assert (step1["judge_requests"], step1["judge_tokens"], step1["judge_dropped"]) == (8, 960, 0)
    assert step1["judge_cost_usd"] == pytest.approx(st["cost_usd"]) and step1["revised"] == 4
    recs = [json.loads(x) for x in (out / "stepfix_samples.jsonl").read_text().splitlines()]
    assert len(recs) == 4 and all(r["e1"] == 4 and r["e2"] == 4 for r in recs)


class CompletionDouble:
    """GRPO's position reward, handed each sampled completion inside its problem's reference solution
    (a seven-tag solution, as a trained policy writes; the sampled text makes each one a new judge
    request): the tiny random model writes no tags, and the judge is only asked about tagged solutions."""

    def __init__(self, inner):
        self.inner, self.__name__ = inner, inner.__name__

    def __call__(self, prompts=None, completions=None, **kw):
        from verifiers.rewards import completion_text

        tagged = [ref.replace("<problem_analysis>", "<problem_analysis>" + re.sub(r"[<>]", " ", completion_text(c) or "")
                              + f" [{i}] ", 1) for i, (c, ref) in enumerate(zip(completions, kw["reference"]))]
        out = self.inner(prompts=prompts, completions=tagged, **kw)
        self.last_results = self.inner.last_results
        return out


@pytest.mark.slow
def test_grpo_with_the_judge_concurrent_accounted_and_stopped_by_its_budget(tiny, data, tmp_path, double, monkeypatch):
    """4 completions a step, 120 tokens each: a budget of 450 tokens lets step 1's through and stops step 2."""
    real = grpo.REWARD_FACTORIES["position"]
    monkeypatch.setitem(grpo.REWARD_FACTORIES, "position", lambda cfg: CompletionDouble(real(cfg)))
    s = double(delay=0.2, usage=(100, 20))
    out = tmp_path / "run"
    cfg = make(grpo.Config, **base_kw(tiny, data, out), group_size=2, rewards="position",
                      max_completion_length=8, **judge_kw(s.url, judge_max_concurrency=4, judge_max_tokens=450))
    with pytest.raises(J.JudgeBudgetExceeded):
        grpo.train(cfg)
    assert s.max_active > 1, "a batch's completions were verified one at a time"
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "judge_budget_spent" and run["judge"]["requests"] == 4
    assert run["judge"]["prompt_tokens"] == 400 and run["checkpoint"] == "checkpoint-1"
    assert (out / "checkpoint-1").is_dir() and not checkpoint_problems(out / "checkpoint-1")
    step1 = next(m for m in _metrics(out) if m.get("step") == 1 and "loss" in m)
    assert (step1["judge_requests"], step1["judge_tokens"], step1["judge_dropped"]) == (4, 480, 0)


@pytest.mark.slow
def test_stepfix_with_a_real_judge_server_records_its_stats_and_stops_at_the_budget(tiny, data, tmp_path, llama_server,
                                                                                    capsys):
    """The same run against a REAL OpenAI-compatible server with a real model (conftest's llama_server:
    llama-cpp-python serving SmolLM2): a budget of 1 token lets the first requests through and stops the
    run at the next one. A 135M judge judges badly: this checks the plumbing and the accounting only."""
    refs = _refs(data)

    class GenerationDouble(stepfix.StepFixTrainer):
        def generate(self, model, chats):
            return [self.tok(refs[c[0]["content"]], add_special_tokens=False)["input_ids"] for c in chats]

    out = tmp_path / "run"
    argv = [f"--{k}={v}" for k, v in base_kw(tiny, data, out, batch_size=2).items()]
    argv += ["--verifier=judge", f"--judge_base_url={llama_server}", "--judge_model=smollm2-gguf",
             "--judge_max_concurrency=2", "--judge_max_tokens=1", "--judge_price_in=0.15", "--judge_price_out=0.6"]
    rc = main(stepfix.Config, lambda cfg: stepfix.train(cfg, trainer_cls=GenerationDouble), argv)
    err = capsys.readouterr().err
    assert rc == 3 and "stopped: judge token budget spent" in err and "Traceback" not in err
    run = json.loads((out / "run.json").read_text())
    st = run["judge"]
    assert run["status"] == "judge_budget_spent" and st["model"] == "smollm2-gguf" and st["base_url"] == llama_server
    # requests include the ones llama.cpp refused for their response_format (no tokens spent); y2 is y1
    # again (the generation double), so its verdict is a cache hit
    assert st["requests"] >= 1 and st["verdicts"] - st["cache_hits"] + st["dropped_total"] <= 2, st
    assert st["prompt_tokens"] > 300 and st["completion_tokens"] > 0
    assert st["cost_usd"] == pytest.approx((st["prompt_tokens"] * 0.15 + st["completion_tokens"] * 0.6) / 1e6, abs=1e-6)
    assert st["structured"] == "json_object"  # llama.cpp refuses json_schema and takes a json_object with a schema
    # the stop came in step 1 (no checkpoint to keep) or, when y1 needed no revision, before step 2's first request
    assert run["checkpoint"] == (f"checkpoint-{run['global_step']}" if run["global_step"] else None)


def test_the_judge_budget_is_the_whole_runs_split_over_the_ranks(monkeypatch):
    """Each rank counts only its own judge requests; a whole budget per rank let an 8-process run spend
    8x what was set. The budget is split evenly over the ranks."""
    from trainers import judging, stepfix

    cfg = stepfix.Config(verifier="judge", judge_price_in=1.0, judge_price_out=2.0, judge_max_cost_usd=8.0,
                         judge_max_tokens=1000)
    monkeypatch.setattr(J, "_DEFAULT", None)  # install() sets the process's default judge: undone after
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert judging.rank_budget(cfg) == (8.0, 1000)
    monkeypatch.setenv("WORLD_SIZE", "8")
    assert judging.rank_budget(cfg) == (1.0, 125)
    j = judging.install(cfg)
    assert j.max_cost_usd == 1.0 and j.max_tokens == 125
    cfg0 = stepfix.Config(verifier="judge")
    assert judging.rank_budget(cfg0) == (None, None)


# ------------------------------------------------------------------------------------- the PSV's placement

class PsvLoaderDouble:
    """A double of verifiers.psv.PSV's model loading: records the placement it was asked for, loads no model."""

    def __init__(self, path, threshold=0.5, device=None, dtype=None):
        self.path, self.threshold, self.device, self.dtype = path, threshold, device, dtype

    def step_scores(self, question, solution):
        return []


def test_psv_verifier_and_scorer_load_on_the_training_device_per_config(tmp_path, monkeypatch):
    """A run training on cuda:LOCAL_RANK in bf16 gives its PSV verifier (verifier_config) and its PSPO scorer
    that device and dtype, through its own config; a CPU run's config in the same process keeps the CPU in
    float32, before and after."""
    import torch

    from verifiers import psv

    (tmp_path / "psv").mkdir()
    monkeypatch.setattr(psv, "PSV", PsvLoaderDouble)
    monkeypatch.setattr(psv, "_LOADED", {})
    monkeypatch.setattr(grpo, "PSV", PsvLoaderDouble)
    monkeypatch.setenv("LOCAL_RANK", "1")
    kw = dict(verifier="psv", psv_model=str(tmp_path / "psv"))
    cpu_cfg = make(stepfix.Config, output_dir=str(tmp_path / "cpu"), bf16="false", **kw)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU run
    gpu_cfg = make(stepfix.Config, output_dir=str(tmp_path / "gpu"), bf16="true", **kw)
    gpu = judging.verifier_config(gpu_cfg)
    assert (gpu.device, gpu.dtype) == ("cuda:1", "bfloat16")
    assert (psv.load(gpu).device, psv.load(gpu).dtype) == ("cuda:1", "bfloat16")
    scorer = grpo._step_scorer(make(grpo.Config, output_dir=str(tmp_path / "g"), bf16="true", **kw))
    assert (scorer.__self__.device, scorer.__self__.dtype) == ("cuda:1", "bfloat16")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    cpu = judging.verifier_config(cpu_cfg)
    assert (cpu.device, cpu.dtype) == ("cpu", "float32")
    assert (psv.load(cpu).device, psv.load(cpu).dtype) == ("cpu", "float32")
    assert (psv.load(gpu).device, psv.load(gpu).dtype) == ("cuda:1", "bfloat16")  # not moved by the CPU run
