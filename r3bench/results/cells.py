"""Cells: one accuracy number of the leaderboard, read from an lm-eval result or a trainer run.

A cell is (task, model, method) -> acc, stderr, n, its source and its run record. The readers here
turn one input into cells:

* `from_lmeval(results_*.json)`: one cell per task; the model is `pretrained` (also inside a strategy
  wrapper), the method the adapter's trainer and/or the wrapper (core/methods.py), else CoT;
* `from_run(run folder)`: the evaluation at a trainer run's last step, method = the trainer;
* `from_base_eval(eval/base.json)`: the base model scored by a trainer, method CoT.

The leaderboard (leaderboard.py) collects and tabulates cells; the run records (records.py) store
them beside the result. Both import this module; neither imports the other's reader.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from r3bench.core import methods
from r3bench.core.models import SHORT_NAMES


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
    acc_flexible: float | None = None  # flexible-extract on multiple-choice tasks (lm-eval's convention)


def number(v):
    """A finite int or float as a float; None for anything else (bools, NaN, strings)."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def model_name(path: str) -> str:
    s = str(path).rstrip("/")
    return SHORT_NAMES.get(s.lower()) or Path(s).name or s


def trainer_of(rec: dict) -> str:
    # `python -m trainers.sft` records its Config's module, "__main__": recognise the trainer by its fields
    if rec.get("trainer") and rec["trainer"] != "__main__":
        return rec["trainer"]
    cfg = rec.get("config") or {}
    return next((name for name, key in methods.TRAINER_FIELDS if key in cfg), "sft" if cfg else "adapter")


def adapter_method(adapter: str) -> str:
    for cand in (Path(adapter) / "run.json", Path(adapter).parent / "run.json"):
        if cand.is_file():
            try:
                return trainer_of(json.loads(cand.read_text()))
            except (OSError, json.JSONDecodeError):
                break
    return "adapter"


def model_args(cfg: dict) -> dict:
    ma = cfg.get("model_args") or {}
    if isinstance(ma, str):
        ma = dict(kv.split("=", 1) for kv in ma.split(",") if "=" in kv)
    return {str(k).strip(): str(v).strip() for k, v in ma.items()} if isinstance(ma, dict) else {}


def pretrained_of(cfg: dict) -> str:
    """The model an lm-eval run scored: `pretrained` of model_args (also inside a strategy wrapper), else
    config.model when it is a path (lm-eval given a model instance records the instance's path there)."""
    given = str(cfg.get("model") or "")
    return model_args(cfg).get("pretrained") or (given if "/" in given else "?")


def method_of(cfg: dict, strategy: dict | None = None) -> str:
    """The method of an lm-eval run: the adapter's trainer and/or the strategy wrapper; a StepCo or
    Best-of-N run whose verifier read the reference (`r3bench_strategy.oracle_verifier`, in the results
    file or its config) is `stepco_oracle` / `bestofn_oracle`."""
    ma = model_args(cfg)
    parts = [adapter_method(ma["peft"])] if ma.get("peft") else []
    wrapper = methods.WRAPPERS.get(str(cfg.get("model") or ""))
    if wrapper:
        info = strategy if isinstance(strategy, dict) else cfg.get("r3bench_strategy")
        oracle = methods.oracle_variant(wrapper)
        if oracle in methods.BY_KEY and isinstance(info, dict) and info.get("oracle_verifier") is True:
            wrapper = oracle
        parts.append(wrapper)
    return "+".join(parts) or "cot"


def strategy_of(d: dict) -> dict | None:
    """A strategy wrapper's settings in an lm-eval results file (strategies/base.py get_model_info)."""
    cfg = d.get("config") if isinstance(d.get("config"), dict) else {}
    info = cfg.get("r3bench_strategy") or d.get("r3bench_strategy")
    return info if isinstance(info, dict) else None


def relative(path: Path, root: Path) -> str:
    """`path` relative to `root` (posix), or its bare name when it is not under `root`."""
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
        out.append(Cell(task, model, method, number(res.get("acc,none")), number(res.get("acc_stderr,none")), n,
                        relative(path, root), number(res.get("jee_score,none")), number(res.get("jee_marks,none")),
                        acc_flexible=number(res.get("acc_flexible,none"))))
    return out


def _summary_cells(summary: dict, model: str, method: str, src: str) -> list[Cell]:
    return [Cell(task, model, method, number(r.get("acc")), number(r.get("acc_stderr")), r.get("n"), src,
                 number(r.get("jee_score")), number(r.get("jee_marks")), acc_flexible=number(r.get("acc_flexible")))
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
    return _summary_cells(ev, model, trainer_of(rec), relative(evals[-1], root))


def from_base_eval(path: Path, root: Path) -> list[Cell]:
    """eval/base.json of trainers.core.evaluation.evaluate_model(tag="base"): the base model, method CoT."""
    d = json.loads(path.read_text(encoding="utf-8"))
    run = path.parent.parent / "run.json"
    model = (json.loads(run.read_text(encoding="utf-8")).get("config") or {}).get("model") if run.is_file() else None
    model = model or pretrained_of(d.get("config") or {})
    return _summary_cells(d.get("summary") or {}, model_name(model), "cot", relative(path, root))
