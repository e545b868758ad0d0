"""lm-eval glue: datasets, prompts, metrics and filters used by the task YAMLs in `tasks/r3/`.

The YAML files stay thin; everything they call lives here, so it is importable, testable and shared
with the trainers (which score through the same `process_results`).

    custom_dataset: !function r3bench.eval.lmeval.dataset_<benchmark>   -> DatasetDict {"test": ...}
    doc_to_text:    !function r3bench.eval.lmeval.prompt_cot | prompt_structured
    process_results: !function r3bench.eval.lmeval.results_<variant>
    metric aggregation: !function r3bench.eval.lmeval.agg_*

The data directory comes from `--metadata '{"data_dir": "..."}'` or R3BENCH_DATA_DIR.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from importlib import resources

from r3bench import procgen
from r3bench.core.prompts import ANSWER_FORM, prompt_cot, prompt_structured  # noqa: F401 - used by the YAMLs
from r3bench.eval import data as _data
from r3bench.eval import tasks_dir
from verifiers import CheckConfig, canonical, check
from verifiers import seventag

# the multiple-choice answer kinds: their tasks report strict and flexible extraction (acc, acc_flexible)
MCQ_KINDS = ("mcq", "mcq_multi")
# task datasets that are no benchmark of the table (r3bench.eval.data.BENCHMARKS): their answer kinds
_OTHER_KINDS = {"demo": ("mcq", "integer", "numeric"), "procgen_mixture": _data.JEE_KINDS}
# benchmarks with more than one answer kind report accuracy per kind (acc_<kind>); derived from the
# benchmark table at each use, so the YAML generator (tasks/r3/_generate.py) lists the same metrics
BENCH_KINDS = _data.TableView(lambda b: b.kinds, keep=lambda b: len(b.kinds) > 1, extra=_OTHER_KINDS)
# benchmarks with multiple-choice documents: their tasks list acc_flexible (lm-eval needs every key that
# process_results returns in the task's metric_list, so the key is returned for these benchmarks only)
MCQ_BENCHMARKS = _data.TableView(lambda b: True, keep=lambda b: b.mcq, extra=dict.fromkeys(_OTHER_KINDS, True))
# JEEBench scoring: the tolerance (jee_abs_tol = 0.01, compute_metrics.py) lives in CheckConfig;
# jeebench = official scores (MCQ(multiple) 0.25 per option), jeebench_marks = exam marks (MCQ -1
# when wrong, multi -2 with a wrong option, Integer / Numeric 0 when wrong: no negative marking)
JEE = CheckConfig(mode="jeebench")
JEE_MARKS = CheckConfig(mode="jeebench_marks")


# --- task names (checked before a model loads) -------------------------------------------------

_NAME = re.compile(r"^(?:task|group): *([A-Za-z0-9_.-]+) *$", re.M)
# tasks that read no data directory: embedded problems, the procedural bank, the PDE instances
_NO_DATA = ("r3_demo", "r3_procgen", "r3_pde")


def task_names() -> set[str]:
    """Every task and group name of r3bench's task folder (tasks/r3/*.yaml)."""
    return {m for f in sorted(tasks_dir().glob("*.yaml")) for m in _NAME.findall(f.read_text(encoding="utf-8"))}


def needs_data(task: str) -> bool:
    """Whether an r3bench task (or group) reads the benchmark data directory."""
    return task in task_names() and not task.startswith(_NO_DATA)


def unknown_tasks_message(names) -> str | None:
    """One line naming the r3bench-like task names that are not r3bench's, with the closest names; None
    when every name is known (names unlike any of r3bench's are left to lm-eval: they may be its own)."""
    import difflib

    known, bad = task_names(), []
    for t in names:
        if t in known or "*" in t or t.endswith(".yaml"):
            continue
        close = difflib.get_close_matches(t, sorted(known), n=3, cutoff=0.75)
        if close or t.startswith("r3_"):
            bad.append(f"{t!r} (closest: {', '.join(close) or 'none'})")
    if not bad:
        return None
    return f"unknown task {'; '.join(bad)}; all r3bench tasks: r3bench tasks-path, or tasks/r3/README.md"


# --- datasets ------------------------------------------------------------------------------------

def to_doc(r: _data.Record) -> dict:
    """The lm-eval document of one benchmark record (what every r3 task's dataset holds)."""
    return {
        "id": r.id, "benchmark": r.benchmark, "question": r.question, "options": list(r.options or ()),
        "answer": r.answer, "answer_kind": r.answer_kind, "unit": r.unit or "", "solution": r.solution or "",
        "topic": r.topic or "", "source": r.source or "", "meta": json.dumps(r.meta or {}, ensure_ascii=False),
    }


