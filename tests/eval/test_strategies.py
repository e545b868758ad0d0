"""The strategy wrappers (r3bench/eval/strategies/): RAG, StepCo verify-then-revise, Best-of-N.

Loop logic is tested against `ScriptedLM`, a TEST DOUBLE of an lm-eval model whose answers are
scripted per call (so that a test can know which round must happen); the same wrappers then run
through the real `lm_eval` command on a tiny random model and on SmolLM2, and over a real HTTP
server speaking the OpenAI chat protocol (lm-eval's own `local-chat-completions` client).
"""
import glob
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from lm_eval.api.instance import Instance
from lm_eval.api.model import LM

from r3bench import procgen
from verifiers import seventag
from r3bench.eval.strategies import FEEDBACK_NO_STEPS, BestOfNLM, RagLM, Scorer, StepCoLM

GK = {"until": ["\n\nQuestion:"], "do_sample": False, "max_gen_toks": 64}


class ScriptedLM(LM):
    """TEST DOUBLE of an inner lm-eval model: `script(ctx, gen_kwargs, call_no)` gives each answer."""

    def __init__(self, script, chat=False):
        super().__init__()
        self.script, self.calls, self.chat = script, [], chat

    def generate_until(self, requests, disable_tqdm=False):
        out = []
        for r in requests:
            ctx, gk = r.args
            self.calls.append((ctx, dict(gk)))
            out.append(self.script(ctx, gk, len(self.calls) - 1))
        return out

    def loglikelihood(self, requests):
        return [(-float(len(r.args[0])), False) for r in requests]

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError

    def apply_chat_template(self, chat_history, add_generation_prompt=True):
        return "CHAT" + json.dumps({"msgs": chat_history, "gen": add_generation_prompt})

    @property
    def tokenizer_name(self):
        return "scripted"


@pytest.fixture(scope="module")
def probs():
    """Test problems with one governing equation (a wrong calculation then leaves steps 1-5 right)."""
    ps = [p for p in procgen.generate(n=64, seed=0) if p.split == "test"
          and len(seventag.parse(p.solution).get("governing_equation").content.splitlines()) == 1]
    return ps[:3]


def doc_of(p):
    return {"id": p.id, "question": p.question, "solution": p.solution, "answer": p.answer,
            "answer_kind": "numeric", "benchmark": "procgen"}


def req(p, ctx=None, i=0):
    return Instance("generate_until", doc_of(p), (ctx or f"Question: {p.question}\nSolution:", dict(GK)), i,
                    ("r3_procgen", i, 1))


def wrong_at(p, step=6):
    text, fe, cls, _ = procgen.inject_problem(p, "CE", step)
    assert fe == step
    return text


def tail(text, k):
    """Steps k.. of a seven-tag text (what a model continuing after steps 1..k-1 writes)."""
    return seventag.render(seventag.parse(text).steps[k - 1:])


def traces(path):
    return [json.loads(x) for x in open(path)]


# --- StepCo loop ----------------------------------------------------------------------------------

def test_stepco_revises_from_the_first_failing_step_and_accepts(probs, tmp_path):
    p = probs[0]
    bad = wrong_at(p, 6)

    def script(ctx, gk, n):
        return bad if n == 0 else "\n" + tail(p.solution, 6)

    inner = ScriptedLM(script)
    lm = StepCoLM(inner=inner, verifier="symbolic", rounds=5, trace=str(tmp_path / "t.jsonl"))
    [out] = lm.generate_until([req(p)])
    assert len(inner.calls) == 2  # one revision, then accepted
    ctx1 = inner.calls[1][0]
    assert "Step 6 (calculation) is probably wrong" in ctx1 and bad in ctx1  # feedback after the first attempt
    kept = seventag.render(seventag.parse(bad).steps[:5])
    assert ctx1.endswith(kept + "\n")  # steps 1-5 prefilled
    assert procgen.first_error(p, out)[0] == 0  # the returned solution is the corrected one
    [t] = traces(tmp_path / "t.jsonl")
    assert t["n_rounds"] == 2 and t["stop"].startswith("accepted") and t["oracle_verifier"] is True
    assert t["rounds"][0]["first_failing"] == 6 and t["rounds"][1]["first_failing"] is None
    assert t["rounds"][0]["step_scores"] == [1, 1, 1, 1, 1, 0, 0]
    assert "feedback" in t["rounds"][0] and t["final"] == out


