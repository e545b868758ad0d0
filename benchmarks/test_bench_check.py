"""Checker throughput and agreement with human labels: r3bench vs math-verify, same pairs, same run.

    python -m pytest benchmarks/test_bench_check.py -q

Prints pytest-benchmark's timing table (one row per checker) and a table of checks per second
and agreement. Both checkers get each reference parsed once, outside the timed loop (math-verify:
`parse(gold)` is hoisted; r3bench: the caches are cleared before every round and then warmed with
the references only), so every round times cold predictions against warm references - the hot
path of an RL reward, which meets each reference many times and each completion once.
"""
import json
import pathlib

import pytest

from verifiers import check, worker
from verifiers.answer import _parse_num

PAIRS = [json.loads(line) for line in pathlib.Path(__file__).with_name("check_pairs.jsonl").read_text().splitlines()]
AGREEMENT = {}
THROUGHPUT = {}  # mean seconds per pass over the table


def _r3bench(pairs):
    return [check(p["pred"], p["ref"], kind=p["kind"]).equivalent for p in pairs]


def _r3bench_setup():
    _parse_num.cache_clear()
    worker.clear_caches()
    for p in PAIRS:  # warm the references only
        check(p["ref"], p["ref"], kind=p["kind"])
    _parse_num.cache_clear()
    for p in PAIRS:
        try:
            _parse_num(p["ref"])
        except ValueError:
            pass
    return (PAIRS,), {}


def _math_verify_factory():
    math_verify = pytest.importorskip("math_verify")
    golds = [math_verify.parse(p["ref"]) for p in PAIRS]

    def run(pairs):
        out = []
        for p, g in zip(pairs, golds):
            try:  # gold first: verify(gold, pred) is asymmetric
                out.append(bool(math_verify.verify(g, math_verify.parse(p["pred"]))))
            except Exception:  # noqa: BLE001 - count a crash as "not equivalent", as a reward would
                out.append(False)
        return out
    return run


def _record(name, got, benchmark):
    agree = sum(g == p["label"] for g, p in zip(got, PAIRS))
    AGREEMENT[name] = (agree, len(PAIRS), [p["note"] for g, p in zip(got, PAIRS) if g != p["label"]])
    benchmark.extra_info.update(agreement=agree / len(PAIRS), pairs=len(PAIRS))
    THROUGHPUT[name] = benchmark.stats.stats.mean


def test_r3bench_check(benchmark):
    _r3bench(PAIRS)  # warm: registry, worker subprocess, imports
    got = benchmark.pedantic(_r3bench, setup=_r3bench_setup, rounds=10, iterations=1)
    _record("r3bench", got, benchmark)


def test_math_verify(benchmark):
    run = _math_verify_factory()
    run(PAIRS)
    got = benchmark.pedantic(run, args=(PAIRS,), rounds=3, iterations=1)
    _record("math-verify", got, benchmark)


def teardown_module(module):
    if not AGREEMENT:
        return
    lines = ["", f"{len(PAIRS)} labelled physics answer pairs:",
             f"{'checker':<14}{'checks/s':>10}{'agree':>10}{'rate':>8}  first disagreements"]
    for name, (agree, n, wrong) in AGREEMENT.items():
        cps = n / THROUGHPUT[name] if name in THROUGHPUT else float("nan")
        lines.append(f"{name:<14}{cps:>10.0f}{agree:>6}/{n:<3}{agree / n:>8.1%}  {', '.join(wrong[:6])}")
    if len(THROUGHPUT) == 2:
        lines.append(f"speed-up: {THROUGHPUT['math-verify'] / THROUGHPUT['r3bench']:.1f}x")
    print("\n".join(lines))
