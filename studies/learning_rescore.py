"""Re-score the learning study's committed samples with today's checker and step verifier (issue 35, item 0).

    python studies/learning_rescore.py                 # results/learning -> results/learning/rescored
    python studies/learning_rescore.py --study DIR --out DIR --data_dir DIR

The committed samples (results/learning/samples/*.jsonl) hold each response with the verdicts of the
checker and step verifier of their time. Here every response is scored again: accuracy with
`verifiers.check` the way the study's lm-eval task scores it (r3bench.eval.lmeval's verdict: the
document's answer kind and options), the step verdict with `verifiers.steps.verify` through the
study's own `score_sample` (same reward, same validity rule). The problems come back from
`r3bench.eval.procgen_data.records(tier)` (procgen tiers) or the data directory (the whole-benchmark
cells, which have no worked solution and keep no step verdict). The tables are the study's own
(`learning_study.write_outputs` on a copy of the cell records that points at the re-scored samples),
written to OUT/summary.md and OUT/summary.csv beside, not over, the committed ones; OUT/changes.md says
how many verdicts moved per cell. Nothing is retrained or regenerated: the responses are the committed ones.
"""
from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _study():
    """studies/learning_study.py as a module (studies/ is not a package)."""
    if "learning_study" in sys.modules:
        return sys.modules["learning_study"]
    spec = importlib.util.spec_from_file_location("learning_study", ROOT / "studies" / "learning_study.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["learning_study"] = mod  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(mod)
    return mod


ls = _study()


def documents(tier, data_dir=None) -> dict:
    """id -> the lm-eval document of a cell's problems: a procgen tier (int) or a whole-benchmark task."""
    from r3bench.eval import data as _data
    from r3bench.eval.lmeval import to_doc
    from r3bench.eval.procgen_data import records
    from r3bench.results.leaderboard import benchmark_of

    if isinstance(tier, str) and benchmark_of(tier) is None:
        raise KeyError(f"{tier}: not a task of one of the benchmarks")
    recs = records(int(tier)) if not isinstance(tier, str) else _data.load(benchmark_of(tier), data_dir)
    return {r.id: to_doc(r) for r in recs}


def rescore_sample(sample: dict, doc: dict, backend: str, step_verified: bool) -> dict:
    """One committed sample scored again: the same keys, today's verdicts."""
    from r3bench.eval.lmeval import MCQ_KINDS, check_doc, flexible
    from verifiers import seventag

    resp = sample.get("response") or ""
    v = check_doc(doc, resp)
    acc = float(v.equivalent)
    if step_verified:
        rec = ls.score_sample(doc, resp, acc, None, backend)
    else:  # the whole benchmarks: no worked reference solution (learning_study.Study.run_eval)
        rec = {**{k: sample.get(k) for k in ("first_error", "n_steps", "error_class", "step_reward",
                                              "verifier_valid", "explanation")},
               "acc": acc, "format_compliance": seventag.format_compliance(resp)}
        if doc.get("answer_kind") in MCQ_KINDS:  # lm-eval's flexible-extract beside strict (issue 35)
            rec["acc_flexible"] = flexible(doc, resp, v)
    return {k: sample[k] for k in ("doc_id", "id", "template", "response") if k in sample} | rec


def rescore(study: Path, out: Path, data_dir=None, cells=None, limit=None, progress=False) -> dict:
    """Re-score the finished evaluation cells of `study` into `out`/samples and `out`/cells (records that
    point at the re-scored samples). cells: cell ids to take (default all); limit: the first samples of
    each cell only (tests). Returns {cell: {metric: changed count, "n": n}}."""
    changes = {}
    docs_of: dict = {}
    for f in sorted((study / "cells").glob("*.json")):
        rec = ls.read_json(f)
        if not rec or rec.get("status") != "done" or rec.get("tier") is None:
            continue
        if cells is not None and rec.get("cell", f.stem) not in cells:
            continue
        samples = ls.cell_samples(study, rec)[:limit]
        tier = rec["tier"]
        if tier not in docs_of:
            docs_of[tier] = documents(tier, data_dir)
        docs = docs_of[tier]
        backend = (rec.get("budget") or {}).get("verifier", "symbolic")
        step_verified = not isinstance(tier, str)
        it = samples
        if progress:
            from tqdm import tqdm

            it = tqdm(samples, desc=f.stem, leave=False)
        new = []
        for s in it:
            if s["id"] not in docs:
                raise KeyError(f"{f.stem}: problem {s['id']} is not in the data it was scored on")
            new.append(rescore_sample(s, docs[s["id"]], backend, step_verified))
        spath = out / "samples" / f"{f.stem}.jsonl"
        spath.parent.mkdir(parents=True, exist_ok=True)
        spath.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new))
        ls.write_json(out / "cells" / f.name, {**rec, "samples_file": f"samples/{f.stem}.jsonl", "n": len(new),
                                               "verifier_failures": sum(not s["verifier_valid"] for s in new),
                                               "metrics": {k: list(v) for k, v in ls.cell_metrics(
                                                   new, (rec.get("budget") or {}).get("bootstrap", 2000),
                                                   ls.hash_seed(rec.get("cell", f.stem))).items()}})
        changes[f.stem] = {"n": len(new), **{m: sum(_differs(a.get(m), b.get(m)) for a, b in zip(samples, new))
                                            for m in ("acc", "step_reward", "first_error", "error_class")}}
    return changes


