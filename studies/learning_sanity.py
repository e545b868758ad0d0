"""The learns-at-all test of issue 50 item 3: its pass rule in code (written before any run), and the
resumable driver that runs it.

    python studies/learning_sanity.py --plan          # the pool, the cells, their status and CPU estimates
    python studies/learning_sanity.py --pool          # the pilot's first part: choose the pool (below)
    python studies/learning_sanity.py                 # run or continue the cells, one by one
    python studies/learning_sanity.py --max_cells 1   # a piece: one pending cell, then stop
    python studies/learning_sanity.py --summarise     # summary.csv / summary.md / curves.png from the done cells

docs/learning_study.md ("The learns-at-all test") fixes the rule, the trainers, the pool, the control
(`reward_permutation`) and the driver's design. The driver: a cell is (trainer, arm, seed), arm real or
control (identical but for `reward_permutation`), each a `python -m trainers.X --config` run from the
mixture SFT start over the pool's P problems for V visits (epochs; the trainer's sampler shuffles each
visit with the run's seed), a checkpoint at the end of every visit, so a killed cell resumes from its last
visit; a cell's record is written atomically when it ends (done, or crashed with the error: retried on the
next start); one process per folder (a lock). The pool is chosen once, before any cell, from the start's
sampled step reward on candidates of the mixture's RL pool (`choose_pool`). Outputs in OUT
(results/learning/sanity): pool.json and pool.jsonl, cells/, configs/, logs/, train_samples/ (the
trainers' samples, gzip past 1 MiB), metrics/<cell>.jsonl, and from `--summarise` summary.csv, summary.md
and curves.png. The run folders (checkpoints, adapters) stay in OUT/runs, git-ignored.

The rule's functions compute from the runs' committed samples files, tested on synthetic runs
(tests/studies/test_learning_sanity.py):

    curves = visit_rewards(records, "stepfix")      # problem -> training reward at each visit
    row = verdict(curves_real, curves_control)      # change, control change, p over problems (one seed)
    row = verdict_seeds([real_s0, real_s1], [control_s0, control_s1])   # >= 2 seeds per arm, paired
    rows = decide({"stepfix": row, ...})            # Holm over the trainers, pass / fail each (pass: >= 2 seeds)

The training reward of a visit: stepfix, the first attempt's r1 (what the policy writes from x alone);
GRPO, the mean reward of the problem's completions at that step (the verifier's rewards, not the
control's permuted ones).
"""
from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from r3bench.results import stats  # noqa: E402

CHANGE_MIN = 0.10  # rule 1: last quarter of visits minus the first, mean over problems
MARGIN_MIN = 0.10  # rule 2: that change minus the control's
ALPHA = 0.05  # rule 3: the sign-flip permutation p over problems, after Holm over the trainers


def visit_rewards(records: list[dict], trainer: str) -> dict[str, list[float]]:
    """problem -> its training reward at each visit, in step order, from a run's samples records
    (stepfix_samples.jsonl or grpo_samples.jsonl rows). A step run twice (a resumed run appends its
    records again) counts once, with its later records. Records without a reward are left out."""
    if trainer.startswith("stepfix"):
        last = {}
        for r in records:
            if r.get("r1") is not None:
                last[(str(r["id"]), int(r["step"]))] = float(r["r1"])
        out: dict[str, list[tuple[int, float]]] = {}
        for (pid, step), v in last.items():
            out.setdefault(pid, []).append((step, v))
        return {k: [v for _, v in sorted(vs)] for k, vs in out.items()}
    steps: dict[tuple[str, int], dict[tuple, float]] = {}
    for r in records:  # GRPO: one visit = a prompt's completions at one step
        vals = [v for v in (r.get("rewards") or {}).values() if v is not None]
        if vals:
            steps.setdefault((r["prompt"], int(r["step"])), {})[(r.get("rank", 0), r.get("index"))] = sum(vals)
    out = {}
    for (prompt, step), comps in steps.items():
        out.setdefault(prompt, []).append((step, sum(comps.values()) / len(comps)))
    return {k: [v for _, v in sorted(vs)] for k, vs in out.items()}


