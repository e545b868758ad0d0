"""Build the RAG baseline's retrieval index (persistent ChromaDB, all-MiniLM-L6-v2).

    python -m trainers.rag [--out DIR] [--solutions FILE.jsonl | --procgen_n N] [--procgen_seed S]

Indexes r3bench's formula corpus and, optionally, worked solutions: a JSONL file with question and
solution (or prompt and completion, as in the SFT export) fields, or the train split of the
procedural bank (`--procgen_n`). The index is then used as
`lm_eval --model r3-rag --model_args inner=hf,pretrained=...,k=3,index=DIR[,source=formulas|solutions|all]`.
Nothing is trained: the RAG baseline changes the prompt, not the weights. Exit 1 on bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from r3bench import procgen
from r3bench.eval import retrieval
from trainers.core.data import read_jsonl


def solution_rows(path: str | None = None, procgen_n: int = 0, procgen_seed: int = 0) -> list[dict]:
    if path:
        rows = read_jsonl(Path(path))
        out = []
        for i, r in enumerate(rows):
            q, s = r.get("question") or r.get("prompt"), r.get("solution") or r.get("completion")
            if not q or not s:
                raise ValueError(f"{path}: row {i + 1} has no question/prompt or no solution/completion")
            out.append({"id": str(r.get("id") or f"row-{i}"), "question": q, "solution": s})
        return out
    if procgen_n:
        return [{"id": p.id, "question": p.question, "solution": p.solution}
                for p in procgen.generate(n=procgen_n, seed=procgen_seed) if p.split == "train"]
    return []


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m trainers.rag", description=__doc__.split("\n")[0], allow_abbrev=False)
    ap.add_argument("--out", default=None, help=f"index folder (default: {retrieval.default_path()}, or R3BENCH_RAG_INDEX)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--solutions", default=None, help="JSONL of worked solutions (question+solution or prompt+completion)")
    src.add_argument("--procgen_n", type=int, default=0, help="index the train split of a procedural bank of N problems")
    ap.add_argument("--procgen_seed", type=int, default=0)
    a = ap.parse_args(argv)
    t0 = time.time()
    try:
        rows = solution_rows(a.solutions, a.procgen_n, a.procgen_seed)
        m = retrieval.build(a.out, solutions=rows or None, log=lambda s: print(s, file=sys.stderr, flush=True))
    except (ValueError, OSError) as e:  # TrainDataError (a corrupt JSONL file) is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 1
    m["path"] = str(a.out or retrieval.default_path())
    m["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(m, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
