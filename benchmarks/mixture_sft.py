"""Issue 35 item 5: continue the committed SFT start on the benchmark-shaped mixture, on the CPU, and
score the base model, the SFT start and the continued adapter on the whole MMLU-College and JEEBench
(strict and flexible) and on the mixture's learning and transfer sets.

    python benchmarks/mixture_sft.py --plan          # the cells, their status and CPU estimates
    python benchmarks/mixture_sft.py                 # run or continue, cell by cell
    python benchmarks/mixture_sft.py --max_cells 2   # a piece: two pending cells, then stop
    python benchmarks/mixture_sft.py --summarise     # summary.md / summary.csv / accuracy.png from done cells
    python benchmarks/mixture_sft.py --cells train --device cuda --dtype bfloat16 --batch 256   # on a GPU
                                                     # (benchmarks/gpu_cells.py drives this there)

Resumable: each cell writes its record (cells/<cell>.json) and samples atomically when it ends; done
cells are skipped; the training cell resumes from its newest checkpoint. Everything lands in
results/mixture_sft/ (OUT): configs, logs, samples, cells, the summary; the adapter and checkpoints
stay in OUT/runs (git-ignored, rebuilt by running the cell again).

The design (fixed before running): the SFT start (results/learning/sft_start, LoRA r 64) continued
with trainers.sft for STEPS optimizer steps of 4 sequences from the mixture's SFT set (its default
proportions: the five benchmarks' own answer kinds), learning rate 1e-4 (a continuation: a third of
the start's 3e-4), seed 0. Scored greedily with each task's own settings (seven-tag prompt, chat
template, the merged fp32 model); accuracy strict (`acc`) and flexible (`acc_flexible`), the
format compliance, and 95% percentile bootstrap CIs over problems; the majority-class and
uniform-guess baselines of the same documents beside them.
"""
from __future__ import annotations

import argparse
import csv
import gc
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "benchmarks") not in sys.path:  # learning_study, gpu_sft: scripts beside this one
    sys.path.insert(0, str(ROOT / "benchmarks"))
OUT = ROOT / "results" / "mixture_sft"
STEPS = 100
MODELS = ("sft_mix", "sft_start", "base")
TASKS = ("r3_mmlu_college_structured", "r3_jeebench_structured", "r3_procgen_learning", "r3_procgen_transfer")
# CPU seconds a problem (measured in results/learning: merged model, batch 32; whole benchmarks ~9-18 s
# a problem for the base model, which writes to the token limit) and a training step (~15 s, estimate)
EST = {"train": STEPS * 15.0, "whole": 12.0, "procgen": 2.9}


def cells() -> list[str]:
    order = ["train"]
    for task in TASKS:  # the benchmarks first, the trained model first: the result that decides comes early
        for m in MODELS:
            order.append(f"{m}__{task}")
    return order


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(obj, indent=1, default=str))
    os.replace(tmp, path)


def read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


START = ROOT / "results" / "learning" / "sft_start"  # the committed SFT start (gpu_sft.py's adapter parts)


