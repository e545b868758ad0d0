"""`r3bench leaderboard` over real lm-eval result files and a real trainer run (tiny model)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

# the version of r3_procgen in the version table tasks/r3/_generate.py writes into its YAML (bumped when
# its metric code changes: tasks/r3/_versions.py)
TASK_VERSION = json.loads((Path(__file__).resolve().parents[2] / "tasks" / "r3" / "versions.json").read_text()
                          )["tasks"]["r3_procgen"]["version"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, shared_data):
    import os

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.tasks import TaskManager

    from r3bench.core import models
    from r3bench.eval.hook import tasks_dir
    from r3bench.procgen.export import export
    from trainers import sft
    from trainers.core.config import make
    from trainers.core.evaluation import evaluate_model
    from trainers.core.records import write_run

    root = tmp_path_factory.mktemp("lb")
    tiny = str(models.build_tiny(root / "tiny-model"))
    export(root / "data", n=60, seed=1, log=lambda *a: None)
    cfg = make(sft.Config, model=tiny, data=str(root / "data"), output_dir=str(root / "runs" / "sft"),
                      max_steps=1, batch_size=2, report_to="none", max_length=4096, eval_tasks="r3_procgen",
                      eval_limit=2, eval_max_gen_toks=8)
    res = sft.train(cfg)
    write_run(cfg, status="finished", **res)
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    os.environ.setdefault("R3BENCH_DATA_DIR", str(shared_data))
    for i, (args, tasks) in enumerate(((f"pretrained={tiny}", ["r3_procgen", "r3_jeebench"]),
                                       (res["lm_eval_model_args"], ["r3_procgen"]))):
        tracker = EvaluationTracker(output_path=str(root / "lm_eval" / str(i)))
        r = simple_evaluate(model="hf", model_args=args, batch_size=2, device="cpu", tasks=tasks,
                            task_manager=tm, limit=3, apply_chat_template=True, gen_kwargs={"max_gen_toks": 8},
                            bootstrap_iters=0, evaluation_tracker=tracker, log_samples=True)
        tracker.save_results_aggregated(results=r, samples=r["samples"])
        for name, samples in r["samples"].items():
            tracker.save_results_samples(task_name=name, samples=samples)
    # a base model scored by the trainers' evaluate_model outside a run (studies/train_compare.py does this)
    base_cfg = make(sft.Config, model=tiny, output_dir=str(root / "compare" / "cot"), eval_tasks="r3_procgen",
                           eval_limit=2, eval_max_gen_toks=8, report_to="none")
    tok = AutoTokenizer.from_pretrained(tiny)
    evaluate_model(AutoModelForCausalLM.from_pretrained(tiny), tok, base_cfg, tag="base")
    return root


@pytest.mark.slow
def test_leaderboard_tables_and_cli(runs, tmp_path, capsys):
    from r3bench.results import leaderboard
    from r3bench.apps.cli import main

    cells = leaderboard.collect([runs])
    got = {(c.task, c.model, c.method, c.n) for c in cells}
    assert ("r3_procgen", "tiny-model", "cot", 3) in got  # lm-eval, no adapter
    assert ("r3_procgen", "tiny-model", "sft", 3) in got   # lm-eval with the SFT adapter (method from run.json)
    assert ("r3_procgen", "tiny-model", "sft", 2) in got   # the trainer's own evaluation
    assert ("r3_procgen", "tiny-model", "cot", 2) in got   # evaluate_model(tag="base") outside a run
    jee = next(c for c in cells if c.task == "r3_jeebench")
    assert jee.method == "cot" and jee.n == 3 and jee.jee_score is not None and jee.jee_marks is not None
    assert main(["leaderboard", str(runs), "--out", str(tmp_path / "a")]) == 0
    md = (tmp_path / "a" / "leaderboard.md").read_text()
    # the base model on r3_procgen (seven-tag prompt) has its own column, not CoT (issue 18)
    assert "| task | model | CoT | base (seven-tag) | SFT | CoT JEE score |" in md and "| r3_procgen | tiny-model |" in md
    assert f"| {jee.jee_score:.3f} (marks {jee.jee_marks:g}) |" in md
    assert "more than one source" in md  # the two sft cells are reported, not silently merged
    rows = (tmp_path / "a" / "leaderboard.csv").read_text().splitlines()
    # `column` (issue 37): the column the markdown shows, beside the method the cell's source names
    assert rows[0].startswith("task,model,method,column,acc,acc_stderr,n,jee_score,") and len(rows) == 4
    leaderboard.write([runs], tmp_path / "b")  # same inputs, same bytes
    for f in ("leaderboard.md", "leaderboard.csv"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_leaderboard_without_inputs_is_an_error(tmp_path, capsys):
    from r3bench.apps.cli import main

    (tmp_path / "x.json").write_text(json.dumps({"a": 1}))
    assert main(["leaderboard", str(tmp_path), "--out", str(tmp_path / "o")]) == 1
    assert "no lm-eval results" in capsys.readouterr().err
    (tmp_path / "results_bad.json").write_text("{not json")  # a corrupt results file is listed, not a crash
    (tmp_path / "results_list.json").write_text("[1, 2]")
    assert main(["leaderboard", str(tmp_path), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "results_bad.json: JSONDecodeError" in err and "results_list.json" in err


@pytest.mark.slow
def test_plots_are_written(runs, tmp_path):
    from r3bench.results import leaderboard, plots

    png = plots.accuracy_bars(leaderboard.collect([runs]), tmp_path / "acc.png")
    curves = plots.training_curves([runs / "runs" / "sft"], tmp_path / "curves.png")
    for p in (png, curves):
        assert p is not None and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 2000
    assert plots.accuracy_bars([], tmp_path / "none.png") is None  # nothing to plot: no empty figure
    assert plots.training_curves([tmp_path], tmp_path / "none2.png") is None


@pytest.mark.slow
def test_demo_results_stage(runs, tmp_path):
    import shutil

    from r3bench.apps import demo

    shutil.copytree(runs / "runs", tmp_path / "runs")
    shutil.copytree(runs / "lm_eval", tmp_path / "lm_eval")
    text = demo.results_stage(tmp_path)
    assert "| r3_procgen | tiny-model |" in text
    assert len(list((tmp_path / "lm_eval").rglob("record_*.json"))) == 2 and (tmp_path / "runs" / "sft" / "record.json").is_file()
    assert "](lm_eval/0/" in text and "3 run records" in text  # cells link to their records
    assert (tmp_path / "leaderboard.md").is_file() and (tmp_path / "accuracy.png").is_file()
    assert (tmp_path / "training_curves.png").is_file()


def test_model_named_from_an_instance_run(tmp_path):
    """lm-eval given a model instance records its path in config.model and no model_args."""
    from r3bench.results import leaderboard

    d = {"results": {"r3_demo": {"acc,none": 0.5, "acc_stderr,none": 0.1}}, "n-samples": {"r3_demo": {"effective": 6}},
         "config": {"model": "some/dir/SmolLM2-135M-Instruct", "model_args": None}}
    (tmp_path / "results_x.json").write_text(json.dumps(d))
    (c,) = leaderboard.collect([tmp_path])
    assert (c.model, c.method, c.acc, c.stderr, c.n) == ("SmolLM2-135M-Instruct", "cot", 0.5, 0.1, 6)
    d["config"] = {"model": "hf", "model_args": "pretrained=x/tiny,dtype=float32"}
    (tmp_path / "results_x.json").write_text(json.dumps(d))
    assert leaderboard.collect([tmp_path])[0].model == "tiny"


def _tree_bytes(d):
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.mark.slow
def test_run_records_and_byte_identical_regeneration(runs, tmp_path, shared_data):
    """A record per cell source; the leaderboard links each cell to it and rebuilds, byte for byte,
    twice, from a copied folder, and from the records alone (as committed to results/)."""
    import hashlib
    import shutil
    from importlib.metadata import version

    from r3bench.results import leaderboard, records
    from r3bench.apps.cli import main

    work = tmp_path / "w"
    shutil.copytree(runs, work, ignore=shutil.ignore_patterns("checkpoint-*"))
    assert main(["record", str(work)]) == 0
    sha = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    (base_res,) = (work / "lm_eval" / "0").rglob("results_*.json")
    rec = records.read(records.record_path(base_res))
    assert {c["task"] for c in rec["cells"]} == {"r3_procgen", "r3_jeebench"}
    assert rec["model"]["id"] == "tiny-model"
    assert rec["model"]["weights_sha256"]["model.safetensors"] == sha(runs / "tiny-model" / "model.safetensors")
    pg = rec["tasks"]["r3_procgen"]
    assert pg["version"] == TASK_VERSION and pg["generation_kwargs"]["max_gen_toks"] == 8 and pg["task_hash"]
    assert pg["data"]["procgen"] == {"n": 2494, "seed": 0, "split": "test",
                                     "test_sha256": records.procgen_split_hash(2494, 0)}
    jd = rec["tasks"]["r3_jeebench"]["data"]
    assert jd["file"] == "jeebench/dataset_phy.json" and jd["sha256"] == sha(shared_data / jd["file"])
    assert rec["gen_kwargs"] == {"max_gen_toks": 8} and rec["seeds"]["random_seed"] == 0
    assert rec["packages"]["lm_eval"] == version("lm_eval") and rec["packages"]["torch"] == version("torch")
    assert len(rec["git"]["commit"]) == 40 and isinstance(rec["git"]["dirty"], bool)
    assert rec["hardware"]["cpus"] >= 1 and rec["adapter"] is None and rec["problems"] == []
    (peft_res,) = (work / "lm_eval" / "1").rglob("results_*.json")
    prec = records.read(records.record_path(peft_res))
    assert prec["adapter"]["method"] == "sft"
    assert prec["adapter"]["sha256"]["adapter_model.safetensors"] == sha(runs / "runs" / "sft" / "final" /
                                                                        "adapter_model.safetensors")
    trec = records.read(work / "runs" / "sft" / "record.json")
    assert trec["kind"] == "trainer" and trec["trainer"] == "sft" and trec["cells"][0]["n"] == 2
    for f in work.rglob("record*.json"):  # committable: no machine paths
        text = f.read_text()
        assert str(tmp_path) not in text and str(runs) not in text, f
    # every lm-eval / trainer cell links to its record
    cells = leaderboard.collect([work])
    assert all(c.record for c in cells if c.source.endswith((".json",)) and "base.json" not in c.source)
    assert main(["record", str(work)]) == 0  # nothing new to write: existing records are kept
    # regenerate: twice, and from a copy
    # (links are relative to the output folder since issue 37, so each table is written at the same place
    # relative to its sources: <src>/lb/<i>)
    shutil.copytree(work, tmp_path / "copy")
    outs = []
    for i, src in enumerate((work, work, tmp_path / "copy")):
        outs.append(src / "lb" / str(i))
        leaderboard.write([src], outs[-1], reference=None)
    assert _tree_bytes(outs[0]) == _tree_bytes(outs[1]) == _tree_bytes(outs[2])
    # from the records alone
    only = tmp_path / "records_only"
    assert main(["record", str(work), "--copy-to", str(only)]) == 0
    assert sorted(f.relative_to(only) for f in only.rglob("*") if f.is_file()) == \
        sorted(f.relative_to(work) for f in work.rglob("record*.json") if "lb" not in f.relative_to(work).parts)
    again = tmp_path / "records_only_copy"
    shutil.copytree(only, again)
    key = lambda c: (c.task, c.model, c.method, c.acc, c.n, c.jee_score)  # noqa: E731
    got = leaderboard.collect([only])
    assert sorted(map(key, got)) == sorted(key(c) for c in cells if c.record)
    leaderboard.write([only], only / "lb", reference=None)
    leaderboard.write([again], again / "lb", reference=None)
    assert _tree_bytes(only / "lb") == _tree_bytes(again / "lb")
    assert "](../lm_eval/0/" in (only / "lb" / "leaderboard.md").read_text()  # links to the record files


@pytest.mark.slow
def test_paper_reference_beside_cells(runs, tmp_path):
    from r3bench.results import leaderboard

    ref = tmp_path / "paper_reference.csv"
    ref.write_text("task,model,method,acc,n,source\n"
                   "r3_procgen,tiny-model,CoT,0.42,250,test table 1\n"
                   "r3_procgen,tiny-model,Ours,0.61,250,test table 1\n"   # Ours = stepfix: no such cell here
                   "r3_procgen,tiny-model,SFT,57.3,250,test table 1\n")   # percent, not a fraction: a problem
    problems = []
    md, csv_path, n = leaderboard.write([runs / "lm_eval"], tmp_path / "o", reference=ref, problems=problems)
    text = md.read_text()
    assert "· paper 0.420" in text and "paper 0.610" not in text and "test table 1" in text
    assert any("57.3" in p for p in problems) and "57.3" in text
    rows = {(r.split(",")[0], r.split(",")[2]): r for r in csv_path.read_text().splitlines()[1:]}
    assert ",0.420000,test table 1," in rows[("r3_procgen", "cot")]
    assert ",," in rows[("r3_procgen", "sft")]  # no paper number for it
    assert leaderboard.load_reference(tmp_path / "missing.csv") == {}
    bad = tmp_path / "bad.csv"
    bad.write_text("benchmark,acc\nx,1\n")
    problems = []
    assert leaderboard.load_reference(bad, problems) == {} and "missing column" in problems[0]


def test_method_and_model_of_strategy_wrappers(tmp_path):
    """r3bench's lm-eval wrappers name the method; the model is the inner `pretrained` (parsing test)."""
    from r3bench.results import leaderboard

    for model, method, label in (("r3-rag", "rag", "RAG"), ("r3-stepco", "stepco", "StepCo"),
                                 ("r3-bestofn", "bestofn", "Best-of-N")):
        d = {"results": {"r3_scieval": {"acc,none": 0.25, "acc_stderr,none": 0.05}},
             "n-samples": {"r3_scieval": {"effective": 164}},
             "config": {"model": model, "model_args": "inner=hf,pretrained=Qwen/Qwen2.5-1.5B-Instruct,verifier=psv"}}
        (tmp_path / f"results_{model}.json").write_text(json.dumps(d))
    cells = leaderboard.collect([tmp_path])
    assert {(c.model, c.method) for c in cells} == {("Qwen2.5-1.5B-Instruct", m) for m in ("rag", "stepco", "bestofn")}
    md, _ = leaderboard.tables(cells)
    assert md.startswith("| task | model | RAG | StepCo | Best-of-N |")


