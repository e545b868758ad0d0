"""Every r3bench task, end to end through real lm-eval with `--model hf` on a tiny random model.

The tiny model (random weights, real tokenizer and chat template) exercises the whole pipeline:
dataset from the data directory, prompt, chat template, generation, filters, the checker, metrics,
results and samples files. Its answers are nonsense; the assertions are about the run, not the score.
"""
import glob
import json
import os
import subprocess
import sys

import pytest

from r3bench.eval.data import PAPER_COUNTS

ALL_TASKS = [f"r3_{b}{v}" for b in PAPER_COUNTS for v in ("", "_structured", "_sc")] + \
    ["r3_mmlu_high_test", "r3_mmlu_college_test", "r3_procgen", "r3_procgen_cot", "r3_demo", "r3_demo_structured"]


@pytest.fixture(scope="module")
def lm(tiny):
    from lm_eval.models.huggingface import HFLM
    return HFLM(pretrained=str(tiny), device="cpu", batch_size=16)


@pytest.fixture(autouse=True)
def _data(shared_data, monkeypatch):
    monkeypatch.setenv("R3BENCH_DATA_DIR", str(shared_data))


def _evaluate(lm, tasks, **kw):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager
    return simple_evaluate(model=lm, tasks=tasks, task_manager=TaskManager(include_defaults=False),
                           gen_kwargs={"max_gen_toks": kw.pop("max_gen_toks", 4)}, bootstrap_iters=0, **kw)


@pytest.mark.slow
def test_every_task_runs_with_limit(lm):
    res = _evaluate(lm, ALL_TASKS, limit=2)
    for t in ALL_TASKS:
        r = res["results"][t]
        assert 0.0 <= r["acc,none" if not t.endswith("_sc") else "acc,all_samples"] <= 1.0, t
    assert "format_compliance,none" in res["results"]["r3_jeebench_structured"]
    assert "jee_marks,none" in res["results"]["r3_jeebench"]
    assert {"maj_at_k,all_samples", "pass_at_k,all_samples"} <= set(res["results"]["r3_physicsqa_sc"])
    # per-kind accuracy: a row for each answer kind among the 2 problems scored (a kind with no problem
    # under --limit would be NaN, and the hook leaves such rows out of the table)
    kinds = {k: v for k, v in res["results"]["r3_physicsqa"].items()
             if k.startswith("acc_") and not k.startswith(("acc_flexible", "acc_stderr")) and "_stderr" not in k
             and k.endswith(",none")}
    assert kinds and all(0.0 <= v <= 1.0 for v in kinds.values()), kinds


@pytest.mark.slow
def test_full_run_has_the_paper_counts(lm):
    res = _evaluate(lm, ["r3_physics"], max_gen_toks=1)
    got = {t[3:]: res["n-samples"][t]["effective"] for t in res["n-samples"]}
    assert got == PAPER_COUNTS  # 164, 170, 118, 107, 370
    assert res["results"]["r3_physics"]["acc,none"] >= 0.0


@pytest.mark.slow
def test_structured_prompt_renders_through_chat_template(lm):
    res = _evaluate(lm, ["r3_scieval_structured"], limit=1, apply_chat_template=True, log_samples=True)
    prompt = res["samples"]["r3_scieval_structured"][0]["arguments"][0][0]
    assert prompt.startswith("<|im_start|>user\n") and "<problem_analysis>" in prompt
    assert prompt.rstrip().endswith("<|im_start|>assistant")


def _lm_eval_cli(args, out, env_extra=None):
    env = {**os.environ, **(env_extra or {})}
    exe = os.path.join(os.path.dirname(sys.executable), "lm_eval")
    p = subprocess.run([exe, *args, "--output_path", str(out), "--log_samples"], capture_output=True,
                       text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    results = glob.glob(str(out / "*" / "results_*.json"))
    samples = glob.glob(str(out / "*" / "samples_*.jsonl"))
    assert len(results) == 1 and samples, (results, samples)
    return json.loads(open(results[0]).read()), samples


@pytest.mark.slow
def test_plain_lm_eval_command_without_include_path(tiny, tmp_path):
    res, samples = _lm_eval_cli(["--tasks", "r3_jeebench,r3_procgen", "--model", "hf", "--model_args",
                                 f"pretrained={tiny}", "--device", "cpu", "--limit", "3", "--gen_kwargs",
                                 "max_gen_toks=4"], tmp_path)
    assert set(res["results"]["r3_jeebench"]) >= {"acc,none", "jee_score,none", "jee_marks,none"}
    assert set(res["results"]["r3_procgen"]) >= {"acc,none", "format_compliance,none"}
    jee = next(f for f in samples if "samples_r3_jeebench_" in f)
    rows = [json.loads(x) for x in open(jee)]
    assert len(rows) == 3 and all("acc" in r and "jee_score" in r for r in rows)


@pytest.mark.slow
def test_smollm2_by_short_name_through_plain_lm_eval(tmp_path):
    """The real default model: packaged GGUF, converted once to a cached HF directory."""
    res, samples = _lm_eval_cli(["--tasks", "r3_mmlu_high", "--model", "hf", "--model_args",
                                 "pretrained=r3bench/smollm2-135m-instruct", "--apply_chat_template",
                                 "--device", "cpu", "--limit", "2", "--gen_kwargs", "max_gen_toks=48"], tmp_path)
    assert 0.0 <= res["results"]["r3_mmlu_high"]["acc,none"] <= 1.0
    rows = [json.loads(x) for x in open(samples[0])]
    # each problem got a response and a verdict (what SmolLM2 writes, even whether it writes anything, is its own)
    assert len(rows) == 2 and all(isinstance(r["resps"][0][0], str) and "acc" in r for r in rows)


@pytest.mark.slow
def test_r3bench_eval_wrapper(tiny, tmp_path, shared_data):
    exe = os.path.join(os.path.dirname(sys.executable), "r3bench")
    env = {**os.environ, "R3BENCH_LM_EVAL_HOOK": "0"}  # the wrapper needs no hook
    env.pop("R3BENCH_DATA_DIR")
    p = subprocess.run([exe, "eval", "--data-dir", str(shared_data), "--tasks", "r3_scieval", "--model", "hf",
                        "--model_args", f"pretrained={tiny}", "--limit", "2", "--gen_kwargs", "max_gen_toks=4",
                        "--output_path", str(tmp_path)], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert glob.glob(str(tmp_path / "*" / "results_*.json"))


class _AnswerLM:
    """TEST DOUBLE of an lm-eval model that answers every request with the document's own answer, so
    that a metric can be held to 1.0 (a tiny random model only ever scores 0)."""

    @staticmethod
    def make():
        from lm_eval.api.model import LM

        class AnswerLM(LM):
            def generate_until(self, requests, disable_tqdm=False):
                return [f"So the answer is \\boxed{{{r.doc['answer']}}}." for r in requests]

            def loglikelihood(self, requests):
                raise NotImplementedError

            def loglikelihood_rolling(self, requests):
                raise NotImplementedError
        return AnswerLM()


def test_self_consistency_scores_right_answers_as_right():
    """repeats: k reaches process_results as one nested list per request; maj@k / pass@k must see k answers."""
    res = _evaluate(_AnswerLM.make(), ["r3_mmlu_high_sc", "r3_jeebench"], limit=3)
    sc = res["results"]["r3_mmlu_high_sc"]
    assert sc["acc,all_samples"] == sc["maj_at_k,all_samples"] == sc["pass_at_k,all_samples"] == 1.0
    assert res["results"]["r3_jeebench"]["acc,none"] == 1.0
