"""Benchmark loaders: one per benchmark, each reading a data directory into one record schema.

The data directory comes from `--data-dir`, else the environment variable `R3BENCH_DATA_DIR`.
Files are never copied into the project (their licenses are not stated); loaders read them where
they are. A missing or corrupt file raises `DataError` naming the file.

>>> recs = load("jeebench", data_dir)          # doctest: +SKIP
>>> recs[0].answer_kind, recs[0].answer          # ('mcq', 'B')
"""
from __future__ import annotations

import csv
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from r3bench.core.fetch import Source
from verifiers.answer import KINDS, infer_kind

ENV_VAR = "R3BENCH_DATA_DIR"
LETTERS = "ABCD"


class DataError(RuntimeError):
    """A benchmark file is missing, unreadable or not in the expected shape."""


@dataclass(frozen=True)
class Record:
    """One benchmark problem in r3bench's schema (the same for every benchmark)."""

    id: str
    benchmark: str
    question: str
    options: tuple[str, ...]
    answer: str                 # gold answer in checker form: "B", "ACD", "9", "0.75", "5 m/s^2"
    answer_kind: str            # mcq | mcq_multi | integer | numeric | symbolic | text
    unit: str | None = None
    solution: str | None = None
    topic: str | None = None
    source: str = ""            # file (relative to the data dir) and position
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["options"] = list(self.options)
        return d


def data_dir(path: str | os.PathLike | None = None) -> Path:
    """Resolve the data directory: the argument, else $R3BENCH_DATA_DIR; it must exist."""
    p = path if path is not None else os.environ.get(ENV_VAR)
    if not p:
        raise DataError(f"no data directory: {_data_dir_hint()}")
    p = Path(p).expanduser()
    if not p.is_dir():
        raise DataError(f"data directory {p} does not exist")
    return p


def _data_dir_hint() -> str:
    """How to give the data directory where the user is: the program they ran decides (lm_eval takes
    no --data-dir; r3bench's commands do; anything else reads the environment variable)."""
    argv0 = Path(sys.argv[0]).as_posix() if sys.argv and sys.argv[0] else ""
    prog = Path(argv0).name
    if prog in ("lm_eval", "lm-eval") or argv0.endswith("lm_eval/__main__.py"):
        return (f"set {ENV_VAR}=/path/to/data before running lm_eval "
                "(or pass --metadata '{\"data_dir\": \"/path/to/data\"}')")
    if prog.startswith("r3bench") or argv0.endswith("r3bench/cli.py"):
        return f"pass --data-dir /path/to/data (or set {ENV_VAR}=/path/to/data)"
    return f"set {ENV_VAR}=/path/to/data (or pass the directory: load(name, path), r3bench --data-dir)"


def _read(f: Path, parse, corrupt: tuple, **open_kw):
    """parse(open file) of a benchmark file; every way it can fail is a DataError naming the file."""
    try:
        with open(f, encoding="utf-8", **open_kw) as fh:
            return parse(fh)
    except FileNotFoundError:
        raise DataError(f"missing benchmark file: {f}") from None
    except corrupt as e:
        raise DataError(f"corrupt benchmark file {f}: {e}") from None
    except OSError as e:  # a directory where the file belongs, no permission, ...
        raise DataError(f"cannot read benchmark file {f}: {e.strerror or e}") from None


def _read_json(root: Path, rel: str) -> list:
    f = root / rel
    obj = _read(f, json.load, (json.JSONDecodeError, UnicodeDecodeError))
    if not isinstance(obj, list) or not all(isinstance(x, dict) for x in obj):
        raise DataError(f"corrupt benchmark file {f}: expected a JSON list of objects")
    return obj


def _need(row: dict, keys: tuple[str, ...], f: str, i: int) -> None:
    missing = [k for k in keys if k not in row]
    if missing:
        raise DataError(f"corrupt benchmark file {f}: record {i} lacks {', '.join(missing)}")


def _text(row: dict, key: str, f, i: int, empty_ok: bool = False) -> str:
    """row[key] as text; a null, a list, an object (or an empty text unless `empty_ok`) is a DataError
    naming the file and the record. Numbers are read as their text (a JSON answer 4 is "4")."""
    v = row.get(key)
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        what = "null" if v is None else f"a {type(v).__name__}"
        raise DataError(f"corrupt benchmark file {f}: record {i} field {key!r} is {what}, expected text")
    v = str(v)
    if not empty_ok and not v.strip():
        raise DataError(f"corrupt benchmark file {f}: record {i} field {key!r} is empty")
    return v


