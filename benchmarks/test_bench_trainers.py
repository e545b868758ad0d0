"""Seconds per optimizer step of stepfix beside its anchor, GRPO, on the same model and batch.

    python -m pytest benchmarks/test_bench_trainers.py --benchmark-only \
        [R3BENCH_BENCH_MODEL=r3bench/smollm2-135m-instruct  R3BENCH_BENCH_TOKENS=128]

Both steps see 4 problems and sample 8 completions of at most R3BENCH_BENCH_TOKENS tokens
(stepfix: y1 and y2 per problem; GRPO: a group of 2 per problem) with the position reward /
symbolic verifier; each round builds a fresh trainer (not timed) and times one optimizer step.
The shares of generation, verification and the rest (forward, backward) go to extra_info.
The default model is the tiny random one (CPU seconds); set R3BENCH_BENCH_MODEL for SmolLM2.
"""
from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("trl")


@pytest.fixture(scope="module")
def setup_dirs(tmp_path_factory):
    from r3bench.core import models
    from r3bench.procgen.export import export

    root = tmp_path_factory.mktemp("bench")
    model = os.environ.get("R3BENCH_BENCH_MODEL") or str(models.build_tiny(root / "tiny"))
    export(root / "data", n=60, seed=1, log=lambda *a: None)
    return root, model


def _shares(out):
    logs = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    d = next(x for x in logs if "loss" in x)
    keys = [k for k in d if k.startswith("share_")]
    return {k: round(float(d[k]), 3) for k in keys}


@pytest.mark.parametrize("method", ["stepfix", "grpo"])
def test_bench_trainer_step(benchmark, setup_dirs, method):
    from trainers import grpo, stepfix
    from trainers.core import config

    root, model = setup_dirs
    tokens = int(os.environ.get("R3BENCH_BENCH_TOKENS", "128"))
    shared = dict(model=model, data=str(root / "data"), max_steps=1, eval_tasks="", report_to="none",
                  save_steps=100, max_length=2048)
    runs = []

    def make():
        out = root / f"{method}-{len(runs)}"
        if method == "stepfix":
            cfg = config.make(stepfix.Config, output_dir=str(out), batch_size=4, max_new_tokens=tokens, **shared)
            tr = stepfix.build(cfg)[0]
        else:
            cfg = config.make(grpo.Config, output_dir=str(out), batch_size=8, group_size=2, rewards="position",
                              max_completion_length=tokens, **shared)
            tr = grpo.build(cfg)[0]
        runs.append(out)
        return (tr,), {}

    benchmark.pedantic(lambda tr: tr.train(), setup=make, rounds=2, iterations=1)
    benchmark.extra_info.update({"model": model, "max_new_tokens": tokens, "problems_per_step": 4,
                                 "completions_per_step": 8, **_shares(runs[-1])})
