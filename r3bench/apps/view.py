"""`r3bench view`: one self-contained HTML page (no server, no network) of scored solutions.

    r3bench view PATH [PATH ...] --out page.html [--no-verify]
    r3bench view A B --compare --out page.html     two runs side by side, problem by problem

PATH: an lm-eval output folder (every samples_*.jsonl under it), an lm-eval samples file, the learning
study's scored samples (rows {id, response, acc, first_error, error_class, explanation}, the problem
read back from procgen by its id), or a trainer run's training samples (its output folder, or its
stepfix_samples.jsonl / grpo_samples.jsonl: stepfix's first attempt with its verdict, the feedback it
was given and each revision with its own verdict and reward; GRPO's completion with each reward, its
reason and the verdict's class). Each solution shows its seven steps, the
first wrong step marked with its class and the verifier's explanation (steps after it dimmed), the
answer the checker read against the gold, and filters (right / wrong, error class, task, text).
An r3_stepverify sample shows the solution the model judged, the labelled first error, and the
model's verdict against it. With --compare, the problems both runs answered (same task and id) stand
side by side, each marked gained / lost / both right / both wrong (B against A), with McNemar's exact
test on the gained and lost ones (r3bench.results.stats.sign_test) on top. Model text is data: it is embedded as JSON (with `<` escaped) and
written into the page with textContent only.

    to_items(path) -> [item]     compare(a, b) -> ([pair], summary)     page(items, title) -> str
    write(paths, out, compare=False) -> Path
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

from r3bench.eval import stepverify
from r3bench.results.stats import sign_test
from verifiers import seventag
from verifiers.steps import verify
from verifiers.verdict import TAG_OF_STEP

TEMPLATE = Path(__file__).with_name("view_page.html")


def _response(sample: dict) -> str:
    r = sample.get("filtered_resps") or sample.get("resps") or sample.get("response") or ""
    while isinstance(r, list):
        r = r[0] if r else ""
    return str(r)


def steps_of(text: str) -> list[dict]:
    """[{k, tag, text}] of the seven steps present; one step 0 with the raw text when none parse."""
    parsed = seventag.parse(text or "")
    got = [{"k": k, "tag": tag, "text": parsed.get(tag).content.strip()}
           for k, tag in TAG_OF_STEP.items() if parsed.get(tag) is not None]
    return got or [{"k": 0, "tag": "text", "text": (text or "").strip()}]


def _item(task: str, key: str, question: str, solution: str, first_error, error_class, explanation: str,
          answer: str, gold: str, right, extra: dict | None = None) -> dict:
    return {"task": task, "id": key, "question": question, "steps": steps_of(solution),
            "first_error": first_error, "error_class": error_class or "", "explanation": explanation or "",
            "answer": answer, "gold": gold, "right": right, **(extra or {})}


def _stepverify_item(task: str, s: dict) -> dict:
    doc, r = s["doc"], stepverify.read_reply(_response(s))
    o = stepverify.outcome(int(doc["first_error"]), doc["error_class"], r.step, r.error_class)
    gold = "none" if not doc["first_error"] else f"{doc['first_error']} {doc['error_class']}"
    return _item(task, doc["id"], doc["question"], doc["solution"], int(doc["first_error"]), doc["error_class"],
                 doc["explanation"], r.answer or "(unread)", gold, o["hit"],
                 {"reply": _response(s), "reason": r.reason, "source": doc.get("source", "")})


def _checker_item(task: str, s: dict, check_steps: bool) -> dict:
    doc, resp = s.get("doc") or {}, _response(s)
    fe, cls, why = None, "", ""
    if check_steps and seventag.parse(resp).n:
        v = verify(doc.get("question", ""), resp, doc.get("solution") or "")
        fe, cls, why = (v.first_error, v.error_class, v.explanation) if v.valid else (None, "", v.explanation)
    right = s.get("acc")
    return _item(task, str(doc.get("id", s.get("doc_id"))), doc.get("question", ""), resp, fe, cls, why,
                 str(s.get("answer", "")), str(s.get("target", doc.get("answer", ""))),
                 None if right is None else bool(right), {"reason": str(s.get("reason", ""))})


def _run_item(task: str, s: dict, problems: dict) -> dict:
    p = problems.get(s.get("id"))
    return _item(task, str(s.get("id")), p.question if p else "(problem not found)", s.get("response", ""),
                 s.get("first_error") if s.get("verifier_valid", True) else None, s.get("error_class"),
                 s.get("explanation", ""), (seventag.parse(s.get("response", "")).final_answer or "").strip(),
                 p.answer if p else "", bool(s.get("acc", s.get("correct"))),
                 {"reason": f"step reward {s['step_reward']:.3f}" if "step_reward" in s else ""})


def _final(text: str) -> str:
    return (seventag.parse(text or "").final_answer or "").strip()


def _revision(rv: dict) -> dict:
    """One revision of a stepfix record: its steps, verdict and reward."""
    e2 = rv.get("e2")
    return {"steps": steps_of(rv.get("y2", "")), "first_error": e2, "error_class": rv.get("class2") or "",
            "explanation": rv.get("why2") or "", "answer": _final(rv.get("y2", "")), "r": rv.get("r2"),
            "right": None if e2 is None else e2 == 0,
            "reason": rv.get("skip_reason") or rv.get("reward2_reason") or ""}


def _stepfix_item(task: str, s: dict) -> dict:
    """A stepfix training sample (stepfix_samples.jsonl): the first attempt y1 with its verdict, the
    feedback the trainer gave and each revision y2 with its own verdict; right = no wrong step in y1
    (the verifier's word: a training record holds no checker verdict)."""
    e1 = s.get("e1")
    revs = s.get("revisions") or ([s] if "y2" in s else [])
    r1 = s.get("r1")
    head = f"step {s.get('step')}: r1 {r1:.3f}" if isinstance(r1, (int, float)) else f"step {s.get('step')}"
    if revs:
        head += "; r2 " + ", ".join(f"{rv['r2']:.3f}" if isinstance(rv.get("r2"), (int, float)) else "-"
                                    for rv in revs)
    if s.get("skipped") and s.get("skip_reason"):
        head += f"; no loss: {s['skip_reason']}"
    return _item(task, f"{s.get('id')}@{s.get('step')}", s.get("question") or "(question not in this samples file)",
                 s.get("y1", ""), e1, s.get("class1"), s.get("why1", ""), _final(s.get("y1", "")),
                 str(s.get("gold", "")), None if e1 is None else e1 == 0,
                 {"reason": head, "feedback": s.get("feedback") or "",
                  "revisions": [_revision(rv) for rv in revs]})


def _grpo_item(task: str, s: dict) -> dict:
    """A GRPO training sample (grpo_samples.jsonl): the completion, each reward with its reason, the step
    verdict's class where a step-level reward gave one (right: every such verdict "correct")."""
    classes = [c for c in (s.get("verdicts") or {}).values() if c]
    cls = next((c for c in classes if c != "correct"), classes[0] if classes else "")
    rewards = s.get("rewards") or {}
    why = s.get("reasons") or {}
    parts = [f"{n} {v:.3f}" if isinstance(v, (int, float)) else f"{n} -" for n, v in rewards.items()]
    note = (f"step {s.get('step')}, group {s.get('group')}: " + ", ".join(parts)
            + (f"; advantage {s['advantage']:.3f}" if isinstance(s.get("advantage"), (int, float)) else "")
            + ("; hit the generation cap" if s.get("truncated") else "")
            + ("; left its group (no verdict)" if s.get("removed") else ""))
    if why:
        note += "\n" + "\n".join(f"{n}: {w}" for n, w in why.items())
    return _item(task, f"{s.get('step')}:{s.get('rank', 0)}:{s.get('index')}", s.get("prompt", ""),
                 s.get("completion", ""), 0 if cls == "correct" else None, "" if cls == "correct" else cls, "",
                 _final(s.get("completion", "")), "", (cls == "correct") if classes else None, {"reason": note})


TRAINING_SAMPLES = ("stepfix_samples.jsonl", "grpo_samples.jsonl")


class ViewError(ValueError):
    """A path the viewer cannot read (its message names the file and line; the CLI prints it, exit 2)."""


SAMPLE_GLOBS = ("samples_*.jsonl", "samples_*.jsonl.gz")


def _rows(path: Path) -> list[dict]:
    """The JSON lines of a samples file (gzip-compressed when its name ends in .gz); a line that is not
    a JSON object (a truncated file, not a samples file) is ViewError naming file:line."""
    try:
        with (gzip.open(path, "rt", encoding="utf-8") if path.name.endswith(".gz")
              else open(path, encoding="utf-8")) as f:
            lines = f.read().splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as e:  # gzip.BadGzipFile is an OSError
        raise ViewError(f"{path}: cannot be read as a samples file ({type(e).__name__}: {e})") from None
    rows = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise ViewError(f"{path}:{no}: not a JSON line ({e.msg} at column {e.colno}): "
                            "a truncated or non-samples file?") from None
        if not isinstance(row, dict):
            raise ViewError(f"{path}:{no}: a samples line is a JSON object, got {type(row).__name__}")
        rows.append(row)
    return rows


def _procgen_problems() -> dict:
    from r3bench.eval import procgen_data

    return {p.id: p for tier in (1, 2, 3) for p in procgen_data.problems(tier)}


def to_items(path: Path, check_steps: bool = True) -> list[dict]:
    """The page's items from one samples file (lm-eval's or a run's) or an lm-eval output folder."""
    path = Path(path)
    if path.is_dir():
        globs = SAMPLE_GLOBS + TRAINING_SAMPLES + tuple(f"{n}.gz" for n in TRAINING_SAMPLES)
        files = sorted({f for g in globs for f in path.rglob(g)})
        if not files:
            raise ViewError(f"{path}: a folder with no samples files ({' or '.join(SAMPLE_GLOBS)} under it, which "
                            f"lm_eval writes with --log_samples, or a trainer's {' or '.join(TRAINING_SAMPLES)})")
        return [it for f in files for it in to_items(f, check_steps)]
    rows = _rows(path)
    stem = path.name.removesuffix(".gz").removesuffix(".jsonl")
    task = stem.removeprefix("samples_").rsplit("_20", 1)[0]  # lm-eval: samples_<task>_<time>
    if rows and "y1" in rows[0]:  # a stepfix run's training samples
        return [_stepfix_item(f"stepfix step {s.get('step')}", s) for s in rows]
    if rows and "completion" in rows[0] and "rewards" in rows[0]:  # a GRPO run's training samples
        return [_grpo_item(f"grpo step {s.get('step')}", s) for s in rows]
    if rows and "doc" not in rows[0]:  # a trainer run's / the learning study's samples
        problems = _procgen_problems()
        return [_run_item(stem, s, problems) for s in rows]
    if task.startswith("r3_stepverify"):
        return [_stepverify_item(task, s) for s in rows]
    return [_checker_item(task, s, check_steps) for s in rows]


def change(a, b) -> str:
    """B against A on one problem: gained, lost, both right, both wrong (unscored when either is)."""
    if a is None or b is None:
        return "unscored"
    return {(False, True): "gained", (True, False): "lost", (True, True): "both right"}.get((a, b), "both wrong")


def compare(a: list[dict], b: list[dict]) -> tuple[list[dict], dict]:
    """Run B's items beside run A's on the problems both hold, and the paired summary. Problems pair by
    task and id where both runs hold the same tasks (two lm-eval runs), else by id (two runs' samples
    files, named after their runs)."""
    same_tasks = {it["task"] for it in a} == {it["task"] for it in b}
    key = (lambda it: (it["task"], it["id"])) if same_tasks else (lambda it: it["id"])
    by_key = {key(it): it for it in a}
    pairs = []
    for it in b:
        other = by_key.get(key(it))
        if other is not None:
            pairs.append({**it, "other": other, "change": change(other["right"], it["right"])})
    n = {c: sum(p["change"] == c for p in pairs) for c in ("gained", "lost", "both right", "both wrong", "unscored")}
    p = sign_test(n["gained"], n["lost"])
    summary = {"paired": len(pairs), **n, "mcnemar_p": None if p != p else p,  # NaN is no JSON: none discordant
               "only_a": len(a) - len(pairs), "only_b": len(b) - len(pairs)}
    return pairs, summary


def _json_for_script(data) -> str:
    # inside <script> only `</` could end the element; \u003c keeps the JSON valid and inert
    # ensure_ascii: a lone surrogate in model text stays an escape (as UTF-8 it could not be written)
    return json.dumps(data, ensure_ascii=True, allow_nan=False).replace("<", "\\u003c")


def page(items: list[dict], title: str = "r3bench view", summary: dict | None = None) -> str:
    """The HTML page (template view_page.html, the items and the comparison's summary embedded as JSON)."""
    import html

    return (TEMPLATE.read_text(encoding="utf-8").replace("{{TITLE}}", html.escape(title))
            .replace("{{DATA}}", _json_for_script({"items": items, "summary": summary})))


def write(paths, out: Path, check_steps: bool = True, title: str | None = None, compare_runs: bool = False) -> Path:
    """The page of `paths` (with compare_runs: exactly two, A then B) written to `out`."""
    names = [Path(p).name for p in paths]
    if compare_runs:
        if len(paths) != 2:
            raise ValueError(f"--compare takes two runs (A and B), got {len(paths)}")
        items, summary = compare(to_items(Path(paths[0]), check_steps), to_items(Path(paths[1]), check_steps))
        title = title or f"r3bench view: B {names[1]} against A {names[0]}"
    else:
        items, summary = [it for p in paths for it in to_items(Path(p), check_steps)], None
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page(items, title or f"r3bench view: {', '.join(names)}", summary), encoding="utf-8")
    return out