class Runner:
    """The cells. `device` / `dtype` / `batch`: where and how the evaluation model runs (the CPU path:
    cpu, float32, 16; benchmarks/gpu_cells.py: cuda, bfloat16, a large batch); the training cell's
    trainer picks bf16 on a GPU itself (trainers.core.model.use_bf16). `gen_toks` replaces the tasks' own
    max_gen_toks (tests only); `start`: the SFT start's folder (tests pass a tiny one)."""

    def __init__(self, out: Path = OUT, data_dir: str | None = None, limit: int | None = None,
                 model: str = "r3bench/smollm2-135m-instruct", steps: int = STEPS, batch: int = 16,
                 device: str = "cpu", dtype: str = "float32", gen_toks: int | None = None, start: Path = START):
        self.out, self.limit, self.steps, self.batch = Path(out), limit, steps, batch
        self.data_dir = data_dir or os.environ.get("R3BENCH_DATA_DIR") or str(ROOT.parent / "shared" / "data")
        self.model = model
        self.device, self.dtype, self.gen_toks, self.start = device, dtype, gen_toks, Path(start)
        self._base = None

    # -- records
    def record(self, cell: str) -> dict | None:
        return read_json(self.out / "cells" / f"{cell}.json")

    def status(self, cell: str) -> str:
        r = self.record(cell)
        return (r or {}).get("status", "pending")

    def base_path(self) -> str:
        if self._base is None:
            from r3bench.core import models

            self._base = str(models.resolve(self.model)) if models.is_short_name(self.model) else self.model
        return self._base

    def start_adapter(self) -> Path:
        from gpu_sft import reassemble

        dst = self.out / "runs" / "sft_start_adapter"
        if not (dst / "adapter_config.json").is_file():
            reassemble(self.start, dst)
        return dst

    # -- cells
    def run_train(self) -> dict:
        import yaml

        data = self.out / "runs" / "mixture"
        if not (data / "sft.jsonl").is_file():
            subprocess.run([sys.executable, "-m", "r3bench.procgen.mixture_export", "--out", str(data)], check=True,
                           cwd=ROOT)
        outd = self.out / "runs" / "sft_mix"
        cfg = {"model": self.model, "data": str(data), "output_dir": str(outd), "init_adapter": str(self.start_adapter()),
               "max_steps": self.steps, "batch_size": 4, "grad_accum": 1, "learning_rate": 1e-4, "lr_scheduler": "cosine",
               "warmup_steps": 5, "save_steps": 10, "save_total_limit": 2, "seed": 0, "max_length": 1024,
               "report_to": "none", "resume": any(outd.glob("checkpoint-*"))}
        cfg_file = self.out / "configs" / "train.yaml"
        cfg_file.parent.mkdir(parents=True, exist_ok=True)
        shown = {k: (Path(v).relative_to(self.out).as_posix() if isinstance(v, str) and v.startswith(str(self.out))
                     else v) for k, v in cfg.items()}
        cfg_file.write_text(yaml.safe_dump(cfg, sort_keys=True))
        (self.out / "configs" / "train.shown.yaml").write_text(yaml.safe_dump(shown, sort_keys=True))
        log = self.out / "logs" / "train.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        t0 = time.time()
        with open(log, "a") as fh:
            rc = subprocess.run([sys.executable, "-m", "trainers.sft", "--config", str(cfg_file)], cwd=ROOT,
                                stdout=fh, stderr=subprocess.STDOUT).returncode
        if rc != 0:
            raise RuntimeError(f"trainers.sft exited {rc}; see {log.relative_to(self.out)}")
        run = read_json(outd / "run.json") or {}
        metrics = outd / "metrics.jsonl"
        if metrics.is_file():  # the step log is committed; the adapter is not
            (self.out / "train_metrics.jsonl").write_text(metrics.read_text())
        return {"seconds": round(time.time() - t0, 1), "adapter": (outd / "final").relative_to(self.out).as_posix(),
                "device": self.device,
                "train_loss": run.get("train_loss"), "global_step": run.get("global_step"), "config": shown}

    def lm(self, model: str):
        from lm_eval.models.huggingface import HFLM

        if model == "base":
            return HFLM(pretrained=self.base_path(), device=self.device, batch_size=self.batch, dtype=self.dtype)
        from learning_study import merged_model

        adapter = self.start_adapter() if model == "sft_start" else self.adapter_dir()
        if not (Path(adapter) / "adapter_config.json").is_file():
            raise FileNotFoundError(f"no adapter at {adapter}: run the train cell first")
        import torch

        # merged in fp32 (the CPU path's model), then cast and moved: HFLM takes an instance where it is
        merged = merged_model(self.base_path(), str(adapter)).to(device=self.device, dtype=getattr(torch, self.dtype))
        return HFLM(pretrained=merged, tokenizer=self.base_path(), device=self.device, batch_size=self.batch)

    def adapter_dir(self) -> Path:
        """The continued adapter (the train cell's output; git-ignored, rebuilt by running that cell)."""
        return self.out / "runs" / "sft_mix" / "final"

    def run_eval(self, cell: str) -> dict:
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager

        from r3bench.eval.hook import tasks_dir
        from verifiers import seventag

        model, task = cell.split("__", 1)
        os.environ.setdefault("R3BENCH_DATA_DIR", self.data_dir)
        lm = self.lm(model)
        t0 = time.time()
        kw = {"gen_kwargs": {"max_gen_toks": self.gen_toks}} if self.gen_toks else {}
        res = simple_evaluate(model=lm, tasks=[task], task_manager=TaskManager(include_path=str(tasks_dir()),
                                                                              include_defaults=False),
                              apply_chat_template=True, bootstrap_iters=0, log_samples=True, limit=self.limit, **kw)
        seconds = round(time.time() - t0, 1)
        rows = []
        for s in res["samples"][task]:
            resp = s["filtered_resps"][0] if s["filtered_resps"] else ""
            fc = s.get("format_compliance")
            rows.append({"doc_id": s["doc_id"], "id": s["doc"]["id"], "answer_kind": s["doc"].get("answer_kind"),
                         "response": resp, "acc": float(s["acc"]), "answer": s.get("answer"),
                         "acc_flexible": float(s["acc_flexible"]) if s.get("acc_flexible") is not None else None,
                         "format_compliance": fc if fc is not None else seventag.format_compliance(resp)})
        spath = self.out / "samples" / f"{cell}.jsonl"
        spath.parent.mkdir(parents=True, exist_ok=True)
        tmp = spath.with_name(spath.name + ".partial")
        tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
        os.replace(tmp, spath)
        del lm, res
        gc.collect()
        return {"task": task, "model": model, "n": len(rows), "seconds": seconds, "limit": self.limit,
                "device": self.device, "dtype": self.dtype, "batch": self.batch,
                **({"max_gen_toks": self.gen_toks} if self.gen_toks else {}),
                "samples_file": spath.relative_to(self.out).as_posix()}

    def run(self, max_cells: int | None = None, log=print, only: list[str] | None = None) -> int:
        """Run the pending cells in order (`only`: these cells alone); returns how many finished."""
        done = 0
        for cell in cells():
            if only is not None and cell not in only:
                continue
            if self.status(cell) == "done":
                continue
            if max_cells is not None and done >= max_cells:
                break
            if cell != "train" and not cell.startswith("base__") and self.status("train") != "done":
                log(f"[mixture_sft] {cell}: waits for the train cell")
                continue
            prev = self.record(cell) or {}
            tries = prev.get("tries", 0) + 1
            write_json(self.out / "cells" / f"{cell}.json", {"cell": cell, "status": "running", "tries": tries,
                                                             "started": time.time()})
            log(f"[mixture_sft] {cell}: running (try {tries})")
            try:
                res = self.run_train() if cell == "train" else self.run_eval(cell)
            except Exception as e:  # noqa: BLE001 - recorded; the next cell runs; a rerun retries this one
                write_json(self.out / "cells" / f"{cell}.json", {"cell": cell, "status": "failed", "tries": tries,
                                                                 "error": f"{type(e).__name__}: {str(e)[:500]}"})
                log(f"[mixture_sft] {cell}: failed: {type(e).__name__}: {e}")
                continue
            write_json(self.out / "cells" / f"{cell}.json", {"cell": cell, "status": "done", "tries": tries,
                                                             "finished": time.time(), **res})
            log(f"[mixture_sft] {cell}: done in {res.get('seconds')} s")
            done += 1
        return done

    def plan(self) -> str:
        lines = ["| cell | status | estimate (CPU min) | measured (min) |", "|---|---|---|---|"]
        for c in cells():
            r = self.record(c) or {}
            if c == "train":
                est = EST["train"]
            else:
                task = c.split("__", 1)[1]
                n = self.limit or (400 if "procgen" in task else (118 if "mmlu" in task else 107))
                est = n * (EST["procgen"] if "procgen" in task else EST["whole"])
            meas = f"{r['seconds'] / 60:.1f}" if isinstance(r.get("seconds"), (int, float)) else ""
            lines.append(f"| {c} | {r.get('status', 'pending')} | {est / 60:.0f} | {meas} |")
        return "\n".join(lines)


