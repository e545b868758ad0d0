"""What the trainers need to run in several processes (torchrun, accelerate launch: DDP, FSDP, DeepSpeed).

Every helper is a no-op (or the one-process answer) when no process group exists, so a plain
`python -m trainers.X` on one device runs the same code:

* rank(), world_size(), is_main_process(): from the launcher's RANK / WORLD_SIZE variables, so they
  answer before the process group exists (data is prepared before the trainer creates it).
* file_lock(path): an exclusive lock on a file (fcntl), for work done once before the process group
  exists: the first process to take the lock exports the data (or computes the PSV's MC labels),
  the others wait on the lock and then read what it wrote (rank 1 no longer reads a half-written
  sft.jsonl, or fails with TrainDataError while rank 0 exports).
* gather_objects(obj): every rank's `obj`, in rank order, on every rank (all_gather_object), for
  statistics and samples collected on rank 0.
* sum_across(x): a float summed over the ranks (the stepfix loss's global number of kept problems).
* stop_together(value, what): raise on every rank when `value` is non-finite on any, naming the rank.
* raise_together(error): raise on every rank when `error` (an exception caught on this rank, or None)
  is set on any, of the first failing rank's type and naming the ranks (the judge's budget spent on
  one rank stops all: JudgeBudgetExceeded on every rank).
* unwrap(model): the module inside DDP / FSDP / DeepSpeed wrappers (`.module` until there is none).
* sharded(accelerator): whether parameters are sharded (FSDP, ZeRO-3), i.e. whether every forward
  and every generation step is a collective that every rank must run.
* check_launch(accelerator): ConfigError when the launcher asked for FSDP or DeepSpeed and accelerate
  did not apply it (accelerate 1.16 drops both, silently, when the processes run on the CPU: the run
  would be plain DDP, every weight whole on every rank).
* generation_seed(seed, step, rank, call): the seed of one generation call: different on every rank
  (HF's Trainer seeds every rank alike, so ranks sampled from the same random stream), the same on
  a rerun.
"""
from __future__ import annotations

import math
import os
from contextlib import contextmanager
from pathlib import Path

from trainers.errors import ConfigError, NonFiniteLoss


def rank() -> int:
    return int(os.environ.get("RANK", "0"))


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def is_main_process() -> bool:
    return rank() == 0


def _dist():
    """torch.distributed when a process group with more than one rank exists, else None."""
    try:
        import torch.distributed as dist
    except ImportError:  # pragma: no cover - torch is a training dependency
        return None
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist
    return None


