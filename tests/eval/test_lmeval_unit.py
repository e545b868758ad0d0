"""r3bench.eval.lmeval pieces (prompts, metrics, votes) and the lm-eval hook, without running a model."""
import subprocess
import sys
import types
import warnings

import pytest

from r3bench.eval import hook as _lmeval_hook, lmeval

DOC = {"id": "x", "benchmark": "jeebench", "question": "How fast?", "options": [], "answer": "10 m/s",
       "answer_kind": "numeric", "unit": "m/s", "solution": "", "topic": "", "source": "", "meta": "{}"}
MCQ = dict(DOC, benchmark="scieval", options=["1 m", "2 m", "3 m", "4 m"], answer="C", answer_kind="mcq")


def test_prompts_show_options_and_answer_form():
    p = lmeval.prompt_cot(MCQ)
    assert "(C) 3 m" in p and "\\boxed{B}" in p and p.rstrip().endswith("Solution:")
    s = lmeval.prompt_structured(DOC)
    assert "<problem_analysis>" in s and "<final_answer>" in s and "How fast?" in s


def test_results_and_per_kind_metrics():
    r = lmeval.results_jeebench(DOC, [r"so \boxed{36 km/h}"])
    assert r["acc"] == 1.0 and r["jee_score"] == 1.0 and r["jee_marks"] == 3.0
    assert r["acc_numeric"] == (True, 1.0) and r["acc_mcq"] == (False, 1.0)
    assert "acc_numeric" not in lmeval.results_cot(MCQ, ["(C)"])  # single-kind benchmark: acc only
    assert lmeval.agg_kind([(True, 1.0), (False, 0.0), (True, 0.0)]) == 0.5
    assert lmeval.agg_kind([(False, 1.0)]) != lmeval.agg_kind([(False, 1.0)])  # nan: no doc of that kind


def test_jeebench_modes_follow_the_official_grader():
    """jee_score: JEEBench compute_metrics.py (|gold - pred| <= 0.01 for numbers); jee_marks: exam
    marks, with no negative marks for a wrong Integer / Numeric answer (only MCQ loses marks)."""
    num = dict(DOC, answer="2.5", answer_kind="numeric", unit="")
    assert lmeval.results_jeebench(num, ["The answer is 2.51."])["jee_score"] == 1.0
    wrong = lmeval.results_jeebench(num, ["The answer is 2.52."])
    assert wrong["jee_score"] == 0.0 and wrong["jee_marks"] == 0.0
    mcq = dict(MCQ, benchmark="jeebench")
    assert lmeval.results_jeebench(mcq, ["The answer is (A)."])["jee_marks"] == -1.0
    assert lmeval.results_jeebench(mcq, ["The answer is (C)."])["jee_marks"] == 3.0
    assert lmeval.JEE.jee_abs_tol == 0.01 and lmeval.JEE_MARKS.jee_abs_tol == 0.01


def test_structured_results_score_format():
    from verifiers.seventag import EXAMPLE_SOLUTION
    good = lmeval.results_structured(MCQ, [EXAMPLE_SOLUTION])
    bad = lmeval.results_structured(MCQ, ["The answer is (C)."])
    assert good["format_compliance"] == 1.0 and bad["format_compliance"] < 0.5 and bad["acc"] == 1.0


def test_self_consistency_votes_are_unit_aware():
    r = lmeval.results_sc(DOC, [r"\boxed{5 m/s}", r"\boxed{36 km/h}", r"\boxed{10.0 m/s}"])
    assert r == {**r, "acc": 0.0, "maj_at_k": 1.0, "pass_at_k": 1.0}  # 36 km/h and 10.0 m/s are one vote
    r = lmeval.results_sc(DOC, [r"\boxed{5 m/s}", r"\boxed{5000 mm/s}", r"\boxed{10 m/s}"])
    assert (r["acc"], r["maj_at_k"], r["pass_at_k"]) == (0.0, 0.0, 1.0)
    r = lmeval.results_sc(MCQ, ["junk", "no idea", "(C)"])
    assert (r["maj_at_k"], r["pass_at_k"]) == (1.0, 1.0)  # answers without a vote do not outvote one


def test_keep_all_filter_hands_every_response_on():
    assert lmeval.KeepAll().apply([["a", "b", "c"]], [{}]) == [["a", "b", "c"]]


