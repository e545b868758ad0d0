"""Held-out sandbox round 5: attacks written blind (without reading the sandbox's code or its tests).

Same format as round 4 (heldout/sandbox_round4/attacks.py). Each attack is a dict:
  id, class, description   one line each
  code                     callable ctx -> str (the program the run executes)
  receiver                 optional second program (cross-run attacks: sender, then receiver)
  concurrent               True: code and receiver run AT THE SAME TIME (two threads of the caller)
  calls                    optional callable ctx -> dict(code, inputs, seconds, start_s) for Calls:
                           the run uses the fork server (verifiers.sandbox.Calls)
  limits                   kwargs for SandboxLimits
  expected                 what a closed wall gives
  outside                  callable ctx -> snapshot, run in the CALLER's process before and after
  during                   optional callable ctx -> value, sampled by the caller every 50 ms while the
                           run(s) go on; the samples are in ctx['during'] as (monotonic, value)
  judge                    callable (before, after, results, ctx) -> (verdict, observed)
                           verdict in {"stopped", "hole", "inconclusive"}
  setup / teardown         optional callables ctx -> None, run in the caller's process
  caller_env               optional dict: extra environment of the caller process (score.py)
  caller_cap_mb, caller_harm   as in round 4

Programs that need the kernel walls start with PRELUDE (round 4's blind DISARM of the audit hook, then
fresh `posix`/`_socket` functions; prints `R3B5_HOOK ...` first). Where the DISARM fails the program
runs with the hook in place; the outside checks still judge it.

ctx keys (score.py builds them): nonce (hex), secret, marker (process name the programs give
themselves, <= 15 chars), caller_pid, repo_dir, home, here, tmpdir, cpu, plus what each setup adds.
In program text @KEY@ is replaced by str(ctx[KEY]).

Monitors (run in the caller during the run): Monitor (round 4's: processes named with the marker,
now with their namespaces, memory cgroup, uid and capabilities) and the run's processes found by
descent from the caller (`run_tree`), which also sees processes that exec'd another program.
"""
from __future__ import annotations

import ctypes
import fcntl
import glob
import math
import mmap
import os
import random
import re
import signal
import stat
import struct
import tempfile
import threading
import time

PAGE = 4096
NS_TYPES = ('user', 'mnt', 'net', 'pid', 'uts', 'ipc', 'cgroup', 'time')

# --------------------------------------------------------------------------- the programs' prelude

PRELUDE = r'''
import sys as _sys
def _r3b5_disarm():
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

def _r3b5_fresh(name):
    import importlib.util, importlib.machinery, _imp
    if name in _sys.builtin_module_names:
        return _imp.create_builtin(importlib.machinery.ModuleSpec(name, None, origin='built-in'))
    spec = importlib.util.find_spec(name)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

R3B5_HOOK = 'untried'
try:
    R3B5_HOOK = _r3b5_disarm()
except BaseException as _e:
    R3B5_HOOK = 'failed: %r' % (_e,)
import os, time, signal, threading
try:
    _px = _r3b5_fresh('posix')
    for _n in ('fork', 'kill', 'killpg', 'setsid', 'execv', 'execve', 'posix_spawn', 'system',
               'utime', 'chmod', 'fchmod', 'fchown', 'chown', 'lchown', 'open', 'mkdir', 'setpgid',
               'nice', 'setpriority', 'sched_setscheduler', 'sched_setaffinity', 'waitpid', 'wait',
               'setuid', 'setgid', 'setgroups', 'mkfifo', 'symlink', 'truncate', 'ftruncate',
               'setxattr', 'listxattr', 'getxattr', 'link', 'pipe', 'dup2',
               'sched_setaffinity', 'preadv', 'posix_fallocate', 'chdir', 'rename'):
        if hasattr(_px, _n):
            setattr(os, _n, getattr(_px, _n))
    import socket as _socket_mod
    RAWSOCK = _r3b5_fresh('_socket')
except BaseException as _e:
    RAWSOCK = None
    R3B5_HOOK += '; fresh modules failed: %r' % (_e,)
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
    R3B5_HOOK += '; no ctypes: %r' % (_e,)
def say(*a):
    print(*a, flush=True)
say('R3B5_HOOK', R3B5_HOOK)
'''


def prog(body: str, prelude: bool = True):
    """A program: PRELUDE (or not) + body, with @KEY@ replaced from ctx."""

    def build(ctx):
        text = (PRELUDE if prelude else '') + '\n' + body
        for k, v in ctx.items():
            if isinstance(v, (str, int)):
                text = text.replace('@%s@' % k.upper(), str(v))
        return text

    return build


# --------------------------------------------------------------------------- host-side observers

def _read(path, n=1 << 16):
    try:
        with open(path, 'rb') as f:
            return f.read(n)
    except OSError:
        return b''


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
    for p in os.listdir('/proc'):
        if p.isdigit() and _read('/proc/%s/comm' % p).strip() == marker.encode():
            out.append(int(p))
    return out


def _status_field(pid, key):
    m = re.search((r'^%s:\s+(.*)$' % key).encode(), _read('/proc/%d/status' % pid), re.M)
    return m.group(1).decode(errors='replace').strip() if m else None


def proc_facts(pid):
    """Namespaces, memory cgroup, uids, capabilities of a host pid, seen from outside."""
    facts = {}
    for t in NS_TYPES:
        try:
            facts['ns_' + t] = os.readlink('/proc/%d/ns/%s' % (pid, t))
        except OSError:
            pass
    for line in _read('/proc/%d/cgroup' % pid).decode(errors='replace').splitlines():
        parts = line.split(':', 2)
        if len(parts) == 3 and ('memory' in parts[1].split(',') or (parts[0] == '0' and 'memcg' not in facts)):
            facts['memcg'] = parts[2]
    for key in ('Uid', 'CapEff', 'CapPrm', 'NSpid', 'NoNewPrivs', 'Seccomp'):
        v = _status_field(pid, key)
        if v is not None:
            facts[key] = v
    facts['comm'] = _read('/proc/%d/comm' % pid).decode(errors='replace').strip()
    return facts


def run_tree(root_pid):
    """Pids below root_pid (its descendants) at depth >= 2 that are not the init of a PID namespace:
    the run's own processes (the worker and what it starts), whatever they are named."""
    parent = {}
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        st = _read('/proc/%s/stat' % p, 4096).decode(errors='replace')
        try:
            parent[int(p)] = int(st[st.rindex(')') + 2:].split()[1])
        except (ValueError, IndexError):
            pass
    out = []
    for pid in parent:
        depth, q = 0, pid
        while q in parent and q != root_pid and depth < 64:
            q = parent[q]
            depth += 1
        if q == root_pid and depth >= 2:
            nspid = (_status_field(pid, 'NSpid') or '').split()
            if nspid and nspid[-1] == '1' and len(nspid) > 1:
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
                    if f.get('comm'):
                        self.facts.setdefault(p, []).append(f)
                        del self.facts[p][:-4]
                if self.tree_root:
                    for p in run_tree(self.tree_root)[:60]:
                        f = proc_facts(p)
                        if f.get('comm'):
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
    facts = ctx.get('monitor_facts', {})
    seen = {}
    for pid, seq in facts.items():
        for f in seq:
            for t in NS_TYPES:
                if f.get('ns_' + t):
                    seen.setdefault(t, set()).add(f['ns_' + t])
    div = {t: sorted(v) for t, v in seen.items() if len(v) > 1}
    cgs = sorted({f.get('memcg') for seq in facts.values() for f in seq if f.get('memcg')})
    return div, cgs, len(facts)


def caller_cgroup_dirs():
    out = []
    for line in _read('/proc/self/cgroup').decode().splitlines():
        hid, ctrls, path = line.split(':', 2)
        if 'memory' in ctrls.split(',') or (hid == '0' and ctrls == ''):
            base = '/sys/fs/cgroup/memory' + path if 'memory' in ctrls else '/sys/fs/cgroup/unified' + path
            try:
                out += sorted(os.path.join(base, d) for d in os.listdir(base)
                              if os.path.isdir(os.path.join(base, d)))
            except OSError:
                pass
    return out


def leftovers(ctx):
    """Generic host snapshot: processes named by the run, scratch dirs, mounts, cgroups, IPC objects."""
    return {
        'marker_procs': procs_named(ctx['marker']),
        'tmp_r3': sorted(glob.glob(os.path.join(tempfile.gettempdir(), 'r3sandbox*'))),
        'mounts': sum(1 for line in _read('/proc/self/mountinfo', 1 << 22).splitlines() if b'r3sandbox' in line),
        'cgroups': caller_cgroup_dirs(),
        'sysvipc': {k: len(_read('/proc/sysvipc/' + k).splitlines()) for k in ('shm', 'msg', 'sem')},
        'devshm': sorted(os.listdir('/dev/shm')) if os.path.isdir('/dev/shm') else [],
    }


def leftover_diff(before, after):
    out = []
    if after['marker_procs']:
        out.append('processes named by the run still alive: %s' % after['marker_procs'])
    for key in ('tmp_r3', 'cgroups', 'devshm'):
        extra = sorted(set(after[key]) - set(before[key]))
        if extra:
            out.append('%s new: %s' % (key, extra[:10]))
    if after['mounts'] > before['mounts']:
        out.append('mounts mentioning r3sandbox: %d -> %d' % (before['mounts'], after['mounts']))
    for k in ('shm', 'msg', 'sem'):
        if after['sysvipc'][k] > before['sysvipc'][k]:
            out.append('SysV %s: %d -> %d' % (k, before['sysvipc'][k], after['sysvipc'][k]))
    return out


def with_leftovers(outside):
    """An outside check that also takes the generic leftovers snapshot."""

    def snap(ctx):
        return {'own': outside(ctx), 'left': leftovers(ctx)}

    return snap


def text_of(res):
    return '\n'.join(str(getattr(res, k, '') or '') for k in ('stdout', 'stderr', 'value', 'reason'))


def short(res):
    if res is None:
        return 'no result'
    return 'status=%s source=%s rc=%s reason=%r' % (res.status, getattr(res, 'source', '?'), res.returncode,
                                                     (res.reason or '')[:160])


def run_errors(ctx):
    return ctx.get('run_python_errors') or []


BAD_CHARS = re.compile('[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]')


# --------------------------------------------------------------------------- generic judges

def judge_refused(extra_hole=None, ns_check=True):
    """The wall: the denied call ends the run as `refused` (the supervisor's observation), no namespace
    of the run's own appears (host view), nothing is left. extra_hole(results, ctx) -> str or None."""

    def judge(before, after, results, ctx):
        r = results[-1]
        obs = short(r)
        if isinstance(before, dict) and 'marker_procs' in before:
            left = leftover_diff(before, after)
            if left:
                return 'hole', obs + '; left: ' + '; '.join(left)
        if ns_check:
            div, cgs, n = ns_divergence(ctx)
            if div:
                return 'hole', 'a run process entered namespaces of its own (host view): %s; %s' % (div, obs)
            if len(cgs) > 1:
                return 'hole', 'run processes in different memory cgroups (host view): %s; %s' % (cgs, obs)
        if extra_hole:
            why = extra_hole(results, ctx)
            if why:
                return 'hole', why + '; ' + obs
        if run_errors(ctx):
            return 'hole', 'run_python raised in the caller: %s; %s' % (run_errors(ctx), obs)
        if r is None:
            return 'inconclusive', 'no result'
        if r.status == 'refused':
            return 'stopped', obs
        if r.status == 'ok':
            return 'stopped', obs + ' (the call failed with an errno, not refused by the filter: see stdout %r)' % (
                (r.stdout or '')[-300:],)
        return 'inconclusive', obs + '; stdout tail %r' % ((r.stdout or '')[-300:],)

    return judge


