"""Held-out sandbox round 6: attacks written blind (without reading the sandbox's code or its tests).

Same format as rounds 4 and 5 (heldout/sandbox_round5/attacks.py). Each attack is a dict:
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
                           verdict in {"stopped", "hole", "inconclusive"}
  setup / teardown         optional callables ctx -> None, run in the caller's process
  caller_env               optional dict, or callable tmpdir -> dict: extra environment of the caller
  monitor                  False: no Monitor thread in the caller (attacks that judge the caller's CPU)
  caller_cap_mb, caller_harm   as in round 4

New in round 6 (score.py): ctx['t_run0'] (the caller's monotonic clock just before each run_python),
ctx['self_cpu'] (the caller's own CPU seconds while the runs went on), ctx['children_cpu'] (the CPU of
the caller's reaped descendants: the runs' processes), ctx['wall'].

Programs that need the kernel walls start with PRELUDE (round 5's blind DISARM of the audit hook, then
fresh `posix`/`_socket` functions; prints `R3B6_HOOK ...` first). Where the DISARM fails the program
runs with the hook in place; the outside checks still judge it.

ctx keys (score.py builds them): nonce (hex), secret, marker (process name the programs give
themselves, <= 15 chars), caller_pid, repo_dir, home, here, tmpdir, cpu, plus what each setup adds.
In program text @KEY@ is replaced by str(ctx[KEY]).

Timing-based channels say so in their judge; they are holes only with an exact (or one-bit-off) decode.
"""

from __future__ import annotations

import ctypes
import fcntl
import glob
import mmap
import os
import random
import re
import resource
import signal
import stat
import struct
import sysconfig
import tempfile
import threading
import time

PAGE = 4096
NS_TYPES = ("user", "mnt", "net", "pid", "uts", "ipc", "cgroup", "time")

# --------------------------------------------------------------------------- the programs' prelude

PRELUDE = r"""
import sys as _sys
def _r3b6_disarm():
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

def _r3b6_fresh(name):
    import importlib.util, importlib.machinery, _imp
    if name in _sys.builtin_module_names:
        return _imp.create_builtin(importlib.machinery.ModuleSpec(name, None, origin='built-in'))
    spec = importlib.util.find_spec(name)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

R3B6_HOOK = 'untried'
try:
    R3B6_HOOK = _r3b6_disarm()
except BaseException as _e:
    R3B6_HOOK = 'failed: %r' % (_e,)
import os, time, signal, threading
try:
    _px = _r3b6_fresh('posix')
    for _n in ('fork', 'kill', 'killpg', 'setsid', 'execv', 'execve', 'posix_spawn', 'system',
               'utime', 'chmod', 'fchmod', 'fchown', 'chown', 'lchown', 'open', 'mkdir', 'setpgid',
               'nice', 'setpriority', 'sched_setscheduler', 'sched_setaffinity', 'waitpid', 'wait',
               'setuid', 'setgid', 'setgroups', 'mkfifo', 'symlink', 'truncate', 'ftruncate',
               'setxattr', 'listxattr', 'getxattr', 'link', 'pipe', 'dup2',
               'sched_setaffinity', 'preadv', 'posix_fallocate', 'chdir', 'rename'):
        if hasattr(_px, _n):
            setattr(os, _n, getattr(_px, _n))
    import socket as _socket_mod
    RAWSOCK = _r3b6_fresh('_socket')
except BaseException as _e:
    RAWSOCK = None
    R3B6_HOOK += '; fresh modules failed: %r' % (_e,)
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
    R3B6_HOOK += '; no ctypes: %r' % (_e,)
def say(*a):
    print(*a, flush=True)
say('R3B6_HOOK', R3B6_HOOK)
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

_BUSY_SENDER = (
    SENDER_HEAD
    + r"""
try:
    NB = min(len(os.sched_getaffinity(0)), @NBUSY@)
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
)


def _busy(n):
    return prog(_BUSY_SENDER.replace("@NBUSY@", str(n)))


A(
    id="xc6_cpu_idle",
    **{"class": "xc-hostproc"},
    description="two runs at once: the sender busy-loops on up to 5 CPUs in its 1-slots; the receiver samples host-wide CPU values other than /proc/stat: /proc/uptime idle, /proc/schedstat, /proc/pressure/cpu, /proc/softirqs TIMER/SCHED, /proc/interrupts LOC",
    concurrent=True,
    setup=setup_concurrent,
    code=_busy(5),
    receiver=receiver_multi(
        ["uptime_idle", "schedstat_run", "psi_cpu", "softirq_timer", "softirq_sched", "irq_loc"], _XC6_SAMPLE_S
    ),
    limits=_XC6_LIMITS,
    expected="the receiver decodes none of the values (they are not host-wide in the run, or not readable)",
    judge=judge_multi(),
)

A(
    id="xc6_shmem_level",
    **{"class": "xc-hostproc"},
    description="two runs at once: the sender holds a 96 MB file in its scratch tmpfs in its 1-slots (deleted in the 0-slots); the receiver samples Shmem/MemFree (/proc/meminfo), nr_shmem (/proc/vmstat), /proc/buddyinfo and /proc/zoneinfo free pages",
    concurrent=True,
    setup=setup_concurrent,
    code=prog(
        SENDER_HEAD
        + r"""
chunk = b'\x01' * (1 << 20)
for b, until in slots():
    if b != '1':
        continue
    with open('blob', 'wb') as f:
        for i in range(96):
            f.write(chunk)
    while time.monotonic() < until:
        time.sleep(0.005)
    os.unlink('blob')
result = 1
"""
    ),
    receiver=receiver_multi(["shmem", "memfree", "nr_shmem", "buddy_free", "zone_free"], _XC6_SAMPLE_S),
    limits=_XC6_LIMITS,
    expected="the receiver decodes none of the values (host memory figures are not visible to the run)",
    judge=judge_multi(),
)

A(
    id="xc6_pgfault_rate",
    **{"class": "xc-hostproc"},
    description="two runs at once: the sender maps, fills and unmaps 16 MB over and over in its 1-slots; the receiver samples the host-wide /proc/vmstat counters pgfault, pgalloc_*, pgfree, numa_hit",
    concurrent=True,
    setup=setup_concurrent,
    code=prog(
        SENDER_HEAD
        + r"""
import mmap
zeros = b'\x00' * (16 << 20)
for b, until in slots():
    while b == '1' and time.monotonic() < until:
        m = mmap.mmap(-1, 16 << 20)
        m.write(zeros)
        m.close()
result = 1
"""
    ),
    receiver=receiver_multi(["pgfault", "pgalloc", "pgfree", "numa_hit"], _XC6_SAMPLE_S),
    limits=_XC6_LIMITS,
    expected="the receiver decodes none of the counters (not host-wide in the run, or not readable)",
    judge=judge_multi(),
)

A(
    id="xc6_inodes",
    **{"class": "xc-hostproc"},
    description="two runs at once: the sender holds 3,000 empty scratch files and 100 pipes in its 1-slots (removed in the 0-slots); the receiver samples /proc/sys/fs/inode-nr and dentry-state (host-wide inode and dentry counts)",
    concurrent=True,
    setup=setup_concurrent,
    code=prog(
        SENDER_HEAD
        + r"""
for b, until in slots():
    if b != '1':
        continue
    made, pipes = [], []
    for k in range(3000):
        try:
            open('n%d' % k, 'w').close()
            made.append('n%d' % k)
        except OSError:
            break
    for k in range(100):
        try:
            pipes.append(os.pipe())
        except OSError:
            break
    while time.monotonic() < until:
        time.sleep(0.005)
    for n in made:
        os.unlink(n)
    for r, w in pipes:
        os.close(r)
        os.close(w)
result = 1
"""
    ),
    receiver=receiver_multi(["inode_nr", "inode_free", "dentry_nr"], _XC6_SAMPLE_S),
    limits=_XC6_LIMITS,
    expected="the receiver decodes none of the values (the inode and dentry counts are not host-wide in the run)",
    judge=judge_multi(),
)

A(
    id="xc6_disk_io",
    **{"class": "xc-hostproc"},
    description="two runs at once: the sender reads 1 MB blocks of big bound host files with O_DIRECT (uncached reads otherwise) in its 1-slots; the receiver samples /proc/diskstats sectors read, vmstat pgpgin and /proc/pressure/io",
    concurrent=True,
    setup=setup_concurrent,
    code=prog(
        r"""
import mmap, sys, sysconfig
found, stop_at = [], time.monotonic() + 1.2
for d in (sysconfig.get_paths()['purelib'], '/usr/lib', '/usr/share', '/usr/lib64', sys.prefix):
    for root, dirs, files in os.walk(d):
        for fn in files:
            p = os.path.join(root, fn)
            try:
                if os.path.getsize(p) >= 64 << 20:
                    found.append(p)
            except OSError:
                pass
        if time.monotonic() > stop_at or len(found) > 20:
            break
fds = []
for p in found[:12]:
    try:
        fds.append((os.open(p, os.O_RDONLY | os.O_DIRECT), os.path.getsize(p)))
    except OSError as e:
        say('odirect', p, e)
mode = 'direct'
if not fds:
    mode = 'buffered'
    for p in found[:12]:
        try:
            fds.append((os.open(p, os.O_RDONLY), os.path.getsize(p)))
        except OSError:
            pass
say('files', len(found), 'open', len(fds), mode)
buf = mmap.mmap(-1, 1 << 20)
import random
rnd = random.Random()
"""
        + SENDER_HEAD
        + r"""
total = 0
for b, until in slots():
    while b == '1' and fds and time.monotonic() < until:
        fd, size = rnd.choice(fds)
        off = rnd.randrange(0, max(1, size - (1 << 20))) & ~4095
        try:
            total += os.preadv(fd, [buf], off)
        except OSError as e:
            say('read', e)
            fds = []
say('READ', total, mode)
result = total
"""
    ),
    receiver=receiver_multi(["disk_sectors", "pgpgin", "psi_io"], _XC6_SAMPLE_S + 2),
    limits=_XC6_LIMITS,
    expected="the receiver decodes none of the counters (the host's disk statistics are not visible to the run)",
    judge=judge_multi(),
)

A(
    id="xc6_ipi",
    **{"class": "xc-hostproc"},
    description="two runs at once: in its 1-slots the sender keeps a thread running on another CPU (memset in C, no GIL) and calls membarrier(PRIVATE_EXPEDITED) and munmap in a loop (IPIs, TLB shootdowns); the receiver samples /proc/interrupts CAL, TLB, RES",
    concurrent=True,
    setup=setup_concurrent,
    code=prog(
        r"""
import mmap
buf = ctypes.create_string_buffer(8 << 20)
flag, stop = [False], [False]
def spin():
    while not stop[0]:
        if flag[0]:
            libc.memset(buf, 0, 8 << 20)
        else:
            time.sleep(0.002)
threading.Thread(target=spin, daemon=True).start()
say('membarrier register', sc(324, 16, 0, 0))
"""
        + SENDER_HEAD
        + r"""
for b, until in slots():
    flag[0] = b == '1'
    while b == '1' and time.monotonic() < until:
        sc(324, 8, 0, 0)
        m = mmap.mmap(-1, 1 << 16)
        m.write(b'\x01' * (1 << 16))
        m.close()
    flag[0] = False
stop[0] = True
result = 1
"""
    ),
    receiver=receiver_multi(["irq_cal", "irq_tlb", "irq_res"], _XC6_SAMPLE_S),
    limits=_XC6_LIMITS,
    expected="the receiver decodes none of the interrupt counts (not host-wide in the run, or not readable)",
    judge=judge_multi(),
)