def test_hook_adds_task_folder_once():
    ours = str(_lmeval_hook.tasks_dir())
    assert _lmeval_hook._with_ours(None) == [ours]
    assert _lmeval_hook._with_ours(["x"]) == ["x", ours]
    assert _lmeval_hook._with_ours(ours) == ours
    assert _lmeval_hook._with_ours([str(_lmeval_hook.tasks_dir().parent)]) == [str(_lmeval_hook.tasks_dir().parent)]


def test_hook_fails_soft_on_unknown_signature():
    class TaskManager:
        def __init__(self, paths):
            self.paths = paths

    mod = types.SimpleNamespace(TaskManager=TaskManager)
    loader = _lmeval_hook._Loader(types.SimpleNamespace(exec_module=lambda m: None), "lm_eval.tasks.manager")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        loader.exec_module(mod)
    assert any("could not" in str(x.message) for x in w)
    assert TaskManager("p").paths == "p"  # untouched, still works


def _tasks_seen(env_value):
    code = ("from lm_eval.tasks import TaskManager;"
            "print(sum(t.startswith('r3_') for t in TaskManager(include_defaults=False).all_tasks))")
    env = {**__import__("os").environ, "R3BENCH_LM_EVAL_HOOK": env_value}
    return int(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.strip())


def test_hook_via_pth_and_switch():
    import yaml

    names = set()
    for f in _lmeval_hook.tasks_dir().glob("*.yaml"):  # task and group names of every YAML in the folder
        d = yaml.load(f.read_text().replace("!function", "!!str"), Loader=yaml.SafeLoader) or {}
        names.add(d.get("task") if isinstance(d.get("task"), str) else d.get("group"))
    assert len(names) >= 24 and _tasks_seen("1") == len(names)  # the installed .pth made a fresh interpreter find them
    assert _tasks_seen("0") == 0


def test_eval_argv_adds_include_path_and_cpu(tmp_path):
    from r3bench.apps.cli import eval_argv
    argv, dd = eval_argv(["--tasks", "r3_jeebench", "--model", "hf", "--model_args", f"pretrained={tmp_path}",
                          "--data-dir", "/data"])
    assert dd == "/data" and "--data-dir" not in argv
    assert argv[argv.index("--include_path") + 1] == str(_lmeval_hook.tasks_dir())
    assert argv[argv.index("--model_args") + 1] == f"pretrained={tmp_path}"
    assert "--device" in argv
    argv, _ = eval_argv(["--include_path", "x", "--device", "cuda:0"])
    assert argv.count("--include_path") == 1 and argv.count("--device") == 1


def test_unknown_model_name_is_a_clear_error():
    from r3bench.core import models
    with pytest.raises(models.ModelError, match="unknown model"):
        models.resolve("no-such-model-anywhere")


# --- issue 37: a looping multiple-choice answer at the task level (the checker rule is issue 32's) ---

LOOP = "The answer is (B).\n" + "".join(f"The answer is ({'C' if i % 2 == 0 else 'D'}).\n" for i in range(47)) + "The ans"


def test_a_looping_mcq_answer_scores_0_at_the_task_level():
    """It scored 1 (the leaderboard then showed 1.000): 'The answer is (B)' once, then (C) 24 and (D)
    23 times, cut off - an answer naming several candidates is no answer."""
    from r3bench.eval import lmeval

    doc = {"answer": "B", "answer_kind": "mcq", "benchmark": "mmlu_college", "options": ["1 m", "2 m", "3 m", "4 m"]}
    for fn in (lmeval.results_cot, lmeval.results_structured):
        assert fn(doc, [LOOP])["acc"] == 0.0, fn.__name__
    jee = dict(doc, benchmark="jeebench")
    r = lmeval.results_jeebench(jee, [LOOP])
    assert r["acc"] == 0.0 and r["jee_score"] == 0.0


def test_task_metrics_pass_the_options_to_the_checker():
    """'(C) 2 N' where 2 N is option B's text: the letter is gold's but the text names another option."""
    from r3bench.eval import lmeval

    doc = {"answer": "C", "answer_kind": "mcq", "benchmark": "mmlu_college", "options": ["1 N", "2 N", "3 N", "4 N"]}
    assert lmeval.results_cot(doc, ["The answer is (C) 2 N"])["acc"] == 0.0
    assert lmeval.results_cot(doc, ["The answer is (C) 3 N"])["acc"] == 1.0
    assert lmeval.results_cot(doc, [r"\boxed{3 N}"])["acc"] == 1.0  # the option's text, no letter
    assert lmeval.options_of({"answer_kind": "numeric", "options": ["x"]}) is None
