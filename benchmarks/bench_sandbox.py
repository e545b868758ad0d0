"""Per-run cost of the kernel-isolated sandbox against the in-process one it replaced, in the same run.

    python benchmarks/bench_sandbox.py [--n 30] [--n-pde 15] [--throughput 24] [--out benchmarks/results/sandbox]

Baseline: benchmarks/_sandbox_legacy.py, the verifiers/sandbox.py of the commit before the kernel
isolation (audit hook + rlimits in one child interpreter), kept unchanged for this comparison.
New: verifiers.sandbox at the level this machine gives (namespaces+seccomp here; the level is
written into the summary) and, for reference, the same module forced to its fallback level.

Programs: "trivial" (`result = 1`) and "pde" (what the PDE verifier runs per program: a bank solver
for the heat family + the verifier's driver on 3 hidden instances, with the verifier's limits and
inputs; NumPy imported in the sandbox). Runs of the compared sandboxes are interleaved (A, B, A, B
...) so that load from other processes on the machine hits both alike. Throughput: `--throughput`
runs of the trivial program through a 2-thread pool (two runs in flight at a time), runs/second.
Figures: median and mean wall ms per run; the ratio new / legacy of the medians.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import _sandbox_legacy as legacy  # noqa: E402
from r3bench.pde import bank, families  # noqa: E402
from r3bench.pde import verify as pv  # noqa: E402
from verifiers import sandbox  # noqa: E402


def _programs():
    insts = families.instances("heat", 0, 3)
    out_bytes = sum(8 * int(__import__("numpy").prod(i["shape"])) for i in insts)
    cfg = pv.VerifyConfig()
    pde = (bank.HELD_OUT_BANK["heat"]["spectral"] + "\n" + pv._DRIVER,
           {"_r3_insts": [{"args": i["args"], "shape": i["shape"]} for i in insts], "_r3_limit": cfg.instance_s},
           pv._sandbox_limits(cfg, len(insts), out_bytes))
    return {"trivial": ("result = 1", None, None), "pde": pde}


def _runner(name):
    if name == "legacy":
        return lambda code, lim, inputs: legacy.run_python(code, lim or legacy.SandboxLimits(), inputs)

    def run(code, lim, inputs):
        os.environ[sandbox.ENV_VAR] = "fallback" if name == "new-fallback" else "auto"
        return sandbox.run_python(code, lim or sandbox.SandboxLimits(), inputs)
    return run


def _limits_for(name, lim):
    if lim is None:
        return None
    cls = legacy.SandboxLimits if name == "legacy" else sandbox.SandboxLimits
    return cls(**{k: getattr(lim, k) for k in lim.__dataclass_fields__})


def _time_one(name, code, lim, inputs):
    t0 = time.perf_counter()
    r = _runner(name)(code, _limits_for(name, lim), inputs)
    dt = time.perf_counter() - t0
    if not r.ok:
        raise RuntimeError(f"{name}: {r.status}: {r.reason}")
    return dt


def interleaved(names, prog, n):
    code, inputs, lim = prog
    times = {k: [] for k in names}
    for name in names:  # one warm-up each (page cache, the probe)
        _time_one(name, code, lim, inputs)
    for _ in range(n):
        for name in names:
            times[name].append(_time_one(name, code, lim, inputs))
    return times


def throughput(name, n, workers=2):
    code = "result = 1"
    os.environ[sandbox.ENV_VAR] = "fallback" if name == "new-fallback" else "auto"
    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as ex:
        res = list(ex.map(lambda _: _runner(name)(code, None, None), range(n)))
    dt = time.perf_counter() - t0
    bad = [r for r in res if not r.ok]
    if bad:
        raise RuntimeError(f"{name}: {bad[0].status}: {bad[0].reason}")
    return n / dt


def _stats(xs):
    return {"n": len(xs), "median_ms": round(1000 * statistics.median(xs), 1), "mean_ms": round(1000 * statistics.mean(xs), 1),
            "min_ms": round(1000 * min(xs), 1), "max_ms": round(1000 * max(xs), 1)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="runs per sandbox, trivial program")
    ap.add_argument("--n-pde", type=int, default=15, help="runs per sandbox, PDE-verifier program")
    ap.add_argument("--throughput", type=int, default=24, help="runs per sandbox through 2 workers")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "sandbox"))
    args = ap.parse_args(argv)
    level = sandbox.isolation_level()
    names = ["legacy", "new", "new-fallback"]
    progs = _programs()
    out = {"level": level, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load avg {os.getloadavg()[0]:.2f} "
           f"at start, Python {platform.python_version()}", "programs": {}, "throughput_runs_per_s": {}}
    for pname, n in (("trivial", args.n), ("pde", args.n_pde)):
        times = interleaved(names, progs[pname], n)
        st = {k: _stats(v) for k, v in times.items()}
        st["ratio_new_over_legacy"] = round(st["new"]["median_ms"] / st["legacy"]["median_ms"], 2)
        out["programs"][pname] = st
        print(pname, json.dumps(st), file=sys.stderr)
    for name in names:
        out["throughput_runs_per_s"][name] = round(throughput(name, args.throughput), 2)
    out["throughput_n"] = args.throughput
    os.environ.pop(sandbox.ENV_VAR, None)
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "summary.json").write_text(json.dumps(out, indent=2) + "\n")
    (outdir / "summary.md").write_text(_markdown(out))
    print(_markdown(out))
    return 0


def _markdown(o):
    rows = ["| program | sandbox | n | median ms | mean ms | min-max ms |", "|---|---|---|---|---|---|"]
    for pname, st in o["programs"].items():
        for name in ("legacy", "new", "new-fallback"):
            s = st[name]
            label = {"legacy": "legacy (in-process guards)", "new": f"new ({o['level']})",
                     "new-fallback": "new, forced fallback (rlimits+audit-hook)"}[name]
            rows.append(f"| {pname} | {label} | {s['n']} | {s['median_ms']} | {s['mean_ms']} | {s['min_ms']}-{s['max_ms']} |")
    ratios = ", ".join(f"{p}: {st['ratio_new_over_legacy']}x" for p, st in o["programs"].items())
    tp = o["throughput_runs_per_s"]
    return "\n".join([
        "# Sandbox overhead: kernel isolation vs the in-process sandbox (benchmarks/bench_sandbox.py)", "",
        f"Machine: {o['machine']}. Level of the new sandbox here: {o['level']}.", "",
        *rows, "",
        f"Ratio of medians, new / legacy: {ratios} (goal: under 2x).", "",
        f"Throughput, trivial program, 2 workers (threads), {o['throughput_n']} runs each: legacy {tp['legacy']} runs/s, "
        f"new {tp['new']} runs/s, new forced fallback {tp['new-fallback']} runs/s.", ""])


if __name__ == "__main__":
    raise SystemExit(main())
