"""`r3bench demo`: the embedded default main job.

It runs what the project has so far, end to end, on data embedded in the package:

1. the unit-aware answer checker over a table of physics answer pairs with human labels, and a
   seven-tag reference solution parsed and its final answer checked -> `<out>/check.md`, `check.jsonl`;
2. real lm-eval on the default model, SmolLM2-135M-Instruct (from its packaged GGUF, converted
   once): task `r3_demo` (six embedded problems, CoT and seven-tag prompts) and, when a data
   directory is set, the five benchmark tasks on `--limit` problems each -> `<out>/eval.md`, and
   lm-eval's own results/samples files under `<out>/lm_eval/`;
3. training on the procedural bank: a 2-step LoRA SFT of SmolLM2 (`python -m trainers.sft`: the SFT
   trainer runs; two steps teach nothing), then one stepfix step (`python -m trainers.stepfix`:
   sample, verify, feedback, revise, PG + KL) from the learning study's SFT start
   (results/learning/sft_start, which writes the seven-tag format, so the step has something to
   learn; the demo's own SFT adapter where that folder is absent), and the stepfix adapter scored
   through lm-eval (`r3_demo_structured`) -> `<out>/train.md`, run folders under `<out>/runs/` (each
   with the config.yaml it ran and the trainer's output in trainer.log). The trainers run as
   subprocesses, as a user runs them. A smoke run of the pipeline: one step changes nothing measurable.

4. a run record for every cell (r3bench/results/records.py: data checksums, task versions, model and adapter
   hashes, seeds, generation settings, packages, git commit, hardware), then the leaderboard of these
   cells (`r3bench leaderboard` over `<out>/lm_eval` and `<out>/runs`, each cell linked to its record,
   the paper's number beside it where results/paper_reference.csv has one) -> `<out>/leaderboard.md`,
   `.csv`, and plots `<out>/accuracy.png`, `<out>/training_curves.png`.

It ends with the files to open, in order (`files_to_open`). lm-eval's output is named by model, as
plain `lm_eval --model_args pretrained=...` names it (`<out>/lm_eval/r3bench__smollm2-135m-instruct/`).
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import time
import warnings
from importlib import resources
from pathlib import Path

import yaml
from tqdm import tqdm

from r3bench import procgen
from r3bench.core import models
from r3bench.eval.data import BENCHMARKS, DataError, data_dir as _dd
from r3bench.eval.data import summary_table
from r3bench.eval.hook import tasks_dir
from r3bench.procgen.export import export
from r3bench.results import leaderboard, plots, records
from verifiers import check
from verifiers import seventag


def load_pairs() -> list[dict]:
    """The embedded labelled answer pairs (package data)."""
    text = resources.files("r3bench.apps").joinpath("demo_pairs.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def check_table(pairs: list[dict]) -> list[dict]:
    """Check every pair; each row carries the verdict, the label and the time taken."""
    rows = []
    for p in tqdm(pairs, desc="checking answer pairs", unit="pair"):
        t0 = time.perf_counter()
        v = check(p["pred"], p["ref"], kind=p.get("kind"))
        rows.append({**p, **v.to_dict(), "agrees": v.equivalent == p["label"],
                     "ms": round(1000 * (time.perf_counter() - t0), 2)})
    return rows


def _md_table(rows: list[dict]) -> str:
    def cell(s) -> str:
        return str(s).replace("|", "\\|").replace("\n", " ")[:70]

    out = ["| what | pred | ref | kind | equivalent | label | reason |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {cell(r['what'])} | `{cell(r['pred'])}` | `{cell(r['ref'])}` | {r['kind']} | "
                   f"{r['equivalent']} | {r['label']} | {cell(r['reason'])} |")
    return "\n".join(out)


def seventag_check() -> dict | None:
    """Parse the embedded seven-tag example solution and check its boxed final answer."""
    parsed = seventag.parse(seventag.EXAMPLE_SOLUTION)
    fa = parsed.final_answer or ""
    return {"n_steps": parsed.n, "format_problems": list(parsed.problems), "final_answer": fa.strip(),
            "format_compliance": seventag.format_compliance(seventag.EXAMPLE_SOLUTION)}


def procgen_stage(out: Path, n: int = 140) -> tuple[bool, str]:
    """Generate a small bank, export it, inject one error of each class and find it with the oracle."""
    m = export(out / "procgen", n=n, seed=0, log=lambda s: None)
    p = procgen.generate(n=n, seed=0)[0]
    lines = [f"{n} problems from {m['templates']} templates over {len(m['topics'])} topics in {m['seconds']} s "
             f"-> {out / 'procgen'} (sft {m['rows']['sft']}, dpo {m['rows']['dpo']}, verifier {m['rows']['verifier']})",
             "", f"problem: {p.question}", "", "| injected | at step | oracle finds | what |", "|---|---|---|---|"]
    ok = procgen.first_error(p, p.solution)[0] == 0
    for cls in ("MC", "CM", "CE"):
        text, fe, c, why = procgen.inject_problem(p, cls)
        found, reason = procgen.first_error(p, text)
        ok &= found == fe
        lines.append(f"| {procgen.CLASS_NAMES[c]} | {fe} | {found} ({reason}) | {why} |")
    return ok, "\n".join(lines)


REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = Path("..") / "shared" / "data"
DEFAULT_MODEL = "r3bench/smollm2-135m-instruct"
# the learning study's SFT start (adapter parts committed in the repository, not in the wheel): it writes
# the seven-tag format, which the demo's 2-step SFT cannot teach, so stepfix's step has something to learn
SFT_START = REPO / "results" / "learning" / "sft_start"


def find_data_dir(given: str | None) -> tuple[str | None, str]:
    """(data directory or None, how it was found): --data-dir, else $R3BENCH_DATA_DIR, else
    ../shared/data beside the repository (where the tests look), from the current folder or the
    package's checkout. None says, in words that are not an error, what is left out and how to get it."""
    if given:
        return str(given), f"{given} (--data-dir)"
    env = os.environ.get("R3BENCH_DATA_DIR")
    if env:
        return env, f"{env} (R3BENCH_DATA_DIR)"
    for cand in (SHARED_DATA, REPO.parent / "shared" / "data"):
        if cand.is_dir():
            return str(cand), f"{cand} (found at ../shared/data beside the repository, as the tests use it)"
    return None, ("no benchmark data directory (R3BENCH_DATA_DIR is unset and ../shared/data is absent): the five "
                  "benchmarks are left out; `r3bench data fetch --data-dir DIR` downloads them, then "
                  "`r3bench demo --data-dir DIR`")