def test_stepco_stops_when_two_consecutive_answers_agree(probs, tmp_path):
    p = probs[0]
    bad = wrong_at(p, 6)
    inner = ScriptedLM(lambda ctx, gk, n: bad if n == 0 else "\n" + tail(bad, 6))  # the same wrong answer again
    lm = StepCoLM(inner=inner, verifier="symbolic", rounds=5, trace=str(tmp_path / "t.jsonl"))
    lm.generate_until([req(p)])
    [t] = traces(tmp_path / "t.jsonl")
    assert len(inner.calls) == 2 and t["n_rounds"] == 2
    assert t["stop"] == "two consecutive answers agree (rounds 0 and 1)"
    assert t["rounds"][0]["answer"] == t["rounds"][1]["answer"] is not None


def test_stepco_round_limit_and_token_counts_add_up(probs, tmp_path):
    p, q = probs[0], probs[1]
    inner = ScriptedLM(lambda ctx, gk, n: f"I think it is \\boxed{{{n + 1} m}} here")  # no tags, a new answer each time
    lm = StepCoLM(inner=inner, verifier="symbolic", rounds=2, trace=str(tmp_path / "t.jsonl"))
    outs = lm.generate_until([req(p, i=0), req(q, i=1)])
    assert len(outs) == 2 and len(inner.calls) == 6  # 2 problems x (1 + 2 rounds)
    ts = traces(tmp_path / "t.jsonl")
    for t in ts:
        assert t["n_rounds"] == 3 and t["stop"] == "round limit (2 revisions) reached"
        assert t["rounds"][0]["feedback"] == FEEDBACK_NO_STEPS
        assert t["token_unit"] == "words"  # the double has no tokenizer
        assert t["gen_tokens"] == sum(r["gen_tokens"] for r in t["rounds"]) == 3 * 7  # 7 words per answer
        assert t["prompt_tokens"] == sum(r["prompt_tokens"] for r in t["rounds"]) > 0
    info = lm.get_model_info()["r3bench_strategy"]
    assert info["problems"] == 2 and info["gen_tokens"] == 42 and info["gen_tokens_per_problem"] == 21
    assert info["calls_per_problem"] == 3
    # text mode: the revision prompt holds the previous answer, the feedback and the revision cue
    assert inner.calls[2][0].endswith("\\boxed{1 m} here\n\n" + FEEDBACK_NO_STEPS + "\n\nRevised solution:\n")


def test_inner_failure_on_one_request_is_recorded_not_fatal(probs, tmp_path):
    p, q = probs[0], probs[1]

    def script(ctx, gk, n):
        if q.question in ctx:
            raise RuntimeError("inner model exploded")
        return p.solution

    inner = ScriptedLM(script)
    lm = StepCoLM(inner=inner, verifier="symbolic", rounds=2, trace=str(tmp_path / "t.jsonl"))
    outs = lm.generate_until([req(p, i=0), req(q, i=1)])
    assert outs[0] == p.solution and outs[1] == ""
    t0, t1 = traces(tmp_path / "t.jsonl")
    assert t0["errors"] == [] and t0["stop"].startswith("accepted")
    assert t1["stop"] == "inner model failed" and "inner model exploded" in t1["errors"][0]["error"]
    assert lm.get_model_info()["r3bench_strategy"]["errors"] == 1


