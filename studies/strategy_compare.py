"""Accuracy and tokens per problem of CoT, RAG, Best-of-N and StepCo, scored by the same lm-eval tasks.

    python studies/strategy_compare.py --out studies/results/strategies --limit 8 \
        --tasks r3_procgen,r3_mmlu_high_structured --bon_n 10 --rounds 5 --psv_steps 30

One SmolLM2 (`--model`) is loaded once as an lm-eval HFLM and wrapped by each strategy
(r3bench/eval/strategies/), so every cell sees the same weights, chat template, prompts, `--limit`
problems and checker. The verifier of StepCo and of Best-of-N's score is a PSV trained first by
`python -m trainers.psv` for `--psv_steps` steps (exact labels from the procedural bank's train
split; the method as published: it sees no reference). Best-of-N's majority-vote pick is scored from
its trace with the task's own checker (same samples, second selector). Tokens are the inner model's
tokens: generated (what StepCo's claim is about) and prompt (re-read context) per problem.
Writes OUT/summary.json (resumable: finished cells are kept) and OUT/summary.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

METHODS = ("cot", "rag", "bestofn", "stepco")


def _psv(out: Path, model: str, steps: int) -> Path:
    psv = out / "psv" / "psv_model"
    if psv.is_dir():
        return psv
    cmd = [sys.executable, "-m", "trainers.psv", "--model", model, "--output_dir", str(out / "psv"),
           "--max_steps", str(steps), "--batch_size", "2", "--max_length", "512", "--procgen_n", "400", "--report_to", "none"]
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    return psv


def _vote_acc(trace: Path, docs: dict) -> float | None:
    from verifiers import check
    rows = [json.loads(x) for x in trace.read_text().splitlines()] if trace.is_file() else []
    oks = []
    for r in rows:
        if r.get("pick_vote") is None:
            oks.append(False)
            continue
        doc = docs[(r["task"], r["doc_id"])]
        text = r["rounds"][[x["sample"] for x in r["rounds"]].index(r["pick_vote"])]["response"]
        oks.append(check(text, doc["answer"], kind=doc["answer_kind"]).equivalent)
    return sum(oks) / len(oks) if oks else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="studies/results/strategies")
    ap.add_argument("--model", default="r3bench/smollm2-135m-instruct")
    ap.add_argument("--tasks", default="r3_procgen,r3_mmlu_high_structured")
    ap.add_argument("--limit", type=int, default=8)
    ap.add_argument("--max_gen_toks", type=int, default=320)
    ap.add_argument("--batch_size", type=int, default=8)
    ap.add_argument("--bon_n", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--psv_steps", type=int, default=30)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--only", default=",".join(METHODS))
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    summary_path = out / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {"cells": {}}
    summary["settings"] = {k: v for k, v in vars(a).items() if k not in ("out", "only")}
    psv = _psv(out, a.model, a.psv_steps) if {"stepco", "bestofn"} & set(a.only.split(",")) else None

    from lm_eval import simple_evaluate
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    from r3bench.core import models
    from r3bench.eval import retrieval
    from r3bench.eval.strategies import BestOfNLM, RagLM, StepCoLM

    path = str(models.resolve(a.model)) if models.is_short_name(a.model) else a.model
    inner = HFLM(pretrained=path, tokenizer=path, device="cpu", batch_size=a.batch_size)
    index = out / "rag-index"
    if "rag" in a.only and not (index / retrieval.MANIFEST).is_file():
        retrieval.build(index)
    tm = TaskManager()
    for task in a.tasks.split(","):
        for method in a.only.split(","):
            key = f"{task}/{method}"
            if key in summary["cells"]:
                print(f"{key}: done before, kept", flush=True)
                continue
            trace = out / "traces" / f"{method}_{task}.jsonl"
            trace.parent.mkdir(parents=True, exist_ok=True)
            trace.unlink(missing_ok=True)
            lm = {"cot": lambda: inner,
                  "rag": lambda: RagLM(inner=inner, k=a.k, index=str(index), trace=str(trace)),
                  "bestofn": lambda: BestOfNLM(inner=inner, n=a.bon_n, scorer="psv", psv_model=str(psv), trace=str(trace)),
                  "stepco": lambda: StepCoLM(inner=inner, verifier="psv", psv_model=str(psv), rounds=a.rounds,
                                             trace=str(trace))}[method]()
            print(f"== {key}", flush=True)
            t0 = time.time()
            res = simple_evaluate(model=lm, tasks=[task], task_manager=tm, limit=a.limit, apply_chat_template=True,
                                  gen_kwargs={"max_gen_toks": a.max_gen_toks}, bootstrap_iters=0, log_samples=True)
            wall = time.time() - t0
            r = res["results"][task]
            cell = {"task": task, "method": method, "n": len(res["samples"][task]), "acc": r["acc,none"],
                    "wall_s": round(wall, 1)}
            if method == "cot":
                tok = inner.tokenizer
                gens = [s["resps"][0][0] for s in res["samples"][task]]
                cell["gen_tokens_per_problem"] = sum(len(tok(g, add_special_tokens=False)["input_ids"])
                                                     for g in gens) / len(gens)
                cell["calls_per_problem"] = 1.0
                try:
                    ctxs = [s["arguments"]["gen_args_0"]["arg_0"] if isinstance(s["arguments"], dict)
                            else s["arguments"][0][0] for s in res["samples"][task]]  # file form / in-memory form
                    cell["prompt_tokens_per_problem"] = sum(len(tok(c, add_special_tokens=False)["input_ids"])
                                                            for c in ctxs) / len(ctxs)
                except (KeyError, TypeError, IndexError):
                    pass
            else:
                info = lm.get_model_info()["r3bench_strategy"]
                cell.update({k: info[k] for k in ("gen_tokens_per_problem", "prompt_tokens_per_problem",
                                                  "calls_per_problem")})
                cell["trace"] = str(trace.relative_to(out))
            if method == "bestofn":
                docs = {(task, s["doc_id"]): s["doc"] for s in res["samples"][task]}
                cell["acc_vote"] = _vote_acc(trace, docs)
            if method == "stepco":
                rows = [json.loads(x) for x in trace.read_text().splitlines()]
                cell["rounds_per_problem"] = sum(t["n_rounds"] for t in rows) / len(rows)
                cell["accepted"] = sum(t["stop"].startswith("accepted") for t in rows)
            summary["cells"][key] = cell
            summary_path.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
            print(json.dumps(cell), flush=True)
    (out / "summary.md").write_text(table(summary))
    print(table(summary))


def table(summary) -> str:
    s = summary.get("settings", {})
    lines = [f"# Strategies on {s.get('model')} (CPU), limit {s.get('limit')}, max_gen_toks {s.get('max_gen_toks')}",
             "",
             f"Best-of-N: n={s.get('bon_n')}, PSV score (min over steps); StepCo: PSV threshold 0.5, at most "
             f"{s.get('rounds')} revisions; PSV trained {s.get('psv_steps')} steps. Tokens are SmolLM2 tokens per problem.",
             "",
             "| task | method | n | acc | acc (vote) | generated tok/problem | prompt tok/problem | calls/problem | rounds | wall s |",
             "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"]
    order = {m: i for i, m in enumerate(METHODS)}
    for key, c in sorted(summary["cells"].items(), key=lambda kv: (kv[1]["task"], order.get(kv[1]["method"], 9))):
        f = lambda v, d=3: "" if v is None else (f"{v:.{d}f}" if isinstance(v, float) else str(v))  # noqa: E731
        lines.append(f"| {c['task']} | {c['method']} | {c['n']} | {f(c['acc'])} | {f(c.get('acc_vote'))} | "
                     f"{f(c.get('gen_tokens_per_problem'), 0)} | {f(c.get('prompt_tokens_per_problem'), 0)} | "
                     f"{f(c.get('calls_per_problem'), 1)} | {f(c.get('rounds_per_problem'), 1)} | {f(c.get('wall_s'), 0)} |")
    bon = {c["task"]: c for c in summary["cells"].values() if c["method"] == "bestofn"}
    sc = {c["task"]: c for c in summary["cells"].values() if c["method"] == "stepco"}
    for t in sorted(set(bon) & set(sc)):
        b, g = bon[t]["gen_tokens_per_problem"], sc[t]["gen_tokens_per_problem"]
        if b:
            lines.append(f"\n{t}: StepCo generated {100 * (1 - g / b):.1f}% fewer tokens per problem than "
                         f"Best-of-{s.get('bon_n')} (acc {sc[t]['acc']:.3f} vs {bon[t]['acc']:.3f}).")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
