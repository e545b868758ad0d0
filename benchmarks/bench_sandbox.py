"""Per-run cost of the kernel-isolated sandbox against the sandboxes before it, in the same run, and the
memory the host loses to a run that attacks every memory class.

    python benchmarks/bench_sandbox.py [--n 30] [--n-pde 15] [--throughput 24] [--attack-runs 3]
                                       [--legacy-rev REV] [--before-rev REV] [--out benchmarks/results/sandbox]
    python benchmarks/bench_sandbox.py --ab REV_A REV_B [--n 30] [--n-pde 15] [--out ...]   (see ab())

Baselines, both taken from git into a temporary directory (the same way as --ab; each skipped without git):
"legacy" = verifiers/sandbox.py as of `--legacy-rev` (default LEGACY_REV, the last commit before the kernel
isolation: audit hook + rlimits in one child interpreter, a single module); "before" = verifiers/sandbox.py,
sandbox_runner.py and seccomp.py as of `--before-rev` (default: the commit before issue 36's sandbox
changes). New: verifiers.sandbox at the level this machine gives (namespaces+seccomp here; the level is
written into the summary) and, for reference, the same module forced to its fallback level.

Programs: "trivial" (`result = 1`) and "pde" (what the PDE verifier runs per instance: a bank solver
for the heat family + the verifier's driver on one hidden instance, with the verifier's limits and
inputs; NumPy imported in the sandbox). Runs of the compared sandboxes are interleaved, the order turning
each round (A B C, B C A, C A B ...), so that load from other processes on the machine hits all alike and
no sandbox always runs right after the same one. Throughput: `--throughput` runs of the trivial program
through a 2-thread pool (two runs in flight at a time), runs/second, in 4 blocks per sandbox, the order
turning each round.
Figures: median and mean wall ms per run; the ratios new / legacy and new / before of the medians.

Memory (`--attack-runs`): ATTACK (SysV shared memory and message queues, POSIX queues, memfd_create,
memfd_secret, socket buffers, pipe buffers, scratch files, the heap up to RLIMIT_AS; each as far as the
kernel lets it, then held) at memory_mb = 128, while this process polls MemAvailable (/proc/meminfo)
every 10 ms: the host's loss is the lowest MemAvailable during the run against the median of the 0.5 s
before it; "left" is MemAvailable 1 s after the run against that baseline. The same for a run that only
sleeps (what the interpreters themselves take), and for the "before" sandbox.
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

import importlib.util  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

from r3bench.pde import bank, families  # noqa: E402
from r3bench.pde import verify as pv  # noqa: E402
from verifiers import sandbox  # noqa: E402

# the attack programs are the attack tests' own (the audit hook switched off from inside: DISARM)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "verifiers"))
from _sandbox_programs import DISARM  # noqa: E402


REPO = Path(__file__).resolve().parent.parent
BEFORE_REV = "5f0abde"  # the commit before issue 36's sandbox changes
# the last commit before the kernel isolation: verifiers/sandbox.py was one module (audit hook + rlimits in
# one child interpreter); a copy of it was kept as benchmarks/_sandbox_legacy.py until it was read from git
LEGACY_REV = "fa7df94"
REVS = {"legacy": LEGACY_REV, "before": BEFORE_REV}  # the revision each baseline is taken at (main sets them)
_BEFORE = {}


def _before(rev):
    """verifiers.sandbox as of `rev` (with its runner and seccomp module beside it where `rev` has them), or
    None without git."""
    if rev in _BEFORE:
        return _BEFORE[rev]
    d = Path(tempfile.mkdtemp(prefix="r3bench-before-"))
    try:
        for name in ("sandbox.py", "sandbox_runner.py", "seccomp.py"):
            spec = f"{rev}:verifiers/{name}"
            if name != "sandbox.py" and subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", spec],
                                                       capture_output=True).returncode:
                continue  # LEGACY_REV's sandbox is one module: no runner, no seccomp module
            text = subprocess.run(["git", "-C", str(REPO), "show", spec], capture_output=True, text=True,
                                  check=True).stdout
            (d / name).write_text(text)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"no 'before' baseline ({rev}): {e}", file=sys.stderr)
        _BEFORE[rev] = None
        return None
    spec = importlib.util.spec_from_file_location("r3bench_sandbox_before_" + rev.replace("/", "_").replace("-", "_"),
                                                  d / "sandbox.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    mod.PROJECT_ROOT = REPO  # it masks the checkout it belongs to
    _BEFORE[rev] = mod
    return mod


def _programs():
    inst = families.instances("heat", 0, 1)[0]
    out_bytes = 8 * int(__import__("numpy").prod(inst["shape"]))
    cfg = pv.VerifyConfig()
    pde = (bank.HELD_OUT_BANK["heat"]["spectral"] + "\n" + pv.DRIVER + "\n" + pv.CALL,  # one instance, one plain run
           {"_r3_inst": {"args": inst["args"], "shape": inst["shape"]}}, pv.sandbox_limits(cfg, out_bytes, 1))
    return {"trivial": ("result = 1", None, None), "pde": pde}


def _runner(name):
    if name == "legacy":
        mod_l = _before(REVS["legacy"])
        return lambda code, lim, inputs: mod_l.run_python(code, lim or mod_l.SandboxLimits(), inputs)
    if name == "before":
        mod = _before(REVS["before"])

        def run_before(code, lim, inputs):
            os.environ[sandbox.ENV_VAR] = "auto"
            return mod.run_python(code, lim or mod.SandboxLimits(), inputs)
        return run_before

    def run(code, lim, inputs):
        os.environ[sandbox.ENV_VAR] = "fallback" if name == "new-fallback" else "auto"
        return sandbox.run_python(code, lim or sandbox.SandboxLimits(), inputs)
    return run


def _limits_for(name, lim):
    if lim is None:
        return None
    cls = _before(REVS[name]).SandboxLimits if name in REVS else sandbox.SandboxLimits
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
    for i in range(n):  # the order turns each round: a fixed order favoured some places (an A/A run of the
        for name in names[i % len(names):] + names[:i % len(names)]:  # same code in places 2 and 4: 1.08x)
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


def throughputs(names, n, rounds=4):
    """runs/s of each sandbox: `rounds` blocks of n / rounds runs each, the order of the sandboxes turning each
    round (one block each in a fixed order gave the same code 7.4 and 8.7 runs/s here, by its place)."""
    spent = {k: 0.0 for k in names}
    per = max(2, n // rounds)
    for i in range(rounds):
        for name in names[i % len(names):] + names[:i % len(names)]:
            spent[name] += per / throughput(name, per)
    return {k: round(rounds * per / v, 2) for k, v in spent.items()}


ATTACK = DISARM + r'''
import ctypes as _c, os, time
libc = _c.CDLL(None, use_errno=True)
libc.shmat.restype = _c.c_void_p
libc.mmap.restype = _c.c_void_p
libc.mmap.argtypes = [_c.c_void_p, _c.c_size_t, _c.c_int, _c.c_int, _c.c_int, _c.c_long]
MB = 1 << 20
got = {}
def step(name, fn):
    try:
        got[name] = fn()
    except BaseException as e:  # MemoryError, OSError: as far as it went
        got[name] = repr(e)[:40]
    print(name, got[name], flush=True)
def shm():
    n = 0
    for i in range(64):
        s = libc.shmget(0, 8 * MB, 0o1600)
        if s < 0: break
        a = libc.shmat(s, None, 0)
        if a in (None, 2 ** 64 - 1): break
        _c.memset(a, 1, 8 * MB); n += 8
    return n
def msg():
    buf = _c.create_string_buffer(8 + 8000); n = 0
    _c.memset(buf, 1, 8)  # mtype > 0
    for i in range(32000):
        q = libc.msgget(0, 0o1600)
        if q < 0: break
        for j in range(2):
            if libc.msgsnd(q, buf, 8000, 0o4000) != 0: break
            n += 8000
    return n // MB
def memfd(nr):
    n = 0
    for i in range(240):
        fd = libc.syscall(nr, b"x", 0) if nr == 319 else libc.syscall(nr, 0)
        if fd < 0: break
        if libc.ftruncate(fd, MB) != 0: break
        a = libc.mmap(None, MB, 3, 1, fd, 0)
        if a in (None, 2 ** 64 - 1): break
        _c.memset(a, 1, MB); n += 1
    return n
def sockets():
    chunk = _c.create_string_buffer(65536); n = 0
    for i in range(60):
        sv = (_c.c_int * 2)()
        if libc.socketpair(1, 1, 0, sv) != 0: break
        for fd in sv:
            size = _c.c_int(4 * MB); libc.setsockopt(fd, 1, 7, _c.byref(size), 4)
        for fd in sv:
            while True:
                k = libc.send(fd, chunk, 65536, 0x40)
                if k <= 0: break
                n += k
    return n // MB
def pipes():
    n = 0; chunk = b"x" * 65536
    for i in range(30):
        r, w = os.pipe(); os.set_blocking(w, False)
        try: libc.fcntl(w, 1031, MB)  # F_SETPIPE_SZ
        except Exception: pass
        try:
            while True: n += os.write(w, chunk)
        except OSError: pass
    return n // MB
def files():
    n = 0; chunk = b"x" * MB
    for i in range(4):
        with open("f%d" % i, "wb") as f:
            for j in range(64):
                f.write(chunk); n += 1
    return n
held = []
def heap():
    while True: held.append(bytearray(8 * MB))
step("shm_mb", shm); step("msg_mb", msg); step("memfd_mb", lambda: memfd(319)); step("memfd_secret_mb", lambda: memfd(447))
step("sockets_mb", sockets); step("pipes_mb", pipes); step("files_mb", files); step("heap", heap)
time.sleep(2)  # held while the kernel counts
'''
ATTACK_LIMITS = dict(wall_s=12, cpu_s=10, memory_mb=128, file_size_mb=64, max_files=4)
SLEEPER = "import time\ntime.sleep(2)"


def _monitor_parent():
    """This process's cgroup v1 memory directory (where a monitoring cgroup can be made), or None."""
    try:
        with open("/proc/self/cgroup") as f:
            path = next(ln.split(":", 2)[2].strip() for ln in f if "memory" in ln.split(":")[1].split(","))
    except (OSError, StopIteration, IndexError):
        return None
    d = os.path.join("/sys/fs/cgroup/memory", path.lstrip("/"))
    return d if os.path.isfile(os.path.join(d, "memory.max_usage_in_bytes")) and os.access(d, os.W_OK) else None


