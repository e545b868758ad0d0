"""The paper's own result tables ("Reason, Reward, Refine") as r3bench reference files.

`python -m r3bench.results.paper --data-dir DATA --out results` reads the transcribed tables in
`DATA/paper/` (`r3_accuracy.csv`: 5 benchmarks x 4 models x CoT/RAG/SFT/DPO/Ours, and
`r3_error_distribution.csv`: MC/CM/CE shares among incorrect PhysicsQA generations) and writes

* `OUT/paper_reference.csv`  - task, model, method, acc, n, source (the leaderboard's reference:
  `r3bench leaderboard --reference`), and
* `OUT/paper_errors.csv`     - task, model, method, error_class, share, source.

Both are checked on the way in: a missing file, a missing column, an accuracy or share outside [0, 1],
an unknown error class or a duplicated (task, model, method[, class]) raises `DataError` naming the
file and line. The paper counts a generation under every error class it shows (the three shares of a
cell do not sum to 1); r3bench's own error table counts the first error only - compare shares, not sums.
The output is sorted, so the same input gives the same bytes.
"""
from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

from r3bench.eval.data import DataError

ACC_FILE = "paper/r3_accuracy.csv"
ERR_FILE = "paper/r3_error_distribution.csv"
ACC_FIELDS = ("task", "model", "method", "acc", "n", "source")
ERR_FIELDS = ("task", "model", "method", "error_class", "share", "source")
ERROR_CLASSES = ("MC", "CM", "CE")


def _fraction(v: str, what: str, where: str) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise DataError(f"{where}: {what} {v!r} is not a number") from None
    if not 0.0 <= x <= 1.0:
        raise DataError(f"{where}: {what} {x} is not a fraction in [0, 1]")
    return x


def _read(path: Path, fields: tuple[str, ...]) -> list[tuple[int, dict]]:
    if not path.is_file():
        raise DataError(f"{path}: the paper's table is missing")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: unreadable ({type(e).__name__}: {e})") from None
    r = csv.DictReader(io.StringIO(text))
    missing = [k for k in fields if k not in (r.fieldnames or [])]
    if missing:
        raise DataError(f"{path}: missing column(s) {missing}")
    rows = []
    for i, row in enumerate(r, start=2):
        vals = {k: (row.get(k) or "").strip() for k in fields}
        empty = [k for k in fields if k not in ("n", "source") and not vals[k]]
        if empty:
            raise DataError(f"{path}:{i}: empty {empty} (a short row?)")
        rows.append((i, vals))
    return rows


def accuracy_rows(data_dir: str | Path) -> list[dict]:
    """The paper's accuracy table as reference rows (sorted by task, model, method)."""
    path = Path(data_dir) / ACC_FILE
    out, seen = [], set()
    for i, v in _read(path, ACC_FIELDS):
        where = f"{path}:{i}"
        acc = _fraction(v["acc"], "acc", where)
        if v["n"] and not v["n"].isdigit():
            raise DataError(f"{where}: n {v['n']!r} is not a count")
        key = (v["task"], v["model"], v["method"])
        if key in seen:
            raise DataError(f"{where}: {key} appears twice")
        seen.add(key)
        out.append({"task": v["task"], "model": v["model"], "method": v["method"], "acc": f"{acc:.4f}",
                    "n": v["n"], "source": v["source"]})
    return sorted(out, key=lambda d: (d["task"], d["model"], d["method"]))


def error_rows(data_dir: str | Path) -> list[dict]:
    """The paper's error-class shares (sorted by task, model, method, class)."""
    path = Path(data_dir) / ERR_FILE
    out, seen = [], set()
    for i, v in _read(path, ERR_FIELDS):
        where = f"{path}:{i}"
        share = _fraction(v["share"], "share", where)
        if v["error_class"] not in ERROR_CLASSES:
            raise DataError(f"{where}: error_class {v['error_class']!r} is not one of {ERROR_CLASSES}")
        key = (v["task"], v["model"], v["method"], v["error_class"])
        if key in seen:
            raise DataError(f"{where}: {key} appears twice")
        seen.add(key)
        out.append({**{k: v[k] for k in ERR_FIELDS}, "share": f"{share:.3f}"})
    order = {c: i for i, c in enumerate(ERROR_CLASSES)}
    return sorted(out, key=lambda d: (d["task"], d["model"], d["method"], order[d["error_class"]]))


def _csv(rows: list[dict], fields: tuple[str, ...]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write(data_dir: str | Path, out: str | Path = "results") -> tuple[Path, Path]:
    """Write OUT/paper_reference.csv and OUT/paper_errors.csv; returns their paths."""
    acc, err = accuracy_rows(data_dir), error_rows(data_dir)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    a, e = out / "paper_reference.csv", out / "paper_errors.csv"
    a.write_text(_csv(acc, ACC_FIELDS), encoding="utf-8")
    e.write_text(_csv(err, ERR_FIELDS), encoding="utf-8")
    return a, e


def main(argv: list[str] | None = None) -> int:
    import os
    import sys

    ap = argparse.ArgumentParser(prog="python -m r3bench.results.paper", description=__doc__.split("\n\n")[0],
                                 allow_abbrev=False)
    ap.add_argument("--data-dir", default=os.environ.get("R3BENCH_DATA_DIR"),
                    help="benchmark data directory holding paper/ (default $R3BENCH_DATA_DIR)")
    ap.add_argument("--out", default="results", help="output folder (default results)")
    args = ap.parse_args(argv)
    if not args.data_dir:
        print("python -m r3bench.results.paper: give --data-dir or set R3BENCH_DATA_DIR", file=sys.stderr)
        return 2
    try:
        a, e = write(args.data_dir, args.out)
    except DataError as err:
        print(f"python -m r3bench.results.paper: {err}", file=sys.stderr)
        return 1
    print(f"wrote {a} and {e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
