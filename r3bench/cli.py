"""The `r3bench` command line. Only this module (and demo's reporting) prints.

Subcommands:
  r3bench check PRED REF [--kind K]   one verdict as JSON
  r3bench check --jsonl FILE|-        one JSON verdict per input line, in input order
  r3bench data list [--data-dir D]    load the five benchmarks and count records and answer kinds
  r3bench demo                        the embedded default main job (what exists so far, end to end)
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Iterable, Iterator, TextIO

KINDS = ("numeric", "symbolic", "mcq", "mcq_multi", "integer")
MODES = ("default", "jeebench", "jeebench_marks")


def _config(args: argparse.Namespace):
    from verifiers import CheckConfig

    kw = {"mode": args.mode}
    if args.rel_tol is not None:
        kw["rel_tol"] = args.rel_tol
    if args.abs_tol is not None:
        kw["abs_tol"] = args.abs_tol
    return CheckConfig(**kw)


def check_lines(lines: Iterable[str], cfg) -> Iterator[dict]:
    """Check each JSONL line `{"pred", "ref", "kind"?}`; yield one result dict per non-blank line.

    A malformed line yields `{"line": i, "error": "..."}` instead of stopping the run.
    """
    from verifiers import check

    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as e:
            yield {"line": i, "error": f"invalid JSON: {e.msg} at column {e.colno}"}
            continue
        if not isinstance(obj, dict):
            yield {"line": i, "error": "line is not a JSON object"}
            continue
        missing = [k for k in ("pred", "ref") if k not in obj]
        if missing:
            yield {"line": i, "error": f"missing field(s): {', '.join(missing)}"}
            continue
        kind = obj.get("kind")
        if kind is not None and kind not in KINDS:
            yield {"line": i, "error": f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}"}
            continue
        pred, ref = obj["pred"], obj["ref"]
        if not isinstance(ref, str):
            ref = json.dumps(ref) if not isinstance(ref, (int, float)) else str(ref)
        if not isinstance(pred, str):
            pred = "" if pred is None else str(pred)
        out = {"line": i}
        out.update(check(pred, ref, kind=kind, cfg=cfg).to_dict())
        yield out


def _open(path: str) -> TextIO:
    return sys.stdin if path == "-" else open(path, encoding="utf-8")


def cmd_check(args: argparse.Namespace) -> int:
    cfg = _config(args)
    if args.jsonl:
        try:
            fh = _open(args.jsonl)
        except OSError as e:
            print(f"r3bench check: cannot read {args.jsonl}: {e.strerror}", file=sys.stderr)
            return 2
        with fh:
            for res in check_lines(fh, cfg):
                sys.stdout.write(json.dumps(res, ensure_ascii=False) + "\n")
        return 0
    if args.pred is None or args.ref is None:
        print("r3bench check: give PRED and REF, or --jsonl FILE", file=sys.stderr)
        return 2
    from verifiers import check

    print(json.dumps(check(args.pred, args.ref, kind=args.kind, cfg=cfg).to_dict(), ensure_ascii=False, indent=2))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from r3bench import demo

    return demo.run(out_dir=args.out, data_dir=args.data_dir)


def cmd_data(args: argparse.Namespace) -> int:
    from r3bench.data import summary_table

    table, errors = summary_table(args.data_dir)
    if table is not None:
        print(table)
    for e in errors:
        print(f"r3bench data: {e}", file=sys.stderr)
    return 1 if errors else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="r3bench", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    c = sub.add_parser("check", help="unit-aware answer check")
    c.add_argument("pred", nargs="?", help="raw model output (extraction runs first)")
    c.add_argument("ref", nargs="?", help="gold answer")
    c.add_argument("--kind", choices=KINDS, default=None, help="answer kind (inferred from REF if omitted)")
    c.add_argument("--jsonl", metavar="FILE", help='lines {"pred","ref","kind"?}; "-" reads stdin')
    c.add_argument("--mode", choices=MODES, default="default", help="scoring mode (JEEBench official / exam marks)")
    c.add_argument("--rel-tol", type=float, default=None, help="relative tolerance (default 1e-2)")
    c.add_argument("--abs-tol", type=float, default=None, help="absolute-tolerance mode")
    c.set_defaults(func=cmd_check)

    d = sub.add_parser("demo", help="run the embedded default main job")
    d.add_argument("--out", default="results/demo", help="output folder (default results/demo)")
    d.add_argument("--data-dir", default=None, help="benchmark data directory (default $R3BENCH_DATA_DIR)")
    d.set_defaults(func=cmd_demo)
    dl = sub.add_parser("data", help="benchmark data: `r3bench data list` loads and counts each benchmark")
    dl.add_argument("action", choices=("list",))
    dl.add_argument("--data-dir", default=None, help="benchmark data directory (default $R3BENCH_DATA_DIR)")
    dl.set_defaults(func=cmd_data)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
