"""r3bench reproduce on a tiny model and a tiny plan: dry run, a failing cell recorded while the grid
goes on, finished cells skipped on the next run, leaderboard + records at the end."""
from __future__ import annotations

import json

import pytest
import yaml

pytest.importorskip("trl")


def _plan(tmp_path, tiny, sft_steps):
    plan = {"name": "tiny", "models": [tiny], "tasks": ["r3_procgen"],
            "methods": {"sft": {"train": {"max_steps": sft_steps}}, "cot": {}},
            "eval": {"device": "cpu", "batch_size": 2, "limit": 2, "gen_kwargs": "max_gen_toks=8"},
            "train": {"batch_size": 2, "procgen_n": 60, "max_length": 4096, "eval_tasks": "", "report_to": "none"},
            "reference": None, "timeout_s": 300}
    f = tmp_path / "plan.yaml"
    f.write_text(yaml.safe_dump(plan, sort_keys=False))
    return f


@pytest.mark.slow
def test_reproduce_dry_run_failure_and_resume(tmp_path, capsys):
    from r3bench.apps import reproduce
    from r3bench.core import models
    from r3bench.apps.cli import main

    tiny = str(models.build_tiny(tmp_path / "tiny-model"))
    out = tmp_path / "out"
    plan = _plan(tmp_path, tiny, sft_steps=0)  # max_steps 0: the SFT trainer refuses it (exit 1)
    assert main(["reproduce", str(plan), "--out", str(out), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cmds = [x for x in lines if x.startswith("python")]
    assert reproduce.slug(tiny) == "tiny-model"  # a local model folder: its name
    assert cmds[0] == f"python -m trainers.sft --config {out}/tiny-model/sft/train.yaml"
    assert cmds[1].startswith("python -m lm_eval --model hf --model_args pretrained=" + tiny + ",peft=")
    assert "/sft/train/final --tasks r3_procgen" in cmds[1] and "--log_samples" in cmds[1]
    assert "--limit 2 --gen_kwargs max_gen_toks=8 --apply_chat_template" in cmds[1]
    assert cmds[2] == (f"python -m lm_eval --model hf --model_args pretrained={tiny} --tasks r3_procgen --output_path "
                       f"{out}/{reproduce.slug(tiny)}/cot/r3_procgen/lm_eval --log_samples --device cpu --batch_size 2 "
                       "--limit 2 --gen_kwargs max_gen_toks=8 --apply_chat_template")
    assert not out.exists()  # a dry run writes nothing

    # run: sft fails at training, is recorded with its reason, and cot still runs
    assert main(["reproduce", str(plan), "--out", str(out)]) == 1
    cell = out / reproduce.slug(tiny)
    st = json.loads((cell / "sft" / "r3_procgen" / "cell.json").read_text())
    assert st["status"] == "failed" and st["stage"] == "train" and st["returncode"] == 1
    assert "max_steps must be >= 1" in st["reason"]
    cot = json.loads((cell / "cot" / "r3_procgen" / "cell.json").read_text())
    assert cot["status"] == "finished" and cot["record"].startswith("lm_eval/record_")  # flattened: no model dir
    rec = json.loads((cell / "cot" / "r3_procgen" / cot["record"]).read_text())
    assert rec["reproduce"]["plan"] == "tiny" and rec["cells"][0]["method"] == "cot" and rec["cells"][0]["n"] == 2
    assert "| r3_procgen | tiny-model | [0.000 ± 0.000 (2)](tiny-model/cot/r3_procgen/lm_eval/" in (out / "leaderboard.md").read_text()
    summary = (out / "reproduce.md").read_text()
    assert "| tiny-model | SFT | r3_procgen | failed | train |" in summary
    assert "| tiny-model | CoT | r3_procgen | finished |" in summary
    assert (out / "errors" / "errors.md").is_file()
    mtime = (cell / "cot" / "r3_procgen" / cot["record"]).stat().st_mtime_ns

    # second run: cot is skipped (result + record exist), the failing cell is tried again
    capsys.readouterr()
    assert main(["reproduce", str(plan), "--out", str(out)]) == 1
    log = capsys.readouterr().out
    assert "cot / r3_procgen: finished before, skipped" in log and "-> failed at train" in log
    assert (cell / "cot" / "r3_procgen" / cot["record"]).stat().st_mtime_ns == mtime
    assert main(["reproduce", str(plan), "--out", str(out), "--dry-run"]) == 0
    assert capsys.readouterr().out.count("(finished: skipped)") == 1


@pytest.mark.slow
def test_a_small_grid_end_to_end_then_resumed(tmp_path, tiny, capsys):
    """Two cells of the tiny model: python -m trainers.sft (1 step, the plain python launch) in a
    subprocess, then lm_eval on its adapter with the seven-tag r3_procgen task (--limit 2, CPU) and on
    r3_demo_structured; the second invocation skips both finished cells and trains nothing again."""
    from r3bench.apps import reproduce
    from r3bench.apps.cli import main

    plan = _plan(tmp_path, tiny, sft_steps=1)
    spec = yaml.safe_load(plan.read_text())
    spec["methods"] = {"sft": {"train": {"max_steps": 1}, "launch": "python"}}
    spec["tasks"] = ["r3_procgen", "r3_demo_structured"]
    spec["eval"]["backend"] = "hf"
    plan.write_text(yaml.safe_dump(spec, sort_keys=False))
    out = tmp_path / "out"
    assert main(["reproduce", str(plan), "--out", str(out)]) == 0
    log = capsys.readouterr().out
    assert log.startswith("# plan tiny: 1 models x 1 methods x 2 tasks = 2 cells; evaluation with --model hf")
    assert log.count("  train: python -m trainers.sft") == 1  # trained once for both tasks
    sft = out / reproduce.slug(tiny) / "sft"
    for task in ("r3_procgen", "r3_demo_structured"):
        st = json.loads((sft / task / "cell.json").read_text())
        rec = json.loads((sft / task / st["record"]).read_text())
        assert st["status"] == "finished" and rec["adapter"]["method"] == "sft" and rec["cells"][0]["method"] == "sft"
        assert rec["reproduce"]["task"] == task and rec["reproduce"]["launch"] == "python"
        assert rec["cells"][0]["n"] == 2 and str(tmp_path) not in json.dumps(rec["cells"])
    assert rec["adapter"]["sha256"]["adapter_model.safetensors"]
    assert "| task | model | SFT |" in (out / "leaderboard.md").read_text()
    train = json.loads((sft / "train" / "record.json").read_text())  # the training run's own record
    assert train["kind"] == "trainer" and train["trainer"] == "sft" and train["problems"] == []
    mtimes = {f: f.stat().st_mtime_ns for f in sft.rglob("*.json")}

    assert main(["reproduce", str(plan), "--out", str(out)]) == 0  # resumed: nothing is redone
    log = capsys.readouterr().out
    assert log.count("finished before, skipped") == 2 and "trainers.sft" not in log.split("| **total**")[1]
    assert all(f.stat().st_mtime_ns == m for f, m in mtimes.items() if f.name != "cell.json")
    assert all(reproduce.finished(c) for c in reproduce.cells(reproduce.load_plan(str(plan)), out))


def test_bad_plans_are_errors(tmp_path, capsys):
    from r3bench.apps.cli import main

    assert main(["reproduce", "no-such-plan"]) == 2
    assert "shipped: cpu, paper" in capsys.readouterr().err
    f = tmp_path / "p.yaml"
    for text, msg in (("models: [m]\nmethods: [magic]\ntasks: [t]\n", "unknown method 'magic'"),
                      ("models: [m]\nmethods: [cot]\n", "'tasks' is missing"),
                      ("models: [m]\nmethods: [sft]\ntasks: [t]\ntrain: {max_stepz: 3}\n", "max_stepz"),
                      ("- a\n", "expected a mapping")):
        f.write_text(text)
        assert main(["reproduce", str(f), "--dry-run"]) == 2
        assert msg in capsys.readouterr().err


def test_shipped_plans_load():
    from r3bench.apps import reproduce

    paper = reproduce.load_plan("paper")
    assert list(paper["methods"]) == ["cot", "rag", "sft", "dpo", "stepfix", "grpo", "stepco", "bestofn"]
    assert len(paper["models"]) == 4 and paper["methods"]["stepfix"]["train"]["verifier"] == "judge"
    assert paper["tasks"] == ["r3_scieval_structured", "r3_mmlu_high_structured", "r3_mmlu_college_structured",
                              "r3_jeebench_structured", "r3_physicsqa_structured"]  # the prompt training uses
    assert reproduce.check_train_fields(paper) == []
    cpu = reproduce.load_plan("cpu")
    assert cpu["models"] == ["r3bench/smollm2-135m-instruct"] and reproduce.check_train_fields(cpu) == []
    grid = reproduce.cells(paper, reproduce.Path("o"))
    assert len(grid) == 160 and [c.method for c in grid[:30:5]] == ["cot", "rag", "sft", "dpo", "stepfix", "grpo"]
    stages = dict(grid[5].commands)
    assert stages["index"][1:] == ["-m", "trainers.rag", "--out", "o/Qwen__Qwen2.5-1.5B-Instruct/rag/index"]
    rag = stages["eval"]
    assert rag[rag.index("--model") + 1] == "r3-rag"
    assert rag[rag.index("--model_args") + 1] == \
        f"inner={reproduce.backend(paper)},pretrained=Qwen/Qwen2.5-1.5B-Instruct," \
        "index=o/Qwen__Qwen2.5-1.5B-Instruct/rag/index,k=3"


def _write_plan(tmp_path, **kw):
    plan = {"name": "t", "models": ["m"], "tasks": ["r3_procgen"], "methods": {"cot": {}}, **kw}
    f = tmp_path / "plan.yaml"
    f.write_text(yaml.safe_dump(plan, sort_keys=False))
    return str(f)


def test_psv_strategy_cells_need_a_psv_model(tmp_path, monkeypatch):
    """stepco defaults to the psv verifier, which no stage builds: refused at load time, as is bestofn with
    scorer=psv; bestofn without a scorer and without a PSV model votes."""
    from r3bench.apps import reproduce

    monkeypatch.delenv("R3BENCH_PSV_MODEL", raising=False)
    for methods, ok in (({"stepco": {}}, False), ({"bestofn": {}}, True),
                        ({"stepco": {"model_args": "verifier=psv,rounds=2"}}, False),
                        ({"bestofn": {"model_args": "n=4,scorer=psv"}}, False),
                        ({"stepco": {"model_args": "psv_model=/x/psv/psv_model"}}, True),
                        ({"stepco": {"model_args": "verifier=symbolic"}}, True),
                        ({"bestofn": {"model_args": "scorer=vote"}}, True)):
        f = _write_plan(tmp_path, methods=methods)
        if ok:
            reproduce.load_plan(f)
        else:
            with pytest.raises(reproduce.PlanError, match="psv_model=DIR"):
                reproduce.load_plan(f)
    f = _write_plan(tmp_path, methods={"stepco": {}}, eval={"model_args": "psv_model=/x/psv_model"})
    reproduce.load_plan(f)  # the plan-wide eval model_args count too
    monkeypatch.setenv("R3BENCH_PSV_MODEL", "/x/psv_model")
    reproduce.load_plan(_write_plan(tmp_path, methods={"bestofn": {}}))


def test_plan_field_types_are_checked(tmp_path):
    from r3bench.apps import reproduce

    assert reproduce.load_plan(_write_plan(tmp_path, tasks="r3_procgen"))["tasks"] == ["r3_procgen"]
    for kw, msg in (({"tasks": 3}, "'tasks'"), ({"tasks": ["a", 2]}, "'tasks'"), ({"eval": ["cpu"]}, "'eval'"),
                    ({"train": "max_steps=2"}, "'train'"), ({"timeout_s": "1h"}, "timeout_s"),
                    ({"timeout_s": True}, "timeout_s"), ({"methods": {"sft": {"train": [1]}}}, "'train'"),
                    ({"methods": {"rag": {"index_args": "--procgen_n 5"}}}, "index_args"),
                    ({"models": [{"a": 1}]}, "'models'")):
        with pytest.raises(reproduce.PlanError, match=msg):
            reproduce.load_plan(_write_plan(tmp_path, **kw))


def test_a_command_that_cannot_start_is_the_cells_failure(tmp_path):
    from r3bench.apps import reproduce

    rc, tail = reproduce._run([str(tmp_path / "no-such-program")], tmp_path / "x.log", {}, None)
    assert rc == 127 and "could not run" in tail and "FileNotFoundError" in tail


def test_rag_index_args_source_and_rebuild(tmp_path, monkeypatch):
    """Worked solutions in the index are retrieved (source=all); other index_args rebuild the index."""
    from r3bench.apps import reproduce

    plan = reproduce.load_plan(_write_plan(tmp_path, methods={"rag": {"index_args": ["--procgen_n", 50]}}))
    (cell,) = reproduce.cells(plan, tmp_path / "o")
    ev = dict(cell.commands)["eval"]
    assert ev[ev.index("--model_args") + 1].endswith(",source=all")
    own = reproduce.load_plan(_write_plan(tmp_path, methods={"rag": {"index_args": ["--procgen_n=50"],
                                                                     "model_args": "source=solutions"}}))
    ev = dict(reproduce.cells(own, tmp_path / "o")[0].commands)["eval"]
    assert ev[ev.index("--model_args") + 1].endswith(",source=solutions")  # the plan's own source is kept
    ev = dict(reproduce.cells(reproduce.load_plan("paper"), tmp_path / "o")[5].commands)["eval"]
    assert "source=" not in ev[ev.index("--model_args") + 1]  # formulas only: the default source

    calls = []
    monkeypatch.setattr(reproduce, "_run", lambda argv, log_file, env, t: (calls.append(argv[2]), (0, "ok"))[1])
    reproduce.run_cell(plan, cell, tmp_path / "o", {})
    reproduce.run_cell(plan, cell, tmp_path / "o", {})
    assert calls == ["trainers.rag", "lm_eval", "lm_eval"]  # same index_args: the index is kept
    plan["methods"]["rag"]["index_args"] = ["--procgen_n", "80"]
    (cell,) = reproduce.cells(plan, tmp_path / "o")
    reproduce.run_cell(plan, cell, tmp_path / "o", {})
    assert calls[3:] == ["trainers.rag", "lm_eval"]  # other index_args: rebuilt
    assert json.loads((cell.base / "index.done").read_text())["index_args"] == ["--procgen_n", "80"]
    (cell.base / "index.done").write_text("built (an older r3bench: index_args unknown)\n")
    reproduce.run_cell(plan, cell, tmp_path / "o", {})
    assert calls[5:] == ["trainers.rag", "lm_eval"]


def test_results_stage_records_plot_and_error_analysis_failures(tmp_path, monkeypatch):
    from r3bench.apps import reproduce
    from r3bench.results import errors, plots

    def boom(*a, **k):
        raise RuntimeError("broken figure")
    monkeypatch.setattr(plots, "accuracy_bars", boom)
    monkeypatch.setattr(errors, "write", boom)
    logged = []
    reproduce._results({"name": "t", "reference": None}, tmp_path, [], logged.append)
    md = (tmp_path / "reproduce.md").read_text()
    assert "plots failed: RuntimeError: broken figure" in md and "error analysis failed: RuntimeError" in md
    assert (tmp_path / "leaderboard.md").is_file() and any("error analysis failed" in x for x in logged)


def test_training_estimate_of_a_derived_generation_cap_is_not_zero():
    """The RL trainers' generation cap defaults to 0 (derived from the pool at run time): the dry run's
    estimate takes DERIVED_CAP_ESTIMATE for it, never 0 generated tokens; k revisions cost k generations."""
    from r3bench.apps import reproduce as R

    a = {"prompt_tokens": 400}
    one = R._train_cost("stepfix", {"max_steps": 2, "batch_size": 4}, a)
    assert one["generated"] == 2 * 2 * 4 * R.DERIVED_CAP_ESTIMATE
    three = R._train_cost("stepfix", {"max_steps": 2, "batch_size": 4, "revisions": 3}, a)
    assert three["generated"] == 2 * 4 * 4 * R.DERIVED_CAP_ESTIMATE
    grpo = R._train_cost("grpo", {"max_steps": 2, "batch_size": 8}, a)
    assert grpo["generated"] == 2 * 8 * R.DERIVED_CAP_ESTIMATE
    set_cap = R._train_cost("stepfix", {"max_steps": 1, "batch_size": 1, "max_new_tokens": 100}, a)
    assert set_cap["generated"] == 2 * 100
