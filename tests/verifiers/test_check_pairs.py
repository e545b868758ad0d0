"""The labelled physics answer pairs of benchmarks/check_pairs.jsonl, one test per row.

The labels are human judgements (see benchmarks/make_pairs.py); the benchmark reports agreement
as a rate, this test holds the checker to every single row.
"""
import json
import pathlib

import pytest

from verifiers import check

PAIRS = [json.loads(line) for line in
         (pathlib.Path(__file__).parents[2] / "benchmarks" / "check_pairs.jsonl").read_text().splitlines()]


def test_table_is_large_and_mixed():
    assert len(PAIRS) >= 100
    assert {p["kind"] for p in PAIRS} >= {None, "integer", "symbolic", "mcq", "mcq_multi"}
    assert 0.3 < sum(p["label"] for p in PAIRS) / len(PAIRS) < 0.8


@pytest.mark.parametrize("p", PAIRS, ids=[p["note"] for p in PAIRS])
def test_labelled_pair(p):
    v = check(p["pred"], p["ref"], kind=p["kind"])
    assert v.equivalent is p["label"], v