def test_stepco_in_chat_mode_continues_the_assistant_turn(probs, tmp_path):
    p = probs[0]
    bad = wrong_at(p, 6)
    inner = ScriptedLM(lambda ctx, gk, n: bad if n == 0 else "\n" + tail(p.solution, 6), chat=True)
    lm = StepCoLM(inner=inner, verifier="symbolic", trace=str(tmp_path / "t.jsonl"))
    ctx = lm.apply_chat_template([{"role": "user", "content": f"Question: {p.question}"}])  # as lm-eval does
    lm.generate_until([req(p, ctx=ctx)])
    second = json.loads(inner.calls[1][0][len("CHAT"):])
    roles = [m["role"] for m in second["msgs"]]
    assert roles == ["user", "assistant", "user", "assistant"] and second["gen"] is False  # prefilled turn
    assert second["msgs"][1]["content"] == bad and "Step 6" in second["msgs"][2]["content"]
    assert second["msgs"][3]["content"].startswith("<problem_analysis>")


def test_psv_verifier_scores_steps_with_a_model(probs, tiny, monkeypatch):
    s = Scorer("psv", psv_model=str(tiny), threshold=0.5)
    r = s.steps(probs[0].question, probs[0].solution, "")
    assert r["valid"] and len(r["scores"]) == 7 and all(0.0 < x < 1.0 for x in r["scores"])
    assert s.first_failing([0.9, 0.4, 0.8]) == 2 and s.first_failing([0.9, 0.6]) is None and s.first_failing([]) == 1
    assert Scorer.aggregate([0.5, 0.2, 0.9], "min") == 0.2 and Scorer.aggregate([0.5, 0.5], "prod") == 0.25
    monkeypatch.delenv("R3BENCH_PSV_MODEL", raising=False)
    with pytest.raises(ValueError, match="psv_model"):
        Scorer("psv", psv_model=None)


# --- Best-of-N ------------------------------------------------------------------------------------

def test_bestofn_picks_by_verifier_and_records_the_vote(probs, tmp_path):
    p = probs[0]
    bad = wrong_at(p, 6)
    answers = [bad, p.solution, bad, bad]  # the majority is wrong; the verifier finds the right one
    inner = ScriptedLM(lambda ctx, gk, n: answers[n])
    lm = BestOfNLM(inner=inner, n=4, scorer="symbolic", trace=str(tmp_path / "t.jsonl"))
    [out] = lm.generate_until([req(p)])
    assert out == p.solution
    assert all(gk["do_sample"] is True and gk["temperature"] == 0.7 for _, gk in inner.calls)
    [t] = traces(tmp_path / "t.jsonl")
    assert t["pick_score"] == 1 and t["pick_vote"] == 0 and t["pick"] == 1 and len(t["rounds"]) == 4
    assert [r["score"] for r in t["rounds"]] == [5 / 7, 1.0, 5 / 7, 5 / 7]
    assert t["gen_tokens"] == sum(r["gen_tokens"] for r in t["rounds"])
    # the vote selector alone takes the majority
    inner2 = ScriptedLM(lambda ctx, gk, n: answers[n])
    [out2] = BestOfNLM(inner=inner2, n=4, scorer="vote", trace=str(tmp_path / "v.jsonl")).generate_until([req(p)])
    assert out2 == bad


def test_bestofn_votes_are_unit_aware(probs, tmp_path):
    p = probs[0]  # the answer is a distance in m
    outs = ["\\boxed{8573 cm}", "\\boxed{85.73 m}", "\\boxed{12 m}"]
    inner = ScriptedLM(lambda ctx, gk, n: outs[n])
    [out] = BestOfNLM(inner=inner, n=3, scorer="vote", trace=str(tmp_path / "t.jsonl")).generate_until([req(p)])
    [t] = traces(tmp_path / "t.jsonl")
    assert t["rounds"][0]["answer"] == t["rounds"][1]["answer"]  # 8573 cm == 85.73 m
    assert out == outs[0]