# ---- SciEval (static, physics, valid split) -------------------------------------------------
_OPT_LINE = re.compile(r"^\s*([A-D])[.)]\s*(.+)$", re.M)


def load_scieval(root: Path, file: str = "scieval/scieval-valid_physics.json") -> list[Record]:
    rows = _read_json(root, file)
    out = []
    for i, r in enumerate(rows):
        _need(r, ("question", "answer"), file, i)
        q = _text(r, "question", root / file, i)
        opts = tuple(m.group(2).strip() for m in _OPT_LINE.finditer(q))
        stem = q.split("\n\nA.")[0].strip() if opts else q
        a = r["answer"]
        if isinstance(a, list) and not a:
            raise DataError(f"corrupt benchmark file {root / file}: record {i} has an empty answer list")
        ans = _text({"answer": a[0]} if isinstance(a, list) else r, "answer", root / file, i)
        if ans.strip().upper()[:1] not in LETTERS:
            raise DataError(f"corrupt benchmark file {root / file}: record {i} answer {ans!r} is not one of A-D")
        out.append(Record(id=f"scieval-{i}", benchmark="scieval", question=stem, options=opts,
                          answer=ans.strip().upper()[:1], answer_kind="mcq", topic=r.get("topic"),
                          source=f"{file}#{i}", meta={"ability": r.get("ability"), "task_name": r.get("task_name")}))
    return out


# ---- MMLU physics (MoRA variant JSON, or the standard no-header CSV splits) ------------------
_INLINE_OPTS = re.compile(r"(?:^|,\s*)([A-D])\.\s*")


def _split_inline_options(s: str) -> tuple[str, ...]:
    parts = _INLINE_OPTS.split(s)
    # parts: ['', 'A', text, 'B', text, ...]
    opts = {parts[k]: parts[k + 1].strip() for k in range(1, len(parts) - 1, 2)}
    return tuple(opts[x] for x in LETTERS if x in opts)


def _load_mmlu(root: Path, bench: str, file: str) -> list[Record]:
    out = []
    if file.endswith(".csv"):
        f = root / file
        rows = _read(f, lambda fh: list(csv.reader(fh)), (csv.Error, UnicodeDecodeError), newline="")
        for i, r in enumerate(rows):
            if len(r) != 6 or r[5].strip() not in LETTERS:
                raise DataError(f"corrupt benchmark file {f}: row {i + 1} is not question,A,B,C,D,answer")
            out.append(Record(id=f"{bench}-{Path(file).stem}-{i}", benchmark=bench, question=r[0],
                              options=tuple(r[1:5]), answer=r[5].strip(), answer_kind="mcq",
                              source=f"{file}#{i}"))
        return out
    for i, r in enumerate(_read_json(root, file)):
        _need(r, ("question", "input", "answer"), file, i)
        question = _text(r, "question", root / file, i)
        opts = _split_inline_options(_text(r, "input", root / file, i))
        if len(opts) != 4:
            raise DataError(f"corrupt benchmark file {root / file}: record {i} options do not parse")
        answer = _text(r, "answer", root / file, i).strip()
        if len(answer) != 1 or answer not in LETTERS:
            raise DataError(f"corrupt benchmark file {root / file}: record {i} answer {answer!r} is not one of A-D")
        out.append(Record(id=f"{bench}-{i}", benchmark=bench, question=question, options=opts,
                          answer=answer, answer_kind="mcq", topic=r.get("topic"),
                          source=f"{file}#{i}"))
    return out


def load_mmlu_high(root: Path, file: str = "mmlu_high/mora_variant/MMLU_High_School_Physics.json") -> list[Record]:
    return _load_mmlu(root, "mmlu_high", file)


def load_mmlu_college(root: Path, file: str = "mmlu_college/mora_variant/MMLU_College_Physics.json") -> list[Record]:
    return _load_mmlu(root, "mmlu_college", file)


# ---- JEEBench (physics) ----------------------------------------------------------------------
_JEE_KINDS = {"MCQ": "mcq", "MCQ(multiple)": "mcq_multi", "Integer": "integer", "Numeric": "numeric"}
_JEE_OPT = re.compile(r"[(\[]([A-D])[)\]]\s*(.*?)(?=\n\s*[(\[][A-D][)\]]|\Z)", re.S)