def test_committed_leaderboard_regenerates_byte_for_byte(tmp_path):
    """results/cpu holds the CPU plan's run records (only) and the tables made from them: rebuilt from
    a copy of the records, the tables come out byte for byte the same."""
    import shutil
    from pathlib import Path

    from r3bench.results import leaderboard

    repo = Path(__file__).resolve().parents[2]
    committed = repo / "results" / "cpu"
    if not (committed / "leaderboard.md").is_file():
        pytest.skip("no committed results/cpu/leaderboard.md")
    recs = sorted(committed.rglob("record*.json"))
    assert recs, "results/cpu/leaderboard.md without the run records it was made from"
    for f in recs:
        (tmp_path / f.relative_to(committed)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, tmp_path / f.relative_to(committed))
    problems = []
    leaderboard.write([tmp_path], tmp_path, reference=repo / "results" / "paper_reference.csv", problems=problems)
    assert problems == []
    for name in ("leaderboard.md", "leaderboard.csv"):
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), name
    for f in [*recs, committed / "leaderboard.md", committed / "leaderboard.csv"]:
        text = f.read_text()
        assert not any(f"/{seg}/" in text for seg in ("tmp", "root", "home", "work")), f  # no machine path


def test_trainer_of_a_python_m_run():
    """`python -m trainers.X` records trainer "__main__": the trainer is recognised by its config fields."""
    from r3bench.results.leaderboard import trainer_of

    assert trainer_of({"trainer": "__main__", "config": {"kl_estimator": "full", "tau": 0.9}}) == "stepfix"
    assert trainer_of({"trainer": "__main__", "config": {"tau": 0.1}}) == "dpo"
    assert trainer_of({"trainer": "__main__", "config": {"lora_r": 8}}) == "sft"
    assert trainer_of({"trainer": "grpo", "config": {}}) == "grpo"