def records_to_dataset(records):
    import datasets

    docs = [to_doc(r) for r in records]
    features = datasets.Features({
        "id": datasets.Value("string"), "benchmark": datasets.Value("string"),
        "question": datasets.Value("string"), "options": datasets.Sequence(datasets.Value("string")),
        "answer": datasets.Value("string"), "answer_kind": datasets.Value("string"),
        "unit": datasets.Value("string"), "solution": datasets.Value("string"),
        "topic": datasets.Value("string"), "source": datasets.Value("string"), "meta": datasets.Value("string"),
    })
    return datasets.Dataset.from_list(docs, features=features)


def dataset(benchmark: str, data_dir=None, file=None, **_metadata):
    """DatasetDict {"test": ...} of one benchmark, read from the data directory (never a hub)."""
    import datasets

    kw = {"file": file} if file else {}
    return datasets.DatasetDict({"test": records_to_dataset(_data.load(benchmark, data_dir, **kw))})


_DATASETS: dict = {}


def __getattr__(name: str):
    """`dataset_<benchmark>` for every entry of the benchmark table (the task YAMLs name them:
    `custom_dataset: !function r3bench.eval.lmeval.dataset_jeebench`); one function object per name."""
    bench = name[len("dataset_"):] if name.startswith("dataset_") else None
    if bench not in _data.BENCHMARKS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _DATASETS:
        def from_table(**kw):
            return dataset(bench, **kw)

        from_table.__name__ = from_table.__qualname__ = name
        from_table.__doc__ = f"DatasetDict {{'test': ...}} of {bench} (r3bench.eval.lmeval.dataset)."
        _DATASETS[name] = from_table
    return _DATASETS[name]


def dataset_procgen(procgen_n: int = 2494, procgen_seed: int = 0, procgen_split: str = "test", **_metadata):
    """The test split of the procedural bank (generated in-process, deterministic for n and seed).

    The keywords are prefixed because lm-eval passes every --model_args key here too (as metadata)."""
    n, seed, split = procgen_n, procgen_seed, procgen_split
    import datasets

    probs = procgen.test_split(int(n), int(seed)) if split == "test" else \
        tuple(p for p in procgen.generate(n=int(n), seed=int(seed)) if p.split == split)
    recs = [_data.Record(id=p.id, benchmark="procgen", question=p.question, options=(), answer=p.answer,
                         answer_kind="numeric", unit=p.answer_unit or None, solution=p.solution, topic=p.topic,
                         source=f"procgen:{p.template}", meta={"difficulty": p.difficulty, "template": p.template})
            for p in probs]
    return datasets.DatasetDict({"test": records_to_dataset(recs)})


def demo_records() -> list:
    """Six short physics problems written for r3bench (package data): the demo runs without a data dir."""
    text = resources.files("r3bench.core").joinpath("demo_problems.jsonl").read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.strip():
            d = json.loads(line)
            out.append(_data.Record(id=d["id"], benchmark="demo", question=d["question"], options=tuple(d["options"]),
                                    answer=d["answer"], answer_kind=d["answer_kind"], topic=d.get("topic"),
                                    source="r3bench/core/demo_problems.jsonl"))
    return out


def dataset_demo(**_metadata):
    import datasets

    return datasets.DatasetDict({"test": records_to_dataset(demo_records())})



# --- metrics -------------------------------------------------------------------------------------

def _ref(doc):
    return doc["answer"]


def options_of(doc) -> dict | None:
    """A multiple-choice document's options as the checker takes them ({"A": text, ...}), else None."""
    opts = doc.get("options") or ()
    if doc.get("answer_kind") not in ("mcq", "mcq_multi") or not opts:
        return None
    return {chr(ord("A") + i): str(o) for i, o in enumerate(opts[:26])}


def check_doc(doc, resp, cfg=CheckConfig()):
    """The checker's verdict on one response to one lm-eval document, as the tasks score it."""
    # the options let the checker refuse a letter written with another option's text, and read an
    # option's text written without its letter (verifiers.answer, issue 32)
    return check(resp, _ref(doc), kind=doc["answer_kind"], cfg=cfg, options=options_of(doc))


def _by_kind(doc, ok: float) -> dict:
    return {f"acc_{k}": (doc["answer_kind"] == k, ok) for k in BENCH_KINDS.get(doc["benchmark"], ())}