def mcq_summary(work: Path, data_dir=None, iters: int = 2000) -> str:
    """The whole-benchmark cells on their multiple-choice documents: strict and flexible accuracy with
    95% bootstrap CIs, beside the majority-class and uniform-guess baselines of the same documents."""
    from r3bench.eval.lmeval import baselines

    lines = ["# Whole benchmarks, multiple-choice documents: strict and flexible extraction, beside guessing", "",
             "strict = the answer as the prompt asks it (the tasks' `acc`); flexible = also the options the "
             "final answer names where strict reads no answer (`acc_flexible`, lm-eval's flexible-extract); "
             "majority = always answering the most frequent gold answer; uniform = a uniform guess. 95% "
             "percentile bootstrap over problems (2,000 draws). Re-scored from results/learning/samples by "
             "studies/learning_rescore.py.", "",
             "| cell | n (MCQ) | strict | flexible | majority | uniform |", "|---|---|---|---|---|---|"]
    for f in sorted((work / "samples").glob("full_*.jsonl")):
        rows = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        rows = [r for r in rows if "acc_flexible" in r]
        if not rows:
            continue
        task = f.stem.split("__")[-1]
        docs = documents(task, data_dir)
        b = baselines([docs[r["id"]] for r in rows]).get("all_mcq", {})
        seed = ls.hash_seed(f.stem)

        def ci(key):
            est, lo, hi = ls.bootstrap_ci([float(r[key]) for r in rows], iters, seed)
            return f"{est:.3f} [{lo:.3f}, {hi:.3f}]"
        lines.append(f"| {f.stem} | {len(rows)} | {ci('acc')} | {ci('acc_flexible')} | "
                     f"{b.get('majority', float('nan')):.3f} | {b.get('uniform', float('nan')):.3f} |")
    return "\n".join(lines) + "\n"


def _differs(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return not (a == b or (math.isnan(a) and math.isnan(b)))
    return a != b


def summarise(study: Path, out: Path, data_dir=None, cells=None, limit=None, progress=False) -> dict:
    """Re-score, then the study's own tables (learning_study.write_outputs) in a scratch copy; summary.md,
    summary.csv and changes.md land in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        changes = rescore(study, work, data_dir, cells, limit, progress)
        ls.write_outputs(work, ls.FULL)  # the study's design (its conditions' order, 2000 bootstrap draws)
        md = (work / "summary.md").read_text()
        md = md.replace("# Learning study:", "# Learning study, re-scored with today's checker and step verifier:", 1)
        note = ("The committed responses (results/learning/samples) scored again with today's `verifiers.check` and "
                "`verifiers.steps.verify` (studies/learning_rescore.py); the tables are the study's own "
                "(learning_study.write_outputs). The committed tables: ../summary.md.\n\n")
        head, _, rest = md.partition("\n\n")
        (out / "summary.md").write_text(head + "\n\n" + note + rest)
        shutil.copyfile(work / "summary.csv", out / "summary.csv")
        (out / "mcq.md").write_text(mcq_summary(work, data_dir))
    lines = ["# Verdicts that moved when re-scored", "",
             "Per cell: samples, and how many of them got another accuracy, step reward, first wrong step or "
             "error class than the committed sample.", "",
             "| cell | n | acc | step reward | first error | error class |", "|---|---|---|---|---|---|"]
    for c, d in sorted(changes.items()):
        lines.append(f"| {c} | {d['n']} | {d['acc']} | {d['step_reward']} | {d['first_error']} | {d['error_class']} |")
    tot = {k: sum(d[k] for d in changes.values()) for k in ("n", "acc", "step_reward", "first_error", "error_class")}
    lines.append(f"| all | {tot['n']} | {tot['acc']} | {tot['step_reward']} | {tot['first_error']} | "
                 f"{tot['error_class']} |")
    (out / "changes.md").write_text("\n".join(lines) + "\n")
    return changes


def paired(csv_path: Path) -> dict:
    """(condition, seed, tier, metric) -> row of a summary.csv (committed or re-scored), for comparing them."""
    with open(csv_path, newline="") as fh:
        return {(r["condition"], r["seed"], r["tier"], r["metric"]): r for r in csv.DictReader(fh)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", default=str(ROOT / "results" / "learning"))
    ap.add_argument("--out", default=None, help="default: STUDY/rescored")
    ap.add_argument("--data_dir", default=None, help="benchmark data (default: R3BENCH_DATA_DIR)")
    a = ap.parse_args(argv)
    study = Path(a.study)
    out = Path(a.out) if a.out else study / "rescored"
    changes = summarise(study, out, a.data_dir, progress=True)
    print(f"re-scored {sum(d['n'] for d in changes.values())} samples of {len(changes)} cells -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