def test_links_relative_to_the_table(tmp_path):
    """`r3bench leaderboard results/x --out results`: links resolve from results/leaderboard.md."""
    import shutil

    from r3bench.results import leaderboard

    repo_cpu = __import__("pathlib").Path(__file__).resolve().parents[2] / "results" / "cpu"
    if not repo_cpu.is_dir():
        pytest.skip("no committed results/cpu")
    shutil.copytree(repo_cpu, tmp_path / "results" / "cpu")
    md, _, n = leaderboard.write([tmp_path / "results" / "cpu"], tmp_path / "results", reference=None)
    links = [x.split("](", 1)[1].split(")", 1)[0] for x in md.read_text().split("[")[1:] if "](" in x]
    assert n and links and all(x.startswith("cpu/") and (md.parent / x).is_file() for x in links)


def test_oracle_verifier_strategy_runs_are_their_own_method(tmp_path):
    """StepCo / Best-of-N whose verifier read the reference (symbolic, judge) never share the real column."""
    from r3bench.results import leaderboard

    for model, args, oracle, where in (("r3-stepco", "verifier=symbolic", True, "top"),
                                       ("r3-stepco", "verifier=psv,psv_model=p", False, "top"),
                                       ("r3-bestofn", "scorer=judge", True, "config"),
                                       ("r3-bestofn", "scorer=vote", False, "config")):
        d = {"results": {"r3_scieval": {"acc,none": 0.5, "acc_stderr,none": 0.1}},
             "config": {"model": model, "model_args": f"inner=hf,pretrained=Qwen/Qwen2.5-1.5B-Instruct,{args}"}}
        info = {"oracle_verifier": oracle}
        if where == "top":
            d["r3bench_strategy"] = info
        else:
            d["config"]["r3bench_strategy"] = info
        (tmp_path / f"results_{model}_{oracle}.json").write_text(json.dumps(d))
    cells = leaderboard.collect([tmp_path])
    assert sorted(c.method for c in cells) == ["bestofn", "bestofn_oracle", "stepco", "stepco_oracle"]
    md, _ = leaderboard.tables(cells)
    assert md.startswith("| task | model | StepCo | StepCo (oracle verifier) | Best-of-N | Best-of-N (oracle verifier) |")