# expected minutes per stage on a quiet 2-core CPU (README command 1); the lm-eval stage converts the
# model once first (~30 s). Under load the long stages are slower by about the same factor: from the
# lm-eval stage on, each long stage's expectation is scaled by the pace measured so far (_Stages.pace).
# training: 1.25x lm-eval's time, as measured on one shared machine (lm-eval 1669 s, training 2078 s)
STAGES = [("checker", "the unit-aware answer checker on labelled pairs", 0.2),
          ("procedural", "procedural problems, injected errors, the oracle", 0.2),
          ("lm-eval", "SmolLM2 on r3_demo and 2 problems of each benchmark", 2.0),
          ("training", "a 2-step LoRA SFT, then 1 stepfix step from the SFT start, scored on r3_demo_structured",
           3.0),
          ("leaderboard", "run records, leaderboard and plots", 0.2)]
# rough seconds per (problem x generated token) of lm-eval greedy generation, SmolLM2 on a shared
# 2-core CPU: 20 problems x 512 tokens took about 1 h 33 min (minutes on a GPU)
CPU_EVAL_S_PER_TOKEN = (60 + 33) * 60 / (20 * 512)


def _minutes(m: float) -> str:
    return "under a minute" if m < 1 else f"~{m:.0f} min"


def plan_text(skip_eval: bool, skip_train: bool, with_data: bool) -> str:
    """What the demo will run and the expected time of each stage, printed before it starts."""
    run = [st for st in STAGES if not ((skip_eval and st[0] in ("lm-eval", "training", "leaderboard"))
                                      or (skip_train and st[0] == "training"))]
    total = sum(m for *_, m in run)
    lines = [f"r3bench demo: {len(run)} stages, expected time {_minutes(total)} on a quiet 2-core CPU "
             "(longer when other jobs share the cores: each stage from lm-eval on states its time at the pace "
             "measured so far; a GPU is not used):"]
    for i, (name, what, m) in enumerate(run, 1):
        note = " + 0.5-1 min converting the model on first use" if name == "lm-eval" else ""
        note += "" if name != "lm-eval" or with_data else " (no data directory: r3_demo only)"
        lines.append(f"  {i}. {name}: {what}: {_minutes(m)}{note}")
    return "\n".join(lines)


