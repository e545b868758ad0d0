"""Checker agreement and speed: r3bench vs math-verify, same inputs, same run.

    python -m pytest benchmarks/test_bench_check.py -q -s      (R3BENCH_DATA_DIR for JEEBench golds)

Measures (written to benchmarks/results/check/summary.md and printed):
1. agreement with the human labels of benchmarks/check_pairs.jsonl, and throughput against
   math-verify on those pairs: both checkers get each reference parsed once, outside the timed loop
   (math-verify: `parse(gold)` is hoisted; r3bench: caches cleared before every round, then warmed
   with the references only), so a round times cold predictions against warm references - the hot
   path of an RL reward;
2. agreement with Math-Verify's own test cases (tests/verifiers/data/math_verify_cases.jsonl; its labels);
3. agreement with JEEBench's official grader (compute_metrics.py compute_score, reimplemented in
   tests/verifiers/test_check_external.py) on answers written in sentences, over the golds of the physics
   questions in the data directory (all 107) or, without it, the test's 15 golds;
4. the longest single check when 8 threads check at once (waiting for a worker included), over all
   the inputs above plus pathological ones; and whether serial, threaded and process-pool runs
   give the same verdicts.
"""
import json
import os
import pathlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import pytest

from verifiers import CheckConfig, answer, check, worker

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "verifiers"))
import test_check_external as ext  # noqa: E402 - the JEEBench oracle and templates live with the test
from test_check_timeout import MIXED  # noqa: E402

PAIRS = [json.loads(line) for line in (HERE / "check_pairs.jsonl").read_text().splitlines()]
MV = ext.MV
RESULTS = {}
THROUGHPUT = {}  # mean seconds per pass over the pairs


def _jeebench_golds():
    d = os.environ.get("R3BENCH_DATA_DIR")
    f = pathlib.Path(d) / "jeebench" / "dataset_phy.json" if d else None
    if f and f.exists():
        recs = json.loads(f.read_text(encoding="utf-8"))
        return [(r["type"], r["gold"]) for r in recs], f"{len(recs)} JEEBench physics golds (data dir)"
    return ext.GOLDS, f"{len(ext.GOLDS)} golds of tests/verifiers/test_check_external.py (no data dir)"


def _jeebench_rows(golds):
    rows = []
    for qtype, gold in golds:
        for x in ext._extracts(qtype, gold):
            temps = ext.LETTER_TEMPLATES if qtype.startswith("MCQ") else ext.NUMBER_TEMPLATES
            rows += [(qtype, gold, x, t(list(x)) if qtype.startswith("MCQ") else t(x)) for t in temps]
    return rows


def _r3bench(pairs):
    return [check(p["pred"], p["ref"], kind=p["kind"]).equivalent for p in pairs]


def _r3bench_setup():
    answer.clear_caches()
    worker.clear_caches()
    for p in PAIRS:  # warm the references only
        check(p["ref"], p["ref"], kind=p["kind"])
    answer.clear_caches()
    for p in PAIRS:
        try:
            answer.parse_quantity(p["ref"])
        except ValueError:
            pass
    return (PAIRS,), {}


def _mv_verify(math_verify, gold_parsed, pred):
    try:  # gold first: verify(gold, pred) is asymmetric
        return bool(math_verify.verify(gold_parsed, math_verify.parse(pred)))
    except Exception:  # noqa: BLE001 - count a crash as "not equivalent", as a reward would
        return False


def _math_verify_factory():
    math_verify = pytest.importorskip("math_verify")
    golds = [math_verify.parse(p["ref"]) for p in PAIRS]

    def run(pairs):
        return [_mv_verify(math_verify, g, p["pred"]) for p, g in zip(pairs, golds)]
    return run


def _agreement(name, got, labels, notes):
    agree = sum(g == lab for g, lab in zip(got, labels))
    fp = sum(g and not lab for g, lab in zip(got, labels))
    RESULTS[name] = dict(agree=agree, n=len(labels), fp=fp,
                         wrong=[n for g, lab, n in zip(got, labels, notes) if g != lab])


def test_r3bench_check(benchmark):
    _r3bench(PAIRS)  # warm: registry, worker subprocesses, imports
    got = benchmark.pedantic(_r3bench, setup=_r3bench_setup, rounds=10, iterations=1)
    _agreement("pairs/r3bench", got, [p["label"] for p in PAIRS], [p["note"] for p in PAIRS])
    THROUGHPUT["r3bench"] = benchmark.stats.stats.mean


def test_math_verify(benchmark):
    run = _math_verify_factory()
    run(PAIRS)
    got = benchmark.pedantic(run, args=(PAIRS,), rounds=3, iterations=1)
    _agreement("pairs/math-verify", got, [p["label"] for p in PAIRS], [p["note"] for p in PAIRS])
    THROUGHPUT["math-verify"] = benchmark.stats.stats.mean


def test_math_verify_cases():
    got = [check(r["pred"], r["gold"]).equivalent for r in MV]
    _agreement("mv-cases/r3bench", got, [r["expected"] for r in MV], [r["source"].split("::")[1] for r in MV])
    math_verify = pytest.importorskip("math_verify")
    got = [_mv_verify(math_verify, math_verify.parse(r["gold"]), r["pred"]) for r in MV]
    _agreement("mv-cases/math-verify", got, [r["expected"] for r in MV], [r["source"].split("::")[1] for r in MV])


