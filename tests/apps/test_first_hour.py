"""A new user's first hour (issue 37): the trainers say when a step has nothing to learn, printed
commands keep what they run, the demo finds the data and states its times, samples say what was
checked, wrong task names fail early, plots and the leaderboard read right, `r3bench doctor`."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


# ---- 1. nothing to learn ----------------------------------------------------------------------------

def test_nothing_to_learn_names_the_reason():
    from trainers.core.mixins import nothing_to_learn

    assert nothing_to_learn(n=4, format_failures=4, rewards=[0.0] * 4).startswith("all 4 samples failed")
    assert "same reward" in nothing_to_learn(n=4, format_failures=0, rewards=[0.25] * 4)
    assert "no sample" in nothing_to_learn(n=4, format_failures=0, rewards=[])
    assert nothing_to_learn(n=4, format_failures=1, rewards=[0.0, 0.25, 0.5]) is None
    assert nothing_to_learn(n=0, format_failures=0, rewards=[]) is None  # no step at all


def test_phase_progress_prints_on_the_first_and_on_long_steps():
    import io

    from trainers.core.mixins import PhaseProgress

    out, now = io.StringIO(), [0.0]
    p = PhaseProgress(long_s=60, out=out, clock=lambda: now[0])
    p.begin_step(1)
    p.phase("generating y1 for 4 problems")
    now[0] = 5.0
    p.end_step()
    text = out.getvalue()
    assert "step 1" in text and "generating y1 for 4 problems" in text
    p.begin_step(2)  # the last step took 5 s: quiet
    p.phase("generating")
    now[0] = 100.0
    p.end_step()
    assert out.getvalue() == text
    p.begin_step(3)  # the last step took 95 s: lines again
    p.phase("verifying")
    assert "step 3" in out.getvalue() and "verifying" in out.getvalue()


@pytest.mark.slow
def test_stepfix_on_a_model_that_never_writes_the_format_warns_and_counts(tiny, data, tmp_path, capsys):
    """The tiny random model fails the seven-tag format on every sample: r1 = r2 = 0, a loss of ~0.
    The run says so on stderr, with what to do, and counts it in metrics.jsonl and run.json."""
    from trainers import stepfix
    from trainers.core.config import make

    cfg = make(stepfix.Config, model=tiny, data=data, output_dir=str(tmp_path), max_steps=1, batch_size=2,
                      grad_accum=1, save_steps=5, eval_tasks="", report_to="none", max_length=4096, seed=0,
                      max_new_tokens=4)
    stepfix.train(cfg)
    err = capsys.readouterr().err
    assert "nothing to learn" in err and "failed the seven-tag format" in err and "SFT" in err
    logs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    step = next(d for d in logs if "skip_rate" in d)
    assert step["nothing_to_learn"] == 1
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["nothing_to_learn_steps"] == 1 and run["global_step"] == 1
    assert "step 1" in err and "generating" in err  # progress inside the (first) step


@pytest.mark.slow
def test_grpo_with_one_reward_for_every_sample_warns_and_counts(tiny, data, tmp_path, capsys):
    from trainers import grpo
    from trainers.core.config import make

    cfg = make(grpo.Config, model=tiny, data=data, output_dir=str(tmp_path), max_steps=1, batch_size=4,
                      grad_accum=1, save_steps=5, eval_tasks="", report_to="none", max_length=4096, seed=0,
                      group_size=2, max_completion_length=4, rewards="position")
    grpo.train(cfg)
    err = capsys.readouterr().err
    assert "nothing to learn" in err and "same reward" in err
    logs = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert next(d for d in logs if "loss" in d)["nothing_to_learn"] == 1
    assert json.loads((tmp_path / "run.json").read_text())["nothing_to_learn_steps"] == 1


# ---- 2. printed commands keep what they run -----------------------------------------------------------

def test_demo_score_command_saves_samples_with_a_limit_and_a_cost(tmp_path):
    from r3bench.apps import demo

    cmd = demo.score_command("pretrained=M,peft=A", tmp_path / "runs" / "stepfix", max_gen_toks=160)
    for part in ("--output_path", "--log_samples", "--limit", "--device cpu", "--tasks r3_procgen",
                 "--gen_kwargs max_gen_toks=160", "--apply_chat_template"):
        assert part in cmd, part
    assert "min" in demo.score_cost(limit=5, max_gen_toks=160)


def test_trainer_end_of_run_command_saves_samples_with_a_limit():
    from trainers import sft
    from trainers.core.config import make
    from trainers.core.evaluation import no_eval_note

    cfg = make(sft.Config, output_dir="runs/x")
    note = no_eval_note(cfg, "BASE", Path("runs/x/final"))
    assert "--output_path" in note and "--log_samples" in note and "--limit" in note and "--device cpu" in note


def test_demo_and_trainers_print_the_same_scoring_command_with_one_default_limit(tmp_path):
    """One default for the scoring limit: the command a trainer prints at the end of a run (and writes
    into the run's README.md) is, character for character, the one the demo prints for the same run."""
    from r3bench.apps import demo
    from trainers import sft
    from trainers.core.config import BaseConfig, make
    from trainers.core.evaluation import lm_eval_args, no_eval_note, score_command

    run = tmp_path / "runs" / "stepfix"
    cfg = make(sft.Config, output_dir=str(run), eval_max_gen_toks=224)
    margs = lm_eval_args("BASE", run / "final")
    assert demo.SCORE_LIMIT == BaseConfig.eval_limit == cfg.eval_limit
    assert demo.score_command(margs, run, 224) == score_command(cfg, margs)
    assert demo.score_command(margs, run, 224) in no_eval_note(cfg, "BASE", run / "final")
    assert f"--limit {BaseConfig.eval_limit} " in score_command(make(sft.Config, output_dir=str(run), eval_limit=0), margs)


# ---- 3. the demo finds the data and states its times ---------------------------------------------------

def test_demo_finds_the_shared_data_directory_beside_the_repository(monkeypatch, tmp_path):
    from r3bench.apps import demo

    monkeypatch.delenv("R3BENCH_DATA_DIR", raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setattr(demo, "REPO", tmp_path / "elsewhere" / "repo")  # not the checkout's own ../shared/data
    found, how = demo.find_data_dir(None)
    assert Path(found).resolve() == (tmp_path / "shared" / "data").resolve() and "../shared/data" in how
    monkeypatch.setenv("R3BENCH_DATA_DIR", str(tmp_path))
    assert demo.find_data_dir(None)[0] == str(tmp_path)
    assert demo.find_data_dir("given")[0] == "given"
    monkeypatch.delenv("R3BENCH_DATA_DIR")
    monkeypatch.chdir(tmp_path)
    found, how = demo.find_data_dir(None)
    assert found is None and "r3bench data fetch" in how and "error" not in how.lower()


def test_demo_states_the_expected_time_of_every_stage_before_it_starts(tmp_path, capsys):
    from r3bench.apps import demo

    plan = demo.plan_text(skip_eval=False, skip_train=False, with_data=True)
    for stage in ("checker", "procedural", "lm-eval", "training", "leaderboard"):
        line = next(x for x in plan.splitlines() if f" {stage}:" in x)
        assert "min" in line, line
    demo.run(out_dir=str(tmp_path / "d"), skip_eval=True)
    out = capsys.readouterr().out
    first = out[: out.index("## [1/2]")]
    assert "expected time" in first and "checker" in first and "procedural" in first
    assert "## [2/2] Procedural" in out and "(procedural: done in" in out


def test_demo_states_later_stages_at_the_pace_it_measured(capsys):
    """Quiet-machine figures until a long stage has run; then each stage's expectation is scaled by the
    pace measured (here lm-eval took 5x its figure: the training stage is announced at 5x too)."""
    from r3bench.apps import demo

    st = demo._Stages(skip_eval=False, skip_train=False)
    quiet = next(m for name, _, m in demo.STAGES if name == "training")
    assert st.expected("training") == f"expected ~{quiet:.0f} min"
    st.begin("lm-eval", "lm-eval")
    lm_eval_m = next(m for name, _, m in demo.STAGES if name == "lm-eval")
    st.t0 -= 5 * 60 * lm_eval_m  # as if the stage had run 5x its quiet-machine figure
    st.end("lm-eval")
    assert st.pace() == pytest.approx(5, rel=0.01)
    assert f"~{5 * quiet:.0f} min" in st.expected("training") and "5.0x" in st.expected("training")
    st.begin("training", "Training")
    assert f"(expected ~{5 * quiet:.0f} min at this machine's pace" in capsys.readouterr().out


def test_a_quick_lm_eval_stage_does_not_shorten_the_training_stages_expectation():
    """lm-eval done in a fifth of its figure (a fast machine, a model converted already) says nothing of
    training: it keeps its quiet-machine figure (it was announced at "~1 min" after such a stage and took
    188 s)."""
    from r3bench.apps import demo

    st = demo._Stages(skip_eval=False, skip_train=False)
    quiet = next(m for name, _, m in demo.STAGES if name == "training")
    st.begin("lm-eval", "lm-eval")
    st.t0 -= 0.2 * 60 * next(m for name, _, m in demo.STAGES if name == "lm-eval")
    st.end("lm-eval")
    assert st.pace() == pytest.approx(0.2, rel=0.05)
    assert st.expected("training") == f"expected ~{quiet:.0f} min"


def test_demo_ends_with_the_files_to_open_in_order(tmp_path, capsys):
    from r3bench.apps import demo

    out = tmp_path / "d"
    assert demo.run(out_dir=str(out), skip_eval=True) == 0
    text = capsys.readouterr().out
    tail = text[text.index("Open, in this order:"):].splitlines()[1:]
    assert tail == [f"  {out / 'check.md'}: {dict((p.name, w) for p, w in demo.files_to_open(out, {'checker'}))['check.md']}"]
    # after a whole run: the leaderboard first, then what each stage wrote, one line each on what it shows
    for name in ("leaderboard.md", "eval.md", "train.md", "accuracy.png", "training_curves.png"):
        (out / name).write_text("x")
    for name in ("lm_eval", "runs"):
        (out / name).mkdir()
    rows = demo.files_to_open(out, {name for name, _, _ in demo.STAGES})
    assert [p.name for p, _ in rows][:3] == ["leaderboard.md", "eval.md", "lm_eval"] and len(rows) == 8
    assert all(len(what) > 10 and "\n" not in what for _, what in rows)


def test_committed_sft_start_becomes_a_peft_adapter(tmp_path):
    """The demo's stepfix starts from the learning study's SFT start, committed as adapter parts: joined,
    they are a peft folder of SmolLM2 with every tensor of the parts."""
    from safetensors import safe_open

    from r3bench.apps import demo
    from r3bench.core import models

    assert (demo.SFT_START / "adapter_config.json").is_file()
    dst = models.adapter_from_parts(demo.SFT_START, tmp_path / "start")
    cfg = json.loads((dst / "adapter_config.json").read_text())
    assert cfg["base_model_name_or_path"] == demo.DEFAULT_MODEL and cfg["peft_type"] == "LORA"
    n_parts = 0
    for part in sorted(demo.SFT_START.glob("adapter-*.safetensors")):
        with safe_open(str(part), "pt") as f:
            n_parts += len(list(f.keys()))
    with safe_open(str(dst / "adapter_model.safetensors"), "pt") as f:
        assert len(list(f.keys())) == n_parts > 0
    with pytest.raises(models.ModelError, match="adapter_config.json"):
        models.adapter_from_parts(tmp_path / "nothing", tmp_path / "x")


def test_demo_leaderboard_uses_the_data_directory_found_at_the_start(tmp_path, shared_data, monkeypatch):
    """One data directory from start to end: the guessing baselines of the leaderboard come from the
    directory the demo found, not from a second search that ends 'no benchmark data directory'."""
    from r3bench.apps import demo

    monkeypatch.delenv("R3BENCH_DATA_DIR", raising=False)
    d = {"results": {"r3_mmlu_college": {"acc,none": 0.5, "acc_stderr,none": 0.1, "acc_flexible,none": 0.5}},
         "n-samples": {"r3_mmlu_college": {"effective": 2}},
         "config": {"model": "hf", "model_args": "pretrained=r3bench/smollm2-135m-instruct"}}
    (tmp_path / "lm_eval" / "m").mkdir(parents=True)
    (tmp_path / "lm_eval" / "m" / "results_x.json").write_text(json.dumps(d))
    text = demo.results_stage(tmp_path, data_dir=str(shared_data))
    assert "no benchmark data directory" not in text
    assert "0.373" in (tmp_path / "leaderboard.md").read_text()  # MMLU-College's majority baseline


# ---- 4. samples say what was checked ---------------------------------------------------------------------

def test_process_results_carry_the_extracted_answer_and_the_checkers_reason():
    from r3bench.eval import lmeval

    doc = {"answer": "B", "answer_kind": "mcq", "benchmark": "jeebench"}
    for fn in (lmeval.results_cot, lmeval.results_structured, lmeval.results_jeebench,
               lmeval.results_jeebench_structured):
        r = fn(doc, ["so the answer is (C) 6.8e-34"])
        assert r["answer"] == "C" and r["reason"] and r["acc"] == 0.0, fn.__name__
    r = lmeval.results_sc(doc, [["The answer is (B)", "The answer is (B)", "The answer is (C)"]])
    assert r["answer"] == "B" and r["reason"]


def test_every_checker_task_declares_answer_and_reason_and_is_versioned_up():
    sys.path.insert(0, str(REPO / "tasks" / "r3"))
    try:
        import _generate as g
    finally:
        sys.path.pop(0)
    from r3bench.eval import lmeval

    assert g.version_of("r3_jeebench") > 1.0
    for variant in ("cot", "structured", "sc"):
        names = [m["metric"] for m in g.config("t", "jeebench", variant)["metric_list"]]
        assert "answer" in names and "reason" in names, variant
    assert lmeval.agg_distinct(["C", "C", "B"]) == 2
    text = (REPO / "tasks" / "r3" / "r3_jeebench.yaml").read_text() + (REPO / "tasks" / "r3" /
                                                                          "_r3_cot_template_yaml").read_text()
    assert "metric: reason" in text and f"version: {g.version_of('r3_jeebench')}" in text


# ---- 5. unknown task names and a missing data directory: before any model loads -------------------

def test_unknown_task_name_is_one_line_with_the_closest_names(monkeypatch, capsys):
    from r3bench.apps import cli

    def no_lm_eval(*a, **k):
        raise AssertionError("lm_eval started")
    monkeypatch.setattr(cli, "_run_lm_eval", no_lm_eval)
    rc = cli.main(["eval", "--tasks", "r3_jeebnch", "--model", "hf", "--model_args", "pretrained=x"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "r3_jeebnch" in err and "r3_jeebench" in err


def test_missing_data_dir_is_one_line_before_the_model(monkeypatch, capsys, tmp_path):
    from r3bench.apps import cli

    monkeypatch.setattr(cli, "_run_lm_eval", lambda *a, **k: (_ for _ in ()).throw(AssertionError("started")))
    monkeypatch.delenv("R3BENCH_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli.demo, "REPO", tmp_path / "elsewhere" / "repo")
    rc = cli.main(["eval", "--tasks", "r3_jeebench", "--model", "hf", "--model_args", "pretrained=x"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "--data-dir" in err
    rc = cli.main(["eval", "--tasks", "r3_jeebench", "--data-dir", str(tmp_path / "nope"), "--model", "hf"])
    assert rc == 2 and "nope" in capsys.readouterr().err


def test_known_task_names_pass(monkeypatch, shared_data):
    from r3bench.apps import cli

    seen = []
    monkeypatch.setattr(cli, "_run_lm_eval", lambda argv: seen.append(argv) or 0)
    assert cli.main(["eval", "--tasks", "r3_demo,r3_jeebench,hellaswag", "--data-dir", str(shared_data),
                     "--model", "hf", "--model_args", "pretrained=x"]) == 0
    assert seen


# ---- issue 32: r3bench check arguments ----------------------------------------------------------------

def test_check_an_answer_that_looks_like_an_option_reads_no_file(capsys):
    from r3bench.apps import cli

    rc = cli.main(["check", "--jsonl=/etc/hostname", "5"])
    cap = capsys.readouterr()
    assert rc == 2 and "--" in cap.err and cap.out == ""
    assert cli.main(["check", "--", "--jsonl=/etc/hostname", "5"]) == 0
    assert json.loads(capsys.readouterr().out)["equivalent"] is False


def test_check_swapped_arguments_are_named(capsys):
    from r3bench.apps import cli

    assert cli.main(["check", "B", "The answer is (B) because ..."]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["equivalent"] is False
    assert "swapped" in cap.err and "PRED" in cap.err
    assert cli.main(["check", "The answer is (B) because ...", "B"]) == 0
    assert "swapped" not in capsys.readouterr().err


# ---- 7. plots, leaderboard, doctor ---------------------------------------------------------------------

def _cell(task, method, acc, n=6, record=None):
    from r3bench.results.cells import Cell

    return Cell(task, "M", method, acc, 0.0, n, "src", None, None, record=record) if record else \
        Cell(task, "M", method, acc, 0.0, n, "src", None, None)


def test_not_run_slots_do_not_dwarf_the_bars_and_a_zero_bar_is_seen(tmp_path, monkeypatch):
    from r3bench.results import plots

    drawn = {}
    real = plots.save

    def grab(plt, fig, out):
        ax = fig.axes[0]
        drawn["heights"] = [p.get_height() for p in ax.patches]
        drawn["ylim"] = ax.get_ylim()
        return real(plt, fig, out)
    monkeypatch.setattr(plots, "save", grab)
    cells = [_cell("r3_demo", "cot", 0.17), _cell("r3_procgen", "cot", 0.17), _cell("r3_demo", "sft", 0.0)]
    assert plots.accuracy_bars(cells, tmp_path / "a.png")
    assert max(drawn["heights"]) <= 0.5  # the hatched not-run slot is no taller than the data shown
    assert min(h for h in drawn["heights"]) > 0  # a 0.00 bar is drawn with a visible height
    assert drawn["ylim"][1] < 1.0  # the axis fits the data, not 1.12


def test_training_curves_ticks_do_not_overlap_and_no_offset_label(tmp_path):
    from r3bench.results import plots

    run = tmp_path / "stepfix"
    run.mkdir()
    run.joinpath("metrics.jsonl").write_text("".join(json.dumps({"step": s, "loss": 1.3e-7 + s * 1e-9}) + "\n"
                                                     for s in range(1, 41)))
    plt = plots.pyplot()
    seen = {}
    real = plots.save

    def grab(p, fig, out):
        ax = fig.axes[0]
        fig.canvas.draw()
        seen["xticks"] = len([t for t in ax.get_xticks() if 1 <= t <= 40])
        seen["offset"] = ax.yaxis.get_offset_text().get_text()
        return real(p, fig, out)
    import pytest as _p
    mp = _p.MonkeyPatch()
    mp.setattr(plots, "save", grab)
    try:
        assert plots.training_curves([run], tmp_path / "c.png")
    finally:
        mp.undo()
    assert seen["xticks"] <= 8 and seen["offset"] == ""
    plt.close("all")


def test_leaderboard_links_resolve_from_the_output_folder(tmp_path):
    from r3bench.results import leaderboard

    src = REPO / "results" / "cpu"
    out = tmp_path / "elsewhere"
    md, csv_path, n = leaderboard.write([src], out, reference=None)
    import re

    links = re.findall(r"\]\(([^)]+)\)", md.read_text())
    assert links and all((out / x).resolve().is_file() for x in links), links[:3]


def test_leaderboard_says_which_runs_have_no_evaluation(tmp_path):
    from r3bench.results import leaderboard

    run = tmp_path / "runs" / "sft"
    run.mkdir(parents=True)
    run.joinpath("run.json").write_text(json.dumps({"trainer": "sft", "status": "finished",
                                                    "config": {"model": "M", "eval_tasks": ""}}))
    md, _, n = leaderboard.write([tmp_path], tmp_path, reference=None)
    assert n == 0 and "no evaluation" in md.read_text() and "runs/sft" in md.read_text()


def test_leaderboard_csv_names_the_column_the_markdown_shows(tmp_path):
    from r3bench.results import leaderboard

    md, csv_text = leaderboard.tables([_cell("r3_demo_structured", "cot", 0.25)], {})
    assert "base (seven-tag)" in md
    assert csv_text.splitlines()[0].startswith("task,model,method,column,")
    assert ",cot,base (seven-tag)," in csv_text  # the method, and the column the markdown shows it in


def test_results_lm_eval_is_ignored_by_git():
    import subprocess

    r = subprocess.run(["git", "check-ignore", "-q", "results/lm_eval/x/results_1.json"], cwd=REPO)
    assert r.returncode == 0


def test_doctor_prints_one_table_of_what_a_run_needs(capsys):
    from r3bench.apps import cli

    assert cli.main(["doctor"]) in (0, 1)
    out = capsys.readouterr().out
    for row in ("torch", "model file", "data directory", "lm-eval tasks", "sandbox", "free disk", "memory"):
        assert row in out, row
    assert out.count("| ") >= 7


def test_lm_eval_samples_show_the_checked_answer_beside_the_target():
    """Through lm-eval itself (a stand-in LM that always answers (C)): each sample of r3_demo carries
    answer and reason beside target, filtered_resps keeps the whole response, acc is unchanged."""
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager

    from r3bench.eval.hook import tasks_dir

    class AlwaysC(LM):
        def generate_until(self, requests, disable_tqdm=False):
            return ["Reasoning... so the answer is (C)" for _ in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    r = simple_evaluate(model=AlwaysC(), tasks=["r3_demo"], log_samples=True, bootstrap_iters=0,
                        task_manager=TaskManager(include_path=str(tasks_dir()), include_defaults=False))
    samples = r["samples"]["r3_demo"]
    mcq = [s for s in samples if s["doc"]["answer_kind"] == "mcq"]
    assert mcq and all(s["answer"] == "C" and s["reason"] and "target" in s for s in mcq)
    assert all(s["filtered_resps"] == ["Reasoning... so the answer is (C)"] for s in samples)
    right = sum(s["doc"]["answer"] == "C" for s in mcq) / len(samples)
    assert r["results"]["r3_demo"]["acc,none"] == pytest.approx(right)


def test_lm_eval_results_table_lists_scores_only():
    """answer and reason are per-sample fields, not metrics: lm-eval's printed table (make_table) and
    results hold no `answer` / `reason` row and no NaN row (a kind of answer absent from the documents
    scored, here under a limit), while every sample keeps both fields and the scores stay."""
    pytest.importorskip("lm_eval")
    from lm_eval import simple_evaluate
    from lm_eval.api.model import LM
    from lm_eval.tasks import TaskManager
    from lm_eval.utils import make_table

    from r3bench.eval.hook import tasks_dir

    class AlwaysC(LM):
        def generate_until(self, requests, disable_tqdm=False):
            return ["so the answer is (C)" for _ in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    for limit in (None, 2):
        r = simple_evaluate(model=AlwaysC(), tasks=["r3_demo", "r3_demo_structured"], log_samples=True,
                            bootstrap_iters=0, task_manager=tm, limit=limit)
        table = make_table(r)
        rows = [[c.strip() for c in line.split("|")] for line in table.splitlines()[2:]]
        metrics = {row[5] for row in rows if len(row) > 7}
        assert "acc" in metrics and "format_compliance" in metrics, table
        assert not {"answer", "reason"} & metrics, table
        assert not any(row[7].lower() == "nan" for row in rows if len(row) > 7), table
        for task, res in r["results"].items():
            assert not any(k.split(",")[0] in ("answer", "reason", "answer_stderr", "reason_stderr") for k in res)
            assert all(v == v for v in res.values() if isinstance(v, float)), (task, res)
        for task in ("r3_demo", "r3_demo_structured"):
            assert all("answer" in s and s["reason"] for s in r["samples"][task])


def test_a_plan_with_a_misspelt_task_fails_when_loaded(tmp_path):
    """Before any training or model load: the plan names r3_jeebnch."""
    from r3bench.apps import reproduce

    plan = tmp_path / "p.yaml"
    plan.write_text("models: [r3bench/smollm2-135m-instruct]\nmethods: [cot]\ntasks: [r3_jeebnch]\n")
    with pytest.raises(reproduce.PlanError, match="r3_jeebnch.*r3_jeebench"):
        reproduce.load_plan(str(plan))


# --- plain lm_eval: the same checks before the model loads (the hook wraps simple_evaluate) ----------

def _plain_lm_eval(args, env_extra, tmp_path):
    import os
    import subprocess
    import time

    env = {k: v for k, v in os.environ.items() if k != "R3BENCH_DATA_DIR"}
    env.update(env_extra)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "lm_eval", *args, "--model", "hf", "--model_args",
                        "pretrained=r3bench/smollm2-135m-instruct", "--device", "cpu", "--limit", "1"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    return r, time.monotonic() - t0


def test_plain_lm_eval_misspelt_task_is_one_line_with_the_closest_names(tmp_path):
    r, _ = _plain_lm_eval(["--tasks", "r3_jeebnch"], {}, tmp_path)
    assert r.returncode != 0
    last = [x for x in r.stderr.strip().splitlines() if x.strip()][-1]
    assert "r3_jeebench" in last and "Traceback" not in r.stderr, r.stderr[-1500:]


def test_plain_lm_eval_without_the_data_directory_stops_before_the_model_loads(tmp_path):
    r, secs = _plain_lm_eval(["--tasks", "r3_jeebench"], {"R3BENCH_DATA_DIR": str(tmp_path / "nowhere")}, tmp_path)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr[-1500:]
    last = [x for x in r.stderr.strip().splitlines() if x.strip()][-1]
    assert last.startswith("r3bench: r3_jeebench read(s) the benchmark data") and "does not exist" in last
    assert "Loading weights" not in r.stderr  # stopped before the model


def test_preflight_leaves_good_requests_and_other_tasks_alone(shared_data):
    from r3bench.eval import preflight

    assert preflight.problem(["r3_jeebench"], {"data_dir": str(shared_data)}) is None
    assert preflight.problem(["r3_procgen", "r3_demo"], None) is None  # read no data directory
    assert preflight.problem(["hellaswag"], None) is None  # lm-eval's own task: not ours to judge
    assert "closest: r3_jeebench" in preflight.problem("r3_jeebnch,r3_procgen")


def test_simple_evaluate_takes_the_data_directory_from_the_task_manager(shared_data, monkeypatch):
    """The demo and the trainers give the data directory as TaskManager metadata, not simple_evaluate's:
    the preflight must read it there too (it stopped the demo's eval stage)."""
    import lm_eval.evaluator as ev
    from lm_eval.tasks import TaskManager

    from r3bench.eval import hook, preflight

    monkeypatch.delenv("R3BENCH_DATA_DIR", raising=False)
    seen = {}
    monkeypatch.setattr(ev, "simple_evaluate", lambda model=None, tasks=None, task_manager=None, metadata=None,
                        **kw: seen.setdefault("ran", True))
    hook.patch_evaluator(ev)
    tm = TaskManager(include_path=str(hook.tasks_dir()), include_defaults=False, metadata={"data_dir": str(shared_data)})
    assert ev.simple_evaluate(model="x", tasks=["r3_jeebench"], task_manager=tm) is True
    with pytest.raises(preflight.PreflightError, match="read\\(s\\) the benchmark data"):
        ev.simple_evaluate(model="x", tasks=["r3_jeebench"], task_manager=TaskManager(include_defaults=False))


def test_the_demo_lists_y1s_verdict_classes_only():
    """stepfix's metrics.jsonl holds y1 sample and token counts beside the classes (y1_generated, y1_tokens):
    the demo's table listed them as classes ("tokens=443")."""
    from r3bench.apps import demo

    row = {"y1_CE": 1, "y1_FORMAT": 1, "y1_generated": 2, "y1_tokens": 443, "y1_truncated": 1, "y2_CM": 1}
    assert demo.y1_classes(row) == "CE=1, FORMAT=1"