def checked(v) -> dict:
    """What the samples file shows beside lm-eval's `target`: the answer the checker read from the
    response (its canonical form, e.g. "C" or "12 meter / second") and the checker's reason.

    lm-eval's `filtered_resps` keeps the whole response: the step verifier and `r3bench errors` read
    the solution there."""
    return {"answer": (v.pred_canonical or "")[:200], "reason": v.reason}


# --- strict-match and flexible-extract (lm-eval's names for the two readings of an MCQ answer) --------
# strict-match (`acc`): the answer as the prompt asks it, read by the checker (verifiers.check: the
#   committed letter, e.g. \boxed{C} or "The answer is (C)", or an option's text written without its
#   letter; hedges, several letters for a single answer, flip-flopping and a letter with another
#   option's text are refused).
# flexible-extract (`acc_flexible`): where the checker reads no answer at all, the options the final
#   answer names (flexible_letters): the <final_answer> tag's content, else the response's last
#   non-empty line; a single-answer question scores when exactly one option is named and it is the
#   gold one, a multi-correct one when the named set is the gold set. Where the checker reads an
#   answer, flexible = strict. So flexible >= strict, and a response naming several options of a
#   single-answer question never scores. The gap between the two is "cannot format", not "does not know".

_FINAL_TAG = re.compile(r"<final_answer>(.*?)(?:</final_answer>|$)", re.S | re.I)
# a standalone option letter: not inside a word or number, not a unit after a number ("3 C", "2 A"),
# not a variable ("F = ma", "v_B"), not the article "A" ("A ball ..."; "A and C" / "A or C" still name A)
_OPTION_LETTER = re.compile(r"(?<![\w°.'/^_])(?<!\d )([A-H])(?![\w'°/^_])(?!\s*[=^_])")
_ARTICLE = re.compile(r"\s+(?!(?:and|or|nor)\b)[a-z]")