def stdout_has(pattern):
    def f(results, ctx):
        for r in results:
            if r is not None:
                m = re.search(pattern, r.stdout or '', re.M)
                if m:
                    return 'the run reports %r' % m.group(0)[:200]
        return None
    return f


def judge_leftovers(max_wall=None, status_bad=()):
    def judge(before, after, results, ctx):
        extra = leftover_diff(before, after)
        r = results[-1]
        obs = short(r) + '; caller wall %.1f s' % ctx.get('wall', -1)
        if run_errors(ctx):
            return 'hole', 'run_python raised in the caller: %s; %s' % (run_errors(ctx), obs)
        if extra:
            return 'hole', obs + '; left: ' + '; '.join(extra)
        if max_wall is not None and ctx.get('wall', 0) > max_wall:
            return 'hole', obs + '; run_python held the caller beyond %s s' % max_wall
        if r is not None and r.status in status_bad:
            return 'hole', obs
        return 'stopped', obs
    return judge


def judge_secret(key='secret'):
    def judge(before, after, results, ctx):
        secret = str(ctx[key])
        seen = [i for i, r in enumerate(results) if r is not None and secret in text_of(r)]
        obs = '; '.join(short(r) for r in results)
        if seen:
            return 'hole', 'the secret appeared in run %s output; %s' % (seen, obs)
        return 'stopped', obs
    return judge


def visible_problems(r, reason_max=4000):
    bad = []
    for field in ('reason', 'value'):
        v = getattr(r, field, None) or ''
        m = BAD_CHARS.search(v)
        if m:
            bad.append('%s holds %r at %d' % (field, m.group(0), m.start()))
    if len(r.reason or '') > reason_max:
        bad.append('reason is %d chars' % len(r.reason))
    for field in ('stdout', 'stderr', 'value', 'reason'):
        v = getattr(r, field, None)
        if isinstance(v, str):
            try:
                v.encode('utf-8')
            except UnicodeEncodeError as e:
                bad.append('%s does not encode as UTF-8 (%s)' % (field, str(e)[:80]))
    return bad


def judge_caller_ok(max_wall, grow_mb=300):
    """The caller survives, run_python returns (no exception) within max_wall, the fields are visible
    text, the caller's memory does not grow by more than grow_mb, nothing is left."""

    def judge(before, after, results, ctx):
        r = results[-1]
        grow = ctx.get('maxrss_mb_after', 0) - ctx.get('maxrss_mb_before', 0)
        obs = short(r) + '; caller wall %.1f s, maxrss +%.0f MB' % (ctx.get('wall', -1), grow)
        if run_errors(ctx):
            return 'hole', 'run_python raised in the caller: %s; %s' % (run_errors(ctx), obs)
        if isinstance(before, dict) and 'marker_procs' in before:
            left = leftover_diff(before, after)
            if left:
                return 'hole', obs + '; left: ' + '; '.join(left)
        if ctx.get('wall', 0) > max_wall:
            return 'hole', obs + '; the caller was held beyond %s s' % max_wall
        if grow > grow_mb:
            return 'hole', obs + '; the caller grew by more than %d MB' % grow_mb
        if r is None:
            return 'inconclusive', 'no result'
        bad = visible_problems(r)
        if bad:
            return 'hole', '; '.join(bad) + '; ' + obs
        return 'stopped', obs

    return judge


# --------------------------------------------------------------------------- page cache (host view)

def host_mincore(path, pages):
    """Which of `pages` (page indices) of path are in the page cache, seen from the caller (root: the
    file's owner, so mincore answers for the page cache itself)."""
    libc = ctypes.CDLL(None, use_errno=True)
    with open(path, 'rb') as f:
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
    for d in ('/usr/lib', '/usr/share', '/usr/lib64', '/usr/libexec'):
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
    rnd = random.Random(ctx['nonce'])
    cands = _big_files()
    rnd.shuffle(cands)
    ctx['cache_file'] = ctx['cache_pages'] = ctx['bits'] = ''
    for path in cands:
        npages = os.path.getsize(path) // PAGE
        picks = sorted(rnd.sample(range(64, npages - 64, 256), 48)) if npages > 20000 else []
        if not picks:
            continue
        cold = [p for p, r in zip(picks, host_mincore(path, picks)) if r == 0]
        if len(cold) >= 16:
            ctx['cache_file'] = path
            ctx['cache_pages'] = ','.join(map(str, cold[:16]))
            bits = [rnd.randint(0, 1) for _ in range(16)]
            bits[0], bits[1] = 1, 0
            ctx['bits'] = ''.join(map(str, bits))
            break
    if want_cached and ctx['cache_file']:
        with open(ctx['cache_file'], 'rb') as f:
            for p in map(int, ctx['cache_pages'].split(',')):
                os.pread(f.fileno(), 1, p * PAGE)


def outside_pagecache(ctx):
    if not ctx.get('cache_file'):
        return None
    pages = [int(x) for x in ctx['cache_pages'].split(',')]
    return ''.join('?' if r is None else str(r) for r in host_mincore(ctx['cache_file'], pages))


def judge_cache_receiver(before, after, results, ctx):
    """Hole if the receiving run read the sender's bits exactly."""
    if not ctx.get('cache_file'):
        return 'inconclusive', 'no big uncached file found in the bound trees'
    recv = results[-1]
    m = re.search(r'BITS ([01?]{16})', recv.stdout or '') if recv else None
    got = m.group(1) if m else None
    obs = 'secret %s; host mincore before %s after %s; receiver read %s; sender %s; receiver %s' % (
        ctx['bits'], before, after, got, short(results[0]), short(recv))
    if got == ctx['bits']:
        return 'hole', 'the receiving run read the bits exactly (no timing): ' + obs
    return 'stopped', obs


def judge_cache_evict(before, after, results, ctx):
    """The caller cached 16 pages; the run evicts those where the secret has a 1."""
    if not ctx.get('cache_file'):
        return 'inconclusive', 'no big uncached file found in the bound trees'
    want = ''.join('0' if b == '1' else '1' for b in ctx['bits'])
    obs = 'secret %s; host mincore before %s after %s (evicted where 0); %s' % (
        ctx['bits'], before, after, short(results[-1]))
    if before != '1' * 16:
        return 'inconclusive', 'the caller could not cache its 16 pages: ' + obs
    if after == want:
        return 'hole', 'the run evicted chosen pages of a host file from the host page cache: ' + obs
    if after is not None and after.count('0') >= 4 and all(a == '1' for a, b in zip(after, ctx['bits']) if b == '0'):
        return 'hole', 'the run evicted some of the chosen pages (only those): ' + obs
    return 'stopped', obs


# --------------------------------------------------------------------------- concurrent channels

SLOT = 0.4
NBITS = 12


def concurrent_bits(ctx):
    rnd = random.Random(ctx['nonce'] + 'xc')
    bits = [rnd.randint(0, 1) for _ in range(NBITS)]
    bits[0], bits[1] = 1, 0
    return ''.join(map(str, bits))


RECEIVER_SAMPLER = r'''
import time
def metric():
    @METRIC@
end = time.monotonic() + @SAMPLE_S@
out = []
while time.monotonic() < end:
    try:
        out.append('%.4f %s' % (time.monotonic(), metric()))
    except Exception as e:
        out.append('%.4f E' % time.monotonic())
    time.sleep(0.01)
print('SAMPLES')
print('\n'.join(out))
result = len(out)
'''

METRICS = {
    # host-wide counters and levels a fresh /proc of the run may show
    'forks': "return [l for l in open('/proc/stat') if l.startswith('processes ')][0].split()[1]",
    'memavail': "return [l for l in open('/proc/meminfo') if l.startswith('MemAvailable:')][0].split()[1]",
    'filenr': "return open('/proc/sys/fs/file-nr').read().split()[0]",
    'tasks': "return open('/proc/loadavg').read().split()[3].split('/')[1]",
    'cpubusy': "f = [int(x) for x in open('/proc/stat').readline().split()[1:8]]; return f[0] + f[1] + f[2] + f[5] + f[6]",
}
COUNTERS = {'forks', 'cpubusy'}


def receiver_prog(metric, sample_s):
    return prog(RECEIVER_SAMPLER.replace('@METRIC@', METRICS[metric]).replace('@SAMPLE_S@', str(sample_s)),
                prelude=False)


