"""The verifier leaderboard on the step-verification tasks (`r3bench stepverify-board`).

    records(items, backend=..., reference=True, config=None) -> [record]   a step verifier over the items
    from_samples(path) -> [record]          an lm-eval samples file of an r3_stepverify* task (any model)
    write_records(path, rows) / read_records(path)
    table(records_by_row) -> rows with n, F1 (bootstrap 95%), accuracies (Wilson 95%)
    write(out_dir, records_dir) -> leaderboard.md / leaderboard.csv (deterministic bytes)

A record is one item's verdict: {id, source, symbolic_dev, first_error, error_class, step (None =
unread / no verdict), pred_class, explanation}. Every row is scored by r3bench.eval.stepverify's
outcome() and summary(), the code behind the lm-eval metrics, so a verifier run here and a model run
through lm-eval are scored alike. The records under results/stepverify/records/ are what the
committed table is made from; one file per row (`<row>.jsonl`, its first line the row's description).
ProcessBench's published math rows stand beside it for orientation, marked as another domain.
"""
from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

from r3bench.results.stats import wilson
from r3bench.eval import stepverify, stepverify_data
from verifiers import seventag
from verifiers.steps import verify

# ProcessBench (Zheng et al. 2024, QwenLM/ProcessBench): average F1 over its four math subsets, as
# published; another domain (math competition solutions), not comparable item by item
PUBLISHED = (("o1-mini", 87.9), ("Qwen2.5-Math-PRM-72B", 78.3), ("Qwen2.5-Math-PRM-7B", 73.5))
BOOT_ITERS = 2000
MIN_SIDE = 5  # F1 is left out ("-") where erroneous or correct solutions number fewer (one item decides it)
Z = 1.96


