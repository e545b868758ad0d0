"""Cost of the hybrid PDE verifier: per program (one sandbox run over a prompt's 3 hidden instances)
and per instance (one sandbox run, one instance), for one bank solver per family; and the reference
solutions (computed once per instance and cached in-process).

    OMP_NUM_THREADS=1 python -m pytest benchmarks/test_bench_pde.py -q

Writes benchmarks/results/pde/verifier_cost.md (mean seconds per family) beside pytest-benchmark's table.
"""
import pathlib

import pytest

pytest.importorskip("scipy")

from r3bench.pde import bank, families as F  # noqa: E402
from r3bench.pde.verify import verify  # noqa: E402

OUT = pathlib.Path(__file__).parent / "results" / "pde" / "verifier_cost.md"
PROGRAMS = {**{f: next(iter(s.items())) for f, s in bank.BANK.items()},
            **{f: next(iter(s.items())) for f, s in bank.HELD_OUT_BANK.items()}}
ROWS = {}


def _insts(fam, n):
    insts = F.instances(fam, 1000, n)
    for i in insts:
        F.reference(fam, i)  # warm the cache: the verifier's steady state
    return insts


@pytest.mark.parametrize("family", list(PROGRAMS))
@pytest.mark.parametrize("n", [1, 3], ids=["per_instance", "per_program"])
def test_verifier_cost(benchmark, family, n):
    scheme, code = PROGRAMS[family]
    insts = _insts(family, n)
    v = benchmark.pedantic(verify, args=(code, family, insts), rounds=3, iterations=1)
    assert v.success, v.reason
    solve_s = sum(i.seconds or 0 for i in v.instances)
    ROWS[(family, n)] = (scheme, benchmark.stats.stats.mean, solve_s)


@pytest.mark.parametrize("family", list(PROGRAMS))
def test_reference_cost(benchmark, family):
    inst = F.instances(family, 1000, 1)[0]
    benchmark.pedantic(F.FAMILIES[family].reference, args=(inst,), rounds=3, iterations=1)
    ROWS[(family, "ref")] = benchmark.stats.stats.mean


def teardown_module():
    if not ROWS:
        return
    lines = ["# r3_pde verifier cost (seconds, mean of 3 rounds; OMP_NUM_THREADS=1, a shared 2-core CPU box)", "",
             "| family | bank solver | verify 1 instance | verify 3 instances (one program) | solver time in the 3 "
             "| reference, 1 instance (uncached) |",
             "|---|---|--:|--:|--:|--:|"]
    for fam in PROGRAMS:
        one, three, ref = ROWS.get((fam, 1)), ROWS.get((fam, 3)), ROWS.get((fam, "ref"))
        if not (one and three):
            continue
        lines.append(f"| {fam} | {one[0]} | {one[1]:.3f} | {three[1]:.3f} | {three[2]:.3f} | "
                     + (f"{ref:.3f} |" if ref is not None else "- |"))
    lines += ["", "The fixed cost is the sandboxed interpreter start plus the numpy (and, where imported, scipy) "
              "import; per-instance time is the solver itself. References are cached by instance content."]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
