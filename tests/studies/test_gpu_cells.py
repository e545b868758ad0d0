"""studies/gpu_cells.py: the GPU path of mixture_sft.py and of learning_study.py's mixture design, run
here on the CPU with a tiny random model: the carry chunks reassemble to the payload, a work call writes the
CPU path's cell records, a second call on the same machine goes on where the first stopped, and --take
puts records, samples and the adapter (reassembled) where the CPU scripts read them."""
import json
import random
import tarfile

import pytest

import study_scripts  # tests/studies/ is on sys.path (pytest's rootdir-less import)

gc = study_scripts.load("gpu_cells")
ms = study_scripts.load("mixture_sft")
ls = study_scripts.load("learning_study")


def _payload(tmp_path, shared_data, chunk):
    gguf = tmp_path / "fake.gguf"
    gguf.write_bytes(random.Random(0).randbytes(100_000))  # stands in for the 98 MB model (as incompressible)
    carry = tmp_path / "carry"
    assert gc.main(["--pack", "--gguf", str(gguf), "--no-wheels", "--data-dir", str(shared_data), "--carry",
                    str(carry), "--chunk-bytes", str(chunk)]) == 0
    return gguf, sorted(carry.glob("c[0-9][0-9]"))


def test_pack_splits_and_receive_reassembles_in_any_order(tmp_path, shared_data):
    gguf, dirs = _payload(tmp_path, shared_data, 20_000)
    assert len(dirs) >= 3 and all((d / "chunk").stat().st_size <= 20_000 for d in dirs)
    state = tmp_path / "state"
    with pytest.raises(SystemExit) as e:  # a work call before every chunk came: exit 3 (machine not warm)
        gc.ensure_ready(state)
    assert e.value.code == 3
    order = dirs[1:] + dirs[:1]
    assert [gc.receive(d, state) for d in order] == [False] * (len(dirs) - 1) + [True]
    assert (state / "payload" / "model" / gc.GGUF_NAME).read_bytes() == gguf.read_bytes()
    assert (state / "payload" / "data" / "jeebench" / "dataset_phy.json").is_file()
    assert gc.receive(dirs[0], state)  # a repeated last call is harmless


def test_a_chunk_from_another_pack_is_refused(tmp_path, shared_data):
    _, dirs = _payload(tmp_path, shared_data, 50_000)
    raw = bytearray((dirs[-1] / "chunk").read_bytes())
    raw[0] ^= 0xFF  # a changed byte whatever the chunk holds (writing b"x" changed nothing where it began with x)
    (dirs[-1] / "chunk").write_bytes(bytes(raw))
    state = tmp_path / "state"
    for d in dirs[:-1]:
        gc.receive(d, state)
    with pytest.raises(SystemExit) as e:
        gc.receive(dirs[-1], state)
    assert e.value.code == 4


def test_pack_refuses_a_tree_that_leaves_no_room(monkeypatch, tmp_path):
    monkeypatch.setattr(gc, "tree_bytes", lambda root=gc.ROOT: gc.TARGET)
    with pytest.raises(SystemExit, match="less than 1 MiB"):
        gc.main(["--pack", "--gguf", str(tmp_path / "x"), "--carry", str(tmp_path / "c"), "--no-wheels"])


def test_the_budget_guard_starts_only_what_fits_and_stops_what_overruns(tmp_path):
    import sys

    clock = gc.Clock(budget_s=3.0, grace_s=1.0)
    jobs = [("quick", [sys.executable, "-c", "print('ok')"], 1.0),
            ("long", [sys.executable, "-c", "import time; time.sleep(60)"], 1.0),
            ("late", [sys.executable, "-c", "print('never')"], 50.0)]
    res = gc.run_procs(jobs, 2, clock, dict(__import__("os").environ), tmp_path / "logs")
    assert res["quick"]["rc"] == 0 and res["long"]["stopped"] == "deadline" and "skipped" in res["late"]
    assert gc.exit_code(res) == 1 and gc.exit_code({"a": {"rc": 0}, "b": {"rc": None, "skipped": "x"}}) == 0


