"""`r3bench demo`: the embedded default main job.

It runs what the project has so far, end to end, on data embedded in the package: the unit-aware
answer checker over a table of physics answer pairs with human labels, and (when the seven-tag
module is present) a seven-tag reference solution parsed and its final answer checked. Results go
to `<out>/check.md` and `<out>/check.jsonl`. Later stages (lm-eval tasks on SmolLM2, SFT, stepfix,
leaderboard) join this job as they are built.
"""
from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path

from tqdm import tqdm


def load_pairs() -> list[dict]:
    """The embedded labelled answer pairs (package data)."""
    text = resources.files("r3bench").joinpath("demo_pairs.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def check_table(pairs: list[dict]) -> list[dict]:
    """Check every pair; each row carries the verdict, the label and the time taken."""
    from verifiers import check

    rows = []
    for p in tqdm(pairs, desc="checking answer pairs", unit="pair"):
        t0 = time.perf_counter()
        v = check(p["pred"], p["ref"], kind=p.get("kind"))
        rows.append({**p, **v.to_dict(), "agrees": v.equivalent == p["label"],
                     "ms": round(1000 * (time.perf_counter() - t0), 2)})
    return rows


def _md_table(rows: list[dict]) -> str:
    def cell(s) -> str:
        return str(s).replace("|", "\\|").replace("\n", " ")[:70]

    out = ["| what | pred | ref | kind | equivalent | label | reason |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {cell(r['what'])} | `{cell(r['pred'])}` | `{cell(r['ref'])}` | {r['kind']} | "
                   f"{r['equivalent']} | {r['label']} | {cell(r['reason'])} |")
    return "\n".join(out)


def seventag_check() -> dict | None:
    """Parse the embedded seven-tag example solution and check its boxed final answer."""
    try:
        from r3bench import seventag
    except ImportError:
        return None
    from verifiers import check

    parsed = seventag.parse(seventag.EXAMPLE_SOLUTION)
    fa = parsed.final_answer or ""
    return {"n_steps": parsed.n, "format_problems": list(parsed.problems), "final_answer": fa.strip(),
            "format_compliance": seventag.format_compliance(seventag.EXAMPLE_SOLUTION)}


def run(out_dir: str = "results/demo", data_dir: str | None = None) -> int:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = check_table(load_pairs())
    agree = sum(r["agrees"] for r in rows)
    with open(out / "check.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    table = _md_table(rows)
    summary = f"checker agreement with labels: {agree}/{len(rows)}"
    st = seventag_check()
    parts = ["# r3bench demo", "", "## Unit-aware answer checker", "", table, "", summary, ""]
    if st is not None:
        parts += ["## Seven-tag example solution", "", "```json", json.dumps(st, indent=2), "```", ""]
    (out / "check.md").write_text("\n".join(parts), encoding="utf-8")
    print(table)
    print()
    print(summary)
    if st is not None:
        print(f"seven-tag example: n={st['n_steps']} steps, compliance={st['format_compliance']:.2f}, "
              f"final answer {st['final_answer']!r}")
    from r3bench.data import summary_table

    dt, errors = summary_table(data_dir)
    if dt is not None:
        print()
        print(dt)
        with open(out / "check.md", "a", encoding="utf-8") as fh:
            fh.write("\n## Benchmarks in the data directory\n\n" + dt + "\n")
    for e in errors:
        print(f"data: {e}")
    print(f"wrote {out / 'check.md'} and {out / 'check.jsonl'}")
    return 0 if agree == len(rows) else 1