def quarter_change(visits: list[float]) -> float:
    """Mean of the last quarter of visits minus the mean of the first quarter (at least one visit each)."""
    if len(visits) < 2:
        return math.nan
    q = max(1, len(visits) // 4)
    return sum(visits[-q:]) / q - sum(visits[:q]) / q


def verdict(real: dict[str, list[float]], control: dict[str, list[float]], iters: int = 10000, seed: int = 0) -> dict:
    """One trainer's numbers over the problems both runs visited at least twice: the mean change (rule 1),
    the control's mean change (rule 2) and the two-sided sign-flip permutation p of the per-problem
    differences real - control (stats.paired_permutation_p; rule 3 before Holm)."""
    keys = sorted(k for k in real if k in control and len(real[k]) >= 2 and len(control[k]) >= 2)
    if not keys:
        return {"problems": 0, "change": math.nan, "control_change": math.nan, "p": math.nan}
    a = [quarter_change(real[k]) for k in keys]
    b = [quarter_change(control[k]) for k in keys]
    return {"problems": len(keys), "change": sum(a) / len(a), "control_change": sum(b) / len(b),
            "p": stats.paired_permutation_p([x - y for x, y in zip(a, b)], iters=iters, seed=seed)}


SEEDS_MIN = 2  # the amendment of 2026-12-07: at least two seeds per arm, the seed the unit of replication


def verdict_seeds(reals: list[dict[str, list[float]]], controls: list[dict[str, list[float]]],
                  iters: int = 10000, seed: int = 0) -> dict:
    """One trainer's numbers over paired seeds (reals[i] and controls[i]: the real and control runs of
    seed i): `verdict` of each seed (rules 1 and 2 are checked per seed in `decide`), the mean change
    and control change over the seeds, and rule 3's p on the per-problem differences averaged over the
    seeds (problems every run visited at least twice)."""
    if len(reals) != len(controls):
        raise ValueError(f"{len(reals)} real runs beside {len(controls)} control runs: the seeds are paired")
    per_seed = [verdict(r, c, iters=iters, seed=seed) for r, c in zip(reals, controls)]
    runs = list(reals) + list(controls)
    keys = sorted(k for k in (runs[0] if runs else {}) if all(k in run and len(run[k]) >= 2 for run in runs))
    if not keys:
        return {"problems": 0, "change": math.nan, "control_change": math.nan, "p": math.nan,
                "seeds": len(reals), "per_seed": per_seed}
    diffs = [sum(quarter_change(r[k]) - quarter_change(c[k]) for r, c in zip(reals, controls)) / len(reals)
             for k in keys]
    a = [sum(quarter_change(r[k]) for k in keys) / len(keys) for r in reals]
    b = [sum(quarter_change(c[k]) for k in keys) / len(keys) for c in controls]
    return {"problems": len(keys), "change": sum(a) / len(a), "control_change": sum(b) / len(b),
            "p": stats.paired_permutation_p(diffs, iters=iters, seed=seed), "seeds": len(reals),
            "per_seed": per_seed}


def _rules_1_2(r: dict) -> bool:
    return (not math.isnan(r["change"]) and r["change"] >= CHANGE_MIN
            and r["change"] - r["control_change"] >= MARGIN_MIN)


def decide(rows: dict[str, dict]) -> list[dict]:
    """summary.csv's rows, one per trainer: its verdict, p after Holm over the trainers, `rules_met` (the
    three rules: change >= CHANGE_MIN, change - control change >= MARGIN_MIN, Holm p < ALPHA; with
    several seeds (`verdict_seeds`) rules 1 and 2 in every seed as well) and `pass`: rules_met with at
    least SEEDS_MIN seeds per arm (a single-seed row can meet the rules but is not a pass: its p over
    problems does not cover the variance between runs).

    A trainer whose p is NaN (no usable data: no problem visited twice by both runs, or no non-zero
    difference) enters Holm as p = 1: it stays in the family (m is the number of trainers run; dropping
    it shrank m and loosened the others' correction) and cannot pass."""
    names = list(rows)
    raw = [rows[n]["p"] for n in names]
    adjusted = stats.holm([1.0 if p is None or math.isnan(p) else p for p in raw])
    out = []
    for n, ph in zip(names, adjusted):
        r = rows[n]
        seeds = r.get("seeds", 1)
        met = _rules_1_2(r) and all(_rules_1_2(s) for s in r.get("per_seed", [])) and ph < ALPHA
        out.append({"trainer": n, "problems": r["problems"], "seeds": seeds, "change": r["change"],
                    "control_change": r["control_change"], "p": r["p"], "p_holm": ph, "rules_met": met,
                    "pass": met and seeds >= SEEDS_MIN})
    return out


# ==================================================================== the driver

OUT = ROOT / "results" / "learning" / "sanity"
# the start: the mixture SFT (studies/mixture_sft.py's train cell), committed as adapter parts here, or
# the adapter folder that cell leaves in its run folder
START_PARTS = ROOT / "results" / "learning" / "sft_mix"
START_RUN = ROOT / "results" / "mixture_sft" / "runs" / "sft_mix" / "final"


@dataclass(frozen=True)
class Design:
    """What sizes the test (docs/learning_study.md). FULL is the plan; the pilot's timing fixes
    `problems` and `visits` before the real runs (written into the docs first), TINY is the tests'."""
    model: str = "r3bench/smollm2-135m-instruct"
    trainers: dict = field(default_factory=lambda: {
        "stepfix": ("stepfix", {"baseline": "none"}),
        "stepfix_r1": ("stepfix", {"baseline": "r1"}),
        "grpo_position": ("grpo", {"rewards": "position", "group_size": 4}),
    })
    seeds: tuple = (0, 1)
    problems: int = 16  # P
    visits: int = 8  # V (>= 8: a quarter is >= 2 visits)
    per_step: int = 4  # problems per optimizer step (GRPO: group_size completions each)
    learning_rate: float = 5e-5
    temperature: float = 0.7
    # the pool's pilot: the start's sampled step reward on `candidates` problems of the mixture's RL pool
    candidates: int = 64
    pilot_samples: int = 4
    band: tuple = (0.2, 0.8)
    pilot_batch: int = 16
    gen_tokens: int = 0  # 0: the trainers derive the cap from the pool (longest reference + margin)
    threads: int = 2
    verifier: str = "symbolic"
    # CPU seconds a problem-visit (estimates until the pilot measures them; the README's example stepfix
    # step: 502 s for 4 problems; GRPO in the mixture study: 330 s a step of 4 problems x 4 completions)
    est_visit_s: dict = field(default_factory=lambda: {"stepfix": 125.0, "grpo": 85.0})


FULL_DESIGN = Design()


def cells(d: Design) -> list[str]:
    """Every cell id, real before control within a seed and trainer: <trainer>__<arm>__s<seed>."""
    return [f"{t}__{arm}__s{s}" for s in d.seeds for t in d.trainers for arm in ("real", "control")]


def parse_cell(cell: str) -> tuple[str, str, int]:
    t, arm, s = cell.split("__")
    return t, arm, int(s.removeprefix("s"))


def pick_pool(means: dict[str, float], kinds: dict[str, str], n: int, band: tuple, seed: int = 0) -> list[str]:
    """`n` candidate ids whose mean start reward is inside `band` (inclusive), in the candidates' answer-kind
    proportions (largest remainder; a kind with too few in the band gives its places to the others),
    drawn with `seed`. Fewer than `n` in the band: all of them (the caller says so)."""
    inside = sorted(k for k, m in means.items() if band[0] <= m <= band[1])
    if len(inside) <= n:
        return inside
    rng = random.Random(seed)
    by_kind: dict[str, list[str]] = {}
    for k in inside:
        by_kind.setdefault(kinds.get(k, "?"), []).append(k)
    total = Counter(kinds.get(k, "?") for k in means)
    share = {kd: n * total[kd] / sum(total.values()) for kd in by_kind}
    take = {kd: min(len(by_kind[kd]), int(share[kd])) for kd in by_kind}
    order = sorted(by_kind, key=lambda kd: (-(share[kd] - int(share[kd])), kd))
    while sum(take.values()) < n:
        grew = False
        for kd in order:
            if sum(take.values()) < n and take[kd] < len(by_kind[kd]):
                take[kd] += 1
                grew = True
        if not grew:
            break
    out = []
    for kd in sorted(by_kind):
        ids = list(by_kind[kd])
        rng.shuffle(ids)
        out += ids[:take[kd]]
    return sorted(out)


def _shown(path) -> str:
    """A path as a record shows it: relative to the repository where it lies inside it (no machine paths)."""
    p = Path(path).resolve()
    return p.relative_to(ROOT).as_posix() if p.is_relative_to(ROOT) else p.name


def _ls():
    """learning_study (beside this script): its records, lock, sample copies and merged model."""
    sys.path.insert(0, str(ROOT / "studies"))
    import learning_study

    return learning_study


class Sanity:
    def __init__(self, out: Path = OUT, design: Design = FULL_DESIGN, start: Path | None = None,
                 pool_source: Path | None = None):
        self.out, self.d = Path(out), design
        self.start = Path(start) if start else None
        self.pool_source = Path(pool_source) if pool_source else None

    # ---- paths and records
    def record_path(self, cell: str) -> Path:
        return self.out / "cells" / f"{cell}.json"

    def status(self, cell: str) -> str:
        r = _ls().read_json(self.record_path(cell))
        return (r or {}).get("status", "pending")

    def start_adapter(self) -> Path:
        """The mixture SFT adapter folder: `start`, else the committed parts (reassembled into OUT/runs),
        else mixture_sft.py's run folder."""
        if self.start is not None:
            src = self.start
        elif (START_PARTS / "adapter_config.json").is_file():
            src = START_PARTS
        else:
            src = START_RUN
        if (src / "adapter_model.safetensors").is_file():
            return src
        if (src / "adapter_config.json").is_file():  # studies/gpu_sft.py's parts
            from gpu_sft import reassemble

            dst = self.out / "runs" / "start_adapter"
            if not (dst / "adapter_model.safetensors").is_file():
                reassemble(src, dst)
            return dst
        raise FileNotFoundError(f"no mixture SFT adapter at {src}: run `python studies/mixture_sft.py --cells train` "
                                "(its runs/sft_mix/final), or pass --start")

    def model_path(self) -> str:
        from trainers.core.model import model_path

        return model_path(self.d.model)

    def rl_pool(self) -> Path:
        """The mixture's RL pool (rl.jsonl of r3bench.procgen.mixture_export), exported into OUT/runs once."""
        if self.pool_source is not None:
            return self.pool_source
        from r3bench.procgen import mixture_export

        mix = self.out / "runs" / "mixture"
        if not (mix / "manifest.json").is_file():
            mixture_export.export(mix)
        return mix / "rl.jsonl"

    # ---- the pool (the pilot's first part)
    def choose_pool(self, log=print) -> dict:
        """Sample the start `pilot_samples` times (temperature) on the first `candidates` problems of the RL
        pool (its fixed order), score each sample with the step verifier's position reward, and keep
        `problems` whose mean is inside `band` (pick_pool). Writes pool.json (every candidate's mean, the
        settings, the seconds) and pool.jsonl (the chosen rows, the trainers' data). Done once: a present
        pool.json is kept."""
        ls = _ls()
        done = ls.read_json(self.out / "pool.json")
        if done and (self.out / "pool.jsonl").is_file():
            return done
        import torch
        from transformers import AutoTokenizer

        from trainers import generation
        from trainers import rl_sampling as rl
        from trainers.core.data import user_chat
        from verifiers.rewards import step_reward
        from verifiers.steps import verify

        d = self.d
        rows = [json.loads(x) for x in self.rl_pool().read_text(encoding="utf-8").splitlines() if x.strip()]
        cand = rows[: d.candidates]
        base = self.model_path()
        tok = AutoTokenizer.from_pretrained(base)
        cap = (max(rl.reference_tokens(tok, [r["completion"] for r in rows]) or [rl.FALLBACK_CAP]) + 128
               if not d.gen_tokens else d.gen_tokens)
        torch.set_num_threads(d.threads)
        model = ls.merged_model(base, str(self.start_adapter()))
        gen = generation.HFGenerator()
        t0 = time.time()
        means, per = {}, {}
        chats = [(r, user_chat(r["prompt"])) for r in cand for _ in range(d.pilot_samples)]
        for i in range(0, len(chats), d.pilot_batch):
            part = chats[i:i + d.pilot_batch]
            ids = gen.generate(model, tok, [c for _, c in part],
                               generation.Sampling(max_new_tokens=cap, temperature=d.temperature, seed=i))
            for (r, _), out in zip(part, ids):
                text = tok.decode(out, skip_special_tokens=True)
                res = step_reward(verify(r.get("question") or r["prompt"], text, r["completion"], backend=d.verifier))
                per.setdefault(r["id"], []).append(res.value if res.ok else None)
            log(f"[sanity] pool pilot: {min(i + d.pilot_batch, len(chats))} of {len(chats)} samples "
                f"({time.time() - t0:.0f} s)")
        for k, vs in per.items():
            got = [v for v in vs if v is not None]
            means[k] = sum(got) / len(got) if got else float("nan")
        kinds = {r["id"]: r.get("answer_kind", "?") for r in cand}
        chosen = pick_pool({k: m for k, m in means.items() if m == m}, kinds, d.problems, d.band)
        rec = {"candidates": len(cand), "samples_each": d.pilot_samples, "temperature": d.temperature,
               "cap_tokens": cap, "band": list(d.band), "wanted": d.problems, "chosen": chosen,
               "short": max(0, d.problems - len(chosen)), "seconds": round(time.time() - t0, 1),
               "start": _shown(self.start_adapter()), "means": means, "rewards": per, "kinds": kinds,
               "chosen_kinds": dict(Counter(kinds[k] for k in chosen))}
        if len(chosen) < d.problems:
            log(f"[sanity] warning: only {len(chosen)} of {len(cand)} candidates have a mean start reward in "
                f"{list(d.band)}; the pool has {len(chosen)} problems (wanted {d.problems})")
        by_id = {r["id"]: r for r in cand}
        self.out.mkdir(parents=True, exist_ok=True)
        tmp = self.out / "pool.jsonl.partial"
        tmp.write_text("".join(json.dumps(by_id[k], ensure_ascii=False) + "\n" for k in chosen), encoding="utf-8")
        os.replace(tmp, self.out / "pool.jsonl")
        ls.write_json(self.out / "pool.json", rec)
        return rec

    # ---- the cells
    def steps(self) -> tuple[int, int]:
        """(steps a visit, total steps) over the pool's P problems."""
        n = sum(1 for x in (self.out / "pool.jsonl").read_text().splitlines() if x.strip())
        per_visit = max(1, -(-n // self.d.per_step))
        return per_visit, per_visit * self.d.visits

    def config(self, cell: str) -> dict:
        t, arm, seed = parse_cell(cell)
        trainer, over = self.d.trainers[t]
        per_visit, total = self.steps()
        cfg = dict(model=self.model_path(), data=str(self.out / "pool.jsonl"), init_adapter=str(self.start_adapter()),
                   output_dir=str(self.out / "runs" / cell), seed=seed, max_steps=total, save_steps=per_visit,
                   save_total_limit=2, grad_accum=1, learning_rate=self.d.learning_rate, temperature=self.d.temperature,
                   reward_permutation=arm == "control", log_samples=True, report_to="none", eval_tasks="",
                   verifier=self.d.verifier)
        if trainer == "grpo":
            g = int(over.get("group_size", 4))
            cfg.update(batch_size=self.d.per_step * g, max_completion_length=self.d.gen_tokens, **over)
        else:
            cfg.update(batch_size=self.d.per_step, max_new_tokens=self.d.gen_tokens, **over)
        return cfg

    def run_cell(self, cell: str) -> dict:
        ls = _ls()
        t, _, _ = parse_cell(cell)
        trainer = self.d.trainers[t][0]
        cfg = self.config(cell)
        outd = Path(cfg["output_dir"])
        t0 = time.time()
        rc, _, log_file = ls.run_cell_trainer(trainer, cfg, self.out, cell, self.d.threads)
        run = ls.read_json(outd / "run.json") or {}
        if rc != 0 or run.get("status") != "finished":
            tail = log_file.read_text(errors="replace")[-1500:]
            raise RuntimeError(f"trainers.{trainer} exited {rc} (run.json status {run.get('status')!r}):\n{tail}")
        samples = ls.copy_train_samples(outd, self.out / "train_samples", cell)
        metrics = self.out / "metrics" / f"{cell}.jsonl"
        metrics.parent.mkdir(parents=True, exist_ok=True)
        if (outd / "metrics.jsonl").is_file():
            metrics.write_text((outd / "metrics.jsonl").read_text())
        shown = {k: (Path(v).relative_to(ROOT).as_posix() if isinstance(v, str) and v.startswith(str(ROOT)) else v)
                 for k, v in cfg.items()}
        return {"seconds": round(time.time() - t0, 1), "trainer": trainer, "global_step": run.get("global_step"),
                "train_samples": None if samples is None else samples.relative_to(self.out).as_posix(),
                "metrics": metrics.relative_to(self.out).as_posix(), "config": shown,
                **{k: run[k] for k in ("generation_cap", "truncation", "start_check", "peak_rss_gb") if k in run}}

    def run(self, max_cells: int | None = None, only: set | None = None, log=print) -> dict:
        ls = _ls()
        lock = ls.take_lock(self.out / ".sanity.lock")
        ran = {}
        try:
            self.choose_pool(log=log)
            for cell in cells(self.d):
                if only and cell not in only:
                    continue
                if max_cells is not None and len(ran) >= max_cells:
                    break
                prev = ls.read_json(self.record_path(cell)) or {}
                if prev.get("status") == "done":
                    continue
                log(f"[sanity] cell {cell} ({len(ran) + 1}{'' if max_cells is None else f' of {max_cells}'})")
                rec = {"cell": cell, "tries": int(prev.get("tries", 0)) + 1}
                try:
                    rec.update(self.run_cell(cell), status="done")
                except Exception as e:  # noqa: BLE001 - recorded; the next start retries it
                    rec.update(status="crashed", error=f"{type(e).__name__}: {e}"[-3000:])
                    log(f"[sanity] cell {cell} crashed: {type(e).__name__}: {str(e)[:300]}")
                rec["finished"] = time.time()
                ls.write_json(self.record_path(cell), rec)
                ran[cell] = rec["status"]
        finally:
            lock.unlink(missing_ok=True)
        return ran

    # ---- the summary
    def samples(self, cell: str) -> list[dict]:
        rec = _ls().read_json(self.record_path(cell)) or {}
        if rec.get("status") != "done" or not rec.get("train_samples"):
            return []
        path = self.out / rec["train_samples"]
        import gzip

        text = (gzip.decompress(path.read_bytes()).decode("utf-8") if path.name.endswith(".gz")
                else path.read_text(encoding="utf-8"))
        return [json.loads(x) for x in text.splitlines() if x.strip()]

    def curves(self) -> dict:
        """trainer -> arm -> seed -> problem -> training reward per visit, from the done cells."""
        out: dict = {}
        for cell in cells(self.d):
            recs = self.samples(cell)
            if recs:
                t, arm, seed = parse_cell(cell)
                out.setdefault(t, {}).setdefault(arm, {})[seed] = visit_rewards(recs, t)
        return out

    def summarise(self, iters: int = 10000) -> list[dict]:
        cur = self.curves()
        rows = {}
        for t in self.d.trainers:
            arms = cur.get(t, {})
            seeds = sorted(set(arms.get("real", {})) & set(arms.get("control", {})))
            if not seeds:
                rows[t] = {"problems": 0, "change": math.nan, "control_change": math.nan, "p": math.nan, "seeds": 0}
                continue
            rows[t] = verdict_seeds([arms["real"][s] for s in seeds], [arms["control"][s] for s in seeds], iters=iters)
        out = decide(rows)
        self._write_summary(out)
        self._plot(cur)
        return out

    def _write_summary(self, rows: list[dict]) -> None:
        import csv

        cols = ("trainer", "problems", "seeds", "change", "control_change", "p", "p_holm", "rules_met", "pass")
        self.out.mkdir(parents=True, exist_ok=True)
        with open(self.out / "summary.csv", "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            for r in rows:
                w.writerow({k: (f"{r[k]:.4f}" if isinstance(r[k], float) else r[k]) for k in cols})
        f = lambda x: "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.3f}"  # noqa: E731
        lines = ["# The learns-at-all test (issue 50 item 3)", "",
                 "Made by `python studies/learning_sanity.py --summarise` from the done cells; the rule is "
                 "docs/learning_study.md's (change >= +0.10, change - control change >= 0.10, Holm p < 0.05, "
                 ">= 2 seeds per arm with rules 1 and 2 in every seed).", "",
                 "| trainer | problems | seeds | change | control change | p | p (Holm) | rules met | pass |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            p = "-" if r["p"] is None or r["p"] != r["p"] else f"{r['p']:.4f}"
            lines.append(f"| {r['trainer']} | {r['problems']} | {r['seeds']} | {f(r['change'])} | "
                         f"{f(r['control_change'])} | {p} | {r['p_holm']:.4f} | {r['rules_met']} | {r['pass']} |")
        (self.out / "summary.md").write_text("\n".join(lines) + "\n")

    def _plot(self, cur: dict) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = list(self.d.trainers)
        fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), squeeze=False)
        for ax, t in zip(axes[0], names):
            for arm, colour in (("real", "tab:blue"), ("control", "tab:grey")):
                for seed, probs in sorted(cur.get(t, {}).get(arm, {}).items()):
                    v = max((len(x) for x in probs.values()), default=0)
                    ys = [sum(x[i] for x in probs.values() if len(x) > i) / max(1, sum(len(x) > i for x in probs.values()))
                          for i in range(v)]
                    ax.plot(range(1, v + 1), ys, color=colour, marker="o", ms=3,
                            ls="-" if seed == 0 else "--", label=f"{arm} s{seed}")
            ax.set_title(t)
            ax.set_xlabel("visit")
            ax.set_ylim(0, 1)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("training reward (mean over the pool)")
        axes[0][-1].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(self.out / "curves.png", dpi=110)
        plt.close(fig)

    # ---- the plan
    def plan(self) -> str:
        ls = _ls()
        pool = ls.read_json(self.out / "pool.json")
        n = len(pool["chosen"]) if pool else self.d.problems
        lines = [f"pool: {'chosen, ' + str(n) + ' problems' if pool else 'not chosen yet (--pool)'}; "
                 f"{self.d.visits} visits; seeds {list(self.d.seeds)}",
                 "| cell | status | estimate (CPU min) | measured (min) |", "|---|---|---|---|"]
        for cell in cells(self.d):
            t, _, _ = parse_cell(cell)
            est = n * self.d.visits * self.d.est_visit_s[self.d.trainers[t][0]] / 60
            rec = ls.read_json(self.record_path(cell)) or {}
            got = f"{rec['seconds'] / 60:.1f}" if rec.get("seconds") else "-"
            lines.append(f"| {cell} | {rec.get('status', 'pending')} | {est:.0f} | {got} |")
        return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--start", default=None, help="the mixture SFT adapter folder (default: the committed parts, "
                    "else studies/mixture_sft.py's runs/sft_mix/final)")
    ap.add_argument("--pool", action="store_true", help="choose the pool only (the pilot's first part)")
    ap.add_argument("--plan", action="store_true")
    ap.add_argument("--summarise", action="store_true")
    ap.add_argument("--max_cells", type=int, default=None)
    ap.add_argument("--cells", default="", help="comma-separated cells to run (default: every pending one)")
    ap.add_argument("--visits", type=int, default=None, help="override V (the pilot's timing run: 1 or 2)")
    ap.add_argument("--problems", type=int, default=None, help="override P")
    ap.add_argument("--threads", type=int, default=None)
    a = ap.parse_args(argv)
    d = FULL_DESIGN
    for k in ("visits", "problems", "threads"):
        if getattr(a, k) is not None:
            d = replace(d, **{k: getattr(a, k)})
    s = Sanity(Path(a.out), d, start=a.start)
    if a.plan:
        print(s.plan())
        return 0
    if a.pool:
        rec = s.choose_pool()
        print(json.dumps({k: rec[k] for k in ("candidates", "chosen", "short", "seconds", "chosen_kinds")}, indent=1))
        return 0
    if a.summarise:
        for r in s.summarise():
            print(r)
        return 0
    ran = s.run(max_cells=a.max_cells, only=set(filter(None, a.cells.split(","))) or None)
    print(json.dumps(ran, indent=1))
    return 0 if all(v == "done" for v in ran.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
