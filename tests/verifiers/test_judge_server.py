"""The judge, lm-eval's API model and the strategy wrappers against a REAL OpenAI-compatible server
running a REAL model on this machine (llama-cpp-python's server with the packaged SmolLM2 GGUF; the
`llama_server` fixture in conftest.py). A 135M judge judges badly: these tests check the plumbing,
the parsing and the accounting, not the judgement."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from r3bench import procgen
from verifiers.judge import Judge, JudgeBudgetExceeded

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PROBS = procgen.generate(n=4, seed=3)


def _judge(url, tmp_path, **kw):
    return Judge(base_url=url, model="smollm2-gguf", api_key="none", cache_dir=tmp_path, backoff_s=0.2,
                 max_reply_tokens=160, **kw)


def test_judge_verdicts_usage_and_structured_output_from_a_real_server(llama_server, tmp_path):
    j = _judge(llama_server, tmp_path, max_concurrency=2, price_in=0.15, price_out=0.6)
    rows = [{"question": p.question, "solution": p.solution, "reference": p.solution} for p in PROBS[:3]]
    vs = j.verify_many(rows)
    st = j.stats()
    assert len(vs) == 3
    # every sample is a verdict or a counted drop - never lost
    assert st["verdicts"] + st["dropped_total"] == 3 and sum(not v.valid for v in vs) == st["dropped_total"]
    for v in vs:
        assert v.valid or v.explanation.startswith("judge")
        assert not v.valid or 0 <= v.first_error <= 7
    # llama.cpp's server refuses a json_schema response_format (HTTP 500) and takes a json_object with a
    # schema: the judge settles on that, and the grammar-constrained replies parse
    assert st["structured"] == "json_object" and st["verdicts"] >= 2
    assert st["prompt_tokens"] > 300 * st["verdicts"] and st["completion_tokens"] > 0  # usage from the server
    assert st["cost_usd"] == pytest.approx((st["prompt_tokens"] * 0.15 + st["completion_tokens"] * 0.6) / 1e6, abs=1e-6)
    again = _judge(llama_server, tmp_path)
    assert again.verify(**rows[0]) == vs[0] or not vs[0].valid
    assert again.stats()["requests"] == (0 if vs[0].valid else again.stats()["requests"])


def test_judge_budget_stops_against_a_real_server(llama_server, tmp_path):
    j = _judge(llama_server, tmp_path, max_tokens=1)
    p = PROBS[3]
    j.verify(p.question, p.solution, p.solution)  # the first request is inside the budget
    with pytest.raises(JudgeBudgetExceeded):
        j.verify(p.question + " (again)", p.solution, p.solution)
    assert j.stats()["requests"] >= 1


def test_lm_eval_local_chat_completions_runs_r3_tasks(llama_server, tmp_path, shared_data):
    """Plain `lm_eval --model local-chat-completions` on an r3 task, scored by r3bench's checker."""
    out = tmp_path / "out"
    env = {**os.environ, "OPENAI_API_KEY": "none", "R3BENCH_DATA_DIR": str(shared_data)}
    cmd = [sys.executable, "-m", "lm_eval", "--model", "local-chat-completions", "--model_args",
           f"model=smollm2-gguf,base_url={llama_server}/chat/completions,num_concurrent=2,"
           "tokenized_requests=False,max_retries=2", "--tasks", "r3_mmlu_college", "--limit", "2",
           "--apply_chat_template", "--gen_kwargs", "max_gen_toks=96", "--output_path", str(out),
           "--log_samples"]
    r = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(next(out.rglob("results_*.json")).read_text())
    assert "acc,none" in res["results"]["r3_mmlu_college"]
    samples = [json.loads(x) for x in next(out.rglob("samples_r3_mmlu_college_*.jsonl")).read_text().splitlines()]
    assert len(samples) == 2 and all(s["resps"][0][0].strip() for s in samples)
