"""r3bench reproduce as a grid runner, without running anything: the paper plan's dry run and its
estimate, launch configs, evaluation backends, the seven-tag tasks, and what a plan is refused for."""
from __future__ import annotations

import pytest
import yaml


def _write_plan(tmp_path, **kw):
    plan = {"name": "t", "models": ["m"], "tasks": ["r3_procgen"], "methods": {"cot": {}}, **kw}
    f = tmp_path / "plan.yaml"
    f.write_text(yaml.safe_dump(plan, sort_keys=False))
    return str(f)


def test_paper_dry_run_lists_every_cell_with_its_estimate(capsys):
    from r3bench.apps import reproduce
    from r3bench.apps.cli import main

    plan = reproduce.load_plan("paper")
    grid = reproduce.cells(plan, reproduce.Path("o"))
    assert len(grid) == 4 * 8 * 5  # models x methods x tasks
    assert {c.task for c in grid} == {f"r3_{b}_structured" for b in
                                      ("scieval", "mmlu_high", "mmlu_college", "jeebench", "physicsqa")}
    rows = reproduce.estimate(plan, grid, reproduce.Path("o"))
    assert all(r["gpu_h"] > 0 and r["tokens"] > 0 for r in rows)
    for c in grid:  # every cell evaluates its own structured task; every trainer cell names its launch config
        ev = dict(c.commands)["eval"]
        assert ev[ev.index("--tasks") + 1] == c.task and c.task.endswith("_structured")
        if c.spec.get("trainer"):
            assert reproduce.launch_of(plan, c.spec) in reproduce.launch_names()
            assert dict(c.commands)["train"][1:3] == ["-m", f"trainers.{c.spec['trainer']}"]
    # stepfix with the judge: 2 x batch 8 x 200 steps judge calls per model, on its first cell only
    stepfix = [r for r in rows if r["cell"].method == "stepfix"]
    assert [r["judge_calls"] for r in stepfix[:5]] == [3200, 0, 0, 0, 0]
    # StepCo and Best-of-N evaluate with the PSV trained once per model
    psv = [c for c in grid if c.method in ("stepco", "bestofn") and c.model == grid[0].model]
    assert all("psv_model=o/Qwen__Qwen2.5-1.5B-Instruct/psv/psv_model" in dict(c.commands)["eval"][6] for c in psv)
    assert sum("psv" in r["stages"] for r in rows if r["cell"].model == grid[0].model) == 1

    assert main(["reproduce", "paper", "--dry-run", "--methods", "cot,rag,sft,dpo,stepfix"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# plan paper: 4 models x 5 methods x 5 tasks = 100 cells")
    assert "judge calls = 2 x batch" in out and "tokens per generation" in out  # the assumptions are stated
    total = next(x for x in out.splitlines() if x.startswith("| **total** | 100 |"))
    assert float(total.split("|")[3]) > 0 and total.split("|")[4].strip() == "12,800"
    assert out.count("python -m trainers.sft --config") == 4  # one SFT run per model, not per task
    assert "python -m trainers.dpo" in out and "trainers.grpo" not in out


def test_launch_configs_make_the_train_command(tmp_path):
    from r3bench.apps import reproduce

    assert {"python", "torchrun", "ddp", "fsdp", "zero2", "zero3", "multi_cpu"} <= set(reproduce.launch_names())
    plan = reproduce.load_plan(_write_plan(tmp_path, methods={"sft": {"launch": "zero2"}, "dpo": {"init_from": "sft"}},
                                           launch="torchrun", num_processes=4))
    sft, dpo = (dict(c.commands)["train"] for c in reproduce.cells(plan, tmp_path / "o"))
    i = sft.index("accelerate.commands.launch")
    assert sft[i + 1:i + 5] == ["--config_file", sft[i + 2], "--num_processes", "4"]
    assert sft[i + 2].endswith("trainers/configs/accelerate/zero2.yaml")
    assert dpo[1:5] == ["-m", "torch.distributed.run", "--nproc_per_node", "4"] and dpo[5:7] == ["-m", "trainers.dpo"]


def test_evaluation_backends(tmp_path, monkeypatch):
    from r3bench.apps import reproduce

    plan = reproduce.load_plan(_write_plan(tmp_path, methods={"sft": {}}, eval={"backend": "vllm", "device": "cuda"}))
    (c,) = reproduce.cells(plan, tmp_path / "o")
    ev = dict(c.commands)["eval"]
    assert ev[ev.index("--model") + 1] == "vllm" and "--device" not in ev
    assert ev[ev.index("--model_args") + 1] == f"pretrained=m,lora_local_path={tmp_path}/o/m/sft/train/final"
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)  # no vllm here: auto is hf
    assert reproduce.backend({"eval": {}}) == "hf"
    api = {"backend": "local-chat-completions", "base_url": "http://127.0.0.1:8080/v1/chat/completions"}
    plan = reproduce.load_plan(_write_plan(tmp_path, methods={"bestofn": {"model_args": "n=2,scorer=vote"}}, eval=api))
    ev = dict(reproduce.cells(plan, tmp_path / "o")[0].commands)["eval"]
    assert ev[ev.index("--model") + 1] == "r3-bestofn" and "--apply_chat_template" in ev
    assert ev[ev.index("--model_args") + 1] == ("inner=local-chat-completions,model=m,base_url=http://127.0.0.1:8080"
                                                "/v1/chat/completions,n=2,scorer=vote")
    with pytest.raises(reproduce.PlanError, match="sft .*cannot be evaluated through it"):
        reproduce.load_plan(_write_plan(tmp_path, methods={"sft": {}}, eval=api))


@pytest.mark.parametrize("kw, msg", [
    ({"tasks": ["r3_jeebench_structued"]}, r"closest: r3_jeebench_structured.*seven-tag tasks: .*r3_physicsqa_struct"),
    ({"methods": {"sft": {}}, "tasks": ["r3_jeebench"]}, r"CoT prompt.*r3_jeebench -> r3_jeebench_structured"),
    ({"launch": "zer02"}, r"unknown launch config 'zer02' \(did you mean 'zero2'\?\); known: python, torchrun, ddp"),
    ({"methods": {"sft": {"launch": "dpp"}}}, r"method 'sft': launch: unknown launch config 'dpp'.*known: .*fsdp"),
    ({"eval": {"backend": "vlm"}}, r"unknown backend 'vlm'; known: auto, hf, vllm, local-chat-completions"),
    ({"methods": {"sft": {"lanch": "ddp"}}}, r"unknown option\(s\) \['lanch'\]"),
    ({"num_processes": 0}, r"'num_processes' must be a whole number >= 1"),
    ({"methods": {"stepco": {"psv": {"train": {"max_steps": 2}}}, "bestofn": {"psv": {}}}}, r"same 'psv' block"),
])
def test_misspelt_plans_fail_at_load_with_the_valid_names(tmp_path, kw, msg):
    from r3bench.apps import reproduce

    with pytest.raises(reproduce.PlanError, match=msg):
        reproduce.load_plan(_write_plan(tmp_path, **kw))


def test_a_misspelt_method_fails_on_the_command_line(tmp_path, capsys):
    from r3bench.apps.cli import main

    assert main(["reproduce", "paper", "--dry-run", "--methods", "cot,stepfx"]) == 2  # a misspelt method
    assert "stepfx not in plan paper (its methods: cot, rag, sft, dpo, stepfix, grpo, stepco, bestofn" \
        in capsys.readouterr().err
    assert main(["reproduce", _write_plan(tmp_path, estimate={"gen_tokenz": 5}), "--dry-run"]) == 2
    assert "unknown estimate field(s) ['gen_tokenz']" in capsys.readouterr().err


def test_a_trained_psv_serves_stepco(tmp_path, monkeypatch):
    from r3bench.apps import reproduce

    monkeypatch.delenv("R3BENCH_PSV_MODEL", raising=False)
    plan = reproduce.load_plan(_write_plan(tmp_path, methods={"stepco": {"psv": {"train": {"max_steps": 2}}}}))
    (c,) = reproduce.cells(plan, tmp_path / "o")
    assert [s for s, _ in c.commands] == ["psv", "eval"]
    assert reproduce.psv_config(plan, tmp_path / "o", "m", "stepco")["max_steps"] == 2
    assert reproduce.check_train_fields(plan) == []


def test_dry_run_prints_the_totals_before_the_cells(capsys):
    """A grid of 160 cells is 500 lines: the totals come first (within the first screen), then every
    cell, then the commands."""
    from r3bench.apps.cli import main

    assert main(["reproduce", "paper", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    total = next(i for i, x in enumerate(lines) if x.startswith("| **total** | 160 |"))
    first_cell = next(i for i, x in enumerate(lines) if x.startswith("| 1 | "))
    first_command = next(i for i, x in enumerate(lines) if x.startswith("# [1/160]"))
    assert total < 20 and total < first_cell < first_command, (total, first_cell, first_command)
