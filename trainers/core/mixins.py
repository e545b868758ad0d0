"""What r3bench adds to an HF/TRL Trainer class: `GuardMixin` (a non-finite loss stops the run before
the optimizer step; the whole run's loss sum and a trainer's own state saved beside every checkpoint,
through the public on_save callback), `guarded` (a Trainer class with it), `TimingMixin` (seconds per
phase of a step), and the first-hour helpers of stepfix and GRPO (`nothing_to_learn`, `PhaseProgress`)."""
from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import ClassVar

from trainers import distributed


STATE_FILE = "r3bench_state.json"


class GuardMixin:
    """Put first in the bases of a Trainer: a non-finite loss raises NonFiniteLoss before the
    optimizer step (so no NaN reaches the weights or a checkpoint).

    It also keeps the sum of the training losses of the whole run (HF's `train_loss` after a resume
    covers only the resumed part) and writes it, with `r3_state()` (a trainer's own running
    statistics), into every checkpoint as r3bench_state.json (from the on_save callback it adds: public
    hooks only); `r3_load_state` restores both."""

    r3_loss_sum = 0.0

    def training_step(self, model, inputs, num_items_in_batch=None):
        loss = super().training_step(model, inputs, num_items_in_batch)
        val = float(loss.detach().float().item()) if hasattr(loss, "detach") else float(loss)
        # every rank learns of a non-finite loss on any rank and stops with the reason (one rank raising
        # alone left the others waiting in the next collective)
        every = distributed.stop_together(val, f"loss at step {self.state.global_step + 1}")
        # what HF adds to its tr_loss (already scaled for accumulation), averaged over the ranks as HF's
        # logged loss is: the same whole-run loss on every rank
        self.r3_loss_sum += sum(every) / len(every)
        return loss

    def log(self, logs, start_time=None):
        # the gradient norm HF logs is the one before clipping (Trainer._clip_grad_norm returns
        # clip_grad_norm_'s total norm); `grad_clipped` says whether clipping changed this step's update
        limit = getattr(self.args, "max_grad_norm", None)
        if "loss" in logs and logs.get("grad_norm") is not None and limit:
            logs["grad_clipped"] = int(float(logs["grad_norm"]) > limit)
        super().log(logs, *([start_time] if start_time is not None else []))

    def r3_state(self) -> dict:
        return {}

    def r3_load_state(self, state: dict) -> None:
        self.r3_loss_sum = float(state.get("loss_sum", 0.0))

    def r3_state_gathered(self) -> dict:
        """Run state that needs every rank's counts (gathered: called on every rank at each save), merged
        over r3_state() in the checkpoint's state file."""
        return {}

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.add_callback(_state_saver(self))

    def r3_save_state(self, output_dir: str) -> None:
        """r3bench_state.json into the checkpoint of this step (main process; the callback's on_save,
        right after the Trainer saved that checkpoint and rotated the older ones away)."""
        gathered = self.r3_state_gathered()  # on every rank (every rank reaches on_save): may run a collective
        if self.is_world_process_zero():
            ck = Path(output_dir) / f"checkpoint-{self.state.global_step}"
            if ck.is_dir():
                rec = {"global_step": self.state.global_step, "loss_sum": self.r3_loss_sum, **self.r3_state(),
                       **gathered}
                (ck / STATE_FILE).write_text(json.dumps(rec))


def _state_saver(trainer):
    """The TrainerCallback whose on_save writes `trainer`'s run state beside each checkpoint."""
    from transformers import TrainerCallback

    class SaveRunState(TrainerCallback):
        def on_save(self, args, state, control, **kw):
            trainer.r3_save_state(args.output_dir)

    return SaveRunState()


@cache
def guarded(base, *mixins):
    """`base` (an HF/TRL Trainer class) with GuardMixin, after `mixins` (e.g. TimingMixin) in the MRO:
    the Trainer class of a trainer whose only change to `base` is the guard (one class per bases)."""
    return type(f"Guarded{base.__name__}", (*mixins, GuardMixin, base), {"__module__": __name__})


