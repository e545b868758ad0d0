"""Every verdict of the checker and the step verifier on every committed labelled set, and a check against it.

    python heldout/snapshot.py --check [--sets NAME,...] [--limit N]   recompute; print every difference; exit 1 on any
    python heldout/snapshot.py --write [--sets NAME,...]               recompute and refresh heldout/snapshot/
    python heldout/snapshot.py --list                                  the sets, their shapes and snapshot files

Run `--check` before and after a change to verifiers/ (a refactor must print no difference); a change meant to
move verdicts lists and justifies every difference it prints in its commit, then `--write`s the new snapshot.

The sets (discovered here, in this order; a set's name is its file's path in the repository):

- benchmarks/check_pairs.jsonl, r3bench/apps/demo_pairs.jsonl, tests/verifiers/data/*.jsonl (Math-Verify's
  cases): answer pairs, checked as their tests check them;
- heldout/round*/: answers_*.jsonl (answer pairs, their options as written), solutions_*.jsonl (seven-tag
  solutions), real_answers_graded*.jsonl and real_solutions_graded*.jsonl (hand grades of real model outputs,
  committed by key: resolved as heldout_report.py resolves them, from results/ and $R3BENCH_DATA_DIR);
- heldout/verifier_heldout.jsonl (seven-tag solutions);
- r3bench/eval/stepverify_items.jsonl:procgen (the step-verification items made by procgen; its other items
  are the solutions of heldout/, already here).

Answer rows get check() as heldout_report.py calls it (`_check`: the options as a letter -> text mapping, the
jeebench mode for JEEBench's integer and numeric real outputs) and keep (correct, score, reason); solution rows
get verify(question, solution, reference) with the symbolic backend and keep (valid, first_error, n_steps,
error_class). A reason longer than REASON_CHARS is kept as its start and a hash of the whole. Each row also
keeps `in`, a hash of what was passed to the function, so that a changed input shows as such, not as a
changed verdict. A row that cannot be read or verified (bad JSON, a missing field, a key that resolves to no
sample, an exception) keeps its error instead, and the run goes on.

Order: each set is computed in a fresh Python process, its rows in file order. The step verifier's verdict on
an item can depend on which items it verified earlier in the same process, so a verdict is only reproducible
with the same predecessors: --check runs exactly what --write ran, and `--limit N` (the first N rows of each
set, each set again in a fresh process) gives the same verdicts as the full run's first N rows. (When this was
written, every set verified in reverse order in one shared process gave the same verdicts; the fixed order
keeps the check exact whether or not that holds.)

Cost: the full --write or --check, 29 sets and 5,179 rows, took 342 s at nice 19 on 2 cores; most of it is each
real set's process reading the benchmark data again (about 15 s a set).

Writes heldout/snapshot/<set name, '/' and ':' as '__'>.jsonl, one row per (set, id):
{"id", "line", "in", "verdict": {...}} or {"id", "line", "error"}.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SNAPSHOT = HERE / "snapshot"
REASON_CHARS = 100  # a longer reason is kept as its first 80 characters and a hash of the whole


@dataclass(frozen=True)
class Set:
    name: str  # the file's path in the repository (":procgen" for a selection of it)
    path: Path
    shape: str  # answers | solutions | real_answers | real_solutions
    source: str | None = None  # keep only the rows of this `source` (stepverify_items.jsonl)

    @property
    def snapshot_file(self) -> Path:
        return SNAPSHOT / (re.sub(r"[/:]", "__", self.name.removesuffix(".jsonl").replace(".jsonl:", ":")) + ".jsonl")


def _round_key(p: Path):
    m = re.search(r"\d+", p.name)
    return (int(m.group()) if m else 0, p.name)


ROUND_FILES = (("answers_*.jsonl", "answers"), ("solutions_*.jsonl", "solutions"),
               ("real_answers_graded*.jsonl", "real_answers"), ("real_solutions_graded*.jsonl", "real_solutions"))


#: a round folder holding this file is a blind set committed before the fixes it measures and not scored yet:
#: the snapshot leaves it out (computing its verdicts would be scoring it); delete the file when it is scored,
#: then `--write --sets` its files
BLIND = "BLIND"


def blind_rounds(root: Path = ROOT) -> list[str]:
    """The held-out round folders marked blind (not scored yet, not snapshotted)."""
    return [p.relative_to(root).as_posix() for p in sorted((root / "heldout").glob("round*")) if (p / BLIND).is_file()]


def discover(root: Path = ROOT) -> tuple[list[Set], list[str]]:
    """The labelled sets committed under `root`, in the snapshot's order, and the .jsonl files of the held-out
    rounds that fit no known shape (listed, not snapshotted)."""
    out, unknown = [], []

    def add(path: Path, shape: str, source: str | None = None):
        if path.is_file():
            name = path.relative_to(root).as_posix() + (f":{source}" if source else "")
            out.append(Set(name, path, shape, source))

    add(root / "benchmarks" / "check_pairs.jsonl", "answers")
    add(root / "r3bench" / "apps" / "demo_pairs.jsonl", "answers")
    for f in sorted((root / "tests" / "verifiers" / "data").glob("*.jsonl")):
        add(f, "answers")
    for folder in sorted((p for p in (root / "heldout").glob("round*") if p.is_dir()), key=_round_key):
        if (folder / BLIND).is_file():
            continue  # a blind round not scored yet: its verdicts are computed once, when it is scored
        seen = set()
        for pattern, shape in ROUND_FILES:
            for f in sorted(folder.glob(pattern)):
                seen.add(f)
                add(f, shape)
        unknown += [f.relative_to(root).as_posix() for f in sorted(folder.glob("*.jsonl")) if f not in seen]
    add(root / "heldout" / "verifier_heldout.jsonl", "solutions")
    add(root / "r3bench" / "eval" / "stepverify_items.jsonl", "solutions", source="procgen")
    return out, unknown


def sha(obj) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def short(reason: str) -> str:
    reason = str(reason)
    return reason if len(reason) <= REASON_CHARS else f"{reason[:80]}... #{sha(reason)}"


def read_rows(path: Path) -> list[tuple[int, dict | str]]:
    """(line number, row) for every non-blank line; a line that is not a JSON object is its error text."""
    rows = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                rows.append((i, f"not JSON: {e}"))
                continue
            rows.append((i, row if isinstance(row, dict) else f"not a JSON object: {type(row).__name__}"))
    return rows


def row_id(row, line: int) -> str:
    """The row's own name (id, key, or Math-Verify's source), else a hash of the row (stable when rows move)."""
    if isinstance(row, dict):
        for k in ("id", "key", "source"):
            if isinstance(row.get(k), (str, int)) and str(row[k]):
                return str(row[k])
        return f"#{sha(row)}"
    return f"line {line}"


class _Verdicts:
    """The functions the sets' own scorers call (heldout/heldout_report.py), loaded once per process."""

    def __init__(self, data_dir: Path):
        sys.path.insert(0, str(ROOT))
        import importlib.util

        spec = importlib.util.spec_from_file_location("heldout_report", HERE / "heldout_report.py")
        self.hr = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("heldout_report", self.hr)
        spec.loader.exec_module(self.hr)
        from verifiers import CheckConfig
        from verifiers.steps import verify

        self.verify, self.default_cfg, self.data_dir, self.samples = verify, CheckConfig(), data_dir, {}

    def _resolve(self, row: dict, solutions: bool) -> dict:
        if not self.data_dir.is_dir():
            raise FileNotFoundError(f"no data directory {self.data_dir} (set R3BENCH_DATA_DIR or --data-dir)")
        return self.hr.resolve_real([row], self.data_dir, solutions, self.samples)[0]

    def __call__(self, shape: str, row: dict) -> tuple[str, dict]:
        """(hash of the inputs, verdict) of one row; raises on a row it cannot verify."""
        if shape.startswith("real_"):
            row = self._resolve(row, solutions=shape == "real_solutions")
        if shape.endswith("answers"):
            ref = row["ref"] if "ref" in row else row["gold"]
            pred, kind, options = row["pred"], row.get("kind"), row.get("options")
            cfg = self.default_cfg
            if shape == "real_answers" and row["benchmark"] == "jeebench" and kind in ("integer", "numeric"):
                cfg = self.hr.JEE
            v = self.hr._check(pred, ref, kind, cfg, options)
            return (sha([pred, ref, kind, options, cfg.mode]),
                    {"correct": bool(v.equivalent), "score": v.score, "reason": short(v.reason)})
        q, sol, ref = row["question"], row["solution"], row["reference"]
        v = self.verify(q, sol, ref)
        return (sha([q, sol, ref]), {"valid": v.valid, "first_error": v.first_error, "n_steps": v.n_steps,
                                     "error_class": v.error_class})


