"""r3bench: score small language models on physics problems, check answers with units, train with step-level rewards.

Start with `r3bench demo` (the whole pipeline on a CPU) or `r3bench doctor` (what a run needs here).

For developers: the `r3bench` command line; only this module (and the demo's reporting) prints.

Subcommands:
  r3bench check PRED REF [--kind K]   one verdict as JSON
  r3bench check --jsonl FILE|-        one JSON verdict per input line, in input order
  r3bench data list [--data-dir D]    load every benchmark and count records and answer kinds
  r3bench data fetch --data-dir D     download the benchmark files from their sources, with checksums
  r3bench eval [--data-dir D] ...     `lm_eval` with r3bench's tasks, short model names, CPU default
  r3bench tasks-path                  the task folder, for `lm_eval --include_path`
  r3bench model path NAME             resolve a short model name (converting SmolLM2 once)
  r3bench model tiny DIR              build a tiny random model (tests, smoke runs)
  r3bench procgen --n N --seed S --out DIR   procedural problems: SFT, DPO, verifier, test-split exports
  r3bench verify --backend B --jsonl FILE   first wrong step + class per line {question, solution, reference}
  r3bench verifier-report --backend B  score a step verifier on the procedural verifier benchmark
  r3bench demo                        the embedded default main job (what exists so far, end to end)
  r3bench leaderboard PATHS...        accuracy tables (md + csv) from lm-eval result files, trainer runs, records
  r3bench record PATHS...             a run record beside every lm-eval results file / trainer run
  r3bench errors SAMPLES... --out D   first-error classes (MC/CM/CE) of logged structured samples: table + PNG
  r3bench reproduce PLAN [--dry-run]  train + evaluate a models x methods x tasks grid (estimated first)
  r3bench doctor [--json]             what a run needs here, in one table; then the sandbox's isolation level
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Iterable, Iterator, TextIO

from r3bench.apps import demo, doctor, reproduce, view
from r3bench.core import fetch, models
from r3bench.eval import data, lmeval
from r3bench.eval.data import summary_table
from r3bench.eval.hook import tasks_dir
from r3bench.procgen.export import export
from r3bench.results import errors, leaderboard, records, stepverify_board
from verifiers import KINDS, CheckConfig, check
from verifiers.steps import BACKENDS, backend, config_for, report, verify

MODES = ("default", "jeebench", "jeebench_marks")


def _config(args: argparse.Namespace):
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


class _NotUtf8(ValueError):
    def __init__(self, line: int, err: UnicodeDecodeError):
        super().__init__(f"line {line} is not UTF-8 text (byte 0x{err.object[err.start]:02x} at column "
                         f"{err.start + 1}): save the file as UTF-8")


def _utf8_lines(fh) -> Iterator[str]:
    """Lines of a binary stream decoded one by one, so a bad byte is reported with its line number."""
    for i, raw in enumerate(fh, start=1):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _NotUtf8(i, e) from None


def _jsonl_command(name: str, path: str, results) -> int:
    """Open a JSONL input ("-" = stdin) and write one JSON object per result, in input order.

    Input that is not UTF-8 stops the run with one line naming the file and line (exit code 2)."""
    try:
        if path == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text stream without a buffer (tests): as is
            fh = stdin if stdin is not None else sys.stdin
        else:
            fh = open(path, "rb")
    except OSError as e:
        print(f"r3bench {name}: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    lines = _utf8_lines(fh) if fh is not sys.stdin else fh
    try:
        with fh:
            for res in results(lines):
                sys.stdout.write(json.dumps(res, ensure_ascii=False) + "\n")
    except _NotUtf8 as e:
        sys.stdout.flush()
        print(f"r3bench {name}: {'stdin' if path == '-' else path}: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    cfg = _config(args)
    if args.jsonl and (args.pred is not None or args.ref is not None):
        # `r3bench check '--jsonl=FILE' 5`: an answer that reads as an option; nothing is opened
        print(f"r3bench check: --jsonl takes no PRED/REF; to check an answer that starts with '-', put -- before "
              f"the answers: r3bench check -- {json.dumps(args.jsonl if args.pred is None else args.pred)} ...",
              file=sys.stderr)
        return 2
    if args.jsonl:
        return _jsonl_command("check", args.jsonl, lambda fh: check_lines(fh, cfg))
    if args.pred is None or args.ref is None:
        print("r3bench check: give PRED and REF, or --jsonl FILE", file=sys.stderr)
        return 2

    v = check(args.pred, args.ref, kind=args.kind, cfg=cfg)
    print(json.dumps(v.to_dict(), ensure_ascii=False, indent=2))
    if not v.equivalent and check(args.ref, args.pred, kind=args.kind, cfg=cfg).equivalent:
        print("r3bench check: the arguments look swapped: PRED (the model's output) comes first, REF (the gold "
              "answer) second; the other way round they agree", file=sys.stderr)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    return demo.run(out_dir=args.out, data_dir=args.data_dir, eval_limit=args.limit,
                    max_gen_toks=args.max_gen_toks, skip_eval=args.no_eval, skip_train=args.no_train)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    problems, notes = [], []
    ref = None if args.reference == "none" else args.reference
    # nothing found: nothing written (an existing leaderboard.md is not replaced by an empty table)
    md, csv_path, n = leaderboard.write(args.paths, args.out, reference=ref, problems=problems, write_empty=False,
                                        notes=notes, data_dir=getattr(args, "data_dir", None))
    for x in problems + notes:
        print(f"r3bench leaderboard: {x}", file=sys.stderr)
    if n == 0:
        print(f"r3bench leaderboard: no lm-eval results, trainer evaluations or run records under {args.paths}",
              file=sys.stderr)
        return 1
    print(md.read_text(encoding="utf-8"))
    print(f"{n} cells -> {md}, {csv_path}")
    return 0


def cmd_record(args: argparse.Namespace) -> int:
    written, problems = records.write_all(args.paths, data_dir=args.data_dir, force=args.force)
    if args.copy_to:
        try:
            copied = records.copy_records(args.paths, args.copy_to)
            print(f"{len(copied)} records copied to {args.copy_to}")
        except records.RecordError as e:
            problems.append(str(e))
    for w in written:
        rec = json.loads(w.read_text(encoding="utf-8"))
        print(f"{w}: {len(rec['cells'])} cells" + (f"; {len(rec['problems'])} problem(s): "
                                                   + "; ".join(rec["problems"]) if rec["problems"] else ""))
    for x in problems:
        print(f"r3bench record: {x}", file=sys.stderr)
    if not written and not problems:
        print("r3bench record: nothing to do (every result has a record; --force rewrites them)", file=sys.stderr)
    return 1 if problems else 0


def verifier_config(args: argparse.Namespace, command: str):
    """The config of `--backend` from the verifier flags (--psv-model, --psv-threshold, --judge-base-url,
    --judge-model: `--<backend>-<field>`) over the backend's defaults, model names resolved; None after
    printing why when the backend is unknown or lacks something (exit code 2)."""
    if args.backend not in BACKENDS:
        print(f"r3bench {command}: unknown backend {args.backend!r} (have: {', '.join(BACKENDS)})", file=sys.stderr)
        return None
    prefix = f"{args.backend}_"
    given = {k.removeprefix(prefix): v for k, v in vars(args).items() if k.startswith(prefix)}
    cfg = config_for(args.backend, models.local_path, **given)
    why = backend(args.backend).problem(cfg)
    if why:
        print(f"r3bench {command}: --backend {args.backend} needs {why}", file=sys.stderr)
        return None
    return cfg


def add_verifier_flags(p: argparse.ArgumentParser, help_backend: str) -> None:
    """--backend and the backends' settings (each `--<backend>-<field>`; empty: the config's defaults)."""
    p.add_argument("--backend", default="symbolic", help=f"{help_backend}: {' | '.join(BACKENDS)} (default symbolic)")
    p.add_argument("--psv-model", default=None, help="psv: the PSV model folder or short name "
                                                     "(default $R3BENCH_PSV_MODEL)")
    p.add_argument("--psv-threshold", type=float, default=None, help="psv: a step under it is the first error "
                                                                      "(default $R3BENCH_PSV_THRESHOLD, else 0.5)")
    p.add_argument("--judge-base-url", default=None, help="judge: the OpenAI-compatible endpoint (.../v1; default "
                                                          "$R3BENCH_JUDGE_BASE_URL, else OpenAI); the API key: "
                                                          "$R3BENCH_JUDGE_API_KEY or $OPENAI_API_KEY")
    p.add_argument("--judge-model", default=None, help="judge: the served model (default $R3BENCH_JUDGE_MODEL, "
                                                       "else gpt-4o)")
    # the settings of every other backend of the table (one registered in verifiers.steps): its config's
    # fields, each `--<backend>-<field>` typed by its default, so a new backend needs no line here
    for name, b in BACKENDS.items():
        if name in ("symbolic", "judge", "psv"):  # written above (symbolic has none)
            continue
        for f in dataclasses.fields(b.config):
            kind = type(f.default) if isinstance(f.default, (int, float)) and not isinstance(f.default, bool) else str
            p.add_argument(f"--{name}-{f.name}".replace("_", "-"), dest=f"{name}_{f.name}", type=kind, default=None,
                           help=f"{name}: its config's {f.name} (default: the backend's, {f.default!r})")


def cmd_errors(args: argparse.Namespace) -> int:
    cfg = verifier_config(args, "errors")
    if cfg is None:
        return 2
    problems = []
    md, csv_path, png, verdicts = errors.write(args.samples, args.out, args.backend, problems, cfg)
    for x in problems:
        print(f"r3bench errors: {x}", file=sys.stderr)
    print(md.read_text(encoding="utf-8"))
    print(f"{len(verdicts)} samples -> {md}, {csv_path}" + (f", {png}" if png else " (nothing verified: no plot)"))
    return 0 if verdicts else 1


def cmd_reproduce(args: argparse.Namespace) -> int:
    return reproduce.run(args.plan, out=args.out, dry_run=args.dry_run, methods=args.methods,
                         log=lambda m: print(m, file=sys.stderr if m.startswith("error:") else sys.stdout, flush=True))


def cmd_data(args: argparse.Namespace) -> int:
    if args.action == "fetch":
        try:
            root = args.data_dir or str(data.data_dir())
        except data.DataError:
            print("r3bench data fetch: give --data-dir (or set R3BENCH_DATA_DIR)", file=sys.stderr)
            return 2
        try:
            fetch.fetch(root, data.fetch_sources(), mirror=args.mirror, timeout_s=args.timeout,
                        log=lambda m: print(m, file=sys.stderr))
        except fetch.FetchError as e:
            print(f"r3bench data fetch: {e}", file=sys.stderr)
            return 1
        print(f"all {len(data.fetch_sources())} files present and verified in {root}")
        return 0

    table, errors = summary_table(args.data_dir)
    if table is not None:
        print(table)
    for e in errors:
        print(f"r3bench data: {e}", file=sys.stderr)
    return 1 if errors else 0


def cmd_doctor(args: argparse.Namespace) -> int:
    rows = doctor.needs(args.data_dir)
    d = doctor.report(refresh=True)
    if args.json:
        print(json.dumps({"needs": rows, "sandbox": d}, indent=2))
    else:
        print(doctor.format_needs(rows))
        print()
        print(doctor.format_report(d))
    return 1 if any(r["status"] == "missing" for r in rows) else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="r3bench", description="\n\n".join(__doc__.split("\n\n")[:2]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
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
    d.add_argument("--limit", type=int, default=2, help="problems per benchmark task in the eval stage (default 2)")
    d.add_argument("--max-gen-toks", type=int, default=160, help="generation length in the eval stage")
    d.add_argument("--no-eval", action="store_true", help="skip the lm-eval and training stages (checker only)")
    d.add_argument("--no-train", action="store_true", help="skip the training stage (short SFT + stepfix)")
    d.set_defaults(func=cmd_demo)
    lb = sub.add_parser("leaderboard", help="accuracy tables from lm-eval result files and trainer runs")
    lb.add_argument("paths", nargs="+", help="result files or folders (searched recursively)")
    lb.add_argument("--out", default="results", help="folder for leaderboard.md and leaderboard.csv (default results)")
    lb.add_argument("--reference", default=str(Path("results") / "paper_reference.csv"),
                    help="the paper's table (CSV: task,model,method,acc,n,source) shown beside the cells; none = off")
    lb.add_argument("--data-dir", default=None,
                    help="benchmark data, for the guessing baselines beside the multiple-choice tasks "
                         "(default $R3BENCH_DATA_DIR)")
    lb.set_defaults(func=cmd_leaderboard)
    rc = sub.add_parser("record", help="write a run record beside every lm-eval results file / trainer run lacking one")
    rc.add_argument("paths", nargs="+", help="results_*.json files or folders (searched recursively)")
    rc.add_argument("--data-dir", default=None, help="benchmark data directory, to hash the files the tasks read "
                                                     "(default: the task metadata, then $R3BENCH_DATA_DIR)")
    rc.add_argument("--force", action="store_true", help="rewrite existing records")
    rc.add_argument("--copy-to", default=None, metavar="DIR",
                    help="then copy the records (only) to DIR, same relative paths: what to commit under results/")
    rc.set_defaults(func=cmd_record)
    er = sub.add_parser("errors", help="first-error classes (MC/CM/CE) of logged structured samples: md/csv + PNG")
    er.add_argument("samples", nargs="+", help="lm-eval samples_*.jsonl files or folders (searched recursively)")
    er.add_argument("--out", required=True, help="folder for errors.md, .csv, .jsonl and errors.png")
    add_verifier_flags(er, "step verifier backend")
    er.set_defaults(func=cmd_errors)
    rp = sub.add_parser("reproduce", help="train + evaluate a models x methods x tasks grid, then the leaderboard")
    rp.add_argument("plan", help="a plan YAML file, or a shipped plan name: paper, cpu")
    rp.add_argument("--out", default=None, help="output folder (default: the plan's out)")
    rp.add_argument("--dry-run", action="store_true",
                    help="list every cell with its estimated GPU-hours, judge calls and tokens, and the commands; "
                         "run nothing")
    rp.add_argument("--methods", default=None,
                    help="run only these methods of the plan (comma-separated; with what they start from)")
    rp.set_defaults(func=cmd_reproduce)
    dl = sub.add_parser("data", help="benchmark data: `r3bench data list` loads and counts each benchmark")
    dl.add_argument("action", choices=("list", "fetch"))
    dl.add_argument("--data-dir", default=None, help="benchmark data directory (default $R3BENCH_DATA_DIR)")
    dl.add_argument("--mirror", default="https://raw.githubusercontent.com", help="fetch: base URL of the sources")
    dl.add_argument("--timeout", type=float, default=10.0, help="fetch: seconds per file")
    dl.set_defaults(func=cmd_data)

    tp = sub.add_parser("tasks-path", help="print the lm-eval task folder (for --include_path)")
    tp.set_defaults(func=lambda a: print(_tasks_dir()) or 0)
    m = sub.add_parser("model", help="models without a hub")
    m.add_argument("action", choices=("path", "tiny"))
    m.add_argument("name", help="path: a short name (r3bench/smollm2-135m-instruct); tiny: output folder")
    m.add_argument("--verify", action="store_true", help="path: re-hash the cached weights")
    m.set_defaults(func=cmd_model)
    pg = sub.add_parser("procgen", help="procedural physics problems with exact step labels -> four exports")
    pg.add_argument("--n", type=int, default=2494, help="number of problems (default 2494, the paper's SFT size)")
    pg.add_argument("--seed", type=int, default=0)
    pg.add_argument("--out", required=True, help="output folder")
    pg.add_argument("--tier", type=int, choices=(1, 2, 3), default=None,
                    help="curriculum tier: 1 one formula, integer givens and answer; 2 decimals and unit prefixes; "
                         "3 the full bank; template-level held-out split (default: the full bank, instance split)")
    pg.set_defaults(func=cmd_procgen)
    vf = sub.add_parser("verify", help="step verification: the first wrong step and its error class")
    add_verifier_flags(vf, "step verifier backend")
    vf.add_argument("--jsonl", required=True, metavar="FILE", help='lines {"question","solution","reference"}; "-" = stdin')
    vf.set_defaults(func=cmd_verify)
    vr = sub.add_parser("verifier-report", help="score a step verifier on the procedural verifier benchmark")
    add_verifier_flags(vr, "step verifier backend")
    vr.add_argument("--jsonl", default=None, help="a verifier.jsonl export (default: generate --n/--seed in memory)")
    vr.add_argument("--n", type=int, default=2494)
    vr.add_argument("--seed", type=int, default=0)
    vr.set_defaults(func=cmd_verifier_report)
    sv = sub.add_parser("stepverify-board", help="the verifier leaderboard on r3_stepverify: run a step verifier or "
                                                 "read lm-eval samples into a row, then render the table")
    add_verifier_flags(sv, "with --run: the step verifier backend")
    sv.add_argument("--out", default="results/stepverify", help="the folder of records/ and leaderboard.md / .csv")
    sv.add_argument("--run", metavar="ROW", default=None, help="run --backend over the test items into records/ROW.jsonl")
    sv.add_argument("--reference", default="solution", choices=stepverify_board.REFERENCE_MODES,
                    help="with --run: what the verifier is shown of the reference (default the seven-tag solution)")
    sv.add_argument("--limit", type=int, default=None, help="with --run: the first N test items (their fixed order)")
    sv.add_argument("--samples", metavar="FILE", default=None, help="an lm-eval samples file of r3_stepverify "
                                                                   "into records/ROW.jsonl (ROW: --name)")
    sv.add_argument("--name", default=None, help="the row's name for --samples")
    sv.add_argument("--about", default="", help="the row's description in the table's notes")
    sv.set_defaults(func=cmd_stepverify_board)
    vw = sub.add_parser("view", help="one self-contained HTML page of scored solutions: steps, first wrong step, "
                                     "answer vs gold, filters")
    vw.add_argument("paths", nargs="+", help="lm-eval output folders, samples files, or a run's samples file")
    vw.add_argument("--out", required=True, help="the HTML file to write")
    vw.add_argument("--no-verify", action="store_true", help="do not run the symbolic step verifier on responses "
                                                            "that carry no verdict")
    vw.add_argument("--compare", action="store_true", help="two runs (A B) side by side, problem by problem: "
                                                           "gained / lost and McNemar's exact test")
    vw.set_defaults(func=cmd_view)
    dr = sub.add_parser("doctor", help="what a run needs here (torch, model, data, lm-eval tasks, sandbox, disk, "
                                       "memory) in one table, then the sandbox in detail")
    dr.add_argument("--json", action="store_true", help="the full report as JSON")
    dr.add_argument("--data-dir", default=None, help="benchmark data directory (default: as r3bench demo finds it)")
    dr.set_defaults(func=cmd_doctor)
    sub.add_parser("eval", help="lm_eval with r3bench's tasks (all lm_eval flags pass through)", add_help=False)
    for q in (p, *sub.choices.values()):  # no abbreviations: `--data-d` or `--max_step` is an error, not a guess
        q.allow_abbrev = False
    return p


def cmd_verify(args: argparse.Namespace) -> int:
    cfg = verifier_config(args, "verify")
    if cfg is None:
        return 2
    return _jsonl_command("verify", args.jsonl, lambda fh: verify_lines(fh, args.backend, cfg))


def verify_lines(lines, backend: str, config=None):
    """Verify each JSONL line `{"question", "solution", "reference"}`; malformed lines yield an error object."""
    for i, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict) or "solution" not in obj:
                raise ValueError("need an object with at least \"solution\"")
        except ValueError as e:
            yield {"line": i, "error": str(e)[:200]}
            continue
        v = verify(str(obj.get("question") or ""), str(obj.get("solution") or ""),
                   str(obj.get("reference") or ""), backend, config)
        yield {"line": i, **v.to_dict()}


def cmd_verifier_report(args: argparse.Namespace) -> int:
    cfg = verifier_config(args, "verifier-report")
    if cfg is None:
        return 2
    if args.jsonl:
        rows = [json.loads(x) for x in _open(args.jsonl) if x.strip()]
    else:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            export(d, n=args.n, seed=args.seed, log=lambda s: None)
            rows = [json.loads(x) for x in open(f"{d}/verifier.jsonl", encoding="utf-8")]
    r = report(rows, args.backend, cfg)
    print(f"backend {r['backend']} on {r['n']} solutions of the procedural verifier benchmark")
    print("| first-error accuracy | class accuracy | acc. erroneous | acc. correct | ProcessBench F1 |")
    print("|---|---|---|---|---|")
    print(f"| {r['first_error_accuracy']:.3f} | {r['class_accuracy']:.3f} | {r['accuracy_erroneous']:.3f} | "
          f"{r['accuracy_correct']:.3f} | {r['processbench_f1']:.3f} |")
    labels = ["none", "MC", "CM", "CE"]
    print("\nconfusion (rows gold, columns predicted):\n| gold | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for g in labels:
        print(f"| {g} | " + " | ".join(str(r["confusion"].get(g, {}).get(p, 0)) for p in labels) + " |")
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"r3bench view: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.compare and len(args.paths) != 2:
        print(f"r3bench view: --compare takes two runs (A B), got {len(args.paths)}", file=sys.stderr)
        return 2
    try:
        out = view.write(args.paths, Path(args.out), check_steps=not args.no_verify, compare_runs=args.compare)
    except view.ViewError as e:
        print(f"r3bench view: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return 0


def cmd_stepverify_board(args: argparse.Namespace) -> int:
    if args.run:
        cfg = verifier_config(args, "stepverify-board")
        if cfg is None:
            return 2
        from tqdm import tqdm

        path = stepverify_board.run_row(Path(args.out), args.run, args.backend, args.reference, cfg,
                                        args.limit, args.about, progress=lambda xs: tqdm(xs, desc=args.run))
        print(f"wrote {path}")
    if args.samples:
        if not args.name:
            print("r3bench stepverify-board: --samples needs --name (the row's name)", file=sys.stderr)
            return 2
        try:
            print(f"wrote {stepverify_board.samples_row(Path(args.out), args.name, Path(args.samples), args.about)}")
        except stepverify_board.SamplesError as e:
            print(f"r3bench stepverify-board: {e}", file=sys.stderr)
            return 2
    md, _ = stepverify_board.write(Path(args.out))
    print(md.read_text(encoding="utf-8"))
    return 0


def cmd_procgen(args: argparse.Namespace) -> int:
    if args.n < 10:
        print("r3bench procgen: --n must be at least 10 (three splits and a balanced verifier set)", file=sys.stderr)
        return 2
    m = export(args.out, n=args.n, seed=args.seed, tier=args.tier, log=lambda s: print(s, file=sys.stderr))
    print(json.dumps(m, indent=1))
    return 0


def _tasks_dir():
    return tasks_dir()


def cmd_model(args: argparse.Namespace) -> int:
    try:
        if args.action == "tiny":
            print(models.build_tiny(args.name))
        else:
            print(models.resolve(args.name, verify=args.verify))
    except models.ModelError as e:
        print(f"r3bench model: {e}", file=sys.stderr)
        return 1
    return 0


def eval_argv(argv: list[str]) -> tuple[list[str], str | None]:
    """lm_eval's argv for `r3bench eval ARGS`: --include_path added, short model names resolved,
    --device cpu when no GPU is there and none was asked for. Returns (argv, data_dir)."""
    argv, data_dir, out = list(argv), None, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--data-dir" and i + 1 < len(argv):
            data_dir = argv[i + 1]
            i += 2
            continue
        if a.startswith("--data-dir="):
            data_dir = a.split("=", 1)[1]
            i += 1
            continue
        out.append(a)
        i += 1
    if "--include_path" not in out and not any(x.startswith("--include_path=") for x in out):
        out += ["--include_path", str(_tasks_dir())]
    for j, a in enumerate(out):
        if j > 0 and out[j - 1] == "--model_args":
            out[j] = _resolve_model_args(a)
    if "--device" not in out and not any(x.startswith("--device=") for x in out):
        try:
            import torch
            gpu = torch.cuda.is_available()
        except ImportError:
            gpu = False
        if not gpu:
            out += ["--device", "cpu"]
    return out, data_dir


def _resolve_model_args(s: str) -> str:
    parts = []
    for kv in s.split(","):
        k, _, v = kv.partition("=")
        if k.strip() in ("pretrained", "tokenizer") and models.claims(v):
            v = str(models.resolve(v))
        parts.append(f"{k}={v}" if _ else kv)
    return ",".join(parts)


def cmd_eval(argv: list[str]) -> int:
    if argv in (["-h"], ["--help"]):
        print("usage: r3bench eval [--data-dir D] LM_EVAL_ARGS...\n\n"
              "Runs lm_eval with r3bench's task folder included, short model names resolved\n"
              "(pretrained=r3bench/smollm2-135m-instruct) and --device cpu without a GPU.\n"
              "Example: r3bench eval --data-dir ../shared/data --tasks r3_physics --model hf \\\n"
              "  --model_args pretrained=r3bench/smollm2-135m-instruct --limit 5 --output_path results/lm_eval --log_samples\n"
              "(--limit 5: 25 problems, each up to 512 generated tokens; generation is what costs: keep --limit\n"
              "small on a CPU, use a GPU (--model vllm) for whole benchmarks)")
        return 0

    try:
        args, data_dir = eval_argv(argv)
    except models.ModelError as e:
        print(f"r3bench eval: {e}", file=sys.stderr)
        return 1
    # before any model loads: r3bench task names and the data directory they read (one line each)
    names = _task_names(args)
    problem = lmeval.unknown_tasks_message(names)
    if problem is None and any(lmeval.needs_data(t) for t in names):
        found, how = demo.find_data_dir(data_dir)
        if found is None or not Path(found).is_dir():
            problem = (f"data directory {found} does not exist" if found else
                       f"{', '.join(t for t in names if lmeval.needs_data(t))} read(s) the benchmark data: "
                       f"pass --data-dir DIR or set R3BENCH_DATA_DIR ({how})")
        elif data_dir is None and not os.environ.get("R3BENCH_DATA_DIR"):
            data_dir = found
            print(f"r3bench eval: data directory {how}", file=sys.stderr)
    if problem:
        print(f"r3bench eval: {problem}", file=sys.stderr)
        return 2
    if data_dir:  # handed to the tasks' dataset functions as lm-eval task metadata (merged with the user's)
        args += ["--metadata", json.dumps({"data_dir": str(data_dir)})]
    return _run_lm_eval(args)


def _task_names(args: list[str]) -> list[str]:
    """The names given to --tasks (comma-separated; either `--tasks X` or `--tasks=X`)."""
    out = []
    for i, a in enumerate(args):
        v = args[i + 1] if a == "--tasks" and i + 1 < len(args) else a[len("--tasks="):] if a.startswith("--tasks=") \
            else None
        if v:
            out += [t.strip() for t in v.split(",") if t.strip()]
    return out


def _run_lm_eval(args: list[str]) -> int:
    try:
        from lm_eval.__main__ import cli_evaluate
    except ImportError:
        print("r3bench eval: lm-eval is not installed: pip install 'r3bench[eval]'", file=sys.stderr)
        return 1
    sys.argv = ["r3bench eval"] + args  # argv[0] tells r3bench's messages where the user is (--data-dir works)
    rc = cli_evaluate()
    return rc if isinstance(rc, int) else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["eval"]:
        return cmd_eval(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `r3bench check ... | head`: the reader left, not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