@contextmanager
def file_lock(path: str | os.PathLike):
    """An exclusive lock on `path` (created) for the duration of the block; blocks until it is free.

    Unlike a barrier it needs no process group, and unlike a sleep-and-poll loop it wakes the moment
    the holder is done. On platforms without fcntl (Windows) the block runs unlocked."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: one process per machine there
        yield
        return
    with open(p, "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def barrier() -> None:
    d = _dist()
    if d is not None:
        d.barrier()


def gather_objects(obj) -> list:
    """[obj of rank 0, obj of rank 1, ...] on every rank ([obj] in one process)."""
    d = _dist()
    if d is None:
        return [obj]
    out = [None] * d.get_world_size()
    d.all_gather_object(out, obj)
    return out


def sum_across(x: float) -> float:
    """`x` summed over the ranks (x in one process)."""
    return float(sum(gather_objects(float(x))))


def stop_together(value: float, what: str) -> list[float]:
    """Every rank's `value` (rank order); NonFiniteLoss on EVERY rank when it is NaN/inf on ANY rank,
    naming the ranks: a rank that raised alone left the others waiting in the next collective (gloo: a
    timeout after 30 min; NCCL: a hang)."""
    vals = gather_objects(float(value))
    bad = [(r, v) for r, v in enumerate(vals) if not math.isfinite(v)]
    if bad:
        where = ", ".join(f"rank {r}: {v}" for r, v in bad) if len(vals) > 1 else str(bad[0][1])
        exc = NonFiniteLoss(f"{what} is non-finite ({where}); every rank stopped before the optimizer step; "
                            "the last checkpoint in output_dir is intact")
        exc.raised_together = len(vals) > 1
        raise exc
    return vals


def raise_together(error: BaseException | None) -> None:
    """A collective: every rank passes the exception it caught since the last call (None: none); when
    any rank has one, EVERY rank raises an exception of the first failing rank's type, with its message
    and the ranks that failed, marked `raised_together` (trainers.core.entry.main then holds every rank until rank 0 has
    written run.json and the checkpoint). A rank that raised alone left the others waiting in their next collective
    (gloo: a timeout after 30 min; NCCL: a hang). In one process `error` itself is raised."""
    d = _dist()
    if d is None:
        if error is not None:
            raise error
        return
    every = gather_objects(None if error is None else (type(error), str(error)))
    bad = [(r, e) for r, e in enumerate(every) if e is not None]
    if not bad:
        return
    r0, (cls, msg) = bad[0]
    ranks = ", ".join(str(r) for r, _ in bad)
    text = f"{msg} (on rank {ranks} of {len(every)}; every rank stopped)"
    try:
        exc = cls(text)
    except Exception:  # noqa: BLE001 - an exception type whose constructor takes other arguments
        exc = RuntimeError(f"{cls.__name__}: {text}")
    exc.raised_together = True  # trainers.core.entry.main: every rank waits for rank 0's records before it exits
    raise exc


def unwrap(model):
    """The model inside DDP / FSDP(1) / DeepSpeed engine wrappers (their `.module`)."""
    seen = 0
    while type(model).__name__ in ("DistributedDataParallel", "FullyShardedDataParallel", "DeepSpeedEngine",
                                   "DataParallel") and hasattr(model, "module") and seen < 8:
        model, seen = model.module, seen + 1
    return model


def sharded(accelerator) -> bool:
    """True under FSDP or DeepSpeed ZeRO-3: parameters live in shards, every forward gathers them."""
    if accelerator is None:
        return False
    st = accelerator.state
    if getattr(st, "fsdp_plugin", None) is not None:
        return True
    ds = getattr(st, "deepspeed_plugin", None)
    return ds is not None and getattr(ds, "zero_stage", 0) == 3


def generation_seed(seed: int, step: int, rank_: int, call: int = 0) -> int:
    """The seed of one generation call: a function of the run's seed, the optimizer step, the rank and
    the call within the step (y1, y2, ...), so every rank samples its own stream and a rerun samples
    the same one. Kept below 2**31 (vLLM and numpy take 32-bit seeds)."""
    return (seed * 1_000_003 + step * 10_007 + rank_ * 101 + call) % (2 ** 31 - 1)


def check_launch(accelerator) -> None:
    """ConfigError when `accelerate launch` asked for FSDP or DeepSpeed (ACCELERATE_USE_FSDP /
    ACCELERATE_USE_DEEPSPEED, set by its launcher from the config file) and the accelerator does not run it.

    accelerate 1.16's AcceleratorState applies the FSDP plugin only when its device state is MULTI_GPU
    (or another accelerator: NPU, XPU, ...), and DeepSpeed only `not cpu`; on a machine without CUDA the
    trainers set `use_cpu`, the state is MULTI_CPU (gloo) and both are dropped without a word: the run
    trains as DDP with whole weights on every rank (seen on rank 0: LlamaForCausalLM with plain Parameters under
    fsdp.yaml). torch's fully_shard itself runs on gloo (a bare FSDP2 model trains on two CPU processes);
    the gap is accelerate's routing, so the CPU cannot test FSDP or ZeRO through the trainers."""
    if accelerator is None:
        return
    got = str(accelerator.distributed_type).split(".")[-1]
    for var, want in (("ACCELERATE_USE_FSDP", "FSDP"), ("ACCELERATE_USE_DEEPSPEED", "DEEPSPEED")):
        if os.environ.get(var, "false").lower() == "true" and got != want:
            raise ConfigError(
                f"the accelerate config asks for {want} but accelerate runs {got} on {accelerator.device}: "
                f"accelerate applies {want} only on GPUs (and other accelerators), not to CPU processes "
                f"(without CUDA the trainers train on the CPU); the run would be plain DDP with every weight whole "
                f"on every rank. On a CPU use trainers/configs/accelerate/multi_cpu.yaml")
