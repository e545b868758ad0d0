"""Measure the step verifier and the rewards: `python benchmarks/verifier_report.py [--out DIR]`.

1. symbolic verifier on the hand-written held-out set (benchmarks/verifier_heldout.jsonl): first-error
   accuracy, class accuracy, ProcessBench F1 (harmonic mean of the accuracy on erroneous and on correct
   samples), and every miss listed;
2. the same on procgen's injected errors (fresh seed, every class at every step it is injected at);
3. the reward of each reward-hacking case (tests/test_reward_hacking.py) beside an honest wrong answer;
4. the reference-free mode on real JEEBench physics problems ($R3BENCH_DATA_DIR): hand-made seven-tag
   solutions (right and with a slip) and answer-only outputs for every problem, verdicts counted.
Writes DIR/summary.md and DIR/results.json (default benchmarks/results/verifier).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from r3bench import procgen, seventag  # noqa: E402
from verifiers.steps import report, verify  # noqa: E402


def heldout():
    rows = [json.loads(x) for x in (ROOT / "benchmarks" / "verifier_heldout.jsonl").read_text().splitlines() if x]
    rep = report(rows)
    misses = []
    for r in rows:
        v = verify(r["question"], r["solution"], r["reference"])
        if not (v.valid and v.first_error == r["first_error"] and v.error_class == r["error_class"]):
            misses.append(f"{r['id']} ({r['note']}): gold {r['first_error']} {r['error_class']}, got "
                          f"{v.first_error} {v.error_class} - {v.explanation[:120]}")
    return rep, misses


def injected(n=120, seed=2027):
    rows = []
    for p in procgen.generate(n=n, seed=seed):
        rows.append({"question": p.question, "solution": p.solution, "reference": p.solution, "first_error": 0,
                     "error_class": None})
        for cls, steps in procgen.CLASSES.items():
            for s in steps:
                try:
                    text, fe, c, _ = procgen.inject_problem(p, cls, s)
                except procgen.InjectError:
                    continue
                rows.append({"question": p.question, "solution": text, "reference": p.solution, "first_error": fe,
                             "error_class": c})
    return report(rows)


def hacking():
    spec = importlib.util.spec_from_file_location("hacks", ROOT / "tests" / "test_reward_hacking.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    names = list(m.HACKS)
    table = {}
    for rname, (f, cols) in m._rewards().items():
        vals = m._score(f, cols, [m.HONEST_WRONG, m.P.solution] + [m.HACKS[x] for x in names])
        table[rname] = dict(zip(["honest wrong", "honest right"] + names, vals))
    return table, names, m.STATES_RIGHT_ANSWER


JEE = {  # hand-made seven-tag solutions for real JEEBench problems (id -> right solution, slip solution)
    "jeebench-JEE_Adv_2018_Paper_2-12": seventag.render({
        "problem_analysis": "The problem asks for the decrease in internal energy (dU) in joule.",
        "principle": "Adiabatic expansion of a monatomic ideal gas: T V^(gamma - 1) stays constant, gamma = 5/3; "
                     "the internal energy is (3/2) n R T.",
        "governing_equation": "T2 = T1/8^(2/3)\ndU = 1.5*n*R*(T1 - T2)",
        "value_identification": "T1 = 100 K\nn = 1 mol\nR = 8.0 J/(mol*K)",
        "substitution": "T2 = 100/8^(2/3)\ndU = 1.5*1*8.0*(100 - 25)",
        "calculation": "T2 = 25 K\ndU = 900 J",
        "final_answer": "\\boxed{900}"}),
}


def reference_free():
    from r3bench import data

    recs = {r.id: r for r in data.load("jeebench")}
    counts, rows = Counter(), []
    for rid, sol in JEE.items():
        r = recs[rid]
        slip = sol.replace("dU = 900 J", "dU = 1200 J").replace("\\boxed{900}", "\\boxed{1200}")
        for label, text in (("hand-made right", sol), ("hand-made slip", slip)):
            v = verify(r.question, text, str(r.answer))
            rows.append((rid, label, v.first_error, v.error_class, v.valid, v.explanation[:140]))
            counts[(label, v.error_class if v.valid else "no verdict", v.first_error)] += 1
    for r in recs.values():  # answer-only outputs and the gold answer wrapped as the last step only
        v = verify(r.question, f"\\boxed{{{r.answer}}}", str(r.answer))
        counts[("answer only", v.error_class if v.valid else "no verdict", v.first_error)] += 1
    return rows, counts, len(recs)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "verifier"))
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ho, misses = heldout()
    inj = injected()
    hack, names, right = hacking()
    rf_rows, rf_counts, n_jee = reference_free()
    fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
    md = ["# Step verifier and rewards: measurements", "",
          "Produced by `python benchmarks/verifier_report.py` (symbolic backend, offline).", "",
          "## First-error verdicts", "",
          "| set | n | first-error acc. | class acc. | acc. erroneous | acc. correct | ProcessBench F1 | invalid |",
          "|---|---|---|---|---|---|---|---|"]
    for name, r in (("hand-written held-out", ho), ("procgen injected (seed 2027)", inj)):
        md.append(f"| {name} | {r['n']} | {fmt(r['first_error_accuracy'])} | {fmt(r['class_accuracy'])} | "
                  f"{fmt(r['accuracy_erroneous'])} | {fmt(r['accuracy_correct'])} | {fmt(r['processbench_f1'])} | "
                  f"{r['invalid']} |")
    md += ["", "Held-out misses:", ""] + ([f"- {m}" for m in misses] or ["- none"])
    md += ["", "## Reward of each hacking case beside an honest wrong answer", "",
           "Honest wrong = a complete seven-tag solution with one calculation slip (step 6). "
           "`*` = the hack states one right, finite answer: the answer rewards (outcome, rlvp) pay it as a right "
           "answer by design.", "", "| case | position | pspo_wrs | outcome | rlvp |", "|---|---|---|---|---|"]
    for case in ["honest wrong", "honest right"] + names:
        star = " *" if case in right else ""
        md.append(f"| {case}{star} | " + " | ".join(fmt(hack[r][case]) for r in ("position", "pspo_wrs", "outcome", "rlvp"))
                  + " |")
    md += ["", f"## Reference-free mode on real JEEBench physics problems ({n_jee} problems)", "",
           "| output | verdict class | first error | count |", "|---|---|---|---|"]
    for (label, cls, fe), c in sorted(rf_counts.items(), key=lambda kv: str(kv[0])):
        md.append(f"| {label} | {cls} | {fe} | {c} |")
    md += ["", "Hand-made solutions:", ""] + [f"- {r[0]} {r[1]}: first_error {r[2]}, {r[3]}, valid {r[4]}: {r[5]}"
                                             for r in rf_rows]
    (out / "summary.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps({"heldout": ho, "heldout_misses": misses, "injected": inj,
                                                  "hacking": hack, "reference_free": [list(r) for r in rf_rows],
                                                  "reference_free_counts": {" / ".join(map(str, k)): v
                                                                            for k, v in rf_counts.items()}},
                                                 indent=1, default=str), encoding="utf-8")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