A(
    id="xc6_contention_timing",
    **{"class": "xc-hostproc"},
    description="TIMING-BASED: two runs at once; the sender busy-loops on up to 5 CPUs in its 1-slots, the receiver reads nothing of the host and only counts its own loop iterations per 5 ms (CPU contention)",
    concurrent=True,
    setup=setup_concurrent,
    code=_busy(5),
    receiver=receiver_multi(["loop_rate"], _XC6_SAMPLE_S),
    limits=_XC6_LIMITS,
    expected="the receiver cannot decode the bits from its own speed (each run has CPUs of its own); timing-based: a hole needs a clear decode (<= 1 of 12 bits wrong)",
    judge=judge_multi(timing=True),
)

# ---- xp-kernel: one run leaves a symbol for the next in kernel counters and caches -----------------


def _setup_vmstat(ctx):
    ctx["shift"], ctx["nsym"] = 6, 16
    ctx["symbol"] = int(ctx["nonce"][6:10], 16) % 16


_VM_COMMON = r"""
def vm(key):
    for line in open('/proc/vmstat'):
        k, v = line.split()
        if k == key:
            return int(v)
    return None
SHIFT, NSYM = @SHIFT@, @NSYM@
KEYS = ('unevictable_pgs_mlocked', 'thp_fault_alloc')
"""

A(
    id="xp6_vmstat_counter",
    **{"class": "xp-kernel"},
    description="sender moves a quiet host-global /proc/vmstat counter (unevictable_pgs_mlocked by mlock/munlock of one page, else thp_fault_alloc by MADV_HUGEPAGE faults) into a bucket chosen by its 4-bit symbol; the next run reads the counter",
    setup=_setup_vmstat,
    code=prog(
        RAWMAP
        + _VM_COMMON
        + r"""
SYM = @SYMBOL@
pg = rawmap(4096)
def mlock_once():
    libc.mlock(ctypes.c_void_p(pg), ctypes.c_size_t(4096))
    libc.munlock(ctypes.c_void_p(pg), ctypes.c_size_t(4096))
def thp_once():
    a = rawmap(4 << 20)
    al = (a + (2 << 20) - 1) & ~((2 << 20) - 1)
    libc.madvise(ctypes.c_void_p(al), ctypes.c_size_t(2 << 20), 14)
    ctypes.memset(al, 1, 1)
    libc.munmap(ctypes.c_void_p(a), ctypes.c_size_t(4 << 20))
used = None
for key, fn in zip(KEYS, (mlock_once, thp_once)):
    a0 = vm(key)
    if a0 is None:
        say('no', key)
        continue
    for _ in range(4):
        fn()
    if vm(key) - a0 >= 4:
        used = (key, fn)
        break
    say('route', key, 'did not move')
if used:
    key, fn = used
    c0 = c = vm(key)
    n = 0
    while not (((c >> SHIFT) % NSYM) == SYM and (c & ((1 << SHIFT) - 1)) < (1 << SHIFT) // 4):
        fn()
        n += 1
        c = vm(key)
        if n > 100000:
            break
    say('SENT %s start %d end %d n %d' % (key, c0, c, n))
result = 1
"""
    ),
    receiver=prog(
        _VM_COMMON
        + r"""
for key in KEYS:
    c = vm(key)
    if c is not None:
        print('RECV %s %d %d raw %d' % (key, (c >> SHIFT) % NSYM, c & ((1 << SHIFT) - 1), c))
result = 1
""",
        prelude=False,
    ),
    limits=L(wall_s=15, cpu_s=10, memory_mb=256, max_processes=1),
    expected="the receiving run does not read the sender's symbol (the counter is not visible, or cannot be moved)",
    outside=lambda ctx: vmstat("unevictable_pgs_mlocked", "thp_fault_alloc"),
    judge=lambda b, a, res, ctx: judge_vmstat(b, a, res, ctx),
)


def judge_vmstat(before, after, results, ctx):
    sent = re.search(r"SENT (\S+) start (\d+) end (\d+) n (\d+)", (results[0].stdout or "") if results[0] else "")
    obs = "symbol %d; sender %s %s; receiver %s; host before %s after %s" % (
        ctx["symbol"],
        short(results[0]),
        sent.group(0) if sent else None,
        short(results[-1]),
        before,
        after,
    )
    if not sent:
        return "stopped", "the sender could move no counter: " + obs
    key = sent.group(1)
    m = re.search(r"RECV %s (\d+) (\d+)" % key, (results[-1].stdout or "") if results[-1] else "")
    if not m:
        return "stopped", "the receiver could not read the counter: " + obs
    b = before.get(key)
    if b is not None and ((b >> 6) % 16) == ctx["symbol"] and int(sent.group(4)) == 0:
        return "inconclusive", "the counter already sat in the symbol's bucket: " + obs
    if int(m.group(1)) == ctx["symbol"] and int(m.group(2)) < 32:
        return "hole", "the receiving run read the sender's symbol from the host-global vmstat counter %s: %s" % (
            key,
            obs,
        )
    return "stopped", obs


def _setup_dcache(ctx):
    rnd = random.Random(ctx["nonce"] + "dc")
    bits = [rnd.randint(0, 1) for _ in range(16)]
    bits[0], bits[1] = 1, 0
    ctx["bits"] = "".join(map(str, bits))


def judge_dcache(before, after, results, ctx):
    bits = ctx["bits"]
    out = (results[-1].stdout or "") if results[-1] is not None else ""
    obs = "secret %s; sender %s; receiver %s" % (bits, short(results[0]), short(results[-1]))
    found = []
    for label, key, timing in (("dentry-state deltas", "DELTAS", False), ("lookup times", "TIMES", True)):
        m = re.search(r"^%s (.*)$" % key, out, re.M)
        if not m:
            continue
        try:
            vals = [float(x) for x in m.group(1).split()]
        except ValueError:
            continue
        if len(vals) != len(bits) or vals[0] == vals[1]:
            obs += "; %s uncalibrated %s" % (label, vals[:4])
            continue
        mid = (vals[0] + vals[1]) / 2
        # a 1-bit: the sender's lookups left negative dentries, so fewer new ones and faster lookups
        got = "".join(("1" if v < mid else "0") if vals[0] < vals[1] else ("1" if v > mid else "0") for v in vals)
        wrong = sum(x != y for x, y in zip(got, bits))
        obs += "; %s decode %s (%d wrong; %s)" % (label, got, wrong, [round(v, 6) for v in vals])
        if wrong == 0:
            found.append(("timing-based: " if timing else "exact: ") + label)
    if found:
        return (
            "hole",
            "the receiving run read the sender's bits from negative dentries in the host's dcache (%s): %s"
            % (found, obs),
        )
    return "stopped", obs


_DC_NAME = "'/usr/lib/r3b6@NONCE@-%d-%d' % (i, k)"

A(
    id="xp6_dcache_negative",
    **{"class": "xp-kernel"},
    description="sender looks up 64 missing names per 1-bit in a bound host tree (negative dentries in the host's own dcache); the next run looks up all names per bit and counts new dentries (dentry-state: exact) and times the lookups (timing)",
    setup=_setup_dcache,
    code=prog(
        r"""
import os
bits = '@BITS@'
for i, b in enumerate(bits):
    if b == '1':
        for k in range(64):
            try:
                os.stat("""
        + _DC_NAME
        + r""")
            except OSError:
                pass
print('sent')
""",
        prelude=False,
    ),
    receiver=prog(
        r"""
import os, time
def nd():
    with open('/proc/sys/fs/dentry-state') as f:
        return int(f.read().split()[0])
deltas, times = [], []
for i in range(16):
    names = ["""
        + _DC_NAME
        + r""" for k in range(64)]
    try:
        a = nd()
    except OSError:
        a = -1
    t0 = time.perf_counter()
    for n in names:
        try:
            os.stat(n)
        except OSError:
            pass
    t1 = time.perf_counter()
    try:
        b = nd()
    except OSError:
        b = -1
    deltas.append(b - a)
    times.append(t1 - t0)
print('DELTAS', ' '.join(map(str, deltas)))
print('TIMES', ' '.join('%.7f' % t for t in times))
result = 1
""",
        prelude=False,
    ),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256),
    expected="the receiving run does not read the bits: neither from dentry counts (exact) nor by timing (a hole by timing needs all 16 bits right)",
    judge=judge_dcache,
)


def judge_majflt(before, after, results, ctx):
    if not ctx.get("cache_file"):
        return "inconclusive", "no big uncached file found in the bound trees"
    out = (results[-1].stdout or "") if results[-1] is not None else ""
    got = dict(re.findall(r"^(BITS_\w+) ([01?]{16})", out, re.M))
    obs = "secret %s; host mincore before %s after %s; receiver read %s; sender %s; receiver %s" % (
        ctx["bits"],
        before,
        after,
        got,
        short(results[0]),
        short(results[-1]),
    )
    exact = [k for k, v in got.items() if v == ctx["bits"]]
    if exact:
        return "hole", "the receiving run read the page-cache bits exactly, without timing (%s): %s" % (exact, obs)
    return "stopped", obs


A(
    id="xp6_pagecache_majflt",
    **{"class": "xp-kernel"},
    description="round 4's page-cache loading channel with exact receivers (no timing): the receiver faults each page of the mapped host file in and reads its own ru_majflt and /proc/self/io read_bytes (a major fault = the page was not cached)",
    setup=setup_pagecache,
    code=prog(
        r"""
import mmap
f = open('@CACHE_FILE@', 'rb')
mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
try:
    mm.madvise(mmap.MADV_RANDOM)
except Exception:
    pass
for p, b in zip([int(x) for x in '@CACHE_PAGES@'.split(',') if x], '@BITS@'):
    if b == '1':
        mm[p * 4096]
print('sent')
""",
        prelude=False,
    ),
    receiver=prog(
        r"""
import mmap, resource
f = open('@CACHE_FILE@', 'rb')
mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
try:
    mm.madvise(mmap.MADV_RANDOM)
except Exception:
    pass
def rb():
    try:
        for line in open('/proc/self/io'):
            if line.startswith('read_bytes:'):
                return int(line.split()[1])
    except OSError:
        pass
    return -1
bm = bi = ''
for p in [int(x) for x in '@CACHE_PAGES@'.split(',') if x]:
    m0, r0 = resource.getrusage(resource.RUSAGE_SELF).ru_majflt, rb()
    mm[p * 4096]
    m1, r1 = resource.getrusage(resource.RUSAGE_SELF).ru_majflt, rb()
    bm += '0' if m1 > m0 else '1'
    bi += '?' if r0 < 0 else ('0' if r1 > r0 else '1')
print('BITS_MAJFLT', bm)
print('BITS_IO', bi)
result = 1
""",
        prelude=False,
    ),
    limits=L(wall_s=15, cpu_s=5, memory_mb=512, max_processes=1),
    expected="the receiver cannot read the bits exactly (its fault counts and I/O counters do not reveal the host page cache)",
    outside=outside_pagecache,
    judge=judge_majflt,
)

# ---- kmem-leftover: kernel memory outside the run's bound, or left after it -------------------------

_UNIX_COMMON = r"""
import array
S = RAWSOCK
def fill(s):
    s.setblocking(False)
    n, chunk = 0, b'\0' * 65536
    while True:
        try:
            n += s.send(chunk)
        except OSError:
            return n
def anc(fds):
    return [(1, 1, array.array('i', fds).tobytes())]
"""


