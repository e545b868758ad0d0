"""Score the checker and the step verifier on the independent held-out sets of issue 32.

    python heldout/heldout_report.py [--heldout DIR] [--data-dir DATA] [--out DIR]

The sets of each round (heldout/round2/, round3/, ...; --heldout, default round2) were written by people
who had not read the checker or verifier code, committed before the fixes, and are scored once, at the end
(see heldout/README.md and each round's README.md):

- answers_*.jsonl       {id, pred, ref, kind, label, category, note}: checker accuracy, false positives
                        and false negatives, per category;
- solutions_*.jsonl     {id, question, reference, solution, first_error, error_class, style}: correct
                        solutions kept, first error exact, ProcessBench F1 (verifiers.steps.report);
- real_answers_graded*.jsonl / real_solutions_graded*.jsonl  {key, label | first_error, error_class, reason}:
                        real model outputs from results/learning/samples graded by hand. Only the key
                        (sample file # doc_id) and the grade are committed; the question, options, gold
                        and reference are read again from the data directory and procgen, and the
                        response from the committed samples, so no benchmark text is copied here.

Every rate comes with its n and a Wilson 95% interval. Writes OUT/summary.md and OUT/results.json
(default heldout/results/<the round's folder name>, e.g. heldout/results/round3 for --heldout heldout/round3).
"""
from __future__ import annotations

import argparse
import functools
import inspect
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from r3bench.eval import lmeval  # noqa: E402
from verifiers import CheckConfig, check  # noqa: E402
from verifiers.steps import report, verify  # noqa: E402

SAMPLES = ROOT / "results" / "learning" / "samples"
JEE = CheckConfig(mode="jeebench")


from r3bench.results.stats import wilson


def rate(k: int, n: int) -> dict:
    lo, hi = wilson(k, n)
    return {"k": k, "n": n, "rate": k / n if n else float("nan"), "ci": [lo, hi]}


def read_jsonl(path: Path) -> list[dict]:
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path.name}:{i}: not JSON ({e})") from e
    return rows


def option_map(options, kind="mcq") -> dict | None:
    """A multiple-choice item's options as the checker takes them, {"A": text, ...}: the lm-eval
    tasks' own mapping (r3bench.eval.lmeval.options_of)."""
    return lmeval.options_of({"answer_kind": kind, "options": options or ()})


def _check(pred, ref, kind, cfg=CheckConfig(), options=None):
    """check(), passing the options (as a letter -> text mapping, as the lm-eval tasks do) where the
    checker takes them; a checker from before the `options` keyword gets none."""
    if options and "options" in inspect.signature(check).parameters:
        opts = dict(options) if isinstance(options, dict) else option_map(options, kind or "mcq")
        return check(pred, ref, kind=kind, cfg=cfg, options=opts)
    return check(pred, ref, kind=kind, cfg=cfg)


def score_answers(rows: list[dict], cfg_of=lambda r: CheckConfig(), options_of=lambda r: None) -> dict:
    """Checker vs labels: right, false positives (label false, checker says equivalent), false negatives."""
    right = fp = fn = 0
    per = defaultdict(Counter)
    misses = []
    for r in rows:
        v = _check(r["pred"], r["ref"], r.get("kind"), cfg_of(r), options_of(r))
        got, want = bool(v.equivalent), bool(r["label"])
        cat = r.get("category") or r.get("kind") or "?"
        per[cat]["n"] += 1
        if got == want:
            right += 1
            per[cat]["right"] += 1
            continue
        if got:
            fp += 1
            per[cat]["fp"] += 1
        else:
            fn += 1
            per[cat]["fn"] += 1
        misses.append({"id": r.get("id") or r.get("key"), "category": cat, "label": want, "got": got,
                       "reason": v.reason[:160], "pred": str(r["pred"])[:160], "ref": str(r["ref"])[:80]})
    n = len(rows)
    return {"n": n, "right": rate(right, n), "false_positives": fp, "false_negatives": fn,
            "fp_rate_on_false": rate(fp, sum(not r["label"] for r in rows)),
            "per_category": {c: dict(v) for c, v in sorted(per.items())}, "misses": misses}