def final_region(response: str) -> str:
    """What the flexible reading looks at: the last <final_answer> tag's content, else the last
    non-empty line of the response."""
    tags = _FINAL_TAG.findall(response or "")
    if tags:
        return tags[-1]
    lines = [ln for ln in (response or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def _norm_text(s: str) -> str:
    return re.sub(r"\s+", " ", str(s)).strip().rstrip(".").casefold()


def flexible_letters(response: str, doc) -> set:
    """The option letters the final answer names (final_region): standalone letters of the document's
    options, and options whose whole text appears there (word-bounded, case and spacing ignored).
    flexible_letters("We get 3 m", options 1 m / 2 m / 3 m / 4 m) == {"C"}."""
    opts = options_of(doc) or {}
    region = final_region(response)
    named = set()
    for m in _OPTION_LETTER.finditer(region):
        letter = m.group(1)
        if letter not in opts:
            continue
        if letter == "A" and _ARTICLE.match(region, m.end()):
            continue
        named.add(letter)
    low = _norm_text(region)
    for letter, text in opts.items():
        t = _norm_text(text)
        if t and re.search(r"(?<![\w.])" + re.escape(t) + r"(?![\w])", low):
            named.add(letter)
    return named


def flexible(doc, response: str, v) -> float:
    """flexible-extract of one response, given the checker's (strict) verdict v."""
    if doc.get("answer_kind") not in MCQ_KINDS or v.equivalent:
        return float(v.equivalent)
    if v.pred_canonical:  # the checker read an answer (or refused one): strict's verdict stands
        return 0.0
    named = flexible_letters(response, doc)
    gold = set(re.findall(r"[A-H]", str(doc["answer"]).upper()))
    if doc["answer_kind"] == "mcq" and len(named) != 1:
        return 0.0
    return float(bool(named) and named == gold)


def _flexible_metrics(doc, resp, v) -> dict:
    if doc.get("benchmark") not in MCQ_BENCHMARKS:
        return {}
    f = flexible(doc, resp, v)
    return {"acc_flexible": f, **{f"acc_flexible_{k}": (doc["answer_kind"] == k, f)
                                  for k in BENCH_KINDS.get(doc["benchmark"], ()) if k in MCQ_KINDS}}


def results_cot(doc, results):
    v = check_doc(doc, results[0])
    return {"acc": float(v.equivalent), **_by_kind(doc, float(v.equivalent)),
            **_flexible_metrics(doc, results[0], v), **checked(v)}


# --- baselines: what guessing scores on a benchmark's multiple-choice documents ---------------------

def _get(doc, key):
    return doc[key] if isinstance(doc, dict) else getattr(doc, key)


def baselines(docs) -> dict:
    """{kind: {"n", "majority", "majority_answer", "uniform"}} over the multiple-choice documents (dicts
    or r3bench.eval.data.Record), per answer kind (mcq, mcq_multi) and pooled ("all_mcq"):
    majority = the share of the most frequent gold answer (a letter, or a letter set for mcq_multi)
    - what always answering it scores; uniform = the expected accuracy of a uniform guess: 1 / (number
    of options) for mcq, 1 / (2^options - 1) for mcq_multi (one of the non-empty letter sets)."""
    groups: dict = {}
    for d in docs:
        kind = _get(d, "answer_kind")
        if kind not in MCQ_KINDS:
            continue
        n_opt = len(_get(d, "options") or ()) or 4
        gold = "".join(sorted(set(re.findall(r"[A-H]", str(_get(d, "answer")).upper()))))
        u = 1.0 / n_opt if kind == "mcq" else 1.0 / (2 ** n_opt - 1)
        for g in (kind, "all_mcq"):
            groups.setdefault(g, []).append((f"{kind}:{gold}", gold, u))
    out = {}
    for g, rows in sorted(groups.items(), key=lambda kv: (kv[0] == "all_mcq", kv[0])):
        (key, count), = Counter(k for k, _, _ in rows).most_common(1)
        out[g] = {"n": len(rows), "majority": count / len(rows), "majority_answer": key.split(":", 1)[1],
                  "uniform": sum(u for _, _, u in rows) / len(rows)}
    return out


def benchmark_baselines(benchmark: str, data_dir=None) -> dict:
    """baselines() of one benchmark's documents, read from the data directory."""
    return baselines(_data.load(benchmark, data_dir))


def results_structured(doc, results):
    out = results_cot(doc, results)
    out["format_compliance"] = seventag.format_compliance(results[0])
    return out


def _jee(doc, resp) -> dict:
    return {"jee_score": check_doc(doc, resp, JEE).score, "jee_marks": check_doc(doc, resp, JEE_MARKS).score}


def results_jeebench(doc, results):
    return {**results_cot(doc, results), **_jee(doc, results[0])}


def results_jeebench_structured(doc, results):
    return {**results_structured(doc, results), **_jee(doc, results[0])}


def vote_key(doc, resp):
    """Equivalent answers vote together: unit-aware (SI magnitude), letters as sets; None = no vote."""
    return canonical(resp, doc["answer_kind"], ref=doc["answer"])


def responses(results) -> list:
    """The k responses of one request: lm-eval 0.4.13 hands `repeats: k` through the KeepAll filter as
    [[r1, ..., rk]] (one list per request); a flat list is taken as it is."""
    if len(results) == 1 and isinstance(results[0], (list, tuple)):
        return list(results[0])
    return list(results)


def results_sc(doc, results):
    """Self-consistency over the k responses of `repeats: k`: maj@k (unit-aware votes), pass@k, acc@1."""
    results = responses(results)
    oks = [check_doc(doc, r).equivalent for r in results]
    keys = [vote_key(doc, r) for r in results]
    votes = Counter(k for k in keys if k is not None)
    if votes:
        top, _ = votes.most_common(1)[0]
        winner = next(r for r, k in zip(results, keys) if k == top)
        wv = check_doc(doc, winner)
        maj = wv.equivalent
    else:
        wv, maj = check_doc(doc, results[0]), False
    # answer and reason: the majority's (the first response's when no response gave an answer)
    return {"acc": float(oks[0]), "maj_at_k": float(maj), "pass_at_k": float(any(oks)),
            **_by_kind(doc, float(maj)), **checked(wv)}


def agg_kind(items) -> float:
    """Mean over the documents of one answer kind (items are (is_this_kind, score)); nan if none."""
    sel = [s for is_kind, s in items if is_kind]
    return sum(sel) / len(sel) if sel else float("nan")


def agg_total(items) -> float:
    return float(sum(items))


def agg_distinct(items) -> float:
    """The number of distinct values (answers or reasons; the values themselves stay in the samples)."""
    return float(len(set(items)))


# --- filters -------------------------------------------------------------------------------------

try:
    from lm_eval.api.filter import Filter as _Filter
except ImportError:  # lm-eval not installed: the checker and loaders still work
    _Filter = object


class KeepAll(_Filter):
    """Hand all `repeats` responses to process_results (lm-eval's default filter keeps the first)."""

    def __init__(self, **kwargs):
        pass

    def apply(self, resps, docs):
        return resps