def decode_samples(samples, t0, bits_n, counter):
    """Per slot value (median level, or rate of a counter) from (t, v) samples; bits by the two
    calibration slots (slot 0 is a 1, slot 1 a 0)."""
    vals = []
    for i in range(bits_n):
        a, b = t0 + (i + 0.25) * SLOT, t0 + (i + 0.9) * SLOT
        inside = [(t, v) for t, v in samples if a <= t <= b]
        if len(inside) < 3:
            return None, 'slot %d has %d samples' % (i, len(inside))
        if counter:
            (ta, va), (tb, vb) = inside[0], inside[-1]
            vals.append((vb - va) / max(tb - ta, 1e-3))
        else:
            s = sorted(v for _, v in inside)
            vals.append(s[len(s) // 2])
    one, zero = vals[0], vals[1]
    if one == zero:
        return None, 'calibration slots equal (%s)' % one
    got = ''.join('1' if abs(v - one) < abs(v - zero) else '0' for v in vals)
    return got, 'slot values %s' % [round(v, 1) for v in vals]


def _samples_of(res):
    out = []
    if res is None:
        return out
    text = (res.stdout or '').split('SAMPLES', 1)[-1]
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1] != 'E':
            try:
                out.append((float(parts[0]), float(parts[1])))
            except ValueError:
                pass
    return out


def judge_concurrent(counter):
    def judge(before, after, results, ctx):
        bits = ctx['bits']
        recv = results[-1]
        sender_t0 = ctx.get('sender_t0')
        if sender_t0 is None and results and results[0] is not None:
            m = re.search(r'^T0 ([0-9.]+)', results[0].stdout or '', re.M)
            sender_t0 = float(m.group(1)) if m else None
        samples = _samples_of(recv)
        obs = 'secret %s; %d samples; sender %s; receiver %s' % (
            bits, len(samples), short(results[0]) if len(results) > 1 else 'the caller', short(recv))
        if sender_t0 is None:
            return 'inconclusive', 'no sender start time; ' + obs
        if not samples:
            if recv is None or recv.status != 'ok':
                return 'inconclusive', 'the receiving run did not end ok, no samples; ' + obs
            return 'stopped', 'the receiving run could read no sample of the host value; ' + obs
        got, how = decode_samples(samples, sender_t0, len(bits), counter)
        obs += '; decoded %s (%s)' % (got, how)
        if got is None:
            return 'inconclusive', obs
        if got == bits:
            return 'hole', 'the receiving run decoded the other side\'s bits from a host-wide value: ' + obs
        wrong = sum(a != b for a, b in zip(got, bits))
        if wrong <= 2:
            return 'hole', '%d of %d bits wrong (a noisy channel): %s' % (wrong, len(bits), obs)
        return 'stopped', obs
    return judge


def setup_concurrent(ctx):
    ctx['bits'] = concurrent_bits(ctx)
    ctx['slot'] = repr(SLOT)


SENDER_HEAD = r'''
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
'''


# --------------------------------------------------------------------------- persistent global counters

def symbol_of(ctx, nsym):
    return int(ctx['nonce'][6:10], 16) % nsym


def judge_counter_channel(shift, nsym, what):
    def judge(before, after, results, ctx):
        sym = ctx['symbol']
        recv = results[-1]
        m = re.search(r'RECV (\d+) (\d+)', recv.stdout or '') if recv else None
        ms = re.search(r'SENT start (\d+) end (\d+) n (\d+)', results[0].stdout or '') if results[0] else None
        obs = 'symbol %d; sender %s %s; receiver %s %s; caller\'s own %s before %s after %s' % (
            sym, short(results[0]), ms.group(0) if ms else None, short(recv), m.group(0) if m else None,
            what, before, after)
        if not m:
            return 'stopped', 'the receiver could not read the counter: ' + obs
        got, off = int(m.group(1)), int(m.group(2))
        if isinstance(before, int) and ((before >> shift) % nsym) == sym and not ms:
            return 'inconclusive', 'the counter was already in the secret bucket: ' + obs
        if got == sym and off < (1 << shift) // 2:
            return 'hole', 'the receiving run read the sender\'s symbol from a host-global %s: %s' % (what, obs)
        return 'stopped', obs
    return judge


def outside_pipe_ino(ctx):
    os.sched_setaffinity(0, {0}) if hasattr(os, 'sched_setaffinity') else None
    r, w = os.pipe()
    ino = os.fstat(r).st_ino
    os.close(r)
    os.close(w)
    return ino


# --------------------------------------------------------------------------- other outside checks

def meminfo(*keys):
    out = {}
    for line in _read('/proc/meminfo').decode().splitlines():
        k, _, v = line.partition(':')
        if k in keys:
            out[k] = int(v.split()[0])
    return out


def dentry_state(ctx):
    f = _read('/proc/sys/fs/dentry-state').split()
    return {'nr_dentry': int(f[0]), 'nr_unused': int(f[1]), 'nr_negative': int(f[4]) if len(f) > 4 else None}


def host_sysctls(ctx):
    out = {}
    for p in ('kernel/domainname', 'kernel/hostname', 'fs/lease-break-time', 'kernel/printk_ratelimit',
              'vm/stat_interval', 'kernel/core_pattern', 'kernel/perf_event_paranoid', 'fs/protected_symlinks',
              'kernel/sched_autogroup_enabled', 'kernel/randomize_va_space'):
        out[p] = _read('/proc/sys/' + p).decode(errors='replace').strip()
    out['binfmt'] = sorted(os.listdir('/proc/sys/fs/binfmt_misc')) if os.path.isdir('/proc/sys/fs/binfmt_misc') else None
    return out


def teardown_sysctls(ctx):
    """Put back any host value the run changed (only what is harmless to write back)."""
    before = ctx.get('_sysctl_before') or {}
    now = host_sysctls(ctx)
    for p in ('kernel/domainname', 'kernel/hostname', 'fs/lease-break-time', 'kernel/printk_ratelimit',
              'vm/stat_interval'):
        if before.get(p) and now.get(p) != before.get(p):
            try:
                with open('/proc/sys/' + p, 'w') as f:
                    f.write(before[p])
            except OSError:
                pass
    for name in (now.get('binfmt') or []):
        if name.startswith('r3b5'):
            try:
                with open('/proc/sys/fs/binfmt_misc/' + name, 'w') as f:
                    f.write('-1')
            except OSError:
                pass


def setup_sysctls(ctx):
    ctx['_sysctl_before'] = host_sysctls(ctx)


def clock_view(ctx):
    """realtime - monotonic (s) and the kernel's timezone (gettimeofday's tz) in the caller."""
    libc = _libc()
    tv = ctypes.create_string_buffer(16)
    tz = ctypes.create_string_buffer(8)
    libc.gettimeofday(tv, tz)
    mw, dst = struct.unpack('ii', tz.raw)
    return {'offset': round(time.clock_gettime(time.CLOCK_REALTIME) - time.clock_gettime(time.CLOCK_MONOTONIC), 2),
            'tz': (mw, dst)}


def teardown_clock(ctx):
    b = ctx.get('_clock_before')
    if not b:
        return
    now = clock_view(ctx)
    libc = _libc()
    if now['tz'] != b['tz']:
        libc.settimeofday(None, ctypes.create_string_buffer(struct.pack('ii', *b['tz']), 8))
    if abs(now['offset'] - b['offset']) > 1:
        t = time.clock_gettime(time.CLOCK_MONOTONIC) + b['offset']
        try:
            time.clock_settime(time.CLOCK_REALTIME, t)
        except OSError:
            pass


def setup_clock(ctx):
    ctx['_clock_before'] = clock_view(ctx)


def judge_clock(before, after, results, ctx):
    obs = short(results[-1]) + '; clock before %s after %s' % (before, after)
    if before['tz'] != after['tz']:
        return 'hole', 'the host kernel\'s timezone changed: ' + obs
    if abs(before['offset'] - after['offset']) > 2:
        return 'hole', 'the host\'s realtime clock moved: ' + obs
    return judge_refused()(None, None, results, ctx)[0], obs


def own_vdso(ctx):
    """First 64 bytes of the caller's own vDSO and whether its clock agrees with the raw syscall."""
    for line in _read('/proc/self/maps').decode().splitlines():
        if line.endswith('[vdso]'):
            a = int(line.split('-')[0], 16)
            with open('/proc/self/mem', 'rb') as f:
                f.seek(a)
                head = f.read(64)
            ts = ctypes.create_string_buffer(16)
            host_sc(228, 0, ts)
            sec, nsec = struct.unpack('qq', ts.raw)
            return {'head': head.hex(), 'skew': round(abs(time.time() - (sec + nsec / 1e9)), 3)}
    return None


def bpf_ids(ctx):
    """IDs of the host's BPF maps and programs (bpf(BPF_*_GET_NEXT_ID) in the caller, root)."""
    out = {}
    for name, cmd in (('maps', 12), ('progs', 11)):
        ids, start = [], 0
        for _ in range(10000):
            attr = ctypes.create_string_buffer(struct.pack('III', start, 0, 0) + bytes(116), 128)
            r, e = host_sc(321, cmd, attr, 128)
            if r != 0:
                break
            start = struct.unpack('I', attr.raw[4:8])[0]
            ids.append(start)
        out[name] = ids
    return out


def kmsg_setup(ctx):
    try:
        fd = os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(fd, 0, os.SEEK_END)
        ctx['_kmsg'] = fd
    except OSError as e:
        ctx['_kmsg'] = None
        ctx['_kmsg_err'] = str(e)


def kmsg_new(ctx):
    """Kernel log records since the setup that mention the run's marker (the comm of its processes)."""
    fd = ctx.get('_kmsg')
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
        if ctx['marker'].encode() in rec:
            n += 1
            if len(sample) < 2:
                sample.append(rec.decode(errors='replace')[:160])
    ctx['_kmsg_total'] = ctx.get('_kmsg_total', 0) + n
    ctx['_kmsg_sample'] = ctx.get('_kmsg_sample', []) + sample
    return ctx['_kmsg_total']


def core_snapshot(ctx):
    pat = _read('/proc/sys/kernel/core_pattern').decode(errors='replace').strip()
    dirs = ['/var/crash', '/var/lib/systemd/coredump', '/var/lib/apport/coredump', '/var/tmp', '/tmp', '/',
            ctx['repo_dir'], ctx['home']]
    if pat.startswith('/'):
        dirs.append(os.path.dirname(pat.split()[0]) or '/')
    files = []
    for d in dirs:
        try:
            for fn in os.listdir(d):
                p = os.path.join(d, fn)
                if 'core' in fn.lower() and os.path.isfile(p) and os.stat(p).st_mtime > ctx.get('t_start', 0):
                    files.append(p)
        except OSError:
            pass
    return {'pattern': pat, 'files': sorted(files)}


def helper_procs(ctx):
    """Host processes of a core_pattern pipe helper (during the run)."""
    pat = ctx.get('_core_pattern', '')
    if not pat.startswith('|'):
        return 0
    name = os.path.basename(pat[1:].split()[0])[:15].encode()
    return sum(1 for p in os.listdir('/proc') if p.isdigit() and _read('/proc/%s/comm' % p).strip() == name)


class Pty:
    """A pty whose master the caller reads in a thread (everything that arrives is kept)."""

    def __init__(self):
        self.master, self.slave = os.openpty()
        self.got = b''
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        import select
        while not self.stop.is_set():
            r, _, _ = select.select([self.master], [], [], 0.1)
            if r:
                try:
                    self.got += os.read(self.master, 65536)
                except OSError:
                    return


# --------------------------------------------------------------------------- the attacks

L = dict  # limits

ATTACKS = []


def A(**kw):
    kw.setdefault('limits', L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=4))
    kw.setdefault('outside', leftovers)
    ATTACKS.append(kw)


# ---- kernel surface: calls outside the documented deny list, other routes to listed ones ----------

A(id='ks_pidfd_getfd', **{'class': 'kernel-surface'},
  description='pidfd_open(1) (documented: opens) then pidfd_getfd (438, not in the documented list) for the supervisor\'s fds 0-63; with its seccomp listener, answer a child\'s unshare(CLONE_NEWUTS) with CONTINUE',
  code=prog(r'''
import struct
pfd, e = sc(434, 1, 0)
say('pidfd_open(1)', pfd, e)
got = []
if pfd >= 0:
    for fd in range(64):
        r, e = sc(438, pfd, fd, 0)
        if r >= 0:
            try:
                link = os.readlink('/proc/self/fd/%d' % r)
            except OSError as x:
                link = str(x)
            got.append((fd, r, link))
            say('GOTFD', fd, link)
        elif fd < 3:
            say('getfd', fd, 'errno', e)
for fd, r, link in got:
    if 'seccomp' not in link:
        continue
    kid = os.fork()
    if kid == 0:
        name_me()
        time.sleep(0.3)
        say('child unshare', sc(272, 0x04000000))
        time.sleep(2)
        os._exit(0)
    req = ctypes.create_string_buffer(80)
    if libc.ioctl(r, ctypes.c_ulong(0xc0502100), req) == 0:
        nid = struct.unpack('Q', req.raw[:8])[0]
        resp = ctypes.create_string_buffer(struct.pack('QqiI', nid, 0, 0, 1), 24)
        say('CONTINUE sent', libc.ioctl(r, ctypes.c_ulong(0xc0182101), resp))
    os.waitpid(kid, 0)
result = len(got)
'''),
  expected='no fd of the supervisor is obtained (EPERM); no run process in a UTS namespace of its own',
  judge=judge_refused(stdout_has(r'^GOTFD .*')))

A(id='ks_clone_newuser', **{'class': 'kernel-surface'},
  description='raw clone(56) with CLONE_NEWUSER|SIGCHLD (a user namespace needs no privilege); the child holds it 2 s for the host monitor',
  code=prog(r'''
r, e = sc(56, 0x10000000 | 17, 0, 0, 0, 0)
if r == 0:
    name_me()
    time.sleep(2)
    os._exit(0)
say('RET clone newuser', r, e)
if r > 0:
    say('CLONED', r)
    os.waitpid(r, 0)
result = 1
'''),
  expected='refused by the seccomp filter; the host sees no run process in a namespace of its own',
  judge=judge_refused(stdout_has(r'^CLONED \d+')))

A(id='ks_clone3_flags', **{'class': 'kernel-surface'},
  description='clone3(435) with CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWTIME and with CLONE_INTO_CGROUP (documented: ENOSYS); then clone(56) with CLONE_NEWCGROUP alone, then CLONE_NEWUTS alone',
  code=prog(r'''
import struct
def clone3(flags, cgroup=0):
    args = struct.pack('QQQQQQQQQQQ', flags, 0, 0, 0, 17, 0, 0, 0, 0, 0, cgroup)
    buf = ctypes.create_string_buffer(args, 88)
    return sc(435, buf, 88)
for flags, cg in ((0x10000000 | 0x00020000 | 0x80, 0), (0x200000000, os.open('/', os.O_RDONLY)), (0x10000000, 0)):
    r, e = clone3(flags, cg)
    if r == 0:
        name_me(); time.sleep(2); os._exit(0)
    say('RET clone3', hex(flags), r, e)
    if r > 0:
        say('CLONED', r); os.waitpid(r, 0)
for flags in (0x02000000, 0x04000000, 0x08000000):
    r, e = sc(56, flags | 17, 0, 0, 0, 0)
    if r == 0:
        name_me(); time.sleep(2); os._exit(0)
    say('RET clone', hex(flags), r, e)
    if r > 0:
        say('CLONED', r); os.waitpid(r, 0)
result = 1
'''),
  expected='clone3 ENOSYS; the first clone with a CLONE_NEW* flag is refused; no namespace of the run\'s own (host view)',
  judge=judge_refused(stdout_has(r'^CLONED \d+')))