def _read_mb(path):
    with open(path) as f:
        return int(f.read().split()[0]) / 2 ** 20


def host_loss(name, label):
    """Run one program in a child process placed in a fresh, unlimited memory cgroup: everything the run
    charges (the child's interpreter, unshare, the supervisor, the worker, its kernel objects) counts
    there, hierarchically. Returns (peak MB, MB still charged after the child exited, the child's result)."""
    parent = _monitor_parent()
    if parent is None:
        return None, None, {"status": "not measured: no writable cgroup v1 memory controller"}
    cg = os.path.join(parent, f"r3bench-monitor-{os.getpid()}-{time.monotonic_ns()}")
    os.mkdir(cg)
    try:
        child = subprocess.Popen([sys.executable, __file__, "--_one", f"{name},{label},{REVS.get(name, '')}"],
                                 stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True, cwd=str(REPO))
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(child.pid))
        out, _ = child.communicate("go\n", timeout=120)
        peak = _read_mb(os.path.join(cg, "memory.max_usage_in_bytes"))
        left = _read_mb(os.path.join(cg, "memory.usage_in_bytes"))
        try:
            res = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError):
            res = {"status": "no result", "stdout": out[-300:]}
        return round(peak, 1), round(left, 1), res
    finally:
        try:
            with open(os.path.join(cg, "memory.force_empty"), "w") as f:
                f.write("0")
        except OSError:
            pass
        os.rmdir(cg)


