"""`r3bench leaderboard [PATHS...]`: accuracy tables from lm-eval result files and trainer runs.

Reads, under each path (a file or a folder, searched recursively):

* lm-eval result files (`results_*.json`, as `lm_eval --output_path` and r3bench's demo write
  them): one cell per task, the model named by `pretrained` and the method by its `peft` adapter
  (the trainer recorded in the adapter's run.json: sft, dpo, stepfix, grpo, psv) or `base`;
* trainer run folders (`run.json` + `eval/step-N.json`, written by `python -m trainers.<name>`):
  the evaluation at the run's last step, method = the trainer.

Writes OUT/leaderboard.md and OUT/leaderboard.csv: a row per (task, model), a column per method,
cells `acc ± stderr (n)`. Rows, columns and numbers are sorted and formatted deterministically, so
the same inputs give the same bytes. When two sources give a cell, the one read last wins and the
conflict is listed under the table.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path

METHOD_ORDER = ["base", "sft", "dpo", "stepfix", "grpo", "psv"]


@dataclass(frozen=True)
class Cell:
    task: str
    model: str
    method: str
    acc: float | None
    stderr: float | None
    n: int | None
    source: str


def _num(v):
    return float(v) if isinstance(v, (int, float)) and v == v else None


def _model_name(path: str) -> str:
    from r3bench.models import SHORT_NAMES

    s = str(path).rstrip("/")
    return SHORT_NAMES.get(s.lower()) or Path(s).name or s


# config fields only one trainer has: how a run record without a "trainer" key is recognised
_TRAINER_FIELDS = (("stepfix", "kl_estimator"), ("grpo", "group_size"), ("psv", "mc_rollouts"), ("dpo", "tau"))


def trainer_of(rec: dict) -> str:
    if rec.get("trainer"):
        return rec["trainer"]
    cfg = rec.get("config") or {}
    return next((name for name, key in _TRAINER_FIELDS if key in cfg), "sft" if cfg else "adapter")


def _adapter_method(adapter: str) -> str:
    for cand in (Path(adapter) / "run.json", Path(adapter).parent / "run.json"):
        if cand.is_file():
            try:
                return trainer_of(json.loads(cand.read_text()))
            except (OSError, json.JSONDecodeError):
                break
    return "adapter"


def _model_args(cfg: dict) -> dict:
    ma = cfg.get("model_args") or {}
    if isinstance(ma, str):
        ma = dict(kv.split("=", 1) for kv in ma.split(",") if "=" in kv)
    return ma


def from_lmeval(path: Path, root: Path) -> list[Cell]:
    d = json.loads(path.read_text())
    cfg = d.get("config") or {}
    ma = _model_args(cfg)
    # `model` is the lm-eval model type ("hf") for CLI runs, the model's path when an instance was passed
    given = str(cfg.get("model") or "")
    model = _model_name(ma.get("pretrained") or (given if "/" in given else "?"))
    method = _adapter_method(ma["peft"]) if ma.get("peft") else "base"
    out = []
    for task, res in sorted((d.get("results") or {}).items()):
        if "acc,none" not in res:
            continue
        n = (d.get("n-samples") or {}).get(task, {}).get("effective")
        out.append(Cell(task, model, method, _num(res.get("acc,none")), _num(res.get("acc_stderr,none")), n,
                        str(path.relative_to(root)) if path.is_relative_to(root) else path.name))
    return out


def from_run(run: Path, root: Path) -> list[Cell]:
    rec = json.loads((run / "run.json").read_text())
    evals = sorted((run / "eval").glob("step-*.json"), key=lambda p: int(p.stem.split("-")[1]))
    if not evals:
        return []
    ev = json.loads(evals[-1].read_text()).get("summary", {})
    model = _model_name((rec.get("config") or {}).get("model", "?"))
    method = trainer_of(rec)
    src = str(evals[-1].relative_to(root)) if evals[-1].is_relative_to(root) else evals[-1].name
    return [Cell(task, model, method, _num(r.get("acc")), _num(r.get("acc_stderr")), r.get("n"), src)
            for task, r in sorted((ev.get("tasks") or {}).items()) if "acc" in r]


def collect(paths) -> list[Cell]:
    cells = []
    for p in map(Path, paths):
        root = p if p.is_dir() else p.parent
        files = [p] if p.is_file() else sorted(p.rglob("*.json"))
        for f in files:
            if f.name.startswith("results_"):
                cells += from_lmeval(f, root)
            elif f.name == "run.json":
                cells += from_run(f.parent, root)
    return cells


def _fmt(c: Cell) -> str:
    if c.acc is None:
        return "-"
    se = f" ± {c.stderr:.3f}" if c.stderr is not None else ""
    return f"{c.acc:.3f}{se} ({c.n if c.n is not None else '?'})"


def tables(cells) -> tuple[str, str]:
    grid, conflicts = {}, []
    for c in cells:
        key = (c.task, c.model, c.method)
        if key in grid and grid[key] != c:
            conflicts.append(f"{c.task} / {c.model} / {c.method}: {grid[key].source} replaced by {c.source}")
        grid[key] = c
    methods = sorted({k[2] for k in grid}, key=lambda m: (METHOD_ORDER.index(m) if m in METHOD_ORDER else 99, m))
    rows = sorted({(k[0], k[1]) for k in grid})
    md = ["| task | model | " + " | ".join(methods) + " |", "|---|---|" + "---|" * len(methods)]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["task", "model", "method", "acc", "acc_stderr", "n", "source"])
    for task, model in rows:
        md.append(f"| {task} | {model} | " + " | ".join(_fmt(grid[(task, model, m)]) if (task, model, m) in grid
                                                        else "" for m in methods) + " |")
        for m in methods:
            c = grid.get((task, model, m))
            if c:
                w.writerow([task, model, m, "" if c.acc is None else f"{c.acc:.6f}",
                            "" if c.stderr is None else f"{c.stderr:.6f}", "" if c.n is None else c.n, c.source])
    if conflicts:
        md += ["", "Cells given by more than one source (the later one kept):", ""] + [f"- {x}" for x in conflicts]
    return "\n".join(md) + "\n", buf.getvalue()


def write(paths, out: str | Path = "results") -> tuple[Path, Path, int]:
    cells = collect(paths)
    md, csv_text = tables(cells)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "leaderboard.md").write_text("# r3bench leaderboard\n\n" + md, encoding="utf-8")
    (out / "leaderboard.csv").write_text(csv_text, encoding="utf-8")
    return out / "leaderboard.md", out / "leaderboard.csv", len(cells)