def score_cost(limit: int, max_gen_toks: int, tasks: int = 1, s_per_token: float | None = None) -> str:
    """What scoring `limit` problems x `max_gen_toks` tokens costs here: at `s_per_token` (seconds per
    problem x generated token, as measured by this run's lm-eval stage) when given, else at the rough
    figure of a shared 2-core CPU."""
    rate = s_per_token if s_per_token else CPU_EVAL_S_PER_TOKEN
    where = "at this machine's measured pace" if s_per_token else "on a shared 2-core CPU (rough)"
    return f"~{max(1, round(rate * limit * tasks * max_gen_toks / 60))} min {where}; minutes on a GPU"


# the scoring limit the trainers print too (trainers.core.config.BaseConfig.eval_limit; a test keeps the two equal)
SCORE_LIMIT = 5


def score_command(model_args: str, run_dir: Path, max_gen_toks: int, limit: int = SCORE_LIMIT,
                  task: str = "r3_procgen") -> str:
    """The lm_eval command that scores a run's adapter and keeps what it ran (results and samples
    under the run folder), on `limit` problems so that it fits a CPU: the form the trainers print
    (trainers.core.evaluation.score_command)."""
    return (f"lm_eval --model hf --model_args {model_args} --tasks {task} --apply_chat_template --device cpu "
            f"--batch_size 8 --limit {limit} --gen_kwargs max_gen_toks={max_gen_toks} "
            f"--output_path {Path(run_dir) / 'lm_eval'} --log_samples")


EVAL_TASKS = ["r3_demo", "r3_demo_structured"]


def bench_tasks() -> list[str]:
    """The benchmark tasks the eval stage scores (a few problems each) when a data directory is found:
    the main task of every entry of the benchmark table with `demo` set."""
    return [b.task for b in BENCHMARKS.values() if b.demo]