def test_bestofn_without_a_scorer_votes_unless_a_psv_model_is_given(probs, tmp_path, monkeypatch):
    """`--model r3-bestofn` with no scorer and no PSV model used to fail ("verifier=psv needs psv_model")."""
    monkeypatch.delenv("R3BENCH_PSV_MODEL", raising=False)
    outs = ["\\boxed{12 m}", "\\boxed{85.73 m}", "\\boxed{8573 cm}"]
    lm = BestOfNLM(inner=ScriptedLM(lambda ctx, gk, n: outs[n]), n=3, trace=str(tmp_path / "t.jsonl"))
    assert lm.settings()["scorer"] == "vote" and lm.settings()["oracle_verifier"] is False
    assert lm.generate_until([req(probs[0])]) == [outs[1]]  # 85.73 m and 8573 cm agree
    from r3bench.eval.strategies.bestofn import default_scorer
    assert default_scorer("DIR") == "psv"
    monkeypatch.setenv("R3BENCH_PSV_MODEL", "DIR")
    assert default_scorer() == "psv"


# --- RAG ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def index(tmp_path_factory, probs):
    from r3bench.eval import retrieval
    path = tmp_path_factory.mktemp("rag")
    rows = [{"id": p.id, "question": p.question, "solution": p.solution} for p in probs]
    retrieval.build(path, solutions=rows)
    return path


@pytest.mark.slow
def test_rag_puts_retrieved_formulas_before_the_prompt(probs, index, tmp_path):
    p = probs[0]
    inner = ScriptedLM(lambda ctx, gk, n: "\\boxed{1 m}")
    lm = RagLM(inner=inner, k=3, index=str(index), trace=str(tmp_path / "t.jsonl"))
    lm.generate_until([req(p)])
    ctx = inner.calls[0][0]
    head, rest = ctx.split("\n\nQuestion:", 1)
    assert head.startswith("Formulas that may apply") and head.count("\n- ") == 3 and "valid when" in head
    [t] = traces(tmp_path / "t.jsonl")
    assert len(t["retrieved"]) == 3 and t["gen_tokens"] == 2
    assert any(h["topic"] == p.topic for h in t["retrieved"])  # a formula of the problem's own topic


@pytest.mark.slow
def test_rag_never_retrieves_the_problems_own_solution(probs, index, tmp_path):
    from r3bench.eval.retrieval import Index
    p = probs[0]
    hits = Index(index).query(p.question, k=3, source="solutions", exclude_question=p.question)
    assert hits and all(h.question != p.question for h in hits)
    inner = ScriptedLM(lambda ctx, gk, n: "x", chat=True)
    lm = RagLM(inner=inner, k=2, index=str(index), source="all", trace=str(tmp_path / "t.jsonl"))
    ctx = lm.apply_chat_template([{"role": "user", "content": f"Question: {p.question}"}])
    lm.generate_until([req(p, ctx=ctx)])
    msgs = json.loads(inner.calls[0][0][len("CHAT"):])["msgs"]
    assert len(msgs) == 1 and msgs[0]["content"].endswith(f"Question: {p.question}")
    assert p.solution not in msgs[0]["content"]