def _one(spec):
    """In the measuring child: wait for "go" (the parent has moved it into its cgroup), run, print JSON."""
    name, label, rev = spec.split(",")
    if rev:
        REVS[name] = rev
    sys.stdin.readline()
    lim = sandbox.SandboxLimits(**ATTACK_LIMITS)
    r = _runner(name)(ATTACK if label == "attack" else SLEEPER, _limits_for(name, lim), None)
    print(json.dumps({"status": r.status, "reason": r.reason[:200], "stdout": r.stdout[:400]}))
    return 0


def memory(names, n):
    out = {}
    for name in names:
        for label in ("sleep", "attack"):
            runs = [host_loss(name, label) for _ in range(n)]
            r = runs[-1][2]
            peaks = [x[0] for x in runs]
            out[f"{name}/{label}"] = {"n": n, "peak_mb": peaks, "left_mb": [x[1] for x in runs],
                                      "median_peak_mb": statistics.median(peaks) if None not in peaks else None,
                                      "status": r.get("status"), "reason": r.get("reason", ""),
                                      "stdout": r.get("stdout", "")}
            print(name, label, json.dumps(out[f"{name}/{label}"]), file=sys.stderr)
    for name in names:  # what the attack adds to a run that only sleeps
        a, b = out[f"{name}/attack"]["median_peak_mb"], out[f"{name}/sleep"]["median_peak_mb"]
        out[f"{name}/attack"]["over_sleep_mb"] = round(a - b, 1) if a is not None and b is not None else None
    return out


