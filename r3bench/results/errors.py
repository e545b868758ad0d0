"""`r3bench errors SAMPLES... --out DIR`: the paper's error distribution over logged samples.

The step verifier (`verifiers.steps.verify`) runs over every sample of a structured (seven-tag)
task in lm-eval's `samples_<task>_<ts>.jsonl` files (`lm_eval ... --log_samples`), and the first
error of each response is counted per model and method:

  MC / CM / CE   the class of the first wrong step (miscomprehension, conceptual misapplication,
                 calculation error)
  none           every step verified
  FORMAT         the seven-tag format itself is broken (missing, broken or out-of-order tags, no tags,
                 several answers, nan): counted apart, never as MC, and left out of the MC/CM/CE shares
  no verdict     the verifier could not decide (StepVerdict.valid is False)
  no reference   no seven-tag reference solution (doc["solution"]) and no gold answer (doc["answer"] or
                 the sample's target) for the reference-free mode (verifiers.reference_free). Such samples are
                 counted here, never guessed.

Model and method come from the results file of the same run (`results_<ts>.json` beside the
samples, read as the leaderboard reads it). Samples of CoT (non-structured) tasks are skipped and
counted. Writes OUT/errors.md, OUT/errors.csv (counts and shares of the verified samples),
OUT/errors.jsonl (one verdict per sample) and OUT/errors.png (stacked bars).

    rows, problems = analyse(["out/lm_eval"])      # SampleVerdict per sample
    write(["out/lm_eval"], "results/errors")
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from r3bench.core.methods import label as method_label, sort_key as method_sort
from r3bench.results.cells import method_of, model_name, pretrained_of, strategy_of
from r3bench.results.plots import pyplot, save
from verifiers import seventag
from verifiers.steps import verify

CLASSES = ("MC", "CM", "CE")
OUTCOMES = ("MC", "CM", "CE", "none", "FORMAT", "no verdict", "no reference")
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<ts>\d{4}-\d\d-\d\dT[0-9.\-]+)\.jsonl$")


@dataclass(frozen=True)
class SampleVerdict:
    task: str
    model: str
    method: str
    doc_id: int | None
    outcome: str           # one of OUTCOMES
    first_error: int | None
    explanation: str
    source: str


def response_of(sample: dict) -> str | None:
    """The (first) filtered response of a logged sample, else its first raw response."""
    for key in ("filtered_resps", "resps"):
        v = sample.get(key)
        while isinstance(v, list) and v:
            v = v[0]
        if isinstance(v, str):
            return v
    return None


def is_structured(task: str, task_cfg: dict | None) -> bool:
    if isinstance(task_cfg, dict) and task_cfg.get("doc_to_text"):
        return "prompt_structured" in str(task_cfg["doc_to_text"])
    return task.endswith("_structured") or task == "r3_procgen"


def _run_info(samples_file: Path, problems: list) -> tuple[str, str, str, dict | None]:
    """(task, model, method, task config) of a samples file, from the results file beside it."""
    m = _SAMPLES.match(samples_file.name)
    task, ts = (m["task"], m["ts"]) if m else (samples_file.stem.removeprefix("samples_"), None)
    res = samples_file.with_name(f"results_{ts}.json") if ts else None
    if res is None or not res.is_file():
        problems.append(f"{samples_file.name}: no results_{ts}.json beside it: model and method unknown")
        return task, "?", "?", None
    try:
        d = json.loads(res.read_text(encoding="utf-8"))
        cfg = d.get("config") or {}
        return (task, model_name(pretrained_of(cfg)),
                method_of(cfg, strategy_of(d)),
                (d.get("configs") or {}).get(task))
    except (OSError, ValueError, AttributeError) as e:
        problems.append(f"{res.name}: unreadable ({e}): model and method unknown")
        return task, "?", "?", None


def _has_steps(text: str) -> bool:
    return bool(text) and seventag.parse(text).n > 0


def verify_sample(sample: dict, backend: str = "symbolic", config=None) -> tuple[str, int | None, str]:
    """(outcome, first_error, explanation) of one logged sample."""
    doc = sample.get("doc")
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        return "no verdict", None, f"the sample's doc is a {type(doc).__name__}, not a mapping"
    resp = response_of(sample)
    if resp is None:
        return "no verdict", None, "no response in the sample"
    ref = str(doc.get("solution") or "")
    if not _has_steps(ref):
        gold = doc.get("answer") if doc.get("answer") not in (None, "") else sample.get("target")
        if backend == "symbolic" and gold in (None, ""):
            return "no reference", None, "no seven-tag reference solution and no gold answer in the document"
        # the symbolic backend's reference-free mode reads a non-seven-tag reference as the gold answer
        ref = str(gold) if backend == "symbolic" else ""
    v = verify(str(doc.get("question") or ""), resp, ref, backend, config)
    if not v.valid:
        return "no verdict", None, v.explanation
    if v.first_error == 0:
        return "none", 0, v.explanation
    if v.error_class == "FORMAT":
        return "FORMAT", v.first_error, v.explanation
    return (v.error_class if v.error_class in CLASSES else "no verdict"), v.first_error, v.explanation


def analyse(paths, backend: str = "symbolic", problems: list | None = None, config=None) -> list[SampleVerdict]:
    """A verdict per sample of every structured samples_*.jsonl under `paths` (files or folders)."""
    from tqdm import tqdm

    problems = [] if problems is None else problems
    files = []
    for p in map(Path, paths):
        if not p.exists():
            problems.append(f"{p}: not found")
        elif p.is_file():
            files.append((p, p.parent))
        else:
            files += [(f, p) for f in sorted(p.rglob("samples_*.jsonl"))]
    out, skipped = [], Counter()
    for f, root in files:
        task, model, method, tcfg = _run_info(f, problems)
        src = f.relative_to(root).as_posix() if f.is_relative_to(root) else f.name
        lines = f.read_text(encoding="utf-8", errors="replace").splitlines()
        if not is_structured(task, tcfg):
            skipped[task] += sum(1 for x in lines if x.strip())
            continue
        for i, line in enumerate(tqdm(lines, desc=f"verifying {task}", unit="sample", leave=False), start=1):
            if not line.strip():
                continue
            try:
                s = json.loads(line)
                if not isinstance(s, dict):
                    raise ValueError("not a JSON object")
            except ValueError as e:
                problems.append(f"{src}:{i}: {e}")
                continue
            if s.get("doc") is not None and not isinstance(s["doc"], dict):
                problems.append(f"{src}:{i}: doc is a {type(s['doc']).__name__}, not a mapping: no verdict")
            outcome, fe, why = verify_sample(s, backend, config)
            out.append(SampleVerdict(task, model, method, s.get("doc_id"), outcome, fe, why[:300], src))
    for task, n in sorted(skipped.items()):
        problems.append(f"{task}: {n} samples skipped (not a structured seven-tag task)")
    return out


def summarize(verdicts) -> list[dict]:
    """One row per (model, method): counts of each outcome and shares of the verified samples."""
    groups = {}
    for v in verdicts:
        groups.setdefault((v.model, v.method), Counter())[v.outcome] += 1
    rows = []
    for (model, method) in sorted(groups, key=lambda k: (k[0], method_sort(k[1]))):
        c = groups[(model, method)]
        verified = sum(c[k] for k in ("MC", "CM", "CE", "none"))
        errors = sum(c[k] for k in CLASSES)
        rows.append({"model": model, "method": method, "samples": sum(c.values()), "verified": verified,
                     **{k: c[k] for k in OUTCOMES},
                     **{f"{k}_share": (c[k] / verified if verified else None) for k in ("MC", "CM", "CE", "none")},
                     **{f"{k}_of_errors": (c[k] / errors if errors else None) for k in CLASSES},
                     "FORMAT_of_samples": (c["FORMAT"] / sum(c.values()) if c else None)})
    return rows


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def tables(rows, problems=()) -> tuple[str, str]:
    md = ["| model | method | samples | verified | MC | CM | CE | none | format failure | no verdict | no reference |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['model']} | {method_label(r['method'])} | {r['samples']} | {r['verified']} | "
                  + " | ".join(f"{r[k]} ({_pct(r[k + '_share'])})" for k in ("MC", "CM", "CE", "none"))
                  + f" | {r['FORMAT']} ({_pct(r['FORMAT_of_samples'])}) | {r['no verdict']} | {r['no reference']} |")
    md += ["", "Cells: count (percent of the verified samples) of the first wrong step's class; none = all steps "
           "verified. Format failures (missing, broken or out-of-order tags, no tags, several answers, nan) are "
           "counted apart, as a percent of all samples, and are not in the verified count."]
    with_err = [r for r in rows if r["MC_of_errors"] is not None]
    if with_err:
        md += ["", "Among the erroneous responses: " + "; ".join(
            f"{r['model']} / {method_label(r['method'])}: " + ", ".join(f"{k} {_pct(r[k + '_of_errors'])}" for k in CLASSES)
            for r in with_err) + "."]
    if problems:
        md += ["", "Not counted:", ""] + [f"- {p}" for p in problems]
    buf = io.StringIO()
    cols = ["model", "method", "samples", "verified", *OUTCOMES, "MC_share", "CM_share", "CE_share", "none_share",
            "MC_of_errors", "CM_of_errors", "CE_of_errors", "FORMAT_of_samples"]
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r[k] is None else (f"{r[k]:.6f}" if isinstance(r[k], float) else r[k]) for k in cols])
    return "\n".join(md) + "\n", buf.getvalue()


def plot(rows, out) -> Path | None:
    """Stacked bars: share of MC / CM / CE / none / format failure among the samples with a verdict."""
    rows = [r for r in rows if r["verified"] + r["FORMAT"]]
    if not rows:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(max(4, 1.1 * len(rows) + 2), 3.4))
    xs = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    colors = {"MC": "#d95f02", "CM": "#7570b3", "CE": "#e7298a", "none": "#1b9e77", "FORMAT": "#999999"}
    for k in ("MC", "CM", "CE", "none", "FORMAT"):
        ys = [r[k] / (r["verified"] + r["FORMAT"]) for r in rows]
        ax.bar(xs, ys, 0.6, bottom=bottom, label=k, color=colors[k])
        bottom = [b + y for b, y in zip(bottom, ys)]
    ax.set_xticks(xs, [f"{r['model']}\n{method_label(r['method'])}\n(n={r['verified'] + r['FORMAT']})" for r in rows],
                  fontsize=7)
    ax.set_ylabel("share of responses with a verdict")
    ax.set_ylim(0, 1)
    ax.set_title("first error class", fontsize=9)
    ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    return save(plt, fig, out)


def write(paths, out, backend: str = "symbolic", problems: list | None = None, config=None):
    """Analyse and write OUT/errors.{md,csv,jsonl,png}; returns (md path, csv path, png path or None, verdicts)."""
    problems = [] if problems is None else problems
    verdicts = analyse(paths, backend, problems, config)
    rows = summarize(verdicts)
    md, csv_text = tables(rows, problems)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "errors.md").write_text(f"# First-error classes ({backend} verifier)\n\n" + md, encoding="utf-8")
    (out / "errors.csv").write_text(csv_text, encoding="utf-8")
    with open(out / "errors.jsonl", "w", encoding="utf-8") as fh:
        for v in verdicts:
            fh.write(json.dumps(asdict(v), ensure_ascii=False) + "\n")
    png = None
    try:
        png = plot(rows, out / "errors.png")
    except ImportError as e:
        problems.append(f"plot skipped: {e} (pip install matplotlib)")
    return out / "errors.md", out / "errors.csv", png, verdicts
