"""One generation for two studies: the issue-35 RL study's SFT start on the learning set (learning_study
--design mixture, sft__s0__learning) takes studies/mixture_sft.py's sft_start__r3_procgen_learning
responses when every setting and the adapter's weights are the same, and step-verifies them itself."""
import hashlib
import json
from dataclasses import replace

import pytest

import study_scripts  # tests/studies/ is on sys.path (pytest's rootdir-less import)

ls = study_scripts.load("learning_study")


def _docs(n):
    from lm_eval.tasks import TaskManager

    from r3bench.eval.hook import tasks_dir

    t = TaskManager(include_path=str(tasks_dir()), include_defaults=False).load(["r3_procgen_learning"])
    return list(t["tasks"]["r3_procgen_learning"].test_docs())[:n]


def _setup(tmp_path, budget, **change):
    study_dir, src_dir = tmp_path / "study", tmp_path / "mixture_sft"
    adapter = study_dir / "sft_start_adapter"
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text("{}")
    (adapter / "adapter_model.safetensors").write_bytes(b"the SFT start's weights")
    ls.write_json(study_dir / "cells" / "sft__s0__train.json", {"status": "done", "adapter": "sft_start_adapter"})
    docs = _docs(budget.n_eval)
    responses = [d["solution"] if i % 2 == 0 else "I do not know." for i, d in enumerate(docs)]
    rows = [{"doc_id": i, "id": d["id"], "answer_kind": d["answer_kind"], "response": r, "acc": float(i % 2 == 1),
             "answer": None, "acc_flexible": None, "format_compliance": 0.5} for i, (d, r) in enumerate(zip(docs, responses))]
    (src_dir / "samples").mkdir(parents=True)
    (src_dir / "samples" / "sft_start__r3_procgen_learning.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    rec = {"status": "done", "task": "r3_procgen_learning", "model": "sft_start", "n": len(rows), "seconds": 1234.5,
           "limit": None, "device": "cpu", "dtype": "float32", "batch": 32, "base_model": budget.model,
           "max_gen_toks": 512, "threads": 2, "adapter_sha256": hashlib.sha256(b"the SFT start's weights").hexdigest(),
           "samples_file": "samples/sft_start__r3_procgen_learning.jsonl", **change}
    ls.write_json(src_dir / "cells" / "sft_start__r3_procgen_learning.json", rec)
    table = {("mixture", "sft", "learning"): src_dir / "cells" / "sft_start__r3_procgen_learning.json"}
    return study_dir, table, rows


def test_the_sft_start_learning_cell_takes_mixture_sfts_responses(tmp_path, shared_data, monkeypatch):
    monkeypatch.setenv("R3BENCH_DATA_DIR", str(shared_data))
    budget = replace(ls.MIXTURE, n_eval=4, bootstrap=50)
    study_dir, table, rows = _setup(tmp_path, budget)
    monkeypatch.setattr(ls, "SHARED", table)
    study = ls.Study(study_dir, budget, only={"sft"})
    assert [c.id for c in study.cells] == ["sft__s0__train", "sft__s0__learning"]
    monkeypatch.setattr(study, "run_eval", lambda cell: (_ for _ in ()).throw(AssertionError("generated")))
    assert study.run(progress=False)["done"] == 2
    rec = study.record_path("sft__s0__learning")
    rec = json.loads(rec.read_text())
    assert rec["status"] == "done" and rec["shared"]["record"].endswith(
        "sft_start__r3_procgen_learning.json") and rec["n"] == 4
    got = [json.loads(x) for x in (study_dir / rec["samples_file"]).read_text().splitlines()]
    assert [g["response"] for g in got] == [r["response"] for r in rows]
    # scored here with the task's metrics and the step verifier, each response against its own document
    # (the source's acc was written the wrong way round: it is not carried over)
    docs = _docs(4)
    from lm_eval.tasks import TaskManager

    from r3bench.eval.hook import tasks_dir

    task = TaskManager(include_path=str(tasks_dir()), include_defaults=False).load(["r3_procgen_learning"])
    task = task["tasks"]["r3_procgen_learning"]
    for g, d in zip(got, docs):
        res = task.process_results(d, [g["response"]])
        want = ls.score_sample(d, g["response"], res["acc"], res["format_compliance"], budget.verifier)
        assert {k: g[k] for k in want} == want and g["template"] == json.loads(d["meta"])["template"]
    assert [g["acc"] for g in got] == [1.0, 0.0, 1.0, 0.0]  # the references right, "I do not know." wrong
    assert rec["seconds"] < 600 and rec["generation_seconds"] == 1234.5
    assert rec["shared"]["samples_sha256"] == hashlib.sha256(
        (tmp_path / "mixture_sft" / "samples" / "sft_start__r3_procgen_learning.jsonl").read_bytes()).hexdigest()


@pytest.mark.parametrize("change", [{"batch": 16}, {"max_gen_toks": 768}, {"dtype": "bfloat16"}, {"status": "running"},
                                    {"adapter_sha256": "0" * 64}, {"base_model": "other/model"}, {"limit": 4},
                                    {"n": 3}, {"threads": 1}])
def test_a_generation_made_otherwise_is_not_taken(tmp_path, shared_data, monkeypatch, change):
    monkeypatch.setenv("R3BENCH_DATA_DIR", str(shared_data))
    budget = replace(ls.MIXTURE, n_eval=4, bootstrap=50)
    study_dir, table, _ = _setup(tmp_path, budget, **change)
    monkeypatch.setattr(ls, "SHARED", table)
    study = ls.Study(study_dir, budget, only={"sft"})
    scored = []
    monkeypatch.setattr(study, "run_eval", lambda cell: scored.append(cell.id) or {"n": 0, "metrics": {}})
    study.run(progress=False)
    assert scored == ["sft__s0__learning"]


def test_samples_of_other_documents_are_refused_with_a_reason(tmp_path, shared_data, monkeypatch):
    monkeypatch.setenv("R3BENCH_DATA_DIR", str(shared_data))
    budget = replace(ls.MIXTURE, n_eval=4, bootstrap=50)
    study_dir, table, rows = _setup(tmp_path, budget)
    f = tmp_path / "mixture_sft" / "samples" / "sft_start__r3_procgen_learning.jsonl"
    rows[2]["id"] = "someone-else"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setattr(ls, "SHARED", table)
    study = ls.Study(study_dir, budget, only={"sft"})
    study.run(progress=False)
    rec = json.loads(study.record_path("sft__s0__learning").read_text())
    assert rec["status"] == "crashed" and "not this cell's documents" in rec["error"]


def test_the_committed_start_reassembles_to_the_same_weights_each_time(tmp_path):
    """Both scripts reassemble the committed SFT start into their own folder; the sharing compares the two
    folders' weights by sha256, so two reassemblies must give the same bytes."""
    import sys

    sys.path.insert(0, str(ls.ROOT / "studies"))
    from gpu_sft import reassemble

    start = ls.ROOT / "results" / "learning" / "sft_start"
    reassemble(start, tmp_path / "a")
    reassemble(start, tmp_path / "b")
    a, b = ls.weights_sha256(tmp_path / "a"), ls.weights_sha256(tmp_path / "b")
    assert a and a == b and ls.weights_sha256(tmp_path) is None