def summarise(out: Path = OUT, data_dir: str | None = None) -> list[dict]:
    """summary.csv, summary.md and accuracy.png from the done evaluation cells."""
    from learning_study import bootstrap_ci, hash_seed

    from r3bench.eval.lmeval import MCQ_KINDS, baselines

    rows = []
    for task in TASKS:
        for model in MODELS:
            cell = f"{model}__{task}"
            rec = read_json(out / "cells" / f"{cell}.json") or {}
            if rec.get("status") != "done":
                continue
            samples = [json.loads(x) for x in (out / rec["samples_file"]).read_text().splitlines() if x.strip()]
            mcq = [s for s in samples if s.get("answer_kind") in MCQ_KINDS]
            seed = hash_seed(cell)
            row = {"model": model, "task": task, "n": len(samples), "n_mcq": len(mcq), "seconds": rec.get("seconds")}
            for key, src in (("acc", samples), ("format_compliance", samples), ("acc_mcq", mcq),
                             ("acc_flexible_mcq", mcq)):
                field = {"acc_mcq": "acc", "acc_flexible_mcq": "acc_flexible"}.get(key, key)
                vals = [float(s[field]) for s in src if s.get(field) is not None]
                row[key], row[key + "_lo"], row[key + "_hi"] = bootstrap_ci(vals, 2000, seed) if vals else (math.nan,) * 3
            row["mcq_letter_read"] = (sum(1 for s in mcq if _committed(s)) / len(mcq)) if mcq else math.nan
            rows.append(row)
    base: dict = {}
    for task in TASKS:
        try:
            docs = _documents(task, data_dir)
        except Exception:  # noqa: BLE001 - no data here: the baseline columns stay empty
            continue
        b = baselines(list(docs.values())).get("all_mcq")
        if b:
            base[task] = b
    if not rows:
        return rows
    with open(out / "summary.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    f = lambda r, k: "-" if math.isnan(r[k]) else f"{r[k]:.3f} [{r[k + '_lo']:.3f}, {r[k + '_hi']:.3f}]"  # noqa: E731
    md = ["# The SFT start continued on the benchmark-shaped mixture (issue 35 item 5)", "",
          "Strict = the answer as the prompt asks it; flexible = also the options the final answer names where "
          "strict reads none; both on the multiple-choice documents (MCQ). Accuracy and format compliance over "
          "all documents. 95% percentile bootstrap CIs over problems; the baselines are over the same MCQ documents. "
          "`benchmarks/mixture_sft.py`; cells in cells/, responses in samples/.", "",
          "| task | model | n | accuracy | format | MCQ n | MCQ strict | MCQ flexible | MCQ answer read | majority | uniform |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = base.get(r["task"], {})
        md.append(f"| {r['task']} | {r['model']} | {r['n']} | {f(r, 'acc')} | {f(r, 'format_compliance')} | "
                  f"{r['n_mcq']} | {f(r, 'acc_mcq')} | {f(r, 'acc_flexible_mcq')} | "
                  f"{'-' if math.isnan(r['mcq_letter_read']) else format(r['mcq_letter_read'], '.3f')} | "
                  f"{b.get('majority', float('nan')):.3f} | {b.get('uniform', float('nan')):.3f} |")
    (out / "summary.md").write_text("\n".join(md) + "\n")
    _plot(out, rows, base)
    return rows


def _committed(s: dict) -> bool:
    """Whether the strict reading found an answer (a letter read, right or wrong) in an MCQ response."""
    return bool(s.get("acc")) or bool(s.get("answer"))


def _documents(task: str, data_dir=None) -> dict:
    from r3bench.eval import data as _data
    from r3bench.eval import procgen_data
    from r3bench.eval.lmeval import to_doc

    from r3bench.results.leaderboard import benchmark_of

    bench = benchmark_of(task)
    if bench:
        return {r.id: to_doc(r) for r in _data.load(bench, data_dir)}
    recs = procgen_data.mixture_records(task.rsplit("_", 1)[1])
    return {r.id: to_doc(r) for r in recs}


def _plot(out: Path, rows: list[dict], base: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colours = {"base": "C0", "sft_start": "C1", "sft_mix": "C2"}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, key, title in zip(axes, ("acc_mcq", "acc_flexible_mcq"), ("MCQ strict", "MCQ flexible")):
        for i, task in enumerate(TASKS):
            for j, m in enumerate(MODELS):
                r = next((r for r in rows if r["task"] == task and r["model"] == m), None)
                if r is None or math.isnan(r[key]):
                    continue
                x = i + (j - 1) * 0.25
                ax.bar(x, r[key], 0.25, color=colours[m], label=m if i == 0 else None,
                       yerr=[[r[key] - r[key + "_lo"]], [r[key + "_hi"] - r[key]]], capsize=2)
            if task in base:
                ax.hlines(base[task]["majority"], i - 0.4, i + 0.4, colors="k", linestyles="--",
                          label="majority" if i == 0 else None)
                ax.hlines(base[task]["uniform"], i - 0.4, i + 0.4, colors="grey", linestyles=":",
                          label="uniform" if i == 0 else None)
        ax.set_xticks(range(len(TASKS)))
        ax.set_xticklabels([t.replace("r3_", "").replace("_structured", "") for t in TASKS], fontsize=8)
        ax.set_ylim(0, 1)
        ax.set_title(f"{title} accuracy, 95% bootstrap CI", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "accuracy.png", dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--limit", type=int, default=None, help="documents per task (tests; default: all)")
    ap.add_argument("--model", default="r3bench/smollm2-135m-instruct")
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--max_cells", type=int, default=None)
    ap.add_argument("--cells", default="", help="comma-separated cells to run (default: every pending one)")
    ap.add_argument("--device", default="cpu", help="evaluation device (cpu; cuda on the GPU machine)")
    ap.add_argument("--dtype", default="float32", help="evaluation dtype (float32; bfloat16 on the GPU machine)")
    ap.add_argument("--batch", type=int, default=16, help="lm-eval batch size of the evaluation cells")
    ap.add_argument("--gen-toks", type=int, default=None, help="max new tokens instead of the tasks' own (tests)")
    ap.add_argument("--start", default=str(START), help="the SFT start's folder (adapter parts)")
    ap.add_argument("--no-summary", action="store_true", help="run cells only (the GPU runner summarises here)")
    ap.add_argument("--plan", action="store_true")
    ap.add_argument("--summarise", action="store_true")
    a = ap.parse_args(argv)
    r = Runner(Path(a.out), a.data_dir, a.limit, a.model, a.steps, a.batch, a.device, a.dtype, a.gen_toks, Path(a.start))
    if a.plan:
        print(r.plan())
        return 0
    if not a.summarise:
        only = [c for c in a.cells.split(",") if c.strip()] or None
        bad = sorted(set(only or ()) - set(cells()))
        if bad:
            ap.error(f"no such cells: {bad}; the cells are {cells()}")
        r.run(a.max_cells, only=only)
        if a.no_summary:
            return 0 if all(r.status(c) == "done" for c in (only or cells())) else 1
    summarise(Path(a.out), r.data_dir)
    print(r.plan())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
