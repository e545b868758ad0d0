"""Cost of the hybrid PDE verifier: per program (one sandbox run, a fork per instance, over a prompt's 3
hidden instances) and for one instance, for one bank solver per family; the same program through the
verifier before the fork server ("before": r3bench/pde/verify.py as of BEFORE_REV, one sandbox run per
instance, taken from git; skipped without git), in the same run; and the reference solutions (computed once
per instance and cached in-process).

    OMP_NUM_THREADS=1 python -m pytest benchmarks/test_bench_pde.py -q

Writes benchmarks/results/pde/verifier_cost.md (mean seconds per family) beside pytest-benchmark's table.
"""
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

import pytest

pytest.importorskip("scipy")

from r3bench.pde import bank, families as F  # noqa: E402
from r3bench.pde.verify import verify  # noqa: E402

OUT = pathlib.Path(__file__).parent / "results" / "pde" / "verifier_cost.md"
PROGRAMS = {**{f: next(iter(s.items())) for f, s in bank.BANK.items()},
            **{f: next(iter(s.items())) for f, s in bank.HELD_OUT_BANK.items()}}
ROWS = {}
BEFORE_REV = "73b0c11"  # the commit before the fork server in the PDE verifier (one sandbox run per instance)
_BEFORE = []


def _verify_before():
    """verify() as of BEFORE_REV (on today's sandbox, which it calls without `calls`), or None without git."""
    if not _BEFORE:
        repo = pathlib.Path(__file__).resolve().parent.parent
        try:
            text = subprocess.run(["git", "-C", str(repo), "show", f"{BEFORE_REV}:r3bench/pde/verify.py"],
                                  capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            _BEFORE.append(None)
            return None
        fd, path = tempfile.mkstemp(suffix=".py", prefix="r3bench_pde_verify_before_")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        spec = importlib.util.spec_from_file_location("r3bench_pde_verify_before", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # its dataclasses look their module up there
        spec.loader.exec_module(mod)
        os.unlink(path)
        _BEFORE.append(mod.verify)
    return _BEFORE[0]


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
def test_verifier_cost_before(benchmark, family):
    """The same program, 3 instances, through the verifier before the fork server (same run, same machine)."""
    before = _verify_before()
    if before is None:
        pytest.skip(f"no git checkout with {BEFORE_REV}")
    scheme, code = PROGRAMS[family]
    insts = _insts(family, 3)
    v = benchmark.pedantic(before, args=(code, family, insts), rounds=3, iterations=1)
    assert v.success, v.reason
    ROWS[(family, "before")] = benchmark.stats.stats.mean


@pytest.mark.parametrize("family", list(PROGRAMS))
def test_reference_cost(benchmark, family):
    inst = F.instances(family, 1000, 1)[0]
    benchmark.pedantic(F.FAMILIES[family].reference, args=(inst,), rounds=3, iterations=1)
    ROWS[(family, "ref")] = benchmark.stats.stats.mean


def teardown_module():
    if not ROWS:
        return
    load = os.getloadavg()[0]
    lines = [f"# r3_pde verifier cost (seconds, mean of 3 rounds; OMP_NUM_THREADS=1, a shared 2-core CPU box, "
             f"load avg {load:.1f} at the end)", "",
             "| family | bank solver | verify 1 instance | verify 3 instances (one program) | before: 3 instances, "
             "one run each | before / now | time of the 3 instances (supervisor's clock) "
             "| reference, 1 instance (uncached) |",
             "|---|---|--:|--:|--:|--:|--:|--:|"]
    for fam in PROGRAMS:
        one, three, ref, bef = ROWS.get((fam, 1)), ROWS.get((fam, 3)), ROWS.get((fam, "ref")), ROWS.get((fam, "before"))
        if not (one and three):
            continue
        lines.append(f"| {fam} | {one[0]} | {one[1]:.3f} | {three[1]:.3f} | "
                     + (f"{bef:.3f} | {bef / three[1]:.2f}x | " if bef else "- | - | ") + f"{three[2]:.3f} | "
                     + (f"{ref:.3f} |" if ref is not None else "- |"))
    lines += ["", "Now: one sandbox run per program (interpreter start, numpy/scipy import, the program's top level "
              "once), a fresh fork per instance, timed by the sandbox supervisor. Before "
              f"({BEFORE_REV}'s r3bench/pde/verify.py, on the same sandbox): one sandbox run per instance, the first "
              "alone, the others half the CPUs at a time. References are cached by instance content."]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