A(id='ks_setns_pidfd', **{'class': 'kernel-surface'},
  description='open /proc/1/ns/* and /proc/self/ns/*; setns(308) into the own namespaces by fd, then setns on pidfd_open(1) with CLONE_NEWUTS|CLONE_NEWNS',
  code=prog(r'''
fds = []
for who in ('1', 'self'):
    for t in ('mnt', 'net', 'pid', 'user', 'uts', 'ipc', 'cgroup', 'time'):
        try:
            fds.append((who, t, os.open('/proc/%s/ns/%s' % (who, t), os.O_RDONLY)))
            say('opened ns', who, t)
        except OSError as e:
            say('ns', who, t, e)
pfd, e = sc(434, 1, 0)
say('pidfd_open(1)', pfd, e)
if pfd >= 0:
    r = sc(308, pfd, 0x04000000 | 0x00020000)
    say('RET setns pidfd', r)
    if r[0] == 0:
        say('SETNS ok')
for who, t, fd in fds:
    r = sc(308, fd, 0)
    say('RET setns', who, t, r)
    if r[0] == 0 and who == '1':
        say('SETNS ok')
time.sleep(1)
result = 1
'''),
  expected='setns refused; no run process in the supervisor\'s or any other namespace set (host view)',
  judge=judge_refused(stdout_has(r'^SETNS ok')))

A(id='ks_io_uring', **{'class': 'kernel-surface'},
  description='io_uring_setup(425) with 8 entries (an io_uring fd reaches files and sockets without the per-call checks)',
  code=prog(r'''
params = ctypes.create_string_buffer(120)
r, e = sc(425, 8, params)
say('RET io_uring_setup', r, e)
if r >= 0:
    say('IOURING fd', r)
result = 1
'''),
  expected='refused by the seccomp filter',
  judge=judge_refused(stdout_has(r'^IOURING fd')))

A(id='ks_bpf', **{'class': 'kernel-surface'},
  description='bpf(321): enumerate the host\'s programs (PROG_GET_NEXT_ID), create an array map, load a socket filter; the caller lists the host\'s BPF map/prog ids',
  code=prog(r'''
import struct
attr = ctypes.create_string_buffer(128)
r, e = sc(321, 11, attr, 128)
say('RET prog_get_next_id', r, e, struct.unpack('I', attr.raw[4:8])[0])
if r == 0:
    say('BPF ok enumerate')
attr = ctypes.create_string_buffer(struct.pack('IIII', 2, 4, 8, 64) + bytes(112), 128)
r, e = sc(321, 0, attr, 128)
say('RET map_create', r, e)
if r >= 0:
    say('BPF ok map', r)
    time.sleep(2)
result = 1
'''),
  expected='refused by the seccomp filter; no new BPF object on the host',
  outside=bpf_ids,
  judge=lambda b, a, res, ctx: (
      ('hole', 'new BPF objects on the host: %s; %s' % (
          {k: sorted(set(a[k]) - set(b[k])) for k in a}, short(res[-1])))
      if any(set(a[k]) - set(b[k]) for k in a) else judge_refused(stdout_has(r'^BPF ok.*'))(b, a, res, ctx)))

A(id='ks_perf_event', **{'class': 'kernel-surface'},
  description='perf_event_open(298) system-wide on CPU 0 (pid -1) and on itself: host-wide activity counters (a side channel on other runs and the caller)',
  code=prog(r'''
import struct
attr = ctypes.create_string_buffer(struct.pack('IIQ', 1, 128, 0) + bytes(112), 128)
for pid, cpu in ((-1, 0), (0, -1)):
    r, e = sc(298, attr, pid, cpu, -1, 0)
    say('RET perf_event_open', pid, cpu, r, e)
    if r >= 0:
        say('PERF fd', pid, cpu)
result = 1
'''),
  expected='refused by the seccomp filter',
  judge=judge_refused(stdout_has(r'^PERF fd.*')))

A(id='ks_userfaultfd', **{'class': 'kernel-surface'},
  description='userfaultfd through /dev/userfaultfd (USERFAULTFD_IOC_NEW, another route than the syscall) and /proc/self/root/dev, then the userfaultfd(323) syscall',
  code=prog(r'''
for p in ('/dev/userfaultfd', '/proc/self/root/dev/userfaultfd', '/proc/1/root/dev/userfaultfd'):
    try:
        fd = os.open(p, os.O_RDWR)
        r = libc.ioctl(fd, ctypes.c_ulong(0xaa00), 1)
        say('UFFD dev', p, r)
    except OSError as e:
        say('dev', p, e)
r, e = sc(323, 0o2000000 | 1)
say('RET userfaultfd', r, e)
if r >= 0:
    say('UFFD fd', r)
result = 1
'''),
  expected='no /dev/userfaultfd; the syscall refused by the seccomp filter',
  judge=judge_refused(stdout_has(r'^UFFD (fd|dev \S+ \d+)')))

# ---- page cache: eviction by another call, receivers without timing -------------------------------

_MAPPED = r'''
import mmap
path = '@CACHE_FILE@'
pages = [int(x) for x in '@CACHE_PAGES@'.split(',') if x]
def mapped():
    f = open(path, 'rb')
    return f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
'''

_SENDER_LOAD = prog(_MAPPED + r'''
f, mm = mapped()
try:
    mm.madvise(mmap.MADV_RANDOM)
except Exception:
    pass
for p, b in zip(pages, '@BITS@'):
    if b == '1':
        mm[p * 4096]
say('sent')
''')

A(id='pc_pmadv_evict', **{'class': 'page-cache'},
  description='the caller caches 16 pages of a big bound host file; the run maps the file and evicts the pages where its secret has a 1 with process_madvise(440, MADV_PAGEOUT) on its own pidfd (madvise and fadvise are denied, process_madvise is not listed)',
  setup=lambda ctx: setup_pagecache(ctx, want_cached=True),
  code=prog(_MAPPED + r'''
f, mm = mapped()
buf = (ctypes.c_char * 1).from_buffer(mm)
base = ctypes.addressof(buf)
me, e = sc(434, os.getpid(), 0)
say('pidfd self', me, e)
for p, b in zip(pages, '@BITS@'):
    if b != '1':
        continue
    mm[p * 4096]
    iov = (ctypes.c_ulong * 2)(base + p * 4096, 4096)
    say('process_madvise', p, sc(440, me, iov, 1, 21, 0), sc(440, me, iov, 1, 20, 0))
'''),
  limits=L(wall_s=15, cpu_s=5, memory_mb=512, max_processes=1),
  expected='the host page cache of the file unchanged (all 16 pages still cached), or the call refused',
  outside=outside_pagecache, judge=judge_cache_evict)

A(id='pc_nowait_receiver', **{'class': 'page-cache'},
  description='sender faults in the secret\'s pages of a big bound host file; receiver probes each page with preadv2(RWF_NOWAIT): EAGAIN = not cached (an exact probe, no timing)',
  setup=setup_pagecache,
  code=_SENDER_LOAD,
  receiver=prog(_MAPPED + r'''
fd = os.open(path, os.O_RDONLY)
bits = ''
for p in pages:
    try:
        n = os.preadv(fd, [bytearray(1)], p * 4096, os.RWF_NOWAIT)
        bits += '1' if n == 1 else '?'
    except BlockingIOError:
        bits += '0'
    except OSError as e:
        bits += '?'
say('BITS', bits)
'''),
  limits=L(wall_s=15, cpu_s=5, memory_mb=512, max_processes=1),
  expected='the receiver cannot read the bits exactly (RWF_NOWAIT refused or uninformative)',
  outside=outside_pagecache, judge=judge_cache_receiver)

A(id='pc_cachestat_receiver', **{'class': 'page-cache'},
  description='sender faults in the secret\'s pages; receiver asks cachestat(451) for each page of the read-only host file (nr_cache)',
  setup=setup_pagecache,
  code=_SENDER_LOAD,
  receiver=prog(_MAPPED + r'''
import struct
fd = os.open(path, os.O_RDONLY)
bits = ''
for p in pages:
    rng = ctypes.create_string_buffer(struct.pack('QQ', p * 4096, 4096), 16)
    cs = ctypes.create_string_buffer(40)
    r, e = sc(451, fd, rng, cs, 0)
    bits += (str(min(1, struct.unpack('Q', cs.raw[:8])[0])) if r == 0 else '?')
    if r != 0 and p == pages[0]:
        say('cachestat errno', e)
say('BITS', bits)
'''),
  limits=L(wall_s=15, cpu_s=5, memory_mb=512, max_processes=1),
  expected='cachestat refused on a file the run may not write (or denied); the receiver reads no bits',
  outside=outside_pagecache, judge=judge_cache_receiver)

# ---- host-global kernel state the run could change -----------------------------------------------

A(id='ksh_vdso_patch', **{'class': 'kernel-shared'},
  description='write a nonce over the own vDSO\'s ELF header through /proc/self/mem (FOLL_FORCE), try the [vvar] pages and the vsyscall page; the caller checks its own vDSO bytes and clock',
  code=prog(r'''
maps = open('/proc/self/maps').read()
say([l for l in maps.splitlines() if l.endswith(('[vdso]', '[vvar]', '[vsyscall]', '[vvar_vclock]'))])
for line in maps.splitlines():
    if line.endswith(('[vdso]', '[vvar]', '[vsyscall]', '[vvar_vclock]')):
        a = int(line.split('-')[0], 16)
        try:
            with open('/proc/self/mem', 'r+b', buffering=0) as f:
                f.seek(a + (0 if line.endswith('[vdso]') else 64))
                say('wrote', line.split()[-1], f.write(b'R3B5@NONCE@'))
        except OSError as e:
            say('mem', line.split()[-1], e)
pid = os.fork()
if pid == 0:
    name_me(); time.sleep(1.5); os._exit(0)
os.waitpid(pid, 0)
result = 1
'''),
  expected='the caller\'s vDSO header and clock unchanged (the write, if any, made a private copy)',
  outside=own_vdso,
  judge=lambda b, a, res, ctx: (
      ('hole', 'the caller\'s own vDSO changed: %s -> %s; %s' % (b, a, short(res[-1])))
      if b and a and (b['head'] != a['head'] or a['skew'] > 1) else
      ('inconclusive', 'no vDSO in the caller') if not b else ('stopped', short(res[-1]) + '; vdso %s' % a)))

A(id='ksh_clock_routes', **{'class': 'kernel-shared'},
  description='settimeofday(NULL, tz) (the kernel timezone only), then clock_settime(REALTIME, +40 s), adjtimex ADJ_SETOFFSET, clock_adjtime by raw numbers; the caller compares realtime-monotonic and its tz (and puts both back)',
  setup=setup_clock, teardown=teardown_clock,
  code=prog(r'''
import struct
tz = ctypes.create_string_buffer(struct.pack('ii', 123, 0), 8)
say('RET settimeofday tz', sc(164, None, tz))
ts = ctypes.create_string_buffer(struct.pack('qq', int(time.time()) + 40, 0), 16)
say('RET clock_settime', sc(227, 0, ts))
tx = bytearray(208)
struct.pack_into('I', tx, 0, 0x0100 | 0x2000)
struct.pack_into('qq', tx, 72, 40, 0)
b = ctypes.create_string_buffer(bytes(tx), 208)
say('RET adjtimex', sc(159, b))
say('RET clock_adjtime', sc(305, 0, b))
result = 1
'''),
  expected='refused; the host\'s clock offset and kernel timezone unchanged',
  outside=clock_view, judge=judge_clock)