_JEE_LATEX_LABEL = re.compile(r"\$?[(\[]\\mathrm\{([A-D])\}[)\]]\s*(?:\\quad)?\s*")


def _jee_options(q: str) -> tuple[str, ...]:
    """Options "(A) ..", "[A] ..", "$[\\mathrm{A}] \\quad ..$" at line starts, in the order given."""
    norm = _JEE_LATEX_LABEL.sub(lambda m: f"({m.group(1)}) $", q)
    return tuple(m.group(2).strip() for m in _JEE_OPT.finditer(norm))


def load_jeebench(root: Path, file: str = "jeebench/dataset_phy.json") -> list[Record]:
    out = []
    for i, r in enumerate(_read_json(root, file)):
        _need(r, ("question", "type", "gold"), file, i)
        rid = f"jeebench-{r.get('description', '')}-{r.get('index', i)}".replace(" ", "_")
        where = f"{i} ({rid})"
        kind = _JEE_KINDS.get(_text(r, "type", root / file, where))
        if kind is None:
            raise DataError(f"corrupt benchmark file {root / file}: record {where} has unknown type {r['type']!r}")
        question = _text(r, "question", root / file, where)
        gold = _text(r, "gold", root / file, where).strip()
        opts = _jee_options(question) if kind.startswith("mcq") else ()
        out.append(Record(id=rid,
                          benchmark="jeebench", question=question, options=opts, answer=gold,
                          answer_kind=kind, source=f"{file}#{i}",
                          meta={"type": r["type"], "description": r.get("description")}))
    return out


# ---- PhysicsQA ---------------------------------------------------------------------------------
# JSON escapes that ate a LaTeX backslash: "\right" -> CR + "ight", "\theta" -> TAB + "heta", ...
_ESCAPE_DAMAGE = {"\r": "\\r", "\t": "\\t", "\x07": "\\a", "\x08": "\\b", "\x0c": "\\f", "\x0b": "\\v"}
_DAMAGE_RE = re.compile("[\r\t\x07\x08\x0c\x0b](?=[A-Za-z])")
_PQA_LABEL = re.compile(r"^\s*(?:answer\s*:?\s*)?\(?([a-dA-D1-4])[).]\s*(.*)$", re.S | re.I)
_NUM_ANS = re.compile(r"^\s*(?:[A-Za-z][\w₀-₉]*\s*=\s*)?([-+]?\d+(?:\.\d+)?)\s*([A-Za-z/²³µΩ°·^\-\d]*)\s*$")


_LABEL_SCHEMES = (("(a)", "(b)", "(c)", "(d)"), ("(1)", "(2)", "(3)", "(4)"),
                  ("a.", "b.", "c.", "d."), ("1.", "2.", "3.", "4."))


def split_options(inp: str) -> tuple[str, ...]:
    """Split a PhysicsQA option string into four options.

    Labels (a)-(d), (1)-(4), "a."-"d." or "1."-"4." must appear in order, each at the start or after
    white space; failing that, four non-empty lines are four unlabelled options.
    """
    if not inp.strip():
        return ()
    low = inp.lower()
    for scheme in _LABEL_SCHEMES:
        pos, start = [], 0
        for lab in scheme:
            k = low.find(lab, start)
            while k > 0 and not low[k - 1].isspace():
                k = low.find(lab, k + 1)
            if k < 0:
                break
            pos.append(k)
            start = k + len(lab)
        if len(pos) == 4:
            ends = pos[1:] + [len(inp)]
            return tuple(inp[a + len(scheme[j]):b].strip() for j, (a, b) in enumerate(zip(pos, ends)))
    lines = [x.strip() for x in inp.splitlines() if x.strip()]
    return tuple(lines) if len(lines) == 4 else ()


def _norm_text(s: str) -> str:
    return re.sub(r"[\s$~{}]|\\mathrm|\\text", "", s).lower()


def repair_escapes(s: str) -> tuple[str, int]:
    """Undo JSON-escape damage to LaTeX (returns the text and the number of repairs)."""
    n = 0

    def sub(m: re.Match) -> str:
        nonlocal n
        n += 1
        return _ESCAPE_DAMAGE[m.group(0)]

    return _DAMAGE_RE.sub(sub, s), n