def _stats(xs):
    return {"n": len(xs), "median_ms": round(1000 * statistics.median(xs), 1), "mean_ms": round(1000 * statistics.mean(xs), 1),
            "min_ms": round(1000 * min(xs), 1), "max_ms": round(1000 * max(xs), 1)}


def ab(rev_a, rev_b, n, n_pde):
    """Two revisions of the sandbox, both taken from git the same way (a module loaded from the package and one
    from a copy did not time alike here: an A/A run of the same code gave 1.08-1.13x), runs alternating A B,
    B A ...: per program the medians of the wall time and of the CPU time of the run's processes (user + sys,
    from RUSAGE_CHILDREN: unshare waits for the supervisor, which waits for the worker), which a loaded
    machine disturbs much less than the wall time. Give the same revision twice for the noise floor."""
    import resource
    mods = {"A": _before(rev_a), "B": _before(rev_b) if rev_b != rev_a else None}
    if mods["B"] is None and rev_b == rev_a:  # a second copy of the same code
        mods["B"] = _before(rev_b + "^{commit}")
    if None in mods.values():
        raise SystemExit("--ab needs both revisions from git")
    out = {"A": rev_a, "B": rev_b, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load avg "
           f"{os.getloadavg()[0]:.2f} at start, Python {platform.python_version()}", "programs": {}}
    for pname, count in (("trivial", n), ("pde", n_pde)):
        code, inputs, lim = _programs()[pname]
        got = {"A": [], "B": []}

        def one(k):
            mod = mods[k]
            lk = _limits_for(mod, lim)
            os.environ[sandbox.ENV_VAR] = "auto"
            r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            r = mod.run_python(code, lk, inputs)
            dt, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
            if not r.ok:
                raise RuntimeError(f"{k}: {r.status}: {r.reason}")
            return dt, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), r1.ru_stime - r0.ru_stime
        one("A"), one("B")
        for i in range(count):
            for k in (("A", "B") if i % 2 == 0 else ("B", "A")):
                got[k].append(one(k))
        st = {k: {"n": len(v), "wall_median_ms": round(1000 * statistics.median(x[0] for x in v), 1),
                  "cpu_median_ms": round(1000 * statistics.median(x[1] for x in v), 1),
                  "sys_median_ms": round(1000 * statistics.median(x[2] for x in v), 1)} for k, v in got.items()}
        st["wall_B_over_A"] = round(st["B"]["wall_median_ms"] / st["A"]["wall_median_ms"], 3)
        st["cpu_B_over_A"] = round(st["B"]["cpu_median_ms"] / st["A"]["cpu_median_ms"], 3)
        out["programs"][pname] = st
        print(pname, json.dumps(st), file=sys.stderr)
    return out


def _limits_for(mod, lim):
    """`lim` as the revision `mod`'s SandboxLimits (the fields it has: an older revision lacks newer ones)."""
    if not lim:
        return mod.SandboxLimits()
    return mod.SandboxLimits(**{f: getattr(lim, f) for f in lim.__dataclass_fields__
                                if f in mod.SandboxLimits.__dataclass_fields__})


def _drop_cached(packages=("numpy", "scipy")):
    """The host drops its clean page cache of these packages' files in the bound site-packages (a caller that
    never imported them): the runs then read them from disk, and a run's memory cgroup is charged for them."""
    import importlib.util

    n = 0
    for pkg in packages:
        spec = importlib.util.find_spec(pkg)
        for top in (spec.submodule_search_locations or []) if spec else []:
            for root, _, files in os.walk(top):
                for f in files:
                    try:
                        fd = os.open(os.path.join(root, f), os.O_RDONLY)
                    except OSError:
                        continue
                    try:
                        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                        n += 1
                    finally:
                        os.close(fd)
    return n