A(id='ksh_procsys_writes', **{'class': 'kernel-shared'},
  description='write harmless host-global sysctls through the run\'s fresh /proc (kernel.domainname/hostname, fs.lease-break-time, printk_ratelimit, vm.stat_interval), register a binfmt_misc handler, write /proc/sysrq-trigger; the caller compares and puts back',
  setup=setup_sysctls, teardown=teardown_sysctls,
  code=prog(r'''
W = {'kernel/domainname': 'r3b5-@NONCE@', 'kernel/hostname': 'r3b5-@NONCE@', 'fs/lease-break-time': '37',
     'kernel/printk_ratelimit': '7', 'vm/stat_interval': '3',
     'fs/binfmt_misc/register': ':r3b5@NONCE@:E::r3b5x::/bin/true:'}
for p, v in W.items():
    for root in ('/proc/sys/', '/proc/self/root/proc/sys/', '/proc/1/root/proc/sys/'):
        try:
            with open(root + p, 'w') as f:
                f.write(v)
            say('WROTE', root + p)
            break
        except OSError as e:
            say('no', root + p, e)
try:
    with open('/proc/sysrq-trigger', 'w') as f:
        f.write('h')
    say('WROTE sysrq')
except OSError as e:
    say('sysrq', e)
result = 1
'''),
  expected='every write refused (EACCES/EROFS); the host\'s values unchanged',
  outside=host_sysctls,
  judge=lambda b, a, res, ctx: (
      ('hole', 'host sysctls changed: %s; %s' % ({k: (b[k], a[k]) for k in a if a[k] != b[k]}, short(res[-1])))
      if a != b else
      ('hole', 'the run reports a write: %s; %s' % (re.findall(r'^WROTE .*', res[-1].stdout or '', re.M)[:5], short(res[-1])))
      if res[-1] is not None and re.search(r'^WROTE', res[-1].stdout or '', re.M) else ('stopped', short(res[-1]))))

A(id='ksh_dev_random_ioctls', **{'class': 'kernel-shared'},
  description='open /dev/random and /dev/urandom for writing (allowed nodes) and call the privileged ioctls RNDADDTOENTCNT, RNDADDENTROPY, RNDZAPENTCNT, RNDCLEARPOOL, RNDRESEEDCRNG on the host\'s pool',
  code=prog(r'''
import struct
for p in ('/dev/random', '/dev/urandom'):
    try:
        fd = os.open(p, os.O_RDWR)
    except OSError as e:
        say('open', p, e); continue
    try:
        say('write', p, os.write(fd, b'\0' * 65536))
    except OSError as e:
        say('write', p, e)
    cnt = ctypes.c_int(0)
    say('RNDGETENTCNT', libc.ioctl(fd, ctypes.c_ulong(0x80045200), ctypes.byref(cnt)), cnt.value)
    ent = ctypes.create_string_buffer(struct.pack('ii', 4096, 512) + b'\0' * 512, 520)
    for name, req, arg in (('RNDADDTOENTCNT', 0x40045201, ctypes.byref(ctypes.c_int(4096))),
                           ('RNDADDENTROPY', 0x40085203, ent), ('RNDZAPENTCNT', 0x5204, None),
                           ('RNDCLEARPOOL', 0x5206, None), ('RNDRESEEDCRNG', 0x5207, None)):
        ctypes.set_errno(0)
        r = libc.ioctl(fd, ctypes.c_ulong(req), arg)
        say('IOCTL', 'ok' if r == 0 else 'fail', name, p, ctypes.get_errno())
result = 1
'''),
  expected='every privileged ioctl fails (EPERM); writes only mix data in (not a hole)',
  judge=judge_refused(stdout_has(r'^IOCTL ok \S+'), ns_check=False))

A(id='ksh_dev_nodes', **{'class': 'kernel-shared'},
  description='list /dev; open kmsg, mem, kmem, port, kvm, fuse, net/tun, ptmx, tty, console, rtc0, hpet, loop-control, vhost-net, vsock, cpu/0/msr, nvidia*, dri, sda... directly and through /proc/self/root, /proc/1/root and ..',
  code=prog(r'''
say('DEVLIST', sorted(os.listdir('/dev')))
names = ['kmsg', 'mem', 'kmem', 'port', 'kvm', 'fuse', 'net/tun', 'ptmx', 'tty', 'console', 'tty0', 'rtc0', 'rtc',
         'hpet', 'loop-control', 'loop0', 'vhost-net', 'vhost-vsock', 'vsock', 'cpu/0/msr', 'cpu/0/cpuid',
         'nvidia0', 'nvidiactl', 'nvidia-uvm', 'dri/card0', 'sda', 'vda', 'nvme0', 'nvme0n1', 'mapper/control',
         'btrfs-control', 'uinput', 'watchdog', 'snd/seq', 'autofs', 'shm', 'mqueue', 'pts/ptmx', 'pts/0', 'hugepages',
         'userfaultfd', 'tpm0', 'sg0', 'bsg', 'ttyS0', 'vcs', 'full', 'zero']
ok = []
for n in names:
    for root in ('/dev/', '/proc/self/root/dev/', '/proc/1/root/dev/', '/tmp/../dev/', '/proc/1/cwd/dev/'):
        for flags in (os.O_RDWR, os.O_RDONLY):
            try:
                fd = os.open(root + n, flags | os.O_NONBLOCK | os.O_NOCTTY)
                os.close(fd)
                if n not in ('full', 'zero'):
                    ok.append(root + n)
                    say('OPENED', root + n, flags)
                break
            except OSError:
                pass
result = len(ok)
'''),
  expected='no device other than null, zero, full, random, urandom can be opened',
  judge=judge_refused(stdout_has(r'^OPENED \S+'), ns_check=False))

A(id='ksh_kmsg_flood', **{'class': 'kernel-shared'},
  description='400 children crash with SIGSEGV (the kernel logs "segfault at" with the run\'s chosen comm) and the run tries /proc/kmsg and /dev/kmsg; the caller counts new host kernel log records naming the run',
  setup=kmsg_setup,
  code=prog(r'''
for p in ('/proc/kmsg', '/dev/kmsg'):
    try:
        say(p, open(p, 'rb').read(200))
    except OSError as e:
        say(p, e)
n = 0
end = time.time() + 6
while n < 400 and time.time() < end:
    pid = os.fork()
    if pid == 0:
        name_me()
        ctypes.string_at(8)
        os._exit(0)
    os.waitpid(pid, 0)
    n += 1
say('crashes', n)
result = n
'''),
  limits=L(wall_s=12, cpu_s=8, memory_mb=256, max_processes=2),
  expected='at most a rate-limited handful (<= 50) of host kernel log records name the run; the run reads no kernel log',
  outside=kmsg_new,
  judge=lambda b, a, res, ctx: (
      ('inconclusive', 'the caller cannot read /dev/kmsg: %s' % ctx.get('_kmsg_err')) if a is None else
      ('hole', 'the run wrote %d records into the host kernel log (sample %s); %s' % (
          a, ctx.get('_kmsg_sample'), short(res[-1]))) if a > 50 else
      ('hole', 'the run read the kernel log: %s' % short(res[-1]))
      if res[-1] is not None and re.search(r'^/(proc|dev)/kmsg b', res[-1].stdout or '', re.M) else
      ('stopped', '%d records naming the run; %s' % (a, short(res[-1])))))

A(id='ksh_core_dump', **{'class': 'kernel-shared'},
  description='PR_SET_DUMPABLE 1, try to raise RLIMIT_CORE, children die by SIGSEGV/SIGABRT/SIGQUIT/SIGBUS/SIGSYS-less traps; a pipe core_pattern would run a host helper outside every limit and write the run\'s memory to the host\'s disk',
  setup=lambda ctx: ctx.update(t_start=time.time(), _core_pattern=_read('/proc/sys/kernel/core_pattern').decode(errors='replace').strip()),
  code=prog(r'''
import resource
say('pattern', open('/proc/sys/kernel/core_pattern').read().strip())
say('dumpable', libc.prctl(4, 1, 0, 0, 0), libc.prctl(3, 0, 0, 0, 0))
try:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
except (ValueError, OSError) as e:
    say('core limit', e, resource.getrlimit(resource.RLIMIT_CORE))
blob = b'R3B5CORE@NONCE@' * 100000
for sig in (signal.SIGSEGV, signal.SIGABRT, signal.SIGQUIT, signal.SIGBUS, signal.SIGFPE, signal.SIGTRAP):
    pid = os.fork()
    if pid == 0:
        name_me()
        libc.prctl(4, 1, 0, 0, 0)
        os.kill(os.getpid(), sig)
        time.sleep(1)
        os._exit(0)
    say('child', sig, os.waitpid(pid, 0))
say('cwd', os.listdir('.'))
result = 1
'''),
  limits=L(wall_s=15, cpu_s=6, memory_mb=256, max_processes=2),
  expected='no core file on the host, no host core helper process started during the run',
  outside=core_snapshot, during=helper_procs,
  judge=lambda b, a, res, ctx: (
      ('hole', 'new core files on the host: %s; %s' % (sorted(set(a['files']) - set(b['files'])), short(res[-1])))
      if set(a['files']) - set(b['files']) else
      ('hole', 'a host core helper ran during the run (%s, up to %d processes); %s' % (
          b['pattern'], max(v for _, v in ctx['during']), short(res[-1])))
      if ctx.get('during') and max(v for _, v in ctx['during']) > 0 else
      ('stopped', 'core_pattern %r; %s' % (b['pattern'], short(res[-1])))))

# ---- host resources outside the run's budget -----------------------------------------------------

A(id='hr_hugetlb', **{'class': 'host-resources'},
  description='MAP_HUGETLB 2 MB pages (and 1 GB) until refused, touched and held 2 s: the hugetlb pool is charged to the hugetlb controller, not the memory cgroup',
  code=prog(r'''
import mmap
held = []
for size, extra in ((2 << 20, 0), (1 << 30, 30 << 26)):
    for i in range(600):
        try:
            m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40000 | extra)
            m[0] = 1
            m[size - 1] = 1
            held.append(m)
        except (OSError, ValueError) as e:
            say('stop', size, i, e)
            break
say('held', len(held))
time.sleep(2)
result = len(held)
'''),
  limits=L(wall_s=12, cpu_s=5, memory_mb=128, max_processes=1),
  expected='the host\'s free huge pages drop by at most memory_mb + 64 MB (or none are taken)',
  outside=lambda ctx: meminfo('HugePages_Total', 'HugePages_Free', 'Hugepagesize'),
  during=lambda ctx: meminfo('HugePages_Free').get('HugePages_Free'),
  judge=lambda b, a, res, ctx: (
      ('inconclusive', 'the host has no hugetlb pool (HugePages_Total 0): nothing to take; %s' % short(res[-1]))
      if not b.get('HugePages_Total') else
      (lambda taken: ('hole' if taken > 128 + 64 else 'stopped',
                      'the run took %.0f MB of the host\'s huge pages (pool %d pages); %s' % (
                          taken, b['HugePages_Total'], short(res[-1]))))(
          (b['HugePages_Free'] - min([v for _, v in ctx.get('during', []) if v is not None] or [b['HugePages_Free']]))
          * b.get('Hugepagesize', 2048) / 1024)))