def _label_to_letter(lab: str) -> str:
    lab = lab.lower()
    return LETTERS["abcd".index(lab)] if lab in "abcd" else LETTERS[int(lab) - 1]


def _free_form_kind(ans: str) -> str:
    """Answer kind of a free-form PhysicsQA answer: a lone LaTeX number/expression, or text."""
    one_formula = re.fullmatch(r"\$[^$\n]+\$", ans.strip()) is not None
    k = infer_kind(ans)
    if k == "numeric" or (k == "symbolic" and one_formula):
        return k
    return "text"


def load_physicsqa(root: Path, file: str = "physicsqa/PhysicsQA.json") -> list[Record]:
    out = []
    for i, r in enumerate(_read_json(root, file)):
        _need(r, ("question", "answer"), file, i)
        fields, repaired = {}, 0
        for k in ("question", "input", "answer", "solution"):
            required = k in ("question", "answer")
            if required or r.get(k) is not None:  # input and solution may be absent or null, never a list
                _text(r, k, root / file, i, empty_ok=not required)
            fields[k], n = repair_escapes(str(r.get(k) or ""))
            repaired += n
        q = re.sub(r"^Q\d+:\s*", "", fields["question"].strip())
        inp, ans = fields["input"].strip(), fields["answer"].strip()
        opts = split_options(inp)
        meta = {"repaired_escapes": repaired, "answer_text": ans}
        multi = re.findall(r"\(([a-d])\)", ans) if " and " in ans else []
        m = _PQA_LABEL.match(ans)
        if opts and len(multi) > 1:
            kind, gold = "mcq_multi", "".join(sorted(_label_to_letter(x) for x in multi))
        elif opts and m:
            kind, gold = "mcq", _label_to_letter(m.group(1))
            meta["answer_option_text"] = m.group(2).strip()
        elif opts and len(ans) == 1 and ans.lower() in "abcd1234":
            kind, gold = "mcq", _label_to_letter(ans)
        elif opts and _norm_text(ans) in [_norm_text(o) for o in opts]:
            kind, gold = "mcq", LETTERS[[_norm_text(o) for o in opts].index(_norm_text(ans))]
        else:
            num = _NUM_ANS.match(ans.replace("$", ""))
            if m and not opts:      # a labelled answer without an options list: keep its text
                ans = m.group(2).strip()
                num = _NUM_ANS.match(ans.replace("$", ""))
            if num:
                unit = num.group(2) or None
                kind, gold = ("integer" if unit is None and "." not in num.group(1) else "numeric"), \
                    f"{num.group(1)} {unit}".strip() if unit else num.group(1)
                meta["unit"] = unit
            else:
                kind, gold = _free_form_kind(ans), ans
        out.append(Record(id=f"physicsqa-{i}", benchmark="physicsqa", question=q, options=opts, answer=gold,
                          answer_kind=kind, unit=meta.get("unit"), solution=fields["solution"] or None,
                          topic=r.get("topic"), source=f"{file}#{i}", meta=meta))
    return out


# ---- the one benchmark table ----------------------------------------------------------------------
# Every list of benchmarks in r3bench derives from BENCHMARKS: the loaders (LOADERS), the paper's counts
# (PAPER_COUNTS), the answer kinds the tasks report (r3bench.eval.lmeval.BENCH_KINDS), the lm-eval
# datasets (lmeval.dataset_<name>) and task YAMLs (tasks/r3/_generate.py: r3_<name>, _structured, _sc and
# the groups r3_physics*), the demo's tasks, `r3bench data fetch` (fetch_sources) and the leaderboard's
# benchmark of a task. Adding a benchmark = a loader and its entry here, then `python tasks/r3/_generate.py`.

