"""The learning study of issue 21: does step-level reward RL beat its controls on procgen tiers?

    python studies/learning_study.py --plan              # the cells, which are done, estimated CPU time
    python studies/learning_study.py                     # run (or continue) the study into results/learning
    python studies/learning_study.py --max_cells 3       # run three pending cells, then stop (in pieces)
    python studies/learning_study.py --summarise         # tables and plots from the finished cells only
    python studies/learning_study.py --tiny --out DIR    # the whole pipeline on a tiny random model (minutes)
    python studies/learning_study.py --design mixture    # issue 35's study: the mixture's learning set
                                                            # (results/learning/mixture; GPU: studies/gpu_cells.py)

Conditions, all from one SFT start (docs/learning_study.md gives the budget and why):
  base_cot, base_seventag   the base model with the CoT / the seven-tag prompt (no training)
  sft                       the SFT start: LoRA SFT on the train splits of tiers 1-2
  sft_cont                  SFT continued from the start for the same steps x problems as stepfix (the
                            control the paper lacks)
  dpo_ipo                   DPO with the IPO loss (trainers.dpo) from the start
  stepfix                   the paper's loss (trainers.stepfix)
  stepfix_baseline          stepfix with a baseline in the advantage (STEPFIX_BASELINE, issue 21 item 7)
  grpo_outcome, grpo_position   GRPO (trainers.grpo) with the outcome / the position reward
  stepco, bestofn           StepCo and Best-of-N (r3bench.eval.strategies) on the SFT model, symbolic
                            verifier, at equal generated tokens (Best-of-N n = 1 + StepCo rounds)
Trained conditions run with 3 seeds (budget.seeds).

Cells: a cell is one training run (condition x seed) or one evaluation (condition x seed x tier).
Each cell writes OUT/cells/<cell>.json atomically when it finishes (status done, or crashed with the
error) and is skipped when already done; a cell found "running" was interrupted (the process died)
and is recorded as crashed; crashed cells are retried on the next run, a training cell resuming
from its newest checkpoint. Training goes through the trainers' public entry point
(`python -m trainers.<name> --config FILE`, one process per cell); evaluation through lm-eval
(r3_procgen_t<k> / r3_procgen_t<k>_cot, greedy, chat template), in this process.

Metrics per evaluation cell, each with a 95% percentile bootstrap CI over problems (seeded):
accuracy (the task's own checker), mean step reward (position reward e/(n+1) of the symbolic
verifier's first error, 1 for none: verifiers.rewards.position_reward, the reward stepfix trains
on), format compliance (the task's own), and first-error class shares MC / CM / CE / FORMAT among
the solutions with an error (FORMAT: fewer than the seven tags). Seeds of a trained condition
score disjoint blocks of the test problems; rows with seed "all" pool them (the same n_eval problems
as the SFT start), rows with seed "spread" give the standard deviation over seeds (value) and the
lowest / highest seed (ci_low / ci_high), n = number of seeds.
Outputs: OUT/summary.csv (condition, seed, tier, metric, value, ci_low, ci_high, n), OUT/summary.md,
OUT/accuracy.png (accuracy with CIs by condition), OUT/learning_curves.png (training loss by step).
"""
from __future__ import annotations

import argparse
import csv
import gc
import json
import logging
import math
import os
import random
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = logging.getLogger("learning_study")
CLASSES = ("MC", "CM", "CE", "FORMAT")
METRICS = ("acc", "step_reward", "format_compliance") + tuple(f"share_{c}" for c in CLASSES)
# the option stepfix's Config must have for the baseline condition (issue 21 item 7)
STEPFIX_BASELINE = {"baseline": "r1"}


# the training samples a trainer writes into its run folder (Study.save_train_samples), and the size past
# which their copy in the study folder is gzip-compressed (a stepfix run of 12 steps x 4 problems: ~0.3 MB)
TRAIN_SAMPLE_FILES = ("stepfix_samples.jsonl", "grpo_samples.jsonl")
TRAIN_SAMPLES_GZIP_BYTES = 1 << 20


# ------------------------------------------------------------------------------------- design

@dataclass(frozen=True)
class Condition:
    name: str
    kind: str  # base | sft | trained | strategy | full
    trainer: str = ""  # trainers.<trainer>
    prompt: str = "structured"  # structured | cot
    overrides: dict = field(default_factory=dict)
    strategy: str = ""  # stepco | bestofn


@dataclass(frozen=True)
class Budget:
    """Everything that sizes the study; FULL is the plan of docs/learning_study.md, TINY the test."""
    model: str = "r3bench/smollm2-135m-instruct"
    seeds: tuple = (0, 1, 2)
    train_tiers: tuple = (1, 2)
    n_export: int = 1500  # problems per tier export (train split ~900 of them)
    n_sft: int = 300  # SFT examples per train tier (short tier-1/2 renderings)
    sft: dict = field(default_factory=lambda: dict(
        lora_r=16, lora_alpha=32, learning_rate=3e-4, lr_scheduler="cosine", warmup_steps=10, batch_size=8,
        epochs=3, max_length=512))
    rl_steps: int = 12  # stepfix / GRPO / DPO / SFT-continued optimizer steps
    rl_batch: int = 4  # problems per step (the same for every condition from the start)
    group_size: int = 4  # GRPO completions per problem
    gen_tokens: int = 256  # max new tokens of RL samples (tier-1/2 references: 144-210 tokens)
    rl_lr: float = 5e-5
    eval_tiers: dict = field(default_factory=lambda: {  # condition kind -> tiers evaluated
        "base": (1, 2), "sft": (1, 2, 3), "trained": (1,), "strategy": (1,)})
    # problems per tier and condition (n_for_difference(0.3, 0.4) = 356: a 10-point difference); a
    # trained condition's seeds each take a disjoint block of ceil(n_eval / seeds) of them (the last one
    # shorter: 119 + 119 + 118), so the condition (seeds pooled) is scored on the same n_eval problems as
    # the SFT start, and each seed can be compared with the SFT start on its own block (paired rows)
    n_eval: int = 356
    n_eval_base: int = 120  # the base model scores ~0 on procgen (studies/results/curriculum)
    eval_tokens: dict = field(default_factory=lambda: {1: 256, 2: 256, 3: 512})
    eval_batch: int = 32  # measured here: decode ~125 tok/s at 32 sequences vs ~56 at 8 (docs/learning_study.md, Scoring)
    strategy_rounds: int = 3  # StepCo revisions; Best-of-N n = 1 + rounds (equal generated tokens)
    n_eval_strategy: int = 120
    # the base model and the best adapter on two whole real benchmarks, seven-tag prompt, the tasks'
    # own generation settings (greedy, max_gen_toks 768)
    full_tasks: tuple = ("r3_mmlu_college_structured", "r3_jeebench_structured")
    bootstrap: int = 2000
    verifier: str = "symbolic"
    threads: int = 2
    # "tiers": issue 21's study (procgen tiers); "mixture": issue 35's (docs/learning_study.md, "The issue-35
    # study"): the RL pool of the benchmark-shaped mixture, every seed scored on the same learning-set problems
    design: str = "tiers"
    device: str = "cpu"  # where evaluation runs (the trainers pick their device themselves)
    dtype: str = "float32"  # evaluation dtype (bfloat16 on the GPU machine: studies/gpu_cells.py)


FULL = Budget()
TINY = Budget(model="", seeds=(0,), n_export=120, n_sft=24, sft=dict(batch_size=4, epochs=1, max_length=1024,
                                                                      learning_rate=1e-3),
              rl_steps=1, rl_batch=2, group_size=2, gen_tokens=8, eval_tiers={"base": (1, 2), "sft": (1,),
                                                                              "trained": (1,), "strategy": (1,)},
              n_eval=4, n_eval_base=3, eval_tokens={1: 8, 2: 8, 3: 8}, eval_batch=4, strategy_rounds=1, n_eval_strategy=2,
              full_tasks=("r3_demo_structured",), bootstrap=200, threads=1)


# issue 35's design: 2 seeds, dose 12 steps x 4 problems = 48, the whole learning set (400 problems as
# r3_procgen_learning builds it; the design's power table assumed 600, which needs a larger learning set),
# 512 new tokens (the mixture's references are <= 371 tokens)
MIXTURE = Budget(seeds=(0, 1), design="mixture", n_eval=400, eval_tokens={"learning": 512},
                 eval_tiers={"sft": ("learning",), "aa": ("learning",), "trained": ("learning",)})
TINY_MIXTURE = Budget(model="", seeds=(0,), design="mixture", sft=dict(TINY.sft), rl_steps=1, rl_batch=2, group_size=2,
                      gen_tokens=8, n_eval=2, eval_tokens={"learning": 8}, eval_batch=2, bootstrap=200, threads=1,
                      eval_tiers={"sft": ("learning",), "aa": ("learning",), "trained": ("learning",)})


def conditions(b: Budget) -> list[Condition]:
    # grad_accum 1 everywhere: trainers.sft defaults to 4 micro-batches per step, which would give the
    # SFT-continued control 4x the problems per step of the RL conditions
    rl = dict(max_steps=b.rl_steps, learning_rate=b.rl_lr, grad_accum=1)
    gen = dict(max_new_tokens=b.gen_tokens, temperature=0.7)
    # GRPO at the same learning rate as every other trained condition: with Adam a step moves each weight by
    # ~lr whatever the loss's scale, so one lr is one movement budget (trainers.grpo's default 1e-5 left
    # seed 0 within KL 0.0004 of the SFT start; those cells are in results/learning/superseded/)
    grpo = dict(max_steps=b.rl_steps, learning_rate=b.rl_lr, grad_accum=1, batch_size=b.rl_batch * b.group_size,
                group_size=b.group_size, max_completion_length=b.gen_tokens, temperature=0.9)
    if b.design == "mixture":  # the primary comparisons' conditions and the A/A control (docs/learning_study.md)
        return [
            Condition("sft", "sft", "sft"),  # scored merged, as every trained condition is
            Condition("sft_unmerged", "aa"),  # the SFT start scored with lm-eval's peft= path: the A/A control
            Condition("sft_cont", "trained", "sft", overrides=dict(rl, batch_size=b.rl_batch)),
            Condition("stepfix", "trained", "stepfix", overrides=dict(rl, batch_size=b.rl_batch, **gen)),
            Condition("grpo_position", "trained", "grpo", overrides=dict(grpo, rewards="position")),
        ]
    return [
        Condition("base_cot", "base", prompt="cot"),
        Condition("base_seventag", "base"),
        Condition("sft", "sft", "sft"),
        Condition("sft_cont", "trained", "sft", overrides=dict(rl, batch_size=b.rl_batch)),
        Condition("dpo_ipo", "trained", "dpo", overrides=dict(rl, batch_size=b.rl_batch, beta=0.1)),
        Condition("stepfix", "trained", "stepfix", overrides=dict(rl, batch_size=b.rl_batch, **gen)),
        Condition("stepfix_baseline", "trained", "stepfix",
                  overrides=dict(rl, batch_size=b.rl_batch, **gen, **STEPFIX_BASELINE)),
        Condition("grpo_outcome", "trained", "grpo", overrides=dict(grpo, rewards="outcome")),
        Condition("grpo_position", "trained", "grpo", overrides=dict(grpo, rewards="position")),
        Condition("stepco", "strategy", strategy="stepco"),
        Condition("bestofn", "strategy", strategy="bestofn"),
        Condition("full_base", "full"),
        Condition("full_best", "full"),  # the adapter of the best trained condition (best_adapter)
    ]


