"""A trainer's entry: `entry(Config, build)` gives a trainer module its `train(cfg)` and its CLI
`main`; `run_training` is the body of every `train` (refuse or resume checkpoints, build, record,
train, save); `main` parses, runs and exits 0 ok, 1 config/data error, 2 non-finite loss, 3 the
judge's budget spent."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Callable

from trainers import distributed, judging
from trainers.core import records
from trainers.core.data import sha256_file
from trainers.core.config import parse
from trainers.core.evaluation import lm_eval_args, no_eval_note
from trainers.core.memory import apply_mmap_threshold
from trainers.core.mixins import NOTHING_TO_LEARN_HINT
from trainers.errors import EXIT_JUDGE_BUDGET, ConfigError, NonFiniteLoss, TrainDataError
from verifiers.judge import JudgeBudgetExceeded


def check_init_adapter(cfg) -> None:
    """Fail early (before data export and model loads) when `init_adapter` names no adapter, with
    the command that makes one."""
    if not getattr(cfg, "init_adapter", ""):
        return
    p = Path(cfg.init_adapter)
    if not (p / "adapter_config.json").is_file():
        out = p.parent if p.name == "final" else p
        raise ConfigError(f"init_adapter {cfg.init_adapter!r} has no adapter_config.json; make the SFT adapter first: "
                          f"python -m trainers.sft --config trainers/configs/sft.yaml --output_dir {out}"
                          + ("" if p.name == "final" else " (it writes OUTPUT_DIR/final)"))


def save_final(trainer, tokenizer, cfg) -> Path:
    final = Path(cfg.output_dir) / "final"
    trainer.save_model(str(final))
    if trainer.is_world_process_zero():
        tokenizer.save_pretrained(str(final))
    return final


def run_training(cfg, build: Callable, **build_kw):
    """The body of every trainer's `train`: refuse/resume checkpoints, build, record, train, save.

    `build(cfg, **build_kw) -> (trainer, tokenizer, base_path, data_path or None)`.
    run.json (records.recorded, written whatever happens): "finished" with the result, or "interrupted"
    (with the error) when anything stops the run (exception or KeyboardInterrupt), "non_finite_loss" for
    that guard, "judge_budget_spent" when the LLM judge's budget ran out (judge_budget_stop: the judge's
    stats and a checkpoint to resume from). With `verifier: judge`, run.json's `judge` is the judge's stats().
    Returns (trainer, result dict for run.json)."""
    check_init_adapter(cfg)
    apply_mmap_threshold(cfg.malloc_mmap_threshold)
    ckpt = records.resume_checkpoint(cfg)
    trainer = None

    def more(status: str) -> dict:
        if status == "judge_budget_spent":
            return records.judge_budget_stop(trainer, cfg)
        return judging.run_record(cfg) if status == "interrupted" else {}

    with records.recorded(cfg, more=more) as run:
        resumed = records.resume_record(ckpt)  # now: training may rotate that checkpoint away
        trainer, tok, base, path = build(cfg, **build_kw)
        distributed.check_launch(getattr(trainer, "accelerator", None))  # FSDP / DeepSpeed asked, not applied
        sampling = trainer.r3_run_record() if hasattr(trainer, "r3_run_record") else {}  # RL: cap, start check
        if path is not None or sampling:
            data = {"data_file": str(path), "data_sha256": sha256_file(path)} if path is not None else {}
            records.write_run(cfg, status="running", **data, **sampling)
        if resumed is not None and resumed["state"] is not None and hasattr(trainer, "r3_load_state"):
            trainer.r3_load_state(resumed["state"])
        if resumed is not None and resumed["global_step"] >= cfg.max_steps:
            records.finish_from_last_checkpoint(trainer, ckpt)
            this_session = None  # no step run in this session
        else:
            this_session = trainer.train(resume_from_checkpoint=ckpt).training_loss
        final = save_final(trainer, tok, cfg)
        loss, how = records.whole_run_loss(trainer, resumed)
        result = {"adapter": str(final), "lm_eval_model_args": lm_eval_args(base, final, cfg.lora), "train_loss": loss,
                  "train_loss_covers": how, "train_loss_this_session": this_session,
                  "global_step": trainer.state.global_step}
        if ckpt is not None:
            result["resumed_from"] = Path(ckpt).name
        if hasattr(trainer, "r3_run_record"):  # stepfix, GRPO: the generation cap, truncated samples, start check
            result.update(trainer.r3_run_record())
        if hasattr(trainer, "r3_nothing_to_learn"):  # stepfix, GRPO: steps that could not move the policy
            result["nothing_to_learn_steps"] = trainer.r3_nothing_to_learn
            if trainer.r3_nothing_to_learn and trainer.is_world_process_zero():
                print(f"[r3bench] warning: {trainer.r3_nothing_to_learn} of {trainer.state.global_step} steps had "
                      f"nothing to learn (metrics.jsonl: nothing_to_learn); {NOTHING_TO_LEARN_HINT}",
                      file=sys.stderr, flush=True)
        if not cfg.eval_tasks.strip() and type(cfg).scored_by_lm_eval and trainer.is_world_process_zero():
            print(no_eval_note(cfg, base, final), file=sys.stderr, flush=True)
        result.update(judging.run_record(cfg))
        if trainer.is_world_process_zero():
            records.write_model_card(cfg, base, result)
        run.finished(result)
    return trainer, result


def main(cls, train_fn: Callable, argv=None, prog: str | None = None) -> int:
    """CLI entry: parse, run, record the outcome in run.json; exit 0 ok, 1 config/data error, 2 non-finite loss,
    3 the judge's budget spent (one line on stderr, no traceback).

    run.json's status is written whatever happens (records.recorded): finished, error (config/data),
    non_finite_loss, judge_budget_spent, or interrupted (any other exception, KeyboardInterrupt included;
    the error and traceback beside it)."""
    try:
        cfg = parse(cls, argv, prog=prog)
        check_init_adapter(cfg)
        records.resume_checkpoint(cfg)  # refuse to touch a finished run's record when --resume is missing
    except (ConfigError, TrainDataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    t0 = time.time()
    records.write_run(cfg, status="running", started=t0)
    together = False
    try:
        with records.recorded(cfg, clean=(ConfigError, TrainDataError)) as run:
            result = train_fn(cfg) or {}
            run.finished({"seconds": round(time.time() - t0, 1), **result})
        rc = 0
    except (ConfigError, TrainDataError) as e:
        rc = 1
        print(f"error: {e}", file=sys.stderr)
    except NonFiniteLoss as e:
        rc, together = 2, getattr(e, "raised_together", False)
        print(f"error: {e}", file=sys.stderr)
    except JudgeBudgetExceeded as e:
        # a planned stop, not a crash: one line, no traceback; run_training recorded the stats and the checkpoint
        rc, together = EXIT_JUDGE_BUDGET, getattr(e, "raised_together", False)
        print(f"stopped: {e}; the judge's stats and the checkpoint to resume from are in "
              f"{Path(cfg.output_dir) / 'run.json'}", file=sys.stderr)
    if together:
        # every rank stopped at the same point (distributed.raise_together / stop_together): none exits
        # before rank 0 has written run.json and the checkpoint - the launcher stops the other ranks as
        # soon as one exits, and rank 0, which writes, is the slowest (seen: rank 1 exited 3, torchrun
        # sent SIGTERM to rank 0 while it saved the checkpoint)
        distributed.barrier()
        _ignore_sigterm()
    if rc == 0:
        print(json.dumps({k: v for k, v in run.extra.items() if k != "eval"}, indent=1, default=str))
    return rc


def _ignore_sigterm() -> None:
    """After a stop that every rank shares, with the records written: the launcher's SIGTERM (sent to the
    other ranks as soon as the first one exits) is ignored, so that this process too ends with its own
    exit code rather than as killed (-15): its work is done, only the interpreter's teardown is left (a
    handler function would not do: Python resets those to the default at finalization; SIG_IGN it keeps).
    torchrun sends SIGKILL 30 s later to a process that is still there."""
    import signal

    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except ValueError:  # not the main thread: the launcher's signal ends the process as it would
        pass


def _prog(cls) -> str:
    """`python -m trainers.<name>` of a config class (also when its module runs as __main__)."""
    return f"python -m {records.module_name(cls)}"


def entry(cls, build: Callable, after: Callable | None = None) -> tuple[Callable, Callable]:
    """(train, main) of a trainer module from its Config class and `build`:

        train, main = entry.entry(Config, build)

    `train(cfg, extra_callbacks=(), **build_kw)` runs run_training(cfg, build, ...) and returns the
    result dict for run.json, passed through `after(cfg, trainer, result)` when given (psv saves its
    merged model there); `main(argv=None)` is the CLI (`main` below with prog `python -m trainers.X`)."""

    def train(cfg, extra_callbacks=(), **build_kw):
        trainer, result = run_training(cfg, build, extra_callbacks=extra_callbacks, **build_kw)
        return after(cfg, trainer, result) if after is not None else result

    def main_(argv=None) -> int:
        return main(cls, train, argv, prog=_prog(cls))

    train.__module__ = main_.__module__ = cls.__module__
    train.__doc__ = "Train `cfg` (run_training with this trainer's build); returns the result dict of run.json."
    main_.__name__ = main_.__qualname__ = "main"
    main_.__doc__ = ("The CLI: parse, train, record run.json; exit 0 ok, 1 config/data error, 2 non-finite loss, "
                     "3 the judge's budget spent.")
    return train, main_