class TimingMixin:
    """Seconds per phase of the training steps (stepfix, GRPO); put it before GuardMixin in the bases.

    `r3_phases` names the phases in log order; the last one gets the rest of each `training_step`:
    its seconds not counted in the other phases (stepfix: backward; GRPO: rest). A phase is timed by
    adding to `self.r3_times[phase]` (a dict that may be shared with helpers, such as GRPO's reward
    wrappers: pass it as `r3_times=`) or with `with self.timed(phase):`. Every training log (one with
    a loss) gets time_<phase>_s and share_<phase> (its share of the phases' total; with
    `r3_log_step_time`, also time_step_s, the whole training_step), and the times restart."""

    r3_phases: ClassVar[tuple[str, ...]] = ()
    r3_log_step_time: ClassVar[bool] = False

    def __init__(self, *a, r3_times: defaultdict | None = None, **kw):
        self.r3_times = r3_times if r3_times is not None else defaultdict(float)
        super().__init__(*a, **kw)

    @contextmanager
    def timed(self, phase: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.r3_times[phase] += time.perf_counter() - t0

    def training_step(self, model, inputs, num_items_in_batch=None):
        *inner, rest = self.r3_phases
        t0 = time.perf_counter()
        before = sum(self.r3_times[k] for k in inner)
        try:
            return super().training_step(model, inputs, num_items_in_batch)
        finally:
            dt = time.perf_counter() - t0
            self.r3_times[rest] += dt - (sum(self.r3_times[k] for k in inner) - before)
            self.r3_times["step"] += dt

    def timing_logs(self) -> dict:
        """time_<phase>_s and share_<phase> of the times since the last training log."""
        t = self.r3_times
        logs = {"time_step_s": t["step"]} if self.r3_log_step_time else {}
        tot = sum(t[k] for k in self.r3_phases)
        logs.update({f"time_{k}_s": t[k] for k in self.r3_phases})
        if tot:
            logs.update({f"share_{k}": t[k] / tot for k in self.r3_phases})
        return logs

    def log(self, logs, start_time=None):
        if "loss" in logs:  # a training log (not the end-of-train summary)
            logs.update(self.timing_logs())
            self.r3_times.clear()
        super().log(logs, *([start_time] if start_time is not None else []))


NOTHING_TO_LEARN_HINT = ("the adapter cannot change this way: train the SFT start longer (a larger max_steps "
                         "in trainers/configs/sft.yaml) until its samples pass the seven-tag format and "
                         "differ in reward")


def nothing_to_learn(n: int, format_failures: int, rewards: list) -> str | None:
    """Why a training step of n samples gives the policy nothing to learn, or None.

    Every sample failed the seven-tag format (its reward is the minimum), no sample reached the loss,
    or every sample that did earned the same reward (no advantage: the loss is ~0)."""
    if not n:
        return None
    if format_failures >= n:
        return f"all {n} samples failed the seven-tag format (reward 0)"
    if not rewards:
        return f"no sample of {n} reached the loss"
    if max(rewards) == min(rewards):
        return f"every sample earned the same reward ({rewards[0]:.3f})"
    return None


def warn_nothing_to_learn(step: int, why: str) -> None:
    print(f"[r3bench] warning: step {step} had nothing to learn: {why}; {NOTHING_TO_LEARN_HINT}",
          file=sys.stderr, flush=True)


class PhaseProgress:
    """One stderr line per phase of a training step (generation, verification, update), for the first
    step and for every step after one that took longer than `long_s` seconds: a step of many minutes
    (18 on a loaded CPU) is not a silent 0/1 progress bar."""

    def __init__(self, long_s: float = 60.0, out=None, clock=time.perf_counter):
        self.long_s, self.out, self.clock = long_s, out, clock
        self.step, self.t0, self.last, self.on = 0, 0.0, None, False

    def begin_step(self, step: int) -> None:
        self.step, self.t0 = step, self.clock()
        self.on = self.last is None or self.last > self.long_s

    def phase(self, what: str) -> None:
        if self.on:
            print(f"[r3bench] step {self.step}: {what} ({self.clock() - self.t0:.0f} s into the step)",
                  file=self.out or sys.stderr, flush=True)

    def end_step(self) -> None:
        self.last = self.clock() - self.t0
