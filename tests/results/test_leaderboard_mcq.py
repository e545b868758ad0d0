"""The leaderboard's multiple-choice table: strict and flexible extraction beside the guessing
baselines (issue 35 item 3), from lm-eval results files and from run records."""
from __future__ import annotations

import json

from r3bench.eval.lmeval import benchmark_baselines
from r3bench.results import leaderboard


def _results(path, task, acc, flex):
    res = {"acc,none": acc, "acc_stderr,none": 0.04}
    if flex is not None:
        res["acc_flexible,none"] = flex
    path.write_text(json.dumps({"results": {task: res}, "config": {"model": "hf", "model_args": "pretrained=m/tiny"},
                                "n-samples": {task: {"effective": 118, "original": 118}}}))


def test_mcq_table_strict_flexible_and_baselines(tmp_path, shared_data):
    src = tmp_path / "runs"
    src.mkdir()
    _results(src / "results_1.json", "r3_mmlu_college_structured", 0.20, 0.31)
    _results(src / "results_2.json", "r3_procgen", 0.10, None)  # numeric: no flexible, no row
    md, csv_path, n = leaderboard.write([src], tmp_path / "out", reference=None, data_dir=shared_data)
    text = md.read_text()
    assert n == 2 and "strict and flexible extraction" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| r3_mmlu_college_structured | tiny |")
               and "0.310" in ln)
    b = benchmark_baselines("mmlu_college", shared_data)["all_mcq"]
    assert f"| {b['majority']:.3f} | {b['uniform']:.3f} |" in row
    assert 0.2 < b["uniform"] <= 0.25 and b["majority"] >= b["uniform"]
    assert not any(ln.startswith("| r3_procgen |") and "0.100" in ln and ln.count("|") == 8
                   for ln in text.split("strict and flexible")[1].splitlines())


def test_mcq_table_without_data_says_why(tmp_path, monkeypatch):
    monkeypatch.delenv("R3BENCH_DATA_DIR", raising=False)
    src = tmp_path / "runs"
    src.mkdir()
    _results(src / "results_1.json", "r3_jeebench", 0.1, 0.15)
    problems: list = []
    md, _, _ = leaderboard.write([src], tmp_path / "out", reference=None, problems=problems,
                                 data_dir=tmp_path / "missing")
    assert any("guessing baselines of jeebench" in p for p in problems)
    assert "| 0.150 |  |  |" in md.read_text()


def test_flexible_survives_a_run_record(tmp_path, shared_data):
    from r3bench.results import records

    src = tmp_path / "runs"
    src.mkdir()
    _results(src / "results_1.json", "r3_scieval", 0.4, 0.45)
    cells = leaderboard.collect([src])
    d = records._cell_dict(cells[0])
    assert d["acc_flexible"] == 0.45
    old = records._cell_dict(leaderboard.collect([src])[0].__class__("t", "m", "cot", 0.1, None, 1, "s"))
    assert "acc_flexible" not in old  # records of tasks without it keep their old shape


def test_benchmark_of_task_names():
    assert leaderboard.benchmark_of("r3_mmlu_college_structured") == "mmlu_college"
    assert leaderboard.benchmark_of("r3_mmlu_high") == "mmlu_high"
    assert leaderboard.benchmark_of("r3_procgen_t1") is None


def test_no_data_directory_at_all_is_one_note_not_a_problem_per_benchmark(tmp_path, monkeypatch):
    """The demo's case: no --data-dir and no R3BENCH_DATA_DIR. The baselines columns stay empty and one
    note says why (it printed five 'problem' lines, one per benchmark, at the end of every demo)."""
    monkeypatch.delenv("R3BENCH_DATA_DIR", raising=False)
    src = tmp_path / "runs"
    src.mkdir()
    for i, task in enumerate(("r3_jeebench", "r3_mmlu_college", "r3_physicsqa")):
        _results(src / f"results_{i}.json", task, 0.1, 0.15)
    problems: list = []
    notes: list = []
    md, _, _ = leaderboard.write([src], tmp_path / "out", reference=None, problems=problems, notes=notes)
    assert not any("guessing baselines" in p for p in problems), problems
    assert sum("uessing baselines" in n for n in notes) == 1 and "--data-dir" in " ".join(notes)
    text = md.read_text()
    assert "| 0.150 |  |  |" in text
    mcq = text.split("strict and flexible extraction")[1]
    assert "no benchmark data directory" in mcq.split("Trainer runs without a cell")[0]
    assert "Trainer runs without a cell" not in text