A(id='hr_negative_dentries', **{'class': 'host-resources'},
  description='300,000 stats of distinct missing names in the bound host trees (/usr/lib, /usr/share, /usr/bin): negative dentries of the host\'s own file system stay after the run (kernel memory outside the run\'s cgroup once it is gone)',
  code=prog(r'''
n = 0
end = time.time() + 7
for d in ('/usr/lib', '/usr/share', '/usr/bin'):
    for i in range(100000):
        try:
            os.stat('%s/r3b5-@NONCE@-%d' % (d, i))
        except OSError:
            pass
        n += 1
        if (i & 1023) == 0 and time.time() > end:
            break
say('lookups', n)
result = n
'''),
  limits=L(wall_s=15, cpu_s=10, memory_mb=256, max_processes=1),
  expected='the host\'s dentry count after the run grows by far less than the lookups made (< 100,000)',
  outside=dentry_state,
  judge=lambda b, a, res, ctx: (
      (lambda grow, n: ('hole' if grow > 100000 else 'stopped',
                        'host nr_dentry %+d, nr_negative %s -> %s after %s lookups (kernel memory the host keeps after the run); %s' % (
                            grow, b['nr_negative'], a['nr_negative'], n, short(res[-1]))))(
          a['nr_dentry'] - b['nr_dentry'],
          (re.findall(r'lookups (\d+)', res[-1].stdout or '') or ['?'])[0] if res[-1] is not None else '?')))

A(id='hr_mlock', **{'class': 'host-resources'},
  description='mlockall(MCL_CURRENT|MCL_FUTURE), 90% of memory_mb touched, SysV shm with SHM_LOCK; the caller samples the host\'s Mlocked/Unevictable during and after',
  code=prog(r'''
import resource
say('memlock', resource.getrlimit(resource.RLIMIT_MEMLOCK))
say('mlockall', libc.mlockall(3), ctypes.get_errno())
blocks = []
try:
    for i in range(115):
        blocks.append(b'\x01' * (1 << 20))
except MemoryError:
    pass
shm, e = sc(29, 0, 8 << 20, 0o1600)
if shm >= 0:
    say('shm lock', sc(31, shm, 11, 0))
say('held MB', len(blocks))
time.sleep(2)
result = len(blocks)
'''),
  limits=L(wall_s=12, cpu_s=5, memory_mb=128, max_processes=1),
  expected='host Mlocked rises by at most memory_mb + 64 MB during the run and is back after it',
  outside=lambda ctx: meminfo('Mlocked', 'Unevictable'),
  during=lambda ctx: meminfo('Mlocked').get('Mlocked'),
  judge=lambda b, a, res, ctx: (
      (lambda peak, left: ('hole' if peak > (128 + 64) * 1024 or left > 16 * 1024 else 'stopped',
                           'host Mlocked peak %+d kB during, %+d kB after; %s' % (peak, left, short(res[-1]))))(
          max([v for _, v in ctx.get('during', []) if v is not None] or [b['Mlocked']]) - b['Mlocked'],
          a['Mlocked'] - b['Mlocked'])))

A(id='hr_scratch_fill', **{'class': 'host-resources'},
  description='fill the scratch: max_files files, 50,000 hard links (no inode each), symlinks, directories, big user xattrs, a sparse file truncated to 1 TB, fallocate; the caller samples the host temp file system',
  code=prog(r'''
n = {'files': 0, 'links': 0, 'dirs': 0, 'xattr': 0}
for i in range(200):
    try:
        with open('f%d' % i, 'wb') as f:
            f.write(b'x' * (1 << 20))
        n['files'] += 1
    except OSError:
        break
for i in range(50000):
    try:
        os.link('f0', 'l%d' % i); n['links'] += 1
    except OSError:
        break
for i in range(5000):
    try:
        os.mkdir('d%d' % i); n['dirs'] += 1
    except OSError:
        break
for i in range(2000):
    try:
        os.setxattr('f0', 'user.r3b5_%d' % i, b'v' * 60000); n['xattr'] += 1
    except OSError:
        break
for f in (lambda: os.truncate('f0', 1 << 40), lambda: os.posix_fallocate(os.open('f1', os.O_RDWR), 0, 1 << 30)):
    try:
        f(); say('big ok')
    except (OSError, ValueError) as e:
        say('big', e)
say('made', n)
time.sleep(1)
result = str(n)
'''),
  limits=L(wall_s=15, cpu_s=8, memory_mb=256, max_processes=1, file_size_mb=4, max_files=50),
  expected='the host temp file system loses nothing (free bytes and inodes within noise); nothing left',
  outside=with_leftovers(lambda ctx: (lambda s: {'free_mb': s.f_bavail * s.f_frsize >> 20, 'inodes': s.f_favail})(
      os.statvfs(tempfile.gettempdir()))),
  during=lambda ctx: (lambda s: (s.f_bavail * s.f_frsize >> 20, s.f_favail))(os.statvfs(tempfile.gettempdir())),
  judge=lambda b, a, res, ctx: (
      ('hole', 'left: %s' % leftover_diff(b['left'], a['left'])) if leftover_diff(b['left'], a['left']) else
      (lambda mb, ino: ('hole' if mb > 64 or ino > 1000 else 'stopped',
                        'host temp fs: at most %d MB and %d inodes fewer during the run; %s' % (mb, ino, short(res[-1]))))(
          b['own']['free_mb'] - min([v[0] for _, v in ctx.get('during', [])] or [b['own']['free_mb']]),
          b['own']['inodes'] - min([v[1] for _, v in ctx.get('during', [])] or [b['own']['inodes']]))))

# ---- concurrent runs: host-wide values in the run's /proc as a channel ---------------------------

_XC_LIMITS = L(wall_s=14, cpu_s=10, memory_mb=512, max_processes=4, output_kb=512)
_XC_SAMPLE_S = 1.5 + NBITS * SLOT + 2.5

A(id='xc_forks_procstat', **{'class': 'xr-concurrent'},
  description='two runs at once: the sender forks as fast as it can in its 1-slots; the receiver samples /proc/stat "processes" (host-wide fork count)',
  concurrent=True, setup=setup_concurrent,
  code=prog(SENDER_HEAD + r'''
for b, until in slots():
    while b == '1' and time.monotonic() < until:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
result = 1
'''),
  receiver=receiver_prog('forks', _XC_SAMPLE_S), limits=_XC_LIMITS,
  expected='the receiver cannot decode the sender\'s bits (the fork count is not host-wide in the run\'s /proc)',
  judge=judge_concurrent(counter=True))

A(id='xc_memory_meminfo', **{'class': 'xr-concurrent'},
  description='two runs at once: the sender holds 300 MB in its 1-slots; the receiver samples MemAvailable in /proc/meminfo',
  concurrent=True, setup=setup_concurrent,
  code=prog(SENDER_HEAD + r'''
for b, until in slots():
    if b == '1':
        blob = b'\x01' * (300 << 20)
        while time.monotonic() < until:
            time.sleep(0.005)
        del blob
result = 1
'''),
  receiver=receiver_prog('memavail', _XC_SAMPLE_S), limits=_XC_LIMITS,
  expected='the receiver cannot decode the bits (host memory figures not visible)',
  judge=judge_concurrent(counter=False))

A(id='xc_fds_filenr', **{'class': 'xr-concurrent'},
  description='two runs at once: the sender\'s 3 children open 240 files each in its 1-slots; the receiver samples /proc/sys/fs/file-nr (host-wide open file count)',
  concurrent=True, setup=setup_concurrent,
  code=prog(SENDER_HEAD + r'''
for b, until in slots():
    if b != '1':
        continue
    kids = []
    for k in range(3):
        pid = os.fork()
        if pid == 0:
            fds = []
            for i in range(240):
                try:
                    fds.append(os.open('/dev/null', os.O_RDONLY))
                except OSError:
                    break
            while time.monotonic() < until:
                time.sleep(0.005)
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
result = 1
'''),
  receiver=receiver_prog('filenr', _XC_SAMPLE_S), limits=_XC_LIMITS,
  expected='the receiver cannot decode the bits (file-nr not host-wide in the run)',
  judge=judge_concurrent(counter=False))

A(id='xc_cpu_procstat', **{'class': 'xr-concurrent'},
  description='two runs at once: the sender busy-loops in 2 processes in its 1-slots; the receiver samples the host-wide busy jiffies of /proc/stat',
  concurrent=True, setup=setup_concurrent,
  code=prog(SENDER_HEAD + r'''
for b, until in slots():
    if b != '1':
        continue
    pid = os.fork()
    while time.monotonic() < until:
        pass
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
result = 1
'''),
  receiver=receiver_prog('cpubusy', _XC_SAMPLE_S), limits=_XC_LIMITS,
  expected='the receiver cannot decode the bits (host CPU counters not visible)',
  judge=judge_concurrent(counter=True))


def _caller_sender(ctx):
    """The caller (the grader's side) encodes bits in its number of threads, from 1.5 s on."""
    setup_concurrent(ctx)
    ctx['sender_t0'] = time.monotonic() + 1.5
    stop = threading.Event()

    def send():
        for i, b in enumerate(ctx['bits']):
            start = ctx['sender_t0'] + i * SLOT
            while time.monotonic() < start:
                time.sleep(0.002)
            if b == '1':
                ev = threading.Event()
                ts = [threading.Thread(target=ev.wait, daemon=True) for _ in range(300)]
                for t in ts:
                    t.start()
                while time.monotonic() < start + SLOT:
                    time.sleep(0.005)
                ev.set()
                for t in ts:
                    t.join()
            if stop.is_set():
                return

    ctx['_sender_stop'] = stop
    threading.Thread(target=send, daemon=True).start()


A(id='xc_caller_threads_loadavg', **{'class': 'xr-concurrent'},
  description='the caller (the grader\'s side) starts 300 threads in its 1-slots while the run samples the host-wide task count in /proc/loadavg: the caller\'s activity readable by the program',
  setup=_caller_sender, teardown=lambda ctx: ctx['_sender_stop'].set(),
  code=receiver_prog('tasks', _XC_SAMPLE_S), limits=_XC_LIMITS,
  expected='the run cannot decode the caller\'s bits (the task count is the run\'s own)',
  judge=judge_concurrent(counter=False))

# ---- persistent host-global counters: one run leaves a symbol for the next ------------------------

_COUNTER_SENDER = r'''
try:
    os.sched_setaffinity(0, {0})
except OSError as e:
    say('affinity', e)
SHIFT, NSYM, SYM = @SHIFT@, @NSYM@, @SYMBOL@
def cur():
    @READ@
c0 = c = cur()
n = 0
while not (((c >> SHIFT) % NSYM) == SYM and (c & ((1 << SHIFT) - 1)) < (1 << SHIFT) // 4):
    c = cur()
    n += 1
    if n > @MAXN@:
        break
say('SENT start %d end %d n %d' % (c0, c, n))
result = n
'''

_COUNTER_RECEIVER = r'''
try:
    os.sched_setaffinity(0, {0})
except OSError as e:
    say('affinity', e)
SHIFT, NSYM = @SHIFT@, @NSYM@
def cur():
    @READ@
c = cur()
say('RECV %d %d raw %d' % ((c >> SHIFT) % NSYM, c & ((1 << SHIFT) - 1), c))
result = 1
'''

_READ_PIPE = "r, w = os.pipe(); i = os.fstat(r).st_ino; os.close(r); os.close(w); return i"
_READ_COOKIE = ("s = RAWSOCK.socket(2, 2); c = int.from_bytes(s.getsockopt(1, 57, 8), 'little'); s.close(); "
                "return c")
_READ_PIDFS = ("t = __import__('_thread'); l = t.allocate_lock(); l.acquire(); t.start_new_thread(l.release, ()); "
               "l.acquire(); fd = sc(434, os.getpid(), 0)[0]; i = os.fstat(fd).st_ino; os.close(fd); return i")


def _counter_attack(id, what, read, shift, nsym, maxn, description, outside=None):
    def setup(ctx):
        ctx['symbol'] = symbol_of(ctx, nsym)
        ctx['shift'], ctx['nsym'], ctx['maxn'] = shift, nsym, maxn

    def body(text):
        return prog(text.replace('@READ@', read))

    A(id=id, **{'class': 'xr-persistent'}, description=description, setup=setup,
      code=body(_COUNTER_SENDER), receiver=body(_COUNTER_RECEIVER),
      limits=L(wall_s=20, cpu_s=12, memory_mb=256, max_processes=2),
      expected='the receiving run does not read the sender\'s symbol (the counter is not host-global, or not visible)',
      outside=outside or (lambda ctx: None), judge=judge_counter_channel(shift, nsym, what))