def eval_stage(out: Path, data_dir: str | None, limit: int, max_gen_toks: int, pace: dict | None = None) -> tuple[str, bool]:
    """lm-eval on SmolLM2 through r3bench's tasks; returns (markdown table, ok). lm-eval's files go under
    `<out>/lm_eval/<model>/`, named by model as plain lm_eval names them. `pace`, when given, receives
    the measured seconds per (problem x generated token) (`s_per_token`)."""
    try:
        from lm_eval import simple_evaluate
        from lm_eval.loggers import EvaluationTracker
        from lm_eval.models.huggingface import HFLM
        from lm_eval.tasks import TaskManager
    except ImportError as e:
        return f"eval stage skipped: {e} (pip install 'r3bench[eval]')", False
    try:
        path = models.resolve("r3bench/smollm2-135m-instruct")
    except models.ModelError as e:
        return f"eval stage failed: {e}", False
    tasks, metadata = list(EVAL_TASKS), None
    # what plain `lm_eval --model_args pretrained=...` would be given: lm-eval names the output folder by
    # it (without it, a model instance gets a random folder name)
    model_args = f"pretrained={DEFAULT_MODEL}"
    try:  # the data directory goes to the tasks' dataset functions as task metadata
        metadata = {"data_dir": str(_dd(data_dir))}
        tasks += bench_tasks()
    except DataError:
        pass
    lm = HFLM(pretrained=str(path), device="cpu", batch_size=8)
    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False, metadata=metadata)
    t0 = time.perf_counter()
    res = {"results": {}, "n-samples": {}}
    for group, lim in ((EVAL_TASKS, None), (tasks[len(EVAL_TASKS):], limit)):
        if not group:
            continue
        tracker = EvaluationTracker(output_path=str(out / "lm_eval"))
        r = simple_evaluate(model=lm, model_args=model_args, tasks=group, task_manager=tm, limit=lim,
                            apply_chat_template=True,
                            gen_kwargs={"max_gen_toks": max_gen_toks}, log_samples=True,
                            evaluation_tracker=tracker, bootstrap_iters=0)
        tracker.save_results_aggregated(results=r, samples=r["samples"])
        for name, samples in r["samples"].items():
            tracker.save_results_samples(task_name=name, samples=samples)
        res["results"].update(r["results"])
        res["n-samples"].update(r["n-samples"])
    dt = time.perf_counter() - t0
    n_docs = sum(int(v.get("effective") or 0) for v in res["n-samples"].values())
    if pace is not None and n_docs:
        pace["s_per_token"] = dt / (n_docs * max_gen_toks)  # an upper bound: generation stops at the cap or earlier
    lines = ["| task | n | acc | other metrics |", "|---|---|---|---|"]
    for name in tasks:
        r = res["results"].get(name, {})
        n = res["n-samples"].get(name, {}).get("effective", "?")
        others = ", ".join(f"{k.split(',')[0]}={v:.2f}" for k, v in r.items()
                           if k.endswith(",none") and not k.startswith(("acc,", "alias")) and isinstance(v, float)
                           and v == v)
        lines.append(f"| {name} | {n} | {r.get('acc,none', float('nan')):.3f} | {others} |")
    lines.append("")
    lines.append(f"SmolLM2-135M-Instruct, chat template, greedy, max_gen_toks={max_gen_toks}, "
                 "all r3_demo problems" + (f", limit={limit} per benchmark task" if len(tasks) > len(EVAL_TASKS)
                                          else " (set R3BENCH_DATA_DIR to add the benchmarks)")
                 + f"; {dt:.0f} s on CPU. "
                 "Scores of a 135M model on a few problems are a smoke test, not a result.")
    return "\n".join(lines), True


TRAINER_LOG = "trainer.log"


class TrainerFailed(RuntimeError):
    """A trainer run of the demo exited non-zero; the message names its command and its log."""


