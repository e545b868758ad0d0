"""The run's record and its resume: OUTPUT_DIR/run.json (`write_run`; the status a run ends with,
decided once by `status_of` and written by `recorded`), the checkpoint to resume from (intact ones
only; half-written ones moved aside), what a resumed run carries over (`resume_record`,
`whole_run_loss`), the model card, and the stop of a run whose judge budget ran out."""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import platform
import subprocess
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path

from trainers import distributed, judging
from trainers.core import upstream
from trainers.core.evaluation import score_command
from trainers.core.memory import peak_rss_gb
from trainers.core.mixins import STATE_FILE
from trainers.core.model import cuda_available
from trainers.errors import ConfigError, NonFiniteLoss
from verifiers.judge import JudgeBudgetExceeded
from verifiers.sandbox import isolation_level


def _git_commit() -> str | None:
    try:
        here = Path(__file__).resolve().parent
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True,
                              timeout=10).stdout.strip() or None
    except Exception:  # noqa: BLE001
        return None


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("r3bench", "torch", "transformers", "peft", "trl", "accelerate", "lm_eval", "datasets"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def trainer_name(cfg) -> str:
    """The trainer's module name ("sft", "stepfix", ...), also under `python -m trainers.sft`, where the
    config class lives in `__main__`."""
    return module_name(type(cfg)).rsplit(".", 1)[-1]


def module_name(cls) -> str:
    """The module of `cls` by its import name, also when it runs as __main__ (python -m)."""
    mod = cls.__module__
    if mod == "__main__":
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        mod = spec.name if spec is not None else mod
    return mod


def sandbox_isolation() -> str:
    """verifiers.sandbox.isolation_level(): how model-written code (CE feedback, pde reward) was
    isolated in this run; a failure to tell is recorded as such."""
    try:
        return isolation_level()
    except Exception as e:  # noqa: BLE001 - a record field, never a reason to stop a run
        return f"unknown ({type(e).__name__}: {str(e)[:200]})"


def write_run(cfg, **extra) -> Path:
    out = Path(cfg.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "run.json"
    rec = json.loads(path.read_text()) if path.is_file() else {}
    rec.update({"trainer": trainer_name(cfg), "config": dataclasses.asdict(cfg),
                "git_commit": _git_commit(), "versions": versions(),
                "hardware": {"cuda": cuda_available(), "platform": platform.platform(), "cpus": os.cpu_count()},
                "sandbox_isolation": sandbox_isolation(), "peak_rss_gb": peak_rss_gb()})
    if "status" in extra:  # an error of an earlier attempt does not describe this one
        for k in ("error", "traceback"):
            rec.pop(k, None)
    rec.update(extra)
    if distributed.is_main_process():
        tmp = path.with_suffix(".json.partial")
        tmp.write_text(json.dumps(rec, indent=1, default=str))
        tmp.replace(path)
    elif extra.get("status") not in (None, "running", "finished"):
        # another rank's failure: its own file (run.json is rank 0's), so the reason is not lost when the
        # launcher stops rank 0 because this rank died
        rank_path = out / f"run.rank{distributed.rank()}.json"
        rank_path.write_text(json.dumps({"rank": distributed.rank(), **{k: rec.get(k) for k in
                                         ("status", "error", "traceback")}}, indent=1, default=str))
    return path


def status_of(e: BaseException, clean: tuple = ()) -> tuple[str, dict]:
    """(run.json status, fields beside it) of a run that `e` stopped; the one place that decides it.

    `clean`: the exception types that end a run with status "error" and their message only (the CLI's
    config and data errors); non_finite_loss and judge_budget_spent with the message; anything else
    "interrupted" with the error and its traceback (a KeyboardInterrupt: how to resume)."""
    if clean and isinstance(e, clean):
        return "error", {"error": str(e)}
    if isinstance(e, NonFiniteLoss):
        return "non_finite_loss", {"error": str(e)}
    if isinstance(e, JudgeBudgetExceeded):
        return "judge_budget_spent", {"error": str(e)}
    if isinstance(e, KeyboardInterrupt):
        return "interrupted", {"error": "KeyboardInterrupt; resume with --resume"}
    return "interrupted", {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]}


class RunStatus:
    """How a run ended, as `recorded` writes it: "interrupted" until `finished(fields)` is called."""

    def __init__(self):
        self.status, self.extra = "interrupted", {}

    def finished(self, extra: dict) -> None:
        self.status, self.extra = "finished", extra


@contextmanager
def recorded(cfg, clean: tuple = (), more=None):
    """Run the body, then write run.json's status whatever happened (status_of for an exception, which
    passes on). `more(status) -> dict` adds fields at the end (a trainer's judge stats, say).

        with records.recorded(cfg) as run:
            run.finished(train(cfg))"""
    run = RunStatus()
    try:
        yield run
    except BaseException as e:
        run.status, run.extra = status_of(e, clean)
        raise
    finally:
        if more is not None:
            run.extra.update(more(run.status))
        write_run(cfg, status=run.status, **run.extra)


def checkpoint_problems(path: Path) -> list[str]:
    """Why the checkpoint folder `path` cannot be resumed from ([] = intact).

    A checkpoint half-written by a run killed while saving has missing or truncated files. Checked
    without loading any tensor: trainer_state.json parses and names this step; optimizer.pt and
    scheduler.pt exist; every *.json parses; every *.safetensors has a readable header whose tensors
    fit the file's size; every torch file (*.pt, *.pth, *.bin) is a complete zip archive whose CRCs
    match."""
    import zipfile

    path = Path(path)
    problems = []
    try:
        state = json.loads((path / "trainer_state.json").read_text())
        step = int(path.name.rsplit("-", 1)[-1])
        if state.get("global_step") != step:
            problems.append(f"trainer_state.json says step {state.get('global_step')}, folder {path.name}")
    except (OSError, ValueError) as e:
        problems.append(f"trainer_state.json unreadable ({type(e).__name__})")
    for need in ("optimizer.pt", "scheduler.pt"):
        if not (path / need).is_file():
            problems.append(f"{need} missing")
    if not any(path.glob("*.safetensors")) and not any(path.glob("*.bin")):
        problems.append("no weights file")
    for f in sorted(path.iterdir()) if path.is_dir() else []:
        if not f.is_file() or f.name == "trainer_state.json":
            continue
        try:
            if f.suffix == ".json":
                json.loads(f.read_text())
            elif f.suffix == ".safetensors":
                with open(f, "rb") as fh:
                    n = int.from_bytes(fh.read(8), "little")
                    if not 2 <= n <= 100_000_000:
                        raise ValueError("bad header length")
                    header = json.loads(fh.read(n))
                end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
                if f.stat().st_size < 8 + n + end:
                    raise ValueError("truncated")
            elif f.suffix in (".pt", ".pth", ".bin"):
                with zipfile.ZipFile(f) as z:
                    if z.testzip() is not None:
                        raise ValueError("CRC mismatch")
        except (OSError, ValueError, KeyError, TypeError, IndexError, zipfile.BadZipFile) as e:
            problems.append(f"{f.name}: {type(e).__name__}: {str(e)[:80]}")
    return problems


def checkpoints(out: Path) -> list[Path]:
    import re

    found = [p for p in out.glob("checkpoint-*") if p.is_dir() and re.fullmatch(r"checkpoint-\d+", p.name)]
    return sorted(found, key=lambda p: int(p.name.split("-")[1]))


def resume_checkpoint(cfg, log=None) -> str | None:
    """The checkpoint to resume from: None without `resume`; else the newest *intact* one.

    Newer checkpoints that are half-written (checkpoint_problems) are renamed to broken-checkpoint-N
    (kept for inspection, out of HF's checkpoint rotation and of later resumes) and reported through
    `log` (default: the logging module) and in run.json (`skipped_checkpoints`)."""
    out = Path(cfg.output_dir)
    ckpts = checkpoints(out) if out.is_dir() else []
    if not cfg.resume:
        if ckpts:
            raise ConfigError(f"{cfg.output_dir} already holds checkpoints: pass --resume to continue, "
                              "or choose another output_dir")
        return None
    if not ckpts:
        raise ConfigError(f"--resume: no checkpoint-* folder in {cfg.output_dir}")
    with distributed.file_lock(out / ".resume.lock"):  # rank 0 may be moving half-written ones aside
        return _pick_checkpoint(cfg, out, checkpoints(out), log)


def _pick_checkpoint(cfg, out: Path, ckpts: list[Path], log=None) -> str:
    """resume_checkpoint's choice; only the main process renames (every rank skips the same ones)."""
    skipped = []
    for ck in reversed(ckpts):
        problems = checkpoint_problems(ck)
        if not problems:
            if skipped:
                msg = (f"resuming from {ck.name}, the newest intact checkpoint; skipped (half-written): "
                       + "; ".join(f"{s['checkpoint']} ({', '.join(s['problems'])}) -> {s['moved_to']}" for s in skipped))
                (log or logging.getLogger("r3bench.trainers").warning)(msg)
                write_run(cfg, skipped_checkpoints=skipped, resumed_from=ck.name)
            return str(ck)
        dest = out / f"broken-{ck.name}"
        i = 1
        while dest.exists():
            dest, i = out / f"broken-{ck.name}.{i}", i + 1
        if not distributed.is_main_process():
            skipped.append({"checkpoint": ck.name, "problems": problems[:5], "moved_to": dest.name})
            continue
        ck.rename(dest)
        skipped.append({"checkpoint": ck.name, "problems": problems[:5], "moved_to": dest.name})
    raise ConfigError(f"--resume: no intact checkpoint in {cfg.output_dir}; half-written ones moved aside: "
                      + ", ".join(s["moved_to"] for s in skipped))


def resume_record(ckpt: str | None) -> dict | None:
    """What the end of a resumed run needs from the checkpoint it resumed from, read before training:
    with save_total_limit, HF's checkpoint rotation deletes that checkpoint once newer ones are saved
    (a run resumed from checkpoint-3 that saves 6, 9 and 12 keeps only 9 and 12), and reading it after
    train() crashed a finished run at its last line. None for a fresh run."""
    if ckpt is None:
        return None
    p = Path(ckpt)
    state = json.loads((p / STATE_FILE).read_text()) if (p / STATE_FILE).is_file() else None
    ts = json.loads((p / "trainer_state.json").read_text())
    # log_history stands in for the loss sum in a checkpoint of an older r3bench (no state file)
    return {"state": state, "log_history": ts.get("log_history", []), "global_step": int(ts.get("global_step", 0))}


def finish_from_last_checkpoint(trainer, ckpt: str) -> None:
    """A run that died after saving its checkpoint at max_steps (while saving final/, say): load that
    checkpoint's weights and state instead of calling train(). HF's loop, resumed at max_steps, takes
    one more optimizer step before it checks max_steps (the study's GRPO outcome seed 0, resumed from
    checkpoint-12 of 12, came back at step 13)."""
    from transformers import TrainerState

    upstream.load_checkpoint(trainer, ckpt)  # what train(resume_from_checkpoint=...) loads first
    trainer.state = TrainerState.load_from_json(str(Path(ckpt) / "trainer_state.json"))
    # a session with no step: its callbacks begin and end (the lm-eval of the final adapter runs at the end;
    # HF's progress bar is opened at the beginning)
    cb = trainer.callback_handler
    trainer.control = cb.on_train_begin(trainer.args, trainer.state, trainer.control)
    trainer.control = cb.on_train_end(trainer.args, trainer.state, trainer.control)


def whole_run_loss(trainer, resumed: dict | None) -> tuple[float, str]:
    """(mean training loss over every step of the run, how it was obtained) after trainer.train().

    `resumed`: resume_record of the checkpoint the run resumed from (None: a fresh run). A resumed
    run adds the loss sum saved in that checkpoint (r3bench_state.json, restored into the trainer
    before training); a checkpoint without that file (written by an older r3bench) falls back to its
    log_history (logged interval means x interval lengths: exact when logging_steps divides save_steps)."""
    steps = max(trainer.state.global_step, 1)
    total = getattr(trainer, "r3_loss_sum", None)
    if total is None:
        return float("nan"), "trainer keeps no loss sum"
    if resumed is None or resumed["state"] is not None:
        return total / steps, "whole run"
    prev, before = 0, 0.0
    for h in resumed["log_history"]:
        if "loss" in h and h.get("step", 0) > prev:
            before += float(h["loss"]) * (h["step"] - prev)
            prev = h["step"]
    return (before + total) / steps, f"whole run; steps 1-{prev} from the checkpoint's log_history"


def write_model_card(cfg, base: str, result: dict) -> Path:
    """OUTPUT_DIR/README.md: what the run is, in place of the card transformers / TRL write there
    ("fine-tuned version of [None]"): trainer, base model, data, steps, loss, and the command that scores it."""
    out = Path(cfg.output_dir)
    name = trainer_name(cfg)
    data = getattr(cfg, "data", "") or "the procgen export made for the run (see run.json: data_file)"
    lines = [f"# {out.name}: r3bench `trainers.{name}` run", "",
             f"- base model: `{base}`" + (f" (start adapter `{cfg.init_adapter}`)" if getattr(cfg, "init_adapter", "")
                                           else ""),
             f"- method: {name}, {'LoRA r=' + str(cfg.lora_r) if cfg.lora else 'full fine-tuning'}, "
             f"{result.get('global_step')} optimizer steps of batch {cfg.batch_size} x accumulation {cfg.grad_accum}, "
             f"learning rate {cfg.learning_rate}",
             f"- data: {data}",
             f"- training loss: {result.get('train_loss')} ({result.get('train_loss_covers')})",
             f"- the model: `{result.get('adapter')}`; run record: `run.json`; step log: `metrics.jsonl`", "",
             "Score it (lm-eval with r3bench's tasks; on a CPU keep a limit):", "", "```bash",
             score_command(cfg, result.get("lm_eval_model_args")),
             "```", ""]
    path = out / "README.md"
    path.write_text("\n".join(lines))
    return path


def judge_budget_stop(trainer, cfg) -> dict:
    """What run.json says of a run that the judge's budget stopped: the judge's stats, the step reached
    and the checkpoint to resume from - the one of that step, saved now unless it exists (the step in
    progress is dropped: its optimizer update never happened, and a resume runs it again)."""
    rec = judging.run_record(cfg)
    if trainer is None:
        return rec
    step, out = trainer.state.global_step, Path(cfg.output_dir)
    # every rank stopped here together (distributed.raise_together) and saves together (each rank's RNG
    # state; FSDP / ZeRO gather): rank 0's look decides for all, taken before any rank starts writing
    exists = distributed.gather_objects((out / f"checkpoint-{step}").is_dir())[0]
    if step > 0 and not exists:
        try:
            upstream.save_checkpoint(trainer)
        except Exception as e:  # noqa: BLE001 - recorded; the newest earlier checkpoint is named instead
            rec["checkpoint_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    found = checkpoints(out)
    rec.update(global_step=step, checkpoint=found[-1].name if found else None,
               resume="raise the judge budget (judge_max_cost_usd / judge_max_tokens) and run again with --resume")
    return rec
