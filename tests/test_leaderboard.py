"""`r3bench leaderboard` over real lm-eval result files and a real trainer run (tiny model)."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from r3bench import models
    from r3bench._lmeval_hook import tasks_dir
    from r3bench.procgen.export import export
    from trainers import common, sft

    root = tmp_path_factory.mktemp("lb")
    tiny = str(models.build_tiny(root / "tiny-model"))
    export(root / "data", n=60, seed=1, log=lambda *a: None)
    cfg = common.make(sft.Config, model=tiny, data=str(root / "data"), output_dir=str(root / "runs" / "sft"),
                      max_steps=1, batch_size=2, report_to="none", max_length=4096, eval_tasks="r3_procgen",
                      eval_limit=2, eval_max_gen_toks=8)
    res = sft.train(cfg)
    common.write_run(cfg, status="finished", **res)
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    for i, args in enumerate((f"pretrained={tiny}", res["lm_eval_model_args"])):
        tracker = EvaluationTracker(output_path=str(root / "lm_eval" / str(i)))
        r = simple_evaluate(model="hf", model_args=args, batch_size=2, device="cpu", tasks=["r3_procgen"],
                            task_manager=tm, limit=3, apply_chat_template=True, gen_kwargs={"max_gen_toks": 8},
                            bootstrap_iters=0, evaluation_tracker=tracker)
        tracker.save_results_aggregated(results=r, samples=None)
    return root


def test_leaderboard_tables_and_cli(runs, tmp_path, capsys):
    from r3bench import leaderboard
    from r3bench.cli import main

    cells = leaderboard.collect([runs])
    got = {(c.task, c.model, c.method, c.n) for c in cells}
    assert ("r3_procgen", "tiny-model", "base", 3) in got  # lm-eval, no adapter
    assert ("r3_procgen", "tiny-model", "sft", 3) in got   # lm-eval with the SFT adapter (method from run.json)
    assert ("r3_procgen", "tiny-model", "sft", 2) in got   # the trainer's own evaluation
    assert main(["leaderboard", str(runs), "--out", str(tmp_path / "a")]) == 0
    md = (tmp_path / "a" / "leaderboard.md").read_text()
    assert "| task | model | base | sft |" in md and "| r3_procgen | tiny-model |" in md
    assert "more than one source" in md  # the two sft cells are reported, not silently merged
    rows = (tmp_path / "a" / "leaderboard.csv").read_text().splitlines()
    assert rows[0] == "task,model,method,acc,acc_stderr,n,source" and len(rows) == 3
    leaderboard.write([runs], tmp_path / "b")  # same inputs, same bytes
    for f in ("leaderboard.md", "leaderboard.csv"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_leaderboard_without_inputs_is_an_error(tmp_path, capsys):
    from r3bench.cli import main

    (tmp_path / "x.json").write_text(json.dumps({"a": 1}))
    assert main(["leaderboard", str(tmp_path), "--out", str(tmp_path / "o")]) == 1
    assert "no lm-eval results" in capsys.readouterr().err


def test_plots_are_written(runs, tmp_path):
    from r3bench import leaderboard, plots

    png = plots.accuracy_bars(leaderboard.collect([runs]), tmp_path / "acc.png")
    curves = plots.training_curves([runs / "runs" / "sft"], tmp_path / "curves.png")
    for p in (png, curves):
        assert p is not None and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 2000
    assert plots.accuracy_bars([], tmp_path / "none.png") is None  # nothing to plot: no empty figure
    assert plots.training_curves([tmp_path], tmp_path / "none2.png") is None


def test_demo_results_stage(runs, tmp_path):
    import shutil

    from r3bench import demo

    shutil.copytree(runs / "runs", tmp_path / "runs")
    shutil.copytree(runs / "lm_eval", tmp_path / "lm_eval")
    text = demo.results_stage(tmp_path)
    assert "| r3_procgen | tiny-model |" in text
    assert (tmp_path / "leaderboard.md").is_file() and (tmp_path / "accuracy.png").is_file()
    assert (tmp_path / "training_curves.png").is_file()


def test_model_named_from_an_instance_run(tmp_path):
    """lm-eval given a model instance records its path in config.model and no model_args."""
    from r3bench import leaderboard

    d = {"results": {"r3_demo": {"acc,none": 0.5, "acc_stderr,none": 0.1}}, "n-samples": {"r3_demo": {"effective": 6}},
         "config": {"model": "some/dir/SmolLM2-135M-Instruct", "model_args": None}}
    (tmp_path / "results_x.json").write_text(json.dumps(d))
    (c,) = leaderboard.collect([tmp_path])
    assert (c.model, c.method, c.acc, c.stderr, c.n) == ("SmolLM2-135M-Instruct", "base", 0.5, 0.1, 6)
    d["config"] = {"model": "hf", "model_args": "pretrained=x/tiny,dtype=float32"}
    (tmp_path / "results_x.json").write_text(json.dumps(d))
    assert leaderboard.collect([tmp_path])[0].model == "tiny"