def score_solutions(rows: list[dict]) -> dict:
    """The step verifier vs labelled first errors: report() plus kept / exact with intervals and misses."""
    rep = report(rows)
    kept = exact = 0
    n_cor = sum(1 for r in rows if not r["first_error"])
    misses = []
    by_style = defaultdict(Counter)
    for r in rows:
        v = verify(r["question"], r["solution"], r["reference"])
        hit = v.valid and v.first_error == r["first_error"]
        exact += hit
        kept += hit and not r["first_error"]
        st = r.get("style", "?")
        by_style[st]["n"] += 1
        by_style[st]["exact"] += hit
        if not hit:
            misses.append({"id": r.get("id") or r.get("key"), "gold": [r["first_error"], r["error_class"]],
                           "got": [v.first_error, v.error_class, v.valid], "why": v.explanation[:160],
                           "note": str(r.get("note") or r.get("reason") or "")[:120]})
    rep.update({"correct_kept": rate(kept, n_cor), "first_error_exact": rate(exact, len(rows)),
                "per_style": {s: dict(c) for s, c in sorted(by_style.items())}, "misses": misses})
    return rep


# --- real model outputs: the grade file holds keys only; everything else is read back ---------------

@functools.lru_cache(maxsize=4)
def _records(data_dir: Path) -> dict:
    """Every problem a graded key can name, by id (read once per data directory, not once per set)."""
    from r3bench.eval import data, procgen_data
    recs = {}
    for bench in data.LOADERS:
        try:
            recs.update({r.id: r for r in data.LOADERS[bench](data_dir)})
        except Exception:  # noqa: BLE001 - a benchmark missing from the data folder: its keys fail below
            pass
    for tier in (1, 2, 3):
        recs.update({r.id: r for r in procgen_data.records(tier)})
    for procgen_set in ("learning", "transfer"):  # the mixture's sets (the issue-35 studies' samples)
        recs.update({r.id: r for r in procgen_data.mixture_records(procgen_set)})
    return recs


def sample_file(name: str) -> Path:
    """The samples file a graded key names: `<file>` in results/learning/samples (rounds 2-7), or
    `<folder>/<file>` under results/ (e.g. `mixture_sft/samples/sft_mix__r3_jeebench_structured`)."""
    if "/" in name:
        path = (ROOT / "results" / f"{name}.jsonl").resolve()
        if (ROOT / "results").resolve() not in path.parents:
            raise ValueError(f"a graded key names a file outside results/: {name!r}")
        return path
    return SAMPLES / f"{name}.jsonl"


def _sample(key: str, cache: dict) -> dict:
    name, _, doc = key.rpartition("#")
    if name not in cache:
        cache[name] = {str(s["doc_id"]): s for s in read_jsonl(sample_file(name))}
    return cache[name][doc]


def resolve_real(graded: list[dict], data_dir: Path, solutions: bool, cache: dict | None = None) -> list[dict]:
    """Join hand grades with the committed responses and the problems they answer (`cache`: the sample
    files read so far, {name: {doc_id: sample}}, for a caller that resolves one grade at a time)."""
    recs, cache, rows = _records(data_dir), {} if cache is None else cache, []
    for g in graded:
        s = _sample(g["key"], cache)
        r = recs[s["id"]]
        gold = r.answer  # as the lm-eval tasks score it (a procgen answer carries its unit: "754 m")
        if solutions:
            rows.append({"key": g["key"], "question": r.question, "reference": r.solution,
                         "solution": s["response"], "first_error": g["first_error"],
                         "error_class": g["error_class"], "style": s.get("template", "?"),
                         "reason": g.get("reason")})
        else:
            opts = list(r.options) if r.answer_kind in ("mcq", "mcq_multi") else []
            rows.append({"key": g["key"], "pred": s["response"], "ref": gold, "kind": r.answer_kind,
                         "label": g["label"], "category": f"{r.benchmark}/{r.answer_kind}",
                         "options": opts, "benchmark": r.benchmark})
    return rows