def test_reference_short_rows_and_where_it_is_read_from(tmp_path, monkeypatch):
    from r3bench.results import leaderboard

    ref = tmp_path / "ref.csv"
    ref.write_text("task,model,method,acc,n,source\nr3_scieval,M,CoT,0.5,10,paper\nr3_scieval,M\n"
                   "r3_scieval,M,SFT,0.6\n")
    problems = []
    got = leaderboard.load_reference(ref, problems)
    assert set(got) == {("r3_scieval", "M", "cot"), ("r3_scieval", "M", "sft")} and got[("r3_scieval", "M", "sft")][
        "source"] == "" and len(problems) == 1 and problems[0].startswith("ref.csv:3:")
    # the default reference is the repository's, whatever the working directory
    monkeypatch.chdir(tmp_path)
    assert leaderboard.REFERENCE.is_absolute() and leaderboard.REFERENCE.parent.parent == leaderboard.REPO
    problems = []
    leaderboard.load_reference(leaderboard.REFERENCE, problems)
    leaderboard.load_reference("results/paper_reference.csv", problems)  # the CLI's default, from elsewhere
    assert problems == []
    leaderboard.load_reference(tmp_path / "a" / "b" / "nope.csv", problems)  # given explicitly: said so
    assert problems == ["a/b/nope.csv: reference table not found (no paper column)"]


def test_run_with_odd_eval_file_names_and_short_problem_paths(tmp_path):
    from r3bench.results import leaderboard

    run = tmp_path / "runs" / "sft"
    (run / "eval").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"trainer": "sft", "config": {"model": "m"}}))
    for name, acc in (("step-1", 0.25), ("step-2", 0.5), ("step-final", 0.9), ("step-2.bak", 0.9)):
        (run / "eval" / f"{name}.json").write_text(json.dumps({"summary": {"tasks": {"t": {"acc": acc, "n": 4}}}}))
    problems = []
    (c,) = leaderboard.collect([tmp_path], problems)
    assert (c.method, c.acc, c.source) == ("sft", 0.5, "runs/sft/eval/step-2.json") and problems == []
    leaderboard.collect([tmp_path / "x" / "y" / "missing"], problems)
    assert problems == ["x/y/missing: not found"]