@dataclass(frozen=True)
class Benchmark:
    """One benchmark of the table: what r3bench needs to know about it, beside its loader."""

    name: str
    loader: Callable[..., list[Record]]         # (root, file=...) -> records (its default file in the data dir)
    paper_count: int | None = None              # the paper's N (its accuracies are multiples of 1/N); None: not in it
    kinds: tuple[str, ...] = ("mcq",)           # answer kinds; with several, the tasks report acc_<kind> for each
    splits: tuple[tuple[str, str], ...] = ()    # (split, file): extra CoT tasks r3_<name>_<split> on another file
    exam_scores: bool = False                   # JEEBench's official score and exam marks (jee_score, jee_marks)
    demo: bool = True                           # `r3bench demo` scores a few of its problems when data is found
    sources: tuple[Source, ...] = ()            # the pinned files `r3bench data fetch` downloads

    @property
    def task(self) -> str:
        """The main lm-eval task (chain-of-thought prompt): r3_<name>."""
        return f"r3_{self.name}"

    def variants(self) -> tuple[str, ...]:
        """The lm-eval tasks over its default file: CoT, seven-tag structured, self-consistency."""
        return (self.task, f"{self.task}_structured", f"{self.task}_sc")

    def tasks(self) -> tuple[str, ...]:
        """Every lm-eval task of this benchmark: its variants, then one CoT task per split."""
        return (*self.variants(), *(f"{self.task}_{s}" for s, _ in self.splits))

    @property
    def mcq(self) -> bool:
        """Whether it has multiple-choice documents (its tasks report acc_flexible)."""
        return any(k in ("mcq", "mcq_multi") for k in self.kinds)


def _phy_only(rows):
    return [r for r in rows if r.get("subject") == "phy"]


_MORA = ("maximus-21/MoRA", "622d671e62aa774f108259f583ed6707fe460fd2")
_CS336 = ("stanford-cs336/assignment5-alignment", "eb2c562e05802d3c9ee4c4ec2eec43b104d77e9e")
_JEEBENCH = ("hgaurav2k/JEEBench", "b44560c6c2155c722197f5f32f20fcadedc5bdda")


def _mmlu_csvs(prefix: str, hashes: dict) -> tuple[Source, ...]:
    return tuple(Source(f"{prefix}_{s}.csv", *_CS336, f"data/mmlu/{s}/{prefix.split('/')[-1]}_{s}.csv", h)
                 for s, h in hashes.items())


JEE_KINDS = ("mcq", "mcq_multi", "integer", "numeric")

BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    Benchmark("scieval", load_scieval, 164, sources=(
        Source("scieval/scieval-valid_physics.json", *_MORA, "Dataset/SciEval_Static_Physics.json",
               "81c31edff6c5c20e0126befb0edf2f88728f978e4f366151a1b11e8bcf9f1437"),)),
    Benchmark("mmlu_high", load_mmlu_high, 170, splits=(("test", "mmlu_high/high_school_physics_test.csv"),),
              sources=(Source("mmlu_high/mora_variant/MMLU_High_School_Physics.json", *_MORA,
                              "Dataset/MMLU_High_School_Physics.json",
                              "c7b84b882fb659762d7f9004dd543bcd9e86f9d89900c99dc3310673ee5ce6de"),
                       *_mmlu_csvs("mmlu_high/high_school_physics", {
                           "dev": "5f008c3a44e7b14d86f6c1cbde28892fd0d97ae424e8af9901d75c4ee03972cc",
                           "val": "3861ace8d359bac8b8560481599212193d38120fc350082680d99ad2090eeb0e",
                           "test": "573e0f8d8309e4669f53a4b13248a908507b6d5d4c97c977f7bb9814658fee54"}))),
    Benchmark("mmlu_college", load_mmlu_college, 118, splits=(("test", "mmlu_college/college_physics_test.csv"),),
              sources=(Source("mmlu_college/mora_variant/MMLU_College_Physics.json", *_MORA,
                              "Dataset/MMLU_College_Physics.json",
                              "54e8732ea67cff75bdb44efe056da93b4e3b6ea6fc98f094ec4533b54cb2f615"),
                       *_mmlu_csvs("mmlu_college/college_physics", {
                           "dev": "6e043d6c566091c5ad1d8bc1d002900e1aa0bff114f98d5e3f2e4f645efce100",
                           "val": "55c80f8fdd225c5ff57ab952d583fa5f20ac719e2432e9062fd5fb00e4abe42e",
                           "test": "079c3696eda22c13b0472de245c7bb4918315b59481964109a4f65d2a35b4243"}))),
    Benchmark("jeebench", load_jeebench, 107, kinds=JEE_KINDS, exam_scores=True, sources=(
        Source("jeebench/dataset_phy.json", *_JEEBENCH, "dataset.json",
               "3f2bd9704f3c7513bbe2dc26b4c40f1a8980bd3da39d3b1159ea51a99649e923", _phy_only),)),
    Benchmark("physicsqa", load_physicsqa, 370, kinds=JEE_KINDS + tuple(k for k in KINDS if k not in JEE_KINDS),
              sources=(Source("physicsqa/PhysicsQA.json", *_MORA, "Dataset/PhysicsQA.json",
                              "a94cd573dd04fd7d65bc1cda384b38da3812b17cdf48d1102428a61164a06b04"),)),
)}