def _fmt_rate(d: dict) -> str:
    return f"{d['k']}/{d['n']} = {d['rate']:.3f} [{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]"


def summary_md(res: dict) -> str:
    out = ["# Held-out sets of issue 32, scored once", "",
           "Written by people who had not read the checker or verifier code, committed before the fixes "
           "(heldout/round2/README.md). Wilson 95% intervals. Produced by "
           "`python heldout/heldout_report.py`.", ""]
    for name, r in res.items():
        if "false_positives" in r:
            out += [f"## {name}: answer checker", "",
                    f"- right: {_fmt_rate(r['right'])} (goal >= 0.97)",
                    f"- false positives: {r['false_positives']} (goal 0); on the {r['fp_rate_on_false']['n']} "
                    f"false-labelled answers: {_fmt_rate(r['fp_rate_on_false'])}",
                    f"- false negatives: {r['false_negatives']}", "",
                    "| category | n | right | FP | FN |", "|---|---|---|---|---|"]
            out += [f"| {c} | {v.get('n', 0)} | {v.get('right', 0)} | {v.get('fp', 0)} | {v.get('fn', 0)} |"
                    for c, v in r["per_category"].items()]
            out += ["", "Misses:", ""] + [f"- `{m['id']}` [{m['category']}] label {m['label']}, checker "
                                          f"{m['got']}: {m['reason']}" for m in r["misses"]] + [""]
        else:
            out += [f"## {name}: step verifier", "",
                    f"- correct solutions kept: {_fmt_rate(r['correct_kept'])} (goal >= 0.9)",
                    f"- first error exact: {_fmt_rate(r['first_error_exact'])}",
                    f"- accuracy on erroneous: {r['accuracy_erroneous']:.3f}; ProcessBench F1: "
                    f"{r['processbench_f1']:.3f}; class accuracy {r['class_accuracy']:.3f}; "
                    f"no verdict: {r['invalid']}", "",
                    "Misses:", ""] + [f"- `{m['id']}` gold {m['gold']}, got {m['got']}: {m['why']} "
                                      f"(grader: {m['note']})" for m in r["misses"]] + [""]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--heldout", type=Path, default=HERE / "round2", help="a round's folder (default: round2)")
    ap.add_argument("--data-dir", type=Path, default=None, help="benchmark data (default $R3BENCH_DATA_DIR "
                    "or ../shared/data)")
    ap.add_argument("--out", type=Path, default=None, help="default: results/<the round's folder name> beside this script")
    a = ap.parse_args(argv)
    a.out = a.out or HERE / "results" / a.heldout.name
    import os
    data_dir = a.data_dir or Path(os.environ.get("R3BENCH_DATA_DIR") or ROOT.parent / "shared" / "data")
    res = {}
    for f in sorted(a.heldout.glob("answers_*.jsonl")):  # a written item's options ({letter: text}) as written
        res[f.stem] = score_answers(read_jsonl(f), options_of=lambda r: r.get("options"))
    for f in sorted(a.heldout.glob("solutions_*.jsonl")):
        res[f.stem] = score_solutions(read_jsonl(f))
    for f in sorted(a.heldout.glob("real_answers_graded*.jsonl")):
        rows = resolve_real(read_jsonl(f), data_dir, solutions=False)
        res[f.stem] = score_answers(
            rows, cfg_of=lambda r: JEE if r["benchmark"] == "jeebench" and r["kind"] in ("integer", "numeric")
            else CheckConfig(), options_of=lambda r: r["options"])
    for f in sorted(a.heldout.glob("real_solutions_graded*.jsonl")):
        res[f.stem] = score_solutions(resolve_real(read_jsonl(f), data_dir, solutions=True))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "results.json").write_text(json.dumps(res, indent=1, default=str) + "\n")
    (a.out / "summary.md").write_text(summary_md(res))
    print((a.out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