@dataclass(frozen=True)
class Cell:
    cond: Condition
    seed: int
    tier: int | str | None = None  # None: the training cell; a procgen tier; a whole task (kind full)

    @property
    def id(self) -> str:
        tail = "train" if self.tier is None else self.tier if isinstance(self.tier, str) else f"t{self.tier}"
        return f"{self.cond.name}__s{self.seed}__{tail}"


def cells(b: Budget, only: set | None = None, seeds: set | None = None) -> list[Cell]:
    """Each training cell followed at once by its evaluations (the SFT start first, since everything
    continues it): an adapter is scored while it is on this machine. Run folders are not committed, so
    a trained cell whose evaluations were not done before the machine went is trained again
    (Study._run, `adapter_missing`)."""
    out = []
    for c in conditions(b):
        if only and c.name not in only:
            continue
        for s in (b.seeds if c.kind == "trained" else (0,)):
            if seeds is not None and s not in seeds:
                continue
            if c.kind in ("sft", "trained"):
                out.append(Cell(c, s))
            out += [Cell(c, s, k) for k in (b.full_tasks if c.kind == "full" else b.eval_tiers[c.kind])]
    return out


def doc_indices(cell: Cell, b: Budget) -> list[int]:
    """Which test documents (indices into the tier's held-out test split) an evaluation cell scores."""
    kind = cell.cond.kind
    if kind == "full":
        raise ValueError(f"{cell.id} scores every document of {cell.tier}")
    if b.design == "mixture":  # every seed of every condition on the same problems (paired across seeds)
        return list(range(b.n_eval))
    if kind == "trained":
        k = math.ceil(b.n_eval / len(b.seeds))
        i = b.seeds.index(cell.seed)
        return list(range(i * k, min((i + 1) * k, b.n_eval)))
    n = {"base": b.n_eval_base, "strategy": b.n_eval_strategy}.get(kind, b.n_eval)
    return list(range(n))


def _plain(d: dict) -> dict:
    """Settings as JSON/YAML hold them (tuples as lists), so recorded and designed values compare equal."""
    return json.loads(json.dumps(d))


def depends_on(cell: Cell) -> str | None:
    """The cell whose result this one needs (the SFT start, or its own training run)."""
    c = cell.cond
    if cell.tier is None:
        return None if c.kind == "sft" else "sft__s0__train"
    if c.kind == "full":  # full_best waits for every tier-1 evaluation of a trained model (Study.best_adapter)
        return None
    if c.kind in ("strategy", "aa"):
        return "sft__s0__train"
    return None if c.kind == "base" else Cell(c, cell.seed).id


def whole_benchmark(tier) -> bool:
    """A cell's tier that names a whole lm-eval task (full_base / full_best), not a procgen set (an int tier,
    or the mixture's "learning" / "transfer")."""
    return isinstance(tier, str) and tier.startswith("r3_")


# -------------------------------------------------------------------------------- statistics

def n_for_difference(p1: float, p2: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Problems per arm so that a two-sided test of p1 vs p2 at `alpha` has `power` (the normal
    approximation for two independent proportions, Fleiss, Levin & Paik 2003, eq. 4.14, without the
    continuity correction). n_for_difference(0.3, 0.4) = 356."""
    from statistics import NormalDist

    za, zb = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    pbar = (p1 + p2) / 2
    num = za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return math.ceil((num / (p1 - p2)) ** 2)


def bootstrap_ci(values: list, iters: int, seed: int, num: list | None = None) -> tuple[float, float, float]:
    """(estimate, low, high): the 95% percentile bootstrap interval over problems (Efron & Tibshirani
    1993, ch. 13). With `num`, the statistic is a ratio sum(values) / sum(num) (a share among the
    erroneous solutions); an empty denominator gives NaN."""
    n = len(values)
    den = num if num is not None else [1.0] * n
    if n == 0 or sum(den) == 0:
        return math.nan, math.nan, math.nan
    est = sum(values) / sum(den)
    rng = random.Random(seed)
    stats = []
    for _ in range(iters):
        idx = [rng.randrange(n) for _ in range(n)]
        d = sum(den[i] for i in idx)
        if d:
            stats.append(sum(values[i] for i in idx) / d)
    stats.sort()
    if not stats:
        return est, math.nan, math.nan
    lo, hi = stats[int(0.025 * (len(stats) - 1))], stats[int(math.ceil(0.975 * (len(stats) - 1)))]
    return est, lo, hi


def score_sample(doc: dict, response: str, acc: float, fc: float | None, backend: str) -> dict:
    """Per-problem metrics of one response: the task's accuracy and format score, and the step
    verifier's first error, class and position reward (verifiers.rewards.step_reward)."""
    from verifiers import seventag
    from verifiers.rewards import step_reward
    from verifiers.steps import verify

    v = verify(doc["question"], response or "", doc.get("solution") or "", backend)
    r = step_reward(v)  # the trainers' reward: n = the format's seven steps, FORMAT = 0, no verdict = not ok
    # one validity for the step reward and the error shares: a verdict the reward cannot use (no
    # verdict, a first error without a known class) counts in neither, and in verifier_failures
    valid = bool(getattr(v, "valid", False)) and r.ok
    reward = r.value if valid else None
    cls = (v.error_class if v.first_error else None) if valid else None
    return {"acc": float(acc), "format_compliance": fc if fc is not None else seventag.format_compliance(response or ""),
            "first_error": int(v.first_error), "n_steps": int(v.n_steps), "error_class": cls, "step_reward": reward,
            "verifier_valid": bool(valid), "explanation": v.explanation[:200]}


def cell_metrics(samples: list[dict], iters: int, seed: int) -> dict:
    """metric -> (value, ci_low, ci_high, n) over the problems of one evaluation cell."""
    out = {}
    for m in ("acc", "step_reward", "format_compliance"):
        vals = [float(s[m]) for s in samples if s.get(m) is not None]
        out[m] = (*bootstrap_ci(vals, iters, seed), len(vals))
    err = [s for s in samples if s.get("verifier_valid", True)]
    wrong = [1.0 if s["error_class"] else 0.0 for s in err]
    for c in CLASSES:
        ind = [1.0 if s["error_class"] == c else 0.0 for s in err]
        out[f"share_{c}"] = (*bootstrap_ci(ind, iters, seed, num=wrong), int(sum(wrong)))
    return out


# ------------------------------------------------------------------------------------ records

def weights_sha256(adapter_dir) -> str | None:
    """sha256 of an adapter folder's weights (adapter_model.safetensors); None when there is none."""
    from r3bench.results.records import sha256_file

    f = Path(adapter_dir) / "adapter_model.safetensors"
    return sha256_file(f) if f.is_file() else None


# Evaluation cells generated once for two studies: (design, condition, tier) -> the record of the same
# generation made by another script. The mixture design's SFT start on the learning set is exactly
# studies/mixture_sft.py's sft_start__r3_procgen_learning (the committed start merged in fp32, greedy,
# 512 new tokens, every document); Study.shared_source checks each setting and the adapter's weights
# before taking its responses, which are then step-verified here as any other cell's.
SHARED = {("mixture", "sft", "learning"):
          ROOT / "results" / "mixture_sft" / "cells" / "sft_start__r3_procgen_learning.json"}


def in_study(out: Path, p) -> Path:
    """A path from a cell record: relative ones are inside the study folder (records stay portable)."""
    p = Path(p)
    return p if p.is_absolute() else out / p


def write_json(path: Path, obj) -> None:
    """Atomic: a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(json.dumps(obj, indent=1, default=str))
    os.replace(tmp, path)


def write_samples(path: Path, rows: list[dict]) -> Path:
    """A cell's samples, one JSON object per line, written atomically (the study's and mixture_sft's cells)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    os.replace(tmp, path)
    return path


def build_task(task: str):
    """The lm-eval task object as the evaluation cells build it (the r3 tasks folder only)."""
    from lm_eval.tasks import TaskManager

    from r3bench.eval.hook import tasks_dir

    tm = TaskManager(include_path=str(tasks_dir()), include_defaults=False)
    return tm.load([task])["tasks"][task]


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def run_cell_trainer(trainer: str, cfg: dict, out: Path, name: str, threads: int) -> tuple[int, Path, Path]:
    """A study cell's `python -m trainers.<trainer> --config OUT/configs/<name>.yaml` on `threads` threads,
    its output appended to OUT/logs/<name>.log (run_logged); `cfg` gets `resume` when its run folder holds a
    checkpoint (a crashed or interrupted earlier try continues from its newest one). Returns (exit code,
    config file, log file)."""
    import yaml

    if any(Path(cfg["output_dir"]).glob("checkpoint-*")):
        cfg["resume"] = True
    cfg_file = out / "configs" / f"{name}.yaml"
    cfg_file.parent.mkdir(parents=True, exist_ok=True)
    cfg_file.write_text(yaml.safe_dump(cfg, sort_keys=True))
    log_file = out / "logs" / f"{name}.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", f"trainers.{trainer}", "--config", str(cfg_file)]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
    return run_logged(cmd, env, log_file), cfg_file, log_file


def run_logged(cmd: list, env: dict, log_file: Path) -> int:
    """`cmd` run from the repository root with its output appended to `log_file` (a header line first);
    its exit code. When the caller stops (Ctrl-C, SIGTERM) the command is stopped too, so no orphan
    trainer keeps writing into the run folder that the next try resumes from."""
    with open(log_file, "a", encoding="utf-8") as fh:
        fh.write(f"\n=== {' '.join(cmd)} ({time.strftime('%Y-%m-%d %H:%M:%S')})\n")
        fh.flush()
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
        try:
            return proc.wait()
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    proc.kill()