def test_jeebench_sentences():
    golds, where = _jeebench_golds()
    rows = _jeebench_rows(golds)
    cfg = CheckConfig(mode="jeebench")
    ours = [check(s, g, kind=ext.KIND[q], cfg=cfg).score for q, g, x, s in rows]
    official = [ext.official_compute_score(g, x, q) for q, g, x, s in rows]
    agree = sum(a == b for a, b in zip(ours, official))
    RESULTS["jeebench"] = dict(agree=agree, n=len(rows), where=where,
                               fp=sum(a > b for a, b in zip(ours, official)),
                               wrong=[s[:60] for (q, g, x, s), a, b in zip(rows, ours, official) if a != b])


def _verdict(args):
    v = check(args[0], args[1], kind=args[2])
    return v.equivalent, v.score, v.reason


def _timed(args):
    pred, ref, kind = args
    t0 = time.perf_counter()
    v = check(pred, ref, kind=kind)
    return time.perf_counter() - t0, v.reason


def test_check_time_under_8_threads():
    golds, _ = _jeebench_golds()
    inputs = [(p["pred"], p["ref"], p["kind"]) for p in PAIRS] + [(r["pred"], r["gold"], None) for r in MV] \
        + [(s, g, ext.KIND[q]) for q, g, x, s in _jeebench_rows(golds)[:400]] + list(MIXED) * 4
    worker.pool().warm(8)
    for args in inputs[:5] + list(MIXED):  # process start-up (imports, the unit registry) is not a check
        _timed(args)
    worker.clear_caches()  # cold caches for both passes: every input is parsed afresh
    answer.clear_caches()
    with ThreadPoolExecutor(max_workers=8) as ex:
        t0 = time.perf_counter()
        threaded = list(ex.map(_timed, inputs))
        wall = time.perf_counter() - t0
    worker.clear_caches()
    answer.clear_caches()
    serial = [_timed(a) for a in inputs]
    with ProcessPoolExecutor(max_workers=2) as ex:
        pooled = list(ex.map(_verdict, inputs, chunksize=16))
    ser = [_verdict(a) for a in inputs]
    thr = list(ThreadPoolExecutor(max_workers=8).map(_verdict, inputs))
    RESULTS["consistency"] = dict(n=len(inputs), threads=sum(a != b for a, b in zip(ser, thr)),
                                  processes=sum(a != b for a, b in zip(ser, pooled)))
    ts = sorted(t for t, _ in threaded)
    slow = sorted(zip(threaded, inputs), key=lambda z: -z[0][0])[:3]
    RESULTS["slowest"] = [f"{t:.2f} s {a[0][:40]!r} vs {a[1][:20]!r}" for (t, _), a in slow]
    RESULTS["threads"] = dict(n=len(inputs), max8=ts[-1], p99=ts[int(0.99 * (len(ts) - 1))], wall=wall,
                              serial_max=max(t for t, _ in serial), serial_total=sum(t for t, _ in serial),
                              timeouts=sum(r.startswith("timeout") for _, r in threaded),
                              workers=worker.pool().max_workers, cpus=os.cpu_count())


def _rate(r):
    return f"{r['agree']}/{r['n']} ({r['agree'] / r['n']:.1%}), false positives {r['fp']}"


def teardown_module(module):
    if not RESULTS:
        return
    lines = ["# Checker benchmark", "", f"`python -m pytest benchmarks/test_bench_check.py -q -s`; "
             f"{os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d', time.gmtime())}.", ""]
    for key, title in (("pairs/r3bench", "r3bench, labelled physics pairs (check_pairs.jsonl)"),
                       ("pairs/math-verify", "math-verify, same pairs"),
                       ("mv-cases/r3bench", "r3bench, Math-Verify's own test cases (goal >= 95%, 0 FP)"),
                       ("mv-cases/math-verify", "math-verify 0.9 on its own test cases (reference)"),
                       ("jeebench", "r3bench vs JEEBench's official grader, answers in sentences (goal >= 99%)")):
        if key in RESULTS:
            r = RESULTS[key]
            extra = f"; {r['where']}" if "where" in r else ""
            lines.append(f"- {title}: {_rate(r)}{extra}")
            if r["wrong"]:
                lines.append(f"  - disagreements: {', '.join(map(str, r['wrong'][:8]))}")
    if len(THROUGHPUT) == 2:
        n = len(PAIRS)
        lines.append(f"- throughput on the {n} pairs: r3bench {n / THROUGHPUT['r3bench']:.0f} checks/s, math-verify "
                     f"{n / THROUGHPUT['math-verify']:.0f} checks/s: {THROUGHPUT['math-verify'] / THROUGHPUT['r3bench']:.1f}x "
                     "(goal >= 10x)")
    if "threads" in RESULTS:
        t = RESULTS["threads"]
        lines.append(f"- {t['n']} checks in 8 threads ({t['workers']} workers max, {t['cpus']} CPUs): longest check "
                     f"{t['max8']:.2f} s, p99 {t['p99']:.3f} s, wall {t['wall']:.1f} s, timeouts {t['timeouts']} "
                     f"(goal < 2 s); serially: longest {t['serial_max']:.2f} s, total {t['serial_total']:.1f} s")
        lines.append(f"  - slowest in threads: {'; '.join(RESULTS.get('slowest', []))}")
    if "consistency" in RESULTS:
        c = RESULTS["consistency"]
        lines.append(f"- same verdicts (equivalent, score, reason) for the {c['n']} inputs serially, in 8 threads "
                     f"and in a 2-process pool: {c['threads']} differ in threads, {c['processes']} in processes")
    text = "\n".join(lines) + "\n"
    out = HERE / "results" / "check"
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(text)
    print("\n" + text)