def _meminfo_during(ctx):
    return meminfo("MemAvailable", "Shmem", "SwapFree", "Mlocked")


def judge_unix_held(before, after, results, ctx):
    r = results[-1]
    out = (r.stdout or "") if r is not None else ""
    held = sum(int(x) for x in re.findall(r"^HELD (\d+)", out, re.M))
    held_mb = held / 2**20
    bound = ctx["limits"]["memory_mb"] + 64
    lows = [v.get("MemAvailable") for _, v in ctx.get("during", []) if v and v.get("MemAvailable")]
    drop_mb = (before["MemAvailable"] - min(lows)) / 1024 if lows else 0
    obs = (
        "the run queued %.0f MB in Unix socket buffers (its report); host MemAvailable fell by up to %.0f MB "
        "during the run; the run's memory bound %d MB; %s" % (held_mb, drop_mb, bound, short(r))
    )
    if r is not None and r.status == "memory":
        return "stopped", "the memory cgroup counted the buffers: " + obs
    if held_mb > bound + 100:
        if drop_mb > bound + 50:
            return "hole", "socket buffers outside the run's memory bound: " + obs
        return "inconclusive", "the run claims more than its bound, the host view does not show it: " + obs
    return "stopped", obs


A(
    id="hk6_unix_skb_uncharged",
    **{"class": "kmem-leftover"},
    description="7 processes each fill as many Unix stream socketpairs as their fds allow (both directions, default buffers) and the worker puts 140 more filled pairs in flight (SCM_RIGHTS, closed locally), all held 5 s: is skb memory charged to the run's memory cgroup?",
    code=prog(
        _UNIX_COMMON
        + r"""
def hold():
    held, total = [], 0
    while True:
        try:
            a, b = S.socketpair(1, 1)
        except OSError:
            break
        total += fill(a) + fill(b)
        held.append((a, b))
    return held, total
kids = []
for k in range(6):
    pid = os.fork()
    if pid == 0:
        name_me()
        held, total = hold()
        say('HELD %d pairs %d' % (total, len(held)))
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
ca, cb = S.socketpair(1, 1)
total, inflight = 0, 0
for k in range(140):
    try:
        x, y = S.socketpair(1, 1)
    except OSError:
        break
    try:
        ca.sendmsg([b'f'], anc([x.fileno(), y.fileno()]))
    except OSError as e:
        say('inflight stop', e)
        x.close()
        y.close()
        break
    total += fill(x) + fill(y)
    inflight += 2
    x.close()
    y.close()
held, t2 = hold()
say('HELD %d inflight %d pairs %d' % (total + t2, inflight, len(held)))
time.sleep(5)
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=25, cpu_s=10, memory_mb=128, max_processes=6),
    expected="the run holds at most its memory bound (memory_mb + 64 MB) in socket buffers, or ends `memory`",
    outside=_meminfo_during,
    during=_meminfo_during,
    judge=judge_unix_held,
)


def _outside_gc(ctx):
    """Host view: sockets (sock_inode_cache), network namespaces, Shmem, MemAvailable; after the run it waits
    up to 15 s for them to come back."""

    def snap():
        s = slab_active("sock_inode_cache", "net_namespace")
        s.update(meminfo("Shmem", "MemAvailable"))
        return s

    if "_gc_before" not in ctx:
        ctx["_gc_before"] = snap()
        return ctx["_gc_before"]
    b = ctx["_gc_before"]
    end = time.monotonic() + 15
    while True:
        s = snap()
        ok = (
            (s["sock_inode_cache"] or 0) <= (b["sock_inode_cache"] or 0) + 50
            and (s["net_namespace"] or 0) <= (b["net_namespace"] or 0)
            and s["Shmem"] <= b["Shmem"] + 20 * 1024
        )
        if ok or time.monotonic() > end:
            s["waited_s"] = round(15 - max(0.0, end - time.monotonic()), 1)
            return s
        time.sleep(0.5)


def judge_gc(before, after, results, ctx):
    obs = "host before %s after %s; %s; stdout %r" % (
        before,
        after,
        short(results[-1]),
        ((results[-1].stdout or "") if results[-1] else "")[-300:],
    )
    left = []
    if before["sock_inode_cache"] is not None and after["sock_inode_cache"] > before["sock_inode_cache"] + 50:
        left.append("%d sockets" % (after["sock_inode_cache"] - before["sock_inode_cache"]))
    if before["net_namespace"] is not None and after["net_namespace"] > before["net_namespace"]:
        left.append("%d network namespaces" % (after["net_namespace"] - before["net_namespace"]))
    if after["Shmem"] > before["Shmem"] + 60 * 1024:
        left.append("%d MB of Shmem (scratch files)" % ((after["Shmem"] - before["Shmem"]) // 1024))
    if left:
        return "hole", "kernel objects of the run still there %s s after it: %s; %s" % (
            after.get("waited_s"),
            ", ".join(left),
            obs,
        )
    if before["sock_inode_cache"] is None and before["net_namespace"] is None:
        return "inconclusive", "no slab counts readable (not root, or caches merged): " + obs
    return "stopped", obs


A(
    id="hk6_unix_gc_cycle",
    **{"class": "kmem-leftover"},
    description="garbage cycles of in-flight Unix sockets (each socket sent over itself, also by MSG_OOB) whose queues are full and also carry a 40 MB unlinked scratch file and full pipes, in the worker and 3 children, then exit: does anything (sockets, the scratch tmpfs, the network namespace) outlive the run?",
    code=prog(
        _UNIX_COMMON
        + r"""
def cycles(tag, nfile):
    made = 0
    for k in range(60):
        try:
            a, b = S.socketpair(1, 1)
        except OSError:
            break
        extra = []
        if k < nfile:
            try:
                fd = os.open('f%s_%d' % (tag, k), os.O_RDWR | os.O_CREAT, 0o600)
                os.write(fd, b'\x01' * (40 << 20))
                os.unlink('f%s_%d' % (tag, k))
                extra.append(fd)
            except OSError as e:
                say('file', e)
        r, w = os.pipe()
        os.set_blocking(w, False)
        try:
            while True:
                os.write(w, b'\x02' * 65536)
        except OSError:
            pass
        extra += [r, w]
        try:
            try:
                a.sendmsg([b'x'], anc([a.fileno()] + extra), 1 if k % 2 else 0)
            except OSError:
                if not k % 2:
                    raise
                a.sendmsg([b'x'], anc([a.fileno()] + extra))
            b.sendmsg([b'y'], anc([b.fileno()]))
        except OSError as e:
            say('send', tag, k, e)
            break
        fill(a)
        fill(b)
        for fd in extra:
            os.close(fd)
        a.close()
        b.close()
        made += 1
    say('CYCLES', tag, made)
kids = []
for t in range(3):
    pid = os.fork()
    if pid == 0:
        name_me()
        cycles('k%d' % t, 1)
        os._exit(0)
    kids.append(pid)
    os.waitpid(pid, 0)
cycles('w', 2)
result = 1
"""
    ),
    limits=L(wall_s=20, cpu_s=10, memory_mb=384, max_processes=4, file_size_mb=41, max_files=6),
    expected="within seconds of the run the host's socket, network-namespace and Shmem counts are back (the cycles are collected with the run)",
    outside=_outside_gc,
    judge=judge_gc,
)

A(
    id="hk6_negative_dentries_bytes",
    **{"class": "kmem-leftover"},
    description="round 5's negative dentries with 220-character names (an external name allocation each, ~3x the memory per entry) in 5 bound trees for 9 s at memory_mb 64: does the host keep more kernel memory after the run than the run's whole bound?",
    code=prog(
        r"""
import os, time
pad = 'x' * 200
n = 0
end = time.time() + 9
for d in ('/usr/lib', '/usr/share', '/usr/bin', '/usr/include', '/usr/sbin'):
    for i in range(160000):
        try:
            os.stat('%s/r3b6@NONCE@%s%07d' % (d, pad, i))
        except OSError:
            pass
        n += 1
        if (i & 1023) == 0 and time.time() > end:
            break
print('lookups', n)
result = n
""",
        prelude=False,
    ),
    limits=L(wall_s=18, cpu_s=14, memory_mb=64, max_processes=1),
    expected="the host keeps less kernel memory after the run than the run's bound (memory_mb + 64 MB = 128 MB)",
    outside=lambda ctx: dict(dentry_state(ctx), **meminfo("SReclaimable", "Slab")),
    judge=lambda b, a, res, ctx: judge_dentry_bytes(b, a, res, ctx),
)


def judge_dentry_bytes(b, a, res, ctx):
    grow_mb = (a["SReclaimable"] - b["SReclaimable"]) / 1024
    n = (re.findall(r"lookups (\d+)", res[-1].stdout or "") or ["?"])[0] if res[-1] is not None else "?"
    obs = "host SReclaimable %+.0f MB, nr_dentry %+d, nr_negative %s -> %s after %s lookups; %s" % (
        grow_mb,
        a["nr_dentry"] - b["nr_dentry"],
        b["nr_negative"],
        a["nr_negative"],
        n,
        short(res[-1]),
    )
    if grow_mb > 64 + 64:
        return "hole", "the host keeps more reclaimable kernel memory after the run than its whole bound: " + obs
    return "stopped", obs


def _outside_memcg(ctx):
    if "_cg_before" not in ctx:
        ctx["_cg_before"] = dict(memcg_count(ctx), **meminfo("Cached"))
        return ctx["_cg_before"]
    b = ctx["_cg_before"]
    end = time.monotonic() + 15
    while True:
        s = dict(memcg_count(ctx), **meminfo("Cached"))
        if (
            (s["memory_cgroups"] or 0) <= (b["memory_cgroups"] or 0) and (s["v2_dying"] or 0) <= (b["v2_dying"] or 0)
        ) or time.monotonic() > end:
            s["waited_s"] = round(15 - max(0.0, end - time.monotonic()), 1)
            return s
        time.sleep(0.5)


A(
    id="hk6_dying_memcg",
    **{"class": "kmem-leftover"},
    description="the run reads ~400 MB of big bound host files (page cache charged to its memory cgroup) and exits: does its memory cgroup linger as a dying cgroup pinned by that page cache (host /proc/cgroups count, v2 nr_dying_descendants)?",
    code=prog(
        r"""
import os, sys, sysconfig, time
found, stop_at = [], time.monotonic() + 2
for d in ('/usr/lib', '/usr/share', sysconfig.get_paths()['purelib'], '/usr/lib64'):
    for root, dirs, files in os.walk(d):
        for fn in files:
            p = os.path.join(root, fn)
            try:
                if os.path.getsize(p) >= 16 << 20:
                    found.append(p)
            except OSError:
                pass
        if time.monotonic() > stop_at:
            break
total = 0
buf = bytearray(1 << 20)
for p in found:
    try:
        with open(p, 'rb', buffering=0) as f:
            while total < 400 << 20:
                n = f.readinto(buf)
                if not n:
                    break
                total += n
    except OSError:
        pass
    if total >= 400 << 20:
        break
print('read MB', total >> 20, 'of', len(found), 'files')
result = total
""",
        prelude=False,
    ),
    limits=L(wall_s=20, cpu_s=10, memory_mb=128, max_processes=1),
    expected="within seconds of the run the host's memory cgroup count is back where it was (no dying cgroup left behind)",
    outside=_outside_memcg,
    judge=lambda b, a, res, ctx: (
        ("inconclusive", "no cgroup count readable: %s" % short(res[-1]))
        if b["memory_cgroups"] is None
        else (
            "hole",
            "a memory cgroup of the run still counted %s s after it (dying, pinned by its page cache): "
            "before %s after %s; %s" % (a.get("waited_s"), b, a, short(res[-1])),
        )
        if a["memory_cgroups"] > b["memory_cgroups"] or (a["v2_dying"] or 0) > (b["v2_dying"] or 0)
        else ("stopped", "before %s after %s; %s" % (b, a, short(res[-1])))
    ),
)


def judge_swap(b, a, res, ctx):
    if not b.get("SwapTotal"):
        return "inconclusive", "the host has no swap: nothing to take; %s" % short(res[-1])
    lows = [v.get("SwapFree") for _, v in ctx.get("during", []) if v and v.get("SwapFree") is not None]
    drop_mb = (b["SwapFree"] - min(lows)) / 1024 if lows else 0
    obs = "host SwapFree fell by up to %.0f MB during the run (bound %d MB); %s" % (
        drop_mb,
        ctx["limits"]["memory_mb"] + 64,
        short(res[-1]),
    )
    if drop_mb > ctx["limits"]["memory_mb"] + 64 and (res[-1] is None or res[-1].status != "memory"):
        return "hole", "the run held memory in the host's swap beyond its memory bound: " + obs
    return "stopped", obs


A(
    id="hk6_swap_beyond_limit",
    **{"class": "kmem-leftover"},
    description="5 processes each touch and hold 100 MB at memory_mb 128 (500 MB against a 192 MB cgroup): without swap accounting the cgroup pushes the excess to the host's swap instead of ending the run",
    code=prog(r"""
kids = []
for k in range(4):
    pid = os.fork()
    if pid == 0:
        name_me()
        try:
            blob = b'\x01' * (100 << 20)
            time.sleep(4)
        except MemoryError:
            say('memerr', k)
        os._exit(0)
    kids.append(pid)
try:
    blob = b'\x01' * (100 << 20)
    time.sleep(4)
except MemoryError:
    say('memerr worker')
for pid in kids:
    say('kid', os.waitpid(pid, 0))
result = 1
"""),
    limits=L(wall_s=15, cpu_s=8, memory_mb=128, max_processes=4),
    expected="the run never holds more than memory_mb + 64 MB in RAM and swap together (it ends `memory`)",
    outside=lambda ctx: meminfo("SwapTotal", "SwapFree"),
    during=_meminfo_during,
    judge=judge_swap,
)

# ---- host-work: work the host does for the run, outside its accounting ----------------------------


def _setup_dirty(ctx):
    """Dirty page cache on a disk file system (the caller's temp dir), below the background writeback
    threshold, so that only a sync writes it out before dirty_expire_centisecs."""
    d = ctx["tmpdir"]
    typ = fs_type_of(d)
    ctx["_dirty_fs"] = typ
    ctx["_dirty_file"] = None
    if typ in (None, "tmpfs", "ramfs"):
        return
    avail_kb = meminfo("MemAvailable")["MemAvailable"]
    ratio = int(_read("/proc/sys/vm/dirty_background_ratio").strip() or 10)
    bg_bytes = int(_read("/proc/sys/vm/dirty_background_bytes").strip() or 0)
    thresh = bg_bytes or avail_kb * 1024 * ratio // 100
    size = min(256 << 20, int(thresh * 0.4)) >> 20
    ctx["_dirty_mb"] = size
    if size < 64:
        return
    p = os.path.join(d, "r3b6-dirty")
    with open(p, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(size):
            f.write(chunk)
    ctx["_dirty_file"] = p
    time.sleep(0.3)


def _teardown_dirty(ctx):
    if ctx.get("_dirty_file"):
        try:
            os.unlink(ctx["_dirty_file"])
        except OSError:
            pass


def judge_sync(b, a, res, ctx):
    obs = "dirty file %s MB on %s; host Dirty before %s kB; %s; caller wall %.1f s" % (
        ctx.get("_dirty_mb"),
        ctx.get("_dirty_fs"),
        b.get("Dirty"),
        short(res[-1]),
        ctx.get("wall", -1),
    )
    if ctx.get("wall", 0) > ctx["limits"]["wall_s"] + 3:
        return "hole", "run_python returned late (processes in uninterruptible sync?): " + obs
    if not ctx.get("_dirty_file") or b.get("Dirty", 0) < 48 * 1024:
        return "inconclusive", "could not leave enough dirty data on a disk file system: " + obs
    t0 = ctx["t_run0"][0]
    early = [v.get("Dirty") for t, v in ctx.get("during", []) if v and t <= t0 + 3.0]
    low = min(early) if early else None
    obs += "; lowest Dirty in the run's first 3 s %s kB (dirty_expire %s cs)" % (
        low,
        _read("/proc/sys/vm/dirty_expire_centisecs").strip().decode(),
    )
    if low is not None and low < 0.2 * b["Dirty"]:
        return "hole", "the run forced host-wide writeback of data it cannot see (sync/syncfs): " + obs
    return "stopped", obs


A(
    id="hw6_sync_storm",
    **{"class": "host-work"},
    description="the caller leaves fresh dirty data on a host disk file system (below the background threshold); the run calls sync() and syncfs() on bound trees in a loop for 5 s: host-wide writeback the run triggers, and processes in uninterruptible sleep at the kill",
    setup=_setup_dirty,
    teardown=_teardown_dirty,
    code=prog(r"""
fds = []
for p in ('/usr/lib', '/usr', '/dev/null'):
    try:
        fds.append(os.open(p, os.O_RDONLY))
    except OSError:
        pass
n = 0
end = time.monotonic() + 5
while time.monotonic() < end:
    libc.sync()
    for fd in fds:
        libc.syncfs(fd)
        libc.fsync(fd)
    n += 1
say('syncs', n)
result = n
"""),
    limits=L(wall_s=8, cpu_s=6, memory_mb=256, max_processes=1),
    expected="the host's dirty data is not written out early by the run (sync/syncfs confined or refused); run_python returns by wall_s + 3",
    outside=lambda ctx: meminfo("Dirty", "Writeback"),
    during=lambda ctx: meminfo("Dirty", "Writeback"),
    judge=judge_sync,
)


def disk_read_sectors(ctx):
    """Sectors read per whole block device (host /sys/block)."""
    try:
        whole = set(os.listdir("/sys/block"))
    except OSError:
        whole = None
    out = {}
    for line in _read("/proc/diskstats", 1 << 20).decode().splitlines():
        p = line.split()
        if len(p) > 6 and (whole is None or p[2] in whole):
            out[p[2]] = int(p[5])
    return out


def judge_direct_io(b, a, res, ctx):
    r = res[-1]
    m = re.search(r"^READ (\d+) (\w+)", (r.stdout or "") if r is not None else "", re.M)
    claimed = int(m.group(1)) if m else 0
    host = max([a.get(k, 0) - b.get(k, 0) for k in a] or [0]) * 512
    obs = "the run read %.0f MB (%s); the busiest host disk read %.0f MB during it; %s" % (
        claimed / 2**20,
        m.group(2) if m else "?",
        host / 2**20,
        short(r),
    )
    if claimed >= 512 << 20:
        if host >= claimed * 0.5:
            return "hole", "disk reads outside any bound (512 MB in 8 s would be 64 MB/s): " + obs
        return "inconclusive", "the reads did not show on a host disk (cached or remote): " + obs
    return "stopped", obs


A(
    id="hw6_direct_io_disk",
    **{"class": "host-work"},
    description="the run reads 1 MB blocks at random offsets of big bound host files with O_DIRECT (no page cache, so nothing is charged to its memory cgroup and little CPU is used) for 8 s; the caller counts the host disks' sectors read",
    code=prog(r"""
import mmap, random, sys, sysconfig
found, stop_at = [], time.monotonic() + 1.5
for d in (sysconfig.get_paths()['purelib'], '/usr/lib', '/usr/share', '/usr/lib64', sys.prefix):
    for root, dirs, files in os.walk(d):
        for fn in files:
            p = os.path.join(root, fn)
            try:
                if os.path.getsize(p) >= 64 << 20:
                    found.append(p)
            except OSError:
                pass
        if time.monotonic() > stop_at or len(found) > 20:
            break
fds, mode = [], 'direct'
for p in found[:16]:
    try:
        fds.append((os.open(p, os.O_RDONLY | os.O_DIRECT), os.path.getsize(p)))
    except OSError as e:
        say('odirect', e)
if not fds:
    mode = 'buffered'
    fds = [(os.open(p, os.O_RDONLY), os.path.getsize(p)) for p in found[:16]]
buf = mmap.mmap(-1, 1 << 20)
rnd = random.Random()
total = 0
end = time.monotonic() + 8
while fds and time.monotonic() < end:
    fd, size = rnd.choice(fds)
    off = rnd.randrange(0, max(1, size - (1 << 20))) & ~4095
    try:
        total += os.preadv(fd, [buf], off)
    except OSError as e:
        say('read', e)
        break
say('READ', total, mode)
result = total
"""),
    limits=L(wall_s=13, cpu_s=8, memory_mb=256, max_processes=1),
    expected="the run's disk reads are bounded (an I/O limit: at most ~512 MB in 8 s) or O_DIRECT is refused",
    outside=disk_read_sectors,
    judge=judge_direct_io,
)


def _kmsg_and_audit_setup(ctx):
    kmsg_setup(ctx)
    p = "/var/log/audit/audit.log"
    ctx["_audit_off"] = os.path.getsize(p) if os.path.exists(p) else None


def _audit_count(ctx):
    p = "/var/log/audit/audit.log"
    if ctx.get("_audit_off") is None or not os.path.exists(p):
        return None
    with open(p, "rb") as f:
        f.seek(ctx["_audit_off"])
        return f.read().count(ctx["marker"].encode())


def judge_audit(b, a, res, ctx):
    n_kmsg, n_audit = a
    obs = "%s kernel log records and %s audit log records name the run (sample %s); %s" % (
        n_kmsg,
        n_audit,
        (ctx.get("_kmsg_sample") or [])[:1],
        short(res[-1]),
    )
    if n_kmsg is None and n_audit is None:
        return "inconclusive", "the caller can read neither /dev/kmsg nor an audit log: " + obs
    if (n_kmsg or 0) > 50 or (n_audit or 0) > 50:
        return "hole", "the run wrote into the host's kernel/audit log beyond a rate-limited handful: " + obs
    return "stopped", obs


A(
    id="hw6_seccomp_audit_flood",
    **{"class": "host-work"},
    description="300 children each make an i386 `int 0x80` getpid (the seccomp filter's architecture check kills, and a kill is logged by the kernel's seccomp/audit code) and the worker calls memfd_create 100,000 times (ENOSYS); the caller counts host kernel-log and audit-log records naming the run",
    setup=_kmsg_and_audit_setup,
    code=prog(
        INT80
        + r"""
n = 0
end = time.time() + 6
while n < 300 and time.time() < end and i386_getpid is not None:
    pid = os.fork()
    if pid == 0:
        name_me()
        i386_getpid()
        os._exit(0)
    os.waitpid(pid, 0)
    n += 1
say('killed children', n)
for i in range(100000):
    sc(319, b'x', 0)
result = n
"""
    ),
    limits=L(wall_s=14, cpu_s=10, memory_mb=256, max_processes=2),
    expected="at most a rate-limited handful (<= 50) of host kernel/audit log records name the run",
    outside=lambda ctx: (kmsg_new(ctx), _audit_count(ctx)),
    judge=judge_audit,
)


def _prewarm(ctx):
    from verifiers.sandbox import isolation_level

    isolation_level()


def judge_caller_cpu(b, a, res, ctx):
    sup_cpu, sup_mb = supervisor_peak(ctx)
    obs = (
        "the caller's own CPU during the run %.2f s, the supervisor's %.2f s (peak %.0f MB), the run's "
        "processes %.2f s; cpu_s %s; %s; caller wall %.1f s"
        % (
            ctx.get("self_cpu", -1),
            sup_cpu,
            sup_mb,
            ctx.get("children_cpu", -1),
            ctx["limits"]["cpu_s"],
            short(res[-1]),
            ctx.get("wall", -1),
        )
    )
    if ctx.get("self_cpu", 0) > 2.0:
        return "hole", "the caller spent CPU on output it discards, outside the run's budget: " + obs
    if sup_cpu > ctx["limits"]["cpu_s"] or sup_mb > 200:
        return "hole", "the supervisor (outside the run's cgroups) worked for the run beyond its budget: " + obs
    if ctx.get("wall", 0) > ctx["limits"]["wall_s"] + 3:
        return "hole", "run_python returned late: " + obs
    return "stopped", obs


A(
    id="hw6_caller_reads_output",
    **{"class": "host-work"},
    description="5 processes write 1 MB chunks to stdout and stderr as fast as they can for 8 s (output_kb 64): the caller's own CPU (no monitor thread) and the supervisor's, spent reading output the caller throws away",
    setup=_prewarm,
    monitor=False,
    during=supervisor_stats,
    during_period=0.5,
    code=prog(r"""
chunk = b'y' * (1 << 20)
for k in range(4):
    if os.fork() == 0:
        name_me()
        end = time.monotonic() + 8
        while time.monotonic() < end:
            try:
                os.write(1 + (k & 1), chunk)
            except OSError:
                break
        os._exit(0)
end = time.monotonic() + 8
while time.monotonic() < end:
    try:
        os.write(1, chunk)
    except OSError:
        break
result = 1
"""),
    limits=L(wall_s=10, cpu_s=4, memory_mb=256, max_processes=4, output_kb=64),
    expected="the host spends well under a second of CPU on the run's output beyond output_kb (it stops reading, the writers get EPIPE)",
    judge=judge_caller_cpu,
)

A(
    id="hw6_report_pipe_flood",
    **{"class": "host-work"},
    description='the worker and 3 children write guard-form "R" note lines and garbage into every non-stdio pipe (the report channel) for 6 s: the supervisor, outside the run\'s cgroups, reads and parses them (its CPU and peak memory sampled from the host)',
    monitor=False,
    setup=_prewarm,
    during=supervisor_stats,
    during_period=0.5,
    code=prog(r"""
import stat as _st
fds = []
for fd in range(3, 256):
    try:
        if _st.S_ISFIFO(os.fstat(fd).st_mode):
            fds.append(fd)
    except OSError:
        pass
say('pipes', fds)
lines = [b'R calling native code is refused in the sandbox (x)\n' * 20000, b'R ' + b'z' * 1000000 + b'\n',
         (b'{"a": [' * 1000) + b'\n']
def flood():
    end = time.monotonic() + 6
    i = 0
    while time.monotonic() < end:
        for fd in fds:
            try:
                os.write(fd, lines[i % len(lines)])
            except OSError:
                pass
        i += 1
for k in range(3):
    if os.fork() == 0:
        name_me()
        flood()
        os._exit(0)
flood()
result = 1
"""),
    limits=L(wall_s=10, cpu_s=8, memory_mb=256, max_processes=3),
    expected="the supervisor uses less CPU than cpu_s and less than 200 MB on the flood (it stops reading at its cap); run_python returns by wall_s + 3",
    judge=judge_caller_cpu,
)

# ---- accounting: CPU and process limits the run can dodge -----------------------------------------


def judge_rlimits(b, a, res, ctx):
    r = res[-1]
    out = (r.stdout or "") if r is not None else ""
    raised = re.findall(r"^RAISED (RLIMIT_\w+) (\S+) (\S+)", out, re.M)
    bad = [x for x in raised if x[0] in ("RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE")]
    m = re.search(r"^FDS (\d+)", out, re.M)
    k = re.search(r"^KIDS (\d+)", out, re.M)
    peak = ctx.get("monitor_peak") or 0
    cap = ctx["limits"]["max_processes"] + 1
    obs = "raised %s; fds opened %s; children %s; host peak of the run's named processes %d (limit %d); %s" % (
        raised,
        m.group(1) if m else "?",
        k.group(1) if k else "?",
        peak,
        cap,
        short(r),
    )
    left = leftover_diff(b, a)
    if left:
        return "hole", obs + "; left: " + "; ".join(left)
    if peak > cap or (m and int(m.group(1)) > 260) or bad:
        return "hole", "a limit the sandbox sets was raised or exceeded by the run: " + obs
    return "stopped", obs


A(
    id="ac6_rlimit_soft_to_hard",
    **{"class": "accounting"},
    description="read every rlimit, raise each soft limit to its hard limit (not CPU: round 4), then open fds until EMFILE and fork sleeping children until EAGAIN (max_processes 2); the host counts the run's processes",
    code=prog(r"""
import resource
for n in sorted(x for x in dir(resource) if x.startswith('RLIMIT_')):
    r = getattr(resource, n)
    try:
        s, h = resource.getrlimit(r)
    except (ValueError, OSError):
        continue
    say('LIMIT', n, s, h)
    if n == 'RLIMIT_CPU' or s == h:
        continue
    try:
        resource.setrlimit(r, (h, h))
        say('RAISED', n, s, h)
    except (ValueError, OSError) as e:
        say('noraise', n, e)
fds = []
while len(fds) < 5000:
    try:
        fds.append(os.open('/dev/null', os.O_RDONLY))
    except OSError:
        break
say('FDS', len(fds))
for fd in fds:
    os.close(fd)
kids = 0
for i in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        name_me()
        time.sleep(3)
        os._exit(0)
    kids += 1
say('KIDS', kids)
time.sleep(1.5)
result = kids
"""),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=2),
    expected="no limit the sandbox sets (AS, FSIZE, NOFILE, NPROC, CORE) can be raised; at most 256 fds and 1 + max_processes processes",
    judge=judge_rlimits,
)


def judge_cpu_total(b, a, res, ctx):
    r = res[-1]
    cpu = ctx.get("children_cpu", 0)
    obs = "the run's processes used %.2f CPU s (the caller's reaped descendants) against cpu_s %s; %s" % (
        cpu,
        ctx["limits"]["cpu_s"],
        calls_short(r) if r is not None and r.calls else short(r),
    )
    if r is None:
        return "inconclusive", obs
    if r.status == "ok" and all(c.status == "ok" for c in r.calls) and cpu > 2 * ctx["limits"]["cpu_s"]:
        return "hole", "the run used more than twice its CPU budget and ended ok: " + obs
    return "stopped", obs


A(
    id="ac6_sibling_cpu",
    **{"class": "accounting"},
    description="3 CLONE_PARENT siblings of the worker (children of the supervisor) ignore SIGXCPU and busy-loop while the worker sleeps 5 s and exits 0 (cpu_s 2)",
    code=prog(r"""
for k in range(3):
    r, e = sc(56, 0x8000 | 17, 0, 0, 0, 0)
    if r == 0:
        name_me()
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        end = time.monotonic() + 6
        while time.monotonic() < end:
            pass
        os._exit(0)
    say('sibling', r, e)
time.sleep(5)
result = 1
"""),
    limits=L(wall_s=10, cpu_s=2, memory_mb=256, max_processes=3),
    expected="status timeout (the siblings' CPU counts); nothing left",
    judge=lambda b, a, res, ctx: (
        ("hole", "left: %s" % leftover_diff(b, a)) if leftover_diff(b, a) else judge_cpu_total(b, a, res, ctx)
    ),
)

A(
    id="ac6_calls_cpu_total",
    **{"class": "accounting"},
    description="a fork-server run (cpu_s 3): each of 10 calls burns CPU in 4 threads (memset in C, no GIL) for 0.55 s, under its own per-process RLIMIT_CPU: does cpu_s bound the run's total CPU?",
    code=prog(r"""
BUF = ctypes.create_string_buffer(4 << 20)
def burn(sec):
    end = time.monotonic() + sec
    def w():
        while time.monotonic() < end:
            libc.memset(BUF, 0, 4 << 20)
    ts = [threading.Thread(target=w) for _ in range(3)]
    for t in ts:
        t.start()
    w()
    for t in ts:
        t.join()
"""),
    calls=lambda ctx: dict(
        code=(
            "import resource\nburn(0.55)\nr = resource.getrusage(resource.RUSAGE_SELF)\n"
            "result = round(r.ru_utime + r.ru_stime, 2)\n"
        ),
        inputs=[{"i": k} for k in range(10)],
        seconds=2.0,
        start_s=5.0,
    ),
    limits=L(wall_s=30, cpu_s=3, memory_mb=256, max_processes=4),
    expected="the run's total CPU stays within cpu_s, or the status says the budget was exceeded (note: docs say fork-server runs are judged per call)",
    judge=judge_cpu_total,
)

_WORK = r"""
def work():
    s = 0
    for i in range(2500000):
        s += i * i
    return s
"""


def _setup_starve(ctx):
    from verifiers.sandbox import Calls, SandboxLimits, run_python

    ctx["ncpu"] = len(os.sched_getaffinity(0))
    r = run_python(
        _WORK,
        SandboxLimits(wall_s=30, cpu_s=20, memory_mb=256, max_processes=1),
        calls=Calls("result = work() % 7", tuple({"i": k} for k in range(4)), 10.0, 10.0),
    )
    secs = sorted(c.seconds for c in r.calls if c.status == "ok" and c.seconds)
    ctx["solo_s"] = secs[len(secs) // 2] if secs else None
    ctx["call_limit_s"] = round(max(0.6, 2.2 * ctx["solo_s"]), 2) if secs else 10.0


def judge_starve(b, a, res, ctx):
    r = res[0]
    obs = "solo call %.3f s, limit %.2f s, %d CPUs; victim %s; burner %s" % (
        ctx.get("solo_s") or -1,
        ctx.get("call_limit_s", -1),
        ctx.get("ncpu", 0),
        calls_short(r),
        short(res[-1]),
    )
    if not ctx.get("solo_s"):
        return "inconclusive", "no solo baseline: " + obs
    if ctx.get("ncpu", 0) > 8:
        return "inconclusive", "more CPUs than the burner may use (8 processes): " + obs
    if r is None or not r.calls:
        return "inconclusive", "the victim run gave no calls: " + obs
    secs = [c.seconds for c in r.calls if c.seconds]
    obs += "; victim call seconds %s" % [round(s, 3) for s in secs]
    if any(c.status == "timeout" for c in r.calls):
        return "hole", "a concurrent run's CPU use made another run's calls time out: " + obs
    return "stopped", obs


A(
    id="ac6_starve_concurrent",
    **{"class": "accounting"},
    description="two runs at once: an honest fork-server run whose calls have 2.2x their solo time (measured just before), and a run that busy-loops in 8 processes (SIGXCPU ignored) for 12 s: does one run's CPU use change another's statuses?",
    concurrent=True,
    setup=_setup_starve,
    code=prog(_WORK, prelude=False),
    calls=lambda ctx: dict(
        code="result = work() % 7", inputs=[{"i": k} for k in range(6)], seconds=ctx["call_limit_s"], start_s=10.0
    ),
    receiver=prog(r"""
child = False
for k in range(7):
    if os.fork() == 0:
        child = True
        break
name_me()
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
end = time.monotonic() + 12
while time.monotonic() < end:
    pass
if child:
    os._exit(0)
result = 1
"""),
    limits=L(wall_s=20, cpu_s=40, memory_mb=256, max_processes=8),
    expected="the honest run's calls all end ok (each run's CPU is confined so that it cannot starve another)",
    judge=judge_starve,
)

# ---- fork-server: the start or a call working on after its time ------------------------------------

_SH = r"""
import mmap, os, time
SH = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
"""

_READ_SH = 'time.sleep(1.2)\nresult = bytes(SH[:48]).strip().decode() or "empty"\n'


def judge_fs(tag):
    def judge(b, a, res, ctx):
        r = res[-1]
        left = leftover_diff(b, a)
        if left:
            return "hole", "%s; left: %s" % (calls_short(r), "; ".join(left))
        vals = values_of(r)
        if any(tag in (v or "") for v in vals):
            return "hole", "a call returned work done after its start or its call had ended (%s): %s" % (
                tag,
                calls_short(r),
            )
        if run_errors(ctx):
            return "hole", "run_python raised in the caller: %s" % run_errors(ctx)
        return "stopped", calls_short(r)

    return judge


A(
    id="fs6_server_thread",
    **{"class": "fork-server"},
    description="the start leaves a thread in the serving worker that computes for 2.5 s into a shared mapping (no extra process); the calls (forks of the worker) sleep 1.2 s and return what the thread made",
    code=prog(
        _SH
        + r"""
import threading
def bg():
    end = time.monotonic() + 2.5
    n = 0
    while time.monotonic() < end:
        n += 1
    SH[:48] = ('THREAD-DONE %d' % n).encode().ljust(48, b' ')
threading.Thread(target=bg, daemon=True).start()
""",
        prelude=False,
    ),
    calls=lambda ctx: dict(code=_READ_SH, inputs=[{"i": k} for k in range(4)], seconds=3.0, start_s=1.0),
    limits=L(wall_s=20, cpu_s=12, memory_mb=256, max_processes=3),
    expected="no call sees work done by the start after start_s (its threads are stopped with the start)",
    judge=judge_fs("THREAD-DONE"),
)

A(
    id="fs6_server_sigalrm",
    **{"class": "fork-server"},
    description="the start arms a 50 ms interval timer whose SIGALRM handler computes 30 ms in the serving worker each time (for 3 s, while the worker waits for calls); the calls return the handler's progress",
    code=prog(
        _SH
        + r"""
import signal
_T = time.monotonic()
_N = [0]
def _h(sig, frm):
    if time.monotonic() - _T > 3.5:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return
    end = time.monotonic() + 0.03
    while time.monotonic() < end:
        _N[0] += 1
    SH[:48] = ('ALRM-WORK %d at %.2f s' % (_N[0], time.monotonic() - _T)).encode().ljust(48, b' ')
signal.signal(signal.SIGALRM, _h)
signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
""",
        prelude=False,
    ),
    calls=lambda ctx: dict(code=_READ_SH, inputs=[{"i": k} for k in range(4)], seconds=3.0, start_s=1.0),
    limits=L(wall_s=20, cpu_s=12, memory_mb=256, max_processes=2),
    expected="no call sees work the start's timer did after start_s",
    judge=lambda b, a, res, ctx: judge_fs_alrm(b, a, res, ctx),
)


def judge_fs_alrm(b, a, res, ctx):
    r = res[-1]
    late = []
    for v in values_of(r):
        m = re.search(r"ALRM-WORK (\d+) at ([0-9.]+) s", v or "")
        if m and float(m.group(2)) > 1.2:
            late.append(v)
    if late:
        return "hole", "the serving worker's timer kept computing after the start: %s; %s" % (late, calls_short(r))
    return judge_fs("\x00never")(b, a, res, ctx)


A(
    id="fs6_call_leaves_helper",
    **{"class": "fork-server"},
    description="call 0 forks a helper and returns at once; the helper computes 2.5 s into the start's shared mapping and sleeps; calls 1-3 return what it made",
    code=prog(_SH),
    calls=lambda ctx: dict(
        code=(
            "if i == 0:\n    if os.fork() == 0:\n        name_me()\n        end = time.monotonic() + 2.5\n        n = 0\n"
            "        while time.monotonic() < end:\n            n += 1\n"
            "        SH[:48] = ('CALLHELPER-DONE %d' % n).encode().ljust(48, b' ')\n        time.sleep(30)\n"
            "        os._exit(0)\n    result = 'started'\nelse:\n"
            + "".join("    " + x + "\n" for x in _READ_SH.splitlines())
        ),
        inputs=[{"i": k} for k in range(4)],
        seconds=3.0,
        start_s=3.0,
    ),
    limits=L(wall_s=20, cpu_s=12, memory_mb=256, max_processes=3),
    expected="a call's processes end with the call: no later call sees the helper's work; nothing left",
    judge=judge_fs("CALLHELPER-DONE"),
)

A(
    id="fs6_call_lingers_after_report",
    **{"class": "fork-server"},
    description="call 0 replaces os._exit, posix._exit and sys.exit and registers atexit with a function that computes 2.5 s into the shared mapping after the driver has sent the call's result; calls 1-3 return it",
    code=prog(_SH),
    calls=lambda ctx: dict(
        code=(
            "if i == 0:\n    import sys, atexit, posix\n    _real_exit = posix._exit\n"
            "    def _linger(*a, **k):\n        end = time.monotonic() + 2.5\n        n = 0\n"
            "        while time.monotonic() < end:\n            n += 1\n"
            "        SH[:48] = ('LINGER-DONE %d' % n).encode().ljust(48, b' ')\n        _real_exit(0)\n"
            "    os._exit = _linger\n    posix._exit = _linger\n    sys.exit = _linger\n    atexit.register(_linger)\n"
            "    result = 'patched'\nelse:\n" + "".join("    " + x + "\n" for x in _READ_SH.splitlines())
        ),
        inputs=[{"i": k} for k in range(4)],
        seconds=3.0,
        start_s=3.0,
    ),
    limits=L(wall_s=20, cpu_s=12, memory_mb=256, max_processes=3),
    expected="a call's process is stopped once its result is read: no later call sees work it did after reporting",
    judge=judge_fs("LINGER-DONE"),
)

A(
    id="fs6_start_sibling_helper",
    **{"class": "fork-server"},
    description="the start makes a CLONE_PARENT sibling of the worker (a child of the supervisor) that computes 2.5 s into the shared mapping after start_s and sleeps; the calls return what it made",
    code=prog(
        _SH
        + r"""
r, e = sc(56, 0x8000 | 17, 0, 0, 0, 0)
if r == 0:
    name_me()
    end = time.monotonic() + 2.5
    n = 0
    while time.monotonic() < end:
        n += 1
    SH[:48] = ('SIBLING-DONE %d' % n).encode().ljust(48, b' ')
    time.sleep(30)
    os._exit(0)
say('sibling', r, e)
"""
    ),
    calls=lambda ctx: dict(code=_READ_SH, inputs=[{"i": k} for k in range(4)], seconds=3.0, start_s=1.5),
    limits=L(wall_s=20, cpu_s=12, memory_mb=256, max_processes=3),
    expected="no call sees work done after start_s by a process the start made (siblings included); nothing left",
    judge=lambda b, a, res, ctx: judge_sibling_helper(b, a, res, ctx),
)


def judge_sibling_helper(b, a, res, ctx):
    v = judge_fs("SIBLING-DONE")(b, a, res, ctx)
    if v[0] == "hole":
        return v
    div, cgs, n = ns_divergence(ctx)
    if div or len(cgs) > 1:
        return "hole", "run processes in different namespaces or memory cgroups (host view): %s %s; %s" % (
            div,
            cgs,
            v[1],
        )
    return v


# ---- status-records: what the caller records about the run ----------------------------------------


def judge_oom_refusal(b, a, res, ctx):
    r = res[-1]
    out = (r.stdout or "") if r is not None else ""
    obs = "%s; stdout %r" % (short(r), out[-300:])
    if r is None:
        return "inconclusive", "no result"
    if r.status == "refused":
        return "stopped", obs
    if "calling ptrace" not in out:
        return "inconclusive", "the run ended before its denied call (the OOM ended it): " + obs
    if "refused" in (r.reason or "") and "ptrace" in (r.reason or ""):
        return "stopped", "the reason names the refusal: " + obs
    return "hole", "a denied call made after a child's OOM kill is not reported (status %s): %s" % (r.status, obs)


A(
    id="st6_oom_then_refusal",
    **{"class": "status-records"},
    description="3 children touch 100 MB each at memory_mb 128 (one or more are OOM-killed by the run's cgroup); the worker reaps them and then makes a denied call (ptrace): which status wins?",
    code=prog(r"""
kids = []
for k in range(3):
    pid = os.fork()
    if pid == 0:
        name_me()
        try:
            blob = b'\x01' * (100 << 20)
            time.sleep(3)
        except MemoryError:
            say('memerr', k)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    say('kid', pid, os.waitpid(pid, 0))
time.sleep(0.2)
say('calling ptrace')
say('ptrace', sc(101, 0, 0, 0, 0))
result = 1
"""),
    limits=L(wall_s=15, cpu_s=8, memory_mb=128, max_processes=4),
    expected="status refused (a denied call is never hidden behind an earlier memory event)",
    judge=judge_oom_refusal,
)


def judge_refusal_at_wall(b, a, res, ctx):
    r = res[-1]
    out = (r.stdout or "") if r is not None else ""
    m = re.search(r"^CALL_MONO ([0-9.]+)", out, re.M)
    deadline = ctx["t_run0"][0] + ctx["limits"]["wall_s"]
    obs = "%s; stdout %r" % (short(r), out[-200:])
    if r is None:
        return "inconclusive", "no result"
    if r.status == "refused":
        return "stopped", obs
    if not m:
        return "inconclusive", "the run printed no call time: " + obs
    margin = deadline - float(m.group(1))
    obs = "the denied call was made %.3f s before the caller's deadline; " % margin + obs
    if r.status == "timeout" and margin >= 0.02:
        return "hole", "a denied call made before wall_s was reported as a timeout: " + obs
    return "inconclusive", obs


A(
    id="st6_refusal_at_wall",
    **{"class": "status-records"},
    description="the worker reads the supervisor's start time (/proc/1/stat, boot clock) and makes a denied call (ptrace) 60 ms before wall_s ends; the caller compares the call's time (printed just before it) with its own deadline",
    code=prog(r"""
hz = os.sysconf('SC_CLK_TCK')
st = open('/proc/1/stat').read()
sup_start = int(st[st.rindex(')') + 2:].split()[19]) / hz
boot = lambda: time.clock_gettime(time.CLOCK_BOOTTIME)
target = sup_start + @WALL_S@ - 0.06
say('sup_start %.3f now %.3f target in %.3f s' % (sup_start, boot(), target - boot()))
while boot() < target - 0.01:
    time.sleep(0.002)
while boot() < target:
    pass
say('CALL_MONO %.4f' % time.monotonic())
sc(101, 0, 0, 0, 0)
time.sleep(5)
"""),
    setup=lambda ctx: ctx.update(wall_s=str(ctx["limits"]["wall_s"])),
    limits=L(wall_s=3, cpu_s=2, memory_mb=256, max_processes=1),
    expected="status refused (a denied call before the wall clock ended is reported as a refusal, not a timeout)",
    judge=judge_refusal_at_wall,
)

_FORGED = [
    "a system call was refused by the kernel's seccomp filter: ptrace (reported by the kernel to the supervisor, "
    "which ended the run)",
    "the run's memory cgroup (128 MB + 64 MB) was full: the kernel's OOM killer ended the run",
    "wall-clock limit of 5.0 s reached (the host's clock); the run was ended",
]


def judge_note_forgery(b, a, res, ctx):
    r = res[-1]
    if r is None:
        return "inconclusive", "no result"
    obs = short(r) + "; full reason %r" % (r.reason or "")[:600]
    if r.status in ("refused", "memory", "timeout"):
        return "hole", "the run forged a supervisor status: " + obs
    found = [
        f[:40]
        for f in ("refused by the kernel's seccomp filter", "memory cgroup", "wall-clock limit")
        if f in (r.reason or "")
    ]
    if found:
        return "hole", "low severity: the reason of a %s run carries supervisor texts the run wrote (%s): %s" % (
            r.status,
            found,
            obs,
        )
    return "stopped", obs


A(
    id="st6_note_detail_forgery",
    **{"class": "status-records"},
    description="guard refusals whose details are the run's own text (a file name, a library name, a command) made of the supervisor's refusal, OOM and wall-clock sentences, caught; the run ends ok",
    code=prog(
        r"""
import os
FORGED = %r
for t in FORGED:
    for f in (lambda: open('/' + t, 'w'), lambda: __import__('ctypes').CDLL(t), lambda: os.system(t),
              lambda: __import__('subprocess').Popen([t]), lambda: os.open('/' + t, os.O_WRONLY | os.O_CREAT)):
        try:
            f()
        except BaseException:
            pass
result = 1
"""
        % (_FORGED,),
        prelude=False,
    ),
    expected="status ok and a reason that carries none of the supervisor's sentences (a note's detail is dropped, cut or clearly quoted)",
    judge=judge_note_forgery,
)

_HOSTILE = [b"a) Z 1 1 1 1 1", b"x\n(y) R 0 0", b"\x1b]0;t\x07", b"(", b") S 1"]


def _hostile_left(ctx):
    n = []
    for p in os.listdir("/proc"):
        if p.isdigit() and _read("/proc/%s/comm" % p).rstrip(b"\n") in [h[:15] for h in _HOSTILE]:
            n.append(int(p))
    return dict(leftovers(ctx), hostile=n)


A(
    id="st6_hostile_comm_names",
    **{"class": "status-records"},
    description='children named (PR_SET_NAME) "a) Z 1 1 1 1 1", a newline, a terminal escape, "(" and ") S 1" (what breaks a naive /proc/<pid>/stat parser) sleep, a setsid survivor ignores TERM, then the worker makes a denied call',
    code=prog(
        r"""
for nm in %r:
    if os.fork() == 0:
        libc.prctl(15, nm, 0, 0, 0)
        time.sleep(30)
        os._exit(0)
if os.fork() == 0:
    os.setsid()
    name_me()
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(60)
    os._exit(0)
time.sleep(0.5)
say('ptrace', sc(101, 0, 0, 0, 0))
result = 1
"""
        % (_HOSTILE,)
    ),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=7),
    expected="status refused, a visible one-line reason, no process of the run left (whatever its name)",
    outside=_hostile_left,
    judge=lambda b, a, res, ctx: (
        ("hole", "processes with hostile names left: %s; %s" % (a["hostile"], short(res[-1])))
        if set(a["hostile"]) - set(b["hostile"])
        else ("hole", "; ".join(visible_problems(res[-1])) + "; " + short(res[-1]))
        if res[-1] is not None and visible_problems(res[-1])
        else judge_refused()(b, a, res, ctx)
    ),
)


def judge_arch_kill(b, a, res, ctx):
    r = res[-1]
    out = (r.stdout or "") if r is not None else ""
    ran = re.findall(r"^CHILD (\w+) returned (-?\d+)", out, re.M)
    kids = re.findall(r"^KID (\w+) (signal|exit) (\d+)", out, re.M)
    obs = "children %s, returned %s; %s" % (kids, ran, short(r))
    if any(k == "i386" and int(v) > 0 for k, v in ran) or any(k == "x32" and int(v) >= 0 for k, v in ran):
        return "hole", "a syscall through another ABI ran: " + obs
    if r is None:
        return "inconclusive", "no result"
    if not kids:
        return "inconclusive", "no child reported: " + obs
    killed = [k for k, how, n in kids if how == "signal" and n == "31"]
    if killed and r.status == "ok" and not re.search(r"SIGSYS|seccomp|refused by the kernel", r.reason or ""):
        return "hole", "processes killed by the seccomp filter (%s), the run reported ok with no refusal: %s" % (
            killed,
            obs,
        )
    return "stopped", obs


A(
    id="st6_arch_kill_in_child",
    **{"class": "status-records"},
    description="a child makes an i386 `int 0x80` getpid, another an x32 getpid (the filter's architecture check); the worker reaps them, prints how they ended and exits 0",
    code=prog(
        INT80
        + r"""
for kind in ('i386', 'x32'):
    pid = os.fork()
    if pid == 0:
        name_me()
        if kind == 'i386':
            r = i386_getpid() if i386_getpid else -2
        else:
            r = sc(0x40000000 + 39)[0]
        say('CHILD', kind, 'returned', r)
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        say('KID', kind, 'signal', os.WTERMSIG(st))
    else:
        say('KID', kind, 'exit', os.WEXITSTATUS(st))
result = 1
"""
    ),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=2),
    expected="status refused or killed, naming the seccomp filter or SIGSYS (a process the filter killed is not an ok run)",
    judge=judge_arch_kill,
)

# ---- ns-visibility: namespaces and mounts through new kernel interfaces ----------------------------


def host_mount_points(ctx):
    return sorted(
        {
            line.split()[4]
            for line in _read("/proc/self/mountinfo", 1 << 22).decode(errors="replace").splitlines()
            if len(line.split()) > 4
        }
    )


def judge_listmount(b, a, res, ctx):
    r = res[-1]
    out = (r.stdout or "") if r is not None else ""
    own = set(re.findall(r"^OWNMP (\S+)", out, re.M))
    seen = set(re.findall(r"^MP (\S+)", out, re.M))
    foreign = re.findall(r"^(FOREIGN|STATMOUNT_FOREIGN|NSFD_\w+|PARENT_PIDNS) (.*)$", out, re.M)
    host_only = sorted((seen - own) & set(b))
    obs = "own mounts %d, statmount/listmount paths %d, host-only paths %s; %s; %s" % (
        len(own),
        len(seen),
        host_only[:8],
        foreign[:6],
        short(r),
    )
    if foreign or host_only:
        return "hole", "the run saw mounts or namespaces outside its own: " + obs
    return judge_refused()(None, None, res, ctx)[0], obs


A(
    id="ns6_listmount_nsfs",
    **{"class": "ns-visibility"},
    description="listmount/statmount (458/457) in the own mount namespace and with mnt_ns_id 1..200, statmount of unique mount ids near its own; nsfs ioctls NS_MNT_GET_NEXT/PREV, NS_GET_PARENT on its PID namespace, NS_GET_MNTNS_ID: anything of the host's or other runs' namespaces?",
    code=prog(r"""
import struct
def ns_fd(t):
    return os.open('/proc/self/ns/' + t, os.O_RDONLY)
mfd = ns_fd('mnt')
idb = ctypes.create_string_buffer(8)
own = struct.unpack('Q', idb.raw)[0] if libc.ioctl(mfd, ctypes.c_ulong(0x8008b705), idb) == 0 else 0
say('own mnt ns id', own, ctypes.get_errno())
def listmount(ns_id, n=1024):
    req = ctypes.create_string_buffer(struct.pack('IIQQQ', 32, 0, 0xffffffffffffffff, 0, ns_id), 32)
    out = (ctypes.c_uint64 * n)()
    r, e = sc(458, req, out, n, 0)
    return r, e, list(out[:max(r, 0)])
def statmount(mid, ns_id=0):
    req = ctypes.create_string_buffer(struct.pack('IIQQQ', 32, 0, mid, 0x10 | 0x20, ns_id), 32)
    buf = ctypes.create_string_buffer(8192)
    r, e = sc(457, req, buf, 8192, 0)
    return r, e, buf.raw
def paths(raw):
    return [p.decode(errors='replace') for p in re.findall(rb'/[\x21-\x7e]*', raw)]
import re
for line in open('/proc/self/mountinfo'):
    say('OWNMP', line.split()[4])
r, e, ids = listmount(0)
say('listmount own', r, e, len(ids))
own_ids = set(ids)
for mid in ids:
    r2, e2, raw = statmount(mid)
    for p in paths(raw)[:2]:
        say('MP', p)
for cand in range(1, 201):
    if cand == own:
        continue
    r, e, got = listmount(cand)
    if r > 0:
        say('FOREIGN', cand, r)
        for mid in got[:50]:
            for p in paths(statmount(mid, cand)[2])[:2]:
                say('MP', p)
if own_ids:
    lo, hi = min(own_ids), max(own_ids)
    for mid in list(range(max(1, lo - 3000), lo)) + list(range(hi + 1, hi + 3000)):
        r, e, raw = statmount(mid)
        if r == 0:
            say('STATMOUNT_FOREIGN', mid, paths(raw)[:2])
mine = os.readlink('/proc/self/ns/mnt')
for name, req in (('NEXT', 0x8010b70b), ('PREV', 0x8010b70c)):
    info = ctypes.create_string_buffer(struct.pack('IIQ', 16, 0, 0), 16)
    fd = libc.ioctl(mfd, ctypes.c_ulong(req), info)
    if fd >= 0:
        other = os.readlink('/proc/self/fd/%d' % fd)
        if other != mine:
            say('NSFD_' + name, other, struct.unpack('IIQ', info.raw))
    else:
        say('ns', name, 'errno', ctypes.get_errno())
pfd = ns_fd('pid')
fd = libc.ioctl(pfd, ctypes.c_ulong(0xb702))
if fd >= 0:
    say('PARENT_PIDNS', os.readlink('/proc/self/fd/%d' % fd))
else:
    say('parent pidns errno', ctypes.get_errno())
result = 1
"""),
    limits=L(wall_s=15, cpu_s=8, memory_mb=256, max_processes=1, output_kb=512),
    expected="only the run's own mounts and namespaces are visible (listmount/statmount of other namespaces EPERM/ENOENT, no other namespace's fd)",
    outside=host_mount_points,
    judge=judge_listmount,
)


def _setup_target(ctx):
    d = sysconfig.get_paths()["purelib"]
    p = os.path.join(d, "r3b6-%s.txt" % ctx["nonce"])
    with open(p, "w") as f:
        f.write("r3b6 target\n")
    os.chmod(p, 0o644)
    ctx["target"] = p


def _target_view(ctx):
    p = ctx["target"]
    st = os.stat(p)
    try:
        xattrs = sorted(os.listxattr(p))
    except OSError as e:
        xattrs = str(e)
    try:
        fd = os.open(p, os.O_RDONLY)
        try:
            flags = struct.unpack("l", fcntl.ioctl(fd, 0x80086601, b"\0" * 8))[0]
        finally:
            os.close(fd)
    except OSError as e:
        flags = str(e)
    with open(p, "rb") as f:
        data = f.read()
    return {
        "mode": oct(st.st_mode),
        "mtime": st.st_mtime_ns,
        "ctime": st.st_ctime_ns,
        "xattrs": xattrs,
        "flags": flags,
        "data": data,
    }


def _teardown_target(ctx):
    p = ctx.get("target")
    if p:
        try:
            fd = os.open(p, os.O_RDONLY)
            fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0))
            os.close(fd)
        except OSError:
            pass
        try:
            os.unlink(p)
        except OSError:
            pass


A(
    id="ns6_newest_syscalls",
    **{"class": "ns-visibility"},
    description="on a file the caller made in the bound venv site-packages: setxattrat/removexattrat (463/466), file_setattr (469, immutable|append), fchmodat2 (452), utimensat, writes; then open_tree_attr (467) and mount_setattr (442) clearing MOUNT_ATTR_RDONLY on its directory",
    setup=_setup_target,
    teardown=_teardown_target,
    code=prog(r"""
import struct
T = '@TARGET@'
D = os.path.dirname(T)
AT = -100
val = ctypes.create_string_buffer(b'r3b6')
args = ctypes.create_string_buffer(struct.pack('QII', ctypes.addressof(val), 4, 0), 16)
say('RET setxattrat', sc(463, AT, T.encode(), 0, b'user.r3b6', args, 16))
say('RET removexattrat', sc(466, AT, T.encode(), 0, b'user.r3b6'))
fa = ctypes.create_string_buffer(struct.pack('IIIII', 0x8 | 0x10, 0, 0, 1, 0), 24)
say('RET file_setattr', sc(469, AT, T.encode(), fa, 24, 0))
say('RET fchmodat2', sc(452, AT, T.encode(), 0o777, 0))
say('RET utimensat', sc(280, AT, T.encode(), None, 0))
for flags in (os.O_WRONLY, os.O_RDWR | os.O_APPEND, os.O_WRONLY | os.O_TRUNC):
    try:
        fd = os.open(T, flags)
        say('WROTE', flags, os.write(fd, b'R3B6'))
    except OSError as e:
        say('write', flags, e)
ma = ctypes.create_string_buffer(struct.pack('QQQQ', 0, 0x1, 0, 0), 32)
say('RET open_tree_attr', sc(467, AT, D.encode(), 1 | 0x80000, ma, 32))
say('RET mount_setattr', sc(442, AT, D.encode(), 0, ma, 32))
result = 1
"""),
    expected="the host file unchanged (mode, times, xattrs, flags, contents); every call fails or is refused",
    outside=_target_view,
    judge=lambda b, a, res, ctx: (
        ("hole", "the host file changed: %s; %s" % ({k: (b[k], a[k]) for k in a if a[k] != b[k]}, short(res[-1])))
        if {k: v for k, v in a.items() if k != "ctime"} != {k: v for k, v in b.items() if k != "ctime"}
        else judge_refused(
            stdout_has(
                r"^(RET (setxattrat|removexattrat|file_setattr|fchmodat2|utimensat|open_tree_attr|"
                r"mount_setattr) \((0|[1-9]\d*), 0\)|WROTE .*)"
            ),
            ns_check=False,
        )(b, a, res, ctx)
    ),
)

# ---- caller-env: the caller's own environment -------------------------------------------------------

_CPU_LOOP = prog(
    r"""
print([l.strip() for l in open('/proc/self/status') if l.startswith(('SigBlk', 'SigIgn'))], flush=True)
while True:
    pass
""",
    prelude=False,
)
_PTRACE = prog(r"""
print('ptrace', sc(101, 0, 0, 0, 0))
result = 1
""")


def judge_two(expect):
    """results[i].status must be expect[i] (and the value where given); run_python returns in time."""

    def judge(b, a, res, ctx):
        obs = "; ".join(short(r) for r in res) + "; caller wall %.1f s" % ctx.get("wall", -1)
        masks = sorted(
            {(f.get("SigBlk"), f.get("SigIgn")) for seq in ctx.get("monitor_tree", {}).values() for f in seq}
        )
        obs += "; run processes' (SigBlk, SigIgn) seen from the host %s" % masks[:4]
        if run_errors(ctx):
            return "hole", "run_python raised in the caller: %s; %s" % (run_errors(ctx), obs)
        for r, (st, val) in zip(res, expect):
            if r is None:
                return "hole", "a run gave no result: " + obs
            if r.status != st or (val is not None and r.value != val):
                return "hole", "the caller's environment changed a run's outcome (expected %s %s): %s" % (st, val, obs)
        if ctx.get("wall", 0) > sum(ctx["limits"]["wall_s"] + 3 for _ in res):
            return "hole", "run_python returned late: " + obs
        return "stopped", obs

    return judge


def _block_all(ctx):
    ctx["_oldmask"] = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())


A(
    id="env6_sigmask_blocked",
    **{"class": "caller-env"},
    description="the caller blocks every signal in its thread (a worker thread of a server, or a library, often does) before run_python: a CPU loop (cpu_s 2) and then a denied call; the host reads the masks the run's processes got",
    setup=_block_all,
    teardown=lambda ctx: signal.pthread_sigmask(signal.SIG_SETMASK, ctx.get("_oldmask", set())),
    code=_CPU_LOOP,
    receiver=_PTRACE,
    limits=L(wall_s=8, cpu_s=2, memory_mb=256, max_processes=1),
    expected="timeout (the CPU limit) by about cpu_s + 1, then refused: the caller's mask changes nothing",
    judge=judge_two([("timeout", None), ("refused", None)]),
)


def _ign_chld(ctx):
    ctx["_oldchld"] = signal.signal(signal.SIGCHLD, signal.SIG_IGN)


A(
    id="env6_sigchld_ignored",
    **{"class": "caller-env"},
    description="the caller ignores SIGCHLD (SIG_IGN, inherited across exec: children are reaped by the kernel); an ok run with result 42, then a denied call",
    setup=_ign_chld,
    teardown=lambda ctx: signal.signal(signal.SIGCHLD, ctx.get("_oldchld") or signal.SIG_DFL),
    code=prog("result = 42\n", prelude=False),
    receiver=_PTRACE,
    limits=L(wall_s=8, cpu_s=3, memory_mb=256, max_processes=1),
    expected="ok with value 42, then refused, as with a default SIGCHLD",
    judge=judge_two([("ok", "42"), ("refused", None)]),
)


def _setup_fifo(ctx):
    d = sysconfig.get_paths()["purelib"]
    p = os.path.join(d, "r3b6fifo-%s" % ctx["nonce"])
    os.mkfifo(p, 0o644)
    fd = os.open(p, os.O_RDWR | os.O_NONBLOCK)
    os.write(fd, ("R3B6FIFO-" + ctx["secret"] + "\n").encode() * 50)
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


A(
    id="env6_tmpdir_comma",
    **{"class": "caller-env"},
    description='the caller\'s TMPDIR has "," and ":" in its name (overlayfs option separators, if the sandbox builds paths under it); a host process holds data in a FIFO in the bound venv site-packages; the run reads the FIFO and prints its mounts',
    caller_env=lambda tmp: {"TMPDIR": os.path.join(tmp, "t,m:p")},
    setup=_setup_fifo,
    teardown=_teardown_fifo,
    code=prog(
        r"""
import os, tempfile
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
for line in open('/proc/self/mountinfo'):
    f = line.split()
    if 'site-packages' in line or ',' in f[4] or ':' in f[4]:
        print('MI', line.strip()[:300])
print('TMP', tempfile.gettempdir())
result = 1
""",
        prelude=False,
    ),
    limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=1),
    expected="the run reads nothing of the host FIFO (overlays as with a plain TMPDIR), or the run fails closed (status error); never a silent bind",
    judge=lambda b, a, res, ctx: (
        ("hole", "the run read a host process's FIFO data: %s; isolation %s" % (short(res[-1]), res[-1].isolation))
        if res[-1] is not None and ctx["secret"] in (res[-1].stdout or "")
        else (
            "stopped",
            "%s; isolation %s; stdout %r"
            % (short(res[-1]), getattr(res[-1], "isolation", None), ((res[-1].stdout or "") if res[-1] else "")[:400]),
        )
    ),
)


def _setup_memlock(ctx):
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    win = 120 << 20
    spec, left = [], 5
    for p in big_files_host(min_mb=130):
        size = os.path.getsize(p)
        off = 0
        while left and off + win <= size:
            spec.append((p, off, win))
            off += win
            left -= 1
        if not left:
            break
    for p, off, n in spec:
        with open(p, "rb", buffering=0) as f:
            f.seek(off)
            got = 0
            while got < n:
                b = f.read(4 << 20)
                if not b:
                    break
                got += len(b)
    ctx["ml_spec"] = ";".join("%s|%d|%d" % x for x in spec)
    ctx["_ml_n"] = len(spec)


def judge_memlock(b, a, res, ctx):
    if ctx.get("_ml_n", 0) < 3:
        return "inconclusive", "not enough big bound files to pin: %s" % short(res[-1])
    highs = [v.get("Mlocked") for _, v in ctx.get("during", []) if v and v.get("Mlocked") is not None]
    rise_mb = (max(highs) - b["Mlocked"]) / 1024 if highs else 0
    bound = ctx["limits"]["memory_mb"] + 64
    obs = "host Mlocked rose by up to %.0f MB during the run (bound %d MB); %s; stdout %r" % (
        rise_mb,
        bound,
        short(res[-1]),
        ((res[-1].stdout or "") if res[-1] else "")[-300:],
    )
    if rise_mb > bound + 50 and (res[-1] is None or res[-1].status != "memory"):
        return "hole", "the run pinned host page cache (charged elsewhere) beyond its memory bound: " + obs
    return "stopped", obs


A(
    id="env6_memlock_unlimited",
    **{"class": "caller-env"},
    description="the caller runs with RLIMIT_MEMLOCK unlimited (GPU/RDMA training jobs do) and has 600 MB of big bound host files in its page cache; 5 processes of the run map 120 MB windows of them and mlock them",
    setup=_setup_memlock,
    code=prog(
        RAWMAP
        + r"""
import resource
spec = [(p, int(o), int(n)) for p, o, n in (x.split('|') for x in '@ML_SPEC@'.split(';') if x)]
say('MEMLOCK', resource.getrlimit(resource.RLIMIT_MEMLOCK))
def lock(p, off, n):
    fd = os.open(p, os.O_RDONLY)
    a = rawmap(n, prot=1, flags=1, fd=fd, off=off)
    if a is None:
        return 'mmap failed %d' % ctypes.get_errno()
    r = libc.mlock(ctypes.c_void_p(a), ctypes.c_size_t(n))
    return 'mlock %d errno %d' % (r, ctypes.get_errno())
kids = []
for k, (p, off, n) in enumerate(spec[1:]):
    pid = os.fork()
    if pid == 0:
        name_me()
        say('KID', k, lock(p, off, n))
        time.sleep(4)
        os._exit(0)
    kids.append(pid)
if spec:
    say('WORKER', lock(*spec[0]))
time.sleep(4)
for pid in kids:
    os.waitpid(pid, 0)
result = 1
"""
    ),
    limits=L(wall_s=15, cpu_s=8, memory_mb=192, max_processes=4),
    expected="host Mlocked rises by at most the run's bound (memory_mb + 64 MB); the run does not inherit an unlimited RLIMIT_MEMLOCK",
    outside=lambda ctx: meminfo("Mlocked", "Unevictable"),
    during=_meminfo_during,
    judge=judge_memlock,
)

BY_ID = {a["id"]: a for a in ATTACKS}
assert len(BY_ID) == len(ATTACKS)
