"""Inference strategies as lm-eval models: RAG, StepCo's verify-then-revise, Best-of-N.

Each is an lm-eval `LM` that wraps an inner lm-eval model (`hf`, `vllm`, `local-chat-completions`,
or any other registered name) and runs a multi-call procedure per problem inside `generate_until`;
only the final answer reaches lm-eval, so any r3bench task scores it exactly like a plain model:

    lm_eval --model r3-rag     --model_args inner=hf,pretrained=r3bench/smollm2-135m-instruct,k=3,index=DIR
    lm_eval --model r3-stepco  --model_args inner=hf,pretrained=...,verifier=psv,psv_model=DIR,threshold=0.5,rounds=5
    lm_eval --model r3-bestofn --model_args inner=hf,pretrained=...,n=10,scorer=psv|symbolic|judge|vote

Our own arguments are taken out of `--model_args`; everything else (pretrained, dtype, base_url,
peft, ...) and lm-eval's batch_size / device go to the inner model. The names (REGISTRY, from the method
table r3bench/core/methods.py) are registered with lm-eval's model registry by r3bench's import hook
(r3bench/eval/hook.py), lazily, so plain `lm_eval --model r3-stepco` finds them.

One module per strategy (rag.py, stepco.py, bestofn.py) on the shared wrapper (base.py) and the step
scorer (scorer.py). Importing this package imports nothing of lm-eval; the classes load on first use.

Strategies (all open choices are arguments; the defaults follow the papers where they say):

* r3-rag: the top-k hits of the retrieval index (`python -m trainers.rag`; formulas, worked
  solutions or both: `source=`) are put in front of the prompt (in the first user turn under a chat
  template). The problem's own worked solution is never retrieved.
* r3-stepco (StepCo): generate a seven-tag solution; the verifier scores every step; if all steps
  score >= threshold, accept; else keep the steps before the first failing step k, tell the model k
  and its score, and let it rewrite step k and everything after (the kept steps are prefilled as
  the start of its answer: `prefill=true`, the default for hf/vllm; an API inner gets the kept
  steps quoted in the feedback instead). At most `rounds` revisions (default 5) after the first
  attempt; stop early when two consecutive final answers agree (unit-aware, as maj@k votes). The
  last solution is the answer.
* r3-bestofn: n samples (temperature, default 0.7; API inners get seed sample_seed + i, distinct per
  sample and per repeat of a request); the one with the best verifier score wins
  (`agg`: min / prod / mean / last over step scores; default min for the PSV, as a PRM is used, and
  mean - the share of steps before the first error - for pass/fail verifiers); `scorer=vote` picks by
  unit-aware majority vote instead; without `scorer=` it is psv when a PSV model is given (`psv_model=`
  or R3BENCH_PSV_MODEL), else vote. Both picks are recorded in the trace whatever the scorer.

Verifiers: `psv` (StepCo's process-supervised verifier, `psv_model=DIR`, see verifiers/psv.py and
`python -m trainers.psv`), `symbolic` and `judge` (verifiers/steps.py). `symbolic` and `judge`
compare with the task's reference solution (doc["solution"]): they are ORACLE verifiers (they see
the reference), recorded as such in every trace line and in the results' config; use `psv` for the
method as published. A problem without a seven-tag reference gets "nothing to verify against" from
the symbolic verifier and is accepted as is (the trace says so).

Tokens: every problem's prompt and generated tokens are counted with the inner model's tokenizer
(hf, vllm, an API inner with a huggingface tokenizer backend), or with `count_tokenizer=PATH`; failing
both, whitespace words are counted and the trace says `token_unit: words`. The means go into the
results file (config.r3bench_strategy) and every round into the trace.

Traces: one JSONL line per problem (task, doc_id, every round: prompt and generated tokens,
response, step scores, feedback, answer key; the stop reason; errors) in `trace=PATH`, or else beside
lm-eval's samples: OUTPUT_PATH/<model name>/traces_<strategy>_<time>.jsonl (OUTPUT_PATH from
lm_eval's --output_path), or else ./r3bench-traces/. A failure of the inner model on one request is
recorded in that problem's trace (its answer is then empty and scores 0 through the task); it does not
stop the run. When the inner model fails on every request before anything was generated (server down,
a chat API without --apply_chat_template), the run stops with that error instead of scoring nothing.

Under several processes (accelerate), each rank writes its own trace file (_rank<r>) and the token
means in the results config are rank 0's. Do not combine `--cache_requests` with
`--apply_chat_template`: cached contexts skip apply_chat_template, so multi-turn revisions would be
appended to an already rendered chat as plain text. Loglikelihood (multiple-choice) requests go to
the inner model unchanged for StepCo and Best-of-N, and with the retrieved block for RAG.
"""
from __future__ import annotations

import importlib

from r3bench.core import methods

# the one strategy registry: method key -> its class (in r3bench/eval/strategies/<key>.py)
CLASSES = {"rag": "RagLM", "stepco": "StepCoLM", "bestofn": "BestOfNLM"}
# lm-eval model name (core/methods.py) -> "module:class", as lm-eval's registry takes it
REGISTRY = {methods.BY_KEY[key].lm_eval_model: f"{__name__}.{key}:{cls}" for key, cls in CLASSES.items()}
NAMES = {name: target.rsplit(":", 1)[1] for name, target in REGISTRY.items()}  # lm-eval name -> class name

_LAZY = {cls: key for key, cls in CLASSES.items()}
_LAZY.update({"StrategyLM": "base", "Prompt": "base", "Problem": "base", "answer_key": "base", "make_inner": "base",
              "Scorer": "scorer", "VERIFIERS": "scorer", "ORACLE": "scorer", "AGGS": "scorer",
              "FEEDBACK": "stepco", "FEEDBACK_NO_STEPS": "stepco"})


def __getattr__(name):
    """The classes load on first use (they import lm-eval): `from r3bench.eval.strategies import StepCoLM`."""
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