_counter_attack('xp_pipe_inode', 'pipe inode number (get_next_ino)', _READ_PIPE, 14, 16, 400000,
                'sender makes pipes until the host-global pipefs inode counter sits in a bucket chosen by its 4-bit symbol; the next run reads the inode number of a pipe of its own',
                outside=outside_pipe_ino)
_counter_attack('xp_socket_cookie', 'socket cookie (SO_COOKIE)', _READ_COOKIE, 14, 8, 300000,
                'sender creates UDP sockets and asks SO_COOKIE until the host-global socket cookie counter sits in the symbol\'s bucket; the next run reads a fresh socket\'s cookie')
_counter_attack('xp_pidfs_ino', 'pidfs inode number (a global count of pids)', _READ_PIDFS, 12, 4, 20000,
                'sender starts threads (each a new pid) until the pidfs inode number of a fresh pidfd sits in the symbol\'s bucket; the next run reads its own pidfd\'s inode number')

# ---- the fork server (Calls) ----------------------------------------------------------------------

A(id='fs_helper_precompute', **{'class': 'fork-server'},
  description='the start forks a helper and returns at once (within start_s); the helper "precomputes" for 2.5 s more into a shared mapping while the calls are timed; the last call returns what the helper made',
  code=prog(r'''
import mmap
SH = mmap.mmap(-1, 4096, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
if os.fork() == 0:
    name_me()
    end = time.monotonic() + 2.5
    n = 0
    while time.monotonic() < end:
        n += 1
    SH[:40] = ('HELPER-DONE %d' % n).encode().ljust(40, b' ')
    time.sleep(30)
    os._exit(0)
'''),
  calls=lambda ctx: dict(code='time.sleep(1.2)\nresult = bytes(SH[:40]).strip().decode() or "empty"',
                         inputs=[{'i': k} for k in range(4)], seconds=3.0, start_s=1.0),
  limits=L(wall_s=20, cpu_s=12, memory_mb=256, max_processes=3),
  expected='no call sees work done by a process of the start after the start ended (the helper is stopped with the start); nothing left',
  judge=lambda b, a, res, ctx: (
      ('hole', 'left: %s' % leftover_diff(b, a)) if leftover_diff(b, a) else
      ('hole', 'a call returned the helper\'s work done after start_s: %s; %s' % (
          [c.value for c in res[-1].calls], short(res[-1])))
      if res[-1] is not None and any('HELPER-DONE' in (c.value or '') for c in res[-1].calls) else
      ('stopped', '%s; calls %s' % (short(res[-1]), [(c.status, c.value) for c in res[-1].calls] if res[-1] else None))))

A(id='fs_call_timeout_leftover', **{'class': 'fork-server'},
  description='call 0 starts a setsid child that ignores TERM and sleeps 60 s, then loops forever (the supervisor ends the run at the call\'s time limit)',
  code=prog('x = 1\n'),
  calls=lambda ctx: dict(code=(
      "if os.fork() == 0:\n    os.setsid(); name_me()\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
      "    time.sleep(60); os._exit(0)\nwhile True:\n    pass\n"),
      inputs=[{'i': 0}, {'i': 1}], seconds=1.5, start_s=3.0),
  limits=L(wall_s=10, cpu_s=8, memory_mb=256, max_processes=3),
  expected='status timeout, the calls after it not run; no process left; run_python returns by about wall_s',
  judge=judge_leftovers(max_wall=20, status_bad=('ok',)))

A(id='fs_call_kills_worker', **{'class': 'fork-server'},
  description='call 0 SIGKILLs its parent (the serving worker) and keeps the input and result pipes, answering every later line itself with a forged value',
  code=prog('x = 1\n'),
  calls=lambda ctx: dict(code=(
      "os.kill(os.getppid(), signal.SIGKILL)\nname_me()\nfor fd in range(3, 64):\n    try:\n"
      "        os.write(fd, b'R3B5-FORGED\\n')\n    except OSError:\n        pass\nresult = 'R3B5-FORGED'\n"),
      inputs=[{'i': k} for k in range(3)], seconds=2.0, start_s=3.0),
  limits=L(wall_s=10, cpu_s=6, memory_mb=256, max_processes=3),
  expected='run_python returns (no exception) by about wall_s; calls after the worker died are not run; nothing left',
  judge=lambda b, a, res, ctx: (
      judge_leftovers(max_wall=20)(b, a, res, ctx) if judge_leftovers(max_wall=20)(b, a, res, ctx)[0] == 'hole' else
      ('hole', 'a call after the worker died is ok: %s' % [(c.status, c.value) for c in res[-1].calls])
      if res[-1] is not None and len(res[-1].calls) > 1 and any(c.status == 'ok' for c in res[-1].calls[1:]) else
      ('stopped', '%s; calls %s' % (short(res[-1]), [(c.status, (c.value or '')[:40]) for c in res[-1].calls]
                                    if res[-1] else None))))

# ---- what the caller does with the result ---------------------------------------------------------

NASTY_NUMBERS = ['1' * 5000, '1' + '0' * 4400, '1e999', '-1e999', 'nan', 'inf', '-inf', 'np.float64(nan)',
                 'np.float64(inf)', 'np.float64(' + '9' * 5000 + ')', 'np.float64(1e309)', '\u0661\u0662\u0663',
                 '\uff11\uff12\uff13', '\u0663.\u0661\u0664', '1_000_000', ' 42 ', '42\n', '4\u0301', '+1', '-0',
                 'True', '(1)', '0x10', '1e-400', 'np.int64(5)', '1' + '\x00', '\U0001d7d9\U0001d7da', '١e٣',
                 '9' * 70000, '1.' + '5' * 20000, 'np.float64(-0.0)', '１.５']


def judge_number_value(before, after, results, ctx):
    from verifiers.sandbox import number_value, visible_text
    r = results[-1]
    if r is None or not getattr(r, 'calls', None):
        return 'inconclusive', 'no call results: %s' % short(r)
    bad = []
    for i, c in enumerate(r.calls):
        v = c.value
        if v is None:
            continue
        try:
            visible_text(v)
            got = number_value(v)
        except Exception as e:
            bad.append('call %d (%r...): the caller\'s parser raised %r' % (i, v[:20], e))
            continue
        if got is None:
            continue
        if not isinstance(got, str) or not got.isascii():
            bad.append('call %d: number_value passed non-ASCII text %r' % (i, got[:20]))
            continue
        try:
            f = float(got.replace('np.float64(', '').rstrip(')'))
            if not math.isfinite(f):
                bad.append('call %d: a non-finite number passed: %r' % (i, got[:30]))
        except (ValueError, OverflowError):
            bad.append('call %d: number_value returned %r, not a number' % (i, got[:30]))
    obs = '%s; %d calls, statuses %s' % (short(r), len(r.calls), sorted({c.status for c in r.calls}))
    return ('hole', '; '.join(bad[:6]) + '; ' + obs) if bad else ('stopped', obs)


A(id='rp_number_value', **{'class': 'result-parsing'},
  description='fork-server calls whose values are reprs of 5000-digit ints, 1e999, nan, Arabic-Indic/fullwidth/math digits, "1_000", NUL, 70,000 nines ...; the caller applies number_value and visible_text to each',
  code=prog('V = %r\nclass R:\n    def __init__(self, s):\n        self.s = s\n    def __repr__(self):\n        return self.s\n'
            % (NASTY_NUMBERS,), prelude=False),
  calls=lambda ctx: dict(code='result = R(V[i])', inputs=[{'i': k} for k in range(len(NASTY_NUMBERS))],
                         seconds=3.0, start_s=5.0),
  limits=L(wall_s=40, cpu_s=20, memory_mb=256, max_processes=2),
  expected='number_value never raises, passes only ASCII finite numbers; visible_text never raises',
  judge=judge_number_value)

A(id='rp_invalid_utf8', **{'class': 'result-parsing'},
  description='invalid UTF-8 on stdout/stderr (lone bytes, overlong, an encoded surrogate, a truncated sequence) and 2-byte characters so that the output cap cuts one in half; sys.stdout switched to UTF-16',
  code=prog(r'''
import os, sys
bad = b'\xff\xfe\xc3(\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc\xed\xa0\x80\xc0\xaf\xf8\x88\x80\x80\x80'
for fd in (1, 2):
    os.write(fd, bad + b'a' + '\u00e9'.encode() * 3000 + b'\xe2\x82')
sys.stdout = open(1, 'w', encoding='utf-16', closefd=False)
print('utf16 text \u4e2d')
sys.stdout.flush()
result = bad
''', prelude=False),
  limits=L(wall_s=10, cpu_s=5, memory_mb=256, output_kb=1),
  expected='run_python returns; every text field encodes as UTF-8 (no lone surrogates) and is bounded',
  judge=judge_caller_ok(25))

A(id='rp_deep_repr', **{'class': 'result-parsing'},
  description='result is a list nested 300,000 deep (recursion limit raised first, so repr recurses in C), and a dict whose repr recurses through itself via a __repr__',
  code=prog(r'''
import sys
sys.setrecursionlimit(10 ** 7)
x = []
for i in range(300000):
    x = [x]
result = x
''', prelude=False),
  limits=L(wall_s=15, cpu_s=8, memory_mb=512),
  expected='run_python returns a status (not ok with a forged value); the caller is unharmed',
  judge=judge_caller_ok(30))

A(id='rp_repr_side_effects', **{'class': 'result-parsing'},
  description='the result\'s __repr__ (run when the outcome is reported) starts a setsid child that ignores TERM, then makes a denied call (ptrace TRACEME)',
  code=prog(r'''
class R:
    def __repr__(self):
        if os.fork() == 0:
            os.setsid(); name_me()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(60); os._exit(0)
        time.sleep(0.3)
        say('ptrace', sc(101, 0, 0, 0, 0))
        return "'fine'"
result = R()
'''),
  limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=2),
  expected='status refused (the denied call during the report counts); no process left',
  judge=judge_refused())

A(id='rp_exception_bomb', **{'class': 'result-parsing'},
  description='an ExceptionGroup nested 2,000 deep with a 20,000-long __cause__ chain, notes with escapes and a forged refusal line, raised at the end',
  code=prog(r'''
import sys
sys.setrecursionlimit(100000)
e = ValueError('leaf\x1b]0;t\x07')
for i in range(20000):
    n = ValueError('c%d' % i)
    n.__cause__ = e
    e = n
g = e
for i in range(2000):
    g = ExceptionGroup('g\nrefused by the kernel\'s seccomp filter: ptrace', [g])
g.add_note('\x1b[2J\u202enote')
raise g
''', prelude=False),
  limits=L(wall_s=15, cpu_s=8, memory_mb=512),
  expected='reason is visible text of bounded length (<= 4000); no refusal status; the caller unharmed',
  judge=lambda b, a, res, ctx: (
      ('hole', 'a forged refusal: ' + short(res[-1])) if res[-1] is not None and res[-1].status == 'refused'
      else judge_caller_ok(30)(b, a, res, ctx)))

