"""The `r3bench` console script: check (single and JSONL contract) and demo."""
import json
import subprocess
import sys

import pytest

from r3bench.apps.cli import check_lines, main
from verifiers import CheckConfig


def run_cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "r3bench.apps.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_check_single_prints_verdict():
    p = run_cli("check", "\\boxed{36 km/h}", "10 m/s")
    assert p.returncode == 0, p.stderr
    v = json.loads(p.stdout)
    assert v["equivalent"] is True and v["score"] == 1.0 and v["reason"]


def test_check_jsonl_contract_order_and_errors(tmp_path):
    lines = [
        json.dumps({"pred": "Answer: 5 kg", "ref": "5 N"}),
        "{not json",
        json.dumps({"pred": "(B)", "ref": "B", "kind": "mcq"}),
        json.dumps({"ref": "3"}),
        json.dumps([1, 2]),
        json.dumps({"pred": "x", "ref": "3", "kind": "bogus"}),
        json.dumps({"pred": "the answer is 0.0012", "ref": "1.2e-3"}),
    ]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(lines) + "\n")
    p = run_cli("check", "--jsonl", str(f))
    assert p.returncode == 0, p.stderr
    out = [json.loads(line) for line in p.stdout.splitlines()]
    assert [o["line"] for o in out] == [1, 2, 3, 4, 5, 6, 7]
    assert out[0]["equivalent"] is False and "dimension" in out[0]["reason"].lower()
    assert "error" in out[1] and "JSON" in out[1]["error"]
    assert out[2]["equivalent"] is True
    assert "pred" in out[3]["error"]
    assert "object" in out[4]["error"]
    assert "kind" in out[5]["error"]
    assert out[6]["equivalent"] is True
    for o in (out[0], out[2], out[6]):
        assert {"equivalent", "score", "reason"} <= set(o)


def test_check_jsonl_reads_stdin():
    p = run_cli("check", "--jsonl", "-", stdin=json.dumps({"pred": "(A), (C)", "ref": "AC"}) + "\n")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["equivalent"] is True


def test_check_jsonl_missing_file_is_clear_error(tmp_path):
    p = run_cli("check", "--jsonl", str(tmp_path / "nope.jsonl"))
    assert p.returncode == 2 and "cannot read" in p.stderr


def test_check_lines_in_process_jeebench_mode():
    res = list(check_lines([json.dumps({"pred": "A", "ref": "AC", "kind": "mcq_multi"})],
                           CheckConfig(mode="jeebench")))
    assert res[0]["score"] == pytest.approx(0.25) and res[0]["equivalent"] is False


def test_demo_writes_table(tmp_path, capsys):
    rc = main(["demo", "--out", str(tmp_path), "--no-eval"])
    out = capsys.readouterr().out
    assert "checker agreement with labels" in out
    assert (tmp_path / "check.md").exists()
    rows = [json.loads(x) for x in (tmp_path / "check.jsonl").read_text().splitlines()]
    assert len(rows) >= 10 and all("reason" in r for r in rows)
    assert rc == 0, [r for r in rows if not r["agrees"]]


def test_data_fetch_failure_is_clear(tmp_path):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    p = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "data", "fetch", "--data-dir", str(tmp_path),
                        "--mirror", f"http://127.0.0.1:{port}", "--timeout", "2"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 1 and "could not be fetched" in p.stderr and "FAILED scieval" in p.stderr


@pytest.mark.slow
def test_demo_eval_stage_on_smollm2(tmp_path, shared_data, capsys):
    rc = main(["demo", "--out", str(tmp_path), "--data-dir", str(shared_data), "--limit", "1", "--max-gen-toks", "8",
               "--no-train"])
    table = (tmp_path / "eval.md").read_text()
    assert "| r3_demo | 6 |" in table and "| r3_demo_structured | 6 |" in table and "| r3_jeebench | 1 |" in table
    assert list((tmp_path / "lm_eval").rglob("results_*.json")) and list((tmp_path / "lm_eval").rglob("samples_r3_demo_*.jsonl"))
    # named by model, as plain `lm_eval --model_args pretrained=r3bench/smollm2-135m-instruct` names it
    assert [p.name for p in (tmp_path / "lm_eval").iterdir()] == ["r3bench__smollm2-135m-instruct"]
    assert "answer" not in table.split("other metrics")[1].split("\n\n")[0]  # scores only
    assert rc == 0


