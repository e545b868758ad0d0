"""heldout/heldout_report.py: the scorer of issue 32's held-out sets, on small sets made here
(never on the held-out sets themselves, which are scored once, at the end)."""
from __future__ import annotations

import json

import pytest

import heldout_scripts  # tests/heldout/ is on sys.path (pytest's rootdir-less import)


@pytest.fixture(scope="module")
def hr():
    return heldout_scripts.load("heldout_report")


def test_wilson_interval(hr):
    lo, hi = hr.wilson(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35
    lo, hi = hr.wilson(97, 100)
    assert 0.91 < lo < 0.95 and 0.98 < hi < 1.0
    assert all(x != x for x in hr.wilson(0, 0))  # nan without data


def test_answers_counts_false_positives_and_negatives(hr):
    rows = [
        {"id": "1", "pred": r"\boxed{10 m/s}", "ref": "36 km/h", "kind": None, "label": True, "category": "unit"},
        {"id": "2", "pred": r"\boxed{5 kg}", "ref": "5 N", "kind": None, "label": False, "category": "unit"},
        # mislabelled on purpose: the checker is right, so each must be counted as a miss of its kind
        {"id": "3", "pred": r"\boxed{5 kg}", "ref": "5 N", "kind": None, "label": True, "category": "x"},
        {"id": "4", "pred": r"\boxed{10 m/s}", "ref": "10 m/s", "kind": None, "label": False, "category": "x"},
    ]
    res = hr.score_answers(rows)
    assert res["right"]["k"] == 2 and res["n"] == 4
    assert res["false_positives"] == 1 and res["false_negatives"] == 1
    assert res["per_category"]["unit"] == {"n": 2, "right": 2}
    assert {m["id"] for m in res["misses"]} == {"3", "4"}
    assert "answer checker" in hr.summary_md({"t": res})


def test_real_grades_are_joined_with_samples_and_procgen(hr, shared_data, tmp_path):
    key = "sft__s0__t1#0"  # a committed study sample on a procgen problem
    (tmp_path / "real_solutions_graded.jsonl").write_text(json.dumps(
        {"key": key, "first_error": 3, "error_class": "CM", "reason": "equation is a number"}) + "\n")
    rows = hr.resolve_real(hr.read_jsonl(tmp_path / "real_solutions_graded.jsonl"), shared_data, solutions=True)
    assert len(rows) == 1 and rows[0]["solution"].startswith("<problem_analysis>")
    assert "<governing_equation>" in rows[0]["reference"] and rows[0]["first_error"] == 3
    res = hr.score_solutions(rows)
    assert res["first_error_exact"]["n"] == 1 and res["correct_kept"]["n"] == 0


def test_main_writes_summary(hr, shared_data, tmp_path):
    held = tmp_path / "held"
    held.mkdir()
    (held / "answers_r2.jsonl").write_text(json.dumps(
        {"id": "a", "pred": "The answer is 4 N.", "ref": "4 N", "kind": "numeric", "label": True}) + "\n")
    out = tmp_path / "out"
    assert hr.main(["--heldout", str(held), "--data-dir", str(shared_data), "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["answers_r2"]["right"]["k"] == 1
    assert (out / "summary.md").read_text().startswith("# Held-out sets")


def test_real_answers_are_scored_as_the_tasks_score_them(hr, shared_data, tmp_path):
    """Two bugs of the first scoring: a procgen gold got its unit twice ("754 m m", read as m^2) and
    the MCQ options went to the checker as a tuple, which it refuses (it takes {letter: text})."""
    from r3bench.eval import data, procgen_data

    t1 = {r.id: r for r in procgen_data.records(1)}
    s = next(x for x in hr.read_jsonl(hr.SAMPLES / "sft__s0__t1.jsonl") if str(x["acc"]) in ("1.0", "1"))
    key = f"sft__s0__t1#{s['doc_id']}"
    mm = data.LOADERS["mmlu_college"](shared_data)
    graded = [{"key": key, "label": True}]
    rows = hr.resolve_real(graded, shared_data, solutions=False)
    assert rows[0]["ref"] == t1[s["id"]].answer and rows[0]["ref"].count(t1[s["id"]].unit) == 1
    assert hr.score_answers(rows)["right"]["k"] == 1  # the study scored it right; so must the report
    assert hr.option_map(["1 N", "2 N"]) == {"A": "1 N", "B": "2 N"}
    # an MCQ item: the right letter with its own option's text is right once the options are a mapping
    opts = list(mm[0].options)
    row = {"pred": f"The answer is ({mm[0].answer}) {opts[ord(mm[0].answer) - 65]}", "ref": mm[0].answer,
           "kind": "mcq", "label": True, "options": opts}
    assert hr.score_answers([row], options_of=lambda r: r["options"])["right"]["k"] == 1


def test_keys_name_samples_of_the_mixture_studies(hr, shared_data):
    """Round eight's real outputs come from the issue-35 studies' samples (a whole benchmark and the
    mixture's learning set): a key `<folder under results>/<file>#<doc>` resolves to the response and its
    problem; a key reaching outside results/ is refused."""
    jee = hr.read_jsonl(hr.ROOT / "results/mixture_sft/samples/sft_mix__r3_jeebench_structured.jsonl")[3]
    learn = hr.read_jsonl(hr.ROOT / "results/learning/mixture/samples/stepfix__s0__learning.jsonl")[5]
    graded = [{"key": f"mixture_sft/samples/sft_mix__r3_jeebench_structured#{jee['doc_id']}", "label": False},
              {"key": f"learning/mixture/samples/stepfix__s0__learning#{learn['doc_id']}", "label": False}]
    rows = hr.resolve_real(graded, shared_data, solutions=False)
    assert rows[0]["pred"] == jee["response"] and rows[0]["benchmark"] == "jeebench"
    assert rows[1]["pred"] == learn["response"] and rows[1]["ref"]
    with pytest.raises(ValueError, match="outside results"):
        hr.sample_file("../../etc/passwd")


def test_written_items_are_scored_with_their_options(hr):
    """A written multiple-choice item carries its options as {letter: text}: the checker gets them (round
    eight's letter-with-another-option's-text and all-of-the-above items need them)."""
    seen = []
    real = hr.check

    def spy(pred, ref, kind=None, cfg=None, options=None):
        seen.append(options)
        return real(pred, ref, kind=kind, cfg=cfg, options=options)

    hr.check = spy
    try:
        row = {"pred": "The answer is (B).", "ref": "B", "kind": "mcq", "label": True,
               "options": {"A": "1 m", "B": "2 m"}}
        hr.score_answers([row], options_of=lambda r: r.get("options"))
    finally:
        hr.check = real
    assert seen == [{"A": "1 m", "B": "2 m"}]