def copy_train_samples(run_dir: Path, dest_dir: Path, name: str) -> Path | None:
    """The training samples of a finished RL run (stepfix_samples.jsonl: y1, verdict, feedback, y2,
    rewards, loss terms; grpo_samples.jsonl: completions, rewards, advantages) copied into a study folder,
    which is committed (run folders are not): dest_dir/<name>.jsonl, gzip-compressed (.jsonl.gz,
    reproducible bytes) past TRAIN_SAMPLES_GZIP_BYTES, written atomically. None for a trainer that samples
    nothing (SFT continued, DPO: their rows are the data file's)."""
    src = next((run_dir / n for n in TRAIN_SAMPLE_FILES if (run_dir / n).is_file()), None)
    if src is None:
        return None
    raw = src.read_bytes()
    dest = dest_dir / f"{name}.jsonl"
    if len(raw) > TRAIN_SAMPLES_GZIP_BYTES:
        import gzip

        dest, raw = dest.with_name(dest.name + ".gz"), gzip.compress(raw, compresslevel=9, mtime=0)
    dest.parent.mkdir(parents=True, exist_ok=True)
    for old in dest.parent.glob(f"{name}.jsonl*"):  # an earlier try's copy in the other form
        if old.name != dest.name and not old.name.endswith(".partial"):
            old.unlink()
    tmp = dest.with_name(dest.name + ".partial")
    tmp.write_bytes(raw)
    os.replace(tmp, dest)
    return dest


