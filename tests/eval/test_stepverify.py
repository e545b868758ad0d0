"""The step-verification tasks' items, prompt, reply reading and metrics (r3bench.eval.stepverify*).

Replies are a table of (reply, step, class, reading) - the shape of Math-Verify's tests; a reply no
pattern reads is a miss with a reason, never an exception.
"""
from collections import Counter

import pytest

from r3bench.eval import stepverify, stepverify_data
from verifiers.steps import report, verify

REPLIES = [  # (reply, step (0 none, None unread), class, how)
    ("First wrong step: 3 (CM)", 3, "CM", "marker"),
    ("First wrong step: none", 0, "", "marker"),
    ("first wrong step is step 5, a calculation error", 5, "CE", "marker"),
    ("The first wrong step: 2\n", 2, "CM", "marker"),  # class from the step
    ('First wrong step: "First wrong step: 5 (CE)"', 5, "CE", "marker"),  # the prompt's line quoted back
    ("First wrong step: **4**", 4, "MC", "marker"),
    ("The earliest wrong step is step 6 (CE)", 6, "CE", "marker"),
    ("The earliest wrong step is: \"First wrong step: none\"", 0, "", "marker"),
    ("The earliest wrong step is:\n\nStep 1 (problem_analysis):\nFind the period.", None, "", ""),  # an echo
    ("First wrong step: 2.5 m", None, "", ""),  # a decimal number is no step
    ("First wrong step: 4 (MC)\nFirst wrong step: 6 (CE)", 6, "CE", "marker"),  # the last answer counts
    (" 4 (MC) the speed was misread", 4, "MC", "leading"),  # the reply goes on from the prompt's marker
    ("none", 0, "", "leading"),
    ("Step 1 (MC)", 1, "MC", "leading"),
    ("So the answer is \\boxed{7}", 7, "CE", "boxed"),
    ("\\boxed{-1}", 0, "", "boxed"),  # ProcessBench's 'no error'
    ("All steps are correct.", 0, "", "no_error"),
    ("No error.", 0, "", "no_error"),
    ("First wrong step: 9", None, "", "marker"),  # out of range: unread, with its reason
    ("2.5 m/s is the speed", None, "", ""),  # a number that is not a step
    ("No, the principle is fine but the units", None, "", ""),
    ("", None, "", ""),
    ("The solution uses Newton's second law.", None, "", ""),
]

ASK_LINE = stepverify.ASK
GAMING = [  # replies that must not game the metric: (reply, step, class, how, words of the reason)
    # the prompt's template line echoed after a real answer does not override it
    (f"First wrong step: 3 (CM)\n{ASK_LINE}", 3, "CM", "marker", "step 3"),
    ('First wrong step: 3 (CM). Else "First wrong step: none" if every step is correct.', 3, "CM", "marker", "step 3"),
    (ASK_LINE, None, "", "", "only repeats the prompt"),
    (f"{stepverify.INSTRUCTIONS}\n{ASK_LINE}", None, "", "", "only repeats the prompt"),
    # the solution echoed or walked through is no answer
    ("Step 1 (problem_analysis): Find the period of the pendulum.", None, "", "", "no step named"),
    ("Step 1 is correct. Step 2 is correct. Step 3 uses the wrong law.", None, "", "", "no step named"),
    ("First wrong step: Step 1 (problem_analysis): find the period", None, "", "", "no step named"),
    ("None of the steps are correct.", None, "", "", "no step named"),
    # no_error: never on a line naming a step, never negated
    ("No errors until step 5, which is wrong", None, "", "", "no step named"),
    ("It is not true that all steps are correct", None, "", "", "no step named"),
    # hedges naming several different steps are unreadable, with the reason
    ("First wrong step: 3, 4 or 5", None, "", "marker", "hedge naming several answers (3, 4, 5)"),
    ("3 or none", None, "", "leading", "hedge naming several answers (3, none)"),
    ("First wrong step: 3 (CM) or none", None, "", "marker", "hedge"),
]


@pytest.mark.parametrize("reply,step,cls,how,why", [(*r, "") for r in REPLIES] + GAMING)
def test_reading_a_reply(reply, step, cls, how, why):
    r = stepverify.read_reply(reply)
    assert (r.step, r.error_class, r.how) == (step, cls, how), r.reason
    assert r.reason  # every reading says what it read or why it could not
    assert why in r.reason


def test_a_reply_is_data_never_code():
    r = stepverify.read_reply("__import__('os').system('false') or 3")
    assert r.step is None and "no step named" in r.reason
    assert stepverify.read_reply(None).reason == "not text: NoneType"
    assert stepverify.read_reply("x" * 100000 + " First wrong step: 2").step is None  # read up to MAX_REPLY_CHARS


def test_prompt_numbers_the_seven_steps_and_asks_for_the_answer_line():
    doc = stepverify_data.items("test", "procgen")[0]
    p = stepverify.prompt(doc)
    assert all(f"Step {k} (" in p for k in range(1, 8)) and p.endswith(stepverify.ASK)
    assert doc["question"].strip() in p and "<principle>" not in p
    assert doc["reference"] not in p  # the model is never shown the reference