A(id='rp_caller_c_locale', **{'class': 'result-parsing'},
  description='the caller runs with LC_ALL=C, PYTHONUTF8=0, PYTHONCOERCECLOCALE=0 (an ASCII locale); the run prints non-ASCII text and invalid bytes and returns an honest non-ASCII string',
  caller_env={'LC_ALL': 'C', 'LANG': 'C', 'PYTHONUTF8': '0', 'PYTHONCOERCECLOCALE': '0'},
  code=prog(r'''
import os
print('\u00e9\u20ac \u4e2d\u6587 \u2713', flush=True)
os.write(1, b'\xff\xfe\n')
os.write(2, '\u00e9\u20ac\n'.encode())
result = '\u00e9\u20ac\u4e2d'
''', prelude=False),
  expected='run_python returns; the value is exactly repr(\'\u00e9\u20ac\u4e2d\') whatever the caller\'s locale; stdout keeps the text',
  judge=lambda b, a, res, ctx: (
      judge_caller_ok(25)(b, a, res, ctx) if judge_caller_ok(25)(b, a, res, ctx)[0] != 'stopped' else
      ('hole', 'the value depends on the caller\'s locale: %r; %s' % (res[-1].value, short(res[-1])))
      if res[-1].value != repr('\u00e9\u20ac\u4e2d') else
      ('stopped', short(res[-1]) + '; value %r, stdout %r' % (res[-1].value, (res[-1].stdout or '')[:40]))))

# ---- the caller's terminal -----------------------------------------------------------------------

def setup_ctty(ctx):
    import termios
    p = Pty()
    fcntl.ioctl(p.slave, termios.TIOCSCTTY, 0)
    ctx['_pty'] = p


def outside_ctty(ctx):
    import termios
    p = ctx['_pty']
    time.sleep(0.3)
    try:
        pg = os.tcgetpgrp(p.slave)
    except OSError as e:
        pg = str(e)
    return {'pgrp': pg, 'attrs': termios.tcgetattr(p.slave), 'got': len(p.got), 'sid': os.getsid(0)}


def judge_tty(before, after, results, ctx):
    p = ctx['_pty']
    obs = short(results[-1]) + '; terminal before %s after %s; bytes at the master %r' % (
        {k: before[k] for k in ('pgrp', 'got')}, {k: after[k] for k in ('pgrp', 'got')}, p.got[-80:])
    if b'R3B5TTY' in p.got or b'\x1b]52' in p.got:
        return 'hole', 'the run reached the caller\'s terminal: ' + obs
    if before['pgrp'] != after['pgrp'] or before['attrs'] != after['attrs']:
        return 'hole', 'the caller\'s terminal settings changed: ' + obs
    return 'stopped', obs


_TTY_PROG = r'''
import termios
payload = b'echo R3B5TTY\n'
cands = []
for p in ('/dev/tty', '/dev/console', '/dev/ptmx', '/dev/pts/ptmx', '/proc/self/fd/0', '/proc/1/fd/0', '/proc/1/fd/1',
          '/proc/1/fd/2'] + ['/dev/pts/%d' % i for i in range(8)]:
    try:
        cands.append((p, os.open(p, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)))
        say('opened', p)
    except OSError as e:
        pass
for fd in list(range(0, 64)) + [f for _, f in cands]:
    for ch in payload:
        if libc.ioctl(fd, ctypes.c_ulong(termios.TIOCSTI), ctypes.byref(ctypes.c_char(ch))) != 0:
            break
    else:
        say('TIOCSTI ok', fd)
    for req, arg in ((termios.TIOCSPGRP, ctypes.byref(ctypes.c_int(os.getpgrp()))), (termios.TIOCNOTTY, None),
                     (termios.TIOCSCTTY, 1), (termios.TIOCCONS, None)):
        libc.ioctl(fd, ctypes.c_ulong(req), arg)
    try:
        os.write(fd, b'\x1b]52;c;UjNCNVRUWQ==\x07R3B5TTY\n')
    except OSError:
        pass
say('sid', os.getsid(0), 'ctermid', os.ctermid())
result = 1
'''

A(id='tty_ctty_inject', **{'class': 'tty'},
  description='the caller has a controlling terminal (a pty); the run tries /dev/tty, /dev/console, ptmx, pts, /proc/1/fd, TIOCSTI on every fd, TIOCSPGRP/TIOCNOTTY/TIOCSCTTY/TIOCCONS',
  setup=setup_ctty, teardown=lambda ctx: ctx['_pty'].stop.set(),
  code=prog(_TTY_PROG),
  expected='nothing reaches the caller\'s terminal; its foreground group and settings unchanged',
  outside=outside_ctty, judge=judge_tty)


def setup_stdout_tty(ctx):
    p = Pty()
    ctx['_saved'] = (os.dup(1), os.dup(2))
    os.dup2(p.slave, 1)
    os.dup2(p.slave, 2)
    ctx['_pty'] = p


def teardown_stdout_tty(ctx):
    a, b = ctx['_saved']
    os.dup2(a, 1)
    os.dup2(b, 2)
    ctx['_pty'].stop.set()


A(id='tty_caller_stdout', **{'class': 'tty'},
  description='the caller\'s stdout and stderr are a terminal (interactive use); the run writes OSC 52 / title escapes and R3B5TTY to its stdout, stderr and every fd, plus TIOCSTI',
  setup=setup_stdout_tty, teardown=teardown_stdout_tty,
  code=prog(_TTY_PROG + "\nimport sys\nsys.stdout.write('\\x1b]52;c;UjNCNVRUWQ==\\x07R3B5TTY\\n')\nsys.stderr.write('R3B5TTY\\x1b]0;t\\x07\\n')\n"),
  expected='nothing of the run reaches the caller\'s terminal (its output is captured)',
  outside=outside_ctty, judge=judge_tty)

# ---- reaching the supervisor and the caller ------------------------------------------------------

def setup_env_secret(ctx):
    os.environ['R3B5_SECRET'] = ctx['secret']


A(id='pr_supervisor_memory', **{'class': 'process-reach'},
  description='the caller\'s environment holds a secret; the run reads the supervisor\'s /proc/1/{environ,mem,maps,map_files,auxv,syscall,stack,fdinfo,task/*}, then process_vm_readv(1) last',
  setup=setup_env_secret,
  code=prog(r'''
for f in ('environ', 'cmdline', 'maps', 'auxv', 'syscall', 'stack', 'timers', 'sched', 'io', 'personality',
          'task/1/environ', 'task/1/syscall', 'fdinfo/0', 'fdinfo/3', 'fdinfo/4', 'fdinfo/5', 'smaps', 'pagemap'):
    try:
        say('P', f, open('/proc/1/' + f, 'rb').read(4000))
    except OSError as e:
        say('no', f, e)
try:
    say('map_files', os.listdir('/proc/1/map_files')[:5])
except OSError as e:
    say('map_files', e)
try:
    with open('/proc/1/mem', 'rb') as m:
        for line in open('/proc/1/maps'):
            a, b = [int(x, 16) for x in line.split()[0].split('-')]
            m.seek(a)
            say('MEM', m.read(min(b - a, 1 << 20)))
except OSError as e:
    say('mem', e)
buf = ctypes.create_string_buffer(4096)
liov = (ctypes.c_ulong * 2)(ctypes.addressof(buf), 4096)
riov = (ctypes.c_ulong * 2)(0x400000, 4096)
say('RET process_vm_readv', sc(310, 1, liov, 1, riov, 1, 0))
'''),
  expected='the secret never appears; process_vm_readv refused',
  judge=lambda b, a, res, ctx: (lambda s: s if s[0] == 'hole' else judge_refused()(b, a, res, ctx))(
      judge_secret()(b, a, res, ctx)))

A(id='pr_clone_parent', **{'class': 'process-reach'},
  description='raw clone(CLONE_PARENT): two siblings of the worker (children of the supervisor): one exits 0 at once, one setsid sleeps 60 s ignoring TERM; 0.5 s later the worker makes a denied call',
  code=prog(r'''
for kind in ('quick', 'sleeper'):
    r, e = sc(56, 0x8000 | 17, 0, 0, 0, 0)
    if r == 0:
        name_me()
        if kind == 'quick':
            os._exit(0)
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(60)
        os._exit(0)
    say('sibling', kind, r, e)
time.sleep(0.5)
say('ptrace', sc(101, 0, 0, 0, 0))
result = 1
'''),
  limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=3),
  expected='status refused (the supervisor does not take a sibling\'s exit for the worker\'s); nothing left',
  judge=judge_refused())

A(id='pr_signals_pid1', **{'class': 'process-reach'},
  description='every signal 1-64 (not KILL/STOP) to the supervisor by kill, tgkill, rt_sigqueueinfo with a forged SI_KERNEL code and pidfd_send_signal; then a denied call',
  code=prog(r'''
import struct
pfd = sc(434, 1, 0)[0]
info = ctypes.create_string_buffer(128)
n = 0
for sig in range(1, 65):
    if sig in (9, 19):
        continue
    struct.pack_into('iii', info, 0, sig, 0, 0x80)
    for r in (sc(62, 1, sig), sc(234, 1, 1, sig), sc(129, 1, sig, info), sc(424, pfd, sig, None, 0)):
        n += r[0] == 0
say('delivered', n)
time.sleep(0.5)
say('ptrace', sc(101, 0, 0, 0, 0))
result = 1
'''),
  expected='status refused: the supervisor is undisturbed and reports the denied call',
  judge=judge_refused())


def setup_caller_signals(ctx):
    got = []
    ctx['_sigs'] = got
    old = {}
    for s in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGURG, signal.SIGWINCH, signal.SIGIO, signal.SIGHUP,
              signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGCONT, signal.SIGTSTP):
        old[s] = signal.signal(s, lambda n, f: got.append(n))
    ctx['_old_sigs'] = old


def teardown_caller_signals(ctx):
    for s, h in ctx.get('_old_sigs', {}).items():
        try:
            signal.signal(s, h)
        except (TypeError, ValueError):
            pass


A(id='pr_signal_caller', **{'class': 'process-reach'},
  description='signals to the caller\'s pid and process group by their host numbers, to every pid 2-4096 (SIGURG) and by F_SETOWN/O_ASYNC on a socketpair owned by the caller\'s group; the caller counts what arrives',
  setup=setup_caller_signals, teardown=teardown_caller_signals,
  code=prog(r'''
cp = @CALLER_PID@
for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGWINCH, signal.SIGHUP, signal.SIGTERM, signal.SIGTSTP):
    for tgt in (cp, -cp):
        try:
            os.kill(tgt, sig); say('sent', tgt, sig)
        except OSError:
            pass
    say('pidfd', sc(434, cp, 0))
for pid in range(3, 4097):
    try:
        os.kill(pid, signal.SIGURG)
    except OSError:
        pass
try:
    a, b = RAWSOCK.socketpair(1, 1)
    for owner in (-cp, cp):
        fcntl = __import__('fcntl')
        fcntl.fcntl(a.fileno(), fcntl.F_SETOWN, owner)
        fcntl.fcntl(a.fileno(), fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
        b.send(b'x' * 100)
        a.recv(100)
except Exception as e:
    say('async', e)
time.sleep(0.5)
result = 1
'''),
  expected='the caller receives no signal during the run',
  outside=lambda ctx: list(ctx['_sigs']),
  judge=lambda b, a, res, ctx: (
      ('hole', 'the caller received signals %s during the run; %s' % (a[len(b):], short(res[-1])))
      if len(a) > len(b) else ('stopped', short(res[-1]))))

A(id='pr_clone_walk', **{'class': 'process-reach'},
  description='a walking chain: each process clone(CLONE_PARENT)s its successor and exits, so at most 2 live at once and the chain never ends, started just before the worker exits 0',
  code=prog(r'''
def walk():
    while True:
        r, e = sc(56, 0x8000 | 17, 0, 0, 0, 0)
        if r == 0:
            name_me()
            continue
        os._exit(0)
r, e = sc(56, 0x8000 | 17, 0, 0, 0, 0)
if r == 0:
    name_me()
    walk()
time.sleep(0.3)
result = 1
'''),
  limits=L(wall_s=8, cpu_s=5, memory_mb=256, max_processes=3),
  expected='run_python returns by about wall_s, nothing of the chain left',
  judge=judge_leftovers(max_wall=20))

BY_ID = {a['id']: a for a in ATTACKS}
assert len(BY_ID) == len(ATTACKS)