def cold(rev_a, rev_b, n):
    """The PDE program `n` times in a row per revision (not alternating: a run that leaves the pages it read in
    the cache serves the next), after the host dropped its cache of NumPy and SciPy: what a run costs when the
    caller holds none of the libraries it imports. Medians of runs 2..n (the first reads them in either way)."""
    code, inputs, lim = _programs()["pde"]
    out = {}
    for k, rev in (("A", rev_a), ("B", rev_b)):
        mod = _before(rev)
        lk = _limits_for(mod, lim)
        _drop_cached()
        ts = []
        for _ in range(n):
            t0 = time.perf_counter()
            r = mod.run_python(code, lk, inputs)
            ts.append(time.perf_counter() - t0)
            if not r.ok:
                raise RuntimeError(f"{k}: {r.status}: {r.reason}")
        out[k] = {"n": n, "first_ms": round(1000 * ts[0], 1), "median_rest_ms": round(1000 * statistics.median(ts[1:]), 1)}
    out["B_over_A"] = round(out["B"]["median_rest_ms"] / out["A"]["median_rest_ms"], 3)
    return out


def _ab_markdown(o):
    rows = [f"# Sandbox A/B (benchmarks/bench_sandbox.py --ab {o['A']} {o['B']})", "",
            f"Machine: {o['machine']}. Both from git, runs alternating; medians.", "",
            "| program | n | A wall ms | B wall ms | B / A wall | A CPU ms (sys) | B CPU ms (sys) | B / A CPU |",
            "|---|---|---|---|---|---|---|---|"]
    for p, st in o["programs"].items():
        a, b = st["A"], st["B"]
        rows.append(f"| {p} | {a['n']} | {a['wall_median_ms']} | {b['wall_median_ms']} | {st['wall_B_over_A']}x | "
                    f"{a['cpu_median_ms']} ({a['sys_median_ms']}) | {b['cpu_median_ms']} ({b['sys_median_ms']}) | "
                    f"{st['cpu_B_over_A']}x |")
    if o.get("cold"):
        c = o["cold"]
        rows += ["", "Cold libraries (`--cold N`): the PDE program N times in a row per revision after the host dropped "
                 "its page cache of NumPy and SciPy (a caller that never imported them); medians of runs 2..N.", "",
                 "| n | A first ms | A later ms | B first ms | B later ms | B / A later |", "|---|---|---|---|---|---|",
                 f"| {c['A']['n']} | {c['A']['first_ms']} | {c['A']['median_rest_ms']} | {c['B']['first_ms']} | "
                 f"{c['B']['median_rest_ms']} | {c['B_over_A']}x |"]
    return "\n".join(rows) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30, help="runs per sandbox, trivial program")
    ap.add_argument("--n-pde", type=int, default=15, help="runs per sandbox, PDE-verifier program")
    ap.add_argument("--throughput", type=int, default=24, help="runs per sandbox through 2 workers")
    ap.add_argument("--attack-runs", type=int, default=3, help="runs of the memory attack per sandbox (0: none)")
    ap.add_argument("--legacy-rev", default=LEGACY_REV, help="git revision of the 'legacy' baseline")
    ap.add_argument("--before-rev", default=BEFORE_REV, help="git revision of the 'before' baseline")
    ap.add_argument("--ab", nargs=2, metavar=("REV_A", "REV_B"),
                    help="only a balanced A/B of two git revisions (wall and CPU time; --n, --n-pde runs each)")
    ap.add_argument("--cold", type=int, default=0, metavar="N",
                    help="with --ab: also N PDE runs in a row per revision after dropping the host's page cache of "
                         "NumPy and SciPy")
    ap.add_argument("--_one", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "sandbox"))
    args = ap.parse_args(argv)
    if args._one:
        return _one(args._one)
    if args.ab:
        o = ab(args.ab[0], args.ab[1], args.n, args.n_pde)
        if args.cold:
            o["cold"] = cold(args.ab[0], args.ab[1], args.cold)
        outdir = Path(args.out)
        outdir.mkdir(parents=True, exist_ok=True)
        name = "ab-" + "-".join(r.replace("/", "_") for r in args.ab)
        (outdir / f"{name}.json").write_text(json.dumps(o, indent=2) + "\n")
        (outdir / f"{name}.md").write_text(_ab_markdown(o))
        print(_ab_markdown(o))
        return 0
    level = sandbox.isolation_level()
    REVS.update(legacy=args.legacy_rev, before=args.before_rev)
    names = ((["legacy"] if _before(args.legacy_rev) is not None else []) + ["new", "new-fallback"]
             + (["before"] if _before(args.before_rev) is not None else []))
    progs = _programs()
    out = {"level": level, "legacy_rev": args.legacy_rev, "before_rev": args.before_rev, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load avg {os.getloadavg()[0]:.2f} "
           f"at start, Python {platform.python_version()}", "programs": {}, "throughput_runs_per_s": {}}
    for pname, n in (("trivial", args.n), ("pde", args.n_pde)):
        times = interleaved(names, progs[pname], n)
        st = {k: _stats(v) for k, v in times.items()}
        if "legacy" in st:
            st["ratio_new_over_legacy"] = round(st["new"]["median_ms"] / st["legacy"]["median_ms"], 2)
        if "before" in st:
            st["ratio_new_over_before"] = round(st["new"]["median_ms"] / st["before"]["median_ms"], 2)
        out["programs"][pname] = st
        print(pname, json.dumps(st), file=sys.stderr)
    out["throughput_runs_per_s"] = throughputs(names, args.throughput) if args.throughput else {k: None for k in names}
    out["throughput_n"] = args.throughput
    if args.attack_runs:
        out["memory"] = memory([n for n in ("new", "before") if n in names], args.attack_runs)
        out["memory_limits"] = ATTACK_LIMITS
        out["cgroup_extra_mb"] = sandbox.CGROUP_EXTRA_MB
    os.environ.pop(sandbox.ENV_VAR, None)
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    (outdir / "summary.json").write_text(json.dumps(out, indent=2) + "\n")
    (outdir / "summary.md").write_text(_markdown(out))
    print(_markdown(out))
    return 0


