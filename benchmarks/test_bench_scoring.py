"""Scoring overhead (filters + checker) as a fraction of total lm-eval time, on SmolLM2 with --limit.

    R3BENCH_DATA_DIR=../shared/data python -m pytest benchmarks/test_bench_scoring.py -q -s

Row 1 (the anchor): one full lm-eval run of SmolLM2-135M-Instruct on five r3 tasks with --limit.
Row 2: re-scoring the responses of that run exactly as lm-eval does (filters, then the task's
process_results, which calls the checker) - timed per pass over all samples.
Target: row 2 below 1% of row 1.
"""
import os
import pathlib

import pytest

from r3bench.eval.data import BENCHMARKS

TASKS = [b.task for b in BENCHMARKS.values() if b.paper_count]  # the paper's five benchmarks, CoT prompt
LIMIT = int(os.environ.get("R3BENCH_BENCH_LIMIT", "4"))
STATE = {}


@pytest.fixture(scope="module", autouse=True)
def _data():
    d = os.environ.get("R3BENCH_DATA_DIR") or str(pathlib.Path(__file__).resolve().parents[2] / "shared" / "data")
    os.environ["R3BENCH_DATA_DIR"] = d


def _run_eval():
    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from r3bench.core import models
    lm = HFLM(pretrained=str(models.resolve("r3bench/smollm2-135m-instruct")), device="cpu", batch_size=8)
    tm = TaskManager(include_defaults=False)
    res = simple_evaluate(model=lm, tasks=TASKS, task_manager=tm, limit=LIMIT, apply_chat_template=True,
                          gen_kwargs={"max_gen_toks": 128}, log_samples=True, bootstrap_iters=0)
    STATE["samples"] = res["samples"]
    STATE["tasks"] = tm.load(TASKS)["tasks"]
    return res


def test_anchor_full_eval(benchmark):
    benchmark.pedantic(_run_eval, rounds=1, iterations=1)
    STATE["eval_s"] = benchmark.stats.stats.mean


def _rescore():
    n = 0
    for name, samples in STATE["samples"].items():
        task = STATE["tasks"][name]
        for s in samples:
            resps = [r[0] for r in s["resps"]]
            for f in task._filters:  # the task's filter ensembles, as lm-eval applies them
                for step in f.filters:
                    resps = list(step().apply([resps], [s["doc"]]))[0]
            task.process_results(s["doc"], [resps[0]] if isinstance(resps, list) else [resps])
            n += 1
    return n


def test_scoring_overhead(benchmark):
    if "samples" not in STATE:
        pytest.fail("run together with test_anchor_full_eval (same module)")
    from verifiers import worker
    from verifiers import answer

    def cold():  # no answer cached from the eval run or an earlier round
        answer.clear_caches()
        worker.clear_caches()
    n = benchmark.pedantic(_rescore, setup=cold, rounds=20, iterations=1)
    score_s = benchmark.stats.stats.mean
    frac = score_s / STATE["eval_s"]
    benchmark.extra_info.update(samples=n, eval_s=STATE["eval_s"], overhead_fraction=frac)
    print(f"\nscoring {n} samples: {1000 * score_s / n:.2f} ms/sample, {score_s:.3f} s in all; "
          f"eval {STATE['eval_s']:.1f} s; overhead {frac:.3%} of eval time (target < 1%)")