def test_a_new_machine_retrains_before_scoring_the_continued_adapter(tmp_path):
    r = ms.Runner(tmp_path)
    for c in ("train", "sft_mix__r3_mmlu_college_structured", "base__r3_jeebench_structured"):
        ms.write_json(tmp_path / "cells" / f"{c}.json", {"cell": c, "status": "done"})
    moved = gc.retrain_if_adapter_gone(r, "stamp")
    assert moved == ["train", "sft_mix__r3_mmlu_college_structured"]
    assert r.status("train") == "pending" and r.status("base__r3_jeebench_structured") == "done"
    assert (tmp_path / "superseded" / "stamp" / "train.json").is_file()
    ms.write_json(tmp_path / "cells" / "train.json", {"cell": "train", "status": "done"})
    (r.adapter_dir()).mkdir(parents=True)
    (r.adapter_dir() / "adapter_config.json").write_text("{}")
    assert gc.retrain_if_adapter_gone(r, "stamp2") == []  # the adapter is here: nothing to redo


@pytest.fixture
def tiny_start(tmp_path, tiny):
    """A tiny LoRA start in the committed SFT start's form (gpu_sft.pack_adapter's bf16 parts)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    gpu_sft = study_scripts.load("gpu_sft")
    torch.manual_seed(0)
    m = get_peft_model(AutoModelForCausalLM.from_pretrained(tiny), LoraConfig(r=4, target_modules="all-linear",
                                                                             task_type="CAUSAL_LM"))
    m.save_pretrained(tmp_path / "lora")
    start = tmp_path / "start"
    start.mkdir()
    gpu_sft.pack_adapter(tmp_path / "lora", start)
    return start


def _ready_state(tmp_path, shared_data):
    _, dirs = _payload(tmp_path, shared_data, 10 ** 7)
    state = tmp_path / "state"
    assert gc.receive(dirs[0], state)
    return state


@pytest.mark.slow
def test_mixture_cells_on_two_calls_then_take(tmp_path, tiny, tiny_start, shared_data):
    """Two work calls on one (CPU) machine: the first trains and scores one cell, the second finds its work
    folder and scores two more; --take gives the CPU path's records, samples and the adapter."""
    state = _ready_state(tmp_path, shared_data)
    common = ["--state", str(state), "--model", tiny, "--start", str(tiny_start), "--device", "cpu", "--dtype",
              "float32", "--batch", "2", "--limit", "2", "--gen-toks", "16", "--steps", "2", "--workers", "2",
              "--results", str(tmp_path / "none"), "--budget-s", "900"]
    out1, out2 = tmp_path / "out1", tmp_path / "out2"
    rc = gc.main(["--mixture", "--cells", "train,sft_mix__r3_mmlu_college_structured", "--out", str(out1), *common])
    info = json.loads((out1 / "gpu_run.json").read_text())
    assert rc == 0, info
    assert info["cells"]["train"]["status"] == "done" and info["adapter"]["path"] == "runs/sft_mix/final"
    assert len(info["files"]) <= 8 and "warning" not in info
    with tarfile.open(out1 / "cells.tar.gz") as tar:
        names = tar.getnames()
    assert "cells/train.json" in names and not any(n.endswith(".safetensors") for n in names)
    rc = gc.main(["--mixture", "--cells", "sft_start__r3_procgen_learning,base__r3_jeebench_structured,train",
                  "--out", str(out2), *common])
    info2 = json.loads((out2 / "gpu_run.json").read_text())
    assert rc == 0 and set(info2["cells"]) == {"sft_start__r3_procgen_learning", "base__r3_jeebench_structured"}
    assert "adapter" not in info2  # no training in this call: nothing to return
    res = tmp_path / "results"
    gc.take(out1, res)
    gc.take(out2, res)
    r = ms.Runner(res)
    for c in ("train", "sft_mix__r3_mmlu_college_structured", "sft_start__r3_procgen_learning",
              "base__r3_jeebench_structured"):
        rec = r.record(c)
        assert rec["status"] == "done", (c, rec)
        if c != "train":  # the CPU path's record and samples, plus where they were scored
            assert {"task", "model", "n", "seconds", "samples_file", "device", "dtype"} <= set(rec)
            rows = [json.loads(x) for x in (res / rec["samples_file"]).read_text().splitlines()]
            assert len(rows) == rec["n"] == 2
            assert {"doc_id", "id", "answer_kind", "response", "acc", "acc_flexible", "format_compliance"} <= set(rows[0])
    assert (r.adapter_dir() / "adapter_model.safetensors").is_file()
    rows = ms.summarise(res, str(shared_data))
    assert {x["model"] for x in rows} == {"sft_mix", "sft_start", "base"}