def f1_interval(outcomes: list[dict], iters: int = BOOT_ITERS, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of ProcessBench F1, erroneous and correct items resampled apart
    (their counts are fixed by the benchmark)."""
    err = [o["hit"] for o in outcomes if o["erroneous"]]
    cor = [o["hit"] for o in outcomes if not o["erroneous"]]
    if not err or not cor:
        return float("nan"), float("nan")
    rng = random.Random(seed)
    vals = sorted(stepverify.harmonic(sum(rng.choices(err, k=len(err))) / len(err),
                                      sum(rng.choices(cor, k=len(cor))) / len(cor)) for _ in range(iters))
    return vals[int(0.025 * iters)], vals[int(0.975 * iters) - 1]


def _record(item: dict, step, pred_class: str, explanation: str) -> dict:
    return {"id": item["id"], "source": item["source"], "symbolic_dev": item["symbolic_dev"],
            "first_error": int(item["first_error"]), "error_class": item["error_class"], "step": step,
            "pred_class": pred_class, "explanation": explanation[:300]}


REFERENCE_MODES = ("solution", "answer", "none")  # what of the reference a verifier is shown


def shown_reference(item: dict, mode: str) -> str:
    """The reference a verifier gets: the seven-tag solution, its final answer only, or nothing."""
    if mode not in REFERENCE_MODES:
        raise ValueError(f"reference mode must be one of {REFERENCE_MODES}, got {mode!r}")
    if mode == "solution":
        return item["reference"]
    return (seventag.parse(item["reference"]).final_answer or "").strip() if mode == "answer" else ""


def records(items: list[dict], backend: str = "symbolic", reference: str = "solution", config=None,
            progress=None) -> list[dict]:
    """One step verifier backend (verifiers.steps.BACKENDS) over the items, shown the reference solution,
    its final answer only, or nothing (REFERENCE_MODES; the symbolic backend runs reference-free with the
    last two). A verdict with valid=False is step None (a miss, never 'no error')."""
    out = []
    for it in (progress(items) if progress else items):
        v = verify(it["question"], it["solution"], shown_reference(it, reference), backend, config)
        step = v.first_error if v.valid else None
        out.append(_record(it, step, (v.error_class or "") if v.valid else "", v.explanation or ""))
    return out


class Rows(list):
    """Records, with `dropped`: how many were left out because their item is no longer in the test split."""
    dropped = 0


class SamplesError(ValueError):
    """A samples or records file that does not match the test split (unknown or repeated ids)."""


def _test_items() -> tuple[dict, set]:
    return ({it["id"]: it for it in stepverify_data.items("test")},
            {it["id"] for it in stepverify_data.items("all")})


def from_samples(path: Path) -> Rows:
    """The records of an lm-eval samples file of an r3_stepverify* task: each reply read again by
    stepverify.read_reply. The file is not trusted: each sample's id is looked up in the committed test
    split and the gold (first wrong step, class, source) is taken from the item, never from the file's
    doc; an id that is no item, or one seen twice, is refused (SamplesError naming file:line); an item
    that is no longer in the test split (now dev) is dropped and counted (Rows.dropped)."""
    test, known = _test_items()
    out, seen = Rows(), {}
    for no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            s = json.loads(line)
            sid = s["doc"]["id"]
        except (ValueError, KeyError, TypeError) as e:
            raise SamplesError(f"{path}:{no}: not an r3_stepverify sample ({type(e).__name__}: {e})") from None
        if not isinstance(sid, str) or sid not in known:
            raise SamplesError(f"{path}:{no}: {sid!r} is no r3_stepverify item")
        if sid in seen:
            raise SamplesError(f"{path}:{no}: {sid!r} again (first at line {seen[sid]})")
        seen[sid] = no
        if sid not in test:
            out.dropped += 1
            continue
        resp = s.get("filtered_resps") or s.get("resps") or [""]
        while isinstance(resp, list):
            resp = resp[0] if resp else ""
        r = stepverify.read_reply(resp)
        out.append(_record(test[sid], r.step, r.error_class, r.reason))
    return out


def retarget(rows: list[dict], where: str = "records") -> Rows:
    """Committed records on the current test split: the gold and source taken from the items, the records
    of items no longer in test dropped (counted), an unknown or repeated id refused (SamplesError)."""
    test, known = _test_items()
    out, seen = Rows(), set()
    for r in rows:
        sid = r.get("id")
        if sid not in known:
            raise SamplesError(f"{where}: {sid!r} is no r3_stepverify item")
        if sid in seen:
            raise SamplesError(f"{where}: {sid!r} again")
        seen.add(sid)
        if sid not in test:
            out.dropped += 1
            continue
        out.append(_record(test[sid], r["step"], r["pred_class"], r["explanation"]))
    return out


def write_records(path: Path, about: dict, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [{"about": about}, *rows]),
                    encoding="utf-8")


def read_records(path: Path) -> tuple[dict, list[dict]]:
    lines = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]
    return lines[0]["about"], lines[1:]


def outcomes(rows: list[dict]) -> list[dict]:
    return [stepverify.outcome(r["first_error"], r["error_class"], r["step"], r["pred_class"]) for r in rows]


SUBSETS = {  # name -> which records a row is scored on
    "test": lambda r: True,
    "real": lambda r: r["source"] == "real",
    "written": lambda r: r["source"] == "written",
    "procgen": lambda r: r["source"] == "procgen",
}
# how the table names a subset: procgen's items are new instances of the generator whose templates and
# error injection the symbolic verifier was developed against, so its row there is an upper bound
SUBSET_LABEL = {"procgen": "procgen: new instances of the generator the verifier was developed against (an upper bound)"}
# the procgen items are the only ones the symbolic verifier was not graded against item by item
# (stepverify_data), but the generator's templates and injected errors are what it was built on


def score(rows: list[dict]) -> dict:
    """summary() with Wilson intervals of the accuracies and the bootstrap interval of F1."""
    o = outcomes(rows)
    s = stepverify.summary(o)
    s["f1_ci"] = f1_interval(o)
    s["acc_erroneous_ci"] = wilson(sum(x["hit"] for x in o if x["erroneous"]), s["n_erroneous"])
    s["acc_correct_ci"] = wilson(sum(x["hit"] for x in o if not x["erroneous"]), s["n_correct"])
    s["exact_ci"] = wilson(sum(x["hit"] for x in o), s["n"])
    return s


def table(rows_by_name: dict[str, tuple[dict, list[dict]]]) -> list[dict]:
    """One table row per (verifier row, subset) with at least one item."""
    out = []
    for name, (about, rows) in rows_by_name.items():
        for sub, keep in SUBSETS.items():
            sel = [r for r in rows if keep(r)]
            if sel and (sub == "test" or len(sel) < len(rows)):
                s = score(sel)
                if min(s["n_erroneous"], s["n_correct"]) < MIN_SIDE:
                    s["f1"], s["f1_ci"] = float("nan"), (float("nan"), float("nan"))
                out.append({"row": name, "kind": about.get("kind", ""), "subset": sub, **s})
    return out


def _pct(x: float) -> str:
    return "-" if x != x else f"{100 * x:.1f}"


def _ci(lo_hi) -> str:
    lo, hi = lo_hi
    return "" if lo != lo else f" [{100 * lo:.1f}, {100 * hi:.1f}]"


def _subset(r: dict) -> str:
    """The subset as the table names it (procgen's label on the symbolic verifier's rows, which it is about)."""
    return SUBSET_LABEL.get(r["subset"], r["subset"]) if "symbolic" in r["kind"] else r["subset"]


def markdown(rows: list[dict], abouts: dict[str, dict]) -> str:
    out = ["# Step-verifier leaderboard (r3_stepverify, test split)", "",
           "Made by `r3bench stepverify-board` from results/stepverify/records/ (one file per row). "
           "ProcessBench's protocol: name the earliest wrong step of a seven-tag physics solution or say none is "
           "wrong. F1 = harmonic mean of the accuracy on erroneous (exact step) and on correct solutions; "
           "95% intervals: F1 by bootstrap (2,000 resamples), accuracies by Wilson. Percent. `unread`: items "
           "with no verdict (a reply no pattern reads, an invalid verifier verdict), counted as misses. F1 is "
           f"left out (-) where fewer than {MIN_SIDE} solutions are erroneous or correct. "
           "The symbolic verifier was developed on every hand-graded set (`real`, `written`); `procgen` holds new "
           "instances of the generator the verifier was developed against: an upper bound, not held-out data.",
           "", "| verifier | kind | items | n (err / correct) | F1 | acc erroneous | acc correct | exact step | "
           "class acc | unread |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['row']} | {r['kind']} | {_subset(r)} | {r['n']} ({r['n_erroneous']} / {r['n_correct']}) | "
                   f"{_pct(r['f1'])}{_ci(r['f1_ci'])} | {_pct(r['acc_erroneous'])}{_ci(r['acc_erroneous_ci'])} | "
                   f"{_pct(r['acc_correct'])}{_ci(r['acc_correct_ci'])} | {_pct(r['exact'])}{_ci(r['exact_ci'])} | "
                   f"{_pct(r['class_acc'])} | {_pct(1 - r['parsed'])} |")
    out += ["", "## For orientation: ProcessBench's published math rows (another domain)", "",
            "Average F1 over ProcessBench's four math subsets (GSM8K, MATH, OlympiadBench, Omni-MATH), as published; "
            "math competition solutions in free-form paragraphs, not seven-tag physics: not comparable item by item.",
            "", "| model | domain | F1 |", "|---|---|---|"]
    out += [f"| {m} | math (ProcessBench), another domain | {f1:.1f} |" for m, f1 in PUBLISHED]
    out += ["", "## Rows", ""]
    out += [f"- **{name}**: {a.get('about', '')}" for name, a in abouts.items()]
    return "\n".join(out) + "\n"


CSV_FIELDS = ("row", "kind", "subset", "n", "n_erroneous", "n_correct", "f1", "f1_lo", "f1_hi", "acc_erroneous",
              "acc_correct", "exact", "class_acc", "parsed")


def csv_text(rows: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in rows:
        vals = {**r, "f1_lo": r["f1_ci"][0], "f1_hi": r["f1_ci"][1]}
        w.writerow([f"{vals[k]:.4f}" if isinstance(vals[k], float) else vals[k] for k in CSV_FIELDS])
    return buf.getvalue()


def load(records_dir: Path) -> dict[str, tuple[dict, list[dict]]]:
    """Every row's records, in the order of their `order` field, then name."""
    got = {p.stem: read_records(p) for p in sorted(Path(records_dir).glob("*.jsonl"))}
    return dict(sorted(got.items(), key=lambda kv: (kv[1][0].get("order", 99), kv[0])))


def write(out_dir: Path, records_dir: Path | None = None) -> list[Path]:
    """leaderboard.md and leaderboard.csv in out_dir from the records (default out_dir/records)."""
    out_dir = Path(out_dir)
    got = load(records_dir or out_dir / "records")
    rows = table(got)
    md, cs = out_dir / "leaderboard.md", out_dir / "leaderboard.csv"
    md.write_text(markdown(rows, {k: a for k, (a, _) in got.items()}), encoding="utf-8")
    cs.write_text(csv_text(rows), encoding="utf-8")
    return [md, cs]


def run_row(out_dir: Path, name: str, backend: str = "symbolic", reference: str = "solution", config=None,
            limit: int | None = None, about: str = "", order: int = 50, progress=None) -> Path:
    """Run a step verifier over the test items (the first `limit` of their fixed order) into
    out_dir/records/<name>.jsonl."""
    items = stepverify_data.items("test")[:limit] if limit else stepverify_data.items("test")
    rows = records(items, backend, reference, config, progress)
    path = Path(out_dir) / "records" / f"{name}.jsonl"
    kind = f"step verifier: {backend}, reference: {reference}"
    write_records(path, {"kind": kind, "about": about or kind, "backend": backend, "reference": reference,
                         "n": len(rows), "order": order}, rows)
    return path


def samples_row(out_dir: Path, name: str, samples: Path, about: str = "", order: int = 60) -> Path:
    """An lm-eval samples file of r3_stepverify (any model, `--log_samples`) into out_dir/records/<name>.jsonl."""
    rows = from_samples(samples)
    path = Path(out_dir) / "records" / f"{name}.jsonl"
    about = about or f"lm-eval samples {Path(samples).name}"
    if rows.dropped:
        about += f"; {rows.dropped} item(s) no longer in the test split left out, n = {len(rows)}"
    write_records(path, {"kind": "model via lm-eval", "about": about, "n": len(rows), "order": order}, rows)
    return path
