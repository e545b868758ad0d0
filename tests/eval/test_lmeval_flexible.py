"""Strict and flexible MCQ extraction (lm-eval's strict-match / flexible-extract) and the majority-class
and uniform-guess baselines of each benchmark, computed from the data (issue 35, item 3)."""
import math

import pytest

from r3bench.eval import lmeval

MCQ = {"id": "x", "benchmark": "mmlu_college", "question": "How far?", "options": ["1 m", "2 m", "3 m", "4 m"],
       "answer": "C", "answer_kind": "mcq", "unit": "", "solution": "", "topic": "", "source": "", "meta": "{}"}
MULTI = dict(MCQ, benchmark="jeebench", answer="AC", answer_kind="mcq_multi")
SEVEN = "<problem_analysis>x</problem_analysis>\n<final_answer>\n{}\n</final_answer>"


@pytest.mark.parametrize("resp, strict, flexible", [
    (r"so \boxed{C}", 1.0, 1.0),                                  # the form the prompt asks: both
    ("The answer is (C).", 1.0, 1.0),
    (r"\boxed{B}", 0.0, 0.0),                                     # a wrong committed letter: wrong in both
    (SEVEN.format("3 m, option C"), 1.0, 1.0),
    (SEVEN.format("It is C) 3 m"), 1.0, 1.0),
    ("Working...\nWe get 3 m", None, 1.0),                        # the option's text in the last line only
    ("A or C", 0.0, 0.0),                                         # two options named: never scores
    (SEVEN.format("(A) 1 m and (C) 3 m"), 0.0, 0.0),
    ("Working...\nIt is 1 m or 3 m", 0.0, 0.0),                   # two options' texts
    ("I do not know.", 0.0, 0.0),
])
def test_flexible_reads_one_named_option_and_never_several(resp, strict, flexible):
    r = lmeval.results_cot(MCQ, [resp])
    if strict is not None:
        assert r["acc"] == strict
    assert r["acc_flexible"] == flexible
    assert r["acc_flexible"] >= r["acc"]  # the flexible reading only adds what strict could not read


def test_flexible_is_the_strict_verdict_when_strict_reads_an_answer():
    # strict read B (wrong); a C elsewhere in the final line does not rescue it
    assert lmeval.flexible_letters("Answer: B. Not C.", MCQ) == {"B", "C"}
    assert lmeval.results_cot(MCQ, [r"\boxed{B} (not C)"])["acc_flexible"] == 0.0


def test_flexible_multi_correct_needs_the_exact_set():
    assert lmeval.results_cot(MULTI, [SEVEN.format("A and C")])["acc_flexible"] == 1.0
    assert lmeval.results_cot(MULTI, [SEVEN.format("A, B and C")])["acc_flexible"] == 0.0
    assert lmeval.results_cot(MULTI, [SEVEN.format("options A")])["acc_flexible"] == 0.0


def test_flexible_per_kind_and_not_on_numeric():
    r = lmeval.results_jeebench_structured(dict(MCQ, benchmark="jeebench"), [SEVEN.format("3 m")])
    assert r["acc_flexible"] == 1.0 and r["acc_flexible_mcq"] == (True, 1.0)
    num = dict(MCQ, options=[], answer="3 m", answer_kind="numeric")
    r = lmeval.results_cot(num, [r"\boxed{3 m}"])
    assert r["acc_flexible"] == r["acc"] == 1.0  # not MCQ: flexible = strict


def test_baselines_by_hand():
    docs = [dict(MCQ, answer=a) for a in "AACB"] + [dict(MULTI, answer=a) for a in ("AC", "AC", "B")]
    b = lmeval.baselines(docs)
    assert b["mcq"] == {"n": 4, "majority": 0.5, "majority_answer": "A", "uniform": 0.25}
    assert b["mcq_multi"]["majority"] == pytest.approx(2 / 3) and b["mcq_multi"]["majority_answer"] == "AC"
    assert b["mcq_multi"]["uniform"] == pytest.approx(1 / 15)  # one of the 15 non-empty sets of 4 letters
    assert b["all_mcq"]["n"] == 7
    assert b["all_mcq"]["uniform"] == pytest.approx((4 * 0.25 + 3 / 15) / 7)


@pytest.mark.parametrize("bench", ["mmlu_college", "jeebench", "scieval"])
def test_baselines_from_the_data(shared_data, bench):
    from collections import Counter

    from r3bench.eval import data

    recs = data.load(bench, shared_data)
    b = lmeval.benchmark_baselines(bench, shared_data)
    mcq = [r for r in recs if r.answer_kind == "mcq"]
    assert b["mcq"]["n"] == len(mcq)
    top = Counter(r.answer for r in mcq).most_common(1)[0][1]
    assert b["mcq"]["majority"] == pytest.approx(top / len(mcq))
    assert 0 < b["mcq"]["uniform"] <= 0.5 and b["mcq"]["majority"] >= b["mcq"]["uniform"] - 1e-9
    if bench == "jeebench":
        assert 0 < b["mcq_multi"]["uniform"] < b["mcq"]["uniform"]
        assert not any(math.isnan(v) for v in (b["mcq_multi"]["majority"], b["all_mcq"]["uniform"]))
