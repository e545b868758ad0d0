"""benchmarks/profile_step.py: its per-phase summary of a trainer run's metrics.jsonl (synthetic records
here; the real profile is committed under benchmarks/results/profile)."""
import json

import bench_scripts  # tests/benchmarks/ is on sys.path (pytest's rootdir-less import)

ps = bench_scripts.load("profile_step")


def _write(tmp_path, recs):
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_stepfix_phases_tokens_and_shares(tmp_path):
    step = {"loss": 0.1, "time_generate_s": 200.0, "time_verify_s": 1.0, "time_feedback_s": 9.0,
            "time_forward_s": 20.0, "time_ref_forward_s": 10.0, "time_backward_s": 60.0,
            "y1_tokens": 1200, "y2_tokens": 800, "y1_generated": 4, "y2_generated": 4, "truncated": 2}
    _write(tmp_path, [step, {**step, "time_generate_s": 300.0}, {"train_runtime": 700.0}])
    r = ps.summarise("stepfix", tmp_path, 720.0, (1.0, 1.2))
    assert r["steps"] == 2 and r["step_s"] == 350.0 and r["generate_s"] == 250.0
    assert r["gen_tokens_per_step"] == 2000 and r["gen_tokens_per_s"] == 8.0 and r["truncated_frac"] == 0.25
    md = ps.markdown([r], {"command": "c", "commit": "x", "date": "d", "machine": "m"})
    assert "| generate | 250.0 | 71% |" in md and "2000 tokens a step at 8.0 tokens/s" in md


def test_grpo_tokens_from_trls_mean_length(tmp_path):
    step = {"loss": 0.0, "time_generate_s": 100.0, "time_verify_s": 5.0, "time_rest_s": 45.0,
            "completions/mean_length": 250.0, "completions/clipped_ratio": 0.25}
    _write(tmp_path, [step, {"train_runtime": 150.0}])
    r = ps.summarise("grpo", tmp_path, 160.0, (1.0, 1.0))
    assert r["gen_tokens_per_step"] == 2000 and r["gen_tokens_per_s"] == 20.0 and r["truncated_frac"] == 0.25