@pytest.mark.slow
def test_one_rl_cell_then_take_and_summarise(tmp_path, tiny, tiny_start, shared_data):
    """learning_study's mixture design, one condition x seed (train the dose, score the learning set), in one
    work call; a second call finds it done; --take makes a folder that --summarise reads."""
    state = _ready_state(tmp_path, shared_data)
    common = ["--state", str(state), "--model", tiny, "--start", str(tiny_start), "--device", "cpu", "--dtype",
              "float32", "--batch", "2", "--tiny", "--results", str(tmp_path / "none"), "--budget-s", "900"]
    out = tmp_path / "out"
    rc = gc.main(["--rl", "sft_cont", "--seeds", "0", "--out", str(out), *common])
    info = json.loads((out / "gpu_run.json").read_text())
    assert rc == 0, info
    assert info["cells"]["sft_cont__s0__train"] == "done" and info["cells"]["sft_cont__s0__learning"] == "done"
    assert info["adapter"]["path"] == "runs/sft_cont-s0/final"
    rc = gc.main(["--rl", "sft_cont", "--seeds", "0", "--out", str(tmp_path / "out2"), *common])
    assert rc == 0 and json.loads((tmp_path / "out2" / "gpu_run.json").read_text())["cells"] == {}  # nothing re-run
    res = tmp_path / "results"
    gc.take(out, res)
    rec = json.loads((res / "cells" / "sft_cont__s0__learning.json").read_text())
    assert rec["task"] == "r3_procgen_learning" and rec["device"] == "cpu" and rec["n"] == 2
    assert rec["budget"]["design"] == "mixture" and "step_reward" in rec["metrics"]
    assert (res / "runs" / "sft_cont-s0" / "final" / "adapter_model.safetensors").is_file()
    assert ls.main(["--design", "mixture", "--tiny", "--out", str(res), "--summarise"]) == 0
    assert "| sft_cont | learning |" in (res / "summary.md").read_text()


def test_mixture_design_scores_every_seed_on_the_same_problems():
    cells = ls.cells(ls.MIXTURE)
    ids = [c.id for c in cells]
    assert "sft__s0__learning" in ids and "sft_unmerged__s0__learning" in ids  # the A/A control
    for name in ("sft_cont", "stepfix", "grpo_position"):
        assert {f"{name}__s0__train", f"{name}__s1__train", f"{name}__s0__learning", f"{name}__s1__learning"} <= set(ids)
    evals = [c for c in cells if c.tier is not None]
    assert {tuple(ls.doc_indices(c, ls.MIXTURE)) for c in evals} == {tuple(range(ls.MIXTURE.n_eval))}
    assert ls.depends_on(next(c for c in cells if c.cond.kind == "aa")) == "sft__s0__train"
    assert not ls.whole_benchmark("learning") and ls.whole_benchmark("r3_jeebench_structured")
    assert ls.colour_of("sft_unmerged") != "0.5"