class TableView(Mapping):
    """A read-only {name: value} derived from BENCHMARKS at each use (so an entry added to the table -
    by `register`, or by a test - shows in every view at once), plus fixed `extra` names that are task
    datasets but no benchmarks (the demo problems, the procgen mixture)."""

    def __init__(self, value: Callable[[Benchmark], object], keep: Callable[[Benchmark], bool] = lambda b: True,
                 extra: dict | None = None):
        self._value, self._keep, self._extra = value, keep, dict(extra or {})

    def _items(self) -> dict:
        return {**{n: self._value(b) for n, b in BENCHMARKS.items() if self._keep(b)}, **self._extra}

    def __getitem__(self, name):
        return self._items()[name]

    def __iter__(self):
        return iter(self._items())

    def __len__(self):
        return len(self._items())

    def __repr__(self):
        return f"TableView({self._items()!r})"


LOADERS: Mapping[str, Callable[..., list[Record]]] = TableView(lambda b: b.loader)
# The paper's evaluation sets and their sizes (accuracies in its table are multiples of 1/N).
PAPER_COUNTS: Mapping[str, int] = TableView(lambda b: b.paper_count, keep=lambda b: b.paper_count is not None)


def benchmark(name: str) -> Benchmark:
    """The table's entry of a benchmark; an unknown name is a DataError listing the known ones."""
    if name not in BENCHMARKS:
        raise DataError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}")
    return BENCHMARKS[name]


def register(entry: Benchmark) -> Benchmark:
    """Add an entry to the table (a name already there is a ValueError); returns it."""
    if entry.name in BENCHMARKS:
        raise ValueError(f"benchmark {entry.name!r} is already in the table")
    BENCHMARKS[entry.name] = entry
    return entry


def benchmark_of(task: str) -> str | None:
    """The benchmark an r3 task scores (r3_jeebench_structured -> jeebench), None for others."""
    for b in sorted(BENCHMARKS, key=len, reverse=True):
        if task == f"r3_{b}" or str(task).startswith(f"r3_{b}_"):
            return b
    return None


def paper_count(task: str) -> int | None:
    """The paper's problem count of a task over a benchmark's full set (r3_<b>, _structured, _sc), else None."""
    return next((b.paper_count for b in BENCHMARKS.values() if task in b.variants()), None)


def fetch_sources() -> list[Source]:
    """Every file `r3bench data fetch` downloads, in the table's order."""
    return [s for b in BENCHMARKS.values() for s in b.sources]


def load(benchmark_name: str, path: str | os.PathLike | None = None, **kw) -> list[Record]:
    """Load one benchmark by name from the data directory (see `data_dir`)."""
    return benchmark(benchmark_name).loader(data_dir(path), **kw)


def summary_table(path: str | os.PathLike | None = None) -> tuple[str | None, list[str]]:
    """Load every benchmark from the data directory: (markdown table of sizes and answer kinds, errors)."""
    from collections import Counter

    from tqdm import tqdm

    try:
        root = data_dir(path)
    except DataError as e:
        return None, [str(e)]
    lines = ["| benchmark | records | paper's N | answer kinds |", "|---|---|---|---|"]
    errors = []
    for name in tqdm(LOADERS, desc="loading benchmarks", unit="benchmark"):
        try:
            recs = load(name, root)
        except DataError as e:  # listed and marked; the other benchmarks are still counted
            errors.append(str(e))
            lines.append(f"| {name} | error | {PAPER_COUNTS.get(name, '-')} | - |")
            continue
        kinds = ", ".join(f"{k} {v}" for k, v in Counter(r.answer_kind for r in recs).most_common())
        lines.append(f"| {name} | {len(recs)} | {PAPER_COUNTS.get(name, '-')} | {kinds} |")
    return "\n".join(lines), errors
