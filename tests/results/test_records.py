"""r3bench.results.records on its own: what a record says when things are missing or broken.

The records of real lm-eval and trainer output are tested in tests/results/test_leaderboard.py (one shared,
expensive fixture)."""
from __future__ import annotations

import json

import pytest


def test_model_info_hub_local_and_short_name(tmp_path):
    from r3bench.results import records

    assert records.model_info("Qwen/Qwen2.5-1.5B-Instruct", "abc123") == {
        "id": "Qwen/Qwen2.5-1.5B-Instruct", "source": "hub", "revision": "abc123"}
    d = tmp_path / "my-model"
    d.mkdir()
    (d / "model.safetensors").write_bytes(b"weights")
    (d / "config.json").write_text("{}")
    info = records.model_info(str(d))
    assert info["id"] == "my-model" and list(info["weights_sha256"]) == ["model.safetensors"]
    assert info["weights_sha256"]["model.safetensors"] == records.sha256_file(d / "model.safetensors")
    assert str(tmp_path) not in json.dumps(info)
    assert records.model_info("r3bench/smollm2-135m-instruct")["id"] == "r3bench/smollm2-135m-instruct"


def test_task_data_problems_are_listed(tmp_path, monkeypatch):
    from r3bench.results import records

    monkeypatch.delenv("R3BENCH_DATA_DIR", raising=False)
    cfg = {"custom_dataset": "def dataset_scieval(**kw):\n    return dataset('scieval', **kw)\n"}
    got = records.task_data(cfg)
    assert got["file"] == "scieval/scieval-valid_physics.json" and "no data directory" in got["problem"]
    got = records.task_data(cfg, data_dir=str(tmp_path))
    assert "file not found" in got["problem"]
    (tmp_path / "scieval").mkdir()
    (tmp_path / "scieval" / "scieval-valid_physics.json").write_text("[]")
    assert records.task_data(cfg, data_dir=str(tmp_path))["sha256"] == records.sha256_file(
        tmp_path / "scieval" / "scieval-valid_physics.json")
    assert "problem" in records.task_data({"dataset_path": "hellaswag"})
    demo = records.task_data({"custom_dataset": "def dataset_demo(**_metadata):"})
    assert demo["file"] == "r3bench/core/demo_problems.jsonl" and len(demo["sha256"]) == 64


def test_bad_inputs_are_errors_not_crashes(tmp_path, capsys):
    from r3bench.results import records
    from r3bench.apps.cli import main

    (tmp_path / "results_bad.json").write_text("{oops")
    (tmp_path / "results_list.json").write_text("[]")
    with pytest.raises(records.RecordError, match="results_bad.json"):
        records.for_results(tmp_path / "results_bad.json")
    written, problems = records.write_all([tmp_path, tmp_path / "nowhere"])
    assert written == [] and len(problems) == 3
    assert main(["record", str(tmp_path)]) == 1
    assert "results_list.json: not an lm-eval results file" in capsys.readouterr().err
    (tmp_path / "record_x.json").write_text(json.dumps({"schema": 99}))
    with pytest.raises(records.RecordError, match="not an r3bench run record"):
        records.read(tmp_path / "record_x.json")


def test_record_path_names():
    from pathlib import Path

    from r3bench.results.records import record_path

    assert record_path("a/results_2026-01-01T00.json") == Path("a/record_2026-01-01T00.json")


def test_records_hold_no_machine_paths(tmp_path):
    from r3bench.results.records import portable

    r = tmp_path.resolve()  # an absolute path of this machine, whatever it is
    rec = {"args": {"index": f"{r}/x/out/m/rag/index", "k": "3"}, "until": ["\n\nQuestion:", "</s>"],
           "cmd": ["python", "-m", "lm_eval", "--output_path", f"{r}/abs/o/lm_eval"], "n": 3, "rel": "a/b/c/d"}
    assert portable(rec) == {"args": {"index": "m/rag/index", "k": "3"}, "until": ["\n\nQuestion:", "</s>"],
                             "cmd": ["python", "-m", "lm_eval", "--output_path", "abs/o/lm_eval"], "n": 3,
                             "rel": "a/b/c/d"}


def test_portable_strips_absolute_paths_inside_strings(tmp_path):
    from r3bench.results import records

    r = tmp_path.resolve()  # absolute roots of this machine (a home, a cache, a temp folder) under it
    # the usual root folder names, as segments, so that no machine path is written into this file
    HOME, ROOT, TMP = "home", "root", "tmp"
    home, cache = f"{r}/{HOME}/u", f"{r}/{ROOT}/.cache"
    cmd = (f"python -m lm_eval --model r3-rag --model_args inner=hf,pretrained={home}/models/m,"
           f"index={r}/abs/w/out/rag/index,k=3 --output_path {r}/{TMP}/pytest-7/out/m/rag/lm_eval --log_samples")
    rec = records.portable({"reproduce": {"commands": [cmd]}, "problems": [f"{home}/data/x.json: not found",
                                                                           f"model 'a' at '{cache}/hf/m'"],
                            "model": {"id": "Qwen/Qwen2.5-1.5B-Instruct"}, "result": f"{home}/x/y/results.json",
                            "n": 3})
    text = json.dumps(rec)
    assert str(r) not in text and "/abs/" not in text
    assert not any(f"/{seg}/" in text for seg in (HOME, ROOT, TMP))
    got = rec["reproduce"]["commands"][0]
    assert "pretrained=u/models/m,index=out/rag/index,k=3" in got and "--output_path m/rag/lm_eval --log_samples" in got
    assert rec["problems"] == ["u/data/x.json: not found", "model 'a' at '.cache/hf/m'"]
    assert rec["model"]["id"] == "Qwen/Qwen2.5-1.5B-Instruct" and rec["result"] == "x/y/results.json"
    assert records.portable("see https://example.org/a/b/c") == "see https://example.org/a/b/c"