def _steps(stdout):
    """The attack's "name value" lines as one table cell."""
    return "; ".join(" ".join(ln.split()) for ln in stdout.strip().splitlines())[:300]


def _before_label(o):
    rev = o.get("before_rev", BEFORE_REV)
    return "before issue 36" if rev == BEFORE_REV else f"before ({rev})"


def _markdown(o):
    rows = ["| program | sandbox | n | median ms | mean ms | min-max ms |", "|---|---|---|---|---|---|"]
    for pname, st in o["programs"].items():
        for name in ("legacy", "before", "new", "new-fallback"):
            if name not in st:
                continue
            s = st[name]
            label = {"legacy": f"legacy (in-process guards, {o.get('legacy_rev', LEGACY_REV)})", "new": f"new ({o['level']})",
                     "before": _before_label(o) + " (same level)",
                     "new-fallback": "new, forced fallback (rlimits+audit-hook)"}[name]
            rows.append(f"| {pname} | {label} | {s['n']} | {s['median_ms']} | {s['mean_ms']} | {s['min_ms']}-{s['max_ms']} |")
    ratios = ", ".join(f"{p}: {st['ratio_new_over_legacy']}x" for p, st in o["programs"].items()
                       if "ratio_new_over_legacy" in st)
    ratios_b = ", ".join(f"{p}: {st['ratio_new_over_before']}x" for p, st in o["programs"].items()
                         if "ratio_new_over_before" in st)
    tp = o["throughput_runs_per_s"]
    mem = []
    if o.get("memory"):
        mem = ["## Memory the host loses to one run (MB charged to a monitoring cgroup around the run: peak, and "
               "what is still charged after it)", "",
               f"Limits: {o['memory_limits']}; the run's memory cgroup allows memory_mb + {o['cgroup_extra_mb']} MB.", "",
               "| sandbox / program | n | peak MB (each run) | median peak | attack - sleep | left after | status | "
               "what the attack got (MB) |", "|---|---|---|---|---|---|---|---|"]
        for k, m in o["memory"].items():
            mem.append(f"| {k} | {m['n']} | {m['peak_mb']} | {m['median_peak_mb']} | {m.get('over_sleep_mb', '')} | "
                       f"{m['left_mb']} | {m['status']} | {_steps(m['stdout']) or '-'} |")
        mem.append("")
    return "\n".join([
        "# Sandbox overhead: kernel isolation vs the in-process sandbox (benchmarks/bench_sandbox.py)", "",
        f"Machine: {o['machine']}. Level of the new sandbox here: {o['level']}.", "",
        *rows, "",
        (f"Ratio of medians, new / legacy: {ratios} (goal: under 1.3x)." if ratios else "No legacy baseline (no git).")
        + (f" New / {_before_label(o)}: {ratios_b}." if ratios_b else ""), "",
        f"Throughput, trivial program, 2 workers (threads), {o['throughput_n']} runs each: "
        + (f"legacy {tp['legacy']} runs/s, " if "legacy" in tp else "")
        + f"new {tp['new']} runs/s, new forced fallback {tp['new-fallback']} runs/s"
        + (f", {_before_label(o)} {tp['before']} runs/s." if "before" in tp else "."), "", *mem])


if __name__ == "__main__":
    raise SystemExit(main())
