"""studies/learning_rescore.py: the committed study samples scored again with today's verifiers."""
import json
from pathlib import Path

import study_scripts  # tests/studies/ is on sys.path (pytest's rootdir-less import)

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "results" / "learning"


rs = study_scripts.load("learning_rescore")
CELLS = {"sft__s0__t1", "stepfix__s0__t1", "full_base__s0__r3_mmlu_college_structured"}


def test_rescore_a_few_committed_samples_with_todays_verifiers(tmp_path, shared_data):
    from r3bench.eval.lmeval import check_doc
    from verifiers.rewards import step_reward
    from verifiers.steps import verify

    ch = rs.rescore(STUDY, tmp_path, shared_data, cells=CELLS, limit=4)
    assert set(ch) == CELLS and all(d["n"] == 4 for d in ch.values())
    docs = rs.documents(1)
    committed = [json.loads(x) for x in (STUDY / "samples" / "stepfix__s0__t1.jsonl").read_text().splitlines()[:4]]
    new = [json.loads(x) for x in (tmp_path / "samples" / "stepfix__s0__t1.jsonl").read_text().splitlines()]
    for old, s in zip(committed, new):
        assert (s["id"], s["response"]) == (old["id"], old["response"])  # the same responses, not regenerated
        doc = docs[s["id"]]
        assert s["acc"] == float(check_doc(doc, s["response"]).equivalent)
        v = verify(doc["question"], s["response"], doc["solution"])
        assert s["first_error"] == v.first_error and s["step_reward"] == step_reward(v).value
    rec = json.loads((tmp_path / "cells" / "stepfix__s0__t1.json").read_text())
    assert rec["samples_file"] == "samples/stepfix__s0__t1.jsonl" and rec["n"] == 4
    # the whole benchmark keeps no step verdict (no worked solution), but its accuracy is re-checked
    full = [json.loads(x) for x in (tmp_path / "samples" / "full_base__s0__r3_mmlu_college_structured.jsonl")
            .read_text().splitlines()]
    assert all(s["step_reward"] is None and s["acc"] in (0.0, 1.0) for s in full)


def test_summary_is_the_studys_own_tables_beside_the_committed_ones(tmp_path, shared_data):
    out = tmp_path / "rescored"
    rs.summarise(STUDY, out, shared_data, cells=CELLS, limit=4)
    md = (out / "summary.md").read_text()
    assert "re-scored" in md and "| stepfix | 1 | 4 |" in md  # the paired table of learning_study.write_outputs
    rows = rs.paired(out / "summary.csv")
    assert ("stepfix", "0", "1", "step_reward_minus_sft") in rows
    assert "| all | 12 |" in (out / "changes.md").read_text()


def test_whole_benchmarks_get_flexible_beside_the_guessing_baselines(tmp_path, shared_data):
    from r3bench.eval.lmeval import check_doc, flexible

    out = tmp_path / "rescored"
    rs.summarise(STUDY, out, shared_data, cells=CELLS, limit=6)
    docs = rs.documents("r3_mmlu_college_structured", shared_data)
    full = [json.loads(x) for x in (STUDY / "samples" / "full_base__s0__r3_mmlu_college_structured.jsonl")
            .read_text().splitlines()[:6]]
    want = [flexible(docs[s["id"]], s["response"], check_doc(docs[s["id"]], s["response"])) for s in full]
    assert all(f >= float(check_doc(docs[s["id"]], s["response"]).equivalent) for f, s in zip(want, full))
    md = (out / "mcq.md").read_text()
    row = next(ln for ln in md.splitlines() if ln.startswith("| full_base__s0__r3_mmlu_college_structured |"))
    cols = [c.strip() for c in row.strip("|").split("|")]
    assert cols[1] == "6" and cols[3].startswith(f"{sum(want) / 6:.3f}")
    assert 0.2 < float(cols[5]) <= 0.25  # a uniform guess over four options
