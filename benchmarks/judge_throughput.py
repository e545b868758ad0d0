"""Judge throughput against a real OpenAI-compatible server: `python benchmarks/judge_throughput.py`.

Serves the packaged SmolLM2 GGUF with llama-cpp-python's server (r3bench.core.models.serve_gguf) and
verifies the same procgen solutions at each concurrency level with a fresh cache (nothing is free),
recording verdicts per minute, parse failures (replies asked again), drops by cause, tokens and the
structured-output form the judge settled on. A 135M judge judges badly: this measures the plumbing.
llama.cpp's server answers one request at a time unless started with parallel slots, so on it more
concurrency buys overlap of network and parsing only; against OpenAI or `vllm serve` it is the lever.
Writes benchmarks/results/judge/summary.md and results.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from r3bench import procgen  # noqa: E402
from r3bench.core import models  # noqa: E402
from verifiers.judge import Judge  # noqa: E402


def run(url: str, rows: list[dict], concurrency: int, reply_tokens: int) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        j = Judge(base_url=url, model="smollm2-gguf", api_key="none", cache_dir=cache, backoff_s=0.2,
                  max_concurrency=concurrency, max_reply_tokens=reply_tokens)
        t0 = time.perf_counter()
        vs = j.verify_many(rows)
        wall = time.perf_counter() - t0
        st = j.stats()
    return {"concurrency": concurrency, "n": len(rows), "wall_s": round(wall, 1),
            "verdicts_per_min": round(60 * st["verdicts"] / wall, 2), "valid": sum(v.valid for v in vs),
            "requests": st["requests"], "parse_failures": st["parse_failures"], "dropped": st["dropped"],
            "prompt_tokens": st["prompt_tokens"], "completion_tokens": st["completion_tokens"],
            "structured": st["structured"], "in_flight_max": st["in_flight_max"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8, help="solutions verified at each level")
    ap.add_argument("--levels", default="1,4,16")
    ap.add_argument("--threads", type=int, default=2, help="the server's threads")
    ap.add_argument("--reply_tokens", type=int, default=120)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "judge")
    a = ap.parse_args(argv)
    probs = procgen.generate(n=a.n, seed=11)
    rows = [{"question": p.question, "solution": p.solution, "reference": p.solution} for p in probs]
    load = os.getloadavg()[0]
    with models.serve_gguf(threads=a.threads) as url:
        res = [run(url, rows, int(c), a.reply_tokens) for c in a.levels.split(",")]
    load = max(load, os.getloadavg()[0])
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "results.json").write_text(json.dumps({"load_avg_1m_max": load, "cpus": os.cpu_count(),
                                                    "levels": res}, indent=1) + "\n")
    lines = ["# Judge throughput against llama-cpp-python's server (SmolLM2-135M GGUF)", "",
             f"`python benchmarks/judge_throughput.py --n {a.n} --levels {a.levels}`: {a.n} procgen solutions at each "
             f"level, fresh cache, server on {a.threads} threads; {os.cpu_count()} CPUs, 1-minute load average up to "
             f"{load:.1f} during the run (other jobs shared the cores: absolute rates are low and noisy).", "",
             "| concurrency | verdicts / min | valid | requests | parse failures | dropped | prompt tok | completion tok | structured | in flight (max) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in res:
        lines.append(f"| {r['concurrency']} | {r['verdicts_per_min']} | {r['valid']}/{r['n']} | {r['requests']} | "
                     f"{r['parse_failures']} | {sum(r['dropped'].values())} | {r['prompt_tokens']} | "
                     f"{r['completion_tokens']} | {r['structured']} | {r['in_flight_max']} |")
    (a.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
