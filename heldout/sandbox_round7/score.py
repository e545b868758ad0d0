"""Score held-out sandbox round 7 (round 6's harness, adapted): run every attack of attacks.py, judge it from outside, write a table.

    python heldout/sandbox_round6/score.py                 # all attacks
    python heldout/sandbox_round6/score.py --only ID[,ID]  # some
    python heldout/sandbox_round6/score.py --list
    python heldout/sandbox_round6/score.py --check         # build and compile every program (runs nothing)
    options: --out DIR (results.md / results.json, default: this folder), --fallback (force the
    fallback level in the callers: R3BENCH_SANDBOX_ISOLATION=fallback), --keep (keep the callers' temp dirs)

Each attack runs in a CALLER subprocess of its own (this file with --caller): the caller builds
the context, runs the attack's setup, its outside check, run_python (sender, then receiver for
cross-run attacks, or both at once for concurrent ones; through the fork server where the attack
has `calls`), the outside check again, the judge and the teardown, and writes a JSON file. An attack's
`during` check is sampled every `during_period` s (default 0.05) while the runs go on; `caller_env` (a
dict, or a callable of the caller's temp dir) is added to the caller's environment; `monitor=False`
leaves out the Monitor thread (attacks that judge the caller's own CPU). The caller records its
monotonic clock before each run (ctx['t_run0']), its own CPU while the runs go on (ctx['self_cpu']) and
that of its reaped descendants (ctx['children_cpu']).
New in round 7: ctx['t_run1'] (the caller's monotonic clock when each run_python returned); an attack's
`scorer_pre(tmp, nonce) -> state` runs in THIS process before its caller starts (state["env"] is added to the
caller's environment) and `scorer_post(state) -> (verdict or None, text)` after the caller has ended (a verdict
it gives replaces the caller's, e.g. when what the run did shows only after the caller's exit); the verdict
`known` (an attack on a gap docs/sandbox.md documents as open) is counted apart from `hole`; every text written
to results.json / results.md is scrubbed of machine paths (the venv, the Python prefix, the checkout, home, the
temp dir, and any other absolute path under /work, /root, /home, /tmp), tracebacks included.
The caller's stdin/stdout/stderr are host files (the inherited-fd attacks observe them). Attacks
with caller_cap_mb run their caller in a memory cgroup of its own (a child of this process's
cgroup, v1 or v2, best effort; said in the result) limited to its usage at the start + that many MB,
so an OOM kill of the caller is observed here instead of suffered. A caller that dies or outlives
its time limit is recorded (hole for caller-harm attacks, inconclusive otherwise); an error in one
attack never stops the others. After each caller ends, this process looks for processes that the
run named with the attack's marker and kills them by pid (and records them as a leftover hole).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))


# --------------------------------------------------------------------------- caller side


def _own_memory_cgroup():
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hid, ctrls, path = line.split(":", 2)
        if "memory" in ctrls.split(","):
            return Path("/sys/fs/cgroup/memory" + path), "v1"
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hid, ctrls, path = line.split(":", 2)
        if hid == "0":
            for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
                if Path(root, "cgroup.controllers").exists():
                    return Path(root + path), "v2"
    return None, None


def _result_dict(r):
    if r is None:
        return None
    d = {}
    for k in ("ok", "status", "source", "reason", "returncode", "value", "seconds", "isolation", "stdout", "stderr"):
        v = getattr(r, k, None)
        if isinstance(v, str) and len(v) > 3000:
            v = v[:3000] + "...[%d chars]" % len(v)
        d[k] = v
    calls = getattr(r, "calls", None) or ()
    if calls:
        d["calls"] = [
            {
                "status": c.status,
                "value": (c.value or "")[:200] if isinstance(c.value, str) else c.value,
                "reason": (c.reason or "")[:200],
                "seconds": c.seconds,
            }
            for c in calls
        ]
    return d


class _Sampler(threading.Thread):
    def __init__(self, fn, ctx, period=0.05):
        super().__init__(daemon=True)
        self.fn, self.ctx, self.samples, self.period = fn, ctx, [], period
        self.stop_flag = threading.Event()

    def run(self):
        while not self.stop_flag.is_set():
            try:
                self.samples.append((time.monotonic(), self.fn(self.ctx)))
            except Exception:
                pass
            time.sleep(self.period)


def caller_main(args):
    import attacks

    cg_note = ""
    if args.cgroup:
        try:
            Path(args.cgroup, "cgroup.procs").write_text(str(os.getpid()))
            cg_note = "caller in memory cgroup " + args.cgroup
        except OSError as e:
            cg_note = "could not join the caller cgroup: %s" % e
    from verifiers.sandbox import Calls, SandboxLimits, run_python

    a = attacks.BY_ID[args.caller]
    if args.cgroup and not cg_note.startswith("could"):
        try:
            cg = Path(args.cgroup)
            if (cg / "memory.usage_in_bytes").exists():
                use = int((cg / "memory.usage_in_bytes").read_text())
                (cg / "memory.limit_in_bytes").write_text(str(use + a["caller_cap_mb"] * 2**20))
            else:
                use = int((cg / "memory.current").read_text())
                (cg / "memory.max").write_text(str(use + a["caller_cap_mb"] * 2**20))
            cg_note += ", limited to %d MB + %d MB" % (use >> 20, a["caller_cap_mb"])
        except OSError as e:
            cg_note += ", limit not set: %s" % e
    ctx = {
        "nonce": args.nonce,
        "secret": args.secret,
        "marker": "r3b7" + args.nonce[:8],
        "caller_pid": os.getpid(),
        "repo_dir": str(REPO),
        "home": os.path.expanduser("~"),
        "here": str(HERE),
        "tmpdir": args.tmpdir,
        "cpu": a["limits"].get("cpu_s", 3),
        "limits": dict(a["limits"]),
        "t_run0": [],
    }
    out = {"id": a["id"], "caller_cgroup": cg_note}
    results = []
    try:
        if a.get("setup"):
            a["setup"](ctx)
        before = a["outside"](ctx)
        ctx["maxrss_mb_before"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        mon = attacks.Monitor(ctx["marker"], tree_root=os.getpid())
        if a.get("monitor", True):
            mon.start()
        sampler = _Sampler(a["during"], ctx, a.get("during_period", 0.05)) if a.get("during") else None
        if sampler:
            sampler.start()
        self0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.monotonic()
        limits = SandboxLimits(**a["limits"])
        calls = None
        if a.get("calls"):
            ckw = a["calls"](ctx)
            ckw["inputs"] = tuple(ckw["inputs"])
            calls = Calls(**ckw)
        builds = [a["code"]] + ([a["receiver"]] if a.get("receiver") else [])
        slots = [None] * len(builds)
        texts = [build(ctx) for build in builds]
        ctx["t_run0"] = [None] * len(builds)
        ctx["t_run1"] = [None] * len(builds)

        def one(i, build):
            try:
                kw = {"calls": calls} if calls is not None and i == 0 else {}
                ctx["t_run0"][i] = time.monotonic()
                slots[i] = run_python(texts[i], limits, **kw)
            except BaseException as e:  # the caller's own exception is an observation too
                out.setdefault("run_python_errors", []).append(repr(e)[:500])
            finally:
                ctx["t_run1"][i] = time.monotonic()

        if a.get("concurrent"):
            ts = [threading.Thread(target=one, args=(i, b)) for i, b in enumerate(builds)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        else:
            for i, b in enumerate(builds):
                one(i, b)
        results.extend(slots)
        ctx["run_python_errors"] = out.get("run_python_errors", [])
        ctx["wall"] = time.monotonic() - t0
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        ctx["self_cpu"] = (self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime)
        time.sleep(1.0)
        if sampler:
            sampler.stop_flag.set()
            sampler.join(2)
            ctx["during"] = sampler.samples
        if a.get("monitor", True):
            mon.stop()
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ctx["children_cpu"] = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        ctx["maxrss_mb_after"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        ctx["monitor_peak"] = mon.peak
        ctx["monitor_facts"] = mon.facts
        ctx["monitor_tree"] = mon.tree
        after = a["outside"](ctx)
        verdict, observed = a["judge"](before, after, results, ctx)
    except Exception:
        verdict, observed = "inconclusive", "harness error: " + traceback.format_exc()[-1500:]
    finally:
        try:
            if a.get("teardown"):
                a["teardown"](ctx)
        except Exception:
            pass
    out.update(
        verdict=verdict,
        observed=observed,
        results=[_result_dict(r) for r in results],
        caller_wall_s=round(ctx.get("wall", -1), 2),
        children_cpu_s=round(ctx.get("children_cpu", -1), 2),
        caller_self_cpu_s=round(ctx.get("self_cpu", -1), 2),
        monitor_peak=ctx.get("monitor_peak"),
        run_python_errors=out.get("run_python_errors"),
    )
    Path(args.json).write_text(json.dumps(out, default=str))
    os._exit(0)  # no atexit work left to the interpreter (daemon threads, listeners)


# --------------------------------------------------------------------------- scorer side


def _scrub_pairs():
    cands = [(str(REPO) + "/", ""), (os.path.realpath(str(REPO)) + "/", "")]
    for p, tag in (
        (str(REPO), "<repo>"),
        (sys.prefix, "<venv>"),
        (sys.base_prefix, "<python>"),
        (sys.exec_prefix, "<venv>"),
        (os.path.expanduser("~"), "<home>"),
        (tempfile.gettempdir(), "<tmp>"),
    ):
        cands += [(p, tag), (os.path.realpath(p), tag)]
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p:
            cands += [(p.rstrip("/") + "/", ""), (p.rstrip("/"), "<repo>")]
    seen, out = set(), []
    for p, tag in sorted(cands, key=lambda x: -len(x[0])):
        if len(p) > 1 and p not in seen:
            seen.add(p)
            out.append((p, tag))
    return out


_GENERIC_PATH = re.compile(r"/(?:work|root|home|tmp|var/tmp)(?=[/'\"\s,;:)\]|]|$)[^\s'\"<>|,;)\]\\]*")


def scrub(text):
    """Machine paths out of a text for the committed results: known prefixes by placeholder, then any
    remaining absolute path under /work, /root, /home, /tmp as <path>."""
    for p, tag in _scrub_pairs():
        text = text.replace(p, tag)
    return _GENERIC_PATH.sub("<path>", text)


def _kill_named(marker):
    import attacks

    pids = attacks.procs_named(marker)
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return pids


def score_one(a, py, extra_env, keep):
    nonce = secrets.token_hex(6)
    secret = secrets.token_hex(10)
    tmp = tempfile.mkdtemp(prefix="r3b7h-")
    cg_path = ""
    if a.get("caller_cap_mb"):
        base, ver = _own_memory_cgroup()
        if base is not None:
            try:
                d = base / ("r3b7caller-" + nonce)
                d.mkdir()
                cg_path = str(d)
            except OSError:
                cg_path = ""
    jpath = os.path.join(tmp, "out.json")
    f0 = open(os.path.join(tmp, "stdin"), "w+")
    f0.write("caller stdin\n")
    f0.flush()
    f0.seek(0)
    f1 = open(os.path.join(tmp, "stdout"), "w")
    f2 = open(os.path.join(tmp, "stderr"), "w")
    runs = 2 if a.get("receiver") else 1
    limit = runs * (a["limits"].get("wall_s", 5) + 20) + 60
    env = dict(os.environ, **extra_env)
    state = {}
    if a.get("scorer_pre"):
        state = a["scorer_pre"](tmp, nonce) or {}
        for k, v in (state.get("env") or {}).items():
            if k == "TMPDIR":
                os.makedirs(v, exist_ok=True)
            env[k] = v
    cenv = a.get("caller_env") or {}
    if callable(cenv):
        cenv = cenv(tmp)
        for k, v in cenv.items():
            if k == "TMPDIR":
                os.makedirs(v, exist_ok=True)
    env.update(cenv)
    cmd = [
        py,
        str(Path(__file__).resolve()),
        "--caller",
        a["id"],
        "--nonce",
        nonce,
        "--secret",
        secret,
        "--json",
        jpath,
        "--tmpdir",
        tmp,
    ] + (["--cgroup", cg_path] if cg_path else [])
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=f0, stdout=f1, stderr=f2, start_new_session=True, env=env, cwd=str(REPO))
    stuck = False
    try:
        rc = proc.wait(limit)
    except subprocess.TimeoutExpired:
        stuck = True
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait()
    wall = time.monotonic() - t0
    for f in (f0, f1, f2):
        f.close()
    marker = "r3b7" + nonce[:8]
    time.sleep(0.5)
    left = _kill_named(marker)
    row = {"attack": a["id"], "class": a["class"], "description": a["description"], "expected": a["expected"]}
    try:
        out = json.loads(Path(jpath).read_text())
    except (OSError, ValueError):
        out = None
    if out is None:
        why = (
            "caller stuck beyond %d s (killed)" % limit
            if stuck
            else "caller exited %s without a result" % ("by signal %s" % -rc if rc < 0 else "with code %s" % rc)
        )
        tail = Path(tmp, "stderr").read_text(errors="replace")[-600:] if Path(tmp, "stderr").exists() else ""
        row.update(
            verdict="hole" if a.get("caller_harm") and (stuck or rc < 0) else "inconclusive",
            observed=why + ("; stderr: " + tail if tail else ""),
        )
    else:
        row.update(
            verdict=out["verdict"],
            observed=out["observed"],
            caller_cgroup=out.get("caller_cgroup"),
            caller_wall_s=out.get("caller_wall_s"),
            children_cpu_s=out.get("children_cpu_s"),
            caller_self_cpu_s=out.get("caller_self_cpu_s"),
            monitor_peak=out.get("monitor_peak"),
            results=out.get("results"),
        )
    if left:
        row["observed"] += (
            "; processes named by the run still alive after the caller ended (killed by the scorer): %s" % left
        )
        row["verdict"] = "hole"
    if a.get("scorer_post"):
        try:
            pv, ptext = a["scorer_post"](state)
        except Exception:
            pv, ptext = None, "scorer_post error: " + traceback.format_exc()[-600:]
        row["observed"] = (row.get("observed") or "") + "; after the caller ended: " + ptext
        if pv:
            row["verdict"] = pv
    row["scorer_wall_s"] = round(wall, 1)
    if cg_path:
        for _ in range(20):
            try:
                os.rmdir(cg_path)
                break
            except OSError:
                time.sleep(0.25)
        else:
            row["observed"] += "; (scorer: the caller cgroup %s could not be removed)" % cg_path
    if not keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return row


def check_programs(attacks):
    """Build every program (and fork-server call code) with a dummy context and compile it: catches syntax
    errors before the one scoring run (round 5 lost two attacks to one)."""
    bad = 0
    for a in attacks.ATTACKS:
        ctx = {
            "nonce": "0123456789ab",
            "secret": "feedfacecafe",
            "marker": "r3b701234567",
            "caller_pid": 1,
            "repo_dir": str(REPO),
            "home": "/nonexistent",
            "here": str(HERE),
            "tmpdir": "/nonexistent",
            "cpu": 3,
            "limits": dict(a["limits"]),
            "bits": "10" * 8,
            "slot": "0.4",
            "symbol": 3,
            "shift": 6,
            "nsym": 16,
            "cache_file": "/nonexistent",
            "cache_pages": "1,2",
            "target": "/nonexistent/x",
            "fifo": "/nonexistent/f",
            "ml_spec": "",
            "wall_s": "3",
            "call_limit_s": 1.0,
            "a_sleep": "2.0",
            "purelib": "/nonexistent",
            "bigfiles": "",
        }
        texts = [("code", a["code"](ctx))]
        if a.get("receiver"):
            texts.append(("receiver", a["receiver"](ctx)))
        if a.get("calls"):
            texts.append(("calls", a["calls"](ctx)["code"]))
        for what, text in texts:
            left = sorted(set(re.findall(r"@[A-Z_0-9]+@", text)))
            try:
                compile(text, "%s/%s" % (a["id"], what), "exec")
            except SyntaxError as e:
                bad += 1
                print("SYNTAX", a["id"], what, e)
            if left:
                bad += 1
                print("UNFILLED", a["id"], what, left)
    print("%d attacks, %d problems" % (len(attacks.ATTACKS), bad))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--check", action="store_true", help="build and compile every program; run nothing")
    ap.add_argument("--out", default=str(HERE))
    ap.add_argument("--fallback", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep each caller's temp dir")
    ap.add_argument("--caller")
    ap.add_argument("--nonce")
    ap.add_argument("--secret")
    ap.add_argument("--json")
    ap.add_argument("--tmpdir")
    ap.add_argument("--cgroup", default="")
    args = ap.parse_args()
    if args.caller:
        return caller_main(args)
    import attacks

    if args.list:
        for a in attacks.ATTACKS:
            print("%-28s %-16s %s" % (a["id"], a["class"], a["description"]))
        return
    if args.check:
        return check_programs(attacks)
    chosen = attacks.ATTACKS
    if args.only:
        ids = [x.strip() for x in args.only.split(",") if x.strip()]
        unknown = [i for i in ids if i not in attacks.BY_ID]
        if unknown:
            sys.exit("unknown attack ids: %s" % unknown)
        chosen = [attacks.BY_ID[i] for i in ids]
    extra_env = {"R3BENCH_SANDBOX_ISOLATION": "fallback"} if args.fallback else {}
    if args.fallback:
        os.environ.update(extra_env)
    try:
        from verifiers.sandbox import isolation_level

        level = isolation_level()
    except Exception as e:
        level = "unknown (%r)" % (e,)
    meta = {
        "isolation_level": level,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "uid": os.getuid(),
        "forced_fallback": args.fallback,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "attacks": len(chosen),
        "only": args.only or None,
    }
    print("isolation %s, kernel %s, %d attacks" % (level, meta["kernel"], len(chosen)), flush=True)
    rows = []
    for a in chosen:
        try:
            row = score_one(a, sys.executable, extra_env, args.keep)
        except Exception:
            row = {
                "attack": a["id"],
                "class": a["class"],
                "description": a["description"],
                "expected": a["expected"],
                "verdict": "inconclusive",
                "observed": "scorer error: " + traceback.format_exc()[-800:],
            }
        rows.append(row)
        print("%-28s %-13s %s" % (row["attack"], row["verdict"], scrub(row["observed"])[:200]), flush=True)
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("stopped", "hole", "known", "inconclusive")}
    meta["counts"] = counts
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"meta": meta, "rows": rows}, indent=1, default=str)
    # committed results name no machine paths (tracebacks included): placeholders, then a generic pass
    (out / "results.json").write_text(scrub(text))

    def cell(s):
        return str(s).replace("|", "\\|").replace("\n", " ")[:400]

    lines = [
        "# Held-out sandbox round 7: results",
        "",
        "isolation level `%s`, kernel `%s`, Python %s, uid %s%s, %s"
        % (
            level,
            meta["kernel"],
            meta["python"],
            meta["uid"],
            ", forced fallback" if args.fallback else "",
            meta["started"],
        ),
        "",
        "stopped %(stopped)d, hole %(hole)d, known (documented open) %(known)d, inconclusive %(inconclusive)d" % counts,
        "",
        "| attack | class | expected | observed | verdict |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            "| %s | %s | %s | %s | **%s** |"
            % (r["attack"], r["class"], cell(r["expected"]), cell(r["observed"]), r["verdict"])
        )
    (out / "results.md").write_text(scrub("\n".join(lines) + "\n"))
    print("stopped %(stopped)d, hole %(hole)d, known %(known)d, inconclusive %(inconclusive)d" % counts)
    print("wrote", out / "results.md", out / "results.json")


if __name__ == "__main__":
    sys.exit(main())