def compute(s: Set, limit: int | None, data_dir: Path) -> list[dict]:
    """The snapshot rows of one set, in file order (the first `limit` rows), in this process."""
    verdict = _Verdicts(data_dir)
    rows, seen = [], {}
    for line, row in read_rows(s.path):
        if s.source and isinstance(row, dict) and row.get("source") != s.source:
            continue
        if limit is not None and len(rows) >= limit:
            break
        rid = row_id(row, line)
        seen[rid] = seen.get(rid, 0) + 1
        if seen[rid] > 1:
            rid = f"{rid}~{seen[rid]}"
        out = {"id": rid, "line": line}
        if isinstance(row, str):
            out["error"] = row
        else:
            try:
                out["in"], out["verdict"] = verdict(s.shape, row)
            except Exception as e:  # noqa: BLE001 - a row that cannot be verified is recorded, never a crash
                what = f"missing field {e}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
                out["error"] = short(what)
        rows.append(out)
    return rows


def compute_fresh(s: Set, limit: int | None, data_dir: Path) -> list[dict]:
    """compute() in a fresh Python process (so no earlier set's items come before this set's); a process that
    fails leaves one row {"id": "*", "error"} for the whole set."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.jsonl"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--one", s.name, "--out", str(out),
               "--data-dir", str(data_dir)] + (["--limit", str(limit)] if limit is not None else [])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        if p.returncode != 0 or not out.exists():
            tail = (p.stderr or p.stdout).strip().splitlines()[-1:] or [f"exit status {p.returncode}"]
            return [{"id": "*", "line": 0, "error": short(f"the set could not be computed: {tail[0]}")}]
        return [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines() if x]


def read_snapshot(s: Set) -> list[dict] | None:
    if not s.snapshot_file.exists():
        return None
    return [json.loads(x) for x in s.snapshot_file.read_text(encoding="utf-8").splitlines() if x]


def write_snapshot(s: Set, rows: list[dict]) -> None:
    SNAPSHOT.mkdir(parents=True, exist_ok=True)
    s.snapshot_file.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows),
                               encoding="utf-8")


def _state(r: dict | None):
    if r is None:
        return "(no row)"
    return {"error": r["error"]} if "error" in r else r["verdict"]


def differences(s: Set, before: list[dict] | None, after: list[dict], limited: bool) -> list[str]:
    """One line per difference, (set, id, before, after); with `limited`, rows past the computed ones are not
    missed."""
    if before is None:
        return [f"{s.name}: no snapshot ({s.snapshot_file.relative_to(ROOT)}); run --write"]
    old, new = {r["id"]: r for r in before}, {r["id"]: r for r in after}
    out = []
    for rid, a in new.items():
        b = old.get(rid)
        if b is None:
            out.append(f"{s.name} | {rid} | new row | {_state(a)}")
        elif b.get("in") != a.get("in") and "error" not in a and "error" not in b:
            out.append(f"{s.name} | {rid} | input changed | {_state(b)} -> {_state(a)}")
        elif _state(b) != _state(a):
            out.append(f"{s.name} | {rid} | {_state(b)} -> {_state(a)}")
    if not limited and not any(r["id"] == "*" for r in after):
        out += [f"{s.name} | {rid} | row gone | {_state(b)}" for rid, b in old.items() if rid not in new]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="recompute and print every difference; exit 1 on any")
    mode.add_argument("--write", action="store_true", help="recompute and refresh the snapshot")
    mode.add_argument("--list", action="store_true", help="the sets and their snapshot files")
    mode.add_argument("--one", metavar="SET", help=argparse.SUPPRESS)  # one set, in this process (compute_fresh)
    ap.add_argument("--sets", default="", help="comma-separated set names, or parts of them (default: every set)")
    ap.add_argument("--limit", type=int, default=None, help="--check: only the first N rows of each set")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="benchmark data for the real sets (default $R3BENCH_DATA_DIR or ../shared/data)")
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    data_dir = a.data_dir or Path(os.environ.get("R3BENCH_DATA_DIR") or ROOT.parent / "shared" / "data")
    sets, unknown = discover()
    if a.one:
        s = next(x for x in sets if x.name == a.one)
        a.out.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
                                 for r in compute(s, a.limit, data_dir)), encoding="utf-8")
        return 0
    if a.write and a.limit is not None:
        ap.error("--write refreshes whole sets: no --limit")
    wanted = [w.strip() for w in a.sets.split(",") if w.strip()]
    chosen = [s for s in sets if not wanted or any(w in s.name for w in wanted)]
    if wanted and not chosen:
        ap.error(f"no set matches {a.sets!r} (--list names them)")
    if a.list:
        for s in sets:
            old = read_snapshot(s)
            print(f"{s.name}\t{s.shape}\t{s.snapshot_file.relative_to(ROOT)}\t"
                  f"{'-' if old is None else len(old)} rows")
        for u in unknown:
            print(f"{u}\t(not snapshotted: no known shape)")
        return 0
    for u in unknown:
        print(f"note: {u} is not snapshotted (no known shape); add it to ROUND_FILES", file=sys.stderr)
    diffs, t_all = [], time.perf_counter()
    for s in chosen:
        t0 = time.perf_counter()
        rows = compute_fresh(s, a.limit, data_dir)
        errors = sum("error" in r for r in rows)
        print(f"{s.name}: {len(rows)} rows, {errors} errors, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        if a.write:
            write_snapshot(s, rows)
            continue
        diffs += differences(s, read_snapshot(s), rows, limited=a.limit is not None)
    if not wanted and a.check:  # a snapshot file no set makes any more
        known = {s.snapshot_file for s in sets}
        diffs += [f"{f.relative_to(ROOT)}: snapshot of a set that is gone" for f in sorted(SNAPSHOT.glob("*.jsonl"))
                  if f not in known]
    print(f"{len(chosen)} sets, {time.perf_counter() - t_all:.0f} s", file=sys.stderr)
    if a.write:
        print(f"wrote {len(chosen)} sets to {SNAPSHOT.relative_to(ROOT)}/")
        return 0
    print("\n".join(diffs) if diffs else "no difference")
    return 1 if diffs else 0


if __name__ == "__main__":
    raise SystemExit(main())
