"""Issue 51 item 2: sampling speed of the RL trainers' generation backends on this CPU, side by side in one
run, on the same prompts and the same policy (SmolLM2-135M-Instruct + the committed SFT start adapter).

    python benchmarks/gen_speed.py                          # batch 4 and 8, 400 new tokens, 2 rounds
    python benchmarks/gen_speed.py --batches 4 --rounds 1 --variants peft_fp32,merged_bf16

The prompts are the stepfix pool's own first attempts (y1: the problem as the trainer's user chat) and
revisions (y2: the problem, a first attempt and the revision request, so prompts of ~1,000 tokens, as in a
stepfix step). Every variant runs `trainers.generation.HFGenerator.generate` as the trainers do (sampled,
temperature 0.7, the call's seed), in rounds with the variants' order alternating, so drift in the
machine's speed falls on all of them. tokens/s = generated tokens (up to and including the end of turn)
/ wall seconds of the call. Variants:

* peft_fp32      the policy as it trains: a peft model with its LoRA unmerged, fp32 (main before this issue)
* merged_fp32    a copy of the policy with the LoRA merged into its weights, fp32
* merged_bf16    that copy in bfloat16 (this CPU has AMX-BF16; the trainers' `rollout_dtype: bfloat16`)
* peft_bf16      the policy as it trains with `bf16: true`: a bf16 base with its LoRA unmerged (peft keeps the
                 LoRA factors in fp32)
* static_*       the same with a static KV cache (preallocated; transformers' cache_implementation="static")

An anchor outside the trainers, on the same chats in the same run: llama.cpp, through llama-cpp-python's
OpenAI-compatible server (`r3bench.core.models.serve_gguf`, `--n_threads` = --threads). The batch's chats
go to /v1/chat/completions all at once, one request per chat from its own thread, as a user of the server
would send them (temperature 0.7 with transformers' other defaults: top_p 1, top_k 50, no min_p, no repeat
penalty; max_tokens = --max_new_tokens); tokens = the replies' `usage.completion_tokens` (the end of turn
not counted: up to one token a chat fewer than the HF count), tokens/s = their sum / wall seconds of the
whole batch. A failed request is recorded with its error. NOTE: llama-cpp-python's server (0.3.x) has
no parallel slots: one `Llama` object behind a lock decodes one request at a time (the others wait), so
this anchor is llama.cpp single-stream decoding, not the C++ llama-server's --parallel batching (that
binary is not built here). Each server starts once per run; its start (load + a first completion) is
reported on its own, outside tokens/s.

* llamacpp       the packaged SmolLM2-135M-Instruct GGUF, Q4_1: the BASE model (no SFT adapter), quantized
* llamacpp_f16   the same policy as the HF variants: the SFT start adapter merged, saved, converted to an
                 f16 GGUF by llama.cpp's convert_hf_to_gguf.py (--convert_hf_to_gguf; it ships in the
                 llama-cpp-python sdist: pip download llama-cpp-python==0.3.36 --no-deps --no-binary :all:,
                 vendor/llama.cpp/; needs the `gguf` package; runs offline). f16 (llama.cpp's usual
                 unquantized format) rather than bf16: this CPU build of llama.cpp reports F16C but no
                 AVX512-BF16, so f16 is the full-precision type with native conversion here

The default variants include llamacpp when llama-cpp-python's server is importable, and llamacpp_f16 when
the conversion script is given too.

Writes benchmarks/results/gen_speed/summary.json and summary.md, with the load average of the run.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "gen_speed"
START = ROOT / "results" / "learning" / "sft_start"
VARIANTS = ("peft_fp32", "merged_fp32", "merged_bf16", "peft_bf16", "static_merged_fp32", "static_merged_bf16")
LLAMA_VARIANTS = ("llamacpp", "llamacpp_f16")
LLAMA_ALIAS = "policy"


def prompts(n: int) -> tuple[list, list]:
    """(y1 chats, y2 chats) of the stepfix pool's first n problems: y2's first attempt is the pool's
    reference solution (a stand-in of the policy's own y1, of about its length)."""
    from trainers import stepfix
    from trainers.core.data import user_chat

    cfg = stepfix.Config()
    data, _ = stepfix.dataset(cfg, log=lambda *a: None)
    rows = [data[i] for i in range(min(n, len(data)))]
    y1 = [user_chat(r["prompt"]) for r in rows]
    y2 = [user_chat(r["prompt"]) + [{"role": "assistant", "content": r["reference"]},
                                    {"role": "user", "content": "Step 3 has a calculation error: recompute it.\n\n"
                                                                + cfg.revise_instruction}] for r in rows]
    return y1, y2


def chat_one(url: str, chat: list, max_tokens: int, temperature: float = 0.7, seed: int | None = None,
             model: str = LLAMA_ALIAS, timeout_s: float = 3600.0) -> dict:
    """One chat completion from an OpenAI-compatible server: {"tokens": usage.completion_tokens,
    "finish_reason"} or {"tokens": 0, "error": "..."}; never raises."""
    body = {"model": model, "messages": chat, "max_tokens": max_tokens, "temperature": temperature,
            "top_p": 1.0, "top_k": 50, "min_p": 0.0, "repeat_penalty": 1.0}
    if seed is not None:
        body["seed"] = seed
    req = urllib.request.Request(url.rstrip("/") + "/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            reply = json.loads(r.read())
        return {"tokens": int(reply["usage"]["completion_tokens"]),
                "finish_reason": reply["choices"][0].get("finish_reason")}
    except Exception as e:  # noqa: BLE001 - a failed request is a result of the benchmark, not a crash
        return {"tokens": 0, "error": f"{type(e).__name__}: {e}"[:500]}


def chat_batch(url: str, chats: list, max_tokens: int, temperature: float = 0.7, seed: int = 0,
               model: str = LLAMA_ALIAS, timeout_s: float = 3600.0) -> dict:
    """All chats of a batch in flight together (one request per chat, each from its own thread):
    tokens = the sum of the replies' completion tokens, seconds = wall time of the whole batch."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, len(chats))) as pool:
        replies = list(pool.map(lambda ic: chat_one(url, ic[1], max_tokens, temperature, seed + ic[0], model,
                                                    timeout_s), enumerate(chats)))
    dt = time.perf_counter() - t0
    return {"tokens": sum(r["tokens"] for r in replies), "longest": max((r["tokens"] for r in replies), default=0),
            "seconds": dt, "errors": [r["error"] for r in replies if "error" in r]}


# convert_hf_to_gguf.py run with its own folder on sys.path; a model without tokenizer.model (SmolLM2's
# BPE) must not import sentencepiece (not installed here) on the way to the BPE vocabulary
_CONVERT = """
import runpy, sys
from pathlib import Path
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, str(Path(script).parent))
from conversion import base
orig = base.TextModel._create_vocab_sentencepiece
def _no_spm(self):
    if not (self.dir_model / "tokenizer.model").is_file():
        raise FileNotFoundError(self.dir_model / "tokenizer.model")
    return orig(self)
base.TextModel._create_vocab_sentencepiece = _no_spm
runpy.run_path(script, run_name="__main__")
"""


def policy_gguf(merged, tok, script: str, out_dir: Path, outtype: str = "f16") -> Path:
    """The merged policy as a GGUF file: saved as HF safetensors, converted by llama.cpp's script."""
    hf = out_dir / "merged_hf"
    merged.save_pretrained(hf)
    tok.save_pretrained(hf)
    gguf = out_dir / f"policy-{outtype}.gguf"
    r = subprocess.run([sys.executable, "-c", _CONVERT, script, str(hf), "--outtype", outtype, "--outfile", str(gguf)],
                       capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    if r.returncode != 0 or not gguf.is_file():
        raise RuntimeError(f"convert_hf_to_gguf.py failed (exit {r.returncode}):\n{(r.stdout + r.stderr)[-3000:]}")
    return gguf


def llama_available() -> str | None:
    """None when llama-cpp-python's server and the packaged GGUF are here, else why not."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("uvicorn") is None:
        return "llama-cpp-python's server is not installed (pip install 'r3bench[server]')"
    from r3bench.core import models
    try:
        models.gguf_path()
    except models.ModelError as e:
        return str(e)
    return None


def llama_lines(summary: list, variants: list, batches: list, server_start_s: dict) -> list:
    """The markdown's lines on the llama.cpp anchor: each server's start, and per cell the best HF
    variant's tokens/s over llama.cpp's."""
    lines = []
    for v in (v for v in variants if v in LLAMA_VARIANTS):
        st = server_start_s.get(v, {})
        lines.append(f"{v}: llama-cpp-python's server, which decodes one request at a time (no parallel slots; the "
                     f"batch's requests are sent together and queue); started in {st.get('start_s')} s"
                     + (f" after a {st.get('convert_s')} s conversion" if v == "llamacpp_f16" else "")
                     + " (not in tokens/s).")
        cells = []
        for b in batches:
            for kind in ("y1", "y2"):
                here = {s["variant"]: s for s in summary if s["batch"] == b and s["prompts"] == kind}
                hf = [s for s in here.values() if s["variant"] not in LLAMA_VARIANTS]
                if v in here and hf and here[v]["tokens_per_s"]:
                    best = max(hf, key=lambda s: s["tokens_per_s"])
                    cells.append(f"batch {b} {kind} {best['tokens_per_s'] / here[v]['tokens_per_s']:.2f}x "
                                 f"({best['variant']})")
                failed = here.get(v, {}).get("failed_requests")
                if failed:
                    cells.append(f"batch {b} {kind}: {failed} failed requests (summary.json)")
        lines.append(f"HF best / llama.cpp ({v}): " + ("; ".join(cells) or "-") + ".")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="4,8")
    ap.add_argument("--max_new_tokens", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--variants", default=None, help="default: the HF variants, and llama.cpp's where it can run")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--convert_hf_to_gguf", default=os.environ.get("LLAMA_CPP_CONVERT"),
                    help="llama.cpp's convert_hf_to_gguf.py (for llamacpp_f16; env LLAMA_CPP_CONVERT)")
    ap.add_argument("--llama_timeout_s", type=float, default=3600.0)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    import torch
    from peft import PeftModel

    from r3bench.core import models
    from trainers.core.model import load_base, load_tokenizer, model_path
    from trainers.generation import HFGenerator, Sampling

    torch.set_num_threads(a.threads)
    base = model_path("r3bench/smollm2-135m-instruct")
    tok = load_tokenizer(base)
    batches = [int(b) for b in a.batches.split(",")]
    y1, y2 = prompts(max(batches))
    notes = []
    why_not = llama_available()
    if a.variants is None:
        variants = list(VARIANTS)
        if why_not:
            notes.append(f"llama.cpp variants skipped: {why_not}")
        else:
            variants.append("llamacpp")
            if a.convert_hf_to_gguf:
                variants.append("llamacpp_f16")
            else:
                notes.append("llamacpp_f16 skipped: no --convert_hf_to_gguf (llama.cpp's convert_hf_to_gguf.py)")
    else:
        variants = a.variants.split(",")
        unknown = [v for v in variants if v not in VARIANTS + LLAMA_VARIANTS]
        if unknown:
            ap.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS + LLAMA_VARIANTS)}")
        if why_not and any(v in LLAMA_VARIANTS for v in variants):
            ap.error(why_not)
        if "llamacpp_f16" in variants and not a.convert_hf_to_gguf:
            ap.error("llamacpp_f16 needs --convert_hf_to_gguf (llama.cpp's convert_hf_to_gguf.py)")
    for n_ in notes:
        print(n_, flush=True)
    servers = {}  # llama variant -> base URL
    server_start_s = {}
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="r3gen-"))
        adapter = str(models.adapter_from_parts(START, Path(tmp) / "sft_start"))
        policy = PeftModel.from_pretrained(load_base(base), adapter, is_trainable=True)
        merged = PeftModel.from_pretrained(load_base(base), adapter).merge_and_unload().eval()
        merged_bf16 = PeftModel.from_pretrained(load_base(base), adapter).merge_and_unload().eval().to(torch.bfloat16)
        peft_bf16 = PeftModel.from_pretrained(load_base(base).to(torch.bfloat16), adapter, is_trainable=True)
        models_ = {"peft_fp32": policy, "merged_fp32": merged, "merged_bf16": merged_bf16, "peft_bf16": peft_bf16,
                   "static_merged_fp32": merged, "static_merged_bf16": merged_bf16}
        for v in (v for v in LLAMA_VARIANTS if v in variants):
            t0 = time.perf_counter()
            gguf = policy_gguf(merged, tok, a.convert_hf_to_gguf, Path(tmp)) if v == "llamacpp_f16" else None
            convert_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            servers[v] = stack.enter_context(models.serve_gguf(alias=LLAMA_ALIAS, threads=a.threads, model=gguf,
                                                               log=Path(tmp) / f"{v}.log"))
            server_start_s[v] = {"convert_s": round(convert_s, 1), "start_s": round(time.perf_counter() - t0, 1)}
            print(json.dumps({"server": v, **server_start_s[v]}), flush=True)
        rows = []
        load0 = os.getloadavg()[0]
        for rnd in range(a.rounds):
            for b in batches:
                order = variants if rnd % 2 == 0 else variants[::-1]
                for kind, chats in (("y1", y1[:b]), ("y2", y2[:b])):
                    for v in order:
                        seed = 1000 * rnd + b
                        if v in servers:
                            r = chat_batch(servers[v], chats, a.max_new_tokens, 0.7, seed, timeout_s=a.llama_timeout_s)
                            n, longest, dt, errors = r["tokens"], r["longest"], r["seconds"], r["errors"]
                        else:
                            gen = HFGenerator(cache_implementation="static" if v.startswith("static") else None)
                            sp = Sampling(max_new_tokens=a.max_new_tokens, temperature=0.7, seed=seed)
                            t0 = time.perf_counter()
                            out = gen.generate(models_[v], tok, chats, sp)
                            dt = time.perf_counter() - t0
                            n, longest, errors = sum(len(o) for o in out), max(len(o) for o in out), []
                        rows.append({"round": rnd, "batch": b, "prompts": kind, "variant": v, "tokens": n,
                                     "longest": longest, "seconds": round(dt, 2), "tokens_per_s": round(n / dt, 1)})
                        if errors:
                            rows[-1]["errors"] = errors
                        print(json.dumps(rows[-1]), flush=True)
        load1 = os.getloadavg()[0]
    table = {}
    for r in rows:
        table.setdefault((r["batch"], r["prompts"], r["variant"]), []).append(r)
    summary = []
    for (b, kind, v), rs in table.items():
        tok_s = sum(r["tokens"] for r in rs) / sum(r["seconds"] for r in rs)
        summary.append({"batch": b, "prompts": kind, "variant": v, "calls": len(rs), "tokens_per_s": round(tok_s, 1),
                        "per_call": [r["tokens_per_s"] for r in rs],
                        "failed_requests": sum(len(r.get("errors", ())) for r in rs)})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    meta = {"command": "python benchmarks/gen_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "commit": commit, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{os.cpu_count()} CPUs, torch {torch.__version__} threads {a.threads}",
            "load_avg_1min": [round(load0, 2), round(load1, 2)], "llama_server_start": server_start_s,
            "notes": notes}
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"meta": meta, "summary": summary, "calls": rows}, indent=1) + "\n")
    lines = ["# Generation speed of the RL trainers' sampling backends", "",
             f"`{meta['command']}` at {commit}, {meta['date']}; {meta['machine']}; load average {meta['load_avg_1min']}.",
             "SmolLM2-135M-Instruct + the SFT start adapter, sampled (temperature 0.7), up to "
             f"{a.max_new_tokens} new tokens; the stepfix pool's first attempts (y1) and revision prompts (y2).",
             "tokens/s over all calls of a cell (rounds alternate the variants' order); per call in brackets.", "",
             "| batch | prompts | " + " | ".join(variants) + " |", "|---|---|" + "---|" * len(variants)]
    for b in batches:
        for kind in ("y1", "y2"):
            cells = {s["variant"]: s for s in summary if s["batch"] == b and s["prompts"] == kind}
            ref = cells.get(variants[0], {}).get("tokens_per_s") or 1
            lines.append(f"| {b} | {kind} | " + " | ".join(
                f"{cells[v]['tokens_per_s']} ({cells[v]['tokens_per_s'] / ref:.2f}x)" if v in cells else "-"
                for v in variants) + " |")
    lines += [""] + llama_lines(summary, variants, batches, server_start_s) + notes
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
