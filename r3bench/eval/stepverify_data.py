"""The items of the step-verification tasks (`r3_stepverify*`): a problem, a seven-tag solution and the
first wrong step (0 = every step right) with its class - ProcessBench's protocol, on physics.

    items(split="test", source=None) -> [dict]     read from the committed stepverify_items.jsonl
    python -m r3bench.eval.stepverify_data --write  rebuild that file (deterministic; a test checks it)

Three sources, one schema {id, source, origin, problem, question, reference, solution, first_error,
error_class, explanation, symbolic_dev, split, template}:

  real     SmolLM2's seven-tag solutions from the learning study's samples (results/learning/samples),
           graded by hand for their first error and class (heldout/round*/real_solutions_graded*.jsonl:
           the keys and grades; question and reference are procgen's tier problems, read back here)
  written  hand-written solutions, correct and with a labelled first error, by people who had not read
           the verifier (heldout/round*/solutions_r*.jsonl, heldout/verifier_heldout.jsonl)
  procgen  fresh procgen instances (seed SEED, none in the bank the trainers use: generate(2494, 0)), one
           solution per problem, cycling through the cells correct, MC@1, MC@4, CM@2, CM@3, CE@5, CE@6
           (r3bench.procgen.inject), so the cells are balanced

The split is by problem (every solution of one problem is in one split), across all sources: items
sharing a bare problem name (a written round's tag left out: thin_lens of solutions_r4 and of solutions_r6
is one problem) or a normalised question are one group (assign_splits); one in DEV_SHARE of the groups
goes to `dev` (prompt or threshold development), the rest to `test`; the test split is fixed by this file.
`symbolic_dev` marks the items the symbolic verifier was developed on: every hand-graded set was scored
once, blind, and then used as development data for the next round's fixes (heldout/round2/README.md),
and verifier_heldout.jsonl's batches were fixed against; only the procgen items are new to it.
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import re
from pathlib import Path

from r3bench import procgen

ITEMS = Path(__file__).with_name("stepverify_items.jsonl")
REPO = Path(__file__).resolve().parents[2]
SOURCES = ("real", "written", "procgen")
SPLITS = ("dev", "test")
DEV_SHARE = 5  # one problem in DEV_SHARE goes to dev (by a hash of its key)
SEED = 56
PROCGEN_TEST, PROCGEN_DEV = 280, 70  # problems (= solutions): 40 / 10 per cell in the test / dev split
CELLS = (("none", 0), ("MC", 1), ("MC", 4), ("CM", 2), ("CM", 3), ("CE", 5), ("CE", 6))
HELDOUT = ("round2", "round3", "round4", "round6", "round7")  # heldout/<name>/


def normalised(question: str) -> str:
    """A question as the split compares it: lower case, runs of whitespace and punctuation one space."""
    return re.sub(r"[\W_]+", " ", (question or "").lower()).strip()


def bare(problem: str) -> str:
    """A problem's name without its source's prefix ("procgen:...", a written round's tag)."""
    return problem.rpartition(":")[2]


def _split_of(problem_key: str) -> str:
    h = int(hashlib.sha256(problem_key.encode()).hexdigest()[:8], 16)
    return "dev" if h % DEV_SHARE == 0 else "test"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _item(**kw) -> dict:
    kw["error_class"] = kw["error_class"] if kw["first_error"] else ""
    kw.setdefault("split", _split_of(bare(kw["problem"])))
    order = ("id", "source", "origin", "problem", "split", "symbolic_dev", "template", "first_error", "error_class",
             "explanation", "question", "reference", "solution")
    return {k: kw.get(k, "") for k in order}


def written_items(repo: Path = REPO) -> list[dict]:
    out = []
    files = [(f"heldout/{h}/{f.name}", f) for h in HELDOUT for f in sorted((repo / "heldout" / h).glob("solutions_*.jsonl"))]
    files.append(("heldout/verifier_heldout.jsonl", repo / "heldout" / "verifier_heldout.jsonl"))
    for rel, path in files:
        tag = path.stem if path.stem != "verifier_heldout" else "vh"
        for r in _rows(path):
            out.append(_item(id=f"written:{tag}:{r['id']}", source="written", origin=f"{rel}#{r['id']}",
                             problem=f"{tag}:{r['problem']}", symbolic_dev=True, template=r.get("style") or "",
                             first_error=int(r["first_error"]), error_class=r["error_class"] or "",
                             explanation=str(r.get("note") or ""), question=r["question"],
                             reference=r["reference"], solution=r["solution"]))
    return out


@functools.lru_cache(maxsize=1)
def _tier_problems() -> dict:
    from r3bench.eval import procgen_data

    return {p.id: p for tier in (1, 2, 3) for p in procgen_data.problems(tier)}


def real_items(repo: Path = REPO) -> list[dict]:
    probs, cache, out = _tier_problems(), {}, []
    samples = repo / "results" / "learning" / "samples"
    for h in HELDOUT:
        for path in sorted((repo / "heldout" / h).glob("real_solutions_graded*.jsonl")):
            for g in _rows(path):
                name, _, doc = g["key"].rpartition("#")
                if name not in cache:
                    cache[name] = {str(s["doc_id"]): s for s in _rows(samples / f"{name}.jsonl")}
                s = cache[name][doc]
                p = probs[s["id"]]
                out.append(_item(id=f"real:{g['key']}", source="real", origin=f"heldout/{h}/{path.name}#{g['key']}",
                                 problem=f"procgen:{p.id}", symbolic_dev=True, template=p.template,
                                 first_error=int(g["first_error"]), error_class=g["error_class"] or "",
                                 explanation=str(g.get("reason") or ""), question=p.question,
                                 reference=p.solution, solution=s["response"]))
    return out


def procgen_items() -> list[dict]:
    """PROCGEN_TEST + PROCGEN_DEV fresh problems, one solution each, the cells cycled (a cell a template
    cannot take is passed to the next problem), none an instance of the trainers' bank."""
    bank = {p.id for p in procgen.generate(n=2494, seed=0)}
    fresh = [p for p in procgen.generate(n=3 * (PROCGEN_TEST + PROCGEN_DEV), seed=SEED) if p.id not in bank]
    out, want = [], {"test": PROCGEN_TEST // len(CELLS), "dev": PROCGEN_DEV // len(CELLS)}
    have = {(s, c): 0 for s in SPLITS for c in CELLS}
    for i, p in enumerate(fresh):
        split = "test" if i % 5 else "dev"
        for k in range(len(CELLS)):
            cell = CELLS[(i + k) % len(CELLS)]
            if have[(split, cell)] >= want[split]:
                continue
            if cell[1] == 0:
                text, fe, cls, why = p.solution, 0, "", "the reference solution"
            else:
                try:
                    text, fe, cls, why = procgen.inject_problem(p, cell[0], cell[1], seed=SEED)
                except procgen.InjectError:
                    continue
            have[(split, cell)] += 1
            out.append(_item(id=f"procgen:{p.id}", source="procgen", origin=f"procgen seed {SEED}: {p.template}",
                             problem=f"procgen:{p.id}", split=split, symbolic_dev=False, template=p.template,
                             first_error=fe, error_class=cls, explanation=why, question=p.question,
                             reference=p.solution, solution=text))
            break
        if all(have[(s, c)] >= want[s] for s in SPLITS for c in CELLS):
            return out
    raise ValueError(f"procgen: only {have} of {want} per cell")


def assign_splits(rows: list[dict]) -> list[dict]:
    """One split per problem across all sources: items sharing a bare problem name or a normalised
    question are one group (the same question in two written rounds, or written and real, is in one
    split). A group takes the split of its procgen items if it has any (they keep the cells balanced),
    else the split of its smallest bare problem name. In place; returns `rows`."""
    parent = list(range(len(rows)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict = {}
    for i, r in enumerate(rows):
        for key in (("p", bare(r["problem"])), ("q", normalised(r["question"]))):
            j = first.setdefault(key, i)
            parent[find(i)] = find(j)
    groups: dict = {}
    for i, r in enumerate(rows):
        groups.setdefault(find(i), []).append(r)
    for members in groups.values():
        forced = sorted(r["split"] for r in members if r["source"] == "procgen")
        split = forced[-1] if forced else _split_of(min(bare(r["problem"]) for r in members))
        for r in members:
            r["split"] = split
    return rows


def build(repo: Path = REPO) -> list[dict]:
    """Every item of every source, in a fixed order mixing the sources (sorted by a hash of the id), so that
    lm-eval's `--limit N` takes a sample of every source, erroneous and correct (what --write commits)."""
    rows = assign_splits(real_items(repo) + written_items(repo) + procgen_items())
    return sorted(rows, key=lambda r: hashlib.sha256(r["id"].encode()).hexdigest())


@functools.lru_cache(maxsize=1)
def _all() -> tuple:
    return tuple(_rows(ITEMS))


def items(split: str = "test", source: str | None = None) -> list[dict]:
    """The committed items of one split ("dev", "test" or "all"), of one source or all."""
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be one of {SPLITS + ('all',)}, got {split!r}")
    if source is not None and source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
    return [dict(r) for r in _all() if split in ("all", r["split"]) and source in (None, r["source"])]


def dataset_stepverify(stepverify_split: str = "test", stepverify_source: str = "", **_metadata):
    """DatasetDict {"test": ...} of one split and source ("" = all) for a task YAML. The keywords carry a
    prefix because lm-eval passes every --model_args key here too (as metadata)."""
    import datasets

    return datasets.DatasetDict({"test": datasets.Dataset.from_list(items(stepverify_split, stepverify_source or None))})


def text(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n" for r in rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="rebuild r3bench/eval/stepverify_items.jsonl")
    ap.add_argument("--write", action="store_true", help="write the file (default: check it is current)")
    a = ap.parse_args(argv)
    body = text(build())
    if a.write:
        ITEMS.write_text(body, encoding="utf-8")
        print(f"wrote {ITEMS.name}: {body.count(chr(10))} items")
        return 0
    same = ITEMS.is_file() and ITEMS.read_text(encoding="utf-8") == body
    print("current" if same else "stale: run python -m r3bench.eval.stepverify_data --write")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
