"""Run records: where each leaderboard cell came from, written beside the result as JSON.

    from r3bench.results import records
    records.write_for_results("out/lm_eval/x/results_2026-01-01T00-00-00.json", data_dir="../shared/data")
    # -> out/lm_eval/x/record_2026-01-01T00-00-00.json
    records.write_for_run("runs/sft")            # trainer run folder -> runs/sft/record.json

A record holds: the cells (task, model, method, acc, stderr, n, JEEBench score), per task its
version, lm-eval task hash, generation settings and the data it read (sha256 of the benchmark file
under the data directory; procgen: n, seed and a hash of the generated test split), the model (id
and revision, or the sha256 of its weight files), the adapter (sha256 of its files, the trainer
that made it), seeds, package versions, the git commit (and whether the tree was dirty) and the
hardware. Paths in a record are relative (file names, paths under the data directory) or bare model
ids, so a record can be committed and the leaderboard rebuilt from records alone
(`r3bench leaderboard results/records`). What could not be found is listed under "problems" rather
than raised.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
from pathlib import Path

from r3bench import procgen
from r3bench.eval import data as _data
from r3bench.core import models
from r3bench.results.cells import adapter_method, from_lmeval, from_run, model_args, pretrained_of, trainer_of

SCHEMA = 1
PACKAGES = ("r3bench", "lm_eval", "torch", "transformers", "peft", "trl", "datasets", "accelerate")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


class RecordError(ValueError):
    """A result file cannot be read: the message names the file and the reason."""


def record_path(result: str | os.PathLike) -> Path:
    """results_<ts>.json -> record_<ts>.json beside it; a trainer run folder -> <run>/record.json."""
    p = Path(result)
    if p.is_dir():
        return p / "record.json"
    return p.with_name("record_" + p.name[len("results_"):] if p.name.startswith("results_") else p.stem + ".record.json")


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(1 << 20):
            h.update(b)
    return h.hexdigest()


def _json_sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


_HASH_CACHE: dict = {}


def _cached_sha(f: Path) -> str:
    st = f.stat()
    key = (str(f.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASH_CACHE:
        _HASH_CACHE[key] = sha256_file(f)
    return _HASH_CACHE[key]


def weight_hashes(d: Path) -> dict:
    """sha256 of the weight files of a local model/adapter folder (a valid r3bench manifest is reused)."""
    files = sorted(p for p in d.iterdir() if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    known = {}
    try:
        man = json.loads((d / models.MANIFEST).read_text())["files"]
        known = {n: i["sha256"] for n, i in man.items() if (d / n).is_file() and (d / n).stat().st_size == i["size"]}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return {p.name: known.get(p.name) or _cached_sha(p) for p in files}


def model_info(pretrained: str, revision: str | None = None) -> dict:
    """{"id", "revision" (hub) | "weights_sha256" (local)}; local paths are reduced to their folder name."""
    name = str(pretrained).rstrip("/")
    if models.is_short_name(name):
        d = models.cache_root() / "models" / models.SHORT_NAMES[name.lower()]
        info = {"id": name.lower(), "source": "r3bench short name (converted from the packaged GGUF)"}
        if d.is_dir():
            info["weights_sha256"] = weight_hashes(d)
        return info
    p = Path(name).expanduser()
    if p.is_dir():
        return {"id": models.SHORT_NAMES.get(name.lower()) or p.name, "source": "local folder",
                "weights_sha256": weight_hashes(p)}
    return {"id": name, "source": "hub", "revision": revision or "main"}


def adapter_info(adapter: str) -> dict:
    p = Path(adapter)
    info = {"id": "/".join(p.parts[-3:]) if p.is_absolute() else str(p), "method": adapter_method(adapter)}
    if p.is_dir():
        info["sha256"] = {f.name: _cached_sha(f) for f in sorted(p.iterdir())
                          if f.is_file() and (f.name.endswith(WEIGHT_SUFFIXES) or f.name == "adapter_config.json")}
    else:
        info["problem"] = "adapter folder not found"
    return info


def _git(args, cwd) -> str | None:
    try:
        r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10)
        return r.stdout if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def environment() -> dict:
    """Package versions, git commit + dirty flag of the r3bench checkout, hardware."""
    from importlib.metadata import PackageNotFoundError, version

    pk = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            pk[name] = version(name)
        except PackageNotFoundError:
            pk[name] = None
    here = Path(__file__).resolve().parent
    commit = _git(["rev-parse", "HEAD"], here)
    status = _git(["status", "--porcelain", "--untracked-files=no"], here) if commit else None
    hw = {"cpus": os.cpu_count(), "platform": platform.platform(), "machine": platform.machine(), "gpu": None}
    try:
        import torch

        if torch.cuda.is_available():
            hw["gpu"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except ImportError:
        pass
    return {"packages": pk, "git": {"commit": commit.strip() if commit else None,
                                    "dirty": bool(status.strip()) if status is not None else None},
            "hardware": hw}


# ------------------------------------------------------------------------------------- task data

_DATASET_FN = re.compile(r"def dataset_(\w+)\(")


def procgen_split_hash(n: int, seed: int) -> str:
    return _json_sha([[p.id, p.question, p.answer, p.solution] for p in procgen.test_split(int(n), int(seed))])


def task_data(task_cfg: dict, data_dir: str | None = None) -> dict:
    """What a task read: {"benchmark", "file", "sha256"} | {"procgen": {n, seed, test_sha256}} | {"problem"}."""
    m = _DATASET_FN.search(str(task_cfg.get("custom_dataset") or ""))
    # the dataset functions of the benchmark table's entries are made from the table (lmeval.dataset_<b>):
    # their source names no benchmark, the task name does
    bench = m.group(1) if m else _data.benchmark_of(str(task_cfg.get("task") or ""))
    if bench is None:
        return {"problem": "not an r3bench dataset (no custom_dataset r3bench.eval.lmeval.dataset_*)"}
    kw = task_cfg.get("dataset_kwargs") or {}
    if bench == "procgen":
        # keywords procgen_n / procgen_seed / procgen_split (n / seed / split in task versions before the rename)
        n = int(kw.get("procgen_n", kw.get("n", 2494)))
        seed = int(kw.get("procgen_seed", kw.get("seed", 0)))
        split = kw.get("procgen_split", kw.get("split", "test"))
        return {"benchmark": "procgen", "procgen": {"n": n, "seed": seed, "split": split,
                                                     "test_sha256": procgen_split_hash(n, seed)}}
    if bench == "demo":
        from importlib import resources

        data = resources.files("r3bench.core").joinpath("demo_problems.jsonl").read_bytes()
        return {"benchmark": "demo", "file": "r3bench/core/demo_problems.jsonl", "sha256": hashlib.sha256(data).hexdigest()}
    import inspect

    loader = _data.LOADERS.get(bench)
    if loader is None:
        return {"benchmark": bench, "problem": f"no loader for {bench!r}"}
    rel = kw.get("file") or inspect.signature(loader).parameters["file"].default
    meta = task_cfg.get("metadata") or {}
    try:
        root = _data.data_dir(data_dir or meta.get("data_dir"))
    except _data.DataError as e:
        return {"benchmark": bench, "file": rel, "problem": str(e)}
    f = root / rel
    if not f.is_file():
        return {"benchmark": bench, "file": rel, "problem": "file not found under the data directory"}
    return {"benchmark": bench, "file": rel, "sha256": _cached_sha(f)}


# ------------------------------------------------------------------------------------------ build

def _cell_dict(c) -> dict:
    d = {"task": c.task, "model": c.model, "method": c.method, "acc": c.acc, "acc_stderr": c.stderr, "n": c.n,
         "jee_score": c.jee_score, "jee_marks": c.jee_marks}
    if getattr(c, "acc_flexible", None) is not None:  # multiple-choice tasks since task version 1.2
        d["acc_flexible"] = c.acc_flexible
    return d


def for_results(results_file: str | os.PathLike, data_dir: str | None = None, **extra) -> dict:
    """The run record of one lm-eval results_*.json (raises RecordError if it is not one)."""
    path = Path(results_file)
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(d, dict) or not isinstance(d.get("results"), dict):
            raise ValueError("no 'results' mapping")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise RecordError(f"{path.name}: not an lm-eval results file ({e})") from None
    cfg = d.get("config") or {}
    ma = model_args(cfg)
    pretrained = pretrained_of(cfg)
    problems = []
    tasks = {}
    for task in sorted(d["results"]):
        tc = (d.get("configs") or {}).get(task)
        if tc is None:  # a group: its subtasks carry the details
            continue
        td = task_data(tc, data_dir)
        if "problem" in td:
            problems.append(f"{task}: data: {td['problem']}")
        tasks[task] = {"version": (d.get("versions") or {}).get(task), "task_hash": (d.get("task_hashes") or {}).get(task),
                       "n": (d.get("n-samples") or {}).get(task), "data": td,
                       "generation_kwargs": tc.get("generation_kwargs"), "repeats": tc.get("repeats"),
                       "num_fewshot": tc.get("num_fewshot")}
    rec = {
        "schema": SCHEMA, "kind": "lm_eval", "result": path.name, "result_sha256": sha256_file(path),
        "date": d.get("date"),
        "cells": [_cell_dict(c) for c in from_lmeval(path, path.parent)],
        "tasks": tasks,
        # lm-eval model type (hf, r3-rag, ...); "instance" when lm-eval was given a model object (its path is here)
        "model": {"type": "instance" if "/" in str(cfg.get("model") or "") else str(cfg.get("model")),
                  **model_info(pretrained, ma.get("revision") or cfg.get("model_revision")),
                  "args": {k: v for k, v in ma.items() if k not in ("pretrained", "peft", "tokenizer")}},
        "adapter": adapter_info(ma["peft"]) if ma.get("peft") else None,
        "seeds": {k: cfg.get(k) for k in ("random_seed", "numpy_seed", "torch_seed", "fewshot_seed")},
        "gen_kwargs": cfg.get("gen_kwargs"), "limit": cfg.get("limit"),
        # a strategy wrapper's own settings and token means (r3bench/eval/strategies/base.py get_model_info)
        "strategy": cfg.get("r3bench_strategy") or d.get("r3bench_strategy"),
        "apply_chat_template": d.get("chat_template_sha") is not None, "chat_template_sha": d.get("chat_template_sha"),
        **environment(), "problems": problems, **extra,
    }
    return rec


def for_run(run_dir: str | os.PathLike, data_dir: str | None = None, **extra) -> dict:
    """The run record of a trainer run folder (run.json + its last eval/step-N.json)."""
    run = Path(run_dir)
    try:
        rr = json.loads((run / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RecordError(f"{run.name}: no readable run.json ({e})") from None
    cfg = rr.get("config") or {}
    cells = from_run(run, run)
    problems = [] if cells or not cfg.get("eval_tasks") else [f"eval_tasks {cfg['eval_tasks']!r} but no "
                                                               "eval/step-N.json with task results"]
    return {
        "schema": SCHEMA, "kind": "trainer", "result": "run.json", "trainer": trainer_of(rr),
        "status": rr.get("status"), "cells": [_cell_dict(c) for c in cells],
        "model": model_info(cfg.get("model", "?")),
        "adapter": adapter_info(rr["adapter"]) if rr.get("adapter") else None,
        "init_adapter": adapter_info(cfg["init_adapter"]) if cfg.get("init_adapter") else None,
        "data": {"file": Path(rr["data_file"]).name if rr.get("data_file") else None, "sha256": rr.get("data_sha256")},
        "seeds": {"seed": cfg.get("seed"), "procgen_seed": cfg.get("procgen_seed")},
        "train": {k: v for k, v in cfg.items() if k not in ("output_dir", "data", "init_adapter", "model")},
        "eval": {"tasks": cfg.get("eval_tasks"), "limit": cfg.get("eval_limit"),
                 "gen_kwargs": {"max_gen_toks": cfg.get("eval_max_gen_toks")}},
        **environment(), "problems": problems, **extra,
    }


# an absolute path (or ~/...) of at least three parts anywhere in a string: a whole value, or inside a
# command ("pretrained=<abs>/u/m,index=<abs>/x"), a log tail or a problem message
_ABS_PATH = re.compile(r"(?<![\w.:/~-])~?/(?:[^\s,=/'\"]+/){2,}[^\s,=/'\"]*")


def _short_path(m: re.Match) -> str:
    parts = [x for x in m.group(0).split("/") if x and x != "~"]
    return "/".join(parts[-3:]) + ("/" if m.group(0).endswith("/") and len(parts) < 3 else "")


def portable(obj):
    """The record without machine paths: every absolute path in any string (a whole value or inside a
    longer one - a command, a message) keeps only its last three parts."""
    if isinstance(obj, dict):
        return {k: portable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [portable(v) for v in obj]
    if isinstance(obj, str) and "/" in obj:
        return _ABS_PATH.sub(_short_path, obj)
    return obj


def _write(rec: dict, path: Path) -> Path:
    rec = portable(rec)
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(rec, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def write_for_results(results_file, data_dir: str | None = None, **extra) -> Path:
    """Write record_<ts>.json beside an lm-eval results_<ts>.json; returns its path."""
    return _write(for_results(results_file, data_dir, **extra), record_path(results_file))


def write_for_run(run_dir, data_dir: str | None = None, **extra) -> Path:
    return _write(for_run(run_dir, data_dir, **extra), record_path(Path(run_dir)))


def write_all(paths, data_dir: str | None = None, force: bool = False) -> tuple[list[Path], list[str]]:
    """A record for every results_*.json and trainer run under `paths` that has none (all with force).

    Returns (records written, problems): an unreadable input is a problem, not an exception."""
    written, problems = [], []
    for p in map(Path, paths):
        files = [p] if p.is_file() else sorted(p.rglob("*.json")) if p.is_dir() else []
        if not p.exists():
            problems.append(f"{p}: not found")
        for f in files:
            if f.name.startswith("results_"):
                target, make = record_path(f), write_for_results
                src = f
            elif f.name == "run.json":
                target, make, src = record_path(f.parent), write_for_run, f.parent
            else:
                continue
            if target.exists() and not force:
                continue
            try:
                written.append(make(src, data_dir))
            except RecordError as e:
                problems.append(str(e))
    return written, problems


def read(path: str | os.PathLike) -> dict:
    """A record as a dict; RecordError if it is not one."""
    p = Path(path)
    try:
        rec = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise RecordError(f"{p.name}: unreadable record ({e})") from None
    if not isinstance(rec, dict) or rec.get("schema") != SCHEMA or not isinstance(rec.get("cells"), list):
        raise RecordError(f"{p.name}: not an r3bench run record (schema {SCHEMA} with a 'cells' list)")
    return rec


def copy_records(paths, dest: str | os.PathLike) -> list[Path]:
    """Copy every run record under `paths` to `dest`, keeping its path relative to the path it was
    found under: the committable part of a run (the leaderboard rebuilds from it alone)."""
    import shutil

    dest, out = Path(dest), []
    for p in map(Path, paths):
        root = p if p.is_dir() else p.parent
        for f in ([p] if p.is_file() else sorted(p.rglob("record*.json")) if p.is_dir() else []):
            if f.name == "record.json" or (f.name.startswith("record_") and f.name.endswith(".json")):
                read(f)  # only real records travel
                target = dest / f.relative_to(root)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, target)
                out.append(target)
    return out