def take_lock(path: Path) -> Path:
    """Take the lock file `path` (this process's pid); a second study process on the same folder would
    run the same cells into the same run folders. A lock whose process is gone is taken over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            try:
                pid = int(path.read_text().strip() or 0)
            except (OSError, ValueError):
                pid = 0
            if pid and pid != os.getpid():
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    pass  # stale: its process is gone
                except PermissionError:
                    raise RuntimeError(f"another study process (pid {pid}) holds {path}") from None
                else:
                    raise RuntimeError(f"another study process (pid {pid}) is running on {path.parent} "
                                       f"(its lock: {path}); stop it first, or remove the lock if it is stale")
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(str(os.getpid()))
        return path
    raise RuntimeError(f"could not take {path}")


class Study:
    def __init__(self, out: Path, budget: Budget, only: set | None = None, seeds: set | None = None):
        self.out, self.b = Path(out), budget
        self.cells = cells(budget, only, seeds)
        self.base_path = None

    def record_path(self, cell_id: str) -> Path:
        return self.out / "cells" / f"{cell_id}.json"

    def status(self, cell_id: str) -> str:
        r = read_json(self.record_path(cell_id))
        return r.get("status", "missing") if r else "missing"

    # ---- data --------------------------------------------------------------------------------
    def data_dir(self) -> Path:
        """Exports of the train tiers and the SFT/DPO rows of their train splits (n_sft per tier)."""
        from r3bench.procgen.export import export

        d = self.out / "data"
        if self.b.design == "mixture":  # the mixture's RL pool: the file every trained condition takes as `data`
            from r3bench.procgen import mixture_export

            mix = d / "mixture"
            if not (mix / "manifest.json").is_file():
                mixture_export.export(mix)
            return mix / "rl.jsonl"
        train = d / "train"
        if (train / "manifest.json").is_file():
            return train
        sft, dpo = [], []
        for k in self.b.train_tiers:
            tdir = d / f"t{k}"
            if not (tdir / "manifest.json").is_file():
                export(tdir, n=self.b.n_export, seed=0, tier=k, log=LOG.info)
            rows = [json.loads(x) for x in (tdir / "sft.jsonl").read_text().splitlines()]
            sft += [r for r in rows if r["split"] == "train"][: self.b.n_sft]
            dpo += [json.loads(x) for x in (tdir / "dpo.jsonl").read_text().splitlines()]
        random.Random(0).shuffle(sft)
        random.Random(1).shuffle(dpo)
        train.mkdir(parents=True, exist_ok=True)
        for name, rows in (("sft.jsonl", sft), ("dpo.jsonl", dpo)):
            tmp = train / (name + ".partial")
            tmp.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
            os.replace(tmp, train / name)
        write_json(train / "manifest.json", {"tiers": list(self.b.train_tiers), "n_export": self.b.n_export,
                                             "rows": {"sft": len(sft), "dpo": len(dpo)}})
        return train

    def model_path(self) -> str:
        if self.base_path is None:
            from r3bench.core import models

            if not self.b.model:  # the tiny random model of --tiny
                p = self.out / "tiny_model"
                self.base_path = str(p if (p / "config.json").is_file() else models.build_tiny(p))
            else:
                self.base_path = str(models.resolve(self.b.model)) if models.is_short_name(self.b.model) else self.b.model
        return self.base_path

    # ---- training ----------------------------------------------------------------------------
    def train_config(self, cell: Cell) -> dict:
        b, c = self.b, cell.cond
        cfg = dict(model=self.model_path(), data=str(self.data_dir()), seed=cell.seed, report_to="none",
                   eval_tasks="", save_steps=max(1, b.rl_steps // 4), save_total_limit=2,
                   output_dir=str(self.out / "runs" / f"{c.name}-s{cell.seed}"))
        if c.kind == "sft":
            s = dict(b.sft)
            epochs = s.pop("epochs")
            data = self.data_dir()
            n_rows = len((data if data.is_file() else data / "sft.jsonl").read_text().splitlines())
            s["max_steps"] = max(1, math.ceil(epochs * n_rows / s.get("batch_size", 4)))
            s["save_steps"] = max(1, s["max_steps"] // 5)
            cfg.update(s)
        else:
            cfg.update(c.overrides)
            cfg["init_adapter"] = self.adapter("sft__s0__train")
        return cfg

    def adapter(self, train_cell_id: str) -> str:
        r = read_json(self.record_path(train_cell_id)) or {}
        if r.get("status") != "done":
            raise RuntimeError(f"{train_cell_id} is not done")
        return str(in_study(self.out, r["adapter"]))

    def rel(self, path) -> str:
        """A path inside the study folder as relative to it (records stay portable when committed)."""
        p = Path(path).resolve()
        try:
            return p.relative_to(self.out.resolve()).as_posix()
        except ValueError:
            return str(path)

    def use_sft_start(self, src: Path) -> str:
        """Take a committed SFT start (studies/gpu_sft.py output: adapter parts + adapter_config.json) or a
        plain peft adapter folder (a trainers.sft run's final/, e.g. studies/mixture_sft.py's sft_mix: the
        start that has seen every answer form of the mixture's pool) as the done `sft__s0__train` cell, so
        every RL condition starts from it; returns the cell's status."""
        cid = "sft__s0__train"
        sys.path.insert(0, str(ROOT / "studies"))
        from gpu_sft import reassemble

        dst = self.out / "sft_start_adapter"
        if not (dst / "adapter_config.json").is_file():  # git-ignored: absent in a fresh clone
            if (Path(src) / "adapter_model.safetensors").is_file():
                import shutil

                dst.mkdir(parents=True, exist_ok=True)
                for name in ("adapter_model.safetensors", "adapter_config.json"):
                    shutil.copyfile(Path(src) / name, dst / name)
            else:
                reassemble(Path(src), dst)
        if self.status(cid) == "done":
            return "done"
        summary = read_json(Path(src) / "summary.json") or {}
        write_json(self.record_path(cid), {"cell": cid, "status": "done", "tries": 0, "condition": "sft", "seed": 0,
                                           "tier": None, "adapter": self.rel(dst), "source": "committed SFT start "
                                           f"({Path(src).name}: {summary.get('device', '?')}, "
                                           f"{summary.get('phases', {}).get('train', {}).get('steps', '?')} steps)",
                                           "adapter_sha256": weights_sha256(dst), "finished": time.time()})
        return "taken"

    def run_train(self, cell: Cell) -> dict:
        cfg = self.train_config(cell)
        outd = Path(cfg["output_dir"])
        t0 = time.time()
        rc, cfg_file, log_file = run_cell_trainer(cell.cond.trainer, cfg, self.out, cell.id, self.b.threads)
        run = read_json(outd / "run.json") or {}
        if rc != 0 or run.get("status") != "finished":
            tail = log_file.read_text(errors="replace")[-1500:]
            raise RuntimeError(f"trainers.{cell.cond.trainer} exited {rc} (run.json status "
                               f"{run.get('status')!r}); log {log_file}:\n{tail}")
        return {"adapter": self.rel(run["adapter"]), "train_loss": run.get("train_loss"),
                "train_samples_file": self.save_train_samples(cell, outd),
                # the trainer's sampling record (RL trainers): cap, truncated samples, the start's format compliance
                **{k: run[k] for k in ("generation_cap", "truncation", "start_check") if k in run},
                "global_step": run.get("global_step"), "seconds": round(time.time() - t0, 1),
                "peak_rss_gb": run.get("peak_rss_gb"),  # the trainer process's own, from its run.json
                "config_file": self.rel(cfg_file), "output_dir": self.rel(outd),
                "overrides": _plain(cell.cond.overrides)}  # what design_drift compares with the design

    def save_train_samples(self, cell: Cell, run_dir: Path) -> str | None:
        """The training samples of a finished RL run copied into the committed study folder
        (copy_train_samples: OUT/train_samples/<cell>.jsonl[.gz]); None for a trainer that samples nothing."""
        dest = copy_train_samples(run_dir, self.out / "train_samples", cell.id)
        return None if dest is None else self.rel(dest)

    # ---- evaluation --------------------------------------------------------------------------
    def lm(self, cell: Cell, adapter_cell: str | None = None):
        """The lm-eval model of an evaluation cell; `adapter_cell`: the training cell whose adapter
        full_best scores (run_eval's best_adapter choice)."""
        from lm_eval.models.huggingface import HFLM

        c, b = cell.cond, self.b
        kw = dict(pretrained=self.model_path(), device=b.device, batch_size=b.eval_batch, dtype=b.dtype)
        if c.kind in ("sft", "trained"):
            adapter_cell = Cell(c, cell.seed).id
        if adapter_cell:
            import torch

            # the adapter merged into the weights (fp32) before scoring: the same function as lm-eval's
            # peft= path up to float rounding, and ~20% faster to generate with on this CPU; on a GPU the
            # merged model is then cast to the budget's dtype (bf16)
            model = merged_model(self.model_path(), self.adapter(adapter_cell))
            return HFLM(pretrained=model.to(device=b.device, dtype=getattr(torch, b.dtype)),
                        tokenizer=self.model_path(), device=b.device, batch_size=b.eval_batch)
        if c.kind == "aa":  # the A/A control: the SFT start unmerged (lm-eval's own peft= path)
            return HFLM(peft=self.adapter("sft__s0__train"), **kw)
        if c.kind == "strategy":
            from r3bench.eval import strategies

            kw["peft"] = self.adapter("sft__s0__train")
            if c.strategy == "stepco":
                return strategies.StepCoLM(inner="hf", verifier=self.b.verifier, rounds=self.b.strategy_rounds, **kw)
            return strategies.BestOfNLM(inner="hf", n=1 + self.b.strategy_rounds, scorer=self.b.verifier, **kw)
        return HFLM(**kw)

    def shared_source(self, cell: Cell, table: dict | None = None) -> dict | None:
        """The record of another script's identical generation of this cell (SHARED), or None: it must be
        done, on this budget's device, dtype, batch, token limit, base model and every document, from an
        adapter with the same weights as this study's SFT start."""
        path = (SHARED if table is None else table).get((self.b.design, cell.cond.name, cell.tier))
        rec = read_json(path) if path else None
        if not rec or rec.get("status") != "done" or cell.cond.kind != "sft":
            return None
        want = {"task": f"r3_procgen_{cell.tier}", "device": self.b.device, "dtype": self.b.dtype,
                "batch": self.b.eval_batch, "max_gen_toks": self.b.eval_tokens.get(cell.tier),
                "base_model": self.b.model, "limit": None, "n": len(doc_indices(cell, self.b)),
                "threads": self.b.threads if self.b.device == "cpu" else None}
        if any(rec.get(k) != v for k, v in want.items()):
            return None
        mine = weights_sha256(self.adapter(Cell(cell.cond, cell.seed).id))
        if not mine or rec.get("adapter_sha256") != mine:
            return None
        return {**rec, "record": str(path)}

    def run_shared(self, cell: Cell, src: dict) -> dict:
        """Take a SHARED cell's responses and score them as run_eval scores its own: the task's metrics and the
        step verifier, both run here (today's code, whatever the other script's scores were)."""
        import hashlib

        task = src["task"]
        t = build_task(task)
        docs = list(t.test_docs())
        sfile = Path(src["record"]).parent.parent / src["samples_file"]
        raw = sfile.read_bytes()
        rows = [json.loads(x) for x in raw.decode().splitlines() if x.strip()]
        want = doc_indices(cell, self.b)
        by_id = {r["doc_id"]: r for r in rows}
        if sorted(by_id) != want or any(docs[i]["id"] != by_id[i]["id"] for i in want):
            raise RuntimeError(f"{src['record']}: its samples are not this cell's documents")
        t0 = time.time()
        samples = []
        for i in want:
            r, doc = by_id[i], docs[i]
            res = t.process_results(doc, [r["response"]])
            rec = score_sample(doc, r["response"], res["acc"], res.get("format_compliance"), self.b.verifier)
            samples.append({"doc_id": i, "id": doc["id"], "template": json.loads(doc["meta"])["template"],
                            "response": r["response"], **rec})
        spath = write_samples(self.out / "samples" / f"{cell.id}.jsonl", samples)
        metrics = cell_metrics(samples, self.b.bootstrap, seed=hash_seed(cell.id))
        rel = Path(src["record"]).resolve()
        try:
            rel = rel.relative_to(ROOT.resolve())
        except ValueError:
            pass
        return {"task": task, "n": len(samples), "seconds": round(time.time() - t0, 1),
                "generation_seconds": src.get("seconds"), "samples_file": self.rel(spath),
                "device": self.b.device, "dtype": self.b.dtype, "metrics": {k: list(v) for k, v in metrics.items()},
                "gen_tokens_per_problem": None,
                "shared": {"record": rel.as_posix(), "samples_sha256": hashlib.sha256(raw).hexdigest(),
                           "note": "the responses of that cell (the same generation); scored here"},
                "verifier_failures": sum(not s["verifier_valid"] for s in samples)}

    def run_eval(self, cell: Cell) -> dict:
        from lm_eval import simple_evaluate
        from lm_eval.tasks import TaskManager

        from r3bench.eval.hook import tasks_dir

        from r3bench.eval import procgen_data as lmeval_data

        full = cell.cond.kind == "full"
        chosen = self.best_adapter() if cell.cond.name == "full_best" else None
        if full:  # a whole benchmark with the task's own generation settings
            task, kw = cell.tier, {}
        else:
            if isinstance(cell.tier, str):  # the mixture's learning / transfer set (r3_procgen_learning ...)
                task = f"r3_procgen_{cell.tier}"
                n_docs = len(lmeval_data.mixture_records(cell.tier))
            else:
                task = f"r3_procgen_t{cell.tier}" + ("_cot" if cell.cond.prompt == "cot" else "")
                n_docs = len(lmeval_data.problems(cell.tier))
            kw = dict(samples={task: [i for i in doc_indices(cell, self.b) if i < n_docs]},
                      gen_kwargs={"max_gen_toks": self.b.eval_tokens[cell.tier], "do_sample": False})
        lm = self.lm(cell, chosen["train_cell"] if chosen else None)
        t0 = time.time()
        res = simple_evaluate(model=lm, tasks=[task], task_manager=TaskManager(include_path=str(tasks_dir()),
                                                                              include_defaults=False),
                              apply_chat_template=True, bootstrap_iters=0, log_samples=True, **kw)
        seconds = round(time.time() - t0, 1)
        samples = []
        for s in res["samples"][task]:
            resp = s["filtered_resps"][0] if s["filtered_resps"] else ""
            if full:  # no worked reference solution to step-verify against: accuracy and format only
                from verifiers import seventag

                fc = s.get("format_compliance")
                rec = {"acc": float(s["acc"]), "format_compliance": fc if fc is not None else
                       seventag.format_compliance(resp), "first_error": 0, "n_steps": 0, "error_class": None,
                       "step_reward": None, "verifier_valid": False, "explanation": "not step-verified (no "
                       "worked reference solution in this benchmark)"}
                template = s["doc"].get("source") or ""
            else:
                rec = score_sample(s["doc"], resp, s["acc"], s.get("format_compliance"), self.b.verifier)
                template = json.loads(s["doc"]["meta"])["template"]
            samples.append({"doc_id": s["doc_id"], "id": s["doc"]["id"], "template": template, "response": resp, **rec})
        spath = write_samples(self.out / "samples" / f"{cell.id}.jsonl", samples)
        info = getattr(lm, "get_model_info", lambda: {})().get("r3bench_strategy", {})
        del lm, res  # one model per cell: free it before the next cell loads its own
        gc.collect()
        metrics = cell_metrics(samples, self.b.bootstrap, seed=hash_seed(cell.id))
        return {"task": task, "n": len(samples), "seconds": seconds, "samples_file": self.rel(spath),
                "device": self.b.device, "dtype": self.b.dtype,
                "metrics": {k: list(v) for k, v in metrics.items()},
                "gen_tokens_per_problem": info.get("gen_tokens_per_problem"),
                **({"best_adapter": chosen} if chosen else {}),
                "verifier_failures": sum(not s["verifier_valid"] for s in samples)}

    def best_adapter(self) -> dict | None:
        """The adapter that full_best scores: the SFT start or trained condition with the highest tier-1
        accuracy (its seeds pooled), seed 0 of it. Not its best seed: each seed is scored on its own
        block of problems, so the best seed would be picked partly for the easiest block, on test data,
        by a difference of a few problems. None while any tier-1 evaluation of the SFT start or a
        trained condition in the design is not done (the choice would change)."""
        b = self.b
        pending = [c for c in cells(b) if c.tier == 1 and c.cond.kind in ("sft", "trained") and self.status(c.id) != "done"]
        if pending:
            return None
        acc: dict = {}
        for c in cells(b):
            if c.tier == 1 and c.cond.kind in ("sft", "trained"):
                r = read_json(self.record_path(c.id))
                v, _, _, n = r["metrics"]["acc"]
                if isinstance(v, (int, float)) and not math.isnan(v) and n:
                    acc.setdefault(c.cond.name, []).append((v, n))
        pooled = {k: sum(v * n for v, n in xs) / sum(n for _, n in xs) for k, xs in acc.items()}
        name = max(pooled, key=lambda k: (pooled[k], k == "sft"))  # a tie goes to the SFT start
        seed = b.seeds[0] if name != "sft" else 0
        return {"condition": name, "seed": seed, "tier1_acc_pooled": round(pooled[name], 4),
                "train_cell": Cell(next(c for c in conditions(b) if c.name == name), seed).id,
                "rule": "highest pooled tier-1 accuracy among the SFT start and the trained conditions; "
                        "its first seed (fixed beforehand, not chosen on test problems)"}

    # ---- the loop ----------------------------------------------------------------------------
    def adapter_missing(self, train_cell: Cell) -> bool:
        """A done training cell whose adapter folder is absent while some of its evaluations are not
        done (a fresh checkout: run folders are git-ignored). The SFT start is reassembled from its
        committed parts instead (use_sft_start)."""
        if train_cell.cond.kind == "sft":
            return False
        r = read_json(self.record_path(train_cell.id)) or {}
        if not r.get("adapter") or (in_study(self.out, r["adapter"]) / "adapter_config.json").is_file():
            return False
        evals = [c for c in self.cells if c.tier is not None and depends_on(c) == train_cell.id]
        return any(self.status(c.id) != "done" for c in evals)

    def lock(self) -> Path:
        return take_lock(self.out / ".study.lock")

    def run(self, max_cells: int | None = None, progress=True) -> dict:
        lock = self.lock()
        try:
            return self._run(max_cells, progress)
        finally:
            lock.unlink(missing_ok=True)

    def design_drift(self, cell: Cell) -> dict:
        """{setting: (recorded, design)} for a done training cell of a trained condition whose settings
        (the condition's overrides: learning rate, steps, batch, rewards...) differ from the design now;
        {} when they agree or nothing was recorded to compare. Records before 'overrides' existed are
        read from the config file the cell wrote, when it is here (configs/ is not committed)."""
        if cell.tier is not None or cell.cond.kind != "trained":
            return {}
        r = read_json(self.record_path(cell.id)) or {}
        if r.get("status") != "done":
            return {}
        rec = r.get("overrides")
        if rec is None:
            cf = in_study(self.out, r["config_file"]) if r.get("config_file") else None
            if cf is None or not cf.is_file():
                return {}
            import yaml

            try:
                rec = yaml.safe_load(cf.read_text())
            except (OSError, yaml.YAMLError):
                return {}
            if not isinstance(rec, dict):
                return {}
        now = _plain(cell.cond.overrides)
        return {k: (rec.get(k), v) for k, v in now.items() if rec.get(k) != v}

    def dependants(self, train_cell_id: str) -> list[Cell]:
        """The cells built on a training cell's adapter: its evaluations, and full_best if it scored it."""
        return [x for x in cells(self.b) if depends_on(x) == train_cell_id or (
            x.cond.name == "full_best" and
            ((read_json(self.record_path(x.id)) or {}).get("best_adapter") or {}).get("train_cell") == train_cell_id)]

    def retire(self, cell: Cell, drift: dict) -> Path:
        """A training cell run under other settings than the design's, with its evaluations: their
        records and samples move to superseded/<condition>-s<seed>-<time>/ (kept as evidence, with why.json),
        its run folder to runs/<name>.superseded-<time> (a resume must not continue its checkpoints)."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        dest = self.out / "superseded" / f"{cell.cond.name}-s{cell.seed}-{stamp}"
        (dest / "cells").mkdir(parents=True, exist_ok=True)
        moved = []
        for x in [cell] + self.dependants(cell.id):
            rp = self.record_path(x.id)
            r = read_json(rp)
            if r is None:
                continue
            for key, sub in (("samples_file", "samples"), ("train_samples_file", "train_samples")):
                sp = in_study(self.out, r[key]) if r.get(key) else None
                if sp is not None and sp.is_file():
                    (dest / sub).mkdir(exist_ok=True)
                    os.replace(sp, dest / sub / sp.name)
                    r[key] = self.rel(dest / sub / sp.name)
            write_json(dest / "cells" / rp.name, r)
            rp.unlink()
            moved.append(x.id)
        run = self.out / "runs" / f"{cell.cond.name}-s{cell.seed}"
        if run.is_dir():
            os.replace(run, run.with_name(f"{run.name}.superseded-{stamp}"))
        write_json(dest / "why.json", {"cells": moved, "retired": time.strftime("%Y-%m-%d %H:%M:%S"),
                                       "drift": {k: {"recorded": a, "design": b} for k, (a, b) in drift.items()}})
        LOG.warning("cell %s was trained with settings the design no longer has (%s): it and its evaluations "
                    "(%s) moved to %s; they run again", cell.id,
                    ", ".join(f"{k} {a!r} -> {b!r}" for k, (a, b) in drift.items()), ", ".join(moved[1:]) or "none",
                    self.rel(dest))
        return dest

    def _run(self, max_cells: int | None = None, progress=True) -> dict:
        from tqdm import tqdm

        for cell in self.cells:
            drift = self.design_drift(cell)
            if drift:
                self.retire(cell, drift)
        done = crashed = ran = 0
        bar = tqdm(self.cells, desc="learning study", unit="cell", disable=not progress)
        for cell in bar:
            rec_path = self.record_path(cell.id)
            prev = read_json(rec_path) or {}
            if prev.get("status") == "done" and cell.tier is None and self.adapter_missing(cell):
                LOG.info("cell %s: its adapter %s is not here (run folders are not committed) and its "
                         "evaluations are not all done: training it again", cell.id, prev.get("adapter"))
                prev = {**prev, "status": "stale"}
                write_json(rec_path, {**prev, "error": "adapter missing on this machine; trained again"})
            if prev.get("status") == "done":
                done += 1
                continue
            if prev.get("status") == "running":  # the process died inside this cell
                write_json(rec_path, {**prev, "status": "crashed", "error": "interrupted: the study process died "
                                      "inside this cell (found 'running' at the next start)"})
            dep = depends_on(cell)
            if dep and self.status(dep) != "done":
                LOG.info("skip %s: needs %s (%s)", cell.id, dep, self.status(dep))
                continue
            if cell.cond.name == "full_best" and self.best_adapter() is None:
                LOG.info("skip %s: needs every tier-1 evaluation of the SFT start and the trained conditions", cell.id)
                continue
            if max_cells is not None and ran >= max_cells:
                break
            bar.set_postfix_str(cell.id)
            LOG.info("cell %s: start", cell.id)
            tries = int(prev.get("tries", 0)) + 1
            write_json(rec_path, {"cell": cell.id, "status": "running", "tries": tries, "started": time.time()})
            ran += 1
            try:
                shared = self.shared_source(cell) if cell.tier is not None else None
                result = (self.run_train(cell) if cell.tier is None else self.run_shared(cell, shared) if shared
                          else self.run_eval(cell))
            except KeyboardInterrupt:
                write_json(rec_path, {"cell": cell.id, "status": "crashed", "tries": tries,
                                      "error": "interrupted (KeyboardInterrupt)"})
                raise
            except Exception as e:  # noqa: BLE001 - recorded in the cell's file; the next cells go on
                crashed += 1
                write_json(rec_path, {"cell": cell.id, "status": "crashed", "tries": tries,
                                      "error": f"{type(e).__name__}: {e}"[:4000],
                                      "traceback": traceback.format_exc()[-3000:]})
                LOG.warning("cell %s crashed: %s", cell.id, str(e).splitlines()[0][:300])
                continue
            write_json(rec_path, {"cell": cell.id, "status": "done", "tries": tries,
                                  "condition": cell.cond.name, "seed": cell.seed, "tier": cell.tier,
                                  "budget": asdict(self.b), "finished": time.time(), **result})
            done += 1
            LOG.info("cell %s: done", cell.id)
        return {"done": done, "crashed": crashed, "ran": ran, "cells": len(self.cells)}


def merged_model(base: str, adapter: str):
    """The base model with a LoRA adapter merged into its weights, in fp32, for evaluation."""
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    return PeftModel.from_pretrained(model, adapter).merge_and_unload().eval()


def hash_seed(s: str) -> int:
    import hashlib

    return int(hashlib.sha1(s.encode()).hexdigest()[:8], 16)


# ------------------------------------------------------------------------------------ outputs

PAIRED = ("acc", "step_reward")  # metrics compared problem by problem with the SFT start / SFT continued


class SamplesError(ValueError):
    """A finished cell's samples file is missing, unreadable or not one JSON object per line."""


def cell_samples(out: Path, rec: dict) -> list[dict]:
    from trainers.core.data import read_jsonl
    from trainers.errors import TrainDataError

    if not rec.get("samples_file"):
        raise SamplesError("the cell record names no samples file")
    try:
        return read_jsonl(in_study(out, rec["samples_file"]), what="samples file", allow_empty=True)
    except TrainDataError as e:
        raise SamplesError(str(e)) from None


def _key(s: dict):
    return s.get("id", s.get("doc_id"))


def paired_diffs(a: list[dict], b: list[dict], metric: str) -> list[float]:
    """a - b problem by problem, over the problems both scored (matched by problem id) with a value
    for `metric` in both: the difference of two conditions on the same problems."""
    ref = {_key(s): s.get(metric) for s in b if _key(s) is not None}
    return [float(s[metric]) - float(ref[_key(s)]) for s in a
            if _key(s) in ref and s.get(metric) is not None and ref[_key(s)] is not None]


def sign_test(diffs: list[float]) -> tuple[float, int, int]:
    """(p, up, down) for paired 0/1 outcomes (accuracy differences, problem by problem): up = problems
    the condition got right and the reference wrong, down = the reverse; p = the exact two-sided
    binomial test on those discordant problems (McNemar's exact test). A bootstrap interval over a
    handful of discordant problems is too narrow (4 up and 0 down excludes 0; the exact p is 0.125);
    this says how many problems a paired accuracy difference rests on. NaN with no discordant problem
    (the exact test itself: r3bench.results.stats.sign_test)."""
    from r3bench.results import stats

    up, down = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    return stats.sign_test(up, down), up, down


def changed_responses(a: list[dict], b: list[dict]) -> list[float]:
    """1.0 where a's response to a problem differs from b's (same problem id, both with a text), else
    0.0: with greedy decoding, the share of problems on which training changed what the model writes at
    all (a condition that never left its start changes none; a GRPO at a fifth of the learning rate
    changed ~1 in 4). Equal texts are equal behaviour; unequal ones may differ in a word."""
    ref = {_key(s): s.get("response") for s in b if _key(s) is not None}
    return [float(s["response"] != ref[_key(s)]) for s in a
            if _key(s) in ref and isinstance(s.get("response"), str) and isinstance(ref[_key(s)], str)]


def summary_rows(out: Path, iters: int = 2000, warn=None) -> list[dict]:
    """One row per condition x seed x tier x metric from the finished evaluation cells, every one
    computed from the cell's samples file (the per-seed rows with the bootstrap seed of the evaluation,
    so they equal the cell record's). A condition with several seeds also gets seed "all" rows (its
    seeds' disjoint problem blocks pooled: the SFT start's n_eval problems; bootstrap CI over the pool;
    in the mixture design every seed scored the same problems, and the pool is their responses: the value
    is the mean over seeds, n counts responses, the CI is over problem x seed pairs)
    and seed "spread" rows (value = standard deviation over seeds, ci_low / ci_high = lowest / highest
    seed, n = seeds; each seed scored other problems, so the spread holds problem noise as well as
    training noise). Paired rows, metric "<m>_minus_sft" (every condition scored on procgen) and
    "<m>_minus_sft_cont" (trained conditions, against SFT continued of the same seed, same block): the
    mean difference over the problems both scored, bootstrap CI over those problems; and
    "changed_vs_sft", the share of those problems on which the condition's response text is not the SFT
    start's (changed_responses); "acc_up_vs_<ref>" / "acc_down_vs_<ref>" (value: how many problems the
    condition got right where the reference did not / the reverse; n: the pairs) and
    "acc_sign_p_vs_<ref>" (value: sign_test's exact p on those; n: the discordant problems). Seeds whose blocks
    overlap or whose budgets differ are not pooled (`warn` is told why)."""
    import statistics

    warn = warn or LOG.warning
    rows, by = [], {}

    def add(c, seed, t, m, v, lo, hi, n):
        rows.append({"condition": c, "seed": seed, "tier": t, "metric": m, "value": v, "ci_low": lo,
                     "ci_high": hi, "n": n})

    def add_diff(c, seed, t, m, diffs):
        add(c, seed, t, m, *bootstrap_ci(diffs, iters, hash_seed(f"{c}-s{seed}-t{t}-{m}")), len(diffs))
        if m.startswith("acc_minus_"):  # the discordant problems it rests on, and the exact test on them
            ref, (p, up, down) = m[len("acc_minus_"):], sign_test(diffs)
            nan = float("nan")
            add(c, seed, t, f"acc_up_vs_{ref}", float(up), nan, nan, len(diffs))
            add(c, seed, t, f"acc_down_vs_{ref}", float(down), nan, nan, len(diffs))
            add(c, seed, t, f"acc_sign_p_vs_{ref}", p, nan, nan, up + down)

    for f in sorted((out / "cells").glob("*.json")):
        r = read_json(f)
        if not r or r.get("status") != "done" or r.get("tier") is None:  # training cells have no tier
            continue
        try:
            samples = cell_samples(out, r)
        except SamplesError as e:  # one broken file leaves its cell out of the summary, not the summary out
            warn(f"cell {f.stem} left out of the summary: {e}")
            continue
        metrics = cell_metrics(samples, iters, hash_seed(r.get("cell", f.stem)))
        for m, vals in metrics.items():
            add(r["condition"], r["seed"], r["tier"], m, *vals)
        by.setdefault((r["condition"], r["tier"]), []).append((r, samples, metrics))

    trained = {x.name for x in conditions(FULL) if x.kind == "trained"}  # names are the same in every budget
    for (c, t), recs in sorted(by.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        recs.sort(key=lambda x: x[0]["seed"])
        if len(recs) >= 2:
            ids = [_key(s) for _, smp, _ in recs for s in smp]
            # dtype too: seeds scored in bf16 on a GPU and in fp32 here are not pooled (older records: None)
            budgets = {json.dumps({k: (r.get("budget") or {}).get(k) for k in ("n_eval", "seeds", "eval_tokens", "dtype")},
                                  sort_keys=True) for r, _, _ in recs}
            same = None not in ids and len({frozenset(_key(s) for s in smp) for _, smp, _ in recs}) == 1
            if None not in ids and len(ids) != len(set(ids)) and not same:
                warn(f"{c} tier {t}: the seeds' problem blocks overlap; not pooled")
            elif len(budgets) > 1:
                warn(f"{c} tier {t}: the seeds were scored under different budgets; not pooled")
            else:
                pool = [s for _, smp, _ in recs for s in smp]
                for m, vals in cell_metrics(pool, iters, hash_seed(f"{c}-t{t}")).items():
                    add(c, "all", t, m, *vals)
                    per_seed = [x for _, _, mm in recs for x in [mm[m][0]] if not math.isnan(x)]
                    if per_seed:
                        add(c, "spread", t, m, statistics.stdev(per_seed) if len(per_seed) > 1 else 0.0,
                            min(per_seed), max(per_seed), len(per_seed))
        if whole_benchmark(t):  # a whole benchmark: no SFT start scored on it
            continue
        for ref in ("sft", "sft_cont"):
            if c in ("sft", ref) or (ref == "sft_cont" and c not in trained):
                continue
            refs = {r["seed"]: smp for r, smp, _ in by.get((ref, t), [])}
            if ref == "sft_cont" and not any(r["seed"] in refs for r, _, _ in recs):
                continue
            measures = [(f"{m}_minus_{ref}", lambda a, b, m=m: paired_diffs(a, b, m)) for m in PAIRED]
            if ref == "sft":
                measures.append(("changed_vs_sft", changed_responses))
            for name, measure in measures:
                pooled = []
                for r, smp, _ in recs:
                    other = refs.get(0 if ref in ONE_SCORING else r["seed"])  # comparison_tests' rule
                    if other is None:
                        continue
                    d = measure(smp, other)
                    if d:
                        add_diff(c, r["seed"], t, name, d)
                        pooled += d
                if len(recs) >= 2 and pooled:
                    add_diff(c, "all", t, name, pooled)
    return rows


# The issue-35 study's tests, named in advance (docs/learning_study.md, "Primary comparisons"): the
# learning set, both metrics, stepfix against SFT continued and against GRPO (position reward); every
# other pair below is secondary, and Holm's correction runs over all of them together.
PRIMARY = (("stepfix", "sft_cont"), ("stepfix", "grpo_position"))
SECONDARY = (("grpo_position", "sft_cont"), ("stepfix", "sft"), ("grpo_position", "sft"), ("sft_cont", "sft"))
AA = ("sft_unmerged", "sft")  # the A/A control: the SFT start unmerged minus merged
# the conditions the design scores once whatever the seeds (every kind but "trained": cells() gives them seed
# 0 only; here the SFT start, merged and unmerged): every seed of a is paired with that one scoring; a
# trained b is paired seed with seed
ONE_SCORING = tuple(c.name for c in conditions(MIXTURE) if c.kind != "trained")
TEST_TIER = "learning"


def comparison_tests(out: Path, iters: int = 2000, perm_iters: int = 10000) -> list[dict]:
    """One row per (comparison, metric) on the learning set: the paired difference a - b over the
    problems both scored (each seed of a against the same seed of b, or against the SFT start's one
    scoring when b is in ONE_SCORING; a seed of a whose b seed has not run yet is left out, and
    "seeds" counts the seeds paired), its seed x template x problem bootstrap CI (stats.hierarchical_bootstrap)
    and the plain problem bootstrap beside it, the raw p (accuracy: the exact sign test on the
    problems whose seed-averaged difference is not 0; step reward: the sign-flip randomisation test on
    the seed-averaged differences), and Holm's adjusted p over every row (the A/A control included).
    Rows whose cells are missing are left out (and so out of the correction)."""
    from r3bench.results import stats

    by: dict = {}
    for f in sorted((out / "cells").glob("*.json")):
        r = read_json(f)
        if not r or r.get("status") != "done" or r.get("tier") != TEST_TIER:
            continue
        try:
            by.setdefault(r["condition"], {})[r["seed"]] = cell_samples(out, r)
        except SamplesError:
            continue
    rows = []
    for kind, pairs in (("primary", PRIMARY), ("secondary", SECONDARY), ("A/A", (AA,))):
        for a, b in pairs:
            if a not in by or b not in by:
                continue
            for metric in PAIRED:
                flat, per_problem = [], {}
                for seed, smp in sorted(by[a].items()):
                    # a trained b with one seed so far is not a fixed reference: pairing every seed of a
                    # with it would mix seeds and count a's seeds as if each had its own pair
                    other = by[b].get(0 if b in ONE_SCORING else seed)
                    if other is None:
                        continue
                    ref = {_key(s): s for s in other}
                    for s in smp:
                        o = ref.get(_key(s))
                        if o is None or s.get(metric) is None or o.get(metric) is None:
                            continue
                        d = float(s[metric]) - float(o[metric])
                        flat.append((seed, s.get("template") or "?", _key(s), d))
                        per_problem.setdefault(_key(s), []).append(d)
                if not flat:
                    continue
                avg = [sum(v) / len(v) for v in per_problem.values()]
                est, lo, hi = stats.hierarchical_bootstrap(flat, iters, hash_seed(f"{a}-{b}-{metric}"))
                _, plo, phi = bootstrap_ci(avg, iters, hash_seed(f"{a}-{b}-{metric}-plain"))
                if metric == "acc":
                    p, up, down = sign_test(avg)
                    test = f"sign test, {up} up / {down} down"
                else:
                    p = stats.paired_permutation_p(avg, perm_iters, hash_seed(f"{a}-{b}-{metric}-perm"))
                    test = "sign-flip randomisation"
                rows.append({"kind": kind, "a": a, "b": b, "metric": metric, "diff": est, "ci_low": lo,
                             "ci_high": hi, "plain_low": plo, "plain_high": phi, "seeds": len({f[0] for f in flat}),
                             "problems": len(per_problem), "p": p, "test": test,
                             "discordant": sum(x != 0 for x in avg) / len(avg)})
    for r, adj in zip(rows, stats.holm([r["p"] for r in rows])):
        r["p_holm"] = adj
    return rows


def comparison_lines(rows: list[dict]) -> list[str]:
    """The tests' table for summary.md (raw and Holm-adjusted p side by side; a primary result is
    claimed only when its adjusted p < 0.05 and its discordant share exceeds the A/A control's on the
    same metric; before the A/A cell has run that floor is unknown, and such a result reads "pending",
    not "yes")."""
    if not rows:
        return []
    # the floor is the A/A control's discordant share on the same metric (a step reward moves with any
    # change of the response, accuracy only when the answer changes: one metric's floor says nothing of
    # the other's; both were held to accuracy's before)
    floor = {r["metric"]: r["discordant"] for r in rows if r["kind"] == "A/A"}
    lines = ["", "## Tests named in advance (learning set; docs/learning_study.md)", "",
             "Difference a - b over the problems both scored, every seed of a against the same seed of b (the SFT "
             "start: its one scoring; a seed of a whose seed of b has not run is left out, and 'seeds' counts the seeds paired). CI: the seed x template x problem bootstrap (plain problem bootstrap beside "
             "it). p: accuracy, the exact sign test on the problems whose seed-averaged difference is not 0; step "
             "reward, the sign-flip randomisation test. Holm's correction over every row, the A/A control included. "
             "A primary result is claimed only if its Holm p < 0.05"
             + (" and its discordant share exceeds the A/A floor on the same metric ("
                + ", ".join(f"{m} {v:.3f}" for m, v in sorted(floor.items())) + ")." if floor else
                "; the A/A control has not run, so no floor is known and such a result is 'pending'."),
             "", "| kind | a - b | metric | seeds | problems | difference [seed x template x problem CI] | "
             "plain CI | discordant | p (test) | Holm p | claimed |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        passes = r["kind"] == "primary" and not math.isnan(r["p_holm"]) and r["p_holm"] < 0.05
        f = floor.get(r["metric"])
        claimed = "pending" if passes and f is None else "yes" if passes and r["discordant"] > f else "no"
        lines.append(f"| {r['kind']} | {r['a']} - {r['b']} | {r['metric']} | {r['seeds']} | {r['problems']} | "
                     f"{r['diff']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] | [{r['plain_low']:+.3f}, "
                     f"{r['plain_high']:+.3f}] | {r['discordant']:.3f} | {_p(r['p'])} ({r['test']}) | "
                     f"{_p(r['p_holm'])} | {claimed} |")
    return lines


def _f(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _p(x) -> str:
    """A p-value for a table: three decimals, "<0.001" below that (not "0.000")."""
    return "<0.001" if isinstance(x, (int, float)) and not math.isnan(x) and x < 0.001 else _f(x)


def curve_runs(out: Path) -> list[Path]:
    """The metrics files learning_curves.png draws: every run folder of the design, not the ones set
    aside when their cell was retired (Study.retire: runs/<name>.superseded-<time>)."""
    return sorted(f for f in (out / "runs").glob("*/metrics.jsonl") if ".superseded-" not in f.parent.name)


def write_csv(path: Path, rows: list[dict], cols: tuple) -> None:
    """rows as a CSV with the columns `cols` (floats to 6 significant digits), written atomically."""
    tmp = path.with_name(path.name + ".partial")
    with open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{r[k]:.6g}" if isinstance(r[k], float) else r[k]) for k in cols})
    os.replace(tmp, path)


def write_outputs(out: Path, budget: Budget) -> dict:
    rows = summary_rows(out, budget.bootstrap)
    write_csv(out / "summary.csv", rows, ("condition", "seed", "tier", "metric", "value", "ci_low", "ci_high", "n"))
    order = [c.name for c in conditions(budget)]
    tiers = sorted({r["tier"] for r in rows}, key=lambda t: (isinstance(t, str), str(t)))
    shares_text = ("Shares: the class of the first wrong step among the solutions in which the symbolic verifier "
                   "found one (n_err of them; correct final answers included), so they sum to 1.")
    if budget.design == "mixture":
        head = ["# Learning study, issue 35's design: the mixture's learning set (unseen instances of the training "
                "templates)", "",
                "Value [95% bootstrap CI]. Every seed of every condition scored the same problems. Conditions with "
                "several seeds: their seeds' responses pooled (the value is the mean over seeds; n counts responses, "
                "seeds x problems; the CI is over those responses, so it is narrower than one that holds problem and "
                "seed noise: the seed x template x problem intervals are in the tests named in advance, below); "
                "'seed range' = lowest - highest seed accuracy (same problems, so it is training noise). "
                + shares_text, ""]
    else:
        head = ["# Learning study: held-out procgen tiers (templates never trained on) and whole benchmarks", "",
                "Value [95% bootstrap CI over problems; the CIs do not hold the variance between training seeds]. "
                "Conditions with several seeds: the seeds' disjoint problem blocks pooled; 'seed range' = lowest - "
                "highest seed accuracy (each seed scored other problems, so the range holds problem noise as well as "
                "training noise). " + shares_text, ""]
    lines = [*head,
             "| condition | tier | seeds | n | accuracy | seed range | step reward | format compliance | "
             "MC / CM / CE / FORMAT (n_err) |", "|---|---|---|---|---|---|---|---|---|"]
    pick = {}
    for r in rows:
        pick.setdefault((r["condition"], r["tier"]), {}).setdefault(r["seed"], {})[r["metric"]] = r

    def main_rows(seeds: dict, metric: str = "acc") -> dict:
        """The pooled rows where the seeds were pooled for `metric`, else the first seed's."""
        if metric in seeds.get("all", {}):
            return seeds["all"]
        return next(v for k, v in sorted(seeds.items(), key=lambda kv: str(kv[0])) if k not in ("all", "spread"))

    for c in order:
        for t in tiers:
            seeds = pick.get((c, t))
            if not seeds:
                continue
            m = main_rows(seeds)
            nseeds = len([k for k in seeds if k not in ("all", "spread")])
            sp = seeds.get("spread", {}).get("acc")
            rng = f"{_f(sp['ci_low'])} - {_f(sp['ci_high'])}" if sp else "-"
            cell = lambda k: f"{_f(m[k]['value'])} [{_f(m[k]['ci_low'])}, {_f(m[k]['ci_high'])}]"  # noqa: E731
            shares = " / ".join(_f(m[f"share_{k}"]["value"]) for k in CLASSES) + f" ({m['share_MC']['n']})"
            lines.append(f"| {c} | {t} | {nseeds} | {m['acc']['n']} | {cell('acc')} | {rng} | {cell('step_reward')} | "
                         f"{cell('format_compliance')} | {shares} |")
    paired = [(c, t) for c in order for t in tiers if any(k.endswith("_minus_sft") for v in pick.get((c, t), {}).values()
                                                           for k in v)]
    if paired:
        where = ("Every seed against the SFT start's one scoring of the same problems, and against SFT continued of "
                 "the same seed; a row of a condition with several seeds counts each seed's pairs (n = seeds x "
                 "problems, up / down too). The tests named in advance (below) are the study's analysis; this table "
                 "adds how far each condition moved the responses." if budget.design == "mixture" else
                 "Against the SFT start: each seed's block of the SFT start's problems; against SFT continued: its own "
                 "seed, the same block. These, not the table above, say whether a condition moved a number: the SFT "
                 "start's own accuracy differs between blocks.")
        lines += ["", "## Paired: the same problems scored by the SFT start and by SFT continued", "",
                  "Mean difference (condition minus reference) over the problems both scored [95% bootstrap CI over "
                  "those problems]. " + where, "",
                  "Changed: the share of those problems on which the condition's greedy response is not the SFT "
                  "start's word for word (how far training moved what the model writes at all). Up / down: the "
                  "problems the condition got right where the SFT start did not / the reverse, with the exact "
                  "two-sided sign test on them (McNemar's exact p): the paired accuracy rests on these few problems, "
                  "and a bootstrap interval over a handful of them is too narrow.", "",
                  "| condition | tier | n | accuracy - SFT start | up / down (exact p) | step reward - SFT start | "
                  "accuracy - SFT continued | step reward - SFT continued | changed vs SFT start |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for c, t in paired:
            seeds = pick[(c, t)]
            m = main_rows(seeds, "acc_minus_sft")

            def d(k):
                r = m.get(k)
                return f"{r['value']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]" if r and not math.isnan(
                    r["ci_low"]) else (_f(r["value"]) if r else "-")
            ch = m.get("changed_vs_sft")
            changed = f"{_f(ch['value'])} [{_f(ch['ci_low'])}, {_f(ch['ci_high'])}]" if ch else "-"
            up, down, sp = (m.get(f"acc_{k}_vs_sft") for k in ("up", "down", "sign_p"))
            flips = f"{up['value']:.0f} / {down['value']:.0f} ({_f(sp['value'])})" if up and down and sp else "-"
            lines.append(f"| {c} | {t} | {m['acc_minus_sft']['n']} | {d('acc_minus_sft')} | {flips} | "
                         f"{d('step_reward_minus_sft')} | {d('acc_minus_sft_cont')} | {d('step_reward_minus_sft_cont')} "
                         f"| {changed} |")
    chosen = [r.get("best_adapter") for f in sorted((out / "cells").glob("full_best__*.json"))
              for r in [read_json(f) or {}] if r.get("status") == "done" and r.get("best_adapter")]
    if chosen:
        b0 = chosen[0]
        lines += ["", f"full_best scored {b0['condition']} seed {b0['seed']} ({b0['train_cell']}; pooled tier-1 "
                      f"accuracy {b0['tier1_acc_pooled']}); rule: {b0['rule']}."]
    if budget.design == "mixture":
        tests = comparison_tests(out, budget.bootstrap)
        lines += comparison_lines(tests)
        write_csv(out / "tests.csv", tests, ("kind", "a", "b", "metric", "seeds", "problems", "diff", "ci_low",
                                            "ci_high", "plain_low", "plain_high", "discordant", "p", "test", "p_holm"))
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    plots(out, rows, [c.name for c in conditions(budget) if c.kind != "full"])  # whole benchmarks: table only
    return {"rows": len(rows)}


def colour_of(condition: str) -> str:
    """One colour per condition in every plot of the study (issue 35): fixed by the condition's place
    in the design's list, not by its place in one plot (a plot that shows a subset used to repaint
    the rest). A run folder name (`stepfix-s1`) takes its condition's colour. Unknown names: grey."""
    name = condition.rsplit("-s", 1)[0] if "-s" in condition else condition
    names = [c.name for c in conditions(Budget())]
    names += [c.name for c in conditions(MIXTURE) if c.name not in names]  # the A/A control's after them
    palette = [f"C{k}" for k in range(10)] + ["#e7ba52", "#393b79", "#637939", "#8c6d31", "#843c39"]  # C5 is #8c564b
    return palette[names.index(name) % len(palette)] if name in names else "0.5"


def _ci_points(ax, i: int, pts: list[dict], marker=lambda r: "o", colour: str | None = None) -> str:
    """Summary rows as points with their 95% CIs at x = i, side by side (one per seed / the pool);
    returns the colour used (the condition's, colour_of)."""
    colour = colour or (colour_of(pts[0]["condition"]) if pts else "0.5")
    for j, r in enumerate(pts):
        x = i + (j - (len(pts) - 1) / 2) * 0.15
        lo, hi = r["ci_low"], r["ci_high"]
        err = [[max(0, r["value"] - lo)], [max(0, hi - r["value"])]] if not math.isnan(lo) else None
        ax.errorbar([x], [r["value"]], yerr=err, fmt=marker(r), color=colour, capsize=3)
    return colour


def plots(out: Path, rows: list[dict], order: list[str]) -> dict:
    """accuracy.png, paired.png, learning_curves.png; returns {plot: {condition or run: colour}}."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    used: dict = {"accuracy": {}, "paired": {}, "learning_curves": {}}
    tiers = sorted({r["tier"] for r in rows if not whole_benchmark(r["tier"])}, key=str)  # procgen tiers and sets
    fig, axes = plt.subplots(1, max(1, len(tiers)), figsize=(4 + 3 * len(tiers), 4), squeeze=False)
    for ax, t in zip(axes[0], tiers):
        for i, c in enumerate(order):
            used["accuracy"][c] = _ci_points(ax, i, [r for r in rows if r["condition"] == c and r["tier"] == t
                                                     and r["metric"] == "acc" and r["seed"] != "spread"],
                                             colour=colour_of(c))
        ax.set_xticks(range(len(order)))
        ax.set_xticklabels(order, rotation=60, ha="right", fontsize=8)
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"tier {t}: accuracy, 95% bootstrap CI (per seed, then seeds pooled)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "accuracy.png", dpi=110)
    plt.close(fig)
    t_paired = 1 if 1 in tiers else (tiers[0] if tiers else None)  # where the trained conditions are scored
    diffs = [r for r in rows if r["metric"] in ("acc_minus_sft", "step_reward_minus_sft") and r["tier"] == t_paired]
    if diffs:  # the paired differences with the SFT start
        names = [c for c in order if any(r["condition"] == c for r in diffs)]
        fig, axes = plt.subplots(1, 2, figsize=(11, 4), squeeze=False)
        for ax, m, title in zip(axes[0], ("acc_minus_sft", "step_reward_minus_sft"),
                                ("accuracy", "mean step reward")):
            for i, c in enumerate(names):
                pts = sorted((r for r in diffs if r["condition"] == c and r["metric"] == m),
                             key=lambda r: (r["seed"] == "all", str(r["seed"])))
                used["paired"][c] = _ci_points(ax, i, pts, marker=lambda r: "s" if r["seed"] == "all" else "o",
                                               colour=colour_of(c))
            ax.axhline(0, color="grey", lw=0.8)
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
            ax.set_title(f"{t_paired}: {title} minus the SFT start's on the same problems\n(95% bootstrap CI; "
                         "circles per seed, square seeds pooled)", fontsize=9)
        fig.tight_layout()
        fig.savefig(out / "paired.png", dpi=110)
        plt.close(fig)
    runs = curve_runs(out)
    if not runs and (out / "learning_curves.png").is_file():  # run folders are not here (a fresh clone of a study
        LOG.warning("learning_curves.png kept as it is: no run's metrics.jsonl is on this machine")  # older than
        return used  # the committed metrics.jsonl): keep the plot drawn where they were, never an empty one
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for run in runs:
        curves = curves_of(run)
        colour = used["learning_curves"][run.parent.name] = colour_of(run.parent.name)
        for ax, key in zip(axes, ("loss", "reward")):
            pts = curves[key]
            if pts:
                xs = sorted(pts)
                ax.plot(xs, [pts[x] for x in xs], marker="o", ms=2, lw=1, label=run.parent.name, color=colour,
                        ls="-" if run.parent.name.endswith("-s0") else ("--" if run.parent.name.endswith("-s1") else ":"))
    axes[0].set_title("training loss by step", fontsize=9)
    axes[1].set_title("training reward by step (GRPO: mean reward; stepfix: r1, the first attempt)", fontsize=9)
    for ax in axes:
        ax.set_xlabel("optimizer step")
        if ax.lines:
            ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(out / "learning_curves.png", dpi=110)
    plt.close(fig)
    return used


REWARD_KEYS = ("reward", "r1_mean")  # GRPO (TRL) logs `reward`; stepfix logs r1_mean (the sampled y1's reward)


def curves_of(metrics_jsonl: Path) -> dict:
    """{"loss": {step: value}, "reward": {step: value}} of a trainer's metrics.jsonl; the later record
    of a step counts (a resumed run logs the steps after its last checkpoint again)."""
    out = {"loss": {}, "reward": {}}
    for line in metrics_jsonl.read_text().splitlines():
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if "eval" in d or "step" not in d:
            continue
        if isinstance(d.get("loss"), (int, float)):
            out["loss"][d["step"]] = d["loss"]
        key = next((k for k in REWARD_KEYS if isinstance(d.get(k), (int, float))), None)
        if key:
            out["reward"][d["step"]] = d[key]
    return out


# --------------------------------------------------------------------------------------- plan

# CPU throughput on the 2-core machines (FACTS.md; re-measure with benchmarks/): fp32, 2 threads
GEN_TOK_S = 100.0  # greedy/sampled generation, batch 8, tokens per second in total
TRAIN_TOK_S = 180.0  # LoRA forward + backward tokens per second
SEQ = {1: 300, 2: 320, 3: 520, "learning": 450}  # prompt + reference solution tokens per tier (SmolLM2 tokenizer)
REF = {1: 175, 2: 190, 3: 330, "learning": 260}  # tokens a model that learnt the format writes (reference + a little)
FULL_DOCS, FULL_TOKENS = 115, 768  # a whole benchmark (MMLU college physics 118, JEEBench physics 107): docs, max tokens


def n_docs(cell: Cell, b: Budget) -> int:
    return FULL_DOCS if cell.cond.kind == "full" else len(doc_indices(cell, b))


def estimate_seconds(cell: Cell, b: Budget) -> float:
    """A rough CPU-time estimate of one cell from the throughputs above (--plan). Models that learnt
    the format stop near the reference length; the base model runs to max_gen_toks."""
    c = cell.cond
    tiers = ("learning",) if b.design == "mixture" else b.train_tiers
    seq = sum(SEQ[k] for k in tiers) / len(tiers)
    if cell.tier is None:
        if c.kind == "sft":
            return b.sft["epochs"] * b.n_sft * len(b.train_tiers) * seq / TRAIN_TOK_S
        gen = min(b.gen_tokens, sum(REF[k] for k in tiers) / len(tiers)) / GEN_TOK_S
        per = b.rl_steps * b.rl_batch
        return per * {"sft": seq / TRAIN_TOK_S, "dpo": 4 * seq / TRAIN_TOK_S,
                      "stepfix": 2 * gen + 4 * seq / TRAIN_TOK_S,
                      "grpo": b.group_size * (gen + 2 * seq / TRAIN_TOK_S)}[c.trainer]
    if c.kind == "full":
        return FULL_DOCS * FULL_TOKENS / GEN_TOK_S
    toks = b.eval_tokens[cell.tier] if c.kind == "base" else min(b.eval_tokens[cell.tier], REF.get(cell.tier, 300))
    calls = 1 + b.strategy_rounds if c.kind == "strategy" else 1
    return len(doc_indices(cell, b)) * toks * calls / GEN_TOK_S


def measured_seconds(out: Path) -> dict:
    """Seconds per cell measured in this study folder, by (condition, tier): the mean over its done
    cells, superseded ones included (other settings, the same work), per problem for evaluation cells
    (their n differs between conditions)."""
    by: dict = {}
    for f in sorted([*(out / "cells").glob("*.json"), *(out / "superseded").glob("*/cells/*.json")]):
        r = read_json(f) or {}
        if r.get("status") != "done" or not isinstance(r.get("seconds"), (int, float)) or "condition" not in r:
            continue
        if r.get("shared") or r.get("source"):  # re-scored or taken here: what it cost is the generating cell's
            if not isinstance(r.get("generation_seconds"), (int, float)):  # (or nothing: a committed start)
                continue
            r = {**r, "seconds": r["generation_seconds"]}
        per = r["seconds"] / r["n"] if r.get("tier") is not None and r.get("n") else r["seconds"]
        by.setdefault((r["condition"], r.get("tier")), []).append(per)
    return {k: sum(v) / len(v) for k, v in by.items()}


def plan(study: Study) -> str:
    """Every cell with its status and time: measured (the mean of done cells of the same condition and
    tier in this folder, else of the trained conditions with the same trainer) where there is one, else
    the estimate from the throughput constants above."""
    b, total, lines = study.b, 0.0, []
    lines.append(f"{len(study.cells)} cells in {study.out} (model {b.model or 'tiny random'}; seeds {b.seeds}; "
                 f"n_eval {b.n_eval} per tier = n_for_difference(0.3, 0.4) {n_for_difference(0.3, 0.4)})")
    seen = measured_seconds(study.out)
    # a trained condition with nothing measured yet borrows the mean of the other trained conditions
    # run by the same trainer (stepfix_baseline from stepfix, grpo_position from grpo_outcome); the mixture
    # design also the training cells of the tiers study beside it (the same trainers and dose, 12 x 4)
    trainer_of = {c.name: c.trainer for c in conditions(FULL) if c.kind == "trained"}
    same_trainer: dict = {}
    for (name, tier), v in seen.items():
        if name in trainer_of:
            same_trainer.setdefault((trainer_of[name], tier), []).append(v)
    tiers_study: dict = {}
    if b.design == "mixture":
        for (name, tier), v in measured_seconds(study.out.parent).items():
            if name in trainer_of and tier is None:
                tiers_study.setdefault(trainer_of[name], []).append(v)
    # an evaluation with nothing measured for its condition: the per-problem time of the other adapters
    # scored on the same tier (they all stop near the reference length; the base model runs to the limit)
    kind_of = {c.name: c.kind for c in conditions(b)}
    same_tier: dict = {}
    for (name, tier), v in seen.items():
        if tier is not None and kind_of.get(name) not in (None, "base"):
            same_tier.setdefault(tier, []).append(v)
    n_measured = 0
    redo = {x.id for c in study.cells if study.design_drift(c) for x in [c, *study.dependants(c.id)]}  # Study.retire's
    for cell in study.cells:
        m, how = seen.get((cell.cond.name, cell.tier)), "measured"
        if m is None and cell.cond.kind == "trained" and (vs := same_trainer.get((cell.cond.trainer, cell.tier))):
            m, how = sum(vs) / len(vs), f"measured, trainers.{cell.cond.trainer}"
        if m is None and cell.tier is None and cell.cond.kind == "trained" and (vs := tiers_study.get(cell.cond.trainer)):
            m, how = sum(vs) / len(vs), f"measured, trainers.{cell.cond.trainer} in the tiers study"
        if m is None and cell.tier is not None and cell.cond.kind != "base" and (vs := same_tier.get(cell.tier)):
            m, how = sum(vs) / len(vs), "measured, other adapters on this set"
        if m is not None:
            s = m * n_docs(cell, b) if cell.tier is not None else m
        else:
            s, how = estimate_seconds(cell, b), "estimate"
        st = study.status(cell.id)
        if st == "done" and cell.id in redo:
            st = "redo"  # Study.run retires it first (Study.retire)
        elif st == "done" and cell.tier is None and study.adapter_missing(cell):
            st = "retrain"  # its adapter is not on this machine and its evaluations are pending (Study.run)
        total += 0 if st == "done" else s
        n_measured += st != "done" and how.startswith("measured")
        lines.append(f"  {cell.id:50s} {st:8s} ~{s / 60:6.1f} min ({how})")
    problems = []
    for c in conditions(b):
        if not c.trainer:
            continue
        import importlib

        try:
            names = {f.name for f in fields(importlib.import_module(f"trainers.{c.trainer}").Config)}
        except ImportError as e:
            problems.append(f"{c.name}: cannot import trainers.{c.trainer}: {e}")
            continue
        bad = sorted(set(c.overrides) - names)
        if bad:
            problems.append(f"{c.name}: trainers.{c.trainer}.Config has no {bad} (its cells will be recorded "
                            "as crashed until it has)")
    lines.append(f"estimated CPU time of the pending cells: {total / 3600:.1f} h ({n_measured} of them from "
                 f"measured cells of their condition or trainer, the rest at generation {GEN_TOK_S:g} tok/s, training "
                 f"{TRAIN_TOK_S:g} tok/s)")
    lines += [f"WARNING {p}" for p in problems]
    return "\n".join(lines)


def unwind_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C: the running cell is recorded as interrupted and its trainer
    subprocess is terminated (Python's default SIGTERM exits at once and left the trainer running)."""
    import signal

    def _term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, _term)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1][:1200])
    ap.add_argument("--out", default=None, help="study folder (default results/learning; --tiny: required)")
    ap.add_argument("--plan", action="store_true", help="print the cells, their status and the estimated CPU time")
    ap.add_argument("--tiny", action="store_true", help="the whole pipeline on a tiny random model, in minutes")
    ap.add_argument("--only", default="", help="comma-separated conditions (default: all)")
    ap.add_argument("--seeds", default="", help="comma-separated seeds (default: all; the untrained conditions "
                    "have seed 0 only): e.g. --seeds 0 runs one seed of every condition before the others")
    ap.add_argument("--max_cells", type=int, default=None, help="run at most this many pending cells, then stop")
    ap.add_argument("--summarise", action="store_true", help="only write summary.csv / .md and the plots")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--design", choices=("tiers", "mixture"), default="tiers",
                    help="tiers: issue 21's study (results/learning); mixture: issue 35's (results/learning/mixture)")
    ap.add_argument("--device", default=None, help="evaluation device (default cpu; cuda on the GPU machine)")
    ap.add_argument("--dtype", default=None, help="evaluation dtype (default float32; bfloat16 on the GPU machine)")
    ap.add_argument("--eval_batch", type=int, default=None, help="lm-eval batch size (default: the budget's)")
    ap.add_argument("--model", default=None, help="base model folder (default: the budget's, resolved by r3bench)")
    ap.add_argument("--sft_start", default=None,
                    help="a committed SFT start (gpu_sft.py output) or a plain adapter folder (a trainers.sft "
                         "final/, e.g. mixture_sft.py's runs/sft_mix/final) taken as the SFT cell (default: "
                         "results/learning/sft_start when it exists, not with --tiny; 'none' trains the SFT cell)")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    if a.tiny and not a.out:
        ap.error("--tiny needs --out (tiny-model results never go into results/learning)")
    mixture = a.design == "mixture"
    out = Path(a.out or ROOT / "results" / "learning" / ("mixture" if mixture else ""))
    budget = (TINY_MIXTURE if mixture else TINY) if a.tiny else (MIXTURE if mixture else FULL)
    from dataclasses import replace

    budget = replace(budget, **{k: v for k, v in (("device", a.device), ("dtype", a.dtype), ("eval_batch", a.eval_batch),
                                                  ("model", a.model)) if v is not None})
    seeds = {int(x) for x in a.seeds.split(",") if x.strip()} or None
    study = Study(out, budget, set(filter(None, a.only.split(","))) or None, seeds)
    start = a.sft_start or ("none" if a.tiny else str(ROOT / "results" / "learning" / "sft_start"))
    if start != "none" and not a.plan and (Path(start) / "adapter_config.json").is_file():
        LOG.info("SFT start %s: %s", start, study.use_sft_start(Path(start)))
    if a.plan:
        print(plan(study))
        return 0
    if not a.summarise:
        import torch

        unwind_on_sigterm()

        torch.set_num_threads(budget.threads)
        res = study.run(a.max_cells, progress=not a.quiet)
        LOG.info("cells: %s", res)
    write_outputs(out, budget)
    print("wrote " + ", ".join(str(out / f) for f in ("summary.csv", "summary.md", "accuracy.png", "paired.png",
                                                       "learning_curves.png")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