def test_results_and_aggregations():
    err = {"first_error": 3, "error_class": "CM"}
    cor = {"first_error": 0, "error_class": ""}
    a = stepverify.results(err, ["First wrong step: 3 (CE)"])  # right step, wrong class
    b = stepverify.results(cor, ["First wrong step: 2"])
    c = stepverify.results(cor, ["none"])
    assert (a["exact"], a["class_acc"], b["exact"], c["exact"], c["class_acc"]) == (1.0, 0.0, 0.0, 1.0, 1.0)
    assert a["answer"] == "3 CE" and c["answer"] == "none" and b["reason"].startswith("marker")
    f1 = stepverify.agg_f1([a["f1"], b["f1"], c["f1"]])  # acc erroneous 1, acc correct 1/2
    assert f1 == pytest.approx(2 * 1 * 0.5 / 1.5)
    assert stepverify.agg_where([a["acc_correct"], b["acc_correct"], c["acc_correct"]]) == 0.5
    assert stepverify.agg_where([a["acc_erroneous"]]) == 1.0
    assert stepverify.agg_f1([a["f1"]]) != stepverify.agg_f1([a["f1"]])  # nan: no correct solution
    u = stepverify.results(err, ["I think so."])
    assert u["parsed"] == 0.0 and u["exact"] == 0.0 and "no step named" in u["reason"]


@pytest.fixture(scope="module")
def all_items():
    return stepverify_data.items("all")


def test_committed_items_are_the_builders_output(all_items):
    assert stepverify_data.text(stepverify_data.build()) == stepverify_data.ITEMS.read_text(encoding="utf-8"), \
        "rebuild: python -m r3bench.eval.stepverify_data --write"


def test_split_is_by_problem_and_fixed(all_items):
    dev = {r["problem"] for r in all_items if r["split"] == "dev"}
    test = {r["problem"] for r in all_items if r["split"] == "test"}
    assert dev and test and not dev & test
    # across sources and rounds: no bare problem name (thin_lens of two written rounds) and no
    # normalised question is in both splits
    for key in (lambda r: stepverify_data.bare(r["problem"]), lambda r: stepverify_data.normalised(r["question"])):
        dev = {key(r) for r in all_items if r["split"] == "dev"}
        test = {key(r) for r in all_items if r["split"] == "test"}
        assert not dev & test, sorted(dev & test)[:5]
    assert len({r["id"] for r in all_items}) == len(all_items)
    assert len(stepverify_data.items("test")) + len(stepverify_data.items("dev")) == len(all_items)


def test_sources_balance_and_marks(all_items):
    test = [r for r in all_items if r["split"] == "test"]
    by_source = Counter(r["source"] for r in test)
    assert set(by_source) == set(stepverify_data.SOURCES) and min(by_source.values()) >= 200
    cells = Counter((r["error_class"] or "none", r["first_error"]) for r in test if r["source"] == "procgen")
    assert set(cells) == set(stepverify_data.CELLS) and len(set(cells.values())) == 1  # balanced exactly
    assert sum(r["first_error"] == 0 for r in test) >= 200  # correct solutions: references and hand-written
    # the symbolic verifier was developed on every hand-graded set; procgen's fresh instances are new to it
    assert all(r["symbolic_dev"] == (r["source"] != "procgen") for r in all_items)
    for r in all_items:
        assert 0 <= r["first_error"] <= 7 and (r["error_class"] == "") == (r["first_error"] == 0), r["id"]


def test_procgen_items_are_not_the_trainers_instances(all_items):
    from r3bench import procgen

    bank = {f"procgen:{p.id}" for p in procgen.generate(n=2494, seed=0)}
    assert not bank & {r["problem"] for r in all_items if r["source"] == "procgen"}


def test_procgen_labels_are_the_verifiers_verdicts_with_the_reference(all_items):
    """The symbolic verifier (with the reference) on a few procgen items agrees with the labels, and the
    task's summary() agrees with verifiers.steps.report on the same verdicts."""
    rows = [r for r in all_items if r["source"] == "procgen" and r["split"] == "test"][:14]
    outcomes = []
    for r in rows:
        v = verify(r["question"], r["solution"], r["reference"])
        outcomes.append(stepverify.outcome(r["first_error"], r["error_class"], v.first_error if v.valid else None,
                                           v.error_class or ""))
    s, rep = stepverify.summary(outcomes), report(rows)
    assert s["exact"] == pytest.approx(rep["first_error_accuracy"])
    assert s["f1"] == pytest.approx(rep["processbench_f1"])
    assert s["class_acc"] == pytest.approx(rep["class_accuracy"])


def test_unknown_split_or_source_is_refused():
    with pytest.raises(ValueError, match="split"):
        stepverify_data.items("train")
    with pytest.raises(ValueError, match="source"):
        stepverify_data.items("test", "gsm8k")
