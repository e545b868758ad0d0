"""benchmarks/mixture_sft.py (issue 35 item 5): the cell order, resumability bookkeeping and the
summary from done cells (the training and scoring themselves run SmolLM2 for hours: not here)."""
import json

import bench_scripts  # tests/benchmarks/ is on sys.path (pytest's rootdir-less import)

ms = bench_scripts.load("mixture_sft")


def test_cells_train_first_then_the_trained_model_on_the_benchmarks():
    c = ms.cells()
    assert c[0] == "train" and c[1] == "sft_mix__r3_mmlu_college_structured"
    assert len(c) == 1 + len(ms.MODELS) * len(ms.TASKS) and len(set(c)) == len(c)


def test_pending_cells_wait_for_training_and_failures_are_recorded(tmp_path, monkeypatch):
    r = ms.Runner(tmp_path, limit=1)
    calls = []
    monkeypatch.setattr(r, "run_train", lambda: (_ for _ in ()).throw(RuntimeError("trainer exited 1")))
    monkeypatch.setattr(r, "run_eval", lambda cell: calls.append(cell) or {"seconds": 1.0, "n": 1})
    r.run(log=lambda *a: None)
    assert r.status("train") == "failed" and "trainer exited 1" in r.record("train")["error"]
    # only the base model's cells could run without the trained adapter
    assert calls and all(c.startswith("base__") for c in calls)
    assert all(r.status(c) == "pending" for c in ms.cells() if c.startswith("sft_"))
    monkeypatch.setattr(r, "run_train", lambda: {"seconds": 2.0})
    calls.clear()
    r.run(max_cells=2, log=lambda *a: None)
    assert r.status("train") == "done" and r.record("train")["tries"] == 2 and len(calls) == 1
    assert "| train | done |" in r.plan()


def test_summary_from_done_cells(tmp_path, shared_data):
    from r3bench.eval import data
    from r3bench.eval.lmeval import benchmark_baselines

    recs = data.load("mmlu_college", shared_data)[:10]
    for model, right in (("base", 2), ("sft_mix", 6)):
        cell = f"{model}__r3_mmlu_college_structured"
        rows = [{"doc_id": i, "id": r.id, "answer_kind": r.answer_kind, "response": "x", "acc": float(i < right),
                 "answer": "A" if i < right + 2 else "", "acc_flexible": float(i < right + 1), "format_compliance": 1.0}
                for i, r in enumerate(recs)]
        (tmp_path / "samples").mkdir(exist_ok=True)
        (tmp_path / "samples" / f"{cell}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
        ms.write_json(tmp_path / "cells" / f"{cell}.json", {"cell": cell, "status": "done", "seconds": 1.0,
                                                            "samples_file": f"samples/{cell}.jsonl"})
    rows = ms.summarise(tmp_path, str(shared_data))
    got = {r["model"]: r for r in rows}
    assert got["sft_mix"]["acc_mcq"] == 0.6 and got["sft_mix"]["acc_flexible_mcq"] == 0.7
    assert got["sft_mix"]["mcq_letter_read"] == 0.8 and got["base"]["acc_mcq"] == 0.2
    md = (tmp_path / "summary.md").read_text()
    b = benchmark_baselines("mmlu_college", shared_data)["all_mcq"]
    assert f"| {b['majority']:.3f} | {b['uniform']:.3f} |" in md
    assert (tmp_path / "accuracy.png").stat().st_size > 1000
