"""r3_stepverify end to end: plain `lm_eval` (no --include_path) on the packaged SmolLM2, then the
samples file read into a leaderboard row. Asserts on the run and the metrics' shape, never on the
model's words."""
import glob
import json
import os
from pathlib import Path
import subprocess
import sys

import pytest

from r3bench.eval import stepverify_data
from r3bench.results import stepverify_board


@pytest.mark.slow
def test_plain_lm_eval_on_smollm2(tmp_path):
    exe = os.path.join(os.path.dirname(sys.executable), "lm_eval")
    env = {k: v for k, v in os.environ.items() if k != "R3BENCH_DATA_DIR"}
    env["R3BENCH_DATA_DIR"] = str(tmp_path)  # the task reads no benchmark data; the preflight asks for a folder
    p = subprocess.run([exe, "--tasks", "r3_stepverify", "--model", "hf", "--model_args",
                        "pretrained=r3bench/smollm2-135m-instruct", "--apply_chat_template", "--device", "cpu",
                        "--limit", "3", "--batch_size", "3", "--gen_kwargs", "max_gen_toks=16",
                        "--output_path", str(tmp_path / "out"), "--log_samples"],
                       capture_output=True, text=True, env=env, timeout=1500)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(open(glob.glob(str(tmp_path / "out" / "*" / "results_*.json"))[0]).read())
    got = res["results"]["r3_stepverify"]
    assert {"f1,none", "acc_erroneous,none", "acc_correct,none", "exact,none", "class_acc,none",
            "parsed,none"} <= set(got)
    # per-sample fields leave the results table (r3bench.eval.hook.scores_only); the samples keep them
    assert not {k for k in got if k.partition(",")[0].removesuffix("_stderr") in ("answer", "reason")}, got
    assert 0.0 <= got["exact,none"] <= 1.0 and 0.0 <= got["parsed,none"] <= 1.0
    # the task's version as tasks/r3 declares it (versions.json: bumped with its metric code)
    declared = json.loads((Path(__file__).resolve().parents[2] / "tasks" / "r3" / "versions.json").read_text())
    assert res["versions"]["r3_stepverify"] == declared["tasks"]["r3_stepverify"]["version"]
    samples = glob.glob(str(tmp_path / "out" / "*" / "samples_r3_stepverify_*.jsonl"))[0]
    rows = [json.loads(x) for x in open(samples)]
    first = stepverify_data.items("test")[:3]
    assert [r["doc"]["id"] for r in rows] == [it["id"] for it in first]  # --limit takes the fixed order
    assert all(r["reason"] and r["target"] == str(r["doc"]["first_error"]) for r in rows)
    board_rows = stepverify_board.from_samples(samples)
    assert [b["id"] for b in board_rows] == [it["id"] for it in first]
    assert stepverify_board.score(board_rows)["exact"] == pytest.approx(got["exact,none"])
