"""studies/mixture_sft.py (issue 35 item 5): the cell order, resumability bookkeeping and the
summary from done cells (the training and scoring themselves run SmolLM2 for hours: not here)."""
import json

import pytest

import study_scripts  # tests/studies/ is on sys.path (pytest's rootdir-less import)

ms = study_scripts.load("mixture_sft")


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
    # the answer given most often (a model that boxes one letter everywhere shows here), and the paired table
    assert got["base"]["mcq_top_answer"] == "A" and got["base"]["mcq_top_answer_share"] == 0.4
    assert "| A (0.800) |" in md and "## Paired on the same documents" in md
    # sft_mix right on documents 0-5, base on 0-1: 4 gained, 0 lost, exact p = 2 / 2^4
    assert "| r3_mmlu_college_structured | sft_mix - base | 10 | +0.400 [" in md and "| 4 / 0 | 0.125 | 0.125 |" in md
    paired = (tmp_path / "paired.csv").read_text().splitlines()
    assert len(paired) == 2 and paired[1].startswith("r3_mmlu_college_structured,sft_mix,base,10,0.4")


class _Replay:
    """A test double for the model: lm-eval's LM interface answering each document with a stored response,
    so lm-eval's own pipeline scores the same responses the adopted cell re-scores."""

    def __new__(cls, responses):
        from lm_eval.api.model import LM

        class Replay(LM):
            def generate_until(self, requests, disable_tqdm=False):
                return [responses[r.doc["id"]] for r in requests]

            def loglikelihood(self, requests, disable_tqdm=False):
                raise NotImplementedError

            def loglikelihood_rolling(self, requests, disable_tqdm=False):
                raise NotImplementedError

        return Replay()


def test_adopted_cell_rescores_the_learning_study_responses_as_lm_eval_does(tmp_path, shared_data, monkeypatch):
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    from r3bench.eval.hook import tasks_dir

    monkeypatch.setenv("R3BENCH_DATA_DIR", str(shared_data))
    cell, task = "base__r3_jeebench_structured", "r3_jeebench_structured"
    r = ms.Runner(tmp_path, data_dir=str(shared_data))
    assert r.adopts(cell) and not r.adopts("sft_mix__r3_jeebench_structured")
    # only where the generations were made as this run would make them
    for other in (dict(limit=3), dict(adopt=False), dict(device="cuda", dtype="bfloat16"), dict(model="other/model"),
                  dict(batch=16), dict(threads=1), dict(gen_toks=64)):
        assert not ms.Runner(tmp_path, **other).adopts(cell), other
    monkeypatch.setattr(r, "run_eval", lambda c: (_ for _ in ()).throw(AssertionError(f"{c} generated")))
    r.run(only=[cell], log=lambda *a: None)
    rec = r.record(cell)
    assert rec["status"] == "done", rec
    src = ms.ROOT / ms.ADOPTABLE[cell]["responses"]
    old = {s["id"]: s["response"] for s in map(json.loads, src.read_text().splitlines())}
    rows = [json.loads(x) for x in (tmp_path / rec["samples_file"]).read_text().splitlines()]
    assert rec["n"] == len(rows) == len(old) == 107 and rec["adopted"]["responses"] == ms.ADOPTABLE[cell]["responses"]
    assert rec["generation_seconds"] > 600 and rec["seconds"] < rec["generation_seconds"]
    assert (rec["batch"], rec["threads"], rec["base_model"]) == (32, 2, ms.DEFAULT_MODEL)
    assert all(row["response"] == old[row["id"]] for row in rows)
    assert "| base__r3_jeebench_structured | done | 0 |" in r.plan()
    # lm-eval's own pipeline on the same responses gives the same per-document scores
    res = simple_evaluate(model=_Replay(old), tasks=[task], log_samples=True, bootstrap_iters=0,
                          task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False))
    ref = {s["doc"]["id"]: s for s in res["samples"][task]}
    for row in rows:
        s = ref[row["id"]]
        assert (row["acc"], row["acc_flexible"], row["answer"], row["format_compliance"]) == (
            float(s["acc"]), float(s["acc_flexible"]), s["answer"], s["format_compliance"]), row["id"]
    assert 0 < sum(row["acc"] for row in rows) < len(rows)  # the responses were scored, not all one way


@pytest.mark.parametrize("damage", ["fingerprint", "responses"])
def test_adoption_refused_when_the_task_or_the_responses_changed(tmp_path, shared_data, monkeypatch, damage):
    monkeypatch.setenv("R3BENCH_DATA_DIR", str(shared_data))
    cell = "base__r3_mmlu_college_structured"
    entry = dict(ms.ADOPTABLE[cell])
    if damage == "fingerprint":
        entry["fingerprint"] = "0" * 64
    else:  # a regenerated responses file under the recorded name
        f = tmp_path / "root" / entry["responses"]
        f.parent.mkdir(parents=True)
        f.write_text((ms.ROOT / entry["responses"]).read_text().replace("(B)", "(C)"))
        rec = tmp_path / "root" / entry["record"]
        rec.parent.mkdir(parents=True)
        rec.write_text((ms.ROOT / entry["record"]).read_text())
        monkeypatch.setattr(ms, "ROOT", tmp_path / "root")
    monkeypatch.setitem(ms.ADOPTABLE, cell, entry)
    r = ms.Runner(tmp_path / "out", data_dir=str(shared_data))
    monkeypatch.setattr(r, "run_eval", lambda c: (_ for _ in ()).throw(AssertionError(f"{c} generated")))
    assert r.adopts(cell, ms.ROOT)
    r.run(only=[cell], log=lambda *a: None)
    rec = r.record(cell)
    want = "changed since" if damage == "fingerprint" else "sha256 differs"
    assert rec["status"] == "failed" and want in rec["error"] and "--no-adopt" in rec["error"]
    assert not (tmp_path / "out" / "samples" / f"{cell}.jsonl").exists()


def test_procgen_cells_score_as_the_rl_study_does(tmp_path, monkeypatch):
    """The procgen sets at the RL study's token limit and batch (so the SFT start's learning-set cell is one
    generation for both studies); the whole benchmarks at their tasks' own limit."""
    import lm_eval

    ls = study_scripts.load("learning_study")
    assert ms.GEN_TOKS["r3_procgen_learning"] == ls.MIXTURE.eval_tokens["learning"] == 512
    assert ms.BATCH == ls.MIXTURE.eval_batch and ms.Runner(tmp_path).batch == ms.BATCH
    seen = {}

    def fake(model, tasks, **kw):
        seen[tasks[0]] = kw.get("gen_kwargs")
        return {"samples": {tasks[0]: []}}

    monkeypatch.setattr(lm_eval, "simple_evaluate", fake)
    r = ms.Runner(tmp_path)
    monkeypatch.setattr(r, "lm", lambda m: object())
    rec = r.run_eval("base__r3_procgen_transfer")
    assert seen["r3_procgen_transfer"] == {"max_gen_toks": 512, "do_sample": False} and rec["max_gen_toks"] == 512
    assert rec["batch"] == 32 and rec["adapter_sha256"] is None and rec["base_model"] == ms.DEFAULT_MODEL
    assert rec["threads"] == 2
    rec = r.run_eval("base__r3_jeebench_structured")
    assert seen["r3_jeebench_structured"] is None and "max_gen_toks" not in rec
