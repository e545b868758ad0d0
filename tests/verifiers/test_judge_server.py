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
    # timeout_s: a 2-core machine shared with other jobs can take over a minute for one reply (the default
    # 60 s would turn load into "unreachable" drops)
    return Judge(base_url=url, model="smollm2-gguf", api_key="none", cache_dir=tmp_path, backoff_s=0.2,
                 max_reply_tokens=160, timeout_s=600, **kw)


def test_judge_verdicts_usage_and_structured_output_from_a_real_server(llama_server, tmp_path):
    j = _judge(llama_server, tmp_path, max_concurrency=2, price_in=0.15, price_out=0.6)
    rows = [{"question": p.question, "solution": p.solution, "reference": p.solution} for p in PROBS[:3]]
    vs = j.verify_many(rows)
    st = j.stats()
    assert len(vs) == 3
    # every sample is a verdict or a counted drop - never lost
    assert st["verdicts"] + st["dropped_total"] == 3 and sum(not v.valid for v in vs) == st["dropped_total"]
    for v in vs:  # how many replies parse depends on the model's exact text (it differs between CPUs)
        assert v.valid or v.explanation.startswith(("judge gave no valid verdict", "judge failed"))
        assert not v.valid or 0 <= v.first_error <= 7
    assert st["dropped"].keys() <= {"unparseable"}  # a reply that does not parse, never an unreachable server
    # llama.cpp's server refuses a json_schema response_format (HTTP 500) and takes a json_object with a
    # schema: the judge settles on that (parsing of such replies is pinned with scripted ones in test_judge.py)
    assert st["structured"] == "json_object"
    assert st["prompt_tokens"] > 300 * 3 and st["completion_tokens"] > 0  # usage from the server, every reply
    assert st["cost_usd"] == pytest.approx((st["prompt_tokens"] * 0.15 + st["completion_tokens"] * 0.6) / 1e6, abs=1e-6)
    again = _judge(llama_server, tmp_path)
    assert again.verify(**rows[0]) == vs[0] or not vs[0].valid
    assert again.stats()["requests"] == (0 if vs[0].valid else again.stats()["requests"])


@pytest.mark.parametrize("reply_tokens", [1, 160], ids=["reply_never_parses", "reply_as_the_model_writes"])
def test_judge_budget_stops_against_a_real_server(llama_server, tmp_path, reply_tokens):
    """A 1-token budget against the real server: the first verify ends with a verdict and the second
    raises, whatever the model writes. At 1 reply token no reply can parse (the grammar's first token
    opens an object), so the unreadable-reply path is taken on every machine; at 160 the reply may or
    may not parse (it depends on the model's exact text, which differs between CPUs): either way the
    first verify sends exactly one request and returns a verdict."""
    j = Judge(base_url=llama_server, model="smollm2-gguf", api_key="none", cache_dir=tmp_path, backoff_s=0.2,
              max_reply_tokens=reply_tokens, max_tokens=1, json_retries=2, timeout_s=600)
    p = PROBS[3]
    v = j.verify(p.question, p.solution, p.solution)  # started inside the budget: a verdict, not a raise
    st = j.stats()
    # exactly one reply was read: no re-ask once the budget is spent (`requests` also counts the
    # json_schema request that llama.cpp's server refuses before the judge settles on json_object)
    assert st["prompt_tokens"] > 0 and st["parse_failures"] + v.valid == 1
    assert v.valid or ("budget spent" in v.explanation and st["dropped"] == {"budget": 1})
    if reply_tokens == 1:
        assert not v.valid and st["parse_failures"] == 1
    with pytest.raises(JudgeBudgetExceeded, match="token budget"):
        j.verify(p.question + " (again)", p.solution, p.solution)
    assert j.stats()["requests"] == st["requests"]  # the raise comes before any request


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
    assert len(samples) == 2 and all(isinstance(s["resps"][0][0], str) and "acc" in s for s in samples)