def run_trainer(name: str, config: dict, out: Path) -> dict:
    """Run `python -m trainers.<name> --config <out>/config.yaml` as a user does, and return its run.json.

    The config (field: value) is written into the run folder `out` first; the trainer's stdout and
    stderr go to `<out>/trainer.log`. r3bench reaches its trainers only this way, by name, never by
    import (docs/ARCHITECTURE.md). Raises TrainerFailed naming the command and the log on a non-zero exit."""
    out.mkdir(parents=True, exist_ok=True)
    cfg_file, log = out / "config.yaml", out / TRAINER_LOG
    cfg_file.write_text(yaml.safe_dump({"output_dir": str(out), **config}, sort_keys=False), encoding="utf-8")
    cmd = [sys.executable, "-m", f"trainers.{name}", "--config", str(cfg_file)]
    shown = f"python -m trainers.{name} --config {cfg_file}"
    print(f"running {shown} (log: {log})", flush=True)
    with open(log, "w", encoding="utf-8") as fh:
        # everything to the log; the trainer's own [r3bench] lines (phases of a long step, warnings, the
        # end-of-run note) to the console as well, so an 11-minute stage is not two silent lines
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, encoding="utf-8", errors="replace")
        for line in proc.stdout:
            fh.write(line)
            if line.startswith("[r3bench]"):
                print(f"  {name}: {line.rstrip()[len('[r3bench] '):]}", flush=True)
        rc = proc.wait()
    if rc != 0:
        lines = [x for x in log.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
        last = f": {lines[-1].strip()[:300]}" if lines else ""
        raise TrainerFailed(f"`{shown}` exited {rc}{last} (full output: {log})")
    return json.loads((out / "run.json").read_text(encoding="utf-8"))


# the verdict classes of stepfix's y1 counts in metrics.jsonl (its y1_generated, y1_truncated and y1_tokens are
# sample and token counts, not classes)
Y1_CLASSES = ("correct", "MC", "CM", "CE", "FORMAT")


def y1_classes(step_log: dict) -> str:
    """`CE=1, FORMAT=1`: the first attempts' verdict classes of one stepfix training log."""
    return ", ".join(f"{k[3:]}={v}" for k, v in step_log.items() if k.startswith("y1_") and k[3:] in Y1_CLASSES)


def train_stage(out: Path, model: str = DEFAULT_MODEL, sft_steps: int = 2,
                stepfix_steps: int = 1, max_new_tokens: int = 224, eval_tasks: str = "r3_demo_structured",
                eval_max_gen_toks: int = 224, start: Path | None = SFT_START,
                s_per_token: float | None = None) -> tuple[str, bool]:
    """Short SFT then stepfix on the procedural bank, each run as `python -m trainers.X --config FILE`
    (run_trainer); returns (markdown, ok).

    stepfix starts from `start` (an adapter in parts, results/learning/sft_start: it writes the seven-tag
    format; its solutions take ~165-225 tokens, hence max_new_tokens) when `model` is its base model
    and the parts are there, else from the 2-step SFT adapter, whose samples fail the format: nothing
    to learn, which the table then says."""
    missing = [m for m in ("trainers", "trl", "peft") if importlib.util.find_spec(m) is None]
    if missing:
        return (f"training stage skipped: No module named {missing[0]!r} (pip install 'r3bench[train]')", False)
    runs = out / "runs"
    for name in ("sft", "stepfix", "sft_start"):
        shutil.rmtree(runs / name, ignore_errors=True)
    shared = dict(model=model, procgen_n=200, report_to="none", max_length=768, batch_size=2, save_steps=50)
    t0 = time.perf_counter()
    try:
        # 2 problems per step (grad_accum 1), as before SFT defaulted to accumulating 4 micro-batches
        r1 = run_trainer("sft", dict(max_steps=sft_steps, eval_tasks="", grad_accum=1, **shared), runs / "sft")
        use_start = start is not None and model == DEFAULT_MODEL and (Path(start) / "adapter_config.json").is_file()
        init = str(models.adapter_from_parts(start, runs / "sft_start")) if use_start else r1["adapter"]
        print(f"stepfix starts from {start if use_start else 'the 2-step SFT adapter'} ({init})", flush=True)
        print(f"stepfix samples at most {max_new_tokens} new tokens here, to keep the demo to minutes: the SFT "
              "start writes ~165-225-token solutions, but the pool's longest references are longer, so the "
              "trainer warns that the cap cuts references and counts the samples it cuts; a real run derives "
              "the cap from the pool (max_new_tokens: 0, the default)", flush=True)
        r2 = run_trainer("stepfix", dict(max_steps=stepfix_steps, init_adapter=init,
                                         max_new_tokens=max_new_tokens, eval_tasks=eval_tasks, eval_limit=0,
                                         eval_max_gen_toks=eval_max_gen_toks, data=str(runs / "sft" / "data"),
                                         **{k: v for k, v in shared.items() if k != "procgen_n"}), runs / "stepfix")
    except (TrainerFailed, OSError, ValueError, models.ModelError) as e:  # reported as a failed stage
        return f"training stage failed: {e}", False
    c1 = r1["config"]
    steps = [json.loads(x) for x in (runs / "stepfix" / "metrics.jsonl").read_text().splitlines()]
    logs = [d for d in steps if "skip_rate" in d]
    ev = next((d["eval"] for d in reversed(steps) if "eval" in d), {})
    start_row = (f"| SFT start (results/learning/sft_start: LoRA r={json.loads((Path(start) / 'adapter_config.json').read_text())['r']}, "
                 "trained on a GPU) | - | - | stepfix's starting point and reference model |") if use_start else \
        "| (stepfix starts from the 2-step SFT adapter: no SFT start for this model here) | - | - | - |"
    lines = ["| stage | steps | loss | notes |", "|---|---|---|---|",
             f"| SFT (LoRA r={c1['lora_r']}) | {r1['global_step']} | {r1['train_loss']:.3f} | "
             f"{c1['batch_size'] * c1['grad_accum']} problems per step: the SFT trainer runs; too short to teach "
             "the format |", start_row]
    for d in logs:
        lines.append(f"| stepfix step {d['step']} | 1 | {float(d['loss']):.3f} | skip rate {d['skip_rate']:.2f}, "
                     f"r1 mean {float(d.get('r1_mean', float('nan'))):.3f}, r2 mean {float(d.get('r2_mean', float('nan'))):.3f}, "
                     f"y1 classes {y1_classes(d)} |")
    for task, res in (ev.get("tasks") or {}).items():
        num = {k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in res.items()}
        lines.append(f"| lm-eval {task} (stepfix adapter) | - | - | acc {num.get('acc')}, "
                     f"format compliance {num.get('format_compliance')}, n {num.get('n')} |")
    if ev.get("error"):
        lines.append(f"| lm-eval | - | - | failed: {ev['error']} |")
    lines += ["", f"{time.perf_counter() - t0:.0f} s on this machine. Score the adapter on {SCORE_LIMIT} procedural "
              f"problems ({score_cost(SCORE_LIMIT, eval_max_gen_toks, s_per_token=s_per_token)}; results and "
              f"samples under {runs / 'stepfix' / 'lm_eval'}): "
              f"`{score_command(r2['lm_eval_model_args'], runs / 'stepfix', eval_max_gen_toks)}`"]
    if r2.get("nothing_to_learn_steps"):
        why = ("the samples of this step all earned the same reward" if use_start else
               "a 2-step SFT is too short to teach the format (the learning study's SFT start, "
               "results/learning/sft_start, writes it)")
        lines += ["", f"Warning: {r2['nothing_to_learn_steps']} of {r2['global_step']} stepfix steps had nothing to "
                  f"learn (every sample failed the seven-tag format or earned the same reward): {why}."]
    lines += ["", "A few steps of a 135M model: a smoke test of the pipeline, not a result "
              "(see studies/results/train_compare for the measured comparison)."]
    return "\n".join(lines), not ev.get("error")


def results_stage(out: Path, data_dir: str | None = None) -> str:
    """Run records, leaderboard (md + csv, the paper's numbers beside the cells when
    results/paper_reference.csv has them) and plots of what the demo ran; returns the printed text."""
    inputs = [p for p in (out / "lm_eval", out / "runs") if p.exists()]
    written, problems = records.write_all(inputs, data_dir=data_dir, force=True)
    notes: list = []
    # the data directory the demo found at the start also gives the guessing baselines
    md, csv_path, n = leaderboard.write([out], out, problems=problems, notes=notes, data_dir=data_dir)
    lines = [md.read_text(encoding="utf-8"), f"{n} cells -> {md}, {csv_path}; {len(written)} run records "
             "(record_*.json beside each lm-eval result, record.json in each run folder)"]
    lines += [f"problem: {x}" for x in problems]
    try:
        for png in (plots.accuracy_bars(leaderboard.collect([out]), out / "accuracy.png"),
                    plots.training_curves(sorted((out / "runs").glob("*")) if (out / "runs").exists() else [],
                                          out / "training_curves.png")):
            if png:
                lines.append(f"plot -> {png}")
    except ImportError as e:
        lines.append(f"plots skipped: {e} (pip install matplotlib)")
    return "\n".join(lines)


class _Stages:
    """`## [k/N] name (expected ...)` before each stage and `(name: done in X s)` after it.

    The expectation is the quiet-machine figure of STAGES until a stage of a minute or more has run;
    from then on it is that figure times this machine's pace (measured / expected over those stages), so
    a demo sharing its cores with other jobs states times it can keep."""

    def __init__(self, skip_eval: bool, skip_train: bool):
        self.run = [st for st in STAGES if not ((skip_eval and st[0] in ("lm-eval", "training", "leaderboard"))
                                               or (skip_train and st[0] == "training"))]
        self.t0 = None
        self.spent = self.planned = 0.0  # seconds, over the stages expected to take a minute or more

    def pace(self) -> float | None:
        """Measured / expected time of the long stages run so far (None before the first)."""
        return self.spent / self.planned if self.planned else None

    def expected(self, name: str) -> str:
        m = next(st[2] for st in self.run if st[0] == name)
        pace = self.pace()
        # short stages do not generate: not scaled; nor is any stage scaled down: a quick lm-eval stage
        # (a fast machine, or a model converted already) said nothing of training, which was announced at
        # "~1 min" after one and took 188 s
        if pace is None or pace < 1.25 or m < 1:
            return f"expected {_minutes(m)}"
        return f"expected {_minutes(m * pace)} at this machine's pace so far ({pace:.1f}x a quiet 2-core CPU)"

    def begin(self, name: str, title: str) -> None:
        k = next(i for i, st in enumerate(self.run, 1) if st[0] == name)
        print(f"\n## [{k}/{len(self.run)}] {title} ({self.expected(name)})", flush=True)
        self.name, self.t0 = name, time.perf_counter()

    def end(self, name: str) -> None:
        dt = time.perf_counter() - self.t0
        m = next(st[2] for st in self.run if st[0] == name)
        if m >= 1:
            self.spent, self.planned = self.spent + dt, self.planned + 60 * m
        print(f"({name}: done in {dt:.0f} s)", flush=True)


def files_to_open(out: Path, stages: set) -> list[tuple[Path, str]]:
    """The demo's files to open, in the order to read them, each with what it shows (the stages run:
    names of STAGES)."""
    rows = [(out / "leaderboard.md", "every score this demo made, one row per task, model and method, each "
                                     "linked to its run record (data checksums, versions, seeds)"),
            (out / "eval.md", "SmolLM2 on the embedded problems and a few of each benchmark, as lm-eval scored it"),
            (out / "lm_eval", "lm-eval's own results and samples (each sample: the response, the answer the checker "
                              "read and its reason)"),
            (out / "train.md", "the SFT and stepfix steps: loss, rewards, the error classes found, the stepfix "
                               "adapter's score and the command that scores it further"),
            (out / "runs", "the training runs: config.yaml, trainer.log, metrics.jsonl, run.json, the adapters"),
            (out / "check.md", "the answer checker's verdicts on labelled pairs, the procedural problems and the "
                               "errors injected into them"),
            (out / "accuracy.png", "the leaderboard as bars"),
            (out / "training_curves.png", "loss and reward by step")]
    need = {"eval.md": "lm-eval", "lm_eval": "lm-eval", "leaderboard.md": "leaderboard", "train.md": "training",
            "runs": "training", "accuracy.png": "leaderboard", "training_curves.png": "training"}
    return [(p, what) for p, what in rows if need.get(p.name, "checker") in stages and p.exists()]


def quiet_libraries() -> None:
    """Silence what does not concern a demo user: lm-eval's and transformers' info and warning lines
    (deprecations, generation-config notes), Python warnings of the libraries."""
    for name in ("lm_eval", "lm-eval", "transformers", "datasets", "accelerate", "peft", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module=r"(transformers|torch|lm_eval|peft|datasets)")
    try:
        from transformers.utils import logging as tlog

        tlog.set_verbosity_error()
    except ImportError:
        pass


def run(out_dir: str = "results/demo", data_dir: str | None = None, eval_limit: int = 2,
        max_gen_toks: int = 160, skip_eval: bool = False, skip_train: bool = False) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    data_dir, how = find_data_dir(data_dir)
    print(plan_text(skip_eval, skip_train, data_dir is not None))
    print(f"data: {how}", flush=True)
    quiet_libraries()
    stages = _Stages(skip_eval, skip_train)
    pace: dict = {}
    stages.begin("checker", "Unit-aware answer checker")
    rows = check_table(load_pairs())
    agree = sum(r["agrees"] for r in rows)
    with open(out / "check.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    table = _md_table(rows)
    summary = f"checker agreement with labels: {agree}/{len(rows)}"
    st = seventag_check()
    parts = ["# r3bench demo", "", "## Unit-aware answer checker", "", table, "", summary, ""]
    if st is not None:
        parts += ["## Seven-tag example solution", "", "```json", json.dumps(st, indent=2), "```", ""]
    (out / "check.md").write_text("\n".join(parts), encoding="utf-8")
    print(table)
    print()
    print(summary)
    if st is not None:
        print(f"seven-tag example: n={st['n_steps']} steps, compliance={st['format_compliance']:.2f}, "
              f"final answer {st['final_answer']!r}")

    if data_dir is not None:
        dt, errors = summary_table(data_dir)
        if dt is not None:
            print()
            print(dt)
            with open(out / "check.md", "a", encoding="utf-8") as fh:
                fh.write("\n## Benchmarks in the data directory\n\n" + dt + "\n")
        for e in errors:
            print(f"data: {e}")
    print(f"wrote {out / 'check.md'} and {out / 'check.jsonl'}")
    stages.end("checker")
    stages.begin("procedural", "Procedural problems with exact step labels")
    ok_pg, pg_md = procgen_stage(out)
    print(pg_md)
    with open(out / "check.md", "a", encoding="utf-8") as fh:
        fh.write("\n## Procedural problems\n\n" + pg_md + "\n")
    stages.end("procedural")
    ok_eval = True
    if not skip_eval:
        stages.begin("lm-eval", "lm-eval on SmolLM2-135M-Instruct (r3bench tasks)")
        table_eval, ok_eval = eval_stage(out, data_dir, eval_limit, max_gen_toks, pace=pace)
        (out / "eval.md").write_text("# r3bench demo: lm-eval\n\n" + table_eval + "\n", encoding="utf-8")
        print(table_eval)
        print(f"wrote {out / 'eval.md'} and lm-eval's results/samples under {out / 'lm_eval'}")
        stages.end("lm-eval")
    ok_train = True
    if not skip_train and not skip_eval:
        stages.begin("training", "Training: a 2-step SFT, then a stepfix step from the SFT start (SmolLM2, procedural bank)")
        table_train, ok_train = train_stage(out, s_per_token=pace.get("s_per_token"))
        (out / "train.md").write_text("# r3bench demo: training\n\n" + table_train + "\n", encoding="utf-8")
        print(table_train)
        print(f"wrote {out / 'train.md'}; runs under {out / 'runs'}")
        stages.end("training")
    if not skip_eval:
        stages.begin("leaderboard", "Leaderboard of this demo's cells")
        print(results_stage(out, data_dir))
        stages.end("leaderboard")
    print("\nOpen, in this order:")
    for path, what in files_to_open(out, {st[0] for st in stages.run}):
        print(f"  {path}{'/' if path.is_dir() else ''}: {what}")
    return 0 if agree == len(rows) and ok_eval and ok_pg and ok_train else 1
