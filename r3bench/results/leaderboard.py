"""`r3bench leaderboard [PATHS...]`: accuracy tables from lm-eval result files, trainer runs and run records.

Reads, under each path (a file or a folder, searched recursively):

* lm-eval result files (`results_*.json`, as `lm_eval --output_path` and r3bench's demo write
  them): one cell per task. The model is `pretrained` (also the inner model of r3bench's strategy
  wrappers `r3-rag`, `r3-stepco`, `r3-bestofn`, which give the method RAG, StepCo, Best-of-N); the
  method of a `peft` adapter is the trainer recorded in its run.json (sft, dpo, stepfix, grpo,
  psv); a plain model is CoT;
* trainer run folders (`run.json` + `eval/step-N.json`, written by `python -m trainers.<name>`):
  the evaluation at the run's last step, method = the trainer; `eval/base.json` (a base model
  scored by `trainers.core.evaluation.evaluate_model(..., tag="base")`) is CoT;
* run records (`record_*.json` beside a results file, `record.json` in a run folder; see
  r3bench/results/records.py): each cell links to its record; a record whose result is not beside it
  (committed records alone) gives its cells itself, so the table can be rebuilt from records.

Writes OUT/leaderboard.md and OUT/leaderboard.csv: a row per (task, model), a column per method (the
base model on a seven-tag task in its own column, "base (seven-tag)", not under CoT),
cells `acc ± stderr (n)` linked to their record (relative to OUT, wherever OUT is; sources are
relative to the PATH they were found under), the JEEBench official score
(`jee_score`) as its own columns, and the paper's number for the same task, model and method beside
the cell when a reference table is given (results/paper_reference.csv). Rows, columns and numbers are
sorted and formatted deterministically, so the same inputs give the same bytes. When two sources give
a cell, the one read last wins and the conflict is listed under the table; unreadable inputs are
listed too, never fatal.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import replace
from pathlib import Path

from r3bench.core.methods import key as method_key, label as method_label, sort_key as method_sort
from r3bench.results.cells import (Cell, adapter_method, from_base_eval, from_lmeval, from_run, method_of,  # noqa: F401
                                   model_args, model_name, number, pretrained_of, relative, strategy_of, trainer_of)
from r3bench.results.records import read, record_path

# the repository's copy (the package's parent folder), whatever the working directory
REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "paper_reference.csv"
_DEFAULT_REFERENCES = (REFERENCE, Path("results") / "paper_reference.csv")
REFERENCE_FIELDS = ("task", "model", "method", "acc", "n", "source")
# the columns are the methods of r3bench/core/methods.py, in its order (a StepCo / Best-of-N run whose
# verifier read the reference solution is its own method, "... (oracle verifier)")


def is_seventag_task(task: str) -> bool:
    """Tasks whose prompt is the seven-tag format (tasks/r3: *_structured, r3_procgen and its tiers)."""
    return task.endswith("_structured") or task == "r3_procgen" or (
        task.startswith("r3_procgen_t") and task[len("r3_procgen_t"):].isdigit())


# the base model (method cot) on a seven-tag task is not chain of thought: its own column, by its prompt
SEVENTAG_BASE = "cot_seventag"


def column_of(task: str, method: str) -> str:
    """The table column of a cell: its method, except the base model on a seven-tag task."""
    return SEVENTAG_BASE if method == "cot" and is_seventag_task(task) else method


def column_label(col: str) -> str:
    return "base (seven-tag)" if col == SEVENTAG_BASE else method_label(col)


def column_sort(col: str):
    return method_sort("cot") + (1,) if col == SEVENTAG_BASE else method_sort(col) + (0,)


def from_record(path: Path, root: Path) -> list[Cell]:
    rec = read(path)
    src = relative(path, root)
    return [Cell(c["task"], c["model"], c["method"], number(c.get("acc")), number(c.get("acc_stderr")), c.get("n"), src,
                 number(c.get("jee_score")), number(c.get("jee_marks")), src, number(c.get("acc_flexible")))
            for c in rec["cells"]]


def _is_record(f: Path) -> bool:
    return f.name == "record.json" or (f.name.startswith("record_") and f.name.endswith(".json"))


def _shown_path(p: Path) -> str:
    """A path as a problem line shows it: relative as given, an absolute one by its last three parts."""
    return "/".join(p.parts[-3:]) if p.is_absolute() else p.as_posix()


def collect(paths, problems: list | None = None, notes: list | None = None) -> list[Cell]:
    """Cells from every result, run and record under `paths`; unreadable inputs go to `problems`,
    trainer runs without an evaluation (no cell) to `notes`."""
    problems = [] if problems is None else problems
    cells = []
    for p in map(Path, paths):
        if not p.exists():
            problems.append(f"{_shown_path(p)}: not found")
            continue
        root = p if p.is_dir() else p.parent
        files = [p] if p.is_file() else sorted(p.rglob("*.json"))
        for f in files:
            try:
                if f.name.startswith("results_"):
                    got = from_lmeval(f, root)
                    rec = record_path(f)
                elif f.name == "run.json":
                    got, rec = from_run(f.parent, root), record_path(f.parent)
                    if not got and notes is not None:
                        notes.append(f"{relative(f.parent, root)}: no evaluation in this run (eval_tasks was "
                                     "empty), so no cell: score its adapter with the lm_eval command the run "
                                     "printed and pass that --output_path here")
                elif f.name == "base.json" and f.parent.name == "eval":
                    got, rec = from_base_eval(f, root), None
                elif _is_record(f):
                    own = f.parent / "run.json" if f.name == "record.json" else \
                        f.with_name("results_" + f.name[len("record_"):])
                    if own.is_file():
                        continue  # its result is read (and linked to it) instead
                    got, rec = from_record(f, root), None
                else:
                    continue
            except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as e:
                problems.append(f"{relative(f, root)}: {type(e).__name__}: {str(e)[:160]}")
                continue
            if rec is not None and rec.is_file():
                got = [replace(c, record=relative(rec, root)) for c in got]
            cells += got
    return cells


# ------------------------------------------------------------------------------ paper reference

def load_reference(path: str | Path | None, problems: list | None = None) -> dict:
    """(task, model, method) -> {"acc", "n", "source"} from a CSV with columns task, model, method, acc,
    n, source (acc as a fraction 0-1; method CoT/RAG/SFT/DPO/Ours... mapped to r3bench's keys). Bad
    rows go to `problems`; a missing file is an empty reference."""
    problems = [] if problems is None else problems
    if path is None:
        return {}
    given = Path(path)
    if not given.is_file() and not given.is_absolute() and (REPO / given).is_file():
        path = REPO / given  # a relative path from another working directory: the repository's file
    if not Path(path).is_file():
        if given not in _DEFAULT_REFERENCES:
            problems.append(f"{_shown_path(given)}: reference table not found (no paper column)")
        return {}
    ref = {}
    with open(path, encoding="utf-8", newline="") as fh:
        r = csv.DictReader(fh)
        missing = [k for k in REFERENCE_FIELDS if k not in (r.fieldnames or [])]
        if missing:
            problems.append(f"{Path(path).name}: missing column(s) {missing}")
            return {}
        for i, row in enumerate(r, start=2):
            def get(k):
                return (row.get(k) or "").strip()
            try:  # a short row: DictReader fills None
                acc = float(get("acc"))
                if not 0 <= acc <= 1:
                    raise ValueError(f"acc {acc} is not a fraction in [0, 1]")
                if not (get("task") and get("model") and get("method")):
                    raise ValueError("task, model or method is empty (a short row?)")
            except (ValueError, TypeError, AttributeError) as e:
                problems.append(f"{Path(path).name}:{i}: {e}")
                continue
            ref[(get("task"), get("model"), method_key(get("method")))] = {
                "acc": acc, "n": int(get("n")) if get("n").isdigit() else None, "source": get("source")}
    return ref


# ----------------------------------------------------------------------------------------- tables

def _fmt(c: Cell) -> str:
    if c.acc is None:
        return "-"
    se = f" ± {c.stderr:.3f}" if c.stderr is not None else ""
    return f"{c.acc:.3f}{se} ({c.n if c.n is not None else '?'})"


def _f6(v) -> str:
    return "" if v is None else f"{v:.6f}"


def _is_jee(task: str) -> bool:
    """Whether the task reports JEEBench's exam scores (the table's `exam_scores`)."""
    from r3bench.eval.data import BENCHMARKS

    b = benchmark_of(task)
    return b is not None and BENCHMARKS[b].exam_scores


def paper_table(reference: dict, tasks: set, models: set) -> list[str]:
    """Markdown lines: the paper's own numbers for the tasks in the table, for the models r3bench did not
    run (the paper's 1-4B models beside r3bench's cells), one row per (task, model), one column per
    method. Empty when the reference has none of these tasks."""
    keys = sorted(k for k in reference if k[0] in tasks and k[1] not in models)
    if not keys:
        return []
    methods = sorted({k[2] for k in keys}, key=method_sort)
    head = ["task", "paper model"] + [method_label(m) for m in methods]
    out = ["", "The paper's own table for the same tasks (its models, not r3bench's; n = the full set):", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task, model in sorted({(k[0], k[1]) for k in keys}):
        line = [task, model] + [f"{reference[(task, model, m)]['acc']:.3f}" if (task, model, m) in reference else ""
                                for m in methods]
        out.append("| " + " | ".join(line) + " |")
    out += ["", "Source: " + "; ".join(sorted({reference[k]["source"] for k in keys}))]
    return out


def benchmark_of(task: str) -> str | None:
    """The benchmark an r3 task scores (r3_jeebench_structured -> jeebench), None for others
    (r3bench.eval.data.benchmark_of: from the benchmark table)."""
    from r3bench.eval.data import benchmark_of as of_table

    return of_table(task)


def guess_baselines(tasks, data_dir=None, problems: list | None = None, notes: list | None = None) -> dict:
    """{task: (majority, uniform)} over each task's benchmark's multiple-choice documents
    (r3bench.eval.lmeval.baselines, read from the data directory). With no data directory at all (the
    demo, or a table made where the benchmarks are not), one line in `notes` says the columns stay empty;
    a benchmark that cannot be read from a data directory gives no entry and a line in `problems`."""
    from r3bench.eval.data import ENV_VAR
    from r3bench.eval.lmeval import benchmark_baselines

    if not any(benchmark_of(t) for t in tasks):
        return {}
    if data_dir is None and not os.environ.get(ENV_VAR):
        if notes is not None:
            notes.append("Guessing baselines (majority / uniform): no benchmark data directory (pass --data-dir or "
                         "set R3BENCH_DATA_DIR), so those columns are empty.")
        return {}
    out, cache = {}, {}
    for t in sorted(set(tasks)):
        b = benchmark_of(t)
        if b is None:
            continue
        if b not in cache:
            try:
                cache[b] = benchmark_baselines(b, data_dir).get("all_mcq")
            except Exception as e:  # noqa: BLE001 - no data directory here: the columns stay empty, said so
                cache[b] = None
                if problems is not None:
                    problems.append(f"guessing baselines of {b}: {type(e).__name__}: {str(e)[:200]}")
        if cache[b]:
            out[t] = (cache[b]["majority"], cache[b]["uniform"])
    return out


def mcq_table(grid: dict, baselines: dict) -> list[str]:
    """The multiple-choice tasks' strict and flexible accuracy (lm-eval's strict-match and
    flexible-extract) beside what guessing scores: one row per task, model and column."""
    keys = sorted(k for k, c in grid.items() if c.acc_flexible is not None)
    if not keys:
        return []
    out = ["", "## Multiple-choice tasks: strict and flexible extraction, beside guessing", "",
           "strict = the answer as the prompt asks it (`acc`); flexible = also the options the final answer "
           "names where strict reads no answer (`acc_flexible`); majority = always answering the most frequent "
           "gold answer; uniform = a uniform guess (both over the benchmark's multiple-choice documents).", "",
           "| task | model | column | strict | flexible | majority | uniform |", "|---|---|---|---|---|---|---|"]
    for task, model, method in keys:
        c = grid[(task, model, method)]
        maj, uni = baselines.get(task, (None, None))
        out.append(f"| {task} | {model} | {column_label(column_of(task, method))} | {_fmt(c)} | "
                   f"{c.acc_flexible:.3f} | {'' if maj is None else f'{maj:.3f}'} | {'' if uni is None else f'{uni:.3f}'} |")
    return out


def tables(cells, reference: dict | None = None, problems=(), notes=(), baselines: dict | None = None,
           baseline_notes=()) -> tuple[str, str]:
    reference = reference or {}
    grid, conflicts = {}, []
    for c in cells:
        key = (c.task, c.model, c.method)
        if key in grid and grid[key] != c:
            conflicts.append(f"{c.task} / {c.model} / {column_label(column_of(c.task, c.method))}: "
                             f"{grid[key].source} replaced by {c.source}")
        grid[key] = c
    # columns: methods, the base model on seven-tag tasks apart from CoT (column_of)
    methods = sorted({column_of(k[0], k[2]) for k in grid}, key=column_sort)
    jee_methods = [m for m in methods if any(_is_jee(k[0]) and column_of(k[0], k[2]) == m
                                             and grid[k].jee_score is not None for k in grid)]
    rows = sorted({(k[0], k[1]) for k in grid})
    used_refs = set()
    head = (["task", "model"] + [column_label(m) for m in methods]
            + [f"{column_label(m)} JEE score" for m in jee_methods])
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["task", "model", "method", "column", "acc", "acc_stderr", "n", "jee_score", "jee_marks", "paper_acc",
                "paper_source", "source", "record"])

    def cell(task, model, col):
        m = "cot" if col == SEVENTAG_BASE else col
        return grid.get((task, model, m)) if column_of(task, m) == col else None

    for task, model in rows:
        line = [task, model]
        for col in methods:
            c = cell(task, model, col)
            if c is None:
                line.append("")
                continue
            m = c.method
            txt = _fmt(c)
            if c.record:
                txt = f"[{txt}]({c.record})"
            ref = reference.get((task, model, m))
            if ref:
                used_refs.add(ref["source"])
                txt += f" · paper {ref['acc']:.3f}"
            line.append(txt)
        for col in jee_methods:
            c = cell(task, model, col)
            line.append("" if c is None or c.jee_score is None else
                        f"{c.jee_score:.3f}" + (f" (marks {c.jee_marks:g})" if c.jee_marks is not None else ""))
        md.append("| " + " | ".join(line) + " |")
        for col in methods:
            c = cell(task, model, col)
            if c:
                m = c.method
                ref = reference.get((task, model, m)) or {}
                w.writerow([task, model, m, column_label(col), _f6(c.acc), _f6(c.stderr), "" if c.n is None else c.n, _f6(c.jee_score),
                            _f6(c.jee_marks), _f6(ref.get("acc")), ref.get("source", ""), c.source, c.record])
    if SEVENTAG_BASE in methods:
        md += ["", "base (seven-tag) = the base model (no training, no strategy) prompted with the seven-tag format "
               "of the *_structured and procgen tasks" + ("; CoT = the same model with the chain-of-thought prompt."
                                                           if "cot" in methods else ".")]
    if used_refs:
        md += ["", "`paper x` = the paper's accuracy for the same task, model and method; sources: "
               + "; ".join(sorted(used_refs))]
    mcq = mcq_table(grid, baselines or {})
    md += mcq + (["", *baseline_notes] if mcq and baseline_notes else [])
    md += paper_table(reference, {t for t, _ in rows}, {m for _, m in rows})
    if conflicts:
        md += ["", "Cells given by more than one source (the later one kept):", ""] + [f"- {x}" for x in conflicts]
    if notes:
        md += ["", "Trainer runs without a cell:", ""] + [f"- {x}" for x in notes]
    if problems:
        md += ["", "Inputs that could not be read:", ""] + [f"- {x}" for x in problems]
    return "\n".join(md) + "\n", buf.getvalue()


def write(paths, out: str | Path = "results", reference: str | Path | None = REFERENCE,
          problems: list | None = None, write_empty: bool = True, notes: list | None = None,
          data_dir: str | Path | None = None) -> tuple[Path, Path, int]:
    """Collect, tabulate and write OUT/leaderboard.md + .csv; returns (md, csv, number of cells in the
    table: one per task, model and method, however many sources gave it).

    Unreadable inputs are listed in the table and appended to `problems`. With `write_empty=False`
    nothing is written when no cell was found (an existing table is left as it is)."""
    problems = [] if problems is None else problems
    notes = [] if notes is None else notes
    out = Path(out)
    cells = []
    for p in map(Path, paths):
        got = collect([p], problems, notes)
        root = (p if p.is_dir() else p.parent).resolve()
        if root != out.resolve():  # links relative to the table, wherever it is written
            pre = Path(os.path.relpath(root, out.resolve()))
            got = [replace(c, record=(pre / c.record).as_posix()) if c.record else c for c in got]
        cells += got
    n = len({(c.task, c.model, c.method) for c in cells})
    if n == 0 and not write_empty:
        return out / "leaderboard.md", out / "leaderboard.csv", 0
    ref = load_reference(reference, problems)
    mcq_tasks = {c.task for c in cells if c.acc_flexible is not None}
    base_notes: list = []
    base = guess_baselines(mcq_tasks, data_dir, problems, base_notes) if mcq_tasks else {}
    md, csv_text = tables(cells, ref, problems, notes, baselines=base, baseline_notes=base_notes)
    notes += base_notes  # said once by the caller too (the CLI prints problems and notes)
    out.mkdir(parents=True, exist_ok=True)
    (out / "leaderboard.md").write_text("# r3bench leaderboard\n\n" + md, encoding="utf-8")
    (out / "leaderboard.csv").write_text(csv_text, encoding="utf-8")
    return out / "leaderboard.md", out / "leaderboard.csv", n
