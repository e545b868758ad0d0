"""Trainer throughput against this machine's limit, and peak memory of each trainer, in one run.

    python benchmarks/throughput.py [--model r3bench/smollm2-135m-instruct] [--steps 4] [--only sft,bare,...]
                                    [--out benchmarks/results/throughput]

Every measurement runs in its own process (so its peak resident memory, ru_maxrss, is its own),
one after the other, on the procedural bank's SFT export (seed 0, `--procgen_n` problems; sequences
of ~525-776 tokens with SmolLM2's chat template):

* sft    the SFT trainer (trainers.sft.build + Trainer.train, its defaults unless flags say
         otherwise) for `--warmup` + `--steps` optimizer steps; tokens/s = non-padding tokens of
         the timed steps / wall seconds between the end of the last warm-up step and the end of the
         last step (data loading, collation, logging and the optimizer included). The batches it
         trained on are saved for:
* bare   a bare torch loop over exactly those batches: the same model, LoRA (config and seed),
         dtype and gradient-checkpointing setting; model(input_ids, attention_mask, labels).loss,
         backward, AdamW step, zero_grad; nothing else. SFT/bare is the ratio the issue asks for.
* stepfix one optimizer step (after `--stepfix_warmup` steps) at `--stepfix_batch` problems with
         `--stepfix_tokens` new tokens per solution, from a fresh LoRA on the base model (which
         writes no end-of-turn within 300 tokens, so every y1 and y2 is that long); step seconds and
         the shares of generation, verification, feedback, policy forward, reference forward and
         backward from the trainer's own log. Beside it, HF generate at the same batch (greedy,
         `--gen_tokens` tokens) with the LoRA merged for the call and unmerged.
* dpo, grpo, psv: `--other_steps` steps at their default batch: seconds per step and peak memory.

Writes OUT/summary.json and OUT/summary.md. The CPU may be shared with other processes while this
runs; the summary records the load average before and after each measurement.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KINDS = ("sft", "bare", "stepfix", "dpo", "grpo", "psv")


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9  # Linux: KiB


def _quiet():
    import logging

    import transformers

    transformers.logging.set_verbosity_error()
    logging.getLogger("r3bench").setLevel(logging.ERROR)


def _base_kw(a, out: Path) -> dict:
    return dict(model=a.model, data=a.data, output_dir=str(out), save_steps=10**6, eval_tasks="",
                report_to="none", logging_steps=1, seed=0)


def _sft_overrides(a) -> dict:
    kw = {}
    for k in ("batch_size", "max_length", "lora_dropout", "grad_accum"):
        v = getattr(a, k)
        if v is not None:
            kw[k] = v
    if a.gradient_checkpointing is not None:
        kw["gradient_checkpointing"] = a.gradient_checkpointing
    return kw


# ------------------------------------------------------------------------------------ children

def child_sft(a, work: Path) -> dict:
    import torch
    from transformers import TrainerCallback

    from trainers import sft
    from trainers.core.config import make

    cfg = make(sft.Config, **_base_kw(a, work / "sft"), max_steps=a.warmup + a.steps, **_sft_overrides(a))
    trainer = sft.build(cfg)[0]
    ends, batches = [], []
    inner = trainer.training_step

    def training_step(model, inputs, num_items_in_batch=None):
        batches.append({k: v.detach().clone() for k, v in inputs.items() if torch.is_tensor(v)})
        return inner(model, inputs, num_items_in_batch)

    trainer.training_step = training_step

    class Ends(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            ends.append(time.perf_counter())

    trainer.add_callback(Ends())
    trainer.train()
    torch.save(batches, work / "sft_batches.pt")
    timed = batches[a.warmup * cfg.grad_accum:]
    secs = ends[-1] - ends[a.warmup - 1]
    tokens = sum(int(b["attention_mask"].sum()) for b in timed)
    padded = sum(int(b["input_ids"].numel()) for b in timed)
    return {"config": {k: getattr(cfg, k) for k in ("batch_size", "grad_accum", "max_length", "lora_r", "lora_dropout",
                                                     "gradient_checkpointing")},
            "steps": a.steps, "seconds": secs, "sec_per_step": secs / a.steps, "tokens": tokens,
            "padded_tokens": padded, "tokens_per_s": tokens / secs, "keys": sorted(timed[0])}


def child_bare(a, work: Path) -> dict:
    import torch

    from trainers import sft
    from trainers.core.config import make
    from trainers.core.model import model_path, policy_model

    cfg = make(sft.Config, **_base_kw(a, work / "bare"), max_steps=1, **_sft_overrides(a))
    model = policy_model(cfg, model_path(cfg.model))
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.learning_rate)
    batches = torch.load(work / "sft_batches.pt")
    t, ga = [], cfg.grad_accum
    for i, b in enumerate(batches):
        out = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"], labels=b["labels"], use_cache=False)
        (out.loss / ga).backward()
        if (i + 1) % ga == 0:
            opt.step()
            opt.zero_grad(set_to_none=True)
        t.append(time.perf_counter())
    timed = batches[a.warmup * cfg.grad_accum:]
    secs = t[-1] - t[a.warmup * cfg.grad_accum - 1]
    tokens = sum(int(b["attention_mask"].sum()) for b in timed)
    return {"steps": a.steps, "seconds": secs, "sec_per_step": secs / a.steps, "tokens": tokens,
            "tokens_per_s": tokens / secs}


def _gen_bench(model, tok, n: int, tokens: int) -> dict:
    from trainers import generation

    chats = [[{"role": "user", "content": f"Explain step {i} of Newton's second law in detail."}] for i in range(n)]
    sp = generation.Sampling(max_new_tokens=tokens, do_sample=False)
    res = {}
    for merge in (True, False):
        g = generation.HFGenerator(merge_lora=merge)
        t0 = time.perf_counter()
        ids = g.generate(model, tok, chats, sp)
        dt = time.perf_counter() - t0
        res["merged" if merge else "unmerged"] = {"seconds": dt, "new_tokens": sum(map(len, ids)),
                                                  "tokens_per_s": sum(map(len, ids)) / dt}
    return res


def child_stepfix(a, work: Path) -> dict:
    from trainers import stepfix
    from trainers.core.config import make

    out = work / "stepfix"
    cfg = make(stepfix.Config, **_base_kw(a, out), max_steps=a.stepfix_warmup + 1, batch_size=a.stepfix_batch,
                      max_new_tokens=a.stepfix_tokens, max_length=4096)
    trainer, tok, _, _ = stepfix.build(cfg)
    gen = _gen_bench(trainer.model, tok, a.stepfix_batch, a.gen_tokens) if a.gen_tokens else None
    trainer.train()
    logs = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    last = [d for d in logs if "loss" in d and "time_step_s" in d][-1]
    recs = [json.loads(x) for x in (out / "stepfix_samples.jsonl").read_text().splitlines()]
    recs = [r for r in recs if r["step"] == last["step"]]
    ntok = [len(tok(r[k], add_special_tokens=False)["input_ids"]) for r in recs for k in ("y1", "y2") if k in r]
    parts = ("generate", "verify", "feedback", "forward", "ref_forward", "backward")
    return {"config": {"batch_size": cfg.batch_size, "max_new_tokens": cfg.max_new_tokens,
                       "gradient_checkpointing": cfg.gradient_checkpointing, "init_adapter": cfg.init_adapter or None},
            "step_seconds": last["time_step_s"], "seconds": {k: last.get(f"time_{k}_s") for k in parts},
            "shares": {k: last.get(f"share_{k}") for k in parts}, "revised": last.get("revised"),
            "completions": len(ntok), "mean_completion_tokens": statistics.mean(ntok) if ntok else None,
            "generate_tokens_per_s": sum(ntok) / last["time_generate_s"] if ntok else None, "generation_bench": gen}


def child_other(a, work: Path, kind: str) -> dict:
    from transformers import TrainerCallback

    from trainers import dpo, grpo, psv
    from trainers.core.config import make

    mod = {"dpo": dpo, "grpo": grpo, "psv": psv}[kind]
    kw = _base_kw(a, work / kind)
    if kind == "psv":
        kw.update(data="", procgen_n=a.procgen_n, max_train_samples=64)
    cfg = make(mod.Config, **kw, max_steps=a.other_steps)
    trainer = mod.build(cfg)[0]
    ends = []

    class Ends(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            ends.append(("b", time.perf_counter()))

        def on_step_end(self, args, state, control, **kw):
            ends.append(("e", time.perf_counter()))

    trainer.add_callback(Ends())
    trainer.train()
    begins = [t for k, t in ends if k == "b"]
    stops = [t for k, t in ends if k == "e"]
    per = [e - b for b, e in zip(begins, stops)]
    return {"config": {"batch_size": cfg.batch_size, "max_length": cfg.max_length,
                       "gradient_checkpointing": cfg.gradient_checkpointing},
            "steps": len(per), "sec_per_step": statistics.mean(per), "sec_first_step": per[0]}


# ------------------------------------------------------------------------------------- parent

def run_child(kind: str, argv: list[str], work: Path, timeout: int) -> dict:
    load0 = os.getloadavg()[0]
    t0 = time.time()
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, "--work", str(work), *argv]
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "TOKENIZERS_PARALLELISM": "false"}
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    res = {"wall_seconds": round(time.time() - t0, 1), "load_before": round(load0, 2),
           "load_after": round(os.getloadavg()[0], 2)}
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if r.returncode != 0 or not last.startswith("{"):
        res["error"] = f"exit {r.returncode}: {r.stderr.strip()[-1500:]}"
        return res
    res.update(json.loads(last))
    return res


def _shown(argv: str) -> str:
    """The command line as recorded: without --out and its folder (a path of the machine it ran on)."""
    parts, out = argv.split(), []
    skip = False
    for x in parts:
        if skip:
            skip = False
        elif x == "--out":
            skip = True
        elif not x.startswith("--out="):
            out.append(x)
    return " ".join(out)


def _short_error(err: str) -> str:
    """An error for the summary: a killed measurement says so; otherwise the last line, without paths."""
    import re

    if err.startswith(("exit -15", "exit -9")):
        return "stopped before it finished (killed)"
    last = err.strip().splitlines()[-1] if err.strip() else err
    return re.sub(r"(/[^\s/:]+)+/", "", last)[:200]


def _f(x, nd=1):
    return "-" if x is None else (f"{x:.{nd}f}" if isinstance(x, float) else str(x))


def write_summary(out: Path, res: dict, meta: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"meta": meta, "results": res}, indent=1, default=str))
    head = (f"Merged from the runs listed at the end; {meta['cpus']} CPUs, model {meta['model']}." if meta.get("merged")
            else f"`python benchmarks/throughput.py {meta['argv']}` at {meta['git_commit'][:10]}, {meta['when']}; "
                 f"{meta['cpus']} CPUs, torch {meta['torch_threads']} threads, model {meta['model']}.")
    thr = sorted({r.get("malloc_mmap_threshold") for r in res.values() if "malloc_mmap_threshold" in r})
    if thr:
        head += " malloc mmap threshold in each measurement: " + ", ".join(
            f"{t} bytes" if t else "glibc's dynamic default" for t in thr) + "."
    L = ["# Trainer throughput and peak memory", "", head + " Other processes may share the CPU (load average "
         "before/after each row; about the torch thread count when nothing else runs): absolute speeds are "
         "lower bounds, ratios within one run are the figures to read.", ""]
    s = next((v for k, v in res.items() if k.split(" ")[0] == "sft" and "tokens_per_s" in v), {})
    b = next((v for k, v in res.items() if k.split(" ")[0] == "bare" and "tokens_per_s" in v), {})
    if "tokens_per_s" in s and "tokens_per_s" in b:
        L += [f"**SFT trainer / bare torch loop: {s['tokens_per_s'] / b['tokens_per_s']:.2f}** "
              f"({s['tokens_per_s']:.0f} vs {b['tokens_per_s']:.0f} non-padding tokens/s over the same "
              f"{s['steps']} batches; goal >= 0.70).", ""]
    L += ["| run | config | s/step | tokens/s | peak RSS GB | load before/after |", "|---|---|---|---|---|---|"]
    for k, r in res.items():
        if "error" in r:
            L.append(f"| {k} | - | error: {r['error'][:200].replace('|', '/')} | - | - | - |")
            continue
        cfg = ", ".join(f"{a}={v}" for a, v in (r.get("config") or {}).items())
        sps = r.get("sec_per_step", r.get("step_seconds"))
        tps = r.get("tokens_per_s", r.get("generate_tokens_per_s"))
        L.append(f"| {k} | {cfg} | {_f(sps)} | {_f(tps, 0)} | {_f(r.get('peak_rss_gb'), 2)} | "
                 f"{r.get('load_before')}/{r.get('load_after')} |")
    for name, st in res.items():
        if name.split(" ")[0] != "stepfix" or "shares" not in st:
            continue
        L += ["", f"{name}: one step {st['step_seconds']:.1f} s at batch {st['config']['batch_size']}, "
              f"{st['completions']} completions of {_f(st['mean_completion_tokens'], 0)} tokens on average "
              f"(max_new_tokens {st['config']['max_new_tokens']}); generation {_f(st['generate_tokens_per_s'], 0)} "
              "new tokens/s. Shares of the step:", "",
              "| " + " | ".join(st["shares"]) + " |", "|" + "---|" * len(st["shares"]),
              "| " + " | ".join(f"{_f(v, 2)} ({_f(st['seconds'][k])} s)" for k, v in st["shares"].items()) + " |"]
        gb = st.get("generation_bench")
        if gb:
            L += ["", "HF generate at the same batch, greedy: " + "; ".join(
                f"LoRA {k}: {v['tokens_per_s']:.0f} tok/s ({v['new_tokens']} tokens, {v['seconds']:.1f} s)"
                for k, v in gb.items())]
    if meta.get("notes"):
        L += ["", *meta["notes"]]
    (out / "summary.md").write_text("\n".join(L) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0], allow_abbrev=False)
    ap.add_argument("--model", default="r3bench/smollm2-135m-instruct")
    ap.add_argument("--data", default="", help="procgen export folder (default: export one into a temp folder)")
    ap.add_argument("--procgen_n", type=int, default=200)
    ap.add_argument("--steps", type=int, default=4, help="timed SFT / bare optimizer steps")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--batch_size", type=int, default=None, help="SFT/bare batch (default: the SFT default)")
    ap.add_argument("--grad_accum", type=int, default=None)
    ap.add_argument("--max_length", type=int, default=None)
    ap.add_argument("--lora_dropout", type=float, default=None)
    ap.add_argument("--gradient_checkpointing", type=lambda s: s.lower() in ("1", "true", "yes"), default=None)
    ap.add_argument("--stepfix_batch", type=int, default=8)
    ap.add_argument("--stepfix_tokens", type=int, default=300)
    ap.add_argument("--stepfix_warmup", type=int, default=0)
    ap.add_argument("--gen_tokens", type=int, default=64, help="tokens of the generation bench (0 = skip it)")
    ap.add_argument("--other_steps", type=int, default=1)
    ap.add_argument("--malloc_mmap_threshold", type=int, default=None,
                    help="bytes, as the trainers' option of that name (default: theirs, 1 MiB; 0 = glibc's dynamic default)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads in each measurement (0 = torch's default)")
    ap.add_argument("--only", default=",".join(KINDS), help=f"comma-separated subset of {KINDS}")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per measurement")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "throughput"))
    ap.add_argument("--merge", default="", help="LABEL=summary.json,...: write one summary from earlier runs' "
                    "summary.json files (rows named 'kind (LABEL)') instead of measuring")
    ap.add_argument("--note", default="", help="a paragraph added to the summary (with --merge)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--work", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.malloc_mmap_threshold is None:
        from trainers.core.config import BaseConfig
        from trainers.core.memory import apply_mmap_threshold

        a.malloc_mmap_threshold = BaseConfig().malloc_mmap_threshold
    if a.child:
        _quiet()
        from trainers.core.config import BaseConfig
        from trainers.core.memory import apply_mmap_threshold

        # what run_training applies first: the children call each trainer's `build` directly, and without
        # it measured glibc's dynamic default, a setting no trainer runs with
        malloc = apply_mmap_threshold(a.malloc_mmap_threshold)
        if a.threads:
            import torch

            torch.set_num_threads(a.threads)
        work = Path(a.work)
        fn = {"sft": child_sft, "bare": child_bare, "stepfix": child_stepfix}.get(a.child)
        res = fn(a, work) if fn else child_other(a, work, a.child)
        res["peak_rss_gb"] = round(_peak_rss_gb(), 3)
        res["malloc_mmap_threshold"] = malloc
        print(json.dumps(res, default=str))
        return 0

    if a.merge:
        res, notes, commits = {}, [], set()
        for item in a.merge.split(","):
            label, path = item.split("=", 1)
            d = json.loads(Path(path).read_text())
            if d["meta"].get("merged"):  # an earlier merged summary: its rows and notes as they are
                res.update(d["results"])
                commits.update(d["meta"]["git_commits"])
                notes += [n for n in d["meta"]["notes"] if n != "Runs merged:"]
                continue
            commits.add(d["meta"]["git_commit"][:10])
            notes.append(f"- {label}: `python benchmarks/throughput.py {_shown(d['meta']['argv'])}` at "
                         f"{d['meta']['git_commit'][:10]}, {d['meta']['when']}")
            for k, v in d["results"].items():
                if "error" in v:
                    v = {**v, "error": _short_error(v["error"])}
                res[f"{k} ({label})"] = v
        meta = {"merged": True, "git_commits": sorted(commits), "cpus": os.cpu_count(), "model": a.model,
                "notes": ["Runs merged:", *notes, *([a.note] if a.note else [])]}
        write_summary(Path(a.out), res, meta)
        return 0

    import torch

    kinds = [k.strip() for k in a.only.split(",") if k.strip()]
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        ap.error(f"--only: unknown {bad}; choose from {KINDS}")
    if "bare" in kinds and "sft" not in kinds:
        ap.error("bare replays the batches of the sft run: --only must include sft")
    work = Path(tempfile.mkdtemp(prefix="r3-throughput-"))
    passthrough = [x for x in (argv if argv is not None else sys.argv[1:])]
    if not a.data:
        from r3bench.procgen.export import export

        export(work / "data", n=a.procgen_n, seed=0, log=lambda *x: None)
        passthrough += ["--data", str(work / "data")]
    res = {}
    for k in kinds:
        print(f"[throughput] {k} ...", file=sys.stderr, flush=True)
        res[k] = run_child(k, passthrough, work, a.timeout)
        print(f"[throughput] {k}: {json.dumps(res[k], default=str)[:400]}", file=sys.stderr, flush=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    meta = {"argv": _shown(" ".join(argv if argv is not None else sys.argv[1:])), "git_commit": commit or "unknown",
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
            "torch_threads": a.threads or torch.get_num_threads(), "model": a.model, "procgen_n": a.procgen_n}
    write_summary(Path(a.out), res, meta)
    print(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