@pytest.mark.slow
def test_demo_train_stage_on_a_tiny_model(tmp_path, tiny):
    from r3bench.apps import demo

    md, ok = demo.train_stage(tmp_path / "out", model=tiny, max_new_tokens=8, eval_max_gen_toks=8)
    assert ok, md
    assert "| SFT (LoRA r=8) | 2 |" in md and "| stepfix step 1 | 1 |" in md and "skip rate" in md
    assert "lm-eval r3_demo_structured (stepfix adapter)" in md and "n 6" in md
    for run in ("sft", "stepfix"):
        rec = json.loads((tmp_path / "out" / "runs" / run / "run.json").read_text())
        assert rec["status"] == "finished" and (tmp_path / "out" / "runs" / run / "final" / "adapter_config.json").is_file()


def test_demo_runs_trainers_as_a_user_does_and_names_the_log_on_failure(tmp_path):
    """The demo's training stage runs `python -m trainers.X --config FILE` (r3bench imports no trainer);
    a trainer that fails is one line naming the command, its last output line and the log file."""
    from r3bench.apps import demo

    out = tmp_path / "runs" / "sft"
    with pytest.raises(demo.TrainerFailed) as e:
        demo.run_trainer("sft", {"max_steps": 1, "no_such_field": 3}, out)
    msg = str(e.value)
    assert f"python -m trainers.sft --config {out / 'config.yaml'}" in msg and "exited 1" in msg
    assert "unknown field" in msg and str(out / demo.TRAINER_LOG) in msg
    assert "no_such_field: 3" in (out / "config.yaml").read_text()


@pytest.mark.slow
def test_procgen_cli_writes_the_four_exports(tmp_path):
    p = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "procgen", "--n", "2494", "--seed", "0", "--out",
                        str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout)
    assert m["rows"]["sft"] == 2494 and m["rows"]["dpo"] > 2000 and m["rows"]["verifier"] >= 7 * 50
    assert {f.name for f in tmp_path.iterdir()} >= {"sft.jsonl", "dpo.jsonl", "verifier.jsonl",
                                                     "procgen_test.jsonl", "manifest.json"}


def test_results_subcommands_are_listed(capsys):
    from r3bench.apps.cli import build_parser, main

    for cmd in ("leaderboard", "record", "errors", "reproduce"):
        with pytest.raises(SystemExit) as e:
            main([cmd, "--help"])
        assert e.value.code == 0
        assert f"usage: r3bench {cmd}" in capsys.readouterr().out
    assert {"record", "errors", "reproduce"} <= set(build_parser()._subparsers._group_actions[0].choices)


def test_procgen_cli_tier_export(tmp_path):
    """--tier reaches the export: tier-1 rows only, the held-out templates in the manifest (failed before:
    the flag did not exist)."""
    p = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "procgen", "--n", "300", "--seed", "0", "--tier", "1",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    m = json.loads(p.stdout)
    assert m["tier"] == 1 and m["heldout_templates"]
    rows = [json.loads(x) for x in (tmp_path / "procgen_test.jsonl").read_text().splitlines()]
    assert rows and {r["tier"] for r in rows} == {1}
    bad = subprocess.run([sys.executable, "-m", "r3bench.apps.cli", "procgen", "--n", "300", "--tier", "4", "--out",
                          str(tmp_path / "x")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--tier" in bad.stderr


def test_help_texts_carry_no_measured_timings(capsys):
    """Measured timings go stale (issue 38): the help of every subcommand, `r3bench eval --help` and the
    module's usage say what a setting costs in words, never in seconds, minutes or hours."""
    import re

    from r3bench.apps import cli

    texts = [cli.__doc__, cli.build_parser().format_help()]
    names = re.findall(r"^  r3bench ([a-z-]+)", cli.__doc__, re.M)
    assert len(set(names)) >= 14
    for name in sorted(set(names) - {"eval"}):
        with pytest.raises(SystemExit):
            cli.build_parser().parse_args([name, "--help"])
        texts.append(capsys.readouterr().out)
    assert main(["eval", "--help"]) == 0
    texts.append(capsys.readouterr().out)
    timing = re.compile(r"~?\d+(\.\d+)?\s*(s|sec|seconds?|min|minutes?|h|hours?)\b|\b(one|two|three|a few) (minutes|hours)\b")
    for t in texts:
        assert not timing.search(t), timing.search(t).group(0) + " in: " + t[:200]


def test_help_opens_with_what_r3bench_is_for_a_user(capsys):
    """`r3bench --help` starts (after argparse's usage line) with what r3bench does and where to start,
    not with a note for developers."""
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    first = out.split("\n\n")[1]
    assert first.startswith("r3bench: ") and "model" in first and "prints" not in first.lower(), first
    second = out.split("\n\n")[2]
    assert "r3bench demo" in second and "developer" not in out.split("positional arguments")[0].lower()