@pytest.mark.slow
def test_trainers_rag_cli_builds_the_index(tmp_path):
    out = tmp_path / "idx"
    r = subprocess.run([sys.executable, "-m", "trainers.rag", "--out", str(out), "--procgen_n", "40"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    m = json.loads((out / "index.json").read_text())
    from verifiers import formulas
    n_train = sum(p.split == "train" for p in procgen.generate(n=40, seed=0))
    assert m["collections"]["formulas"]["count"] == len(formulas.load())
    assert m["collections"]["solutions"]["count"] == n_train
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "solution": "s"}\n{not json\n')
    r = subprocess.run([sys.executable, "-m", "trainers.rag", "--out", str(tmp_path / "i2"), "--solutions", str(bad)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and "error:" in r.stderr


# --- real lm_eval, tiny model ----------------------------------------------------------------------

def _lm_eval(args, out, shared_data):
    env = {**os.environ, "R3BENCH_DATA_DIR": str(shared_data)}
    exe = os.path.join(os.path.dirname(sys.executable), "lm_eval")
    p = subprocess.run([exe, *args, "--device", "cpu", "--output_path", str(out), "--log_samples"],
                       capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    [res] = glob.glob(str(out / "*" / "results_*.json"))
    [tr] = glob.glob(str(out / "*" / "traces_*.jsonl"))  # beside lm-eval's samples
    assert glob.glob(str(out / "*" / "samples_*.jsonl"))
    return json.loads(open(res).read()), traces(tr)


@pytest.mark.slow
def test_lm_eval_stepco_on_jeebench_with_psv(tiny, tmp_path, shared_data):
    res, ts = _lm_eval(["--model", "r3-stepco", "--model_args",
                        f"inner=hf,pretrained={tiny},verifier=psv,psv_model={tiny},rounds=2",
                        "--tasks", "r3_jeebench", "--limit", "2", "--gen_kwargs", "max_gen_toks=8"], tmp_path, shared_data)
    assert "jee_score,none" in res["results"]["r3_jeebench"]
    info = res["config"]["r3bench_strategy"]
    assert res["config"]["model"] == "r3-stepco" and info["verifier"] == "psv" and info["oracle_verifier"] is False
    assert len(ts) == 2 and {t["task"] for t in ts} == {"r3_jeebench"}
    for t in ts:
        assert 1 <= t["n_rounds"] <= 3 and t["calls"] == t["n_rounds"]
        assert t["gen_tokens"] == sum(r["gen_tokens"] for r in t["rounds"]) <= 8 * t["n_rounds"]
    assert info["gen_tokens"] == sum(t["gen_tokens"] for t in ts)


@pytest.mark.slow
def test_lm_eval_bestofn_and_rag_on_procgen(tiny, tmp_path, shared_data, index):
    res, ts = _lm_eval(["--model", "r3-bestofn", "--model_args", f"inner=hf,pretrained={tiny},n=3,scorer=symbolic",
                        "--tasks", "r3_procgen", "--limit", "2", "--gen_kwargs", "max_gen_toks=6"],
                       tmp_path / "bon", shared_data)
    assert res["config"]["r3bench_strategy"]["n"] == 3
    assert len(ts) == 2 and all(len(t["rounds"]) == 3 and t["calls"] == 3 for t in ts)
    res, ts = _lm_eval(["--model", "r3-rag", "--model_args", f"inner=hf,pretrained={tiny},k=2,index={index}",
                        "--tasks", "r3_procgen", "--limit", "2", "--gen_kwargs", "max_gen_toks=6"],
                       tmp_path / "rag", shared_data)
    assert res["config"]["r3bench_strategy"]["strategy"] == "rag"
    assert len(ts) == 2 and all(len(t["retrieved"]) == 2 for t in ts)


@pytest.mark.slow
@pytest.mark.parametrize("model,args", [
    ("r3-stepco", "verifier=psv,psv_model=r3bench/smollm2-135m-instruct,rounds=1"),  # an untrained PSV: a run test
    ("r3-bestofn", "n=2,scorer=vote"),
    ("r3-rag", "k=2"),
])
def test_lm_eval_strategies_on_smollm2_jeebench(model, args, tmp_path, shared_data, monkeypatch):
    """The real default model through the plain command, with its chat template, on JEEBench."""
    monkeypatch.setenv("R3BENCH_RAG_INDEX", str(tmp_path / "index"))  # r3-rag builds the formulas index on first use
    res, ts = _lm_eval(["--model", model, "--model_args", f"inner=hf,pretrained=r3bench/smollm2-135m-instruct,{args}",
                        "--apply_chat_template", "--tasks", "r3_jeebench", "--limit", "1",
                        "--gen_kwargs", "max_gen_toks=32"], tmp_path, shared_data)
    [t] = ts
    # a response was generated and counted (its text, even its length, is the model's and the CPU's)
    assert isinstance(t["rounds"][0]["response"], str) and t["gen_tokens"] >= 0 and t["errors"] == []
    assert 0.0 <= res["results"]["r3_jeebench"]["jee_score,none"] <= 1.0
    assert res["config"]["r3bench_strategy"]["gen_tokens"] == t["gen_tokens"]


@pytest.mark.slow
def test_rag_loglikelihood_requests_get_the_context_too(probs, index):
    p = probs[0]
    inner = ScriptedLM(lambda ctx, gk, n: "")
    lm = RagLM(inner=inner, k=2, index=str(index))
    r = Instance("loglikelihood", doc_of(p), (f"Question: {p.question}\nAnswer:", " 85 m"), 0, ("t", 0, 1))
    [(ll, _)] = lm.loglikelihood([r])
    assert -ll > len(r.args[0]) + 50  # the double scores -len(context): the context grew by the formulas


# --- an API inner over a real HTTP server ---------------------------------------------------------

class _Chat(BaseHTTPRequestHandler):
    """A local OpenAI-compatible chat server: first attempt wrong at step 6, revisions right; a
    question containing FAIL gets HTTP 500."""
    seen = []
    good = bad = ""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append(body)
        msgs = body["messages"]
        if "FAIL" in msgs[0]["content"]:
            self.send_response(500)
            self.end_headers()
            return
        text = self.good if len(msgs) > 1 else self.bad
        data = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *a):
        pass


def test_stepco_over_local_chat_completions(probs, tmp_path):
    p = probs[0]
    _Chat.good, _Chat.bad, _Chat.seen = p.solution, wrong_at(p, 6), []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        lm = StepCoLM(inner="local-chat-completions", model="scripted", max_retries=1,
                      base_url=f"http://127.0.0.1:{srv.server_address[1]}/v1/chat/completions",
                      verifier="symbolic", trace=str(tmp_path / "t.jsonl"))
        assert lm.prefill is False  # an API inner gets the kept steps quoted instead
        ok = req(p, ctx=lm.apply_chat_template([{"role": "user", "content": f"Question: {p.question}"}]), i=0)
        fail = req(probs[1], ctx=lm.apply_chat_template([{"role": "user", "content": "FAIL this one"}]), i=1)
        outs = lm.generate_until([ok, fail])
    finally:
        srv.shutdown()
    assert outs[0] == p.solution and outs[1] == ""
    rev = next(b for b in _Chat.seen if len(b["messages"]) == 3)
    assert [m["role"] for m in rev["messages"]] == ["user", "assistant", "user"]
    assert "Step 6" in rev["messages"][2]["content"] and "The steps kept:" in rev["messages"][2]["content"]
    t0, t1 = traces(tmp_path / "t.jsonl")
    assert t0["n_rounds"] == 2 and t0["stop"].startswith("accepted") and t0["token_unit"] == "words"
    assert t1["errors"] and t1["stop"] == "inner model failed"


@pytest.mark.slow
def test_the_hook_registers_the_three_names_and_keeps_hf():
    code = ("from lm_eval.api.registry import get_model;"
            "print(*(get_model(n).__name__ for n in ('hf', 'r3-rag', 'r3-stepco', 'r3-bestofn')))")
    run = lambda v: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,  # noqa: E731
                                   env={**os.environ, "R3BENCH_LM_EVAL_HOOK": v})
    assert run("1").stdout.split() == ["HFLM", "RagLM", "StepCoLM", "BestOfNLM"]
    off = run("0")
    assert off.returncode != 0 and "r3-rag" in off.stderr  # switched off: lm-eval does not know the names


# --- edge cases found in review -------------------------------------------------------------------

def test_a_solution_that_stops_early_is_never_accepted(probs, tmp_path):
    p = probs[0]
    short = seventag.render(seventag.parse(p.solution).steps[:2])  # problem_analysis + principle only
    s = Scorer("symbolic")
    r = s.steps(p.question, short, p.solution)
    assert r["scores"] == [1.0, 1.0, 0.0] and s.first_failing(r["scores"]) == 3 and r["failing_tag"] == "governing_equation"
    inner = ScriptedLM(lambda ctx, gk, n: short if n == 0 else "\n" + tail(p.solution, 3))
    lm = StepCoLM(inner=inner, verifier="symbolic", trace=str(tmp_path / "t.jsonl"))
    [out] = lm.generate_until([req(p)])
    assert "Step 3 (governing_equation)" in inner.calls[1][0] and procgen.first_error(p, out)[0] == 0
    # and Best-of-N does not rank it above a complete right solution
    inner = ScriptedLM(lambda ctx, gk, n: [short, p.solution][n])
    [out] = BestOfNLM(inner=inner, n=2, scorer="symbolic", trace=str(tmp_path / "b.jsonl")).generate_until([req(p)])
    assert out == p.solution


def test_without_prefill_the_kept_steps_are_put_back(probs, tmp_path):
    p = probs[0]
    bad = wrong_at(p, 6)
    inner = ScriptedLM(lambda ctx, gk, n: bad if n == 0 else tail(p.solution, 6))  # obeys: writes steps 6-7 only
    lm = StepCoLM(inner=inner, verifier="symbolic", prefill=False, trace=str(tmp_path / "t.jsonl"))
    [out] = lm.generate_until([req(p)])
    assert "The steps kept:" in inner.calls[1][0]
    assert [st.tag for st in seventag.parse(out).steps] == list(seventag.TAGS) and procgen.first_error(p, out)[0] == 0


def test_inner_failing_on_every_request_stops_the_run(probs, tmp_path):
    def script(ctx, gk, n):
        raise ConnectionError("server down")
    lm = StepCoLM(inner=ScriptedLM(script), verifier="symbolic", trace=str(tmp_path / "t.jsonl"))
    with pytest.raises(RuntimeError, match="failed on all 2 requests.*server down"):
        lm.generate_until([req(probs[0], i=0), req(probs[1], i=1)])
    with pytest.raises(ValueError, match="temperature"):
        BestOfNLM(inner=ScriptedLM(script), n=2, scorer="vote", temperature=0)


def test_api_inner_gets_distinct_seeds_per_sample_and_repeat(probs, tmp_path):
    inner = ScriptedLM(lambda ctx, gk, n: "\\boxed{1 m}")
    inner.base_url = "http://127.0.0.1:9/v1/chat/completions"  # marks the double as an API model
    lm = BestOfNLM(inner=inner, n=3, scorer="vote", trace=str(tmp_path / "t.jsonl"))
    r = req(probs[0])
    lm.generate_until([r, r])  # `repeats: 2` hands lm-eval's same request twice
    seeds = [gk["seed"] for _, gk in inner.calls]
    assert len(seeds) == 6 and len(set(seeds)) == 6
    assert [t["repeat"] for t in traces(tmp_path / "t.jsonl")] == [0, 1]


def test_trace_path_follows_lm_eval_output_path(probs, tmp_path, monkeypatch):
    lm = StepCoLM(inner=ScriptedLM(lambda *a: ""), verifier="symbolic", pretrained="org/My-Model")
    monkeypatch.setattr(sys, "argv", ["lm_eval", "--output_path", str(tmp_path / "out")])
    assert lm._default_trace_path().parent == tmp_path / "out" / "org__My-Model"
    monkeypatch.setattr(sys, "argv", ["lm_eval", "--output_path", str(tmp_path / "res.json")])
    assert lm._default_trace_path().parent == tmp_path


def test_rag_refuses_a_missing_index(tmp_path):
    from r3bench.eval.retrieval import RetrievalError
    with pytest.raises(RetrievalError, match="no retrieval index"):
        RagLM(inner=ScriptedLM(lambda *a: ""), index=str(tmp_path / "typo"))
