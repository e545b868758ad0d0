"""Logging and evaluation during a run: the metrics.jsonl and lm-eval callbacks, `evaluate_model`
(lm-eval's simple_evaluate of the current adapter, failures recorded, never raised), and the lm_eval
command and --model_args that score a run's model afterwards."""
from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
import traceback
from pathlib import Path

from r3bench.eval.hook import tasks_dir
from trainers.core.config import BaseConfig, eval_cost_note
from trainers.core.model import cuda_available


def jsonable(v):
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def wait_for_everyone():
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.barrier()
    except Exception:  # noqa: BLE001
        pass


def callbacks(cfg, tokenizer, extra=()) -> list:
    """metrics.jsonl and lm-eval callbacks, then `extra` (a caller's own)."""
    from transformers import TrainerCallback

    class JsonlMetrics(TrainerCallback):
        """Every logged dict to OUTPUT_DIR/metrics.jsonl (appended: a resumed run continues the file)."""

        def on_log(self, args, state, control, logs=None, **kw):
            if not state.is_world_process_zero or not logs:
                return
            rec = {"step": state.global_step, "time": round(time.time(), 3)}
            rec.update({k: jsonable(v) for k, v in logs.items()})
            with open(Path(args.output_dir) / "metrics.jsonl", "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")

    class LmEval(TrainerCallback):
        """simple_evaluate of the current adapter every eval_steps and at the end."""

        def __init__(self):
            self.done: set[int] = set()

        def _run(self, args, state, model):
            if state.global_step in self.done or not cfg.eval_tasks.strip():
                return
            self.done.add(state.global_step)
            if state.is_world_process_zero:
                res = evaluate_model(model, tokenizer, cfg, tag=f"step-{state.global_step}")
                with open(Path(args.output_dir) / "metrics.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"step": state.global_step, "eval": res}) + "\n")
            wait_for_everyone()

        def on_step_end(self, args, state, control, model=None, **kw):
            if cfg.eval_steps and state.global_step % cfg.eval_steps == 0:
                self._run(args, state, model)

        def on_train_end(self, args, state, control, model=None, **kw):
            self._run(args, state, model)

    return [JsonlMetrics(), LmEval(), *extra]


def score_command(cfg, model_args: str) -> str:
    """The lm_eval command that scores a run's model: a limit that fits a CPU, and results + samples kept
    beside the run (lm_eval saves nothing without --output_path and --log_samples)."""
    return (f"lm_eval --model hf --model_args {model_args} --tasks r3_procgen --apply_chat_template --device cpu "
            f"--batch_size 8 --limit {cfg.eval_limit or BaseConfig.eval_limit} --gen_kwargs max_gen_toks={cfg.eval_max_gen_toks} "
            f"--output_path {Path(cfg.output_dir) / 'lm_eval'} --log_samples")


def lm_eval_args(base_path: str, adapter: Path, lora: bool = True) -> str:
    """lm-eval's --model_args for the run's final folder: an adapter over the base, or (full fine-tuning)
    the model itself."""
    return f"pretrained={base_path},peft={adapter}" if lora else f"pretrained={adapter}"


def no_eval_note(cfg, base_path: str, adapter: Path) -> str:
    """The end-of-run line of a run without evaluation: how to score its adapter and what it costs."""
    limit = cfg.eval_limit or BaseConfig.eval_limit  # 0 (all documents) would cost hours on a CPU
    margs = lm_eval_args(base_path, adapter, getattr(cfg, "lora", True))
    return (f"[r3bench] no evaluation (eval_tasks is empty, the default). Score the adapter with: "
            f"{score_command(cfg, margs)}, or train with --eval_tasks r3_procgen --eval_limit {limit}. Cost: "
            f"{eval_cost_note(dataclasses.replace(cfg, eval_limit=limit))}")


def evaluate_model(model, tokenizer, cfg, tag: str = "final") -> dict:
    """lm-eval simple_evaluate on cfg.eval_tasks with this (peft) model; summary per task.

    Failures are recorded (returned and written) rather than raised: an evaluation must not kill a run.
    Without CUDA it first prints what the evaluation costs on a CPU (eval_cost_note)."""
    out = Path(cfg.output_dir) / "eval"
    out.mkdir(parents=True, exist_ok=True)
    if not cuda_available():
        print(f"[r3bench] evaluation {tag}: {eval_cost_note(cfg)}", file=sys.stderr, flush=True)
    was_training, side = model.training, tokenizer.padding_side
    t0 = time.perf_counter()
    try:
        from lm_eval import simple_evaluate
        from lm_eval.models.huggingface import HFLM
        from lm_eval.tasks import TaskManager

        lm = HFLM(pretrained=model, tokenizer=tokenizer, batch_size=cfg.eval_batch_size)
        tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
        tasks = [t.strip() for t in cfg.eval_tasks.split(",") if t.strip()]
        r = simple_evaluate(model=lm, tasks=tasks, task_manager=tm, limit=cfg.eval_limit or None,
                            apply_chat_template=True, gen_kwargs={"max_gen_toks": cfg.eval_max_gen_toks},
                            bootstrap_iters=0, log_samples=True)
        summary = {"tag": tag, "seconds": round(time.perf_counter() - t0, 1), "tasks": {}}
        for name, res in r["results"].items():
            summary["tasks"][name] = {k.split(",")[0]: jsonable(v) for k, v in res.items()
                                      if k.endswith(",none") and not k.startswith("alias")}
            summary["tasks"][name]["n"] = r["n-samples"].get(name, {}).get("effective")
        with open(out / f"{tag}.json", "w") as fh:
            json.dump({"summary": summary, "config": r.get("config", {}),
                       "samples": {k: [{"doc_id": s.get("doc_id"), "target": s.get("target"),
                                        "resps": s.get("filtered_resps"), "acc": s.get("acc")} for s in v]
                                   for k, v in r.get("samples", {}).items()}}, fh, indent=1, default=str)
    except Exception as e:  # noqa: BLE001 - recorded, see docstring
        summary = {"tag": tag, "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-2000:]}
        (out / f"{tag}.json").write_text(json.dumps(summary, indent=1))
        print(f"[r3bench] evaluation {tag} failed (recorded in {out / (tag + '.json')}): {summary['error']}",
              file=sys.stderr)
    finally:
        tokenizer.padding_side = side  # lm-eval sets its own; the trainer's collators expect theirs
        model.train(was_training)
    return summary
