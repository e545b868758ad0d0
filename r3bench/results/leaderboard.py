"""`r3bench leaderboard [PATHS...]`: accuracy tables from lm-eval result files, trainer runs and run records.

Reads, under each path (a file or a folder, searched recursively):

* lm-eval result files (`results_*.json`, as `lm_eval --output_path` and r3bench's demo write
  them): one cell per task. The model is `pretrained` (also the inner model of r3bench's strategy
  wrappers `r3-rag`, `r3-stepco`, `r3-bestofn`, which give the method RAG, StepCo, Best-of-N); the
  method of a `peft` adapter is the trainer recorded in its run.json (sft, dpo, stepfix, grpo,
  psv); a plain model is CoT;
* trainer run folders (`run.json` + `eval/step-N.json`, written by `python -m trainers.<name>`):
  the evaluation at the run's last step, method = the trainer; `eval/base.json` (a base model
  scored by `trainers.common.evaluate_model(..., tag="base")`) is CoT;
* run records (`record_*.json` beside a results file, `record.json` in a run folder; see
  r3bench/results/records.py): each cell links to its record; a record whose result is not beside it
  (committed records alone) gives its cells itself, so the table can be rebuilt from records.

Writes OUT/leaderboard.md and OUT/leaderboard.csv: a row per (task, model), a column per method,
cells `acc ± stderr (n)` linked to their record (relative to OUT when OUT holds the PATH, else to
the PATH; sources are relative to the PATH they were found under), the JEEBench official score
(`jee_score`) as its own columns, and the paper's number for the same task, model and method beside
the cell when a reference table is given (results/paper_reference.csv). Rows, columns and numbers are
sorted and formatted deterministically, so the same inputs give the same bytes. When two sources give
a cell, the one read last wins and the conflict is listed under the table; unreadable inputs are
listed too, never fatal.
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

# method key -> column label, in column order
# (a StepCo / Best-of-N run whose verifier read the reference solution - symbolic, judge - is its own
# method, "... (oracle verifier)": it never shares the real method's column)
METHODS = {"cot": "CoT", "rag": "RAG", "sft": "SFT", "dpo": "DPO", "stepfix": "stepfix", "stepco": "StepCo",
           "stepco_oracle": "StepCo (oracle verifier)", "bestofn": "Best-of-N",
           "bestofn_oracle": "Best-of-N (oracle verifier)", "grpo": "GRPO", "psv": "PSV"}
METHOD_ORDER = list(METHODS)
# names the paper (and people) use for the same methods
METHOD_ALIASES = {**{v.lower(): k for k, v in METHODS.items()}, "ours": "stepfix", "base": "cot",
                  "best-of-n": "bestofn", "best_of_n": "bestofn"}
# the repository's copy (the package's parent folder), whatever the working directory
REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "results" / "paper_reference.csv"
_DEFAULT_REFERENCES = (REFERENCE, Path("results") / "paper_reference.csv")
REFERENCE_FIELDS = ("task", "model", "method", "acc", "n", "source")


@dataclass(frozen=True)
class Cell:
    task: str
    model: str
    method: str
    acc: float | None
    stderr: float | None
    n: int | None
    source: str
    jee_score: float | None = None
    jee_marks: float | None = None
    record: str = ""


def method_key(m: str) -> str:
    return METHOD_ALIASES.get(str(m).strip().lower(), str(m).strip().lower())


def method_label(m: str) -> str:
    return "+".join(METHODS.get(p, p) for p in m.split("+"))


def _method_sort(m: str):
    first = m.split("+")[0]
    return (METHOD_ORDER.index(first) if first in METHOD_ORDER else 99, m.count("+"), m)


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def model_name(path: str) -> str:
    from r3bench.core.models import SHORT_NAMES

    s = str(path).rstrip("/")
    return SHORT_NAMES.get(s.lower()) or Path(s).name or s


_model_name = model_name


# config fields only one trainer has: how a run record without a "trainer" key is recognised
_TRAINER_FIELDS = (("stepfix", "kl_estimator"), ("grpo", "group_size"), ("psv", "mc_rollouts"), ("dpo", "tau"))


def trainer_of(rec: dict) -> str:
    # `python -m trainers.sft` records its Config's module, "__main__": recognise the trainer by its fields
    if rec.get("trainer") and rec["trainer"] != "__main__":
        return rec["trainer"]
    cfg = rec.get("config") or {}
    return next((name for name, key in _TRAINER_FIELDS if key in cfg), "sft" if cfg else "adapter")


def adapter_method(adapter: str) -> str:
    for cand in (Path(adapter) / "run.json", Path(adapter).parent / "run.json"):
        if cand.is_file():
            try:
                return trainer_of(json.loads(cand.read_text()))
            except (OSError, json.JSONDecodeError):
                break
    return "adapter"


_adapter_method = adapter_method


def model_args(cfg: dict) -> dict:
    ma = cfg.get("model_args") or {}
    if isinstance(ma, str):
        ma = dict(kv.split("=", 1) for kv in ma.split(",") if "=" in kv)
    return {str(k).strip(): str(v).strip() for k, v in ma.items()} if isinstance(ma, dict) else {}


_model_args = model_args


def pretrained_of(cfg: dict) -> str:
    """The model an lm-eval run scored: `pretrained` of model_args (also inside a strategy wrapper), else
    config.model when it is a path (lm-eval given a model instance records the instance's path there)."""
    given = str(cfg.get("model") or "")
    return model_args(cfg).get("pretrained") or (given if "/" in given else "?")


def method_of(cfg: dict, strategy: dict | None = None) -> str:
    """The method of an lm-eval run: the adapter's trainer and/or the strategy wrapper; a StepCo or
    Best-of-N run whose verifier read the reference (`r3bench_strategy.oracle_verifier`, in the results
    file or its config) is `stepco_oracle` / `bestofn_oracle`."""
    from r3bench.results.records import WRAPPERS

    ma = model_args(cfg)
    parts = [adapter_method(ma["peft"])] if ma.get("peft") else []
    wrapper = WRAPPERS.get(str(cfg.get("model") or ""))
    if wrapper:
        info = strategy if isinstance(strategy, dict) else cfg.get("r3bench_strategy")
        if wrapper in ("stepco", "bestofn") and isinstance(info, dict) and info.get("oracle_verifier") is True:
            wrapper += "_oracle"
        parts.append(wrapper)
    return "+".join(parts) or "cot"


def strategy_of(d: dict) -> dict | None:
    """A strategy wrapper's settings in an lm-eval results file (strategies.py get_model_info)."""
    cfg = d.get("config") if isinstance(d.get("config"), dict) else {}
    info = cfg.get("r3bench_strategy") or d.get("r3bench_strategy")
    return info if isinstance(info, dict) else None


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name


def from_lmeval(path: Path, root: Path) -> list[Cell]:
    d = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(d, dict) or not isinstance(d.get("results"), dict):
        raise ValueError("no 'results' mapping: not an lm-eval results file")
    cfg = d.get("config") or {}
    model, method = model_name(pretrained_of(cfg)), method_of(cfg, strategy_of(d))
    out = []
    for task, res in sorted(d["results"].items()):
        if not isinstance(res, dict) or "acc,none" not in res:
            continue
        n = ((d.get("n-samples") or {}).get(task) or {}).get("effective")
        out.append(Cell(task, model, method, _num(res.get("acc,none")), _num(res.get("acc_stderr,none")), n,
                        _rel(path, root), _num(res.get("jee_score,none")), _num(res.get("jee_marks,none"))))
    return out


def _summary_cells(summary: dict, model: str, method: str, src: str) -> list[Cell]:
    return [Cell(task, model, method, _num(r.get("acc")), _num(r.get("acc_stderr")), r.get("n"), src,
                 _num(r.get("jee_score")), _num(r.get("jee_marks")))
            for task, r in sorted((summary.get("tasks") or {}).items()) if isinstance(r, dict) and "acc" in r]


def from_run(run: Path, root: Path) -> list[Cell]:
    rec = json.loads((run / "run.json").read_text(encoding="utf-8"))
    # eval/step-<N>.json only (a step-final.json or step-3.bak.json is not a step: skipped, not fatal)
    evals = sorted((p for p in (run / "eval").glob("step-*.json") if p.stem[5:].isdigit()),
                   key=lambda p: int(p.stem[5:]))
    if not evals:
        return []
    ev = json.loads(evals[-1].read_text(encoding="utf-8")).get("summary", {})
    model = model_name((rec.get("config") or {}).get("model", "?"))
    return _summary_cells(ev, model, trainer_of(rec), _rel(evals[-1], root))


def from_base_eval(path: Path, root: Path) -> list[Cell]:
    """eval/base.json of trainers.common.evaluate_model(tag="base"): the base model, method CoT."""
    d = json.loads(path.read_text(encoding="utf-8"))
    run = path.parent.parent / "run.json"
    model = (json.loads(run.read_text(encoding="utf-8")).get("config") or {}).get("model") if run.is_file() else None
    model = model or pretrained_of(d.get("config") or {})
    return _summary_cells(d.get("summary") or {}, model_name(model), "cot", _rel(path, root))


def from_record(path: Path, root: Path) -> list[Cell]:
    from r3bench.results.records import read

    rec = read(path)
    src = _rel(path, root)
    return [Cell(c["task"], c["model"], c["method"], _num(c.get("acc")), _num(c.get("acc_stderr")), c.get("n"), src,
                 _num(c.get("jee_score")), _num(c.get("jee_marks")), src) for c in rec["cells"]]


def _is_record(f: Path) -> bool:
    return f.name == "record.json" or (f.name.startswith("record_") and f.name.endswith(".json"))


def _shown_path(p: Path) -> str:
    """A path as a problem line shows it: relative as given, an absolute one by its last three parts."""
    return "/".join(p.parts[-3:]) if p.is_absolute() else p.as_posix()


def collect(paths, problems: list | None = None) -> list[Cell]:
    """Cells from every result, run and record under `paths`; unreadable inputs go to `problems`."""
    from r3bench.results.records import record_path

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
                problems.append(f"{_rel(f, root)}: {type(e).__name__}: {str(e)[:160]}")
                continue
            if rec is not None and rec.is_file():
                got = [replace(c, record=_rel(rec, root)) for c in got]
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
    return "jeebench" in task


def paper_table(reference: dict, tasks: set, models: set) -> list[str]:
    """Markdown lines: the paper's own numbers for the tasks in the table, for the models r3bench did not
    run (the paper's 1-4B models beside r3bench's cells), one row per (task, model), one column per
    method. Empty when the reference has none of these tasks."""
    keys = sorted(k for k in reference if k[0] in tasks and k[1] not in models)
    if not keys:
        return []
    methods = sorted({k[2] for k in keys}, key=_method_sort)
    head = ["task", "paper model"] + [method_label(m) for m in methods]
    out = ["", "The paper's own table for the same tasks (its models, not r3bench's; n = the full set):", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task, model in sorted({(k[0], k[1]) for k in keys}):
        line = [task, model] + [f"{reference[(task, model, m)]['acc']:.3f}" if (task, model, m) in reference else ""
                                for m in methods]
        out.append("| " + " | ".join(line) + " |")
    out += ["", "Source: " + "; ".join(sorted({reference[k]["source"] for k in keys}))]
    return out


def tables(cells, reference: dict | None = None, problems=()) -> tuple[str, str]:
    reference = reference or {}
    grid, conflicts = {}, []
    for c in cells:
        key = (c.task, c.model, c.method)
        if key in grid and grid[key] != c:
            conflicts.append(f"{c.task} / {c.model} / {method_label(c.method)}: {grid[key].source} replaced by {c.source}")
        grid[key] = c
    methods = sorted({k[2] for k in grid}, key=_method_sort)
    jee_methods = [m for m in methods if any(_is_jee(k[0]) and k[2] == m and grid[k].jee_score is not None for k in grid)]
    rows = sorted({(k[0], k[1]) for k in grid})
    used_refs = set()
    head = ["task", "model"] + [method_label(m) for m in methods] + [f"{method_label(m)} JEE score" for m in jee_methods]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["task", "model", "method", "acc", "acc_stderr", "n", "jee_score", "jee_marks", "paper_acc",
                "paper_source", "source", "record"])
    for task, model in rows:
        line = [task, model]
        for m in methods:
            c = grid.get((task, model, m))
            if c is None:
                line.append("")
                continue
            txt = _fmt(c)
            if c.record:
                txt = f"[{txt}]({c.record})"
            ref = reference.get((task, model, m))
            if ref:
                used_refs.add(ref["source"])
                txt += f" · paper {ref['acc']:.3f}"
            line.append(txt)
        for m in jee_methods:
            c = grid.get((task, model, m))
            line.append("" if c is None or c.jee_score is None else
                        f"{c.jee_score:.3f}" + (f" (marks {c.jee_marks:g})" if c.jee_marks is not None else ""))
        md.append("| " + " | ".join(line) + " |")
        for m in methods:
            c = grid.get((task, model, m))
            if c:
                ref = reference.get((task, model, m)) or {}
                w.writerow([task, model, m, _f6(c.acc), _f6(c.stderr), "" if c.n is None else c.n, _f6(c.jee_score),
                            _f6(c.jee_marks), _f6(ref.get("acc")), ref.get("source", ""), c.source, c.record])
    if used_refs:
        md += ["", "`paper x` = the paper's accuracy for the same task, model and method; sources: "
               + "; ".join(sorted(used_refs))]
    md += paper_table(reference, {t for t, _ in rows}, {m for _, m in rows})
    if conflicts:
        md += ["", "Cells given by more than one source (the later one kept):", ""] + [f"- {x}" for x in conflicts]
    if problems:
        md += ["", "Inputs that could not be read:", ""] + [f"- {x}" for x in problems]
    return "\n".join(md) + "\n", buf.getvalue()


def write(paths, out: str | Path = "results", reference: str | Path | None = REFERENCE,
          problems: list | None = None) -> tuple[Path, Path, int]:
    """Collect, tabulate and write OUT/leaderboard.md + .csv; returns (md, csv, number of cells).

    Unreadable inputs are listed in the table and appended to `problems`."""
    problems = [] if problems is None else problems
    out = Path(out)
    cells = []
    for p in map(Path, paths):
        got = collect([p], problems)
        root = (p if p.is_dir() else p.parent).resolve()
        if root.is_relative_to(out.resolve()):  # links relative to the table when it sits above its inputs
            pre = root.relative_to(out.resolve())
            got = [replace(c, record=(pre / c.record).as_posix()) if c.record else c for c in got]
        cells += got
    ref = load_reference(reference, problems)
    md, csv_text = tables(cells, ref, problems)
    out.mkdir(parents=True, exist_ok=True)
    (out / "leaderboard.md").write_text("# r3bench leaderboard\n\n" + md, encoding="utf-8")
    (out / "leaderboard.csv").write_text(csv_text, encoding="utf-8")
    return out / "leaderboard.md", out / "leaderboard.csv", len(cells)
